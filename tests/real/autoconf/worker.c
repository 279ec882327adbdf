/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"
#include <pthread.h>
#include <stdio.h>

static long total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
	for (long i = 0; i < 1000; i++) {
		pthread_mutex_lock(&mu);
		total += i;
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	return 0;
}
