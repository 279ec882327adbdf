/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer.h - the core of libtracer.so as seen by wrappers/ and sampling/.
 *
 * Layering: wrappers/ and sampling/ call down into preload/ (this header)
 * and format/ (otf2w.h), never into each other. preload/ is the only code
 * that reads the environment.
 *
 * Hot path contract (one wrapped call, one event): tr_thread_get(),
 * tr_time(), tr_enter()/tr_leave() and the otf2w_evt_* writers allocate
 * nothing, take no lock, do no stdio and never call a wrapped function.
 *
 * Typical wrapper:
 *
 *	TR_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
 *	{   // real_pthread_mutex_lock: the family's table (tr_real_resolve)
 *		struct tr_thread *t = tr_thread_get();   // NULL: not ready/dying/nested
 *		if (!t)
 *			return real_pthread_mutex_lock(m);
 *		uint64_t t0 = tr_time();
 *		tr_enter(t, t0, tr_rgn_mutex_lock);
 *		int ret = real_pthread_mutex_lock(m);
 *		tr_leave(t, tr_time(), tr_rgn_mutex_lock);
 *		tr_thread_put(t);                        // restores errno
 *		return ret;
 *	}
 */
#ifndef TR_TRACER_H
#define TR_TRACER_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <sys/types.h>
#include "otf2w.h"
#include "tr_defs.h"
#include "tr_real.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_EXPORT __attribute__((visibility("default")))
#define TR_HIDDEN __attribute__((visibility("hidden")))
#define tr_likely(x)   __builtin_expect(!!(x), 1)
#define tr_unlikely(x) __builtin_expect(!!(x), 0)
#define TR_TLS __thread __attribute__((tls_model("initial-exec")))
/* The hot path's helpers: inlined whatever the optimizer's size estimate. */
#define TR_ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- logging (never on the hot path; "tracer: " prefix, one line) ------------ */

/* Printed unless TRACER_VERBOSE=0 silences info; errors and warnings always. */
void tr_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tr_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tr_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* TRACER_VERBOSE >= 2 */
void tr_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Async-signal-safe: formats %s %d %u %lu %llu %x %p into a fixed buffer, write(2). */
void tr_log_sigsafe(const char *fmt, ...);

/* ---- configuration (parsed once in the constructor, read-only afterwards) ---- */

enum tr_on_full { TR_ON_FULL_FLUSH = 0, TR_ON_FULL_STOP = 1 };
enum tr_clock_kind { TR_CLOCK_TSC = 0, TR_CLOCK_MONOTONIC = 1 };
enum tr_tree_mode { TR_TREE_ONE = 0, TR_TREE_SEPARATE = 1 };
enum tr_mpi_polling { TR_MPI_POLL_FOLD = 0, TR_MPI_POLL_ALL = 1 };

struct tr_config {
	char output[4096];        /* TRACER_OUTPUT ("" = default name, decided at start or by MPI) */
	uint64_t buffer_bytes;    /* TRACER_BUFFER, per thread (default 16M) */
	uint64_t chunk_bytes;     /* TRACER_CHUNK (default 1M) */
	int on_full;              /* TRACER_ON_FULL */
	int pthread;              /* TRACER_PTHREAD (default 1) */
	int mpi;                  /* TRACER_MPI (default 1) */
	int mpi_polling;          /* TRACER_MPI_POLLING: fold (default), all (wrappers/mpi_req.c) */
	char filter[4096];        /* TRACER_FILTER file ("" = none) */
	int verbose;              /* TRACER_VERBOSE (default 1) */
	int clock;                /* TRACER_CLOCK: tsc (default where invariant) / monotonic */
	/* sampling/ */
	uint64_t sampling_period_ns;   /* TRACER_SAMPLING (0 = off); events for cycles@N */
	uint32_t sampling_event;       /* TR_SMP_EVENT_*: TRACER_SAMPLING=cycles@N, instructions@N */
	uint32_t sampling_depth;       /* TRACER_SAMPLING_DEPTH (default 64) */
	char metrics[1024];            /* TRACER_METRICS ("" = none) */
	/* wrappers/vt */
	int detailed_states;           /* TRACER_DETAILED_STATES (default 0) */
	/* TRACER_TEST_CLOCK_SKEW (signed ns, default 0): test only. Added to
	 * every CLOCK_MONOTONIC reading (not to the TSC), so that an MPI test
	 * on one host can give a rank a clock that is off by a known amount
	 * and check that the ClockOffset records correct it. */
	int64_t test_clock_skew_ns;
	int openmp;                    /* TRACER_OPENMP (default 1), wrappers/openmp* */
	int io;                        /* TRACER_IO (default 1): wrappers/io */
	int tree;                      /* TRACER_TREE: one archive per process tree (default) or per process */
};
extern struct tr_config tr_cfg;
enum tr_smp_event { TR_SMP_EVENT_TIME = 0, TR_SMP_EVENT_CYCLES, TR_SMP_EVENT_INSTRUCTIONS };

/* Helpers shared by every option parser (return 0 on success, -1 on bad input). */
int tr_cfg_parse_size(const char *s, uint64_t *out);       /* "16M", "512k", "1G", "4096" */
int tr_cfg_parse_duration(const char *s, uint64_t *ns);    /* "1ms", "250us", "1000Hz", "2s" */
int tr_cfg_parse_bool(const char *s, int *out);            /* on/off/1/0/yes/no/true/false */

/* ---- clock -------------------------------------------------------------------- */

/* Ticks of the archive's clock (TSC or CLOCK_MONOTONIC ns). Async-signal-safe.
 * Inline: one predictable branch on tr_clock_is_tsc + rdtsc (~12 ns), or
 * clock_gettime(CLOCK_MONOTONIC) through tr_time_monotonic(). */
extern int tr_clock_is_tsc;
uint64_t tr_time_monotonic(void);
static inline uint64_t tr_time(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (tr_likely(tr_clock_is_tsc)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return tr_time_monotonic();
}
/* Wait until every earlier instruction has completed, then read the clock
 * (rdtsc is not ordered with them: e.g. the atomic that took a lock). */
static inline void tr_clock_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
uint64_t tr_clock_resolution(void);    /* ticks per second */
/* Convert a tick difference to ns (for reports, not hot path). */
uint64_t tr_ticks_to_ns(uint64_t ticks);

/* ---- per-thread state ----------------------------------------------------------- */

enum tr_thread_state { TR_T_UNINIT = 0, TR_T_ACTIVE, TR_T_DYING, TR_T_DEAD };

struct tr_thread {
	otf2w_evt_writer *w;       /* this thread's location writer */
	uint64_t location;         /* location id */
	uint32_t index;            /* 0 = master thread, 1.. in creation order */
	int state;                 /* enum tr_thread_state */
	volatile int guard;        /* > 0 while inside the tracer (recursion guard) */
	int saved_errno;           /* errno at tr_thread_get, restored by tr_thread_put */
	int *errnop;               /* &errno of the thread (no __errno_location call on the hot path) */
	volatile int in_record;    /* set by tr_enter/tr_leave while writing (sampler defers) */
	/* termination signals (bit 1 << sig) that arrived inside a record: the
	 * handler returned, tr_rec_end raises them again when the record is
	 * complete (preload/signals.c) */
	volatile uint32_t sig_deferred;
	uint64_t pthread_self;     /* pthread_t of the thread */
	int tid;                   /* kernel tid */
	/* Slots owned by other modules (set in their thread_init hooks). */
	void *sampling;
	void *metrics;
	/* ---- preload/ private from here (do not touch outside preload/:
	 * accessors below and in the task section) ---- */
	struct tr_task *task;      /* user-level task running on the thread (NULL: none) */
	struct tr_thread *next;    /* list of all threads of the process */
	uint64_t seq;              /* sequence count given at tr_thread_begin (0: none) */
	int off;                   /* tr_measurement(t, 0) in effect */
	uint32_t depth;            /* shadow stack of open tr_enter regions */
	uint32_t stack[128];
	uint64_t errors;
	uint32_t name_sid;         /* String id of the location name */
	int closed;                /* event writer closed */
	/* tr_thread_end runs on the thread (set under tr_g.lock while ACTIVE):
	 * shut-down leaves the location to it and waits until it is DEAD */
	volatile int ending;
	/* TRACER_ON_FULL=stop: the regions open in the archive when the
	 * location stopped, and the lowest depth reached while stopped (the
	 * Leaves and Enters written when recording resumes at the end) */
	int stop_seen;
	/* TRACER_DURABLE: the location's slot in the mapped index + 1 (0: none
	 * yet; set by the tick that first published it) */
	uint32_t dur_slot;
	uint32_t stop_depth;
	uint32_t stop_min;
	uint32_t stop_stack[128];
};

/* The calling thread's state if tracing is active for it and the thread is
 * not already inside the tracer; increments the guard and saves errno.
 * NULL otherwise (call the real function untraced). Creates the thread's
 * location on first use (the only non-hot call: may lock and allocate,
 * with the guard set). Inline: one TLS load and two compares. */
extern TR_TLS struct tr_thread *tr_tls_self;
struct tr_thread *tr_thread_get_slow(void);
static inline struct tr_thread *tr_thread_get(void)
{
	struct tr_thread *t = tr_tls_self;
	if (tr_likely(t && t->state == TR_T_ACTIVE && t->guard == 0)) {
		t->guard = 1;
		t->saved_errno = *t->errnop;
		return t;
	}
	return tr_thread_get_slow();
}
/* Decrements the guard and restores errno: the value saved by
 * tr_thread_get, or the value seen at the start of the last tr_leave()
 * (so get -> enter -> real call -> leave -> put returns the real call's
 * errno to the program). */
static inline void tr_thread_put(struct tr_thread *t)
{
	*t->errnop = t->saved_errno;
	t->guard--;
}
/* tr_thread_put when errno is the wrapped call's already (nothing since
 * the call returned may have changed it): the guard only. */
static inline void tr_thread_put_keep(struct tr_thread *t)
{
	t->guard--;
}
/* The calling thread's state without guard/creation (NULL if none yet).
 * Async-signal-safe. */
struct tr_thread *tr_thread_peek(void);
/* 1 once the constructor has run and until shut-down started. */
int tr_is_active(void);
/* Read-only views of private fields: the sequence count of the thread's
 * ThreadCreate/Begin/End (0: none, or its ThreadEnd is written) and whether
 * its event writer is closed. tr_thread_set_seq: the thread wrappers, owner
 * thread or the crash path (every other thread stopped). */
static inline uint64_t tr_thread_seq(const struct tr_thread *t)
{
	return t->seq;
}
static inline void tr_thread_set_seq(struct tr_thread *t, uint64_t seq)
{
	t->seq = seq;
}
static inline int tr_thread_closed(const struct tr_thread *t)
{
	return t->closed;
}

/* Thread life cycle (for wrappers/pthread).
 *
 * Creator (in the pthread_create wrapper, before calling the real one):
 *	uint64_t seq = tr_thread_reserve_seq();      // unique, > 0
 *	ThreadCreate(comm = tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, ...), seq)
 *	pass seq to the new thread (trampoline argument)
 * New thread (trampoline, before the user start routine):
 *	struct tr_thread *t = tr_thread_begin(&index);   // guard held, like tr_thread_get
 *	if (t) { tr_thread_set_seq(t, seq); ThreadBegin(comm, seq) ...; tr_thread_put(t); }
 *	ret = start(arg);
 *	t = tr_thread_get(); if (t) { ThreadEnd(comm, seq) ...; tr_thread_put(t); }
 *	tr_thread_end(t_from_begin);                      // closes the location
 * tr_thread_end is also run automatically (TSD destructor) for threads that
 * leave by pthread_exit/cancel or were never seen by a trampoline, so calling
 * it is optional but makes the close deterministic. Threads still running at
 * exit are stopped (DYING) by the exiting thread and their buffers written.
 */
/* Create (or return) the calling thread's location: index = next in creation
 * order; runs the modules' thread_init hooks. Returns the state with the
 * guard held and errno saved (release with tr_thread_put), or NULL when not
 * tracing. *index_out (may be NULL) receives the location index. */
struct tr_thread *tr_thread_begin(uint32_t *index_out);
/* Same, with an index reserved by the creator with tr_thread_reserve_index()
 * (so "Thread N" follows pthread_create order, not start order). */
uint32_t tr_thread_reserve_index(void);
struct tr_thread *tr_thread_begin_index(uint32_t index);
/* End of the calling thread (t may be NULL = the calling thread's): runs
 * thread_fini hooks, closes open regions, writes and closes the location's
 * event stream; later calls in this thread are untraced. */
void tr_thread_end(struct tr_thread *t);
/* A thread of the program is about to end (pthread_exit, end of its start
 * routine): when it is the last one, the tracer's own thread ends first so
 * that the process ends as without the tracer. */
void tr_io_thread_exiting(void);
/* The tracer's own service thread (tracer-io, with TRACER_DURABLE): it has
 * a descriptor table of its own. tr_io_run runs fn(arg) there and waits (0),
 * or returns -1 without running it when there is no such thread; normal
 * context only. tr_io_is_self: the caller is that thread. A module that
 * keeps descriptors open across calls must close them in the table that
 * opened them. */
int tr_io_run(void (*fn)(void *), void *arg);
int tr_io_is_self(void);
/* On tracer-io only: run fn on one helper thread of the tracer that shares
 * tracer-io's descriptor table (tr_io_is_self is 1 there too, its tr_io_run
 * calls run in place), every signal blocked, niced by 5, never counted as a
 * thread of the program (exit_group ends it). 0, or -1: none (the caller
 * does the work itself). One helper per process (the sampler's symbols). */
int tr_io_spawn(void (*fn)(void), const char *name);
/* Sequence numbers shared by ThreadCreate/ThreadBegin/ThreadWait/ThreadEnd. */
uint64_t tr_thread_reserve_seq(void);
/* Thread names (pthread_setname_np, prctl(PR_SET_NAME)): the location of the
 * live thread whose pthread_t is th is named name (the last name set before
 * the archive is written wins; "" keeps the current name). Not for signal
 * handlers (defines a string: locks, may allocate). */
void tr_thread_set_name(uint64_t th, const char *name);
/* Call right before writing a location's last records (ThreadEnd). On the
 * thread t itself it runs the modules' thread_ending hooks (they close what
 * they keep open: OpenMP teams). TRACER_ON_FULL=stop: if the location was
 * stopped (buffer full), its buffer is written out first and recording
 * resumes (MeasurementOnOff ON), so the final records are never dropped.
 * Owner thread, guard held. tr_thread_end and the ProgramEnd path call it
 * themselves. */
void tr_thread_ending(struct tr_thread *t);

/* Rename the location of t (e.g. "OpenMP thread 3" for a runtime's worker);
 * the name is written with the definitions at shut-down. Not hot (defines a
 * String): call once per thread, guard held. */
void tr_thread_set_location_name(struct tr_thread *t, const char *name);

/* ---- events (hot path) -------------------------------------------------------------- */

/* Wrappers that write otf2w_evt_* records themselves (ThreadCreate, MPI
 * records, ...) bracket them with these: tr_rec_begin returns 0 when the
 * location may not be written any more (shut-down started on another thread,
 * measurement off) - then skip the record. It also tells the sampler to defer
 * (in_record), and a termination signal: its handler returns at once and
 * tr_rec_end raises it again (the thread ends its record first, then the
 * archive is written with the location's ThreadEnd). Cheap: two stores and
 * two loads. Every place that clears in_record does so through tr_rec_end.
 *
 *	if (tr_rec_begin(t)) {
 *		tr_evt_status(t, otf2w_evt_thread_create(t->w, NULL, tr_time(), comm, seq));
 *		tr_rec_end(t);
 *	}
 */
void tr_rec_deferred(struct tr_thread *t);
static inline void tr_rec_end(struct tr_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_record = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (tr_unlikely(t->sig_deferred))
		tr_rec_deferred(t);   /* a termination signal waited for this record */
}
static inline int tr_rec_begin(struct tr_thread *t)
{
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (tr_likely(t->state == TR_T_ACTIVE && !t->off && t->w))
		return 1;
	tr_rec_end(t);
	return 0;
}

/*
 * Record groups (the hot path of wrappers and of tr_enter/tr_leave):
 * fixed-size records at one time with one record bracket and one bounds
 * check. tr_fast_begin opens the bracket (tr_rec_begin) and returns where
 * the first record goes (the timestamp written), or NULL when the location
 * may not be written (as tr_rec_begin) or its chunk has no room for max
 * bytes of records (otf2w_evt_group_begin): the bracket is closed again,
 * nothing was written; write the records the general way (tr_rec_begin,
 * otf2w_evt_*), which switches chunks. The caller stores its records with
 * otf2w_evt_put_<record> (max: the sum of their OTF2W_EVT_<RECORD>_MAX) and
 * ends with tr_fast_end(t, p, number of records).
 */
static TR_ALWAYS_INLINE uint8_t *tr_fast_begin(struct tr_thread *t, uint64_t time, size_t max)
{
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (tr_likely(t->state == TR_T_ACTIVE && !t->off && t->w)) {
		uint8_t *p = otf2w_evt_group_begin(t->w, time, max);
		if (tr_likely(p != NULL))
			return p;
	}
	tr_rec_end(t);
	return NULL;
}
static TR_ALWAYS_INLINE void tr_fast_end(struct tr_thread *t, uint8_t *p, uint32_t nrecords)
{
	otf2w_evt_group_end(t->w, p, nrecords);
	tr_rec_end(t);
}

/* Nonzero while Enter/Leave need the general path (tr_enter_slow,
 * tr_leave_slow): before the modules started, with a TRACER_FILTER file, a
 * module observing Enter/Leave (metrics) or writing them itself (calling
 * contexts). Kept by preload/events.c; read-only elsewhere. */
extern int tr_evt_general;

/* Enter/Leave a region. Applies the filter (region filtered: nothing
 * recorded), the region-enter hooks (metrics) and, when a module installed
 * an enter/leave override (sampling: CallingContextEnter/Leave), that one.
 * Inline: when none of them applies (tr_evt_general is 0), Enter/Leave are
 * one record group each (tr_fast_begin). */
void tr_enter_slow(struct tr_thread *t, uint64_t time, uint32_t region);
void tr_leave_slow(struct tr_thread *t, uint64_t time, uint32_t region);
static TR_ALWAYS_INLINE void tr_enter(struct tr_thread *t, uint64_t time, uint32_t region)
{
	uint8_t *p;

	if (tr_likely(!tr_evt_general) && (p = tr_fast_begin(t, time, OTF2W_EVT_ENTER_MAX)) != NULL) {
		if (tr_likely(t->depth < sizeof(t->stack) / sizeof(t->stack[0])))
			t->stack[t->depth] = region;
		t->depth++;
		tr_fast_end(t, otf2w_evt_put_enter(p, region), 1);
		return;
	}
	tr_enter_slow(t, time, region);
}
static TR_ALWAYS_INLINE void tr_leave(struct tr_thread *t, uint64_t time, uint32_t region)
{
	uint8_t *p;

	if (tr_likely(!tr_evt_general) && (p = tr_fast_begin(t, time, OTF2W_EVT_LEAVE_MAX)) != NULL) {
		t->saved_errno = *t->errnop;   /* the errno of the wrapped call (see tr_thread_put) */
		if (tr_likely(t->depth > 0))
			t->depth--;
		tr_fast_end(t, otf2w_evt_put_leave(p, region), 1);
		return;
	}
	tr_leave_slow(t, time, region);
}

/* A call recorded at one time by its wrapper (a lock taken at once):
 * Enter(region), the wrapper's records, Leave(region), one record group.
 * The region's Enter and Leave are encoded once (tr_call_code, e.g. when
 * the region is defined). tr_call_begin returns where the wrapper's
 * records go (max: their size), or NULL (nothing written: tr_enter, its
 * records, tr_leave). tr_call_end writes the Leave (nrecords: the
 * wrapper's records). The shadow stack is left as it was. Nothing of this
 * touches errno: when the wrapped call returned right before, end with
 * tr_thread_put_keep (the program gets the call's errno, as with tr_leave
 * and tr_thread_put). */
struct tr_call_code {
	otf2w_code enter, leave;
};
static inline void tr_call_code(struct tr_call_code *c, uint32_t region)
{
	uint8_t b[16];

	c->enter = otf2w_code_of(b, otf2w_evt_put_enter(b, region));
	c->leave = otf2w_code_of(b, otf2w_evt_put_leave(b, region));
}
static TR_ALWAYS_INLINE uint8_t *tr_call_begin(struct tr_thread *t, uint64_t time, const struct tr_call_code *c, size_t max)
{
	uint8_t *p;

	if (tr_unlikely(tr_evt_general) ||
	    !(p = tr_fast_begin(t, time, OTF2W_EVT_ENTER_MAX + max + OTF2W_EVT_LEAVE_MAX + OTF2W_CODE_SLACK)))
		return NULL;
	return otf2w_put_code(p, c->enter);
}
static TR_ALWAYS_INLINE void tr_call_end(struct tr_thread *t, uint8_t *p, const struct tr_call_code *c, uint32_t nrecords)
{
	tr_fast_end(t, otf2w_put_code(p, c->leave), nrecords + 2);
}

/* Account the status of any otf2w_evt_* call made directly by a wrapper
 * (counts errors; reports the first one at shut-down). Inline-cheap. */
static inline void tr_evt_status(struct tr_thread *t, otf2w_status s)
{
	extern void tr_evt_status_slow(struct tr_thread *, otf2w_status);
	if (tr_unlikely(s != OTF2W_OK))
		tr_evt_status_slow(t, s);
}

/* Stop/restart recording on the calling thread (VT_traceoff/on) with a
 * MeasurementOnOff record. */
void tr_measurement(struct tr_thread *t, int on);

/* The process is about to sandbox itself (what: the call, for the note):
 * its archive is finished now, recording stops (preload/sandbox.c). */
void tr_sandbox_enter(const char *what);

/* TRACER_DURABLE: the calling thread may wait now (call right after the
 * Enter of a call that can block: MPI communication, lock and condition
 * waits, joins). What it recorded is published, so a kill
 * during the wait loses none of it: its own position (a few loads and
 * stores) when nothing was defined since the last snapshot, else a tick.
 * Guard held (one tracer call deep); nothing without TRACER_DURABLE. */
void tr_durable_idle(struct tr_thread *t);
/* The same before a wait the program makes again and again, each time
 * after defining something new (a shell's wait for each command): a tick
 * at most every sixteenth of an interval (besides the location's first).
 * Called outside any tracer call (guard 0: an interposed function that
 * records nothing); it takes the guard itself, and does nothing when the
 * thread is inside the tracer (a signal handler that interrupted it). */
void tr_durable_idle_often(struct tr_thread *t);

/* Region-name filter (TRACER_FILTER): 1 if the region is excluded. Evaluated
 * once per region at definition time. */
int tr_region_filtered(uint32_t region);

/* VT_wakeup: call every module's wakeup hook now on t (the calling thread's
 * state, guard held as from tr_thread_get). No-op when t does not record. */
void tr_wakeup(struct tr_thread *t);

/* The calling thread's shadow stack of open regions (what tr_enter pushed
 * and tr_leave popped; the core closes what is left at thread end and
 * shut-down). For user-level tasks (wrappers/argobots) that move between
 * threads with regions open. Owner thread only, never on a hot path.
 * Regions beyond the core's capacity (128) count in the depth but are not
 * stored (tr_stack_detach skips them). */
uint32_t tr_stack_depth(const struct tr_thread *t);
/* Take the regions above depth `base` (outermost first) off t's stack into
 * regions[0..max) and return how many were stored; t's depth becomes base. */
size_t tr_stack_detach(struct tr_thread *t, uint32_t base, uint32_t *regions, size_t max);
/* Push regions[0..n) (outermost first) back onto t's stack (no records). */
void tr_stack_attach(struct tr_thread *t, const uint32_t *regions, size_t n);
/* tr_leave(t, time, r) for every open region above depth `base`,
 * innermost first; afterwards t's depth is base. */
void tr_stack_leave_to(struct tr_thread *t, uint32_t base, uint64_t time);

/* ---- user-level tasks (preload/task.c) -------------------------------------------
 * A task (an Argobots work unit) runs on one thread at a time and may move
 * to another with regions open. It owns the regions opened while it runs:
 * its user region stack (VT_begin/VT_end: wrappers/vt uses the running
 * task's stack instead of the thread's) and the core's shadow-stack entries
 * above the depth it started at, which tr_task_detach/tr_task_attach move
 * out of and back onto the thread. Owner thread only, never on a hot path.
 */
#define TR_TASK_REGIONS 64
struct tr_region_frame {
	uint32_t region;       /* region id */
	uint8_t recorded;      /* an Enter was written (recording was on) */
};
struct tr_region_stack {
	uint32_t depth;
	struct tr_region_frame f[TR_TASK_REGIONS];
};
struct tr_task {
	struct tr_region_stack user;    /* regions of VT_begin/VT_end */
	uint32_t base;                  /* thread's shadow depth when it started running */
	uint32_t nshadow;               /* shadow regions saved while it does not run */
	uint32_t shadow[TR_TASK_REGIONS];
};
/* A new (or revived) task: nothing open. */
void tr_task_reset(struct tr_task *task);
/* The task running on t, NULL when the thread runs its own code. */
struct tr_task *tr_task_current(const struct tr_thread *t);
void tr_task_set_current(struct tr_thread *t, struct tr_task *task);
/* task starts running on t: its saved shadow regions go back on t's stack. */
void tr_task_attach(struct tr_thread *t, struct tr_task *task);
/* task stops running on t: its shadow regions are taken off t's stack. */
void tr_task_detach(struct tr_thread *t, struct tr_task *task);
/* task ends on t: Leave what it left open at `time`, user regions first. */
void tr_task_close(struct tr_thread *t, struct tr_task *task, uint64_t time);
/* Leave every region still open on s at `time` on t, innermost first. */
void tr_region_stack_unwind(struct tr_thread *t, struct tr_region_stack *s, uint64_t time);

/* ---- module hooks (sampling, metrics, argobots, MPI) ---------------------------------- */

struct tr_module {
	const char *name;
	/* After configuration, before main (may allocate, read tr_cfg). */
	void (*init)(void);
	/* In the new thread, after its location exists, before its first event. */
	void (*thread_init)(struct tr_thread *t);
	/* In the thread (or at exit for threads still running), before its writer closes. */
	void (*thread_fini)(struct tr_thread *t);
	/* At shut-down before the definitions are written: add definitions. */
	void (*fini)(void);
	/* In the child after fork. */
	void (*fork_child)(void);
	/* Observers on every recorded region enter/leave (metrics). May be NULL. */
	void (*on_enter)(struct tr_thread *t, uint64_t time, uint32_t region);
	void (*on_leave)(struct tr_thread *t, uint64_t time, uint32_t region);
	/* Override of how enter/leave are written (calling-context mode). At most
	 * one module may set these; NULL: Enter/Leave records. */
	void (*write_enter)(struct tr_thread *t, uint64_t time, uint32_t region);
	void (*write_leave)(struct tr_thread *t, uint64_t time, uint32_t region);
	/* "Sample now" (VT_wakeup, via tr_wakeup): record what the module
	 * records periodically (metrics) at `time` on t. May be NULL. Called on
	 * the thread t with the guard held and in_record set, like on_enter.
	 * (appended last: positional initializers stay valid) */
	void (*wakeup)(struct tr_thread *t, uint64_t time);
	/* Crash path (emergency archive: abort, SIGSEGV, a signal inside libc):
	 * async-signal-safe, no lock, no malloc; every other thread is stopped.
	 * thread_fini_crash: the thread's last records (before ProgramEnd on the
	 * master); t is stopped and not inside a record. fini_crash: the
	 * definitions the events need, written straight to g after the
	 * registry's (new ids from tr_defs_count). May be NULL. */
	void (*thread_fini_crash)(struct tr_thread *t);
	void (*fini_crash)(otf2w_gdef_writer *g);
	/* The program installs a handler for signal sig (act: its struct
	 * sigaction; signal()/sigaction() are interposed by preload/), called
	 * before it is installed. Only for handlers, not SIG_IGN/SIG_DFL; at
	 * present only for SIGPROF (the sampler hands SIGPROF over). May be NULL. */
	void (*on_sigaction)(int sig, const void *act);
	/* TRACER_DURABLE, every tick on the tracer-io thread, before the
	 * positions are read: a cue (the sampler wakes its symbol thread).
	 * Never waits for anything slow: the tick must come every interval.
	 * May be NULL. */
	void (*durable_tick)(void);
	/* On the thread t itself, right before the layer that owns the thread
	 * writes its last records (wrappers/pthread: the ThreadEnd, through
	 * tr_thread_ending): close what the module keeps open on the location
	 * (wrappers/openmp: the team a libgomp worker still waits to end), so
	 * that ThreadEnd stays the last record. Guard held; called again (and
	 * then a no-op) before thread_fini. May be NULL. */
	void (*thread_ending)(struct tr_thread *t);
	/* TRACER_DURABLE, every tick on tracer-io, with the registry held for
	 * the snapshot: define (tr_def_*) what the events recorded so far need
	 * and fini defines only at the end, for this snapshot only (dropped
	 * after it: sampled contexts not resolved yet as placeholders, VT class
	 * groups as far as defined). Quick: no symbol reading, no lock the
	 * program may hold. May be NULL. */
	void (*durable_snapshot)(void);
};
/* Called from a module's constructor (priority 200+) or from tr's init; at
 * most 16 modules. */
void tr_module_register(const struct tr_module *m);
/* Definitions of class cls (enum tr_def_class) in the registry so far: the
 * next free id (crash path, fini_crash). */
uint32_t tr_defs_count(int cls);

/* Run every module's fini hook once (idempotent; later calls return at
 * once). tr_defs_pack calls it, so the definitions modules add at the end
 * (VT class groups, sampled calling contexts) reach the MPI-unified archive;
 * the normal shut-down calls it too. */
void tr_modules_fini(void);

/* ---- definitions registry -------------------------------------------------------------
 * Thread-safe (registry lock), never on the hot path: wrappers define their
 * regions once (e.g. at init or first use, cached in a static). Every call
 * deduplicates by content, so calling twice with the same arguments returns
 * the same id. Ids are process-local and dense from 0 per class; they are
 * what the event writers record. With MPI they are unified at finalize
 * (wrappers/mpi) and mapping tables translate them.
 */
uint32_t tr_def_string(const char *s);
uint32_t tr_def_region(const char *name, const char *canonical_name, const char *description,
		       uint8_t role, uint8_t paradigm, uint32_t flags,
		       const char *source_file, uint32_t begin_line, uint32_t end_line);
uint32_t tr_def_attribute(const char *name, const char *description, uint8_t type);
uint32_t tr_def_source_code_location(const char *file, uint32_t line);
uint32_t tr_def_calling_context(uint32_t region, uint32_t scl, uint32_t parent);
uint32_t tr_def_interrupt_generator(const char *name, uint8_t mode, uint8_t base, int64_t exponent, uint64_t period);
uint32_t tr_def_metric_member(const char *name, const char *description, uint8_t metric_type,
			      uint8_t metric_mode, uint8_t value_type, uint8_t base, int64_t exponent,
			      const char *unit);
uint32_t tr_def_metric_class(uint32_t n, const uint32_t *members, uint8_t occurrence, uint8_t recorder_kind);
void tr_def_metric_class_recorder(uint32_t metric_class, uint64_t location);
/* Groups: members are ranks (COMM_GROUP/COMM_SELF) or location ids (COMM_LOCATIONS/LOCATIONS). */
uint32_t tr_def_group(const char *name, uint8_t group_type, uint8_t paradigm, uint32_t flags,
		      uint32_t n, const uint64_t *members);
uint32_t tr_def_comm(const char *name, uint32_t group, uint32_t parent, uint32_t flags);
uint32_t tr_def_inter_comm(const char *name, uint32_t group_a, uint32_t group_b, uint32_t common_comm, uint32_t flags);
uint32_t tr_def_rma_win(const char *name, uint32_t comm, uint32_t flags);
uint32_t tr_def_cart_dimension(const char *name, uint32_t size, uint8_t periodic);
uint32_t tr_def_cart_topology(const char *name, uint32_t comm, uint32_t ndims, const uint32_t *dims);
void tr_def_cart_coordinate(uint32_t topology, uint32_t rank, uint32_t ndims, const uint32_t *coords);
uint32_t tr_def_callsite(const char *file, uint32_t line, uint32_t entered_region, uint32_t left_region);
/* A Comm over the locations of this process for a thread paradigm (PTHREAD
 * thread contingent, ARGOBOTS/other thread teams); created once. */
uint32_t tr_def_thread_comm(uint8_t paradigm, const char *name);
/* I/O (wrappers/io). IoParadigm: `self` is a fixed id per paradigm chosen by
 * the module (the same in every process, not mapped), with the VERSION
 * property when version != NULL. IoRegularFile (directory 0) / IoDirectory
 * (1): scope is this host's system tree node. IoHandle: name is a String id
 * (tr_def_string); `unique` only keeps handles apart that are otherwise
 * equal (not written). */
void tr_def_io_paradigm(uint8_t self, const char *identification, const char *name, uint8_t io_class,
			uint32_t flags, const char *version);
uint32_t tr_def_io_file(const char *name, int directory);
uint32_t tr_def_io_handle(uint32_t name_string, uint32_t file, uint8_t io_paradigm, uint32_t flags,
			  uint32_t comm, uint32_t parent, uint64_t unique);
void tr_def_io_pre_created_handle_state(uint32_t handle, uint8_t mode, uint32_t status_flags);
/* Properties attached at shut-down. */
void tr_def_location_property(uint64_t location, const char *name, const char *value);

/* Generic view of the registry for MPI unification (wrappers/mpi). Each
 * definition is one tr_def_rec; fields hold ids (of the class given by the
 * field kind table tr_def_field_kinds) or plain values; strings are String
 * ids. Iteration and id remapping are done under the registry lock. */
/* enum tr_def_class: tr_defs.h */
/* Serialize all local definitions into a malloc'ed self-describing buffer
 * (strings inline), and the inverse used by the unifier. Format private to
 * preload/defs_pack.c; the unifier treats the buffers as opaque and merges them
 * with tr_defs_merge. */
int tr_defs_pack(void **buf, size_t *len);
/* tr_defs_merge (tr_defs.h) merges packed buffers of several ranks. */
/* Install the unified set: this process then writes the unified global
 * definitions (rank 0) and mapping tables local -> unified for all its
 * locations. */
int tr_defs_install_unified(const void *buf, size_t len);

/* ClockOffset (MPI clock synchronisation) for every location of this
 * process; the offsets recorded before tr_defs_install_unified() go into the
 * unified archive's local definitions (times must increase; at least two
 * are needed for the reader to apply them). */
void tr_def_clock_offset(uint64_t time, int64_t offset, double stddev);
/* A CallingContext without content deduplication: always a new id (the
 * next one), for samplers whose node index must equal the id. */
uint32_t tr_def_calling_context_new(uint32_t region, uint32_t scl, uint32_t parent);
/* A sampler that numbers its calling contexts itself (events carry its
 * node numbers) and defines them with tr_def_calling_context (content
 * deduplicated: one definition per distinct region, source location and
 * parent): map[i] is the definition id of its number i. Written as a
 * CALLING_CONTEXT mapping table into every location's local definitions at
 * shut-down. Only without MPI unification (there the unifier deduplicates
 * and ids must be tr_def_calling_context_new's). The map is copied. */
void tr_def_calling_context_map(const uint32_t *map, uint32_t n);

/* ---- process identity, locations, archive life cycle -------------------------------- */

struct tr_process {
	int rank;                 /* MPI rank or -1 (from OMPI_COMM_WORLD_RANK/PMIX_RANK at start, fixed at MPI_Init) */
	int size;                 /* MPI world size or 0 */
	char hostname[256];
	char progname[256];
	int argc;
	char **argv;              /* copy made at start */
};
extern struct tr_process tr_proc;

/* Location id of thread `index` of this process: (rank or 0) << 32 | index. */
uint64_t tr_location_id(uint32_t index);

/* Change the archive directory before any file is written (MPI: rank 0's
 * choice broadcast at MPI_Init). Returns 0, or -1 if files already exist. */
int tr_archive_set_dir(const char *dir);
const char *tr_archive_dir(void);
/* MPI: set rank/size once known (before any location file is written). */
void tr_set_rank(int rank, int size);
/* Write the whole archive now (normal path, idempotent). Called by the
 * destructor/exit paths, and by MPI_Finalize after unification. */
void tr_finish(void);
/* The same with an exit status for ProgramEnd (MPI_Abort: its error code). */
void tr_finish_status(int status, int have_status);
/* Helper processes (preload/spawn.c): a tool of this installation
 * (PREFIX/bin/<tool> next to the lib/ libtracer.so was loaded from) run
 * detached and untraced (the environment without LD_PRELOAD). Prepare in
 * thread context (allocates; args and log must outlive h); tr_helper_spawn
 * is async-signal-safe: own session, stdin /dev/null, stdout and stderr to
 * the log; returns the pid or -1. tr_helper_prepare: 0, or -1 when the tool
 * is not installed. */
struct tr_helper {
	char path[4096];
	char *argv[16];
	char **envp;
	const char *log;
	int append;   /* 1: the log is appended to (default: truncated) */
};
int tr_helper_prepare(struct tr_helper *h, const char *tool, const char *const *args, const char *log);
pid_t tr_helper_spawn(const struct tr_helper *h);   /* detached; async-signal-safe */
double tr_helper_run(const struct tr_helper *h);    /* and waits: its seconds, -1 failed */
/* MPI: the command that merges the per-rank archives when the run ends
 * without MPI_Finalize (kept by the caller for the process's life). One
 * rank starts it, from the crash path too. */
void tr_archive_set_merge(const struct tr_helper *merge);
/* Set by wrappers/mpi: 1 when unification will write the global defs (only rank 0 writes them). */
void tr_set_global_writer(int yes);

/* ---- MPI support (wrappers/mpi) ------------------------------------------------
 * - Ranks started by mpirun know their rank from the environment
 *   (OMPI_COMM_WORLD_RANK / PMIX_RANK): location ids are final from the start.
 *   At MPI_Init call tr_set_rank() and make every rank use rank 0's
 *   directory: tr_archive_set_dir(rank 0's tr_archive_dir()) (a no-op when
 *   they agree already; refused (-1) once this rank flushed files elsewhere).
 * - tr_set_global_writer(0) on every rank at MPI_Init: from then on the
 *   process does not write global definitions by itself, unless MPI_Finalize
 *   is never reached (see below).
 * - At MPI_Finalize: pack / gather / merge (on rank 0) / broadcast /
 *   tr_defs_install_unified(buf, len) on every rank. Everything
 *   is then written at process exit (events keep being recorded until then),
 *   or call tr_finish() right away.
 * - Files (directory D, the same on every rank: TRACER_OUTPUT, else
 *   tracer-<prog>-<job id> from PMIX_NAMESPACE/SLURM_JOB_ID/..., else rank 0's
 *   choice via tr_archive_set_dir): every rank always writes a complete
 *   standalone archive D/rank<r>.otf2 (+ rank<r>.def, rank<r>/<loc>.evt) at
 *   any exit (normal, _exit, signals, crash: emergency path, MPI_Abort via
 *   tr_finish) - that is the partial data when MPI_Finalize is never reached -
 *   and D/rank<r>.tdefs, its packed definitions (tr_defs_pack format, also
 *   from the crash path) for an exact offline unification (tr_defs_merge).
 *   tr_defs_install_unified() then writes D/traces/<loc>.def (mapping tables
 *   + ClockOffsets) for this rank's locations right away, and at exit rank 0
 *   (write_global) writes the unified D/traces.def + D/traces.otf2 with
 *   D/traces/<loc>.evt -> ../rank<r>/<loc>.evt links. No rank ever writes
 *   another rank's files.
 */

/* ---- real symbols (dlsym(RTLD_NEXT)) ------------------------------------------------- */

/* Resolve a symbol of the next object after libtracer.so (RTLD_NEXT, then
 * RTLD_DEFAULT, then every loaded object: a library opened with
 * dlopen(RTLD_LOCAL) is in no global scope); never a definition of
 * libtracer.so itself (tr_in_self). NULL: no loaded object has it.
 * dlsym's own allocations cannot recurse into the tracer: it interposes no
 * allocator, and its objects live on its own heap (mem.c). */
void *tr_dlsym_next(const char *name);
/* The last step alone: the first loaded object other than libtracer.so
 * that defines name (*handle, if given: its dlopen handle, kept open). */
void *tr_dlsym_loaded(const char *name, void **handle);
/* p lies in libtracer.so. */
int tr_in_self(const void *p);
/* The one table-driven resolver of real functions, used by every module:
 * each entry whose slot is still NULL is looked up (dlvsym(RTLD_NEXT) when
 * a version is given, else tr_dlsym_next) and stored atomically. Returns
 * how many entries stay unresolved (the caller decides what that means).
 * Not async-signal-safe (dlsym): constructor, or the first call. */
struct tr_real_sym {
	void **slot;
	const char *name;
	const char *version;   /* NULL: the default version */
};
#define TR_REAL_SYM(fn) { (void **)&real_##fn, #fn, NULL }
#define TR_REAL_SYMV(fn, v) { (void **)&real_##fn, #fn, v }
size_t tr_real_resolve(const struct tr_real_sym *tab, size_t n);
#ifdef __cplusplus
}
#endif
#endif /* TR_TRACER_H */
