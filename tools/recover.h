/* SPDX-License-Identifier: BSD-3-Clause */
/* recover.h - `tracer recover` (recover.c), also called by tracer-run and
 * tracer-merge (the killed parts of a process tree). */
#ifndef TRACER_RECOVER_H
#define TRACER_RECOVER_H

#include <stdint.h>
#include <stdio.h>

struct tr_recover_totals {
	unsigned archives;    /* recovered */
	unsigned locations;
	unsigned failed;      /* could not be recovered (killed in the first interval, I/O error) */
	uint64_t events;
};

/* Recover every killed process's archive in dir (and dir/ranks); one line
 * per archive to msg. 0 recovered, 1 nothing to recover, 2 errors. */
int tracer_recover_dir(const char *dir, FILE *msg);
/* The parts of a run in d (DIR/procs, DIR/ranks): every NAME.durable
 * recovered, its NAME.tdefs and NAME.end brought up to the recovered
 * events; only_dead: parts whose process still runs are left alone. One
 * line per part to msg (NULL: none). Returns the number recovered. */
int tracer_recover_parts(const char *d, FILE *msg, int only_dead, struct tr_recover_totals *tot);
/* 1 when d/NAME.durable is left by a process that is gone (killed: to be
 * recovered), else 0. */
int tracer_recover_killed(const char *d, const char *name);
/* The process tree in DIR/procs recovered and unified (tracer-merge
 * --final DIR, its output appended to log: DIR/procs/tracer-merge.log):
 * the run's one line in line. 0, -2 when tracer-merge is not next to this
 * program, -1 when it failed. */
int tracer_unify_tree(const char *dir, char *log, size_t nlog, char *line, size_t n);
/* A process of the tree in DIR/procs still runs: its pid, else 0. */
long tracer_tree_running(const char *dir);
/* The archive at anchor (DIR/NAME.otf2): the sampled addresses a
 * durability snapshot left unnamed named from their object files
 * (recover_syms.c). Returns how many were named, -1 on an error (one line
 * to msg). */
int tr_recover_name_samples(const char *anchor, FILE *msg);
int tracer_recover_main(int argc, char **argv);

#endif
