! SPDX-License-Identifier: MIT
! f_comm.f90 - communicators, groups, names, error handlers and attributes
! from Fortran: CHARACTER arguments (trailing blanks trimmed on input,
! blank padding on output), LOGICAL results, Fortran error handlers and
! attribute copy/delete functions, handle numbers given back by the free
! calls, and error classes under MPI_ERRORS_RETURN.
module f_comm_cb
  use mpi
  implicit none
  integer :: handled = 0, handled_comm = -1, handled_code = -1
  integer :: copies = 0, deletes = 0, last_deleted = -1
contains
  subroutine handler(comm, code)
    integer :: comm, code
    handled = handled + 1
    handled_comm = comm
    handled_code = code
  end subroutine handler

  subroutine copy_fn(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in + extra
    flag = .true.
    ierror = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierror = MPI_ERR_OTHER
  end subroutine copy_fn

  subroutine delete_fn(comm, keyval, val, extra, ierror)
    integer :: comm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    last_deleted = int(val)
    ierror = MPI_SUCCESS
    if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra /= 1000) &
      ierror = MPI_ERR_OTHER
  end subroutine delete_fn

  ! MPI-1 forms: INTEGER values.
  subroutine copy1(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    integer :: oldcomm, keyval, extra, val_in, val_out, ierror
    logical :: flag
    copies = copies + 1
    val_out = val_in * extra
    flag = oldcomm /= MPI_COMM_NULL .and. keyval /= MPI_KEYVAL_INVALID
    ierror = MPI_SUCCESS
  end subroutine copy1
end module f_comm_cb

program f_comm
  use mpi
  use f_comm_cb
  implicit none
  integer :: ierr, rank, nproc, i
  logical :: flag

  flag = .true.
  call MPI_Initialized(flag, ierr)
  if (ierr /= MPI_SUCCESS .or. flag) stop 'MPI_Initialized before MPI_Init is not .false.'
  call MPI_Init(ierr)
  call MPI_Initialized(flag, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call check(flag, 'MPI_Initialized after MPI_Init: .true.')
  call MPI_Finalized(flag, ierr)
  call check(.not. flag, 'MPI_Finalized: .false.')

  call env()
  call names()
  call comms()
  call groups()
  call handlers()
  call attributes()
  call errors()

  call MPI_Finalize(ierr)
  call MPI_Finalized(flag, ierr)
  if (.not. flag) stop 'MPI_Finalized after MPI_Finalize is not .true.'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_comm: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  subroutine env()
    character(len=MPI_MAX_PROCESSOR_NAME) :: name
    character(len=MPI_MAX_ERROR_STRING) :: msg
    character(len=4) :: short
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
    integer :: n, v, sv, provided
    double precision :: t0, t1, tick
    name = repeat('x', len(name))
    call MPI_Get_processor_name(name, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n > 0 .and. n < len(name), 'Get_processor_name')
    call check(len_trim(name) == n .and. index(name(1:n), ' ') == 0, &
               'processor name blank padded')
    call MPI_Error_string(MPI_ERR_RANK, msg, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n > 0 .and. len_trim(msg) == n, 'Error_string')
    short = 'abcd'
    call MPI_Error_string(MPI_ERR_RANK, short, n, ierr)
    call check(ierr == MPI_SUCCESS .and. short == msg(1:4), 'Error_string into 4 characters')
    call MPI_Get_library_version(version, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n > 0 .and. len_trim(version) == n, &
               'Get_library_version')
    call MPI_Get_version(v, sv, ierr)
    call check(v == MPI_VERSION .and. sv == MPI_SUBVERSION, 'Get_version')
    call MPI_Query_thread(provided, ierr)
    call check(ierr == MPI_SUCCESS .and. provided >= MPI_THREAD_SINGLE, 'Query_thread')
    call MPI_Is_thread_main(flag, ierr)
    call check(flag, 'Is_thread_main: .true.')
    t0 = MPI_Wtime()
    t1 = MPI_Wtime()
    tick = MPI_Wtick()
    call check(t1 >= t0 .and. tick > 0, 'Wtime and Wtick')
  end subroutine env

  subroutine names()
    character(len=MPI_MAX_OBJECT_NAME) :: name
    character(len=3) :: short
    integer :: n, dup
    call MPI_Comm_get_name(MPI_COMM_WORLD, name, n, ierr)
    call check(ierr == MPI_SUCCESS .and. name == 'MPI_COMM_WORLD' .and. n == 14, &
               'name of MPI_COMM_WORLD')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_set_name(dup, 'my comm    ', ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_set_name')
    name = repeat('x', len(name))
    call MPI_Comm_get_name(dup, name, n, ierr)
    call check(name == 'my comm' .and. n == 7 .and. name(8:) == ' ', &
               'trailing blanks trimmed, then blank padded')
    call MPI_Comm_get_name(dup, short, n, ierr)
    call check(short == 'my ' .and. n == 7, 'name cut to a short CHARACTER')
    call MPI_Comm_set_name(dup, '', ierr)
    call MPI_Comm_get_name(dup, name, n, ierr)
    call check(n == 0 .and. name == ' ', 'empty name')
    call MPI_Comm_free(dup, ierr)
    call MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == len_trim(name) .and. n > 0, 'Type_get_name')
  end subroutine names

  subroutine comms()
    integer :: dup, half, res, sz, r, k, maxnum
    logical :: inter
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check(ierr == MPI_SUCCESS .and. dup /= MPI_COMM_WORLD .and. dup /= MPI_COMM_NULL, &
               'Comm_dup')
    call MPI_Comm_compare(dup, MPI_COMM_WORLD, res, ierr)
    call check(res == MPI_CONGRUENT, 'Comm_compare MPI_CONGRUENT')
    call MPI_Comm_test_inter(dup, inter, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. inter, 'Comm_test_inter: .false.')
    call MPI_Comm_split(dup, mod(rank, 2), -rank, half, ierr)
    call MPI_Comm_size(half, sz, ierr)
    call MPI_Comm_rank(half, r, ierr)
    call check(sz == (nproc + 1 - mod(rank, 2)) / 2, 'Comm_split size')
    call check(r == sz - 1 - rank / 2, 'Comm_split key orders the ranks')
    call MPI_Comm_free(half, ierr)
    call check(ierr == MPI_SUCCESS .and. half == MPI_COMM_NULL, 'Comm_free sets MPI_COMM_NULL')
    call MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, half, ierr)
    call MPI_Comm_size(half, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == nproc, 'Comm_split_type with MPI_INFO_NULL')
    call MPI_Comm_free(half, ierr)
    ! The shim's own type: one cluster when the configuration names none.
    call MPI_Comm_split_type(dup, BIP_COMM_TYPE_CLUSTER, rank, MPI_INFO_NULL, half, ierr)
    call MPI_Comm_size(half, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == nproc, 'Comm_split_type BIP_COMM_TYPE_CLUSTER')
    call MPI_Comm_free(half, ierr)
    block
      integer :: g, sub, ranks(1)
      call MPI_Comm_group(dup, g, ierr)
      ranks(1) = nproc - 1
      call MPI_Group_incl(g, 1, ranks, sub, ierr)
      call MPI_Comm_create(dup, sub, half, ierr)
      call check(ierr == MPI_SUCCESS .and. (half /= MPI_COMM_NULL .eqv. rank == nproc - 1), &
                 'Comm_create')
      if (half /= MPI_COMM_NULL) call MPI_Comm_free(half, ierr)
      call MPI_Group_free(sub, ierr)
      call MPI_Group_free(g, ierr)
    end block
    block
      ! MPI_Comm_create_group by the last rank alone; MPI_Comm_idup.
      integer :: g, sub, ranks(1), req, idup, total
      call MPI_Comm_group(dup, g, ierr)
      ranks(1) = nproc - 1
      call MPI_Group_incl(g, 1, ranks, sub, ierr)
      if (rank == nproc - 1) then
        call MPI_Comm_create_group(dup, sub, 5, half, ierr)
        call MPI_Comm_size(half, sz, ierr)
        call check(ierr == MPI_SUCCESS .and. sz == 1, 'Comm_create_group')
        call MPI_Comm_free(half, ierr)
      end if
      call MPI_Group_free(sub, ierr)
      call MPI_Group_free(g, ierr)
      call MPI_Comm_idup(dup, idup, req, ierr)
      call check(ierr == MPI_SUCCESS, 'Comm_idup')
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. idup /= MPI_COMM_NULL .and. &
                 req == MPI_REQUEST_NULL, 'Comm_idup completes')
      call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, idup, ierr)
      call check(total == nproc * (nproc - 1) / 2, 'an Allreduce on the idup')
      call MPI_Comm_free(idup, ierr)
    end block
    call MPI_Comm_split(dup, MPI_UNDEFINED, 0, half, ierr)
    call check(ierr == MPI_SUCCESS .and. half == MPI_COMM_NULL, 'MPI_UNDEFINED color')
    call MPI_Comm_disconnect(dup, ierr)
    call check(ierr == MPI_SUCCESS .and. dup == MPI_COMM_NULL, 'Comm_disconnect')
    ! The free calls give the numbers back.
    maxnum = 0
    do k = 1, 50
      call MPI_Comm_dup(MPI_COMM_SELF, dup, ierr)
      maxnum = max(maxnum, dup)
      call MPI_Comm_free(dup, ierr)
    end do
    call check(maxnum < 10, 'communicator numbers are given back')
  end subroutine comms

  subroutine groups()
    integer :: g, rev, sub, n, r, res, ranks(nproc), out(nproc), ranges(3, 1)
    call MPI_Comm_group(MPI_COMM_WORLD, g, ierr)
    call MPI_Group_size(g, n, ierr)
    call MPI_Group_rank(g, r, ierr)
    call check(n == nproc .and. r == rank, 'Group_size and Group_rank')
    ranks = [(nproc - 1 - i, i = 0, nproc - 1)]
    call MPI_Group_incl(g, nproc, ranks, rev, ierr)
    call MPI_Group_translate_ranks(rev, nproc, [(i, i = 0, nproc - 1)], g, out, ierr)
    call check(ierr == MPI_SUCCESS .and. all(out == ranks), 'Group_translate_ranks')
    call MPI_Group_compare(g, rev, res, ierr)
    call check(res == merge(MPI_IDENT, MPI_SIMILAR, nproc == 1), 'Group_compare')
    ranges(:, 1) = [0, nproc - 1, 2]
    call MPI_Group_range_incl(g, 1, ranges, sub, ierr)
    call MPI_Group_size(sub, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == (nproc + 1) / 2, 'Group_range_incl')
    call MPI_Group_free(sub, ierr)
    call MPI_Group_free(rev, ierr)
    call MPI_Group_free(g, ierr)
    call check(ierr == MPI_SUCCESS .and. g == MPI_GROUP_NULL .and. rev == MPI_GROUP_NULL, &
               'Group_free sets MPI_GROUP_NULL')
    call MPI_Group_size(MPI_GROUP_EMPTY, n, ierr)
    call check(n == 0, 'MPI_GROUP_EMPTY')
  end subroutine groups

  ! A Fortran error handler gets the communicator's number and the code.
  subroutine handlers()
    integer :: eh, eh2, dup, a
    call MPI_Comm_create_errhandler(handler, eh, ierr)
    call check(ierr == MPI_SUCCESS .and. eh /= MPI_ERRHANDLER_NULL, 'Comm_create_errhandler')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_set_errhandler(dup, eh, ierr)
    call MPI_Comm_get_errhandler(dup, eh2, ierr)
    call check(eh2 == eh, 'Comm_get_errhandler')
    call MPI_Errhandler_free(eh2, ierr)
    a = 1
    call MPI_Send(a, 1, MPI_INTEGER, nproc, 0, dup, ierr)
    call check(ierr == MPI_ERR_RANK, 'ierror after a user handler')
    call check(handled == 1 .and. handled_comm == dup .and. handled_code == MPI_ERR_RANK, &
               'the Fortran handler was called with the communicator and the code')
    call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER, ierr)
    call check(handled == 2 .and. handled_code == MPI_ERR_OTHER, 'Comm_call_errhandler')
    call MPI_Errhandler_free(eh, ierr)
    call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRHANDLER_NULL, 'Errhandler_free')
    ! Still the communicator's handler after MPI_Errhandler_free.
    call MPI_Comm_call_errhandler(dup, MPI_ERR_ARG, ierr)
    call check(handled == 3 .and. handled_code == MPI_ERR_ARG, 'handler kept by the comm')
    call MPI_Comm_free(dup, ierr)
    ! The MPI-1 names
    call MPI_Errhandler_create(handler, eh, ierr)
    call MPI_Errhandler_set(MPI_COMM_SELF, eh, ierr)
    call MPI_Errhandler_get(MPI_COMM_SELF, eh2, ierr)
    call check(ierr == MPI_SUCCESS .and. eh2 == eh, 'Errhandler_set/get')
    call MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_TAG, ierr)
    call check(handled == 4 .and. handled_comm == MPI_COMM_SELF .and. &
               handled_code == MPI_ERR_TAG, 'the handler sees MPI_COMM_SELF')
    call MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL, ierr)
    call MPI_Errhandler_free(eh, ierr)
    call MPI_Errhandler_free(eh2, ierr)
  end subroutine handlers

  subroutine attributes()
    integer :: key, key1, keydup, dup, dup2, ival
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    logical :: found
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, found, ierr)
    call check(ierr == MPI_SUCCESS .and. found .and. val >= 32767, 'MPI_TAG_UB')
    call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, ival, found, ierr)
    call check(found .and. ival == val, 'MPI_TAG_UB through Attr_get')
    extra = 1000
    call MPI_Comm_create_keyval(copy_fn, delete_fn, key, extra, ierr)
    call check(ierr == MPI_SUCCESS .and. key /= MPI_KEYVAL_INVALID, 'Comm_create_keyval')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_get_attr(dup, key, val, found, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. found, 'no attribute yet')
    val = 5
    call MPI_Comm_set_attr(dup, key, val, ierr)
    val = 0
    call MPI_Comm_get_attr(dup, key, val, found, ierr)
    call check(found .and. val == 5, 'Comm_set_attr / Comm_get_attr')
    call MPI_Comm_dup(dup, dup2, ierr)
    call check(ierr == MPI_SUCCESS .and. copies == 1, 'the Fortran copy function was called')
    call MPI_Comm_get_attr(dup2, key, val, found, ierr)
    call check(found .and. val == 1005, 'the copied value')
    call MPI_Comm_free(dup2, ierr)
    call check(ierr == MPI_SUCCESS .and. deletes == 1 .and. last_deleted == 1005, &
               'the Fortran delete function was called')
    call MPI_Comm_delete_attr(dup, key, ierr)
    call check(ierr == MPI_SUCCESS .and. deletes == 2 .and. last_deleted == 5, 'Comm_delete_attr')
    call MPI_Comm_free_keyval(key, ierr)
    call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'Comm_free_keyval')
    ! The predefined functions
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keydup, extra, ierr)
    val = 77
    call MPI_Comm_set_attr(dup, keydup, val, ierr)
    call MPI_Comm_dup(dup, dup2, ierr)
    call MPI_Comm_get_attr(dup2, keydup, val, found, ierr)
    call check(found .and. val == 77, 'MPI_COMM_DUP_FN copies the value')
    call MPI_Comm_free(dup2, ierr)
    call MPI_Comm_free_keyval(keydup, ierr)
    ! MPI-1: Keyval_create with a Fortran copy function and MPI_NULL_DELETE_FN
    call MPI_Keyval_create(copy1, MPI_NULL_DELETE_FN, key1, 3, ierr)
    call MPI_Attr_put(dup, key1, 14, ierr)
    call MPI_Comm_dup(dup, dup2, ierr)
    call MPI_Attr_get(dup2, key1, ival, found, ierr)
    call check(ierr == MPI_SUCCESS .and. found .and. ival == 42, 'Keyval_create copy function')
    call MPI_Attr_delete(dup2, key1, ierr)
    call MPI_Attr_get(dup2, key1, ival, found, ierr)
    call check(.not. found, 'Attr_delete')
    call MPI_Comm_free(dup2, ierr)
    call MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, keydup, 0, ierr)
    call MPI_Attr_put(dup, keydup, 9, ierr)
    call MPI_Comm_dup(dup, dup2, ierr)
    call MPI_Attr_get(dup2, keydup, ival, found, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. found, 'MPI_NULL_COPY_FN copies nothing')
    call MPI_Comm_free(dup2, ierr)
    call MPI_Keyval_free(keydup, ierr)
    call MPI_Keyval_free(key1, ierr)
    call MPI_Comm_free(dup, ierr)
  end subroutine attributes

  subroutine errors()
    integer :: c, g, n
    integer(kind=MPI_ADDRESS_KIND) :: val
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    c = MPI_COMM_WORLD
    call MPI_Comm_free(c, ierr)
    call check(ierr == MPI_ERR_COMM .and. c == MPI_COMM_WORLD, 'Comm_free(MPI_COMM_WORLD)')
    call MPI_Comm_dup(4321, c, ierr)
    call check(ierr == MPI_ERR_COMM, 'Comm_dup of a bad number: MPI_ERR_COMM')
    call MPI_Comm_size(MPI_COMM_NULL, n, ierr)
    call check(ierr == MPI_ERR_COMM, 'Comm_size(MPI_COMM_NULL)')
    call MPI_Group_size(999, n, ierr)
    call check(ierr == MPI_ERR_GROUP, 'Group_size of a bad number: MPI_ERR_GROUP')
    call MPI_Comm_group(MPI_COMM_WORLD, g, ierr)
    call MPI_Group_incl(g, 1, [nproc], c, ierr)
    call check(ierr == MPI_ERR_RANK, 'Group_incl of a bad rank: MPI_ERR_RANK')
    call MPI_Group_free(g, ierr)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, val, flag, ierr)
    call check(ierr == MPI_ERR_KEYVAL, 'Comm_get_attr of a bad keyval: MPI_ERR_KEYVAL')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  end subroutine errors

end program f_comm
