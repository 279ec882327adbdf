/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_unwind.c - stacks of every shape the sampler's own walk reads
 * (sampling/unwind.c), for sampling.unwind: CPU time at the end of
 * recursion chains whose frames have the CFA on %rsp (frame pointer
 * omitted) or on %rbp (frame pointer kept), through a function whose stack
 * is realigned to 64 bytes (GCC's DW_CFA_def_cfa_expression), and from a
 * second thread. Compiled -O2 (see CMakeLists.txt); each shape runs
 * SMP_CPU_SECONDS (default 0.3) of CPU. "smp_unwind signal": CPU time
 * in a SIGALRM handler (sig_work, below sig_handler, raised from
 * sig_raise): the walk crosses the kernel's signal frame.
 */
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "smp_cpu.h"

volatile double smp_sink;
static double seconds = 0.3;

#define NOINLINE __attribute__((noinline, noclone))
#define NOFP __attribute__((optimize("omit-frame-pointer")))
#define FP __attribute__((optimize("no-omit-frame-pointer")))

NOINLINE void leaf_spin(void)
{
	smp_spin_cpu(0.002);
}

/* A recursion of d + 1 frames ending in leaf_spin, with the frame-pointer
 * choice attr: rec_sp omits it (the CFA follows %rsp through the pushes),
 * rec_bp keeps it (the CFA is %rbp + 16). */
#define RECURSION(name, attr, padlen)                     \
	NOINLINE attr int name(int d)                     \
	{                                                 \
		volatile char pad[padlen];                \
		pad[d % padlen] = (char)d;                \
		if (d > 0)                                \
			return name(d - 1) + pad[d % padlen]; \
		leaf_spin();                              \
		return 0;                                 \
	}
RECURSION(rec_sp, NOFP, 40)
RECURSION(rec_bp, FP, 24)

/* a 64-byte aligned local beside a variable-length array: GCC realigns
 * the stack through %r10 (DRAP), the CFA is *(rbp - 8)
 * (DW_CFA_def_cfa_expression) and rbp is saved at *rbp */
NOINLINE void aligned_call(int d)
{
	_Alignas(64) volatile char buf[64];
	volatile char vla[d + 8];
	memset((char *)buf, d, sizeof(buf));
	vla[d] = (char)d;
	if (d > 0)
		aligned_call(d - 1);
	else
		rec_sp(6);
	smp_sink += buf[(unsigned)d % 64] + vla[d];
}

static void run_shapes(void)
{
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		smp_sink += rec_sp(30);
	end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		smp_sink += rec_bp(30);
	end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		aligned_call(4);
}

static void *thread_main(void *arg)
{
	(void)arg;
	run_shapes();
	return NULL;
}

NOINLINE static void sig_work(void)
{
	smp_spin_cpu(seconds);
}

static void sig_handler(int sig)
{
	(void)sig;
	sig_work();
	smp_sink += 1;
}

NOINLINE static int sig_raise(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		return 1;
	return raise(SIGALRM) != 0;
}

int main(int argc, char **argv)
{
	const char *e = getenv("SMP_CPU_SECONDS");
	if (e)
		seconds = atof(e);
	if (argc > 1 && !strcmp(argv[1], "signal"))
		return sig_raise();
	run_shapes();
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		return 1;
	pthread_join(th, NULL);
	return 0;
}
