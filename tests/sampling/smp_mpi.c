/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_mpi.c - an MPI program for the sampling tests: every rank computes in
 * mpi_leaf() until it used SMP_CPU_SECONDS (default 1) of CPU time, with an
 * MPI_Allreduce every ~10 ms of CPU, and prints its CPU time
 * ("rank R cpu_ns=N").
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "smp_cpu.h"

volatile double smp_sink;

__attribute__((noinline)) void mpi_leaf(double s)
{
	smp_spin_cpu(s);
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double budget = getenv("SMP_CPU_SECONDS") ? atof(getenv("SMP_CPU_SECONDS")) : 1.0;
	double end = cpu_seconds() + budget;
	int done = 0;
	while (!done) {
		mpi_leaf(0.010);
		int mine = cpu_seconds() >= end, all = 0;
		MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		done = all;
	}
	double c = cpu_seconds();
	MPI_Finalize();
	printf("rank %d cpu_ns=%.0f\n", rank, c * 1e9);
	return 0;
}
