/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - TRACER_* environment variables -> struct tr_config.
 *
 * The only place that reads the environment. Parsed once (constructor or
 * lazy init). A bad value gives one "tracer:" line naming the variable, the
 * value and what is accepted; the default is used and the program runs on.
 * Unknown TRACER_* names give one warning each.
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
	static char buf[131072];
	static char *vec[2048];
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

static void bad(const char *var, const char *val, const char *accepted, const char *dflt)
{
	tr_log_warn("invalid %s='%s' (accepted: %s); using %s", var, val, accepted, dflt);
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

/* Names accepted silently: used by scripts/ and bench/, not by the library. */
static const char *const tr_env_ignored[] = { "TRACER_LIB", "TRACER_BUILD_DIR", "TRACER_TOP", NULL };

static const char *const tr_env_known[] = {
	"TRACER_OUTPUT", "TRACER_BUFFER", "TRACER_CHUNK", "TRACER_ON_FULL", "TRACER_PTHREAD",
	"TRACER_MPI", "TRACER_MPI_POLLING", "TRACER_FILTER", "TRACER_VERBOSE", "TRACER_CLOCK", "TRACER_SAMPLING",
	"TRACER_SAMPLING_DEPTH", "TRACER_METRICS", "TRACER_DETAILED_STATES", "TRACER_DURABLE",
	"TRACER_TEST_CLOCK_SKEW", "TRACER_LAUNCHER", "TRACER_OPENMP", "TRACER_IO", "TRACER_TREE", NULL
};

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

void tr_cfg_load(void)
{
	const char *v;
	long l;

	env_init();
	/* TRACER_VERBOSE first: it decides what the other checks print. */
	if ((v = env_get("TRACER_VERBOSE"))) {
		if (parse_int(v, 0, 2, &l) == 0)
			tr_cfg.verbose = (int)l;
		else if (!strcasecmp(v, "quiet") || !strcasecmp(v, "off"))
			tr_cfg.verbose = 0;
		else
			bad("TRACER_VERBOSE", v, "0 (silent; also off, quiet), 1 (summary), 2 (debug)", "1");
	}
	if ((v = env_get("TRACER_OUTPUT"))) {
		if (!*v || strlen(v) >= 4000)
			bad("TRACER_OUTPUT", v, "a directory path shorter than 4000 bytes",
			    "a new directory tracer-<prog>-<time>-<pid>");
		else
			strcpy(tr_cfg.output, v);
	}
	/* TRACER_CHUNK given: TRACER_BUFFER must hold one chunk. Not given: the
	 * chunk is 1M, or the whole buffer when that is smaller (256K..1M) */
	int chunk_given = 0;
	if ((v = env_get("TRACER_CHUNK"))) {
		uint64_t x;
		if (tr_cfg_parse_size(v, &x) == 0 && x >= TR_CHUNK_MIN && x <= TR_CHUNK_MAX) {
			tr_cfg.chunk_bytes = x;
			chunk_given = 1;
		} else
			bad("TRACER_CHUNK", v, "a size from 256K to 16M, e.g. 1M", "1M (at most TRACER_BUFFER)");
	}
	if ((v = env_get("TRACER_BUFFER"))) {
		uint64_t x;
		uint64_t lo = chunk_given ? tr_cfg.chunk_bytes : TR_CHUNK_MIN;
		if (tr_cfg_parse_size(v, &x) == 0 && x >= lo && x <= (1ull << 40)) {
			tr_cfg.buffer_bytes = x;
			if (!chunk_given && tr_cfg.chunk_bytes > x)
				tr_cfg.chunk_bytes = x;
		} else if (chunk_given)
			bad("TRACER_BUFFER", v, "a size from TRACER_CHUNK to 1T, e.g. 16M, 512K, 1G", "16M");
		else
			bad("TRACER_BUFFER", v, "a size from 256K to 1T, e.g. 16M, 512K, 1G", "16M");
	}
	if (tr_cfg.buffer_bytes < tr_cfg.chunk_bytes)
		tr_cfg.buffer_bytes = tr_cfg.chunk_bytes;
	if ((v = env_get("TRACER_ON_FULL"))) {
		if (!strcasecmp(v, "flush"))
			tr_cfg.on_full = TR_ON_FULL_FLUSH;
		else if (!strcasecmp(v, "stop"))
			tr_cfg.on_full = TR_ON_FULL_STOP;
		else
			bad("TRACER_ON_FULL", v, "flush, stop", "flush");
	}
	if ((v = env_get("TRACER_TREE"))) {
		if (!strcasecmp(v, "one"))
			tr_cfg.tree = TR_TREE_ONE;
		else if (!strcasecmp(v, "separate"))
			tr_cfg.tree = TR_TREE_SEPARATE;
		else
			bad("TRACER_TREE", v, "one, separate", "one");
	}
	if ((v = env_get("TRACER_PTHREAD")) && tr_cfg_parse_bool(v, &tr_cfg.pthread))
		bad("TRACER_PTHREAD", v, "on/off/1/0/yes/no/true/false", "on");
	if ((v = env_get("TRACER_MPI")) && tr_cfg_parse_bool(v, &tr_cfg.mpi))
		bad("TRACER_MPI", v, "on/off/1/0/yes/no/true/false", "on");
	if ((v = env_get("TRACER_MPI_POLLING")) && *v) {
		if (!strcasecmp(v, "fold"))
			tr_cfg.mpi_polling = TR_MPI_POLL_FOLD;
		else if (!strcasecmp(v, "all"))
			tr_cfg.mpi_polling = TR_MPI_POLL_ALL;
		else if (tr_env_rank() <= 0)   /* one line per run, not one per rank */
			bad("TRACER_MPI_POLLING", v, "fold, all", "fold");
	}
	if ((v = env_get("TRACER_OPENMP")) && tr_cfg_parse_bool(v, &tr_cfg.openmp))
		bad("TRACER_OPENMP", v, "on/off/1/0/yes/no/true/false", "on");
	if ((v = env_get("TRACER_IO")) && tr_cfg_parse_bool(v, &tr_cfg.io))
		bad("TRACER_IO", v, "on/off/1/0/yes/no/true/false", "on");
	if ((v = env_get("TRACER_FILTER"))) {
		if (!*v || strlen(v) >= sizeof(tr_cfg.filter))
			bad("TRACER_FILTER", v, "a readable file name", "no filter");
		else
			strcpy(tr_cfg.filter, v);
	}
	if ((v = env_get("TRACER_CLOCK"))) {
		extern int tr_clock_explicit;
		if (!strcasecmp(v, "tsc")) {
			tr_cfg.clock = TR_CLOCK_TSC;
			tr_clock_explicit = 1;
		}
		else if (!strcasecmp(v, "monotonic"))
			tr_cfg.clock = TR_CLOCK_MONOTONIC;
		else
			bad("TRACER_CLOCK", v, "tsc, monotonic", "tsc where invariant, else monotonic");
	}
	if ((v = env_get("TRACER_SAMPLING"))) {
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
			bad("TRACER_SAMPLING", v, "off, a period >= 1us (1ms, 250us, 1000Hz, 2s), cycles@N or "
			    "instructions@N (N >= 1000)", "off");
	}
	if ((v = env_get("TRACER_SAMPLING_DEPTH"))) {
		if (parse_int(v, 1, 4096, &l) == 0)
			tr_cfg.sampling_depth = (uint32_t)l;
		else
			bad("TRACER_SAMPLING_DEPTH", v, "an integer 1..4096", "64");
	}
	if ((v = env_get("TRACER_METRICS"))) {
		if (strlen(v) < sizeof(tr_cfg.metrics))
			strcpy(tr_cfg.metrics, v);
		else
			bad("TRACER_METRICS", v, "a comma-separated list shorter than 1024 bytes", "none");
	}
	if ((v = env_get("TRACER_DETAILED_STATES"))) {
		int b;
		if (parse_int(v, 0, 1000, &l) == 0)
			tr_cfg.detailed_states = (int)l;
		else if (tr_cfg_parse_bool(v, &b) == 0)
			tr_cfg.detailed_states = b;
		else
			bad("TRACER_DETAILED_STATES", v, "an integer level 0..1000 (or on/off)", "0");
	}

	if ((v = env_get("TRACER_TEST_CLOCK_SKEW"))) {
		char *end;
		errno = 0;
		long long sk = strtoll(v, &end, 10);
		if (errno || end == v || *end || sk < -3600000000000LL || sk > 3600000000000LL)
			bad("TRACER_TEST_CLOCK_SKEW", v, "a signed number of ns within one hour (test only)", "0");
		else
			tr_cfg.test_clock_skew_ns = sk;
	}

	/* Unknown TRACER_* variables: one warning each. */
	for (char **e = tr_env; e && *e; e++) {
		if (strncmp(*e, "TRACER_", 7))
			continue;
		size_t n = strcspn(*e, "=");
		int known = 0;
		for (int i = 0; tr_env_known[i] && !known; i++)
			known = strlen(tr_env_known[i]) == n && !strncmp(*e, tr_env_known[i], n);
		for (int i = 0; tr_env_ignored[i] && !known; i++)
			known = strlen(tr_env_ignored[i]) == n && !strncmp(*e, tr_env_ignored[i], n);
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
