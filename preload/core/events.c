/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c - the general path of tr_enter/tr_leave (tracer.h has the
 * inline fast path), modules and measurement on/off.
 */
#include <string.h>
#include "tr_int.h"

void tr_evt_status_slow(struct tr_thread *t, otf2w_status s)
{
	/* a write error that stopped the location (durable: full disk) is a
	 * stop too: the archive's open regions are the shadow stack's now */
	int stopped = s == OTF2W_E_STOPPED || (t && t->w && otf2w_evt_writer_stopped(t->w));
	if (stopped) {
		/* counted by the writer as dropped; the first one: the archive's
		 * open regions are those of the shadow stack now */
		if (t && !t->stop_seen) {
			uint32_t d = t->depth < TR_SHADOW_DEPTH ? t->depth : TR_SHADOW_DEPTH;
			memcpy(t->stop_stack, t->stack, d * sizeof(t->stack[0]));
			t->stop_depth = t->depth;
			t->stop_min = t->depth;
			t->stop_seen = 1;
		}
		if (s == OTF2W_E_STOPPED)
			return;
	}
	if (t)
		t->errors++;
	tr_error_note(s);
}

/* tr_evt_general (tracer.h): why Enter/Leave take the general path */
enum {
	TR_EVT_GEN_START = 1,    /* modules not started yet (filter not known) */
	TR_EVT_GEN_FILTER = 2,   /* TRACER_FILTER rules */
	TR_EVT_GEN_HOOKS = 4,    /* an on_enter/on_leave observer or a write_enter/leave module */
};
int tr_evt_general = TR_EVT_GEN_START;

/* The general path of tr_enter/tr_leave (tracer.h has the fast one): the
 * filter, the observers, the writer module or the plain record, the shadow
 * stack. leave: 0 for an Enter, 1 for a Leave. */
static void tr_region_event(struct tr_thread *t, uint64_t time, uint32_t region, int leave)
{
	if (tr_unlikely(tr_region_is_filtered(region)))
		return;
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (tr_likely(t->state == TR_T_ACTIVE && !t->off)) {
		if (tr_unlikely(tr_g.nobservers)) {
			for (int i = 0; i < tr_g.nmodules; i++) {
				const struct tr_module *m = tr_g.modules[i];
				void (*on)(struct tr_thread *, uint64_t, uint32_t) = leave ? m->on_leave : m->on_enter;
				if (on)
					on(t, time, region);
			}
		}
		if (tr_unlikely(tr_g.writer_module != NULL)) {
			if (leave)
				tr_g.writer_module->write_leave(t, time, region);
			else
				tr_g.writer_module->write_enter(t, time, region);
		} else {
			otf2w_status s = leave ? otf2w_evt_leave(t->w, NULL, time, region) :
						 otf2w_evt_enter(t->w, NULL, time, region);
			if (tr_unlikely(s != OTF2W_OK)) {
				tr_evt_status_slow(t, s);
				/* a region left while stopped: its Leave is due at resume */
				if (leave && t->stop_seen && t->depth > 0 && t->depth - 1 < t->stop_min)
					t->stop_min = t->depth - 1;
			}
		}
		if (!leave) {
			if (tr_likely(t->depth < TR_SHADOW_DEPTH))
				t->stack[t->depth] = region;
			t->depth++;
		} else if (tr_likely(t->depth > 0)) {
			t->depth--;
		}
	}
	tr_rec_end(t);
}

void tr_enter_slow(struct tr_thread *t, uint64_t time, uint32_t region)
{
	tr_region_event(t, time, region, 0);
}

void tr_leave_slow(struct tr_thread *t, uint64_t time, uint32_t region)
{
	t->saved_errno = errno;   /* the errno of the wrapped call (see tr_thread_put) */
	tr_region_event(t, time, region, 1);
}

void tr_measurement(struct tr_thread *t, int on)
{
	if (!t || !t->w || t->state != TR_T_ACTIVE)
		return;
	if ((on && !t->off) || (!on && t->off))
		return;
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t now = tr_time();
	otf2w_status s = otf2w_evt_measurement_on_off(t->w, NULL, now,
						      on ? OTF2W_MEASUREMENT_ON : OTF2W_MEASUREMENT_OFF);
	if (s != OTF2W_OK)
		tr_evt_status_slow(t, s);
	t->off = !on;
	tr_rec_end(t);
}

/* ---- modules ---- */

static struct tr_lock tr_mod_lock = TR_LOCK_INIT;

void tr_module_register(const struct tr_module *m)
{
	if (!m)
		return;
	tr_lock(&tr_mod_lock);
	if (tr_g.nmodules >= TR_MAX_MODULES) {
		tr_unlock(&tr_mod_lock);
		tr_log_error("too many modules: %s ignored", m->name ? m->name : "?");
		return;
	}
	if (m->write_enter && m->write_leave) {
		if (tr_g.writer_module)
			tr_log_warn("module %s: enter/leave writer already set by %s; ignored",
				    m->name ? m->name : "?", tr_g.writer_module->name ? tr_g.writer_module->name : "?");
		else
			tr_g.writer_module = m;
	}
	tr_g.modules[tr_g.nmodules++] = m;
	if (m->on_enter || m->on_leave)
		tr_g.nobservers++;
	if (tr_g.nobservers || tr_g.writer_module)
		__atomic_fetch_or(&tr_evt_general, TR_EVT_GEN_HOOKS, __ATOMIC_RELAXED);
	int started = tr_g.modules_started;
	tr_unlock(&tr_mod_lock);
	tr_log_debug("module %s registered", m->name ? m->name : "?");
	if (started && tr_g.active) {
		/* late registration: initialise now, for the calling thread too */
		struct tr_thread *t = tr_tls_self;
		tr_tls_creating++;
		if (m->init)
			m->init();
		if (t && t->state == TR_T_ACTIVE && m->thread_init)
			m->thread_init(t);
		tr_tls_creating--;
	}
}

/* The program installs a handler for sig (preload/core/signals.c). */
void tr_modules_sigaction(int sig, const void *act)
{
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->on_sigaction)
			tr_g.modules[i]->on_sigaction(sig, act);
}

/* After all constructors of libtracer.so registered their modules. */
void tr_modules_start(void)
{
	if (!tr_g.initialized)
		tr_init();
	tr_cfg_check_unknown();   /* (every family's table is registered by now) */
	tr_lock(&tr_mod_lock);
	if (tr_g.modules_started) {
		tr_unlock(&tr_mod_lock);
		return;
	}
	tr_g.modules_started = 1;
	int n = tr_g.nmodules;
	/* from now on Enter/Leave are plain records unless a filter or a
	 * module needs the general path */
	if (tr_filter_active)
		__atomic_fetch_or(&tr_evt_general, TR_EVT_GEN_FILTER, __ATOMIC_RELAXED);
	__atomic_fetch_and(&tr_evt_general, ~TR_EVT_GEN_START, __ATOMIC_RELAXED);
	tr_unlock(&tr_mod_lock);
	if (!tr_g.active)
		return;
	struct tr_thread *t = tr_tls_self;
	if (t)
		t->guard++;
	for (int i = 0; i < n; i++)
		if (tr_g.modules[i]->init)
			tr_g.modules[i]->init();
	if (t && t->state == TR_T_ACTIVE)
		for (int i = 0; i < n; i++)
			if (tr_g.modules[i]->thread_init)
				tr_g.modules[i]->thread_init(t);
	if (t)
		t->guard--;
}

int tr_modules_fork_records(void)
{
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->fork_records && tr_g.modules[i]->fork_records())
			return 1;
	return 0;
}

void tr_modules_thread_init(struct tr_thread *t)
{
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->thread_init)
			tr_g.modules[i]->thread_init(t);
}

void tr_modules_thread_fini(struct tr_thread *t)
{
	if (!tr_g.modules_started)
		return;
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->thread_fini)
			tr_g.modules[i]->thread_fini(t);
}

void tr_modules_thread_ending(struct tr_thread *t)
{
	if (!tr_g.modules_started)
		return;
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->thread_ending)
			tr_g.modules[i]->thread_ending(t);
}

/* Every module's defs_freeze hook (tr_defs_pack, MPI_Finalize). */
void tr_modules_defs_freeze(void)
{
	if (!tr_g.modules_started || !tr_g.active)
		return;
	struct tr_thread *t = tr_tls_self;
	if (t)
		t->guard++;
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->defs_freeze)
			tr_g.modules[i]->defs_freeze();
	if (t)
		t->guard--;
}

/* Every module's fini hook, once per process (MPI: from tr_defs_pack at
 * MPI_Finalize, so the definitions they add are unified; otherwise at
 * shut-down). Later calls return at once. */
static int tr_mod_fini_done;

void tr_modules_fini(void)
{
	if (!tr_g.modules_started || !tr_g.active)
		return;
	if (__atomic_exchange_n(&tr_mod_fini_done, 1, __ATOMIC_SEQ_CST))
		return;
	struct tr_thread *t = tr_tls_self;
	if (t)
		t->guard++;
	tr_tls_creating++;
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->fini)
			tr_g.modules[i]->fini();
	tr_tls_creating--;
	if (t)
		t->guard--;
}

void tr_modules_fork_child(void)
{
	tr_mod_lock.v = 0;
	for (int i = 0; i < tr_g.nmodules; i++)
		if (tr_g.modules[i]->fork_child)
			tr_g.modules[i]->fork_child();
}

/* ---- shadow stack of open regions (work units: wrappers/argobots) ---- */

uint32_t tr_stack_depth(const struct tr_thread *t)
{
	return t ? t->depth : 0;
}

size_t tr_stack_detach(struct tr_thread *t, uint32_t base, uint32_t *regions, size_t max)
{
	size_t n = 0;
	if (!t)
		return 0;
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->state == TR_T_ACTIVE) {
		for (uint32_t d = base; d < t->depth && n < max; d++)
			if (d < TR_SHADOW_DEPTH)
				regions[n++] = t->stack[d];
		if (t->depth > base)
			t->depth = base;
	}
	tr_rec_end(t);
	return n;
}

void tr_stack_attach(struct tr_thread *t, const uint32_t *regions, size_t n)
{
	if (!t)
		return;
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->state == TR_T_ACTIVE) {
		for (size_t i = 0; i < n; i++) {
			if (t->depth < TR_SHADOW_DEPTH)
				t->stack[t->depth] = regions[i];
			t->depth++;
		}
	}
	tr_rec_end(t);
}

void tr_stack_leave_to(struct tr_thread *t, uint32_t base, uint64_t time)
{
	if (!t)
		return;
	while (t->depth > base && t->depth <= TR_SHADOW_DEPTH && t->state == TR_T_ACTIVE && !t->off) {
		uint32_t d = t->depth;
		tr_leave(t, time, t->stack[d - 1]);
		if (t->depth == d)   /* filtered region: nothing recorded, pop it */
			t->depth--;
	}
	if (t->depth > base && t->state == TR_T_ACTIVE)
		t->depth = base;
}

/* ---- VT_wakeup ---- */

void tr_wakeup(struct tr_thread *t)
{
	if (!t || t->state != TR_T_ACTIVE || t->off || !tr_g.modules_started)
		return;
	/* like the on_enter observers: inside a record (the sampler defers) */
	t->in_record = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->state == TR_T_ACTIVE) {
		uint64_t now = tr_time();
		for (int i = 0; i < tr_g.nmodules; i++)
			if (tr_g.modules[i]->wakeup)
				tr_g.modules[i]->wakeup(t, now);
	}
	tr_rec_end(t);
}
