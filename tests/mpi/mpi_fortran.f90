! SPDX-License-Identifier: BSD-3-Clause
! MPI from Fortran (mpif.h): Open MPI's Fortran bindings call PMPI_*
! directly, so the tracer has Fortran entry points. A ring (Send/Recv,
! Sendrecv), non-blocking exchange (Isend/Irecv + Waitall with
! MPI_STATUSES_IGNORE, Wait, Waitany, Test), ANY_SOURCE receives,
! collectives (one with MPI_IN_PLACE), a split communicator with traffic.
program fring
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, size, right, left, i, v, w(4), buf(8), st(MPI_STATUS_SIZE)
  integer :: req(4), idx, half, hr, hs
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  buf = rank
  if (mod(rank, 2) == 0) then
    call MPI_Send(buf, 3, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ierr)
    call MPI_Recv(w, 4, MPI_INTEGER, left, 10, MPI_COMM_WORLD, st, ierr)
  else
    call MPI_Recv(w, 4, MPI_INTEGER, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(buf, 3, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Sendrecv(buf, 2, MPI_INTEGER, right, 11, w, 4, MPI_INTEGER, left, 11, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Irecv(w, 4, MPI_INTEGER, left, 12, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(buf, 4, MPI_INTEGER, right, 12, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  call MPI_Irecv(w, 4, MPI_INTEGER, MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(buf, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
  call MPI_Waitany(1, req(2), idx, st, ierr)
  call MPI_Irecv(w, 4, MPI_INTEGER, left, 14, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Send(buf, 2, MPI_INTEGER, right, 14, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req(1), flag, st, ierr)
  end do
  if (rank == 0) then
    do i = 1, size - 1
      call MPI_Recv(w, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    end do
  else
    call MPI_Send(buf, rank, MPI_INTEGER, 0, 60 + rank, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Bcast(buf, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  v = rank
  call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_Comm_rank(half, hr, ierr)
  call MPI_Comm_size(half, hs, ierr)
  if (hs > 1) then
    if (hr == 0) call MPI_Send(buf, 1, MPI_INTEGER, 1, 15, half, ierr)
    if (hr == 1) call MPI_Recv(w, 1, MPI_INTEGER, 0, 15, half, MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  call MPI_Comm_free(half, ierr)
  if (rank == 0) print *, 'fortran ok', v
  call MPI_Finalize(ierr)
end program
