/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_race.c - descriptor numbers while the tracer flushes: NTHREADS threads
 * take a mutex in a loop (with a small TRACER_BUFFER they flush chunks all
 * the time) while the main thread opens and closes a file in a loop. With
 * descriptors 0-2 open and nothing else, every open returns 3 untraced; a
 * tracer descriptor that appears in the program's table even for an instant
 * (open, then moved to a high number) makes some open return 4. Prints the
 * number of opens and how many returned another number than 3.
 *
 * usage: fd_race FILE [SECONDS] [NTHREADS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static long counter;

static void *locker(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fd_race FILE [SECONDS] [NTHREADS]\n");
		return 2;
	}
	double secs = argc > 2 ? atof(argv[2]) : 3;
	int nt = argc > 3 ? atoi(argv[3]) : 3;
	pthread_t th[16];
	if (nt < 1 || nt > 16)
		nt = 3;
	for (int i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, locker, NULL);
	long opens = 0, other = 0;
	int seen_other = -1;
	double end = now() + secs;
	while (now() < end) {
		for (int k = 0; k < 100; k++) {
			int fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
			if (fd < 0) {
				perror(argv[1]);
				return 1;
			}
			opens++;
			if (fd != 3) {
				other++;
				seen_other = fd;
			}
			close(fd);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	/* stdout is compared with the untraced run: counts only */
	printf("fd_race: opens returned another number than 3: %ld\n", other);
	if (other)
		fprintf(stderr, "fd_race: %ld of %ld opens returned another number (e.g. %d)\n", other, opens,
			seen_other);
	return 0;
}
