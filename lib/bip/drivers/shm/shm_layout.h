/* SPDX-License-Identifier: MIT */
/*
 * shm_layout.h - the shared-memory segment of the shm driver.
 *
 * Every process of a job on a host creates one segment,
 * "/bip-<uid>-<jobid>-<node>", that the other local processes map.  It
 * holds what is written *to* its owner (remote write, local read):
 *
 *   header                 identity, layout offsets, start-up handshake
 *   rings[numnodes]        short messages and long-message announcements,
 *                          one single-producer ring per sender
 *   lsend[BIP_SHM_LSENDS]  the owner's long sends in flight; peers read
 *                          the address and length, the receiver writes done
 *   pipes[numnodes]        staging chunks, one pipe per sender, for long
 *                          messages copied through shared memory
 *
 * Shared memory holds offsets, never pointers; the only addresses in it are
 * those of the owner's own buffers, for process_vm_readv.  Each word is
 * written by one side only, and words written by different sides live on
 * different cache lines.
 */
#ifndef BIP_SHM_LAYOUT_H
#define BIP_SHM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define BIP_SHM_MAGIC 0x42495053u /* "BIPS" */
#define BIP_SHM_VERSION 5

#define BIP_SHM_RING_SLOTS 64     /* power of two */
#define BIP_SHM_SLOT_SIZE 320
#define BIP_SHM_LSENDS 4096       /* long sends in flight per process (as ofi, lanai) */
#define BIP_SHM_PIPE_CHUNKS 8     /* power of two */
#define BIP_SHM_PIPE_CHUNK 16384
#define BIP_SHM_PREPUSH_MAX (4 * BIP_SHM_PIPE_CHUNK) /* half the pipe */

enum bip_shm_kind {
	BIP_SHM_SHORT = 1,        /* payload: the message */
	BIP_SHM_RTS = 2,          /* payload: struct bip_shm_rts */
};

/*
 * A ring slot.  The sender writes kind, tag, len and the payload, then
 * publishes the slot by storing seq = (message number + 1) with release
 * semantics; the receiver expects exactly that value, so a slot from the
 * previous lap can never look ready and slots are never cleared.
 */
struct bip_shm_slot {
	uint32_t seq;
	uint32_t kind;
	uint32_t tag;
	uint32_t len;             /* bytes of the message (for RTS too) */
	uint8_t payload[BIP_SHM_SLOT_SIZE - 16];
};

/*
 * Announcement of a long message: which lsend entry of the sender holds it.
 * When prepushed is set, the sender has already written the whole message
 * into its pipe, from chunk number start on, without waiting for a claim.
 */
struct bip_shm_rts {
	uint32_t lslot;
	uint32_t gen;
	uint32_t prepushed;
	uint32_t pad;
	uint64_t start;
};

struct bip_shm_ring {
	/* Written by the receiver (the segment's owner): messages consumed.
	 * Published once per poll; the sender re-reads it only when the ring
	 * looks full. */
	_Alignas(64) uint32_t consumed;
	_Alignas(64) struct bip_shm_slot slots[BIP_SHM_RING_SLOTS];
};

/* A long send of the owner. */
struct bip_shm_lsend {
	/* Written by the owner before it publishes the RTS. */
	_Alignas(64) uint64_t addr;
	uint64_t len;
	uint32_t gen;
	/* Written by the receiver once it has all the data: gen of the send. */
	_Alignas(64) uint32_t done;
};

/*
 * Staging from one sender to the owner, for long messages copied through
 * shared memory.  The owner claims a long send (lslot, gen, then claim_seq
 * with release); the sender fills chunks in order and publishes each by
 * storing produced with release; the owner copies them out and stores
 * consumed with release.  Counters are free-running chunk numbers.
 * Serving a claim, the sender first publishes the chunk number where the
 * claimed send starts (push_start, then push_seq = claim_seq): chunks of
 * messages it prepushed meanwhile may come before it.
 */
struct bip_shm_pipe {
	_Alignas(64) uint32_t claim_seq;   /* written by the owner */
	uint32_t claim_lslot;
	uint32_t claim_gen;
	_Alignas(64) uint64_t consumed;    /* written by the owner */
	_Alignas(64) uint64_t produced;    /* written by the sender */
	uint64_t push_start;               /* first chunk of the claimed send, */
	uint32_t push_seq;                 /* for claim push_seq (sender, release) */
	_Alignas(64) uint8_t chunk[BIP_SHM_PIPE_CHUNKS][BIP_SHM_PIPE_CHUNK];
};

struct bip_shm_header {
	uint32_t magic;
	uint32_t version;
	uint32_t numnodes;
	uint32_t node;
	int32_t pid;
	uint32_t pad;
	uint64_t size;                  /* bytes of the whole segment */
	uint64_t off_rings;             /* offsets from the segment's start */
	uint64_t off_lsend;
	uint64_t off_pipes;
	uint64_t off_attached;
	uint64_t probe_addr;            /* address of probe_value in the owner, */
	uint64_t probe_value;           /* for the process_vm_readv probe */
	/* Set with release by the owner once everything above is written. */
	_Alignas(64) uint32_t ready;
	/* Waiting that sleeps: each of the owner's threads adds one to
	 * sleeping before it sleeps on bell (a futex word) and takes it off
	 * after; a peer that publishes something for the owner and then sees
	 * sleeping not 0 adds one to bell and wakes every thread on it
	 * (shm.c, "Sleeping").  Only hints: a wrong value costs a spurious
	 * wake-up or a wait until the sleep's time-out. */
	_Alignas(64) uint32_t sleeping;
	uint32_t bell;
	/* attached[numnodes / 64 + 1] at off_attached: bit i set (atomic or)
	 * by node i once it has mapped this segment. */
};

_Static_assert(sizeof(struct bip_shm_slot) == BIP_SHM_SLOT_SIZE, "slot size");
_Static_assert(BIP_SHM_SLOT_SIZE % 64 == 0, "slots start on cache lines");
_Static_assert(offsetof(struct bip_shm_ring, slots) == 64, "ring index on its own line");
_Static_assert(sizeof(struct bip_shm_lsend) == 128, "lsend entry size");
_Static_assert(offsetof(struct bip_shm_pipe, produced) - offsetof(struct bip_shm_pipe, consumed)
		       == 64, "pipe counters on separate lines");
_Static_assert(sizeof(struct bip_shm_rts) <= sizeof(((struct bip_shm_slot *)0)->payload),
	       "RTS fits a slot");
_Static_assert(offsetof(struct bip_shm_header, ready) == 128, "header layout");
_Static_assert(BIP_SHM_PREPUSH_MAX <= BIP_SHM_PIPE_CHUNKS * BIP_SHM_PIPE_CHUNK, "prepush fits");

#endif /* BIP_SHM_LAYOUT_H */
