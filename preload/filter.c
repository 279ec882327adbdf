/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter.c - TRACER_FILTER: region names or globs, one per line.
 *
 *   # comment
 *   -name | exclude name     exclude regions matching (fnmatch glob)
 *   +name | include name     include regions matching
 *   name                     (no prefix) exclude
 * The last matching line wins; no match: recorded. Evaluated once per region
 * at definition time into a bitmap the hot path tests with one load.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tr_int.h"

uint8_t tr_filter_bits[TR_FILTER_CAP / 8];
int tr_filter_active;

struct rule {
	int exclude;
	char *pat;
};
static struct rule *tr_rules;
static int tr_nrules;

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

void tr_filter_load(void)
{
	if (!tr_cfg.filter[0])
		return;
	FILE *f = fopen(tr_cfg.filter, "re");
	if (!f) {
		tr_log_error("TRACER_FILTER=%s: cannot read the file (%m); no filter applied", tr_cfg.filter);
		return;
	}
	char line[4096];
	int lineno = 0, bad = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		int exclude = 1;
		if (*s == '-' || *s == '+') {
			exclude = *s == '-';
			s = trim(s + 1);
		} else if (!strncmp(s, "exclude", 7) && isspace((unsigned char)s[7])) {
			s = trim(s + 7);
		} else if (!strncmp(s, "include", 7) && isspace((unsigned char)s[7])) {
			exclude = 0;
			s = trim(s + 7);
		}
		if (!*s) {
			if (!bad++)
				tr_log_warn("TRACER_FILTER=%s:%d: empty pattern ignored", tr_cfg.filter, lineno);
			continue;
		}
		struct rule *nr = realloc(tr_rules, (size_t)(tr_nrules + 1) * sizeof(*nr));
		if (!nr)
			break;
		tr_rules = nr;
		tr_rules[tr_nrules].exclude = exclude;
		tr_rules[tr_nrules].pat = tr_xstrdup(s);
		if (tr_rules[tr_nrules].pat)
			tr_nrules++;
	}
	fclose(f);
	tr_filter_active = tr_nrules > 0;
	tr_log_debug("TRACER_FILTER=%s: %d rules", tr_cfg.filter, tr_nrules);
}

void tr_filter_region_defined(uint32_t region, const char *name)
{
	if (!tr_filter_active || region >= TR_FILTER_CAP)
		return;
	int exclude = 0;
	for (int i = 0; i < tr_nrules; i++)
		if (fnmatch(tr_rules[i].pat, name, 0) == 0)
			exclude = tr_rules[i].exclude;
	if (exclude)
		__atomic_fetch_or(&tr_filter_bits[region >> 3], (uint8_t)(1u << (region & 7)), __ATOMIC_RELAXED);
}

int tr_region_filtered(uint32_t region)
{
	return tr_region_is_filtered(region);
}
