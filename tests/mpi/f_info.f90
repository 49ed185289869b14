! SPDX-License-Identifier: MIT
! f_info.f90 - info objects, communicator hints and added error codes from
! Fortran: keys and values as CHARACTER (trailing blanks dropped on input,
! blank padded and cut on output), MPI_INFO_GET with a short valuelen,
! MPI_INFO_GET_STRING's buflen (characters, no terminating null), hints
! through MPI_COMM_DUP_WITH_INFO/SET_INFO/GET_INFO, MPI_INFO_ENV, added
! classes, codes and strings, and error classes under MPI_ERRORS_RETURN.
! Keys and values lose their leading blanks too (MPI_INFO_SET's rule, in
! every info call); MPI_INFO_GET_STRING blanks the rest of a value it
! cuts.  MPI_INFO_CREATE_ENV, before MPI_Init and after.
program f_info
  use mpi
  implicit none
  integer :: ierr, rank, nproc, env0

  ! Allowed before MPI_Init (MPI-4.0).
  call MPI_Info_create_env(env0, ierr)
  if (ierr /= MPI_SUCCESS .or. env0 == MPI_INFO_NULL) stop 'MPI_Info_create_env before MPI_Init'

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call info()
  call blanks()
  call create_env()
  call hints()
  call codes()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_info: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine info()
    integer :: inf, dup, n, vlen, buflen
    character(len=MPI_MAX_INFO_VAL) :: val
    character(len=MPI_MAX_INFO_KEY) :: key
    character(len=4) :: short
    logical :: flag
    call MPI_Info_create(inf, ierr)
    call check(ierr == MPI_SUCCESS .and. inf /= MPI_INFO_NULL, 'Info_create')
    call MPI_Info_set(inf, 'colour  ', 'dark blue   ', ierr)
    call MPI_Info_set(inf, 'size', '12', ierr)
    call check(ierr == MPI_SUCCESS, 'Info_set')
    call MPI_Info_get_nkeys(inf, n, ierr)
    call check(n == 2, 'Info_get_nkeys')
    call MPI_Info_get_nthkey(inf, 0, key, ierr)
    call check(ierr == MPI_SUCCESS .and. key == 'colour', 'Info_get_nthkey 0')
    call MPI_Info_get_nthkey(inf, 1, key, ierr)
    call check(key == 'size', 'Info_get_nthkey 1')
    call MPI_Info_get_valuelen(inf, 'colour', vlen, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. vlen == 9, 'Info_get_valuelen')
    val = 'x'
    call MPI_Info_get(inf, 'colour', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 'dark blue', 'Info_get')
    call MPI_Info_get(inf, 'colour', 4, val, flag, ierr)
    call check(flag .and. val == 'dark', 'Info_get with valuelen 4')
    ! Cut to the variable's length.
    call MPI_Info_get(inf, 'colour', MPI_MAX_INFO_VAL, short, flag, ierr)
    call check(flag .and. short == 'dark', 'Info_get into CHARACTER(4)')
    buflen = 6
    val = 'x'
    call MPI_Info_get_string(inf, 'colour', buflen, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. buflen == 9 .and. val == 'dark b', &
               'Info_get_string with buflen 6')
    buflen = 0
    call MPI_Info_get_string(inf, 'size', buflen, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. buflen == 2, 'Info_get_string length only')
    val = 'unchanged'
    call MPI_Info_get(inf, 'absent', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag .and. val == 'unchanged', &
               'Info_get of an absent key')

    call MPI_Info_dup(inf, dup, ierr)
    call MPI_Info_delete(inf, 'colour', ierr)
    call check(ierr == MPI_SUCCESS, 'Info_delete')
    call MPI_Info_get_nkeys(inf, n, ierr)
    call check(n == 1, 'one key left')
    call MPI_Info_get(dup, 'colour', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(flag .and. val == 'dark blue', 'Info_dup keeps its own copy')
    call MPI_Info_delete(inf, 'colour', ierr)
    call check(err_class(ierr) == MPI_ERR_INFO_NOKEY, 'Info_delete twice')
    call MPI_Info_free(dup, ierr)
    call MPI_Info_free(inf, ierr)
    call check(ierr == MPI_SUCCESS .and. inf == MPI_INFO_NULL .and. dup == MPI_INFO_NULL, &
               'Info_free')

    ! MPI_INFO_ENV is predefined: readable, never freed.
    call MPI_Info_get_nkeys(MPI_INFO_ENV, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n >= 0, 'MPI_INFO_ENV')
  end subroutine info

  ! Leading and trailing blanks of keys and values are not theirs.
  subroutine blanks()
    integer :: inf, n, vlen, buflen
    character(len=MPI_MAX_INFO_VAL) :: val
    character(len=MPI_MAX_INFO_KEY) :: key
    character(len=MPI_MAX_INFO_KEY + 20) :: padded
    character(len=8) :: short
    logical :: flag
    call MPI_Info_create(inf, ierr)
    call MPI_Info_set(inf, '  See Below', '   no test  ', ierr)
    call check(ierr == MPI_SUCCESS, 'Info_set with blanks around')
    call MPI_Info_get_nthkey(inf, 0, key, ierr)
    call check(key == 'See Below', 'leading blanks of a key dropped: "' // trim(key) // '"')
    call MPI_Info_get_valuelen(inf, '   See Below   ', vlen, flag, ierr)
    call check(flag .and. vlen == 7, 'leading blanks of a value dropped')
    val = 'x'
    call MPI_Info_get(inf, ' See Below', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(flag .and. val == 'no test', 'Info_get with a leading blank: "' // trim(val) // '"')
    ! A key longer than MPI_MAX_INFO_KEY only by its blanks is a key.
    padded = repeat(' ', 20) // 'k'
    call MPI_Info_set(inf, padded, ' v', ierr)
    call check(ierr == MPI_SUCCESS, 'a key long only by its leading blanks')
    call MPI_Info_get_nkeys(inf, n, ierr)
    call check(n == 2, 'two keys')
    buflen = 3
    call MPI_Info_get_string(inf, ' k', buflen, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. buflen == 1 .and. val == 'v', &
               'Info_get_string of a key with a leading blank')
    call MPI_Info_delete(inf, '   k', ierr)
    call check(ierr == MPI_SUCCESS, 'Info_delete with a leading blank')
    ! Blanks only: an empty key; an empty value is one.
    call MPI_Info_set(inf, '    ', 'v', ierr)
    call check(err_class(ierr) == MPI_ERR_INFO_KEY, 'Info_set with a blank key')
    call MPI_Info_delete(inf, ' ', ierr)
    call check(err_class(ierr) == MPI_ERR_INFO_KEY, 'Info_delete with a blank key')
    call MPI_Info_set(inf, 'empty', '   ', ierr)
    call MPI_Info_get_valuelen(inf, 'empty', vlen, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. vlen == 0, 'a blank value is empty')

    ! MPI_INFO_GET_STRING cuts to buflen and blanks the rest of value; the
    ! variable is untouched when buflen is 0 or the key is absent.
    call MPI_Info_set(inf, 'digits', '123456789', ierr)
    val = 'canary'
    buflen = 0
    call MPI_Info_get_string(inf, 'digits', buflen, val, flag, ierr)
    call check(flag .and. buflen == 9 .and. val == 'canary', 'Info_get_string, buflen 0')
    buflen = 2
    call MPI_Info_get_string(inf, 'digits', buflen, val, flag, ierr)
    call check(flag .and. buflen == 9 .and. val == '12', 'Info_get_string cut to 2: "' // &
               trim(val) // '"')
    call check(verify(val(3:), ' ') == 0, 'Info_get_string blanks the rest')
    short = 'canary'
    buflen = MPI_MAX_INFO_VAL
    call MPI_Info_get_string(inf, 'digits', buflen, short, flag, ierr)
    call check(flag .and. buflen == 9 .and. short == '12345678', 'Info_get_string into 8')
    val = 'canary'
    buflen = 5
    call MPI_Info_get_string(inf, 'absent', buflen, val, flag, ierr)
    call check(.not. flag .and. buflen == 5 .and. val == 'canary', 'Info_get_string, no key')
    ! MPI_INFO_GET cuts to valuelen and blanks the rest too.
    val = 'canary'
    call MPI_Info_get(inf, 'digits', 4, val, flag, ierr)
    call check(flag .and. val == '1234', 'Info_get cut to 4')
    call MPI_Info_free(inf, ierr)
  end subroutine blanks

  ! MPI_INFO_CREATE_ENV: MPI_INFO_ENV's keys but maxprocs, a new object
  ! each time, the same before MPI_Init as after.
  subroutine create_env()
    integer :: e1, e2, n, n0, i, vlen
    character(len=MPI_MAX_INFO_KEY) :: key
    character(len=MPI_MAX_INFO_VAL) :: v1, v2
    logical :: f1, f2
    call MPI_Info_create_env(e1, ierr)
    call check(ierr == MPI_SUCCESS .and. e1 /= MPI_INFO_NULL .and. e1 /= env0 .and. &
               e1 /= MPI_INFO_ENV, 'Info_create_env')
    call MPI_Info_get_nkeys(e1, n, ierr)
    call MPI_Info_get_nkeys(env0, n0, ierr)
    call check(n == n0 .and. n >= 4, 'Info_create_env: as many keys before MPI_Init')
    do i = 0, n - 1
      call MPI_Info_get_nthkey(e1, i, key, ierr)
      call MPI_Info_get(e1, key, MPI_MAX_INFO_VAL, v1, f1, ierr)
      call MPI_Info_get(env0, key, MPI_MAX_INFO_VAL, v2, f2, ierr)
      call check(f1 .and. f2 .and. v1 == v2, 'Info_create_env before and after MPI_Init: ' // key)
      ! Each (maxprocs excepted) is MPI_INFO_ENV's.
      call check(key /= 'maxprocs', 'Info_create_env has no maxprocs')
      call MPI_Info_get(MPI_INFO_ENV, key, MPI_MAX_INFO_VAL, v2, f2, ierr)
      call check(f2 .and. v1 == v2, 'Info_create_env and MPI_INFO_ENV: ' // key)
    end do
    call MPI_Info_get_valuelen(e1, 'command', vlen, f1, ierr)
    call check(f1 .and. vlen > 0, 'Info_create_env: command')
    call MPI_Info_get(e1, 'host', MPI_MAX_INFO_VAL, v1, f1, ierr)
    call check(f1 .and. len_trim(v1) > 0, 'Info_create_env: host')
    call MPI_Info_get_valuelen(e1, 'wdir', vlen, f1, ierr)
    call check(f1 .and. vlen > 0, 'Info_create_env: wdir')
    ! The program's own object: changed and freed at will.
    call MPI_Info_set(e1, 'host', 'elsewhere', ierr)
    call check(ierr == MPI_SUCCESS, 'Info_create_env object can be changed')
    call MPI_Info_create_env(e2, ierr)
    call MPI_Info_get(e2, 'host', MPI_MAX_INFO_VAL, v2, f2, ierr)
    call check(f2 .and. v2 /= 'elsewhere' .and. e2 /= e1, 'Info_create_env: a new object')
    call MPI_Info_free(e1, ierr)
    call MPI_Info_free(e2, ierr)
    call MPI_Info_free(env0, ierr)
    call check(ierr == MPI_SUCCESS .and. env0 == MPI_INFO_NULL .and. e1 == MPI_INFO_NULL, &
               'Info_free of Info_create_env objects')
  end subroutine create_env

  subroutine hints()
    integer :: inf, used, comm, n
    character(len=MPI_MAX_INFO_VAL) :: val
    logical :: flag
    call MPI_Info_create(inf, ierr)
    call MPI_Info_set(inf, 'mpi_assert_no_any_tag', 'true', ierr)
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, inf, comm, ierr)
    call check(ierr == MPI_SUCCESS .and. comm /= MPI_COMM_NULL, 'Comm_dup_with_info')
    call MPI_Info_free(inf, ierr)
    call MPI_Comm_get_info(comm, used, ierr)
    call check(ierr == MPI_SUCCESS .and. used /= MPI_INFO_NULL, 'Comm_get_info')
    call MPI_Info_get(used, 'mpi_assert_no_any_tag', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(flag .and. val == 'true', 'the hint is kept')
    call MPI_Info_free(used, ierr)
    call MPI_Info_create(inf, ierr)
    call MPI_Info_set(inf, 'mpi_assert_allow_overtaking', 'false', ierr)
    call MPI_Comm_set_info(comm, inf, ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_set_info')
    call MPI_Info_free(inf, ierr)
    call MPI_Comm_get_info(comm, used, ierr)
    call MPI_Info_get(used, 'mpi_assert_allow_overtaking', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(flag .and. val == 'false', 'Comm_set_info hint')
    call MPI_Info_get_nkeys(used, n, ierr)
    call check(n >= 1, 'hints in use')
    call MPI_Info_free(used, ierr)
    call MPI_Comm_free(comm, ierr)
  end subroutine hints

  subroutine codes()
    integer :: cls, code, c, n, last
    integer(kind=MPI_ADDRESS_KIND) :: v
    character(len=MPI_MAX_ERROR_STRING) :: s
    logical :: flag
    call MPI_Add_error_class(cls, ierr)
    call check(ierr == MPI_SUCCESS .and. cls > MPI_ERR_LASTCODE, 'Add_error_class')
    call MPI_Add_error_code(cls, code, ierr)
    call check(ierr == MPI_SUCCESS .and. code > MPI_ERR_LASTCODE .and. code /= cls, &
               'Add_error_code')
    call MPI_Add_error_string(code, 'a Fortran error   ', ierr)
    call check(ierr == MPI_SUCCESS, 'Add_error_string')
    call MPI_Error_string(code, s, n, ierr)
    call check(ierr == MPI_SUCCESS .and. s == 'a Fortran error' .and. n == 15, 'Error_string')
    call MPI_Error_class(code, c, ierr)
    call check(ierr == MPI_SUCCESS .and. c == cls, 'Error_class of an added code')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, v, flag, ierr)
    last = int(v)
    call check(flag .and. last >= code .and. last >= cls, 'MPI_LASTUSEDCODE')
    ! Under MPI_ERRORS_RETURN the handler gives the code back.
    call MPI_Comm_call_errhandler(MPI_COMM_WORLD, code, ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_call_errhandler with an added code')
  end subroutine codes

  subroutine errors()
    integer :: inf, code, vlen
    character(len=MPI_MAX_INFO_KEY + 10) :: long
    character(len=8) :: val
    logical :: flag
    call MPI_Info_create(inf, ierr)
    long = repeat('k', len(long))
    call MPI_Info_set(inf, long, 'v', ierr)
    call check(err_class(ierr) == MPI_ERR_INFO_KEY, 'Info_set with a key too long')
    call MPI_Info_get_valuelen(inf, long, vlen, flag, ierr)
    call check(err_class(ierr) == MPI_ERR_INFO_KEY, 'Info_get_valuelen with a key too long')
    call MPI_Info_get_nthkey(inf, 3, val, ierr)
    call check(err_class(ierr) == MPI_ERR_ARG, 'Info_get_nthkey past the end')
    call MPI_Info_free(inf, ierr)
    ! A freed info object.
    call MPI_Info_set(inf, 'k', 'v', ierr)
    call check(err_class(ierr) == MPI_ERR_INFO, 'Info_set on MPI_INFO_NULL')
    ! MPI_SUCCESS is no class; a predefined code keeps its string.
    call MPI_Add_error_code(MPI_SUCCESS, code, ierr)
    call check(err_class(ierr) == MPI_ERR_ARG, 'Add_error_code of MPI_SUCCESS')
    call MPI_Add_error_string(MPI_ERR_TYPE, 'mine', ierr)
    call check(err_class(ierr) == MPI_ERR_ARG, 'Add_error_string of a predefined code')
  end subroutine errors
end program f_info
