/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_registry.h - the definitions registry (regions, strings, groups,
 * communicators, calling contexts; thread-safe, never hot): part of
 * tracer.h.
 */
#ifndef TR_REGISTRY_H
#define TR_REGISTRY_H

#include "tr_defs.h"
#include "tr_module.h"

/* ---- definitions registry -------------------------------------------------------------
 * Thread-safe (registry lock), never on the hot path: wrappers define their
 * regions once (e.g. at init or first use, cached in a static). Every call
 * deduplicates by content, so calling twice with the same arguments returns
 * the same id. Ids are process-local and dense from 0 per class; they are
 * what the event writers record. With MPI they are unified at finalize
 * (wrappers/mpi) and mapping tables translate them.
 */
uint32_t tr_def_string(const char *s);
uint32_t tr_def_region(const char *name, const char *canonical_name, const char *description,
		       uint8_t role, uint8_t paradigm, uint32_t flags,
		       const char *source_file, uint32_t begin_line, uint32_t end_line);
uint32_t tr_def_attribute(const char *name, const char *description, uint8_t type);
uint32_t tr_def_source_code_location(const char *file, uint32_t line);
uint32_t tr_def_calling_context(uint32_t region, uint32_t scl, uint32_t parent);
uint32_t tr_def_interrupt_generator(const char *name, uint8_t mode, uint8_t base, int64_t exponent, uint64_t period);
uint32_t tr_def_metric_member(const char *name, const char *description, uint8_t metric_type,
			      uint8_t metric_mode, uint8_t value_type, uint8_t base, int64_t exponent,
			      const char *unit);
uint32_t tr_def_metric_class(uint32_t n, const uint32_t *members, uint8_t occurrence, uint8_t recorder_kind);
void tr_def_metric_class_recorder(uint32_t metric_class, uint64_t location);
/* Groups: members are ranks (COMM_GROUP/COMM_SELF) or location ids (COMM_LOCATIONS/LOCATIONS). */
uint32_t tr_def_group(const char *name, uint8_t group_type, uint8_t paradigm, uint32_t flags,
		      uint32_t n, const uint64_t *members);
uint32_t tr_def_comm(const char *name, uint32_t group, uint32_t parent, uint32_t flags);
uint32_t tr_def_inter_comm(const char *name, uint32_t group_a, uint32_t group_b, uint32_t common_comm, uint32_t flags);
uint32_t tr_def_rma_win(const char *name, uint32_t comm, uint32_t flags);
uint32_t tr_def_cart_dimension(const char *name, uint32_t size, uint8_t periodic);
uint32_t tr_def_cart_topology(const char *name, uint32_t comm, uint32_t ndims, const uint32_t *dims);
void tr_def_cart_coordinate(uint32_t topology, uint32_t rank, uint32_t ndims, const uint32_t *coords);
uint32_t tr_def_callsite(const char *file, uint32_t line, uint32_t entered_region, uint32_t left_region);
/* A Comm over the locations of this process for a thread paradigm (PTHREAD
 * thread contingent, ARGOBOTS/other thread teams); created once. */
uint32_t tr_def_thread_comm(uint8_t paradigm, const char *name);
/* I/O (wrappers/io). IoParadigm: `self` is a fixed id per paradigm chosen by
 * the module (the same in every process, not mapped), with the VERSION
 * property when version != NULL. IoRegularFile (directory 0) / IoDirectory
 * (1): scope is this host's system tree node. IoHandle: name is a String id
 * (tr_def_string); `unique` only keeps handles apart that are otherwise
 * equal (not written). */
void tr_def_io_paradigm(uint8_t self, const char *identification, const char *name, uint8_t io_class,
			uint32_t flags, const char *version);
uint32_t tr_def_io_file(const char *name, int directory);
uint32_t tr_def_io_handle(uint32_t name_string, uint32_t file, uint8_t io_paradigm, uint32_t flags,
			  uint32_t comm, uint32_t parent, uint64_t unique);
void tr_def_io_pre_created_handle_state(uint32_t handle, uint8_t mode, uint32_t status_flags);
/* Properties attached at shut-down. */
void tr_def_location_property(uint64_t location, const char *name, const char *value);

/* Generic view of the registry for MPI unification (wrappers/mpi). Each
 * definition is one tr_def_rec; fields hold ids (of the class given by the
 * field kind table tr_def_field_kinds) or plain values; strings are String
 * ids. Iteration and id remapping are done under the registry lock. */
/* enum tr_def_class: tr_defs.h */
/* Serialize all local definitions into a malloc'ed self-describing buffer
 * (strings inline), and the inverse used by the unifier. Format private to
 * preload/defs/defs_pack.c; the unifier treats the buffers as opaque and merges them
 * with tr_defs_merge. */
int tr_defs_pack(void **buf, size_t *len);
/* tr_defs_merge (tr_defs.h) merges packed buffers of several ranks. */
/* Install the unified set: this process then writes the unified global
 * definitions (rank 0) and mapping tables local -> unified for all its
 * locations. */
int tr_defs_install_unified(const void *buf, size_t len);

/* ClockOffset (MPI clock synchronisation) for every location of this
 * process; the offsets recorded before tr_defs_install_unified() go into the
 * unified archive's local definitions (times must increase; at least two
 * are needed for the reader to apply them). */
void tr_def_clock_offset(uint64_t time, int64_t offset, double stddev);
/* A CallingContext without content deduplication: always a new id (the
 * next one), for samplers whose node index must equal the id. */
uint32_t tr_def_calling_context_new(uint32_t region, uint32_t scl, uint32_t parent);
/* A sampler that numbers its calling contexts itself (events carry its
 * node numbers) and defines them with tr_def_calling_context (content
 * deduplicated: one definition per distinct region, source location and
 * parent): map[i] is the definition id of its number i. Written as a
 * CALLING_CONTEXT mapping table into every location's local definitions at
 * shut-down. Only without MPI unification (there the unifier deduplicates
 * and ids must be tr_def_calling_context_new's). The map is copied. */
void tr_def_calling_context_map(const uint32_t *map, uint32_t n);
/* The snapshot tail (preload/defs/defs_tail.c), for a module's
 * durable_snapshot only (the registry held): definitions kept for the
 * TRACER_DURABLE snapshots, each made once and placed after the registry's
 * own at every snapshot, never in the archive of a normal end. data as
 * for the registry's classes (a String: its bytes with the NUL); a value
 * referring to another tail definition is TR_DEFS_TAIL | its index among
 * the tail's of that class. tr_defs_tail_add returns that index (UNDEF:
 * no memory); clear drops them all. */
#define TR_DEFS_TAIL 0x80000000u
uint32_t tr_defs_tail_add(uint32_t cls, const void *data, uint32_t len);
uint32_t tr_defs_tail_count(uint32_t cls);
void tr_defs_tail_clear(void);

#endif /* TR_REGISTRY_H */
