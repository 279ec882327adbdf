/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_int.h - internals shared by the MPI wrappers (wrappers/mpi_*.c and the
 * generated mpi_gen.c). Not a public header.
 *
 * libtracer.so must load in programs without MPI: it is compiled against
 * mpi.h only and never linked with libmpi. Every PMPI_* function and every
 * predefined handle (Open MPI: addresses of ompi_* objects) is a weak
 * reference that resolves from the application's libmpi at run time. The
 * MPI_* wrappers are only ever called by MPI programs, so the weak symbols
 * are non-NULL whenever they are used.
 */
#ifndef TR_MPI_INT_H
#define TR_MPI_INT_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include "tracer.h"
#include "mpi_gen.h"

#ifdef OMPI_MAJOR_VERSION
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_group_null
#pragma weak ompi_mpi_group_empty
#pragma weak ompi_request_null
#pragma weak ompi_message_null
#pragma weak ompi_message_no_proc
#pragma weak ompi_mpi_win_null
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_unsigned_long_long
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_mpi_info_null
#pragma weak ompi_mpi_errors_return
#endif

/* PMPI functions used by the hand-written parts (the generated file marks
 * the wrapped ones weak itself). */
#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Abort
#pragma weak PMPI_Initialized
#pragma weak PMPI_Finalized
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Comm_remote_size
#pragma weak PMPI_Comm_test_inter
#pragma weak PMPI_Comm_group
#pragma weak PMPI_Comm_remote_group
#pragma weak PMPI_Comm_dup
#pragma weak PMPI_Comm_free
#pragma weak PMPI_Comm_idup
#pragma weak PMPI_Intercomm_merge
#pragma weak PMPI_Group_translate_ranks
#pragma weak PMPI_Group_size
#pragma weak PMPI_Group_free
#pragma weak PMPI_Bcast
#pragma weak PMPI_Send
#pragma weak PMPI_Recv
#pragma weak PMPI_Barrier
#pragma weak PMPI_Type_size
#pragma weak PMPI_Get_count
#pragma weak PMPI_Test_cancelled
#pragma weak PMPI_Topo_test
#pragma weak PMPI_Cartdim_get
#pragma weak PMPI_Cart_get
#pragma weak PMPI_Graph_neighbors_count
#pragma weak PMPI_Dist_graph_neighbors_count
#pragma weak PMPI_Win_get_group
#pragma weak PMPI_Wait
#pragma weak PMPI_Waitall
#pragma weak PMPI_Waitany
#pragma weak PMPI_Waitsome
#pragma weak PMPI_Test
#pragma weak PMPI_Testall
#pragma weak PMPI_Testany
#pragma weak PMPI_Testsome
#pragma weak PMPI_Request_get_status
#pragma weak PMPI_Request_free
#pragma weak PMPI_Start
#pragma weak PMPI_Startall
#pragma weak PMPI_Query_thread
#pragma weak PMPI_Comm_set_errhandler
#pragma weak PMPI_Comm_get_errhandler
#pragma weak PMPI_Errhandler_free
#pragma weak PMPI_Get_processor_name

/* One event record written by a wrapper itself (not Enter/Leave). */
#define TR_MPI_REC(t, call)                              \
	do {                                             \
		if (tr_rec_begin(t)) {                   \
			tr_evt_status((t), (call));      \
			tr_rec_end(t);                   \
		}                                        \
	} while (0)

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

enum { TR_MPI_REQ_SEND = 1, TR_MPI_REQ_RECV, TR_MPI_REQ_COLL, TR_MPI_REQ_MSG, TR_MPI_REQ_RMA };

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

/* ---- process-wide ---------------------------------------------------------------------- */

extern int tr_mpi_world_rank, tr_mpi_world_size;
/* The work of MPI_Init(_thread), MPI_Finalize, MPI_Abort around the PMPI call (shared
 * by the C and the Fortran entry points). */
void tr_mpi_after_init(void);
void tr_mpi_before_finalize(void);
void tr_mpi_abort_prepare(int errorcode);
/* Spin lock for the (rare) table updates: MPI calls never take a pthread lock. */
void tr_mpi_lock(void);
void tr_mpi_unlock(void);

#endif /* TR_MPI_INT_H */
