/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.c - the archive life cycle of this process: opening it, the
 * writer's callbacks, the public archive API (directory, rank), fork.
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
 *
 * The other parts: archive_dir.c (choosing and claiming the directory),
 * archive_mpi.c (the unified archive of an MPI run), archive_end.c
 * (shut-down: the full close, the emergency path, the summary line).
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

struct tr_global tr_g;
struct tr_process tr_proc = { .rank = -1 };

static TR_TLS int tr_tls_flush_errno;
char tr_ar_name[64] = "traces";
/* MPI: the packed local definitions for tracer-merge (rank<r>.tdefs). */
char tr_ar_tdefs_path[4200];

/* The subdirectory of this process's own archive: ranks (MPI rank), procs
 * (part of a process tree, preload/tree/proctree.c) or none. */
const char *tr_ar_parts_dir(void)
{
	return tr_g.mpi_expected ? "ranks" : tr_tree.on ? "procs" : NULL;
}

/* Set when the archive is opened: a member of a tree other than its root
 * (the root's part becomes the archive as it is when it stays alone:
 * proctree.c, promote_single) */
static int tree_part;

int tr_ar_tree_part(void)
{
	return tree_part;
}

static void set_anchor(void)
{
	if (tr_ar_parts_dir())
		snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/%s/%s.otf2", tr_g.shown, tr_ar_parts_dir(), tr_ar_name);
	else
		snprintf(tr_g.anchor, sizeof(tr_g.anchor), "%.4000s/%s.otf2", tr_g.shown, tr_ar_name);
}

/* The packed definitions of an MPI rank and a tree's root (part 0) are
 * their own NAME.tdefs; a tree member's once a durability tick saved them
 * there. Else (every member that never ticked: a short process) they are
 * a record of DIR/procs/parts.tdefs (preload/tree/tree_files.h), no file of
 * their own; so a record there is always another part than the root. */
int tr_ar_tdefs_own;

int tr_ar_tdefs_in_own_file(void)
{
	return tr_ar_tdefs_own;
}

static int put_defs(const void *buf, size_t n, void *ud)
{
	(void)ud;
	return tr_tree_put_record('d', buf, n);
}

int tr_ar_write_tdefs(int crash)
{
	if (!tr_ar_tdefs_path[0])
		return 0;
	if (tr_ar_tdefs_in_own_file())
		return tr_defs_save(tr_ar_tdefs_path, crash);
	return tr_defs_save_with(crash, put_defs, NULL);
}

static void set_tdefs_path(void)
{
	tr_ar_tdefs_path[0] = 0;
	tr_ar_tdefs_own = !tr_tree.on || tr_g.mpi_expected || tr_tree.part == 0;
	if (tr_ar_parts_dir()) {
		snprintf(tr_ar_tdefs_path, sizeof(tr_ar_tdefs_path), "%.4000s/%s/%s.tdefs", tr_g.dir, tr_ar_parts_dir(), tr_ar_name);
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
	struct tr_lock *l = tr_calloc(1, sizeof(*l));
	*lock = l;
	return l ? 0 : -1;
}

static int cb_lock_destroy(void *ud, void *lock)
{
	tr_free(lock);
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

const otf2w_memory_callbacks tr_ar_memory = { cb_alloc, cb_free };

/* Files in a descriptor table of our own (fdtable.c), never in the
 * program's. */
static int cb_io_run(void *ud, void (*fn)(void *), void *arg)
{
	return tr_fd_private_run(fn, arg);
}

/* TRACER_DURABLE without a thread: the tick, on the recording thread. */
static uint64_t cb_io_due(void *ud, uint64_t time)
{
	return tr_durable_due(time);
}

static const otf2w_io_callbacks tr_io = { cb_io_run, cb_io_due };

/* traces, rank<r> (MPI), side<r>-<pid> (beside rank r: tr_g.rank_side)
 * or proc<N> (part of a process tree). */
void tr_ar_set_arname(void)
{
	if (tr_g.mpi_expected && tr_g.rank_side)
		snprintf(tr_ar_name, sizeof(tr_ar_name), "side%d-%d", tr_proc.rank, (int)tr_self_pid());
	else if (tr_g.mpi_expected)
		snprintf(tr_ar_name, sizeof(tr_ar_name), "rank%d", tr_proc.rank);
	else if (tr_tree.on)
		snprintf(tr_ar_name, sizeof(tr_ar_name), "proc%d", tr_tree.part);
	else
		snprintf(tr_ar_name, sizeof(tr_ar_name), "traces");
}

int tr_archive_open(void)
{
	otf2w_archive_params p;
	char desc[512];
	uint64_t chunks = tr_cfg.buffer_bytes / tr_cfg.chunk_bytes;

	char od[4200];
	memset(&p, 0, sizeof(p));
	tr_ar_set_arname();
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	snprintf(desc, sizeof(desc), "libtracer (LD_PRELOAD) trace of %s", tr_proc.progname);
	/* a process tree's part (not its root): its definitions are the
	 * packed ones (proc<N>.tdefs, chunk sizes included), unified by
	 * tracer-merge; no anchor, no global or empty local definitions files
	 * of its own (three files less to create per process), and its event
	 * files in the one directory of all parts' (procs/parts/<location>.evt:
	 * location ids are the part's number << 32 | thread, so the names are
	 * unique) instead of a directory of its own (a mkdir less: 0.4 ms on
	 * an ext4) */
	tree_part = !tr_g.mpi_expected && tr_tree.on && tr_tree.part > 0;
	p.path = od;
	p.name = tree_part ? TR_AR_PARTS_EVENTS : tr_ar_name;
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = TR_DEF_CHUNK_BYTES;
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
	otf2w_archive_set_memory(tr_g.ar, &tr_ar_memory, NULL);
	otf2w_archive_set_io(tr_g.ar, &tr_io, NULL);
	otf2w_archive_set_events_only(tr_g.ar, tree_part);
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
	/* a member of a process tree joins its directory (proctree.c). Its
	 * part number is its own (the tree's counter); the claim only tells
	 * tracer-merge about a member killed before it wrote anything: with
	 * TRACER_DURABLE its event files in procs/parts do (made at its first
	 * record) and so does its live entry, so it
	 * claims nothing (a file less to create and remove per process) */
	int joined = tr_tree_prepare(tr_g.dir, sizeof(tr_g.dir)) == 1;
	tr_log_parent_settle(joined && tr_tree.by_parent);
	if (joined) {
		tr_ar_set_arname();
		snprintf(tr_g.shown, sizeof(tr_g.shown), "%s", tr_g.dir);
		if (!tr_durable_on() && tr_ar_claim(tr_g.dir, tr_ar_name) != 1) {
			tr_log_error("%s: cannot join the process tree's archive there (%s); tracing disabled",
				     tr_g.dir, strerror(errno));
			return -1;
		}
	} else if (tr_ar_choose_dir()) {
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
		tr_ar_own_dir(dir, od, sizeof(od));
		struct claim_call cc = { dir, tr_ar_name, 0 };
		tr_fd_private_call(tr_ar_claim_io, &cc);
		if (cc.ret >= 0 && otf2w_archive_set_path(tr_g.ar, od) == OTF2W_OK) {
			tr_ar_unclaim(tr_g.dir, tr_ar_name);
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

void tr_set_rank(int rank, int size)
{
	if (!tr_cfg.mpi)
		return;
	tr_proc.size = size;
	tr_g.mpi_init = 1;
	if (rank == tr_proc.rank) {
		if (tr_g.rank_side)
			tr_ar_side_to_rank();
		tr_g.dir_final = 1;
		return;
	}
	if (tr_tree.on && tr_tree.creator >= 0 && !tr_g.mpi_expected && size == 1) {
		/* a singleton (MPI_Init without a launcher) that is a part of a
		 * process tree (a traced shell or script started it): it stays
		 * that part, its locations and packed definitions keep the
		 * part's number (tracer-merge unifies it with the others) */
		tr_g.dir_final = 1;
		tr_log_debug("MPI singleton: stays part %d of the process tree", tr_tree.part);
		return;
	}
	tr_lock(&tr_g.lock);
	int old = tr_proc.rank;
	tr_proc.rank = rank;
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		uint64_t id = tr_location_id(t->index);
		if (id == t->location)
			continue;   /* (a singleton's rank 0: its ids are already these) */
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
			     tr_ar_name);
}

void tr_set_global_writer(int yes)
{
	tr_g.global_writer = yes;
}

/* ---- fork ---- */

/* The fork child's archive (tr_atfork_child). defer: a part of a tree may
 * wait for the child's first traced call (tr_archive_fork_open then):
 * returns 1 when it does (its part number and live entry are taken,
 * nothing is opened), else 0. */
int tr_archive_fork_child(int defer)
{
	char base[4096];
	if (tr_g.ar)
		otf2w_archive_abandon(tr_g.ar);
	tr_g.ar = NULL;
	tr_g.gdw = NULL;
	if (tr_tree.on || tr_g.mpi_expected) {
		/* a part of the same tree (proctree.c), creator: the parent; or a
		 * rank's fork child: a side process of the rank, its archive
		 * beside the rank's (never a rank: MPI is not usable in it) */
		tr_g.dir_final = 1;
		tr_g.global_writer = 1;
		int ok = 1;
		if (tr_tree.on) {
			ok = tr_tree_fork_child(tr_g.dir) == 0;
		} else {
			tr_g.rank_side = 1;
			tr_g.mpi_init = 0;
			tr_g.unified = 0;
		}
		if (ok) {
			tr_ar_set_arname();
			/* a tree's part: its number, from the tree's counter, is its
			 * own - no claim file (a create and an unlink less per fork) */
			if (defer && tr_tree.on && !tr_g.mpi_expected)
				return 1;
			if (((tr_tree.on && !tr_g.mpi_expected) || tr_ar_claim(tr_g.dir, tr_ar_name) == 1) &&
			    tr_archive_open() == 0)
				return 0;
		}
		tr_g.active = 0;
		tr_live_update();
		return 0;
	}
	snprintf(base, sizeof(base), "%s", tr_g.dir);
	snprintf(tr_g.dir, sizeof(tr_g.dir), "%.4000s-fork%d", base, (int)tr_self_pid());
	snprintf(base, sizeof(base), "%s", tr_g.shown);
	snprintf(tr_g.shown, sizeof(tr_g.shown), "%.4000s-fork%d", base, (int)tr_self_pid());
	tr_g.mpi_expected = 0;
	tr_g.dir_final = 1;
	tr_g.unified = 0;
	tr_g.global_writer = 1;
	tr_proc.rank = -1;
	if (tr_ar_claim(tr_g.dir, "traces") < 0 || tr_archive_open() != 0) {
		tr_g.active = 0;
		tr_live_update();
	}
	return 0;
}

/* The archive of a fork child whose part waited (tr_archive_fork_child
 * returned 1). */
void tr_archive_fork_open(void)
{
	if (tr_archive_open() != 0) {
		tr_g.active = 0;
		tr_live_update();
	}
}

/* Drop the archive without writing anything (fork child that execs right
 * away, with the environment envp): removes the claimed directory if
 * nothing else is in it. */
void tr_archive_discard(char *const envp[])
{
	if (tr_g.ar)
		otf2w_archive_abandon(tr_g.ar);
	tr_g.ar = NULL;
	tr_g.gdw = NULL;
	tr_durable_stop();
	tr_durable_cleanup(0);
	/* its event files (TRACER_DURABLE maps them at the first record):
	 * else an empty part that tracer-merge takes for a killed process */
	char ev[4400];
	if (tree_part) {
		char od[4200];
		tr_ar_own_dir(tr_g.dir, od, sizeof(od));
		for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
			static const char *const ext[] = { "evt", "def" };
			for (int k = 0; k < 2; k++) {
				snprintf(ev, sizeof(ev), "%.4100s/%s/%llu.%s", od, TR_AR_PARTS_EVENTS,
					 (unsigned long long)t->location, ext[k]);
				tr_real.unlink(ev);
			}
		}
	} else {
		tr_archive_own_path(ev, sizeof(ev), "");
		tr_rm_rf(ev);
	}
	tr_ar_unclaim(tr_g.dir, tr_ar_name);
	tr_tree_discard(envp);
}
