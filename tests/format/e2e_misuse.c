/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e2e_misuse.c - end-to-end tests of the OTF2 writer on malformed use:
 * out-of-order timestamps, calls in the wrong order, NULL and invalid
 * arguments, an unwritable directory, a bad anchor property, an existing
 * archive opened exclusively, a record too large, an empty mapping table.
 */
#include "e2e.h"

/* ---- malformed use ------------------------------------------------------------------------ */

Test(misuse, out_of_order_timestamps)
{
	char *dir = tmpdir("order");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_evt_writer *w;
	uint64_t loc = 0;
	struct oracle_loc ol = { .loc = 0, .time_div = 1 };
	char anchor[4096], err[512];

	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 100, 0));
	cr_assert_eq(otf2w_evt_enter(w, NULL, 99, 0), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_mpi_send(w, NULL, 5, 1, 0, 2, 3), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 0, 0), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_writer_last_time(w), 100);
	OK(otf2w_evt_leave(w, NULL, 100, 0));     /* equal time is fine */
	cr_assert_eq(otf2w_evt_writer_count(w), 2);
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	anchor_of(anchor, sizeof(anchor), dir);
	cr_assert_eq(oracle_read(anchor, &ol, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ol.records, 2, "%lu records, expected Enter and Leave at 100",
		     (unsigned long)ol.records);
	cr_assert_eq(ol.nseq, 2);
	cr_assert_eq(ol.backwards, 0);
	cr_assert_eq(ol.last_time, 100);
	otf2_print_ok(dir);
	rmtree(dir);
}

Test(misuse, wrong_order_of_calls)
{
	char *dir = tmpdir("calls");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_evt_writer *w, *w2;
	otf2w_status st;
	uint64_t loc = 0;
	static const otf2w_locking_callbacks cb = { NULL, NULL, lk_lock, lk_unlock };
	struct lockstat ls = { .m = PTHREAD_MUTEX_INITIALIZER };

	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w2));
	cr_assert_eq(w, w2, "two writers for one location");
	/* locking callbacks after the first writer: too late */
	cr_assert_eq(otf2w_archive_set_locking(ar, &cb, &ls), OTF2W_E_INVALID_CALL);
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_evt_leave(w, NULL, 2, 0), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_mpi_recv(w, NULL, 3, 0, 0, 0, 0), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_writer_flush(w), OTF2W_E_INVALID_CALL);
	st = otf2w_archive_close_evt_writer(ar, w);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_INVALID_CALL, "second close: %s",
		  otf2w_status_str(st));
	cr_assert_eq(otf2w_evt_writer_count(w), 1);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2_print_ok(dir);
	rmtree(dir);
}

Test(misuse, null_and_invalid_arguments)
{
	char *dir = tmpdir("null");
	otf2w_archive_params p;
	otf2w_archive *ar = NULL;
	otf2w_evt_writer *w;
	otf2w_gdef_writer *g;
	otf2w_status st;
	uint64_t loc = 0;

	memset(&p, 0, sizeof(p));
	cr_assert_eq(otf2w_archive_open(NULL, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);  /* no path */
	p.path = dir;
	p.event_chunk_size = 1000;                   /* below 256 KiB */
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.event_chunk_size = 1ull << 25;             /* above 16 MiB */
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.event_chunk_size = 0;
	p.def_chunk_size = 262143;
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.def_chunk_size = 0;
	p.name = "a/b";
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_null(ar);

	ar = open_archive(dir, 0, 0);
	cr_assert_eq(otf2w_archive_get_evt_writer(NULL, 0, &w), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, NULL), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_mpi_send(NULL, NULL, 1, 0, 0, 0, 0), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_close_evt_writer(ar, NULL), OTF2W_E_INVALID_ARGUMENT);
	OK(otf2w_archive_get_gdef_writer(ar, &g));
	/* a NULL string: refused, or written as "" (checked below) */
	st = otf2w_gdef_string(g, 999, NULL);
	cr_assert(st == OTF2W_E_INVALID_ARGUMENT || st == OTF2W_OK,
		  "String def with a NULL string: %s", otf2w_status_str(st));
	cr_assert_eq(otf2w_gdef_string(NULL, 0, "x"), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_set_trace_id(NULL, 1), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_attr_list_add(NULL, 0, OTF2W_TYPE_UINT8, 1), OTF2W_E_INVALID_ARGUMENT);
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	OK(otf2w_evt_leave(w, NULL, 2, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);  /* closes the open writer */
	otf2_print_ok(dir);
	if (st == OTF2W_OK)
		cr_assert_eq(sh("otf2-print -G '%s/traces.otf2' | grep -Eq '^STRING +999  \"\"$'",
				dir), 0, "NULL string accepted but not written as \"\"");
	rmtree(dir);
}

/* the inline Enter/Leave fast path must also refuse a NULL writer (otf2w.h:
 * "NULL writer" -> OTF2W_E_INVALID_ARGUMENT) */
Test(misuse, null_writer_enter_leave)
{
	cr_assert_eq(otf2w_evt_enter(NULL, NULL, 1, 0), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_leave(NULL, NULL, 1, 0), OTF2W_E_INVALID_ARGUMENT);
}

Test(misuse, unwritable_directory_reports_path)
{
	char *dir = tmpdir("unwritable");
	char file[4096], path[4200];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	otf2w_status st;
	uint64_t loc = 0;
	const char *e;
	FILE *f;

	/* a path below a regular file can never be created (even as root) */
	snprintf(file, sizeof(file), "%s/plainfile", dir);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub/archive", file);
	{
		otf2w_archive_params p = { .path = path };

		st = otf2w_archive_open(&p, &ar);
		if (st != OTF2W_OK) {      /* may fail right away */
			cr_assert_eq(st, OTF2W_E_IO, "open: %s", otf2w_status_str(st));
			rmtree(dir);
			return;
		}
	}
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	st = otf2w_evt_enter(w, NULL, 1, 0);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_IO, "enter: %s", otf2w_status_str(st));
	st = otf2w_evt_writer_flush(w);
	cr_assert_eq(st, OTF2W_E_IO, "flush to an impossible directory: %s", otf2w_status_str(st));
	e = otf2w_archive_error(ar);
	cr_assert_not_null(e);
	cr_assert(strstr(e, file) != NULL, "error text without the path: \"%s\"", e);
	cr_assert(strstr(e, strerror(ENOTDIR)) != NULL, "error text without errno text: \"%s\"", e);
	/* further use: statuses, no crash */
	st = otf2w_evt_leave(w, NULL, 2, 0);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_IO || st == OTF2W_E_STOPPED, "leave: %s",
		  otf2w_status_str(st));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_E_IO);
	rmtree(dir);
}

Test(misuse, invalid_anchor_property_rejected)
{
	static const char *const bad[] = {
		"", "NOCOLON", "A::", "::B", "A:::B", "A::B::", "A::B C", "A::B-C", "A::ü",
		"A:B", "A::B\n",
	};
	static const char *const good[] = { "A::B", "tracer::config::SAMPLING_hz", "X1::Y_2" };
	char *dir = tmpdir("prop");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	uint64_t loc = 0;
	otf2w_evt_writer *w;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(otf2w_archive_set_property(ar, bad[i], "v"), OTF2W_E_INVALID_ARGUMENT,
			     "property name \"%s\" accepted", bad[i]);
	cr_assert_eq(otf2w_archive_set_property(ar, NULL, "v"), OTF2W_E_INVALID_ARGUMENT);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		OK(otf2w_archive_set_property(ar, good[i], "value ü"));
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2_print_ok(dir);
	cr_assert_eq(sh("otf2-print -I '%s/traces.otf2' | grep -q 'TRACER::CONFIG::SAMPLING_HZ'",
			dir), 0, "valid property not in the anchor");
	cr_assert_eq(sh("test $(otf2-print -I '%s/traces.otf2' | grep -c '^Property name') -eq 3",
			dir), 0, "anchor does not hold exactly the 3 valid properties");
	rmtree(dir);
}

Test(misuse, exclusive_open_of_existing_archive)
{
	char *dir = tmpdir("excl");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_archive_params p;
	otf2w_archive *ar2 = NULL;
	uint64_t loc = 0;

	gdefs(ar, &loc, 1, 1);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	memset(&p, 0, sizeof(p));
	p.path = dir;
	p.exclusive = 1;
	cr_assert_eq(otf2w_archive_open(&p, &ar2), OTF2W_E_EXISTS);
	cr_assert_null(ar2);
	otf2_print_ok(dir);       /* the location without a writer got an empty .evt */
	rmtree(dir);
}

Test(misuse, record_too_large)
{
	char *dir = tmpdir("large");
	otf2w_archive *ar = open_archive(dir, 262144, 0);
	otf2w_evt_writer *w;
	otf2w_gdef_writer *g;
	uint32_t *args = calloc(100000, sizeof(*args));
	char *big = malloc(300001);
	uint64_t loc = 0;
	struct oracle_loc ol = { .loc = 0, .time_div = 1 };

	cr_assert(args && big);
	memset(big, 'y', 300000);
	big[300000] = 0;
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_gdef_writer(ar, &g));
	/* 300 KB string in a 4 MiB def chunk is fine ... */
	OK(otf2w_gdef_string(g, 100, big));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 0, 0));
	/* ... 100000 x 5-byte string refs in a 256 KiB event chunk is not */
	memset(args, 0xee, 100000 * sizeof(*args));
	cr_assert_eq(otf2w_evt_program_begin(w, NULL, 1, 1, 100000, args),
		     OTF2W_E_RECORD_TOO_LARGE);
	OK(otf2w_evt_leave(w, NULL, 1, 0));
	cr_assert_eq(otf2w_evt_writer_count(w), 2);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	oracle_check(dir, &ol, 1);
	cr_assert_eq(ol.nseq, 2);
	otf2_print_ok(dir);
	free(args);
	free(big);
	rmtree(dir);
}

Test(misuse, empty_mapping_table)
{
	char *dir = tmpdir("emptymap");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_def_writer *d;
	otf2w_evt_writer *w;
	otf2w_id_map *m = otf2w_id_map_new(1, 0);
	otf2w_status st;
	uint64_t loc = 0;

	cr_assert_not_null(m);
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_def_writer(ar, 0, &d));
	/* an empty map makes the reference reader fail: must be refused, or
	 * at least not break the archive */
	st = otf2w_ldef_mapping_table(d, OTF2W_MAP_REGION, m);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_INVALID_ARGUMENT, "%s", otf2w_status_str(st));
	OK(otf2w_archive_close_def_writer(ar, d));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 0, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2w_id_map_delete(m);
	cr_assert_eq(sh("otf2-print -M '%s/traces.otf2' >/dev/null 2>&1", dir), 0,
		     "archive with an empty mapping table is unreadable (st=%s)",
		     otf2w_status_str(st));
	rmtree(dir);
}
