/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2w_int.h - internal structures of format/ (never include outside format/
 * and its unit tests).
 */
#ifndef OTF2W_INT_H
#define OTF2W_INT_H

#include <stdint.h>
#include <stddef.h>

#include "otf2w.h"
#include "buffer_inline.h"

#define OTF2W_CHUNK_HEADER 18
/* Space kept free in the last chunk a location may use, so that
 * MeasurementOnOff(OFF) always fits: timestamp (9) + 0b 01 02 (3). */
#define OTF2W_STOP_RESERVE 12
/* Durable chunks keep more: after a full disk stopped the location, its
 * last records (MeasurementOnOff ON, Leaves, ThreadEnd, ProgramEnd) go
 * there at close. */
#define OTF2W_DUR_RESERVE 512
#define OTF2W_ATTR_MAX 128

enum otf2w_buf_kind {
	OTF2W_BUF_EVT,
	OTF2W_BUF_SNAP,
	OTF2W_BUF_LDEF,
	OTF2W_BUF_GDEF,
	OTF2W_BUF_MARKER,
};

/* A chunked buffer; every writer starts with one. */
struct otf2w_buf {
	struct otf2w_fast f;          /* must stay first (inline fast path) */
	otf2w_archive *ar;
	int kind;
	int timed;                     /* timestamp records + counted headers */
	uint64_t chunk_size;
	uint8_t **chunks;              /* chunks owned by this buffer */
	uint32_t nchunks;
	uint32_t cap;
	uint32_t max;                  /* chunk budget; 0 = unbounded */
	int32_t cur;                   /* current chunk index, -1 = none */
	uint64_t chunk_first;          /* records before the current chunk */
	int need_ts;                   /* next record starts a chunk: force timestamp */
	uint64_t disk_chunks;          /* chunks already in the file */
	int fd;                        /* -1 until the file is opened */
	uint64_t fd_dev, fd_ino;       /* what fd referred to when opened */
	int closed;                    /* file complete (end written) */
	int stopped;                   /* NO_FLUSH stop or I/O failure */
	int resume_pending;
	uint64_t resume_time;
	uint64_t dropped;
	uint64_t location;
	int file_used;                 /* some data went to the file: location fixed */
	/* otf2w_archive_close_evt_writer_deferred: the complete file content
	 * (malloc'ed), written at archive close; closed is set meanwhile */
	uint8_t *deferred;
	size_t deferred_len;
	/* the first chunk pointers live here: getting the first chunks needs
	 * no malloc (emergency writers in a signal handler that interrupted
	 * malloc) */
	uint8_t *chunk_inline[4];
	/* durable event files: chunks[0] is the mapped window of file chunk
	 * disk_chunks; dseq is odd while the owner switches windows */
	uint32_t dseq;
	int dur_full;                  /* stopped: no space for the next window */
	int dgrow;                     /* chunk 0 is reserved in part, by choice: grows in place */
	uint64_t dlen;                 /* bytes reserved for the current chunk (< chunk: disk nearly full) */
	/* the staging window (mapped.c): chunks 1, 2, ... are recorded in it
	 * (chunk, then struct otf2w_stage_tail); dunsaved: its full chunk could
	 * not be written into the file (written at close) */
	uint8_t *dstage;
	int dunsaved;
};

struct otf2w_evt_writer {
	struct otf2w_buf b;
};

struct otf2w_def_writer {
	struct otf2w_buf b;
};

struct otf2w_gdef_writer {
	struct otf2w_buf b;
};

struct otf2w_snap_writer {
	struct otf2w_buf b;
};

struct otf2w_marker_writer {
	struct otf2w_buf b;
};

struct otf2w_attr_entry {
	uint32_t id;
	uint8_t type;
	uint64_t value;
};

struct otf2w_attr_list {
	uint32_t n;
	struct otf2w_attr_entry e[OTF2W_ATTR_MAX];
};

struct otf2w_id_map {
	int sparse;
	uint64_t n;
	uint64_t cap;
	uint64_t *v;       /* dense: globals; sparse: (local, global) pairs */
};

struct otf2w_prop {
	char *name;
	char *value;
};

/* A growable array of writer pointers. */
struct otf2w_vec {
	void **v;
	uint32_t n;
	uint32_t cap;
};

struct otf2w_archive {
	char *dir;                     /* archive directory */
	char *name;                    /* archive name ("traces") */
	uint64_t evt_chunk;
	uint64_t def_chunk;
	uint32_t max_chunks;
	char *machine;
	char *creator;
	char *description;
	int exclusive;
	struct otf2w_prop *props;
	uint32_t nprops;
	uint64_t trace_id;
	uint32_t nsnapshots;

	otf2w_locking_callbacks lock_cb;
	void *lock_ud;
	void *lock;
	int have_lock;
	otf2w_flush_callbacks flush_cb;
	void *flush_ud;
	otf2w_memory_callbacks mem_cb;
	void *mem_ud;
	otf2w_io_callbacks io_cb;
	void *io_ud;
	int emergency;                 /* begin_emergency: no io callback any more */
	int durable;                   /* event files through shared mappings */
	uint64_t dur_first;            /* a location's first window reserves this much first (0: its chunk) */

	int files_created;             /* path fixed from now on */
	int chunks_allocated;          /* memory callbacks fixed from now on */
	uint32_t nopen;                /* open per-location files (lock) */
	int loc_dir_made;

	struct otf2w_vec evt;          /* otf2w_evt_writer * */
	struct otf2w_vec def;          /* otf2w_def_writer * */
	struct otf2w_vec snap;         /* otf2w_snap_writer * */
	otf2w_gdef_writer *gdef;
	otf2w_marker_writer *marker;

	uint64_t *locations;           /* Location ids from the global defs */
	uint64_t nlocations;
	uint64_t cap_locations;

	uint8_t **pool;                /* free event chunks */
	uint32_t npool;
	uint32_t cap_pool;

	int abandoned;
	int events_only;               /* otf2w_archive_set_events_only */
	int (*elsewhere)(uint64_t location, void *ud);   /* otf2w_archive_set_events_elsewhere */
	void *elsewhere_ud;
	otf2w_status first_error;
	char err[1024];
	uint64_t deferred_bytes;       /* sum of the writers' deferred_len (lock) */
	/* the first Location ids: no malloc for small archives (global defs
	 * written by an emergency path in a signal handler) */
	uint64_t locations_inline[64];
};

#endif /* OTF2W_INT_H */
