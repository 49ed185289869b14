/* SPDX-License-Identifier: MIT */
/*
 * rma.c - one-sided operations: the board executes the puts, gets and
 * atomics of the job's boards on the memory its host exposed, with its
 * DMA, and its host takes no part in them (bip_rma(3)).
 *
 * Regions.  A host exposes [base, base + len) of its memory with a
 * descriptor of kind RMA (what: EXPOSE, struct bip_lanai_rma in
 * lanai_board.h); its board keeps the region in a table
 * of LANAI_RMA_REGIONS and answers with an RMA_DONE event whose handle is
 * the region's key:
 *
 *   bits  0 ..  7  the region's slot in the table
 *   bits  8 .. 31  the slot's generation, one more at every exposure, so
 *                  that a withdrawn key never comes back
 *   bits 32 .. 47  the node of the board
 *   bits 48 .. 63  the stamp of this firmware: a random number drawn at
 *                  start, never 0, so that a key of another job (another
 *                  firmware) is refused
 *
 * WITHDRAW takes the region out of the table; the firmware runs one thing
 * at a time, so once its RMA_DONE is out no request touches the region.
 *
 * Operations.  A descriptor of kind RMA for a PUT, GET or ATOMIC becomes
 * one or more requests, each at most a chunk of the region
 * (LANAI_DATA_CHUNK bytes; an atomic's operand and compare together at
 * most a chunk, cut at element boundaries), sent from the origin's board
 * to the target's (to itself, through lanai_wire_loopback, for an
 * operation on its own host).  A request is a packet of kind RMA_REQ whose seq is the request's number
 * (below) and whose payload is
 *
 *   struct lanai_rma_req (48 bytes, firmware.h): key; offset and len, the
 *   request's bytes of the region; span_off and span_len, the whole
 *   operation's; count, op, type (ATOMIC); what (PUT, GET, ATOMIC); ack,
 *   the origin's count of answers received in order
 *   then PUT's data, or ATOMIC's operand (len bytes) and, for CSWAP, its
 *   compare (len bytes), read from the origin host's memory when the
 *   request is made.
 *
 * An answer is a packet of kind RMA_ANS whose seq is the request's, and
 * whose payload is struct lanai_rma_ans (8 bytes: status, len), then GET's
 * data or ATOMIC's values before (len bytes, only when status is 0).
 *
 * The target's board checks, in this order, and answers an error without
 * touching anything when a check fails:
 *
 *   - the payload's shape: kind, lengths agree with what, op, type and
 *     count (-EPROTO: not a request this firmware makes; -EINVAL: op or
 *     type unknown);
 *   - the key: this firmware's stamp, this board's node, a slot in use
 *     with the key's generation (-EACCES);
 *   - the bounds: the whole operation's bytes [span_off, span_off +
 *     span_len) lie in the region, with no overflow (-ERANGE), and the
 *     request's within them (-EPROTO).  Every request of an operation
 *     carries the whole span, so that an operation out of bounds fails
 *     at its first request and none of it is written.
 *
 * Then it executes the request with process_vm_readv and writev on its
 * host (an atomic: read, lanai_rma_apply, write back what changed) and
 * answers with struct lanai_rma_ans and GET's data or ATOMIC's values
 * before.  Atomics are atomic because every one of them, from any origin
 * and on any host, is executed by this single-threaded firmware, one at a
 * time (operations use rail 0's boards only).  The origin's board writes
 * what an answer brings into its host's buffers, and once every request of
 * an operation is answered it tells its host with an RMA_DONE event
 * (status: the first error).  No event is ever published to the target's
 * host, which is therefore never woken.
 *
 * Reliability.  Requests and answers have their own sequence numbers and
 * none of the link's (they are not counted by SYNC, and a fault on them
 * is not reported to the host, in either mode).  For each origin and
 * target:
 *
 *   - the origin numbers its requests from 0 (the packet's seq) and keeps
 *     each one until its answer comes, at most LANAI_RMA_WINDOW in flight;
 *   - the target executes only the request it expects next, exactly once,
 *     and keeps its answer: a request already executed (a duplicate, or a
 *     retransmission whose answer was lost) gets the kept answer again, a
 *     request beyond the next (the one before it was lost or overtaken)
 *     is dropped and comes again in order;
 *   - each request carries the origin's count of answers received in
 *     order (ack), and the target frees the answers before it;
 *   - an answer the origin has already had, or never asked for, is
 *     dropped;
 *   - when the oldest request has waited LANAI_RMA_RTO_US (plus twice the
 *     wire's delay, plus the time the rate knob takes for a window), and
 *     neither a request of the link waits at the target's board nor an
 *     answer at the origin's (late, not lost: the firmware knows its
 *     boards' queues), the origin sends every request in flight again,
 *     and waits twice as long the next time, up to 2^6 times;
 *   - after BIP_LANAI_LINK_TIMEOUT without an answer the origin gives up:
 *     every operation to that target completes with -ETIMEDOUT, the later
 *     ones with -EHOSTUNREACH.  A target whose host has ended ends them
 *     with -EPIPE.
 *
 * So on a wire that loses, corrupts, duplicates, delays and reorders,
 * each request is executed once, in order, and each operation completes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bip.h"
#include "firmware.h"

#define RMA_SLOT_BITS 8
#define RMA_GEN_MASK 0xffffffu
_Static_assert(LANAI_RMA_REGIONS == 1 << RMA_SLOT_BITS, "one slot per key value");
_Static_assert((LANAI_RMA_WINDOW & (LANAI_RMA_WINDOW - 1)) == 0, "power of two");

static uint64_t key_make(uint16_t stamp, uint32_t node, uint32_t gen, uint32_t slot)
{
	return (uint64_t)stamp << 48 | (uint64_t)(node & 0xffff) << 32 |
	       (uint64_t)(gen & RMA_GEN_MASK) << RMA_SLOT_BITS | slot;
}

static uint32_t key_slot(uint64_t key)
{
	return (uint32_t)key & (LANAI_RMA_REGIONS - 1);
}

static uint32_t key_gen(uint64_t key)
{
	return (uint32_t)(key >> RMA_SLOT_BITS) & RMA_GEN_MASK;
}

static uint32_t key_node(uint64_t key)
{
	return (uint32_t)(key >> 32) & 0xffff;
}

uint16_t lanai_rma_stamp(void)
{
	static uint16_t stamp;

	while (!stamp) {
		uint16_t v = 0;

		if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
			v = (uint16_t)(getpid() ^ lanai_now_us());
		stamp = v;
	}
	return stamp;
}

/* --- the arithmetic --- */

size_t lanai_rma_type_size(int type)
{
	switch (type) {
	case BIP_RMA_INT8:
	case BIP_RMA_UINT8:
		return 1;
	case BIP_RMA_INT16:
	case BIP_RMA_UINT16:
		return 2;
	case BIP_RMA_INT32:
	case BIP_RMA_UINT32:
	case BIP_RMA_FLOAT:
		return 4;
	case BIP_RMA_INT64:
	case BIP_RMA_UINT64:
	case BIP_RMA_DOUBLE:
		return 8;
	}
	return 0;
}

static int type_signed(int type)
{
	return type >= BIP_RMA_INT8 && type <= BIP_RMA_INT64;
}

static int type_float(int type)
{
	return type == BIP_RMA_FLOAT || type == BIP_RMA_DOUBLE;
}

/* 0 if op applies to type, else -EINVAL: the bitwise and logical
 * operations are for integers only. */
static int op_valid(int op, int type)
{
	if (!lanai_rma_type_size(type) || op < BIP_RMA_SUM || op > BIP_RMA_CSWAP)
		return -EINVAL;
	if (type_float(type) && op >= BIP_RMA_BAND && op <= BIP_RMA_LXOR)
		return -EINVAL;
	return 0;
}

/* An integer of size bytes, zero-extended. */
static uint64_t load_uint(const uint8_t *p, size_t size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

static void store_uint(uint8_t *p, size_t size, uint64_t v)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &v8, 1);
		return;
	case 2:
		memcpy(p, &v16, 2);
		return;
	case 4:
		memcpy(p, &v32, 4);
		return;
	}
	memcpy(p, &v, 8);
}

/* The integer of size bytes in v, sign-extended. */
static int64_t sign_extend(uint64_t v, size_t size)
{
	unsigned shift = 64 - 8 * (unsigned)size;

	return (int64_t)(v << shift) >> shift;
}

/* Sums and products wrap, as two's complement does whatever the sign. */
static uint64_t int_op(int op, int sgn, size_t size, uint64_t t, uint64_t o)
{
	int less;

	switch (op) {
	case BIP_RMA_SUM:
		return t + o;
	case BIP_RMA_PROD:
		return t * o;
	case BIP_RMA_MIN:
	case BIP_RMA_MAX:
		less = sgn ? sign_extend(o, size) < sign_extend(t, size) : o < t;
		return (op == BIP_RMA_MIN) == less ? o : t;
	case BIP_RMA_BAND:
		return t & o;
	case BIP_RMA_BOR:
		return t | o;
	case BIP_RMA_BXOR:
		return t ^ o;
	case BIP_RMA_LAND:
		return t && o;
	case BIP_RMA_LOR:
		return t || o;
	case BIP_RMA_LXOR:
		return !t != !o;
	case BIP_RMA_REPLACE:
		return o;
	}
	return t; /* NO_OP */
}

static double float_op(int op, double t, double o)
{
	switch (op) {
	case BIP_RMA_SUM:
		return t + o;
	case BIP_RMA_PROD:
		return t * o;
	case BIP_RMA_MIN:
		return o < t ? o : t;
	case BIP_RMA_MAX:
		return o > t ? o : t;
	case BIP_RMA_REPLACE:
		return o;
	}
	return t; /* NO_OP */
}

int lanai_rma_apply(int op, int type, uint32_t count, void *target, const void *operand,
		    const void *compare, void *old)
{
	size_t size = lanai_rma_type_size(type);
	uint8_t *t = target;
	const uint8_t *o = operand, *c = compare;
	uint32_t i;

	if (op_valid(op, type) < 0 || (op == BIP_RMA_CSWAP && !compare) ||
	    (op != BIP_RMA_NO_OP && !operand))
		return -EINVAL;
	if (old)
		memcpy(old, target, (size_t)count * size);
	for (i = 0; i < count; i++, t += size) {
		const uint8_t *oi = o ? o + (size_t)i * size : NULL;

		if (op == BIP_RMA_NO_OP)
			break;
		if (op == BIP_RMA_CSWAP) {
			/* The bits are compared, as a processor's CAS does. */
			if (!memcmp(t, c + (size_t)i * size, size))
				memcpy(t, oi, size);
		} else if (type == BIP_RMA_FLOAT) {
			float a, b;

			memcpy(&a, t, 4);
			memcpy(&b, oi, 4);
			a = (float)float_op(op, a, b);
			memcpy(t, &a, 4);
		} else if (type == BIP_RMA_DOUBLE) {
			double a, b;

			memcpy(&a, t, 8);
			memcpy(&b, oi, 8);
			a = float_op(op, a, b);
			memcpy(t, &a, 8);
		} else {
			store_uint(t, size, int_op(op, type_signed(type), size, load_uint(t, size),
						   load_uint(oi, size)));
		}
	}
	return 0;
}

/* --- the target's checks --- */

int lanai_rma_check(const struct lanai_packet *p, uint32_t node, uint16_t stamp,
		    const struct lanai_rma_region *rgn, uint64_t *addr)
{
	const struct lanai_rma_region *r;
	struct lanai_rma_req q;
	uint64_t need;
	size_t size;

	if (p->cap < sizeof(q) || p->g.len || p->h.len != p->cap)
		return -EPROTO;
	memcpy(&q, p->payload, sizeof(q));
	if (!q.len || q.len > LANAI_DATA_CHUNK)
		return -EPROTO;
	switch (q.what) {
	case BIP_LANAI_RMA_PUT:
		need = q.len;
		break;
	case BIP_LANAI_RMA_GET:
		need = 0;
		break;
	case BIP_LANAI_RMA_ATOMIC:
		if (op_valid(q.op, q.type) < 0)
			return -EINVAL;
		size = lanai_rma_type_size(q.type);
		if (!q.count || (uint64_t)q.count * size != q.len ||
		    (q.op == BIP_RMA_CSWAP && q.count != 1))
			return -EPROTO;
		need = q.op == BIP_RMA_CSWAP ? 2 * (uint64_t)q.len : q.len;
		break;
	default:
		return -EPROTO;
	}
	if (p->cap != sizeof(q) + need)
		return -EPROTO;
	if ((uint16_t)(q.key >> 48) != stamp || key_node(q.key) != node)
		return -EACCES;
	r = &rgn[key_slot(q.key)];
	if (!r->active || r->gen != key_gen(q.key))
		return -EACCES;
	if (!q.span_len || q.span_len > r->len || q.span_off > r->len - q.span_len)
		return -ERANGE;
	if (q.offset < q.span_off || q.len > q.span_len ||
	    q.offset - q.span_off > q.span_len - q.len)
		return -EPROTO;
	*addr = r->base;
	return 0;
}

/* --- links --- */

static struct lanai_rma_link *link_of(struct lanai_board *b, uint32_t node)
{
	if (!b->rma[node])
		b->rma[node] = calloc(1, sizeof(*b->rma[node]));
	return b->rma[node];
}

/* The time-out of a retransmission, before its backoff. */
static uint64_t rto_us(const struct lanai_fw *fw)
{
	uint64_t t = LANAI_RMA_RTO_US + 2 * fw->faults.delay_us;

	if (fw->faults.rate_mbs > 0)
		t += (uint64_t)((double)LANAI_RMA_WINDOW * LANAI_DATA_CHUNK / fw->faults.rate_mbs);
	return t;
}

/* Put a copy of p on the wire (or back to its own board): p is kept. */
static void send_copy(struct lanai_fw *fw, const struct lanai_packet *p)
{
	struct lanai_packet *c = lanai_packet_new(p->cap);

	if (!c)
		return; /* as if lost: the origin sends it again */
	memcpy(c, p, sizeof(*p) + p->cap);
	c->next = NULL;
	if (c->h.src == c->h.dst)
		lanai_wire_loopback(fw, c);
	else
		lanai_wire_send(fw, c);
}

/* The operation is over: its event goes to the host in order of completion. */
static void op_complete(struct lanai_board *b, struct lanai_rma_op *op)
{
	op->next = NULL;
	*b->rma_done_tail = op;
	b->rma_done_tail = &op->next;
	b->rma_busy--;
}

/* Stop sending the rest of the head operation of l (it failed). */
static void op_stop(struct lanai_board *b, struct lanai_rma_link *l, struct lanai_rma_op *op)
{
	if (l->head != op)
		return;
	l->head = op->next;
	if (!l->head)
		l->tail = NULL;
	op->issued = op->a.len;
	if (!op->out)
		op_complete(b, op);
}

/* Give up on every operation of l: status for all of them. */
static void link_fail(struct lanai_board *b, struct lanai_rma_link *l, int status)
{
	uint32_t s;

	while (l->head) {
		struct lanai_rma_op *op = l->head;

		if (!op->status)
			op->status = status;
		op_stop(b, l, op);
	}
	for (s = l->acked; s != l->next; s++) {
		struct lanai_rma_sent *w = &l->win[s & (LANAI_RMA_WINDOW - 1)];

		if (!w->p)
			continue;
		free(w->p);
		w->p = NULL;
		if (!w->op->status)
			w->op->status = status;
		if (!--w->op->out && w->op->issued == w->op->a.len)
			op_complete(b, w->op);
	}
	l->acked = l->next;
	l->failed = status == -ETIMEDOUT ? -EHOSTUNREACH : status;
}

/* --- the origin --- */

/* The arguments of an operation from the host (which may be wrong): 0 or -EINVAL. */
static int op_check(const struct lanai_fw *fw, uint32_t dst, struct bip_lanai_rma *a)
{
	size_t size;

	if (dst >= (uint32_t)fw->nactive)
		return -EINVAL;
	switch (a->what) {
	case BIP_LANAI_RMA_PUT:
	case BIP_LANAI_RMA_GET:
		break;
	case BIP_LANAI_RMA_ATOMIC:
		size = lanai_rma_type_size(a->type);
		if (op_valid(a->op, a->type) < 0 || !a->count ||
		    (a->op == BIP_RMA_CSWAP && (a->count != 1 || !a->compare)) ||
		    (a->op != BIP_RMA_NO_OP && !a->operand))
			return -EINVAL;
		a->len = (uint64_t)a->count * size;
		break;
	default:
		return -EINVAL;
	}
	if (!a->len || a->len > UINT64_MAX - a->offset)
		return -EINVAL;
	return 0;
}

static int expose(struct lanai_board *b, struct bip_lanai_rma *a)
{
	uint32_t i;

	if (!a->len || a->addr > UINT64_MAX - a->len)
		return -EINVAL;
	for (i = 0; i < LANAI_RMA_REGIONS; i++) {
		struct lanai_rma_region *r = &b->rgn[i];

		if (r->active)
			continue;
		r->gen = (r->gen + 1) & RMA_GEN_MASK;
		r->base = a->addr;
		r->len = a->len;
		r->active = 1;
		a->key = key_make(lanai_rma_stamp(), (uint32_t)b->node, r->gen, i);
		return 0;
	}
	return -ENOSPC;
}

static int withdraw(struct lanai_board *b, uint64_t key)
{
	struct lanai_rma_region *r = &b->rgn[key_slot(key)];

	if ((uint16_t)(key >> 48) != lanai_rma_stamp() || key_node(key) != (uint32_t)b->node ||
	    !r->active || r->gen != key_gen(key))
		return -EINVAL;
	r->active = 0;
	return 0;
}

int lanai_rma_take(struct lanai_fw *fw, struct lanai_board *b, const struct bip_lanai_desc *d)
{
	struct lanai_rma_op *op = calloc(1, sizeof(*op));
	struct lanai_rma_link *l;
	int rc = 0;

	if (!op)
		return -EAGAIN;
	memcpy(&op->a, d->payload, sizeof(op->a));
	op->cookie = d->cookie;
	b->rma_busy++;
	switch (op->a.what) {
	case BIP_LANAI_RMA_EXPOSE:
		rc = expose(b, &op->a);
		break;
	case BIP_LANAI_RMA_WITHDRAW:
		rc = withdraw(b, op->a.key);
		break;
	default:
		rc = op_check(fw, d->dst, &op->a);
		if (rc < 0)
			break;
		l = link_of(b, d->dst);
		if (!l) {
			rc = -ENOMEM;
			break;
		}
		if (l->failed) {
			rc = l->failed;
			break;
		}
		if (l->tail)
			l->tail->next = op;
		else
			l->head = op;
		l->tail = op;
		return 0;
	}
	op->status = rc;
	op_complete(b, op);
	return 0;
}

/* Bytes of the region one request of op covers at most. */
static uint32_t request_span(const struct lanai_rma_op *op)
{
	size_t size;

	if (op->a.what != BIP_LANAI_RMA_ATOMIC)
		return LANAI_DATA_CHUNK;
	size = lanai_rma_type_size(op->a.type);
	return (uint32_t)(LANAI_DATA_CHUNK / 2 / size * size);
}

/* Make and send the next request of l's head operation: 1 if sent. */
static int issue(struct lanai_fw *fw, struct lanai_board *b, struct lanai_rma_link *l,
		 uint32_t dst, uint64_t now)
{
	struct lanai_rma_op *op = l->head;
	const struct bip_lanai_rma *a = &op->a;
	uint64_t left = a->len - op->issued;
	uint32_t len = left < request_span(op) ? (uint32_t)left : request_span(op);
	uint32_t data = 0;
	struct lanai_rma_req q = {
		.key = a->key,
		.offset = a->offset + op->issued,
		.span_off = a->offset,
		.span_len = a->len,
		.len = len,
		.ack = l->acked,
		.what = a->what,
		.op = a->op,
		.type = a->type,
	};
	struct lanai_rma_sent *w;
	struct lanai_packet *p;
	uint8_t *pl;
	int rc = 0;

	if (a->what == BIP_LANAI_RMA_PUT)
		data = len;
	else if (a->what == BIP_LANAI_RMA_ATOMIC) {
		q.count = len / (uint32_t)lanai_rma_type_size(a->type);
		data = a->op == BIP_RMA_CSWAP ? 2 * len : len;
	}
	p = lanai_packet_new((uint32_t)sizeof(q) + data);
	if (!p)
		return 0;
	pl = p->payload + sizeof(q);
	memcpy(p->payload, &q, sizeof(q));
	/* The origin's data, read from its host now (its DMA). */
	if (a->what == BIP_LANAI_RMA_PUT)
		rc = lanai_dma_read(b->pid, pl, a->addr + op->issued, len);
	else if (a->what == BIP_LANAI_RMA_ATOMIC && a->op == BIP_RMA_NO_OP)
		memset(pl, 0, len);
	else if (a->what == BIP_LANAI_RMA_ATOMIC)
		rc = lanai_dma_read(b->pid, pl, a->operand + op->issued, len);
	if (rc == 0 && a->what == BIP_LANAI_RMA_ATOMIC && a->op == BIP_RMA_CSWAP)
		rc = lanai_dma_read(b->pid, pl + len, a->compare, len);
	if (rc < 0) {
		free(p);
		op->status = rc;
		op_stop(b, l, op);
		return 1;
	}
	p->h.kind = LANAI_PKT_RMA_REQ;
	p->h.src = (uint32_t)b->node;
	p->h.dst = dst;
	p->h.seq = l->next;
	if (l->acked == l->next) {
		/* The first in flight after a pause: its time-outs start now. */
		l->since = now;
		l->backoff = 0;
		l->due = now + rto_us(fw);
	}
	w = &l->win[l->next & (LANAI_RMA_WINDOW - 1)];
	*w = (struct lanai_rma_sent){ .p = p, .op = op, .at = op->issued };
	fw->rma_requests++;
	l->next++;
	op->out++;
	op->issued += len;
	if (op->issued == a->len) {
		l->head = op->next;
		if (!l->head)
			l->tail = NULL;
	}
	send_copy(fw, p);
	return 1;
}

/* 1 if a packet of kind from node src waits in b's inbound queue (or is
 * held back there): a request still on its way to the target, or an
 * answer on its way back, is late, not lost, and is not sent again. */
static int on_its_way(const struct lanai_board *b, unsigned kind, uint32_t src)
{
	const struct lanai_packet *q;

	for (q = b->in_head; q; q = q->next)
		if (q->h.kind == kind && q->h.src == src)
			return 1;
	return b->held && b->held->h.kind == kind && b->held->h.src == src;
}

/* Tell the host of the operations complete, while its event queue has room. */
static int flush_done(struct lanai_board *b)
{
	struct lanai_rma_op *op;
	int n = 0;

	while ((op = b->rma_done) && (b->releasing || lanai_event_room(b))) {
		struct bip_lanai_event ev = { .kind = BIP_LANAI_EV_RMA_DONE,
					      .cookie = op->cookie,
					      .status = op->status,
					      .handle = op->a.what == BIP_LANAI_RMA_EXPOSE ? op->a.key
											  : 0 };

		b->rma_done = op->next;
		if (!b->rma_done)
			b->rma_done_tail = &b->rma_done;
		if (!b->releasing)
			lanai_event_put(b, &ev);
		free(op);
		n++;
	}
	return n;
}

int lanai_rma_pump(struct lanai_fw *fw, struct lanai_board *b, uint64_t now)
{
	uint32_t dst;
	int n = 0;

	for (dst = 0; b->rma_busy && dst < (uint32_t)fw->nactive; dst++) {
		struct lanai_rma_link *l = b->rma[dst];
		const struct lanai_board *d = &fw->boards[dst];
		uint32_t s;

		if (!l || (!l->head && l->acked == l->next))
			continue;
		if (d->state != BIP_LANAI_BOARD_RUNNING || d->releasing) {
			link_fail(b, l, -EPIPE); /* its host has ended */
			n++;
			continue;
		}
		if (l->acked != l->next && now >= l->due) {
			if (on_its_way(b, LANAI_PKT_RMA_ANS, dst) ||
			    on_its_way(d, LANAI_PKT_RMA_REQ, (uint32_t)b->node)) {
				l->due = now + rto_us(fw);
			} else if (now - l->since >= fw->faults.link_timeout_us) {
				link_fail(b, l, -ETIMEDOUT);
				n++;
				continue;
			} else {
				for (s = l->acked; s != l->next; s++) {
					if (!l->win[s & (LANAI_RMA_WINDOW - 1)].p)
						continue;
					send_copy(fw, l->win[s & (LANAI_RMA_WINDOW - 1)].p);
					fw->rma_resent++;
				}
				if (l->backoff < LANAI_RMA_BACKOFF_MAX)
					l->backoff++;
				l->due = now + (rto_us(fw) << l->backoff);
				n++;
			}
		}
		while (l->head && l->next - l->acked < LANAI_RMA_WINDOW &&
		       d->in_count < LANAI_INBOUND_MAX && issue(fw, b, l, dst, now))
			n++;
		if (l->acked != l->next && (!fw->next_due || l->due < fw->next_due))
			fw->next_due = l->due;
	}
	n += flush_done(b);
	if (b->rma_done)
		fw->blocked = 1; /* the host frees event slots without ringing */
	return n;
}

/* --- arrivals --- */

/* An atomic request at addr of b's host: the values before go to old. */
static int execute_atomic(struct lanai_board *b, uint64_t addr, const struct lanai_rma_req *q,
			  const uint8_t *operands, uint8_t *old)
{
	static uint8_t now[LANAI_DATA_CHUNK];
	int rc = lanai_dma_read(b->pid, old, addr, q->len);

	if (rc < 0)
		return rc;
	memcpy(now, old, q->len);
	rc = lanai_rma_apply(q->op, q->type, q->count, now, operands,
			     q->op == BIP_RMA_CSWAP ? operands + q->len : NULL, NULL);
	/* Only what changed is written back: the host's own stores to
	 * other bytes are not undone. */
	if (rc == 0 && memcmp(now, old, q->len))
		rc = lanai_dma_write(b->pid, addr, now, q->len);
	return rc;
}

/* Execute the request p at board b: its answer, or NULL (out of memory:
 * as if lost, the origin sends the request again). */
static struct lanai_packet *execute(struct lanai_board *b, const struct lanai_packet *p)
{
	struct lanai_rma_ans a = { 0 };
	struct lanai_rma_req q;
	struct lanai_packet *ans;
	uint64_t base = 0;
	uint32_t data = 0;
	int rc = lanai_rma_check(p, (uint32_t)b->node, lanai_rma_stamp(), b->rgn, &base);

	if (rc == 0) {
		memcpy(&q, p->payload, sizeof(q));
		if (q.what != BIP_LANAI_RMA_PUT)
			data = q.len;
	}
	ans = lanai_packet_new((uint32_t)sizeof(a) + data);
	if (!ans)
		return NULL;
	if (rc == 0) {
		const uint8_t *in = p->payload + sizeof(q);
		uint8_t *out = ans->payload + sizeof(a);

		if (q.what == BIP_LANAI_RMA_PUT)
			rc = lanai_dma_write(b->pid, base + q.offset, in, q.len);
		else if (q.what == BIP_LANAI_RMA_GET)
			rc = lanai_dma_read(b->pid, out, base + q.offset, q.len);
		else
			rc = execute_atomic(b, base + q.offset, &q, in, out);
	}
	if (rc < 0)
		data = 0;
	a.status = rc;
	a.len = data;
	memcpy(ans->payload, &a, sizeof(a));
	ans->cap = ans->h.len = (uint32_t)sizeof(a) + data;
	ans->h.kind = LANAI_PKT_RMA_ANS;
	ans->h.src = (uint32_t)b->node;
	ans->h.dst = p->h.src;
	ans->h.seq = p->h.seq;
	return ans;
}

static void request_arrived(struct lanai_fw *fw, struct lanai_board *b,
			    const struct lanai_packet *p)
{
	struct lanai_rma_link *l = link_of(b, p->h.src);
	struct lanai_packet **slot;
	uint32_t seq = p->h.seq, i;

	if (!l)
		return;
	if (p->cap >= sizeof(struct lanai_rma_req)) {
		struct lanai_rma_req q;

		/* The answers the origin has: no duplicate will ask for them. */
		memcpy(&q, p->payload, sizeof(q));
		for (i = 0; i < LANAI_RMA_WINDOW; i++) {
			if (l->ans[i] && (int32_t)(l->ans[i]->h.seq - q.ack) < 0 &&
			    (int32_t)(l->ans[i]->h.seq - l->expect) < 0) {
				free(l->ans[i]);
				l->ans[i] = NULL;
			}
		}
	}
	slot = &l->ans[seq & (LANAI_RMA_WINDOW - 1)];
	if (seq == l->expect) {
		struct lanai_packet *ans = execute(b, p);

		if (!ans)
			return;
		free(*slot);
		*slot = ans;
		l->expect++;
		send_copy(fw, ans);
	} else if ((int32_t)(seq - l->expect) < 0) {
		/* Executed already: its answer again, if the origin may still
		 * lack it. */
		if (*slot && (*slot)->h.seq == seq) {
			send_copy(fw, *slot);
			fw->rma_replayed++;
		}
	} else {
		/* Beyond the next: dropped; it comes again in order. */
		fw->rma_early++;
	}
}

static void answer_arrived(struct lanai_fw *fw, struct lanai_board *b,
			   const struct lanai_packet *p)
{
	struct lanai_rma_link *l = b->rma[p->h.src];
	struct lanai_rma_sent *w;
	struct lanai_rma_op *op;
	struct lanai_rma_req q;
	struct lanai_rma_ans a;
	uint32_t seq = p->h.seq, want;
	int status;

	if (!l || (int32_t)(seq - l->acked) < 0 || (int32_t)(seq - l->next) >= 0)
		return; /* had already, or never asked for */
	w = &l->win[seq & (LANAI_RMA_WINDOW - 1)];
	if (!w->p || w->p->h.seq != seq || p->cap < sizeof(a) || p->g.len)
		return;
	memcpy(&a, p->payload, sizeof(a));
	memcpy(&q, w->p->payload, sizeof(q));
	op = w->op;
	status = a.status;
	if (status == 0) {
		want = q.what == BIP_LANAI_RMA_PUT ? 0 : q.len;
		if (a.len != want || p->cap != sizeof(a) + want)
			status = -EPROTO;
		else if (q.what == BIP_LANAI_RMA_GET)
			status = lanai_dma_write(b->pid, op->a.addr + w->at, p->payload + sizeof(a),
						 want);
		else if (q.what == BIP_LANAI_RMA_ATOMIC && op->a.result)
			status = lanai_dma_write(b->pid, op->a.result + w->at,
						 p->payload + sizeof(a), want);
	} else if (status < -4095) {
		status = -EPROTO;
	}
	free(w->p);
	w->p = NULL;
	while (l->acked != l->next && !l->win[l->acked & (LANAI_RMA_WINDOW - 1)].p)
		l->acked++;
	l->since = lanai_now_us();
	l->backoff = 0;
	l->due = l->since + rto_us(fw);
	op->out--;
	if (status < 0 && !op->status)
		op->status = status;
	if (status < 0 && l->head == op)
		op_stop(b, l, op); /* the rest would fail alike */
	else if (!op->out && op->issued == op->a.len)
		op_complete(b, op);
}

void lanai_rma_arrived(struct lanai_fw *fw, struct lanai_board *b, const struct lanai_packet *p)
{
	if (p->h.kind == LANAI_PKT_RMA_REQ)
		request_arrived(fw, b, p);
	else
		answer_arrived(fw, b, p);
}

void lanai_rma_reset(struct lanai_board *b, int nboards)
{
	int i, k;

	for (i = 0; b->rma && i < nboards; i++) {
		struct lanai_rma_link *l = b->rma[i];

		if (!l)
			continue;
		while (l->head) {
			struct lanai_rma_op *op = l->head;

			l->head = op->next;
			if (!op->out)
				free(op);
			else
				op->issued = op->a.len;
		}
		for (k = 0; k < LANAI_RMA_WINDOW; k++) {
			struct lanai_rma_sent *w = &l->win[k];

			if (w->p && !--w->op->out)
				free(w->op);
			free(w->p);
			free(l->ans[k]);
		}
		free(l);
		b->rma[i] = NULL;
	}
	while (b->rma_done) {
		struct lanai_rma_op *op = b->rma_done;

		b->rma_done = op->next;
		free(op);
	}
	b->rma_done_tail = &b->rma_done;
	b->rma_busy = 0;
	for (k = 0; b->rgn && k < LANAI_RMA_REGIONS; k++)
		b->rgn[k].active = 0;
}
