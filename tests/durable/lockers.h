/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lockers.h - the locking threads of the tests/durable programs: each takes
 * one mutex in a loop (with a small TRACER_BUFFER, or TRACER_DURABLE, the
 * tracer flushes or publishes their events all the time) until
 * lockers_stop, or forever. Each thread counts its lock/unlock pairs in a
 * cache line of its own, bumped after the unlock returned (every counted
 * pair has its events recorded), and spins lk_spin iterations between two
 * pairs (lk_spin_for_us: a number of microseconds, so that the pair rate
 * hardly depends on the CPU's speed); with lk_fixed set it stops by itself
 * after that many pairs.
 */
#ifndef DURABLE_LOCKERS_H
#define DURABLE_LOCKERS_H

#include <pthread.h>
#include <time.h>

#define LK_MAXT 16
static pthread_mutex_t lk_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int lk_stop;
static long lk_counts[LK_MAXT * 8];   /* one cache line each */
static long lk_spin;    /* work between two pairs: iterations of locker's loop */
static long lk_fixed;   /* pairs per thread, 0: until lockers_stop */
static volatile long lk_sink;
static pthread_t lk_th[LK_MAXT];

/* the thread function: named locker in the samples (recover_tests.py sample_roots) */
static void *locker(void *arg)
{
	long *c = arg;
	while (lk_fixed ? *c < lk_fixed : !__atomic_load_n(&lk_stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&lk_mu);
		lk_sink++;
		pthread_mutex_unlock(&lk_mu);
		__atomic_store_n(c, *c + 1, __ATOMIC_RELEASE);
		for (long i = 0; i < lk_spin; i++)
			lk_sink += i;
	}
	return NULL;
}

/* Starts nt (at most LK_MAXT) locking threads. */
static inline void lockers_start(int nt)
{
	for (int i = 0; i < nt; i++)
		pthread_create(&lk_th[i], NULL, locker, &lk_counts[i * 8]);
}

/* Tells the nt threads to stop and joins them. */
static inline void lockers_stop(int nt)
{
	__atomic_store_n(&lk_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nt; i++)
		pthread_join(lk_th[i], NULL);
}

/* The pairs the nt threads have completed so far. */
static inline long lockers_total(int nt)
{
	long s = 0;
	for (int i = 0; i < nt; i++)
		s += __atomic_load_n(&lk_counts[i * 8], __ATOMIC_ACQUIRE);
	return s;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double lk_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The iterations of locker's loop (the same loop) that take us microseconds
 * on this CPU: the fastest of 5 timed runs of 100,000 (a run that the
 * scheduler interrupted is slower, never faster), so that a thread makes at
 * most about one pair per us microseconds whatever the CPU, and fewer on a
 * loaded machine. */
static inline long lk_spin_for_us(double us)
{
	const long n = 100000;
	double best = 1;
	for (int r = 0; r < 5; r++) {
		double t = lk_now();
		for (long i = 0; i < n; i++)
			lk_sink += i;
		t = lk_now() - t;
		if (t < best)
			best = t;
	}
	return us > 0 ? (long)(us * 1e-6 * n / best) : 0;
}

#endif
