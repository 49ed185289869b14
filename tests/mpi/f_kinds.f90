! SPDX-License-Identifier: MIT
! f_kinds.f90 - the optional datatypes of the kinds gfortran has:
! MPI_LOGICAL1, 2, 4, 8 for LOGICAL(KIND=1, 2, 4, 8) and MPI_INTEGER16 for
! INTEGER(KIND=16), through point-to-point and broadcast (every element
! checked), the logical reductions on the logicals, SUM, MAX, MIN and the
! bitwise ones on INTEGER(16) with values beyond 64 bits; their sizes agree
! with MPI_SIZEOF, and MPI_TYPE_MATCH_SIZE and MPI_TYPE_CREATE_F90_INTEGER
! give MPI_INTEGER16 for 16 bytes and 38 digits.
program f_kinds
  use mpi
  implicit none
  integer, parameter :: n = 5
  integer :: ierr, rank, nproc, right, left, i, sz, t
  logical(kind=1) :: l1(n), r1(n)
  logical(kind=2) :: l2(n), r2(n)
  logical(kind=4) :: l4(n), r4(n)
  logical(kind=8) :: l8(n), r8(n)
  integer(kind=16) :: i16(n), s16(n), want16
  integer(kind=16), parameter :: big = 2_16**100

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  ! Sizes: the datatypes' and MPI_SIZEOF's.
  call same_size(MPI_LOGICAL1, 1, 'MPI_LOGICAL1')
  call same_size(MPI_LOGICAL2, 2, 'MPI_LOGICAL2')
  call same_size(MPI_LOGICAL4, 4, 'MPI_LOGICAL4')
  call same_size(MPI_LOGICAL8, 8, 'MPI_LOGICAL8')
  call same_size(MPI_INTEGER16, 16, 'MPI_INTEGER16')
  call MPI_Sizeof(l1, sz, ierr)
  call check(sz == 1, 'MPI_SIZEOF of LOGICAL(1)')
  call MPI_Sizeof(l2, sz, ierr)
  call check(sz == 2, 'MPI_SIZEOF of LOGICAL(2)')
  call MPI_Sizeof(l8, sz, ierr)
  call check(sz == 8, 'MPI_SIZEOF of LOGICAL(8)')
  call MPI_Sizeof(i16, sz, ierr)
  call check(sz == 16, 'MPI_SIZEOF of INTEGER(16)')
  call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, t, ierr)
  call check(ierr == MPI_SUCCESS .and. t == MPI_INTEGER16, 'Type_match_size INTEGER 16')
  call MPI_Type_create_f90_integer(30, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 16, 'Type_create_f90_integer(30)')

  ! Point-to-point around the ring: a pattern of each rank's own.
  do i = 1, n
    l1(i) = mod(i + rank, 2) == 0
    l2(i) = mod(i + rank, 3) == 0
    l4(i) = mod(i * rank, 2) == 1
    l8(i) = i > rank
    i16(i) = big * (rank + 1) + i
  end do
  call MPI_Sendrecv(l1, n, MPI_LOGICAL1, right, 1, r1, n, MPI_LOGICAL1, left, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(l2, n, MPI_LOGICAL2, right, 2, r2, n, MPI_LOGICAL2, left, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(l4, n, MPI_LOGICAL4, right, 3, r4, n, MPI_LOGICAL4, left, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(l8, n, MPI_LOGICAL8, right, 4, r8, n, MPI_LOGICAL8, left, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(i16, n, MPI_INTEGER16, right, 5, s16, n, MPI_INTEGER16, left, 5, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'the Sendrecv calls')
  do i = 1, n
    call check(logical(r1(i) .eqv. (mod(i + left, 2) == 0)), 'LOGICAL(1) received')
    call check(logical(r2(i) .eqv. (mod(i + left, 3) == 0)), 'LOGICAL(2) received')
    call check(r4(i) .eqv. (mod(i * left, 2) == 1), 'LOGICAL(4) received')
    call check(logical(r8(i) .eqv. (i > left)), 'LOGICAL(8) received')
    call check(s16(i) == big * (left + 1) + i, 'INTEGER(16) received')
  end do

  ! Broadcast from the last rank.
  r8 = l8
  s16 = i16
  call MPI_Bcast(r8, n, MPI_LOGICAL8, nproc - 1, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(s16, n, MPI_INTEGER16, nproc - 1, MPI_COMM_WORLD, ierr)
  do i = 1, n
    call check(logical(r8(i) .eqv. (i > nproc - 1)), 'LOGICAL(8) broadcast')
    call check(s16(i) == big * nproc + i, 'INTEGER(16) broadcast')
  end do

  ! The logical operations on each kind: element i is .true. on the ranks
  ! below i, so LAND is .true. where every rank is below i, LOR where rank
  ! 0 is, LXOR where an odd number of ranks are.
  do i = 1, n
    l1(i) = rank < i
    l2(i) = rank < i
    l4(i) = rank < i
    l8(i) = rank < i
  end do
  call MPI_Allreduce(l1, r1, n, MPI_LOGICAL1, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l2, r2, n, MPI_LOGICAL2, MPI_LOR, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l4, r4, n, MPI_LOGICAL4, MPI_LXOR, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l8, r8, n, MPI_LOGICAL8, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'the logical reductions')
  do i = 1, n
    call check(logical(r1(i) .eqv. (nproc <= i)), 'LAND on LOGICAL(1)')
    call check(logical(r2(i)), 'LOR on LOGICAL(2)')
    call check(r4(i) .eqv. (mod(min(i, nproc), 2) == 1), 'LXOR on LOGICAL(4)')
    call check(logical(r8(i) .eqv. (nproc <= i)), 'LAND on LOGICAL(8)')
  end do
  call MPI_Allreduce(l1, r1, n, MPI_LOGICAL1, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(err_class(ierr) == MPI_ERR_OP, 'SUM on LOGICAL(1) is MPI_ERR_OP')

  ! Sums, extremes and bits on INTEGER(16), beyond 64 bits.
  do i = 1, n
    i16(i) = big * (rank + 1) - i
  end do
  call MPI_Allreduce(i16, s16, n, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'SUM on INTEGER(16)')
  do i = 1, n
    want16 = big * (int(nproc, 16) * (nproc + 1) / 2) - int(nproc, 16) * i
    call check(s16(i) == want16, 'SUM on INTEGER(16): the value')
  end do
  call MPI_Allreduce(i16, s16, n, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(all(s16 == big * nproc - [(i, i = 1, n)]), 'MAX on INTEGER(16)')
  call MPI_Reduce(-i16, s16, n, MPI_INTEGER16, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all(s16 == -(big * nproc) + [(i, i = 1, n)]), 'MIN on INTEGER(16)')
  i16 = 0
  i16(1) = ishft(1_16, 64 + rank)
  call MPI_Allreduce(i16, s16, n, MPI_INTEGER16, MPI_BOR, MPI_COMM_WORLD, ierr)
  call check(s16(1) == ishft(ishft(1_16, nproc) - 1, 64), 'BOR on INTEGER(16)')
  call MPI_Allreduce(i16, s16, n, MPI_INTEGER16, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(err_class(ierr) == MPI_ERR_OP, 'LAND on INTEGER(16) is MPI_ERR_OP')

  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_kinds: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine same_size(dt, bytes, name)
    integer, intent(in) :: dt, bytes
    character(len=*), intent(in) :: name
    integer :: s
    integer(kind=MPI_ADDRESS_KIND) :: lb, ext
    call MPI_Type_size(dt, s, ierr)
    call check(ierr == MPI_SUCCESS .and. s == bytes, name // ': size')
    call MPI_Type_get_extent(dt, lb, ext, ierr)
    call check(lb == 0 .and. ext == bytes, name // ': extent')
  end subroutine same_size
end program f_kinds
