/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_config.h - the core's common macros, its log (tracer: lines) and the
 * configuration (tr_cfg, the TRACER_* variables): part of tracer.h.
 */
#ifndef TR_CONFIG_H
#define TR_CONFIG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define TR_EXPORT __attribute__((visibility("default")))
#define TR_HIDDEN __attribute__((visibility("hidden")))
#define tr_likely(x)   __builtin_expect(!!(x), 1)
#define tr_unlikely(x) __builtin_expect(!!(x), 0)
#define TR_TLS __thread __attribute__((tls_model("initial-exec")))
/* A large zero-initialised table: in .lbss, after .bss, so that the small
 * variables a short process touches share a few pages instead of each
 * sitting on a page of its own between the tables (a page fault each). */
#define TR_BIG_BSS __attribute__((section(".lbss")))
/* The hot path's helpers: inlined whatever the optimizer's size estimate. */
#define TR_ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- logging (never on the hot path; "tracer: " prefix, one line) ------------ */

/* Printed unless TRACER_VERBOSE=0 silences info; errors and warnings always. */
void tr_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tr_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tr_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* TRACER_VERBOSE >= 2 */
void tr_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Async-signal-safe: formats %s %d %u %lu %llu %x %p into a fixed buffer, write(2). */
void tr_log_sigsafe(const char *fmt, ...);

/* ---- configuration (parsed once in the constructor, read-only afterwards) ---- */

enum tr_on_full { TR_ON_FULL_FLUSH = 0, TR_ON_FULL_STOP = 1 };
enum tr_clock_kind { TR_CLOCK_TSC = 0, TR_CLOCK_MONOTONIC = 1 };
enum tr_tree_mode { TR_TREE_ONE = 0, TR_TREE_SEPARATE = 1 };
enum tr_mpi_polling { TR_MPI_POLL_FOLD = 0, TR_MPI_POLL_ALL = 1 };
enum tr_io_chars { TR_IO_CHARS_FOLD = 0, TR_IO_CHARS_ALL = 1 };

struct tr_config {
	char output[4096];        /* TRACER_OUTPUT ("" = default name, decided at start or by MPI) */
	uint64_t buffer_bytes;    /* TRACER_BUFFER, per thread (default 16M) */
	uint64_t chunk_bytes;     /* TRACER_CHUNK (default 1M) */
	int on_full;              /* TRACER_ON_FULL */
	int pthread;              /* TRACER_PTHREAD (default 1) */
	int mpi;                  /* TRACER_MPI (default 1) */
	int mpi_polling;          /* TRACER_MPI_POLLING: fold (default), all (wrappers/mpi/mpi_req.c) */
	int io_chars;             /* TRACER_IO_CHARS: fold (default), all (wrappers/io/io_stdio.c) */
	char filter[4096];        /* TRACER_FILTER file ("" = none) */
	int verbose;              /* TRACER_VERBOSE (default 1) */
	int clock;                /* TRACER_CLOCK: tsc (default where invariant) / monotonic */
	/* sampling/ */
	uint64_t sampling_period_ns;   /* TRACER_SAMPLING (0 = off); events for cycles@N */
	uint32_t sampling_event;       /* TR_SMP_EVENT_*: TRACER_SAMPLING=cycles@N, instructions@N */
	uint32_t sampling_depth;       /* TRACER_SAMPLING_DEPTH (default 64) */
	uint32_t sampling_unwind;      /* TRACER_SAMPLING_UNWIND: TR_SMP_UNWIND_* (default cfi) */
	int callers;                   /* TRACER_CALLERS (default 0): calling contexts of the traced calls */
	char metrics[1024];            /* TRACER_METRICS ("" = none) */
	/* wrappers/vt */
	int detailed_states;           /* TRACER_DETAILED_STATES (default 0) */
	/* TRACER_TEST_CLOCK_SKEW (signed ns, default 0): test only. Added to
	 * every CLOCK_MONOTONIC reading (not to the TSC), so that an MPI test
	 * on one host can give a rank a clock that is off by a known amount
	 * and check that the ClockOffset records correct it. */
	int64_t test_clock_skew_ns;
	int openmp;                    /* TRACER_OPENMP (default 1), wrappers/openmp/ */
	int io;                        /* TRACER_IO (default 1): wrappers/io */
	int tree;                      /* TRACER_TREE: one archive per process tree (default) or per process */
};
extern struct tr_config tr_cfg;
enum tr_smp_event { TR_SMP_EVENT_TIME = 0, TR_SMP_EVENT_CYCLES, TR_SMP_EVENT_INSTRUCTIONS };
/* the sampler's stack walk: the unwind tables with libunwind where they do
 * not suffice (sampling/unwind.c), libunwind alone, or both compared */
enum tr_smp_unwind { TR_SMP_UNWIND_CFI = 0, TR_SMP_UNWIND_LIBUNWIND, TR_SMP_UNWIND_CHECK };

/* Helpers shared by every option parser (return 0 on success, -1 on bad input). */
int tr_cfg_parse_size(const char *s, uint64_t *out);       /* "16M", "512k", "1G", "4096" */
int tr_cfg_parse_duration(const char *s, uint64_t *ns);    /* "1ms", "250us", "1000Hz", "2s" */
int tr_cfg_parse_bool(const char *s, int *out);            /* on/off/1/0/yes/no/true/false */

#endif /* TR_CONFIG_H */
