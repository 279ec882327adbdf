/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_prog.c - 4 threads take one mutex in a loop (a little work between
 * two locks) until SECONDS have passed; the main thread prints, every
 * 50 ms, CLOCK_MONOTONIC and the number of lock/unlock pairs completed so
 * far (each thread's count is bumped after its unlock returned, so every
 * counted pair has its events recorded), flushed at once: a test that
 * kills the program knows how many pairs were complete at any time before
 * the kill.
 *
 * usage: lock_prog SECONDS [NTHREADS] [SPIN]
 *        lock_prog nCOUNT [NTHREADS] [SPIN]   every thread takes the lock COUNT
 *        times; only "done pairs N" is printed (deterministic output)
 *        lock_prog SECONDS NTHREADS SPIN churn   main also starts and joins a
 *        short thread every 10 ms (a new location: TRACER_DURABLE rewrites
 *        its definitions snapshot at every tick)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXT 16
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static long counts[MAXT * 8];   /* one cache line each */
static long spin = 200;
static long fixed;   /* nCOUNT: pairs per thread */
static volatile long sink;

static void *short_thread(void *arg)
{
	pthread_mutex_lock(&mu);
	sink++;
	pthread_mutex_unlock(&mu);
	return arg;
}

static void *locker(void *arg)
{
	long *c = arg;
	while (fixed ? *c < fixed : !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&mu);
		sink++;
		pthread_mutex_unlock(&mu);
		__atomic_store_n(c, *c + 1, __ATOMIC_RELEASE);
		for (long i = 0; i < spin; i++)
			sink += i;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long total(int nt)
{
	long s = 0;
	for (int i = 0; i < nt; i++)
		s += __atomic_load_n(&counts[i * 8], __ATOMIC_ACQUIRE);
	return s;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	if (argc > 1 && argv[1][0] == 'n')
		fixed = atol(argv[1] + 1);
	int nt = argc > 2 ? atoi(argv[2]) : 4;
	if (argc > 3)
		spin = atol(argv[3]);
	int churn = argc > 4 && !strcmp(argv[4], "churn");
	if (nt < 1 || nt > MAXT)
		nt = 4;
	pthread_t th[MAXT];
	for (int i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, locker, &counts[i * 8]);
	double end = now() + secs;
	for (; !fixed;) {
		double t = now();
		long n = total(nt);   /* read after t: every pair counted ended before it was printed */
		printf("t %.6f pairs %ld\n", t, n);
		fflush(stdout);
		if (t >= end)
			break;
		for (int k = 0; k < 5; k++) {
			pthread_t s;
			if (churn && pthread_create(&s, NULL, short_thread, NULL) == 0)
				pthread_join(s, NULL);
			usleep(10000);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	printf("done pairs %ld\n", total(nt));
	return 0;
}
