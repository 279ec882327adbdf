/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_wrap.h - internals shared by the pthread wrappers: pthread.c
 * (the tables generated from pthread_list.h, the resolver, the module),
 * pthread_sync.c (locks, condition variables, barriers, semaphores) and
 * pthread_thread.c (thread life cycle). The lock table: pthread_int.h.
 * Not a public header.
 */
#ifndef TR_PTHREAD_WRAP_H
#define TR_PTHREAD_WRAP_H

#include <stdatomic.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include "tracer.h"
#include "pthread_list.h"
#include "pthread_int.h"

/* Real functions, the wrappers' prototypes and the regions, from the list. */
#define PTH_REAL_N(fn, version, ret, params) TR_HIDDEN extern ret (*real_##fn) params;
#define PTH_REAL_R(fn, rgn, role, version, ret, params) PTH_REAL_N(fn, version, ret, params)
TR_PTH_FUNCS(PTH_REAL_R, PTH_REAL_N)
#define PTH_PROTO_N(fn, version, ret, params) TR_EXPORT ret fn params;
#define PTH_PROTO_R(fn, rgn, role, version, ret, params) PTH_PROTO_N(fn, version, ret, params)
TR_PTH_FUNCS(PTH_PROTO_R, PTH_PROTO_N)

#define PTH_ENUM_R(fn, rgn, ...) R_##rgn,
#define PTH_ENUM_N(...)
enum tr_pth_rgn {
	TR_PTH_FUNCS(PTH_ENUM_R, PTH_ENUM_N)
	R_N
};

/* Region ids + 1, 0 until the region's first call: a process defines only
 * the pthread regions it calls. pth_region(r) defines it then (pthread.c);
 * tr_pth_code[r] is set before tr_pth_rgn[r]. */
extern uint32_t tr_pth_rgn[R_N];
extern struct tr_call_code tr_pth_code[R_N];   /* their Enter/Leave records encoded */
extern uint32_t tr_pth_comm;             /* PTHREAD thread contingent */
extern _Atomic int tr_pth_on;            /* 1 once pth_init defined everything (TRACER_PTHREAD on) */
extern TR_TLS int tr_pth_resolving;      /* inside the resolver (dlsym may lock a mutex) */

uint32_t tr_pth_region_define(enum tr_pth_rgn r);
static inline uint32_t pth_region(enum tr_pth_rgn r)
{
	uint32_t v = __atomic_load_n(&tr_pth_rgn[r], __ATOMIC_ACQUIRE);
	return tr_likely(v) ? v - 1 : tr_pth_region_define(r);
}

/* Lazily resolve (a call made before our constructor ran). */
#define PTH_INIT(fn)                                                  \
	do {                                                          \
		if (tr_unlikely(!real_##fn))                          \
			tr_pth_resolve_slow((void **)&real_##fn, #fn); \
	} while (0)
void tr_pth_resolve_slow(void **slot, const char *name);
/* Every real function of the table, once (pthread.c: at the first call). */
void tr_pth_resolve(void);

/* Locks this thread holds, with the acquisition order its release repeats. */
#define PTH_MAX_HELD 32
struct pth_held {
	uintptr_t addr;
	otf2w_code code;   /* model and id encoded (pth_lock_code; the id: pth_code_id) */
	uint32_t order;
};

/* Per-thread state: initial-exec so that an access never allocates. */
struct pth_thread_state {
	/* the thread's tracer state (tr_tls_self) once a call found its
	 * pthread calls recorded (tr_pth_on, not ended): pth_enter's one TLS
	 * load; NULL: ask tr_pth_get_slow. Cleared when ended is set. */
	struct tr_thread *self;
	int ended;                  /* no pthread events: ThreadEnd written, or quiet */
	int quiet;                  /* internal thread of a wrapped library (see pth_quiet_routine) */
	uint32_t nheld;
	uint32_t lost;              /* acquisitions recorded beyond PTH_MAX_HELD */
	struct pth_held held[PTH_MAX_HELD];
	otf2w_attr_list *al;        /* a lock's address on its first acquisition (pth_lock_attrs) */
};
extern TR_TLS struct pth_thread_state tr_pth_tls;

/* The calling thread's tracer state when its pthread calls are recorded,
 * guard taken as by tr_thread_get but errno not saved (the lock and unlock
 * paths: their records leave errno alone, their slow parts save it
 * themselves); NULL: call the real function untraced. A state returned
 * implies tr_pth_on, hence the real functions resolved. */
struct tr_thread *tr_pth_get_slow(void);
static TR_ALWAYS_INLINE struct tr_thread *pth_enter(void)
{
	struct tr_thread *t = tr_pth_tls.self;

	if (tr_likely(t && t->state == TR_T_ACTIVE && t->guard == 0)) {
		t->guard = 1;
		return t;
	}
	if (!atomic_load_explicit(&tr_pth_on, memory_order_relaxed))
		return NULL;   /* TRACER_PTHREAD=off (or not yet): pass through at once */
	return tr_pth_get_slow();
}

/* The same with errno saved (tr_thread_get): every other wrapper. */
static inline struct tr_thread *pth_get(void)
{
	struct tr_thread *t = pth_enter();

	if (t)
		t->saved_errno = *t->errnop;
	return t;
}

/* tr_thread_put, then the errno the real call left (errno-reporting calls). */
static inline void pth_put_errno(struct tr_thread *t, int err)
{
	tr_thread_put(t);
	errno = err;
}

/* ---- lock events (inline: the hot path of every lock wrapper) ---- */

/* The next acquisition order of lock l: counted atomically when other
 * holders may acquire it concurrently (a read lock, an overflow slot shared
 * by several locks); an exclusive holder's lock orders the increments. */
static TR_ALWAYS_INLINE uint32_t pth_next_order(struct tr_pth_lock *l, int concurrent)
{
	uint32_t order;

	if (concurrent)
		return atomic_fetch_add_explicit(&l->order, 1, memory_order_relaxed) + 1;
	order = atomic_load_explicit(&l->order, memory_order_relaxed) + 1;
	atomic_store_explicit(&l->order, order, memory_order_relaxed);
	return order;
}

/*
 * The lock at addr was acquired by this thread; `time` was read right after
 * the lock call returned. shared: other holders may acquire it concurrently
 * (read lock): count atomically. Sets the lock's id and this acquisition's
 * order and returns the timestamp of the acquisition.
 *
 * rdtsc is not ordered with the atomic instruction that took the lock: when
 * the lock's cache line comes from another core (the lock was handed over),
 * the clock may have been read before the lock was ours, i.e. before the
 * previous holder's release. Then read it again behind a fence, so that
 * acquisition times follow acquisition orders. A lock taken again by its
 * last holder (the uncontended case) needs no fence.
 */
static inline struct tr_pth_lock *pth_acquire_note(struct tr_thread *t, uint64_t *time, const void *addr,
						  int shared, uint32_t *id, uint32_t *order)
{
	struct tr_pth_lock *l = tr_pth_lock_get((uintptr_t)addr);
	uint32_t me = t->index + 1;

	*id = atomic_load_explicit(&l->id, memory_order_relaxed) - 1;
	if (tr_unlikely(atomic_load_explicit(&l->holder, memory_order_relaxed) != me)) {
		uint64_t again;

		atomic_store_explicit(&l->holder, me, memory_order_relaxed);
		tr_clock_fence();
		again = tr_time();
		if (again > *time)   /* never before the Enter already written */
			*time = again;
	}

	*order = pth_next_order(l, shared || tr_unlikely(atomic_load_explicit(&l->key, memory_order_relaxed) <=
							 TR_PTH_LOCK_OVERFLOW));
	return l;
}

/* The model and id of lock l (id) encoded for its records: computed by the
 * first acquisition recorded, the same value by any thread (nonzero: the
 * id is published). */
static inline otf2w_code pth_lock_code(struct tr_pth_lock *l, uint32_t id)
{
	otf2w_code c = atomic_load_explicit(&l->code, memory_order_relaxed);

	if (tr_unlikely(c == 0)) {
		c = otf2w_code_thread_lock(OTF2W_PARADIGM_PTHREAD, id);
		atomic_store_explicit(&l->code, c, memory_order_relaxed);
	}
	return c;
}

/* A recorded acquisition: its release repeats code (model and id) and order. */
static TR_ALWAYS_INLINE void pth_hold(const void *addr, otf2w_code code, uint32_t order)
{
	uint32_t n = tr_pth_tls.nheld;

	if (tr_likely(n < PTH_MAX_HELD)) {
		tr_pth_tls.held[n].addr = (uintptr_t)addr;
		tr_pth_tls.held[n].code = code;
		tr_pth_tls.held[n].order = order;
		tr_pth_tls.nheld = n + 1;
	} else {
		tr_pth_tls.lost++;
	}
}

/* The attributes of a ThreadAcquireLock of lock l at addr: its address
 * (TRACER::LOCK_ADDRESS) on its first recorded acquisition (its record code
 * not computed yet: two threads at once both write it), else NULL. Slow
 * paths only (the thread's list is made at its first use). pthread_sync.c. */
const otf2w_attr_list *pth_lock_attrs(struct tr_pth_lock *l, const void *addr);
uint32_t tr_pth_lock_attr(void);   /* the Attribute TRACER::LOCK_ADDRESS (defined at its first use) */

/* pth_acquire_note, then the ThreadAcquireLock at the returned time (use
 * it for the Leave). */
static inline uint64_t pth_acquired(struct tr_thread *t, uint64_t time, const void *addr, int shared)
{
	uint32_t id, order;
	struct tr_pth_lock *l = pth_acquire_note(t, &time, addr, shared, &id, &order);

	/* Not recorded (measurement off, location stopped): nor is its release. */
	if (!tr_rec_begin(t))
		return time;
	tr_evt_status(t, otf2w_evt_thread_acquire_lock(t->w, pth_lock_attrs(l, addr), time, OTF2W_PARADIGM_PTHREAD,
							id, order));
	tr_rec_end(t);
	pth_hold(addr, pth_lock_code(l, id), order);
	return time;
}

/*
 * The lock at addr was taken at once by the call of region r (its
 * non-blocking attempt succeeded; `time` read right after): Enter,
 * ThreadAcquireLock and Leave at one time, one record group (the hot path
 * of every lock wrapper), then the guard is released (tr_thread_put_keep:
 * errno is still the call's). Inline only when the lock is in its home
 * slot of the table with its code known and this thread was its last
 * holder (no fence, see pth_acquire_note) and the group fits; everything
 * else is tr_pth_took_slow (pthread_sync.c), which goes the general way
 * when the acquisition is later than time (handed over) or the group
 * cannot be written (tr_call_begin).
 */
void tr_pth_took_slow(struct tr_thread *t, uint64_t time, enum tr_pth_rgn r, const void *addr, int shared);
static TR_ALWAYS_INLINE void pth_took(struct tr_thread *t, uint64_t time, enum tr_pth_rgn r, const void *addr,
				       int shared)
{
	struct tr_pth_lock *l = &tr_pth_lock_tab[tr_pth_lock_hash((uintptr_t)addr)];
	otf2w_code code;
	uint8_t *p;

	if (tr_likely(atomic_load_explicit(&l->key, memory_order_acquire) == (uintptr_t)addr &&
		      (code = atomic_load_explicit(&l->code, memory_order_relaxed)) != 0 &&
		      atomic_load_explicit(&l->holder, memory_order_relaxed) == t->index + 1 &&
		      __atomic_load_n(&tr_pth_rgn[r], __ATOMIC_ACQUIRE) != 0) &&
	    (p = tr_call_begin(t, time, &tr_pth_code[r], OTF2W_EVT_THREAD_ACQUIRE_LOCK_MAX)) != NULL) {
		uint32_t order;

		/* a known code means a published id; the home slot is no
		 * overflow slot: exclusive holders order the increments */
		order = pth_next_order(l, shared);
		pth_hold(addr, code, order);   /* first: less to keep across tr_call_end */
		p = otf2w_evt_put_thread_lock_code(p, OTF2W_EVT_THREAD_ACQUIRE_LOCK_ID, code, order);
		tr_call_end(t, p, &tr_pth_code[r], 1);
		tr_thread_put_keep(t);
		return;
	}
	tr_pth_took_slow(t, time, r, addr, shared);
}

/* The lock at addr is about to be released (time: 0 = read the clock only
 * if the release is recorded; guard held, errno saved). 1 if a
 * ThreadReleaseLock was written. pthread_sync.c. */
int tr_pth_released(struct tr_thread *t, uint64_t time, const void *addr);

/*
 * An unlock call (guard held by pth_enter, errno not saved): the
 * ThreadReleaseLock of the lock at addr before the real unlock. Inline when
 * it is the lock acquired last (held list) and the record fits (one group);
 * else tr_pth_unlocking_slow (pthread_sync.c: errno saved and restored
 * around tr_pth_released, at the time read here).
 */
void tr_pth_unlocking_slow(struct tr_thread *t, uint64_t time, const void *addr);
static TR_ALWAYS_INLINE void pth_unlocking(struct tr_thread *t, const void *addr)
{
	uint64_t time = tr_time();   /* first: less to keep across its call (clock_gettime) */
	uint32_t n = tr_pth_tls.nheld;
	uint8_t *p;

	if (tr_likely(n > 0 && tr_pth_tls.held[n - 1].addr == (uintptr_t)addr) &&
	    (p = tr_fast_begin(t, time, OTF2W_EVT_THREAD_RELEASE_LOCK_MAX + OTF2W_CODE_SLACK)) != NULL) {
		p = otf2w_evt_put_thread_lock_code(p, OTF2W_EVT_THREAD_RELEASE_LOCK_ID, tr_pth_tls.held[n - 1].code,
						   tr_pth_tls.held[n - 1].order);
		tr_pth_tls.nheld = n - 1;
		tr_fast_end(t, p, 1);
		return;
	}
	tr_pth_unlocking_slow(t, time, addr);
}

/* A non-blocking call: Enter/Leave at one timestamp. ERRNO: the call
 * reports a failure through errno (semaphores), which the program then gets
 * instead of its own errno back. */
#define PTH_POINT_BODY_ERRNO(R, CALL, ERRNO)                             \
	struct tr_thread *t = pth_get();                                  \
	if (!t)                                                           \
		return CALL;                                              \
	uint64_t now = tr_time();                                         \
	tr_enter(t, now, pth_region(R));                                  \
	int ret = CALL;                                                   \
	int err = errno;                                                  \
	tr_leave(t, now, pth_region(R));                                  \
	if ((ERRNO) && ret != 0)                                          \
		pth_put_errno(t, err);                                    \
	else                                                              \
		tr_thread_put(t);                                         \
	return ret
#define PTH_POINT_BODY(R, CALL) PTH_POINT_BODY_ERRNO(R, CALL, 0)

/* ---- cancellation inside a recorded blocking call ---- */

/*
 * A cancellation point acted upon while the call was recorded: close the
 * region (and, for a condition wait, record the mutex that glibc took back
 * before running the cleanup handlers) and drop the recursion guard. The
 * cleanup handler is pushed in small noinline helpers (pthread_cleanup_push
 * is a setjmp: keeping it out of the wrappers keeps their locals safe).
 */
struct pth_cu {
	struct tr_thread *t;
	enum tr_pth_rgn rgn;
	const void *mutex;    /* condition wait: mutex released and re-acquired */
};

void tr_pth_cu_handler(void *p);   /* pthread.c */

enum pth_kind { K_PLAIN, K_TIMED, K_CLOCK };

/* pthread_thread.c: ThreadEnd of t (own: t is the calling thread), the
 * threads started so far, the fork child's reset of its tables. */
void tr_pth_write_thread_end(struct tr_thread *t, int own);
extern _Atomic uint64_t tr_pth_ncreated;
void tr_pth_thread_fork_child(void);

#endif /* TR_PTHREAD_WRAP_H */
