/* SPDX-License-Identifier: MIT */
/*
 * shm_layout.h - the shared-memory segment of the shm driver.
 *
 * Every process of a job on a host creates one segment,
 * "/bip-<uid>-<jobid>-<node>", that the other local processes map.  It
 * holds what is written *to* its owner (remote write, local read), and the
 * owner's long sends, which its receivers read:
 *
 *   header                 identity, layout offsets, start-up handshake,
 *                          the bell a sleeping owner waits on
 *   attached[]             one bit per node: who has mapped the segment
 *   wanted[]               one bit per node: who waits for room in the fifo
 *   fifo                   the queue that every local peer may write:
 *                          short messages, long-message announcements and
 *                          the drivers' control messages; a sender claims
 *                          a slot with a compare-and-swap of the head
 *   boxes[BIP_SHM_BOXES]   fast boxes: single-producer rings the owner
 *                          lends to the peers that send to it most, on
 *                          first use, and takes back for others
 *   pipes[BIP_SHM_PIPES]   staging chunks for long messages copied through
 *                          shared memory, lent to one sender at a time
 *   stage                  the owner's own staging chunks, where it writes
 *                          a message of up to 64 KiB with its announcement
 *                          (prepush), for its receiver to copy out
 *   lsend[BIP_SHM_LSENDS]  the owner's long sends in flight (address,
 *                          length, stage chunks), which their receivers read
 *   ldone[BIP_SHM_LSENDS]  written by the receiver of each: done
 *
 * Everything but the two bitmaps has a fixed size: a host's shared memory grows
 * with its processes, not with their pairs (shm.c says how the parts are
 * lent and taken back).
 *
 * Shared memory holds offsets and indices, never pointers; the only
 * addresses in it are those of the owner's own buffers, for
 * process_vm_readv.  Each word has one writer, or is changed only by a
 * compare-and-swap (the fifo's head, a pipe's lease), and words written by
 * different sides live on different cache lines.
 */
#ifndef BIP_SHM_LAYOUT_H
#define BIP_SHM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define BIP_SHM_MAGIC 0x42495053u /* "BIPS" */
#define BIP_SHM_VERSION 6

#define BIP_SHM_SLOT_SIZE 320
#define BIP_SHM_FIFO_SLOTS 64     /* power of two */
#define BIP_SHM_BOXES 8
#define BIP_SHM_BOX_SLOTS 32      /* power of two */
#define BIP_SHM_PIPES 2
#define BIP_SHM_PIPE_CHUNKS 8     /* power of two */
#define BIP_SHM_PIPE_CHUNK 16384
#define BIP_SHM_STAGE_CHUNKS 4    /* of BIP_SHM_PIPE_CHUNK bytes */
#define BIP_SHM_LSENDS 1024       /* long sends in flight per process */
#define BIP_SHM_PREPUSH_MAX (BIP_SHM_STAGE_CHUNKS * BIP_SHM_PIPE_CHUNK)
/* Nodes a slot can name (its kind word keeps 24 bits for the sender). */
#define BIP_SHM_MAXNODES (1 << 24)

enum bip_shm_kind {
	BIP_SHM_SHORT = 1,        /* payload: the message */
	BIP_SHM_RTS = 2,          /* payload: struct bip_shm_rts */
	BIP_SHM_CTL = 3,          /* payload: struct bip_shm_ctl, for the driver */
};

/*
 * A slot, of the fifo or of a box.  The sender writes kind (the kind in its
 * low 8 bits, its node number above), tag, len and the payload, then
 * publishes the slot by storing seq = (message number + 1) with release
 * semantics; the receiver expects exactly that value, so a slot from a
 * previous lap can never look ready and slots are never cleared.  A box's
 * message numbers go on from one lease to the next.
 */
struct bip_shm_slot {
	uint32_t seq;
	uint32_t kind;
	uint32_t tag;
	uint32_t len;             /* bytes of the message (for RTS too) */
	uint8_t payload[BIP_SHM_SLOT_SIZE - 16];
};

static inline uint32_t bip_shm_kind_word(uint32_t kind, int node)
{
	return kind | (uint32_t)node << 8;
}

/* Announcement of a long message: which lsend entry of the sender holds it. */
struct bip_shm_rts {
	uint32_t lslot;
	uint32_t gen;
};

/* The drivers' own messages (kind BIP_SHM_CTL); shm.c has the protocols. */
enum bip_shm_ctl_op {
	BIP_SHM_BOX_GRANT = 1,    /* owner to sender: box index is yours from
				   * message number count on (epoch) */
	BIP_SHM_BOX_START = 2,    /* sender, first slot of the box: my count
				   * fifo messages come before this one */
	BIP_SHM_BOX_REVOKE = 3,   /* owner to sender: give box index back */
	BIP_SHM_BOX_END = 4,      /* sender, in the fifo: box index holds count
				   * messages in all, to be read before this */
	BIP_SHM_CLAIM = 5,        /* owner to sender: a claim waits in pipe
				   * index (lease epoch), claim number count */
};

struct bip_shm_ctl {
	uint32_t op;
	uint32_t index;
	uint32_t epoch;
	uint32_t pad;
	uint64_t count;
};

/*
 * The fifo: any local peer claims slot number head by a compare-and-swap of
 * head to head + 1, once it has seen consumed above head - slots (the slot
 * is free), fills it and publishes it (seq).  The owner reads the slots in
 * order and publishes consumed once per poll.
 */
struct bip_shm_fifo {
	_Alignas(64) uint32_t head;       /* the senders, by compare-and-swap */
	_Alignas(64) uint32_t consumed;   /* the owner */
	/* A sender that found no room and will sleep sets its bit in the
	 * wanted bitmap (the part BIP_SHM_WANTED), then this word; the owner that frees
	 * slots and finds it set clears both and wakes them (shm_queue.c). */
	_Alignas(64) uint32_t wanted;
	_Alignas(64) struct bip_shm_slot slots[BIP_SHM_FIFO_SLOTS];
};

/* A fast box: a ring written by the one sender the owner lent it to. */
struct bip_shm_box {
	_Alignas(64) uint32_t consumed;   /* the owner: messages consumed */
	_Alignas(64) struct bip_shm_slot slots[BIP_SHM_BOX_SLOTS];
};

/*
 * A pipe's lease: who may write its chunks.  Changed only by
 * compare-and-swap: FREE to HELD by the owner (lending it, epoch + 1),
 * HELD to PUSH and back by the lessee around each burst of chunks it
 * writes, HELD to FREE by the owner (taking it back, which it can only do
 * while the lessee is not writing).
 */
enum bip_shm_lease_phase {
	BIP_SHM_PIPE_FREE = 0,
	BIP_SHM_PIPE_HELD = 1,
	BIP_SHM_PIPE_PUSH = 2,
};

static inline uint64_t bip_shm_lease(uint32_t epoch, int node, uint32_t phase)
{
	return (uint64_t)epoch << 32 | (uint64_t)(uint32_t)(node + 1) << 8 | phase;
}

/*
 * Staging from one sender (the lessee) to the owner, for long messages
 * copied through shared memory.  The owner claims a long send (lslot, gen,
 * off: the bytes it has already, then claim_seq with release) and tells
 * the lessee (BIP_SHM_CLAIM); the lessee says where the claimed data starts
 * (push_start, then push_seq = claim_seq, with release), fills chunks in
 * order and publishes each by storing produced with release; the owner
 * copies them out and stores consumed with release.  Counters are
 * free-running chunk numbers, across leases.
 */
struct bip_shm_pipe {
	_Alignas(64) uint64_t lease;       /* bip_shm_lease(), see above */
	_Alignas(64) uint32_t claim_seq;   /* the owner */
	uint32_t claim_lslot;
	uint32_t claim_gen;
	uint32_t pad;
	uint64_t claim_off;
	_Alignas(64) uint64_t consumed;    /* the owner */
	_Alignas(64) uint64_t produced;    /* the lessee */
	uint64_t push_start;               /* first chunk of the claimed data, */
	uint32_t push_seq;                 /* for claim push_seq (lessee, release) */
	_Alignas(64) uint8_t chunk[BIP_SHM_PIPE_CHUNKS][BIP_SHM_PIPE_CHUNK];
};

/*
 * The owner's stage: chunks it writes a small long message into with its
 * announcement, so that the receiver copies it out as soon as its receive
 * is posted, without a claim.  Each chunk's state word says which send it
 * holds (bip_shm_stage_word: the lsend entry and its generation) and
 * whether it is FULL (written, to take) or being TAKEN; only
 * compare-and-swap changes it out of FULL: the receiver takes the chunks
 * of a send (FULL to TAKEN, each), copies them and frees them (FREE); the
 * owner takes back those of a send whose receiver has not come (FULL to
 * FREE), and the receiver, finding one gone, gives back those it took and
 * claims the message instead.
 */
enum bip_shm_stage_phase {
	BIP_SHM_STAGE_FREE = 0,
	BIP_SHM_STAGE_FULL = 1,
	BIP_SHM_STAGE_TAKEN = 2,
};

static inline uint64_t bip_shm_stage_word(uint32_t lslot, uint32_t gen, uint32_t phase)
{
	return (uint64_t)gen << 32 | (uint64_t)(lslot & 0xffff) << 8 | phase;
}

struct bip_shm_stage {
	_Alignas(64) uint64_t state[BIP_SHM_STAGE_CHUNKS];
	_Alignas(64) uint8_t chunk[BIP_SHM_STAGE_CHUNKS][BIP_SHM_PIPE_CHUNK];
};

/* A long send of the owner, written before its announcement: stage is the
 * bitmap of the stage's chunks that hold its data, in order (0: none). */
struct bip_shm_lsend {
	uint64_t addr;
	uint64_t len;
	uint32_t gen;
	uint32_t stage;
	uint64_t pad;
};

/* The parts of a segment after its header, in this order. */
enum bip_shm_part {
	BIP_SHM_ATTACHED,
	BIP_SHM_WANTED,
	BIP_SHM_FIFO,
	BIP_SHM_BOXES_AT,
	BIP_SHM_PIPES_AT,
	BIP_SHM_STAGE,
	BIP_SHM_LSEND,
	BIP_SHM_LDONE,
	BIP_SHM_PARTS
};

struct bip_shm_header {
	uint32_t magic;
	uint32_t version;
	uint32_t numnodes;
	uint32_t node;
	int32_t pid;
	uint32_t pad;
	uint64_t size;                  /* bytes of the whole segment */
	uint64_t off[BIP_SHM_PARTS];    /* offsets of the parts from its start */
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
	/* attached[numnodes / 64 + 1] (BIP_SHM_ATTACHED): bit i set (atomic
	 * or) by node i once it has mapped this segment. */
};

_Static_assert(sizeof(struct bip_shm_slot) == BIP_SHM_SLOT_SIZE, "slot size");
_Static_assert(BIP_SHM_SLOT_SIZE % 64 == 0, "slots start on cache lines");
_Static_assert(offsetof(struct bip_shm_fifo, consumed) == 64, "fifo head on its own line");
_Static_assert(offsetof(struct bip_shm_fifo, wanted) == 128, "fifo index on its own line");
_Static_assert(offsetof(struct bip_shm_fifo, slots) == 192, "fifo words on lines of their own");
_Static_assert(offsetof(struct bip_shm_box, slots) == 64, "box index on its own line");
_Static_assert(sizeof(struct bip_shm_lsend) == 32, "lsend entry size");
_Static_assert(offsetof(struct bip_shm_pipe, claim_seq) == 64, "lease on its own line");
_Static_assert(offsetof(struct bip_shm_pipe, produced) - offsetof(struct bip_shm_pipe, consumed)
		       == 64, "pipe counters on separate lines");
_Static_assert(sizeof(struct bip_shm_rts) <= sizeof(((struct bip_shm_slot *)0)->payload),
	       "RTS fits a slot");
_Static_assert(sizeof(struct bip_shm_ctl) <= sizeof(((struct bip_shm_slot *)0)->payload),
	       "control message fits a slot");
_Static_assert(offsetof(struct bip_shm_header, ready) == 128, "header layout");
_Static_assert(BIP_SHM_STAGE_CHUNKS <= 32, "a send's stage chunks fit its bitmap");
_Static_assert(BIP_SHM_LSENDS <= 65536, "an lsend index fits the handle's 16 bits");

#endif /* BIP_SHM_LAYOUT_H */
