/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampler_module.c - the sampler as a module of the core: SIGPROF ownership
 * (the program's own SIGPROF use hands it over: setitimer, sigaction through
 * the on_sigaction hook, a handler replaced behind our back), init (node
 * array, handler, sources), the exit line and per-location figures, fork,
 * and the crash path. The sampling itself: sampler.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/time.h>

#include "smp_sampler.h"
#include "smp_libs.h"

/* ---- SIGPROF ownership --------------------------------------------------------------- */

static atomic_int smp_yielded;

void tr_smp_yield_sigprof(const char *what)
{
	if (!tr_smp_enabled || tr_smp_callers_only || atomic_exchange(&smp_yielded, 1))
		return;
	tr_smp_enabled = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	tr_smp_list_lock_take();
	for (struct smp_thread *s = tr_smp_threads; s; s = s->next)
		tr_smp_timer_stop(s);
	tr_smp_list_lock_drop();
	tr_smp_src_process(0);
	tr_log_warn("sampling: the program uses SIGPROF itself (%s); sampling stopped, the program's handler is in charge",
		    what);
}

/* Thread context (thread start/end, shut-down): is our SIGPROF handler
 * still installed? preload/ interposes sigaction() and calls
 * smp_on_sigaction; a program that replaced our handler otherwise (a raw
 * system call) is noticed here (our timers are then stopped: they would feed its handler). */
void tr_smp_check_owner(void)
{
	struct sigaction cur;
	if (!tr_smp_enabled || !tr_smp_handler_installed || !tr_real.sigaction)
		return;
	if (tr_real.sigaction(SIGPROF, NULL, &cur) != 0)
		return;
	if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != tr_smp_handler)
		tr_smp_yield_sigprof("its own SIGPROF handler");
}

/* Interposed: programs that drive SIGPROF themselves (gprof-like profilers,
 * gperftools). Only reacts while our sampler runs. */
TR_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	if (which == ITIMER_PROF && nv && (nv->it_value.tv_sec || nv->it_value.tv_usec) && tr_smp_enabled)
		tr_smp_yield_sigprof("setitimer(ITIMER_PROF)");
	return tr_smp_real_setitimer(which, nv, ov);
}

/* Module hook on_sigaction: the program installs a handler for SIGPROF
 * (preload/ interposes signal/sigaction). */
static void smp_on_sigaction(int sig, const void *act)
{
	if (sig == SIGPROF && act && tr_smp_enabled)
		tr_smp_yield_sigprof("sigaction(SIGPROF)");
}

/* ---- module ------------------------------------------------------------------------- */

static void smp_init(void)
{
	int sampling = tr_smp_cfg.period_ns != 0;
	if (!sampling && !tr_smp_cfg.callers)
		return;
	const char *why = sampling ? "TRACER_SAMPLING" : "TRACER_CALLERS";
	uint64_t ns = tr_smp_cfg.period_ns;
	if (ns < 10000 && !tr_smp_cfg.event)
		ns = 10000;   /* perf's software events have no shorter period either */
	if (!smp_unwind_load(why) || !smp_dw_load(why))
		return;
	tr_smp_hash_mask = (1u << SMP_HASH_BITS) - 1;

	tr_smp_node_cap = SMP_NODE_CAP;
	void *m = tr_real.mmap(NULL, sizeof(struct smp_node) * (size_t)tr_smp_node_cap, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		tr_log_error("sampling: cannot map the calling-context node array; sampling off");
		return;
	}
	tr_smp_nodes = m;
	/* libunwind: per-thread caches are what a signal handler may use */
	smp_unw->unw_set_caching_policy(*smp_unw->unw_local_addr_space, UNW_CACHE_PER_THREAD);
	tr_smp_objects_init();
	if (!sampling) {
		/* TRACER_CALLERS alone: the tree and the unwinding of every
		 * traced call, no signal, no timer */
		tr_smp_callers_only = 1;
		tr_smp_enabled = 1;
		tr_log_debug("callers: calling contexts of the traced calls, depth %u",
			     tr_smp_cfg.depth ? tr_smp_cfg.depth : 64);
		return;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tr_smp_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	TR_REAL_INIT(sigaction);
	if (!tr_real.sigaction) {
		tr_log_error("sampling: sigaction not found; sampling off");
		return;
	}
	struct sigaction old;
	if (tr_real.sigaction(SIGPROF, NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO ? (void *)old.sa_sigaction != NULL
						    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
		tr_log_warn("sampling: SIGPROF already has a handler; sampling off, the program's handler is in charge");
		return;
	}
	if (tr_real.sigaction(SIGPROF, &sa, &tr_smp_old_sa) != 0) {
		tr_log_error("sampling: cannot install the SIGPROF handler (%s); sampling off", strerror(errno));
		return;
	}
	tr_smp_handler_installed = 1;

	if (tr_smp_src_setup(ns, tr_smp_cfg.event, &tr_smp_ig) != 0) {
		tr_real.sigaction(SIGPROF, &tr_smp_old_sa, NULL);
		tr_smp_handler_installed = 0;
		return;
	}
	tr_smp_enabled = 1;
	tr_smp_src_process(1);
	tr_log_debug("sampling: every %llu ns, depth %u", (unsigned long long)ns,
		     tr_smp_cfg.depth ? tr_smp_cfg.depth : 64);
}

/* Requested and delivered rate over the threads (exit line), and the
 * under-delivery warning. Delivery of a thread = samples / (CPU time while
 * sampled / period); threads with CPU time for fewer than 20 samples are
 * too short to judge. Time in the kernel is never sampled (user-mode
 * events), so a thread that mostly runs system calls shows less. */
static int smp_res_cmp(const void *a, const void *b)
{
	const struct smp_res *x = a, *y = b;
	/* by samples per CPU ns: x.s / x.c < y.s / y.c */
	unsigned __int128 l = (unsigned __int128)x->samples * y->cpu_ns, r = (unsigned __int128)y->samples * x->cpu_ns;
	return l < r ? -1 : l > r;
}

static void smp_rate_report(char *out, size_t cap)
{
	if (tr_smp_cfg.event || !tr_smp_period)
		return;     /* counter overflow: no CPU-time expectation */
	struct smp_res *r = tr_smp_res;
	uint32_t n = 0;
	for (uint32_t i = 0; i < tr_smp_nres; i++)
		if (tr_smp_res[i].cpu_ns >= 20 * tr_smp_period)
			r[n++] = tr_smp_res[i];   /* compacted in place (kept order) */
	uint64_t asked = 1000000000ull / tr_smp_period;
	if (!n) {
		snprintf(out, cap, "; asked %llu/s of CPU per thread", (unsigned long long)asked);
		return;
	}
	qsort(r, n, sizeof(*r), smp_res_cmp);
	struct smp_res *lo = &r[0], *med = &r[(n - 1) / 2];
	uint64_t rlo = lo->samples * 1000000000ull / lo->cpu_ns, rmed = med->samples * 1000000000ull / med->cpu_ns;
	snprintf(out, cap, "; asked %llu/s of CPU per thread, delivered min %llu/s, median %llu/s over %u threads",
		 (unsigned long long)asked, (unsigned long long)rlo, (unsigned long long)rmed, n);
	if (rlo * 10 >= asked * 9)
		return;
	char worst[200] = "";
	size_t k = 0;
	uint32_t nbad = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ri = r[i].samples * 1000000000ull / r[i].cpu_ns;
		if (ri * 10 >= asked * 9)
			break;
		nbad++;
		if (nbad <= 4 && k < sizeof(worst))
			k += (size_t)snprintf(worst + k, sizeof(worst) - k, "%sthread %u %llu %%", nbad > 1 ? ", " : "",
					      r[i].index, (unsigned long long)(ri * 100 / asked));
	}
	char who[48] = "";
	if (tr_proc.rank >= 0)
		snprintf(who, sizeof(who), "MPI rank %d: ", tr_proc.rank);
	tr_log_warn("sampling: %s%u of %u threads got under 90 %% of the samples asked (%s%s)%s", who, nbad, n, worst,
		    nbad > 4 ? ", ..." : "",
		    tr_smp_mode == SMP_MODE_TIMER ? ": CPU-time timers are limited by the kernel's tick"
						  : ": time in the kernel is not sampled, a loaded machine delays signals");
}

/* The last definitions of the calling contexts (objects loaded since
 * the last refresh included); *arg: distinct contexts defined. */
static void smp_last_defs(void *arg)
{
	tr_smp_objects_refresh();
	uint32_t n = __atomic_load_n(&tr_smp_nnodes, __ATOMIC_ACQUIRE);
	if (n > tr_smp_node_cap)
		n = tr_smp_node_cap;
	tr_smp_frozen = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(uint32_t *)arg = tr_smp_define_contexts(n);
}

static void smp_fini(void)
{
	if (!tr_smp_nodes)
		return;
	tr_smp_check_owner();
	int was = tr_smp_enabled;
	tr_smp_enabled = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	tr_smp_src_process(0);
	/* Stop every thread still sampling; the calling thread writes its queue. */
	tr_smp_list_lock_take();
	for (struct smp_thread *s = tr_smp_threads; s; s = s->next)
		if (s->active)
			tr_smp_thread_stop(s, s == tr_smp_tls);
	tr_smp_list_lock_drop();
	/* In a descriptor table of the tracer's own (tr_fd_private_call): libdw's
	 * descriptors never take a number in the program's. */
	uint32_t ndef = 0;
	tr_fd_private_call(smp_last_defs, &ndef);

	uint64_t tot[SMP_NTOT] = { 0 };
	uint32_t nthr = 0;
	tr_smp_list_lock_take();
	for (struct smp_thread *s = tr_smp_threads; s; s = s->next) {
		if (s->forked_away)
			continue;
		tr_smp_res_add(s);
		tr_smp_res_define(s);   /* (the registry lock is never held around the list lock) */
		tr_smp_totals_add(tot, s);
		nthr++;
	}
	tr_smp_list_lock_drop();
	if (tr_smp_nfd_taken)
		tr_log_warn("sampling: the program closed the perf event descriptors of %u threads (e.g. close_range); "
			    "they were not sampled from then on", tr_smp_nfd_taken);
	for (int i = 0; i < SMP_NTOT; i++)
		tot[i] += tr_smp_tot[i];
	nthr += tr_smp_nthreads;
	/* median handler time: the mean is dominated by rare preemptions */
	uint64_t hns = 0, p10 = 0, seen = 0;
	for (unsigned i = 0; i < SMP_HIST && tot[8]; i++) {
		seen += tr_smp_hist_all[i];
		if (!p10 && seen * 10 >= tot[8])
			p10 = tr_ticks_to_ns(tr_smp_hist_value(i));
		if (seen * 2 >= tot[8]) {
			hns = tr_ticks_to_ns(tr_smp_hist_value(i));
			break;
		}
	}
	char rate[400] = "";
	smp_rate_report(rate, sizeof(rate));
	if ((was || tot[0]) && !tr_smp_callers_only) {
		/* MPI: one line for the run, from rank 0 (every rank's figures
		 * are in the archive: SAMPLING:: location properties) */
		int mpi = tr_proc.rank >= 0;
		char who[48] = "";
		if (mpi)
			snprintf(who, sizeof(who), "MPI rank %d: ", tr_proc.rank);
		void (*log)(const char *, ...) = !mpi || tr_proc.rank == 0 ? tr_log_info : tr_log_debug;
		log("sampling: %s%llu samples on %u threads (%llu deferred, %llu lost, %llu truncated, "
		    "%u calling contexts%s%s; median %llu.%02llu us per sample in the handler)%s",
		    who, (unsigned long long)tot[0], nthr, (unsigned long long)tot[1], (unsigned long long)tot[2],
		    (unsigned long long)tot[3], ndef, tot[4] ? ", tree full" : "", rate, (unsigned long long)(hns / 1000),
		    (unsigned long long)(hns % 1000 / 10),
		    mpi && tr_proc.size > 1 ? "; every rank's figures per location in the archive" : "");
	}
	if (tot[5])
		tr_log_debug("sampling: %llu SIGPROF not from our timers ignored", (unsigned long long)tot[5]);
	if (tot[2])
		tr_log_debug("sampling: lost: %llu while the thread ran libunwind, %llu while not recording, %llu "
			     "with the queue full", (unsigned long long)tot[10], (unsigned long long)tot[11],
			     (unsigned long long)tot[12]);
	if (tot[8])
		tr_log_debug("sampling: per sample in the handler: fastest decile %llu ns, mean %llu ns, "
			     "mean in the stack walk %llu ns; %llu stacks walked from the unwind tables, %llu by "
			     "libunwind; %llu samples in code without unwind information kept their pc alone",
			     (unsigned long long)p10, (unsigned long long)(tr_ticks_to_ns(tot[7]) / tot[8]),
			     (unsigned long long)(tr_ticks_to_ns(tot[9]) / tot[8]), (unsigned long long)tot[14],
			     (unsigned long long)(tot[0] > tot[14] + tot[13] ? tot[0] - tot[14] - tot[13] : 0),
			     (unsigned long long)tot[13]);
	if (tr_smp_cfg.unwind == TR_SMP_UNWIND_CHECK && (was || tot[0]))
		tr_log_info("sampling: unwind check: %llu of %llu stacks walked from the unwind tables differ from "
			    "libunwind's%s", (unsigned long long)tot[15], (unsigned long long)tot[14],
			    tot[15] ? " (the first below)" : "");
	if (tr_smp_cfg.unwind == TR_SMP_UNWIND_CHECK && tot[15])
		tr_log_info("sampling: unwind check: first difference at frame %llu of %llu (libunwind %llu): "
			    "%#llx, libunwind %#llx", (unsigned long long)tr_smp_diff[0],
			    (unsigned long long)tr_smp_diff[1], (unsigned long long)tr_smp_diff[2],
			    (unsigned long long)tr_smp_diff[3], (unsigned long long)tr_smp_diff[4]);
	if (tot[6])
		tr_log_warn("sampling: %llu sample records could not be written", (unsigned long long)tot[6]);
}

static void smp_fork_child(void)
{
	if (!tr_smp_enabled)
		return;
	/* Timers are not inherited; other threads do not exist in the child.
	 * One of them may have held the list lock at fork time: it never
	 * releases it here, so reset the lock before taking it. */
	atomic_flag_clear_explicit(&tr_smp_list_lock, memory_order_release);
	tr_smp_list_lock_take();
	struct smp_thread *mine = tr_smp_tls;
	for (struct smp_thread *s = tr_smp_threads; s; s = s->next) {
		tr_smp_src_forget(&s->src);
		if (s != mine) {
			s->active = 0;
			s->forked_away = 1;
		}
	}
	tr_smp_list_lock_drop();
	/* the child reports its own samples */
	memset(tr_smp_tot, 0, sizeof(tr_smp_tot));
	memset(tr_smp_hist_all, 0, sizeof(tr_smp_hist_all));
	tr_smp_nthreads = 0;
	tr_smp_nres = 0;
	tr_smp_nfd_taken = 0;
	if (mine) {
		mine->qhead = mine->qtail;
		mine->samples = mine->deferred = mine->lost = mine->truncated = 0;
		mine->full = mine->foreign = mine->errors = 0;
		mine->lost_unw = mine->lost_off = mine->lost_full = 0;
		mine->hticks = mine->hcalls = mine->uticks = 0;
		mine->nounwind = mine->cfi = mine->cfi_diff = 0;
		mine->gap_lo = mine->gap_hi = 0;
		memset(mine->hist, 0, sizeof(mine->hist));
		mine->cpu_ns = 0;
		tr_smp_timer_start(mine);
	}
	tr_smp_src_process(1);
	tr_smp_objects_fork_child();
}

static struct tr_module smp_module;

/* Crash path: CallingContextLeave for the thread's open regions (the
 * core leaves closing them to this writer). Async-signal-safe: no node is
 * created (regions beyond SMP_MAX_REGIONS stay open). */
static void smp_thread_fini_crash(struct tr_thread *t)
{
	struct smp_thread *s = t->sampling;
	if (!s || !t->w || tr_thread_closed(t) || s->busy || s->in_handler || !smp_module.write_enter)
		return;
	uint64_t now = tr_smp_clamp_time(t->w, tr_time());
	uint32_t k = s->nreg < SMP_MAX_REGIONS ? s->nreg : SMP_MAX_REGIONS;
	while (k > 0) {
		k--;
		if (s->reg[k].node != SMP_UNDEF)
			otf2w_evt_calling_context_leave(t->w, NULL, now, s->reg[k].node);
	}
	s->nreg = 0;
}

/* Crash path: CallingContext definitions for every node (the events refer
 * to them) without symbol resolution (it allocates): a node of an
 * instrumented region keeps its region, every other node gets one Region
 * "[unresolved: archive written at a crash]". Async-signal-safe. */
static void smp_fini_crash(otf2w_gdef_writer *g)
{
	if (!tr_smp_nodes)
		return;
	uint32_t n = __atomic_load_n(&tr_smp_nnodes, __ATOMIC_ACQUIRE);
	if (n > tr_smp_node_cap)
		n = tr_smp_node_cap;
	uint32_t have = tr_defs_count(TR_DEF_CALLING_CONTEXT);   /* defined by smp_fini already */
	if (have >= n)
		return;
	uint32_t sid = tr_defs_count(TR_DEF_STRING);
	uint32_t rid = tr_defs_count(TR_DEF_REGION);
	otf2w_gdef_string(g, sid, "[unresolved: archive written at a crash]");
	otf2w_gdef_region(g, rid, sid, sid, sid, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_SAMPLING,
			  OTF2W_REGION_FLAG_NONE, sid, 0, 0);
	for (uint32_t i = have; i < n; i++) {
		const struct smp_node *nd = &tr_smp_nodes[i];
		uint32_t r = (nd->key & SMP_KEY_REGION) ? (uint32_t)(nd->key & 0xffffffffu) : rid;
		uint32_t parent = nd->parent < i ? nd->parent : SMP_UNDEF;
		otf2w_gdef_calling_context(g, i, r, SMP_UNDEF, parent);
	}
}

/* ---- TRACER_DURABLE ------------------------------------------------------------------
 * A tick never reads symbols: its snapshot names each context not defined
 * yet by a placeholder (snapshot.c), its object file and address, which
 * `tracer recover` reads the symbols of (after the kill, as perf report
 * does). A normal end defines every context with its symbols (smp_fini). */

/* TRACER_DURABLE snapshot (the ticking thread, registry held): the
 * contexts so far, as placeholders (the new ones made now); none once
 * they are defined with their symbols. */
static void smp_durable_snapshot(void)
{
	if (tr_smp_nodes && !tr_smp_frozen)
		tr_smp_snapshot_defs();
	else
		tr_defs_tail_clear();
}

/* TRACER_DURABLE: nodes made since the last snapshot (a sample or region
 * recorded since may refer to them). Async-signal-safe. */
static int smp_durable_pending(void)
{
	if (!tr_smp_nodes || tr_smp_frozen)
		return 0;
	uint32_t n = __atomic_load_n(&tr_smp_nnodes, __ATOMIC_ACQUIRE);
	if (n > tr_smp_node_cap)
		n = tr_smp_node_cap;
	return n > __atomic_load_n(&tr_smp_snap_nodes, __ATOMIC_ACQUIRE);
}

/* The thread's end begins (its start routine returned or it called
 * pthread_exit; the master before ProgramEnd): its sampling stops and what
 * it queued is written now, before the ThreadEnd or ProgramEnd (a sample
 * queued inside the tracer's end work would otherwise follow it:
 * pthread.exitsampling, CI8). Own thread only (the core calls it so). */
static void smp_thread_ending(struct tr_thread *t)
{
	struct smp_thread *s = t->sampling;
	if (s && s == tr_smp_tls && s->active)
		tr_smp_thread_stop(s, 1);
}

/* The timer restarts in a fork child at once: its archive is made then. */
static int smp_fork_records(void)
{
	return tr_smp_cfg.period_ns != 0;
}

static struct tr_module smp_module = {
	.name = "sampling",
	.thread_ending = smp_thread_ending,
	.init = smp_init,
	.thread_init = tr_smp_thread_init,
	.thread_fini = tr_smp_thread_fini,
	.fini = smp_fini,
	.fork_child = smp_fork_child,
	.thread_fini_crash = smp_thread_fini_crash,
	.fini_crash = smp_fini_crash,
	.on_sigaction = smp_on_sigaction,
	.durable_snapshot = smp_durable_snapshot,
	.durable_pending = smp_durable_pending,
	.fork_records = smp_fork_records,
};

__attribute__((constructor(210))) static void smp_register(void)
{
	/* The calling-context record override only when sampling is asked for:
	 * tr_smp_cfg is parsed by settings.c's constructor (priority 150). */
	if (tr_smp_cfg.period_ns || tr_smp_cfg.callers) {
		smp_module.write_enter = tr_smp_write_enter;
		smp_module.write_leave = tr_smp_write_leave;
	}
	tr_module_register(&smp_module);
	tr_smp_metrics_register();
}
