/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_cancel.c - cancellation (run with OMP_CANCELLATION=true): a dynamic
 * loop of 4 threads cancelled at iteration 10, a cancellation point in
 * every iteration; then a parallel region cancelled by thread 0 while the
 * others pass cancellation points until it is active. Prints what does not
 * depend on scheduling.
 */
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void)
{
	long seen = 0, after = 0;
	int cancelled = 0;
#pragma omp parallel num_threads(4)
	{
#pragma omp for schedule(dynamic, 1)
		for (int i = 0; i < 100000; i++) {
			if (i == 10) {
#pragma omp atomic write
				cancelled = 1;
#pragma omp cancel for
			}
#pragma omp cancellation point for
#pragma omp atomic
			seen++;
		}
	}
#pragma omp parallel num_threads(4)
	{
		if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
		}
		/* the others stay at cancellation points until the cancel is
		 * active (at most 10 s): with a thread already at the region's
		 * end when thread 0 cancels, LLVM 14's libomp hangs in the
		 * join barrier now and then (11 of 300 runs, untraced) */
		double t0 = omp_get_wtime();
		while (omp_get_wtime() - t0 < 10) {
#pragma omp cancellation point parallel
#pragma omp atomic
			after++;
			sched_yield();
		}
	}
	printf("cancel: loop cancelled %d (%s), region done\n", cancelled,
	       omp_get_cancellation() ? (seen < 100000 ? "early" : "late") : "off");
	return 0;
}
