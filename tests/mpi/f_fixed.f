! SPDX-License-Identifier: MIT
! f_fixed.f - a fixed-form program with mpif.h: a ring, a reduction in
! place, the status array, MPI_WTIME as an external function, and the
! common blocks of MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (a ring graph),
! MPI_AINT_ADD and MPI_AINT_DIFF as external functions, the optional
! datatypes MPI_INTEGER16 and MPI_LOGICAL1, a file of MPI_FILE_OPEN with
! INTEGER(KIND=MPI_OFFSET_KIND) offsets (in $TMPDIR, else the current
! directory), MPI_COMM_GET_PARENT, and spawns of a missing program with
! the common blocks MPI_ARGV_NULL, MPI_ARGVS_NULL and
! MPI_ERRCODES_IGNORE.
      program ffixed
      implicit none
      include 'mpif.h'
      integer ierr, rank, nproc, right, left, v, w, st(MPI_STATUS_SIZE)
      integer n, s, g, indeg, outdeg
      double precision t, tick, arr(4)
      integer(kind=MPI_ADDRESS_KIND) a1, a4
      logical flag
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
      right = mod(rank + 1, nproc)
      left = mod(rank + nproc - 1, nproc)
      v = rank * 3
      call MPI_SENDRECV(v, 1, MPI_INTEGER, right, 9, w, 1,
     &     MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
     &     st, ierr)
      if (ierr .ne. MPI_SUCCESS .or. w .ne. left * 3) call fail(1)
      if (st(MPI_SOURCE) .ne. left .or. st(MPI_TAG) .ne. 9) call fail(2)
      call MPI_GET_COUNT(st, MPI_INTEGER, n, ierr)
      if (n .ne. 1) call fail(3)
      s = rank
      call MPI_ALLREDUCE(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (s .ne. nproc * (nproc - 1) / 2) call fail(4)
      call MPI_SEND(v, 1, MPI_INTEGER, rank, 8, MPI_COMM_WORLD, ierr)
      call MPI_RECV(w, 1, MPI_INTEGER, rank, 8, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, ierr)
      if (w .ne. v) call fail(5)
      call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, left,
     &     MPI_UNWEIGHTED, 1, right, MPI_UNWEIGHTED, MPI_INFO_NULL,
     &     .false., g, ierr)
      if (ierr .ne. MPI_SUCCESS) call fail(8)
      call MPI_DIST_GRAPH_NEIGHBORS_COUNT(g, indeg, outdeg, flag, ierr)
      if (indeg .ne. 1 .or. outdeg .ne. 1 .or. flag) call fail(9)
      call MPI_COMM_FREE(g, ierr)
      call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 0, v, v, v,
     &     MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, .false., g, ierr)
      if (ierr .ne. MPI_SUCCESS) call fail(10)
      call MPI_COMM_FREE(g, ierr)
      call MPI_INITIALIZED(flag, ierr)
      if (.not. flag) call fail(6)
      t = MPI_WTIME()
      tick = MPI_WTICK()
      if (t .le. 0d0 .or. tick .le. 0d0) call fail(7)
      arr = 0d0
      call MPI_GET_ADDRESS(arr(1), a1, ierr)
      call MPI_GET_ADDRESS(arr(4), a4, ierr)
      if (MPI_AINT_DIFF(a4, a1) .ne. 24) call fail(11)
      if (MPI_AINT_ADD(a1, 24_MPI_ADDRESS_KIND) .ne. a4) call fail(12)
      call MPI_TYPE_SIZE(MPI_INTEGER16, n, ierr)
      if (n .ne. 16) call fail(13)
      call MPI_TYPE_SIZE(MPI_LOGICAL1, n, ierr)
      if (n .ne. 1) call fail(14)
      call fileio(rank, nproc, left)
      call spawns()
      call MPI_FINALIZE(ierr)
      end

      subroutine spawns()
      implicit none
      include 'mpif.h'
      integer ierr, parent, cls, i, codes(3), np(1), infos(1)
      character*40 cmds(1)
      call MPI_COMM_GET_PARENT(parent, ierr)
      if (ierr .ne. MPI_SUCCESS .or. parent .ne. MPI_COMM_NULL)
     &     call fail(30)
      call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     ierr)
      call MPI_COMM_SPAWN('/nonexistent/f_fixed-no-such-program',
     &     MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, parent,
     &     MPI_ERRCODES_IGNORE, ierr)
      call MPI_ERROR_CLASS(ierr, cls, i)
      if (cls .ne. MPI_ERR_SPAWN) call fail(31)
      if (MPI_ERRCODES_IGNORE(1) .ne. 0) call fail(32)
      cmds(1) = '/nonexistent/f_fixed-no-such-program'
      np(1) = 2
      infos(1) = MPI_INFO_NULL
      codes(3) = -1
      call MPI_COMM_SPAWN_MULTIPLE(1, cmds, MPI_ARGVS_NULL, np, infos,
     &     0, MPI_COMM_WORLD, parent, codes, ierr)
      call MPI_ERROR_CLASS(ierr, cls, i)
      if (cls .ne. MPI_ERR_SPAWN) call fail(33)
      if (codes(1) .ne. MPI_ERR_SPAWN .or. codes(2) .ne. MPI_ERR_SPAWN
     &     .or. codes(3) .ne. -1) call fail(34)
      call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD,
     &     MPI_ERRORS_ARE_FATAL, ierr)
      end

      subroutine fileio(rank, nproc, left)
      implicit none
      include 'mpif.h'
      integer rank, nproc, left, ierr, fh, v, n, st(MPI_STATUS_SIZE)
      integer(kind=MPI_OFFSET_KIND) off, size
      integer(kind=8) clock
      character*300 dir, path
      if (rank .eq. 0) then
        call get_environment_variable('TMPDIR', dir, n, ierr)
        if (ierr .ne. 0 .or. n .eq. 0) dir = '.'
        call system_clock(clock)
        write (path, '(2a,i0,a,i0)') trim(dir), '/f_fixed.', nproc,
     &       '.', clock
      end if
      call MPI_BCAST(path, len(path), MPI_CHARACTER, 0,
     &     MPI_COMM_WORLD, ierr)
      call MPI_FILE_OPEN(MPI_COMM_WORLD, path, MPI_MODE_CREATE +
     &     MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
     &     fh, ierr)
      if (ierr .ne. MPI_SUCCESS .or. fh .eq. MPI_FILE_NULL)
     &     call fail(20)
      v = 7 * rank + 1
      off = 4 * rank
      call MPI_FILE_WRITE_AT(fh, off, v, 1, MPI_INTEGER, st, ierr)
      call MPI_GET_COUNT(st, MPI_INTEGER, n, ierr)
      if (n .ne. 1) call fail(21)
      call MPI_FILE_SYNC(fh, ierr)
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      call MPI_FILE_SYNC(fh, ierr)
      call MPI_FILE_GET_SIZE(fh, size, ierr)
      if (size .ne. 4 * nproc) call fail(22)
      off = 4 * left
      call MPI_FILE_SEEK(fh, off, MPI_SEEK_SET, ierr)
      call MPI_FILE_READ(fh, v, 1, MPI_INTEGER, MPI_STATUS_IGNORE,
     &     ierr)
      if (ierr .ne. MPI_SUCCESS .or. v .ne. 7 * left + 1) call fail(23)
      call MPI_FILE_CLOSE(fh, ierr)
      if (ierr .ne. MPI_SUCCESS .or. fh .ne. MPI_FILE_NULL)
     &     call fail(24)
      end

      subroutine fail(what)
      implicit none
      include 'mpif.h'
      integer what, ierr
      print *, 'f_fixed: failed check ', what
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end
