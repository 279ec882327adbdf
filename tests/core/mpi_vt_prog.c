/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_vt_prog.c - MPI + ITC VT target of tests/core (core_mpi_vt_groups):
 * VT classes whose REGIONS groups are made by the VT module's fini hook must
 * reach the unified archive written at MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include "VT.h"

int main(int argc, char **argv)
{
	int r, cls, f_solve, f_comm;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	VT_classdef("CoreSolver", &cls);
	VT_funcdef("solve_step", cls, &f_solve);
	VT_funcdef("halo_exchange", cls, &f_comm);
	for (int i = 0; i < 3; i++) {
		VT_begin(f_solve);
		VT_begin(f_comm);
		MPI_Barrier(MPI_COMM_WORLD);
		VT_end(f_comm);
		VT_end(f_solve);
	}
	MPI_Finalize();
	printf("rank %d done\n", r);
	return 0;
}
