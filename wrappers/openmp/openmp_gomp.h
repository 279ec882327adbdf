/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_gomp.h - shared by the libgomp front end: openmp_gomp.c (parallel
 * regions, teams, work-sharing, barriers) and openmp_gomp_sync.c (critical,
 * atomic, ordered, omp locks, tasks, taskwait/taskgroup/taskloop). Not a
 * public header.
 */
#ifndef TR_OPENMP_GOMP_H
#define TR_OPENMP_GOMP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "openmp_int.h"
#include "openmp_gomp_list.h"

typedef unsigned long long ull;
typedef void (*gomp_fn)(void *);

extern _Atomic int tr_gomp_used;      /* libgomp entry points were traced */

/* The real functions (openmp_gomp_list.h): one table, resolved all at
 * once by the core's tr_real_resolve on the first call that needs one
 * (next object after libtracer.so), else found in a libgomp loaded in a
 * local scope (dlopen'ed plugin). */
#define GOMP_IDX(fn) GOMP_I_##fn,
#define GOMP_LOOP_IDX(s) GOMP_I_GOMP_loop_##s##_start, GOMP_I_GOMP_loop_ull_##s##_start,
enum { TR_GOMP_NAMES(GOMP_IDX) TR_GOMP_LOOP_SCHEDS(GOMP_LOOP_IDX, GOMP_LOOP_IDX) GOMP_NREAL };
extern void *tr_gomp_real[GOMP_NREAL];
void *tr_gomp_resolve(int i);
static inline void *tr_gomp_real_get(int i)
{
	void *p = __atomic_load_n(&tr_gomp_real[i], __ATOMIC_ACQUIRE);
	return tr_likely(p != NULL) ? p : tr_gomp_resolve(i);
}

/* real_<fn>, typed as the wrapper declares it */
#define GOMP_REAL(ret, fn, ...) ret (*real_##fn)(__VA_ARGS__) = (ret (*)(__VA_ARGS__))tr_gomp_real_get(GOMP_I_##fn)

/* The calling thread's state when libgomp is to be traced, else NULL. */
int tr_gomp_setup(void);
static inline struct tr_thread *gomp_get(void)
{
	if (tr_unlikely(tr_omp_ompt_on))
		return NULL;
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return NULL;
	if (tr_unlikely(!tr_omp_ready) && tr_gomp_setup()) {
		tr_thread_put(t);
		return NULL;
	}
	return t;
}

/* The body of the wrappers that wait in the runtime: region `r` entered,
 * `call` (the real function) made outside the tracer, then `after` with t
 * and now set. GOMP_AROUND_T: t from gomp_get() already (not NULL). */
#define GOMP_AROUND_T(t, r, call, after)                         \
	do {                                                     \
		tr_enter(t, tr_time(), tr_omp_rgn[r]);           \
		tr_thread_put(t);                                \
		call;                                            \
		t = tr_thread_get();                             \
		if (t) {                                         \
			uint64_t now = tr_time();                \
			after;                                   \
			tr_thread_put(t);                        \
		}                                                \
	} while (0)
#define GOMP_AROUND(r, call, after)                              \
	do {                                                     \
		struct tr_thread *t = gomp_get();                \
		if (!t) {                                        \
			call;                                    \
			break;                                   \
		}                                                \
		GOMP_AROUND_T(t, r, call, after);                \
	} while (0)
/* Region `r` around the call. */
#define GOMP_REGION_CALL(r, call) GOMP_AROUND(r, call, tr_leave(t, now, tr_omp_rgn[r]))

/* openmp_gomp_sync.c: tasks created but not followed (too much data). */
uint64_t tr_gomp_untraced_tasks(void);

#endif /* TR_OPENMP_GOMP_H */
