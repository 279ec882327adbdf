/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/demo_mpi: a small MPI program to look at with the tracer.
 *
 *	mpirun -np 4 -x LD_PRELOAD=build/lib/libtracer.so -x TRACER_OUTPUT=/tmp/demo_mpi \
 *	       build/examples/demo_mpi
 *	otf2-print /tmp/demo_mpi/traces.otf2
 *
 * A 1-D halo exchange on a periodic Cartesian ring (non-blocking
 * Isend/Irecv/Waitall), a global residual (Allreduce), a row communicator
 * (Comm_split) with a Bcast, and a one-sided epoch (Put + Fence).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024

int main(int argc, char **argv)
{
	int rank, size, left, right;
	double u[N + 2], v[N + 2], res = 1.0;
	MPI_Comm ring, rows;
	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int dims[1] = { size }, per[1] = { 1 };
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
	MPI_Comm_rank(ring, &rank);
	MPI_Cart_shift(ring, 0, 1, &left, &right);
	for (int i = 0; i < N + 2; i++)
		u[i] = rank + (double)i / N;

	for (int it = 0; it < 20 && res > 1e-9; it++) {
		MPI_Request rq[4];
		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, ring, &rq[0]);
		MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 1, ring, &rq[1]);
		MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 0, ring, &rq[2]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, ring, &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		double local = 0;
		for (int i = 1; i <= N; i++) {
			v[i] = 0.5 * (u[i - 1] + u[i + 1]);
			local += (v[i] - u[i]) * (v[i] - u[i]);
		}
		for (int i = 1; i <= N; i++)
			u[i] = v[i];
		MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, ring);
	}

	MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &rows);
	MPI_Bcast(&res, 1, MPI_DOUBLE, 0, rows);

	MPI_Win win;
	double *mem;
	MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	MPI_Win_fence(0, win);
	MPI_Put(&res, 1, MPI_DOUBLE, (rank + 1) % size, 0, 1, MPI_DOUBLE, win);
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);

	if (rank == 0)
		printf("demo_mpi: %d ranks, residual %.3g\n", size, sqrt(res));
	MPI_Comm_free(&rows);
	MPI_Comm_free(&ring);
	MPI_Finalize();
	return 0;
}
