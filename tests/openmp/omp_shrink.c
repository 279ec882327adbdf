/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_shrink.c - workers that end while idle: 3 parallel regions of 4
 * threads, then one of 2. libgomp lets the 2 surplus pool threads end at
 * the smaller region (they wait idle, their last team still to be ended
 * late); main then sleeps 300 ms so they end well before the process.
 */
#include <omp.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
	long a = 0, b = 0;
	for (int r = 0; r < 3; r++) {
#pragma omp parallel num_threads(4)
		{
#pragma omp atomic
			a++;
		}
	}
#pragma omp parallel num_threads(2)
	{
#pragma omp atomic
		b++;
	}
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	printf("a %ld b %ld\n", a, b);
	return 0;
}
