/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - TRACER_* environment variables -> struct tr_config.
 *
 * The only place that reads the environment. Parsed once (constructor or
 * lazy init). A bad value gives one "tracer:" line naming the variable, the
 * value and what is accepted; the default is used and the program runs on.
 * Unknown TRACER_* names give one warning each. One table (settings[])
 * names each variable once: its parser, the default kept.
 */
#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tr_int.h"

struct tr_config tr_cfg = {
	.buffer_bytes = 16ull << 20,
	.chunk_bytes = 1ull << 20,
	.on_full = TR_ON_FULL_FLUSH,
	.pthread = 1,
	.mpi = 1,
	.openmp = 1,
	.verbose = 1,
	.clock = TR_CLOCK_TSC,
	.sampling_depth = 64,
	.io = 1,
};

#define TR_CHUNK_MIN (256ull << 10)
#define TR_CHUNK_MAX (16ull << 20)

extern char **environ;

/* The environment; before libc set up environ (lazy init from a
 * .preinit_array function) it is read from /proc/self/environ. */
static char **tr_env;

/* Read a whole (small, e.g. /proc) file into buf, NUL-terminated; returns
 * the byte count (0 when it cannot be read). No malloc: usable before libc
 * is set up. */
ssize_t tr_read_file(const char *path, char *buf, size_t size)
{
	TR_REAL_INIT(open);   /* (the environment may be read before the start) */
	int fd = tr_real.open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;
	if (fd >= 0) {
		while (n < (ssize_t)size - 1 && (r = tr_real.read(fd, buf + n, size - 1 - (size_t)n)) > 0)
			n += r;
		tr_real.close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? n : 0;
}

static void env_init(void)
{
	static char buf[131072] TR_BIG_BSS;
	static char *vec[2048] TR_BIG_BSS;
	if (environ && environ[0]) {
		tr_env = environ;
		return;
	}
	ssize_t n = tr_read_file("/proc/self/environ", buf, sizeof(buf));
	size_t k = 0;
	for (char *p = buf; p < buf + n && *p && k < sizeof(vec) / sizeof(vec[0]) - 1; p += strlen(p) + 1)
		vec[k++] = p;
	vec[k] = NULL;
	tr_env = vec;
}

static const char *env_get(const char *name)
{
	size_t l = strlen(name);
	for (char **e = tr_env; e && *e; e++)
		if (!strncmp(*e, name, l) && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

int tr_cfg_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || !isdigit((unsigned char)*s))
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1;
	switch (tolower((unsigned char)*end)) {
	case 'k': mul = 1ull << 10; end++; break;
	case 'm': mul = 1ull << 20; end++; break;
	case 'g': mul = 1ull << 30; end++; break;
	case 't': mul = 1ull << 40; end++; break;
	default: break;
	}
	if (mul > 1 && tolower((unsigned char)*end) == 'i')
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end)
		return -1;
	if (v && mul > UINT64_MAX / v)
		return -1;
	*out = v * mul;
	return 0;
}

int tr_cfg_parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	if (!s || !*s || (!isdigit((unsigned char)*s) && *s != '.') || strpbrk(s, "xXpP"))
		return -1;   /* a decimal number (strtod would take hex, inf, nan) */
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	double r;
	if (!*end || !strcasecmp(end, "ns"))
		r = v;
	else if (!strcasecmp(end, "us"))
		r = v * 1e3;
	else if (!strcasecmp(end, "ms"))
		r = v * 1e6;
	else if (!strcasecmp(end, "s"))
		r = v * 1e9;
	else if (!strcasecmp(end, "hz")) {
		if (v <= 0)
			return -1;
		r = 1e9 / v;
	} else if (!strcasecmp(end, "khz")) {
		if (v <= 0)
			return -1;
		r = 1e6 / v;
	} else
		return -1;
	if (r > 1.8e19)
		return -1;
	*ns = (uint64_t)(r + 0.5);
	return 0;
}

int tr_cfg_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true", "y" };
	static const char *const no[] = { "0", "off", "no", "false", "n" };
	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	/* decimal digits, optionally after '-': no blanks, '+' or base prefix */
	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		return -1;
	long v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int tr_env_rank(void)
{
	const char *v = env_get("OMPI_COMM_WORLD_RANK");
	if (!v)
		v = env_get("PMIX_RANK");
	if (!v)
		v = env_get("PMI_RANK");
	long r;
	if (v && parse_int(v, 0, 0x7fffffff, &r) == 0)
		return (int)r;
	return -1;
}

static int env_size(void)
{
	const char *v = env_get("OMPI_COMM_WORLD_SIZE");
	if (!v)
		v = env_get("PMI_SIZE");
	long r;
	if (v && parse_int(v, 1, 0x7fffffff, &r) == 0)
		return (int)r;
	return 0;
}

/* ---- the settings: one parser each, one table ----
 * A parser stores a valid value in tr_cfg and returns NULL; else what is
 * accepted (the line then names the variable, the value, that text and
 * the default kept). */

static const char *set_verbose(const char *v)
{
	long l;
	if (parse_int(v, 0, 2, &l) == 0)
		tr_cfg.verbose = (int)l;
	else if (!strcasecmp(v, "quiet") || !strcasecmp(v, "off"))
		tr_cfg.verbose = 0;
	else
		return "0 (silent; also off, quiet), 1 (summary), 2 (debug)";
	return NULL;
}

static const char *set_text(const char *v, char *to, size_t size, const char *accepted)
{
	if (!*v || strlen(v) >= size)
		return accepted;
	strcpy(to, v);
	return NULL;
}

static const char *set_output(const char *v)
{
	return set_text(v, tr_cfg.output, 4000, "a directory path shorter than 4000 bytes");
}

static const char *set_filter(const char *v)
{
	return set_text(v, tr_cfg.filter, sizeof(tr_cfg.filter), "a readable file name");
}

static const char *set_metrics(const char *v)
{
	if (strlen(v) >= sizeof(tr_cfg.metrics))
		return "a comma-separated list shorter than 1024 bytes";
	strcpy(tr_cfg.metrics, v);
	return NULL;
}

/* TRACER_CHUNK given: TRACER_BUFFER must hold one chunk. Not given: the
 * chunk is 1M, or the whole buffer when that is smaller (256K..1M). */
static int chunk_given;

static const char *set_chunk(const char *v)
{
	uint64_t x;
	if (tr_cfg_parse_size(v, &x) || x < TR_CHUNK_MIN || x > TR_CHUNK_MAX)
		return "a size from 256K to 16M, e.g. 1M";
	tr_cfg.chunk_bytes = x;
	chunk_given = 1;
	return NULL;
}

static const char *set_buffer(const char *v)
{
	uint64_t x;
	uint64_t lo = chunk_given ? tr_cfg.chunk_bytes : TR_CHUNK_MIN;
	if (tr_cfg_parse_size(v, &x) || x < lo || x > (1ull << 40))
		return chunk_given ? "a size from TRACER_CHUNK to 1T, e.g. 16M, 512K, 1G"
				   : "a size from 256K to 1T, e.g. 16M, 512K, 1G";
	tr_cfg.buffer_bytes = x;
	if (!chunk_given && tr_cfg.chunk_bytes > x)
		tr_cfg.chunk_bytes = x;
	return NULL;
}

/* One of two words (case-insensitive) -> the first or the second value. */
static const char *set_choice(const char *v, int *to, const char *a, int va, const char *b, int vb,
			      const char *accepted)
{
	if (!strcasecmp(v, a))
		*to = va;
	else if (!strcasecmp(v, b))
		*to = vb;
	else
		return accepted;
	return NULL;
}

static const char *set_on_full(const char *v)
{
	return set_choice(v, &tr_cfg.on_full, "flush", TR_ON_FULL_FLUSH, "stop", TR_ON_FULL_STOP, "flush, stop");
}

static const char *set_tree(const char *v)
{
	return set_choice(v, &tr_cfg.tree, "one", TR_TREE_ONE, "separate", TR_TREE_SEPARATE, "one, separate");
}

static const char *set_io_chars(const char *v)
{
	return set_choice(v, &tr_cfg.io_chars, "fold", TR_IO_CHARS_FOLD, "all", TR_IO_CHARS_ALL, "fold, all");
}

static const char *set_mpi_polling(const char *v)
{
	if (!*v)
		return NULL;
	const char *bad = set_choice(v, &tr_cfg.mpi_polling, "fold", TR_MPI_POLL_FOLD, "all", TR_MPI_POLL_ALL,
				     "fold, all");
	return bad && tr_env_rank() <= 0 ? bad : NULL;   /* one line per run, not one per rank */
}

#define BOOL_TEXT "on/off/1/0/yes/no/true/false"
static const char *set_pthread(const char *v) { return tr_cfg_parse_bool(v, &tr_cfg.pthread) ? BOOL_TEXT : NULL; }
static const char *set_mpi(const char *v) { return tr_cfg_parse_bool(v, &tr_cfg.mpi) ? BOOL_TEXT : NULL; }
static const char *set_openmp(const char *v) { return tr_cfg_parse_bool(v, &tr_cfg.openmp) ? BOOL_TEXT : NULL; }
static const char *set_io(const char *v) { return tr_cfg_parse_bool(v, &tr_cfg.io) ? BOOL_TEXT : NULL; }
static const char *set_callers(const char *v) { return tr_cfg_parse_bool(v, &tr_cfg.callers) ? BOOL_TEXT : NULL; }

static const char *set_clock(const char *v)
{
	extern int tr_clock_explicit;
	const char *bad = set_choice(v, &tr_cfg.clock, "tsc", TR_CLOCK_TSC, "monotonic", TR_CLOCK_MONOTONIC,
				     "tsc, monotonic");
	if (!bad && tr_cfg.clock == TR_CLOCK_TSC)
		tr_clock_explicit = 1;
	return bad;
}

static const char *set_sampling(const char *v)
{
	uint64_t ns;
	int b;
	const char *at = strchr(v, '@');
	char *end = NULL;
	tr_cfg.sampling_event = TR_SMP_EVENT_TIME;
	if (tr_cfg_parse_bool(v, &b) == 0 && b == 0)
		tr_cfg.sampling_period_ns = 0;
	else if (tr_cfg_parse_duration(v, &ns) == 0 && (ns == 0 || ns >= 1000))
		tr_cfg.sampling_period_ns = ns;
	else if (at && (ns = strtoull(at + 1, &end, 10)) >= 1000 && end && !*end &&
		 (!strncmp(v, "cycles@", 7) || !strncmp(v, "instructions@", 13))) {
		tr_cfg.sampling_period_ns = ns;   /* a count of events */
		tr_cfg.sampling_event = v[0] == 'c' ? TR_SMP_EVENT_CYCLES : TR_SMP_EVENT_INSTRUCTIONS;
	} else
		return "off, a period >= 1us (1ms, 250us, 1000Hz, 2s), cycles@N or instructions@N (N >= 1000)";
	return NULL;
}

static const char *set_sampling_depth(const char *v)
{
	long l;
	if (parse_int(v, 1, 4096, &l))
		return "an integer 1..4096";
	tr_cfg.sampling_depth = (uint32_t)l;
	return NULL;
}

static const char *set_sampling_unwind(const char *v)
{
	static const char *const nm[] = { "cfi", "libunwind", "check" };
	for (uint32_t i = 0; i < 3; i++) {
		if (!strcmp(v, nm[i])) {
			tr_cfg.sampling_unwind = i;
			return NULL;
		}
	}
	return "cfi, libunwind or check";
}

static const char *set_detailed_states(const char *v)
{
	long l;
	int b;
	if (parse_int(v, 0, 1000, &l) == 0)
		tr_cfg.detailed_states = (int)l;
	else if (tr_cfg_parse_bool(v, &b) == 0)
		tr_cfg.detailed_states = b;
	else
		return "an integer level 0..1000 (or on/off)";
	return NULL;
}

static const char *set_test_clock_skew(const char *v)
{
	char *end;
	errno = 0;
	long long sk = strtoll(v, &end, 10);
	if (errno || end == v || *end || sk < -3600000000000LL || sk > 3600000000000LL)
		return "a signed number of ns within one hour (test only)";
	tr_cfg.test_clock_skew_ns = sk;
	return NULL;
}

/* Every TRACER_* name the library knows, in the order they are read
 * (TRACER_VERBOSE first: it decides what the other checks print;
 * TRACER_CHUNK before TRACER_BUFFER). set NULL: read where it is used
 * (tr_getenv), or by scripts/ and bench/ only (accepted silently). */
static const struct {
	const char *name;
	const char *(*set)(const char *v);
	const char *dflt;   /* the value kept when the given one is bad */
} settings[] = {
	{ "TRACER_VERBOSE", set_verbose, "1" },
	{ "TRACER_OUTPUT", set_output, "a new directory tracer-<prog>-<time>-<pid>" },
	{ "TRACER_CHUNK", set_chunk, "1M (at most TRACER_BUFFER)" },
	{ "TRACER_BUFFER", set_buffer, "16M" },
	{ "TRACER_ON_FULL", set_on_full, "flush" },
	{ "TRACER_TREE", set_tree, "one" },
	{ "TRACER_PTHREAD", set_pthread, "on" },
	{ "TRACER_MPI", set_mpi, "on" },
	{ "TRACER_MPI_POLLING", set_mpi_polling, "fold" },
	{ "TRACER_OPENMP", set_openmp, "on" },
	{ "TRACER_IO", set_io, "on" },
	{ "TRACER_IO_CHARS", set_io_chars, "fold" },
	{ "TRACER_FILTER", set_filter, "no filter" },
	{ "TRACER_CLOCK", set_clock, "tsc where invariant, else monotonic" },
	{ "TRACER_SAMPLING", set_sampling, "off" },
	{ "TRACER_SAMPLING_DEPTH", set_sampling_depth, "64" },
	{ "TRACER_SAMPLING_UNWIND", set_sampling_unwind, "cfi" },
	{ "TRACER_CALLERS", set_callers, "off" },
	{ "TRACER_METRICS", set_metrics, "none" },
	{ "TRACER_DETAILED_STATES", set_detailed_states, "0" },
	{ "TRACER_TEST_CLOCK_SKEW", set_test_clock_skew, "0" },
	{ "TRACER_TEST_DYNSYM", NULL, NULL },   /* real.c: check dynsym.c against dlsym */
	{ "TRACER_DURABLE", NULL, NULL },    /* durable.c */
	{ "TRACER_LAUNCHER", NULL, NULL },   /* log.c, proctree.c: set by tracer-run */
	{ "TRACER_LIB", NULL, NULL },        /* scripts/, bench/ */
	{ "TRACER_BUILD_DIR", NULL, NULL },
	{ "TRACER_TOP", NULL, NULL },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

/* The value of name among the n TRACER_* entries tv (the environment read
 * once for all settings: a process start scans it once, not per setting). */
static const char *tracer_var(char *const *tv, size_t n, const char *name)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(tv[i], name, l) && tv[i][l] == '=')
			return tv[i] + l + 1;
	return NULL;
}

void tr_cfg_load(void)
{
	const char *v, *accepted;
	char *tv[64];
	size_t ntv = 0, more = 0;

	env_init();
	for (char **e = tr_env; e && *e; e++) {
		if ((*e)[0] != 'T' || strncmp(*e, "TRACER_", 7))
			continue;
		if (ntv < sizeof(tv) / sizeof(tv[0]))
			tv[ntv++] = *e;
		else
			more = 1;
	}
	for (size_t i = 0; i < NSETTINGS; i++) {
		if (!settings[i].set)
			continue;
		v = more ? env_get(settings[i].name) : tracer_var(tv, ntv, settings[i].name);
		if (v && (accepted = settings[i].set(v)))
			tr_log_warn("invalid %s='%s' (accepted: %s); using %s", settings[i].name, v, accepted,
				    settings[i].dflt);
	}
	if (tr_cfg.buffer_bytes < tr_cfg.chunk_bytes)
		tr_cfg.buffer_bytes = tr_cfg.chunk_bytes;

	/* Unknown TRACER_* variables: one warning each. */
	for (char **e = tr_env; e && *e; e++) {
		if ((*e)[0] != 'T' || strncmp(*e, "TRACER_", 7))
			continue;
		size_t n = strcspn(*e, "=");
		int known = 0;
		for (size_t i = 0; i < NSETTINGS && !known; i++)
			known = strlen(settings[i].name) == n && !strncmp(*e, settings[i].name, n);
		if (!known)
			tr_log_warn("unknown variable %.*s ignored (misspelt? the TRACER_* settings are listed by tracer-run --help)", (int)n, *e);
	}

	tr_proc.rank = tr_cfg.mpi ? tr_env_rank() : -1;
	tr_proc.size = tr_proc.rank >= 0 ? env_size() : 0;
}

/* For the other files of preload/ (the only code reading the environment). */
const char *tr_getenv(const char *name)
{
	if (!tr_env)
		env_init();
	return env_get(name);
}
