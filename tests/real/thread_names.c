/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_names.c - threads named with pthread_setname_np (by themselves,
 * renamed later, by another thread) and prctl(PR_SET_NAME) (the master):
 * the names at the threads' ends become the location names.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t named;
static long total;

static void work(void)
{
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&mu);
		total++;
		pthread_mutex_unlock(&mu);
	}
}

static void *self_named(void *arg)
{
	pthread_setname_np(pthread_self(), "first-name");
	work();
	pthread_setname_np(pthread_self(), "renamed-worker");
	work();
	return arg;
}

static void *named_by_main(void *arg)
{
	pthread_barrier_wait(&named);
	work();
	return arg;
}

static void *unnamed(void *arg)
{
	work();
	return arg;
}

int main(void)
{
	pthread_t a, b, c;
	prctl(PR_SET_NAME, "the-boss", 0, 0, 0);
	pthread_barrier_init(&named, NULL, 2);
	pthread_create(&a, NULL, self_named, NULL);
	pthread_create(&b, NULL, named_by_main, NULL);
	pthread_setname_np(b, "named-by-main");
	pthread_barrier_wait(&named);
	pthread_create(&c, NULL, unnamed, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	printf("total %ld\n", total);
	return 0;
}
