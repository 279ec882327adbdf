/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core_prog.c - target program of tests/core: one shut-down path per mode.
 * Regions are recorded through the weak test hooks of
 * libtracer_coretest.so (absent: the program runs the same, untraced).
 * Output is deterministic so traced and untraced runs can be compared.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern void tracer_test_enter(const char *name) __attribute__((weak));
extern void tracer_test_leave(const char *name) __attribute__((weak));
extern void tracer_test_thread_begin(void) __attribute__((weak));
extern void tracer_test_thread_end(void) __attribute__((weak));
extern void tracer_test_exit_inside(int status) __attribute__((weak));

static void enter(const char *n)
{
	if (tracer_test_enter)
		tracer_test_enter(n);
}

static void leave(const char *n)
{
	if (tracer_test_leave)
		tracer_test_leave(n);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void work(int n)
{
	for (int i = 0; i < n; i++) {
		enter("outer");
		enter("inner");
		leave("inner");
		enter("filtered_me");
		leave("filtered_me");
		leave("outer");
	}
}

static volatile int stop;

/* Runs before every shared library constructor (libtracer's included): the
 * tracer must initialise itself lazily on the first call. */
static void early(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	for (char **e = envp; e && *e; e++)
		if (!strcmp(*e, "CORE_PREINIT=1")) {
			enter("preinit");
			leave("preinit");
		}
}
__attribute__((section(".preinit_array"), used)) static void (*const early_p)(int, char **, char **) = early;

static volatile int spinning;

static void *spinner(void *a)
{
	(void)a;
	while (!stop) {
		enter("spin");
		work(1);
		leave("spin");
		spinning = 1;
	}
	return NULL;
}

/* a thread recording events until the end; returns once it did some */
static void start_spinner(pthread_t *t)
{
	pthread_create(t, NULL, spinner, NULL);
	for (int i = 0; i < 5000 && !spinning; i++)
		msleep(1);
	msleep(5);
}

static void *worker(void *a)
{
	if (tracer_test_thread_begin)
		tracer_test_thread_begin();
	work((int)(long)a);
	if (tracer_test_thread_end)
		tracer_test_thread_end();
	return NULL;
}

static void *leaf(void *a)
{
	work(5);
	return a;
}

/* short threads joined so far (churn) */
static volatile int joined;

/* creates and joins short threads until the process ends */
static void *spawner(void *a)
{
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, NULL, leaf, NULL) == 0 && pthread_join(t, NULL) == 0)
			__atomic_add_fetch(&joined, 1, __ATOMIC_SEQ_CST);
	}
	return a;
}

static void *exiter(void *a)
{
	(void)a;
	enter("exiter");
	msleep(5);
	exit(7);
}

static volatile sig_atomic_t got;

static void h_return(int s)
{
	got = s;
}

static void h_exit(int s)
{
	static const char m[] = "handler\n";
	(void)s;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(99);
	exit(42);
}

/* malloc_storm READY: the file created once both threads storm */
static const char *storm_ready;
static volatile int storm_started;

/* malloc/free of sizes beyond the thread cache (arena lock, mmap) forever */
static void *storm(void *arg)
{
	unsigned x = (unsigned)(long)arg * 2654435761u + 1;
	void *keep[16] = { 0 };
	enter("storm");
	if (__atomic_add_fetch(&storm_started, 1, __ATOMIC_SEQ_CST) == 2 && storm_ready) {
		int fd = open(storm_ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
	}
	for (;;) {
		x = x * 1103515245u + 12345u;
		unsigned i = (x >> 8) % 16;
		free(keep[i]);
		size_t n = 2048 + (x >> 4) % (x & 1 ? 200000 : 30000);
		keep[i] = malloc(n);
		if (keep[i])
			((volatile char *)keep[i])[0] = 1;
	}
	return NULL;
}

/* stack overflow: the crash handler needs the alternate stack */
static int recurse(int n)
{
	volatile char buf[256];
	buf[0] = (char)n;
	if (n == -1)
		return 0;   /* never: keeps -Winfinite-recursion quiet */
	return recurse(n + 1) + buf[0];   /* not a tail call */
}

/* several threads crash at the same moment */
static pthread_barrier_t crash_bar;
static int *volatile null_ptr;

static void *crasher(void *a)
{
	if (tracer_test_thread_begin)
		tracer_test_thread_begin();
	work((int)(long)a);
	enter("crashing");
	pthread_barrier_wait(&crash_bar);
	*null_ptr = 1;
	return NULL;
}

/* many threads recording at once: every location flushes */
static pthread_barrier_t wide_bar;
static int wide_n;

static void *wide_worker(void *a)
{
	if (tracer_test_thread_begin)
		tracer_test_thread_begin();
	work(wide_n);
	pthread_barrier_wait(&wide_bar);
	if (tracer_test_thread_end)
		tracer_test_thread_end();
	return a;
}

static void qe_handler(void)
{
	enter("qe_handler");
	printf("at_quick_exit handler\n");
	leave("qe_handler");
}

static int signum(const char *s)
{
	if (!strcmp(s, "INT")) return SIGINT;
	if (!strcmp(s, "TERM")) return SIGTERM;
	if (!strcmp(s, "HUP")) return SIGHUP;
	return atoi(s);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "basic";
	pthread_t t[4];

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("mode %s\n", m);
	if (!strcmp(m, "basic")) {
		enter("main_work");
		work(10);
		leave("main_work");
		return 3;
	}
	if (!strcmp(m, "exit_inside")) {       /* exit() while the tracer holds a lock */
		enter("main_work");
		work(3);
		if (tracer_test_exit_inside)
			tracer_test_exit_inside(6);
		exit(6);
	}
	if (!strcmp(m, "many")) {              /* a fixed, large number of events */
		enter("main_work");
		work(argc > 2 ? atoi(argv[2]) : 1000);
		leave("main_work");
		return 0;
	}
	if (!strcmp(m, "churn")) {             /* exit while threads come and go */
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, spawner, NULL);
		/* at least 20 short threads joined (the archive must have them
		 * all), whatever the machine's load: a fixed sleep saw none run */
		for (int i = 0; i < 30000 && joined < 20; i++)
			msleep(1);
		msleep(10);
		if (argc > 2)
			_exit(3);
		return 3;
	}
	if (!strcmp(m, "malloc_storm")) {     /* killed by the parent (SIGTERM) */
		storm_ready = argc > 2 ? argv[2] : NULL;
		pthread_create(&t[0], NULL, storm, (void *)1L);
		storm((void *)2L);
	}
	if (!strcmp(m, "chdir")) {             /* relative TRACER_OUTPUT, then chdir */
		if (chdir("/"))
			return 1;
		work(3);
		return 0;
	}
	if (!strcmp(m, "quick_exit")) {        /* at_quick_exit handler, then the archive */
		at_quick_exit(qe_handler);
		enter("main_work");
		work(2);
		quick_exit(11);
	}
	if (!strcmp(m, "daemon")) {            /* daemon DONEFILE: the child records on */
		enter("before_daemon");
		work(2);
		if (daemon(1, 0) != 0)
			return 1;
		work(3);
		leave("before_daemon");
		FILE *f = fopen(argc > 2 ? argv[2] : "daemon_done", "w");
		if (f)
			fclose(f);
		return 4;
	}
	if (!strcmp(m, "exec_fail")) {         /* failed execs: the run goes on */
		char *av[] = { argv[0], "basic", NULL };
		enter("before_exec");
		work(1);
		execv("/nonexistent/prog", av);
		printf("execv: %s\n", strerror(errno));
		execvp("no-such-program-tracer-test", av);
		printf("execvp: %s\n", strerror(errno));
		execl("/etc/hostname", "x", (char *)NULL);   /* not executable */
		printf("execl: %s\n", strerror(errno));
		execl("/dev/null", "x", (char *)NULL);       /* not a regular file */
		printf("execl: %s\n", strerror(errno));
		execv("./badinterp.sh", av);                  /* #! interpreter missing */
		printf("execv: %s\n", strerror(errno));
		execv("./foreign.elf", av);                   /* ELF of another machine */
		printf("execv: %s\n", strerror(errno));
		execv("./noldso.elf", av);                    /* ELF whose ld.so is missing */
		printf("execv: %s\n", strerror(errno));
		size_t big = 200000;                         /* E2BIG: one string > 128 KiB */
		char *huge = malloc(big + 1);
		if (huge) {
			memset(huge, 'x', big);
			huge[big] = 0;
			char *hv[] = { argv[0], huge, NULL };
			execv("/proc/self/exe", hv);
			printf("execv: %s\n", strerror(errno));
			free(huge);
		}
		work(2);
		leave("before_exec");
		return 8;
	}
	if (!strcmp(m, "threads_stop")) {     /* threads_stop N: stopped in nested regions */
		int n = argc > 2 ? atoi(argv[2]) : 1000;
		wide_n = n;
		pthread_barrier_init(&wide_bar, NULL, 3);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, wide_worker, NULL);
		enter("main_work");
		enter("level1");
		work(n);
		leave("level1");
		enter("level1b");
		enter("level2");
		pthread_barrier_wait(&wide_bar);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;   /* main_work, level1b, level2 open at exit */
	}
	if (!strcmp(m, "wide")) {              /* wide THREADS N: all alive together */
		int nt = argc > 2 ? atoi(argv[2]) : 8;
		pthread_t *w = calloc((size_t)nt, sizeof(*w));
		wide_n = argc > 3 ? atoi(argv[3]) : 1000;
		pthread_barrier_init(&wide_bar, NULL, (unsigned)nt + 1);
		for (int i = 0; i < nt; i++)
			pthread_create(&w[i], NULL, wide_worker, NULL);
		pthread_barrier_wait(&wide_bar);
		FILE *f = fopen("/dev/null", "r");   /* the program's own descriptor */
		printf("open %s\n", f ? "ok" : "failed");
		for (int i = 0; i < nt; i++)
			pthread_join(w[i], NULL);
		return 0;
	}
	if (!strcmp(m, "threads")) {
		for (long i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, worker, (void *)(i + 2));
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		work(1);
		if (argc > 2 && !strcmp(argv[2], "abort"))
			abort();    /* ended threads' data (kept in memory) by the crash path */
		if (argc > 2 && !strcmp(argv[2], "fork")) {
			pid_t p = fork();   /* the child must not write the parent's threads */
			if (p == 0) {
				work(2);
				return 0;
			}
			int st = 0;
			waitpid(p, &st, 0);
			printf("child %d\n", WEXITSTATUS(st));
		}
		return 0;
	}
	if (!strcmp(m, "running")) {           /* thread inside a region at exit */
		start_spinner(&t[0]);
		enter("main_exit");
		return 5;                       /* main_exit left open too */
	}
	if (!strcmp(m, "thread_exit")) {      /* exit() from another thread */
		pthread_create(&t[0], NULL, exiter, NULL);
		enter("join");
		pthread_join(t[0], NULL);
		return 1;
	}
	if (!strcmp(m, "_exit") || !strcmp(m, "_Exit")) {
		start_spinner(&t[0]);
		enter("before_exit");
		if (m[1] == 'e')
			_exit(9);
		_Exit(10);
	}
	if (!strcmp(m, "signal")) {           /* signal NAME default|return|exit */
		int sig = signum(argc > 2 ? argv[2] : "TERM");
		const char *how = argc > 3 ? argv[3] : "default";
		if (!strcmp(how, "return"))
			signal(sig, h_return);
		else if (!strcmp(how, "exit")) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = h_exit;
			sigaction(sig, &sa, NULL);
		}
		start_spinner(&t[0]);
		enter("signalled");
		kill(getpid(), sig);
		msleep(10);
		leave("signalled");
		stop = 1;
		pthread_join(t[0], NULL);
		printf("survived %d\n", (int)got);
		return 0;
	}
	if (!strcmp(m, "abort") || !strcmp(m, "segv")) {
		start_spinner(&t[0]);
		enter("crashing");
		if (argc > 2)
			work(atoi(argv[2]));   /* (stop mode: fill the buffer first) */
		if (argc > 3)
			msleep(atoi(argv[3])); /* (the spinner runs on: samples) */
		if (m[0] == 'a')
			abort();
		*(volatile int *)(long)(argc - 2) = 1;   /* argc == 2: NULL */
		return 0;
	}
	if (!strcmp(m, "stack_overflow")) {
		work(3);
		enter("crashing");
		return recurse(0);
	}
	if (!strcmp(m, "small_altstack")) {  /* a stack overflow on a program's own 16 KiB */
		static char alt[16384];      /* alternate stack (Rust's threads: SIGSTKSZ) */
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
		if (sigaltstack(&ss, NULL))
			return 2;
		work(3);
		enter("crashing");
		return recurse(0);
	}
	if (!strcmp(m, "crash_threads")) {   /* 5 threads SIGSEGV at once */
		pthread_barrier_init(&crash_bar, NULL, 5);
		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, crasher, (void *)(i + 2));
		crasher((void *)1L);
		return 0;
	}
	if (!strcmp(m, "exec")) {
		enter("before_exec");
		work(2);
		execl("/proc/self/exe", argv[0], "basic", (char *)NULL);
		perror("execl");
		return 99;
	}
	if (!strcmp(m, "fork")) {
		enter("before_fork");
		pid_t p = fork();
		if (p == 0) {
			pthread_create(&t[0], NULL, worker, (void *)3L);
			pthread_join(t[0], NULL);
			work(4);
			leave("before_fork");
			return 4;
		}
		int st = 0;
		waitpid(p, &st, 0);
		leave("before_fork");
		printf("child %d\n", WEXITSTATUS(st));
		return 0;
	}
	fprintf(stderr, "unknown mode %s\n", m);
	return 2;
}
