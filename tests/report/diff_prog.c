/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * diff_prog.c - the program of report_diff: run twice with two hold times,
 * `tracer diff` must show where the second run got slower.
 *
 * usage: diff_prog MS FILE
 * A helper thread takes a mutex, tells main (a semaphore), holds the mutex
 * MS milliseconds and releases it, five times; main waits for the mutex in
 * pthread_mutex_lock each time (about MS ms per call). Then main writes
 * 64 KiB to FILE in 4 KiB writes.
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held, done;
static long hold_ms;

static void *helper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&lock);
		sem_post(&held);
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		pthread_mutex_unlock(&lock);
		sem_wait(&done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: diff_prog MS FILE\n");
		return 2;
	}
	hold_ms = atol(argv[1]);
	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t th;
	if (pthread_create(&th, NULL, helper, NULL))
		return 1;
	for (int i = 0; i < 5; i++) {
		sem_wait(&held);
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		sem_post(&done);
	}
	pthread_join(th, NULL);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	char buf[4096];
	memset(buf, 'x', sizeof buf);
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 1;
	close(fd);
	printf("diff_prog: held %ld ms five times, lock at %p\n", hold_ms, (void *)&lock);
	return 0;
}
