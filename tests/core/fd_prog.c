/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_prog.c - programs that do to descriptors and limits what daemons,
 * shells and job launchers do (tests/core/test_limits.py).
 *
 * fd_prog closefds OUT   the main thread takes a mutex 60,000 times, then
 *                        with two threads (60,000 each) running:
 *                        close_range(3, ~0U, 0), open OUT and write 1,000
 *                        short lines while a third thread and main take the
 *                        mutex 60,000 times more each (the tracer's chunks
 *                        fill meanwhile). Prints the lock count.
 * fd_prog locks N        two threads take a mutex N times each (many events
 *                        for resource-limit runs); prints "done".
 * fd_prog mallocloop    four threads malloc and free random sizes until
 *                        killed; prints "ready" once they run.
 * fd_prog stderrfile OUT  closes its stderr, opens OUT (which gets number
 *                        2) and writes 100 lines to it, with two lock threads:
 *                        the tracer's exit line must not land in OUT.
 * fd_prog spawn OUT      as closefds, then fork: the child closes all
 *                        descriptors, writes OUT.child, exits; the parent
 *                        waits (fork then close).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long iters = 60000;

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

/* Opens path and 7 more files beside it (path.1 ... path.7) and writes
 * 1,000 short lines into each: after close_range the program's files take
 * the lowest numbers, where the tracer's descriptors used to be. */
static void write_file(const char *path, const char *tag)
{
	int fds[8];
	for (int k = 0; k < 8; k++) {
		char p[4200];
		if (k)
			snprintf(p, sizeof(p), "%s.%d", path, k);
		else
			snprintf(p, sizeof(p), "%s", path);
		fds[k] = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fds[k] < 0) {
			perror("open");
			exit(2);
		}
	}
	for (int i = 0; i < 1000; i++) {
		for (int k = 0; k < 8; k++) {
			char line[64];
			int n = snprintf(line, sizeof(line), "%s file %d line %d\n", tag, k, i);
			if (write(fds[k], line, (size_t)n) != n) {
				perror("write");
				exit(3);
			}
		}
		if (i % 100 == 0)
			sched_yield();   /* let the lock threads fill chunks meanwhile */
	}
	for (int k = 0; k < 8; k++)
		close(fds[k]);
}

static void *malloc_loop(void *arg)
{
	unsigned seed = (unsigned)(long)arg + 1;
	void *v[64] = { 0 };
	for (;;) {
		unsigned k = (unsigned)rand_r(&seed) % 64;
		free(v[k]);
		v[k] = malloc((size_t)(rand_r(&seed) % 8192) + 1);
	}
	return NULL;
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
	if (argc > 1 && !strcmp(argv[1], "mallocloop")) {
		pthread_t th[4];
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, malloc_loop, (void *)i);
		printf("ready\n");
		fflush(stdout);
		pthread_join(th[0], NULL);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "stderrfile")) {
		iters = 20000;
		close(2);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd != 2)
			return 3;
		pthread_create(&a, NULL, locker, NULL);
		pthread_create(&b, NULL, locker, NULL);
		for (int i = 0; i < 100; i++)
			dprintf(2, "program line %d\n", i);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("counter %ld\n", counter);
		return 0;
	}
	if (argc < 3 || (strcmp(argv[1], "closefds") && strcmp(argv[1], "spawn")))
		return 64;
	/* the main thread and two others have flushed chunks (their files
	 * were opened) and go on recording across the close_range */
	locker(NULL);
	pthread_create(&a, NULL, locker, NULL);
	pthread_create(&b, NULL, locker, NULL);
	while (__atomic_load_n(&counter, __ATOMIC_RELAXED) < iters * 2)
		sched_yield();
	fflush(stdout);
	close_range(3, ~0U, 0);
	pthread_create(&c, NULL, locker, NULL);
	write_file(argv[2], "parent");
	locker(NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
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
