/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_mpi.c - an MPI program with one user thread per rank (tests/pthread).
 * Open MPI starts internal progress threads inside MPI_Init; only the
 * user's thread must appear in the trace.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *worker(void *arg)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&mx);
		count++;
		pthread_mutex_unlock(&mx);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int rank, in, sum = 0;
	pthread_t th;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (pthread_create(&th, NULL, worker, NULL))
		MPI_Abort(MPI_COMM_WORLD, 3);
	pthread_join(th, NULL);
	in = (int)count;
	MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0)
		printf("pth_mpi: sum %d\n", sum);
	return 0;
}
