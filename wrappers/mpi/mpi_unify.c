/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_unify.c - the MPI run's shared work at MPI_Init and MPI_Finalize
 * (mpi_core.c calls it): the archive directory agreed by every rank, clock
 * offsets against rank 0, and the unification of the ranks' definitions
 * into one archive, all over the tracer's private communicator
 * (tr_mpi_pcomm). Per MPI ABI, as the generated wrappers.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mpi_int.h"

#define TAG_SYNC  0x7ace
#define TAG_UNIFY 0x7acf

void tr_mpi_agree_dir(void)
{
	char dir[4096];
	memset(dir, 0, sizeof(dir));
	if (tr_mpi_world_rank == 0) {
		const char *d = tr_archive_dir();
		if (d)
			snprintf(dir, sizeof(dir), "%s", d);
	}
	PMPI_Bcast(dir, (int)sizeof(dir), MPI_CHAR, 0, tr_mpi_pcomm);
	if (tr_mpi_world_rank == 0 || !dir[0])
		return;
	const char *mine = tr_archive_dir();
	if (mine && !strcmp(mine, dir))
		return;
	if (tr_archive_set_dir(dir) != 0)
		tr_log_error("rank %d: cannot use the archive directory %s of rank 0 (files already written); "
			     "this rank's trace stays in %s", tr_mpi_world_rank, dir, mine ? mine : "?");
}

/* Ping-pong with rank 0; offset = t_root - midpoint of the min-RTT sample.
 * WARM uncounted round trips first: right after MPI_Init the first messages
 * between two ranks are slow (connection set-up: round trips of ~12 ms were
 * seen here, which made the MPI_Init offset uncertain by +-6 ms). Then at
 * most K samples per rank; a rank stops after KMIN samples once its best
 * round trip is below 5 us (shared memory, fast networks) or after 10 ms
 * (oversubscribed nodes, where more samples do not help). A ping carries 1
 * ("reply please") or 0 ("done"). */
/* 1 for every rank that shares rank 0's clock: same host (one TSC /
 * CLOCK_MONOTONIC for every process there) and the same test skew. Those
 * ranks record offset 0 without a ping-pong (it would measure 0 within its
 * uncertainty), which keeps MPI_Init/MPI_Finalize short with many ranks per
 * node. malloc'ed array of world size (NULL: measure every rank). */
static unsigned char *same_clock_as_root(void)
{
	uint64_t mine[2] = { 1469598103934665603ull, (uint64_t)tr_cfg.test_clock_skew_ns };
	for (const char *h = tr_proc.hostname; *h; h++)
		mine[0] = (mine[0] ^ (unsigned char)*h) * 1099511628211ull;
	int n = tr_mpi_world_size;
	uint64_t *all = tr_malloc(sizeof(uint64_t) * 2 * (size_t)n);
	unsigned char *same = tr_malloc((size_t)n);
	if (!all || !same || PMPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, tr_mpi_pcomm) != MPI_SUCCESS) {
		tr_free(all);
		tr_free(same);
		return NULL;
	}
	for (int r = 0; r < n; r++)
		same[r] = all[2 * r] == all[0] && all[2 * r + 1] == all[1];
	tr_free(all);
	return same;
}

void tr_mpi_clock_sync(void)
{
	enum { WARM = 2, K = 32, KMIN = 4 };
	if (tr_mpi_world_size <= 1) {
		tr_def_clock_offset(tr_time(), 0, 0.0);
		return;
	}
	PMPI_Barrier(tr_mpi_pcomm);
	unsigned char *same = same_clock_as_root();
	if (tr_mpi_world_rank != 0 && same && same[tr_mpi_world_rank]) {
		tr_free(same);
		tr_def_clock_offset(tr_time(), 0, 0.0);
		return;
	}
	if (tr_mpi_world_rank == 0) {
		for (int r = 1; r < tr_mpi_world_size; r++) {
			if (same && same[r])
				continue;
			for (;;) {
				uint64_t v = 0;
				PMPI_Recv(&v, 8, MPI_BYTE, r, TAG_SYNC, tr_mpi_pcomm, MPI_STATUS_IGNORE);
				if (!v)
					break;
				v = tr_time();
				PMPI_Send(&v, 8, MPI_BYTE, r, TAG_SYNC, tr_mpi_pcomm);
			}
		}
		tr_free(same);
		tr_def_clock_offset(tr_time(), 0, 0.0);
		return;
	}
	tr_free(same);
	uint64_t fast = tr_clock_resolution() / 200000;   /* 5 us */
	uint64_t budget = tr_clock_resolution() / 100;    /* 10 ms per rank */
	for (int k = 0; k < WARM; k++) {
		uint64_t v = 1;
		PMPI_Send(&v, 8, MPI_BYTE, 0, TAG_SYNC, tr_mpi_pcomm);
		PMPI_Recv(&v, 8, MPI_BYTE, 0, TAG_SYNC, tr_mpi_pcomm, MPI_STATUS_IGNORE);
	}
	uint64_t best = UINT64_MAX, mid = 0, root = 0, start = tr_time();
	for (int k = 0; k < K && !(k >= KMIN && (best < fast || tr_time() - start > budget)); k++) {
		uint64_t v = 1, t1 = tr_time();
		PMPI_Send(&v, 8, MPI_BYTE, 0, TAG_SYNC, tr_mpi_pcomm);
		PMPI_Recv(&v, 8, MPI_BYTE, 0, TAG_SYNC, tr_mpi_pcomm, MPI_STATUS_IGNORE);
		uint64_t t2 = tr_time();
		if (t2 - t1 < best) {
			best = t2 - t1;
			mid = t1 + best / 2;
			root = v;
		}
	}
	uint64_t done = 0;
	PMPI_Send(&done, 8, MPI_BYTE, 0, TAG_SYNC, tr_mpi_pcomm);
	int64_t off = (int64_t)(root - mid);
	/* The true offset lies within +-RTT/2 of the estimate: if 0 is inside,
	 * the clocks agree as far as we can tell (same node, shared clock). */
	if ((uint64_t)(off < 0 ? -off : off) <= best / 2)
		off = 0;
	tr_def_clock_offset(mid, off, (double)best / 2.0);
}

static int send_buf(const void *buf, uint64_t len, int to)
{
	if (PMPI_Send(&len, 8, MPI_BYTE, to, TAG_UNIFY, tr_mpi_pcomm) != MPI_SUCCESS)
		return -1;
	for (uint64_t off = 0; off < len;) {
		int n = len - off > (1u << 30) ? (1 << 30) : (int)(len - off);
		if (PMPI_Send((const char *)buf + off, n, MPI_BYTE, to, TAG_UNIFY, tr_mpi_pcomm) != MPI_SUCCESS)
			return -1;
		off += (uint64_t)n;
	}
	return 0;
}

static void *recv_buf(uint64_t *len, int from)
{
	*len = 0;
	if (PMPI_Recv(len, 8, MPI_BYTE, from, TAG_UNIFY, tr_mpi_pcomm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return NULL;
	char *b = tr_malloc(*len ? *len : 1);
	for (uint64_t off = 0; off < *len;) {
		int n = *len - off > (1u << 30) ? (1 << 30) : (int)(*len - off);
		PMPI_Recv(b ? b + off : NULL, b ? n : 0, MPI_BYTE, from, TAG_UNIFY, tr_mpi_pcomm, MPI_STATUS_IGNORE);
		off += (uint64_t)n;
	}
	return b;
}

void tr_mpi_unify(void)
{
	void *buf = NULL;
	size_t len = 0;
	int rank = tr_mpi_world_rank, size = tr_mpi_world_size;
	uint64_t t0 = tr_time();
	if (tr_defs_pack(&buf, &len) != 0) {
		tr_log_error("rank %d: packing the definitions failed", rank);
		buf = NULL;
		len = 0;
	}
	for (int mask = 1; mask < size; mask <<= 1) {
		if (rank & mask) {
			send_buf(buf, len, rank - mask);
			break;
		}
		if (rank + mask >= size)
			continue;
		uint64_t rlen;
		void *rb = recv_buf(&rlen, rank + mask);
		if (rb && rlen) {
			if (!len) {
				tr_free(buf);
				buf = rb;
				len = rlen;
				continue;
			}
			const void *bufs[2] = { buf, rb };
			size_t lens[2] = { len, rlen };
			void *out = NULL;
			size_t olen = 0;
			if (tr_defs_merge(bufs, lens, 2, &out, &olen) == 0) {
				tr_free(buf);
				buf = out;
				len = olen;
			} else {
				tr_log_error("rank %d: merging the definitions of rank %d failed", rank, rank + mask);
			}
		}
		tr_free(rb);
	}
	/* Broadcast the unified set. */
	uint64_t blen = len;
	PMPI_Bcast(&blen, 8, MPI_BYTE, 0, tr_mpi_pcomm);
	if (rank != 0) {
		tr_free(buf);
		buf = tr_malloc(blen ? blen : 1);
		len = blen;
	}
	for (uint64_t off = 0; off < blen;) {
		int n = blen - off > (1u << 30) ? (1 << 30) : (int)(blen - off);
		PMPI_Bcast(buf ? (char *)buf + off : NULL, buf ? n : 0, MPI_BYTE, 0, tr_mpi_pcomm);
		off += (uint64_t)n;
	}
	if (buf && len) {
		if (tr_defs_install_unified(buf, len) != 0)
			tr_log_error("rank %d: installing the unified definitions failed", rank);
	} else {
		tr_log_error("rank %d: no unified definitions (trace left per rank)", rank);
	}
	tr_free(buf);
	if (rank == 0)
		tr_log_debug("MPI unification of %d ranks: %llu bytes, %llu us", size, (unsigned long long)blen,
			     (unsigned long long)(tr_ticks_to_ns(tr_time() - t0) / 1000));
}
