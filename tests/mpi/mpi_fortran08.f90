! SPDX-License-Identifier: BSD-3-Clause
! MPI_Init/MPI_Finalize from Fortran (use mpi_f08).
program ring
  use mpi_f08
  implicit none
  integer :: rank, size, v
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print *, 'fortran ok', v
  call MPI_Finalize()
end program
