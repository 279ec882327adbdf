/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_module.h - user-level tasks and the modules' hooks (struct tr_module:
 * sampling, metrics, Argobots, MPI): part of tracer.h.
 */
#ifndef TR_MODULE_H
#define TR_MODULE_H

#include "tr_event.h"

/* ---- user-level tasks (preload/core/task.c) -------------------------------------------
 * A task (an Argobots work unit) runs on one thread at a time and may move
 * to another with regions open. It owns the regions opened while it runs:
 * its user region stack (VT_begin/VT_end: wrappers/vt uses the running
 * task's stack instead of the thread's) and the core's shadow-stack entries
 * above the depth it started at, which tr_task_detach/tr_task_attach move
 * out of and back onto the thread. Owner thread only, never on a hot path.
 */
#define TR_TASK_REGIONS 64
struct tr_region_frame {
	uint32_t region;       /* region id */
	uint8_t recorded;      /* an Enter was written (recording was on) */
};
struct tr_region_stack {
	uint32_t depth;
	struct tr_region_frame f[TR_TASK_REGIONS];
};
struct tr_task {
	struct tr_region_stack user;    /* regions of VT_begin/VT_end */
	uint32_t base;                  /* thread's shadow depth when it started running */
	uint32_t nshadow;               /* shadow regions saved while it does not run */
	uint32_t shadow[TR_TASK_REGIONS];
};
/* A new (or revived) task: nothing open. */
void tr_task_reset(struct tr_task *task);
/* The task running on t, NULL when the thread runs its own code. */
struct tr_task *tr_task_current(const struct tr_thread *t);
void tr_task_set_current(struct tr_thread *t, struct tr_task *task);
/* task starts running on t: its saved shadow regions go back on t's stack. */
void tr_task_attach(struct tr_thread *t, struct tr_task *task);
/* task stops running on t: its shadow regions are taken off t's stack. */
void tr_task_detach(struct tr_thread *t, struct tr_task *task);
/* task ends on t: Leave what it left open at `time`, user regions first. */
void tr_task_close(struct tr_thread *t, struct tr_task *task, uint64_t time);
/* Leave every region still open on s at `time` on t, innermost first. */
void tr_region_stack_unwind(struct tr_thread *t, struct tr_region_stack *s, uint64_t time);

/* ---- module hooks (sampling, metrics, argobots, MPI) ---------------------------------- */

struct tr_module {
	const char *name;
	/* After configuration, before main (may allocate, read tr_cfg). */
	void (*init)(void);
	/* In the new thread, after its location exists, before its first event. */
	void (*thread_init)(struct tr_thread *t);
	/* In the thread (or at exit for threads still running), before its writer closes. */
	void (*thread_fini)(struct tr_thread *t);
	/* At shut-down before the definitions are written: add definitions. */
	void (*fini)(void);
	/* In the child after fork. */
	void (*fork_child)(void);
	/* Observers on every recorded region enter/leave (metrics). May be NULL. */
	void (*on_enter)(struct tr_thread *t, uint64_t time, uint32_t region);
	void (*on_leave)(struct tr_thread *t, uint64_t time, uint32_t region);
	/* Override of how enter/leave are written (calling-context mode). At most
	 * one module may set these; NULL: Enter/Leave records. */
	void (*write_enter)(struct tr_thread *t, uint64_t time, uint32_t region);
	void (*write_leave)(struct tr_thread *t, uint64_t time, uint32_t region);
	/* "Sample now" (VT_wakeup, via tr_wakeup): record what the module
	 * records periodically (metrics) at `time` on t. May be NULL. Called on
	 * the thread t with the guard held and in_record set, like on_enter.
	 * (appended last: positional initializers stay valid) */
	void (*wakeup)(struct tr_thread *t, uint64_t time);
	/* Crash path (emergency archive: abort, SIGSEGV, a signal inside libc):
	 * async-signal-safe, no lock, no malloc; every other thread is stopped.
	 * thread_fini_crash: the thread's last records (before ProgramEnd on the
	 * master); t is stopped and not inside a record. fini_crash: the
	 * definitions the events need, written straight to g after the
	 * registry's (new ids from tr_defs_count). May be NULL. */
	void (*thread_fini_crash)(struct tr_thread *t);
	void (*fini_crash)(otf2w_gdef_writer *g);
	/* The program installs a handler for signal sig (act: its struct
	 * sigaction; signal()/sigaction() are interposed by preload/), called
	 * before it is installed. Only for handlers, not SIG_IGN/SIG_DFL; at
	 * present only for SIGPROF (the sampler hands SIGPROF over). May be NULL. */
	void (*on_sigaction)(int sig, const void *act);
	/* TRACER_DURABLE: 1 when the module's records so far may refer to
	 * something its last durable_snapshot did not define (the sampler's
	 * new calling contexts): a thread that is about to wait then ticks
	 * instead of publishing its position alone. Async-signal-safe, quick.
	 * May be NULL. */
	int (*durable_pending)(void);
	/* On the thread t itself, right before the layer that owns the thread
	 * writes its last records (wrappers/pthread: the ThreadEnd, through
	 * tr_thread_ending): close what the module keeps open on the location
	 * (wrappers/openmp: the team a libgomp worker still waits to end), so
	 * that ThreadEnd stays the last record. Guard held; called again (and
	 * then a no-op) before thread_fini. May be NULL. */
	void (*thread_ending)(struct tr_thread *t);
	/* TRACER_DURABLE, every tick on the ticking thread (perhaps in the
	 * sampler's SIGPROF handler), with the registry held for the snapshot: define (tr_def_*) what the events recorded so far need
	 * and fini defines only at the end, for this snapshot only (dropped
	 * after it: sampled contexts not resolved yet as placeholders, VT class
	 * groups as far as defined). Quick: no symbol reading, no lock the
	 * program may hold. May be NULL. */
	void (*durable_snapshot)(void);
	/* MPI_Finalize, before the definitions are packed for unification
	 * (definitions made later are not in the unified archive): define what
	 * the process may still use after it (wrappers/io, wrappers/pthread:
	 * the regions they define at their first call). May be NULL. */
	void (*defs_freeze)(void);
	/* 1 when the module records in a fork child at once (the sampler's
	 * timer, the metrics' counters): the child's archive is made at the
	 * fork, not at its first traced call. May be NULL. */
	int (*fork_records)(void);
};
/* Called from a module's constructor (priority 200+) or from tr's init; at
 * most 16 modules. */
void tr_module_register(const struct tr_module *m);
/* Definitions of class cls (enum tr_def_class) in the registry so far: the
 * next free id (crash path, fini_crash). */
uint32_t tr_defs_count(int cls);

/* Run every module's fini hook once (idempotent; later calls return at
 * once). tr_defs_pack calls it, so the definitions modules add at the end
 * (VT class groups, sampled calling contexts) reach the MPI-unified archive;
 * the normal shut-down calls it too. */
void tr_modules_fini(void);
void tr_modules_defs_freeze(void);   /* MPI_Finalize, before tr_modules_fini */

#endif /* TR_MODULE_H */
