/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defset.c - the definition set (defset.h): schemas of the classes, content
 * hashing, insertion with deduplication, paradigm names. No process state.
 */
#include <stdlib.h>
#include <string.h>
#include "defset.h"

/* ---- schemas ---- */

/* tr_schema[], tr_schema_intercomm: generated from format/records.tab
 * (preload/defs/gen_defs.py) */
#define TR_DEFS_GEN_SCHEMA
#include "defs_gen.h"

/* Dependency order for writing and merging. */
const int tr_ds_order[] = {
	TR_DEF_ATTRIBUTE, TR_DEF_REGION, TR_DEF_SOURCE_CODE_LOCATION, TR_DEF_CALLING_CONTEXT,
	TR_DEF_CALLING_CONTEXT_PROPERTY, TR_DEF_INTERRUPT_GENERATOR, TR_DEF_PARAMETER,
	TR_DEF_METRIC_MEMBER, TR_DEF_METRIC, TR_DEF_METRIC_CLASS_RECORDER, TR_DEF_GROUP,
	TR_DEF_COMM, TR_DEF_RMA_WIN, TR_DEF_CART_DIMENSION, TR_DEF_CART_TOPOLOGY,
	TR_DEF_CART_COORDINATE, TR_DEF_CALLSITE, TR_DEF_CALLPATH, TR_DEF_LOCATION_PROPERTY,
	TR_DEF_LOCATION_GROUP_PROPERTY,
	TR_DEF_IO_PARADIGM, TR_DEF_IO_FILE, TR_DEF_IO_FILE_PROPERTY, TR_DEF_IO_HANDLE,
	TR_DEF_IO_PRE_CREATED_HANDLE_STATE,
};
const size_t tr_ds_norder = sizeof(tr_ds_order) / sizeof(tr_ds_order[0]);

int tr_ds_kind_class(char k)
{
	switch (k) {
	case 's': return TR_DEF_STRING;
	case 'r': return TR_DEF_REGION;
	case 'g': return TR_DEF_GROUP;
	case 'c': return TR_DEF_COMM;
	case 'l': return TR_DEF_SOURCE_CODE_LOCATION;
	case 'x': return TR_DEF_CALLING_CONTEXT;
	case 'm': return TR_DEF_METRIC_MEMBER;
	case 'M': return TR_DEF_METRIC;
	case 'd': return TR_DEF_CART_DIMENSION;
	case 't': return TR_DEF_CART_TOPOLOGY;
	case 'p': return TR_DEF_CALLPATH;
	case 'f': return TR_DEF_IO_FILE;
	case 'h': return TR_DEF_IO_HANDLE;
	default: return -1;
	}
}

/* Class of a reference-typed attribute value, -1: plain value. */
int tr_ds_type_class(uint64_t type)
{
	switch (type) {
	case OTF2W_TYPE_STRING: return TR_DEF_STRING;
	case OTF2W_TYPE_ATTRIBUTE: return TR_DEF_ATTRIBUTE;
	case OTF2W_TYPE_REGION: return TR_DEF_REGION;
	case OTF2W_TYPE_GROUP: return TR_DEF_GROUP;
	case OTF2W_TYPE_METRIC: return TR_DEF_METRIC;
	case OTF2W_TYPE_COMM: return TR_DEF_COMM;
	case OTF2W_TYPE_PARAMETER: return TR_DEF_PARAMETER;
	case OTF2W_TYPE_RMA_WIN: return TR_DEF_RMA_WIN;
	case OTF2W_TYPE_SOURCE_CODE_LOCATION: return TR_DEF_SOURCE_CODE_LOCATION;
	case OTF2W_TYPE_CALLING_CONTEXT: return TR_DEF_CALLING_CONTEXT;
	case OTF2W_TYPE_INTERRUPT_GENERATOR: return TR_DEF_INTERRUPT_GENERATOR;
	case OTF2W_TYPE_IO_FILE: return TR_DEF_IO_FILE;
	case OTF2W_TYPE_IO_HANDLE: return TR_DEF_IO_HANDLE;
	default: return -1;
	}
}

const char *tr_ds_schema_of(const struct def *d)
{
	if (d->cls == TR_DEF_COMM && d->len > 0 && d->v[0] == 1)
		return tr_schema_intercomm;
	return tr_schema[d->cls];
}

/* Kind of value i of d ('v' for plain). */
char tr_ds_kind_at(const struct def *d, const char *sch, uint32_t i)
{
	const char *star = strchr(sch, '*');
	uint32_t nfix = star ? (uint32_t)(star - sch) : (uint32_t)strlen(sch);
	if (i < nfix)
		return sch[i];
	return star ? star[1] : 'v';
}

/* ---- hashing ---- */

/* 8 bytes at a time (a definition's values are words; a string's tail is
 * read byte by byte): in memory only, never stored. */
uint32_t tr_ds_hash(uint32_t cls, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)cls << 32) ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	uint64_t t = 0;
	for (size_t k = 0; i < n; i++, k += 8)
		t |= (uint64_t)b[i] << k;
	h = (h ^ t) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

size_t tr_ds_def_bytes(uint32_t cls, uint32_t len)
{
	return cls == TR_DEF_STRING ? len : (size_t)len * 8;
}

static int grow_buckets(struct defset *s)
{
	uint32_t nb = s->nbuckets ? s->nbuckets * 4 : 1024;
	struct def **b = otf2w_sys.calloc(nb, sizeof(*b));
	if (!b)
		return -1;
	for (uint32_t i = 0; i < s->nbuckets; i++) {
		struct def *d = s->buckets[i], *next;
		for (; d; d = next) {
			next = d->hnext;
			d->hnext = b[d->hash & (nb - 1)];
			b[d->hash & (nb - 1)] = d;
		}
	}
	otf2w_sys.free(s->buckets);
	s->buckets = b;
	s->nbuckets = nb;
	return 0;
}

struct def *tr_ds_find(const struct defset *s, uint32_t cls, const void *data, uint32_t len, uint32_t h)
{
	if (!s->nbuckets)
		return NULL;
	for (struct def *d = s->buckets[h & (s->nbuckets - 1)]; d; d = d->hnext)
		if (d->hash == h && d->cls == cls && d->len == len && !memcmp(d->v, data, tr_ds_def_bytes(cls, len)))
			return d;
	return NULL;
}

/* Insert (dedup) a definition; returns its id or UNDEF on allocation failure. */
uint32_t tr_ds_insert(struct defset *s, uint32_t cls, const void *data, uint32_t len)
{
	size_t nb = tr_ds_def_bytes(cls, len);
	uint32_t h = tr_ds_hash(cls, data, nb);
	struct def *d = tr_ds_find(s, cls, data, len, h);
	if (d)
		return d->id;
	if (s->count + 1 > s->nbuckets * 2 && grow_buckets(s))
		return UNDEF;
	if (s->n[cls] == s->cap[cls]) {
		uint32_t nc = s->cap[cls] ? s->cap[cls] * 2 : 64;
		struct def **ni = otf2w_sys.realloc(s->items[cls], nc * sizeof(*ni));
		if (!ni)
			return UNDEF;
		s->items[cls] = ni;
		s->cap[cls] = nc;
	}
	d = otf2w_sys.malloc(sizeof(*d) + ((nb + 7) & ~(size_t)7));
	if (!d)
		return UNDEF;
	d->cls = cls;
	d->len = len;
	d->hash = h;
	d->id = s->n[cls];
	memcpy(d->v, data, nb);
	d->hnext = s->buckets[h & (s->nbuckets - 1)];
	s->buckets[h & (s->nbuckets - 1)] = d;
	s->items[cls][s->n[cls]++] = d;
	s->count++;
	__atomic_store_n(&s->changes, s->changes + 1, __ATOMIC_RELEASE);
	return d->id;
}

/* Replace the content of an existing definition (thread comm groups). */
void tr_ds_replace(struct defset *s, uint32_t cls, uint32_t id, const uint64_t *v, uint32_t len)
{
	struct def *old = s->items[cls][id];
	struct def **pp = &s->buckets[old->hash & (s->nbuckets - 1)];
	while (*pp && *pp != old)
		pp = &(*pp)->hnext;
	size_t nb = (size_t)len * 8;
	struct def *d = otf2w_sys.malloc(sizeof(*d) + nb);
	if (!d)
		return;
	if (*pp)
		*pp = old->hnext;
	d->cls = cls;
	d->len = len;
	d->id = id;
	memcpy(d->v, v, nb);
	d->hash = tr_ds_hash(cls, v, nb);
	d->hnext = s->buckets[d->hash & (s->nbuckets - 1)];
	s->buckets[d->hash & (s->nbuckets - 1)] = d;
	s->items[cls][id] = d;
	otf2w_sys.free(old);
	__atomic_store_n(&s->changes, s->changes + 1, __ATOMIC_RELEASE);
}

void tr_ds_free(struct defset *s)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		for (uint32_t i = 0; i < s->n[c]; i++)
			otf2w_sys.free(s->items[c][i]);
		otf2w_sys.free(s->items[c]);
	}
	otf2w_sys.free(s->buckets);
	for (uint32_t i = 0; i < s->nprocs; i++)
		otf2w_sys.free(s->procs[i].locs);
	otf2w_sys.free(s->procs);
	otf2w_sys.free(s->coffs);
	memset(s, 0, sizeof(*s));
}

uint32_t tr_ds_string(struct defset *s, const char *str)
{
	if (!str)
		return UNDEF;
	return tr_ds_insert(s, TR_DEF_STRING, str, (uint32_t)strlen(str) + 1);
}

const char *tr_ds_str(const struct defset *s, uint32_t id)
{
	if (id >= s->n[TR_DEF_STRING])
		return "";
	return (const char *)s->items[TR_DEF_STRING][id]->v;
}

/* Append without deduplication (ids must stay as packed). */
int tr_ds_append(struct defset *s, uint32_t cls, const void *data, uint32_t len)
{
	size_t nb = tr_ds_def_bytes(cls, len);
	if (s->count + 1 > s->nbuckets * 2 && grow_buckets(s))
		return -1;
	if (s->n[cls] == s->cap[cls]) {
		uint32_t nc = s->cap[cls] ? s->cap[cls] * 2 : 64;
		struct def **ni = otf2w_sys.realloc(s->items[cls], nc * sizeof(*ni));
		if (!ni)
			return -1;
		s->items[cls] = ni;
		s->cap[cls] = nc;
	}
	struct def *d = otf2w_sys.malloc(sizeof(*d) + ((nb + 7) & ~(size_t)7));
	if (!d)
		return -1;
	d->cls = cls;
	d->len = len;
	d->hash = tr_ds_hash(cls, data, nb);
	d->id = s->n[cls];
	memcpy(d->v, data, nb);
	d->hnext = s->buckets[d->hash & (s->nbuckets - 1)];
	s->buckets[d->hash & (s->nbuckets - 1)] = d;
	s->items[cls][s->n[cls]++] = d;
	s->count++;
	return 0;
}

/* Definitions owned elsewhere placed after the set's own (tr_ds_splice):
 * in no hash chain, never freed by the set. */
#define TR_DS_FOREIGN ((struct def *)1)

int tr_ds_splice(struct defset *s, uint32_t cls, struct def *const *defs, uint32_t n)
{
	if (s->n[cls] + n > s->cap[cls]) {
		uint32_t nc = s->cap[cls] ? s->cap[cls] : 64;
		while (nc < s->n[cls] + n)
			nc *= 2;
		struct def **ni = otf2w_sys.realloc(s->items[cls], nc * sizeof(*ni));
		if (!ni)
			return -1;
		s->items[cls] = ni;
		s->cap[cls] = nc;
	}
	for (uint32_t i = 0; i < n; i++) {
		defs[i]->hnext = TR_DS_FOREIGN;
		defs[i]->id = s->n[cls];
		s->items[cls][s->n[cls]++] = defs[i];
	}
	return 0;
}

/* Remove every definition after the first n[cls] of each class (the
 * registry's provisional definitions of a durability snapshot; spliced
 * ones go back to their owner). */
void tr_ds_truncate(struct defset *s, const uint32_t n[TR_DEF_NCLASSES])
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		while (s->n[c] > n[c]) {
			struct def *d = s->items[c][--s->n[c]];
			if (d->hnext == TR_DS_FOREIGN)
				continue;
			struct def **pp = &s->buckets[d->hash & (s->nbuckets - 1)];
			while (*pp && *pp != d)
				pp = &(*pp)->hnext;
			if (*pp)
				*pp = d->hnext;
			s->count--;
			otf2w_sys.free(d);
		}
	}
}

/* String id of s in the set (no insertion; UNDEF if absent). */
uint32_t tr_ds_sid_find(const struct defset *set, const char *s)
{
	uint32_t len = (uint32_t)strlen(s) + 1;
	struct def *d = tr_ds_find(set, TR_DEF_STRING, s, len, tr_ds_hash(TR_DEF_STRING, s, len));
	return d ? d->id : UNDEF;
}

/* ---- paradigms ---- */

const char *const tr_ds_paradigm_names[TR_NPARADIGMS] = {
	[OTF2W_PARADIGM_UNKNOWN] = "Unknown", [OTF2W_PARADIGM_USER] = "User",
	[OTF2W_PARADIGM_COMPILER] = "Compiler", [OTF2W_PARADIGM_OPENMP] = "OpenMP",
	[OTF2W_PARADIGM_MPI] = "MPI", [OTF2W_PARADIGM_CUDA] = "CUDA",
	[OTF2W_PARADIGM_MEASUREMENT_SYSTEM] = "Measurement", [OTF2W_PARADIGM_PTHREAD] = "POSIX threads",
	[OTF2W_PARADIGM_HMPP] = "HMPP", [OTF2W_PARADIGM_OMPSS] = "OmpSs",
	[OTF2W_PARADIGM_HARDWARE] = "Hardware", [OTF2W_PARADIGM_GASPI] = "GASPI",
	[OTF2W_PARADIGM_UPC] = "UPC", [OTF2W_PARADIGM_SHMEM] = "SHMEM",
	[OTF2W_PARADIGM_WINTHREAD] = "Windows threads", [OTF2W_PARADIGM_QTTHREAD] = "Qt threads",
	[OTF2W_PARADIGM_ACETHREAD] = "ACE threads", [OTF2W_PARADIGM_TBBTHREAD] = "TBB threads",
	[OTF2W_PARADIGM_OPENACC] = "OpenACC", [OTF2W_PARADIGM_OPENCL] = "OpenCL",
	[OTF2W_PARADIGM_MTAPI] = "MTAPI", [OTF2W_PARADIGM_SAMPLING] = "Sampling",
	[OTF2W_PARADIGM_NONE] = "None", [OTF2W_PARADIGM_HIP] = "HIP", [OTF2W_PARADIGM_KOKKOS] = "Kokkos",
};

uint8_t tr_ds_paradigm_class(uint8_t p)
{
	switch (p) {
	case OTF2W_PARADIGM_OPENMP:
		return OTF2W_PARADIGM_CLASS_THREAD_FORK_JOIN;
	case OTF2W_PARADIGM_PTHREAD: case OTF2W_PARADIGM_WINTHREAD: case OTF2W_PARADIGM_QTTHREAD:
	case OTF2W_PARADIGM_ACETHREAD: case OTF2W_PARADIGM_TBBTHREAD:
		return OTF2W_PARADIGM_CLASS_THREAD_CREATE_WAIT;
	case OTF2W_PARADIGM_CUDA: case OTF2W_PARADIGM_OPENCL: case OTF2W_PARADIGM_OPENACC:
	case OTF2W_PARADIGM_HIP:
		return OTF2W_PARADIGM_CLASS_ACCELERATOR;
	default:
		return OTF2W_PARADIGM_CLASS_PROCESS;
	}
}

/* Name of paradigm p in s once it is used (its Paradigm definition). */
void tr_ds_use_paradigm(struct defset *s, uint64_t p)
{
	if (p >= TR_NPARADIGMS || s->paradigm_name[p] != UNDEF)
		return;
	const char *n = tr_ds_paradigm_names[p] ? tr_ds_paradigm_names[p] : "Paradigm";
	s->paradigm_name[p] = tr_ds_string(s, n);
	__atomic_store_n(&s->changes, s->changes + 1, __ATOMIC_RELEASE);
}

/* ---- errors ---- */

void (*tr_ds_error_log)(const char *fmt, ...);

void tr_defs_set_error_log(void (*log)(const char *fmt, ...))
{
	tr_ds_error_log = log;
}
