! SPDX-License-Identifier: MIT
! f_mprobe.f90 - matched probe from Fortran: MPI_MPROBE and MPI_MRECV,
! MPI_IMPROBE and MPI_IMRECV (message handles as INTEGERs, set to
! MPI_MESSAGE_NULL when received), MPI_MESSAGE_NO_PROC from MPI_PROC_NULL,
! the status's MPI_ERROR left as the program set it by the calls returning
! one status (MPI-3.1 3.2.5), and error classes under MPI_ERRORS_RETURN.
! Each rank sends to its right.
program f_mprobe
  use mpi
  implicit none
  integer :: ierr, rank, nproc, right, left

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  call matched()
  call proc_null()
  call error_field()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_mprobe: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine matched()
    integer :: req(2), msg, msg2, st(MPI_STATUS_SIZE), n, r
    integer, asynchronous :: a(2), b(3), ra(2), rb(3)
    logical :: flag
    a = [rank, rank * 2]
    b = [rank + 1, rank + 2, rank + 3]
    call MPI_Isend(a, 2, MPI_INTEGER, right, 5, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(b, 3, MPI_INTEGER, right, 6, MPI_COMM_WORLD, req(2), ierr)

    ! Tag 6 first, by MPI_ANY_SOURCE: the message is the one asked.
    call MPI_Mprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. msg /= MPI_MESSAGE_NULL .and. &
               msg /= MPI_MESSAGE_NO_PROC, 'Mprobe')
    call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 6, 'Mprobe status')
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == 3, 'Mprobe count')
    ! A second matched probe cannot take the same message: tag 5 is next.
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, flag, msg2, st, ierr)
      call check(ierr == MPI_SUCCESS, 'Improbe')
    end do
    call check(st(MPI_TAG) == 5 .and. msg2 /= msg .and. msg2 /= MPI_MESSAGE_NULL, &
               'Improbe found the other message')

    rb = -1
    call MPI_Mrecv(rb, 3, MPI_INTEGER, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. msg == MPI_MESSAGE_NULL, 'Mrecv')
    call check(all(rb == [left + 1, left + 2, left + 3]) .and. st(MPI_TAG) == 6, 'Mrecv data')
    ra = -1
    call MPI_Imrecv(ra, 2, MPI_INTEGER, msg2, r, ierr)
    call check(ierr == MPI_SUCCESS .and. msg2 == MPI_MESSAGE_NULL .and. &
               r /= MPI_REQUEST_NULL, 'Imrecv')
    call MPI_Wait(r, st, ierr)
    call check(all(ra == [left, left * 2]) .and. st(MPI_SOURCE) == left, 'Imrecv data')
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)

    ! Nothing left: Improbe says so.
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'Improbe with nothing to match')
  end subroutine matched

  subroutine proc_null()
    integer :: msg, st(MPI_STATUS_SIZE), n, x
    logical :: flag
    call MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. msg == MPI_MESSAGE_NO_PROC, &
               'Mprobe of MPI_PROC_NULL')
    call check(st(MPI_SOURCE) == MPI_PROC_NULL .and. st(MPI_TAG) == MPI_ANY_TAG, &
               'status of MPI_PROC_NULL')
    x = 77
    call MPI_Mrecv(x, 1, MPI_INTEGER, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. msg == MPI_MESSAGE_NULL .and. x == 77, &
               'Mrecv of MPI_MESSAGE_NO_PROC')
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == 0, 'nothing received from MPI_PROC_NULL')
    call MPI_Improbe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, flag, msg, st, ierr)
    call check(flag .and. msg == MPI_MESSAGE_NO_PROC, 'Improbe of MPI_PROC_NULL')
    call MPI_Mrecv(x, 1, MPI_INTEGER, msg, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. msg == MPI_MESSAGE_NULL, 'Mrecv, status ignored')
  end subroutine proc_null

  ! MPI_ERROR stays the program's: probes and receives, of a message and
  ! of MPI_PROC_NULL.
  subroutine error_field()
    integer :: msg, st(MPI_STATUS_SIZE), r, x
    logical :: flag
    ! No message of this test may reach matched()'s last MPI_IMPROBE.
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    st = 0
    st(MPI_ERROR) = MPI_ERR_DIMS
    call MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. st(MPI_SOURCE) == MPI_PROC_NULL .and. &
               st(MPI_ERROR) == MPI_ERR_DIMS, 'Mprobe of MPI_PROC_NULL keeps MPI_ERROR')
    st(MPI_ERROR) = MPI_ERR_OTHER
    call MPI_Mrecv(x, 0, MPI_INTEGER, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. st(MPI_ERROR) == MPI_ERR_OTHER, &
               'Mrecv of MPI_MESSAGE_NO_PROC keeps MPI_ERROR')
    st(MPI_ERROR) = MPI_ERR_TAG
    call MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, flag, msg, st, ierr)
    call check(flag .and. st(MPI_ERROR) == MPI_ERR_TAG, 'Improbe of MPI_PROC_NULL keeps MPI_ERROR')
    call MPI_Imrecv(x, 0, MPI_INTEGER, msg, r, ierr)
    st(MPI_ERROR) = MPI_ERR_COUNT
    call MPI_Wait(r, st, ierr)
    call check(ierr == MPI_SUCCESS .and. st(MPI_ERROR) == MPI_ERR_COUNT, &
               'Wait of an Imrecv keeps MPI_ERROR')
    st(MPI_ERROR) = MPI_ERR_RANK
    call MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, st, ierr)
    call check(st(MPI_ERROR) == MPI_ERR_RANK, 'Probe of MPI_PROC_NULL keeps MPI_ERROR')
    st(MPI_ERROR) = MPI_ERR_ROOT
    call MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, flag, st, ierr)
    call check(flag .and. st(MPI_ERROR) == MPI_ERR_ROOT, 'Iprobe of MPI_PROC_NULL keeps MPI_ERROR')
    ! A message: probed, then received.
    call MPI_Isend(rank, 1, MPI_INTEGER, right, 9, MPI_COMM_WORLD, r, ierr)
    st(MPI_ERROR) = MPI_ERR_DIMS
    call MPI_Mprobe(left, 9, MPI_COMM_WORLD, msg, st, ierr)
    call check(ierr == MPI_SUCCESS .and. st(MPI_SOURCE) == left .and. &
               st(MPI_ERROR) == MPI_ERR_DIMS, 'Mprobe of a message keeps MPI_ERROR')
    st(MPI_ERROR) = MPI_ERR_OTHER
    call MPI_Mrecv(x, 1, MPI_INTEGER, msg, st, ierr)
    call check(x == left .and. st(MPI_ERROR) == MPI_ERR_OTHER, 'Mrecv of a message keeps MPI_ERROR')
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
  end subroutine error_field

  subroutine errors()
    integer :: msg, x, st(MPI_STATUS_SIZE), r
    ! A message already received.
    msg = MPI_MESSAGE_NULL
    call MPI_Mrecv(x, 1, MPI_INTEGER, msg, st, ierr)
    call check(err_class(ierr) == MPI_ERR_REQUEST, 'Mrecv of MPI_MESSAGE_NULL')
    r = MPI_REQUEST_NULL
    call MPI_Imrecv(x, 1, MPI_INTEGER, msg, r, ierr)
    call check(err_class(ierr) == MPI_ERR_REQUEST .and. r == MPI_REQUEST_NULL, &
               'Imrecv of MPI_MESSAGE_NULL')
    ! A bad tag and a bad communicator.
    call MPI_Mprobe(MPI_ANY_SOURCE, -7, MPI_COMM_WORLD, msg, st, ierr)
    call check(err_class(ierr) == MPI_ERR_TAG, 'Mprobe with tag -7')
    call MPI_Mprobe(MPI_ANY_SOURCE, 0, MPI_COMM_NULL, msg, st, ierr)
    call check(err_class(ierr) == MPI_ERR_COMM, 'Mprobe on MPI_COMM_NULL')
  end subroutine errors
end program f_mprobe
