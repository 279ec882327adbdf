/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_prog.c - programs that do to descriptors and limits what daemons,
 * shells and job launchers do (tests/core/test_limits.py).
 *
 * fd_prog closefds OUT   two threads take a mutex 200,000 times each; then
 *                        close_range(3, ~0U, 0), open OUT and write 1,000
 *                        short lines while a third thread takes the mutex
 *                        200,000 times (the tracer's chunks fill meanwhile).
 *                        Prints the lock counts.
 * fd_prog locks N        two threads take a mutex N times each (many events
 *                        for resource-limit runs); prints "done".
 * fd_prog spawn OUT      as closefds, then fork: the child closes all
 *                        descriptors, writes OUT.child, exits; the parent
 *                        waits (fork then close).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long iters = 200000;

static void *locker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&mx);
		counter++;
		pthread_mutex_unlock(&mx);
	}
	return NULL;
}

static void write_file(const char *path, const char *tag)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("open");
		exit(2);
	}
	for (int i = 0; i < 1000; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%s line %d\n", tag, i);
		if (write(fd, line, (size_t)n) != n) {
			perror("write");
			exit(3);
		}
	}
	close(fd);
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;
	if (argc > 2 && !strcmp(argv[1], "locks")) {
		iters = atol(argv[2]);
		pthread_create(&a, NULL, locker, NULL);
		pthread_create(&b, NULL, locker, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("done %ld\n", counter);
		return 0;
	}
	if (argc < 3 || (strcmp(argv[1], "closefds") && strcmp(argv[1], "spawn")))
		return 64;
	pthread_create(&a, NULL, locker, NULL);
	pthread_create(&b, NULL, locker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	fflush(stdout);
	close_range(3, ~0U, 0);
	pthread_create(&c, NULL, locker, NULL);
	write_file(argv[2], "parent");
	pthread_join(c, NULL);
	if (!strcmp(argv[1], "spawn")) {
		pid_t p = fork();
		if (p == 0) {
			close_range(3, ~0U, 0);
			char child[4096];
			snprintf(child, sizeof(child), "%s.child", argv[2]);
			pthread_create(&c, NULL, locker, NULL);
			write_file(child, "child");
			pthread_join(c, NULL);
			_exit(0);
		}
		int st;
		waitpid(p, &st, 0);
		printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	printf("counter %ld\n", counter);
	return 0;
}
