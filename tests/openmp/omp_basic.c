/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_basic.c - OpenMP constructs with known counts, built with both
 * clang -fopenmp (libomp) and gcc -fopenmp (libgomp). Prints results that do
 * not depend on scheduling, so traced and untraced output compare equal.
 *
 *   NPAR parallel regions of NTHR threads, each with:
 *     a dynamic "omp for" over NITER iterations (critical entries counted),
 *     NBAR explicit barriers,
 *     one omp_set_lock/omp_unset_lock pair per thread,
 *     one nest-lock acquired twice per thread,
 *     one named critical per thread,
 *     an ordered loop of NORD iterations (NORD ordered entries),
 *     with gcc one atomic update of a long double per thread (libgomp's
 *     GOMP_atomic_start/end; clang calls libatomic, not the runtime)
 *   then one nested parallel region (2 x 2 threads).
 */
#include <omp.h>
#include <stdio.h>

#define NPAR 20
#define NTHR 4
#define NITER 40
#define NBAR 3
#define NORD 8

int main(void)
{
	omp_lock_t lock;
	omp_nest_lock_t nlock;
	long sum = 0, locked = 0, named = 0, nested = 0, inner = 0, ord = 0;
	long double at = 0;

	omp_init_lock(&lock);
	omp_init_nest_lock(&nlock);
	for (int p = 0; p < NPAR; p++) {
#pragma omp parallel num_threads(NTHR)
		{
#pragma omp for schedule(dynamic, 5)
			for (int i = 0; i < NITER; i++) {
#pragma omp critical
				sum += i;
			}
			for (int b = 0; b < NBAR; b++) {
#pragma omp barrier
			}
			omp_set_lock(&lock);
			locked++;
			omp_unset_lock(&lock);
			omp_set_nest_lock(&nlock);
			omp_set_nest_lock(&nlock);
			nested++;
			omp_unset_nest_lock(&nlock);
			omp_unset_nest_lock(&nlock);
#pragma omp critical(named)
			named++;
#if defined(__GNUC__) && !defined(__clang__)
#pragma omp atomic
			at += 1.0L;
#else
#pragma omp critical(named)
			at += 1.0L;
#endif
#pragma omp for ordered schedule(dynamic)
			for (int i = 0; i < NORD; i++) {
#pragma omp ordered
				ord = ord * 3 + i;       /* order-dependent */
			}
		}
	}
	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
	{
#pragma omp parallel num_threads(2)
		{
#pragma omp atomic
			inner++;
		}
	}
	omp_destroy_nest_lock(&nlock);
	omp_destroy_lock(&lock);
	printf("sum %ld locked %ld nested %ld named %ld inner %ld ordered %ld atomic %.0Lf\n", sum, locked,
	       nested, named, inner, ord % 1000003, at);
	return 0;
}
