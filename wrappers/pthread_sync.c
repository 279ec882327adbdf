/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_sync.c - the synchronisation wrappers (pthread.c has the design):
 * mutexes, reader-writer and spin locks as ThreadAcquireLock /
 * ThreadReleaseLock (pthread_int.h), condition variables, barriers and
 * semaphores as regions. Hot path: no malloc, no lock, no stdio.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "pthread_wrap.h"

/*
 * Body of a lock call. TRY: the non-blocking attempt; when it succeeds
 * (the hot path), Enter, ThreadAcquireLock and Leave at one timestamp
 * (pth_took, which releases the guard); BLOCKING: when it does not, CALL (the real call) waits
 * between Enter and Leave. EOWNERDEAD (robust mutex) means acquired.
 */
#define PTH_ACQUIRE_BODY(R, SHARED, ADDR, TRY, CALL, BLOCKING)      \
	struct tr_thread *t = pth_get();                            \
	if (!t)                                                     \
		return CALL;                                        \
	int ret = TRY;                                              \
	uint64_t now = tr_time();                                   \
	if (tr_likely(ret == 0 || ret == EOWNERDEAD)) {             \
		pth_took(t, now, R, ADDR, SHARED);                  \
		return ret;                                         \
	}                                                           \
	{                                                           \
		tr_enter(t, now, tr_pth_rgn[R]);                    \
		if (BLOCKING) {                                     \
			ret = CALL;                                 \
			now = tr_time();                            \
		}                                                   \
		if (ret == 0 || ret == EOWNERDEAD)                  \
			now = pth_acquired(t, now, ADDR, SHARED);   \
		tr_leave(t, now, tr_pth_rgn[R]);                    \
	}                                                           \
	tr_thread_put(t);                                           \
	return ret
#define PTH_LOCK_BODY(R, SHARED, ADDR, TRY, CALL) PTH_ACQUIRE_BODY(R, SHARED, ADDR, TRY, CALL, 1)
#define PTH_TRY_BODY(R, SHARED, ADDR, CALL) PTH_ACQUIRE_BODY(R, SHARED, ADDR, CALL, CALL, 0)

/* Body of an unlock: ReleaseLock (before the real unlock, so the next
 * holder's acquisition is later in time). */
#define PTH_UNLOCK_BODY(ADDR, CALL)                                 \
	struct tr_thread *t = pth_get();                            \
	if (!t)                                                     \
		return CALL;                                        \
	pth_released(t, 0, ADDR);                                   \
	int ret = CALL;                                             \
	tr_thread_put(t);                                           \
	return ret

/* ---- mutexes ------------------------------------------------------------------------ */

TR_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (tr_unlikely(!real_pthread_mutex_lock || !real_pthread_mutex_trylock)) {
		if (tr_pth_resolving)
			return 0;   /* bootstrap: dlsym's allocator, single-threaded */
		PTH_INIT(pthread_mutex_lock);
	}
	PTH_LOCK_BODY(R_MUTEX_LOCK, 0, m, real_pthread_mutex_trylock(m), real_pthread_mutex_lock(m));
}

TR_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (tr_unlikely(!real_pthread_mutex_trylock)) {
		if (tr_pth_resolving)
			return 0;
		PTH_INIT(pthread_mutex_trylock);
	}
	PTH_TRY_BODY(R_MUTEX_TRYLOCK, 0, m, real_pthread_mutex_trylock(m));
}

TR_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (tr_unlikely(!real_pthread_mutex_unlock)) {
		if (tr_pth_resolving)
			return 0;
		PTH_INIT(pthread_mutex_unlock);
	}
	PTH_UNLOCK_BODY(m, real_pthread_mutex_unlock(m));
}

/* ---- the other lock wrappers, generated -------------------------------------------------------- */

/*
 * LOCK(fn, region, shared, the non-blocking attempt, lock type, shape),
 * TRY(fn, region, shared, lock type), UNLOCK(fn, lock type). shared: a
 * reader's acquisition. shape: the parameters after the lock, PLAIN (none),
 * TIMED (an absolute timeout), CLOCK (a clock and an absolute timeout).
 * Their prototypes are checked against pthread_list.h (pthread_int.h).
 */
#define PTH_LOCK_WRAPPERS(LOCK, TRY, UNLOCK)                                                          \
	LOCK(pthread_mutex_timedlock, MUTEX_TIMEDLOCK, 0, pthread_mutex_trylock, pthread_mutex_t, TIMED)  \
	LOCK(pthread_mutex_clocklock, MUTEX_CLOCKLOCK, 0, pthread_mutex_trylock, pthread_mutex_t, CLOCK)  \
	LOCK(pthread_rwlock_rdlock, RW_RDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, PLAIN)      \
	TRY(pthread_rwlock_tryrdlock, RW_TRYRDLOCK, 1, pthread_rwlock_t)                                  \
	LOCK(pthread_rwlock_timedrdlock, RW_TIMEDRDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, TIMED) \
	LOCK(pthread_rwlock_clockrdlock, RW_CLOCKRDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, CLOCK) \
	LOCK(pthread_rwlock_wrlock, RW_WRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, PLAIN)      \
	TRY(pthread_rwlock_trywrlock, RW_TRYWRLOCK, 0, pthread_rwlock_t)                                  \
	LOCK(pthread_rwlock_timedwrlock, RW_TIMEDWRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, TIMED) \
	LOCK(pthread_rwlock_clockwrlock, RW_CLOCKWRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, CLOCK) \
	UNLOCK(pthread_rwlock_unlock, pthread_rwlock_t)                                                   \
	LOCK(pthread_spin_lock, SPIN_LOCK, 0, pthread_spin_trylock, pthread_spinlock_t, PLAIN)            \
	TRY(pthread_spin_trylock, SPIN_TRYLOCK, 0, pthread_spinlock_t)                                    \
	UNLOCK(pthread_spin_unlock, pthread_spinlock_t)

#define PTH_PARAMS_PLAIN
#define PTH_PARAMS_TIMED , const struct timespec *ts
#define PTH_PARAMS_CLOCK , clockid_t clk, const struct timespec *ts
#define PTH_ARGS_PLAIN
#define PTH_ARGS_TIMED , ts
#define PTH_ARGS_CLOCK , clk, ts

#define PTH_GEN_LOCK(fn, REGION, shared, tryfn, type, shape)                                         \
	TR_EXPORT int fn(type *l PTH_PARAMS_##shape)                                                  \
	{                                                                                             \
		PTH_INIT(fn);   /* resolves every real function, tryfn too */                      \
		PTH_LOCK_BODY(R_##REGION, shared, (const void *)l, real_##tryfn(l),                   \
			      real_##fn(l PTH_ARGS_##shape));                                         \
	}
#define PTH_GEN_TRY(fn, REGION, shared, type)                                                        \
	TR_EXPORT int fn(type *l)                                                                     \
	{                                                                                             \
		PTH_INIT(fn);                                                                         \
		PTH_TRY_BODY(R_##REGION, shared, (const void *)l, real_##fn(l));                      \
	}
#define PTH_GEN_UNLOCK(fn, type)                                                                     \
	TR_EXPORT int fn(type *l)                                                                     \
	{                                                                                             \
		PTH_INIT(fn);                                                                         \
		PTH_UNLOCK_BODY((const void *)l, real_##fn(l));                                       \
	}

PTH_LOCK_WRAPPERS(PTH_GEN_LOCK, PTH_GEN_TRY, PTH_GEN_UNLOCK)

/* ---- cancellation points ---- */

/* The real call of a kind (plain, absolute timeout, clock and timeout). */
static inline int pth_cond_real(enum pth_kind k, pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
				const struct timespec *ts)
{
	return k == K_PLAIN ? real_pthread_cond_wait(c, m) :
	       k == K_TIMED ? real_pthread_cond_timedwait(c, m, ts) : real_pthread_cond_clockwait(c, m, clk, ts);
}

static inline int pth_sem_real(enum pth_kind k, sem_t *s, clockid_t clk, const struct timespec *ts)
{
	return k == K_PLAIN ? real_sem_wait(s) : k == K_TIMED ? real_sem_timedwait(s, ts) : real_sem_clockwait(s, clk, ts);
}

static __attribute__((noinline)) int pth_cond_call(struct pth_cu *cu, enum pth_kind k, pthread_cond_t *c,
						    pthread_mutex_t *m, clockid_t clk,
						    const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(tr_pth_cu_handler, cu);
	ret = pth_cond_real(k, c, m, clk, ts);
	pthread_cleanup_pop(0);
	return ret;
}

/* Returns the call's result; *err its errno. */
static __attribute__((noinline)) int pth_sem_call(struct pth_cu *cu, enum pth_kind k, sem_t *s,
						   clockid_t clk, const struct timespec *ts, int *err)
{
	int ret;

	pthread_cleanup_push(tr_pth_cu_handler, cu);
	ret = pth_sem_real(k, s, clk, ts);
	*err = errno;
	pthread_cleanup_pop(0);
	return ret;
}

/* ---- condition variables ----------------------------------------------------------------- */

/* Enter, release of the mutex at the same time, the wait, re-acquisition
 * (the mutex is held again on return, also after a timeout), Leave. */
static inline int pth_cond_wait(enum tr_pth_rgn r, enum pth_kind k, pthread_cond_t *c, pthread_mutex_t *m,
				clockid_t clk, const struct timespec *ts)
{
	struct tr_thread *t = pth_get();
	if (!t)
		return pth_cond_real(k, c, m, clk, ts);
	struct pth_cu cu = { t, r, NULL };
	uint64_t now = tr_time();

	tr_enter(t, now, tr_pth_rgn[r]);
	if (pth_released(t, now, m))
		cu.mutex = m;
	int ret = pth_cond_call(&cu, k, c, m, clk, ts);
	now = tr_time();
	if (cu.mutex)
		now = pth_acquired(t, now, m, 0);
	tr_leave(t, now, tr_pth_rgn[r]);
	tr_thread_put(t);
	return ret;
}

TR_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	PTH_INIT(pthread_cond_wait);
	return pth_cond_wait(R_COND_WAIT, K_PLAIN, c, m, 0, NULL);
}

TR_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	PTH_INIT(pthread_cond_timedwait);
	return pth_cond_wait(R_COND_TIMEDWAIT, K_TIMED, c, m, 0, ts);
}

TR_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
				     const struct timespec *ts)
{
	PTH_INIT(pthread_cond_clockwait);
	return pth_cond_wait(R_COND_CLOCKWAIT, K_CLOCK, c, m, clk, ts);
}

TR_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	PTH_INIT(pthread_cond_signal);
	PTH_POINT_BODY(R_COND_SIGNAL, real_pthread_cond_signal(c));
}

TR_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	PTH_INIT(pthread_cond_broadcast);
	PTH_POINT_BODY(R_COND_BROADCAST, real_pthread_cond_broadcast(c));
}

/* ---- barriers (not a cancellation point) ---------------------------------------------------- */

TR_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	PTH_INIT(pthread_barrier_wait);
	struct tr_thread *t = pth_get();
	if (!t)
		return real_pthread_barrier_wait(b);
	tr_enter(t, tr_time(), tr_pth_rgn[R_BARRIER_WAIT]);
	int ret = real_pthread_barrier_wait(b);
	tr_leave(t, tr_time(), tr_pth_rgn[R_BARRIER_WAIT]);
	tr_thread_put(t);
	return ret;
}

/* ---- semaphores (report errors through errno) --------------------------------------------- */

/*
 * sem_wait/sem_timedwait/sem_clockwait: sem_trywait first (one clock read
 * when the semaphore is available). They are cancellation points that act
 * even when they would not block (glibc tests first): test for a pending
 * cancel before the guard is taken.
 */
static inline int pth_sem_wait(enum tr_pth_rgn r, enum pth_kind k, sem_t *s, clockid_t clk,
			       const struct timespec *ts)
{
	struct tr_thread *t = NULL;

	if (atomic_load_explicit(&tr_pth_on, memory_order_relaxed)) {
		pthread_testcancel();
		t = pth_get();
	}
	if (!t)
		return pth_sem_real(k, s, clk, ts);
	int ret = real_sem_trywait(s);
	int err = errno;
	uint64_t now = tr_time();

	tr_enter(t, now, tr_pth_rgn[r]);
	if (ret != 0) {
		struct pth_cu cu = { t, r, NULL };

		/* The failed try left EAGAIN in errno; a blocking call that then
		 * succeeds does not touch errno, so give it the program's errno
		 * back first (tr_leave passes errno on to the program). */
		errno = t->saved_errno;
		ret = pth_sem_call(&cu, k, s, clk, ts, &err);
		now = tr_time();
	}
	tr_leave(t, now, tr_pth_rgn[r]);
	if (ret == 0)
		tr_thread_put(t);
	else
		pth_put_errno(t, err);
	return ret;
}

TR_EXPORT int sem_wait(sem_t *s)
{
	PTH_INIT(sem_wait);
	PTH_INIT(sem_trywait);
	return pth_sem_wait(R_SEM_WAIT, K_PLAIN, s, 0, NULL);
}

TR_EXPORT int sem_timedwait(sem_t *s, const struct timespec *ts)
{
	PTH_INIT(sem_timedwait);
	PTH_INIT(sem_trywait);
	return pth_sem_wait(R_SEM_TIMEDWAIT, K_TIMED, s, 0, ts);
}

TR_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(sem_clockwait);
	PTH_INIT(sem_trywait);
	return pth_sem_wait(R_SEM_CLOCKWAIT, K_CLOCK, s, clk, ts);
}

TR_EXPORT int sem_trywait(sem_t *s)
{
	PTH_INIT(sem_trywait);
	PTH_POINT_BODY_ERRNO(R_SEM_TRYWAIT, real_sem_trywait(s), 1);
}

TR_EXPORT int sem_post(sem_t *s)
{
	PTH_INIT(sem_post);
	PTH_POINT_BODY_ERRNO(R_SEM_POST, real_sem_post(s), 1);
}

