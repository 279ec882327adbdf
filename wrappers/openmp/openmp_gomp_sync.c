/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_gomp_sync.c - libgomp (GCC's OpenMP runtime, no OMPT in GCC 12):
 * the synchronization and task entry points (parallel regions, teams,
 * work-sharing and barriers: openmp_gomp.c).
 *
 *   GOMP_critical[_name]_start/_end, GOMP_atomic_start/_end,
 *   GOMP_ordered_start/_end, omp_[un]set[_nest]_lock, omp_test[_nest]_lock
 *   (and their Fortran bindings omp_*_lock_)
 *       lock records as for OMPT (critical: one lock per name)
 *   GOMP_task                            ThreadTaskCreate; the task runs a
 *       trampoline (ThreadTaskSwitch, the task, ThreadTaskComplete, switch
 *       back): its argument block gets a header, built on the stack (tasks
 *       with more than 64 KiB of firstprivate data are created untraced).
 *       Untied tasks are tied in libgomp: the same records.
 *   GOMP_taskwait[_depend], GOMP_taskgroup_start/_end, GOMP_taskyield,
 *   GOMP_cancel, GOMP_cancellation_point  regions
 *   GOMP_taskloop[_ull]                  "omp taskloop" around the call (and
 *       "omp taskgroup" inside, as libomp reports it, unless nogroup); its
 *       tasks (made inside libgomp) through a pool of trampolines (below)
 *
 * Nothing here allocates or locks; the real functions are resolved once.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "openmp_gomp.h"

static _Atomic uint64_t gomp_untraced_tasks;

uint64_t tr_gomp_untraced_tasks(void)
{
	return atomic_load(&gomp_untraced_tasks);
}

/* ---- critical, atomic, ordered, locks ---- */

/* Region `r` (or none: -1) while waiting, lock records when held; the
 * region is left at once (`leave`) or at the release. */
static void gomp_acquired(struct tr_thread *t, int r, uint64_t key, int leave, uint64_t now)
{
	now = tr_omp_lock_acquired(t, now, key);
	if (r >= 0 && leave)
		tr_leave(t, now, tr_omp_rgn[r]);
}

#define GOMP_LOCK_START(fn, r, key, spans) GOMP_AROUND(r, fn, gomp_acquired(t, r, key, !(spans), now))

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
			/* the clock is read once held (and again if     \
			 * handed over): orders stay in time order */     \
			uint64_t now = tr_time();                         \
			tr_enter(t, now, tr_omp_rgn[r]);                  \
			gomp_acquired(t, r, (uintptr_t)l, 1, now);        \
			tr_thread_put(t);                                 \
			return;                                           \
		}                                                         \
		GOMP_AROUND_T(t, r, real_##fn(l), gomp_acquired(t, r, (uintptr_t)l, 1, now)); \
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

/* Run task `id`: fn(data) between the switch to it and its completion. */
static void gomp_task_run(uint64_t id, gomp_fn fn, void *data)
{
	uint64_t prev = gomp_cur_task;
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_omp_task_switch(t, tr_time(), id);
		tr_thread_put(t);
	}
	gomp_cur_task = id;
	fn(data);
	gomp_cur_task = prev;
	t = tr_thread_get();
	if (t) {
		uint64_t now = tr_time();
		tr_omp_task_complete(t, now, id);
		tr_omp_task_switch(t, now, prev ? prev : tr_omp_implicit_task(t));
		tr_thread_put(t);
	}
}

static void gomp_task_fn(void *arg)
{
	struct gomp_task_hdr *h = arg;
	gomp_task_run(h->id, h->fn, (char *)arg + h->off);
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

/* cancel and cancellation point constructs (they act only with
 * OMP_CANCELLATION=true; a cancelled thread then jumps to the end of the
 * construct, after the call returned) */
TR_EXPORT bool GOMP_cancel(int which, bool do_cancel)
{
	GOMP_REAL(bool, GOMP_cancel, int, bool);
	bool ret = false;
	GOMP_REGION_CALL(TR_OMP_CANCEL, ret = real_GOMP_cancel(which, do_cancel));
	return ret;
}

TR_EXPORT bool GOMP_cancellation_point(int which)
{
	GOMP_REAL(bool, GOMP_cancellation_point, int);
	bool ret = false;
	GOMP_REGION_CALL(TR_OMP_CANCELLATION_POINT, ret = real_GOMP_cancellation_point(which));
	return ret;
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

TR_EXPORT void GOMP_taskwait_depend(void **depend)
{
	GOMP_REAL(void, GOMP_taskwait_depend, void **);
	GOMP_REGION_CALL(TR_OMP_TASKWAIT, real_GOMP_taskwait_depend(depend));
}

/* ---- taskloop ----
 * "omp taskloop" around the call, with "omp taskgroup" inside unless
 * nogroup (libgomp waits for the tasks in an implicit taskgroup). libgomp
 * makes the tasks itself, each argument block starting with the task's
 * iteration range (no room for a header): a taskloop with a group gets one
 * of GOMP_TL_SLOTS trampolines, bound to a slot holding the program's
 * function and the tasks' ids, for the time of the call (its tasks are done
 * when it returns). The tasks are created (ThreadTaskCreate) at the call:
 * their number is libgomp's (iterations split by num_tasks, grainsize or the
 * team size). Tasks beyond it, nogroup taskloops and taskloops finding no
 * free slot run untraced (counted). */
#define GOMP_TASK_FLAG_GRAINSIZE (1u << 9)
#define GOMP_TASK_FLAG_NOGROUP (1u << 11)
#define GOMP_TASK_FLAG_STRICT (1u << 14)
#define GOMP_TL_SLOTS 16
#define GOMP_TL_MAX_TASKS (1ul << 20)

static struct TR_OMP_LINE gomp_tl {
	_Atomic int busy;
	gomp_fn fn;
	uint64_t first;              /* id of the first task */
	unsigned long ntasks;
	_Atomic unsigned long started;
} gomp_tl[GOMP_TL_SLOTS];

static void gomp_tl_run(struct gomp_tl *s, void *arg)
{
	unsigned long n = atomic_fetch_add_explicit(&s->started, 1, memory_order_relaxed);
	if (n < s->ntasks)
		gomp_task_run(s->first + n, s->fn, arg);
	else
		s->fn(arg);
}

#define GOMP_TL_FN(i) static void gomp_tl_fn##i(void *a) { gomp_tl_run(&gomp_tl[i], a); }
GOMP_TL_FN(0) GOMP_TL_FN(1) GOMP_TL_FN(2) GOMP_TL_FN(3) GOMP_TL_FN(4) GOMP_TL_FN(5) GOMP_TL_FN(6)
GOMP_TL_FN(7) GOMP_TL_FN(8) GOMP_TL_FN(9) GOMP_TL_FN(10) GOMP_TL_FN(11) GOMP_TL_FN(12)
GOMP_TL_FN(13) GOMP_TL_FN(14) GOMP_TL_FN(15)
static const gomp_fn gomp_tl_fns[GOMP_TL_SLOTS] = {
	gomp_tl_fn0, gomp_tl_fn1, gomp_tl_fn2, gomp_tl_fn3, gomp_tl_fn4, gomp_tl_fn5,
	gomp_tl_fn6, gomp_tl_fn7, gomp_tl_fn8, gomp_tl_fn9, gomp_tl_fn10, gomp_tl_fn11,
	gomp_tl_fn12, gomp_tl_fn13, gomp_tl_fn14, gomp_tl_fn15,
};

/* The number of tasks libgomp makes for n iterations. */
static unsigned long gomp_tl_ntasks(unsigned long long n, unsigned flags, unsigned long num_tasks)
{
	if (!n)
		return 0;
	if (flags & GOMP_TASK_FLAG_GRAINSIZE) {
		unsigned long long nt = num_tasks ? n / num_tasks : 0;
		if (!num_tasks)
			return 0;
		if (flags & GOMP_TASK_FLAG_STRICT)
			return (unsigned long)(nt + (n % num_tasks != 0));
		return nt <= 1 ? 1 : (unsigned long)nt;
	}
	if (!num_tasks) {
		GOMP_REAL(int, omp_get_num_threads, void);
		num_tasks = real_omp_get_num_threads ? (unsigned long)real_omp_get_num_threads() : 0;
		if (!num_tasks)
			return 0;
	}
	return num_tasks >= n ? (unsigned long)n : num_tasks;
}

/* Before the call: the regions, the tasks created, the trampoline to
 * pass (fn itself when the tasks are not followed); *slot: the slot taken
 * (-1: none), *traced: regions entered. */
static gomp_fn gomp_taskloop_begin(gomp_fn fn, unsigned flags, unsigned long long n, unsigned long num_tasks,
				   int *slot, int *traced)
{
	*slot = -1;
	*traced = 0;
	struct tr_thread *t = gomp_get();
	if (!t)
		return fn;
	*traced = 1;
	uint64_t now = tr_time();
	tr_enter(t, now, tr_omp_rgn[TR_OMP_TASKLOOP]);
	if (!(flags & GOMP_TASK_FLAG_NOGROUP))
		tr_enter(t, now, tr_omp_rgn[TR_OMP_TASKGROUP]);
	unsigned long nt = gomp_tl_ntasks(n, flags, num_tasks);
	for (int i = 0; i < GOMP_TL_SLOTS && nt && nt <= GOMP_TL_MAX_TASKS && !(flags & GOMP_TASK_FLAG_NOGROUP); i++) {
		int expect = 0;
		if (!atomic_compare_exchange_strong(&gomp_tl[i].busy, &expect, 1))
			continue;
		struct gomp_tl *s = &gomp_tl[i];
		s->fn = fn;
		s->ntasks = nt;
		atomic_store_explicit(&s->started, 0, memory_order_relaxed);
		s->first = tr_omp_task_create(t, now);
		for (unsigned long k = 1; k < nt; k++)
			tr_omp_task_create(t, now);
		*slot = i;
		fn = gomp_tl_fns[i];
		break;
	}
	if (*slot < 0 && nt)
		atomic_fetch_add_explicit(&gomp_untraced_tasks, nt, memory_order_relaxed);
	tr_thread_put(t);
	return fn;
}

static void gomp_taskloop_end(unsigned flags, int slot)
{
	if (slot >= 0)    /* the group's tasks are done */
		atomic_store_explicit(&gomp_tl[slot].busy, 0, memory_order_release);
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	uint64_t now = tr_time();
	if (!(flags & GOMP_TASK_FLAG_NOGROUP))
		tr_leave(t, now, tr_omp_rgn[TR_OMP_TASKGROUP]);
	tr_leave(t, now, tr_omp_rgn[TR_OMP_TASKLOOP]);
	tr_thread_put(t);
}

/* Iterations of the loop: n (as libgomp counts them; 0: none). */
static unsigned long long gomp_tl_iters(long long start, long long end, long long step)
{
	if (step > 0)
		return start < end ? (unsigned long long)(end - start + step - 1) / (unsigned long long)step : 0;
	if (step < 0)
		return start > end ? (unsigned long long)(start - end - step - 1) / (unsigned long long)-step : 0;
	return 0;
}

static unsigned long long gomp_tl_iters_ull(unsigned flags, ull start, ull end, ull step)
{
	if (flags & (1u << 8))    /* GOMP_TASK_FLAG_UP */
		return start < end && step ? (end - start + step - 1) / step : 0;
	return start > end && step ? (start - end - step - 1) / -step : 0;
}

#define GOMP_TASKLOOP(fn, T, iters)                                                                \
	TR_EXPORT void fn(gomp_fn f, void *data, void (*cpyfn)(void *, void *), long arg_size,     \
			  long arg_align, unsigned flags, unsigned long num_tasks, int priority, T start, \
			  T end, T step)                                                           \
	{                                                                                          \
		GOMP_REAL(void, fn, gomp_fn, void *, void (*)(void *, void *), long, long, unsigned, \
			  unsigned long, int, T, T, T);                                            \
		int slot, traced;                                                                  \
		gomp_fn tf = gomp_taskloop_begin(f, flags, iters, num_tasks, &slot, &traced);     \
		real_##fn(tf, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step); \
		if (traced)                                                                        \
			gomp_taskloop_end(flags, slot);                                            \
	}
GOMP_TASKLOOP(GOMP_taskloop, long, gomp_tl_iters(start, end, step))
GOMP_TASKLOOP(GOMP_taskloop_ull, ull, gomp_tl_iters_ull(flags, start, end, step))
