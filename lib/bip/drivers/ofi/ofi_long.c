/* SPDX-License-Identifier: MIT */
/*
 * ofi_long.c - long messages of the ofi driver, and the registration cache.
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

#include "ofi.h"

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

static int mr_register(struct bip_ofi *ofi, uintptr_t base, size_t len, struct bip_ofi_mr **mr_p)
{
	/* Keys 0 and 1 are the receive and send buffers' (ofi.c). */
	static uint64_t key = 1;
	struct bip_ofi_mr *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	rc = fi_mr_reg(ofi->domain, (void *)base, len, FI_SEND | FI_RECV, 0, ++key, 0, &m->mr,
		       NULL);
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

	if (!ofi->nlfree)
		return -EAGAIN;
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

static void lrecv_finish(struct bip_ofi *ofi, struct bip_ofi_lrecv *r)
{
	int status = r->status;
	uint64_t cookie = r->cookie;

	bip_ofi_mr_put(ofi, r->mr);
	free(r->chunks);
	free(r);
	bip_core_recv_done(cookie, status);
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

		ofi->lrecv_chunks--;
		if (status && !r->status)
			r->status = status;
		if (++r->done < r->nchunks || !r->cts_sent)
			return 0;
		lrecv_finish(ofi, r);
		return 1;
	}
}
