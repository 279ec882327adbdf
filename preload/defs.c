/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs.c - the definition registry.
 *
 * Every definition is a vector of 64-bit values (strings: their bytes) in a
 * "def set": per class an array indexed by the dense id, plus one content
 * hash table for deduplication. The process-local registry is one def set;
 * MPI unification merges packed def sets into a unified one and computes
 * local -> unified id maps (mapping tables).
 *
 * Field layout of each class is given by a schema string (one char per
 * value): v plain value, s String, r Region, g Group, c Comm, l
 * SourceCodeLocation, x CallingContext, m MetricMember, M Metric(class),
 * d CartDimension, t CartTopology, p Callpath, f IoFile, h IoHandle, V typed value (its OTF2 type
 * is the previous value), G location group of the defining process.
 * "*k" at the end: an array of kind k whose length is the previous value.
 *
 * Locking: one registry lock (futex) around every access; never on the hot
 * path (wrappers define once and cache the id).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include "tr_int.h"
#include "proctree.h"

#define UNDEF OTF2W_UNDEFINED_UINT32
#define TR_DEFS_MAGIC 0x46445254u /* "TRDF" */
#define TR_DEFS_VERSION 3u   /* 2: I/O classes, 3: creating process */
#define TR_NPARADIGMS 32

struct def {
	struct def *hnext;
	uint32_t cls;
	uint32_t id;
	uint32_t len;    /* number of values, or string bytes including the NUL */
	uint32_t hash;
	uint64_t v[];
};

struct tr_loc {
	uint64_t id;
	uint32_t name;   /* String id */
	uint64_t nevents;
};

struct tr_procinfo {
	int32_t rank;
	uint32_t pid;
	uint32_t host;   /* String ids */
	uint32_t gname;
	int32_t creator;   /* rank (process tree: part) of the creating process, -1 */
	uint64_t t_first, t_last, resolution, realtime;
	uint32_t nlocs;
	struct tr_loc *locs;
};

struct tr_coff {
	uint64_t time;
	int64_t offset;
	double stddev;
};

struct defset {
	struct def **items[TR_DEF_NCLASSES];
	uint32_t n[TR_DEF_NCLASSES];
	uint32_t cap[TR_DEF_NCLASSES];
	struct def **buckets;
	uint32_t nbuckets;
	uint32_t count;
	uint32_t paradigm_name[TR_NPARADIGMS];  /* String id or UNDEF: paradigm used */
	struct tr_procinfo *procs;
	uint32_t nprocs;
	struct tr_coff *coffs;   /* unpacked clock offsets */
	uint32_t ncoffs;
};

static struct defset tr_local;
static struct tr_lock tr_reg_lock = TR_LOCK_INIT;

/* Thread comms (tr_def_thread_comm): groups completed at shut-down. */
struct tr_tcomm {
	uint8_t paradigm;
	uint32_t comm, cl_group, cg_group;
	uint32_t name;
};
static struct tr_tcomm tr_tcomms[8];
static int tr_ntcomms;

/* Clock offsets (MPI clock synchronisation). */
static struct tr_coff tr_coffs[64];
static int tr_ncoffs;

/* Unified set (MPI) and local -> unified maps. */
static struct defset *tr_unified;
static uint32_t *tr_umap[TR_DEF_NCLASSES];
static int tr_unified_write_global;

struct tr_lock *tr_defs_lock(void)
{
	return &tr_reg_lock;
}

/* ---- schemas ---- */

static const char *const tr_schema[TR_DEF_NCLASSES] = {
	[TR_DEF_STRING] = "",
	[TR_DEF_ATTRIBUTE] = "ssv",                  /* name descr type */
	[TR_DEF_REGION] = "sssvvvsvv",               /* name canon descr role paradigm flags file begin end */
	[TR_DEF_GROUP] = "svvvv*v",                  /* name type paradigm flags n members */
	[TR_DEF_COMM] = "vsgcv",                     /* 0 name group parent flags | 1 name gA gB common flags */
	[TR_DEF_RMA_WIN] = "scv",                    /* name comm flags */
	[TR_DEF_PARAMETER] = "sv",                   /* name type */
	[TR_DEF_METRIC_MEMBER] = "ssvvvvvs",         /* name descr type mode vtype base exp unit */
	[TR_DEF_METRIC] = "vvv*m",                   /* occurrence recorder_kind n members */
	[TR_DEF_METRIC_CLASS_RECORDER] = "Mv",       /* metric location */
	[TR_DEF_SOURCE_CODE_LOCATION] = "sv",        /* file line */
	[TR_DEF_CALLING_CONTEXT] = "rlx",            /* region scl parent */
	[TR_DEF_CALLING_CONTEXT_PROPERTY] = "xsvV",  /* cc name type value */
	[TR_DEF_INTERRUPT_GENERATOR] = "svvvv",      /* name mode base exp period */
	[TR_DEF_CART_DIMENSION] = "svv",             /* name size periodic */
	[TR_DEF_CART_TOPOLOGY] = "scv*d",            /* name comm n dims */
	[TR_DEF_CART_COORDINATE] = "tvv*v",          /* topo rank n coords */
	[TR_DEF_CALLSITE] = "svrr",                  /* file line entered left */
	[TR_DEF_CALLPATH] = "pr",                    /* parent region */
	[TR_DEF_LOCATION_PROPERTY] = "vsvV",         /* location name type value */
	[TR_DEF_LOCATION_GROUP_PROPERTY] = "GsvV",   /* group name type value */
	[TR_DEF_IO_PARADIGM] = "vssvvvvV",           /* self ident name class flags nprops type value */
	[TR_DEF_IO_FILE] = "vss",                    /* directory name scope(host name) */
	[TR_DEF_IO_FILE_PROPERTY] = "fsvV",          /* file name type value */
	[TR_DEF_IO_HANDLE] = "sfvvchv",              /* name file paradigm flags comm parent unique */
	[TR_DEF_IO_PRE_CREATED_HANDLE_STATE] = "hvv", /* handle mode status_flags */
};
static const char tr_schema_intercomm[] = "vsggcv";

/* Dependency order for writing and merging. */
static const int tr_order[] = {
	TR_DEF_ATTRIBUTE, TR_DEF_REGION, TR_DEF_SOURCE_CODE_LOCATION, TR_DEF_CALLING_CONTEXT,
	TR_DEF_CALLING_CONTEXT_PROPERTY, TR_DEF_INTERRUPT_GENERATOR, TR_DEF_PARAMETER,
	TR_DEF_METRIC_MEMBER, TR_DEF_METRIC, TR_DEF_METRIC_CLASS_RECORDER, TR_DEF_GROUP,
	TR_DEF_COMM, TR_DEF_RMA_WIN, TR_DEF_CART_DIMENSION, TR_DEF_CART_TOPOLOGY,
	TR_DEF_CART_COORDINATE, TR_DEF_CALLSITE, TR_DEF_CALLPATH, TR_DEF_LOCATION_PROPERTY,
	TR_DEF_LOCATION_GROUP_PROPERTY,
	TR_DEF_IO_PARADIGM, TR_DEF_IO_FILE, TR_DEF_IO_FILE_PROPERTY, TR_DEF_IO_HANDLE,
	TR_DEF_IO_PRE_CREATED_HANDLE_STATE,
};

static int kind_class(char k)
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
static int type_class(uint64_t type)
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

static const char *schema_of(const struct def *d)
{
	if (d->cls == TR_DEF_COMM && d->len > 0 && d->v[0] == 1)
		return tr_schema_intercomm;
	return tr_schema[d->cls];
}

/* Kind of value i of d ('v' for plain). */
static char kind_at(const struct def *d, const char *sch, uint32_t i)
{
	const char *star = strchr(sch, '*');
	uint32_t nfix = star ? (uint32_t)(star - sch) : (uint32_t)strlen(sch);
	if (i < nfix)
		return sch[i];
	return star ? star[1] : 'v';
}

/* ---- hashing ---- */

static uint32_t hash_bytes(uint32_t cls, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull ^ cls;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static size_t def_bytes(uint32_t cls, uint32_t len)
{
	return cls == TR_DEF_STRING ? len : (size_t)len * 8;
}

static int set_grow_buckets(struct defset *s)
{
	uint32_t nb = s->nbuckets ? s->nbuckets * 4 : 1024;
	struct def **b = calloc(nb, sizeof(*b));
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
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = nb;
	return 0;
}

static struct def *set_find(const struct defset *s, uint32_t cls, const void *data, uint32_t len, uint32_t h)
{
	if (!s->nbuckets)
		return NULL;
	for (struct def *d = s->buckets[h & (s->nbuckets - 1)]; d; d = d->hnext)
		if (d->hash == h && d->cls == cls && d->len == len && !memcmp(d->v, data, def_bytes(cls, len)))
			return d;
	return NULL;
}

/* Insert (dedup) a definition; returns its id or UNDEF on allocation failure. */
static uint32_t set_insert(struct defset *s, uint32_t cls, const void *data, uint32_t len)
{
	size_t nb = def_bytes(cls, len);
	uint32_t h = hash_bytes(cls, data, nb);
	struct def *d = set_find(s, cls, data, len, h);
	if (d)
		return d->id;
	if (s->count + 1 > s->nbuckets * 2 && set_grow_buckets(s))
		return UNDEF;
	if (s->n[cls] == s->cap[cls]) {
		uint32_t nc = s->cap[cls] ? s->cap[cls] * 2 : 64;
		struct def **ni = realloc(s->items[cls], nc * sizeof(*ni));
		if (!ni)
			return UNDEF;
		s->items[cls] = ni;
		s->cap[cls] = nc;
	}
	d = malloc(sizeof(*d) + ((nb + 7) & ~(size_t)7));
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
	return d->id;
}

/* Replace the content of an existing definition (thread comm groups). */
static void set_replace(struct defset *s, uint32_t cls, uint32_t id, const uint64_t *v, uint32_t len)
{
	struct def *old = s->items[cls][id];
	struct def **pp = &s->buckets[old->hash & (s->nbuckets - 1)];
	while (*pp && *pp != old)
		pp = &(*pp)->hnext;
	size_t nb = (size_t)len * 8;
	struct def *d = malloc(sizeof(*d) + nb);
	if (!d)
		return;
	if (*pp)
		*pp = old->hnext;
	d->cls = cls;
	d->len = len;
	d->id = id;
	memcpy(d->v, v, nb);
	d->hash = hash_bytes(cls, v, nb);
	d->hnext = s->buckets[d->hash & (s->nbuckets - 1)];
	s->buckets[d->hash & (s->nbuckets - 1)] = d;
	s->items[cls][id] = d;
	free(old);
}

static void set_free(struct defset *s)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		for (uint32_t i = 0; i < s->n[c]; i++)
			free(s->items[c][i]);
		free(s->items[c]);
	}
	free(s->buckets);
	for (uint32_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].locs);
	free(s->procs);
	free(s->coffs);
	memset(s, 0, sizeof(*s));
}

static uint32_t set_string(struct defset *s, const char *str)
{
	if (!str)
		return UNDEF;
	return set_insert(s, TR_DEF_STRING, str, (uint32_t)strlen(str) + 1);
}

static const char *set_str(const struct defset *s, uint32_t id)
{
	if (id >= s->n[TR_DEF_STRING])
		return "";
	return (const char *)s->items[TR_DEF_STRING][id]->v;
}

/* ---- public registry API ---- */

static const char *const tr_paradigm_names[TR_NPARADIGMS] = {
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

static uint8_t paradigm_class(uint8_t p)
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

/* Under the lock. */
static void use_paradigm(struct defset *s, uint64_t p)
{
	if (p >= TR_NPARADIGMS || s->paradigm_name[p] != UNDEF)
		return;
	const char *n = tr_paradigm_names[p] ? tr_paradigm_names[p] : "Paradigm";
	s->paradigm_name[p] = set_string(s, n);
}

static uint32_t reg_insert(uint32_t cls, const uint64_t *v, uint32_t n)
{
	tr_lock(&tr_reg_lock);
	uint32_t id = set_insert(&tr_local, cls, v, n);
	tr_unlock(&tr_reg_lock);
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
	tr_lock(&tr_reg_lock);
	uint32_t id = set_string(&tr_local, s);
	tr_unlock(&tr_reg_lock);
	return id;
}

uint32_t tr_def_region(const char *name, const char *canonical_name, const char *description,
		       uint8_t role, uint8_t paradigm, uint32_t flags,
		       const char *source_file, uint32_t begin_line, uint32_t end_line)
{
	uint64_t v[9] = { sref_empty(name), sref_empty(canonical_name ? canonical_name : name),
			  sref_empty(description), role, paradigm, flags, sref(source_file),
			  begin_line, end_line };
	tr_lock(&tr_reg_lock);
	use_paradigm(&tr_local, paradigm);
	uint32_t n0 = tr_local.n[TR_DEF_REGION];
	uint32_t id = set_insert(&tr_local, TR_DEF_REGION, v, 9);
	tr_unlock(&tr_reg_lock);
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

uint32_t tr_def_calling_context_property(uint32_t cc, const char *name, uint8_t type, uint64_t value)
{
	uint64_t v[4] = { cc, sref_empty(name), type, value };
	return reg_insert(TR_DEF_CALLING_CONTEXT_PROPERTY, v, 4);
}

uint32_t tr_def_interrupt_generator(const char *name, uint8_t mode, uint8_t base, int64_t exponent,
				    uint64_t period)
{
	uint64_t v[5] = { sref_empty(name), mode, base, (uint64_t)exponent, period };
	tr_lock(&tr_reg_lock);
	use_paradigm(&tr_local, OTF2W_PARADIGM_SAMPLING);
	tr_unlock(&tr_reg_lock);
	return reg_insert(TR_DEF_INTERRUPT_GENERATOR, v, 5);
}

uint32_t tr_def_parameter(const char *name, uint8_t type)
{
	uint64_t v[2] = { sref_empty(name), type };
	return reg_insert(TR_DEF_PARAMETER, v, 2);
}

uint32_t tr_def_metric_member(const char *name, const char *description, uint8_t metric_type,
			      uint8_t metric_mode, uint8_t value_type, uint8_t base, int64_t exponent,
			      const char *unit)
{
	uint64_t v[8] = { sref_empty(name), sref_empty(description), metric_type, metric_mode,
			  value_type, base, (uint64_t)exponent, sref_empty(unit) };
	return reg_insert(TR_DEF_METRIC_MEMBER, v, 8);
}

uint32_t tr_def_metric_class(uint32_t n, const uint32_t *members, uint8_t occurrence, uint8_t recorder_kind)
{
	if (n > 255)
		n = 255;
	uint64_t v[3 + 255];
	v[0] = occurrence;
	v[1] = recorder_kind;
	v[2] = n;
	for (uint32_t i = 0; i < n; i++)
		v[3 + i] = members[i];
	return reg_insert(TR_DEF_METRIC, v, 3 + n);
}

void tr_def_metric_class_recorder(uint32_t metric_class, uint64_t location)
{
	uint64_t v[2] = { metric_class, location };
	reg_insert(TR_DEF_METRIC_CLASS_RECORDER, v, 2);
}

uint32_t tr_def_group(const char *name, uint8_t group_type, uint8_t paradigm, uint32_t flags,
		      uint32_t n, const uint64_t *members)
{
	uint64_t *v = malloc((5 + (size_t)n) * 8);
	if (!v)
		return UNDEF;
	v[0] = sref_empty(name);
	v[1] = group_type;
	v[2] = paradigm;
	v[3] = flags;
	v[4] = n;
	for (uint32_t i = 0; i < n; i++)
		v[5 + i] = members[i];
	tr_lock(&tr_reg_lock);
	use_paradigm(&tr_local, paradigm);
	uint32_t id = set_insert(&tr_local, TR_DEF_GROUP, v, 5 + n);
	tr_unlock(&tr_reg_lock);
	free(v);
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
	if (ndims > 255)
		ndims = 255;
	uint64_t v[3 + 255];
	v[0] = sref_empty(name);
	v[1] = comm;
	v[2] = ndims;
	for (uint32_t i = 0; i < ndims; i++)
		v[3 + i] = dims[i];
	return reg_insert(TR_DEF_CART_TOPOLOGY, v, 3 + ndims);
}

void tr_def_cart_coordinate(uint32_t topology, uint32_t rank, uint32_t ndims, const uint32_t *coords)
{
	if (ndims > 255)
		ndims = 255;
	uint64_t v[3 + 255];
	v[0] = topology;
	v[1] = rank;
	v[2] = ndims;
	for (uint32_t i = 0; i < ndims; i++)
		v[3 + i] = coords[i];
	reg_insert(TR_DEF_CART_COORDINATE, v, 3 + ndims);
}

uint32_t tr_def_callsite(const char *file, uint32_t line, uint32_t entered_region, uint32_t left_region)
{
	uint64_t v[4] = { sref_empty(file), line, entered_region, left_region };
	return reg_insert(TR_DEF_CALLSITE, v, 4);
}

uint32_t tr_def_callpath(uint32_t parent, uint32_t region)
{
	uint64_t v[2] = { parent, region };
	return reg_insert(TR_DEF_CALLPATH, v, 2);
}

uint32_t tr_def_thread_comm(uint8_t paradigm, const char *name)
{
	uint32_t comm = UNDEF;
	tr_lock(&tr_reg_lock);
	for (int i = 0; i < tr_ntcomms; i++)
		if (tr_tcomms[i].paradigm == paradigm) {
			comm = tr_tcomms[i].comm;
			break;
		}
	if (comm == UNDEF && tr_ntcomms < (int)(sizeof(tr_tcomms) / sizeof(tr_tcomms[0]))) {
		struct tr_tcomm *tc = &tr_tcomms[tr_ntcomms];
		char buf[256];
		const char *pn = paradigm < TR_NPARADIGMS && tr_paradigm_names[paradigm]
				 ? tr_paradigm_names[paradigm] : "threads";
		use_paradigm(&tr_local, paradigm);
		tc->paradigm = paradigm;
		tc->name = set_string(&tr_local, name ? name : "Thread contingent");
		snprintf(buf, sizeof(buf), "%s locations", pn);
		/* Placeholders (completed with the members at shut-down); the
		 * marker value keeps them distinct from any user-defined group. */
		uint64_t cl[6] = { set_string(&tr_local, buf), OTF2W_GROUP_COMM_LOCATIONS, paradigm, 0, 1,
				   0xfffffffffffffff0ull };
		tc->cl_group = set_insert(&tr_local, TR_DEF_GROUP, cl, 6);
		snprintf(buf, sizeof(buf), "%s group", pn);
		uint64_t cg[6] = { set_string(&tr_local, buf), OTF2W_GROUP_COMM_GROUP, paradigm, 0, 1,
				   0xfffffffffffffff1ull };
		tc->cg_group = set_insert(&tr_local, TR_DEF_GROUP, cg, 6);
		uint64_t cv[5] = { 0, tc->name, tc->cg_group, UNDEF, 0 };
		tc->comm = set_insert(&tr_local, TR_DEF_COMM, cv, 5);
		comm = tc->comm;
		if (tc->cl_group != UNDEF && tc->cg_group != UNDEF && comm != UNDEF)
			tr_ntcomms++;
	}
	tr_unlock(&tr_reg_lock);
	return comm;
}

void tr_def_location_property(uint64_t location, const char *name, const char *value)
{
	uint32_t vs = sref_empty(value);
	uint64_t v[4] = { location, sref_empty(name), OTF2W_TYPE_STRING, vs };
	reg_insert(TR_DEF_LOCATION_PROPERTY, v, 4);
}

void tr_def_location_group_property(const char *name, const char *value)
{
	uint32_t vs = sref_empty(value);
	uint64_t v[4] = { UNDEF, sref_empty(name), OTF2W_TYPE_STRING, vs };
	reg_insert(TR_DEF_LOCATION_GROUP_PROPERTY, v, 4);
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

void tr_def_io_file_property(uint32_t file, const char *name, const char *value)
{
	uint32_t vs = sref_empty(value);
	uint64_t v[4] = { file, sref_empty(name), OTF2W_TYPE_STRING, vs };
	reg_insert(TR_DEF_IO_FILE_PROPERTY, v, 4);
}

void tr_def_io_pre_created_handle_state(uint32_t handle, uint8_t mode, uint32_t status_flags)
{
	uint64_t v[3] = { handle, mode, status_flags };
	reg_insert(TR_DEF_IO_PRE_CREATED_HANDLE_STATE, v, 3);
}

void tr_def_clock_offset(uint64_t time, int64_t offset, double stddev)
{
	tr_lock(&tr_reg_lock);
	/* times must be strictly increasing for the reader */
	if (tr_ncoffs < (int)(sizeof(tr_coffs) / sizeof(tr_coffs[0])) &&
	    (tr_ncoffs == 0 || time > tr_coffs[tr_ncoffs - 1].time)) {
		tr_coffs[tr_ncoffs].time = time;
		tr_coffs[tr_ncoffs].offset = offset;
		tr_coffs[tr_ncoffs].stddev = stddev;
		tr_ncoffs++;
	}
	tr_unlock(&tr_reg_lock);
}

uint32_t tr_defs_count(int cls)
{
	return cls >= 0 && cls < TR_DEF_NCLASSES ? tr_local.n[cls] : 0;
}

/* ---- process information (locations of this process) ---- */

static uint32_t tr_sid_machine, tr_sid_machine_class, tr_sid_node_class, tr_sid_host, tr_sid_gname;

/* Strings needed at shut-down are registered early, so that the crash path
 * allocates nothing. */
void tr_defs_init(void)
{
	char buf[300];
	tr_lock(&tr_reg_lock);
	for (int i = 0; i < TR_NPARADIGMS; i++)
		tr_local.paradigm_name[i] = UNDEF;
	set_string(&tr_local, "");
	use_paradigm(&tr_local, OTF2W_PARADIGM_MEASUREMENT_SYSTEM);
	tr_sid_machine = set_string(&tr_local, "machine");
	tr_sid_machine_class = set_string(&tr_local, "machine");
	tr_sid_node_class = set_string(&tr_local, "node");
	tr_sid_host = set_string(&tr_local, tr_proc.hostname);
	set_string(&tr_local, "MPI Rank (not in this archive)");
	set_string(&tr_local, "Master thread");
	set_string(&tr_local, "Thread");
	if (tr_proc.rank >= 0)
		snprintf(buf, sizeof(buf), "MPI Rank %d", tr_proc.rank);
	else
		snprintf(buf, sizeof(buf), "Process %d", (int)getpid());
	tr_sid_gname = set_string(&tr_local, buf);
	tr_unlock(&tr_reg_lock);
}

/* After tr_set_rank / fork: the location group name. */
void tr_defs_process_renamed(void)
{
	char buf[300];
	if (tr_proc.rank >= 0)
		snprintf(buf, sizeof(buf), "MPI Rank %d", tr_proc.rank);
	else if (tr_tree.gname[0])
		snprintf(buf, sizeof(buf), "%s", tr_tree.gname);
	else
		snprintf(buf, sizeof(buf), "Process %d", (int)getpid());
	tr_sid_gname = tr_def_string(buf);
}

void tr_defs_fork_child(void)
{
	tr_reg_lock.v = 0;
	tr_ncoffs = 0;
	if (tr_unified) {
		set_free(tr_unified);
		free(tr_unified);
		tr_unified = NULL;
	}
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		free(tr_umap[c]);
		tr_umap[c] = NULL;
	}
	tr_defs_process_renamed();
}

/* A local time on the reference clock (MPI: rank 0's), as the reference
 * reader corrects it with this process's clock offsets: linear in the
 * interval between two offsets, extrapolated with the first interval's
 * slope before it and the last one's after it; constant with one offset,
 * identity without. */
static uint64_t corrected(uint64_t t)
{
	int n = tr_ncoffs;
	if (n == 0)
		return t;
	int64_t off = tr_coffs[0].offset;
	if (n > 1) {
		int i = 0;
		while (i < n - 2 && t > tr_coffs[i + 1].time)
			i++;
		double slope = (double)(tr_coffs[i + 1].offset - tr_coffs[i].offset) /
			       (double)(tr_coffs[i + 1].time - tr_coffs[i].time);
		double d = t >= tr_coffs[i].time ? (double)(t - tr_coffs[i].time)
						 : -(double)(tr_coffs[i].time - t);
		double x = slope * d;
		off = tr_coffs[i].offset + (int64_t)(x >= 0 ? x + 0.5 : x - 0.5);
	}
	return off < 0 && (uint64_t)-off > t ? 0 : (uint64_t)((int64_t)t + off);
}

/* Fill proc with this process's locations (thread list); nolock: crash path
 * (then the locations array is a static buffer). Its time range covers
 * every event and clock offset written so far, on the reference clock
 * (see corrected; a rank's standalone archive has no offsets: there the
 * range is corrected back by tr_defs_write_global). */
static struct tr_loc tr_crash_locs[16384];

static int local_proc(struct tr_procinfo *p, int crash)
{
	uint32_t n = 0, i = 0;
	memset(p, 0, sizeof(*p));
	p->rank = tr_proc.rank >= 0 ? tr_proc.rank : tr_tree.part;   /* process tree: its part */
	p->creator = tr_tree.creator;
	p->pid = (uint32_t)getpid();
	p->host = tr_sid_host;
	p->gname = tr_sid_gname;
	p->t_first = tr_g.t_start;
	p->resolution = tr_clock_freq();
	for (struct tr_thread *t = tr_g.threads; t; t = t->next)
		n++;
	if (crash) {
		if (n > sizeof(tr_crash_locs) / sizeof(tr_crash_locs[0]))
			n = sizeof(tr_crash_locs) / sizeof(tr_crash_locs[0]);
		p->locs = tr_crash_locs;
	} else {
		p->locs = calloc(n ? n : 1, sizeof(*p->locs));
		if (!p->locs)
			return -1;
	}
	uint64_t last = tr_g.t_start;
	for (struct tr_thread *t = tr_g.threads; t && i < n; t = t->next, i++) {
		p->locs[i].id = t->location;
		p->locs[i].name = t->name_sid;
		p->locs[i].nevents = t->w ? otf2w_evt_writer_count(t->w) : 0;
		uint64_t lt = t->w ? otf2w_evt_writer_last_time(t->w) : 0;
		if (lt > last)
			last = lt;
	}
	p->nlocs = i;
	if (tr_ncoffs > 0 && tr_coffs[tr_ncoffs - 1].time > last)
		last = tr_coffs[tr_ncoffs - 1].time;
	/* sort by location id (insertion sort; few threads) */
	for (uint32_t a = 1; a < p->nlocs; a++) {
		struct tr_loc x = p->locs[a];
		uint32_t b = a;
		while (b > 0 && p->locs[b - 1].id > x.id) {
			p->locs[b] = p->locs[b - 1];
			b--;
		}
		p->locs[b] = x;
	}
	p->t_first = corrected(tr_g.t_start);
	p->t_last = corrected(last);
	p->realtime = tr_clock_realtime_of(tr_g.t_start);
	return 0;
}

/* Complete the thread comm groups with the current locations. Under the lock. */
static void finalize_thread_comms(const struct tr_procinfo *p)
{
	for (int i = 0; i < tr_ntcomms; i++) {
		struct tr_tcomm *tc = &tr_tcomms[i];
		uint32_t n = p->nlocs;
		uint64_t *v = malloc((5 + (size_t)n) * 8);
		if (!v)
			return;
		const struct def *cl = tr_local.items[TR_DEF_GROUP][tc->cl_group];
		memcpy(v, cl->v, 5 * 8);
		v[4] = n;
		for (uint32_t k = 0; k < n; k++)
			v[5 + k] = p->locs[k].id;
		set_replace(&tr_local, TR_DEF_GROUP, tc->cl_group, v, 5 + n);
		const struct def *cg = tr_local.items[TR_DEF_GROUP][tc->cg_group];
		memcpy(v, cg->v, 5 * 8);
		v[4] = n;
		for (uint32_t k = 0; k < n; k++)
			v[5 + k] = k;
		set_replace(&tr_local, TR_DEF_GROUP, tc->cg_group, v, 5 + n);
		free(v);
	}
}

/* The thread comm groups of the local set, completed with the locations of
 * s->procs[0] without touching the registry (also usable from the crash
 * path: static scratch, no malloc, caller serialises). */
static struct {
	struct def d;
	uint64_t v[5 + 4096];
} tr_scratch;

static const struct def *effective(const struct defset *s, const struct def *d)
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

/* ---- writing a def set into the global definitions ---- */

/* String id of s in the set (no insertion; UNDEF if absent). */
static uint32_t sid_find(const struct defset *set, const char *s)
{
	uint32_t len = (uint32_t)strlen(s) + 1;
	struct def *d = set_find(set, TR_DEF_STRING, s, len, hash_bytes(TR_DEF_STRING, s, len));
	return d ? d->id : UNDEF;
}

#define W(call) do { otf2w_status _s = (call); if (_s != OTF2W_OK && !err) err = _s; } while (0)

/* ---- location ids of a unified archive ----
 * A process's location ids are (rank << 32 | thread index): unique, but
 * readers that take a rank number for a location id (ViTE, when it cannot
 * use a COMM_GROUP) need 0, 1, 2, ... So a unified archive numbers its
 * locations sequentially: rank-major (the processes in set order, which is
 * rank order), threads in id order, then the foreign locations (ranks not in
 * the archive). Every location reference written for it goes through
 * out_loc; its event and local definition files are named by that id. */
static const struct defset *tr_gid_set;   /* the unified set being written (NULL: ids as they are) */
static uint32_t tr_nforeign;
static uint64_t tr_foreign[4096];

static uint64_t set_gid(const struct defset *s, uint64_t id)
{
	uint64_t g = 0;
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++, g++)
			if (s->procs[i].locs[k].id == id)
				return g;
	for (uint32_t j = 0; j < tr_nforeign; j++, g++)
		if (tr_foreign[j] == id)
			return g;
	return id;
}

static uint64_t out_loc(const struct defset *s, uint64_t id)
{
	return s == tr_gid_set && id != OTF2W_UNDEFINED_LOCATION ? set_gid(s, id) : id;
}

/* System tree node of a host (String id): nodes are numbered 1.. in the
 * order hosts first appear among the set's processes (write_set). */
static uint32_t host_node(const struct defset *s, uint64_t host)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t j = 0;
		while (j < i && s->procs[j].host != s->procs[i].host)
			j++;
		if (j < i)
			continue;
		if (s->procs[i].host == host)
			return 1 + k;
		k++;
	}
	return UNDEF;
}

static otf2w_status write_def(otf2w_gdef_writer *g, const struct defset *s, const struct def *d,
			      uint32_t own_group)
{
	otf2w_status err = OTF2W_OK;
	const uint64_t *v = d->v;
	uint32_t id = d->id;
	uint32_t a32[256];

	switch (d->cls) {
	case TR_DEF_ATTRIBUTE:
		W(otf2w_gdef_attribute(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2]));
		break;
	case TR_DEF_REGION:
		W(otf2w_gdef_region(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint8_t)v[3],
				    (uint8_t)v[4], (uint32_t)v[5], (uint32_t)v[6], (uint32_t)v[7], (uint32_t)v[8]));
		break;
	case TR_DEF_GROUP:
		if (s == tr_gid_set && (v[1] == OTF2W_GROUP_LOCATIONS || v[1] == OTF2W_GROUP_COMM_LOCATIONS)) {
			uint64_t *m = malloc((v[4] ? v[4] : 1) * sizeof(uint64_t));
			if (!m)
				return OTF2W_E_NO_MEMORY;
			for (uint64_t i = 0; i < v[4]; i++)
				m[i] = out_loc(s, v[5 + i]);
			W(otf2w_gdef_group(g, id, (uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2], (uint32_t)v[3],
					   (uint32_t)v[4], m));
			free(m);
			break;
		}
		W(otf2w_gdef_group(g, id, (uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2], (uint32_t)v[3],
				   (uint32_t)v[4], v + 5));
		break;
	case TR_DEF_COMM:
		if (v[0] == 1)
			W(otf2w_gdef_inter_comm(g, id, (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3],
						(uint32_t)v[4], (uint32_t)v[5]));
		else
			W(otf2w_gdef_comm(g, id, (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3], (uint32_t)v[4]));
		break;
	case TR_DEF_RMA_WIN:
		W(otf2w_gdef_rma_win(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]));
		break;
	case TR_DEF_PARAMETER:
		W(otf2w_gdef_parameter(g, id, (uint32_t)v[0], (uint8_t)v[1]));
		break;
	case TR_DEF_METRIC_MEMBER:
		W(otf2w_gdef_metric_member(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], (uint8_t)v[3],
					   (uint8_t)v[4], (uint8_t)v[5], (int64_t)v[6], (uint32_t)v[7]));
		break;
	case TR_DEF_METRIC:
		for (uint32_t i = 0; i < v[2] && i < 255; i++)
			a32[i] = (uint32_t)v[3 + i];
		W(otf2w_gdef_metric_class(g, id, (uint8_t)v[2], a32, (uint8_t)v[0], (uint8_t)v[1]));
		break;
	case TR_DEF_METRIC_CLASS_RECORDER:
		W(otf2w_gdef_metric_class_recorder(g, (uint32_t)v[0], out_loc(s, v[1])));
		break;
	case TR_DEF_SOURCE_CODE_LOCATION:
		W(otf2w_gdef_source_code_location(g, id, (uint32_t)v[0], (uint32_t)v[1]));
		break;
	case TR_DEF_CALLING_CONTEXT:
		W(otf2w_gdef_calling_context(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]));
		break;
	case TR_DEF_CALLING_CONTEXT_PROPERTY:
		W(otf2w_gdef_calling_context_property(g, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], v[3]));
		break;
	case TR_DEF_INTERRUPT_GENERATOR:
		W(otf2w_gdef_interrupt_generator(g, id, (uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2],
						 (int64_t)v[3], v[4]));
		break;
	case TR_DEF_CART_DIMENSION:
		W(otf2w_gdef_cart_dimension(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2]));
		break;
	case TR_DEF_CART_TOPOLOGY:
		for (uint32_t i = 0; i < v[2] && i < 255; i++)
			a32[i] = (uint32_t)v[3 + i];
		W(otf2w_gdef_cart_topology(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], a32));
		break;
	case TR_DEF_CART_COORDINATE:
		for (uint32_t i = 0; i < v[2] && i < 255; i++)
			a32[i] = (uint32_t)v[3 + i];
		W(otf2w_gdef_cart_coordinate(g, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], a32));
		break;
	case TR_DEF_CALLSITE:
		W(otf2w_gdef_callsite(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3]));
		break;
	case TR_DEF_CALLPATH:
		W(otf2w_gdef_callpath(g, id, (uint32_t)v[0], (uint32_t)v[1]));
		break;
	case TR_DEF_LOCATION_PROPERTY:
		W(otf2w_gdef_location_property(g, out_loc(s, v[0]), (uint32_t)v[1], (uint8_t)v[2], v[3]));
		break;
	case TR_DEF_LOCATION_GROUP_PROPERTY:
		W(otf2w_gdef_location_group_property(g, v[0] == UNDEF ? own_group : (uint32_t)v[0],
						     (uint32_t)v[1], (uint8_t)v[2], v[3]));
		break;
	case TR_DEF_IO_PARADIGM: {
		uint8_t prop = 0 /* VERSION */, type = (uint8_t)v[6];
		W(otf2w_gdef_io_paradigm(g, (uint8_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint8_t)v[3],
					 (uint32_t)v[4], (uint8_t)v[5], &prop, &type, &v[7]));
		break;
	}
	case TR_DEF_IO_FILE:
		if (v[0])
			W(otf2w_gdef_io_directory(g, id, (uint32_t)v[1], host_node(s, v[2])));
		else
			W(otf2w_gdef_io_regular_file(g, id, (uint32_t)v[1], host_node(s, v[2])));
		break;
	case TR_DEF_IO_FILE_PROPERTY:
		W(otf2w_gdef_io_file_property(g, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], v[3]));
		break;
	case TR_DEF_IO_HANDLE:
		W(otf2w_gdef_io_handle(g, id, (uint32_t)v[0], (uint32_t)v[1], (uint8_t)v[2], (uint32_t)v[3],
				       (uint32_t)v[4], (uint32_t)v[5]));
		break;
	case TR_DEF_IO_PRE_CREATED_HANDLE_STATE:
		W(otf2w_gdef_io_pre_created_handle_state(g, (uint32_t)v[0], (uint8_t)v[1], (uint32_t)v[2]));
		break;
	default:
		break;
	}
	return err;
}

/* Locations referenced by groups/recorders/properties but owned by no
 * process of the set (a rank that is not in this archive): defined as empty
 * locations of a location group per rank, so every reference resolves.
 * No malloc (crash path): fixed arrays. */
static int set_has_loc(const struct defset *s, uint64_t id)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++)
			if (s->procs[i].locs[k].id == id)
				return 1;
	return 0;
}

static void foreign_add(uint32_t *n, const struct defset *s, uint64_t id)
{
	if (id == OTF2W_UNDEFINED_LOCATION || set_has_loc(s, id))
		return;
	for (uint32_t i = 0; i < *n; i++)
		if (tr_foreign[i] == id)
			return;
	if (*n < sizeof(tr_foreign) / sizeof(tr_foreign[0]))
		tr_foreign[(*n)++] = id;
}

static otf2w_status write_foreign(otf2w_gdef_writer *g, const struct defset *s)
{
	otf2w_status err = OTF2W_OK;
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
		/* effective: thread comm placeholders completed (crash path) */
		const struct def *d = effective(s, s->items[TR_DEF_GROUP][i]);
		if (d->len < 5 || (d->v[1] != OTF2W_GROUP_LOCATIONS && d->v[1] != OTF2W_GROUP_COMM_LOCATIONS))
			continue;
		for (uint32_t m = 5; m < d->len; m++)
			foreign_add(&n, s, d->v[m]);
	}
	for (uint32_t i = 0; i < s->n[TR_DEF_METRIC_CLASS_RECORDER]; i++)
		foreign_add(&n, s, s->items[TR_DEF_METRIC_CLASS_RECORDER][i]->v[1]);
	for (uint32_t i = 0; i < s->n[TR_DEF_LOCATION_PROPERTY]; i++)
		foreign_add(&n, s, s->items[TR_DEF_LOCATION_PROPERTY][i]->v[0]);
	uint32_t sg = sid_find(s, "MPI Rank (not in this archive)");
	uint32_t sm = sid_find(s, "Master thread"), st = sid_find(s, "Thread");
	uint32_t group = s->nprocs;
	uint64_t last_rank = UINT64_MAX;
	/* sort by id so each rank's locations are together */
	for (uint32_t a = 1; a < n; a++) {
		uint64_t x = tr_foreign[a];
		uint32_t b = a;
		while (b > 0 && tr_foreign[b - 1] > x) {
			tr_foreign[b] = tr_foreign[b - 1];
			b--;
		}
		tr_foreign[b] = x;
	}
	tr_nforeign = n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t rank = tr_foreign[i] >> 32;
		if (rank != last_rank) {
			if (last_rank != UINT64_MAX)
				group++;
			last_rank = rank;
			W(otf2w_gdef_location_group(g, group, sg, OTF2W_LGROUP_PROCESS, 1, UNDEF));
		}
		W(otf2w_gdef_location(g, out_loc(s, tr_foreign[i]), (tr_foreign[i] & 0xffffffffu) ? st : sm,
				      OTF2W_LOC_CPU_THREAD, 0, group));
	}
	return err;
}

/* Write a whole def set (with its processes) as the global definitions. */
static otf2w_status write_set(otf2w_gdef_writer *g, const struct defset *s)
{
	otf2w_status err = OTF2W_OK;
	tr_nforeign = 0;
	uint64_t first = UINT64_MAX, last = 0, res = 0, rt = OTF2W_UNDEFINED_TIMESTAMP;

	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct tr_procinfo *p = &s->procs[i];
		if (p->t_first < first) {
			first = p->t_first;
			rt = p->realtime;
			res = p->resolution;
		}
		if (p->t_last > last)
			last = p->t_last;
	}
	if (first == UINT64_MAX)
		first = 0;
	if (!res)
		res = tr_clock_freq();
	W(otf2w_gdef_clock_properties(g, res, first, last > first ? last - first : 0, rt));

	for (uint32_t i = 0; i < s->n[TR_DEF_STRING]; i++)
		W(otf2w_gdef_string(g, i, (const char *)s->items[TR_DEF_STRING][i]->v));

	for (int p = 0; p < TR_NPARADIGMS; p++)
		if (s->paradigm_name[p] != UNDEF)
			W(otf2w_gdef_paradigm(g, (uint8_t)p, s->paradigm_name[p], paradigm_class((uint8_t)p)));

	/* System tree: machine -> one node per distinct host name. */
	uint32_t machine = 0, nnodes = 0;
	static uint32_t hosts[65536];   /* callers are serialised (registry lock or crash path) */
	W(otf2w_gdef_system_tree_node(g, machine, sid_find(s, "machine"), sid_find(s, "machine"), UNDEF));
	W(otf2w_gdef_system_tree_node_domain(g, machine, OTF2W_STD_MACHINE));
	/* no malloc for one process: the crash path (signal handler) comes here */
	static uint32_t proc_node_one[16];
	uint32_t *proc_node = s->nprocs <= 16 ? proc_node_one
					      : calloc(s->nprocs, sizeof(uint32_t));
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t k;
		for (k = 0; k < nnodes; k++)
			if (hosts[k] == s->procs[i].host)
				break;
		if (k == nnodes && nnodes < sizeof(hosts) / sizeof(hosts[0])) {
			hosts[nnodes++] = s->procs[i].host;
			W(otf2w_gdef_system_tree_node(g, 1 + k, s->procs[i].host, sid_find(s, "node"), machine));
			W(otf2w_gdef_system_tree_node_domain(g, 1 + k, OTF2W_STD_SHARED_MEMORY));
		}
		if (proc_node)
			proc_node[i] = 1 + (k < nnodes ? k : 0);
	}
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t creator = UNDEF;   /* the process that created it, when in the set */
		for (uint32_t j = 0; s->procs[i].creator >= 0 && j < s->nprocs; j++)
			creator = j != i && s->procs[j].rank == s->procs[i].creator ? j : creator;
		W(otf2w_gdef_location_group(g, i, s->procs[i].gname, OTF2W_LGROUP_PROCESS,
					    proc_node ? proc_node[i] : 1, creator));
	}
	if (proc_node != proc_node_one)
		free(proc_node);
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++)
			W(otf2w_gdef_location(g, out_loc(s, s->procs[i].locs[k].id), s->procs[i].locs[k].name,
					      OTF2W_LOC_CPU_THREAD, s->procs[i].locs[k].nevents, i));
	W(write_foreign(g, s));

	for (size_t o = 0; o < sizeof(tr_order) / sizeof(tr_order[0]); o++) {
		int c = tr_order[o];
		for (uint32_t i = 0; i < s->n[c]; i++)
			W(write_def(g, s, effective(s, s->items[c][i]), 0));
	}
	return err;
}

/* The local definitions as global definitions (non-MPI, fork child, or a
 * rank's standalone archive). crash: no lock, no malloc (signal handler). */
void tr_defs_write_global(otf2w_gdef_writer *g, int crash)
{
	struct tr_procinfo p;
	otf2w_status st;

	if (!g)
		return;
	if (!crash)
		tr_lock(&tr_reg_lock);
	/* no ClockOffset records in this archive: its own clock */
	int ncoffs = tr_ncoffs;
	tr_ncoffs = 0;
	int lp = local_proc(&p, crash);
	tr_ncoffs = ncoffs;
	if (lp == 0) {
		if (!crash)
			finalize_thread_comms(&p);
		struct tr_procinfo *saved = tr_local.procs;
		uint32_t savedn = tr_local.nprocs;
		tr_local.procs = &p;
		tr_local.nprocs = 1;
		st = write_set(g, &tr_local);
		tr_local.procs = saved;
		tr_local.nprocs = savedn;
		if (!crash)
			free(p.locs);
		if (st != OTF2W_OK && !crash)
			tr_log_error("writing the global definitions: %s", otf2w_status_str(st));
	}
	if (!crash)
		tr_unlock(&tr_reg_lock);
}

/* ---- pack / unpack ---- */

struct bbuf {
	uint8_t *p;
	size_t n, cap;
	int err;
	int fixed;   /* preallocated arena (crash path): never realloc */
};

static void bput(struct bbuf *b, const void *v, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap && b->fixed) {
		b->err = 1;
		return;
	}
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		while (nc < b->n + n)
			nc *= 2;
		uint8_t *np = realloc(b->p, nc);
		if (!np) {
			b->err = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void bput32(struct bbuf *b, uint32_t v) { bput(b, &v, 4); }
static void bput64(struct bbuf *b, uint64_t v) { bput(b, &v, 8); }

struct rbuf {
	const uint8_t *p;
	size_t n, off;
	int err;
};

static void bget(struct rbuf *r, void *v, size_t n)
{
	if (r->err || r->off + n > r->n) {
		r->err = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, r->p + r->off, n);
	r->off += n;
}

static uint32_t bget32(struct rbuf *r) { uint32_t v; bget(r, &v, 4); return v; }
static uint64_t bget64(struct rbuf *r) { uint64_t v; bget(r, &v, 8); return v; }

static void pack_set(struct bbuf *b, const struct defset *s)
{
	bput32(b, TR_DEFS_MAGIC);
	bput32(b, TR_DEFS_VERSION);
	bput32(b, s->nprocs);
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct tr_procinfo *p = &s->procs[i];
		bput32(b, (uint32_t)p->rank);
		bput32(b, p->pid);
		bput32(b, p->host);
		bput32(b, p->gname);
		bput32(b, (uint32_t)p->creator);
		bput64(b, p->t_first);
		bput64(b, p->t_last);
		bput64(b, p->resolution);
		bput64(b, p->realtime);
		bput32(b, p->nlocs);
		for (uint32_t k = 0; k < p->nlocs; k++) {
			bput64(b, p->locs[k].id);
			bput32(b, p->locs[k].name);
			bput64(b, p->locs[k].nevents);
		}
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		bput32(b, s->paradigm_name[i]);
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		bput32(b, s->n[c]);
		for (uint32_t i = 0; i < s->n[c]; i++) {
			const struct def *d = effective(s, s->items[c][i]);
			bput32(b, d->len);
			bput(b, d->v, def_bytes(d->cls, d->len));
		}
	}
	/* clock offsets of the (single) process of a local set */
	uint32_t nco = s == &tr_local ? (uint32_t)tr_ncoffs : 0;
	bput32(b, nco);
	for (uint32_t i = 0; i < nco; i++) {
		bput64(b, tr_coffs[i].time);
		bput64(b, (uint64_t)tr_coffs[i].offset);
		bput(b, &tr_coffs[i].stddev, 8);
	}
}

/* Append without deduplication (ids must stay as packed). */
static int set_append(struct defset *s, uint32_t cls, const void *data, uint32_t len)
{
	size_t nb = def_bytes(cls, len);
	if (s->count + 1 > s->nbuckets * 2 && set_grow_buckets(s))
		return -1;
	if (s->n[cls] == s->cap[cls]) {
		uint32_t nc = s->cap[cls] ? s->cap[cls] * 2 : 64;
		struct def **ni = realloc(s->items[cls], nc * sizeof(*ni));
		if (!ni)
			return -1;
		s->items[cls] = ni;
		s->cap[cls] = nc;
	}
	struct def *d = malloc(sizeof(*d) + ((nb + 7) & ~(size_t)7));
	if (!d)
		return -1;
	d->cls = cls;
	d->len = len;
	d->hash = hash_bytes(cls, data, nb);
	d->id = s->n[cls];
	memcpy(d->v, data, nb);
	d->hnext = s->buckets[d->hash & (s->nbuckets - 1)];
	s->buckets[d->hash & (s->nbuckets - 1)] = d;
	s->items[cls][s->n[cls]++] = d;
	s->count++;
	return 0;
}

static int unpack_set(const void *buf, size_t len, struct defset *s)
{
	struct rbuf r = { buf, len, 0, 0 };
	memset(s, 0, sizeof(*s));
	if (bget32(&r) != TR_DEFS_MAGIC || bget32(&r) != TR_DEFS_VERSION)
		return -1;
	s->nprocs = bget32(&r);
	if (r.err || s->nprocs > (1u << 24))
		return -1;
	s->procs = calloc(s->nprocs ? s->nprocs : 1, sizeof(*s->procs));
	if (!s->procs)
		return -1;
	for (uint32_t i = 0; i < s->nprocs && !r.err; i++) {
		struct tr_procinfo *p = &s->procs[i];
		p->rank = (int32_t)bget32(&r);
		p->pid = bget32(&r);
		p->host = bget32(&r);
		p->gname = bget32(&r);
		p->creator = (int32_t)bget32(&r);
		p->t_first = bget64(&r);
		p->t_last = bget64(&r);
		p->resolution = bget64(&r);
		p->realtime = bget64(&r);
		p->nlocs = bget32(&r);
		if (r.err || p->nlocs > (1u << 24))
			goto fail;
		p->locs = calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->locs));
		if (!p->locs)
			goto fail;
		for (uint32_t k = 0; k < p->nlocs; k++) {
			p->locs[k].id = bget64(&r);
			p->locs[k].name = bget32(&r);
			p->locs[k].nevents = bget64(&r);
		}
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		s->paradigm_name[i] = bget32(&r);
	for (int c = 0; c < TR_DEF_NCLASSES && !r.err; c++) {
		uint32_t n = bget32(&r);
		for (uint32_t i = 0; i < n && !r.err; i++) {
			uint32_t l = bget32(&r);
			size_t nb = def_bytes((uint32_t)c, l);
			if (r.err || r.off + nb > r.n) {
				r.err = 1;
				break;
			}
			if (set_append(s, (uint32_t)c, r.p + r.off, l))
				goto fail;
			r.off += nb;
		}
	}
	if (r.err)
		goto fail;
	if (r.off + 4 <= r.n) {
		uint32_t nco = bget32(&r);
		if (nco > 4096)
			goto fail;
		s->coffs = calloc(nco ? nco : 1, sizeof(*s->coffs));
		if (!s->coffs)
			goto fail;
		for (uint32_t i = 0; i < nco && !r.err; i++) {
			s->coffs[i].time = bget64(&r);
			s->coffs[i].offset = (int64_t)bget64(&r);
			bget(&r, &s->coffs[i].stddev, 8);
		}
		s->ncoffs = r.err ? 0 : nco;
	}
	return 0;
fail:
	set_free(s);
	return -1;
}

int tr_defs_pack(void **buf, size_t *len)
{
	struct bbuf b = { 0 };
	struct tr_procinfo p;

	*buf = NULL;
	*len = 0;
	/* definitions the modules add at the end (VT class groups, sampled
	 * calling contexts) must be in the packed (unified) set */
	tr_modules_fini();
	tr_lock(&tr_reg_lock);
	if (local_proc(&p, 0)) {
		tr_unlock(&tr_reg_lock);
		return -1;
	}
	finalize_thread_comms(&p);
	struct tr_procinfo *saved = tr_local.procs;
	uint32_t savedn = tr_local.nprocs;
	tr_local.procs = &p;
	tr_local.nprocs = 1;
	pack_set(&b, &tr_local);
	tr_local.procs = saved;
	tr_local.nprocs = savedn;
	tr_unlock(&tr_reg_lock);
	free(p.locs);
	if (b.err) {
		free(b.p);
		return -1;
	}
	*buf = b.p;
	*len = b.n;
	return 0;
}

/* ---- translation (merge and install) ---- */

/* The one COMM_LOCATIONS group per paradigm of the unified set. */
struct cl_union {
	int have;
	uint64_t name;   /* unified String id (UINT64_MAX: not inserted yet) */
	const char *name_str;
	uint64_t flags;
	uint32_t n, cap;
	uint64_t *m;
};

static void cl_add(struct cl_union *u, uint64_t loc)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (u->m[i] == loc)
			return;
	if (u->n == u->cap) {
		uint32_t nc = u->cap ? u->cap * 2 : 16;
		uint64_t *nm = realloc(u->m, nc * 8);
		if (!nm)
			return;
		u->m = nm;
		u->cap = nc;
	}
	u->m[u->n++] = loc;
}

static int cl_index(const struct cl_union *u, uint64_t loc)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (u->m[i] == loc)
			return (int)i;
	return -1;
}

/* The source set's COMM_LOCATIONS group of a paradigm. */
static const struct def *src_cl(const struct defset *s, uint64_t paradigm)
{
	for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
		const struct def *d = s->items[TR_DEF_GROUP][i];
		if (d->len >= 5 && d->v[1] == OTF2W_GROUP_COMM_LOCATIONS && d->v[2] == paradigm)
			return d;
	}
	return NULL;
}

struct xlate {
	const struct defset *src;
	uint32_t *map[TR_DEF_NCLASSES];   /* src id -> unified id */
	uint32_t group_index;             /* unified location group of src's process */
	struct cl_union *cl;              /* [TR_NPARADIGMS] */
};

static uint64_t xref(const struct xlate *x, int cls, uint64_t v)
{
	if (cls < 0 || v == UNDEF || v >= x->src->n[cls] || !x->map[cls])
		return v;
	return x->map[cls][v];
}

/* Translate d into out (same length); returns 0, or -1 if not translatable. */
static int translate(const struct xlate *x, const struct def *d, uint64_t *out)
{
	const char *sch = schema_of(d);
	for (uint32_t i = 0; i < d->len; i++) {
		char k = kind_at(d, sch, i);
		uint64_t v = d->v[i];
		if (k == 'V')
			out[i] = i > 0 ? xref(x, type_class(d->v[i - 1]), v) : v;
		else if (k == 'G')
			out[i] = v == UNDEF ? x->group_index : v;
		else
			out[i] = xref(x, kind_class(k), v);
	}
	if (d->cls == TR_DEF_GROUP && d->len >= 5) {
		uint64_t type = d->v[1], par = d->v[2];
		if (par < TR_NPARADIGMS && type == OTF2W_GROUP_COMM_LOCATIONS && x->cl[par].have) {
			/* replaced by the union: caller rebuilds (length differs) */
			return 1;
		}
		if (par < TR_NPARADIGMS && par != OTF2W_PARADIGM_MPI &&
		    (type == OTF2W_GROUP_COMM_GROUP || type == OTF2W_GROUP_COMM_SELF) && x->cl[par].have) {
			const struct def *scl = src_cl(x->src, par);
			if (scl) {
				for (uint32_t i = 5; i < d->len; i++) {
					uint64_t idx = d->v[i];
					if (idx < scl->v[4] && 5 + idx < scl->len) {
						int u = cl_index(&x->cl[par], scl->v[5 + idx]);
						if (u >= 0)
							out[i] = (uint64_t)u;
					}
				}
			}
		}
	}
	return 0;
}

/* Translate (and insert into u when insert, else look up) every definition
 * of src in dependency order, filling x->map. */
static int xlate_all(struct xlate *x, struct defset *u, int insert)
{
	const struct defset *s = x->src;
	uint64_t *tmp = NULL;
	size_t tcap = 0;
	int missing = 0;

	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		x->map[c] = calloc(s->n[c] ? s->n[c] : 1, sizeof(uint32_t));
		if (!x->map[c])
			return -1;
	}
	for (uint32_t i = 0; i < s->n[TR_DEF_STRING]; i++) {
		const struct def *d = s->items[TR_DEF_STRING][i];
		uint32_t id;
		if (insert) {
			id = set_insert(u, TR_DEF_STRING, d->v, d->len);
		} else {
			struct def *f = set_find(u, TR_DEF_STRING, d->v, d->len, d->hash);
			id = f ? f->id : UNDEF;
		}
		if (id == UNDEF)
			missing++;
		x->map[TR_DEF_STRING][i] = id == UNDEF ? i : id;
	}
	for (size_t o = 0; o < sizeof(tr_order) / sizeof(tr_order[0]); o++) {
		int c = tr_order[o];
		for (uint32_t i = 0; i < s->n[c]; i++) {
			const struct def *d = s->items[c][i];
			size_t need = d->len + 5;
			if (c == TR_DEF_GROUP && d->len >= 5 && d->v[2] < TR_NPARADIGMS)
				need += x->cl[d->v[2]].n;
			if (need > tcap) {
				free(tmp);
				tcap = need * 2;
				tmp = malloc(tcap * 8);
				if (!tmp)
					return -1;
			}
			uint32_t len = d->len;
			int r = translate(x, d, tmp);
			if (r == 1) {
				struct cl_union *cu = &x->cl[d->v[2]];
				if (cu->name == UINT64_MAX) {
					/* first use: the string after this input's strings, so a
					 * single input keeps its ids */
					if (insert) {
						cu->name = set_string(u, cu->name_str);
					} else {
						uint32_t l = (uint32_t)strlen(cu->name_str) + 1;
						struct def *f = set_find(u, TR_DEF_STRING, cu->name_str, l,
									 hash_bytes(TR_DEF_STRING, cu->name_str, l));
						cu->name = f ? f->id : UNDEF;
					}
				}
				tmp[0] = cu->name;
				tmp[1] = OTF2W_GROUP_COMM_LOCATIONS;
				tmp[2] = d->v[2];
				tmp[3] = cu->flags;
				tmp[4] = cu->n;
				memcpy(tmp + 5, cu->m, (size_t)cu->n * 8);
				len = 5 + cu->n;
			}
			uint32_t id;
			if (insert) {
				id = set_insert(u, (uint32_t)c, tmp, len);
			} else {
				struct def *f = set_find(u, (uint32_t)c, tmp, len,
							 hash_bytes((uint32_t)c, tmp, (size_t)len * 8));
				id = f ? f->id : UNDEF;
			}
			if (id == UNDEF)
				missing++;
			x->map[c][i] = id == UNDEF ? i : id;
		}
	}
	free(tmp);
	return missing;
}

static void xlate_free(struct xlate *x)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		free(x->map[c]);
}

static void cl_free(struct cl_union *cl)
{
	for (int p = 0; p < TR_NPARADIGMS; p++)
		free(cl[p].m);
}

int tr_defs_merge(const void *const *bufs, const size_t *lens, int n, void **out, size_t *out_len)
{
	struct defset *in = calloc(n > 0 ? (size_t)n : 1, sizeof(*in));
	int *order = calloc(n > 0 ? (size_t)n : 1, sizeof(int));
	struct defset u;
	struct cl_union cl[TR_NPARADIGMS];
	struct bbuf b = { 0 };
	int ret = -1, nin = 0;

	*out = NULL;
	*out_len = 0;
	memset(&u, 0, sizeof(u));
	memset(cl, 0, sizeof(cl));
	if (!in || !order)
		goto done;
	for (int i = 0; i < n; i++) {
		if (unpack_set(bufs[i], lens[i], &in[nin]) == 0)
			order[nin] = nin, nin++;
		else
			tr_log_error("MPI unification: definitions of input %d unreadable, skipped", i);
	}
	/* deterministic: by the rank of the first process of each input */
	for (int a = 1; a < nin; a++) {
		int x = order[a], k = a;
		int32_t rx = in[x].nprocs ? in[x].procs[0].rank : 0;
		while (k > 0 && (in[order[k - 1]].nprocs ? in[order[k - 1]].procs[0].rank : 0) > rx) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = x;
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		u.paradigm_name[i] = UNDEF;
	/* pass 1: the COMM_LOCATIONS unions */
	for (int k = 0; k < nin; k++) {
		const struct defset *s = &in[order[k]];
		for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
			const struct def *d = s->items[TR_DEF_GROUP][i];
			if (d->len < 5 || d->v[1] != OTF2W_GROUP_COMM_LOCATIONS || d->v[2] >= TR_NPARADIGMS)
				continue;
			struct cl_union *cu = &cl[d->v[2]];
			if (!cu->have) {
				cu->have = 1;
				cu->name = UINT64_MAX;
				cu->name_str = set_str(s, (uint32_t)d->v[0]);
				cu->flags = d->v[3];
			}
			for (uint32_t m = 5; m < d->len; m++)
				cl_add(cu, d->v[m]);
		}
	}
	/* pass 2: every input in rank order */
	uint32_t nprocs = 0;
	for (int k = 0; k < nin; k++)
		nprocs += in[order[k]].nprocs;
	u.procs = calloc(nprocs ? nprocs : 1, sizeof(*u.procs));
	if (!u.procs)
		goto done;
	for (int k = 0; k < nin; k++) {
		const struct defset *s = &in[order[k]];
		struct xlate x = { .src = s, .group_index = u.nprocs, .cl = cl };
		if (xlate_all(&x, &u, 1) < 0) {
			xlate_free(&x);
			goto done;
		}
		for (int p = 0; p < TR_NPARADIGMS; p++)
			if (s->paradigm_name[p] != UNDEF && u.paradigm_name[p] == UNDEF)
				u.paradigm_name[p] = (uint32_t)xref(&x, TR_DEF_STRING, s->paradigm_name[p]);
		for (uint32_t i = 0; i < s->nprocs; i++) {
			struct tr_procinfo *p = &u.procs[u.nprocs++];
			*p = s->procs[i];
			p->host = (uint32_t)xref(&x, TR_DEF_STRING, p->host);
			p->gname = (uint32_t)xref(&x, TR_DEF_STRING, p->gname);
			p->locs = calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->locs));
			if (!p->locs) {
				p->nlocs = 0;
				continue;
			}
			for (uint32_t l = 0; l < p->nlocs; l++) {
				p->locs[l] = s->procs[i].locs[l];
				p->locs[l].name = (uint32_t)xref(&x, TR_DEF_STRING, p->locs[l].name);
			}
		}
		xlate_free(&x);
	}
	/* strings the global definitions need (after the inputs' strings) */
	set_string(&u, "");
	set_string(&u, "machine");
	set_string(&u, "node");
	set_string(&u, "MPI Rank (not in this archive)");
	set_string(&u, "Master thread");
	set_string(&u, "Thread");
	pack_set(&b, &u);
	if (!b.err) {
		*out = b.p;
		*out_len = b.n;
		b.p = NULL;
		ret = 0;
	}
done:
	free(b.p);
	for (int i = 0; i < nin; i++)
		set_free(&in[i]);
	free(in);
	free(order);
	set_free(&u);
	cl_free(cl);
	return ret;
}

/* The one COMM_LOCATIONS group per paradigm of a unified set (below). */
static void cl_from_set(const struct defset *u, struct cl_union *cl);

int tr_defs_install_unified(const void *buf, size_t len, int write_global)
{
	struct defset *u = calloc(1, sizeof(*u));
	struct cl_union cl[TR_NPARADIGMS];
	struct tr_procinfo p;
	int missing;

	if (!u)
		return -1;
	if (unpack_set(buf, len, u)) {
		free(u);
		tr_log_error("MPI unification: unified definitions unreadable");
		return -1;
	}
	cl_from_set(u, cl);
	tr_lock(&tr_reg_lock);
	if (local_proc(&p, 0) == 0) {
		finalize_thread_comms(&p);
		free(p.locs);
	}
	uint32_t gi = 0;
	for (uint32_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].rank == tr_proc.rank && u->procs[i].pid == (uint32_t)getpid())
			gi = i;
	struct xlate x = { .src = &tr_local, .group_index = gi, .cl = cl };
	missing = xlate_all(&x, u, 0);
	if (missing < 0) {
		xlate_free(&x);
		tr_unlock(&tr_reg_lock);
		set_free(u);
		free(u);
		cl_free(cl);
		return -1;
	}
	if (missing > 0)
		tr_log_warn("MPI unification: %d local definitions missing in the unified set", missing);
	if (tr_unified) {
		set_free(tr_unified);
		free(tr_unified);
	}
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		free(tr_umap[c]);
		tr_umap[c] = x.map[c];
		x.map[c] = NULL;
	}
	tr_unified = u;
	tr_unified_write_global = write_global;
	tr_g.unified = 1;
	tr_unlock(&tr_reg_lock);
	cl_free(cl);
	tr_defs_installed_hook();
	return 0;
}

/* ---- unified output (MPI) ---- */

static const int tr_map_type[TR_DEF_NCLASSES] = {
	[TR_DEF_STRING] = OTF2W_MAP_STRING + 1, [TR_DEF_ATTRIBUTE] = OTF2W_MAP_ATTRIBUTE + 1,
	[TR_DEF_REGION] = OTF2W_MAP_REGION + 1, [TR_DEF_GROUP] = OTF2W_MAP_GROUP + 1,
	[TR_DEF_METRIC] = OTF2W_MAP_METRIC + 1, [TR_DEF_COMM] = OTF2W_MAP_COMM + 1,
	[TR_DEF_PARAMETER] = OTF2W_MAP_PARAMETER + 1, [TR_DEF_RMA_WIN] = OTF2W_MAP_RMA_WIN + 1,
	[TR_DEF_SOURCE_CODE_LOCATION] = OTF2W_MAP_SOURCE_CODE_LOCATION + 1,
	[TR_DEF_CALLING_CONTEXT] = OTF2W_MAP_CALLING_CONTEXT + 1,
	[TR_DEF_INTERRUPT_GENERATOR] = OTF2W_MAP_INTERRUPT_GENERATOR + 1,
	[TR_DEF_IO_FILE] = OTF2W_MAP_IO_FILE + 1, [TR_DEF_IO_HANDLE] = OTF2W_MAP_IO_HANDLE + 1,
};

/* Mapping tables (non-identity entries only, never empty) and clock
 * offsets into a local def writer. */
static void write_maps(otf2w_def_writer *dw, uint32_t *const *maps, const uint32_t *n,
		       const struct tr_coff *co, uint32_t nco)
{
	for (int c = 0; maps && c < TR_DEF_NCLASSES; c++) {
		if (!tr_map_type[c] || !maps[c])
			continue;
		uint32_t nonid = 0;
		for (uint32_t i = 0; i < n[c]; i++)
			nonid += maps[c][i] != i;
		if (!nonid)
			continue;
		otf2w_id_map *m = otf2w_id_map_new(1, nonid);
		if (!m)
			continue;
		for (uint32_t i = 0; i < n[c]; i++)
			if (maps[c][i] != i)
				otf2w_id_map_add(m, i, maps[c][i]);
		otf2w_status st = otf2w_ldef_mapping_table(dw, (uint8_t)(tr_map_type[c] - 1), m);
		if (st)
			tr_log_error("writing a mapping table: %s", otf2w_status_str(st));
		otf2w_id_map_delete(m);
	}
	for (uint32_t i = 0; i < nco; i++)
		otf2w_ldef_clock_offset(dw, co[i].time, co[i].offset, co[i].stddev);
}

/* tr_def_calling_context_map: event ids -> CallingContext ids */
static uint32_t *tr_cc_map;
static uint32_t tr_cc_nmap;

void tr_def_calling_context_map(const uint32_t *map, uint32_t n)
{
	uint32_t *m = n ? malloc(sizeof(*m) * n) : NULL;
	if (n && !m)
		return;
	if (n)
		memcpy(m, map, sizeof(*m) * n);
	tr_lock(&tr_reg_lock);
	free(tr_cc_map);
	tr_cc_map = m;
	tr_cc_nmap = n;
	tr_unlock(&tr_reg_lock);
}

/* Without unification: the CALLING_CONTEXT mapping table of
 * tr_def_calling_context_map in every location's local definitions. */
void tr_defs_write_cc_maps(otf2w_archive *a)
{
	tr_lock(&tr_reg_lock);
	if (!tr_g.unified && tr_cc_map) {
		for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
			otf2w_def_writer *dw;
			if (otf2w_archive_get_def_writer(a, t->location, &dw) != OTF2W_OK)
				continue;
			uint32_t nonid = 0;
			for (uint32_t i = 0; i < tr_cc_nmap; i++)
				nonid += tr_cc_map[i] != i;
			otf2w_id_map *m = nonid ? otf2w_id_map_new(1, nonid) : NULL;
			if (m) {
				for (uint32_t i = 0; i < tr_cc_nmap; i++)
					if (tr_cc_map[i] != i)
						otf2w_id_map_add(m, i, tr_cc_map[i]);
				if (otf2w_ldef_mapping_table(dw, OTF2W_MAP_CALLING_CONTEXT, m) != OTF2W_OK)
					tr_log_error("writing a calling-context mapping table failed");
				otf2w_id_map_delete(m);
			}
			otf2w_archive_close_def_writer(a, dw);
		}
	}
	tr_unlock(&tr_reg_lock);
}

void tr_defs_write_local_to(otf2w_def_writer *dw)
{
	tr_lock(&tr_reg_lock);
	write_maps(dw, tr_g.unified ? tr_umap : NULL, tr_local.n, tr_coffs, (uint32_t)tr_ncoffs);
	tr_unlock(&tr_reg_lock);
}

/* Totals of the unified set for rank 0's exit line: ranks, locations and
 * events of the whole run. Events are those counted when each rank packed
 * its definitions (MPI_Finalize); for this rank, final_events (counted at
 * exit) replaces its packed count. Returns 0 when there is no unified set. */
int tr_defs_unified_totals(uint64_t final_events, uint32_t *nranks, uint32_t *nlocs, uint64_t *events)
{
	int ok = 0;
	*nranks = *nlocs = 0;
	*events = 0;
	tr_lock(&tr_reg_lock);
	if (tr_unified) {
		ok = 1;
		for (uint32_t i = 0; i < tr_unified->nprocs; i++) {
			const struct tr_procinfo *p = &tr_unified->procs[i];
			uint64_t ev = 0;
			for (uint32_t k = 0; k < p->nlocs; k++)
				ev += p->locs[k].nevents;
			if (p->rank == tr_proc.rank)
				ev = final_events > ev ? final_events : ev;
			(*nranks)++;
			*nlocs += p->nlocs;
			*events += ev;
		}
	}
	tr_unlock(&tr_reg_lock);
	return ok;
}

/* This process's time range so far on the reference clock (every event
 * and clock offset; call while the event writers exist). */
void tr_defs_local_range(uint64_t *first, uint64_t *last)
{
	struct tr_procinfo p;
	*first = *last = 0;
	tr_lock(&tr_reg_lock);
	if (local_proc(&p, 0) == 0) {
		*first = p.t_first;
		*last = p.t_last;
		free(p.locs);
	}
	tr_unlock(&tr_reg_lock);
}

/* Widen the time range of a rank of the unified set (its final range,
 * known only when it ended: events after MPI_Finalize). */
void tr_defs_unified_widen(int32_t rank, uint64_t first, uint64_t last)
{
	tr_lock(&tr_reg_lock);
	for (uint32_t i = 0; tr_unified && i < tr_unified->nprocs; i++) {
		struct tr_procinfo *p = &tr_unified->procs[i];
		if (p->rank != rank)
			continue;
		if (first < p->t_first)
			p->t_first = first;
		if (last > p->t_last)
			p->t_last = last;
	}
	tr_unlock(&tr_reg_lock);
}

/* Id of one of this process's locations in the unified archive, or
 * UINT64_MAX when it is not in it (created after unification). */
uint64_t tr_defs_unified_gid(uint64_t loc)
{
	uint64_t g = UINT64_MAX;
	tr_lock(&tr_reg_lock);
	if (tr_unified) {
		tr_nforeign = 0;
		for (uint32_t i = 0; i < tr_unified->nprocs; i++) {
			const struct tr_procinfo *p = &tr_unified->procs[i];
			if (p->rank != tr_proc.rank || p->pid != (uint32_t)getpid())
				continue;
			for (uint32_t k = 0; k < p->nlocs; k++)
				if (p->locs[k].id == loc)
					g = set_gid(tr_unified, loc);
		}
	}
	tr_unlock(&tr_reg_lock);
	return g;
}

int tr_defs_unified_write_global(void)
{
	return tr_g.unified && tr_unified_write_global;
}

/* The unified global definitions (rank 0). Returns the unified locations
 * through the callback (for the per-location links). */
void tr_defs_write_unified(otf2w_gdef_writer *g, void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *),
			   void *ud)
{
	tr_lock(&tr_reg_lock);
	if (tr_unified) {
		tr_gid_set = tr_unified;
		otf2w_status st = write_set(g, tr_unified);
		tr_gid_set = NULL;
		if (st)
			tr_log_error("writing the unified definitions: %s", otf2w_status_str(st));
		uint64_t gid = 0;
		for (uint32_t i = 0; each_loc && i < tr_unified->nprocs; i++)
			for (uint32_t k = 0; k < tr_unified->procs[i].nlocs; k++)
				each_loc(gid++, tr_unified->procs[i].locs[k].id, tr_unified->procs[i].rank, ud);
	}
	tr_unlock(&tr_reg_lock);
}

int tr_defs_have_clock_offsets(void)
{
	return tr_ncoffs > 0;
}

uint32_t tr_def_calling_context_new(uint32_t region, uint32_t scl, uint32_t parent)
{
	uint64_t v[3] = { region, scl, parent };
	tr_lock(&tr_reg_lock);
	uint32_t id = tr_local.n[TR_DEF_CALLING_CONTEXT];
	if (set_append(&tr_local, TR_DEF_CALLING_CONTEXT, v, 3))
		id = UNDEF;
	tr_unlock(&tr_reg_lock);
	return id;
}

/* ---- offline unification (tracer-merge) ---- */

static void cl_from_set(const struct defset *u, struct cl_union *cl)
{
	memset(cl, 0, sizeof(*cl) * TR_NPARADIGMS);
	for (uint32_t i = 0; i < u->n[TR_DEF_GROUP]; i++) {
		const struct def *d = u->items[TR_DEF_GROUP][i];
		if (d->len < 5 || d->v[1] != OTF2W_GROUP_COMM_LOCATIONS || d->v[2] >= TR_NPARADIGMS)
			continue;
		struct cl_union *cu = &cl[d->v[2]];
		if (cu->have)
			continue;
		cu->have = 1;
		cu->name = d->v[0];
		cu->flags = d->v[3];
		for (uint32_t m = 5; m < d->len; m++)
			cl_add(cu, d->v[m]);
	}
}

/* Local -> unified maps of one packed local set against a packed unified set. */
int tr_defs_map_buf(const void *ubuf, size_t ulen, const void *lbuf, size_t llen, struct tr_mapped *out)
{
	struct defset l;
	struct cl_union cl[TR_NPARADIGMS];
	/* tracer-merge maps every process part against one unified set: it is
	 * unpacked once (kept with a copy of its bytes to compare) */
	static struct defset u;
	static void *u_bytes;
	static size_t u_len;
	memset(out, 0, sizeof(*out));
	if (!u_bytes || u_len != ulen || memcmp(u_bytes, ubuf, ulen)) {
		if (u_bytes)
			set_free(&u);
		free(u_bytes);
		u_bytes = malloc(ulen ? ulen : 1);
		if (!u_bytes || unpack_set(ubuf, ulen, &u)) {
			free(u_bytes);
			u_bytes = NULL;
			return -1;
		}
		memcpy(u_bytes, ubuf, ulen);
		u_len = ulen;
	}
	if (unpack_set(lbuf, llen, &l))
		return -1;
	cl_from_set(&u, cl);
	uint32_t gi = 0;
	if (l.nprocs) {
		for (uint32_t i = 0; i < u.nprocs; i++)
			if (u.procs[i].rank == l.procs[0].rank && u.procs[i].pid == l.procs[0].pid)
				gi = i;
		out->rank = l.procs[0].rank;
		out->nlocs = l.procs[0].nlocs;
		out->locs = calloc(out->nlocs ? out->nlocs : 1, sizeof(uint64_t));
		out->gids = calloc(out->nlocs ? out->nlocs : 1, sizeof(uint64_t));
		tr_nforeign = 0;
		for (uint32_t k = 0; out->locs && out->gids && k < out->nlocs; k++) {
			out->locs[k] = l.procs[0].locs[k].id;
			out->gids[k] = set_gid(&u, out->locs[k]);
		}
	}
	struct xlate x = { .src = &l, .group_index = gi, .cl = cl };
	int missing = xlate_all(&x, &u, 0);
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		out->map[c] = x.map[c];
		out->n[c] = l.n[c];
	}
	out->coffs = l.coffs;
	out->ncoffs = l.ncoffs;
	l.coffs = NULL;
	set_free(&l);
	cl_free(cl);
	return missing < 0 || !out->locs || !out->gids ? -1 : missing;
}

void tr_defs_mapped_free(struct tr_mapped *m)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		free(m->map[c]);
	free(m->locs);
	free(m->gids);
	free(m->coffs);
	memset(m, 0, sizeof(*m));
}

void tr_defs_write_mapped(otf2w_def_writer *dw, const struct tr_mapped *m)
{
	write_maps(dw, m->map, m->n, m->coffs, m->ncoffs);
}

int tr_defs_write_unified_buf(otf2w_gdef_writer *g, const void *ubuf, size_t ulen,
			      void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *), void *ud)
{
	struct defset u;
	if (unpack_set(ubuf, ulen, &u))
		return -1;
	tr_gid_set = &u;
	otf2w_status st = write_set(g, &u);
	tr_gid_set = NULL;
	uint64_t gid = 0;
	for (uint32_t i = 0; each_loc && i < u.nprocs; i++)
		for (uint32_t k = 0; k < u.procs[i].nlocs; k++)
			each_loc(gid++, u.procs[i].locs[k].id, u.procs[i].rank, ud);
	set_free(&u);
	return st == OTF2W_OK ? 0 : -1;
}

/* The packed local definitions into a file (MPI ranks, for tracer-merge).
 * crash: no lock, no malloc (arena prepared by tr_defs_arena_init). */
static uint8_t *tr_arena;
static size_t tr_arena_size;

void tr_defs_arena_init(void)
{
	if (tr_arena)
		return;
	size_t sz = 256u << 20;   /* virtual only: pages are touched on use */
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED) {
		tr_arena = p;
		tr_arena_size = sz;
	}
}

int tr_defs_save(const char *path, int crash)
{
	struct bbuf b = { 0 };
	struct tr_procinfo p;
	int ret = -1;

	if (crash) {
		if (!tr_arena)
			return -1;
		b.p = tr_arena;
		b.cap = tr_arena_size;
		b.fixed = 1;
	} else {
		tr_lock(&tr_reg_lock);
	}
	if (local_proc(&p, crash) == 0) {
		struct tr_procinfo *saved = tr_local.procs;
		uint32_t savedn = tr_local.nprocs;
		tr_local.procs = &p;
		tr_local.nprocs = 1;
		pack_set(&b, &tr_local);
		tr_local.procs = saved;
		tr_local.nprocs = savedn;
		if (!crash)
			free(p.locs);
		if (!b.err) {
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0) {
				size_t off = 0;
				while (off < b.n) {
					ssize_t w = write(fd, b.p + off, b.n - off);
					if (w <= 0)
						break;
					off += (size_t)w;
				}
				ret = close(fd) == 0 && off == b.n ? 0 : -1;
			}
		}
	}
	if (!crash) {
		tr_unlock(&tr_reg_lock);
		free(b.p);
	}
	return ret;
}
