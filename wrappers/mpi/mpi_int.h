/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_int.h - internals shared by the MPI wrappers (the files of wrappers/mpi/ and the
 * generated mpi_gen.c). Not a public header.
 *
 * libtracer.so must load in programs without MPI: it is compiled against
 * mpi.h only and never linked with libmpi. PMPI_* functions and predefined
 * handles are looked up at run time on first use (below), so MPI is traced
 * the same whether libmpi is linked or opened later with dlopen.
 */
#ifndef TR_MPI_INT_H
#define TR_MPI_INT_H

#include <errno.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include "tracer.h"
#include "io_int.h"
/* Every PMPI_* function and predefined object (Open MPI: the ompi_* of
 * MPI_COMM_WORLD & co.) is reached through tr_mpi_sym: mpi_gen.h turns each
 * name of mpi.h into a slot of tr_mpi_symtab, resolved at first use by
 * mpi_sym.c (global scope, else the loaded object that defines it: a libmpi
 * opened later with dlopen, even RTLD_LOCAL, as by mpi4py). */
extern void *tr_mpi_symtab[];
void *tr_mpi_sym_slow(int idx, int func);
static inline void *tr_mpi_sym(int idx, int func)
{
	void *p = __atomic_load_n(&tr_mpi_symtab[idx], __ATOMIC_ACQUIRE);
	if (tr_likely(p != NULL))
		return p;
	return tr_mpi_sym_slow(idx, func);
}
/* The same for a Fortran symbol (pmpi_*_ of libmpi_mpifh), one slot each. */
void *tr_mpi_fsym_slow(void **slot, const char *name);
static inline void *tr_mpi_fsym(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (tr_likely(p != NULL))
		return p;
	return tr_mpi_fsym_slow(slot, name);
}

#include "mpi_gen.h"

/* One event record written by a wrapper itself (not Enter/Leave). */
#define TR_MPI_REC(t, call)                              \
	do {                                             \
		if (tr_rec_begin(t)) {                   \
			tr_evt_status((t), (call));      \
			tr_rec_end(t);                   \
		}                                        \
	} while (0)

/* mpi_unify.c, over the tracer's private duplicate of MPI_COMM_WORLD: the
 * archive directory every rank agrees on (MPI_Init), clock offsets against
 * rank 0 (MPI_Init, MPI_Finalize), the unification (MPI_Finalize) */
extern MPI_Comm tr_mpi_pcomm;
void tr_mpi_agree_dir(void);
void tr_mpi_clock_sync(void);
void tr_mpi_unify(void);

/* A blocking collective between its Begin and End (mpi_cut.c): the End
 * the end of the process writes if it cuts the call. */
void tr_mpi_cut_init(void);
void tr_mpi_coll_cut(struct tr_thread *t, uint64_t time);
static inline void tr_mpi_coll_open(struct tr_thread *t, uint8_t op, uint32_t comm, uint32_t root)
{
	t->cut_arg[0] = op;
	t->cut_arg[1] = comm;
	t->cut_arg[2] = root;
	__atomic_store_n(&t->cut, tr_mpi_coll_cut, __ATOMIC_RELEASE);
}
static inline void tr_mpi_coll_close(struct tr_thread *t)
{
	__atomic_store_n(&t->cut, NULL, __ATOMIC_RELAXED);
}

/* ---- on/off and regions ------------------------------------------------------- */

/* 1 between MPI_Init and MPI_Finalize when MPI recording is on. */
extern int tr_mpi_on;

/* The calling thread if MPI calls are recorded now, else NULL (hot path). */
static inline struct tr_thread *tr_mpi_tget(void)
{
	if (tr_unlikely(!__atomic_load_n(&tr_mpi_on, __ATOMIC_RELAXED)))
		return NULL;
	return tr_thread_get();
}

/* ---- polling (TRACER_MPI_POLLING, docs/mpi.md) ---------------------------------
 * fold (default): an MPI_Test, Testany, Testsome, Testall, Iprobe or Improbe
 * that completes nothing leaves no record; the thread counts them (and their time), and the next MPI call it
 * records is preceded by one Metric record (class "MPI polling": polls
 * folded, polling time) covering them. all: every call recorded. */
extern int tr_mpi_fold;
struct tr_mpi_poll {
	uint64_t n, ticks;
};
extern TR_TLS struct tr_mpi_poll tr_mpi_poll_tls;
void tr_mpi_poll_flush(struct tr_thread *t, uint64_t time);
/* At MPI_Init: reads TRACER_MPI_POLLING, defines the metric class. */
void tr_mpi_poll_init(void);

/* Enter of an MPI region (every wrapper): first the folded polls, if any. */
static inline void tr_mpi_enter(struct tr_thread *t, uint64_t time, uint32_t rgn)
{
	if (tr_unlikely(tr_mpi_poll_tls.n != 0))
		tr_mpi_poll_flush(t, time);
	tr_enter(t, time, rgn);
}

/* A poll that completed nothing (fold mode): counted, not recorded. */
static inline void tr_mpi_poll_folded(uint64_t t0, uint64_t t1)
{
	tr_mpi_poll_tls.n++;
	tr_mpi_poll_tls.ticks += t1 - t0;
}

/* A poll to record (fold mode: after the call): its Enter at its start, or
 * at the last record of the thread if something (a sample) came since. */
static inline void tr_mpi_poll_enter(struct tr_thread *t, uint64_t *t0, uint32_t rgn)
{
	uint64_t last = t->w ? otf2w_evt_writer_last_time(t->w) : 0;
	if (last > *t0)
		*t0 = last;
	tr_mpi_enter(t, *t0, rgn);
}

/* Region ids + 1 (0: not defined yet), defined on first use. */
extern uint32_t tr_mpi_rgn[TR_MPI_NFN];
uint32_t tr_mpi_region_slow(int fn);
static inline uint32_t tr_mpi_region(int fn)
{
	uint32_t r = __atomic_load_n(&tr_mpi_rgn[fn], __ATOMIC_RELAXED);
	if (tr_unlikely(!r))
		return tr_mpi_region_slow(fn);
	return r - 1;
}

/* ---- communicators --------------------------------------------------------------- */

struct tr_mpi_comm {
	uint32_t ref;          /* local Comm definition id */
	int size;              /* local group size */
	int rank;              /* rank in the local group */
	int inter;             /* intercommunicator */
	int remote_size;       /* remote group size (inter) */
	int nb_in, nb_out;     /* neighbour counts (-1: not known yet) */
};
extern struct tr_mpi_comm tr_mpi_world, tr_mpi_self;
struct tr_mpi_comm *tr_mpi_comm_lookup(MPI_Comm c);

static inline struct tr_mpi_comm *tr_mpi_comm_get(MPI_Comm c)
{
	if (tr_likely(c == MPI_COMM_WORLD))
		return &tr_mpi_world;
	if (c == MPI_COMM_SELF)
		return &tr_mpi_self;
	return tr_mpi_comm_lookup(c);
}

#define TR_MPI_TOPO_CART 1
/* After a communicator was created (collective over its members): agrees on
 * its id, defines Group + Comm (+ Cart topology), records CommCreate.
 * Returns the time after the records (for Leave). */
uint64_t tr_mpi_comm_created(struct tr_thread *t, MPI_Comm newc, MPI_Comm parent,
			     const char *how, int topo);
/* Before MPI_Comm_free/disconnect: CommDestroy, forget the handle. */
void tr_mpi_comm_destroy(struct tr_thread *t, uint64_t time, MPI_Comm c);
/* Group definition (members = world ranks) of an MPI_Group. */
uint32_t tr_mpi_group_ref(MPI_Group g, struct tr_mpi_comm *ci);
/* Neighbour in/out degree of a topology communicator (dir 0: in, 1: out). */
int tr_mpi_nb(struct tr_mpi_comm *ci, MPI_Comm c, int dir);

/* ---- sizes for the byte expressions of mpi.spec ------------------------------------ */

static inline uint64_t tr_mpi_tsz(MPI_Datatype dt)
{
	int s = 0;
	if (!dt || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &s) != MPI_SUCCESS || s < 0)
		return 0;
	return (uint64_t)s;
}
static inline uint64_t tr_mpi_bytes(int count, MPI_Datatype dt)
{
	return count > 0 ? (uint64_t)count * tr_mpi_tsz(dt) : 0;
}
static inline uint64_t tr_mpi_bytes_c(long long count, MPI_Datatype dt)
{
	return count > 0 ? (uint64_t)count * tr_mpi_tsz(dt) : 0;
}
static inline uint64_t tr_mpi_sumv(const int *counts, int n, MPI_Datatype dt)
{
	uint64_t s = 0;
	if (!counts)
		return 0;
	for (int i = 0; i < n; i++)
		s += counts[i] > 0 ? (uint64_t)counts[i] : 0;
	return s * tr_mpi_tsz(dt);
}
static inline uint64_t tr_mpi_sumw(const int *counts, const MPI_Datatype *dts, int n)
{
	uint64_t s = 0;
	if (!counts || !dts)
		return 0;
	for (int i = 0; i < n; i++)
		s += tr_mpi_bytes(counts[i], dts[i]);
	return s;
}
static inline int tr_mpi_np(const struct tr_mpi_comm *ci)
{
	return ci->inter ? ci->remote_size : ci->size;
}
static inline int tr_mpi_is_root(const struct tr_mpi_comm *ci, int root)
{
	return ci->inter ? root == MPI_ROOT : root == ci->rank;
}
static inline uint32_t tr_mpi_root(const struct tr_mpi_comm *ci, int root)
{
	if (root == MPI_ROOT)
		return OTF2W_COLLECTIVE_ROOT_SELF;
	if (root == MPI_PROC_NULL)
		return OTF2W_COLLECTIVE_ROOT_THIS_GROUP;
	return (uint32_t)root;
}
#define B(c, dt)         tr_mpi_bytes((c), (dt))
#define BC(c, dt)        tr_mpi_bytes_c((long long)(c), (dt))
#define NP               tr_mpi_np(ci)
#define ME               (ci->rank)
#define ROOT             tr_mpi_is_root(ci, root_)
#define INPL(b)          ((const void *)(b) == MPI_IN_PLACE)
#define SUMV(c, dt)      tr_mpi_sumv((c), tr_mpi_np(ci), (dt))
#define SUMW(c, dts)     tr_mpi_sumw((c), (dts), tr_mpi_np(ci))
#define NBI              ((uint64_t)tr_mpi_nb(ci, comm, 0))
#define NBO              ((uint64_t)tr_mpi_nb(ci, comm, 1))
#define SUMN(c, dt, n)   tr_mpi_sumv((c), (int)(n), (dt))
#define SUMWN(c, dts, n) tr_mpi_sumw((c), (dts), (int)(n))

/* ---- requests (mpi_req.c) --------------------------------------------------------- */

enum { TR_MPI_REQ_SEND = 1, TR_MPI_REQ_RECV, TR_MPI_REQ_COLL, TR_MPI_REQ_MSG, TR_MPI_REQ_RMA, TR_MPI_REQ_IO };

int tr_mpi_req_init(void);
/* New point-to-point request (MpiIsend / MpiIrecvRequest unless persistent). */
void tr_mpi_req_p2p(struct tr_thread *t, uint64_t time, MPI_Request r, int kind, int persistent,
		    int peer, int tag, uint32_t comm, uint64_t bytes);
/* New non-blocking collective (NonBlockingCollectiveRequest). */
void tr_mpi_req_coll(struct tr_thread *t, uint64_t time, MPI_Request r, uint8_t op, uint32_t comm,
		     uint32_t root, uint64_t sent, uint64_t recvd);
/* MpiRecv from a status (no record for MPI_PROC_NULL). */
void tr_mpi_recv_evt(struct tr_thread *t, uint64_t time, MPI_Comm c, const MPI_Status *st);
/* Matched probes: message -> comm; MPI_Mrecv / MPI_Imrecv. */
void tr_mpi_msg_note(MPI_Message m, uint32_t comm);
void tr_mpi_mrecv_evt(struct tr_thread *t, uint64_t time, MPI_Message m, const MPI_Status *st);
void tr_mpi_imrecv(struct tr_thread *t, uint64_t time, MPI_Message m, MPI_Request r);
/* Completion calls made elsewhere (Fortran): take the entry of a request
 * before the call; afterwards complete it (done: with its status) or
 * record an unsuccessful test (done = 0), or put it back untouched. */
struct tr_mpi_req;
struct tr_mpi_req *tr_mpi_req_take(MPI_Request r);
void tr_mpi_req_complete(struct tr_thread *t, uint64_t time, struct tr_mpi_req *e, const MPI_Status *st,
			 int done);
void tr_mpi_req_release(struct tr_mpi_req *e);
/* Requests dropped because the table was full (reported at finalize). */
uint64_t tr_mpi_req_lost(void);

/* ---- one-sided (mpi_core.c) ----------------------------------------------------------- */

struct tr_mpi_win {
	uint32_t ref;                 /* local RmaWin definition id */
	struct tr_mpi_comm *comm;     /* -> commc */
	struct tr_mpi_comm commc;     /* copy of the window's comm info */
	uint64_t next_id;             /* next matching id */
	uint64_t done_id;             /* ids below are completed */
	uint64_t rid;                 /* next id of a request-based operation */
};
struct tr_mpi_win *tr_mpi_win_get(MPI_Win w);
/* After MPI_Win_create & co. (RmaWinCreate + RmaCollectiveEnd); returns the time. */
uint64_t tr_mpi_win_created(struct tr_thread *t, MPI_Win w, MPI_Comm c, int allocates);
uint64_t tr_mpi_win_freed(struct tr_thread *t, struct tr_mpi_win *wi);
static inline uint64_t tr_mpi_rma_id(struct tr_mpi_win *wi)
{
	return wi->next_id++;
}
/* Request-based operations (MPI_Rput & co.): own id space, completed by
 * the Wait/Test of their request (RmaOpCompleteNonBlocking). */
static inline uint64_t tr_mpi_rma_rid(struct tr_mpi_win *wi)
{
	return (1ull << 62) | wi->rid++;
}
void tr_mpi_req_rma(struct tr_thread *t, MPI_Request r, uint32_t win, uint64_t id);
/* RmaOpCompleteBlocking for the operations issued since the last sync. */
void tr_mpi_rma_complete(struct tr_thread *t, uint64_t time, struct tr_mpi_win *wi);

/* ---- MPI-IO (mpi_io.c; wrappers generated from the f* kinds of mpi.spec) ------------ */

struct tr_mpi_file;
struct tr_mpi_file *tr_mpi_file_get(MPI_File fh);
/* After MPI_File_open: IoHandle (comm = the file's), IoCreateHandle, the
 * library's POSIX descriptor as a handle under it. Returns the time after. */
uint64_t tr_mpi_file_opened(struct tr_thread *t, uint64_t time, int ret, MPI_Comm comm, const char *name,
			    int amode, MPI_File fh);
void tr_mpi_file_closed(struct tr_thread *t, uint64_t time, struct tr_mpi_file *e, int ret);
void tr_mpi_file_deleted(struct tr_thread *t, uint64_t time, const char *name);
void tr_mpi_file_seek(struct tr_thread *t, uint64_t time, MPI_File fh, MPI_Offset offset, int whence, int shared);
/* One transfer: IoOperationBegin (mode IO_OP_*, flags IO_OPFL_*), then
 * Complete (blocking: bytes from the status), Issued + request tracked
 * (i* forms), Issued + kept until the _end call (split collectives). */
struct tr_mpi_fop {
	struct tr_mpi_file *e;
	uint64_t id;       /* matching id; 0: no Begin written */
};
void tr_mpi_file_op_begin(struct tr_thread *t, uint64_t time, struct tr_mpi_fop *o, MPI_File fh, uint8_t mode,
			  uint32_t flags, uint64_t bytes);
void tr_mpi_file_op_end(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret,
			const MPI_Status *st);
void tr_mpi_file_op_issued(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret, MPI_Request r);
void tr_mpi_file_split_issued(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret);
void tr_mpi_file_split_end(struct tr_thread *t, uint64_t time, MPI_File fh, int ret, const MPI_Status *st);
/* Request of a non-blocking transfer (mpi_req.c), and its completion. */
void tr_mpi_req_io(MPI_Request r, uint32_t handle, uint64_t id);
void tr_mpi_file_req_done(struct tr_thread *t, uint64_t time, uint32_t h, uint64_t id, const MPI_Status *st);
/* MPI_File_open calls beyond the table of open files (not recorded). */
uint64_t tr_mpi_file_lost(void);

/* ---- process-wide ---------------------------------------------------------------------- */

extern int tr_mpi_world_rank, tr_mpi_world_size;
/* The work of MPI_Init(_thread), MPI_Finalize, MPI_Abort around the PMPI call. */
void tr_mpi_after_init(void);
void tr_mpi_before_finalize(void);
void tr_mpi_abort_prepare(int errorcode);
/* Enter of the region of fn (*t NULL if the thread is not recorded) / its Leave. */
void tr_mpi_env_enter(int fn, struct tr_thread **t, uint32_t *rgn);
void tr_mpi_env_leave(struct tr_thread *t, uint32_t rgn);

/* The one bracket of MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Abort
 * for every binding (C, Fortran mpif.h/use mpi, use mpi_f08): the region
 * fn around call (the PMPI call, or the MPI library's own Fortran
 * function); kind TR_MPI_INIT: rank agreement & co. (tr_mpi_after_init)
 * after a call for which ok holds; TR_MPI_FINALIZE: clock offsets and
 * unification before it; TR_MPI_ABORT: this rank's archive written before
 * it (errorcode: its exit status). TRACER_MPI=0: the call alone. */
enum { TR_MPI_INIT, TR_MPI_FINALIZE, TR_MPI_ABORT };
#define TR_MPI_BRACKET(fn, kind, call, ok, errorcode)                       \
	do {                                                                \
		struct tr_thread *t_ = NULL;                                \
		uint32_t rgn_ = 0;                                          \
		const int on_ = tr_cfg.mpi;                                 \
		if (on_)                                                    \
			tr_mpi_env_enter(TR_MPI_FN_##fn, &t_, &rgn_);       \
		if (on_ && (kind) == TR_MPI_FINALIZE)                       \
			tr_mpi_before_finalize();                           \
		if (on_ && (kind) == TR_MPI_ABORT) {                        \
			tr_mpi_env_leave(t_, UINT32_MAX);                   \
			t_ = NULL;                                          \
			tr_mpi_abort_prepare(errorcode);                    \
		}                                                           \
		call;                                                       \
		if (on_ && (kind) == TR_MPI_INIT && (ok))                   \
			tr_mpi_after_init();                                \
		tr_mpi_env_leave(t_, rgn_);                                 \
	} while (0)
/* Spin lock for the (rare) table updates: MPI calls never take a pthread lock. */
void tr_mpi_lock(void);
void tr_mpi_unlock(void);

#endif /* TR_MPI_INT_H */
