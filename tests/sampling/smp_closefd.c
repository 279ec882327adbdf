/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_closefd.c - a program that closes every descriptor it did not open
 * (close_range(3, ~0U)) and reuses the numbers, as daemons do.
 * A worker thread computes; the master notes the numbers that name perf
 * events (/proc/self/fd: the sampler's, when traced), closes everything
 * from 3 up, puts its own pipe on those numbers, lets the worker finish
 * (its sampler state is torn down then) and checks that its pipe is still
 * there on every number: "intact=1" (untraced: no such number, also 1).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "smp_cpu.h"

volatile double smp_sink;
static volatile int go;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	smp_spin_cpu(0.2);
	while (!go)
		smp_spin_cpu(0.01);
	smp_spin_cpu(0.1);
	return NULL;
}

int main(void)
{
	int nums[64], n = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	smp_spin_cpu(0.2);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)) && n < 64) {
		char p[300], l[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(p, l, sizeof(l) - 1);
		if (k > 0) {
			l[k] = 0;
			if (strstr(l, "perf_event"))
				nums[n++] = atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	int pfd[2];
	syscall(SYS_close_range, 3u, ~0u, 0u);
	if (pipe(pfd) != 0)
		return 1;
	/* the pipe away from the low numbers: a descriptor the tracer's core
	 * keeps open (and that close_range took from it) is not this pipe */
	for (int i = 0; i < 2; i++) {
		int hi = fcntl(pfd[i], F_DUPFD, 700);
		close(pfd[i]);
		pfd[i] = hi;
	}
	for (int i = 0; i < n; i++)
		dup2(pfd[1], nums[i]);
	go = 1;
	pthread_join(th, NULL);
	smp_spin_cpu(0.1);
	int intact = 1;
	for (int i = 0; i < n; i++) {
		char c = 'x', r = 0;
		if (fcntl(nums[i], F_GETFD) == -1 || write(nums[i], &c, 1) != 1 || read(pfd[0], &r, 1) != 1 || r != 'x')
			intact = 0;
	}
	printf("intact=%d\n", intact);
	fprintf(stderr, "perf descriptors seen: %d\n", n);
	return 0;
}
