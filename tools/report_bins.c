/* SPDX-License-Identifier: BSD-3-Clause */
/* report_bins.c - the timeline's levels of detail: per location the run
 * [t0, t1] cut into REP_NBINS bins (level 0), then REP_LOD_STEP times more
 * at each finer level, all filled in the one pass of rep_build (every
 * stretch of an innermost region and every lock wait goes to each level),
 * and the runs of bins a row draws of a level (report_html.c: the static
 * level 0, report_html_lod.c: the finer ones for the page's script). */
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define UNDEF32 UINT32_MAX

void rep_bins_setup(struct rep *r)
{
	/* levels while every location's bins of all of them fit the budget,
	 * and a bin of the finest is at least a tick */
	size_t n = 1, per = REP_NBINS, total = REP_NBINS;
	uint64_t span = r->t1 > r->t0 ? r->t1 - r->t0 : 0;
	while (r->nlocs && n < REP_LOD_MAX && (total + per * REP_LOD_STEP) * r->nlocs <= REP_LOD_BUDGET &&
	       per * REP_LOD_STEP <= span) {
		per *= REP_LOD_STEP;
		total += per;
		n++;
	}
	r->nlod = n;
	for (size_t i = 0; i < r->nlocs; i++) {
		struct rep_loc *L = &r->locs[i];
		L->lod = rep_xcalloc(n, sizeof *L->lod);
		for (size_t l = 0, nb = REP_NBINS; l < n; l++, nb *= REP_LOD_STEP) {
			struct rep_bins *B = &L->lod[l];
			B->nb = (uint32_t)nb;
			B->reg = rep_xcalloc(nb * REP_BIN_K, sizeof *B->reg);
			memset(B->reg, 0xff, nb * REP_BIN_K * sizeof *B->reg);
			B->cov = rep_xcalloc(nb * REP_BIN_K, sizeof *B->cov);
			B->lock = rep_xcalloc(nb, sizeof *B->lock);
		}
	}
}

void rep_bins_free(struct rep *r)
{
	for (size_t i = 0; i < r->nlocs; i++) {
		struct rep_loc *L = &r->locs[i];
		for (size_t l = 0; L->lod && l < r->nlod; l++) {
			free(L->lod[l].reg);
			free(L->lod[l].cov);
			free(L->lod[l].lock);
		}
		free(L->lod);
		L->lod = NULL;
	}
}

/* Bins of B overlapped by [a, b): 0 = none; *i0, *i1 inclusive (one more
 * each side: the share of a bin decides, not the rounding here). */
static int bin_range(const struct rep *r, const struct rep_bins *B, uint64_t a, uint64_t b, size_t *i0,
		     size_t *i1)
{
	if (b <= a || r->t1 <= r->t0)
		return 0;
	double span = (double)(r->t1 - r->t0);
	if (a < r->t0)
		a = r->t0;
	if (b > r->t1)
		b = r->t1;
	if (b <= a)
		return 0;
	*i0 = (size_t)((double)(a - r->t0) / span * B->nb);
	*i1 = (size_t)((double)(b - r->t0) / span * B->nb) + 1;
	*i0 -= *i0 > 0;
	if (*i1 >= B->nb)
		*i1 = B->nb - 1;
	return 1;
}

void rep_bin_span(const struct rep *r, const struct rep_bins *B, size_t i, uint64_t *a, uint64_t *b)
{
	double span = (double)(r->t1 - r->t0);
	*a = r->t0 + (uint64_t)(span * (double)i / B->nb);
	*b = r->t0 + (uint64_t)(span * (double)(i + 1) / B->nb);
}

/* The end of bin i of B (rep_bin_span's). */
static uint64_t bin_end(const struct rep *r, const struct rep_bins *B, size_t i)
{
	return r->t0 + (uint64_t)((double)(r->t1 - r->t0) * (double)(i + 1) / B->nb);
}

/* The ticks of [a, b) in bin i of B. */
static uint64_t bin_share(const struct rep *r, const struct rep_bins *B, size_t i, uint64_t a, uint64_t b)
{
	uint64_t bs, be;
	rep_bin_span(r, B, i, &bs, &be);
	uint64_t lo = a > bs ? a : bs, hi = b < be ? b : be;
	return hi > lo ? hi - lo : 0;
}

/* A stretch [a, b) of region ri: added to the region's cover of each bin
 * of B (kept among the bin's REP_BIN_K largest). */
static void bin_add(const struct rep *r, struct rep_bins *B, uint32_t ri, uint64_t a, uint64_t b)
{
	size_t i0, i1;
	uint64_t bs, be;
	if (!bin_range(r, B, a, b, &i0, &i1))
		return;
	rep_bin_span(r, B, i0, &bs, &be);
	for (size_t i = i0; i <= i1; i++, bs = be, be = bin_end(r, B, i)) {   /* (one division a bin) */
		uint64_t lo = a > bs ? a : bs, hi = b < be ? b : be;
		if (hi <= lo)
			continue;
		uint64_t cov = hi - lo;
		uint32_t *reg = B->reg + i * REP_BIN_K;
		uint64_t *cv = B->cov + i * REP_BIN_K;
		size_t k = 0, least = 0;
		while (k < REP_BIN_K && reg[k] != ri && reg[k] != UNDEF32)
			k++;
		if (k < REP_BIN_K) {
			reg[k] = ri;
			cv[k] += cov;
			continue;
		}
		for (k = 1; k < REP_BIN_K; k++)
			if (cv[k] < cv[least])
				least = k;
		if (cov > cv[least]) {   /* (approximate beyond REP_BIN_K regions in one bin) */
			reg[least] = ri;
			cv[least] = cov;
		}
	}
}

void rep_bins_region(struct rep *r, size_t li, uint32_t ri, uint64_t a, uint64_t b)
{
	struct rep_loc *L = &r->locs[li];
	for (size_t l = 0; L->lod && l < r->nlod; l++)
		bin_add(r, &L->lod[l], ri, a, b);
}

void rep_bins_lock(struct rep *r, size_t li, uint64_t a, uint64_t b)
{
	struct rep_loc *L = &r->locs[li];
	size_t i0, i1;
	for (size_t l = 0; L->lod && l < r->nlod; l++) {
		struct rep_bins *B = &L->lod[l];
		if (bin_range(r, B, a, b, &i0, &i1))
			for (size_t i = i0; i <= i1; i++)
				B->lock[i] += bin_share(r, B, i, a, b);
	}
}

/* Bin b is (nearly: 99.9 %) filled by one region: 1, *ri. */
static int bin_full(const struct rep *r, const struct rep_bins *B, size_t b, uint32_t *ri)
{
	uint64_t bs, be;
	rep_bin_span(r, B, b, &bs, &be);
	const uint32_t *reg = B->reg + b * REP_BIN_K;
	const uint64_t *cv = B->cov + b * REP_BIN_K;
	for (size_t k = 0; k < REP_BIN_K; k++)
		if (reg[k] != UNDEF32 && cv[k] * 1000 >= (be - bs) * 999) {
			*ri = reg[k];
			return 1;
		}
	return 0;
}

static void region_runs(const struct rep_bins *B, const struct rep *r,
			void (*fn)(void *ud, const struct rep_run *run), void *ud)
{
	for (size_t b = 0; b < B->nb;) {
		uint32_t ri, rj;
		size_t e = b + 1;
		if (bin_full(r, B, b, &ri)) {   /* runs of bins one region fills: one run */
			while (e < B->nb && bin_full(r, B, e, &rj) && rj == ri)
				e++;
			fn(ud, &(struct rep_run){ b, e, ri, 1, 0, 0 });
			b = e;
			continue;
		}
		uint64_t bs, be;
		rep_bin_span(r, B, b, &bs, &be);
		const uint32_t *reg = B->reg + b * REP_BIN_K;
		const uint64_t *cv = B->cov + b * REP_BIN_K;
		int used[REP_BIN_K] = { 0 };
		for (size_t n = 0; n < REP_BIN_K; n++) {   /* largest first */
			size_t k = REP_BIN_K;
			for (size_t j = 0; j < REP_BIN_K; j++)
				if (!used[j] && reg[j] != UNDEF32 && cv[j] && (k == REP_BIN_K || cv[j] > cv[k]))
					k = j;
			if (k == REP_BIN_K || be <= bs)
				break;
			used[k] = 1;
			fn(ud, &(struct rep_run){ b, b + 1, reg[k], 0, cv[k], be - bs });
		}
		b = e;
	}
}

static void lock_runs(const struct rep_bins *B, const struct rep *r,
		      void (*fn)(void *ud, const struct rep_run *run), void *ud)
{
	for (size_t b = 0; b < B->nb;) {
		uint64_t bs, be;
		rep_bin_span(r, B, b, &bs, &be);
		double share = be > bs ? (double)B->lock[b] / (double)(be - bs) : 0;
		if (share <= 0) {
			b++;
			continue;
		}
		size_t e = b + 1;
		if (share >= 0.999)
			for (uint64_t s0, s1; e < B->nb; e++) {
				rep_bin_span(r, B, e, &s0, &s1);
				if ((double)B->lock[e] < 0.999 * (double)(s1 - s0))
					break;
			}
		fn(ud, &(struct rep_run){ b, e, UNDEF32, share >= 0.999, B->lock[b], be - bs });
		b = e;
	}
}

void rep_bins_runs(const struct rep_bins *B, const struct rep *r, int lock,
		   void (*fn)(void *ud, const struct rep_run *run), void *ud)
{
	if (lock)
		lock_runs(B, r, fn, ud);
	else
		region_runs(B, r, fn, ud);
}
