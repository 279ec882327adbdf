/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_nomalloc.c - "no malloc in the SIGPROF handler": the program defines
 * malloc & co. itself (so every library, libtracer.so included, uses them),
 * forwards to glibc's __libc_* functions and counts calls made while SIGPROF
 * is blocked on the calling thread (read with the raw system call: the
 * tracer interposes sigprocmask). The kernel blocks SIGPROF while the
 * sampler's handler runs; the tracer blocks it otherwise only around its
 * own end-of-thread work, which allocates nothing either (its heap is its
 * own). Nothing internal of libtracer.so is looked up. Two threads allocate and lock for SMP_CPU_SECONDS (1.0) of
 * CPU time each, sampled every 100 us. Prints handler_allocs=N.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile unsigned long handler_allocs, allocs;

static int in_handler(void)
{
	sigset_t cur;
	sigemptyset(&cur);
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, (size_t)8) != 0)
		return 0;
	return sigismember(&cur, SIGPROF) == 1;
}

static inline void note(void)
{
	__atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
	if (in_handler())
		__atomic_fetch_add(&handler_allocs, 1, __ATOMIC_RELAXED);
}

#define ALLOC_HOOK(fn) note()
#define FREE_HOOK() note()
#include "../lib/libc_alloc.h"

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static double budget = 1.0;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void *work(void *arg)
{
	double end = cpu_seconds() + budget;
	unsigned long x = 0;
	while (cpu_seconds() < end) {
		for (int i = 0; i < 1000; i++) {
			char *volatile p = malloc(32 + (size_t)(i & 127) * 8);
			p[0] = (char)i;
			x += (unsigned char)p[0];
			free(p);
		}
		pthread_mutex_lock(&mtx);
		x++;
		pthread_mutex_unlock(&mtx);
	}
	return (void *)x;
}

int main(void)
{
	const char *s = getenv("SMP_CPU_SECONDS");
	if (s)
		budget = atof(s);
	pthread_t th;
	if (pthread_create(&th, NULL, work, NULL) != 0)
		return 1;
	work(NULL);
	pthread_join(th, NULL);
	printf("probe=%s allocs=%lu handler_allocs=%lu\n", "yes", allocs, handler_allocs);
	return 0;
}
