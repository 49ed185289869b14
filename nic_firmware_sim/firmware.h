/* SPDX-License-Identifier: MIT */
/*
 * firmware.h - the simulated LANai firmware (lanai-sim).
 *
 * lanai_sim.c  start-up, the board segment, the service loop: descriptors,
 *              long transfers, sleeping and waking
 * dma.c        the hosts' memory: process_vm_readv/writev for long messages,
 *              the DMA window and the tag queues for arrivals
 * wire.c       packets: CRC, routing through the simulated switches, fault
 *              injection, delivery checks (CRC, sequence), trace
 * route.c      where a route of the configuration lands, in the topology
 * rma.c        one-sided operations: regions, requests, answers, their
 *              reliability, the atomic arithmetic
 * crc32c.c     the CRC of the wire
 */
#ifndef LANAI_FIRMWARE_H
#define LANAI_FIRMWARE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "conf.h"
#include "lanai_board.h"
#include "lanai_ring.h"
#include "tagq.h"

struct bip_topology;

/* Packet kinds on the wire. */
enum lanai_pkt_kind {
	LANAI_PKT_SHORT = 1,	/* payload: a short message */
	LANAI_PKT_RTS = 2,	/* a long message: arg0 send number, arg1 length */
	LANAI_PKT_CTS = 3,	/* receiver ready: arg0 send number, arg1 receive index
				 * (tag 0: the receiver's board does not know it) */
	LANAI_PKT_DATA = 4,	/* arg0 receive index, arg1 offset; payload: the data */
	LANAI_PKT_ACK = 5,	/* all data landed: arg0 send number */
	LANAI_PKT_ABORT = 6,	/* the sender cannot read its data: arg0 receive index,
				 * arg1 errno */
	LANAI_PKT_SYNC = 7,	/* the link is idle: did all before this arrive? */
	LANAI_PKT_SYNC_ACK = 8, /* yes: arg0 the sequence number of the SYNC */
	LANAI_PKT_DGRAM = 9,	/* datagram mode: payload the datagram (tag 0) */
	LANAI_PKT_RMA_REQ = 10, /* a one-sided request: seq its number (rma.c) */
	LANAI_PKT_RMA_ANS = 11, /* its answer: seq the request's number */
};

/* 1 for the packets of the one-sided protocol, which have their own
 * sequence numbers and reliability (rma.c) and none of the link's. */
static inline int lanai_rma_kind(unsigned kind)
{
	return kind == LANAI_PKT_RMA_REQ || kind == LANAI_PKT_RMA_ANS;
}

/*
 * The tail of a link.  A lost packet shows as a gap at the next packet of its
 * link; the last packet has no next one, so a board that has sent packets
 * not yet confirmed sends a SYNC on that link once it has been idle for
 * LANAI_SYNC_US (the knob sync).  The SYNC takes the link's next sequence
 * number: if anything before it was lost, the receiver's sequence check
 * reports the gap; else the receiver answers with a SYNC_ACK on the reverse
 * link, which confirms the link up to the SYNC.  Without an answer within
 * LANAI_SYNC_US the board sends another SYNC (a lost SYNC or SYNC_ACK shows
 * as a gap at the next one); each further wait is twice the one before, up
 * to LANAI_SYNC_BACKOFF_MAX times LANAI_SYNC_US, so that a board whose host
 * reads nothing does not gather them by the thousand.  SYNC_ACKs need
 * no confirming (else SYNCs and SYNC_ACKs would call each other forever): a
 * lost one shows at the next.
 */
#define LANAI_SYNC_US 1000	  /* idle time of a link before a SYNC */
#define LANAI_SYNC_BACKOFF_MAX 32 /* longest wait between SYNCs, in LANAI_SYNC_US */
#define LANAI_LINK_TIMEOUT_US 10000000 /* BIP_LANAI_LINK_TIMEOUT's default: 10 s */

struct lanai_link {
	uint32_t need;	     /* sequence number + 1 of the last packet to confirm */
	uint32_t confirmed;  /* the receiver has had every packet before this one */
	uint64_t sync_due;   /* firmware clock: when the next SYNC goes */
	uint32_t unanswered; /* SYNCs sent since the last SYNC_ACK or packet */
	uint64_t since;	     /* firmware clock: pending since, or last confirmed */
	int pending;	     /* need is beyond confirmed */
	int failed;	     /* the sender's host was told the link cannot deliver */
};

/* The header of a packet, as it crosses the wire.  crc covers the header
 * (with crc set to 0) and the payload. */
struct lanai_pkt_header {
	uint32_t src, dst; /* nodes */
	uint8_t kind;
	uint8_t nhops; /* route: 1 .. 4 hops; hop[0] == 256 for direct */
	uint16_t hop[BIP_CONF_MAXHOPS];
	uint16_t pad;
	uint32_t tag;
	uint32_t seq; /* per link (source, destination), from 0 */
	uint32_t len; /* payload bytes */
	uint64_t arg0, arg1;
	uint32_t crc;
	uint32_t pad2;
};

/*
 * The part of a datagram's payload that the wire does not carry: a
 * descriptor of the data in the sending host's memory (the fragment of the
 * user's buffer its descriptor named), which the receiving board reads at
 * delivery with one process_vm_readv straight into its host's receive
 * queue.  The payload a packet carries (cap bytes: the reliability layer's
 * header, a short message's data) comes first, then the len bytes read at
 * addr in process pid; h.len is their sum.  The descriptor is covered by
 * the wire's CRC; the data itself is checked by the host (rel.c, dcrc), as
 * on a real board whose DMA reads the host's memory when the packet leaves.
 */
struct lanai_gather {
	uint64_t addr; /* in the sending host's address space */
	uint32_t len;  /* bytes; 0: the packet carries its whole payload */
	int32_t pid;   /* the sending host */
};

struct lanai_packet {
	struct lanai_packet *next;
	uint32_t from;	     /* the sending board (bookkeeping, not on the wire) */
	uint32_t cap;	     /* payload bytes the packet carries, whatever h.len says */
	uint32_t bus_flip;   /* datagram: 1 + the bit its DMA into the host flips, or 0 */
	uint64_t deliver_at; /* microseconds of the firmware's clock */
	struct lanai_gather g; /* datagram: the payload read at delivery */
	struct lanai_pkt_header h;
	uint8_t payload[];
};

#define LANAI_DATA_CHUNK 65536 /* payload of a DATA packet */
/* Payload of any packet: a datagram is a descriptor's payload and a chunk. */
#define LANAI_PAYLOAD_MAX (LANAI_DATA_CHUNK + BIP_LANAI_INLINE_MAX)
#define LANAI_TAG_WORDS 8      /* bitmaps of up to 512 tags */
#define LANAI_LSENDS 4096      /* long sends in flight per board (power of two) */
#define LANAI_INBOUND_MAX 256  /* packets queued for a board before senders wait */
/*
 * Packets of one link waiting for room in the receiver's tag queues before
 * its sender waits: the last resort of flow control (nic.h).  The sender's
 * host holds a full tag once its core hears of it, so what waits here is
 * what it posted before that: at most its send ring (BIP_LANAI_SEND_SLOTS)
 * and the receiver's inbound queue (LANAI_INBOUND_MAX) per round of its
 * progress; this leaves room for many such rounds.
 */
#define LANAI_STALL_MAX 8192

struct lanai_lsend {
	uint64_t addr, len, cookie;
	uint32_t dst, gen, tag;
	int active;
};

struct lanai_lrecv_fw {
	struct bip_lanai_lrecv e; /* snapshot of the host's entry at posting */
	uint64_t got;
	int active;
};

/* A tag queue of a board's host (tagq.h), as the firmware produces into it. */
struct lanai_tagq {
	uint8_t *buf;		   /* in the firmware's mapping of the host's window */
	uint64_t freed_addr;	   /* in the host's address space */
	uint32_t cap;
	uint32_t freed_seen;	   /* the host's freed count, last read */
	struct bip_tagq_prod prod; /* tail and count of bytes written */
};

/* Packets of one source that found their tag's queue full, in arrival
 * order; the source's packets for other tags pass them. */
struct lanai_stall {
	struct lanai_packet *head, *tail;
	uint32_t count;
	uint64_t tags[LANAI_TAG_WORDS];  /* tags with packets here */
	uint64_t told[LANAI_TAG_WORDS];  /* tags the host was told are held */
};

/* A long send being pushed: the receiver's CTS arrived. */
struct lanai_xfer {
	struct lanai_xfer *next;
	uint32_t lsend; /* send number */
	uint32_t peer;
	uint64_t rindex; /* the receiver's table index */
	uint64_t off;
};

struct lanai_board {
	int node;
	struct bip_lanai_regs *regs;
	struct bip_lanai_desc *send;
	struct bip_lanai_event *events;
	struct bip_lanai_lrecv *lrecv;
	struct bip_lanai_post *post;
	uint32_t state; /* mirror of regs->state */
	pid_t pid;
	int releasing; /* the host released the board or ended */
	int host_ended; /* its process is gone: its memory is not read any more */
	uint32_t send_cons, post_cons;
	struct bip_lanai_prod evp;		/* event queue producer */
	int notify;				/* events published since the last look at
						 * whether its host sleeps (lanai_wake_hosts) */
	uint32_t *tx_seq;			/* [dst] next sequence number to send */
	uint32_t *rx_seq;			/* [src] next sequence number expected */
	uint8_t *rx_failed;			/* [src] a fault was detected on that link */
	struct lanai_link *link;		/* [dst] what the receiver has confirmed */
	int npending;				/* links with a packet not yet confirmed */
	struct lanai_packet *in_head, *in_tail; /* the wire's packets for this board */
	int in_count;
	uint32_t mode;		   /* enum bip_lanai_mode, taken at attach */
	struct lanai_tagq *tq;	   /* [ntags] the host's tag queues; in datagram
				    * mode one: its receive queue */
	uint32_t ntags;
	void *qwin; /* the host's DMA window, mapped at attach */
	size_t qwin_size;
	struct lanai_stall *stall; /* [src] arrivals waiting for room in a queue */
	int nstalled;
	struct lanai_packet *held; /* a packet held back by the reorder fault */
	uint64_t held_since;
	int inflight;			    /* packets from this board not yet delivered */
	uint64_t tx_free_ns; /* its link is busy until then (BIP_LANAI_RATE) */
	/* The board goes DEAD (released) once inflight is 0 and no link is
	 * pending towards a board whose host still runs. */
	struct bip_lanai_event pending_err; /* an error event waiting for room */
	int has_pending_err;
	struct lanai_lsend *lsend; /* [LANAI_LSENDS] */
	uint32_t *lsfree;
	int nlsfree;
	struct lanai_lrecv_fw lr[BIP_LANAI_LRECV_SLOTS];
	/* Transfers in the order their CTS came, which is the order the
	 * receiver posted its long receives (pump_xfers keeps it). */
	struct lanai_xfer *xfers, **xfers_tail;
	/* One-sided operations (rma.c). */
	struct lanai_rma_region *rgn; /* [LANAI_RMA_REGIONS] what its host exposes */
	struct lanai_rma_link **rma;  /* [node]: both ends of board -> node, or NULL */
	struct lanai_rma_op *rma_done, **rma_done_tail; /* complete, event not yet put */
	int rma_busy;		      /* links with operations queued or in flight */
};

struct lanai_faults {
	uint32_t ppm[BIP_LANAI_NFAULTS]; /* probability per million, per packet */
	uint64_t delay_us;
	double rate_mbs; /* speed of each board's link, MB/s; 0: no limit */
	int linkdown_node;	 /* -1: none */
	uint64_t linkdown_after; /* packets, or microseconds if in_time */
	uint64_t linkup_after;	 /* the same: the link is up again (0: never) */
	int linkdown_in_time;
	uint64_t seed;
	uint64_t sync_us; /* idle time of a link before a SYNC */
	uint64_t link_timeout_us; /* a pending link confirmed nothing for this: down */
	/* Lose the drop_n-th (from 0) packet of kind drop_kind (0: none) from
	 * node drop_src to node drop_dst. */
	uint32_t drop_kind, drop_src, drop_dst;
	uint64_t drop_n;
	char trace[512]; /* the trace file, or "" */
};

/*
 * One network of boards: a rail.  A host with several boards per node
 * (rails, BIP_LANAI_RAILS or a configuration with several routes per line)
 * has one lanai_fw per rail, all in one firmware process and one segment:
 * board b of rail r is cabled to rail r's network only, and its packets
 * name nodes (src, dst) within that rail.  Each rail has its own fault
 * knobs (BIP_LANAI_RAIL<r>_*), generator, link state and counters; the
 * segment's counters are their sums.
 */
struct lanai_fw {
	int rail, nrails;
	struct bip_lanai_fw *seg;
	size_t seg_size;
	char name[128];
	int unlinked;
	int nboards;
	/* A job that may grow (lanai-sim -u) has boards for the nodes that may
	 * join it: nknown are the nodes it started with, and each pass walks
	 * the first nactive, nknown and every board attached since; the
	 * others are looked at only for an attach (look_for_attach), and have
	 * no state here until then (board_init): a node number from a host or
	 * a packet is checked against nactive before it indexes a board. */
	int nknown, nactive;
	struct lanai_board *boards;
	const struct bip_conf *conf;
	const struct bip_topology *topo; /* NULL: only direct routes */
	/* Route verdicts, computed at first use: [src * n + dst]. */
	int8_t *route_ok; /* 0 unknown, 1 good, -1 wrong */
	char **route_why;
	struct lanai_faults faults;
	uint64_t rng;	      /* faults of the packets the hosts' work makes */
	uint64_t rng_sync;    /* faults of SYNCs and SYNC_ACKs, whose number depends on
			       * time: the others stay reproducible from the seed */
	uint64_t drop_seen;   /* packets that matched the drop knob */
	int linkdown;	      /* 0 not yet, 1 the link is down now, 2 up again */
	uint64_t linkdown_at; /* packet count when it went down */
	uint64_t linkup_at;   /* packet count when it came up again */
	uint64_t packets;     /* packets put on this rail's wire */
	/* One-sided requests (rma.c): made, sent again after a time-out,
	 * answered again (duplicates), dropped as early (beyond the next). */
	uint64_t rma_requests, rma_resent, rma_replayed, rma_early;
	uint64_t injected[BIP_LANAI_NFAULTS]; /* this rail's counters */
	uint64_t detected[BIP_LANAI_NDETECT];
	FILE *trace;
	uint64_t t0;	   /* start, in microseconds */
	int spin;	   /* it may spin when idle (enough processors) */
	int blocked;	   /* a delivery waits for room in an event queue */
	uint64_t next_due; /* the earliest delayed or held packet */
};

/*
 * One-sided operations (rma.c, where the protocol is described).
 */
#define LANAI_RMA_REGIONS 256 /* regions a board exposes at once (8 bits of a key) */
#define LANAI_RMA_WINDOW 32   /* requests in flight per origin and target (power of two) */
#define LANAI_RMA_RTO_US 2000 /* first retransmission time-out, before the wire's delay */
#define LANAI_RMA_BACKOFF_MAX 6 /* the time-out doubles up to 2^6 times */

/* A request's header, at the start of its payload. */
struct lanai_rma_req {
	uint64_t key;
	uint64_t offset;   /* this request's first byte in the region */
	uint64_t span_off; /* the whole operation's bytes: [span_off, span_off + span_len) */
	uint64_t span_len;
	uint32_t len;	   /* bytes of the region this request covers */
	uint32_t count;	   /* ATOMIC: elements */
	uint32_t ack;	   /* the origin has the answers of every request before this */
	uint8_t what;	   /* enum bip_lanai_rma_what: PUT, GET, ATOMIC */
	uint8_t op, type;  /* ATOMIC */
	uint8_t pad;
};

/* An answer's header, at the start of its payload. */
struct lanai_rma_ans {
	int32_t status; /* 0 or -errno */
	uint32_t len;	/* bytes after it: GET's data, ATOMIC's values before */
};

_Static_assert(sizeof(struct lanai_rma_req) == 48, "request header size");
_Static_assert(sizeof(struct lanai_rma_ans) == 8, "answer header size");

/* The payload of a request at most: its header and a chunk. */
#define LANAI_RMA_PAYLOAD_MAX (sizeof(struct lanai_rma_req) + LANAI_DATA_CHUNK)
_Static_assert(LANAI_RMA_PAYLOAD_MAX <= LANAI_PAYLOAD_MAX, "a request fits a packet");

struct lanai_rma_region {
	uint64_t base, len; /* in its host's address space */
	uint32_t gen;	    /* 24 bits: a withdrawn key's generation is never reused */
	int active;
};

/* An operation its host posted, from descriptor to RMA_DONE. */
struct lanai_rma_op {
	struct lanai_rma_op *next; /* its link's queue, then the board's done list */
	struct bip_lanai_rma a;	   /* the descriptor's arguments, as taken */
	uint64_t cookie;
	uint64_t issued; /* bytes of the region its requests cover so far */
	uint32_t out;	 /* requests sent and not answered */
	int32_t status;	 /* the first error */
};

/* A request in flight: kept for retransmission until its answer comes. */
struct lanai_rma_sent {
	struct lanai_packet *p;
	struct lanai_rma_op *op;
	uint64_t at; /* the request's first byte, from the operation's first */
};

/* Board b and node n: the origin's end (b's requests to n) and the
 * target's end (n's requests to b). */
struct lanai_rma_link {
	/* origin */
	struct lanai_rma_op *head, *tail; /* operations not yet wholly sent, in order */
	uint32_t next;			  /* sequence number of the next request */
	uint32_t acked;			  /* every answer before this one came */
	struct lanai_rma_sent win[LANAI_RMA_WINDOW]; /* [seq % WINDOW] */
	uint64_t due;	   /* firmware clock: retransmit then */
	uint64_t since;	   /* the last answer, or the first request after a pause */
	uint32_t backoff;  /* time-outs in a row */
	int failed;	   /* given up: n cannot be reached */
	/* target */
	uint32_t expect;			       /* the next request to execute */
	struct lanai_packet *ans[LANAI_RMA_WINDOW];    /* answers kept for duplicates */
};

/* Microseconds on the monotonic clock. */
uint64_t lanai_now_us(void);

/* wire.c */
/* The knobs of rail's wire: the knob file ($BIP_LANAI_CONF, else
 * $HOME/.bip/biplanai if it exists), then the BIP_LANAI_* variables; in
 * both, a knob given for the rail alone ("rail1.loss 5",
 * BIP_LANAI_RAIL1_LOSS=5) wins over the one for every rail.  A knob for a
 * rail at or beyond nrails is an error. */
int lanai_faults_from_env(struct lanai_faults *f, int rail, int nrails, char *err,
			  size_t errlen);
/* Count an injected fault or a detected one, on the rail and the segment. */
void lanai_count_injected(struct lanai_fw *fw, enum bip_lanai_fault k);
void lanai_count_detected(struct lanai_fw *fw, enum bip_lanai_detect k);
/* Put a packet on the wire from board src (h.src, h.dst, kind, tag, len, args
 * and payload set): routes, sequences, CRCs, injects faults, queues it for
 * the destination board or reports why not.  Takes the packet. */
void lanai_wire_send(struct lanai_fw *fw, struct lanai_packet *p);
/* Check a packet arriving at board b: 0 if it may be delivered, else a
 * negative errno after the fault was reported to b's host. */
int lanai_wire_check(struct lanai_fw *fw, struct lanai_board *b, struct lanai_packet *p);
/* The fields of a packet header as the wire decodes them, against the
 * payload's length on the wire and the number of boards: 0, or -EPROTO
 * with why (the CRC is checked apart, lanai_packet_crc_ok). */
int lanai_packet_header_check(const struct lanai_pkt_header *h, size_t payload_len, int nboards,
			      char *why, size_t whylen);
struct lanai_packet *lanai_packet_new(uint32_t len);
void lanai_trace(struct lanai_fw *fw, const char *dir, int board, const struct lanai_pkt_header *h,
		 const char *verdict);
/* Queue an event for board b's host (errors wait in pending_err if full);
 * the host is woken, if it sleeps, at the end of the firmware's pass;
 * 0 or -EAGAIN when the event queue is full. */
int lanai_event_put(struct lanai_board *b, const struct bip_lanai_event *ev);
/* Report a fault to b's host as an error event. */
void lanai_report(struct lanai_fw *fw, struct lanai_board *b, enum bip_lanai_detect what,
		  const struct lanai_pkt_header *h, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void lanai_packet_drop(struct lanai_fw *fw, struct lanai_packet *p);
/* A packet from board src to itself (a one-sided operation on its own
 * host): no wire, no fault; queued for it as if it had arrived. */
void lanai_wire_loopback(struct lanai_fw *fw, struct lanai_packet *p);
/* 1 if the packet's CRC is right. */
int lanai_packet_crc_ok(const struct lanai_packet *p);

/* Board b's pending links: a SYNC on each one idle for its wait, none towards
 * a board whose host has ended (nobody is left to tell: the link is given
 * up).  The earliest SYNC still to come goes into fw->next_due.  Returns the
 * number of SYNCs sent. */
int lanai_sync_links(struct lanai_fw *fw, struct lanai_board *b, uint64_t now);
/* A SYNC_ACK from node peer reached board b: the link from b to peer is
 * confirmed up to seq, the SYNC's sequence number. */
void lanai_sync_acked(struct lanai_fw *fw, struct lanai_board *b, uint32_t peer, uint32_t seq);

/* dma.c: the hosts' memory */
/* Read or write len bytes at addr in process pid: 0 or a negative errno. */
int lanai_dma_read(pid_t pid, void *dst, uint64_t addr, size_t len);
int lanai_dma_write(pid_t pid, uint64_t addr, const void *src, size_t len);
/* Report to b's host an error that ends it (an EV_ERROR event). */
void lanai_board_error(struct lanai_board *b, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map the DMA window of b's host (regs->qwin_fd, qwin_size) and take its
 * tag queue table; a window or table that will not do is reported. */
void lanai_take_tagqs(struct lanai_board *b);
/* Take the table t of n queues in a window of size bytes mapped at p:
 * 0, or -EPROTO after reporting what is wrong. */
int lanai_set_tagqs(struct lanai_board *b, void *p, uint64_t size,
		    const struct bip_lanai_tagq *t, uint32_t n);
void lanai_drop_window(struct lanai_board *b);
/* Write a SHORT or RTS packet that reached board b into its tag queue and
 * tell the host: 0, -EAGAIN when the queue has no room yet (keep it), or a
 * negative errno after reporting it to the host. */
int lanai_queue_arrival(struct lanai_fw *fw, struct lanai_board *b,
			const struct lanai_packet *p);
/* Keep a packet that found its queue full, behind those kept from its source. */
void lanai_stall(struct lanai_fw *fw, struct lanai_board *b, struct lanai_packet *p);
/* Write the kept packets, source by source, while their queues take them
 * (dropped if the host has ended); how many left. */
int lanai_retry_stalled(struct lanai_fw *fw, struct lanai_board *b);
/* 1 if packets of src for tag wait on b (a later one of theirs waits too). */
int lanai_stalled_tag(const struct lanai_board *b, uint32_t src, uint32_t tag);

/* Payload bytes of a packet: those it carries, then those it gathers. */
static inline uint64_t lanai_packet_bytes(const struct lanai_packet *p)
{
	return (uint64_t)p->cap + p->g.len;
}

/* 1 for the packets that go into the host's tag queues. */
static inline int lanai_queued_kind(const struct lanai_packet *p)
{
	return p->h.kind == LANAI_PKT_SHORT || p->h.kind == LANAI_PKT_RTS ||
	       p->h.kind == LANAI_PKT_DGRAM;
}

/* 1 if an event can be written to b's event queue now. */
static inline int lanai_event_room(struct lanai_board *b)
{
	return bip_lanai_ring_room(&b->evp, &b->regs->event_cons, BIP_LANAI_EVENT_SLOTS);
}

/* rma.c */
/* Bytes of an element of type (enum bip_rma_type), or 0 if there is no such type. */
size_t lanai_rma_type_size(int type);
/* target = target op operand for count elements of type, one after the
 * other; old (may be NULL) gets the values before.  CSWAP: target becomes
 * operand where it equals compare.  0, or -EINVAL for an op or type that
 * does not exist (nothing written then).  The buffers may be unaligned. */
int lanai_rma_apply(int op, int type, uint32_t count, void *target, const void *operand,
		    const void *compare, void *old);
/* The checks of a request that arrived at board node from a board of the
 * job whose key stamp is stamp, against that board's regions: 0 with the
 * region's base address in *addr, or -errno for the answer (-EPROTO: not
 * a request the firmware makes; -EACCES: key; -ERANGE: bounds; -EINVAL:
 * op or type).  Touches nothing. */
int lanai_rma_check(const struct lanai_packet *p, uint32_t node, uint16_t stamp,
		    const struct lanai_rma_region *rgn, uint64_t *addr);
/* The stamp of this firmware's keys (never 0). */
uint16_t lanai_rma_stamp(void);
/* Take a descriptor of kind RMA from board b's ring: 0, or -EAGAIN when it
 * must wait (its answer needs an event slot). */
int lanai_rma_take(struct lanai_fw *fw, struct lanai_board *b, const struct bip_lanai_desc *d);
/* Send what the window lets, retransmit what timed out, give up on the
 * targets that cannot be reached, and tell the host of completions; the
 * next time-out goes into fw->next_due.  Returns how much was done. */
int lanai_rma_pump(struct lanai_fw *fw, struct lanai_board *b, uint64_t now);
/* A request or an answer that passed the wire's checks at board b. */
void lanai_rma_arrived(struct lanai_fw *fw, struct lanai_board *b, const struct lanai_packet *p);
/* Forget everything of board b's host: regions, operations, answers kept. */
void lanai_rma_reset(struct lanai_board *b, int nboards);

/* route.c: where rail's route of the configuration from node src to node
 * dst lands (from board rail of src's host; it must reach board rail of
 * dst's host).  0 if at dst's host, else -EHOSTUNREACH with the reason in why. */
int lanai_route_check(const struct bip_conf *conf, const struct bip_topology *topo, int rail,
		      int src, int dst, char *why, size_t whylen);

#endif /* LANAI_FIRMWARE_H */
