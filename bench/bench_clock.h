/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_clock.h - the clocks of the bench programs. bench_cpu_ns: the
 * calling thread's CPU time (user + system: the system calls and the
 * tracer's in-loop flushes count, other processes on a shared machine do
 * not); bench_wall_s / bench_wall_ns: CLOCK_MONOTONIC.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <time.h>

static inline double bench_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double bench_cpu_ns(void)
{
	return bench_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline double bench_wall_ns(void)
{
	return bench_ns(CLOCK_MONOTONIC);
}

static inline double bench_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* BENCH_CLOCK_H */
