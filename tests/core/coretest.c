/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coretest.c - test-only entry points of libtracer_coretest.so (the core of
 * libtracer.so without wrappers/ and sampling/), so that tests/core can
 * record user regions without depending on any wrapper family. Never part
 * of libtracer.so.
 */
#include <string.h>
#include "tracer.h"

static uint32_t region_of(const char *name)
{
	return tr_def_region(name, NULL, NULL, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0,
			     "core_prog.c", 0, 0);
}

TR_EXPORT void tracer_test_enter(const char *name)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_enter(t, tr_time(), region_of(name));
	tr_thread_put(t);
}

TR_EXPORT void tracer_test_leave(const char *name)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_leave(t, tr_time(), region_of(name));
	tr_thread_put(t);
}

/* Thread life cycle as the pthread wrappers use it. */
TR_EXPORT void tracer_test_thread_begin(void)
{
	uint32_t idx;
	struct tr_thread *t = tr_thread_begin(&idx);
	if (t)
		tr_thread_put(t);
}

TR_EXPORT void tracer_test_thread_end(void)
{
	tr_thread_end(NULL);
}

TR_EXPORT void tracer_test_measurement(int on)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_measurement(t, on);
	tr_thread_put(t);
}

/* Micro-benchmark of the core hot path (bench/core.sh): ns per iteration.
 * mode 0: get + Enter + Leave + put (two tr_time); mode 1: tr_time only. */
#include <time.h>
TR_EXPORT double tracer_test_bench(long n, int mode)
{
	struct timespec a, b;
	uint32_t r = region_of("bench");
	volatile uint64_t sink = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		if (mode == 1) {
			sink += tr_time();
			continue;
		}
		struct tr_thread *t = tr_thread_get();
		if (t) {
			tr_enter(t, tr_time(), r);
			tr_leave(t, tr_time(), r);
			tr_thread_put(t);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	(void)sink;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}

/* exit() while this thread holds the registry lock, as when a signal
 * handler calls exit() after interrupting the tracer: must not deadlock. */
#include <stdlib.h>
#include "tr_int.h"
TR_EXPORT void tracer_test_exit_inside(int status)
{
	tr_lock(tr_defs_lock());
	exit(status);
}
