! SPDX-License-Identifier: MIT
! f_greq.f90 - generalized requests with Fortran query, free and cancel
! functions (extra_state as INTEGER(KIND=MPI_ADDRESS_KIND), the status as
! INTEGER(MPI_STATUS_SIZE), complete as LOGICAL), MPI-4 persistent
! collectives, MPI_ISENDRECV and MPI_ISENDRECV_REPLACE from Fortran, and
! error classes under MPI_ERRORS_RETURN.  The functions get the program's
! EXTRA_STATE variable itself: each sees what the program and the other
! functions stored there.
module f_greq_fns
  use mpi
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: freed_extra = -1, cancelled_extra = -1
  logical :: cancel_complete = .true.
contains
  subroutine query_fn(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    queries = queries + 1
    status(MPI_SOURCE) = int(extra)
    status(MPI_TAG) = 11
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
    call MPI_Status_set_cancelled(status, cancels > 0, ierr)
    ierr = MPI_SUCCESS
    if (extra == 99) ierr = MPI_ERR_OTHER
  end subroutine query_fn

  subroutine free_fn(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    frees = frees + 1
    freed_extra = extra
    ierr = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    cancels = cancels + 1
    cancelled_extra = extra
    cancel_complete = complete
    ierr = MPI_SUCCESS
  end subroutine cancel_fn

  ! Functions that change extra_state: seen by the program.
  subroutine query_add(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    status(MPI_TAG) = int(extra)
    extra = extra + 100
    ierr = MPI_SUCCESS
  end subroutine query_add

  subroutine free_dec(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    extra = extra - 1
    ierr = MPI_SUCCESS
  end subroutine free_dec

  subroutine cancel_add(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    if (.not. complete) extra = extra + 1000
    ierr = MPI_SUCCESS
  end subroutine cancel_add
end module f_greq_fns

program f_greq
  use mpi
  use f_greq_fns
  implicit none
  integer :: ierr, rank, nproc, right, left

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  call greq()
  call extra_shared()
  call persistent()
  call isendrecv()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_greq: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine greq()
    integer :: r, st(MPI_STATUS_SIZE), n
    logical :: flag
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, 40_MPI_ADDRESS_KIND, r, ierr)
    call check(ierr == MPI_SUCCESS .and. r /= MPI_REQUEST_NULL, 'Grequest_start')
    call MPI_Test(r, flag, st, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag .and. queries == 0, 'Test before complete')
    call MPI_Grequest_complete(r, ierr)
    call check(ierr == MPI_SUCCESS, 'Grequest_complete')
    call MPI_Wait(r, st, ierr)
    call check(ierr == MPI_SUCCESS .and. r == MPI_REQUEST_NULL, 'Wait')
    call check(queries == 1 .and. frees == 1 .and. freed_extra == 40, &
               'query and free ran once, with extra_state')
    call check(st(MPI_SOURCE) == 40 .and. st(MPI_TAG) == 11, 'status from the query function')
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == 3, 'count set by the query function')

    ! Cancelled before completion: cancel_fn sees complete = .false.
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, 41_MPI_ADDRESS_KIND, r, ierr)
    call MPI_Cancel(r, ierr)
    call check(ierr == MPI_SUCCESS .and. cancels == 1 .and. .not. cancel_complete .and. &
               cancelled_extra == 41, 'cancel_fn, not complete')
    call MPI_Grequest_complete(r, ierr)
    call MPI_Wait(r, st, ierr)
    call MPI_Test_cancelled(st, flag, ierr)
    call check(flag .and. frees == 2 .and. freed_extra == 41, 'cancelled generalized request')

    ! The query function's error is the request's.
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, 99_MPI_ADDRESS_KIND, r, ierr)
    call MPI_Grequest_complete(r, ierr)
    call MPI_Cancel(r, ierr)
    call check(cancels == 2 .and. cancel_complete, 'cancel_fn, complete')
    call MPI_Wait(r, st, ierr)
    call check(err_class(ierr) == MPI_ERR_OTHER .and. frees == 3, 'error of the query function')
  end subroutine greq

  ! The functions and the program share the EXTRA_STATE variable.
  subroutine extra_shared()
    ! VOLATILE: changed behind the compiler's back, by calls that take it
    ! as INTENT(IN).
    integer(kind=MPI_ADDRESS_KIND), volatile :: state
    integer :: r, st(MPI_STATUS_SIZE)
    logical :: flag
    state = 1
    call MPI_Grequest_start(query_add, free_dec, cancel_add, state, r, ierr)
    call MPI_Grequest_complete(r, ierr)
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    ! MPI_WAIT calls the query function even for MPI_STATUS_IGNORE.
    call check(ierr == MPI_SUCCESS .and. state == 100, 'query and free changed extra_state')

    ! A value the program stores after the start is the one the query
    ! function sees; the query's change is the one free sees.
    state = 7
    call MPI_Grequest_start(query_add, free_dec, cancel_add, state, r, ierr)
    state = 20
    call MPI_Grequest_complete(r, ierr)
    call MPI_Test(r, flag, st, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. st(MPI_TAG) == 20, &
               'query function saw the program''s extra_state')
    call check(state == 119, 'query then free changed extra_state')

    ! Cancel, then MPI_Request_free after completion: free still runs.
    state = 0
    call MPI_Grequest_start(query_add, free_dec, cancel_add, state, r, ierr)
    call MPI_Cancel(r, ierr)
    call check(state == 1000, 'cancel function changed extra_state')
    call MPI_Grequest_complete(r, ierr)
    call MPI_Request_free(r, ierr)
    call check(ierr == MPI_SUCCESS .and. r == MPI_REQUEST_NULL .and. state == 999, &
               'Request_free called the free function')
  end subroutine extra_shared

  subroutine persistent()
    integer :: r, rb, i
    integer, asynchronous :: x, s, b(3)
    call MPI_Allreduce_init(x, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, r, ierr)
    call check(ierr == MPI_SUCCESS .and. r /= MPI_REQUEST_NULL, 'Allreduce_init')
    do i = 1, 3
      x = rank * i
      call MPI_Start(r, ierr)
      call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. r /= MPI_REQUEST_NULL .and. &
                 s == i * nproc * (nproc - 1) / 2, 'persistent Allreduce')
    end do
    call MPI_Request_free(r, ierr)
    call check(ierr == MPI_SUCCESS .and. r == MPI_REQUEST_NULL, 'Request_free')

    call MPI_Bcast_init(b, 3, MPI_INTEGER, nproc - 1, MPI_COMM_WORLD, MPI_INFO_NULL, rb, ierr)
    do i = 1, 2
      b = -1
      if (rank == nproc - 1) b = [i, i + 1, i + 2]
      call MPI_Start(rb, ierr)
      call MPI_Wait(rb, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. all(b == [i, i + 1, i + 2]), 'persistent Bcast')
    end do
    call MPI_Request_free(rb, ierr)
    call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, r, ierr)
    call MPI_Start(r, ierr)
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'persistent Barrier')
    call MPI_Request_free(r, ierr)
  end subroutine persistent

  subroutine isendrecv()
    integer :: r, st(MPI_STATUS_SIZE)
    integer, asynchronous :: sb(2), rb(2), buf(3)
    sb = [rank, -rank]
    rb = 0
    call MPI_Isendrecv(sb, 2, MPI_INTEGER, right, 8, rb, 2, MPI_INTEGER, left, 8, &
                       MPI_COMM_WORLD, r, ierr)
    call check(ierr == MPI_SUCCESS .and. r /= MPI_REQUEST_NULL, 'Isendrecv')
    call MPI_Wait(r, st, ierr)
    call check(all(rb == [left, -left]) .and. st(MPI_SOURCE) == left .and. st(MPI_TAG) == 8, &
               'Isendrecv data')
    buf = [rank, rank + 1, rank + 2]
    call MPI_Isendrecv_replace(buf, 3, MPI_INTEGER, right, 9, left, 9, MPI_COMM_WORLD, r, ierr)
    call check(ierr == MPI_SUCCESS, 'Isendrecv_replace')
    call MPI_Wait(r, st, ierr)
    call check(all(buf == [left, left + 1, left + 2]) .and. st(MPI_TAG) == 9, &
               'Isendrecv_replace data')
  end subroutine isendrecv

  subroutine errors()
    integer :: r, x, s, before
    ! Not a generalized request.
    r = MPI_REQUEST_NULL
    call MPI_Grequest_complete(r, ierr)
    call check(err_class(ierr) == MPI_ERR_REQUEST, 'Grequest_complete of MPI_REQUEST_NULL')
    ! Completed twice.
    before = frees
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, 1_MPI_ADDRESS_KIND, r, ierr)
    call MPI_Grequest_complete(r, ierr)
    call MPI_Grequest_complete(r, ierr)
    call check(err_class(ierr) == MPI_ERR_REQUEST, 'Grequest_complete twice')
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. frees == before + 1, 'the request still completes')
    ! A persistent collective with the null datatype: no request.
    r = MPI_REQUEST_NULL
    call MPI_Allreduce_init(x, s, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD, &
                            MPI_INFO_NULL, r, ierr)
    call check(err_class(ierr) == MPI_ERR_TYPE .and. r == MPI_REQUEST_NULL, &
               'Allreduce_init with MPI_DATATYPE_NULL')
    ! Isendrecv to a rank out of range.
    call MPI_Isendrecv(x, 1, MPI_INTEGER, nproc, 0, s, 1, MPI_INTEGER, left, 0, &
                       MPI_COMM_WORLD, r, ierr)
    call check(err_class(ierr) == MPI_ERR_RANK .and. r == MPI_REQUEST_NULL, &
               'Isendrecv to rank nproc')
  end subroutine errors
end program f_greq
