/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openmp.c - the OpenMP module (TRACER_OPENMP): definitions, lock ids and
 * the records shared by the two runtime front ends (openmp_ompt.c for LLVM
 * libomp, openmp_gomp.c for GCC libgomp). See openmp_int.h for the mapping.
 *
 * Lock ids: OpenMP locks, critical sections (one lock per name), atomic and
 * ordered get dense ids in first-use order from a lock-free table in BSS
 * (slots claimed with a CAS on the key, never freed); each lock counts its
 * acquisitions (ThreadAcquireLock's acquisitionOrder). No malloc, no lock.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "openmp_int.h"

uint32_t tr_omp_rgn[TR_OMP_NRGN];
uint32_t tr_omp_team = OTF2W_UNDEFINED_REF;
int tr_omp_ready;
int tr_omp_ompt_on;

static const struct {
	const char *name;
	uint8_t role;
} omp_rgn_def[TR_OMP_NRGN] = {
	[TR_OMP_PARALLEL] = { "omp parallel", OTF2W_ROLE_PARALLEL },
	[TR_OMP_BARRIER] = { "omp barrier", OTF2W_ROLE_BARRIER },
	[TR_OMP_IBARRIER] = { "omp implicit barrier", OTF2W_ROLE_IMPLICIT_BARRIER },
	[TR_OMP_LOOP] = { "omp for", OTF2W_ROLE_LOOP },
	[TR_OMP_SECTIONS] = { "omp sections", OTF2W_ROLE_SECTIONS },
	[TR_OMP_SINGLE] = { "omp single", OTF2W_ROLE_SINGLE },
	[TR_OMP_WORKSHARE] = { "omp workshare", OTF2W_ROLE_WORKSHARE },
	[TR_OMP_DISTRIBUTE] = { "omp distribute", OTF2W_ROLE_LOOP },
	[TR_OMP_TASKLOOP] = { "omp taskloop", OTF2W_ROLE_LOOP },
	[TR_OMP_MASTER] = { "omp master", OTF2W_ROLE_MASTER },
	[TR_OMP_CRITICAL] = { "omp critical", OTF2W_ROLE_CRITICAL },
	[TR_OMP_ATOMIC] = { "omp atomic", OTF2W_ROLE_ATOMIC },
	[TR_OMP_ORDERED] = { "omp ordered", OTF2W_ROLE_ORDERED },
	[TR_OMP_SET_LOCK] = { "omp_set_lock", OTF2W_ROLE_FUNCTION },
	[TR_OMP_SET_NEST_LOCK] = { "omp_set_nest_lock", OTF2W_ROLE_FUNCTION },
	[TR_OMP_TASKWAIT] = { "omp taskwait", OTF2W_ROLE_TASK_WAIT },
	[TR_OMP_TASKGROUP] = { "omp taskgroup", OTF2W_ROLE_TASK_WAIT },
	[TR_OMP_REDUCTION] = { "omp reduction", OTF2W_ROLE_CODE },
	[TR_OMP_TASKYIELD] = { "omp taskyield", OTF2W_ROLE_FUNCTION },
	[TR_OMP_SCOPE] = { "omp scope", OTF2W_ROLE_CODE },
	[TR_OMP_CANCEL] = { "omp cancel", OTF2W_ROLE_FUNCTION },
	[TR_OMP_CANCELLATION_POINT] = { "omp cancellation point", OTF2W_ROLE_FUNCTION },
};

static int omp_setting = 1;   /* TRACER_OPENMP */

static const struct tr_setting omp_settings[] = {
	TR_SETTING_ON_OFF("TRACER_OPENMP", &omp_setting, "on"),
};
TR_SETTINGS_LIST(omp_table, "openmp", omp_settings);

int tr_omp_setting(void)
{
	static int registered;
	if (!__atomic_load_n(&registered, __ATOMIC_ACQUIRE)) {
		tr_settings_register(&omp_table);   /* (a second call is a no-op) */
		__atomic_store_n(&registered, 1, __ATOMIC_RELEASE);
	}
	return omp_setting;
}

__attribute__((constructor(150))) static void omp_settings_register(void)
{
	(void)tr_omp_setting();
}

int tr_omp_setup(void)
{
	static _Atomic int state;       /* 0 new, 1 being made, 2 done */
	if (tr_likely(tr_omp_ready))
		return 0;
	if (!tr_omp_setting() || !tr_is_active())
		return -1;
	int expect = 0;
	if (atomic_compare_exchange_strong(&state, &expect, 1)) {
		for (int i = 0; i < TR_OMP_NRGN; i++)
			tr_omp_rgn[i] = tr_def_region(omp_rgn_def[i].name, omp_rgn_def[i].name, "OpenMP",
						      omp_rgn_def[i].role, OTF2W_PARADIGM_OPENMP,
						      OTF2W_REGION_FLAG_NONE, NULL, 0, 0);
		tr_omp_team = tr_def_thread_comm(OTF2W_PARADIGM_OPENMP, "OpenMP team");
		__atomic_store_n(&tr_omp_ready, 1, __ATOMIC_RELEASE);
		atomic_store(&state, 2);
	}
	while (atomic_load(&state) != 2)
		sched_yield();
	return 0;
}

void tr_omp_name_worker(struct tr_thread *t)
{
	char name[48];
	snprintf(name, sizeof(name), "OpenMP thread %u", t->index);
	tr_thread_set_location_name(t, name);
}

/* ---- records ---------------------------------------------------------------------- */

void tr_omp_fork(struct tr_thread *t, uint64_t now, uint32_t nrequested)
{
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_fork(t->w, NULL, now, OTF2W_PARADIGM_OPENMP, nrequested));
	tr_rec_end(t);
}

void tr_omp_join(struct tr_thread *t, uint64_t now)
{
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_join(t->w, NULL, now, OTF2W_PARADIGM_OPENMP));
	tr_rec_end(t);
}

void tr_omp_team_begin(struct tr_thread *t, uint64_t now)
{
	if (tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_thread_team_begin(t->w, NULL, now, tr_omp_team));
		tr_rec_end(t);
	}
	tr_enter(t, now, tr_omp_rgn[TR_OMP_PARALLEL]);
}

void tr_omp_team_end(struct tr_thread *t, uint64_t now)
{
	tr_leave(t, now, tr_omp_rgn[TR_OMP_PARALLEL]);
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_team_end(t->w, NULL, now, tr_omp_team));
	tr_rec_end(t);
}

/* ---- late team ends: the masters' join times ------------------------------------ */

#define OMP_JOIN_RING 16   /* a late end finds its region among the master's last 16 */

static struct TR_OMP_LINE omp_joins {
	uint32_t next_seq;          /* regions started as master (owner thread only) */
	struct {
		_Atomic uint32_t seq;   /* region number (0: being written) */
		_Atomic uint64_t time;
	} join[OMP_JOIN_RING];
} omp_joins[TR_OMP_MAX_THREADS] TR_BIG_BSS;

uint32_t tr_omp_region_seq(const struct tr_thread *t)
{
	if (t->index >= TR_OMP_MAX_THREADS)
		return 0;
	struct omp_joins *m = &omp_joins[t->index];
	if (!++m->next_seq)
		++m->next_seq;     /* 0 means "being written" */
	return m->next_seq;
}

void tr_omp_region_joined(const struct tr_thread *t, uint32_t seq, uint64_t now)
{
	if (!seq || t->index >= TR_OMP_MAX_THREADS)
		return;
	struct omp_joins *m = &omp_joins[t->index];
	uint32_t k = seq % OMP_JOIN_RING;
	atomic_store_explicit(&m->join[k].seq, 0, memory_order_release);
	atomic_store_explicit(&m->join[k].time, now, memory_order_release);
	atomic_store_explicit(&m->join[k].seq, seq, memory_order_release);
}

uint64_t tr_omp_join_time(const struct tr_thread *t, uint32_t master, uint32_t seq, uint64_t since)
{
	if (!seq || master == t->index || master >= TR_OMP_MAX_THREADS)
		return 0;
	struct omp_joins *m = &omp_joins[master];
	uint32_t k = seq % OMP_JOIN_RING;
	uint32_t s1 = atomic_load_explicit(&m->join[k].seq, memory_order_acquire);
	uint64_t jt = atomic_load_explicit(&m->join[k].time, memory_order_acquire);
	uint32_t s2 = atomic_load_explicit(&m->join[k].seq, memory_order_acquire);
	/* the slot holds this very region's join (published before the
	 * worker's late records: no clock read needed), or not yet */
	if (s1 != seq || s2 != s1 || jt < since)
		return 0;
	/* not before what the thread recorded since (pthread calls of the runtime) */
	uint64_t last = t->w ? otf2w_evt_writer_last_time(t->w) : 0;
	return jt > last ? jt : last;
}

void tr_omp_team_close(struct tr_thread *t, uint32_t base, uint64_t end, int own)
{
	if (own) {
		tr_stack_leave_to(t, base, end);
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_thread_team_end(t->w, NULL, end, tr_omp_team));
			tr_rec_end(t);
		}
	} else if (t->w && t->state != TR_T_DEAD) {
		uint64_t last = otf2w_evt_writer_last_time(t->w);
		tr_evt_status(t, otf2w_evt_thread_team_end(t->w, NULL, end > last ? end : last, tr_omp_team));
	}
}

/* ---- lock table ---------------------------------------------------------------- */

#define OMP_LOCK_BITS  14
#define OMP_LOCK_SLOTS (1u << OMP_LOCK_BITS)
#define OMP_LOCK_PROBES 128

struct omp_lock {
	_Atomic uint64_t key;      /* 0 = free */
	_Atomic uint32_t id;       /* id + 1; 0 while being published */
	_Atomic uint32_t order;    /* acquisitions so far */
	_Atomic uint32_t holder;   /* location index + 1 of the last acquirer */
	uint32_t pad[3];           /* 32 bytes: a slot never straddles a cache line */
};

static struct omp_lock omp_locks[OMP_LOCK_SLOTS] TR_BIG_BSS;
static struct omp_lock omp_lock_overflow;     /* shared once the table is full */
static _Atomic uint32_t omp_next_lock;

static struct omp_lock *omp_lock_wait(struct omp_lock *l)
{
	while (!atomic_load_explicit(&l->id, memory_order_acquire))
		sched_yield();  /* the claimer is one store away */
	return l;
}

static struct omp_lock *omp_lock_get(uint64_t key)
{
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - OMP_LOCK_BITS));
	for (uint32_t n = 0; n < OMP_LOCK_PROBES; n++) {
		struct omp_lock *l = &omp_locks[(h + n) & (OMP_LOCK_SLOTS - 1)];
		uint64_t k = atomic_load_explicit(&l->key, memory_order_acquire);
		if (tr_likely(k == key))
			return omp_lock_wait(l);
		if (k == 0) {
			if (atomic_compare_exchange_strong_explicit(&l->key, &k, key, memory_order_acq_rel,
								    memory_order_acquire)) {
				uint32_t id = atomic_fetch_add_explicit(&omp_next_lock, 1, memory_order_relaxed);
				atomic_store_explicit(&l->id, id + 1, memory_order_release);
				return l;
			}
			if (k == key)
				return omp_lock_wait(l);
		}
	}
	struct omp_lock *l = &omp_lock_overflow;
	uint64_t k = 0;
	if (atomic_compare_exchange_strong(&l->key, &k, UINT64_MAX)) {
		uint32_t id = atomic_fetch_add_explicit(&omp_next_lock, 1, memory_order_relaxed);
		atomic_store_explicit(&l->id, id + 1, memory_order_release);
	}
	return omp_lock_wait(l);
}

uint32_t tr_omp_lock_count(void)
{
	return atomic_load_explicit(&omp_next_lock, memory_order_relaxed);
}

/* `now` was read after the runtime call that took the lock returned; the
 * clock read is not ordered with the atomic that took it (rdtsc): when
 * another thread held it last, the time is read again once the lock is
 * surely ours, so the acquisition orders stay in time order (as the
 * pthread layer's pth_acquire_note). Returns the acquisition's time (for
 * the Leave that follows). */
uint64_t tr_omp_lock_acquired(struct tr_thread *t, uint64_t now, uint64_t key)
{
	struct omp_lock *l = omp_lock_get(key);
	uint32_t me = t->index + 1;
	if (tr_unlikely(atomic_load_explicit(&l->holder, memory_order_relaxed) != me)) {
		atomic_store_explicit(&l->holder, me, memory_order_relaxed);
		tr_clock_fence();
		uint64_t again = tr_time();
		if (again > now)   /* never before the Enter already written */
			now = again;
	}
	uint32_t order = atomic_fetch_add_explicit(&l->order, 1, memory_order_relaxed) + 1;
	if (!tr_rec_begin(t))
		return now;
	tr_evt_status(t, otf2w_evt_thread_acquire_lock(t->w, NULL, now, OTF2W_PARADIGM_OPENMP,
						       atomic_load_explicit(&l->id, memory_order_relaxed) - 1,
						       order));
	tr_rec_end(t);
	return now;
}

void tr_omp_lock_released(struct tr_thread *t, uint64_t now, uint64_t key)
{
	struct omp_lock *l = omp_lock_get(key);
	uint32_t order = atomic_load_explicit(&l->order, memory_order_relaxed);
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_release_lock(t->w, NULL, now, OTF2W_PARADIGM_OPENMP,
						       atomic_load_explicit(&l->id, memory_order_relaxed) - 1,
						       order));
	tr_rec_end(t);
}

/* ---- tasks ------------------------------------------------------------------------- */

static TR_TLS uint32_t omp_task_gen;   /* generations of the tasks this thread created */

uint64_t tr_omp_task_create(struct tr_thread *t, uint64_t now)
{
	uint64_t task = (uint64_t)t->index << 32 | ++omp_task_gen;
	if (tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_thread_task_create(t->w, NULL, now, tr_omp_team, t->index,
							      (uint32_t)task));
		tr_rec_end(t);
	}
	return task;
}

void tr_omp_task_switch(struct tr_thread *t, uint64_t now, uint64_t task)
{
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_task_switch(t->w, NULL, now, tr_omp_team,
						      (uint32_t)(task >> 32), (uint32_t)task));
	tr_rec_end(t);
}

void tr_omp_task_complete(struct tr_thread *t, uint64_t now, uint64_t task)
{
	if (!tr_rec_begin(t))
		return;
	tr_evt_status(t, otf2w_evt_thread_task_complete(t->w, NULL, now, tr_omp_team,
							(uint32_t)(task >> 32), (uint32_t)task));
	tr_rec_end(t);
}

/* ---- module ------------------------------------------------------------------------ */

static void omp_fini(void)
{
	tr_omp_gomp_fini();
	if (tr_omp_ready)
		tr_log_debug("OpenMP: %s, %u locks", tr_omp_ompt_on ? "OMPT (libomp)" : "libgomp",
			     tr_omp_lock_count());
}

static void omp_fork_child(void)
{
	/* The child's archive numbers its locks from 0 again. */
	tr_mem_zero(omp_locks, sizeof(omp_locks));
	memset(&omp_lock_overflow, 0, sizeof(omp_lock_overflow));
	atomic_store(&omp_next_lock, 0);
	tr_mem_zero(omp_joins, sizeof(omp_joins));   /* only the forking thread is left */
	tr_omp_ompt_fork_child();
	tr_omp_gomp_fork_child();
}

/* Teams t is still in when it ends (own thread: thread_ending, before the
 * pthread layer's ThreadEnd, or thread_fini) or at exit (another thread, t
 * stopped: thread_fini). */
static void omp_thread_fini(struct tr_thread *t)
{
	if (!tr_omp_ready)
		return;
	tr_omp_ompt_thread_fini(t);
	tr_omp_gomp_thread_fini(t);
}

static const struct tr_module omp_module = {
	.name = "openmp",
	.thread_fini = omp_thread_fini,
	.fini = omp_fini,
	.fork_child = omp_fork_child,
	.thread_ending = omp_thread_fini,
};

__attribute__((constructor(203))) static void omp_module_register(void)
{
	tr_module_register(&omp_module);
}
