/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_int.h - internals shared by the OpenMP wrappers: openmp.c (module,
 * definitions, lock ids, records), openmp_ompt.c (LLVM libomp through OMPT),
 * openmp_gomp.c (GCC libgomp entry points). Not a public header.
 *
 * Both runtimes produce the same records:
 *   parallel region  ThreadFork(OPENMP, n) .. ThreadJoin(OPENMP) on the
 *                    encountering thread; on every team member
 *                    ThreadTeamBegin(team) Enter("omp parallel") ..
 *                    Leave ThreadTeamEnd(team)
 *   barriers, work-sharing, taskwait ...  Enter/Leave of the regions below
 *   critical, atomic, ordered, omp locks  ThreadAcquireLock/ReleaseLock(OPENMP,
 *                    lock id, acquisition order)
 *   explicit tasks   ThreadTaskCreate/Switch/Complete(team, creator, generation)
 * The team is tr_def_thread_comm(OPENMP): all locations of the process, rank =
 * location index (as wrappers/argobots/argobots.c).
 */
#ifndef TR_OPENMP_INT_H
#define TR_OPENMP_INT_H

#include <stdint.h>
#include "tracer.h"

enum tr_omp_rgn {
	TR_OMP_PARALLEL, TR_OMP_BARRIER, TR_OMP_IBARRIER, TR_OMP_LOOP, TR_OMP_SECTIONS,
	TR_OMP_SINGLE, TR_OMP_WORKSHARE, TR_OMP_DISTRIBUTE, TR_OMP_TASKLOOP, TR_OMP_MASTER,
	TR_OMP_CRITICAL, TR_OMP_ATOMIC, TR_OMP_ORDERED, TR_OMP_SET_LOCK, TR_OMP_SET_NEST_LOCK,
	TR_OMP_TASKWAIT, TR_OMP_TASKGROUP, TR_OMP_REDUCTION, TR_OMP_TASKYIELD, TR_OMP_SCOPE,
	TR_OMP_CANCEL, TR_OMP_CANCELLATION_POINT, TR_OMP_NRGN
};

/* Fixed lock keys for runtimes that give no address (libgomp). */
#define TR_OMP_KEY_CRITICAL ((uint64_t)1)   /* unnamed critical */
#define TR_OMP_KEY_ATOMIC   ((uint64_t)2)
#define TR_OMP_KEY_ORDERED  ((uint64_t)3)

extern uint32_t tr_omp_rgn[TR_OMP_NRGN];
extern uint32_t tr_omp_team;          /* thread Comm of the OPENMP paradigm */
extern int tr_omp_ready;              /* definitions made, TRACER_OPENMP on */
extern int tr_omp_ompt_on;            /* libomp's OMPT tool interface is active */

/* Definitions, once (not hot; idempotent). 0, or -1 when OpenMP tracing is off. */
int tr_omp_setup(void);
/* TRACER_OPENMP (on by default), parsed at the first call: the family's
 * table registered by a constructor, or sooner by libomp's constructor
 * (ompt_start_tool) */
int tr_omp_setting(void);

/* Location of a thread the runtime created: named "OpenMP thread N". */
void tr_omp_name_worker(struct tr_thread *t);

/* ---- records (hot: no lock, no allocation; t from tr_thread_get) ---- */
void tr_omp_fork(struct tr_thread *t, uint64_t now, uint32_t nrequested);
void tr_omp_join(struct tr_thread *t, uint64_t now);
/* ThreadTeamBegin + Enter "omp parallel"; Leave + ThreadTeamEnd. */
void tr_omp_team_begin(struct tr_thread *t, uint64_t now);
void tr_omp_team_end(struct tr_thread *t, uint64_t now);
/* Lock records for the lock known by `key` (an address or TR_OMP_KEY_*). */
uint64_t tr_omp_lock_acquired(struct tr_thread *t, uint64_t now, uint64_t key);   /* the time used */
void tr_omp_lock_released(struct tr_thread *t, uint64_t now, uint64_t key);
/* Tasks: ids are creator location index << 32 | generation (0: the
 * thread's implicit task). */
uint64_t tr_omp_task_create(struct tr_thread *t, uint64_t now);
void tr_omp_task_switch(struct tr_thread *t, uint64_t now, uint64_t task);
void tr_omp_task_complete(struct tr_thread *t, uint64_t now, uint64_t task);
static inline uint64_t tr_omp_implicit_task(const struct tr_thread *t)
{
	return (uint64_t)t->index << 32;
}

/* Late ends of teams. libomp reports the end of a worker's implicit
 * barrier and implicit task only when the worker is released for the next
 * region; libgomp's workers wait at the end of a region inside the runtime.
 * The worker is really done when the team's master passed the join: the
 * master publishes that time per region (seqlock-style ring per location
 * index, indexed by the master's region number) and the worker dates its
 * late records with it. Not hot beyond a few loads and stores. */
#define TR_OMP_MAX_THREADS 1024
/* per-thread entries of the tables indexed by location index: own cache lines */
#define TR_OMP_LINE __attribute__((aligned(64)))
/* Number of a new region that t starts as master (never 0; 0 when t's
 * index is beyond the table: its joins are not published). */
uint32_t tr_omp_region_seq(const struct tr_thread *t);
/* The master t passed the join of its region `seq` at `now`. */
void tr_omp_region_joined(const struct tr_thread *t, uint32_t seq, uint64_t now);
/* Time of t's late end of the team of region (master, seq), t's barrier
 * having begun at `since`: the master's join, not before what t recorded
 * since; 0 when not published (read the clock then). */
uint64_t tr_omp_join_time(const struct tr_thread *t, uint32_t master, uint32_t seq, uint64_t since);
/* Close a team at `end` whose regions are those above depth `base`: on t's
 * own thread (own) the regions are left and ThreadTeamEnd written; at exit
 * from another thread (the core closed t's regions already) only the
 * ThreadTeamEnd, not before t's last record. */
void tr_omp_team_close(struct tr_thread *t, uint32_t base, uint64_t end, int own);

/* openmp_ompt.c: close the OMPT teams t is still in (thread_fini hook). */
void tr_omp_ompt_thread_fini(struct tr_thread *t);
void tr_omp_ompt_fork_child(void);
/* openmp_gomp.c: the team a libgomp worker waits to end (thread_fini hook),
 * and at shut-down one "tracer:" line on what libgomp tracing misses. */
void tr_omp_gomp_thread_fini(struct tr_thread *t);
void tr_omp_gomp_fork_child(void);
void tr_omp_gomp_fini(void);

/* Number of distinct OpenMP locks seen (for the debug summary). */
uint32_t tr_omp_lock_count(void);

#endif /* TR_OPENMP_INT_H */
