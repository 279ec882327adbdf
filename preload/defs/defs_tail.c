/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_tail.c - the snapshot tail: definitions a module keeps for the
 * TRACER_DURABLE snapshots only (the sampler's calling contexts that have
 * no symbols yet, as placeholders), made once each and placed after the
 * registry's own at every snapshot (tr_defs_tail_splice, between
 * tr_defs_provisional_begin and _end, which takes them out again). A tick
 * thus adds only what is new instead of defining everything again.
 *
 * A value that refers to another definition of the tail is written
 * TR_DEFS_TAIL | its index among the tail's of that class; the splice
 * turns it into the id the definition has in that snapshot (the
 * registry's count of the class, which grows between ticks, plus the
 * index). The ticking thread holds the registry throughout.
 */
#include <string.h>
#include "defs_int.h"

static struct {
	struct def **items[TR_DEF_NCLASSES];
	uint32_t n[TR_DEF_NCLASSES], cap[TR_DEF_NCLASSES];
	uint32_t base[TR_DEF_NCLASSES];   /* ids of the first at the last splice */
	uint32_t done[TR_DEF_NCLASSES];   /* resolved for those bases */
} tail;

/* The tail's definitions live in blocks of just under 64 KiB (the largest
 * size class of the tracer's heap, preload/core/mem.c: no mapping of its
 * own each), freed together by tr_defs_tail_clear (a malloc each was half
 * of a first tick's 10 ms: 36,000 calling contexts of a numpy run, in a
 * SIGPROF handler). */
#define TAIL_BLOCK ((64u << 10) - 64)
struct tail_block {
	struct tail_block *next;
	size_t used, cap;
	uint64_t data[];
};
static struct tail_block *blocks;

static void *tail_alloc(size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (!blocks || blocks->cap - blocks->used < n) {
		size_t cap = n > TAIL_BLOCK - sizeof(struct tail_block) ? n : TAIL_BLOCK - sizeof(struct tail_block);
		struct tail_block *b = otf2w_sys.malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = blocks;
		b->used = 0;
		b->cap = cap;
		blocks = b;
	}
	void *p = (char *)blocks->data + blocks->used;
	blocks->used += n;
	return p;
}

/* A tail definition: its values as in the registry, then (not strings) the
 * values as given, with the tail references to resolve at each splice. */
uint32_t tr_defs_tail_add(uint32_t cls, const void *data, uint32_t len)
{
	size_t nb = tr_ds_def_bytes(cls, len);
	size_t keep = cls == TR_DEF_STRING ? 0 : nb;
	if (tail.n[cls] == tail.cap[cls]) {
		uint32_t nc = tail.cap[cls] ? tail.cap[cls] * 2 : 256;
		struct def **ni = otf2w_sys.realloc(tail.items[cls], nc * sizeof(*ni));
		if (!ni)
			return UNDEF;
		tail.items[cls] = ni;
		tail.cap[cls] = nc;
	}
	struct def *d = tail_alloc(sizeof(*d) + ((nb + 7) & ~(size_t)7) + keep);
	if (!d)
		return UNDEF;
	d->hnext = NULL;
	d->cls = cls;
	d->len = len;
	d->hash = 0;
	d->id = UNDEF;
	memcpy(d->v, data, nb);
	if (keep)
		memcpy((char *)d->v + ((nb + 7) & ~(size_t)7), data, nb);
	tail.items[cls][tail.n[cls]] = d;
	return tail.n[cls]++;
}

uint32_t tr_defs_tail_count(uint32_t cls)
{
	return tail.n[cls];
}

void tr_defs_tail_clear(void)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		tail.n[c] = 0;
		tail.done[c] = 0;
	}
	while (blocks) {
		struct tail_block *b = blocks;
		blocks = b->next;
		otf2w_sys.free(b);
	}
}

/* The values of d for ids of the tail from base on. */
static void resolve(struct def *d, const uint32_t *base)
{
	const char *sch = tr_ds_schema_of(d);
	const uint64_t *raw = (const uint64_t *)((const char *)d->v + (((size_t)d->len * 8 + 7) & ~(size_t)7));
	for (uint32_t i = 0; i < d->len; i++) {
		int rc = tr_ds_kind_class(tr_ds_kind_at(d, sch, i));
		uint64_t x = raw[i];
		if (rc >= 0 && x != UNDEF && (x & TR_DEFS_TAIL))
			x = base[rc] + (x & ~(uint64_t)TR_DEFS_TAIL);
		d->v[i] = x;
	}
}

/* 1: a value of d refers to a class whose tail moved (chg). */
static int refers_moved(const struct def *d, const int *chg)
{
	const char *sch = tr_ds_schema_of(d);
	for (uint32_t i = 0; i < d->len; i++) {
		int rc = tr_ds_kind_class(tr_ds_kind_at(d, sch, i));
		if (rc >= 0 && chg[rc])
			return 1;
	}
	return 0;
}

int tr_defs_tail_splice(void)
{
	uint32_t base[TR_DEF_NCLASSES];
	int chg[TR_DEF_NCLASSES];
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		base[c] = tr_local.n[c];
		chg[c] = tail.n[c] && base[c] != tail.base[c];   /* (only tail classes are referred to so) */
	}
	/* the values of the new ones, and of all that refer to a class whose
	 * registry grew since (its tail's ids moved) */
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		if (c != TR_DEF_STRING && tail.n[c])
			for (uint32_t i = refers_moved(tail.items[c][0], chg) ? 0 : tail.done[c]; i < tail.n[c]; i++)
				resolve(tail.items[c][i], base);
		tail.done[c] = tail.n[c];
		tail.base[c] = base[c];
	}
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		if (tail.n[c] && tr_ds_splice(&tr_local, (uint32_t)c, tail.items[c], tail.n[c]))
			return -1;
	return 0;
}
