/* SPDX-License-Identifier: MIT */
/*
 * trace_bip.c - the BIP messages of the MPI shim, seen from between the
 * shim and libbip: this library's bip_layer_send and bip_layer_register
 * come first in the process (LD_PRELOAD) and call libbip's (RTLD_NEXT).
 *
 * bip_layer_send records TRACE_EV_BIP_SEND when BIP took the message (it
 * returned 0 or 1).  Inside an MPI call these records read no clock: a
 * send takes the call's entry time, an arrival its exit time (trace.h).  bip_layer_register hands BIP a copy of the layer's
 * table (struct bip_layer_ops) whose short_arrived and long_arrived are
 * this file's: they call the layer's and record TRACE_EV_BIP_RECV when the
 * layer took a short message (0, not -EAGAIN, after which BIP offers the
 * same message again), TRACE_EV_BIP_LONG for the announcement of a long
 * part.  send_done and recv_done carry no tag to find the layer by, and
 * need no record: the copy keeps the layer's own.
 *
 * The link between a send and its arrival: BIP keeps the order of the
 * messages between two nodes, and a message of bip_layer_send arrives as
 * one short message (its header, and its data when it fits) possibly
 * followed by a long part.  So the k-th message this node sends to node d
 * is the k-th short message d takes from it: both sides number them from
 * 0 (seq_out[d] here, seq_in[s] there) and the merger pairs the numbers.
 * The counters are used under BIP's lock (the shim sends under it, and
 * BIP runs its callbacks under it), like the shim's own state.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <bip.h>

#include "trace.h"

typedef int send_fn(int dst, int tag, const void *hdr, size_t hlen, const void *buf, size_t len,
		    uint64_t cookie);
typedef int register_fn(int tag, const struct bip_layer_ops *ops);

static struct {
	send_fn *send;
	register_fn *reg;
	/* Per reserved tag: the layer's table, and the copy BIP has. */
	const struct bip_layer_ops *layer[BIP_RESERVED_TAGS];
	struct bip_layer_ops copy[BIP_RESERVED_TAGS];
	uint64_t *seq_out, *seq_in; /* per node */
	int nseq;
} tb;

/* The counters of node (grown as nodes appear): NULL without memory. */
static int seq_room(int node)
{
	int n = tb.nseq ? tb.nseq : 64, i;
	uint64_t *out, *in;

	if (node < tb.nseq)
		return 0;
	if (node < 0)
		return -1;
	while (n <= node)
		n *= 2;
	out = realloc(tb.seq_out, (size_t)n * sizeof(*out));
	if (!out)
		return -1;
	tb.seq_out = out;
	in = realloc(tb.seq_in, (size_t)n * sizeof(*in));
	if (!in)
		return -1;
	tb.seq_in = in;
	for (i = tb.nseq; i < n; i++)
		tb.seq_out[i] = tb.seq_in[i] = 0;
	tb.nseq = n;
	return 0;
}

int bip_layer_send(int dst, int tag, const void *hdr, size_t hlen, const void *buf, size_t len,
		   uint64_t cookie)
{
	struct trace_event *e;
	uint64_t t0;
	int rc;

	if (__builtin_expect(!tb.send, 0))
		tb.send = (send_fn *)dlsym(RTLD_NEXT, "bip_layer_send");
	if (!trace_on)
		return tb.send(dst, tag, hdr, hlen, buf, len, cookie);
	t0 = trace_tls.cur_region ? trace_tls.cur_t0 : trace_now(); /* trace.h */
	rc = tb.send(dst, tag, hdr, hlen, buf, len, cookie);
	if (rc < 0 || seq_room(dst) < 0)
		return rc;
	e = trace_slot();
	e->t0 = t0;
	e->kind = TRACE_EV_BIP_SEND;
	e->dst = dst;
	e->stag = tag;
	e->sent = hlen + len;
	e->req = tb.seq_out[dst]++;
	trace_commit();
	return rc;
}

static const struct bip_layer_ops *layer_of(int tag)
{
	return tb.layer[tag - NTAGS];
}

static int traced_short_arrived(int src, int tag, const void *data, size_t len)
{
	uint64_t t0 = trace_time_inside();
	int rc = layer_of(tag)->short_arrived(src, tag, data, len);
	struct trace_event *e;

	if (rc != 0 || seq_room(src) < 0)
		return rc;
	if (!trace_on) {
		tb.seq_in[src]++;
		return rc;
	}
	e = trace_slot();
	e->t0 = t0;
	e->kind = TRACE_EV_BIP_RECV;
	e->src = src;
	e->rtag = tag;
	e->recvd = len;
	e->req = tb.seq_in[src]++;
	trace_commit();
	return rc;
}

static int traced_long_arrived(int src, int tag, size_t len, uint64_t handle)
{
	uint64_t t0 = trace_time_inside();
	int rc = layer_of(tag)->long_arrived(src, tag, len, handle);
	struct trace_event *e;

	if (rc != 0 || !trace_on || seq_room(src) < 0)
		return rc;
	e = trace_slot();
	e->t0 = t0;
	e->kind = TRACE_EV_BIP_LONG;
	e->src = src;
	e->rtag = tag;
	e->recvd = len;
	e->req = tb.seq_in[src] ? tb.seq_in[src] - 1 : 0;
	trace_commit();
	return rc;
}

int bip_layer_register(int tag, const struct bip_layer_ops *ops)
{
	int i = tag - NTAGS, rc;

	if (!tb.reg)
		tb.reg = (register_fn *)dlsym(RTLD_NEXT, "bip_layer_register");
	if (!trace_on || i < 0 || i >= BIP_RESERVED_TAGS)
		return tb.reg(tag, ops);
	if (!ops) {
		tb.layer[i] = NULL;
		return tb.reg(tag, NULL);
	}
	if (tb.layer[i])
		return tb.reg(tag, ops); /* the tag is busy: BIP says so */
	tb.layer[i] = ops;
	tb.copy[i] = *ops;
	tb.copy[i].short_arrived = traced_short_arrived;
	tb.copy[i].long_arrived = traced_long_arrived;
	rc = tb.reg(tag, &tb.copy[i]);
	if (rc < 0)
		tb.layer[i] = NULL;
	return rc;
}
