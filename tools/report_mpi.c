/* SPDX-License-Identifier: BSD-3-Clause */
/* report_mpi.c - MPI figures of `tracer report` / `tracer convert`: the
 * process of a communicator rank, message matching (sends and receives in
 * order per sender process, receiver process, communicator and tag), late
 * sender time, the timeline's message lines, communicator names. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

static size_t peer_group_slow(const struct rep *r, uint32_t comm, uint32_t rank);

/* Group index of the receiver/sender `rank` of communicator `comm`
 * (direct-mapped cache in front of the definition lookups). */
size_t rep_peer_group(const struct rep *r, uint32_t comm, uint32_t rank)
{
	struct rep *w = (struct rep *)r;          /* the cache only */
	uint64_t key = (uint64_t)comm << 32 | rank;
	size_t slot = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52);    /* 4096 slots */
	if (w->peer_cache[slot].valid && w->peer_cache[slot].key == key)
		return w->peer_cache[slot].group;
	size_t g = peer_group_slow(r, comm, rank);
	w->peer_cache[slot].valid = 1;
	w->peer_cache[slot].key = key;
	w->peer_cache[slot].group = g;
	return g;
}

static size_t peer_group_slow(const struct rep *r, uint32_t comm, uint32_t rank)
{
	const otf2r_def *c = otf2r_def_find(r->ar, OTF2R_GDEF_COMM, comm);
	if (!c)
		return SIZE_MAX;
	const otf2r_def *g = otf2r_def_find(r->ar, OTF2R_GDEF_GROUP, c->u.comm.group);
	if (!g || rank >= g->u.group.number_of_members)
		return SIZE_MAX;
	uint64_t m = g->u.group.members[rank];
	if (g->u.group.group_type != 4) {        /* COMM_GROUP / COMM_SELF: rank indices */
		const otf2r_def *cl = NULL;
		for (size_t i = 0; i < otf2r_def_count(r->ar) && !cl; i++) {
			const otf2r_def *d = otf2r_def_at(r->ar, i);
			if (d->type == OTF2R_GDEF_GROUP && d->u.group.group_type == 4 &&
			    d->u.group.paradigm == g->u.group.paradigm)
				cl = d;
		}
		if (!cl || m >= cl->u.group.number_of_members)
			return SIZE_MAX;
		m = cl->u.group.members[m];
	}
	for (size_t i = 0; i < r->nlocs; i++)
		if (r->locs[i].id == m)
			return r->locs[i].group;
	return SIZE_MAX;
}


static size_t match_slot(const struct rep_matchq *q, size_t cap, const uint64_t key[4])
{
	size_t j = (size_t)((key[0] * 31 + key[1]) * 0x9e3779b97f4a7c15ull + key[2] * 17 + key[3]) &
		   (cap - 1);
	while (q[j].used && memcmp(q[j].key, key, sizeof q[j].key))
		j = (j + 1) & (cap - 1);
	return j;
}

uint64_t rep_match(struct rep_match *m, const uint64_t key[4], int side, uint64_t v, int *matched)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		struct rep_matchq *nq = rep_xcalloc(cap, sizeof *nq);
		for (size_t i = 0; i < m->cap; i++)
			if (m->q[i].used)
				nq[match_slot(nq, cap, m->q[i].key)] = m->q[i];
		free(m->q);
		m->q = nq;
		m->cap = cap;
	}
	struct rep_matchq *q = &m->q[match_slot(m->q, m->cap, key)];
	if (!q->used) {
		q->used = 1;
		memcpy(q->key, key, sizeof q->key);
		m->n++;
	}
	if (q->head < q->n && q->side != side) {
		*matched = 1;
		return q->vals[q->head++];
	}
	if (q->head == q->n)
		q->head = q->n = 0;
	q->side = side;
	if (q->n == q->cap)
		q->vals = rep_grow(q->vals, &q->cap, 8, sizeof *q->vals);
	*matched = 0;
	return q->vals[q->n++] = v;
}

void rep_match_free(struct rep_match *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->q[i].vals);
	free(m->q);
	memset(m, 0, sizeof *m);
}

int rep_message(const otf2r_event *ev, uint32_t *peer, uint32_t *comm, uint32_t *tag,
		uint64_t *bytes)
{
	switch (ev->type) {
	case OTF2R_EVT_MPI_SEND:
		*peer = ev->u.mpi_send.receiver; *comm = ev->u.mpi_send.communicator;
		*tag = ev->u.mpi_send.msg_tag; *bytes = ev->u.mpi_send.msg_length;
		return 1;
	case OTF2R_EVT_MPI_ISEND:
		*peer = ev->u.mpi_isend.receiver; *comm = ev->u.mpi_isend.communicator;
		*tag = ev->u.mpi_isend.msg_tag; *bytes = ev->u.mpi_isend.msg_length;
		return 1;
	case OTF2R_EVT_MPI_RECV:
		*peer = ev->u.mpi_recv.sender; *comm = ev->u.mpi_recv.communicator;
		*tag = ev->u.mpi_recv.msg_tag; *bytes = ev->u.mpi_recv.msg_length;
		return 0;
	default:
		*peer = ev->u.mpi_irecv.sender; *comm = ev->u.mpi_irecv.communicator;
		*tag = ev->u.mpi_irecv.msg_tag; *bytes = ev->u.mpi_irecv.msg_length;
		return 0;
	}
}

/* Late sender: a receive whose call (innermost open region) began before
 * the matching send's call waited send_enter - recv_enter for it. */
static size_t pend_new(struct rep *r)
{
	if (r->pend_free) {
		size_t k = r->pend_free - 1;
		r->pend_free = r->pend[k].next_free;
		return k;
	}
	if (r->npend == r->cappend)
		r->pend = rep_grow(r->pend, &r->cappend, 1024, sizeof *r->pend);
	return r->npend++;
}

/* Late receiver: a blocking send whose call began before the matching
 * receive's call waited min(receive enter, send leave) - send enter. */
static void bsend_try(struct rep *r, size_t k)
{
	struct rep_bsend *b = &r->bsend[k];
	if (b->leave == UINT64_MAX || b->recv_enter == UINT64_MAX)
		return;
	if (b->recv_enter > b->enter) {
		uint64_t end = b->recv_enter < b->leave ? b->recv_enter : b->leave;
		r->locs[b->loc].late_receiver += end > b->enter ? end - b->enter : 0;
		r->locs[b->loc].late_receiver_n++;
		/* the path jumps to the receiver only when its receive ended
		 * the wait (not when the send's call ended before it began) */
		if (end > b->enter)
			rep_pair_add(r, b->loc, b->rloc, REP_WS_LR, end - b->enter, end, b->recv_enter <= b->leave);
	}
	b->next_free = r->bsend_free;
	r->bsend_free = k + 1;
}

void rep_bsend_left(struct rep *r, size_t k, uint64_t t)
{
	r->bsend[k - 1].leave = t;
	bsend_try(r, k - 1);
}

void rep_late_sender(struct rep *r, size_t li, const otf2r_event *ev)
{
	struct rep_loc *L = &r->locs[li];
	uint32_t peer, comm, tag;
	uint64_t bytes;
	int send = rep_message(ev, &peer, &comm, &tag, &bytes);
	size_t pg = rep_peer_group(r, comm, peer);
	if (pg == SIZE_MAX)
		return;
	uint64_t start = L->depth ? L->stack[L->depth - 1].enter : ev->time;
	size_t bs = 0;                          /* this blocking send: index + 1 */
	if (ev->type == OTF2R_EVT_MPI_SEND && L->depth && !L->stack[L->depth - 1].bsend) {
		if (r->bsend_free) {
			bs = r->bsend_free;
			r->bsend_free = r->bsend[bs - 1].next_free;
		} else {
			if (r->nbsend == r->capbsend)
				r->bsend = rep_grow(r->bsend, &r->capbsend, 256, sizeof *r->bsend);
			bs = ++r->nbsend;
		}
		r->bsend[bs - 1] = (struct rep_bsend){ li, 0, SIZE_MAX, start, UINT64_MAX, UINT64_MAX };
		L->stack[L->depth - 1].bsend = bs;
	}
	uint64_t key[4] = { send ? L->group : pg, send ? pg : L->group, comm, tag };
	size_t v = pend_new(r);
	int matched;
	uint64_t o = rep_match(&r->match, key, !send, v, &matched);
	if (!matched) {
		r->pend[v] = (struct rep_pend){ start, ev->time, li, bs, 0 };
		return;
	}
	r->pend[v].next_free = r->pend_free;      /* not needed: matched at once */
	r->pend_free = v + 1;
	struct rep_pend other = r->pend[o];
	r->pend[o].next_free = r->pend_free;
	r->pend_free = o + 1;
	uint64_t recv_enter = send ? other.enter : start;
	uint64_t send_enter = send ? start : other.enter;
	size_t rl = send ? other.loc : li;
	if (r->nmsgs < REP_MAXMSGS) {
		if (r->nmsgs == r->capmsgs)
			r->msgs = rep_grow(r->msgs, &r->capmsgs, 256, sizeof *r->msgs);
		r->msgs[r->nmsgs++] = send ? (struct rep_msg){ li, other.loc, ev->time, other.time }
					   : (struct rep_msg){ other.loc, li, other.time, ev->time };
	}
	if (send_enter > recv_enter) {
		/* one wait per receiving call: the receives of one MPI_Waitall
		 * (one call entered at recv_enter) charge its longest wait once,
		 * not one wait per request (600 ms were reported for 300) */
		struct rep_loc *R = &r->locs[rl];
		uint64_t w = send_enter - recv_enter;
		size_t sl = send ? li : other.loc;
		if (R->ls_call == recv_enter + 1) {
			if (w > R->ls_max) {
				/* (the call waited until its latest sender began) */
				rep_pair_late_sender(r, rl, sl, w, send_enter, 1, R->ls_max);
				R->late_sender += w - R->ls_max;
				R->ls_max = w;
			}
		} else {
			rep_pair_late_sender(r, rl, sl, w, send_enter, 0, 0);
			R->ls_call = recv_enter + 1;
			R->ls_max = w;
			R->late_sender += w;
			R->late_sender_n++;
		}
	}
	size_t k = send ? bs : other.bsend;       /* the blocking send, if any */
	if (k) {
		r->bsend[k - 1].recv_enter = recv_enter;
		r->bsend[k - 1].rloc = rl;
		bsend_try(r, k - 1);
	}
}


const char *rep_comm_name(const struct rep *r, uint32_t comm)
{
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_COMM, comm);
	if (!d)
		d = otf2r_def_find(r->ar, OTF2R_GDEF_INTER_COMM, comm);
	if (!d)
		return "?";
	return rep_str_or(r, d->type == OTF2R_GDEF_COMM ? d->u.comm.name : d->u.inter_comm.name, "?");
}
