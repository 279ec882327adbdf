/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_io.c - MPI-IO of known sizes (tests/mpi/check_mpiio.py): usage
 * mpi_io DIR. Every rank r of N, on DIR/data.bin (MPI_COMM_WORLD):
 *   writes  write_at_all 1024 B (coll), write_at 400 B (100 ints),
 *           write_shared 64 B, write_ordered 32 B (coll),
 *           write_all_begin/end 128 B (split coll), iwrite_at 256 B (Wait);
 *   syncs   once (coll);
 *   reads   iread_at 1024 B, iread_at_all 400 B (coll), iread_shared 64 B
 *           (Waitall), read_all 128 B (coll), iread_at 256 B (Test loop);
 *   seeks   seek_shared twice, seek twice;
 * then writes 256 B to DIR/self<r>.bin (MPI_COMM_SELF; with MPI 4 also
 * write_c 256 B and iwrite_at_c 256 B + Wait) and 128 B collectively
 * to DIR/dup.bin (a duplicate of MPI_COMM_WORLD). Rank 0 creates and
 * MPI_File_deletes DIR/scratch.bin; every rank fails to open and to delete a
 * missing file. Every read is checked against what was
 * written; rank 0 prints the file size and the error count. The file
 * contents do not depend on timing (shared-pointer writes carry the same
 * bytes on every rank), so traced and untraced runs write identical files.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define A_SZ 1024
#define B_N 100
#define C_SZ 64
#define D_SZ 32
#define E_SZ 128
#define F_SZ 256

static int errors;

static void check(int ok, const char *what, int rank)
{
	if (!ok) {
		errors++;
		fprintf(stderr, "rank %d: %s\n", rank, what);
	}
}

int main(int argc, char **argv)
{
	int r, n;
	char path[4096];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	const char *dir = argc > 1 ? argv[1] : ".";
	const MPI_Offset A = 0, B = A + (MPI_Offset)n * A_SZ, C = B + (MPI_Offset)n * B_N * 4,
			 E = C + (MPI_Offset)n * (C_SZ + D_SZ), F = E + (MPI_Offset)n * E_SZ;

	snprintf(path, sizeof(path), "%s/data.bin", dir);
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
		fprintf(stderr, "rank %d: cannot open %s\n", r, path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);

	char a[A_SZ], c[C_SZ], d[D_SZ], e[E_SZ], f[F_SZ];
	int b[B_N];
	memset(a, 'a' + r % 26, sizeof(a));
	for (int i = 0; i < B_N; i++)
		b[i] = r * 1000 + i;
	memset(c, 'S', sizeof(c));
	memset(d, '0' + r % 10, sizeof(d));
	memset(e, 'A' + r % 26, sizeof(e));
	memset(f, 'k' + r % 10, sizeof(f));
	MPI_Status st;
	MPI_Request rq[3];

	/* writes */
	MPI_File_write_at_all(fh, A + (MPI_Offset)r * A_SZ, a, A_SZ, MPI_BYTE, &st);
	MPI_File_write_at(fh, B + (MPI_Offset)r * B_N * 4, b, B_N, MPI_INT, MPI_STATUS_IGNORE);
	MPI_File_seek_shared(fh, C, MPI_SEEK_SET);
	MPI_File_write_shared(fh, c, C_SZ, MPI_BYTE, &st);
	MPI_Barrier(MPI_COMM_WORLD);   /* every shared write done before the ordered ones */
	MPI_File_write_ordered(fh, d, D_SZ, MPI_BYTE, &st);
	MPI_File_seek(fh, E + (MPI_Offset)r * E_SZ, MPI_SEEK_SET);
	MPI_File_write_all_begin(fh, e, E_SZ, MPI_BYTE);
	MPI_File_write_all_end(fh, e, &st);
	MPI_File_iwrite_at(fh, F + (MPI_Offset)r * F_SZ, f, F_SZ, MPI_BYTE, &rq[0]);
	MPI_Wait(&rq[0], &st);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);

	/* non-blocking reads */
	char ra[A_SZ], rc[C_SZ], re[E_SZ], rf[F_SZ];
	int rb[B_N];
	int peer = (r + 1) % n;
	MPI_File_iread_at(fh, A + (MPI_Offset)peer * A_SZ, ra, A_SZ, MPI_BYTE, &rq[0]);
	MPI_File_iread_at_all(fh, B + (MPI_Offset)r * B_N * 4, rb, B_N, MPI_INT, &rq[1]);
	MPI_File_seek_shared(fh, C, MPI_SEEK_SET);
	MPI_File_iread_shared(fh, rc, C_SZ, MPI_BYTE, &rq[2]);
	MPI_Status sts[3];
	MPI_Waitall(3, rq, sts);
	int cnt = -1;
	MPI_Get_count(&sts[0], MPI_BYTE, &cnt);
	check(cnt == A_SZ, "iread_at count", r);
	for (int i = 0; i < A_SZ; i++)
		if (ra[i] != 'a' + peer % 26) {
			check(0, "iread_at data", r);
			break;
		}
	for (int i = 0; i < B_N; i++)
		if (rb[i] != r * 1000 + i) {
			check(0, "iread_at_all data", r);
			break;
		}
	check(memcmp(rc, c, C_SZ) == 0, "iread_shared data", r);
	MPI_File_seek(fh, E + (MPI_Offset)r * E_SZ, MPI_SEEK_SET);
	MPI_File_read_all(fh, re, E_SZ, MPI_BYTE, &st);
	check(memcmp(re, e, E_SZ) == 0, "read_all data", r);
	MPI_File_iread_at(fh, F + (MPI_Offset)r * F_SZ, rf, F_SZ, MPI_BYTE, &rq[0]);
	int flag = 0;
	while (!flag)
		MPI_Test(&rq[0], &flag, &st);
	check(memcmp(rf, f, F_SZ) == 0, "iread_at (Test) data", r);
	MPI_Offset size = 0;
	MPI_File_get_size(fh, &size);
	MPI_File_close(&fh);

	/* one file per rank */
	snprintf(path, sizeof(path), "%s/self%d.bin", dir, r);
	MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	MPI_File_write(fh, f, F_SZ, MPI_BYTE, &st);
#if MPI_VERSION >= 4
	/* large-count forms (MPICH 4.0; Open MPI 4.1 has none) */
	MPI_File_write_c(fh, f, (MPI_Count)F_SZ, MPI_BYTE, &st);
	MPI_File_iwrite_at_c(fh, 2 * F_SZ, f, (MPI_Count)F_SZ, MPI_BYTE, &rq[0]);
	MPI_Wait(&rq[0], &st);
#endif
	MPI_File_close(&fh);
	/* a created communicator */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	snprintf(path, sizeof(path), "%s/dup.bin", dir);
	MPI_File_open(dup, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	MPI_File_write_at_all(fh, (MPI_Offset)r * E_SZ, e, E_SZ, MPI_BYTE, &st);
	MPI_File_close(&fh);
	MPI_Comm_free(&dup);
	/* failing calls: no handle, no IoDeleteFile */
	snprintf(path, sizeof(path), "%s/missing/none.bin", dir);
	check(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS,
	      "open of a missing file succeeded", r);
	check(MPI_File_delete(path, MPI_INFO_NULL) != MPI_SUCCESS, "delete of a missing file succeeded", r);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/scratch.bin", dir);
		MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
		MPI_File_close(&fh);
		MPI_File_delete(path, MPI_INFO_NULL);
	}

	int all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (r == 0)
		printf("mpi_io: %d ranks, data.bin %lld bytes, %d errors\n", n, (long long)size, all);
	MPI_Finalize();
	return all != 0;
}
