! SPDX-License-Identifier: MIT
! f_inter.f90 - inter-communicators from Fortran: MPI_INTERCOMM_CREATE
! between the even and the odd ranks, remote size and group, point-to-point
! between the two leaders, MPI_ALLREDUCE and MPI_BCAST across the groups,
! MPI_INTERCOMM_MERGE (the low group first), and error classes under
! MPI_ERRORS_RETURN.  One process: the errors only.
program f_inter
  use mpi
  implicit none
  integer :: ierr, rank, nproc

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  if (nproc >= 2) call inter()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_inter: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  subroutine inter()
    integer :: color, local, ic, merged, lrank, lsize, rsize, n, g, gsize, i, expect
    integer :: neven, nodd, v, st(MPI_STATUS_SIZE), mrank
    logical :: flag
    color = mod(rank, 2)
    neven = (nproc + 1) / 2
    nodd = nproc / 2
    call MPI_Comm_split(MPI_COMM_WORLD, color, rank, local, ierr)
    call MPI_Comm_rank(local, lrank, ierr)
    call MPI_Comm_size(local, lsize, ierr)
    ! Leaders: world ranks 0 (evens) and 1 (odds).
    call MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, ic, ierr)
    call check(ierr == MPI_SUCCESS .and. ic /= MPI_COMM_NULL, 'Intercomm_create')
    call MPI_Comm_test_inter(ic, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag, 'Comm_test_inter')
    call MPI_Comm_remote_size(ic, rsize, ierr)
    call check(ierr == MPI_SUCCESS .and. rsize == merge(nodd, neven, color == 0), &
               'Comm_remote_size')
    call MPI_Comm_size(ic, n, ierr)
    call check(n == lsize, 'Comm_size of an inter-communicator is the local size')
    call MPI_Comm_remote_group(ic, g, ierr)
    call MPI_Group_size(g, gsize, ierr)
    call check(ierr == MPI_SUCCESS .and. gsize == rsize, 'Comm_remote_group')
    call MPI_Group_free(g, ierr)
    call check(g == MPI_GROUP_NULL, 'Group_free')

    ! Point-to-point: the leaders swap, ranks in the remote group.
    if (lrank == 0) then
      call MPI_Sendrecv(100 + color, 1, MPI_INTEGER, 0, 3, v, 1, MPI_INTEGER, 0, 3, ic, st, ierr)
      call check(ierr == MPI_SUCCESS .and. v == 101 - color, 'Sendrecv across')
      call check(st(MPI_SOURCE) == 0 .and. st(MPI_TAG) == 3, 'status across')
    end if

    ! Allreduce: each group gets the sum of the other's world ranks.
    call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, ic, ierr)
    expect = 0
    do i = 1 - color, nproc - 1, 2
      expect = expect + i
    end do
    call check(ierr == MPI_SUCCESS .and. v == expect, 'Allreduce across')

    ! Bcast from the odd group's rank 0 to the evens.
    v = -1
    if (color == 1) then
      if (lrank == 0) then
        v = 55
        call MPI_Bcast(v, 1, MPI_INTEGER, MPI_ROOT, ic, ierr)
      else
        call MPI_Bcast(v, 1, MPI_INTEGER, MPI_PROC_NULL, ic, ierr)
      end if
      call check(ierr == MPI_SUCCESS, 'Bcast root side')
    else
      call MPI_Bcast(v, 1, MPI_INTEGER, 0, ic, ierr)
      call check(ierr == MPI_SUCCESS .and. v == 55, 'Bcast across')
    end if

    ! Merge with the odd group high: the evens first.
    call MPI_Intercomm_merge(ic, color == 1, merged, ierr)
    call check(ierr == MPI_SUCCESS .and. merged /= MPI_COMM_NULL, 'Intercomm_merge')
    call MPI_Comm_size(merged, n, ierr)
    call MPI_Comm_rank(merged, mrank, ierr)
    call check(n == nproc .and. mrank == merge(lrank, neven + lrank, color == 0), &
               'merged ranks')
    call MPI_Comm_test_inter(merged, flag, ierr)
    call check(.not. flag, 'merged is an intra-communicator')

    ! A collective on an inter-communicator with an intra-communicator's
    ! root: MPI_ERR_ROOT (a negative rank is neither MPI_ROOT nor MPI_PROC_NULL).
    call MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN, ierr)
    call MPI_Bcast(v, 1, MPI_INTEGER, -5, ic, ierr)
    call check(err_class(ierr) == MPI_ERR_ROOT, 'Bcast root -5 on an inter-communicator')

    call MPI_Comm_free(merged, ierr)
    call MPI_Comm_free(ic, ierr)
    call check(ierr == MPI_SUCCESS .and. ic == MPI_COMM_NULL, 'Comm_free inter')
    call MPI_Comm_free(local, ierr)
  end subroutine inter

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine errors()
    integer :: n, ic, g
    ! Remote size and group of an intra-communicator.
    call MPI_Comm_remote_size(MPI_COMM_WORLD, n, ierr)
    call check(err_class(ierr) == MPI_ERR_COMM, 'Comm_remote_size of an intra-communicator')
    call MPI_Comm_remote_group(MPI_COMM_WORLD, g, ierr)
    call check(err_class(ierr) == MPI_ERR_COMM, 'Comm_remote_group of an intra-communicator')
    ! No local communicator.
    ic = -3
    call MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, 0, 1, ic, ierr)
    call check(err_class(ierr) == MPI_ERR_COMM, 'Intercomm_create with MPI_COMM_NULL')
    ! Merge of an intra-communicator.
    call MPI_Intercomm_merge(MPI_COMM_WORLD, .false., ic, ierr)
    call check(err_class(ierr) == MPI_ERR_COMM, 'Intercomm_merge of an intra-communicator')
  end subroutine errors
end program f_inter
