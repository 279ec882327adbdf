/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_wait.c - wait states at MPI collectives, as Scalasca names them.
 *
 * The k-th MpiCollectiveEnd of a location on a communicator and the k-th of
 * every other member are one collective operation (MPI orders collectives
 * per communicator). For each operation the Enter time of each member's
 * call (the region open at its MpiCollectiveEnd) is kept until every member
 * has ended it (the communicator's size, from its group), then:
 * - N x N (barrier, allreduce, allgather, alltoall, reduce_scatter): every
 *   member waits from its Enter to the last member's Enter ("wait at NxN");
 * - 1 to N (bcast, scatter): a member that entered before the root waits
 *   until the root entered ("late broadcast");
 * - N to 1 (gather, reduce): the root, entered before the last of the
 *   others, waits until that one entered ("early reduce").
 * Each wait is also charged to the pair (member, member waited for) and
 * kept for the critical path (report_pairs.c, report_path.c).
 * Operations some member never ended (a rank killed, its events lost) are
 * dropped at the end. Memory: the operations in flight, not the events.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct wait_op {
	uint64_t key;           /* comm << 40 | seq; 0: free slot of the table */
	uint8_t op;
	uint32_t root;          /* root rank, UINT32_MAX none */
	size_t n, need;
	size_t *loc;            /* [need] location index of each member's end */
	uint8_t *in;            /* [need] that end is inside the time window */
	uint64_t *enter;        /* [need] its call's Enter */
};

struct rep_waits {
	uint64_t *seq_key, *seq_val;    /* (location + 1) << 32 | comm -> operations ended so far */
	size_t nseq, capseq;
	struct wait_op *ops;            /* open addressing on key */
	size_t nops, capops;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The sequence number of this end of location li on comm (0, 1, ...). */
static uint64_t next_seq(struct rep_waits *w, size_t li, uint32_t comm)
{
	if (2 * (w->nseq + 1) > w->capseq) {
		size_t nc = w->capseq ? 2 * w->capseq : 256;
		uint64_t *k = rep_xcalloc(nc, sizeof *k), *v = rep_xcalloc(nc, sizeof *v);
		for (size_t i = 0; i < w->capseq; i++) {
			if (!w->seq_key[i])
				continue;
			size_t s = slot_of(w->seq_key[i], nc);
			while (k[s])
				s = (s + 1) & (nc - 1);
			k[s] = w->seq_key[i];
			v[s] = w->seq_val[i];
		}
		free(w->seq_key);
		free(w->seq_val);
		w->seq_key = k;
		w->seq_val = v;
		w->capseq = nc;
	}
	uint64_t key = (uint64_t)(li + 1) << 32 | comm;
	size_t s = slot_of(key, w->capseq);
	while (w->seq_key[s] && w->seq_key[s] != key)
		s = (s + 1) & (w->capseq - 1);
	if (!w->seq_key[s]) {
		w->seq_key[s] = key;
		w->nseq++;
	}
	return w->seq_val[s]++;
}

static void ops_grow(struct rep_waits *w)
{
	size_t nc = w->capops ? 2 * w->capops : 64;
	struct wait_op *t = rep_xcalloc(nc, sizeof *t);
	for (size_t i = 0; i < w->capops; i++) {
		if (!w->ops[i].key)
			continue;
		size_t s = slot_of(w->ops[i].key, nc);
		while (t[s].key)
			s = (s + 1) & (nc - 1);
		t[s] = w->ops[i];
	}
	free(w->ops);
	w->ops = t;
	w->capops = nc;
}

/* Remove slot s (linear probing: move back what followed it). */
static void ops_remove(struct rep_waits *w, size_t s)
{
	size_t mask = w->capops - 1;
	free(w->ops[s].loc);
	free(w->ops[s].enter);
	free(w->ops[s].in);
	w->ops[s].key = 0;
	w->nops--;
	for (size_t j = (s + 1) & mask; w->ops[j].key; j = (j + 1) & mask) {
		size_t k = slot_of(w->ops[j].key, w->capops);
		/* an entry whose home k lies cyclically in (s, j] stays */
		if (s <= j ? (s < k && k <= j) : (s < k || k <= j))
			continue;
		w->ops[s] = w->ops[j];
		w->ops[j].key = 0;
		s = j;
	}
}

static size_t comm_size(const struct rep *r, uint32_t comm)
{
	const otf2r_def *c = otf2r_def_find(r->ar, OTF2R_GDEF_COMM, comm);
	const otf2r_def *g = c ? otf2r_def_find(r->ar, OTF2R_GDEF_GROUP, c->u.comm.group) : NULL;
	return g ? g->u.group.number_of_members : 0;
}

static int kind_of(uint8_t op)
{
	switch (op) {
	case 0: case 6: case 7: case 8: case 9: case 10: case 11: case 13: case 16:
		return 'N';   /* barrier, allgather(v), alltoall(v, w), allreduce, reduce_scatter(_block) */
	case 1: case 4: case 5:
		return 'B';   /* bcast, scatter(v) */
	case 2: case 3: case 12:
		return 'R';   /* gather(v), reduce */
	}
	return 0;
}

static void settle(struct rep *r, const struct wait_op *o)
{
	int kind = kind_of(o->op);
	uint64_t last = 0, root_enter = UINT64_MAX, last_other = 0;
	size_t rootg = o->root == UINT32_MAX ? SIZE_MAX : rep_peer_group(r, o->key >> 40, o->root);
	size_t root_i = SIZE_MAX, last_i = 0, other_i = SIZE_MAX;
	for (size_t i = 0; i < o->n; i++) {
		if (o->enter[i] > last || !i) {
			last = o->enter[i];
			last_i = i;
		}
		if (rootg != SIZE_MAX && r->locs[o->loc[i]].group == rootg && root_i == SIZE_MAX) {
			root_i = i;
			root_enter = o->enter[i];
		}
	}
	for (size_t i = 0; i < o->n; i++)
		if (i != root_i && (o->enter[i] > last_other || other_i == SIZE_MAX)) {
			last_other = o->enter[i];
			other_i = i;
		}
	/* who waits on whom: each member for the last to enter (the first
	 * of equal ones), the members for the root, the root for the last of
	 * the others; the wait ends at that one's Enter */
	for (size_t i = 0; i < o->n; i++) {
		struct rep_loc *L = &r->locs[o->loc[i]];
		if (!o->in[i])
			continue;
		if (kind == 'N') {
			L->wait_nxn += last - o->enter[i];
			if (last > o->enter[i])
				rep_pair_add(r, o->loc[i], o->loc[last_i], REP_WS_NXN, last - o->enter[i], last, 1);
		} else if (kind == 'B' && root_i != SIZE_MAX && i != root_i && root_enter > o->enter[i]) {
			L->late_bcast += root_enter - o->enter[i];
			rep_pair_add(r, o->loc[i], o->loc[root_i], REP_WS_BCAST, root_enter - o->enter[i], root_enter, 1);
		} else if (kind == 'R' && i == root_i && last_other > o->enter[i]) {
			L->early_reduce += last_other - o->enter[i];
			rep_pair_add(r, o->loc[i], o->loc[other_i], REP_WS_REDUCE, last_other - o->enter[i], last_other,
				     1);
		}
	}
}

void rep_wait_end(struct rep *r, size_t li, const otf2r_event *ev, int in)
{
	const struct rep_loc *L = &r->locs[li];
	uint8_t op = ev->u.mpi_collective_end.collective_op;
	uint32_t comm = ev->u.mpi_collective_end.communicator;
	if (!kind_of(op) || !L->depth)
		return;
	if (!r->waits)
		r->waits = rep_xcalloc(1, sizeof *r->waits);
	struct rep_waits *w = r->waits;
	uint64_t seq = next_seq(w, li, comm);
	if (seq >= (1ull << 40) || comm >= (1u << 24))
		return;
	uint64_t key = (uint64_t)comm << 40 | seq;
	key += !key;   /* (comm 0, operation 0: 0 marks free slots) */
	if (2 * (w->nops + 1) > w->capops)
		ops_grow(w);
	size_t s = slot_of(key, w->capops);
	while (w->ops[s].key && w->ops[s].key != key)
		s = (s + 1) & (w->capops - 1);
	struct wait_op *o = &w->ops[s];
	if (!o->key) {
		size_t need = comm_size(r, comm);
		if (need < 2)
			return;   /* (alone: nobody waits) */
		memset(o, 0, sizeof *o);
		o->key = key;
		o->op = op;
		o->root = ev->u.mpi_collective_end.root;
		o->need = need;
		o->loc = rep_xcalloc(need, sizeof *o->loc);
		o->enter = rep_xcalloc(need, sizeof *o->enter);
		o->in = rep_xcalloc(need, 1);
		w->nops++;
	}
	if (o->n < o->need) {
		o->loc[o->n] = li;
		o->in[o->n] = (uint8_t)in;
		o->enter[o->n++] = L->stack[L->depth - 1].enter;
	}
	if (o->n == o->need) {
		settle(r, o);
		ops_remove(w, s);
	}
}

void rep_wait_free(struct rep *r)
{
	struct rep_waits *w = r->waits;
	if (!w)
		return;
	for (size_t i = 0; i < w->capops; i++)
		if (w->ops[i].key) {
			free(w->ops[i].loc);
			free(w->ops[i].enter);
			free(w->ops[i].in);
		}
	free(w->ops);
	free(w->seq_key);
	free(w->seq_val);
	free(w);
	r->waits = NULL;
}
