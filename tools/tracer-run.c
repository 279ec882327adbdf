/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer-run.c - runs a program (and every program it starts) with
 * libtracer.so preloaded, waits for its whole process tree, then prints the
 * run's exit summary once and ends exactly as the program did (same exit
 * status, same signal death).
 *
 *   tracer-run [options] [--] PROGRAM [ARGS...]
 *
 * - The output path (-o or TRACER_OUTPUT, else ./tracer-<prog>-<date>-<pid>)
 *   is made absolute once, so children that change directory write to the
 *   same place.
 * - TRACER_LAUNCHER=<dir>/tracer.log tells the traced processes to append
 *   their summary and notices to that file instead of the program's stderr;
 *   tracer-run reads it when the tree has ended (prctl
 *   PR_SET_CHILD_SUBREAPER: orphaned descendants are reparented to it).
 * - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT,
 *   SIGWINCH sent to tracer-run are forwarded to the program (not those the
 *   terminal sent to the whole foreground group: the program got them too).
 * - A program that cannot be traced (statically linked, setuid/setgid for
 *   another user, another architecture) is said so in one line and runs
 *   unchanged.
 * - Under an MPI launcher (rank in the environment) it only sets the
 *   environment and execs: the ranks agree on their archive themselves.
 * - Process tree (TRACER_TREE=one, the default): every process writes its
 *   part into DIR/procs; when the whole tree has ended, tracer-run runs
 *   tracer-merge --final DIR (next to itself) to make the one archive
 *   DIR/traces.otf2 and prints its line (processes, locations, events,
 *   bytes, seconds spent unifying). TRACER_DURABLE: tracer-merge first
 *   recovers the parts of processes that were killed (SIGKILL, OOM
 *   killer); the line then says "recovered" and how many were killed.
 * - tracer-run killed (SIGKILL): the program gets SIGKILL too (its
 *   PR_SET_PDEATHSIG, set before exec), as `kill -KILL` of an untraced
 *   program's pid ends the program; a watcher process (forked before the
 *   program, outside its tree) then waits for the tree's last process and
 *   recovers and unifies the archive, its line on stderr (watch_start).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "recover.h"
#include "fsutil.h"

static void usage(FILE *f)
{
	fputs("usage: tracer-run [options] [--] PROGRAM [ARGS...]\n"
	      "\n"
	      "Records PROGRAM and every program it execs, forks or spawns into one\n"
	      "OTF2 3.0 archive DIR/traces.otf2 (read it with otf2-print, Vampir, ViTE):\n"
	      "one location group per process image, linked to its creator. Prints one\n"
	      "summary line when the whole process tree has ended; ends like PROGRAM.\n"
	      "\n"
	      "options (each sets the TRACER_* variable shown):\n"
	      "  -o, --output DIR        archive directory (TRACER_OUTPUT; default\n"
	      "                          ./tracer-<prog>-<date>-<time>-<pid>, never overwritten)\n"
	      "  --buffer SIZE           trace memory per thread, e.g. 16M, 512K, 1G (TRACER_BUFFER, 16M)\n"
	      "  --chunk SIZE            chunk size 256K..16M (TRACER_CHUNK, 1M)\n"
	      "  --on-full flush|stop    when a thread's buffer is full (TRACER_ON_FULL, flush)\n"
	      "  --no-pthread            do not record pthread calls (TRACER_PTHREAD=off)\n"
	      "  --no-io                 do not record file I/O (TRACER_IO=off)\n"
	      "  --no-mpi                do not record MPI calls (TRACER_MPI=off)\n"
	      "  --no-openmp             do not record OpenMP constructs (TRACER_OPENMP=off)\n"
	      "  --filter FILE           region filter file (TRACER_FILTER): one name or glob\n"
	      "                          per line, -name/exclude name, +name/include name\n"
	      "  --clock tsc|monotonic   time source (TRACER_CLOCK, tsc where invariant)\n"
	      "  -v, --verbose           debug messages (TRACER_VERBOSE=2)\n"
	      "  -q, --quiet             no messages except errors (TRACER_VERBOSE=0)\n"
	      "  --sampling PERIOD       call-stack sampling, e.g. 1ms, 1000Hz (TRACER_SAMPLING)\n"
	      "  --sampling-depth N      unwinding depth (TRACER_SAMPLING_DEPTH, 64)\n"
	      "  --sampling-unwind W     stack walk: cfi, libunwind, check (TRACER_SAMPLING_UNWIND, cfi)\n"
	      "  --callers               the calling context of every traced call, unwound\n"
	      "                          (TRACER_CALLERS=on; about 0.1 us a call)\n"
	      "  --metrics LIST          PAPI/rusage metrics, comma separated (TRACER_METRICS)\n"
	      "  --detailed-states N     VT detailed-states level (TRACER_DETAILED_STATES, 0)\n"
	      "  --separate              one archive per process (DIR, DIR.1, DIR-fork<pid>;\n"
	      "                          TRACER_TREE=separate; default: one, the whole tree)\n"
	      "  --lib PATH              libtracer.so to use (else TRACER_LIB, else the one\n"
	      "                          installed with this program: " TR_BIN_TO_LIB "/libtracer.so)\n"
	      "  -h, --help              this text\n"
	      "  --version               the version\n"
	      "\n"
	      "Notices of the traced processes go to DIR/tracer.log.\n",
	      f);
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;
	fputs("tracer-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntracer-run: see tracer-run --help\n", stderr);
	exit(2);
}

/* option -> variable (value options) */
static const struct {
	const char *opt, *var;
} value_opts[] = {
	{ "--buffer", "TRACER_BUFFER" },     { "--chunk", "TRACER_CHUNK" },
	{ "--on-full", "TRACER_ON_FULL" },   { "--filter", "TRACER_FILTER" },
	{ "--clock", "TRACER_CLOCK" },       { "--sampling", "TRACER_SAMPLING" },
	{ "--sampling-depth", "TRACER_SAMPLING_DEPTH" }, { "--metrics", "TRACER_METRICS" },
	{ "--sampling-unwind", "TRACER_SAMPLING_UNWIND" },
	{ "--detailed-states", "TRACER_DETAILED_STATES" },
};

static int check_choice(const char *opt, const char *v, const char *a, const char *b)
{
	if (strcmp(v, a) && strcmp(v, b))
		die("%s: '%s' (accepted: %s, %s)", opt, v, a, b);
	return 0;
}

/* ---- locating things ---- */

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void find_lib(char *out, size_t n, const char *given)
{
	char exe[PATH_MAX] = "", c[PATH_MAX + 64];
	if (given && *given) {
		if (!is_file(given))
			die("libtracer.so not found at %s", given);
		if (!realpath(given, out))
			snprintf(out, n, "%s", given);
		return;
	}
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (l > 0) {
		exe[l] = 0;
		char *s = strrchr(exe, '/');
		if (s)
			*s = 0;
		/* the installed tree (BINDIR -> LIBDIR), the build tree (build/bin,
		 * build/lib); never a system-wide one of another version */
		static const char *const rel[] = { TR_BIN_TO_LIB "/libtracer.so", "../lib/libtracer.so" };
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(c, sizeof(c), "%s/%s", exe, rel[i]);
			if (is_file(c) && realpath(c, out))
				return;
		}
	}
	die("libtracer.so not found in %s/%s (build it, or set TRACER_LIB / --lib)", exe, TR_BIN_TO_LIB);
}

/* PROGRAM as execvp would find it ("" if not found). */
static void find_program(const char *prog, char *out, size_t n)
{
	out[0] = 0;
	if (strchr(prog, '/')) {
		snprintf(out, n, "%s", prog);
		return;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *e = strchr(path, ':');
		size_t l = e ? (size_t)(e - path) : strlen(path);
		char c[PATH_MAX];
		snprintf(c, sizeof(c), "%.*s/%s", (int)l, l ? path : ".", prog);
		if (access(c, X_OK) == 0 && is_file(c)) {
			snprintf(out, n, "%s", c);
			return;
		}
		path += l;
		if (*path == ':')
			path++;
	}
}

/* ---- can PROGRAM be traced? NULL if yes, else why not ---- */

static const char *untraceable(const char *path)
{
	static char why[256];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;   /* exec will report it */
	}
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		close(fd);
		snprintf(why, sizeof(why), "is set-%cid (the loader ignores LD_PRELOAD for it)",
			 (st.st_mode & S_ISUID) && st.st_uid != geteuid() ? 'u' : 'g');
		return why;
	}
	Elf64_Ehdr eh;
	unsigned char self[EI_NIDENT + 4];
	int sfd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ssize_t sn = sfd >= 0 ? pread(sfd, self, sizeof(self), 0) : -1;
	if (sfd >= 0)
		close(sfd);
	ssize_t r = pread(fd, &eh, sizeof(eh), 0);
	if (r < EI_NIDENT + 4 || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return NULL;   /* a script: its interpreter is traced */
	}
	uint16_t self_machine = sn >= (ssize_t)sizeof(self) ? (uint16_t)(self[18] | self[19] << 8) : EM_X86_64;
	uint16_t machine = (uint16_t)(((unsigned char *)&eh)[18] | ((unsigned char *)&eh)[19] << 8);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || (sn >= EI_NIDENT && self[EI_CLASS] != eh.e_ident[EI_CLASS]) ||
	    machine != self_machine) {
		close(fd);
		snprintf(why, sizeof(why), "is built for another architecture (ELF machine %u, class %u; "
			 "the tracer's: machine %u, class %u)", machine, eh.e_ident[EI_CLASS], self_machine,
			 sn >= EI_NIDENT ? self[EI_CLASS] : ELFCLASS64);
		return why;
	}
	int interp = 0;
	for (unsigned i = 0; i < eh.e_phnum && i < 4096; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			interp = 1;
	}
	close(fd);
	if (!interp && eh.e_type == ET_EXEC) {
		snprintf(why, sizeof(why), "is statically linked (no dynamic loader to preload libtracer.so)");
		return why;
	}
	if (!interp && eh.e_type == ET_DYN && eh.e_entry != 0) {
		/* static-pie (a shared object without entry point is a library) */
		snprintf(why, sizeof(why), "is statically linked (static-pie: no dynamic loader)");
		return why;
	}
	return NULL;
}

/* ---- signals ---- */

static volatile pid_t child_pid;
static const int fwd_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT, SIGWINCH };

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* the terminal signals the whole foreground group: the program has it */
	if (si && si->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* ---- summary ---- */

static const char *find_num(const char *line, const char *word, unsigned long long *v)
{
	/* "<number><word>" anywhere in line (word starts with a space) */
	const char *p = line;
	size_t wl = strlen(word);
	while ((p = strstr(p, word))) {
		const char *d = p;
		while (d > line && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d < p) {
			*v = strtoull(d, NULL, 10);
			return p + wl;
		}
		p += wl;
	}
	return NULL;
}

/* Reads the run's log: one summary line on stderr. */
static void print_summary(const char *log, const char *dir)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return;
	char line[16384], first[16384] = "";
	unsigned long long procs = 0, locs = 0, events = 0, bytes = 0, v;
	int mpi = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "tracer: archive ", 16))
			continue;
		if (!procs)
			snprintf(first, sizeof(first), "%s", line);
		procs++;
		if (find_num(line, " MPI ranks", &v) && !mpi) {
			mpi = 1;
			snprintf(first, sizeof(first), "%s", line);   /* the run's archive */
		}
		if (find_num(line, " locations", &v))
			locs += v;
		if (find_num(line, " events", &v))
			events += v;
		if (find_num(line, " bytes", &v))
			bytes += v;
	}
	fclose(f);
	if (procs == 1 || mpi)
		fputs(first, stderr);
	else if (procs > 1)
		fprintf(stderr, "tracer: %llu archives (one per process) in %s*: %llu locations, %llu events, "
			"%llu bytes; details in %s\n", procs, dir, locs, events, bytes, log);
}

/* ---- process tree: the unification when every process has ended ---- */

/* Runs tracer-merge --final DIR (output to DIR/procs/tracer-merge.log; it
 * also recovers the parts of processes that were killed, TRACER_DURABLE);
 * prints the run's line unless quiet. 1 when DIR holds a process tree. */
static int unify_tree(const char *dir, int quiet)
{
	char procs[PATH_MAX + 64], log[PATH_MAX + 128], line[PATH_MAX + 512];
	struct stat st;
	snprintf(procs, sizeof(procs), "%s/ranks", dir);
	if (stat(procs, &st) == 0)
		return 0;   /* an MPI launcher run under tracer-run: the ranks' archive is the run's */
	snprintf(procs, sizeof(procs), "%s/procs", dir);
	if (stat(procs, &st) || !S_ISDIR(st.st_mode))
		return 0;
	int rc = tracer_unify_tree(dir, log, sizeof(log), line, sizeof(line));
	if (rc == -2) {
		fprintf(stderr, "tracer: warning: tracer-merge not found next to tracer-run: run tracer-merge %s to get "
			"one archive of the process tree (its parts are in %s)\n", dir, procs);
		return 1;
	}
	if (rc != 0)
		fprintf(stderr, "tracer: error: unifying the process tree in %s failed (see %s); its parts are in %s\n",
			dir, log, procs);
	else if (!quiet || !strncmp(line, "tracer: recovered", 17))
		fputs(line, stderr);
	return 1;
}

/* ---- the watcher ----
 * Forked by tracer-run (twice: no child of it; when tracer-run is a pid
 * namespace's init, a child without exit signal), outside the program's
 * tree: it holds the read end of a
 * pipe whose write end only tracer-run has. At a normal end tracer-run
 * writes a byte and the watcher leaves; end of file without it: tracer-run
 * was killed (SIGKILL: no handler ran). The program got SIGKILL then (its
 * PR_SET_PDEATHSIG); once no process of the tree runs any more, the
 * watcher does what tracer-run would have: recover, unify, one line. It
 * ignores the signals a terminal or a `kill` of the job's group sends (it
 * has its own group), holds no descriptor of the program's but stderr,
 * and reads nothing. */
static int watch_fd = -1;
static pid_t watch_pid;

static void watch_run(int rfd, const char *dir, int quiet)
{
	static const int ign[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
	for (size_t k = 0; k < sizeof(ign) / sizeof(ign[0]); k++)
		signal(ign[k], SIG_IGN);
	setpgid(0, 0);
	prctl(PR_SET_NAME, "tracer-watch", 0, 0, 0);
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
	}
	/* every other descriptor: two calls (a loop of close calls before:
	 * 1,020 system calls in every traced run) */
	if ((rfd > 3 && close_range(3, (unsigned)rfd - 1, 0) != 0) || close_range((unsigned)rfd + 1, ~0u, 0) != 0) {
		for (int fd = 3; fd < 1024; fd++)   /* (a kernel before 5.9) */
			if (fd != rfd)
				close(fd);
	}
	char c;
	ssize_t r;
	while ((r = read(rfd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r == 1)
		_exit(0);   /* tracer-run ended the run itself */
	struct timespec tick = { 0, 100000000 };
	while (tracer_tree_running(dir))
		nanosleep(&tick, NULL);
	int recovered = tracer_recover_dir(dir, stderr) == 0;
	if (!unify_tree(dir, quiet) && !recovered && !quiet)
		fprintf(stderr, "tracer: tracer-run was killed; the archive is in %s\n", dir);
	_exit(0);
}

static void watch_start(const char *dir, int quiet)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return;
	fflush(NULL);
	pid_t w;
	if (getpid() != 1) {
		/* forked twice, before we reap orphans: no child of ours (the
		 * program is tracer-run's one child, as `pgrep -P` shows) */
		w = fork();
		if (w == 0) {
			if (fork() == 0) {
				close(p[1]);
				watch_run(p[0], dir, quiet);
			}
			_exit(0);
		}
		int st;
		if (w > 0 && waitpid(w, &st, 0) == w && WIFEXITED(st) && !WEXITSTATUS(st))
			w = 0;   /* (no child left to reap) */
		else
			w = -1;
	} else {
		/* the init of a pid namespace (a container's): orphans would come
		 * back to us; a child without exit signal (raw clone, no SIGCHLD)
		 * that our wait for the tree (waitpid(-1)) never sees;
		 * watch_done reaps it */
		w = (pid_t)syscall(SYS_clone, 0L, NULL, NULL, NULL, NULL);
		if (w == 0) {
			close(p[1]);
			watch_run(p[0], dir, quiet);
		}
	}
	close(p[0]);
	if (w < 0) {
		close(p[1]);
		return;
	}
	watch_fd = p[1];
	watch_pid = w;
}

/* The run ended under tracer-run's control: the watcher leaves. */
static void watch_done(void)
{
	if (watch_fd >= 0 && write(watch_fd, "d", 1) != 1)
		(void)0;
	if (watch_fd >= 0)
		close(watch_fd);
	watch_fd = -1;
	while (watch_pid > 0 && waitpid(watch_pid, NULL, __WCLONE) < 0 && errno == EINTR)
		;
	watch_pid = 0;
}

/* ---- main ---- */

/* exec failed: the shell's words and statuses (127 not found, 126 else) */
static int exec_failed(const char *prog)
{
	int e = errno;
	fprintf(stderr, "tracer-run: %s: %s\n", prog, strerror(e));
	return e == ENOENT ? 127 : 126;
}

static int mpi_rank_in_env(void)
{
	static const char *const v[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
	for (int i = 0; v[i]; i++)
		if (getenv(v[i]))
			return 1;
	return 0;
}

static void make_output(const char *prog, char *dir, size_t n)
{
	char base[PATH_MAX], cwd[PATH_MAX];
	const char *o = getenv("TRACER_OUTPUT");
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	if (o && *o) {
		snprintf(base, sizeof(base), "%s", o);
	} else {
		const char *b = strrchr(prog, '/');
		tr_default_dir_name(base, sizeof(base), b ? b + 1 : prog);
	}
	size_t l = strlen(base);
	while (l > 1 && base[l - 1] == '/')
		base[--l] = 0;
	char abs[PATH_MAX + 8];
	if (base[0] == '/')
		snprintf(abs, sizeof(abs), "%s", base);
	else
		snprintf(abs, sizeof(abs), "%.2000s/%.2000s", cwd, base);
	snprintf(dir, n, "%s", abs);
}

static int empty_dir(const char *p)
{
	DIR *d = opendir(p);
	if (!d)
		return 0;
	struct dirent *e;
	int empty = 1;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* A fresh directory for this run: DIR, else DIR.1, DIR.2 ... (an existing
 * non-empty directory holds an earlier run). Claimed by creating its
 * tracer.log (the processes' notices, TRACER_LAUNCHER) with O_EXCL: of two
 * runs started together with the same -o, which both find DIR new or
 * empty, one gets it, the other goes on to DIR.1. */
static void claim_dir(char *dir, size_t n)
{
	char c[PATH_MAX + 16], log[PATH_MAX + 32];
	for (int i = 0; i < 10000; i++) {
		if (i == 0)
			snprintf(c, sizeof(c), "%s", dir);
		else
			snprintf(c, sizeof(c), "%.4000s.%d", dir, i);
		if (mkdir(c, 0755) == 0 || (errno == EEXIST && empty_dir(c))) {
			snprintf(log, sizeof(log), "%s/tracer.log", c);
			int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd >= 0) {
				close(fd);
				snprintf(dir, n, "%s", c);
				return;
			}
			if (errno != EEXIST)
				return;   /* the library reports the error */
			continue;     /* another run took it just now */
		}
		if (errno != EEXIST)
			return;   /* the library reports the error */
	}
}

int main(int argc, char **argv)
{
	const char *lib_opt = getenv("TRACER_LIB");
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version")) {
			printf("tracer-run (libtracer) %s\n", TRACER_VERSION);
			return 0;
		}
		if (!strcmp(a, "--no-pthread")) {
			setenv("TRACER_PTHREAD", "off", 1);
			continue;
		}
		if (!strcmp(a, "--no-mpi")) {
			setenv("TRACER_MPI", "off", 1);
			continue;
		}
		if (!strcmp(a, "--no-openmp")) {
			setenv("TRACER_OPENMP", "off", 1);
			continue;
		}
		if (!strcmp(a, "--separate")) {
			setenv("TRACER_TREE", "separate", 1);
			continue;
		}
		if (!strcmp(a, "--no-io")) {
			setenv("TRACER_IO", "off", 1);
			continue;
		}
		if (!strcmp(a, "--callers")) {
			setenv("TRACER_CALLERS", "on", 1);
			continue;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			setenv("TRACER_VERBOSE", "2", 1);
			continue;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			setenv("TRACER_VERBOSE", "0", 1);
			continue;
		}
		const char *var = NULL;
		int is_lib = 0;
		if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			var = "TRACER_OUTPUT";
		else if (!strcmp(a, "--lib"))
			is_lib = 1;
		for (size_t k = 0; !var && k < sizeof(value_opts) / sizeof(value_opts[0]); k++)
			if (!strcmp(a, value_opts[k].opt))
				var = value_opts[k].var;
		if (!var && !is_lib)
			die("unknown option %s", a);
		if (i + 1 >= argc || !argv[i + 1][0])
			die("option %s needs a value", a);
		const char *v = argv[++i];
		if (is_lib) {
			lib_opt = v;
			continue;
		}
		if (!strcmp(a, "--on-full"))
			check_choice(a, v, "flush", "stop");
		if (!strcmp(a, "--clock"))
			check_choice(a, v, "tsc", "monotonic");
		if (!strcmp(a, "--filter") && access(v, R_OK))
			die("--filter: cannot read '%s'", v);
		setenv(var, v, 1);
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	char **prog = argv + i;
	char lib[PATH_MAX];
	find_lib(lib, sizeof(lib), lib_opt);
	unsetenv("TRACER_LIB");

	char path[PATH_MAX];
	find_program(prog[0], path, sizeof(path));
	const char *why = path[0] ? untraceable(path) : NULL;
	if (why) {
		fprintf(stderr, "tracer: %s %s: it cannot be traced; running it untraced\n", prog[0], why);
		execv(path, prog);   /* (not execvp: no retry as a shell script) */
		return exec_failed(prog[0]);
	}

	/* LD_PRELOAD: the program's own entries first, then ours */
	const char *old = getenv("LD_PRELOAD");
	char *pre = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
	if (!pre)
		return 2;
	if (old && *old)
		sprintf(pre, "%s:%s", old, lib);
	else
		sprintf(pre, "%s", lib);

	char dir[PATH_MAX + 16], log[PATH_MAX + 32];
	if (mpi_rank_in_env()) {
		/* one process of an MPI job: the ranks agree on the archive */
		const char *o = getenv("TRACER_OUTPUT");
		if (o && *o) {
			make_output(prog[0], dir, sizeof(dir));
			setenv("TRACER_OUTPUT", dir, 1);
		}
		setenv("LD_PRELOAD", pre, 1);
		execvp(prog[0], prog);
		return exec_failed(prog[0]);
	}

	make_output(prog[0], dir, sizeof(dir));
	claim_dir(dir, sizeof(dir));
	snprintf(log, sizeof(log), "%s/tracer.log", dir);
	setenv("TRACER_OUTPUT", dir, 1);
	setenv("TRACER_LAUNCHER", log, 1);

	const char *verb0 = getenv("TRACER_VERBOSE");
	watch_start(dir, verb0 && !strcmp(verb0, "0"));   /* (before we become a subreaper) */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pid_t me = getpid();
	sigset_t all, old_mask;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old_mask);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tracer-run: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		/* tracer-run killed: the program too (SIGKILL, as untraced) */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != me)
			_exit(128 + SIGKILL);   /* killed in between */
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		setenv("LD_PRELOAD", pre, 1);
		execvp(prog[0], prog);
		_exit(exec_failed(prog[0]));
	}
	child_pid = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t k = 0; k < sizeof(fwd_sigs) / sizeof(fwd_sigs[0]); k++)
		sigaction(fwd_sigs[k], &sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	/* the program, then every descendant reparented to us */
	int status = 0, have = 0;
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;   /* ECHILD: the whole tree has ended */
		}
		if (w == pid) {
			status = st;
			have = 1;
			child_pid = 0;
		}
	}
	watch_done();
	/* TRACER_DURABLE: a process killed without writing its archive (SIGKILL) */
	int recovered = tracer_recover_dir(dir, stderr) == 0;
	const char *verb = getenv("TRACER_VERBOSE");
	int quiet = verb && !strcmp(verb, "0");
	if (!unify_tree(dir, quiet) && !quiet && !recovered)
		print_summary(log, dir);
	fflush(stderr);
	if (!have)
		return 2;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
		/* the program dumped core already: no second core from us */
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		return 128 + sig;
	}
	return WEXITSTATUS(status);
}
