/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_int.h - state shared by wrappers/vt.c (ITC VT API) and
 * wrappers/argobots.c (work-unit tracing): the region stack that VT_end and
 * VT_leave pop. A thread's stack lives in TLS; while an Argobots work unit
 * runs on the thread (t->task != NULL) the work unit's own stack is used, so
 * a region begun in a ULT on one execution stream can end after the ULT
 * migrated to another one.
 */
#ifndef TR_VT_INT_H
#define TR_VT_INT_H

#include <stdint.h>
#include "tracer.h"

#define TR_VT_STACK_MAX 64

/* One open VT region. */
struct tr_vt_frame {
	uint32_t region;       /* region id */
	uint8_t recorded;      /* an Enter was written (tracing was on) */
};

struct tr_vt_stack {
	uint32_t depth;
	struct tr_vt_frame f[TR_VT_STACK_MAX];
};

/* The stack VT calls of thread t use now (work unit's or thread's). Owner thread only. */
struct tr_vt_stack *tr_vt_stack_of(struct tr_thread *t);

/* Leave every region still open on stack s at time `time` on thread t
 * (a work unit finished with regions open). Owner thread only. */
void tr_vt_stack_unwind(struct tr_thread *t, struct tr_vt_stack *s, uint64_t time);

/* Every Argobots work-unit state starts with its VT stack, so t->task can be
 * read as a struct tr_vt_stack *. */

#endif /* TR_VT_INT_H */
