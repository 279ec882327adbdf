/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_end.c - shut-down: the full close of the archive, the lock-free
 * emergency path (signals, exit inside the tracer) and the summary line
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

/* ---- shut-down ---- */

static void add_size(const char *path, const char *name, int type, void *ud)
{
	struct stat st;
	(void)name;
	(void)type;
	if (tr_real.stat(path, &st) == 0 && S_ISREG(st.st_mode))
		*(uint64_t *)ud += (uint64_t)st.st_size;
}

static uint64_t dir_bytes(const char *dir, const char *name)
{
	char p[8400];
	struct stat st;
	uint64_t sum = 0;
	const char *sfx[] = { ".otf2", ".def", ".marker" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s%s", dir, name, sfx[i]);
		if (tr_real.stat(p, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	/* tr_dir_each, not opendir: this may run in our clone child (fdtable.c),
	 * which must never call the program's malloc (its locks may be held by
	 * the thread that waits for it: a termination signal that interrupted
	 * the allocator) */
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	tr_dir_each(p, add_size, &sum);
	return sum;
}

static void emergency(int status, int sig);
static void emergency_here(int status, int sig);

/* ---- the shut-down's file work, in a descriptor table of our own ---- */

/* The archive's files at a normal end, in one call of the private
 * descriptor table (a short process's end is one clone, not four): the
 * packed definitions for a unification (rank<r>.tdefs, proc<N>.tdefs:
 * while the event writers still exist, their event counts and last
 * timestamps go in), the global definitions, the close (every location's
 * files, the anchor last), then the archive's size for the summary. The
 * caller holds tr_g.lock. */
struct close_call {
	const char *od;
	int tdefs_ret, tdefs_err;
	otf2w_status st;
	uint64_t bytes;
};

static void close_io(void *p)
{
	struct close_call *c = p;
	/* (a lone root's wait: its part will likely become the archive, which
	 * reads no packed definitions; tr_ar_save_tdefs if not) */
	if (tr_ar_tdefs_path[0] && !tr_tree_lone_root()) {
		c->tdefs_ret = tr_ar_write_tdefs(0);
		c->tdefs_err = errno;
	}
	if (!tr_ar_tree_part())   /* (a part's are its packed definitions) */
		tr_defs_write_global(tr_g.gdw, 0);
	tr_defs_write_cc_maps(tr_g.ar);
	tr_ar_claim_to_anchor();
	c->st = otf2w_archive_close(tr_g.ar);
	/* (a tree's part has no files named after it: its events are in
	 * procs/parts, its definitions appended to procs/parts.tdefs) */
	c->bytes = tr_ar_tree_part() ? 0 : dir_bytes(c->od, tr_ar_name);
}

static void note_error_text(const char *a, const char *b, const char *c);

static void tdefs_io(void *p)
{
	int *err = p;
	*err = tr_ar_write_tdefs(0) != 0 ? errno : 0;
}

void tr_ar_save_tdefs(void)
{
	int err = 0;
	if (!tr_ar_tdefs_path[0])
		return;
	tr_fd_private_call(tdefs_io, &err);
	if (err)
		note_error_text("cannot write ", tr_ar_tdefs_path, strerror(err));
}

struct end_call {
	uint64_t first, last, events;
	struct run_end run;
	int last_rank;
};

static void run_end_io(void *p)
{
	struct end_call *c = p;
	c->last_rank = tr_ar_run_end_last(c->first, c->last, c->events, &c->run);
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

/* Count an error the writer did not see (its text a + b + ": " + c). */
static void note_error_text(const char *a, const char *b, const char *c)
{
	if (__atomic_fetch_add(&tr_g.errors, 1, __ATOMIC_RELAXED) != 0)
		return;
	tr_g.first_error = OTF2W_E_IO;
	const char *part[4] = { a, b, ": ", c };
	size_t k = 0;
	for (int i = 0; i < 4; i++)
		for (const char *s = part[i]; *s && k < sizeof(tr_first_error) - 1; s++)
			tr_first_error[k++] = *s;
	tr_first_error[k] = 0;
}

/* The anchor and the global definitions exist and are not empty: a reader
 * can open the archive. */
static int readable_anchor(const char *dir, const char *name)
{
	char p[8400];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s.otf2", dir, name);
	if (tr_real.stat(p, &st) != 0 || st.st_size == 0)
		return 0;
	snprintf(p, sizeof(p), "%s/%s.def", dir, name);
	return tr_real.stat(p, &st) == 0 && st.st_size > 0;
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
	/* what the parent sees: the low 8 bits of exit's value (exit(-61) is
	 * 195 to its waiter; a signal death is 128 + signal already) */
	otf2w_status st = otf2w_evt_program_end(m->w, NULL, now > last ? now : last, status & 0xff);
	if (st != OTF2W_OK && st != OTF2W_E_STOPPED)   /* stopped (a full disk): counted as dropped */
		tr_log_sigsafe("error: ProgramEnd not written: %s", otf2w_status_str(st));
}

void tr_finish_status(int status, int have_status)
{
	if (!tr_g.initialized || !tr_g.active || tr_g.pid != tr_self_pid())
		return;
	/* a fork child that made no traced call yet: its archive now (its
	 * ProgramBegin and ProgramEnd, the process in the tree) */
	if (tr_g.fork_pending && (tr_tls_internal > 0 || tr_tls_creating || !tr_fork_complete()))
		return;
	struct tr_thread *me = tr_tls_self;
	if (tr_tls_internal > 0 || (me && me->in_record)) {
		/* exit() from a signal handler that interrupted the tracer on this
		 * thread (it may hold our locks): the lock-free path */
		if (!tr_g.finishing)
			emergency(have_status ? status : 0, 0);
		return;
	}
	int other = __atomic_exchange_n(&tr_g.finishing, 1, __ATOMIC_SEQ_CST);
	tr_live_update();
	if (other) {
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

	tr_durable_stop();   /* no tick reads the writers any more */
	tr_lock(&tr_g.lock);
	char od[4200];
	tr_ar_own_dir(tr_g.dir, od, sizeof(od));
	struct close_call cc = { od, 0, 0, OTF2W_OK, 0 };
	tr_fd_private_call(close_io, &cc);
	if (cc.tdefs_ret)   /* said once, in the summary (a full disk fails more) */
		note_error_text("cannot write ", tr_ar_tdefs_path, strerror(cc.tdefs_err));
	otf2w_status st = cc.st;
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

	struct end_call ec = { range_first, range_last, events, { 0, 0, 0, 0, 0 }, 0 };
	if (tr_g.unified)
		tr_fd_private_call(run_end_io, &ec);
	struct run_end run = ec.run;
	int unified_global = ec.last_rank;
	int late_merged = 0;   /* definitions after MPI_Finalize: tracer-merge made the archive */
	if (unified_global && run.late)
		late_merged = tr_ar_merge_late() == 0;
	if (unified_global && !late_merged)
		tr_ar_write_unified_global();
	int merged = 0;   /* 1: the merge's line is the summary */
	if (tr_tree.exec)
		tr_ar_exec_aside();   /* the process goes on in its next image */
	else
		merged = tr_ar_start_merge(0);
	tr_g.finished = 1;
	tr_g.active = 0;
	tr_live_update();

	uint64_t bytes = cc.bytes;
	tr_ar_drop_claim();   /* the archive exists now: the claim has served */
	/* a process tree's member: the last one unifies (tline: its summary) */
	char tline[1200];
	int tn = tr_tree_end(0, events, nloc, tline, sizeof(tline));
	int print = tr_cfg.verbose >= 1 &&
		    (!tr_g.mpi_expected || unified_global || (!tr_g.unified && tr_proc.rank <= 0 && !merged && !tr_ar_side()) ||
		     tr_cfg.verbose >= 2);
	/* dropped in flush mode: a chunk could not be written, the buffer filled */
	uint64_t lost = tr_cfg.on_full == TR_ON_FULL_STOP ? 0 : dropped;
	char line[8800];
	int n = 0;
	int problem = 1;   /* errors and lost events: stderr; the summary: a notice */
	if (err[0]) {
		/* the summary says what the archive is worth, never a normal line */
		if (!readable_anchor(od, tr_ar_name))
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
	} else if (tn == 0 && !dropped && tr_cfg.verbose < 2 && tr_tree_summary_elsewhere()) {
		/* its totals are in the tree's summary and its files are not the
		 * archive: no line (it was one append to the log file per process) */
	} else if (print || dropped) {
		problem = dropped != 0;
		char extra[256] = "";
		if (dropped)
			snprintf(extra, sizeof(extra), ", %llu events dropped (buffer full, TRACER_ON_FULL=stop)",
				 (unsigned long long)dropped);
		uint32_t uranks, ulocs;
		uint64_t uevents;
		struct bytes_call ub = { tr_g.dir, "traces", 0 };
		if (unified_global)
			tr_fd_private_call(dir_bytes_io, &ub);
		if (unified_global && tr_defs_unified_totals(events, &uranks, &ulocs, &uevents) && late_merged)
			ulocs = tr_ar_unified_locations();   /* (those made after MPI_Finalize too) */
		if (unified_global && uranks)
			/* the whole run (this rank ended last): every rank's
			 * locations and events, bytes of the unified archive */
			n = snprintf(line, sizeof(line),
				     "tracer: archive %s/traces.otf2: %u MPI ranks, %u locations, %llu events, "
				     "%llu bytes%s\n", tr_g.shown, uranks, ulocs, (unsigned long long)run.events,
				     (unsigned long long)ub.bytes, extra);
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

struct emergency_call {
	int status, sig;
};

static void emergency_call(void *p)
{
	struct emergency_call *c = p;
	emergency_here(c->status, c->sig);
}

/* The lock-free end, on the crash stack (crash_stack.c: the stack the
 * signal found may be a small alternate one). */
static void emergency(int status, int sig)
{
	if (tr_g.fork_pending)
		return;   /* a fork child with nothing recorded: what is in memory is the parent's */
	struct emergency_call c = { status, sig };
	tr_crash_stack_run(emergency_call, &c);
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

static void emergency_here(int status, int sig)
{
	if (!tr_g.initialized || !tr_g.active || tr_g.pid != tr_self_pid())
		return;
	/* (fix) checked before tr_g.ar: the full close clears tr_g.ar before
	 * it sets tr_g.finished */
	if (__atomic_load_n(&tr_g.finishing, __ATOMIC_SEQ_CST) && tr_g.finisher != gettid()) {
		wait_other_finisher();
		return;
	}
	if (!tr_g.ar)
		return;
	int other = __atomic_exchange_n(&tr_g.finishing, 1, __ATOMIC_SEQ_CST);
	tr_live_update();
	if (other) {
		wait_other_finisher();
		return;
	}
	tr_g.finisher = gettid();
	struct tr_thread *self = tr_tls_self;
	tr_tls_creating++;
	tr_threads_stop_all(self, 0);
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
	if (!tr_ar_tree_part())   /* (a part's are its packed definitions) */
		tr_defs_write_global(tr_g.gdw, 1);
	/* definitions the modules add at the end (calling contexts) */
	for (int i = 0; tr_g.gdw && tr_g.modules_started && i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->fini_crash)
			tr_g.modules[i]->fini_crash(tr_g.gdw);
	tr_ar_claim_to_anchor();
	otf2w_status st = otf2w_archive_close_emergency(tr_g.ar);
	tr_ar_write_tdefs(1);
	if (st == OTF2W_OK) {
		tr_ar_drop_claim();
		tr_durable_cleanup(1);
	}
	char tline[1200];
	int tn = tr_tree_end(1, events, tr_g.nthreads, tline, sizeof(tline));
	if (tn > 0)
		tr_log_write(tline, (size_t)tn < sizeof(tline) ? (size_t)tn : sizeof(tline) - 1);
	tr_g.finished = 1;
	tr_g.active = 0;
	tr_live_update();
	if (tr_g.unified)
		tr_ar_run_end_mark_crashed(events);
	tr_ar_start_merge(1);
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
