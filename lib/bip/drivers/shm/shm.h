/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the shm driver's private state: peers on the same host.
 *
 * shm.c       segments, start-up, polling, sleeping
 * shm_queue.c short messages: the fifo, the fast boxes and their leases,
 *             the drivers' control messages
 * shm_long.c  long messages: single copy with process_vm_readv, or a
 *             pipelined copy through a pipe lent by the receiver
 */
#ifndef BIP_SHM_H
#define BIP_SHM_H

#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include "atomics.h"
#include "nic.h"
#include "shm_layout.h"

/* A long receive waiting for, or using, a pipe of this process. */
struct bip_shm_pull {
	uint64_t cookie;
	uint8_t *buf;
	size_t len, off;
	uint32_t lslot, gen;
	int started;                      /* the sender said where its chunks start */
	struct bip_shm_pull *next;
};

/* A fifo slot of a peer kept back, in order, until it can be delivered. */
struct bip_shm_held {
	struct bip_shm_held *next;
	uint32_t kind, tag, len;
	uint8_t payload[BIP_SHM_SLOT_SIZE - 16];
};

/* Sending through a peer's box, as this process knows it. */
enum bip_shm_box_state {
	BIP_SHM_BOX_NONE = 0,             /* no box: the peer's fifo */
	BIP_SHM_BOX_OPEN = 1,             /* the peer's box index is lent to me */
	BIP_SHM_BOX_ENDING = 2,           /* taken back: BOX_END to write first */
};

struct bip_shm_peer {
	int node;
	pid_t pid;
	unsigned bad_slots;               /* bad slots of it dropped (said once) */
	int cma;                          /* process_vm_readv works on this peer */
	/* The peer's segment (this process's own for peers[mynode]), and
	 * its parts at the offsets this process computed. */
	struct bip_shm_header *seg;
	size_t seg_size;
	uint64_t *attached;               /* who has mapped it */
	uint64_t *wanted;                 /* senders waiting for room in its fifo */
	struct bip_shm_fifo *fifo;        /* the peer's fifo */
	struct bip_shm_box *boxes;        /* the peer's boxes */
	struct bip_shm_pipe *pipes;       /* the peer's pipes */
	struct bip_shm_stage *stage;      /* the peer's stage */
	struct bip_shm_lsend *lsend;      /* the peer's long sends */
	uint32_t *ldone;                  /* their done words */

	/* Sending to the peer: under its send lock (nic.h, post_per_peer). */
	uint32_t fifo_seen;               /* last consumed read of its fifo */
	uint64_t fifo_sent;               /* messages this process put in it */
	int box_state;                    /* enum bip_shm_box_state */
	struct bip_shm_box *box_out;      /* the peer's box lent to me (OPEN) */
	uint32_t box_index, box_epoch;
	uint32_t box_prod;                /* message numbers written into the box */
	uint32_t box_seen;                /* last consumed read of the box */

	/* Long sends to the peer (the core's lock). */
	int lease;                        /* the peer's pipe lent to me, or -1 */
	uint32_t lease_epoch;
	uint64_t pushed;                  /* chunks produced into it */
	int claim_waiting;                /* a claim came while another was pushed */
	uint32_t claim_index, claim_epoch;
	const uint8_t *push_src;          /* the claimed send being pushed, or NULL */
	size_t push_len, push_off;
	int pushing;                      /* in shm->pushing */

	/* Receiving from the peer (the core's lock). */
	uint64_t fifo_got;                /* its fifo messages handled */
	uint32_t fifo_since;              /* since the last look at lending it a box */
	int box_in;                       /* my box lent to it, or -1 */
	struct bip_shm_held *held_head, *held_tail;
	int nheld;                        /* fifo slots kept back (shm->holding) */
	int pipe_in;                      /* my pipe lent to it, or -1 */
	struct bip_shm_pull *pull_head, *pull_tail;
	int pipe_waiting;                 /* in shm->pipe_wait */
};

/* One of this process's boxes, as its owner knows it. */
struct bip_shm_box_own {
	struct bip_shm_box *box;          /* in my segment */
	struct bip_shm_peer *peer;        /* the lessee's, while lent */
	int lessee;                       /* the node it is lent to, or -1 */
	uint32_t short_word;              /* a short message's kind word from it, once
					   * started (0: no slot has it) */
	uint32_t epoch;
	uint32_t cons;                    /* messages consumed (free-running) */
	uint32_t cons_published;
	int started;                      /* its BOX_START has been read */
	int revoked;                      /* BOX_REVOKE sent */
	uint32_t mark;                    /* cons at the last look for an idle box */
};

/* One of this process's pipes, as its owner knows it. */
struct bip_shm_pipe_own {
	int lessee;                       /* the node it is lent to, or -1 */
	uint32_t epoch;
	uint32_t claim_seq;
	uint64_t pulled;                  /* chunks consumed (free-running) */
	struct bip_shm_pull *pull;        /* the claim in it, or NULL */
	uint32_t moves, moves_seen;       /* its pull's chunks, and at the last look */
	uint64_t still_since;             /* when moves was last seen to change */
};

/* A long send of this process, as the driver knows it. */
struct bip_shm_lsend_local {
	uint64_t cookie;
	const uint8_t *buf;
	size_t len;
	int dst;
	uint32_t gen;
	uint32_t stage;                   /* its chunks in my stage (lsend's) */
};

/* A control message that found no room, sent on a later poll. */
struct bip_shm_ctl_out {
	struct bip_shm_ctl_out *next;
	int dst;
	struct bip_shm_ctl ctl;
};

struct bip_shm {
	struct bip_nic nic;
	/* The poll's fast path (shm.c): nothing to do but look at the slots
	 * that come next, unless attention says there is more. */
	int attention;                    /* work beyond the slots (bip_shm_attend) */
	int nwatch;
	struct {
		const uint32_t *seq;      /* the next slot's sequence number ... */
		uint32_t expect;          /* ... once published */
	} watch[BIP_SHM_BOXES + 1];       /* each lent box's (as in lent[]), then the fifo's */
	int mynode, numnodes;
	char name[96];                    /* my segment's name, for unlinking */
	int unlinked;
	/* A job that grows (nic.h): my segment's descriptor, kept open so
	 * that nodes joining later can map it (bipload tells them where),
	 * else -1. */
	int segfd;
	struct bip_shm_header *self;
	size_t self_size;
	struct bip_shm_peer *me;          /* my segment's parts: peers[mynode] */
	/* receiving */
	uint32_t fifo_cons, fifo_cons_published;
	struct bip_shm_box_own box_own[BIP_SHM_BOXES];
	int lent[BIP_SHM_BOXES];          /* boxes lent, to poll */
	int nlent;
	struct bip_shm_pipe_own pipe_own[BIP_SHM_PIPES];
	int *holding;                     /* peers with fifo slots kept back */
	int nholding;
	int *pipe_wait;                   /* peers whose claim waits for a pipe */
	int npipe_wait;
	int npulls;                       /* long receives through pipes */
	/* sending */
	int *pushing;                     /* peers a claimed send is pushed to */
	int npushing;
	struct bip_shm_ctl_out *ctl_head, *ctl_tail;
	int nending;                      /* peers whose BOX_END waits for room */
	struct bip_shm_lsend_local lsl[BIP_SHM_LSENDS];
	uint16_t lfree[BIP_SHM_LSENDS];
	int nlfree;
	uint16_t lactive[BIP_SHM_LSENDS];
	int nlactive;
	/* peers */
	struct bip_shm_peer *peers;       /* indexed by node; seg == NULL if not served
					   * (nor mapped yet), but mine */
	int *local;                       /* nodes served, in order */
	int nlocal;
	/* what happened, for tests and for the counters to come */
	struct {
		uint64_t box_grants, box_revokes, box_ends;
		uint64_t pipe_lends, pipe_takebacks, pipe_stalls;
		uint64_t prepushed, stage_taken, stage_reclaimed;
		uint64_t held;                /* fifo slots kept back for their sender */
	} stats;
	size_t cma_min;                   /* long messages from this size use process_vm_readv */
	int box_after;                    /* fifo messages of a peer before it gets a box */
	/* the layout, computed here: used for every segment */
	uint64_t off[BIP_SHM_PARTS];
};

static inline struct bip_shm *bip_shm_of(struct bip_nic *nic)
{
	return (struct bip_shm *)nic;
}

/* The descriptor of this process's segment in a job that grows, else -1
 * (what bip_init tells bipload, boot/pm.h). */
int bip_shm_segment_fd(struct bip_nic *nic);

/* Reach node, which joined the job after this instance opened (nic.h's
 * reach), from a poll: 0, -EAGAIN, or another negative errno with err. */
int bip_shm_reach_node(struct bip_shm *shm, int node, char *err, size_t errlen);

/* Segment geometry for n nodes: its size, and the parts' offsets. */
size_t bip_shm_segment_size(int n, uint64_t off[BIP_SHM_PARTS]);

/*
 * Check a peer's segment header (seglen bytes mapped) against the layout of
 * numnodes and the node it should be: 0, or -EPROTO with why in err.  Reads
 * each field once; the caller uses its own offsets afterwards.
 */
int bip_shm_header_check(const struct bip_shm_header *h, size_t seglen, int numnodes, int node,
			 char *err, size_t errlen);

/*
 * The driver's state for a job of numnodes nodes, node mynode, whose
 * segment is seg (self_size bytes, laid out here); peers attach with
 * bip_shm_attach_mem.  shm_open does it over files; the fuzz target over
 * memory of its own.  0 or -ENOMEM.
 */
int bip_shm_init(struct bip_shm *shm, int mynode, int numnodes, struct bip_shm_header *seg);
void bip_shm_fini(struct bip_shm *shm);
/* Use the segment at h (mapped, seg_size bytes, its header checked) for
 * node (bip_shm_init does it for this process's own). */
void bip_shm_attach_mem(struct bip_shm *shm, int node, struct bip_shm_header *h, pid_t pid);

/*
 * Read a published slot's fields once (the sender's memory) and check them:
 * the kind (BIP_SHM_SHORT with len at most its payload, BIP_SHM_RTS with
 * len not 0, or BIP_SHM_CTL), and its sender's node in *src; 0 for any
 * other slot, which the receiver drops.
 */
static inline uint32_t bip_shm_slot_read(const struct bip_shm_slot *slot, int *src,
					 uint32_t *tag, uint32_t *len)
{
	uint32_t word = bip_load_relaxed(&slot->kind), kind = word & 0xff;

	*src = (int)(word >> 8);
	*tag = bip_load_relaxed(&slot->tag);
	*len = bip_load_relaxed(&slot->len);
	if (kind == BIP_SHM_SHORT)
		return *len <= sizeof(slot->payload) ? kind : 0;
	return kind == BIP_SHM_RTS || kind == BIP_SHM_CTL ? kind : 0;
}

/* A slot no sender of this library writes: dropped, said once per peer. */
void bip_shm_bad_slot(struct bip_shm *shm, int src, const char *where, uint32_t kind,
		      uint32_t tag, uint32_t len);

/* Ring peers' bells (BIP_WAIT=block in this process): set at open. */
extern int bip_shm_bells;
void bip_shm_wake_slow(struct bip_shm_peer *p);

/* After publishing something p waits for (a slot, a pipe counter, a claim,
 * a completion): wake p if it sleeps.  A predicted branch without block
 * mode. */
static inline void bip_shm_wake(struct bip_shm_peer *p)
{
	if (bip_unlikely(bip_shm_bells))
		bip_shm_wake_slow(p);
}

/* Say that the poll has more to do than look at the slots (long
 * transfers, kept slots, control messages waiting): its slow path then
 * runs until it finds none left. */
static inline void bip_shm_attend(struct bip_shm *shm)
{
	shm->attention = 1;
}

/* shm_queue.c */
/* A slot of p's fifo, claimed; NULL when full.  Under p's send lock. */
struct bip_shm_slot *bip_shm_fifo_reserve(struct bip_shm *shm, struct bip_shm_peer *p,
					  uint32_t *seq_p);

/* A slot of the box p lent this process; NULL when full.  Under p's send
 * lock. */
static inline struct bip_shm_slot *bip_shm_box_reserve(struct bip_shm_peer *p, uint32_t *seq_p)
{
	if (bip_unlikely(p->box_prod - p->box_seen >= BIP_SHM_BOX_SLOTS)) {
		/* Looks full: re-read the owner's index.  Pairs with the
		 * release of consumed in drain_box. */
		p->box_seen = bip_load_acquire(&p->box_out->consumed);
		if (p->box_prod - p->box_seen >= BIP_SHM_BOX_SLOTS)
			return NULL;
	}
	*seq_p = ++p->box_prod;
	return &p->box_out->slots[(*seq_p - 1) & (BIP_SHM_BOX_SLOTS - 1)];
}

/* A free slot to dst (its box, or its fifo), reserved: fill it and publish
 * it with bip_shm_slot_publish, with nothing in between that can fail.
 * NULL when there is no room.  Under dst's send lock. */
static inline struct bip_shm_slot *bip_shm_slot_reserve(struct bip_shm *shm, int dst,
							uint32_t *seq_p)
{
	struct bip_shm_peer *p = &shm->peers[dst];

	if (bip_likely(p->box_state == BIP_SHM_BOX_OPEN))
		return bip_shm_box_reserve(p, seq_p);
	if (bip_unlikely(p->box_state == BIP_SHM_BOX_ENDING))
		return NULL; /* the END first (poll) */
	return bip_shm_fifo_reserve(shm, p, seq_p);
}

static inline void bip_shm_slot_publish(struct bip_shm *shm, int dst, struct bip_shm_slot *slot,
					uint32_t seq, uint32_t kind, uint32_t tag, uint32_t len)
{
	slot->kind = bip_shm_kind_word(kind, shm->mynode);
	slot->tag = tag;
	slot->len = len;
	/* Publish the slot; pairs with the acquire of seq in drain_fifo or
	 * drain_box. */
	bip_store_release(&slot->seq, seq);
	bip_shm_wake(&shm->peers[dst]);
}

/* Post a message to dst (its box or its fifo), in two pieces copied one
 * after the other: 0 or -EAGAIN. */
static inline int bip_shm_post(struct bip_shm *shm, int dst, uint32_t kind, uint32_t tag,
			       const void *hdr, size_t hlen, const void *buf, size_t len)
{
	struct bip_shm_slot *slot;
	uint32_t seq;

	slot = bip_shm_slot_reserve(shm, dst, &seq);
	if (bip_unlikely(!slot))
		return -EAGAIN;
	/* The header first: fewer values live across the copies. */
	slot->kind = bip_shm_kind_word(kind, shm->mynode);
	slot->tag = tag;
	slot->len = (uint32_t)(hlen + len);
	memcpy(slot->payload, hdr, hlen);
	if (len)
		memcpy(slot->payload + hlen, buf, len);
	/* Publish the slot; pairs with the acquire of seq in drain_fifo or
	 * drain_box. */
	bip_store_release(&slot->seq, seq);
	bip_shm_wake(&shm->peers[dst]);
	return 0;
}
/* Send a control message to dst, now or on a later poll (in order). */
void bip_shm_ctl_send(struct bip_shm *shm, int dst, const struct bip_shm_ctl *c);
/* Deliver what the fifo and the boxes hold, and what was kept back: the
 * poll's slow path. */
int bip_shm_poll_queues(struct bip_shm *shm);
/* The nic's poll: the fast path, or the slow one when there is more. */
int bip_shm_poll(struct bip_nic *nic);
/* The slots to watch (the lent boxes changed), and whether there is more
 * (the slow path's end). */
void bip_shm_watch_update(struct bip_shm *shm);
void bip_shm_attention_update(struct bip_shm *shm);
/* Something published to this process that bip_shm_poll_queues would take. */
int bip_shm_queues_pending(struct bip_shm *shm);
void bip_shm_queues_fini(struct bip_shm *shm);

/* shm_long.c */
int bip_shm_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie);
int bip_shm_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie);
/* Progress of long messages: completions, pipes to fill and drain. */
int bip_shm_poll_long(struct bip_shm *shm);
/* Chunks of long messages that this process would move at its next poll. */
int bip_shm_long_pending(struct bip_shm *shm);
void bip_shm_long_init(struct bip_shm *shm);
void bip_shm_long_fini(struct bip_shm *shm);
/* Probe process_vm_readv on every peer. */
void bip_shm_probe_cma(struct bip_shm *shm);
/* A CLAIM from the peer that lent this process its pipe index. */
void bip_shm_claim_arrived(struct bip_shm *shm, struct bip_shm_peer *p,
			   const struct bip_shm_ctl *c);
/* 1 while long transfers of this process are under way. */
static inline int bip_shm_long_busy(const struct bip_shm *shm)
{
	return shm->nlactive || shm->npulls || shm->npushing;
}

#endif /* BIP_SHM_H */
