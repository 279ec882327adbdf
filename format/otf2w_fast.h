/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2w_fast.h - the inline parts of the event writer that hot paths use:
 * the room left in the current chunk, record groups (several records at one
 * time with one bounds check) and record codes (a record's constant bytes
 * encoded once). Included by otf2w.h after the generated record writers;
 * not included alone.
 */
#ifndef OTF2W_FAST_H
#define OTF2W_FAST_H

#include <string.h>

/* Bytes free in w's current chunk: a record of at most that many bytes
 * (timestamp record included: 9 bytes) is stored without a chunk switch,
 * so without allocation, lock, flush or I/O. 0 when no chunk is held yet or
 * the location is stopped. Async-signal-safe (reads two pointers), inline;
 * like otf2w_evt_writer_last_time, meant for the owner thread (or a signal
 * handler on it). Used by sampling/ to write a sample without a chunk switch. */
static inline size_t otf2w_evt_writer_room(const otf2w_evt_writer *w)
{
	return w ? otf2w__fast_room(w) : 0;
}

/*
 * Record groups: several fixed-size event records at one time with one
 * bounds check (a lock taken at once: Enter, ThreadAcquireLock, Leave).
 * otf2w_evt_group_begin returns where the first record goes (the timestamp
 * record written when needed) if the current chunk has room for a
 * timestamp and max bytes of records and time does not go back; NULL
 * otherwise (no chunk yet, chunk full, location stopped): nothing was
 * written, write the records one by one with the otf2w_evt_* writers,
 * whose slow path switches chunks, so that the bytes are the same. The
 * caller stores the records with the generated otf2w_evt_put_<record>
 * encoders (max: the sum of their OTF2W_EVT_<RECORD>_MAX) and ends the
 * group with otf2w_evt_group_end(w, p, number of records). Owner thread;
 * no allocation, lock or I/O.
 */
static inline uint8_t *otf2w_evt_group_begin(otf2w_evt_writer *w, uint64_t time, size_t max)
{
	struct otf2w_fast *f = OTF2W__FAST(w);
	uint8_t *p = f->pos;

	if (otf2w_unlikely((size_t)(f->end - p) < 9 + max) || otf2w_unlikely(time >= f->due))
		return NULL;
	if (p == NULL)   /* room implies a chunk: lets callers skip their test */
		__builtin_unreachable();
	if (otf2w_likely(time > f->last_time)) {   /* otf2w__put_time, one compare */
		*p = 5;
		memcpy(p + 1, &time, 8);
		f->last_time = time;
		return p + 9;
	}
	/* the same time (no timestamp record), unless it is 0 (always one:
	 * the general way writes it); earlier: NULL */
	return time == f->last_time && time != 0 ? p : NULL;
}

static inline void otf2w_evt_group_end(otf2w_evt_writer *w, uint8_t *p, uint32_t nrecords)
{
	struct otf2w_fast *f = OTF2W__FAST(w);

	f->pos = p;
	f->nevents += nrecords;
}

/*
 * Record codes: bytes of a record that never change, encoded once (a
 * region's Enter or Leave record, a lock's model and id): bits 0-55 the
 * bytes (at most 7, first byte lowest), bits 56-63 their number.
 * otf2w_put_code stores them with one 8-byte copy, so a group that uses
 * codes reserves OTF2W_CODE_SLACK more bytes. otf2w_code_of: the code of
 * the bytes [b, e) (e - b <= 7), e.g. from an otf2w_evt_put_* encoder.
 */
typedef uint64_t otf2w_code;
#define OTF2W_CODE_SLACK 8

static inline otf2w_code otf2w_code_of(const uint8_t *b, const uint8_t *e)
{
	uint64_t v = 0;
	size_t n = (size_t)(e - b);

	for (size_t i = 0; i < n && i < 7; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v | (uint64_t)n << 56;
}

static inline uint8_t *otf2w_put_code(uint8_t *p, otf2w_code c)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &c, 8);
#else
	for (unsigned i = 0; i < 7; i++)
		p[i] = (uint8_t)(c >> (8 * i));
#endif
	return p + (c >> 56);
}

/* Code of a ThreadAcquireLock/ThreadReleaseLock's model and lock id, and
 * the record of type id (OTF2W_EVT_THREAD_ACQUIRE_LOCK_ID or
 * OTF2W_EVT_THREAD_RELEASE_LOCK_ID) from that code and the acquisition
 * order (at most OTF2W_EVT_THREAD_ACQUIRE_LOCK_MAX bytes + the slack). */
static inline otf2w_code otf2w_code_thread_lock(uint8_t model, uint32_t lock_id)
{
	uint8_t b[8];

	b[0] = model;
	return otf2w_code_of(b, otf2w__put_cu32(b + 1, lock_id));
}

/* The lock id of a code of otf2w_code_thread_lock. */
static inline uint32_t otf2w_code_thread_lock_id(otf2w_code c)
{
	unsigned n = (unsigned)(c >> 8) & 0xff;   /* the compressed id's first byte */

	if (n == 0 || n == 0xff)
		return n ? UINT32_MAX : 0;
	return (uint32_t)((c >> 16) & (UINT64_MAX >> (64 - 8 * n)));
}

static inline uint8_t *otf2w_evt_put_thread_lock_code(uint8_t *p, uint8_t id, otf2w_code c, uint32_t order)
{
	uint8_t *q = otf2w__put_cu32(otf2w_put_code(p + 2, c), order);

	p[0] = id;
	p[1] = (uint8_t)(q - p - 2);
	return q;
}

#endif /* OTF2W_FAST_H */
