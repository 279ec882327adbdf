/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread.c - per-thread state and locations.
 *
 * struct tr_thread lives on the heap (it must outlive the thread: the
 * exiting thread writes the buffers of threads still running at exit, and
 * the counters are read at shut-down); the thread reaches it through an
 * initial-exec TLS pointer (no TLS allocation, no malloc on access).
 *
 * States: UNINIT (no struct) -> ACTIVE -> DYING (shut-down or thread end in
 * progress: no new records) -> DEAD (writer closed). The exiting thread
 * marks every other thread DYING and waits (bounded) until none is inside a
 * record (in_record) before it touches their writers.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "tr_int.h"
#include "proctree.h"

TR_TLS struct tr_thread *tr_tls_self;
TR_TLS int tr_tls_creating;

static pthread_key_t tr_key;
static int tr_key_ok;

/* (fix) Alternate signal stack: the crash handlers (SA_ONSTACK, signals.c)
 * must be able to write the archive after a stack overflow. A traced thread
 * without an alternate stack gets one when its location is created: mapped
 * lazily (only touched pages cost memory), a PROT_NONE guard page below it.
 * Released at the thread's end if it is still ours. A fork child inherits
 * its master's (the forking thread's) one. */
#define TR_ALTSTACK_SIZE (128u * 1024u)
static TR_TLS void *tr_tls_altstack;   /* our mapping (guard page first) */

static size_t altstack_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

static void altstack_setup(void)
{
	stack_t old, ss;
	if (tr_tls_altstack || sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
		return;   /* the program has its own */
	size_t pg = altstack_page();
	void *p = tr_real.mmap(NULL, TR_ALTSTACK_SIZE + pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	mprotect(p, pg, PROT_NONE);   /* guard: an overflow of this stack faults */
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = (char *)p + pg;
	ss.ss_size = TR_ALTSTACK_SIZE;
	if (sigaltstack(&ss, NULL) != 0) {
		tr_real.munmap(p, TR_ALTSTACK_SIZE + pg);
		return;
	}
	tr_tls_altstack = p;
}

static void altstack_release(void)
{
	void *p = tr_tls_altstack;
	stack_t cur;
	if (!p || sigaltstack(NULL, &cur) != 0 || (cur.ss_flags & SS_ONSTACK))
		return;   /* running on an alternate stack right now: keep it */
	size_t pg = altstack_page();
	if (!(cur.ss_flags & SS_DISABLE) && cur.ss_sp == (char *)p + pg) {
		stack_t off;
		memset(&off, 0, sizeof(off));
		off.ss_flags = SS_DISABLE;
		if (sigaltstack(&off, NULL) != 0)
			return;
	}
	/* disabled now, or the program replaced it by its own: ours is unused */
	tr_tls_altstack = NULL;
	tr_real.munmap(p, TR_ALTSTACK_SIZE + pg);
}

uint64_t tr_location_id(uint32_t index)
{
	/* MPI rank, or the part of a process tree (preload/tree/proctree.c) */
	uint64_t r = tr_proc.rank > 0 ? (uint64_t)tr_proc.rank : tr_tree.part > 0 ? (uint64_t)tr_tree.part : 0;
	return (r << 32) | index;
}

struct tr_thread *tr_thread_peek(void)
{
	return tr_tls_self;
}

int tr_live;

void tr_live_update(void)
{
	__atomic_store_n(&tr_live, tr_g.active && !__atomic_load_n(&tr_g.finishing, __ATOMIC_SEQ_CST), __ATOMIC_RELAXED);
}

static void tr_key_destructor(void *p)
{
	struct tr_thread *t = p;
	if (t && t == tr_tls_self && t->state == TR_T_ACTIVE)
		tr_thread_end(t);
}

void tr_threads_init(void)
{
	if (!tr_key_ok && pthread_key_create(&tr_key, tr_key_destructor) == 0)
		tr_key_ok = 1;
}

static void thread_name(char *buf, size_t n, uint32_t index)
{
	if (index == 0)
		snprintf(buf, n, "Master thread");
	else
		snprintf(buf, n, "Thread %u", index);
}

/* Names given to threads that have no location yet (named by their creator
 * before their first traced call): taken by tr_thread_create_current. Under
 * tr_g.lock; the oldest entry is overwritten when full. */
#define TR_PENDING_NAMES 64
static struct {
	uint64_t th;
	uint32_t sid;
	int used;
} tr_pending_names[TR_PENDING_NAMES];
static unsigned tr_pending_next;

void tr_thread_set_name(uint64_t th, const char *name)
{
	if (!name || !name[0] || !tr_g.initialized || !tr_g.active)
		return;
	uint32_t sid = tr_def_string(name);
	tr_lock(&tr_g.lock);
	/* newest first: a pthread_t reused after a thread's end names the new one */
	struct tr_thread *t = tr_g.threads;
	for (; t; t = t->next)
		if (t->pthread_self == th && t->state != TR_T_DEAD) {
			t->name_sid = sid;
			break;
		}
	if (!t) {
		unsigned i = 0;
		while (i < TR_PENDING_NAMES && !(tr_pending_names[i].used && tr_pending_names[i].th == th))
			i++;
		if (i == TR_PENDING_NAMES)
			i = tr_pending_next++ % TR_PENDING_NAMES;
		tr_pending_names[i].th = th;
		tr_pending_names[i].sid = sid;
		tr_pending_names[i].used = 1;
	}
	tr_unlock(&tr_g.lock);
}

/* A layer names the location of t itself (wrappers/openmp: "OpenMP thread
 * N"); not hot (defines a String). */
void tr_thread_set_location_name(struct tr_thread *t, const char *name)
{
	if (!t || !name)
		return;
	uint32_t sid = tr_def_string(name);
	if (sid != OTF2W_UNDEFINED_REF)
		__atomic_store_n(&t->name_sid, sid, __ATOMIC_RELAXED);
}

/* Under tr_g.lock: a name given before t had a location. */
static void take_pending_name(struct tr_thread *t)
{
	for (unsigned i = 0; i < TR_PENDING_NAMES; i++)
		if (tr_pending_names[i].used && tr_pending_names[i].th == t->pthread_self) {
			t->name_sid = tr_pending_names[i].sid;
			tr_pending_names[i].used = 0;
		}
}

/* Create the calling thread's state and location. tr_tls_creating is set by
 * the caller (everything called from here is untraced). */
struct tr_thread *tr_thread_create_current(int master, uint32_t index)
{
	char name[64];
	struct tr_thread *t = tr_xcalloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->errnop = &errno;   /* the hot path's errno (tracer.h) */
	t->index = index;
	t->location = tr_location_id(index);
	t->pthread_self = (uint64_t)pthread_self();
	t->tid = (int)gettid();
	thread_name(name, sizeof(name), index);
	t->name_sid = tr_def_string(name);

	tr_lock(&tr_g.lock);
	otf2w_status st = tr_g.ar ? otf2w_archive_get_evt_writer(tr_g.ar, t->location, &t->w) : OTF2W_E_INVALID_CALL;
	if (st != OTF2W_OK) {
		t->w = NULL;
		if (tr_g.ar && tr_error_note(st))
			tr_log_error("cannot create the event writer of location %llu: %s",
				     (unsigned long long)t->location, otf2w_archive_error(tr_g.ar));
	}
	t->next = tr_g.threads;
	tr_g.threads = t;
	tr_g.nthreads++;
	take_pending_name(t);
	if (master)
		tr_g.master = t;
	t->state = (t->w && !tr_g.finishing) ? TR_T_ACTIVE : TR_T_DEAD;
	tr_unlock(&tr_g.lock);

	tr_tls_self = t;
	if (t->state == TR_T_ACTIVE)
		altstack_setup();   /* (fix) crash handlers after a stack overflow */
	if (!master && tr_key_ok)
		pthread_setspecific(tr_key, t);
	if (t->state == TR_T_ACTIVE && tr_g.modules_started)
		tr_modules_thread_init(t);
	tr_log_debug("location %llu (%s) for tid %d", (unsigned long long)t->location, name, t->tid);
	return t;
}

static struct tr_thread *create_locked_out(uint32_t index)
{
	int saved = errno;
	tr_tls_creating = 1;
	struct tr_thread *t = tr_thread_create_current(0, index);
	tr_tls_creating = 0;
	errno = saved;
	return t;
}

static struct tr_thread *hold(struct tr_thread *t)
{
	if (!t || t->state != TR_T_ACTIVE || t->guard != 0)
		return NULL;
	t->guard = 1;
	t->saved_errno = errno;
	return t;
}

struct tr_thread *tr_thread_get_slow(void)
{
	struct tr_thread *t = tr_tls_self;
	if (t && t->state == TR_T_FORKED && !tr_tls_creating && t->guard == 0)
		return tr_fork_complete() ? hold(t) : NULL;   /* a fork child's first traced call */
	if (t || tr_tls_creating)
		return NULL;
	if (tr_unlikely(!tr_g.initialized)) {
		if (tr_g.initializing)
			return NULL;
		tr_init();
		if (tr_tls_self)
			return hold(tr_tls_self);
	}
	if (!tr_g.active || tr_g.finishing || tr_g.pid != getpid())
		return NULL;
	return hold(create_locked_out(__atomic_fetch_add(&tr_g.next_index, 1, __ATOMIC_RELAXED)));
}

uint32_t tr_thread_reserve_index(void)
{
	return __atomic_fetch_add(&tr_g.next_index, 1, __ATOMIC_RELAXED);
}

uint64_t tr_thread_reserve_seq(void)
{
	return __atomic_add_fetch(&tr_g.next_seq, 1, __ATOMIC_RELAXED);
}

struct tr_thread *tr_thread_begin_index(uint32_t index)
{
	struct tr_thread *t = tr_tls_self;
	if (t)
		return hold(t);
	if (!tr_g.initialized && !tr_g.initializing)
		tr_init();
	if (!tr_g.active || tr_g.finishing || tr_tls_creating)
		return NULL;
	return hold(create_locked_out(index));
}

struct tr_thread *tr_thread_begin(uint32_t *index_out)
{
	struct tr_thread *t = tr_tls_self;
	if (!t && tr_g.initialized && tr_g.active)
		t = tr_thread_begin_index(tr_thread_reserve_index());
	else
		t = t ? hold(t) : tr_thread_get_slow();
	if (t && index_out)
		*index_out = t->index;
	return t;
}

/* Leave records for the regions still open on t (its writer must be owned
 * by the caller: t is DYING or is the calling thread). */
void tr_thread_close_open_regions(struct tr_thread *t, uint64_t time)
{
	if (!t->w || tr_g.writer_module)
		return;
	uint64_t last = otf2w_evt_writer_last_time(t->w);
	if (time < last)
		time = last;
	void (*cut)(struct tr_thread *, uint64_t) = t->cut;
	t->cut = NULL;
	if (cut)
		cut(t, time);
	while (t->depth > 0) {
		t->depth--;
		if (t->depth < TR_SHADOW_DEPTH)
			otf2w_evt_leave(t->w, NULL, time, t->stack[t->depth]);
	}
}

/* After a resume: Leave the regions open in the archive at the stop that
 * were left while stopped, Enter those entered since, so that the archive's
 * open regions are the shadow stack's (balanced streams). */
static void stop_rebalance(struct tr_thread *t, uint64_t now)
{
	if (!t->stop_seen || tr_g.writer_module)
		return;
	uint32_t m = t->stop_min < t->stop_depth ? t->stop_min : t->stop_depth;
	for (uint32_t i = t->stop_depth; i-- > m;)
		if (i < TR_SHADOW_DEPTH)
			otf2w_evt_leave(t->w, NULL, now, t->stop_stack[i]);
	for (uint32_t i = m; i < t->depth && i < TR_SHADOW_DEPTH; i++)
		otf2w_evt_enter(t->w, NULL, now, t->stack[i]);
}

/* TRACER_ON_FULL=stop: a stopped location gets room for its last records
 * (Leave of open regions, ThreadEnd, ProgramEnd): its buffer is written out
 * and recording resumes (MeasurementOnOff ON). Owner of t's writer only;
 * not on the crash path (locks, I/O). */
/* Resume a stopped location now (crash: without a flush) and balance it. */
static void resume_stopped(struct tr_thread *t, int crash)
{
	uint64_t now = tr_time();
	uint64_t last = otf2w_evt_writer_last_time(t->w);
	if (now < last)
		now = last;
	otf2w_status st = crash ? otf2w_evt_writer_resume_emergency(t->w, now) : otf2w_evt_writer_resume(t->w, now);
	if (st == OTF2W_OK)
		stop_rebalance(t, now);
	t->stop_seen = 0;
}

void tr_thread_ending(struct tr_thread *t)
{
	if (!t || !t->w || t->closed)
		return;
	int saved = errno;
	if (otf2w_evt_writer_stopped(t->w) && otf2w_evt_writer_flush(t->w) == OTF2W_OK)
		resume_stopped(t, 0);
	if (t == tr_tls_self)
		tr_modules_thread_ending(t);   /* before the ThreadEnd (OpenMP teams) */
	errno = saved;
}

/* The same on the crash path (no flush: one more chunk in memory).
 * Async-signal-safe; t is stopped or the caller's. */
void tr_thread_ending_crash(struct tr_thread *t)
{
	if (t && t->w && !t->closed && otf2w_evt_writer_stopped(t->w))
		resume_stopped(t, 1);
}

void tr_thread_end(struct tr_thread *t)
{
	if (!t)
		t = tr_tls_self;
	if (!t || t != tr_tls_self)
		return;
	tr_lock(&tr_g.lock);
	if (t->state != TR_T_ACTIVE) {
		tr_unlock(&tr_g.lock);
		return;
	}
	/* the exiting thread waits for us: tr_threads_stop_all leaves the
	 * location ACTIVE until it is DEAD (in_record alone is not enough:
	 * the modules' records below clear it, and would be refused once
	 * DYING: an OpenMP worker's last ThreadTeamEnd was lost) */
	__atomic_store_n(&t->ending, 1, __ATOMIC_SEQ_CST);
	t->in_record = 1;
	tr_unlock(&tr_g.lock);

	t->guard++;
	int saved = errno;
	tr_modules_thread_fini(t);
	tr_thread_ending(t);
	tr_thread_close_open_regions(t, tr_time());
	tr_lock(&tr_g.lock);
	t->state = TR_T_DYING;
	if (tr_g.ar && !tr_g.finishing && tr_g.dir_final && t->w && !t->closed) {
		/* short-lived threads: a small location stays in memory (compact
		 * copy, chunk released) until the archive is written: no file
		 * is created on the thread's exit path */
		otf2w_status st = otf2w_archive_close_evt_writer_deferred(tr_g.ar, t->w, tr_cfg.chunk_bytes,
									  TR_DEFER_TOTAL);
		if (st != OTF2W_OK && tr_error_note(st))
			tr_log_error("closing location %llu: %s", (unsigned long long)t->location,
				     otf2w_archive_error(tr_g.ar));
		t->closed = 1;
	}
	t->state = TR_T_DEAD;
	tr_unlock(&tr_g.lock);
	tr_rec_end(t);
	if (t != tr_g.master)
		altstack_release();   /* (fix) the thread's own, set up at creation */
	t->guard--;
	errno = saved;
}

/* t is inside tr_thread_end on its own thread, not DEAD yet. */
static int stop_ending(struct tr_thread *t)
{
	return __atomic_load_n(&t->ending, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&t->state, __ATOMIC_SEQ_CST) != TR_T_DEAD;
}

/* Shut-down: every other thread stops recording; wait (bounded) until none
 * is inside a record nor ending (tr_thread_end: it writes its last records
 * itself). Safe in a signal handler. */
void tr_threads_stop_all(struct tr_thread *self, int may_lock)
{
	int others = 0;
	/* under the lock (if we can take it): a thread creating its location
	 * right now is either in the list or sees tr_g.finishing */
	int locked = may_lock ? (tr_lock(&tr_g.lock), 1) : tr_trylock(&tr_g.lock);
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		if (t == self)
			continue;
		if (stop_ending(t)) {
			others++;   /* ending on its own thread (tr_thread_end): wait */
			continue;
		}
		if (t->state == TR_T_ACTIVE)
			__atomic_store_n(&t->state, TR_T_DYING, __ATOMIC_SEQ_CST);
		if (t->state == TR_T_DYING)
			others++;
	}
	if (locked)
		tr_unlock(&tr_g.lock);
	if (!others)
		return;
	struct timespec ms = { 0, 1000000 };
	nanosleep(&ms, NULL);   /* lets a record that saw ACTIVE publish in_record */
	for (int i = 0; i < 500; i++) {
		int busy = 0;
		for (struct tr_thread *t = tr_g.threads; t; t = t->next)
			if (t != self && (__atomic_load_n(&t->in_record, __ATOMIC_SEQ_CST) || stop_ending(t)))
				busy++;
		if (!busy)
			return;
		nanosleep(&ms, NULL);
	}
	/* a thread still ending records no more from here: the finisher
	 * writes its last records, as for any other thread */
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		int active = TR_T_ACTIVE;
		if (t != self && stop_ending(t))
			__atomic_compare_exchange_n(&t->state, &active, TR_T_DYING, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
	}
	tr_log_sigsafe("warning: a thread stayed inside a record at shut-down; its last event may be cut");
}

uint64_t tr_threads_count_events(uint64_t *dropped)
{
	uint64_t n = 0, d = 0;
	for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
		if (!t->w)
			continue;
		n += otf2w_evt_writer_count(t->w);
		d += otf2w_evt_writer_dropped(t->w);
	}
	if (dropped)
		*dropped = d;
	return n;
}

/* In the fork child, after the new archive is open: only the calling thread
 * survives; it becomes the master thread (index 0) of the child. */
void tr_threads_fork_child(void)
{
	memset(tr_pending_names, 0, sizeof(tr_pending_names));   /* the parent's string ids */
	struct tr_thread *self = tr_tls_self;
	tr_g.lock.v = 0;
	tr_g.threads = NULL;
	tr_g.master = NULL;
	tr_g.nthreads = 0;
	tr_g.next_index = 1;
	if (!self) {
		tr_tls_creating = 1;
		tr_thread_create_current(1, 0);
		tr_tls_creating = 0;
		tr_g.next_index = 1;
		return;
	}
	self->index = 0;
	self->location = tr_location_id(0);
	self->tid = (int)gettid();
	self->w = NULL;
	self->closed = 0;
	self->next = NULL;
	self->name_sid = tr_def_string("Master thread");
	if (tr_g.ar && otf2w_archive_get_evt_writer(tr_g.ar, self->location, &self->w) != OTF2W_OK)
		self->w = NULL;
	tr_g.threads = self;
	tr_g.master = self;
	tr_g.nthreads = 1;
	self->state = self->w ? TR_T_ACTIVE : TR_T_DEAD;
}
