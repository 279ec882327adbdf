/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread.c - interposition of the POSIX threads API (TRACER_PTHREAD=on):
 * the tables (generated from pthread_list.h), the resolver and the module.
 * The wrappers: pthread_sync.c (locks, condition variables, barriers,
 * semaphores) and pthread_thread.c (thread life cycle).
 *
 * Thread life cycle (paradigm PTHREAD, thread contingent = the Comm of
 * tr_def_thread_comm): pthread_create records Enter/ThreadCreate/Leave in
 * the creator and starts the new thread in pth_start_routine, which records
 * ThreadBegin as the first event of the new location and ThreadEnd when the
 * start routine returns, calls pthread_exit or is cancelled (cleanup
 * handler); pthread_join and friends record ThreadWait with the same
 * sequence count. Threads still running at exit get their ThreadEnd from
 * the thread_fini hook.
 *
 * Locks (mutex, rwlock, spinlock, and the mutex of a condition wait) are
 * ThreadAcquireLock/ThreadReleaseLock with a stable dense lock id and a
 * per-lock acquisition order (pthread_int.h). Lock calls try the lock
 * first: a lock taken at once costs one clock read (Enter, Acquire, Leave
 * at one timestamp); a contended one is Enter at the attempt, Acquire and
 * Leave when the lock is held, so the waiting time is visible. Unlock is a
 * ThreadReleaseLock alone.
 *
 * Every other call (condition variables, barriers, semaphores, detach,
 * cancel, exit) is an Enter/Leave region of paradigm PTHREAD.
 *
 * Threads started by a wrapped library while inside a recorded call (Open
 * MPI's progress threads in MPI_Init) are internal: not recorded.
 *
 * Hot path rules: no malloc, no lock, no stdio; per-thread state is
 * initial-exec TLS; errno is preserved (functions that report through
 * errno, sem_*, keep the value the real call left). pthread_create/join
 * are not hot: they allocate and take a private lock (real functions).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pthread_wrap.h"

/* ---- tables (pthread_list.h) ---- */

#define PTH_DEF_N(fn, version, ret, params) ret (*real_##fn) params;
#define PTH_DEF_R(fn, rgn, role, version, ret, params) PTH_DEF_N(fn, version, ret, params)
TR_PTH_FUNCS(PTH_DEF_R, PTH_DEF_N)

#define PTH_SYM_N(fn, version, ret, params) TR_REAL_SYMV(fn, version),
#define PTH_SYM_R(fn, rgn, role, version, ret, params) PTH_SYM_N(fn, version, ret, params)
static const struct tr_real_sym pth_syms[] = { TR_PTH_FUNCS(PTH_SYM_R, PTH_SYM_N) };

#define PTH_RGN_R(fn, rgn, role, ...) [R_##rgn] = { #fn, OTF2W_ROLE_##role },
#define PTH_RGN_N(...)
static const struct {
	const char *name;
	uint8_t role;
} pth_rgn_def[R_N] = { TR_PTH_FUNCS(PTH_RGN_R, PTH_RGN_N) };

uint32_t tr_pth_rgn[R_N];
struct tr_call_code tr_pth_code[R_N];
uint32_t tr_pth_comm;
_Atomic int tr_pth_on;
TR_TLS int tr_pth_resolving;
TR_TLS struct pth_thread_state tr_pth_tls;

/* Resolve every real function at once, at the process's first pthread
 * call (a process that makes none, as most short ones of a shell script,
 * looks up 37 names less at its start): the first call of a wrapper
 * (PTH_INIT), the first recorded call of a thread (tr_pth_get_slow, before
 * the wrapper's recorded path calls e.g. the real trylock), and the thread
 * end, which takes a lock of ours. Only sem_post, async-signal-safe, is
 * resolved by the constructor (a signal handler may make the first call;
 * dlsym is no function for a handler). The first call is made before the
 * program's second thread exists in practice (threads start through our
 * pthread_create); a symbol the C library lacks stays NULL: its wrapper is
 * then never reached (the program could not have linked against it). */
static int pth_resolved;

static void pth_resolve_all(void)
{
	tr_pth_resolving = 1;
	tr_real_resolve(pth_syms, sizeof(pth_syms) / sizeof(pth_syms[0]));
	tr_pth_resolving = 0;
	__atomic_store_n(&pth_resolved, 1, __ATOMIC_RELEASE);
}

void tr_pth_resolve(void)
{
	if (tr_unlikely(!__atomic_load_n(&pth_resolved, __ATOMIC_ACQUIRE)) && !tr_pth_resolving)
		pth_resolve_all();
}

void tr_pth_resolve_slow(void **slot, const char *name)
{
	pth_resolve_all();
	if (!*slot) {
		tr_log_error("pthread: cannot find the real %s", name);
		abort();
	}
}

/* pth_enter when the thread's state is not cached (its first call, or
 * not recorded now): cache it when its pthread calls are recorded. */
struct tr_thread *tr_pth_get_slow(void)
{
	struct tr_thread *t;

	if (!atomic_load_explicit(&tr_pth_on, memory_order_acquire) || tr_pth_tls.ended)
		return NULL;
	tr_pth_resolve();
	if (!__atomic_load_n(&pth_resolved, __ATOMIC_ACQUIRE))
		return NULL;   /* inside the resolution (dlsym's allocator): untraced */
	t = tr_thread_get();
	if (t)
		tr_pth_tls.self = t;
	return t;
}

/* ---- cancellation inside a recorded blocking call (pthread_int.h) ---- */

void tr_pth_cu_handler(void *p)
{
	struct pth_cu *c = p;
	uint64_t now = tr_time();

	if (c->mutex)
		now = pth_acquired(c->t, now, c->mutex, 0);
	tr_leave(c->t, now, pth_region(c->rgn));
	tr_thread_put(c->t);
}

/* ---- module hooks --------------------------------------------------------------------------------- */

/* Before the writer of t closes: in the thread (core's TSD destructor,
 * tr_thread_end) or at exit for a thread still running. */
static void pth_thread_fini(struct tr_thread *t)
{
	if (tr_thread_peek() == t && tr_pth_tls.al) {   /* (its own thread: its TLS) */
		otf2w_attr_list_delete(tr_pth_tls.al);
		tr_pth_tls.al = NULL;
	}
	/* the master's end: the sites of the locks first seen since MPI_Finalize
	 * packed the definitions (and ran pth_fini) */
	if (t->index == 0 && atomic_load_explicit(&tr_pth_on, memory_order_relaxed))
		tr_pth_lock_sites();
	if (!atomic_load_explicit(&tr_pth_on, memory_order_relaxed) || !tr_thread_seq(t))
		return;
	tr_pth_write_thread_end(t, tr_thread_peek() == t);
}

/* Crash path: the ThreadEnd of a thread still running (no lock: every
 * other thread is stopped; a thread inside tr_pth_write_thread_end is inside a
 * record and not passed here). */
static void pth_thread_fini_crash(struct tr_thread *t)
{
	if (!atomic_load_explicit(&tr_pth_on, memory_order_relaxed) || !tr_thread_seq(t) || !t->w || tr_thread_closed(t))
		return;
	uint64_t now = tr_time();
	uint64_t last = otf2w_evt_writer_last_time(t->w);
	otf2w_evt_thread_end(t->w, NULL, now > last ? now : last, tr_pth_comm, tr_thread_seq(t));
	tr_thread_set_seq(t, 0);
}

static void pth_fork_child(void)
{
	/* Only the forking thread exists in the child; the tables describe
	 * the parent's threads and locks held there. */
	tr_pth_thread_fork_child();
	tr_pth_tls.nheld = 0;
	tr_pth_tls.lost = 0;
	tr_pth_lock_reset();
	tr_pth_lock_sites_reset();
	/* The forking thread is the child's master thread: no ThreadEnd. */
	struct tr_thread *t = tr_thread_peek();
	if (t)
		tr_thread_set_seq(t, 0);
}

uint32_t tr_pth_region_define(enum tr_pth_rgn r)
{
	/* the registry gives a region defined before its id again: two
	 * threads here at once store the same values. errno kept: this runs
	 * between a wrapped call and the Leave that takes its errno (the
	 * registry lock's futex left EAGAIN after a successful sem_trywait:
	 * pthread.sync) */
	int saved = errno;
	uint32_t id = tr_def_region(pth_rgn_def[r].name, pth_rgn_def[r].name, "", pth_rgn_def[r].role,
				    OTF2W_PARADIGM_PTHREAD, OTF2W_REGION_FLAG_NONE, "", 0, 0);
	tr_call_code(&tr_pth_code[r], id);
	__atomic_store_n(&tr_pth_rgn[r], id + 1, __ATOMIC_RELEASE);
	errno = saved;
	return id;
}

/* TRACER_PTHREAD: on (default) or off */
static int pth_setting = 1;

static const struct tr_setting pth_settings[] = {
	TR_SETTING_ON_OFF("TRACER_PTHREAD", &pth_setting, "on"),
};
TR_SETTINGS_TABLE(pth_table, "pthread", pth_settings);

static void pth_init(void)
{
	if (!pth_setting)
		return;   /* TRACER_PTHREAD=off: every wrapper passes through */
	if (tr_pth_lock_init()) {
		tr_log_error("pthread: cannot map the lock table (%s); pthread tracing disabled",
			     strerror(errno));
		return;
	}
	tr_pth_comm = tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, "pthread threads");
	atomic_store_explicit(&tr_pth_on, 1, memory_order_release);
}

/* MPI_Finalize: every region and the lock-address attribute, for the calls
 * made after it (definitions made later are not unified). */
static void pth_defs_freeze(void)
{
	if (!atomic_load_explicit(&tr_pth_on, memory_order_acquire))
		return;
	for (int r = 0; r < R_N; r++)
		(void)pth_region((enum tr_pth_rgn)r);
	(void)tr_pth_lock_attr();   /* (a lock first taken after MPI_Finalize carries it) */
	tr_pth_lock_sites();
}

static void pth_fini(void)
{
	if (atomic_load_explicit(&tr_pth_on, memory_order_acquire))
		tr_pth_lock_sites();
	if (tr_pth_lock_overflowed())
		tr_log_warn("pthread: more than %u distinct locks; some lock ids are shared",
			    TR_PTH_LOCK_SLOTS);
	tr_log_debug("pthread: %u locks, %llu threads started", tr_pth_lock_count(),
		     (unsigned long long)atomic_load(&tr_pth_ncreated));
}

static const struct tr_module pth_module = {
	.name = "pthread",
	.init = pth_init,
	.thread_fini = pth_thread_fini,
	.fini = pth_fini,
	.fork_child = pth_fork_child,
	.thread_fini_crash = pth_thread_fini_crash,
	.defs_freeze = pth_defs_freeze,
};

/* Registered after sampling/ (priority 210): the thread_fini hooks run in
 * registration order, and for a thread still running at exit sampling's
 * hook writes the CallingContextLeave records of its open regions - they
 * must come before the ThreadEnd written by pth_thread_fini. */
__attribute__((constructor(211))) static void pth_ctor(void)
{
	const struct tr_real_sym post = TR_REAL_SYMV(sem_post, NULL);
	tr_real_resolve(&post, 1);
	tr_module_register(&pth_module);
}
