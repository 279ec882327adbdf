/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_mutex.c - bench/pthread: N uncontended pthread_mutex_lock/unlock
 * pairs on one mutex in one thread. Prints the ns per pair, nothing else on
 * stdout. Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user +
 * system, so the tracer's in-loop buffer flushes count) so that other
 * processes on a shared machine do not inflate it. Then the same split into
 * user and system time of the thread (getrusage RUSAGE_THREAD, us
 * resolution): "total user system" ns per pair on one line.
 * Usage: bench_pthread_mutex [N=10000000]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000L;
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static volatile long counter;
	double t0, t1;
	struct rusage r0, r1;

	for (long i = 0; i < 10000; i++) {   /* warm-up: location, lock id, caches */
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	getrusage(RUSAGE_THREAD, &r0);
	t0 = bench_cpu_ns();
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	t1 = bench_cpu_ns();
	getrusage(RUSAGE_THREAD, &r1);
	double u = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e9 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e3;
	double s = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e9 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e3;
	printf("%.3f %.3f %.3f\n", (t1 - t0) / n, u / n, s / n);
	return counter == n + 10000 ? 0 : 1;
}
