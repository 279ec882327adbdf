/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_sigprof.c - a program that drives SIGPROF itself (its own handler and
 * setitimer(ITIMER_PROF)), as gprof-like profilers do. The tracer must leave
 * its handler in charge. Prints own_handler=N (signals it received).
 * With argument "sigaction": only installs the handler (no timer of its
 * own): the tracer's sigaction wrapper tells the sampler, which stops its
 * timers right then, so the handler gets no SIGPROF while the program
 * burns CPU right after its sigaction call (early=0); then a thread
 * starts and ends (the sampler's own check of its handler) and again no
 * SIGPROF may arrive (after_yield=0).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile long own;
volatile double smp_sink;

static void handler(int sig)
{
	(void)sig;
	own++;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *nothing(void *a)
{
	return a;
}

int main(int argc, char **argv)
{
	int only_sigaction = argc > 1 && !strcmp(argv[1], "sigaction");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return 1;
	if (only_sigaction) {
		pthread_t th;
		double x = 0;
		/* right after sigaction, before any thread start: the tracer's
		 * timers must already be stopped */
		double end = cpu_seconds() + 0.3;
		while (cpu_seconds() < end)
			for (int i = 0; i < 10000; i++)
				x = x * 0.9999999 + 1.0;
		long early = own;
		if (pthread_create(&th, NULL, nothing, NULL) != 0)
			return 1;
		pthread_join(th, NULL);
		long before = own;
		end = cpu_seconds() + 0.3;
		while (cpu_seconds() < end)
			for (int i = 0; i < 10000; i++)
				x = x * 0.9999999 + 1.0;
		smp_sink = x;
		/* no timer of its own: nothing may arrive at all */
		printf("own_handler=%ld early=%ld after_yield=%ld\n", before, early, own - before);
		return own == 0 ? 0 : 3;
	}
	struct itimerval iv = { { 0, 2000 }, { 0, 2000 } };
	if (setitimer(ITIMER_PROF, &iv, NULL) != 0)
		return 1;
	double end = cpu_seconds() + 0.5;
	double x = 0;
	while (cpu_seconds() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 0.9999999 + 1.0;
	smp_sink = x;
	struct itimerval z;
	memset(&z, 0, sizeof(z));
	setitimer(ITIMER_PROF, &z, NULL);
	printf("own_handler=%ld\n", own);
	return own > 0 ? 0 : 2;
}
