/* SPDX-License-Identifier: BSD-3-Clause */
/* A stand-in for an MPI library of an ABI libtracer.so does not know (say
 * a future MPI-5 ABI library: soname libmpi_abi.so.1): the tracer must say
 * so in one line, leave MPI untraced and the program unharmed. Handles are
 * 64-bit values here, which neither Open MPI's nor MPICH's layer could
 * read. */
#include <stdio.h>

static int calls;

int PMPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	calls++;
	return 0;
}
int MPI_Init(int *argc, char ***argv) __attribute__((alias("PMPI_Init")));

int PMPI_Send(const void *buf, int count, long type, int dest, int tag, long comm)
{
	calls++;
	printf("send %d %d %lx %d %d %lx\n", *(const int *)buf, count, type, dest, tag, comm);
	return 0;
}
int MPI_Send(const void *buf, int count, long type, int dest, int tag, long comm)
	__attribute__((alias("PMPI_Send")));

int PMPI_Finalize(void)
{
	calls++;
	return 0;
}
int MPI_Finalize(void) __attribute__((alias("PMPI_Finalize")));

void mpi_barrier_(int *comm, int *ierr)
{
	calls++;
	printf("fortran barrier %d\n", *comm);
	*ierr = 0;
}

int fake_mpi_calls(void)
{
	return calls;
}
