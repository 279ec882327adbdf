/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_name.c - renaming a thread's location (tr_thread_set_name).
 */
#include "tr_int.h"

void tr_thread_set_name(struct tr_thread *t, const char *name)
{
	if (!t || !name)
		return;
	uint32_t sid = tr_def_string(name);
	if (sid != OTF2W_UNDEFINED_REF)
		__atomic_store_n(&t->name_sid, sid, __ATOMIC_RELAXED);
}
