/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_cut.c - a blocking collective cut by the end of the process (another
 * rank's MPI_Abort or crash, SIGTERM from the launcher, exit from another
 * thread): the thread's MpiCollectiveBegin gets its MpiCollectiveEnd (the
 * call's operation, communicator and root, no bytes) with the attribute
 * TRACER::CUT = 1, before the Leave of the call's region
 * (tr_thread_close_open_regions). Per MPI ABI, as the generated wrappers.
 */
#include "mpi_int.h"

static otf2w_attr_list *cut_attrs;   /* { TRACER::CUT: 1 } */

void tr_mpi_cut_init(void)
{
	if (cut_attrs)
		return;
	uint32_t a = tr_def_attribute("TRACER::CUT",
				      "the call was cut: the process ended inside it (its End written by the tracer)",
				      OTF2W_TYPE_UINT8);
	otf2w_attr_list *al = otf2w_attr_list_new();
	if (al && otf2w_attr_list_add(al, a, OTF2W_TYPE_UINT8, 1) != OTF2W_OK) {
		otf2w_attr_list_delete(al);
		al = NULL;
	}
	cut_attrs = al;
}

void tr_mpi_coll_cut(struct tr_thread *t, uint64_t time)
{
	tr_evt_status(t, otf2w_evt_mpi_collective_end(t->w, cut_attrs, time, (uint8_t)t->cut_arg[0],
						      (uint32_t)t->cut_arg[1], (uint32_t)t->cut_arg[2], 0, 0));
}
