/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_prog.c - 4 threads take one mutex in a loop (WORK_US microseconds of
 * work between two locks of a thread) until SECONDS have passed; the main
 * thread prints, every 50 ms, CLOCK_MONOTONIC and the number of lock/unlock
 * pairs completed so far (each thread's count is bumped after its unlock
 * returned, so every counted pair has its events recorded), flushed at
 * once: a test that kills the program knows how many pairs were complete at
 * any time before the kill.
 *
 * usage: lock_prog SECONDS [NTHREADS] [WORK_US]
 *        lock_prog nCOUNT [NTHREADS] [WORK_US]   every thread takes the lock
 *        COUNT times; only "done pairs N" is printed (deterministic output)
 *        lock_prog SECONDS NTHREADS WORK_US churn   main also starts and
 *        joins a short thread every 10 ms (a new location: TRACER_DURABLE
 *        rewrites its definitions snapshot at every tick)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockers.h"

static void *short_thread(void *arg)
{
	pthread_mutex_lock(&lk_mu);
	lk_sink++;
	pthread_mutex_unlock(&lk_mu);
	return arg;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	if (argc > 1 && argv[1][0] == 'n')
		lk_fixed = atol(argv[1] + 1);
	int nt = argc > 2 ? atoi(argv[2]) : 4;
	lk_spin = lk_spin_for_us(argc > 3 ? atof(argv[3]) : 25);
	int churn = argc > 4 && !strcmp(argv[4], "churn");
	if (nt < 1 || nt > LK_MAXT)
		nt = 4;
	lockers_start(nt);
	double end = lk_now() + secs;
	for (; !lk_fixed;) {
		double t = lk_now();
		long n = lockers_total(nt);   /* read after t: every pair counted ended before it was printed */
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
	lockers_stop(nt);
	printf("done pairs %ld\n", lockers_total(nt));
	return 0;
}
