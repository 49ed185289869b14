! SPDX-License-Identifier: MIT
! f_sizeof.f90 - MPI_SIZEOF of the mpi module (MPI-3.1 17.1.9): the bytes of
! one element of a variable of each intrinsic type and kind, for scalars,
! arrays of several ranks, non-contiguous sections, zero-size arrays and
! constants, against the sizes of the matching MPI datatypes; PMPI_SIZEOF
! the same; a CHARACTER element larger than a default INTEGER can count is
! MPI_ERR_ARG under MPI_ERRORS_RETURN.
program f_sizeof
  use mpi
  use iso_c_binding, only : c_f_pointer, c_loc, c_char
  use iso_fortran_env, only : int8, int16, int32, int64, real32, real64
  implicit none
  integer, parameter :: xk = selected_real_kind(18)
  integer, parameter :: ucs4 = selected_char_kind('ISO_10646')
  integer :: ierr, rank

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call integers()
  call reals()
  call logicals()
  call characters()
  call too_large()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_sizeof: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  ! size (from MPI_SIZEOF) is want, and ierror MPI_SUCCESS.
  subroutine expect(size, err, want, what)
    integer, intent(in) :: size, err, want
    character(len=*), intent(in) :: what
    character(len=80) :: msg
    write (msg, '(a,a,i0,a,i0)') what, ': size ', size, ', expected ', want
    call check(err == MPI_SUCCESS .and. size == want, trim(msg))
  end subroutine expect

  integer function type_size(t)
    integer, intent(in) :: t
    integer :: e
    call MPI_Type_size(t, type_size, e)
  end function type_size

  subroutine integers()
    integer(kind=int8) :: i1, i1v(3)
    integer(kind=int16) :: i2(2, 2)
    integer(kind=int32) :: i4(2, 3, 4)
    integer(kind=int64) :: i8(5)
    integer :: i, iv(0), size
    call MPI_Sizeof(i1, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER1), 'integer(1)')
    call MPI_Sizeof(i1v, size, ierr)
    call expect(size, ierr, 1, 'integer(1) array')
    call MPI_Sizeof(i2, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER2), 'integer(2) rank 2')
    call MPI_Sizeof(i4, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER4), 'integer(4) rank 3')
    call MPI_Sizeof(i4(1, :, 2:4:2), size, ierr)
    call expect(size, ierr, 4, 'integer(4) section')
    call MPI_Sizeof(i8, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER8), 'integer(8) array')
    call MPI_Sizeof(i, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER), 'default integer')
    ! A zero-size array still has an element size; a constant has a size.
    call MPI_Sizeof(iv, size, ierr)
    call expect(size, ierr, type_size(MPI_INTEGER), 'zero-size integer array')
    call MPI_Sizeof(7_int64, size, ierr)
    call expect(size, ierr, 8, 'integer(8) constant')
    ! PMPI_SIZEOF is the same generic.
    size = -1
    call PMPI_Sizeof(i8(2:), size, ierr)
    call expect(size, ierr, 8, 'PMPI_SIZEOF integer(8)')
  end subroutine integers

  subroutine reals()
    real(kind=real32) :: r4, r4v(4)
    real(kind=real64) :: r8(2, 2)
    real(kind=xk) :: rx, rxv(3)
    complex(kind=real32) :: c8(3)
    complex(kind=real64) :: c16
    complex(kind=xk) :: cx(2, 1)
    real :: r
    double precision :: d(2)
    complex :: c
    integer :: size, t
    call MPI_Sizeof(r4, size, ierr)
    call expect(size, ierr, type_size(MPI_REAL4), 'real(4)')
    call MPI_Sizeof(r4v(4:1:-2), size, ierr)
    call expect(size, ierr, 4, 'real(4) reversed section')
    call MPI_Sizeof(r8, size, ierr)
    call expect(size, ierr, type_size(MPI_REAL8), 'real(8) rank 2')
    call MPI_Sizeof(c8, size, ierr)
    call expect(size, ierr, type_size(MPI_COMPLEX8), 'complex(4) array')
    call MPI_Sizeof(c16, size, ierr)
    call expect(size, ierr, type_size(MPI_COMPLEX16), 'complex(8)')
    call MPI_Sizeof(r, size, ierr)
    call expect(size, ierr, type_size(MPI_REAL), 'real')
    call MPI_Sizeof(d, size, ierr)
    call expect(size, ierr, type_size(MPI_DOUBLE_PRECISION), 'double precision')
    call MPI_Sizeof(c, size, ierr)
    call expect(size, ierr, type_size(MPI_COMPLEX), 'complex')
    ! The extended precision kind: its storage, padding included, and a
    ! complex of it twice that.
    call MPI_Sizeof(rx, size, ierr)
    call expect(size, ierr, storage_size(rxv) / 8, 'extended real')
    call check(size >= 10, 'extended real smaller than 10 bytes')
    call MPI_Sizeof(cx, size, ierr)
    call expect(size, ierr, 2 * storage_size(rx) / 8, 'extended complex')
    ! The size MPI_SIZEOF gives finds the type (its documented use).
    call MPI_Sizeof(r8, size, ierr)
    call MPI_Type_match_size(MPI_TYPECLASS_REAL, size, t, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_match_size of real(8)')
    call check(type_size(t) == 8, 'Type_match_size of real(8): its size')
  end subroutine reals

  subroutine logicals()
    logical(kind=1) :: l1
    logical(kind=2) :: l2(2)
    logical(kind=4) :: l4(1, 1, 1, 1)
    logical(kind=8) :: l8
    logical :: l(3)
    integer :: size
    call MPI_Sizeof(l1, size, ierr)
    call expect(size, ierr, 1, 'logical(1)')
    call MPI_Sizeof(l2, size, ierr)
    call expect(size, ierr, 2, 'logical(2) array')
    call MPI_Sizeof(l4, size, ierr)
    call expect(size, ierr, 4, 'logical(4) rank 4')
    call MPI_Sizeof(l8, size, ierr)
    call expect(size, ierr, 8, 'logical(8)')
    call MPI_Sizeof(l, size, ierr)
    call expect(size, ierr, type_size(MPI_LOGICAL), 'default logical array')
    call MPI_Sizeof(.true., size, ierr)
    call expect(size, ierr, type_size(MPI_LOGICAL), 'logical constant')
  end subroutine logicals

  ! A CHARACTER element is its length in characters of its kind.
  subroutine characters()
    character :: ch, chv(6)
    character(len=7) :: s(2, 3)
    character(kind=ucs4, len=3) :: u
    integer :: size
    call MPI_Sizeof(ch, size, ierr)
    call expect(size, ierr, type_size(MPI_CHARACTER), 'character')
    call MPI_Sizeof(chv, size, ierr)
    call expect(size, ierr, type_size(MPI_CHARACTER), 'character array')
    call MPI_Sizeof(s, size, ierr)
    call expect(size, ierr, 7, 'character(len=7) rank 2')
    call MPI_Sizeof(s(2, 1)(2:4), size, ierr)
    call expect(size, ierr, 3, 'substring of 3')
    call MPI_Sizeof('', size, ierr)
    call expect(size, ierr, 0, 'empty string')
    call MPI_Sizeof(u, size, ierr)
    call expect(size, ierr, 12, 'character(kind=ucs4, len=3)')
  end subroutine characters

  ! An element of 2**31 bytes: MPI_ERR_ARG (only its length is looked at;
  ! size is INTENT(OUT), undefined after the error).
  subroutine too_large()
    character(kind=c_char), target :: small(1)
    character(len=2_int64**31), pointer :: big
    character(len=2_int64**31 - 1), pointer :: most
    integer :: size, cls, e
    call c_f_pointer(c_loc(small), big)
    call MPI_Sizeof(big, size, ierr)
    call MPI_Error_class(ierr, cls, e)
    call check(cls == MPI_ERR_ARG, 'character of 2**31 bytes')
    call PMPI_Sizeof(big, size, ierr)
    call MPI_Error_class(ierr, cls, e)
    call check(cls == MPI_ERR_ARG, 'PMPI_SIZEOF of 2**31 bytes')
    ! One byte less is still counted.
    call c_f_pointer(c_loc(small), most)
    call MPI_Sizeof(most, size, ierr)
    call expect(size, ierr, huge(size), 'character of 2**31 - 1 bytes')
  end subroutine too_large
end program f_sizeof
