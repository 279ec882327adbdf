/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsan_prog.c - three threads share a mutex (built with -fsanitize=thread
 * for core_limits_tsan): a ThreadSanitizer program traced behaves as
 * untraced (no report, same output and status).
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long c;

static void *work(void *a)
{
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&m);
		c++;
		pthread_mutex_unlock(&m);
	}
	return a;
}

int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("c=%ld\n", c);
	return 0;
}
