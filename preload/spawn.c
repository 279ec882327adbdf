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
#include <signal.h>
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
	Dl_info di;
	size_t nargs = 0;

	while (args && args[nargs])
		nargs++;
	if (nargs + 2 > sizeof(h->argv) / sizeof(h->argv[0]))
		return -1;
	if (!dladdr((void *)tr_helper_prepare, &di) || !di.dli_fname)
		return -1;
	/* PREFIX/lib/libtracer.so -> PREFIX/bin/<tool> */
	snprintf(h->path, sizeof(h->path), "%s", di.dli_fname);
	for (int up = 0; up < 2; up++) {
		char *sl = strrchr(h->path, '/');
		if (!sl)
			return -1;
		*sl = 0;
	}
	size_t pl = strlen(h->path);
	snprintf(h->path + pl, sizeof(h->path) - pl, "/bin/%s", tool);
	if (access(h->path, X_OK))
		return -1;
	size_t n = 0;
	while (environ && environ[n])
		n++;
	free(h->envp);
	h->envp = malloc(sizeof(char *) * (n + 1));
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

/* vfork + execve: the child shares our memory until it execs, so it runs
 * with every signal blocked and, before unblocking, the default action for
 * every caught signal (no handler of the program ever runs in it); it keeps
 * no descriptor of the program (a pipe's reader would never see EOF while a
 * tracer-merge held its write end). */
pid_t tr_helper_spawn(const struct tr_helper *h)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = vfork();
	if (pid == 0) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (int s = 1; s < NSIG; s++) {
			struct sigaction cur;
			if (sigaction(s, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
				sigaction(s, &dfl, NULL);
		}
		setsid();
		int in = open("/dev/null", O_RDONLY);
		int out = open(h->log, O_WRONLY | O_CREAT | (h->append ? O_APPEND : O_TRUNC), 0644);
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		syscall(SYS_close_range, 3u, ~0u, 0u);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(h->argv[0], h->argv, h->envp);
		_exit(127);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGCHLD);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = tr_helper_spawn(h);
	double secs = -1;
	if (pid > 0) {
		int st = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (!was_pending) {
			struct timespec zero = { 0, 0 };
			sigtimedwait(&chld, NULL, &zero);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return secs;
}
