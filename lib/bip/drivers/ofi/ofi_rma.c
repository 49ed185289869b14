/* SPDX-License-Identifier: MIT */
/*
 * ofi_rma.c - one-sided operations (nic.h's rma_ ops, bip_rma(3)) through
 * libfabric's FI_RMA and FI_ATOMIC, on the endpoint the messages use.
 *
 * Which providers.  ofi.c asks for each provider's entry with FI_RMA and
 * FI_ATOMIC on top of FI_TAGGED, and opens that one when the provider
 * has it (else the plain one: the messages never depend on this file).
 * bip_ofi_rma_init then turns them on only if a key fits in 64 bits
 * (mr_key_size <= 8) and fi_query_atomic accepts every (operation, type)
 * bip_rma(3) names in each of the three forms used (plain, fetching,
 * compare): a layer above sends every operation of a capable node to it
 * (the MPI shim's windows), so a provider that lacks one is not capable
 * at all rather than failing one call.  tcp;ofi_rxm and sockets pass;
 * shm and udp;ofi_rxd are left out by name for what was seen of them in
 * libfabric 1.17 (bip_ofi_rma_init says what).  BIP_OFI_RMA=0 never asks
 * for them; BIP_OFI_RMA=1 says why a provider has none.
 *
 * Keys and the directory.  rma_expose registers [base, base + len) with
 * FI_REMOTE_READ and FI_REMOTE_WRITE in a free slot of this process's
 * directory.  BIP's key is (node + 1) << 40 | generation << 16 | slot:
 * unique in the job, and a slot used again gets a new generation, so a
 * key withdrawn, forged, or of another node names no region.  Without
 * FI_MR_PROV_KEY it is also the provider's key; with it the provider's
 * goes in the directory.  The directory is an array of RMA_SLOTS entries
 * {key, provider key, address of offset 0 (the base with FI_MR_VIRT_ADDR,
 * else 0), length}, registered for FI_REMOTE_READ at start-up; its key,
 * address and size go in the address exchange (struct bip_ofi_blob).
 * Before its first step an operation reads its entry at the target
 * (fi_read of 32 bytes into this process's landing entry for that target; its
 * own directory is read in place) and checks it: another key -EACCES,
 * not all inside the region -ERANGE, both decided at the origin, before
 * anything is written.  The check is needed, not only the provider's:
 * tcp;ofi_rxm answers an access outside a registration by closing the
 * connection, cancelling what was on it (messages too).  Its price is a
 * second round trip per operation.  What remains unchecked is a region
 * withdrawn between the read and the operation, which a program that
 * withdraws only what nobody uses any more (MPI_Win_free is collective)
 * never meets.  Withdrawing clears the entry first, then closes the
 * registration.

 * Local buffers.  Where the provider asks for FI_MR_LOCAL (or
 * BIP_OFI_MR_LOCAL=1), the origin's buffers are registered through the
 * driver's cache (ofi_long.c: keyed by address range, 64 entries, least
 * recently used evicted), held for the operation's life; withdrawing a
 * region drops the unused entries over it, close drops them all.
 *
 * Operations.  put: fi_writemsg; get: fi_readmsg; atomics: fi_atomicmsg,
 * fi_fetch_atomicmsg (when the values before are wanted, and for NO_OP,
 * as FI_ATOMIC_READ), fi_compare_atomicmsg (CSWAP); REPLACE is
 * FI_ATOMIC_WRITE.  A put larger than the largest message (the driver's
 * chunk) or an atomic of more elements than fi_query_atomic allows goes
 * in steps, one after the other.  Puts and non-fetching atomics ask for
 * FI_DELIVERY_COMPLETE: their completion means the data is in the
 * target's memory, as nic.h promises.
 *
 * Order.  nic.h promises that operations to one node are executed in the
 * order posted.  Providers promise less (tcp;ofi_rxm: no write after
 * read, nothing across RMA and atomics, no data order: max_order_*_size
 * 0), so each target has a queue here and one operation (one step) in
 * flight: the next is posted when the previous has completed.  That
 * costs a round trip per operation to one target; operations to
 * different targets overlap.  A step the provider refuses for want of
 * room (-FI_EAGAIN), or that waits for the link to its node (ofi_link.c),
 * stays at its queue's head and is posted again from poll.
 *
 * Completions.  The completion queue's entry comes to bip_ofi_rma_done;
 * an operation's last step reports bip_core_rma_done.  Exposure and
 * withdrawal complete at once, reported from the next poll, as are
 * operations that could not be posted at all.  A failed operation's
 * status: besides the origin's own checks (above), -EACCES for a key
 * the target's provider refuses (FI_EACCES, FI_ENOKEY), -ERANGE for an
 * access it finds outside (FI_EINVAL, ERANGE, FI_EFAULT), else the
 * provider's errno (tcp;ofi_rxm's -ECANCELED, -ENOTCONN after a lost
 * connection).
 *
 * Progress at the target.  Software providers (FI_PROGRESS_MANUAL for
 * data: tcp;ofi_rxm, udp;ofi_rxd) execute an operation on a process's
 * memory only while that process drives its endpoint.  A node is
 * therefore capable (bip_rma_capable) only when its memory is served
 * without it: the provider progresses data itself (FI_PROGRESS_AUTO), or
 * its process runs BIP's progress thread (BIP_PROGRESS_THREAD=1, which
 * bip_init starts after the drivers open).  Each process says which in
 * the address exchange (struct bip_ofi_blob's rma: BIP_OFI_RMA_ON and
 * BIP_OFI_RMA_SERVED), so every process knows it of every other, whatever
 * their environments; a node that is not served is not capable (this
 * one too: one rule for every node), and a layer above falls back to its
 * messages.  This process's own memory is reached through the provider
 * too (its own address in the address vector), so that its operations
 * are atomic with the other nodes'.  With the thread serving them, the
 * application's threads sleep on a futex word that polls ring when they
 * find something (ofi.h's bell_mode), not on the completion queue's
 * descriptor, which every one-sided packet would make readable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "bip.h"
#include "ofi.h"

/* The forms of an atomic, for fi_query_atomic. */
enum rma_form { RMA_PLAIN, RMA_FETCH, RMA_COMPARE, RMA_FORMS };

#define RMA_OPS (BIP_RMA_CSWAP + 1)
#define RMA_TYPES (BIP_RMA_DOUBLE + 1)

/*
 * The directory: one entry per slot, read by the other nodes (fi_read of
 * one entry) before their first step of each operation.  Its layout is
 * part of the wire protocol (its key, address and number of slots go in
 * the address exchange, struct bip_ofi_blob).
 */
#define RMA_SLOTS 1024                    /* exposures at once, per process */
#define RMA_SLOT_MASK 0xffffull           /* a key's bits 0..15: the slot */
#define RMA_GEN_SHIFT 16                  /* bits 16..39: the slot's generation */
#define RMA_GEN_MASK 0xffffffu
#define RMA_NODE_SHIFT 40                 /* bits 40..63: the node + 1 */
#define RMA_KEY_DIR 0xffffu               /* the directory's own slot number in its key */
#define RMA_KEY_LANDING 0xfffeu           /* ... and the landing zone's */

struct rma_dirent {
	uint64_t key;                     /* BIP's key of the region, 0: slot free */
	uint64_t prov_key;                /* the provider's key of its registration */
	uint64_t addr;                    /* the target address of offset 0 (FI_MR_VIRT_ADDR:
					   * base; else 0) */
	uint64_t len;                     /* bytes */
};
_Static_assert(sizeof(struct rma_dirent) == 32, "directory entry layout");

/* An exposed region of this process, in the slot of the same number. */
struct rma_region {
	struct fid_mr *mr;                /* NULL: slot free */
	uintptr_t base;
	size_t len;
	uint32_t gen;
};

/* An operation, queued at its target, its head in flight. */
struct rma_op {
	struct bip_ofi_ctx ctx;           /* first: the completion's context */
	struct rma_op *next;
	uint64_t cookie;
	struct bip_nic_rma a;
	size_t done;                      /* bytes (put, get) or elements (atomic) completed */
	size_t step;                      /* ... in flight */
	struct bip_ofi_mr *mr[3];         /* local registrations: data, compare, result */
	void *scratch;                    /* the values before, nobody's (CSWAP, NO_OP) */
	int failed;                       /* -errno: could not be posted, reported at poll */
	uint8_t looking;                  /* the directory entry is being read */
	uint8_t looked;                   /* ... has been, and said yes: */
	uint64_t prov_key, addr;          /* the region's key and address at the target */
};

struct rma_target {
	struct rma_op *head, *tail;
	uint8_t busy;                     /* the head is in flight */
	uint8_t stalled;                  /* the head waits for room or the link */
};

/* An end reported from the next poll. */
struct rma_end {
	uint64_t cookie;
	int status;
	uint64_t key;
};

struct bip_ofi_rma {
	struct rma_target *targets;       /* numnodes of them */
	int nstalled;
	struct rma_region regions[RMA_SLOTS];
	struct rma_dirent *dir;           /* RMA_SLOTS entries, the others read them */
	struct fid_mr *dir_mr;
	struct rma_dirent *landing;       /* per target: where its entry is read into */
	struct fid_mr *landing_mr;        /* (FI_MR_LOCAL) */
	int virt_addr;                    /* FI_MR_VIRT_ADDR */
	struct rma_end *ends;
	int nends, ends_cap;
	int prov_key;                     /* FI_MR_PROV_KEY */
	/* elements per step, by form, operation and type (fi_query_atomic) */
	size_t maxcount[RMA_FORMS][RMA_OPS][RMA_TYPES];
};

static const enum fi_datatype fi_type_of[RMA_TYPES] = {
	[BIP_RMA_INT8] = FI_INT8,     [BIP_RMA_INT16] = FI_INT16,   [BIP_RMA_INT32] = FI_INT32,
	[BIP_RMA_INT64] = FI_INT64,   [BIP_RMA_UINT8] = FI_UINT8,   [BIP_RMA_UINT16] = FI_UINT16,
	[BIP_RMA_UINT32] = FI_UINT32, [BIP_RMA_UINT64] = FI_UINT64, [BIP_RMA_FLOAT] = FI_FLOAT,
	[BIP_RMA_DOUBLE] = FI_DOUBLE,
};

static const enum fi_op fi_op_of[RMA_OPS] = {
	[BIP_RMA_SUM] = FI_SUM,     [BIP_RMA_PROD] = FI_PROD,
	[BIP_RMA_MIN] = FI_MIN,     [BIP_RMA_MAX] = FI_MAX,
	[BIP_RMA_BAND] = FI_BAND,   [BIP_RMA_BOR] = FI_BOR,
	[BIP_RMA_BXOR] = FI_BXOR,   [BIP_RMA_LAND] = FI_LAND,
	[BIP_RMA_LOR] = FI_LOR,     [BIP_RMA_LXOR] = FI_LXOR,
	[BIP_RMA_REPLACE] = FI_ATOMIC_WRITE, [BIP_RMA_NO_OP] = FI_ATOMIC_READ,
	[BIP_RMA_CSWAP] = FI_CSWAP,
};

/* The form an atomic takes: CSWAP compares, NO_OP and those whose values
 * before are wanted fetch. */
static enum rma_form form_of(int op, const void *result)
{
	if (op == BIP_RMA_CSWAP)
		return RMA_COMPARE;
	return result || op == BIP_RMA_NO_OP ? RMA_FETCH : RMA_PLAIN;
}

/* Whether bip_rma(3) has (op, type) in this form. */
static int form_exists(enum rma_form form, int op, int type)
{
	if ((type == BIP_RMA_FLOAT || type == BIP_RMA_DOUBLE) && op >= BIP_RMA_BAND &&
	    op <= BIP_RMA_LXOR)
		return 0;
	if (op == BIP_RMA_CSWAP)
		return form == RMA_COMPARE;
	if (op == BIP_RMA_NO_OP)
		return form == RMA_FETCH;
	return form != RMA_COMPARE;
}

int bip_ofi_rma_wanted(void)
{
	const char *v = getenv("BIP_OFI_RMA");

	return !v || strcmp(v, "0");
}

/* The reason they are off, said only when BIP_OFI_RMA=1 asked for them. */
static void rma_off(struct bip_ofi *ofi, const char *why)
{
	const char *v = getenv("BIP_OFI_RMA");

	if (v && !strcmp(v, "1"))
		fprintf(stderr, "bip: node %d: ofi (%s): no one-sided operations: %s\n",
			ofi->mynode, ofi->prov, why);
}

/* Every (operation, type, form) the provider must take: 0, or -1 with the
 * first it lacks in why. */
static int query_atomics(struct bip_ofi *ofi, struct bip_ofi_rma *r, char *why, size_t len)
{
	static const uint64_t flags[RMA_FORMS] = { 0, FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC };
	struct fi_atomic_attr attr;
	int f, op, type, rc;

	for (f = 0; f < RMA_FORMS; f++)
		for (op = BIP_RMA_SUM; op < RMA_OPS; op++)
			for (type = BIP_RMA_INT8; type < RMA_TYPES; type++) {
				if (!form_exists(f, op, type))
					continue;
				memset(&attr, 0, sizeof(attr));
				rc = fi_query_atomic(ofi->domain, fi_type_of[type], fi_op_of[op],
						     &attr, flags[f]);
				if (rc || !attr.count || attr.size != bip_nic_rma_type_size(type)) {
					snprintf(why, len, "fi_query_atomic: operation %d on "
						 "type %d (form %d): %s", fi_op_of[op],
						 fi_type_of[type], f,
						 rc ? fi_strerror(-rc) : "no count");
					return -1;
				}
				r->maxcount[f][op][type] = attr.count;
			}
	return 0;
}

/* The directory, and the landing zone of the entries read: 0 or -errno. */
static int dir_open(struct bip_ofi *ofi, struct bip_ofi_rma *r)
{
	uint64_t node = (uint64_t)(ofi->mynode + 1) << RMA_NODE_SHIFT;
	size_t dlen = RMA_SLOTS * sizeof(*r->dir);
	size_t llen = ((size_t)ofi->numnodes * sizeof(*r->landing) + 4095) & ~4095ul;
	int rc;

	r->dir = aligned_alloc(4096, dlen);
	r->landing = aligned_alloc(4096, llen);
	if (!r->dir || !r->landing)
		return -ENOMEM;
	memset(r->dir, 0, dlen);
	rc = fi_mr_reg(ofi->domain, r->dir, dlen, FI_REMOTE_READ, 0, node | RMA_KEY_DIR, 0,
		       &r->dir_mr, NULL);
	if (rc == 0 && ofi->mr_local)
		rc = fi_mr_reg(ofi->domain, r->landing, llen, FI_READ, 0, node | RMA_KEY_LANDING, 0,
			       &r->landing_mr, NULL);
	return rc;
}

static void rma_free(struct bip_ofi_rma *r)
{
	if (r->landing_mr)
		fi_close(&r->landing_mr->fid);
	if (r->dir_mr)
		fi_close(&r->dir_mr->fid);
	free(r->landing);
	free(r->dir);
	free(r->ends);
	free(r->targets);
	free(r);
}

void bip_ofi_rma_init(struct bip_ofi *ofi)
{
	const struct fi_info *info = ofi->info;
	struct bip_ofi_rma *r;
	char why[160];
	int rc;

	if (!bip_ofi_rma_wanted() || !info)
		return;
	if ((info->caps & BIP_OFI_RMA_CAPS) != BIP_OFI_RMA_CAPS) {
		rma_off(ofi, "the provider has no FI_RMA and FI_ATOMIC");
		return;
	}
	if (!strcmp(info->fabric_attr->prov_name, "shm")) {
		/* libfabric 1.17's shm: a fetching atomic of 6000 elements in
		 * steps of the 512 fi_query_atomic allows returned wrong values
		 * before from the sixth step on.  Its peers share a host, where
		 * BIP's shm driver and the MPI shim's direct windows serve. */
		rma_off(ofi, "not with the shm provider (wrong values of long fetching atomics)");
		return;
	}
	if (strstr(info->fabric_attr->prov_name, "ofi_rxd")) {
		/* libfabric 1.17's udp;ofi_rxd: a process crashed inside
		 * fi_cq_read during concurrent fetch-and-adds on one word
		 * (with MALLOC_PERTURB_ set), not understood yet. */
		rma_off(ofi, "not with ofi_rxd (a crash in its progress, not understood yet)");
		return;
	}
	if (info->domain_attr->mr_key_size > sizeof(uint64_t)) {
		rma_off(ofi, "the provider's keys are longer than 64 bits");
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rma_off(ofi, "out of memory");
		return;
	}
	r->targets = calloc((size_t)ofi->numnodes, sizeof(*r->targets));
	if (!r->targets) {
		rma_free(r);
		rma_off(ofi, "out of memory");
		return;
	}
	if (query_atomics(ofi, r, why, sizeof(why)) < 0) {
		rma_free(r);
		rma_off(ofi, why);
		return;
	}
	rc = dir_open(ofi, r);
	if (rc) {
		rma_free(r);
		snprintf(why, sizeof(why), "cannot register its directory: %s",
			 rc == -ENOMEM ? "out of memory" : fi_strerror(-rc));
		rma_off(ofi, why);
		return;
	}
	r->prov_key = !!(info->domain_attr->mr_mode & FI_MR_PROV_KEY);
	r->virt_addr = !!(info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
	ofi->rma = r;
	ofi->rma_flags = BIP_OFI_RMA_ON;
	if (info->domain_attr->data_progress == FI_PROGRESS_AUTO || bip_async_requested())
		ofi->rma_flags |= BIP_OFI_RMA_SERVED;
}

void bip_ofi_rma_publish(struct bip_ofi *ofi, struct bip_ofi_blob *me)
{
	struct bip_ofi_rma *r = ofi->rma;

	me->rma = ofi->rma_flags;
	if (!r)
		return;
	me->rma_dir_key = fi_mr_key(r->dir_mr);
	me->rma_dir_addr = r->virt_addr ? (uint64_t)(uintptr_t)r->dir : 0;
	me->rma_slots = RMA_SLOTS;
}

void bip_ofi_rma_peer(struct bip_ofi *ofi, int node, const struct bip_ofi_blob *b)
{
	struct bip_ofi_peer *p = &ofi->peers[node];

	p->rma = (uint8_t)b->rma;
	p->rma_dir_key = b->rma_dir_key;
	p->rma_dir_addr = b->rma_dir_addr;
	p->rma_slots = b->rma_slots;
}

void bip_ofi_rma_fini(struct bip_ofi *ofi)
{
	struct bip_ofi_rma *r = ofi->rma;
	int i;

	if (!r)
		return;
	/* Operations in flight are lost with the endpoint; their local
	 * registrations go with the cache (ofi_long.c). */
	for (i = 0; i < ofi->numnodes; i++)
		while (r->targets[i].head) {
			struct rma_op *op = r->targets[i].head;

			r->targets[i].head = op->next;
			free(op->scratch);
			free(op);
		}
	for (i = 0; i < RMA_SLOTS; i++)
		if (r->regions[i].mr)
			fi_close(&r->regions[i].mr->fid);
	rma_free(r);
	ofi->rma = NULL;
}

/* Room for one more end: 0 or -ENOMEM. */
static int ends_room(struct bip_ofi_rma *r)
{
	int cap = r->ends_cap ? 2 * r->ends_cap : 16;
	struct rma_end *n;

	if (r->nends < r->ends_cap)
		return 0;
	n = realloc(r->ends, (size_t)cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->ends = n;
	r->ends_cap = cap;
	return 0;
}

/* Report (cookie, status, key) from the next poll: 0 or -ENOMEM. */
static int end_later(struct bip_ofi_rma *r, uint64_t cookie, int status, uint64_t key)
{
	if (ends_room(r) < 0)
		return -ENOMEM;
	r->ends[r->nends++] = (struct rma_end){ .cookie = cookie, .status = status, .key = key };
	return 0;
}

/* A provider's error as bip_rma_test(3) names them. */
static int status_of(int err)
{
	switch (err) {
	case FI_EACCES:
	case FI_ENOKEY:
	case FI_EKEYREJECTED:
		return -EACCES;
	case FI_EINVAL:
	case ERANGE:
	case FI_EFAULT:
		return -ERANGE;
	}
	return err > 0 && err < FI_ERRNO_OFFSET ? -err : -EIO;
}

/* --- capability, exposure --- */

int bip_ofi_rma_capable(struct bip_nic *nic, int node)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	const struct bip_ofi_peer *p;

	if (!ofi->rma || node < 0 || node >= ofi->numnodes)
		return 0;
	p = &ofi->peers[node];
	/* This node too, by the same rule, though its own operations move
	 * while it waits for them: one rule for every node of a job. */
	return (p->served || node == ofi->mynode) &&
	       (p->rma & (BIP_OFI_RMA_ON | BIP_OFI_RMA_SERVED)) ==
		       (BIP_OFI_RMA_ON | BIP_OFI_RMA_SERVED);
}

int bip_ofi_rma_expose(struct bip_nic *nic, void *base, size_t len, uint64_t cookie)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	struct bip_ofi_rma *r = ofi->rma;
	struct rma_region *g;
	struct rma_dirent *d;
	uint64_t key;
	int slot, rc;

	if (!r)
		return -ENOTSUP;
	for (slot = 0; slot < RMA_SLOTS && r->regions[slot].mr; slot++)
		;
	if (slot == RMA_SLOTS)
		return -ENOSPC;
	if (ends_room(r) < 0) /* nothing may fail after the registration */
		return -ENOMEM;
	g = &r->regions[slot];
	g->gen = (g->gen + 1) & RMA_GEN_MASK;
	if (!g->gen)
		g->gen = 1;
	key = (uint64_t)(ofi->mynode + 1) << RMA_NODE_SHIFT |
	      (uint64_t)g->gen << RMA_GEN_SHIFT | (uint64_t)slot;
	rc = fi_mr_reg(ofi->domain, base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0,
		       &g->mr, NULL);
	if (rc) {
		g->mr = NULL;
		fprintf(stderr, "bip: node %d: ofi: fi_mr_reg of %zu bytes at %p for one-sided "
			"operations: %s\n", ofi->mynode, len, base, fi_strerror(-rc));
		return rc == -FI_ENOMEM ? -ENOMEM : -EIO;
	}
	g->base = (uintptr_t)base;
	g->len = len;
	d = &r->dir[slot];
	d->prov_key = r->prov_key ? fi_mr_key(g->mr) : key;
	d->addr = r->virt_addr ? (uint64_t)(uintptr_t)base : 0;
	d->len = len;
	/* The key last: a reader that sees it sees the rest (the provider
	 * reads the entry from this process's progress, under its lock, or
	 * with its own ordering after the expose has completed). */
	__atomic_store_n(&d->key, key, __ATOMIC_RELEASE);
	end_later(r, cookie, 0, key);
	return 0;
}

/* The slot of key if it is this process's and exposed, else -1. */
static int own_slot(const struct bip_ofi *ofi, uint64_t key)
{
	uint64_t slot = key & RMA_SLOT_MASK;

	if (key >> RMA_NODE_SHIFT != (uint64_t)ofi->mynode + 1 || slot >= RMA_SLOTS ||
	    ofi->rma->dir[slot].key != key)
		return -1;
	return (int)slot;
}

int bip_ofi_rma_withdraw(struct bip_nic *nic, uint64_t key, uint64_t cookie)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	struct bip_ofi_rma *r = ofi->rma;
	struct rma_region *g;
	int slot;

	if (!r)
		return -ENOTSUP;
	slot = own_slot(ofi, key);
	if (slot < 0)
		return end_later(r, cookie, -EINVAL, 0); /* a status, as the board's */
	if (end_later(r, cookie, 0, 0) < 0)
		return -ENOMEM;
	/* The entry first: the nodes that read it from now on are refused
	 * before they send anything; then the registration. */
	__atomic_store_n(&r->dir[slot].key, 0, __ATOMIC_RELEASE);
	g = &r->regions[slot];
	fi_close(&g->mr->fid);
	g->mr = NULL;
	bip_ofi_mr_forget(ofi, (void *)g->base, g->len);
	return 0;
}

/* --- operations --- */

/* The registration of a local buffer, where the provider needs one, in
 * op->mr[which] (once, for the operation's life): its descriptor, or NULL. */
static int local_desc(struct bip_ofi *ofi, struct rma_op *op, int which, const void *buf,
		      size_t len, void **desc_p)
{
	if (!ofi->mr_local || !buf) {
		*desc_p = NULL;
		return 0;
	}
	if (!op->mr[which]) {
		op->mr[which] = bip_ofi_mr_get(ofi, buf, len);
		if (!op->mr[which])
			return -errno;
	}
	*desc_p = fi_mr_desc(op->mr[which]->mr);
	return 0;
}

/* fi_*msg's answer as 0, -EAGAIN or -errno. */
static int posted(ssize_t rc)
{
	if (rc == 0)
		return 0;
	if (rc == -FI_EAGAIN)
		return -EAGAIN;
	return status_of((int)-rc);
}

static int issue_put_get(struct bip_ofi *ofi, struct rma_op *op, fi_addr_t addr)
{
	const struct bip_nic_rma *a = &op->a;
	size_t step = a->len - op->done;
	struct iovec iov;
	struct fi_rma_iov riov;
	struct fi_msg_rma m;
	void *desc;
	int rc;

	rc = local_desc(ofi, op, 0, a->buf, a->len, &desc);
	if (rc < 0)
		return rc;
	if (step > ofi->chunk)
		step = ofi->chunk;
	iov = (struct iovec){ .iov_base = (uint8_t *)a->buf + op->done, .iov_len = step };
	riov = (struct fi_rma_iov){ .addr = op->addr + a->offset + op->done, .len = step,
				    .key = op->prov_key };
	m = (struct fi_msg_rma){ .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = addr,
				 .rma_iov = &riov, .rma_iov_count = 1, .context = &op->ctx.fi };
	op->step = step;
	if (a->kind == BIP_NIC_RMA_PUT)
		return posted(fi_writemsg(ofi->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	return posted(fi_readmsg(ofi->ep, &m, FI_COMPLETION));
}

static int issue_atomic(struct bip_ofi *ofi, struct rma_op *op, fi_addr_t addr)
{
	const struct bip_nic_rma *a = &op->a;
	enum rma_form form = form_of(a->op, a->result);
	size_t size = bip_nic_rma_type_size(a->type), step = a->count - op->done;
	size_t max = ofi->rma->maxcount[form][a->op][a->type];
	void *result = a->result, *operand, *desc[3] = { NULL, NULL, NULL };
	struct fi_ioc ioc, cmp, res;
	struct fi_rma_ioc rioc;
	struct fi_msg_atomic m;
	int rc;

	if (form != RMA_PLAIN && !result) {
		if (!op->scratch)
			op->scratch = malloc(a->count * size);
		if (!op->scratch)
			return -ENOMEM;
		result = op->scratch;
	}
	/* FI_ATOMIC_READ ignores its operand; give it memory all the same. */
	operand = a->op == BIP_RMA_NO_OP ? result : (void *)(uintptr_t)a->operand;
	rc = local_desc(ofi, op, 0, operand, a->count * size, &desc[0]);
	if (rc == 0 && form == RMA_COMPARE)
		rc = local_desc(ofi, op, 1, a->compare, size, &desc[1]);
	if (rc == 0 && form != RMA_PLAIN)
		rc = local_desc(ofi, op, 2, result, a->count * size, &desc[2]);
	if (rc < 0)
		return rc;
	if (step > max)
		step = max;
	ioc = (struct fi_ioc){ .addr = (uint8_t *)operand + op->done * size, .count = step };
	rioc = (struct fi_rma_ioc){ .addr = op->addr + a->offset + op->done * size, .count = step,
				    .key = op->prov_key };
	m = (struct fi_msg_atomic){ .msg_iov = &ioc, .desc = &desc[0], .iov_count = 1,
				    .addr = addr, .rma_iov = &rioc, .rma_iov_count = 1,
				    .datatype = fi_type_of[a->type], .op = fi_op_of[a->op],
				    .context = &op->ctx.fi };
	op->step = step;
	if (form == RMA_PLAIN)
		return posted(fi_atomicmsg(ofi->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	res = (struct fi_ioc){ .addr = (uint8_t *)result + op->done * size, .count = step };
	if (form == RMA_FETCH)
		return posted(fi_fetch_atomicmsg(ofi->ep, &m, &res, &desc[2], 1, FI_COMPLETION));
	cmp = (struct fi_ioc){ .addr = (void *)(uintptr_t)a->compare, .count = 1 };
	return posted(fi_compare_atomicmsg(ofi->ep, &m, &cmp, &desc[1], 1, &res, &desc[2], 1,
					   FI_COMPLETION));
}

/* Whether op may go to the region entry d describes: 0 (and op knows
 * where it is), -EACCES (not the key's region, or withdrawn) or -ERANGE
 * (not all of it inside). */
static int check_entry(struct rma_op *op, const struct rma_dirent *d)
{
	const struct bip_nic_rma *a = &op->a;
	uint64_t extent = a->kind == BIP_NIC_RMA_ATOMIC ?
				  a->count * bip_nic_rma_type_size(a->type) :
				  a->len;

	if (d->key != a->key)
		return -EACCES;
	if (a->offset > d->len || extent > d->len - a->offset)
		return -ERANGE;
	op->prov_key = d->prov_key;
	op->addr = d->addr;
	op->looked = 1;
	return 0;
}

/* Read the entry of op's key in its target's directory into the target's
 * landing zone: 0, -EAGAIN, or -EACCES (a key no directory has). */
static int lookup(struct bip_ofi *ofi, struct rma_op *op)
{
	struct bip_ofi_rma *r = ofi->rma;
	const struct bip_ofi_peer *p = &ofi->peers[op->a.node];
	uint64_t slot = op->a.key & RMA_SLOT_MASK;
	struct rma_dirent *land = &r->landing[op->a.node];
	void *desc = r->landing_mr ? fi_mr_desc(r->landing_mr) : NULL;
	struct iovec iov = { .iov_base = land, .iov_len = sizeof(*land) };
	struct fi_rma_iov riov;
	struct fi_msg_rma m;
	int rc;

	if (op->a.key >> RMA_NODE_SHIFT != (uint64_t)op->a.node + 1 || slot >= p->rma_slots)
		return -EACCES;
	riov = (struct fi_rma_iov){ .addr = p->rma_dir_addr + slot * sizeof(*land),
				    .len = sizeof(*land), .key = p->rma_dir_key };
	m = (struct fi_msg_rma){ .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = p->addr,
				 .rma_iov = &riov, .rma_iov_count = 1, .context = &op->ctx.fi };
	rc = posted(fi_readmsg(ofi->ep, &m, FI_COMPLETION));
	if (rc == 0)
		op->looking = 1;
	return rc;
}

/* Post op's next step: 0, -EAGAIN (no room, or the link is not up yet:
 * again later), or -errno (the operation has failed). */
static int issue(struct bip_ofi *ofi, struct rma_op *op)
{
	int node = op->a.node, slot, rc;

	if (node != ofi->mynode && ofi->peers[node].link != BIP_OFI_LINK_UP) {
		rc = bip_ofi_link_need(ofi, node);
		if (rc)
			return rc == -EAGAIN ? -EAGAIN : rc;
	}
	if (!op->looked) {
		/* This process's own directory is read in place. */
		if (node != ofi->mynode)
			return lookup(ofi, op);
		slot = own_slot(ofi, op->a.key);
		if (slot < 0)
			return -EACCES;
		rc = check_entry(op, &ofi->rma->dir[slot]);
		if (rc < 0)
			return rc;
	}
	if (op->a.kind == BIP_NIC_RMA_ATOMIC)
		return issue_atomic(ofi, op, ofi->peers[node].addr);
	return issue_put_get(ofi, op, ofi->peers[node].addr);
}

/* The operation at t's head has ended: report it, free it. */
static void op_end(struct bip_ofi *ofi, struct rma_target *t, int status)
{
	struct rma_op *op = t->head;
	int i;

	t->head = op->next;
	if (!t->head)
		t->tail = NULL;
	t->busy = 0;
	for (i = 0; i < 3; i++)
		bip_ofi_mr_put(ofi, op->mr[i]);
	bip_core_rma_done(op->cookie, status, 0);
	free(op->scratch);
	free(op);
}

static void set_stalled(struct bip_ofi_rma *r, struct rma_target *t, int stalled)
{
	if (t->stalled != stalled)
		r->nstalled += stalled ? 1 : -1;
	t->stalled = (uint8_t)stalled;
}

/*
 * Post the head of t's queue (and, when one fails at once, those behind
 * it).  from_poll: failures may be reported now (bip_core_rma_done is
 * called from poll only), else they are kept for the next poll.  Returns
 * the operations ended.
 */
static int kick(struct bip_ofi *ofi, struct rma_target *t, int from_poll)
{
	struct bip_ofi_rma *r = ofi->rma;
	int events = 0, rc;

	while (t->head && !t->busy) {
		rc = issue(ofi, t->head);
		if (rc == 0) {
			t->busy = 1;
			set_stalled(r, t, 0);
			break;
		}
		if (rc == -EAGAIN) {
			set_stalled(r, t, 1);
			break;
		}
		set_stalled(r, t, 0);
		if (!from_poll) {
			/* Reported from the next poll, which posts what follows. */
			t->head->failed = rc;
			set_stalled(r, t, 1);
			break;
		}
		op_end(ofi, t, rc);
		events++;
	}
	return events;
}

int bip_ofi_rma_post(struct bip_nic *nic, const struct bip_nic_rma *a, uint64_t cookie)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	struct bip_ofi_rma *r = ofi->rma;
	struct rma_target *t;
	struct rma_op *op;

	if (!r)
		return -ENOTSUP;
	if (a->node < 0 || a->node >= ofi->numnodes ||
	    (a->kind == BIP_NIC_RMA_ATOMIC &&
	     (a->op < BIP_RMA_SUM || a->op >= RMA_OPS || a->type < BIP_RMA_INT8 ||
	      a->type >= RMA_TYPES || !form_exists(form_of(a->op, a->result), a->op, a->type))))
		return -EINVAL;
	if (a->kind != BIP_NIC_RMA_PUT && a->kind != BIP_NIC_RMA_GET &&
	    a->kind != BIP_NIC_RMA_ATOMIC)
		return -EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->ctx.kind = BIP_OFI_CTX_RMA;
	op->cookie = cookie;
	op->a = *a;
	t = &r->targets[a->node];
	if (t->tail)
		t->tail->next = op;
	else
		t->head = op;
	t->tail = op;
	kick(ofi, t, 0);
	return 0;
}

int bip_ofi_rma_done(struct bip_ofi *ofi, struct bip_ofi_ctx *ctx, int status)
{
	struct rma_op *op = (struct rma_op *)ctx;
	struct rma_target *t;

	if (!ofi->rma)
		return 0;
	t = &ofi->rma->targets[op->a.node];
	if (op->looking && status == 0) {
		op->looking = 0;
		status = check_entry(op, &ofi->rma->landing[op->a.node]);
		if (status == 0) {
			t->busy = 0;
			return kick(ofi, t, 1);
		}
		op_end(ofi, t, status);
		return 1 + kick(ofi, t, 1);
	}
	if (status == 0) {
		op->done += op->step;
		if (op->done < (op->a.kind == BIP_NIC_RMA_ATOMIC ? op->a.count : op->a.len)) {
			t->busy = 0;
			return kick(ofi, t, 1);
		}
	}
	op_end(ofi, t, status ? status_of(-status) : 0);
	return 1 + kick(ofi, t, 1);
}

int bip_ofi_rma_progress(struct bip_ofi *ofi)
{
	struct bip_ofi_rma *r = ofi->rma;
	int events = 0, i;

	while (r->nends) {
		/* In order; an end may lead to more (none today). */
		struct rma_end e = r->ends[0];

		memmove(r->ends, r->ends + 1, (size_t)--r->nends * sizeof(*r->ends));
		bip_core_rma_done(e.cookie, e.status, e.key);
		events++;
	}
	for (i = 0; r->nstalled && i < ofi->numnodes; i++) {
		struct rma_target *t = &r->targets[i];

		if (!t->stalled)
			continue;
		if (t->head && t->head->failed) {
			/* Failed when posted outside poll (kick). */
			set_stalled(r, t, 0);
			op_end(ofi, t, t->head->failed);
			events++;
		}
		events += kick(ofi, t, 1);
	}
	return events;
}

int bip_ofi_rma_busy(const struct bip_ofi *ofi)
{
	return ofi->rma->nstalled || ofi->rma->nends;
}
