/* SPDX-License-Identifier: MIT */
/*
 * fwd.c - messages between clusters, forwarded by the relays of the
 * gateway hosts (clusters of clusters, bipconf(5) "Clusters"; after
 * MetaMPICH's router processes).
 *
 * Who.  A node reaches the nodes of its own cluster directly, through the
 * drivers the core picks as always.  The relays are processes of the job
 * (the last conf->nrelays nodes of its file; bipload starts one on each
 * gateway host, bipgw(1)) that run no program of the user: each reaches
 * the nodes of its cluster and the relays at the other end of its host's
 * gateways.  Every other pair of nodes is joined by the forwarding driver
 * below, one instance per process, serving every node it cannot reach
 * directly.
 *
 * Nodes that join (bip_grow(3)).  They are numbered after the relays, and
 * a node's cluster is its host's (bipload says which host, nic.c).  The
 * layer above reaches one through this driver when it is in another
 * cluster (fwd_reach); a relay reaches one of its own cluster when the
 * first packet for it comes, and a node that joined reaches the relays of
 * its cluster when it first sends through them, both through the driver
 * inside the cluster (hop_reach).
 *
 * Why a process of its own: a relay that dies takes no rank with it, so a
 * job whose clusters are joined by a second gateway goes on through that
 * one; a relay forwards whatever the program does (computes, sleeps in a
 * wait); and it is a node like any other, so start-up, the address
 * exchange, the job's secret and the watch on dying processes serve it
 * unchanged.  A thread of an application process would have none of that.
 *
 * Reliability end to end.  The forwarding driver is a datagram driver
 * (rel.h): the reliability layer stands on top of it, so that a message
 * keeps BIP's order whatever way its pieces take, a long message goes in
 * fragments that the relays pipeline, each relay holding only the
 * fragments in flight, and what a dying relay held is sent again on
 * another path.  A fragment is 256 KiB here (BIP_REL_FRAG's default is
 * this driver's datagram, FWD_MTU, where other datagram drivers' is at
 * most 64 KiB): every fragment costs each hop a HEAD, a long message and
 * a wake-up of the processes on the way, and with four processes on two
 * processors 1 MiB crossed two relays at 218 to 232 MB/s in fragments
 * of 64 KiB, 406 to 439 MB/s in fragments of 256 KiB (namespace hosts,
 * BIP_WAIT=yield; 177 and 233 to 240 MB/s in block mode), and a message
 * of 256 KiB in 0.85 to 1.1 ms instead of 2.1.
 *
 * The paths of a peer are its routes through different gateways (path p
 * takes, at each crossing of the chain of clusters, the p-th gateway
 * joining those two clusters); the layer stripes fragments over them and
 * retires one that fails.
 *
 * Packets.  Every packet travels on the core's tag BIP_TAG_FWD, hop after
 * hop, from one node to the next over the drivers of the job, with a
 * header (struct fwd_hdr: origin, destination, path, the relays of its
 * route and the index of the next) in front of the reliability layer's
 * datagram:
 *
 *   INLINE  the header, the layer's header and its data as one short
 *           message, when they fit in BIP_SHORT_MAX bytes (which every
 *           driver carries): acknowledgements, small messages;
 *   HEAD    the header and the layer's header as a short message, then
 *           the data as the next long message on the tag from the same
 *           node, which nothing else on the tag comes between: moved from
 *           buffer to buffer by the drivers (zero copy at the origin, one
 *           copy into each relay, one at the destination).
 *
 * Queues.  What a relay holds ready to go on waits in the queue of its next
 * hop, in the order it became ready; what is still on its way in (a HEAD
 * whose data is being received), what is on its way out (a HEAD's data
 * being sent), and what is for this node wait in one list.  A round of
 * work takes each queue whose hop is not blocked, from its head, and stops
 * at the first packet the hop refuses: a hop that does not take anything
 * (a node that computes, or waits outside BIP) costs a round one look,
 * however many packets wait for it (4 MiB of acknowledgements is 35,000),
 * and so does a sleep's arming.
 *
 * Back-pressure.  A relay takes a packet only while what it holds for the
 * packet's next hop stays under BIP_FWD_BUFFER bytes; otherwise it refuses
 * it, the core keeps it and tells the previous hop to hold the tag (nic.h's
 * per-tag flow control), and so on back to the origin, whose layer keeps
 * the rest in its window.  Nothing is dropped for lack of room.  A relay's
 * room is counted per next hop: a packet waits only for the hop after it,
 * which is nearer its destination, so that two relays full of each
 * other's packets cannot wait for each other.
 *
 * Failures.  A node watches the relays its routes start with: when one
 * ends, the paths through it are down for the layer.  A relay whose next
 * hop has ended drops the packets for it and tells their origin (a NOTICE
 * packet back along the route), whose layer then takes that path down
 * too.  When no path is left, a wait on the peer fails after
 * BIP_RETRY_TIMEOUT with the layer's message, which names each path's
 * state and why.
 *
 * Everything in a packet is checked before it is used: the kind, the
 * lengths, that the relays are relays and this node is the one the header
 * says, and the layer checks its own header and data (CRC32C).
 *
 * Counting.  A node of the program counts a message to its destination
 * when its layer hands it over (proto.c); a relay counts each packet it
 * passes on to its next hop, in that peer's sent_bytes and sent_msgs, so
 * that bipload --monitor shows what crosses each gateway.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "error.h"
#include "fwd.h"
#include "progress.h"
#include "proto.h"
#include "rel.h"
#include "state.h"

#define FWD_MAGIC 0xb7
#define FWD_MAXHOPS 8           /* relays on a route, at most: 4 gateways */
#define FWD_MTU 262144          /* bytes of a datagram's data, at most: the layer's fragment */
#define FWD_BUFFER_DEFAULT (4u << 20) /* bytes a relay holds per next hop */
#define FWD_LIVE_NS 20000000L   /* between two looks at the relays: 20 ms */
#define FWD_CLOCK_POLLS 64      /* polls between two looks at the clock */
/* A packet with a long part is held in a buffer of FWD_ITEM_BIG bytes,
 * and up to FWD_POOL of them are kept when freed for the next ones: a
 * fragment taken from the heap and given back one after the other made
 * the heap grow and shrink at each (page faults, and a system call, on
 * both sides of every copy).  16 of 256 KiB: the default BIP_FWD_BUFFER. */
#define FWD_ITEM_BIG (sizeof(struct fwd_hdr) + BIP_REL_HDR_MAX + FWD_MTU)
#define FWD_POOL 16
_Static_assert(BIP_REL_MAXPATHS + 1 <= 8, "fwd_close keeps a bit per path in gone[]");

enum fwd_kind {
	FWD_INLINE = 1,
	FWD_HEAD = 2,
	FWD_NOTICE = 3,         /* a relay's word to an origin: path down */
	FWD_BYE = 4,            /* the origin's driver has closed (no data) */
};

struct fwd_hdr {
	uint8_t magic;
	uint8_t kind;
	uint8_t at;             /* hop[at] is the node it goes to now; nhops: dst */
	uint8_t nhops;
	uint8_t path;
	uint8_t pad[3];
	uint32_t src;           /* the origin */
	uint32_t dst;           /* the destination */
	uint32_t hlen;          /* bytes of the layer's header */
	uint32_t dlen;          /* bytes of its data */
	uint16_t hop[FWD_MAXHOPS];
};
_Static_assert(sizeof(struct fwd_hdr) == 40, "the header's size is part of the protocol");
_Static_assert(sizeof(struct fwd_hdr) + BIP_REL_HDR_MAX <= BIP_SHORT_MAX,
	       "a HEAD fits a short message");

/* A NOTICE's data: the relay that could not go on, and the one it could not reach. */
struct fwd_notice {
	uint32_t relay;
	uint32_t lost;
};

/* A route: the relays from one cluster to another on one path. */
struct fwd_route {
	int nhops;              /* 0: no such path */
	uint16_t hop[FWD_MAXHOPS];
};

enum item_state {
	IT_WAIT_DATA,           /* a HEAD: its long message is not announced yet */
	IT_ANNOUNCED,           /* announced: to be received */
	IT_RECEIVING,
	IT_READY,               /* here whole: to forward or to hand to the layer */
	IT_SENDING,             /* its long message is on the way to the next hop */
};

/* A packet a relay (or a destination) holds: [fwd_hdr][layer header][data]. */
struct fwd_item {
	struct fwd_item *next;
	enum item_state state;
	int from;               /* the node it came from */
	int to;                 /* the next hop, or this node */
	unsigned id;            /* its index in items[] (cookies) */
	uint64_t handle;        /* its long message's announcement */
	size_t total;
	unsigned char *buf;
};

struct fwd_peer_state {
	struct fwd_item *head;  /* a HEAD from this node waiting for its data */
	/* packets ready to go on to this node as next hop, oldest first */
	struct fwd_item *q, **qtail;
	int slot;               /* its index in fwd.active while q is not empty */
	size_t held;            /* bytes held for this node as next hop */
	int blocked;            /* this round: a post to it found no room */
	/* a HEAD went to this node and its long message did not fit yet:
	 * nothing else goes to it before */
	const void *owed_buf;
	size_t owed_len;
	uint64_t owed_cookie;
	int owed;
};

struct fwd {
	struct bip_nic nic;     /* the forwarding driver (endpoints) */
	struct bip_dgram dg;
	int mynode, numnodes, napp, relay;
	const struct bip_conf *conf;
	int npaths;
	/* routes from this node's cluster: [cluster * npaths + path] */
	struct fwd_route *routes;
	struct fwd_peer_state *peers;
	struct fwd_item *list, **tail; /* held packets not in a queue, in arrival order */
	int *active, nactive;   /* the next hops whose queue is not empty */
	struct fwd_item **items;
	unsigned nitems, nfree;
	unsigned char *pool[FWD_POOL]; /* free buffers of FWD_ITEM_BIG bytes */
	unsigned npool;
	unsigned *freeids;
	size_t buffer;          /* BIP_FWD_BUFFER */
	unsigned polls;
	uint64_t watch_at;      /* the next look at the relays (CLOCK_MONOTONIC ns) */
	unsigned char *relay_dead;   /* [node]: seen ended */
	unsigned char *gone;         /* [node]: bit 0, said goodbye (FWD_BYE); bit 1 + p,
				      * while closing: ours went on path p */
	int opened;             /* the driver is open (rel above it) */
	int closing;            /* bip_fwd_closing: poll the other drivers too */
	struct bip_nic *upper;  /* the reliability layer above this driver: the
				 * instance of every node reached through it */
	unsigned long long dropped;
	char desc[64];
};

static struct fwd fwd_state;
static struct fwd *F;

static int work(struct fwd *f);
static int room(struct fwd *f, int to, size_t total);

static const struct bip_layer_ops fwd_layer_ops;

static int relay_node(const struct fwd *f, int node)
{
	return bip_conf_is_relay(f->conf, node);
}

/* A node of the program: the file's before the relays, or one that
 * joined after them (bip_grow(3)). */
static int program_node(const struct fwd *f, uint32_t node)
{
	return node < (uint32_t)f->numnodes && !relay_node(f, (int)node);
}

/* A node that joined the job: after the file's nodes and relays.  Its
 * cluster is its host's, which bipload gives (bip_nic_learn_host). */
static int joined_node(const struct fwd *f, int node)
{
	return node >= f->conf->n - f->conf->grown;
}

/* Reached through the relays (a node that joined: by the cluster of its
 * host, once learnt). */
static int via(const struct fwd *f, int node)
{
	return !bip_conf_direct(f->conf, f->mynode, node);
}

/* --- routes --- */

/* The relays from cluster a to cluster b on path p (rt->nhops 0: none). */
static void route_compute(const struct bip_conf *conf, int a, int b, int p,
			  struct fwd_route *rt)
{
	int chain[FWD_MAXHOPS], n = bip_conf_cluster_path(conf, a, b, chain, FWD_MAXHOPS / 2);
	int i, c = a, distinct = 0;

	rt->nhops = 0;
	if (n <= 0)
		return;
	for (i = 0; i < n; i++) {
		const struct bip_conf_gateway *g0 = &conf->gateways[chain[i]];
		int next = g0->cluster[0] == c ? g0->cluster[1] : g0->cluster[0];
		int alt[64], nalt = 0, k, side, r0, r1;

		/* The gateways joining c and next whose two hosts have relays. */
		for (k = 0; k < conf->ngateways && nalt < 64; k++) {
			const struct bip_conf_gateway *g = &conf->gateways[k];

			if (!((g->cluster[0] == c && g->cluster[1] == next) ||
			      (g->cluster[1] == c && g->cluster[0] == next)))
				continue;
			if (bip_conf_relay_of(conf, g->host[0]) < 0 ||
			    bip_conf_relay_of(conf, g->host[1]) < 0)
				continue;
			alt[nalt++] = k;
		}
		if (!nalt) {
			rt->nhops = 0;
			return;
		}
		if (p > 0 && p < nalt)
			distinct = 1;
		{
			const struct bip_conf_gateway *g = &conf->gateways[alt[p % nalt]];

			side = g->cluster[0] == c ? 0 : 1;
			r0 = bip_conf_relay_of(conf, g->host[side]);
			r1 = bip_conf_relay_of(conf, g->host[!side]);
		}
		if (!rt->nhops || rt->hop[rt->nhops - 1] != r0)
			rt->hop[rt->nhops++] = (uint16_t)r0;
		rt->hop[rt->nhops++] = (uint16_t)r1;
		c = next;
	}
	/* Path p > 0 exists where some crossing has a p-th gateway. */
	if (p > 0 && !distinct)
		rt->nhops = 0;
}

static const struct fwd_route *route_to(const struct fwd *f, int node, int path)
{
	const struct fwd_route *rt;
	int c = f->conf->cluster_of[node];

	/* A node that joined on a host of no cluster has no route. */
	if (path < 0 || path >= f->npaths || c < 0)
		return NULL;
	rt = &f->routes[c * f->npaths + path];
	return rt->nhops ? rt : NULL;
}

/* --- items --- */

/* 1 if a packet of total bytes is held in a buffer of the pool. */
static int pooled(size_t total)
{
	return total > BIP_SHORT_MAX && total <= FWD_ITEM_BIG;
}

static struct fwd_item *item_new(struct fwd *f, size_t total)
{
	struct fwd_item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	if (pooled(total))
		it->buf = f->npool ? f->pool[--f->npool] : malloc(FWD_ITEM_BIG);
	else
		it->buf = malloc(total);
	if (!it->buf) {
		free(it);
		return NULL;
	}
	if (!f->nfree) {
		unsigned n = f->nitems ? 2 * f->nitems : 64, i;
		struct fwd_item **items = realloc(f->items, n * sizeof(*items));
		unsigned *freeids = items ? realloc(f->freeids, n * sizeof(*freeids)) : NULL;

		if (items)
			f->items = items;
		if (!freeids) {
			free(it->buf);
			free(it);
			return NULL;
		}
		f->freeids = freeids;
		for (i = n; i-- > f->nitems;)
			f->freeids[f->nfree++] = i;
		f->nitems = n;
	}
	it->id = f->freeids[--f->nfree];
	f->items[it->id] = it;
	it->total = total;
	return it;
}

static void item_free(struct fwd *f, struct fwd_item *it)
{
	f->peers[it->to].held -= it->total;
	f->items[it->id] = NULL;
	f->freeids[f->nfree++] = it->id;
	if (pooled(it->total) && f->npool < FWD_POOL)
		f->pool[f->npool++] = it->buf;
	else
		free(it->buf);
	free(it);
}

static void item_append(struct fwd *f, struct fwd_item *it)
{
	it->next = NULL;
	*f->tail = it;
	f->tail = &it->next;
}

/* Unlink it from the list (prev: the link that points at it). */
static void item_unlink(struct fwd *f, struct fwd_item **prev, struct fwd_item *it)
{
	*prev = it->next;
	if (f->tail == &it->next)
		f->tail = prev;
}

/* Unlink it wherever it is in the list, and free it. */
static void item_remove(struct fwd *f, struct fwd_item *it)
{
	struct fwd_item **prev = &f->list;

	while (*prev && *prev != it)
		prev = &(*prev)->next;
	if (*prev)
		item_unlink(f, prev, it);
	item_free(f, it);
}

/* Put it, ready to go on, at the end of its next hop's queue. */
static void hop_enqueue(struct fwd *f, struct fwd_item *it)
{
	struct fwd_peer_state *p = &f->peers[it->to];

	it->next = NULL;
	if (!p->q) {
		p->qtail = &p->q;
		p->slot = f->nactive;
		f->active[f->nactive++] = it->to;
	}
	*p->qtail = it;
	p->qtail = &it->next;
}

/* Take the first packet off the queue of hop to; the queue leaves the
 * active ones when it is empty (the last takes its slot). */
static struct fwd_item *hop_dequeue(struct fwd *f, int to)
{
	struct fwd_peer_state *p = &f->peers[to];
	struct fwd_item *it = p->q;

	p->q = it->next;
	if (!p->q) {
		int last = f->active[--f->nactive];

		f->active[p->slot] = last;
		f->peers[last].slot = p->slot;
		p->qtail = &p->q;
	}
	return it;
}

/* --- sending one hop --- */

static int hop_blocked(struct fwd *f, int to)
{
	const struct bip_peer *p = &bip_state.peers[to];

	return f->peers[to].owed || f->peers[to].blocked ||
	       (p->holds && bip_tag_held(p, BIP_TAG_FWD));
}

/* Post the long message a HEAD to to announced: 0 (posted or owed: the
 * HEAD is out, so the packet is on its way), or a negative errno. */
static int post_data(struct fwd *f, int to, const void *buf, size_t len, uint64_t cookie)
{
	struct bip_nic *nic = bip_state.peers[to].nic;
	int rc = nic->ops->post_long(nic, to, BIP_TAG_FWD, buf, len, cookie);

	if (rc == -EAGAIN) {
		f->peers[to].owed = 1;
		f->peers[to].owed_buf = buf;
		f->peers[to].owed_len = len;
		f->peers[to].owed_cookie = cookie;
		return 0;
	}
	return rc;
}

/* The long messages owed: first, before anything else goes to their node. */
static int push_owed(struct fwd *f)
{
	int i, n = 0;

	for (i = 0; i < f->numnodes; i++) {
		struct fwd_peer_state *p = &f->peers[i];
		struct bip_nic *nic;
		int rc;

		if (!p->owed)
			continue;
		nic = bip_state.peers[i].nic;
		rc = nic->ops->post_long(nic, i, BIP_TAG_FWD, p->owed_buf, p->owed_len,
					 p->owed_cookie);
		if (rc == -EAGAIN)
			continue;
		p->owed = 0;
		n++;
		if (rc < 0)
			bip_fwd_send_done(p->owed_cookie, rc);
	}
	return n;
}

/* A relay counts what it passes on to each next hop (bipload --monitor's
 * matrix, monitor.h); a node of the program has counted its message to
 * its destination already (proto.c). */
static void hop_count(int to, size_t bytes)
{
	if (bip_state.relay) {
		bip_count(&bip_state.peers[to].sent_msgs, 1);
		bip_count(&bip_state.peers[to].sent_bytes, bytes);
	}
}

/*
 * The driver of hop to in *nic_p: 0, -EAGAIN (not now: it is blocked for
 * this round), or -EHOSTUNREACH.  In a job that grows, a node that joined
 * (at a relay of its cluster), or a relay (at a node that joined), is
 * reached on first use through the driver inside the cluster
 * (bip_state.grow_local, init.c), as the core reaches any node that joined.
 */
static int hop_reach(struct fwd *f, int to, struct bip_nic **nic_p)
{
	struct bip_nic *g = bip_state.grow_local;
	char err[256];
	int rc;

	*nic_p = bip_state.peers[to].nic;
	if (bip_likely(*nic_p != NULL))
		return 0;
	rc = g ? g->ops->reach(g, to, err, sizeof(err)) : -EHOSTUNREACH;
	if (rc == 0) {
		bip_core_peer_joined(g, to);
		*nic_p = g;
		return 0;
	}
	if (rc == -EAGAIN)
		f->peers[to].blocked = 1;
	return rc == -EAGAIN ? -EAGAIN : -EHOSTUNREACH;
}

/*
 * Send a packet to the next hop to: h (its header, at already set), then
 * the layer's header and data.  Small: one short message; else a HEAD and
 * the data as a long message completing with cookie.  0, -EAGAIN, or a
 * negative errno.
 */
static int hop_send(struct fwd *f, int to, const struct fwd_hdr *h, const void *lhdr,
		    size_t hlen, const void *data, size_t len, uint64_t cookie)
{
	struct bip_nic *nic;
	unsigned char msg[BIP_SHORT_MAX];
	struct fwd_hdr hh = *h;
	int rc;

	if (hop_blocked(f, to))
		return -EAGAIN;
	rc = hop_reach(f, to, &nic);
	if (rc < 0)
		return rc;
	hh.kind = h->kind == FWD_NOTICE || h->kind == FWD_BYE ? h->kind :
		  sizeof(hh) + hlen + len <= BIP_SHORT_MAX ? FWD_INLINE : FWD_HEAD;
	hh.hlen = (uint32_t)hlen;
	hh.dlen = (uint32_t)len;
	memcpy(msg, &hh, sizeof(hh));
	bip_copy(msg + sizeof(hh), lhdr, hlen);
	if (hh.kind != FWD_HEAD) {
		bip_copy(msg + sizeof(hh) + hlen, data, len);
		rc = nic->ops->post_short(nic, to, BIP_TAG_FWD, msg, sizeof(hh) + hlen + len);
		if (rc == -EAGAIN)
			f->peers[to].blocked = 1;
		if (rc == 0)
			hop_count(to, sizeof(hh) + hlen + len);
		return rc == 0 ? 1 : rc;
	}
	rc = nic->ops->post_short(nic, to, BIP_TAG_FWD, msg, sizeof(hh) + hlen);
	if (rc == -EAGAIN)
		f->peers[to].blocked = 1;
	if (rc < 0)
		return rc;
	rc = post_data(f, to, data, len, cookie);
	if (rc == 0)
		hop_count(to, sizeof(hh) + hlen + len);
	return rc < 0 ? rc : 0;
}

/* --- the forwarding driver: datagrams to nodes of other clusters --- */

static int first_hop_alive(struct fwd *f, int relay)
{
	return !f->relay_dead[relay];
}

static int fwd_send(struct bip_nic *nic, int path, int dst, const void *hdr, size_t hlen,
		    const void *data, size_t len)
{
	struct fwd *f = F;
	const struct fwd_route *rt = route_to(f, dst, path);
	struct fwd_item *it;
	struct fwd_hdr h;
	size_t total;
	int rc;

	(void)nic;
	if (f->relay || !rt || !first_hop_alive(f, rt->hop[0]))
		return -ENETDOWN;
	memset(&h, 0, sizeof(h));
	h.magic = FWD_MAGIC;
	h.at = 0;
	h.nhops = (uint8_t)rt->nhops;
	h.path = (uint8_t)path;
	h.src = (uint32_t)f->mynode;
	h.dst = (uint32_t)dst;
	memcpy(h.hop, rt->hop, sizeof(h.hop));
	h.kind = FWD_INLINE;
	if (sizeof(h) + hlen + len <= BIP_SHORT_MAX) {
		rc = hop_send(f, rt->hop[0], &h, hdr, hlen, data, len, 0);
		if (rc == -EAGAIN)
			f->peers[rt->hop[0]].blocked = 0; /* the layer tries again itself */
		return rc < 0 ? rc : 0;
	}
	/*
	 * A HEAD and its data: the data goes from a copy of this driver's,
	 * freed once the first hop has it.  Not from the layer's buffer: the
	 * layer drops that at the acknowledgement, which a copy sent again
	 * may bring while this one still waits for the first hop (the shm
	 * driver's pipe reads it in this process, then).
	 */
	total = sizeof(h) + hlen + len;
	if (room(f, rt->hop[0], total) < 0 || hop_blocked(f, rt->hop[0]))
		return -EAGAIN;
	it = item_new(f, total);
	if (!it)
		return -EAGAIN;
	memcpy(it->buf, &h, sizeof(h));
	memcpy(it->buf + sizeof(h), hdr, hlen);
	memcpy(it->buf + sizeof(h) + hlen, data, len);
	it->from = f->mynode;
	it->to = rt->hop[0];
	f->peers[it->to].held += total;
	rc = hop_send(f, it->to, &h, it->buf + sizeof(h), hlen, it->buf + sizeof(h) + hlen, len,
		      BIP_FWD_SEND | it->id);
	if (rc < 0) {
		f->peers[it->to].blocked = 0;
		item_free(f, it);
		return rc;
	}
	it->state = IT_SENDING;
	item_append(f, it);
	return 0;
}

/* The gateway that hop k of rt crosses, "A:a1 - B:b1 (ofi)", or "". */
static void link_desc(const struct fwd *f, const struct fwd_route *rt, int k, char *buf,
		      size_t len)
{
	const struct bip_conf *c = f->conf;
	int j, g;

	buf[0] = '\0';
	for (j = k - 1; j <= k + 1; j += 2) {
		const char *ha, *hb;

		if (j < 0 || j >= rt->nhops ||
		    c->cluster_of[rt->hop[k]] == c->cluster_of[rt->hop[j]])
			continue;
		ha = c->nodes[rt->hop[k]].host;
		hb = c->nodes[rt->hop[j]].host;
		for (g = 0; g < c->ngateways; g++) {
			const struct bip_conf_gateway *gw = &c->gateways[g];

			if ((!strcmp(gw->host[0], ha) && !strcmp(gw->host[1], hb)) ||
			    (!strcmp(gw->host[0], hb) && !strcmp(gw->host[1], ha))) {
				snprintf(buf, len, "%s:%s - %s:%s (%s)",
					 c->clusters[gw->cluster[0]].name, gw->host[0],
					 c->clusters[gw->cluster[1]].name, gw->host[1], gw->driver);
				return;
			}
		}
	}
}

/* A relay that this node reaches directly ended: the paths through it are
 * down, for every peer (the layer's message names it and its link). */
static void relay_ended(struct fwd *f, int relay)
{
	char why[3 * BIP_CONF_HOSTLEN + 2 * BIP_CONF_NAMELEN + 96], link[2 * BIP_CONF_HOSTLEN + 2 * BIP_CONF_NAMELEN + 48];
	int i, p;

	if (f->relay_dead[relay])
		return;
	f->relay_dead[relay] = 1;
	if (!f->opened || f->relay)
		return; /* a relay sends nothing of its own: no path to take down */
	for (i = 0; i < bip_state.napp; i++) {
		if (relay_node(f, i) || !f->upper || bip_state.peers[i].nic != f->upper)
			continue;
		for (p = 0; p < f->npaths; p++) {
			const struct fwd_route *rt = route_to(f, i, p);
			int k;

			for (k = 0; rt && k < rt->nhops && rt->hop[k] != relay; k++)
				;
			if (!rt || k == rt->nhops)
				continue;
			link_desc(f, rt, k, link, sizeof(link));
			snprintf(why, sizeof(why), "the relay of gateway host %s (node %d) ended%s%s%s",
				 f->conf->nodes[relay].host, relay, link[0] ? ": link " : "", link,
				 link[0] ? " lost" : "");
			bip_rel_path_state(&f->nic, p, i, 0, why);
		}
	}
}

/* Look at the relays this node reaches directly (watch_due). */
static void watch_relays(struct fwd *f)
{
	int i;

	for (i = f->napp; i < f->napp + f->conf->nrelays; i++) {
		struct bip_nic *nic = bip_state.peers[i].nic;

		if (i == f->mynode || f->relay_dead[i] || via(f, i) || !nic)
			continue;
		if (!nic->ops->alive(nic, i))
			relay_ended(f, i);
	}
}

/* Every FWD_LIVE_NS, whatever the polls (a sleeping process polls little:
 * fwd_sleep_arm ends its sleeps at the next look). */
static void watch_due(struct fwd *f)
{
	uint64_t now;

	if (++f->polls % FWD_CLOCK_POLLS)
		return;
	now = bip_now_ns();
	if (now < f->watch_at)
		return;
	f->watch_at = now + FWD_LIVE_NS;
	watch_relays(f);
}

static int fwd_poll(struct bip_nic *nic)
{
	struct fwd *f = F;
	struct fwd_item **prev = &f->list, *it;
	int n = 0;

	(void)nic;
	if (f->closing) {
		int i;

		/* bip_progress no longer runs: the packets come through the
		 * other drivers, which close after this one. */
		for (i = 0; i < bip_state.nnics; i++)
			if (bip_state.nics[i]->dgram != &f->dg && bip_state.nics[i] != f->upper)
				n += bip_state.nics[i]->ops->poll(bip_state.nics[i]) > 0;
	}
	watch_due(f);
	n += work(f);
	/* Hand what arrived for this node to the layer, in order. */
	while ((it = *prev)) {
		const struct fwd_hdr *h = (const struct fwd_hdr *)it->buf;

		if (it->state != IT_READY || it->to != f->mynode) {
			prev = &it->next;
			continue;
		}
		item_unlink(f, prev, it);
		if (h->kind == FWD_BYE) {
			f->gone[h->src] = 1;
		} else if (h->kind == FWD_NOTICE) {
			struct fwd_notice nt;
			char why[2 * BIP_CONF_HOSTLEN + 96];

			memcpy(&nt, it->buf + sizeof(*h) + h->hlen, sizeof(nt));
			if (nt.relay < (uint32_t)f->numnodes && nt.lost < (uint32_t)f->numnodes) {
				snprintf(why, sizeof(why), "the relay of gateway host %s (node %u) "
					 "cannot reach node %u (host %s): it ended",
					 f->conf->nodes[nt.relay].host, nt.relay, nt.lost,
					 f->conf->nodes[nt.lost].host);
				bip_rel_path_state(&f->nic, h->path, (int)h->dst, 0, why);
			}
		} else {
			bip_rel_arrived(&f->nic, h->path, (int)h->src, it->buf + sizeof(*h),
					h->hlen + h->dlen);
		}
		item_free(f, it);
		n++;
	}
	return n;
}

static int fwd_alive(struct bip_nic *nic, int node)
{
	(void)nic;
	/* Its process is not watched from here: it said goodbye, or the
	 * layer gives up on it once nothing comes (BIP_RETRY_TIMEOUT). */
	return !F->gone[node];
}

/*
 * Passive (nic.h): what this driver brings comes through the drivers of
 * the hops, which wake the process.  Nothing to sleep over while a packet
 * waits for work() or for the layer.  A packet ready for a next hop that
 * refused it at the last round (no room in its queue, or the tag held),
 * and the long message of a HEAD that the hop took when it had no room
 * left for the data (owed), are no reason to stay awake: that hop's driver
 * wakes this process when it has room again (shm's "wanted" and boxes,
 * ofi's completions), and a hold ends with a message.
 */
static int fwd_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	const struct fwd_item *it;
	int i;

	(void)nic;
	if (!F->relay) {
		uint64_t now = bip_now_ns();

		if (now >= F->watch_at)
			return 0;
		if ((uint64_t)s->timeout_ns > F->watch_at - now)
			s->timeout_ns = (long)(F->watch_at - now);
		F->polls |= FWD_CLOCK_POLLS - 1; /* the next poll looks at the clock */
	}
	for (it = F->list; it; it = it->next)
		if (it->state == IT_ANNOUNCED ||
		    (it->state == IT_READY && (it->to == F->mynode || !hop_blocked(F, it->to))))
			return 0;
	for (i = 0; i < F->nactive; i++)
		if (!hop_blocked(F, F->active[i]))
			return 0;
	return 1;
}

/* Seconds fwd_close tries to post its goodbyes. */
#define FWD_BYE_WAIT 2.0

/*
 * The layer above has drained: say goodbye to every peer reached through
 * the relays, so that one still finishing does not wait for this node's
 * acknowledgements (its layer's linger) until BIP_RETRY_TIMEOUT, and let
 * the data of the HEADs sent leave (FWD_BYE_WAIT at most for both).
 * The goodbye goes on every path whose first hop lives: a relay further
 * on may have ended (this node watches only its first hops), and one
 * goodbye lost there kept the peer waiting for all of BIP_RETRY_TIMEOUT.
 * The peer takes the first and drops the others.
 */
static void fwd_close(struct bip_nic *nic)
{
	struct fwd *f = F;
	const struct fwd_item *it;
	uint64_t t0;
	int i, left;

	(void)nic;
	if (!f->opened)
		return;
	if (f->relay) {
		f->opened = 0; /* a relay sent nothing of its own */
		return;
	}
	t0 = bip_now_ns();
	do {
		left = 0;
		for (i = 0; i < bip_state.napp; i++) {
			const struct fwd_route *rt;
			struct fwd_hdr h;
			int p;

			/* gone[i]: bit 0, its goodbye came; bit 1 + p, ours went on
			 * path p (BIP_REL_MAXPATHS paths at most: they fit). */
			if (relay_node(f, i) || !f->upper || bip_state.peers[i].nic != f->upper ||
			    (f->gone[i] & 1))
				continue;
			for (p = 0; p < f->npaths; p++) {
				if (f->gone[i] >> (1 + p) & 1)
					continue;
				rt = route_to(f, i, p);
				if (!rt || f->relay_dead[rt->hop[0]])
					continue;
				memset(&h, 0, sizeof(h));
				h.magic = FWD_MAGIC;
				h.kind = FWD_BYE;
				h.nhops = (uint8_t)rt->nhops;
				h.path = (uint8_t)p;
				h.src = (uint32_t)f->mynode;
				h.dst = (uint32_t)i;
				memcpy(h.hop, rt->hop, sizeof(h.hop));
				f->peers[rt->hop[0]].blocked = 0;
				if (hop_send(f, rt->hop[0], &h, NULL, 0, NULL, 0, 0) > 0)
					f->gone[i] |= (unsigned char)(2u << p);
				else
					left = 1;
			}
		}
		/* And the data of the HEADs still on their way to the first
		 * hop (copies sent again, mostly): a relay reading it from a
		 * process that has ended would drop it, and say so. */
		for (it = f->list; it && !left; it = it->next)
			left = it->state == IT_SENDING;
		if (left)
			for (i = 0; i < bip_state.nnics; i++)
				if (bip_state.nics[i]->dgram != &f->dg && bip_state.nics[i] != f->upper)
					bip_state.nics[i]->ops->poll(bip_state.nics[i]);
	} while (left && (double)(bip_now_ns() - t0) * 1e-9 < FWD_BYE_WAIT);
	f->opened = 0;
}

/*
 * A node that joined the job (nic.h's reach; the layer above asks, rel.c):
 * reached through the relays when its host is in another cluster than this
 * node's.  Its host comes from bipload, which knows only the nodes that
 * have started: -EAGAIN until then.  The relays reach it in their turn
 * when the first packet for it comes (hop_reach).
 */
static int fwd_reach(struct bip_nic *nic, int node, char *err, size_t errlen)
{
	struct fwd *f = F;

	(void)nic;
	if (!program_node(f, (uint32_t)node) || node == f->mynode) {
		snprintf(err, errlen, "node %d is %s", node,
			 node == f->mynode ? "this node" : "not a node of the program");
		return -EINVAL;
	}
	if (joined_node(f, node)) {
		bip_nic_learn_host(node);
		if (!bip_nic_host_known(node))
			return -EAGAIN;
	}
	if (!via(f, node)) {
		snprintf(err, errlen, "node %d (host %s) is in this node's cluster: not reached "
			 "through the relays", node, f->conf->nodes[node].host);
		return -ENOTSUP;
	}
	if (!route_to(f, node, 0)) {
		snprintf(err, errlen, "node %d joined on host %s, %s", node,
			 f->conf->nodes[node].host, f->conf->cluster_of[node] < 0 ?
			 "which is in no cluster of the job" :
			 "and no route through the gateways' relays reaches its cluster");
		return -EHOSTUNREACH;
	}
	return 0;
}

/* Never called: a passive instance is not waited on. */
static void fwd_sleep_wait(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	(void)nic;
	(void)s;
}

static const struct bip_dgram_ops fwd_dgram_ops = {
	.send = fwd_send,
	.poll = fwd_poll,
	.alive = fwd_alive,
	.reach = fwd_reach,
	.sleep_arm = fwd_sleep_arm,
	.sleep_wait = fwd_sleep_wait,
	.close = fwd_close,
};

static int fwd_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 1;
}

static int fwd_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct fwd *f = F;

	if (!f) {
		snprintf(job->err, job->errlen, "forwarding: the job has no relay");
		return -EINVAL;
	}
	f->nic.ops = &bip_fwd_ops;
	f->nic.max_short = BIP_SHORT_MAX;
	snprintf(f->desc, sizeof(f->desc), "fwd (%d path%s)", f->npaths, f->npaths > 1 ? "s" : "");
	f->nic.desc = f->desc;
	f->dg = (struct bip_dgram){ .ops = &fwd_dgram_ops, .npaths = f->npaths, .mtu = FWD_MTU,
				    .copy_eager = 1, .frag = FWD_MTU };
	f->nic.dgram = &f->dg;
	f->nic.passive = 1;
	f->opened = 1;
	*nic_p = &f->nic;
	return 0;
}

/* The core never calls the message ops of a datagram driver. */
const struct bip_nic_ops bip_fwd_ops = {
	.name = "fwd",
	.network = 0,
	.available = fwd_available,
	.open = fwd_open,
	.poll = fwd_poll,
	.alive = fwd_alive,
	.close = fwd_close,
};

/* --- arrivals on BIP_TAG_FWD (a layer of the core's own) --- */

/* Whether node's process still runs, as the driver that reaches it sees. */
static int hop_alive(int node)
{
	struct bip_nic *nic = bip_state.peers[node].nic;

	return !nic || nic->ops->alive(nic, node);
}

static void drop(struct fwd *f, int from, const char *what)
{
	if (!f->dropped++)
		bip_error("bip_progress", "forwarding: a packet from node %d dropped: %s "
			  "(later ones are only counted)", from, what);
}

/* The node after this one on h's route, or -1 (h is wrong for this node). */
static int next_of(const struct fwd *f, const struct fwd_hdr *h, int from)
{
	int k;

	if (h->magic != FWD_MAGIC || h->nhops < 1 || h->nhops > FWD_MAXHOPS ||
	    h->at > h->nhops || !program_node(f, h->src) || !program_node(f, h->dst) ||
	    h->path >= f->npaths)
		return -1;
	for (k = 0; k < h->nhops; k++)
		if (!relay_node(f, h->hop[k]))
			return -1;
	if (h->kind == FWD_NOTICE) {
		/* Back along the route: it goes to hop[at - 1], then to src at
		 * 0, and comes from hop[at]. */
		if (h->at < 1 || h->hop[h->at - 1] != f->mynode || h->hop[h->at] != from)
			return -1;
		return h->at >= 2 ? h->hop[h->at - 2] : (int)h->src;
	}
	if (h->at == h->nhops || h->hop[h->at] != f->mynode ||
	    (h->at ? h->hop[h->at - 1] : (int)h->src) != from)
		return -1;
	return h->at + 1 < h->nhops ? h->hop[h->at + 1] : (int)h->dst;
}

/*
 * A packet for this node (its destination) or one to go on: where to, or
 * -1 with why.  A destination takes only what its last relay brings.
 */
static int destination(struct fwd *f, const struct fwd_hdr *h, int from, const char **why)
{
	int to;

	*why = "its header is wrong for this node";
	if (h->magic != FWD_MAGIC || h->nhops < 1 || h->nhops > FWD_MAXHOPS)
		return -1;
	if (h->kind == FWD_NOTICE && h->at == 0 && (int)h->src == f->mynode &&
	    relay_node(f, from) && h->path < f->npaths && h->hop[0] == from)
		return f->mynode;
	if (h->kind != FWD_NOTICE && h->at == h->nhops && (int)h->dst == f->mynode &&
	    h->hop[h->nhops - 1] == from && program_node(f, h->src) && h->path < f->npaths) {
		/* The cluster of a node that joined is its host's. */
		bip_nic_learn_host((int)h->src);
		if (via(f, (int)h->src))
			return f->mynode;
	}
	if (!f->relay)
		return -1;
	to = next_of(f, h, from);
	if (to < 0)
		return -1;
	if (joined_node(f, to))
		bip_nic_learn_host(to);
	if (via(f, to) || to == f->mynode) {
		*why = "its next hop is not a neighbour of this relay";
		return -1;
	}
	return to;
}

/* Room for total more bytes toward to: 0 or -EAGAIN (at least one packet). */
static int room(struct fwd *f, int to, size_t total)
{
	struct fwd_peer_state *p = &f->peers[to];

	return p->held && p->held + total > f->buffer ? -EAGAIN : 0;
}

static int fwd_short_arrived(int from, int tag, const void *data, size_t len)
{
	struct fwd *f = F;
	struct fwd_hdr h;
	struct fwd_item *it;
	const char *why;
	size_t want;
	int to;

	(void)tag;
	if (len < sizeof(h)) {
		drop(f, from, "shorter than its header");
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	want = sizeof(h) + h.hlen + (h.kind == FWD_HEAD ? 0 : h.dlen);
	if ((h.kind != FWD_INLINE && h.kind != FWD_HEAD && h.kind != FWD_NOTICE &&
	     h.kind != FWD_BYE) || (h.kind == FWD_BYE && (h.hlen || h.dlen)) ||
	    h.hlen > BIP_REL_HDR_MAX || h.dlen > FWD_MTU || want != len ||
	    (h.kind == FWD_HEAD && !h.dlen) ||
	    (h.kind == FWD_NOTICE && h.dlen != sizeof(struct fwd_notice))) {
		drop(f, from, "its lengths do not hold");
		return 0;
	}
	to = destination(f, &h, from, &why);
	if (to < 0) {
		drop(f, from, why);
		return 0;
	}
	if (room(f, to, sizeof(h) + h.hlen + h.dlen) < 0)
		return -EAGAIN;
	it = item_new(f, sizeof(h) + h.hlen + h.dlen);
	if (!it)
		return -EAGAIN;
	it->from = from;
	it->to = to;
	f->peers[to].held += it->total;
	memcpy(it->buf, data, len);
	if (h.kind == FWD_HEAD) {
		if (f->peers[from].head) {
			drop(f, from, "a HEAD without its data");
			f->peers[from].head = NULL; /* stays listed: freed at close */
		}
		it->state = IT_WAIT_DATA;
		f->peers[from].head = it;
	} else {
		it->state = IT_READY;
		if (to != f->mynode) {
			hop_enqueue(f, it);
			return 0;
		}
	}
	item_append(f, it);
	return 0;
}

static int fwd_long_arrived(int from, int tag, size_t len, uint64_t handle)
{
	struct fwd *f = F;
	struct fwd_item *it = f->peers[from].head;

	(void)tag;
	if (!it || len != ((const struct fwd_hdr *)it->buf)->dlen) {
		/* Received nowhere: its sender's long send never completes. */
		drop(f, from, "a long message without its HEAD");
		return 0;
	}
	f->peers[from].head = NULL;
	it->handle = handle;
	it->state = IT_ANNOUNCED;
	return 0;
}

/* The layer's sends on BIP_TAG_FWD complete at once; what completes later
 * are the long messages it posts itself (BIP_FWD_SEND, post_data), which
 * bip_core_send_done hands here. */
static void fwd_layer_send_done(uint64_t cookie, int status)
{
	if (cookie & BIP_FWD_SEND)
		bip_fwd_send_done(cookie, status);
}

static void fwd_recv_done(uint64_t cookie, int status)
{
	struct fwd *f = F;
	unsigned id = (unsigned)(cookie & 0xffffffffu);
	struct fwd_item *it = id < f->nitems ? f->items[id] : NULL;

	if (!it || it->state != IT_RECEIVING)
		return;
	it->state = IT_READY;
	if (status < 0) {
		drop(f, it->from, "its data could not be received");
		item_remove(f, it);
	}
}

static const struct bip_layer_ops fwd_layer_ops = {
	.short_arrived = fwd_short_arrived,
	.long_arrived = fwd_long_arrived,
	.send_done = fwd_layer_send_done,
	.recv_done = fwd_recv_done,
};

void bip_fwd_send_done(uint64_t cookie, int status)
{
	struct fwd *f = F;
	unsigned id = (unsigned)(cookie & 0xffffffffu);

	(void)status;
	if (!f || id >= f->nitems || !f->items[id] ||
	    f->items[id]->state != IT_SENDING)
		return;
	item_remove(f, f->items[id]);
}

/* A relay cannot reach it->to any more: tell the origin of the packet
 * (a NOTICE back along its route), whose layer takes the path down. */
static void unreachable(struct fwd *f, struct fwd_item *it)
{
	const struct fwd_hdr *h = (const struct fwd_hdr *)it->buf;
	struct fwd_notice nt = { .relay = (uint32_t)f->mynode, .lost = (uint32_t)it->to };
	struct fwd_hdr n;

	if (h->kind == FWD_NOTICE)
		return;
	/* This relay is hop[h->at]: the NOTICE goes to hop[at - 1], or to
	 * the origin at 0 (next_of). */
	n = *h;
	n.kind = FWD_NOTICE;
	hop_send(f, n.at ? n.hop[n.at - 1] : (int)n.src, &n, NULL, 0, &nt, sizeof(nt), 0);
}

/*
 * Send on what waits for hop to, oldest first, until the hop refuses one
 * (or is blocked already: nothing is looked at).  The count of packets
 * that moved.
 */
static int hop_work(struct fwd *f, int to)
{
	struct fwd_peer_state *p = &f->peers[to];
	struct fwd_item *it;
	int n = 0, rc;

	while ((it = p->q)) {
		struct fwd_hdr *h = (struct fwd_hdr *)it->buf;

		/* What goes to a node that said goodbye (its last packets
		 * cross ours) is dropped without a word. */
		if (h->kind == FWD_BYE)
			f->gone[h->src] = 1;
		if (program_node(f, (uint32_t)to) && f->gone[to] && h->kind != FWD_BYE) {
			item_free(f, hop_dequeue(f, to));
			continue;
		}
		if (f->relay_dead[to]) {
			unreachable(f, it);
			item_free(f, hop_dequeue(f, to));
			continue;
		}
		if (hop_blocked(f, to))
			break;
		if (h->kind == FWD_NOTICE) {
			if (h->at)
				h->at--;
		} else {
			h->at++;
		}
		rc = hop_send(f, to, h, it->buf + sizeof(*h), h->hlen,
			      it->buf + sizeof(*h) + h->hlen, h->dlen, BIP_FWD_SEND | it->id);
		if (rc == -EAGAIN) {
			if (h->kind == FWD_NOTICE)
				h->at++;
			else
				h->at--;
			break;
		}
		n++;
		hop_dequeue(f, to);
		if (rc == 0) {
			/* Its long message is on the way: freed at its end. */
			it->state = IT_SENDING;
			item_append(f, it);
			continue;
		}
		/* 1: it went whole (a short message).  Else refused: by a
		 * node of the program whose process has ended (before its
		 * goodbye came through here, or with a goodbye crossing this
		 * one), where nobody waits for what it would have got, or
		 * dropped, and said once. */
		if (rc < 0) {
			if (program_node(f, (uint32_t)to) && !hop_alive(to))
				f->dropped++;
			else
				drop(f, it->from, "the next hop refused it");
		}
		item_free(f, it);
	}
	return n;
}

/* Receive what was announced, move what is here whole to the queue of its
 * next hop, and send on what the queues hold. */
static int work(struct fwd *f)
{
	struct fwd_item **prev = &f->list, *it;
	int n = push_owed(f), i, rc;

	for (i = 0; i < f->numnodes; i++)
		f->peers[i].blocked = 0;
	while ((it = *prev)) {
		struct fwd_hdr *h = (struct fwd_hdr *)it->buf;
		struct bip_nic *nic;

		if (it->state == IT_ANNOUNCED) {
			nic = bip_state.peers[it->from].nic;
			rc = nic->ops->post_long_recv(nic, it->handle, it->buf + sizeof(*h) + h->hlen,
						      h->dlen, BIP_LAYER_RECV |
						      ((uint64_t)(BIP_TAG_FWD - NTAGS)
						       << BIP_LAYER_TAG_SHIFT) | it->id);
			it->state = rc == 1 ? IT_READY : IT_RECEIVING;
			n++;
			if (rc < 0) {
				drop(f, it->from, "its data could not be received");
				item_unlink(f, prev, it);
				item_free(f, it);
				continue;
			}
		}
		if (it->state == IT_READY && it->to != f->mynode) {
			/* On its way at once, before the data of the packets
			 * behind it is received: the next hop starts on it
			 * while this one copies those (the pipeline). */
			item_unlink(f, prev, it);
			hop_enqueue(f, it);
			n += hop_work(f, it->to);
			continue;
		}
		prev = &it->next;
	}
	/* Backwards: a queue that empties takes the last slot's place. */
	for (i = f->nactive; i-- > 0;)
		n += hop_work(f, f->active[i]);
	return n;
}

int bip_fwd_progress(void)
{
	if (!F)
		return 0;
	if (F->relay)
		watch_due(F);
	return work(F);
}

/* --- set-up --- */

int bip_fwd_setup(int mynode, const struct bip_conf *conf, char *err, size_t errlen)
{
	struct fwd *f = &fwd_state;
	const char *s = getenv("BIP_FWD_BUFFER");
	int c, p, mycl;

	memset(f, 0, sizeof(*f));
	f->mynode = mynode;
	f->numnodes = conf->n;
	f->napp = bip_conf_app_nodes(conf);
	f->conf = conf;
	f->relay = relay_node(f, mynode);
	f->tail = &f->list;
	f->buffer = FWD_BUFFER_DEFAULT;
	if (s && *s) {
		char *end;
		double v = strtod(s, &end);

		if (*end || end == s || !(v >= 65536 + 256 && v <= (double)(1u << 30))) {
			snprintf(err, errlen, "BIP_FWD_BUFFER=%s: expected a number of bytes from "
				 "%d to %u", s, 65536 + 256, 1u << 30);
			return -EINVAL;
		}
		f->buffer = (size_t)v;
	}
	mycl = conf->cluster_of[mynode];
	if (mycl < 0) {
		snprintf(err, errlen, "node %d runs on host %s, which is in no cluster of the job",
			 mynode, conf->nodes[mynode].host);
		return -EHOSTUNREACH;
	}
	/* Paths: as many as the most gateways side by side on some crossing. */
	f->npaths = 1;
	for (c = 0; c < conf->nclusters; c++)
		for (p = 1; p < BIP_REL_MAXPATHS; p++) {
			struct fwd_route rt;

			route_compute(conf, mycl, c, p, &rt);
			if (rt.nhops && p + 1 > f->npaths)
				f->npaths = p + 1;
		}
	f->routes = calloc((size_t)conf->nclusters * (size_t)f->npaths, sizeof(*f->routes));
	f->peers = calloc((size_t)conf->n, sizeof(*f->peers));
	f->relay_dead = calloc((size_t)conf->n, 1);
	f->gone = calloc((size_t)conf->n, 1);
	f->active = calloc((size_t)conf->n, sizeof(*f->active));
	if (!f->routes || !f->peers || !f->relay_dead || !f->gone || !f->active) {
		bip_fwd_close();
		snprintf(err, errlen, "forwarding: out of memory");
		return -ENOMEM;
	}
	for (c = 0; c < conf->nclusters; c++)
		for (p = 0; p < f->npaths && c != mycl; p++)
			route_compute(conf, mycl, c, p, &f->routes[c * f->npaths + p]);
	F = f;
	bip_state.fwd_layer = &fwd_layer_ops;
	bip_progress_set_relay(bip_fwd_progress);
	return 0;
}

void bip_fwd_closing(void)
{
	if (!F)
		return;
	F->closing = 1;
}

void bip_fwd_upper(struct bip_nic *upper)
{
	if (F)
		F->upper = upper;
}

int bip_fwd_holding(void)
{
	return F && (F->list || F->nactive);
}

unsigned long long bip_fwd_dropped(void)
{
	return F ? F->dropped : 0;
}

int bip_fwd_reaches(int node)
{
	return F && route_to(F, node, 0) != NULL;
}

void bip_fwd_close(void)
{
	struct fwd *f = &fwd_state;
	struct fwd_item *it;
	int i;

	while ((it = f->list)) {
		f->list = it->next;
		free(it->buf);
		free(it);
	}
	for (i = 0; f->peers && i < f->numnodes; i++)
		while ((it = f->peers[i].q)) {
			f->peers[i].q = it->next;
			free(it->buf);
			free(it);
		}
	free(f->active);
	free(f->routes);
	free(f->peers);
	free(f->relay_dead);
	free(f->gone);
	free(f->items);
	free(f->freeids);
	while (f->npool)
		free(f->pool[--f->npool]);
	if (F)
		bip_state.fwd_layer = NULL;
	memset(f, 0, sizeof(*f));
	F = NULL;
}
