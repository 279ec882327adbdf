/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oom_prog.c - runs until the OOM killer ends it: 2 threads take one
 * mutex in a loop (a little work between two locks, as lock_prog.c) while
 * the main thread allocates and touches STEP MiB every 20 ms without end,
 * printing after each step CLOCK_MONOTONIC, the lock/unlock pairs complete
 * so far and the MiB allocated, flushed at once. Run in a memory-limited
 * cgroup (recover_tests.py oom_kill): the last line printed tells how many
 * pairs were complete shortly before the kill.
 *
 * usage: oom_prog [STEP_MIB] [SPIN]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NT 2
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counts[NT * 8];   /* one cache line each */
static long spin = 5000;
static volatile long sink;

static void *locker(void *arg)
{
	long *c = arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		sink++;
		pthread_mutex_unlock(&mu);
		__atomic_store_n(c, *c + 1, __ATOMIC_RELEASE);
		for (long i = 0; i < spin; i++)
			sink += i;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long step = argc > 1 ? atol(argv[1]) : 2;
	if (argc > 2)
		spin = atol(argv[2]);
	if (step < 1)
		step = 1;
	pthread_t th[NT];
	for (int i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, locker, &counts[i * 8]);
	for (long mib = 0;; mib += step) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		long n = 0;
		for (int i = 0; i < NT; i++)
			n += __atomic_load_n(&counts[i * 8], __ATOMIC_ACQUIRE);
		printf("t %.6f pairs %ld mib %ld\n", ts.tv_sec + ts.tv_nsec * 1e-9, n, mib);
		fflush(stdout);
		char *p = malloc((size_t)step << 20);
		if (p)
			memset(p, 1, (size_t)step << 20);   /* touched: resident, never freed */
		usleep(20000);
	}
}
