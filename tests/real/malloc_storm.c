/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * malloc_storm.c - the SIGTERM soak's victim: NTHREADS threads doing random
 * malloc/free (through whatever allocator is preloaded) and taking a mutex
 * now and then, until the process is killed. Prints "ready" once every
 * thread runs.
 *
 * usage: malloc_storm [NTHREADS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static volatile uint64_t shared;

static void *storm(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	void *slot[64] = { 0 };
	pthread_barrier_wait(&start);
	for (uint64_t i = 0;; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned k = (unsigned)(x % 64);
		free(slot[k]);
		size_t sz = (size_t)(x >> 20) % 4096 + 1;
		slot[k] = malloc(sz);
		if (slot[k])
			memset(slot[k], (int)i, sz < 64 ? sz : 64);
		if ((i & 1023) == 0) {
			pthread_mutex_lock(&mu);
			shared += i;
			pthread_mutex_unlock(&mu);
			usleep(200);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (n < 1 || n > 64)
		n = 4;
	pthread_t t[64];
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, storm, (void *)(uintptr_t)i);
	pthread_barrier_wait(&start);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
