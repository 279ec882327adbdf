/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs.c - the definition registry: the tr_def_* functions wrappers and
 * modules call (tracer.h) to define strings, regions, groups, ... of this
 * process. One def set (defset.h) under one registry lock (futex); never
 * on the hot path (wrappers define once and cache the id). What the
 * process does with it at the end (write, pack, save, unify) is in
 * defs_local.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "defs_int.h"
#include "proctree.h"

static const struct def *local_view(const struct defset *s, const struct def *d);

struct defset tr_local = { .view = local_view };
struct tr_lock tr_reg_lock = TR_LOCK_INIT;
TR_TLS int tr_reg_held;

/* Thread comms (tr_def_thread_comm): groups completed at shut-down. */
struct tr_tcomm {
	uint8_t paradigm;
	uint32_t comm, cl_group, cg_group;
	uint32_t name;
};
static struct tr_tcomm tr_tcomms[8];
static int tr_ntcomms;

struct tr_coff tr_coffs[TR_MAX_COFFS];
int tr_ncoffs;
uint32_t *tr_cc_map;
uint32_t tr_cc_nmap;
static uint64_t tr_reg_version;

/* The registry as before the provisional definitions (tr_defs_provisional_begin). */
static struct {
	int on;
	uint32_t n[TR_DEF_NCLASSES];
	uint32_t paradigm[TR_NPARADIGMS];
	uint32_t *map;
	uint32_t nmap;
} prov;

struct tr_lock *tr_defs_lock(void)
{
	return &tr_reg_lock;
}

/* ---- the registry API (tracer.h) ---- */

static uint32_t reg_insert(uint32_t cls, const uint64_t *v, uint32_t n)
{
	reg_lock();
	uint32_t id = tr_ds_insert(&tr_local, cls, v, n);
	reg_unlock();
	return id;
}

static uint32_t sref(const char *s)
{
	return s ? tr_def_string(s) : UNDEF;
}

static uint32_t sref_empty(const char *s)
{
	return tr_def_string(s ? s : "");
}

uint32_t tr_def_string(const char *s)
{
	if (!s)
		return UNDEF;
	reg_lock();
	uint32_t id = tr_ds_string(&tr_local, s);
	reg_unlock();
	return id;
}

uint32_t tr_def_region(const char *name, const char *canonical_name, const char *description,
		       uint8_t role, uint8_t paradigm, uint32_t flags,
		       const char *source_file, uint32_t begin_line, uint32_t end_line)
{
	uint64_t v[9] = { sref_empty(name), sref_empty(canonical_name ? canonical_name : name),
			  sref_empty(description), role, paradigm, flags, sref(source_file),
			  begin_line, end_line };
	reg_lock();
	tr_ds_use_paradigm(&tr_local, paradigm);
	uint32_t n0 = tr_local.n[TR_DEF_REGION];
	uint32_t id = tr_ds_insert(&tr_local, TR_DEF_REGION, v, 9);
	reg_unlock();
	if (id != UNDEF && id >= n0)
		tr_filter_region_defined(id, name ? name : "");
	return id;
}

uint32_t tr_def_attribute(const char *name, const char *description, uint8_t type)
{
	uint64_t v[3] = { sref_empty(name), sref_empty(description), type };
	return reg_insert(TR_DEF_ATTRIBUTE, v, 3);
}

uint32_t tr_def_source_code_location(const char *file, uint32_t line)
{
	uint64_t v[2] = { sref_empty(file), line };
	return reg_insert(TR_DEF_SOURCE_CODE_LOCATION, v, 2);
}

uint32_t tr_def_calling_context(uint32_t region, uint32_t scl, uint32_t parent)
{
	uint64_t v[3] = { region, scl, parent };
	return reg_insert(TR_DEF_CALLING_CONTEXT, v, 3);
}

uint32_t tr_def_interrupt_generator(const char *name, uint8_t mode, uint8_t base, int64_t exponent,
				    uint64_t period)
{
	uint64_t v[5] = { sref_empty(name), mode, base, (uint64_t)exponent, period };
	reg_lock();
	tr_ds_use_paradigm(&tr_local, OTF2W_PARADIGM_SAMPLING);
	reg_unlock();
	return reg_insert(TR_DEF_INTERRUPT_GENERATOR, v, 5);
}

uint32_t tr_def_metric_member(const char *name, const char *description, uint8_t metric_type,
			      uint8_t metric_mode, uint8_t value_type, uint8_t base, int64_t exponent,
			      const char *unit)
{
	uint64_t v[8] = { sref_empty(name), sref_empty(description), metric_type, metric_mode,
			  value_type, base, (uint64_t)exponent, sref_empty(unit) };
	return reg_insert(TR_DEF_METRIC_MEMBER, v, 8);
}

/* A definition of two values, then a count and that many 32-bit values
 * (at most 255, the records' limit). */
static uint32_t reg_insert_array(uint32_t cls, uint64_t a, uint64_t b, uint32_t n, const uint32_t *arr)
{
	if (n > 255)
		n = 255;
	uint64_t v[3 + 255];
	v[0] = a;
	v[1] = b;
	v[2] = n;
	for (uint32_t i = 0; i < n; i++)
		v[3 + i] = arr[i];
	return reg_insert(cls, v, 3 + n);
}

uint32_t tr_def_metric_class(uint32_t n, const uint32_t *members, uint8_t occurrence, uint8_t recorder_kind)
{
	return reg_insert_array(TR_DEF_METRIC, occurrence, recorder_kind, n, members);
}

void tr_def_metric_class_recorder(uint32_t metric_class, uint64_t location)
{
	uint64_t v[2] = { metric_class, location };
	reg_insert(TR_DEF_METRIC_CLASS_RECORDER, v, 2);
}

uint32_t tr_def_group(const char *name, uint8_t group_type, uint8_t paradigm, uint32_t flags,
		      uint32_t n, const uint64_t *members)
{
	uint64_t *v = tr_malloc((5 + (size_t)n) * 8);
	if (!v)
		return UNDEF;
	v[0] = sref_empty(name);
	v[1] = group_type;
	v[2] = paradigm;
	v[3] = flags;
	v[4] = n;
	for (uint32_t i = 0; i < n; i++)
		v[5 + i] = members[i];
	reg_lock();
	tr_ds_use_paradigm(&tr_local, paradigm);
	uint32_t id = tr_ds_insert(&tr_local, TR_DEF_GROUP, v, 5 + n);
	reg_unlock();
	tr_free(v);
	return id;
}

uint32_t tr_def_comm(const char *name, uint32_t group, uint32_t parent, uint32_t flags)
{
	uint64_t v[5] = { 0, sref_empty(name), group, parent, flags };
	return reg_insert(TR_DEF_COMM, v, 5);
}

uint32_t tr_def_inter_comm(const char *name, uint32_t group_a, uint32_t group_b, uint32_t common_comm,
			   uint32_t flags)
{
	uint64_t v[6] = { 1, sref_empty(name), group_a, group_b, common_comm, flags };
	return reg_insert(TR_DEF_COMM, v, 6);
}

uint32_t tr_def_rma_win(const char *name, uint32_t comm, uint32_t flags)
{
	uint64_t v[3] = { sref_empty(name), comm, flags };
	return reg_insert(TR_DEF_RMA_WIN, v, 3);
}

uint32_t tr_def_cart_dimension(const char *name, uint32_t size, uint8_t periodic)
{
	uint64_t v[3] = { sref_empty(name), size, periodic };
	return reg_insert(TR_DEF_CART_DIMENSION, v, 3);
}

uint32_t tr_def_cart_topology(const char *name, uint32_t comm, uint32_t ndims, const uint32_t *dims)
{
	return reg_insert_array(TR_DEF_CART_TOPOLOGY, sref_empty(name), comm, ndims, dims);
}

void tr_def_cart_coordinate(uint32_t topology, uint32_t rank, uint32_t ndims, const uint32_t *coords)
{
	reg_insert_array(TR_DEF_CART_COORDINATE, topology, rank, ndims, coords);
}

uint32_t tr_def_callsite(const char *file, uint32_t line, uint32_t entered_region, uint32_t left_region)
{
	uint64_t v[4] = { sref_empty(file), line, entered_region, left_region };
	return reg_insert(TR_DEF_CALLSITE, v, 4);
}

uint32_t tr_def_thread_comm(uint8_t paradigm, const char *name)
{
	uint32_t comm = UNDEF;
	reg_lock();
	for (int i = 0; i < tr_ntcomms; i++)
		if (tr_tcomms[i].paradigm == paradigm) {
			comm = tr_tcomms[i].comm;
			break;
		}
	if (comm == UNDEF && tr_ntcomms < (int)(sizeof(tr_tcomms) / sizeof(tr_tcomms[0]))) {
		struct tr_tcomm *tc = &tr_tcomms[tr_ntcomms];
		char buf[256];
		const char *pn = paradigm < TR_NPARADIGMS && tr_ds_paradigm_names[paradigm]
				 ? tr_ds_paradigm_names[paradigm] : "threads";
		tr_ds_use_paradigm(&tr_local, paradigm);
		tc->paradigm = paradigm;
		tc->name = tr_ds_string(&tr_local, name ? name : "Thread contingent");
		snprintf(buf, sizeof(buf), "%s locations", pn);
		/* Placeholders (completed with the members at shut-down); the
		 * marker value keeps them distinct from any user-defined group. */
		uint64_t cl[6] = { tr_ds_string(&tr_local, buf), OTF2W_GROUP_COMM_LOCATIONS, paradigm, 0, 1,
				   0xfffffffffffffff0ull };
		tc->cl_group = tr_ds_insert(&tr_local, TR_DEF_GROUP, cl, 6);
		snprintf(buf, sizeof(buf), "%s group", pn);
		uint64_t cg[6] = { tr_ds_string(&tr_local, buf), OTF2W_GROUP_COMM_GROUP, paradigm, 0, 1,
				   0xfffffffffffffff1ull };
		tc->cg_group = tr_ds_insert(&tr_local, TR_DEF_GROUP, cg, 6);
		uint64_t cv[5] = { 0, tc->name, tc->cg_group, UNDEF, 0 };
		tc->comm = tr_ds_insert(&tr_local, TR_DEF_COMM, cv, 5);
		comm = tc->comm;
		if (tc->cl_group != UNDEF && tc->cg_group != UNDEF && comm != UNDEF)
			tr_ntcomms++;
	}
	reg_unlock();
	return comm;
}

void tr_def_location_property(uint64_t location, const char *name, const char *value)
{
	uint32_t vs = sref_empty(value);
	uint64_t v[4] = { location, sref_empty(name), OTF2W_TYPE_STRING, vs };
	reg_insert(TR_DEF_LOCATION_PROPERTY, v, 4);
}

void tr_def_io_paradigm(uint8_t self, const char *identification, const char *name, uint8_t io_class,
			uint32_t flags, const char *version)
{
	uint64_t v[8] = { self, sref_empty(identification), sref_empty(name), io_class, flags,
			  version ? 1 : 0, version ? OTF2W_TYPE_STRING : 0, version ? sref_empty(version) : 0 };
	reg_insert(TR_DEF_IO_PARADIGM, v, 8);
}

uint32_t tr_def_io_file(const char *name, int directory)
{
	uint64_t v[3] = { directory ? 1 : 0, sref_empty(name), sref_empty(tr_proc.hostname) };
	return reg_insert(TR_DEF_IO_FILE, v, 3);
}

uint32_t tr_def_io_handle(uint32_t name_string, uint32_t file, uint8_t io_paradigm, uint32_t flags,
			  uint32_t comm, uint32_t parent, uint64_t unique)
{
	uint64_t v[7] = { name_string, file, io_paradigm, flags, comm, parent, unique };
	return reg_insert(TR_DEF_IO_HANDLE, v, 7);
}

void tr_def_io_pre_created_handle_state(uint32_t handle, uint8_t mode, uint32_t status_flags)
{
	uint64_t v[3] = { handle, mode, status_flags };
	reg_insert(TR_DEF_IO_PRE_CREATED_HANDLE_STATE, v, 3);
}

void tr_def_clock_offset(uint64_t time, int64_t offset, double stddev)
{
	reg_lock();
	/* times must be strictly increasing for the reader */
	if (tr_ncoffs < (int)(sizeof(tr_coffs) / sizeof(tr_coffs[0])) &&
	    (tr_ncoffs == 0 || time > tr_coffs[tr_ncoffs - 1].time)) {
		tr_coffs[tr_ncoffs].time = time;
		tr_coffs[tr_ncoffs].offset = offset;
		tr_coffs[tr_ncoffs].stddev = stddev;
		tr_ncoffs++;
	}
	reg_unlock();
}

uint32_t tr_defs_count(int cls)
{
	return cls >= 0 && cls < TR_DEF_NCLASSES ? tr_local.n[cls] : 0;
}

uint32_t tr_def_calling_context_new(uint32_t region, uint32_t scl, uint32_t parent)
{
	uint64_t v[3] = { region, scl, parent };
	reg_lock();
	uint32_t id = tr_local.n[TR_DEF_CALLING_CONTEXT];
	if (tr_ds_append(&tr_local, TR_DEF_CALLING_CONTEXT, v, 3))
		id = UNDEF;
	reg_unlock();
	return id;
}

uint32_t tr_defs_cc_mapped(void)
{
	reg_lock();
	uint32_t n = tr_cc_nmap;
	reg_unlock();
	return n;
}

void tr_def_calling_context_map(const uint32_t *map, uint32_t n)
{
	uint32_t *m = n ? tr_malloc(sizeof(*m) * n) : NULL;
	if (n && !m)
		return;
	if (n)
		memcpy(m, map, sizeof(*m) * n);
	reg_lock();
	if (!prov.on || tr_cc_map != prov.map)
		tr_free(tr_cc_map);   /* (the registry's own map is kept for after the snapshot) */
	tr_cc_map = m;
	tr_cc_nmap = n;
	if (!prov.on)
		__atomic_store_n(&tr_reg_version, tr_reg_version + 1, __ATOMIC_RELEASE);
	reg_unlock();
}

/* ---- provisional definitions (TRACER_DURABLE snapshots) ---- */

/* Begin: the calling thread (the tick's) holds the registry until
 * tr_defs_provisional_end; what is defined meanwhile (modules'
 * durable_snapshot hooks) is written and saved with the snapshot, then
 * dropped: the registry is as before, ids included. */
void tr_defs_provisional_begin(void)
{
	tr_lock(&tr_reg_lock);
	tr_reg_held = 1;
	prov.on = 1;
	memcpy(prov.n, tr_local.n, sizeof(prov.n));
	memcpy(prov.paradigm, tr_local.paradigm_name, sizeof(prov.paradigm));
	prov.map = tr_cc_map;
	prov.nmap = tr_cc_nmap;
}

void tr_defs_provisional_end(void)
{
	tr_ds_truncate(&tr_local, prov.n);
	memcpy(tr_local.paradigm_name, prov.paradigm, sizeof(prov.paradigm));
	if (tr_cc_map != prov.map)
		tr_free(tr_cc_map);
	tr_cc_map = prov.map;
	tr_cc_nmap = prov.nmap;
	prov.on = 0;
	tr_reg_held = 0;
	tr_unlock(&tr_reg_lock);
}

/* Changes of the registry that keep the counts (a new calling-context map). */
uint64_t tr_defs_version(void)
{
	return tr_reg_version;
}

/* Every change of the registry so far (any thread, no lock): equal to an
 * earlier value = nothing was defined in between. */
uint64_t tr_defs_generation(void)
{
	return __atomic_load_n(&tr_local.changes, __ATOMIC_ACQUIRE) + __atomic_load_n(&tr_reg_version, __ATOMIC_ACQUIRE);
}

/* ---- the process ---- */

uint32_t tr_sid_host, tr_sid_gname;

/* This process's location group name. */
static void group_name(char *buf, size_t n)
{
	if (tr_proc.rank >= 0)
		snprintf(buf, n, "MPI Rank %d", tr_proc.rank);
	else if (tr_tree.gname[0])
		snprintf(buf, n, "%s", tr_tree.gname);
	else
		snprintf(buf, n, "Process %d", (int)tr_self_pid());
}

/* Strings needed at shut-down are registered early, so that the crash path
 * allocates nothing. */
void tr_defs_init(void)
{
	char buf[300];
	tr_defs_set_error_log(tr_log_error);
	reg_lock();
	for (int i = 0; i < TR_NPARADIGMS; i++)
		tr_local.paradigm_name[i] = UNDEF;
	tr_ds_string(&tr_local, "");
	tr_ds_use_paradigm(&tr_local, OTF2W_PARADIGM_MEASUREMENT_SYSTEM);
	tr_ds_string(&tr_local, "machine");
	tr_ds_string(&tr_local, "node");
	tr_sid_host = tr_ds_string(&tr_local, tr_proc.hostname);
	tr_ds_string(&tr_local, "MPI Rank (not in this archive)");
	tr_ds_string(&tr_local, "Master thread");
	tr_ds_string(&tr_local, "Thread");
	group_name(buf, sizeof(buf));
	tr_sid_gname = tr_ds_string(&tr_local, buf);
	reg_unlock();
}

/* After tr_set_rank / fork: the location group name. */
void tr_defs_process_renamed(void)
{
	char buf[300];
	group_name(buf, sizeof(buf));
	tr_sid_gname = tr_def_string(buf);
}

/* ---- thread comms ---- */

/* defs_int.h */
void tr_defs_complete_thread_comms(const struct tr_procinfo *p)
{
	for (int i = 0; i < tr_ntcomms; i++) {
		struct tr_tcomm *tc = &tr_tcomms[i];
		uint32_t n = p->nlocs;
		uint64_t *v = tr_malloc((5 + (size_t)n) * 8);
		if (!v)
			return;
		const struct def *cl = tr_local.items[TR_DEF_GROUP][tc->cl_group];
		memcpy(v, cl->v, 5 * 8);
		v[4] = n;
		for (uint32_t k = 0; k < n; k++)
			v[5 + k] = p->locs[k].id;
		tr_ds_replace(&tr_local, TR_DEF_GROUP, tc->cl_group, v, 5 + n);
		const struct def *cg = tr_local.items[TR_DEF_GROUP][tc->cg_group];
		memcpy(v, cg->v, 5 * 8);
		v[4] = n;
		for (uint32_t k = 0; k < n; k++)
			v[5 + k] = k;
		tr_ds_replace(&tr_local, TR_DEF_GROUP, tc->cg_group, v, 5 + n);
		tr_free(v);
	}
}

/* The view of the local set (defset.h): its thread comm groups, completed
 * with the locations of s->procs[0] without touching the registry (also usable from the crash
 * path: static scratch, no malloc, caller serialises). */
static struct {
	struct def d;
	uint64_t v[5 + 4096];
} tr_scratch TR_BIG_BSS;

static const struct def *local_view(const struct defset *s, const struct def *d)
{
	if (s != &tr_local || d->cls != TR_DEF_GROUP || s->nprocs < 1)
		return d;
	for (int i = 0; i < tr_ntcomms; i++) {
		int cl = d->id == tr_tcomms[i].cl_group, cg = d->id == tr_tcomms[i].cg_group;
		if (!cl && !cg)
			continue;
		const struct tr_procinfo *p = &s->procs[0];
		uint32_t n = p->nlocs < 4096 ? p->nlocs : 4096;
		tr_scratch.d = *d;
		memcpy(tr_scratch.v, d->v, 5 * 8);
		tr_scratch.v[4] = n;
		for (uint32_t k = 0; k < n; k++)
			tr_scratch.v[5 + k] = cl ? p->locs[k].id : k;
		tr_scratch.d.len = 5 + n;
		return &tr_scratch.d;
	}
	return d;
}
