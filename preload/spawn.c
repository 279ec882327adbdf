/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spawn.c - helper processes (tracer.h): a tool of this installation
 * (PREFIX/bin/<tool>, found from where libtracer.so was loaded) run
 * detached and untraced (the environment without LD_PRELOAD). Prepared in
 * thread context, started from anywhere: tr_helper_spawn is
 * async-signal-safe (the crash path starts tracer-merge with it).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	return 0;
}

int tr_helper_spawn(const struct tr_helper *h)
{
	pid_t pid = vfork();
	if (pid == 0) {
		setsid();
		int in = open("/dev/null", O_RDONLY), out = open(h->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		execve(h->argv[0], h->argv, h->envp);
		_exit(127);
	}
	return pid;
}
