/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit_lock_table.c - criterion tests of wrappers/pthread/pthread_lock.c (lock
 * address -> stable dense id), linked directly (no preloading).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "pthread_int.h"

#include <sys/mman.h>

/* The core's table space (preload/core/mem.c), which this test does not
 * link: a mapping of its own, as mem.c gives when its reservation is full. */
void *tr_mem_space(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

#define NADDR 10007   /* prime: every stride below visits all addresses */
#define NTHR 4

static uint32_t id_of(uintptr_t a)
{
	return atomic_load(&tr_pth_lock_get(a)->id) - 1;
}

Test(lock_table, dense_and_stable)
{
	cr_assert_eq(tr_pth_lock_init(), 0);
	tr_pth_lock_reset();
	for (uintptr_t i = 0; i < 100; i++)
		cr_assert_eq(id_of(0x1000 + 64 * i), i, "first use order gives dense ids");
	for (uintptr_t i = 0; i < 100; i++)
		cr_assert_eq(id_of(0x1000 + 64 * i), i, "same address, same id");
	cr_assert_eq(tr_pth_lock_count(), 100);
	cr_assert_eq(tr_pth_lock_overflowed(), 0);
	/* a reset (fork child) starts again from 0 */
	tr_pth_lock_reset();
	cr_assert_eq(tr_pth_lock_count(), 0);
	cr_assert_eq(id_of(0x1000 + 64 * 99), 0);
}

static uintptr_t addrs[NADDR];
static uint32_t got[NTHR][NADDR];

static void *racer(void *arg)
{
	long k = (long)arg;

	/* every thread visits all addresses, starting at a different place */
	for (long n = 0; n < NADDR; n++) {
		long i = (n * (2 * k + 1) + k * 977) % NADDR;
		got[k][i] = id_of(addrs[i]);
	}
	return NULL;
}

Test(lock_table, concurrent_first_use)
{
	pthread_t th[NTHR];
	static unsigned char seen[NADDR];

	cr_assert_eq(tr_pth_lock_init(), 0);
	tr_pth_lock_reset();
	for (long i = 0; i < NADDR; i++)
		addrs[i] = 0x7f0000000000ull + 40 * (uintptr_t)i;   /* mutex-sized stride */
	for (long k = 0; k < NTHR; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, racer, (void *)k), 0);
	for (long k = 0; k < NTHR; k++)
		pthread_join(th[k], NULL);
	cr_assert_eq(tr_pth_lock_count(), NADDR, "one id per address, none twice");
	for (long i = 0; i < NADDR; i++) {
		for (long k = 1; k < NTHR; k++)
			cr_assert_eq(got[k][i], got[0][i], "threads disagree on the id of address %ld", i);
		cr_assert_lt(got[0][i], NADDR);
		cr_assert_eq(seen[got[0][i]], 0, "id %u given twice", got[0][i]);
		seen[got[0][i]] = 1;
	}
}

Test(lock_table, full_table_overflows_gracefully)
{
	cr_assert_eq(tr_pth_lock_init(), 0);
	tr_pth_lock_reset();
	/* more locks than slots: the last ones share the overflow ids */
	uint32_t n = TR_PTH_LOCK_SLOTS + 1000;
	for (uint32_t i = 0; i < n; i++)
		tr_pth_lock_get(0x10000 + 8 * (uintptr_t)i);
	cr_assert_eq(tr_pth_lock_overflowed(), 1);
	cr_assert_leq(tr_pth_lock_count(), TR_PTH_LOCK_SLOTS + TR_PTH_LOCK_OVERFLOW);
	/* lookups stay stable, in the table and in the overflow */
	for (uint32_t i = 0; i < n; i += 997) {
		struct tr_pth_lock *a = tr_pth_lock_get(0x10000 + 8 * (uintptr_t)i);
		cr_assert_eq(tr_pth_lock_get(0x10000 + 8 * (uintptr_t)i), a);
		cr_assert_neq(atomic_load(&a->id), 0);
	}
	tr_pth_lock_reset();
	cr_assert_eq(tr_pth_lock_overflowed(), 0);
}
