/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * durable_io.c - the "tracer-io" service thread: every file operation of
 * the writer during the run (open, write, close of chunk flushes, thread
 * ends, the archive close) runs on one tracer-owned thread that has a
 * descriptor table of its own (unshare(CLONE_FILES), then every inherited
 * descriptor closed). A file the tracer opens therefore never takes a
 * number in the program's table, not even for the instant between open
 * and the move to a high number: a program thread opening a file at the
 * same time gets the number it gets untraced, and the program's
 * close_range/dup2/closefrom can never touch our files.
 *
 * - Created lazily when the program gets a second thread (the first
 *   location of a non-master thread, a normal context: never from a signal
 *   handler), so a single-threaded program never has it (nothing can race
 *   with it there). Until then, and whenever the thread cannot be created
 *   or unshare is refused, the writer opens its files itself at a high
 *   number (fileio.c), as before.
 * - Requests are on the caller's stack, pushed on a lock-free list; the
 *   thread sleeps on a futex; the caller sleeps on its request's futex
 *   until it is done. The thread blocks every signal (never the target of
 *   the program's or our own process-directed signals).
 * - Emergency paths (crash signals, exit inside the tracer) never use it:
 *   tr_io_quiesce waits (bounded) for the request in progress and turns it
 *   off; they write with their own high descriptors.
 * - fork: the child has no such thread; tr_io_fork_child forgets it and
 *   the child creates its own when it gets a second thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"

struct io_req {
	void (*fn)(void *);
	void *arg;
	struct io_req *next;
	int done;
};

enum { IO_NONE, IO_STARTING, IO_RUNNING, IO_FAILED, IO_OFF };

static int io_state;                 /* IO_* (futex word while starting) */
static struct io_req *io_head;       /* pushed requests (LIFO) */
static int io_seq;                   /* bumped on every push (futex word) */
static int io_busy;                  /* a request is running */
static TR_TLS int io_self;           /* this is the service thread */
static void (*io_tick)(void);        /* durable.c: every io_tick_ns */
static uint64_t io_tick_ns;
static int io_tick_first;            /* first tick after one interval */
/* ThreadSanitizer: our futex hand-over is invisible to it; these tell it
 * that a request happens before its execution and that before its end */
static void (*io_tsan_acquire)(void *), (*io_tsan_release)(void *);
static int (*io_real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static long fx(int *addr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* Close every descriptor of the (private) table inherited from the
 * program: a pipe's write end kept here would hide its EOF. */
static void close_inherited(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 0u, ~0u, 0u) == 0)
		return;
#endif
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
	for (long fd = 0; fd < max && fd < (1l << 20); fd++)
		close((int)fd);
}

static void *io_main(void *unused)
{
	(void)unused;
	io_self = 1;
	/* the raw system call: the interposed prctl would name (and create) a location */
	syscall(SYS_prctl, PR_SET_NAME, "tracer-io", 0, 0, 0);
	int ok = unshare(CLONE_FILES) == 0;
	if (ok)
		close_inherited();
	__atomic_store_n(&io_state, ok ? IO_RUNNING : IO_FAILED, __ATOMIC_SEQ_CST);
	fx(&io_state, FUTEX_WAKE_PRIVATE, 1 << 30, NULL);
	if (!ok)
		return NULL;
	/* the first tick at once, in a fork child one interval after the start
	 * (a child that execs at once leaves nothing) */
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	uint64_t first = io_tick_first ? io_tick_ns : 0;
	next.tv_nsec += (long)(first % 1000000000u);
	next.tv_sec += (time_t)(first / 1000000000u) + next.tv_nsec / 1000000000;
	next.tv_nsec %= 1000000000;
	for (;;) {
		int seq = __atomic_load_n(&io_seq, __ATOMIC_SEQ_CST);
		struct io_req *l = __atomic_exchange_n(&io_head, NULL, __ATOMIC_ACQ_REL);
		if (!l && io_tick) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec)) {
				__atomic_store_n(&io_busy, 1, __ATOMIC_SEQ_CST);
				if (__atomic_load_n(&io_state, __ATOMIC_SEQ_CST) == IO_RUNNING)
					io_tick();
				__atomic_store_n(&io_busy, 0, __ATOMIC_SEQ_CST);
				uint64_t ns = (uint64_t)now.tv_nsec + io_tick_ns;
				next.tv_sec = now.tv_sec + (time_t)(ns / 1000000000u);
				next.tv_nsec = (long)(ns % 1000000000u);
				continue;
			}
			struct timespec rel = { next.tv_sec - now.tv_sec, next.tv_nsec - now.tv_nsec };
			if (rel.tv_nsec < 0) {
				rel.tv_sec--;
				rel.tv_nsec += 1000000000;
			}
			fx(&io_seq, FUTEX_WAIT_PRIVATE, seq, &rel);
			continue;
		}
		if (!l) {
			fx(&io_seq, FUTEX_WAIT_PRIVATE, seq, NULL);
			continue;
		}
		/* oldest first */
		struct io_req *r = NULL;
		while (l) {
			struct io_req *n = l->next;
			l->next = r;
			r = l;
			l = n;
		}
		while (r) {
			struct io_req *n = r->next;
			__atomic_store_n(&io_busy, 1, __ATOMIC_SEQ_CST);
			if (io_tsan_acquire)
				io_tsan_acquire(r);
			r->fn(r->arg);
			if (io_tsan_release)
				io_tsan_release(r);
			__atomic_store_n(&io_busy, 0, __ATOMIC_SEQ_CST);
			__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
			fx(&r->done, FUTEX_WAKE_PRIVATE, 1, NULL);   /* r may be gone now: harmless */
			r = n;
		}
	}
	return NULL;
}

/* Create the service thread (normal context only: never from a signal
 * handler). Idempotent; failures leave the direct path. */
void tr_io_start(void)
{
	int s = IO_NONE;
	if (!__atomic_compare_exchange_n(&io_state, &s, IO_STARTING, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	io_tsan_acquire = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_acquire");
	io_tsan_release = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_release");
	if (!io_real_create)
		io_real_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			tr_dlsym_next("pthread_create");
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, old;
	int ret = -1;
	if (io_real_create && pthread_attr_init(&a) == 0) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 * 1024);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);   /* inherited: every signal blocked */
		tr_tls_internal++;
		ret = io_real_create(&th, &a, io_main, NULL);
		tr_tls_internal--;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&a);
	}
	if (ret != 0) {
		__atomic_store_n(&io_state, IO_FAILED, __ATOMIC_SEQ_CST);
		tr_log_debug("no tracer-io thread (%s): files are opened at high descriptor numbers",
			     strerror(ret > 0 ? ret : ENOSYS));
	}
}

/* Run fn(arg) on the service thread and wait for it; 0 done, -1 when there
 * is no service thread (the caller runs fn itself). */
int tr_io_run(void (*fn)(void *), void *arg)
{
	if (io_self) {
		fn(arg);
		return 0;
	}
	int s;
	while ((s = __atomic_load_n(&io_state, __ATOMIC_SEQ_CST)) == IO_STARTING)
		fx(&io_state, FUTEX_WAIT_PRIVATE, IO_STARTING, NULL);
	if (s != IO_RUNNING)
		return -1;
	struct io_req r = { fn, arg, NULL, 0 };
	if (io_tsan_release)
		io_tsan_release(&r);
	struct io_req *h = __atomic_load_n(&io_head, __ATOMIC_RELAXED);
	do
		r.next = h;
	while (!__atomic_compare_exchange_n(&io_head, &h, &r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	__atomic_add_fetch(&io_seq, 1, __ATOMIC_SEQ_CST);
	fx(&io_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE))
		fx(&r.done, FUTEX_WAIT_PRIVATE, 0, NULL);
	if (io_tsan_acquire)
		io_tsan_acquire(&r);
	return 0;
}

/* Crash paths: wait (bounded, 2 s) until no request is running, then no
 * new one goes to the service thread. Async-signal-safe. */
void tr_io_quiesce(void)
{
	if (io_self)
		return;
	int s = __atomic_load_n(&io_state, __ATOMIC_SEQ_CST);
	if (s != IO_RUNNING)
		return;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 2000 && (__atomic_load_n(&io_busy, __ATOMIC_SEQ_CST) ||
				     __atomic_load_n(&io_head, __ATOMIC_SEQ_CST)); i++)
		nanosleep(&ms, NULL);
	__atomic_store_n(&io_state, IO_OFF, __ATOMIC_SEQ_CST);
}

/* Call fn on the service thread every ns (durable.c), before it starts. */
void tr_io_set_tick(void (*fn)(void), uint64_t ns, int delayed)
{
	io_tick_ns = ns;
	io_tick_first = delayed;
	io_tick = fn;
}

/* 1 on the service thread. */
int tr_io_is_self(void)
{
	return io_self;
}

/* fork child: the service thread is not copied. */
void tr_io_fork_child(void)
{
	io_state = IO_NONE;
	io_head = NULL;
	io_seq = 0;
	io_busy = 0;
}
