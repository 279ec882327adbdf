/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_metric.c - relative metrics in `tracer report` (RELATIVE_* members:
 * a change over an interval, e.g. the MPI polls folded by
 * TRACER_MPI_POLLING=fold, the character I/O folded by TRACER_IO_CHARS):
 * the sums report.c keeps per thread, as text and JSON. A value at a
 * region's Enter and Leave means nothing for them, so they are not in the
 * "Metrics per region" table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

static const char *member_name(const struct rep *r, size_t m, const char **unit)
{
	static char ubuf[96];
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_MEMBER, r->mm_ids[m]);
	*unit = d ? otf2r_string(r->ar, d->u.metric_member.unit) : NULL;
	if (!*unit)
		*unit = "";
	if (d && d->u.metric_member.exponent) {   /* base 10: s x 10^-9 = ns */
		static const char *const pre[] = { "n", "u", "m" };
		int64_t e = d->u.metric_member.exponent;
		if (d->u.metric_member.base == 1 && (e == -9 || e == -6 || e == -3))
			snprintf(ubuf, sizeof ubuf, "%s%s", pre[(e + 9) / 3], *unit);
		else
			snprintf(ubuf, sizeof ubuf, "%s x %d^%lld", *unit, d->u.metric_member.base ? 10 : 2,
				 (long long)e);
		*unit = ubuf;
	}
	const char *n = d ? otf2r_string(r->ar, d->u.metric_member.name) : NULL;
	return n ? n : "?";
}

static double member_total(const struct rep *r, size_t m)
{
	double t = 0;
	for (size_t i = 0; i < r->nlocs; i++)
		t += r->locs[i].msum[m];
	return t;
}

void rep_metric_totals_text(const struct rep *r, FILE *f)
{
	int head = 0;
	for (size_t m = 0; m < r->nmm; m++) {
		if (!r->mm_rel[m])
			continue;
		const char *unit, *name = member_name(r, m, &unit);
		for (size_t i = 0; i < r->nlocs; i++) {
			if (!r->locs[i].msum[m])
				continue;
			if (!head++) {
				fprintf(f, "\nMetric totals (relative metrics, e.g. MPI polls and character I/O folded: "
					"the sum of their values):\n");
				fprintf(f, "  %-32s %-12s %-24s %18s\n", "metric", "unit", "location", "sum");
			}
			char loc[64];
			snprintf(loc, sizeof loc, "%" PRIu64 " %s", r->locs[i].id, r->locs[i].name);
			fprintf(f, "  %-32.32s %-12.12s %-24.24s %18.17g\n", name, unit, loc, r->locs[i].msum[m]);
		}
		if (head)
			fprintf(f, "  %-32.32s %-12.12s %-24s %18.17g\n", name, unit, "(all)", member_total(r, m));
	}
}

void rep_metric_totals_json(const struct rep *r, FILE *f)
{
	fputs(",\"metric_totals\":[", f);
	for (size_t m = 0, k = 0; m < r->nmm; m++) {
		if (!r->mm_rel[m] || !member_total(r, m))
			continue;
		const char *unit, *name = member_name(r, m, &unit);
		fprintf(f, "%s{\"member\":%" PRIu32 ",\"name\":", k++ ? "," : "", r->mm_ids[m]);
		rep_json_str(f, name);
		fprintf(f, ",\"total\":%.17g,\"locations\":[", member_total(r, m));
		for (size_t i = 0, n = 0; i < r->nlocs; i++)
			if (r->locs[i].msum[m])
				fprintf(f, "%s[%" PRIu64 ",%.17g]", n++ ? "," : "", r->locs[i].id, r->locs[i].msum[m]);
		fputs("]}", f);
	}
	fputc(']', f);
}
