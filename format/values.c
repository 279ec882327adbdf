/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * values.c - attribute lists, id maps (mapping tables) and the attic values
 * the generated record writers need (otf2-format.md §5.2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"

/* ---- attribute lists ------------------------------------------------------------ */

otf2w_attr_list *otf2w_attr_list_new(void)
{
	return otf2w_sys.calloc(1, sizeof(otf2w_attr_list));
}

void otf2w_attr_list_delete(otf2w_attr_list *al)
{
	otf2w_sys.free(al);
}

void otf2w_attr_list_clear(otf2w_attr_list *al)
{
	if (al)
		al->n = 0;
}

uint32_t otf2w_attr_list_count(const otf2w_attr_list *al)
{
	return al ? al->n : 0;
}

otf2w_status otf2w_attr_list_add(otf2w_attr_list *al, uint32_t attribute, uint8_t type, uint64_t value)
{
	if (!al || attribute == OTF2W_UNDEFINED_UINT32)
		return OTF2W_E_INVALID_ARGUMENT;
	for (uint32_t i = 0; i < al->n; i++)
		if (al->e[i].id == attribute)
			return OTF2W_E_INVALID_ARGUMENT;
	if (al->n == OTF2W_ATTR_MAX)
		return OTF2W_E_RECORD_TOO_LARGE;
	al->e[al->n].id = attribute;
	al->e[al->n].type = type;
	al->e[al->n].value = value;
	al->n++;
	return OTF2W_OK;
}

otf2w_status otf2w_attr_list_add_uint64(otf2w_attr_list *al, uint32_t attribute, uint64_t v)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_UINT64, v);
}

otf2w_status otf2w_attr_list_add_int64(otf2w_attr_list *al, uint32_t attribute, int64_t v)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_INT64, (uint64_t)v);
}

otf2w_status otf2w_attr_list_add_double(otf2w_attr_list *al, uint32_t attribute, double v)
{
	uint64_t x;
	memcpy(&x, &v, 8);
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_DOUBLE, x);
}

otf2w_status otf2w_attr_list_add_string(otf2w_attr_list *al, uint32_t attribute, uint32_t string_id)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_STRING, string_id);
}

/* ---- id maps ------------------------------------------------------------------------ */

otf2w_id_map *otf2w_id_map_new(int sparse, uint64_t capacity_hint)
{
	otf2w_id_map *m = otf2w_sys.calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->sparse = sparse != 0;
	m->cap = capacity_hint ? capacity_hint : 8;
	m->v = otf2w_sys.malloc(m->cap * (m->sparse ? 2 : 1) * sizeof(uint64_t));
	if (!m->v) {
		otf2w_sys.free(m);
		return NULL;
	}
	return m;
}

void otf2w_id_map_delete(otf2w_id_map *m)
{
	if (m) {
		otf2w_sys.free(m->v);
		otf2w_sys.free(m);
	}
}

otf2w_status otf2w_id_map_add(otf2w_id_map *m, uint64_t local_id, uint64_t global_id)
{
	if (!m)
		return OTF2W_E_INVALID_ARGUMENT;
	if (!m->sparse && local_id != m->n) {
		/* not dense any more: convert to (local, global) pairs */
		uint64_t *nv = otf2w_sys.malloc((m->cap > m->n ? m->cap : m->n + 1) * 2 * sizeof(uint64_t));
		if (!nv)
			return OTF2W_E_NO_MEMORY;
		for (uint64_t i = 0; i < m->n; i++) {
			nv[2 * i] = i;
			nv[2 * i + 1] = m->v[i];
		}
		otf2w_sys.free(m->v);
		m->v = nv;
		m->sparse = 1;
		if (m->cap <= m->n)
			m->cap = m->n + 1;
	}
	if (m->n == m->cap) {
		uint64_t nc = 2 * m->cap;
		uint64_t *nv = otf2w_sys.realloc(m->v, nc * (m->sparse ? 2 : 1) * sizeof(uint64_t));
		if (!nv)
			return OTF2W_E_NO_MEMORY;
		m->v = nv;
		m->cap = nc;
	}
	if (m->sparse) {
		m->v[2 * m->n] = local_id;
		m->v[2 * m->n + 1] = global_id;
	} else {
		m->v[m->n] = global_id;
	}
	m->n++;
	return OTF2W_OK;
}

size_t otf2w__idmap_size(const otf2w_id_map *m)
{
	return 9 + 1 + (size_t)m->n * (m->sparse ? 18 : 9);
}

uint8_t *otf2w__put_idmap(uint8_t *p, const otf2w_id_map *m)
{
	p = otf2w__put_cu64(p, m->n);
	*p++ = (uint8_t)m->sparse;
	if (m->sparse)
		for (uint64_t i = 0; i < 2 * m->n; i++)
			p = otf2w__put_cu64(p, m->v[i]);
	else
		for (uint64_t i = 0; i < m->n; i++)
			p = otf2w__put_cu64(p, m->v[i]);
	return p;
}

/* ---- attic values (otf2-format.md §5.2) ---------------------------------------- */

uint8_t otf2w__region_type(uint8_t paradigm, uint8_t role, uint32_t flags)
{
	int dyn = (flags & OTF2W_REGION_FLAG_DYNAMIC) != 0;
	int phase = (flags & OTF2W_REGION_FLAG_PHASE) != 0;

	switch (paradigm) {
	case OTF2W_PARADIGM_UNKNOWN:
	case OTF2W_PARADIGM_COMPILER:
		return role == OTF2W_ROLE_FUNCTION ? 1 : 0;
	case OTF2W_PARADIGM_USER:
		switch (role) {
		case OTF2W_ROLE_FUNCTION: return dyn ? 31 : 3;
		case OTF2W_ROLE_FILE_IO: return 4;
		case OTF2W_ROLE_LOOP:
			if (dyn)
				return phase ? 32 : 30;
			return phase ? 0 : 2;
		case OTF2W_ROLE_CODE:
			if (dyn)
				return phase ? 29 : 28;
			return phase ? 27 : 1;
		default: return 0;
		}
	case OTF2W_PARADIGM_OPENMP: {
		/* role -> OMP region type */
		static const uint8_t omp[][2] = {
			{ OTF2W_ROLE_PARALLEL, 5 }, { OTF2W_ROLE_LOOP, 6 },
			{ OTF2W_ROLE_SECTIONS, 7 }, { OTF2W_ROLE_SECTION, 8 },
			{ OTF2W_ROLE_WORKSHARE, 9 }, { OTF2W_ROLE_SINGLE, 10 },
			{ OTF2W_ROLE_MASTER, 11 }, { OTF2W_ROLE_CRITICAL, 12 },
			{ OTF2W_ROLE_ATOMIC, 13 }, { OTF2W_ROLE_BARRIER, 14 },
			{ OTF2W_ROLE_IMPLICIT_BARRIER, 15 }, { OTF2W_ROLE_FLUSH, 16 },
			{ OTF2W_ROLE_CRITICAL_SBLOCK, 17 }, { OTF2W_ROLE_SINGLE_SBLOCK, 18 },
			{ OTF2W_ROLE_WRAPPER, 19 }, { OTF2W_ROLE_TASK, 20 },
			{ OTF2W_ROLE_TASK_WAIT, 21 }, { OTF2W_ROLE_TASK_CREATE, 33 },
			{ OTF2W_ROLE_ORDERED, 34 }, { OTF2W_ROLE_ORDERED_SBLOCK, 35 },
		};
		for (size_t i = 0; i < sizeof(omp) / sizeof(omp[0]); i++)
			if (omp[i][0] == role)
				return omp[i][1];
		return 0;
	}
	case OTF2W_PARADIGM_MPI:
		switch (role) {
		case OTF2W_ROLE_BARRIER: return 22;
		case OTF2W_ROLE_COLL_ONE2ALL: return 23;
		case OTF2W_ROLE_COLL_ALL2ONE: return 24;
		case OTF2W_ROLE_COLL_ALL2ALL: return 25;
		case OTF2W_ROLE_COLL_OTHER: return 26;
		default: return 0;
		}
	default:
		return 0;
	}
}

uint8_t otf2w__group_pre12(uint8_t type, uint8_t paradigm, uint32_t flags)
{
	if (flags != OTF2W_GROUP_FLAG_NONE)
		return 0;
	if (paradigm == OTF2W_PARADIGM_UNKNOWN) {
		switch (type) {
		case OTF2W_GROUP_LOCATIONS: return 1;
		case OTF2W_GROUP_REGIONS: return 2;
		case OTF2W_GROUP_METRIC: return 3;
		default: return 0;
		}
	}
	if (paradigm == OTF2W_PARADIGM_MPI) {
		switch (type) {
		case OTF2W_GROUP_COMM_LOCATIONS: return 6;
		case OTF2W_GROUP_COMM_GROUP: return 4;
		case OTF2W_GROUP_COMM_SELF: return 5;
		default: return 0;
		}
	}
	return 0;
}
