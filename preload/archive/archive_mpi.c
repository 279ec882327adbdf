/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_mpi.c - the unified archive of an MPI run: every rank's mapping tables,
 * the last rank's traces.otf2, the end files, the merge started when the
 * run ends without MPI_Finalize (archive.c: the life cycle).
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
#include "fsutil.h"
#include "proctree.h"
#include "archive_int.h"

/* MPI rank or process tree part, TRACER_DURABLE tick:
 * <part>.tdefs as now, for tracer-merge after the run was killed (written,
 * then renamed). */
int tr_archive_save_tdefs(void)
{
	char tmp[4300];
	if (!tr_ar_parts_dir() || !tr_ar_tdefs_path[0])
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.part", tr_ar_tdefs_path);
	if (tr_defs_save(tmp, 0) != 0 || tr_real.rename(tmp, tr_ar_tdefs_path) != 0) {
		tr_real.unlink(tmp);
		return -1;
	}
	tr_ar_tdefs_own = 1;   /* (a tree part: its records of parts.tdefs are older) */
	return 0;
}

/* ---- side processes of a rank ----
 * A process that finds its rank claimed by a live ancestor (a wrapper
 * script that did not exec the program, a rank's system() or popen) or is
 * a rank's fork child writes its archive beside the rank's, as
 * ranks/side<r>-<pid>, and ends quietly. One that then calls MPI_Init is
 * the rank: ranks/rank<r>.mpi names its archive (tracer-merge and the
 * unified archive's links read it), and the ancestor, which never called
 * MPI_Init, ends as a side process too. */

/* ranks/rank<r>.mpi */
static void alias_path(char *out, size_t n, int rank)
{
	snprintf(out, n, "%.4000s/ranks/rank%d.mpi", tr_g.dir, rank);
}

static void side_to_rank_io(void *p)
{
	char a[4400], tmp[4420];
	(void)p;
	alias_path(a, sizeof(a), tr_proc.rank);
	snprintf(tmp, sizeof(tmp), "%s.%d", a, (int)tr_self_pid());
	int fd = tr_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	size_t l = strlen(tr_ar_name);
	int ok = tr_real.write(fd, tr_ar_name, l) == (ssize_t)l;
	tr_real.close(fd);
	if (!ok || tr_real.rename(tmp, a) != 0)
		tr_real.unlink(tmp);
}

void tr_ar_side_to_rank(void)
{
	tr_fd_private_call(side_to_rank_io, NULL);
	tr_g.rank_side = 0;
	tr_log_debug("rank %d: MPI_Init in a process its rank's holder started: the rank's archive is %s",
		     tr_proc.rank, tr_ar_name);
}

/* At exec, the archive written: an image that did not call MPI_Init (a
 * wrapper script's shell that execs the program) moves its archive to
 * side<r>-<pid>.<k>, so that the next image (the rank's program, perhaps)
 * finds its name free instead of writing over it. */
static void exec_aside_io(void *p)
{
	char od[4200], from[4400], to[4400], name[96];
	(void)p;
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	int k = 1;
	for (; k < 1000; k++) {
		snprintf(name, sizeof(name), "side%d-%d.%d", tr_proc.rank, (int)tr_self_pid(), k);
		int c = tr_ar_claim(tr_g.dir, name);
		if (c == 1)
			break;
		if (c < 0)
			return;
	}
	static const char *const sfx[] = { ".otf2", ".def", ".tdefs", "", NULL };
	for (int i = 0; sfx[i]; i++) {
		snprintf(from, sizeof(from), "%s/%s%s", od, tr_ar_name, sfx[i]);
		snprintf(to, sizeof(to), "%s/%s%s", od, name, sfx[i]);
		tr_real.rename(from, to);
	}
	snprintf(to, sizeof(to), "%s/%s.claim", od, name);
	tr_real.unlink(to);
	snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/ranks/%s.otf2", tr_g.shown, name);
}

void tr_ar_exec_aside(void)
{
	if (tr_g.mpi_expected && !tr_g.mpi_init)
		tr_fd_private_call(exec_aside_io, NULL);
}

/* The archive name of rank r's MPI process in DIR/ranks: rank<r>, or what
 * its alias names. */
static void rank_name(int rank, char *out, size_t n)
{
	char a[4400];
	alias_path(a, sizeof(a), rank);
	snprintf(out, n, "rank%d", rank);
	int fd = tr_real.open(a, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	char b[64];
	ssize_t l = tr_real.read(fd, b, sizeof(b) - 1);
	tr_real.close(fd);
	if (l > 0 && !memchr(b, '/', (size_t)l)) {
		b[l] = 0;
		snprintf(out, n, "%s", b);
	}
}

/* 1: this process is not its rank's MPI process (a side process, or the
 * rank's first process that never called MPI_Init while a process it
 * started did): no end file, no merge, no summary line. Async-signal-safe. */
int tr_ar_side(void)
{
	if (tr_g.rank_side)
		return 1;
	if (!tr_g.mpi_expected || tr_g.mpi_init)
		return 0;
	char a[4400];
	alias_path(a, sizeof(a), tr_proc.rank);
	return access(a, F_OK) == 0;
}

/* ---- unified output (MPI) ---- */

/* The events of a location of the unified archive: traces/<gid>.evt, a
 * hard link of (or, across file systems, a copy of) the rank's file. The
 * last rank to end calls this: every rank's files are complete. */
static void link_loc(uint64_t gid, uint64_t loc, int32_t rank, void *ud)
{
	char from[4400], to[4400], name[64];
	(void)ud;
	rank_name((int)rank, name, sizeof(name));
	snprintf(from, sizeof(from), "%.4000s/ranks/%s/%llu.evt", tr_g.dir, name, (unsigned long long)loc);
	snprintf(to, sizeof(to), "%.4000s/traces/%llu.evt", tr_g.dir, (unsigned long long)gid);
	if (tr_link_or_copy(from, to) && errno != ENOENT && tr_error_note(OTF2W_E_IO))
		tr_log_error("cannot create %s: %s", to, strerror(errno));
}

/* Every rank after unification: traces/<loc>.def with the mapping tables
 * and clock offsets of this process's locations. */
static void write_unified_local(void)
{
	otf2w_archive_params p;
	otf2w_archive *a;
	char d[4200];

	memset(&p, 0, sizeof(p));
	p.path = tr_g.dir;
	p.name = "traces";
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = TR_DEF_CHUNK_BYTES;
	p.max_chunks = 4;
	snprintf(d, sizeof(d), "%s/traces", tr_g.dir);
	mkdir(tr_g.dir, 0755);
	mkdir(d, 0755);
	if (otf2w_archive_open(&p, &a) != OTF2W_OK)
		return;
	otf2w_archive_set_memory(a, &tr_ar_memory, NULL);
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		otf2w_def_writer *dw;
		uint64_t gid = tr_defs_unified_gid(t->location);
		if (gid == UINT64_MAX || otf2w_archive_get_def_writer(a, gid, &dw) != OTF2W_OK)
			continue;
		tr_defs_write_local_to(dw);
		if (otf2w_archive_close_def_writer(a, dw) != OTF2W_OK && tr_error_note(OTF2W_E_IO))
			tr_log_error("writing %s/traces/%llu.def: %s", tr_g.dir, (unsigned long long)gid,
				     otf2w_archive_error(a));
	}
	/* the object is dropped without otf2w_archive_close: that would write
	 * an anchor; only rank 0 writes traces.otf2 */
	otf2w_archive_abandon(a);
}

static void rm_entry(const char *path, const char *name, int type, void *ud);

/* rm -r of the temporary archive (a few levels deep). */
static void rm_tree(const char *path)
{
	tr_dir_each(path, rm_entry, NULL);
	if (rmdir(path) != 0)
		tr_real.unlink(path);
}

static void rm_entry(const char *path, const char *name, int type, void *ud)
{
	(void)name;
	(void)ud;
	if (type == DT_DIR)
		rm_tree(path);
	else
		tr_real.unlink(path);
}

struct move_ctx {
	const char *from, *dir;
};

static void move_missing(const char *path, const char *name, int type, void *ud)
{
	struct move_ctx *c = ud;
	char to[8800];
	struct stat st;
	(void)type;
	if (name[0] == '.')
		return;
	snprintf(to, sizeof(to), "%s/traces/%s", c->dir, name);
	if (tr_real.lstat(to, &st) != 0)
		tr_real.rename(path, to);
}

/* traces.def + traces.otf2 (+ evt links) of the unified archive in dir:
 * the definitions are written by write_defs into a temporary archive whose
 * global files are then moved into place (the anchor last). */
static int write_unified_files(const char *dir, void (*write_defs)(otf2w_gdef_writer *, void *), void *ud)
{
	otf2w_archive_params p;
	otf2w_archive *a;
	otf2w_gdef_writer *g;
	char tmp[4200], from[8400], to[8400];

	snprintf(tmp, sizeof(tmp), "%.4000s/.tracer-unify-%d", dir, (int)tr_self_pid());
	memset(&p, 0, sizeof(p));
	p.path = tmp;
	p.name = "traces";
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = TR_DEF_CHUNK_BYTES;
	p.max_chunks = 4;
	p.machine_name = tr_proc.hostname;
	p.creator = "libtracer";
	p.description = "libtracer (LD_PRELOAD) trace, MPI unified";
	if (otf2w_archive_open(&p, &a) != OTF2W_OK || otf2w_archive_get_gdef_writer(a, &g) != OTF2W_OK) {
		tr_log_error("cannot write the unified definitions in %s", tmp);
		return -1;
	}
	otf2w_archive_set_memory(a, &tr_ar_memory, NULL);
	snprintf(to, sizeof(to), "%s/traces", dir);
	mkdir(to, 0755);
	write_defs(g, ud);
	otf2w_status st = otf2w_archive_close(a);
	if (st != OTF2W_OK) {
		tr_log_error("writing the unified definitions: %s", otf2w_status_str(st));
		rm_tree(tmp);
		return -1;
	}
	/* per-location files of locations no rank wrote (ranks that did not
	 * unify): the empty ones of the temporary archive */
	snprintf(from, sizeof(from), "%s/traces", tmp);
	struct move_ctx mc = { from, dir };
	tr_dir_each(from, move_missing, &mc);
	snprintf(from, sizeof(from), "%s/traces.def", tmp);
	snprintf(to, sizeof(to), "%s/traces.def", dir);
	tr_real.rename(from, to);
	snprintf(from, sizeof(from), "%s/traces.otf2", tmp);
	snprintf(to, sizeof(to), "%s/traces.otf2", dir);
	int ret = 0;
	if (tr_real.rename(from, to)) {
		tr_log_error("cannot create %s: %s", to, strerror(errno));
		ret = -1;
	}
	rm_tree(tmp);
	return ret;
}

static void online_defs(otf2w_gdef_writer *g, void *ud)
{
	tr_defs_write_unified(g, link_loc, NULL);
}

static void unified_global_io(void *unused)
{
	(void)unused;
	write_unified_files(tr_g.dir, online_defs, NULL);
}

/* The rank that ends last, after unification (in a descriptor table of
 * our own: no descriptor in the program's). */
void tr_ar_write_unified_global(void)
{
	tr_fd_private_call(unified_global_io, NULL);
}

static void unified_local_io(void *unused)
{
	(void)unused;
	write_unified_local();
}

/* Called by tr_defs_install_unified's caller path (MPI_Finalize). */
void tr_archive_unified_installed(void)
{
	if (!tr_g.active || tr_g.finished)
		return;
	tr_lock(&tr_g.lock);
	tr_fd_private_call(unified_local_io, NULL);
	tr_unlock(&tr_g.lock);
}

/* ---- end of an MPI run: the last rank to end writes the unified anchor ----
 * Every rank that unified writes rank<r>.end (its final time range on rank
 * 0's clock and its event count) under an flock of rank-end.lock, then
 * counts the end files: the one that completes the set writes traces.def +
 * traces.otf2, whose ClockProperties then cover every event of every rank
 * (also those after MPI_Finalize), and prints the run's one exit line. */

static int read_end(const char *path, uint64_t v[4])
{
	char b[128];
	int fd = tr_real.open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = tr_real.read(fd, b, sizeof(b) - 1);
	tr_real.close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	unsigned long long a, c, d;
	int late = 0;
	if (sscanf(b, "%llu %llu %llu %d", &a, &c, &d, &late) < 3)
		return -1;
	v[0] = a;
	v[1] = c;
	v[2] = d;
	v[3] = (uint64_t)late;
	return 0;
}

/* Crash path of a rank that unified (a crash after MPI_Finalize): its end
 * file without a time range (its events stay within the range it had at
 * unification, unless more came after), so that the last rank still
 * completes the set. Async-signal-safe. */
void tr_ar_run_end_mark_crashed(uint64_t events)
{
	char p[4400], tmp[4400], b[64];
	int n = 0;
	char d[24];
	int k = 0;
	do {
		d[k++] = (char)('0' + events % 10);
		events /= 10;
	} while (events && k < 24);
	memcpy(b, "18446744073709551615 0 ", 23);
	n = 23;
	while (k > 0)
		b[n++] = d[--k];
	b[n++] = ' ';
	b[n++] = tr_defs_late() ? '1' : '0';
	b[n++] = '\n';
	snprintf(tmp, sizeof(tmp), "%.4000s/ranks/.rank%d.end", tr_g.dir, tr_proc.rank);
	snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, tr_proc.rank);
	int fd = tr_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int ok = tr_real.write(fd, b, (size_t)n) == n;
	tr_real.close(fd);
	if (ok)
		tr_real.rename(tmp, p);
}

/* 1 when this rank ended last (tot filled, unified set widened). */
int tr_ar_run_end_last(uint64_t first, uint64_t last, uint64_t events, struct run_end *tot)
{
	char p[4400], tmp[4400];
	int size = tr_proc.size > 0 ? tr_proc.size : 1, ret = 0;
	snprintf(p, sizeof(p), "%.4000s/ranks/rank-end.lock", tr_g.dir);
	int lfd = tr_real.open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return tr_proc.rank == 0;   /* no lock possible: rank 0 writes, as before */
	/* bounded (10 s): a rank holds it for a few file operations only */
	struct timespec ms = { 0, 1000000 };
	int locked = 0;
	for (int i = 0; i < 10000 && !(locked = flock(lfd, LOCK_EX | LOCK_NB) == 0); i++)
		nanosleep(&ms, NULL);
	snprintf(tmp, sizeof(tmp), "%.4000s/ranks/.rank%d.end", tr_g.dir, tr_proc.rank);
	snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, tr_proc.rank);
	int fd = tr_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		char b[128];
		int n = snprintf(b, sizeof(b), "%llu %llu %llu %d\n", (unsigned long long)first,
				 (unsigned long long)last, (unsigned long long)events, tr_defs_late());
		int ok = tr_real.write(fd, b, (size_t)n) == n;
		tr_real.close(fd);
		if (ok)
			tr_real.rename(tmp, p);
	}
	memset(tot, 0, sizeof(*tot));
	tot->first = UINT64_MAX;
	int have = 0;
	for (int r = 0; r < size; r++) {
		uint64_t v[4];
		snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, r);
		if (read_end(p, v))
			break;
		have++;
		tot->late |= v[3] != 0;
		tr_defs_unified_widen(r, v[0], v[1]);
		if (v[0] < tot->first)
			tot->first = v[0];
		if (v[1] > tot->last)
			tot->last = v[1];
		tot->events += v[2];
	}
	if (have == size && locked) {
		tot->ranks = (uint32_t)size;
		ret = 1;
		for (int r = 0; r < size; r++) {
			snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, r);
			tr_real.unlink(p);
		}
		snprintf(p, sizeof(p), "%.4000s/ranks/rank-end.lock", tr_g.dir);
		tr_real.unlink(p);
	}
	tr_real.close(lfd);   /* releases the lock */
	return ret;
}

static const struct tr_helper *tr_merge;   /* tr_archive_prepare_merge */

/* ---- definitions made after MPI_Finalize ----
 * A rank that opens a file or starts a thread after MPI_Finalize defines
 * what the unified set lacks (its mapping tables end before them: handles
 * came out under other names, the thread's location was missing). Its
 * packed definitions (rank<r>.tdefs) have everything: the last rank makes
 * the unified archive again from those with tracer-merge, as after a run
 * without MPI_Finalize, instead of writing it from the unified set. */

int tr_ar_merge_late(void)
{
	/* (its files replace the mapping tables written at MPI_Finalize) */
	return tr_merge && tr_helper_run(tr_merge) >= 0 ? 0 : -1;
}

static void count_evt(const char *path, const char *name, int type, void *ud)
{
	size_t n = strlen(name);
	(void)path;
	(void)type;
	if (n > 4 && !strcmp(name + n - 4, ".evt"))
		++*(uint32_t *)ud;
}

uint32_t tr_ar_unified_locations(void)
{
	char p[4300];
	uint32_t n = 0;
	snprintf(p, sizeof(p), "%.4000s/traces", tr_g.dir);
	tr_dir_each(p, count_evt, &n);
	return n;
}

/* ---- a run that ends without MPI_Finalize: one rank starts the merge ----
 * The command (tracer-merge --wait 30 --ranks P DIR, environment without
 * LD_PRELOAD) is prepared at MPI_Init by wrappers/mpi, so that a rank can
 * start it from the crash path: O_EXCL on ranks/merge.started elects one
 * rank, vfork + execve start the tool detached (setsid), its output goes to
 * ranks/tracer-merge.log. Async-signal-safe. */

/* Thread context (allocates): bin/tracer-merge next to lib/libtracer.so,
 * untraced (no LD_PRELOAD), waiting for the other ranks' archives. */
void tr_archive_prepare_merge(void)
{
	static char log[4200], ranks[16], dir[4096];
	static const char *args[6];
	static struct tr_helper merge;
	if (tr_proc.size < 1)
		return;   /* (one rank: for definitions after MPI_Finalize, tr_ar_merge_late) */
	snprintf(dir, sizeof(dir), "%s", tr_g.dir);
	snprintf(ranks, sizeof(ranks), "%d", tr_proc.size);
	snprintf(log, sizeof(log), "%.4000s/ranks/tracer-merge.log", dir);
	args[0] = "--wait";
	/* Open MPI, Slurm: SIGTERM first, the other ranks write their archives;
	 * MPICH's Hydra (MPI_LOCALRANKID in the ranks' environment) kills them
	 * with SIGKILL at once: nothing more will come */
	args[1] = tr_getenv("MPI_LOCALRANKID") ? "3" : "30";
	args[2] = "--ranks";
	args[3] = ranks;
	args[4] = dir;
	args[5] = NULL;
	if (tr_helper_prepare(&merge, "tracer-merge", args, log) == 0)   /* else the crash path says to run it */
		tr_merge = &merge;
}

struct excl_call {
	const char *path;
	int ok;
};

static void create_excl_io(void *p)
{
	struct excl_call *c = p;
	int fd = tr_real.open(c->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	c->ok = fd >= 0;
	if (fd >= 0)
		tr_real.close(fd);
}

int tr_ar_start_merge(int crash)
{
	char p[4400];
	if (!tr_g.mpi_expected || tr_g.unified || tr_proc.size <= 1 || tr_ar_side())
		return 0;
	/* a program started by the launcher that never calls MPI (hostname,
	 * an OpenMP program): its ranks' archives are merged as well */
	int nompi = !tr_g.mpi_init;
	if (nompi && !crash && !tr_merge)
		tr_archive_prepare_merge();
	snprintf(p, sizeof(p), "%.4000s/ranks/merge.started", tr_g.dir);
	struct excl_call c = { p, 0 };
	tr_fd_private_call(create_excl_io, &c);
	if (!c.ok)
		return nompi;   /* another rank started it */
	const char *why = nompi ? "the program did not call MPI_Init" : "the run ended without MPI_Finalize";
	if (!tr_merge) {
		tr_log_sigsafe("rank %d: %s: run tracer-merge %s to get one archive of every rank", tr_proc.rank, why,
			       tr_g.shown);
		return nompi;
	}
	if (tr_helper_spawn(tr_merge) <= 0)
		return nompi;
	if (!nompi)
		tr_log_sigsafe("rank %d: %s: %s/traces.otf2 is being merged from every rank's archive by tracer-merge "
			       "(log: %s)", tr_proc.rank, why, tr_g.shown, tr_merge->log);
	else if (tr_cfg.verbose >= 1)   /* the run's summary: a notice */
		tr_log_notice_sigsafe("archive %s/traces.otf2: being merged from the %d ranks' archives by tracer-merge "
				      "(log: %s)", tr_g.shown, tr_proc.size, tr_merge->log);
	return nompi;
}
