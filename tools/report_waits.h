/* SPDX-License-Identifier: BSD-3-Clause */
/* report_waits.h - who waits on whom (report_pairs.c) and the critical
 * path (report_path.c), part of report.h (included by it; not on its own). */
#ifndef TRACER_REPORT_WAITS_H
#define TRACER_REPORT_WAITS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rep;

/* Who waits on whom (report_pairs.c): every wait state the report finds,
 * charged to the pair (waiting location, location waited for): late
 * sender (the receiver waits for the sender), late receiver (the blocking
 * sender for the receiver), wait at NxN (each member for the last member
 * to enter), late broadcast (a member for the root), early reduce (the
 * root for the last of the others). Only waits longer than 0 count. */
struct rep_opts;
enum { REP_WS_LS, REP_WS_LR, REP_WS_NXN, REP_WS_BCAST, REP_WS_REDUCE, REP_WS_KINDS };
extern const char *const rep_ws_names[REP_WS_KINDS];   /* late_sender, late_receiver, wait_nxn, ... */
struct rep_pair {
	size_t waiter, waited;           /* location indices; waiter SIZE_MAX: free slot */
	uint64_t time[REP_WS_KINDS], n[REP_WS_KINDS];
};
/* One wait state of a location as the critical path needs it: when it
 * ended, the location it waited for (index), its kind. */
struct rep_ws {
	uint64_t end;
	uint32_t who;
	uint8_t kind;
};
/* A wait of location waiter for location waited of `wait` ticks that ended
 * at end (the waited-for location's event); jump: the critical path may
 * jump there (the wait ended because of the waited-for location). */
void rep_pair_add(struct rep *r, size_t waiter, size_t waited, int kind, uint64_t wait, uint64_t end,
		  int jump);
/* Late sender of receiver location rl for sender sl (wait ticks, ended at
 * the send's Enter): extend = a later request of the same receiving call
 * (an MPI_Waitall) that waited longer (prev: the call's wait so far): the
 * call's wait moves to this sender. */
void rep_pair_late_sender(struct rep *r, size_t rl, size_t sl, uint64_t wait, uint64_t end, int extend,
			  uint64_t prev);
/* Pairs with a wait, by total time (most first); *out allocated (free it). */
size_t rep_sorted_pairs(const struct rep *r, const struct rep_pair ***out);
void rep_pairs_text(const struct rep *r, const struct rep_opts *o, FILE *f);
void rep_pairs_json(const struct rep *r, FILE *f);   /* member ",\"wait_pairs\":[...]" */
void rep_pairs_html(const struct rep *r, const struct rep_opts *o, FILE *f);
void rep_pairs_free(struct rep *r);

/* The critical path (report_path.c): backwards from the last event of the
 * location that ends last, a location is on the path until its latest wait
 * state that ended by then; there the path jumps to the location waited
 * for, at the moment the wait ended, until the run's first event. */
struct rep_seg {
	size_t loc;                      /* location index */
	uint64_t a, b;                   /* [a, b) on the path */
};
struct rep_cpath {
	uint64_t start, end;             /* the run's first and last event (its length: end - start) */
	size_t end_loc;                  /* the location that ends last */
	struct rep_seg *seg;             /* by location, then time */
	size_t nseg, jumps;
	uint64_t *loc_time;              /* [nlocs] time on the path */
	uint64_t *reg_time;              /* [nregions] exclusive time on the path */
	uint64_t outside;                /* on the path, inside no region */
};
/* After rep_build_select (with rep_select.cpath): the walk over the wait
 * states, then one more pass over the events of the locations on the path
 * for the regions' times (only when the report saw MPI communication: else
 * r->cpath stays NULL). 0, or -1 (a read error: otf2r_error). */
int rep_cpath_build(struct rep *r);
void rep_cpath_text(const struct rep *r, const struct rep_opts *o, FILE *f);
void rep_cpath_json(const struct rep *r, const struct rep_opts *o, FILE *f);   /* ",\"critical_path\":{...}" */
void rep_cpath_html(const struct rep *r, const struct rep_opts *o, FILE *f);
void rep_cpath_free(struct rep *r);

#endif /* TRACER_REPORT_WAITS_H */
