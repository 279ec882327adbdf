/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_dir.c - choosing and claiming the archive directory of this process
 * (archive.c: the life cycle).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"
#include "proctree.h"
#include "archive_int.h"

/* ---- directory choice ---- */

static int is_dir(const char *p)
{
	struct stat st;
	return tr_real.stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 1 if dir holds an archive (any *.otf2 anchor or a traces/ directory). */
static int holds_archive(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		found = (n > 5 && !strcmp(e->d_name + n - 5, ".otf2")) || !strcmp(e->d_name, "traces") ||
			!strcmp(e->d_name, "ranks") || !strcmp(e->d_name, "procs") || (n > 6 && !strcmp(e->d_name + n - 6, ".claim"));
	}
	closedir(d);
	return found;
}

/* A job id shared by the ranks of one mpirun (for a common default name). */
static int job_id(char *out, size_t n)
{
	static const char *const vars[] = { "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID",
					    "PMI_JOBID", NULL };
	for (int i = 0; vars[i]; i++) {
		const char *v = tr_getenv(vars[i]);
		if (v && *v) {
			snprintf(out, n, "%s", v);
			tr_name_sanitize(out);
			return 0;
		}
	}
	return -1;
}

/* mkdir -p; 0 or -1 with errno. */
static int mkdirs(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%.4000s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -1;
	return is_dir(p) ? 0 : (errno = ENOTDIR, -1);
}

/* Claim dir for this process: create it and an empty placeholder anchor
 * with O_EXCL (concurrent processes with the same TRACER_OUTPUT, e.g. a
 * launcher and its child, never share an archive). 1 claimed, 0 taken,
 * -1 error (errno). */
/* Where this process's own archive goes in dir: dir itself, or (MPI
 * rank) dir/ranks. */
void tr_ar_own_dir(const char *dir, char *out, size_t n)
{
	if (tr_ar_parts_dir())
		snprintf(out, n, "%.4000s/%s", dir, tr_ar_parts_dir());
	else
		snprintf(out, n, "%.4000s", dir);
}

/* this process's own claim (NAME.claim of tr_ar_name): 1 held, 2 renamed
 * into the anchor (tr_ar_claim_to_anchor), 0 none (a tree's part with
 * TRACER_DURABLE claims nothing); own_claim_pid: the process that made it
 * (a fork child inherits the variables, not the claim) */
static int own_claim;
static pid_t own_claim_pid;

static int claim_held(void)
{
	return own_claim == 1 && own_claim_pid == tr_self_pid();
}

/* A process claims NAME.claim (a rank ranks/rank<r>.claim), not its
 * anchor: a process killed before it wrote its archive (e.g. a SIGTERM
 * during start-up, before the signal handlers are installed) leaves no
 * empty anchor behind; the claim is removed once the anchor exists. */
int tr_ar_claim(const char *dir, const char *name)
{
	char p[PATH_MAX + 64], od[4200];
	tr_ar_own_dir(dir, od, sizeof(od));
	if (mkdirs(od))
		return -1;
	snprintf(p, sizeof(p), "%.4000s/%.60s.claim", od, name);
	int fd = tr_real.open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	char b[24];
	int n = snprintf(b, sizeof(b), "%d\n", (int)tr_self_pid());
	if (tr_real.write(fd, b, (size_t)n) != n)
		(void)0;   /* the pid only tells descendants who holds it */
	tr_real.close(fd);
	if (!strcmp(name, tr_ar_name)) {
		own_claim = 1;
		own_claim_pid = tr_self_pid();
	}
	return 1;
}

/* The pid in claim path, 0 if none. */
static pid_t claim_pid(const char *path)
{
	char b[24];
	int fd = tr_real.open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ssize_t n = tr_real.read(fd, b, sizeof(b) - 1);
	tr_real.close(fd);
	b[n > 0 ? n : 0] = 0;
	return (pid_t)atoi(b);
}

/* MPI: the claim of this rank in dir is held by a live ancestor (a rank
 * that called system() or popen, a wrapper script that did not exec the
 * program): this process is a side process of the rank (tr_g.rank_side). */
static int rank_held_above(const char *dir)
{
	char p[PATH_MAX + 64], od[4200];
	tr_ar_own_dir(dir, od, sizeof(od));
	snprintf(p, sizeof(p), "%.4000s/rank%d.claim", od, tr_proc.rank);
	pid_t h = claim_pid(p);
	return h > 0 && tr_tree_is_ancestor(h);
}

void tr_ar_claim_io(void *p)
{
	struct claim_call *c = p;
	c->ret = tr_ar_claim(c->dir, c->name);
}

void tr_ar_unclaim(const char *dir, const char *name)
{
	char p[PATH_MAX + 64], od[4200];
	struct stat st;
	tr_ar_own_dir(dir, od, sizeof(od));
	snprintf(p, sizeof(p), "%.4000s/%.60s.claim", od, name);
	if (tr_real.stat(p, &st) == 0 && (st.st_size == 0 || claim_pid(p) == tr_self_pid()))
		tr_real.unlink(p);
	rmdir(od);    /* only if empty */
	rmdir(dir);
}

/* The anchor (a tree's part: its records) is written: remove the claim,
 * if any is left. Async-signal-safe. */
void tr_ar_drop_claim(void)
{
	char od[4200], cl[4400];
	if (!claim_held())
		return;
	own_claim = 0;
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	snprintf(cl, sizeof(cl), "%s/%s.claim", od, tr_ar_name);
	tr_real.unlink(cl);
}

/* Right before the writer writes the anchor through NAME.otf2.part: the
 * claim becomes that file (the writer truncates and fills it), so an
 * archive costs one file created and one removed less (each a scan of the
 * recently freed inodes on an ext4 without a journal); the live entries'
 * links to the claim then share the anchor's inode, names only. Not for
 * an MPI rank, whose claim other processes read while it runs
 * (rank_held_above), nor a tree's part (it claims nothing). Async-signal-safe. */
void tr_ar_claim_to_anchor(void)
{
	char od[4200], cl[4400], part[4400];
	if (!claim_held() || tr_ar_tree_part() || tr_g.mpi_expected)
		return;
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	snprintf(cl, sizeof(cl), "%s/%s.claim", od, tr_ar_name);
	snprintf(part, sizeof(part), "%s/%s.otf2.part", od, tr_ar_name);
	if (tr_real.rename(cl, part) == 0)
		own_claim = 2;
}

/* <own dir>/<archive name><suffix> (durable.c's recovery files). */
void tr_archive_own_path(char *out, size_t n, const char *suffix)
{
	char od[4200];
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	snprintf(out, n, "%s/%s%s", od, tr_ar_name, suffix);
}

/* Decide and claim tr_g.dir. Returns 0, or -1 when tracing must be disabled. */
int tr_ar_choose_dir(void)
{
	char base[4096], prog[256];
	int explicit = tr_cfg.output[0] != 0;

	snprintf(prog, sizeof(prog), "%s", tr_proc.progname[0] ? tr_proc.progname : "prog");
	tr_name_sanitize(prog);
	if (explicit) {
		snprintf(base, sizeof(base), "%s", tr_cfg.output);
		size_t l = strlen(base);
		while (l > 1 && base[l - 1] == '/')
			base[--l] = 0;
	} else {
		char job[200];
		if (tr_g.mpi_expected && job_id(job, sizeof(job)) == 0) {
			snprintf(base, sizeof(base), "tracer-%.200s-%.200s", prog, job);
			tr_g.dir_from_job = 1;
		}
		else
			tr_default_dir_name(base, sizeof(base), prog);
	}
	tr_ar_set_arname();
	/* never overwrite an existing archive: <base>, <base>.1, <base>.2 ... */
	for (int i = 0; i < 10000; i++) {
		if (i == 0)
			snprintf(tr_g.dir, sizeof(tr_g.dir), "%s", base);
		else
			snprintf(tr_g.dir, sizeof(tr_g.dir), "%.4000s.%d", base, i);
		/* a non-MPI archive never goes next to another one */
		if (!tr_g.mpi_expected && holds_archive(tr_g.dir))
			continue;
		int c = tr_ar_claim(tr_g.dir, tr_ar_name);
		if (c == 0 && tr_g.mpi_expected && rank_held_above(tr_g.dir)) {
			tr_g.rank_side = 1;   /* beside the rank, in its directory */
			tr_ar_set_arname();
			c = tr_ar_claim(tr_g.dir, tr_ar_name);
		}
		if (c == 1)
			break;
		if (c < 0) {
			tr_log_error("%s%s: cannot create the archive there (%s); tracing disabled, the program "
				     "runs untraced", explicit ? "TRACER_OUTPUT=" : "", tr_g.dir, strerror(errno));
			return -1;
		}
	}
	if (strcmp(tr_g.dir, base) && (!tr_g.mpi_expected || tr_proc.rank <= 0) && !tr_g.rank_side)
		tr_log_info("%s already holds an archive; writing to %s", base, tr_g.dir);
	/* the writer gets the absolute path: the program may chdir() */
	char abs[PATH_MAX];
	snprintf(tr_g.shown, sizeof(tr_g.shown), "%s", tr_g.dir);
	if (realpath(tr_g.dir, abs))
		snprintf(tr_g.dir, sizeof(tr_g.dir), "%s", abs);
	return 0;
}
