/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the shm driver's private state: peers on the same host.
 *
 * shm.c       segments, start-up, short messages, polling
 * shm_long.c  long messages: single copy with process_vm_readv, or a
 *             pipelined copy through the staging pipes
 */
#ifndef BIP_SHM_H
#define BIP_SHM_H

#include <sys/types.h>

#include "atomics.h"
#include "nic.h"
#include "shm_layout.h"

/* A long receive waiting for, or using, its sender's pipe. */
struct bip_shm_pull {
	uint64_t cookie;
	uint8_t *buf;
	size_t len, off;
	uint32_t lslot, gen;
	int started;                      /* the sender said where its chunks start */
	struct bip_shm_pull *next;
};

struct bip_shm_peer {
	int node;
	pid_t pid;
	unsigned bad_slots;               /* slots of it dropped (said once) */
	int cma;                          /* process_vm_readv works on this peer */
	struct bip_shm_header *seg;       /* the peer's segment */
	size_t seg_size;
	struct bip_shm_lsend *lsend;      /* the peer's long sends (in its segment) */
	/* sending to the peer */
	struct bip_shm_ring *ring_out;    /* my ring in the peer's segment */
	uint32_t prod;                    /* messages written */
	uint32_t consumed_seen;           /* last value read from ring_out->consumed */
	struct bip_shm_pipe *pipe_out;    /* my pipe in the peer's segment */
	uint32_t claim_served;            /* last claim_seq of the peer served */
	const uint8_t *push_src;          /* the long send being pushed, or NULL */
	size_t push_len, push_off;
	uint64_t pushed;                  /* chunks produced so far */
	int long_out;                     /* long sends to the peer not yet done */
	int prepushed_out;                /* of which prepushed */
	int prepush_blocked;              /* the peer claimed: no prepush until long_out is 0 */
	/* receiving from the peer */
	struct bip_shm_ring *ring_in;     /* the peer's ring in my segment */
	uint32_t cons;                    /* messages consumed */
	uint32_t cons_published;
	struct bip_shm_pipe *pipe_in;     /* the peer's pipe in my segment */
	uint32_t claim_seq;
	uint64_t pulled;                  /* chunks consumed so far */
	/* The messages the peer prepushed into its pipe, oldest first, until
	 * taken or passed over. */
	struct bip_shm_prepushed {
		uint32_t lslot, gen;
		uint64_t start, chunks;
	} pre[BIP_SHM_PIPE_CHUNKS];
	int npre;
	struct bip_shm_pull *pull_head, *pull_tail;
};

/* A long send of this process, as the driver knows it. */
struct bip_shm_lsend_local {
	uint64_t cookie;
	const uint8_t *buf;
	size_t len;
	int dst;
	uint32_t gen;
	int prepushed;
};

struct bip_shm {
	struct bip_nic nic;
	int mynode, numnodes;
	char name[96];                    /* my segment's name, for unlinking */
	int unlinked;
	struct bip_shm_header *self;
	size_t self_size;
	struct bip_shm_lsend *lsend;      /* my long sends, in my segment */
	struct bip_shm_peer *peers;       /* indexed by node; seg == NULL if not served */
	int *local;                       /* nodes served, in order */
	int nlocal;
	struct bip_shm_lsend_local lsl[BIP_SHM_LSENDS];
	uint16_t lfree[BIP_SHM_LSENDS];
	int nlfree;
	uint16_t lactive[BIP_SHM_LSENDS];
	int nlactive;
	int npulls;                       /* long receives through pipes */
	int npushes;                      /* long sends being pushed through pipes */
	size_t cma_min;                   /* long messages from this size use process_vm_readv */
	/* the layout for numnodes, computed here: used for every segment */
	uint64_t off_rings, off_lsend, off_pipes, off_attached;
};

static inline struct bip_shm *bip_shm_of(struct bip_nic *nic)
{
	return (struct bip_shm *)nic;
}

/* Segment geometry for n nodes. */
size_t bip_shm_segment_size(int n, uint64_t *off_rings, uint64_t *off_lsend, uint64_t *off_pipes,
			    uint64_t *off_attached);

/*
 * Check a peer's segment header (seglen bytes mapped) against the layout of
 * numnodes and the node it should be: 0, or -EPROTO with why in err.  Reads
 * each field once; the caller uses its own offsets afterwards.
 */
int bip_shm_header_check(const struct bip_shm_header *h, size_t seglen, int numnodes, int node,
			 char *err, size_t errlen);

/*
 * Read a published slot's fields once (the sender's memory) and check them:
 * BIP_SHM_SHORT with len at most its payload, or BIP_SHM_RTS; 0 for any
 * other slot, which the receiver drops.
 */
static inline uint32_t bip_shm_slot_read(const struct bip_shm_slot *slot, uint32_t *tag,
					 uint32_t *len)
{
	uint32_t kind = slot->kind;

	*tag = slot->tag;
	*len = slot->len;
	if (kind == BIP_SHM_SHORT)
		return *len <= sizeof(slot->payload) ? kind : 0;
	return kind == BIP_SHM_RTS ? kind : 0;
}

/* A slot of p that no sender of this library writes: dropped, said once. */
void bip_shm_bad_slot(struct bip_shm_peer *p, uint32_t kind, uint32_t tag, uint32_t len);

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

/* shm_long.c */
int bip_shm_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie);
int bip_shm_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie);
/* Progress of long messages: completions, claims to serve, pipes to fill and drain. */
int bip_shm_poll_long(struct bip_shm *shm);
void bip_shm_long_init(struct bip_shm *shm);
void bip_shm_long_fini(struct bip_shm *shm);
/* Probe process_vm_readv on every peer. */
void bip_shm_probe_cma(struct bip_shm *shm);
/* Note an RTS from p as it arrives (drain_ring), before the core sees it. */
void bip_shm_rts_seen(struct bip_shm_peer *p, const struct bip_shm_rts *rts, size_t len);

/* 1 if the ring to dst has a free slot. */
int bip_shm_ring_room(struct bip_shm *shm, int dst);
/* Post a message on the ring to dst: 0 or -EAGAIN. */
int bip_shm_ring_post(struct bip_shm *shm, int dst, uint32_t kind, uint32_t tag, const void *buf,
		      size_t len, size_t payload_len);

#endif /* BIP_SHM_H */
