/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pthread_thread.c - the thread life-cycle wrappers (pthread.c has the
 * design): pthread_create starts the new thread in pth_start_routine
 * (ThreadCreate / ThreadBegin / ThreadEnd), joins are ThreadWait, detach,
 * cancel, exit, and thread names (pthread_setname_np, prctl). Not the hot
 * path: these allocate and take private locks (real functions).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "pthread_wrap.h"

_Atomic uint64_t tr_pth_ncreated;   /* threads started through pth_start_routine */

static __attribute__((noinline)) int pth_join_call(struct pth_cu *cu, enum pth_kind k, pthread_t th,
						    void **rv, clockid_t clk, const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(tr_pth_cu_handler, cu);
	if (k == K_PLAIN)
		ret = real_pthread_join(th, rv);
	else if (k == K_TIMED)
		ret = real_pthread_timedjoin_np(th, rv, ts);
	else
		ret = real_pthread_clockjoin_np(th, rv, clk, ts);
	pthread_cleanup_pop(0);
	return ret;
}

/* ---- thread life cycle ------------------------------------------------------------------------ */

/*
 * The start record is malloc'ed by the creator (pthread_create is not the
 * hot path) and freed by the new thread as soon as it has copied it (or by
 * the creator if the creation failed): nothing can leak, whatever the
 * thread does later (detach, never joined, cancel, exit).
 *
 * The thread's sequence count lives in its tr_thread (tr_thread_seq and
 * tr_thread_set_seq, tracer.h) until its ThreadEnd is written, then it is
 * set to 0; every path that ends a thread goes through
 * tr_pth_write_thread_end under pth_end_lock, so a thread still running at
 * exit (ended by the exiting thread through thread_fini) never gets two
 * ThreadEnd records.
 */
struct pth_start {
	void *(*fn)(void *);
	void *arg;
	uint64_t seq;
	uint32_t index;     /* location index reserved by the creator */
};

static pthread_mutex_t pth_end_lock = PTHREAD_MUTEX_INITIALIZER;

/* pthread_t -> sequence count of joinable threads, for ThreadWait. */
struct pth_jnode {
	pthread_t th;
	uint64_t seq;
	struct pth_jnode *next;
};
#define PTH_JBUCKETS 256
static pthread_mutex_t pth_join_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pth_jnode *pth_join_tab[PTH_JBUCKETS];

static unsigned pth_jhash(pthread_t th)
{
	uint64_t h = (uint64_t)th * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 56) % PTH_JBUCKETS;
}

/* Under pth_join_lock. Returns the node removed (caller frees), or NULL. */
static struct pth_jnode *pth_join_remove_locked(pthread_t th)
{
	struct pth_jnode **pp = &pth_join_tab[pth_jhash(th)];

	for (; *pp; pp = &(*pp)->next) {
		if (pthread_equal((*pp)->th, th)) {
			struct pth_jnode *n = *pp;

			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

/* Sequence count of a joinable thread, forgotten (join/detach). 1: found. */
static int pth_join_take(pthread_t th, uint64_t *seq)
{
	struct pth_jnode *n;

	real_pthread_mutex_lock(&pth_join_lock);
	n = pth_join_remove_locked(th);
	real_pthread_mutex_unlock(&pth_join_lock);
	if (!n)
		return 0;
	*seq = n->seq;
	tr_free(n);
	return 1;
}

/* ThreadEnd of t if not written yet. own: t is the calling thread's state
 * (else: a thread still running at exit, written by the exiting thread). */
void tr_pth_write_thread_end(struct tr_thread *t, int own)
{
	real_pthread_mutex_lock(&pth_end_lock);
	if (tr_thread_seq(t)) {
		uint64_t now = tr_time();

		if (own) {
			if (tr_rec_begin(t)) {
				tr_evt_status(t, otf2w_evt_thread_end(t->w, NULL, now, tr_pth_comm, tr_thread_seq(t)));
				tr_rec_end(t);
			}
		} else if (t->w && !tr_thread_closed(t)) {
			/* Stopped by the exiting thread: its clock may be behind
			 * the thread's last event. */
			uint64_t last = otf2w_evt_writer_last_time(t->w);

			tr_evt_status(t, otf2w_evt_thread_end(t->w, NULL, now > last ? now : last,
							      tr_pth_comm, tr_thread_seq(t)));
		}
		tr_thread_set_seq(t, 0);
	}
	real_pthread_mutex_unlock(&pth_end_lock);
}

/* In the thread: its start routine returned, called pthread_exit or was
 * cancelled (cleanup handler; glibc runs it with cancellation disabled). */
static void pth_thread_end(void *unused)
{
	struct tr_thread *t;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	t = tr_thread_get();
	if (t) {
		/* TRACER_ON_FULL=stop: a location stopped by a full buffer is
		 * written out and resumed first, so its ThreadEnd is not
		 * dropped (no-op otherwise; cancellation is disabled here). */
		tr_thread_ending(t);
		/* regions still open (a VT_begin without VT_end before
		 * pthread_exit or the return): their Leaves go before the
		 * ThreadEnd, which stays the location's last record (the core
		 * would close them later, after it) */
		tr_stack_leave_to(t, 0, tr_time());
		tr_pth_write_thread_end(t, 1);
		tr_thread_put(t);
	}
	/* No pthread events after ThreadEnd (TLS destructors run later), and
	 * close the location now rather than in the core's TSD destructor;
	 * unless this thread became a fork child's master thread (its end is
	 * the end of the process, written at exit). */
	t = tr_thread_peek();
	if (t && t->index != 0) {
		tr_pth_tls.ended = 1;
		tr_pth_tls.self = NULL;
		tr_thread_end(t);
	}
	pthread_setcancelstate(old, NULL);
}

static void *pth_start_routine(void *p)
{
	struct pth_start s = *(struct pth_start *)p;
	struct tr_thread *t;
	void *ret;
	int old;

	tr_free(p);
	/* Creating the location may hit cancellation points (file I/O): a
	 * pending cancel must not act while the guard is held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	t = tr_thread_begin_index(s.index);
	if (t) {
		tr_thread_set_seq(t, s.seq);
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_thread_begin(t->w, NULL, tr_time(), tr_pth_comm, s.seq));
			tr_rec_end(t);
		}
		tr_thread_put(t);
	}
	pthread_setcancelstate(old, NULL);

	pthread_cleanup_push(pth_thread_end, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/*
 * Threads created while their creator is inside the tracer (the guard is
 * held: e.g. the progress threads Open MPI starts in MPI_Init, called by the
 * MPI wrapper) or by such a thread belong to a wrapped library, not to the
 * program: their pthread calls are not recorded (without this, each MPI
 * rank shows two extra locations full of Open MPI's internal locking).
 */
struct pth_quiet {
	void *(*fn)(void *);
	void *arg;
};

static void *pth_quiet_routine(void *p)
{
	struct pth_quiet q = *(struct pth_quiet *)p;

	tr_free(p);
	tr_pth_tls.quiet = 1;
	tr_pth_tls.ended = 1;
	tr_pth_tls.self = NULL;
	return q.fn(q.arg);
}

static int pth_create_untraced(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct tr_thread *self;
	struct pth_quiet *q;
	int ret;

	if (!atomic_load_explicit(&tr_pth_on, memory_order_relaxed) || tr_pth_resolving)
		return real_pthread_create(th, attr, fn, arg);
	self = tr_thread_peek();
	if (!tr_pth_tls.quiet && !(self && self->guard > 0))
		return real_pthread_create(th, attr, fn, arg);
	q = tr_malloc(sizeof(*q));
	if (!q)
		return real_pthread_create(th, attr, fn, arg);
	q->fn = fn;
	q->arg = arg;
	ret = real_pthread_create(th, attr, pth_quiet_routine, q);
	if (ret)
		tr_free(q);
	return ret;
}

TR_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	PTH_INIT(pthread_create);
	struct tr_thread *t = pth_get();
	struct pth_start *s;
	struct pth_jnode *j;
	int ret, err, ds = PTHREAD_CREATE_JOINABLE;
	uint64_t seq, t0;

	if (!t)
		return pth_create_untraced(th, attr, fn, arg);
	s = tr_malloc(sizeof(*s));
	j = tr_malloc(sizeof(*j));
	if (!s || !j) {
		tr_free(s);
		tr_free(j);
		tr_thread_put(t);
		return real_pthread_create(th, attr, fn, arg);
	}
	seq = tr_thread_reserve_seq();
	s->fn = fn;
	s->arg = arg;
	s->seq = seq;
	s->index = tr_thread_reserve_index();
	if (attr)
		pthread_attr_getdetachstate(attr, &ds);

	t0 = tr_time();
	tr_enter(t, t0, pth_region(R_CREATE));
	/* Held across the creation so that a join that returns before the
	 * handle is inserted still finds it. */
	real_pthread_mutex_lock(&pth_join_lock);
	ret = real_pthread_create(th, attr, pth_start_routine, s);
	err = errno;
	if (ret == 0 && ds != PTHREAD_CREATE_DETACHED) {
		struct pth_jnode *old = pth_join_remove_locked(*th);   /* stale: handle reused */

		j->th = *th;
		j->seq = seq;
		j->next = pth_join_tab[pth_jhash(*th)];
		pth_join_tab[pth_jhash(*th)] = j;
		j = old;
	}
	real_pthread_mutex_unlock(&pth_join_lock);
	tr_free(j);
	if (ret == 0) {
		/* s belongs to the new thread now (it may be freed already) */
		atomic_fetch_add_explicit(&tr_pth_ncreated, 1, memory_order_relaxed);
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_thread_create(t->w, NULL, t0, tr_pth_comm, seq));
			tr_rec_end(t);
		}
	} else {
		tr_free(s);
	}
	tr_leave(t, tr_time(), pth_region(R_CREATE));
	pth_put_errno(t, err);
	return ret;
}

/* After a join call returned: ThreadWait when the thread was reaped. */
static int pth_joined(struct tr_thread *t, enum tr_pth_rgn r, pthread_t th, int ret)
{
	uint64_t now = tr_time(), seq;

	if (ret == 0 && pth_join_take(th, &seq) && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_thread_wait(t->w, NULL, now, tr_pth_comm, seq));
		tr_rec_end(t);
	}
	tr_leave(t, now, pth_region(r));
	tr_thread_put(t);
	return ret;
}

static inline int pth_join(enum tr_pth_rgn r, enum pth_kind k, pthread_t th, void **rv, clockid_t clk,
			   const struct timespec *ts)
{
	struct tr_thread *t = pth_get();
	if (!t)
		return k == K_PLAIN ? real_pthread_join(th, rv) :
		       k == K_TIMED ? real_pthread_timedjoin_np(th, rv, ts) :
				      real_pthread_clockjoin_np(th, rv, clk, ts);
	struct pth_cu cu = { t, r, NULL };

	tr_enter(t, tr_time(), pth_region(r));
	tr_durable_idle(t);
	return pth_joined(t, r, th, pth_join_call(&cu, k, th, rv, clk, ts));
}

TR_EXPORT int pthread_join(pthread_t th, void **rv)
{
	PTH_INIT(pthread_join);
	return pth_join(R_JOIN, K_PLAIN, th, rv, 0, NULL);
}

TR_EXPORT int pthread_timedjoin_np(pthread_t th, void **rv, const struct timespec *ts)
{
	PTH_INIT(pthread_timedjoin_np);
	return pth_join(R_TIMEDJOIN, K_TIMED, th, rv, 0, ts);
}

TR_EXPORT int pthread_clockjoin_np(pthread_t th, void **rv, clockid_t clk, const struct timespec *ts)
{
	PTH_INIT(pthread_clockjoin_np);
	return pth_join(R_CLOCKJOIN, K_CLOCK, th, rv, clk, ts);
}

TR_EXPORT int pthread_tryjoin_np(pthread_t th, void **rv)
{
	PTH_INIT(pthread_tryjoin_np);
	struct tr_thread *t = pth_get();
	if (!t)
		return real_pthread_tryjoin_np(th, rv);
	tr_enter(t, tr_time(), pth_region(R_TRYJOIN));
	return pth_joined(t, R_TRYJOIN, th, real_pthread_tryjoin_np(th, rv));
}

TR_EXPORT int pthread_detach(pthread_t th)
{
	PTH_INIT(pthread_detach);
	struct tr_thread *t = pth_get();
	uint64_t seq;
	if (!t)
		return real_pthread_detach(th);
	uint64_t now = tr_time();
	tr_enter(t, now, pth_region(R_DETACH));
	int ret = real_pthread_detach(th);
	if (ret == 0)
		pth_join_take(th, &seq);   /* never joined: no ThreadWait */
	tr_leave(t, now, pth_region(R_DETACH));
	tr_thread_put(t);
	return ret;
}

TR_EXPORT int pthread_cancel(pthread_t th)
{
	PTH_INIT(pthread_cancel);
	PTH_POINT_BODY(R_CANCEL, real_pthread_cancel(th));
}

/*
 * Thread names become location names (no region: the call is not a
 * synchronization). The kernel keeps 15 characters; so does the location.
 */
static void pth_name(pthread_t th, const char *name)
{
	char n[16];
	size_t l = strnlen(name, sizeof(n) - 1);
	memcpy(n, name, l);
	n[l] = 0;
	struct tr_thread *t = tr_thread_get();
	if (!t)
		return;
	tr_thread_set_name((uint64_t)th, n);
	tr_thread_put(t);
}

TR_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	PTH_INIT(pthread_setname_np);
	int ret = real_pthread_setname_np(th, name);
	if (ret == 0) {
		int saved = errno;
		pth_name(th, name);
		errno = saved;
	}
	return ret;
}

TR_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	PTH_INIT(prctl);
	if (option == PR_SET_SECCOMP && (a2 == 1 || a2 == 2))   /* strict, filter: the archive first */
		tr_sandbox_enter("prctl(PR_SET_SECCOMP)");
	int ret = real_prctl(option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_NAME && a2) {
		int saved = errno;
		pth_name(pthread_self(), (const char *)a2);
		errno = saved;
	}
	return ret;
}

/*
 * pthread_exit: a point region (Enter/Leave at one timestamp: the call
 * never returns). The unwinding then runs the application's cleanup
 * handlers (their unlocks are recorded) and last pth_thread_end, pushed by
 * pth_start_routine, which writes ThreadEnd.
 */
TR_EXPORT void pthread_exit(void *rv)
{
	PTH_INIT(pthread_exit);
	struct tr_thread *t = pth_get();
	if (t) {
		uint64_t now = tr_time();

		tr_enter(t, now, pth_region(R_EXIT));
		tr_leave(t, now, pth_region(R_EXIT));
		tr_thread_put(t);
	}
	real_pthread_exit(rv);
	__builtin_unreachable();
}

/* In the fork child: the tables describe the parent's threads. */
void tr_pth_thread_fork_child(void)
{
	pth_end_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	pth_join_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	memset(pth_join_tab, 0, sizeof(pth_join_tab));
}
