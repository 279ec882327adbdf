/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_core.c - hand-written part of the MPI tracing: MPI_Init*, MPI_Finalize,
 * MPI_Abort, MPI_Comm_idup; communicator, group and window definitions;
 * the archive directory agreed by all ranks; clock offsets to rank 0;
 * unification of the definitions at MPI_Finalize.
 *
 * Communicator identity across ranks: every new communicator gets a name
 * "<creating call> [<r>.<n>]" where r is the world rank of its rank 0 and n
 * a counter of that process, broadcast on the new communicator when it is
 * created. Its Group lists the world ranks of its members. The definitions
 * are therefore equal by content on every member, and the content
 * deduplicating merge of tr_defs_merge unifies them into one Comm.
 *
 * Unification (MPI_Finalize): tr_defs_pack on every rank, binomial-tree
 * reduction to rank 0 (log2 P steps, each rank sends once), tr_defs_merge at
 * every inner node, broadcast of the unified set, tr_defs_install_unified.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "mpi_int.h"

int tr_mpi_on;
uint32_t tr_mpi_rgn[TR_MPI_NFN];
struct tr_mpi_comm tr_mpi_world = { OTF2W_UNDEFINED_REF, 1, 0, 0, 0, 0, 0 };
struct tr_mpi_comm tr_mpi_self = { OTF2W_UNDEFINED_REF, 1, 0, 0, 0, 0, 0 };
int tr_mpi_world_rank = -1, tr_mpi_world_size = 0;

MPI_Comm tr_mpi_pcomm;                   /* private dup of WORLD for the tracer's traffic */
static int tr_mpi_inited, tr_mpi_finalized;
static int tr_mpi_local_only;            /* singleton or unknown launcher: no unification */
static uint32_t tr_mpi_comm_ctr;         /* agreed ids created by this process */
static uint32_t tr_mpi_locs_group;       /* Group(COMM_LOCATIONS) */
static int tr_mpi_lockv;

void tr_mpi_lock(void)
{
	while (__atomic_exchange_n(&tr_mpi_lockv, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

void tr_mpi_unlock(void)
{
	__atomic_store_n(&tr_mpi_lockv, 0, __ATOMIC_RELEASE);
}

uint32_t tr_mpi_region_slow(int fn)
{
	uint32_t r = tr_def_region(tr_mpi_fn_name(fn), tr_mpi_fn_name(fn), "", tr_mpi_fn_role[fn],
				   OTF2W_PARADIGM_MPI, OTF2W_REGION_FLAG_NONE, "", 0, 0);
	__atomic_store_n(&tr_mpi_rgn[fn], r + 1, __ATOMIC_RELAXED);
	return r;
}

/* ---- handle tables (communicators, windows) ------------------------------------------
 * Small open-addressing tables: inserts and removals under tr_mpi_lock,
 * lookups lock-free (a handle is only looked up by calls that use it, which
 * the MPI standard orders after its creation). */

#define HT_BITS  12
#define HT_SLOTS (1u << HT_BITS)
#define HT_TOMB  ((uintptr_t)1)

struct comm_slot {
	_Atomic uintptr_t key;
	struct tr_mpi_comm c;
};
struct win_slot {
	_Atomic uintptr_t key;
	struct tr_mpi_win w;
};
_Static_assert(offsetof(struct comm_slot, key) == 0 && offsetof(struct win_slot, key) == 0,
	       "ht_probe finds a slot by its key, first");
static struct comm_slot comm_tab[HT_SLOTS] TR_BIG_BSS;
static struct win_slot win_tab[HT_SLOTS / 4] TR_BIG_BSS;

static inline uint32_t ht_hash(uintptr_t k, unsigned bits)
{
	return (uint32_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* The slot of key k in a table of n slots (a power of two) of stride
 * bytes each, its key first (NULL: absent); with free_slot, else the first
 * free or removed slot on k's probe path (an insert, under tr_mpi_lock). */
static inline void *ht_probe(void *tab, size_t stride, uint32_t n, unsigned bits, uintptr_t k, int free_slot)
{
	uint32_t h = ht_hash(k, bits);
	for (uint32_t i = 0; i < n; i++) {
		_Atomic uintptr_t *key = (_Atomic uintptr_t *)(void *)((char *)tab + ((h + i) & (n - 1)) * stride);
		if (free_slot) {
			uintptr_t cur = atomic_load_explicit(key, memory_order_relaxed);
			if (cur == 0 || cur == HT_TOMB)
				return key;
			continue;
		}
		uintptr_t cur = atomic_load_explicit(key, memory_order_acquire);
		if (cur == k)
			return key;
		if (!cur)
			return NULL;
	}
	return NULL;
}

static struct comm_slot *comm_find(uintptr_t k)
{
	return ht_probe(comm_tab, sizeof(comm_tab[0]), HT_SLOTS, HT_BITS, k, 0);
}

/* Under tr_mpi_lock. */
static struct comm_slot *comm_insert(uintptr_t k, const struct tr_mpi_comm *c)
{
	struct comm_slot *s = comm_find(k);
	if (!s)
		s = ht_probe(comm_tab, sizeof(comm_tab[0]), HT_SLOTS, HT_BITS, k, 1);
	if (!s)
		return NULL;
	atomic_store_explicit(&s->key, HT_TOMB, memory_order_relaxed);
	s->c = *c;
	atomic_store_explicit(&s->key, k, memory_order_release);
	return s;
}

static struct win_slot *win_find(uintptr_t k)
{
	return ht_probe(win_tab, sizeof(win_tab[0]), HT_SLOTS / 4, HT_BITS - 2, k, 0);
}

static struct win_slot *win_insert(uintptr_t k)
{
	struct win_slot *s = win_find(k);
	return s ? s : ht_probe(win_tab, sizeof(win_tab[0]), HT_SLOTS / 4, HT_BITS - 2, k, 1);
}

/* ---- groups and communicators ----------------------------------------------------------- */

/* World ranks of the members of g in group order (malloc'ed, *n set). */
static uint64_t *group_world_ranks(MPI_Group g, int *n)
{
	MPI_Group wg;
	*n = 0;
	if (PMPI_Group_size(g, n) != MPI_SUCCESS || *n <= 0) {
		*n = 0;
		return NULL;
	}
	int *in = tr_malloc(sizeof(int) * (size_t)*n * 2);
	uint64_t *out = tr_malloc(sizeof(uint64_t) * (size_t)*n);
	if (!in || !out) {
		tr_free(in);
		tr_free(out);
		*n = 0;
		return NULL;
	}
	for (int i = 0; i < *n; i++)
		in[i] = i;
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	if (PMPI_Group_translate_ranks(g, *n, in, wg, in + *n) != MPI_SUCCESS)
		for (int i = 0; i < *n; i++)
			in[*n + i] = MPI_UNDEFINED;
	PMPI_Group_free(&wg);
	for (int i = 0; i < *n; i++)
		out[i] = in[*n + i] == MPI_UNDEFINED ? OTF2W_UNDEFINED_UINT64 : (uint64_t)in[*n + i];
	tr_free(in);
	return out;
}

static uint32_t group_def(MPI_Group g)
{
	int n;
	uint64_t *m = group_world_ranks(g, &n);
	uint32_t ref = tr_def_group("", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, OTF2W_GROUP_FLAG_NONE,
				    (uint32_t)n, m);
	tr_free(m);
	return ref;
}

uint32_t tr_mpi_group_ref(MPI_Group g, struct tr_mpi_comm *ci)
{
	(void)ci;
	if (g == MPI_GROUP_NULL)
		return OTF2W_UNDEFINED_REF;
	return group_def(g);
}

static void comm_info(MPI_Comm c, struct tr_mpi_comm *ci)
{
	ci->ref = OTF2W_UNDEFINED_REF;
	ci->inter = 0;
	ci->remote_size = 0;
	ci->nb_in = ci->nb_out = -1;
	PMPI_Comm_size(c, &ci->size);
	PMPI_Comm_rank(c, &ci->rank);
	PMPI_Comm_test_inter(c, &ci->inter);
	if (ci->inter)
		PMPI_Comm_remote_size(c, &ci->remote_size);
}

/* A communicator created outside the wrapped calls (or by an untraced
 * call): defined from its members only, without agreement. */
struct tr_mpi_comm *tr_mpi_comm_lookup(MPI_Comm c)
{
	static struct tr_mpi_comm none = { OTF2W_UNDEFINED_REF, 1, 0, 0, 0, 0, 0 };
	struct comm_slot *s = comm_find((uintptr_t)c);
	if (tr_likely(s != NULL))
		return &s->c;
	if (c == MPI_COMM_NULL || !tr_mpi_inited)
		return &none;
	struct tr_mpi_comm ci;
	MPI_Group g;
	comm_info(c, &ci);
	PMPI_Comm_group(c, &g);
	uint32_t grp = group_def(g);
	PMPI_Group_free(&g);
	ci.ref = tr_def_comm("MPI communicator (created untraced)", grp, OTF2W_UNDEFINED_REF, OTF2W_COMM_FLAG_NONE);
	tr_mpi_lock();
	s = comm_insert((uintptr_t)c, &ci);
	tr_mpi_unlock();
	return s ? &s->c : &none;
}

/* (world rank of rank 0, its counter) broadcast on an intracommunicator. */
static void agree_id(MPI_Comm c, int *pair)
{
	int r = 0;
	PMPI_Comm_rank(c, &r);
	if (r == 0) {
		pair[0] = tr_mpi_world_rank;
		pair[1] = (int)__atomic_add_fetch(&tr_mpi_comm_ctr, 1, __ATOMIC_RELAXED);
	}
	PMPI_Bcast(pair, 2, MPI_INT, 0, c);
}

static void define_cart(MPI_Comm c, struct tr_mpi_comm *ci, const char *name)
{
	int st = MPI_UNDEFINED, nd = 0;
	if (PMPI_Topo_test(c, &st) != MPI_SUCCESS || st != MPI_CART)
		return;
	if (PMPI_Cartdim_get(c, &nd) != MPI_SUCCESS || nd <= 0 || nd > 255)
		return;
	int dims[nd], periods[nd], coords[nd];
	uint32_t dref[nd], ucoords[nd];
	if (PMPI_Cart_get(c, nd, dims, periods, coords) != MPI_SUCCESS)
		return;
	for (int i = 0; i < nd; i++) {
		char dn[32];
		snprintf(dn, sizeof(dn), "dimension %d", i);
		dref[i] = tr_def_cart_dimension(dn, (uint32_t)dims[i], (uint8_t)(periods[i] != 0));
		ucoords[i] = (uint32_t)coords[i];
	}
	uint32_t topo = tr_def_cart_topology(name, ci->ref, (uint32_t)nd, dref);
	tr_def_cart_coordinate(topo, (uint32_t)ci->rank, (uint32_t)nd, ucoords);
}

static uint32_t define_comm(MPI_Comm newc, struct tr_mpi_comm *ci, uint32_t parent, const char *how,
			    const int *pair)
{
	char name[256];
	MPI_Group g;
	snprintf(name, sizeof(name), "%s [%d.%d]", how, pair[0], pair[1]);
	PMPI_Comm_group(newc, &g);
	if (!ci->inter) {
		uint32_t grp = group_def(g);
		PMPI_Group_free(&g);
		return tr_def_comm(name, grp, parent, OTF2W_COMM_FLAG_CREATE_DESTROY_EVENTS);
	}
	MPI_Group rg;
	PMPI_Comm_remote_group(newc, &rg);
	int nl, nr;
	uint64_t *ml = group_world_ranks(g, &nl), *mr = group_world_ranks(rg, &nr);
	uint32_t gl = tr_def_group("", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, 0, (uint32_t)nl, ml);
	uint32_t gr = tr_def_group("", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, 0, (uint32_t)nr, mr);
	/* Same order on both sides: group A holds the lower world rank. */
	int local_first = nl > 0 && (nr == 0 || ml[0] < mr[0]);
	tr_free(ml);
	tr_free(mr);
	PMPI_Group_free(&g);
	PMPI_Group_free(&rg);
	/* No common communicator and no CommCreate/Destroy events: the two
	 * sides pass different local comms, and python3-otf2 3.0.2 cannot read
	 * an InterComm whose flags are not NONE (its field list is shifted). */
	(void)parent;
	return tr_def_inter_comm(name, local_first ? gl : gr, local_first ? gr : gl, OTF2W_UNDEFINED_REF,
				 OTF2W_COMM_FLAG_NONE);
}

uint64_t tr_mpi_comm_created(struct tr_thread *t, MPI_Comm newc, MPI_Comm parent, const char *how, int topo)
{
	if (newc == MPI_COMM_NULL)
		return tr_time();
	struct tr_mpi_comm ci;
	int pair[2] = { -1, 0 };
	uint32_t pref = parent == MPI_COMM_NULL ? OTF2W_UNDEFINED_REF : tr_mpi_comm_get(parent)->ref;
	comm_info(newc, &ci);
	if (!ci.inter) {
		agree_id(newc, pair);
	} else {
		MPI_Comm m;
		if (PMPI_Intercomm_merge(newc, 0, &m) == MPI_SUCCESS) {
			agree_id(m, pair);
			PMPI_Comm_free(&m);
		}
	}
	ci.ref = define_comm(newc, &ci, pref, how, pair);
	if (topo == TR_MPI_TOPO_CART) {
		char name[256];
		snprintf(name, sizeof(name), "%s [%d.%d]", how, pair[0], pair[1]);
		define_cart(newc, &ci, name);
	}
	tr_mpi_lock();
	comm_insert((uintptr_t)newc, &ci);
	tr_mpi_unlock();
	uint64_t now = tr_time();
	if (!ci.inter)
		TR_MPI_REC(t, otf2w_evt_comm_create(t->w, NULL, now, ci.ref));
	return now;
}

void tr_mpi_comm_destroy(struct tr_thread *t, uint64_t time, MPI_Comm c)
{
	if (c == MPI_COMM_NULL || c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
		return;
	struct comm_slot *s = comm_find((uintptr_t)c);
	if (!s)
		return;
	if (!s->c.inter)
		TR_MPI_REC(t, otf2w_evt_comm_destroy(t->w, NULL, time, s->c.ref));
	tr_mpi_lock();
	atomic_store_explicit(&s->key, HT_TOMB, memory_order_release);
	tr_mpi_unlock();
}

int tr_mpi_nb(struct tr_mpi_comm *ci, MPI_Comm c, int dir)
{
	if (ci->nb_in < 0) {
		int st = MPI_UNDEFINED, in = 0, out = 0, w = 0;
		PMPI_Topo_test(c, &st);
		if (st == MPI_CART) {
			PMPI_Cartdim_get(c, &in);
			in = out = 2 * in;
		} else if (st == MPI_GRAPH) {
			PMPI_Graph_neighbors_count(c, ci->rank, &in);
			out = in;
		} else if (st == MPI_DIST_GRAPH) {
			PMPI_Dist_graph_neighbors_count(c, &in, &out, &w);
		}
		ci->nb_out = out;
		ci->nb_in = in;
	}
	return dir ? ci->nb_out : ci->nb_in;
}

TR_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	struct tr_thread *t = tr_mpi_tget();
	if (!t)
		return PMPI_Comm_idup(comm, newcomm, request);
	const uint32_t rgn = tr_mpi_region(TR_MPI_FN_MPI_Comm_idup);
	uint64_t t0 = tr_time();
	tr_mpi_enter(t, t0, rgn);
	struct tr_mpi_comm *pc = tr_mpi_comm_get(comm);
	struct tr_mpi_comm ci = *pc;
	int pair[2] = { -1, 0 };
	/* The new handle is not usable before the request completes: agree on
	 * the parent, whose members are the same (collective order is the same
	 * on every member). */
	if (!pc->inter)
		agree_id(comm, pair);
	int ret = PMPI_Comm_idup(comm, newcomm, request);
	uint64_t t1 = tr_time();
	if (ret == MPI_SUCCESS && !pc->inter && *newcomm != MPI_COMM_NULL) {
		char name[256];
		MPI_Group g;
		snprintf(name, sizeof(name), "MPI_Comm_idup [%d.%d]", pair[0], pair[1]);
		PMPI_Comm_group(comm, &g);
		uint32_t grp = group_def(g);
		PMPI_Group_free(&g);
		ci.ref = tr_def_comm(name, grp, pc->ref, OTF2W_COMM_FLAG_CREATE_DESTROY_EVENTS);
		ci.nb_in = ci.nb_out = -1;
		tr_mpi_lock();
		comm_insert((uintptr_t)*newcomm, &ci);
		tr_mpi_unlock();
		t1 = tr_time();
		TR_MPI_REC(t, otf2w_evt_comm_create(t->w, NULL, t1, ci.ref));
	}
	tr_leave(t, t1, rgn);
	tr_thread_put(t);
	return ret;
}

/* ---- windows --------------------------------------------------------------------------- */

static struct tr_mpi_win win_none = { OTF2W_UNDEFINED_REF, &win_none.commc, { OTF2W_UNDEFINED_REF, 1, 0, 0, 0, 0, 0 }, 0, 0, 0 };

struct tr_mpi_win *tr_mpi_win_get(MPI_Win w)
{
	struct win_slot *s = win_find((uintptr_t)w);
	return s ? &s->w : &win_none;
}

uint64_t tr_mpi_win_created(struct tr_thread *t, MPI_Win w, MPI_Comm c, int allocates)
{
	uint8_t op = allocates ? OTF2W_COLL_CREATE_HANDLE_AND_ALLOCATE : OTF2W_COLL_CREATE_HANDLE;
	struct tr_mpi_win *wi = &win_none;
	if (w != MPI_WIN_NULL) {
		struct tr_mpi_comm *ci = tr_mpi_comm_get(c);
		int pair[2] = { -1, 0 };
		char name[256];
		if (!ci->inter)
			agree_id(c, pair);
		snprintf(name, sizeof(name), "MPI window [%d.%d]", pair[0], pair[1]);
		uint32_t ref = tr_def_rma_win(name, ci->ref, OTF2W_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS);
		tr_mpi_lock();
		struct win_slot *s = win_insert((uintptr_t)w);
		if (s) {
			atomic_store_explicit(&s->key, HT_TOMB, memory_order_relaxed);
			s->w.ref = ref;
			s->w.commc = *ci;
			s->w.comm = &s->w.commc;
			s->w.next_id = s->w.done_id = s->w.rid = 0;
			atomic_store_explicit(&s->key, (uintptr_t)w, memory_order_release);
			wi = &s->w;
		}
		tr_mpi_unlock();
	}
	uint64_t now = tr_time();
	if (wi != &win_none)
		TR_MPI_REC(t, otf2w_evt_rma_win_create(t->w, NULL, now, wi->ref));
	TR_MPI_REC(t, otf2w_evt_rma_collective_end(t->w, NULL, now, op, OTF2W_RMA_SYNC_LEVEL_NONE, wi->ref,
						   OTF2W_COLLECTIVE_ROOT_NONE, 0, 0));
	return now;
}

uint64_t tr_mpi_win_freed(struct tr_thread *t, struct tr_mpi_win *wi)
{
	uint64_t now = tr_time();
	tr_mpi_rma_complete(t, now, wi);
	if (wi != &win_none)
		TR_MPI_REC(t, otf2w_evt_rma_win_destroy(t->w, NULL, now, wi->ref));
	TR_MPI_REC(t, otf2w_evt_rma_collective_end(t->w, NULL, now, OTF2W_COLL_DESTROY_HANDLE,
						   OTF2W_RMA_SYNC_LEVEL_NONE, wi->ref, OTF2W_COLLECTIVE_ROOT_NONE, 0, 0));
	if (wi != &win_none) {
		struct win_slot *s = (struct win_slot *)((char *)wi - offsetof(struct win_slot, w));
		tr_mpi_lock();
		atomic_store_explicit(&s->key, HT_TOMB, memory_order_release);
		tr_mpi_unlock();
	}
	return now;
}

void tr_mpi_rma_complete(struct tr_thread *t, uint64_t time, struct tr_mpi_win *wi)
{
	uint64_t hi = wi->next_id, lo = wi->done_id;
	if (hi - lo > 4096)
		lo = hi - 4096;   /* bound the records of one sync */
	for (uint64_t id = lo; id < hi; id++)
		TR_MPI_REC(t, otf2w_evt_rma_op_complete_blocking(t->w, NULL, time, wi->ref, id));
	wi->done_id = hi;
}

/* ---- MPI_Init / MPI_Finalize / MPI_Abort ---------------------------------------------- */

void tr_mpi_after_init(void)
{
	int rank = 0, size = 1;
	/* TRACER_MPI=0: the MPI layer stays out of the way entirely (every
	 * process writes its own archive, like a non-MPI program). */
	if (tr_mpi_inited || !tr_cfg.mpi)
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	tr_mpi_cut_init();
	/* Rank not announced in the environment at start: a singleton (program
	 * started without mpirun: one rank) or a launcher we do not know. The
	 * process's own archive (named "traces", not "rank<r>") is the archive:
	 * no common directory, no unification. */
	tr_mpi_local_only = tr_proc.rank < 0;
	/* Announced, but not what MPI says: the program was started by the
	 * launcher of another MPI (Open MPI's mpirun for an MPICH program, or
	 * the reverse), whose ranks each became a singleton. MPI is left
	 * untraced in this process (its archive keeps the launcher's rank). */
	if (!tr_mpi_local_only && (rank != tr_proc.rank || (tr_proc.size > 0 && size != tr_proc.size))) {
		tr_log_warn("MPI says rank %d of %d but the launcher announced rank %d of %d (the launcher of "
			    "another MPI?): MPI calls of this process not traced", rank, size, tr_proc.rank,
			    tr_proc.size);
		return;
	}
	if (tr_mpi_local_only && size > 1 && rank == 0)
		tr_log_warn("MPI rank not announced by the launcher at start: every rank writes its own archive "
			    "(no unification)");
	tr_mpi_world_rank = rank;
	tr_mpi_world_size = size;
	tr_set_rank(rank, size);
	tr_set_global_writer(0);
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &tr_mpi_pcomm) != MPI_SUCCESS) {
		tr_log_error("rank %d: MPI_Comm_dup failed: MPI tracing disabled", rank);
		return;
	}
	PMPI_Comm_set_errhandler(tr_mpi_pcomm, MPI_ERRORS_RETURN);
	if (!tr_mpi_local_only)
		tr_mpi_agree_dir();
	tr_mpi_poll_init();
	if (tr_mpi_req_init() != 0)
		tr_log_warn("rank %d: no memory for the request table: non-blocking calls not tracked", rank);

	/* Group(COMM_LOCATIONS): the master location of every rank. */
	uint64_t *m = tr_malloc(sizeof(uint64_t) * (size_t)size);
	if (m) {
		for (int r = 0; r < size; r++)
			m[r] = (uint64_t)r << 32;
		tr_mpi_locs_group = tr_def_group("MPI", OTF2W_GROUP_COMM_LOCATIONS, OTF2W_PARADIGM_MPI,
						 OTF2W_GROUP_FLAG_NONE, (uint32_t)size, m);
		for (int r = 0; r < size; r++)
			m[r] = (uint64_t)r;
		uint32_t wg = tr_def_group("", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, OTF2W_GROUP_FLAG_NONE,
					   (uint32_t)size, m);
		tr_free(m);
		uint32_t sg = tr_def_group("", OTF2W_GROUP_COMM_SELF, OTF2W_PARADIGM_MPI, OTF2W_GROUP_FLAG_NONE, 0, NULL);
		tr_mpi_world.ref = tr_def_comm("MPI_COMM_WORLD", wg, OTF2W_UNDEFINED_REF, OTF2W_COMM_FLAG_NONE);
		tr_mpi_self.ref = tr_def_comm("MPI_COMM_SELF", sg, OTF2W_UNDEFINED_REF, OTF2W_COMM_FLAG_NONE);
	}
	tr_mpi_world.size = size;
	tr_mpi_world.rank = rank;
	tr_mpi_world.nb_in = tr_mpi_world.nb_out = -1;
	tr_mpi_self.size = 1;
	tr_mpi_self.rank = 0;
	tr_mpi_self.nb_in = tr_mpi_self.nb_out = -1;
	tr_mpi_clock_sync();
	if (!tr_mpi_local_only)   /* (one rank too: definitions after MPI_Finalize) */
		tr_archive_prepare_merge();
	tr_mpi_inited = 1;
	__atomic_store_n(&tr_mpi_on, 1, __ATOMIC_RELEASE);
}

void tr_mpi_before_finalize(void)
{
	if (!tr_mpi_inited || tr_mpi_finalized)
		return;
	tr_mpi_finalized = 1;
	tr_mpi_clock_sync();
	__atomic_store_n(&tr_mpi_on, 0, __ATOMIC_RELEASE);
	if (tr_mpi_req_lost())
		tr_log_warn("rank %d: %llu non-blocking requests not tracked (request table full)",
			    tr_mpi_world_rank, (unsigned long long)tr_mpi_req_lost());
	if (tr_mpi_file_lost())
		tr_log_warn("rank %d: %llu MPI_File_open calls not recorded as I/O handles (more than 256 files open)",
			    tr_mpi_world_rank, (unsigned long long)tr_mpi_file_lost());
	if (!tr_mpi_local_only)
		tr_mpi_unify();
	PMPI_Comm_free(&tr_mpi_pcomm);
}

void tr_mpi_env_enter(int fn, struct tr_thread **t, uint32_t *rgn)
{
	*t = tr_thread_get();
	if (*t) {
		*rgn = tr_mpi_region(fn);
		tr_mpi_enter(*t, tr_time(), *rgn);
	}
}

/* rgn UINT32_MAX: no Leave (MPI_Abort), the thread only put back. */
void tr_mpi_env_leave(struct tr_thread *t, uint32_t rgn)
{
	if (!t)
		return;
	if (rgn != UINT32_MAX)
		tr_leave(t, tr_time(), rgn);
	tr_thread_put(t);
}

TR_EXPORT int MPI_Init(int *argc, char ***argv)
{
	int ret;
	TR_MPI_BRACKET(MPI_Init, TR_MPI_INIT, ret = PMPI_Init(argc, argv), ret == MPI_SUCCESS, 0);
	return ret;
}

TR_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret;
	TR_MPI_BRACKET(MPI_Init_thread, TR_MPI_INIT, ret = PMPI_Init_thread(argc, argv, required, provided),
		       ret == MPI_SUCCESS, 0);
	return ret;
}

TR_EXPORT int MPI_Finalize(void)
{
	int ret;
	TR_MPI_BRACKET(MPI_Finalize, TR_MPI_FINALIZE, ret = PMPI_Finalize(), 1, 0);
	return ret;
}

/* stderr a pipe the launcher reads (Hydra's proxy, Open MPI's daemon):
 * until what we wrote to it was read, at most 200 ms. At PMPI_Abort the
 * launcher kills every rank and its forwarder goes with them, dropping
 * what it had not read yet: the line naming the merged archive was
 * missing once in CI (mpich_abort_3) although the archive was merged. */
static void stderr_drained(void)
{
	struct stat st;
	int left = 0;
	if (tr_real.fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	for (int i = 0; i < 200 && ioctl(2, FIONREAD, &left) == 0 && left > 0; i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
}

/* Before PMPI_Abort: this rank's trace with the Leave of MPI_Abort (its
 * open regions closed) and ProgramEnd (exit status: the error code); the
 * merge of every rank's archive starts (preload/archive/archive.c). */
void tr_mpi_abort_prepare(int errorcode)
{
	__atomic_store_n(&tr_mpi_on, 0, __ATOMIC_RELEASE);
	tr_log_warn("rank %d: MPI_Abort(%d): writing this rank's trace without unification",
		    tr_mpi_world_rank, errorcode);
	tr_finish_status(errorcode, 1);
	stderr_drained();
}

/* MPI_Abort does not return and the other ranks are killed: this rank
 * writes what it has now (partial archive, see docs/mpi.md). */
TR_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
	int ret;
	TR_MPI_BRACKET(MPI_Abort, TR_MPI_ABORT, ret = PMPI_Abort(comm, errorcode), 1, errorcode);
	return ret;
}
