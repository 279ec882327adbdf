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
 *        pth_misc cancelflush  8 rounds: a thread takes a private mutex
 *                         in a tight loop (no cancellation point but a
 *                         pthread_testcancel every CF_TEST iterations), main
 *                         cancels it while it runs. With a tiny buffer
 *                         (TRACER_BUFFER=TRACER_CHUNK=256K) the tracer
 *                         flushes several times between two testcancels:
 *                         the pending cancel must wait for testcancel, not
 *                         act inside the tracer's write().
 *        pth_misc mallocstress  4 threads malloc and free random sizes
 *                         (600,000 times each); preloaded with jemalloc or
 *                         tcmalloc, the allocator's locks go through the
 *                         tracer's wrappers, and with a small buffer chunks
 *                         fill inside them (no malloc of the tracer there).
 *        pth_misc vtexit  two threads open a VT user region (VT API looked
 *                         up at run time) and leave it open: one calls
 *                         pthread_exit, the other returns.
 *        pth_misc sigrec  4 threads take a private mutex in a tight loop
 *                         (always inside a wrapper, mostly inside a record)
 *                         until the test sends SIGTERM; main blocks SIGTERM
 *                         and waits in pthread_join, so the signal lands on
 *                         a recording thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdlib.h>

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

#define CF_ROUNDS 8
#define CF_TEST   10000

static long cf_iters;

static void *cancel_worker(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	for (long i = 1;; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		__atomic_store_n(&cf_iters, i, __ATOMIC_RELAXED);
		if (i % CF_TEST == 0)
			pthread_testcancel();
	}
	return arg;
}

static int cancel_flush(void)
{
	int ok = 0;

	for (int r = 0; r < CF_ROUNDS; r++) {
		pthread_t t;
		void *rv = NULL;

		__atomic_store_n(&cf_iters, 0, __ATOMIC_RELAXED);
		if (pthread_create(&t, NULL, cancel_worker, NULL))
			return 3;
		/* cancel once it runs: the cancel is then pending for
		 * up to CF_TEST iterations (several buffer flushes) */
		while (__atomic_load_n(&cf_iters, __ATOMIC_RELAXED) < 100)
			sched_yield();
		pthread_cancel(t);
		pthread_join(t, &rv);
		ok += rv == PTHREAD_CANCELED;
	}
	printf("pth_misc cancelflush: %d of %d threads cancelled\n", ok, CF_ROUNDS);
	return ok == CF_ROUNDS ? 0 : 1;
}

static void *vt_open_region(void *how)
{
	int (*funcdef)(const char *, int, int *) =
		(int (*)(const char *, int, int *))dlsym(RTLD_DEFAULT, "VT_funcdef");
	int (*begin)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "VT_begin");
	int h = 0;

	if (funcdef && begin && funcdef("left_open", 0, &h) == 0)
		begin(h);
	if (how)
		pthread_exit(NULL);
	return NULL;
}

/* sigterm mode: workers that never stop taking a shared lock, the master
 * blocked in pthread_join, until the test sends SIGTERM (Ctrl-C-like). */
static pthread_mutex_t spin_mx = PTHREAD_MUTEX_INITIALIZER;
static volatile long spin_count;

static void *spinner(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&spin_mx);
		spin_count++;
		pthread_mutex_unlock(&spin_mx);
		usleep(20);	/* a few thousand events, not millions */
	}
	return arg;
}

/* sigrec mode: a tight loop of wrapped calls on a private mutex */
static int recorders;   /* started */

static void *recorder(void *arg)
{
	pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
	volatile long n = 0;
	__atomic_fetch_add(&recorders, 1, __ATOMIC_RELEASE);
	for (;;) {
		pthread_mutex_lock(&mx);
		n++;
		pthread_mutex_unlock(&mx);
	}
	return arg;
}

static int sigrec(void)
{
	pthread_t th[4];
	sigset_t set;
	for (long i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, recorder, NULL))
			return 3;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);   /* the workers keep it unblocked */
	while (__atomic_load_n(&recorders, __ATOMIC_ACQUIRE) < 4)
		sched_yield();
	printf("pth_misc sigrec: ready\n");
	fflush(stdout);
	pthread_join(th[0], NULL);
	return 0;
}

static void *malloc_worker(void *arg)
{
	unsigned seed = (unsigned)(long)arg + 1;
	void *v[64] = { 0 };
	for (long i = 0; i < 600000; i++) {
		unsigned k = (unsigned)rand_r(&seed) % 64;
		free(v[k]);
		v[k] = malloc((size_t)(rand_r(&seed) % 4096) + 1);
	}
	for (int k = 0; k < 64; k++)
		free(v[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[WAVE];
	void *rv = (void *)1;

	if (argc > 1 && !strcmp(argv[1], "mallocstress")) {
		pthread_t th[4];
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, malloc_worker, (void *)i);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		printf("pth_misc mallocstress: done\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "sigterm")) {
		for (long i = 0; i < 3; i++)
			if (pthread_create(&th[i], NULL, spinner, NULL))
				return 3;
		printf("pth_misc sigterm: ready\n");
		fflush(stdout);
		pthread_join(th[0], NULL);
		return 0;
	}

	if (argc > 1 && !strcmp(argv[1], "fork")) {
		if (pthread_create(&th[0], NULL, forker, NULL))
			return 3;
		pthread_join(th[0], &rv);
		printf("pth_misc fork: %s\n", rv ? "child failed" : "ok");
		return rv ? 1 : 0;
	}

	if (argc > 1 && !strcmp(argv[1], "sigrec"))
		return sigrec();

	if (argc > 1 && !strcmp(argv[1], "cancelflush"))
		return cancel_flush();

	if (argc > 1 && !strcmp(argv[1], "vtexit")) {
		for (long i = 0; i < 2; i++) {
			if (pthread_create(&th[i], NULL, vt_open_region, (void *)i))
				return 3;
			pthread_join(th[i], NULL);
		}
		printf("pth_misc vtexit: ok\n");
		return 0;
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
