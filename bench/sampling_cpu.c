/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampling_cpu.c - CPU-bound work at a fixed stack depth for bench/sampling.sh.
 *
 * usage: sampling_cpu DEPTH CHUNKS [floor|unwind PERIOD_NS]
 *   Calls rec(DEPTH) CHUNKS times; the innermost frame runs a fixed chunk of
 *   floating-point work, so nearly every sample sees a stack of DEPTH + 3
 *   frames. "floor": the program itself installs an empty SIGPROF handler
 *   fed by the same delivery the sampler uses (a perf_event task-clock event
 *   on the thread with the given period, O_ASYNC + F_SETSIG(SIGPROF) +
 *   F_SETOWN_EX(F_OWNER_TID); a POSIX CPU-time timer where perf events are
 *   refused, said on stderr): the cost of the signals alone. "unwind": the handler
 *   only calls libunwind's unw_backtrace and times it (median printed as
 *   unwind_us=): what the unwinder alone costs in a handler right now.
 * Prints: cpu_s=<user+sys CPU seconds of the work> signals=<floor signals>
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <fcntl.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 20000

volatile double bench_sink;
static volatile long signals;

static void empty_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	signals++;
}

#define NT 100000
static double unwind_ns[NT];
static void *frames[256];

static void unwind_handler(int sig, siginfo_t *si, void *uc)
{
	struct timespec a, b;
	(void)sig;
	(void)si;
	(void)uc;
	clock_gettime(CLOCK_MONOTONIC, &a);
	unw_backtrace(frames, 256);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (signals < NT)
		unwind_ns[signals] = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	signals++;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static double work(void)
{
	double x = bench_sink;
	for (int i = 0; i < CHUNK; i++)
		x = x * 0.9999999 + 1.0;
	return x;
}

__attribute__((noinline)) static double rec(int d)
{
	if (d <= 0)
		return work();
	double r = rec(d - 1);
	__asm__ volatile("" ::: "memory");   /* no tail call */
	return r + 1.0;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEPTH CHUNKS [floor PERIOD_NS]\n", argv[0]);
		return 2;
	}
	int depth = atoi(argv[1]);
	long chunks = atol(argv[2]);
	int unwind = argc >= 5 && !strcmp(argv[3], "unwind");
	if (argc >= 5 && (!strcmp(argv[3], "floor") || unwind)) {
		long ns = atol(argv[4]);
		struct sigaction sa;
		if (unwind) {
			unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
			unw_backtrace(frames, 256);
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = unwind ? unwind_handler : empty_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = (unsigned long long)ns;
		a.disabled = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.wakeup_events = 1;
		long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			struct f_owner_ex own = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
			if (fcntl((int)fd, F_SETSIG, SIGPROF) == 0 && fcntl((int)fd, F_SETOWN_EX, &own) == 0 &&
			    fcntl((int)fd, F_SETFL, O_ASYNC) == 0 && ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0) == 0)
				goto started;
			return 1;
		}
		fprintf(stderr, "sampling_cpu: perf events refused; CPU-time timer\n");
		struct sigevent sev;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		timer_t t;
		if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) != 0)
			return 1;
		struct itimerspec its = { { ns / 1000000000L, ns % 1000000000L },
					  { ns / 1000000000L, ns % 1000000000L } };
		timer_settime(t, 0, &its, NULL);
	}
started:;
	double c0 = cpu_now();
	double s = 0;
	for (long i = 0; i < chunks; i++)
		s += rec(depth);
	double c1 = cpu_now();
	bench_sink = s;
	printf("cpu_s=%.6f signals=%ld", c1 - c0, signals);
	if (unwind && signals) {
		long n = signals < NT ? signals : NT;
		qsort(unwind_ns, (size_t)n, sizeof(double), cmp_d);
		printf(" unwind_us=%.2f", unwind_ns[n / 2] / 1000.0);
	}
	printf("\n");
	return 0;
}
