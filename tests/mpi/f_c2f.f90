! SPDX-License-Identifier: MIT
! f_c2f.f90 - handle conversion both ways between Fortran and C (the C
! half is f_c2f_c.c): predefined handles, a communicator made in each
! language and used in the other, a request posted in C and completed in
! Fortran, statuses, and the room for Fortran operation functions.
program f_c2f
  use mpi
  use, intrinsic :: iso_c_binding, only : c_int
  implicit none
  interface
    integer(c_int) function c2f_predefined(world, self, sum, integer, dp, ret, empty, &
                                           comm_null, req_null) bind(C)
      import :: c_int
      integer(c_int) :: world, self, sum, integer, dp, ret, empty, comm_null, req_null
    end function c2f_predefined
    integer(c_int) function c2f_comm_from_fortran(comm, size) bind(C)
      import :: c_int
      integer(c_int) :: comm, size
    end function c2f_comm_from_fortran
    integer(c_int) function c2f_comm_to_fortran() bind(C)
      import :: c_int
    end function c2f_comm_to_fortran
    integer(c_int) function c2f_irecv(buf, source) bind(C)
      import :: c_int
      integer(c_int), asynchronous :: buf
      integer(c_int) :: source
    end function c2f_irecv
    integer(c_int) function c2f_op_slots() bind(C)
      import :: c_int
    end function c2f_op_slots
    integer(c_int) function c2f_status(status, source, tag, copy) bind(C)
      import :: c_int
      integer(c_int) :: status(*), source, tag, copy(*)
    end function c2f_status
  end interface
  integer :: ierr, rank, nproc, dup, c, r, req, v, right, left, rc
  integer, asynchronous :: buf
  integer :: st(MPI_STATUS_SIZE), copy(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  rc = c2f_predefined(MPI_COMM_WORLD, MPI_COMM_SELF, MPI_SUM, MPI_INTEGER, &
                      MPI_DOUBLE_PRECISION, MPI_ERRORS_RETURN, MPI_GROUP_EMPTY, &
                      MPI_COMM_NULL, MPI_REQUEST_NULL)
  call check(rc == 0, 'predefined handles, check', rc)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  rc = c2f_comm_from_fortran(dup, nproc)
  call check(rc == 0, 'a Fortran communicator in C, check', rc)
  call MPI_Comm_free(dup, ierr)

  c = c2f_comm_to_fortran()
  call check(c > 0, 'a C communicator for Fortran', c)
  call MPI_Comm_rank(c, r, ierr)
  call check(ierr == MPI_SUCCESS .and. r == nproc - 1 - rank, 'its rank in Fortran', r)
  call MPI_Comm_free(c, ierr)
  call check(ierr == MPI_SUCCESS .and. c == MPI_COMM_NULL, 'MPI_Comm_free from Fortran', ierr)

  buf = -1
  req = c2f_irecv(buf, left)
  call check(req > 0, 'a C request for Fortran', req)
  v = 10 + rank
  call MPI_Send(v, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
  call MPI_Wait(req, st, ierr)
  call check(ierr == MPI_SUCCESS .and. buf == 10 + left .and. req == MPI_REQUEST_NULL, &
             'the C request completed by MPI_Wait', buf)
  rc = c2f_status(st, left, 5, copy)
  call check(rc == 0, 'MPI_Status_f2c/c2f, check', rc)
  call check(copy(MPI_SOURCE) == left .and. copy(MPI_TAG) == 6, 'the status from C', copy(MPI_TAG))

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  rc = c2f_op_slots()
  call check(rc == 0, 'room for 32 Fortran operation functions, check', rc)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)

  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what, val)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: val
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,3a,i0)') 'f_c2f: rank ', rank, ': failed: ', what, ' ', val
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
end program f_c2f
