/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_int.h - internals shared by the files of preload/ (never included
 * outside preload/).
 */
#ifndef TR_INT_H
#define TR_INT_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include "tracer.h"
#include "fsutil.h"

#define TR_MAX_MODULES 16
#define TR_SHADOW_DEPTH 128
/* Event data of ended threads kept in memory until the archive is written
 * (beyond: written at thread end). */
#define TR_DEFER_TOTAL (64ull << 20)

/* ---- futex lock: no pthread call, so never traced and never interposed ---- */

struct tr_lock {
	int v;  /* 0 free, 1 locked, 2 locked with waiters */
};
#define TR_LOCK_INIT { 0 }
void tr_lock_slow(struct tr_lock *l);
void tr_unlock_slow(struct tr_lock *l);
/* Calling-thread nesting of tracer-internal critical sections (a signal
 * arriving while > 0 must not take the same locks). */
extern TR_TLS int tr_tls_internal;

/* ThreadSanitizer's __tsan_acquire/__tsan_release when it is loaded (set
 * by init.c): our locks are not instrumented, it is told of them. */
extern void (*tr_tsan_acquire)(void *), (*tr_tsan_release)(void *);

static inline void tr_lock(struct tr_lock *l)
{
	int c = 0;
	tr_tls_internal++;
	if (!__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		tr_lock_slow(l);
	if (__builtin_expect(tr_tsan_acquire != 0, 0))
		tr_tsan_acquire(l);
}

static inline int tr_trylock(struct tr_lock *l)
{
	int c = 0;
	if (__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		tr_tls_internal++;
		if (__builtin_expect(tr_tsan_acquire != 0, 0))
			tr_tsan_acquire(l);
		return 1;
	}
	return 0;
}

static inline void tr_unlock(struct tr_lock *l)
{
	if (__builtin_expect(tr_tsan_release != 0, 0))
		tr_tsan_release(l);
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		tr_unlock_slow(l);
	tr_tls_internal--;
}

/* ---- global state -------------------------------------------------------------- */

struct tr_global {
	volatile int initialized;   /* core init done (config, clock, archive prepared) */
	volatile int initializing;
	volatile int active;        /* recording (between init and shut-down) */
	volatile int finishing;     /* shut-down started */
	volatile int finished;      /* archive written (or abandoned) */
	pid_t pid;                  /* pid the state belongs to (fork/vfork detection) */

	otf2w_archive *ar;
	otf2w_gdef_writer *gdw;
	char dir[4096];             /* archive directory (absolute) */
	char shown[4096];           /* the same as given/chosen (messages) */
	char anchor[4200];          /* dir/traces.otf2 for the summary */
	int dir_final;              /* location files may be written now */
	int mpi_expected;           /* started by mpirun (rank in env) and TRACER_MPI on */
	int global_writer;          /* this process writes the global definitions */
	int unified;                /* tr_defs_install_unified done */
	int fork_child;             /* this process is a traced fork child */
	int fork_pending;           /* a fork child whose archive waits for its first traced call */
	uint64_t t_fork;            /* then: the time of the fork (its ProgramBegin) */
	int dir_from_job;           /* MPI default name from the job id: same on every rank */
	int rank_side;              /* MPI: a side process of the rank (its fork child, a process its
				     * holder started: ranks/side<r>-<pid>); 0 once it calls MPI_Init */
	int mpi_init;               /* this process called MPI_Init */
	volatile pid_t finisher;    /* tid writing the archive */

	uint64_t t_start;           /* tr_time() at init (<= every timestamp) */

	struct tr_lock lock;        /* thread list, archive life cycle */
	struct tr_thread *threads;  /* every thread that got a location (newest first) */
	struct tr_thread *master;
	uint32_t next_index;        /* atomic */
	uint64_t next_seq;          /* atomic */
	uint32_t nthreads;

	int exit_status;            /* for ProgramEnd */
	int have_exit_status;

	uint64_t errors;            /* event write errors */
	otf2w_status first_error;
	uint64_t program_name_sid;

	const struct tr_module *modules[TR_MAX_MODULES];
	int nmodules;
	int modules_started;
	const struct tr_module *writer_module;  /* write_enter/leave override */
	int nobservers;
};
extern struct tr_global tr_g;
/* tr_live (tr_thread.h) from tr_g.active and tr_g.finishing: after every
 * change of either. */
void tr_live_update(void);

/* ---- files ------------------------------------------------------------------------ */

/* mem.c: the tracer's own heap (mmap only); its entry points tr_malloc &
 * co. are declared in tr_real.h */
/* the definitions chunk size of every archive the core writes */
#define TR_DEF_CHUNK_BYTES (1u << 20)

void tr_mem_init(void);
void *tr_mem_alloc(size_t n);
int tr_mem_free(void *p);           /* 1 if p was ours */
void tr_mem_fork_prepare(void);
void tr_mem_fork_parent(void);
void tr_mem_fork_child(void);

/* log.c */
void tr_log_init(void);       /* after tr_cfg_load: where notices go */
void tr_log_parent_settle(int parent_member);   /* after the tree lookup (archive.c) */
void tr_log_write(const char *buf, size_t n);
/* notices (exit summary, info): stderr in the run's first process only,
 * else the log file (tracer-run's, or tracer.log in the archive directory) */
void tr_log_notice_write(const char *buf, size_t n);   /* async-signal-safe */
void tr_log_notice_sigsafe(const char *fmt, ...);
void tr_log_notices_to_file(void);                     /* this image is about to exec */
int tr_log_notices_on_stderr(void);

/* config.c */
void tr_cfg_load(void);
void tr_cfg_check_unknown(void);   /* once every table is registered (tr_modules_start) */
ssize_t tr_read_file(const char *path, char *buf, size_t size);
const char *tr_getenv(const char *name);

/* clock.c */
void tr_clock_init(void);
void tr_clock_final(void);   /* refine the resolution over the run so far (end, snapshots) */
uint64_t tr_clock_realtime_of(uint64_t ticks);  /* ns since epoch of a timestamp */
uint64_t tr_clock_freq(void);

/* dynsym.c: our own look-up in the start-up objects' GNU hash tables
 * (async-signal-safe; see there). any: every object but libtracer.so,
 * else those after it (RTLD_NEXT); version NULL: the default one. */
enum tr_sym_found { TR_SYM_ASK, TR_SYM_FOUND, TR_SYM_ABSENT };
void tr_sym_init(void);
enum tr_sym_found tr_sym_find(const char *name, const char *version, int any, void **out);
void tr_sym_startup_done(void);   /* the constructors ran: ABSENT is no longer certain */
/* real.c: dlsym(RTLD_DEFAULT, name) for another object's name (not ours),
 * by dynsym.c when it can answer; the end of the constructors */
void *tr_sym_default(const char *name);
void tr_real_startup_done(void);

/* real.c (also the futex lock above and allocation helpers) */
void *tr_xcalloc(size_t n, size_t sz);

/* filter.c */
void tr_filter_load(void);
void tr_filter_region_defined(uint32_t region, const char *name);
extern uint8_t tr_filter_bits[];
#define TR_FILTER_CAP (1u << 16)
static inline int tr_region_is_filtered(uint32_t r)
{
	return r < TR_FILTER_CAP && (tr_filter_bits[r >> 3] >> (r & 7)) & 1;
}
extern int tr_filter_active;

/* defs.c, defs_local.c (the registry; the process-free part: tr_defs.h) */
void tr_defs_init(void);
void tr_defs_fork_child(void);
struct tr_lock *tr_defs_lock(void);
/* Write the global definitions (ClockProperties .. Locations .. everything).
 * nolock: crash path (no lock, no malloc beyond what the writer needs). */
void tr_defs_write_global(otf2w_gdef_writer *g, int crash);
/* Mapping tables + clock offsets into a local def file of this process. */
void tr_defs_write_local_to(otf2w_def_writer *dw);
/* rank 0's exit line: ranks, locations, events of the unified run (0: none) */
int tr_defs_unified_totals(uint64_t final_events, uint32_t *nranks, uint32_t *nlocs, uint64_t *events);
void tr_defs_local_range(uint64_t *first, uint64_t *last);
uint64_t tr_defs_unified_gid(uint64_t loc);
void tr_defs_unified_widen(int32_t rank, uint64_t first, uint64_t last);
void tr_defs_write_cc_maps(otf2w_archive *a);   /* tr_def_calling_context_map, without unification */
uint32_t tr_defs_cc_mapped(void);
/* TRACER_DURABLE snapshot (the ticking thread): the registry held by the caller from
 * begin to end; definitions made in between (modules' durable_snapshot
 * hooks) are dropped at the end. tr_defs_version: bumped by changes that
 * keep the counts (calling-context map), provisional ones excepted. */
void tr_defs_provisional_begin(void);
void tr_defs_provisional_end(void);
/* defs_tail.c: the snapshot tail (tr_registry.h) placed after the
 * registry's own definitions, after the modules' durable_snapshot;
 * tr_defs_provisional_end takes it out again. 0, -1: no memory. */
int tr_defs_tail_splice(void);
uint64_t tr_defs_version(void);   /* nodes in that map so far (durable.c: snapshot when it grew) */
uint64_t tr_defs_generation(void);   /* every registry change so far (lock-free read) */
/* 1: definitions were made after the set was packed for the MPI
 * unification (after MPI_Finalize): the unified set lacks them */
int tr_defs_late(void);
void tr_defs_write_unified(otf2w_gdef_writer *g, void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *),
			   void *ud);
void tr_defs_process_renamed(void);
/* MPI ranks: the packed local definitions into a file (rank<r>.tdefs, for
 * tools/tracer-merge); crash: no lock, no malloc (the arena prepared by
 * tr_defs_arena_init). */
void tr_defs_arena_init(void);
int tr_defs_save(const char *path, int crash);
/* The same handed to put in one call (its result returned). */
int tr_defs_save_with(int crash, int (*put)(const void *buf, size_t n, void *ud), void *ud);
uint32_t tr_defs_count(int cls);

/* thread.c */
struct tr_thread *tr_thread_create_current(int master, uint32_t index);
void tr_threads_stop_all(struct tr_thread *self, int may_lock);
void tr_threads_fork_child(void);
uint64_t tr_threads_count_events(uint64_t *dropped);
void tr_thread_close_open_regions(struct tr_thread *t, uint64_t time);
void tr_thread_ending_crash(struct tr_thread *t);   /* ON_FULL=stop, crash path */
extern TR_TLS int tr_tls_creating;

/* archive.c */
int tr_archive_prepare(void);      /* decide the directory, open the archive object */
int tr_archive_open(void);
int tr_archive_fork_child(int defer);
void tr_archive_fork_open(void);
void tr_emergency(int sig);         /* crash path */
void tr_emergency_exit(int status, const char *why);   /* sanitizer death */
void tr_crash_stack_init(void);     /* crash_stack.c: the crash path's own stack */
void tr_crash_stack_run(void (*fn)(void *), void *arg);
int tr_error_note(otf2w_status s);  /* count an error; 1 for the first */
void tr_archive_unified_installed(void);   /* write this rank's mapping tables */
/* archive_end.c: the part's packed definitions (NAME.tdefs) after all, when
 * the end let them wait (tr_tree_lone_root: a root that was not alone). */
void tr_ar_save_tdefs(void);
/* 1: the part's packed definitions are its own file NAME.tdefs (an MPI
 * rank, a tree part that saved them at a durability tick), 0: records of
 * DIR/procs/parts.tdefs (preload/tree/tree_files.h) */
int tr_ar_tdefs_in_own_file(void);
/* archive.c (also durable.c): 1: this process writes a part of a process
 * tree other than its root (events in procs/parts/, packed definitions in
 * parts.tdefs or its own proc<N>.tdefs: otf2w_archive_set_events_only) */
int tr_ar_tree_part(void);

/* fdtable.c (tr_fd_private_run: tr_thread.h) */
void tr_fd_fork_child(void);   /* the kept stack is free in a fork child */
void tr_fd_shared_clone(void); /* a raw clone shares the descriptor table */
/* init.c: fork's three steps (pthread_atfork), also around a fork-like
 * raw clone system call (sandbox.c). */
void tr_atfork_prepare(void);
void tr_atfork_parent(void);
void tr_atfork_child(void);
/* A fork child's archive that waited for its first traced call (or its
 * end): made now. 1 when the process is traced. */
int tr_fork_complete(void);
extern TR_TLS int tr_fd_private;   /* 1 inside such a call (in the child too) */
/* The process's pid, also inside that child (whose getpid() is its own):
 * every pid the tracer records or compares comes from here. */
pid_t tr_self_pid(void);

/* durable.c: TRACER_DURABLE (index of committed positions, definitions
 * snapshot for `tracer recover`) */
void tr_durable_open(void);          /* after the archive object exists */
void tr_durable_stop(void);          /* before the archive is closed */
void tr_durable_cleanup(int crash);  /* the archive is written: drop the recovery files */
int tr_durable_on(void);
uint64_t tr_durable_due(uint64_t now);   /* event writers' due callback: the tick on program threads */

/* archive.c */
void tr_archive_own_path(char *out, size_t n, const char *suffix);
int tr_archive_save_tdefs(void);   /* MPI rank: rank<r>.tdefs now (durable tick) */

/* init.c */
void tr_init(void);
/* The constructors of libtracer.so (ctor.c): the first one's arguments,
 * then after every module registered (the last one). */
void tr_init_ctor(int argc, char **argv);
void tr_init_modules(void);
/* A program linking the core's objects without ctor.c (the white-box
 * tests): the memory and the real functions, and later tr_init calls
 * start nothing. */
void tr_init_tool(void);

/* events.c: the modules (struct tr_module, tracer.h) */
void tr_modules_start(void);    /* after every constructor registered its module */
void tr_modules_thread_init(struct tr_thread *t);
int tr_modules_fork_records(void);   /* a module records in a fork child at once */
void tr_modules_thread_fini(struct tr_thread *t);
void tr_modules_thread_ending(struct tr_thread *t);   /* tr_thread_ending, own thread */
void tr_modules_fork_child(void);
void tr_modules_sigaction(int sig, const void *act);   /* the program installs a handler */

/* signals.c */
void tr_signals_init(void);
void tr_signals_fork_child(void);
void tr_signals_block(sigset_t *old);
void tr_signals_restore(const sigset_t *old);

#endif /* TR_INT_H */
