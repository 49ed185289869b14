/* SPDX-License-Identifier: MIT */
/*
 * ofi_dgram.c - the udp driver: peers through libfabric datagram endpoints
 * (FI_EP_DGRAM, FI_MSG), under the reliability layer (rel.h).
 *
 * BIP_NIC=udp.  The provider is libfabric's udp one (plain UDP/IP, so
 * that BIP runs between any hosts of an IP network), or the datagram
 * provider BIP_OFI_PROVIDER names.  Nothing of it is reliable: datagrams
 * may be lost, duplicated or reordered, and the layer repairs that; the
 * driver only moves them, and it is never chosen by itself.
 *
 * One datagram is the layer's header then its data, at most the
 * provider's max_msg_size bytes (1472 for udp), so that the layer's
 * fragments are max_msg_size - BIP_REL_HDR_MAX bytes.  A datagram goes out
 * with fi_inject: the provider copies it before the call returns, there
 * is no send completion, and a full socket is -EAGAIN (the layer sends
 * again later).  Datagrams land in a pool of receive buffers; each
 * completion names its source address (FI_SOURCE), which is mapped back to
 * a node through the addresses exchanged at start-up: a datagram from an
 * address not in the job, or empty, is dropped and counted, and the layer
 * checks everything in the others.
 *
 * The layer's window is held to what the receiving socket can take
 * (udp_window): datagrams beyond it would be dropped by the receiver's
 * kernel whenever its process is not running.
 *
 * When a waiter may sleep (BIP_WAIT=block, or auto with more local
 * processes than processors) the completion queue has a wait descriptor
 * where the provider offers one, and a waiter sleeps on it (ofi_wait.c), below the
 * layer's own sleep (rel.c: never past its next timer).
 *
 * Start-up: open the endpoint, post the pool, then exchange the endpoint
 * addresses through the start-up all-gather (boot.h) and insert every
 * node's, in node order.
 *
 * Faults, since the machine may have no netem: BIP_UDP_LOSS, BIP_UDP_CORRUPT
 * and BIP_UDP_DUPLICATE (percentages of the datagrams sent) drop one, flip
 * one bit of it (in a copy: the layer's data is untouched), or send it
 * twice, below the layer; BIP_UDP_SEED seeds the generator (each node
 * draws from seed ^ node).  The counts are printed at close when a knob is
 * set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>

#include "conf.h"
#include "core.h"
#include "boot.h"
#include "oob.h"
#include "nicsleep.h"
#include "ofi.h"
#include "rel.h"

#define OFI_VERSION FI_VERSION(1, 9)
#define UDP_RX_BUFFERS 512 /* receive buffers posted */
#define UDP_MSG_MAX 65536  /* bytes of a datagram, at most, whatever the provider says */

struct udp_rx {
	struct fi_context2 ctx;
	uint8_t *buf;
};

struct udp_peer {
	fi_addr_t addr;
	int served;
	int pid;
	int same_kernel; /* its pid can be checked here */
};

/* What each node tells the others at start-up. */
struct udp_blob {
	char prov[64];
	char boot_id[40];
	uint64_t pidns;
	uint32_t pid;
	uint32_t addrlen;
	uint64_t max_msg;
	uint8_t addr[160];
};

struct bip_udp {
	struct bip_nic nic;
	struct bip_dgram dg;
	int mynode, numnodes;
	char prov[64];
	char desc[256];
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	int cq_fd;           /* block mode: the queue's wait descriptor, or -1 */
	char nosleep[120];   /* block mode: why the queue has none */
	struct bip_dgram_ops dgops; /* bip_udp_dgram_ops, with sleep when cq_fd is set */
	struct fid_av *av;
	struct fid_ep *ep;
	size_t msg_max; /* bytes of a datagram */
	struct udp_peer *peers;
	struct udp_rx rx[UDP_RX_BUFFERS];
	uint8_t *rxmem;
	uint8_t *tx; /* a datagram being put together */
	/* faults (per million) and counts */
	uint32_t loss, corrupt, duplicate;
	int knobs;
	uint64_t rng;
	uint64_t lost, corrupted, duplicated, strangers, errors;
};

static inline struct bip_udp *udp_of(struct bip_nic *nic)
{
	return (struct bip_udp *)nic;
}

/* Every entry of a datagram provider with FI_MSG (and FI_SOURCE). */
static struct fi_info *udp_getinfo(const char *prov, int *rc_p)
{
	struct fi_info *hints = fi_dupinfo(NULL), *list = NULL;
	int rc;

	if (!hints) {
		*rc_p = -ENOMEM;
		return NULL;
	}
	hints->caps = FI_MSG | FI_SOURCE;
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(prov);
	rc = hints->fabric_attr->prov_name ? fi_getinfo(OFI_VERSION, NULL, NULL, 0, hints, &list)
					   : -ENOMEM;
	fi_freeinfo(hints);
	*rc_p = rc;
	return rc == 0 ? list : NULL;
}

static const char *udp_provider(void)
{
	const char *want = getenv("BIP_OFI_PROVIDER");

	return want && *want ? want : "udp";
}

static int udp_available(char *why, size_t len)
{
	struct fi_info *list;
	int rc;

	if (bip_ofi_load(why, len) < 0)
		return 0;
	list = udp_getinfo(udp_provider(), &rc);
	if (!list) {
		snprintf(why, len, "libfabric has no datagram provider %s with FI_MSG here (%s)",
			 udp_provider(), fi_strerror(-rc));
		return 0;
	}
	snprintf(why, len, "provider: %s", list->fabric_attr->prov_name);
	fi_freeinfo(list);
	return 1;
}

/* --- fault knobs --- */

static int env_percent(const char *name, uint32_t *ppm, const struct bip_nic_job *job)
{
	const char *s = getenv(name);
	char *end;
	double v;

	*ppm = 0;
	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || v < 0 || v > 100) {
		snprintf(job->err, job->errlen, "%s=%s: expected a percentage from 0 to 100 "
			 "(e.g. 1 or 0.5%%)", name, s);
		return -EINVAL;
	}
	*ppm = (uint32_t)(v * 10000.0 + 0.5);
	return 1;
}

static int udp_knobs(struct bip_udp *u, const struct bip_nic_job *job)
{
	const char *seed = getenv("BIP_UDP_SEED");
	int a, b, c;
	char *end;

	a = env_percent("BIP_UDP_LOSS", &u->loss, job);
	b = a < 0 ? a : env_percent("BIP_UDP_CORRUPT", &u->corrupt, job);
	c = b < 0 ? b : env_percent("BIP_UDP_DUPLICATE", &u->duplicate, job);
	if (a < 0 || b < 0 || c < 0)
		return -EINVAL;
	u->knobs = a || b || c;
	u->rng = 1;
	if (seed && *seed) {
		u->rng = strtoull(seed, &end, 0);
		if (end == seed || *end) {
			snprintf(job->err, job->errlen, "BIP_UDP_SEED=%s: expected a number", seed);
			return -EINVAL;
		}
	}
	u->rng ^= (uint64_t)job->mynode * 0x9e3779b97f4a7c15ull;
	return 0;
}

/* splitmix64, as the simulated wire's. */
static uint64_t rng_next(uint64_t *rng)
{
	uint64_t z = (*rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int hits(struct bip_udp *u, uint32_t ppm)
{
	return ppm && rng_next(&u->rng) % 1000000u < ppm;
}

/* --- start-up --- */

static void udp_close_endpoint(struct bip_udp *u)
{
	if (u->ep)
		fi_close(&u->ep->fid);
	if (u->av)
		fi_close(&u->av->fid);
	if (u->cq)
		fi_close(&u->cq->fid);
	if (u->domain)
		fi_close(&u->domain->fid);
	if (u->fabric)
		fi_close(&u->fabric->fid);
	u->ep = NULL;
	u->av = NULL;
	u->cq = NULL;
	u->cq_fd = -1;
	u->domain = NULL;
	u->fabric = NULL;
}

static int udp_open_endpoint(struct bip_udp *u, const struct bip_nic_job *job)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .size = 0 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *info;
	const char *what;
	int rc;

	info = udp_getinfo(udp_provider(), &rc);
	if (!info) {
		snprintf(job->err, job->errlen, "udp: libfabric has no datagram provider %s here "
			 "(%s)", udp_provider(), fi_strerror(-rc));
		return -ENODEV;
	}
	snprintf(u->prov, sizeof(u->prov), "%s", info->fabric_attr->prov_name);
	u->msg_max = info->ep_attr->max_msg_size;
	if (u->msg_max > UDP_MSG_MAX)
		u->msg_max = UDP_MSG_MAX;
	what = "the provider's datagrams are too small";
	rc = -EINVAL;
	if (u->msg_max < BIP_REL_HDR_MAX + BIP_SHORT_MAX)
		goto fail;
	what = "fi_fabric";
	rc = fi_fabric(info->fabric_attr, &u->fabric, NULL);
	if (rc)
		goto fail;
	what = "fi_domain";
	rc = fi_domain(u->fabric, info, &u->domain, NULL);
	if (rc)
		goto fail;
	what = "fi_cq_open";
	rc = bip_ofi_cq_open(u->domain, &cq_attr, &u->cq, &u->cq_fd, u->nosleep,
			     sizeof(u->nosleep));
	if (rc)
		goto fail;
	what = "fi_av_open";
	rc = fi_av_open(u->domain, &av_attr, &u->av, NULL);
	if (rc)
		goto fail;
	what = "fi_endpoint";
	rc = fi_endpoint(u->domain, info, &u->ep, NULL);
	if (rc)
		goto fail;
	what = "fi_ep_bind";
	rc = fi_ep_bind(u->ep, &u->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_ep_bind(u->ep, &u->av->fid, 0);
	if (rc)
		goto fail;
	what = "fi_enable";
	rc = fi_enable(u->ep);
	if (rc)
		goto fail;
	fi_freeinfo(info);
	return 0;

fail:
	snprintf(job->err, job->errlen, "udp (%s): %s%s%s", u->prov, what, rc < 0 ? ": " : "",
		 rc < 0 ? fi_strerror(-rc) : "");
	fi_freeinfo(info);
	udp_close_endpoint(u);
	return rc < 0 ? rc : -EIO;
}

static int post_rx(struct bip_udp *u, struct udp_rx *r)
{
	return (int)fi_recv(u->ep, r->buf, u->msg_max, NULL, FI_ADDR_UNSPEC, &r->ctx);
}

static int udp_connect(struct bip_udp *u, const struct bip_nic_job *job)
{
	struct udp_blob me, *all;
	struct bip_oob_job oj = {
		.mynode = job->mynode, .numnodes = job->numnodes, .conf = job->conf,
		.jobid = job->jobid, .what = "udp", .timeout = job->timeout,
	};
	size_t alen = sizeof(me.addr);
	int i, rc;

	memset(&me, 0, sizeof(me));
	snprintf(me.prov, sizeof(me.prov), "%s", u->prov);
	bip_netproto_kernel_id(me.boot_id, sizeof(me.boot_id), &me.pidns);
	me.pid = (uint32_t)getpid();
	me.max_msg = u->msg_max;
	rc = fi_getname(&u->ep->fid, me.addr, &alen);
	if (rc) {
		snprintf(job->err, job->errlen, "udp: fi_getname (%s): %s", u->prov,
			 fi_strerror(-rc));
		return -EIO;
	}
	me.addrlen = (uint32_t)alen;
	all = calloc((size_t)job->numnodes, sizeof(*all));
	if (!all)
		return -ENOMEM;
	rc = bip_boot_allgather(&oj, &me, sizeof(me), all, job->err, job->errlen);
	if (rc < 0)
		goto undo;
	for (i = 0; i < job->numnodes; i++) {
		struct udp_blob *b = &all[i];
		struct udp_peer *p = &u->peers[i];

		if (strncmp(b->prov, me.prov, sizeof(me.prov)) || b->addrlen > sizeof(b->addr)) {
			snprintf(job->err, job->errlen, "udp: node %d (%s) uses provider %.64s, node "
				 "%d uses %s: set BIP_OFI_PROVIDER to one both hosts have", i,
				 job->conf->nodes[i].host, b->prov, job->mynode, me.prov);
			rc = -EPROTO;
			goto undo;
		}
		/* The smallest datagram of the job is everyone's. */
		if (b->max_msg < u->msg_max && b->max_msg >= BIP_REL_HDR_MAX + BIP_SHORT_MAX)
			u->msg_max = b->max_msg;
		/* Every node's address, in node order: a source maps back to it. */
		rc = fi_av_insert(u->av, b->addr, 1, &p->addr, 0, NULL);
		if (rc != 1) {
			snprintf(job->err, job->errlen, "udp: cannot insert the address of node %d "
				 "(%s): %s", i, job->conf->nodes[i].host,
				 fi_strerror(rc < 0 ? -rc : FI_EINVAL));
			rc = -EIO;
			goto undo;
		}
		p->served = job->serve[i] && i != job->mynode;
		p->pid = (int)b->pid;
		p->same_kernel = !strcmp(b->boot_id, me.boot_id) && b->pidns == me.pidns;
	}
	rc = 0;
undo:
	free(all);
	return rc;
}

/*
 * Packets in flight per peer: what the receiving socket holds (the
 * kernel's default receive buffer, net.core.rmem_default, which the
 * provider keeps), shared by every peer that sends to it, with room for
 * the kernel's overhead per datagram.  More than that is dropped by the
 * receiver's kernel whenever its process is not running, and each such
 * burst costs timeouts.  A power of two from 16 to 256.
 */
static unsigned udp_window(const struct bip_udp *u, const struct bip_nic_job *job)
{
	FILE *f = fopen("/proc/sys/net/core/rmem_default", "r");
	unsigned long rmem = 212992, per;
	unsigned w = 256;
	int peers = 0, i;

	if (f) {
		if (fscanf(f, "%lu", &rmem) != 1)
			rmem = 212992;
		fclose(f);
	}
	for (i = 0; i < job->numnodes; i++)
		peers += job->serve[i] && i != job->mynode;
	per = rmem / (2 * (unsigned long)u->msg_max) / (unsigned long)(peers ? peers : 1);
	while (w > 16 && w > per)
		w /= 2;
	return w;
}

static void udp_close(struct bip_nic *nic);
extern const struct bip_dgram_ops bip_udp_dgram_ops;

/* Sleeping (nic.h): on the completion queue (ofi_wait.c); the layer
 * above caps the time-out by its timers. */
static int udp_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_udp *u = udp_of(nic);

	return bip_ofi_cq_sleep_arm(u->fabric, u->cq, u->cq_fd, s);
}

static int udp_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct bip_udp *u;
	char why[256];
	int i, rc;

	if (bip_ofi_load(why, sizeof(why)) < 0) {
		snprintf(job->err, job->errlen, "udp: %s", why);
		return -ENODEV;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->nic.ops = &bip_udp_ops;
	u->nic.max_short = BIP_SHORT_MAX;
	u->mynode = job->mynode;
	u->numnodes = job->numnodes;
	u->cq_fd = -1;
	rc = udp_knobs(u, job);
	if (rc < 0)
		goto undo;
	u->peers = calloc((size_t)job->numnodes, sizeof(*u->peers));
	if (!u->peers) {
		rc = -ENOMEM;
		goto undo;
	}
	rc = udp_open_endpoint(u, job);
	if (rc < 0)
		goto undo;
	u->rxmem = malloc((size_t)UDP_RX_BUFFERS * u->msg_max);
	u->tx = malloc(u->msg_max);
	if (!u->rxmem || !u->tx) {
		rc = -ENOMEM;
		goto undo;
	}
	for (i = 0; i < UDP_RX_BUFFERS; i++) {
		u->rx[i].buf = u->rxmem + (size_t)i * u->msg_max;
		rc = post_rx(u, &u->rx[i]);
		if (rc) {
			snprintf(job->err, job->errlen, "udp (%s): fi_recv: %s", u->prov,
				 fi_strerror(-rc));
			rc = -EIO;
			goto undo;
		}
	}
	rc = udp_connect(u, job);
	if (rc < 0)
		goto undo;
	u->dgops = bip_udp_dgram_ops;
	if (u->cq_fd >= 0) {
		u->dgops.sleep_arm = udp_sleep_arm;
		u->dgops.sleep_wait = bip_nicsleep_wait;
	}
	u->dg = (struct bip_dgram){ .ops = &u->dgops, .npaths = 1,
				    .mtu = u->msg_max - BIP_REL_HDR_MAX,
				    .window = udp_window(u, job) };
	u->nic.dgram = &u->dg;
	snprintf(u->desc, sizeof(u->desc), "udp (%s, datagrams of %zu bytes%s%s)", u->prov,
		 u->msg_max, u->nosleep[0] ? "; cannot sleep, yields: " : "", u->nosleep);
	u->nic.desc = u->desc;
	*nic_p = &u->nic;
	return 0;

undo:
	udp_close(&u->nic);
	return rc;
}

/* --- datagrams --- */

static int udp_send(struct bip_nic *nic, int path, int dst, const void *hdr, size_t hlen,
		    const void *data, size_t len)
{
	struct bip_udp *u = udp_of(nic);
	size_t n = hlen + len;
	ssize_t rc;
	int copies = 1;

	(void)path; /* one endpoint: one path */
	if (n > u->msg_max)
		return -EMSGSIZE; /* the layer never asks: its fragments fit */
	memcpy(u->tx, hdr, hlen);
	if (len)
		memcpy(u->tx + hlen, data, len);
	if (bip_unlikely(u->knobs)) {
		if (hits(u, u->loss)) {
			u->lost++;
			return 0;
		}
		if (hits(u, u->corrupt)) {
			uint64_t bit = rng_next(&u->rng) % ((uint64_t)n * 8);

			u->tx[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			u->corrupted++;
		}
		if (hits(u, u->duplicate)) {
			u->duplicated++;
			copies = 2;
		}
	}
	while (copies--) {
		rc = fi_inject(u->ep, u->tx, n, u->peers[dst].addr);
		if (rc == -FI_EAGAIN)
			return -EAGAIN;
		if (rc) {
			if (!u->errors++)
				fprintf(stderr, "bip: node %d: udp: sending to node %d: %s\n",
					u->mynode, dst, fi_strerror((int)-rc));
			return -ENETDOWN;
		}
	}
	return 0;
}

/* The node of a source address, or -1. */
static int node_of(const struct bip_udp *u, fi_addr_t a)
{
	int i;

	if (a == FI_ADDR_NOTAVAIL)
		return -1;
	for (i = 0; i < u->numnodes; i++)
		if (u->peers[i].addr == a)
			return u->peers[i].served ? i : -1;
	return -1;
}

static int udp_poll(struct bip_nic *nic)
{
	struct bip_udp *u = udp_of(nic);
	struct fi_cq_msg_entry ent[16];
	fi_addr_t from[16];
	int events = 0, i;
	ssize_t n;

	for (;;) {
		n = fi_cq_readfrom(u->cq, ent, 16, from);
		if (n == -FI_EAGAIN)
			break;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e = { 0 };

			if (fi_cq_readerr(u->cq, &e, 0) == 1 && e.op_context) {
				/* A receive that failed (truncated): post it again. */
				u->errors++;
				post_rx(u, (struct udp_rx *)e.op_context);
			}
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "bip: node %d: udp: fi_cq_readfrom: %s\n", u->mynode,
				fi_strerror((int)-n));
			return (int)n;
		}
		for (i = 0; i < n; i++) {
			struct udp_rx *r = (struct udp_rx *)ent[i].op_context;
			int src = node_of(u, from[i]);

			if (!(ent[i].flags & FI_RECV))
				continue; /* no send completions are asked for */
			if (src < 0 || !ent[i].len)
				u->strangers++;
			else
				bip_rel_arrived(&u->nic, 0, src, r->buf, ent[i].len);
			post_rx(u, r);
			events++;
		}
		if (n < 16)
			break;
	}
	return events;
}

static int udp_alive(struct bip_nic *nic, int node)
{
	const struct udp_peer *p = &udp_of(nic)->peers[node];

	/* On another kernel only the layer can tell, after BIP_RETRY_TIMEOUT. */
	return p->same_kernel ? bip_process_runs(p->pid) : 1;
}

static void udp_close(struct bip_nic *nic)
{
	struct bip_udp *u = udp_of(nic);

	if (u->knobs || u->strangers)
		fprintf(stderr,
			"bip: node %d: udp: %llu datagrams lost, %llu corrupted, %llu duplicated "
			"(injected); %llu from outside the job dropped\n",
			u->mynode, (unsigned long long)u->lost, (unsigned long long)u->corrupted,
			(unsigned long long)u->duplicated, (unsigned long long)u->strangers);
	udp_close_endpoint(u);
	free(u->rxmem);
	free(u->tx);
	free(u->peers);
	free(u);
}

const struct bip_dgram_ops bip_udp_dgram_ops = {
	.send = udp_send,
	.poll = udp_poll,
	.alive = udp_alive,
	.close = udp_close,
};

/* The core never calls the message ops of a datagram driver: the layer
 * stands in front of it. */
const struct bip_nic_ops bip_udp_ops = {
	.name = "udp",
	.network = 0, /* only when BIP_NIC=udp asks: the reliable drivers go first */
	.available = udp_available,
	.open = udp_open,
	.poll = udp_poll,
	.alive = udp_alive,
	.close = udp_close,
};
