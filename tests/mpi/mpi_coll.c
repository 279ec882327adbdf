/* SPDX-License-Identifier: BSD-3-Clause */
/* Every collective (blocking and non-blocking) on WORLD, communicator
 * split/dup/create with traffic on the new communicators, a Cartesian
 * topology with neighbour collectives, an intercommunicator. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = 4, *s = calloc(64 * size, sizeof(int)), *r = calloc(64 * size, sizeof(int));
	int *cnt = malloc(size * sizeof(int)), *dsp = malloc(size * sizeof(int));
	MPI_Datatype *ty = malloc(size * sizeof(MPI_Datatype));
	int *bdsp = malloc(size * sizeof(int));
	for (int i = 0; i < size; i++) {
		cnt[i] = n;
		dsp[i] = i * n;
		bdsp[i] = i * n * (int)sizeof(int);
		ty[i] = MPI_INT;
	}
	MPI_Comm w = MPI_COMM_WORLD;

	MPI_Barrier(w);
	MPI_Bcast(s, n, MPI_INT, 0, w);
	MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, size - 1, w);
	MPI_Gatherv(s, n, MPI_INT, r, cnt, dsp, MPI_INT, 0, w);
	MPI_Scatter(s, n, MPI_INT, r, n, MPI_INT, 0, w);
	MPI_Scatterv(s, cnt, dsp, MPI_INT, r, n, MPI_INT, 0, w);
	MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, w);
	MPI_Allgatherv(s, n, MPI_INT, r, cnt, dsp, MPI_INT, w);
	MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, w);
	MPI_Alltoallv(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, w);
	MPI_Alltoallw(s, cnt, bdsp, ty, r, cnt, bdsp, ty, w);
	MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, 0, w);
	MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, w);
	MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, w);
	MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, w);
	MPI_Reduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, w);
	MPI_Scan(s, r, n, MPI_INT, MPI_SUM, w);
	MPI_Exscan(s, r, n, MPI_INT, MPI_SUM, w);

	MPI_Request rq[20];
	int k = 0;
	MPI_Ibarrier(w, &rq[k++]);
	MPI_Ibcast(s, n, MPI_INT, 0, w, &rq[k++]);
	MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, w, &rq[k++]);
	MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
	k = 0;
	int *r2 = calloc(64 * size, sizeof(int));
	MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, w, &rq[k++]);
	MPI_Igather(s, n, MPI_INT, r2, n, MPI_INT, 0, w, &rq[k++]);
	for (int i = 0; i < k; i++)
		MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
	k = 0;
	MPI_Ireduce(s, r, n, MPI_INT, MPI_SUM, 0, w, &rq[k++]);
	int flag = 0;
	while (!flag)
		MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
	MPI_Iscan(s, r, n, MPI_INT, MPI_SUM, w, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);

	/* split / dup / create with traffic */
	MPI_Comm half, dup, sub;
	MPI_Comm_split(w, rank % 2, rank, &half);
	MPI_Comm_dup(half, &dup);
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	int v = rank, sum = 0;
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half);
	MPI_Bcast(&sum, 1, MPI_INT, 0, dup);
	if (hs > 1) {
		if (hr == 0)
			MPI_Send(&v, 1, MPI_INT, 1, 7, dup);
		else if (hr == 1)
			MPI_Recv(&v, 1, MPI_INT, 0, 7, dup, MPI_STATUS_IGNORE);
	}
	MPI_Group wg, g0;
	MPI_Comm_group(w, &wg);
	int first[1] = { 0 };
	MPI_Group_incl(wg, 1, first, &g0);
	MPI_Comm_create(w, g0, &sub);
	if (sub != MPI_COMM_NULL) {
		MPI_Barrier(sub);
		MPI_Comm_free(&sub);
	}
	MPI_Group_free(&g0);
	MPI_Group_free(&wg);
	MPI_Comm idup;
	MPI_Comm_idup(w, &idup, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Barrier(idup);
	MPI_Comm_free(&idup);

	/* Cartesian ring with neighbour collectives */
	int dims[1] = { size }, per[1] = { 1 };
	MPI_Comm cart;
	MPI_Cart_create(w, 1, dims, per, 0, &cart);
	MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, cart);
	MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, cart, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Comm_free(&cart);

	/* intercommunicator between the two halves (only with argument
	 * "inter": python3-otf2 3.0.2 cannot read InterComm definitions) */
	if (size >= 2 && argc > 1 && argv[1][0] == 'i') {
		MPI_Comm inter;
		MPI_Intercomm_create(half, 0, w, rank % 2 ? 0 : 1, 5, &inter);
		int rs;
		MPI_Comm_remote_size(inter, &rs);
		if (hr == 0) {
			if (rank % 2 == 0)
				MPI_Send(&v, 1, MPI_INT, 0, 8, inter);
			else
				MPI_Recv(&v, 1, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(inter);
		MPI_Comm_free(&inter);
	}
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
	if (rank == 0)
		printf("coll ok\n");
	MPI_Finalize();
	return 0;
}
