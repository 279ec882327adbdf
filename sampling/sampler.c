/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampler.c - statistical sampling with libunwind (module "sampling").
 *
 * TRACER_SAMPLING=<period> turns it on (off by default). Every thread gets a
 * POSIX timer on its own CPU-time clock (timer_create(CLOCK_THREAD_CPUTIME_ID)
 * with SIGEV_THREAD_ID), so a thread is sampled in proportion to the CPU time
 * it uses. The SIGPROF handler unwinds the interrupted stack with libunwind
 * (unw_backtrace: the fast frame-cache tracer, which handles the sigreturn
 * frame; the frames of the handler itself are skipped by finding the
 * interrupted pc taken from the ucontext) and inserts the stack into the
 * thread's calling-context tree, then writes a CallingContextSample.
 *
 * With sampling on, tr_enter/tr_leave regions are written as
 * CallingContextEnter/Leave (write_enter/write_leave override): their node
 * hangs below the caller's unwound stack, and samples taken while a region
 * is open hang below the region's node, so instrumented regions and sampled
 * frames form one tree.
 *
 * Signal safety. The handler touches only: the thread's preallocated state
 * (mmap'ed at thread_init), the global node array (index handed out with an
 * atomic add), tr_time(), libunwind local unwinding and the thread's event
 * writer when the record fits the current chunk (no chunk switch, so no
 * allocation). It never takes a lock, never allocates, never prints.
 * When the signal lands while the thread is inside the tracer (guard > 0),
 * writing a record (in_record), changing its own tree (busy), or when the
 * chunk is full, the unwound stack is queued (SMP_QN slots per thread) and
 * written by the thread before its next calling-context record, or in the
 * next handler call that may write; a full queue counts the sample lost.
 * While the thread itself runs libunwind (enter unwinding) the sample is
 * counted lost (libunwind's per-thread cache is not reentrant).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "smp_sampler.h"
#include "smp_libs.h"

struct smp_node *tr_smp_nodes;
uint32_t tr_smp_nnodes;
uint32_t tr_smp_node_cap;
volatile int tr_smp_enabled;
int tr_smp_callers_only;

TR_TLS struct smp_thread *tr_smp_tls;
uint32_t tr_smp_ig = SMP_UNDEF;
volatile int tr_smp_frozen;
struct sigaction tr_smp_old_sa;
int tr_smp_handler_installed;
uint32_t tr_smp_hash_mask;
atomic_flag tr_smp_list_lock = ATOMIC_FLAG_INIT;
struct smp_thread *tr_smp_threads;
uint64_t tr_smp_tot[SMP_NTOT];
uint32_t tr_smp_nthreads;
struct smp_res tr_smp_res[SMP_RES_MAX] TR_BIG_BSS;
uint32_t tr_smp_nres;
uint32_t tr_smp_nfd_taken;
int tr_smp_diff_seen;
uint64_t tr_smp_diff[5];

void tr_smp_list_lock_take(void)
{
	while (atomic_flag_test_and_set_explicit(&tr_smp_list_lock, memory_order_acquire))
		sched_yield();
}

void tr_smp_list_lock_drop(void)
{
	atomic_flag_clear_explicit(&tr_smp_list_lock, memory_order_release);
}

/* ---- records --------------------------------------------------------------------- */

/* Bytes free in the current chunk: a record that fits is stored without a
 * chunk switch (no allocation, no lock). Public format/ API (inline). */
static inline size_t smp_room(otf2w_evt_writer *w)
{
	return otf2w_evt_writer_room(w);
}

/* Insert one stack and write its CallingContextSample. Caller owns the tree. */
SMP_HOT static void smp_write_sample(struct smp_thread *s, struct tr_thread *t, uint64_t time,
			     void *const *f, uint32_t n, int trunc)
{
	uint32_t fresh = 0;
	uint32_t last = s->cn ? s->cnode[s->cn - 1] : SMP_UNDEF;
	uint32_t node = tr_smp_path(s, f, n, 1, trunc, &fresh);
	if (node == SMP_UNDEF) {
		s->full++;
		s->lost++;
		return;
	}
	time = tr_smp_clamp_time(t->w, time);
	/* Right after a sample whose path the cache holds, the nodes new on
	 * this path are the fresh ones (the cost of a parent walk saved). */
	uint32_t ud = s->cur == last && last != SMP_UNDEF && s->cur_is_sample && fresh != UINT32_MAX
			      ? fresh + 1
			      : tr_smp_unwind_distance(s->cur, node);
	otf2w_status st = otf2w_evt_calling_context_sample(t->w, NULL, time, node, ud, tr_smp_ig);
	if (st != OTF2W_OK) {
		s->errors++;
		return;
	}
	s->cur = node;
	s->cur_is_sample = 1;
	s->samples++;
	s->truncated += trunc != 0;
	if (tr_smp_met_with_samples)
		tr_smp_met_record(t, time);
}

static inline struct smp_pending *smp_slot(struct smp_thread *s, uint32_t i)
{
	return (struct smp_pending *)(void *)(s->q + (size_t)(i % SMP_QN) * s->qslot);
}

/* Write the queued samples with time <= limit (all: UINT64_MAX), oldest
 * first. Caller owns the tree (busy set, or the handler on the fast path). */
void tr_smp_drain(struct smp_thread *s, struct tr_thread *t, uint64_t limit)
{
	while (s->qhead != s->qtail) {
		struct smp_pending *p = smp_slot(s, s->qhead);
		if (p->time > limit)
			break;
		if (t->w && t->state == TR_T_ACTIVE)
			smp_write_sample(s, t, p->time, p->ip, p->n, p->trunc);
		else
			s->lost++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->qhead++;
	}
}

static inline unsigned smp_hist_bucket(uint64_t v)
{
	if (v < 8)
		return (unsigned)v;
	unsigned lg = 63u - (unsigned)__builtin_clzll(v);
	return lg * 8 + (unsigned)((v >> (lg - 3)) & 7);
}

uint64_t tr_smp_hist_value(unsigned b)
{
	if (b < 8)
		return b;
	unsigned lg = b / 8;
	return (8ull + (b & 7)) << (lg - 3);
}

uint32_t tr_smp_hist_all[SMP_HIST];

/* Thread context, before a record of time `time` that is not a
 * calling-context event (metrics.c writes its Metric record after this):
 * the samples queued before that time go first. */
void tr_smp_drain_before(struct tr_thread *t, uint64_t time)
{
	struct smp_thread *s = t->sampling;
	if (!s || s->qhead == s->qtail)
		return;
	s->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tr_smp_drain(s, t, time);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->busy = 0;
}

/* ---- the handler --------------------------------------------------------------------- */

/* TRACER_SAMPLING_UNWIND=check: the walk of unwind.c (a, na frames) against
 * libunwind's from the interrupted pc (b, nb; NULL when libunwind did not
 * find the pc; bfull: its buffer was full, so its stack may be cut). The
 * first difference is kept for the exit line. */
static void smp_unwind_compare(struct smp_thread *s, void *const *a, uint32_t na, void *const *b, uint32_t nb,
			       int bfull)
{
	uint32_t lim = s->maxdepth + 1;
	if (na > lim)
		na = lim;
	if (nb > lim)
		nb = lim;
	uint32_t k = 0;
	while (b && k < na && k < nb && a[k] == b[k])
		k++;
	if (b && (k == na || k == nb) && (na == nb || (bfull && na > nb) || (na == lim && nb == lim)))
		return;
	s->cfi_diff++;
	if (!__atomic_exchange_n(&tr_smp_diff_seen, 1, __ATOMIC_RELAXED)) {
		tr_smp_diff[0] = k;
		tr_smp_diff[1] = na;
		tr_smp_diff[2] = b ? nb : 0;
		tr_smp_diff[3] = k < na ? (uint64_t)(uintptr_t)a[k] : 0;
		tr_smp_diff[4] = b && k < nb ? (uint64_t)(uintptr_t)b[k] : 0;
	}
}

SMP_HOT void tr_smp_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct smp_thread *s = tr_smp_tls;

	if (!s || !s->active)
		goto out;
	s->in_handler = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!s->active || !tr_smp_enabled)
		goto done;
	if (!tr_smp_src_match(&s->src, si)) {
		s->foreign++;
		goto done;
	}
	struct tr_thread *t = s->t;
	uint64_t now = tr_time();

	if (s->unwinding) {
		s->lost++;
		s->lost_unw++;
		goto done;
	}
	ucontext_t *uc = ucv;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	/* an object loaded since the table's last refresh (a dlopen): the
	 * table refreshed first, when the signal interrupted the program's
	 * own code */
	int refresh = __atomic_load_n(&tr_smp_stale, __ATOMIC_RELAXED) && t && !t->guard && !t->in_record && !s->busy;
	/* libunwind's slow path locks a pthread mutex (with signals blocked):
	 * the guard keeps our own wrappers out of it */
	if (t)
		t->guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (refresh)
		tr_smp_objects_refresh_try();
	uint64_t u0 = tr_time();
	int n = 0, known_gap = 0, cfi = -1;
	uint32_t mode = tr_smp_cfg.unwind;
	/* code without unwind information where the walk ended at the pc:
	 * libunwind is not asked again there (its failed lookups cost more
	 * than the rest of the sample), but for one sample in 64 */
	if (pc - s->gap_lo < s->gap_hi - s->gap_lo && (++s->gap_skips & 63) != 0) {
		known_gap = 1;
		s->nounwind++;
	} else {
		/* the unwind tables first (unwind.c), libunwind where they do
		 * not suffice (or to compare, TRACER_SAMPLING_UNWIND=check) */
		if (mode != TR_SMP_UNWIND_LIBUNWIND)
			cfi = tr_smp_cfi_walk(s, uc, s->cfibuf, s->maxdepth + 1);
		if (cfi < 0 || mode == TR_SMP_UNWIND_CHECK)
			n = smp_unw->unw_backtrace(s->sigbuf, (int)s->bufcap);
	}
	s->uticks += tr_time() - u0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t)
		t->guard--;
	int i = 0;
	while (i < n && i < SMP_EXTRA && (uintptr_t)s->sigbuf[i] != pc)
		i++;
	void **f;
	uint32_t nf;
	int trunc = 0;
	if (cfi >= 0 && mode == TR_SMP_UNWIND_CHECK)
		smp_unwind_compare(s, s->cfibuf, (uint32_t)cfi, i < n && i < SMP_EXTRA ? s->sigbuf + i : NULL,
				   i < n ? (uint32_t)(n - i) : 0, n == (int)s->bufcap);
	if (known_gap) {
		/* what the walk gave there: the pc alone */
		s->sigbuf[0] = (void *)pc;
		f = s->sigbuf;
		nf = 1;
	} else if (cfi >= 0) {
		s->cfi++;
		f = s->cfibuf;
		nf = (uint32_t)cfi;
		if (nf > s->maxdepth) {
			trunc = 1;
			nf = s->maxdepth;
		}
	} else if (i >= n || i >= SMP_EXTRA) {
		/* unwinding from the handler failed: keep the pc alone */
		s->sigbuf[0] = (void *)pc;
		f = s->sigbuf;
		nf = 1;
		trunc = 1;
	} else {
		f = s->sigbuf + i;
		nf = (uint32_t)(n - i);
		if (n == (int)s->bufcap || nf > s->maxdepth) {
			trunc = 1;
			if (nf > s->maxdepth)
				nf = s->maxdepth;
		}
		/* the walk ended at the pc: when no FDE covers it, remember the
		 * stretch of code (ehgap.c); a longer walk there forgets it */
		if (nf == 1 && !trunc) {
			if (tr_smp_eh_gap(pc, &s->gap_lo, &s->gap_hi) != 0)
				s->gap_lo = s->gap_hi = 0;
		} else if (pc - s->gap_lo < s->gap_hi - s->gap_lo) {
			s->gap_lo = s->gap_hi = 0;
		}
	}

	/* Write now only when the thread is outside the tracer; claim the
	 * location like any record (in_record first, then the state: the
	 * shut-down path waits for in_record after marking threads DYING). */
	/* Inside a wrapped call (guard held, e.g. MPI polling in MPI_Allreduce)
	 * the sample is queued, not written: the wrapper may have taken the
	 * timestamp of its next records already (they would go backwards). */
	int can_write = 0, inside = !t || t->guard != 0 || t->in_record || s->busy;
	if (!inside) {
		if (!tr_rec_begin(t)) {
			/* not recording (measurement off, shutting down): drop */
			s->lost++;
			s->lost_off++;
			goto timed;
		}
		/* room for the queued samples tr_smp_drain writes first and this
		 * one, so the handler never switches chunks (a chunk switch may
		 * lock, mmap or write a file); otherwise queue it: the thread
		 * drains the queue at its next record, outside the handler */
		size_t per = tr_smp_met_with_samples ? 1024u : 128u;
		can_write = smp_room(t->w) >= per * (size_t)(s->qtail - s->qhead + 1);
		if (!can_write)
			tr_rec_end(t);
	}
	if (can_write) {
		t->guard++;
		tr_smp_drain(s, t, UINT64_MAX);
		smp_write_sample(s, t, now, f, nf, trunc);
		t->guard--;
		tr_rec_end(t);
	} else if (s->qtail - s->qhead < SMP_QN) {
		struct smp_pending *p = smp_slot(s, s->qtail);
		p->time = now;
		p->n = nf;
		p->trunc = (uint32_t)trunc;
		memcpy(p->ip, f, nf * sizeof(void *));
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->qtail++;
		s->deferred++;
	} else {
		s->lost++;
		s->lost_full++;
	}
timed:;
	uint64_t dt = tr_time() - now;
	s->hticks += dt;
	s->hcalls++;
	s->hist[smp_hist_bucket(dt)]++;
done:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->in_handler = 0;
out:
	errno = saved_errno;
}

int tr_smp_in_tracer(void)
{
	struct smp_thread *s = tr_smp_tls;
	if (s && (s->in_handler || s->unwinding))
		return 1;
	struct tr_thread *t = tr_thread_peek();
	return t && t->guard > 0;
}

/* ---- timers ------------------------------------------------------------------------- */

void tr_smp_timer_start(struct smp_thread *s)
{
	s->tid = (int)tr_syscall(SYS_gettid);
	s->cpu0 = tr_smp_thread_cpu_ns(s->tid);
	int e = tr_smp_src_start(&s->src);
	if (e)
		tr_log_warn("sampling: cannot start the %s of thread %u (%s); it is not sampled",
			    tr_smp_mode == SMP_MODE_PERF ? "perf event" : "CPU-time timer", s->t ? s->t->index : 0,
			    strerror(e));
}

void tr_smp_timer_stop(struct smp_thread *s)
{
	if (!s->src.ok)
		return;
	uint64_t c = tr_smp_thread_cpu_ns(s->tid);
	if (c > s->cpu0)
		s->cpu_ns += c - s->cpu0;
	if (tr_smp_src_stop(&s->src))
		s->fd_taken = 1;
}

/* ---- per-thread state ------------------------------------------------------------ */

static struct smp_thread *smp_state_new(struct tr_thread *t)
{
	uint32_t depth = tr_smp_cfg.depth ? tr_smp_cfg.depth : 64;
	if (depth > 4096)
		depth = 4096;
	uint32_t bufcap = depth + SMP_EXTRA;
	size_t hsz = sizeof(uint32_t) << SMP_HASH_BITS;
	size_t qslot = (sizeof(struct smp_pending) + sizeof(void *) * bufcap + 15) & ~(size_t)15;
	size_t csz = (sizeof(uint64_t) + sizeof(uint32_t) + 1) * bufcap + 64;
	size_t rsz = sizeof(struct smp_region) * SMP_MAX_REGIONS;
	size_t uwsz = sizeof(struct smp_uw_ent) * 4 * SMP_UWC_SETS;
	size_t len = ((sizeof(struct smp_thread) + 63) & ~(size_t)63) + hsz +
		     3 * sizeof(void *) * bufcap + SMP_QN * qslot + csz + rsz + uwsz + 8192;
	uint8_t *m = tr_real.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* Layout by temperature: what every sample touches (state, unwind
	 * buffer, path cache) shares the first pages; a signal arriving in
	 * a VM finds the TLB cold, every page costs. */
	struct smp_thread *s = (struct smp_thread *)m;
	uint8_t *p = m + ((sizeof(struct smp_thread) + 63) & ~(size_t)63);
	s->t = t;
	s->map_len = len;
	s->maxdepth = depth;
	s->bufcap = bufcap;
	s->cur = SMP_UNDEF;
	s->sigbuf = (void **)p;
	p += sizeof(void *) * bufcap;
	s->cfibuf = (void **)p;
	p += sizeof(void *) * bufcap;
	s->ckey = (uint64_t *)(void *)p;
	p += sizeof(uint64_t) * bufcap;
	s->cnode = (uint32_t *)(void *)p;
	p += sizeof(uint32_t) * bufcap;
	s->cflag = p;
	p += bufcap;
	p = (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
	s->thrbuf = (void **)p;
	p += sizeof(void *) * bufcap;
	s->reg = (struct smp_region *)(void *)p;
	p += rsz;
	p = (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
	s->uwc = (struct smp_uw_ent *)(void *)p;
	p += uwsz;
	s->q = p;
	s->qslot = qslot;
	p += SMP_QN * qslot;
	p = (uint8_t *)(((uintptr_t)p + 4095) & ~(uintptr_t)4095);
	s->hash = (uint32_t *)(void *)p;
	s->hlimit = (1u << SMP_HASH_BITS) / 4 * 3;
	s->cbase = SMP_UNDEF;
	return s;
}

/* What one thread got, kept for the exit line and recorded as properties
 * of its location (SAMPLING::SAMPLES, ::DEFERRED, ::LOST, ::CPU_NS: the
 * thread's CPU time while it was sampled). Thread context, list lock held
 * or the state private; the properties are defined by tr_smp_res_define. */
void tr_smp_res_add(struct smp_thread *s)
{
	if (s->fd_taken)
		tr_smp_nfd_taken++;
	if (tr_smp_nres < SMP_RES_MAX) {
		struct smp_res *r = &tr_smp_res[tr_smp_nres++];
		r->index = s->t ? s->t->index : 0;
		r->samples = s->samples;
		r->cpu_ns = s->cpu_ns;
	}
}

void tr_smp_res_define(struct smp_thread *s)
{
	if (!s->t)
		return;
	static const char *const nm[] = { "SAMPLING::SAMPLES", "SAMPLING::DEFERRED", "SAMPLING::LOST",
					  "SAMPLING::CPU_NS" };
	uint64_t v[] = { s->samples, s->deferred, s->lost, s->cpu_ns };
	for (unsigned i = 0; i < 4; i++) {
		char b[32];
		snprintf(b, sizeof(b), "%llu", (unsigned long long)v[i]);
		tr_def_location_property(s->t->location, nm[i], b);
	}
}

/* Add s's counts to tot[SMP_NTOT] and its handler times to the histogram. */
void tr_smp_totals_add(uint64_t *tot, const struct smp_thread *s)
{
	const uint64_t v[SMP_NTOT] = { s->samples, s->deferred, s->lost, s->truncated, s->full, s->foreign,
				       s->errors, s->hticks, s->hcalls, s->uticks, s->lost_unw, s->lost_off,
				       s->lost_full, s->nounwind, s->cfi, s->cfi_diff };
	for (int i = 0; i < SMP_NTOT; i++)
		tot[i] += v[i];
	for (unsigned i = 0; i < SMP_HIST; i++)
		tr_smp_hist_all[i] += s->hist[i];
}

static void smp_stats_add(struct smp_thread *s)
{
	tr_smp_res_add(s);
	tr_smp_totals_add(tr_smp_tot, s);
	tr_smp_nthreads++;
}

void tr_smp_thread_init(struct tr_thread *t)
{
	if (!tr_smp_enabled)
		return;
	tr_smp_check_owner();
	if (!tr_smp_enabled)
		return;
	struct smp_thread *s = smp_state_new(t);
	if (!s) {
		tr_log_warn("sampling: no memory for thread %u; it is not sampled", t->index);
		return;
	}
	/* Warm libunwind's per-thread trace cache here (it mmaps on first use),
	 * not in the handler. The guard keeps the locks libunwind and the
	 * loader take out of the trace. */
	t->guard++;
	s->unwinding = 1;
	smp_unw->unw_backtrace(s->thrbuf, (int)s->bufcap);
	s->unwinding = 0;
	/* the stack unwind.c may read: from the interrupted rsp to its top */
	pthread_attr_t a;
	void *lo;
	size_t sz;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &lo, &sz) == 0) {
			s->stack_lo = (uintptr_t)lo;
			s->stack_hi = (uintptr_t)lo + sz;
		}
		pthread_attr_destroy(&a);
	}
	t->sampling = s;
	tr_smp_list_lock_take();
	s->next = tr_smp_threads;
	tr_smp_threads = s;
	tr_smp_list_lock_drop();
	tr_smp_tls = s;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->active = 1;
	if (!tr_smp_callers_only) {
		tr_durable_handler_records(t);   /* (before the first sample it may write) */
		tr_smp_timer_start(s);
	}
	tr_smp_objects_refresh();
	t->guard--;
}

/* Stop sampling thread s (its own thread, or the exiting thread for threads
 * still running at exit) and write what it queued. */
void tr_smp_thread_stop(struct smp_thread *s, int own)
{
	sigset_t set, old;
	if (own) {
		sigemptyset(&set);
		sigaddset(&set, SIGPROF);
		tr_real.pthread_sigmask(SIG_BLOCK, &set, &old);
	}
	tr_smp_timer_stop(s);
	s->active = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!own) {
		/* the thread may be inside the handler right now */
		for (int i = 0; i < 100000 && s->in_handler; i++)
			sched_yield();
	}
	struct tr_thread *t = s->t;
	if (own && t && t->state == TR_T_ACTIVE && t->w) {
		s->busy = 1;
		tr_smp_drain(s, t, UINT64_MAX);
		s->busy = 0;
	} else {
		s->lost += s->qtail - s->qhead;
		s->qhead = s->qtail;
	}
	if (own)
		tr_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tr_smp_thread_fini(struct tr_thread *t)
{
	struct smp_thread *s = t->sampling;
	if (!s)
		return;
	int own = tr_smp_tls == s;
	t->guard++;
	tr_smp_check_owner();
	if (s->active)
		tr_smp_thread_stop(s, own);
	/* preload/ leaves closing open regions to the enter/leave writer */
	if (t->w && (own || t->state != TR_T_ACTIVE)) {
		uint64_t now = tr_smp_clamp_time(t->w, tr_time());
		s->busy = 1;
		while (s->nreg) {
			uint32_t k = s->nreg <= SMP_MAX_REGIONS ? s->nreg - 1 : SMP_MAX_REGIONS - 1;
			uint32_t node = s->nreg <= SMP_MAX_REGIONS
						? s->reg[k].node
						: tr_smp_child(s, s->reg[k].node, SMP_KEY_REGION | s->reg[k].region);
			if (node != SMP_UNDEF)
				otf2w_evt_calling_context_leave(t->w, NULL, now, node);
			s->cur = smp_parent(node);
			s->cur_is_sample = 0;
			s->nreg--;
		}
		s->busy = 0;
	}
	tr_smp_objects_refresh();
	if (own) {
		/* release the state: no handler can run on it any more */
		sigset_t set, old;
		sigemptyset(&set);
		sigaddset(&set, SIGPROF);
		tr_real.pthread_sigmask(SIG_BLOCK, &set, &old);
		tr_smp_tls = NULL;
		t->sampling = NULL;
		tr_smp_list_lock_take();
		for (struct smp_thread **pp = &tr_smp_threads; *pp; pp = &(*pp)->next) {
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		}
		smp_stats_add(s);
		tr_smp_list_lock_drop();
		tr_smp_res_define(s);
		tr_real.munmap(s, s->map_len);
		tr_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	t->guard--;
}
