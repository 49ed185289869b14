! SPDX-License-Identifier: MIT
! ring.c in Fortran: rank 0 starts the token, each rank adds its rank and
! passes it on, and rank 0 checks the sum against an allreduce of the ranks.
!   bipf90 ring.f90 -o ring -lmpi && bipload -sz 4 ./ring
program ring
  use mpi
  implicit none
  integer :: rank, nproc, token, total, ierr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  if (rank == 0) then
    token = 0
    call MPI_Send(token, 1, MPI_INTEGER, mod(1, nproc), 0, MPI_COMM_WORLD, ierr)
    call MPI_Recv(token, 1, MPI_INTEGER, nproc - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Recv(token, 1, MPI_INTEGER, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    token = token + rank
    call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nproc), 0, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a, i0)', 'token went round ', nproc, ' ranks: ', &
    token, ', allreduce ', total
  call MPI_Finalize(ierr)
  if (rank == 0 .and. token /= total) stop 1
end program ring
