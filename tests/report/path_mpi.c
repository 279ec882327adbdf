/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * path_mpi.c - the program of report_path_mpi (3 ranks): every kind of wait
 * state with a known delay, each in a VT region (wrappers/vt/VT.h) named
 * after it, so that `tracer report` must find who waits on whom and a
 * critical path through the cp_* regions (the off_* regions run while
 * another rank is slower: off the path). Times from the first barrier:
 *   1 late sender    rank 1 cp_send 80 ms, then Isends to 0 and 2, which
 *                    wait in MPI_Recv: 0 -> 1 and 2 -> 1, ~80 ms each
 *   2 wait at NxN    rank 2 cp_barrier 60 ms before an MPI_Barrier:
 *                    0 -> 2 and 1 -> 2, ~60 ms each
 *   3 late bcast     root 1 cp_bcast 50 ms, rank 0 off_bcast 20 ms:
 *                    0 -> 1 ~30 ms, 2 -> 1 ~50 ms
 *   4 early reduce   rank 2 cp_reduce 40 ms, rank 1 off_reduce 10 ms,
 *                    root 0 waits for rank 2: 0 -> 2 ~40 ms
 *   5 late receiver  rank 0 MPI_Ssend to 2, which first runs cp_recv
 *                    30 ms: 0 -> 2 ~30 ms
 *   6 wait at NxN    rank 0 cp_tail 20 ms before the last MPI_Barrier:
 *                    2 -> 0 ~20 ms, 1 -> 0 (from the end of its reduce)
 * Critical path, backwards: rank 0's cp_tail, rank 2's cp_recv and
 * cp_reduce, rank 1's cp_bcast, rank 2's cp_barrier, rank 1's cp_send.
 * Before the first barrier, a message each way between every two ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <VT.h>

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

/* ms in VT region name (the region is defined at its first use) */
static void work(const char *name, int ms)
{
	int h;
	VT_funcdef(name, VT_NOCLASS, &h);
	VT_begin(h);
	nap(ms);
	VT_end(h);
}

int main(int argc, char **argv)
{
	int rank, size, v = 1, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (!rank)
			fprintf(stderr, "path_mpi: run on 3 ranks\n");
		MPI_Finalize();
		return 2;
	}
	/* every pair's connection made before (a first message took 13 ms) */
	for (int d = 1; d < size; d++)
		MPI_Sendrecv(&v, 1, MPI_INT, (rank + d) % size, 9, &sum, 1, MPI_INT, (rank + size - d) % size, 9,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	/* 1 late sender */
	if (rank == 1) {
		MPI_Request rq[2];
		work("cp_send", 80);
		MPI_Isend(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(&v, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	} else {
		MPI_Recv(&sum, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	/* 2 wait at NxN */
	if (rank == 2)
		work("cp_barrier", 60);
	MPI_Barrier(MPI_COMM_WORLD);
	/* 3 late broadcast */
	if (rank == 1)
		work("cp_bcast", 50);
	if (rank == 0)
		work("off_bcast", 20);
	MPI_Bcast(&sum, 1, MPI_INT, 1, MPI_COMM_WORLD);
	/* 4 early reduce */
	if (rank == 2)
		work("cp_reduce", 40);
	if (rank == 1)
		work("off_reduce", 10);
	MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	/* 5 late receiver (a synchronous send) */
	if (rank == 0) {
		MPI_Ssend(&v, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
	} else if (rank == 2) {
		work("cp_recv", 30);
		MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	/* 6 wait at NxN for rank 0 */
	if (rank == 0)
		work("cp_tail", 20);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("path_mpi: sum %d\n", sum);
	MPI_Finalize();
	return 0;
}
