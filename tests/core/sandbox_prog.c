/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sandbox_prog.c - a program that sandboxes itself, ends by the raw
 * exit_group system call, or forks by the raw clone system call.
 *
 *   sandbox_prog seccomp-process  prctl(PR_SET_SECCOMP) filter: only read,
 *                                 write, exit_group, exit and rt_sigreturn;
 *                                 anything else SECCOMP_RET_KILL_PROCESS;
 *                                 then writes a line and calls exit(3)
 *   sandbox_prog seccomp-thread   the same with SECCOMP_RET_KILL_THREAD,
 *                                 installed with syscall(SYS_seccomp)
 *   sandbox_prog seccomp-die      KILL_PROCESS filter, then a forbidden call
 *                                 (getppid): the program dies by SIGSYS
 *   sandbox_prog exit-group N     a locked counter, then syscall(SYS_exit_group, N)
 *   sandbox_prog exit N           a locked counter, then exit(N)
 *   sandbox_prog raw-clone DIR    syscall(SYS_clone, SIGCHLD, 0): the child
 *                                 writes DIR/child.txt (open, write, close)
 *                                 and locks a mutex 1000 times; the parent
 *                                 does the same in DIR/parent.txt, waits
 *   sandbox_prog glibc-clone DIR  the same with glibc's clone() on a stack of
 *                                 PTHREAD_STACK_MIN (chromium's sandbox does
 *                                 so); the child's function returns 0
 *   sandbox_prog tasks            prints its /proc/self/task count and whether
 *                                 unshare(CLONE_NEWUSER) works (single-threaded)
 *   sandbox_prog fork-tasks       the same in the fork child of a program with
 *                                 three threads
 * Everything it prints is the same untraced and traced.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void work(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
}

static int write_file(const char *dir, const char *name, const char *text);

/* glibc-clone's child: its function returns (glibc ends it with exit(2)) */
static int clone_fn(void *dir)
{
	work(1000);
	return write_file(dir, "child.txt", "child\n") ? 1 : 0;
}

static int stop;

static void *spin(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		work(10);
	return arg;
}

/* Entries of /proc/self/task. */
static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int install(unsigned int deny, int via_syscall)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, deny),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_exit_group), ALLOW(SYS_exit), ALLOW(SYS_rt_sigreturn),
		BPF_STMT(BPF_RET | BPF_K, deny),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (via_syscall)
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(9);
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	if (!strcmp(m, "seccomp-process") || !strcmp(m, "seccomp-thread") || !strcmp(m, "seccomp-die")) {
		work(100);
		printf("before the filter: %ld\n", counter);
		fflush(stdout);
		int thread = !strcmp(m, "seccomp-thread");
		if (install(thread ? SECCOMP_RET_KILL_THREAD : SECCOMP_RET_KILL_PROCESS, thread) != 0) {
			perror("sandbox_prog: seccomp");
			return 1;
		}
		work(100);   /* allowed: futex-free uncontended locks make no system call */
		say("inside the filter\n");
		if (!strcmp(m, "seccomp-die"))
			syscall(SYS_getppid);   /* forbidden: SIGSYS */
		exit(3);   /* atexit handlers, stdio, exit_group: allowed */
	}
	if (!strcmp(m, "exit-group") && argc > 2) {
		work(1000);
		printf("exit-group %s after %ld\n", argv[2], counter);
		fflush(stdout);
		syscall(SYS_exit_group, atoi(argv[2]));
		return 4;
	}
	if (!strcmp(m, "exit") && argc > 2) {
		work(1000);
		printf("exit %s after %ld\n", argv[2], counter);
		exit(atoi(argv[2]));
	}
	if (!strcmp(m, "raw-clone") && argc > 2) {
		long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (pid < 0) {
			perror("sandbox_prog: clone");
			return 1;
		}
		work(1000);
		if (pid == 0) {
			int r = write_file(argv[2], "child.txt", "child\n");
			_exit(r ? 1 : 0);
		}
		int st = 0;
		if (write_file(argv[2], "parent.txt", "parent\n") || waitpid((pid_t)pid, &st, 0) != pid)
			return 1;
		printf("raw-clone: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
		return 0;
	}
	if (!strcmp(m, "glibc-clone") && argc > 2) {
		static char stack[16384] __attribute__((aligned(16)));   /* PTHREAD_STACK_MIN */
		pid_t pid = clone(clone_fn, stack + sizeof(stack), SIGCHLD, argv[2]);
		if (pid < 0) {
			perror("sandbox_prog: clone");
			return 1;
		}
		work(1000);
		int st = 0;
		if (write_file(argv[2], "parent.txt", "parent\n") || waitpid(pid, &st, 0) != pid)
			return 1;
		printf("glibc-clone: child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
		return 0;
	}
	if (!strcmp(m, "tasks") || !strcmp(m, "fork-tasks")) {
		/* fork-tasks: two threads of the program, then a fork child does it */
		pthread_t th[2];
		int nth = !strcmp(m, "fork-tasks") ? 2 : 0;
		for (int i = 0; i < nth; i++)
			pthread_create(&th[i], NULL, spin, NULL);
		work(100);
		pid_t pid = nth ? fork() : 0;
		if (pid == 0) {
			printf("%s: tasks %d, unshare(CLONE_NEWUSER) %s\n", m, tasks(),
			       unshare(CLONE_NEWUSER) == 0 ? "ok" : strerror(errno));
			fflush(stdout);
			if (nth)
				_exit(0);
		} else {
			int st;
			waitpid(pid, &st, 0);
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < nth; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	return 2;
}
