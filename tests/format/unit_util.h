/* SPDX-License-Identifier: BSD-3-Clause */
/* unit_util.h - helpers for the format/ unit tests. */
#ifndef UNIT_UTIL_H
#define UNIT_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otf2w.h"

/* A fresh empty directory name under $TMPDIR (not created). */
static inline void ut_tmpdir(char *out, size_t n, const char *tag)
{
	const char *t = getenv("TMPDIR");
	static int seq;
	snprintf(out, n, "%s/otf2w_unit_%s_%d_%d", t ? t : "/tmp", tag, (int)getpid(), seq++);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
	if (system(cmd) != 0)
		abort();
}

static inline void ut_rmrf(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		abort();
}

static inline int ut_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* Whole file into memory; *len set; NULL if missing. */
static inline uint8_t *ut_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Run a shell command, capture stdout (malloc'd), exit status in *rc. */
static inline char *ut_run(const char *cmd, int *rc)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	size_t r;
	while ((r = fread(out + n, 1, cap - n - 1, p)) > 0) {
		n += r;
		if (cap - n < 4096) {
			cap *= 2;
			out = realloc(out, cap);
		}
	}
	out[n] = 0;
	int st = pclose(p);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

/* Number of lines of `otf2-print` output for archive DIR containing word. */
static inline long ut_count(const char *text, const char *word)
{
	/* no strstr: sanitizers make repeated strstr on a big text quadratic */
	long c = 0;
	size_t wl = strlen(word), tl = strlen(text);
	for (size_t i = 0; i + wl <= tl; i++) {
		if (text[i] == word[0] && memcmp(text + i, word, wl) == 0) {
			c++;
			i += wl - 1;
		}
	}
	return c;
}

/* otf2-print -Werror of DIR/traces.otf2 (stderr merged). */
static inline char *ut_print(const char *dir, const char *opts, int *rc)
{
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "otf2-print -Werror %s '%s/traces.otf2' 2>&1", opts, dir);
	return ut_run(cmd, rc);
}

/* Minimal global definitions for nloc locations 0..nloc-1 and nreg regions. */
static inline void ut_defs(otf2w_archive *ar, int nloc, int nreg)
{
	otf2w_gdef_writer *g;
	char buf[64];
	if (otf2w_archive_get_gdef_writer(ar, &g))
		abort();
	otf2w_gdef_clock_properties(g, 1000000000, 0, 1000000000, OTF2W_UNDEFINED_UINT64);
	otf2w_gdef_string(g, 0, "");
	otf2w_gdef_string(g, 1, "node");
	otf2w_gdef_system_tree_node(g, 0, 1, 0, OTF2W_UNDEFINED_REF);
	otf2w_gdef_location_group(g, 0, 1, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF);
	for (int l = 0; l < nloc; l++)
		otf2w_gdef_location(g, (uint64_t)l, 1, OTF2W_LOC_CPU_THREAD, 0, 0);
	for (int r = 0; r < nreg; r++) {
		snprintf(buf, sizeof(buf), "region%d", r);
		otf2w_gdef_string(g, 2 + (uint32_t)r, buf);
		otf2w_gdef_region(g, (uint32_t)r, 2 + (uint32_t)r, 2 + (uint32_t)r, 0,
				  OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, OTF2W_UNDEFINED_REF, 0, 0);
	}
}

#endif
