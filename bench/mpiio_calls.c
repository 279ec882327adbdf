/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiio_calls.c - N MPI-IO calls of 4 KiB on one file (bench/mpiio.sh):
 * usage mpiio_calls write_at|read_at|iwrite_at DIR N. Prints the mean thread
 * CPU time per call in ns (iwrite_at: MPI_File_iwrite_at + MPI_Wait).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"

static char buf[BENCH_BLOCK];
static MPI_File fh;

static int do_write_at(void *ctx, long i)
{
	MPI_Status st;
	(void)ctx;
	MPI_File_write_at(fh, BENCH_OFFSET(i), buf, BENCH_BLOCK, MPI_BYTE, &st);
	return 0;
}

static int do_read_at(void *ctx, long i)
{
	MPI_Status st;
	(void)ctx;
	MPI_File_read_at(fh, BENCH_OFFSET(i), buf, BENCH_BLOCK, MPI_BYTE, &st);
	return 0;
}

static int do_iwrite_at(void *ctx, long i)
{
	MPI_Status st;
	MPI_Request rq;
	(void)ctx;
	MPI_File_iwrite_at(fh, BENCH_OFFSET(i), buf, BENCH_BLOCK, MPI_BYTE, &rq);
	MPI_Wait(&rq, &st);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	MPI_Init(&argc, &argv);
	if (argc < 4) {
		fprintf(stderr, "usage: mpiio_calls write_at|read_at|iwrite_at DIR N\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *kind = argv[1];
	long n = atol(argv[3]);
	snprintf(path, sizeof(path), "%s/mpiio_calls.bin", argv[2]);
	MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
		      MPI_INFO_NULL, &fh);
	bench_time_calls(BENCH_NBLOCKS, do_write_at, n,
			 !strcmp(kind, "read_at") ? do_read_at : !strcmp(kind, "iwrite_at") ? do_iwrite_at : do_write_at,
			 NULL);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
