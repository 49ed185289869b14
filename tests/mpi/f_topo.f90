! SPDX-License-Identifier: MIT
! f_topo.f90 - virtual topologies from Fortran: MPI_DIMS_CREATE, a 2-D
! Cartesian grid periodic in its first dimension only (LOGICAL periods in
! and out), coordinates, MPI_CART_SHIFT at a periodic and a closed edge,
! MPI_CART_SUB with a LOGICAL remain_dims, MPI_NEIGHBOR_ALLGATHER on the
! grid, a ring as a distributed graph with MPI_UNWEIGHTED and with weights
! (MPI_NEIGHBOR_ALLTOALLW, whose datatype arrays follow the degrees),
! MPI_WEIGHTS_EMPTY, and error classes under MPI_ERRORS_RETURN.
program f_topo
  use mpi
  implicit none
  integer :: ierr, rank, nproc

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  call cart()
  call ring()
  call errors()

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (*, '(a,i0,2a)') 'f_topo: rank ', rank, ': failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

  integer function err_class(code)
    integer, intent(in) :: code
    integer :: e
    call MPI_Error_class(code, err_class, e)
  end function err_class

  subroutine cart()
    integer :: dims(2), gdims(2), coords(2), c(2), cc, r, src, dst, kind, nd, sub, n, i
    integer :: nb(4), expect(4)
    logical :: periods(2), gperiods(2)
    dims = 0
    call MPI_Dims_create(nproc, 2, dims, ierr)
    call check(ierr == MPI_SUCCESS .and. dims(1) * dims(2) == nproc .and. dims(1) >= dims(2), &
               'Dims_create')
    periods = [.true., .false.]
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cc, ierr)
    call check(ierr == MPI_SUCCESS .and. cc /= MPI_COMM_NULL, 'Cart_create')
    call MPI_Topo_test(cc, kind, ierr)
    call check(kind == MPI_CART, 'Topo_test MPI_CART')
    call MPI_Topo_test(MPI_COMM_WORLD, kind, ierr)
    call check(kind == MPI_UNDEFINED, 'Topo_test of MPI_COMM_WORLD')
    call MPI_Cartdim_get(cc, nd, ierr)
    call check(nd == 2, 'Cartdim_get')
    gperiods = [.false., .true.]
    call MPI_Cart_get(cc, 2, gdims, gperiods, coords, ierr)
    call check(ierr == MPI_SUCCESS .and. all(gdims == dims), 'Cart_get dims')
    call check(gperiods(1) .and. .not. gperiods(2), 'Cart_get periods (LOGICAL)')
    ! Row-major: rank = coords(1) * dims(2) + coords(2).
    call check(rank == coords(1) * dims(2) + coords(2), 'Cart_get coords')
    call MPI_Cart_coords(cc, rank, 2, c, ierr)
    call check(all(c == coords), 'Cart_coords')
    call MPI_Cart_rank(cc, coords, r, ierr)
    call check(r == rank, 'Cart_rank')
    ! A periodic coordinate out of range wraps.
    call MPI_Cart_rank(cc, [coords(1) + dims(1), coords(2)], r, ierr)
    call check(ierr == MPI_SUCCESS .and. r == rank, 'Cart_rank wraps a periodic coordinate')

    call MPI_Cart_shift(cc, 0, 1, src, dst, ierr)
    call check(src == mod(coords(1) + dims(1) - 1, dims(1)) * dims(2) + coords(2) .and. &
               dst == mod(coords(1) + 1, dims(1)) * dims(2) + coords(2), 'Cart_shift periodic')
    expect(1:2) = [src, dst]
    call MPI_Cart_shift(cc, 1, 1, src, dst, ierr)
    if (coords(2) == 0) then
      call check(src == MPI_PROC_NULL, 'Cart_shift closed edge (source)')
    else
      call check(src == rank - 1, 'Cart_shift closed (source)')
    end if
    if (coords(2) == dims(2) - 1) then
      call check(dst == MPI_PROC_NULL, 'Cart_shift closed edge (dest)')
    else
      call check(dst == rank + 1, 'Cart_shift closed (dest)')
    end if
    expect(3:4) = [src, dst]

    ! Each neighbour's rank, in the order -1, +1 of each dimension;
    ! nothing where the neighbour is MPI_PROC_NULL.
    nb = -7
    call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, cc, ierr)
    call check(ierr == MPI_SUCCESS, 'Neighbor_allgather')
    do i = 1, 4
      if (expect(i) == MPI_PROC_NULL) expect(i) = -7
    end do
    call check(all(nb == expect), 'Neighbor_allgather data')

    ! Keep the second dimension: the rows.
    call MPI_Cart_sub(cc, [.false., .true.], sub, ierr)
    call check(ierr == MPI_SUCCESS, 'Cart_sub')
    call MPI_Comm_size(sub, n, ierr)
    call MPI_Comm_rank(sub, r, ierr)
    call check(n == dims(2) .and. r == coords(2), 'Cart_sub size and rank')
    call MPI_Cart_get(sub, 1, gdims, gperiods, c, ierr)
    call check(gdims(1) == dims(2) .and. .not. gperiods(1) .and. c(1) == coords(2), &
               'Cart_get of the sub-grid')
    call MPI_Comm_free(sub, ierr)
    call MPI_Comm_free(cc, ierr)
  end subroutine cart

  subroutine ring()
    integer :: g, w, left, right, indeg, outdeg, src(1), dst(1), sw(1), dw(1), v(1)
    integer :: types(1), counts(1), n
    integer(kind=MPI_ADDRESS_KIND) :: displs(1)
    logical :: weighted
    left = mod(rank + nproc - 1, nproc)
    right = mod(rank + 1, nproc)
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, &
                                        [right], MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
    call check(ierr == MPI_SUCCESS, 'Dist_graph_create_adjacent unweighted')
    call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
    call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, &
               'Dist_graph_neighbors_count unweighted')
    call MPI_Neighbor_alltoall([rank * 3], 1, MPI_INTEGER, v, 1, MPI_INTEGER, g, ierr)
    call check(ierr == MPI_SUCCESS .and. v(1) == left * 3, 'Neighbor_alltoall on a ring')
    ! alltoallw: one datatype per neighbour, byte displacements.
    types = MPI_INTEGER
    counts = 1
    displs = 0
    v = -1
    call MPI_Neighbor_alltoallw([rank + 1000], counts, displs, types, v, counts, displs, types, &
                                g, ierr)
    call check(ierr == MPI_SUCCESS .and. v(1) == left + 1000, 'Neighbor_alltoallw')
    call MPI_Comm_free(g, ierr)

    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], [left + 10], 1, [right], &
                                        [rank + 10], MPI_INFO_NULL, .false., w, ierr)
    call check(ierr == MPI_SUCCESS, 'Dist_graph_create_adjacent weighted')
    call MPI_Dist_graph_neighbors_count(w, indeg, outdeg, weighted, ierr)
    call check(weighted, 'weighted')
    call MPI_Dist_graph_neighbors(w, 1, src, sw, 1, dst, dw, ierr)
    call check(ierr == MPI_SUCCESS .and. src(1) == left .and. dst(1) == right .and. &
               sw(1) == left + 10 .and. dw(1) == rank + 10, 'Dist_graph_neighbors weights')
    call MPI_Comm_free(w, ierr)

    ! No edges at all, weights empty: a weighted graph of degree 0.
    call MPI_Dist_graph_create(MPI_COMM_WORLD, 0, src, src, dst, MPI_WEIGHTS_EMPTY, &
                               MPI_INFO_NULL, .false., w, ierr)
    call check(ierr == MPI_SUCCESS, 'Dist_graph_create with MPI_WEIGHTS_EMPTY')
    call MPI_Dist_graph_neighbors_count(w, indeg, outdeg, weighted, ierr)
    call check(indeg == 0 .and. outdeg == 0, 'no edges')
    call MPI_Topo_test(w, n, ierr)
    call check(n == MPI_DIST_GRAPH, 'Topo_test MPI_DIST_GRAPH')
    call MPI_Comm_free(w, ierr)
  end subroutine ring

  subroutine errors()
    integer :: src, dst, cc, dims(2)
    ! No topology.
    call MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, src, dst, ierr)
    call check(err_class(ierr) == MPI_ERR_TOPOLOGY, 'Cart_shift without a topology')
    ! A negative dimension count.
    dims = 1
    call MPI_Cart_create(MPI_COMM_WORLD, -1, dims, [.false., .false.], .false., cc, ierr)
    call check(err_class(ierr) == MPI_ERR_DIMS, 'Cart_create with ndims -1')
    ! More processes asked than the communicator has.
    dims = [nproc + 1, 1]
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, [.false., .false.], .false., cc, ierr)
    call check(err_class(ierr) == MPI_ERR_TOPOLOGY, 'Cart_create larger than the communicator')
  end subroutine errors
end program f_topo
