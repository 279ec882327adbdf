! SPDX-License-Identifier: BSD-3-Clause
! vt_api.f90 - the Fortran bindings of the VT API (ITC routine names, lower
! case + trailing underscore as gfortran emits them), same sequence and
! output as vt_api.c so check_vt.py checks both the same way.
program vt_api_f
  implicit none
  integer, parameter :: VT_OK = 0, VT_NOSCL = 0, VT_NOCLASS = 0
  integer, parameter :: VT_ME = -1, VT_GROUP_PROCESS = -3
  integer, parameter :: VT_COUNT_INTEGER = 0, VT_COUNT_FLOAT = 1, VT_COUNT_INTEGER64 = 2
  integer, parameter :: VT_COUNT_RATE = 4, VT_COUNT_VALID_POINT = 8
  integer, parameter :: VT_COUNT_VALID_AFTER = 16, VT_COUNT_VALID_SAMPLE = 24
  integer, parameter :: VT_ERR_NOTINITIALIZED = -3, VT_ERR_BADREQUEST = -4
  integer, parameter :: VT_ERR_BADSYMBOLID = -5, VT_ERR_BADSCLID = -6, VT_ERR_BADARG = -13
  integer :: ierr, cls_transfer, cls_app, h_send, h_compute, h_step, h_hidden, h_tmp
  integer :: scl1, scl2, cnt_i64, cnt_f, cnt_i32, state, i, fails, zero, big
  integer :: handles(3), bad(1)
  integer(8) :: buf(3), b64(2)
  real(8) :: bf(2)
  integer(4) :: v32(2), b32(4)

  fails = 0
  zero = 0
  call vtinit(ierr);                                  call chk(ierr, VT_OK, 'vtinit')
  call vtclassdef('MPI:TRANSFER', cls_transfer, ierr); call chk(ierr, VT_OK, 'vtclassdef')
  call vtclassdef(':Application:', cls_app, ierr);     call chk(ierr, VT_OK, 'vtclassdef app')
  call vtfuncdef('SEND', cls_transfer, h_send, ierr);  call chk(ierr, VT_OK, 'vtfuncdef SEND')
  call vtfuncdef('compute', VT_NOCLASS, h_compute, ierr); call chk(ierr, VT_OK, 'vtfuncdef compute')
  call vtfuncdef('Solver::step:', VT_NOCLASS, h_step, ierr); call chk(ierr, VT_OK, 'vtfuncdef step')
  call vtfuncdef('hidden', cls_app, h_hidden, ierr);   call chk(ierr, VT_OK, 'vtfuncdef hidden')
  call vtfuncdef('compute', cls_app, h_tmp, ierr);     call chk(ierr, VT_OK, 'vtfuncdef compute 2')
  call chk(h_tmp, h_compute, 'same state, same handle')
  call vtgetrank(state, ierr);                         call chk(ierr, VT_OK, 'vtgetrank')
  call chk(state, 0, 'rank')
  call vtgetthrank(state, ierr);                       call chk(ierr, VT_OK, 'vtgetthrank')
  call chk(state, 0, 'thread rank')
  call vtregisterthread(-1, ierr);                     call chk(ierr, VT_OK, 'vtregisterthread')
  call vtregisternamed('main', -1, ierr);              call chk(ierr, VT_OK, 'vtregisternamed')
  call vtsymdef(42, 'oldsym', 'OLD:ACT', ierr);        call chk(ierr, VT_OK, 'vtsymdef')
  call vtscldef('vt_api.c', 100, scl1, ierr);          call chk(ierr, VT_OK, 'vtscldef 100')
  call vtscldef('vt_api.c', 200, scl2, ierr);          call chk(ierr, VT_OK, 'vtscldef 200')

  call vtbegin(h_compute, ierr);       call chk(ierr, VT_OK, 'vtbegin')
  call vtbeginl(h_send, scl1, ierr);   call chk(ierr, VT_OK, 'vtbeginl')
  call vtend(h_send, ierr);            call chk(ierr, VT_OK, 'vtend')
  call vtthisloc(scl2, ierr);          call chk(ierr, VT_OK, 'vtthisloc')
  call vtbegin(42, ierr);              call chk(ierr, VT_OK, 'vtbegin 42')
  call vtendl(zero, scl2, ierr);       call chk(ierr, VT_OK, 'vtendl')
  call vtend(zero, ierr);              call chk(ierr, VT_OK, 'vtend 2')
  call vtenter(h_step, scl1, ierr);    call chk(ierr, VT_OK, 'vtenter')
  call vtwakeup(ierr);                 call chk(ierr, VT_OK, 'vtwakeup')
  call vtleave(VT_NOSCL, ierr);        call chk(ierr, VT_OK, 'vtleave')

  b64 = (/ 0_8, 1000_8 /)
  bf = (/ 0d0, 1d9 /)
  b32 = (/ 0, 0, 0, -1 /)
  call vtcountdef('iterations', cls_transfer, VT_COUNT_INTEGER64 + VT_COUNT_VALID_POINT, VT_ME, &
                  b64, '#', cnt_i64, ierr)
  call chk(ierr, VT_OK, 'vtcountdef iterations')
  call vtcountdef('residual', VT_NOCLASS, VT_COUNT_FLOAT + VT_COUNT_VALID_AFTER, VT_ME, &
                  bf, '', cnt_f, ierr)
  call chk(ierr, VT_OK, 'vtcountdef residual')
  call vtcountdef('legacy', VT_NOCLASS, VT_COUNT_INTEGER + VT_COUNT_RATE + VT_COUNT_VALID_SAMPLE, &
                  VT_GROUP_PROCESS, b32, 'bytes', cnt_i32, ierr)
  call chk(ierr, VT_OK, 'vtcountdef legacy')
  handles = (/ cnt_i64, cnt_f, cnt_i32 /)
  do i = 1, 3
    buf(1) = int(i * 10, 8)
    buf(2) = transfer(1d0 / dble(i), buf(2))
    v32 = (/ 1, i /)
    buf(3) = transfer(v32, buf(3))
    call vtcountval(3, handles, buf, ierr)
    call chk(ierr, VT_OK, 'vtcountval')
  end do
  call vtflush(ierr);                  call chk(ierr, VT_OK, 'vtflush')

  call vttraceoff()
  call vttracestate(state, ierr);      call chk(state, 1, 'vttracestate off')
  call vtbegin(h_hidden, ierr);        call chk(ierr, VT_OK, 'vtbegin hidden')
  call vtend(h_hidden, ierr);          call chk(ierr, VT_OK, 'vtend hidden')
  call vttraceon()
  call vttracestate(state, ierr);      call chk(state, 0, 'vttracestate on')

  call six_steps()
  call name_examples()

  bad(1) = 999
  big = 12345
  call vtbegin(big, ierr);                   call chk(ierr, VT_ERR_BADSYMBOLID, 'bad state')
  call vtenter(h_compute, 9999, ierr);       call chk(ierr, VT_ERR_BADSCLID, 'bad scl')
  call vtthisloc(55555, ierr);               call chk(ierr, VT_ERR_BADSCLID, 'bad thisloc')
  call vtend(zero, ierr);                    call chk(ierr, VT_ERR_BADREQUEST, 'end, nothing open')
  call vtleave(VT_NOSCL, ierr);              call chk(ierr, VT_ERR_BADREQUEST, 'leave, nothing open')
  call vtfuncdef('x', 777, h_tmp, ierr);     call chk(ierr, VT_ERR_BADARG, 'bad class')
  call vtfuncdef(':::', VT_NOCLASS, h_tmp, ierr); call chk(ierr, VT_ERR_BADARG, 'empty name')
  call vtcountval(1, bad, buf, ierr);        call chk(ierr, VT_ERR_BADARG, 'bad counter')

  call vtfini(ierr);                         call chk(ierr, VT_OK, 'vtfini')
  call vtbegin(h_compute, ierr);             call chk(ierr, VT_ERR_NOTINITIALIZED, 'begin after fini')
  call vtinit(ierr);                         call chk(ierr, VT_ERR_NOTINITIALIZED, 'init after fini')
  write (*, '(A,I0)') 'done failures=', fails
  if (fails /= 0) call exit(1)

contains

  subroutine chk(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      write (0, '(A,A,A,I0,A,I0)') 'vt_api.f90: ', what, ' returned ', got, ', expected ', want
      fails = fails + 1
    end if
  end subroutine chk

  character(len=2) function nz(r)
    integer, intent(in) :: r
    if (r /= 0) then
      nz = 'nz'
    else
      nz = '0'
    end if
  end function nz

  subroutine six_steps()
    integer, save :: wait_h = 0, wait_t = 0, copy_h = 0, copy_t = 0
    integer :: r1, r2, r4, e
    call vtenterstate('MPI:TRANSFER/WAIT', wait_h, wait_t, r1)
    call vtenterstate('MPI:TRANSFER/COPY', copy_h, copy_t, r2)
    if (r2 == 0) call vtleave(VT_NOSCL, e)
    call vtenterstate('MPI:TRANSFER/WAIT', wait_h, wait_t, r4)
    if (r4 == 0) call vtleave(VT_NOSCL, e)
    if (r1 == 0) call vtleave(VT_NOSCL, e)
    write (*, '(A,I0,A,A,A,A,A,I0,A,I0)') 'six r1=', r1, ' r2=', trim(nz(r2)), ' r4=', &
      trim(nz(r4)), ' wait_trunc=', wait_t, ' copy_trunc=', copy_t
  end subroutine six_steps

  subroutine name_examples()
    integer, save :: h1 = 0, t1 = 0, h2 = 0, t2 = 0
    integer :: r, e
    call vtenterstate('MPI:TRANSFER/SEND/COPY', h1, t1, r)
    if (r == 0) call vtleave(VT_NOSCL, e)
    write (*, '(A,A,A,I0)') 'ex1 r=', trim(nz(r)), ' trunc=', t1
    call vtenterstate('/MPI:INTERNAL', h2, t2, r)
    if (r == 0) call vtleave(VT_NOSCL, e)
    write (*, '(A,A,A,I0)') 'ex2 r=', trim(nz(r)), ' trunc=', t2
  end subroutine name_examples

end program vt_api_f
