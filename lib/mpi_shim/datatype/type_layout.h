/* SPDX-License-Identifier: MIT */
/*
 * The memory layout of a datatype, as the packing engine walks it.
 *
 * A layout is a tree of nodes.  A node is `count` iterations `stride` bytes
 * apart, starting `disp` bytes from the origin of its parent's iteration; one
 * iteration is either a single contiguous block of `blen` bytes (a leaf) or
 * the node's children, one after the other in packing order.  So the typemap
 * of any constructor nests without being expanded: a vector of a million
 * doubles is one leaf (count 1000000, blen 8), a struct of three fields is a
 * node with three children, and a vector of that struct is the same node with
 * a count.  Nodes are normalised as they are built (see type_layout.c):
 * blocks that touch are merged, a loop whose iterations abut becomes one
 * block, and loops of a single child are folded into it, so a layout that is
 * in fact one block of memory ends up a single leaf.
 *
 * Every node knows how many packed bytes precede it within its parent's
 * iteration (`pre`), so a walk can start at any byte of the packed stream by
 * descending the tree (division at loops, binary search among children)
 * instead of replaying everything before it.  That is what lets a message be
 * packed or unpacked in pieces through a bounded buffer.
 */
#ifndef MPI_SHIM_TYPE_LAYOUT_H
#define MPI_SHIM_TYPE_LAYOUT_H

#include <stdint.h>
#include <stddef.h>

struct mpi_shim_layout {
	int64_t disp;	 /* from the origin of the parent's iteration */
	uint64_t count;	 /* iterations */
	int64_t stride;	 /* bytes between the origins of two iterations */
	uint64_t blen;	 /* packed bytes of one iteration (never 0 below the root) */
	uint64_t pre;	 /* packed bytes before this node in the parent's iteration */
	uint32_t nchild; /* 0: one iteration is one block of blen bytes */
	struct mpi_shim_layout *child;
};

/* Packed bytes of the whole node. */
static inline uint64_t mpi_shim_layout_bytes(const struct mpi_shim_layout *n)
{
	return n->count * n->blen;
}

/* A leaf of `len` bytes at `disp` (len 0: the empty layout). */
int mpi_shim_layout_block(struct mpi_shim_layout *out, int64_t disp, uint64_t len);

/*
 * `count` copies of `body`, the i-th at disp + i * stride.  `body` is copied;
 * the result is normalised.
 */
int mpi_shim_layout_repeat(struct mpi_shim_layout *out, const struct mpi_shim_layout *body,
			   uint64_t count, int64_t stride, int64_t disp);

/*
 * The concatenation, in packing order, of `n` parts; parts[i] is moved into
 * the result (the caller must not free it afterwards, even on failure: the
 * parts are always consumed).  The result is normalised.
 */
int mpi_shim_layout_concat(struct mpi_shim_layout *out, struct mpi_shim_layout *parts, size_t n);

/* Deep copy. */
int mpi_shim_layout_copy(struct mpi_shim_layout *out, const struct mpi_shim_layout *src);

void mpi_shim_layout_free(struct mpi_shim_layout *n);

/* Nodes in the tree and contiguous blocks in memory (leaf iterations). */
void mpi_shim_layout_stats(const struct mpi_shim_layout *n, uint64_t *nodes, uint64_t *blocks);

/*
 * Copy bytes [skip, skip + len) of the packed stream of `count` copies of
 * the layout, `extent` bytes apart from `buf`, to `packed` (or from it when
 * `unpack`).  The caller has checked skip + len against the total size.
 */
void mpi_shim_layout_copy_bytes(const struct mpi_shim_layout *n, uint64_t count, int64_t extent,
				void *buf, uint64_t skip, void *packed, uint64_t len, int unpack);

/*
 * Call fn(arg, disp, len) for each contiguous block of one copy of the
 * layout, in packing order; stops early when fn returns non-zero and
 * returns that value.  For tests and debugging: it enumerates every block.
 */
int mpi_shim_layout_for_each_block(const struct mpi_shim_layout *n,
				   int (*fn)(void *arg, int64_t disp, uint64_t len), void *arg);

#endif
