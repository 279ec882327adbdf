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

/* ---- the lock paths' slow parts (pthread_wrap.h has the inline ones) ---- */

static uint32_t pth_addr_attr = UINT32_MAX;

static const otf2w_attr_list *lock_attrs(const void *addr);

const otf2w_attr_list *pth_lock_attrs(struct tr_pth_lock *l, const void *addr)
{
	if (atomic_load_explicit(&l->code, memory_order_relaxed) != 0)
		return NULL;   /* its first acquisition was recorded */
	int saved = errno;   /* (the registry lock, the heap: errno is the call's) */
	const otf2w_attr_list *al = lock_attrs(addr);
	errno = saved;
	return al;
}

uint32_t tr_pth_lock_attr(void)
{
	uint32_t a = __atomic_load_n(&pth_addr_attr, __ATOMIC_ACQUIRE);
	if (a == UINT32_MAX) {
		a = tr_def_attribute("TRACER::LOCK_ADDRESS", "the address of the lock (on its first recorded "
				     "acquisition)", OTF2W_TYPE_UINT64);
		__atomic_store_n(&pth_addr_attr, a, __ATOMIC_RELEASE);
	}
	return a;
}

static const otf2w_attr_list *lock_attrs(const void *addr)
{
	uint32_t a = tr_pth_lock_attr();
	if (!tr_pth_tls.al && !(tr_pth_tls.al = otf2w_attr_list_new()))
		return NULL;
	otf2w_attr_list_clear(tr_pth_tls.al);
	if (a == UINT32_MAX || otf2w_attr_list_add_uint64(tr_pth_tls.al, a, (uint64_t)(uintptr_t)addr) != OTF2W_OK)
		return NULL;
	return tr_pth_tls.al;
}

/* pth_took beyond its inline case (errno not saved yet). */
void tr_pth_took_slow(struct tr_thread *t, uint64_t time, enum tr_pth_rgn r, const void *addr, int shared)
{
	uint32_t id, order;
	uint64_t at = time;
	struct tr_pth_lock *l;
	otf2w_code code;
	uint8_t *p;

	t->saved_errno = *t->errnop;
	l = pth_acquire_note(t, &at, addr, shared, &id, &order);
	const otf2w_attr_list *al = pth_lock_attrs(l, addr);
	code = pth_lock_code(l, id);
	(void)pth_region(r);   /* defined (tr_pth_code[r]) */
	if (tr_likely(at == time) && !al &&
	    (p = tr_call_begin(t, time, &tr_pth_code[r], OTF2W_EVT_THREAD_ACQUIRE_LOCK_MAX)) != NULL) {
		p = otf2w_evt_put_thread_lock_code(p, OTF2W_EVT_THREAD_ACQUIRE_LOCK_ID, code, order);
		tr_call_end(t, p, &tr_pth_code[r], 1);
		pth_hold(addr, code, order);
		tr_thread_put_keep(t);
		return;
	}
	tr_enter(t, time, pth_region(r));
	if (tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_thread_acquire_lock(t->w, al, at, OTF2W_PARADIGM_PTHREAD, id, order));
		tr_rec_end(t);
		pth_hold(addr, code, order);
	}
	tr_leave(t, at, pth_region(r));
	tr_thread_put(t);
}

/* A lock call whose non-blocking attempt failed (ret): Enter at `now`,
 * then (blocking) the real call (a nonzero clk or ts: its timeout) and the
 * acquisition, Leave; the guard released. EOWNERDEAD (robust mutex) means
 * acquired. The real calls of the blocking wrappers, by region: */
static int pth_lock_call(enum tr_pth_rgn r, void *l, clockid_t clk, const struct timespec *ts);

static __attribute__((noinline)) int pth_lock_wait(struct tr_thread *t, uint64_t now, enum tr_pth_rgn r,
						   void *l, int shared, int ret, int blocking, clockid_t clk,
						   const struct timespec *ts)
{
	t->saved_errno = *t->errnop;
	tr_enter(t, now, pth_region(r));
	if (blocking) {
		tr_durable_idle(t);   /* (TRACER_DURABLE: what it recorded is out before it waits) */
		ret = pth_lock_call(r, l, clk, ts);
		now = tr_time();
	}
	if (ret == 0 || ret == EOWNERDEAD)
		now = pth_acquired(t, now, l, shared);
	tr_leave(t, now, pth_region(r));
	tr_thread_put(t);
	return ret;
}

/* Find and forget the held entry of addr. 1: found (code/order set). */
static int pth_unhold(const void *addr, otf2w_code *code, uint32_t *order)
{
	uint32_t n = tr_pth_tls.nheld;

	while (n-- > 0) {
		if (tr_pth_tls.held[n].addr == (uintptr_t)addr) {
			*code = tr_pth_tls.held[n].code;
			*order = tr_pth_tls.held[n].order;
			for (uint32_t i = n + 1; i < tr_pth_tls.nheld; i++)
				tr_pth_tls.held[i - 1] = tr_pth_tls.held[i];
			tr_pth_tls.nheld--;
			return 1;
		}
	}
	if (tr_pth_tls.lost) {
		/* Held beyond PTH_MAX_HELD: best effort, the lock's last order. */
		struct tr_pth_lock *l = tr_pth_lock_get((uintptr_t)addr);

		tr_pth_tls.lost--;
		*order = atomic_load_explicit(&l->order, memory_order_relaxed);
		*code = pth_lock_code(l, atomic_load_explicit(&l->id, memory_order_relaxed) - 1);
		return 1;
	}
	return 0;   /* acquired untraced (before init, or by another thread) */
}

int tr_pth_released(struct tr_thread *t, uint64_t time, const void *addr)
{
	otf2w_code code;
	uint32_t order;
	uint8_t *p;

	if (!pth_unhold(addr, &code, &order))
		return 0;
	if (!time)
		time = tr_time();
	p = tr_fast_begin(t, time, OTF2W_EVT_THREAD_RELEASE_LOCK_MAX + OTF2W_CODE_SLACK);
	if (tr_likely(p != NULL)) {
		tr_fast_end(t, otf2w_evt_put_thread_lock_code(p, OTF2W_EVT_THREAD_RELEASE_LOCK_ID, code, order), 1);
		return 1;
	}
	if (!tr_rec_begin(t))
		return 0;
	tr_evt_status(t, otf2w_evt_thread_release_lock(t->w, NULL, time, OTF2W_PARADIGM_PTHREAD,
						       otf2w_code_thread_lock_id(code), order));
	tr_rec_end(t);
	return 1;
}

void tr_pth_unlocking_slow(struct tr_thread *t, uint64_t time, const void *addr)
{
	t->saved_errno = *t->errnop;
	tr_pth_released(t, time, addr);
	*t->errnop = t->saved_errno;
}

/* ---- the lock wrappers, generated ---------------------------------------------------------- */

/*
 * LOCK(fn, region, shared, the non-blocking attempt, lock type, shape, init),
 * TRY(fn, region, shared, lock type, init), UNLOCK(fn, lock type, init).
 * shared: a reader's acquisition. shape: the parameters after the lock,
 * PLAIN (none), TIMED (an absolute timeout), CLOCK (a clock and an absolute
 * timeout). init: how a call made before the tables are resolved finds its
 * real function, LAZY (the resolver) or BOOT (the mutex functions: inside
 * the resolver, dlsym's allocator may lock a mutex, single-threaded: 0).
 * Their prototypes are checked against pthread_list.h (pthread_int.h).
 *
 * A lock call: its non-blocking attempt; when it succeeds (the hot path),
 * Enter, ThreadAcquireLock and Leave at one timestamp (pth_took, which
 * releases the guard); when it does not, pth_lock_wait. An unlock:
 * ThreadReleaseLock (before the real unlock, so the next holder's
 * acquisition is later in time). Only a call that is not recorded needs its
 * real function looked at (pth_enter: recorded implies resolved).
 */
#define PTH_LOCK_WRAPPERS(LOCK, TRY, UNLOCK)                                                          \
	LOCK(pthread_mutex_lock, MUTEX_LOCK, 0, pthread_mutex_trylock, pthread_mutex_t, PLAIN, BOOT)     \
	TRY(pthread_mutex_trylock, MUTEX_TRYLOCK, 0, pthread_mutex_t, BOOT)                              \
	UNLOCK(pthread_mutex_unlock, pthread_mutex_t, BOOT)                                              \
	LOCK(pthread_mutex_timedlock, MUTEX_TIMEDLOCK, 0, pthread_mutex_trylock, pthread_mutex_t, TIMED, LAZY) \
	LOCK(pthread_mutex_clocklock, MUTEX_CLOCKLOCK, 0, pthread_mutex_trylock, pthread_mutex_t, CLOCK, LAZY) \
	LOCK(pthread_rwlock_rdlock, RW_RDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, PLAIN, LAZY) \
	TRY(pthread_rwlock_tryrdlock, RW_TRYRDLOCK, 1, pthread_rwlock_t, LAZY)                           \
	LOCK(pthread_rwlock_timedrdlock, RW_TIMEDRDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, TIMED, LAZY) \
	LOCK(pthread_rwlock_clockrdlock, RW_CLOCKRDLOCK, 1, pthread_rwlock_tryrdlock, pthread_rwlock_t, CLOCK, LAZY) \
	LOCK(pthread_rwlock_wrlock, RW_WRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, PLAIN, LAZY) \
	TRY(pthread_rwlock_trywrlock, RW_TRYWRLOCK, 0, pthread_rwlock_t, LAZY)                           \
	LOCK(pthread_rwlock_timedwrlock, RW_TIMEDWRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, TIMED, LAZY) \
	LOCK(pthread_rwlock_clockwrlock, RW_CLOCKWRLOCK, 0, pthread_rwlock_trywrlock, pthread_rwlock_t, CLOCK, LAZY) \
	UNLOCK(pthread_rwlock_unlock, pthread_rwlock_t, LAZY)                                            \
	LOCK(pthread_spin_lock, SPIN_LOCK, 0, pthread_spin_trylock, pthread_spinlock_t, PLAIN, LAZY)     \
	TRY(pthread_spin_trylock, SPIN_TRYLOCK, 0, pthread_spinlock_t, LAZY)                             \
	UNLOCK(pthread_spin_unlock, pthread_spinlock_t, LAZY)

#define PTH_PARAMS_PLAIN
#define PTH_PARAMS_TIMED , const struct timespec *ts
#define PTH_PARAMS_CLOCK , clockid_t clk, const struct timespec *ts
#define PTH_ARGS_PLAIN
#define PTH_ARGS_TIMED , ts
#define PTH_ARGS_CLOCK , clk, ts
#define PTH_WAIT_ARGS_PLAIN 0, NULL
#define PTH_WAIT_ARGS_TIMED 0, ts
#define PTH_WAIT_ARGS_CLOCK clk, ts
#define PTH_INIT_LAZY(fn) PTH_INIT(fn)
#define PTH_INIT_BOOT(fn)                                                                             \
	do {                                                                                          \
		if (tr_unlikely(!real_##fn)) {                                                        \
			if (tr_pth_resolving)                                                         \
				return 0;   /* bootstrap: dlsym's allocator, single-threaded */       \
			PTH_INIT(fn);                                                                 \
		}                                                                                     \
	} while (0)

/* Body of a lock (blocking 1) or try (0) wrapper of lock l. */
#define PTH_ACQUIRE_BODY(fn, REGION, shared, tryfn, shape, init, blocking)                           \
	struct tr_thread *t = pth_enter();                                                            \
	if (!t) {                                                                                     \
		PTH_INIT_##init(fn);                                                                  \
		return real_##fn(l PTH_ARGS_##shape);                                                 \
	}                                                                                             \
	int ret = real_##tryfn(l);                                                                    \
	uint64_t now = tr_time();                                                                     \
	if (tr_likely(ret == 0 || ret == EOWNERDEAD)) {                                               \
		pth_took(t, now, R_##REGION, (const void *)l, shared);                                       \
		return ret;                                                                           \
	}                                                                                             \
	return pth_lock_wait(t, now, R_##REGION, (void *)l, shared, ret, blocking, PTH_WAIT_ARGS_##shape)

#define PTH_GEN_LOCK(fn, REGION, shared, tryfn, type, shape, init)                                   \
	TR_EXPORT int fn(type *l PTH_PARAMS_##shape)                                                  \
	{                                                                                             \
		PTH_ACQUIRE_BODY(fn, REGION, shared, tryfn, shape, init, 1);                          \
	}
#define PTH_GEN_TRY(fn, REGION, shared, type, init)                                                  \
	TR_EXPORT int fn(type *l)                                                                     \
	{                                                                                             \
		PTH_ACQUIRE_BODY(fn, REGION, shared, fn, PLAIN, init, 0);                             \
	}
#define PTH_GEN_UNLOCK(fn, type, init)                                                               \
	TR_EXPORT int fn(type *l)                                                                     \
	{                                                                                             \
		struct tr_thread *t = pth_enter();                                                    \
		if (!t) {                                                                             \
			PTH_INIT_##init(fn);                                                          \
			return real_##fn(l);                                                          \
		}                                                                                     \
		pth_unlocking(t, (const void *)l);                                                    \
		int ret = real_##fn(l);                                                               \
		tr_thread_put_keep(t);   /* errno: untouched (pth_unlocking), the call's */           \
		return ret;                                                                           \
	}

PTH_LOCK_WRAPPERS(PTH_GEN_LOCK, PTH_GEN_TRY, PTH_GEN_UNLOCK)

/* pth_lock_wait's real calls: the blocking wrappers' functions by region. */
#define PTH_CALL_LOCK(fn, REGION, shared, tryfn, type, shape, init)                                  \
	case R_##REGION:                                                                              \
		return real_##fn((type *)l PTH_ARGS_##shape);
#define PTH_CALL_NONE(...)
static int pth_lock_call(enum tr_pth_rgn r, void *l, clockid_t clk, const struct timespec *ts)
{
	(void)clk;
	(void)ts;
	switch (r) {
	PTH_LOCK_WRAPPERS(PTH_CALL_LOCK, PTH_CALL_NONE, PTH_CALL_NONE)
	default:
		return EINVAL;   /* not a blocking lock region */
	}
}

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

	tr_enter(t, now, pth_region(r));
	if (tr_pth_released(t, now, m))
		cu.mutex = m;
	tr_durable_idle(t);
	int ret = pth_cond_call(&cu, k, c, m, clk, ts);
	now = tr_time();
	if (cu.mutex)
		now = pth_acquired(t, now, m, 0);
	tr_leave(t, now, pth_region(r));
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
	tr_enter(t, tr_time(), pth_region(R_BARRIER_WAIT));
	tr_durable_idle(t);
	int ret = real_pthread_barrier_wait(b);
	tr_leave(t, tr_time(), pth_region(R_BARRIER_WAIT));
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

	tr_enter(t, now, pth_region(r));
	if (ret != 0) {
		struct pth_cu cu = { t, r, NULL };

		/* The failed try left EAGAIN in errno; a blocking call that then
		 * succeeds does not touch errno, so give it the program's errno
		 * back first (tr_leave passes errno on to the program). */
		errno = t->saved_errno;
		ret = pth_sem_call(&cu, k, s, clk, ts, &err);
		now = tr_time();
	}
	tr_leave(t, now, pth_region(r));
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

