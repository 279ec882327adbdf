! SPDX-License-Identifier: BSD-3-Clause
! MPI_Init/MPI_Finalize from Fortran (mpif.h): the tracer must still agree
! on the archive and unify the ranks (Open MPI's Fortran bindings call PMPI).
program ring
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, size, v, st(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank+1,size), 0, v, 1, MPI_INTEGER, &
                    mod(rank+size-1,size), 0, MPI_COMM_WORLD, st, ierr)
  call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print *, 'fortran ok', v
  call MPI_Finalize(ierr)
end program
