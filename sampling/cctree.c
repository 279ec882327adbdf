/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cctree.c - the sampler's calling-context tree (sampler.c has the design):
 * nodes found or created by (parent, key) in the thread's hash table
 * (async-signal-safe: the SIGPROF handler inserts its stacks), a stack's
 * path below the innermost open region, OTF2's unwind distance, and the
 * regions written as CallingContextEnter/Leave when sampling is on.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "smp_sampler.h"
#include "smp_libs.h"

/* Child of parent with key: found or created. SMP_UNDEF when the table or
 * the node array is full, or after the definitions were made.
 * Async-signal-safe (caller owns the thread's tree: handler, or busy set). */
SMP_HOT uint32_t tr_smp_child(struct smp_thread *s, uint32_t parent, uint64_t key)
{
	uint32_t h = smp_hash(parent, key);
	for (;;) {
		uint32_t v = s->hash[h];
		if (!v)
			break;
		struct smp_node *n = &tr_smp_nodes[v - 1];
		if (n->key == key && n->parent == parent)
			return v - 1;
		h = (h + 1) & tr_smp_hash_mask;
	}
	if (s->hused >= s->hlimit || tr_smp_frozen)
		return SMP_UNDEF;
	uint32_t id = __atomic_fetch_add(&tr_smp_nnodes, 1, __ATOMIC_RELAXED);
	if (id >= tr_smp_node_cap) {
		__atomic_fetch_sub(&tr_smp_nnodes, 1, __ATOMIC_RELAXED);
		return SMP_UNDEF;
	}
	struct smp_node *n = &tr_smp_nodes[id];
	n->key = key;
	n->parent = parent;
	uint32_t d = parent == SMP_UNDEF ? 1 : (uint32_t)tr_smp_nodes[parent].depth + 1;
	n->gen = (uint16_t)tr_smp_obj_gen;
	/* depth last (never 0): the node is complete (TRACER_DURABLE ticks
	 * define nodes while others are being created) */
	__atomic_store_n(&n->depth, d > 0xffff ? 0xffff : (uint16_t)d, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->hash[h] = id + 1;
	s->hused++;
	return id;
}

/* unwindDistance of node `to` after the previous calling context `from`
 * (OTF2 CallingContext semantics): the nodes of `to` below the common
 * ancestor were newly entered, the common ancestor made progress; distance =
 * newly entered + 1 (>= 1). When no ancestor is common the distance reaches
 * the undefined root. */
SMP_HOT uint32_t tr_smp_unwind_distance(uint32_t from, uint32_t to)
{
	uint32_t a = to, b = from, da = smp_depth(to), db = smp_depth(from), n = 0;
	while (da > db) {
		a = smp_parent(a);
		da--;
		n++;
	}
	while (db > da) {
		b = smp_parent(b);
		db--;
	}
	while (a != b) {
		a = smp_parent(a);
		b = smp_parent(b);
		n++;
	}
	return n + 1;
}

/* Node of a stack f[0..n-1] (leaf first; f[0] is the exact interrupted pc
 * when exact_leaf, else every frame is a return address), placed below the
 * innermost open region. trunc: frames beyond the depth limit were cut (the
 * root side), a "[truncated]" node stands for them. */
SMP_HOT uint32_t tr_smp_path(struct smp_thread *s, void *const *f, uint32_t n, int exact_leaf, int trunc,
			 uint32_t *fresh)
{
	uint32_t node = SMP_UNDEF;
	uint32_t start = 0;
	int skip_wrapper = 0;
	uint32_t nfresh = 0;

	if (s->nreg) {
		uint32_t ri = s->nreg <= SMP_MAX_REGIONS ? s->nreg - 1 : SMP_MAX_REGIONS - 1;
		const struct smp_region *r = &s->reg[ri];
		node = r->node;
		if (r->depth && !trunc) {
			start = r->depth - 1;
			if (start >= n)
				start = n ? n - 1 : 0;
			if (start < n) {
				uintptr_t ip = (uintptr_t)f[n - 1 - start];
				uint64_t key = (start == n - 1 && exact_leaf) ? ip : ip | SMP_KEY_RET;
				if (key == r->caller) {
					start++;
					skip_wrapper = 1;
				}
			}
		}
	}
	if (trunc) {
		node = tr_smp_child(s, node, SMP_KEY_TRUNC);
		if (node == SMP_UNDEF)
			return SMP_UNDEF;
	}
	int in_tracer = 0;
	uint32_t j = start;

	/* Samples: resume after the frames shared with the previous sample
	 * (same base, same keys at the same depths): their nodes are known, so
	 * a CPU-bound loop costs one lookup per sample, not one per frame. */
	int cache = exact_leaf && s->ckey;
	int reset = 0;
	if (cache) {
		if (s->cbase == node && s->cstart == start) {
			uint32_t m = n - start < s->cn ? n - start : s->cn;
			uint32_t k = 0;
			while (k < m) {
				uintptr_t ip = (uintptr_t)f[n - 1 - (start + k)];
				uint64_t key = (start + k == n - 1) ? ip : ip | SMP_KEY_RET;
				if (key != s->ckey[k])
					break;
				k++;
			}
			if (k) {
				node = s->cnode[k - 1];
				in_tracer = s->cflag[k - 1] & 1;
				skip_wrapper = (s->cflag[k - 1] >> 1) & 1;
				j = start + k;
			}
		} else {
			/* another base: the cache restarts there */
			s->cbase = node;
			s->cstart = start;
			s->cn = 0;
			reset = 1;
		}
	}
	for (; j < n; j++) {
		uintptr_t ip = (uintptr_t)f[n - 1 - j];
		uint64_t key = (j == n - 1 && exact_leaf) ? ip : ip | SMP_KEY_RET;
		uint32_t prev = node;
		if (smp_is_tracer(ip)) {
			if (skip_wrapper) {
				/* the wrapper frame right below the region's caller */
				skip_wrapper = 0;
			} else {
				if (!in_tracer)
					node = tr_smp_child(s, node, SMP_KEY_TRACER);
				in_tracer = 1;
			}
		} else {
			skip_wrapper = 0;
			in_tracer = 0;
			node = tr_smp_child(s, node, key);
		}
		if (node == SMP_UNDEF) {
			if (cache)
				s->cn = 0;
			return SMP_UNDEF;
		}
		nfresh += node != prev;
		if (cache) {
			s->ckey[j - start] = key;
			s->cnode[j - start] = node;
			s->cflag[j - start] = (uint8_t)(in_tracer | skip_wrapper << 1);
		}
	}
	if (cache)
		s->cn = n - start;
	if (fresh)
		*fresh = reset ? UINT32_MAX : nfresh;
	return node;
}

/* ---- calling-context enter/leave ----------------------------------------------------- */

void tr_smp_write_enter(struct tr_thread *t, uint64_t time, uint32_t region)
{
	struct smp_thread *s = t->sampling;
	if (!s) {
		tr_evt_status(t, otf2w_evt_enter(t->w, NULL, time, region));
		return;
	}
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tr_smp_drain(s, t, time);

	uint32_t node = SMP_UNDEF;
	uint32_t nf = 0;
	uint64_t caller = 0;
	int trunc = 0;
	if (s->nreg < SMP_MAX_REGIONS) {
		s->unwinding = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		int n = smp_unw->unw_backtrace(s->thrbuf, (int)s->bufcap);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->unwinding = 0;
		int i = 0;
		while (i < n && smp_is_tracer((uintptr_t)s->thrbuf[i]))
			i++;
		nf = (uint32_t)(n - i);
		if (n == (int)s->bufcap || nf > s->maxdepth) {
			trunc = 1;
			if (nf > s->maxdepth)
				nf = s->maxdepth;
		}
		if (nf)
			caller = (uintptr_t)s->thrbuf[i] | SMP_KEY_RET;
		uint32_t p = tr_smp_path(s, s->thrbuf + i, nf, 0, trunc, NULL);
		if (p != SMP_UNDEF || !nf)
			node = tr_smp_child(s, p, SMP_KEY_REGION | region);
	} else {
		/* too deep to track: one deterministic node below the last tracked */
		node = tr_smp_child(s, s->reg[SMP_MAX_REGIONS - 1].node, SMP_KEY_REGION | region);
	}
	if (node == SMP_UNDEF) {
		/* tree full: keep the region structure at least */
		s->full++;
		node = tr_smp_child(s, s->nreg ? s->reg[(s->nreg <= SMP_MAX_REGIONS ? s->nreg : SMP_MAX_REGIONS) - 1].node
					    : SMP_UNDEF, SMP_KEY_REGION | region);
	}
	if (s->nreg < SMP_MAX_REGIONS) {
		struct smp_region *r = &s->reg[s->nreg];
		r->node = node;
		r->region = region;
		r->depth = trunc ? 0 : nf;
		r->caller = caller;
	}
	s->nreg++;
	if (node != SMP_UNDEF) {
		uint32_t ud = tr_smp_unwind_distance(s->cur, node);
		tr_evt_status(t, otf2w_evt_calling_context_enter(t->w, NULL, time, node, ud));
		s->cur = node;
		s->cur_is_sample = 0;
	} else {
		s->errors++;
		tr_evt_status(t, otf2w_evt_enter(t->w, NULL, time, region));
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
}

void tr_smp_write_leave(struct tr_thread *t, uint64_t time, uint32_t region)
{
	struct smp_thread *s = t->sampling;
	if (!s) {
		tr_evt_status(t, otf2w_evt_leave(t->w, NULL, time, region));
		return;
	}
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tr_smp_drain(s, t, time);

	uint32_t node = SMP_UNDEF;
	if (s->nreg > SMP_MAX_REGIONS) {
		node = tr_smp_child(s, s->reg[SMP_MAX_REGIONS - 1].node, SMP_KEY_REGION | region);
		s->nreg--;
	} else {
		/* the innermost open region with this id (normally the top) */
		uint32_t k = s->nreg;
		while (k > 0 && s->reg[k - 1].region != region)
			k--;
		if (k > 0) {
			node = s->reg[k - 1].node;
			s->nreg = k - 1;
		}
	}
	if (node != SMP_UNDEF) {
		tr_evt_status(t, otf2w_evt_calling_context_leave(t->w, NULL, time, node));
		s->cur = smp_parent(node);
		s->cur_is_sample = 0;
	} else {
		s->errors++;
		tr_evt_status(t, otf2w_evt_leave(t->w, NULL, time, region));
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
}

