/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_accuracy.c - three CPU-bound leaves with known shares of CPU time
 * (leaf_a 60 %, leaf_b 30 %, leaf_c 10 %: identical loop bodies, iteration
 * counts 6:3:1), called from caller(), on two threads (main and a worker),
 * each running until it used SMP_CPU_SECONDS (default 1.5) of CPU time.
 * The speed of the same loop differs with its code alignment, so the
 * iteration counts are calibrated at start (best of 7 timed runs per leaf)
 * to give CPU time shares of exactly 6:3:1.
 * SMP_BLOCKED=1: the worker is created with every signal blocked (it
 * inherits the creator's mask, as liblzma's workers do) and keeps them
 * blocked. Prints each thread's CPU time (cpu main_ns=.. worker_ns=..).
 * Compiled -g -O1 -fno-omit-frame-pointer -fno-inline. smp_check.py reads
 * the line markers (LEAF_x_BEGIN/END, CALL_x) from this file.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define K 20000L

volatile double smp_sink;

__attribute__((noinline)) void leaf_a(long n)
{ /* LEAF_A_BEGIN */
	double x = smp_sink;
	for (long i = 0; i < n; i++)
		x = x * 0.9999999 + 1.0;
	smp_sink = x;
} /* LEAF_A_END */

__attribute__((noinline)) void leaf_b(long n)
{ /* LEAF_B_BEGIN */
	double x = smp_sink;
	for (long i = 0; i < n; i++)
		x = x * 0.9999999 + 1.0;
	smp_sink = x;
} /* LEAF_B_END */

__attribute__((noinline)) void leaf_c(long n)
{ /* LEAF_C_BEGIN */
	double x = smp_sink;
	for (long i = 0; i < n; i++)
		x = x * 0.9999999 + 1.0;
	smp_sink = x;
} /* LEAF_C_END */

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double budget = 1.5;
static long na = 6 * K, nb = 3 * K, nc = K;

static double best_time(void (*f)(long))
{
	double best = 1e9;
	for (int i = 0; i < 7; i++) {
		double t0 = cpu_seconds();
		f(10 * K);
		double t = cpu_seconds() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

static void calibrate(void)
{
	double ta = best_time(leaf_a), tb = best_time(leaf_b), tc = best_time(leaf_c);
	double base = tc < ta ? tc : ta;
	na = (long)(6 * K * base / ta);
	nb = (long)(3 * K * base / tb);
	nc = (long)(1 * K * base / tc);
}

/* CPU time measured in each leaf (every 16th unit: the clock is a system
 * call), summed over both threads: the true shares the samples estimate. */
static long spent_ns[3];

__attribute__((noinline)) long caller(void)
{
	long units = 0;
	double end = cpu_seconds() + budget;
	double own[3] = { 0, 0, 0 };
	while (units % 16 || cpu_seconds() < end) {
		if (units % 16 == 8) {
			double t0 = cpu_seconds();
			leaf_a(na); /* CALL_A2 */
			double t1 = cpu_seconds();
			leaf_b(nb); /* CALL_B2 */
			double t2 = cpu_seconds();
			leaf_c(nc); /* CALL_C2 */
			own[0] += t1 - t0;
			own[1] += t2 - t1;
			own[2] += cpu_seconds() - t2;
			units++;
			continue;
		}
		leaf_a(na); /* CALL_A */
		leaf_b(nb); /* CALL_B */
		leaf_c(nc); /* CALL_C */
		units++;
	}
	for (int i = 0; i < 3; i++)
		__atomic_fetch_add((long *)&spent_ns[i], (long)(own[i] * 1e9), __ATOMIC_RELAXED);
	return units;
}

static double worker_cpu;
static int worker_sigint_blocked;

__attribute__((noinline)) void *worker(void *arg)
{
	long *units = arg;
	sigset_t m;
	pthread_sigmask(SIG_SETMASK, NULL, &m);
	worker_sigint_blocked = sigismember(&m, SIGINT);
	*units = caller(); /* CALL_WORKER */
	worker_cpu = cpu_seconds();
	return NULL;
}

int main(void)
{
	const char *s = getenv("SMP_CPU_SECONDS");
	if (s)
		budget = atof(s);
	calibrate();
	pthread_t th;
	long wu = 0;
	sigset_t all, old;
	int blocked = getenv("SMP_BLOCKED") && atoi(getenv("SMP_BLOCKED"));
	sigfillset(&all);
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, NULL, worker, &wu) != 0)
		return 1;
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	long mu = caller(); /* CALL_MAIN */
	double main_cpu = cpu_seconds();
	pthread_join(th, NULL);
	printf("units main=%ld worker=%ld iterations a=%ld b=%ld c=%ld\n", mu, wu, na, nb, nc);
	printf("cpu main_ns=%.0f worker_ns=%.0f\n", main_cpu * 1e9, worker_cpu * 1e9);
	if (blocked)
		printf("worker_sigint_blocked=%d\n", worker_sigint_blocked);
	double tot = (double)(spent_ns[0] + spent_ns[1] + spent_ns[2]);
	printf("measured a=%.1f b=%.1f c=%.1f\n", 100 * spent_ns[0] / tot, 100 * spent_ns[1] / tot,
	       100 * spent_ns[2] / tot);
	return 0;
}
