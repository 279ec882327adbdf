/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_sampler.h - the sampler's own state, shared by its files:
 * sampler.c (records, the SIGPROF handler and its queue, timers,
 * per-thread state), cctree.c (the calling-context tree, calling-context
 * enter/leave) and
 * sampler_module.c (SIGPROF ownership, the module: init, exit line, fork,
 * crash path). Never included elsewhere (smp_int.h is the sampling/ API).
 */
#ifndef TR_SMP_SAMPLER_H
#define TR_SMP_SAMPLER_H

#include <signal.h>
#include <stdatomic.h>
#include "smp_int.h"

#define SMP_QN          128           /* deferred samples per thread (lazily backed) */
#define SMP_HASH_BITS   17            /* per-thread (parent, key) -> node table */
#define SMP_MAX_REGIONS 256           /* open instrumented regions tracked */
#define SMP_EXTRA       24            /* unwind slots for handler/tracer frames */
#define SMP_NODE_CAP    (1u << 22)    /* global node array (lazily backed) */
#define SMP_HIST        (64 * 8)
#define SMP_UWC_SETS    512           /* unwind-rule cache: sets of 4 (unwind.c) */
/* handler path: grouped in .text.hot (fewer code pages per sample) */
#define SMP_HOT         __attribute__((hot))

struct smp_region {
	uint32_t node;       /* CallingContext of the region */
	uint32_t region;     /* region id */
	uint32_t depth;      /* program frames root..caller at enter (0: unknown) */
	uint32_t pad;
	uint64_t caller;     /* key of the caller frame at enter */
};

struct smp_pending {
	uint64_t time;
	uint32_t n;          /* frames (leaf first, leaf = interrupted pc) */
	uint32_t trunc;
	void *ip[];          /* maxdepth entries */
};

/* One cached unwind rule (unwind.c): address, kind, CFA and caller's rbp. */
struct smp_uw_ent {
	uint64_t key;
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t kind;
	uint8_t cfa_rbp : 1, rbp_kind : 2;
};

#define SMP_UW_PREV 128              /* frames of the previous walk kept (prefetch) */
struct smp_uw_prev {
	uintptr_t slot;      /* its return address's stack slot */
	uint32_t set, pad;   /* its rule's cache set */
};

struct smp_thread {
	struct tr_thread *t;
	volatile int active;          /* handler may use this state */
	volatile int in_handler;      /* handler running (cross-thread fini waits) */
	volatile int busy;            /* thread changes its tree / writes CC records */
	volatile int unwinding;       /* thread inside libunwind */
	struct smp_src src;           /* where its SIGPROF come from (source.c) */
	int tid;
	int fd_taken;                 /* the program closed our perf descriptor */
	int forked_away;              /* fork child: a thread of the parent */
	uint64_t cpu0, cpu_ns;        /* thread CPU time at start; used while sampled */
	uint32_t maxdepth;
	uint32_t cur;                 /* node of the previous calling-context event */
	int cur_is_sample;            /* ... and it was the cached sample */
	/* path cache of the last sample: keys and nodes of frames start.. */
	uint64_t *ckey;
	uint32_t *cnode;
	uint8_t *cflag;
	uint32_t cn, cbase, cstart;
	uint32_t nreg;                /* open regions (may exceed SMP_MAX_REGIONS) */
	struct smp_region *reg;       /* SMP_MAX_REGIONS entries */
	uint32_t *hash;               /* node index + 1, 0 = empty */
	uint32_t hused, hlimit;
	volatile uint32_t qhead;      /* consumer index (thread or writing handler) */
	volatile uint32_t qtail;      /* producer index (handler) */
	size_t qslot;                 /* bytes per queue slot */
	uint8_t *q;
	void **sigbuf;                /* unwind buffer of the handler (libunwind) */
	void **cfibuf;                /* ... of unwind.c's walk */
	void **thrbuf;                /* unwind buffer of the thread (enter) */
	uint32_t bufcap;
	size_t map_len;
	/* code without unwind information where libunwind failed last
	 * (ehgap.c): the next samples there keep the pc alone at once */
	uintptr_t gap_lo, gap_hi;
	uint32_t gap_skips;
	/* unwind.c: the rule cache and the thread's stack */
	struct smp_uw_ent *uwc;       /* SMP_UWC_SETS * 4 entries */
	uint32_t uwc_victim, uwc_gen;
	uint32_t uw_nprev;
	struct smp_uw_prev uw_prev[SMP_UW_PREV];
	uintptr_t stack_lo, stack_hi;
	/* statistics */
	uint64_t samples, deferred, lost, truncated, full, foreign, errors;
	uint64_t lost_unw, lost_off, lost_full;   /* lost: in libunwind, not recording, queue full */
	uint64_t hticks, hcalls;      /* time spent in the handler (unwind + record) */
	uint64_t uticks;              /* of which in unw_backtrace */
	uint64_t nounwind;            /* samples in such code, libunwind not asked */
	uint64_t cfi, cfi_diff;       /* stacks walked by unwind.c; of them unlike libunwind's (check) */
	uint32_t hist[SMP_HIST];      /* handler durations (ticks), 8 buckets per octave */
	struct smp_thread *next;      /* all states, for shut-down */
};

#define SMP_NTOT 16                   /* totals of finished threads */
#define SMP_RES_MAX 8192              /* threads in the exit line's delivery figures */
/* per-thread delivery (exit line): samples and CPU time while sampled */
struct smp_res {
	uint32_t index;
	uint64_t samples, cpu_ns;
};

extern TR_TLS struct smp_thread *tr_smp_tls;
extern uint32_t tr_smp_ig;                 /* InterruptGenerator id */
extern volatile int tr_smp_frozen;         /* no new nodes (definitions made) */
extern struct sigaction tr_smp_old_sa;
extern int tr_smp_handler_installed;
extern uint32_t tr_smp_hash_mask;
/* all thread states (list guarded by a spin flag; never touched by the handler) */
extern atomic_flag tr_smp_list_lock;
extern struct smp_thread *tr_smp_threads;
/* cctree.c: the calling-context tree (async-signal-safe: the caller owns
 * the thread's tree, in the handler or with busy set) */
static inline int smp_is_tracer(uintptr_t ip)
{
	return ip >= tr_smp_self_lo && ip < tr_smp_self_hi;
}

static inline uint32_t smp_hash(uint32_t parent, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull ^ ((uint64_t)parent + 1) * 0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 40) & tr_smp_hash_mask;
}

static inline uint32_t smp_depth(uint32_t n)
{
	return n == SMP_UNDEF ? 0 : tr_smp_nodes[n].depth;
}

static inline uint32_t smp_parent(uint32_t n)
{
	return n == SMP_UNDEF ? SMP_UNDEF : tr_smp_nodes[n].parent;
}

uint32_t tr_smp_child(struct smp_thread *s, uint32_t parent, uint64_t key);
uint32_t tr_smp_unwind_distance(uint32_t from, uint32_t to);
uint32_t tr_smp_path(struct smp_thread *s, void *const *f, uint32_t n, int exact_leaf, int trunc, uint32_t *fresh);
/* unwind.c: the stack of the interrupted context ucv, leaf (its pc) first,
 * at most cap frames, from the unwind tables; -1: ask libunwind */
int tr_smp_cfi_walk(struct smp_thread *s, const void *ucv, void **buf, uint32_t cap);
/* symbols.c: a pc in no object of the table was met (unwind.c); the
 * handler then refreshes the table if it can without waiting */
extern int tr_smp_stale;
void tr_smp_objects_refresh_try(void);
/* sampler.c: the queued samples up to limit, written first */
void tr_smp_drain(struct smp_thread *s, struct tr_thread *t, uint64_t limit);

void tr_smp_list_lock_take(void);
void tr_smp_list_lock_drop(void);
/* totals of finished threads, handler-time histogram, delivery */
extern uint64_t tr_smp_tot[SMP_NTOT];
extern uint32_t tr_smp_nthreads;
extern uint32_t tr_smp_hist_all[SMP_HIST];
extern struct smp_res tr_smp_res[SMP_RES_MAX];
extern uint32_t tr_smp_nres;
extern uint32_t tr_smp_nfd_taken;
/* TRACER_SAMPLING_UNWIND=check: the first stack unlike libunwind's (frame,
 * lengths, the two addresses there) */
extern int tr_smp_diff_seen;
extern uint64_t tr_smp_diff[5];

/* sampler.c */
void tr_smp_handler(int sig, siginfo_t *si, void *uctx);
void tr_smp_timer_start(struct smp_thread *s);
void tr_smp_timer_stop(struct smp_thread *s);
void tr_smp_thread_init(struct tr_thread *t);
void tr_smp_thread_fini(struct tr_thread *t);
void tr_smp_thread_stop(struct smp_thread *s, int own);
void tr_smp_write_enter(struct tr_thread *t, uint64_t time, uint32_t region);
void tr_smp_write_leave(struct tr_thread *t, uint64_t time, uint32_t region);
void tr_smp_res_add(struct smp_thread *s);
void tr_smp_res_define(struct smp_thread *s);
void tr_smp_totals_add(uint64_t *tot, const struct smp_thread *s);
uint64_t tr_smp_hist_value(unsigned b);
/* sampler_module.c: is our SIGPROF handler still installed (thread context)? */
void tr_smp_check_owner(void);

static inline uint64_t tr_smp_clamp_time(otf2w_evt_writer *w, uint64_t time)
{
	uint64_t last = otf2w_evt_writer_last_time(w);
	return time < last ? last : time;
}

#endif /* TR_SMP_SAMPLER_H */
