/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_pack.c - the packed form of a definition set: what a process hands
 * to MPI unification (tr_defs_pack) and saves as rank<r>.tdefs for
 * tools/tracer-merge. Host byte order; private to this code (a version
 * number guards it). No process state; the crash path packs into a fixed
 * arena (struct tr_bbuf.fixed) and allocates nothing.
 */
#include <stdlib.h>
#include <string.h>
#include "defset.h"

#define TR_DEFS_MAGIC 0x46445254u /* "TRDF" */
#define TR_DEFS_VERSION 3u   /* 2: I/O classes, 3: creating process */

static void bput(struct tr_bbuf *b, const void *v, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap && b->fixed) {
		b->err = 1;
		return;
	}
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		while (nc < b->n + n)
			nc *= 2;
		uint8_t *np = otf2w_sys.realloc(b->p, nc);
		if (!np) {
			b->err = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void bput32(struct tr_bbuf *b, uint32_t v) { bput(b, &v, 4); }
static void bput64(struct tr_bbuf *b, uint64_t v) { bput(b, &v, 8); }

struct rbuf {
	const uint8_t *p;
	size_t n, off;
	int err;
};

static void bget(struct rbuf *r, void *v, size_t n)
{
	if (r->err || r->off + n > r->n) {
		r->err = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, r->p + r->off, n);
	r->off += n;
}

static uint32_t bget32(struct rbuf *r) { uint32_t v; bget(r, &v, 4); return v; }
static uint64_t bget64(struct rbuf *r) { uint64_t v; bget(r, &v, 8); return v; }

void tr_ds_pack(struct tr_bbuf *b, const struct defset *s)
{
	bput32(b, TR_DEFS_MAGIC);
	bput32(b, TR_DEFS_VERSION);
	bput32(b, s->nprocs);
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct tr_procinfo *p = &s->procs[i];
		bput32(b, (uint32_t)p->rank);
		bput32(b, p->pid);
		bput32(b, p->host);
		bput32(b, p->gname);
		bput32(b, (uint32_t)p->creator);
		bput64(b, p->t_first);
		bput64(b, p->t_last);
		bput64(b, p->resolution);
		bput64(b, p->realtime);
		bput32(b, p->nlocs);
		for (uint32_t k = 0; k < p->nlocs; k++) {
			bput64(b, p->locs[k].id);
			bput32(b, p->locs[k].name);
			bput64(b, p->locs[k].nevents);
		}
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		bput32(b, s->paradigm_name[i]);
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		bput32(b, s->n[c]);
		for (uint32_t i = 0; i < s->n[c]; i++) {
			const struct def *d = tr_ds_view(s, s->items[c][i]);
			bput32(b, d->len);
			bput(b, d->v, tr_ds_def_bytes(d->cls, d->len));
		}
	}
	/* clock offsets (of the single process of a local set) */
	bput32(b, s->ncoffs);
	for (uint32_t i = 0; i < s->ncoffs; i++) {
		bput64(b, s->coffs[i].time);
		bput64(b, (uint64_t)s->coffs[i].offset);
		bput(b, &s->coffs[i].stddev, 8);
	}
	bput64(b, s->evt_chunk);
	bput64(b, s->def_chunk);
}

int tr_ds_unpack(const void *buf, size_t len, struct defset *s)
{
	struct rbuf r = { buf, len, 0, 0 };
	memset(s, 0, sizeof(*s));
	if (bget32(&r) != TR_DEFS_MAGIC || bget32(&r) != TR_DEFS_VERSION)
		return -1;
	s->nprocs = bget32(&r);
	if (r.err || s->nprocs > (1u << 24))
		return -1;
	s->procs = otf2w_sys.calloc(s->nprocs ? s->nprocs : 1, sizeof(*s->procs));
	if (!s->procs)
		return -1;
	for (uint32_t i = 0; i < s->nprocs && !r.err; i++) {
		struct tr_procinfo *p = &s->procs[i];
		p->rank = (int32_t)bget32(&r);
		p->pid = bget32(&r);
		p->host = bget32(&r);
		p->gname = bget32(&r);
		p->creator = (int32_t)bget32(&r);
		p->t_first = bget64(&r);
		p->t_last = bget64(&r);
		p->resolution = bget64(&r);
		p->realtime = bget64(&r);
		p->nlocs = bget32(&r);
		if (r.err || p->nlocs > (1u << 24))
			goto fail;
		p->locs = otf2w_sys.calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->locs));
		if (!p->locs)
			goto fail;
		for (uint32_t k = 0; k < p->nlocs; k++) {
			p->locs[k].id = bget64(&r);
			p->locs[k].name = bget32(&r);
			p->locs[k].nevents = bget64(&r);
		}
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		s->paradigm_name[i] = bget32(&r);
	for (int c = 0; c < TR_DEF_NCLASSES && !r.err; c++) {
		uint32_t n = bget32(&r);
		for (uint32_t i = 0; i < n && !r.err; i++) {
			uint32_t l = bget32(&r);
			size_t nb = tr_ds_def_bytes((uint32_t)c, l);
			if (r.err || r.off + nb > r.n) {
				r.err = 1;
				break;
			}
			if (tr_ds_append(s, (uint32_t)c, r.p + r.off, l))
				goto fail;
			r.off += nb;
		}
	}
	if (r.err)
		goto fail;
	if (r.off + 4 <= r.n) {
		uint32_t nco = bget32(&r);
		if (nco > 4096)
			goto fail;
		s->coffs = otf2w_sys.calloc(nco ? nco : 1, sizeof(*s->coffs));
		if (!s->coffs)
			goto fail;
		for (uint32_t i = 0; i < nco && !r.err; i++) {
			s->coffs[i].time = bget64(&r);
			s->coffs[i].offset = (int64_t)bget64(&r);
			bget(&r, &s->coffs[i].stddev, 8);
		}
		s->ncoffs = r.err ? 0 : nco;
	}
	if (!r.err && r.off + 16 <= r.n) {   /* (absent in the files of older versions) */
		s->evt_chunk = bget64(&r);
		s->def_chunk = bget64(&r);
	}
	return 0;
fail:
	tr_ds_free(s);
	return -1;
}
