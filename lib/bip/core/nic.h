/* SPDX-License-Identifier: MIT */
/*
 * nic.h - the contract between the BIP core and its NIC drivers.
 *
 * The core sees a NIC as a small ops table.  A driver instance serves a set
 * of peers (shm: the peers on this host; lanai, ofi, psm2: others); the core
 * picks the instance for each peer at bip_init and never looks inside.
 *
 * The contract is built around what a message-passing NIC does:
 *
 *  - post_short: hand a short message (at most max_short bytes) to the NIC.
 *    The data is copied before the call returns (into a ring in the
 *    receiver's memory, a descriptor, or a provider's inject buffer), so the
 *    send is complete at once.  -EAGAIN when the NIC has no room now; the
 *    core keeps the message and posts it again later, in order.
 *
 *  - post_short2: the same for a message in two pieces (a layer's header,
 *    then its data), copied one after the other.  Optional: NULL when the
 *    driver has no such path; the core then assembles the message itself.
 *
 *  - post_long: announce a long message.  The NIC tells the receiver (an
 *    arrival of kind long) and moves the data only when the receiver posts
 *    the buffer, from the user's buffer straight into the user's buffer.
 *    The driver calls bip_core_send_done(cookie) when the sender's buffer
 *    may be reused.  -EAGAIN when the NIC has no room now.  A driver may
 *    send a small long message of the program's tags (below NTAGS), or of
 *    the forwarding layer's (bip_nic_tag_eager below), with its
 *    announcement into a buffer of the receiving driver instead (ofi's
 *    eager path), and complete it once sent; a layer's long data (tags
 *    from NTAGS) stays at the sender until the receiver's layer asks for
 *    it (bip_layer(3)).  Returns 1 instead of 0 when the driver copied a
 *    message of the program's tags and the send is complete now (the
 *    reliability layer over the forwarding driver, rel.c): it then never
 *    calls bip_core_send_done for it.
 *
 *  - post_long_recv: give the buffer for a long message announced by an
 *    arrival (its handle).  Returns 1 if the data is already there (the
 *    driver then does not call bip_core_recv_done), 0 if it will call
 *    bip_core_recv_done(cookie, status) later, or a negative errno.
 *
 *  - alive: whether a peer's process still runs, so that a wait that
 *    nobody can end is reported instead of lasting forever.
 *
 *  - poll: make progress; the driver calls the bip_core_* entry points
 *    below for what happened.  Returns the number of events, or a negative
 *    errno on a fatal NIC error.  An arrival handler answers -EAGAIN only
 *    when the peer has run past its allowance of held arrivals (below): the
 *    driver must then keep that arrival and every later one from the same
 *    peer, and offer it again on a later poll, so that per-peer order is
 *    kept.  This is the last resort against a sender that goes on sending
 *    to a tag it was told to hold; a program that makes progress never
 *    meets it.
 *
 * Arrivals reach the tag queues in one of two ways:
 *
 *  - the driver hands each one to the core (bip_core_short_arrived,
 *    bip_core_long_arrived), which copies it into a posted receive or into
 *    the tag's queue: shm, ofi, psm2;
 *  - the NIC writes each one into the tag's queue itself, as BIP's LANai
 *    firmware did by DMA, and the driver then tells the core with
 *    bip_core_queued: lanai.  The queue then has the NIC as its only
 *    producer (the layout and placement rule of tagq.h), so the core offers
 *    the queues (job->tagqs) only to a driver instance that serves every
 *    other node; one that takes them sets nic->fills_queues, and may move
 *    them into memory its NIC reaches (its DMA window) by setting
 *    job->tagqs[tag].buf to cap bytes of its own, valid until close; the
 *    queues are empty then.  The NIC finds room from the count of bytes the
 *    core has freed, which the core publishes with release at
 *    job->tagqs[tag].freed; it keeps what does not fit and writes it later,
 *    in order, so nothing is refused.
 *
 * Flow control is per tag: a full tag queue holds back only the messages
 * of that (sender, receiver, tag); the sender's messages for other tags
 * pass.  The core does it for the drivers that hand arrivals over: an
 * arrival that finds its tag's queue full (or a layer that refuses it) is
 * kept by the core, in order behind the tag's earlier kept arrivals, and
 * the core tells the sender to hold that tag (a message on its own tag,
 * BIP_TAG_FLOW, which is never held); once the tag's kept arrivals have
 * all moved into the queue it tells the sender to resume.  The sender keeps
 * its messages for a held (receiver, tag) in the peer's queue and posts
 * those for other tags past them.  What the sender posted before it learnt
 * of the hold is kept at the receiver: at most what was in flight, since
 * the sender learns of it at its next progress.  A NIC that fills the
 * queues keeps what does not fit per (source, tag), lets the source's other
 * tags pass, and its driver calls bip_core_tag_held(src, tag, 1) when the
 * NIC starts keeping arrivals of that source and tag and (src, tag, 0) when
 * it keeps none any more; the core tells the sender as above.  No driver
 * holds a whole peer back for one tag, except the last resort above.
 *
 * Messages between two nodes arrive in the order they were posted, shorts
 * and long announcements alike (per tag: the messages of a held tag wait
 * while later ones of other tags pass).  Ops are called with the core's lock held
 * (when the process has threads), so a driver needs no lock of its own;
 * the posts of a driver that sets post_per_peer are the first exception
 * (see there), sleep_wait the second (below).
 *
 * Sleeping (BIP_WAIT=block, and auto with more local processes than
 * processors) comes in two halves, so that a thread sleeps without the
 * lock while the others go on:
 *
 *  - sleep_arm, with the lock held: say that a thread of this process is
 *    going to sleep (a count in memory the wakers read: two threads may
 *    sleep at once), fence, look once more at what has been published to
 *    this process, and answer 0 if something is there (the count is taken
 *    back; no sleep_wait follows), else 1 with s filled in: what to wait
 *    on, captured now, and s->timeout_ns lowered if the driver needs to
 *    look around sooner.
 *  - sleep_wait, without the lock: wait on what s says (a futex word while
 *    it holds its value, or a descriptor until it is readable) for at most
 *    s->timeout_ns, then take the count back.  It reads nothing of the
 *    driver's own state, only s and the words s points to (which stay
 *    valid until close, and close comes after every wait has ended).
 *
 * Whoever publishes something for a process whose count is not 0 wakes
 * every thread sleeping there (FUTEX_WAKE of them all, or a descriptor
 * made readable), after a full fence between its publication and its
 * read of the count: either the sleeper's last look sees the publication
 * or the publisher sees the sleeper.  The count and the word are hints a
 * peer may spoil: the worst is a spurious wake-up, or a sleep that lasts
 * its time-out.
 * An operation a driver does not support is set to a function returning
 * -ENOSYS, never left NULL (post_short2 and the one-sided ops excepted,
 * see above and below).
 *
 * One-sided operations (bip_rma(3)) are optional: a NIC that executes
 * puts, gets and atomics on a peer's exposed memory without the peer's
 * process (lanai's board) sets all four rma_ ops, the others leave them
 * NULL and bip_rma_capable says 0 for their peers.  The core uses the
 * driver instance itself, not the reliability layer above it, which has
 * nothing to do with these: the NIC makes them reliable on its own.
 *
 *  - rma_capable: 1 if the NIC executes them on node's memory (node may
 *    be this one), else 0.
 *  - rma_expose: serve [base, base + len) of this process to the job's
 *    processes.  The key comes with the completion.
 *  - rma_withdraw: stop serving key; once its completion is reported,
 *    the NIC touches the region no more.
 *  - rma_post: start one operation (struct bip_nic_rma), whose buffers
 *    stay valid until its completion.  Operations posted to one node are
 *    executed there in the order posted.  Completion means the data is in
 *    the target's memory (put, atomic) and the result in this process's
 *    (get, atomic).
 *
 * Each returns 0, the driver then calls bip_core_rma_done(cookie, status,
 * key) from a later poll; -EAGAIN when the NIC has no room now (the core
 * posts it again later, in order); or another negative errno.  The
 * statuses bip_rma_test(3) names (-ERANGE, -EACCES ...) are the NIC's to
 * decide.  A NIC of this kind that libfabric offers (FI_RMA, FI_ATOMIC)
 * would register memory in rma_expose and complete at once from its next
 * poll.
 *
 * Nodes that join a running job (bip_grow(3)): a job that may grow has
 * room for numnodes nodes, of which the first job->known exist when a
 * process opens its drivers; serve[] names only those the instance waits
 * for at open (the nodes started with this one).  The others are reached
 * on first use: the core calls reach(nic, node) before its first send to a
 * node it has not reached (0: reached, -EAGAIN: not there yet, another
 * negative errno with a message in job->err's buffer: never), and a driver
 * that takes an arrival from a node it had not reached reaches it first,
 * then calls bip_core_peer_joined(nic, node) so that the core sends to it
 * through the same instance.  reach is NULL in a driver whose peers cannot
 * join later; the core then does not let the job grow.
 * All of the above is what the core may rely on.  A driver whose NIC may
 * lose, corrupt, duplicate or reorder (the simulated board, libfabric
 * datagram endpoints) does not provide it itself: it sets dgram, moves
 * datagrams only (rel.h), and the reliability layer (rel.c), which the
 * core opens on top of it, provides this contract.
 */
#ifndef BIP_NIC_H
#define BIP_NIC_H

#include <stddef.h>
#include <stdint.h>

#include "bip.h"

struct bip_conf;
struct bip_dgram;
struct bip_nic;

/* Tags NTAGS .. BIP_ALL_TAGS-1 are reserved for layers above the API (the MPI shim). */
#define BIP_INTERNAL_TAGS BIP_RESERVED_TAGS
/* The core's own tag, above the layers': per-tag flow control (above). */
#define BIP_TAG_FLOW (NTAGS + BIP_INTERNAL_TAGS)
/* The core's second: forwarding between clusters through the relays
 * (fwd.c), a layer of the core's own, held and resumed as the layers' tags. */
#define BIP_TAG_FWD (BIP_TAG_FLOW + 1)
#define BIP_ALL_TAGS (BIP_TAG_FWD + 1)

/* 1 if a long message on tag may go with its announcement, before the
 * receiver asks for it (post_long above): the program's tags, and the
 * forwarding tag, whose relays take a packet's data as soon as they have
 * room and whose senders wait on the reliability layer's acknowledgement
 * end to end, never on the data's place. */
static inline int bip_nic_tag_eager(uint32_t tag)
{
	return tag < NTAGS || tag == BIP_TAG_FWD;
}

/* A tag's queue, for a NIC that writes the queues itself (tagq.h). */
struct bip_nic_tagq {
	void *buf;              /* entries, laid out as tagq.h says; the driver
				 * may give memory of its own (see above) */
	uint32_t cap;           /* bytes; at least twice the largest entry */
	const uint32_t *freed;  /* bytes the core has freed (stored with release) */
};

/* What a sleeping thread waits on: filled in by sleep_arm, used by
 * sleep_wait (above). */
struct bip_nic_sleep {
	long timeout_ns;        /* the longest sleep; sleep_arm may lower it */
	uint32_t *word;         /* a futex word (shared) to wait on ... */
	uint32_t value;         /* ... while it holds this; or NULL */
	uint32_t *sleepers;     /* the count sleep_arm raised, or NULL */
	int fd;                 /* a descriptor to wait on until readable, or -1 */
};

/* What a driver is told at open. */
struct bip_nic_job {
	int mynode;
	int numnodes;
	const struct bip_conf *conf;
	const unsigned char *serve;   /* serve[node] != 0: this instance reaches node */
	const char *jobid;
	double timeout;               /* seconds to wait for peers at start-up */
	int quiet;
	char *err;                    /* where open writes why it failed */
	size_t errlen;
	/* The queues of every tag (ntags of them) when this instance serves
	 * every other node, so that its NIC may write them; else NULL. */
	struct bip_nic_tagq *tagqs;
	int ntags;
	/* The job may grow (above): grows is 1, known the nodes that exist
	 * now, the rest of numnodes join later (none, for the last ones to
	 * join).  grows 0 and known == numnodes in a job that cannot. */
	int grows;
	int known;
	int first;      /* the first node that opens with this one (0, or its group's) */
};

/* A one-sided operation, for rma_post (bip_rma(3) says what each does). */
enum bip_nic_rma_kind {
	BIP_NIC_RMA_PUT = 1,
	BIP_NIC_RMA_GET,
	BIP_NIC_RMA_ATOMIC,
};

struct bip_nic_rma {
	int kind;		/* enum bip_nic_rma_kind */
	int node;		/* the target (may be this node) */
	uint64_t key, offset;	/* the target's region, and where in it */
	void *buf;		/* PUT: the data (not written); GET: where it goes */
	size_t len;		/* PUT, GET: bytes */
	int op, type;		/* ATOMIC: enum bip_rma_op, enum bip_rma_type */
	size_t count;		/* ATOMIC: elements */
	const void *operand;	/* ATOMIC: count elements (NO_OP: may be NULL) */
	const void *compare;	/* ATOMIC CSWAP: one element */
	void *result;		/* ATOMIC: the values before, or NULL */
};

/* Bytes of an element of a bip_rma type (include/bip.h), 0 for a type
 * that does not exist: the one table of the core and the drivers. */
static inline size_t bip_nic_rma_type_size(int type)
{
	static const unsigned char size[] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8 };

	_Static_assert(BIP_RMA_INT8 == 1 && BIP_RMA_UINT8 == 5 && BIP_RMA_FLOAT == 9 &&
			       BIP_RMA_DOUBLE == 10,
		       "the table follows enum bip_rma_type");
	return type > 0 && type < (int)sizeof(size) ? size[type] : 0;
}

struct bip_nic_ops {
	const char *name;
	/* 1: reaches peers on other hosts, and is chosen for them by itself
	 * (in the order of the driver table); 0: serves only this host's peers,
	 * or only when BIP_NIC asks for it. */
	int network;
	/* 1: post_short and post_short2 to different peers may run at once
	 * (the core holds only the peer's send lock, state.h), as long as
	 * every op touching one peer's sending state is called under that
	 * peer's send lock or the core's lock with it: shm, whose state for
	 * sending is per peer.  0: every op under the core's lock. */
	int post_per_peer;
	/* 1 if the driver can run on this machine; otherwise 0 and a reason. */
	int (*available)(char *why, size_t len);
	/* Attach to the served peers (waiting up to job->timeout for them). */
	int (*open)(const struct bip_nic_job *job, struct bip_nic **nic_p);
	int (*post_short)(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len);
	int (*post_short2)(struct bip_nic *nic, int dst, uint32_t tag, const void *hdr, size_t hlen,
			   const void *buf, size_t len);
	int (*post_long)(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
			 uint64_t cookie);
	int (*post_long_recv)(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			      uint64_t cookie);
	int (*poll)(struct bip_nic *nic);
	/* 0 once the process of node has ended (it can send nothing more), else 1. */
	int (*alive)(struct bip_nic *nic, int node);
	/* Sleeping (above): arm with the lock, then wait without it.  NULL
	 * (both): peers cannot wake this process (it then yields instead of
	 * sleeping). */
	int (*sleep_arm)(struct bip_nic *nic, struct bip_nic_sleep *s);
	void (*sleep_wait)(struct bip_nic *nic, struct bip_nic_sleep *s);
	/* Release everything; the peers' memory may still be in use by them. */
	void (*close)(struct bip_nic *nic);
	/* One-sided operations (above); NULL, all four, where the NIC has none. */
	int (*rma_capable)(struct bip_nic *nic, int node);
	int (*rma_expose)(struct bip_nic *nic, void *base, size_t len, uint64_t cookie);
	int (*rma_withdraw)(struct bip_nic *nic, uint64_t key, uint64_t cookie);
	int (*rma_post)(struct bip_nic *nic, const struct bip_nic_rma *op, uint64_t cookie);
	/* Reach a node that joined the job after this instance opened
	 * (above); NULL where peers cannot join.  A message in err. */
	int (*reach)(struct bip_nic *nic, int node, char *err, size_t errlen);
};

/* Every driver instance starts with this. */
struct bip_nic {
	const struct bip_nic_ops *ops;
	size_t max_short;             /* bytes; at least BIPSMALLSIZE * 4 */
	const char *desc;             /* what bip_init prints, e.g. "ofi (tcp;ofi_rxm)";
				       * NULL: the driver's name */
	int fills_queues;             /* the NIC writes the tag queues (job->tagqs) */
	/* Set by a driver that is not reliable by itself (rel.h): it moves
	 * datagrams, and the core puts the reliability layer above it.  NULL
	 * for the reliable ones, whose ops above are the ones used. */
	struct bip_dgram *dgram;
	/* 1: what this instance brings arrives through the other instances
	 * (the forwarding driver, fwd.c): nobody wakes it, its sleep_arm only
	 * says whether something waits here (0) and may lower s->timeout_ns,
	 * and the process sleeps on the one other instance (progress.c). */
	int passive;
};

/* The drivers compiled in. */
extern const struct bip_nic_ops bip_shm_ops;
extern const struct bip_nic_ops bip_lanai_ops;
extern const struct bip_nic_ops bip_ofi_ops;
extern const struct bip_nic_ops bip_psm2_ops;
extern const struct bip_nic_ops bip_udp_ops;

/* 1 if nodes a and b of conf are on the same host: the same name in the
 * configuration, or both names local to this machine (bip_host_is_local). */
int bip_nic_same_host(const struct bip_conf *conf, int a, int b);

/* In a job that grows: make node's entry of the configuration name the
 * host it runs on, asked of bipload once for a node that joined (nic.c).
 * Nothing for the nodes the job started with. */
void bip_nic_learn_host(int node);
/* 1 once the host of node, a node that joined, has been learnt. */
int bip_nic_host_known(int node);

/*
 * Entry points of the core, called by drivers from poll (and only from poll).
 * Tags may be internal ones (>= NTAGS) reserved for layers above the API.
 */

/* A short message arrived; data is valid only during the call.
 * Returns 0 (taken) or -EAGAIN (no room: offer it again later). */
int bip_core_short_arrived(int src, uint32_t tag, const void *data, size_t len);

/* A long message is announced; handle identifies it for post_long_recv.
 * Returns 0 or -EAGAIN as above. */
int bip_core_long_arrived(int src, uint32_t tag, size_t len, uint64_t handle);

/* A NIC that fills the queues has written one more entry into the queue of
 * tag (a short message, or the announcement of a long one).  Called once per
 * entry, in the order the NIC wrote the entries of that tag. */
void bip_core_queued(uint32_t tag);

/* A NIC that fills the queues started (held 1) or stopped (held 0) keeping
 * arrivals of src for tag that found the tag's queue full. */
void bip_core_tag_held(int src, uint32_t tag, int held);

/* The driver nic took an arrival from node, which joined the job after it
 * opened, and has reached it (above). */
void bip_core_peer_joined(struct bip_nic *nic, int node);

/* The long send posted with cookie has completed (status 0 or -errno). */
void bip_core_send_done(uint64_t cookie, int status);

/* The long receive posted with cookie has completed (status 0 or -errno). */
void bip_core_recv_done(uint64_t cookie, int status);

/* The one-sided operation, exposure or withdrawal posted with cookie has
 * completed (status 0 or -errno); key: an exposure's key, else 0. */
void bip_core_rma_done(uint64_t cookie, int status, uint64_t key);

#endif /* BIP_NIC_H */
