/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_fortran_int.h - shared by the Fortran entry points (mpi_fortran.c and
 * the generated mpi_fgen.c). Not a public header.
 *
 * Fortran passes everything by reference: ints and handles as MPI_Fint *,
 * converted with PMPI_*_f2c; MPI_STATUS_IGNORE and MPI_IN_PLACE are the
 * addresses of common blocks (Open MPI: MPI_F_STATUS_IGNORE points to one,
 * mpi_fortran_in_place_ & co.), all weak here like every MPI symbol.
 */
#ifndef TR_MPI_FORTRAN_INT_H
#define TR_MPI_FORTRAN_INT_H

#include "mpi_int.h"

extern char mpi_fortran_in_place __attribute__((weak));
extern char mpi_fortran_in_place_ __attribute__((weak));
extern char mpi_fortran_in_place__ __attribute__((weak));
extern char MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern char mpi_fortran_status_ignore __attribute__((weak));
extern char mpi_fortran_status_ignore_ __attribute__((weak));
extern char mpi_fortran_status_ignore__ __attribute__((weak));
extern char MPI_FORTRAN_STATUS_IGNORE __attribute__((weak));
extern char mpi_fortran_statuses_ignore __attribute__((weak));
extern char mpi_fortran_statuses_ignore_ __attribute__((weak));
extern char mpi_fortran_statuses_ignore__ __attribute__((weak));
extern char MPI_FORTRAN_STATUSES_IGNORE __attribute__((weak));

/* A pmpi_*_ of libmpi_mpifh, resolved at first use (mpi_sym.c):
 *   extern void pmpi_x_(...); TR_FSLOT(pmpi_x_)  #define pmpi_x_ TR_FSYM(pmpi_x_) */
#define TR_FSLOT(fn) static void *tr_fs_##fn;
#define TR_FSYM(fn)  (*(__typeof__(&fn))tr_mpi_fsym(&tr_fs_##fn, #fn))

static inline int tr_mpi_f_status_ignore(const MPI_Fint *s)
{
	const void *p = s;
	return !s || (&MPI_F_STATUS_IGNORE && p == (const void *)MPI_F_STATUS_IGNORE) ||
	       p == &mpi_fortran_status_ignore || p == &mpi_fortran_status_ignore_ ||
	       p == &mpi_fortran_status_ignore__ || p == &MPI_FORTRAN_STATUS_IGNORE;
}

static inline int tr_mpi_f_statuses_ignore(const MPI_Fint *s)
{
	const void *p = s;
	return !s || (&MPI_F_STATUSES_IGNORE && p == (const void *)MPI_F_STATUSES_IGNORE) ||
	       p == &mpi_fortran_statuses_ignore || p == &mpi_fortran_statuses_ignore_ ||
	       p == &mpi_fortran_statuses_ignore__ || p == &MPI_FORTRAN_STATUSES_IGNORE;
}

static inline int tr_mpi_f_in_place(const void *b)
{
	return b && (b == &mpi_fortran_in_place || b == &mpi_fortran_in_place_ ||
		     b == &mpi_fortran_in_place__ || b == &MPI_FORTRAN_IN_PLACE);
}
#undef INPL
#define INPL(b) tr_mpi_f_in_place(b)

#endif /* TR_MPI_FORTRAN_INT_H */
