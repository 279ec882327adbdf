/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_req.c - request tracking for the non-blocking MPI calls: a
 * preallocated per-process open-addressing table (request handle -> kind,
 * peer, tag, comm, bytes, request id, persistent flag), and the hand-written
 * completion calls (Wait/Test families, Start, Request_free).
 *
 * The table takes no lock: a slot is claimed with a CAS on its key
 * (EMPTY/TOMB -> BUSY), filled, then published with a release store of the
 * handle; lookups compare keys with acquire loads; removal stores TOMB.
 * Nothing on this path allocates, except the per-thread scratch arrays of
 * Waitall & co., which grow (rarely) to the largest count seen.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mpi_int.h"
#include "mpi_abi.h"

#define REQ_BITS   15                   /* 32Ki slots (1.5 MiB) */
#define REQ_SLOTS  (1u << REQ_BITS)
#define REQ_PROBES 128
#define KEY_EMPTY  ((uintptr_t)0)
#define KEY_TOMB   ((uintptr_t)1)
#define KEY_BUSY   ((uintptr_t)2)

struct tr_mpi_req {
	_Atomic uintptr_t key;   /* request (or message) handle */
	uint8_t kind;            /* TR_MPI_REQ_* */
	uint8_t persistent;
	uint8_t active;          /* persistent: started and not completed */
	uint8_t op;              /* collective op */
	int peer, tag;
	uint32_t comm;           /* Comm ref */
	uint32_t root;
	uint64_t bytes, bytes2;  /* send bytes / coll sent, received */
	uint64_t id;             /* request id of the records */
	uintptr_t handle;        /* the key while taken (BUSY) by a completion call */
};

static struct tr_mpi_req *tr_mpi_reqs;
static _Atomic uint64_t tr_mpi_lost;

/* Per-thread request ids: thread index in the high bits, so ids are unique
 * in the process without an atomic. */
static TR_TLS uint64_t tls_req_ctr;

struct scratch {
	int cap;
	MPI_Status *st;
	struct tr_mpi_req **ent;
};
static TR_TLS struct scratch tls_scr;

int tr_mpi_req_init(void)
{
	if (tr_mpi_reqs)
		return 0;
	void *p = tr_real.mmap(NULL, sizeof(struct tr_mpi_req) * REQ_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	tr_mpi_reqs = p;
	return 0;
}

uint64_t tr_mpi_req_lost(void)
{
	return atomic_load(&tr_mpi_lost);
}

static inline uint32_t req_hash(uintptr_t k)
{
	uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> (64 - REQ_BITS));
}

static inline uint64_t req_new_id(struct tr_thread *t)
{
	return ((uint64_t)t->index << 40) | ++tls_req_ctr;
}

/* Claims a slot for key k (a stale entry with the same key is reused). The
 * caller fills it and publishes it with req_publish. NULL: table full. */
static struct tr_mpi_req *req_claim(uintptr_t k)
{
	if (!tr_mpi_reqs)
		return NULL;
	uint32_t h = req_hash(k);
	for (uint32_t i = 0; i < REQ_PROBES; i++) {
		struct tr_mpi_req *e = &tr_mpi_reqs[(h + i) & (REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&e->key, memory_order_relaxed);
		if (cur == KEY_EMPTY || cur == KEY_TOMB) {
			if (atomic_compare_exchange_strong_explicit(&e->key, &cur, KEY_BUSY,
								    memory_order_acquire, memory_order_relaxed))
				return e;
		}
	}
	atomic_fetch_add(&tr_mpi_lost, 1);
	return NULL;
}

static inline void req_publish(struct tr_mpi_req *e, uintptr_t k)
{
	e->handle = k;
	atomic_store_explicit(&e->key, k, memory_order_release);
}

/* The entry of handle k, NULL if none. take: taken out of the table for a
 * completion call (its key becomes BUSY; req_done frees it or req_release
 * puts it back). Several entries may share one handle: Open MPI returns one
 * shared, already completed request for every send that finished at once,
 * so a taken entry must not be found again by the next element of the same
 * Waitall. */
static struct tr_mpi_req *req_lookup(uintptr_t k, int take)
{
	if (!tr_mpi_reqs || k <= KEY_BUSY)
		return NULL;
	uint32_t h = req_hash(k);
	for (uint32_t i = 0; i < REQ_PROBES; i++) {
		struct tr_mpi_req *e = &tr_mpi_reqs[(h + i) & (REQ_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&e->key, memory_order_acquire);
		if (cur == k && (!take || atomic_compare_exchange_strong_explicit(&e->key, &cur, KEY_BUSY,
										  memory_order_acquire,
										  memory_order_relaxed)))
			return e;
		if (cur == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

static inline struct tr_mpi_req *req_take(uintptr_t k)
{
	return req_lookup(k, 1);
}

static inline struct tr_mpi_req *req_find(uintptr_t k)
{
	return req_lookup(k, 0);
}

static inline void req_release(struct tr_mpi_req *e)
{
	if (e)
		atomic_store_explicit(&e->key, e->handle, memory_order_release);
}

static inline void req_remove(struct tr_mpi_req *e)
{
	atomic_store_explicit(&e->key, KEY_TOMB, memory_order_release);
}

/* A claimed entry for key: an active, not persistent request of kind on
 * comm (a window, an I/O handle); the caller fills in the rest and
 * publishes it. NULL: the table is full. */
static struct tr_mpi_req *req_open(uintptr_t key, uint8_t kind, uint32_t comm)
{
	struct tr_mpi_req *e = req_claim(key);
	if (e) {
		e->kind = kind;
		e->persistent = 0;
		e->active = 1;
		e->comm = comm;
	}
	return e;
}

void tr_mpi_req_p2p(struct tr_thread *t, uint64_t time, MPI_Request r, int kind, int persistent,
		    int peer, int tag, uint32_t comm, uint64_t bytes)
{
	if (r == MPI_REQUEST_NULL || peer == MPI_PROC_NULL)
		return;
	struct tr_mpi_req *e = req_claim((uintptr_t)r);
	if (!e)
		return;
	e->kind = (uint8_t)kind;
	e->persistent = (uint8_t)persistent;
	e->active = !persistent;
	e->peer = peer;
	e->tag = tag;
	e->comm = comm;
	e->bytes = bytes;
	e->id = persistent ? 0 : req_new_id(t);
	req_publish(e, (uintptr_t)r);
	if (persistent)
		return;
	if (kind == TR_MPI_REQ_SEND)
		TR_MPI_REC(t, otf2w_evt_mpi_isend(t->w, NULL, time, (uint32_t)peer, comm, (uint32_t)tag, bytes, e->id));
	else
		TR_MPI_REC(t, otf2w_evt_mpi_irecv_request(t->w, NULL, time, e->id));
}

void tr_mpi_req_coll(struct tr_thread *t, uint64_t time, MPI_Request r, uint8_t op, uint32_t comm,
		     uint32_t root, uint64_t sent, uint64_t recvd)
{
	if (r == MPI_REQUEST_NULL)
		return;
	struct tr_mpi_req *e = req_open((uintptr_t)r, TR_MPI_REQ_COLL, comm);
	if (!e)
		return;
	e->op = op;
	e->root = root;
	e->bytes = sent;
	e->bytes2 = recvd;
	e->id = req_new_id(t);
	req_publish(e, (uintptr_t)r);
	TR_MPI_REC(t, otf2w_evt_non_blocking_collective_request(t->w, NULL, time, e->id));
}

void tr_mpi_req_rma(struct tr_thread *t, MPI_Request r, uint32_t win, uint64_t id)
{
	if (r == MPI_REQUEST_NULL)
		return;
	struct tr_mpi_req *e = req_open((uintptr_t)r, TR_MPI_REQ_RMA, win);
	if (!e)
		return;
	e->id = id;
	req_publish(e, (uintptr_t)r);
}

void tr_mpi_req_io(MPI_Request r, uint32_t handle, uint64_t id)
{
	struct tr_mpi_req *e = req_open((uintptr_t)r, TR_MPI_REQ_IO, handle);
	if (!e)
		return;
	e->id = id;
	req_publish(e, (uintptr_t)r);
}

static inline uint64_t status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count((MPI_Status *)st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return (uint64_t)n;
}

void tr_mpi_recv_evt(struct tr_thread *t, uint64_t time, MPI_Comm c, const MPI_Status *st)
{
	if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
		return;
	struct tr_mpi_comm *ci = tr_mpi_comm_get(c);
	TR_MPI_REC(t, otf2w_evt_mpi_recv(t->w, NULL, time, (uint32_t)st->MPI_SOURCE, ci->ref,
					 (uint32_t)st->MPI_TAG, status_bytes(st)));
}

void tr_mpi_msg_note(MPI_Message m, uint32_t comm)
{
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
		return;
	struct tr_mpi_req *e = req_open((uintptr_t)m, TR_MPI_REQ_MSG, comm);
	if (!e)
		return;
	req_publish(e, (uintptr_t)m);
}

/* The communicator of message m (tr_mpi_msg_note), its entry removed: 1;
 * 0 for a message we do not know. */
static int msg_take(MPI_Message m, uint32_t *comm)
{
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
		return 0;
	struct tr_mpi_req *e = req_find((uintptr_t)m);
	if (!e || e->kind != TR_MPI_REQ_MSG)
		return 0;
	*comm = e->comm;
	req_remove(e);
	return 1;
}

void tr_mpi_mrecv_evt(struct tr_thread *t, uint64_t time, MPI_Message m, const MPI_Status *st)
{
	uint32_t comm;
	if (!msg_take(m, &comm) || st->MPI_SOURCE < 0)
		return;
	TR_MPI_REC(t, otf2w_evt_mpi_recv(t->w, NULL, time, (uint32_t)st->MPI_SOURCE, comm,
					 (uint32_t)st->MPI_TAG, status_bytes(st)));
}

void tr_mpi_imrecv(struct tr_thread *t, uint64_t time, MPI_Message m, MPI_Request r)
{
	uint32_t comm;
	if (!msg_take(m, &comm))
		return;
	tr_mpi_req_p2p(t, time, r, TR_MPI_REQ_RECV, 0, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, 0);
}

/* ---- completion -------------------------------------------------------------------- */

static void req_done(struct tr_thread *t, uint64_t time, struct tr_mpi_req *e, const MPI_Status *st)
{
	if (!e->active) {
		req_release(e);
		return;
	}
	int cancelled = 0;
	switch (e->kind) {
	case TR_MPI_REQ_SEND:
		PMPI_Test_cancelled((MPI_Status *)st, &cancelled);
		if (cancelled)
			TR_MPI_REC(t, otf2w_evt_mpi_request_cancelled(t->w, NULL, time, e->id));
		else
			TR_MPI_REC(t, otf2w_evt_mpi_isend_complete(t->w, NULL, time, e->id));
		break;
	case TR_MPI_REQ_RECV:
		PMPI_Test_cancelled((MPI_Status *)st, &cancelled);
		if (cancelled)
			TR_MPI_REC(t, otf2w_evt_mpi_request_cancelled(t->w, NULL, time, e->id));
		else if (st->MPI_SOURCE >= 0)
			TR_MPI_REC(t, otf2w_evt_mpi_irecv(t->w, NULL, time, (uint32_t)st->MPI_SOURCE, e->comm,
							  (uint32_t)st->MPI_TAG, status_bytes(st), e->id));
		break;
	case TR_MPI_REQ_COLL:
		TR_MPI_REC(t, otf2w_evt_non_blocking_collective_complete(t->w, NULL, time, e->op, e->comm,
									 e->root, e->bytes, e->bytes2, e->id));
		break;
	case TR_MPI_REQ_RMA:
		TR_MPI_REC(t, otf2w_evt_rma_op_complete_non_blocking(t->w, NULL, time, e->comm, e->id));
		break;
	case TR_MPI_REQ_IO:
		tr_mpi_file_req_done(t, time, e->comm, e->id, st);
		break;
	default:
		break;
	}
	if (e->persistent) {
		e->active = 0;
		req_release(e);
	} else {
		req_remove(e);
	}
}

/* Not completed by a test: MpiRequestTest (RmaOpTest) record. */
static inline void req_test_record(struct tr_thread *t, uint64_t time, const struct tr_mpi_req *e)
{
	if (e->active && e->kind == TR_MPI_REQ_RMA)
		TR_MPI_REC(t, otf2w_evt_rma_op_test(t->w, NULL, time, e->comm, e->id));
	else if (e->active && e->kind == TR_MPI_REQ_IO)
		TR_MPI_REC(t, otf2w_evt_io_operation_test(t->w, NULL, time, e->comm, e->id));
	else if (e->active && e->kind != TR_MPI_REQ_MSG)
		TR_MPI_REC(t, otf2w_evt_mpi_request_test(t->w, NULL, time, e->id));
}

/* Not completed by a Test call on a taken entry: the record, then the
 * entry back into the table. */
static inline void req_tested(struct tr_thread *t, uint64_t time, struct tr_mpi_req *e)
{
	if (!e)
		return;
	req_test_record(t, time, e);
	req_release(e);
}

/* Per-thread scratch arrays for count requests (grown, never shrunk). NULL
 * if memory is short: the calls then run untraced. */
static struct scratch *scratch_get(int count)
{
	struct scratch *s = &tls_scr;
	if (count <= s->cap)
		return s;
	int cap = count < 64 ? 64 : count;
	MPI_Status *st = tr_realloc(s->st, sizeof(*st) * (size_t)cap);
	if (!st)
		return NULL;
	s->st = st;
	struct tr_mpi_req **ent = tr_realloc(s->ent, sizeof(*ent) * (size_t)cap);
	if (!ent)
		return NULL;
	s->ent = ent;
	s->cap = cap;
	return s;
}

/* The scratch arrays of a call on count requests, holding their tracked
 * entries (taken from the table); *sts (sts NULL: the call has one status)
 * is pointed at our own statuses when the caller ignores them. NULL if
 * memory is short: the call's requests are then not recorded. */
static struct scratch *scratch_find(int count, const MPI_Request reqs[], MPI_Status **sts)
{
	struct scratch *s = scratch_get(count);
	if (!s)
		return NULL;
	for (int i = 0; i < count; i++)
		s->ent[i] = reqs[i] != MPI_REQUEST_NULL ? req_take((uintptr_t)reqs[i]) : NULL;
	if (sts && *sts == MPI_STATUSES_IGNORE)
		*sts = s->st;
	return s;
}

static void release_all(struct scratch *s, int count)
{
	for (int i = 0; i < count; i++)
		req_release(s->ent[i]);
}

/* ---- polling: fold the calls that complete nothing ---------------------------------- */

int tr_mpi_fold = 1;
TR_TLS struct tr_mpi_poll tr_mpi_poll_tls;
static uint32_t poll_class = UINT32_MAX;

void tr_mpi_poll_init(void)
{
	tr_mpi_fold = !tr_mpi_polling_all();
	if (!tr_mpi_fold || poll_class != UINT32_MAX)
		return;
	uint32_t m[2];
	m[0] = tr_def_metric_member("MPI polls folded", "MPI_Test/Testany/Testsome/Testall/Iprobe/Improbe calls "
				    "that completed nothing, since the previous record", OTF2W_METRIC_TYPE_OTHER,
				    OTF2W_METRIC_RELATIVE_LAST, OTF2W_TYPE_UINT64, OTF2W_BASE_DECIMAL, 0, "#");
	m[1] = tr_def_metric_member("MPI polling time", "time spent in those calls", OTF2W_METRIC_TYPE_OTHER,
				    OTF2W_METRIC_RELATIVE_LAST, OTF2W_TYPE_UINT64, OTF2W_BASE_DECIMAL, -9, "s");
	poll_class = tr_def_metric_class(2, m, OTF2W_METRIC_ASYNCHRONOUS, OTF2W_RECORDER_CPU);
}

void tr_mpi_poll_flush(struct tr_thread *t, uint64_t time)
{
	static const uint8_t types[2] = { OTF2W_TYPE_UINT64, OTF2W_TYPE_UINT64 };
	otf2w_metric_value v[2];
	v[0].unsigned_int = tr_mpi_poll_tls.n;
	v[1].unsigned_int = tr_ticks_to_ns(tr_mpi_poll_tls.ticks);
	tr_mpi_poll_tls.n = 0;
	tr_mpi_poll_tls.ticks = 0;
	if (poll_class != UINT32_MAX)
		TR_MPI_REC(t, otf2w_evt_metric(t->w, NULL, time, poll_class, 2, types, v));
}

/* Start of a wrapper: the thread if recorded (else the call passes
 * through), its region, the start time. */
#define START(fn, passthrough)                                  \
	struct tr_thread *t = tr_mpi_tget();                    \
	if (!t)                                                 \
		return passthrough;                             \
	const uint32_t rgn = tr_mpi_region(TR_MPI_FN_##fn);     \
	uint64_t t0 = tr_time()

#define BEGIN(fn, passthrough)      \
	START(fn, passthrough);     \
	tr_mpi_enter(t, t0, rgn)

/* A wait: the thread publishes what it recorded first (TRACER_DURABLE). */
#define WAIT_BEGIN(fn, passthrough) \
	BEGIN(fn, passthrough);     \
	tr_durable_idle(t)

/* Polling calls: the Enter only once the call has completed something
 * (fold), or before it (all). */
#define POLL_BEGIN(fn, passthrough)         \
	START(fn, passthrough);             \
	const int fold = tr_mpi_fold;       \
	if (!fold)                          \
	tr_mpi_enter(t, t0, rgn)

/* After the call: nothing completed -> fold and return, else the Enter. */
#define POLL_DONE(nothing)                       \
	if (fold && (nothing)) {                 \
		tr_mpi_poll_folded(t0, t1);      \
		tr_thread_put(t);                \
		return ret;                      \
	}                                        \
	if (fold)                                \
	tr_mpi_poll_enter(t, &t0, rgn)

#define END()                         \
	tr_leave(t, t1, rgn);         \
	tr_thread_put(t);             \
	return ret

TR_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	WAIT_BEGIN(MPI_Wait, PMPI_Wait(request, status));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	struct tr_mpi_req *e = *request != MPI_REQUEST_NULL ? req_take((uintptr_t)*request) : NULL;
	int ret = PMPI_Wait(request, status);
	uint64_t t1 = tr_time();
	if (ret == MPI_SUCCESS && e)
		req_done(t, t1, e, status);
	else
		req_release(e);
	END();
}

TR_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	POLL_BEGIN(MPI_Test, PMPI_Test(request, flag, status));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	struct tr_mpi_req *e = *request != MPI_REQUEST_NULL ? req_take((uintptr_t)*request) : NULL;
	int ret = PMPI_Test(request, flag, status);
	uint64_t t1 = tr_time();
	if (fold && ret == MPI_SUCCESS && !*flag)
		req_release(e);
	POLL_DONE(ret == MPI_SUCCESS && !*flag);
	if (ret == MPI_SUCCESS && e && *flag)
		req_done(t, t1, e, status);
	else if (ret == MPI_SUCCESS)
		req_tested(t, t1, e);
	else
		req_release(e);
	END();
}

TR_EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	BEGIN(MPI_Request_get_status, PMPI_Request_get_status(request, flag, status));
	struct tr_mpi_req *e = request != MPI_REQUEST_NULL ? req_find((uintptr_t)request) : NULL;
	int ret = PMPI_Request_get_status(request, flag, status);
	uint64_t t1 = tr_time();
	/* The request stays valid: its completion is recorded by the Wait/Test
	 * that frees it. */
	/* e was only found, not taken (another thread's Wait may hold it):
	 * record the test but never put the entry "back" */
	if (ret == MPI_SUCCESS && e && !*flag)
		req_test_record(t, t1, e);
	END();
}

TR_EXPORT int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
	WAIT_BEGIN(MPI_Waitall, PMPI_Waitall(count, reqs, sts));
	struct scratch *s = scratch_find(count, reqs, &sts);
	int ret = PMPI_Waitall(count, reqs, sts);
	uint64_t t1 = tr_time();
	if (s) {
		for (int i = 0; i < count; i++) {
			if (s->ent[i] && (ret == MPI_SUCCESS ||
					  (ret == MPI_ERR_IN_STATUS && sts[i].MPI_ERROR == MPI_SUCCESS)))
				req_done(t, t1, s->ent[i], &sts[i]);
			else
				req_release(s->ent[i]);
		}
	}
	END();
}

TR_EXPORT int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	POLL_BEGIN(MPI_Testall, PMPI_Testall(count, reqs, flag, sts));
	struct scratch *s = scratch_find(count, reqs, &sts);
	int ret = PMPI_Testall(count, reqs, flag, sts);
	uint64_t t1 = tr_time();
	if (fold && ret == MPI_SUCCESS && !*flag && s)
		release_all(s, count);
	POLL_DONE(ret == MPI_SUCCESS && !*flag);
	if (s && ret == MPI_SUCCESS) {
		for (int i = 0; i < count; i++) {
			if (!s->ent[i])
				continue;
			if (*flag)
				req_done(t, t1, s->ent[i], &sts[i]);
			else
				req_tested(t, t1, s->ent[i]);
		}
	} else if (s) {
		release_all(s, count);
	}
	END();
}

TR_EXPORT int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	WAIT_BEGIN(MPI_Waitany, PMPI_Waitany(count, reqs, index, status));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	struct scratch *s = scratch_find(count, reqs, NULL);
	int ret = PMPI_Waitany(count, reqs, index, status);
	uint64_t t1 = tr_time();
	if (s && ret == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < count &&
	    s->ent[*index]) {
		req_done(t, t1, s->ent[*index], status);
		s->ent[*index] = NULL;
	}
	if (s)
		release_all(s, count);
	END();
}

TR_EXPORT int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	POLL_BEGIN(MPI_Testany, PMPI_Testany(count, reqs, index, flag, status));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	struct scratch *s = scratch_find(count, reqs, NULL);
	int ret = PMPI_Testany(count, reqs, index, flag, status);
	uint64_t t1 = tr_time();
	/* flag true with MPI_UNDEFINED: no active request, nothing completed */
	const int none = ret == MPI_SUCCESS && (!*flag || *index == MPI_UNDEFINED);
	if (fold && none && s)
		release_all(s, count);
	POLL_DONE(none);
	if (s && ret == MPI_SUCCESS) {
		int done = *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count;
		for (int i = 0; i < count; i++) {
			if (!s->ent[i])
				continue;
			if (done && i == *index)
				req_done(t, t1, s->ent[i], status);
			else
				req_tested(t, t1, s->ent[i]);
		}
	} else if (s) {
		release_all(s, count);
	}
	END();
}

static int some_common(struct tr_thread *t, uint64_t t1, struct scratch *s, int ret, int count,
		       int outcount, const int indices[], MPI_Status sts[], int test)
{
	if (!s)
		return 0;
	if ((ret != MPI_SUCCESS && ret != MPI_ERR_IN_STATUS) || outcount == MPI_UNDEFINED) {
		release_all(s, count);
		return 0;
	}
	for (int k = 0; k < outcount; k++) {
		int i = indices[k];
		if (i < 0 || i >= count || !s->ent[i])
			continue;
		if (ret == MPI_SUCCESS || sts[k].MPI_ERROR == MPI_SUCCESS)
			req_done(t, t1, s->ent[i], &sts[k]);
		else
			req_release(s->ent[i]);
		s->ent[i] = NULL;
	}
	for (int i = 0; i < count; i++) {
		if (test)
			req_tested(t, t1, s->ent[i]);
		else
			req_release(s->ent[i]);
	}
	return 0;
}

TR_EXPORT int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	WAIT_BEGIN(MPI_Waitsome, PMPI_Waitsome(incount, reqs, outcount, indices, sts));
	struct scratch *s = scratch_find(incount, reqs, &sts);
	int ret = PMPI_Waitsome(incount, reqs, outcount, indices, sts);
	uint64_t t1 = tr_time();
	some_common(t, t1, s, ret, incount, *outcount, indices, sts, 0);
	END();
}

TR_EXPORT int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[])
{
	POLL_BEGIN(MPI_Testsome, PMPI_Testsome(incount, reqs, outcount, indices, sts));
	struct scratch *s = scratch_find(incount, reqs, &sts);
	int ret = PMPI_Testsome(incount, reqs, outcount, indices, sts);
	uint64_t t1 = tr_time();
	const int none = ret == MPI_SUCCESS && (*outcount == 0 || *outcount == MPI_UNDEFINED);
	if (fold && none && s)
		release_all(s, incount);
	POLL_DONE(none);
	some_common(t, t1, s, ret, incount, *outcount, indices, sts, 1);
	END();
}

TR_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	POLL_BEGIN(MPI_Iprobe, PMPI_Iprobe(source, tag, comm, flag, status));
	int ret = PMPI_Iprobe(source, tag, comm, flag, status);
	uint64_t t1 = tr_time();
	POLL_DONE(ret == MPI_SUCCESS && !*flag);
	END();
}

TR_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
			  MPI_Status *status)
{
	POLL_BEGIN(MPI_Improbe, PMPI_Improbe(source, tag, comm, flag, message, status));
	int ret = PMPI_Improbe(source, tag, comm, flag, message, status);
	uint64_t t1 = tr_time();
	POLL_DONE(ret == MPI_SUCCESS && !*flag);
	if (ret == MPI_SUCCESS && *flag)
		tr_mpi_msg_note(*message, tr_mpi_comm_get(comm)->ref);
	END();
}

static void req_start(struct tr_thread *t, uint64_t time, struct tr_mpi_req *e)
{
	if (!e || !e->persistent)
		return;
	e->active = 1;
	e->id = req_new_id(t);
	if (e->kind == TR_MPI_REQ_SEND)
		TR_MPI_REC(t, otf2w_evt_mpi_isend(t->w, NULL, time, (uint32_t)e->peer, e->comm,
						  (uint32_t)e->tag, e->bytes, e->id));
	else if (e->kind == TR_MPI_REQ_RECV)
		TR_MPI_REC(t, otf2w_evt_mpi_irecv_request(t->w, NULL, time, e->id));
}

TR_EXPORT int MPI_Start(MPI_Request *request)
{
	BEGIN(MPI_Start, PMPI_Start(request));
	int ret = PMPI_Start(request);
	uint64_t t1 = tr_time();
	/* at the start of the call: an eager send may be received (MpiRecv
	 * on the receiver) before PMPI_Start returns here */
	if (ret == MPI_SUCCESS)
		req_start(t, t0, req_find((uintptr_t)*request));
	END();
}

TR_EXPORT int MPI_Startall(int count, MPI_Request reqs[])
{
	BEGIN(MPI_Startall, PMPI_Startall(count, reqs));
	int ret = PMPI_Startall(count, reqs);
	uint64_t t1 = tr_time();
	if (ret == MPI_SUCCESS)
		for (int i = 0; i < count; i++)
			req_start(t, t0, req_find((uintptr_t)reqs[i]));
	END();
}

TR_EXPORT int MPI_Request_free(MPI_Request *request)
{
	BEGIN(MPI_Request_free, PMPI_Request_free(request));
	struct tr_mpi_req *e = *request != MPI_REQUEST_NULL ? req_take((uintptr_t)*request) : NULL;
	int ret = PMPI_Request_free(request);
	uint64_t t1 = tr_time();
	if (ret == MPI_SUCCESS && e)
		req_remove(e);
	else
		req_release(e);
	END();
}

/* ---- for the Fortran entry points (mpi_fortran.c) --------------------------------------- */

struct tr_mpi_req *tr_mpi_req_take(MPI_Request r)
{
	return r != MPI_REQUEST_NULL ? req_take((uintptr_t)r) : NULL;
}

void tr_mpi_req_complete(struct tr_thread *t, uint64_t time, struct tr_mpi_req *e, const MPI_Status *st,
			 int done)
{
	if (!e)
		return;
	if (done)
		req_done(t, time, e, st);
	else
		req_tested(t, time, e);
}

void tr_mpi_req_release(struct tr_mpi_req *e)
{
	req_release(e);
}
