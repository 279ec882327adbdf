/* SPDX-License-Identifier: BSD-3-Clause */
/* otf2r_dump - print an archive as read by otf2r, one record a line, for
 * comparison with the reference reader (oracle_dump.py):
 *   otf2r_dump [--per-location] ARCHIVE
 * DEF <Name> field=value...      global definitions, file order
 * LDEF <loc> <Name> field=value... local definitions
 * EVT <loc> <time> <Name> field=value... [attr=id:type:value...]
 * SNAP <loc> <time> <Name> field=value... [attr=...]   snapshot records
 * MARKER <Name> field=value...                          marker file
 * Events in global time order (default) or location by location. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "otf2r.h"

static char line[1 << 20];

static int ldef(void *ud, unsigned type, const union otf2r_ldef_u *u)
{
	otf2r_ldef_format(type, u, line, sizeof line);
	printf("LDEF %" PRIu64 " %s%s\n", *(uint64_t *)ud, otf2r_ldef_name(type), line);
	return 0;
}

static int marker(void *ud, unsigned type, const union otf2r_marker_u *u)
{
	(void)ud;
	otf2r_marker_format(type, u, line, sizeof line);
	printf("MARKER %s%s\n", otf2r_marker_name(type), line);
	return 0;
}

static void attrs(uint32_t n, const otf2r_attr *a)
{
	for (uint32_t i = 0; i < n; i++)
		printf(" attr=%" PRIu32 ":%u:%" PRIu64, a[i].id, a[i].type, a[i].value);
	putchar('\n');
}

static int snapshots(otf2r_archive *ar)
{
	if (!otf2r_anchor_info(ar)->number_of_snapshots)
		return 0;
	int rc = 0;
	for (size_t i = 0; i < otf2r_location_count(ar) && rc == 0; i++) {
		otf2r_evt_reader *r;
		otf2r_snap_event sv;
		if (otf2r_snap_open(ar, otf2r_location_at(ar, i)->self, &r))
			return -1;
		while ((rc = otf2r_snap_next(r, &sv)) > 0) {
			otf2r_snap_format(sv.type, &sv.u, line, sizeof line);
			printf("SNAP %" PRIu64 " %" PRIu64 " %s%s", sv.location, sv.time,
			       otf2r_snap_name(sv.type), line);
			attrs(sv.nattrs, sv.attrs);
		}
		otf2r_evt_close(r);
	}
	return rc;
}

static void event(const otf2r_event *ev)
{
	otf2r_evt_format(ev->type, &ev->u, line, sizeof line);
	printf("EVT %" PRIu64 " %" PRIu64 " %s%s", ev->location, ev->time,
	       otf2r_evt_name(ev->type), line);
	attrs(ev->nattrs, ev->attrs);
}

int main(int argc, char **argv)
{
	int per_loc = argc > 2 && strcmp(argv[1], "--per-location") == 0;
	if (argc != 2 + per_loc) {
		fprintf(stderr, "usage: otf2r_dump [--per-location] ARCHIVE\n");
		return 2;
	}
	char err[4096];
	otf2r_archive *ar;
	if (otf2r_open(argv[argc - 1], &ar, err, sizeof err)) {
		fprintf(stderr, "otf2r_dump: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < otf2r_def_count(ar); i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		otf2r_gdef_format(d->type, &d->u, line, sizeof line);
		printf("DEF %s%s\n", otf2r_gdef_name(d->type), line);
	}
	int rc = 0;
	for (size_t i = 0; i < otf2r_location_count(ar); i++) {
		uint64_t loc = otf2r_location_at(ar, i)->self;
		if (otf2r_read_local_defs(ar, loc, ldef, &loc))
			rc = -1;
	}
	otf2r_event ev;
	if (per_loc) {
		for (size_t i = 0; i < otf2r_location_count(ar) && rc == 0; i++) {
			otf2r_evt_reader *r;
			if (otf2r_evt_open(ar, otf2r_location_at(ar, i)->self, &r)) {
				rc = -1;
				break;
			}
			while ((rc = otf2r_evt_next(r, &ev)) > 0)
				event(&ev);
			otf2r_evt_close(r);
		}
	} else {
		otf2r_merge *m;
		if (rc == 0 && otf2r_merge_open(ar, NULL, 0, &m) == 0) {
			while ((rc = otf2r_merge_next(m, &ev)) > 0)
				event(&ev);
			otf2r_merge_close(m);
		} else {
			rc = -1;
		}
	}
	if (rc == 0)
		rc = snapshots(ar);
	if (rc == 0)
		rc = otf2r_read_markers(ar, marker, NULL);
	if (rc < 0)
		fprintf(stderr, "otf2r_dump: %s\n", otf2r_error(ar));
	otf2r_close(ar);
	return rc < 0 ? 1 : 0;
}
