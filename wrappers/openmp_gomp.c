/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_gomp.c - GCC's OpenMP runtime (libgomp, which has no OMPT in GCC
 * 12): the GOMP_* entry points gcc emits, and the omp_*lock functions, are
 * interposed to give the records of openmp_int.h.
 *
 *   GOMP_parallel[_loop_*|_sections], GOMP_parallel_start/_end
 *       ThreadFork .. ThreadJoin around the real call; the outlined function
 *       is replaced by a trampoline that records ThreadTeamBegin + "omp
 *       parallel" .. ThreadTeamEnd on every thread of the team (combined
 *       constructs also enter "omp for" / "omp sections"). On the encountering
 *       thread the time from the end of its part to the join is the region's
 *       "omp implicit barrier".
 *   GOMP_barrier                         "omp barrier"
 *   GOMP_loop_*_start .. GOMP_loop_end*  "omp for" (GOMP_loop_end and
 *   GOMP_sections_start .. _end*         "omp sections"   _sections_end:
 *                                        "omp implicit barrier" inside)
 *   GOMP_single_start                    "omp single" (the call only)
 *   GOMP_critical[_name]_start/_end, GOMP_atomic_start/_end,
 *   GOMP_ordered_start/_end, omp_[un]set[_nest]_lock, omp_test[_nest]_lock
 *   (and their Fortran bindings omp_*_lock_)
 *       lock records as for OMPT (critical: one lock per name)
 *   GOMP_task                            ThreadTaskCreate; the task runs a
 *       trampoline (ThreadTaskSwitch, the task, ThreadTaskComplete, switch
 *       back): its argument block gets a header, built on the stack (tasks
 *       with more than 64 KiB of firstprivate data are created untraced)
 *   GOMP_taskwait, GOMP_taskgroup_start/_end, GOMP_taskyield   regions
 *
 * Not seen (no runtime call, or not interposed): the implicit barrier of
 * worker threads at the end of a parallel region, loops with
 * schedule(static) and master (inlined by gcc), taskloop tasks, parallel
 * regions with task reductions (GOMP_parallel_reductions), doacross loops,
 * cancellation. One "tracer:" line at exit says so when libgomp was traced.
 *
 * With libomp (which exports GOMP_* and omp_* too) the OMPT front end
 * records everything and these wrappers pass through. Nothing here
 * allocates or locks; the real functions are resolved once (dlsym).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "openmp_int.h"

typedef unsigned long long ull;
typedef void (*gomp_fn)(void *);

static _Atomic int gomp_used;          /* libgomp entry points were traced */
static _Atomic uint64_t gomp_untraced_tasks;

/* The real function: next object after libtracer.so, else libgomp loaded
 * in a local scope (dlopen'ed plugin). */
static void *gomp_sym(const char *name)
{
	void *p = tr_dlsym_next(name);
	if (!p) {
		void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (h)
			p = dlsym(h, name);
	}
	if (!p)
		tr_log_error("OpenMP: %s not found after libtracer.so", name);
	return p;
}

#define GOMP_REAL(ret, fn, ...)                                     \
	static ret (*real_##fn)(__VA_ARGS__);                       \
	if (tr_unlikely(!real_##fn))                                \
	real_##fn = (ret (*)(__VA_ARGS__))gomp_sym(#fn)

/* The calling thread's state when libgomp is to be traced, else NULL. */
static inline struct tr_thread *gomp_get(void)
{
	if (tr_unlikely(tr_omp_ompt_on))
		return NULL;
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return NULL;
	if (tr_unlikely(!tr_omp_ready)) {
		if (tr_omp_setup()) {
			tr_thread_put(t);
			return NULL;
		}
		atomic_store_explicit(&gomp_used, 1, memory_order_relaxed);
	}
	return t;
}

/* Enter/Leave one region around nothing else: the common wrapper bodies. */
#define GOMP_REGION_CALL(r, call)                                     \
	do {                                                          \
		struct tr_thread *t = gomp_get();                     \
		if (!t) {                                             \
			call;                                         \
			break;                                        \
		}                                                     \
		tr_enter(t, tr_time(), tr_omp_rgn[r]);                \
		tr_thread_put(t);                                     \
		call;                                                 \
		t = tr_thread_get();                                  \
		if (t) {                                              \
			tr_leave(t, tr_time(), tr_omp_rgn[r]);        \
			tr_thread_put(t);                             \
		}                                                     \
	} while (0)

/* ---- work-sharing stack: the end calls leave only what the start entered ---- */

#define GOMP_WS_MAX 32
static TR_TLS uint8_t gomp_ws[GOMP_WS_MAX];   /* region index + 1 */
static TR_TLS uint32_t gomp_nws;

static void gomp_ws_begin(struct tr_thread *t, int r)
{
	if (gomp_nws < GOMP_WS_MAX)
		gomp_ws[gomp_nws] = (uint8_t)(r + 1);
	gomp_nws++;
	tr_enter(t, tr_time(), tr_omp_rgn[r]);
}

/* Leave the innermost work-sharing region if it is `r`. */
static void gomp_ws_end(struct tr_thread *t, int r, uint64_t now)
{
	if (!gomp_nws || (gomp_nws <= GOMP_WS_MAX && gomp_ws[gomp_nws - 1] != r + 1))
		return;
	gomp_nws--;
	tr_leave(t, now, tr_omp_rgn[r]);
}

/* ---- parallel regions ---- */

struct gomp_par {
	gomp_fn fn;
	void *data;
	struct tr_thread *master;   /* the encountering thread */
	int ws;                     /* combined construct: region to enter, or -1 */
};

static TR_TLS int gomp_named;     /* this thread's name was decided */

static void gomp_team_fn(void *arg)
{
	struct gomp_par *p = arg;
	struct tr_thread *t = tr_thread_get();
	if (t) {
		if (tr_unlikely(!gomp_named)) {
			gomp_named = 1;
			GOMP_REAL(int, omp_get_thread_num, void);
			if (t != p->master && real_omp_get_thread_num && real_omp_get_thread_num() != 0)
				tr_omp_name_worker(t);   /* a thread libgomp created */
		}
		tr_omp_team_begin(t, tr_time());
		if (p->ws >= 0)
			gomp_ws_begin(t, p->ws);
		tr_thread_put(t);
	}
	p->fn(p->data);
	t = tr_thread_get();
	if (t) {
		uint64_t now = tr_time();
		if (p->ws >= 0)
			gomp_ws_end(t, p->ws, now);
		if (t == p->master)     /* from here: the join, ended in gomp_par_end */
			tr_enter(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
		else
			tr_omp_team_end(t, now);
		tr_thread_put(t);
	}
}

/* Before the real call: fills p; returns the trampoline's argument or NULL
 * (not traced: call the real function with the original arguments). */
static struct gomp_par *gomp_par_begin(struct gomp_par *p, gomp_fn fn, void *data, unsigned n, int ws)
{
	struct tr_thread *t = gomp_get();
	if (!t)
		return NULL;
	p->fn = fn;
	p->data = data;
	p->master = t;
	p->ws = ws;
	if (!n) {       /* no num_threads clause: the default team size, as OMPT reports it */
		GOMP_REAL(int, omp_get_max_threads, void);
		if (real_omp_get_max_threads)
			n = (unsigned)real_omp_get_max_threads();
	}
	tr_omp_fork(t, tr_time(), n);
	tr_thread_put(t);
	return p;
}

static void gomp_par_end(void)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	uint64_t now = tr_time();
	tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
	tr_omp_team_end(t, now);
	tr_omp_join(t, now);
	tr_thread_put(t);
}

TR_EXPORT void GOMP_parallel(gomp_fn fn, void *data, unsigned n, unsigned flags)
{
	GOMP_REAL(void, GOMP_parallel, gomp_fn, void *, unsigned, unsigned);
	struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, -1);
	if (!p) {
		real_GOMP_parallel(fn, data, n, flags);
		return;
	}
	real_GOMP_parallel(gomp_team_fn, p, n, flags);
	gomp_par_end();
}

TR_EXPORT void GOMP_parallel_sections(gomp_fn fn, void *data, unsigned n, unsigned count, unsigned flags)
{
	GOMP_REAL(void, GOMP_parallel_sections, gomp_fn, void *, unsigned, unsigned, unsigned);
	struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_SECTIONS);
	if (!p) {
		real_GOMP_parallel_sections(fn, data, n, count, flags);
		return;
	}
	real_GOMP_parallel_sections(gomp_team_fn, p, n, count, flags);
	gomp_par_end();
}

#define GOMP_PAR_LOOP(name)                                                                      \
	TR_EXPORT void GOMP_parallel_loop_##name(gomp_fn fn, void *data, unsigned n, long start,  \
						 long end, long incr, long chunk, unsigned flags) \
	{                                                                                        \
		GOMP_REAL(void, GOMP_parallel_loop_##name, gomp_fn, void *, unsigned, long, long, \
			  long, long, unsigned);                                                 \
		struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_LOOP);        \
		if (!p) {                                                                        \
			real_GOMP_parallel_loop_##name(fn, data, n, start, end, incr, chunk, flags); \
			return;                                                                  \
		}                                                                                \
		real_GOMP_parallel_loop_##name(gomp_team_fn, p, n, start, end, incr, chunk, flags); \
		gomp_par_end();                                                                  \
	}
#define GOMP_PAR_LOOP_RT(name)                                                                   \
	TR_EXPORT void GOMP_parallel_loop_##name(gomp_fn fn, void *data, unsigned n, long start,  \
						 long end, long incr, unsigned flags)             \
	{                                                                                        \
		GOMP_REAL(void, GOMP_parallel_loop_##name, gomp_fn, void *, unsigned, long, long, \
			  long, unsigned);                                                       \
		struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_LOOP);        \
		if (!p) {                                                                        \
			real_GOMP_parallel_loop_##name(fn, data, n, start, end, incr, flags);    \
			return;                                                                  \
		}                                                                                \
		real_GOMP_parallel_loop_##name(gomp_team_fn, p, n, start, end, incr, flags);     \
		gomp_par_end();                                                                  \
	}
GOMP_PAR_LOOP(static)
GOMP_PAR_LOOP(dynamic)
GOMP_PAR_LOOP(guided)
GOMP_PAR_LOOP(nonmonotonic_dynamic)
GOMP_PAR_LOOP(nonmonotonic_guided)
GOMP_PAR_LOOP_RT(runtime)
GOMP_PAR_LOOP_RT(nonmonotonic_runtime)
GOMP_PAR_LOOP_RT(maybe_nonmonotonic_runtime)

/* Old ABI (GCC < 4.9): start, the encountering thread runs fn itself, end.
 * The trampoline's argument must live until the end: per-thread stack. */
#define GOMP_OLD_MAX 16
static TR_TLS struct gomp_par gomp_old[GOMP_OLD_MAX];
static TR_TLS uint32_t gomp_nold;      /* entries, including untraced ones */
static TR_TLS uint32_t gomp_old_traced;  /* bit i: entry i traced */

TR_EXPORT void GOMP_parallel_start(gomp_fn fn, void *data, unsigned n)
{
	GOMP_REAL(void, GOMP_parallel_start, gomp_fn, void *, unsigned);
	uint32_t i = gomp_nold++;
	struct gomp_par *p = i < GOMP_OLD_MAX ? gomp_par_begin(&gomp_old[i], fn, data, n, -1) : NULL;
	if (!p) {
		if (i < GOMP_OLD_MAX)
			gomp_old_traced &= ~(1u << i);
		real_GOMP_parallel_start(fn, data, n);
		return;
	}
	gomp_old_traced |= 1u << i;
	real_GOMP_parallel_start(gomp_team_fn, p, n);
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_omp_team_begin(t, tr_time());
		tr_thread_put(t);
	}
}

TR_EXPORT void GOMP_parallel_end(void)
{
	GOMP_REAL(void, GOMP_parallel_end, void);
	uint32_t i = gomp_nold ? --gomp_nold : 0;
	int traced = i < GOMP_OLD_MAX && (gomp_old_traced >> i & 1);
	struct tr_thread *t = traced ? tr_thread_get() : NULL;
	if (t) {
		tr_enter(t, tr_time(), tr_omp_rgn[TR_OMP_IBARRIER]);
		tr_thread_put(t);
	}
	real_GOMP_parallel_end();
	if (traced)
		gomp_par_end();
}

/* ---- barriers, work-sharing ---- */

TR_EXPORT void GOMP_barrier(void)
{
	GOMP_REAL(void, GOMP_barrier, void);
	GOMP_REGION_CALL(TR_OMP_BARRIER, real_GOMP_barrier());
}

TR_EXPORT bool GOMP_barrier_cancel(void)
{
	GOMP_REAL(bool, GOMP_barrier_cancel, void);
	bool ret;
	GOMP_REGION_CALL(TR_OMP_BARRIER, ret = real_GOMP_barrier_cancel());
	return ret;
}

TR_EXPORT bool GOMP_single_start(void)
{
	GOMP_REAL(bool, GOMP_single_start, void);
	bool ret;
	GOMP_REGION_CALL(TR_OMP_SINGLE, ret = real_GOMP_single_start());
	return ret;
}

static void gomp_ws_start(int r)
{
	struct tr_thread *t = gomp_get();
	if (!t)
		return;
	gomp_ws_begin(t, r);
	tr_thread_put(t);
}

#define GOMP_LOOP_CHUNK(name)                                                                     \
	TR_EXPORT bool GOMP_loop_##name##_start(long s, long e, long i, long c, long *is, long *ie) \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_##name##_start, long, long, long, long, long *, long *); \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_##name##_start(s, e, i, c, is, ie);                         \
	}
#define GOMP_LOOP_RT(name)                                                                \
	TR_EXPORT bool GOMP_loop_##name##_start(long s, long e, long i, long *is, long *ie) \
	{                                                                                 \
		GOMP_REAL(bool, GOMP_loop_##name##_start, long, long, long, long *, long *); \
		gomp_ws_start(TR_OMP_LOOP);                                               \
		return real_GOMP_loop_##name##_start(s, e, i, is, ie);                    \
	}
#define GOMP_LOOP_ULL_CHUNK(name)                                                                 \
	TR_EXPORT bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull c, ull *is,  \
						    ull *ie)                                      \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_ull_##name##_start, bool, ull, ull, ull, ull, ull *, ull *); \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_ull_##name##_start(up, s, e, i, c, is, ie);                 \
	}
#define GOMP_LOOP_ULL_RT(name)                                                                    \
	TR_EXPORT bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull *is, ull *ie) \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_ull_##name##_start, bool, ull, ull, ull, ull *, ull *);  \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_ull_##name##_start(up, s, e, i, is, ie);                    \
	}
#define GOMP_LOOP_ALL(X, XRT)                                                   \
	X(static) X(dynamic) X(guided) X(nonmonotonic_dynamic) X(nonmonotonic_guided) \
	X(ordered_static) X(ordered_dynamic) X(ordered_guided)                 \
	XRT(runtime) XRT(nonmonotonic_runtime) XRT(maybe_nonmonotonic_runtime) \
	XRT(ordered_runtime)
GOMP_LOOP_ALL(GOMP_LOOP_CHUNK, GOMP_LOOP_RT)
GOMP_LOOP_ALL(GOMP_LOOP_ULL_CHUNK, GOMP_LOOP_ULL_RT)

/* GCC 9+: one entry point with the schedule as an argument (reductions,
 * memory for the loop's private data). */
TR_EXPORT bool GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
			       uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_start, long, long, long, long, long, long *, long *, uintptr_t *, void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_start(s, e, i, sched, c, is, ie, red, mem);
}

TR_EXPORT bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is, long *ie,
				       uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_ordered_start, long, long, long, long, long, long *, long *, uintptr_t *,
		  void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_ordered_start(s, e, i, sched, c, is, ie, red, mem);
}

TR_EXPORT bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull c, ull *is, ull *ie,
				   uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_ull_start, bool, ull, ull, ull, long, ull, ull *, ull *, uintptr_t *,
		  void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_ull_start(up, s, e, i, sched, c, is, ie, red, mem);
}

TR_EXPORT unsigned GOMP_sections_start(unsigned count)
{
	GOMP_REAL(unsigned, GOMP_sections_start, unsigned);
	gomp_ws_start(TR_OMP_SECTIONS);
	return real_GOMP_sections_start(count);
}

TR_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *red, void **mem)
{
	GOMP_REAL(unsigned, GOMP_sections2_start, unsigned, uintptr_t *, void **);
	gomp_ws_start(TR_OMP_SECTIONS);
	return real_GOMP_sections2_start(count, red, mem);
}

/* The end of a work-sharing construct: `barrier` when the call waits for
 * the team (the construct's implicit barrier). */
#define GOMP_WS_END(ret, fn, r, barrier)                                      \
	TR_EXPORT ret fn(void)                                                \
	{                                                                     \
		GOMP_REAL(ret, fn, void);                                     \
		struct tr_thread *t = gomp_get();                             \
		if (!t)                                                       \
			return real_##fn();                                   \
		if (barrier)                                                  \
			tr_enter(t, tr_time(), tr_omp_rgn[TR_OMP_IBARRIER]);  \
		tr_thread_put(t);                                             \
		ret r_ = real_##fn();                                         \
		t = tr_thread_get();                                          \
		if (t) {                                                      \
			uint64_t now = tr_time();                             \
			if (barrier)                                          \
				tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]); \
			gomp_ws_end(t, r, now);                               \
			tr_thread_put(t);                                     \
		}                                                             \
		return r_;                                                    \
	}
/* void functions return through a dummy int */
#define GOMP_WS_END_VOID(fn, r, barrier)                                      \
	static int gomp_##fn##_int(void)                                      \
	{                                                                     \
		GOMP_REAL(void, fn, void);                                    \
		real_##fn();                                                  \
		return 0;                                                     \
	}                                                                     \
	TR_EXPORT void fn(void)                                               \
	{                                                                     \
		struct tr_thread *t = gomp_get();                             \
		if (!t) {                                                     \
			gomp_##fn##_int();                                    \
			return;                                               \
		}                                                             \
		if (barrier)                                                  \
			tr_enter(t, tr_time(), tr_omp_rgn[TR_OMP_IBARRIER]);  \
		tr_thread_put(t);                                             \
		gomp_##fn##_int();                                            \
		t = tr_thread_get();                                          \
		if (t) {                                                      \
			uint64_t now = tr_time();                             \
			if (barrier)                                          \
				tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]); \
			gomp_ws_end(t, r, now);                               \
			tr_thread_put(t);                                     \
		}                                                             \
	}
GOMP_WS_END_VOID(GOMP_loop_end, TR_OMP_LOOP, 1)
GOMP_WS_END_VOID(GOMP_loop_end_nowait, TR_OMP_LOOP, 0)
GOMP_WS_END(bool, GOMP_loop_end_cancel, TR_OMP_LOOP, 1)
GOMP_WS_END_VOID(GOMP_sections_end, TR_OMP_SECTIONS, 1)
GOMP_WS_END_VOID(GOMP_sections_end_nowait, TR_OMP_SECTIONS, 0)
GOMP_WS_END(bool, GOMP_sections_end_cancel, TR_OMP_SECTIONS, 1)

/* ---- critical, atomic, ordered, locks ---- */

/* Region `r` (or none: -1) while waiting, lock records when held; the
 * region is left at once (`leave`) or at the release. */
static void gomp_acquired(struct tr_thread *t, int r, uint64_t key, int leave, uint64_t now)
{
	tr_omp_lock_acquired(t, now, key);
	if (r >= 0 && leave)
		tr_leave(t, now, tr_omp_rgn[r]);
}

#define GOMP_LOCK_START(fn, r, key, spans)                       \
	do {                                                     \
		struct tr_thread *t = gomp_get();                \
		if (!t) {                                        \
			fn;                                      \
			break;                                   \
		}                                                \
		tr_enter(t, tr_time(), tr_omp_rgn[r]);           \
		tr_thread_put(t);                                \
		fn;                                              \
		t = tr_thread_get();                             \
		if (t) {                                         \
			gomp_acquired(t, r, key, !(spans), tr_time());      \
			tr_thread_put(t);                        \
		}                                                \
	} while (0)

#define GOMP_LOCK_END(fn, r, key, spans)                         \
	do {                                                     \
		struct tr_thread *t = gomp_get();                \
		if (!t) {                                        \
			fn;                                      \
			break;                                   \
		}                                                \
		uint64_t now = tr_time();                        \
		tr_omp_lock_released(t, now, key);               \
		if (spans)                                       \
			tr_leave(t, now, tr_omp_rgn[r]);         \
		tr_thread_put(t);                                \
		fn;                                              \
	} while (0)

/* (wrapper, START or END, parameters, their types, arguments, region, lock key,
 * region spans the hold). omp_lock_t and omp_nest_lock_t are opaque here:
 * only their address counts. */
#define GOMP_LOCKS(X)                                                                              \
	X(GOMP_critical_start, START, (void), (void), (), TR_OMP_CRITICAL, TR_OMP_KEY_CRITICAL, 1) \
	X(GOMP_critical_end, END, (void), (void), (), TR_OMP_CRITICAL, TR_OMP_KEY_CRITICAL, 1)     \
	X(GOMP_critical_name_start, START, (void **p), (void **), (p), TR_OMP_CRITICAL, (uintptr_t)p, 1) \
	X(GOMP_critical_name_end, END, (void **p), (void **), (p), TR_OMP_CRITICAL, (uintptr_t)p, 1) \
	X(GOMP_atomic_start, START, (void), (void), (), TR_OMP_ATOMIC, TR_OMP_KEY_ATOMIC, 1)       \
	X(GOMP_atomic_end, END, (void), (void), (), TR_OMP_ATOMIC, TR_OMP_KEY_ATOMIC, 1)           \
	X(GOMP_ordered_start, START, (void), (void), (), TR_OMP_ORDERED, TR_OMP_KEY_ORDERED, 1)    \
	X(GOMP_ordered_end, END, (void), (void), (), TR_OMP_ORDERED, TR_OMP_KEY_ORDERED, 1)        \
	X(omp_unset_lock, END, (void *l), (void *), (l), TR_OMP_SET_LOCK, (uintptr_t)l, 0)         \
	X(omp_unset_nest_lock, END, (void *l), (void *), (l), TR_OMP_SET_NEST_LOCK, (uintptr_t)l, 0) \
	X(omp_unset_lock_, END, (void *l), (void *), (l), TR_OMP_SET_LOCK, (uintptr_t)l, 0)        \
	X(omp_unset_nest_lock_, END, (void *l), (void *), (l), TR_OMP_SET_NEST_LOCK, (uintptr_t)l, 0)
#define GOMP_UNPAREN(...) __VA_ARGS__
#define GOMP_LOCK_WRAP(fn, which, decl, types, args, r, key, spans) \
	TR_EXPORT void fn decl                                      \
	{                                                           \
		GOMP_REAL(void, fn, GOMP_UNPAREN types);            \
		GOMP_LOCK_##which(real_##fn args, r, key, spans);   \
	}
GOMP_LOCKS(GOMP_LOCK_WRAP)

/* omp_set_lock / omp_set_nest_lock try the lock first (the test function
 * has the same effect when it succeeds): a lock taken at once costs one
 * clock read, Enter/ThreadAcquireLock/Leave at one timestamp. */
#define GOMP_SET_LOCK(fn, test, r)                                        \
	TR_EXPORT void fn(void *l)                                        \
	{                                                                 \
		GOMP_REAL(void, fn, void *);                              \
		GOMP_REAL(int, test, void *);                             \
		struct tr_thread *t = gomp_get();                         \
		if (!t) {                                                 \
			real_##fn(l);                                     \
			return;                                           \
		}                                                         \
		if (real_##test && real_##test(l) > 0) {                  \
			/* the clock is read once held: the acquisition  \
			 * orders stay in time order */                   \
			uint64_t now = tr_time();                         \
			tr_enter(t, now, tr_omp_rgn[r]);                  \
			gomp_acquired(t, r, (uintptr_t)l, 1, now);        \
			tr_thread_put(t);                                 \
			return;                                           \
		}                                                         \
		tr_enter(t, tr_time(), tr_omp_rgn[r]);                    \
		tr_thread_put(t);                                         \
		real_##fn(l);                                             \
		t = tr_thread_get();                                      \
		if (t) {                                                  \
			gomp_acquired(t, r, (uintptr_t)l, 1, tr_time());  \
			tr_thread_put(t);                                 \
		}                                                         \
	}
GOMP_SET_LOCK(omp_set_lock, omp_test_lock, TR_OMP_SET_LOCK)
GOMP_SET_LOCK(omp_set_nest_lock, omp_test_nest_lock, TR_OMP_SET_NEST_LOCK)
/* Fortran bindings (gfortran's omp_lib; libgomp calls the C functions
 * internally, not through the PLT): the key is the lock variable's address */
GOMP_SET_LOCK(omp_set_lock_, omp_test_lock_, TR_OMP_SET_LOCK)
GOMP_SET_LOCK(omp_set_nest_lock_, omp_test_nest_lock_, TR_OMP_SET_NEST_LOCK)

/* omp_test_lock (1 when taken) and omp_test_nest_lock (the new nesting
 * count, > 0 when taken): the acquisition when it succeeded. */
#define GOMP_TEST_LOCK(fn)                                                  \
	TR_EXPORT int fn(void *l)                                           \
	{                                                                   \
		GOMP_REAL(int, fn, void *);                                 \
		int ret = real_##fn(l);                                     \
		if (ret > 0) {                                              \
			struct tr_thread *t = gomp_get();                   \
			if (t) {                                            \
				gomp_acquired(t, -1, (uintptr_t)l, 0, tr_time()); \
				tr_thread_put(t);                           \
			}                                                   \
		}                                                           \
		return ret;                                                 \
	}
GOMP_TEST_LOCK(omp_test_lock)
GOMP_TEST_LOCK(omp_test_nest_lock)
GOMP_TEST_LOCK(omp_test_lock_)
GOMP_TEST_LOCK(omp_test_nest_lock_)

/* ---- tasks ---- */

#define GOMP_TASK_MAX_COPY 65536

struct gomp_task_hdr {
	gomp_fn fn;
	void (*cpyfn)(void *, void *);
	void *data;             /* the original argument (what cpyfn reads) */
	uint64_t id;
	size_t off;             /* of the task's own data in the block */
};

static TR_TLS uint64_t gomp_cur_task;    /* running task (0: the implicit one) */

static void gomp_task_fn(void *arg)
{
	struct gomp_task_hdr *h = arg;
	uint64_t prev = gomp_cur_task;
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_omp_task_switch(t, tr_time(), h->id);
		tr_thread_put(t);
	}
	gomp_cur_task = h->id;
	h->fn((char *)arg + h->off);
	gomp_cur_task = prev;
	t = tr_thread_get();
	if (t) {
		uint64_t now = tr_time();
		tr_omp_task_complete(t, now, h->id);
		tr_omp_task_switch(t, now, prev ? prev : tr_omp_implicit_task(t));
		tr_thread_put(t);
	}
}

/* libgomp copies the block with cpyfn(dst, our block): the header, then
 * the program's copy function on the original argument. */
static void gomp_task_cpy(void *dst, void *src)
{
	const struct gomp_task_hdr *h = src;
	memcpy(dst, h, sizeof(*h));
	h->cpyfn((char *)dst + h->off, h->data);
}

TR_EXPORT void GOMP_task(gomp_fn fn, void *data, void (*cpyfn)(void *, void *), long arg_size,
			 long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
			 void *detach)
{
	GOMP_REAL(void, GOMP_task, gomp_fn, void *, void (*)(void *, void *), long, long, bool, unsigned,
		  void **, int, void *);
	struct tr_thread *t = gomp_get();
	if (!t) {
		real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	uint64_t id = tr_omp_task_create(t, tr_time());
	tr_thread_put(t);
	long align = arg_align > (long)alignof(max_align_t) ? arg_align : (long)alignof(max_align_t);
	size_t off = (sizeof(struct gomp_task_hdr) + (size_t)align - 1) & ~((size_t)align - 1);
	size_t copy = cpyfn ? 0 : (size_t)arg_size;
	if (arg_size < 0 || copy > GOMP_TASK_MAX_COPY || align > 4096 || (align & (align - 1))) {
		/* too big for a copy on the stack: created, but not followed */
		atomic_fetch_add_explicit(&gomp_untraced_tasks, 1, memory_order_relaxed);
		real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	char *raw = __builtin_alloca(off + copy + (size_t)align);
	char *blk = (char *)(((uintptr_t)raw + (uintptr_t)align - 1) & ~((uintptr_t)align - 1));
	struct gomp_task_hdr *h = (struct gomp_task_hdr *)blk;
	h->fn = fn;
	h->cpyfn = cpyfn;
	h->data = data;
	h->id = id;
	h->off = off;
	if (copy)
		memcpy(blk + off, data, copy);
	real_GOMP_task(gomp_task_fn, blk, cpyfn ? gomp_task_cpy : NULL, (long)(off + (size_t)arg_size), align,
		       if_clause, flags, depend, priority, detach);
}

TR_EXPORT void GOMP_taskwait(void)
{
	GOMP_REAL(void, GOMP_taskwait, void);
	GOMP_REGION_CALL(TR_OMP_TASKWAIT, real_GOMP_taskwait());
}

TR_EXPORT void GOMP_taskyield(void)
{
	GOMP_REAL(void, GOMP_taskyield, void);
	GOMP_REGION_CALL(TR_OMP_TASKYIELD, real_GOMP_taskyield());
}

TR_EXPORT void GOMP_taskgroup_start(void)
{
	GOMP_REAL(void, GOMP_taskgroup_start, void);
	struct tr_thread *t = gomp_get();
	if (t) {
		tr_enter(t, tr_time(), tr_omp_rgn[TR_OMP_TASKGROUP]);
		tr_thread_put(t);
	}
	real_GOMP_taskgroup_start();
}

TR_EXPORT void GOMP_taskgroup_end(void)
{
	GOMP_REAL(void, GOMP_taskgroup_end, void);
	real_GOMP_taskgroup_end();
	struct tr_thread *t = gomp_get();
	if (t) {
		tr_leave(t, tr_time(), tr_omp_rgn[TR_OMP_TASKGROUP]);
		tr_thread_put(t);
	}
}

/* At shut-down (openmp.c's fini): what libgomp tracing did not see. */
void tr_omp_gomp_fini(void)
{
	if (!atomic_load(&gomp_used) || tr_omp_ompt_on)
		return;
	uint64_t lost = atomic_load(&gomp_untraced_tasks);
	char extra[96] = "";
	if (lost)
		snprintf(extra, sizeof(extra), "; %llu tasks with more than %d bytes of data not followed",
			 (unsigned long long)lost, GOMP_TASK_MAX_COPY);
	tr_log_info("OpenMP (libgomp, no OMPT): not recorded: implicit barriers of worker threads, "
		    "schedule(static) loops, master, taskloop tasks, task reductions, doacross%s", extra);
}
