/* SPDX-License-Identifier: MIT */
/*
 * topo.h - the virtual topology of a communicator (comm->topo), shared by
 * topo.c, which makes it, and coll_neighbor.c, which communicates along it.
 */
#ifndef MPI_SHIM_TOPO_H
#define MPI_SHIM_TOPO_H

#include <stddef.h>

struct mpi_shim_topo {
	int kind;            /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
	int ndims;           /* MPI_CART: dims, periods (0 or 1), coords of this process */
	int nnodes, nedges;  /* MPI_GRAPH: index[nnodes], edges[nedges] as given */
	int weighted;        /* MPI_DIST_GRAPH: created with weights */
	/*
	 * This process's neighbours, in the order of the neighbourhood
	 * collectives: in[] the sources, out[] the destinations, with their
	 * weights (1 when unweighted).  MPI_CART: for each dimension the -1
	 * then the +1 neighbour, MPI_PROC_NULL past a non-periodic edge.
	 * MPI_GRAPH: the node's neighbours, both ways.
	 */
	int nin, nout;
	int *dims, *periods, *coords;
	int *index, *edges;
	int *in, *inw, *out, *outw;
	size_t nints;        /* the arrays above, in ints[] */
	int ints[];
};

#endif /* MPI_SHIM_TOPO_H */
