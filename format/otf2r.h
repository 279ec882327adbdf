/* SPDX-License-Identifier: BSD-3-Clause */
/* otf2r.h - otf2r, an OTF2 3.0 archive reader (no libotf2).
 *
 * Reads archives of our writer (otf2w) and of the reference library:
 * the anchor, the global definitions (kept in memory), local definitions
 * (mapping tables, clock offsets) and the event files chunk by chunk, in a
 * small window per location: memory is bounded by the definitions and the
 * number of locations, never by the number of events.
 *
 * Events come per location (otf2r_evt_*) or merged across locations in
 * global time order (otf2r_merge_*, a heap; equal times by location id),
 * local ids translated to global ids through the mapping tables and times
 * corrected by the clock offsets. Record structures and decoders are
 * generated from records.tab (otf2r_records.h), one struct per record with
 * the on-disk fields (OTF2 names in snake_case); arrays point into reader
 * memory valid until the next call on the same reader.
 *
 * Layout facts: docs/otf2-format.md. Nothing here prints or exits:
 * functions return 0 / -1 and otf2r_error() has the text.
 */
#ifndef OTF2R_H
#define OTF2R_H

#include <stdint.h>
#include <stddef.h>
#include "otf2r_records.h"

typedef struct otf2r_archive otf2r_archive;
typedef struct otf2r_evt_reader otf2r_evt_reader;
typedef struct otf2r_merge otf2r_merge;

#define OTF2R_UNDEF32 UINT32_MAX
#define OTF2R_UNDEF64 UINT64_MAX

/* MappingType values (otf2-format.md §6) */
enum {
	OTF2R_MAP_STRING, OTF2R_MAP_ATTRIBUTE, OTF2R_MAP_LOCATION, OTF2R_MAP_REGION,
	OTF2R_MAP_GROUP, OTF2R_MAP_METRIC, OTF2R_MAP_COMM, OTF2R_MAP_PARAMETER,
	OTF2R_MAP_RMA_WIN, OTF2R_MAP_SOURCE_CODE_LOCATION, OTF2R_MAP_CALLING_CONTEXT,
	OTF2R_MAP_INTERRUPT_GENERATOR, OTF2R_MAP_IO_FILE, OTF2R_MAP_IO_HANDLE,
	OTF2R_MAP_LOCATION_GROUP
};

typedef struct {
	uint8_t anchor_version, trace_version, otf2_version[3];
	uint64_t event_chunk_size, def_chunk_size;
	uint8_t substrate, compression;
	uint64_t number_of_locations, number_of_global_defs;
	const char *machine, *creator, *description;
	uint32_t number_of_properties;
	const char **property_names, **property_values;
	uint64_t trace_id;
	uint32_t number_of_snapshots, number_of_thumbnails;
} otf2r_anchor;

/* One attribute of an event's attribute list: OTF2 type, raw 64-bit value
 * (ids mapped to global ids, INT32 sign-extended, FLOAT in the low bits). */
typedef struct {
	uint32_t id;
	uint8_t type;
	uint64_t value;
} otf2r_attr;

typedef struct {
	uint64_t location;        /* global Location id */
	uint64_t time;            /* ticks, clock offsets applied */
	uint64_t pos;             /* 1-based number of the event in its location */
	uint8_t type;             /* OTF2R_EVT_* (record id) */
	uint32_t nattrs;
	const otf2r_attr *attrs;
	union otf2r_evt_u u;      /* u.<snake name>, e.g. u.enter.region */
} otf2r_event;

typedef struct {
	uint8_t type;             /* OTF2R_GDEF_* */
	union otf2r_gdef_u u;
} otf2r_def;

/* Open DIR (holding one NAME.otf2) or DIR/NAME.otf2; reads the anchor and
 * the global definitions. On failure *out = NULL and err has the reason. */
int otf2r_open(const char *path, otf2r_archive **out, char *err, size_t errlen);
void otf2r_close(otf2r_archive *ar);
const char *otf2r_error(const otf2r_archive *ar);
const char *otf2r_path(const otf2r_archive *ar);      /* DIR/NAME.otf2 */
const otf2r_anchor *otf2r_anchor_info(const otf2r_archive *ar);

/* Global definitions in file order, and lookups by id (type = record id,
 * shared id spaces included: a MetricInstance is found as MetricClass's
 * id space only by its own type). */
size_t otf2r_def_count(const otf2r_archive *ar);
const otf2r_def *otf2r_def_at(const otf2r_archive *ar, size_t i);
const otf2r_def *otf2r_def_find(const otf2r_archive *ar, unsigned type, uint64_t id);
const char *otf2r_string(const otf2r_archive *ar, uint32_t id);   /* NULL: none */
const otf2r_gdef_clock_properties *otf2r_clock(const otf2r_archive *ar); /* NULL: none */
size_t otf2r_location_count(const otf2r_archive *ar);
const otf2r_gdef_location *otf2r_location_at(const otf2r_archive *ar, size_t i);

/* Local definitions of one location (every record of <loc>.def, raw, no
 * mapping), for tools; the event readers use them by themselves. */
typedef int (*otf2r_ldef_cb)(void *ud, unsigned type, const union otf2r_ldef_u *u);
int otf2r_read_local_defs(otf2r_archive *ar, uint64_t location, otf2r_ldef_cb cb, void *ud);

/* Events of one location, in file order. next: 1 = event, 0 = end, -1 = error. */
int otf2r_evt_open(otf2r_archive *ar, uint64_t location, otf2r_evt_reader **out);
int otf2r_evt_next(otf2r_evt_reader *r, otf2r_event *ev);
void otf2r_evt_close(otf2r_evt_reader *r);

/* Snapshot records of one location (<loc>.snap, written when the anchor's
 * number of snapshots is > 0): time = snapshot time; no mapping tables and
 * no clock offsets apply (the reference does the same). Close with
 * otf2r_evt_close. */
typedef struct {
	uint64_t location, time, pos;
	uint8_t type;             /* OTF2R_SNAP_* */
	uint32_t nattrs;
	const otf2r_attr *attrs;
	union otf2r_snap_u u;
} otf2r_snap_event;
int otf2r_snap_open(otf2r_archive *ar, uint64_t location, otf2r_evt_reader **out);
int otf2r_snap_next(otf2r_evt_reader *r, otf2r_snap_event *ev);

/* Marker file NAME.marker (DefMarker, Marker records); none: returns 0. */
typedef int (*otf2r_marker_cb)(void *ud, unsigned type, const union otf2r_marker_u *u);
int otf2r_read_markers(otf2r_archive *ar, otf2r_marker_cb cb, void *ud);

/* Events of several locations (NULL, 0 = all) in global time order. */
int otf2r_merge_open(otf2r_archive *ar, const uint64_t *locations, size_t n, otf2r_merge **out);
int otf2r_merge_next(otf2r_merge *m, otf2r_event *ev);
void otf2r_merge_close(otf2r_merge *m);

/* Generated helpers: record name ("Enter", NULL if unknown) and the fields
 * as " name=value ..." (arrays comma separated), snprintf-like. */
/* The records of one chunk in memory (buf: its header first, len bytes),
 * without an archive: a file cut by a kill, or being repaired. kind: what
 * the file holds (OTF2R_CHUNK_*). otf2r_chunk_next gives each record in
 * turn: 1 and *r; 0 at the end (of the bytes, or an end-of-chunk, -buffer
 * or -file record: r->off is there); -1 when the record at r->off cannot
 * be decoded within the bytes (cut short). In an event chunk timestamps
 * and attribute lists are records too (type 5, 6; r->decoded 0), r->time
 * the time of the chunk's last timestamp. Ids are not mapped (local),
 * arrays and strings valid until the next call. */
enum { OTF2R_CHUNK_EVENTS, OTF2R_CHUNK_GLOBAL_DEFS, OTF2R_CHUNK_LOCAL_DEFS };
typedef struct otf2r_chunk otf2r_chunk;
typedef struct otf2r_chunk_rec {
	unsigned type;          /* the record type byte (OTF2R_EVT_*, OTF2R_GDEF_*, OTF2R_LDEF_*) */
	int decoded;            /* u holds its fields (an event or a definition of a known type) */
	size_t off, len;        /* its bytes in the chunk, type byte included */
	uint64_t time;
	union {
		union otf2r_evt_u evt;
		union otf2r_gdef_u gdef;
		union otf2r_ldef_u ldef;
	} u;
} otf2r_chunk_rec;
otf2r_chunk *otf2r_chunk_open(const uint8_t *buf, size_t len, int kind);   /* NULL: no chunk header */
int otf2r_chunk_next(otf2r_chunk *k, otf2r_chunk_rec *r);
uint64_t otf2r_chunk_time(const otf2r_chunk *k);
void otf2r_chunk_close(otf2r_chunk *k);

const char *otf2r_evt_name(unsigned type);
const char *otf2r_gdef_name(unsigned type);
const char *otf2r_ldef_name(unsigned type);
const char *otf2r_snap_name(unsigned type);
const char *otf2r_marker_name(unsigned type);
int otf2r_evt_format(unsigned type, const union otf2r_evt_u *u, char *b, size_t n);
int otf2r_gdef_format(unsigned type, const union otf2r_gdef_u *u, char *b, size_t n);
int otf2r_ldef_format(unsigned type, const union otf2r_ldef_u *u, char *b, size_t n);
int otf2r_snap_format(unsigned type, const union otf2r_snap_u *u, char *b, size_t n);
int otf2r_marker_format(unsigned type, const union otf2r_marker_u *u, char *b, size_t n);

#endif /* OTF2R_H */
