/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_int.h - what the parts of the archive life cycle share
 * (archive.c, archive_dir.c, archive_mpi.c, archive_end.c); nothing else
 * includes it.
 */
#ifndef TR_ARCHIVE_INT_H
#define TR_ARCHIVE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "tree_files.h"

/* archive.c */
extern char tr_ar_name[64];          /* traces, rank<r> or proc<N> */
extern char tr_ar_tdefs_path[4200];  /* packed local definitions (.tdefs), or "" */
extern int tr_ar_tdefs_own;          /* they are tr_ar_tdefs_path (an MPI rank; a tree part once a tick saved them there) */
/* The packed definitions now: into tr_ar_tdefs_path, or a tree part's
 * record of DIR/procs/parts.tdefs (crash: async-signal-safe). 0 or -1. */
int tr_ar_write_tdefs(int crash);
extern const otf2w_memory_callbacks tr_ar_memory;
const char *tr_ar_parts_dir(void);
/* The directory of the event files of a tree's parts (not the root's):
 * DIR/procs/parts/<location>.evt (tools/tracer-merge.c, tools/recover.c) */
#define TR_AR_PARTS_EVENTS TR_PARTS_EVENTS   /* (tree_files.h) */
void tr_ar_set_arname(void);
/* Run fn(arg) in a descriptor table of our own, else here. */

/* archive_dir.c */
struct claim_call {
	const char *dir, *name;
	int ret;
};
void tr_ar_own_dir(const char *dir, char *out, size_t n);
int tr_ar_claim(const char *dir, const char *name);
void tr_ar_claim_io(void *p);   /* struct claim_call */
void tr_ar_unclaim(const char *dir, const char *name);
void tr_ar_drop_claim(void);
void tr_ar_claim_to_anchor(void);
int tr_ar_choose_dir(void);

/* archive_mpi.c */
struct run_end {
	uint64_t first, last, events;
	uint32_t ranks;
	int late;   /* a rank made definitions after it packed its set (tr_defs_late) */
};
void tr_ar_write_unified_global(void);
/* The last rank, when a rank made definitions the unified set lacks: the
 * unified archive made again from every rank's packed definitions
 * (tracer-merge, waited for). 0 or -1. */
int tr_ar_merge_late(void);
uint32_t tr_ar_unified_locations(void);   /* event files of DIR/traces (thread context) */
void tr_ar_run_end_mark_crashed(uint64_t events);
int tr_ar_run_end_last(uint64_t first, uint64_t last, uint64_t events, struct run_end *tot);
/* The merge of the ranks' archives when the run ends without MPI_Finalize
 * (one rank starts it; crash: async-signal-safe). 1 when this process
 * never called MPI_Init (its summary is the merge's). */
int tr_ar_start_merge(int crash);
/* MPI side processes (archive_mpi.c) */
void tr_ar_side_to_rank(void);
void tr_ar_exec_aside(void);
int tr_ar_side(void);

#endif
