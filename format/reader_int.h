/* SPDX-License-Identifier: BSD-3-Clause */
/* reader_int.h - internals of the otf2r reader (format/ only): cursor over
 * one chunk, primitive decoders (otf2-format.md §4), arenas, id maps. */
#ifndef OTF2R_READER_INT_H
#define OTF2R_READER_INT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "otf2r.h"

/* A cursor over bytes [p, end) of one chunk, in the chunk's byte order. */
typedef struct {
	const uint8_t *p;
	const uint8_t *end;
	int be;                 /* chunk is big endian (0x23) */
} otf2r__cur;

/* Bump allocator; blocks are kept for reuse after a reset. */
typedef struct otf2r__block otf2r__block;
typedef struct {
	otf2r__block *head;     /* current block */
	otf2r__block *full;     /* blocks in use before head */
} otf2r__arena;

void *otf2r__alloc(otf2r__arena *a, size_t n);
void otf2r__arena_reset(otf2r__arena *a);
void otf2r__arena_free(otf2r__arena *a);

/* Local -> global id tables of one location, per MappingType (0..14). */
#define OTF2R__NMAPS 15
typedef struct {
	uint64_t count[OTF2R__NMAPS];
	uint8_t sparse[OTF2R__NMAPS];
	uint64_t *ids[OTF2R__NMAPS];   /* dense: global by index; sparse: sorted pairs */
	int any;
} otf2r__maps;

uint64_t otf2r__map(const otf2r__maps *m, unsigned type, uint64_t id);
static inline uint32_t otf2r__map32(const otf2r__maps *m, unsigned type, uint32_t id)
{
	if (!m->any || id == UINT32_MAX)
		return id;
	return (uint32_t)otf2r__map(m, type, id);
}

static inline uint64_t otf2r__fixed(otf2r__cur *c, size_t n)
{
	uint64_t v = 0;
	if (c->be) {
		for (size_t i = 0; i < n; i++)
			v = v << 8 | c->p[i];
	} else {
		for (size_t i = n; i-- > 0;)
			v = v << 8 | c->p[i];
	}
	c->p += n;
	return v;
}

static inline int otf2r__u8(otf2r__cur *c, uint8_t *v)
{
	if (c->p >= c->end)
		return -1;
	*v = *c->p++;
	return 0;
}

static inline int otf2r__t64(otf2r__cur *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return -1;
	if (!c->be) {
		memcpy(v, c->p, 8);   /* little-endian host (x86, arm64) */
		c->p += 8;
		return 0;
	}
	*v = otf2r__fixed(c, 8);
	return 0;
}

static inline int otf2r__f64(otf2r__cur *c, double *v)
{
	uint64_t b;
	if (otf2r__t64(c, &b))
		return -1;
	memcpy(v, &b, 8);
	return 0;
}

/* Compressed unsigned: length byte, 0 = 0, ff = all ones (§4.2). */
static inline int otf2r__cu(otf2r__cur *c, uint64_t *v, unsigned max)
{
	if (c->p >= c->end)
		return -1;
	unsigned n = *c->p++;
	if (n == 0) {
		*v = 0;
		return 0;
	}
	if (n == 0xff) {
		*v = max == 4 ? UINT32_MAX : UINT64_MAX;
		return 0;
	}
	if (n > max || (size_t)(c->end - c->p) < n)
		return -1;
	*v = otf2r__fixed(c, n);
	return 0;
}

static inline int otf2r__cu32(otf2r__cur *c, uint32_t *v)
{
	if (c->p < c->end && c->p[0] == 1 && c->end - c->p >= 2) {
		*v = c->p[1];
		c->p += 2;
		return 0;
	}
	uint64_t x;
	if (otf2r__cu(c, &x, 4))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static inline int otf2r__cu64(otf2r__cur *c, uint64_t *v)
{
	return otf2r__cu(c, v, 8);
}

static inline int otf2r__ci64(otf2r__cur *c, int64_t *v)
{
	uint64_t x;
	if (otf2r__cu(c, &x, 8))
		return -1;
	*v = (int64_t)x;
	return 0;
}

static inline int otf2r__str(otf2r__cur *c, const char **s)
{
	const uint8_t *z = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!z)
		return -1;
	*s = (const char *)c->p;
	c->p = z + 1;
	return 0;
}

/* A record's length field (one byte, ff: eight more), the record within c. */
static inline int otf2r__reclen(otf2r__cur *c, uint64_t *len)
{
	uint8_t l8;
	if (otf2r__u8(c, &l8))
		return -1;
	*len = l8;
	if (l8 == 0xff && otf2r__t64(c, len))
		return -1;
	return *len > (uint64_t)(c->end - c->p) ? -1 : 0;
}

int otf2r__av(otf2r__cur *c, unsigned type, uint64_t *v);
int otf2r__idmap(otf2r__cur *c, otf2r__arena *a, otf2r_idmap *m);
size_t otf2r__fmt_idmap(char *b, size_t n, const char *name, const otf2r_idmap *m);

/* generated (reader_records.c) */
int otf2r__dec_evt(otf2r__cur *c, unsigned type, union otf2r_evt_u *u, otf2r__arena *a);
int otf2r__dec_gdef(otf2r__cur *c, unsigned type, union otf2r_gdef_u *u, otf2r__arena *a);
int otf2r__dec_ldef(otf2r__cur *c, unsigned type, union otf2r_ldef_u *u, otf2r__arena *a);
int otf2r__dec_snap(otf2r__cur *c, unsigned type, union otf2r_snap_u *u, otf2r__arena *a);
int otf2r__dec_marker(otf2r__cur *c, unsigned type, union otf2r_marker_u *u, otf2r__arena *a);
void otf2r__map_evt(unsigned type, union otf2r_evt_u *u, const otf2r__maps *m);
extern const unsigned char otf2r__evt_single[256];

#endif /* OTF2R_READER_INT_H */
