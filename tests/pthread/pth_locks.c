/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_locks.c - lock contention with known counts (tests/pthread).
 * Usage: pth_locks NTHREADS ITERS
 *
 * main first takes A once, B twice, R (write) 3 times, S 4 times, T 5
 * times: the checker identifies the lock ids by these counts. Thread k
 * (m = k + 1) then takes:
 *   A (mutex)            m*ITERS + m times   (plus m nested with B)
 *   B (mutex, trylock)   3m + m times        (trylock loop; nested)
 *   R (rwlock)           ITERS read + m write
 *   S (spinlock)         m*ITERS
 *   T (mutex, timedlock) m
 * The nested section takes A then B and releases A first (not LIFO).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER,
		       T = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t R = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t S;
static long iters, shared_a, shared_s, shared_r, bad;

static void *worker(void *arg)
{
	long m = (long)arg + 1;
	struct timespec far;

	for (long i = 0; i < m * iters; i++) {
		errno = 4242;
		pthread_mutex_lock(&A);
		if (errno != 4242)
			bad++;   /* the tracer must preserve errno */
		shared_a++;
		pthread_mutex_unlock(&A);
	}
	for (long i = 0; i < 3 * m; i++) {
		while (pthread_mutex_trylock(&B) == EBUSY)
			sched_yield();
		pthread_mutex_unlock(&B);
	}
	for (long i = 0; i < m; i++) {
		pthread_mutex_lock(&A);
		pthread_mutex_lock(&B);
		pthread_mutex_unlock(&A);
		pthread_mutex_unlock(&B);
	}
	for (long i = 0; i < iters; i++) {
		pthread_rwlock_rdlock(&R);
		pthread_rwlock_unlock(&R);
	}
	for (long i = 0; i < m; i++) {
		pthread_rwlock_wrlock(&R);
		shared_r++;
		pthread_rwlock_unlock(&R);
	}
	for (long i = 0; i < m * iters; i++) {
		pthread_spin_lock(&S);
		shared_s++;
		pthread_spin_unlock(&S);
	}
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 60;
	for (long i = 0; i < m; i++) {
		if (pthread_mutex_timedlock(&T, &far) != 0) {
			__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		pthread_mutex_unlock(&T);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];
	long want_a = 0, want_r = 0;

	iters = argc > 2 ? atol(argv[2]) : 1000;
	if (n < 1 || n > 64)
		return 2;
	pthread_spin_init(&S, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < 1; i++) { pthread_mutex_lock(&A); pthread_mutex_unlock(&A); }
	for (int i = 0; i < 2; i++) { pthread_mutex_lock(&B); pthread_mutex_unlock(&B); }
	for (int i = 0; i < 3; i++) { pthread_rwlock_wrlock(&R); pthread_rwlock_unlock(&R); }
	for (int i = 0; i < 4; i++) { pthread_spin_lock(&S); pthread_spin_unlock(&S); }
	for (int i = 0; i < 5; i++) { pthread_mutex_lock(&T); pthread_mutex_unlock(&T); }
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 3;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (long m = 1; m <= n; m++) {
		want_a += m * iters;
		want_r += m;
	}
	printf("pth_locks: %d threads, A %ld (want %ld), S %ld (want %ld), R %ld (want %ld), bad %ld\n",
	       n, shared_a, want_a, shared_s, want_a, shared_r, want_r, bad);
	return shared_a == want_a && shared_s == want_a && shared_r == want_r && !bad ? 0 : 1;
}
