/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_misc.c - thread churn and pthread_exit in main (tests/pthread).
 * Usage: pth_misc churn   25 waves of 8 threads; in every wave the odd
 *                         threads are detached after creation, the even ones
 *                         joined (200 threads, handles and stacks reused);
 *                         each thread takes a shared mutex 10 times.
 *        pth_misc mainexit main starts 3 threads and leaves with
 *                         pthread_exit; the threads finish the program.
 *        pth_misc fork     a thread forks while holding a mutex; the child
 *                         (whose only thread is that thread) starts and
 *                         joins a thread of its own, then returns from the
 *                         start routine (ending the child process).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAVES 25
#define WAVE  8

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static long total;
static int finished;

static void *churn_worker(void *arg)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&mx);
		total++;
		pthread_mutex_unlock(&mx);
	}
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return arg;
}

static void *late_worker(void *arg)
{
	usleep(20000);
	pthread_mutex_lock(&mx);
	total += (long)arg;
	if (++finished == 3)
		printf("pth_misc mainexit: total %ld\n", total);
	pthread_mutex_unlock(&mx);
	return NULL;
}

static void *fork_leaf(void *arg)
{
	pthread_mutex_lock(&mx);
	pthread_mutex_unlock(&mx);
	return arg;
}

static void *forker(void *arg)
{
	pthread_t t;
	pid_t pid;
	int st = 1;

	pthread_mutex_lock(&mx);
	pid = fork();
	pthread_mutex_unlock(&mx);
	if (pid == 0) {
		pthread_create(&t, NULL, fork_leaf, NULL);
		pthread_join(t, NULL);
		return NULL;
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
		return (void *)1;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th[WAVE];
	void *rv = (void *)1;

	if (argc > 1 && !strcmp(argv[1], "fork")) {
		if (pthread_create(&th[0], NULL, forker, NULL))
			return 3;
		pthread_join(th[0], &rv);
		printf("pth_misc fork: %s\n", rv ? "child failed" : "ok");
		return rv ? 1 : 0;
	}

	if (argc > 1 && !strcmp(argv[1], "mainexit")) {
		for (long i = 0; i < 3; i++)
			if (pthread_create(&th[i], NULL, late_worker, (void *)(i + 1)))
				return 3;
		pthread_exit(NULL);
	}
	for (int w = 0; w < WAVES; w++) {
		for (long i = 0; i < WAVE; i++) {
			if (pthread_create(&th[i], NULL, churn_worker, (void *)i))
				return 3;
			if (i & 1)
				pthread_detach(th[i]);
		}
		for (int i = 0; i < WAVE; i += 2)
			pthread_join(th[i], NULL);
	}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < WAVES * WAVE)
		sched_yield();
	printf("pth_misc churn: %d threads, total %ld\n", WAVES * WAVE, total);
	return total == WAVES * WAVE * 10 ? 0 : 1;
}
