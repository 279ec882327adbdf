/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * demo.c - the program traced by scripts/demo (README's first command).
 *
 * Four threads: two producers and two consumers share a bounded queue
 * guarded by one mutex and two condition variables; then all four meet at
 * a barrier and update a shared counter under the mutex. The output is
 * deterministic (it does not depend on scheduling), traced or not.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NPRODUCERS 2
#define NCONSUMERS 2
#define NTHREADS   (NPRODUCERS + NCONSUMERS)
#define NITEMS     2000          /* per producer */
#define QSIZE      8
#define NROUNDS    100           /* counter increments per thread after the barrier */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;

static long queue[QSIZE];
static int qhead, qlen;
static long consumed_sum, consumed_items, counter;

static void put(long v)
{
	pthread_mutex_lock(&lock);
	while (qlen == QSIZE)
		pthread_cond_wait(&not_full, &lock);
	queue[(qhead + qlen++) % QSIZE] = v;
	pthread_cond_signal(&not_empty);
	pthread_mutex_unlock(&lock);
}

static long get(void)
{
	long v;

	pthread_mutex_lock(&lock);
	while (qlen == 0)
		pthread_cond_wait(&not_empty, &lock);
	v = queue[qhead];
	qhead = (qhead + 1) % QSIZE;
	qlen--;
	pthread_cond_signal(&not_full);
	pthread_mutex_unlock(&lock);
	return v;
}

static void *worker(void *arg)
{
	long id = (long)arg;

	if (id < NPRODUCERS) {
		for (long i = 0; i < NITEMS; i++)
			put(id * NITEMS + i + 1);
		put(-1);   /* one end marker per producer, one per consumer */
	} else {
		long sum = 0, n = 0, v;

		while ((v = get()) >= 0) {
			sum += v;
			n++;
		}
		pthread_mutex_lock(&lock);
		consumed_sum += sum;
		consumed_items += n;
		pthread_mutex_unlock(&lock);
	}
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < NROUNDS; i++) {
		pthread_mutex_lock(&lock);
		counter += id + 1;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long n = (long)NPRODUCERS * NITEMS;

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++) {
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "demo: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);

	printf("demo: %d threads, %ld items through a %d-slot queue, sum %ld (expected %ld), counter %ld (expected %d)\n",
	       NTHREADS, consumed_items, QSIZE, consumed_sum, n * (n + 1) / 2, counter,
	       NROUNDS * NTHREADS * (NTHREADS + 1) / 2);
	return consumed_sum == n * (n + 1) / 2 && counter == NROUNDS * NTHREADS * (NTHREADS + 1) / 2 ? 0 : 1;
}
