/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point under the tracer: blocking ring, non-blocking ping-pong,
 * ANY_SOURCE receives, persistent requests, probes, matched probes,
 * Waitany/Waitsome/Testsome, a cancelled receive. Prints "p2p ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rank %d: check failed: %s (line %d)\n", rank, #c, __LINE__); MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

int main(int argc, char **argv)
{
	int rank, size, buf[64], rbuf[64];
	MPI_Status st;
	MPI_Request rq[4];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (int i = 0; i < 64; i++)
		buf[i] = rank * 100 + i;

	/* 1. blocking ring, three rounds with different lengths/tags */
	for (int it = 0; it < 3; it++) {
		if (rank % 2 == 0) {
			MPI_Send(buf, 4 + it, MPI_INT, right, 10 + it, MPI_COMM_WORLD);
			MPI_Recv(rbuf, 64, MPI_INT, left, 10 + it, MPI_COMM_WORLD, &st);
		} else {
			MPI_Recv(rbuf, 64, MPI_INT, left, 10 + it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 4 + it, MPI_INT, right, 10 + it, MPI_COMM_WORLD);
		}
		CHECK(rbuf[0] == left * 100);
	}
	MPI_Sendrecv(buf, 5, MPI_INT, right, 13, rbuf, 64, MPI_INT, left, 13, MPI_COMM_WORLD, &st);
	CHECK(st.MPI_SOURCE == left);
	MPI_Sendrecv_replace(rbuf, 2, MPI_INT, right, 14, left, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

	/* 2. non-blocking ping-pong 0 <-> 1 */
	if (rank < 2 && size >= 2) {
		int peer = 1 - rank;
		for (int it = 0; it < 3; it++) {
			MPI_Irecv(rbuf, 64, MPI_DOUBLE, peer, 15, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(buf, 3, MPI_DOUBLE, peer, 15, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
		int flag = 0;
		MPI_Irecv(rbuf, 64, MPI_CHAR, peer, 16, MPI_COMM_WORLD, &rq[0]);
		MPI_Issend(buf, 7, MPI_CHAR, peer, 16, MPI_COMM_WORLD, &rq[1]);
		while (!flag)
			MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
	}

	/* 3. ANY_SOURCE / ANY_TAG receives at rank 0; ready sends to
	 * pre-posted ANY_SOURCE receives */
	MPI_Request arq[8];
	if (rank == 0) {
		for (int i = 1; i < size; i++)
			MPI_Recv(rbuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				 i % 2 ? MPI_STATUS_IGNORE : &st);
		for (int i = 1; i < size && i < 4; i++)
			MPI_Irecv(rbuf + 16 * i, 16, MPI_INT, MPI_ANY_SOURCE, 19, MPI_COMM_WORLD, &arq[i - 1]);
	} else {
		MPI_Send(buf, rank, MPI_INT, 0, 60 + rank, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_Waitall(size - 1 < 3 ? size - 1 : 3, arq, MPI_STATUSES_IGNORE);
	else if (rank < 4)
		MPI_Rsend(buf, 2 * rank, MPI_INT, 0, 19, MPI_COMM_WORLD);

	/* 4. persistent requests around the ring */
	MPI_Send_init(buf, 6, MPI_INT, right, 22, MPI_COMM_WORLD, &rq[0]);
	MPI_Recv_init(rbuf, 64, MPI_INT, left, 22, MPI_COMM_WORLD, &rq[1]);
	for (int it = 0; it < 2; it++) {
		MPI_Startall(2, rq);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	}
	MPI_Start(&rq[1]);
	MPI_Start(&rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Wait(&rq[1], &st);
	MPI_Request_free(&rq[0]);
	MPI_Request_free(&rq[1]);

	/* 5. probes and matched probes: send three to the left */
	MPI_Isend(buf, 8, MPI_INT, left, 30, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(buf, 9, MPI_INT, left, 31, MPI_COMM_WORLD, &rq[1]);
	MPI_Isend(buf, 10, MPI_INT, left, 32, MPI_COMM_WORLD, &rq[2]);
	MPI_Probe(right, 30, MPI_COMM_WORLD, &st);
	MPI_Recv(rbuf, 64, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Message msg;
	MPI_Mprobe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &msg, &st);
	MPI_Mrecv(rbuf, 64, MPI_INT, &msg, MPI_STATUS_IGNORE);
	int flag = 0;
	while (!flag)
		MPI_Improbe(right, 32, MPI_COMM_WORLD, &flag, &msg, &st);
	MPI_Imrecv(rbuf, 64, MPI_INT, &msg, &rq[3]);
	MPI_Wait(&rq[3], &st);
	CHECK(st.MPI_SOURCE == right);
	MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);

	/* 6. Waitany / Waitsome / Testsome */
	MPI_Irecv(rbuf, 32, MPI_INT, left, 40, MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(rbuf + 32, 32, MPI_INT, left, 41, MPI_COMM_WORLD, &rq[1]);
	MPI_Isend(buf, 11, MPI_INT, right, 40, MPI_COMM_WORLD, &rq[2]);
	MPI_Isend(buf, 12, MPI_INT, right, 41, MPI_COMM_WORLD, &rq[3]);
	int idx, out, ind[4], left_n = 4;
	MPI_Waitany(4, rq, &idx, &st);
	left_n--;
	MPI_Waitsome(4, rq, &out, ind, MPI_STATUSES_IGNORE);
	left_n -= out;
	while (left_n > 0) {
		MPI_Testsome(4, rq, &out, ind, MPI_STATUSES_IGNORE);
		if (out != MPI_UNDEFINED)
			left_n -= out;
	}

	/* 7. a receive that is cancelled */
	MPI_Irecv(rbuf, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &rq[0]);
	MPI_Cancel(&rq[0]);
	MPI_Wait(&rq[0], &st);
	int cancelled = 0;
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled);

	/* 8. sends to MPI_PROC_NULL record nothing */
	MPI_Send(buf, 1, MPI_INT, MPI_PROC_NULL, 50, MPI_COMM_WORLD);
	MPI_Recv(rbuf, 1, MPI_INT, MPI_PROC_NULL, 50, MPI_COMM_WORLD, &st);

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("p2p ok\n");
	MPI_Finalize();
	return 0;
}
