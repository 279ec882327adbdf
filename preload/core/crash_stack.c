/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_stack.c - the stack the crash path writes the archive on.
 *
 * The crash path (archive_end.c, emergency) runs inside a signal handler
 * or a sanitizer's death callback, on whatever stack the signal found: the
 * alternate signal stack of thread.c (128 KiB), but just as well ASan's
 * (4 x SIGSTKSZ, 32 KiB: the handler of its SEGV report, where the death
 * callback runs) or a program's own small one (Rust's threads, libsigsegv).
 * Writing the last records, the definitions and the anchor needs more than
 * that: under ASan a SEGV report's callback overflowed ASan's alternate
 * stack ("nested bug in the same thread") and the archive was lost. So the
 * crash path switches to a stack of its own, mapped once at start-up (only
 * touched pages cost memory; a guard page below it) and taken by one
 * thread at a time (the finisher; a second crashing thread only waits for
 * it, on the stack it is on). makecontext/swapcontext: registers and one
 * rt_sigprocmask each, no lock, no allocation.
 */
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "tr_int.h"

#define TR_CRASH_STACK_SIZE (1024u * 1024u)

static char *crash_stack;        /* usable part (above the guard page) */
static int crash_stack_busy;     /* taken by the thread running on it */
static void (*crash_fn)(void *);
static void *crash_arg;
static ucontext_t crash_ctx, crash_back;

void tr_crash_stack_init(void)
{
	if (crash_stack)
		return;
	long pg = sysconf(_SC_PAGESIZE);
	size_t g = pg > 0 ? (size_t)pg : 4096;
	void *p = tr_mem_space(TR_CRASH_STACK_SIZE + g);
	if (!p)
		return;   /* the crash path then runs where it is */
	mprotect(p, g, PROT_NONE);
	crash_stack = (char *)p + g;
}

static void crash_entry(void)
{
	crash_fn(crash_arg);
}

/* fn(arg) on the crash stack (in place if it is missing or taken, e.g. by
 * a nested call). Async-signal-safe. */
void tr_crash_stack_run(void (*fn)(void *), void *arg)
{
	if (!crash_stack || __atomic_exchange_n(&crash_stack_busy, 1, __ATOMIC_ACQUIRE)) {
		fn(arg);
		return;
	}
	crash_fn = fn;
	crash_arg = arg;
	if (getcontext(&crash_ctx) != 0) {
		__atomic_store_n(&crash_stack_busy, 0, __ATOMIC_RELEASE);
		fn(arg);
		return;
	}
	crash_ctx.uc_stack.ss_sp = crash_stack;
	crash_ctx.uc_stack.ss_size = TR_CRASH_STACK_SIZE;
	crash_ctx.uc_stack.ss_flags = 0;
	crash_ctx.uc_link = &crash_back;
	makecontext(&crash_ctx, crash_entry, 0);
	if (swapcontext(&crash_back, &crash_ctx) != 0)
		fn(arg);
	__atomic_store_n(&crash_stack_busy, 0, __ATOMIC_RELEASE);
}
