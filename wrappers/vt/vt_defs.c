/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_defs.c - the VT_* definition calls (vt.c has the design and the
 * handles): classes, functions and symbols (states), source code
 * locations, counters and their values.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_int.h"

TR_EXPORT int VT_classdef(const char *classname, int *classhandle)
{
	struct tr_thread *t;
	int rc = vt_get_args(&t, classname && classhandle);
	if (rc)
		return rc;
	vt_init_classes();
	char path[VT_NAME_MAX];
	vt_path_append(path, 0, sizeof(path), classname, strlen(classname));
	int c = vt_class_find(path[0] ? path : "Application");
	tr_thread_put(t);
	if (c < 0)
		return VT_ERR_NOMEMORY;
	*classhandle = c + 1;
	return VT_OK;
}

/* Full normalized path of symbol `sym` in class handle `classhandle`. */
static int vt_full_path(const char *sym, int classhandle, char *path, size_t cap)
{
	size_t len = 0;
	path[0] = '\0';
	if (classhandle > VT_NOCLASS) {
		uint32_t n = atomic_load_explicit(&vt_nclasses, memory_order_acquire);
		if ((uint32_t)classhandle > n)
			return VT_ERR_BADARG;
		const char *c = vt_classes[classhandle - 1];
		len = vt_path_append(path, 0, cap, c, strlen(c));
	}
	len = vt_path_append(path, len, cap, sym, strlen(sym));
	if (len == 0)
		return VT_ERR_BADARG;
	return VT_OK;
}

TR_EXPORT int VT_funcdef(const char *symname, int classhandle, int *statehandle)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	vt_init_classes();
	char path[VT_NAME_MAX];
	if (!symname || !statehandle)
		rc = VT_ERR_BADARG;
	else
		rc = vt_full_path(symname, classhandle, path, sizeof(path));
	if (rc == VT_OK) {
		int idx = vt_state_define(path, 0);
		if (idx < 0)
			rc = idx;
		else
			*statehandle = VT_STATE_BASE + idx;
	}
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_symdef(int statehandle, const char *symname, const char *activity)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	vt_init_classes();
	char path[VT_NAME_MAX];
	size_t len = 0;
	if (!symname || (statehandle >= VT_STATE_BASE && statehandle < VT_STATE_BASE + VT_MAX_STATES)) {
		tr_thread_put(t);
		return VT_ERR_BADARG;
	}
	if (activity)
		len = vt_path_append(path, 0, sizeof(path), activity, strlen(activity));
	else
		path[0] = '\0';
	len = vt_path_append(path, len, sizeof(path), symname, strlen(symname));
	int idx = len ? vt_state_define(path, 0) : VT_ERR_BADARG;
	if (idx < 0) {
		tr_thread_put(t);
		return idx;
	}
	rc = VT_OK;
	uint32_t h = ((uint32_t)statehandle * 2654435761u) & (VT_SYMDEF_SLOTS - 1);
	vt_lock_take();
	uint32_t k;
	for (k = 0; k < VT_SYMDEF_SLOTS; k++) {
		struct vt_symslot *s = &vt_symdefs[(h + k) & (VT_SYMDEF_SLOTS - 1)];
		if (!atomic_load_explicit(&s->used, memory_order_relaxed)) {
			s->key = statehandle;
			s->state = (uint32_t)idx;
			atomic_store_explicit(&s->used, 1, memory_order_release);
			break;
		}
		if (s->key == statehandle) {
			/* redefinition: ITC keeps the first one */
			break;
		}
	}
	vt_lock_drop();
	if (k == VT_SYMDEF_SLOTS)
		rc = VT_ERR_NOMEMORY;
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_scldef(const char *file, int line_nr, int *sclhandle)
{
	struct tr_thread *t;
	int rc = vt_get_args(&t, file && sclhandle && line_nr >= 0);
	if (rc)
		return rc;
	uint32_t def = tr_def_source_code_location(file, (uint32_t)line_nr);
	char *copy = tr_strdup(file);
	vt_lock_take();
	uint32_t n = atomic_load_explicit(&vt_nscls, memory_order_relaxed);
	uint32_t i;
	for (i = 0; i < n; i++)
		if (vt_scls[i].line == line_nr && strcmp(vt_scls[i].file, file) == 0)
			break;
	if (i == n && n < VT_MAX_SCLS && copy) {
		struct vt_scl *s = &vt_scls[n];
		s->def = def;
		s->line = line_nr;
		s->file = copy;
		copy = NULL;
		for (int k = 0; k < VT_SCL_CACHE; k++)
			atomic_store_explicit(&s->cache[k], UINT64_MAX, memory_order_relaxed);
		atomic_store_explicit(&vt_nscls, n + 1, memory_order_release);
	}
	vt_lock_drop();
	tr_free(copy);
	if (i == n && atomic_load_explicit(&vt_nscls, memory_order_acquire) == n)
		rc = VT_ERR_NOMEMORY;
	else
		*sclhandle = (int)i + 1;
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_thisloc(int sclhandle)
{
	if (atomic_load_explicit(&vt_finalized, memory_order_relaxed) || !tr_is_active())
		return VT_ERR_NOTINITIALIZED;
	if (vt_scl_check(sclhandle))
		return VT_ERR_BADSCLID;
	vt_thisloc_scl = sclhandle;
	return VT_OK;
}

/* ---- counters ----------------------------------------------------------------- */

TR_EXPORT int VT_countdef(const char *name, int classhandle, int genre, int scope,
			  const void *bounds, const char *unit, int *counterhandle)
{
	(void)bounds;
	(void)scope;            /* recorded per thread in every scope */
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	vt_init_classes();
	int dt = genre & VT_COUNT_DATA;
	char path[VT_NAME_MAX];
	if (!name || !counterhandle || dt == 3)
		rc = VT_ERR_BADARG;
	else if (classhandle <= VT_NOCLASS)
		strcpy(path, "Application");
	else if ((uint32_t)classhandle > atomic_load(&vt_nclasses))
		rc = VT_ERR_BADARG;
	else
		snprintf(path, sizeof(path), "%s", vt_classes[classhandle - 1]);
	if (rc) {
		tr_thread_put(t);
		return rc;
	}
	uint8_t mode;
	if (genre & VT_COUNT_RATE) {
		mode = OTF2W_METRIC_ACCUMULATED_START;
	} else {
		switch (genre & VT_COUNT_VALID) {
		case VT_COUNT_VALID_BEFORE: mode = OTF2W_METRIC_ABSOLUTE_LAST; break;
		case VT_COUNT_VALID_AFTER:  mode = OTF2W_METRIC_ABSOLUTE_NEXT; break;
		default:                    mode = OTF2W_METRIC_ABSOLUTE_POINT; break;
		}
	}
	uint8_t vtype = dt == VT_COUNT_FLOAT ? OTF2W_TYPE_DOUBLE : OTF2W_TYPE_INT64;
	uint32_t member = tr_def_metric_member(name, path, OTF2W_METRIC_TYPE_USER, mode, vtype,
					       OTF2W_BASE_DECIMAL, 0, unit ? unit : "");
	uint32_t mc = tr_def_metric_class(1, &member, OTF2W_METRIC_ASYNCHRONOUS, OTF2W_RECORDER_ABSTRACT);
	vt_lock_take();
	uint32_t n = atomic_load_explicit(&vt_ncounters, memory_order_relaxed);
	if (n >= VT_MAX_COUNTERS || mc == OTF2W_UNDEFINED_REF) {
		rc = VT_ERR_NOMEMORY;
	} else {
		vt_counters[n].metric_class = mc;
		vt_counters[n].datatype = dt;
		atomic_store_explicit(&vt_ncounters, n + 1, memory_order_release);
		*counterhandle = (int)n + 1;
	}
	vt_lock_drop();
	tr_thread_put(t);
	return rc;
}

TR_EXPORT int VT_countval(int ncounters, int *handles, void *values)
{
	struct tr_thread *t;
	int rc = vt_get(&t);
	if (rc)
		return rc;
	uint32_t n = atomic_load_explicit(&vt_ncounters, memory_order_acquire);
	if (ncounters < 0 || (ncounters > 0 && (!handles || !values)))
		rc = VT_ERR_BADARG;
	for (int i = 0; rc == VT_OK && i < ncounters; i++)
		if (handles[i] < 1 || (uint32_t)handles[i] > n)
			rc = VT_ERR_BADARG;
	if (rc == VT_OK && !vt_off) {
		uint64_t now = tr_time();
		const unsigned char *p = values;
		for (int i = 0; i < ncounters; i++, p += 8) {
			struct vt_counter *c = &vt_counters[handles[i] - 1];
			otf2w_metric_value v;
			uint8_t type;
			if (c->datatype == VT_COUNT_INTEGER) {
				uint32_t w[2];
				memcpy(w, p, 8);
				v.signed_int = (int64_t)((uint64_t)w[0] << 32 | w[1]);
				type = OTF2W_TYPE_INT64;
			} else if (c->datatype == VT_COUNT_FLOAT) {
				memcpy(&v.floating_point, p, 8);
				type = OTF2W_TYPE_DOUBLE;
			} else {
				memcpy(&v.signed_int, p, 8);
				type = OTF2W_TYPE_INT64;
			}
			if (tr_rec_begin(t)) {
				tr_evt_status(t, otf2w_evt_metric(t->w, NULL, now, c->metric_class,
								  1, &type, &v));
				tr_rec_end(t);
			}
		}
	}
	tr_thread_put(t);
	return rc;
}
