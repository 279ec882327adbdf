/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_int.h - the state of the process's definition registry, shared by
 * its two files: defs.c (the tr_def_* API: what wrappers define) and
 * defs_local.c (the process side: this process's locations, writing,
 * packing, saving, the installed unified set). Never included elsewhere.
 */
#ifndef TR_DEFS_INT_H
#define TR_DEFS_INT_H

#include "tr_int.h"
#include "defset.h"

/* The process-local set; the registry lock guards all of this. */
extern struct defset tr_local;
extern struct tr_lock tr_reg_lock;
/* The registry lock as taken by the tr_def_* functions: a thread that holds
 * it for a durability snapshot (tr_defs_provisional_begin, the ticking thread) does
 * not take it again. */
extern TR_TLS int tr_reg_held;
static inline void reg_lock(void)
{
	if (!tr_reg_held)
		tr_lock(&tr_reg_lock);
}
static inline void reg_unlock(void)
{
	if (!tr_reg_held)
		tr_unlock(&tr_reg_lock);
}

/* Clock offsets (MPI clock synchronisation), strictly increasing times. */
#define TR_MAX_COFFS 64
extern struct tr_coff tr_coffs[TR_MAX_COFFS];
extern int tr_ncoffs;

/* tr_def_calling_context_map: event ids -> CallingContext ids. */
extern uint32_t *tr_cc_map;
extern uint32_t tr_cc_nmap;

/* String ids of this host and of this process's location group name. */
extern uint32_t tr_sid_host, tr_sid_gname;

/* Complete the thread comm groups (tr_def_thread_comm placeholders) in the
 * registry with the locations of p. Under the lock. */
void tr_defs_complete_thread_comms(const struct tr_procinfo *p);

#endif /* TR_DEFS_INT_H */
