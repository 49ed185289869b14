! SPDX-License-Identifier: MIT
! f_dpm.f90 - ports and names from Fortran through the mpi module: rank 0
! opens a port (MPI_OPEN_PORT) and publishes it (MPI_PUBLISH_NAME); the
! job is split in two halves by MPI_COMM_SPLIT; the second half's leader
! looks the name up (MPI_LOOKUP_NAME) and connects (MPI_COMM_CONNECT)
! while the first half accepts (MPI_COMM_ACCEPT); an allreduce across the
! inter-communicator and MPI_INTERCOMM_MERGE check both groups; then
! MPI_COMM_DISCONNECT, MPI_UNPUBLISH_NAME and MPI_CLOSE_PORT, after which
! a lookup fails with MPI_ERR_NAME and a second close with MPI_ERR_PORT.
! The names live in BIP_NAMES_DIR (meson.build sets it).
program f_dpm
  use mpi
  implicit none
  integer :: ierr, rank, nproc, lo, half, inter, merged, rsize, v, total, want, i, cls
  logical :: first
  character(len=MPI_MAX_PORT_NAME) :: port, found
  character(len=64) :: service
  integer(kind=8) :: clock

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call check(nproc >= 2, 'at least 2 processes', nproc)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  lo = nproc / 2
  first = rank < lo

  ! A service name of this run's own.
  if (rank == 0) then
    call system_clock(clock)
    write (service, '(a,i0)') 'f_dpm service ', clock
    call MPI_Open_port(MPI_INFO_NULL, port, ierr)
    call check(ierr == MPI_SUCCESS, 'Open_port', ierr)
    call check(port(1:4) == 'bip:' .and. len_trim(port) > 40, 'the port name', len_trim(port))
    call MPI_Publish_name(service, MPI_INFO_NULL, port, ierr)
    call check(ierr == MPI_SUCCESS, 'Publish_name', ierr)
    call MPI_Publish_name(service, MPI_INFO_NULL, port, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_SERVICE, 'Publish_name of a published name', cls)
  end if
  call MPI_Bcast(service, len(service), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(port, len(port), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

  if (first) then
    call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, half, ierr)
  else
    call MPI_Comm_split(MPI_COMM_WORLD, 1, rank, half, ierr)
  end if
  call check(ierr == MPI_SUCCESS, 'Comm_split', ierr)

  if (first) then
    call MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, inter, ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_accept', ierr)
  else
    found = ' '
    if (rank == lo) then
      call MPI_Lookup_name(service, MPI_INFO_NULL, found, ierr)
      call check(ierr == MPI_SUCCESS, 'Lookup_name', ierr)
      call check(found == port, 'the name looked up is the port', len_trim(found))
    end if
    call MPI_Comm_connect(found, MPI_INFO_NULL, 0, half, inter, ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_connect', ierr)
  end if

  call MPI_Comm_remote_size(inter, rsize, ierr)
  if (first) then
    call check(rsize == nproc - lo, 'remote size', rsize)
  else
    call check(rsize == lo, 'remote size', rsize)
  end if
  ! Each side gets the sum of the other side's world ranks.
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
  call check(ierr == MPI_SUCCESS, 'Allreduce across', ierr)
  want = 0
  if (first) then
    do i = lo, nproc - 1
      want = want + i
    end do
  else
    do i = 0, lo - 1
      want = want + i
    end do
  end if
  call check(total == want, 'Allreduce across', total)
  call MPI_Intercomm_merge(inter, .not. first, merged, ierr)
  call check(ierr == MPI_SUCCESS, 'Intercomm_merge', ierr)
  call MPI_Comm_rank(merged, v, ierr)
  call check(v == rank, 'rank in the merged communicator', v)
  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_disconnect(inter, ierr)
  call check(ierr == MPI_SUCCESS .and. inter == MPI_COMM_NULL, 'Comm_disconnect', ierr)
  call MPI_Comm_free(half, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Unpublish_name(service, MPI_INFO_NULL, port, ierr)
    call check(ierr == MPI_SUCCESS, 'Unpublish_name', ierr)
    call MPI_Close_port(port, ierr)
    call check(ierr == MPI_SUCCESS, 'Close_port', ierr)
    call MPI_Close_port(port, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_PORT, 'Close_port of a closed port', cls)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Lookup_name(service, MPI_INFO_NULL, found, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_NAME, 'Lookup_name of an unpublished name', cls)

  if (rank == 0) print '(a)', 'f_dpm: ok'
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what, val)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: val
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,3a,i0)') 'f_dpm: rank ', rank, ': failed: ', what, ': value ', val
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
end program f_dpm
