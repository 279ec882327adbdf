/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * argobots.c - Argobots work units as OTF2 tasks.
 *
 * ABT_init is interposed; right after the real one returns, a callback for
 * every work-unit event is registered with ABT_tool_register_thread_callback
 * (resolved at run time: libabt is never linked). A program without Argobots
 * never calls ABT_init, so nothing happens. Argobots built without the tool
 * interface answers ABT_ERR_FEATURE_NA: one "tracer:" line, the rest of the
 * tracing goes on.
 *
 * Mapping (execution streams are pthreads, hence already locations):
 *   CREATE          ThreadTaskCreate(team, creating thread, generation)
 *   REVIVE          ThreadTaskCreate of a new generation of the same unit
 *   RUN             ThreadTaskSwitch to the unit
 *   YIELD, SUSPEND  ThreadTaskSwitch back to what ran before on the stream
 *                   (the scheduler = the stream's implicit task (own index,
 *                   generation 0)), with attributes ABT_SYNC_EVENT_TYPE and
 *                   ABT_SYNC_OBJECT from ABT_tool_query_thread
 *   FINISH          Leave of regions still open in the unit, ThreadTaskComplete,
 *                   ThreadTaskSwitch back
 *   CANCEL          ThreadTaskComplete
 *   JOIN            region "ABT_thread_join" (Enter and Leave at the moment the
 *                   tool interface reports the completed join)
 *   RESUME          nothing: Argobots reports it on the thread that wakes the
 *                   unit up; the unit's next RUN switches to it
 *   FREE            the unit's state goes back to the pool
 * The thread team is tr_def_thread_comm(OTF2 paradigm UNKNOWN, "Argobots")
 * (OTF2 3.0 has no Argobots paradigm).
 *
 * Each unit's state (preallocated pool, lock-free free list and hash table)
 * holds a core task (struct tr_task, tracer.h): while a unit runs it is the
 * thread's current task, so VT_begin/VT_end in a ULT nest per task even when
 * the ULT yields on one stream and resumes on another, and the core's
 * shadow stack of open regions is moved with the unit (tr_task_detach /
 * tr_task_attach).
 *
 * Callbacks write at most three records, take no lock, allocate nothing
 * (except the per-stream attribute list, once) and never call Argobots
 * except ABT_tool_query_thread, which the tool interface allows.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracer.h"

/* ---- Argobots 1.1 tool interface (own declarations from its documentation) ---- */

typedef void *tr_abt_thread;          /* ABT_thread */
typedef void *tr_abt_xstream;         /* ABT_xstream */
typedef void *tr_abt_tool_context;    /* ABT_tool_context */
typedef void (*tr_abt_thread_cb)(tr_abt_thread, tr_abt_xstream, uint64_t event,
				 tr_abt_tool_context, void *user_arg);

#define TR_ABT_SUCCESS          0
#define TR_ABT_ERR_FEATURE_NA   51

#define TR_ABT_EV_CREATE   (1u << 0)
#define TR_ABT_EV_JOIN     (1u << 1)
#define TR_ABT_EV_FREE     (1u << 2)
#define TR_ABT_EV_REVIVE   (1u << 3)
#define TR_ABT_EV_RUN      (1u << 4)
#define TR_ABT_EV_FINISH   (1u << 5)
#define TR_ABT_EV_CANCEL   (1u << 6)
#define TR_ABT_EV_YIELD    (1u << 7)
#define TR_ABT_EV_SUSPEND  (1u << 8)
#define TR_ABT_EV_RESUME   (1u << 9)
#define TR_ABT_EV_ALL      ((uint64_t)((1 << 12) - 1))

enum {  /* ABT_tool_query_kind */
	TR_ABT_QUERY_POOL = 0, TR_ABT_QUERY_STACK_DEPTH, TR_ABT_QUERY_CALLER_TYPE,
	TR_ABT_QUERY_CALLER_HANDLE, TR_ABT_QUERY_SYNC_OBJECT_TYPE, TR_ABT_QUERY_SYNC_OBJECT_HANDLE,
};

typedef int (*tr_abt_register_fn)(tr_abt_thread_cb, uint64_t, void *);
typedef int (*tr_abt_query_fn)(tr_abt_tool_context, uint64_t, int, void *);

/* ---- per-work-unit state ---------------------------------------------------------- */

#define ABT_POOL_SIZE   65536                 /* units alive at the same time */
#define ABT_MAP_SLOTS   131072                /* power of two, >= 2 * pool */
#define ABT_KEY_EMPTY   ((uintptr_t)0)
#define ABT_KEY_TOMB    ((uintptr_t)1)
#define ABT_KEY_BUSY    ((uintptr_t)2)

struct tr_abt_task {
	struct tr_task core;                  /* its region stacks (core, tracer.h) */
	struct tr_abt_task *parent;           /* what ran before it on its stream (NULL: scheduler) */
	uint32_t creator;                     /* creating thread (location index = team rank) */
	uint32_t gen;                         /* generation number of the creator */
	uint32_t next_free;                   /* free list link (index + 1) */
};

/* The unit of a core task (every task argobots.c makes the current one is
 * the core of a struct tr_abt_task). */
static struct tr_abt_task *abt_of(struct tr_task *task)
{
	return task ? (struct tr_abt_task *)((char *)task - offsetof(struct tr_abt_task, core)) : NULL;
}

static struct tr_abt_task *abt_current(const struct tr_thread *t)
{
	return abt_of(tr_task_current(t));
}

static void abt_set_current(struct tr_thread *t, struct tr_abt_task *task)
{
	tr_task_set_current(t, task ? &task->core : NULL);
}

static struct tr_abt_task *abt_pool;
static _Atomic uint64_t abt_free_head;        /* tag << 32 | (index + 1) of freed states */
static _Atomic uint32_t abt_pool_used;        /* states handed out at least once */
static _Atomic uintptr_t abt_keys[ABT_MAP_SLOTS] TR_BIG_BSS;
static uint32_t abt_vals[ABT_MAP_SLOTS] TR_BIG_BSS;
static _Atomic uint64_t abt_lost;             /* units not traced: pool empty */

static tr_abt_query_fn abt_query;
static uint32_t abt_team = OTF2W_UNDEFINED_REF;
static uint32_t abt_attr_sync_type = OTF2W_UNDEFINED_REF;
static uint32_t abt_attr_sync_obj = OTF2W_UNDEFINED_REF;
static uint32_t abt_rgn_join = OTF2W_UNDEFINED_REF;
static int abt_ready;                         /* pool and definitions exist */
static _Atomic int abt_warned;

static TR_TLS uint32_t abt_gen;               /* generation counter of this thread */
static TR_TLS otf2w_attr_list *abt_attrs;

static struct tr_abt_task *abt_pool_get(void)
{
	uint64_t head = atomic_load_explicit(&abt_free_head, memory_order_acquire);
	for (;;) {
		uint32_t idx = (uint32_t)head;
		if (!idx) {
			/* never used states: the pool's pages are touched only when needed */
			uint32_t n = atomic_fetch_add_explicit(&abt_pool_used, 1, memory_order_relaxed);
			if (n < ABT_POOL_SIZE)
				return &abt_pool[n];
			atomic_store_explicit(&abt_pool_used, ABT_POOL_SIZE, memory_order_relaxed);
			return NULL;
		}
		uint64_t next = ((head >> 32) + 1) << 32 | abt_pool[idx - 1].next_free;
		if (atomic_compare_exchange_weak_explicit(&abt_free_head, &head, next,
							  memory_order_acq_rel, memory_order_acquire))
			return &abt_pool[idx - 1];
	}
}

static void abt_pool_put(struct tr_abt_task *task)
{
	uint32_t idx = (uint32_t)(task - abt_pool) + 1;
	uint64_t head = atomic_load_explicit(&abt_free_head, memory_order_acquire);
	for (;;) {
		task->next_free = (uint32_t)head;
		uint64_t next = ((head >> 32) + 1) << 32 | idx;
		if (atomic_compare_exchange_weak_explicit(&abt_free_head, &head, next,
							  memory_order_acq_rel, memory_order_acquire))
			return;
	}
}

static uint32_t abt_hash(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (ABT_MAP_SLOTS - 1);
}

static struct tr_abt_task *abt_map_find(uintptr_t key, uint32_t *slot)
{
	uint32_t h = abt_hash(key);
	for (uint32_t k = 0; k < ABT_MAP_SLOTS; k++) {
		uint32_t i = (h + k) & (ABT_MAP_SLOTS - 1);
		uintptr_t cur = atomic_load_explicit(&abt_keys[i], memory_order_acquire);
		if (cur == ABT_KEY_EMPTY)
			return NULL;
		if (cur == key) {
			if (slot)
				*slot = i;
			return &abt_pool[abt_vals[i]];
		}
	}
	return NULL;
}

static int abt_map_insert(uintptr_t key, struct tr_abt_task *task)
{
	uint32_t h = abt_hash(key);
	for (uint32_t k = 0; k < ABT_MAP_SLOTS; k++) {
		uint32_t i = (h + k) & (ABT_MAP_SLOTS - 1);
		uintptr_t cur = atomic_load_explicit(&abt_keys[i], memory_order_relaxed);
		if ((cur == ABT_KEY_EMPTY || cur == ABT_KEY_TOMB) &&
		    atomic_compare_exchange_strong_explicit(&abt_keys[i], &cur, ABT_KEY_BUSY,
							    memory_order_acquire, memory_order_relaxed)) {
			abt_vals[i] = (uint32_t)(task - abt_pool);
			atomic_store_explicit(&abt_keys[i], key, memory_order_release);
			return 0;
		}
	}
	return -1;
}

/* ---- records ---------------------------------------------------------------------- */

enum { ABT_REC_CREATE, ABT_REC_SWITCH, ABT_REC_COMPLETE };

/* One task record, bracketed for the core (skipped while recording is off). */
static void abt_rec(struct tr_thread *t, int kind, const otf2w_attr_list *al, uint64_t now,
		    uint32_t creator, uint32_t gen)
{
	if (!tr_rec_begin(t))
		return;
	otf2w_status st;
	if (kind == ABT_REC_CREATE)
		st = otf2w_evt_thread_task_create(t->w, al, now, abt_team, creator, gen);
	else if (kind == ABT_REC_SWITCH)
		st = otf2w_evt_thread_task_switch(t->w, al, now, abt_team, creator, gen);
	else
		st = otf2w_evt_thread_task_complete(t->w, al, now, abt_team, creator, gen);
	tr_evt_status(t, st);
	tr_rec_end(t);
}

static void abt_switch(struct tr_thread *t, uint64_t now, const struct tr_abt_task *to,
		       const otf2w_attr_list *al)
{
	if (to)
		abt_rec(t, ABT_REC_SWITCH, al, now, to->creator, to->gen);
	else    /* the stream's scheduler: its implicit task */
		abt_rec(t, ABT_REC_SWITCH, al, now, t->index, 0);
}

static struct tr_abt_task *abt_new_unit(struct tr_thread *t, uint64_t now, uintptr_t key)
{
	struct tr_abt_task *task = abt_pool_get();
	if (!task) {
		atomic_fetch_add_explicit(&abt_lost, 1, memory_order_relaxed);
		return NULL;
	}
	tr_task_reset(&task->core);
	task->parent = NULL;
	task->creator = t->index;
	task->gen = ++abt_gen;
	if (abt_map_insert(key, task)) {
		abt_pool_put(task);
		atomic_fetch_add_explicit(&abt_lost, 1, memory_order_relaxed);
		return NULL;
	}
	abt_rec(t, ABT_REC_CREATE, NULL, now, task->creator, task->gen);
	return task;
}

static const otf2w_attr_list *abt_sync_attrs(uint64_t event, tr_abt_tool_context ctx)
{
	if (!abt_query)
		return NULL;
	if (!abt_attrs) {
		abt_attrs = otf2w_attr_list_new();      /* once per stream */
		if (!abt_attrs)
			return NULL;
	}
	int type = 0;
	void *obj = NULL;
	otf2w_attr_list_clear(abt_attrs);
	if (abt_query(ctx, event, TR_ABT_QUERY_SYNC_OBJECT_TYPE, &type) == TR_ABT_SUCCESS)
		otf2w_attr_list_add(abt_attrs, abt_attr_sync_type, OTF2W_TYPE_UINT32, (uint32_t)type);
	if (abt_query(ctx, event, TR_ABT_QUERY_SYNC_OBJECT_HANDLE, &obj) == TR_ABT_SUCCESS)
		otf2w_attr_list_add(abt_attrs, abt_attr_sync_obj, OTF2W_TYPE_UINT64, (uint64_t)(uintptr_t)obj);
	return abt_attrs;
}

static void abt_callback(tr_abt_thread thread, tr_abt_xstream xstream, uint64_t event,
			 tr_abt_tool_context ctx, void *user_arg)
{
	(void)xstream;
	(void)user_arg;
	if (!abt_ready)
		return;
	int saved_errno = errno;        /* tr_leave may re-sample errno */
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	uint64_t now = tr_time();
	uintptr_t key = (uintptr_t)thread;
	struct tr_abt_task *task;
	uint32_t slot;

	switch (event) {
	case TR_ABT_EV_CREATE:
	case TR_ABT_EV_REVIVE:
		/* a known handle (revived, or its FREE was missed): new generation */
		task = abt_map_find(key, NULL);
		if (!task) {
			abt_new_unit(t, now, key);
		} else {
			tr_task_reset(&task->core);
			task->parent = NULL;
			task->creator = t->index;
			task->gen = ++abt_gen;
			abt_rec(t, ABT_REC_CREATE, NULL, now, task->creator, task->gen);
		}
		break;
	case TR_ABT_EV_RUN:
		task = abt_map_find(key, NULL);
		if (task) {
			struct tr_abt_task *cur = abt_current(t);
			if (cur == task)
				break;
			task->parent = cur;     /* a child runs on top of cur */
			abt_switch(t, now, task, NULL);
			tr_task_attach(t, &task->core);
			abt_set_current(t, task);
		} else if (tr_task_current(t)) {
			/* a unit created before tracing started (the primary ULT, a
			 * scheduler): it runs as the stream's implicit task */
			tr_task_detach(t, tr_task_current(t));
			abt_switch(t, now, NULL, NULL);
			abt_set_current(t, NULL);
		}
		break;
	case TR_ABT_EV_YIELD:
	case TR_ABT_EV_SUSPEND:
		task = abt_map_find(key, NULL);
		if (task && abt_current(t) == task) {
			tr_task_detach(t, &task->core);
			abt_switch(t, now, task->parent, abt_sync_attrs(event, ctx));
			abt_set_current(t, task->parent);
			task->parent = NULL;
		}
		break;
	case TR_ABT_EV_FINISH:
		task = abt_map_find(key, NULL);
		if (!task)
			break;
		if (abt_current(t) == task) {
			tr_task_close(t, &task->core, now);
			abt_rec(t, ABT_REC_COMPLETE, NULL, now, task->creator, task->gen);
			abt_switch(t, now, task->parent, NULL);
			abt_set_current(t, task->parent);
			task->parent = NULL;
		} else {
			abt_rec(t, ABT_REC_COMPLETE, NULL, now, task->creator, task->gen);
		}
		break;
	case TR_ABT_EV_CANCEL:
		task = abt_map_find(key, NULL);
		if (task)
			abt_rec(t, ABT_REC_COMPLETE, NULL, now, task->creator, task->gen);
		break;
	case TR_ABT_EV_JOIN:
		tr_enter(t, now, abt_rgn_join);
		tr_leave(t, tr_time(), abt_rgn_join);
		break;
	case TR_ABT_EV_FREE:
		task = abt_map_find(key, &slot);
		if (task) {
			if (abt_current(t) == task) {
				tr_task_detach(t, &task->core);
				abt_set_current(t, task->parent);
			}
			atomic_store_explicit(&abt_keys[slot], ABT_KEY_TOMB, memory_order_release);
			abt_pool_put(task);
		}
		break;
	default:        /* RESUME and events of later versions */
		break;
	}
	tr_thread_put(t);
	errno = saved_errno;
}

/* ---- set-up --------------------------------------------------------------------- */

/* Pool and definitions, once (under the tracer guard of the caller). */
static int abt_setup(void)
{
	if (abt_ready)
		return 0;
	abt_pool = tr_calloc(ABT_POOL_SIZE, sizeof(*abt_pool));
	if (!abt_pool) {
		tr_log_error("Argobots: no memory for %d work-unit states: work units are not traced",
			     ABT_POOL_SIZE);
		return -1;
	}
	abt_team = tr_def_thread_comm(OTF2W_PARADIGM_UNKNOWN, "Argobots");
	abt_attr_sync_type = tr_def_attribute("ABT_SYNC_EVENT_TYPE",
					      "Argobots synchronization event type (ABT_sync_event_type)",
					      OTF2W_TYPE_UINT32);
	abt_attr_sync_obj = tr_def_attribute("ABT_SYNC_OBJECT",
					     "Argobots synchronization object handle",
					     OTF2W_TYPE_UINT64);
	abt_rgn_join = tr_def_region("ABT_thread_join", "ABT_thread_join", "Argobots join",
				     OTF2W_ROLE_TASK_WAIT, OTF2W_PARADIGM_UNKNOWN,
				     OTF2W_REGION_FLAG_NONE, NULL, 0, 0);
	abt_ready = 1;
	return 0;
}

static void abt_register(void)
{
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_abt_register_fn reg = NULL;
	const struct tr_real_sym syms[] = {
		{ (void **)&reg, "ABT_tool_register_thread_callback", NULL },
		{ (void **)&abt_query, "ABT_tool_query_thread", NULL },
	};
	tr_real_resolve(syms, sizeof(syms) / sizeof(syms[0]));
	int rc = reg ? TR_ABT_SUCCESS : TR_ABT_ERR_FEATURE_NA;
	if (reg && abt_setup() == 0)
		rc = reg(abt_callback, TR_ABT_EV_ALL, NULL);
	if (rc != TR_ABT_SUCCESS && !atomic_exchange(&abt_warned, 1))
		tr_log_warn("Argobots has no tool interface (ABT_tool_register_thread_callback: %s %d): "
			    "work units are not traced", reg ? "error" : "missing,", rc);
	tr_thread_put(t);
}

TR_EXPORT int ABT_init(int argc, char **argv)
{
	static int (*real_abt_init)(int, char **);
	static const struct tr_real_sym sym = { (void **)&real_abt_init, "ABT_init", NULL };
	if (!real_abt_init)
		tr_real_resolve(&sym, 1);
	if (!real_abt_init) {
		tr_log_error("ABT_init: no Argobots library after libtracer.so");
		return TR_ABT_ERR_FEATURE_NA;
	}
	int ret = real_abt_init(argc, argv);
	if (ret == TR_ABT_SUCCESS && tr_is_active()) {
		int saved = errno;
		abt_register();
		errno = saved;
	}
	return ret;
}

/* ---- module ---------------------------------------------------------------------- */

static void abt_thread_fini(struct tr_thread *t)
{
	tr_task_set_current(t, NULL);
}

static void abt_fini(void)
{
	uint64_t lost = atomic_load(&abt_lost);
	if (lost)
		tr_log_warn("Argobots: %llu work units were not traced (more than %d alive at once)",
			    (unsigned long long)lost, ABT_POOL_SIZE);
}

static const struct tr_module abt_module = {
	.name = "argobots",
	.thread_fini = abt_thread_fini,
	.fini = abt_fini,
};

__attribute__((constructor(202))) static void abt_module_register(void)
{
	tr_module_register(&abt_module);
}
