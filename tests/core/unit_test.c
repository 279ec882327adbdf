/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit_test.c - criterion unit tests of preload/ linked as a library (the
 * objects of tr_preload, without its constructors: tr_init_tool, so that
 * nothing traces the test runner): option parsers, registry deduplication and dense ids,
 * pack / merge / install round trips. Memory the core hands out is its
 * heap's (tr_free, preload/core/tr_real.h), never the C library's.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "tr_int.h"

/* Before criterion's main: a lazy start-up in the core starts nothing. */
__attribute__((constructor)) static void tool_mode(void)
{
	tr_init_tool();
}

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
	tr_free(buf);
	tr_free(u);
	tr_free(u2);
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
	tr_free(u);
}

/* ---- modules: fini once, wakeup hook, shadow-stack API ---- */

static int ut_fini_calls, ut_wakeups;
static uint64_t ut_wake_time;
static void ut_fini(void)
{
	ut_fini_calls++;
	tr_def_string("defined at fini");
}
static void ut_wakeup(struct tr_thread *t, uint64_t time)
{
	cr_assert(t->in_record, "wakeup hook runs inside a record");
	ut_wakeups++;
	ut_wake_time = time;
}
static const struct tr_module ut_module = { .name = "unit", .fini = ut_fini, .wakeup = ut_wakeup };

Test(modules, fini_once_and_before_pack)
{
	tr_defs_init();
	tr_module_register(&ut_module);
	tr_g.modules_started = 1;
	tr_g.active = 1;
	void *buf = NULL;
	size_t len = 0;
	cr_assert_eq(ut_fini_calls, 0);
	cr_assert_eq(tr_defs_pack(&buf, &len), 0);
	cr_assert_eq(ut_fini_calls, 1);
	/* the string the fini hook defined existed before packing */
	uint32_t n = tr_defs_count(TR_DEF_STRING);
	cr_assert_lt(tr_def_string("defined at fini"), n);
	cr_assert_eq(tr_defs_count(TR_DEF_STRING), n);
	cr_assert(len > 0 && memmem(buf, len, "defined at fini", 15), "in the packed buffer");
	tr_free(buf);
	tr_modules_fini();
	tr_modules_fini();
	cr_assert_eq(ut_fini_calls, 1, "fini hooks run once");
}

Test(modules, wakeup)
{
	struct tr_thread t;
	memset(&t, 0, sizeof(t));
	tr_module_register(&ut_module);
	tr_g.modules_started = 1;
	t.state = TR_T_ACTIVE;
	uint64_t t0 = tr_time();
	tr_wakeup(&t);
	cr_assert_eq(ut_wakeups, 1);
	cr_assert(ut_wake_time >= t0);
	cr_assert_eq(t.in_record, 0);
	t.off = 1;   /* VT_traceoff: nothing recorded */
	tr_wakeup(&t);
	t.off = 0;
	t.state = TR_T_DYING;
	tr_wakeup(&t);
	cr_assert_eq(ut_wakeups, 1);
}

Test(stack, detach_attach)
{
	struct tr_thread t;
	uint32_t out[8];
	const uint32_t unit[3] = { 7, 8, 9 };
	memset(&t, 0, sizeof(t));
	t.state = TR_T_ACTIVE;
	tr_stack_attach(&t, unit, 2);              /* stream: regions 7 8 */
	uint32_t base = tr_stack_depth(&t);
	cr_assert_eq(base, 2);
	tr_stack_attach(&t, unit + 2, 1);          /* a unit starts: pushes 9 */
	cr_assert_eq(tr_stack_depth(&t), 3);
	cr_assert_eq(tr_stack_detach(&t, base, out, 8), 1);
	cr_assert_eq(out[0], 9);
	cr_assert_eq(tr_stack_depth(&t), 2);
	cr_assert_eq(tr_stack_detach(&t, 0, out, 1), 1, "max respected");
	cr_assert_eq(out[0], 7);
	cr_assert_eq(tr_stack_depth(&t), 0);
	/* beyond the core's capacity: counted, not stored */
	uint32_t many[200];
	for (int i = 0; i < 200; i++)
		many[i] = (uint32_t)i;
	tr_stack_attach(&t, many, 200);
	cr_assert_eq(tr_stack_depth(&t), 200);
	uint32_t back[200];
	cr_assert_eq(tr_stack_detach(&t, 100, back, 200), 28);
	cr_assert_eq(back[0], 100);
	cr_assert_eq(back[27], 127);
	cr_assert_eq(tr_stack_depth(&t), 100);
	/* leave_to on a stopped thread (off): no records, depth cut */
	t.off = 1;
	tr_stack_leave_to(&t, 10, tr_time());
	cr_assert_eq(tr_stack_depth(&t), 10);
}
