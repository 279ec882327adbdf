/* SPDX-License-Identifier: BSD-3-Clause */
/* Polling loops: rank 0 polls with MPI_Test, Testany, Testsome, Testall,
 * Iprobe and Improbe until a message from rank 1 arrives; rank 1 sleeps
 * before each send, so most polls complete nothing. Each rank writes its
 * poll counts to stderr as "polls <rank> <unsuccessful> <successful>"
 * (the test compares them with the trace). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

/* one poll that completed nothing: counted, short pause (keeps the
 * number of polls, and the test's time, small) */
static int missed(long *miss, int nothing)
{
	if (nothing) {
		(*miss)++;
		usleep(200);
	}
	return nothing;
}

int main(int argc, char **argv)
{
	int rank, size, v = 0, flag, idx, out, inds[2];
	long miss = 0, hit = 0;
	MPI_Request r[2];
	MPI_Status st[2];
	MPI_Message msg;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		MPI_Finalize();
		return 0;
	}
	if (rank == 1) {
		for (int k = 0; k < 6; k++) {
			usleep(20000);
			MPI_Send(&k, 1, MPI_INT, 0, 70 + k, MPI_COMM_WORLD);
		}
	} else if (rank == 0) {
		/* Test */
		MPI_Irecv(&v, 1, MPI_INT, 1, 70, MPI_COMM_WORLD, &r[0]);
		do
			MPI_Test(&r[0], &flag, &st[0]);
		while (missed(&miss, !flag));
		hit++;
		/* Testany */
		MPI_Irecv(&v, 1, MPI_INT, 1, 71, MPI_COMM_WORLD, &r[0]);
		do
			MPI_Testany(1, r, &idx, &flag, st);
		while (missed(&miss, !flag));
		hit++;
		/* Testsome */
		MPI_Irecv(&v, 1, MPI_INT, 1, 72, MPI_COMM_WORLD, &r[0]);
		do
			MPI_Testsome(1, r, &out, inds, st);
		while (missed(&miss, out == 0));
		hit++;
		/* Testall */
		MPI_Irecv(&v, 1, MPI_INT, 1, 73, MPI_COMM_WORLD, &r[0]);
		do
			MPI_Testall(1, r, &flag, st);
		while (missed(&miss, !flag));
		hit++;
		/* Iprobe, then the receive */
		do
			MPI_Iprobe(1, 74, MPI_COMM_WORLD, &flag, &st[0]);
		while (missed(&miss, !flag));
		hit++;
		MPI_Recv(&v, 1, MPI_INT, 1, 74, MPI_COMM_WORLD, &st[0]);
		/* Improbe, then Mrecv */
		do
			MPI_Improbe(1, 75, MPI_COMM_WORLD, &flag, &msg, &st[0]);
		while (missed(&miss, !flag));
		hit++;
		MPI_Mrecv(&v, 1, MPI_INT, &msg, &st[0]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	fprintf(stderr, "polls %d %ld %ld\n", rank, miss, hit);
	MPI_Finalize();
	if (rank == 0)
		printf("poll ok\n");
	return 0;
}
