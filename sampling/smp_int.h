/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_int.h - internals shared by the files of sampling/ (never included
 * outside sampling/).
 *
 * sampling/ has two modules:
 *   "sampling"  SIGPROF sampler on per-thread perf events (task-clock or a
 *               hardware counter; CPU-time timers as the fallback:
 *               source.c), a calling context tree per thread (ids global),
 *               CallingContextSample / CallingContextEnter /
 *               CallingContextLeave records, symbol resolution at
 *               shut-down (sampler.c, symbols.c).
 *   "metrics"   PAPI and getrusage counters recorded as Metric events at
 *               every region enter/leave (metrics.c).
 */
#ifndef SMP_INT_H
#define SMP_INT_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/time.h>
#include "tracer.h"

/* ---- settings (settings.c: sampling/'s TRACER_* table) ---------------------- */
enum tr_smp_event { TR_SMP_EVENT_TIME = 0, TR_SMP_EVENT_CYCLES, TR_SMP_EVENT_INSTRUCTIONS };
/* the stack walk: the unwind tables with libunwind where they do not
 * suffice (unwind.c), libunwind alone, or both compared */
enum tr_smp_unwind { TR_SMP_UNWIND_CFI = 0, TR_SMP_UNWIND_LIBUNWIND, TR_SMP_UNWIND_CHECK };
struct tr_smp_config {
	uint64_t period_ns;   /* TRACER_SAMPLING (0 = off); events for cycles@N */
	uint32_t event;       /* TR_SMP_EVENT_*: TRACER_SAMPLING=cycles@N, instructions@N */
	uint32_t depth;       /* TRACER_SAMPLING_DEPTH (default 64) */
	uint32_t unwind;      /* TRACER_SAMPLING_UNWIND: TR_SMP_UNWIND_* (default cfi) */
	int callers;          /* TRACER_CALLERS (default 0): calling contexts of the traced calls */
	char metrics[1024];   /* TRACER_METRICS ("" = none) */
};
/* Parsed when settings.c's constructor (priority 150) registers the table:
 * before the modules' constructors read it. */
extern struct tr_smp_config tr_smp_cfg;

/* ---- calling-context nodes ----------------------------------------------------
 *
 * A node is (parent, key). Its index in the global node array is the id of
 * the CallingContext definition made for it at shut-down, and the id the
 * events carry. Keys:
 *   ip                 exact interrupted pc (leaf of a sample)
 *   ip | SMP_KEY_RET   return address (caller frames; resolved at ip - 1)
 *   SMP_KEY_REGION|r   an instrumented region (tr_enter) with region id r
 *   SMP_KEY_TRUNC      "[truncated]": the stack was deeper than the limit
 *   SMP_KEY_TRACER     "[tracer]": frames inside libtracer.so itself
 */
#define SMP_UNDEF        0xffffffffu
#define SMP_KEY_RET      (1ull << 62)
#define SMP_KEY_REGION   (1ull << 61)
#define SMP_KEY_PSEUDO   (1ull << 60)
#define SMP_KEY_TRUNC    (SMP_KEY_PSEUDO | 1)
#define SMP_KEY_TRACER   (SMP_KEY_PSEUDO | 2)
#define SMP_KEY_ADDR(k)  ((k) & ((1ull << 60) - 1))

struct smp_node {
	uint64_t key;
	uint32_t parent;     /* SMP_UNDEF for roots */
	uint16_t depth;      /* 1 for roots (saturates); 0: not complete yet */
	uint16_t gen;        /* object-table generation when created */
};

extern struct smp_node *tr_smp_nodes;
extern uint32_t tr_smp_nnodes;      /* atomic: nodes handed out */
extern uint32_t tr_smp_node_cap;

/* ---- loaded objects (symbols.c) ------------------------------------------------ */

/* Generation of the object table; bumped when a refresh sees a change. */
extern volatile uint32_t tr_smp_obj_gen;
/* Text range of libtracer.so itself (frames there are the tracer's). */
extern uintptr_t tr_smp_self_lo, tr_smp_self_hi;

void tr_smp_objects_init(void);          /* init: own range + first snapshot */
void tr_smp_objects_refresh(void);       /* thread context, not in a handler */
/* The unwind table of the live object containing pc (symbols.c; async-
 * signal-safe): -1 when pc is in no known object or it has none. */
struct tr_smp_eh {
	uintptr_t hdr, table;   /* .eh_frame_hdr, its search table of count entries */
	uintptr_t lo, hi;       /* the object's mapped range */
	uint32_t count;
};
int tr_smp_obj_eh(uintptr_t pc, struct tr_smp_eh *out);
/* Around reading an object's .eh_frame_hdr in a handler: -1 while a
 * dlclose unloads (then read nothing); async-signal-safe, never waits. */
int tr_smp_eh_begin(void);
void tr_smp_eh_end(void);
/* ehgap.c: the search table of the .eh_frame_hdr at hdr (when in the
 * layout ehgap.c reads: 0), and the stretch [*lo, *hi) around pc that no
 * FDE covers (0), -1 when pc is covered or nothing is known (async-
 * signal-safe). */
int tr_smp_eh_table(uintptr_t hdr, uintptr_t *table, uint32_t *count);
int tr_smp_eh_gap(uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
/* The search table of o: how many entries start at or below pc (0: none),
 * and (fde not NULL, the count > 0) the FDE of the last of them. */
uint32_t tr_smp_eh_upper(const struct tr_smp_eh *o, uintptr_t pc, uintptr_t *fde);
/* Resolve every node and define Region, SourceCodeLocation and
 * CallingContext definitions (without MPI one per distinct (region, source
 * location, parent), with a node -> id mapping table; with MPI ids = node
 * indices). n = node count. */
/* Returns the distinct contexts defined. Once, at the end, in a descriptor
 * table of our own (libdw's sessions end before it returns). */
uint32_t tr_smp_define_contexts(uint32_t n);
/* For the snapshots: the object of a node's address (its index or
 * UINT32_MAX; the address in its file, its name and path or NULL), and the
 * nodes defined with symbols so far with their map (without MPI). Async-
 * signal-safe. */
uint32_t tr_smp_obj_at(uint64_t a, uint32_t gen, uint64_t *off, const char **name, const char **path);
uint32_t tr_smp_defined(const uint32_t **map);
/* snapshot.c: TRACER_DURABLE snapshot (the ticking thread, registry held):
 * placeholder contexts of the nodes not defined yet, each made once and
 * kept in the registry's snapshot tail. Async-signal-safe. */
void tr_smp_snapshot_defs(void);
extern uint32_t tr_smp_snap_nodes;   /* the nodes the last snapshot defined */
void tr_smp_objects_fork_child(void);

/* ---- metrics (metrics.c) ------------------------------------------------------- */

/* 1 when metrics are recorded with samples (only async-signal-safe sources,
 * i.e. rusage:: metrics without PAPI ones). */
extern int tr_smp_met_with_samples;
/* Write the Metric record of thread t at time (handler-safe when
 * tr_smp_met_with_samples). */
void tr_smp_met_record(struct tr_thread *t, uint64_t time);
void tr_smp_metrics_register(void);

/* ---- sample sources (source.c) -------------------------------------------------- */

enum smp_mode { SMP_MODE_OFF = 0, SMP_MODE_PERF, SMP_MODE_TIMER, SMP_MODE_ITIMER };

struct smp_src {
	int fd;              /* perf event, -1: none */
	int ok;              /* started */
	uint64_t id;         /* PERF_EVENT_IOC_ID of the event */
	uint64_t dev, ino;   /* its (anonymous) inode */
	void *timer;         /* timer_t of the fallback */
};

extern int tr_smp_mode;               /* enum smp_mode */
extern int tr_smp_marker;             /* sigev_value of our CPU-time timers */
extern uint64_t tr_smp_period;        /* ns of CPU time, or events */

/* Choose the source for `period` (ns) or hardware `event` (TR_SMP_EVENT_*,
 * period in events) and define the InterruptGenerator (*ig). Prints the
 * line of a fallback. -1: sampling off (line printed). The SIGPROF handler
 * must be installed (the fallback measures the timer rate). */
int tr_smp_src_setup(uint64_t period, uint32_t event, uint32_t *ig);
int tr_smp_src_start(struct smp_src *src);     /* calling thread; 0 or errno */
int tr_smp_src_stop(struct smp_src *src);      /* any thread; 1: fd taken by the program */
int tr_smp_src_valid(const struct smp_src *src);
void tr_smp_src_forget(struct smp_src *src);   /* fork child */
void tr_smp_src_process(int on);               /* setitimer fallback on/off */
uint64_t tr_smp_thread_cpu_ns(int tid);        /* CPU time of a thread of this process */
int tr_smp_real_setitimer(int which, const struct itimerval *v, struct itimerval *o);

/* Is this SIGPROF from thread source src? (handler, hot) */
static inline int tr_smp_src_match(const struct smp_src *src, const siginfo_t *si)
{
	if (tr_smp_mode == SMP_MODE_PERF)
		return si && si->si_code == POLL_IN && si->si_fd == src->fd;
	if (tr_smp_mode == SMP_MODE_TIMER)
		return si && si->si_code == SI_TIMER && si->si_value.sival_ptr == &tr_smp_marker;
	return 1;
}

/* ---- sampler (sampler.c) --------------------------------------------------------- */

/* Stop our sampling for good (program installed its own SIGPROF machinery):
 * deletes every timer; prints one tracer: line naming what. Thread context. */
void tr_smp_yield_sigprof(const char *what);
/* Write the samples queued before `time` (thread context). */
void tr_smp_drain_before(struct tr_thread *t, uint64_t time);
extern volatile int tr_smp_enabled;
/* TRACER_CALLERS without TRACER_SAMPLING: the calling contexts of the
 * traced calls only (write_enter unwinds), no SIGPROF, no timers */
extern int tr_smp_callers_only;
/* 1 while the calling thread runs the tracer (guard held) or the sampler's
 * handler or libunwind for it. Async-signal-safe. */
int tr_smp_in_tracer(void);

#endif /* SMP_INT_H */
