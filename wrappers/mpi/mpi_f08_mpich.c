/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_f08_mpich.c - MPI_Init/MPI_Init_thread/MPI_Finalize/MPI_Abort of
 * `use mpi_f08` under the MPICH ABI (built for it only: wrappers/mpi/mpi.cmake).
 *
 * MPICH's mpif.h / `use mpi` bindings (mpi_send_ & co. of libmpichfort)
 * call the C MPI_* functions, so the C wrappers trace them. Its mpi_f08
 * bindings (mpi_*_f08_, mpi_*_f08ts_) call PMPI_* directly: without these
 * four a `use mpi_f08` program would get no rank agreement and no
 * unification. Arguments (bind(C), by reference): integers and handles as
 * int *, the optional ierror may be NULL. The real functions are the
 * library's own (looked up on first use, never ours). Other mpi_f08 calls
 * are not recorded under MPICH (docs/mpi.md).
 */
#include "mpi_int.h"

#define F08_REAL(slot, name, type) ((type)tr_mpi_fsym(&(slot), name))

static void *s_init, *s_init_thread, *s_finalize, *s_abort;

TR_EXPORT void mpi_init_f08_(int *ierror)
{
	void (*real)(int *) = F08_REAL(s_init, "mpi_init_f08_", void (*)(int *));
	int e = MPI_SUCCESS, *err = ierror ? ierror : &e;
	TR_MPI_BRACKET(MPI_Init, TR_MPI_INIT, real(err), *err == MPI_SUCCESS, 0);
}

TR_EXPORT void mpi_init_thread_f08_(int *required, int *provided, int *ierror)
{
	void (*real)(int *, int *, int *) = F08_REAL(s_init_thread, "mpi_init_thread_f08_", void (*)(int *, int *, int *));
	int e = MPI_SUCCESS, *err = ierror ? ierror : &e;
	TR_MPI_BRACKET(MPI_Init_thread, TR_MPI_INIT, real(required, provided, err), *err == MPI_SUCCESS, 0);
}

TR_EXPORT void mpi_finalize_f08_(int *ierror)
{
	void (*real)(int *) = F08_REAL(s_finalize, "mpi_finalize_f08_", void (*)(int *));
	TR_MPI_BRACKET(MPI_Finalize, TR_MPI_FINALIZE, real(ierror), 1, 0);
}

TR_EXPORT void mpi_abort_f08_(int *comm, int *errorcode, int *ierror)
{
	void (*real)(int *, int *, int *) = F08_REAL(s_abort, "mpi_abort_f08_", void (*)(int *, int *, int *));
	TR_MPI_BRACKET(MPI_Abort, TR_MPI_ABORT, real(comm, errorcode, ierror), 1, *errorcode);
}
