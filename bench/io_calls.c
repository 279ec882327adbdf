/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_calls.c - bench/io: N I/O calls on a file in DIR (a tmpfs). Prints the
 * ns per call, nothing else on stdout. Time is the thread's CPU time (user
 * + system: the system call and the tracer's in-loop flushes count, other
 * processes on a shared machine do not).
 *   io_calls pwrite DIR N   N pwrite of 4 KiB (offsets cycle over 1 MiB)
 *   io_calls pread DIR N    N pread of 4 KiB (same)
 *   io_calls fwrite DIR N   N fwrite of 64 bytes to one stream
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_clock.h"

static char buf[BENCH_BLOCK];
static int fd;
static FILE *fp;

static int do_pwrite(void *ctx, long i)
{
	(void)ctx;
	return pwrite(fd, buf, BENCH_BLOCK, BENCH_OFFSET(i)) != BENCH_BLOCK;
}

static int do_pread(void *ctx, long i)
{
	(void)ctx;
	return pread(fd, buf, BENCH_BLOCK, BENCH_OFFSET(i)) != BENCH_BLOCK;
}

static int do_fwrite(void *ctx, long i)
{
	(void)ctx;
	(void)i;
	fwrite(buf, 1, 64, fp);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc < 4)
		return 2;
	long n = atol(argv[3]);
	snprintf(path, sizeof(path), "%s/io_calls.dat", argv[2]);
	memset(buf, 'b', sizeof(buf));
	int r;
	if (!strcmp(argv[1], "fwrite")) {
		fp = fopen(path, "w");
		if (!fp)
			return 1;
		r = bench_time_calls(10000, do_fwrite, n, do_fwrite, NULL);
		fclose(fp);
	} else {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return 1;
		r = bench_time_calls(BENCH_NBLOCKS, do_pwrite, n, !strcmp(argv[1], "pread") ? do_pread : do_pwrite,
				     NULL);
		close(fd);
	}
	unlink(path);
	return r;
}
