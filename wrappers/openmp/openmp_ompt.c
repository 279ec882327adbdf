/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp_ompt.c - LLVM's OpenMP runtime (libomp, used by clang and many
 * vendor compilers) through the OMPT tool interface (OpenMP 5.x, chapter 4).
 *
 * libtracer.so exports ompt_start_tool: libomp calls it when it initializes,
 * finds ours first (LD_PRELOAD) and gets the callbacks below; nothing needs
 * to be set in the environment. TRACER_OPENMP=off (or OMP_TOOL=disabled)
 * declines. Mapping (records in openmp.c):
 *   parallel_begin / _end          ThreadFork / ThreadJoin (encountering thread)
 *   implicit_task begin / end      ThreadTeamBegin + Enter "omp parallel" /
 *                                  Leave + ThreadTeamEnd (every team member;
 *                                  not for the initial task)
 *   sync_region                    barriers (explicit: "omp barrier", implicit:
 *                                  "omp implicit barrier"), taskwait, taskgroup,
 *                                  reduction as regions
 *   work                           loop, sections, single, workshare,
 *                                  distribute, taskloop, scope as regions
 *   masked                         "omp master"
 *   mutex_acquire / _acquired /    critical, atomic, ordered: Enter region,
 *   _released, nest_lock           ThreadAcquireLock .. ThreadReleaseLock, Leave;
 *                                  omp locks: Enter "omp_set_[nest_]lock",
 *                                  ThreadAcquireLock, Leave .. ThreadReleaseLock
 *                                  (every nest-lock acquisition is one pair:
 *                                  mutex_acquired for the first, nest_lock
 *                                  begin/end for the inner ones)
 *   task_create (explicit)         ThreadTaskCreate; task id kept in task_data
 *   task_schedule                  ThreadTaskComplete (prior, when it ended),
 *                                  ThreadTaskSwitch (next)
 *   thread_begin (worker)          location renamed "OpenMP thread N"
 *
 * Callbacks may run on threads the tracer has not seen yet: tr_thread_get()
 * creates their location. They take no lock and allocate nothing.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "openmp_int.h"

/* ---- OMPT declarations (own, from the OpenMP 5.1 specification) ---- */

typedef union {
	uint64_t value;
	void *ptr;
} tr_ompt_data;
typedef void (*tr_ompt_fn)(void);
typedef tr_ompt_fn (*tr_ompt_lookup)(const char *name);
typedef int (*tr_ompt_set_callback)(int event, tr_ompt_fn cb);
typedef int (*tr_ompt_initialize)(tr_ompt_lookup lookup, int device, tr_ompt_data *tool_data);
typedef void (*tr_ompt_finalize)(tr_ompt_data *tool_data);
typedef struct {
	tr_ompt_initialize initialize;
	tr_ompt_finalize finalize;
	tr_ompt_data tool_data;
} tr_ompt_start_tool_result;

enum {  /* ompt_callbacks_t */
	CB_THREAD_BEGIN = 1, CB_THREAD_END = 2, CB_PARALLEL_BEGIN = 3, CB_PARALLEL_END = 4, CB_TASK_CREATE = 5,
	CB_TASK_SCHEDULE = 6, CB_IMPLICIT_TASK = 7, CB_MUTEX_RELEASED = 17, CB_WORK = 20,
	CB_MASKED = 21, CB_SYNC_REGION = 23, CB_MUTEX_ACQUIRE = 26, CB_MUTEX_ACQUIRED = 27,
	CB_NEST_LOCK = 28,
};
enum { SET_ERROR = 0, SET_NEVER = 1 };                           /* ompt_set_result_t */
enum { THREAD_WORKER = 2 };                                      /* ompt_thread_t */
enum { SCOPE_BEGIN = 1, SCOPE_END = 2, SCOPE_BEGINEND = 3 };     /* ompt_scope_endpoint_t */
enum {  /* ompt_sync_region_t */
	SYNC_BARRIER = 1, SYNC_BARRIER_IMPLICIT = 2, SYNC_BARRIER_EXPLICIT = 3,
	SYNC_BARRIER_IMPLEMENTATION = 4, SYNC_TASKWAIT = 5, SYNC_TASKGROUP = 6, SYNC_REDUCTION = 7,
	SYNC_BARRIER_IMPLICIT_WORKSHARE = 8, SYNC_BARRIER_IMPLICIT_PARALLEL = 9,
	SYNC_BARRIER_TEAMS = 10,
};
enum {  /* ompt_work_t */
	WORK_LOOP = 1, WORK_SECTIONS, WORK_SINGLE_EXECUTOR, WORK_SINGLE_OTHER, WORK_WORKSHARE,
	WORK_DISTRIBUTE, WORK_TASKLOOP, WORK_SCOPE,
};
enum {  /* ompt_mutex_t */
	MUTEX_LOCK = 1, MUTEX_TEST_LOCK, MUTEX_NEST_LOCK, MUTEX_TEST_NEST_LOCK, MUTEX_CRITICAL,
	MUTEX_ATOMIC, MUTEX_ORDERED,
};
enum { TASK_INITIAL = 0x1, TASK_IMPLICIT = 0x2, TASK_EXPLICIT = 0x4 };   /* ompt_task_flag_t */
enum {  /* ompt_task_status_t */
	TASK_COMPLETE = 1, TASK_YIELD, TASK_CANCEL, TASK_DETACH, TASK_EARLY_FULFILL,
	TASK_LATE_FULFILL, TASK_SWITCH, TASK_TASKWAIT_COMPLETE,
};

/* task_data of our tasks: the task id with this mark (0: not ours). */
#define OMPT_TASK_MARK (1ull << 63)

/* ---- team membership per thread ----
 *
 * libomp reports the end of a worker's implicit barrier at the end of a
 * parallel region, and the end of its implicit task, only when the worker
 * is released for the next region (or never, for the last one): those late
 * records take the time the team's master passed the join
 * (tr_omp_join_time). The teams a thread is still in at its end (or at
 * exit) are closed then. State indexed by location index: the exiting
 * thread reads it for threads still running.
 */
#define OMPT_MAX_NEST 8

struct ompt_team {
	uint32_t master;          /* location index of the team's master (UINT32_MAX: unknown) */
	uint32_t seq;             /* the master's region number */
	uint32_t base;            /* shadow stack depth before the team began */
	uint64_t bar_begin;       /* start of this thread's last implicit barrier in the team */
};

struct TR_OMP_LINE ompt_thr {
	uint32_t nteam;           /* open teams (those beyond OMPT_MAX_NEST untracked) */
	struct ompt_team team[OMPT_MAX_NEST];
};

static struct ompt_thr ompt_thr[TR_OMP_MAX_THREADS] TR_BIG_BSS;

static struct ompt_thr *ompt_me(const struct tr_thread *t)
{
	return t->index < TR_OMP_MAX_THREADS ? &ompt_thr[t->index] : NULL;
}

/* Innermost open team of t, or NULL. */
static struct ompt_team *ompt_top(struct ompt_thr *me)
{
	return me && me->nteam && me->nteam <= OMPT_MAX_NEST ? &me->team[me->nteam - 1] : NULL;
}

/* Time of a worker's late end of team `tm`: the master's join if known. */
static uint64_t ompt_worker_end(const struct tr_thread *t, const struct ompt_team *tm)
{
	uint64_t jt = tm ? tr_omp_join_time(t, tm->master, tm->seq, tm->bar_begin) : 0;
	return jt ? jt : tr_time();
}

/* ---- helpers ---- */

#define OMPT_GET(t)                                      \
	struct tr_thread *t = tr_thread_get();           \
	if (!t)                                          \
		return

static void ompt_region(struct tr_thread *t, int endpoint, uint32_t region)
{
	uint64_t now = tr_time();
	if (endpoint == SCOPE_BEGIN) {
		tr_enter(t, now, region);
	} else if (endpoint == SCOPE_END) {
		tr_leave(t, now, region);
	} else {
		tr_enter(t, now, region);
		tr_leave(t, now, region);
	}
}

/* ---- callbacks ---- */

static void cb_thread_begin(int type, tr_ompt_data *thread_data)
{
	(void)thread_data;
	OMPT_GET(t);
	if (type == THREAD_WORKER)
		tr_omp_name_worker(t);
	tr_thread_put(t);
}

static void cb_parallel_begin(tr_ompt_data *task, const void *frame, tr_ompt_data *parallel,
			      unsigned int requested, int flags, const void *ra)
{
	(void)task, (void)frame, (void)parallel, (void)flags, (void)ra;
	OMPT_GET(t);
	uint32_t seq = tr_omp_region_seq(t);
	parallel->value = OMPT_TASK_MARK | (uint64_t)t->index << 32 | seq;
	tr_omp_fork(t, tr_time(), requested);
	tr_thread_put(t);
}

static void cb_parallel_end(tr_ompt_data *parallel, tr_ompt_data *task, int flags, const void *ra)
{
	(void)task, (void)parallel, (void)flags, (void)ra;
	OMPT_GET(t);
	tr_omp_join(t, tr_time());
	tr_thread_put(t);
}

static void cb_implicit_task(int endpoint, tr_ompt_data *parallel, tr_ompt_data *task,
			     unsigned int nthreads, unsigned int index, int flags)
{
	(void)parallel, (void)nthreads, (void)index;
	OMPT_GET(t);
	struct ompt_thr *me = ompt_me(t);
	if (endpoint == SCOPE_BEGIN) {
		task->value = OMPT_TASK_MARK | tr_omp_implicit_task(t);
		if (!(flags & TASK_INITIAL)) {
			if (me && me->nteam < OMPT_MAX_NEST) {
				struct ompt_team *tm = &me->team[me->nteam];
				uint64_t pv = parallel ? parallel->value : 0;
				tm->master = (pv & OMPT_TASK_MARK) ? (uint32_t)(pv >> 32) & 0x7fffffffu : UINT32_MAX;
				tm->seq = (uint32_t)pv;
				tm->base = tr_stack_depth(t);
				tm->bar_begin = 0;
			}
			if (me)
				me->nteam++;
			tr_omp_team_begin(t, tr_time());
		}
	} else if (endpoint == SCOPE_END && !(flags & TASK_INITIAL)) {
		uint64_t now;
		struct ompt_team *tm = ompt_top(me);
		if (tm && tm->master == t->index) {   /* the master passed the join */
			now = tr_time();
			tr_omp_region_joined(t, tm->seq, now);
		} else {
			now = ompt_worker_end(t, tm);
		}
		if (tm)
			tr_stack_leave_to(t, tm->base + 1, now);
		tr_omp_team_end(t, now);
		if (me && me->nteam)
			me->nteam--;
	}
	tr_thread_put(t);
}

static void cb_sync_region(int kind, int endpoint, tr_ompt_data *parallel, tr_ompt_data *task,
			   const void *ra)
{
	(void)parallel, (void)task, (void)ra;
	int r;
	switch (kind) {
	case SYNC_BARRIER_EXPLICIT:
	case SYNC_BARRIER:
		r = TR_OMP_BARRIER;
		break;
	case SYNC_BARRIER_IMPLICIT:
	case SYNC_BARRIER_IMPLICIT_WORKSHARE:
	case SYNC_BARRIER_IMPLICIT_PARALLEL:
	case SYNC_BARRIER_IMPLEMENTATION:
	case SYNC_BARRIER_TEAMS:
		r = TR_OMP_IBARRIER;
		break;
	case SYNC_TASKWAIT:
		r = TR_OMP_TASKWAIT;
		break;
	case SYNC_TASKGROUP:
		r = TR_OMP_TASKGROUP;
		break;
	case SYNC_REDUCTION:
		r = TR_OMP_REDUCTION;
		break;
	default:
		return;
	}
	OMPT_GET(t);
	if (kind == SYNC_BARRIER_IMPLICIT_PARALLEL || kind == SYNC_BARRIER_IMPLICIT) {
		struct ompt_team *tm = ompt_top(ompt_me(t));
		if (endpoint == SCOPE_BEGIN) {
			uint64_t now = tr_time();
			if (tm)
				tm->bar_begin = now;
			tr_enter(t, now, tr_omp_rgn[r]);
		} else if (endpoint == SCOPE_END) {
			/* libomp 14 reports the parallel's end barrier as
			 * "implicit" (2): the master's published join only
			 * exists for it (a work-sharing barrier ends first) */
			tr_leave(t, ompt_worker_end(t, tm), tr_omp_rgn[r]);
		}
	} else {
		ompt_region(t, endpoint, tr_omp_rgn[r]);
	}
	tr_thread_put(t);
}

static void cb_work(int wstype, int endpoint, tr_ompt_data *parallel, tr_ompt_data *task,
		    uint64_t count, const void *ra)
{
	(void)parallel, (void)task, (void)count, (void)ra;
	int r;
	switch (wstype) {
	case WORK_LOOP: r = TR_OMP_LOOP; break;
	case WORK_SECTIONS: r = TR_OMP_SECTIONS; break;
	case WORK_SINGLE_EXECUTOR:
	case WORK_SINGLE_OTHER: r = TR_OMP_SINGLE; break;
	case WORK_WORKSHARE: r = TR_OMP_WORKSHARE; break;
	case WORK_DISTRIBUTE: r = TR_OMP_DISTRIBUTE; break;
	case WORK_TASKLOOP: r = TR_OMP_TASKLOOP; break;
	case WORK_SCOPE: r = TR_OMP_SCOPE; break;
	default: return;
	}
	OMPT_GET(t);
	ompt_region(t, endpoint, tr_omp_rgn[r]);
	tr_thread_put(t);
}

static void cb_masked(int endpoint, tr_ompt_data *parallel, tr_ompt_data *task, const void *ra)
{
	(void)parallel, (void)task, (void)ra;
	OMPT_GET(t);
	ompt_region(t, endpoint, tr_omp_rgn[TR_OMP_MASTER]);
	tr_thread_put(t);
}

/* Region entered while a mutex of this kind is requested (-1: none). */
static int mutex_region(int kind)
{
	switch (kind) {
	case MUTEX_LOCK: return TR_OMP_SET_LOCK;
	case MUTEX_NEST_LOCK: return TR_OMP_SET_NEST_LOCK;
	case MUTEX_CRITICAL: return TR_OMP_CRITICAL;
	case MUTEX_ATOMIC: return TR_OMP_ATOMIC;
	case MUTEX_ORDERED: return TR_OMP_ORDERED;
	default: return -1;      /* test locks: no waiting */
	}
}

/* Kinds whose region covers the whole hold (left at release); locks leave
 * it once acquired (the program calls omp_unset_lock later, elsewhere). */
static int mutex_region_spans_hold(int kind)
{
	return kind == MUTEX_CRITICAL || kind == MUTEX_ATOMIC || kind == MUTEX_ORDERED;
}

static void cb_mutex_acquire(int kind, unsigned int hint, unsigned int impl, uint64_t wait_id,
			     const void *ra)
{
	(void)hint, (void)impl, (void)wait_id, (void)ra;
	int r = mutex_region(kind);
	if (r < 0)
		return;
	OMPT_GET(t);
	tr_enter(t, tr_time(), tr_omp_rgn[r]);
	tr_thread_put(t);
}

static void cb_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	(void)ra;
	OMPT_GET(t);
	uint64_t now = tr_omp_lock_acquired(t, tr_time(), wait_id);
	int r = mutex_region(kind);
	if (r >= 0 && !mutex_region_spans_hold(kind))
		tr_leave(t, now, tr_omp_rgn[r]);
	tr_thread_put(t);
}

static void cb_mutex_released(int kind, uint64_t wait_id, const void *ra)
{
	(void)ra;
	OMPT_GET(t);
	uint64_t now = tr_time();
	tr_omp_lock_released(t, now, wait_id);
	if (mutex_region_spans_hold(kind))
		tr_leave(t, now, tr_omp_rgn[mutex_region(kind)]);
	tr_thread_put(t);
}

/* A nest lock acquired again by its owner (begin) or released but still
 * held (end). */
static void cb_nest_lock(int endpoint, uint64_t wait_id, const void *ra)
{
	(void)ra;
	OMPT_GET(t);
	uint64_t now = tr_time();
	if (endpoint == SCOPE_BEGIN) {
		/* mutex_acquire entered the region already */
		now = tr_omp_lock_acquired(t, now, wait_id);
		tr_leave(t, now, tr_omp_rgn[TR_OMP_SET_NEST_LOCK]);
	} else {
		tr_omp_lock_released(t, now, wait_id);
	}
	tr_thread_put(t);
}

static void cb_task_create(tr_ompt_data *parent, const void *frame, tr_ompt_data *task, int flags,
			   int has_deps, const void *ra)
{
	(void)parent, (void)frame, (void)has_deps, (void)ra;
	if (!(flags & TASK_EXPLICIT)) {
		task->value = 0;
		return;
	}
	OMPT_GET(t);
	task->value = OMPT_TASK_MARK | tr_omp_task_create(t, tr_time());
	tr_thread_put(t);
}

static void cb_task_schedule(tr_ompt_data *prior, int status, tr_ompt_data *next)
{
	OMPT_GET(t);
	uint64_t now = tr_time();
	uint64_t p = prior ? prior->value : 0, n = next ? next->value : 0;
	if ((p & OMPT_TASK_MARK) && (uint32_t)p &&
	    (status == TASK_COMPLETE || status == TASK_CANCEL || status == TASK_LATE_FULFILL))
		tr_omp_task_complete(t, now, p & ~OMPT_TASK_MARK);
	if (n & OMPT_TASK_MARK)
		tr_omp_task_switch(t, now, n & ~OMPT_TASK_MARK);
	else if (p & OMPT_TASK_MARK)   /* back to a task we do not know: the implicit one */
		tr_omp_task_switch(t, now, tr_omp_implicit_task(t));
	tr_thread_put(t);
}

/* Teams t is still in when it ends (own thread) or at exit (another
 * thread, t stopped; the core closed its regions already). */
void tr_omp_ompt_thread_fini(struct tr_thread *t)
{
	struct ompt_thr *me = ompt_me(t);
	if (!me || !me->nteam || !tr_omp_ready)
		return;
	int own = tr_thread_peek() == t;
	while (me->nteam) {
		struct ompt_team *tm = ompt_top(me);
		tr_omp_team_close(t, tm ? tm->base : tr_stack_depth(t), ompt_worker_end(t, tm), own);
		me->nteam--;
	}
}

void tr_omp_ompt_fork_child(void)
{
	tr_mem_zero(ompt_thr, sizeof(ompt_thr));   /* only the forking thread is left */
}

static void cb_thread_end(tr_ompt_data *thread_data)
{
	(void)thread_data;
	OMPT_GET(t);
	tr_omp_ompt_thread_fini(t);
	tr_thread_put(t);
}

/* ---- tool start-up ---- */

static int ompt_set(tr_ompt_set_callback set, int event, tr_ompt_fn cb)
{
	int r = set(event, cb);
	return r != SET_ERROR && r != SET_NEVER;
}

static int ompt_init(tr_ompt_lookup lookup, int device, tr_ompt_data *tool_data)
{
	(void)device, (void)tool_data;
	tr_ompt_set_callback set = (tr_ompt_set_callback)lookup("ompt_set_callback");
	if (!set) {
		tr_log_warn("OpenMP: libomp gives no ompt_set_callback: OpenMP constructs are not traced");
		return 0;
	}
	int saved = errno;
	struct tr_thread *t = tr_thread_get();
	int ok = tr_omp_setup() == 0;
	if (t)
		tr_thread_put(t);
	errno = saved;
	if (!ok)
		return 0;
	static const struct {
		int event;
		tr_ompt_fn cb;
	} cbs[] = {
		{ CB_THREAD_BEGIN, (tr_ompt_fn)cb_thread_begin },
		{ CB_THREAD_END, (tr_ompt_fn)cb_thread_end },
		{ CB_PARALLEL_BEGIN, (tr_ompt_fn)cb_parallel_begin },
		{ CB_PARALLEL_END, (tr_ompt_fn)cb_parallel_end },
		{ CB_IMPLICIT_TASK, (tr_ompt_fn)cb_implicit_task },
		{ CB_SYNC_REGION, (tr_ompt_fn)cb_sync_region },
		{ CB_WORK, (tr_ompt_fn)cb_work },
		{ CB_MASKED, (tr_ompt_fn)cb_masked },
		{ CB_MUTEX_ACQUIRE, (tr_ompt_fn)cb_mutex_acquire },
		{ CB_MUTEX_ACQUIRED, (tr_ompt_fn)cb_mutex_acquired },
		{ CB_MUTEX_RELEASED, (tr_ompt_fn)cb_mutex_released },
		{ CB_NEST_LOCK, (tr_ompt_fn)cb_nest_lock },
		{ CB_TASK_CREATE, (tr_ompt_fn)cb_task_create },
		{ CB_TASK_SCHEDULE, (tr_ompt_fn)cb_task_schedule },
	};
	char missing[256] = "";
	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++)
		if (!ompt_set(set, cbs[i].event, cbs[i].cb) && strlen(missing) < sizeof(missing) - 8)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %d",
				 cbs[i].event);
	if (missing[0])
		tr_log_warn("OpenMP: this libomp does not report OMPT events%s: those are not traced",
			    missing);
	__atomic_store_n(&tr_omp_ompt_on, 1, __ATOMIC_RELEASE);
	return 1;
}

static void ompt_fini(tr_ompt_data *tool_data)
{
	(void)tool_data;
}

TR_EXPORT tr_ompt_start_tool_result *ompt_start_tool(unsigned int omp_version, const char *runtime);
TR_EXPORT tr_ompt_start_tool_result *ompt_start_tool(unsigned int omp_version, const char *runtime)
{
	static tr_ompt_start_tool_result result = { ompt_init, ompt_fini, { 0 } };
	(void)omp_version, (void)runtime;
	int saved = errno;
	struct tr_thread *t = tr_thread_get();     /* starts the tracer if libomp runs first */
	if (t)
		tr_thread_put(t);
	errno = saved;
	if (!tr_omp_setting() || !tr_is_active())
		return NULL;
	return &result;
}
