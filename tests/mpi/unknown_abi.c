/* SPDX-License-Identifier: BSD-3-Clause */
/* Linked against fake_mpi.c (an MPI of an unknown ABI): its calls must
 * reach the library unchanged through libtracer.so's MPI entry points. */
#include <stdio.h>

int MPI_Init(int *argc, char ***argv);
int MPI_Send(const void *buf, int count, long type, int dest, int tag, long comm);
int MPI_Finalize(void);
void mpi_barrier_(int *comm, int *ierr);
int fake_mpi_calls(void);

int main(int argc, char **argv)
{
	int v = 42, comm = 7, ierr = -1;
	int r = MPI_Init(&argc, &argv);
	r |= MPI_Send(&v, 1, 0x123456789abcl, 3, 99, 0x7edcba987654l);
	mpi_barrier_(&comm, &ierr);
	r |= MPI_Finalize();
	printf("unknown abi: ret %d ierr %d, %d calls\n", r, ierr, fake_mpi_calls());
	return r;
}
