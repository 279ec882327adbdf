/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_tree.c - one calling-context tree for sampled frames and instrumented
 * regions: main -> phase() -> VT region "phase_region" -> compute() (leaf),
 * for SMP_CPU_SECONDS (default 0.8) of CPU time, plus mutex calls in the
 * region (wrapped regions nested in the user region).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "smp_vt.h"

volatile double smp_sink;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) void compute(long n)
{
	double x = smp_sink;
	for (long i = 0; i < n; i++)
		x = x * 0.9999999 + 1.0;
	smp_sink = x;
}

__attribute__((noinline)) void phase(double budget)
{
	int r = smp_region("phase_region");
	smp_begin(r);
	double end = cpu_seconds() + budget;
	while (cpu_seconds() < end) {
		compute(200000);
		pthread_mutex_lock(&mtx);
		smp_sink += 1;
		pthread_mutex_unlock(&mtx);
	}
	smp_end(r);
}

int main(void)
{
	double b = getenv("SMP_CPU_SECONDS") ? atof(getenv("SMP_CPU_SECONDS")) : 0.8;
	smp_vt_init();
	phase(b);
	printf("done\n");
	return 0;
}
