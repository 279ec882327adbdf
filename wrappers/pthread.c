/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread.c - interposition of the POSIX threads API (TRACER_PTHREAD=on).
 *
 * Thread life cycle (paradigm PTHREAD, thread contingent = the Comm of
 * tr_def_thread_comm): pthread_create records Enter/ThreadCreate/Leave in
 * the creator and starts the new thread in pth_start_routine, which records
 * ThreadBegin as the first event of the new location and ThreadEnd when the
 * start routine returns, calls pthread_exit or is cancelled (cleanup
 * handler); pthread_join and friends record ThreadWait with the same
 * sequence count. Threads still running at exit get their ThreadEnd from
 * the thread_fini hook.
 *
 * Locks (mutex, rwlock, spinlock, and the mutex of a condition wait) are
 * ThreadAcquireLock/ThreadReleaseLock with a stable dense lock id and a
 * per-lock acquisition order (pthread_int.h). Lock calls try the lock
 * first: a lock taken at once costs one clock read (Enter, Acquire, Leave
 * at one timestamp); a contended one is Enter at the attempt, Acquire and
 * Leave when the lock is held, so the waiting time is visible. Unlock is a
 * ThreadReleaseLock alone.
 *
 * Every other call (condition variables, barriers, semaphores, detach,
 * cancel, exit) is an Enter/Leave region of paradigm PTHREAD.
 *
 * Threads started by a wrapped library while inside a recorded call (Open
 * MPI's progress threads in MPI_Init) are internal: not recorded.
 *
 * Hot path rules: no malloc, no lock, no stdio; per-thread state is
 * initial-exec TLS; errno is preserved (functions that report through
 * errno, sem_*, keep the value the real call left). pthread_create/join
 * are not hot: they allocate and take a private lock (real functions).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "tracer.h"
#include "pthread_int.h"

/* Condition variables exist in two versions in glibc (the pre-2.3.2 ABI
 * and the current one); plain dlsym may return the old one. */
#if defined(__x86_64__) || defined(__i386__) || defined(__powerpc__) || defined(__s390__)
#define PTH_COND_VERSION "GLIBC_2.3.2"
#else
#define PTH_COND_VERSION NULL   /* only one version on newer architectures */
#endif

/* ---- real functions --------------------------------------------------------- */

#define PTH_REAL(ret, fn, ...) static ret (*real_##fn)(__VA_ARGS__)
PTH_REAL(int, pthread_mutex_lock, pthread_mutex_t *);
PTH_REAL(int, pthread_mutex_trylock, pthread_mutex_t *);
PTH_REAL(int, pthread_mutex_unlock, pthread_mutex_t *);
PTH_REAL(int, pthread_mutex_timedlock, pthread_mutex_t *, const struct timespec *);
PTH_REAL(int, pthread_mutex_clocklock, pthread_mutex_t *, clockid_t, const struct timespec *);
PTH_REAL(int, pthread_create, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
PTH_REAL(int, pthread_join, pthread_t, void **);
PTH_REAL(int, pthread_tryjoin_np, pthread_t, void **);
PTH_REAL(int, pthread_timedjoin_np, pthread_t, void **, const struct timespec *);
PTH_REAL(int, pthread_clockjoin_np, pthread_t, void **, clockid_t, const struct timespec *);
PTH_REAL(int, pthread_detach, pthread_t);
PTH_REAL(int, pthread_cancel, pthread_t);
PTH_REAL(void, pthread_exit, void *);
PTH_REAL(int, pthread_rwlock_rdlock, pthread_rwlock_t *);
PTH_REAL(int, pthread_rwlock_tryrdlock, pthread_rwlock_t *);
PTH_REAL(int, pthread_rwlock_timedrdlock, pthread_rwlock_t *, const struct timespec *);
PTH_REAL(int, pthread_rwlock_clockrdlock, pthread_rwlock_t *, clockid_t, const struct timespec *);
PTH_REAL(int, pthread_rwlock_wrlock, pthread_rwlock_t *);
PTH_REAL(int, pthread_rwlock_trywrlock, pthread_rwlock_t *);
PTH_REAL(int, pthread_rwlock_timedwrlock, pthread_rwlock_t *, const struct timespec *);
PTH_REAL(int, pthread_rwlock_clockwrlock, pthread_rwlock_t *, clockid_t, const struct timespec *);
PTH_REAL(int, pthread_rwlock_unlock, pthread_rwlock_t *);
PTH_REAL(int, pthread_spin_lock, pthread_spinlock_t *);
PTH_REAL(int, pthread_spin_trylock, pthread_spinlock_t *);
PTH_REAL(int, pthread_spin_unlock, pthread_spinlock_t *);
PTH_REAL(int, pthread_cond_wait, pthread_cond_t *, pthread_mutex_t *);
PTH_REAL(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
PTH_REAL(int, pthread_cond_clockwait, pthread_cond_t *, pthread_mutex_t *, clockid_t,
	 const struct timespec *);
PTH_REAL(int, pthread_cond_signal, pthread_cond_t *);
PTH_REAL(int, pthread_cond_broadcast, pthread_cond_t *);
PTH_REAL(int, pthread_barrier_wait, pthread_barrier_t *);
PTH_REAL(int, sem_wait, sem_t *);
PTH_REAL(int, sem_timedwait, sem_t *, const struct timespec *);
PTH_REAL(int, sem_clockwait, sem_t *, clockid_t, const struct timespec *);
PTH_REAL(int, sem_trywait, sem_t *);
PTH_REAL(int, sem_post, sem_t *);
PTH_REAL(int, pthread_setname_np, pthread_t, const char *);
PTH_REAL(int, prctl, int, ...);

struct pth_sym {
	void **slot;
	const char *name;
	const char *version;
};
#define PTH_SYM(fn) { (void **)&real_##fn, #fn, NULL }
#define PTH_SYMV(fn, v) { (void **)&real_##fn, #fn, v }
/* Mutex functions first: a custom allocator used by dlsym may lock one. */
static const struct pth_sym pth_syms[] = {
	PTH_SYM(pthread_mutex_lock), PTH_SYM(pthread_mutex_trylock), PTH_SYM(pthread_mutex_unlock),
	PTH_SYM(pthread_mutex_timedlock), PTH_SYM(pthread_mutex_clocklock),
	PTH_SYM(pthread_create), PTH_SYM(pthread_join), PTH_SYM(pthread_tryjoin_np),
	PTH_SYM(pthread_timedjoin_np), PTH_SYM(pthread_clockjoin_np), PTH_SYM(pthread_detach),
	PTH_SYM(pthread_cancel), PTH_SYM(pthread_exit),
	PTH_SYM(pthread_rwlock_rdlock), PTH_SYM(pthread_rwlock_tryrdlock),
	PTH_SYM(pthread_rwlock_timedrdlock), PTH_SYM(pthread_rwlock_clockrdlock),
	PTH_SYM(pthread_rwlock_wrlock), PTH_SYM(pthread_rwlock_trywrlock),
	PTH_SYM(pthread_rwlock_timedwrlock), PTH_SYM(pthread_rwlock_clockwrlock),
	PTH_SYM(pthread_rwlock_unlock),
	PTH_SYM(pthread_spin_lock), PTH_SYM(pthread_spin_trylock), PTH_SYM(pthread_spin_unlock),
	PTH_SYMV(pthread_cond_wait, PTH_COND_VERSION),
	PTH_SYMV(pthread_cond_timedwait, PTH_COND_VERSION),
	PTH_SYM(pthread_cond_clockwait),
	PTH_SYMV(pthread_cond_signal, PTH_COND_VERSION),
	PTH_SYMV(pthread_cond_broadcast, PTH_COND_VERSION),
	PTH_SYM(pthread_barrier_wait),
	PTH_SYM(sem_wait), PTH_SYM(sem_timedwait), PTH_SYM(sem_clockwait), PTH_SYM(sem_trywait),
	PTH_SYM(sem_post), PTH_SYM(pthread_setname_np), PTH_SYM(prctl),
};

static TR_TLS int pth_resolving;

/* Resolve every real function at once (constructor, or the first call that
 * arrives before it). A symbol the C library lacks stays NULL: its wrapper
 * is then never reached (the program could not have linked against it). */
static void pth_resolve_all(void)
{
	pth_resolving = 1;
	for (size_t i = 0; i < sizeof(pth_syms) / sizeof(pth_syms[0]); i++) {
		const struct pth_sym *s = &pth_syms[i];
		void *p = NULL;

		if (*s->slot)
			continue;
		if (s->version)
			p = dlvsym(RTLD_NEXT, s->name, s->version);
		if (!p)
			p = tr_dlsym_next(s->name);
		__atomic_store_n(s->slot, p, __ATOMIC_RELAXED);
	}
	pth_resolving = 0;
}

/* Lazily resolve (a call made before our constructor ran). */
#define PTH_INIT(fn)                                          \
	do {                                                  \
		if (tr_unlikely(!real_##fn))                  \
			pth_resolve_slow((void **)&real_##fn, #fn); \
	} while (0)

static void pth_resolve_slow(void **slot, const char *name)
{
	pth_resolve_all();
	if (!*slot) {
		tr_log_error("pthread: cannot find the real %s", name);
		abort();
	}
}

/* ---- state ------------------------------------------------------------------------ */

enum pth_rgn {
	R_CREATE, R_JOIN, R_TRYJOIN, R_TIMEDJOIN, R_CLOCKJOIN, R_DETACH, R_CANCEL, R_EXIT,
	R_MUTEX_LOCK, R_MUTEX_TRYLOCK, R_MUTEX_TIMEDLOCK, R_MUTEX_CLOCKLOCK,
	R_RW_RDLOCK, R_RW_TRYRDLOCK, R_RW_TIMEDRDLOCK, R_RW_CLOCKRDLOCK,
	R_RW_WRLOCK, R_RW_TRYWRLOCK, R_RW_TIMEDWRLOCK, R_RW_CLOCKWRLOCK,
	R_SPIN_LOCK, R_SPIN_TRYLOCK,
	R_COND_WAIT, R_COND_TIMEDWAIT, R_COND_CLOCKWAIT, R_COND_SIGNAL, R_COND_BROADCAST,
	R_BARRIER_WAIT,
	R_SEM_WAIT, R_SEM_TIMEDWAIT, R_SEM_CLOCKWAIT, R_SEM_TRYWAIT, R_SEM_POST,
	R_N
};

static const struct {
	const char *name;
	uint8_t role;
} pth_rgn_def[R_N] = {
	[R_CREATE] = { "pthread_create", OTF2W_ROLE_THREAD_CREATE },
	[R_JOIN] = { "pthread_join", OTF2W_ROLE_THREAD_WAIT },
	[R_TRYJOIN] = { "pthread_tryjoin_np", OTF2W_ROLE_THREAD_WAIT },
	[R_TIMEDJOIN] = { "pthread_timedjoin_np", OTF2W_ROLE_THREAD_WAIT },
	[R_CLOCKJOIN] = { "pthread_clockjoin_np", OTF2W_ROLE_THREAD_WAIT },
	[R_DETACH] = { "pthread_detach", OTF2W_ROLE_FUNCTION },
	[R_CANCEL] = { "pthread_cancel", OTF2W_ROLE_FUNCTION },
	[R_EXIT] = { "pthread_exit", OTF2W_ROLE_FUNCTION },
	[R_MUTEX_LOCK] = { "pthread_mutex_lock", OTF2W_ROLE_FUNCTION },
	[R_MUTEX_TRYLOCK] = { "pthread_mutex_trylock", OTF2W_ROLE_FUNCTION },
	[R_MUTEX_TIMEDLOCK] = { "pthread_mutex_timedlock", OTF2W_ROLE_FUNCTION },
	[R_MUTEX_CLOCKLOCK] = { "pthread_mutex_clocklock", OTF2W_ROLE_FUNCTION },
	[R_RW_RDLOCK] = { "pthread_rwlock_rdlock", OTF2W_ROLE_FUNCTION },
	[R_RW_TRYRDLOCK] = { "pthread_rwlock_tryrdlock", OTF2W_ROLE_FUNCTION },
	[R_RW_TIMEDRDLOCK] = { "pthread_rwlock_timedrdlock", OTF2W_ROLE_FUNCTION },
	[R_RW_CLOCKRDLOCK] = { "pthread_rwlock_clockrdlock", OTF2W_ROLE_FUNCTION },
	[R_RW_WRLOCK] = { "pthread_rwlock_wrlock", OTF2W_ROLE_FUNCTION },
	[R_RW_TRYWRLOCK] = { "pthread_rwlock_trywrlock", OTF2W_ROLE_FUNCTION },
	[R_RW_TIMEDWRLOCK] = { "pthread_rwlock_timedwrlock", OTF2W_ROLE_FUNCTION },
	[R_RW_CLOCKWRLOCK] = { "pthread_rwlock_clockwrlock", OTF2W_ROLE_FUNCTION },
	[R_SPIN_LOCK] = { "pthread_spin_lock", OTF2W_ROLE_FUNCTION },
	[R_SPIN_TRYLOCK] = { "pthread_spin_trylock", OTF2W_ROLE_FUNCTION },
	[R_COND_WAIT] = { "pthread_cond_wait", OTF2W_ROLE_FUNCTION },
	[R_COND_TIMEDWAIT] = { "pthread_cond_timedwait", OTF2W_ROLE_FUNCTION },
	[R_COND_CLOCKWAIT] = { "pthread_cond_clockwait", OTF2W_ROLE_FUNCTION },
	[R_COND_SIGNAL] = { "pthread_cond_signal", OTF2W_ROLE_FUNCTION },
	[R_COND_BROADCAST] = { "pthread_cond_broadcast", OTF2W_ROLE_FUNCTION },
	[R_BARRIER_WAIT] = { "pthread_barrier_wait", OTF2W_ROLE_BARRIER },
	[R_SEM_WAIT] = { "sem_wait", OTF2W_ROLE_FUNCTION },
	[R_SEM_TIMEDWAIT] = { "sem_timedwait", OTF2W_ROLE_FUNCTION },
	[R_SEM_CLOCKWAIT] = { "sem_clockwait", OTF2W_ROLE_FUNCTION },
	[R_SEM_TRYWAIT] = { "sem_trywait", OTF2W_ROLE_FUNCTION },
	[R_SEM_POST] = { "sem_post", OTF2W_ROLE_FUNCTION },
};

static uint32_t pth_rgn[R_N];   /* region ids, set by pth_init */
static uint32_t pth_comm;       /* PTHREAD thread contingent */
static _Atomic int pth_on;      /* 1 once pth_init defined everything (TRACER_PTHREAD on) */
static _Atomic uint64_t pth_ncreated; /* threads started through pth_start_routine */

/* Locks this thread holds, with the acquisition order its release repeats. */
#define PTH_MAX_HELD 32
struct pth_held {
	uintptr_t addr;
	uint32_t id;
	uint32_t order;
};

/* Per-thread state: initial-exec so that an access never allocates. */
struct pth_tls {
	int ended;                  /* no pthread events: ThreadEnd written, or quiet */
	int quiet;                  /* internal thread of a wrapped library (see pth_quiet_routine) */
	uint32_t nheld;
	uint32_t lost;              /* acquisitions recorded beyond PTH_MAX_HELD */
	struct pth_held held[PTH_MAX_HELD];
};
static TR_TLS struct pth_tls pth_tls;

/* The calling thread's tracer state when its pthread calls are recorded. */
static inline struct tr_thread *pth_get(void)
{
	if (tr_unlikely(!atomic_load_explicit(&pth_on, memory_order_relaxed) || pth_tls.ended))
		return NULL;
	return tr_thread_get();
}

/* tr_thread_put, then the errno the real call left (errno-reporting calls). */
static inline void pth_put_errno(struct tr_thread *t, int err)
{
	tr_thread_put(t);
	errno = err;
}

/* ---- lock events -------------------------------------------------------------------- */

/* Wait until every earlier instruction has completed (then read the clock). */
static inline void pth_clock_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#else
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

/*
 * The lock at addr was acquired by this thread; `time` was read right after
 * the lock call returned. shared: other holders may acquire it concurrently
 * (read lock): count atomically. Returns the timestamp of the acquisition
 * (use it for the Leave).
 *
 * rdtsc is not ordered with the atomic instruction that took the lock: when
 * the lock's cache line comes from another core (the lock was handed over),
 * the clock may have been read before the lock was ours, i.e. before the
 * previous holder's release. Then read it again behind a fence, so that
 * acquisition times follow acquisition orders. A lock taken again by its
 * last holder (the uncontended case) needs no fence.
 */
static inline uint64_t pth_acquired(struct tr_thread *t, uint64_t time, const void *addr, int shared)
{
	struct tr_pth_lock *l = tr_pth_lock_get((uintptr_t)addr);
	uint32_t id = atomic_load_explicit(&l->id, memory_order_relaxed) - 1;
	uint32_t me = t->index + 1;
	uint32_t order;

	if (tr_unlikely(atomic_load_explicit(&l->holder, memory_order_relaxed) != me)) {
		uint64_t again;

		atomic_store_explicit(&l->holder, me, memory_order_relaxed);
		pth_clock_fence();
		again = tr_time();
		if (again > time)   /* never before the Enter already written */
			time = again;
	}

	if (shared || tr_unlikely(atomic_load_explicit(&l->key, memory_order_relaxed) <= TR_PTH_LOCK_OVERFLOW)) {
		order = atomic_fetch_add_explicit(&l->order, 1, memory_order_relaxed) + 1;
	} else {
		/* Exclusive holder: the lock itself orders the increments. */
		order = atomic_load_explicit(&l->order, memory_order_relaxed) + 1;
		atomic_store_explicit(&l->order, order, memory_order_relaxed);
	}
	/* Not recorded (measurement off, location stopped): nor is its release. */
	if (!tr_rec_begin(t))
		return time;
	tr_evt_status(t, otf2w_evt_thread_acquire_lock(t->w, NULL, time, OTF2W_PARADIGM_PTHREAD, id, order));
	tr_rec_end(t);
	if (tr_likely(pth_tls.nheld < PTH_MAX_HELD)) {
		struct pth_held *h = &pth_tls.held[pth_tls.nheld++];

		h->addr = (uintptr_t)addr;
		h->id = id;
		h->order = order;
	} else {
		pth_tls.lost++;
	}
	return time;
}

/* Find and forget the held entry of addr. 1: found (id/order set). */
static inline int pth_unhold(const void *addr, uint32_t *id, uint32_t *order)
{
	uint32_t n = pth_tls.nheld;

	while (n-- > 0) {
		if (pth_tls.held[n].addr == (uintptr_t)addr) {
			*id = pth_tls.held[n].id;
			*order = pth_tls.held[n].order;
			for (uint32_t i = n + 1; i < pth_tls.nheld; i++)
				pth_tls.held[i - 1] = pth_tls.held[i];
			pth_tls.nheld--;
			return 1;
		}
	}
	if (pth_tls.lost) {
		/* Held beyond PTH_MAX_HELD: best effort, the lock's last order. */
		struct tr_pth_lock *l = tr_pth_lock_get((uintptr_t)addr);

		pth_tls.lost--;
		*id = atomic_load_explicit(&l->id, memory_order_relaxed) - 1;
		*order = atomic_load_explicit(&l->order, memory_order_relaxed);
		return 1;
	}
	return 0;   /* acquired untraced (before init, or by another thread) */
}

/* The lock at addr is about to be released (time: 0 = read the clock only
 * if the release is recorded). 1 if a ThreadReleaseLock was written. */
static inline int pth_released(struct tr_thread *t, uint64_t time, const void *addr)
{
	uint32_t id, order;

	if (!pth_unhold(addr, &id, &order))
		return 0;
	if (!time)
		time = tr_time();
	if (!tr_rec_begin(t))
		return 0;
	tr_evt_status(t, otf2w_evt_thread_release_lock(t->w, NULL, time, OTF2W_PARADIGM_PTHREAD, id, order));
	tr_rec_end(t);
	return 1;
}

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
	tr_enter(t, now, pth_rgn[R]);                               \
	if (ret != 0 && ret != EOWNERDEAD) {                        \
		ret = CALL;                                         \
		now = tr_time();                                    \
	}                                                           \
	if (ret == 0 || ret == EOWNERDEAD)                          \
		now = pth_acquired(t, now, ADDR, SHARED);           \
	tr_leave(t, now, pth_rgn[R]);                               \
	tr_thread_put(t);                                           \
	return ret

/* Body of a non-blocking attempt: Enter/[Acquire]/Leave at one timestamp. */
#define PTH_TRY_BODY(R, SHARED, ADDR, CALL)                         \
	struct tr_thread *t = pth_get();                            \
	if (!t)                                                     \
		return CALL;                                        \
	int ret = CALL;                                             \
	uint64_t now = tr_time();                                   \
	tr_enter(t, now, pth_rgn[R]);                               \
	if (ret == 0 || ret == EOWNERDEAD)                          \
		now = pth_acquired(t, now, ADDR, SHARED);           \
	tr_leave(t, now, pth_rgn[R]);                               \
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
		if (pth_resolving)
			return 0;   /* bootstrap: dlsym's allocator, single-threaded */
		PTH_INIT(pthread_mutex_lock);
	}
	PTH_LOCK_BODY(R_MUTEX_LOCK, 0, m, real_pthread_mutex_trylock(m), real_pthread_mutex_lock(m));
}

TR_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (tr_unlikely(!real_pthread_mutex_trylock)) {
		if (pth_resolving)
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
		if (pth_resolving)
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

/* ---- cancellation inside a recorded blocking call -------------------------------------- */

/*
 * A cancellation point acted upon while the call was recorded: close the
 * region (and, for a condition wait, record the mutex that glibc took back
 * before running the cleanup handlers) and drop the recursion guard. The
 * cleanup handler is pushed in small noinline helpers (pthread_cleanup_push
 * is a setjmp: keeping it out of the wrappers keeps their locals safe).
 */
struct pth_cu {
	struct tr_thread *t;
	enum pth_rgn rgn;
	const void *mutex;    /* condition wait: mutex released and re-acquired */
};

static void pth_cu_handler(void *p)
{
	struct pth_cu *c = p;
	uint64_t now = tr_time();

	if (c->mutex)
		now = pth_acquired(c->t, now, c->mutex, 0);
	tr_leave(c->t, now, pth_rgn[c->rgn]);
	tr_thread_put(c->t);
}

enum pth_kind { K_PLAIN, K_TIMED, K_CLOCK };

static __attribute__((noinline)) int pth_cond_call(struct pth_cu *cu, enum pth_kind k, pthread_cond_t *c,
						    pthread_mutex_t *m, clockid_t clk,
						    const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(pth_cu_handler, cu);
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

	pthread_cleanup_push(pth_cu_handler, cu);
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

static __attribute__((noinline)) int pth_join_call(struct pth_cu *cu, enum pth_kind k, pthread_t th,
						    void **rv, clockid_t clk, const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(pth_cu_handler, cu);
	if (k == K_PLAIN)
		ret = real_pthread_join(th, rv);
	else if (k == K_TIMED)
		ret = real_pthread_timedjoin_np(th, rv, ts);
	else
		ret = real_pthread_clockjoin_np(th, rv, clk, ts);
	pthread_cleanup_pop(0);
	return ret;
}

/* ---- condition variables ----------------------------------------------------------------- */

/* Enter, release of the mutex at the same time, the wait, re-acquisition
 * (the mutex is held again on return, also after a timeout), Leave. */
static inline int pth_cond_wait(enum pth_rgn r, enum pth_kind k, pthread_cond_t *c, pthread_mutex_t *m,
				clockid_t clk, const struct timespec *ts)
{
	struct tr_thread *t = pth_get();
	if (!t)
		return k == K_PLAIN ? real_pthread_cond_wait(c, m) :
		       k == K_TIMED ? real_pthread_cond_timedwait(c, m, ts) :
				      real_pthread_cond_clockwait(c, m, clk, ts);
	struct pth_cu cu = { t, r, NULL };
	uint64_t now = tr_time();

	tr_enter(t, now, pth_rgn[r]);
	if (pth_released(t, now, m))
		cu.mutex = m;
	int ret = pth_cond_call(&cu, k, c, m, clk, ts);
	now = tr_time();
	if (cu.mutex)
		now = pth_acquired(t, now, m, 0);
	tr_leave(t, now, pth_rgn[r]);
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

/* A non-blocking call: Enter/Leave at one timestamp. */
#define PTH_POINT_BODY(R, CALL)                                          \
	struct tr_thread *t = pth_get();                                  \
	if (!t)                                                           \
		return CALL;                                              \
	uint64_t now = tr_time();                                         \
	tr_enter(t, now, pth_rgn[R]);                                     \
	int ret = CALL;                                                   \
	tr_leave(t, now, pth_rgn[R]);                                     \
	tr_thread_put(t);                                                 \
	return ret

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
	tr_enter(t, tr_time(), pth_rgn[R_BARRIER_WAIT]);
	int ret = real_pthread_barrier_wait(b);
	tr_leave(t, tr_time(), pth_rgn[R_BARRIER_WAIT]);
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
static inline int pth_sem_wait(enum pth_rgn r, enum pth_kind k, sem_t *s, clockid_t clk,
			       const struct timespec *ts)
{
	struct tr_thread *t = NULL;

	if (atomic_load_explicit(&pth_on, memory_order_relaxed)) {
		pthread_testcancel();
		t = pth_get();
	}
	if (!t)
		return k == K_PLAIN ? real_sem_wait(s) :
		       k == K_TIMED ? real_sem_timedwait(s, ts) : real_sem_clockwait(s, clk, ts);
	int ret = real_sem_trywait(s);
	int err = errno;
	uint64_t now = tr_time();

	tr_enter(t, now, pth_rgn[r]);
	if (ret != 0) {
		struct pth_cu cu = { t, r, NULL };

		/* The failed try left EAGAIN in errno; a blocking call that then
		 * succeeds does not touch errno, so give it the program's errno
		 * back first (tr_leave passes errno on to the program). */
		errno = t->saved_errno;
		ret = pth_sem_call(&cu, k, s, clk, ts, &err);
		now = tr_time();
	}
	tr_leave(t, now, pth_rgn[r]);
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
	tr_enter(t, now, pth_rgn[R]);                                     \
	int ret = CALL;                                                   \
	int err = errno;                                                  \
	tr_leave(t, now, pth_rgn[R]);                                     \
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

/* ---- thread life cycle ------------------------------------------------------------------------ */

/*
 * The start record is malloc'ed by the creator (pthread_create is not the
 * hot path) and freed by the new thread as soon as it has copied it (or by
 * the creator if the creation failed): nothing can leak, whatever the
 * thread does later (detach, never joined, cancel, exit).
 *
 * The thread's sequence count lives in its tr_thread (t->seq, see
 * tracer.h) until its ThreadEnd is written, then it is set to 0; every
 * path that ends a thread goes through pth_write_thread_end under
 * pth_end_lock, so a thread still running at exit (ended by the exiting
 * thread through thread_fini) never gets two ThreadEnd records.
 */
struct pth_start {
	void *(*fn)(void *);
	void *arg;
	uint64_t seq;
	uint32_t index;     /* location index reserved by the creator */
};

static pthread_mutex_t pth_end_lock = PTHREAD_MUTEX_INITIALIZER;

/* pthread_t -> sequence count of joinable threads, for ThreadWait. */
struct pth_jnode {
	pthread_t th;
	uint64_t seq;
	struct pth_jnode *next;
};
#define PTH_JBUCKETS 256
static pthread_mutex_t pth_join_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pth_jnode *pth_join_tab[PTH_JBUCKETS];

static unsigned pth_jhash(pthread_t th)
{
	uint64_t h = (uint64_t)th * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 56) % PTH_JBUCKETS;
}

/* Under pth_join_lock. Returns the node removed (caller frees), or NULL. */
static struct pth_jnode *pth_join_remove_locked(pthread_t th)
{
	struct pth_jnode **pp = &pth_join_tab[pth_jhash(th)];

	for (; *pp; pp = &(*pp)->next) {
		if (pthread_equal((*pp)->th, th)) {
			struct pth_jnode *n = *pp;

			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

/* Sequence count of a joinable thread, forgotten (join/detach). 1: found. */
static int pth_join_take(pthread_t th, uint64_t *seq)
{
	struct pth_jnode *n;

	real_pthread_mutex_lock(&pth_join_lock);
	n = pth_join_remove_locked(th);
	real_pthread_mutex_unlock(&pth_join_lock);
	if (!n)
		return 0;
	*seq = n->seq;
	free(n);
	return 1;
}

/* ThreadEnd of t if not written yet. own: t is the calling thread's state
 * (else: a thread still running at exit, written by the exiting thread). */
static void pth_write_thread_end(struct tr_thread *t, int own)
{
	real_pthread_mutex_lock(&pth_end_lock);
	if (t->seq) {
		uint64_t now = tr_time();

		if (own) {
			if (tr_rec_begin(t)) {
				tr_evt_status(t, otf2w_evt_thread_end(t->w, NULL, now, pth_comm, t->seq));
				tr_rec_end(t);
			}
		} else if (t->w && !t->closed) {
			/* Stopped by the exiting thread: its clock may be behind
			 * the thread's last event. */
			uint64_t last = otf2w_evt_writer_last_time(t->w);

			tr_evt_status(t, otf2w_evt_thread_end(t->w, NULL, now > last ? now : last,
							      pth_comm, t->seq));
		}
		t->seq = 0;
	}
	real_pthread_mutex_unlock(&pth_end_lock);
}

/* In the thread: its start routine returned, called pthread_exit or was
 * cancelled (cleanup handler; glibc runs it with cancellation disabled). */
static void pth_thread_end(void *unused)
{
	struct tr_thread *t;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	t = tr_thread_get();
	if (t) {
		/* TRACER_ON_FULL=stop: a location stopped by a full buffer is
		 * written out and resumed first, so its ThreadEnd is not
		 * dropped (no-op otherwise; cancellation is disabled here). */
		tr_thread_ending(t);
		/* regions still open (a VT_begin without VT_end before
		 * pthread_exit or the return): their Leaves go before the
		 * ThreadEnd, which stays the location's last record (the core
		 * would close them later, after it) */
		tr_stack_leave_to(t, 0, tr_time());
		pth_write_thread_end(t, 1);
		tr_thread_put(t);
	}
	/* No pthread events after ThreadEnd (TLS destructors run later), and
	 * close the location now rather than in the core's TSD destructor;
	 * unless this thread became a fork child's master thread (its end is
	 * the end of the process, written at exit). */
	t = tr_thread_peek();
	if (t && t->index != 0) {
		pth_tls.ended = 1;
		tr_thread_end(t);
	}
	pthread_setcancelstate(old, NULL);
}

static void *pth_start_routine(void *p)
{
	struct pth_start s = *(struct pth_start *)p;
	struct tr_thread *t;
	void *ret;
	int old;

	free(p);
	/* Creating the location may hit cancellation points (file I/O): a
	 * pending cancel must not act while the guard is held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	t = tr_thread_begin_index(s.index);
	if (t) {
		t->seq = s.seq;
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_thread_begin(t->w, NULL, tr_time(), pth_comm, s.seq));
			tr_rec_end(t);
		}
		tr_thread_put(t);
	}
	pthread_setcancelstate(old, NULL);

	pthread_cleanup_push(pth_thread_end, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/*
 * Threads created while their creator is inside the tracer (the guard is
 * held: e.g. the progress threads Open MPI starts in MPI_Init, called by the
 * MPI wrapper) or by such a thread belong to a wrapped library, not to the
 * program: their pthread calls are not recorded (without this, each MPI
 * rank shows two extra locations full of Open MPI's internal locking).
 */
struct pth_quiet {
	void *(*fn)(void *);
	void *arg;
};

static void *pth_quiet_routine(void *p)
{
	struct pth_quiet q = *(struct pth_quiet *)p;

	free(p);
	pth_tls.quiet = 1;
	pth_tls.ended = 1;
	return q.fn(q.arg);
}

static int pth_create_untraced(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct tr_thread *self;
	struct pth_quiet *q;
	int ret;

	if (!atomic_load_explicit(&pth_on, memory_order_relaxed) || pth_resolving)
		return real_pthread_create(th, attr, fn, arg);
	self = tr_thread_peek();
	if (!pth_tls.quiet && !(self && self->guard > 0))
		return real_pthread_create(th, attr, fn, arg);
	q = malloc(sizeof(*q));
	if (!q)
		return real_pthread_create(th, attr, fn, arg);
	q->fn = fn;
	q->arg = arg;
	ret = real_pthread_create(th, attr, pth_quiet_routine, q);
	if (ret)
		free(q);
	return ret;
}

TR_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	PTH_INIT(pthread_create);
	struct tr_thread *t = pth_get();
	struct pth_start *s;
	struct pth_jnode *j;
	int ret, err, ds = PTHREAD_CREATE_JOINABLE;
	uint64_t seq, t0;

	if (!t)
		return pth_create_untraced(th, attr, fn, arg);
	s = malloc(sizeof(*s));
	j = malloc(sizeof(*j));
	if (!s || !j) {
		free(s);
		free(j);
		tr_thread_put(t);
		return real_pthread_create(th, attr, fn, arg);
	}
	seq = tr_thread_reserve_seq();
	s->fn = fn;
	s->arg = arg;
	s->seq = seq;
	s->index = tr_thread_reserve_index();
	if (attr)
		pthread_attr_getdetachstate(attr, &ds);

	t0 = tr_time();
	tr_enter(t, t0, pth_rgn[R_CREATE]);
	/* Held across the creation so that a join that returns before the
	 * handle is inserted still finds it. */
	real_pthread_mutex_lock(&pth_join_lock);
	ret = real_pthread_create(th, attr, pth_start_routine, s);
	err = errno;
	if (ret == 0 && ds != PTHREAD_CREATE_DETACHED) {
		struct pth_jnode *old = pth_join_remove_locked(*th);   /* stale: handle reused */

		j->th = *th;
		j->seq = seq;
		j->next = pth_join_tab[pth_jhash(*th)];
		pth_join_tab[pth_jhash(*th)] = j;
		j = old;
	}
	real_pthread_mutex_unlock(&pth_join_lock);
	free(j);
	if (ret == 0) {
		/* s belongs to the new thread now (it may be freed already) */
		atomic_fetch_add_explicit(&pth_ncreated, 1, memory_order_relaxed);
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_thread_create(t->w, NULL, t0, pth_comm, seq));
			tr_rec_end(t);
		}
	} else {
		free(s);
	}
	tr_leave(t, tr_time(), pth_rgn[R_CREATE]);
	pth_put_errno(t, err);
	return ret;
}

/* After a join call returned: ThreadWait when the thread was reaped. */
static int pth_joined(struct tr_thread *t, enum pth_rgn r, pthread_t th, int ret)
{
	uint64_t now = tr_time(), seq;

	if (ret == 0 && pth_join_take(th, &seq) && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_thread_wait(t->w, NULL, now, pth_comm, seq));
		tr_rec_end(t);
	}
	tr_leave(t, now, pth_rgn[r]);
	tr_thread_put(t);
	return ret;
}

static inline int pth_join(enum pth_rgn r, enum pth_kind k, pthread_t th, void **rv, clockid_t clk,
			   const struct timespec *ts)
{
	struct tr_thread *t = pth_get();
	if (!t)
		return k == K_PLAIN ? real_pthread_join(th, rv) :
		       k == K_TIMED ? real_pthread_timedjoin_np(th, rv, ts) :
				      real_pthread_clockjoin_np(th, rv, clk, ts);
	struct pth_cu cu = { t, r, NULL };

	tr_enter(t, tr_time(), pth_rgn[r]);
	return pth_joined(t, r, th, pth_join_call(&cu, k, th, rv, clk, ts));
}

TR_EXPORT int pthread_join(pthread_t th, void **rv)
{
	PTH_INIT(pthread_join);
	return pth_join(R_JOIN, K_PLAIN, th, rv, 0, NULL);
}

TR_EXPORT int pthread_timedjoin_np(pthread_t th, void **rv, const struct timespec *ts)
{
	PTH_INIT(pthread_timedjoin_np);
	return pth_join(R_TIMEDJOIN, K_TIMED, th, rv, 0, ts);
}

TR_EXPORT int pthread_clockjoin_np(pthread_t th, void **rv, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(pthread_clockjoin_np);
	return pth_join(R_CLOCKJOIN, K_CLOCK, th, rv, clk, ts);
}

TR_EXPORT int pthread_tryjoin_np(pthread_t th, void **rv)
{
	PTH_INIT(pthread_tryjoin_np);
	struct tr_thread *t = pth_get();
	if (!t)
		return real_pthread_tryjoin_np(th, rv);
	tr_enter(t, tr_time(), pth_rgn[R_TRYJOIN]);
	return pth_joined(t, R_TRYJOIN, th, real_pthread_tryjoin_np(th, rv));
}

TR_EXPORT int pthread_detach(pthread_t th)
{
	PTH_INIT(pthread_detach);
	struct tr_thread *t = pth_get();
	uint64_t seq;
	if (!t)
		return real_pthread_detach(th);
	uint64_t now = tr_time();
	tr_enter(t, now, pth_rgn[R_DETACH]);
	int ret = real_pthread_detach(th);
	if (ret == 0)
		pth_join_take(th, &seq);   /* never joined: no ThreadWait */
	tr_leave(t, now, pth_rgn[R_DETACH]);
	tr_thread_put(t);
	return ret;
}

TR_EXPORT int pthread_cancel(pthread_t th)
{
	PTH_INIT(pthread_cancel);
	PTH_POINT_BODY(R_CANCEL, real_pthread_cancel(th));
}

/*
 * Thread names become location names (no region: the call is not a
 * synchronization). The kernel keeps 15 characters; so does the location.
 */
static void pth_name(pthread_t th, const char *name)
{
	char n[16];
	size_t l = strnlen(name, sizeof(n) - 1);
	memcpy(n, name, l);
	n[l] = 0;
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_thread_set_name((uint64_t)th, n);
	tr_thread_put(t);
}

TR_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	PTH_INIT(pthread_setname_np);
	int ret = real_pthread_setname_np(th, name);
	if (ret == 0) {
		int saved = errno;
		pth_name(th, name);
		errno = saved;
	}
	return ret;
}

TR_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	PTH_INIT(prctl);
	int ret = real_prctl(option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_NAME && a2) {
		int saved = errno;
		pth_name(pthread_self(), (const char *)a2);
		errno = saved;
	}
	return ret;
}

/*
 * pthread_exit: a point region (Enter/Leave at one timestamp: the call
 * never returns). The unwinding then runs the application's cleanup
 * handlers (their unlocks are recorded) and last pth_thread_end, pushed by
 * pth_start_routine, which writes ThreadEnd.
 */
TR_EXPORT void pthread_exit(void *rv)
{
	PTH_INIT(pthread_exit);
	struct tr_thread *t = pth_get();
	if (t) {
		uint64_t now = tr_time();

		tr_enter(t, now, pth_rgn[R_EXIT]);
		tr_leave(t, now, pth_rgn[R_EXIT]);
		tr_thread_put(t);
	}
	tr_io_thread_exiting();   /* (durable) the main thread's exit: tracer-io must not outlive it */
	real_pthread_exit(rv);
	__builtin_unreachable();
}

/* ---- module hooks --------------------------------------------------------------------------------- */

/* Before the writer of t closes: in the thread (core's TSD destructor,
 * tr_thread_end) or at exit for a thread still running. */
static void pth_thread_fini(struct tr_thread *t)
{
	if (!atomic_load_explicit(&pth_on, memory_order_relaxed) || !t->seq)
		return;
	pth_write_thread_end(t, tr_thread_peek() == t);
}

/* Crash path: the ThreadEnd of a thread still running (no lock: every
 * other thread is stopped; a thread inside pth_write_thread_end is inside a
 * record and not passed here). */
static void pth_thread_fini_crash(struct tr_thread *t)
{
	if (!atomic_load_explicit(&pth_on, memory_order_relaxed) || !t->seq || !t->w || t->closed)
		return;
	uint64_t now = tr_time();
	uint64_t last = otf2w_evt_writer_last_time(t->w);
	otf2w_evt_thread_end(t->w, NULL, now > last ? now : last, pth_comm, t->seq);
	t->seq = 0;
}

static void pth_fork_child(void)
{
	/* Only the forking thread exists in the child; the tables describe
	 * the parent's threads and locks held there. */
	pth_end_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	pth_join_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	memset(pth_join_tab, 0, sizeof(pth_join_tab));
	pth_tls.nheld = 0;
	pth_tls.lost = 0;
	tr_pth_lock_reset();
	/* The forking thread is the child's master thread: no ThreadEnd. */
	struct tr_thread *t = tr_thread_peek();
	if (t)
		t->seq = 0;
}

static void pth_init(void)
{
	pth_resolve_all();
	if (!tr_cfg.pthread)
		return;   /* TRACER_PTHREAD=off: every wrapper passes through */
	if (tr_pth_lock_init()) {
		tr_log_error("pthread: cannot map the lock table (%s); pthread tracing disabled",
			     strerror(errno));
		return;
	}
	for (int i = 0; i < R_N; i++)
		pth_rgn[i] = tr_def_region(pth_rgn_def[i].name, pth_rgn_def[i].name, "", pth_rgn_def[i].role,
					   OTF2W_PARADIGM_PTHREAD, OTF2W_REGION_FLAG_NONE, "", 0, 0);
	pth_comm = tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, "pthread threads");
	atomic_store_explicit(&pth_on, 1, memory_order_release);
}

static void pth_fini(void)
{
	if (tr_pth_lock_overflowed())
		tr_log_warn("pthread: more than %u distinct locks; some lock ids are shared",
			    TR_PTH_LOCK_SLOTS);
	tr_log_debug("pthread: %u locks, %llu threads started", tr_pth_lock_count(),
		     (unsigned long long)atomic_load(&pth_ncreated));
}

static const struct tr_module pth_module = {
	.name = "pthread",
	.init = pth_init,
	.thread_fini = pth_thread_fini,
	.fini = pth_fini,
	.fork_child = pth_fork_child,
	.thread_fini_crash = pth_thread_fini_crash,
};

/* Registered after sampling/ (priority 210): the thread_fini hooks run in
 * registration order, and for a thread still running at exit sampling's
 * hook writes the CallingContextLeave records of its open regions - they
 * must come before the ThreadEnd written by pth_thread_fini. */
__attribute__((constructor(211))) static void pth_ctor(void)
{
	pth_resolve_all();
	tr_module_register(&pth_module);
}
