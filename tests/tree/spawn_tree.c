/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spawn_tree.c - a process tree made every way a C program makes one
 * (tests/tree): spawn_tree all | late FILE | daemon FILE
 *
 * all: fork (the child prints and exits, no exec), fork + execl of
 * /bin/echo, posix_spawn of /bin/echo, system("/bin/echo ..."), popen of
 * "/bin/echo ..." (read back), vfork + execl of /bin/echo, fork + execve of
 * /bin/echo with an environment that does not name the archive (no
 * TRACER_OUTPUT: the image finds its tree through the per-user registry);
 * the parent waits for each and prints what it saw. Exit status 3.
 * late FILE: two fork children that make no traced call for a while (a
 * fork child's archive waits for its first one): the first computes for
 * 200 ms (no system call), then writes FILE and exits 0; the second
 * waits in the raw pause system call until the parent's SIGTERM (100 ms
 * later) ends it. Exit status 0.
 * daemon FILE: the parent forks and exits at once; the child forks again
 * (setsid) and exits; the grandchild sleeps 1.5 s, writes FILE and exits:
 * it outlives the root of the tree.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int wait_child(pid_t pid)
{
	int st = 0;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int all(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("fork child\n");
		exit(0);
	}
	printf("fork: %d\n", wait_child(pid));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/echo", "echo", "fork+exec", (char *)NULL);
		_exit(127);
	}
	printf("fork+exec: %d\n", wait_child(pid));
	fflush(stdout);
	char *argv[] = { "echo", "posix_spawn", NULL };
	if (posix_spawn(&pid, "/bin/echo", NULL, NULL, argv, environ) == 0)
		printf("posix_spawn: %d\n", wait_child(pid));
	fflush(stdout);
	int r = system("/bin/echo system");
	printf("system: %d\n", WIFEXITED(r) ? WEXITSTATUS(r) : -1);
	FILE *p = popen("/bin/echo popen", "r");
	char line[64] = "";
	if (p && fgets(line, sizeof(line), p))
		printf("popen read: %s", line);
	printf("pclose: %d\n", p ? pclose(p) : -1);
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl("/bin/echo", "echo", "vfork+exec", (char *)NULL);
		_exit(127);
	}
	printf("vfork+exec: %d\n", wait_child(pid));
	fflush(stdout);
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; env && i < n; i++)
		if (strncmp(environ[i], "TRACER_OUTPUT=", 14))
			env[k++] = environ[i];
	pid = fork();
	if (pid == 0) {
		char *eargv[] = { "echo", "fork+execve without TRACER_OUTPUT", NULL };
		execve("/bin/echo", eargv, env);
		_exit(127);
	}
	printf("fork+execve: %d\n", wait_child(pid));
	free(env);
	return 3;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);   /* (the vDSO: no system call) */
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int late(const char *file)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		volatile unsigned long spin = 0;
		for (double t0 = now_s(); now_s() - t0 < 0.2;)
			spin++;
		FILE *f = fopen(file, "w");
		if (!f)
			_exit(1);
		fprintf(f, "late child %lu\n", spin > 0 ? 1ul : 0ul);
		_exit(fclose(f) == 0 ? 0 : 1);
	}
	printf("late writer: %d\n", wait_child(pid));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		syscall(SYS_pause);   /* (syscall(): not a traced call) */
		_exit(2);
	}
	usleep(100000);
	kill(pid, SIGTERM);
	printf("late waiter: %d\n", wait_child(pid));
	return 0;
}

static int daemon_tree(const char *file)
{
	pid_t pid = fork();
	if (pid != 0) {
		printf("parent exits\n");
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	usleep(1500000);
	FILE *f = fopen(file, "w");
	if (f) {
		fprintf(f, "daemon done\n");
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "all"))
		return all();
	if (argc > 2 && !strcmp(argv[1], "late"))
		return late(argv[2]);
	if (argc > 2 && !strcmp(argv[1], "daemon"))
		return daemon_tree(argv[2]);
	fprintf(stderr, "usage: spawn_tree all | late FILE | daemon FILE\n");
	return 2;
}
