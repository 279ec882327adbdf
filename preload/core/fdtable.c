/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdtable.c - the tracer's file operations in a descriptor table of their
 * own, without a thread of ours in the program.
 *
 * A file the tracer opens during the run (the next mapped window of an
 * event file, a durability snapshot, a flushed chunk) must never take a
 * number in the program's descriptor table, not even for the instant
 * between open and close: another thread of the program opening a file at
 * that moment would get another number than untraced (a daemon that closed
 * 0, 1 and 2 expects /dev/null as 0), and the program's close_range could
 * close ours.
 *
 * tr_fd_private_run(fn, arg) runs fn(arg) in a child made by
 * clone(CLONE_VM | CLONE_VFORK) without CLONE_FILES (what posix_spawn
 * does, without the exec): it shares our memory (a mapping it makes is
 * ours, its results are in arg) but has a copy of the descriptor table, so
 * what it opens and closes is never in the program's table. The calling
 * thread is suspended until the child ends (a few tens of microseconds);
 * other threads run on. The child:
 * - runs on a stack of its own (never the caller's: the caller may be on a
 *   small thread stack or a signal stack), with every signal blocked and
 *   the caller's cancellation disabled (they share the thread pointer);
 * - has exit signal 0: no SIGCHLD, and the program's wait(), waitpid(-1)
 *   and waitid(P_ALL) never see it (only __WCLONE/__WALL waits do); we reap
 *   it with __WCLONE right after;
 * - is a process of its own for an instant: not in /proc/self/task, not a
 *   thread of the program (setxid broadcasts, seccomp thread sync and
 *   unshare(CLONE_NEWUSER) see one thread as untraced).
 * A process that has one thread runs fn in place instead, with every
 * signal blocked (a clone costs 80-95 us in a KVM guest, two of them were a
 * tenth of a short process's cost): with no other thread and no handler
 * able to run, nothing can open a file between our open and our close, so
 * the program's next descriptor is the untraced one all the same (the
 * descriptor is in the table for that moment, and format/fileio.c keeps it
 * at a high number). One thread means glibc's __libc_single_threaded (no
 * pthread_create ever, which posix timers, aio and every thread library
 * go through) and no raw clone system call sharing the descriptor table
 * seen by the syscall() wrapper (tr_fd_shared_clone).
 * When the clone fails (RLIMIT_NPROC reached, a sandbox forbids it), under
 * ThreadSanitizer (its clone interceptor) or valgrind (which runs the child
 * as a fork: told by a flag the child sets) fn is not run here: the caller
 * runs it itself (format/fileio.c then keeps the descriptor at a high
 * number for the moment it is open).
 * Inside the child getpid() is the child's: the tracer asks tr_self_pid().
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tr_int.h"

/* Deep enough for a snapshot of the definitions (paths of 4 KiB on the
 * stack, the writer's own frames); only the pages touched cost memory. */
#define FD_STACK (512u << 10)

struct fd_call {
	void (*fn)(void *);
	void *arg;
	volatile int ran;   /* set by the child: it shares our memory */
};

static int fd_child(void *p)
{
	struct fd_call *c = p;
	c->ran = 1;
	c->fn(c->arg);
	tr_syscall(SYS_exit, 0L);   /* this child only */
	return 0;
}

static int fd_disabled;   /* the clone was refused once (a sandbox): not again */
/* Set in the calling thread's TLS for the time of the call, so the child
 * (same thread pointer) sees it too: nested calls run in place, and
 * tr_self_pid answers with the process's pid, not the child's. */
TR_TLS int tr_fd_private;
static pid_t fd_parent;   /* the process's pid (every thread writes the same) */

pid_t tr_self_pid(void)
{
	return tr_fd_private ? fd_parent : getpid();
}

/* ThreadSanitizer's clone interceptor ends a process that clones after
 * it has threads ("starting new threads after multi-threaded fork"): with
 * it loaded, the direct way. */
static int fd_sanitized(void)
{
	static int known = -1;
	if (known < 0)
		known = tr_sym_default("__tsan_init") != NULL;
	return known;
}

/* One stack kept for the next call (a process makes two calls at least,
 * one per chunk of a busy location): taken by one call at a time, the
 * others map their own. fd_stack_busy is 1 while a call uses it. */
static void *fd_stack;
static int fd_stack_busy;

static void *stack_take(void)
{
	if (!__atomic_exchange_n(&fd_stack_busy, 1, __ATOMIC_ACQUIRE)) {
		void *s = __atomic_load_n(&fd_stack, __ATOMIC_RELAXED);
		if (s)
			return s;
		s = tr_real.mmap(NULL, FD_STACK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
		if (s != MAP_FAILED) {
			__atomic_store_n(&fd_stack, s, __ATOMIC_RELAXED);
			return s;
		}
		__atomic_store_n(&fd_stack_busy, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	void *s = tr_real.mmap(NULL, FD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
			       -1, 0);
	return s == MAP_FAILED ? NULL : s;
}

static void stack_give(void *s)
{
	if (s == __atomic_load_n(&fd_stack, __ATOMIC_RELAXED))
		__atomic_store_n(&fd_stack_busy, 0, __ATOMIC_RELEASE);
	else
		tr_real.munmap(s, FD_STACK);
}

/* fork child: a call of another thread had the kept stack (its copy is
 * free here), or none */
void tr_fd_fork_child(void)
{
	__atomic_store_n(&fd_stack_busy, 0, __ATOMIC_RELAXED);
}

/* A raw clone sharing our descriptor table made a thread glibc does not
 * know of (syscall(SYS_clone, CLONE_VM | CLONE_FILES, ...)): no more runs
 * in place. */
static int fd_shared;

void tr_fd_shared_clone(void)
{
	__atomic_store_n(&fd_shared, 1, __ATOMIC_RELAXED);
}

static void run_in_place(void (*fn)(void *), void *arg)
{
	int saved = errno, cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	uint64_t all = ~0ull, old;
	tr_syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &all, &old, 8L);
	fn(arg);
	tr_syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &old, NULL, 8L);
	pthread_setcancelstate(cs, NULL);
	errno = saved;
}

int tr_fd_private_run(void (*fn)(void *), void *arg)
{
	if (tr_fd_private) {
		fn(arg);   /* already in such a call (the clone child, or nested) */
		return 0;
	}
	if (__libc_single_threaded && !__atomic_load_n(&fd_shared, __ATOMIC_RELAXED)) {
		run_in_place(fn, arg);
		return 0;
	}
	if (__atomic_load_n(&fd_disabled, __ATOMIC_RELAXED) || fd_sanitized())
		return -1;
	void *stk = stack_take();
	if (!stk)
		return -1;
	int saved = errno, cs;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	uint64_t all = ~0ull, old;
	tr_syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &all, &old, 8L);
	struct fd_call c = { fn, arg, 0 };
	fd_parent = getpid();
	tr_fd_private = 1;
	pid_t pid = tr_real.clone(fd_child, (char *)stk + FD_STACK, CLONE_VM | CLONE_VFORK, &c);
	int e = errno;
	tr_fd_private = 0;
	int ret = -1;
	if (pid > 0) {
		/* CLONE_VFORK: the child has ended (or is ending); reap it */
		int st;
		while (tr_syscall(SYS_wait4, (long)pid, &st, (long)__WCLONE, NULL) < 0 && errno == EINTR)
			;
		if (c.ran) {
			ret = 0;
		} else {
			/* it ran in a copy of our memory, not in ours (valgrind runs
			 * such a clone as a fork): its work is lost, never again */
			__atomic_store_n(&fd_disabled, 1, __ATOMIC_RELAXED);
		}
	} else if (e == EPERM || e == ENOSYS || e == EINVAL) {
		__atomic_store_n(&fd_disabled, 1, __ATOMIC_RELAXED);
	}
	tr_syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &old, NULL, 8L);
	pthread_setcancelstate(cs, NULL);
	stack_give(stk);
	errno = saved;
	return ret;
}

void tr_fd_private_call(void (*fn)(void *), void *arg)
{
	if (tr_fd_private_run(fn, arg) != 0)
		fn(arg);
}
