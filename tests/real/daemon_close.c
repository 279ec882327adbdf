/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_close.c - a daemon()-style program: two threads take a mutex
 * (enough events to flush chunks), then every inherited descriptor from 3 up
 * is closed (close_range, as daemons, shells and job launchers do), then the
 * program opens its own output file and writes short lines to it while a
 * third thread, running since the start, goes on taking the lock. Untraced the file holds exactly the
 * program's lines; a tracer still writing to an old descriptor number would
 * land in it.
 *
 * usage: daemon_close OUTFILE [LOCKS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long nlocks = 200000;
static volatile int writing_done;

static void *locker(void *arg)
{
	for (long i = 0; i < nlocks; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

static volatile int closed;

/* runs across the close: its event file (if the tracer keeps one open) was
 * opened before close_range and is written to after it */
static void *late_locker(void *arg)
{
	long after = 0;
	for (;;) {
		int c = __atomic_load_n(&closed, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		if (c)
			after++;
		if (after >= nlocks / 4 && __atomic_load_n(&writing_done, __ATOMIC_ACQUIRE))
			return arg;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: daemon_close OUTFILE [LOCKS]\n");
		return 2;
	}
	if (argc > 2)
		nlocks = atol(argv[2]);
	pthread_t a, b, c;
	pthread_create(&c, NULL, late_locker, NULL);
	pthread_create(&a, NULL, locker, NULL);
	pthread_create(&b, NULL, locker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	if (close_range(3, ~0U, 0) != 0) {
		perror("close_range");
		return 1;
	}
	__atomic_store_n(&closed, 1, __ATOMIC_RELEASE);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < 1000; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "line %d of the daemon\n", i);
		if (write(fd, line, (size_t)n) != n) {
			perror("write");
			return 1;
		}
		if (i % 100 == 0)
			usleep(1000);
	}
	__atomic_store_n(&writing_done, 1, __ATOMIC_RELEASE);
	pthread_join(c, NULL);
	close(fd);
	printf("daemon: fd %d, %d lines\n", fd, 1000);
	return 0;
}
