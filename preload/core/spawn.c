/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spawn.c - helper processes (tracer.h): a tool of this installation
 * (PREFIX/bin/<tool>, found from where libtracer.so was loaded) run
 * detached and untraced (the environment without LD_PRELOAD). Prepared in
 * thread context, started from anywhere: tr_helper_spawn is
 * async-signal-safe (the crash path starts tracer-merge with it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"

int tr_helper_prepare(struct tr_helper *h, const char *tool, const char *const *args, const char *log)
{
	extern char **environ;
	size_t nargs = 0;

	while (args && args[nargs])
		nargs++;
	if (nargs + 2 > sizeof(h->argv) / sizeof(h->argv[0]))
		return -1;
	const char *self = tr_self_path();
	if (!self)
		return -1;
	/* LIBDIR/libtracer.so -> LIBDIR/TR_LIB_TO_BIN/<tool> (the installed
	 * tree), else ../bin/<tool> (the build tree: build/lib, build/bin) */
	static const char *const up[] = { TR_LIB_TO_BIN, "../bin" };
	const char *sl = strrchr(self, '/');
	if (!sl)
		return -1;
	int dl = (int)(sl - self), found = 0;
	for (size_t i = 0; i < sizeof(up) / sizeof(up[0]) && !found; i++) {
		int w = snprintf(h->path, sizeof(h->path), "%.*s/%s/%s", dl, self, up[i], tool);
		found = w > 0 && (size_t)w < sizeof(h->path) && access(h->path, X_OK) == 0;
	}
	if (!found)
		return -1;
	size_t n = 0;
	while (environ && environ[n])
		n++;
	tr_free(h->envp);
	h->envp = tr_malloc(sizeof(char *) * (n + 1));
	if (!h->envp)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			h->envp[k++] = environ[i];
	h->envp[k] = NULL;
	h->argv[0] = h->path;
	for (size_t i = 0; i < nargs; i++)
		h->argv[1 + i] = (char *)args[i];
	h->argv[1 + nargs] = NULL;
	h->log = log;
	h->append = 0;
	return 0;
}

/* clone(CLONE_VM | CLONE_VFORK) + execve on a stack of our own (what
 * posix_spawn does): the child shares our memory until it execs, never
 * touches the caller's stack (the caller may be a signal handler on an
 * alternate stack) and goes through no interceptor (ASan's vfork one
 * clears the stack below it: a crash inside the crash path). The child
 * runs with every signal blocked and, before unblocking, the default
 * action for every caught signal (no handler of the program ever runs in
 * it); it keeps no descriptor of the program (a pipe's reader would never
 * see EOF while a tracer-merge held its write end). */
static char spawn_stack[32768] __attribute__((aligned(64))) TR_BIG_BSS;
static int spawn_busy;

/* The kernel's struct sigaction (rt_sigaction): only SIG_DFL is set. */
struct spawn_ksa {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/* Runs in the child on spawn_stack: system calls only (no libc function a
 * sanitizer or the program may interpose: they would run in our memory). */
static int spawn_child(void *arg)
{
	const struct tr_helper *h = arg;
	struct spawn_ksa dfl = { 0, 0, 0, 0 }, cur;
	for (long s = 1; s < 65; s++)
		if (tr_syscall(SYS_rt_sigaction, s, NULL, &cur, 8L) == 0 && cur.handler != (void *)SIG_DFL &&
		    cur.handler != (void *)SIG_IGN)
			tr_syscall(SYS_rt_sigaction, s, &dfl, NULL, 8L);
	tr_syscall(SYS_setsid);
	long in = tr_syscall(SYS_openat, (long)AT_FDCWD, "/dev/null", (long)O_RDONLY);
	long out = tr_syscall(SYS_openat, (long)AT_FDCWD, h->log,
			   (long)(O_WRONLY | O_CREAT | (h->append ? O_APPEND : O_TRUNC)), 0644L);
	if (in >= 0)
		tr_syscall(SYS_dup2, in, 0L);
	if (out >= 0) {
		tr_syscall(SYS_dup2, out, 1L);
		tr_syscall(SYS_dup2, out, 2L);
	}
	tr_syscall(SYS_close_range, 3u, ~0u, 0u);
	uint64_t none = 0;
	tr_syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &none, NULL, 8L);
	tr_syscall(SYS_execve, h->argv[0], h->argv, h->envp);
	tr_syscall(SYS_exit, 127L);
	return 127;
}

pid_t tr_helper_spawn(const struct tr_helper *h)
{
	if (__atomic_exchange_n(&spawn_busy, 1, __ATOMIC_ACQUIRE))
		return -1;   /* another thread is starting one this very moment */
	int saved = errno;
	sigset_t all, old;
	sigfillset(&all);
	tr_real.pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = tr_real.clone(spawn_child, spawn_stack + sizeof(spawn_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
			  (void *)h);
	if (pid < 0 && errno == ENOMEM) {
		/* the process unshared a pid namespace (unshare -p -f) whose
		 * init has ended: no child can be made in it any more. Its
		 * children go to its own namespace again (the program has
		 * ended: nothing of it forks after this) */
		long fd = tr_syscall(SYS_openat, (long)AT_FDCWD, "/proc/self/ns/pid", (long)(O_RDONLY | O_CLOEXEC));
		if (fd >= 0 && tr_syscall(SYS_setns, fd, (long)CLONE_NEWPID) == 0)
			pid = tr_real.clone(spawn_child, spawn_stack + sizeof(spawn_stack),
					    CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)h);
		if (fd >= 0)
			tr_syscall(SYS_close, fd);
	}
	tr_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&spawn_busy, 0, __ATOMIC_RELEASE);
	errno = saved;
	return pid;
}

/* Runs the helper and waits for it; the program never sees its SIGCHLD
 * (unless one of its own was already pending). Returns the helper's wall
 * time in seconds, -1 when it could not run or failed. Thread context. */
double tr_helper_run(const struct tr_helper *h)
{
	sigset_t chld, old, pend;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	tr_real.pthread_sigmask(SIG_BLOCK, &chld, &old);
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGCHLD);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = tr_helper_spawn(h);
	double secs = -1;
	if (pid > 0) {
		int st = 0;
		while (tr_real.waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (!was_pending) {
			struct timespec zero = { 0, 0 };
			sigtimedwait(&chld, NULL, &zero);
		}
	}
	tr_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
	return secs;
}
