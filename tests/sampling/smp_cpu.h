/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_cpu.h - CPU-time helpers of the sampling test programs (always
 * inlined: the tests compile with -fno-inline and expect the caller as the
 * sampled leaf).
 */
#ifndef SMP_CPU_H
#define SMP_CPU_H
#include <time.h>

extern volatile double smp_sink;

/* CPU time of the calling thread, s. */
static inline __attribute__((always_inline)) double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Compute until the thread used s more seconds of CPU. */
static inline __attribute__((always_inline)) void smp_spin_cpu(double s)
{
	double end = cpu_seconds() + s;
	double x = smp_sink;
	while (cpu_seconds() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 0.9999999 + 1.0;
	smp_sink = x;
}
#endif
