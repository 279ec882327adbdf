/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_thread.h - the clock and the per-thread state (struct tr_thread, its
 * accessors): part of tracer.h.
 */
#ifndef TR_THREAD_H
#define TR_THREAD_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include "otf2w.h"
#include "tr_config.h"

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

/* TR_T_FORKED: a fork child's thread until its first traced call, which
 * makes the child's archive (tr_fork_complete): nothing is recorded before. */
enum tr_thread_state { TR_T_UNINIT = 0, TR_T_ACTIVE, TR_T_DYING, TR_T_DEAD, TR_T_FORKED };

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
	 * complete (preload/core/signals.c) */
	volatile uint32_t sig_deferred;
	uint64_t pthread_self;     /* pthread_t of the thread */
	int tid;                   /* kernel tid */
	/* Slots owned by other modules (set in their thread_init hooks). */
	void *sampling;
	void *metrics;
	/* A call that the end of the process may cut (a blocking collective
	 * between its Begin and End records): set by its wrapper for the time
	 * of the call; closing the thread's open regions (exit, crash and
	 * termination paths) calls cut(t, time) first, which writes what ends
	 * the call's records. Async-signal-safe, no lock, no allocation. */
	void (*cut)(struct tr_thread *t, uint64_t time);
	uint64_t cut_arg[3];
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
/* 1 once the constructor has run and until shut-down started: a copy of
 * the core's state (tr_live_update) read inline by every wrapper. */
extern int tr_live;
static inline int tr_is_active(void)
{
	return __atomic_load_n(&tr_live, __ATOMIC_RELAXED);
}
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
/* fn(arg) with a descriptor table of the tracer's own (preload/core/
 * fdtable.c): what fn opens never takes a number in the program's table,
 * and is gone when it returns (a module must never keep a descriptor
 * across two calls). 0 done, -1 not run (the caller runs fn itself, with
 * its files at a high number). In place when already inside such a call. */
int tr_fd_private_run(void (*fn)(void *), void *arg);
/* fn(arg) as tr_fd_private_run, else (no table of our own) here. */
void tr_fd_private_call(void (*fn)(void *), void *arg);
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

#endif /* TR_THREAD_H */
