/* SPDX-License-Identifier: BSD-3-Clause */
/* report_bins.h - the HTML timeline's levels of detail (report_bins.c),
 * part of report.h (included by it; not on its own). */
#ifndef TRACER_REPORT_BINS_H
#define TRACER_REPORT_BINS_H

#include <stddef.h>
#include <stdint.h>

struct rep;

/* The timeline (report_bins.c): per location levels of detail, each the
 * whole run [t0, t1] cut into equal time bins: level 0 REP_NBINS bins (the
 * page's static drawing), each finer level REP_LOD_STEP times the bins of
 * the one above, as many levels as keep every location's bins of every
 * level within REP_LOD_BUDGET (level 0 always). Per bin the REP_BIN_K
 * regions that covered most of it (innermost region, ticks summed over its
 * stretches in the bin; the page draws each with a height of its share of
 * the bin), and the ticks of lock waits in it. */
#define REP_NBINS 1000          /* level 0: time bins per location */
#define REP_BIN_K 3             /* regions kept per bin */
#define REP_LOD_STEP 8          /* bins of a level / bins of the level above */
#define REP_LOD_MAX 6           /* levels at most */
#define REP_LOD_BUDGET (1u << 20)   /* bins of all levels and locations */
struct rep_bins {
	uint32_t nb;            /* bins over [t0, t1] */
	uint32_t *reg;          /* [nb * REP_BIN_K] region index, UINT32_MAX none */
	uint64_t *cov;          /* [nb * REP_BIN_K] its ticks in the bin */
	uint64_t *lock;         /* [nb] ticks of lock waits */
};
/* Ticks of bin i of level B (0 .. B->nb - 1): [*a, *b). */
void rep_bin_span(const struct rep *r, const struct rep_bins *B, size_t i, uint64_t *a, uint64_t *b);
/* What a row draws of a level, as runs of bins: a region (ri) filling each
 * bin of [b, e) (full), or covering cov ticks of the bt of bin b (e = b + 1;
 * a bin's regions largest first); a lock wait (ri UINT32_MAX) filling
 * [b, e), or cov ticks of bin b. */
struct rep_run {
	size_t b, e;
	uint32_t ri;
	int full;
	uint64_t cov, bt;
};
/* The levels of every location (after t0/t1 are set; rep_build). */
void rep_bins_setup(struct rep *r);
void rep_bins_free(struct rep *r);
/* Stretch [a, b) of region ri (innermost) on location li, a lock wait. */
void rep_bins_region(struct rep *r, size_t li, uint32_t ri, uint64_t a, uint64_t b);
void rep_bins_lock(struct rep *r, size_t li, uint64_t a, uint64_t b);
/* fn(ud, run) for each run of regions (lock 0) or of lock waits (lock 1)
 * of level B, in time order. */
void rep_bins_runs(const struct rep_bins *B, const struct rep *r, int lock,
		   void (*fn)(void *ud, const struct rep_run *run), void *ud);

#endif /* TRACER_REPORT_BINS_H */
