/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.c - the archive's time base.
 *
 * Default: the invariant TSC (CPUID's TscInvariant: constant_tsc +
 * nonstop_tsc in /proc/cpuinfo), read inline by tr_time() (rdtsc, ~12 ns).
 * Its frequency is estimated against CLOCK_MONOTONIC from the pair read at
 * start when something first needs it (at least 10 us later: a process
 * rarely waits for that, and a short one that never asks pays nothing; it
 * serves intervals during the run) and refined over the whole run when
 * definitions are written
 * (tr_clock_final: at the end, at a durable snapshot, once 100 us passed:
 * the pairing's uncertainty of tens of ns is then below 0.05 %); it becomes the
 * archive's timer resolution. Refined over a run of T, the error of a
 * timestamp stays at the pairing's uncertainty (tens of ns), whatever T. Otherwise, or with
 * TRACER_CLOCK=monotonic, timestamps are CLOCK_MONOTONIC nanoseconds.
 */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#include <sys/platform/x86.h>
#endif
#endif
#include "tr_int.h"

int tr_clock_is_tsc;
int tr_clock_explicit;   /* TRACER_CLOCK given (set by config.c) */

/* ticks per second; 0: the TSC's, not estimated yet (freq_now) */
static uint64_t freq = 1000000000ull;
static uint64_t tsc0, mono0, real0;       /* paired readings at start */

static inline uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

uint64_t tr_time_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* test_clock_skew_ns is 0 unless a test sets TRACER_TEST_CLOCK_SKEW */
	return ts_ns(&ts) + (uint64_t)tr_cfg.test_clock_skew_ns;
}

static uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* One (tsc, monotonic) pair, the tsc taken as the middle of a sandwich. */
static void pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	*tsc = 0;
	*mono = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = rdtsc();
		uint64_t m = tr_time_monotonic();
		uint64_t b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

/* CPUID 0x80000007 EDX bit 8 (TscInvariant, Intel and AMD): what Linux
 * shows as constant_tsc + nonstop_tsc in /proc/cpuinfo (from this bit),
 * without generating that file (tens of microseconds a process). glibc
 * read that leaf at start already: its copy, where it has one (a CPUID
 * instruction traps to the hypervisor in a virtual machine: 7 us each on
 * the KVM guest this was measured on). */
static int tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
#ifdef CPU_FEATURE_PRESENT
	return CPU_FEATURE_PRESENT(INVARIANT_TSC) != 0;
#else
	unsigned a, b, c, d;
	if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	(void)a;
	(void)b;
	(void)c;
	return (d >> 8) & 1;
#endif
#else
	return 0;
#endif
}

/* The TSC's ticks per second over the time since the start pair (at
 * least 10 us: waits for the rest, if any). The first estimate stays
 * (threads asking at once agree); async-signal-safe. */
static uint64_t estimate(void)
{
	uint64_t t1 = 0, m1 = 0, none = 0;
	do
		pair(&t1, &m1);
	while (m1 - mono0 < 10000);
	uint64_t f = (uint64_t)((double)(t1 - tsc0) * 1e9 / (double)(m1 - mono0) + 0.5);
	if (!__atomic_compare_exchange_n(&freq, &none, f, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		f = none;
	return f;
}

static inline uint64_t freq_now(void)
{
	uint64_t f = __atomic_load_n(&freq, __ATOMIC_ACQUIRE);
	return tr_likely(f) ? f : estimate();
}

void tr_clock_init(void)
{
	struct timespec rt;
	int want_tsc = tr_cfg.clock == TR_CLOCK_TSC;
	int inv = want_tsc && tsc_invariant();

	if (want_tsc && !inv && tr_clock_explicit)
		tr_log_warn("TRACER_CLOCK=tsc: this CPU has no invariant TSC (constant_tsc, nonstop_tsc); "
			    "using monotonic");
	if (inv) {
		pair(&tsc0, &mono0);
		clock_gettime(CLOCK_REALTIME, &rt);
		real0 = ts_ns(&rt) - (tr_time_monotonic() - mono0);
		if (!tsc0)
			inv = 0;   /* (no rdtsc here) */
		else
			freq = 0;   /* estimated when first asked: freq_now */
	}
	if (!inv) {
		tr_cfg.clock = TR_CLOCK_MONOTONIC;
		freq = 1000000000ull;
		mono0 = tr_time_monotonic();
		tsc0 = mono0;
		clock_gettime(CLOCK_REALTIME, &rt);
		real0 = ts_ns(&rt) - (tr_time_monotonic() - mono0);
	}
	tr_clock_is_tsc = inv;
}

void tr_clock_final(void)
{
	if (!tr_clock_is_tsc)
		return;
	uint64_t t1 = 0, m1 = 0;
	pair(&t1, &m1);
	if (m1 - mono0 >= 100000ull && t1 > tsc0)
		__atomic_store_n(&freq, (uint64_t)((double)(t1 - tsc0) * 1e9 / (double)(m1 - mono0) + 0.5),
				 __ATOMIC_RELEASE);
	else
		(void)freq_now();
}

uint64_t tr_clock_freq(void)
{
	return freq_now();
}

uint64_t tr_clock_resolution(void)
{
	return freq_now();
}

uint64_t tr_ticks_to_ns(uint64_t ticks)
{
	uint64_t f = freq_now();
	if (f == 1000000000ull)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000ull / f);
}

uint64_t tr_clock_realtime_of(uint64_t ticks)
{
	if (ticks >= tsc0)
		return real0 + tr_ticks_to_ns(ticks - tsc0);
	uint64_t d = tr_ticks_to_ns(tsc0 - ticks);
	return real0 > d ? real0 - d : 0;
}
