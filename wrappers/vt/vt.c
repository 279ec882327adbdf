/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt.c - the Intel Trace Collector user API (VT_*) on top of the tracer core.
 *
 * Handles:
 *   class   1..        index + 1 into vt_classes (0 = VT_NOCLASS = "Application";
 *                      any value <= 0 means "no class", so binaries built
 *                      with another VT.h convention for VT_NOCLASS work)
 *   state   VT_STATE_BASE + index into vt_states (VT_funcdef, VT_enterstate);
 *           any other int chosen by the program for VT_symdef (old interface,
 *           mapped through an open-addressing table)
 *   scl     1..        index + 1 into vt_scls (0 = VT_NOSCL; any value <= 0
 *                      means "no SCL", for the same reason)
 *   counter 1..        index + 1 into vt_counters
 *
 * A state "A:B:C" is the OTF2 region named "C" with canonical name "A:B:C"
 * in class "A:B"; every class becomes a REGIONS group (written at shut-down)
 * holding its regions. SCLs are SourceCodeLocation definitions; entering a
 * region with an SCL (VT_beginl/VT_enter/VT_thisloc) defines a Callsite
 * (file, line, entered region, region it was entered from).
 *
 * Tables are append-only: an entry is filled under vt_lock, then published
 * by a release store of the count, so lookups (hot path) take no lock.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_int.h"

static int vt_detailed_states;   /* TRACER_DETAILED_STATES */

static atomic_flag vt_lock = ATOMIC_FLAG_INIT;

char *vt_classes[VT_MAX_CLASSES] TR_BIG_BSS;
_Atomic uint32_t vt_nclasses;
static struct vt_state vt_states[VT_MAX_STATES] TR_BIG_BSS;
static _Atomic uint32_t vt_nstates;
struct vt_scl vt_scls[VT_MAX_SCLS] TR_BIG_BSS;
_Atomic uint32_t vt_nscls;
struct vt_counter vt_counters[VT_MAX_COUNTERS];
_Atomic uint32_t vt_ncounters;
struct vt_symslot vt_symdefs[VT_SYMDEF_SLOTS] TR_BIG_BSS;

_Atomic int vt_finalized;
static uint64_t vt_start_time;

/* The region stack VT_end/VT_leave pop: the thread's own (TLS), or while a
 * user-level task runs on the thread (wrappers/argobots) the task's, so a
 * region begun in a ULT on one stream can end after it migrated. */
static TR_TLS struct tr_region_stack vt_tls_stack;
TR_TLS int vt_thisloc_scl;        /* pending VT_thisloc, 0 = none */
TR_TLS int vt_off;                /* VT_traceoff on this thread */

void vt_lock_take(void)
{
	while (atomic_flag_test_and_set_explicit(&vt_lock, memory_order_acquire))
		;
}

void vt_lock_drop(void)
{
	atomic_flag_clear_explicit(&vt_lock, memory_order_release);
}

/* ---- thread access ----------------------------------------------------------- */

/* The thread's tracer state or the VT error code telling why there is none. */
int vt_get(struct tr_thread **out)
{
	*out = NULL;
	if (atomic_load_explicit(&vt_finalized, memory_order_relaxed) || !tr_is_active())
		return VT_ERR_NOTINITIALIZED;
	struct tr_thread *t = tr_thread_get();
	if (!t) {
		struct tr_thread *p = tr_thread_peek();
		return (p && p->guard > 0) ? VT_ERR_INVT : VT_ERR_NOTINITIALIZED;
	}
	*out = t;
	return VT_OK;
}

/* vt_get for a call whose arguments are checked first: VT_ERR_BADARG (the
 * thread put back) unless args_ok. */
int vt_get_args(struct tr_thread **out, int args_ok)
{
	int rc = vt_get(out);
	if (rc == VT_OK && !args_ok) {
		tr_thread_put(*out);
		rc = VT_ERR_BADARG;
	}
	return rc;
}

/* The stack VT calls of thread t use now. Owner thread only. */
static struct tr_region_stack *vt_stack_of(struct tr_thread *t)
{
	struct tr_task *task = tr_task_current(t);
	return task ? &task->user : &vt_tls_stack;
}

/* ---- names ------------------------------------------------------------------- */

/* Append the colon-separated components of src to dst (normalized: no empty
 * components, single ':' between them). Returns the new length. */
size_t vt_path_append(char *dst, size_t len, size_t cap, const char *src, size_t n)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && src[i] == ':')
			i++;
		size_t b = i;
		while (i < n && src[i] != ':')
			i++;
		if (i == b)
			break;
		if (len && len + 1 < cap)
			dst[len++] = ':';
		for (size_t k = b; k < i && len + 1 < cap; k++)
			dst[len++] = src[k];
	}
	dst[len] = '\0';
	return len;
}

/* Index of class `path` (normalized), created if new; -1 when full. Lock held. */
static int vt_class_find_locked(const char *path)
{
	uint32_t n = atomic_load_explicit(&vt_nclasses, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(vt_classes[i], path) == 0)
			return (int)i;
	if (n >= VT_MAX_CLASSES)
		return -1;
	char *copy = tr_strdup(path);
	if (!copy)
		return -1;
	vt_classes[n] = copy;
	atomic_store_explicit(&vt_nclasses, n + 1, memory_order_release);
	return (int)n;
}

int vt_class_find(const char *path)
{
	vt_lock_take();
	int c = vt_class_find_locked(path);
	vt_lock_drop();
	return c;
}

void vt_init_classes(void)
{
	if (atomic_load_explicit(&vt_nclasses, memory_order_acquire) == 0)
		vt_class_find("Application");
}

/* Define the state of full (normalized) path `path` ("" = not logged).
 * Returns the state index or a negative VT error code. */
int vt_state_define(const char *path, int truncated)
{
	uint32_t region = OTF2W_UNDEFINED_REF;
	int cls = 0;
	if (path[0]) {
		const char *last = strrchr(path, ':');
		char cpath[VT_NAME_MAX];
		const char *name = path;
		if (last) {
			size_t cl = (size_t)(last - path);
			memcpy(cpath, path, cl);
			cpath[cl] = '\0';
			name = last + 1;
		} else {
			strcpy(cpath, "Application");
		}
		char canon[VT_NAME_MAX];
		if (last)
			snprintf(canon, sizeof(canon), "%s", path);
		else
			snprintf(canon, sizeof(canon), "Application:%s", path);
		cls = vt_class_find(cpath);
		if (cls < 0)
			return VT_ERR_NOMEMORY;
		region = tr_def_region(name, canon, cpath, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER,
				       OTF2W_REGION_FLAG_NONE, NULL, 0, 0);
		if (region == OTF2W_UNDEFINED_REF)
			return VT_ERR_NOMEMORY;
	}
	vt_lock_take();
	uint32_t n = atomic_load_explicit(&vt_nstates, memory_order_relaxed);
	/* same region and truncation as an existing state: same handle */
	for (uint32_t i = 0; i < n; i++) {
		if (vt_states[i].region == region && vt_states[i].truncated == (uint8_t)truncated) {
			vt_lock_drop();
			return (int)i;
		}
	}
	if (n >= VT_MAX_STATES) {
		vt_lock_drop();
		return VT_ERR_NOMEMORY;
	}
	vt_states[n].region = region;
	vt_states[n].cls = (uint32_t)cls;
	vt_states[n].truncated = (uint8_t)truncated;
	atomic_store_explicit(&vt_nstates, n + 1, memory_order_release);
	vt_lock_drop();
	return (int)n;
}

/* Hot path: state of a handle, NULL if unknown. */
static struct vt_state *vt_state_lookup(int handle)
{
	uint32_t n = atomic_load_explicit(&vt_nstates, memory_order_acquire);
	if (handle >= VT_STATE_BASE && (uint32_t)(handle - VT_STATE_BASE) < n)
		return &vt_states[handle - VT_STATE_BASE];
	uint32_t h = ((uint32_t)handle * 2654435761u) & (VT_SYMDEF_SLOTS - 1);
	for (uint32_t k = 0; k < VT_SYMDEF_SLOTS; k++) {
		struct vt_symslot *s = &vt_symdefs[(h + k) & (VT_SYMDEF_SLOTS - 1)];
		if (!atomic_load_explicit(&s->used, memory_order_acquire))
			return NULL;
		if (s->key == handle)
			return &vt_states[s->state];
	}
	return NULL;
}

static struct vt_scl *vt_scl_lookup(int handle)
{
	uint32_t n = atomic_load_explicit(&vt_nscls, memory_order_acquire);
	if (handle <= 0 || (uint32_t)handle > n)
		return NULL;
	return &vt_scls[handle - 1];
}

/* Check an SCL argument: VT_OK for "none" (<= 0) or a known handle. */
int vt_scl_check(int scl)
{
	if (scl <= VT_NOSCL || vt_scl_lookup(scl))
		return VT_OK;
	return VT_ERR_BADSCLID;
}

/* Define the Callsite "region entered from `left` at scl" once per pair. */
static void vt_callsite(struct vt_scl *s, uint32_t entered, uint32_t left)
{
	uint64_t key = (uint64_t)entered << 32 | left;
	for (int i = 0; i < VT_SCL_CACHE; i++)
		if (atomic_load_explicit(&s->cache[i], memory_order_relaxed) == key)
			return;
	tr_def_callsite(s->file, (uint32_t)s->line, entered, left);
	unsigned slot = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed) % VT_SCL_CACHE;
	atomic_store_explicit(&s->cache[slot], key, memory_order_relaxed);
}

/* ---- state changes ------------------------------------------------------------ */

static int vt_push(struct tr_thread *t, struct vt_state *st, int scl)
{
	struct tr_region_stack *s = vt_stack_of(t);
	if (s->depth >= TR_TASK_REGIONS)
		return VT_ERR_NOMEMORY;
	if (st->region == OTF2W_UNDEFINED_REF)
		return VT_ERR_IGNORE;
	struct vt_scl *sc = scl > VT_NOSCL ? vt_scl_lookup(scl) : NULL;
	if (sc)
		vt_callsite(sc, st->region,
			    s->depth ? s->f[s->depth - 1].region : OTF2W_UNDEFINED_REF);
	struct tr_region_frame *f = &s->f[s->depth++];
	f->region = st->region;
	f->recorded = !vt_off;
	if (f->recorded)
		tr_enter(t, tr_time(), st->region);
	return VT_OK;
}

static int vt_pop(struct tr_thread *t)
{
	struct tr_region_stack *s = vt_stack_of(t);
	if (s->depth == 0)
		return VT_ERR_BADREQUEST;
	struct tr_region_frame *f = &s->f[--s->depth];
	if (f->recorded)
		tr_leave(t, tr_time(), f->region);
	return VT_OK;
}

static int vt_take_thisloc(void)
{
	int scl = vt_thisloc_scl;
	vt_thisloc_scl = VT_NOSCL;
	return scl;
}

static int vt_begin_impl(int statehandle, int scl, int use_thisloc)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	if (use_thisloc) {
		int pending = vt_take_thisloc();
		if (scl <= VT_NOSCL)
			scl = pending;
	}
	struct vt_state *st = vt_state_lookup(statehandle);
	if (!st)
		rc = VT_ERR_BADSYMBOLID;
	else if ((rc = vt_scl_check(scl)) == VT_OK)
		rc = vt_push(t, st, scl);
	tr_thread_put(t);
	return rc;
}

static int vt_end_impl(int scl, int use_thisloc)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	if (use_thisloc) {
		int pending = vt_take_thisloc();
		if (scl <= VT_NOSCL)
			scl = pending;
	}
	rc = vt_scl_check(scl);
	if (rc == VT_OK)
		rc = vt_pop(t);
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_begin(int statehandle)
{
	return vt_begin_impl(statehandle, VT_NOSCL, 1);
}

TR_EXPORT int VT_beginl(int statehandle, int sclhandle)
{
	if (vt_scl_check(sclhandle))
		return VT_ERR_BADSCLID;
	return vt_begin_impl(statehandle, sclhandle, 1);
}

TR_EXPORT int VT_end(int statehandle)
{
	(void)statehandle;      /* obsolete in ITC: not checked */
	return vt_end_impl(VT_NOSCL, 1);
}

TR_EXPORT int VT_endl(int statehandle, int sclhandle)
{
	(void)statehandle;
	return vt_end_impl(sclhandle, 1);
}

TR_EXPORT int VT_enter(int statehandle, int sclhandle)
{
	return vt_begin_impl(statehandle, sclhandle, 1);
}

TR_EXPORT int VT_leave(int sclhandle)
{
	return vt_end_impl(sclhandle, 0);
}

/* DETAILED-STATES: keep the part of `name` before the (level+1)-th slash,
 * slashes in the kept part act as ':'; then normalize colons. Sets *trunc
 * when something was cut off. */
static void vt_detailed_name(const char *name, int level, char *out, size_t cap, int *trunc)
{
	char tmp[VT_NAME_MAX];
	size_t n = 0;
	int comps = 0;
	*trunc = 0;
	for (const char *p = name; *p; p++) {
		if (*p == '/') {
			if (comps >= level) {
				*trunc = 1;
				break;
			}
			comps++;
			if (n + 1 < sizeof(tmp))
				tmp[n++] = ':';
			continue;
		}
		if (n + 1 < sizeof(tmp))
			tmp[n++] = *p;
	}
	tmp[n] = '\0';
	vt_path_append(out, 0, cap, tmp, n);
}

TR_EXPORT int VT_enterstate(const char *name, int *statehandle, int *truncated)
{
	struct tr_thread *t;
	int rc = vt_get_args(&t, name && statehandle);
	if (rc)
		return rc;
	struct vt_state *st = *statehandle ? vt_state_lookup(*statehandle) : NULL;
	if (!st) {
		/* first call: define the state as DETAILED-STATES wants it */
		char path[VT_NAME_MAX];
		int trunc;
		int level = vt_detailed_states < 0 ? 0 : vt_detailed_states;
		vt_detailed_name(name, level, path, sizeof(path), &trunc);
		int idx = vt_state_define(path, trunc);
		if (idx < 0) {
			tr_thread_put(t);
			return idx;
		}
		*statehandle = VT_STATE_BASE + idx;
		if (truncated)
			*truncated = trunc;
		st = &vt_states[idx];
	}
	if (st->region == OTF2W_UNDEFINED_REF) {
		rc = VT_ERR_IGNORE;             /* "" = not logged */
	} else {
		struct tr_region_stack *s = vt_stack_of(t);
		int inside = 0;
		if (st->truncated)
			for (uint32_t i = 0; i < s->depth && !inside; i++)
				inside = s->f[i].region == st->region;
		/* a truncated state is not entered again while the thread is in it */
		rc = inside ? VT_ERR_IGNORE : vt_push(t, st, vt_take_thisloc());
	}
	tr_thread_put(t);
	return rc;
}

/* ---- life cycle --------------------------------------------------------------- */

TR_EXPORT int VT_initialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (atomic_load(&vt_finalized) || !tr_is_active())
		return VT_ERR_NOTINITIALIZED;
	return VT_OK;      /* the tracer initialized itself before main */
}

TR_EXPORT int VT_finalize(void)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	/* close the regions the calling thread left open, then refuse further calls */
	tr_region_stack_unwind(t, vt_stack_of(t), tr_time());
	atomic_store(&vt_finalized, 1);
	tr_thread_put(t);
	return VT_OK;
}

TR_EXPORT void VT_traceoff(void)
{
	struct tr_thread *t;
	if (vt_get(&t))
		return;
	if (!vt_off) {
		tr_measurement(t, 0);
		vt_off = 1;
	}
	tr_thread_put(t);
}

TR_EXPORT void VT_traceon(void)
{
	struct tr_thread *t;
	if (vt_get(&t))
		return;
	if (vt_off) {
		tr_measurement(t, 1);
		vt_off = 0;
	}
	tr_thread_put(t);
}

TR_EXPORT int VT_tracestate(int *state)
{
	if (!state)
		return VT_ERR_BADARG;
	if (atomic_load(&vt_finalized) || !tr_is_active()) {
		*state = 2;
		return VT_OK;
	}
	*state = vt_off ? 1 : 0;
	return VT_OK;
}

TR_EXPORT int VT_flush(void)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	t->in_record = 1;               /* the sampler must not write meanwhile */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otf2w_status st = t->w ? otf2w_evt_writer_flush(t->w) : OTF2W_E_INVALID_CALL;
	tr_rec_end(t);   /* (signals) a termination signal deferred meanwhile */
	if (st != OTF2W_OK)
		rc = VT_ERR_FLUSH;
	tr_thread_put(t);
	return rc;
}

/* ITC runs its periodic actions (sampling, counters) here. The core offers
 * no "sample now" hook, so this only checks the state: counters written with
 * VT_countval are recorded immediately anyway. */
TR_EXPORT int VT_wakeup(void)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	tr_wakeup(t);   /* modules record now (metrics: a Metric sample) */
	tr_thread_put(t);
	return VT_OK;
}

TR_EXPORT double VT_timestamp(void)
{
	uint64_t r = tr_clock_resolution();
	return r ? (double)tr_time() / (double)r : 0.0;
}

TR_EXPORT double VT_timestart(void)
{
	uint64_t r = tr_clock_resolution();
	return r ? (double)vt_start_time / (double)r : 0.0;
}

/* ---- process and thread identity ------------------------------------------------ */

TR_EXPORT int VT_getrank(int *rank)
{
	if (!rank)
		return VT_ERR_BADARG;
	if (atomic_load(&vt_finalized) || !tr_is_active())
		return VT_ERR_NOTINITIALIZED;
	*rank = tr_proc.rank >= 0 ? tr_proc.rank : 0;
	return VT_OK;
}

/* Threads get their location (and index) when they are first seen; ITC's
 * explicit registration is accepted and does not change the index. */
TR_EXPORT int VT_registerthread(int thindex)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	tr_thread_put(t);
	return thindex < -1 ? VT_ERR_BADINDEX : VT_OK;
}

TR_EXPORT int VT_registernamed(const char *threadname, int thindex)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	if (thindex < -1)
		rc = VT_ERR_BADINDEX;
	else if (threadname && threadname[0])
		tr_def_location_property(t->location, "VT_THREAD_NAME", threadname);
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_getthrank(int *thrank)
{
	struct tr_thread *t;
	if (!thrank)
		return VT_ERR_BADARG;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	*thrank = (int)t->index;
	tr_thread_put(t);
	return VT_OK;
}

/* ---- module: class groups at shut-down (and in every durability snapshot) --------- */

static void vt_mod_init(void)
{
	vt_start_time = tr_time();
}

/* Every class as a REGIONS group of its regions: at shut-down (fini), and
 * for one snapshot at every TRACER_DURABLE tick (durable_snapshot: dropped
 * after it, so the final groups are defined once, complete). */
static void vt_mod_fini(void)
{
	uint32_t nc = atomic_load(&vt_nclasses);
	uint32_t ns = atomic_load(&vt_nstates);
	if (!nc || !ns)
		return;
	uint64_t *members = tr_malloc(sizeof(*members) * ns);
	if (!members)
		return;
	for (uint32_t c = 0; c < nc; c++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < ns; i++) {
			if (vt_states[i].cls != c || vt_states[i].region == OTF2W_UNDEFINED_REF)
				continue;
			uint32_t k;
			for (k = 0; k < n && members[k] != vt_states[i].region; k++)
				;
			if (k == n)
				members[n++] = vt_states[i].region;
		}
		if (n)
			tr_def_group(vt_classes[c], OTF2W_GROUP_REGIONS, OTF2W_PARADIGM_USER,
				     OTF2W_GROUP_FLAG_NONE, n, members);
	}
	tr_free(members);
}

/* A thread of the parent may have held the definitions lock at fork(). */
static void vt_mod_fork_child(void)
{
	atomic_flag_clear(&vt_lock);
}

static const struct tr_module vt_module = {
	.name = "vt",
	.init = vt_mod_init,
	.fini = vt_mod_fini,
	.fork_child = vt_mod_fork_child,
	.durable_snapshot = vt_mod_fini,
};

/* TRACER_DETAILED_STATES: the level of the names' detail (0 by default) */
static const char *set_detailed_states(const char *v)
{
	long l;
	int b;
	if (tr_cfg_parse_int(v, 0, 1000, &l) == 0)
		vt_detailed_states = (int)l;
	else if (tr_cfg_parse_bool(v, &b) == 0)
		vt_detailed_states = b;
	else
		return "an integer level 0..1000 (or on/off)";
	return NULL;
}

static const struct tr_setting vt_settings[] = {
	TR_SETTING("TRACER_DETAILED_STATES", set_detailed_states, "0"),
};
TR_SETTINGS_TABLE(vt_table, "vt", vt_settings);

__attribute__((constructor(201))) static void vt_register(void)
{
	tr_module_register(&vt_module);
}
