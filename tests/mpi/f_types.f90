! SPDX-License-Identifier: MIT
! f_types.f90 - the Fortran datatypes and derived datatypes from Fortran:
! each Fortran type through a ring (LOGICAL, CHARACTER, COMPLEX...), a row
! of a column-major matrix by MPI_Type_vector, structs, extents in
! INTEGER(KIND=MPI_ADDRESS_KIND) and MPI_COUNT_KIND, names, Pack/Unpack.
program f_types
  use mpi
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  implicit none
  integer :: ierr, rank, nproc, right, left, i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  call basic_types()
  call derived()
  call packing()
  call memory()
  call errors()

  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_types: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  ! Send with datatype t from sbuf, receive n elements; check the count.
  subroutine count_is(t, n, what)
    integer, intent(in) :: t, n
    character(len=*), intent(in) :: what
    integer :: st(MPI_STATUS_SIZE), got, sz
    call MPI_Probe(left, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, t, got, ierr)
    call MPI_Type_size(t, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. got == n, what // ': count')
  end subroutine count_is

  subroutine basic_types()
    logical :: ls(3), lr(3)
    character(len=12) :: cs, cr
    complex :: zs(2), zr(2)
    double complex :: dzs, dzr
    integer(kind=8) :: i8s, i8r
    integer(kind=1) :: i1s(4), i1r(4)
    integer(kind=2) :: i2s, i2r
    real :: rs(3), rr(3)
    double precision :: ds, dr
    integer :: sz, req
    ls = [.true., .false., mod(rank, 2) == 0]
    call MPI_Isend(ls, 3, MPI_LOGICAL, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_LOGICAL, 3, 'LOGICAL')
    call MPI_Recv(lr, 3, MPI_LOGICAL, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(lr(1) .and. .not. lr(2) .and. (lr(3) .eqv. (mod(left, 2) == 0)), 'LOGICAL')

    write (cs, '(a,i0)') 'from rank ', rank
    cr = ' '
    call MPI_Isend(cs, len(cs), MPI_CHARACTER, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_CHARACTER, 12, 'CHARACTER')
    call MPI_Recv(cr, len(cr), MPI_CHARACTER, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    write (cs, '(a,i0)') 'from rank ', left
    call check(cr == cs, 'CHARACTER')

    zs = [cmplx(rank, 1), cmplx(2, -rank)]
    call MPI_Isend(zs, 2, MPI_COMPLEX, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_COMPLEX, 2, 'COMPLEX')
    call MPI_Recv(zr, 2, MPI_COMPLEX, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(abs(zr - [cmplx(left, 1), cmplx(2, -left)]) < 1e-6), 'COMPLEX')

    dzs = dcmplx(rank * 0.5d0, -1d0)
    call MPI_Isend(dzs, 1, MPI_DOUBLE_COMPLEX, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_DOUBLE_COMPLEX, 1, 'DOUBLE COMPLEX')
    call MPI_Recv(dzr, 1, MPI_DOUBLE_COMPLEX, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(abs(dzr - dcmplx(left * 0.5d0, -1d0)) < 1d-12, 'DOUBLE COMPLEX')

    i8s = 2_8**40 + rank
    call MPI_Isend(i8s, 1, MPI_INTEGER8, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_INTEGER8, 1, 'INTEGER8')
    call MPI_Recv(i8r, 1, MPI_INTEGER8, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(i8r == 2_8**40 + left, 'INTEGER8')

    i1s = int([1, -2, 3, rank], 1)
    call MPI_Isend(i1s, 4, MPI_INTEGER1, right, 1, MPI_COMM_WORLD, req, ierr)
    call count_is(MPI_INTEGER1, 4, 'INTEGER1')
    call MPI_Recv(i1r, 4, MPI_INTEGER1, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(all(i1r == int([1, -2, 3, left], 1)), 'INTEGER1')

    i2s = int(-300 - rank, 2)
    call MPI_Sendrecv(i2s, 1, MPI_INTEGER2, right, 2, i2r, 1, MPI_INTEGER2, left, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(i2r == -300 - left, 'INTEGER2')

    rs = [1.5, -2.5, real(rank)]
    call MPI_Sendrecv(rs, 3, MPI_REAL, right, 2, rr, 3, MPI_REAL4, left, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(abs(rr - [1.5, -2.5, real(left)]) < 1e-6), 'REAL and REAL4')
    ds = rank + 1d-9
    call MPI_Sendrecv(ds, 1, MPI_DOUBLE_PRECISION, right, 2, dr, 1, MPI_REAL8, left, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(abs(dr - (left + 1d-9)) < 1d-15, 'DOUBLE PRECISION and REAL8')

    ! The sizes are those of the Fortran types.
    call MPI_Type_size(MPI_INTEGER, sz, ierr)
    call check(sz == storage_size(i) / 8, 'size of MPI_INTEGER')
    call MPI_Type_size(MPI_LOGICAL, sz, ierr)
    call check(sz == storage_size(ls(1)) / 8, 'size of MPI_LOGICAL')
    call MPI_Type_size(MPI_DOUBLE_COMPLEX, sz, ierr)
    call check(sz == storage_size(dzs) / 8, 'size of MPI_DOUBLE_COMPLEX')
    call MPI_Type_size(MPI_INTEGER2, sz, ierr)
    call check(sz == 2, 'size of MPI_INTEGER2')
  end subroutine basic_types

  subroutine derived()
    integer :: m(4, 5), row(5), rowtype, vec, t, j, sz, n
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent, tlb, textent
    integer(kind=MPI_COUNT_KIND) :: szx, lbx, extx
    integer :: bl(2), idisp(2)
    integer(kind=MPI_ADDRESS_KIND) :: adisp(2)
    character(len=MPI_MAX_OBJECT_NAME) :: name
    integer :: st(MPI_STATUS_SIZE)
    ! Row 3 of a 4 x 5 column-major matrix: 5 elements 4 apart.
    m = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
    call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowtype, ierr)
    call MPI_Type_commit(rowtype, ierr)
    call MPI_Sendrecv(m(3, 1), 1, rowtype, right, 3, row, 5, MPI_INTEGER, left, 3, &
                      MPI_COMM_WORLD, st, ierr)
    call check(ierr == MPI_SUCCESS .and. all(row == [(left * 100 + 3 + 4 * j, j = 0, 4)]), &
               'a matrix row by MPI_Type_vector')
    call MPI_Type_size(rowtype, sz, ierr)
    call check(sz == 20, 'Type_size of the row')
    call MPI_Type_get_extent(rowtype, lb, extent, ierr)
    call check(ierr == MPI_SUCCESS .and. lb == 0 .and. extent == 4 * 17, 'Type_get_extent')
    call MPI_Type_get_true_extent(rowtype, tlb, textent, ierr)
    call check(tlb == 0 .and. textent == 4 * 17, 'Type_get_true_extent')
    call MPI_Type_size_x(rowtype, szx, ierr)
    call MPI_Type_get_extent_x(rowtype, lbx, extx, ierr)
    call check(szx == 20 .and. lbx == 0 .and. extx == 68, 'the _x calls in MPI_COUNT_KIND')
    call MPI_Type_set_name(rowtype, 'matrix row   ', ierr)
    call MPI_Type_get_name(rowtype, name, n, ierr)
    call check(name == 'matrix row' .and. n == 10, 'Type_set_name/Type_get_name')
    ! The row received into a column, and a resized type for two rows.
    call MPI_Type_create_resized(rowtype, 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, t, ierr)
    call MPI_Type_commit(t, ierr)
    m = -1
    call MPI_Sendrecv(row, 5, MPI_INTEGER, rank, 4, m(2, 1), 1, rowtype, rank, 4, &
                      MPI_COMM_WORLD, st, ierr)
    call check(all(m(2, :) == row) .and. all(m(1, :) == -1), 'receive into a row')
    m = -1
    call MPI_Sendrecv([(i, i = 1, 10)], 10, MPI_INTEGER, rank, 4, m, 2, t, rank, 4, &
                      MPI_COMM_WORLD, st, ierr)
    call check(all(m(1, :) == [1, 2, 3, 4, 5]) .and. all(m(2, :) == [6, 7, 8, 9, 10]), &
               'Type_create_resized: consecutive rows')
    call MPI_Type_free(t, ierr)
    call MPI_Type_free(rowtype, ierr)
    ! Indexed forms: MPI-1 INTEGER displacements and MPI_ADDRESS_KIND ones.
    bl = [2, 1]
    idisp = [0, 12]
    call MPI_Type_hindexed(2, bl, idisp, MPI_INTEGER, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Sendrecv([(i, i = 1, 4)], 1, t, rank, 5, row, 3, MPI_INTEGER, rank, 5, &
                      MPI_COMM_WORLD, st, ierr)
    call check(ierr == MPI_SUCCESS .and. all(row(1:3) == [1, 2, 4]), 'Type_hindexed')
    call MPI_Type_free(t, ierr)
    adisp = [4_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND]
    call MPI_Type_create_hindexed(2, [1, 1], adisp, MPI_INTEGER, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Sendrecv([(i, i = 1, 4)], 1, t, rank, 5, row, 2, MPI_INTEGER, rank, 5, &
                      MPI_COMM_WORLD, st, ierr)
    call check(all(row(1:2) == [2, 3]), 'Type_create_hindexed')
    call MPI_Type_free(t, ierr)
    call MPI_Type_indexed(2, [1, 2], [3, 0], MPI_INTEGER, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Sendrecv([(i, i = 1, 4)], 1, t, rank, 5, row, 3, MPI_INTEGER, rank, 5, &
                      MPI_COMM_WORLD, st, ierr)
    call check(all(row(1:3) == [4, 1, 2]), 'Type_indexed')
    call MPI_Type_free(t, ierr)
    call MPI_Type_contiguous(3, MPI_DOUBLE_PRECISION, vec, ierr)
    call MPI_Type_dup(vec, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Type_size(t, sz, ierr)
    call check(sz == 24 .and. t /= vec, 'Type_contiguous and Type_dup')
    call MPI_Type_free(t, ierr)
    call MPI_Type_free(vec, ierr)
    call MPI_Type_extent(MPI_INTEGER, n, ierr)
    call check(n == 4, 'Type_extent (INTEGER extent)')
  end subroutine derived

  subroutine packing()
    character(len=64) :: buf
    integer :: pos, a(2), b(2), sz
    double precision :: d, e
    a = [rank, 7]
    d = 2.5d0
    pos = 0
    call MPI_Pack(a, 2, MPI_INTEGER, buf, len(buf), pos, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 8, 'Pack position')
    call MPI_Pack(d, 1, MPI_DOUBLE_PRECISION, buf, len(buf), pos, MPI_COMM_WORLD, ierr)
    call MPI_Pack_size(2, MPI_INTEGER, MPI_COMM_WORLD, sz, ierr)
    call check(pos == 16 .and. sz >= 8, 'Pack and Pack_size')
    pos = 0
    call MPI_Unpack(buf, len(buf), pos, b, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Unpack(buf, len(buf), pos, e, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(b == a) .and. abs(e - d) < 1d-15 .and. pos == 16, &
               'Unpack')
  end subroutine packing

  ! MPI_Alloc_mem gives an address that c_f_pointer turns into an array.
  subroutine memory()
    integer(kind=MPI_ADDRESS_KIND) :: size, base
    type(c_ptr) :: p
    integer, pointer :: arr(:)
    integer :: got(10)
    size = 40
    base = 0
    call MPI_Alloc_mem(size, MPI_INFO_NULL, base, ierr)
    call check(ierr == MPI_SUCCESS .and. base /= 0, 'Alloc_mem')
    p = transfer(base, p)
    call c_f_pointer(p, arr, [10])
    arr = [(rank + i, i = 1, 10)]
    call MPI_Sendrecv(arr, 10, MPI_INTEGER, rank, 6, got, 10, MPI_INTEGER, rank, 6, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(got == [(rank + i, i = 1, 10)]), 'data in the memory of Alloc_mem')
    call MPI_Free_mem(arr, ierr)
    call check(ierr == MPI_SUCCESS, 'Free_mem')
  end subroutine memory

  subroutine errors()
    integer :: t, sz
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Type_contiguous(-1, MPI_INTEGER, t, ierr)
    call check(ierr == MPI_ERR_COUNT, 'negative count: MPI_ERR_COUNT')
    call MPI_Type_size(4242, sz, ierr)
    call check(ierr == MPI_ERR_TYPE, 'bad datatype number: MPI_ERR_TYPE')
    t = MPI_INTEGER
    call MPI_Type_free(t, ierr)
    call check(ierr == MPI_ERR_TYPE .and. t == MPI_INTEGER, 'Type_free of MPI_INTEGER')
    call MPI_Type_vector(2, 1, 2, MPI_DATATYPE_NULL, t, ierr)
    call check(ierr == MPI_ERR_TYPE, 'MPI_DATATYPE_NULL: MPI_ERR_TYPE')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  end subroutine errors

end program f_types
