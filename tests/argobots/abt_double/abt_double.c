/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abt_double.c - a stand-in libabt.so for the tests: the Argobots 1.1 tool
 * interface (ABT_init, ABT_finalize, ABT_tool_register_thread_callback,
 * ABT_tool_query_thread) plus abtd_run_script(), which plays a fixed
 * sequence of work-unit events on two execution streams (the calling thread
 * = primary stream, one more pthread) and calls the program's ULT body for
 * each time slice a unit runs, so ULTs really migrate between pthreads.
 * Events are delivered the way Argobots does: RUN/YIELD/SUSPEND/FINISH on the
 * stream that runs the unit, CREATE/REVIVE/RESUME/JOIN/FREE/CANCEL on the
 * caller's thread.
 *
 * ABTD_NO_TOOL=1 in the environment makes it behave like an Argobots built
 * without the tool interface (ABT_ERR_FEATURE_NA).
 *
 * Streams hand work to each other through atomics and sched_yield (no
 * pthread mutex, so the trace only holds what the program itself does).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ABTD_SUCCESS        0
#define ABTD_ERR_INV_ARG    2    /* any non-zero code */
#define ABTD_ERR_FEATURE_NA 51

#define EV_CREATE   (1u << 0)
#define EV_JOIN     (1u << 1)
#define EV_FREE     (1u << 2)
#define EV_REVIVE   (1u << 3)
#define EV_RUN      (1u << 4)
#define EV_FINISH   (1u << 5)
#define EV_CANCEL   (1u << 6)
#define EV_YIELD    (1u << 7)
#define EV_SUSPEND  (1u << 8)
#define EV_RESUME   (1u << 9)

enum { Q_POOL, Q_STACK_DEPTH, Q_CALLER_TYPE, Q_CALLER_HANDLE, Q_SYNC_TYPE, Q_SYNC_HANDLE };
enum { SYNC_UNKNOWN = 0, SYNC_USER = 1, SYNC_MUTEX = 5 };

typedef void (*abtd_cb_fn)(void *thread, void *xstream, uint64_t event, void *ctx, void *arg);
typedef void (*abtd_body_fn)(int unit, int step);

struct abtd_ctx {
	uint64_t event;
	int sync_type;
	void *sync_obj;
	void *caller;
	int depth;
};

struct abtd_unit {
	int id;
};

struct abtd_es {
	int rank;
	pthread_t tid;
	void (*_Atomic job)(void *);
	void *job_arg;
	_Atomic int done;
};

static _Atomic(abtd_cb_fn) cb_fn;
static _Atomic uint64_t cb_mask;
static void *cb_arg;
static int initialized;
static _Atomic int stop;
static struct abtd_es es[2];
static int mutex_object;            /* stands for an ABT_mutex */

static void emit(struct abtd_unit *u, struct abtd_es *x, uint64_t ev, int sync_type, void *sync_obj)
{
	abtd_cb_fn f = atomic_load(&cb_fn);
	if (!f || !(atomic_load(&cb_mask) & ev))
		return;
	struct abtd_ctx ctx = { ev, sync_type, sync_obj, NULL, 1 };
	f(u, x, ev, &ctx, cb_arg);
}

static void *es_main(void *arg)
{
	struct abtd_es *x = arg;
	while (!atomic_load(&stop)) {
		void (*job)(void *) = atomic_load(&x->job);
		if (!job) {
			sched_yield();
			continue;
		}
		job(x->job_arg);
		atomic_store(&x->job, NULL);
		atomic_store(&x->done, 1);
	}
	return NULL;
}

/* Run job(arg) on stream `rank` and wait for it. */
static void on_es(int rank, void (*job)(void *), void *arg)
{
	if (rank == 0) {
		job(arg);
		return;
	}
	struct abtd_es *x = &es[rank];
	atomic_store(&x->done, 0);
	x->job_arg = arg;
	atomic_store(&x->job, job);
	while (!atomic_load(&x->done))
		sched_yield();
}

int ABT_init(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (initialized++)
		return ABTD_SUCCESS;
	es[0].rank = 0;
	es[0].tid = pthread_self();
	es[1].rank = 1;
	atomic_store(&stop, 0);
	if (pthread_create(&es[1].tid, NULL, es_main, &es[1]))
		return ABTD_ERR_INV_ARG;
	return ABTD_SUCCESS;
}

int ABT_finalize(void)
{
	if (!initialized || --initialized)
		return ABTD_SUCCESS;
	atomic_store(&cb_fn, NULL);
	atomic_store(&stop, 1);
	pthread_join(es[1].tid, NULL);
	return ABTD_SUCCESS;
}

int ABT_tool_register_thread_callback(abtd_cb_fn f, uint64_t mask, void *arg)
{
	const char *e = getenv("ABTD_NO_TOOL");
	if (e && strcmp(e, "1") == 0)
		return ABTD_ERR_FEATURE_NA;
	cb_arg = arg;
	atomic_store(&cb_mask, f ? mask : 0);
	atomic_store(&cb_fn, f);
	return ABTD_SUCCESS;
}

int ABT_tool_query_thread(void *context, uint64_t event, int kind, void *val)
{
	struct abtd_ctx *c = context;
	if (!c || !val || c->event != event)
		return ABTD_ERR_INV_ARG;
	switch (kind) {
	case Q_SYNC_TYPE:
		if (!(event & (EV_YIELD | EV_SUSPEND)))
			return ABTD_ERR_INV_ARG;
		*(int *)val = c->sync_type;
		return ABTD_SUCCESS;
	case Q_SYNC_HANDLE:
		if (!(event & (EV_YIELD | EV_SUSPEND)))
			return ABTD_ERR_INV_ARG;
		*(void **)val = c->sync_obj;
		return ABTD_SUCCESS;
	case Q_STACK_DEPTH:
		*(int *)val = c->depth;
		return ABTD_SUCCESS;
	case Q_CALLER_HANDLE:
		*(void **)val = c->caller;
		return ABTD_SUCCESS;
	default:
		return ABTD_ERR_INV_ARG;
	}
}

/* ---- the script ------------------------------------------------------------------ */

enum end_kind { END_YIELD, END_SUSPEND, END_FINISH };

struct slice {
	struct abtd_unit *u;
	int es;
	int step;
	enum end_kind end;
	abtd_body_fn body;
};

static void run_slice(void *arg)
{
	struct slice *s = arg;
	struct abtd_es *x = &es[s->es];
	emit(s->u, x, EV_RUN, SYNC_UNKNOWN, NULL);
	s->body(s->u->id, s->step);
	if (s->end == END_YIELD)
		emit(s->u, x, EV_YIELD, SYNC_USER, NULL);
	else if (s->end == END_SUSPEND)
		emit(s->u, x, EV_SUSPEND, SYNC_MUTEX, &mutex_object);
	else
		emit(s->u, x, EV_FINISH, SYNC_UNKNOWN, NULL);
}

static void slice(struct abtd_unit *u, int on, int step, enum end_kind end, abtd_body_fn body)
{
	struct slice s = { u, on, step, end, body };
	on_es(on, run_slice, &s);
}

/* A unit that runs a child unit on top of itself (like ABT_thread_create_to
 * or a join that runs the joinee): RUN child while the parent runs, the
 * child's FINISH returns to the parent. */
struct nested {
	struct abtd_unit *parent, *child;
	abtd_body_fn body;
};

static void run_nested(void *arg)
{
	struct nested *n = arg;
	struct abtd_es *x = &es[0];
	emit(n->parent, x, EV_RUN, SYNC_UNKNOWN, NULL);
	n->body(n->parent->id, 0);
	emit(n->child, x, EV_RUN, SYNC_UNKNOWN, NULL);
	n->body(n->child->id, 0);
	emit(n->child, x, EV_FINISH, SYNC_UNKNOWN, NULL);
	n->body(n->parent->id, 1);
	emit(n->parent, x, EV_FINISH, SYNC_UNKNOWN, NULL);
}

static struct abtd_unit *cancel_unit;

static void create_and_cancel(void *arg)
{
	(void)arg;
	emit(cancel_unit, &es[1], EV_CREATE, SYNC_UNKNOWN, NULL);
	emit(cancel_unit, &es[1], EV_CANCEL, SYNC_UNKNOWN, NULL);
	emit(cancel_unit, &es[1], EV_FREE, SYNC_UNKNOWN, NULL);
}

/* Units 1 and 2 are created on the primary stream; unit 1 yields on stream
 * 0 and finishes on stream 1, unit 2 suspends on a mutex on stream 1 and is
 * resumed from stream 0, where it finishes; unit 1 is revived and runs again
 * on stream 1; units 4-7: see below; unit 3 is created and cancelled on
 * stream 1. */
int abtd_run_script(abtd_body_fn body)
{
	struct abtd_unit u1 = { 1 }, u2 = { 2 }, u3 = { 3 };
	if (!initialized || !body)
		return ABTD_ERR_INV_ARG;
	emit(&u1, &es[0], EV_CREATE, SYNC_UNKNOWN, NULL);
	emit(&u2, &es[0], EV_CREATE, SYNC_UNKNOWN, NULL);
	slice(&u1, 0, 0, END_YIELD, body);
	slice(&u2, 1, 0, END_SUSPEND, body);
	slice(&u1, 1, 1, END_FINISH, body);
	emit(&u2, &es[0], EV_RESUME, SYNC_UNKNOWN, NULL);
	slice(&u2, 0, 1, END_FINISH, body);
	emit(&u1, &es[0], EV_JOIN, SYNC_UNKNOWN, NULL);
	emit(&u1, &es[0], EV_REVIVE, SYNC_UNKNOWN, NULL);
	slice(&u1, 1, 2, END_FINISH, body);
	emit(&u1, &es[0], EV_JOIN, SYNC_UNKNOWN, NULL);
	emit(&u1, &es[0], EV_FREE, SYNC_UNKNOWN, NULL);
	emit(&u2, &es[0], EV_JOIN, SYNC_UNKNOWN, NULL);
	emit(&u2, &es[0], EV_FREE, SYNC_UNKNOWN, NULL);
	/* unit 4 runs unit 5 on top of itself on stream 0; unit 6 finishes
	 * with a region open; unit 7 begins a region on stream 1, yields and
	 * ends it on stream 0 */
	struct abtd_unit u4 = { 4 }, u5 = { 5 }, u6 = { 6 }, u7 = { 7 };
	struct abtd_unit *more[] = { &u4, &u5, &u6, &u7 };
	for (int i = 0; i < 4; i++)
		emit(more[i], &es[0], EV_CREATE, SYNC_UNKNOWN, NULL);
	struct nested n = { &u4, &u5, body };
	on_es(0, run_nested, &n);
	slice(&u6, 1, 0, END_FINISH, body);
	slice(&u7, 1, 0, END_YIELD, body);
	slice(&u7, 0, 1, END_FINISH, body);
	for (int i = 0; i < 4; i++) {
		emit(more[i], &es[0], EV_JOIN, SYNC_UNKNOWN, NULL);
		emit(more[i], &es[0], EV_FREE, SYNC_UNKNOWN, NULL);
	}
	cancel_unit = &u3;
	on_es(1, create_and_cancel, NULL);
	return ABTD_SUCCESS;
}
