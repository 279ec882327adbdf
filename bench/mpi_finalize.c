/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/mpi_finalize: time of MPI_Finalize (with the tracer: clock offset
 * measurement + unification of the definitions). Every rank creates a few
 * communicators and calls ~30 different MPI functions first so there is
 * something to unify. Rank 0 prints the slowest rank's MPI_Finalize in ms. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
	int rank, size, v = 1, r[64];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm c[4];
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c[0]);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, &c[1]);
	MPI_Comm_dup(MPI_COMM_WORLD, &c[2]);
	MPI_Comm_dup(c[0], &c[3]);
	for (int i = 0; i < 4; i++) {
		MPI_Allreduce(&v, r, 1, MPI_INT, MPI_SUM, c[i]);
		MPI_Bcast(&v, 1, MPI_INT, 0, c[i]);
		MPI_Barrier(c[i]);
		MPI_Allgather(&v, 1, MPI_INT, r, 1, MPI_INT, c[i]);
	}
	MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, r, 1, MPI_INT, (rank + size - 1) % size, 0,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = bench_wall_s();
	MPI_Finalize();
	double dt = (bench_wall_s() - t0) * 1e3;
	/* after MPI_Finalize: report through a file per rank, collected by the script */
	printf("finalize %d %.3f\n", rank, dt);
	return 0;
}
