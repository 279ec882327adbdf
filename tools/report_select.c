/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_select.c - what `tracer report` and `tracer convert` cover: a time
 * window (--from/--to) and locations (--thread, --rank). report.c and
 * convert.c apply them in their pass over the events.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int select_time(const char *s, double *v, int *pct)
{
	char *end;
	*v = strtod(s, &end);
	*pct = *end == '%';
	if (end == s || *v < 0 || *v != *v || (*pct && (end[1] || *v > 100)) || (!*pct && *end))
		return -1;
	return 0;
}

static int select_id(const char *s, uint64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return *end ? -1 : 0;
}

int rep_select_option(struct rep_select *s, int c, const char *arg, const char *cmd)
{
	uint64_t id;
	switch (c) {
	case 'F':
	case 'T':
		if (select_time(arg, c == 'F' ? &s->from : &s->to, c == 'F' ? &s->from_pct : &s->to_pct)) {
			fprintf(stderr, "tracer %s: --%s wants seconds from the start or a percentage (2.5, 40%%), "
				"not '%s'\n", cmd, c == 'F' ? "from" : "to", arg);
			return 2;
		}
		*(c == 'F' ? &s->from_s : &s->to_s) = arg;
		s->on = 1;
		return 0;
	case 'U':
	case 'R':
		if (select_id(arg, &id) || (c == 'R' && id > UINT32_MAX)) {
			fprintf(stderr, "tracer %s: --%s wants a %s id, not '%s'\n", cmd, c == 'U' ? "thread" : "rank",
				c == 'U' ? "location" : "location group", arg);
			return 2;
		}
		if ((c == 'U' ? s->nthreads : s->nranks) == REP_SEL_MAX) {
			fprintf(stderr, "tracer %s: at most %d --%s\n", cmd, REP_SEL_MAX, c == 'U' ? "thread" : "rank");
			return 2;
		}
		if (c == 'U')
			s->threads[s->nthreads++] = id;
		else
			s->ranks[s->nranks++] = (uint32_t)id;
		return 0;
	}
	return 2;
}

static int select_locations(struct rep *r, const struct rep_select *s)
{
	if (!s->nthreads && !s->nranks)
		return 0;
	r->sel = rep_xcalloc(r->nlocs + 1, 1);
	for (size_t k = 0; k < s->nthreads; k++) {
		size_t i = 0;
		while (i < r->nlocs && r->locs[i].id != s->threads[k])
			i++;
		if (i == r->nlocs) {
			fprintf(stderr, "tracer: --thread %" PRIu64 ": %s has no such location (its ids:", s->threads[k],
				otf2r_path(r->ar));
			for (i = 0; i < r->nlocs && i < 16; i++)
				fprintf(stderr, " %" PRIu64, r->locs[i].id);
			fprintf(stderr, "%s)\n", r->nlocs > 16 ? " ..." : "");
			return -1;
		}
		r->sel[i] = 1;
	}
	for (size_t k = 0; k < s->nranks; k++) {
		int found = 0;
		for (size_t i = 0; i < r->nlocs; i++)
			if (r->locs[i].group < r->ngroups && r->groups[r->locs[i].group].id == s->ranks[k])
				r->sel[i] = 1, found = 1;
		if (!found) {
			fprintf(stderr, "tracer: --rank %" PRIu32 ": %s has no such process (location group; its ids:",
				s->ranks[k], otf2r_path(r->ar));
			for (size_t g = 0; g < r->ngroups && g < 16; g++)
				fprintf(stderr, " %" PRIu32, r->groups[g].id);
			fprintf(stderr, "%s)\n", r->ngroups > 16 ? " ..." : "");
			return -1;
		}
	}
	/* the others are left out of every table: the pass skips the events
	 * of locations it does not have */
	size_t n = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		if (r->sel[i]) {
			r->locs[n++] = r->locs[i];
			continue;
		}
		r->groups[r->locs[i].group].nlocs--;
		free(r->locs[i].reg);
		free(r->locs[i].active);
		free(r->locs[i].mcur);
		free(r->locs[i].msum);
		free(r->locs[i].mhave);
	}
	r->nlocs = n;
	memset(r->sel, 1, n);
	return 0;
}

int rep_select_set(struct rep *r, const struct rep_select *s)
{
	r->win_from = 0;
	r->win_to = UINT64_MAX;
	if (!s)
		return 0;
	if (select_locations(r, s))
		return -1;
	if (!s->on)
		return 0;
	const otf2r_gdef_clock_properties *cp = otf2r_clock(r->ar);
	uint64_t start = r->offset, len = cp ? cp->trace_length : 0;
	double ends[2] = { s->from, s->to };
	int pct[2] = { s->from_pct, s->to_pct };
	uint64_t t[2];
	for (int i = 0; i < 2; i++) {
		double v = pct[i] ? ends[i] / 100.0 * (double)len : ends[i] * (double)r->resolution;
		t[i] = ends[i] < 0 ? UINT64_MAX : start + (uint64_t)(v + 0.5);
	}
	r->win_from = t[0];
	r->win_to = t[1];
	r->windowed = 1;
	if (r->win_to <= r->win_from) {
		fprintf(stderr, "tracer: --from %s is not before --to %s\n", s->from_s, s->to_s);
		return -1;
	}
	return 0;
}
