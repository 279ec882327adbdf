/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - TRACER_* environment variables -> struct tr_config.
 *
 * The only place that reads the environment. Parsed once (constructor or
 * lazy init). A bad value gives one "tracer:" line naming the variable, the
 * value and what is accepted; the default is used and the program runs on.
 * Unknown TRACER_* names give one warning each. The core's table
 * (settings[]) names each of its variables once: its parser, the default
 * kept; each family registers a table of its own (tr_settings_register,
 * tr_config.h), parsed by the same code.
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
	.mpi = 1,
	.verbose = 1,
	.clock = TR_CLOCK_TSC,
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

int tr_cfg_parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
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
	if (v && tr_cfg_parse_int(v, 0, 0x7fffffff, &r) == 0)
		return (int)r;
	return -1;
}

static int env_size(void)
{
	const char *v = env_get("OMPI_COMM_WORLD_SIZE");
	if (!v)
		v = env_get("PMI_SIZE");
	long r;
	if (v && tr_cfg_parse_int(v, 1, 0x7fffffff, &r) == 0)
		return (int)r;
	return 0;
}

/* ---- the settings: one parser each, one table ----
 * A parser stores a valid value in tr_cfg and returns NULL; else what is
 * accepted (the line then names the variable, the value, that text and
 * the default kept). */

#define TR_CFG_BOOL_TEXT "on/off/1/0/yes/no/true/false"

static const char *set_verbose(const char *v)
{
	long l;
	if (tr_cfg_parse_int(v, 0, 2, &l) == 0)
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

const char *tr_cfg_choice(const char *v, int *to, const char *a, int va, const char *b, int vb,
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
	return tr_cfg_choice(v, &tr_cfg.on_full, "flush", TR_ON_FULL_FLUSH, "stop", TR_ON_FULL_STOP, "flush, stop");
}

static const char *set_tree(const char *v)
{
	return tr_cfg_choice(v, &tr_cfg.tree, "one", TR_TREE_ONE, "separate", TR_TREE_SEPARATE, "one, separate");
}

static const char *set_clock(const char *v)
{
	extern int tr_clock_explicit;
	const char *bad = tr_cfg_choice(v, &tr_cfg.clock, "tsc", TR_CLOCK_TSC, "monotonic", TR_CLOCK_MONOTONIC,
				     "tsc, monotonic");
	if (!bad && tr_cfg.clock == TR_CLOCK_TSC)
		tr_clock_explicit = 1;
	return bad;
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

/* The core's TRACER_* names, in the order they are read (TRACER_VERBOSE
 * first: it decides what the other checks print; TRACER_CHUNK before
 * TRACER_BUFFER). set NULL: read where it is used (tr_getenv), or by
 * scripts/ and bench/ only (accepted silently). */
static const struct tr_setting settings[] = {
	TR_SETTING("TRACER_VERBOSE", set_verbose, "1"),
	TR_SETTING("TRACER_OUTPUT", set_output, "a new directory tracer-<prog>-<time>-<pid>"),
	TR_SETTING("TRACER_CHUNK", set_chunk, "1M (at most TRACER_BUFFER)"),
	TR_SETTING("TRACER_BUFFER", set_buffer, "16M"),
	TR_SETTING("TRACER_ON_FULL", set_on_full, "flush"),
	TR_SETTING("TRACER_TREE", set_tree, "one"),
	TR_SETTING_ON_OFF("TRACER_MPI", &tr_cfg.mpi, "on"),
	TR_SETTING("TRACER_FILTER", set_filter, "no filter"),
	TR_SETTING("TRACER_CLOCK", set_clock, "tsc where invariant, else monotonic"),
	TR_SETTING("TRACER_TEST_CLOCK_SKEW", set_test_clock_skew, "0"),
	TR_SETTING_KNOWN("TRACER_TEST_DYNSYM"),   /* real.c: check dynsym.c against dlsym */
	TR_SETTING_KNOWN("TRACER_DURABLE"),    /* durable.c */
	TR_SETTING_KNOWN("TRACER_LAUNCHER"),   /* log.c, proctree.c: set by tracer-run */
	TR_SETTING_KNOWN("TRACER_LIB"),        /* scripts/, bench/ */
	TR_SETTING_KNOWN("TRACER_BUILD_DIR"),
	TR_SETTING_KNOWN("TRACER_TOP"),
};
static const struct tr_settings core_settings = { "core", settings, sizeof(settings) / sizeof(settings[0]) };

/* The tables: the core's first, then the families' as they register. */
#define TR_MAX_SETTINGS 16
static const struct tr_settings *tables[TR_MAX_SETTINGS] = { &core_settings };
static unsigned ntables = 1;
static struct tr_lock tables_lock = TR_LOCK_INIT;

/* The TRACER_* entries of the environment, found once for every table (a
 * process start scans the environment once, not per setting); beyond 64
 * of them each name is looked up in the whole environment. */
static char *tracer_vars[64];
static size_t ntracer_vars, tracer_vars_more;
static int env_scanned;

static void scan_tracer_vars(void)
{
	if (env_scanned)
		return;
	if (!tr_env)
		env_init();
	for (char **e = tr_env; e && *e; e++) {
		if ((*e)[0] != 'T' || strncmp(*e, "TRACER_", 7))
			continue;
		if (ntracer_vars < sizeof(tracer_vars) / sizeof(tracer_vars[0]))
			tracer_vars[ntracer_vars++] = *e;
		else
			tracer_vars_more = 1;
	}
	env_scanned = 1;
}

static const char *tracer_var(const char *name)
{
	if (tracer_vars_more)
		return env_get(name);
	size_t l = strlen(name);
	for (size_t i = 0; i < ntracer_vars; i++)
		if (!strncmp(tracer_vars[i], name, l) && tracer_vars[i][l] == '=')
			return tracer_vars[i] + l + 1;
	return NULL;
}

static void parse_table(const struct tr_settings *t)
{
	const char *v, *accepted;
	for (unsigned i = 0; i < t->n; i++) {
		const struct tr_setting *e = &t->list[i];
		if (!e->set && !e->on_off)
			continue;
		if (!(v = tracer_var(e->name)))
			continue;
		if (e->set)
			accepted = e->set(v);
		else
			accepted = tr_cfg_parse_bool(v, e->on_off) ? TR_CFG_BOOL_TEXT : NULL;
		if (accepted)
			tr_log_warn("invalid %s='%s' (accepted: %s); using %s", t->list[i].name, v, accepted,
				    t->list[i].dflt);
	}
}

void tr_settings_register(const struct tr_settings *s)
{
	if (!s)
		return;
	tr_lock(&tables_lock);
	for (unsigned i = 0; i < ntables; i++) {
		if (tables[i] == s) {
			tr_unlock(&tables_lock);
			return;   /* registered already (a call before its constructor) */
		}
	}
	if (ntables >= TR_MAX_SETTINGS) {
		tr_unlock(&tables_lock);
		tr_log_error("too many settings tables: %s ignored", s->owner);
		return;
	}
	tables[ntables++] = s;
	scan_tracer_vars();
	parse_table(s);
	tr_unlock(&tables_lock);
}

void tr_cfg_load(void)
{
	scan_tracer_vars();
	parse_table(&core_settings);
	if (tr_cfg.buffer_bytes < tr_cfg.chunk_bytes)
		tr_cfg.buffer_bytes = tr_cfg.chunk_bytes;
	tr_proc.rank = tr_cfg.mpi ? tr_env_rank() : -1;
	tr_proc.size = tr_proc.rank >= 0 ? env_size() : 0;
}

/* Unknown TRACER_* variables: one warning each, once every table is
 * registered (the last constructor: tr_modules_start). */
void tr_cfg_check_unknown(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	scan_tracer_vars();
	tr_lock(&tables_lock);
	for (char **e = tr_env; e && *e; e++) {
		if ((*e)[0] != 'T' || strncmp(*e, "TRACER_", 7))
			continue;
		size_t n = strcspn(*e, "=");
		int known = 0;
		for (unsigned k = 0; k < ntables && !known; k++)
			for (unsigned i = 0; i < tables[k]->n && !known; i++)
				known = strlen(tables[k]->list[i].name) == n && !strncmp(*e, tables[k]->list[i].name, n);
		if (!known)
			tr_log_warn("unknown variable %.*s ignored (misspelt? the TRACER_* settings are listed by tracer-run --help)", (int)n, *e);
	}
	tr_unlock(&tables_lock);
}

/* For the other files of preload/ (the only code reading the environment). */
const char *tr_getenv(const char *name)
{
	if (!tr_env)
		env_init();
	return env_get(name);
}
