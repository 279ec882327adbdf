/* SPDX-License-Identifier: BSD-3-Clause */
/* report_samples.c - the sampled call stacks of `tracer report`
 * (CallingContextSample records counted by report.c): functions by self
 * samples, the hottest calling contexts, source code locations as text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define UNDEF32 UINT32_MAX

static int cmp_fn(const void *a, const void *b)
{
	const struct rep_fn *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->ri > y->ri) - (x->ri < y->ri);
}

static const struct rep *canon_rep;

static int cmp_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(canon_rep->region_names[x], canon_rep->region_names[y]);
	return c ? c : (x > y) - (x < y);
}

/* Per region: the first region of its name. The sampler defines a region
 * per function, file and first line, so one function can come as two
 * (a pc whose line table says another file); the sample views merge
 * functions by name, as perf and flamegraph.pl do. Caller frees. */
uint32_t *rep_region_canon(const struct rep *r)
{
	size_t n = r->nregions;
	uint32_t *by = rep_xcalloc(n ? n : 1, sizeof *by), *canon = rep_xcalloc(n ? n : 1, sizeof *canon);
	for (size_t i = 0; i < n; i++)
		by[i] = (uint32_t)i;
	canon_rep = r;
	qsort(by, n, sizeof *by, cmp_name);
	for (size_t i = 0; i < n; i++)
		canon[by[i]] = i && !strcmp(r->region_names[by[i]], r->region_names[by[i - 1]]) ? canon[by[i - 1]] : by[i];
	free(by);
	return canon;
}

size_t rep_sample_functions(const struct rep *r, struct rep_fn *out)
{
	uint32_t *canon = rep_region_canon(r);
	uint64_t *best = rep_xcalloc(r->nregions, sizeof *best);
	uint32_t *seen = rep_xcalloc(r->nregions, sizeof *seen);   /* sample stamp per region */
	for (size_t i = 0; i < r->nregions; i++)
		out[i] = (struct rep_fn){ i, 0, 0, UNDEF32 };
	for (size_t c = 0; c < r->ncc; c++) {
		uint64_t n = r->cc_samples[c];
		if (!n)
			continue;
		uint32_t ri = r->cc_region[c];
		if (ri != UNDEF32)
			ri = canon[ri];
		if (ri != UNDEF32) {
			out[ri].self += n;
			if (n > best[ri]) {
				best[ri] = n;
				out[ri].scl = r->cc_scl[c];
			}
		}
		size_t steps = 0;
		for (uint32_t p = (uint32_t)c; p != UNDEF32 && steps++ <= r->ncc; p = r->cc_parent[p]) {
			uint32_t q = r->cc_region[p];
			if (q != UNDEF32)
				q = canon[q];
			if (q != UNDEF32 && seen[q] != c + 1) {   /* each region once per path */
				seen[q] = (uint32_t)c + 1;
				out[q].total += n;
			}
		}
	}
	free(best);
	free(seen);
	free(canon);
	size_t k = 0;
	for (size_t i = 0; i < r->nregions; i++)
		if (out[i].total)
			out[k++] = out[i];
	qsort(out, k, sizeof *out, cmp_fn);
	return k;
}

static const struct rep *cc_sort_rep;

static int cmp_cc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t u = cc_sort_rep->cc_samples[x], v = cc_sort_rep->cc_samples[y];
	return u != v ? (u < v ? 1 : -1) : (x > y) - (x < y);
}

size_t rep_sample_paths(const struct rep *r, uint32_t *out)
{
	size_t k = 0;
	for (size_t c = 0; c < r->ncc; c++)
		if (r->cc_samples[c])
			out[k++] = (uint32_t)c;
	cc_sort_rep = r;
	qsort(out, k, sizeof *out, cmp_cc);
	return k;
}

const char *rep_scl_text(const struct rep *r, uint32_t scl, char *buf, size_t n)
{
	const otf2r_def *d = scl == UNDEF32 ? NULL
		: otf2r_def_find(r->ar, OTF2R_GDEF_SOURCE_CODE_LOCATION, scl);
	if (!d)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%s:%" PRIu32, rep_str_or(r, d->u.source_code_location.file, "?"),
			 d->u.source_code_location.line_number);
	return buf;
}

/* ---- collapsed stacks (--collapsed FILE) ----
 * One line per distinct call path with samples: the functions from the
 * outermost frame to the sampled one joined by ';', a space, the number of
 * samples (the "folded" format of Brendan Gregg's flamegraph.pl, which
 * speedscope, inferno and pprof's converters read). Calling contexts that
 * differ only in source lines give one line. A ';' in a name becomes ','. */
struct coll_line {
	char *path;
	uint64_t n;
};

static int cmp_coll(const void *a, const void *b)
{
	return strcmp(((const struct coll_line *)a)->path, ((const struct coll_line *)b)->path);
}

int rep_print_collapsed(const struct rep *r, FILE *f)
{
	struct coll_line *v = rep_xcalloc(r->ncc ? r->ncc : 1, sizeof *v);
	uint32_t *chain = rep_xcalloc(r->ncc ? r->ncc : 1, sizeof *chain);
	size_t nv = 0;
	for (size_t c = 0; c < r->ncc; c++) {
		if (!r->cc_samples[c])
			continue;
		size_t n = 0, len = 1;
		for (uint32_t p = (uint32_t)c; p != UNDEF32 && p < r->ncc && n < r->ncc; p = r->cc_parent[p]) {
			chain[n++] = p;
			uint32_t ri = r->cc_region[p];
			len += strlen(ri == UNDEF32 ? "?" : r->region_names[ri]) + 1;
		}
		char *s = rep_xcalloc(len, 1), *o = s;
		while (n-- > 0) {
			uint32_t ri = r->cc_region[chain[n]];
			for (const char *q = ri == UNDEF32 ? "?" : r->region_names[ri]; *q; q++)
				*o++ = *q == ';' ? ',' : *q;
			if (n)
				*o++ = ';';
		}
		v[nv].path = s;
		v[nv++].n = r->cc_samples[c];
	}
	qsort(v, nv, sizeof *v, cmp_coll);
	for (size_t i = 0; i < nv; i++) {
		uint64_t n = v[i].n;
		while (i + 1 < nv && !strcmp(v[i].path, v[i + 1].path)) {
			free(v[i].path);
			n += v[++i].n;
		}
		fprintf(f, "%s %" PRIu64 "\n", v[i].path, n);
		free(v[i].path);
	}
	free(v);
	free(chain);
	return ferror(f) ? -1 : 0;
}
