/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - start-up (constructor or lazy), exit paths (on_exit, _exit,
 * _Exit, exec family) and fork.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tr_int.h"
#include "proctree.h"

extern char **environ;

void tr_threads_init(void);
void tr_archive_discard(char *const envp[]);

/* The arguments glibc passes to our first constructor (NULL when tr_init
 * runs before it: a wrapper called from another library's constructor). */
static int ctor_argc;
static char **ctor_argv;

/* argv: a copy of the constructor's, else from /proc/self/cmdline (works
 * before main and for every program). */
static void read_cmdline(void)
{
	static char sbuf[65536] TR_BIG_BSS;
	char *buf = sbuf;
	ssize_t n = 0;
	if (ctor_argv && ctor_argc > 0) {
		size_t len = 0;
		for (int i = 0; i < ctor_argc && ctor_argv[i]; i++)
			len += strlen(ctor_argv[i]) + 1;
		buf = len <= sizeof(sbuf) ? sbuf : NULL;
		for (int i = 0; buf && i < ctor_argc && ctor_argv[i]; i++) {
			size_t l = strlen(ctor_argv[i]) + 1;
			memcpy(buf + n, ctor_argv[i], l);
			n += (ssize_t)l;
		}
	}
	if (!n) {
		buf = sbuf;
		n = tr_read_file("/proc/self/cmdline", buf, sizeof(sbuf));
	}
	int argc = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			argc++;
	if (n > 0 && buf[n - 1] != 0)
		argc++;
	char **argv = tr_calloc((size_t)argc + 1, sizeof(char *));
	if (argv) {
		char *p = buf;
		for (int i = 0; i < argc; i++) {
			argv[i] = p;
			p += strlen(p) + 1;
		}
	}
	tr_proc.argc = argv ? argc : 0;
	tr_proc.argv = argv;
	const char *a0 = argc > 0 && argv ? argv[0] : "";
	const char *base = strrchr(a0, '/');
	snprintf(tr_proc.progname, sizeof(tr_proc.progname), "%.255s", base ? base + 1 : a0);
	if (!tr_proc.progname[0]) {
		char exe[4096];
		ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (l > 0) {
			exe[l] = 0;
			base = strrchr(exe, '/');
			snprintf(tr_proc.progname, sizeof(tr_proc.progname), "%.255s", base ? base + 1 : exe);
		}
	}
}

/* ProgramBegin (name = argv[0], arguments = argv[1..]) on the master
 * location, at now (0: the current time). */
static void program_begin(struct tr_thread *m, uint64_t now)
{
	uint32_t args[256];
	uint32_t n = 0;
	if (!m || !m->w)
		return;
	uint32_t name = tr_def_string(tr_proc.argc > 0 ? tr_proc.argv[0] : tr_proc.progname);
	for (int i = 1; i < tr_proc.argc && n < 256; i++)
		args[n++] = tr_def_string(tr_proc.argv[i]);
	if (!now)
		now = tr_time();
	if (now < tr_g.t_start)
		now = tr_g.t_start;
	/* the first event of the process: ClockProperties.globalOffset */
	tr_g.t_start = now;
	tr_evt_status(m, otf2w_evt_program_begin(m->w, NULL, now, name, n, args));
}

static void tr_on_exit(int status, void *arg)
{
	tr_g.exit_status = status;
	tr_g.have_exit_status = 1;
	tr_finish_status(status, 1);
}

/* quick_exit: the status is kept by the interposed quick_exit; this handler,
 * registered first, runs after the program's at_quick_exit handlers. */
static void tr_on_quick_exit(void)
{
	tr_finish_status(tr_g.exit_status, tr_g.have_exit_status);
}

void tr_atfork_prepare(void)
{
	if (!tr_g.initialized)
		return;
	/* same order as the shut-down (tr_finish_status: tr_g.lock, then
	 * the definitions lock): the other order could deadlock a fork()
	 * racing with exit() on another thread */
	tr_lock(&tr_g.lock);
	tr_lock(tr_defs_lock());
	tr_mem_fork_prepare();   /* innermost: the locks above may allocate */
}

void tr_atfork_parent(void)
{
	if (!tr_g.initialized)
		return;
	tr_mem_fork_parent();
	tr_unlock(tr_defs_lock());   /* reverse order of prepare */
	tr_unlock(&tr_g.lock);
}

static void fork_setup(void);

void tr_atfork_child(void)
{
	if (!tr_g.initialized)
		return;
	/* the locks were held by this thread at fork: reset them */
	tr_mem_fork_child();
	tr_fd_fork_child();
	tr_g.lock.v = 0;
	tr_defs_lock()->v = 0;
	tr_tls_internal -= 2;
	tr_signals_fork_child();
	if (!tr_g.active || tr_g.finishing) {
		tr_g.pid = tr_self_pid();
		tr_g.active = 0;
		tr_live_update();
		return;
	}
	tr_tls_creating++;
	tr_g.pid = tr_self_pid();
	tr_g.fork_child = 1;
	tr_g.t_fork = tr_time();
	/* A part of a tree (no module records in the child at once: a
	 * sampling timer, counters) makes its archive at its first traced
	 * call: a fork child that only execs (a shell's command) makes none,
	 * its part number and live entry only (the exec'd image names the fork
	 * parent as its creator). */
	int defer = !tr_modules_fork_records();
	struct tr_thread *self = tr_tls_self;
	if (tr_archive_fork_child(defer) == 1) {
		tr_g.fork_pending = 1;
		if (self) {
			self->w = NULL;   /* (the parent's) */
			self->state = TR_T_FORKED;
		}
	} else {
		fork_setup();
	}
	/* the modules' resets (their tables and locks describe the parent's
	 * threads) at once, whether the archive waits or not */
	if (tr_g.active)
		tr_modules_fork_child();
	tr_tls_creating--;
}

/* The rest of a fork child's start, after its archive was opened (or
 * waited for): ProgramBegin at the fork's time, the regions open at the
 * fork again. Under tr_tls_creating. */
static void fork_setup(void)
{
	tr_defs_fork_child();
	tr_g.t_start = tr_g.t_fork;
	if (tr_g.active) {
		tr_threads_fork_child();
		struct tr_thread *m = tr_g.master;
		program_begin(m, tr_g.t_fork);
		/* re-open the regions that were open at fork: balanced streams */
		if (m && m->w) {
			uint32_t d = m->depth < TR_SHADOW_DEPTH ? m->depth : TR_SHADOW_DEPTH;
			for (uint32_t i = 0; i < d; i++)
				otf2w_evt_enter(m->w, NULL, tr_g.t_start, m->stack[i]);
			m->depth = d;
		}
		tr_log_debug("fork child: archive %s", tr_g.dir);
	}
}

int tr_fork_complete(void)
{
	if (!tr_g.fork_pending || !tr_g.active || tr_g.finishing || tr_g.pid != tr_self_pid())
		return 0;
	tr_g.fork_pending = 0;
	tr_tls_creating++;
	tr_archive_fork_open();
	fork_setup();
	tr_tls_creating--;
	return tr_g.active;
}

static void get_hostname(void)
{
	if (gethostname(tr_proc.hostname, sizeof(tr_proc.hostname) - 1) != 0 || !tr_proc.hostname[0])
		snprintf(tr_proc.hostname, sizeof(tr_proc.hostname), "localhost");
	tr_proc.hostname[sizeof(tr_proc.hostname) - 1] = 0;
}

/* A program that links the preload/ objects without ctor.c (the
 * white-box tests, tests/core/unit_test.c) called tr_init_tool: nothing
 * starts by itself. */
static int tool_mode;

void tr_init_tool(void)
{
	tool_mode = 1;
	tr_mem_init();   /* the white-box tests call the core's functions */
	tr_real_init();
}

/* MPI launchers and their helper daemons (Open MPI: mpirun starts one per
 * node, a singleton MPI_Init starts one too; MPICH: Hydra's proxy) inherit
 * LD_PRELOAD: never traced, never a member of a process tree. A launcher
 * run under the tracer (`tracer-run mpirun ...`, a traced script that
 * starts mpirun) so leaves the run to its ranks: one archive of them, as
 * with `mpirun tracer-run ...`. */
int tr_launcher_helper_name(const char *name)
{
	static const char *const names[] = { "orted", "prted", "prte", "prterun", "hydra_pmi_proxy", "mpirun",
					     "mpiexec", "orterun", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
					     "mpiexec.mpich", "mpiexec.hydra", NULL };
	for (int i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static int launcher_helper(void)
{
	return tr_launcher_helper_name(tr_proc.progname);
}

void tr_init(void)
{
	if (tool_mode)
		return;
	if (tr_g.initialized || __atomic_exchange_n(&tr_g.initializing, 1, __ATOMIC_SEQ_CST))
		return;
	int saved = errno;
	tr_tls_creating++;
	tr_mem_init();
	tr_real_init();
	tr_cfg_load();
	tr_log_init();
	get_hostname();
	read_cmdline();
	if (launcher_helper()) {
		tr_g.initialized = 1;   /* inactive: every wrapper passes through */
		tr_tls_creating--;
		tr_g.initializing = 0;
		errno = saved;
		return;
	}
	/* A termination signal from here until our handler is installed and
	 * ProgramBegin written stays pending (then the handler writes the
	 * archive, and the program dies of it as untraced): the tracer's files
	 * are made in between, and a kill there left a half-made directory
	 * (an empty DIR, a tree's registry without any part) that tracer
	 * recover could not use. Also: the handler never writes a ProgramEnd
	 * as the master's first event, which no reader accepts
	 * (real.soak_startup). */
	sigset_t old_mask;
	tr_signals_block(&old_mask);
	tr_clock_init();
	tr_g.pid = tr_self_pid();
	tr_g.t_start = tr_time();
	tr_g.next_index = 1;
	tr_defs_init();
	tr_filter_load();
	tr_threads_init();
	if (tr_archive_prepare() == 0)
		tr_g.active = 1;
	tr_live_update();
	on_exit(tr_on_exit, NULL);
	at_quick_exit(tr_on_quick_exit);
	pthread_atfork(tr_atfork_prepare, tr_atfork_parent, tr_atfork_child);
	if (tr_g.active)
		tr_crash_stack_init();
	tr_signals_init();
	tr_g.initialized = 1;
	if (tr_g.active) {
		struct tr_thread *m = tr_thread_create_current(1, 0);
		program_begin(m, 0);
		tr_log_debug("tracing %s (pid %d) into %s, clock %s %llu Hz", tr_proc.progname, (int)tr_self_pid(),
			     tr_g.dir, tr_clock_is_tsc ? "tsc" : "monotonic",
			     (unsigned long long)tr_clock_resolution());
	}
	tr_signals_restore(&old_mask);
	tr_tls_creating--;
	tr_g.initializing = 0;
	errno = saved;
}

void tr_init_ctor(int argc, char **argv)
{
	ctor_argc = argc;
	ctor_argv = argv;
	tr_init();
}

/* ---- sanitizers: ASan/TSan end the process after a report (a SEGV
 * included) through an internal exit; their death callback writes the
 * archive first, with the sanitizer's exit code. ---- */
static int tr_san_exitcode = 1;
void (*tr_tsan_acquire)(void *), (*tr_tsan_release)(void *);

static void tr_on_sanitizer_death(void)
{
	tr_emergency_exit(tr_san_exitcode, "sanitizer report");
}

static void sanitizer_hook(void)
{
	void (*set_cb)(void (*)(void)) =
		(void (*)(void (*)(void)))tr_sym_default("__sanitizer_set_death_callback");
	if (!set_cb)
		return;
	int tsan = tr_sym_default("__tsan_init") != NULL;
	if (tsan) {
		/* our futex locks and hand-overs, told to ThreadSanitizer (tr_int.h) */
		tr_tsan_acquire = (void (*)(void *))tr_sym_default("__tsan_acquire");
		tr_tsan_release = (void (*)(void *))tr_sym_default("__tsan_release");
	}
	const char *o = tr_getenv(tsan ? "TSAN_OPTIONS" : "ASAN_OPTIONS");
	const char *e = o ? strstr(o, "exitcode=") : NULL;
	tr_san_exitcode = e ? atoi(e + 9) : tsan ? 66 : 1;
	set_cb(tr_on_sanitizer_death);
}

void tr_init_modules(void)
{
	tr_modules_start();
	if (tr_g.active)
		sanitizer_hook();
	tr_real_startup_done();
}

/* main() wrapper: on_exit registered from inside main runs before the
 * libraries' destructors (_dl_fini was registered before main), so the
 * archive gets ProgramEnd with the exit status of return-from-main and exit(). */
typedef int (*tr_main_fn)(int, char **, char **);
static tr_main_fn tr_real_main;

static int tr_main(int argc, char **argv, char **envp)
{
	on_exit(tr_on_exit, NULL);
	return tr_real_main(argc, argv, envp);
}

TR_EXPORT int __libc_start_main(tr_main_fn main, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	static int (*real)(tr_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
	static const struct tr_real_sym sym = { (void **)&real, "__libc_start_main", NULL };
	tr_real_resolve(&sym, 1);
	tr_real_main = main;
	return real(tr_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* Fallback for paths that skip on_exit (none known; cheap). */
__attribute__((destructor)) static void tr_dtor(void)
{
	tr_finish_status(tr_g.exit_status, tr_g.have_exit_status);
}

/* ---- _exit / _Exit: write the archive first ---- */

static __attribute__((noreturn)) void exit_now(void (*real)(int), int status)
{
	if (real)
		real(status);
	tr_syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

TR_EXPORT void _exit(int status)
{
	TR_REAL_INIT(_exit);
	tr_finish_status(status, 1);
	exit_now(tr_real._exit, status);
}

TR_EXPORT void _Exit(int status)
{
	TR_REAL_INIT(_Exit);
	tr_finish_status(status, 1);
	exit_now(tr_real._Exit, status);
}

/* glibc's quick_exit ends through an internal _exit: the archive is written
 * by tr_on_quick_exit, after the program's at_quick_exit handlers. */
TR_EXPORT void quick_exit(int status)
{
	TR_REAL_INIT(quick_exit);
	if (!tr_g.finishing) {
		tr_g.exit_status = status;
		tr_g.have_exit_status = 1;
	}
	if (tr_real.quick_exit)
		tr_real.quick_exit(status);
	tr_finish_status(status, 1);
	exit_now(NULL, status);
}

/* glibc's daemon() ends the parent through an internal _exit that skips
 * ours: the same steps here, so the parent writes its archive (as _exit
 * does) and the child records into its fork archive (as after fork). */
TR_EXPORT int daemon(int nochdir, int noclose)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		TR_REAL_INIT(_exit);
		tr_finish_status(0, 1);
		exit_now(tr_real._exit, 0);
	}
	if (setsid() < 0)
		return -1;
	if (!nochdir && chdir("/") != 0)
		return -1;
	if (!noclose) {
		int fd = tr_real.open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -1;
		tr_real.dup2(fd, 0);
		tr_real.dup2(fd, 1);
		tr_real.dup2(fd, 2);
		if (fd > 2)
			tr_real.close(fd);
	}
	return 0;
}

/* ---- exec family: the archive is complete before the new image starts ---- */

/* Would execve(path) start a new image? Checked before the archive is
 * written, so that an exec that fails leaves tracing on: no such file, not
 * a regular executable file, a #! interpreter or an ELF program interpreter
 * (ld.so) that does not exist, an ELF of another machine, neither ELF nor
 * #! (ENOEXEC). sh: execvp semantics (on ENOEXEC it runs the file with
 * /bin/sh, so only a missing interpreter fails). */
#if defined(__x86_64__)
#define TR_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define TR_ELF_MACHINE EM_AARCH64
#endif

static int interp_ok(const char *p, size_t n)
{
	char path[256];
	if (n == 0 || n >= sizeof(path))
		return n != 0;   /* too long to check here: let the kernel decide */
	memcpy(path, p, n);
	path[n] = 0;
	return access(path, F_OK) == 0;
}

static int elf_would_run(int fd, const unsigned char *h, ssize_t n, int sh)
{
#ifdef TR_ELF_MACHINE
	Elf64_Ehdr eh;
	if (n < (ssize_t)sizeof(eh))
		return sh;
	memcpy(&eh, h, sizeof(eh));
	if (h[EI_CLASS] != ELFCLASS64 || eh.e_machine != TR_ELF_MACHINE)
		return sh;   /* ENOEXEC (execvp: /bin/sh runs it) */
	for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
		Elf64_Phdr ph;
		if (tr_real.pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != (ssize_t)sizeof(ph))
			return 1;
		if (ph.p_type != PT_INTERP)
			continue;
		char ip[256];
		size_t l = ph.p_filesz < sizeof(ip) ? (size_t)ph.p_filesz : sizeof(ip);
		if (tr_real.pread(fd, ip, l, (off_t)ph.p_offset) != (ssize_t)l)
			return 1;
		return interp_ok(ip, strnlen(ip, l));
	}
#else
	(void)fd; (void)h; (void)n; (void)sh;
#endif
	return 1;
}

static int exec_would_run(const char *path, int sh)
{
	struct stat st;
	if (!path || !*path || tr_real.stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0)
		return 0;
	unsigned char head[256];
	int fd = tr_real.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 1;   /* execute-only: let the kernel decide */
	ssize_t n = tr_real.read(fd, head, sizeof(head));
	int ok = sh;
	if (n >= 2 && head[0] == '#' && head[1] == '!') {
		const char *b = (const char *)head + 2, *e = (const char *)head + n;
		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		const char *x = b;
		while (x < e && *x != ' ' && *x != '\t' && *x != '\n')
			x++;
		ok = x < e ? interp_ok(b, (size_t)(x - b)) : 1;
	} else if (n >= 4 && !memcmp(head, ELFMAG, SELFMAG)) {
		ok = elf_would_run(fd, head, n, sh);
	}
	tr_real.close(fd);
	return ok;
}

/* E2BIG: the strings of argv and envp must fit the kernel's limits. */
static int args_fit(char *const argv[], char *const envp[])
{
	long max = sysconf(_SC_ARG_MAX);
	size_t total = 0;
	for (int k = 0; k < 2; k++)
		for (char *const *a = k ? envp : argv; a && *a; a++) {
			size_t l = strlen(*a) + 1;
			if (l > 32 * 4096)   /* MAX_ARG_STRLEN */
				return 0;
			total += l + sizeof(char *);
		}
	return max <= 0 || total <= (size_t)max;
}

/* PATH now (the program may have changed it since start-up). */
static const char *tr_exec_path(void)
{
	return getenv("PATH");
}

/* execvp's search: the first PATH entry that holds an executable file. */
static int execvp_would_run(const char *file, const char *path_env)
{
	if (!file || !*file)
		return 0;
	if (strchr(file, '/'))
		return exec_would_run(file, 1);
	const char *p = path_env ? path_env : "/bin:/usr/bin";
	char buf[4096];
	size_t fl = strlen(file);
	for (;;) {
		const char *e = strchr(p, ':');
		size_t dl = e ? (size_t)(e - p) : strlen(p);
		if (dl + fl + 2 <= sizeof(buf)) {
			if (dl)
				memcpy(buf, p, dl);
			else
				buf[dl++] = '.';   /* empty entry: the working directory */
			buf[dl] = '/';
			memcpy(buf + dl + 1, file, fl + 1);
			if (exec_would_run(buf, 1))
				return 1;
		}
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* 1 when an exec of this process ends a traced image (not in a vfork
 * child, not when not tracing: there nothing is touched, not even the
 * file to exec, which would_run opens) */
static int exec_traced(void)
{
	return tr_g.initialized && tr_g.active && !tr_g.finishing && tr_g.pid == tr_self_pid();
}

/* (after exec_traced) */
static int tr_exec_prepare(int would_run, char *const envp[])
{
	if (!would_run)
		return 0;   /* the exec fails: tracing goes on */
	struct tr_thread *m = tr_g.master;
	int pending = tr_g.fork_pending;
	if (pending || (tr_g.fork_child && tr_g.nthreads == 1 && m && m->w &&
			otf2w_evt_writer_count(m->w) <= 1 + (uint64_t)m->depth)) {
		/* fork + exec with nothing recorded in between: no archive (a
		 * child whose archive waited made none: what is in memory is the
		 * parent's, left alone; only its live entry is handed on) */
		tr_g.finishing = 1;
		tr_live_update();
		if (pending)
			tr_tree_discard(envp);
		else
			tr_archive_discard(envp);
		tr_g.active = 0;
		tr_g.finished = 1;
		return 1;
	}
	tr_log_notices_to_file();   /* not the end of the process: no summary on stderr */
	tr_tree.exec = 1;           /* the new image goes on in the process tree */
	tr_finish_status(0, 1);
	return 1;
}

/* An exec returned r (it failed): with the archive written before it (was),
 * the process tree and a warning are told; errno kept. Returns r. */
static int tr_exec_returned(int was, int r)
{
	int err = errno;
	if (was)
		tr_tree_exec_failed();
	if (was)
		tr_log_warn("exec failed (%s) after the archive was written; the rest of this process is not "
			    "traced", strerror(err));
	errno = err;
	return r;
}

static int exec_ve(const char *path, char *const argv[], char *const envp[])
{
	TR_REAL_INIT(execve);
	int was = exec_traced() && tr_exec_prepare(exec_would_run(path, 0) && args_fit(argv, envp), envp);
	return tr_exec_returned(was, tr_real.execve(path, argv, envp));
}

TR_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_ve(path, argv, envp);
}

static int exec_v(const char *path, char *const argv[])
{
	TR_REAL_INIT(execv);
	int was = exec_traced() && tr_exec_prepare(exec_would_run(path, 0) && args_fit(argv, environ), environ);
	return tr_exec_returned(was, tr_real.execv(path, argv));
}

TR_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_v(path, argv);
}

static int exec_vp(const char *file, char *const argv[])
{
	TR_REAL_INIT(execvp);
	int was = exec_traced() &&
		  tr_exec_prepare(execvp_would_run(file, tr_exec_path()) && args_fit(argv, environ), environ);
	return tr_exec_returned(was, tr_real.execvp(file, argv));
}

TR_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_vp(file, argv);
}

TR_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	TR_REAL_INIT(execvpe);
	int was = exec_traced() && tr_exec_prepare(execvp_would_run(file, tr_exec_path()) && args_fit(argv, envp), envp);
	return tr_exec_returned(was, tr_real.execvpe(file, argv, envp));
}

TR_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	TR_REAL_INIT(fexecve);
	int was = exec_traced() && tr_exec_prepare(1, envp);
	return tr_exec_returned(was, tr_real.fexecve(fd, argv, envp));
}

/* execl, execlp, execle: collect the variadic arguments, then the v form
 * (exec_v & co.: never through the exported names). */
#define TR_COLLECT_ARGS(first, av)                                   \
	va_list ap;                                                  \
	size_t n = 1;                                                \
	va_start(ap, first);                                         \
	while (va_arg(ap, char *))                                   \
		n++;                                                 \
	va_end(ap);                                                  \
	char **av = alloca((n + 1) * sizeof(char *));                \
	av[0] = (char *)first;                                       \
	va_start(ap, first);                                         \
	for (size_t i = 1; i < n; i++)                               \
		av[i] = va_arg(ap, char *);                          \
	av[n] = NULL;                                                \
	(void)va_arg(ap, char *)

TR_EXPORT int execl(const char *path, const char *arg, ...)
{
	TR_COLLECT_ARGS(arg, av);
	va_end(ap);
	return exec_v(path, av);
}

TR_EXPORT int execlp(const char *file, const char *arg, ...)
{
	TR_COLLECT_ARGS(arg, av);
	va_end(ap);
	return exec_vp(file, av);
}

TR_EXPORT int execle(const char *path, const char *arg, ...)
{
	TR_COLLECT_ARGS(arg, av);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return exec_ve(path, av, envp);
}
