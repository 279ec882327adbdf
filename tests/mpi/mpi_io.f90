! SPDX-License-Identifier: BSD-3-Clause
! mpi_io.f90 - MPI-IO from Fortran (mpif.h / use mpi), checked by
! tests/mpi/check_mpiio.py --fortran: usage mpi_io_f DIR. Every rank r:
! set_view (a string argument), write_at_all 400 B (100 integers, coll),
! seek to its block, iread 400 B + MPI_Wait, read_at 40 B; rank 0 then
! deletes DIR/scratch.bin (opened and closed on MPI_COMM_SELF).
program mpi_io_f
  use mpi
  implicit none
  integer :: ierr, fh, rank, nproc, req, i, errs, alle
  integer :: st(MPI_STATUS_SIZE)
  integer :: buf(100), back(100), small(10)
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=1024) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call get_command_argument(1, dir)
  do i = 1, 100
     buf(i) = rank * 1000 + i
  end do
  errs = 0
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/data.bin', MPI_MODE_CREATE + MPI_MODE_RDWR, &
       MPI_INFO_NULL, fh, ierr)
  off = 0
  call MPI_File_set_view(fh, off, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  off = rank * 400
  call MPI_File_write_at_all(fh, off, buf, 100, MPI_INTEGER, st, ierr)
  call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
  call MPI_File_iread(fh, back, 100, MPI_INTEGER, req, ierr)
  call MPI_Wait(req, st, ierr)
  if (any(back /= buf)) errs = errs + 1
  call MPI_File_read_at(fh, off, small, 10, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  if (any(small /= buf(1:10))) errs = errs + 1
  call MPI_File_close(fh, ierr)
  if (rank == 0) then
     call MPI_File_open(MPI_COMM_SELF, trim(dir) // '/scratch.bin', MPI_MODE_CREATE + MPI_MODE_WRONLY, &
          MPI_INFO_NULL, fh, ierr)
     call MPI_File_close(fh, ierr)
     call MPI_File_delete(trim(dir) // '/scratch.bin', MPI_INFO_NULL, ierr)
  end if
  call MPI_Reduce(errs, alle, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', 'mpi_io_f: ', nproc, ' ranks, ', alle, ' errors'
  call MPI_Finalize(ierr)
end program mpi_io_f
