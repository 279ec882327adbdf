/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * durable_index.h - NAME.durable, the index of committed positions that a
 * process traced with TRACER_DURABLE keeps mapped (preload/archive/durable.c) and
 * `tracer recover` reads (tools/recover.c). Native byte order.
 */
#ifndef TR_DURABLE_INDEX_H
#define TR_DURABLE_INDEX_H

#include <stdint.h>

#define TR_DURABLE_MAGIC "TRDUR01"          /* 8 bytes with the NUL */
#define TR_DURABLE_SLOTS 4096
#define TR_DURABLE_VALID 1
#define TR_DURABLE_DEFAULT_NS 250000000ull   /* the default (unset, on): 250 ms */

struct tr_durable_slot {
	uint64_t location;   /* location id */
	uint64_t chunk;      /* chunk index in <loc>.evt of the committed position */
	uint64_t bytes;      /* bytes of that chunk holding whole records (header included) */
	uint64_t state;      /* TR_DURABLE_VALID once published */
};

struct tr_durable_index {
	char magic[8];
	uint64_t chunk_size;   /* event chunk size of the archive */
	uint64_t pid;
	uint64_t interval_ns;
	uint64_t ticks;
	uint64_t nslots;       /* slots in use */
	uint64_t reserved[2];
	struct tr_durable_slot slot[TR_DURABLE_SLOTS];
};

#endif /* TR_DURABLE_INDEX_H */
