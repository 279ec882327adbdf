/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_bench.c - bench/openmp (built with clang -fopenmp and gcc -fopenmp).
 *   openmp_bench par N [T]  N empty parallel regions of T (4) threads: prints
 *                         the wall-clock us per region (the team's threads
 *                         run on other cores: CPU time of one thread says
 *                         little); T = 1: the thread's CPU time per region
 *                         (all the work is on it: robust against other load)
 *   openmp_bench par N T cpu  the same on one CPU (the process pins itself
 *                         to the one it runs on: no cross-CPU wake-ups,
 *                         whose cost depends on where the other load is),
 *                         printing the CPU time of the whole process (all
 *                         threads) per region: run with
 *                         OMP_WAIT_POLICY=passive (no spinning) it is the
 *                         work done per region, whatever the other load
 *   openmp_bench lock N   N omp_set_lock/omp_unset_lock pairs in one thread:
 *                         prints the ns per pair (thread CPU time)
 * Nothing else on stdout.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000L;
	static volatile long counter;
	double t0, t1;

	if (argc > 1 && !strcmp(argv[1], "lock")) {
		omp_lock_t l;
		omp_init_lock(&l);
		for (long i = 0; i < 10000; i++) {   /* warm-up */
			omp_set_lock(&l);
			counter++;
			omp_unset_lock(&l);
		}
		t0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
		for (long i = 0; i < n; i++) {
			omp_set_lock(&l);
			counter++;
			omp_unset_lock(&l);
		}
		t1 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
		omp_destroy_lock(&l);
		printf("%.3f\n", (t1 - t0) / n);
		return counter == n + 10000 ? 0 : 1;
	}
	int nt = argc > 3 ? atoi(argv[3]) : 4;
	if (argc > 4 && !strcmp(argv[4], "cpu")) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (long i = 0; i < 1000; i++) {            /* warm-up: the thread pool */
#pragma omp parallel num_threads(nt)
		counter++;
	}
	clockid_t clk = nt == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
	if (argc > 4 && !strcmp(argv[4], "cpu"))
		clk = CLOCK_PROCESS_CPUTIME_ID;
	t0 = bench_ns(clk);
	for (long i = 0; i < n; i++) {
#pragma omp parallel num_threads(nt)
		__asm__ __volatile__("" ::: "memory");   /* empty, but not removed */
	}
	t1 = bench_ns(clk);
	printf("%.3f\n", (t1 - t0) / n / 1e3);
	return 0;
}
