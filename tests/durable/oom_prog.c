/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oom_prog.c - runs until the OOM killer ends it: 2 threads take one
 * mutex in a loop (WORK_US microseconds of work between two locks of a
 * thread, as lock_prog.c) while the main thread allocates and touches STEP
 * MiB every 20 ms without end, printing after each step CLOCK_MONOTONIC, the
 * lock/unlock pairs complete so far and the MiB allocated, flushed at
 * once. Run in a memory-limited cgroup (recover_tests.py oom_kill): the
 * last line printed tells how many pairs were complete shortly before the
 * kill.
 *
 * usage: oom_prog [STEP_MIB] [WORK_US]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockers.h"

#define NT 2

int main(int argc, char **argv)
{
	long step = argc > 1 ? atol(argv[1]) : 2;
	lk_spin = lk_spin_for_us(argc > 2 ? atof(argv[2]) : 25);
	if (step < 1)
		step = 1;
	lockers_start(NT);   /* never stopped */
	for (long mib = 0;; mib += step) {
		double t = lk_now();
		long n = lockers_total(NT);
		printf("t %.6f pairs %ld mib %ld\n", t, n, mib);
		fflush(stdout);
		char *p = malloc((size_t)step << 20);
		if (p)
			memset(p, 1, (size_t)step << 20);   /* touched: resident, never freed */
		usleep(20000);
	}
}
