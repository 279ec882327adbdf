/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_mpi.c - tests/io: every rank writes DIR/rank<r>.dat ((r + 1) * 1000
 * bytes with write()) and reads it back with fread(); rank 0 prints the
 * totals (io_tests.py mpi checks the unified archive per rank).
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[8192];
	char path[4096];
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(path, sizeof(path), "%s/rank%d.dat", argc > 1 ? argv[1] : ".", rank);
	memset(buf, 'a' + rank, sizeof(buf));
	long w = 0, r = 0;
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	for (int i = 0; i <= rank; i++)
		w += write(fd, buf, 1000);
	close(fd);
	FILE *fp = fopen(path, "r");
	if (fp) {
		r = (long)fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
	}
	long tw = 0, trd = 0;
	MPI_Reduce(&w, &tw, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&r, &trd, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%d ranks wrote %ld read %ld\n", size, tw, trd);
	MPI_Finalize();
	return 0;
}
