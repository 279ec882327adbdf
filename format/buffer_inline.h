/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * buffer_inline.h - the exposed "fast" prefix of every otf2w writer and the
 * inline primitive encoders used by the generated record writers.
 *
 * Only the first member of a writer (struct otf2w_fast) is visible here, so
 * that Enter/Leave can be inlined into the caller: one bounds check, then
 * unchecked stores. Everything else (chunk switch, flush, errors) is out of
 * line in buffer.c. Not part of the stable API: do not touch the fields.
 */
#ifndef OTF2W_BUFFER_INLINE_H
#define OTF2W_BUFFER_INLINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define otf2w_likely(x)   __builtin_expect(!!(x), 1)
#define otf2w_unlikely(x) __builtin_expect(!!(x), 0)

/* Bytes the inline Enter/Leave need at most: timestamp record (9) +
 * type (1) + cu32 (5). */
#define OTF2W__SINGLETON32_MAX 15

struct otf2w_fast {
	uint8_t *pos;        /* next free byte in the current chunk */
	uint8_t *end;        /* last usable byte + 1 (keeps >= 1 byte free); == pos when stopped */
	uint64_t last_time;  /* time of the last timestamp record (timed buffers) */
	uint64_t nevents;    /* records written so far (chunk header counters) */
	/* time at or after which the next record first calls the archive's
	 * io due callback (durable event writers; UINT64_MAX: never). The
	 * inline group writer leaves such a record to the general path. */
	uint64_t due;
};

#define OTF2W__FAST(w) ((struct otf2w_fast *)(void *)(w))

/* Free bytes in the current chunk of any writer (0: no chunk yet, or
 * stopped). Behind the public otf2w_evt_writer_room (otf2w.h). */
static inline size_t otf2w__fast_room(const void *w)
{
	const struct otf2w_fast *f = (const struct otf2w_fast *)w;

	if (!f->pos || f->end < f->pos)
		return 0;
	return (size_t)(f->end - f->pos);
}

/* ---- primitive encoders (otf2-format.md §4); caller reserved the space ---- */

static inline uint8_t *otf2w__put_u8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}

static inline uint8_t *otf2w__put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* chunk byte order = host order */
	return p + 8;
}

static inline uint8_t *otf2w__put_f64(uint8_t *p, double v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static inline uint8_t *otf2w__put_f32(uint8_t *p, float v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

/* Compressed unsigned: 00 for 0, ff for all ones, else n + n low bytes.
 * Stores 4 (8) bytes unconditionally: the reservation covers the maximum. */
static inline uint8_t *otf2w__put_cu32(uint8_t *p, uint32_t v)
{
	if (otf2w_unlikely(v + 1 <= 1)) {	/* 0 or all ones: one byte */
		*p = v ? 0xff : 0;
		return p + 1;
	}
	unsigned n = (unsigned)(39 - __builtin_clz(v)) >> 3;
	*p = (uint8_t)n;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p + 1, &v, 4);
#else
	for (unsigned i = 0; i < n; i++)
		p[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
#endif
	return p + 1 + n;
}

static inline uint8_t *otf2w__put_cu64(uint8_t *p, uint64_t v)
{
	if (otf2w_unlikely(v + 1 <= 1)) {
		*p = v ? 0xff : 0;
		return p + 1;
	}
	unsigned n = (unsigned)(71 - __builtin_clzll(v)) >> 3;
	*p = (uint8_t)n;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p + 1, &v, 8);
#else
	for (unsigned i = 0; i < n; i++)
		p[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
#endif
	return p + 1 + n;
}

/* Compressed signed: negative values always full width (§4.3). */
static inline uint8_t *otf2w__put_ci32(uint8_t *p, int32_t v)
{
	if (v < 0) {
		*p = 4;
		memcpy(p + 1, &v, 4);
		return p + 5;
	}
	return otf2w__put_cu32(p, (uint32_t)v);
}

static inline uint8_t *otf2w__put_ci64(uint8_t *p, int64_t v)
{
	if (v < 0) {
		*p = 8;
		memcpy(p + 1, &v, 8);
		return p + 9;
	}
	return otf2w__put_cu64(p, (uint64_t)v);
}

static inline uint8_t *otf2w__put_str(uint8_t *p, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	return p + n + 1;
}

/* Attribute value (§4.8), raw 64-bit pattern in v. At most 9 bytes. */
static inline uint8_t *otf2w__put_av(uint8_t *p, uint8_t type, uint64_t v)
{
	switch (type) {
	case 1: case 5:		/* UINT8, INT8 */
		*p = (uint8_t)v;
		return p + 1;
	case 2: case 6: {	/* UINT16, INT16 */
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		return p + 2;
	}
	case 7:			/* INT32 */
		return otf2w__put_ci32(p, (int32_t)(uint32_t)v);
	case 8:			/* INT64 */
		return otf2w__put_ci64(p, (int64_t)v);
	case 9: {		/* FLOAT: the low 32 bits hold the float's bits */
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		return p + 4;
	}
	case 10:		/* DOUBLE */
		memcpy(p, &v, 8);
		return p + 8;
	case 4: case 13: case 0:	/* UINT64, LOCATION, NONE */
		return otf2w__put_cu64(p, v);
	default:
		if (type <= 25)	/* UINT32 and 32-bit references */
			return otf2w__put_cu32(p, (uint32_t)v);
		return otf2w__put_cu64(p, v);
	}
}

/* Record framing: type byte + length placeholder (1 byte if the payload can
 * not reach 255 bytes, else ff + 8 bytes). Returns the payload start. */
static inline uint8_t *otf2w__rec_open(uint8_t **pp, uint8_t type, size_t payload_max)
{
	uint8_t *p = *pp;
	*p++ = type;
	if (payload_max < 255) {
		p += 1;
	} else {
		*p = 0xff;
		p += 9;
	}
	*pp = p;
	return p;
}

static inline void otf2w__rec_close(uint8_t *start, uint8_t *p, size_t payload_max)
{
	uint64_t len = (uint64_t)(p - start);
	if (payload_max < 255)
		start[-1] = (uint8_t)len;
	else
		memcpy(start - 8, &len, 8);
}

/* Timestamp record before the next event record, unless the last one
 * holds already (time 0 always gets one). Caller reserved 9 bytes and
 * checked that time does not go back. */
static inline uint8_t *otf2w__put_time(struct otf2w_fast *f, uint8_t *p, uint64_t time)
{
	if (time != f->last_time || time == 0) {
		*p = 5;
		memcpy(p + 1, &time, 8);
		p += 9;
		f->last_time = time;
	}
	return p;
}

/* Finish a record: advance the write position and count it. */
static inline void otf2w__commit(void *w, uint8_t *p)
{
	struct otf2w_fast *f = OTF2W__FAST(w);
	f->pos = p;
	f->nevents++;
}

#endif /* OTF2W_BUFFER_INLINE_H */
