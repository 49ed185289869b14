/* SPDX-License-Identifier: MIT */
/*
 * psm2.c - the psm2 driver: Omni-Path through libpsm2's matched queues.
 *
 * It can run only where an Omni-Path adapter is: the hfi1 kernel driver
 * shows it as /dev/hfi1_<unit>.  libpsm2 is loaded when the driver is first
 * used (as libfabric is by the ofi driver, and for the same reason: its
 * load installs crash handlers that turn a SIGSEGV into exit status 1; the
 * program's handlers are put back after the load).
 *
 * The protocol is the ofi driver's (drivers/netproto.h), on psm2 tags
 * of three 32-bit words:
 *   tag2 = 0   a control message into a pre-posted pool buffer: a header
 *              (kind, source, tag, length, sequence, credits, id) and the
 *              payload of a short message
 *   tag2 = 1   data of a long message straight into the user's buffer:
 *              tag1 = the sender's node, tag0 = the sender's long send id
 * Short messages and long announcements are sequenced and credited per
 * peer; the receiver posts a long message's buffer, then sends a
 * clear-to-send, and the sender sends from the user's buffer.
 *
 * Start-up exchanges the endpoint ids and connects to no one: a peer is
 * connected (psm2_ep_connect, for that one peer) when the first message
 * goes to it, a clear-to-send or a credit included.  Receiving needs no
 * connection of ours: libpsm2 takes what comes from a peer that connected
 * to us, and connecting back to it returns the same address.  Two peers
 * that connect to each other at once are libpsm2's to order (each
 * psm2_ep_connect makes progress on its own endpoint, so each answers the
 * other's request).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <psm2.h>
#include <psm2_mq.h>

#include "atomics.h"
#include "conf.h"
#include "drivers/netproto.h"
#include "nic.h"
#include "boot.h"
#include "oob.h"

/* --- libpsm2, loaded at first use --- */

static struct {
	psm2_error_t (*init)(int *, int *);
	psm2_error_t (*ep_open_opts_get_defaults)(struct psm2_ep_open_opts *);
	psm2_error_t (*ep_open)(const psm2_uuid_t, const struct psm2_ep_open_opts *, psm2_ep_t *,
				psm2_epid_t *);
	psm2_error_t (*ep_connect)(psm2_ep_t, int, const psm2_epid_t *, const int *,
				   psm2_error_t *, psm2_epaddr_t *, int64_t);
	psm2_error_t (*ep_close)(psm2_ep_t, int, int64_t);
	psm2_error_t (*mq_init)(psm2_ep_t, uint64_t, const struct psm2_optkey *, int,
				psm2_mq_t *);
	psm2_error_t (*mq_finalize)(psm2_mq_t);
	psm2_error_t (*mq_isend2)(psm2_mq_t, psm2_epaddr_t, uint32_t, psm2_mq_tag_t *,
				  const void *, uint32_t, void *, psm2_mq_req_t *);
	psm2_error_t (*mq_irecv2)(psm2_mq_t, psm2_epaddr_t, psm2_mq_tag_t *, psm2_mq_tag_t *,
				  uint32_t, void *, uint32_t, void *, psm2_mq_req_t *);
	psm2_error_t (*mq_ipeek2)(psm2_mq_t, psm2_mq_req_t *, psm2_mq_status2_t *);
	psm2_error_t (*mq_test2)(psm2_mq_req_t *, psm2_mq_status2_t *);
	psm2_error_t (*poll)(psm2_ep_t);
	const char *(*error_get_string)(psm2_error_t);
} psm;

static int bip_psm2_load(char *why, size_t len)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction saved[sizeof(sigs) / sizeof(sigs[0])];
	static int loaded, inited;
	size_t i;
	void *h;

	if (!loaded) {
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], NULL, &saved[i]);
		h = dlopen("libpsm2.so.2", RTLD_NOW | RTLD_LOCAL);
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &saved[i], NULL);
		if (!h) {
			snprintf(why, len, "cannot load libpsm2: %s", dlerror());
			return -1;
		}
#define PSM_SYM(field, name)                                               \
	do {                                                               \
		psm.field = (__typeof__(psm.field))dlsym(h, name);         \
		if (!psm.field) {                                          \
			snprintf(why, len, "libpsm2.so.2 lacks %s", name); \
			dlclose(h);                                        \
			return -1;                                         \
		}                                                          \
	} while (0)
		PSM_SYM(init, "psm2_init");
		PSM_SYM(ep_open_opts_get_defaults, "psm2_ep_open_opts_get_defaults");
		PSM_SYM(ep_open, "psm2_ep_open");
		PSM_SYM(ep_connect, "psm2_ep_connect");
		PSM_SYM(ep_close, "psm2_ep_close");
		PSM_SYM(mq_init, "psm2_mq_init");
		PSM_SYM(mq_finalize, "psm2_mq_finalize");
		PSM_SYM(mq_isend2, "psm2_mq_isend2");
		PSM_SYM(mq_irecv2, "psm2_mq_irecv2");
		PSM_SYM(mq_ipeek2, "psm2_mq_ipeek2");
		PSM_SYM(mq_test2, "psm2_mq_test2");
		PSM_SYM(poll, "psm2_poll");
		PSM_SYM(error_get_string, "psm2_error_get_string");
#undef PSM_SYM
		loaded = 1;
	}
	if (!inited) {
		int major = PSM2_VERNO_MAJOR, minor = PSM2_VERNO_MINOR;
		psm2_error_t e = psm.init(&major, &minor);

		if (e != PSM2_OK) {
			snprintf(why, len, "psm2_init: %s", psm.error_get_string(e));
			return -1;
		}
		/* Once per process: libpsm2 cannot start again after psm2_finalize. */
		inited = 1;
	}
	return 0;
}

/* --- state --- */

#define PSM2_SLOT 320
#define PSM2_LSENDS 4096
#define PSM2_TXSLOTS 256

enum { CTX_RX, CTX_TX, CTX_LSEND, CTX_LRECV };

struct bip_psm2_slot {
	uint8_t kind;
	int dst;
	uint8_t *buf;
	struct bip_psm2_slot *next;
};

struct bip_psm2_lsend {
	uint8_t kind;                     /* CTX_LSEND */
	uint32_t gen;
	int dst;
	const void *buf;
	size_t len;
	uint64_t cookie;
	int cts;
};

struct bip_psm2_lrecv {
	uint8_t kind;                     /* CTX_LRECV */
	uint64_t cookie;
};

struct bip_psm2_peer {
	int served;
	psm2_epid_t epid;                 /* from the address exchange */
	psm2_epaddr_t addr;               /* once connected (peer_addr), else NULL */
	int same_kernel, pid;
	struct bip_netproto_peer np;
};

struct bip_psm2_blob {
	uint64_t epid;
	char boot_id[40];
	uint64_t pidns;
	uint32_t pid;
	uint32_t rsv;
};

struct bip_psm2 {
	struct bip_nic nic;
	int mynode, numnodes;
	psm2_ep_t ep;
	psm2_mq_t mq;
	uint32_t ncredits;
	struct bip_psm2_peer *peers;
	uint8_t *rx_mem, *tx_mem;
	struct bip_psm2_slot *rx, *tx, *tx_free;
	int nrx, tx_out, nheld;
	struct bip_psm2_cts {
		int dst;
		uint32_t id;
	} *ctsq;                          /* clear-to-sends waiting for a send buffer */
	int nctsq, ctsq_cap;
	int credit_retry;                 /* a credit message found no send buffer */
	struct bip_psm2_lsend lsend[PSM2_LSENDS];
	uint16_t lfree[PSM2_LSENDS];
	int nlfree;
	int64_t connect_ns;               /* psm2_ep_connect's time-out (the start-up one) */
};

static struct bip_psm2 *psm2_of(struct bip_nic *nic)
{
	return (struct bip_psm2 *)nic;
}

static psm2_mq_tag_t make_tag(uint32_t t0, uint32_t t1, uint32_t t2)
{
	psm2_mq_tag_t t;

	memset(&t, 0, sizeof(t));
	t.tag0 = t0;
	t.tag1 = t1;
	t.tag2 = t2;
	return t;
}

/* --- availability --- */

static int bip_psm2_device_present(void)
{
	DIR *d = opendir("/dev");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		found = !strncmp(e->d_name, "hfi1_", 5);
	closedir(d);
	return found;
}

static int bip_psm2_available(char *why, size_t len)
{
	if (!bip_psm2_device_present()) {
		snprintf(why, len, "no Omni-Path device (no /dev/hfi1_*)");
		return 0;
	}
	return bip_psm2_load(why, len) == 0;
}

/* --- sending --- */

static int post_rx(struct bip_psm2 *p2, struct bip_psm2_slot *s)
{
	psm2_mq_tag_t tag = make_tag(0, 0, 0), sel = make_tag(0, 0, 0xffffffffu);
	psm2_mq_req_t req;

	return psm.mq_irecv2(p2->mq, PSM2_MQ_ANY_ADDR, &tag, &sel, 0, s->buf, PSM2_SLOT, s,
			     &req) == PSM2_OK ? 0 : -EIO;
}

/* The address of dst, connecting to it the first time (blocking, within
 * the start-up time-out); NULL if it cannot be reached (said once). */
static psm2_epaddr_t peer_addr(struct bip_psm2 *p2, int dst)
{
	struct bip_psm2_peer *p = &p2->peers[dst];
	psm2_error_t e, err = PSM2_OK;
	psm2_epaddr_t addr;

	if (p->addr)
		return p->addr;
	if (!p->served || !p->epid)
		return NULL;
	e = psm.ep_connect(p2->ep, 1, &p->epid, NULL, &err, &addr, p2->connect_ns);
	if (e != PSM2_OK) {
		fprintf(stderr, "bip: node %d: psm2: cannot connect to node %d: %s\n",
			p2->mynode, dst, psm.error_get_string(err != PSM2_OK ? err : e));
		p->epid = 0; /* not asked again */
		return NULL;
	}
	p->addr = addr;
	return addr;
}

static int transmit(struct bip_psm2 *p2, int dst, const struct bip_netproto_hdr *h,
		    const void *payload, size_t plen)
{
	struct bip_psm2_slot *s = p2->tx_free;
	psm2_mq_tag_t tag = make_tag(0, 0, 0);
	psm2_epaddr_t addr;
	psm2_mq_req_t req;
	psm2_error_t e;

	if (!s)
		return -EAGAIN;
	addr = peer_addr(p2, dst);
	if (!addr)
		return -EHOSTUNREACH;
	memcpy(s->buf, h, sizeof(*h));
	if (plen)
		memcpy(s->buf + sizeof(*h), payload, plen);
	e = psm.mq_isend2(p2->mq, addr, 0, &tag, s->buf,
			  (uint32_t)(sizeof(*h) + plen), s, &req);
	if (e != PSM2_OK) {
		fprintf(stderr, "bip: node %d: psm2: send to node %d: %s\n", p2->mynode, dst,
			psm.error_get_string(e));
		return -EIO;
	}
	p2->tx_free = s->next;
	s->dst = dst;
	p2->tx_out++;
	return 0;
}

static int post_msg(struct bip_psm2 *p2, int dst, uint8_t kind, uint32_t tag, uint32_t len,
		    uint32_t id, const void *payload, size_t plen)
{
	struct bip_netproto_peer *np = &p2->peers[dst].np;
	struct bip_netproto_hdr h;
	int rc;

	rc = bip_netproto_msg_hdr(np, p2->mynode, kind, tag, len, id, &h);
	if (rc)
		return rc;
	rc = transmit(p2, dst, &h, payload, plen);
	bip_netproto_msg_sent(np, &h, rc);
	return rc < 0 ? rc : 0;
}

/* A control message; with no send buffer free, it is dropped only for
 * credits (returned with a later message), never for a CTS (retried). */
static int send_ctl(struct bip_psm2 *p2, int dst, uint8_t kind, uint32_t id)
{
	struct bip_netproto_peer *np = &p2->peers[dst].np;
	struct bip_netproto_hdr h = bip_netproto_ctl_hdr(np, p2->mynode, kind, id);
	int rc = transmit(p2, dst, &h, NULL, 0);

	if (rc < 0)
		bip_netproto_unsent(np, &h);
	return rc;
}

static int bip_psm2_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf,
			       size_t len)
{
	return post_msg(psm2_of(nic), dst, BIP_NETPROTO_SHORT, tag, (uint32_t)len, 0, buf, len);
}

static int bip_psm2_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf,
			      size_t len, uint64_t cookie)
{
	struct bip_psm2 *p2 = psm2_of(nic);
	struct bip_psm2_lsend *l;
	uint32_t gen, idx;
	int rc;

	if (!p2->nlfree)
		return -EAGAIN;
	idx = p2->lfree[p2->nlfree - 1];
	l = &p2->lsend[idx];
	gen = (l->gen + 1) & 0xfffff;
	if (!gen)
		gen = 1;
	rc = post_msg(p2, dst, BIP_NETPROTO_RTS, tag, (uint32_t)len, idx | (gen << 12), NULL, 0);
	if (rc < 0)
		return rc;
	p2->nlfree--;
	*l = (struct bip_psm2_lsend){
		.kind = CTX_LSEND, .gen = gen, .dst = dst, .buf = buf, .len = len,
		.cookie = cookie,
	};
	return 0;
}

static void cts_arrived(struct bip_psm2 *p2, int src, uint32_t id)
{
	struct bip_psm2_lsend *l = &p2->lsend[id & 0xfff];
	psm2_mq_tag_t tag = make_tag(id, (uint32_t)p2->mynode, 1);
	psm2_error_t e = PSM2_EPID_UNREACHABLE;
	psm2_epaddr_t addr;
	psm2_mq_req_t req;

	if (l->gen != id >> 12 || l->dst != src || l->cts) {
		fprintf(stderr, "bip: node %d: psm2: node %d asked for long send %u, which is "
			"not waiting\n", p2->mynode, src, id);
		return;
	}
	l->cts = 1;
	addr = peer_addr(p2, src); /* connected already: the RTS went to it */
	if (addr)
		e = psm.mq_isend2(p2->mq, addr, 0, &tag, l->buf, (uint32_t)l->len, l, &req);
	if (e != PSM2_OK) {
		uint64_t cookie = l->cookie;

		fprintf(stderr, "bip: node %d: psm2: long send to node %d: %s\n", p2->mynode,
			src, psm.error_get_string(e));
		l->dst = -1;
		p2->lfree[p2->nlfree++] = (uint16_t)(l - p2->lsend);
		bip_core_send_done(cookie, -EIO);
	}
}

static int bip_psm2_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
				   uint64_t cookie)
{
	struct bip_psm2 *p2 = psm2_of(nic);
	int src = (int)(handle >> 32);
	uint32_t id = (uint32_t)handle;
	psm2_mq_tag_t tag = make_tag(id, (uint32_t)src, 1);
	psm2_mq_tag_t sel = make_tag(0xffffffffu, 0xffffffffu, 0xffffffffu);
	struct bip_psm2_lrecv *r = malloc(sizeof(*r));
	psm2_mq_req_t req;
	psm2_error_t e;
	int rc;

	if (!r)
		return -ENOMEM;
	r->kind = CTX_LRECV;
	r->cookie = cookie;
	e = psm.mq_irecv2(p2->mq, PSM2_MQ_ANY_ADDR, &tag, &sel, 0, buf, (uint32_t)len, r, &req);
	if (e != PSM2_OK) {
		free(r);
		fprintf(stderr, "bip: node %d: psm2: long receive: %s\n", p2->mynode,
			psm.error_get_string(e));
		return -EIO;
	}
	/* The CTS needs a send buffer: without one, it waits for poll. */
	if (p2->nctsq || (rc = send_ctl(p2, src, BIP_NETPROTO_CTS, id)) == -EAGAIN) {
		if (p2->nctsq == p2->ctsq_cap) {
			int cap = p2->ctsq_cap ? 2 * p2->ctsq_cap : 64;
			struct bip_psm2_cts *q = realloc(p2->ctsq, (size_t)cap * sizeof(*q));

			if (!q)
				return -ENOMEM; /* the posted receive stays unmatched */
			p2->ctsq = q;
			p2->ctsq_cap = cap;
		}
		p2->ctsq[p2->nctsq++] = (struct bip_psm2_cts){ .dst = src, .id = id };
		return 0;
	}
	return rc < 0 ? rc : 0;
}

static void cts_flush(struct bip_psm2 *p2)
{
	int i;

	for (i = 0; i < p2->nctsq; i++)
		if (send_ctl(p2, p2->ctsq[i].dst, BIP_NETPROTO_CTS, p2->ctsq[i].id) == -EAGAIN)
			break;
	memmove(p2->ctsq, p2->ctsq + i, (size_t)(p2->nctsq - i) * sizeof(*p2->ctsq));
	p2->nctsq -= i;
}

/* --- receiving --- */

static int deliver(struct bip_psm2 *p2, int src)
{
	struct bip_netproto_peer *np = &p2->peers[src].np;
	struct bip_psm2_slot *s;
	int n = 0;

	while ((s = bip_netproto_next(np, p2->ncredits))) {
		if (bip_netproto_offer(src, s->buf) == -EAGAIN)
			break;
		bip_netproto_taken(np, p2->ncredits);
		p2->nheld--;
		if (post_rx(p2, s) < 0)
			fprintf(stderr, "bip: node %d: psm2: cannot post a receive buffer\n",
				p2->mynode);
		n++;
	}
	if (np->owed >= p2->ncredits / 2 && send_ctl(p2, src, BIP_NETPROTO_CREDIT, 0) < 0)
		p2->credit_retry = 1; /* no send buffer: poll tries again */
	return n;
}

static int handle_rx(struct bip_psm2 *p2, struct bip_psm2_slot *s, uint32_t len)
{
	const struct bip_netproto_hdr *h = (const struct bip_netproto_hdr *)s->buf;
	struct bip_netproto_peer *np;

	if (len < sizeof(*h) || h->src >= (uint32_t)p2->numnodes || !p2->peers[h->src].served)
		goto repost;
	np = &p2->peers[h->src].np;
	np->credits += h->credits;
	if (h->kind == BIP_NETPROTO_SHORT || h->kind == BIP_NETPROTO_RTS) {
		if (bip_netproto_hold(np, p2->ncredits, h, s))
			goto repost;
		p2->nheld++;
		return deliver(p2, (int)h->src);
	}
	if (h->kind == BIP_NETPROTO_CTS)
		cts_arrived(p2, (int)h->src, h->id);
repost:
	post_rx(p2, s);
	return 0;
}

static int bip_psm2_poll(struct bip_nic *nic)
{
	struct bip_psm2 *p2 = psm2_of(nic);
	psm2_mq_status2_t st;
	psm2_mq_req_t req;
	int events = 0, i;

	psm.poll(p2->ep);
	if (p2->nctsq)
		cts_flush(p2);
	while (psm.mq_ipeek2(p2->mq, &req, NULL) == PSM2_OK) {
		uint8_t kind;
		int status;

		psm.mq_test2(&req, &st);
		kind = *(uint8_t *)st.context;
		status = st.error_code == PSM2_OK ? 0 : -EIO;
		if (kind == CTX_RX) {
			if (status == 0)
				events += handle_rx(p2, st.context, st.nbytes);
			else
				post_rx(p2, st.context);
		} else if (kind == CTX_TX) {
			struct bip_psm2_slot *s = st.context;

			s->next = p2->tx_free;
			p2->tx_free = s;
			p2->tx_out--;
		} else if (kind == CTX_LSEND) {
			struct bip_psm2_lsend *l = st.context;
			uint64_t cookie = l->cookie;

			l->dst = -1;
			l->cts = 0;
			p2->lfree[p2->nlfree++] = (uint16_t)(l - p2->lsend);
			bip_core_send_done(cookie, status);
			events++;
		} else {
			struct bip_psm2_lrecv *r = st.context;
			uint64_t cookie = r->cookie;

			free(r);
			bip_core_recv_done(cookie, status);
			events++;
		}
	}
	if (p2->nheld)
		for (i = 0; i < p2->numnodes && p2->nheld; i++)
			if (p2->peers[i].np.nheld)
				events += deliver(p2, i);
	if (p2->credit_retry) {
		p2->credit_retry = 0;
		for (i = 0; i < p2->numnodes; i++)
			if (p2->peers[i].served && p2->peers[i].np.owed >= p2->ncredits / 2 &&
			    send_ctl(p2, i, BIP_NETPROTO_CREDIT, 0) < 0)
				p2->credit_retry = 1;
	}
	return events;
}

static int bip_psm2_alive(struct bip_nic *nic, int node)
{
	struct bip_psm2_peer *p = &psm2_of(nic)->peers[node];

	if (!p->same_kernel)
		return 1; /* another host: libpsm2 reports a lost peer on its own */
	return !(kill(p->pid, 0) < 0 && errno == ESRCH);
}

/* --- start-up --- */

static void bip_psm2_close(struct bip_nic *nic);

static int bip_psm2_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct bip_oob_job oj = {
		.mynode = job->mynode, .numnodes = job->numnodes, .conf = job->conf,
		.jobid = job->jobid, .what = "psm2", .timeout = job->timeout,
	};
	struct bip_psm2_blob me, *all = NULL;
	struct psm2_ep_open_opts opts;
	struct bip_psm2 *p2;
	psm2_epid_t epid;
	psm2_error_t e;
	psm2_uuid_t uuid;
	int i, rc, nserved = 0;
	const char *c;
	uint64_t h = 1469598103934665603ull;

	if (bip_psm2_load(job->err, job->errlen) < 0)
		return -ENODEV;
	p2 = calloc(1, sizeof(*p2));
	if (!p2)
		return -ENOMEM;
	p2->nic.ops = &bip_psm2_ops;
	p2->nic.max_short = PSM2_SLOT - sizeof(struct bip_netproto_hdr);
	p2->nic.desc = "psm2";
	p2->mynode = job->mynode;
	p2->numnodes = job->numnodes;
	p2->ncredits = 64;
	p2->connect_ns = (int64_t)(job->timeout * 1e9);
	for (i = PSM2_LSENDS; i-- > 0;)
		p2->lfree[p2->nlfree++] = (uint16_t)i;
	rc = -ENOMEM;
	p2->peers = calloc((size_t)job->numnodes, sizeof(*p2->peers));
	if (!p2->peers)
		goto undo;
	for (i = 0; i < job->numnodes; i++) {
		if (!job->serve[i])
			continue;
		nserved++;
		p2->peers[i].served = 1;
		if (bip_netproto_peer_init(&p2->peers[i].np, p2->ncredits) < 0)
			goto undo;
	}
	/* Every node of the job derives the same key from the job id. */
	for (c = job->jobid; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	memcpy(uuid, &h, sizeof(h));
	h = h * 1099511628211ull + 0x9e3779b97f4a7c15ull;
	memcpy(uuid + sizeof(h), &h, sizeof(h));
	psm.ep_open_opts_get_defaults(&opts);
	e = psm.ep_open(uuid, &opts, &p2->ep, &epid);
	if (e != PSM2_OK) {
		snprintf(job->err, job->errlen, "psm2: psm2_ep_open: %s",
			 psm.error_get_string(e));
		rc = -ENODEV;
		goto undo;
	}
	e = psm.mq_init(p2->ep, PSM2_MQ_ORDERMASK_ALL, NULL, 0, &p2->mq);
	if (e != PSM2_OK) {
		snprintf(job->err, job->errlen, "psm2: psm2_mq_init: %s",
			 psm.error_get_string(e));
		rc = -ENODEV;
		goto undo;
	}
	p2->nrx = nserved * (int)p2->ncredits + 64;
	p2->rx_mem = malloc((size_t)p2->nrx * PSM2_SLOT);
	p2->rx = calloc((size_t)p2->nrx, sizeof(*p2->rx));
	p2->tx_mem = malloc((size_t)PSM2_TXSLOTS * PSM2_SLOT);
	p2->tx = calloc(PSM2_TXSLOTS, sizeof(*p2->tx));
	if (!p2->rx_mem || !p2->rx || !p2->tx_mem || !p2->tx)
		goto undo;
	for (i = 0; i < PSM2_TXSLOTS; i++) {
		p2->tx[i] = (struct bip_psm2_slot){ .kind = CTX_TX,
						    .buf = p2->tx_mem + (size_t)i * PSM2_SLOT,
						    .next = p2->tx_free };
		p2->tx_free = &p2->tx[i];
	}
	for (i = 0; i < p2->nrx; i++) {
		p2->rx[i] = (struct bip_psm2_slot){ .kind = CTX_RX,
						    .buf = p2->rx_mem + (size_t)i * PSM2_SLOT };
		if (post_rx(p2, &p2->rx[i]) < 0) {
			snprintf(job->err, job->errlen, "psm2: cannot post receive buffers");
			rc = -EIO;
			goto undo;
		}
	}
	memset(&me, 0, sizeof(me));
	me.epid = epid;
	bip_netproto_kernel_id(me.boot_id, sizeof(me.boot_id), &me.pidns);
	me.pid = (uint32_t)getpid();
	all = calloc((size_t)job->numnodes, sizeof(*all));
	if (!all)
		goto undo;
	rc = bip_boot_allgather(&oj, &me, sizeof(me), all, job->err, job->errlen);
	if (rc < 0)
		goto undo;
	/* Connected on first use (peer_addr), not here. */
	for (i = 0; i < job->numnodes; i++) {
		struct bip_psm2_peer *p = &p2->peers[i];

		if (!p->served)
			continue;
		if (!all[i].epid) {
			snprintf(job->err, job->errlen, "psm2: node %d (%s) gave no endpoint id", i,
				 job->conf->nodes[i].host);
			rc = -EPROTO;
			goto undo;
		}
		p->epid = all[i].epid;
		p->pid = (int)all[i].pid;
		p->same_kernel = !strcmp(all[i].boot_id, me.boot_id) && all[i].pidns == me.pidns;
	}
	free(all);
	*nic_p = &p2->nic;
	return 0;

undo:
	if (rc == -ENOMEM && !job->err[0])
		snprintf(job->err, job->errlen, "psm2: out of memory");
	free(all);
	bip_psm2_close(&p2->nic);
	return rc;
}

static void bip_psm2_close(struct bip_nic *nic)
{
	struct bip_psm2 *p2 = psm2_of(nic);
	struct timespec t0, t;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Let the sends still in the endpoint leave (5 s at most). */
	while (p2->mq && p2->tx_out) {
		psm2_mq_status2_t st;
		psm2_mq_req_t req;

		psm.poll(p2->ep);
		while (psm.mq_ipeek2(p2->mq, &req, NULL) == PSM2_OK) {
			psm.mq_test2(&req, &st);
			if (*(uint8_t *)st.context == CTX_TX)
				p2->tx_out--;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			break;
	}
	if (p2->mq)
		psm.mq_finalize(p2->mq);
	if (p2->ep)
		psm.ep_close(p2->ep, PSM2_EP_CLOSE_GRACEFUL, 1000000000ll);
	if (p2->peers)
		for (i = 0; i < p2->numnodes; i++)
			bip_netproto_peer_fini(&p2->peers[i].np);
	free(p2->peers);
	free(p2->rx);
	free(p2->rx_mem);
	free(p2->tx);
	free(p2->tx_mem);
	free(p2->ctsq);
	free(p2);
}

const struct bip_nic_ops bip_psm2_ops = {
	.name = "psm2",
	.network = 1,
	.available = bip_psm2_available,
	.open = bip_psm2_open,
	.post_short = bip_psm2_post_short,
	.post_long = bip_psm2_post_long,
	.post_long_recv = bip_psm2_post_long_recv,
	.poll = bip_psm2_poll,
	.alive = bip_psm2_alive,
	.close = bip_psm2_close,
};
