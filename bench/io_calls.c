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
#include <time.h>
#include "bench_clock.h"
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	char path[4096];
	if (argc < 4)
		return 2;
	long n = atol(argv[3]);
	snprintf(path, sizeof(path), "%s/io_calls.dat", argv[2]);
	memset(buf, 'b', sizeof(buf));
	double t0, t1;
	if (!strcmp(argv[1], "fwrite")) {
		FILE *fp = fopen(path, "w");
		if (!fp)
			return 1;
		for (long i = 0; i < 10000; i++)
			fwrite(buf, 1, 64, fp);
		t0 = bench_cpu_ns();
		for (long i = 0; i < n; i++)
			fwrite(buf, 1, 64, fp);
		t1 = bench_cpu_ns();
		fclose(fp);
	} else {
		int rd = !strcmp(argv[1], "pread");
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return 1;
		for (long i = 0; i < 256; i++)   /* 1 MiB file, warm-up */
			if (pwrite(fd, buf, 4096, i * 4096) != 4096)
				return 1;
		t0 = bench_cpu_ns();
		for (long i = 0; i < n; i++) {
			ssize_t r = rd ? pread(fd, buf, 4096, (i & 255) * 4096) : pwrite(fd, buf, 4096, (i & 255) * 4096);
			if (r != 4096)
				return 1;
		}
		t1 = bench_cpu_ns();
		close(fd);
	}
	unlink(path);
	printf("%.1f\n", (t1 - t0) / n);
	return 0;
}
