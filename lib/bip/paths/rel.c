/* SPDX-License-Identifier: MIT */
/*
 * rel.c - the reliability layer: every message intact, once and in order
 * over datagram NICs that lose, corrupt, duplicate and reorder (rel.h),
 * over one or several paths per peer.  After LA-MPI (Aulwes et al., 2004):
 * end to end, in the host.
 *
 * Packets.  Each datagram starts with a header (struct rel_hdr), then its
 * data.  Reliable packets take the next 64-bit sequence number of the
 * (sender, receiver) pair, whatever path they go on, so that a packet moved
 * to another path keeps its number and a copy is known as such whichever
 * path brings it:
 *
 *   SHORT  a short message: tag, oseq, data
 *   RTS    a long message is announced: tag, oseq, arg0 its send id,
 *          arg1 its length; an eager one (below) carries its data too
 *   CTS    the receiver has its buffer: arg0 the send id, arg1 the
 *          receive id
 *   FRAG   a piece of a long message: arg0 the receive id, arg1 its
 *          offset, data
 *
 * and two that take no number and are never sent again:
 *
 *   ACK    nothing but the acknowledgement fields
 *   NACK   arg0: the sequence number of a packet whose data was corrupt
 *   PROBE  asks for an ACK on the path it came by (a retired path is tried);
 *          that ACK has flag PROBED, and brings the path back into use
 *
 * Every packet carries ack (every sequence number below it arrived) and
 * sack (bit i: ack + 1 + i arrived too): acknowledgements ride on traffic.
 * When none flows back, the receiver sends an ACK after BIP_REL_ACK_DELAY,
 * or at once after a quarter window of packets, after a duplicate, and when
 * the packet asks (flag ACKNOW: retransmissions, probes, the fragment that
 * fills half of the sender's BIP_REL_WINDOW_BYTES, and a long message's last
 * fragment).  Without the last two, a sender whose byte window holds fewer
 * than a quarter window of fragments (16 of 64 KiB in 1 MiB) would stall
 * for BIP_REL_ACK_DELAY at every window, and a long send would complete
 * that much late.
 *
 * Checks.  hcrc is the CRC32C of the header (hcrc 0); a header that fails
 * it, or whose fields do not hold, is dropped and counted as corrupt.  dcrc
 * is the CRC32C of the data, checked where the data ends: a fragment in
 * the user's buffer, of what the copy wrote there (bip_crc32c_copy), a short message in the host
 * memory the NIC wrote it to, before the core takes it.  A packet whose
 * data fails the check is not acknowledged and draws a NACK: its sender
 * sends it again at once.  Packets already received are dropped and
 * counted as duplicates.
 *
 * Eager long messages.  A long message of the program's tags (below NTAGS)
 * of at most BIP_REL_EAGER bytes (16 KiB by default, at most a fragment)
 * goes whole in its RTS, from the user's buffer, with ACKNOW: no CTS, no
 * FRAG, and its send completes when the RTS is acknowledged (the buffer is
 * its retransmission buffer, as for fragments).  Through relays that is one
 * crossing instead of three.  Over the forwarding driver
 * (bip_dgram.copy_eager), where that acknowledgement would cross the relays
 * as the data did, the message is copied instead (to a node that has not
 * ended): its send is complete at once (post_long returns 1), the RTS does
 * not ask for an acknowledgement, which rides on traffic as a SHORT's does,
 * and the copy is its retransmission buffer until then.  The receiver checks
 * the data as a SHORT's, and when the RTS's turn comes offers it to the core
 * as a long announcement whose handle names an early record (REL_EARLY in
 * the handle): the data stays where the NIC wrote it while the core may take
 * it at once (a receive posted), and is copied into the record otherwise,
 * until the core gives the buffer (post_long_recv copies it there and
 * returns 1).  The core's flow control per tag bounds the records as it
 * bounds any announcement.  A layer's long message (tags from NTAGS) stays
 * at the sender until the layer asks for it (bip_layer(3)): never eager.
 *
 * Order.  SHORT and RTS carry oseq, their order among the sender's
 * messages to this receiver; they reach the core in that order, which is
 * BIP's (per sender, receiver and tag, and more).  One that comes early,
 * or that the core cannot take yet (nic.h's last resort), is copied and
 * waits; fragments go to their place in any order.
 *
 * Retransmission.  A packet not acknowledged BIP_REL_RTO after it was sent
 * is sent again, each wait twice the one before, up to BIP_REL_RTO_MAX.
 * A short message's copy is kept until it is acknowledged; a long message
 * is sent from the user's buffer, which is its retransmission buffer: the
 * send completes when its last fragment is acknowledged.  The sender has at
 * most BIP_REL_WINDOW packets unacknowledged per peer (so at most that
 * many fragments of BIP_REL_FRAG bytes); when the window is full, new
 * short messages wait in the core's queue and fragments wait their turn.
 *
 * Paths.  A short message, RTS or CTS goes on one path, fragments are
 * striped over every path that is up, in turn.  A path that the NIC
 * reports down, or on which BIP_REL_PATH_FAILS sends in a row timed out
 * while another path is up, is retired: its unacknowledged packets are
 * sent again on the others (counted as rebinds) and it gets a PROBE every
 * BIP_REL_PROBE until the answer to one comes back on it; then it is used
 * again.  Only that answer brings a path back: traffic from the peer on it
 * proves only the peer's direction, and a path may fail one way (a wrong
 * route, a cable half broken).  A send counts as failed when it times
 * out, and the count of its path is cleared when something sent on that
 * path is acknowledged.  The last path up is never retired for timeouts
 * (there is nowhere to go), but it has failed too while they go on.  When
 * every path to a peer has failed and nothing has come from it for
 * BIP_RETRY_TIMEOUT while packets to it wait, the peer is lost: the error
 * names it and the state of each path, its pending long transfers fail, and
 * every wait fails from then on (bip_wait_step).
 *
 * Nodes that join (nic.h, bip_grow(3)).  In a job that may grow, a node
 * that was not served at open gets its state when the core reaches it
 * (rel_reach, once the NIC below says it is there), or when a datagram
 * comes from it and the NIC below says the same; the layer then tells the
 * core (bip_core_peer_joined).  Its sequence numbers start at 1 both ways,
 * as a peer's do at open: neither side has sent the other anything before.
 *
 * Sleeping (nic.h).  The layer has the sleep ops when its NIC has them:
 * it arms the NIC's sleep, with the lock held, for no longer than until
 * the layer's next timer (rel_sleep_arm says which, and when it does not
 * sleep at all), and the wait is the NIC's, without the lock; what arrives
 * wakes it, and the next poll runs the timers.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "error.h"
#include "progress.h"
#include "state.h"
#include "crc32c.h"
#include "rel.h"

#define REL_VERSION 1

enum rel_kind {
	REL_SHORT = 1,
	REL_RTS = 2,
	REL_CTS = 3,
	REL_FRAG = 4,
	REL_ACK = 5,
	REL_NACK = 6,
	REL_PROBE = 7,
};

#define REL_F_ACKNOW 1
#define REL_F_PROBED 2 /* an ACK answering a PROBE, on the path it came by */
#define REL_DUPTHRESH 3
#define REL_TIMER_POLLS 16 /* polls without news between two looks at the timers */

struct rel_hdr {
	uint8_t version;
	uint8_t kind;
	uint8_t path;  /* the path it was sent on */
	uint8_t flags;
	uint32_t tag;
	uint64_t seq;  /* reliable kinds: from 1; else 0 */
	uint64_t ack;
	uint64_t sack;
	uint64_t una;  /* the sender's oldest unacknowledged sequence number */
	uint64_t oseq;
	uint64_t arg0;
	uint64_t arg1;
	uint32_t len;  /* bytes of data */
	uint32_t dcrc;
	uint32_t hcrc;
	uint32_t pad;
};
_Static_assert(sizeof(struct rel_hdr) == 80, "the header's size is part of the protocol");
_Static_assert(sizeof(struct rel_hdr) <= BIP_REL_HDR_MAX, "header fits");

enum rel_path_state {
	PATH_UP = 0,
	PATH_RETIRED = 1, /* timed out */
	PATH_DOWN = 2,    /* the NIC said so */
};

static const char *const path_state_name[] = {"up", "retired", "down"};

struct rel_path {
	int state;
	unsigned fails;     /* sends in a row that timed out, nothing heard since */
	uint64_t since;     /* ns: in this state since */
	uint64_t probe_due; /* ns */
	char why[120];      /* what retired it */
};

/* A packet sent and not yet acknowledged: slot seq % window. */
struct rel_txe {
	uint64_t seq;  /* 0: the slot is free */
	uint64_t due;  /* ns: when it goes again */
	uint64_t sent; /* ns: when it went last */
	const void *data;
	struct rel_lsend *ls; /* FRAG: its long send */
	struct rel_hdr h;
	uint8_t path;
	uint8_t retries;
	uint8_t acked;  /* acknowledged selectively, before snd_una reached it */
	uint8_t unsent; /* the NIC had no room: not yet on any path */
	uint8_t fast;   /* sent again already for the gap that later packets show */
	uint8_t ask;    /* REL_F_ACKNOW on every sending (see push_streams), or 0 */
};

/* An ordered arrival (SHORT, RTS) waiting for its turn or for the core. */
struct rel_held {
	struct rel_hdr h;
	unsigned char data[];
};

struct rel_peer {
	int served;
	int failed;
	/* sending */
	uint64_t snd_next, snd_una;
	uint64_t oseq_tx;
	uint64_t next_due;   /* ns: the earliest due of its unacknowledged packets; 0 none */
	uint64_t srtt, rttvar; /* ns: round trip, smoothed, and its variation; 0: no sample yet */
	size_t inflight;     /* bytes of data unacknowledged */
	struct rel_txe *tx;  /* [window] */
	unsigned char *copies; /* [window * max_short]: short messages' copies */
	unsigned rr;
	/* receiving */
	uint64_t rcv_next;
	uint64_t *rcv_bits;  /* [window / 64 (at least 1)]: seq's bit is bit b % 64
			      * of word b / 64, b = seq % window (rcv_bit) */
	uint64_t oseq_rx;
	struct rel_held **held; /* [window], slot oseq % window */
	unsigned nheld;
	unsigned ack_owed;
	int ack_now;
	int ack_path;
	uint64_t ack_due;    /* ns */
	uint64_t last_heard; /* ns */
	uint64_t confirmed;  /* its una: it knows we have all its packets below this */
	struct rel_path path[BIP_REL_MAXPATHS];
	struct rel_peer_counts {
		uint64_t sent[BIP_REL_MAXPATHS];
	} c;
};

enum rel_ls_state { LS_FREE, LS_ANNOUNCED, LS_STREAMING, LS_SENT };

struct rel_lsend {
	uint32_t gen;
	int state;
	int dst;
	const unsigned char *buf;
	unsigned char *copy;    /* an eager message's copy (copy_eager), or NULL */
	size_t len, next, acked;
	uint64_t cookie;
	uint64_t rid;
	struct rel_lsend *next_stream;
};

struct rel_lrecv {
	uint32_t gen;
	int active;
	int src;
	int cts_pending; /* its CTS waits for room in the window */
	unsigned char *buf;
	size_t len, got;
	uint64_t sid;    /* the sender's send id */
	uint64_t cookie;
};

/* An eager message's data, waiting for the core's buffer. */
struct rel_early {
	uint32_t gen;
	int active;
	int src;
	uint32_t len;
	const unsigned char *data; /* the NIC's, during to_core only; else own */
	unsigned char *own;
	int lost;                  /* no memory to keep it: its receive fails */
};

/* In a handle of the core: the announcement is an early record's. */
#define REL_EARLY (1ull << 63)

#define REL_IDX_BITS 20
#define REL_IDX_MASK ((1u << REL_IDX_BITS) - 1)
#define REL_GEN_MASK ((1u << (32 - REL_IDX_BITS)) - 1)

struct bip_rel {
	struct bip_nic nic;
	struct bip_nic *lower;
	struct bip_dgram *dg;
	int mynode, numnodes, npaths;
	int grows;           /* the job may grow: nodes not served may join */
	const struct bip_conf *conf;
	unsigned window;     /* packets, a power of two */
	size_t frag;
	size_t window_bytes; /* fragments' bytes unacknowledged per peer, at most (about) */
	size_t max_short;
	uint64_t rto, rto_max, ack_delay, probe, retry_timeout; /* ns */
	unsigned path_fails;
	struct rel_peer *peers;
	int *served, nserved;  /* the peers served, in the order they were: what the
				* timers walk (a job that grows has room for many) */
	struct rel_lsend *ls;  /* [nls] */
	uint32_t nls, *lsfree, nlsfree;
	struct rel_lrecv *lr;  /* [nlr] */
	uint32_t nlr, *lrfree, nlrfree;
	struct rel_early *early; /* [nearly] */
	uint32_t nearly, *earlyfree, nearlyfree;
	size_t eager;          /* BIP_REL_EAGER: the largest eager message */
	uint64_t linger_due;   /* ns: linger's next ask (rel_close); 0 none */
	struct rel_lsend *stream_head, **stream_tail;
	unsigned cts_waiting;
	unsigned busy;         /* some peer has something unacknowledged or owed */
	unsigned nheld;        /* ordered arrivals waiting, over all peers */
	int opened;
	uint64_t now;          /* ns, read once per poll when needed */
	unsigned quiet_polls;  /* polls in a row that did not read the clock */
	struct bip_nic_ops ops; /* bip_rel_ops, with sleep if the NIC below can */
	char desc[256];
};

static inline struct bip_rel *rel_of(struct bip_nic *nic)
{
	return (struct bip_rel *)nic;
}

/* --- counters --- */

static inline struct bip_counters *counters(void)
{
	return &bip_state.counters;
}

static inline void count_path(int path, size_t off)
{
	if (path >= 0 && path < BIP_COUNTER_PATHS)
		(*(uint64_t *)((char *)&counters()->path[path] + off))++;
}

#define COUNT_PATH(path, field) count_path(path, offsetof(struct bip_path_counters, field))

/* --- sending packets --- */

/* The retransmission timeout of a packet to p sent retries times before:
 * twice the round trip measured plus four times its variation (Jacobson's
 * estimate, with room for a round trip that doubles when the processes
 * share processors), at least BIP_REL_RTO, doubled at each retry, at most
 * BIP_REL_RTO_MAX. */
static uint64_t rto_of(const struct bip_rel *r, const struct rel_peer *p, unsigned retries)
{
	uint64_t t = 2 * p->srtt + 4 * p->rttvar;

	if (t < r->rto)
		t = r->rto;
	t <<= retries < 16 ? retries : 16;
	return t < r->rto_max ? t : r->rto_max;
}

/* A round trip measured on a packet sent once (Karn: never on one sent again). */
static void rtt_sample(struct rel_peer *p, uint64_t rtt)
{
	if (!p->srtt) {
		p->srtt = rtt;
		p->rttvar = rtt / 2;
		return;
	}
	p->rttvar = (3 * p->rttvar + (rtt > p->srtt ? rtt - p->srtt : p->srtt - rtt)) / 4;
	p->srtt = (7 * p->srtt + rtt) / 8;
}

/* The acknowledgement fields for peer p; sending them settles what p was owed. */
/* 1 if sequence number s (within the window) has arrived. */
static inline int rcv_bit(const struct bip_rel *r, const struct rel_peer *p, uint64_t s)
{
	uint64_t b = s & (r->window - 1);

	return (int)(p->rcv_bits[b / 64] >> (b & 63) & 1);
}

static void fill_ack(struct bip_rel *r, struct rel_peer *p, struct rel_hdr *h)
{
	uint64_t sack = 0;
	unsigned i;

	h->ack = p->rcv_next;
	if (r->window >= 128) {
		/* The 64 bits after rcv_next, from at most two words. */
		uint64_t pos = (p->rcv_next + 1) & (r->window - 1);
		unsigned w = (unsigned)(pos / 64), off = (unsigned)(pos & 63);

		sack = p->rcv_bits[w] >> off;
		if (off)
			sack |= p->rcv_bits[(w + 1) & (r->window / 64 - 1)] << (64 - off);
	} else {
		for (i = 0; i < 64 && i + 1 < r->window; i++) {
			uint64_t s = p->rcv_next + 1 + i;

			if (rcv_bit(r, p, s))
				sack |= 1ull << i;
		}
	}
	h->sack = sack;
	h->una = p->snd_una;
	p->ack_owed = 0;
	p->ack_now = 0;
}

static void seal(struct rel_hdr *h)
{
	h->version = REL_VERSION;
	h->hcrc = 0;
	h->hcrc = bip_crc32c(0, h, sizeof(*h));
}

/* A path of peer p to send on: the next one up, in turn; if none is up,
 * the one that failed last (it may answer yet). */
static int pick_path(struct bip_rel *r, struct rel_peer *p)
{
	int i, best = 0;

	for (i = 0; i < r->npaths; i++) {
		int k = (int)(p->rr++ % (unsigned)r->npaths);

		if (p->path[k].state == PATH_UP)
			return k;
	}
	for (i = 1; i < r->npaths; i++)
		if (p->path[i].since > p->path[best].since)
			best = i;
	return best;
}

/* 1 if a path of peer p other than k is up. */
static int other_path_up(const struct bip_rel *r, const struct rel_peer *p, int k)
{
	int i;

	for (i = 0; i < r->npaths; i++)
		if (i != k && p->path[i].state == PATH_UP)
			return 1;
	return 0;
}

static void path_retire(struct bip_rel *r, struct rel_peer *p, int peer, int k, int state,
			const char *why)
{
	struct rel_path *ph = &p->path[k];
	uint64_t s;

	(void)peer;
	if (ph->state == state)
		return;
	if (ph->state == PATH_UP)
		COUNT_PATH(k, retired);
	ph->state = state;
	ph->since = r->now ? r->now : bip_now_ns();
	ph->probe_due = ph->since + r->probe;
	r->busy = 1; /* its probes are timers */
	snprintf(ph->why, sizeof(ph->why), "%s", why ? why : "");
	/* Its unacknowledged packets go again on the others at once
	 * (retransmit_due, which rebinds them), if one is up. */
	if (!other_path_up(r, p, k))
		return;
	for (s = p->snd_una; s < p->snd_next; s++) {
		struct rel_txe *e = &p->tx[s & (r->window - 1)];

		if (e->seq == s && !e->acked && !e->unsent && e->path == k)
			e->due = ph->since;
	}
	p->next_due = ph->since;
}

/* Path k to p works both ways: a PROBE sent on it was answered on it (or
 * the NIC says it is back).  Traffic from p on k alone proves only p's
 * direction: a path may fail one way. */
static void path_heard(struct bip_rel *r, struct rel_peer *p, int k)
{
	struct rel_path *ph = &p->path[k];

	ph->fails = 0;
	if (ph->state != PATH_UP) {
		ph->state = PATH_UP;
		ph->since = r->now ? r->now : bip_now_ns();
		ph->why[0] = '\0';
		counters()->failbacks++;
		COUNT_PATH(k, restored);
	}
}

/* Put txe e of peer on a path; unsent stays set if the NIC has no room. */
static void tx_send(struct bip_rel *r, int peer, struct rel_txe *e, int again)
{
	struct rel_peer *p = &r->peers[peer];
	int k = e->path, rc, tries;

	if (p->path[k].state != PATH_UP && !e->unsent) {
		int n = pick_path(r, p);

		if (n != k) {
			counters()->rebinds++;
			k = n;
		}
	}
	for (tries = 0; tries < r->npaths; tries++) {
		e->h.path = (uint8_t)k;
		e->h.flags = again ? REL_F_ACKNOW : e->ask;
		fill_ack(r, p, &e->h);
		seal(&e->h);
		rc = r->dg->ops->send(r->lower, k, peer, &e->h, sizeof(e->h), e->data, e->h.len);
		if (rc == 0) {
			e->path = (uint8_t)k;
			e->unsent = 0;
			e->fast = 0;
			e->sent = r->now ? r->now : (r->now = bip_now_ns());
			p->c.sent[k]++;
			COUNT_PATH(k, sent);
			if (again) {
				counters()->retransmits++;
				COUNT_PATH(k, retransmits);
			}
			return;
		}
		if (rc != -ENETDOWN)
			break;
		path_retire(r, p, peer, k, PATH_DOWN, "the NIC cannot send on it");
		k = pick_path(r, p);
	}
	e->unsent = 1;
	e->path = (uint8_t)k;
}

static void peer_due(struct rel_peer *p, uint64_t due)
{
	if (!p->next_due || due < p->next_due)
		p->next_due = due;
}

/* Room for one more reliable packet to peer p. */
static inline int window_room(const struct bip_rel *r, const struct rel_peer *p)
{
	return p->snd_next - p->snd_una < r->window;
}

/* Take the next sequence number for a packet to peer and send it. */
static struct rel_txe *tx_new(struct bip_rel *r, int peer, uint8_t kind, uint8_t ask,
			      uint32_t tag, uint64_t arg0, uint64_t arg1, const void *data,
			      uint32_t len)
{
	struct rel_peer *p = &r->peers[peer];
	uint64_t seq = p->snd_next++;
	struct rel_txe *e = &p->tx[seq & (r->window - 1)];

	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->h.kind = kind;
	e->h.tag = tag;
	e->h.seq = seq;
	e->h.arg0 = arg0;
	e->h.arg1 = arg1;
	e->h.len = len;
	e->ask = ask;
	e->data = data;
	e->h.dcrc = len ? bip_crc32c(0, data, len) : 0;
	p->inflight += len;
	if (kind == REL_SHORT || kind == REL_RTS)
		e->h.oseq = p->oseq_tx++;
	e->path = (uint8_t)pick_path(r, p);
	tx_send(r, peer, e, 0);
	if (!r->now)
		r->now = bip_now_ns();
	e->due = e->unsent ? r->now : r->now + rto_of(r, p, 0);
	peer_due(p, e->due);
	r->busy = 1;
	return e;
}

/* An unnumbered packet: ACK, NACK or PROBE, on path k. */
static void send_control(struct bip_rel *r, int peer, int k, uint8_t kind, uint8_t flags,
			 uint64_t arg0)
{
	struct rel_peer *p = &r->peers[peer];
	struct rel_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = kind;
	h.path = (uint8_t)k;
	h.flags = flags;
	h.arg0 = arg0;
	fill_ack(r, p, &h);
	seal(&h);
	if (r->dg->ops->send(r->lower, k, peer, &h, sizeof(h), NULL, 0) == 0) {
		COUNT_PATH(k, sent);
		if (kind == REL_ACK)
			counters()->acks_sent++;
		else if (kind == REL_NACK)
			counters()->nacks_sent++;
	} else if (kind == REL_ACK) {
		/* No room: owed still, tried again at the next poll. */
		p->ack_owed = p->ack_owed ? p->ack_owed : 1;
		p->ack_now = 1;
	}
}

/* --- completing what the peer acknowledged --- */

/* Free a long send's record; 1 if the core still waits for its completion
 * (bip_core_send_done), 0 if the send completed when it was posted (an
 * eager message copied). */
static int lsend_free(struct bip_rel *r, struct rel_lsend *ls)
{
	int waits = !ls->copy;

	free(ls->copy);
	ls->copy = NULL;
	ls->state = LS_FREE;
	ls->gen = (ls->gen + 1) & REL_GEN_MASK;
	r->lsfree[r->nlsfree++] = (uint32_t)(ls - r->ls);
	return waits;
}

static void tx_complete(struct bip_rel *r, struct rel_peer *p, struct rel_txe *e)
{
	struct rel_lsend *ls = e->ls;

	e->acked = 1;
	p->inflight -= e->h.len;
	/* What went on that path arrived: its sends are not failing. */
	if (p->path[e->path].state == PATH_UP)
		p->path[e->path].fails = 0;
	if (!e->retries && !e->unsent && r->now > e->sent)
		rtt_sample(p, r->now - e->sent);
	if (ls && (e->h.kind == REL_FRAG || e->h.kind == REL_RTS)) {
		ls->acked += e->h.len;
		if (ls->acked == ls->len && ls->state == LS_SENT) {
			uint64_t cookie = ls->cookie;

			if (lsend_free(r, ls))
				bip_core_send_done(cookie, 0);
		}
	}
}

/*
 * Losses found before their timeout, sent again at once (once per loss):
 *  - by count, as TCP's fast retransmit: REL_DUPTHRESH packets beyond it
 *    arrived (top: the highest acknowledged), and the wire reorders by one;
 *  - by time (RACK, RFC 8985): it was sent a quarter round trip or more
 *    before a packet now acknowledged.
 * Packets sent once go in sequence order, so the walk stops at the first
 * that neither rule condemns.
 */
static void rack_detect(struct bip_rel *r, struct rel_peer *p, uint64_t latest, uint64_t top)
{
	uint64_t reo = p->srtt / 4, s;

	for (s = p->snd_una; s < p->snd_next; s++) {
		struct rel_txe *e = &p->tx[s & (r->window - 1)];

		if (e->seq != s || e->acked || e->unsent)
			continue;
		if (e->sent + reo >= latest && s + REL_DUPTHRESH > top) {
			if (!e->retries && !e->fast)
				break;
			continue;
		}
		if (e->fast)
			continue; /* sent again for this loss already: its timer is on */
		counters()->fast_retransmits++;
		tx_send(r, (int)(p - r->peers), e, 1);
		e->fast = 1;
		e->due = r->now + rto_of(r, p, e->retries);
		peer_due(p, e->due);
	}
}

static void take_ack(struct bip_rel *r, struct rel_peer *p, const struct rel_hdr *h)
{
	uint64_t ack = h->ack, latest = 0;
	unsigned i;

	if (ack > p->snd_next)
		return; /* acknowledges what was never sent: not believed */
	while (p->snd_una < ack) {
		struct rel_txe *e = &p->tx[p->snd_una & (r->window - 1)];

		if (e->seq == p->snd_una && !e->acked) {
			if (!e->retries && !e->fast && e->sent > latest)
				latest = e->sent; /* never an ambiguous one (Karn) */
			tx_complete(r, p, e);
		}
		e->seq = 0;
		p->snd_una++;
	}
	for (i = 0; h->sack && i < 64; i++) {
		uint64_t s = ack + 1 + i;
		struct rel_txe *e;

		if (!(h->sack >> i & 1) || s >= p->snd_next)
			continue;
		e = &p->tx[s & (r->window - 1)];
		if (e->seq == s && !e->acked) {
			if (!e->retries && !e->fast && e->sent > latest)
				latest = e->sent;
			tx_complete(r, p, e);
		}
	}
	if (p->snd_una == p->snd_next) {
		p->next_due = 0;
		return;
	}
	if (latest)
		rack_detect(r, p, latest,
			    h->sack ? ack + 64 - (uint64_t)__builtin_clzll(h->sack) : ack - 1);
}

/* --- the core's ops --- */

static int rel_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len)
{
	struct bip_rel *r = rel_of(nic);
	struct rel_peer *p = &r->peers[dst];
	unsigned char *copy;

	if (bip_unlikely(p->failed))
		return -EHOSTUNREACH;
	if (bip_unlikely(!window_room(r, p)))
		return -EAGAIN;
	copy = p->copies + (size_t)(p->snd_next & (r->window - 1)) * r->max_short;
	bip_copy(copy, buf, len);
	r->now = 0;
	tx_new(r, dst, REL_SHORT, 0, tag, 0, 0, copy, (uint32_t)len);
	return 0;
}

static int rel_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
			 uint64_t cookie)
{
	struct bip_rel *r = rel_of(nic);
	struct rel_peer *p = &r->peers[dst];
	struct rel_lsend *ls;
	uint32_t idx;

	if (bip_unlikely(p->failed))
		return -EHOSTUNREACH;
	if (!window_room(r, p) || !r->nlsfree)
		return -EAGAIN;
	idx = r->lsfree[--r->nlsfree];
	ls = &r->ls[idx];
	ls->state = LS_ANNOUNCED;
	ls->dst = dst;
	ls->buf = buf;
	ls->len = len;
	ls->next = ls->acked = 0;
	ls->cookie = cookie;
	r->now = 0;
	if (tag < NTAGS && len <= r->eager) {
		/* Eager: the data goes with the RTS, whose acknowledgement
		 * completes it; or, copied, it is complete now. */
		uint8_t ask = REL_F_ACKNOW;

		ls->state = LS_SENT;
		ls->next = len;
		/* Not to a node that has ended: its send would then seem
		 * complete; waiting on the acknowledgement, it fails. */
		if (r->dg->copy_eager && r->dg->ops->alive(r->lower, dst) &&
		    (ls->copy = malloc(len ? len : 1))) {
			bip_copy(ls->copy, buf, len);
			ls->buf = ls->copy;
			ask = 0;
		}
		tx_new(r, dst, REL_RTS, ask, tag, (uint64_t)ls->gen << REL_IDX_BITS | idx, len,
		       ls->buf, (uint32_t)len)->ls = ls;
		return ls->copy ? 1 : 0;
	}
	tx_new(r, dst, REL_RTS, 0, tag, (uint64_t)ls->gen << REL_IDX_BITS | idx, len, NULL, 0);
	return 0;
}

static void send_cts(struct bip_rel *r, struct rel_lrecv *lr)
{
	uint32_t idx = (uint32_t)(lr - r->lr);

	if (!window_room(r, &r->peers[lr->src])) {
		if (!lr->cts_pending) {
			lr->cts_pending = 1;
			r->cts_waiting++;
		}
		return;
	}
	if (lr->cts_pending) {
		lr->cts_pending = 0;
		r->cts_waiting--;
	}
	tx_new(r, lr->src, REL_CTS, 0, 0, lr->sid, (uint64_t)lr->gen << REL_IDX_BITS | idx, NULL, 0);
}

static int grow_lrecv(struct bip_rel *r)
{
	uint32_t n = r->nlr ? r->nlr * 2 : 64, i;
	struct rel_lrecv *lr;
	uint32_t *fr;

	if (n > REL_IDX_MASK + 1)
		return -ENOMEM;
	lr = realloc(r->lr, n * sizeof(*lr));
	if (!lr)
		return -ENOMEM;
	r->lr = lr;
	fr = realloc(r->lrfree, n * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	r->lrfree = fr;
	memset(lr + r->nlr, 0, (n - r->nlr) * sizeof(*lr));
	for (i = n; i-- > r->nlr;)
		r->lrfree[r->nlrfree++] = i;
	r->nlr = n;
	return 0;
}

/* --- eager messages' early records --- */

static int grow_early(struct bip_rel *r)
{
	uint32_t n = r->nearly ? r->nearly * 2 : 64, i;
	struct rel_early *e;
	uint32_t *fr;

	if (n > REL_IDX_MASK + 1)
		return -ENOMEM;
	e = realloc(r->early, n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->early = e;
	fr = realloc(r->earlyfree, n * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	r->earlyfree = fr;
	memset(e + r->nearly, 0, (n - r->nearly) * sizeof(*e));
	for (i = n; i-- > r->nearly;)
		r->earlyfree[r->nearlyfree++] = i;
	r->nearly = n;
	return 0;
}

static void early_free(struct bip_rel *r, struct rel_early *e)
{
	free(e->own);
	e->own = NULL;
	e->data = NULL;
	e->active = 0;
	e->gen = (e->gen + 1) & REL_GEN_MASK;
	r->earlyfree[r->nearlyfree++] = (uint32_t)(e - r->early);
}

/* The core gives the buffer of an eager message: its data goes there. */
static int early_recv(struct bip_rel *r, uint64_t handle, void *buf, size_t len)
{
	uint32_t idx = (uint32_t)handle & REL_IDX_MASK;
	struct rel_early *e = idx < r->nearly ? &r->early[idx] : NULL;
	int rc = 1;

	if (!e || !e->active || (uint32_t)handle >> REL_IDX_BITS != e->gen ||
	    (uint64_t)e->src != (handle & ~REL_EARLY) >> 32)
		return -EPROTO;
	if (len < e->len)
		rc = -EMSGSIZE; /* consumed, as a rendezvous's would be */
	else if (e->lost)
		rc = -ENOMEM;
	else if (e->len)
		bip_copy(buf, e->own ? e->own : e->data, e->len);
	early_free(r, e);
	return rc;
}

/* Offer an eager RTS to the core (to_core): 0, -EAGAIN, or -ENOMEM. */
static int early_arrived(struct bip_rel *r, int src, const struct rel_hdr *h, const void *data)
{
	struct rel_early *e;
	uint32_t idx, gen;
	int rc;

	if (!r->nearlyfree && grow_early(r) < 0)
		return -ENOMEM;
	idx = r->earlyfree[--r->nearlyfree];
	e = &r->early[idx];
	gen = e->gen;
	e->active = 1;
	e->src = src;
	e->len = h->len;
	e->data = data;
	e->own = NULL;
	e->lost = 0;
	rc = bip_core_long_arrived(src, h->tag, h->len, REL_EARLY | (uint64_t)src << 32 |
				   (uint64_t)e->gen << REL_IDX_BITS | idx);
	e = &r->early[idx]; /* the core may have grown the table (post_long_recv) */
	if (rc < 0) {
		early_free(r, e);
		return rc;
	}
	if (!e->active || e->gen != gen)
		return 0; /* taken at once (a receive was posted) */
	/* Not taken yet: the NIC's memory is valid only now. */
	e->own = malloc(e->len);
	if (!e->own) {
		/* The announcement is the core's: its data cannot be kept. */
		e->data = NULL;
		e->lost = 1;
		return 0;
	}
	memcpy(e->own, e->data, e->len);
	e->data = NULL;
	return 0;
}

static int rel_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			      uint64_t cookie)
{
	struct bip_rel *r = rel_of(nic);
	int src = (int)(handle >> 32);
	struct rel_lrecv *lr;

	if (handle & REL_EARLY)
		return early_recv(r, handle, buf, len);
	if (src < 0 || src >= r->numnodes || !r->peers[src].served)
		return -EPROTO;
	if (r->peers[src].failed)
		return -EHOSTUNREACH;
	if (!r->nlrfree && grow_lrecv(r) < 0)
		return -ENOMEM;
	lr = &r->lr[r->lrfree[--r->nlrfree]];
	lr->active = 1;
	lr->src = src;
	lr->buf = buf;
	lr->len = len;
	lr->got = 0;
	lr->sid = (uint32_t)handle;
	lr->cookie = cookie;
	lr->cts_pending = 0;
	r->now = 0;
	send_cts(r, lr);
	return 0;
}

static void lrecv_done(struct bip_rel *r, struct rel_lrecv *lr, int status)
{
	uint64_t cookie = lr->cookie;

	if (lr->cts_pending)
		r->cts_waiting--;
	lr->active = 0;
	lr->cts_pending = 0;
	lr->gen = (lr->gen + 1) & REL_GEN_MASK;
	r->lrfree[r->nlrfree++] = (uint32_t)(lr - r->lr);
	bip_core_recv_done(cookie, status);
}

/* --- arrivals --- */

static int header_ok(const struct bip_rel *r, const struct rel_hdr *h, size_t dlen, int path)
{
	struct rel_hdr c = *h;

	c.hcrc = 0;
	if (bip_crc32c(0, &c, sizeof(c)) != h->hcrc || h->version != REL_VERSION)
		return 0;
	if (h->kind < REL_SHORT || h->kind > REL_PROBE || h->len != dlen || h->path != path)
		return 0;
	switch (h->kind) {
	case REL_SHORT:
		return h->len <= r->max_short && h->tag < BIP_ALL_TAGS && h->seq;
	case REL_RTS:
		/* Data only in an eager one, all of it (to_core). */
		return (!h->len || (h->len == h->arg1 && h->tag < NTAGS)) &&
		       h->tag < BIP_ALL_TAGS && h->seq && h->arg1 > 0 &&
		       h->arg1 <= BIP_MAX_MESSAGE;
	case REL_CTS:
		return !h->len && h->seq;
	case REL_FRAG:
		return h->len > 0 && h->seq;
	default:
		return !h->len && !h->seq;
	}
}

/* Hand ordered arrival (SHORT or RTS) to the core: 0 or -EAGAIN (or
 * -ENOMEM for an eager one: not taken either). */
static int to_core(struct bip_rel *r, int src, const struct rel_hdr *h, const void *data)
{
	if (h->kind == REL_SHORT)
		return bip_core_short_arrived(src, h->tag, data, h->len);
	if (h->len)
		return early_arrived(r, src, h, data);
	return bip_core_long_arrived(src, h->tag, (size_t)h->arg1, (uint64_t)src << 32 |
				     (uint32_t)h->arg0);
}

static int hold(struct bip_rel *r, struct rel_peer *p, const struct rel_hdr *h, const void *data)
{
	struct rel_held *m = malloc(sizeof(*m) + h->len);

	if (!m)
		return -ENOMEM;
	m->h = *h;
	bip_copy(m->data, data, h->len);
	p->held[h->oseq & (r->window - 1)] = m;
	p->nheld++;
	r->nheld++;
	return 0;
}

/* Deliver the held arrivals of src whose turn has come. */
static void release_held(struct bip_rel *r, int src)
{
	struct rel_peer *p = &r->peers[src];

	while (p->nheld) {
		struct rel_held **slot = &p->held[p->oseq_rx & (r->window - 1)];
		struct rel_held *m = *slot;

		if (!m || m->h.oseq != p->oseq_rx || to_core(r, src, &m->h, m->data) < 0)
			return;
		*slot = NULL;
		p->nheld--;
		r->nheld--;
		p->oseq_rx++;
		free(m);
	}
}

/* An ordered arrival: 0 (taken or kept), or -1 to drop it unacknowledged. */
static int ordered(struct bip_rel *r, int src, const struct rel_hdr *h, const void *data)
{
	struct rel_peer *p = &r->peers[src];

	if (h->oseq < p->oseq_rx || h->oseq - p->oseq_rx >= r->window ||
	    p->held[h->oseq & (r->window - 1)])
		return -1; /* not a number this sender can have used now */
	if (h->oseq == p->oseq_rx && !p->nheld) {
		if (to_core(r, src, h, data) == 0) {
			p->oseq_rx++;
			return 0;
		}
	} else if (h->oseq == p->oseq_rx && to_core(r, src, h, data) == 0) {
		p->oseq_rx++;
		release_held(r, src);
		return 0;
	}
	if (h->oseq != p->oseq_rx)
		counters()->early++;
	return hold(r, p, h, data) < 0 ? -1 : 0;
}

static void bad_data(struct bip_rel *r, int src, int path, const struct rel_hdr *h)
{
	counters()->corrupt++;
	COUNT_PATH(path, corrupt);
	send_control(r, src, path, REL_NACK, 0, h->seq);
}

/* A FRAG: into its place, checked there.  0 (placed, or for no receive of
 * ours: acknowledged and dropped, so that it is not sent forever), or -1 to
 * drop it unacknowledged (its data failed the check). */
static int fragment(struct bip_rel *r, int src, int path, const struct rel_hdr *h,
		    const void *data)
{
	uint32_t idx = (uint32_t)h->arg0 & REL_IDX_MASK;
	struct rel_lrecv *lr;
	unsigned char *at;

	if (idx >= r->nlr)
		return 0;
	lr = &r->lr[idx];
	if (!lr->active || lr->src != src || (uint32_t)(h->arg0 >> REL_IDX_BITS) != lr->gen ||
	    h->arg0 >> 32 || h->arg1 > lr->len || h->len > lr->len - h->arg1)
		return 0;
	at = lr->buf + h->arg1;
	if (bip_crc32c_copy(0, at, data, h->len) != h->dcrc) {
		bad_data(r, src, path, h);
		return -1;
	}
	lr->got += h->len;
	if (lr->got == lr->len)
		lrecv_done(r, lr, 0);
	return 0;
}

static void start_stream(struct bip_rel *r, struct rel_lsend *ls)
{
	ls->state = LS_STREAMING;
	ls->next_stream = NULL;
	*r->stream_tail = ls;
	r->stream_tail = &ls->next_stream;
}

static void cts(struct bip_rel *r, int src, const struct rel_hdr *h)
{
	uint32_t idx = (uint32_t)h->arg0 & REL_IDX_MASK;
	struct rel_lsend *ls;

	if (idx >= r->nls || h->arg0 >> 32)
		return;
	ls = &r->ls[idx];
	if (ls->state != LS_ANNOUNCED || ls->dst != src || (uint32_t)(h->arg0 >> REL_IDX_BITS) !=
	    ls->gen)
		return;
	ls->rid = h->arg1;
	start_stream(r, ls);
}

static void nack(struct bip_rel *r, int src, const struct rel_hdr *h)
{
	struct rel_peer *p = &r->peers[src];
	uint64_t s = h->arg0;
	struct rel_txe *e;

	counters()->nacks_received++;
	if (s < p->snd_una || s >= p->snd_next)
		return;
	e = &p->tx[s & (r->window - 1)];
	if (e->seq != s || e->acked)
		return;
	if (!r->now)
		r->now = bip_now_ns();
	tx_send(r, src, e, 1);
	e->due = r->now + rto_of(r, p, e->retries);
	peer_due(p, e->due);
}

/* The state of a peer this layer serves (at open, or once it joined). */
static int peer_init(struct bip_rel *r, int node)
{
	struct rel_peer *p = &r->peers[node];

	p->snd_next = p->snd_una = 1;
	p->rcv_next = 1;
	p->confirmed = 1;
	p->last_heard = bip_now_ns();
	p->tx = calloc(r->window, sizeof(*p->tx));
	p->copies = malloc((size_t)r->window * r->max_short);
	p->rcv_bits = calloc((r->window + 63) / 64, sizeof(*p->rcv_bits));
	p->held = calloc(r->window, sizeof(*p->held));
	if (!p->tx || !p->copies || !p->rcv_bits || !p->held)
		return -ENOMEM;
	p->served = 1;
	r->served[r->nserved++] = node;
	return 0;
}

/* A node of the room, reached through the NIC below: 0 once it is served. */
static int rel_reach(struct bip_nic *nic, int node, char *err, size_t errlen)
{
	struct bip_rel *r = rel_of(nic);
	int rc;

	if (!r->grows || node < 0 || node >= r->numnodes || node == r->mynode) {
		snprintf(err, errlen, "node %d is not a node of this job", node);
		return -EINVAL;
	}
	if (r->peers[node].served)
		return 0;
	rc = r->dg->ops->reach(r->lower, node, err, errlen);
	if (rc == 0 && peer_init(r, node) < 0) {
		snprintf(err, errlen, "reliability layer: out of memory for node %d", node);
		rc = -ENOMEM;
	}
	return rc;
}

/* A datagram from a node not served: a node that joined, if the NIC below
 * reaches it (it names the source; the layer checks the rest). */
static bip_cold int joined(struct bip_rel *r, int src)
{
	char err[256];

	if (!r->grows || src == r->mynode || r->dg->ops->reach(r->lower, src, err, sizeof(err)) ||
	    peer_init(r, src) < 0)
		return 0;
	bip_core_peer_joined(&r->nic, src);
	return 1;
}

void bip_rel_arrived(struct bip_nic *lower, int path, int src, const void *pkt, size_t len)
{
	struct bip_rel *r = lower->dgram->rel;
	struct rel_peer *p;
	struct rel_hdr h;
	const unsigned char *data = (const unsigned char *)pkt + sizeof(h);
	uint64_t s;
	unsigned bit;
	int rc = 0;

	if (src < 0 || src >= r->numnodes || path < 0 || path >= r->npaths || len < sizeof(h))
		return;
	if (bip_unlikely(!r->peers[src].served) && !joined(r, src))
		return;
	memcpy(&h, pkt, sizeof(h));
	if (!header_ok(r, &h, len - sizeof(h), path)) {
		counters()->corrupt++;
		COUNT_PATH(path, corrupt);
		return;
	}
	p = &r->peers[src];
	if (!r->now)
		r->now = bip_now_ns();
	p->last_heard = r->now;
	take_ack(r, p, &h);
	if (h.una > p->confirmed && h.una <= p->rcv_next)
		p->confirmed = h.una;
	switch (h.kind) {
	case REL_ACK:
		if (h.flags & REL_F_PROBED)
			path_heard(r, p, path);
		if (h.flags & REL_F_ACKNOW)
			send_control(r, src, path, REL_ACK, 0, 0);
		return;
	case REL_NACK:
		nack(r, src, &h);
		return;
	case REL_PROBE:
		send_control(r, src, path, REL_ACK, REL_F_PROBED, 0);
		return;
	}
	s = h.seq;
	bit = (unsigned)(s & (r->window - 1));
	if (s < p->rcv_next || (s - p->rcv_next < r->window && p->rcv_bits[bit / 64] >> (bit & 63) & 1)) {
		counters()->duplicates++;
		COUNT_PATH(path, duplicates);
		p->ack_now = 1;
		p->ack_path = path;
		p->ack_owed++;
		r->busy = 1;
		return;
	}
	if (s - p->rcv_next >= r->window)
		return; /* beyond the window: the sender cannot have sent it */
	switch (h.kind) {
	case REL_SHORT:
		if (bip_crc32c(0, data, h.len) != h.dcrc) {
			bad_data(r, src, path, &h);
			return;
		}
		rc = ordered(r, src, &h, data);
		break;
	case REL_RTS:
		if (h.len && bip_crc32c(0, data, h.len) != h.dcrc) {
			bad_data(r, src, path, &h);
			return;
		}
		rc = ordered(r, src, &h, h.len ? data : NULL);
		break;
	case REL_CTS:
		cts(r, src, &h);
		break;
	case REL_FRAG:
		rc = fragment(r, src, path, &h, data);
		break;
	}
	if (rc < 0)
		return;
	p->rcv_bits[bit / 64] |= 1ull << (bit & 63);
	while (rcv_bit(r, p, p->rcv_next)) {
		unsigned b = (unsigned)(p->rcv_next & (r->window - 1));

		p->rcv_bits[b / 64] &= ~(1ull << (b & 63));
		p->rcv_next++;
	}
	if (!p->ack_owed++)
		p->ack_due = r->now + r->ack_delay;
	if (h.flags & REL_F_ACKNOW)
		p->ack_now = 1;
	p->ack_path = path;
	r->busy = 1;
}

void bip_rel_path_state(struct bip_nic *lower, int path, int peer, int up, const char *why)
{
	struct bip_rel *r = lower->dgram->rel;
	struct rel_peer *p;

	if (peer < 0 || peer >= r->numnodes || path < 0 || path >= r->npaths)
		return;
	p = &r->peers[peer];
	if (!r->now)
		r->now = bip_now_ns();
	if (up) {
		path_heard(r, p, path);
		return;
	}
	if (p->path[path].state != PATH_DOWN)
		path_retire(r, p, peer, path, PATH_DOWN, why);
	r->busy = 1;
}

/* --- timers: retransmission, acknowledgements, probes, giving up --- */

static void peer_lost(struct bip_rel *r, int peer)
{
	struct rel_peer *p = &r->peers[peer];
	char msg[1024];
	size_t used;
	uint32_t i;
	int k;

	p->failed = 1;
	used = (size_t)snprintf(msg, sizeof(msg),
				"node %d (host %s) cannot be reached: nothing came from it for "
				"%.1f s (BIP_RETRY_TIMEOUT) while %llu packet(s) to it waited;",
				peer, r->conf->nodes[peer].host, (double)r->retry_timeout / 1e9,
				(unsigned long long)(p->snd_next - p->snd_una));
	for (k = 0; k < r->npaths && used < sizeof(msg); k++)
		if (p->path[k].state == PATH_UP)
			used += (size_t)snprintf(msg + used, sizeof(msg) - used,
						 " path %d: timing out (%u sends in a row)", k,
						 p->path[k].fails);
		else
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, " path %d: %s for %.1f s%s%s%s",
					 k, path_state_name[p->path[k].state],
					 (double)(r->now - p->path[k].since) / 1e9,
					 p->path[k].why[0] ? " (" : "", p->path[k].why,
					 p->path[k].why[0] ? ")" : "");
	bip_error_msg("bip", msg);
	bip_core_peer_lost(peer);
	for (i = 0; i < r->nls; i++) {
		struct rel_lsend *ls = &r->ls[i];

		if (ls->state != LS_FREE && ls->dst == peer) {
			uint64_t cookie = ls->cookie;

			/* A copied one completed already: the peer's loss
			 * (above) fails the waits that follow. */
			if (lsend_free(r, ls))
				bip_core_send_done(cookie, -EHOSTUNREACH);
		}
	}
	for (i = 0; i < r->nlr; i++)
		if (r->lr[i].active && r->lr[i].src == peer)
			lrecv_done(r, &r->lr[i], -EHOSTUNREACH);
	p->snd_una = p->snd_next;
	p->inflight = 0;
	p->next_due = 0;
}

/*
 * The timer of peer's packets.  Of the packets whose timeout has passed,
 * only the oldest on each path goes again (and counts as a timeout): the
 * others were sent after it and are likely waiting behind it, not lost.
 * Their timers start again; the acknowledgement of the one sent again
 * shows which of them are lost (rack_detect), as in TCP.
 */
static void retransmit_due(struct bip_rel *r, int peer)
{
	struct rel_peer *p = &r->peers[peer];
	uint64_t s, next = 0;
	unsigned timed_out = 0; /* bit k: path k had its timeout in this round */

	p->next_due = 0; /* path_retire may set it again during the round */

	for (s = p->snd_una; s < p->snd_next; s++) {
		struct rel_txe *e = &p->tx[s & (r->window - 1)];

		if (e->seq != s || e->acked)
			continue;
		if (e->due <= r->now) {
			if (e->unsent) {
				tx_send(r, peer, e, e->retries > 0);
			} else if (p->path[e->path].state != PATH_UP &&
				   other_path_up(r, p, e->path)) {
				/* Its path was retired: every packet on it goes
				 * on another (a rebind), not only the oldest. */
				tx_send(r, peer, e, 1);
			} else if (timed_out >> e->path & 1) {
				e->due = r->now + rto_of(r, p, e->retries);
			} else {
				struct rel_path *ph = &p->path[e->path];

				timed_out |= 1u << e->path;
				counters()->timeouts++;
				COUNT_PATH(e->path, timeouts);
				if (e->retries < 255)
					e->retries++;
				/* Retired only if another path is up to take its
				 * packets: the last one keeps working, and the
				 * peer is lost only after BIP_RETRY_TIMEOUT. */
				if (ph->state == PATH_UP && ++ph->fails >= r->path_fails &&
				    other_path_up(r, p, e->path)) {
					char why[80];

					snprintf(why, sizeof(why), "%u sends in a row timed out",
						 ph->fails);
					path_retire(r, p, peer, e->path, PATH_RETIRED, why);
				}
				tx_send(r, peer, e, 1);
			}
			if (e->due <= r->now)
				e->due = r->now + (e->unsent ? 0 : rto_of(r, p, e->retries));
		}
		if (!next || e->due < next)
			next = e->due;
	}
	if (next)
		peer_due(p, next);
}

/* Fragments of the streaming long sends, while windows have room. */
static void push_streams(struct bip_rel *r)
{
	struct rel_lsend **lp = &r->stream_head;

	while (*lp) {
		struct rel_lsend *ls = *lp;
		struct rel_peer *p = &r->peers[ls->dst];

		while (ls->next < ls->len && window_room(r, p) &&
		       (p->inflight < r->window_bytes || p->snd_una == p->snd_next)) {
			size_t n = ls->len - ls->next < r->frag ? ls->len - ls->next : r->frag;
			size_t half = r->window_bytes / 2;
			uint8_t ask = ls->next + n == ls->len ||
					      (p->inflight < half && p->inflight + n >= half)
					  ? REL_F_ACKNOW
					  : 0;
			struct rel_txe *e = tx_new(r, ls->dst, REL_FRAG, ask, 0, ls->rid, ls->next,
						   ls->buf + ls->next, (uint32_t)n);

			e->ls = ls;
			ls->next += n;
		}
		if (ls->next < ls->len) {
			lp = &ls->next_stream;
			continue;
		}
		ls->state = LS_SENT;
		*lp = ls->next_stream;
		if (!*lp)
			r->stream_tail = lp;
		if (ls->acked == ls->len) {
			uint64_t cookie = ls->cookie;

			if (lsend_free(r, ls))
				bip_core_send_done(cookie, 0);
		}
	}
}

/*
 * The layer's timers.  They run while r->busy (rel_poll), which covers
 * everything rel_sleep_arm waits for: a timer that sleep_arm counts and
 * timers() does not keep busy would be due for ever, and the process would
 * never sleep (a retired path's probe did that once: with another path up,
 * nothing was busy, the probe never went and its due time stayed past).
 */
static void timers(struct bip_rel *r)
{
	int i, j, k, busy = 0;

	for (j = 0; j < r->nserved; j++) {
		struct rel_peer *p = &r->peers[i = r->served[j]];
		int up = 0, probing = 0;

		if (p->failed)
			continue;
		if (p->ack_owed && (p->ack_now || p->ack_owed >= r->window / 4 ||
				    r->now >= p->ack_due))
			send_control(r, i, p->ack_path, REL_ACK, 0, 0);
		if (p->next_due && p->next_due <= r->now)
			retransmit_due(r, i);
		for (k = 0; k < r->npaths; k++) {
			struct rel_path *ph = &p->path[k];

			if (ph->state == PATH_UP) {
				/* The last path up is not retired, but one that
				 * keeps timing out has failed as well. */
				up |= ph->fails < r->path_fails;
			} else {
				probing = 1;
				if (r->now >= ph->probe_due) {
					send_control(r, i, k, REL_PROBE, REL_F_ACKNOW, 0);
					ph->probe_due = r->now + r->probe;
				}
			}
		}
		if (!up && p->snd_una != p->snd_next && r->now - p->last_heard >= r->retry_timeout) {
			peer_lost(r, i);
			continue;
		}
		busy |= p->snd_una != p->snd_next || p->ack_owed || !up || probing;
	}
	r->busy = busy || r->stream_head || r->cts_waiting;
}

static int rel_poll(struct bip_nic *nic)
{
	struct bip_rel *r = rel_of(nic);
	int n;

	r->now = 0;
	n = r->dg->ops->poll(r->lower);
	if (bip_unlikely(r->cts_waiting)) {
		uint32_t i;

		for (i = 0; i < r->nlr && r->cts_waiting; i++)
			if (r->lr[i].active && r->lr[i].cts_pending)
				send_cts(r, &r->lr[i]);
	}
	if (bip_unlikely(r->nheld)) {
		int j;

		for (j = 0; j < r->nserved; j++)
			if (r->peers[r->served[j]].nheld)
				release_held(r, r->served[j]);
	}
	if (r->stream_head)
		push_streams(r);
	/* The timers run when this poll read the clock anyway (something
	 * arrived or went), else every REL_TIMER_POLLS polls: a waiting
	 * process polls in a loop, and reading the clock at each round costs
	 * more than the rest of the round (a clock read is a system call on
	 * some virtual machines). */
	if (r->busy && (r->now || ++r->quiet_polls >= REL_TIMER_POLLS)) {
		r->quiet_polls = 0;
		if (!r->now)
			r->now = bip_now_ns();
		timers(r);
	}
	return n;
}

static int rel_alive(struct bip_nic *nic, int node)
{
	struct bip_rel *r = rel_of(nic);

	if (r->peers[node].failed)
		return 0;
	return r->dg->ops->alive(r->lower, node);
}

/*
 * Closing waits as any waiter does (bip_wait_step, with the lock let go as
 * bip_finalize lets it go): spins, then yields, and in block mode sleeps on
 * the drivers below until an arrival or the layer's next timer, which
 * includes linger's next ask (rel_sleep_arm).  The core closes this layer
 * before the drivers below and before the watchers of their words end
 * (release_all, init.c), so they can still wake it.  A negative answer
 * (every other node has ended, or one was lost) ends the wait.
 */
static int close_wait(struct bip_wait *w)
{
	unsigned depth = bip_lock_drop();
	int rc = bip_wait_step(w);

	bip_lock_retake(depth);
	return rc;
}

/*
 * Before the lower NIC closes: what this process sent must be acknowledged
 * (a short send completed at once, but only its copy here can repair a
 * loss), unless its receiver has ended or is lost.  The timers send again
 * what is not, as while the program ran.
 */
static void drain(struct bip_rel *r)
{
	uint64_t start = bip_now_ns();
	struct bip_wait w;
	int i, j, pending;

	bip_wait_start(&w);
	do {
		pending = 0;
		bip_progress();
		for (j = 0; j < r->nserved; j++) {
			struct rel_peer *p = &r->peers[i = r->served[j]];

			if (!p->failed && p->snd_una != p->snd_next &&
			    r->dg->ops->alive(r->lower, i))
				pending = 1;
		}
	} while (pending && bip_now_ns() - start < r->retry_timeout && close_wait(&w) == 0);
}

/*
 * Then each peer must know that everything it sent arrived: else a lost
 * last acknowledgement would leave its long send waiting for a receiver
 * that has gone.  A peer that has not confirmed it (its una) is asked (an
 * ACK with ACKNOW) until it answers, ends, or BIP_RETRY_TIMEOUT passes:
 * after BIP_REL_RTO, then after each wait twice the one before, up to
 * BIP_REL_RTO_MAX, as a packet is sent again.  A peer that stopped calling
 * BIP (computing, or waiting outside it) answers none of them, and every
 * ask waits for it in the relays between: asked at every BIP_REL_RTO, it
 * got thousands, and its relays held them all.
 */
static void linger(struct bip_rel *r)
{
	uint64_t start = bip_now_ns();
	struct bip_wait w;
	unsigned asks = 0;
	int i, j, pending;

	bip_wait_start(&w);
	r->linger_due = start;
	for (;;) {
		uint64_t now = bip_now_ns(), wait;
		int ask = now >= r->linger_due;

		pending = 0;
		for (j = 0; j < r->nserved; j++) {
			struct rel_peer *p = &r->peers[i = r->served[j]];

			if (p->failed || p->confirmed >= p->rcv_next ||
			    !r->dg->ops->alive(r->lower, i))
				continue;
			pending = 1;
			if (ask)
				send_control(r, i, pick_path(r, p), REL_ACK, REL_F_ACKNOW, 0);
		}
		if (!pending || now - start >= r->retry_timeout)
			break;
		if (ask) {
			wait = r->rto << (asks < 16 ? asks : 16);
			r->linger_due = now + (wait < r->rto_max ? wait : r->rto_max);
			asks++;
		}
		if (close_wait(&w) < 0)
			break;
		bip_progress();
	}
	r->linger_due = 0;
}

static void rel_close(struct bip_nic *nic)
{
	struct bip_rel *r = rel_of(nic);
	uint32_t k;
	int i;

	if (r->opened) {
		drain(r);
		linger(r);
	}

	r->dg->ops->close(r->lower);
	for (i = 0; r->peers && i < r->numnodes; i++) {
		struct rel_peer *p = &r->peers[i];
		unsigned k;

		for (k = 0; p->held && k < r->window; k++)
			free(p->held[k]);
		free(p->held);
		free(p->tx);
		free(p->copies);
		free(p->rcv_bits);
	}
	free(r->peers);
	free(r->served);
	for (i = 0; r->ls && i < (int)r->nls; i++)
		free(r->ls[i].copy);
	free(r->ls);
	free(r->lsfree);
	free(r->lr);
	free(r->lrfree);
	for (k = 0; k < r->nearly; k++)
		free(r->early[k].own);
	free(r->early);
	free(r->earlyfree);
	free(r);
}

int bip_rel_is(const struct bip_nic *nic)
{
	return nic->ops->close == rel_close;
}

/*
 * Sleeping (nic.h): the layer arms the NIC below (its sleep_arm, rel.h),
 * which an arrival wakes, but never past the layer's next timer, so that
 * acknowledgements, retransmissions, probes and the giving up on a lost
 * peer still come on time: the sleep ends at the earliest of an owed
 * acknowledgement's due time, a retransmission's, a retired path's next
 * probe, a failed peer's end of grace and, while the layer closes, linger's
 * next ask.  Unacknowledged data of its own thus keeps the process asleep
 * until its retransmission is due, unless the acknowledgement arrives
 * first and wakes it; a long send waiting for room in its window sleeps
 * the same way (the acknowledgements that open it wake it).  It does not
 * sleep at all when a timer is due already (the next poll runs them), when
 * an acknowledgement is owed at once, when a packet found no room in the
 * NIC, or when arrivals wait for the core.
 */
static int rel_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_rel *r = rel_of(nic);
	uint64_t now = bip_now_ns(), end = now + (uint64_t)s->timeout_ns;
	int j, k;

	if (r->nheld)
		return 0;
	for (j = 0; j < r->nserved; j++) {
		const struct rel_peer *p = &r->peers[r->served[j]];
		int up = 0;

		if (p->failed)
			continue;
		if (p->ack_owed) {
			if (p->ack_now || p->ack_owed >= r->window / 4)
				end = now;
			else if (p->ack_due < end)
				end = p->ack_due;
		}
		if (p->next_due && p->next_due < end)
			end = p->next_due;
		for (k = 0; k < r->npaths; k++) {
			const struct rel_path *ph = &p->path[k];

			if (ph->state == PATH_UP)
				up |= ph->fails < r->path_fails;
			else if (ph->probe_due < end)
				end = ph->probe_due;
		}
		if (!up && p->snd_una != p->snd_next && p->last_heard + r->retry_timeout < end)
			end = p->last_heard + r->retry_timeout;
	}
	if (r->linger_due && r->linger_due < end)
		end = r->linger_due;
	/* The timers at the next poll, whether the sleep ends by a wake-up
	 * or at a timer (REL_TIMER_POLLS would delay them). */
	r->quiet_polls = REL_TIMER_POLLS - 1;
	if (end <= now)
		return 0;
	s->timeout_ns = (long)(end - now);
	return r->dg->ops->sleep_arm(r->lower, s);
}

/* Without the lock: the NIC's wait (its ops and lower are set at open). */
static void rel_sleep_wait(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_rel *r = rel_of(nic);

	r->dg->ops->sleep_wait(r->lower, s);
}

const struct bip_nic_ops bip_rel_ops = {
    .name = "rel",
    .post_short = rel_post_short,
    .post_short2 = NULL,
    .post_long = rel_post_long,
    .post_long_recv = rel_post_long_recv,
    .poll = rel_poll,
    .alive = rel_alive,
    .close = rel_close,
};

/* --- opening --- */

static int env_num(const char *name, double def, double lo, double hi, double *out, char *err,
		   size_t errlen)
{
	const char *s = getenv(name);
	char *end;
	double v;

	*out = def;
	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (end == s || *end || !(v >= lo && v <= hi)) {
		snprintf(err, errlen, "%s=%s: expected a number from %g to %g", name, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int bip_rel_open(const struct bip_nic_job *job, struct bip_nic *lower, struct bip_nic **nic_p)
{
	struct bip_dgram *dg = lower->dgram;
	struct bip_rel *r;
	double window, wbytes, frag, eager, rto, rto_max, ack_delay, probe, retry, fails;
	int i, rc;
	uint32_t k;

	rc = env_num("BIP_REL_WINDOW", 256, 16, 16384, &window, job->err, job->errlen);
	if (!rc && ((unsigned)window & ((unsigned)window - 1)))
		rc = -EINVAL, snprintf(job->err, job->errlen,
				       "BIP_REL_WINDOW=%g: expected a power of two", window);
	/* Unless the variable says, no more than the NIC can take in. */
	if (!rc && dg->window && dg->window < window && !getenv("BIP_REL_WINDOW"))
		window = dg->window;
	if (!rc)
		rc = env_num("BIP_REL_FRAG", dg->frag && dg->frag <= dg->mtu ? (double)dg->frag :
					     dg->mtu < 65536 ? (double)dg->mtu : 65536, 1024,
			     (double)dg->mtu, &frag, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_EAGER", 16384, 0, 1 << 30, &eager, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_WINDOW_BYTES", 1 << 20, 4096, 1 << 30, &wbytes, job->err,
			     job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_RTO", 0.002, 1e-5, 10, &rto, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_RTO_MAX", 0.5, 1e-5, 60, &rto_max, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_ACK_DELAY", 0.0002, 0, 1, &ack_delay, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_PROBE", 0.1, 0.001, 60, &probe, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_REL_PATH_FAILS", 3, 1, 1000, &fails, job->err, job->errlen);
	if (!rc)
		rc = env_num("BIP_RETRY_TIMEOUT", 30, 0.01, 86400, &retry, job->err, job->errlen);
	if (rc < 0) {
		dg->ops->close(lower);
		return rc;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		dg->ops->close(lower);
		return -ENOMEM;
	}
	r->ops = bip_rel_ops;
	if (job->grows && dg->ops->reach)
		r->ops.reach = rel_reach;
	if (dg->ops->sleep_arm) {
		r->ops.sleep_arm = rel_sleep_arm;
		r->ops.sleep_wait = rel_sleep_wait;
	}
	r->nic.ops = &r->ops;
	r->nic.max_short = lower->max_short;
	r->nic.passive = lower->passive;
	r->lower = lower;
	r->dg = dg;
	dg->rel = r;
	r->mynode = job->mynode;
	r->numnodes = job->numnodes;
	r->grows = job->grows && dg->ops->reach;
	r->conf = job->conf;
	r->npaths = dg->npaths;
	r->window = (unsigned)window;
	r->frag = (size_t)frag;
	/* At most a fragment, and more than a short message. */
	r->eager = (size_t)eager < r->frag ? (size_t)eager : r->frag;
	r->window_bytes = (size_t)wbytes;
	r->max_short = lower->max_short;
	r->rto = (uint64_t)(rto * 1e9);
	r->rto_max = (uint64_t)(rto_max * 1e9);
	if (r->rto_max < r->rto)
		r->rto_max = r->rto;
	r->ack_delay = (uint64_t)(ack_delay * 1e9);
	r->probe = (uint64_t)(probe * 1e9);
	r->retry_timeout = (uint64_t)(retry * 1e9);
	r->path_fails = (unsigned)fails;
	r->stream_tail = &r->stream_head;
	snprintf(r->desc, sizeof(r->desc), "%s, reliability layer: %d path(s)",
		 lower->desc ? lower->desc : lower->ops->name, r->npaths);
	r->nic.desc = r->desc;
	r->peers = calloc((size_t)r->numnodes, sizeof(*r->peers));
	r->served = calloc((size_t)r->numnodes, sizeof(*r->served));
	r->nls = BIP_MAX_SENDS;
	r->ls = calloc(r->nls, sizeof(*r->ls));
	r->lsfree = calloc(r->nls, sizeof(*r->lsfree));
	if (!r->peers || !r->served || !r->ls || !r->lsfree)
		goto nomem;
	for (k = r->nls; k-- > 0;)
		r->lsfree[r->nlsfree++] = k;
	for (i = 0; i < r->numnodes; i++)
		if (job->serve[i] && peer_init(r, i) < 0)
			goto nomem;
	r->opened = 1;
	*nic_p = &r->nic;
	return 0;

nomem:
	snprintf(job->err, job->errlen, "reliability layer: out of memory for %d nodes",
		 r->numnodes);
	rel_close(&r->nic);
	return -ENOMEM;
}
