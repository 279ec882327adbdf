/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_exit.c - every way a thread can end (tests/pthread). Threads, in
 * creation order:
 *   0 returns 11                   (main: pthread_tryjoin_np loop)
 *   1 pthread_exit(22) with a mutex held and a cleanup handler unlocking it
 *                                  (main: pthread_timedjoin_np)
 *   2 cancelled in pthread_cond_wait, cleanup handler unlocks the mutex
 *   3 cancelled in sem_wait
 *   4 created detached
 *   5 detaches itself
 *   6 still running at exit (sleeping, untraced)
 *   7 still running at exit (blocked in sem_wait)
 * main joins 0-3 and checks the return values.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t ready, never, done;

static void unlock_cb(void *m)
{
	pthread_mutex_unlock(m);
}

static volatile int exit_now = 1;

static int exit_deep(int depth)
{
	if (depth == 0) {
		if (exit_now)
			pthread_exit((void *)22);
		return 0;
	}
	return exit_deep(depth - 1) + 1;
}

static void *worker(void *arg)
{
	long id = (long)arg;

	switch (id) {
	case 0:
		return (void *)11;
	case 1:
		pthread_mutex_lock(&m1);
		pthread_cleanup_push(unlock_cb, &m1);
		exit_deep(3);
		pthread_cleanup_pop(1);
		return NULL;
	case 2:
		pthread_mutex_lock(&m2);
		pthread_cleanup_push(unlock_cb, &m2);
		sem_post(&ready);
		for (;;)
			pthread_cond_wait(&cv, &m2);
		pthread_cleanup_pop(1);
		return NULL;
	case 3:
		sem_post(&ready);
		sem_wait(&never);
		return NULL;
	case 4:
	case 5:
		if (id == 5)
			pthread_detach(pthread_self());
		pthread_mutex_lock(&m1);
		pthread_mutex_unlock(&m1);
		sem_post(&done);
		return NULL;
	case 6:
		sem_post(&ready);
		for (;;)
			sleep(1);
	case 7:
		sem_post(&ready);
		sem_wait(&never);
		return NULL;
	}
	return NULL;
}

int main(void)
{
	pthread_t th[8];
	pthread_attr_t det;
	void *rv[4] = { 0 };
	struct timespec far;
	int bad = 0;

	sem_init(&ready, 0, 0);
	sem_init(&never, 0, 0);
	sem_init(&done, 0, 0);
	pthread_attr_init(&det);
	pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
	for (long i = 0; i < 8; i++)
		if (pthread_create(&th[i], i == 4 ? &det : NULL, worker, (void *)i))
			return 3;

	while (pthread_tryjoin_np(th[0], &rv[0]) == EBUSY)
		usleep(1000);
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 60;
	if (pthread_timedjoin_np(th[1], &rv[1], &far))
		bad |= 1;
	/* 2, 3, 6, 7 signal that they are about to block */
	for (int i = 0; i < 4; i++)
		sem_wait(&ready);
	pthread_mutex_lock(&m2);    /* 2 is inside pthread_cond_wait now */
	pthread_mutex_unlock(&m2);
	usleep(20000);              /* 3 is (almost surely) blocked in sem_wait */
	pthread_cancel(th[2]);
	pthread_cancel(th[3]);
	pthread_join(th[2], &rv[2]);
	pthread_join(th[3], &rv[3]);
	sem_wait(&done);
	sem_wait(&done);
	if (rv[0] != (void *)11 || rv[1] != (void *)22 || rv[2] != PTHREAD_CANCELED ||
	    rv[3] != PTHREAD_CANCELED)
		bad |= 2;
	if (pthread_mutex_trylock(&m1) || pthread_mutex_trylock(&m2))
		bad |= 4;   /* cleanup handlers did not unlock */
	pthread_mutex_unlock(&m1);
	pthread_mutex_unlock(&m2);
	printf("pth_exit: bad %d\n", bad);
	return bad;   /* 6 and 7 are still running */
}
