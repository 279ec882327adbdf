/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_THREAD_MULTIPLE: two threads per rank exchange messages with the
 * partner rank (rank ^ 1) at the same time, each thread with its own tags. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int rank, size;

static void *worker(void *arg)
{
	int id = (int)(long)arg, peer = rank ^ 1, buf[8] = { 0 };
	if (peer >= size)
		return NULL;
	for (int k = 0; k < 5; k++) {
		if (rank % 2 == 0) {
			MPI_Send(buf, 1 + id + k, MPI_INT, peer, 100 + id, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_INT, peer, 200 + id, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Request rq;
			MPI_Irecv(buf, 8, MPI_INT, peer, 100 + id, MPI_COMM_WORLD, &rq);
			MPI_Wait(&rq, MPI_STATUS_IGNORE);
			MPI_Send(buf, 2 + id, MPI_INT, peer, 200 + id, MPI_COMM_WORLD);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided != MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("no MPI_THREAD_MULTIPLE (%d)\n", provided);
		MPI_Finalize();
		return 77;
	}
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("threads ok\n");
	MPI_Finalize();
	return 0;
}
