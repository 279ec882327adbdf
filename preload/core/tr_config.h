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

/* The core's settings (preload/core/config.c); each family keeps its own
 * (its table, struct tr_settings below). */
struct tr_config {
	char output[4096];        /* TRACER_OUTPUT ("" = default name, decided at start or by MPI) */
	uint64_t buffer_bytes;    /* TRACER_BUFFER, per thread (default 16M) */
	uint64_t chunk_bytes;     /* TRACER_CHUNK (default 1M) */
	int on_full;              /* TRACER_ON_FULL */
	int mpi;                  /* TRACER_MPI (default 1): also the rank from the launcher's variables */
	char filter[4096];        /* TRACER_FILTER file ("" = none) */
	int verbose;              /* TRACER_VERBOSE (default 1) */
	int clock;                /* TRACER_CLOCK: tsc (default where invariant) / monotonic */
	/* TRACER_TEST_CLOCK_SKEW (signed ns, default 0): test only. Added to
	 * every CLOCK_MONOTONIC reading (not to the TSC), so that an MPI test
	 * on one host can give a rank a clock that is off by a known amount
	 * and check that the ClockOffset records correct it. */
	int64_t test_clock_skew_ns;
	int tree;                 /* TRACER_TREE: one archive per process tree (default) or per process */
};
extern struct tr_config tr_cfg;

/* ---- a family's own settings ------------------------------------------------
 * Each family (wrappers/<family>/, sampling/) declares the TRACER_* names it
 * reads in a table and registers it from a constructor of priority 102..199,
 * before the modules register (200+); a call made before that (libomp's
 * ompt_start_tool runs in libomp's constructor) may register it sooner: a
 * second registration of a table is a no-op. The table is parsed at once,
 * in its order, with the core's rules: a bad value gives one "tracer:" line
 * naming the variable, the value, what is accepted and the default kept.
 * A TRACER_* name in no table gives one warning, once every constructor
 * registered its table (tr_modules_start). */
struct tr_setting {
	const char *name;                    /* TRACER_... */
	/* Stores a valid value and returns NULL; else what is accepted. NULL:
	 * an on/off value into *on_off, or (on_off NULL too) the name is
	 * known, read where it is used (tr_getenv). */
	const char *(*set)(const char *v);
	const char *dflt;                    /* the value kept when the given one is bad */
	int *on_off;
};
/* A table's rows: a parser, an on/off flag, a name read where it is used. */
#define TR_SETTING(name, set, dflt)       { name, set, dflt, NULL }
#define TR_SETTING_ON_OFF(name, v, dflt)  { name, NULL, dflt, v }
#define TR_SETTING_KNOWN(name)            { name, NULL, NULL, NULL }
struct tr_settings {
	const char *owner;                   /* the family ("sampling", "io", ...) */
	const struct tr_setting *list;
	unsigned n;
};
void tr_settings_register(const struct tr_settings *s);
/* A family's table `var` of the rows `rows` (an array), owned by `owner`;
 * TR_SETTINGS_TABLE registers it from a constructor of priority 150 too. */
#define TR_SETTINGS_LIST(var, owner, rows) \
	static const struct tr_settings var = { owner, rows, sizeof(rows) / sizeof((rows)[0]) }
#define TR_SETTINGS_TABLE(var, owner, rows) \
	TR_SETTINGS_LIST(var, owner, rows); \
	__attribute__((constructor(150))) static void var##_register(void) \
	{ \
		tr_settings_register(&var); \
	}

/* Helpers shared by every option parser (return 0 on success, -1 on bad input). */
int tr_cfg_parse_size(const char *s, uint64_t *out);       /* "16M", "512k", "1G", "4096" */
int tr_cfg_parse_duration(const char *s, uint64_t *ns);    /* "1ms", "250us", "1000Hz", "2s" */
int tr_cfg_parse_bool(const char *s, int *out);            /* on/off/1/0/yes/no/true/false */
/* Decimal digits, optionally after '-' (no blanks, '+' or base prefix), lo..hi. */
int tr_cfg_parse_int(const char *s, long lo, long hi, long *out);
/* One of two words (case-insensitive) -> the first or the second value;
 * returns NULL, or `accepted` when v is neither. */
const char *tr_cfg_choice(const char *v, int *to, const char *a, int va, const char *b, int vb,
			  const char *accepted);

#endif /* TR_CONFIG_H */
