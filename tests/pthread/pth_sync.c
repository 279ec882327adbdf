/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_sync.c - barriers, semaphores, condition variables (tests/pthread).
 * Usage: pth_sync NTHREADS ROUNDS
 *
 * Every thread waits ROUNDS times at one barrier. Then threads 0 and 1
 * play ROUNDS rounds of semaphore ping-pong (0: post ping, wait pong;
 * 1: wait ping, post pong). Thread 0 finally does one
 * pthread_cond_timedwait that times out (mutex released and re-acquired)
 * and checks errno-reporting calls: sem_trywait on an empty semaphore
 * (-1/EAGAIN) and sem_timedwait past its deadline (-1/ETIMEDOUT).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t bar;
static sem_t ping, pong, empty;
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int rounds, bad;

static void *worker(void *arg)
{
	long id = (long)arg;
	struct timespec ts;

	for (int r = 0; r < rounds; r++)
		pthread_barrier_wait(&bar);
	for (int r = 0; r < rounds && id < 2; r++) {
		if (id == 0) {
			sem_post(&ping);
			sem_wait(&pong);
		} else {
			sem_wait(&ping);
			sem_post(&pong);
		}
	}
	if (id == 0) {
		errno = 0;
		if (sem_trywait(&empty) != -1 || errno != EAGAIN)
			bad |= 1;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;   /* 1 ms */
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		errno = 0;
		if (sem_timedwait(&empty, &ts) != -1 || errno != ETIMEDOUT)
			bad |= 2;
		pthread_mutex_lock(&mx);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&cv, &mx, &ts) != ETIMEDOUT)
			bad |= 4;
		pthread_mutex_unlock(&mx);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];

	rounds = argc > 2 ? atoi(argv[2]) : 50;
	if (n < 2 || n > 64)
		return 2;
	pthread_barrier_init(&bar, NULL, n);
	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	sem_init(&empty, 0, 0);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 3;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("pth_sync: %d threads, %d rounds, bad %d\n", n, rounds, bad);
	return bad ? 1 : 0;
}
