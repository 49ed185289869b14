/* SPDX-License-Identifier: MIT */
/*
 * lanai_board.h - the simulated LANai board, as the host driver and the
 * firmware (lanai-sim) both see it.  Documented register by register in
 * bip_lanai(7); keep the two in step.
 *
 * The firmware of a host creates one shared-memory segment per job,
 * "/bip-<uid>-<jobid>-lanai", and every host process of the job maps it:
 *
 *   struct bip_lanai_fw        firmware registers: identity, wake-up word,
 *                              fault knobs and fault counters of the wire
 *   boards[nboards]            one board per node and rail, board_size bytes
 *                              each: board (node, rail) at off_boards +
 *                              (rail * nnodes + node) * board_size
 *
 * A host may have several boards per node, rails: rail r's boards make a
 * network of their own (its switches, its routes, its faults), and a board
 * reaches only the boards of its rail.
 *
 * A board is
 *
 *   register page (struct bip_lanai_regs, 4 KiB)
 *   send ring      host writes descriptors, firmware reads   (off_send)
 *   event queue    firmware writes events, host reads        (off_event)
 *   long receives  table of posted long receives (host)      (off_lrecv)
 *   post ring      indices of the table, in posting order    (off_post)
 *   tag queues     where the host's per-tag queues are (host) (off_tagq)
 *
 * One-sided operations (bip_rma(3)) are descriptors of kind RMA in the
 * send ring, their arguments in struct bip_lanai_rma: the board exposes
 * regions of its host's memory (a key it mints, returned in the event),
 * executes the operations of other boards on them itself, with its DMA,
 * and tells its host of the completion of its own operations with an
 * event of kind RMA_DONE.  The board's protocol between boards is in
 * nic_firmware_sim/rma.c.
 *
 * Short messages and the announcements of long ones are written by the
 * firmware straight into the host's per-tag queues (lib/bip/core/tagq.h: the
 * entry layout and the placement rule).  The queues lie in the host's DMA
 * window: memory the host creates (a memfd) and maps, and the firmware maps
 * too when the board is attached (through /proc/<host pid>/fd/<qwin_fd>),
 * as a real host pins memory and gives the board its addresses.  The host
 * lists its queues in the tag queue table before it attaches; the firmware
 * then produces into them, reads the host's count of freed bytes (a DMA
 * read, process_vm_readv) when a queue looks full, and tells the host of
 * each entry with an event.  What does not fit waits in the firmware, in
 * order per source, until the host frees room.
 *
 * The offsets of every part are published in the register page; a host
 * finds its parts from them, never from sizeof.  Shared memory holds
 * offsets, never pointers: the only addresses in it are the host's own
 * buffers, which the firmware reads and writes with process_vm_readv and
 * process_vm_writev (its DMA).
 *
 * Rings are power-of-two arrays with free-running counters.  Each slot
 * starts with a sequence number, the producer's count after the slot (so
 * the first slot written is published with seq 1): the slot is ready when
 * seq is the value the consumer expects, so a slot of the previous lap
 * never looks ready and slots are never cleared.  Each side writes only
 * the cache lines it owns.
 */
#ifndef BIP_LANAI_BOARD_H
#define BIP_LANAI_BOARD_H

#include <stddef.h>
#include <stdint.h>

#define BIP_LANAI_MAGIC 0x4c414e41u /* "LANA" */
#define BIP_LANAI_VERSION 7

#define BIP_LANAI_SEND_SLOTS 128  /* power of two */
#define BIP_LANAI_EVENT_SLOTS 256 /* power of two */
#define BIP_LANAI_LRECV_SLOTS 512 /* power of two; more than the tags */
#define BIP_LANAI_SLOT_SIZE 448
#define BIP_LANAI_SHORT_MAX 256 /* a short message: BIPSMALLSIZE words */
#define BIP_LANAI_INLINE_MAX (BIP_LANAI_SLOT_SIZE - 64) /* payload of a slot */
#define BIP_LANAI_TAGQ_SLOTS 512  /* tags a board can serve */

/* Board state (regs.state), written by the firmware. */
enum bip_lanai_state {
	BIP_LANAI_BOARD_OFF = 0,     /* segment not initialised */
	BIP_LANAI_BOARD_READY = 1,   /* reset, waiting for its host */
	BIP_LANAI_BOARD_RUNNING = 2, /* its host is attached */
	BIP_LANAI_BOARD_DEAD = 3,    /* its host released it or ended; all it sent is delivered */
};

/* Host control (regs.control), written by the host. */
enum bip_lanai_control {
	BIP_LANAI_CTL_NONE = 0,
	BIP_LANAI_CTL_ATTACH = 1,  /* host_pid is set: reset the board and run */
	BIP_LANAI_CTL_RELEASE = 2, /* the host is done with the board */
};

/* Send descriptors (host -> firmware). */
enum bip_lanai_desc_kind {
	BIP_LANAI_DESC_SHORT = 1, /* payload: the message, len bytes */
	BIP_LANAI_DESC_LONG = 2,  /* addr, len: the user's buffer; cookie for SEND_DONE */
	BIP_LANAI_DESC_DGRAM = 3, /* datagram mode: tag bytes of payload, then len bytes
				   * read at addr (DMA); path: the board's rail */
	BIP_LANAI_DESC_RMA = 4,	  /* a one-sided operation on node dst (which may be
				   * the board's own): payload a struct bip_lanai_rma;
				   * cookie for RMA_DONE */
};

/* What a descriptor of kind RMA asks (struct bip_lanai_rma.what). */
enum bip_lanai_rma_what {
	BIP_LANAI_RMA_PUT = 1,	    /* len bytes at addr to key's region at offset */
	BIP_LANAI_RMA_GET = 2,	    /* len bytes of key's region at offset to addr */
	BIP_LANAI_RMA_ATOMIC = 3,   /* count elements: op, type, operand, compare, result */
	BIP_LANAI_RMA_EXPOSE = 4,   /* serve [addr, addr + len) of this host: the key
				     * comes back in RMA_DONE's handle */
	BIP_LANAI_RMA_WITHDRAW = 5, /* stop serving key */
};

/*
 * A one-sided operation, in a descriptor's payload.  Addresses are in the
 * host's address space; the board reads and writes them with its DMA
 * while the operation runs, so they stay valid until RMA_DONE.  op and
 * type are the values of enum bip_rma_op and enum bip_rma_type (bip.h).
 */
struct bip_lanai_rma {
	uint64_t key;	   /* PUT, GET, ATOMIC, WITHDRAW */
	uint64_t offset;   /* bytes from the region's start */
	uint64_t len;	   /* bytes of the target's memory; ATOMIC: count * size */
	uint64_t addr;	   /* PUT: the data; GET: where it goes; EXPOSE: the base */
	uint64_t operand;  /* ATOMIC: count elements */
	uint64_t compare;  /* ATOMIC CSWAP: one element */
	uint64_t result;   /* ATOMIC: the values before, or 0: not wanted */
	uint32_t count;	   /* ATOMIC: elements */
	uint8_t what;	   /* enum bip_lanai_rma_what */
	uint8_t op, type;  /* ATOMIC */
	uint8_t pad;
};

/* How the host uses its board (regs.mode, written before it attaches). */
enum bip_lanai_mode {
	BIP_LANAI_MODE_MESSAGES = 0, /* the board moves messages, fills the tag queues
				      * and stops at the first fault */
	BIP_LANAI_MODE_DGRAM = 1,    /* the board moves datagrams into one receive
				      * queue, and counts faults without stopping: the
				      * host's reliability layer repairs them */
};

/* Events (firmware -> host). */
enum bip_lanai_event_kind {
	BIP_LANAI_EV_SHORT = 1,	    /* src, tag, len: a short message is in tag's queue */
	BIP_LANAI_EV_LONG = 2,	    /* src, tag, len, handle: the announcement of a long
				     * message is in tag's queue */
	BIP_LANAI_EV_SEND_DONE = 3, /* cookie, status: the long send has landed */
	BIP_LANAI_EV_RECV_DONE = 4, /* cookie, status, index: the long receive is complete */
	BIP_LANAI_EV_ERROR = 5,	    /* fault: status, src, tag, pseq; payload: the report */
	BIP_LANAI_EV_HELD = 6,	    /* src, tag: the board keeps src's arrivals for tag,
				     * whose queue is full (flow control, nic.h) */
	BIP_LANAI_EV_RELEASED = 7,  /* src, tag: it keeps none of them any more */
	BIP_LANAI_EV_RMA_DONE = 8,  /* cookie, status: a descriptor of kind RMA is
				     * complete (EXPOSE: handle is the key) */
};

/* Fault kinds, for reports and counters (index into the counter arrays). */
enum bip_lanai_fault {
	BIP_LANAI_FAULT_LOSS = 0,
	BIP_LANAI_FAULT_CORRUPT,
	BIP_LANAI_FAULT_DUPLICATE,
	BIP_LANAI_FAULT_DELAY,
	BIP_LANAI_FAULT_REORDER,
	BIP_LANAI_FAULT_LINKDOWN,
	BIP_LANAI_NFAULTS
};

/* What a receiving board or the wire detects (index into detected[]). */
enum bip_lanai_detect {
	BIP_LANAI_DET_CRC = 0,	 /* CRC32C mismatch */
	BIP_LANAI_DET_DUPLICATE, /* sequence number already received */
	BIP_LANAI_DET_GAP,	 /* sequence number beyond the next one, which never came */
	BIP_LANAI_DET_REORDER,	 /* sequence number beyond the next one, which comes after */
	BIP_LANAI_DET_ROUTE,	 /* the route does not reach the destination */
	BIP_LANAI_DET_LINKDOWN,	 /* the link of the source or destination is down */
	BIP_LANAI_NDETECT
};

/* A send descriptor: one ring slot. */
struct bip_lanai_desc {
	uint32_t seq; /* ready flag: descriptor number + 1 */
	uint32_t kind;
	uint32_t dst; /* destination node */
	uint32_t tag;
	uint64_t len;	 /* bytes of the message */
	uint64_t addr;	 /* LONG: the user's buffer, in the host's address space */
	uint64_t cookie; /* LONG: returned in SEND_DONE */
	uint8_t pad[24];
	uint8_t payload[BIP_LANAI_INLINE_MAX];
};

/* An event: one slot of the event queue. */
struct bip_lanai_event {
	uint32_t seq; /* ready flag: event number + 1 */
	uint32_t kind;
	uint32_t src; /* source node */
	uint32_t tag;
	uint64_t len;	 /* bytes of the message */
	uint64_t handle; /* LONG: for the long receive; RECV_DONE: table index */
	uint64_t cookie; /* SEND_DONE, RECV_DONE */
	int32_t status;	 /* 0 or -errno */
	uint32_t pseq;	 /* ERROR: the packet's sequence number */
	uint32_t fault;	 /* ERROR: enum bip_lanai_detect */
	uint32_t dst;	 /* ERROR: destination node of the packet */
	uint8_t pad[8];
	uint8_t payload[BIP_LANAI_INLINE_MAX]; /* ERROR: the report */
};

/* A posted long receive: written by the host before it posts the index. */
struct bip_lanai_lrecv {
	uint64_t addr;	 /* the user's buffer */
	uint64_t len;	 /* bytes expected */
	uint64_t handle; /* from the LONG event */
	uint64_t cookie; /* returned in RECV_DONE */
};

/* A tag's queue: written by the host before it attaches. */
struct bip_lanai_tagq {
	uint64_t off;	     /* the queue's offset in the host's DMA window */
	uint64_t freed_addr; /* the host's uint32_t count of bytes freed (tagq.h) */
	uint32_t cap;	     /* bytes: a multiple of 4, at least twice the largest entry */
	uint32_t pad;
	uint64_t pad2;
};

/* The post ring: indices of the long-receive table, in posting order. */
struct bip_lanai_post {
	uint32_t seq; /* ready flag: post number + 1 */
	uint32_t index;
};

/* The register page of a board. */
struct bip_lanai_regs {
	/* Identity and layout, written by the firmware before the segment is ready. */
	uint32_t magic;
	uint32_t version;
	uint32_t node;
	uint32_t send_slots, event_slots, lrecv_slots;
	uint32_t slot_size;
	uint32_t short_max;
	uint64_t off_send; /* offsets from the board's start */
	uint64_t off_event;
	uint64_t off_lrecv;
	uint64_t off_post;
	uint64_t off_tagq;
	uint32_t tagq_slots;
	/* Written by the host before it attaches: tags in the tag queue table,
	 * and its DMA window (a file descriptor of the host process). */
	uint32_t ntags;
	uint64_t qwin_size;
	int32_t qwin_fd;
	uint32_t mode; /* enum bip_lanai_mode */
	uint32_t rail; /* the board's rail (written by the firmware) */
	/* Board state, written by the firmware (release); enum bip_lanai_state. */
	_Alignas(64) uint32_t state;
	int32_t fw_pid;
	/* Written by the host: control (release) after host_pid. */
	_Alignas(64) uint32_t control;
	int32_t host_pid;
	/* Written by the host: doorbells rung (statistics). */
	_Alignas(64) uint64_t doorbells;
	/* Written by the host: events consumed (release), once per poll. */
	_Alignas(64) uint32_t event_cons;
	/* Written by the firmware: descriptors and posts consumed (release);
	 * the host re-reads them only when its ring looks full. */
	_Alignas(64) uint32_t send_cons;
	uint32_t post_cons;
	/* Written by the firmware: 1 while it sleeps, so the host must ring. */
	_Alignas(64) uint32_t need_doorbell;
	/* Counters, written by the firmware. */
	_Alignas(64) uint64_t pkts_sent;
	uint64_t pkts_received, bytes_sent, bytes_received;
	uint64_t detected[BIP_LANAI_NDETECT];
	/* The host's sleep, in the node's board of rail 0 for all its
	 * boards: each host thread that sleeps adds 1 to host_sleeps, fences,
	 * looks at its event queues once more and sleeps on host_wake
	 * (futex), then takes its 1 off; the firmware, after publishing an
	 * event for the node, fences and, if host_sleeps is not 0, adds 1 to
	 * host_wake and wakes every thread on it. */
	_Alignas(64) uint32_t host_sleeps; /* written by the host: a count */
	_Alignas(64) uint32_t host_wake;   /* written by the firmware */
	uint32_t pad_wake;
	uint64_t host_wakes;		   /* wake-ups, written by the firmware */
};

/* The firmware registers at the start of the segment. */
struct bip_lanai_fw {
	uint32_t magic;
	uint32_t version;
	uint32_t nboards;
	int32_t pid;   /* lanai-sim */
	uint64_t size; /* bytes of the segment */
	uint64_t off_boards;
	uint64_t board_size;
	uint32_t nnodes; /* boards per rail */
	uint32_t nrails; /* 1 .. 4; nboards = nnodes * nrails */
	/* Set (release) once every board is reset and readable. */
	_Alignas(64) uint32_t ready;
	/* The firmware sleeps on this word (futex); a doorbell adds 1 and wakes it. */
	_Alignas(64) uint32_t wake;
	/* Fault knobs, written by the firmware at start (bip_lanai(7)). */
	_Alignas(64) uint32_t knob_ppm[BIP_LANAI_NFAULTS]; /* per million; DELAY: unused */
	uint32_t delay_us;
	uint32_t linkdown_node;	 /* 0xffffffff: none */
	uint64_t linkdown_after; /* packets, or microseconds if linkdown_in_time */
	uint32_t linkdown_in_time;
	uint32_t pad;
	uint64_t seed;
	/* Counters of the wire, written by the firmware. */
	_Alignas(64) uint64_t injected[BIP_LANAI_NFAULTS];
	uint64_t detected[BIP_LANAI_NDETECT];
	uint64_t packets; /* packets put on the wire */
	uint64_t sleeps;  /* times the firmware slept on wake */
};

#define BIP_LANAI_REGS_SIZE 4096

_Static_assert(sizeof(struct bip_lanai_desc) == BIP_LANAI_SLOT_SIZE, "descriptor size");
_Static_assert(sizeof(struct bip_lanai_event) == BIP_LANAI_SLOT_SIZE, "event size");
_Static_assert(offsetof(struct bip_lanai_desc, payload) == 64, "descriptor payload offset");
_Static_assert(offsetof(struct bip_lanai_event, payload) == 64, "event payload offset");
_Static_assert(sizeof(struct bip_lanai_lrecv) == 32, "long receive entry size");
_Static_assert(sizeof(struct bip_lanai_rma) == 64, "one-sided operation size");
_Static_assert(sizeof(struct bip_lanai_rma) <= BIP_LANAI_INLINE_MAX, "fits a descriptor");
_Static_assert(sizeof(struct bip_lanai_post) == 8, "post entry size");
_Static_assert(sizeof(struct bip_lanai_tagq) == 32, "tag queue entry size");
_Static_assert(offsetof(struct bip_lanai_regs, off_tagq) == 64, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, ntags) == 76, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, qwin_size) == 80, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, qwin_fd) == 88, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, state) == 128, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, control) == 192, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, event_cons) == 320, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, send_cons) == 384, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, need_doorbell) == 448, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, detected) == 544, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, host_sleeps) == 640, "register page layout");
_Static_assert(offsetof(struct bip_lanai_regs, host_wake) == 704, "register page layout");
_Static_assert(offsetof(struct bip_lanai_fw, packets) == 352, "firmware registers layout");
_Static_assert(offsetof(struct bip_lanai_fw, nrails) == 44, "firmware registers layout");
_Static_assert(offsetof(struct bip_lanai_regs, rail) == 96, "register page layout");
_Static_assert(sizeof(struct bip_lanai_regs) <= BIP_LANAI_REGS_SIZE, "register page fits");
_Static_assert(offsetof(struct bip_lanai_fw, wake) == 128, "firmware registers layout");
_Static_assert((BIP_LANAI_SEND_SLOTS & (BIP_LANAI_SEND_SLOTS - 1)) == 0, "power of two");
_Static_assert((BIP_LANAI_EVENT_SLOTS & (BIP_LANAI_EVENT_SLOTS - 1)) == 0, "power of two");
_Static_assert((BIP_LANAI_LRECV_SLOTS & (BIP_LANAI_LRECV_SLOTS - 1)) == 0, "power of two");

/* Board geometry: offsets of its parts from the board's start, and its size. */
static inline uint64_t bip_lanai_board_layout(uint64_t *off_send, uint64_t *off_event,
					      uint64_t *off_lrecv, uint64_t *off_post,
					      uint64_t *off_tagq)
{
	uint64_t off = BIP_LANAI_REGS_SIZE;

	*off_send = off;
	off += (uint64_t)BIP_LANAI_SEND_SLOTS * BIP_LANAI_SLOT_SIZE;
	*off_event = off;
	off += (uint64_t)BIP_LANAI_EVENT_SLOTS * BIP_LANAI_SLOT_SIZE;
	*off_lrecv = off;
	off += (uint64_t)BIP_LANAI_LRECV_SLOTS * sizeof(struct bip_lanai_lrecv);
	*off_post = off;
	off += (uint64_t)BIP_LANAI_LRECV_SLOTS * sizeof(struct bip_lanai_post);
	*off_tagq = off;
	off += (uint64_t)BIP_LANAI_TAGQ_SLOTS * sizeof(struct bip_lanai_tagq);
	return (off + 4095) & ~(uint64_t)4095;
}

/* The handle of a long message: the source node and its send number at the source board. */
static inline uint64_t bip_lanai_handle(uint32_t src, uint32_t lsend)
{
	return ((uint64_t)src << 32) | lsend;
}

#endif /* BIP_LANAI_BOARD_H */
