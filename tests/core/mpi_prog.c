/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_prog.c - MPI target of tests/core (core_mpi_unify): definitions that
 * differ between ranks (MPI_Send and a thread only on rank 1). */
#include <mpi.h>
#include <stdio.h>
#include <pthread.h>
static void *th(void *a) { return a; }
int main(int argc, char **argv) {
	int r, x = 1, y;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	if (r == 1) { MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD); pthread_t t; pthread_create(&t, NULL, th, NULL); pthread_join(t, NULL); }
	if (r == 0) { MPI_Recv(&y, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD); }
	else MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
