/* SPDX-License-Identifier: MIT */
/*
 * state.h - the state of the BIP core (state.c), its lock, and the small
 * helpers every module of the core and every driver uses.
 *
 * The bottom of the core: this header names no function of another module,
 * so that every module may include it (lib/README.md).  What the modules
 * offer each other is in their own headers: error.h, progress.h, proto.h,
 * async.h; core.h gathers them for the drivers and the tests.
 */
#ifndef BIP_STATE_H
#define BIP_STATE_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "bip.h"
#include "atomics.h"
#include "nic.h"
#include "tagq.h"

#define BIP_EXPORT __attribute__((visibility("default")))

/* The tags (BIP_INTERNAL_TAGS, BIP_TAG_FLOW, BIP_TAG_FWD): nic.h. */
/* Words of a bitmap with one bit per tag. */
#define BIP_TAG_WORDS ((BIP_ALL_TAGS + 63) / 64)
_Static_assert(BIP_INTERNAL_TAGS <= 32, "one bit of layer_pending per reserved tag");

/* Lengths travel as 32-bit byte counts. */
#define BIP_MAX_MESSAGE 0xffffffffu

/* Short messages, in bytes. */
#define BIP_SHORT_MAX (BIPSMALLSIZE * 4)

/*
 * Receive ids: (generation << BIP_RECV_TAG_BITS) | tag.  Each tag has at
 * most one posted receive, so the tag is the request; the generation tells
 * a stale id from the current one.
 */
#define BIP_RECV_TAG_BITS 9
#define BIP_RECV_GEN_MAX ((1u << (31 - BIP_RECV_TAG_BITS)) - 1)

/*
 * Send ids: 0 for a send that completed at once; otherwise
 * (generation << BIP_SEND_INDEX_BITS) | index into the send table.
 */
#define BIP_SEND_INDEX_BITS 12
#define BIP_MAX_SENDS (1u << BIP_SEND_INDEX_BITS)
#define BIP_SEND_GEN_MAX ((1u << (31 - BIP_SEND_INDEX_BITS)) - 1)

enum bip_recv_state {
	BIP_RECV_IDLE,   /* no receive posted */
	BIP_RECV_POSTED, /* waiting for a message */
	BIP_RECV_LONG,   /* matched a long message; the NIC is moving it */
	BIP_RECV_DONE,   /* complete; rwait/rtest reports it */
	BIP_RECV_FAILED, /* complete with an error; the message is still queued */
};

struct bip_tag {
	struct bip_tagq q;
	/* the receive lane's lock (api.c): see "locking" below */
	pthread_mutex_t lock;
	/* the posted receive; state through bip_recv_state and bip_recv_set */
	uint8_t state;
	uint8_t waiters;         /* threads waiting for it: at most one */
	uint32_t gen;
	void *buf;
	size_t maxlen;
	size_t len;
	int src;
	char *failure;           /* why the receive failed, reported by rwait */
	/* bip_taginit */
	int nbufs;
	int size;
	int sized;
};

enum bip_send_state {
	BIP_SEND_FREE,
	BIP_SEND_QUEUED, /* waiting in its peer's queue for room at the NIC */
	BIP_SEND_LONG,   /* announced; waiting for the receiver to take it */
};

struct bip_sreq {
	uint8_t state;
	uint8_t layer;           /* a layer's send: tell it at completion */
	uint8_t force_long;      /* long whatever its length */
	uint32_t gen;
	int dst;
	uint32_t tag;
	uint32_t hlen;           /* a short message is hdr (hlen bytes) then buf */
	const void *hdr;
	const void *buf;
	size_t len;
	uint64_t cookie;         /* the layer's cookie */
	int status;              /* how it ended, until reported (peer_push) */
	void *copy;              /* a queued short message: the copy buf points to */
	struct bip_sreq *next;   /* peer queue, or free list */
};

/* An arrival the core keeps until its tag's queue has room (nic.h). */
struct bip_kept {
	struct bip_kept *next;
	uint32_t tag;
	uint8_t kind;            /* BIP_TAGQ_SHORT or BIP_TAGQ_LONG */
	uint32_t len;            /* the message's bytes */
	uint64_t handle;         /* a long message's */
	unsigned char data[];    /* a short message's */
};

/*
 * Bytes of one peer's arrivals the core keeps at most.  A sender learns
 * that a tag is held at its next progress, so what it sent before then is
 * kept: a ring's or a provider's worth, far below this.  Past it the peer's
 * driver holds all of its arrivals back (the last resort of nic.h).
 */
#define BIP_KEPT_MAX (64u << 20)

struct bip_peer {
	struct bip_nic *nic;
	/* the send lane's lock (proto.c): see "locking" below */
	pthread_mutex_t send_lock;
	struct bip_sreq *queued_head, *queued_tail;
	int holds;               /* some bit of held_by_peer is set (the fast
				  * path reads this word, beside queued_head) */
	/* flow control (proto.c): the tags this peer told us to hold ... */
	uint64_t held_by_peer[BIP_TAG_WORDS];
	/* ... the tags we want it to hold, and what we last told it */
	uint64_t hold_want[BIP_TAG_WORDS];
	uint64_t hold_told[BIP_TAG_WORDS];
	/* its arrivals the core keeps, in arrival order: those of the tags
	 * in hold_want (a driver that hands arrivals over) */
	struct bip_kept *kept_head, *kept_tail;
	size_t kept_bytes;
	int kept_full;           /* it ran past BIP_KEPT_MAX (said once) */
	/* It said goodbye at bip_finalize (bip_flow_bye), or has been seen
	 * ended without one (counts toward bip_state.watch_peers). */
	int said_bye, seen_dead;
	/* Reached through shm (set by bip_init): its goodbye is in its queue
	 * before its process ends, and whether that process runs is exact
	 * (the goodbye of proto.c, the watch of progress.c). */
	int by_shm;
	/* The driver instance that executes one-sided operations on this
	 * peer's memory (nic.h's rma_ ops; set by bip_init), or NULL. */
	struct bip_nic *rma;
	/* What this process handed its driver for this peer (proto.c), for
	 * bipload --monitor (monitor.h): bytes and messages. */
	uint64_t sent_bytes, sent_msgs;
};

enum bip_wait_mode { BIP_WAIT_AUTO, BIP_WAIT_SPIN, BIP_WAIT_YIELD, BIP_WAIT_BLOCK };

/*
 * Rounds a waiter spins before it yields at each round (BIP_SPIN): long
 * when every local process has a processor, a few when they outnumber the
 * processors, since the process waited for may need this very processor
 * (measured with 4 processes on 2 cores: 0 to 10 rounds all beat 50).
 */
#define BIP_SPIN_OWN_CPU 2000
#define BIP_SPIN_SHARED_CPU 5

struct bip_state {
	int initialized;
	int finalized;           /* bip_finalize ran: bip_init is refused */
	int quiet;
	int mynode, numnodes;    /* numnodes: every node, relays too, and the
				  * room of a job that may grow (bip_grow(3)) */
	/* The nodes running the program that this process knows of: the
	 * job's own (bip_numnodes), and in a job that grows, up to the last
	 * node it has reached or was started with.  Only grows; read without
	 * the lock by the calls' checks. */
	char jobid[48];          /* the job's id (boot.h), for bip_layer_jobid */
	int napp;
	int started;             /* the nodes the job started with (bip_numnodes) */
	int nrelays;             /* the relays, nodes started .. started + nrelays - 1:
				  * in a job that grows, the nodes that join come
				  * after them (bip_grow(3)) */
	int group_first, group_size; /* the nodes started with this one */
	/* The instance that reaches nodes joining the job (nic.h's reach),
	 * NULL when the job cannot grow; with shm beside a network driver,
	 * grow_local is shm, for the nodes that join on this host, and
	 * grow_nic the network driver, for the others (else NULL). */
	struct bip_nic *grow_nic;
	struct bip_nic *grow_local;
	/* conf->n flags: the host of a node that joined, learnt from bipload
	 * (nic.c); NULL until the first is asked. */
	unsigned char *host_learnt;
	int relay;               /* this process is a relay (fwd.c) */
	struct bip_conf *conf;
	struct bip_peer *peers;
	struct bip_nic *nics[4];
	int nnics;
	struct bip_tag tags[BIP_ALL_TAGS];
	struct bip_sreq *sreqs;
	struct bip_sreq *sfree;
	unsigned queued_sends;   /* sends waiting in peer queues */
	unsigned inflight_sends; /* sends queued or long, not complete */
	struct bip_counters counters;
	/* bipload --monitor's page (monitor.c), or NULL */
	struct bip_monitor_page *monitor;
	pthread_mutex_t lock;
	enum bip_wait_mode wait_mode;
	unsigned spin_limit;
	long sleep_max_ns;       /* BIP_SLEEP_MAX: the longest sleep (block mode) */
	int progress_idle;       /* the last bip_progress found nothing */
	/* the layers registered on reserved tags (bip_layer_register) */
	const struct bip_layer_ops *layer[BIP_INTERNAL_TAGS];
	const struct bip_layer_ops *fwd_layer; /* on BIP_TAG_FWD, with relays (fwd.c) */
	/* reserved tags (bit tag - NTAGS) whose layer refused a queued entry */
	unsigned layer_pending;
	unsigned kept_peers;     /* peers with kept arrivals */
	int flow_dirty;          /* some peer's hold_want differs from hold_told */
	int lost_peer;           /* a node the reliability layer gave up on, or -1 */
	/* A launcher that can end the job started it (boot.h): a peer whose
	 * process ends without saying goodbye ends the job (progress.c). */
	int watch_peers;
	/* A send lane has been used: the big lock's holders take the peers'
	 * send locks too (bip_peer_lock).  Set once, under the big lock. */
	int send_lanes;
	/* A waiter sleeps (nic.h's sleep_arm) once its wait has lasted this
	 * long: 0 in block mode, BIP_SLEEP_AFTER in auto mode when the local
	 * processes outnumber the processors; -1: it never sleeps. */
	long sleep_after_ns;
	long sleep_after_auto_ns; /* BIP_SLEEP_AFTER, for auto mode */
	int host_cpus;           /* processors of this host's processes (bip_host_cpus) */
	const char *host_cpus_why; /* where that number comes from */
	int host_procs;          /* processes on this host that want one: the job's,
				  * and lanai's firmware */
	int oversubscribed;      /* auto mode, and host_procs > host_cpus */
	/* One-sided operations (rma.c): the instance that exposes this
	 * process's memory, or NULL; requests waiting for room at it. */
	struct bip_nic *rma_nic;
	unsigned rma_queued;
};

extern struct bip_state bip_state;

/* Set by bip_relay_run before bip_init: this process is to be a relay
 * (bip_init refuses a relay node to a program, and the reverse). */
extern int bip_relay_wanted;

/*
 * Cookies of a layer's long receives carry BIP_LAYER_RECV and the index of
 * the reserved tag above the layer's own 56 bits, so that the NIC's
 * completion finds its way back.
 */
#define BIP_LAYER_RECV (1ull << 63)
#define BIP_LAYER_TAG_SHIFT 56

/* Completions of the long messages the forwarding layer posts (fwd.c)
 * carry this bit (and the packet's index): bip_core_send_done hands them
 * to the forwarding layer's send_done (bip_state.fwd_layer). */
#define BIP_FWD_SEND (1ull << 62)

/* 1 if node is a relay (fwd.c): no program's messages go to it. */
static inline int bip_is_relay(int node)
{
	return (unsigned)(node - bip_state.started) < (unsigned)bip_state.nrelays;
}

/* 1 if a waiter of this process may sleep: its peers must then wake it. */
static inline int bip_may_sleep(void)
{
	return bip_state.sleep_after_ns >= 0;
}

/* CLOCK_MONOTONIC in nanoseconds: the timers of the reliability layer, the
 * forwarding driver and the waits. */
static inline uint64_t bip_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* memcpy of a message: a zero-length one may come with a NULL buffer, which
 * memcpy itself does not allow. */
static inline void bip_copy(void *dst, const void *src, size_t len)
{
	if (bip_likely(len))
		memcpy(dst, src, len);
}

/*
 * --- locking: only once the process has more than one thread ---
 *
 * One lock guards the core, its drivers (nic.h) and the layers above it
 * (bip_layer_lock: the MPI shim takes it at each of its calls, so that a
 * layer's callbacks, which run inside bip_progress, see the layer as the
 * thread that holds it left it).  It is recursive through a per-thread
 * depth: a layer holding it calls the core, which takes it again.  Nobody
 * waits with it held: a waiter lets go of it entirely between its polls
 * (bip_lock_drop and bip_lock_retake around bip_wait_step), so that other
 * threads send, receive and poll meanwhile; a waiter that finds it taken
 * does not queue for it but looks at its own request (bip_lock_try): the
 * thread that holds it polls for everyone.
 *
 * Two fast lanes do not take it, so that threads working on different
 * peers or tags do not meet there:
 *
 *  - The send lane (proto.c, bip_send_lane): a short message to a peer
 *    whose NIC lets posts to different peers run at once (nic.h's
 *    post_per_peer: shm), when nothing of that peer waits in its queue,
 *    is posted under the peer's own send_lock only.  Whoever touches
 *    what the lane reads or what the NIC's post writes for that peer
 *    takes the send_lock too, inside the big lock: the peer's queue, the
 *    tags it holds, every post to it.  The send_lock is a leaf: nothing
 *    else is taken while it is held, except the big lock's holder taking
 *    another peer's from a layer's callback (hence it is recursive).
 *  - The receive lane (api.c): a receive, probe or get of a user tag with
 *    no receive posted (state idle) takes a message already in the tag's
 *    queue under the tag's own lock only.  The queue has one producer
 *    (progress, under the big lock) and one consumer (tagq.h), which is
 *    this lane while the state is idle, and progress once a receive is
 *    posted; the state moves out of idle only under both locks.  The API
 *    calls on a user tag take its lock inside the big one; progress never
 *    takes it, and reads and writes the state with bip_recv_state and
 *    bip_recv_set.
 *
 * Both lanes are taken only when the process has threads: a single
 * thread pays for neither.  The layers' tags never use them.
 */

extern __thread unsigned bip_lock_depth;

static inline int bip_lock(void)
{
	if (bip_likely(__libc_single_threaded))
		return 0;
	if (bip_lock_depth++ == 0)
		pthread_mutex_lock(&bip_state.lock);
	return 1;
}

static inline void bip_unlock(int locked)
{
	if (locked && --bip_lock_depth == 0)
		pthread_mutex_unlock(&bip_state.lock);
}

/* Let go of the lock however deep this thread holds it; returns the depth
 * for bip_lock_retake. */
static inline unsigned bip_lock_drop(void)
{
	unsigned depth = bip_lock_depth;

	if (depth) {
		bip_lock_depth = 0;
		pthread_mutex_unlock(&bip_state.lock);
	}
	return depth;
}

static inline void bip_lock_retake(unsigned depth)
{
	if (depth) {
		pthread_mutex_lock(&bip_state.lock);
		bip_lock_depth = depth;
	}
}

/* Take the lock back at depth if nobody holds it: 1, or 0 (not taken). */
static inline int bip_lock_try(unsigned depth)
{
	if (!depth)
		return 1;
	if (pthread_mutex_trylock(&bip_state.lock))
		return 0;
	bip_lock_depth = depth;
	return 1;
}

/*
 * A peer's send lock (the send lane); returns what bip_peer_unlock needs.
 * Taken only once a send lane has been used (bip_state.send_lanes, set
 * under the big lock by the first one): until then every send holds the
 * big lock, which is enough, and a program whose threads send only
 * through a layer (the MPI shim) never pays for it.
 */
static inline struct bip_peer *bip_peer_lock(struct bip_peer *p)
{
	/* Atomic: a lane's thread reads it outside the big lock while
	 * another lane's first send may be storing it (the same 1). */
	if (bip_likely(__libc_single_threaded) ||
	    !__atomic_load_n(&bip_state.send_lanes, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&p->send_lock);
	return p;
}

static inline void bip_peer_unlock(struct bip_peer *locked)
{
	if (locked)
		pthread_mutex_unlock(&locked->send_lock);
}

/* A user tag's receive lock (the receive lane), inside the big lock. */
static inline struct bip_tag *bip_tag_lock(struct bip_tag *t)
{
	if (bip_likely(__libc_single_threaded))
		return NULL;
	pthread_mutex_lock(&t->lock);
	return t;
}

static inline void bip_tag_unlock(struct bip_tag *locked)
{
	if (locked)
		pthread_mutex_unlock(&locked->lock);
}

/* The state of a tag's receive (enum bip_recv_state): the receive lane
 * reads it without the big lock. */
static inline int bip_recv_state(const struct bip_tag *t)
{
	return bip_load_acquire(&t->state);
}

static inline void bip_recv_set(struct bip_tag *t, int state)
{
	bip_store_release(&t->state, (uint8_t)state);
}

/* Add n to a counter of bip_get_counters: the lanes count without the big
 * lock, so a process with threads counts with an atomic add. */
static inline void bip_count(uint64_t *counter, uint64_t n)
{
	if (bip_likely(__libc_single_threaded))
		*counter += n;
	else
		__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

#endif /* BIP_STATE_H */
