/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided exchange: fence epochs with Put/Get/Accumulate, passive target
 * lock/unlock with Fetch_and_op and Compare_and_swap. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, *mem;
	MPI_Win win, win2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	for (int i = 0; i < 16; i++)
		mem[i] = rank;
	int v[4] = { rank, rank, rank, rank }, g[4], one = 1, old = 0, cmp = -1;
	MPI_Win_fence(0, win);
	MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, win);
	MPI_Win_fence(0, win);
	MPI_Get(g, 4, MPI_INT, left, 4, 4, MPI_INT, win);
	MPI_Accumulate(&one, 1, MPI_INT, right, 8, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	if (mem[0] != left || g[0] != left)
		fprintf(stderr, "rank %d: bad RMA data %d %d\n", rank, mem[0], g[0]);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
	MPI_Fetch_and_op(&one, &old, MPI_INT, right, 9, MPI_SUM, win);
	MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT, right, 10, win);
	MPI_Win_unlock(right, win);
	MPI_Win_lock_all(0, win);
	MPI_Put(v, 1, MPI_INT, left, 11, 1, MPI_INT, win);
	MPI_Win_flush_all(win);
	MPI_Request rq[2];
	int flag = 0;
	MPI_Rput(v, 2, MPI_INT, right, 12, 2, MPI_INT, win, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Rget(g, 2, MPI_INT, left, 12, 2, MPI_INT, win, &rq[1]);
	while (!flag)
		MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	int buf[4];
	MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win2);
	MPI_Win_fence(0, win2);
	MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win2);
	MPI_Win_fence(0, win2);
	MPI_Win_free(&win2);
	if (rank == 0)
		printf("rma ok\n");
	MPI_Finalize();
	return 0;
}
