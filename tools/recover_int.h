/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover_int.h - the parts of `tracer recover` (recover.c: the processes
 * and trees to recover; recover_evt.c: event surgery; recover_defs.c:
 * definition repair); the records themselves are read and written with
 * format/'s decoder and encoders (otf2r_chunk_*, otf2w_*_put_*).
 * Not a public header.
 */
#ifndef TRACER_RECOVER_INT_H
#define TRACER_RECOVER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../preload/archive/durable_index.h"

#define HDR 18   /* an OTF2 chunk's header (otf2-format.md) */

struct loc_result {
	uint64_t events;
	uint64_t last_time;
	int begin;   /* ProgramBegin recovered (master location) */
};

struct loc_count {
	uint64_t id, events;
};

/* n bytes at off: read_full returns the count read, write_full 0 when all
 * were written, else -1 */
int read_full(int fd, void *p, size_t n, off_t off);
int write_full(int fd, const void *p, size_t n, off_t off);
/* recover.c: every file D/parts/<location>.<ext> of a tree's parts */
void tr_parts_each(const char *d, void (*fn)(const char *path, const char *name, uint64_t loc, void *ud), void *ud);

/* recover_evt.c */
/* One location's event file cut after its last whole record before the
 * committed position (slot), completed (open regions left, ThreadEnd,
 * ProgramEnd on the master at end_at); its counts in *r. 0, or -1. */
int fix_evt(const char *path, const struct tr_durable_slot *slot, int master, uint64_t cs, uint64_t end_at,
	    struct loc_result *r);

/* recover_defs.c */
void widen_clock(const char *def, uint64_t last);
int has_suffix(const char *s, const char *sfx);
void patch_tdefs(const char *path, uint64_t last, const struct loc_count *lc, size_t n);
int local_def_ok(const char *path);
int copy_file(const char *from, const char *to);
void unlink_own(const char *d, const char *name, const char *sfx);
void settle_snapshot(const char *d, const char *name);

#endif
