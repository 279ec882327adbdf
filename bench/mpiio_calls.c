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
#include <time.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
	static char buf[4096];
	char path[4096];
	MPI_File fh;
	MPI_Status st;
	MPI_Request rq;
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
	for (int i = 0; i < 256; i++)   /* the file exists in full, the first calls warmed up */
		MPI_File_write_at(fh, (MPI_Offset)i * 4096, buf, 4096, MPI_BYTE, &st);
	double t0 = bench_cpu_ns();
	for (long i = 0; i < n; i++) {
		MPI_Offset off = (MPI_Offset)(i % 256) * 4096;
		if (!strcmp(kind, "read_at")) {
			MPI_File_read_at(fh, off, buf, 4096, MPI_BYTE, &st);
		} else if (!strcmp(kind, "iwrite_at")) {
			MPI_File_iwrite_at(fh, off, buf, 4096, MPI_BYTE, &rq);
			MPI_Wait(&rq, &st);
		} else {
			MPI_File_write_at(fh, off, buf, 4096, MPI_BYTE, &st);
		}
	}
	double t1 = bench_cpu_ns();
	printf("%.1f\n", (t1 - t0) / (double)n);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
