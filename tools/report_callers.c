/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_callers.c - who made the traced calls: the time of each traced
 * call (a lock call: its wait; an MPI call; a read) by the function that
 * made it and the line of the call. A call recorded as CallingContextEnter
 * (TRACER_CALLERS, or TRACER_SAMPLING) has its calling context: the
 * region's node hangs below the unwound frames of the program, so its
 * parent node is the calling function, its source code location the line
 * of the call (the tracer's own frames, "[tracer]", are skipped). Plain
 * Enter records have no caller: the table is empty then. Text, JSON, HTML.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define UNDEF32 0xffffffffu

/* The calling function's node of context cc (its parent, past tracer
 * frames), UNDEF32 none. */
static uint32_t caller_of(const struct rep *r, uint32_t cc)
{
	uint32_t p = cc < r->ncc ? r->cc_parent[cc] : UNDEF32;
	for (int i = 0; p != UNDEF32 && p < r->ncc && i < 64; i++) {
		uint32_t ri = r->cc_region[p];
		if (ri == UNDEF32 || !r->region_names[ri] || strcmp(r->region_names[ri], "[tracer]"))
			return p;
		p = r->cc_parent[p];
	}
	return UNDEF32;
}

/* (call region, calling function, line): one entry, whatever frames are
 * outside the calling function */
static uint64_t key_of(uint32_t ri, uint32_t fn, uint32_t scl)
{
	return ((uint64_t)ri * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)fn << 32 | scl) * 0xC2B2AE3D27D4EB4Full;
}

static int same(const struct rep_caller *c, uint32_t ri, uint32_t fn, uint32_t scl)
{
	return c->ri == ri && c->fn == fn && c->scl == scl;
}

/* The entry of (ri, fn, scl) in r->callers (open addressing). */
static struct rep_caller *caller_get(struct rep *r, uint32_t ri, uint32_t fn, uint32_t scl)
{
	if (2 * (r->ncallers + 1) > r->capcallers) {   /* grow and rehash */
		size_t cap = r->capcallers ? 2 * r->capcallers : 256;
		struct rep_caller *nc = rep_xcalloc(cap, sizeof *nc);
		for (size_t i = 0; i < r->capcallers; i++) {
			const struct rep_caller *c = &r->callers[i];
			if (!c->calls)
				continue;
			size_t j = (size_t)(key_of(c->ri, c->fn, c->scl) >> 20) & (cap - 1);
			while (nc[j].calls)
				j = (j + 1) & (cap - 1);
			nc[j] = *c;
		}
		free(r->callers);
		r->callers = nc;
		r->capcallers = cap;
	}
	size_t j = (size_t)(key_of(ri, fn, scl) >> 20) & (r->capcallers - 1);
	while (r->callers[j].calls && !same(&r->callers[j], ri, fn, scl))
		j = (j + 1) & (r->capcallers - 1);
	struct rep_caller *c = &r->callers[j];
	if (!c->calls) {
		c->ri = ri;
		c->fn = fn;
		c->scl = scl;
		r->ncallers++;
	}
	return c;
}

void rep_caller_add(struct rep *r, uint32_t ri, uint32_t cc, uint64_t d)
{
	uint32_t caller = caller_of(r, cc);
	if (caller == UNDEF32)
		return;
	struct rep_caller *c = caller_get(r, ri, r->cc_region[caller], r->cc_scl[caller]);
	c->calls++;
	c->time += d;
	if (d > c->max)
		c->max = d;
}

static int cmp_caller(const void *a, const void *b)
{
	const struct rep_caller *x = *(const struct rep_caller *const *)a, *y = *(const struct rep_caller *const *)b;
	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : 0;
}

/* Every entry, by time in the call (most first); *n entries, free it. */
static const struct rep_caller **sorted(const struct rep *r, size_t *n)
{
	const struct rep_caller **out = rep_xcalloc(r->ncallers + 1, sizeof *out);
	size_t k = 0;
	for (size_t i = 0; i < r->capcallers; i++)
		if (r->callers[i].calls)
			out[k++] = &r->callers[i];
	qsort(out, k, sizeof *out, cmp_caller);
	*n = k;
	return out;
}

static const char *caller_name(const struct rep *r, const struct rep_caller *c)
{
	return c->fn != UNDEF32 && r->region_names[c->fn] ? r->region_names[c->fn] : "?";
}

void rep_text_callers(const struct rep *r, size_t limit, FILE *f)
{
	size_t n;
	const struct rep_caller **c = sorted(r, &n);
	if (n) {
		fprintf(f, "\nCallers of the traced calls (the function that made the call, the line; calling "
			"contexts of TRACER_CALLERS or TRACER_SAMPLING), by time in the call:\n");
		fprintf(f, "  %-24s %-28s %-36s %10s %12s %10s %10s\n", "call", "caller", "line", "calls", "time ms",
			"avg us", "max us");
		for (size_t k = 0; k < n && (!limit || k < limit); k++) {
			char line[512];
			rep_scl_text(r, c[k]->scl, line, sizeof line);
			fprintf(f, "  %-24.24s %-28.28s %-36.36s %10" PRIu64 " %12.3f %10.3f %10.3f\n",
				r->region_names[c[k]->ri], caller_name(r, c[k]), line, c[k]->calls,
				rep_ms(r, c[k]->time), rep_ms(r, c[k]->time) * 1e3 / (double)c[k]->calls,
				rep_ms(r, c[k]->max) * 1e3);
		}
	}
	free(c);
}

void rep_json_callers(const struct rep *r, FILE *f)
{
	size_t n;
	const struct rep_caller **c = sorted(r, &n);
	fputs(",\"callers\":[", f);
	for (size_t k = 0; k < n; k++) {
		char line[512];
		fputs(k ? ",{\"call\":" : "{\"call\":", f);
		rep_json_str(f, r->region_names[c[k]->ri]);
		fputs(",\"caller\":", f);
		rep_json_str(f, caller_name(r, c[k]));
		fputs(",\"line\":", f);
		rep_json_str(f, rep_scl_text(r, c[k]->scl, line, sizeof line));
		fprintf(f, ",\"calls\":%" PRIu64 ",\"time\":%" PRIu64 ",\"max\":%" PRIu64 "}", c[k]->calls, c[k]->time,
			c[k]->max);
	}
	fputc(']', f);
	free(c);
}

void rep_html_callers(const struct rep *r, size_t limit, FILE *f)
{
	size_t n;
	const struct rep_caller **c = sorted(r, &n);
	if (n) {
		fputs("<h2>Callers of the traced calls</h2>\n<p>The function that made each traced call and the "
		      "line of the call (calling contexts: TRACER_CALLERS or TRACER_SAMPLING), by time in the "
		      "call.</p>\n<table id=\"callers\"><tr><th>call</th><th>caller</th><th>line</th><th>calls</th>"
		      "<th>time ms</th><th>avg us</th><th>max us</th></tr>\n", f);
		for (size_t k = 0; k < n && (!limit || k < limit); k++) {
			char line[512];
			fputs("<tr><td>", f);
			rep_html_str(f, r->region_names[c[k]->ri]);
			fputs("</td><td>", f);
			rep_html_str(f, caller_name(r, c[k]));
			fputs("</td><td>", f);
			rep_html_str(f, rep_scl_text(r, c[k]->scl, line, sizeof line));
			fprintf(f, "</td><td>%" PRIu64 "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n", c[k]->calls,
				rep_ms(r, c[k]->time), rep_ms(r, c[k]->time) * 1e3 / (double)c[k]->calls,
				rep_ms(r, c[k]->max) * 1e3);
		}
		fputs("</table>\n", f);
	}
	free(c);
}
