/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_path.c - the critical path of an MPI run, as Scalasca's critical
 * path analysis defines it, simplified: backwards from the last event of
 * the location that ends last, a location is on the path until its latest
 * wait state that ended by then (report_pairs.c keeps them: late sender,
 * late receiver, wait at NxN, late broadcast, early reduce); there the path
 * jumps to the location it waited for (the sender, the receiver, the last
 * member to enter, the root, the last of the others) at the moment the wait
 * ended, and goes on backwards there, until the run's first event. Each
 * wait state is taken at most once, so the walk ends after at most as many
 * jumps as there are wait states; its segments tile [first, last] event of
 * the run, so the path's length is the run's.
 *
 * The regions' times on the path need the events again: one more pass, over
 * the events of the locations on the path only, each location alone in file
 * order (otf2r_evt_*), with a stack of region indices: between two events
 * the innermost open region is charged the part of that stretch inside the
 * location's segments. Memory: the wait states, the segments, one stack.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int cmp_ws(const void *a, const void *b)
{
	const struct rep_ws *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->who != y->who)
		return x->who < y->who ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct rep_seg *x = a, *y = b;
	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	return (x->a > y->a) - (x->a < y->a);
}

static void add_seg(struct rep_cpath *p, size_t *cap, size_t loc, uint64_t a, uint64_t b)
{
	if (b <= a)
		return;
	if (p->nseg == *cap)
		p->seg = rep_grow(p->seg, cap, 64, sizeof *p->seg);
	p->seg[p->nseg++] = (struct rep_seg){ loc, a, b };
}

/* The walk: p->seg, p->loc_time. */
static void walk(struct rep *r, struct rep_cpath *p)
{
	size_t *cursor = rep_xcalloc(r->nlocs + 1, sizeof *cursor);
	size_t cap = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		struct rep_loc *L = &r->locs[i];
		qsort(L->ws, L->nws, sizeof *L->ws, cmp_ws);
		cursor[i] = L->nws;
	}
	size_t cur = p->end_loc;
	uint64_t t = p->end;
	for (;;) {
		struct rep_loc *L = &r->locs[cur];
		while (cursor[cur] && L->ws[cursor[cur] - 1].end > t)
			cursor[cur]--;   /* (ended after the path got here) */
		if (!cursor[cur] || L->ws[cursor[cur] - 1].end <= p->start) {
			add_seg(p, &cap, cur, p->start, t);
			break;
		}
		const struct rep_ws *w = &L->ws[--cursor[cur]];
		add_seg(p, &cap, cur, w->end, t);
		t = w->end;
		if (w->who < r->nlocs && w->who != cur) {
			cur = w->who;
			p->jumps++;
		}
	}
	free(cursor);
	for (size_t k = 0; k < p->nseg; k++)
		p->loc_time[p->seg[k].loc] += p->seg[k].b - p->seg[k].a;
	qsort(p->seg, p->nseg, sizeof *p->seg, cmp_seg);
}

/* Charge [a, b) of location segments s[0..n) to region ri (UINT32_MAX:
 * inside none); *k: the first segment that may still overlap. */
static void charge(struct rep_cpath *p, const struct rep_seg *s, size_t n, size_t *k, uint32_t ri, uint64_t a,
		   uint64_t b)
{
	while (*k < n && s[*k].b <= a)
		(*k)++;
	for (size_t j = *k; j < n && s[j].a < b; j++) {
		uint64_t lo = a > s[j].a ? a : s[j].a, hi = b < s[j].b ? b : s[j].b;
		if (hi > lo) {
			if (ri == UINT32_MAX)
				p->outside += hi - lo;
			else
				p->reg_time[ri] += hi - lo;
		}
	}
}

static uint32_t region_of(const struct rep *r, const otf2r_event *ev, int *enter)
{
	uint32_t id = UINT32_MAX, cc = UINT32_MAX;
	*enter = ev->type == OTF2R_EVT_ENTER || ev->type == OTF2R_EVT_CALLING_CONTEXT_ENTER;
	switch (ev->type) {
	case OTF2R_EVT_ENTER: id = ev->u.enter.region; break;
	case OTF2R_EVT_LEAVE: id = ev->u.leave.region; break;
	case OTF2R_EVT_CALLING_CONTEXT_ENTER: cc = ev->u.calling_context_enter.calling_context; break;
	case OTF2R_EVT_CALLING_CONTEXT_LEAVE: cc = ev->u.calling_context_leave.calling_context; break;
	default: return UINT32_MAX;
	}
	if (cc != UINT32_MAX)
		return cc < r->ncc ? r->cc_region[cc] : UINT32_MAX;
	return id < r->region_ids ? r->region_by_id[id] : UINT32_MAX;
}

/* The regions of location li on its segments s[0..n): its events again,
 * the Enter/Leave rules of the report (a Leave closes the innermost open
 * activation of its region and what is above it; one without: ignored);
 * before its first event and after its last it is inside no region. */
static int regions_on(struct rep *r, struct rep_cpath *p, size_t li, const struct rep_seg *s, size_t n)
{
	otf2r_evt_reader *rd;
	if (otf2r_evt_open(r->ar, r->locs[li].id, &rd))
		return -1;
	uint32_t *st = NULL;
	size_t depth = 0, cap = 0, k = 0;
	uint64_t prev = 0;
	int rc;
	otf2r_event ev;
	while ((rc = otf2r_evt_next(rd, &ev)) > 0 && k < n) {
		if (ev.time > prev) {
			charge(p, s, n, &k, depth ? st[depth - 1] : UINT32_MAX, prev, ev.time);
			prev = ev.time;
		}
		int in;
		uint32_t ri = region_of(r, &ev, &in);
		if (ri == UINT32_MAX)
			continue;
		if (in) {
			if (depth == cap)
				st = rep_grow(st, &cap, 64, sizeof *st);
			st[depth++] = ri;
			continue;
		}
		size_t d = depth;
		while (d && st[d - 1] != ri)
			d--;
		if (d)
			depth = d - 1;
	}
	if (rc >= 0)
		charge(p, s, n, &k, UINT32_MAX, prev, UINT64_MAX);
	free(st);
	otf2r_evt_close(rd);
	return rc < 0 ? -1 : 0;
}

int rep_cpath_build(struct rep *r)
{
	int mpi = r->messages || r->npairs;
	for (size_t cm = 0; cm < r->ncomm; cm++)
		mpi |= r->coll_count[cm] > 0;
	if (!r->cpath_on || !mpi || !r->nlocs || r->last <= r->first)
		return 0;
	struct rep_cpath *p = rep_xcalloc(1, sizeof *p);
	p->start = r->first;
	p->end = r->last;
	for (size_t i = 0; i < r->nlocs; i++)
		if (r->locs[i].events && r->locs[i].last > r->locs[p->end_loc].last)
			p->end_loc = i;
	p->loc_time = rep_xcalloc(r->nlocs, sizeof *p->loc_time);
	p->reg_time = rep_xcalloc(r->nregions + 1, sizeof *p->reg_time);
	walk(r, p);
	r->cpath = p;
	for (size_t a = 0, b; a < p->nseg; a = b) {
		for (b = a; b < p->nseg && p->seg[b].loc == p->seg[a].loc; b++)
			;
		if (regions_on(r, p, p->seg[a].loc, p->seg + a, b - a))
			return -1;
	}
	return 0;
}

void rep_cpath_free(struct rep *r)
{
	if (!r->cpath)
		return;
	free(r->cpath->seg);
	free(r->cpath->loc_time);
	free(r->cpath->reg_time);
	free(r->cpath);
	r->cpath = NULL;
}

/* Regions on the path by their time there (most first), at most limit. */
static const struct rep *sort_r;
static int cmp_reg(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t u = sort_r->cpath->reg_time[x], v = sort_r->cpath->reg_time[y];
	return u != v ? (u < v ? 1 : -1) : (x > y) - (x < y);
}

static size_t path_regions(const struct rep *r, size_t limit, uint32_t **out)
{
	uint32_t *v = rep_xcalloc(r->nregions + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < r->nregions; i++)
		if (r->cpath->reg_time[i])
			v[n++] = (uint32_t)i;
	sort_r = r;
	qsort(v, n, sizeof *v, cmp_reg);
	*out = v;
	return limit && n > limit ? limit : n;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static uint64_t excl_of(const struct rep *r, size_t ri)
{
	return rep_total(r, ri, -1).excl;
}

void rep_cpath_text(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	const struct rep_cpath *p = r->cpath;
	if (!p)
		return;
	uint64_t len = p->end - p->start;
	const struct rep_loc *E = &r->locs[p->end_loc];
	fprintf(f, "\nCritical path (backwards from the end of the location that ends last: a location is on it "
		"until its latest wait state, then the location it waited for, from the moment the wait ended):\n");
	fprintf(f, "  length %.3f ms = the run's span (first to last event), %zu segments, %zu jumps, ends on %s / "
		"%s (%" PRIu64 ")\n", rep_ms(r, len), p->nseg, p->jumps, r->groups[E->group].name, E->name, E->id);
	fprintf(f, "  %-12s %-24s %-16s %12s %7s\n", "location", "name", "process", "on path ms", "path%");
	for (size_t i = 0; i < r->nlocs; i++)
		if (p->loc_time[i])
			fprintf(f, "  %-12" PRIu64 " %-24.24s %-16s %12.3f %6.1f%%\n", r->locs[i].id, r->locs[i].name,
				r->groups[r->locs[i].group].name, rep_ms(r, p->loc_time[i]), pct(p->loc_time[i], len));
	uint32_t *v;
	size_t n = path_regions(r, o->limit, &v);
	fprintf(f, "  %-32s %12s %7s %12s %17s\n", "region (exclusive time)", "on path ms", "path%", "total ms",
		"on path of its %");
	for (size_t k = 0; k < n; k++) {
		uint64_t t = p->reg_time[v[k]], x = excl_of(r, v[k]);
		fprintf(f, "  %-32.32s %12.3f %6.1f%% %12.3f %16.1f%%\n", r->region_names[v[k]], rep_ms(r, t),
			pct(t, len), rep_ms(r, x), pct(t, x));
	}
	if (p->outside)
		fprintf(f, "  %-32s %12.3f %6.1f%%\n", "(inside no traced region)", rep_ms(r, p->outside),
			pct(p->outside, len));
	free(v);
}

static int cmp_seg_time(const void *a, const void *b)
{
	const struct rep_seg *x = a, *y = b;
	return (x->a > y->a) - (x->a < y->a);
}

void rep_cpath_json(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	const struct rep_cpath *p = r->cpath;
	if (!p)
		return;
	fprintf(f, ",\"critical_path\":{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"length\":%" PRIu64
		",\"end_location\":%" PRIu64 ",\"jumps\":%zu,\"nsegments\":%zu,\"outside\":%" PRIu64 ",\"segments\":[",
		p->start, p->end, p->end - p->start, r->locs[p->end_loc].id, p->jumps, p->nseg, p->outside);
	struct rep_seg *s = rep_xcalloc(p->nseg + 1, sizeof *s);
	memcpy(s, p->seg, p->nseg * sizeof *s);
	qsort(s, p->nseg, sizeof *s, cmp_seg_time);
	for (size_t k = 0; k < p->nseg && (!o->limit || k < o->limit); k++)
		fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", k ? "," : "", r->locs[s[k].loc].id, s[k].a,
			s[k].b);
	free(s);
	fputs("],\"locations\":[", f);
	for (size_t i = 0, k = 0; i < r->nlocs; i++)
		if (p->loc_time[i])
			fprintf(f, "%s{\"id\":%" PRIu64 ",\"process\":%" PRIu32 ",\"time\":%" PRIu64 "}", k++ ? "," : "",
				r->locs[i].id, r->groups[r->locs[i].group].id, p->loc_time[i]);
	fputs("],\"regions\":[", f);
	uint32_t *v;
	size_t n = path_regions(r, o->limit, &v);
	for (size_t k = 0; k < n; k++) {
		fprintf(f, "%s{\"id\":%" PRIu32 ",\"name\":", k ? "," : "", r->regions[v[k]]->self);
		rep_json_str(f, r->region_names[v[k]]);
		fprintf(f, ",\"time\":%" PRIu64 ",\"excl\":%" PRIu64 "}", p->reg_time[v[k]], excl_of(r, v[k]));
	}
	free(v);
	fputs("]}", f);
}

void rep_cpath_html(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	const struct rep_cpath *p = r->cpath;
	if (!p)
		return;
	uint64_t len = p->end - p->start;
	fprintf(f, "<h2>Critical path</h2><p>Backwards from the end of the location that ends last: a location is "
		"on the path until its latest wait state, then the location it waited for, from the moment the wait "
		"ended. Length %.3f ms (the run's span), %zu segments, %zu jumps. The regions' exclusive time on the "
		"path: those that, made faster, shorten the run.</p>\n<table id=\"critical_path\"><thead><tr>"
		"<th class=\"n\">location</th><th>name</th><th>process</th><th class=\"n\">on path ms</th>"
		"<th class=\"n\">path %%</th></tr></thead><tbody>\n", rep_ms(r, len), p->nseg, p->jumps);
	for (size_t i = 0; i < r->nlocs; i++) {
		if (!p->loc_time[i])
			continue;
		fprintf(f, "<tr data-time=\"%" PRIu64 "\"><td class=\"n\">%" PRIu64 "</td><td>", p->loc_time[i],
			r->locs[i].id);
		rep_html_str(f, r->locs[i].name);
		fputs("</td><td>", f);
		rep_html_str(f, r->groups[r->locs[i].group].name);
		fprintf(f, "</td><td class=\"n\">%.3f</td><td class=\"n\">%.1f</td></tr>\n", rep_ms(r, p->loc_time[i]),
			pct(p->loc_time[i], len));
	}
	fputs("</tbody></table>\n<table id=\"critical_path_regions\"><thead><tr><th></th><th>region</th>"
	      "<th class=\"n\">on path ms</th><th class=\"n\">path %</th><th class=\"n\">total excl ms</th>"
	      "<th class=\"n\">on path of its time %</th></tr></thead><tbody>\n", f);
	uint32_t *v;
	size_t n = path_regions(r, o->limit, &v);
	for (size_t k = 0; k < n; k++) {
		char c[32];
		uint64_t t = p->reg_time[v[k]], x = excl_of(r, v[k]);
		rep_html_color(r, v[k], c, sizeof c);
		fprintf(f, "<tr data-time=\"%" PRIu64 "\"><td style=\"background:%s;width:10px\"></td><td>", t, c);
		rep_html_str(f, r->region_names[v[k]]);
		fprintf(f, "</td><td class=\"n\">%.3f</td><td class=\"n\">%.1f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.1f</td></tr>\n", rep_ms(r, t), pct(t, len), rep_ms(r, x), pct(t, x));
	}
	free(v);
	if (p->outside)
		fprintf(f, "<tr data-time=\"%" PRIu64 "\"><td></td><td>(inside no traced region)</td><td class=\"n\">"
			"%.3f</td><td class=\"n\">%.1f</td><td></td><td></td></tr>\n", p->outside,
			rep_ms(r, p->outside), pct(p->outside, len));
	fputs("</tbody></table>\n", f);
}
