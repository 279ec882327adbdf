/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_int.h - what tracer-merge.c (the merge) and merge_parts.c (reading
 * the parts) share.
 */
#ifndef MERGE_INT_H
#define MERGE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "tr_defs.h"

struct rank {
	int r;
	void *buf;               /* rank<r>.tdefs */
	size_t len;
	int ok;                  /* definitions usable: events are linked */
	uint64_t evt_chunk, def_chunk;
	struct tr_mapped m;
	int ended;               /* its end line was in its .tdefs */
	unsigned long long end_events;
};

extern struct rank *ranks;
extern int nranks;
extern const char *dir;
extern char rdir[4100];   /* the per-rank archives: DIR/ranks (DIR in archives of older versions) */
extern const char *pfx;   /* part names: rank<r>, or proc<N> (process tree) */
extern const char *what;  /* in messages: rank, process */
extern int tree;          /* DIR/procs: a process tree */
extern int tr_merge_quiet;   /* errors of the definition code not shown */

void *xrealloc(void *p, size_t n);   /* exits when out of memory */

/* merge_parts.c: reading the parts (ranks of an MPI run, processes of a tree) */
const char *part(int r);
long long file_size(int r, const char *sfx);
const char *part_file(int r, uint64_t loc, const char *ext, char *out, size_t n);
void *read_all(const char *path, size_t *len);
int anchor_chunks(int r, uint64_t *evt, uint64_t *def);
int load_ranks(void);
void compose_cc_map(struct rank *rk);
unsigned long long part_end(int r, int *killed);
void parts_of_live(void (*add)(int r));
void parts_with_events(void (*add)(int r));
void parts_in_records(void (*add)(int r));

#endif
