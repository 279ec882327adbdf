/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * task.c - user-level tasks (tracer.h): the region stacks of a work unit
 * that moves between threads (wrappers/argobots), and the task VT_begin/
 * VT_end nest in (wrappers/vt). Owner thread only.
 */
#include "tr_int.h"

void tr_task_reset(struct tr_task *task)
{
	task->user.depth = 0;
	task->base = 0;
	task->nshadow = 0;
}

struct tr_task *tr_task_current(const struct tr_thread *t)
{
	return t ? t->task : NULL;
}

void tr_task_set_current(struct tr_thread *t, struct tr_task *task)
{
	t->task = task;
}

void tr_task_attach(struct tr_thread *t, struct tr_task *task)
{
	task->base = tr_stack_depth(t);
	tr_stack_attach(t, task->shadow, task->nshadow);
	task->nshadow = 0;
}

void tr_task_detach(struct tr_thread *t, struct tr_task *task)
{
	task->nshadow = (uint32_t)tr_stack_detach(t, task->base, task->shadow, TR_TASK_REGIONS);
}

void tr_region_stack_unwind(struct tr_thread *t, struct tr_region_stack *s, uint64_t time)
{
	while (s->depth > 0) {
		struct tr_region_frame *f = &s->f[--s->depth];
		if (f->recorded)
			tr_leave(t, time, f->region);
	}
}

void tr_task_close(struct tr_thread *t, struct tr_task *task, uint64_t time)
{
	tr_region_stack_unwind(t, &task->user, time);
	tr_stack_leave_to(t, task->base, time);
	task->nshadow = 0;
}
