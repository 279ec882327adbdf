/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_fortran.c - MPI_Init/MPI_Init_thread/MPI_Finalize/MPI_Abort called
 * from Fortran. Open MPI's Fortran bindings (mpif.h / use mpi: mpi_init_
 * & co.; use mpi_f08: mpi_init_f08_ -> ompi_init_f) call PMPI_* directly,
 * so the C wrappers never see these calls. Without them a Fortran program
 * would get no rank agreement and no unification. The other Fortran MPI
 * calls are not recorded (see docs/mpi.md).
 *
 * Each entry point exists under every name the Fortran compilers use
 * (mpi_init, mpi_init_, mpi_init__, MPI_INIT) and as ompi_*_f (the f08
 * path); the real work is the weak pmpi_*_ of libmpi_mpifh, which is only
 * loaded (and these only called) in Fortran MPI programs.
 */
#include "mpi_int.h"

#pragma weak pmpi_init_
#pragma weak pmpi_init_thread_
#pragma weak pmpi_finalize_
#pragma weak pmpi_abort_
extern void pmpi_init_(MPI_Fint *ierr);
extern void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
extern void pmpi_finalize_(MPI_Fint *ierr);
extern void pmpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr);

static void f_init(MPI_Fint *ierr)
{
	struct tr_thread *t = tr_thread_get();
	uint32_t rgn = 0;
	if (t) {
		rgn = tr_mpi_region(TR_MPI_FN_MPI_Init);
		tr_enter(t, tr_time(), rgn);
	}
	pmpi_init_(ierr);
	if (*ierr == MPI_SUCCESS)
		tr_mpi_after_init();
	if (t) {
		tr_leave(t, tr_time(), rgn);
		tr_thread_put(t);
	}
}

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	struct tr_thread *t = tr_thread_get();
	uint32_t rgn = 0;
	if (t) {
		rgn = tr_mpi_region(TR_MPI_FN_MPI_Init_thread);
		tr_enter(t, tr_time(), rgn);
	}
	pmpi_init_thread_(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		tr_mpi_after_init();
	if (t) {
		tr_leave(t, tr_time(), rgn);
		tr_thread_put(t);
	}
}

static void f_finalize(MPI_Fint *ierr)
{
	struct tr_thread *t = tr_thread_get();
	uint32_t rgn = 0;
	if (t) {
		rgn = tr_mpi_region(TR_MPI_FN_MPI_Finalize);
		tr_enter(t, tr_time(), rgn);
	}
	tr_mpi_before_finalize();
	pmpi_finalize_(ierr);
	if (t) {
		tr_leave(t, tr_time(), rgn);
		tr_thread_put(t);
	}
}

static void f_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	struct tr_thread *t = tr_thread_get();
	if (t) {
		tr_enter(t, tr_time(), tr_mpi_region(TR_MPI_FN_MPI_Abort));
		tr_thread_put(t);
	}
	tr_mpi_abort_prepare((int)*errorcode);
	pmpi_abort_(comm, errorcode, ierr);
}

#define TR_F_NAMES(lower, upper, impl, params, args)      \
	TR_EXPORT void lower params { impl args; }         \
	TR_EXPORT void lower##_ params { impl args; }      \
	TR_EXPORT void lower##__ params { impl args; }     \
	TR_EXPORT void upper params { impl args; }

TR_F_NAMES(mpi_init, MPI_INIT, f_init, (MPI_Fint *ierr), (ierr))
TR_F_NAMES(mpi_init_thread, MPI_INIT_THREAD, f_init_thread,
	   (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr), (required, provided, ierr))
TR_F_NAMES(mpi_finalize, MPI_FINALIZE, f_finalize, (MPI_Fint *ierr), (ierr))
TR_F_NAMES(mpi_abort, MPI_ABORT, f_abort, (MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr),
	   (comm, errorcode, ierr))

/* use mpi_f08: mpi_init_f08_ & co. call these (through the PLT) */
TR_EXPORT void ompi_init_f(MPI_Fint *ierr) { f_init(ierr); }
TR_EXPORT void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	f_init_thread(required, provided, ierr);
}
TR_EXPORT void ompi_finalize_f(MPI_Fint *ierr) { f_finalize(ierr); }
TR_EXPORT void ompi_abort_f(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	f_abort(comm, errorcode, ierr);
}
