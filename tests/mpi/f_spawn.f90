! SPDX-License-Identifier: MIT
! f_spawn.f90 - process creation from Fortran through the mpi module.  The
! program spawns copies of itself, which know their part by their first
! argument:
!   - MPI_COMM_SPAWN of 2 children with the arguments "child" and
!     "two words" (padded with blanks, ended by a blank entry): the children
!     find their parent with MPI_COMM_GET_PARENT (the same handle twice),
!     read their arguments with GET_COMMAND_ARGUMENT (trailing blanks
!     trimmed), send their rank to the parents' rank 0 over the
!     inter-communicator, and everybody checks an MPI_ALLREDUCE across it;
!     then MPI_COMM_DISCONNECT, after which the children have no parent;
!   - MPI_COMM_SPAWN_MULTIPLE of two commands of 1 process each, with their
!     own rows of ARRAY_OF_ARGV(2, *) and infos (the second with wdir):
!     the error codes, the remote size, MPI_APPNUM, each child's arguments
!     and working directory;
!   - MPI_ARGV_NULL (MPI_COMM_SPAWN) and MPI_ARGVS_NULL
!     (MPI_COMM_SPAWN_MULTIPLE): a child without arguments;
!   - under MPI_ERRORS_RETURN, a program that does not exist: MPI_ERR_SPAWN
!     in ierror and in every error code, and with MPI_ERRCODES_IGNORE the
!     common block is left alone.
! The children give their failures to the parents over each
! inter-communicator; any failure ends the program with a non-zero code.
program f_spawn
  use mpi
  implicit none
  integer :: ierr, rank, nproc, parent, fails = 0, all_fails
  character(len=400) :: self
  character(len=16) :: part

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call get_command_argument(0, self)
  part = ''
  if (command_argument_count() > 0) call get_command_argument(1, part)
  call MPI_Comm_get_parent(parent, ierr)
  call check(ierr == MPI_SUCCESS, 'Comm_get_parent', ierr)
  if (parent == MPI_COMM_NULL) then
    call check(command_argument_count() == 0, 'the parents have no arguments', &
               command_argument_count())
    call parents()
    call MPI_Allreduce(fails, all_fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. all_fails == 0) print '(a,i0,a)', 'f_spawn: ok (', nproc, ' parents)'
    fails = all_fails
  else if (part == 'child') then
    call child()
  else if (part == 'multi') then
    call child_multiple()
  else
    call child_bare()
  end if
  call MPI_Finalize(ierr)
  if (fails /= 0) stop 1

contains

  subroutine check(ok, what, val)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: val
    if (.not. ok) then
      write (*, '(3a,i0,3a,i0)') 'f_spawn: ', trim(part), ' rank ', rank, ': failed: ', &
        what, ': value ', val
      fails = fails + 1
    end if
  end subroutine check

  ! Argument n of this process is expected, its length that of the string
  ! without its trailing blanks.
  subroutine check_arg(n, expected)
    integer, intent(in) :: n
    character(len=*), intent(in) :: expected
    character(len=64) :: a
    integer :: length, st
    call get_command_argument(n, a, length, st)
    call check(st == 0 .and. a == expected, 'argument "' // expected // '"', n)
    call check(length == len(expected), 'the length of argument "' // expected // '"', length)
  end subroutine check_arg

  ! The children's failures come over the inter-communicator (the
  ! parents' part is 0), then it is disconnected.
  subroutine children_done(inter)
    integer, intent(inout) :: inter
    integer :: theirs
    call MPI_Allreduce(0, theirs, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    call check(ierr == MPI_SUCCESS .and. theirs == 0, 'failures of the children', theirs)
    call MPI_Comm_disconnect(inter, ierr)
    call check(ierr == MPI_SUCCESS .and. inter == MPI_COMM_NULL, 'Comm_disconnect', inter)
  end subroutine children_done

  subroutine parent_done()
    integer :: p, theirs
    call MPI_Allreduce(fails, theirs, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call check(ierr == MPI_SUCCESS .and. parent == MPI_COMM_NULL, 'Comm_disconnect', parent)
    call MPI_Comm_get_parent(p, ierr)
    call check(p == MPI_COMM_NULL, 'Comm_get_parent after Comm_disconnect', p)
  end subroutine parent_done

  subroutine parents()
    integer :: inter, codes(4), cls, n, x, i, sum, seen, info, np(2), infos(2)
    integer :: st(MPI_STATUS_SIZE)
    character(len=12) :: args(3)
    character(len=len(self)) :: cmds(2)
    character(len=10) :: argvs(2, 4)
    logical :: flag

    ! Two children, their arguments padded with blanks and ended by a
    ! blank entry.  They are read at the root only: the other ranks give
    ! another command, no arguments and no count.
    args(1) = 'child'
    args(2) = 'two words'
    args(3) = ''
    codes = -1
    if (rank == 0) then
      call MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
    else
      call MPI_Comm_spawn('no-such-program', MPI_ARGV_NULL, -1, MPI_INFO_NULL, 0, &
                          MPI_COMM_WORLD, inter, codes, ierr)
    end if
    call check(ierr == MPI_SUCCESS, 'Comm_spawn', ierr)
    call check(all(codes(1:2) == MPI_SUCCESS), 'the error codes of Comm_spawn', codes(1))
    call check(codes(3) == -1, 'Comm_spawn wrote past its error codes', codes(3))
    call MPI_Comm_test_inter(inter, flag, ierr)
    call check(flag, 'Comm_spawn returns an inter-communicator', inter)
    call MPI_Comm_remote_size(inter, n, ierr)
    call check(n == 2, 'Comm_remote_size after Comm_spawn', n)
    call MPI_Comm_size(inter, n, ierr)
    call check(n == nproc, 'Comm_size of the inter-communicator', n)
    ! Each child sends its rank to rank 0.
    if (rank == 0) then
      seen = 0
      do i = 1, 2
        call MPI_Recv(x, 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, inter, st, ierr)
        call check(ierr == MPI_SUCCESS .and. x == st(MPI_SOURCE), 'a child''s rank', x)
        if (x >= 0 .and. x < 2) seen = ior(seen, ishft(1, x))
      end do
      call check(seen == 3, 'the ranks of the two children', seen)
    end if
    ! Across: the parents get the children's sum (1 + 2), the children the
    ! parents' (10 + 20 + ...).
    call MPI_Allreduce(10 * (rank + 1), sum, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    call check(ierr == MPI_SUCCESS .and. sum == 3, 'Allreduce across', sum)
    call children_done(inter)

    ! Two commands, one process each; ARRAY_OF_ARGV(i, j) is argument j
    ! of command i, each row ended by a blank entry.
    cmds = self
    argvs = ''
    argvs(1, 1) = 'multi'
    argvs(1, 2) = 'a'
    argvs(2, 1) = 'multi'
    argvs(2, 2) = 'b'
    argvs(2, 3) = 'x y'
    np = 1
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'wdir', '/tmp', ierr)
    infos = [MPI_INFO_NULL, info]
    codes = -1
    call MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, inter, codes, &
                                 ierr)
    call check(ierr == MPI_SUCCESS, 'Comm_spawn_multiple', ierr)
    call check(all(codes(1:2) == MPI_SUCCESS), 'the error codes of Comm_spawn_multiple', &
               codes(1))
    call check(codes(3) == -1, 'Comm_spawn_multiple wrote past its error codes', codes(3))
    call MPI_Comm_remote_size(inter, n, ierr)
    call check(n == 2, 'Comm_remote_size after Comm_spawn_multiple', n)
    call MPI_Allreduce(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    call check(ierr == MPI_SUCCESS .and. sum == 3, 'Allreduce across (APPNUM + 1)', sum)
    call children_done(inter)
    call MPI_Info_free(info, ierr)

    ! No arguments: MPI_ARGV_NULL, then MPI_ARGVS_NULL.
    codes = -1
    call MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        codes, ierr)
    call check(ierr == MPI_SUCCESS .and. codes(1) == MPI_SUCCESS, &
               'Comm_spawn with MPI_ARGV_NULL', ierr)
    call children_done(inter)
    codes = -1
    call MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD, &
                                 inter, codes, ierr)
    call check(ierr == MPI_SUCCESS .and. codes(1) == MPI_SUCCESS, &
               'Comm_spawn_multiple with MPI_ARGVS_NULL', ierr)
    call children_done(inter)

    ! A program that does not exist.
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    codes = -1
    call MPI_Comm_spawn('/nonexistent/f_spawn-no-such-program', MPI_ARGV_NULL, 3, &
                        MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
    call check(ierr /= MPI_SUCCESS, 'Comm_spawn of a missing program', ierr)
    call MPI_Error_class(ierr, cls, x)
    call check(cls == MPI_ERR_SPAWN, 'the error class of a missing program', cls)
    do i = 1, 3
      call check(codes(i) == MPI_ERR_SPAWN, 'an error code of a missing program', codes(i))
    end do
    call check(codes(4) == -1, 'Comm_spawn wrote past its error codes', codes(4))
    call MPI_Comm_spawn_multiple(1, ['/nonexistent/f_spawn-no-such-program'], argvs, [2], &
                                 [MPI_INFO_NULL], 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call MPI_Error_class(ierr, cls, x)
    call check(cls == MPI_ERR_SPAWN, 'Comm_spawn_multiple of a missing program', cls)
    call check(MPI_ERRCODES_IGNORE(1) == 0, 'MPI_ERRCODES_IGNORE was written', &
               MPI_ERRCODES_IGNORE(1))
  end subroutine parents

  ! The two children of MPI_COMM_SPAWN.
  subroutine child()
    integer :: p, n, sum
    logical :: flag
    call MPI_Comm_get_parent(p, ierr)
    call check(p == parent, 'Comm_get_parent again', p)
    call MPI_Comm_test_inter(parent, flag, ierr)
    call check(flag, 'the parent is an inter-communicator', parent)
    call check(nproc == 2, 'the children''s MPI_COMM_WORLD', nproc)
    call check(command_argument_count() == 2, 'the number of arguments', &
               command_argument_count())
    call check_arg(1, 'child')
    call check_arg(2, 'two words')
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 5, parent, ierr)
    call check(ierr == MPI_SUCCESS, 'Send to the parents', ierr)
    call MPI_Comm_remote_size(parent, n, ierr)
    call MPI_Allreduce(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call check(ierr == MPI_SUCCESS .and. sum == 10 * n * (n + 1) / 2, 'Allreduce across', sum)
    call parent_done()
  end subroutine child

  ! The children of MPI_COMM_SPAWN_MULTIPLE: rank = APPNUM = the command.
  subroutine child_multiple()
    integer(kind=MPI_ADDRESS_KIND) :: appnum
    integer :: n, sum, st
    logical :: flag
    character(len=400) :: dir
    call check(nproc == 2, 'the children''s MPI_COMM_WORLD', nproc)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag, ierr)
    call check(flag .and. appnum == rank, 'MPI_APPNUM', int(appnum))
    if (rank == 0) then
      call check(command_argument_count() == 2, 'the number of arguments', &
                 command_argument_count())
      call check_arg(2, 'a')
    else
      call check(command_argument_count() == 3, 'the number of arguments', &
                 command_argument_count())
      call check_arg(2, 'b')
      call check_arg(3, 'x y')
      call getcwd(dir, st)
      call check(st == 0 .and. dir == '/tmp', 'the working directory (info wdir)', st)
    end if
    call MPI_Comm_remote_size(parent, n, ierr)
    call MPI_Allreduce(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call check(ierr == MPI_SUCCESS .and. sum == n * (n + 1) / 2, 'Allreduce across', sum)
    call parent_done()
  end subroutine child_multiple

  ! A child of MPI_ARGV_NULL or MPI_ARGVS_NULL.
  subroutine child_bare()
    call check(command_argument_count() == 0, 'arguments with MPI_ARGV(S)_NULL', &
               command_argument_count())
    call check(nproc == 1, 'the child''s MPI_COMM_WORLD', nproc)
    call parent_done()
  end subroutine child_bare
end program f_spawn
