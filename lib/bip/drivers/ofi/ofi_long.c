/* SPDX-License-Identifier: MIT */
/*
 * ofi_long.c - long messages of the ofi driver, and the registration cache.
 *
 * Eager, for a message of at most the peer's eager limit (the smaller of
 * the two nodes' BIP_OFI_EAGER, 16 KiB by default; 0 turns it off) while
 * the sender holds one of the peer's bounce buffer credits:
 *   sender    one tagged message (wire tag BIP_OFI_EAGER_BIT): the header
 *             (kind BIP_OFI_EAGER_KIND, sequenced and credited like an RTS,
 *             so that it keeps its place among the shorts and
 *             announcements), then the data, gathered from a send buffer
 *             and the user's buffer (registered through the cache where the
 *             provider asks), with no copy; the provider's completion
 *             completes the send, no CTS is awaited
 *   receiver  the message lands in a bounce buffer, a pool of
 *             BIP_OFI_EAGER_BUFS buffers per peer (8 by default) posted at
 *             start-up for any source; its length is checked against the
 *             header's and its source against the credits it was given; the
 *             header's id is rewritten to name the buffer, and the message
 *             is offered to the core as a long announcement.  When the core
 *             gives the buffer (post_long_recv, at once from inside
 *             bip_core_long_arrived when a receive is posted, else when the
 *             program posts one), the data is copied there, post_long_recv
 *             returns 1, the bounce buffer is posted again and its credit
 *             owed to the sender.
 * The credits come back in the rsv byte of any message to the sender, or
 * in a credit message once half of them are owed.  A sender out of credits,
 * or with a message above the limit, uses the rendezvous below: the pool is
 * bounded, nothing waits for it, and a receiver that posts no receives only
 * turns its senders to the rendezvous.  The data always passes through the
 * bounce buffer (one copy, of at most the limit): it has left the sender
 * before the receiver knows of it, so no receive can be posted for it.
 * Only the program's own tags (below NTAGS) go eagerly: a layer's long
 * message (the MPI shim's) stays at the sender until the layer calls
 * bip_layer_recv_long, as bip_layer(3) says, and the shim's synchronous
 * sends rely on it.  The one exception is the forwarding layer's tag
 * (BIP_TAG_FWD, fwd.c): no sender of it waits on where its packet is, the
 * reliability layer end to end acknowledges what arrives, and a relay takes
 * a packet's data as soon as it has room; through relays the rendezvous
 * made every hop of a message with a long part a round trip of its own
 * (an 8-byte message went through two relays in 45 us between namespace
 * hosts, one of 256 bytes in 230 us).
 * The header makes the message 24 bytes longer than the data: with
 * tcp;ofi_rxm, a message near 16 KiB then exceeds ofi_rxm's own eager size
 * (FI_OFI_RXM_BUFFER_SIZE, 16384 with its header) and goes through its
 * segmented protocol, slower but correct (bip_ofi(7)).
 * Every node publishes its limit and buffer count in the address exchange;
 * with no bounce buffers (too many peers for BIP_OFI_EBUF_MEM) or a
 * provider that cannot gather two pieces (iov_limit < 2), a node takes or
 * sends no eager messages.
 *
 * Rendezvous with no copy on the host:
 *   sender    RTS (tag, length, its long send id) -- a credited message, in
 *             order with the shorts
 *   receiver  once the core gives the buffer: fi_trecv straight into it,
 *             with the data tag (sender, id, chunk), then CTS (id)
 *   sender    on CTS: fi_tsend from the user's buffer with the same tag;
 *             its completion completes the send
 * A message larger than the provider's largest transfer goes in chunks,
 * each with its own tag.
 *
 * Providers that ask for FI_MR_LOCAL get the user's buffers registered
 * through a small cache (BIP_OFI_MR_CACHE entries, least recently used
 * evicted), since registering costs far more than a short message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "ofi.h"

static int eager_send(struct bip_ofi *ofi, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie);
static int eager_recv(struct bip_ofi *ofi, int src, uint32_t id, void *buf, size_t len);

void bip_ofi_long_init(struct bip_ofi *ofi)
{
	int i;

	ofi->nlfree = 0;
	for (i = BIP_OFI_LSENDS; i-- > 0;)
		ofi->lfree[ofi->nlfree++] = (uint16_t)i;
}

void bip_ofi_long_fini(struct bip_ofi *ofi)
{
	struct bip_ofi_lrecv *r;
	int i;

	for (i = 0; i < BIP_OFI_LSENDS; i++) {
		free(ofi->lsend[i].chunks);
		ofi->lsend[i].chunks = NULL;
	}
	while ((r = ofi->lrecv_pending)) {
		ofi->lrecv_pending = r->next_pending;
		free(r->chunks);
		free(r);
	}
	/* Receives posted and never completed are lost with the endpoint. */
	for (i = 0; i < ofi->nmrs; i++) {
		fi_close(&ofi->mrs[i]->mr->fid);
		free(ofi->mrs[i]);
	}
	ofi->nmrs = 0;
	for (i = 0; i < ofi->nechunks; i++)
		if (ofi->echunks[i]->mr) {
			fi_close(&ofi->echunks[i]->mr->fid);
			ofi->echunks[i]->mr = NULL;
		}
}

/* --- registration cache --- */

/* libfabric's own codes (256 and up) mean nothing to strerror: say what
 * the provider said, and give the core a plain errno. */
static int errno_of(struct bip_ofi *ofi, const char *what, int rc)
{
	if (rc > -FI_ERRNO_OFFSET)
		return rc;
	fprintf(stderr, "bip: node %d: ofi: %s: %s\n", ofi->mynode, what, fi_strerror(-rc));
	return -EIO;
}

/* Keys 0 and 1 are the receive and send buffers' (ofi.c); the bounce
 * buffers and the cache take theirs from here. */
static uint64_t mr_key = 1;

static int mr_register(struct bip_ofi *ofi, uintptr_t base, size_t len, struct bip_ofi_mr **mr_p)
{
	struct bip_ofi_mr *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	/* The one-sided operations' local buffers come from here too. */
	rc = fi_mr_reg(ofi->domain, (void *)base, len,
		       FI_SEND | FI_RECV | (ofi->rma ? FI_READ | FI_WRITE : 0), 0, ++mr_key, 0,
		       &m->mr, NULL);
	if (rc) {
		free(m);
		return errno_of(ofi, "fi_mr_reg", rc < 0 ? rc : -EIO);
	}
	m->base = base;
	m->len = len;
	*mr_p = m;
	return 0;
}

struct bip_ofi_mr *bip_ofi_mr_get(struct bip_ofi *ofi, const void *buf, size_t len)
{
	uintptr_t b = (uintptr_t)buf;
	struct bip_ofi_mr *m;
	int i, victim = -1, rc;

	for (i = 0; ofi->mr_cache && i < ofi->nmrs; i++) {
		m = ofi->mrs[i];
		if (m->base <= b && b + len <= m->base + m->len) {
			m->refs++;
			m->used = ++ofi->mr_clock;
			return m;
		}
	}
	rc = mr_register(ofi, b, len, &m);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	m->refs = 1;
	m->used = ++ofi->mr_clock;
	if (!ofi->mr_cache)
		return m;
	if (ofi->nmrs < BIP_OFI_MR_CACHE) {
		m->cached = 1;
		ofi->mrs[ofi->nmrs++] = m;
		return m;
	}
	for (i = 0; i < ofi->nmrs; i++)
		if (!ofi->mrs[i]->refs && (victim < 0 || ofi->mrs[i]->used < ofi->mrs[victim]->used))
			victim = i;
	if (victim >= 0) {
		fi_close(&ofi->mrs[victim]->mr->fid);
		free(ofi->mrs[victim]);
		m->cached = 1;
		ofi->mrs[victim] = m;
	}
	return m; /* every entry in use: this one goes at its last put */
}

void bip_ofi_mr_put(struct bip_ofi *ofi, struct bip_ofi_mr *m)
{
	(void)ofi;
	if (!m || --m->refs > 0 || m->cached)
		return;
	fi_close(&m->mr->fid);
	free(m);
}

void bip_ofi_mr_forget(struct bip_ofi *ofi, const void *base, size_t len)
{
	uintptr_t b = (uintptr_t)base;
	int i, kept = 0;

	for (i = 0; i < ofi->nmrs; i++) {
		struct bip_ofi_mr *m = ofi->mrs[i];

		if (m->refs || m->base + m->len <= b || b + len <= m->base) {
			ofi->mrs[kept++] = m;
			continue;
		}
		fi_close(&m->mr->fid);
		free(m);
	}
	ofi->nmrs = kept;
}

static void *mr_desc(struct bip_ofi_mr *m)
{
	return m ? fi_mr_desc(m->mr) : NULL;
}

static unsigned nchunks_of(struct bip_ofi *ofi, size_t len)
{
	return (unsigned)((len + ofi->chunk - 1) / ofi->chunk);
}

/* --- sending --- */

int bip_ofi_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	struct bip_ofi_lsend *l;
	struct bip_ofi_mr *mr = NULL;
	uint32_t gen, id;
	uint16_t idx;
	int rc;

	if (bip_unlikely(ofi->peers[dst].link != BIP_OFI_LINK_UP) &&
	    (rc = bip_ofi_link_need(ofi, dst)))
		return rc;
	if (!ofi->nlfree)
		return -EAGAIN;
	if (bip_nic_tag_eager(tag) && len <= ofi->peers[dst].eager_max &&
	    ofi->peers[dst].eager_credits) {
		rc = eager_send(ofi, dst, tag, buf, len, cookie);
		if (rc != -ENOBUFS)
			return rc;
	}
	idx = ofi->lfree[ofi->nlfree - 1];
	l = &ofi->lsend[idx];
	gen = (l->gen + 1) & 0xfff;
	if (!gen)
		gen = 1;
	id = idx | (gen << 12);
	if (ofi->mr_local) {
		mr = bip_ofi_mr_get(ofi, buf, len);
		if (!mr)
			return -errno;
	}
	rc = bip_ofi_post_msg(ofi, dst, BIP_NETPROTO_RTS, tag, (uint32_t)len, id, NULL, 0);
	if (rc < 0) {
		bip_ofi_mr_put(ofi, mr);
		return rc;
	}
	ofi->nlfree--;
	*l = (struct bip_ofi_lsend){
		.gen = gen, .dst = dst, .buf = buf, .len = len, .cookie = cookie, .mr = mr,
		.nchunks = nchunks_of(ofi, len),
	};
	return 0;
}

static void lsend_finish(struct bip_ofi *ofi, struct bip_ofi_lsend *l)
{
	int status = l->status;
	uint64_t cookie = l->cookie;

	bip_ofi_mr_put(ofi, l->mr);
	free(l->chunks);
	l->chunks = NULL;
	if (l->hdr)
		bip_ofi_tx_put(ofi, l->hdr);
	l->hdr = NULL;
	l->cts = 0;
	l->dst = -1;
	ofi->lfree[ofi->nlfree++] = (uint16_t)(l - ofi->lsend);
	bip_core_send_done(cookie, status);
}

/* Post the chunks of l that are not posted yet; 1 when all are. */
static int lsend_post(struct bip_ofi *ofi, struct bip_ofi_lsend *l)
{
	fi_addr_t addr = ofi->peers[l->dst].addr;
	uint32_t id = (uint32_t)(l - ofi->lsend) | (l->gen << 12);

	while (l->posted < l->nchunks) {
		size_t off = (size_t)l->posted * ofi->chunk;
		size_t n = l->len - off < ofi->chunk ? l->len - off : ofi->chunk;
		struct bip_ofi_chunk *c = &l->chunks[l->posted];
		ssize_t rc;

		c->ctx.kind = BIP_OFI_CTX_LSEND;
		c->owner = l;
		rc = fi_tsend(ofi->ep, l->buf + off, n, mr_desc(l->mr), addr,
			      bip_ofi_data_tag(ofi->mynode, id, l->posted), &c->ctx.fi);
		if (rc == -FI_EAGAIN)
			return 0;
		if (rc) {
			/* The chunks not posted count as done, with the error. */
			l->status = errno_of(ofi, "fi_tsend", (int)rc);
			l->done += l->nchunks - l->posted;
			l->posted = l->nchunks;
			if (l->done == l->nchunks)
				lsend_finish(ofi, l);
			return 1;
		}
		l->posted++;
	}
	return 1;
}

void bip_ofi_cts(struct bip_ofi *ofi, int src, uint32_t id)
{
	struct bip_ofi_lsend *l = &ofi->lsend[id & 0xfff];
	struct bip_ofi_lsend **pp;

	if (l->gen != id >> 12 || l->dst != src || l->cts || id >> 24) {
		fprintf(stderr, "bip: node %d: ofi: node %d asked for long send %u, which is not "
			"waiting\n", ofi->mynode, src, id);
		return;
	}
	l->cts = 1;
	l->chunks = calloc(l->nchunks, sizeof(*l->chunks));
	if (!l->chunks) {
		l->status = -ENOMEM;
		l->posted = l->done = l->nchunks;
		lsend_finish(ofi, l);
		return;
	}
	if (!ofi->lsend_pending && lsend_post(ofi, l))
		return;
	/* Append: the pending sends are posted in order. */
	pp = &ofi->lsend_pending;
	while (*pp)
		pp = &(*pp)->next_pending;
	l->next_pending = NULL;
	*pp = l;
}

/* --- receiving --- */

/* Post the receives of r not posted yet, then the CTS; 1 when done. */
static int lrecv_post(struct bip_ofi *ofi, struct bip_ofi_lrecv *r)
{
	while (r->posted < r->nchunks) {
		size_t off = (size_t)r->posted * ofi->chunk;
		size_t n = r->len - off < ofi->chunk ? r->len - off : ofi->chunk;
		struct bip_ofi_chunk *c = &r->chunks[r->posted];
		ssize_t rc;

		c->ctx.kind = BIP_OFI_CTX_LRECV;
		c->owner = r;
		rc = fi_trecv(ofi->ep, r->buf + off, n, mr_desc(r->mr), FI_ADDR_UNSPEC,
			      bip_ofi_data_tag(r->src, r->id, r->posted), 0, &c->ctx.fi);
		/* A provider whose receive queue is full says EAGAIN, or (shm)
		 * ENOMEM: while receives of ours are posted, their completions
		 * make room, so this one waits in order behind them. */
		if (rc == -FI_EAGAIN || (rc == -FI_ENOMEM && ofi->lrecv_chunks))
			return 0;
		if (rc) {
			r->status = errno_of(ofi, "fi_trecv", (int)rc);
			r->done += r->nchunks - r->posted;
			r->posted = r->nchunks;
			break;
		}
		r->posted++;
		ofi->lrecv_chunks++;
		ofi->peers[r->src].lrecv_chunks++;
	}
	bip_ofi_send_ctl(ofi, r->src, BIP_NETPROTO_CTS, r->id);
	r->cts_sent = 1;
	return 1;
}

int bip_ofi_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			   uint64_t cookie)
{
	struct bip_ofi *ofi = bip_ofi_of(nic);
	struct bip_ofi_lrecv *r;
	struct bip_ofi_lrecv **pp;

	if ((uint32_t)handle & BIP_OFI_EAGER_ID)
		return eager_recv(ofi, (int)(handle >> 32), (uint32_t)handle, buf, len);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct bip_ofi_lrecv){
		.src = (int)(handle >> 32), .id = (uint32_t)handle, .buf = buf, .len = len,
		.cookie = cookie, .nchunks = nchunks_of(ofi, len),
	};
	r->chunks = calloc(r->nchunks, sizeof(*r->chunks));
	if (!r->chunks) {
		free(r);
		return -ENOMEM;
	}
	if (ofi->mr_local) {
		r->mr = bip_ofi_mr_get(ofi, buf, len);
		if (!r->mr) {
			int rc = -errno;

			free(r->chunks);
			free(r);
			return rc;
		}
	}
	if (!ofi->lrecv_pending && lrecv_post(ofi, r)) {
		if (r->done == r->nchunks) {
			/* Nothing could be posted: fail now (the CTS tells the
			 * sender, whose data then waits unmatched). */
			int rc = r->status;

			bip_ofi_mr_put(ofi, r->mr);
			free(r->chunks);
			free(r);
			return rc;
		}
		return 0;
	}
	for (pp = &ofi->lrecv_pending; *pp; pp = &(*pp)->next_pending)
		;
	*pp = r;
	return 0;
}

static void lrecv_free(struct bip_ofi *ofi, struct bip_ofi_lrecv *r)
{
	bip_ofi_mr_put(ofi, r->mr);
	free(r->chunks);
	free(r);
}

static void lrecv_finish(struct bip_ofi *ofi, struct bip_ofi_lrecv *r)
{
	int status = r->status;
	uint64_t cookie = r->cookie;

	lrecv_free(ofi, r);
	bip_core_recv_done(cookie, status);
}

/* A chunk of r completed: 1 when it was r's last (and r's CTS is out). */
static int lrecv_chunk_ended(struct bip_ofi *ofi, struct bip_ofi_lrecv *r)
{
	ofi->lrecv_chunks--;
	ofi->peers[r->src].lrecv_chunks--;
	return ++r->done == r->nchunks && r->cts_sent;
}

int bip_ofi_long_progress(struct bip_ofi *ofi)
{
	int n = 0;

	while (ofi->lrecv_pending) {
		struct bip_ofi_lrecv *r = ofi->lrecv_pending;

		if (!lrecv_post(ofi, r))
			break;
		ofi->lrecv_pending = r->next_pending;
		n++;
		if (r->done == r->nchunks)
			lrecv_finish(ofi, r);
	}
	while (ofi->lsend_pending) {
		struct bip_ofi_lsend *l = ofi->lsend_pending;

		ofi->lsend_pending = l->next_pending;
		if (!lsend_post(ofi, l)) {
			l->next_pending = ofi->lsend_pending;
			ofi->lsend_pending = l;
			break;
		}
		n++;
	}
	return n;
}

int bip_ofi_chunk_done(struct bip_ofi *ofi, struct bip_ofi_chunk *c, int status)
{
	if (c->ctx.kind == BIP_OFI_CTX_LSEND) {
		struct bip_ofi_lsend *l = c->owner;

		if (status && !l->status)
			l->status = status;
		if (++l->done < l->nchunks)
			return 0;
		lsend_finish(ofi, l);
		return 1;
	} else {
		struct bip_ofi_lrecv *r = c->owner;

		if (status && !r->status)
			r->status = status;
		if (!lrecv_chunk_ended(ofi, r))
			return 0;
		lrecv_finish(ofi, r);
		return 1;
	}
}

/* A chunk of a long receive that completed while the endpoint closes: the
 * program did not wait for it, so it is only counted, and the receive freed
 * with its last chunk (the core hears nothing more). */
void bip_ofi_chunk_closing(struct bip_ofi *ofi, struct bip_ofi_chunk *c)
{
	struct bip_ofi_lrecv *r = c->owner;

	if (lrecv_chunk_ended(ofi, r))
		lrecv_free(ofi, r);
}

/* --- eager messages --- */

/* A whole number from lo to hi in the variable name (def when unset). */
static int env_number(const char *name, uint32_t def, uint32_t lo, uint32_t hi, const char *what,
		      uint32_t *out, char *err, size_t len)
{
	const char *s = getenv(name);
	unsigned long v;
	char *end;

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi) {
		snprintf(err, len, "ofi: %s=%s is not %s from %u to %u", name, s, what, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int bip_ofi_eager_env(struct bip_ofi *ofi, char *err, size_t len)
{
	int rc;

	rc = env_number("BIP_OFI_EAGER", BIP_OFI_EAGER_DEFAULT, 0, BIP_OFI_EAGER_LIMIT,
			"a number of bytes", &ofi->eager, err, len);
	if (rc == 0)
		rc = env_number("BIP_OFI_EAGER_BUFS", BIP_OFI_EBUFS_DEFAULT, 1,
				BIP_OFI_EBUFS_LIMIT, "a number of buffers", &ofi->eager_bufs, err,
				len);
	return rc;
}

static size_t ebuf_stride(const struct bip_ofi *ofi)
{
	return (sizeof(struct bip_netproto_hdr) + ofi->eager + 63) & ~(size_t)63;
}

static int ebuf_post(struct bip_ofi *ofi, struct bip_ofi_ebuf *e)
{
	return (int)fi_trecv(ofi->ep, e->s.buf, sizeof(struct bip_netproto_hdr) + ofi->eager,
			     e->s.desc, FI_ADDR_UNSPEC, BIP_OFI_EAGER_BIT, 0, &e->s.ctx.fi);
}

/*
 * The bounce buffers: as many per peer as every peer was told (eager_bufs,
 * fewer when the peers are many, so that all of them together stay within
 * BIP_OFI_EBUF_MEM), allocated and posted for a peer only once its link is
 * up (bip_ofi_eager_grow), and shared by all (posted for any source); one
 * more set from the start.  A
 * message that comes while none is posted waits in the provider, within
 * the sender's credits, until one is.
 */
int bip_ofi_eager_alloc(struct bip_ofi *ofi, int nserved)
{
	size_t stride = ebuf_stride(ofi);
	uint32_t per = ofi->eager_bufs;

	if (!ofi->eager || nserved <= 0) {
		ofi->eager_bufs = 0;
		return 0;
	}
	/* Many peers: fewer buffers each, and none past the bounds. */
	if (per > BIP_OFI_EBUF_MEM / stride / (size_t)nserved)
		per = (uint32_t)(BIP_OFI_EBUF_MEM / stride / (size_t)nserved);
	if (per > BIP_OFI_EBUF_COUNT / (uint32_t)nserved)
		per = BIP_OFI_EBUF_COUNT / (uint32_t)nserved;
	ofi->eager_bufs = per;
	if (!per)
		return 0;
	/* One chunk for any peer, so that a first message that comes eager
	 * finds a buffer (its arrival brings up the link, and the peer's own
	 * chunk), then one per peer linked. */
	ofi->echunks = calloc((size_t)nserved + 1, sizeof(*ofi->echunks));
	if (!ofi->echunks)
		return -ENOMEM;
	ofi->echunks_cap = nserved + 1;
	bip_ofi_eager_grow(ofi);
	return ofi->nechunks ? 0 : -ENOMEM;
}

void bip_ofi_eager_grow(struct bip_ofi *ofi)
{
	size_t stride = ebuf_stride(ofi), total = (size_t)ofi->eager_bufs * stride;
	uint32_t per = ofi->eager_bufs, k;
	struct bip_ofi_echunk *c;
	int rc;

	if (!per || ofi->nechunks == ofi->echunks_cap ||
	    ofi->nrx + ofi->nebuf + (int)per > ofi->rx_budget)
		return;
	c = calloc(1, sizeof(*c) + per * sizeof(c->e[0]));
	if (!c)
		return;
	c->mem = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	if (!c->mem) {
		free(c);
		return;
	}
	if (ofi->mr_local) {
		rc = fi_mr_reg(ofi->domain, c->mem, total, FI_RECV, 0, ++mr_key, 0, &c->mr, NULL);
		if (rc) {
			free(c->mem);
			free(c);
			return;
		}
	}
	ofi->echunks[ofi->nechunks++] = c;
	for (k = 0; k < per; k++) {
		struct bip_ofi_ebuf *e = &c->e[k];

		e->s.ctx.kind = BIP_OFI_CTX_ERX;
		e->s.buf = c->mem + (size_t)k * stride;
		e->s.desc = c->mr ? fi_mr_desc(c->mr) : NULL;
		e->idx = (uint16_t)ofi->nebuf++;
		e->state = BIP_OFI_EBUF_POSTED;
		e->src = -1;
		rc = ofi->erepost ? -FI_EAGAIN : ebuf_post(ofi, e);
		if (rc) { /* refused now: posted later, with the others */
			e->s.next = ofi->erepost;
			ofi->erepost = &e->s;
		}
	}
}

/* Buffers still posted are gone with the endpoint (closed before this). */
void bip_ofi_eager_free(struct bip_ofi *ofi)
{
	int i;

	for (i = 0; i < ofi->nechunks; i++) {
		free(ofi->echunks[i]->mem);
		free(ofi->echunks[i]);
	}
	free(ofi->echunks);
	ofi->echunks = NULL;
	ofi->nechunks = 0;
	ofi->nebuf = 0;
}

void bip_ofi_eager_peer(struct bip_ofi *ofi, int node, const struct bip_ofi_blob *b)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	uint32_t lim = ofi->eager < b->eager ? ofi->eager : b->eager;

	/* Header and data go as one message, gathered from two places. */
	if (ofi->info->tx_attr->iov_limit < 2 || !b->eager_bufs)
		lim = 0;
	p->eager_max = lim;
	p->eager_grant = !lim ? 0 : b->eager_bufs > BIP_OFI_EBUFS_LIMIT ? BIP_OFI_EBUFS_LIMIT :
									    b->eager_bufs;
	p->eager_credits = p->eager_grant;
}

void bip_ofi_eager_repost(struct bip_ofi *ofi, struct bip_ofi_ebuf *e)
{
	e->state = BIP_OFI_EBUF_POSTED;
	e->gen = (uint16_t)((e->gen + 1) & 0x7fff);
	e->src = -1;
	if (!ofi->erepost && ebuf_post(ofi, e) == 0)
		return;
	e->s.next = ofi->erepost;
	ofi->erepost = &e->s;
}

void bip_ofi_eager_repost_flush(struct bip_ofi *ofi)
{
	struct bip_ofi_slot *s;

	while ((s = ofi->erepost)) {
		if (ebuf_post(ofi, (struct bip_ofi_ebuf *)s))
			break;
		ofi->erepost = s->next;
	}
}

/*
 * Send a message of at most the peer's eager limit: 0, -EAGAIN (no room
 * now), -ENOBUFS (no send buffer for the header: use the rendezvous) or
 * -errno.  The caller has checked for a free long send and a credit.
 */
static int eager_send(struct bip_ofi *ofi, int dst, uint32_t tag, const void *buf, size_t len,
		      uint64_t cookie)
{
	struct bip_ofi_peer *p = &ofi->peers[dst];
	uint16_t idx = ofi->lfree[ofi->nlfree - 1];
	struct bip_ofi_lsend *l = &ofi->lsend[idx];
	struct bip_netproto_hdr *h;
	struct bip_ofi_mr *mr = NULL;
	struct bip_ofi_slot *s;
	struct iovec iov[2];
	void *desc[2];
	uint32_t gen;
	ssize_t rc;

	s = bip_ofi_tx_get(ofi);
	if (!s)
		return -ENOBUFS;
	if (ofi->mr_local && len) {
		mr = bip_ofi_mr_get(ofi, buf, len);
		if (!mr) {
			rc = -errno;
			goto undo;
		}
	}
	h = (struct bip_netproto_hdr *)s->buf;
	rc = bip_netproto_msg_hdr(&p->np, ofi->mynode, BIP_OFI_EAGER_KIND, tag, (uint32_t)len, 0, h);
	if (rc)
		goto undo; /* the receiver has not taken what we sent */
	h->rsv = bip_ofi_take_eager_owed(p);
	gen = (l->gen + 1) & 0xfff;
	if (!gen)
		gen = 1;
	/* The provider holds the context while the send is in flight: l is
	 * complete before the send is posted. */
	*l = (struct bip_ofi_lsend){
		.gen = gen, .dst = dst, .buf = buf, .len = len, .cookie = cookie, .mr = mr,
		.nchunks = 1, .posted = 1, .cts = 1, .hdr = s,
		.echunk = { .ctx.kind = BIP_OFI_CTX_LSEND, .owner = l },
	};
	iov[0] = (struct iovec){ .iov_base = s->buf, .iov_len = sizeof(*h) };
	iov[1] = (struct iovec){ .iov_base = (void *)buf, .iov_len = len };
	desc[0] = ofi->tx_mr ? fi_mr_desc(ofi->tx_mr) : NULL;
	desc[1] = mr_desc(mr);
	rc = fi_tsendv(ofi->ep, iov, desc, len ? 2 : 1, p->addr, BIP_OFI_EAGER_BIT,
		       &l->echunk.ctx.fi);
	if (rc) {
		p->eager_owed += h->rsv;
		bip_netproto_unsent(&p->np, h);
		l->dst = -1; /* free: no CTS may find it */
		l->cts = 0;
		l->hdr = NULL;
		rc = rc == -FI_EAGAIN ? -EAGAIN : errno_of(ofi, "fi_tsendv", (int)rc);
		goto undo;
	}
	bip_netproto_msg_sent(&p->np, h, 0);
	p->eager_credits--;
	p->sent_any = 1;
	ofi->nlfree--;
	return 0;
undo:
	bip_ofi_mr_put(ofi, mr);
	bip_ofi_tx_put(ofi, s);
	return (int)rc;
}

/* A bounce buffer is free again: post it, and owe its credit to the sender. */
static void eager_release(struct bip_ofi *ofi, struct bip_ofi_ebuf *e)
{
	struct bip_ofi_peer *p = &ofi->peers[e->src];
	int src = e->src;

	p->eager_inuse--;
	p->eager_owed++;
	bip_ofi_eager_repost(ofi, e);
	if (p->eager_owed >= (ofi->eager_bufs + 1) / 2)
		bip_ofi_send_ctl(ofi, src, BIP_NETPROTO_CREDIT, 0);
}

int bip_ofi_eager_rx(struct bip_ofi *ofi, struct bip_ofi_ebuf *e, size_t len)
{
	struct bip_netproto_hdr *h = (struct bip_netproto_hdr *)e->s.buf;
	struct bip_ofi_peer *p;
	int src;

	if (len < sizeof(*h) || h->src >= (uint32_t)ofi->numnodes ||
	    (!ofi->peers[h->src].served && !bip_ofi_reach_sender(ofi, h->src)))
		goto bad;
	src = (int)h->src;
	p = &ofi->peers[src];
	if (bip_ofi_link_heard(ofi, src) < 0)
		goto bad;
	p->np.credits += h->credits;
	bip_ofi_eager_credit(p, h->rsv);
	/* Its length as announced and within our limit (the buffer's size);
	 * no more of our buffers than it was given. */
	if (h->kind != BIP_OFI_EAGER_KIND || h->len != len - sizeof(*h) || h->len > ofi->eager ||
	    p->eager_inuse >= ofi->eager_bufs)
		goto bad;
	/* The handle the core will give back names this buffer. */
	h->id = BIP_OFI_EAGER_ID | (uint32_t)e->gen << 16 | e->idx;
	if (bip_netproto_hold(&p->np, ofi->ncredits, h, &e->s))
		goto bad;
	e->state = BIP_OFI_EBUF_HELD;
	e->src = src;
	e->len = h->len;
	p->eager_inuse++;
	ofi->nheld++;
	return bip_ofi_deliver(ofi, src);
bad:
	bip_ofi_protocol_error(ofi, h, len);
	bip_ofi_eager_repost(ofi, e);
	return 0;
}

/* post_long_recv of a message in a bounce buffer: copy it out, 1. */
static int eager_recv(struct bip_ofi *ofi, int src, uint32_t id, void *buf, size_t len)
{
	uint32_t idx = id & 0xffff;
	struct bip_ofi_ebuf *e = idx < (uint32_t)ofi->nebuf ?
				 &ofi->echunks[idx / ofi->eager_bufs]->e[idx % ofi->eager_bufs] :
				 NULL;
	int rc = 1;

	if (!e || e->state != BIP_OFI_EBUF_OFFERED || e->gen != ((id >> 16) & 0x7fff) ||
	    e->src != src) {
		fprintf(stderr, "bip: node %d: ofi: post_long_recv: no message of node %d waits "
			"under handle %#x\n", ofi->mynode, src, id);
		return -EINVAL;
	}
	if (len < e->len)
		rc = -EMSGSIZE; /* the message is consumed, as a rendezvous's would be */
	else if (e->len)
		memcpy(buf, e->s.buf + sizeof(struct bip_netproto_hdr), e->len);
	eager_release(ofi, e);
	return rc;
}
