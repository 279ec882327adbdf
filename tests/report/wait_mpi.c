/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_mpi.c - the program of report_wait_mpi (2 ranks): each collective
 * has one member arrive late by a known time, so `tracer report` must find
 * that wait state where it was put.
 *   MPI_Allreduce: rank 1 sleeps 80 ms first -> rank 0 waits at NxN ~80 ms
 *   MPI_Bcast (root 0): rank 0 sleeps 60 ms first -> rank 1: late broadcast
 *   MPI_Reduce (root 0): rank 1 sleeps 40 ms first -> rank 0: early reduce
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void nap(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int rank, v = 1, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1)
		nap(80);
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		nap(60);
	MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 1)
		nap(40);
	MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("wait_mpi: sum %d\n", sum);
	MPI_Finalize();
	return 0;
}
