/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * durable.c - TRACER_DURABLE=<interval> (unset: 250 ms, the default; off: the
 * flush writer of format/buffer.c): a readable archive after SIGKILL.
 *
 * What survives the process (written by the tick, on whichever thread of
 * the program records when an interval has passed; no thread of ours):
 * - the event files themselves: every location records into shared
 *   mappings of its .evt file (format/mapped.c), so every record is in the
 *   page cache as soon as it is stored;
 * - NAME.durable, a small mapped index: for every location, the chunk of
 *   its file and the bytes of it that held whole records at the last tick
 *   (records stored after the tick may be cut by the kill: recovery ends
 *   the location there);
 * - NAME.recovery.otf2 + NAME.recovery.def (+ NAME.recovery/ with empty
 *   local files): a complete archive of the definitions, replaced (written
 *   aside, then renamed over: write_snapshot) at a tick when definitions
 *   or locations were added since the last one.
 * Every interval the tick first reads the positions, then writes the
 * definitions, then publishes the positions: every event before a
 * published position refers only to definitions in the snapshot.
 * `tracer recover DIR` (tools/recover.c) turns these into the archive.
 * A normal end (and the crash paths that write the archive) removes them.
 *
 * The tick's files are opened in a descriptor table of our own
 * (tr_fd_private_run, preload/core/fdtable.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"
#include "durable_index.h"

static uint64_t dur_interval_ns;      /* 0 = off */
static int dur_parsed;
static struct tr_durable_index *dur_idx;   /* mapped NAME.durable */
static int dur_stopped;
static uint64_t dur_sig;              /* definitions + locations at the last snapshot */
static int dur_snap_ok;
static int dur_snap_behind;   /* a snapshot deferred: the modules' counts are past the one out */
static int dur_urgent;        /* the tick of a thread about to wait (under dur_ticking): never deferred */
/* The archive opened in durable mode: ticks on the program's own threads
 * (the event writers call tr_durable_due before a record at or after
 * dur_next, archive clock ticks; the first thread there that may tick
 * runs it). */
static int dur_on;
static uint64_t dur_next;
static uint64_t dur_interval_ticks;
static int dur_ticking;               /* a thread runs the tick */
static int dur_first_left;            /* ticks at the next record until a position is out */
static uint64_t dur_gen_saved;        /* tr_defs_generation() of the last snapshot */
static int dur_wrote;                 /* a snapshot was (begun to be) written: cleanup has work */

static void parse(void)
{
	if (dur_parsed)
		return;
	dur_parsed = 1;
	const char *v = tr_getenv("TRACER_DURABLE");
	int b;
	uint64_t ns;
	if (!v || !*v) {
		dur_interval_ns = TR_DURABLE_DEFAULT_NS;   /* on by default */
		return;
	}
	if (tr_cfg_parse_bool(v, &b) == 0) {
		dur_interval_ns = b ? TR_DURABLE_DEFAULT_NS : 0;
	} else if (tr_cfg_parse_duration(v, &ns) == 0 && ns >= 10000000ull && ns <= 60000000000ull) {
		dur_interval_ns = ns;
	} else {
		tr_log_error("TRACER_DURABLE=%s: expected off, on or an interval 10ms..60s (250ms, 1s); using 250ms", v);
		dur_interval_ns = TR_DURABLE_DEFAULT_NS;
	}
}

int tr_durable_on(void)
{
	parse();
	return dur_interval_ns != 0;
}

/* ---- the tick (on a program thread, perhaps in its SIGPROF handler) ---- */

static uint64_t defs_signature(void)
{
	uint64_t s = tr_g.nthreads;
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		s = s * 1000003u + tr_defs_count(c);
	return s * 1000003u + tr_defs_cc_mapped();
}

static int open_index(void)
{
	char p[4400];
	tr_archive_own_path(p, sizeof(p), ".durable");
	int fd = tr_real.open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t sz = sizeof(struct tr_durable_index);
	int e = tr_real.posix_fallocate(fd, 0, (off_t)sz);
	void *m = e ? MAP_FAILED : tr_real.mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	tr_real.close(fd);
	if (m == MAP_FAILED) {
		tr_real.unlink(p);
		return -1;
	}
	dur_idx = m;
	dur_idx->chunk_size = tr_cfg.chunk_bytes;
	dur_idx->pid = (uint64_t)tr_self_pid();
	dur_idx->interval_ns = dur_interval_ns;
	memcpy(dur_idx->magic, TR_DURABLE_MAGIC, sizeof(dur_idx->magic));
	return 0;
}

/* Moves the files of NAME.recovery.new/ into NAME.recovery/ (one rename
 * each: a local definitions file is whole, the old or the new one). */
static void move_entry(const char *path, const char *name, int type, void *ud)
{
	(void)type;
	char to[4700];
	snprintf(to, sizeof(to), "%s/%s", (const char *)ud, name);
	tr_real.rename(path, to);
}

/* The definitions as a complete archive NAME.recovery (its event files are
 * empty; recovery takes its anchor and NAME.def). Never rewritten in place:
 * written whole as NAME.recovery.new (its anchor last: the new snapshot is
 * complete once NAME.recovery.new.otf2 exists), then renamed over the old
 * one file by file, the anchor last. A kill before the new anchor leaves
 * the previous snapshot whole; after it, `tracer recover` finishes the
 * renames (tools/recover.c). Runs in the tick's descriptor table. */
static int write_snapshot(void)
{
	char od[4400], name[128], from[4500], to[4500];
	tr_archive_own_path(od, sizeof(od), "");
	char *slash = strrchr(od, '/');
	if (!slash)
		return -1;
	snprintf(name, sizeof(name), "%s.recovery.new", slash + 1);
	*slash = 0;
	otf2w_archive_params p;
	memset(&p, 0, sizeof(p));
	p.path = od;
	p.name = name;
	p.event_chunk_size = tr_cfg.chunk_bytes;
	p.def_chunk_size = TR_DEF_CHUNK_BYTES;
	p.machine_name = tr_proc.hostname;
	p.creator = "libtracer";
	p.description = "libtracer trace recovered after the process was killed (tracer recover)";
	otf2w_archive *a;
	otf2w_gdef_writer *g;
	if (otf2w_archive_open(&p, &a) != OTF2W_OK)
		return -1;
	otf2w_archive_set_property(a, "TRACER::RUN_END", "killed (SIGKILL or another uncatchable end); "
				   "recovered by tracer recover");
	if (otf2w_archive_get_gdef_writer(a, &g) != OTF2W_OK) {
		otf2w_archive_discard(a);
		return -1;
	}
	/* A process tree's part: its definitions are in its .tdefs (written
	 * with this snapshot: tr_archive_save_tdefs), from which tracer-merge
	 * unifies it, killed or not; its archive has none of its own (events
	 * only, like the part of a normal end). The snapshot's own global
	 * definitions stay empty then: one write of every definition a tick,
	 * not two. */
	if (!tr_ar_tree_part())
		tr_defs_write_global(g, 0);
	tr_defs_write_cc_maps(a);   /* sampled calling contexts: node -> definition */
	if (otf2w_archive_close(a) != OTF2W_OK)
		return -1;
	/* the new snapshot is whole: over the old one, the anchor last */
	tr_archive_own_path(from, sizeof(from), ".recovery.new.def");
	tr_archive_own_path(to, sizeof(to), ".recovery.def");
	if (tr_real.rename(from, to) != 0)
		return -1;
	tr_archive_own_path(from, sizeof(from), ".recovery.new");
	tr_archive_own_path(to, sizeof(to), ".recovery");
	mkdir(to, 0755);
	tr_dir_each(from, move_entry, to);
	rmdir(from);
	tr_archive_own_path(from, sizeof(from), ".recovery.new.otf2");
	tr_archive_own_path(to, sizeof(to), ".recovery.otf2");
	return tr_real.rename(from, to);
}

/* The modules' definitions for one snapshot (durable_snapshot, with the
 * registry held), and whether their records need a new one
 * (durable_pending). */
static int modules_pending(void)
{
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->durable_pending && tr_g.modules[i]->durable_pending())
			return 1;
	return 0;
}

static void modules_snapshot(void)
{
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->durable_snapshot)
			tr_g.modules[i]->durable_snapshot();
}

static uint64_t dur_last_pub;   /* when positions were last published (CLOCK_MONOTONIC ns) */
/* The last snapshot written: when it ended and what it cost (CLOCK_MONOTONIC
 * ns). The next comes no sooner than TR_DURABLE_SNAP_SHARE times its cost
 * after it (at most 16 intervals): a run that defines something at every
 * tick (new sampled contexts) spends at most 1/TR_DURABLE_SNAP_SHARE of
 * its time on snapshots (up to snapshots of 80 ms at the default
 * interval), and its positions are published that much less often. */
#define TR_DURABLE_SNAP_SHARE 50
static uint64_t dur_snap_end, dur_snap_cost;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One location's position in the mapped index (recovery reads a slot
 * only while its state is VALID). */
static void slot_publish(struct tr_durable_slot *s, uint64_t chunk, uint64_t bytes)
{
	__atomic_store_n(&s->state, 0, __ATOMIC_RELEASE);
	s->chunk = chunk;
	s->bytes = bytes;
	__atomic_store_n(&s->state, TR_DURABLE_VALID, __ATOMIC_RELEASE);
}

/* Returns the positions published (0: none, e.g. nothing recorded yet). */
static uint32_t tick(void)
{
	if (dur_stopped || !tr_g.ar || tr_g.finishing)
		return 0;
	if (!dur_idx && open_index() != 0)
		return 0;
	uint64_t t1 = mono_ns();
	/* 1. committed positions now (static: 160 KiB, on no program thread's
	 * stack - a thread made with a small stack runs the tick too; one tick
	 * at a time: dur_ticking, or the sampler's helper alone) */
	static struct tr_durable_slot now[TR_DURABLE_SLOTS] TR_BIG_BSS;
	static struct tr_thread *now_thr[TR_DURABLE_SLOTS] TR_BIG_BSS;
	uint32_t n = 0;
	for (struct tr_thread *t = __atomic_load_n(&tr_g.threads, __ATOMIC_ACQUIRE); t && n < TR_DURABLE_SLOTS;
	     t = t->next) {
		uint64_t chunk, bytes;
		otf2w_evt_writer *w = __atomic_load_n(&t->w, __ATOMIC_ACQUIRE);
		if (!w || __atomic_load_n(&t->closed, __ATOMIC_ACQUIRE))
			continue;
		if (otf2w_evt_writer_durable_pos(w, &chunk, &bytes) != 0)
			continue;   /* switching windows or nothing recorded yet: next tick */
		now_thr[n] = t;
		now[n].location = t->location;
		now[n].chunk = chunk;
		now[n].bytes = bytes;
		now[n].state = TR_DURABLE_VALID;
		n++;
	}
	/* 2. definitions, when something was added: the registry, and what the
	 * modules define for this snapshot only (sampled contexts whose symbols
	 * are not read yet: placeholders; VT class groups), all of it referring
	 * to what was recorded before the positions above. The registry is held
	 * meanwhile (program threads defining something wait for the write). */
	tr_defs_provisional_begin();
	uint64_t sig = defs_signature() * 1000003u + tr_defs_version();
	modules_snapshot();
	int tail_ok = tr_defs_tail_splice() == 0;   /* (the modules' lasting snapshot definitions) */
	sig = sig * 1000003u + defs_signature();
	int saved = 1;
	uint64_t t_snap = mono_ns();
	uint64_t gap = TR_DURABLE_SNAP_SHARE * dur_snap_cost;
	if (gap > 16 * dur_interval_ns)
		gap = 16 * dur_interval_ns;
	if ((!dur_snap_ok || sig != dur_sig) && dur_snap_ok && !dur_urgent && t_snap - dur_snap_end < gap) {
		/* new definitions, but the last snapshot is too recent for its
		 * cost: the positions wait for the next one (at most
		 * 1/TR_DURABLE_SNAP_SHARE of the run goes to snapshots; the
		 * threads' own publishing too: publish_own) */
		saved = 0;
		__atomic_store_n(&dur_snap_behind, 1, __ATOMIC_RELEASE);
	} else if (!dur_snap_ok || sig != dur_sig) {
		/* not saved: the positions wait (they may refer to definitions
		 * the last snapshot lacks); the clock's resolution as measured
		 * over the run so far */
		tr_clock_final();
		dur_wrote = 1;
		saved = tail_ok && write_snapshot() == 0 && tr_archive_save_tdefs() == 0;
		if (saved) {
			dur_sig = sig;
			dur_snap_ok = 1;
			__atomic_store_n(&dur_snap_behind, 0, __ATOMIC_RELEASE);
		} else {
			dur_snap_ok = 0;   /* (the modules' pending counts now name a snapshot that is not out) */
		}
		dur_snap_end = mono_ns();
		dur_snap_cost = dur_snap_end - t_snap;
	}
	/* (still holding the registry: what is defined after this is not in
	 * the snapshot) */
	if (saved)
		__atomic_store_n(&dur_gen_saved, tr_defs_generation(), __ATOMIC_RELEASE);
	tr_defs_provisional_end();
	if (!saved)
		return 0;
	/* 3. publish: a slot per location (found by id, else appended) */
	for (uint32_t i = 0; i < n; i++) {
		if (now_thr[i] && !now_thr[i]->dur_slot) {
			uint32_t k = 0, used = (uint32_t)dur_idx->nslots;
			while (k < used && dur_idx->slot[k].location != now[i].location)
				k++;
			if (k < used || used < TR_DURABLE_SLOTS)
				now_thr[i]->dur_slot = k + 1;   /* (found or appended below) */
		}
		uint32_t k = 0, used = (uint32_t)dur_idx->nslots;
		while (k < used && dur_idx->slot[k].location != now[i].location)
			k++;
		if (k == used) {
			if (used >= TR_DURABLE_SLOTS)
				continue;
			dur_idx->slot[k].location = now[i].location;
			__atomic_store_n(&dur_idx->nslots, used + 1, __ATOMIC_RELEASE);
		}
		slot_publish(&dur_idx->slot[k], now[i].chunk, now[i].bytes);
	}
	dur_idx->ticks++;
	uint64_t t2 = mono_ns();
	/* (the tick may run in a SIGPROF handler: the async-signal-safe log) */
	if (tr_cfg.verbose >= 2 && dur_last_pub && t2 - dur_last_pub > 2 * dur_interval_ns)
		tr_log_sigsafe("[%d/%d] TRACER_DURABLE: positions published %llu us after the last (the tick took %llu us)",
			       (int)tr_self_pid(), (int)gettid(), (unsigned long long)(t2 - dur_last_pub) / 1000,
			       (unsigned long long)(t2 - t1) / 1000);
	else if (tr_cfg.verbose >= 2 && t2 - t1 > 1000000)
		tr_log_sigsafe("[%d/%d] TRACER_DURABLE: a tick took %llu us", (int)tr_self_pid(), (int)gettid(),
			       (unsigned long long)(t2 - t1) / 1000);
	dur_last_pub = t2;
	return n;
}

static void tick_io(void *arg)
{
	*(uint32_t *)arg = tick();
}

/* The tick on the calling program thread (under dur_ticking): nothing it
 * calls is recorded, its files in a table of their own, errno kept. */
static uint64_t dur_last_tick;   /* when a program thread last ticked (archive clock) */

static void tick_here(struct tr_thread *t)
{
	__atomic_store_n(&dur_last_tick, tr_time(), __ATOMIC_RELEASE);
	int e = *t->errnop, g = t->guard;
	uint32_t pub = 0;
	t->guard = 2;
	tr_fd_private_call(tick_io, &pub);
	t->guard = g;
	*t->errnop = e;
	if (pub)
		dur_first_left = 0;
}

/* ---- the tick on the program's threads ----
 * Called by a location's event writer (otf2w_io_callbacks.due) on its own
 * thread, between two records, when its record is at or after the time
 * this returned last. The tick runs only in plain context: at most one
 * tracer call deep (a wrapper's record, or ProgramBegin in the
 * constructor, or the sample record of a SIGPROF handler that
 * interrupted the program's own code; the thread holds no lock of the
 * tracer's),
 * never while the archive ends; a thread that may not tick, or
 * finds another thread ticking, asks again a sixteenth of an interval
 * later. Nothing here waits for another thread except the registry, as
 * any definition does. */
uint64_t tr_durable_due(uint64_t now)
{
	if (!dur_on || __atomic_load_n(&dur_stopped, __ATOMIC_ACQUIRE))
		return UINT64_MAX;
	uint64_t next = __atomic_load_n(&dur_next, __ATOMIC_ACQUIRE);
	if (now < next)
		return next;
	uint64_t retry = now + dur_interval_ticks / 16;
	struct tr_thread *t = tr_tls_self;
	if (!t || t->guard > 1 || t->state != TR_T_ACTIVE || tr_g.finishing || !tr_g.active)
		return retry;
	if (__atomic_exchange_n(&dur_ticking, 1, __ATOMIC_ACQUIRE))
		return retry;
	if (!__atomic_load_n(&dur_stopped, __ATOMIC_ACQUIRE))
		tick_here(t);
	/* until a position is out (the first tick comes before the first
	 * record: ProgramBegin), the next record ticks again (a few times) */
	next = dur_first_left && dur_first_left-- ? 0 : tr_time() + dur_interval_ticks;
	__atomic_store_n(&dur_next, next, __ATOMIC_RELEASE);
	__atomic_store_n(&dur_ticking, 0, __ATOMIC_RELEASE);
	return next;
}

/* The owner thread's position into its slot (published by a tick before:
 * the slot is its location's). Under dur_ticking. */
static int publish_own(struct tr_thread *t)
{
	uint64_t chunk, bytes;
	uint32_t k = t->dur_slot - 1;
	if (!dur_idx || !t->dur_slot || k >= TR_DURABLE_SLOTS || dur_idx->slot[k].location != t->location ||
	    otf2w_evt_writer_durable_pos(t->w, &chunk, &bytes) != 0)
		return -1;
	/* after the position: every definition its events refer to existed
	 * before this read, so an unchanged generation means all are saved */
	if (tr_defs_generation() != __atomic_load_n(&dur_gen_saved, __ATOMIC_ACQUIRE) || !dur_snap_ok ||
	    __atomic_load_n(&dur_snap_behind, __ATOMIC_ACQUIRE) || modules_pending())
		return -1;
	struct tr_durable_slot *s = &dur_idx->slot[k];
	if (s->chunk != chunk || s->bytes != bytes)
		slot_publish(s, chunk, bytes);
	return 0;
}

/* often: the wait is one a program makes again and again, each time
 * after something new was defined (a shell's wait for each command): a
 * tick at most every sixteenth of an interval then, besides the first */
static void idle(struct tr_thread *t, int often)
{
	if (!dur_on || !t || !t->w || t->guard > 1 || tr_g.finishing ||
	    __atomic_load_n(&dur_stopped, __ATOMIC_ACQUIRE))
		return;
	/* a tick on another thread ends first (bounded: it may write a
	 * snapshot, a few ms) */
	struct timespec w = { 0, 100000 };
	int i = 0;
	while (__atomic_exchange_n(&dur_ticking, 1, __ATOMIC_ACQUIRE)) {
		if (++i > 200)
			return;
		tr_syscall(SYS_nanosleep, &w, NULL);   /* (no cancellation point) */
	}
	/* its position if the definitions it needs are saved; else a tick
	 * (often: when this location was never published - what it recorded
	 * is out before it blocks - or the last tick is a sixteenth of an
	 * interval old) */
	uint64_t now = tr_time();
	if (publish_own(t) != 0 &&
	    (!often || !t->dur_slot ||
	     now >= __atomic_load_n(&dur_last_tick, __ATOMIC_ACQUIRE) + dur_interval_ticks / 16)) {
		dur_urgent = 1;   /* (what it recorded is out before it blocks) */
		tick_here(t);
		dur_urgent = 0;
		__atomic_store_n(&dur_next, now + dur_interval_ticks, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&dur_ticking, 0, __ATOMIC_RELEASE);
}

void tr_durable_idle(struct tr_thread *t)
{
	idle(t, 0);
}

void tr_durable_idle_often(struct tr_thread *t)
{
	/* called by an interposed function before it passes the call on:
	 * only in plain context (not from a signal handler that interrupted
	 * the tracer), one tracer call deep like a wrapper */
	if (!t || t->guard)
		return;
	t->guard++;
	idle(t, 1);
	t->guard--;
}

/* ---- life cycle ---- */

/* Records are written from signal handlers (the sampler), which never
 * grow a window: every location's first window is reserved whole from now
 * on (a fork child's too), t's own at once. Thread context, on t. */
static int dur_whole;

void tr_durable_handler_records(struct tr_thread *t)
{
	dur_whole = 1;
	if (!dur_on || !tr_g.ar)
		return;
	otf2w_archive_set_durable_first(tr_g.ar, 0);
	otf2w_evt_writer *w = t ? t->w : NULL;
	if (w && tr_rec_begin(t)) {
		(void)otf2w_evt_writer_durable_whole(w);   /* (a failure: the next record says why) */
		tr_rec_end(t);
	}
}

void tr_durable_open(void)
{
	if (!tr_durable_on() || !tr_g.ar)
		return;
	if (!tr_g.dir_final) {
		/* MPI without a job id: the directory may still move at MPI_Init,
		 * and mapped files would pin it */
		tr_log_debug("TRACER_DURABLE: the archive directory is not final yet; durable mode off");
		return;
	}
	if (otf2w_archive_set_durable(tr_g.ar, 1) != OTF2W_OK)
		return;
	dur_stopped = 0;
	if (dur_idx)   /* fork child: the parent's index, inherited: dropped here only */
		tr_real.munmap(dur_idx, sizeof(*dur_idx));
	dur_idx = NULL;
	dur_snap_ok = 0;
	dur_snap_behind = 0;
	dur_wrote = 0;
	for (struct tr_thread *t = tr_g.threads; t; t = t->next)
		t->dur_slot = 0;   /* (a fork child: the parent's index) */
	if (!dur_whole)   /* (records written in a handler cannot grow a window) */
		otf2w_archive_set_durable_first(tr_g.ar, 4096);   /* one block (mapped.c) */
	/* no thread: the first tick at the first record (so that a process
	 * killed early is still a part of the recovered tree), in a fork child
	 * one interval later (a child that execs at once leaves nothing); then
	 * every interval, on whichever thread records then - with sampling
	 * also a thread that only computes: the sample its SIGPROF handler
	 * writes is a record (sampling/sampler.c writes one only when the
	 * signal interrupted the program's own code, never the tracer's) */
	dur_on = 1;
	dur_interval_ticks = (uint64_t)((double)dur_interval_ns * (double)tr_clock_resolution() / 1e9);
	if (dur_interval_ticks == 0)
		dur_interval_ticks = 1;
	__atomic_store_n(&dur_ticking, 0, __ATOMIC_RELEASE);
	dur_first_left = 8;
	__atomic_store_n(&dur_next, tr_time() + dur_interval_ticks, __ATOMIC_RELEASE);
}

void tr_durable_stop(void)
{
	if (!dur_interval_ns)
		return;
	/* the flag, then a running tick ends */
	__atomic_store_n(&dur_stopped, 1, __ATOMIC_RELEASE);
	/* a tick running on another thread ends first (bounded: that thread
	 * may be stopped for good, e.g. a debugger or SIGSTOP) */
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 2000 && __atomic_load_n(&dur_ticking, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
}

static void unlink_own(const char *suffix)
{
	char p[4400];
	tr_archive_own_path(p, sizeof(p), suffix);
	tr_real.unlink(p);
}

static void unlink_entry(const char *path, const char *name, int type, void *ud)
{
	(void)name;
	(void)type;
	(void)ud;
	tr_real.unlink(path);
}

/* The archive was written: the recovery files go. crash: async-signal-safe
 * (no tick runs any more: the finisher stopped the other threads, and
 * tr_durable_due refuses once the archive is finishing). */
void tr_durable_cleanup(int crash)
{
	if (!dur_interval_ns)
		return;
	dur_stopped = 1;
	if (!dur_idx && !dur_wrote)
		return;   /* no tick wrote anything (a short process) */
	char dir[4400];
	tr_archive_own_path(dir, sizeof(dir), ".recovery");
	/* every file in it (an MPI rank's snapshot also has empty files of
	 * other ranks' locations) */
	tr_dir_each(dir, unlink_entry, NULL);
	rmdir(dir);
	tr_archive_own_path(dir, sizeof(dir), ".recovery.new");
	tr_dir_each(dir, unlink_entry, NULL);
	rmdir(dir);
	unlink_own(".recovery.otf2");
	unlink_own(".recovery.def");
	unlink_own(".recovery.new.otf2");
	unlink_own(".recovery.new.otf2.part");
	unlink_own(".recovery.new.def");
	unlink_own(".durable");
	(void)crash;
}
