/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_lock.c - lock address -> stable dense lock id, per-lock
 * acquisition counters (see pthread_int.h).
 *
 * Lock-free: slots are claimed with one CAS on the key, the id comes from
 * a global counter and is published with a release store. A reader that
 * finds the key before the id is published spins (the publisher is two
 * instructions away from the store). Nothing is ever removed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pthread_int.h"
#include "tr_real.h"   /* tr_syscall: the table is mapped without the C library's mmap */
#include "tr_config.h"   /* TR_BIG_BSS */

#if defined(__x86_64__) || defined(__i386__)
#define pth_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define pth_cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define pth_cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

struct tr_pth_lock *tr_pth_lock_tab;
/* id -> the lock's address (an overflow slot's id: 0), mapped with the
 * table: every id is one slot's, so the ids never exceed the slots */
#define PTH_NIDS (TR_PTH_LOCK_SLOTS + TR_PTH_LOCK_OVERFLOW)
static _Atomic uintptr_t *pth_addr_of;
static struct tr_pth_lock pth_overflow[TR_PTH_LOCK_OVERFLOW];
static _Atomic uint32_t pth_next_id;
static _Atomic int pth_overflowed;

int tr_pth_lock_init(void)
{
	void *p;

	if (tr_pth_lock_tab)
		return 0;
	/* Zero pages on demand: only the slots that are hit cost memory. */
	p = tr_mem_space(sizeof(struct tr_pth_lock) * TR_PTH_LOCK_SLOTS + sizeof(uintptr_t) * PTH_NIDS);
	if (!p)
		return -1;
	pth_addr_of = (_Atomic uintptr_t *)((char *)p + sizeof(struct tr_pth_lock) * TR_PTH_LOCK_SLOTS);
	tr_pth_lock_tab = p;
	return 0;
}

void tr_pth_lock_reset(void)
{
	size_t len = sizeof(struct tr_pth_lock) * TR_PTH_LOCK_SLOTS + sizeof(uintptr_t) * PTH_NIDS;

	if (!tr_pth_lock_tab)
		return;
	/* Fresh zero pages in place (single-threaded: fork child). */
	if ((void *)tr_syscall(SYS_mmap, tr_pth_lock_tab, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
		memset(tr_pth_lock_tab, 0, len);
	memset(pth_overflow, 0, sizeof(pth_overflow));
	atomic_store_explicit(&pth_next_id, 0, memory_order_relaxed);
	atomic_store_explicit(&pth_overflowed, 0, memory_order_relaxed);
}

/* Wait until the id of a slot claimed by another thread is visible. */
static struct tr_pth_lock *pth_wait_id(struct tr_pth_lock *l)
{
	unsigned spins = 0;

	while (!atomic_load_explicit(&l->id, memory_order_acquire)) {
		if (++spins < 1024)
			pth_cpu_relax();
		else
			sched_yield();   /* publisher preempted between CAS and store */
	}
	return l;
}

/* Claim slot l for key `addr` if free (is_addr: the key is the lock's
 * address, not an overflow slot's). 1: l is now (or already was) addr's slot. */
static int pth_claim(struct tr_pth_lock *l, uintptr_t addr, int is_addr)
{
	uintptr_t k = atomic_load_explicit(&l->key, memory_order_acquire);

	if (k == 0) {
		if (atomic_compare_exchange_strong_explicit(&l->key, &k, addr, memory_order_acq_rel,
							    memory_order_acquire)) {
			uint32_t id = atomic_fetch_add_explicit(&pth_next_id, 1, memory_order_relaxed);

			if (is_addr && id < PTH_NIDS)
				atomic_store_explicit(&pth_addr_of[id], addr, memory_order_relaxed);
			atomic_store_explicit(&l->id, id + 1, memory_order_release);
			return 1;
		}
		/* lost the race: k now holds the winner's key */
	}
	if (k == addr) {
		pth_wait_id(l);
		return 1;
	}
	return 0;
}

struct tr_pth_lock *tr_pth_lock_slow(uintptr_t addr)
{
	uint32_t i = tr_pth_lock_hash(addr);
	struct tr_pth_lock *l;

	for (unsigned n = 0; n < TR_PTH_LOCK_PROBES; n++, i = (i + 1) & (TR_PTH_LOCK_SLOTS - 1)) {
		l = &tr_pth_lock_tab[i];
		if (pth_claim(l, addr, 1))
			return l;
	}
	/* Probe limit reached (hundreds of thousands of distinct locks): share
	 * a few overflow slots. Keys there are the slot index + 1 so that any
	 * address mapping to the slot uses it. */
	atomic_store_explicit(&pth_overflowed, 1, memory_order_relaxed);
	i = tr_pth_lock_hash(addr) % TR_PTH_LOCK_OVERFLOW;
	l = &pth_overflow[i];
	pth_claim(l, (uintptr_t)i + 1, 0);
	return pth_wait_id(l);
}

uint32_t tr_pth_lock_count(void)
{
	return atomic_load_explicit(&pth_next_id, memory_order_relaxed);
}

uintptr_t tr_pth_lock_address(uint32_t id)
{
	return id < PTH_NIDS && pth_addr_of ? atomic_load_explicit(&pth_addr_of[id], memory_order_relaxed) : 0;
}

int tr_pth_lock_overflowed(void)
{
	return atomic_load_explicit(&pth_overflowed, memory_order_relaxed);
}

/* ---- where locks were made (pthread_int.h) ----
 * Open addressing by the lock's address; a slot is claimed with one CAS on
 * its key, its pc stored after (a reader at the end may see a claimed slot
 * without its pc yet: 0, not known). 1 MiB of zero pages in .lbss, touched
 * only by programs that make locks with an init call. */
#define PTH_INIT_PROBES 64
static struct {
	_Atomic uintptr_t key, pc;
} pth_init[TR_PTH_INIT_SLOTS] TR_BIG_BSS;
/* slots claimed; from three quarters on nothing more is noted (a program
 * making millions of locks at new addresses must not pay a long probe
 * each, a load then) */
static _Atomic uint32_t pth_init_used;

static inline uint32_t pth_init_hash(uintptr_t a)
{
	return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> (64 - TR_PTH_INIT_BITS));
}

void tr_pth_init_note(uintptr_t lock, uintptr_t pc)
{
	if (atomic_load_explicit(&pth_init_used, memory_order_relaxed) >= TR_PTH_INIT_SLOTS / 4 * 3)
		return;
	uint32_t i = pth_init_hash(lock);
	for (unsigned n = 0; lock && n < PTH_INIT_PROBES; n++, i = (i + 1) & (TR_PTH_INIT_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&pth_init[i].key, memory_order_acquire);
		if (k == lock)
			return;   /* made before: the first init names it */
		if (k == 0 && atomic_compare_exchange_strong(&pth_init[i].key, &k, lock)) {
			atomic_store_explicit(&pth_init[i].pc, pc, memory_order_release);
			atomic_fetch_add_explicit(&pth_init_used, 1, memory_order_relaxed);
			return;
		}
		if (k == lock)
			return;
	}
}

uintptr_t tr_pth_init_pc(uintptr_t lock)
{
	uint32_t i = pth_init_hash(lock);
	for (unsigned n = 0; lock && n < PTH_INIT_PROBES; n++, i = (i + 1) & (TR_PTH_INIT_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&pth_init[i].key, memory_order_acquire);
		if (k == lock)
			return atomic_load_explicit(&pth_init[i].pc, memory_order_acquire);
		if (k == 0)
			return 0;
	}
	return 0;
}
