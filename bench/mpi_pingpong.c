/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/mpi_pingpong: 8-byte ping-pong between ranks 0 and 1 with blocking
 * MPI_Send/MPI_Recv. Rank 0 prints the one-way latency in us (half the
 * round-trip time, median over BLOCKS blocks of N/BLOCKS round trips).
 * With one rank: rank 0 sends to itself (MPI_Irecv + MPI_Send + MPI_Wait
 * on MPI_COMM_SELF) and prints the time of one such triple in us: the
 * wrappers' cost without a second process that can be descheduled.
 * usage: mpi_pingpong [N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 20

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One round trip of buf: rank 0 sends and receives, rank 1 the reverse. */
static inline void round_trip(int rank, double *buf)
{
	if (rank == 0) {
		MPI_Send(buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
		MPI_Recv(buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 100000;
	double buf = 0, rbuf = 0, lat[BLOCKS];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size == 1) {
		int per = n / BLOCKS > 0 ? n / BLOCKS : 1;
		for (int b = 0; b < BLOCKS; b++) {
			double t0 = MPI_Wtime();
			for (int i = 0; i < per; i++) {
				/* receive posted first: a blocking send to oneself may
				 * wait for its receive (MPICH does) */
				MPI_Request rq;
				MPI_Irecv(&rbuf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_SELF, &rq);
				MPI_Send(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_SELF);
				MPI_Wait(&rq, MPI_STATUS_IGNORE);
			}
			lat[b] = (MPI_Wtime() - t0) / per * 1e6;
		}
		qsort(lat, BLOCKS, sizeof(double), cmp);
		printf("%.4f\n", (lat[BLOCKS / 2 - 1] + lat[BLOCKS / 2]) / 2);
		MPI_Finalize();
		return 0;
	}
	int per = n / BLOCKS > 0 ? n / BLOCKS : 1;
	for (int w = 0; w < 1000; w++)   /* warm-up */
		round_trip(rank, &buf);
	for (int b = 0; b < BLOCKS; b++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < per; i++)
			round_trip(rank, &buf);
		lat[b] = (MPI_Wtime() - t0) / per / 2 * 1e6;
	}
	qsort(lat, BLOCKS, sizeof(double), cmp);
	if (rank == 0)
		printf("%.4f\n", (lat[BLOCKS / 2 - 1] + lat[BLOCKS / 2]) / 2);
	MPI_Finalize();
	return 0;
}
