/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_stress.c - sampling safety: 3 threads for SMP_SECONDS (default 2.5)
 * of wall time malloc/free, lock and unlock mutexes (wrapped: calling-context
 * enter/leave), enter and leave VT user regions, and create/join short
 * threads, while the tracer samples every 100 us. Must finish, exit 0 and
 * leave a valid archive.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "smp_vt.h"

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;
static double seconds = 2.5;
static int r_work, r_inner;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void *short_thread(void *arg)
{
	char *p = malloc(1000);
	memset(p, 1, 1000);
	pthread_mutex_lock(&mtx);
	shared += p[10];
	pthread_mutex_unlock(&mtx);
	free(p);
	return arg;
}

__attribute__((noinline)) static unsigned long churn(unsigned seed)
{
	void *v[64] = { 0 };
	unsigned long sum = 0;
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		int k = (int)(seed >> 16) & 63;
		free(v[k]);
		size_t sz = 16 + ((seed >> 8) & 4095);
		v[k] = malloc(sz);
		memset(v[k], (int)seed, sz < 64 ? sz : 64);
		sum += ((unsigned char *)v[k])[0];
	}
	for (int k = 0; k < 64; k++)
		free(v[k]);
	return sum;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg;
	double end = now() + seconds;
	unsigned long iter = 0;
	while (now() < end) {
		smp_begin(r_work);
		unsigned long s = churn(seed + (unsigned)iter);
		for (int i = 0; i < 50; i++) {
			pthread_mutex_lock(&mtx);
			shared += s + (unsigned long)i;
			pthread_mutex_unlock(&mtx);
		}
		smp_begin(r_inner);
		s += churn(seed ^ (unsigned)iter);
		smp_end(r_inner);
		smp_end(r_work);
		if (iter % 20 == 0) {
			pthread_t th;
			if (pthread_create(&th, NULL, short_thread, NULL) == 0)
				pthread_join(th, NULL);
		}
		iter++;
	}
	return (void *)iter;
}

int main(void)
{
	const char *s = getenv("SMP_SECONDS");
	if (s)
		seconds = atof(s);
	smp_vt_init();
	r_work = smp_region("stress_work");
	r_inner = smp_region("stress_inner");
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(unsigned long)(i + 7)) != 0)
			return 1;
	unsigned long total = (unsigned long)worker((void *)3ul);
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(th[i], &r);
		total += (unsigned long)r;
	}
	printf("iterations %lu shared %lu\n", total, (unsigned long)shared);
	return 0;
}
