/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_cross.c - one program built with clang -fopenmp (libomp, OMPT) and
 * gcc -fopenmp (libgomp, GOMP_* wrappers): the constructs both front ends
 * can see, so the two archives have the same number of records of each kind
 * (omp_check.py cross). NPAR parallel regions of NTHR threads, each with:
 *   a dynamic loop, sections, a single (each with its implicit barrier),
 *   an explicit barrier, a critical section, an omp lock,
 *   in a single: NTASK tasks (one untied) and a taskwait, a taskgroup of
 *   NTASK tasks, a taskloop with num_tasks(NTASK), one with grainsize(GRAIN)
 *   (NITER / GRAIN tasks).
 * No schedule(static) loop, master or masked (gcc inlines them).
 */
#include <omp.h>
#include <stdio.h>

#define NPAR 5
#define NTHR 4
#define NITER 32
#define NTASK 4
#define GRAIN 5

int main(void)
{
	omp_lock_t lock;
	long loop = 0, sect = 0, single = 0, crit = 0, locked = 0, tasks = 0, tl = 0;

	omp_init_lock(&lock);
	for (int p = 0; p < NPAR; p++) {
#pragma omp parallel num_threads(NTHR)
		{
#pragma omp for schedule(dynamic, 4)
			for (int i = 0; i < NITER; i++)
#pragma omp atomic
				loop += i;
#pragma omp sections
			{
#pragma omp section
#pragma omp atomic
				sect += 1;
#pragma omp section
#pragma omp atomic
				sect += 2;
			}
#pragma omp single
			single++;
#pragma omp barrier
#pragma omp critical
			crit++;
			omp_set_lock(&lock);
			locked++;
			omp_unset_lock(&lock);
#pragma omp single
			{
				for (int k = 0; k < NTASK - 1; k++) {
#pragma omp task
#pragma omp atomic
					tasks++;
				}
#pragma omp task untied
#pragma omp atomic
				tasks++;
#pragma omp taskwait
#pragma omp taskgroup
				{
					for (int k = 0; k < NTASK; k++) {
#pragma omp task
#pragma omp atomic
						tasks++;
					}
				}
#pragma omp taskloop num_tasks(NTASK)
				for (int i = 0; i < NITER; i++) {
#pragma omp atomic
					tl++;
				}
#pragma omp taskloop grainsize(GRAIN)
				for (int i = 0; i < NITER; i++) {
#pragma omp atomic
					tl++;
				}
			}
		}
	}
	omp_destroy_lock(&lock);
	printf("loop %ld sections %ld single %ld critical %ld locked %ld tasks %ld taskloop %ld\n", loop, sect,
	       single, crit, locked, tasks, tl);
	return 0;
}
