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
 * - Started with the archive in durable mode (durable.c; a fork child
 *   starts its own). Without it (TRACER_DURABLE=off, or the thread cannot
 *   be created or unshare is refused) the writer opens its files itself at
 *   a high number (fileio.c), as before.
 * - It never keeps the process alive: see uncount.
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
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
void (*tr_tsan_acquire)(void *), (*tr_tsan_release)(void *);
static int (*io_real_join)(pthread_t, void **);
static pthread_t io_th;
static int io_quit;                  /* the service thread ends after this request */
static int io_master_gone;           /* the main thread called pthread_exit */
static int (*io_real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int io_uncounted;             /* not in glibc's count of running threads */

static long fx(int *addr, int op, int val, const struct timespec *ts)
{
	return tr_syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* Close every descriptor of the (private) table inherited from the
 * program: a pipe's write end kept here would hide its EOF. */
static void close_inherited(void)
{
#ifdef SYS_close_range
	if (tr_syscall(SYS_close_range, 0u, ~0u, 0u) == 0)
		return;
#endif
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
	for (long fd = 0; fd < max && fd < (1l << 20); fd++)
		tr_real.close((int)fd);
}

static void *io_main(void *unused)
{
	(void)unused;
	io_self = 1;
	tr_tls_creating = 1;   /* never a location of its own, whatever it calls */
	/* the raw system call: the interposed prctl would name (and create) a location */
	tr_syscall(SYS_prctl, PR_SET_NAME, "tracer-io", 0, 0, 0);
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
			if (tr_tsan_acquire)
				tr_tsan_acquire(r);
			r->fn(r->arg);
			if (tr_tsan_release)
				tr_tsan_release(r);
			__atomic_store_n(&io_busy, 0, __ATOMIC_SEQ_CST);
			int quit = __atomic_load_n(&io_quit, __ATOMIC_SEQ_CST);
			__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
			fx(&r->done, FUTEX_WAKE_PRIVATE, 1, NULL);   /* r may be gone now: harmless */
			r = n;
			if (quit) {
				if (__atomic_load_n(&io_uncounted, __ATOMIC_SEQ_CST))
					tr_syscall(SYS_exit, 0);   /* not through glibc: see uncount */
				return NULL;   /* the requester joins us */
			}
		}
	}
	return NULL;
}

/* glibc ends the process (exit(0): atexit handlers, stdio flushed) when
 * the last thread counted in __nptl_nthreads ends (a thread returning or
 * calling pthread_exit, main's pthread_exit included). tracer-io is taken
 * out of that count right after its creation (the creating thread is alive
 * and counted: the count never reaches 0 here), so the program's last
 * thread ends the process exactly as untraced, whatever the order in which
 * its threads end; exit_group then ends tracer-io. tracer-io itself never
 * returns through glibc (it would count itself out a second time): when it
 * must end it leaves with the exit system call. Without the symbol (another
 * C library) the older way stays: tr_io_thread_exiting ends tracer-io when
 * the program's last thread ends. */
static void uncount(void)
{
	int *n = (int *)dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
	if (!n)
		return;
	__atomic_sub_fetch(n, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&io_uncounted, 1, __ATOMIC_SEQ_CST);
}

/* Create the service thread (normal context only: never from a signal
 * handler). Idempotent; failures leave the direct path. */
void tr_io_start(void)
{
	int s = IO_NONE;
	if (!__atomic_compare_exchange_n(&io_state, &s, IO_STARTING, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	pthread_t th;
	sigset_t all, old;
	int ret = -1;
	/* nothing here is recorded (the calling thread's location may exist
	 * already) and no interposed function is called: default attributes
	 * (never joined, never exits), the signal mask by the system call */
	struct tr_thread *self = tr_tls_self;
	tr_tls_creating++;
	if (self)
		self->guard++;
	tr_tsan_acquire = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_acquire");
	tr_tsan_release = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_release");
	if (!io_real_create)
		io_real_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			tr_dlsym_next("pthread_create");
	if (!io_real_join)
		io_real_join = (int (*)(pthread_t, void **))tr_dlsym_next("pthread_join");
	io_quit = 0;
	if (io_real_create && io_real_join) {
		sigfillset(&all);
		tr_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);   /* inherited: every signal blocked */
		ret = io_real_create(&th, NULL, io_main, NULL);
		io_th = th;
		tr_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	}
	if (ret == 0)
		uncount();
	if (self)
		self->guard--;
	tr_tls_creating--;
	if (ret != 0) {
		__atomic_store_n(&io_state, IO_FAILED, __ATOMIC_SEQ_CST);
		tr_log_debug("no tracer-io thread (%s): files are opened at high descriptor numbers",
			     strerror(ret > 0 ? ret : ENOSYS));
	}
}

static void push(struct io_req *r)
{
	struct io_req *h = __atomic_load_n(&io_head, __ATOMIC_RELAXED);
	do
		r->next = h;
	while (!__atomic_compare_exchange_n(&io_head, &h, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	__atomic_add_fetch(&io_seq, 1, __ATOMIC_SEQ_CST);
	fx(&io_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
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
	if (s != IO_RUNNING) {
		/* no service thread (the default): a private descriptor table all
		 * the same, for the moment of the call (fdtable.c) */
		if (tr_fd_private) {
			fn(arg);   /* already there (a nested call) */
			return 0;
		}
		return tr_fd_private_run(fn, arg);
	}
	struct io_req r = { fn, arg, NULL, 0 };
	if (tr_tsan_release)
		tr_tsan_release(&r);
	push(&r);
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE))
		fx(&r.done, FUTEX_WAIT_PRIVATE, 0, NULL);
	if (tr_tsan_acquire)
		tr_tsan_acquire(&r);
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

/* ---- helper threads of tracer-io ---- */

struct io_helper {
	void (*fn)(void);
	const char *name;
};
static struct io_helper io_h;   /* the one helper (the sampler's symbol thread) */

static void *io_helper_main(void *arg)
{
	const struct io_helper *h = arg;
	io_self = 1;   /* tracer-io's descriptor table: its requests run here */
	tr_tls_creating = 1;
	tr_syscall(SYS_prctl, PR_SET_NAME, h->name, 0, 0, 0);
	/* below the program's threads (one `nice` step of 5) */
	setpriority(PRIO_PROCESS, (id_t)tr_syscall(SYS_gettid), getpriority(PRIO_PROCESS, 0) + 5);
	h->fn();
	tr_syscall(SYS_exit, 0);   /* uncounted: never through glibc */
	return NULL;
}

/* On tracer-io: start fn on a thread of its own that shares tracer-io's
 * descriptor table (created from it, after its unshare), every signal
 * blocked, out of glibc's thread count, niced by 5; fn never returns into
 * glibc (it may return: the thread then ends with the exit system call).
 * 0, or -1 (not on tracer-io, or no way to keep it out of the count: the
 * caller does the work itself). */
int tr_io_spawn(void (*fn)(void), const char *name)
{
	struct io_helper *h = &io_h;
	if (!io_self || !__atomic_load_n(&io_uncounted, __ATOMIC_SEQ_CST) || !io_real_create || h->fn)
		return -1;
	h->fn = fn;
	h->name = name;
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int ret = io_real_create(&th, &at, io_helper_main, h);   /* (tracer-io's mask: every signal blocked) */
	pthread_attr_destroy(&at);
	if (ret != 0) {
		h->fn = NULL;
		return -1;
	}
	uncount();
	return 0;
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

/* ---- the program's last thread must end the process ----
 * A process whose last thread returns or calls pthread_exit ends (exit(0),
 * atexit handlers) only when no other thread is left: tracer-io would keep
 * it alive (and, having its own descriptor table, must never be the thread
 * that runs the program's exit). So when a thread of the program ends and
 * no other thread of the program is alive, tracer-io ends first (joined:
 * glibc has counted it out before this thread goes on); the files go the
 * direct way from then on (a later thread starts a new one). */

/* On tracer-io: live tasks of the process other than itself (state not Z/X),
 * read from /proc/self/task with system calls only (no malloc: never the
 * program's allocator here). */
static void count_tasks(void *p)
{
	int *n = p;
	char buf[4096], path[64], st[512];
	*n = 0;
	int d = tr_real.open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0) {
		*n = 2;   /* unknown: keep the thread */
		return;
	}
	long me = tr_syscall(SYS_gettid);
	for (;;) {
		long got = tr_syscall(SYS_getdents64, d, buf, sizeof(buf));
		if (got <= 0)
			break;
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, 2);
			const char *name = buf + off + 19;
			off += reclen;
			if (name[0] < '0' || name[0] > '9' || atol(name) == me)
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/stat", name);
			int f = tr_real.open(path, O_RDONLY | O_CLOEXEC);
			if (f < 0)
				continue;
			ssize_t k = tr_real.read(f, st, sizeof(st) - 1);
			tr_real.close(f);
			if (k <= 0)
				continue;
			st[k] = 0;
			const char *rp = strrchr(st, ')');
			if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
				continue;
			(*n)++;
		}
	}
	tr_real.close(d);
}

static void quit_io(void *unused)
{
	(void)unused;
	__atomic_store_n(&io_state, IO_NONE, __ATOMIC_SEQ_CST);
	__atomic_store_n(&io_quit, 1, __ATOMIC_SEQ_CST);
}

void tr_io_thread_exiting(void)
{
	if (io_self || __atomic_load_n(&io_uncounted, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&io_state, __ATOMIC_SEQ_CST) != IO_RUNNING)
		return;
	struct tr_thread *self = tr_tls_self;
	if (self && self == tr_g.master)
		io_master_gone = 1;
	/* cheap test first: a traced thread still running */
	for (struct tr_thread *t = tr_g.threads; t; t = t->next)
		if (t != self && t->state == TR_T_ACTIVE && !(t == tr_g.master && io_master_gone))
			return;
	int n = 2;
	if (tr_io_run(count_tasks, &n) != 0 || n > 1)
		return;   /* an untraced thread of the program still runs */
	if (tr_io_run(quit_io, NULL) != 0)
		return;
	io_real_join(io_th, NULL);
}

/* fork child: the service thread is not copied. */
void tr_io_fork_child(void)
{
	io_state = IO_NONE;
	memset(&io_h, 0, sizeof(io_h));   /* (no helper in the child) */
	io_head = NULL;
	io_seq = 0;
	io_busy = 0;
	io_quit = 0;
	io_master_gone = 0;
	io_uncounted = 0;   /* glibc counts the child's one thread */
}
