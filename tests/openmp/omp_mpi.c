/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp_mpi.c - MPI + OpenMP (MPI_THREAD_FUNNELED): on every rank NPAR
 * parallel regions of 2 threads, each thread entering one critical section
 * and one barrier; the master thread sums over the ranks after each region
 * (MPI_Allreduce). Rank 0 prints the totals.
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define NPAR 5
#define NTHR 2

int main(int argc, char **argv)
{
	int provided, rank, size;
	long total = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int p = 0; p < NPAR; p++) {
		long local = 0, sum = 0;
#pragma omp parallel num_threads(NTHR)
		{
#pragma omp critical
			local += rank + 1;
#pragma omp barrier
		}
		MPI_Allreduce(&local, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
	}
	if (rank == 0)
		printf("ranks %d total %ld provided>=funneled %d\n", size, total, provided >= MPI_THREAD_FUNNELED);
	MPI_Finalize();
	return 0;
}
