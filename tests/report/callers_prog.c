/* SPDX-License-Identifier: BSD-3-Clause */
/* callers_prog: two threads take one mutex from two functions of their
 * own, one holding it long (hold_long, 200 times 2 ms), one often and
 * briefly (take_short, 2000 times), so that each waits at its own call
 * site; main reads /proc/self/task after joining them (until it settles,
 * at most 1 s) and prints it (1: no thread of the tracer) and the counter.
 * Functions are noinline: each is a caller of its own in the calling
 * contexts. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void __attribute__((noinline)) hold_long(void)
{
	struct timespec ms2 = { 0, 2000000 };
	pthread_mutex_lock(&mu);   /* CALL hold_long */
	counter++;
	nanosleep(&ms2, NULL);
	pthread_mutex_unlock(&mu);
}

static void __attribute__((noinline)) take_short(void)
{
	pthread_mutex_lock(&mu);   /* CALL take_short */
	counter++;
	pthread_mutex_unlock(&mu);
}

static void *long_worker(void *arg)
{
	for (int i = 0; i < 200; i++)
		hold_long();
	return arg;
}

static void *short_worker(void *arg)
{
	struct timespec us50 = { 0, 50000 };
	for (int i = 0; i < 2000; i++) {
		take_short();
		nanosleep(&us50, NULL);
	}
	return arg;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, long_worker, NULL);
	pthread_create(&b, NULL, short_worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* a joined thread leaves /proc/self/task when the kernel has released
	 * it, a moment after the join returned (a loaded machine stretches
	 * that moment): up to 1 s for the count to settle, a thread that stays
	 * (one of the tracer's) is counted */
	int n = 0;
	for (int tries = 0; tries < 100; tries++) {
		n = 0;
		DIR *d = opendir("/proc/self/task");
		for (struct dirent *e; d && (e = readdir(d));)
			n += e->d_name[0] != '.';
		if (d)
			closedir(d);
		if (n == 1)
			break;
		struct timespec ms10 = { 0, 10000000 };
		nanosleep(&ms10, NULL);
	}
	printf("tasks %d counter %ld\n", n, counter);
	return 0;
}
