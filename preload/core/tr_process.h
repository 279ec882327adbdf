/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_process.h - the process (identity, rank), its archive's life cycle,
 * helper processes and what wrappers/mpi needs: part of tracer.h.
 */
#ifndef TR_PROCESS_H
#define TR_PROCESS_H

#include "tr_registry.h"

/* ---- process identity, locations, archive life cycle -------------------------------- */

struct tr_process {
	int rank;                 /* MPI rank or -1 (from OMPI_COMM_WORLD_RANK/PMIX_RANK at start, fixed at MPI_Init) */
	int size;                 /* MPI world size or 0 */
	char hostname[256];
	char progname[256];
	int argc;
	char **argv;              /* copy made at start */
};
extern struct tr_process tr_proc;
/* The rank a launcher put in the environment (OMPI_COMM_WORLD_RANK,
 * PMIX_RANK, ...), or -1; read also with TRACER_MPI=off (a setting's
 * message: one per run, by rank 0 or a process that is no rank). */
int tr_env_rank(void);

/* Location id of thread `index` of this process: (rank or 0) << 32 | index. */
uint64_t tr_location_id(uint32_t index);

/* Change the archive directory before any file is written (MPI: rank 0's
 * choice broadcast at MPI_Init). Returns 0, or -1 if files already exist. */
int tr_archive_set_dir(const char *dir);
const char *tr_archive_dir(void);
/* MPI: set rank/size once known (before any location file is written). */
void tr_set_rank(int rank, int size);
/* Write the whole archive now (normal path, idempotent). Called by the
 * destructor/exit paths, and by MPI_Finalize after unification. */
void tr_finish(void);
/* The same with an exit status for ProgramEnd (MPI_Abort: its error code). */
void tr_finish_status(int status, int have_status);
/* Helper processes (preload/core/spawn.c): a tool of this installation
 * (PREFIX/bin/<tool> next to the lib/ libtracer.so was loaded from) run
 * detached and untraced (the environment without LD_PRELOAD). Prepare in
 * thread context (allocates; args and log must outlive h); tr_helper_spawn
 * is async-signal-safe: own session, stdin /dev/null, stdout and stderr to
 * the log; returns the pid or -1. tr_helper_prepare: 0, or -1 when the tool
 * is not installed. */
struct tr_helper {
	char path[4096];
	char *argv[16];
	char **envp;
	const char *log;
	int append;   /* 1: the log is appended to (default: truncated) */
};
int tr_helper_prepare(struct tr_helper *h, const char *tool, const char *const *args, const char *log);
pid_t tr_helper_spawn(const struct tr_helper *h);   /* detached; async-signal-safe */
double tr_helper_run(const struct tr_helper *h);    /* and waits: its seconds, -1 failed */
/* MPI (at MPI_Init): prepare the command that merges the per-rank archives
 * when the run ends without MPI_Finalize (bin/tracer-merge, untraced; one
 * rank starts it, from the crash path too). */
void tr_archive_prepare_merge(void);
/* Set by wrappers/mpi: 1 when unification will write the global defs (only rank 0 writes them). */
void tr_set_global_writer(int yes);
/* TRACER_DURABLE: the module writes records from signal handlers on t's
 * location (the sampler), which never grow a window: every first window
 * is reserved whole from now on, t's own at once (thread context, on t,
 * before its handler may record; preload/archive/durable.c). */
void tr_durable_handler_records(struct tr_thread *t);

/* ---- MPI support (wrappers/mpi) ------------------------------------------------
 * - Ranks started by mpirun know their rank from the environment
 *   (OMPI_COMM_WORLD_RANK / PMIX_RANK): location ids are final from the start.
 *   At MPI_Init call tr_set_rank() and make every rank use rank 0's
 *   directory: tr_archive_set_dir(rank 0's tr_archive_dir()) (a no-op when
 *   they agree already; refused (-1) once this rank flushed files elsewhere).
 * - tr_set_global_writer(0) on every rank at MPI_Init: from then on the
 *   process does not write global definitions by itself, unless MPI_Finalize
 *   is never reached (see below).
 * - At MPI_Finalize: pack / gather / merge (on rank 0) / broadcast /
 *   tr_defs_install_unified(buf, len) on every rank. Everything
 *   is then written at process exit (events keep being recorded until then),
 *   or call tr_finish() right away.
 * - Files (directory D, the same on every rank: TRACER_OUTPUT, else
 *   tracer-<prog>-<job id> from PMIX_NAMESPACE/SLURM_JOB_ID/..., else rank 0's
 *   choice via tr_archive_set_dir): every rank always writes a complete
 *   standalone archive D/rank<r>.otf2 (+ rank<r>.def, rank<r>/<loc>.evt) at
 *   any exit (normal, _exit, signals, crash: emergency path, MPI_Abort via
 *   tr_finish) - that is the partial data when MPI_Finalize is never reached -
 *   and D/rank<r>.tdefs, its packed definitions (tr_defs_pack format, also
 *   from the crash path) for an exact offline unification (tr_defs_merge).
 *   tr_defs_install_unified() then writes D/traces/<loc>.def (mapping tables
 *   + ClockOffsets) for this rank's locations right away, and at exit rank 0
 *   (write_global) writes the unified D/traces.def + D/traces.otf2 with
 *   D/traces/<loc>.evt -> ../rank<r>/<loc>.evt links. No rank ever writes
 *   another rank's files.
 * - Side processes (archive_mpi.c): a rank's fork child, or a process whose
 *   rank claim is held by a live ancestor, writes ranks/side<r>-<pid>; one
 *   that calls MPI_Init is the rank (tr_set_rank: ranks/rank<r>.mpi names
 *   its archive).
 */

#endif /* TR_PROCESS_H */
