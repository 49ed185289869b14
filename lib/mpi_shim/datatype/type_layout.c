/* SPDX-License-Identifier: MIT */
/*
 * The layout engine of the datatypes: building and normalising layout trees
 * (type_layout.h) and copying any byte range of a packed stream to or from
 * the memory a layout describes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "type_layout.h"

static void layout_set_empty(struct mpi_shim_layout *n)
{
	memset(n, 0, sizeof(*n));
	n->count = 1;
}

int mpi_shim_layout_block(struct mpi_shim_layout *out, int64_t disp, uint64_t len)
{
	layout_set_empty(out);
	if (len) {
		out->disp = disp;
		out->blen = len;
	}
	return 0;
}

void mpi_shim_layout_free(struct mpi_shim_layout *n)
{
	uint32_t i;

	for (i = 0; i < n->nchild; i++)
		mpi_shim_layout_free(&n->child[i]);
	free(n->child);
	layout_set_empty(n);
}

int mpi_shim_layout_copy(struct mpi_shim_layout *out, const struct mpi_shim_layout *src)
{
	struct mpi_shim_layout copy = *src;
	uint32_t i;

	if (src->nchild) {
		copy.child = calloc(src->nchild, sizeof(*copy.child));
		if (!copy.child)
			return -ENOMEM;
		for (i = 0; i < src->nchild; i++) {
			if (mpi_shim_layout_copy(&copy.child[i], &src->child[i]) < 0) {
				copy.nchild = i;
				mpi_shim_layout_free(&copy);
				return -ENOMEM;
			}
		}
	}
	*out = copy;
	return 0;
}

/*
 * A child that is a plain list (one iteration of several children) is
 * replaced by its children, so that lists stay flat and blocks that touch
 * across what were separate types can merge.  Without memory for the
 * larger list, the node stays as it is (still correct, only less flat).
 */
static void layout_splice(struct mpi_shim_layout *n)
{
	struct mpi_shim_layout *list;
	uint64_t total = 0;
	uint32_t i, j, k = 0;

	for (i = 0; i < n->nchild; i++)
		total += n->child[i].count == 1 && n->child[i].nchild ? n->child[i].nchild : 1;
	if (total == n->nchild || total > UINT32_MAX)
		return;
	list = calloc(total, sizeof(*list));
	if (!list)
		return;
	for (i = 0; i < n->nchild; i++) {
		struct mpi_shim_layout *c = &n->child[i];

		if (c->count != 1 || !c->nchild) {
			list[k++] = *c;
			continue;
		}
		for (j = 0; j < c->nchild; j++) {
			list[k] = c->child[j];
			list[k++].disp += c->disp;
		}
		free(c->child);
	}
	free(n->child);
	n->child = list;
	n->nchild = k;
}

/*
 * Bring a node whose children are already normal into normal form:
 * - children that are plain lists are spliced in (layout_splice);
 * - touching single blocks among the children are merged (the packed order
 *   is unchanged because they are consecutive in it);
 * - a node with one child is folded into it when their loops compose into
 *   one (the child's iterations exactly fill the parent's stride);
 * - a leaf whose iterations abut is a single block.
 * Children never hold the empty layout (the builders drop them).
 */
static void layout_normalise(struct mpi_shim_layout *n)
{
	uint64_t pre = 0;
	uint32_t i, k;

	if (n->nchild)
		layout_splice(n);
	if (n->nchild) {
		for (i = 1, k = 0; i < n->nchild; i++) {
			struct mpi_shim_layout *a = &n->child[k], *b = &n->child[i];

			if (!a->nchild && !b->nchild && a->count == 1 && b->count == 1 &&
			    a->disp + (int64_t)a->blen == b->disp) {
				a->blen += b->blen;
				continue;
			}
			n->child[++k] = *b;
		}
		n->nchild = k + 1;
		for (i = 0; i < n->nchild; i++) {
			n->child[i].pre = pre;
			pre += mpi_shim_layout_bytes(&n->child[i]);
		}
		n->blen = pre;
	}
	if (n->nchild == 1) {
		struct mpi_shim_layout *x = n->child, folded;

		if (n->count == 1) {
			folded = *x;
			folded.disp += n->disp;
			folded.pre = n->pre;
		} else if (x->count == 1 || n->stride == (int64_t)x->count * x->stride) {
			folded = *x;
			folded.disp += n->disp;
			folded.pre = n->pre;
			folded.count = n->count * x->count;
			if (x->count == 1)
				folded.stride = n->stride;
		} else {
			goto leaf;
		}
		free(n->child);
		*n = folded;
	}
leaf:
	if (!n->nchild && n->count > 1 && n->stride == (int64_t)n->blen) {
		n->blen *= n->count;
		n->count = 1;
	}
	if (n->count == 1)
		n->stride = 0;
}

int mpi_shim_layout_repeat(struct mpi_shim_layout *out, const struct mpi_shim_layout *body,
			   uint64_t count, int64_t stride, int64_t disp)
{
	struct mpi_shim_layout n;
	uint64_t bytes = mpi_shim_layout_bytes(body), total;

	if (!count || !bytes)
		return mpi_shim_layout_block(out, 0, 0);
	if (__builtin_mul_overflow(count, bytes, &total) || total > INT64_MAX)
		return -EOVERFLOW;
	memset(&n, 0, sizeof(n));
	n.child = calloc(1, sizeof(*n.child));
	if (!n.child)
		return -ENOMEM;
	if (mpi_shim_layout_copy(n.child, body) < 0) {
		free(n.child);
		return -ENOMEM;
	}
	n.child->pre = 0;
	n.nchild = 1;
	n.disp = disp;
	n.count = count;
	n.stride = stride;
	layout_normalise(&n);
	*out = n;
	return 0;
}

int mpi_shim_layout_concat(struct mpi_shim_layout *out, struct mpi_shim_layout *parts, size_t n)
{
	struct mpi_shim_layout node;
	uint64_t total = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		uint64_t b = mpi_shim_layout_bytes(&parts[i]);

		if (__builtin_add_overflow(total, b, &total) || total > INT64_MAX)
			goto free_parts;
		if (b)
			k++;
	}
	if (!k)
		return mpi_shim_layout_block(out, 0, 0);
	if (k > UINT32_MAX)
		goto free_parts;
	memset(&node, 0, sizeof(node));
	node.count = 1;
	node.child = calloc(k, sizeof(*node.child));
	if (!node.child) {
		for (i = 0; i < n; i++)
			mpi_shim_layout_free(&parts[i]);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (mpi_shim_layout_bytes(&parts[i]))
			node.child[node.nchild++] = parts[i];
		else
			mpi_shim_layout_free(&parts[i]);
	}
	layout_normalise(&node);
	*out = node;
	return 0;

free_parts:
	for (i = 0; i < n; i++)
		mpi_shim_layout_free(&parts[i]);
	return -EOVERFLOW;
}

void mpi_shim_layout_stats(const struct mpi_shim_layout *n, uint64_t *nodes, uint64_t *blocks)
{
	uint64_t sub_nodes = 0, sub_blocks = 0;
	uint32_t i;

	if (!mpi_shim_layout_bytes(n)) {
		*nodes = 0;
		*blocks = 0;
		return;
	}
	if (!n->nchild) {
		*nodes = 1;
		*blocks = n->count;
		return;
	}
	for (i = 0; i < n->nchild; i++) {
		uint64_t a, b;

		mpi_shim_layout_stats(&n->child[i], &a, &b);
		sub_nodes += a;
		sub_blocks += b;
	}
	*nodes = 1 + sub_nodes;
	*blocks = n->count * sub_blocks;
}

static int for_each_block(const struct mpi_shim_layout *n, int64_t base,
			  int (*fn)(void *arg, int64_t disp, uint64_t len), void *arg)
{
	uint64_t it;
	uint32_t i;
	int rc;

	for (it = 0; it < n->count; it++) {
		int64_t origin = base + n->disp + (int64_t)it * n->stride;

		if (!n->nchild) {
			rc = fn(arg, origin, n->blen);
			if (rc)
				return rc;
			continue;
		}
		for (i = 0; i < n->nchild; i++) {
			rc = for_each_block(&n->child[i], origin, fn, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int mpi_shim_layout_for_each_block(const struct mpi_shim_layout *n,
				   int (*fn)(void *arg, int64_t disp, uint64_t len), void *arg)
{
	if (!mpi_shim_layout_bytes(n))
		return 0;
	return for_each_block(n, 0, fn, arg);
}

/* --- Copying a range of the packed stream --- */

struct layout_walk {
	char *packed; /* next byte of the packed stream */
	uint64_t rem; /* bytes still to copy */
	int unpack;
};

static inline void walk_copy(struct layout_walk *w, char *mem, uint64_t len)
{
	if (w->unpack)
		memcpy(mem, w->packed, len);
	else
		memcpy(w->packed, mem, len);
	w->packed += len;
	w->rem -= len;
}

/*
 * Whole blocks of a leaf: the common element sizes get a copy of constant
 * size the compiler turns into a load and a store.
 */
static char *walk_blocks(struct layout_walk *w, char *mem, int64_t stride, uint64_t n,
			 uint64_t blen)
{
	uint64_t i;

#define WALK_FIXED(sz)                                                                             \
	do {                                                                                       \
		if (w->unpack)                                                                     \
			for (i = 0; i < n; i++, mem += stride, w->packed += (sz))                  \
				memcpy(mem, w->packed, (sz));                                      \
		else                                                                               \
			for (i = 0; i < n; i++, mem += stride, w->packed += (sz))                  \
				memcpy(w->packed, mem, (sz));                                      \
	} while (0)

	switch (blen) {
	case 4:
		WALK_FIXED(4);
		break;
	case 8:
		WALK_FIXED(8);
		break;
	case 16:
		WALK_FIXED(16);
		break;
	default:
		WALK_FIXED(blen);
		break;
	}
#undef WALK_FIXED
	w->rem -= n * blen;
	return mem;
}

static void walk_node(const struct mpi_shim_layout *n, char *base, uint64_t skip,
		      struct layout_walk *w);

/* One iteration of a node with children, from byte `skip` of it. */
static void walk_children(const struct mpi_shim_layout *n, char *origin, uint64_t skip,
			  struct layout_walk *w)
{
	uint32_t lo = 0, hi = n->nchild - 1, i;

	if (!skip) {
		/* From the start (every iteration but the first of a walk): the
		 * single blocks among the children are copied here, the rest
		 * recursively. */
		for (i = 0; i < n->nchild && w->rem; i++) {
			const struct mpi_shim_layout *c = &n->child[i];

			if (!c->nchild && c->count == 1 && w->rem >= c->blen)
				walk_copy(w, origin + c->disp, c->blen);
			else
				walk_node(c, origin, 0, w);
		}
		return;
	}
	/* The last child that starts at or before skip. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (n->child[mid].pre <= skip)
			lo = mid;
		else
			hi = mid - 1;
	}
	walk_node(&n->child[lo], origin, skip - n->child[lo].pre, w);
	for (i = lo + 1; i < n->nchild && w->rem; i++)
		walk_node(&n->child[i], origin, 0, w);
}

static void walk_node(const struct mpi_shim_layout *n, char *base, uint64_t skip,
		      struct layout_walk *w)
{
	uint64_t it = skip / n->blen, off = skip % n->blen;
	char *mem = base + n->disp + (int64_t)it * n->stride;

	if (!n->nchild) {
		uint64_t whole;

		if (off) {
			uint64_t len = n->blen - off < w->rem ? n->blen - off : w->rem;

			walk_copy(w, mem + off, len);
			mem += n->stride;
			it++;
		}
		whole = w->rem / n->blen;
		if (whole > n->count - it)
			whole = n->count - it;
		mem = walk_blocks(w, mem, n->stride, whole, n->blen);
		it += whole;
		if (w->rem && it < n->count)
			walk_copy(w, mem, w->rem);
		return;
	}
	for (; it < n->count && w->rem; it++, mem += n->stride, off = 0)
		walk_children(n, mem, off, w);
}

void mpi_shim_layout_copy_bytes(const struct mpi_shim_layout *n, uint64_t count, int64_t extent,
				void *buf, uint64_t skip, void *packed, uint64_t len, int unpack)
{
	struct layout_walk w = {.packed = packed, .rem = len, .unpack = unpack};
	uint64_t one = mpi_shim_layout_bytes(n), it, off;
	char *origin;

	if (!len || !one)
		return;
	it = skip / one;
	off = skip % one;
	/* Address arithmetic on integers: displacements may point anywhere. */
	origin = (char *)((uintptr_t)buf + (uintptr_t)((int64_t)it * extent));
	for (; it < count && w.rem; it++, off = 0) {
		walk_node(n, origin, off, &w);
		origin = (char *)((uintptr_t)origin + (uintptr_t)extent);
	}
}
