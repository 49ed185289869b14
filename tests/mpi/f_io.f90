! SPDX-License-Identifier: MIT
! f_io.f90 - parallel I/O from Fortran through the mpi module: a file
! opened on MPI_COMM_WORLD, each rank's rows of a global array written and
! read back collectively (MPI_FILE_WRITE_AT_ALL, MPI_FILE_READ_AT_ALL, a
! split MPI_FILE_READ_ALL_BEGIN/END) through an MPI_TYPE_CREATE_SUBARRAY
! view, the whole array read back independently; MPI_FILE_GET_VIEW (the
! datarep string), MPI_FILE_GET_BYTE_OFFSET, MPI_FILE_GET_SIZE; the
! individual file pointer (MPI_FILE_WRITE, MPI_FILE_READ, MPI_FILE_SEEK
! with MPI_SEEK_SET, MPI_SEEK_CUR and MPI_SEEK_END); MPI_FILE_IWRITE_AT and
! MPI_FILE_IREAD_AT completed by MPI_WAIT; the shared file pointer
! (MPI_FILE_WRITE_ORDERED, MPI_FILE_SEEK_SHARED, MPI_FILE_READ_ORDERED) on
! an MPI_MODE_DELETE_ON_CLOSE file; a data representation of Fortran
! conversion functions (MPI_REGISTER_DATAREP); the file's amode, group,
! atomicity and type extent; a Fortran file error handler; and the open of
! a missing file (MPI_ERR_NO_SUCH_FILE under the default MPI_ERRORS_RETURN).
! The files are made in $TMPDIR (else the current directory).
module f_io_fns
  use mpi
  implicit none
  integer :: errh_calls = 0, errh_file = -1, errh_code = -1
  integer :: conversions = 0
contains
  subroutine file_errh(file, code)
    integer :: file, code
    errh_calls = errh_calls + 1
    errh_file = file
    errh_code = code
  end subroutine file_errh

  ! The representation "f_io_rep": an INTEGER is stored plus extra_state.
  subroutine rep_read(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    integer :: datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: i
    conversions = conversions + 1
    ierror = MPI_ERR_CONVERSION
    if (datatype /= MPI_INTEGER .or. position < 0) return
    do i = 1, count
      userbuf(i) = filebuf(i) - int(extra)
    end do
    ierror = MPI_SUCCESS
  end subroutine rep_read

  subroutine rep_write(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*)
    integer :: datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: i
    conversions = conversions + 1
    ierror = MPI_ERR_CONVERSION
    if (datatype /= MPI_INTEGER .or. position < 0) return
    do i = 1, count
      filebuf(i) = userbuf(i) + int(extra)
    end do
    ierror = MPI_SUCCESS
  end subroutine rep_write

  subroutine rep_extent(datatype, extent, extra, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra
    ierror = MPI_ERR_CONVERSION
    if (datatype /= MPI_INTEGER .or. extra /= 7) return
    extent = 4
    ierror = MPI_SUCCESS
  end subroutine rep_extent
end module f_io_fns

program f_io
  use mpi
  use f_io_fns
  implicit none
  ! Rows of the global array per rank, its columns.
  integer, parameter :: k = 2, m = 3
  integer :: ierr, rank, nproc
  character(len=512) :: path
  ! Byte offsets of the file's regions: the global array, then 4 INTEGERs
  ! per rank for the individual pointer, the nonblocking calls, the datarep.
  integer(kind=MPI_OFFSET_KIND) :: base_array, base_ind, base_nb, base_rep

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  base_array = 0
  base_ind = base_array + 4 * k * m * nproc
  base_nb = base_ind + 16 * nproc
  base_rep = base_nb + 16 * nproc
  call file_name()

  call missing_file()
  call subarray_view()
  call individual_pointer()
  call nonblocking()
  call datarep()
  call file_properties()
  call shared_pointer()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'File_delete', ierr)
  end if
  if (rank == 0) print '(a)', 'f_io: ok'
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what, val)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: val
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,3a,i0)') 'f_io: rank ', rank, ': failed: ', what, ': value ', val
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  ! A name of rank 0's making, the same on every rank: $TMPDIR/f_io.<np>.<clock>.
  subroutine file_name()
    character(len=400) :: dir
    integer :: st, n
    integer(kind=8) :: clock
    if (rank == 0) then
      call get_environment_variable('TMPDIR', dir, n, st)
      if (st /= 0 .or. n == 0) dir = '.'
      call system_clock(clock)
      write (path, '(2a,i0,a,i0)') trim(dir), '/f_io.', nproc, '.', clock
    end if
    call MPI_Bcast(path, len(path), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'Bcast of the file name', ierr)
  end subroutine file_name

  subroutine open_file(amode, fh)
    integer, intent(in) :: amode
    integer, intent(out) :: fh
    call MPI_File_open(MPI_COMM_WORLD, trim(path), amode, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'File_open', ierr)
  end subroutine open_file

  subroutine close_file(fh)
    integer, intent(inout) :: fh
    call MPI_File_close(fh, ierr)
    call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'File_close', ierr)
  end subroutine close_file

  ! Opening a file that is not there fails, MPI_ERRORS_RETURN being the
  ! default file error handler (MPI_FILE_NULL's).
  subroutine missing_file()
    integer :: fh, cls, errh, rc
    call MPI_File_get_errhandler(MPI_FILE_NULL, errh, ierr)
    call check(ierr == MPI_SUCCESS .and. errh == MPI_ERRORS_RETURN, &
               'File_get_errhandler of MPI_FILE_NULL', errh)
    call MPI_File_open(MPI_COMM_WORLD, trim(path) // '.missing', MPI_MODE_RDONLY, &
                       MPI_INFO_NULL, fh, rc)
    call check(rc /= MPI_SUCCESS, 'File_open of a missing file', rc)
    call MPI_Error_class(rc, cls, ierr)
    call check(cls == MPI_ERR_NO_SUCH_FILE, 'the error class of a missing file', cls)
  end subroutine missing_file

  ! Rank r owns rows r*k+1..r*k+k of an (nproc*k) x m array, in the file
  ! in Fortran order: element (i, j) is 1000 * j + i.
  subroutine subarray_view()
    integer :: fh, filetype, etype, ft2, i, j, n, st(MPI_STATUS_SIZE), req
    integer :: mine(k, m), back(k, m), whole(k * nproc, m)
    integer(kind=MPI_OFFSET_KIND) :: disp, off, size
    character(len=MPI_MAX_DATAREP_STRING) :: rep
    character(len=4) :: short

    do j = 1, m
      do i = 1, k
        mine(i, j) = 1000 * j + rank * k + i
      end do
    end do
    call MPI_Type_create_subarray(2, [k * nproc, m], [k, m], [rank * k, 0], &
                                  MPI_ORDER_FORTRAN, MPI_INTEGER, filetype, ierr)
    call MPI_Type_commit(filetype, ierr)
    call check(ierr == MPI_SUCCESS, 'Type_create_subarray', ierr)

    call open_file(ior(MPI_MODE_CREATE, MPI_MODE_RDWR), fh)
    disp = base_array
    call MPI_File_set_view(fh, disp, MPI_INTEGER, filetype, 'native   ', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_view with a subarray', ierr)
    off = 0
    call MPI_File_write_at_all(fh, off, mine, k * m, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_write_at_all', ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == k * m, 'the count of File_write_at_all', n)

    ! The view as set: the datarep string blank padded, or cut.
    rep = 'x'
    call MPI_File_get_view(fh, disp, etype, ft2, rep, ierr)
    call check(ierr == MPI_SUCCESS .and. disp == base_array, 'File_get_view', ierr)
    call check(etype == MPI_INTEGER, 'the etype of File_get_view', etype)
    call check(rep == 'native', 'the datarep of File_get_view: ' // trim(rep), len_trim(rep))
    call check(ft2 /= MPI_DATATYPE_NULL .and. ft2 /= MPI_INTEGER, &
               'the filetype of File_get_view', ft2)
    call MPI_Type_size(ft2, n, ierr)
    call check(n == 4 * k * m, 'the size of the filetype of File_get_view', n)
    call MPI_Type_free(ft2, ierr)
    call MPI_File_get_view(fh, disp, etype, ft2, short, ierr)
    call check(ierr == MPI_SUCCESS .and. short == 'nati', 'File_get_view into 4 characters', ierr)
    call MPI_Type_free(ft2, ierr)

    ! Offset 0 of the view is the rank's first row, in the first column.
    off = 0
    call MPI_File_get_byte_offset(fh, off, disp, ierr)
    call check(ierr == MPI_SUCCESS .and. disp == base_array + 4 * k * rank, &
               'File_get_byte_offset of 0', int(disp))
    off = k
    call MPI_File_get_byte_offset(fh, off, disp, ierr)
    call check(disp == base_array + 4 * k * (nproc + rank), 'File_get_byte_offset of k', &
               int(disp))

    back = -1
    off = 0
    call MPI_File_read_at_all(fh, off, back, k * m, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_read_at_all', ierr)
    call check(all(back == mine), 'the rows read back by File_read_at_all', back(1, 1))

    ! A split collective read through the individual pointer (at 0).
    back = -1
    call MPI_File_read_all_begin(fh, back, k * m, MPI_INTEGER, ierr)
    call check(ierr == MPI_SUCCESS, 'File_read_all_begin', ierr)
    call MPI_File_read_all_end(fh, back, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_read_all_end', ierr)
    call check(all(back == mine), 'the rows read back by File_read_all_begin/end', back(1, 1))
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == k * m, 'the count of File_read_all_end', n)

    ! The whole array as the file has it.
    disp = base_array
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_view of INTEGERs', ierr)
    whole = -1
    off = 0
    call MPI_File_read_at(fh, off, whole, k * m * nproc, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'File_read_at of the whole array', ierr)
    do j = 1, m
      do i = 1, k * nproc
        call check(whole(i, j) == 1000 * j + i, 'an element of the whole array', whole(i, j))
      end do
    end do
    call MPI_File_get_size(fh, size, ierr)
    call check(ierr == MPI_SUCCESS .and. size == base_ind, 'File_get_size', int(size))

    ! A nonblocking collective read of the same.
    whole = -1
    call MPI_File_iread_at_all(fh, off, whole, k * m * nproc, MPI_INTEGER, req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'File_iread_at_all', ierr)
    call MPI_Wait(req, st, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'Wait of File_iread_at_all', ierr)
    call check(whole(k * nproc, m) == 1000 * m + k * nproc, 'File_iread_at_all''s data', &
               whole(k * nproc, m))

    call close_file(fh)
    call MPI_Type_free(filetype, ierr)
  end subroutine subarray_view

  ! Each rank's 4 INTEGERs at base_ind, through its individual pointer.
  subroutine individual_pointer()
    integer :: fh, v(4), w(4), st(MPI_STATUS_SIZE), n
    integer(kind=MPI_OFFSET_KIND) :: disp, pos, off, size

    call open_file(MPI_MODE_RDWR, fh)
    disp = base_ind + 16 * rank
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_view of the individual region', ierr)
    v = [1, 2, 3, 4] + 10 * rank
    call MPI_File_write(fh, v, 4, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_write', ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == 4, 'the count of File_write', n)
    call MPI_File_get_position(fh, pos, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 4, 'File_get_position after File_write', int(pos))

    off = 1
    call MPI_File_seek(fh, off, MPI_SEEK_SET, ierr)
    call check(ierr == MPI_SUCCESS, 'File_seek MPI_SEEK_SET', ierr)
    w = -1
    call MPI_File_read(fh, w, 2, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS .and. w(1) == v(2) .and. w(2) == v(3), 'File_read', w(1))
    call MPI_File_get_position(fh, pos, ierr)
    call check(pos == 3, 'File_get_position after File_read', int(pos))
    off = -3
    call MPI_File_seek(fh, off, MPI_SEEK_CUR, ierr)
    call check(ierr == MPI_SUCCESS, 'File_seek MPI_SEEK_CUR', ierr)
    call MPI_File_read(fh, w, 1, MPI_INTEGER, st, ierr)
    call check(w(1) == v(1), 'File_read after MPI_SEEK_CUR', w(1))

    ! Every rank's data in the file: the end is past the last rank's.
    call MPI_File_sync(fh, ierr)
    call check(ierr == MPI_SUCCESS, 'File_sync', ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_File_get_size(fh, size, ierr)
    call check(size == base_nb, 'File_get_size after the individual writes', int(size))
    off = 0
    call MPI_File_seek(fh, off, MPI_SEEK_END, ierr)
    call check(ierr == MPI_SUCCESS, 'File_seek MPI_SEEK_END', ierr)
    call MPI_File_get_position(fh, pos, ierr)
    call check(pos == 4 * (nproc - rank), 'File_get_position at MPI_SEEK_END', int(pos))
    call close_file(fh)
  end subroutine individual_pointer

  ! MPI_FILE_IWRITE_AT and MPI_FILE_IREAD_AT under the default view (bytes).
  subroutine nonblocking()
    integer :: fh, req, st(MPI_STATUS_SIZE), n
    integer, asynchronous :: v(4), w(4)
    integer(kind=MPI_OFFSET_KIND) :: off

    call open_file(MPI_MODE_RDWR, fh)
    v = [5, 6, 7, 8] * (rank + 1)
    off = base_nb + 16 * rank
    call MPI_File_iwrite_at(fh, off, v, 4, MPI_INTEGER, req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'File_iwrite_at', ierr)
    call MPI_Wait(req, st, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'Wait of File_iwrite_at', ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == 4, 'the count of File_iwrite_at', n)
    w = -1
    call MPI_File_iread_at(fh, off, w, 4, MPI_INTEGER, req, ierr)
    call check(ierr == MPI_SUCCESS, 'File_iread_at', ierr)
    call MPI_Wait(req, st, ierr)
    call check(ierr == MPI_SUCCESS .and. all(w == v), 'File_iread_at''s data', w(1))
    call close_file(fh)
  end subroutine nonblocking

  ! "f_io_rep" stores v + 7: read back as is through "native".
  subroutine datarep()
    integer :: fh, v(4), w(4), etype, ft
    integer(kind=MPI_OFFSET_KIND) :: disp, off
    integer(kind=MPI_ADDRESS_KIND) :: extra, ext
    character(len=MPI_MAX_DATAREP_STRING) :: rep

    extra = 7
    call MPI_Register_datarep('f_io_rep', rep_read, rep_write, rep_extent, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'Register_datarep', ierr)
    call MPI_Register_datarep('f_io_null', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                              rep_extent, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'Register_datarep with MPI_CONVERSION_FN_NULL', ierr)

    call open_file(MPI_MODE_RDWR, fh)
    disp = base_rep + 16 * rank
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'f_io_rep', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_view with f_io_rep', ierr)
    call MPI_File_get_view(fh, disp, etype, ft, rep, ierr)
    call check(ierr == MPI_SUCCESS .and. rep == 'f_io_rep', 'File_get_view''s datarep: ' // &
               trim(rep), len_trim(rep))
    call MPI_File_get_type_extent(fh, MPI_INTEGER, ext, ierr)
    call check(ierr == MPI_SUCCESS .and. ext == 4, 'File_get_type_extent in f_io_rep', int(ext))
    v = [1, 2, 3, 4] * (rank + 3)
    off = 0
    call MPI_File_write_at(fh, off, v, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'File_write_at in f_io_rep', ierr)
    call check(conversions > 0, 'the write conversion function was called', conversions)
    w = -1
    call MPI_File_read_at(fh, off, w, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(w == v), 'File_read_at in f_io_rep', w(1))
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    w = -1
    call MPI_File_read_at(fh, off, w, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(w == v + 7), 'the bytes f_io_rep wrote', w(1))
    call close_file(fh)
  end subroutine datarep

  ! The file's amode, group, atomicity, and a Fortran file error handler.
  subroutine file_properties()
    integer :: fh, amode, group, wgroup, res, errh, errh2
    logical :: flag

    call open_file(MPI_MODE_RDONLY, fh)
    call MPI_File_get_amode(fh, amode, ierr)
    call check(ierr == MPI_SUCCESS .and. amode == MPI_MODE_RDONLY, 'File_get_amode', amode)
    call MPI_File_get_group(fh, group, ierr)
    call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
    call MPI_Group_compare(group, wgroup, res, ierr)
    call check(res == MPI_IDENT, 'File_get_group', res)
    call MPI_Group_free(group, ierr)
    call MPI_Group_free(wgroup, ierr)
    call MPI_File_set_atomicity(fh, .true., ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_atomicity', ierr)
    call MPI_File_get_atomicity(fh, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag, 'File_get_atomicity', ierr)

    call MPI_File_create_errhandler(file_errh, errh, ierr)
    call check(ierr == MPI_SUCCESS .and. errh /= MPI_ERRHANDLER_NULL, &
               'File_create_errhandler', ierr)
    call MPI_File_set_errhandler(fh, errh, ierr)
    call check(ierr == MPI_SUCCESS, 'File_set_errhandler', ierr)
    call MPI_File_get_errhandler(fh, errh2, ierr)
    call check(ierr == MPI_SUCCESS .and. errh2 == errh, 'File_get_errhandler', errh2)
    call MPI_Errhandler_free(errh2, ierr)
    call MPI_File_call_errhandler(fh, MPI_ERR_OTHER, ierr)
    call check(errh_calls == 1 .and. errh_file == fh .and. errh_code == MPI_ERR_OTHER, &
               'the Fortran file error handler', errh_code)
    call MPI_Errhandler_free(errh, ierr)
    call close_file(fh)
  end subroutine file_properties

  ! Rank r writes r + 1 INTEGERs r in rank order through the shared file
  ! pointer of a second file, deleted on close.
  subroutine shared_pointer()
    integer :: fh, i, n, v(nproc), w(nproc), st(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: pos, off, size
    character(len=len(path) + 7) :: path2
    logical :: there

    path2 = trim(path) // '.shared'
    call MPI_File_open(MPI_COMM_WORLD, trim(path2), ior(ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                       MPI_MODE_DELETE_ON_CLOSE), MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 'File_open MPI_MODE_DELETE_ON_CLOSE', ierr)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                           MPI_INFO_NULL, ierr)
    v = rank
    call MPI_File_write_ordered(fh, v, rank + 1, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_write_ordered', ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call check(n == rank + 1, 'the count of File_write_ordered', n)
    call MPI_File_get_position_shared(fh, pos, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == nproc * (nproc + 1) / 2, &
               'File_get_position_shared', int(pos))
    call MPI_File_get_size(fh, size, ierr)
    call check(size == 4 * nproc * (nproc + 1) / 2, 'File_get_size after File_write_ordered', &
               int(size))

    off = 0
    call MPI_File_seek_shared(fh, off, MPI_SEEK_SET, ierr)
    call check(ierr == MPI_SUCCESS, 'File_seek_shared', ierr)
    w = -1
    call MPI_File_read_ordered(fh, w, rank + 1, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS, 'File_read_ordered', ierr)
    do i = 1, rank + 1
      call check(w(i) == rank, 'File_read_ordered''s data', w(i))
    end do
    call check(all(w(rank + 2:) == -1), 'File_read_ordered read too much', rank)
    call close_file(fh)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    inquire (file=trim(path2), exist=there)
    call check(.not. there, 'the MPI_MODE_DELETE_ON_CLOSE file is gone', 0)
  end subroutine shared_pointer
end program f_io
