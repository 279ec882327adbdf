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
 * Thread 1 calls every other lock variant once (clock/timed/try versions,
 * cond_clockwait and sem_clockwait timing out) and holds 40 mutexes at once
 * (more than the wrapper's held-lock stack), released in reverse order.
 * main joins thread 0 with pthread_clockjoin_np.
 */
#define _GNU_SOURCE
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
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv1 = PTHREAD_COND_INITIALIZER;   /* thread 1's own */
static pthread_mutex_t mx1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_mutex_t many[40];

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_nsec += ms * 1000000;
	while (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void variants(void)
{
	struct timespec far = in_ms(CLOCK_MONOTONIC, 60000), farr = in_ms(CLOCK_REALTIME, 60000);
	struct timespec soon;

	if (pthread_mutex_clocklock(&mx1, CLOCK_MONOTONIC, &far) || pthread_mutex_unlock(&mx1))
		bad |= 8;
	if (pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &far) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &far) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_rwlock_timedrdlock(&rw, &farr) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_rwlock_timedwrlock(&rw, &farr) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_rwlock_tryrdlock(&rw) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_rwlock_trywrlock(&rw) || pthread_rwlock_unlock(&rw))
		bad |= 16;
	if (pthread_spin_trylock(&spin) || pthread_spin_unlock(&spin))
		bad |= 32;
	pthread_mutex_lock(&mx1);
	soon = in_ms(CLOCK_MONOTONIC, 1);
	if (pthread_cond_clockwait(&cv1, &mx1, CLOCK_MONOTONIC, &soon) != ETIMEDOUT)
		bad |= 64;
	pthread_cond_broadcast(&cv1);
	pthread_mutex_unlock(&mx1);
	soon = in_ms(CLOCK_MONOTONIC, 1);
	errno = 0;
	if (sem_clockwait(&empty, CLOCK_MONOTONIC, &soon) != -1 || errno != ETIMEDOUT)
		bad |= 128;
	for (int i = 0; i < 40; i++)
		pthread_mutex_lock(&many[i]);
	for (int i = 39; i >= 0; i--)
		pthread_mutex_unlock(&many[i]);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	struct timespec ts;

	for (int r = 0; r < rounds; r++)
		pthread_barrier_wait(&bar);
	for (int r = 0; r < rounds && id < 2; r++) {
		/* a sem_wait that blocks and then succeeds leaves errno alone
		 * (the tracer tries sem_trywait first: its EAGAIN must not leak) */
		if (id == 0) {
			sem_post(&ping);
			errno = 0;
			if (sem_wait(&pong) != 0 || errno != 0)
				bad |= 256;
		} else {
			errno = 0;
			if (sem_wait(&ping) != 0 || errno != 0)
				bad |= 256;
			sem_post(&pong);
		}
	}
	if (id == 1)
		variants();
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
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < 40; i++)
		pthread_mutex_init(&many[i], NULL);
	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	sem_init(&empty, 0, 0);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 3;
	{
		struct timespec far = in_ms(CLOCK_MONOTONIC, 60000);

		if (pthread_clockjoin_np(th[0], NULL, CLOCK_MONOTONIC, &far))
			bad |= 256;
	}
	for (int i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	printf("pth_sync: %d threads, %d rounds, bad %d\n", n, rounds, bad);
	return bad ? 1 : 0;
}
