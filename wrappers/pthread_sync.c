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
 * Body of a blocking lock call. TRY: the non-blocking attempt; CALL: the
 * real call. EOWNERDEAD (robust mutex) means acquired.
 */
#define PTH_LOCK_BODY(R, SHARED, ADDR, TRY, CALL)                  \
	struct tr_thread *t = pth_get();                            \
	if (!t)                                                     \
		return CALL;                                        \
	int ret = TRY;                                              \
	uint64_t now = tr_time();                                   \
	tr_enter(t, now, tr_pth_rgn[R]);                               \
	if (ret != 0 && ret != EOWNERDEAD) {                        \
		ret = CALL;                                         \
		now = tr_time();                                    \
	}                                                           \
	if (ret == 0 || ret == EOWNERDEAD)                          \
		now = pth_acquired(t, now, ADDR, SHARED);           \
	tr_leave(t, now, tr_pth_rgn[R]);                               \
	tr_thread_put(t);                                           \
	return ret

/* Body of a non-blocking attempt: Enter/[Acquire]/Leave at one timestamp. */
#define PTH_TRY_BODY(R, SHARED, ADDR, CALL)                         \
	struct tr_thread *t = pth_get();                            \
	if (!t)                                                     \
		return CALL;                                        \
	int ret = CALL;                                             \
	uint64_t now = tr_time();                                   \
	tr_enter(t, now, tr_pth_rgn[R]);                               \
	if (ret == 0 || ret == EOWNERDEAD)                          \
		now = pth_acquired(t, now, ADDR, SHARED);           \
	tr_leave(t, now, tr_pth_rgn[R]);                               \
	tr_thread_put(t);                                           \
	return ret

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

TR_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	PTH_INIT(pthread_mutex_timedlock);
	PTH_LOCK_BODY(R_MUTEX_TIMEDLOCK, 0, m, real_pthread_mutex_trylock(m),
		      real_pthread_mutex_timedlock(m, ts));
}

TR_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(pthread_mutex_clocklock);
	PTH_LOCK_BODY(R_MUTEX_CLOCKLOCK, 0, m, real_pthread_mutex_trylock(m),
		      real_pthread_mutex_clocklock(m, clk, ts));
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

/* ---- reader-writer locks -------------------------------------------------------------- */

TR_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	PTH_INIT(pthread_rwlock_rdlock);
	PTH_LOCK_BODY(R_RW_RDLOCK, 1, l, real_pthread_rwlock_tryrdlock(l), real_pthread_rwlock_rdlock(l));
}

TR_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	PTH_INIT(pthread_rwlock_tryrdlock);
	PTH_TRY_BODY(R_RW_TRYRDLOCK, 1, l, real_pthread_rwlock_tryrdlock(l));
}

TR_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	PTH_INIT(pthread_rwlock_timedrdlock);
	PTH_LOCK_BODY(R_RW_TIMEDRDLOCK, 1, l, real_pthread_rwlock_tryrdlock(l),
		      real_pthread_rwlock_timedrdlock(l, ts));
}

TR_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(pthread_rwlock_clockrdlock);
	PTH_LOCK_BODY(R_RW_CLOCKRDLOCK, 1, l, real_pthread_rwlock_tryrdlock(l),
		      real_pthread_rwlock_clockrdlock(l, clk, ts));
}

TR_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	PTH_INIT(pthread_rwlock_wrlock);
	PTH_LOCK_BODY(R_RW_WRLOCK, 0, l, real_pthread_rwlock_trywrlock(l), real_pthread_rwlock_wrlock(l));
}

TR_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	PTH_INIT(pthread_rwlock_trywrlock);
	PTH_TRY_BODY(R_RW_TRYWRLOCK, 0, l, real_pthread_rwlock_trywrlock(l));
}

TR_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	PTH_INIT(pthread_rwlock_timedwrlock);
	PTH_LOCK_BODY(R_RW_TIMEDWRLOCK, 0, l, real_pthread_rwlock_trywrlock(l),
		      real_pthread_rwlock_timedwrlock(l, ts));
}

TR_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(pthread_rwlock_clockwrlock);
	PTH_LOCK_BODY(R_RW_CLOCKWRLOCK, 0, l, real_pthread_rwlock_trywrlock(l),
		      real_pthread_rwlock_clockwrlock(l, clk, ts));
}

TR_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	PTH_INIT(pthread_rwlock_unlock);
	PTH_UNLOCK_BODY(l, real_pthread_rwlock_unlock(l));
}

/* ---- spin locks ------------------------------------------------------------------------ */

TR_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	PTH_INIT(pthread_spin_lock);
	PTH_LOCK_BODY(R_SPIN_LOCK, 0, (const void *)l, real_pthread_spin_trylock(l), real_pthread_spin_lock(l));
}

TR_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	PTH_INIT(pthread_spin_trylock);
	PTH_TRY_BODY(R_SPIN_TRYLOCK, 0, (const void *)l, real_pthread_spin_trylock(l));
}

TR_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	PTH_INIT(pthread_spin_unlock);
	PTH_UNLOCK_BODY((const void *)l, real_pthread_spin_unlock(l));
}

/* ---- cancellation points ---- */

static __attribute__((noinline)) int pth_cond_call(struct pth_cu *cu, enum pth_kind k, pthread_cond_t *c,
						    pthread_mutex_t *m, clockid_t clk,
						    const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(tr_pth_cu_handler, cu);
	if (k == K_PLAIN)
		ret = real_pthread_cond_wait(c, m);
	else if (k == K_TIMED)
		ret = real_pthread_cond_timedwait(c, m, ts);
	else
		ret = real_pthread_cond_clockwait(c, m, clk, ts);
	pthread_cleanup_pop(0);
	return ret;
}

/* Returns the call's result; *err its errno. */
static __attribute__((noinline)) int pth_sem_call(struct pth_cu *cu, enum pth_kind k, sem_t *s,
						   clockid_t clk, const struct timespec *ts, int *err)
{
	int ret;

	pthread_cleanup_push(tr_pth_cu_handler, cu);
	if (k == K_PLAIN)
		ret = real_sem_wait(s);
	else if (k == K_TIMED)
		ret = real_sem_timedwait(s, ts);
	else
		ret = real_sem_clockwait(s, clk, ts);
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
		return k == K_PLAIN ? real_pthread_cond_wait(c, m) :
		       k == K_TIMED ? real_pthread_cond_timedwait(c, m, ts) :
				      real_pthread_cond_clockwait(c, m, clk, ts);
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
		return k == K_PLAIN ? real_sem_wait(s) :
		       k == K_TIMED ? real_sem_timedwait(s, ts) : real_sem_clockwait(s, clk, ts);
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

#define PTH_SEM_POINT_BODY(R, CALL)                                      \
	struct tr_thread *t = pth_get();                                  \
	if (!t)                                                           \
		return CALL;                                              \
	uint64_t now = tr_time();                                         \
	tr_enter(t, now, tr_pth_rgn[R]);                                     \
	int ret = CALL;                                                   \
	int err = errno;                                                  \
	tr_leave(t, now, tr_pth_rgn[R]);                                     \
	if (ret == 0)                                                     \
		tr_thread_put(t);                                         \
	else                                                              \
		pth_put_errno(t, err);                                    \
	return ret

TR_EXPORT int sem_trywait(sem_t *s)
{
	PTH_INIT(sem_trywait);
	PTH_SEM_POINT_BODY(R_SEM_TRYWAIT, real_sem_trywait(s));
}

TR_EXPORT int sem_post(sem_t *s)
{
	PTH_INIT(sem_post);
	PTH_SEM_POINT_BODY(R_SEM_POST, real_sem_post(s));
}

