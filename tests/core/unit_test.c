/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit_test.c - criterion unit tests of preload/ linked as a library (the
 * objects of tr_preload; tr_tool_mode keeps the constructor from tracing
 * the test runner): option parsers, registry deduplication and dense ids,
 * pack / merge / install round trips.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "tr_int.h"

int tr_tool_mode = 1;

Test(config, sizes)
{
	uint64_t v;
	cr_assert_eq(tr_cfg_parse_size("16M", &v), 0);
	cr_assert_eq(v, 16ull << 20);
	cr_assert_eq(tr_cfg_parse_size("512k", &v), 0);
	cr_assert_eq(v, 512ull << 10);
	cr_assert_eq(tr_cfg_parse_size("1GiB", &v), 0);
	cr_assert_eq(v, 1ull << 30);
	cr_assert_eq(tr_cfg_parse_size("4096", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(tr_cfg_parse_size("lots", &v), -1);
	cr_assert_eq(tr_cfg_parse_size("12Q", &v), -1);
	cr_assert_eq(tr_cfg_parse_size("", &v), -1);
	cr_assert_eq(tr_cfg_parse_size("-1M", &v), -1);
	cr_assert_eq(tr_cfg_parse_size("99999999999999999999G", &v), -1);
}

Test(config, durations)
{
	uint64_t ns;
	cr_assert_eq(tr_cfg_parse_duration("1ms", &ns), 0);
	cr_assert_eq(ns, 1000000);
	cr_assert_eq(tr_cfg_parse_duration("250us", &ns), 0);
	cr_assert_eq(ns, 250000);
	cr_assert_eq(tr_cfg_parse_duration("1000Hz", &ns), 0);
	cr_assert_eq(ns, 1000000);
	cr_assert_eq(tr_cfg_parse_duration("2s", &ns), 0);
	cr_assert_eq(ns, 2000000000ull);
	cr_assert_eq(tr_cfg_parse_duration("0Hz", &ns), -1);
	cr_assert_eq(tr_cfg_parse_duration("fast", &ns), -1);
	cr_assert_eq(tr_cfg_parse_duration("1 parsec", &ns), -1);
}

Test(config, bools)
{
	int b;
	const char *yes[] = { "on", "1", "yes", "TRUE" }, *no[] = { "off", "0", "no", "false" };
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(tr_cfg_parse_bool(yes[i], &b), 0);
		cr_assert_eq(b, 1);
		cr_assert_eq(tr_cfg_parse_bool(no[i], &b), 0);
		cr_assert_eq(b, 0);
	}
	cr_assert_eq(tr_cfg_parse_bool("maybe", &b), -1);
}

Test(registry, dedup_and_dense_ids)
{
	tr_defs_init();
	uint32_t s1 = tr_def_string("alpha"), s2 = tr_def_string("beta");
	cr_assert_eq(tr_def_string("alpha"), s1);
	cr_assert_eq(s2, s1 + 1);
	uint32_t r0 = tr_def_region("f", NULL, NULL, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, NULL, 0, 0);
	uint32_t r1 = tr_def_region("g", NULL, NULL, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, NULL, 0, 0);
	cr_assert_eq(r0, 0);
	cr_assert_eq(r1, 1);
	cr_assert_eq(tr_def_region("f", NULL, NULL, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, NULL, 0, 0), r0);
	/* a different attribute of the same name is another region */
	cr_assert_eq(tr_def_region("f", NULL, NULL, OTF2W_ROLE_WRAPPER, OTF2W_PARADIGM_USER, 0, NULL, 0, 0), 2);
	uint64_t m[2] = { 0, 1 };
	uint32_t g = tr_def_group("g", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, 0, 2, m);
	cr_assert_eq(tr_def_group("g", OTF2W_GROUP_COMM_GROUP, OTF2W_PARADIGM_MPI, 0, 2, m), g);
	uint32_t c = tr_def_comm("world", g, OTF2W_UNDEFINED_REF, 0);
	uint32_t ic = tr_def_inter_comm("inter", g, g, c, 0);
	cr_assert_eq(ic, c + 1, "Comm and InterComm share one id space");
	uint32_t tc = tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, "threads");
	cr_assert_eq(tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, "other name"), tc);
	cr_assert_eq(tr_defs_count(TR_DEF_REGION), 3);
}

/* pack -> merge(one input) -> install: every id maps to itself. */
Test(registry, pack_merge_install_identity)
{
	tr_defs_init();
	tr_def_region("main", NULL, NULL, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, "a.c", 1, 9);
	tr_def_thread_comm(OTF2W_PARADIGM_PTHREAD, "threads");
	void *buf, *u;
	size_t len, ulen;
	cr_assert_eq(tr_defs_pack(&buf, &len), 0);
	const void *bufs[1] = { buf };
	cr_assert_eq(tr_defs_merge(bufs, &len, 1, &u, &ulen), 0);
	struct tr_mapped m;
	cr_assert_eq(tr_defs_map_buf(u, ulen, buf, len, &m), 0, "all local definitions found");
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		for (uint32_t i = 0; i < m.n[c]; i++)
			cr_assert_eq(m.map[c][i], i, "class %d id %u maps to %u", c, i, m.map[c][i]);
	tr_defs_mapped_free(&m);
	/* deterministic: merging twice gives the same bytes */
	void *u2;
	size_t ulen2;
	cr_assert_eq(tr_defs_merge(bufs, &len, 1, &u2, &ulen2), 0);
	cr_assert_eq(ulen2, ulen);
	cr_assert_eq(memcmp(u, u2, ulen), 0);
	free(buf);
	free(u);
	free(u2);
}

Test(registry, merge_rejects_garbage)
{
	char junk[64] = "not a definition buffer";
	const void *bufs[1] = { junk };
	size_t len = sizeof(junk);
	void *u;
	size_t ulen;
	/* unreadable input is skipped; the result is a valid (empty) set */
	cr_assert_eq(tr_defs_merge(bufs, &len, 1, &u, &ulen), 0);
	struct tr_mapped m;
	cr_assert_lt(tr_defs_map_buf(u, ulen, junk, len, &m), 0);
	free(u);
}
