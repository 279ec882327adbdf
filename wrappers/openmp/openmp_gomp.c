/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_gomp.c - GCC's OpenMP runtime (libgomp, which has no OMPT in GCC
 * 12): the GOMP_* entry points gcc emits are interposed to give the records
 * of openmp_int.h. This file: parallel regions, teams, work-sharing and
 * barriers; critical, locks and tasks: openmp_gomp_sync.c.
 *
 *   GOMP_parallel[_loop_*|_sections|_reductions], GOMP_parallel_start/_end
 *       ThreadFork .. ThreadJoin around the real call; the outlined function
 *       is replaced by a trampoline that records ThreadTeamBegin + "omp
 *       parallel" on every thread of the team (combined constructs also
 *       enter "omp for" / "omp sections"); when the thread's share ends,
 *       "omp implicit barrier" begins. The master leaves it, "omp parallel"
 *       and the team (ThreadTeamEnd) at the join. A worker waits in the
 *       runtime, unseen: its barrier, "omp parallel" and team end late, when
 *       it starts its next share (or at its end, or at exit), dated at the
 *       master's join (tr_omp_join_time, as for OMPT).
 *   GOMP_barrier                         "omp barrier"; "omp implicit
 *       barrier" when it ends a single (gcc emits the single's implicit
 *       barrier as GOMP_barrier)
 *   GOMP_loop_*_start .. GOMP_loop_end*  "omp for", then the end call's
 *   GOMP_sections_start .. _end*         wait as "omp implicit barrier"
 *   GOMP_single_start, GOMP_single_copy_start/_end   "omp single": on the
 *       thread that runs the body until its end (copy_end) or implicit
 *       barrier, on the others around the call
 *
 * gcc emits no runtime call for schedule(static) loops (their implicit
 * barrier is a GOMP_barrier: "omp barrier"), master and masked: not seen.
 * One "tracer:" line at exit says what is not seen when libgomp was traced.
 *
 * With libomp (which exports GOMP_* and omp_* too) the OMPT front end
 * records everything and these wrappers pass through. Nothing here
 * allocates or locks; the real functions are resolved once, all together
 * (openmp_gomp_list.h, tr_real_resolve). Per
 * region: one TLS load per thread for its state, no lookup.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "openmp_gomp.h"

_Atomic int tr_gomp_used;

void *tr_gomp_real[GOMP_NREAL];

#define GOMP_SYM(fn) { &tr_gomp_real[GOMP_I_##fn], #fn, NULL },
#define GOMP_LOOP_SYM(s) GOMP_SYM(GOMP_loop_##s##_start) GOMP_SYM(GOMP_loop_ull_##s##_start)
static const struct tr_real_sym gomp_syms[GOMP_NREAL] = {
	TR_GOMP_NAMES(GOMP_SYM) TR_GOMP_LOOP_SCHEDS(GOMP_LOOP_SYM, GOMP_LOOP_SYM)
};

/* The first call whose real function is not known yet: every entry that
 * can be found is (a symbol this libgomp lacks stays NULL: its wrapper is
 * never reached, the program could not have linked against it). */
void *tr_gomp_resolve(int i)
{
	if (tr_real_resolve(gomp_syms, GOMP_NREAL)) {
		/* libgomp loaded in a local scope (a plugin dlopen'ed with
		 * RTLD_LOCAL): neither RTLD_NEXT nor RTLD_DEFAULT sees it */
		void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
		for (int k = 0; h && k < GOMP_NREAL; k++) {
			void *p = __atomic_load_n(gomp_syms[k].slot, __ATOMIC_ACQUIRE);
			if (!p && (p = dlsym(h, gomp_syms[k].name)) != NULL)
				__atomic_store_n(gomp_syms[k].slot, p, __ATOMIC_RELEASE);
		}
	}
	void *p = __atomic_load_n(&tr_gomp_real[i], __ATOMIC_ACQUIRE);
	if (!p)
		tr_log_error("OpenMP: %s not found after libtracer.so", gomp_syms[i].name);
	return p;
}

int tr_gomp_setup(void)
{
	if (tr_omp_setup())
		return -1;
	atomic_store_explicit(&tr_gomp_used, 1, memory_order_relaxed);
	return 0;
}

/* ---- work-sharing stack: the end calls leave only what the start entered ----
 * Per thread; each team's entries lie above the base its trampoline set. */

#define GOMP_WS_MAX 32
static TR_TLS uint8_t gomp_ws[GOMP_WS_MAX];   /* region index + 1 */
static TR_TLS uint32_t gomp_nws, gomp_ws_base;
static TR_TLS uint8_t gomp_ibar_due;            /* a single ended: its barrier comes next */

static int gomp_ws_top(int r)
{
	return gomp_nws > gomp_ws_base && gomp_nws <= GOMP_WS_MAX && gomp_ws[gomp_nws - 1] == r + 1;
}

/* Leave the innermost work-sharing region if it is `r`. */
static void gomp_ws_end(struct tr_thread *t, int r, uint64_t now)
{
	if (gomp_nws <= gomp_ws_base || (gomp_nws <= GOMP_WS_MAX && gomp_ws[gomp_nws - 1] != r + 1))
		return;
	gomp_nws--;
	tr_leave(t, now, tr_omp_rgn[r]);
}

/* A single whose end was not seen (nowait: no call after its body) ends
 * at the thread's next work-sharing construct or barrier. */
static void gomp_single_close(struct tr_thread *t, uint64_t now)
{
	if (gomp_ws_top(TR_OMP_SINGLE)) {
		gomp_ws_end(t, TR_OMP_SINGLE, now);
		gomp_ibar_due = 1;
	}
}

static void gomp_ws_begin(struct tr_thread *t, int r, uint64_t now)
{
	gomp_single_close(t, now);
	gomp_ibar_due = 0;
	if (gomp_nws < GOMP_WS_MAX)
		gomp_ws[gomp_nws] = (uint8_t)(r + 1);
	gomp_nws++;
	tr_enter(t, now, tr_omp_rgn[r]);
}

/* ---- late team ends of workers (per location index: read at exit) ---- */

static struct TR_OMP_LINE gomp_pend {
	uint32_t on;
	uint32_t master, seq;     /* the region: its master's location index and number */
	uint32_t base;            /* shadow stack depth before the team began */
	uint64_t since;           /* the implicit barrier's begin */
} gomp_pend[TR_OMP_MAX_THREADS] TR_BIG_BSS;

static void gomp_pend_end(struct tr_thread *t, int own)
{
	struct gomp_pend *pe = &gomp_pend[t->index];
	pe->on = 0;
	uint64_t end = tr_omp_join_time(t, pe->master, pe->seq, pe->since);
	tr_omp_team_close(t, pe->base, end ? end : tr_time(), own);
}

void tr_omp_gomp_thread_fini(struct tr_thread *t)
{
	if (t->index < TR_OMP_MAX_THREADS && gomp_pend[t->index].on)
		gomp_pend_end(t, tr_thread_peek() == t);
}

void tr_omp_gomp_fork_child(void)
{
	tr_mem_zero(gomp_pend, sizeof(gomp_pend));
}

/* ---- parallel regions ---- */

struct gomp_par {
	void *rdata;                /* first: GOMP_parallel_reductions reads it (the data's first word) */
	gomp_fn fn;
	void *data;
	struct tr_thread *master;   /* the encountering thread */
	uint32_t seq;               /* its region number */
	int ws;                     /* combined construct: region to enter, or -1 */
};

static TR_TLS int gomp_named;     /* this thread's name was decided */

static void gomp_team_fn(void *arg)
{
	struct gomp_par *p = arg;
	uint32_t ws_base = gomp_ws_base, base = 0;
	struct tr_thread *t = tr_thread_get();
	int traced = t != NULL;
	if (t) {
		if (t->index < TR_OMP_MAX_THREADS && gomp_pend[t->index].on)
			gomp_pend_end(t, 1);     /* this worker's previous team */
		if (tr_unlikely(!gomp_named)) {
			gomp_named = 1;
			GOMP_REAL(int, omp_get_thread_num, void);
			if (t != p->master && real_omp_get_thread_num && real_omp_get_thread_num() != 0)
				tr_omp_name_worker(t);   /* a thread libgomp created */
		}
		base = tr_stack_depth(t);
		uint64_t now = tr_time();
		tr_omp_team_begin(t, now);
		gomp_ws_base = gomp_nws;
		gomp_ibar_due = 0;
		if (p->ws >= 0)
			gomp_ws_begin(t, p->ws, now);
		tr_thread_put(t);
	}
	p->fn(p->data);
	t = traced ? tr_thread_get() : NULL;
	if (t) {
		uint64_t now = tr_time();
		/* work-sharing regions left open (combined construct, single nowait) */
		tr_stack_leave_to(t, base + 1, now);
		gomp_nws = gomp_ws_base;
		gomp_ibar_due = 0;
		tr_enter(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
		if (t != p->master && t->index < TR_OMP_MAX_THREADS) {
			struct gomp_pend *pe = &gomp_pend[t->index];
			pe->master = p->master->index;
			pe->seq = p->seq;
			pe->base = base;
			pe->since = now;
			pe->on = 1;
		} else if (t != p->master) {   /* no room to end it late: ends now */
			tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
			tr_omp_team_end(t, now);
		}
		tr_thread_put(t);
	}
	gomp_ws_base = ws_base;
}

/* Before the real call: fills p; returns the trampoline's argument or NULL
 * (not traced: call the real function with the original arguments). */
static struct gomp_par *gomp_par_begin(struct gomp_par *p, gomp_fn fn, void *data, unsigned n, int ws)
{
	struct tr_thread *t = gomp_get();
	if (!t)
		return NULL;
	p->rdata = NULL;
	p->fn = fn;
	p->data = data;
	p->master = t;
	p->seq = tr_omp_region_seq(t);
	p->ws = ws;
	if (!n) {       /* no num_threads clause: the default team size, as OMPT reports it */
		GOMP_REAL(int, omp_get_max_threads, void);
		if (real_omp_get_max_threads)
			n = (unsigned)real_omp_get_max_threads();
	}
	tr_omp_fork(t, tr_time(), n);
	tr_thread_put(t);
	return p;
}

/* After the real call (the join): the master's barrier and team end, the
 * join, published for the workers' late ends. */
static void gomp_par_end(const struct gomp_par *p)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	uint64_t now = tr_time();
	tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
	tr_omp_team_end(t, now);
	tr_omp_join(t, now);
	tr_omp_region_joined(t, p->seq, now);
	tr_thread_put(t);
}

TR_EXPORT void GOMP_parallel(gomp_fn fn, void *data, unsigned n, unsigned flags)
{
	GOMP_REAL(void, GOMP_parallel, gomp_fn, void *, unsigned, unsigned);
	struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, -1);
	if (!p) {
		real_GOMP_parallel(fn, data, n, flags);
		return;
	}
	real_GOMP_parallel(gomp_team_fn, p, n, flags);
	gomp_par_end(p);
}

/* parallel with task reductions: libgomp reads the reduction data from the
 * first word of data, before running fn on the team: our block starts with it. */
TR_EXPORT unsigned GOMP_parallel_reductions(gomp_fn fn, void *data, unsigned n, unsigned flags)
{
	GOMP_REAL(unsigned, GOMP_parallel_reductions, gomp_fn, void *, unsigned, unsigned);
	struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, -1);
	if (!p)
		return real_GOMP_parallel_reductions(fn, data, n, flags);
	p->rdata = *(void **)data;
	unsigned r = real_GOMP_parallel_reductions(gomp_team_fn, p, n, flags);
	gomp_par_end(p);
	return r;
}

TR_EXPORT void GOMP_parallel_sections(gomp_fn fn, void *data, unsigned n, unsigned count, unsigned flags)
{
	GOMP_REAL(void, GOMP_parallel_sections, gomp_fn, void *, unsigned, unsigned, unsigned);
	struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_SECTIONS);
	if (!p) {
		real_GOMP_parallel_sections(fn, data, n, count, flags);
		return;
	}
	real_GOMP_parallel_sections(gomp_team_fn, p, n, count, flags);
	gomp_par_end(p);
}

#define GOMP_PAR_LOOP(name)                                                                      \
	TR_EXPORT void GOMP_parallel_loop_##name(gomp_fn fn, void *data, unsigned n, long start,  \
						 long end, long incr, long chunk, unsigned flags) \
	{                                                                                        \
		GOMP_REAL(void, GOMP_parallel_loop_##name, gomp_fn, void *, unsigned, long, long, \
			  long, long, unsigned);                                                 \
		struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_LOOP);        \
		if (!p) {                                                                        \
			real_GOMP_parallel_loop_##name(fn, data, n, start, end, incr, chunk, flags); \
			return;                                                                  \
		}                                                                                \
		real_GOMP_parallel_loop_##name(gomp_team_fn, p, n, start, end, incr, chunk, flags); \
		gomp_par_end(p);                                                                  \
	}
#define GOMP_PAR_LOOP_RT(name)                                                                   \
	TR_EXPORT void GOMP_parallel_loop_##name(gomp_fn fn, void *data, unsigned n, long start,  \
						 long end, long incr, unsigned flags)             \
	{                                                                                        \
		GOMP_REAL(void, GOMP_parallel_loop_##name, gomp_fn, void *, unsigned, long, long, \
			  long, unsigned);                                                       \
		struct gomp_par par, *p = gomp_par_begin(&par, fn, data, n, TR_OMP_LOOP);        \
		if (!p) {                                                                        \
			real_GOMP_parallel_loop_##name(fn, data, n, start, end, incr, flags);    \
			return;                                                                  \
		}                                                                                \
		real_GOMP_parallel_loop_##name(gomp_team_fn, p, n, start, end, incr, flags);     \
		gomp_par_end(p);                                                                  \
	}
GOMP_PAR_LOOP(static)
GOMP_PAR_LOOP(dynamic)
GOMP_PAR_LOOP(guided)
GOMP_PAR_LOOP(nonmonotonic_dynamic)
GOMP_PAR_LOOP(nonmonotonic_guided)
GOMP_PAR_LOOP_RT(runtime)
GOMP_PAR_LOOP_RT(nonmonotonic_runtime)
GOMP_PAR_LOOP_RT(maybe_nonmonotonic_runtime)
/* Old ABI (GCC < 4.9): start, the encountering thread runs fn itself, end.
 * The trampoline's argument must live until the end: per-thread stack. */
#define GOMP_OLD_MAX 16
static TR_TLS struct gomp_par gomp_old[GOMP_OLD_MAX];
static TR_TLS uint32_t gomp_nold;      /* entries, including untraced ones */
static TR_TLS uint32_t gomp_old_traced;  /* bit i: entry i traced */

TR_EXPORT void GOMP_parallel_start(gomp_fn fn, void *data, unsigned n)
{
	GOMP_REAL(void, GOMP_parallel_start, gomp_fn, void *, unsigned);
	uint32_t i = gomp_nold++;
	struct gomp_par *p = i < GOMP_OLD_MAX ? gomp_par_begin(&gomp_old[i], fn, data, n, -1) : NULL;
	if (!p) {
		if (i < GOMP_OLD_MAX)
			gomp_old_traced &= ~(1u << i);
		real_GOMP_parallel_start(fn, data, n);
		return;
	}
	gomp_old_traced |= 1u << i;
	real_GOMP_parallel_start(gomp_team_fn, p, n);
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_omp_team_begin(t, tr_time());
		tr_thread_put(t);
	}
}

TR_EXPORT void GOMP_parallel_end(void)
{
	GOMP_REAL(void, GOMP_parallel_end, void);
	uint32_t i = gomp_nold ? --gomp_nold : 0;
	int traced = i < GOMP_OLD_MAX && (gomp_old_traced >> i & 1);
	struct tr_thread *t = traced ? tr_thread_get() : NULL;
	if (t) {
		tr_enter(t, tr_time(), tr_omp_rgn[TR_OMP_IBARRIER]);
		tr_thread_put(t);
	}
	real_GOMP_parallel_end();
	if (traced)
		gomp_par_end(&gomp_old[i]);
}

/* ---- barriers, single ---- */

/* The barrier's region: implicit when it ends a single. */
static int gomp_barrier_region(struct tr_thread *t)
{
	gomp_single_close(t, tr_time());
	int r = gomp_ibar_due ? TR_OMP_IBARRIER : TR_OMP_BARRIER;
	gomp_ibar_due = 0;
	return r;
}

TR_EXPORT void GOMP_barrier(void)
{
	GOMP_REAL(void, GOMP_barrier, void);
	struct tr_thread *t = gomp_get();
	if (!t) {
		real_GOMP_barrier();
		return;
	}
	int r = gomp_barrier_region(t);
	GOMP_AROUND_T(t, r, real_GOMP_barrier(), tr_leave(t, now, tr_omp_rgn[r]));
}

TR_EXPORT bool GOMP_barrier_cancel(void)
{
	GOMP_REAL(bool, GOMP_barrier_cancel, void);
	struct tr_thread *t = gomp_get();
	if (!t)
		return real_GOMP_barrier_cancel();
	int r = gomp_barrier_region(t);
	bool c;
	GOMP_AROUND_T(t, r, c = real_GOMP_barrier_cancel(), tr_leave(t, now, tr_omp_rgn[r]));
	return c;
}

/* single: entered before the call; the thread that runs the body (`mine`)
 * stays in it until its end, the others leave it at once. */
static struct tr_thread *gomp_single_begin(void)
{
	struct tr_thread *t = gomp_get();
	if (t) {
		gomp_ws_begin(t, TR_OMP_SINGLE, tr_time());
		tr_thread_put(t);
	}
	return t;
}

static void gomp_single_started(int mine)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	if (!mine) {
		gomp_ws_end(t, TR_OMP_SINGLE, tr_time());
		gomp_ibar_due = 1;
	}
	tr_thread_put(t);
}

TR_EXPORT bool GOMP_single_start(void)
{
	GOMP_REAL(bool, GOMP_single_start, void);
	int traced = gomp_single_begin() != NULL;
	bool ret = real_GOMP_single_start();
	if (traced)
		gomp_single_started(ret);
	return ret;
}

/* single copyprivate: the body's thread gets NULL and ends with copy_end,
 * which waits for the team; the others wait in copy_start for its data. */
TR_EXPORT void *GOMP_single_copy_start(void)
{
	GOMP_REAL(void *, GOMP_single_copy_start, void);
	int traced = gomp_single_begin() != NULL;
	void *ret = real_GOMP_single_copy_start();
	if (traced)
		gomp_single_started(ret == NULL);
	return ret;
}

TR_EXPORT void GOMP_single_copy_end(void *data)
{
	GOMP_REAL(void, GOMP_single_copy_end, void *);
	struct tr_thread *t = gomp_get();
	if (!t) {
		real_GOMP_single_copy_end(data);
		return;
	}
	gomp_single_close(t, tr_time());
	gomp_ibar_due = 1;
	GOMP_AROUND_T(t, TR_OMP_IBARRIER, real_GOMP_single_copy_end(data),
		      tr_leave(t, now, tr_omp_rgn[TR_OMP_IBARRIER]));
}

/* ---- work-sharing loops and sections ---- */

static void gomp_ws_start(int r)
{
	struct tr_thread *t = gomp_get();
	if (!t)
		return;
	gomp_ws_begin(t, r, tr_time());
	tr_thread_put(t);
}

#define GOMP_LOOP_CHUNK(name)                                                                     \
	TR_EXPORT bool GOMP_loop_##name##_start(long s, long e, long i, long c, long *is, long *ie) \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_##name##_start, long, long, long, long, long *, long *); \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_##name##_start(s, e, i, c, is, ie);                         \
	}
#define GOMP_LOOP_RT(name)                                                                \
	TR_EXPORT bool GOMP_loop_##name##_start(long s, long e, long i, long *is, long *ie) \
	{                                                                                 \
		GOMP_REAL(bool, GOMP_loop_##name##_start, long, long, long, long *, long *); \
		gomp_ws_start(TR_OMP_LOOP);                                               \
		return real_GOMP_loop_##name##_start(s, e, i, is, ie);                    \
	}
#define GOMP_LOOP_ULL_CHUNK(name)                                                                 \
	TR_EXPORT bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull c, ull *is,  \
						    ull *ie)                                      \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_ull_##name##_start, bool, ull, ull, ull, ull, ull *, ull *); \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_ull_##name##_start(up, s, e, i, c, is, ie);                 \
	}
#define GOMP_LOOP_ULL_RT(name)                                                                    \
	TR_EXPORT bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull *is, ull *ie) \
	{                                                                                         \
		GOMP_REAL(bool, GOMP_loop_ull_##name##_start, bool, ull, ull, ull, ull *, ull *);  \
		gomp_ws_start(TR_OMP_LOOP);                                                       \
		return real_GOMP_loop_ull_##name##_start(up, s, e, i, is, ie);                    \
	}
TR_GOMP_LOOP_SCHEDS(GOMP_LOOP_CHUNK, GOMP_LOOP_RT)
TR_GOMP_LOOP_SCHEDS(GOMP_LOOP_ULL_CHUNK, GOMP_LOOP_ULL_RT)

/* GCC 9+: one entry point with the schedule as an argument (reductions,
 * memory for the loop's private data). */
TR_EXPORT bool GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
			       uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_start, long, long, long, long, long, long *, long *, uintptr_t *, void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_start(s, e, i, sched, c, is, ie, red, mem);
}

TR_EXPORT bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is, long *ie,
				       uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_ordered_start, long, long, long, long, long, long *, long *, uintptr_t *,
		  void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_ordered_start(s, e, i, sched, c, is, ie, red, mem);
}

TR_EXPORT bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull c, ull *is, ull *ie,
				   uintptr_t *red, void **mem)
{
	GOMP_REAL(bool, GOMP_loop_ull_start, bool, ull, ull, ull, long, ull, ull *, ull *, uintptr_t *,
		  void **);
	gomp_ws_start(TR_OMP_LOOP);
	return real_GOMP_loop_ull_start(up, s, e, i, sched, c, is, ie, red, mem);
}
TR_EXPORT unsigned GOMP_sections_start(unsigned count)
{
	GOMP_REAL(unsigned, GOMP_sections_start, unsigned);
	gomp_ws_start(TR_OMP_SECTIONS);
	return real_GOMP_sections_start(count);
}

TR_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *red, void **mem)
{
	GOMP_REAL(unsigned, GOMP_sections2_start, unsigned, uintptr_t *, void **);
	gomp_ws_start(TR_OMP_SECTIONS);
	return real_GOMP_sections2_start(count, red, mem);
}

/* The end of a work-sharing construct: the region ends at the call; the
 * call's wait for the team (`barrier`) is its implicit barrier. */
static int gomp_ws_end_begin(int r, int barrier)
{
	struct tr_thread *t = gomp_get();
	if (!t)
		return 0;
	uint64_t now = tr_time();
	gomp_ws_end(t, r, now);
	if (barrier)
		tr_enter(t, now, tr_omp_rgn[TR_OMP_IBARRIER]);
	tr_thread_put(t);
	return barrier;
}

static void gomp_ws_end_done(void)
{
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_leave(t, tr_time(), tr_omp_rgn[TR_OMP_IBARRIER]);
		tr_thread_put(t);
	}
}

#define GOMP_WS_END(fn, r, barrier)                            \
	TR_EXPORT void fn(void)                                \
	{                                                      \
		GOMP_REAL(void, fn, void);                     \
		int wait = gomp_ws_end_begin(r, barrier);      \
		real_##fn();                                   \
		if (wait)                                      \
			gomp_ws_end_done();                    \
	}
#define GOMP_WS_END_CANCEL(fn, r)                              \
	TR_EXPORT bool fn(void)                                \
	{                                                      \
		GOMP_REAL(bool, fn, void);                     \
		int wait = gomp_ws_end_begin(r, 1);            \
		bool c = real_##fn();                          \
		if (wait)                                      \
			gomp_ws_end_done();                    \
		return c;                                      \
	}
GOMP_WS_END(GOMP_loop_end, TR_OMP_LOOP, 1)
GOMP_WS_END(GOMP_loop_end_nowait, TR_OMP_LOOP, 0)
GOMP_WS_END_CANCEL(GOMP_loop_end_cancel, TR_OMP_LOOP)
GOMP_WS_END(GOMP_sections_end, TR_OMP_SECTIONS, 1)
GOMP_WS_END(GOMP_sections_end_nowait, TR_OMP_SECTIONS, 0)
GOMP_WS_END_CANCEL(GOMP_sections_end_cancel, TR_OMP_SECTIONS)

/* At shut-down (openmp.c's fini): what libgomp tracing did not see. */
void tr_omp_gomp_fini(void)
{
	if (!atomic_load(&tr_gomp_used) || tr_omp_ompt_on)
		return;
	uint64_t lost = tr_gomp_untraced_tasks();
	char extra[96] = "";
	if (lost)
		snprintf(extra, sizeof(extra), "; %llu tasks not followed (more than 64 KiB of data, taskloops)",
			 (unsigned long long)lost);
	tr_log_info("OpenMP (libgomp, no OMPT): not recorded: schedule(static) loops (their barrier is "
		    "an omp barrier), master, masked, nogroup taskloop tasks, doacross%s", extra);
}
