! SPDX-License-Identifier: MIT
! f_rma.f90 - one-sided communication from Fortran through the mpi module:
! MPI_PUT and MPI_GET between fences on MPI_WIN_CREATE memory, MPI_ACCUMULATE
! with MPI_SUM, an MPI_FETCH_AND_OP counter and MPI_COMPARE_AND_SWAP, a
! read-modify-write under MPI_LOCK_EXCLUSIVE, MPI_RPUT in a lock_all epoch,
! MPI_WIN_ALLOCATE and MPI_WIN_ALLOCATE_SHARED with MPI_WIN_SHARED_QUERY
! (base addresses as INTEGER(KIND=MPI_ADDRESS_KIND), made pointers with
! C_F_POINTER), the predefined window attributes, a window keyval with a
! Fortran delete function, a Fortran window error handler, the window name
! and group, a put outside the window under MPI_ERRORS_RETURN, a dynamic
! window (MPI_WIN_ATTACH, displacements from MPI_GET_ADDRESS), post/start/
! complete/wait with MPI_WIN_TEST, and MPI_GET_ACCUMULATE with MPI_SUM and
! MPI_NO_OP.
module f_rma_fns
  use mpi
  implicit none
  integer :: deletes = 0, deleted_win = -1, deleted_key = -1
  integer :: errh_calls = 0, errh_win = -1, errh_code = -1
  integer(kind=MPI_ADDRESS_KIND) :: deleted_value = -1, deleted_extra = -1
contains
  subroutine delete_fn(win, keyval, value, extra, ierr)
    integer :: win, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: value, extra
    deletes = deletes + 1
    deleted_win = win
    deleted_key = keyval
    deleted_value = value
    deleted_extra = extra
    ierr = MPI_SUCCESS
  end subroutine delete_fn

  subroutine win_errh(win, code)
    integer :: win, code
    errh_calls = errh_calls + 1
    errh_win = win
    errh_code = code
  end subroutine win_errh
end module f_rma_fns

program f_rma
  use, intrinsic :: iso_c_binding, only : c_ptr, c_null_ptr, c_f_pointer
  use mpi
  use f_rma_fns
  implicit none
  integer, parameter :: n = 8
  integer :: ierr, rank, nproc, right, left
  ! Window memory: volatile, as other processes change it between the calls.
  integer, volatile, target :: mem(n)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)

  call fence_put_get()
  call accumulate_sum()
  call counters()
  call exclusive_lock()
  call request_based()
  call allocate_win()
  call shared_win()
  call dynamic_win()
  call pscw()
  call get_accumulate()
  call attributes()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'f_rma: ok'
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what, val)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: val
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,3a,i0)') 'f_rma: rank ', rank, ': failed: ', what, ': value ', val
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  subroutine win_new(win)
    integer, intent(out) :: win
    integer(kind=MPI_ADDRESS_KIND) :: size
    size = 4 * n
    call MPI_Win_create(mem, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'Win_create', ierr)
  end subroutine win_new

  subroutine win_done(win)
    integer, intent(inout) :: win
    call MPI_Win_free(win, ierr)
    call check(ierr == MPI_SUCCESS .and. win == MPI_WIN_NULL, 'Win_free', ierr)
  end subroutine win_done

  ! Each rank puts 2 words into its right neighbour, then gets the whole
  ! window of its left one.
  subroutine fence_put_get()
    integer :: win, i, v(2), got(n)
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = -1
    call win_new(win)
    call MPI_Win_fence(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'first Win_fence', ierr)
    v = [100 * rank + 1, 100 * rank + 2]
    disp = 2
    call MPI_Put(v, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Put', ierr)
    call MPI_Win_fence(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_fence after Put', ierr)
    do i = 1, n
      if (i == 3) then
        call check(mem(i) == 100 * left + 1, 'word 3 put by the left neighbour', mem(i))
      else if (i == 4) then
        call check(mem(i) == 100 * left + 2, 'word 4 put by the left neighbour', mem(i))
      else
        call check(mem(i) == -1, 'a word no put wrote', mem(i))
      end if
    end do
    ! Every word set locally, then read by the right neighbour.
    call MPI_Win_fence(0, win, ierr)
    do i = 1, n
      mem(i) = 1000 * rank + i
    end do
    call MPI_Win_fence(0, win, ierr)
    got = -7
    disp = 0
    call MPI_Get(got, n, MPI_INTEGER, left, disp, n, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Get', ierr)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_fence after Get', ierr)
    do i = 1, n
      call check(got(i) == 1000 * left + i, 'a word got from the left neighbour', got(i))
    end do
    call win_done(win)
  end subroutine fence_put_get

  ! Every rank adds [r+1, 2(r+1), 3(r+1)] into words 2 to 4 of rank 0.
  subroutine accumulate_sum()
    integer :: win, i, v(3), total
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = 5
    call win_new(win)
    call MPI_Win_fence(MPI_MODE_NOPRECEDE, win, ierr)
    v = [rank + 1, 2 * (rank + 1), 3 * (rank + 1)]
    disp = 1
    call MPI_Accumulate(v, 3, MPI_INTEGER, 0, disp, 3, MPI_INTEGER, MPI_SUM, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Accumulate', ierr)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_fence after Accumulate', ierr)
    total = nproc * (nproc + 1) / 2
    do i = 1, n
      if (rank == 0 .and. i >= 2 .and. i <= 4) then
        call check(mem(i) == 5 + (i - 1) * total, 'a word MPI_SUM accumulated', mem(i))
      else
        call check(mem(i) == 5, 'a word no accumulate reached', mem(i))
      end if
    end do
    call win_done(win)
  end subroutine accumulate_sum

  ! A counter on rank 0 (word 1): each rank takes a ticket with
  ! MPI_FETCH_AND_OP; then MPI_COMPARE_AND_SWAP on word 2, 0 -> rank + 1,
  ! succeeds for exactly one rank.
  subroutine counters()
    integer :: win, one, ticket, tickets(nproc), i, cmp, new, old, winners, won
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = 0
    call win_new(win)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    one = 1
    ticket = -1
    disp = 0
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_lock shared', ierr)
    call MPI_Fetch_and_op(one, ticket, MPI_INTEGER, 0, disp, MPI_SUM, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Fetch_and_op', ierr)
    cmp = 0
    new = rank + 1
    old = -1
    disp = 1
    call MPI_Compare_and_swap(new, cmp, old, MPI_INTEGER, 0, disp, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Compare_and_swap', ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_unlock shared', ierr)
    call check(ticket >= 0 .and. ticket < nproc, 'the ticket of Fetch_and_op', ticket)
    call MPI_Allgather(ticket, 1, MPI_INTEGER, tickets, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do i = 0, nproc - 1
      call check(count(tickets == i) == 1, 'each ticket taken once', i)
    end do
    won = 0
    if (old == 0) won = 1
    call check(old == 0 .or. (old >= 1 .and. old <= nproc), 'the old value of Compare_and_swap', old)
    call MPI_Allreduce(won, winners, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(winners == 1, 'one Compare_and_swap succeeds', winners)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      call check(mem(1) == nproc, 'the counter after every Fetch_and_op', mem(1))
      call check(mem(2) >= 1 .and. mem(2) <= nproc, 'the word Compare_and_swap set', mem(2))
      do i = 3, n
        call check(mem(i) == 0, 'a word the atomics did not touch', mem(i))
      end do
    end if
    call win_done(win)
  end subroutine counters

  ! Word 3 of rank 0: get, add, put under the exclusive lock, by each rank.
  subroutine exclusive_lock()
    integer :: win, v, seen
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = 0
    call win_new(win)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    disp = 2
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_lock exclusive', ierr)
    v = -1
    call MPI_Get(v, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Get under the lock', ierr)
    call MPI_Win_flush(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_flush', ierr)
    call check(v >= 0, 'the value read under the exclusive lock', v)
    v = v + rank + 1
    call MPI_Put(v, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Put under the lock', ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_unlock exclusive', ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    seen = -1
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call MPI_Get(seen, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Get of the sum', ierr)
    call check(seen == nproc * (nproc + 1) / 2, 'the sum of the exclusive updates', seen)
    call win_done(win)
  end subroutine exclusive_lock

  ! MPI_RPUT and MPI_RGET in a lock_all epoch, completed by MPI_WAIT.
  subroutine request_based()
    integer :: win, req, v(2), got(2)
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = 0
    call win_new(win)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock_all(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_lock_all', ierr)
    v = [rank + 11, rank + 22]
    disp = 4
    call MPI_Rput(v, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win, req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'Rput', ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'Wait of Rput', ierr)
    call MPI_Win_flush_all(win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_flush_all', ierr)
    call MPI_Win_unlock_all(win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_unlock_all', ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock_all(0, win, ierr)
    got = -1
    ! The right neighbour's words 5 and 6 are this rank's Rput.
    call MPI_Rget(got, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win, req, ierr)
    call check(ierr == MPI_SUCCESS, 'Rget', ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'Wait of Rget', ierr)
    call MPI_Win_unlock_all(win, ierr)
    call check(got(1) == rank + 11 .and. got(2) == rank + 22, 'the words Rget read', got(1))
    call check(mem(5) == left + 11 .and. mem(6) == left + 22, 'the words Rput wrote', mem(5))
    call win_done(win)
  end subroutine request_based

  ! MPI_WIN_ALLOCATE: the memory through C_F_POINTER, its base address
  ! also as MPI_WIN_BASE, a put into the neighbour's.
  subroutine allocate_win()
    integer :: win, i, v
    integer(kind=MPI_ADDRESS_KIND) :: size, baseptr, val
    integer, pointer :: a(:)
    logical :: flag
    size = 4 * n
    call MPI_Win_allocate(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL .and. baseptr /= 0, &
               'Win_allocate', ierr)
    call c_f_pointer(transfer(baseptr, c_null_ptr), a, [n])
    call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == baseptr, 'MPI_WIN_BASE of Win_allocate', ierr)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
    call check(flag .and. val == MPI_WIN_FLAVOR_ALLOCATE, 'MPI_WIN_CREATE_FLAVOR allocate', int(val))
    call MPI_Win_fence(0, win, ierr)
    do i = 1, n
      a(i) = -i
    end do
    call MPI_Win_fence(0, win, ierr)
    v = 77 + rank
    call MPI_Put(v, 1, MPI_INTEGER, right, int(n - 1, MPI_ADDRESS_KIND), 1, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Put into allocated memory', ierr)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_fence of Win_allocate', ierr)
    do i = 1, n - 1
      call check(a(i) == -i, 'a word of the allocated memory', a(i))
    end do
    call check(a(n) == 77 + left, 'the word put into the allocated memory', a(n))
    call win_done(win)
  end subroutine allocate_win

  ! MPI_WIN_ALLOCATE_SHARED: each rank writes its part, then reads every
  ! rank's through MPI_WIN_SHARED_QUERY.
  subroutine shared_win()
    integer, parameter :: m = 4
    integer :: win, i, r, disp_unit
    integer(kind=MPI_ADDRESS_KIND) :: size, baseptr, qsize, qptr, val
    integer, pointer :: a(:), b(:)
    logical :: flag
    size = 4 * m
    call MPI_Win_allocate_shared(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL .and. baseptr /= 0, &
               'Win_allocate_shared', ierr)
    call c_f_pointer(transfer(baseptr, c_null_ptr), a, [m])
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
    call check(flag .and. val == MPI_WIN_FLAVOR_SHARED, 'MPI_WIN_CREATE_FLAVOR shared', int(val))
    call MPI_Win_get_attr(win, MPI_WIN_MODEL, val, flag, ierr)
    call check(flag .and. (val == MPI_WIN_UNIFIED .or. val == MPI_WIN_SEPARATE), &
               'MPI_WIN_MODEL', int(val))
    call MPI_Win_fence(0, win, ierr)
    do i = 1, m
      a(i) = 10 * rank + i
    end do
    call MPI_Win_sync(win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_sync', ierr)
    call MPI_Win_fence(0, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_fence of the shared window', ierr)
    do r = 0, nproc - 1
      qptr = 0
      call MPI_Win_shared_query(win, r, qsize, disp_unit, qptr, ierr)
      call check(ierr == MPI_SUCCESS .and. qptr /= 0, 'Win_shared_query', ierr)
      call check(qsize == 4 * m, 'the size Win_shared_query gives', int(qsize))
      call check(disp_unit == 4, 'the disp_unit Win_shared_query gives', disp_unit)
      if (r == rank) call check(qptr == baseptr, 'Win_shared_query of my own part', r)
      call c_f_pointer(transfer(qptr, c_null_ptr), b, [m])
      do i = 1, m
        call check(b(i) == 10 * r + i, 'a word of a shared part', b(i))
      end do
    end do
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
    call win_done(win)
  end subroutine shared_win

  ! MPI_WIN_CREATE_DYNAMIC: each rank attaches n words, and puts 3 words
  ! at its right neighbour's address (from MPI_GET_ADDRESS, exchanged)
  ! under an exclusive lock; then detaches.
  subroutine dynamic_win()
    integer :: win, i, v(3)
    integer, target :: dmem(n)
    integer(kind=MPI_ADDRESS_KIND) :: me, addrs(0:nproc - 1), disp, size
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: val
    dmem = -1
    call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'Win_create_dynamic', ierr)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
    call check(flag .and. val == MPI_WIN_FLAVOR_DYNAMIC, 'MPI_WIN_CREATE_FLAVOR dynamic', &
               int(val))
    size = 4 * n
    call MPI_Win_attach(win, dmem, size, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_attach', ierr)
    call MPI_Get_address(dmem, me, ierr)
    call MPI_Allgather(me, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD, ierr)
    v = [7 * rank + 1, 7 * rank + 2, 7 * rank + 3]
    disp = MPI_Aint_add(addrs(right), 4_MPI_ADDRESS_KIND * 2)
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
    call MPI_Put(v, 3, MPI_INTEGER, right, disp, 3, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Put at an address', ierr)
    call MPI_Win_unlock(right, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_unlock of the dynamic window', ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_sync(win, ierr)
    do i = 1, n
      if (i >= 3 .and. i <= 5) then
        call check(dmem(i) == 7 * left + i - 2, 'a word put at an address', dmem(i))
      else
        call check(dmem(i) == -1, 'a word of the dynamic window no put wrote', dmem(i))
      end if
    end do
    call MPI_Win_detach(win, dmem, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_detach', ierr)
    call win_done(win)
  end subroutine dynamic_win

  ! Post/start/complete/wait: every rank exposes its window to its left
  ! neighbour and puts into its right one; MPI_WIN_TEST ends the exposure
  ! in the second round.
  subroutine pscw()
    integer :: win, world, gright, gleft, round, v, i
    integer(kind=MPI_ADDRESS_KIND) :: disp
    logical :: done
    mem = -1
    call win_new(win)
    call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
    call MPI_Group_incl(world, 1, [right], gright, ierr)
    call MPI_Group_incl(world, 1, [left], gleft, ierr)
    do round = 1, 2
      call MPI_Win_post(gleft, 0, win, ierr)
      call check(ierr == MPI_SUCCESS, 'Win_post', ierr)
      call MPI_Win_start(gright, 0, win, ierr)
      call check(ierr == MPI_SUCCESS, 'Win_start', ierr)
      v = 100 * round + rank
      disp = round - 1
      call MPI_Put(v, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
      call MPI_Win_complete(win, ierr)
      call check(ierr == MPI_SUCCESS, 'Win_complete', ierr)
      if (round == 1) then
        call MPI_Win_wait(win, ierr)
        call check(ierr == MPI_SUCCESS, 'Win_wait', ierr)
      else
        done = .false.
        do while (.not. done)
          call MPI_Win_test(win, done, ierr)
          call check(ierr == MPI_SUCCESS, 'Win_test', ierr)
        end do
      end if
      call check(mem(round) == 100 * round + left, 'a word put in a pscw epoch', mem(round))
    end do
    do i = 3, n
      call check(mem(i) == -1, 'a word no pscw put wrote', mem(i))
    end do
    call MPI_Group_free(gright, ierr)
    call MPI_Group_free(gleft, ierr)
    call MPI_Group_free(world, ierr)
    call win_done(win)
  end subroutine pscw

  ! MPI_GET_ACCUMULATE: every rank adds rank + 1 to words 1 and 2 of rank 0
  ! and fetches what was there; MPI_NO_OP then reads the totals.
  subroutine get_accumulate()
    integer :: win, v(2), old(2), total(2), dummy(2)
    integer(kind=MPI_ADDRESS_KIND) :: disp
    mem = 0
    call win_new(win)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    v = [rank + 1, 10 * (rank + 1)]
    disp = 0
    call MPI_Win_lock_all(0, win, ierr)
    call MPI_Get_accumulate(v, 2, MPI_INTEGER, old, 2, MPI_INTEGER, 0, disp, 2, &
                            MPI_INTEGER, MPI_SUM, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Get_accumulate', ierr)
    call MPI_Win_flush(0, win, ierr)
    call check(old(1) >= 0 .and. old(1) <= nproc * (nproc + 1) / 2 - (rank + 1), &
               'the value Get_accumulate fetched', old(1))
    call check(old(2) == 10 * old(1), 'the second value Get_accumulate fetched', old(2))
    call MPI_Win_unlock_all(win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call MPI_Get_accumulate(dummy, 0, MPI_INTEGER, total, 2, MPI_INTEGER, 0, disp, 2, &
                            MPI_INTEGER, MPI_NO_OP, win, ierr)
    call check(ierr == MPI_SUCCESS, 'Get_accumulate with MPI_NO_OP', ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(total(1) == nproc * (nproc + 1) / 2, 'the total MPI_NO_OP read', total(1))
    call check(total(2) == 10 * total(1), 'the second total MPI_NO_OP read', total(2))
    call win_done(win)
  end subroutine get_accumulate

  ! The predefined attributes, a user keyval, the name and the group.
  subroutine attributes()
    integer :: win, win_num, key, key2, group, gsize, len
    integer(kind=MPI_ADDRESS_KIND) :: val, extra, addr
    logical :: flag
    character(len=MPI_MAX_OBJECT_NAME) :: name
    call win_new(win)
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 4 * n, 'MPI_WIN_SIZE', int(val))
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 4, 'MPI_WIN_DISP_UNIT', int(val))
    call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag, ierr)
    call MPI_Get_address(mem, addr, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == addr, 'MPI_WIN_BASE', ierr)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
    call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR create', int(val))

    extra = 42
    call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, key, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_create_keyval', ierr)
    call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, key2, extra, ierr)
    call check(ierr == MPI_SUCCESS .and. key2 /= key, 'Win_create_keyval predefined', ierr)
    call MPI_Win_get_attr(win, key, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'Win_get_attr before any set', ierr)
    val = 12345
    call MPI_Win_set_attr(win, key, val, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_set_attr', ierr)
    val = 7
    call MPI_Win_set_attr(win, key2, val, ierr)
    val = 0
    call MPI_Win_get_attr(win, key, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. val == 12345, 'Win_get_attr', int(val))
    call MPI_Win_get_attr(win, key2, val, flag, ierr)
    call check(flag .and. val == 7, 'Win_get_attr of the second key', int(val))
    call MPI_Win_delete_attr(win, key2, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_delete_attr', ierr)
    call MPI_Win_get_attr(win, key2, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'Win_get_attr after delete', ierr)

    call MPI_Win_set_name(win, 'window of f_rma   ', ierr)
    call check(ierr == MPI_SUCCESS, 'Win_set_name', ierr)
    name = '?'
    call MPI_Win_get_name(win, name, len, ierr)
    call check(ierr == MPI_SUCCESS .and. name == 'window of f_rma' .and. len == 15, &
               'Win_get_name', len)
    call MPI_Win_get_group(win, group, ierr)
    call check(ierr == MPI_SUCCESS .and. group /= MPI_GROUP_NULL, 'Win_get_group', ierr)
    call MPI_Group_size(group, gsize, ierr)
    call check(gsize == nproc, 'the size of the window group', gsize)
    call MPI_Group_free(group, ierr)

    call check(deletes == 0, 'delete function called early', deletes)
    win_num = win
    call win_done(win)
    call check(deletes == 1 .and. deleted_value == 12345 .and. deleted_extra == 42, &
               'the delete function at Win_free', deletes)
    call check(deleted_win == win_num .and. deleted_key == key, &
               'the window and key the delete function got', deleted_win)
    call MPI_Win_free_keyval(key, ierr)
    call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'Win_free_keyval', ierr)
    call MPI_Win_free_keyval(key2, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_free_keyval of the second key', ierr)
  end subroutine attributes

  ! A Fortran window error handler, then a put outside the window under
  ! MPI_ERRORS_RETURN: MPI_ERR_RMA_RANGE at the put or at the fence.
  subroutine errors()
    integer :: win, errh, errh2, v, rc, cls, cls2
    integer(kind=MPI_ADDRESS_KIND) :: disp
    call win_new(win)
    call MPI_Win_create_errhandler(win_errh, errh, ierr)
    call check(ierr == MPI_SUCCESS .and. errh /= MPI_ERRHANDLER_NULL, 'Win_create_errhandler', ierr)
    call MPI_Win_set_errhandler(win, errh, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_set_errhandler', ierr)
    call MPI_Win_get_errhandler(win, errh2, ierr)
    call check(ierr == MPI_SUCCESS .and. errh2 == errh, 'Win_get_errhandler', errh2)
    call MPI_Errhandler_free(errh2, ierr)
    call MPI_Win_call_errhandler(win, MPI_ERR_OTHER, ierr)
    call check(errh_calls == 1 .and. errh_win == win .and. errh_code == MPI_ERR_OTHER, &
               'the Fortran window error handler', errh_code)
    call MPI_Errhandler_free(errh, ierr)

    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
    call check(ierr == MPI_SUCCESS, 'Win_set_errhandler MPI_ERRORS_RETURN', ierr)
    call MPI_Win_fence(0, win, ierr)
    v = 1
    disp = n
    call MPI_Put(v, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, rc)
    call MPI_Error_class(rc, cls, ierr)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, rc)
    call MPI_Error_class(rc, cls2, ierr)
    call check(cls == MPI_ERR_RMA_RANGE .or. (cls == MPI_SUCCESS .and. &
               cls2 == MPI_ERR_RMA_RANGE), 'a put past the window', cls)
    call check(errh_calls == 1, 'the replaced error handler was called', errh_calls)
    call win_done(win)
  end subroutine errors
end program f_rma
