/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_defs.h - definition classes and the unification of packed definition
 * sets, usable outside the traced process: no process state behind these
 * functions (preload/defs/defset.c, defs_write.c, defs_pack.c, defs_unify.c).
 * libtracer.so (MPI_Finalize) and tools/tracer-merge (offline, after a run
 * that never reached it) run the same code.
 */
#ifndef TR_DEFS_H
#define TR_DEFS_H

#include <stddef.h>
#include <stdint.h>
#include "otf2w.h"

/* Classes of the definition registry (ids are dense from 0 per class): the
 * one list, read by preload/defs/gen_defs.py (a class TR_DEF_FOO_BAR stores the
 * record FooBar unless its OPTIONS there say otherwise). */
enum tr_def_class {
	TR_DEF_STRING = 0, TR_DEF_ATTRIBUTE, TR_DEF_REGION, TR_DEF_GROUP, TR_DEF_COMM,
	TR_DEF_RMA_WIN, TR_DEF_PARAMETER, TR_DEF_METRIC_MEMBER, TR_DEF_METRIC,
	TR_DEF_METRIC_CLASS_RECORDER, TR_DEF_SOURCE_CODE_LOCATION, TR_DEF_CALLING_CONTEXT,
	TR_DEF_CALLING_CONTEXT_PROPERTY, TR_DEF_INTERRUPT_GENERATOR, TR_DEF_CART_DIMENSION,
	TR_DEF_CART_TOPOLOGY, TR_DEF_CART_COORDINATE, TR_DEF_CALLSITE, TR_DEF_CALLPATH,
	TR_DEF_LOCATION_PROPERTY, TR_DEF_LOCATION_GROUP_PROPERTY,
	TR_DEF_IO_PARADIGM, TR_DEF_IO_FILE, TR_DEF_IO_FILE_PROPERTY, TR_DEF_IO_HANDLE,
	TR_DEF_IO_PRE_CREATED_HANDLE_STATE,
	TR_DEF_NCLASSES
};

/* The description of a Region by which a TRACER_DURABLE snapshot names a
 * sampled address it has read no symbol for (sampling/symbols.c): its
 * name is "0x<address in the file> [<object's base name>]", its source
 * file the object file's path (or "0x<address>" and no file outside every
 * known object). `tracer recover` names such a region from the file's
 * symbols and describes it so (tools/recover_syms.c). */
#define TR_DEFS_PLACEHOLDER "not resolved at the last durability tick"
#define TR_DEFS_PLACEHOLDER_READ "named by tracer recover from the symbols of its object file (the process was " \
	"killed before the tracer read them; an address no symbol covers keeps its address)"

/* Where this code reports errors (an unreadable input, a mapping table that
 * could not be written): the core sets tr_log_error, a tool its own
 * function; NULL (the default) is silent. */
void tr_defs_set_error_log(void (*log)(const char *fmt, ...));

/* Merge packed sets (tr_defs_pack, one per process) into a unified packed
 * set: content-deduplicated, in rank order, so every rank agrees. */
int tr_defs_merge(const void *const *bufs, const size_t *lens, int n, void **out, size_t *out_len);

/* One process's local -> unified maps (offline unification). */
struct tr_coff;
struct tr_mapped {
	int32_t rank;
	uint32_t nlocs;
	uint64_t *locs;
	uint64_t *gids;        /* ids of locs in the unified archive */
	uint32_t n[TR_DEF_NCLASSES];
	uint32_t *map[TR_DEF_NCLASSES];
	struct tr_coff *coffs;
	uint32_t ncoffs;
	uint64_t evt_chunk, def_chunk;   /* the part's chunk sizes (0: unknown) */
};
/* Maps of the packed local set lbuf against the packed unified set ubuf.
 * Returns the number of local definitions missing in the unified set, or -1. */
int tr_defs_map_buf(const void *ubuf, size_t ulen, const void *lbuf, size_t llen, struct tr_mapped *out);
void tr_defs_mapped_free(struct tr_mapped *m);
/* Its mapping tables and clock offsets into a location's local definitions. */
void tr_defs_write_mapped(otf2w_def_writer *dw, const struct tr_mapped *m);
/* The packed unified set as global definitions; each_loc gets every
 * location (unified id, local id, rank). Returns 0 or -1. */
int tr_defs_write_unified_buf(otf2w_gdef_writer *g, const void *ubuf, size_t ulen,
			      void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *), void *ud);

#endif /* TR_DEFS_H */
