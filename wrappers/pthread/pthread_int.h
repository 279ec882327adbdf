/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_int.h - the lock table of the pthread wrappers (pthread_lock.c;
 * used by pthread_wrap.h and the unit test). Not a public header.
 */
#ifndef TR_PTHREAD_INT_H
#define TR_PTHREAD_INT_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * Lock table: lock address -> dense lock id (first-use order) and the
 * acquisition counter of that lock. Open addressing with linear probing in
 * one preallocated mmap'ed array; slots are claimed with a CAS on the key
 * and never freed, so lookups take no lock and allocate nothing. A lock
 * destroyed and re-created at the same address keeps its id (its
 * acquisition orders simply go on increasing).
 */
struct tr_pth_lock {
	_Atomic uintptr_t key;     /* lock address; 0 = free slot */
	_Atomic uint32_t id;       /* dense lock id + 1; 0 while being published */
	_Atomic uint32_t order;    /* acquisitions so far = last acquisitionOrder */
	_Atomic uint32_t holder;   /* location index + 1 of the last acquirer */
	uint32_t pad;
	/* the lock's model and id encoded for its records (an otf2w_code of
	 * wrappers/pthread/pthread_wrap.h, 0 until its first recorded acquisition) */
	_Atomic uint64_t code;     /* 32 bytes: a slot never straddles a cache line */
};

#define TR_PTH_LOCK_BITS   18                      /* 256Ki slots, 8 MiB virtual */
#define TR_PTH_LOCK_SLOTS  (1u << TR_PTH_LOCK_BITS)
#define TR_PTH_LOCK_PROBES 256                     /* then the overflow slots */
#define TR_PTH_LOCK_OVERFLOW 64

/* Maps the table (init, not hot). 0 on success, -1 when mmap failed. */
int tr_pth_lock_init(void);
/* Slot of the lock at `addr` (created on first use); never NULL once
 * initialized: a full table maps into a few shared overflow slots (whose
 * ids are then shared by several locks). Hot path: no lock, no malloc. */
struct tr_pth_lock *tr_pth_lock_slow(uintptr_t addr);
/* In a fork child: forget every lock (ids and orders restart, so the
 * child's archive numbers its locks from 0 and their orders from 1). */
void tr_pth_lock_reset(void);
/* Number of distinct locks seen, and whether the overflow was used. */
uint32_t tr_pth_lock_count(void);
int tr_pth_lock_overflowed(void);
/* The address of lock id (dense, < tr_pth_lock_count()), 0 when not known
 * (an overflow slot's id, shared by several locks, or not published yet). */
uintptr_t tr_pth_lock_address(uint32_t id);
/* The locks in a file mapping (static or global mutexes) as properties
 * TRACER::LOCK_SITE::<id> of the master location, the others made by an
 * init call as TRACER::LOCK_INIT::<id> (its caller's code address)
 * (pthread_site.c): each call looks at the ids seen since the last; reset
 * in a fork child. */
void tr_pth_lock_sites(void);
void tr_pth_lock_sites_reset(void);

/* Where locks were made: the caller of pthread_mutex_init,
 * pthread_rwlock_init or pthread_spin_init (its return address), by the
 * lock's address (the first init at an address; a fixed table of
 * TR_PTH_INIT_SLOTS, of which 3/4 are used, then inits are not noted:
 * one load each). Never reset: a
 * fork child's locks were made where its parent's were. No lock, no
 * malloc. tr_pth_init_pc: 0 when not known. */
#define TR_PTH_INIT_BITS 16
#define TR_PTH_INIT_SLOTS (1u << TR_PTH_INIT_BITS)
void tr_pth_init_note(uintptr_t lock, uintptr_t pc);
uintptr_t tr_pth_init_pc(uintptr_t lock);

extern struct tr_pth_lock *tr_pth_lock_tab;

static inline uint32_t tr_pth_lock_hash(uintptr_t a)
{
	return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> (64 - TR_PTH_LOCK_BITS));
}

/* Fast path: the home slot already holds the lock and its id is published. */
static inline struct tr_pth_lock *tr_pth_lock_get(uintptr_t addr)
{
	struct tr_pth_lock *l = &tr_pth_lock_tab[tr_pth_lock_hash(addr)];

	if (__builtin_expect(atomic_load_explicit(&l->key, memory_order_acquire) == addr &&
			     atomic_load_explicit(&l->id, memory_order_acquire) != 0, 1))
		return l;
	return tr_pth_lock_slow(addr);
}

#endif /* TR_PTHREAD_INT_H */
