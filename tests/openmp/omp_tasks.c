/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_tasks.c - fibonacci with omp task / taskwait: fib(N) creates a known
 * number of explicit tasks (2 per call with n >= 2), all completed.
 */
#include <omp.h>
#include <stdio.h>

#define N 12

static long fib(int n)
{
	long a, b;
	if (n < 2)
		return n;
#pragma omp task shared(a)
	a = fib(n - 1);
#pragma omp task shared(b)
	b = fib(n - 2);
#pragma omp taskwait
	return a + b;
}

int main(void)
{
	long r = 0;
#pragma omp parallel num_threads(4)
	{
#pragma omp single
		r = fib(N);
	}
	printf("fib(%d) = %ld\n", N, r);
	return 0;
}
