/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defset.h - the definition set: the data structure behind the registry
 * (preload/defs/defs.c) and the unification (defs_unify.c), shared by the files
 * of the definition code only. Nothing here knows the process (no tr_g,
 * no tr_proc): tools/tracer-merge compiles these files in.
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
 * d CartDimension, t CartTopology, p Callpath, f IoFile, h IoHandle, V typed
 * value (its OTF2 type is the previous value), G location group of the
 * defining process. "*k" at the end: an array of kind k whose length is the
 * previous value.
 */
#ifndef TR_DEFSET_H
#define TR_DEFSET_H

#include <stddef.h>
#include <stdint.h>
#include "otf2w.h"
#include "otf2w_sys.h"
#include "tr_defs.h"

#define UNDEF OTF2W_UNDEFINED_UINT32
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
	/* definitions added or replaced so far (never decreases, also not at
	 * tr_ds_truncate): read without the owner's lock (durable.c) */
	uint64_t changes;
	uint32_t paradigm_name[TR_NPARADIGMS];  /* String id or UNDEF: paradigm used */
	struct tr_procinfo *procs;
	uint32_t nprocs;
	struct tr_coff *coffs;   /* unpacked clock offsets */
	uint32_t ncoffs;
	/* the chunk sizes of the process's archive (packed last: a process
	 * tree's part has no anchor, tracer-merge reads them here; 0: unknown) */
	uint64_t evt_chunk, def_chunk;
	/* The owner's view of a stored definition for writing and packing
	 * (the registry completes its thread comm placeholders); NULL: as stored. */
	const struct def *(*view)(const struct defset *s, const struct def *d);
};

static inline const struct def *tr_ds_view(const struct defset *s, const struct def *d)
{
	return s->view ? s->view(s, d) : d;
}

/* ---- defset.c: schemas, hashing, set operations ---- */

extern const int tr_ds_order[];        /* dependency order for writing and merging */
extern const size_t tr_ds_norder;
extern const char *const tr_ds_paradigm_names[TR_NPARADIGMS];
int tr_ds_kind_class(char k);          /* class of a schema kind, -1: plain */
int tr_ds_type_class(uint64_t type);   /* class of a reference-typed value, -1: plain */
const char *tr_ds_schema_of(const struct def *d);
char tr_ds_kind_at(const struct def *d, const char *sch, uint32_t i);
uint32_t tr_ds_hash(uint32_t cls, const void *p, size_t n);
size_t tr_ds_def_bytes(uint32_t cls, uint32_t len);
struct def *tr_ds_find(const struct defset *s, uint32_t cls, const void *data, uint32_t len, uint32_t h);
/* Insert (dedup) a definition; returns its id or UNDEF on allocation failure. */
uint32_t tr_ds_insert(struct defset *s, uint32_t cls, const void *data, uint32_t len);
/* Append without deduplication (ids stay as given): 0 or -1. */
int tr_ds_append(struct defset *s, uint32_t cls, const void *data, uint32_t len);
/* Place n definitions the caller owns (allocated with otf2w_sys.malloc,
 * their values final) after the set's own of class cls, ids from there on:
 * found by no tr_ds_find, taken out again by tr_ds_truncate without being
 * freed. 0 or -1 (no memory). */
int tr_ds_splice(struct defset *s, uint32_t cls, struct def *const *defs, uint32_t n);
/* Drop the definitions after the first n[cls] of every class. */
void tr_ds_truncate(struct defset *s, const uint32_t n[TR_DEF_NCLASSES]);
/* Replace the content of an existing definition. */
void tr_ds_replace(struct defset *s, uint32_t cls, uint32_t id, const uint64_t *v, uint32_t len);
void tr_ds_free(struct defset *s);
uint32_t tr_ds_string(struct defset *s, const char *str);
const char *tr_ds_str(const struct defset *s, uint32_t id);
uint32_t tr_ds_sid_find(const struct defset *s, const char *str);   /* no insertion; UNDEF if absent */
uint8_t tr_ds_paradigm_class(uint8_t p);
void tr_ds_use_paradigm(struct defset *s, uint64_t p);

/* ---- defs_write.c: a set as global definitions, mapping tables ---- */

/* Write a whole def set (with its processes) as the global definitions.
 * renumber: location ids sequential (a unified archive); res: clock
 * resolution when no process gives one. Crash-path safe for one process. */
otf2w_status tr_ds_write_set(otf2w_gdef_writer *g, const struct defset *s, int renumber, uint64_t res);
/* Id of a location of the set's processes in a unified archive (id itself
 * when it is not one of them). */
uint64_t tr_ds_location_gid(const struct defset *s, uint64_t id);
/* Mapping tables (non-identity entries only) and clock offsets into a
 * local def writer. */
void tr_ds_write_maps(otf2w_def_writer *dw, uint32_t *const *maps, const uint32_t *n,
		      const struct tr_coff *co, uint32_t nco);

/* ---- defs_pack.c: the packed form (tr_defs_pack, .tdefs files) ---- */

struct tr_bbuf {
	uint8_t *p;
	size_t n, cap;
	int err;
	int fixed;   /* preallocated arena (crash path): never realloc */
};
void tr_ds_pack(struct tr_bbuf *b, const struct defset *s);
int tr_ds_unpack(const void *buf, size_t len, struct defset *s);

/* ---- defs_unify.c ---- */

/* Maps of src (a local set) into the unified set u (look-up only): map[c]
 * receives a malloc'ed array per class. group_index: u's location group
 * of src's process. Returns the number of definitions missing in u, or -1. */
int tr_ds_map_into(const struct defset *src, const struct defset *u, uint32_t group_index,
		   uint32_t *map[TR_DEF_NCLASSES]);

/* Error log set by tr_defs_set_error_log (NULL: silent). */
extern void (*tr_ds_error_log)(const char *fmt, ...);
#define tr_ds_error(...) do { if (tr_ds_error_log) tr_ds_error_log(__VA_ARGS__); } while (0)

#endif /* TR_DEFSET_H */
