/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_event.h - the hot path: recording a wrapped call (Enter, Leave, the
 * family's records) and the region stack: part of tracer.h.
 */
#ifndef TR_EVENT_H
#define TR_EVENT_H

#include "tr_thread.h"

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
 * contexts). Kept by preload/core/events.c; read-only elsewhere. */
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

/*
 * Spans: a wrapped call around a real call that takes time (a read, a
 * wait): Enter and the family's records before the real call, the
 * family's records and Leave after it; each side one record group, the
 * region's Enter and Leave encoded once (tr_call_code).
 * tr_span_enter returns where the records after the Enter go (max: their
 * size), the region pushed on the shadow stack; end the group with
 * tr_fast_end(t, p, records + 1). tr_span_leave_begin returns where the
 * records before the Leave go (max: their size); tr_span_leave writes the
 * Leave, pops the region and ends the group (nrecords: the family's
 * records). NULL from either: nothing was written, take the general way
 * for that side (the otf2w_evt_* writers, tr_enter / tr_leave). Neither
 * touches errno.
 */
static TR_ALWAYS_INLINE uint8_t *tr_span_enter(struct tr_thread *t, uint64_t time, const struct tr_call_code *c,
					       uint32_t region, size_t max)
{
	uint8_t *p;

	if (tr_unlikely(tr_evt_general) ||
	    !(p = tr_fast_begin(t, time, OTF2W_EVT_ENTER_MAX + max + OTF2W_CODE_SLACK)))
		return NULL;
	if (tr_likely(t->depth < sizeof(t->stack) / sizeof(t->stack[0])))
		t->stack[t->depth] = region;
	t->depth++;
	return otf2w_put_code(p, c->enter);
}
static TR_ALWAYS_INLINE uint8_t *tr_span_leave_begin(struct tr_thread *t, uint64_t time, size_t max)
{
	if (tr_unlikely(tr_evt_general))
		return NULL;
	return tr_fast_begin(t, time, max + OTF2W_EVT_LEAVE_MAX + OTF2W_CODE_SLACK);
}
static TR_ALWAYS_INLINE void tr_span_leave(struct tr_thread *t, uint8_t *p, const struct tr_call_code *c, uint32_t nrecords)
{
	if (tr_likely(t->depth > 0))
		t->depth--;
	tr_fast_end(t, otf2w_put_code(p, c->leave), nrecords + 1);
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
 * its archive is finished now, recording stops (preload/core/sandbox.c). */
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

#endif /* TR_EVENT_H */
