/* SPDX-License-Identifier: MIT */
/*
 * ofi.c - the ofi driver: peers through libfabric (FI_EP_RDM, FI_TAGGED).
 *
 * Provider: BIP_OFI_PROVIDER names one (its first component is enough:
 * "tcp" for "tcp;ofi_rxm"); otherwise the best that offers reliable
 * datagrams with tagged messages, high-speed networks first, and never shm
 * when a peer is on another host.  A provider that fails to open is passed
 * over with its reason.  Every node must end up with the same provider:
 * the address exchange checks it.
 *
 * Start-up: open the endpoint, post the receive pool, then exchange the
 * endpoint addresses through the start-up all-gather (boot.h) and insert
 * them in the address vector.  Nothing is sent, and no connection made,
 * at start-up: over a provider that makes connections (tcp;ofi_rxm), a
 * peer is connected when the first message goes to it or comes from it,
 * in the order that ofi_rxm needs (ofi_link.c); until then, a message to
 * it is refused with -EAGAIN and the core posts it again.
 *
 * A job that grows (bip_grow(3)): its first nodes exchange their addresses
 * as above and also give them to bipload (boot/pm.h, "blob"); a node that
 * joins later takes the addresses of the nodes started with it from
 * bipload ("addr"), with no exchange, and any two nodes that meet after
 * start-up reach each other on first use: the sender before its first
 * message (reach), the receiver when a message or a connection request
 * comes from a node it has not reached (bip_ofi_reach_sender).  What
 * bipload hands over is checked as untrusted input (length, provider,
 * lengths of the address).  Bounce buffers (eager) stay between the nodes
 * that opened together; between the others long messages go by rendezvous.
 *
 * Short messages: header and payload are copied into the provider (an
 * inject, which copies before returning) or into a send buffer of the
 * driver, so the send is complete at once; they land in the receiver's
 * pre-posted pool buffers and are offered to the core in sequence order.
 *
 * Control messages (credits, clear-to-send): sent at once when nothing
 * waits, else queued; the queue leaves in order per peer, and one peer's
 * message that cannot leave holds back only that peer's (ctl_flush).  None
 * goes to a peer that has closed or ended (ctl_transmit).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rdma/fi_cm.h>

#include "async.h"
#include "conf.h"
#include "boot.h"
#include "nicsleep.h"
#include "oob.h"
#include "pm.h"
#include "ofi.h"

#define OFI_VERSION FI_VERSION(1, 9)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- providers --- */

static const struct {
	const char *name;
	int score;
} ofi_ranking[] = {
	{ "cxi", 100 }, { "efa", 95 }, { "opx", 92 },  { "psm3", 90 },    { "psm2", 85 },
	{ "verbs", 80 }, { "tcp", 50 }, { "net", 45 },  { "sockets", 30 }, { "udp", 20 },
	{ "shm", 10 },
};

/* The provider's own name: "tcp" of "tcp;ofi_rxm". */
static size_t core_len(const char *prov)
{
	const char *semi = strchr(prov, ';');

	return semi ? (size_t)(semi - prov) : strlen(prov);
}

static int prov_score(const char *prov)
{
	size_t i, n = core_len(prov);

	for (i = 0; i < sizeof(ofi_ranking) / sizeof(ofi_ranking[0]); i++)
		if (strlen(ofi_ranking[i].name) == n && !strncmp(prov, ofi_ranking[i].name, n))
			return ofi_ranking[i].score;
	return 5;
}

static int prov_is_shm(const char *prov)
{
	return core_len(prov) == 3 && !strncmp(prov, "shm", 3);
}

/* want names prov: the whole name, or its first component. */
static int prov_matches(const char *want, const char *prov)
{
	size_t n = strlen(want);

	return !strcmp(want, prov) || (n == core_len(prov) && !strncmp(want, prov, n));
}

/* Every provider entry with FI_EP_RDM and FI_TAGGED, and the extra caps;
 * NULL if none. */
static struct fi_info *ofi_getinfo_caps(uint64_t extra, int *rc_p)
{
	struct fi_info *hints = fi_dupinfo(NULL), *list = NULL;
	int rc;

	if (!hints) {
		*rc_p = -ENOMEM;
		return NULL;
	}
	hints->caps = FI_TAGGED | extra;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	rc = fi_getinfo(OFI_VERSION, NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	*rc_p = rc;
	return rc == 0 ? list : NULL;
}

static struct fi_info *ofi_getinfo(int *rc_p)
{
	return ofi_getinfo_caps(0, rc_p);
}

/*
 * The entry of the same provider and domain as base with the one-sided
 * operations' caps too (ofi_rma.c), from list (fetched once, NULL:
 * none); NULL if it has none.  Asked for separately, so that a provider
 * without them is still found and used for messages.
 */
static struct fi_info *with_rma(struct fi_info *list, const struct fi_info *base)
{
	struct fi_info *i;

	for (i = list; i; i = i->next)
		if (!strcmp(i->fabric_attr->prov_name, base->fabric_attr->prov_name) &&
		    !strcmp(i->domain_attr->name, base->domain_attr->name) &&
		    (i->caps & BIP_OFI_RMA_CAPS) == BIP_OFI_RMA_CAPS)
			return i;
	return NULL;
}

/* "tcp;ofi_rxm, shm": each provider once, in the order libfabric gives. */
static void prov_list(const struct fi_info *list, char *out, size_t len)
{
	const struct fi_info *i, *j;
	size_t used = 0;

	out[0] = '\0';
	for (i = list; i && used < len; i = i->next) {
		for (j = list; j != i; j = j->next)
			if (!strcmp(j->fabric_attr->prov_name, i->fabric_attr->prov_name))
				break;
		if (j != i)
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
					 i->fabric_attr->prov_name);
	}
}

static int ofi_available(char *why, size_t len)
{
	const char *want = getenv("BIP_OFI_PROVIDER");
	struct fi_info *list, *i;
	char names[200];
	int rc;

	if (bip_ofi_load(why, len) < 0)
		return 0;
	list = ofi_getinfo(&rc);
	if (!list) {
		snprintf(why, len, "no libfabric provider offers FI_EP_RDM with FI_TAGGED here (%s)",
			 fi_strerror(-rc));
		return 0;
	}
	prov_list(list, names, sizeof(names));
	if (want && *want) {
		for (i = list; i; i = i->next)
			if (prov_matches(want, i->fabric_attr->prov_name))
				break;
		if (!i) {
			snprintf(why, len, "BIP_OFI_PROVIDER=%s: no such provider here (found: %s)",
				 want, names);
			fi_freeinfo(list);
			return 0;
		}
	}
	snprintf(why, len, "providers: %s", names);
	fi_freeinfo(list);
	return 1;
}

/* --- endpoint --- */

static void ofi_close_endpoint(struct bip_ofi *ofi)
{
	struct bip_ofi_rxchunk *c;

	if (ofi->ep)
		fi_close(&ofi->ep->fid);
	if (ofi->av)
		fi_close(&ofi->av->fid);
	if (ofi->cq)
		fi_close(&ofi->cq->fid);
	for (c = ofi->rxchunks; c; c = c->next)
		if (c->mr) {
			fi_close(&c->mr->fid);
			c->mr = NULL;
		}
	if (ofi->tx_mr)
		fi_close(&ofi->tx_mr->fid);
	bip_ofi_rma_fini(ofi);
	bip_ofi_long_fini(ofi);
	if (ofi->domain)
		fi_close(&ofi->domain->fid);
	if (ofi->fabric)
		fi_close(&ofi->fabric->fid);
	ofi->ep = NULL;
	ofi->av = NULL;
	ofi->cq = NULL;
	ofi->cq_fd = -1;
	ofi->tx_mr = NULL;
	ofi->domain = NULL;
	ofi->fabric = NULL;
}

static int post_rx(struct bip_ofi *ofi, struct bip_ofi_slot *s)
{
	return (int)fi_trecv(ofi->ep, s->buf, BIP_OFI_SLOT_SIZE, s->desc, FI_ADDR_UNSPEC, 0, 0,
			     &s->ctx.fi);
}

/*
 * libfabric's shm provider names its region after the process ("PID:N:M"
 * in /dev/shm) and refuses to enable an endpoint whose region exists
 * (EBUSY).  A region named after this process's pid, before this process
 * has opened one, was left by an earlier process with the same pid that
 * was killed: it is stale, and removing it is what lets this one start.
 */
static void remove_stale_shm_regions(void)
{
	char prefix[32];
	struct dirent *d;
	size_t len;
	DIR *dir;

	len = (size_t)snprintf(prefix, sizeof(prefix), "%ld:", (long)getpid());
	dir = opendir("/dev/shm");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char path[300];

		if (strncmp(d->d_name, prefix, len))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
		unlink(path);
	}
	closedir(dir);
}

/* Open fabric, domain, completion queue, address vector and endpoint on info. */
static int ofi_open_endpoint(struct bip_ofi *ofi, struct fi_info *info, char *why, size_t len)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 0 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	const char *what;
	int rc;

	if (prov_is_shm(info->fabric_attr->prov_name))
		remove_stale_shm_regions();
	what = "fi_fabric";
	rc = fi_fabric(info->fabric_attr, &ofi->fabric, NULL);
	if (rc)
		goto fail;
	what = "fi_domain";
	rc = fi_domain(ofi->fabric, info, &ofi->domain, NULL);
	if (rc)
		goto fail;
	what = "fi_cq_open";
	rc = bip_ofi_cq_open(ofi->domain, &cq_attr, &ofi->cq, &ofi->cq_fd, ofi->nosleep,
			     sizeof(ofi->nosleep));
	if (rc)
		goto fail;
	what = "fi_av_open";
	rc = fi_av_open(ofi->domain, &av_attr, &ofi->av, NULL);
	if (rc)
		goto fail;
	what = "fi_endpoint";
	rc = fi_endpoint(ofi->domain, info, &ofi->ep, NULL);
	if (rc)
		goto fail;
	what = "fi_ep_bind";
	rc = fi_ep_bind(ofi->ep, &ofi->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_ep_bind(ofi->ep, &ofi->av->fid, 0);
	if (rc)
		goto fail;
	what = "fi_enable";
	rc = fi_enable(ofi->ep);
	if (rc)
		goto fail;
	ofi->mr_local = !!(info->domain_attr->mr_mode & FI_MR_LOCAL);
	if (getenv("BIP_OFI_MR_LOCAL") && !strcmp(getenv("BIP_OFI_MR_LOCAL"), "1"))
		ofi->mr_local = 1; /* register even where the provider does not ask */
	ofi->inject_size = info->tx_attr->inject_size;
	ofi->chunk = info->ep_attr->max_msg_size;
	if (ofi->chunk > BIP_OFI_CHUNK_MAX)
		ofi->chunk = BIP_OFI_CHUNK_MAX;
	return 0;

fail:
	snprintf(why, len, "%s: %s", what, fi_strerror(-rc));
	ofi_close_endpoint(ofi);
	return rc < 0 ? rc : -EIO;
}

/* Same host, by the configuration's names (see bip_nic_same_host). */
static int any_remote(const struct bip_nic_job *job)
{
	int i;

	for (i = 0; i < job->numnodes; i++)
		if (job->serve[i] && !bip_nic_same_host(job->conf, job->mynode, i))
			return i;
	return -1;
}

/* Try the providers in order of preference; on success ofi->info is set. */
static int ofi_choose(struct bip_ofi *ofi, const struct bip_nic_job *job)
{
	const char *want = getenv("BIP_OFI_PROVIDER");
	struct fi_info *list, *rlist = NULL, *i, *best, *open;
	char tried[400] = "", why[160];
	size_t used = 0;
	int remote = any_remote(job), rc;
	unsigned char *done;
	int n = 0, k, bk;

	if (want && !*want)
		want = NULL;
	if (bip_ofi_load(job->err, job->errlen) < 0)
		return -ENODEV;
	list = ofi_getinfo(&rc);
	if (!list) {
		snprintf(job->err, job->errlen, "ofi: no libfabric provider offers FI_EP_RDM with "
			 "FI_TAGGED (%s)", fi_strerror(-rc));
		return -ENODEV;
	}
	for (i = list; i; i = i->next)
		n++;
	done = calloc((size_t)n, 1);
	if (!done) {
		fi_freeinfo(list);
		return -ENOMEM;
	}
	if (bip_ofi_rma_wanted())
		rlist = ofi_getinfo_caps(BIP_OFI_RMA_CAPS, &rc);
	for (;;) {
		/* The best entry not yet tried (the first of equal ones: libfabric
		 * lists a provider's preferred interface first). */
		best = NULL;
		bk = -1;

		for (i = list, k = 0; i; i = i->next, k++) {
			const char *p = i->fabric_attr->prov_name;

			if (done[k] || (want && !prov_matches(want, p)))
				continue;
			if (remote >= 0 && prov_is_shm(p))
				continue;
			if (!best || prov_score(p) > prov_score(best->fabric_attr->prov_name)) {
				best = i;
				bk = k;
			}
		}
		if (!best)
			break;
		/* Skip the other entries of a provider that failed to open. */
		for (i = list, k = 0; i; i = i->next, k++)
			if (!strcmp(i->fabric_attr->prov_name, best->fabric_attr->prov_name))
				done[k] = 1;
		done[bk] = 1;
		/* With the one-sided operations' caps if it has them, else
		 * (or if that fails to open) without. */
		open = with_rma(rlist, best);
		rc = open ? ofi_open_endpoint(ofi, open, why, sizeof(why)) : -FI_ENODATA;
		if (rc) {
			open = best;
			rc = ofi_open_endpoint(ofi, best, why, sizeof(why));
		}
		if (rc == 0) {
			ofi->info = fi_dupinfo(open);
			snprintf(ofi->prov, sizeof(ofi->prov), "%s", best->fabric_attr->prov_name);
			free(done);
			fi_freeinfo(list);
			if (rlist)
				fi_freeinfo(rlist);
			return ofi->info ? 0 : -ENOMEM;
		}
		if (used < sizeof(tried))
			used += (size_t)snprintf(tried + used, sizeof(tried) - used, "; %s: %s",
						 best->fabric_attr->prov_name, why);
	}
	free(done);
	if (rlist)
		fi_freeinfo(rlist);
	if (want && remote >= 0 && prov_is_shm(want))
		snprintf(job->err, job->errlen, "ofi: BIP_OFI_PROVIDER=%s cannot reach node %d on "
			 "host %s (another host)", want, remote, job->conf->nodes[remote].host);
	else if (want && !used)
		snprintf(job->err, job->errlen, "ofi: BIP_OFI_PROVIDER=%s: no such provider here",
			 want);
	else if (used)
		snprintf(job->err, job->errlen, "ofi: no provider could be opened%s", tried);
	else
		snprintf(job->err, job->errlen, "ofi: no provider but shm, and node %d is on "
			 "host %s, another host", remote, job->conf->nodes[remote].host);
	fi_freeinfo(list);
	return -ENODEV;
}

/*
 * Receive buffers: n more, posted (or to be posted once the provider takes
 * them).  They are shared by all peers (posted for any source); the pool
 * starts with OFI_POOL_BASE and grows by a peer's credits when its link
 * comes up (bip_ofi_peer_open), while the provider takes that many posted
 * receives (rx_budget).  A message that comes while none is posted waits
 * in the provider, within its sender's credits, until one is.
 */
#define OFI_POOL_BASE 64

static int pool_add(struct bip_ofi *ofi, int n)
{
	struct bip_ofi_rxchunk *c = calloc(1, sizeof(*c) + (size_t)n * sizeof(c->slot[0]));
	size_t bytes = ((size_t)n * BIP_OFI_SLOT_SIZE + 4095) & ~4095ul;
	int i, rc;

	if (!c)
		return -ENOMEM;
	c->mem = aligned_alloc(4096, bytes);
	if (!c->mem) {
		free(c);
		return -ENOMEM;
	}
	if (ofi->mr_local) {
		rc = fi_mr_reg(ofi->domain, c->mem, bytes, FI_RECV, 0, 0, 0, &c->mr, NULL);
		if (rc) {
			free(c->mem);
			free(c);
			return rc < 0 ? rc : -EIO;
		}
	}
	c->next = ofi->rxchunks;
	ofi->rxchunks = c;
	ofi->nrx += n;
	for (i = 0; i < n; i++) {
		struct bip_ofi_slot *s = &c->slot[i];

		s->ctx.kind = BIP_OFI_CTX_RX;
		s->buf = c->mem + (size_t)i * BIP_OFI_SLOT_SIZE;
		s->desc = c->mr ? fi_mr_desc(c->mr) : NULL;
		rc = ofi->repost ? -FI_EAGAIN : post_rx(ofi, s);
		if (rc == -FI_EAGAIN) {
			s->next = ofi->repost;
			ofi->repost = s;
		} else if (rc) {
			return rc;
		}
	}
	return 0;
}

static int alloc_pools(struct bip_ofi *ofi)
{
	int i, rc;

	ofi->tx_mem = aligned_alloc(4096, (size_t)BIP_OFI_TXSLOTS * BIP_OFI_SLOT_SIZE);
	ofi->tx = calloc(BIP_OFI_TXSLOTS, sizeof(*ofi->tx));
	if (!ofi->tx_mem || !ofi->tx)
		return -ENOMEM;
	if (ofi->mr_local) {
		rc = fi_mr_reg(ofi->domain, ofi->tx_mem, (size_t)BIP_OFI_TXSLOTS * BIP_OFI_SLOT_SIZE,
			       FI_SEND, 0, 1, 0, &ofi->tx_mr, NULL);
		if (rc)
			return rc < 0 ? rc : -EIO;
	}
	for (i = 0; i < BIP_OFI_TXSLOTS; i++) {
		ofi->tx[i].ctx.kind = BIP_OFI_CTX_TX;
		ofi->tx[i].buf = ofi->tx_mem + (size_t)i * BIP_OFI_SLOT_SIZE;
		ofi->tx[i].next = ofi->tx_free;
		ofi->tx_free = &ofi->tx[i];
	}
	/* Three quarters of what the provider takes posted at once (ofi_rxm:
	 * FI_OFI_RXM_RX_SIZE, 2048 by default): the rest is for the receives
	 * of long messages' data.  With the pools filling all of it, a buffer
	 * freed went back to the pool at once, and a long receive that found
	 * no room waited for ever (an all-to-all of 32 processes hung). */
	ofi->rx_budget = ofi->info->rx_attr->size && ofi->info->rx_attr->size < (1u << 30) ?
			 (int)(ofi->info->rx_attr->size - ofi->info->rx_attr->size / 4) : 1 << 30;
	return pool_add(ofi, OFI_POOL_BASE);
}

int bip_ofi_peer_open(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];

	if (p->link == BIP_OFI_LINK_UP)
		return 0;
	if (!p->np.held && bip_netproto_peer_init(&p->np, ofi->ncredits) < 0) {
		fprintf(stderr, "bip: node %d: ofi: out of memory for node %d\n", ofi->mynode, node);
		p->dead = 1;
		return -ENOMEM;
	}
	/* Buffers for what it sends, while the provider takes them (else its
	 * messages use the shared ones, or wait in the provider). */
	if (ofi->nrx + ofi->nebuf + (int)ofi->ncredits <= ofi->rx_budget)
		pool_add(ofi, (int)ofi->ncredits);
	bip_ofi_eager_grow(ofi);
	p->link = BIP_OFI_LINK_UP;
	return 0;
}

static uint32_t env_credits(void)
{
	const char *s = getenv("BIP_OFI_CREDITS");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 64;
	v = strtoul(s, &end, 10);
	if (*end || v < 2 || v > 4096 || (v & (v - 1))) {
		fprintf(stderr, "bip: BIP_OFI_CREDITS=%s is not a power of two in 2 .. 4096; "
			"using 64\n", s);
		return 64;
	}
	return (uint32_t)v;
}

/* Seconds a peer's host may leave a liveness check unanswered before its
 * process counts as ended (BIP_OFI_ALIVE_TIMEOUT). */
static double env_alive_timeout(void)
{
	const char *s = getenv("BIP_OFI_ALIVE_TIMEOUT");
	char *end;
	double v;

	if (!s || !*s)
		return 10.0;
	v = strtod(s, &end);
	if (*end || !(v > 0)) {
		fprintf(stderr, "bip: BIP_OFI_ALIVE_TIMEOUT=%s is not a positive number of "
			"seconds; using 10\n", s);
		return 10.0;
	}
	return v;
}

static void ofi_close(struct bip_nic *nic);

/* This process's network namespace, for peers that may then reach its
 * listener on the loopback whatever their host's name says. */
static uint64_t netns_id(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Take node i's address b: check it against this process's, and, if this
 * driver serves it, insert it in the address vector. */
static int peer_setup(struct bip_ofi *ofi, int i, const struct bip_ofi_blob *b, int serve,
		      char *err, size_t errlen)
{
	const struct bip_ofi_blob *me = ofi->self_blob;
	struct bip_ofi_peer *p = &ofi->peers[i];
	int rc;

	if (strncmp(b->prov, me->prov, sizeof(me->prov))) {
		snprintf(err, errlen, "ofi: node %d (%s) uses provider %.64s, node %d (%s) uses "
			 "%s: set BIP_OFI_PROVIDER to one that both hosts have", i,
			 ofi->conf->nodes[i].host, b->prov, ofi->mynode,
			 ofi->conf->nodes[ofi->mynode].host, me->prov);
		return -EPROTO;
	}
	if (b->max_msg < ofi->chunk)
		ofi->chunk = b->max_msg;
	bip_ofi_rma_peer(ofi, i, b);
	if (i == ofi->mynode && ofi->rma) {
		/* Its own one-sided operations go through the provider
		 * too, so that they are atomic with the others'. */
		rc = fi_av_insert(ofi->av, b->addr, 1, &p->addr, 0, NULL);
		if (rc != 1)
			p->rma = 0;
	}
	if (!serve)
		return 0;
	bip_ofi_eager_peer(ofi, i, b);
	p->pid = (int)b->pid;
	p->same_kernel = !strcmp(b->boot_id, me->boot_id) && b->pidns == me->pidns;
	p->same_netns = p->same_kernel && me->netns && b->netns == me->netns;
	p->live_port = (uint16_t)b->live_port;
	rc = fi_av_insert(ofi->av, b->addr, 1, &p->addr, 0, NULL);
	if (rc != 1) {
		snprintf(err, errlen, "ofi: cannot insert the address of node %d (%s) (%s): %s", i,
			 ofi->conf->nodes[i].host, ofi->prov, fi_strerror(rc < 0 ? -rc : FI_EINVAL));
		return -EIO;
	}
	p->served = 1;
	return 0;
}

/* A node's address as bipload keeps it (a job that grows): 0, -EAGAIN,
 * or another negative errno with err. */
static int blob_of(int node, struct bip_ofi_blob *b, char *err, size_t errlen)
{
	int n = bip_pm_blob_get(node, b, sizeof(*b), err, errlen);

	if (n >= 0 && n != (int)sizeof(*b)) {
		snprintf(err, errlen, "ofi: node %d's address is %d bytes, not %zu", node, n,
			 sizeof(*b));
		return -EPROTO;
	}
	if (n >= 0 && (b->addrlen > sizeof(b->addr) || !memchr(b->prov, '\0', sizeof(b->prov)) ||
		       !memchr(b->boot_id, '\0', sizeof(b->boot_id)))) {
		snprintf(err, errlen, "ofi: node %d's address is malformed", node);
		return -EPROTO;
	}
	return n < 0 ? n : 0;
}

/* A node that joined may run on any host of the job, whatever name the
 * configuration gives it (bipload_grow.c): its listener is at its
 * endpoint's address when that is IPv4 (ofi_link.c). */
static void live_from_endpoint(struct bip_ofi *ofi, int node, const struct bip_ofi_blob *b)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	struct sockaddr_in sin;

	if (p->same_netns || !p->live_port || ofi->info->addr_format != FI_SOCKADDR_IN ||
	    b->addrlen < sizeof(sin))
		return;
	memcpy(&sin, b->addr, sizeof(sin));
	if (sin.sin_family != AF_INET || sin.sin_addr.s_addr == htonl(INADDR_ANY))
		return;
	p->live_addr = sin;
	p->live_addr.sin_port = htons(p->live_port);
	p->live_ok = 1;
	p->live_own = 1;
}

int bip_ofi_reach_node(struct bip_ofi *ofi, int node, char *err, size_t errlen)
{
	struct bip_ofi_blob b;
	int rc;

	if (!ofi->grows || node < 0 || node >= ofi->numnodes || node == ofi->mynode) {
		snprintf(err, errlen, "node %d is not a node this driver may reach", node);
		return -EINVAL;
	}
	if (ofi->peers[node].served)
		return 0;
	rc = blob_of(node, &b, err, errlen);
	if (rc < 0)
		return rc;
	/* No bounce buffers between nodes that meet after start-up. */
	b.eager = 0;
	b.eager_bufs = 0;
	rc = peer_setup(ofi, node, &b, 1, err, errlen);
	if (rc == 0)
		live_from_endpoint(ofi, node, &b);
	return rc;
}

int bip_ofi_reach_sender(struct bip_ofi *ofi, uint32_t src)
{
	char err[320];
	int rc;

	if (!ofi->grows || src >= (uint32_t)ofi->numnodes || (int)src == ofi->mynode)
		return 0;
	/* A node publishes its address before it sends anything. */
	rc = bip_ofi_reach_node(ofi, (int)src, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "bip: node %d: ofi: node %u: %s\n", ofi->mynode, src, err);
		return 0;
	}
	bip_core_peer_joined(&ofi->nic, (int)src);
	return 1;
}

static int ofi_reach(struct bip_nic *nic, int node, char *err, size_t errlen)
{
	return bip_ofi_reach_node((struct bip_ofi *)nic, node, err, errlen);
}

/* Exchange addresses and fill the address vector. */
static int ofi_connect(struct bip_ofi *ofi, const struct bip_nic_job *job)
{
	struct bip_ofi_blob me, *all;
	struct bip_oob_job oj = {
		.mynode = job->mynode, .numnodes = job->numnodes, .conf = job->conf,
		.jobid = job->jobid, .what = "ofi", .timeout = job->timeout,
	};
	size_t alen = sizeof(me.addr);
	int i, rc;

	memset(&me, 0, sizeof(me));
	snprintf(me.prov, sizeof(me.prov), "%s", ofi->prov);
	bip_netproto_kernel_id(me.boot_id, sizeof(me.boot_id), &me.pidns);
	me.netns = netns_id();
	me.pid = (uint32_t)getpid();
	me.max_msg = ofi->chunk;
	me.live_port = (uint32_t)bip_ofi_link_listen(ofi);
	if (!me.live_port && ofi->lazy) {
		snprintf(job->err, job->errlen, "ofi (%s): cannot open a listening TCP socket "
			 "(which the connections need): %s", ofi->prov, strerror(errno));
		return -EIO;
	}
	me.eager = ofi->eager_bufs ? ofi->eager : 0;
	me.eager_bufs = ofi->eager_bufs;
	bip_ofi_rma_publish(ofi, &me);
	rc = fi_getname(&ofi->ep->fid, me.addr, &alen);
	if (rc) {
		snprintf(job->err, job->errlen, "ofi: fi_getname (%s): %s%s", ofi->prov,
			 fi_strerror(-rc), rc == -FI_ETOOSMALL ? " (address too long)" : "");
		return -EIO;
	}
	me.addrlen = (uint32_t)alen;
	ofi->self_blob = malloc(sizeof(me));
	all = calloc((size_t)job->numnodes, sizeof(*all));
	if (!all || !ofi->self_blob) {
		free(all);
		return -ENOMEM;
	}
	memcpy(ofi->self_blob, &me, sizeof(me));
	if (ofi->grows) {
		/* bipload keeps every address (grow.c), for the nodes that
		 * join later. */
		rc = bip_pm_blob_put(&me, sizeof(me));
		if (rc < 0) {
			snprintf(job->err, job->errlen, "ofi: cannot give bipload this process's "
				 "address: %s", strerror(-rc));
			goto undo_all;
		}
	}
	if (ofi->grows && job->first > 0) {
		/* A node that joined: no start-up exchange, the addresses of
		 * the nodes it opens with come from bipload. */
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < job->numnodes; i++) {
			if (i == job->mynode) {
				all[i] = me;
				continue;
			}
			if (!job->serve[i])
				continue;
			for (;;) {
				rc = blob_of(i, &all[i], job->err, job->errlen);
				clock_gettime(CLOCK_MONOTONIC, &t);
				if (rc != -EAGAIN || t.tv_sec - t0.tv_sec > job->timeout)
					break;
				usleep(1000);
			}
			if (rc == -EAGAIN)
				snprintf(job->err, job->errlen, "ofi: timed out after %.0f s waiting "
					 "for the address of node %d (%s)", job->timeout, i,
					 job->conf->nodes[i].host);
			if (rc < 0)
				goto undo_all;
		}
	} else {
		/* The job's first nodes (those that exist: in a job that
		 * grows, not its room). */
		oj.numnodes = job->known;
		rc = bip_boot_allgather(&oj, &me, sizeof(me), all, job->err, job->errlen);
		if (rc < 0)
			goto undo_all;
	}
	for (i = 0; i < job->numnodes; i++) {
		if (ofi->grows && i != job->mynode && (!job->serve[i] || i >= job->known))
			continue; /* reached on first use */
		rc = peer_setup(ofi, i, &all[i], job->serve[i], job->err, job->errlen);
		if (rc < 0)
			goto undo_all;
		/* A node that joined opens with its siblings, which may run on
		 * any host. */
		if (job->first > 0 && job->serve[i] && i != job->mynode)
			live_from_endpoint(ofi, i, &all[i]);
	}
	rc = 0;
undo_all:
	free(all);
	return rc;
}

/*
 * Sleeping (nic.h): on the completion queue (ofi_wait.c).  While the
 * driver has work of its own waiting for the provider (control messages,
 * long transfers or receive buffers it refused for want of room, or while
 * it connects), or arrivals the core has not taken, the sleep lasts
 * OFI_BUSY_SLEEP at most: a completion that frees room wakes it sooner,
 * but room may come without one.
 */
#define OFI_BUSY_SLEEP 1000000L /* ns */

/* In bell mode the core arms after a poll that found nothing, with the
 * lock held: whatever comes later is found by the progress thread's
 * poll, which rings the bell. */
static int nothing_pending(void *arg)
{
	(void)arg;
	return 0;
}

static int ofi_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);

	if ((ofi->nctl || ofi->repost || ofi->erepost || ofi->lsend_pending || ofi->lrecv_pending ||
	     ofi->nheld || bip_ofi_link_busy(ofi) || ofi->nhello || (ofi->lazy && ofi->wait_fd < 0) ||
	     (ofi->rma && bip_ofi_rma_busy(ofi))) &&
	    s->timeout_ns > OFI_BUSY_SLEEP)
		s->timeout_ns = OFI_BUSY_SLEEP;
	if (ofi->bell_mode)
		return bip_nicsleep_arm(&ofi->sleepers, &ofi->bell, nothing_pending, ofi, s);
	if (!bip_ofi_cq_sleep_arm(ofi->fabric, ofi->cq, ofi->cq_fd, s))
		return 0;
	/* A request on the side channel wakes it too (ofi_link.c), and the
	 * first poll after the sleep looks at the listener. */
	if (ofi->wait_fd >= 0)
		s->fd = ofi->wait_fd;
	ofi->link_polls = OFI_LINK_POLLS;
	return 1;
}

/* Block mode over a provider that connects: an epoll descriptor of the
 * completion queue's and the listener's, so that a sleeper also wakes for
 * a side channel request; -1 if it cannot be made (the sleeps then last
 * OFI_BUSY_SLEEP at most). */
static int wait_fd_open(struct bip_ofi *ofi)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0)
		return -1;
	if (epoll_ctl(fd, EPOLL_CTL_ADD, ofi->cq_fd, &ev) < 0 ||
	    (ofi->live_fd >= 0 && epoll_ctl(fd, EPOLL_CTL_ADD, ofi->live_fd, &ev) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

#define OFI_NOTE_BYE 1    /* the id of a peer's last note (send_note) */
#define OFI_NOTE_BYE_OK 2 /* the answer to it: everything before it was read */

static int ofi_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct bip_ofi *ofi;
	int i, rc, nserved = 0;

	ofi = calloc(1, sizeof(*ofi));
	if (!ofi)
		return -ENOMEM;
	ofi->nic.ops = &bip_ofi_ops;
	ofi->nic.max_short = BIP_OFI_SLOT_SIZE - sizeof(struct bip_netproto_hdr);
	ofi->mynode = job->mynode;
	ofi->numnodes = job->numnodes;
	ofi->grows = job->grows;
	ofi->live_fd = -1;
	ofi->cq_fd = -1;
	ofi->wait_fd = -1;
	ofi->conf = job->conf;
	ofi->ncredits = env_credits();
	ofi->alive_timeout = env_alive_timeout();
	ofi->mr_cache = !(getenv("BIP_OFI_MR_CACHE") && !strcmp(getenv("BIP_OFI_MR_CACHE"), "0"));
	rc = bip_ofi_eager_env(ofi, job->err, job->errlen);
	if (rc < 0)
		goto undo;
	/* Bounce buffers are shared out among the peers served at open: a
	 * node that joined a job has none (its peers come later), and long
	 * messages between it and any other go by rendezvous. */
	if (ofi->grows && job->first > 0)
		ofi->eager = 0;
	ofi->peers = calloc((size_t)job->numnodes, sizeof(*ofi->peers));
	if (!ofi->peers) {
		rc = -ENOMEM;
		goto undo;
	}
	bip_ofi_long_init(ofi);
	for (i = 0; i < job->numnodes; i++) {
		ofi->peers[i].live_fd = -1;
		ofi->peers[i].req_fd = -1;
		nserved += !!job->serve[i];
	}
	rc = ofi_choose(ofi, job);
	if (rc < 0)
		goto undo;
	ofi->lazy = strstr(ofi->prov, "ofi_rxm") != NULL;
	bip_ofi_rma_init(ofi);
	rc = alloc_pools(ofi);
	if (rc == 0)
		rc = bip_ofi_eager_alloc(ofi, nserved);
	if (rc < 0) {
		snprintf(job->err, job->errlen, "ofi (%s): cannot set up the receive buffers: %s",
			 ofi->prov, rc == -ENOMEM ? "out of memory" : fi_strerror(-rc));
		goto undo;
	}
	rc = ofi_connect(ofi, job);
	if (rc == 0 && bip_ofi_link_init(ofi, job->jobid) < 0) {
		snprintf(job->err, job->errlen, "ofi (%s): out of memory", ofi->prov);
		rc = -ENOMEM;
	}
	if (rc < 0)
		goto undo;
	if (ofi->cq_fd >= 0 && ofi->lazy)
		ofi->wait_fd = wait_fd_open(ofi);
	/* The thread's poll rings the bell (ofi.h); not where the provider
	 * moves the data itself. */
	ofi->bell_mode = ofi->rma && bip_async_requested() &&
			 ofi->info->domain_attr->data_progress != FI_PROGRESS_AUTO;
	if (ofi->cq_fd >= 0 || ofi->bell_mode) {
		ofi->ops = bip_ofi_ops;
		ofi->ops.sleep_arm = ofi_sleep_arm;
		ofi->ops.sleep_wait = bip_nicsleep_wait;
		ofi->nic.ops = &ofi->ops;
	}
	if (ofi->nosleep[0])
		snprintf(ofi->desc, sizeof(ofi->desc), "ofi (%s; cannot sleep, yields: %s)",
			 ofi->prov, ofi->nosleep);
	else
		snprintf(ofi->desc, sizeof(ofi->desc), "ofi (%s)", ofi->prov);
	ofi->nic.desc = ofi->desc;
	*nic_p = &ofi->nic;
	return 0;

undo:
	ofi_close(&ofi->nic);
	return rc;
}

/* --- sending --- */

struct bip_ofi_slot *bip_ofi_tx_get(struct bip_ofi *ofi)
{
	struct bip_ofi_slot *s = ofi->tx_free;

	if (s)
		ofi->tx_free = s->next;
	return s;
}

void bip_ofi_tx_put(struct bip_ofi *ofi, struct bip_ofi_slot *s)
{
	s->next = ofi->tx_free;
	ofi->tx_free = s;
}

/* Send header + payload to dst: 0, -EAGAIN, or -errno.  The header also
 * returns the bounce buffer credits owed to dst (its rsv field). */
static int ofi_transmit(struct bip_ofi *ofi, int dst, const struct bip_netproto_hdr *h,
			const void *payload, size_t plen)
{
	struct bip_ofi_peer *p = &ofi->peers[dst];
	size_t len = sizeof(*h) + plen;
	struct bip_netproto_hdr *wh;
	struct bip_ofi_slot *s;
	uint8_t ibuf[BIP_OFI_SLOT_SIZE];
	ssize_t rc;

	p->sent_any = 1;
	s = len <= ofi->inject_size ? NULL : bip_ofi_tx_get(ofi);
	if (!s && len > ofi->inject_size)
		return -EAGAIN;
	wh = (struct bip_netproto_hdr *)(s ? s->buf : ibuf);
	memcpy(wh, h, sizeof(*h));
	wh->rsv = bip_ofi_take_eager_owed(p);
	if (plen) /* control messages have no payload, and may pass NULL */
		memcpy((uint8_t *)wh + sizeof(*h), payload, plen);
	if (!s)
		rc = fi_tinject(ofi->ep, ibuf, len, p->addr, 0);
	else
		rc = fi_tsend(ofi->ep, s->buf, len, ofi->tx_mr ? fi_mr_desc(ofi->tx_mr) : NULL,
			      p->addr, 0, &s->ctx.fi);
	if (rc) {
		p->eager_owed += wh->rsv;
		if (s)
			bip_ofi_tx_put(ofi, s);
		return rc == -FI_EAGAIN ? -EAGAIN : rc > -FI_ERRNO_OFFSET ? (int)rc : -EIO;
	}
	if (s) {
		s->dst = dst;
		ofi->tx_out++;
	}
	return 0;
}

int bip_ofi_post_msg(struct bip_ofi *ofi, int dst, uint8_t kind, uint32_t tag, uint32_t len,
		     uint32_t id, const void *payload, size_t plen)
{
	struct bip_netproto_peer *np = &ofi->peers[dst].np;
	struct bip_netproto_hdr h;
	int rc;

	rc = bip_netproto_msg_hdr(np, ofi->mynode, kind, tag, len, id, &h);
	if (rc)
		return rc; /* the receiver has not taken what we sent */
	rc = ofi_transmit(ofi, dst, &h, payload, plen);
	bip_netproto_msg_sent(np, &h, rc);
	/* No room may mean a process that has ended (a relay's next hop):
	 * its sends then fail instead of being tried for ever. */
	if (rc == -EAGAIN && bip_ofi_link_ended(ofi, dst))
		return -EPIPE;
	return rc < 0 ? rc : 0;
}

/*
 * 0 sent (or nothing to send), -EAGAIN no room, -errno failure.  Nothing
 * goes to a peer that has closed (its last note came) or ended: over
 * ofi_rxm its connection is gone, and a send would open a new one to no
 * one, failing with -FI_EAGAIN for ever.
 */
static int ctl_transmit(struct bip_ofi *ofi, const struct bip_ofi_ctl *c)
{
	struct bip_ofi_peer *p = &ofi->peers[c->dst];
	struct bip_netproto_peer *np = &p->np;
	struct bip_netproto_hdr h;
	int rc;

	if (p->dead || p->closed)
		return 0;
	if (c->kind == BIP_NETPROTO_CREDIT && !np->owed && !p->eager_owed)
		return 0; /* returned meanwhile with another message */
	h = bip_netproto_ctl_hdr(np, ofi->mynode, c->kind, c->id);
	rc = ofi_transmit(ofi, c->dst, &h, NULL, 0);
	if (rc < 0)
		bip_netproto_unsent(np, &h);
	if (rc == -EAGAIN && p->same_kernel && !bip_process_runs(p->pid)) {
		p->dead = 1; /* ended without its last note (killed) */
		return 0;
	}
	return rc;
}

static void ctl_failed(struct bip_ofi *ofi, const struct bip_ofi_ctl *c, int rc)
{
	fprintf(stderr, "bip: node %d: ofi: control message to node %d failed: %s\n", ofi->mynode,
		c->dst, fi_strerror(-rc));
	ofi->peers[c->dst].dead = 1;
}

void bip_ofi_send_ctl(struct bip_ofi *ofi, int dst, uint8_t kind, uint32_t id)
{
	struct bip_ofi_ctl c = { .dst = dst, .kind = kind, .id = id };
	int rc = -EAGAIN;

	if (!ofi->nctl)
		rc = ctl_transmit(ofi, &c);
	if (rc == 0)
		return;
	if (rc != -EAGAIN) {
		ctl_failed(ofi, &c, rc);
		return;
	}
	if (ofi->nctl == ofi->ctl_cap) {
		int cap = ofi->ctl_cap ? ofi->ctl_cap * 2 : 64;
		struct bip_ofi_ctl *n = realloc(ofi->ctl, (size_t)cap * sizeof(*n));

		if (!n) {
			ctl_failed(ofi, &c, -ENOMEM);
			return;
		}
		ofi->ctl = n;
		ofi->ctl_cap = cap;
	}
	ofi->ctl[ofi->nctl++] = c;
}

/*
 * Send what waits, in order per peer: a message that cannot leave holds
 * back the later ones to the same peer, not those to the others (a peer
 * that does not take its credits must not starve the senders waiting for
 * theirs).
 */
static void ctl_flush(struct bip_ofi *ofi)
{
	int i, kept = 0, rc;

	for (i = 0; i < ofi->nctl; i++) {
		struct bip_ofi_ctl c = ofi->ctl[i];

		if (!ofi->peers[c.dst].ctl_waits) {
			rc = ctl_transmit(ofi, &c);
			if (rc == 0)
				continue;
			if (rc != -EAGAIN) {
				ctl_failed(ofi, &c, rc);
				continue;
			}
			ofi->peers[c.dst].ctl_waits = 1;
		}
		ofi->ctl[kept++] = c;
	}
	ofi->nctl = kept;
	for (i = 0; i < kept; i++)
		ofi->peers[ofi->ctl[i].dst].ctl_waits = 0;
}

static int ofi_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	int rc;

	if (bip_unlikely(ofi->peers[dst].link != BIP_OFI_LINK_UP) &&
	    (rc = bip_ofi_link_need(ofi, dst)))
		return rc;
	return bip_ofi_post_msg(ofi, dst, BIP_NETPROTO_SHORT, tag, (uint32_t)len, 0, buf, len);
}

/* --- receiving --- */

static void rx_repost(struct bip_ofi *ofi, struct bip_ofi_slot *s)
{
	if (!ofi->repost && post_rx(ofi, s) == 0)
		return;
	s->next = ofi->repost;
	ofi->repost = s;
}

static void repost_flush(struct bip_ofi *ofi)
{
	struct bip_ofi_slot *s;

	while ((s = ofi->repost)) {
		if (post_rx(ofi, s))
			break;
		ofi->repost = s->next;
	}
}

/*
 * Offer what arrived from src, in sequence order, while the core takes it.
 * A pool buffer is posted again once the core has taken its message; a
 * bounce buffer stays with its message until post_long_recv (which the
 * core may call from inside the offer).
 */
int bip_ofi_deliver(struct bip_ofi *ofi, int src)
{
	struct bip_netproto_peer *np = &ofi->peers[src].np;
	struct bip_ofi_slot *s;
	int n = 0;

	while ((s = bip_netproto_next(np, ofi->ncredits))) {
		struct bip_ofi_ebuf *e = s->ctx.kind == BIP_OFI_CTX_ERX ? (struct bip_ofi_ebuf *)s :
									   NULL;

		if (e)
			e->state = BIP_OFI_EBUF_OFFERED;
		if (bip_netproto_offer(src, s->buf) == -EAGAIN) {
			if (e)
				e->state = BIP_OFI_EBUF_HELD;
			break; /* the tag's queue is full: keep this and what follows */
		}
		bip_netproto_taken(np, ofi->ncredits);
		ofi->nheld--;
		if (!e)
			rx_repost(ofi, s);
		n++;
	}
	if (np->owed >= ofi->ncredits / 2)
		bip_ofi_send_ctl(ofi, src, BIP_NETPROTO_CREDIT, 0);
	return n;
}

void bip_ofi_protocol_error(struct bip_ofi *ofi, const struct bip_netproto_hdr *h, size_t len)
{
	fprintf(stderr, "bip: node %d: ofi: dropped a malformed message (%zu bytes, kind %u, "
		"from node %u, seq %u)\n", ofi->mynode, len, h->kind, h->src, h->seq);
}

/* The answer to a peer's goodbye, now or as soon as a send buffer is
 * free (answers_flush). */
static void answer_bye(struct bip_ofi *ofi, int src)
{
	struct bip_ofi_peer *p = &ofi->peers[src];

	if (p->answer_owed || p->dead)
		return;
	if (bip_ofi_send_note(ofi, src, OFI_NOTE_BYE_OK) == -EAGAIN) {
		p->answer_owed = 1;
		ofi->nanswers++;
	}
}

static void answers_flush(struct bip_ofi *ofi)
{
	int i;

	for (i = 0; i < ofi->numnodes && ofi->nanswers; i++) {
		struct bip_ofi_peer *p = &ofi->peers[i];

		if (!p->answer_owed)
			continue;
		if (!p->dead && bip_ofi_send_note(ofi, i, OFI_NOTE_BYE_OK) == -EAGAIN)
			return;
		p->answer_owed = 0;
		ofi->nanswers--;
	}
}

/* A note of nothing from src: its goodbye (answered), or the answer to
 * ours.  Other ids (the first note's 0) say nothing more. */
static void note_came(struct bip_ofi *ofi, int src, uint32_t id)
{
	if (id == OFI_NOTE_BYE) {
		ofi->peers[src].closed = 1;
		answer_bye(ofi, src);
	} else if (id == OFI_NOTE_BYE_OK) {
		ofi->peers[src].bye_answered = 1;
	}
}

static int handle_rx(struct bip_ofi *ofi, struct bip_ofi_slot *s, size_t len)
{
	const struct bip_netproto_hdr *h = (const struct bip_netproto_hdr *)s->buf;
	struct bip_netproto_peer *np;

	if (len < sizeof(*h) || h->src >= (uint32_t)ofi->numnodes ||
	    (!ofi->peers[h->src].served && !bip_ofi_reach_sender(ofi, h->src)))
		goto bad;
	if (bip_ofi_link_heard(ofi, (int)h->src) < 0)
		goto bad;
	np = &ofi->peers[h->src].np;
	np->credits += h->credits;
	bip_ofi_eager_credit(&ofi->peers[h->src], h->rsv);
	switch (h->kind) {
	case BIP_NETPROTO_SHORT:
	case BIP_NETPROTO_RTS:
		if ((h->kind == BIP_NETPROTO_SHORT && h->len != len - sizeof(*h)) ||
		    bip_netproto_hold(np, ofi->ncredits, h, s))
			goto bad;
		ofi->nheld++;
		return bip_ofi_deliver(ofi, (int)h->src);
	case BIP_NETPROTO_CTS:
		bip_ofi_cts(ofi, (int)h->src, h->id);
		break;
	case BIP_NETPROTO_CREDIT:
		note_came(ofi, (int)h->src, h->id);
		break;
	default:
		goto bad;
	}
	rx_repost(ofi, s);
	return 0;
bad:
	bip_ofi_protocol_error(ofi, h, len);
	rx_repost(ofi, s);
	return 0;
}

static int handle_completion(struct bip_ofi *ofi, struct bip_ofi_ctx *ctx, size_t len, int status)
{
	struct bip_ofi_slot *s = (struct bip_ofi_slot *)ctx;

	switch (ctx->kind) {
	case BIP_OFI_CTX_RX:
		if (status == 0)
			return handle_rx(ofi, s, len);
		if (status != -FI_ECANCELED) {
			fprintf(stderr, "bip: node %d: ofi: receive failed: %s\n", ofi->mynode,
				fi_strerror(-status));
			rx_repost(ofi, s);
		}
		return 0;
	case BIP_OFI_CTX_ERX:
		if (status == 0)
			return bip_ofi_eager_rx(ofi, (struct bip_ofi_ebuf *)ctx, len);
		if (status != -FI_ECANCELED) {
			fprintf(stderr, "bip: node %d: ofi: receive into a bounce buffer failed: %s\n",
				ofi->mynode, fi_strerror(-status));
			bip_ofi_eager_repost(ofi, (struct bip_ofi_ebuf *)ctx);
		}
		return 0;
	case BIP_OFI_CTX_TX:
		if (status) {
			struct bip_ofi_peer *p = &ofi->peers[s->dst];

			/* Not said once it has closed (its last note) or
			 * ended: a relay's last packets often go to a node
			 * that has just finished. */
			if (!p->dead && !p->closed &&
			    (!p->same_kernel || bip_process_runs(p->pid)))
				fprintf(stderr, "bip: node %d: ofi: send to node %d failed: %s\n",
					ofi->mynode, s->dst, fi_strerror(-status));
			p->dead = 1;
		}
		ofi->tx_out--;
		bip_ofi_tx_put(ofi, s);
		return 0;
	case BIP_OFI_CTX_RMA:
		return bip_ofi_rma_done(ofi, ctx, status);
	default:
		return bip_ofi_chunk_done(ofi, (struct bip_ofi_chunk *)ctx, status);
	}
}

/* Read the completion queue; returns events or a negative errno. */
static int cq_drain(struct bip_ofi *ofi)
{
	struct fi_cq_tagged_entry ent[16];
	int events = 0, i;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(ofi->cq, ent, 16);
		if (n == -FI_EAGAIN)
			break;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e = { 0 };

			/* One-sided operations tell libfabric's own codes
			 * apart (ofi_rma.c); the rest take an errno. */
			if (fi_cq_readerr(ofi->cq, &e, 0) == 1 && e.op_context)
				events += handle_completion(
					ofi, e.op_context, e.len,
					e.err && (e.err < FI_ERRNO_OFFSET ||
						  ((struct bip_ofi_ctx *)e.op_context)->kind ==
							  BIP_OFI_CTX_RMA) ? -(int)e.err : -EIO);
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "bip: node %d: ofi: fi_cq_read: %s\n", ofi->mynode,
				fi_strerror((int)-n));
			return (int)n;
		}
		for (i = 0; i < n; i++)
			events += handle_completion(ofi, ent[i].op_context, ent[i].len, 0);
		if (n < 16)
			break;
	}
	return events;
}

/* Wake the threads asleep on the bell (bell_mode; nicsleep.c's protocol:
 * what the poll found is published, fence, then the count is read). */
static void ring_bell(struct bip_ofi *ofi)
{
	bip_fence();
	if (!bip_load_relaxed(&ofi->sleepers))
		return;
	__atomic_fetch_add(&ofi->bell, 1, __ATOMIC_RELAXED);
	syscall(SYS_futex, &ofi->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int ofi_poll(struct bip_nic *nic)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	int events = 0, i, rc;

	if (bip_unlikely(ofi->nctl))
		ctl_flush(ofi);
	if (bip_unlikely(ofi->nanswers))
		answers_flush(ofi);
	if (bip_unlikely(ofi->lazy && (++ofi->link_polls >= OFI_LINK_POLLS ||
				       bip_ofi_link_busy(ofi) || ofi->nhello)))
		bip_ofi_link_progress(ofi);
	if (bip_unlikely(ofi->repost != NULL))
		repost_flush(ofi);
	if (bip_unlikely(ofi->erepost != NULL))
		bip_ofi_eager_repost_flush(ofi);
	if (bip_unlikely(ofi->lsend_pending || ofi->lrecv_pending))
		events += bip_ofi_long_progress(ofi);
	rc = cq_drain(ofi);
	if (rc < 0)
		return rc;
	events += rc;
	if (ofi->rma)
		events += bip_ofi_rma_progress(ofi);
	if (bip_unlikely(ofi->bell_mode) && events)
		ring_bell(ofi);
	if (bip_unlikely(ofi->nheld))
		for (i = 0; i < ofi->numnodes && ofi->nheld; i++)
			if (ofi->peers[i].np.nheld)
				events += bip_ofi_deliver(ofi, i);
	return events;
}

static int ofi_alive(struct bip_nic *nic, int node)
{
	return bip_ofi_link_alive(bip_ofi_of(nic), node);
}

/* A credit message of nothing through a send buffer, so that it has a
 * completion: the first message to a lower peer (ofi_link.c, id 0) and the
 * last (close, id OFI_NOTE_BYE). */
int bip_ofi_send_note(struct bip_ofi *ofi, int dst, uint32_t id)
{
	struct bip_ofi_slot *s = bip_ofi_tx_get(ofi);
	struct bip_netproto_hdr h = {
		.kind = BIP_NETPROTO_CREDIT, .src = (uint32_t)ofi->mynode, .id = id,
	};
	ssize_t rc;

	if (!s)
		return -EAGAIN;
	memcpy(s->buf, &h, sizeof(h));
	rc = fi_tsend(ofi->ep, s->buf, sizeof(h), ofi->tx_mr ? fi_mr_desc(ofi->tx_mr) : NULL,
		      ofi->peers[dst].addr, 0, &s->ctx.fi);
	if (rc) {
		bip_ofi_tx_put(ofi, s);
		return rc == -FI_EAGAIN ? -EAGAIN : -EIO;
	}
	s->dst = dst;
	ofi->tx_out++;
	ofi->peers[dst].sent_any = 1;
	return 0;
}

/* Seconds close waits for the provider to send what it holds. */
#define OFI_DRAIN 5.0
/* Seconds, within those, it waits for the answers to its goodbyes. */
#define OFI_BYE_WAIT 2.0
/* Seconds it waits, at most, for the data of a long receive from a peer
 * that has said goodbye (a program that ended with its send unfinished
 * never sends it). */
#define OFI_DRAIN_CLOSED 0.5

/* Whether a long receive is still taking its data from a peer that may
 * send it.  tcp;ofi_rxm takes a large message by reading it from the
 * sender, and closing the endpoint while a read's answer is half in
 * (libfabric 1.17's tcp provider) frees that read twice: the process
 * crashes in fi_close.  So close lets such reads end first. */
static int reads_open(struct bip_ofi *ofi, double closed_end)
{
	int i;

	for (i = 0; i < ofi->numnodes; i++) {
		struct bip_ofi_peer *p = &ofi->peers[i];

		if (p->lrecv_chunks && !p->dead && (!p->closed || now_s() < closed_end))
			return 1;
	}
	return 0;
}

/* A completion read while closing: what it ends is only counted (and a
 * long receive freed with its last chunk); of what arrives, only the
 * notes count: a goodbye is answered, and an answer is taken. */
static void close_done(struct bip_ofi *ofi, void *op_context, size_t len, int ok)
{
	struct bip_ofi_ctx *ctx = op_context;

	if (!ctx)
		return;
	if (ctx->kind == BIP_OFI_CTX_RX && ok) {
		const struct bip_netproto_hdr *h =
			(const struct bip_netproto_hdr *)((struct bip_ofi_slot *)ctx)->buf;

		if (len >= sizeof(*h) && h->kind == BIP_NETPROTO_CREDIT &&
		    h->src < (uint32_t)ofi->numnodes && ofi->peers[h->src].served)
			note_came(ofi, (int)h->src, h->id);
	} else if (ctx->kind == BIP_OFI_CTX_TX) {
		/* Free again for a goodbye that found none (ofi_close). */
		ofi->tx_out--;
		bip_ofi_tx_put(ofi, (struct bip_ofi_slot *)ctx);
	} else if (ctx->kind == BIP_OFI_CTX_LRECV) {
		bip_ofi_chunk_closing(ofi, (struct bip_ofi_chunk *)ctx);
	}
}

/* Whether a peer we sent to has not answered our goodbye, and may still
 * (it has not closed, nor ended: asked of the system now and then). */
static int answers_awaited(struct bip_ofi *ofi)
{
	int i;

	for (i = 0; i < ofi->numnodes; i++) {
		struct bip_ofi_peer *p = &ofi->peers[i];

		if (p->bye_wait && !p->bye_owed && !p->bye_answered && !p->closed && !p->dead &&
		    !bip_ofi_link_ended(ofi, i))
			return 1;
	}
	return 0;
}

static void ofi_close(struct bip_nic *nic)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	double start = now_s(), end = start + OFI_DRAIN;
	int i, owed = 0;

	/* An inject is complete for us at once but may still sit in the
	 * provider.  A last message with a completion to every peer we sent
	 * to follows it on the same path (tagged sends to a peer are ordered):
	 * once those complete, everything before them has left.  The peers
	 * that sent to us get it too: it tells them that a send to this
	 * process failing from now on is no news.  Not to those that have
	 * closed or ended: there is no one to connect to.  A goodbye that
	 * finds no room (a free slot, or the provider's queue, full of what
	 * was just sent) is posted again while the queue drains: closing
	 * without it closed the endpoint on the injects still queued, and the
	 * last messages of a process that sent many before it ended were
	 * lost (conformance ordering on 8 nodes over tcp, on a loaded host).
	 *
	 * Left is not arrived, though: over tcp;ofi_rxm, closing the
	 * endpoint closes the sockets, and a socket closed with something
	 * unread in it is reset; a reset peer's kernel drops what it holds
	 * and its provider has not read yet, the tail of this process's
	 * messages and the goodbye with them (the same test, about one run
	 * in a hundred).  So the peers we sent to answer the goodbye once
	 * they have read it, and everything before it; close waits for the
	 * answers, for OFI_BYE_WAIT at most (a peer that computes outside
	 * BIP answers only when it comes back), unless the peer ends or
	 * closes first.  Its own goodbye, meanwhile, is answered here. */
	if (ofi->cq)
		for (i = 0; i < ofi->numnodes; i++) {
			struct bip_ofi_peer *p = &ofi->peers[i];

			p->bye_owed = (p->sent_any || p->heard) && !p->dead && !p->closed;
			p->bye_wait = p->bye_owed && p->sent_any;
			owed += p->bye_owed;
		}
	while (ofi->cq && (owed || ofi->tx_out || ofi->nctl || ofi->nanswers ||
			   reads_open(ofi, start + OFI_DRAIN_CLOSED) ||
			   (now_s() < start + OFI_BYE_WAIT && answers_awaited(ofi))) &&
	       now_s() < end) {
		struct fi_cq_tagged_entry ent[16];
		ssize_t n;

		for (i = 0; owed && i < ofi->numnodes; i++)
			if (ofi->peers[i].bye_owed &&
			    bip_ofi_send_note(ofi, i, OFI_NOTE_BYE) != -EAGAIN) {
				ofi->peers[i].bye_owed = 0;
				owed--;
			}
		if (ofi->nctl)
			ctl_flush(ofi);
		if (ofi->nanswers)
			answers_flush(ofi);
		n = fi_cq_read(ofi->cq, ent, 16);
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e = { 0 };

			fi_cq_readerr(ofi->cq, &e, 0);
			close_done(ofi, e.op_context, 0, 0);
			continue;
		}
		for (i = 0; i < n; i++)
			close_done(ofi, ent[i].op_context, ent[i].len, 1);
		if (n <= 0)
			sched_yield();
	}
	ofi_close_endpoint(ofi);
	bip_ofi_link_fini(ofi);
	if (ofi->wait_fd >= 0)
		close(ofi->wait_fd);
	if (ofi->info)
		fi_freeinfo(ofi->info);
	if (ofi->peers)
		for (i = 0; i < ofi->numnodes; i++) {
			bip_netproto_peer_fini(&ofi->peers[i].np);
			if (ofi->peers[i].live_fd >= 0)
				close(ofi->peers[i].live_fd);
		}
	if (ofi->live_fd >= 0)
		close(ofi->live_fd);
	free(ofi->peers);
	free(ofi->self_blob);
	while (ofi->rxchunks) {
		struct bip_ofi_rxchunk *c = ofi->rxchunks;

		ofi->rxchunks = c->next;
		free(c->mem);
		free(c);
	}
	free(ofi->tx);
	free(ofi->tx_mem);
	bip_ofi_eager_free(ofi);
	free(ofi->ctl);
	free(ofi);
}

const struct bip_nic_ops bip_ofi_ops = {
	.name = "ofi",
	.network = 1,
	.available = ofi_available,
	.open = ofi_open,
	.post_short = ofi_post_short,
	.post_long = bip_ofi_post_long,
	.post_long_recv = bip_ofi_post_long_recv,
	.poll = ofi_poll,
	.alive = ofi_alive,
	.close = ofi_close,
	.reach = ofi_reach,
	.rma_capable = bip_ofi_rma_capable,
	.rma_expose = bip_ofi_rma_expose,
	.rma_withdraw = bip_ofi_rma_withdraw,
	.rma_post = bip_ofi_rma_post,
};
