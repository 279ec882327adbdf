/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_api.c - uses every VT function libtracer.so implements. Compiled only
 * with wrappers/vt/VT.h and linked against libtracer.so (or run with it
 * preloaded). Checks the return codes itself (exit 1 on a mismatch) and
 * prints what check_vt.py compares with the archive.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <VT.h>

static int failures;

#define EXPECT(call, want)                                                           \
	do {                                                                         \
		int _r = (call);                                                     \
		if (_r != (want)) {                                                  \
			fprintf(stderr, "vt_api.c:%d: %s returned %d, expected %d\n",  \
				__LINE__, #call, _r, (want));                        \
			failures++;                                                  \
		}                                                                    \
	} while (0)

/* The six steps of the DETAILED-STATES example (ITC reference). */
static void six_steps(void)
{
	static int wait_h, wait_t, copy_h, copy_t;
	int r1 = VT_enterstate("MPI:TRANSFER/WAIT", &wait_h, &wait_t);   /* 1 */
	int r2 = VT_enterstate("MPI:TRANSFER/COPY", &copy_h, &copy_t);   /* 2 */
	if (!r2)
		VT_leave(VT_NOSCL);                                      /* 3 */
	int r4 = VT_enterstate("MPI:TRANSFER/WAIT", &wait_h, &wait_t);   /* 4 */
	if (!r4)
		VT_leave(VT_NOSCL);                                      /* 5 */
	if (!r1)
		VT_leave(VT_NOSCL);                                      /* 6 */
	printf("six r1=%d r2=%s r4=%s wait_trunc=%d copy_trunc=%d\n", r1, r2 ? "nz" : "0",
	       r4 ? "nz" : "0", wait_t, copy_t);
}

/* The name examples: "MPI:TRANSFER/SEND/COPY" and "/MPI:INTERNAL". */
static void name_examples(void)
{
	static int h1, t1, h2, t2;
	int r = VT_enterstate("MPI:TRANSFER/SEND/COPY", &h1, &t1);
	if (!r)
		VT_leave(VT_NOSCL);
	printf("ex1 r=%s trunc=%d\n", r ? "nz" : "0", t1);
	r = VT_enterstate("/MPI:INTERNAL", &h2, &t2);
	if (!r)
		VT_leave(VT_NOSCL);
	printf("ex2 r=%s trunc=%d\n", r ? "nz" : "0", t2);
}

int main(int argc, char **argv)
{
	int cls_transfer, cls_app, h_send, h_compute, h_step, h_hidden, h_tmp;
	int scl1, scl2, cnt_i64, cnt_f, cnt_i32, state;

	EXPECT(VT_initialize(&argc, &argv), VT_OK);
	EXPECT(VT_classdef("MPI:TRANSFER", &cls_transfer), VT_OK);
	EXPECT(VT_classdef(":Application:", &cls_app), VT_OK);
	EXPECT(VT_funcdef("SEND", cls_transfer, &h_send), VT_OK);
	EXPECT(VT_funcdef("compute", VT_NOCLASS, &h_compute), VT_OK);
	EXPECT(VT_funcdef("Solver::step:", VT_NOCLASS, &h_step), VT_OK);
	EXPECT(VT_funcdef("hidden", cls_app, &h_hidden), VT_OK);
	EXPECT(VT_funcdef("compute", cls_app, &h_tmp), VT_OK);
	if (h_tmp != h_compute) {
		fprintf(stderr, "same state defined twice gave two handles\n");
		failures++;
	}
	/* any class handle <= 0 is "no class" (VT_NOCLASS of another VT.h) */
	EXPECT(VT_funcdef("compute", -1, &h_tmp), VT_OK);
	if (h_tmp != h_compute) {
		fprintf(stderr, "class -1 is not VT_NOCLASS\n");
		failures++;
	}
	int rank = -1, thrank = -1;
	EXPECT(VT_getrank(&rank), VT_OK);
	EXPECT(VT_getthrank(&thrank), VT_OK);
	EXPECT(VT_registerthread(-1), VT_OK);
	EXPECT(VT_registernamed("main", -1), VT_OK);
	if (rank != 0 || thrank != 0) {
		fprintf(stderr, "rank %d thread rank %d\n", rank, thrank);
		failures++;
	}
	EXPECT(VT_symdef(42, "oldsym", "OLD:ACT"), VT_OK);
	EXPECT(VT_scldef("vt_api.c", 100, &scl1), VT_OK);
	EXPECT(VT_scldef("vt_api.c", 200, &scl2), VT_OK);

	/* compute > SEND, compute > OLD:ACT:oldsym, Solver:step */
	EXPECT(VT_begin(h_compute), VT_OK);
	EXPECT(VT_beginl(h_send, scl1), VT_OK);
	EXPECT(VT_end(h_send), VT_OK);
	EXPECT(VT_thisloc(scl2), VT_OK);
	EXPECT(VT_begin(42), VT_OK);
	EXPECT(VT_endl(0, scl2), VT_OK);
	EXPECT(VT_end(0), VT_OK);
	EXPECT(VT_enter(h_step, scl1), VT_OK);
	EXPECT(VT_wakeup(), VT_OK);
	EXPECT(VT_leave(VT_NOSCL), VT_OK);

	/* counters: three types, three values each */
	int64_t b64[2] = { 0, 1000 };
	double bf[2] = { 0, 1e9 };
	uint32_t b32[4] = { 0, 0, 0, 0xffffffffu };
	EXPECT(VT_countdef("iterations", cls_transfer, VT_COUNT_INTEGER64 | VT_COUNT_ABSVAL | VT_COUNT_VALID_POINT,
			   VT_ME, b64, "#", &cnt_i64), VT_OK);
	EXPECT(VT_countdef("residual", VT_NOCLASS, VT_COUNT_FLOAT | VT_COUNT_ABSVAL | VT_COUNT_VALID_AFTER,
			   VT_ME, bf, "", &cnt_f), VT_OK);
	EXPECT(VT_countdef("legacy", VT_NOCLASS, VT_COUNT_INTEGER | VT_COUNT_RATE | VT_COUNT_VALID_SAMPLE,
			   VT_GROUP_PROCESS, b32, "bytes", &cnt_i32), VT_OK);
	for (int i = 1; i <= 3; i++) {
		int handles[3] = { cnt_i64, cnt_f, cnt_i32 };
		unsigned char buf[24];
		int64_t v64 = i * 10;
		double vf = 1.0 / i;
		uint32_t v32[2] = { 1, (uint32_t)i };      /* high, low: 2^32 + i */
		memcpy(buf, &v64, 8);
		memcpy(buf + 8, &vf, 8);
		memcpy(buf + 16, v32, 8);
		EXPECT(VT_countval(3, handles, buf), VT_OK);
	}
	EXPECT(VT_flush(), VT_OK);

	/* tracing off: "hidden" must not appear */
	VT_traceoff();
	EXPECT(VT_tracestate(&state), VT_OK);
	if (state != 1) {
		fprintf(stderr, "VT_tracestate after VT_traceoff: %d\n", state);
		failures++;
	}
	EXPECT(VT_begin(h_hidden), VT_OK);
	EXPECT(VT_end(h_hidden), VT_OK);
	VT_traceon();
	EXPECT(VT_tracestate(&state), VT_OK);
	if (state != 0) {
		fprintf(stderr, "VT_tracestate after VT_traceon: %d\n", state);
		failures++;
	}

	six_steps();
	name_examples();

	/* bad handles and arguments */
	int bad = 999;
	int vals[2] = { 0, 0 };
	EXPECT(VT_begin(12345), VT_ERR_BADSYMBOLID);
	EXPECT(VT_enter(h_compute, 9999), VT_ERR_BADSCLID);
	EXPECT(VT_beginl(h_compute, 77777), VT_ERR_BADSCLID);
	EXPECT(VT_thisloc(55555), VT_ERR_BADSCLID);
	EXPECT(VT_end(0), VT_ERR_BADREQUEST);
	EXPECT(VT_leave(VT_NOSCL), VT_ERR_BADREQUEST);
	EXPECT(VT_funcdef(NULL, VT_NOCLASS, &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_funcdef("x", 777, &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_funcdef(":::", VT_NOCLASS, &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_classdef(NULL, &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_scldef(NULL, 1, &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_countdef("c", VT_NOCLASS, 3, VT_ME, NULL, "", &h_tmp), VT_ERR_BADARG);
	EXPECT(VT_countval(1, &bad, vals), VT_ERR_BADARG);
	EXPECT(VT_enterstate(NULL, &h_tmp, NULL), VT_ERR_BADARG);

	EXPECT(VT_finalize(), VT_OK);
	/* after VT_finalize every call is refused, nothing crashes */
	EXPECT(VT_begin(h_compute), VT_ERR_NOTINITIALIZED);
	EXPECT(VT_funcdef("late", VT_NOCLASS, &h_tmp), VT_ERR_NOTINITIALIZED);
	EXPECT(VT_countval(1, &cnt_f, vals), VT_ERR_NOTINITIALIZED);
	EXPECT(VT_initialize(NULL, NULL), VT_ERR_NOTINITIALIZED);
	EXPECT(VT_finalize(), VT_ERR_NOTINITIALIZED);
	VT_traceoff();
	EXPECT(VT_tracestate(&state), VT_OK);
	printf("done failures=%d\n", failures);
	return failures ? 1 : 0;
}
