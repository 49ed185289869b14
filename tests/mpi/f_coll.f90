! SPDX-License-Identifier: MIT
! f_coll.f90 - collectives from Fortran: data on every rank, MPI_IN_PLACE,
! a user operation written in Fortran (it sees Fortran datatype handles),
! MPI_2INTEGER, MPI_2REAL and MPI_2DOUBLE_PRECISION with MPI_MINLOC, LOGICAL reductions, non-blocking
! collectives, and error classes under MPI_ERRORS_RETURN.
module f_coll_ops
  use mpi
  implicit none
  integer :: calls = 0, badtype = 0
contains
  ! x o y = x: associative, not commutative (inoutvec = invec).
  subroutine first(invec, inoutvec, len, datatype)
    integer, intent(in) :: len, datatype
    integer, intent(in) :: invec(len)
    integer, intent(inout) :: inoutvec(len)
    calls = calls + 1
    if (datatype /= MPI_INTEGER) badtype = badtype + 1
    inoutvec = invec
  end subroutine first
end module f_coll_ops

program f_coll
  use mpi
  use f_coll_ops
  implicit none
  integer :: ierr, rank, nproc, i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)

  call basic()
  call in_place()
  call vectors()
  call userop()
  call pairs()
  call nonblocking()
  call errors()

  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_coll: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  subroutine basic()
    integer :: a(4), g(4 * nproc), s, root
    double precision :: d, dsum
    root = nproc - 1
    a = 0
    if (rank == root) a = [7, 8, 9, 10]
    call MPI_Bcast(a, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == [7, 8, 9, 10]), 'Bcast')
    s = -1
    call MPI_Reduce(rank + 1, s, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(s == nproc * (nproc + 1) / 2, 'Reduce MPI_SUM')
    d = rank * 0.5d0
    call MPI_Allreduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(abs(dsum - (nproc - 1) * 0.5d0) < 1d-12, 'Allreduce MPI_MAX double precision')
    a = [(rank * 4 + i, i = 1, 4)]
    g = -1
    call MPI_Allgather(a, 4, MPI_INTEGER, g, 4, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(g == [(i, i = 1, 4 * nproc)]), 'Allgather')
    g = [(100 + i, i = 1, 4 * nproc)]
    a = -1
    call MPI_Scatter(g, 4, MPI_INTEGER, a, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check(all(a == [(100 + rank * 4 + i, i = 1, 4)]), 'Scatter')
    g = -1
    call MPI_Gather(a, 4, MPI_INTEGER, g, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(all(g == [(100 + i, i = 1, 4 * nproc)]), 'Gather')
    call MPI_Scan(rank + 1, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(s == (rank + 1) * (rank + 2) / 2, 'Scan')
    s = -7
    call MPI_Exscan(rank + 1, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank > 0) call check(s == rank * (rank + 1) / 2, 'Exscan')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'Barrier')
  end subroutine basic

  subroutine in_place()
    integer :: v(3), g(nproc)
    logical :: all_even, any_even, l
    v = [rank, 1, -rank]
    call MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(v == [nproc * (nproc - 1) / 2, nproc, &
               -nproc * (nproc - 1) / 2]), 'Allreduce MPI_IN_PLACE')
    v = [rank, 2, 0]
    if (rank == 0) then
      call MPI_Reduce(MPI_IN_PLACE, v, 2, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
      call check(v(1) == nproc - 1 .and. v(2) == 2, 'Reduce MPI_IN_PLACE at the root')
    else
      call MPI_Reduce(v, v, 2, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    end if
    g = -1
    g(rank + 1) = rank * rank
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 1, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    call check(all(g == [(i * i, i = 0, nproc - 1)]), 'Allgather MPI_IN_PLACE')
    ! LOGICAL reductions
    l = mod(rank, 2) == 0
    call MPI_Allreduce(l, all_even, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(l, any_even, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. (all_even .eqv. (nproc == 1)) .and. any_even, &
               'MPI_LAND and MPI_LOR on LOGICAL')
  end subroutine in_place

  subroutine vectors()
    integer :: counts(nproc), displs(nproc), sbuf(nproc), rbuf(nproc * (nproc + 1) / 2)
    integer :: types(nproc), a2a(nproc), k
    counts = [(i, i = 1, nproc)]
    displs(1) = 0
    do i = 2, nproc
      displs(i) = displs(i - 1) + counts(i - 1)
    end do
    sbuf = rank
    rbuf = -1
    call MPI_Allgatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    k = 0
    do i = 1, nproc
      call check(all(rbuf(k + 1:k + i) == i - 1), 'Allgatherv')
      k = k + i
    end do
    sbuf = [(rank * 100 + i, i = 0, nproc - 1)]
    call MPI_Alltoall(sbuf, 1, MPI_INTEGER, a2a, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(a2a == [(i * 100 + rank, i = 0, nproc - 1)]), 'Alltoall')
    ! Alltoallw: an array of datatype handles as long as the communicator
    types = MPI_INTEGER
    counts = 1
    displs = [(4 * i, i = 0, nproc - 1)]
    a2a = -1
    call MPI_Alltoallw(sbuf, counts, displs, types, a2a, counts, displs, types, &
                       MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a2a == [(i * 100 + rank, i = 0, nproc - 1)]), &
               'Alltoallw')
    sbuf = [(rank + i, i = 0, nproc - 1)]
    call MPI_Reduce_scatter_block(sbuf, k, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(k == nproc * (nproc - 1) / 2 + nproc * rank, 'Reduce_scatter_block')
  end subroutine vectors

  ! A Fortran function as an operation, not commutative: rank order kept.
  subroutine userop()
    integer :: op, r, expect(2), v(2)
    logical :: commute
    call MPI_Op_create(first, .false., op, ierr)
    call check(ierr == MPI_SUCCESS .and. op /= MPI_OP_NULL, 'Op_create')
    call MPI_Op_commutative(op, commute, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. commute, 'Op_commutative .false.')
    v = [rank + 1, 1]
    call MPI_Allreduce(v, r, 1, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    ! 1 o 2 o 3 ... = 1 (rank 0's)
    call check(ierr == MPI_SUCCESS .and. r == 1, 'user operation result in rank order')
    call check(nproc == 1 .or. calls > 0, 'the Fortran function was called')
    call check(badtype == 0, 'the function sees MPI_INTEGER')
    call MPI_Op_free(op, ierr)
    call check(ierr == MPI_SUCCESS .and. op == MPI_OP_NULL, 'Op_free sets MPI_OP_NULL')
    ! Reduce_local calls it on this process.
    v = [3, 4]
    expect = [5, 6]
    call MPI_Op_create(first, .true., op, ierr)
    call MPI_Op_commutative(op, commute, ierr)
    call check(commute, 'Op_commutative .true.')
    call MPI_Reduce_local(v, expect, 2, MPI_INTEGER, op, ierr)
    call check(ierr == MPI_SUCCESS .and. all(expect == [3, 4]), 'Reduce_local')
    call MPI_Op_free(op, ierr)
  end subroutine userop

  ! MPI_MINLOC and MPI_MAXLOC on MPI_2INTEGER pairs (value, rank).
  subroutine pairs()
    integer :: p(2), q(2)
    real :: r(2), rq(2)
    double precision :: d(2), dq(2)
    logical :: lx
    p = [mod(rank + 2, nproc) + 10, rank]
    call MPI_Allreduce(p, q, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. q(1) == 10 .and. q(2) == mod(nproc - 2 + nproc, nproc), &
               'MPI_MINLOC on MPI_2INTEGER')
    call MPI_Allreduce(p, q, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check(q(1) == nproc - 1 + 10, 'MPI_MAXLOC on MPI_2INTEGER')
    ! The same with REAL and DOUBLE PRECISION pairs (value, index); the
    ! lowest value is on every rank above 0, and the lower index wins.
    r = [real(min(rank, 1)) * 2.5, real(rank)]
    call MPI_Allreduce(r, rq, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. nint(rq(1) * 2) == 0 .and. nint(rq(2)) == 0, &
               'MPI_MINLOC on MPI_2REAL')
    call MPI_Allreduce(r, rq, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. nint(rq(1) * 2) == min(nproc - 1, 1) * 5 .and. &
               nint(rq(2)) == min(nproc - 1, 1), 'MPI_MAXLOC on MPI_2REAL')
    d = [dble(-rank), dble(rank + 1)]
    call MPI_Allreduce(d, dq, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. nint(dq(1)) == 1 - nproc .and. nint(dq(2)) == nproc, &
               'MPI_MINLOC on MPI_2DOUBLE_PRECISION')
    ! MPI_LXOR on LOGICAL: true where an odd number of ranks is odd.
    call MPI_Allreduce(mod(rank, 2) == 1, lx, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. (lx .eqv. mod(nproc / 2, 2) == 1), 'MPI_LXOR on LOGICAL')
  end subroutine pairs

  subroutine nonblocking()
    integer :: req
    integer, asynchronous :: a(2), s
    logical :: flag
    a = 0
    if (rank == 0) a = [5, 6]
    call MPI_Ibcast(a, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'Ibcast')
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(a == [5, 6]) .and. req == MPI_REQUEST_NULL, 'Ibcast data')
    call MPI_Iallreduce(rank, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(s == nproc * (nproc - 1) / 2, 'Iallreduce')
    call MPI_Ibarrier(MPI_COMM_WORLD, req, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    call check(req == MPI_REQUEST_NULL, 'Ibarrier')
  end subroutine nonblocking

  subroutine errors()
    integer :: a, b
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Bcast(a, 1, MPI_INTEGER, nproc, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_ROOT, 'bad root: MPI_ERR_ROOT')
    call MPI_Allreduce(a, b, 1, MPI_INTEGER, MPI_OP_NULL, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_OP, 'MPI_OP_NULL: MPI_ERR_OP')
    call MPI_Allreduce(a, b, 1, MPI_INTEGER, 77, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_OP, 'bad op number: MPI_ERR_OP')
    call MPI_Allreduce(a, b, -2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_ERR_COUNT, 'negative count: MPI_ERR_COUNT')
    call MPI_Barrier(MPI_COMM_NULL, ierr)
    call check(ierr == MPI_ERR_COMM, 'Barrier on MPI_COMM_NULL: MPI_ERR_COMM')
    a = MPI_SUM
    call MPI_Op_free(a, ierr)
    call check(ierr == MPI_ERR_OP, 'Op_free of MPI_SUM: MPI_ERR_OP')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  end subroutine errors

end program f_coll
