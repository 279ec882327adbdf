/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lastthreads.c - TRACER_DURABLE against the program's own life cycle (once
 * checked against the tracer-io thread, which no longer exists).
 *
 *   lastthreads mainexit        main registers an atexit handler, starts 8
 *                               threads that leave together (barrier) and
 *                               calls pthread_exit: the last of them must end
 *                               the process (atexit handler runs, status 0).
 *   lastthreads closeall FILE   3 threads take a mutex in a loop while main
 *                               closes every descriptor above 2 (close_range)
 *                               and opens FILE: every open must return 3.
 *   lastthreads daemon FILE     forks; the parent returns at once; the child
 *                               starts a new session, closes EVERY descriptor
 *                               (0, 1, 2 too), runs 3 locking threads, then
 *                               opens FILE (must be 0) and writes its result.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockers.h"

static pthread_barrier_t bar;

static void bye(void)
{
	printf("lastthreads mainexit: atexit handler ran\n");
}

static void *leaver(void *arg)
{
	pthread_mutex_lock(&lk_mu);
	lk_sink++;
	pthread_mutex_unlock(&lk_mu);
	pthread_barrier_wait(&bar);
	return arg;
}

static void close_from(unsigned int first)
{
	if (syscall(SYS_close_range, first, ~0u, 0u) != 0)
		for (int fd = (int)first; fd < 65536; fd++)
			close(fd);
}

/* Locking threads for secs while main opens path after closing every
 * descriptor from `from`; returns the opens that got another number. */
static long race(const char *path, unsigned int from, double secs, long *opens)
{
	long bad = 0;
	lockers_start(3);
	double end = lk_now() + secs;
	*opens = 0;
	while (lk_now() < end) {
		close_from(from);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd != (int)from)
			bad++;
		if (fd >= 0)
			close(fd);
		(*opens)++;
	}
	lockers_stop(3);
	return bad;
}

int main(int argc, char **argv)
{
	long opens;
	if (argc > 1 && !strcmp(argv[1], "mainexit")) {
		atexit(bye);
		pthread_barrier_init(&bar, NULL, 8);
		for (int i = 0; i < 8; i++) {
			pthread_t t;
			pthread_create(&t, NULL, leaver, NULL);
			pthread_detach(t);
		}
		pthread_exit(NULL);
	}
	if (argc > 2 && !strcmp(argv[1], "closeall")) {
		long bad = race(argv[2], 3, 0.5, &opens);
		printf("lastthreads closeall: opens returned another number than 3: %ld\n", bad);
		return opens > 0 && bad == 0 ? 0 : 1;
	}
	if (argc > 2 && !strcmp(argv[1], "daemon")) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p > 0)
			return 0;
		setsid();
		long bad = race(argv[2], 0, 0.3, &opens);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char line[128];
		int n = snprintf(line, sizeof(line), "lastthreads daemon: fd %d, opens returned another number than 0: %ld\n",
				 fd, bad);
		if (fd >= 0 && write(fd, line, (size_t)n) == n)
			close(fd);
		return 0;
	}
	fprintf(stderr, "usage: lastthreads mainexit | closeall FILE | daemon FILE\n");
	return 2;
}
