/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2w.h - an independent writer for OTF2 3.0 trace archives.
 *
 * The public header of format/'s writer (with otf2w_enums.h and
 * otf2w_fast.h, which it includes; otf2w_stage.h: durable staging files
 * read back after a kill). It knows nothing of threads, MPI,
 * signals or the tracer: it turns calls into the byte layout that the
 * reference reader (libotf2 3.0.2) reads (see docs/otf2-format.md).
 *
 * Object model (as in OTF2's own API):
 *   otf2w_archive      one archive directory: anchor, global defs, per-location
 *                      files, snapshot and marker files.
 *   otf2w_evt_writer   one location's event stream. Owned by one thread at a
 *                      time; its hot path takes no lock and allocates nothing.
 *   otf2w_def_writer   one location's local definitions (mapping tables,
 *                      clock offsets).
 *   otf2w_gdef_writer  the global definitions (one per archive).
 *   otf2w_snap_writer  one location's snapshots.
 *   otf2w_marker_writer the archive's marker file.
 *
 * Thread safety: an archive's shared state (file creation, the chunk pool,
 * writer lists, counters) is guarded only through the locking callbacks
 * (otf2w_archive_set_locking); without them the archive must be used by one
 * thread. Each writer is owned by one thread at a time.
 *
 * Errors: every call that can fail returns otf2w_status (OTF2W_OK == 0).
 * otf2w_archive_error() gives the text of the last error of the archive
 * (with path and strerror text for file errors). Nothing aborts or exits.
 *
 * Record functions are generated from format/records.tab into
 * otf2w_records.h (included at the end of this header); their argument order
 * is that of OTF2's C API (OTF2_EvtWriter_<Record>, OTF2_GlobalDefWriter_
 * Write<Record>, ...), their names the snake_case record name:
 *   otf2w_evt_<record>(otf2w_evt_writer *, const otf2w_attr_list *, uint64_t time, ...)
 *   otf2w_gdef_<record>(otf2w_gdef_writer *, ...)
 *   otf2w_ldef_<record>(otf2w_def_writer *, ...)     (local defs)
 *   otf2w_snap_<record>(otf2w_snap_writer *, const otf2w_attr_list *,
 *                       uint64_t snap_time, uint64_t orig_event_time, ...)
 * e.g. otf2w_evt_enter(w, NULL, t, region), otf2w_evt_mpi_send(w, NULL, t,
 * receiver, comm, tag, len), otf2w_gdef_region(g, self, name, canonical,
 * description, role, paradigm, flags, source_file, begin_line, end_line).
 */
#ifndef OTF2W_H
#define OTF2W_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------ */

typedef enum otf2w_status {
	OTF2W_OK = 0,
	OTF2W_E_INVALID_ARGUMENT,   /* NULL writer, bad id, bad value */
	OTF2W_E_INVALID_CALL,       /* wrong order of calls (e.g. write after close) */
	OTF2W_E_TIME_BACKWARDS,     /* timestamp smaller than the previous one of the location */
	OTF2W_E_RECORD_TOO_LARGE,   /* record larger than a chunk can hold */
	OTF2W_E_NO_MEMORY,          /* allocation (or memory callback) failed */
	OTF2W_E_IO,                 /* file error: see otf2w_archive_error() for path and errno text */
	OTF2W_E_EXISTS,             /* archive directory already holds an archive */
	OTF2W_E_STOPPED,            /* location stopped recording (buffer full, stop mode): event dropped and counted */
	OTF2W_E_LOCKING,            /* a locking callback failed */
	OTF2W_E_INTERRUPTED,        /* a callback asked to abort the operation */
} otf2w_status;

const char *otf2w_status_str(otf2w_status s);

#include "otf2w_enums.h"   /* the enumerations of OTF2 3.0 */

/* ---- opaque objects ------------------------------------------------------ */

typedef struct otf2w_archive otf2w_archive;
typedef struct otf2w_evt_writer otf2w_evt_writer;
typedef struct otf2w_def_writer otf2w_def_writer;
typedef struct otf2w_gdef_writer otf2w_gdef_writer;
typedef struct otf2w_snap_writer otf2w_snap_writer;
typedef struct otf2w_marker_writer otf2w_marker_writer;
typedef struct otf2w_attr_list otf2w_attr_list;
typedef struct otf2w_id_map otf2w_id_map;

/* ---- callbacks ------------------------------------------------------------- */

/* Locking: guards only the archive's shared state (never an event write). */
typedef struct otf2w_locking_callbacks {
	int (*create)(void *user_data, void **lock);   /* 0 on success */
	int (*destroy)(void *user_data, void *lock);
	int (*lock)(void *user_data, void *lock);
	int (*unlock)(void *user_data, void *lock);
} otf2w_locking_callbacks;

/* What to do when a location has used all its chunks. */
typedef enum otf2w_flush_type {
	OTF2W_NO_FLUSH = 0,   /* stop recording the location: MeasurementOnOff(OFF) + drop count */
	OTF2W_FLUSH = 1,      /* write the chunks to disk and go on (BufferFlush record) */
} otf2w_flush_type;

typedef struct otf2w_flush_callbacks {
	/* Called by the owning thread when a location's chunk budget is used up
	 * (final = 0) and at close (final = 1, the answer is then ignored:
	 * a closing writer always writes). May be NULL: then always FLUSH. */
	otf2w_flush_type (*pre_flush)(void *user_data, uint64_t location, int final);
	/* Gives the timestamp written as BufferFlush.stopTime after a flush
	 * (the flush start time is the time of the last event). May be NULL:
	 * then no BufferFlush record is written. */
	uint64_t (*post_flush)(void *user_data, uint64_t location);
} otf2w_flush_callbacks;

/* Chunk memory (default: aligned_alloc/free). allocate may be called with
 * the archive lock held, from the owning thread of the location. Settable
 * until the first chunk was allocated (the first record written). */
typedef struct otf2w_memory_callbacks {
	void *(*allocate)(void *user_data, size_t size);
	void (*free_all)(void *user_data, void *chunk, size_t size);
} otf2w_memory_callbacks;

/* Where file operations run (default: the calling thread). run executes
 * fn(arg) to completion - e.g. on a service thread with a descriptor table
 * of its own, so that no descriptor of the writer ever appears in the
 * program's table - and returns 0, or -1 when it cannot (the writer then
 * calls fn itself, with its high-numbered descriptors). Chunk flushes,
 * closing writers and the anchor go through it; emergency paths never. */
typedef struct otf2w_io_callbacks {
	int (*run)(void *user_data, void (*fn)(void *), void *arg);
	/* Optional: a durable event writer calls due(time) on its owner
	 * thread before its first record and before the first record at or
	 * after the time due returned last (UINT64_MAX: never again), outside
	 * any record (its committed position is whole). Not on emergency
	 * paths. The embedder's periodic work (e.g. a crash-recovery
	 * snapshot) can run there without a thread of its own. */
	uint64_t (*due)(void *user_data, uint64_t time);
} otf2w_io_callbacks;

/* ---- archive ---------------------------------------------------------------- */

typedef struct otf2w_archive_params {
	const char *path;            /* archive directory, created if missing (mkdir -p) */
	const char *name;            /* archive name; "traces" when NULL */
	uint64_t event_chunk_size;   /* [262144, 16777216]; 0 -> 1 MiB */
	uint64_t def_chunk_size;     /* same range; 0 -> 4 MiB */
	uint32_t max_chunks;         /* per location in memory before pre_flush; 0 -> unbounded is NOT allowed: 0 -> 16 */
	const char *machine_name;    /* anchor; may be NULL */
	const char *creator;         /* anchor; may be NULL */
	const char *description;     /* anchor; may be NULL */
	int exclusive;               /* fail with OTF2W_E_EXISTS if NAME.otf2 or NAME/ exists */
} otf2w_archive_params;

otf2w_status otf2w_archive_open(const otf2w_archive_params *p, otf2w_archive **out);
otf2w_status otf2w_archive_set_locking(otf2w_archive *ar, const otf2w_locking_callbacks *cb, void *user_data);
otf2w_status otf2w_archive_set_flush(otf2w_archive *ar, const otf2w_flush_callbacks *cb, void *user_data);
otf2w_status otf2w_archive_set_memory(otf2w_archive *ar, const otf2w_memory_callbacks *cb, void *user_data);
otf2w_status otf2w_archive_set_io(otf2w_archive *ar, const otf2w_io_callbacks *cb, void *user_data);
/* A part of a larger archive whose definitions its embedder keeps
 * elsewhere (a process tree's part: its packed definitions, unified
 * later): the closes write the event files and the local definitions
 * files of the locations that have definition records; no global
 * definitions file, no anchor, no local definitions file without a record.
 * Settable until the close. */
otf2w_status otf2w_archive_set_events_only(otf2w_archive *ar, int on);
/* Locations whose event file the embedder puts in place itself (a merge
 * that links the files of its parts): the close asks elsewhere(location,
 * ud) for every location without an event writer and writes no empty
 * event file where it returns 1. Settable until the close. */
otf2w_status otf2w_archive_set_events_elsewhere(otf2w_archive *ar, int (*elsewhere)(uint64_t location, void *ud),
						 void *ud);
/* Anchor property "NS::NAME[::...]" (chars [A-Za-z0-9_]); validated, an invalid name is rejected. */
otf2w_status otf2w_archive_set_property(otf2w_archive *ar, const char *name, const char *value);
otf2w_status otf2w_archive_set_trace_id(otf2w_archive *ar, uint64_t id);
otf2w_status otf2w_archive_set_number_of_snapshots(otf2w_archive *ar, uint32_t n);
/* Change the archive directory. Allowed until the first file or directory
 * was created (files are created lazily: first flush or close); afterwards
 * OTF2W_E_INVALID_CALL. Locks the archive. */
otf2w_status otf2w_archive_set_path(otf2w_archive *ar, const char *path);
/* Current archive directory (valid until the next set_path/close). */
const char *otf2w_archive_path(const otf2w_archive *ar);
/* Text of the last error (thread-local per archive use; valid until the next call). */
const char *otf2w_archive_error(const otf2w_archive *ar);
/* The calling thread's last error text; stays valid after otf2w_archive_close
 * (which frees the archive), e.g. "cannot write out/traces/1.evt: No space left on device". */
const char *otf2w_last_error(void);

/* Writers. Getting the writer of a location twice returns the same writer.
 * Every location defined in the global definitions must get an event
 * writer (otf2w_archive_close creates empty files for locations whose
 * writer was never requested if it was told about them via gdef Location). */
otf2w_status otf2w_archive_get_evt_writer(otf2w_archive *ar, uint64_t location, otf2w_evt_writer **out);
otf2w_status otf2w_archive_get_def_writer(otf2w_archive *ar, uint64_t location, otf2w_def_writer **out);
otf2w_status otf2w_archive_get_gdef_writer(otf2w_archive *ar, otf2w_gdef_writer **out);
otf2w_status otf2w_archive_get_snap_writer(otf2w_archive *ar, uint64_t location, otf2w_snap_writer **out);
otf2w_status otf2w_archive_get_marker_writer(otf2w_archive *ar, otf2w_marker_writer **out);

/* Close one writer: writes what is buffered and the file end. Called by its
 * owning thread. The writer object stays valid (counters readable) until
 * otf2w_archive_close. */
otf2w_status otf2w_archive_close_evt_writer(otf2w_archive *ar, otf2w_evt_writer *w);
otf2w_status otf2w_archive_close_def_writer(otf2w_archive *ar, otf2w_def_writer *w);
otf2w_status otf2w_archive_close_snap_writer(otf2w_archive *ar, otf2w_snap_writer *w);
/* Close an event writer whose location ends early (thread exit):
 * when nothing of it is on disk yet, it fits one chunk and its file is at
 * most max_each bytes, and the archive's deferred total stays <= max_total,
 * an exact-size malloc copy of the file content is kept and the chunks are
 * released; otf2w_archive_close and otf2w_archive_close_emergency write the
 * file (no open() per short-lived thread). Otherwise the same as
 * otf2w_archive_close_evt_writer. The location may still be renamed
 * (otf2w_evt_writer_set_location) while deferred. */
otf2w_status otf2w_archive_close_evt_writer_deferred(otf2w_archive *ar, otf2w_evt_writer *w,
						     uint64_t max_each, uint64_t max_total);

/* Writes everything still open (all writers, global defs, marker file, the
 * anchor last) and frees the archive. Safe when some writers are unclosed:
 * their buffered events are written (the caller must make sure their owner
 * threads no longer write). Returns the first error met; the archive is
 * freed in every case. */
otf2w_status otf2w_archive_close(otf2w_archive *ar);

/* Emergency variant for crash paths (SIGSEGV handler, abort): no locks, no
 * malloc, only open/write/close. Writes the buffered chunks of every event
 * writer, the global definitions written so far and the anchor. The archive
 * must not be used afterwards (it is leaked). */
otf2w_status otf2w_archive_close_emergency(otf2w_archive *ar);
/* Emergency paths, before writing the last records: the archive's
 * locking callbacks are no longer called (the interrupted thread may hold
 * the lock). Only for a process that is about to end. Async-signal-safe. */
void otf2w_archive_begin_emergency(otf2w_archive *ar);

/* After fork() in the child: forget the parent's writers and files without
 * writing or freeing anything that the parent owns (the child re-opens its
 * own archive). Async-signal-safe. */
void otf2w_archive_abandon(otf2w_archive *ar);
/* Free the archive without writing anything (files already written stay).
 * Not after otf2w_archive_abandon (then it does nothing: the memory may be
 * the parent's). Unlike close, no anchor, no empty files. */
void otf2w_archive_discard(otf2w_archive *ar);

/* ---- event writer ------------------------------------------------------------- */

uint64_t otf2w_evt_writer_location(const otf2w_evt_writer *w);
/* Give an event writer another location id (e.g. the MPI rank became known).
 * Allowed until any of its data hit the disk; afterwards OTF2W_E_INVALID_CALL;
 * OTF2W_E_INVALID_ARGUMENT if another writer already has that location. */
otf2w_status otf2w_evt_writer_set_location(otf2w_evt_writer *w, uint64_t location);
/* Events recorded (written or buffered), events dropped while stopped. */
uint64_t otf2w_evt_writer_count(const otf2w_evt_writer *w);
uint64_t otf2w_evt_writer_dropped(const otf2w_evt_writer *w);
/* Bytes of event data (including chunk headers and padding) so far. */
uint64_t otf2w_evt_writer_bytes(const otf2w_evt_writer *w);
/* Last timestamp written (0 before the first event). */
uint64_t otf2w_evt_writer_last_time(const otf2w_evt_writer *w);
/* Re-enable recording after a stop (writes MeasurementOnOff(ON) at time t
 * once chunks are available again, i.e. after a flush). */
otf2w_status otf2w_evt_writer_resume(otf2w_evt_writer *w, uint64_t t);
/* Crash path (after otf2w_archive_begin_emergency): resume a stopped
 * location at once, with one chunk more than its budget (memory callback),
 * so that its last records (Leave, ThreadEnd, ProgramEnd) are kept. */
otf2w_status otf2w_evt_writer_resume_emergency(otf2w_evt_writer *w, uint64_t t);
/* Force the buffered chunks of this writer to disk now (owner thread). */
otf2w_status otf2w_evt_writer_flush(otf2w_evt_writer *w);
/* 1 while the location is stopped (NO_FLUSH or a failed flush), else 0. */
int otf2w_evt_writer_stopped(const otf2w_evt_writer *w);

/* Durable event files (before the first event writer record): every
 * record is stored in a shared file mapping, so it survives the death of
 * the process (SIGKILL) in the page cache. A location's chunk 0 is a
 * window of its .evt file; chunks 1, 2, ... are recorded in one reused
 * window, the staging file <evt>OTF2W_STAGE_SUFFIX, and each is written
 * into the .evt file when full. The space of every chunk is reserved
 * before it starts (posix_fallocate: a full disk stops the location with
 * OTF2W_E_IO instead of a SIGBUS). Closing the writer writes the last
 * chunk and removes the staging file. No BufferFlush records; max_chunks
 * then bounds the chunks of a location on disk when pre_flush answers
 * NO_FLUSH. */
otf2w_status otf2w_archive_set_durable(otf2w_archive *ar, int on);
/* Durable: a location's first window reserves only `bytes` of its chunk
 * (at least 4 KiB, one block; 0, the default: the whole chunk) and the
 * rest in place when that fills, on the owner's next record that does not
 * fit - never in a record written from a signal handler, which then finds
 * the window full: leave it 0 when such records are written. A short
 * process then reserves one block, which its file keeps at close, instead
 * of a chunk that the cut at close gives back (on ext4 with discard,
 * freeing blocks costs ~0.1 ms at the cut and again at removal). */
otf2w_status otf2w_archive_set_durable_first(otf2w_archive *ar, uint64_t bytes);
/* Durable writer, read from another thread: the file chunk index of the
 * current window and the bytes of it holding whole records (header
 * included). 0 when read, -1 when the owner is switching windows (retry)
 * or w has no window. */
int otf2w_evt_writer_durable_pos(const otf2w_evt_writer *w, uint64_t *chunk, uint64_t *bytes);
/* Durable writer, by its owner: a chunk 0 reserved in part (durable_first)
 * is reserved whole now - records written from a signal handler come
 * next, and they never grow a window. OTF2W_OK also when there was
 * nothing to do. */
otf2w_status otf2w_evt_writer_durable_whole(otf2w_evt_writer *w);

/* ---- attribute lists (caller owned, reusable; no allocation after create) ---- */

otf2w_attr_list *otf2w_attr_list_new(void);
void otf2w_attr_list_delete(otf2w_attr_list *al);
void otf2w_attr_list_clear(otf2w_attr_list *al);
uint32_t otf2w_attr_list_count(const otf2w_attr_list *al);
/* Generic add: value is the raw 64-bit pattern (double: its bits; refs: the id). */
otf2w_status otf2w_attr_list_add(otf2w_attr_list *al, uint32_t attribute, uint8_t type, uint64_t value);
otf2w_status otf2w_attr_list_add_uint64(otf2w_attr_list *al, uint32_t attribute, uint64_t v);
otf2w_status otf2w_attr_list_add_int64(otf2w_attr_list *al, uint32_t attribute, int64_t v);
otf2w_status otf2w_attr_list_add_double(otf2w_attr_list *al, uint32_t attribute, double v);
otf2w_status otf2w_attr_list_add_string(otf2w_attr_list *al, uint32_t attribute, uint32_t string_id);

/* ---- id maps (mapping tables) ---------------------------------------------------- */

otf2w_id_map *otf2w_id_map_new(int sparse, uint64_t capacity_hint);
void otf2w_id_map_delete(otf2w_id_map *m);
otf2w_status otf2w_id_map_add(otf2w_id_map *m, uint64_t local_id, uint64_t global_id);
/* Dense maps: otf2w_id_map_add(m, index, global) with index == count so far. */

/* Notes on the generated record writers:
 * - Every event record with only fixed-size fields (Enter, Leave, MpiSend,
 *   ThreadAcquireLock, ...) is static inline: one check (no attribute list,
 *   room in the chunk, time not going back), then unchecked stores; the
 *   rest goes to an out-of-line slow path. Arrays/strings are out of line.
 * - OTF2_AttributeValue arguments (Property records, IoParadigm values) are
 *   uint64_t raw patterns, as in otf2w_attr_list_add (FLOAT: the float's
 *   bits in the low 32 bits); metric values are otf2w_metric_value.
 * - An attribute list is not cleared by the event that uses it.
 * - Without a pre_flush callback every full buffer is flushed and the chunk
 *   layout equals the reference writer's byte for byte; with one, the last
 *   chunk of the budget keeps 12 bytes for MeasurementOnOff(OFF).
 * - No file descriptor is kept between flushes: every flush opens the file
 *   (at a high descriptor number), writes and closes it, so a program that
 *   closes all descriptors and opens its own never gets ours. SIGXFSZ is
 *   blocked around writes (RLIMIT_FSIZE gives EFBIG, the cut chunk is
 *   truncated away). Anchors are written to NAME.otf2.part and renamed.
 */

/* ---- generated record writers ------------------------------------------------------ */

#include "otf2w_records.h"
#include "otf2w_fast.h"      /* the inline record groups and codes of hot paths */

#ifdef __cplusplus
}
#endif
#endif /* OTF2W_H */
