/* SPDX-License-Identifier: MIT */
/*
 * ofi.h - the ofi driver's private state: peers through libfabric
 * (FI_EP_RDM endpoints, tagged messages).
 *
 * ofi.c       provider choice, start-up (address exchange), short
 *             messages, credits, polling
 * ofi_long.c  long messages (eager into a bounce buffer up to BIP_OFI_EAGER
 *             bytes, else rendezvous into the posted user buffer) and the
 *             memory registration cache
 * ofi_wait.c  sleeping on the completion queue (nic.h), for this
 *             driver and the udp one
 * ofi_link.c  connections on first use over the providers that connect
 *             (ofi_rxm), through a side channel on each process's
 *             liveness listener, and the liveness checks themselves
 * ofi_rma.c   one-sided operations (nic.h's rma_ ops) with FI_RMA and
 *             FI_ATOMIC, where the provider has them
 *
 * Wire tags (64 bits):
 *   0                    a control message into a pre-posted buffer of the
 *                        receiver's pool: struct bip_netproto_hdr, then the payload
 *   bit 62 alone         an eager long message into a bounce buffer of the
 *                        receiver: the header (kind BIP_OFI_EAGER_KIND), then
 *                        the data (ofi_long.c)
 *   bit 63 = 1           data of a long message, straight into the user's
 *                        buffer: sender node (bits 40..62), the sender's long
 *                        send id (bits 16..39), chunk (bits 0..15)
 *
 * Short messages and long announcements (RTS) carry a per-peer sequence
 * number and use a credit: a sender has BIP_OFI_CREDITS messages in flight
 * per peer at most, so the receiver's pool never overflows and a full tag
 * queue makes the sender wait (as shm's queue does).  The receiver returns
 * credits as the core takes the messages, on any message back or in a
 * credit message.  An eager message also uses a bounce buffer credit, which
 * comes back in the header's rsv field (struct bip_netproto_hdr) once the
 * receiver has copied the data out.
 */
#ifndef BIP_OFI_H
#define BIP_OFI_H

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>

#include <rdma/fi_errno.h>

#include "atomics.h"
#include "nic.h"
#include "drivers/netproto.h"

/*
 * libfabric's functions, found when it is loaded (ofi_dl.c); the calls
 * through its objects' ops tables (fi_tsend, fi_cq_read, ...) need no symbol.
 */
struct bip_ofi_dl {
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
		       struct fi_info **);
	void (*freeinfo)(struct fi_info *);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	const char *(*strerror)(int);
};
extern struct bip_ofi_dl bip_ofi_dl;
#define fi_getinfo bip_ofi_dl.getinfo
#define fi_freeinfo bip_ofi_dl.freeinfo
#define fi_dupinfo bip_ofi_dl.dupinfo
#define fi_fabric bip_ofi_dl.fabric
#define fi_strerror bip_ofi_dl.strerror

/* Load libfabric once; 0, or -1 with the reason in why. */
int bip_ofi_load(char *why, size_t len);

#define BIP_OFI_DATA_BIT (1ull << 63)
#define BIP_OFI_SLOT_SIZE 320            /* header + BIP_SHORT_MAX, rounded up */
#define BIP_OFI_LSENDS 4096              /* long sends in flight (id: 12 bits index) */
#define BIP_OFI_CHUNK_MAX (1ull << 30)   /* largest single data transfer */
#define BIP_OFI_TXSLOTS 256

/* Eager long messages (ofi_long.c). */
#define BIP_OFI_EAGER_BIT (1ull << 62)   /* their wire tag */
#define BIP_OFI_EAGER_KIND 16            /* their header's kind: an RTS with the data behind */
#define BIP_OFI_EAGER_ID (1u << 31)      /* in a handle's id: a message in a bounce buffer */
#define BIP_OFI_EAGER_DEFAULT 16384      /* BIP_OFI_EAGER */
#define BIP_OFI_EAGER_LIMIT (1u << 20)   /* its largest value */
/* FI_OFI_RXM_BUFFER_SIZE unless the user sets it (ofi_dl.c): the default
 * eager message, BIP's header and ofi_rxm's */
#define BIP_OFI_RXM_BUFFER_SIZE (BIP_OFI_EAGER_DEFAULT + 256)
#define BIP_OFI_EBUFS_DEFAULT 8          /* BIP_OFI_EAGER_BUFS: bounce buffers per peer */
#define BIP_OFI_EBUFS_LIMIT 1024
#define BIP_OFI_EBUF_MEM (64ul << 20)    /* bounce buffers of all peers: bytes at most */
#define BIP_OFI_EBUF_COUNT 65535         /* ... and buffers at most (16 bits of the id) */

static inline uint64_t bip_ofi_data_tag(int src, uint32_t id, unsigned chunk)
{
	return BIP_OFI_DATA_BIT | ((uint64_t)src << 40) | ((uint64_t)(id & 0xffffff) << 16) | chunk;
}

enum bip_ofi_ctx_kind {
	BIP_OFI_CTX_RX,      /* a pool buffer */
	BIP_OFI_CTX_TX,      /* a send buffer */
	BIP_OFI_CTX_LSEND,   /* a chunk of a long send */
	BIP_OFI_CTX_LRECV,   /* a chunk of a long receive */
	BIP_OFI_CTX_ERX,     /* a bounce buffer (struct bip_ofi_ebuf) */
	BIP_OFI_CTX_RMA,     /* a one-sided operation (ofi_rma.c) */
};

/* Every operation's context starts with this (FI_CONTEXT2 mode). */
struct bip_ofi_ctx {
	struct fi_context2 fi;
	uint8_t kind;
};

struct bip_ofi_slot {
	struct bip_ofi_ctx ctx;
	struct bip_ofi_slot *next;        /* free list, or repost list */
	uint8_t *buf;                     /* BIP_OFI_SLOT_SIZE bytes */
	void *desc;                       /* buf's registration (receives), or NULL */
	int dst;                          /* send buffers: the peer */
};

/* Receive buffers, allocated together (a chunk at start-up, one more for
 * each peer linked: bip_ofi_pool_grow). */
struct bip_ofi_rxchunk {
	struct bip_ofi_rxchunk *next;
	struct fid_mr *mr;
	uint8_t *mem;
	struct bip_ofi_slot slot[];
};

enum bip_ofi_ebuf_state {
	BIP_OFI_EBUF_POSTED,              /* posted, or waiting to be posted again */
	BIP_OFI_EBUF_HELD,                /* holds a message not yet offered to the core */
	BIP_OFI_EBUF_OFFERED,             /* the core has its handle: until post_long_recv */
};

/* A bounce buffer: an eager message waits here for its receive. */
struct bip_ofi_ebuf {
	struct bip_ofi_slot s;            /* first: held[] and deliver see a slot */
	uint8_t state;
	uint16_t gen;                     /* in the handle, against stale ones (15 bits) */
	uint16_t idx;                     /* in the handle: its number (bip_ofi_eager_grow) */
	int src;
	uint32_t len;                     /* bytes of data behind the header */
};

/* The bounce buffers of one peer linked (bip_ofi_eager_grow). */
struct bip_ofi_echunk {
	struct fid_mr *mr;
	uint8_t *mem;
	struct bip_ofi_ebuf e[];          /* eager_bufs of them, numbered on from the last chunk */
};

/* A registration of user memory (providers with FI_MR_LOCAL). */
struct bip_ofi_mr {
	uintptr_t base;
	size_t len;
	struct fid_mr *mr;
	int refs;
	int cached;                       /* in the cache (else freed at its last put) */
	uint64_t used;                    /* for eviction: least recently used goes */
};

#define BIP_OFI_MR_CACHE 64

struct bip_ofi_chunk {
	struct bip_ofi_ctx ctx;
	void *owner;                      /* the lsend or lrecv */
};

struct bip_ofi_lsend {
	uint32_t gen;                     /* 0: free */
	int dst;
	const uint8_t *buf;
	size_t len;
	uint64_t cookie;
	unsigned nchunks, posted, done;
	int cts;                          /* the receiver asked for the data */
	int status;
	struct bip_ofi_mr *mr;
	struct bip_ofi_chunk *chunks;
	struct bip_ofi_lsend *next_pending;
	/* eager: the one transfer, and the send buffer holding its header */
	struct bip_ofi_chunk echunk;
	struct bip_ofi_slot *hdr;
};

struct bip_ofi_lrecv {
	int src;
	uint32_t id;
	uint8_t *buf;
	size_t len;
	uint64_t cookie;
	unsigned nchunks, posted, done;
	int cts_sent;
	int status;
	struct bip_ofi_mr *mr;
	struct bip_ofi_chunk *chunks;
	struct bip_ofi_lrecv *next_pending;
};

/* What a node publishes at start-up (the address exchange blob). */
struct bip_ofi_blob {
	char prov[64];
	char boot_id[40];
	uint64_t pidns;
	uint32_t pid;
	uint32_t addrlen;
	uint64_t max_msg;
	uint32_t live_port;               /* TCP port of the liveness listener, 0: none */
	uint32_t eager;                   /* largest eager message it takes, 0: none */
	uint32_t eager_bufs;              /* bounce buffers it keeps for each peer */
	uint32_t rma;                     /* BIP_OFI_RMA_* (ofi_rma.c) */
	uint64_t netns;                   /* its network namespace (an inode), 0: unknown */
	/* its directory of exposed regions (ofi_rma.c) */
	uint64_t rma_dir_key, rma_dir_addr;
	uint32_t rma_slots, rsv2;
	uint8_t addr[160];
};

/* Whether messages may go to a peer (ofi_link.c). */
enum bip_ofi_link {
	BIP_OFI_LINK_NONE,                /* nothing asked yet */
	BIP_OFI_LINK_ASKING,              /* a request went (or goes) on the side channel */
	BIP_OFI_LINK_UP,                  /* the connection is there (or none is needed) */
};

/* The side channel's requests (ofi_link.c), all fields in network order. */
enum bip_ofi_linkreq_kind {
	BIP_OFI_LINKREQ_CONNECT = 1,      /* from a lower node: connect to me now */
	BIP_OFI_LINKREQ_ASK,              /* from a higher node: I need you, ask me */
};

#define BIP_OFI_LINKREQ_VERSION 1

struct bip_ofi_linkreq {
	uint32_t version;                 /* BIP_OFI_LINKREQ_VERSION */
	uint32_t kind;                    /* enum bip_ofi_linkreq_kind */
	uint32_t src;                     /* the sender's node */
	uint32_t dst;                     /* the listener's node */
	uint64_t job;                     /* the job id's hash (bip_ofi_link_init) */
};
_Static_assert(sizeof(struct bip_ofi_linkreq) == 24, "side channel request layout");

struct bip_ofi_peer {
	int served;
	fi_addr_t addr;
	int same_kernel;                  /* pid is meaningful here */
	int same_netns;                   /* and its listener is on this loopback */
	int pid;
	int dead;                         /* the provider reported it unreachable */
	int sent_any;                     /* close says goodbye to it */
	int bye_owed;                     /* close: its goodbye found no room yet */
	int heard;                        /* something came from it */
	int closed;                       /* its last note came (send_note) */
	uint8_t bye_wait;                 /* close: its answer to our goodbye is awaited */
	uint8_t bye_answered;             /* its answer to our goodbye came */
	uint8_t answer_owed;              /* its goodbye's answer waits for a send buffer */
	unsigned lrecv_chunks;            /* chunks of long receives from it posted, not complete */
	int ctl_waits;                    /* ctl_flush: a control message to it waits */
	uint8_t link;                     /* enum bip_ofi_link */
	uint8_t hello_due;                /* its first note waits for a send buffer */
	double ended_check;               /* bip_ofi_link_ended: not asked again before */
	uint8_t rma;                      /* its BIP_OFI_RMA_* (ofi_rma.c) */
	uint32_t rma_slots;               /* its directory (ofi_rma.c) */
	uint64_t rma_dir_key, rma_dir_addr;
	/* the side channel's request to it in progress (ofi_link.c) */
	int req_fd;                       /* a connection to its listener, or -1 */
	double req_since;
	/* a connection to the peer's liveness listener, refused once its
	 * process has gone (another host: liveness checks), or carrying a
	 * side channel request */
	uint16_t live_port;               /* its listener's port, 0: none */
	int live_ok;                      /* live_addr is resolved */
	int live_own;                     /* ... from its own endpoint's address */
	int live_fd;                      /* a liveness check in progress, or -1 */
	double live_since;                /* when it started (seconds, monotonic) */
	struct sockaddr_in live_addr;
	struct bip_netproto_peer np;      /* sequence numbers, credits, arrivals held */
	/* eager messages (ofi_long.c) */
	uint32_t eager_max;               /* largest we send it eagerly, 0: none */
	uint32_t eager_credits;           /* its bounce buffers we may fill */
	uint32_t eager_grant;             /* ... at most: as many as it has for us */
	uint32_t eager_owed;              /* our bounce buffers it filled, now free */
	uint32_t eager_inuse;             /* our bounce buffers holding its messages */
};

struct bip_ofi_rma;                       /* ofi_rma.c */

struct bip_ofi_ctl {
	int dst;
	uint8_t kind;
	uint32_t id;
};

struct bip_ofi {
	struct bip_nic nic;
	int mynode, numnodes;
	/* A job that grows (nic.h): addresses come from bipload (boot/pm.h),
	 * each when its node is first reached; this process's own, as
	 * published. */
	int grows;
	struct bip_ofi_blob *self_blob;
	char prov[64];
	char desc[224];
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	int cq_fd;                        /* block mode: the queue's wait descriptor, or -1 */
	char nosleep[120];                /* block mode: why the queue has none */
	struct bip_nic_ops ops;           /* bip_ofi_ops, with sleep when cq_fd is set */
	int live_fd;                      /* my liveness listener, or -1 */
	double alive_timeout;             /* seconds a liveness check may go unanswered */
	/* connections on first use (ofi_link.c) */
	const struct bip_conf *conf;      /* the peers' host names */
	int lazy;                         /* the provider connects: links are asked for */
	uint64_t jobkey;                  /* the job id's hash, in the side channel's requests */
	int *reqs;                        /* peers with a request in progress (req_fd) */
	int nreqs;
	struct bip_ofi_inreq {
		int fd;                   /* accepted from my listener */
		double since;
		uint8_t got;              /* bytes of req read */
		struct bip_ofi_linkreq req;
	} inreqs[16];                     /* accepted, request not read yet */
	int ninreqs;
	int nhello;                       /* peers whose first note waits (hello_due) */
	int nanswers;                     /* peers whose goodbye's answer waits (answer_owed) */
	unsigned link_polls;              /* polls since the listener was last looked at */
	int wait_fd;                      /* block mode: epoll of cq_fd and live_fd, or -1 */
	unsigned bad_reqs;                /* malformed requests dropped */
	int mr_local;                     /* user buffers must be registered */
	size_t inject_size;
	uint64_t chunk;
	uint32_t ncredits;                /* per peer, a power of two */
	struct bip_ofi_peer *peers;
	/* receive pool */
	struct bip_ofi_rxchunk *rxchunks;
	int nrx;                          /* buffers in all chunks */
	int rx_budget;                    /* receives the provider takes posted at once */
	struct bip_ofi_slot *repost;      /* buffers to post again */
	int nheld;                        /* arrivals held in all peers */
	/* send buffers */
	uint8_t *tx_mem;
	struct bip_ofi_slot *tx, *tx_free;
	struct fid_mr *tx_mr;
	int tx_out;                       /* sends not completed */
	/* control messages waiting for room */
	struct bip_ofi_ctl *ctl;
	int nctl, ctl_cap;
	/* long messages */
	struct bip_ofi_lsend lsend[BIP_OFI_LSENDS];
	uint16_t lfree[BIP_OFI_LSENDS];
	int nlfree;
	int long_out;                     /* data transfers posted, not completed */
	struct bip_ofi_lsend *lsend_pending;
	struct bip_ofi_lrecv *lrecv_pending;
	unsigned lrecv_chunks;            /* chunks of long receives posted, not complete */
	/* registration cache */
	struct bip_ofi_mr *mrs[BIP_OFI_MR_CACHE];
	int nmrs;
	uint64_t mr_clock;
	int mr_cache;                     /* 0: register each message */
	/* eager messages and their bounce buffers */
	uint32_t eager;                   /* BIP_OFI_EAGER, or 0 when the provider cannot */
	uint32_t eager_bufs;              /* per peer: BIP_OFI_EAGER_BUFS, or fewer */
	struct bip_ofi_echunk **echunks;  /* one per peer linked, at most one per served peer */
	int nechunks, echunks_cap;
	int nebuf;                        /* bounce buffers in all chunks */
	struct bip_ofi_slot *erepost;     /* bounce buffers to post again */
	/* one-sided operations (ofi_rma.c): NULL where the provider has none */
	struct bip_ofi_rma *rma;
	uint32_t rma_flags;               /* this process's BIP_OFI_RMA_* */
	/* The progress thread serves one-sided operations on this process's
	 * memory (ofi_rma.c), whose packets would wake a thread asleep on the
	 * completion queue at each of them: its threads sleep on bell instead,
	 * rung by a poll that found something for them (ofi_sleep_arm). */
	int bell_mode;
	uint32_t bell, sleepers;
};

static inline struct bip_ofi *bip_ofi_of(struct bip_nic *nic)
{
	return (struct bip_ofi *)nic;
}

/* The bounce buffer credits to return with the next message to p (rsv is 8 bits). */
static inline uint8_t bip_ofi_take_eager_owed(struct bip_ofi_peer *p)
{
	uint8_t c = p->eager_owed > 0xff ? 0xff : (uint8_t)p->eager_owed;

	p->eager_owed -= c;
	return c;
}

/* Bounce buffer credits came back from p (n of them, untrusted: no more
 * than it has buffers for us). */
static inline void bip_ofi_eager_credit(struct bip_ofi_peer *p, uint32_t n)
{
	p->eager_credits += n;
	if (p->eager_credits > p->eager_grant)
		p->eager_credits = p->eager_grant;
}

/* ofi.c */
/* The link to node is up: its books, and buffers for it; 0 or -ENOMEM. */
int bip_ofi_peer_open(struct bip_ofi *ofi, int node);
/* Queue (or send at once) a control message without payload. */
void bip_ofi_send_ctl(struct bip_ofi *ofi, int dst, uint8_t kind, uint32_t id);
/* Post a sequenced, credited message; 0, -EAGAIN or -errno. */
int bip_ofi_post_msg(struct bip_ofi *ofi, int dst, uint8_t kind, uint32_t tag, uint32_t len,
		     uint32_t id, const void *payload, size_t plen);
/* A send buffer (registered with the pool), or NULL when all are in use. */
struct bip_ofi_slot *bip_ofi_tx_get(struct bip_ofi *ofi);
void bip_ofi_tx_put(struct bip_ofi *ofi, struct bip_ofi_slot *s);
/* Offer what arrived from src to the core, in sequence order; returns events. */
int bip_ofi_deliver(struct bip_ofi *ofi, int src);
/* Say that a message from the network was dropped as malformed. */
void bip_ofi_protocol_error(struct bip_ofi *ofi, const struct bip_netproto_hdr *h, size_t len);

/* ofi_link.c */
#define OFI_LINK_POLLS 64                /* polls between two looks at the listener */
/* Open my listener (before the address exchange): its port, or 0. */
int bip_ofi_link_listen(struct bip_ofi *ofi);
/* After the address exchange: the side channel's state; 0 or -ENOMEM. */
int bip_ofi_link_init(struct bip_ofi *ofi, const char *jobid);
void bip_ofi_link_fini(struct bip_ofi *ofi);
/* A message for dst waits for its link: ask for it; -EAGAIN (post again
 * later), or 0 when the provider connects by itself (the link is up). */
int bip_ofi_link_need(struct bip_ofi *ofi, int dst);
/* Move the side channel on (requests out, requests in); from poll. */
void bip_ofi_link_progress(struct bip_ofi *ofi);
/* The requests of the side channel have work in progress. */
static inline int bip_ofi_link_busy(const struct bip_ofi *ofi)
{
	return ofi->nreqs || ofi->ninreqs;
}
/* Something came from src over the provider: its link is up; 0, or
 * -ENOMEM (its books could not be set up: the arrival is dropped). */
/* Reach node, which joined the job after this driver opened (nic.h's
 * reach), from bipload's copy of its address: 0, -EAGAIN, or another
 * negative errno with a message in err. */
int bip_ofi_reach_node(struct bip_ofi *ofi, int node, char *err, size_t errlen);

/* A message or request from src, a node of a job that grows that this
 * driver has not reached: reach it now (1), or 0 if it cannot be. */
int bip_ofi_reach_sender(struct bip_ofi *ofi, uint32_t src);

static inline int bip_ofi_link_heard(struct bip_ofi *ofi, int src)
{
	ofi->peers[src].heard = 1;
	if (bip_unlikely(ofi->peers[src].link != BIP_OFI_LINK_UP))
		return bip_ofi_peer_open(ofi, src);
	return 0;
}
/* Whether the process of a peer still runs (nic.h's alive). */
int bip_ofi_link_alive(struct bip_ofi *ofi, int node);
/* After a send to node found no room: 1 if its process has ended (asked
 * at most every 10 ms, without progress: a send of tcp;ofi_rxm to an ended
 * process tries to connect again each time, and finds no room for ever). */
int bip_ofi_link_ended(struct bip_ofi *ofi, int node);
/* A credit message of nothing, through a send buffer (ofi.c). */
int bip_ofi_send_note(struct bip_ofi *ofi, int dst, uint32_t id);

/* ofi_rma.c */
#define BIP_OFI_RMA_ON 1u                /* the endpoint executes them (blob's rma) */
#define BIP_OFI_RMA_SERVED 2u            /* ... on this process's memory without it */
/* The caps one-sided operations need, asked for on top of FI_TAGGED. */
#define BIP_OFI_RMA_CAPS (FI_RMA | FI_ATOMIC)
/* 1 if the provider's entries should be asked for with BIP_OFI_RMA_CAPS
 * (BIP_OFI_RMA is not 0). */
int bip_ofi_rma_wanted(void);
/* After the endpoint is open: whether it executes them, and their state;
 * sets ofi->rma and ofi->rma_flags, or leaves them NULL and 0. */
void bip_ofi_rma_init(struct bip_ofi *ofi);
/* The address exchange: what this process publishes, and what a peer did. */
void bip_ofi_rma_publish(struct bip_ofi *ofi, struct bip_ofi_blob *me);
void bip_ofi_rma_peer(struct bip_ofi *ofi, int node, const struct bip_ofi_blob *b);
/* Before the domain closes: every registration and operation goes. */
void bip_ofi_rma_fini(struct bip_ofi *ofi);
/* A completion of one of them (status 0 or -errno); returns events. */
int bip_ofi_rma_done(struct bip_ofi *ofi, struct bip_ofi_ctx *ctx, int status);
/* Post what waits and report what has ended; from poll; returns events. */
int bip_ofi_rma_progress(struct bip_ofi *ofi);
/* Something waits for the provider's room or for a link (sleep: look again soon). */
int bip_ofi_rma_busy(const struct bip_ofi *ofi);
/* nic.h's rma_ ops. */
int bip_ofi_rma_capable(struct bip_nic *nic, int node);
int bip_ofi_rma_expose(struct bip_nic *nic, void *base, size_t len, uint64_t cookie);
int bip_ofi_rma_withdraw(struct bip_nic *nic, uint64_t key, uint64_t cookie);
int bip_ofi_rma_post(struct bip_nic *nic, const struct bip_nic_rma *op, uint64_t cookie);

/* ofi_wait.c */
/* Open a completion queue with attr; when a waiter may sleep
 * (bip_may_sleep) with a wait object whose descriptor goes into *fd, else,
 * or if the provider has none, without one (*fd = -1, and then the reason
 * in why).
 * 0 or a negative libfabric errno, as fi_cq_open. */
int bip_ofi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		    int *fd, char *why, size_t len);
/* nic.h's sleep_arm for cq (fi_trywait): 1 and s set to wait on fd, or 0
 * if completions are there (or the provider cannot tell).  The wait is
 * bip_nicsleep_wait. */
int bip_ofi_cq_sleep_arm(struct fid_fabric *fabric, struct fid_cq *cq, int fd,
			 struct bip_nic_sleep *s);

/* ofi_long.c */
int bip_ofi_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie);
int bip_ofi_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie);
void bip_ofi_long_init(struct bip_ofi *ofi);
void bip_ofi_long_fini(struct bip_ofi *ofi);
/* The receiver asked for long send id. */
void bip_ofi_cts(struct bip_ofi *ofi, int src, uint32_t id);
/* Post what waits for room; returns the number of transfers posted. */
int bip_ofi_long_progress(struct bip_ofi *ofi);
/* A data chunk completed (status 0 or -errno); returns 1 when it ended a message. */
int bip_ofi_chunk_done(struct bip_ofi *ofi, struct bip_ofi_chunk *c, int status);
void bip_ofi_chunk_closing(struct bip_ofi *ofi, struct bip_ofi_chunk *c);
/* BIP_OFI_EAGER and BIP_OFI_EAGER_BUFS: 0, or -EINVAL with the reason in err. */
int bip_ofi_eager_env(struct bip_ofi *ofi, char *err, size_t len);
/* How many bounce buffers each of nserved peers gets; 0 or -ENOMEM. */
int bip_ofi_eager_alloc(struct bip_ofi *ofi, int nserved);
/* Allocate and post the bounce buffers of one more peer linked, within
 * the provider's budget of posted receives. */
void bip_ofi_eager_grow(struct bip_ofi *ofi);
void bip_ofi_eager_free(struct bip_ofi *ofi);
/* The peers' eager limits and bounce buffers are known (the address exchange). */
void bip_ofi_eager_peer(struct bip_ofi *ofi, int node, const struct bip_ofi_blob *b);
/* A bounce buffer received len bytes; returns events. */
int bip_ofi_eager_rx(struct bip_ofi *ofi, struct bip_ofi_ebuf *e, size_t len);
/* Post a bounce buffer again (now, or on a later poll). */
void bip_ofi_eager_repost(struct bip_ofi *ofi, struct bip_ofi_ebuf *e);
void bip_ofi_eager_repost_flush(struct bip_ofi *ofi);
/* Registration of [buf, buf + len) through the cache; NULL on failure (errno set). */
struct bip_ofi_mr *bip_ofi_mr_get(struct bip_ofi *ofi, const void *buf, size_t len);
void bip_ofi_mr_put(struct bip_ofi *ofi, struct bip_ofi_mr *mr);
/* Drop the cache's unused registrations that overlap [base, base + len)
 * (the memory may be freed now). */
void bip_ofi_mr_forget(struct bip_ofi *ofi, const void *base, size_t len);

#endif /* BIP_OFI_H */
