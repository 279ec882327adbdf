/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fmt_bytes DIR TRACE_ID REALTIME - writes with our writer exactly what the
 * reference Python writer writes for the small trace of otf2-format.md §8.1
 * (check_bytes.py writes that one and compares the files byte by byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "otf2w.h"

static otf2w_archive *ar;

static void ck(otf2w_status st, const char *what)
{
	if (st == OTF2W_OK)
		return;
	fprintf(stderr, "fmt_bytes: %s: %s (%s)\n", what, otf2w_status_str(st),
		ar ? otf2w_archive_error(ar) : "");
	exit(1);
}

int main(int argc, char **argv)
{
	otf2w_archive_params p;
	otf2w_gdef_writer *g;
	otf2w_def_writer *d;
	otf2w_evt_writer *w;
	otf2w_attr_list *al;

	if (argc != 4) {
		fprintf(stderr, "usage: fmt_bytes DIR TRACE_ID REALTIME\n");
		return 2;
	}
	memset(&p, 0, sizeof(p));
	p.path = argv[1];                 /* defaults: traces, 1 MiB / 4 MiB chunks */
	ck(otf2w_archive_open(&p, &ar), "open");
	ck(otf2w_archive_set_trace_id(ar, strtoull(argv[2], NULL, 0)), "trace id");
	ck(otf2w_archive_get_gdef_writer(ar, &g), "gdef writer");
	/* the order in which the Python writer emits its definitions */
	ck(otf2w_gdef_clock_properties(g, 1000000000, 1000, 1000, strtoull(argv[3], NULL, 0)), "cp");
	ck(otf2w_gdef_string(g, 0, ""), "s0");
	ck(otf2w_gdef_string(g, 1, "bytes"), "s1");
	ck(otf2w_gdef_string(g, 2, "payload size"), "s2");
	ck(otf2w_gdef_attribute(g, 0, 1, 2, OTF2W_TYPE_UINT64), "attr");
	ck(otf2w_gdef_string(g, 3, "node"), "s3");
	ck(otf2w_gdef_system_tree_node(g, 0, 3, 0, OTF2W_UNDEFINED_REF), "stn");
	ck(otf2w_gdef_string(g, 4, "proc"), "s4");
	ck(otf2w_gdef_location_group(g, 0, 4, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF), "lg");
	ck(otf2w_gdef_string(g, 5, "thread 0"), "s5");
	ck(otf2w_gdef_location(g, 0, 5, OTF2W_LOC_CPU_THREAD, 2, 0), "loc");
	ck(otf2w_gdef_string(g, 6, "main"), "s6");
	ck(otf2w_gdef_region(g, 0, 6, 6, 0, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER,
			     OTF2W_REGION_FLAG_NONE, OTF2W_UNDEFINED_REF, 0, 0), "region");

	ck(otf2w_archive_get_evt_writer(ar, 0, &w), "evt writer");
	al = otf2w_attr_list_new();
	if (!al)
		ck(OTF2W_E_NO_MEMORY, "attr list");
	ck(otf2w_attr_list_add_uint64(al, 0, 42), "attr add");
	ck(otf2w_evt_enter(w, al, 1000, 0), "enter");
	ck(otf2w_evt_leave(w, NULL, 2000, 0), "leave");
	ck(otf2w_archive_close_evt_writer(ar, w), "close evt");
	/* the Python writer gives every location an empty local definition file */
	ck(otf2w_archive_get_def_writer(ar, 0, &d), "def writer");
	ck(otf2w_archive_close_def_writer(ar, d), "close def");
	otf2w_attr_list_delete(al);
	ck(otf2w_archive_close(ar), "close");
	return 0;
}
