! SPDX-License-Identifier: MIT
! f_dtype.f90 - datatype introspection and construction from Fortran:
! envelopes and contents (the datatypes come back as the Fortran names),
! a subarray in Fortran order sent and received, a block darray,
! MPI_TYPE_MATCH_SIZE and MPI_TYPE_CREATE_F90_INTEGER, external32 packing
! (big-endian), attributes on datatypes with Fortran copy and delete
! functions and with the predefined MPI_TYPE_DUP_FN, error classes under MPI_ERRORS_RETURN,
! and MPI_AINT_ADD and MPI_AINT_DIFF (a derived type of a sequence derived type's fields,
! sent from MPI_BOTTOM).
module f_dtype_attr
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0
  ! What the functions saw last: keyval, datatype, value, extra_state.
  integer :: seen_key = -1, seen_type = -1
  integer(kind=MPI_ADDRESS_KIND) :: seen_val = -1, seen_extra = -1
  ! Sent and received through MPI_BOTTOM: module variables, which the
  ! compiler reloads after any call.
  type rec
    sequence
    integer :: tag
    double precision :: x(3)
  end type rec
  type(rec) :: out, in
contains
  subroutine copy_fn(oldtype, keyval, extra, valin, valout, flag, ierr)
    integer :: oldtype, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
    logical :: flag
    copies = copies + 1
    seen_key = keyval
    seen_type = oldtype
    valout = valin * 2 + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy_fn

  subroutine delete_fn(datatype, keyval, val, extra, ierr)
    integer :: datatype, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    seen_key = keyval
    seen_type = datatype
    seen_val = val
    seen_extra = extra
    ierr = MPI_SUCCESS
  end subroutine delete_fn
end module f_dtype_attr

program f_dtype
  use mpi
  use f_dtype_attr
  implicit none
  integer :: ierr, rank, nproc

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call envelope()
  call subarray()
  call matching()
  call external32()
  call attributes()
  call errors()
  call addresses()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_dtype: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine envelope()
    integer :: vec, st, ni, na, nd, comb, ints(3), types(2)
    integer(kind=MPI_ADDRESS_KIND) :: addrs(2)
    call MPI_Type_get_envelope(MPI_REAL, ni, na, nd, comb, ierr)
    call check(ierr == MPI_SUCCESS .and. comb == MPI_COMBINER_NAMED .and. ni + na + nd == 0, &
               'envelope of MPI_REAL')
    call MPI_Type_vector(3, 2, 4, MPI_DOUBLE_PRECISION, vec, ierr)
    call MPI_Type_get_envelope(vec, ni, na, nd, comb, ierr)
    call check(ierr == MPI_SUCCESS .and. comb == MPI_COMBINER_VECTOR .and. ni == 3 .and. &
               na == 0 .and. nd == 1, 'envelope of a vector')
    types = -1
    call MPI_Type_get_contents(vec, 3, 2, 2, ints, addrs, types, ierr)
    call check(ierr == MPI_SUCCESS .and. all(ints == [3, 2, 4]), 'contents: integers')
    call check(types(1) == MPI_DOUBLE_PRECISION .and. types(2) == -1, &
               'contents: the datatype under its Fortran name')
    ! A struct of the vector: the vector comes back as a new handle.
    call MPI_Type_create_struct(1, [1], [8_MPI_ADDRESS_KIND], [vec], st, ierr)
    call MPI_Type_get_contents(st, 3, 2, 2, ints, addrs, types, ierr)
    call check(ierr == MPI_SUCCESS .and. ints(1) == 1 .and. ints(2) == 1 .and. addrs(1) == 8, &
               'contents of a struct')
    call MPI_Type_get_envelope(types(1), ni, na, nd, comb, ierr)
    call check(ierr == MPI_SUCCESS .and. comb == MPI_COMBINER_VECTOR, &
               'the struct''s member is the vector')
    call MPI_Type_free(types(1), ierr)
    call check(ierr == MPI_SUCCESS .and. types(1) == MPI_DATATYPE_NULL, &
               'the returned datatype is freed')
    call MPI_Type_free(st, ierr)
    call MPI_Type_free(vec, ierr)
  end subroutine envelope

  ! The middle of a 4 x 5 array, in Fortran order.
  subroutine subarray()
    integer :: sub, a(4, 5), b(6), i, j, sz, ni, na, nd, comb, ints(10), types(1)
    integer(kind=MPI_ADDRESS_KIND) :: addrs(1), lb, ext
    a = reshape([(i, i = 1, 20)], [4, 5])
    call MPI_Type_create_subarray(2, [4, 5], [2, 3], [1, 1], MPI_ORDER_FORTRAN, MPI_INTEGER, &
                                  sub, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_create_subarray')
    call MPI_Type_commit(sub, ierr)
    call MPI_Type_size(sub, sz, ierr)
    call check(sz == 6 * 4, 'size of the subarray')
    b = 0
    call MPI_Sendrecv(a, 1, sub, rank, 1, b, 6, MPI_INTEGER, rank, 1, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'Sendrecv of a subarray')
    call check(all(b == [((a(i, j), i = 2, 3), j = 2, 4)]), 'subarray data')
    call MPI_Type_get_envelope(sub, ni, na, nd, comb, ierr)
    call check(comb == MPI_COMBINER_SUBARRAY .and. ni == 3 * 2 + 2, 'envelope of a subarray')
    call MPI_Type_get_contents(sub, 10, 1, 1, ints, addrs, types, ierr)
    call check(all(ints(1:8) == [2, 4, 5, 2, 3, 1, 1, MPI_ORDER_FORTRAN]) .and. &
               types(1) == MPI_INTEGER, 'contents of a subarray')
    call MPI_Type_free(sub, ierr)

    ! A block distribution of 4 * nproc integers: 4 on each rank.
    call MPI_Type_create_darray(nproc, rank, 1, [4 * nproc], [MPI_DISTRIBUTE_BLOCK], &
                                [MPI_DISTRIBUTE_DFLT_DARG], [nproc], MPI_ORDER_FORTRAN, &
                                MPI_INTEGER, sub, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_create_darray')
    call MPI_Type_size(sub, sz, ierr)
    call MPI_Type_get_extent(sub, lb, ext, ierr)
    call check(sz == 16 .and. lb == 0 .and. ext == 16 * nproc, 'darray size and extent')
    call MPI_Type_get_true_extent(sub, lb, ext, ierr)
    call check(lb == 16 * rank .and. ext == 16, 'darray true extent: this rank''s block')
    call MPI_Type_get_envelope(sub, ni, na, nd, comb, ierr)
    call check(comb == MPI_COMBINER_DARRAY, 'envelope of a darray')
    call MPI_Type_free(sub, ierr)
  end subroutine subarray

  subroutine matching()
    integer :: t, sz, ni, na, nd, comb
    call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, t, ierr)
    call check(ierr == MPI_SUCCESS .and. t == MPI_REAL8, 'Type_match_size REAL 8')
    call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, t, ierr)
    call check(ierr == MPI_SUCCESS .and. t == MPI_INTEGER4, 'Type_match_size INTEGER 4')
    call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, t, ierr)
    call check(ierr == MPI_SUCCESS .and. t == MPI_COMPLEX32, 'Type_match_size COMPLEX 32')
    call MPI_Type_create_f90_integer(9, t, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_create_f90_integer')
    call MPI_Type_size(t, sz, ierr)
    call check(sz == 4, 'f90 integer of range 9 has 4 bytes')
    call MPI_Type_get_envelope(t, ni, na, nd, comb, ierr)
    call check(comb == MPI_COMBINER_F90_INTEGER, 'envelope of an f90 integer')
  end subroutine matching

  subroutine external32()
    integer :: v(2), w(2), sz
    integer(kind=MPI_ADDRESS_KIND) :: pos, size
    character(len=1) :: buf(8)
    v = [1, 258]
    call MPI_Pack_external_size('external32', 2, MPI_INTEGER, size, ierr)
    call check(ierr == MPI_SUCCESS .and. size == 8, 'Pack_external_size')
    pos = 0
    call MPI_Pack_external('external32', v, 2, MPI_INTEGER, buf, 8_MPI_ADDRESS_KIND, pos, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 8, 'Pack_external')
    call check(all(ichar(buf) == [0, 0, 0, 1, 0, 0, 1, 2]), 'external32 is big-endian')
    pos = 0
    w = 0
    call MPI_Unpack_external('external32', buf, 8_MPI_ADDRESS_KIND, pos, w, 2, MPI_INTEGER, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 8 .and. all(w == v), 'Unpack_external')
    call MPI_Type_size(MPI_INTEGER, sz, ierr)
    call check(sz == 4, 'MPI_INTEGER has 4 bytes')
  end subroutine external32

  subroutine attributes()
    integer :: key, key2, t, d
    integer(kind=MPI_ADDRESS_KIND) :: v
    logical :: flag
    call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
    call MPI_Type_create_keyval(copy_fn, delete_fn, key, 5_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_create_keyval with Fortran functions')
    call MPI_Type_set_attr(t, key, 42_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_set_attr')
    call MPI_Type_get_attr(t, key, v, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. v == 42, 'Type_get_attr')
    call MPI_Type_dup(t, d, ierr)
    call check(copies == 1 .and. seen_key == key .and. seen_type == t, &
               'the copy function ran on MPI_TYPE_DUP, with the keyval and the old type')
    call MPI_Type_get_attr(d, key, v, flag, ierr)
    call check(flag .and. v == 42 * 2 + 5, 'the copy''s value (with extra_state)')
    call MPI_Type_free(d, ierr)
    call check(deletes == 1 .and. seen_val == 42 * 2 + 5 .and. seen_extra == 5, &
               'the delete function ran on MPI_TYPE_FREE, with value and extra_state')
    call MPI_Type_delete_attr(t, key, ierr)
    call check(ierr == MPI_SUCCESS .and. deletes == 2 .and. seen_val == 42 .and. &
               seen_type == t, 'Type_delete_attr')
    call MPI_Type_get_attr(t, key, v, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'no attribute after delete')
    call MPI_Type_free_keyval(key, ierr)
    call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'Type_free_keyval')

    ! The predefined functions: the value is copied as is.
    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key2, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_set_attr(t, key2, 7_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_dup(t, d, ierr)
    call MPI_Type_get_attr(d, key2, v, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. v == 7, 'MPI_TYPE_DUP_FN')
    call MPI_Type_free(d, ierr)
    call MPI_Type_free_keyval(key2, ierr)
    call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, key2, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_set_attr(t, key2, 9_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_dup(t, d, ierr)
    call MPI_Type_get_attr(d, key2, v, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_TYPE_NULL_COPY_FN')
    call MPI_Type_free(d, ierr)
    call MPI_Type_free_keyval(key2, ierr)
    call MPI_Type_free(t, ierr)
    call check(copies == 1 .and. deletes == 2, 'no more calls of the Fortran functions')
  end subroutine attributes

  subroutine errors()
    integer :: t, ckey, ni, na, nd, comb
    integer(kind=MPI_ADDRESS_KIND) :: v
    logical :: flag
    ! A subarray wider than its array.
    call MPI_Type_create_subarray(1, [4], [5], [0], MPI_ORDER_FORTRAN, MPI_INTEGER, t, ierr)
    call check(err_class(ierr) == MPI_ERR_ARG, 'subarray larger than the array')
    ! No REAL of 3 bytes.
    call MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, t, ierr)
    call check(err_class(ierr) == MPI_ERR_ARG, 'Type_match_size REAL 3')
    ! A communicator's keyval on a datatype.
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, ckey, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Type_get_attr(MPI_INTEGER, ckey, v, flag, ierr)
    call check(err_class(ierr) == MPI_ERR_KEYVAL, 'Type_get_attr with a communicator keyval')
    call MPI_Comm_free_keyval(ckey, ierr)
    ! The null datatype.
    call MPI_Type_get_envelope(MPI_DATATYPE_NULL, ni, na, nd, comb, ierr)
    call check(err_class(ierr) == MPI_ERR_TYPE, 'Type_get_envelope of MPI_DATATYPE_NULL')
    ! An unknown data representation.
    call MPI_Pack_external_size('native32', 1, MPI_INTEGER, v, ierr)
    call check(err_class(ierr) == MPI_ERR_UNSUPPORTED_DATAREP, &
               'Pack_external_size of an unknown representation')
  end subroutine errors

  ! MPI_AINT_ADD and MPI_AINT_DIFF, functions of INTEGER(KIND=MPI_ADDRESS_KIND).
  subroutine addresses()
    double precision :: arr(10)
    integer(kind=MPI_ADDRESS_KIND) :: base, a, d(2)
    integer :: i, t, tin, lens(2), types(2), right, left
    arr = 0
    call MPI_Get_address(arr(1), base, ierr)
    do i = 1, 10
      call MPI_Get_address(arr(i), a, ierr)
      call check(MPI_Aint_add(base, int((i - 1) * 8, MPI_ADDRESS_KIND)) == a, 'MPI_Aint_add')
      call check(MPI_Aint_diff(a, base) == (i - 1) * 8, 'MPI_Aint_diff')
      call check(MPI_Aint_diff(base, a) == -(i - 1) * 8, 'MPI_Aint_diff negative')
      call check(PMPI_Aint_add(a, MPI_Aint_diff(base, a)) == base, 'PMPI_Aint_add')
    end do
    ! The fields' absolute addresses from the first one's and their offsets.
    call MPI_Get_address(out%tag, d(1), ierr)
    call MPI_Get_address(out%x, a, ierr)
    d(2) = MPI_Aint_add(d(1), MPI_Aint_diff(a, d(1)))
    call check(d(2) == a, 'MPI_Aint_add of MPI_Aint_diff')
    lens = [1, 3]
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
    call MPI_Type_create_struct(2, lens, d, types, t, ierr)
    call MPI_Type_commit(t, ierr)
    call MPI_Get_address(in%tag, d(1), ierr)
    call MPI_Get_address(in%x, a, ierr)
    d(2) = MPI_Aint_add(d(1), MPI_Aint_diff(a, d(1)))
    call MPI_Type_create_struct(2, lens, d, types, tin, ierr)
    call MPI_Type_commit(tin, ierr)
    right = mod(rank + 1, nproc)
    left = mod(rank + nproc - 1, nproc)
    out%tag = 40 + rank
    out%x = [0.5d0, -1d0, 3d300]
    in%tag = -1
    in%x = 0
    call MPI_Sendrecv(MPI_BOTTOM, 1, t, right, 3, MPI_BOTTOM, 1, tin, left, 3, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. in%tag == 40 + left, 'the tag at MPI_BOTTOM')
    call check(all(in%x == [0.5d0, -1d0, 3d300]), 'the doubles at MPI_BOTTOM')
    call MPI_Type_free(t, ierr)
    call MPI_Type_free(tin, ierr)
  end subroutine addresses
end program f_dtype
