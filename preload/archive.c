/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.c - the archive life cycle of this process.
 *
 * One otf2w archive per process, opened at start (the writer creates no
 * file before the first flush or close). Non-MPI: name "traces", this
 * process writes everything. MPI (rank known from the launcher's
 * environment): every rank writes a complete standalone archive
 * ranks/rank<r>.otf2 (+ rank<r>.def, rank<r>/, rank<r>.tdefs) below the
 * common directory, where no viewer takes it for the run's archive; after
 * unification (tr_defs_install_unified) every rank writes the mapping tables
 * of its locations into traces/<id>.def, and the rank that ends last writes
 * the unified traces.otf2 + traces.def (temporary names, then renamed) with
 * traces/<id>.evt hard links of ranks/rank<r>/<loc>.evt: the directory holds
 * one anchor and plain files only. A rank that never unifies still leaves
 * its standalone archive (tracer-merge makes the unified one).
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

struct tr_global tr_g;
struct tr_process tr_proc = { .rank = -1 };

static TR_TLS int tr_tls_flush_errno;
static char tr_arname[64] = "traces";
/* MPI: the packed local definitions for tracer-merge (rank<r>.tdefs). */
static char tr_tdefs_path[4200];

/* The subdirectory of this process's own archive: ranks (MPI rank), procs
 * (part of a process tree, preload/proctree.c) or none. */
static const char *parts_dir(void)
{
	return tr_g.mpi_expected ? "ranks" : tr_tree.on ? "procs" : NULL;
}

static void set_anchor(void)
{
	if (parts_dir())
		snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/%s/%s.otf2", tr_g.shown, parts_dir(), tr_arname);
	else
		snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/%s.otf2", tr_g.shown, tr_arname);
}

static void set_tdefs_path(void)
{
	tr_tdefs_path[0] = 0;
	if (parts_dir()) {
		snprintf(tr_tdefs_path, sizeof(tr_tdefs_path), "%.4000s/%s/%s.tdefs", tr_g.dir, parts_dir(), tr_arname);
		/* the crash path's packing arena (256 MiB of address space, untouched
		 * until used): not taken from a process tree's program under an
		 * address-space limit (its crash path then leaves the part without
		 * .tdefs: not unified) */
		struct rlimit as;
		if (tr_g.mpi_expected || getrlimit(RLIMIT_AS, &as) || as.rlim_cur == RLIM_INFINITY)
			tr_defs_arena_init();
	}
}

/* ---- writer callbacks ---- */

static int cb_lock_create(void *ud, void **lock)
{
	struct tr_lock *l = calloc(1, sizeof(*l));
	*lock = l;
	return l ? 0 : -1;
}

static int cb_lock_destroy(void *ud, void *lock)
{
	free(lock);
	return 0;
}

static int cb_lock(void *ud, void *lock)
{
	tr_lock(lock);
	return 0;
}

static int cb_unlock(void *ud, void *lock)
{
	tr_unlock(lock);
	return 0;
}

static const otf2w_locking_callbacks tr_locking = { cb_lock_create, cb_lock_destroy, cb_lock, cb_unlock };

static otf2w_flush_type cb_pre_flush(void *ud, uint64_t location, int final)
{
	tr_tls_flush_errno = errno;
	if (final)
		return OTF2W_FLUSH;
	return tr_cfg.on_full == TR_ON_FULL_STOP ? OTF2W_NO_FLUSH : OTF2W_FLUSH;
}

static uint64_t cb_post_flush(void *ud, uint64_t location)
{
	errno = tr_tls_flush_errno;   /* the program never sees our write(2) errors */
	uint64_t t = tr_time();
	struct tr_thread *self = tr_tls_self;
	if (self && self->w && otf2w_evt_writer_last_time(self->w) > t)
		t = otf2w_evt_writer_last_time(self->w);
	return t;
}

static const otf2w_flush_callbacks tr_flush = { cb_pre_flush, cb_post_flush };

/* Chunks come from the tracer's own heap (mem.c: mmap, with the start-up
 * reserve when the program has used all the memory it may get), never from
 * the program's malloc. */
static void *cb_alloc(void *ud, size_t size)
{
	return tr_mem_alloc(size);
}

static void cb_free(void *ud, void *chunk, size_t size)
{
	tr_mem_free(chunk);
}

static const otf2w_memory_callbacks tr_memory = { cb_alloc, cb_free };

/* Files on the tracer-io thread (durable_io.c), never in the program's
 * descriptor table. */
static int cb_io_run(void *ud, void (*fn)(void *), void *arg)
{
	return tr_io_run(fn, arg);
}

static const otf2w_io_callbacks tr_io = { cb_io_run };

/* Run fn(arg) on the tracer-io thread when there is one, else here. */
static void io_call(void (*fn)(void *), void *arg)
{
	if (tr_io_run(fn, arg) != 0)
		fn(arg);
}

/* ---- directory choice ---- */

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
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

/* Can we create files in dir (or create dir)? Sets errno. */
__attribute__((unused)) static int dir_writable(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", dir);
	for (;;) {
		if (access(p, F_OK) == 0) {
			if (!is_dir(p)) {
				errno = ENOTDIR;
				return 0;
			}
			return access(p, W_OK | X_OK) == 0;
		}
		char *s = strrchr(p, '/');
		while (s && s > p && s[1] == 0) {   /* trailing slashes */
			*s = 0;
			s = strrchr(p, '/');
		}
		if (!s)
			return access(".", W_OK | X_OK) == 0;
		if (s == p) {
			p[1] = 0;
			return access(p, W_OK | X_OK) == 0;
		}
		*s = 0;
	}
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			*s = '_';
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
			sanitize(out);
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
static void own_dir(const char *dir, char *out, size_t n)
{
	if (parts_dir())
		snprintf(out, n, "%.4000s/%s", dir, parts_dir());
	else
		snprintf(out, n, "%.4000s", dir);
}

/* A process claims NAME.claim (a rank ranks/rank<r>.claim), not its
 * anchor: a process killed before it wrote its archive (e.g. a SIGTERM
 * during start-up, before the signal handlers are installed) leaves no
 * empty anchor behind; the claim is removed once the anchor exists. */
static int claim(const char *dir, const char *name)
{
	char p[PATH_MAX + 64], od[4200];
	own_dir(dir, od, sizeof(od));
	if (mkdirs(od))
		return -1;
	snprintf(p, sizeof(p), "%.4000s/%.60s.claim", od, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	close(fd);
	return 1;
}

struct claim_call {
	const char *dir, *name;
	int ret;
};

static void claim_io(void *p)
{
	struct claim_call *c = p;
	c->ret = claim(c->dir, c->name);
}

static void unclaim(const char *dir, const char *name)
{
	char p[PATH_MAX + 64], od[4200];
	struct stat st;
	own_dir(dir, od, sizeof(od));
	snprintf(p, sizeof(p), "%.4000s/%.60s.claim", od, name);
	if (stat(p, &st) == 0 && st.st_size == 0)
		unlink(p);
	rmdir(od);    /* only if empty */
	rmdir(dir);
}

/* The anchor is written: remove the claim. Async-signal-safe. */
static void drop_claim(void)
{
	char od[4200], cl[4400];
	own_dir(tr_g.dir, od, sizeof(od));
	snprintf(cl, sizeof(cl), "%s/%s.claim", od, tr_arname);
	unlink(cl);
}

/* MPI rank or process tree part, TRACER_DURABLE tick (tracer-io):
 * <part>.tdefs as now, for tracer-merge after the run was killed (written,
 * then renamed). */
int tr_archive_save_tdefs(void)
{
	char tmp[4300];
	if (!parts_dir() || !tr_tdefs_path[0])
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.part", tr_tdefs_path);
	if (tr_defs_save(tmp, 0) != 0 || rename(tmp, tr_tdefs_path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* <own dir>/<archive name><suffix> (durable.c's recovery files). */
void tr_archive_own_path(char *out, size_t n, const char *suffix)
{
	char od[4200];
	own_dir(tr_g.dir, od, sizeof(od));
	snprintf(out, n, "%s/%s%s", od, tr_arname, suffix);
}

static void set_arname(void)
{
	if (tr_g.mpi_expected)
		snprintf(tr_arname, sizeof(tr_arname), "rank%d", tr_proc.rank);
	else if (tr_tree.on)
		snprintf(tr_arname, sizeof(tr_arname), "proc%d", tr_tree.part);
	else
		snprintf(tr_arname, sizeof(tr_arname), "traces");
}

/* Decide and claim tr_g.dir. Returns 0, or -1 when tracing must be disabled. */
static int choose_dir(void)
{
	char base[4096], prog[256];
	int explicit = tr_cfg.output[0] != 0;

	snprintf(prog, sizeof(prog), "%s", tr_proc.progname[0] ? tr_proc.progname : "prog");
	sanitize(prog);
	if (explicit) {
		snprintf(base, sizeof(base), "%s", tr_cfg.output);
		size_t l = strlen(base);
		while (l > 1 && base[l - 1] == '/')
			base[--l] = 0;
	} else {
		char when[64], job[200];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
		if (tr_g.mpi_expected && job_id(job, sizeof(job)) == 0) {
			snprintf(base, sizeof(base), "tracer-%.200s-%.200s", prog, job);
			tr_g.dir_from_job = 1;
		}
		else
			snprintf(base, sizeof(base), "tracer-%.200s-%s-%d", prog, when, (int)getpid());
	}
	set_arname();
	/* never overwrite an existing archive: <base>, <base>.1, <base>.2 ... */
	for (int i = 0; i < 10000; i++) {
		if (i == 0)
			snprintf(tr_g.dir, sizeof(tr_g.dir), "%s", base);
		else
			snprintf(tr_g.dir, sizeof(tr_g.dir), "%.4000s.%d", base, i);
		/* a non-MPI archive never goes next to another one */
		if (!tr_g.mpi_expected && holds_archive(tr_g.dir))
			continue;
		int c = claim(tr_g.dir, tr_arname);
		if (c == 1)
			break;
		if (c < 0) {
			tr_log_error("%s%s: cannot create the archive there (%s); tracing disabled, the program "
				     "runs untraced", explicit ? "TRACER_OUTPUT=" : "", tr_g.dir, strerror(errno));
			return -1;
		}
	}
	if (strcmp(tr_g.dir, base) && (!tr_g.mpi_expected || tr_proc.rank <= 0))
		tr_log_info("%s already holds an archive; writing to %s", base, tr_g.dir);
	/* the writer gets the absolute path: the program may chdir() */
	char abs[PATH_MAX];
	snprintf(tr_g.shown, sizeof(tr_g.shown), "%s", tr_g.dir);
	if (realpath(tr_g.dir, abs))
		snprintf(tr_g.dir, sizeof(tr_g.dir), "%s", abs);
	return 0;
}

int tr_archive_open(void)
{
	otf2w_archive_params p;
	char desc[512];
	uint64_t chunks = tr_cfg.buffer_bytes / tr_cfg.chunk_bytes;

	char od[4200];
	memset(&p, 0, sizeof(p));
	set_arname();
	own_dir(tr_g.dir, od, sizeof(od));
	snprintf(desc, sizeof(desc), "libtracer (LD_PRELOAD) trace of %s", tr_proc.progname);
	p.path = od;
	p.name = tr_arname;
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = 1u << 20;
	p.max_chunks = (uint32_t)(chunks < 1 ? 1 : chunks > 0xffffffffu ? 0xffffffffu : chunks);
	p.machine_name = tr_proc.hostname;
	p.creator = "libtracer";
	p.description = desc;
	p.exclusive = 0;
	otf2w_status st = otf2w_archive_open(&p, &tr_g.ar);
	if (st != OTF2W_OK) {
		tr_log_error("cannot open the archive in %s: %s; tracing disabled", tr_g.dir, otf2w_status_str(st));
		tr_g.ar = NULL;
		return -1;
	}
	otf2w_archive_set_locking(tr_g.ar, &tr_locking, NULL);
	otf2w_archive_set_flush(tr_g.ar, &tr_flush, NULL);
	otf2w_archive_set_memory(tr_g.ar, &tr_memory, NULL);
	otf2w_archive_set_io(tr_g.ar, &tr_io, NULL);
	tr_durable_open();   /* TRACER_DURABLE: mapped event files, recovery index */
	if (otf2w_archive_get_gdef_writer(tr_g.ar, &tr_g.gdw) != OTF2W_OK)
		tr_g.gdw = NULL;
	set_anchor();
	set_tdefs_path();
	return 0;
}

int tr_archive_prepare(void)
{
	tr_g.mpi_expected = tr_cfg.mpi && tr_proc.rank >= 0;
	tr_g.global_writer = 1;
	/* a member of a process tree joins its directory (proctree.c) */
	if (tr_tree_prepare(tr_g.dir, sizeof(tr_g.dir)) == 1) {
		set_arname();
		snprintf(tr_g.shown, sizeof(tr_g.shown), "%s", tr_g.dir);
		if (claim(tr_g.dir, tr_arname) != 1) {
			tr_log_error("%s: cannot join the process tree's archive there (%s); tracing disabled",
				     tr_g.dir, strerror(errno));
			return -1;
		}
	} else if (choose_dir()) {
		return -1;
	}
	if (tr_tree.on)
		tr_tree_started(tr_g.dir);
	/* the directory is final unless MPI may still move it at MPI_Init */
	tr_g.dir_final = !tr_g.mpi_expected || tr_cfg.output[0] || tr_g.dir_from_job;
	return tr_archive_open();
}

/* ---- public archive API ---- */

int tr_archive_set_dir(const char *dir)
{
	if (!dir || !*dir)
		return -1;
	if (!tr_g.active || !tr_g.ar)
		return 0;   /* not tracing (e.g. unwritable TRACER_OUTPUT): nothing to move */
	tr_lock(&tr_g.lock);
	int ret = 0;
	if (strcmp(dir, tr_g.dir)) {
		char od[4200];
		own_dir(dir, od, sizeof(od));
		struct claim_call cc = { dir, tr_arname, 0 };
		io_call(claim_io, &cc);
		if (cc.ret >= 0 && otf2w_archive_set_path(tr_g.ar, od) == OTF2W_OK) {
			unclaim(tr_g.dir, tr_arname);
			snprintf(tr_g.dir, sizeof(tr_g.dir), "%s", dir);
			snprintf(tr_g.shown, sizeof(tr_g.shown), "%s", dir);
			set_anchor();
			set_tdefs_path();
		} else {
			ret = -1;
		}
	}
	if (ret == 0)
		tr_g.dir_final = 1;
	tr_unlock(&tr_g.lock);
	if (ret)
		tr_log_warn("archive directory can no longer change to %s (files exist in %s)", dir, tr_g.dir);
	return ret;
}

const char *tr_archive_dir(void)
{
	return tr_g.dir;
}

int tr_archive_dir_fixed(void)
{
	return tr_g.dir_final;
}

void tr_set_rank(int rank, int size)
{
	if (!tr_cfg.mpi)
		return;
	tr_proc.size = size;
	if (rank == tr_proc.rank) {
		tr_g.dir_final = 1;
		return;
	}
	tr_lock(&tr_g.lock);
	int old = tr_proc.rank;
	tr_proc.rank = rank;
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		uint64_t id = tr_location_id(t->index);
		if (t->w && otf2w_evt_writer_set_location(t->w, id) == OTF2W_OK)
			t->location = id;
		else if (t->w)
			tr_log_warn("location %llu: data already written, keeps its id",
				    (unsigned long long)t->location);
	}
	tr_g.dir_final = 1;
	tr_unlock(&tr_g.lock);
	tr_defs_process_renamed();
	if (old < 0)
		tr_log_debug("MPI rank %d of %d (not known at start: the archive keeps the name %s)", rank, size,
			     tr_arname);
}

void tr_set_global_writer(int yes)
{
	tr_g.global_writer = yes;
}

/* ---- unified output (MPI) ---- */

/* The events of a location of the unified archive: traces/<gid>.evt, a
 * hard link of (or, across file systems, a copy of) the rank's file. The
 * last rank to end calls this: every rank's files are complete. */
static void link_loc(uint64_t gid, uint64_t loc, int32_t rank, void *ud)
{
	char from[4400], to[4400];
	(void)ud;
	snprintf(from, sizeof(from), "%.4000s/ranks/rank%d/%llu.evt", tr_g.dir, (int)rank, (unsigned long long)loc);
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
	p.def_chunk_size = 1u << 20;
	p.max_chunks = 4;
	snprintf(d, sizeof(d), "%s/traces", tr_g.dir);
	mkdir(tr_g.dir, 0755);
	mkdir(d, 0755);
	if (otf2w_archive_open(&p, &a) != OTF2W_OK)
		return;
	otf2w_archive_set_memory(a, &tr_memory, NULL);
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

/* traces.def + traces.otf2 (+ evt links) of the unified archive in dir:
 * the definitions are written by write_defs into a temporary archive whose
 * global files are then moved into place (the anchor last). */
static int write_unified_files(const char *dir, void (*write_defs)(otf2w_gdef_writer *, void *), void *ud)
{
	otf2w_archive_params p;
	otf2w_archive *a;
	otf2w_gdef_writer *g;
	char tmp[4200], from[8400], to[8400];

	snprintf(tmp, sizeof(tmp), "%.4000s/.tracer-unify-%d", dir, (int)getpid());
	memset(&p, 0, sizeof(p));
	p.path = tmp;
	p.name = "traces";
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = 1u << 20;
	p.max_chunks = 4;
	p.machine_name = tr_proc.hostname;
	p.creator = "libtracer";
	p.description = "libtracer (LD_PRELOAD) trace, MPI unified";
	if (otf2w_archive_open(&p, &a) != OTF2W_OK || otf2w_archive_get_gdef_writer(a, &g) != OTF2W_OK) {
		tr_log_error("cannot write the unified definitions in %s", tmp);
		return -1;
	}
	otf2w_archive_set_memory(a, &tr_memory, NULL);
	snprintf(to, sizeof(to), "%s/traces", dir);
	mkdir(to, 0755);
	write_defs(g, ud);
	otf2w_status st = otf2w_archive_close(a);
	if (st != OTF2W_OK) {
		tr_log_error("writing the unified definitions: %s", otf2w_status_str(st));
		tr_rm_rf(tmp);
		return -1;
	}
	/* per-location files of locations no rank wrote (ranks that did not
	 * unify): the empty ones of the temporary archive */
	snprintf(from, sizeof(from), "%s/traces", tmp);
	DIR *dd = opendir(from);
	if (dd) {
		struct dirent *e;
		while ((e = readdir(dd))) {
			char f[8800], t[8800];
			struct stat st2;
			if (e->d_name[0] == '.')
				continue;
			snprintf(f, sizeof(f), "%s/%s", from, e->d_name);
			snprintf(t, sizeof(t), "%s/traces/%s", dir, e->d_name);
			if (lstat(t, &st2) != 0)
				rename(f, t);
		}
		closedir(dd);
	}
	snprintf(from, sizeof(from), "%s/traces.def", tmp);
	snprintf(to, sizeof(to), "%s/traces.def", dir);
	rename(from, to);
	snprintf(from, sizeof(from), "%s/traces.otf2", tmp);
	snprintf(to, sizeof(to), "%s/traces.otf2", dir);
	int ret = 0;
	if (rename(from, to)) {
		tr_log_error("cannot create %s: %s", to, strerror(errno));
		ret = -1;
	}
	tr_rm_rf(tmp);
	return ret;
}

static void online_defs(otf2w_gdef_writer *g, void *ud)
{
	tr_defs_write_unified(g, link_loc, NULL);
}

/* Rank 0 after unification. */
static void write_unified_global(void)
{
	write_unified_files(tr_g.dir, online_defs, NULL);
}

/* Called by tr_defs_install_unified's caller path (MPI_Finalize). */
void tr_archive_unified_installed(void)
{
	if (!tr_g.active || tr_g.finished)
		return;
	tr_lock(&tr_g.lock);
	write_unified_local();
	tr_unlock(&tr_g.lock);
}

/* ---- end of an MPI run: the last rank to end writes the unified anchor ----
 * Every rank that unified writes rank<r>.end (its final time range on rank
 * 0's clock and its event count) under an flock of rank-end.lock, then
 * counts the end files: the one that completes the set writes traces.def +
 * traces.otf2, whose ClockProperties then cover every event of every rank
 * (also those after MPI_Finalize), and prints the run's one exit line. */

struct run_end {
	uint64_t first, last, events;
	uint32_t ranks;
};

static int read_end(const char *path, uint64_t v[3])
{
	char b[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	unsigned long long a, c, d;
	if (sscanf(b, "%llu %llu %llu", &a, &c, &d) != 3)
		return -1;
	v[0] = a;
	v[1] = c;
	v[2] = d;
	return 0;
}

/* Crash path of a rank that unified (a crash after MPI_Finalize): its end
 * file without a time range (its events stay within the range it had at
 * unification, unless more came after), so that the last rank still
 * completes the set. Async-signal-safe. */
static void run_end_mark_crashed(uint64_t events)
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
	b[n++] = '\n';
	snprintf(tmp, sizeof(tmp), "%.4000s/ranks/.rank%d.end", tr_g.dir, tr_proc.rank);
	snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, tr_proc.rank);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int ok = write(fd, b, (size_t)n) == n;
	close(fd);
	if (ok)
		rename(tmp, p);
}

/* 1 when this rank ended last (tot filled, unified set widened). */
static int run_end_last(uint64_t first, uint64_t last, uint64_t events, struct run_end *tot)
{
	char p[4400], tmp[4400];
	int size = tr_proc.size > 0 ? tr_proc.size : 1, ret = 0;
	snprintf(p, sizeof(p), "%.4000s/ranks/rank-end.lock", tr_g.dir);
	int lfd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return tr_proc.rank == 0;   /* no lock possible: rank 0 writes, as before */
	/* bounded (10 s): a rank holds it for a few file operations only */
	struct timespec ms = { 0, 1000000 };
	int locked = 0;
	for (int i = 0; i < 10000 && !(locked = flock(lfd, LOCK_EX | LOCK_NB) == 0); i++)
		nanosleep(&ms, NULL);
	snprintf(tmp, sizeof(tmp), "%.4000s/ranks/.rank%d.end", tr_g.dir, tr_proc.rank);
	snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, tr_proc.rank);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		char b[128];
		int n = snprintf(b, sizeof(b), "%llu %llu %llu\n", (unsigned long long)first,
				 (unsigned long long)last, (unsigned long long)events);
		int ok = write(fd, b, (size_t)n) == n;
		close(fd);
		if (ok)
			rename(tmp, p);
	}
	memset(tot, 0, sizeof(*tot));
	tot->first = UINT64_MAX;
	int have = 0;
	for (int r = 0; r < size; r++) {
		uint64_t v[3];
		snprintf(p, sizeof(p), "%.4000s/ranks/rank%d.end", tr_g.dir, r);
		if (read_end(p, v))
			break;
		have++;
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
			unlink(p);
		}
		snprintf(p, sizeof(p), "%.4000s/ranks/rank-end.lock", tr_g.dir);
		unlink(p);
	}
	close(lfd);   /* releases the lock */
	return ret;
}

/* ---- a run that ends without MPI_Finalize: one rank starts the merge ----
 * The command (tracer-merge --wait 30 --ranks P DIR, environment without
 * LD_PRELOAD) is prepared at MPI_Init by wrappers/mpi, so that a rank can
 * start it from the crash path: O_EXCL on ranks/merge.started elects one
 * rank, vfork + execve start the tool detached (setsid), its output goes to
 * ranks/tracer-merge.log. Async-signal-safe. */

static const struct tr_helper *tr_merge;

void tr_archive_set_merge(const struct tr_helper *merge)
{
	tr_merge = merge;
}

static void start_merge(void)
{
	char p[4400];
	if (!tr_g.mpi_expected || tr_g.unified || tr_proc.size <= 1)
		return;
	snprintf(p, sizeof(p), "%.4000s/ranks/merge.started", tr_g.dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return;   /* another rank started it */
	close(fd);
	if (!tr_merge) {
		tr_log_sigsafe("rank %d: the run ended without MPI_Finalize: run tracer-merge %s to get one "
			       "archive of every rank", tr_proc.rank, tr_g.shown);
		return;
	}
	if (tr_helper_spawn(tr_merge) > 0)
		tr_log_sigsafe("rank %d: the run ended without MPI_Finalize: %s/traces.otf2 is being merged from every "
			       "rank's archive by tracer-merge (log: %s)", tr_proc.rank, tr_g.shown, tr_merge->log);
}

/* ---- shut-down ---- */

static uint64_t dir_bytes(const char *dir, const char *name)
{
	char p[8400];
	struct stat st;
	uint64_t sum = 0;
	const char *sfx[] = { ".otf2", ".def", ".marker" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s%s", dir, name, sfx[i]);
		if (stat(p, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	/* getdents64, not opendir: this runs on tracer-io, which must never
	 * call the program's malloc (its locks may be held by the thread that
	 * waits for us: a termination signal that interrupted the allocator) */
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int d = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	long got;
	while (d >= 0 && (got = syscall(SYS_getdents64, d, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, 2);
			const char *e = buf + off + 19;
			off += reclen;
			if (e[0] == '.')
				continue;
			char f[8800];
			snprintf(f, sizeof(f), "%s/%s", p, e);
			if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
				sum += (uint64_t)st.st_size;
		}
	}
	if (d >= 0)
		close(d);
	return sum;
}

static void emergency(int status, int sig);

/* ---- the shut-down's file work on the tracer-io thread ---- */

struct save_call {
	int ret, err;
};

static void tdefs_save_io(void *p)
{
	struct save_call *c = p;
	c->ret = tr_defs_save(tr_tdefs_path, 0);
	c->err = errno;
}

struct end_call {
	uint64_t first, last, events;
	struct run_end run;
	int last_rank;
};

static void run_end_io(void *p)
{
	struct end_call *c = p;
	c->last_rank = run_end_last(c->first, c->last, c->events, &c->run);
}

struct bytes_call {
	const char *dir, *name;
	uint64_t bytes;
};

static void dir_bytes_io(void *p)
{
	struct bytes_call *c = p;
	c->bytes = dir_bytes(c->dir, c->name);
}

/* The text of the first recording error (for the summary). */
static char tr_first_error[512];

/* Count an error of the archive; 1 for the first one (its text is kept and
 * the caller may print it). No lock, no allocation. */
int tr_error_note(otf2w_status s)
{
	if (s == OTF2W_E_STOPPED)
		return 0;   /* counted by the writer as dropped */
	if (__atomic_fetch_add(&tr_g.errors, 1, __ATOMIC_RELAXED) != 0)
		return 0;
	tr_g.first_error = s;
	const char *m = s == OTF2W_E_IO && tr_g.ar ? otf2w_archive_error(tr_g.ar) : otf2w_status_str(s);
	size_t i = 0;
	for (; m && m[i] && i < sizeof(tr_first_error) - 1; i++)
		tr_first_error[i] = m[i];
	tr_first_error[i] = 0;
	return 1;
}

/* The anchor and the global definitions exist and are not empty: a reader
 * can open the archive. */
static int readable_anchor(const char *dir, const char *name)
{
	char p[8400];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s.otf2", dir, name);
	if (stat(p, &st) != 0 || st.st_size == 0)
		return 0;
	snprintf(p, sizeof(p), "%s/%s.def", dir, name);
	return stat(p, &st) == 0 && st.st_size > 0;
}

/* ProgramEnd on the master location (owned by the caller: stopped or self). */
static void write_program_end(int status, int have_status, int crash)
{
	struct tr_thread *m = tr_g.master;
	if (!m || !m->w || m->closed || m->state == TR_T_DEAD || !have_status)
		return;
	if (!crash)
		tr_thread_ending(m);   /* TRACER_ON_FULL=stop: room for ProgramEnd */
	uint64_t now = tr_time();
	tr_thread_close_open_regions(m, now);
	uint64_t last = otf2w_evt_writer_last_time(m->w);
	otf2w_status st = otf2w_evt_program_end(m->w, NULL, now > last ? now : last, status);
	if (st != OTF2W_OK)
		tr_log_sigsafe("error: ProgramEnd not written: %s", otf2w_status_str(st));
}

void tr_finish_status(int status, int have_status)
{
	if (!tr_g.initialized || !tr_g.active || tr_g.pid != getpid())
		return;
	struct tr_thread *me = tr_tls_self;
	if (tr_tls_internal > 0 || (me && me->in_record)) {
		/* exit() from a signal handler that interrupted the tracer on this
		 * thread (it may hold our locks): the lock-free path */
		if (!tr_g.finishing)
			emergency(have_status ? status : 0, 0);
		return;
	}
	if (__atomic_exchange_n(&tr_g.finishing, 1, __ATOMIC_SEQ_CST)) {
		/* another thread is writing the archive (e.g. exit() and _exit()
		 * racing): wait for it, bounded, so the process does not end under it */
		struct timespec ms = { 0, 1000000 };
		for (int i = 0; i < 20000 && !tr_g.finished && tr_g.finisher != gettid(); i++)
			nanosleep(&ms, NULL);
		return;
	}
	tr_g.finisher = gettid();
	struct tr_thread *self = tr_tls_self;
	int saved = errno;
	sigset_t oldmask;
	tr_signals_block(&oldmask);
	tr_tls_creating++;
	if (self)
		self->guard++;

	tr_threads_stop_all(self, 1);
	/* thread_fini and open regions of every thread (self included).
	 * Other threads: first room for the last records (ON_FULL=stop) and
	 * the Leaves of their open regions, then the thread_fini hooks, which
	 * write the ThreadEnd (wrappers/pthread): ThreadEnd stays the last
	 * record of the location. (In calling-context mode the regions are
	 * closed by sampling's thread_fini itself; close_open_regions does
	 * nothing then.) The master's regions are closed right before its
	 * ProgramEnd by write_program_end, after its hooks. */
	uint64_t now = tr_time();
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		if (t->state != TR_T_ACTIVE && t->state != TR_T_DYING)
			continue;
		if (t != tr_g.master) {
			tr_thread_ending(t);
			tr_thread_close_open_regions(t, now);
		}
		tr_modules_thread_fini(t);
	}
	tr_modules_fini();
	write_program_end(status, have_status, 0);
	for (struct tr_thread *t = tr_g.threads; t; t = t->next)
		if (t->state == TR_T_ACTIVE)
			t->state = TR_T_DYING;
	tr_clock_final();

	uint64_t dropped = 0;
	uint64_t events = tr_threads_count_events(&dropped);
	uint32_t nloc = tr_g.nthreads;
	uint64_t range_first = 0, range_last = 0;
	if (tr_g.unified)
		tr_defs_local_range(&range_first, &range_last);

	/* (merge) while the event writers still exist: the locations' event
	 * counts and the last timestamp go into rank<r>.tdefs */
	if (tr_tdefs_path[0]) {
		struct save_call sc = { 0, 0 };
		io_call(tdefs_save_io, &sc);
		if (sc.ret) {
			errno = sc.err;
			tr_log_error("cannot write %s: %s", tr_tdefs_path, strerror(errno));
		}
	}
	tr_durable_stop();   /* no tick reads the writers any more */
	tr_lock(&tr_g.lock);
	tr_defs_write_global(tr_g.gdw, 0);
	tr_defs_write_cc_maps(tr_g.ar);
	otf2w_status st = otf2w_archive_close(tr_g.ar);
	char err[1200];
	err[0] = 0;
	if (st != OTF2W_OK)
		snprintf(err, sizeof(err), "%s (%s)", otf2w_status_str(st), otf2w_last_error());
	tr_g.ar = NULL;
	tr_g.gdw = NULL;
	tr_durable_cleanup(0);
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		t->w = NULL;
		t->state = TR_T_DEAD;
	}
	tr_unlock(&tr_g.lock);

	struct end_call ec = { range_first, range_last, events, { 0, 0, 0, 0 }, 0 };
	if (tr_g.unified)
		io_call(run_end_io, &ec);
	struct run_end run = ec.run;
	int unified_global = ec.last_rank;
	if (unified_global)
		write_unified_global();   /* opendir (malloc): not on tracer-io */
	start_merge();
	tr_g.finished = 1;
	tr_g.active = 0;

	char od[4200];
	own_dir(tr_g.dir, od, sizeof(od));
	struct bytes_call bc = { od, tr_arname, 0 };
	io_call(dir_bytes_io, &bc);
	uint64_t bytes = bc.bytes;
	drop_claim();   /* the archive exists now: the claim has served */
	/* a process tree's member: the last one unifies (tline: its summary) */
	char tline[1200];
	int tn = tr_tree_end(0, events, nloc, tline, sizeof(tline));
	int print = tr_cfg.verbose >= 1 &&
		    (!tr_g.mpi_expected || unified_global || (!tr_g.unified && tr_proc.rank <= 0) || tr_cfg.verbose >= 2);
	/* dropped in flush mode: a chunk could not be written, the buffer filled */
	uint64_t lost = tr_cfg.on_full == TR_ON_FULL_STOP ? 0 : dropped;
	char line[8800];
	int n = 0;
	int problem = 1;   /* errors and lost events: stderr; the summary: a notice */
	if (err[0]) {
		/* the summary says what the archive is worth, never a normal line */
		if (!readable_anchor(od, tr_arname))
			n = snprintf(line, sizeof(line), "tracer: error: archive %s NOT written: %s; all %llu events of "
				     "%u location%s are lost\n", tr_g.anchor, err, (unsigned long long)events, nloc,
				     nloc == 1 ? "" : "s");
		else
			n = snprintf(line, sizeof(line), "tracer: error: archive %s incomplete: %s; it opens, but "
				     "events of some of its %u locations are missing (%llu events recorded, %llu bytes "
				     "written)\n", tr_g.anchor, err, nloc, (unsigned long long)events,
				     (unsigned long long)bytes);
	} else if (tr_g.errors || lost) {
		char what[700] = "";
		if (lost)
			snprintf(what, sizeof(what), "%llu events (the buffer filled after failed writes), ",
				 (unsigned long long)lost);
		n = snprintf(line, sizeof(line), "tracer: warning: archive %s: %u locations, %llu events recorded, "
			     "%llu bytes written; data lost: %s%llu write errors (first: %s)\n", tr_g.anchor, nloc,
			     (unsigned long long)events, (unsigned long long)bytes, what,
			     (unsigned long long)tr_g.errors, tr_first_error[0] ? tr_first_error : "unknown");
	} else if (tn > 0 && !dropped && (print || strncmp(tline, "tracer: archive", 15))) {
		problem = strncmp(tline, "tracer: archive", 15) != 0;   /* a warning or error */
		n = snprintf(line, sizeof(line), "%s", tline);
	} else if (print || dropped) {
		problem = dropped != 0;
		char extra[256] = "";
		if (dropped)
			snprintf(extra, sizeof(extra), ", %llu events dropped (buffer full, TRACER_ON_FULL=stop)",
				 (unsigned long long)dropped);
		uint32_t uranks, ulocs;
		uint64_t uevents;
		if (unified_global && tr_defs_unified_totals(events, &uranks, &ulocs, &uevents))
			/* the whole run (this rank ended last): every rank's
			 * locations and events, bytes of the unified archive */
			n = snprintf(line, sizeof(line),
				     "tracer: archive %s/traces.otf2: %u MPI ranks, %u locations, %llu events, "
				     "%llu bytes%s\n", tr_g.shown, uranks, ulocs, (unsigned long long)run.events,
				     (unsigned long long)dir_bytes(tr_g.dir, "traces"), extra);
		else
			n = snprintf(line, sizeof(line), "tracer: archive %s: %u locations, %llu events, %llu bytes%s\n",
				     tr_g.anchor, nloc, (unsigned long long)events, (unsigned long long)bytes, extra);
	}
	if (n > 0 && problem)
		tr_log_write(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	else if (n > 0)
		tr_log_notice_write(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	if (self)
		self->guard--;
	tr_tls_creating--;
	tr_signals_restore(&oldmask);
	errno = saved;
}

void tr_finish(void)
{
	tr_finish_status(tr_g.exit_status, tr_g.have_exit_status);
}

/* Crash path (signal handler): no locks, no malloc. */
void tr_emergency(int sig)
{
	emergency(128 + sig, sig);
}

/* Why the emergency path runs when not at a signal (the summary line). */
static const char *tr_emerg_why;

/* A sanitizer (ASan, TSan) ends the process after its report through an
 * internal exit that skips ours: its death callback lands here. */
void tr_emergency_exit(int status, const char *why)
{
	tr_emerg_why = why;
	emergency(status, 0);
}

/* (fix) Another thread is writing the archive (a second thread crashing at
 * the same time, or a crash while another thread is in exit()): wait,
 * bounded (10 s), until it is done, so that this thread's default action
 * does not kill the process under it. Async-signal-safe. */
static void wait_other_finisher(void)
{
	pid_t me = gettid();
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 10000 && !tr_g.finished && tr_g.finisher != me; i++)
		nanosleep(&ms, NULL);
}

static void emergency(int status, int sig)
{
	if (!tr_g.initialized || !tr_g.active || tr_g.pid != getpid())
		return;
	/* (fix) checked before tr_g.ar: the full close clears tr_g.ar before
	 * it sets tr_g.finished */
	if (__atomic_load_n(&tr_g.finishing, __ATOMIC_SEQ_CST) && tr_g.finisher != gettid()) {
		wait_other_finisher();
		return;
	}
	if (!tr_g.ar)
		return;
	if (__atomic_exchange_n(&tr_g.finishing, 1, __ATOMIC_SEQ_CST)) {
		wait_other_finisher();
		return;
	}
	tr_g.finisher = gettid();
	struct tr_thread *self = tr_tls_self;
	tr_tls_creating++;
	tr_threads_stop_all(self, 0);
	tr_io_quiesce();   /* a flush running on tracer-io ends first; then no more */
	/* (fix) before anything is written: no archive locking any more. This
	 * thread may have been interrupted while holding the archive lock (chunk
	 * switch): the Leaves, ProgramEnd and global definitions below allocate
	 * chunks. Only after stop_all: another thread inside a chunk switch
	 * (inside a record) finishes it under the lock first. */
	otf2w_archive_begin_emergency(tr_g.ar);
	if (self && self->state == TR_T_ACTIVE)
		self->state = TR_T_DYING;
	/* balanced streams: Leave for every open region of the stopped threads
	 * (not for the crashing thread if it was cut inside a record) */
	uint64_t now = tr_time();
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		if (t->state != TR_T_DYING || !t->w || t->in_record)
			continue;
		tr_thread_ending_crash(t);   /* TRACER_ON_FULL=stop: room for the last records */
		if (t != tr_g.master)
			tr_thread_close_open_regions(t, now);
		/* the modules' last records (ThreadEnd: the location's last) */
		for (int i = 0; tr_g.modules_started && i < tr_g.nmodules; i++)
			if (tr_g.modules[i]->thread_fini_crash)
				tr_g.modules[i]->thread_fini_crash(t);
	}
	if (tr_g.master && !tr_g.master->in_record && tr_g.master->state == TR_T_DYING)
		write_program_end(status, 1, 1);
	uint64_t dropped = 0;
	uint64_t events = tr_threads_count_events(&dropped);
	tr_defs_write_global(tr_g.gdw, 1);
	/* definitions the modules add at the end (calling contexts) */
	for (int i = 0; tr_g.gdw && tr_g.modules_started && i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->fini_crash)
			tr_g.modules[i]->fini_crash(tr_g.gdw);
	otf2w_status st = otf2w_archive_close_emergency(tr_g.ar);
	if (tr_tdefs_path[0])
		tr_defs_save(tr_tdefs_path, 1);
	if (st == OTF2W_OK) {
		drop_claim();
		tr_durable_cleanup(1);
	}
	char tline[1200];
	int tn = tr_tree_end(1, events, tr_g.nthreads, tline, sizeof(tline));
	if (tn > 0)
		tr_log_write(tline, (size_t)tn < sizeof(tline) ? (size_t)tn : sizeof(tline) - 1);
	tr_g.finished = 1;
	tr_g.active = 0;
	if (tr_g.unified)
		run_end_mark_crashed(events);
	start_merge();
	/* the summary is a notice (stderr in the run's first process only); a
	 * failed write is a problem (stderr), said plainly */
	void (*say)(const char *, ...) = st == OTF2W_OK ? tr_log_notice_sigsafe : tr_log_sigsafe;
	const char *lost = st == OTF2W_OK ? "" : "; INCOMPLETE: ";
	const char *why = st == OTF2W_OK ? "" : otf2w_status_str(st);
	const char *tail = st == OTF2W_OK ? "" : ", events not written are lost";
	if ((tr_cfg.verbose >= 1 || st != OTF2W_OK) && sig)
		say("%sarchive %s: %u locations, %llu events (written at signal %d)%s%s%s",
		    st == OTF2W_OK ? "" : "error: ", tr_g.anchor, tr_g.nthreads,
		    (unsigned long long)events, sig, lost, why, tail);
	else if (tr_cfg.verbose >= 1 || st != OTF2W_OK)
		say("%sarchive %s: %u locations, %llu events (written by the emergency path: %s)%s%s%s",
		    st == OTF2W_OK ? "" : "error: ", tr_g.anchor, tr_g.nthreads,
		    (unsigned long long)events, tr_emerg_why ? tr_emerg_why : "exit inside the tracer",
		    lost, why, tail);
	tr_tls_creating--;
}

/* ---- fork ---- */

void tr_archive_fork_child(void)
{
	char base[4096];
	if (tr_g.ar)
		otf2w_archive_abandon(tr_g.ar);
	tr_g.ar = NULL;
	tr_g.gdw = NULL;
	if (tr_tree.on) {
		/* a part of the same tree (proctree.c), creator: the parent */
		tr_g.dir_final = 1;
		tr_g.global_writer = 1;
		if (tr_tree_fork_child(tr_g.dir) == 0) {
			set_arname();
			if (claim(tr_g.dir, tr_arname) == 1 && tr_archive_open() == 0)
				return;
		}
		tr_g.active = 0;
		return;
	}
	snprintf(base, sizeof(base), "%s", tr_g.dir);
	snprintf(tr_g.dir, sizeof(tr_g.dir), "%.4000s-fork%d", base, (int)getpid());
	snprintf(base, sizeof(base), "%s", tr_g.shown);
	snprintf(tr_g.shown, sizeof(tr_g.shown), "%.4000s-fork%d", base, (int)getpid());
	tr_g.mpi_expected = 0;
	tr_g.dir_final = 1;
	tr_g.unified = 0;
	tr_g.global_writer = 1;
	tr_proc.rank = -1;
	if (claim(tr_g.dir, "traces") < 0 || tr_archive_open() != 0) {
		tr_g.active = 0;
	}
}

/* Drop the archive without writing anything (fork child that execs right
 * away): removes the claimed directory if nothing else is in it. */
void tr_archive_discard(void)
{
	if (tr_g.ar)
		otf2w_archive_abandon(tr_g.ar);
	tr_g.ar = NULL;
	tr_g.gdw = NULL;
	tr_durable_stop();
	tr_durable_cleanup(0);
	unclaim(tr_g.dir, tr_arname);
	tr_tree_discard();
}
