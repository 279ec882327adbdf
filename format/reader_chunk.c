/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader_chunk.c - the records of one chunk in memory, without an archive
 * (otf2r.h, otf2r_chunk_*): what a tool that repairs a file cut by a kill
 * reads (tracer recover: where an event file's last whole record ends,
 * which regions are open, whether ProgramBegin/ThreadBegin are there; the
 * ClockProperties of a definitions file; tracer-merge: a part's mapping
 * tables), with the reader's own decoders (otf2-format.md §4, §5).
 */
#include <stdlib.h>
#include <string.h>
#include "reader_int.h"

struct otf2r_chunk {
	int kind;
	otf2r__cur c;
	const uint8_t *base;
	uint64_t time;
	otf2r__arena scratch;
	int used;
};

otf2r_chunk *otf2r_chunk_open(const uint8_t *buf, size_t len, int kind)
{
	if (len < 18 || (buf[0] != 0x03 && buf[0] != 0x23))   /* chunk header: byte order, 42, first, last */
		return NULL;
	otf2r_chunk *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->kind = kind;
	k->base = buf;
	k->c.p = buf + 18;
	k->c.end = buf + len;
	k->c.be = buf[0] == 0x23;
	return k;
}

void otf2r_chunk_close(otf2r_chunk *k)
{
	if (!k)
		return;
	otf2r__arena_free(&k->scratch);
	free(k);
}

uint64_t otf2r_chunk_time(const otf2r_chunk *k)
{
	return k->time;
}

int otf2r_chunk_next(otf2r_chunk *k, otf2r_chunk_rec *r)
{
	otf2r__cur *c = &k->c;
	const uint8_t *start = c->p;
	memset(r, 0, sizeof(*r));
	r->off = (size_t)(start - k->base);
	if (start >= c->end || *start == 0 || *start == 1 || *start == 2)
		return 0;   /* the bytes, the chunk, the buffer or the file end */
	unsigned t = *c->p++;
	r->type = t;
	int d;
	if (k->kind != OTF2R_CHUNK_EVENTS) {    /* a definition: always a length */
		uint64_t len;
		if (otf2r__reclen(c, &len))
			goto cut;
		otf2r__cur rc = { c->p, c->p + len, c->be };
		c->p += len;
		if (k->used)
			otf2r__arena_reset(&k->scratch);
		k->used = 1;
		d = k->kind == OTF2R_CHUNK_GLOBAL_DEFS ? otf2r__dec_gdef(&rc, t, &r->u.gdef, &k->scratch)
						       : otf2r__dec_ldef(&rc, t, &r->u.ldef, &k->scratch);
		if (d < 0)
			goto cut;
		r->decoded = d == 0;
	} else if (t == 5) {                    /* timestamp */
		if (otf2r__t64(c, &k->time))
			goto cut;
	} else if (t == 6 || !otf2r__evt_single[t]) {   /* attribute list, or an event with a length */
		uint64_t len;
		if (otf2r__reclen(c, &len))
			goto cut;
		otf2r__cur rc = { c->p, c->p + len, c->be };
		c->p += len;
		if (t != 6) {
			if (k->used)
				otf2r__arena_reset(&k->scratch);
			k->used = 1;
			if ((d = otf2r__dec_evt(&rc, t, &r->u.evt, &k->scratch)) < 0)
				goto cut;
			r->decoded = d == 0;
		}
	} else {                                /* an event of one compressed field */
		if (k->used)
			otf2r__arena_reset(&k->scratch);
		k->used = 1;
		if ((d = otf2r__dec_evt(c, t, &r->u.evt, &k->scratch)) < 0)
			goto cut;
		r->decoded = d == 0;
	}
	r->len = (size_t)(c->p - start);
	r->time = k->time;
	return 1;
cut:
	c->p = start;
	return -1;
}
