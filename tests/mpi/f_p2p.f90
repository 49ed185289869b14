! SPDX-License-Identifier: MIT
! f_p2p.f90 - point-to-point from Fortran through the mpi module: data and
! statuses, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE, 1-based indices of
! Waitany/Waitsome, LOGICAL flags, persistent requests, MPI_BOTTOM with
! absolute addresses, request numbers given back, and error classes in
! ierror under MPI_ERRORS_RETURN.  Any process count.  As MPI-3 says, the
! buffers of non-blocking calls and those reached through MPI_BOTTOM are
! ASYNCHRONOUS: otherwise an optimizing compiler may keep them in
! registers across MPI_WAIT.
program f_p2p
  use mpi
  implicit none
  integer :: ierr, rank, nproc, right, left

  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  call ring()
  call any_some()
  call flags()
  call persistent()
  call buffered()
  call bottom()
  call numbers()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Finalize')

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_p2p: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  ! Each rank sends 5 integers to its right; statuses checked in both forms.
  subroutine ring()
    integer :: i, n, st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2), req(2)
    integer, asynchronous :: sbuf(5), rbuf(5)
    sbuf = [(rank * 10 + i, i = 1, 5)]
    rbuf = -1
    call MPI_Sendrecv(sbuf, 5, MPI_INTEGER, right, rank, rbuf, 5, MPI_INTEGER, MPI_ANY_SOURCE, &
                      MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call check(ierr == MPI_SUCCESS, 'Sendrecv')
    call check(all(rbuf == [(left * 10 + i, i = 1, 5)]), 'Sendrecv data')
    call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == left, 'Sendrecv status')
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == 5, 'Get_count')

    rbuf = -1
    call MPI_Irecv(rbuf, 5, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(sbuf, 5, MPI_INTEGER, right, 100 + rank, MPI_COMM_WORLD, req(2), ierr)
    call check(req(1) /= MPI_REQUEST_NULL .and. req(2) /= MPI_REQUEST_NULL .and. &
               req(1) /= req(2), 'request numbers')
    call MPI_Waitall(2, req, sts, ierr)
    call check(ierr == MPI_SUCCESS, 'Waitall')
    call check(all(req == MPI_REQUEST_NULL), 'Waitall sets MPI_REQUEST_NULL')
    call check(all(rbuf == [(left * 10 + i, i = 1, 5)]), 'Irecv data')
    call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 100 + left, &
               'Waitall status')
    call MPI_Get_count(sts(:, 1), MPI_INTEGER, n, ierr)
    call check(n == 5, 'Waitall count')

    ! The ignore constants
    rbuf = -1
    call MPI_Irecv(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(sbuf, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(rbuf(1:5) == [(left * 10 + i, i = 1, 5)]), &
               'Waitall with MPI_STATUSES_IGNORE')
    rbuf = -1
    call MPI_Isend(sbuf, 5, MPI_INTEGER, right, 4, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Recv(rbuf, 5, MPI_INTEGER, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. rbuf(5) == left * 10 + 5, 'Recv MPI_STATUS_IGNORE')
    call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
    call check(req(2) == MPI_REQUEST_NULL, 'Wait sets MPI_REQUEST_NULL')

    ! Sendrecv_replace: the buffer goes round the ring.
    rbuf = sbuf
    call MPI_Sendrecv_replace(rbuf, 5, MPI_INTEGER, right, 5, left, 5, MPI_COMM_WORLD, st, ierr)
    call check(ierr == MPI_SUCCESS .and. rbuf(1) == left * 10 + 1 .and. st(MPI_SOURCE) == left, &
               'Sendrecv_replace')
  end subroutine ring

  ! Waitany and Waitsome give 1-based indices; MPI_UNDEFINED when nothing is active.
  subroutine any_some()
    integer :: req(3), idx, done(3), outcount, indices(3), i, k
    integer, asynchronous :: a, b, c
    integer :: sts(MPI_STATUS_SIZE, 3), st(MPI_STATUS_SIZE)
    a = -1
    b = -1
    c = rank
    req(1) = MPI_REQUEST_NULL
    call MPI_Irecv(a, 1, MPI_INTEGER, left, 11, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Isend(c, 1, MPI_INTEGER, right, 11, MPI_COMM_WORLD, req(3), ierr)
    done = 0
    do k = 1, 2
      call MPI_Waitany(3, req, idx, st, ierr)
      call check(ierr == MPI_SUCCESS .and. (idx == 2 .or. idx == 3), 'Waitany index is 1-based')
      call check(req(idx) == MPI_REQUEST_NULL, 'Waitany frees the request')
      if (idx == 2) call check(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 11, 'Waitany status')
      done(idx) = done(idx) + 1
    end do
    call check(done(2) == 1 .and. done(3) == 1 .and. a == left, 'Waitany completions')
    call MPI_Waitany(3, req, idx, st, ierr)
    call check(ierr == MPI_SUCCESS .and. idx == MPI_UNDEFINED, 'Waitany with none active')

    a = -1
    b = -1
    call MPI_Irecv(a, 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, req(1), ierr)
    req(2) = MPI_REQUEST_NULL
    call MPI_Irecv(b, 1, MPI_INTEGER, left, 13, MPI_COMM_WORLD, req(3), ierr)
    call MPI_Send(c, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, ierr)
    call MPI_Send(c, 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, ierr)
    done = 0
    do while (done(1) + done(3) < 2)
      call MPI_Waitsome(3, req, outcount, indices, sts, ierr)
      call check(ierr == MPI_SUCCESS .and. outcount >= 1 .and. outcount <= 2, 'Waitsome outcount')
      do i = 1, outcount
        call check(indices(i) == 1 .or. indices(i) == 3, 'Waitsome indices are 1-based')
        call check(sts(MPI_TAG, i) == merge(12, 13, indices(i) == 1), 'Waitsome status')
        done(indices(i)) = done(indices(i)) + 1
      end do
    end do
    call check(a == left .and. b == left .and. all(req == MPI_REQUEST_NULL), 'Waitsome data')
    call MPI_Testsome(3, req, outcount, indices, sts, ierr)
    call check(ierr == MPI_SUCCESS .and. outcount == MPI_UNDEFINED, 'Testsome with none active')
    block
      logical :: flag
      call MPI_Testany(3, req, idx, flag, st, ierr)
      call check(ierr == MPI_SUCCESS .and. flag .and. idx == MPI_UNDEFINED, &
                 'Testany with none active')
      call MPI_Waitall(0, req, sts, ierr)
      call check(ierr == MPI_SUCCESS, 'Waitall of no request')
    end block
  end subroutine any_some

  ! LOGICAL flags: Test, Iprobe, Testall, Test_cancelled, Request_get_status.
  subroutine flags()
    integer :: req, req2(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
    integer, asynchronous :: a, b
    logical :: flag
    a = -1
    b = 77
    call MPI_Irecv(a, 1, MPI_INTEGER, rank, 21, MPI_COMM_WORLD, req, ierr)
    flag = .true.
    call MPI_Test(req, flag, st, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'Test before the send: .false.')
    call MPI_Request_get_status(req, flag, st, ierr)
    call check(.not. flag, 'Request_get_status before the send: .false.')
    call MPI_Iprobe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, flag, st, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'Iprobe with nothing: .false.')
    call MPI_Send(b, 1, MPI_INTEGER, rank, 21, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, st, ierr)
    end do
    call check(flag .and. a == 77 .and. req == MPI_REQUEST_NULL, 'Test completes: .true.')
    call check(st(MPI_SOURCE) == rank .and. st(MPI_TAG) == 21, 'Test status')

    ! Iprobe finds a message sent to itself (non-blocking send).
    call MPI_Isend(b, 1, MPI_INTEGER, rank, 22, MPI_COMM_WORLD, req2(1), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, flag, st, ierr)
    end do
    call check(st(MPI_SOURCE) == rank .and. st(MPI_TAG) == 22, 'Iprobe status')
    call MPI_Irecv(a, 1, MPI_INTEGER, rank, 22, MPI_COMM_WORLD, req2(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, req2, flag, sts, ierr)
    end do
    call check(ierr == MPI_SUCCESS .and. all(req2 == MPI_REQUEST_NULL), 'Testall')
    call check(sts(MPI_TAG, 2) == 22, 'Testall status')

    ! A cancelled receive, and a status marked cancelled by hand.
    call MPI_Irecv(a, 1, MPI_INTEGER, rank, 23, MPI_COMM_WORLD, req, ierr)
    call MPI_Cancel(req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'Cancel keeps the request')
    call MPI_Wait(req, st, ierr)
    call MPI_Test_cancelled(st, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag, 'Test_cancelled: .true.')
    call MPI_Status_set_cancelled(st, .false., ierr)
    call MPI_Test_cancelled(st, flag, ierr)
    call check(.not. flag, 'Status_set_cancelled .false.')
    call MPI_Status_set_elements(st, MPI_INTEGER, 3, ierr)
    call MPI_Get_elements(st, MPI_INTEGER, a, ierr)
    call check(ierr == MPI_SUCCESS .and. a == 3, 'Status_set_elements')
  end subroutine flags

  ! Buffered sends through an attached buffer; detach gives its size back.
  subroutine buffered()
    character(len=1024) :: pool
    integer :: size
    integer, asynchronous :: v, w
    call MPI_Buffer_attach(pool, len(pool), ierr)
    call check(ierr == MPI_SUCCESS, 'Buffer_attach')
    v = rank + 1000
    call MPI_Bsend(v, 1, MPI_INTEGER, right, 71, MPI_COMM_WORLD, ierr)
    v = -1
    call MPI_Recv(w, 1, MPI_INTEGER, left, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. w == left + 1000, 'Bsend')
    call MPI_Buffer_detach(pool, size, ierr)
    call check(ierr == MPI_SUCCESS .and. size == len(pool), 'Buffer_detach size')
  end subroutine buffered

  ! Persistent requests stay after Wait and go with Request_free.
  subroutine persistent()
    integer :: sreq, rreq, k, st(MPI_STATUS_SIZE), both(2)
    integer, asynchronous :: s, r
    call MPI_Send_init(s, 1, MPI_INTEGER, right, 31, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Recv_init(r, 1, MPI_INTEGER, left, 31, MPI_COMM_WORLD, rreq, ierr)
    do k = 1, 3
      s = rank * 100 + k
      r = -1
      both = [rreq, sreq]
      call MPI_Startall(2, both, ierr)
      call check(ierr == MPI_SUCCESS .and. both(1) == rreq, 'Startall')
      call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
      call MPI_Wait(rreq, st, ierr)
      call check(r == left * 100 + k .and. st(MPI_SOURCE) == left, 'persistent data')
      call check(sreq /= MPI_REQUEST_NULL .and. rreq /= MPI_REQUEST_NULL, &
                 'persistent requests stay')
    end do
    call MPI_Request_free(sreq, ierr)
    call MPI_Request_free(rreq, ierr)
    call check(ierr == MPI_SUCCESS .and. sreq == MPI_REQUEST_NULL .and. &
               rreq == MPI_REQUEST_NULL, 'Request_free')
  end subroutine persistent

  ! A struct of absolute addresses sent from and received at MPI_BOTTOM.
  subroutine bottom()
    integer :: ts, tr, bl(2), types(2), st(MPI_STATUS_SIZE), n
    ! Reached through MPI_BOTTOM only: the compiler must not keep them in registers.
    integer, asynchronous :: i1, i2
    double precision, asynchronous :: d1, d2
    integer(kind=MPI_ADDRESS_KIND) :: disp(2)
    bl = 1
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
    call MPI_Get_address(i1, disp(1), ierr)
    call MPI_Get_address(d1, disp(2), ierr)
    call MPI_Type_create_struct(2, bl, disp, types, ts, ierr)
    call MPI_Type_commit(ts, ierr)
    call MPI_Get_address(i2, disp(1), ierr)
    call MPI_Get_address(d2, disp(2), ierr)
    call MPI_Type_create_struct(2, bl, disp, types, tr, ierr)
    call MPI_Type_commit(tr, ierr)
    call check(ierr == MPI_SUCCESS .and. ts /= tr, 'struct types')
    i1 = rank + 5
    d1 = rank + 0.25d0
    i2 = -1
    d2 = -1
    call MPI_Sendrecv(MPI_BOTTOM, 1, ts, rank, 41, MPI_BOTTOM, 1, tr, rank, 41, &
                      MPI_COMM_WORLD, st, ierr)
    call check(ierr == MPI_SUCCESS .and. i2 == rank + 5 .and. &
               abs(d2 - (rank + 0.25d0)) < 1d-12, 'MPI_BOTTOM to MPI_BOTTOM')
    call MPI_Get_elements(st, tr, n, ierr)
    call check(n == 2, 'Get_elements of the struct')
    call MPI_Type_free(ts, ierr)
    call MPI_Type_free(tr, ierr)
    call check(ts == MPI_DATATYPE_NULL .and. tr == MPI_DATATYPE_NULL, &
               'Type_free sets MPI_DATATYPE_NULL')
  end subroutine bottom

  ! Completed requests give their numbers back: they do not grow.
  subroutine numbers()
    integer :: k, req(2), maxnum
    integer, asynchronous :: a, b
    maxnum = 0
    do k = 1, 200
      call MPI_Irecv(a, 1, MPI_INTEGER, rank, 51, MPI_COMM_WORLD, req(1), ierr)
      call MPI_Isend(b, 1, MPI_INTEGER, rank, 51, MPI_COMM_WORLD, req(2), ierr)
      maxnum = max(maxnum, req(1), req(2))
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(maxnum < 10, 'request numbers are given back')
  end subroutine numbers

  ! Misuse: the error class comes back in ierror.
  subroutine errors()
    integer :: a, cls, req, eh
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
    call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRORS_RETURN, 'Comm_get_errhandler')
    a = 1
    call MPI_Send(a, 1, MPI_INTEGER, nproc + 3, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, a)
    call check(cls == MPI_ERR_RANK, 'bad rank: MPI_ERR_RANK')
    call MPI_Send(a, 1, MPI_INTEGER, rank, -5, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_TAG, 'bad tag: MPI_ERR_TAG')
    call MPI_Send(a, -1, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_COUNT, 'bad count: MPI_ERR_COUNT')
    call MPI_Send(a, 1, 9999, rank, 0, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_TYPE, 'bad datatype number: MPI_ERR_TYPE')
    call MPI_Send(a, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_TYPE, 'MPI_DATATYPE_NULL: MPI_ERR_TYPE')
    call MPI_Send(a, 1, MPI_INTEGER, rank, 0, 12345, ierr)
    call check(ierr == MPI_ERR_COMM, 'bad communicator number: MPI_ERR_COMM')
    call MPI_Irecv(a, 1, MPI_INTEGER, rank, 0, MPI_COMM_NULL, req, ierr)
    call check(ierr == MPI_ERR_COMM, 'MPI_COMM_NULL: MPI_ERR_COMM')
    call MPI_Recv(a, 1, MPI_INTEGER, nproc, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_ERR_RANK, 'bad source: MPI_ERR_RANK')
    ! A message longer than the receive: MPI_ERR_TRUNCATE, in the status too.
    block
      integer :: st(MPI_STATUS_SIZE)
      integer, asynchronous :: two(2)
      two = 3
      call MPI_Isend(two, 2, MPI_INTEGER, rank, 61, MPI_COMM_WORLD, req, ierr)
      call MPI_Recv(a, 1, MPI_INTEGER, rank, 61, MPI_COMM_WORLD, st, ierr)
      call check(ierr == MPI_ERR_TRUNCATE, 'truncation: MPI_ERR_TRUNCATE')
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    end block
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  end subroutine errors

end program f_p2p
