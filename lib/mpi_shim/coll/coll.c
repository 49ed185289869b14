// SPDX-License-Identifier: MIT
/*
 * coll.c - the algorithms of the collectives and their blocking calls.
 *
 * Each algorithm builds, for the calling process, the schedule of one
 * collective (coll.h); the blocking call runs it to the end, the
 * non-blocking one (nbc.c) hands it to a request.  p is the size of the
 * communicator, r the caller's rank.
 *
 *   Barrier         dissemination of radix min(p, 8): ceil(log_8 p) rounds of
 *                   up to 7 empty messages
 *   Bcast           binomial tree from the root; 5 to 8 ranks, up to 256
 *                   bytes: the root sends to every other rank (one round);
 *                   from 512 KiB on, to 3 ranks or more, binomial scatter
 *                   then ring allgather; the blocking call on 2 ranks
 *                   sends its one message without a schedule (bcast_pair)
 *   Reduce          binomial tree towards the root, a rank taking the data
 *                   of all its children in one round up to 2 KiB (from 8
 *                   ranks on, a power of two, 8 KiB and a commutative
 *                   operation: Rabenseifner's reduce-scatter, then a gather
 *                   to the root); for a non-commutative operation the tree
 *                   is rooted at rank 0, so that every combination is of
 *                   neighbouring rank ranges in rank order, and rank 0
 *                   forwards the result to the root; the blocking call on
 *                   2 ranks sends or takes its one message without a
 *                   schedule (reduce_pair)
 *   Allreduce       3 to 8 ranks, up to 256 bytes: every rank sends its vector
 *                   to every other and combines all p in rank order (one
 *                   round); otherwise recursive doubling; from 8 KiB on,
 *                   for a commutative operation, Rabenseifner (reduce-scatter
 *                   by recursive halving, allgather by recursive doubling);
 *                   with p not a power of two, the first 2 * (p - 2^k) ranks
 *                   fold pairwise first and get the result back at the end
 *   Gather,         binomial tree of packed blocks up to 16 KiB in all (the
 *   Scatter         root handles log2(p) messages); above, and for the v
 *                   forms, the root posts every receive (or send) at once
 *   Allgather       3 to 8 ranks, blocks up to 256 bytes: every rank sends
 *                   its block to every other (one round); otherwise
 *                   recursive doubling for p a power of two, Bruck
 *                   otherwise: ceil(log2 p) rounds
 *   Allgatherv      ring: p - 1 rounds
 *   Alltoall(v,w)   pairwise exchange order, the sends and receives of up to
 *                   32 peers posted at once: ceil((p - 1) / 32) rounds
 *   Reduce_scatter  Reduce to rank 0, then Scatter(v)
 *   Scan, Exscan    recursive doubling (prefix)
 *
 * A communicator whose ranks span several clusters (bipconf(5), the
 * clusters joined by gateways) runs Barrier, and Bcast and commutative
 * Allreduce up to COLL_CLUSTER_BYTES, through each cluster's leader (its
 * lowest rank; for Bcast, the root in its own cluster): inside the
 * clusters first, then between the leaders, then inside again, so that
 * one message per pair of leaders crosses the gateways instead of one per
 * pair of ranks.  The leaders combine their clusters' vectors in cluster
 * order, each the same, so that every rank gets the same result.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "datatype.h"
#include "coll.h"

/* ------------------------------------------------------------------ */
/* Algorithms                                                          */
/* ------------------------------------------------------------------ */

/* Up to this many bytes, Bcast and Allreduce go through the clusters'
 * leaders when the ranks span several clusters (above, the usual trees
 * and rings, whose pieces pipeline through the gateways). */
#define COLL_CLUSTER_BYTES 65536

/* 1 if s's communicator spans several clusters and its steps are its own
 * (not an inter-communicator's local group's). */
static int by_cluster(const struct coll_sched *s)
{
	return s->comm->cluster && !s->on_local && !mpi_shim_is_inter(s->comm);
}

/* The leader of rank r's cluster: its lowest rank, or root in root's. */
static int cluster_leader(MPI_Comm c, int r, int root)
{
	int i;

	if (root >= 0 && c->cluster[root] == c->cluster[r])
		return root;
	for (i = 0; c->cluster[i] != c->cluster[r]; i++)
		;
	return i;
}

/* Barrier through the leaders: in, across, out. */
static void barrier_clusters(struct coll_sched *s)
{
	MPI_Comm c = s->comm;
	int p = c->size, r = c->rank, lead = cluster_leader(c, r, -1), i;

	if (r != lead) {
		coll_send(s, NULL, 0, MPI_BYTE, lead);
		coll_fence(s);
		coll_recv(s, NULL, 0, MPI_BYTE, lead);
		coll_fence(s);
		return;
	}
	for (i = 0; i < p; i++)
		if (i != r && c->cluster[i] == c->cluster[r])
			coll_recv(s, NULL, 0, MPI_BYTE, i);
	coll_fence(s);
	for (i = 0; i < p; i++)
		if (i != r && cluster_leader(c, i, -1) == i) {
			coll_send(s, NULL, 0, MPI_BYTE, i);
			coll_recv(s, NULL, 0, MPI_BYTE, i);
		}
	coll_fence(s);
	for (i = 0; i < p; i++)
		if (i != r && c->cluster[i] == c->cluster[r])
			coll_send(s, NULL, 0, MPI_BYTE, i);
	coll_fence(s);
}

/* Bcast through the leaders: the root to every other cluster's leader and
 * to its own cluster, each leader to its cluster. */
static void bcast_clusters(struct coll_sched *s, void *buf, int count, MPI_Datatype type,
			   int root)
{
	MPI_Comm c = s->comm;
	int p = c->size, r = c->rank, lead = cluster_leader(c, r, root), i;

	if (r != root) {
		coll_recv(s, buf, count, type, r == lead ? root : lead);
		coll_fence(s);
		if (r != lead)
			return;
	}
	for (i = 0; i < p; i++) {
		if (i == r)
			continue;
		if (c->cluster[i] == c->cluster[r] ||
		    (r == root && cluster_leader(c, i, root) == i))
			coll_send(s, buf, count, type, i);
	}
	coll_fence(s);
}

/* Allreduce (commutative) through the leaders: each takes its cluster's
 * vectors, the leaders exchange theirs and combine them in cluster order,
 * then each gives the result to its cluster. */
static void allreduce_clusters(struct coll_sched *s, void *rbuf, int count, MPI_Datatype type)
{
	MPI_Comm c = s->comm;
	int p = c->size, r = c->rank, lead = cluster_leader(c, r, -1), i, n = 0, nl = 0;
	char *in, *all, *acc;

	if (r != lead) {
		coll_send(s, rbuf, count, type, lead);
		coll_fence(s);
		coll_recv(s, rbuf, count, type, lead);
		coll_fence(s);
		return;
	}
	for (i = 0; i < p; i++) {
		n += i != r && c->cluster[i] == c->cluster[r];
		nl += cluster_leader(c, i, -1) == i;
	}
	in = n ? coll_tmp(s, (size_t)count * (size_t)n, type) : NULL;
	all = coll_tmp(s, (size_t)count * (size_t)nl, type);
	if ((n && !in) || !all)
		return;
	for (i = 0, n = 0; i < p; i++)
		if (i != r && c->cluster[i] == c->cluster[r])
			coll_recv(s, coll_at(in, (MPI_Aint)n++ * count, type), count, type, i);
	coll_fence(s);
	while (n-- > 0)
		coll_reduce(s, coll_at(in, (MPI_Aint)n * count, type), rbuf, count, type);
	for (i = 0, nl = 0; i < p; i++) {
		if (cluster_leader(c, i, -1) != i)
			continue;
		if (i == r) {
			coll_copy(s, rbuf, count, type, coll_at(all, (MPI_Aint)nl * count, type),
				  count, type);
		} else {
			coll_send(s, rbuf, count, type, i);
			coll_recv(s, coll_at(all, (MPI_Aint)nl * count, type), count, type, i);
		}
		nl++;
	}
	coll_fence(s);
	acc = coll_at(all, (MPI_Aint)(nl - 1) * count, type);
	for (i = nl - 2; i >= 0; i--)
		coll_reduce(s, coll_at(all, (MPI_Aint)i * count, type), acc, count, type);
	coll_copy(s, acc, count, type, rbuf, count, type);
	for (i = 0; i < p; i++)
		if (i != r && c->cluster[i] == c->cluster[r])
			coll_send(s, rbuf, count, type, i);
	coll_fence(s);
}

/* The most messages a barrier rank sends in one round, plus one. */
#define COLL_BARRIER_RADIX 8

/*
 * Dissemination of radix k (k = p up to COLL_BARRIER_RADIX ranks): in
 * the round of distance d (1, k, k^2, ...), a rank sends to r + j * d and
 * hears from r - j * d, for each j from 1 to k - 1 with j * d < p.  After
 * the round of d, a rank has heard, through chains of messages, from all
 * of r - (k * d - 1) .. r; the rounds end when that is everyone.  A
 * larger radix means fewer rounds, each of more messages posted at once:
 * a rank waits ceil(log_k p) times instead of ceil(log2 p), and with more
 * processes than cores each wait may cost a switch to another process.
 */
void coll_build_barrier(struct coll_sched *s)
{
	int p = s->comm->size, r = s->comm->rank, k, d, j;

	if (by_cluster(s)) {
		barrier_clusters(s);
		return;
	}
	k = p < COLL_BARRIER_RADIX ? p : COLL_BARRIER_RADIX;
	for (d = 1; d < p; d *= k) {
		for (j = 1; j < k && j * d < p; j++) {
			coll_send(s, NULL, 0, MPI_BYTE, (r + j * d) % p);
			coll_recv(s, NULL, 0, MPI_BYTE, (r - j * d + p) % p);
		}
		coll_fence(s);
	}
}

/*
 * From this many bytes on, a Bcast to 3 or more ranks scatters then
 * gathers (MPICH's long-message threshold too).  Below it the binomial
 * tree waits ceil(log2 p) times where the ring waits p - 1 more: on 4
 * and 8 ranks sharing 2 processors the tree took 24 and 56 us for 64 KiB
 * against 75 and 352 us for the ring, and 105 and 319 us against 128
 * and 584 us for 256 KiB (bench/compare_mpi.sh, interleaved).
 */
#define COLL_BCAST_LONG ((size_t)512 * 1024)

/*
 * Bcast of a long contiguous message (van de Geijn): a binomial scatter
 * gives rank vr (relative to the root) the vr-th of p pieces, then a ring
 * allgather passes the pieces around.  Each rank sends about 2 * bytes in
 * all, the root no more than the others, where the binomial tree has the
 * root send bytes * log2(p).
 */
/* The bytes of pieces [a, b) of a message cut in pieces, clipped to its end. */
struct pieces {
	char *buf;
	size_t bytes, piece;
};

static char *piece_at(const struct pieces *m, int a)
{
	size_t at = (size_t)a * m->piece;

	return m->buf + (at < m->bytes ? at : m->bytes);
}

static int piece_len(const struct pieces *m, int a, int b)
{
	return (int)(piece_at(m, b) - piece_at(m, a));
}

static void bcast_scatter_ring(struct coll_sched *s, char *buf, size_t bytes, int root)
{
	int p = s->comm->size, r = s->comm->rank;
	int vr = (r - root + p) % p, mask = 1, k;
	struct pieces m = { buf, bytes, (bytes + p - 1) / p };

	/* Scatter: receive the pieces of the subtree from the parent. */
	while (mask < p) {
		if (vr & mask) {
			int end = vr + mask < p ? vr + mask : p;

			coll_recv(s, piece_at(&m, vr), piece_len(&m, vr, end), MPI_BYTE,
				  (vr - mask + root) % p);
			coll_fence(s);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < p) {
			int from = vr + mask, end = vr + 2 * mask < p ? vr + 2 * mask : p;

			coll_send(s, piece_at(&m, from), piece_len(&m, from, end), MPI_BYTE,
				  (from + root) % p);
		}
	}
	coll_fence(s);
	/* Ring: at step k, pass on the piece received at step k - 1. */
	for (k = 0; k < p - 1; k++) {
		int sp = (vr - k + p) % p, rp = (vr - k - 1 + p) % p;

		coll_send(s, piece_at(&m, sp), piece_len(&m, sp, sp + 1), MPI_BYTE, (r + 1) % p);
		coll_recv(s, piece_at(&m, rp), piece_len(&m, rp, rp + 1), MPI_BYTE,
			  (r - 1 + p) % p);
		coll_fence(s);
	}
}

/*
 * From this many ranks up to COLL_FLAT_RANKS, a Bcast of up to
 * COLL_FLAT_BYTES goes straight from the root to every other rank: one
 * round of p - 1 sends at the root, one receive elsewhere, instead of
 * ceil(log2 p) rounds down a tree, each of which may wait for a process
 * to be scheduled when processes share cores.  Allgather does the same
 * from 3 ranks on, with blocks of up to COLL_FLAT_BYTES (build_allgather).
 */
#define COLL_BCAST_FLAT_MIN 5
#define COLL_FLAT_RANKS 8
#define COLL_FLAT_BYTES 256

void coll_build_bcast(struct coll_sched *s, void *buf, int count, MPI_Datatype type, int root)
{
	int p = s->comm->size, r = s->comm->rank;
	int vr = (r - root + p) % p, mask = 1;
	size_t bytes = (size_t)count * type->size;

	if (by_cluster(s) && bytes <= COLL_CLUSTER_BYTES) {
		bcast_clusters(s, buf, count, type, root);
		return;
	}
	if (p > 2 && type->contiguous && bytes >= COLL_BCAST_LONG && bytes <= 0x7fffffff) {
		bcast_scatter_ring(s, mpi_shim_datatype_start(buf, type), bytes, root);
		return;
	}
	if (p >= COLL_BCAST_FLAT_MIN && p <= COLL_FLAT_RANKS && bytes <= COLL_FLAT_BYTES) {
		if (r != root)
			coll_recv(s, buf, count, type, root);
		for (mask = 1; r == root && mask < p; mask++)
			coll_send(s, buf, count, type, (root + mask) % p);
		coll_fence(s);
		return;
	}

	/* Receive from the parent: vr without its lowest set bit. */
	while (mask < p) {
		if (vr & mask) {
			coll_recv(s, buf, count, type, (vr - mask + root) % p);
			coll_fence(s);
			break;
		}
		mask <<= 1;
	}
	/* Send to the children, the largest subtree first. */
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < p)
			coll_send(s, buf, count, type, (vr + mask + root) % p);
	coll_fence(s);
}

/* Above this many bytes a commutative Allreduce scatters the work (Rabenseifner). */
#define COLL_ALLREDUCE_LONG 8192
/* Reduce does the same from this many ranks on. */
#define COLL_REDUCE_RSAG_MIN 8

/* The real rank of rank newrank among the pof2 that remain after the fold. */
static int allreduce_real(int newrank, int rem)
{
	return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

/* Recursive doubling: log2(pof2) exchanges of the whole vector. */
static void allreduce_doubling(struct coll_sched *s, void *rbuf, void *tmp, int count,
			       MPI_Datatype type, int newrank, int pof2, int rem, int commute)
{
	int r = s->comm->rank, mask;

	for (mask = 1; mask < pof2; mask <<= 1) {
		int dst = allreduce_real(newrank ^ mask, rem);

		coll_send(s, rbuf, count, type, dst);
		coll_recv(s, tmp, count, type, dst);
		coll_fence(s);
		/* The partner's ranks are all below or all above ours. */
		if (dst < r || commute) {
			coll_reduce(s, tmp, rbuf, count, type);
		} else {
			coll_reduce(s, rbuf, tmp, count, type);
			coll_copy(s, tmp, count, type, rbuf, count, type);
		}
	}
}

static int sum_counts(const int *cnts, int from, int to)
{
	int n = 0;

	for (; from < to; from++)
		n += cnts[from];
	return n;
}

/*
 * Rabenseifner, for commutative operations on long vectors: a reduce-scatter
 * by recursive halving (each exchange halves the part a rank is responsible
 * for), then an allgather by recursive doubling of the reduced parts.  Each
 * rank sends and receives about 2 * count elements in all, instead of
 * count * log2(p).
 */
/*
 * The real rank of rank nd of the power-of-two set: after the fold of
 * Allreduce (xor_root < 0), or relabelled by an exclusive or with the root
 * (Reduce, whose root is then rank 0 of the set).
 */
static int rsag_real(int nd, int rem, int xor_root)
{
	return xor_root >= 0 ? nd ^ xor_root : allreduce_real(nd, rem);
}

/*
 * With to_root (Reduce), the second phase only gathers: of each pair, the
 * rank farther from rank 0 of the set sends its part and is done, and
 * rank 0 ends with the whole result.
 */
static void rsag(struct coll_sched *s, void *rbuf, void *tmp, int count, MPI_Datatype type,
		 int newrank, int pof2, int rem, int xor_root, int to_root)
{
	int *cnts, *disps, i, mask, send_idx = 0, recv_idx = 0, last_idx = pof2;

	cnts = malloc(2 * pof2 * sizeof(*cnts));
	if (!cnts) {
		s->err = MPI_ERR_NO_MEM;
		return;
	}
	disps = cnts + pof2;
	for (i = 0; i < pof2; i++) {
		cnts[i] = count / pof2 + (i < count % pof2);
		disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
	}
	for (mask = 1; mask < pof2; mask <<= 1) {
		int nd = newrank ^ mask, dst = rsag_real(nd, rem, xor_root), scnt, rcnt;

		if (newrank < nd) {
			send_idx = recv_idx + pof2 / (mask * 2);
			scnt = sum_counts(cnts, send_idx, last_idx);
			rcnt = sum_counts(cnts, recv_idx, send_idx);
		} else {
			recv_idx = send_idx + pof2 / (mask * 2);
			scnt = sum_counts(cnts, send_idx, recv_idx);
			rcnt = sum_counts(cnts, recv_idx, last_idx);
		}
		coll_send(s, coll_at(rbuf, disps[send_idx], type), scnt, type, dst);
		coll_recv(s, coll_at(tmp, disps[recv_idx], type), rcnt, type, dst);
		coll_fence(s);
		coll_reduce(s, coll_at(tmp, disps[recv_idx], type),
			    coll_at(rbuf, disps[recv_idx], type), rcnt, type);
		send_idx = recv_idx;
		if (mask * 2 < pof2)
			last_idx = recv_idx + pof2 / (mask * 2);
	}
	for (mask = pof2 >> 1; mask > 0; mask >>= 1) {
		int nd = newrank ^ mask, dst = rsag_real(nd, rem, xor_root), scnt, rcnt;

		if (newrank < nd) {
			if (mask != pof2 / 2)
				last_idx = last_idx + pof2 / (mask * 2);
			recv_idx = send_idx + pof2 / (mask * 2);
			scnt = sum_counts(cnts, send_idx, recv_idx);
			rcnt = sum_counts(cnts, recv_idx, last_idx);
		} else {
			recv_idx = send_idx - pof2 / (mask * 2);
			scnt = sum_counts(cnts, send_idx, last_idx);
			rcnt = sum_counts(cnts, recv_idx, send_idx);
		}
		if (!to_root || newrank > nd)
			coll_send(s, coll_at(rbuf, disps[send_idx], type), scnt, type, dst);
		if (!to_root || newrank < nd)
			coll_recv(s, coll_at(rbuf, disps[recv_idx], type), rcnt, type, dst);
		coll_fence(s);
		if (to_root && newrank > nd)
			break;
		if (newrank > nd)
			send_idx = recv_idx;
	}
	free(cnts);
}

/*
 * In a collective whose messages all flow towards the root (Reduce,
 * Gather), nothing holds a sender back: called back to back, the leaves
 * run many calls ahead, and their messages pile up at their parents as
 * unexpected ones, in memory without bound.  (They once also slowed every
 * receive at the parent, which searched them all; unexpected messages are
 * now kept per source, so a receive from a child sees that child's only.)
 * Every COLL_RUNAHEAD-th such call on a communicator, each parent answers
 * each child with an empty message once it has the child's data, and the
 * child waits for it: no rank gets more than COLL_RUNAHEAD calls ahead of
 * its parent, for one more wait in COLL_RUNAHEAD calls.  That wait drains
 * the pipeline of calls, which costs a little, and more often on more
 * ranks, where more children share the parent's processor time.
 */
#define COLL_RUNAHEAD 128
#define COLL_RUNAHEAD_ONE_CHILD 1024

static int runahead_check(const struct coll_sched *s)
{
	int k = s->comm->size > 2 ? COLL_RUNAHEAD : COLL_RUNAHEAD_ONE_CHILD;

	return s->tag % k == k - 1;
}

/* A child's side, after its send to parent: wait for the answer. */
static void runahead_wait(struct coll_sched *s, int parent)
{
	coll_fence(s);
	coll_recv(s, NULL, 0, MPI_BYTE, parent);
	coll_fence(s);
}

/* Up to this many bytes, a Reduce rank posts the receives of all its children at once. */
#define COLL_REDUCE_SHORT 2048

/*
 * Binomial tree towards lroot (vr is the rank relative to it).  The
 * running result acc is never written: each combination goes into the
 * buffer that just received (in = acc op in), which then becomes acc.
 * That keeps the user's send buffer read-only and combines in rank order
 * (acc covers the lower ranks) for non-commutative operations.  At the
 * root, the last buffer to receive is the receive buffer, so that the
 * last combination lands there with no copy; in place, rbuf is acc and
 * cannot receive.
 *
 * Short vectors: the receives from all the children are posted in one
 * round, one buffer each, and combined in the same order once all are in:
 * a rank waits once, not once per child, which counts when processes
 * share cores.  Long ones: one child at a time, alternating between two
 * buffers, so that a combination overlaps the next receive.
 */
static const void *reduce_children(struct coll_sched *s, const void *acc, void *rbuf,
				   int count, MPI_Datatype type, int lroot, int throttle)
{
	int p = s->comm->size, r = s->comm->rank, vr = (r - lroot + p) % p;
	int mask, children = 0, i, at_once, use_rbuf = rbuf && acc != rbuf;
	void *in[sizeof(int) * 8], *two[2] = { NULL, NULL };

	for (mask = 1; mask < p && !(vr & mask); mask <<= 1)
		children += (vr | mask) < p;
	if (!children)
		return acc;
	at_once = (size_t)count * type->size <= COLL_REDUCE_SHORT;
	for (i = 0, mask = 1; i < children; i++, mask <<= 1) {
		int child = ((vr | mask) + lroot) % p, slot = (children - 1 - i) % 2;

		if (at_once) {
			in[i] = i == children - 1 && use_rbuf ? rbuf : coll_tmp(s, count, type);
		} else {
			/* Alternate, so that the last one is rbuf if it can be. */
			if (!two[slot])
				two[slot] = !slot && use_rbuf ? rbuf : coll_tmp(s, count, type);
			in[i] = two[slot];
		}
		coll_recv(s, in[i], count, type, child);
		if (at_once)
			continue;
		coll_fence(s);
		if (throttle)
			coll_send(s, NULL, 0, MPI_BYTE, child);
		coll_reduce(s, acc, in[i], count, type);
		acc = in[i];
	}
	if (!at_once)
		return acc;
	coll_fence(s);
	for (i = 0, mask = 1; i < children; i++, mask <<= 1) {
		if (throttle)
			coll_send(s, NULL, 0, MPI_BYTE, ((vr | mask) + lroot) % p);
		coll_reduce(s, acc, in[i], count, type);
		acc = in[i];
	}
	return acc;
}

void coll_build_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, int count,
			 MPI_Datatype type, int root)
{
	int p = s->comm->size, r = s->comm->rank;
	int lroot = mpi_shim_op_commutative(s->op) ? root : 0;
	int vr = (r - lroot + p) % p;
	int throttle = runahead_check(s);
	const void *acc = sbuf == MPI_IN_PLACE ? rbuf : sbuf;

	/*
	 * Long vectors, a commutative operation and p a power of two from 8
	 * on: Rabenseifner's reduce-scatter, then a gather of the parts to
	 * the root, which moves about 2 * count elements per rank, not
	 * count * log2(p) at the root.  On fewer ranks the tree wins: it
	 * copies nothing, where every rank here first copies its vector.
	 */
	if (lroot == root && p >= COLL_REDUCE_RSAG_MIN && (p & (p - 1)) == 0 && count >= p &&
	    (size_t)count * type->size >= COLL_ALLREDUCE_LONG) {
		void *work = r == root ? rbuf : coll_tmp(s, count, type);

		coll_copy(s, acc, count, type, work, count, type);
		rsag(s, work, coll_tmp(s, count, type), count, type, r ^ root, p, 0, root, 1);
		return;
	}
	acc = reduce_children(s, acc, r == root && lroot == root ? rbuf : NULL, count, type,
			      lroot, throttle);
	if (vr) {
		int parent = ((vr & ~(vr & -vr)) + lroot) % p;

		coll_send(s, acc, count, type, parent);
		coll_fence(s);
		if (throttle)
			runahead_wait(s, parent);
	}
	if (r == lroot) {
		if (lroot == root) {
			coll_copy(s, acc, count, type, rbuf, count, type);
		} else {
			coll_send(s, acc, count, type, root);
			coll_fence(s);
		}
	} else if (r == root) {
		coll_recv(s, rbuf, count, type, lroot);
		coll_fence(s);
	}
}

/*
 * Up to this many ranks and bytes, Allreduce is one exchange of every
 * vector (on 2 ranks, recursive doubling is that exchange already).
 */
#define COLL_ALLREDUCE_FLAT_RANKS 8
#define COLL_ALLREDUCE_FLAT_BYTES 256

/*
 * Every rank sends its vector to every other and combines the p vectors
 * itself, from the right (v_i op (v_i+1 op ...)), so in rank order for a
 * non-commutative operation: one round of p - 1 messages instead of
 * log2(p) rounds (two more when p is not a power of two), and so one wait.
 */
static void allreduce_flat(struct coll_sched *s, void *rbuf, int count, MPI_Datatype type)
{
	int p = s->comm->size, r = s->comm->rank, j;
	char *all = coll_tmp(s, (size_t)count * (size_t)p, type);
	void *acc;

	if (!all)
		return;
	for (j = 1; j < p; j++) {
		int from = (r - j + p) % p;

		coll_send(s, rbuf, count, type, (r + j) % p);
		coll_recv(s, coll_at(all, (MPI_Aint)from * count, type), count, type, from);
	}
	coll_fence(s);
	acc = r == p - 1 ? rbuf : coll_at(all, (MPI_Aint)(p - 1) * count, type);
	for (j = p - 2; j >= 0; j--)
		coll_reduce(s, j == r ? rbuf : coll_at(all, (MPI_Aint)j * count, type), acc, count,
			    type);
	coll_copy(s, acc, count, type, rbuf, count, type);
}

static void build_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, int count,
			    MPI_Datatype type)
{
	int p = s->comm->size, r = s->comm->rank;
	int commute = mpi_shim_op_commutative(s->op);
	int pof2 = 1, rem, newrank;
	void *tmp;

	if (sbuf != MPI_IN_PLACE)
		coll_copy(s, sbuf, count, type, rbuf, count, type);
	if (p == 1)
		return;
	if (by_cluster(s) && commute && (size_t)count * type->size <= COLL_CLUSTER_BYTES) {
		allreduce_clusters(s, rbuf, count, type);
		return;
	}
	if (p > 2 && p <= COLL_ALLREDUCE_FLAT_RANKS &&
	    (size_t)count * type->size <= COLL_ALLREDUCE_FLAT_BYTES) {
		allreduce_flat(s, rbuf, count, type);
		return;
	}
	tmp = coll_tmp(s, count, type);
	while (pof2 * 2 <= p)
		pof2 *= 2;
	rem = p - pof2;

	/* Fold: of each pair (2i, 2i + 1) below 2 * rem, the odd one goes on. */
	if (r < 2 * rem) {
		if (r % 2 == 0) {
			coll_send(s, rbuf, count, type, r + 1);
			coll_fence(s);
			newrank = -1;
		} else {
			coll_recv(s, tmp, count, type, r - 1);
			coll_fence(s);
			coll_reduce(s, tmp, rbuf, count, type);
			newrank = r / 2;
		}
	} else {
		newrank = r - rem;
	}

	if (newrank >= 0) {
		if (commute && count >= pof2 &&
		    (size_t)count * type->size >= COLL_ALLREDUCE_LONG)
			rsag(s, rbuf, tmp, count, type, newrank, pof2, rem, -1, 0);
		else
			allreduce_doubling(s, rbuf, tmp, count, type, newrank, pof2, rem, commute);
	}

	/* Unfold: the even ranks of the pairs get the result. */
	if (r < 2 * rem) {
		if (r % 2)
			coll_send(s, rbuf, count, type, r - 1);
		else
			coll_recv(s, rbuf, count, type, r + 1);
		coll_fence(s);
	}
}

/* Up to this many bytes in all, Gather and Scatter go through a binomial tree. */
#define COLL_GATHER_SHORT 16384

/* The ranks of vr's subtree in a binomial tree of p: [vr, vr + size). */
static int subtree_size(int vr, int p)
{
	int size = vr ? (vr & -vr) : p;

	return size < p - vr ? size : p - vr;
}

/*
 * Gather of short blocks: each rank collects the blocks of its subtree,
 * packed, in rank order relative to the root, and passes them to its
 * parent; the root unpacks them.  ceil(log2 p) rounds, and the root takes
 * ceil(log2 p) messages instead of p - 1.
 */
static void gather_binomial(struct coll_sched *s, const struct coll_args *a, size_t blk)
{
	int p = s->comm->size, r = s->comm->rank, root = a->root, i, mask;
	int vr = (r - root + p) % p, size = subtree_size(vr, p);
	int parent = (vr - (vr & -vr) + root) % p;
	char *tmp;

	if (size == 1) {
		coll_send(s, a->sbuf, a->scount, a->stype, parent);
		coll_fence(s);
		if (runahead_check(s))
			runahead_wait(s, parent);
		return;
	}
	tmp = coll_tmp(s, size * blk, MPI_BYTE);
	if (a->sbuf == MPI_IN_PLACE)
		coll_copy(s, coll_at(a->rbuf, (MPI_Aint)r * a->rcount, a->rtype), a->rcount,
			  a->rtype, tmp, blk, MPI_BYTE);
	else
		coll_copy(s, a->sbuf, a->scount, a->stype, tmp, blk, MPI_BYTE);
	for (mask = 1; mask < size; mask <<= 1) {
		int n = mask < p - (vr + mask) ? mask : p - (vr + mask);

		coll_recv(s, tmp + mask * blk, n * blk, MPI_BYTE, (vr + mask + root) % p);
	}
	coll_fence(s);
	for (mask = 1; mask < size && runahead_check(s); mask <<= 1)
		coll_send(s, NULL, 0, MPI_BYTE, (vr + mask + root) % p);
	if (vr) {
		coll_send(s, tmp, size * blk, MPI_BYTE, parent);
		coll_fence(s);
		if (runahead_check(s))
			runahead_wait(s, parent);
		return;
	}
	for (i = a->sbuf == MPI_IN_PLACE; i < p; i++)
		coll_copy(s, tmp + i * blk, blk, MPI_BYTE,
			  coll_at(a->rbuf, (MPI_Aint)((i + root) % p) * a->rcount, a->rtype),
			  a->rcount, a->rtype);
}

/* Scatter of short blocks: the reverse of gather_binomial. */
static void scatter_binomial(struct coll_sched *s, const struct coll_args *a, size_t blk)
{
	int p = s->comm->size, r = s->comm->rank, root = a->root, i, mask;
	int vr = (r - root + p) % p, size = subtree_size(vr, p);
	char *tmp;

	if (size == 1) {
		coll_recv(s, a->rbuf, a->rcount, a->rtype, (vr - (vr & -vr) + root) % p);
		coll_fence(s);
		return;
	}
	tmp = coll_tmp(s, size * blk, MPI_BYTE);
	if (vr) {
		coll_recv(s, tmp, size * blk, MPI_BYTE, (vr - (vr & -vr) + root) % p);
		coll_fence(s);
	} else {
		for (i = 0; i < p; i++)
			coll_copy(s, coll_at(a->sbuf, (MPI_Aint)((i + root) % p) * a->scount, a->stype),
				  a->scount, a->stype, tmp + i * blk, blk, MPI_BYTE);
	}
	for (mask = 1; mask < size; mask <<= 1) {
		int n = mask < p - (vr + mask) ? mask : p - (vr + mask);

		coll_send(s, tmp + mask * blk, n * blk, MPI_BYTE, (vr + mask + root) % p);
	}
	if (a->rbuf != MPI_IN_PLACE)
		coll_copy(s, tmp, blk, MPI_BYTE, a->rbuf, a->rcount, a->rtype);
	coll_fence(s);
}

static void build_gatherv(struct coll_sched *s, const struct coll_args *a, int regular)
{
	int p = s->comm->size, r = s->comm->rank, i;
	size_t blk = r == a->root ? (size_t)a->rcount * a->rtype->size :
				    (size_t)a->scount * a->stype->size;

	if (regular && p > 2 && blk * p <= COLL_GATHER_SHORT) {
		gather_binomial(s, a, blk);
		return;
	}

	if (r != a->root) {
		coll_send(s, a->sbuf, a->scount, a->stype, a->root);
		coll_fence(s);
		if (runahead_check(s))
			runahead_wait(s, a->root);
		return;
	}
	for (i = 0; i < p; i++) {
		MPI_Aint at = regular ? (MPI_Aint)i * a->rcount : a->rdispls[i];
		int n = regular ? a->rcount : a->rcounts[i];
		void *blk = coll_at(a->rbuf, at, a->rtype);

		if (i != r)
			coll_recv(s, blk, n, a->rtype, i);
		else if (a->sbuf != MPI_IN_PLACE)
			coll_copy(s, a->sbuf, a->scount, a->stype, blk, n, a->rtype);
	}
	coll_fence(s);
	for (i = 0; i < p && runahead_check(s); i++)
		if (i != r)
			coll_send(s, NULL, 0, MPI_BYTE, i);
	coll_fence(s);
}

void coll_build_scatterv(struct coll_sched *s, const struct coll_args *a, int regular)
{
	int p = s->comm->size, r = s->comm->rank, i;
	size_t blk = r == a->root ? (size_t)a->scount * a->stype->size :
				    (size_t)a->rcount * a->rtype->size;

	if (regular && p > 2 && blk * p <= COLL_GATHER_SHORT) {
		scatter_binomial(s, a, blk);
		return;
	}

	if (r != a->root) {
		coll_recv(s, a->rbuf, a->rcount, a->rtype, a->root);
		coll_fence(s);
		return;
	}
	for (i = 0; i < p; i++) {
		MPI_Aint at = regular ? (MPI_Aint)i * a->scount : a->sdispls[i];
		int n = regular ? a->scount : a->scounts[i];
		const void *blk = coll_at(a->sbuf, at, a->stype);

		if (i != r)
			coll_send(s, blk, n, a->stype, i);
		else if (a->rbuf != MPI_IN_PLACE)
			coll_copy(s, blk, n, a->stype, a->rbuf, a->rcount, a->rtype);
	}
	coll_fence(s);
}

static void build_allgather(struct coll_sched *s, const struct coll_args *a)
{
	int p = s->comm->size, r = s->comm->rank, k;
	size_t n = (size_t)a->rcount; /* the products below pass 2^31 */
	MPI_Datatype t = a->rtype;
	char *tmp;

	if (a->sbuf != MPI_IN_PLACE)
		coll_copy(s, a->sbuf, a->scount, a->stype, coll_at(a->rbuf, (MPI_Aint)r * n, t), n,
			  t);
	if (p == 1)
		return;
	if (p > 2 && p <= COLL_FLAT_RANKS && n * t->size <= COLL_FLAT_BYTES) {
		/* Flat: every block straight to every other rank, one round. */
		for (k = 1; k < p; k++) {
			int from = (r - k + p) % p;

			coll_send(s, coll_at(a->rbuf, (MPI_Aint)r * n, t), n, t, (r + k) % p);
			coll_recv(s, coll_at(a->rbuf, (MPI_Aint)from * n, t), n, t, from);
		}
		coll_fence(s);
		return;
	}
	if ((p & (p - 1)) == 0) {
		/* Recursive doubling: exchange aligned runs of blocks in place. */
		for (k = 1; k < p; k <<= 1) {
			int peer = r ^ k;
			MPI_Aint mine = (MPI_Aint)(r & ~(k - 1)) * n;
			MPI_Aint theirs = (MPI_Aint)(peer & ~(k - 1)) * n;

			coll_send(s, coll_at(a->rbuf, mine, t), k * n, t, peer);
			coll_recv(s, coll_at(a->rbuf, theirs, t), k * n, t, peer);
			coll_fence(s);
		}
		return;
	}
	/*
	 * Bruck: block i of tmp is the block of rank r + i.  At step k, send
	 * the first min(k, p - k) blocks to r - k, receive as many from r + k
	 * after the first k.  Then rotate into place.
	 */
	tmp = coll_tmp(s, p * n, t);
	coll_copy(s, coll_at(a->rbuf, (MPI_Aint)r * n, t), n, t, tmp, n, t);
	for (k = 1; k < p; k <<= 1) {
		int m = k < p - k ? k : p - k;

		coll_send(s, tmp, m * n, t, (r - k + p) % p);
		coll_recv(s, coll_at(tmp, (MPI_Aint)k * n, t), m * n, t, (r + k) % p);
		coll_fence(s);
	}
	if (r < p - 1)
		coll_copy(s, coll_at(tmp, n, t), (p - 1 - r) * n, t,
			  coll_at(a->rbuf, (MPI_Aint)(r + 1) * n, t), (p - 1 - r) * n, t);
	if (r > 0)
		coll_copy(s, coll_at(tmp, (MPI_Aint)(p - r) * n, t), r * n, t, a->rbuf, r * n, t);
}

static void build_allgatherv(struct coll_sched *s, const struct coll_args *a)
{
	int p = s->comm->size, r = s->comm->rank, k;
	MPI_Datatype t = a->rtype;

	if (a->sbuf != MPI_IN_PLACE)
		coll_copy(s, a->sbuf, a->scount, a->stype, coll_at(a->rbuf, a->rdispls[r], t),
			  a->rcounts[r], t);
	/* Ring: at step k, pass on the block received at step k - 1. */
	for (k = 0; k < p - 1; k++) {
		int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;

		coll_send(s, coll_at(a->rbuf, a->rdispls[sb], t), a->rcounts[sb], t, (r + 1) % p);
		coll_recv(s, coll_at(a->rbuf, a->rdispls[rb], t), a->rcounts[rb], t,
			  (r - 1 + p) % p);
		coll_fence(s);
	}
}

/*
 * Alltoall, v and w: the block for and from each peer.  For w, the
 * displacements are in bytes and each peer has its own type.
 */
struct a2a_block {
	const char *sbuf;
	char *rbuf;
	int scount, rcount;
	MPI_Datatype stype, rtype;
};

static void a2a_block(const struct coll_args *a, enum coll_kind kind, int i,
		      struct a2a_block *b)
{
	memset(b, 0, sizeof(*b));
	if (a->sbuf == MPI_IN_PLACE) {
		/* Only the receive side is described. */
		struct coll_args r = *a;

		r.sbuf = NULL;
		r.scount = 0;
		r.stype = a->rtype;
		r.scounts = a->rcounts;
		r.sdispls = a->rdispls;
		r.stypes = a->rtypes;
		a2a_block(&r, kind, i, b);
		b->sbuf = NULL;
		return;
	}
	switch (kind) {
	case COLL_ALLTOALL:
		b->scount = a->scount;
		b->rcount = a->rcount;
		b->stype = a->stype;
		b->rtype = a->rtype;
		b->sbuf = coll_at(a->sbuf, (MPI_Aint)i * a->scount, a->stype);
		b->rbuf = coll_at(a->rbuf, (MPI_Aint)i * a->rcount, a->rtype);
		break;
	case COLL_ALLTOALLV:
		b->scount = a->scounts[i];
		b->rcount = a->rcounts[i];
		b->stype = a->stype;
		b->rtype = a->rtype;
		b->sbuf = coll_at(a->sbuf, a->sdispls[i], a->stype);
		b->rbuf = coll_at(a->rbuf, a->rdispls[i], a->rtype);
		break;
	default:
		b->scount = a->scounts[i];
		b->rcount = a->rcounts[i];
		b->stype = a->stypes[i];
		b->rtype = a->rtypes[i];
		b->sbuf = (const char *)a->sbuf + a->sdispls[i];
		b->rbuf = (char *)a->rbuf + a->rdispls[i];
		break;
	}
}

/*
 * Alltoall posts the exchanges of this many peers at once, in the order of
 * the pairwise exchange (peer r + k at step k), then waits for them all:
 * one wait instead of one per peer, which matters most when processes
 * share cores, and a bounded number of messages in flight per rank.  Each
 * send goes before its receive, here and in the barrier, so that the peer
 * waiting for it has it as early as possible.
 */
#define COLL_A2A_BATCH 32

static void build_alltoall(struct coll_sched *s, const struct coll_args *a, enum coll_kind kind)
{
	int p = s->comm->size, r = s->comm->rank, k, i;
	struct a2a_block b, c;

	if (a->sbuf == MPI_IN_PLACE) {
		/*
		 * The data to send is where the data received goes: copy each
		 * block aside first, then send from the copies.
		 */
		const void **blocks = NULL;

		blocks = calloc(p, sizeof(*blocks));
		if (!blocks) {
			s->err = MPI_ERR_NO_MEM;
			return;
		}
		for (i = 0; i < p; i++) {
			void *t;

			a2a_block(a, kind, i, &b);
			t = coll_tmp(s, b.rcount, b.rtype);
			coll_copy(s, b.rbuf, b.rcount, b.rtype, t, b.rcount, b.rtype);
			blocks[i] = t;
		}
		/* Send block i of count rcounts[i] of rtype from blocks[i]. */
		for (k = 1; k < p; k++) {
			int dst = (r + k) % p, src = (r - k + p) % p;

			a2a_block(a, kind, dst, &b);
			a2a_block(a, kind, src, &c);
			coll_send(s, blocks[dst], b.rcount, b.rtype, dst);
			coll_recv(s, c.rbuf, c.rcount, c.rtype, src);
			if (k % COLL_A2A_BATCH == 0)
				coll_fence(s);
		}
		coll_fence(s);
		free(blocks);
		return;
	}
	a2a_block(a, kind, r, &b);
	coll_copy(s, b.sbuf, b.scount, b.stype, b.rbuf, b.rcount, b.rtype);
	for (k = 1; k < p; k++) {
		int dst = (r + k) % p, src = (r - k + p) % p;

		a2a_block(a, kind, dst, &b);
		a2a_block(a, kind, src, &c);
		coll_send(s, b.sbuf, b.scount, b.stype, dst);
		coll_recv(s, c.rbuf, c.rcount, c.rtype, src);
		if (k % COLL_A2A_BATCH == 0)
			coll_fence(s);
	}
	coll_fence(s);
}

/* Reduce_scatter(_block): reduce everything to rank 0, then scatter. */
static void build_reduce_scatter(struct coll_sched *s, const struct coll_args *a, int regular)
{
	int p = s->comm->size, r = s->comm->rank, i, total = 0;
	const void *src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
	MPI_Datatype t = a->rtype;
	void *all = NULL;

	for (i = 0; i < p; i++)
		total += regular ? a->rcount : a->rcounts[i];
	if (r == 0)
		all = coll_tmp(s, total, t);
	coll_build_reduce(s, src, all, total, t, 0);
	coll_build_scatter_result(s, all, a, regular);
}

/* The reduced vector all, at rank 0, scattered by the receive counts of a
 * Reduce_scatter(_block): a->rcounts, or a->rcount each. */
void coll_build_scatter_result(struct coll_sched *s, void *all, const struct coll_args *a,
			       int regular)
{
	int p = s->comm->size, r = s->comm->rank, i, total;
	MPI_Datatype t = a->rtype;
	struct coll_args sc = { 0 };
	int *displs = NULL;

	if (!regular) {
		displs = malloc(p * sizeof(*displs));
		if (!displs) {
			s->err = MPI_ERR_NO_MEM;
			return;
		}
		for (i = 0, total = 0; i < p; i++) {
			displs[i] = total;
			total += a->rcounts[i];
		}
	}
	sc.sbuf = all;
	sc.scount = a->rcount;
	sc.scounts = a->rcounts;
	sc.sdispls = displs;
	sc.stype = t;
	sc.rbuf = a->rbuf;
	sc.rcount = regular ? a->rcount : a->rcounts[r];
	sc.rtype = t;
	sc.root = 0;
	coll_build_scatterv(s, &sc, regular);
	free(displs);
}

/*
 * Scan and Exscan, recursive doubling: partial holds the reduction of the
 * ranks of the caller's current group, rbuf that of the ranks below and
 * including (Scan) or below (Exscan) the caller.
 */
static void build_scan(struct coll_sched *s, const struct coll_args *a, int exclusive)
{
	int p = s->comm->size, r = s->comm->rank, mask, have = !exclusive;
	int commute = mpi_shim_op_commutative(s->op);
	MPI_Datatype t = a->rtype;
	int n = a->rcount;
	const void *src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
	void *partial, *tmp;

	if (p == 1) {
		if (!exclusive)
			coll_copy(s, src, n, t, a->rbuf, n, t);
		return;
	}
	partial = coll_tmp(s, n, t);
	tmp = coll_tmp(s, n, t);
	coll_copy(s, src, n, t, partial, n, t);
	if (!exclusive)
		coll_copy(s, src, n, t, a->rbuf, n, t);
	for (mask = 1; mask < p; mask <<= 1) {
		int dst = r ^ mask;

		if (dst >= p)
			continue;
		coll_send(s, partial, n, t, dst);
		coll_recv(s, tmp, n, t, dst);
		coll_fence(s);
		if (dst < r) {
			/* tmp covers ranks just below those of partial and rbuf. */
			coll_reduce(s, tmp, partial, n, t);
			if (have) {
				coll_reduce(s, tmp, a->rbuf, n, t);
			} else {
				coll_copy(s, tmp, n, t, a->rbuf, n, t);
				have = 1;
			}
		} else if (commute) {
			coll_reduce(s, tmp, partial, n, t);
		} else {
			coll_reduce(s, partial, tmp, n, t);
			coll_copy(s, tmp, n, t, partial, n, t);
		}
	}
}

int coll_build(enum coll_kind kind, struct coll_sched *s, const struct coll_args *a)
{
	if (mpi_shim_is_inter(s->comm))
		return coll_build_inter(kind, s, a);
	switch (kind) {
	case COLL_BARRIER:
		coll_build_barrier(s);
		break;
	case COLL_BCAST:
		coll_build_bcast(s, a->rbuf, a->rcount, a->rtype, a->root);
		break;
	case COLL_GATHER:
		build_gatherv(s, a, 1);
		break;
	case COLL_GATHERV:
		build_gatherv(s, a, 0);
		break;
	case COLL_SCATTER:
		coll_build_scatterv(s, a, 1);
		break;
	case COLL_SCATTERV:
		coll_build_scatterv(s, a, 0);
		break;
	case COLL_ALLGATHER:
		build_allgather(s, a);
		break;
	case COLL_ALLGATHERV:
		build_allgatherv(s, a);
		break;
	case COLL_ALLTOALL:
	case COLL_ALLTOALLV:
	case COLL_ALLTOALLW:
		build_alltoall(s, a, kind);
		break;
	case COLL_REDUCE:
		coll_build_reduce(s, a->sbuf, a->rbuf, a->rcount, a->rtype, a->root);
		break;
	case COLL_ALLREDUCE:
		build_allreduce(s, a->sbuf, a->rbuf, a->rcount, a->rtype);
		break;
	case COLL_REDUCE_SCATTER:
		build_reduce_scatter(s, a, 0);
		break;
	case COLL_REDUCE_SCATTER_BLOCK:
		build_reduce_scatter(s, a, 1);
		break;
	case COLL_SCAN:
		build_scan(s, a, 0);
		break;
	case COLL_EXSCAN:
		build_scan(s, a, 1);
		break;
	default:
		return MPI_ERR_INTERN;
	}
	return s->err;
}

/* ------------------------------------------------------------------ */
/* Argument checks                                                     */
/* ------------------------------------------------------------------ */

/* count elements of type at buf: the count, the type, the buffer. */
static int check_data(MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
		      const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, type, call)))
		return rc;
	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed for this buffer here");
	return mpi_shim_check_buf(comm, buf, count, type, call);
}

/* Counts and displacements of a v or w collective: one per rank. */
static int check_vector(MPI_Comm comm, const int *counts, const int *displs, const char *what,
			const char *call)
{
	int i;

	if (!counts || !displs)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s %s array is NULL", what,
				    !counts ? "counts" : "displacements");
	for (i = 0; i < comm->size; i++)
		if (counts[i] < 0)
			return mpi_shim_err(comm, MPI_ERR_COUNT, call,
					    "the %s count of rank %d is %d", what, i, counts[i]);
	return MPI_SUCCESS;
}

static int check_vector_data(MPI_Comm comm, const void *buf, const int *counts,
			     const int *displs, MPI_Datatype type, const char *what,
			     const char *call)
{
	int rc, i;

	if ((rc = check_vector(comm, counts, displs, what, call)) ||
	    (rc = mpi_shim_check_type(comm, type, call)))
		return rc;
	if (buf == MPI_IN_PLACE)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is not allowed for the %s buffer here", what);
	for (i = 0; i < comm->size; i++)
		if (counts[i] &&
		    (rc = mpi_shim_check_block(comm, buf, (MPI_Aint)displs[i] * type->extent,
					       counts[i], type, call)))
			return rc;
	return MPI_SUCCESS;
}

static size_t bytes_of(int count, MPI_Datatype type)
{
	return (size_t)count * type->size;
}

/* The bytes of the blocks of a v form (the counts checked already). */
static size_t vector_bytes(MPI_Comm comm, const int *counts, MPI_Datatype type)
{
	size_t total = 0;
	int i;

	for (i = 0; i < comm->size; i++)
		total += bytes_of(counts[i], type);
	return total;
}

/*
 * The same buffer given for sending and receiving, with data to move both
 * ways.  An empty buffer is never accessed, and a program (or a language
 * binding) may pass one address for every empty array: a rank that sends
 * or receives nothing passes whatever it likes.
 */
static int check_alias(MPI_Comm comm, const void *sbuf, size_t sbytes, const void *rbuf,
		       size_t rbytes, const char *call)
{
	if (sbuf && sbuf != MPI_IN_PLACE && sbuf == rbuf && sbytes && rbytes)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "the send and receive buffers are the same (%p), with %zu "
				    "bytes to send and %zu to receive: use MPI_IN_PLACE",
				    (void *)rbuf, sbytes, rbytes);
	return MPI_SUCCESS;
}

/* What a rank sends must fit where it is received (its own block). */
static int check_fit(MPI_Comm comm, int scount, MPI_Datatype stype, int rcount,
		     MPI_Datatype rtype, const char *call)
{
	size_t sb = (size_t)scount * stype->size, rb = (size_t)rcount * rtype->size;

	if (sb > rb)
		return mpi_shim_err(comm, MPI_ERR_TRUNCATE, call,
				    "rank %d sends %zu bytes to itself into %zu bytes", comm->rank,
				    sb, rb);
	return MPI_SUCCESS;
}

static int check_reduction(MPI_Comm comm, const struct coll_args *a, int root_only_in_place,
			   int count, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_count(comm, count, call)) ||
	    (rc = mpi_shim_check_type(comm, a->rtype, call)) ||
	    (rc = mpi_shim_check_op(comm, a->op, a->rtype, call)))
		return rc;
	if (a->sbuf == MPI_IN_PLACE && root_only_in_place && comm->rank != a->root)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "MPI_IN_PLACE is for the root (%d) only, not rank %d", a->root,
				    comm->rank);
	if (a->sbuf != MPI_IN_PLACE &&
	    (rc = mpi_shim_check_buf(comm, a->sbuf, count, a->rtype, call)))
		return rc;
	return MPI_SUCCESS;
}

/*
 * The buffer holding one block per rank (received by a gather, sent by a
 * scatter): its layout, whether it is also the other buffer, and whether
 * this rank's own block fits unless the other buffer is MPI_IN_PLACE.
 */
static int check_blocks(MPI_Comm comm, const struct coll_args *a, int received, int vector,
			const char *call)
{
	int rc, r = comm->rank;
	const void *other = received ? a->sbuf : a->rbuf;
	size_t sbytes, rbytes;

	if (vector)
		rc = received ? check_vector_data(comm, a->rbuf, a->rcounts, a->rdispls,
						  a->rtype, "receive", call) :
				check_vector_data(comm, a->sbuf, a->scounts, a->sdispls,
						  a->stype, "send", call);
	else
		rc = received ? check_data(comm, a->rbuf, a->rcount, a->rtype, call) :
				check_data(comm, a->sbuf, a->scount, a->stype, call);
	if (rc)
		return rc;
	if (other == MPI_IN_PLACE)
		return MPI_SUCCESS;
	/* The other side was checked already: its counts array is set if it has one. */
	sbytes = a->scounts ? vector_bytes(comm, a->scounts, a->stype) :
			      bytes_of(a->scount, a->stype);
	rbytes = a->rcounts ? vector_bytes(comm, a->rcounts, a->rtype) :
			      bytes_of(a->rcount, a->rtype);
	if ((rc = check_alias(comm, a->sbuf, sbytes, a->rbuf, rbytes, call)))
		return rc;
	return check_fit(comm, a->scounts ? a->scounts[r] : a->scount, a->stype,
			 a->rcounts ? a->rcounts[r] : a->rcount, a->rtype, call);
}

int coll_check(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a, const char *call)
{
	int rc, p, r, i, root;
	size_t total, sbytes, rbytes;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (mpi_shim_is_inter(comm))
		return coll_check_inter(kind, comm, a, call);
	p = comm->size;
	r = comm->rank;
	root = a->root;
	switch (kind) {
	case COLL_BARRIER:
		return MPI_SUCCESS;

	case COLL_BCAST:
		if ((rc = mpi_shim_check_root(comm, root, call)))
			return rc;
		return check_data(comm, a->rbuf, a->rcount, a->rtype, call);

	case COLL_GATHER:
	case COLL_GATHERV:
	case COLL_SCATTER:
	case COLL_SCATTERV: {
		/* A rank's own block: what it sends to a gather, receives from a scatter. */
		int gather = kind == COLL_GATHER || kind == COLL_GATHERV;
		const void *own = gather ? a->sbuf : a->rbuf;

		if ((rc = mpi_shim_check_root(comm, root, call)))
			return rc;
		if (own == MPI_IN_PLACE && r != root)
			return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
					    "MPI_IN_PLACE is for the root (%d) only, not rank %d",
					    root, r);
		if (own != MPI_IN_PLACE &&
		    (rc = gather ? check_data(comm, a->sbuf, a->scount, a->stype, call) :
				   check_data(comm, a->rbuf, a->rcount, a->rtype, call)))
			return rc;
		if (r != root)
			return MPI_SUCCESS;
		return check_blocks(comm, a, gather, kind == COLL_GATHERV || kind == COLL_SCATTERV,
				    call);
	}

	case COLL_ALLGATHER:
	case COLL_ALLGATHERV:
	case COLL_ALLTOALL:
		if (a->sbuf != MPI_IN_PLACE &&
		    (rc = check_data(comm, a->sbuf, a->scount, a->stype, call)))
			return rc;
		return check_blocks(comm, a, 1, kind == COLL_ALLGATHERV, call);

	case COLL_ALLTOALLV:
		if (a->sbuf != MPI_IN_PLACE &&
		    (rc = check_vector_data(comm, a->sbuf, a->scounts, a->sdispls, a->stype,
					    "send", call)))
			return rc;
		return check_blocks(comm, a, 1, 1, call);

	case COLL_ALLTOALLW:
		if (a->sbuf != MPI_IN_PLACE &&
		    (rc = check_vector(comm, a->scounts, a->sdispls, "send", call)))
			return rc;
		if ((rc = check_vector(comm, a->rcounts, a->rdispls, "receive", call)))
			return rc;
		if (a->rbuf == MPI_IN_PLACE)
			return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
					    "MPI_IN_PLACE is not allowed for the receive buffer");
		if ((a->sbuf != MPI_IN_PLACE && !a->stypes) || !a->rtypes)
			return mpi_shim_err(comm, MPI_ERR_ARG, call, "the %s types array is NULL",
					    !a->rtypes ? "receive" : "send");
		for (i = 0; i < p; i++) {
			if ((rc = mpi_shim_check_type(comm, a->rtypes[i], call)))
				return rc;
			if (a->sbuf != MPI_IN_PLACE &&
			    (rc = mpi_shim_check_type(comm, a->stypes[i], call)))
				return rc;
		}
		if (a->sbuf == MPI_IN_PLACE)
			return MPI_SUCCESS;
		for (i = 0, sbytes = 0, rbytes = 0; i < p; i++) {
			sbytes += bytes_of(a->scounts[i], a->stypes[i]);
			rbytes += bytes_of(a->rcounts[i], a->rtypes[i]);
		}
		if ((rc = check_alias(comm, a->sbuf, sbytes, a->rbuf, rbytes, call)))
			return rc;
		return check_fit(comm, a->scounts[r], a->stypes[r], a->rcounts[r], a->rtypes[r],
				 call);

	case COLL_REDUCE:
		if ((rc = mpi_shim_check_root(comm, root, call)) ||
		    (rc = check_reduction(comm, a, 1, a->rcount, call)))
			return rc;
		if (r != root)
			return MPI_SUCCESS;
		if ((rc = mpi_shim_check_buf(comm, a->rbuf, a->rcount, a->rtype, call)) ||
		    (rc = check_alias(comm, a->sbuf, bytes_of(a->rcount, a->rtype), a->rbuf,
				      bytes_of(a->rcount, a->rtype), call)))
			return rc;
		if (a->rbuf == MPI_IN_PLACE)
			return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
					    "MPI_IN_PLACE is for the send buffer, not the receive "
					    "buffer");
		return MPI_SUCCESS;

	case COLL_ALLREDUCE:
	case COLL_SCAN:
	case COLL_EXSCAN:
	case COLL_REDUCE_SCATTER_BLOCK:
	case COLL_REDUCE_SCATTER:
		if (kind == COLL_REDUCE_SCATTER) {
			if (!a->rcounts)
				return mpi_shim_err(comm, MPI_ERR_ARG, call,
						    "the receive counts array is NULL");
			for (i = 0, total = 0; i < p; i++) {
				if (a->rcounts[i] < 0)
					return mpi_shim_err(comm, MPI_ERR_COUNT, call,
							    "the receive count of rank %d is %d",
							    i, a->rcounts[i]);
				total += a->rcounts[i];
			}
			if (total > (size_t)0x7fffffff)
				return mpi_shim_err(comm, MPI_ERR_COUNT, call,
						    "the receive counts add up to %zu elements",
						    total);
		} else if (kind == COLL_REDUCE_SCATTER_BLOCK) {
			if ((rc = mpi_shim_check_count(comm, a->rcount, call)))
				return rc;
			total = (size_t)a->rcount * p;
			if (total > (size_t)0x7fffffff)
				return mpi_shim_err(comm, MPI_ERR_COUNT, call,
						    "%d ranks times %d elements is too many", p,
						    a->rcount);
		} else {
			total = (size_t)a->rcount;
		}
		if ((rc = check_reduction(comm, a, 0, (int)total, call)))
			return rc;
		{
			int mine = kind == COLL_REDUCE_SCATTER ? a->rcounts[r] : a->rcount;
			/* In place, the receive buffer holds the whole input. */
			int rcount = a->sbuf == MPI_IN_PLACE ? (int)total : mine;

			if (a->rbuf == MPI_IN_PLACE)
				return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
						    "MPI_IN_PLACE is for the send buffer, not the "
						    "receive buffer");
			if ((rc = mpi_shim_check_buf(comm, a->rbuf, rcount, a->rtype, call)) ||
			    (rc = check_alias(comm, a->sbuf, bytes_of((int)total, a->rtype),
					      a->rbuf, bytes_of(mine, a->rtype), call)))
				return rc;
		}
		return MPI_SUCCESS;

	default:
		return mpi_shim_err(comm, MPI_ERR_INTERN, call, "unknown collective %d", kind);
	}
}

/* ------------------------------------------------------------------ */
/* The blocking calls                                                  */
/* ------------------------------------------------------------------ */

/*
 * A call refused by its checks still takes its sequence number: when only
 * some ranks refuse (a root-only argument), the others go on in step.
 */
void coll_skip(MPI_Comm comm)
{
	if (mpi_shim_comm_ok(comm))
		comm->coll_seq++;
}

/*
 * A blocking Bcast on two ranks is the one message of its schedule
 * (coll_build_bcast), on the same context and tag, sent or received
 * without building the schedule: a program that broadcasts in a loop
 * pays a send or a receive per call, not a schedule's set-up as well.
 */
static int bcast_pair(MPI_Comm comm, const struct coll_args *a)
{
	int tag = coll_next_tag(comm);

	if (comm->rank == a->root)
		return mpi_shim_coll_send(a->rbuf, (size_t)a->rcount, a->rtype, 1 - a->root, tag,
					  comm);
	return mpi_shim_coll_recv(a->rbuf, (size_t)a->rcount, a->rtype, a->root, tag, comm,
				  MPI_STATUS_IGNORE);
}

/*
 * A blocking Reduce on two ranks, without building a schedule: the other
 * rank sends its vector, the root receives it and combines in rank order
 * (rank 0's op rank 1's, whatever the root), with the tree's throttle
 * (runahead_check) on the same context and tag as the tree's messages.
 * The schedule serves only for its scratch buffer.
 */
static int reduce_pair(MPI_Comm comm, const struct coll_args *a)
{
	const void *own = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
	size_t n = (size_t)a->rcount;
	MPI_Datatype t = a->rtype;
	int other = 1 - comm->rank, throttle, rc;
	struct coll_sched s;
	void *in;

	coll_sched_init(&s, comm, a->op);
	throttle = runahead_check(&s);
	if (comm->rank != a->root) {
		rc = mpi_shim_coll_send(own, n, t, other, s.tag, comm);
		if (!rc && throttle)
			rc = mpi_shim_coll_recv(NULL, 0, MPI_BYTE, other, s.tag, comm,
						MPI_STATUS_IGNORE);
		coll_sched_destroy(&s);
		return rc;
	}
	/* Rank 0's vector is the operation's first: "in" holds it, and the
	 * result lands in the other buffer (in op inout goes to inout). */
	if (a->root == 1 || own == a->rbuf)
		in = coll_tmp(&s, n, t);
	else
		in = a->rbuf;
	rc = in ? 0 : MPI_ERR_NO_MEM;
	if (!rc && a->root == 1)
		rc = coll_copy_now(own, a->rbuf, n, t);
	if (!rc)
		rc = mpi_shim_coll_recv(in, n, t, other, s.tag, comm, MPI_STATUS_IGNORE);
	if (!rc && throttle)
		rc = mpi_shim_coll_send(NULL, 0, MPI_BYTE, other, s.tag, comm);
	if (!rc) {
		if (a->root == 1) {
			mpi_shim_op_apply(a->op, in, a->rbuf, n, t);
		} else {
			/* in holds rank 1's vector: own op in goes to in. */
			mpi_shim_op_apply(a->op, own, in, n, t);
			rc = coll_copy_now(in, a->rbuf, n, t);
		}
	}
	coll_sched_destroy(&s);
	return rc;
}

int coll_blocking(enum coll_kind kind, MPI_Comm comm, const struct coll_args *a,
		  const char *call)
{
	struct coll_sched s;
	int rc;

	rc = coll_check(kind, comm, a, call);
	if (rc) {
		coll_skip(comm);
		return rc;
	}
	if (kind == COLL_BCAST && comm->size == 2 && !mpi_shim_is_inter(comm)) {
		rc = bcast_pair(comm, a);
	} else if (kind == COLL_REDUCE && comm->size == 2 && !mpi_shim_is_inter(comm)) {
		rc = reduce_pair(comm, a);
	} else {
		coll_sched_init(&s, comm, a->op);
		rc = coll_build(kind, &s, a);
		if (!rc)
			rc = coll_sched_run(&s);
		coll_sched_destroy(&s);
	}
	if (rc)
		return mpi_shim_err(comm, rc, call, "rank %d of %d: %s", comm->rank, comm->size,
				    rc == MPI_ERR_TRUNCATE ?
					    "a message was longer than its receive buffer "
					    "(do all ranks pass matching counts and types?)" :
					    "the collective failed");
	return MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { 0 };

	return coll_blocking(COLL_BARRIER, comm, &a, "MPI_Barrier");
}
MPI_SHIM_ALIAS(MPI_Barrier);

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root };

	return coll_blocking(COLL_BCAST, comm, &a, "MPI_Bcast");
}
MPI_SHIM_ALIAS(MPI_Bcast);

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return coll_blocking(COLL_GATHER, comm, &a, "MPI_Gather");
}
MPI_SHIM_ALIAS(MPI_Gather);

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype, .root = root };

	return coll_blocking(COLL_GATHERV, comm, &a, "MPI_Gatherv");
}
MPI_SHIM_ALIAS(MPI_Gatherv);

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			       .root = root };

	return coll_blocking(COLL_SCATTER, comm, &a, "MPI_Scatter");
}
MPI_SHIM_ALIAS(MPI_Scatter);

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
			       .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = recvtype, .root = root };

	return coll_blocking(COLL_SCATTERV, comm, &a, "MPI_Scatterv");
}
MPI_SHIM_ALIAS(MPI_Scatterv);

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return coll_blocking(COLL_ALLGATHER, comm, &a, "MPI_Allgather");
}
MPI_SHIM_ALIAS(MPI_Allgather);

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		    MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
			       .rtype = recvtype };

	return coll_blocking(COLL_ALLGATHERV, comm, &a, "MPI_Allgatherv");
}
MPI_SHIM_ALIAS(MPI_Allgatherv);

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			       .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype };

	return coll_blocking(COLL_ALLTOALL, comm, &a, "MPI_Alltoall");
}
MPI_SHIM_ALIAS(MPI_Alltoall);

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtype = recvtype };

	return coll_blocking(COLL_ALLTOALLV, comm, &a, "MPI_Alltoallv");
}
MPI_SHIM_ALIAS(MPI_Alltoallv);

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
		   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
			       .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rdispls = rdispls, .rtypes = recvtypes };

	return coll_blocking(COLL_ALLTOALLW, comm, &a, "MPI_Alltoallw");
}
MPI_SHIM_ALIAS(MPI_Alltoallw);

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		int root, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op, .root = root };

	return coll_blocking(COLL_REDUCE, comm, &a, "MPI_Reduce");
}
MPI_SHIM_ALIAS(MPI_Reduce);

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		   MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return coll_blocking(COLL_ALLREDUCE, comm, &a, "MPI_Allreduce");
}
MPI_SHIM_ALIAS(MPI_Allreduce);

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
			MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
			       .rtype = datatype, .op = op };

	return coll_blocking(COLL_REDUCE_SCATTER, comm, &a, "MPI_Reduce_scatter");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter);

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount,
			       .rtype = datatype, .op = op };

	return coll_blocking(COLL_REDUCE_SCATTER_BLOCK, comm, &a, "MPI_Reduce_scatter_block");
}
MPI_SHIM_ALIAS(MPI_Reduce_scatter_block);

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	      MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return coll_blocking(COLL_SCAN, comm, &a, "MPI_Scan");
}
MPI_SHIM_ALIAS(MPI_Scan);

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		MPI_Op op, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	struct coll_args a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
			       .rtype = datatype, .op = op };

	return coll_blocking(COLL_EXSCAN, comm, &a, "MPI_Exscan");
}
MPI_SHIM_ALIAS(MPI_Exscan);
