/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank that aborts: some traffic, then the last rank calls MPI_Abort
 * (or, with argument "segv", crashes with SIGSEGV) while the others wait
 * in a barrier (and are killed by mpirun). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (int i = 0; i < 3; i++)
		MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &v, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == size - 1) {
		usleep(600000);   /* > 2 durability intervals: the killed ranks' traffic is saved */
		if (argc > 1 && argv[1][0] == 's')
			raise(SIGSEGV);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
