/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_clock.h - the clocks of the bench programs. bench_cpu_ns: the
 * calling thread's CPU time (user + system: the system calls and the
 * tracer's in-loop flushes count, other processes on a shared machine do
 * not); bench_wall_s / bench_wall_ns: CLOCK_MONOTONIC. bench_time_calls:
 * the timed loop of the programs that print the ns per call.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdio.h>
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

/* Blocks of the programs that cycle over one file: offsets (i & 255) * 4096. */
#define BENCH_BLOCK 4096
#define BENCH_OFFSET(i) ((long)((i) & 255) * BENCH_BLOCK)
#define BENCH_NBLOCKS 256   /* 1 MiB */

/* warm(ctx, i) for i in [0, nwarm) untimed (the file exists in full, the
 * first calls warmed up), then call(ctx, i) for i in [0, n) on the thread's
 * CPU clock; prints the ns per call, the program's one line of stdout.
 * Returns 0, or 1 at the first call or warm-up call that returned nonzero
 * (nothing printed). Inlined with constant functions: direct calls. */
static inline int bench_time_calls(long nwarm, int (*warm)(void *, long), long n, int (*call)(void *, long),
				   void *ctx)
{
	for (long i = 0; i < nwarm; i++)
		if (warm(ctx, i))
			return 1;
	double t0 = bench_cpu_ns();
	for (long i = 0; i < n; i++)
		if (call(ctx, i))
			return 1;
	double t1 = bench_cpu_ns();
	printf("%.1f\n", (t1 - t0) / (double)n);
	return 0;
}

#endif /* BENCH_CLOCK_H */
