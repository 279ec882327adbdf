! SPDX-License-Identifier: BSD-3-Clause
! omp_fortran.f90 - gfortran -fopenmp (libgomp): 5 parallel regions of 4
! threads, each with a dynamic loop of 40 iterations entering a critical
! section, one barrier and one omp_set_lock/omp_unset_lock per thread
! (the Fortran bindings omp_set_lock_/omp_unset_lock_).
program omp_fortran
  use omp_lib
  implicit none
  integer(omp_lock_kind) :: l
  integer :: s, i, p
  s = 0
  call omp_init_lock(l)
  do p = 1, 5
!$omp parallel num_threads(4) private(i)
!$omp do schedule(dynamic)
    do i = 1, 40
!$omp critical
      s = s + i
!$omp end critical
    end do
!$omp end do
!$omp barrier
    call omp_set_lock(l)
    s = s + 1
    call omp_unset_lock(l)
!$omp end parallel
  end do
  call omp_destroy_lock(l)
  print '(a,i0)', 'sum ', s
end program omp_fortran
