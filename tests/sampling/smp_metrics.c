/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_metrics.c - regions for the metric tests (VT user regions): "busy"
 * five times, CPU-bound for ~SMP_BUSY_MS (default 120) ms of CPU time each,
 * and "sleepy" twice, sleeping 60 ms (no CPU).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "smp_vt.h"

volatile double smp_sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void busy(double s)
{
	double end = cpu_seconds() + s;
	double x = smp_sink;
	while (cpu_seconds() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 0.9999999 + 1.0;
	smp_sink = x;
}

int main(void)
{
	double ms = getenv("SMP_BUSY_MS") ? atof(getenv("SMP_BUSY_MS")) : 120;
	smp_vt_init();
	int rb = smp_region("busy"), rs = smp_region("sleepy");
	for (int i = 0; i < 5; i++) {
		smp_begin(rb);
		double c0 = cpu_seconds();
		busy(ms / 1000.0);
		double c1 = cpu_seconds();
		smp_end(rb);
		printf("busy %d cpu_ns=%.0f\n", i, (c1 - c0) * 1e9);
		if (i % 2 == 0) {
			struct timespec ts = { 0, 60 * 1000000L };
			smp_begin(rs);
			nanosleep(&ts, NULL);
			smp_end(rs);
		}
	}
	printf("done %g\n", smp_sink > 0 ? 1.0 : 0.0);
	return 0;
}
