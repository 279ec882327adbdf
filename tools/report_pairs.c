/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_pairs.c - who waits on whom: every wait state of the report (late
 * sender and late receiver in report_mpi.c, the waits at collectives in
 * report_wait.c) charged to the pair (waiting location, location waited
 * for), time and count per kind; and each location's list of its wait
 * states (when it ended, for whom) that the critical path walks
 * (report_path.c), kept only for `tracer report` (rep_select.cpath).
 * Memory: one entry per pair that waited, one per wait state kept.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *const rep_ws_names[REP_WS_KINDS] = { "late_sender", "late_receiver", "wait_nxn",
						 "late_broadcast", "early_reduce" };
static const char *const ws_heads[REP_WS_KINDS] = { "late sender", "late recv", "wait NxN", "late bcast",
						    "early reduce" };

static size_t pair_slot(const struct rep_pair *t, size_t cap, size_t waiter, size_t waited)
{
	uint64_t k = ((uint64_t)waiter << 32 ^ (uint64_t)waited) * 0x9e3779b97f4a7c15ull;
	size_t j = (size_t)(k >> 17) & (cap - 1);
	while (t[j].waiter != SIZE_MAX && (t[j].waiter != waiter || t[j].waited != waited))
		j = (j + 1) & (cap - 1);
	return j;
}

static struct rep_pair *pair_get(struct rep *r, size_t waiter, size_t waited)
{
	if (2 * (r->npairs + 1) > r->cappairs) {
		size_t cap = r->cappairs ? 2 * r->cappairs : 64;
		struct rep_pair *t = rep_xcalloc(cap, sizeof *t);
		for (size_t i = 0; i < cap; i++)
			t[i].waiter = SIZE_MAX;
		for (size_t i = 0; i < r->cappairs; i++)
			if (r->pairs[i].waiter != SIZE_MAX)
				t[pair_slot(t, cap, r->pairs[i].waiter, r->pairs[i].waited)] = r->pairs[i];
		free(r->pairs);
		r->pairs = t;
		r->cappairs = cap;
	}
	struct rep_pair *p = &r->pairs[pair_slot(r->pairs, r->cappairs, waiter, waited)];
	if (p->waiter == SIZE_MAX) {
		memset(p, 0, sizeof *p);
		p->waiter = waiter;
		p->waited = waited;
		r->npairs++;
	}
	return p;
}

/* Keep the wait state for the critical path: index + 1 of it, 0 none. */
static size_t ws_keep(struct rep *r, size_t waiter, size_t waited, int kind, uint64_t end)
{
	struct rep_loc *L = &r->locs[waiter];
	if (!r->cpath_on)
		return 0;
	if (L->nws == L->capws)
		L->ws = rep_grow(L->ws, &L->capws, 16, sizeof *L->ws);
	L->ws[L->nws++] = (struct rep_ws){ end, (uint32_t)waited, (uint8_t)kind };
	return L->nws;
}

void rep_pair_add(struct rep *r, size_t waiter, size_t waited, int kind, uint64_t wait, uint64_t end,
		  int jump)
{
	if (!wait || waiter == waited || waited >= r->nlocs)
		return;
	struct rep_pair *p = pair_get(r, waiter, waited);
	p->time[kind] += wait;
	p->n[kind]++;
	if (jump)
		ws_keep(r, waiter, waited, kind, end);
}

void rep_pair_late_sender(struct rep *r, size_t rl, size_t sl, uint64_t wait, uint64_t end, int extend,
			  uint64_t prev)
{
	struct rep_loc *R = &r->locs[rl];
	if (extend && R->ls_from != SIZE_MAX) {
		/* the call waited for its latest sender: its wait so far moves */
		struct rep_pair *p = pair_get(r, rl, R->ls_from);
		p->time[REP_WS_LS] -= prev < p->time[REP_WS_LS] ? prev : p->time[REP_WS_LS];
		p->n[REP_WS_LS] -= p->n[REP_WS_LS] > 0;
	}
	if (!extend)
		R->ls_ws = 0;
	R->ls_from = SIZE_MAX;
	if (R->ls_ws) {   /* (a message to itself: the path stays) */
		R->ws[R->ls_ws - 1].end = end;
		R->ws[R->ls_ws - 1].who = (uint32_t)(rl == sl ? rl : sl);
	}
	if (rl == sl)
		return;
	struct rep_pair *p = pair_get(r, rl, sl);
	p->time[REP_WS_LS] += wait;
	p->n[REP_WS_LS]++;
	R->ls_from = sl;
	if (!R->ls_ws)
		R->ls_ws = ws_keep(r, rl, sl, REP_WS_LS, end);
}

static uint64_t pair_total(const struct rep_pair *p, uint64_t *n)
{
	uint64_t t = 0, c = 0;
	for (int k = 0; k < REP_WS_KINDS; k++) {
		t += p->time[k];
		c += p->n[k];
	}
	if (n)
		*n = c;
	return t;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct rep_pair *x = *(const struct rep_pair *const *)a, *y = *(const struct rep_pair *const *)b;
	uint64_t u = pair_total(x, NULL), v = pair_total(y, NULL);
	if (u != v)
		return u < v ? 1 : -1;
	if (x->waiter != y->waiter)
		return x->waiter < y->waiter ? -1 : 1;
	return (x->waited > y->waited) - (x->waited < y->waited);
}

size_t rep_sorted_pairs(const struct rep *r, const struct rep_pair ***out)
{
	const struct rep_pair **v = rep_xcalloc(r->npairs + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < r->cappairs; i++) {
		uint64_t c;
		if (r->pairs[i].waiter != SIZE_MAX && (pair_total(&r->pairs[i], &c) || c))
			v[n++] = &r->pairs[i];
	}
	qsort(v, n, sizeof *v, cmp_pair);
	*out = v;
	return n;
}

/* "rank 0 / Master thread (0)": process, location name and id. */
static const char *who(const struct rep *r, size_t li, char *buf, size_t n)
{
	const struct rep_loc *L = &r->locs[li];
	snprintf(buf, n, "%s / %s (%" PRIu64 ")", r->groups[L->group].name, L->name, L->id);
	return buf;
}

void rep_pairs_text(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	const struct rep_pair **v;
	size_t n = rep_sorted_pairs(r, &v);
	if (n) {
		fprintf(f, "\nWho waits on whom (%zu pairs, by wait time; each wait state charged to the location "
			"waited for: late sender -> the sender, late receiver -> the receiver, wait at NxN -> the "
			"last member to enter, late broadcast -> the root, early reduce -> the last other member):\n", n);
		fprintf(f, "  %-34s %-34s %12s %8s", "waiting (process / location)", "waits for", "wait ms", "count");
		for (int k = 0; k < REP_WS_KINDS; k++)
			fprintf(f, " %15s", ws_heads[k]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < n && (!o->limit || i < o->limit); i++) {
		char a[256], b[256];
		uint64_t c, t = pair_total(v[i], &c);
		fprintf(f, "  %-34.34s %-34.34s %12.3f %8" PRIu64, who(r, v[i]->waiter, a, sizeof a),
			who(r, v[i]->waited, b, sizeof b), rep_ms(r, t), c);
		for (int k = 0; k < REP_WS_KINDS; k++) {
			char cell[48] = "-";
			if (v[i]->n[k])
				snprintf(cell, sizeof cell, "%.3f/%" PRIu64, rep_ms(r, v[i]->time[k]), v[i]->n[k]);
			fprintf(f, " %15s", cell);
		}
		fputc('\n', f);
	}
	if (n)
		fprintf(f, "  (per kind: ms/count)\n");
	free(v);
}

void rep_pairs_json(const struct rep *r, FILE *f)
{
	const struct rep_pair **v;
	size_t n = rep_sorted_pairs(r, &v);
	fputs(",\"wait_pairs\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct rep_loc *W = &r->locs[v[i]->waiter], *F = &r->locs[v[i]->waited];
		uint64_t c, t = pair_total(v[i], &c);
		fprintf(f, "%s{\"waiter\":%" PRIu64 ",\"waiter_process\":%" PRIu32 ",\"waits_for\":%" PRIu64
			",\"waits_for_process\":%" PRIu32 ",\"time\":%" PRIu64 ",\"count\":%" PRIu64, i ? "," : "",
			W->id, r->groups[W->group].id, F->id, r->groups[F->group].id, t, c);
		for (int k = 0; k < REP_WS_KINDS; k++)
			fprintf(f, ",\"%s\":[%" PRIu64 ",%" PRIu64 "]", rep_ws_names[k], v[i]->time[k], v[i]->n[k]);
		fputc('}', f);
	}
	fputc(']', f);
	free(v);
}

void rep_pairs_html(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	const struct rep_pair **v;
	size_t n = rep_sorted_pairs(r, &v);
	if (n) {
		fputs("<h2>Who waits on whom</h2><p>Every wait state charged to the location waited for: late "
		      "sender &rarr; the sender, late receiver &rarr; the receiver, wait at NxN &rarr; the last member "
		      "to enter, late broadcast &rarr; the root, early reduce &rarr; the last other member. Per kind: "
		      "ms / count.</p>\n<table id=\"pairs\"><thead><tr><th>waiting</th><th>waits for</th>"
		      "<th class=\"n\">wait ms</th><th class=\"n\">count</th>", f);
		for (int k = 0; k < REP_WS_KINDS; k++)
			fprintf(f, "<th class=\"n\">%s</th>", ws_heads[k]);
		fputs("</tr></thead><tbody>\n", f);
	}
	for (size_t i = 0; i < n && (!o->limit || i < o->limit); i++) {
		char a[256], b[256];
		uint64_t c, t = pair_total(v[i], &c);
		fprintf(f, "<tr data-waiter=\"%" PRIu64 "\" data-waits-for=\"%" PRIu64 "\" data-time=\"%" PRIu64
			"\"><td>", r->locs[v[i]->waiter].id, r->locs[v[i]->waited].id, t);
		rep_html_str(f, who(r, v[i]->waiter, a, sizeof a));
		fputs("</td><td>", f);
		rep_html_str(f, who(r, v[i]->waited, b, sizeof b));
		fprintf(f, "</td><td class=\"n\">%.3f</td><td class=\"n\">%" PRIu64 "</td>", rep_ms(r, t), c);
		for (int k = 0; k < REP_WS_KINDS; k++) {
			if (v[i]->n[k])
				fprintf(f, "<td class=\"n\">%.3f / %" PRIu64 "</td>", rep_ms(r, v[i]->time[k]), v[i]->n[k]);
			else
				fputs("<td class=\"n\">-</td>", f);
		}
		fputs("</tr>\n", f);
	}
	if (n)
		fputs("</tbody></table>\n", f);
	free(v);
}

void rep_pairs_free(struct rep *r)
{
	free(r->pairs);
	r->pairs = NULL;
	r->npairs = r->cappairs = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		free(r->locs[i].ws);
		r->locs[i].ws = NULL;
		r->locs[i].nws = r->locs[i].capws = 0;
	}
}
