/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the simulated LANai board: the rings of the board (send
 * descriptors, events, posts), CRC32C against published vectors, the route
 * walk, the wire's checks of what arrives, the fault knobs, and the
 * arithmetic and checks of one-sided operations.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "crc32c.h"
#include "firmware.h"
#include "topology.h"

/* --- rings --- */

static struct bip_lanai_desc ring[BIP_LANAI_SEND_SLOTS];
static uint32_t cons_reg;

START_TEST(test_desc_ring_in_order_over_laps)
{
	struct bip_lanai_prod p = {0};
	uint32_t cons = 0, i, published = 0, taken = 0;

	memset(ring, 0, sizeof(ring));
	cons_reg = 0;
	/* Three laps, the consumer a few slots behind and releasing in batches. */
	for (i = 0; i < 3 * BIP_LANAI_SEND_SLOTS; i++) {
		struct bip_lanai_desc *d;

		ck_assert_msg(bip_lanai_ring_room(&p, &cons_reg, BIP_LANAI_SEND_SLOTS),
			      "no room at descriptor %u with %u taken", i, taken);
		d = bip_lanai_slot(ring, BIP_LANAI_SEND_SLOTS, sizeof(*d), p.prod);
		d->kind = BIP_LANAI_DESC_SHORT;
		d->tag = i;
		d->len = 4;
		memcpy(d->payload, &i, 4);
		bip_lanai_ring_publish(&p, &d->seq);
		published++;
		if (i % 5 == 4) {
			for (;;) {
				struct bip_lanai_desc *c =
				    bip_lanai_slot(ring, BIP_LANAI_SEND_SLOTS, sizeof(*c), cons);
				uint32_t v;

				if (!bip_lanai_ring_ready(&c->seq, cons))
					break;
				memcpy(&v, c->payload, 4);
				ck_assert_uint_eq(v, cons);
				ck_assert_uint_eq(c->tag, cons);
				cons++;
				taken++;
			}
			bip_lanai_ring_release(&cons_reg, cons);
		}
	}
	ck_assert_uint_eq(published, 3 * BIP_LANAI_SEND_SLOTS);
	ck_assert_uint_ge(taken, published - 5);
}
END_TEST

START_TEST(test_desc_ring_full_then_room)
{
	struct bip_lanai_prod p = {0};
	uint32_t i;

	memset(ring, 0, sizeof(ring));
	cons_reg = 0;
	for (i = 0; i < BIP_LANAI_SEND_SLOTS; i++) {
		struct bip_lanai_desc *d =
		    bip_lanai_slot(ring, BIP_LANAI_SEND_SLOTS, sizeof(*d), p.prod);

		ck_assert(bip_lanai_ring_room(&p, &cons_reg, BIP_LANAI_SEND_SLOTS));
		bip_lanai_ring_publish(&p, &d->seq);
	}
	ck_assert_msg(!bip_lanai_ring_room(&p, &cons_reg, BIP_LANAI_SEND_SLOTS),
		      "a full ring must have no room");
	/* The consumer frees one slot: room for exactly one more. */
	bip_lanai_ring_release(&cons_reg, 1);
	ck_assert(bip_lanai_ring_room(&p, &cons_reg, BIP_LANAI_SEND_SLOTS));
	bip_lanai_ring_publish(&p, &((struct bip_lanai_desc *)bip_lanai_slot(
					 ring, BIP_LANAI_SEND_SLOTS, sizeof(ring[0]), p.prod))
					->seq);
	ck_assert(!bip_lanai_ring_room(&p, &cons_reg, BIP_LANAI_SEND_SLOTS));
}
END_TEST

START_TEST(test_desc_stale_slot_not_ready)
{
	struct bip_lanai_prod p = {0};
	struct bip_lanai_desc *d;
	uint32_t i;

	memset(ring, 0, sizeof(ring));
	cons_reg = 0;
	/* A cleared slot is not ready, and a slot written in lap 1 does not
	 * look ready to a consumer expecting lap 2. */
	ck_assert(!bip_lanai_ring_ready(&ring[0].seq, 0));
	for (i = 0; i < BIP_LANAI_SEND_SLOTS; i++) {
		d = bip_lanai_slot(ring, BIP_LANAI_SEND_SLOTS, sizeof(*d), p.prod);
		bip_lanai_ring_publish(&p, &d->seq);
	}
	ck_assert(bip_lanai_ring_ready(&ring[0].seq, 0));
	ck_assert(!bip_lanai_ring_ready(&ring[0].seq, BIP_LANAI_SEND_SLOTS));
}
END_TEST

/* --- a firmware with n boards, in this process's memory --- */

static struct lanai_fw fw;
static void *board_mem;
static struct bip_conf *conf;
static struct bip_topology *topo;

static void fw_setup(int n, const char *conf_text, const char *topo_text)
{
	uint64_t off_send, off_event, off_lrecv, off_post, off_tagq;
	uint64_t bsize =
	    bip_lanai_board_layout(&off_send, &off_event, &off_lrecv, &off_post, &off_tagq);
	char err[512];
	int i;

	memset(&fw, 0, sizeof(fw));
	conf = NULL;
	topo = NULL;
	if (conf_text)
		ck_assert_msg(
		    bip_conf_parse_string(conf_text, "test.conf", &conf, err, sizeof(err)) == 0,
		    "%s", err);
	else
		ck_assert_int_eq(bip_conf_local(n, &conf), 0);
	if (topo_text)
		ck_assert_msg(
		    bip_topology_parse_string(topo_text, "test.topo", &topo, err, sizeof(err)) == 0,
		    "%s", err);
	fw.conf = conf;
	fw.topo = topo;
	fw.nboards = fw.nknown = fw.nactive = n;
	fw.nrails = 1;
	fw.seg = calloc(1, sizeof(*fw.seg));
	fw.boards = calloc((size_t)n, sizeof(*fw.boards));
	fw.route_ok = calloc((size_t)n * n, 1);
	fw.route_why = calloc((size_t)n * n, sizeof(char *));
	board_mem = aligned_alloc(4096, bsize * (uint64_t)n);
	memset(board_mem, 0, bsize * (uint64_t)n);
	fw.faults.linkdown_node = -1;
	fw.faults.link_timeout_us = LANAI_LINK_TIMEOUT_US;
	fw.t0 = lanai_now_us();
	for (i = 0; i < n; i++) {
		struct lanai_board *b = &fw.boards[i];
		char *base = (char *)board_mem + bsize * (uint64_t)i;

		b->node = i;
		b->regs = (struct bip_lanai_regs *)base;
		b->events = (struct bip_lanai_event *)(base + off_event);
		b->state = BIP_LANAI_BOARD_RUNNING;
		b->tx_seq = calloc((size_t)n, sizeof(uint32_t));
		b->rx_seq = calloc((size_t)n, sizeof(uint32_t));
		b->rx_failed = calloc((size_t)n, 1);
		b->link = calloc((size_t)n, sizeof(*b->link));
		b->tq = calloc(BIP_LANAI_TAGQ_SLOTS, sizeof(*b->tq));
		b->stall = calloc((size_t)n, sizeof(*b->stall));
		b->pid = getpid();
	}
}

static void fw_teardown(void)
{
	int i, k;

	for (i = 0; i < fw.nboards; i++) {
		struct lanai_packet *p, *next;

		for (p = fw.boards[i].in_head; p; p = next) {
			next = p->next;
			free(p);
		}
		free(fw.boards[i].held);
		free(fw.boards[i].tx_seq);
		free(fw.boards[i].rx_seq);
		free(fw.boards[i].rx_failed);
		free(fw.boards[i].link);
		free(fw.boards[i].tq);
		for (k = 0; k < fw.nboards; k++) {
			for (p = fw.boards[i].stall[k].head; p; p = next) {
				next = p->next;
				free(p);
			}
		}
		free(fw.boards[i].stall);
	}
	for (i = 0; i < fw.nboards * fw.nboards; i++)
		free(fw.route_why[i]);
	free(fw.route_why);
	free(fw.route_ok);
	free(fw.boards);
	free(fw.seg);
	free(board_mem);
	bip_conf_free(conf);
	if (topo)
		bip_topology_free(topo);
}

/* The events board b's host would read, from number *cons on. */
static struct bip_lanai_event *next_event(int b, uint32_t *cons)
{
	struct bip_lanai_event *ev =
	    bip_lanai_slot(fw.boards[b].events, BIP_LANAI_EVENT_SLOTS, sizeof(*ev), *cons);

	if (!bip_lanai_ring_ready(&ev->seq, *cons))
		return NULL;
	(*cons)++;
	return ev;
}

static struct lanai_packet *short_packet(int src, int dst, uint32_t tag, const char *text)
{
	struct lanai_packet *p = lanai_packet_new((uint32_t)strlen(text));

	ck_assert_ptr_nonnull(p);
	p->h.kind = LANAI_PKT_SHORT;
	p->h.src = (uint32_t)src;
	p->h.dst = (uint32_t)dst;
	p->h.tag = tag;
	memcpy(p->payload, text, strlen(text));
	return p;
}

/* Take the next packet queued for board b off the wire. */
static struct lanai_packet *pop(int b)
{
	struct lanai_board *d = &fw.boards[b];
	struct lanai_packet *p = d->in_head;

	if (p) {
		d->in_head = p->next;
		if (!d->in_head)
			d->in_tail = NULL;
		d->in_count--;
	}
	return p;
}

/* --- the DMA into the host's tag queues (dma.c) --- */

/*
 * A host of board 1: ntags queues of cap bytes each in one window, read
 * back with the core's own queue code (lib/bip/core/tagq.c), as the core does.
 */
#define HOST_TAGS 2

/* What the board told the host it holds, per source and tag. */
static int host_held[4][HOST_TAGS];
static struct bip_tagq hostq[HOST_TAGS];
static uint8_t *window;
static uint32_t host_ev_cons;

static void host_setup(uint32_t cap)
{
	struct bip_lanai_tagq t[HOST_TAGS];
	uint32_t i;

	window = aligned_alloc(64, (size_t)cap * HOST_TAGS);
	ck_assert_ptr_nonnull(window);
	memset(hostq, 0, sizeof(hostq));
	for (i = 0; i < HOST_TAGS; i++) {
		hostq[i].buf = window + (size_t)i * cap;
		hostq[i].cap = cap;
		hostq[i].nic_fills = 1;
		hostq[i].foreign = 1;
		t[i] = (struct bip_lanai_tagq){.off = (uint64_t)i * cap,
					       .freed_addr = (uint64_t)(uintptr_t)&hostq[i].freed,
					       .cap = cap};
	}
	host_ev_cons = 0;
	memset(host_held, 0, sizeof(host_held));
	ck_assert_int_eq(lanai_set_tagqs(&fw.boards[1], window, (uint64_t)cap * HOST_TAGS, t,
					 HOST_TAGS), 0);
}

/* The host reads its events: each SHORT or LONG one is an entry of its tag;
 * HELD and RELEASED say which sources' tags the board keeps. */
static int host_poll(void)
{
	struct bip_lanai_event *ev;
	int n = 0;

	while ((ev = next_event(1, &host_ev_cons))) {
		if (ev->kind == BIP_LANAI_EV_HELD || ev->kind == BIP_LANAI_EV_RELEASED) {
			ck_assert_uint_lt(ev->src, 4);
			ck_assert_uint_lt(ev->tag, HOST_TAGS);
			ck_assert_int_ne(host_held[ev->src][ev->tag], ev->kind == BIP_LANAI_EV_HELD);
			host_held[ev->src][ev->tag] = ev->kind == BIP_LANAI_EV_HELD;
			continue;
		}
		ck_assert(ev->kind == BIP_LANAI_EV_SHORT || ev->kind == BIP_LANAI_EV_LONG);
		ck_assert_uint_lt(ev->tag, HOST_TAGS);
		bip_tagq_produced(&hostq[ev->tag]);
		n++;
	}
	bip_lanai_ring_release(&fw.boards[1].regs->event_cons, host_ev_cons);
	return n;
}

/* Take the oldest message of tag and check it is message seq from src. */
static void host_take(uint32_t tag, int src, uint32_t seq)
{
	struct bip_tagq_entry *e = bip_tagq_peek(&hostq[tag]);
	uint32_t words = seq % 65, i;
	const uint32_t *w;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->kind, BIP_TAGQ_SHORT);
	ck_assert_int_eq(e->src, src);
	ck_assert_uint_eq(e->len, words * 4);
	w = bip_tagq_payload(e);
	for (i = 0; i < words; i++)
		ck_assert_uint_eq(w[i], seq * 1000 + i);
	bip_tagq_pop(&hostq[tag]);
}

/* Message seq: seq % 65 words, from src to board 1 on tag. */
static struct lanai_packet *numbered_packet(int src, uint32_t tag, uint32_t seq)
{
	uint32_t words = seq % 65, i;
	struct lanai_packet *p = lanai_packet_new(words * 4);

	ck_assert_ptr_nonnull(p);
	p->h.kind = LANAI_PKT_SHORT;
	p->h.src = (uint32_t)src;
	p->h.dst = 1;
	p->h.tag = tag;
	for (i = 0; i < words; i++)
		((uint32_t *)p->payload)[i] = seq * 1000 + i;
	return p;
}

/*
 * Messages of every short size written into a queue of two largest
 * entries, many laps round it: the host reads each, in order and whole,
 * where the firmware put it; a full queue says -EAGAIN, and the firmware
 * sees the room the host frees (its freed count, read by DMA).
 */
START_TEST(test_dma_tagq_laps)
{
	uint32_t sent = 0, taken = 0, refused = 0;

	fw_setup(2, NULL, NULL);
	host_setup(2 * bip_tagq_entry_size(BIP_LANAI_SHORT_MAX));
	while (sent < 3000) {
		struct lanai_packet *p = numbered_packet(0, 1, sent);
		int rc = lanai_queue_arrival(&fw, &fw.boards[1], p);

		free(p);
		if (rc == 0) {
			sent++;
			continue;
		}
		ck_assert_int_eq(rc, -EAGAIN);
		refused++;
		ck_assert_int_gt(host_poll(), -1);
		ck_assert_uint_gt(bip_tagq_unread(&hostq[1]), 0); /* full means something to read */
		while (bip_tagq_unread(&hostq[1]))
			host_take(1, 0, taken++);
	}
	host_poll();
	while (bip_tagq_unread(&hostq[1]))
		host_take(1, 0, taken++);
	ck_assert_uint_eq(taken, sent);
	ck_assert_uint_gt(refused, 100);
	ck_assert_uint_eq(bip_tagq_unread(&hostq[0]), 0);
	free(window);
	fw_teardown();
}
END_TEST

/*
 * A full queue holds back its source only: node 0's messages wait in the
 * firmware behind the first that found tag 0 full, node 2's go on into tag
 * 1; once the host frees room, node 0's come, in order.
 */
/* A full queue keeps its source's packets for that tag only, in order;
 * the board tells its host when it starts and stops keeping them. */
START_TEST(test_dma_stall_per_source)
{
	struct lanai_board *b;
	uint32_t sent = 0, i;
	int rc;

	fw_setup(3, NULL, NULL);
	b = &fw.boards[1];
	host_setup(2 * bip_tagq_entry_size(BIP_LANAI_SHORT_MAX));
	for (;;) {
		struct lanai_packet *p = numbered_packet(0, 0, sent);

		rc = lanai_queue_arrival(&fw, b, p);
		if (rc == -EAGAIN) {
			lanai_stall(&fw, b, p);
			break;
		}
		ck_assert_int_eq(rc, 0);
		free(p);
		sent++;
	}
	for (i = 1; i <= 5; i++)
		lanai_stall(&fw, b, numbered_packet(0, 0, sent + i));
	ck_assert_int_eq(b->nstalled, 6);
	ck_assert_uint_eq(b->stall[0].count, 6);
	ck_assert(lanai_stalled_tag(b, 0, 0));
	ck_assert(!lanai_stalled_tag(b, 0, 1));
	ck_assert(!lanai_stalled_tag(b, 2, 0));
	/* Node 2, another tag: not held back. */
	for (i = 0; i < 3; i++) {
		struct lanai_packet *p = numbered_packet(2, 1, i);

		ck_assert_int_eq(lanai_queue_arrival(&fw, b, p), 0);
		free(p);
	}
	/* Node 0's tag 1, behind its kept tag 0 in the same list, passes. */
	lanai_stall(&fw, b, numbered_packet(0, 1, 0));
	ck_assert_int_eq(lanai_retry_stalled(&fw, b), 1);
	ck_assert_int_eq(b->nstalled, 6);
	ck_assert(!lanai_stalled_tag(b, 0, 1));
	host_poll();
	ck_assert_int_eq(host_held[0][0], 1);
	ck_assert_int_eq(host_held[0][1], 0);
	for (i = 0; i < 3; i++)
		host_take(1, 2, i);
	host_take(1, 0, 0);
	/* The host frees room on tag 0: the kept messages follow, in order. */
	for (i = 0; i < sent; i++)
		host_take(0, 0, i);
	ck_assert_int_eq(lanai_retry_stalled(&fw, b), 6);
	ck_assert_int_eq(b->nstalled, 0);
	ck_assert_ptr_null(b->stall[0].head);
	host_poll();
	ck_assert_int_eq(host_held[0][0], 0); /* released */
	for (i = 0; i < 6; i++)
		host_take(0, 0, sent + i);
	ck_assert_ptr_null(bip_tagq_peek(&hostq[0]));
	free(window);
	fw_teardown();
}
END_TEST

/* A queue table the firmware cannot write into is reported, and nothing
 * is written; a message for a tag with no queue is reported too. */
START_TEST(test_dma_bad_tables)
{
	uint8_t mem[4096];
	uint32_t small = 2 * bip_tagq_entry_size(BIP_LANAI_SHORT_MAX) - 4;
	struct bip_lanai_tagq t[1] = {{.off = 0, .freed_addr = 8, .cap = small}};
	struct bip_lanai_event *ev;
	struct lanai_packet *p;
	uint32_t cons = 0;

	fw_setup(2, NULL, NULL);
	ck_assert_int_eq(lanai_set_tagqs(&fw.boards[1], mem, sizeof(mem), t, 1), -EPROTO);
	ev = next_event(1, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(ev->kind, BIP_LANAI_EV_ERROR);
	ck_assert_str_eq((char *)ev->payload,
			 "board 1: the queue of tag 0 (540 bytes at offset 0 of the window) is not "
			 "one the firmware can write: it needs a multiple of 4 bytes, at least 544, "
			 "inside the window of 4096 bytes");
	t[0].cap = 544;
	t[0].off = 4096 - 540;
	ck_assert_int_eq(lanai_set_tagqs(&fw.boards[1], mem, sizeof(mem), t, 1), -EPROTO);
	ck_assert_ptr_nonnull(next_event(1, &cons));
	ck_assert_uint_eq(fw.boards[1].ntags, 0);
	p = numbered_packet(0, 0, 3);
	ck_assert_int_eq(lanai_queue_arrival(&fw, &fw.boards[1], p), -EPROTO);
	free(p);
	ev = next_event(1, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_str_eq((char *)ev->payload,
			 "message from node 0 for tag 0 dropped: board 1 has no queue for that tag");
	ck_assert_int_eq(lanai_set_tagqs(&fw.boards[1], mem, sizeof(mem), t,
					 BIP_LANAI_TAGQ_SLOTS + 1), -EPROTO);
	fw_teardown();
}
END_TEST

/* --- event queue --- */

START_TEST(test_event_queue_full_and_freed)
{
	struct bip_lanai_event ev = {.kind = BIP_LANAI_EV_SHORT, .src = 1, .tag = 3, .len = 4};
	uint32_t i, cons = 0;

	fw_setup(2, NULL, NULL);
	for (i = 0; i < BIP_LANAI_EVENT_SLOTS; i++) {
		memcpy(ev.payload, &i, 4);
		ck_assert_int_eq(lanai_event_put(&fw.boards[0], &ev), 0);
	}
	ck_assert_int_eq(lanai_event_put(&fw.boards[0], &ev), -EAGAIN);
	for (i = 0; i < 10; i++) {
		struct bip_lanai_event *e = next_event(0, &cons);
		uint32_t v;

		ck_assert_ptr_nonnull(e);
		memcpy(&v, e->payload, 4);
		ck_assert_uint_eq(v, i);
		ck_assert_uint_eq(e->kind, BIP_LANAI_EV_SHORT);
		ck_assert_uint_eq(e->tag, 3);
	}
	/* Not released yet: still full.  Released: ten more fit. */
	ck_assert_int_eq(lanai_event_put(&fw.boards[0], &ev), -EAGAIN);
	bip_lanai_ring_release(&fw.boards[0].regs->event_cons, cons);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(lanai_event_put(&fw.boards[0], &ev), 0);
	ck_assert_int_eq(lanai_event_put(&fw.boards[0], &ev), -EAGAIN);
	fw_teardown();
}
END_TEST

/* --- CRC32C --- */

START_TEST(test_crc32c_vectors)
{
	/* "123456789", and the iSCSI vectors of RFC 3720, appendix B.4. */
	static const uint8_t zeros[32],
	    ones[32] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    };
	uint8_t inc[32], dec[32];
	int i;

	for (i = 0; i < 32; i++) {
		inc[i] = (uint8_t)i;
		dec[i] = (uint8_t)(31 - i);
	}
	ck_assert_uint_eq(bip_crc32c(0, "123456789", 9), 0xe3069283u);
	ck_assert_uint_eq(bip_crc32c_table(0, "123456789", 9), 0xe3069283u);
	ck_assert_uint_eq(bip_crc32c(0, zeros, 32), 0x8a9136aau);
	ck_assert_uint_eq(bip_crc32c_table(0, zeros, 32), 0x8a9136aau);
	ck_assert_uint_eq(bip_crc32c(0, ones, 32), 0x62a8ab43u);
	ck_assert_uint_eq(bip_crc32c_table(0, ones, 32), 0x62a8ab43u);
	ck_assert_uint_eq(bip_crc32c(0, inc, 32), 0x46dd794eu);
	ck_assert_uint_eq(bip_crc32c(0, dec, 32), 0x113fdb5cu);
	ck_assert_uint_eq(bip_crc32c_table(0, dec, 32), 0x113fdb5cu);
	ck_assert_uint_eq(bip_crc32c(0, "", 0), 0);
}
END_TEST

/* The three-stripe path (buffers of 768 bytes and more) agrees with the
 * table at every length around its block size, at odd addresses, and
 * when chained. */
START_TEST(test_crc32c_stripes)
{
	static uint8_t buf[5000];
	size_t len, off;
	int i;

	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7) * 17 + 3);
	for (off = 0; off < 3; off++)
		for (len = 700; len < 2400; len += (len % 97) + 1)
			ck_assert_msg(bip_crc32c(7, buf + off, len) ==
					  bip_crc32c_table(7, buf + off, len),
				      "length %zu at offset %zu", len, off);
	for (len = 0; len < 4900; len += 383)
		ck_assert_uint_eq(bip_crc32c(bip_crc32c(0, buf, len), buf + len, 4900 - len),
				  bip_crc32c_table(0, buf, 4900));
}
END_TEST

/* The copy with its CRC: the bytes land, and the CRC is the table's, at
 * every length around the stripes' block, at odd addresses on both sides,
 * chained; the bytes around the destination are left alone. */
START_TEST(test_crc32c_copy)
{
	static uint8_t src[5000], dst[5016];
	size_t len, off, doff;
	int i;

	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (uint8_t)(i * 37 + (i >> 5) * 11 + 1);
	for (off = 0; off < 3; off++)
		for (doff = 0; doff < 8; doff += 3)
			for (len = 0; len < 2400; len += len < 40 ? 1 : (len % 89) + 1) {
				memset(dst, 0xa5, sizeof(dst));
				ck_assert_msg(bip_crc32c_copy(7, dst + 8 + doff, src + off, len) ==
						  bip_crc32c_table(7, src + off, len),
					      "length %zu at offsets %zu, %zu", len, off, doff);
				ck_assert_msg(!memcmp(dst + 8 + doff, src + off, len),
					      "length %zu: the copy differs", len);
				ck_assert_uint_eq(dst[7 + doff], 0xa5);
				ck_assert_uint_eq(dst[8 + doff + len], 0xa5);
			}
	for (len = 0; len < 4900; len += 383)
		ck_assert_uint_eq(bip_crc32c_copy(bip_crc32c_copy(0, dst, src, len), dst + len,
						  src + len, 4900 - len),
				  bip_crc32c_table(0, src, 4900));
}
END_TEST

START_TEST(test_crc32c_chained_and_paths_agree)
{
	uint8_t buf[1000];
	uint32_t one, two;
	int i;

	for (i = 0; i < 1000; i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	one = bip_crc32c(0, buf, sizeof(buf));
	/* Cut anywhere, including not on 8 bytes: the same CRC. */
	for (i = 0; i <= 1000; i += 37) {
		two =
		    bip_crc32c(bip_crc32c(0, buf, (size_t)i), buf + i, sizeof(buf) - (size_t)i);
		ck_assert_uint_eq(one, two);
	}
	ck_assert_uint_eq(one, bip_crc32c_table(0, buf, sizeof(buf)));
	buf[500] ^= 4;
	ck_assert_uint_ne(one, bip_crc32c(0, buf, sizeof(buf)));
}
END_TEST

/* --- routes --- */

static const char chain_topo[] = "switch s1 8\nswitch s2 8\nlink s1 7 s2 6\n"
				 "link ha s1 0\nlink hb s1 1\nlink hc s2 0\n";
/* Nodes: 0 on ha, 1 on hb, 2 on hc, 3 on ha again. */
static const char chain_conf[] = "4\n"
				 "ha 0\n256\n1\n7 0\n256\n"
				 "hb 0\n0\n256\n7 0\n0\n"
				 "hc 0\n6 0\n6 1\n256\n6 0\n"
				 "ha 0\n256\n1\n7 0\n256\n";

/* Change one route of the test's configuration (rail 0). */
static void set_route(int from, int to, int hop)
{
	struct bip_route r = { .nhops = 1, .hop = { hop } };

	ck_assert_int_eq(bip_conf_set_route(conf, 0, from, to, &r), 0);
}

START_TEST(test_route_walk)
{
	char why[512];

	fw_setup(4, chain_conf, chain_topo);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 1, why, sizeof(why)), 0);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 2, why, sizeof(why)), 0);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 2, 1, why, sizeof(why)), 0);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 3, why, sizeof(why)), 0);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 3, 2, why, sizeof(why)), 0);
	/* Lands elsewhere. */
	set_route(0, 2, 1);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 2, why, sizeof(why)), -EHOSTUNREACH);
	ck_assert_str_eq(why, "route 1 from host ha lands on host hb, not on host hc");
	/* Nowhere: an empty port. */
	set_route(0, 2, 5);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 2, why, sizeof(why)), -EHOSTUNREACH);
	ck_assert_msg(strstr(why, "no cable on port 5 of switch s1") &&
			  strstr(why, "so it cannot reach host hc"),
		      "%s", why);
	/* Two nodes of one host need no switch. */
	set_route(0, 3, 1);
	ck_assert_int_eq(lanai_route_check(conf, topo, 0, 0, 3, why, sizeof(why)), -EHOSTUNREACH);
	ck_assert_str_eq(why, "route 1 from node 0 to node 3, both on host ha: nodes of one host "
			      "need no switch (route 256)");
	/* Without a topology, only direct routes. */
	ck_assert_int_eq(lanai_route_check(conf, NULL, 0, 0, 1, why, sizeof(why)), -EHOSTUNREACH);
	ck_assert_msg(strstr(why, "only direct routes (256) exist"), "%s", why);
	set_route(0, 1, 256);
	ck_assert_int_eq(lanai_route_check(conf, NULL, 0, 0, 1, why, sizeof(why)), 0);
	fw_teardown();
}
END_TEST

START_TEST(test_wire_wrong_route_never_queued)
{
	uint32_t cons = 0;
	struct bip_lanai_event *ev;

	fw_setup(4, chain_conf, chain_topo);
	set_route(1, 2, 0);
	lanai_wire_send(&fw, short_packet(1, 2, 9, "abcd"));
	ck_assert_ptr_null(fw.boards[2].in_head);
	ck_assert_ptr_null(fw.boards[0].in_head);
	ck_assert_int_eq(fw.boards[1].inflight, 0);
	ev = next_event(1, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->kind, BIP_LANAI_EV_ERROR);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_ROUTE);
	ck_assert_str_eq((char *)ev->payload,
			 "wrong route: route 0 from host hb lands on host ha, not on host hc; "
			 "SHORT packet to node 2 on tag 9, sequence 0 dropped, not delivered");
	ck_assert_uint_eq(fw.seg->detected[BIP_LANAI_DET_ROUTE], 1);
	/* A good route: queued for node 2, with its route in the header. */
	lanai_wire_send(&fw, short_packet(0, 2, 9, "abcd"));
	ck_assert_ptr_nonnull(fw.boards[2].in_head);
	ck_assert_uint_eq(fw.boards[2].in_head->h.nhops, 2);
	ck_assert_uint_eq(fw.boards[2].in_head->h.hop[0], 7);
	ck_assert_uint_eq(fw.boards[2].in_head->h.hop[1], 0);
	fw_teardown();
}
END_TEST

/* --- what the receiving board checks --- */

START_TEST(test_wire_check_in_order)
{
	struct lanai_packet *p;
	int i;

	fw_setup(2, NULL, NULL);
	for (i = 0; i < 3; i++)
		lanai_wire_send(&fw, short_packet(0, 1, 4, "hello"));
	for (i = 0; i < 3; i++) {
		p = pop(1);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(p->h.seq, (uint32_t)i);
		ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
		lanai_packet_drop(&fw, p);
	}
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	ck_assert_uint_eq(fw.boards[1].regs->pkts_received, 3);
	fw_teardown();
}
END_TEST

START_TEST(test_wire_check_corrupt)
{
	struct lanai_packet *p;
	struct bip_lanai_event *ev;
	uint32_t cons = 0;

	fw_setup(2, NULL, NULL);
	lanai_wire_send(&fw, short_packet(0, 1, 4, "hello"));
	p = pop(1);
	p->payload[2] ^= 0x10;
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EBADMSG);
	ev = next_event(1, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_CRC);
	ck_assert_uint_eq(ev->tag, 4);
	ck_assert_msg(strstr((char *)ev->payload, "corrupt packet: CRC32C mismatch") &&
			  strstr((char *)ev->payload, "from node 0 on tag 4, sequence 0"),
		      "%s", (char *)ev->payload);
	lanai_packet_drop(&fw, p);
	/* Nothing more from that link is delivered, even a good packet. */
	lanai_wire_send(&fw, short_packet(0, 1, 4, "hello"));
	p = pop(1);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EIO);
	lanai_packet_drop(&fw, p);
	/* A header bit flipped is caught too. */
	lanai_wire_send(&fw, short_packet(1, 0, 4, "x"));
	p = pop(0);
	p->h.tag ^= 1;
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[0], p), -EBADMSG);
	lanai_packet_drop(&fw, p);
	fw_teardown();
}
END_TEST

START_TEST(test_wire_check_duplicate_and_gap)
{
	struct lanai_packet *p, *q;
	struct bip_lanai_event *ev;
	uint32_t cons = 0;

	fw_setup(3, NULL, NULL);
	lanai_wire_send(&fw, short_packet(0, 1, 4, "one"));
	p = pop(1);
	q = lanai_packet_new(p->h.len);
	memcpy(q, p, sizeof(*p) + p->h.len);
	fw.boards[0].inflight++;
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], q), -EIO);
	ev = next_event(1, &cons);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_DUPLICATE);
	ck_assert_str_eq((char *)ev->payload,
			 "duplicate packet: the SHORT packet from node 0 on tag 4 has sequence 0, "
			 "already received (next expected 1): dropped, not delivered");
	lanai_packet_drop(&fw, p);
	lanai_packet_drop(&fw, q);
	/* Node 2 to node 1: the first packet is lost, the second shows the gap. */
	lanai_wire_send(&fw, short_packet(2, 1, 6, "a"));
	lanai_wire_send(&fw, short_packet(2, 1, 6, "b"));
	lanai_packet_drop(&fw, pop(1));
	p = pop(1);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EIO);
	ev = next_event(1, &cons);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_GAP);
	ck_assert_str_eq(
	    (char *)ev->payload,
	    "sequence gap: the SHORT packet from node 2 on tag 6 has sequence 1 where "
	    "0 was expected: packet 0 was lost; nothing more from node 2 is delivered");
	lanai_packet_drop(&fw, p);
	ck_assert_uint_eq(fw.seg->detected[BIP_LANAI_DET_GAP], 1);
	ck_assert_uint_eq(fw.boards[1].regs->detected[BIP_LANAI_DET_DUPLICATE], 1);
	/* Node 0 to node 2: the second packet overtakes the first. */
	lanai_wire_send(&fw, short_packet(0, 2, 7, "a"));
	lanai_wire_send(&fw, short_packet(0, 2, 7, "b"));
	q = pop(2);
	p = pop(2);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[2], p), -EIO);
	cons = 0;
	ev = next_event(2, &cons);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_GAP);
	lanai_packet_drop(&fw, p);
	lanai_packet_drop(&fw, q);
	fw_teardown();
	fw_setup(3, NULL, NULL);
	lanai_wire_send(&fw, short_packet(0, 2, 7, "a"));
	lanai_wire_send(&fw, short_packet(0, 2, 7, "b"));
	q = pop(2);
	p = pop(2);
	/* q (sequence 0) goes back on the wire behind p: reordered, not lost. */
	fw.boards[2].in_head = fw.boards[2].in_tail = q;
	q->next = NULL;
	fw.boards[2].in_count = 1;
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[2], p), -EIO);
	cons = 0;
	ev = next_event(2, &cons);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_REORDER);
	ck_assert_str_eq((char *)ev->payload,
			 "reordered packets: the SHORT packet from node 0 on tag 7 has sequence 1, "
			 "but sequence 0 comes after it: dropped, not delivered; nothing more from "
			 "node 0 is delivered");
	lanai_packet_drop(&fw, p);
	ck_assert_uint_eq(fw.boards[2].regs->detected[BIP_LANAI_DET_REORDER], 1);
	fw_teardown();
}
END_TEST

START_TEST(test_wire_faults_counted)
{
	int i, queued = 0;
	struct lanai_packet *p;

	fw_setup(2, NULL, NULL);
	fw.faults.ppm[BIP_LANAI_FAULT_LOSS] = 500000; /* half */
	fw.rng = 42;
	for (i = 0; i < 100; i++)
		lanai_wire_send(&fw, short_packet(0, 1, 1, "data"));
	while ((p = pop(1))) {
		queued++;
		lanai_packet_drop(&fw, p);
	}
	ck_assert_uint_eq(fw.seg->injected[BIP_LANAI_FAULT_LOSS] + (uint64_t)queued, 100);
	ck_assert_uint_gt(fw.seg->injected[BIP_LANAI_FAULT_LOSS], 0);
	ck_assert_uint_gt(queued, 0);
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	fw_teardown();
}
END_TEST

/* --- the tail of a link: SYNC and SYNC_ACK --- */

/* Board src's pending link to dst, and when its SYNC is due. */
static struct lanai_link *link_of(int src, int dst)
{
	return &fw.boards[src].link[dst];
}

START_TEST(test_sync_reveals_lost_last_packet)
{
	struct lanai_packet *p;
	struct bip_lanai_event *ev;
	uint32_t cons = 0;
	uint64_t t0, t1;

	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	t0 = lanai_now_us();
	lanai_wire_send(&fw, short_packet(0, 1, 4, "last"));
	t1 = lanai_now_us();
	ck_assert_int_eq(fw.boards[0].npending, 1);
	ck_assert(link_of(0, 1)->pending);
	ck_assert_uint_ge(link_of(0, 1)->sync_due, t0 + 1000);
	ck_assert_uint_le(link_of(0, 1)->sync_due, t1 + 1000);
	/* Not idle long enough: no SYNC, but the firmware wakes up for it. */
	fw.next_due = 0;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], t0), 0);
	ck_assert_uint_eq(fw.next_due, link_of(0, 1)->sync_due);
	/* The packet is lost on the wire. */
	lanai_packet_drop(&fw, pop(1));
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], link_of(0, 1)->sync_due), 1);
	p = pop(1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->h.kind, LANAI_PKT_SYNC);
	ck_assert_uint_eq(p->h.seq, 1);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EIO);
	ev = next_event(1, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_GAP);
	ck_assert_uint_eq(ev->pseq, 1);
	ck_assert_str_eq(
	    (char *)ev->payload,
	    "sequence gap: the SYNC packet from node 0 on tag 0 has sequence 1 where "
	    "0 was expected: packet 0 was lost; nothing more from node 0 is delivered");
	lanai_packet_drop(&fw, p);
	/* Unanswered, the link stays pending; the next SYNC waits twice as long. */
	ck_assert_int_eq(fw.boards[0].npending, 1);
	ck_assert_uint_eq(link_of(0, 1)->unanswered, 1);
	t0 = lanai_now_us();
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], link_of(0, 1)->sync_due), 1);
	t1 = lanai_now_us();
	ck_assert_uint_ge(link_of(0, 1)->sync_due, t0 + 2000);
	ck_assert_uint_le(link_of(0, 1)->sync_due, t1 + 2000);
	lanai_packet_drop(&fw, pop(1));
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	fw_teardown();
}
END_TEST

START_TEST(test_sync_ack_confirms_the_link)
{
	struct lanai_packet *p;
	uint64_t due;

	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	lanai_wire_send(&fw, short_packet(0, 1, 4, "a"));
	lanai_wire_send(&fw, short_packet(0, 1, 4, "b"));
	ck_assert_uint_eq(link_of(0, 1)->need, 2);
	while ((p = pop(1))) {
		ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
		lanai_packet_drop(&fw, p);
	}
	due = link_of(0, 1)->sync_due;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], due), 1);
	p = pop(1);
	ck_assert_uint_eq(p->h.kind, LANAI_PKT_SYNC);
	ck_assert_uint_eq(p->h.seq, 2);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
	lanai_packet_drop(&fw, p);
	/* An answer for a SYNC never sent confirms nothing. */
	lanai_sync_acked(&fw, &fw.boards[0], 1, 3);
	ck_assert_int_eq(fw.boards[0].npending, 1);
	/* The answer: a SYNC_ACK needs no confirming itself. */
	p = lanai_packet_new(0);
	p->h.kind = LANAI_PKT_SYNC_ACK;
	p->h.src = 1;
	p->h.dst = 0;
	p->h.arg0 = 2;
	lanai_wire_send(&fw, p);
	ck_assert_int_eq(fw.boards[1].npending, 0);
	ck_assert(!link_of(1, 0)->pending);
	p = pop(0);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[0], p), 0);
	lanai_sync_acked(&fw, &fw.boards[0], p->h.src, (uint32_t)p->h.arg0);
	lanai_packet_drop(&fw, p);
	ck_assert_int_eq(fw.boards[0].npending, 0);
	ck_assert_uint_eq(link_of(0, 1)->confirmed, 3);
	/* Every link confirmed: nothing to send, no reason to wake up. */
	fw.next_due = 0;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], due + 1000000), 0);
	ck_assert_uint_eq(fw.next_due, 0);
	ck_assert(!fw.boards[1].in_head);
	/* An older answer (duplicated) changes nothing. */
	lanai_sync_acked(&fw, &fw.boards[0], 1, 2);
	ck_assert_uint_eq(link_of(0, 1)->confirmed, 3);
	/* A new packet makes the link pending again. */
	lanai_wire_send(&fw, short_packet(0, 1, 4, "c"));
	ck_assert_int_eq(fw.boards[0].npending, 1);
	ck_assert_uint_eq(link_of(0, 1)->need, 4);
	lanai_packet_drop(&fw, pop(1));
	fw_teardown();
}
END_TEST

START_TEST(test_sync_none_towards_an_ended_host)
{
	fw_setup(3, NULL, NULL);
	fw.faults.sync_us = 1000;
	lanai_wire_send(&fw, short_packet(0, 1, 4, "a"));
	lanai_wire_send(&fw, short_packet(0, 2, 4, "b"));
	lanai_packet_drop(&fw, pop(1));
	lanai_packet_drop(&fw, pop(2));
	ck_assert_int_eq(fw.boards[0].npending, 2);
	fw.boards[1].releasing = 1;
	fw.boards[2].state = BIP_LANAI_BOARD_DEAD;
	fw.next_due = 0;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], lanai_now_us() + 10000000), 0);
	ck_assert_int_eq(fw.boards[0].npending, 0);
	ck_assert(!fw.boards[1].in_head && !fw.boards[2].in_head);
	ck_assert_uint_eq(fw.next_due, 0);
	fw_teardown();
}
END_TEST

/* A header that claims more payload than the packet carries fails its CRC,
 * and nothing reads past the payload (found by fuzz/lanai_wire); a packet
 * whose fields are out of range is refused before they index anything. */
START_TEST(test_packet_decode_checks)
{
	struct lanai_packet *p = short_packet(0, 1, 4, "abcd");
	struct lanai_pkt_header h;
	char why[128];

	/* Whatever its CRC says (the wire has not set it here). */
	p->h.len = 4000;
	ck_assert(!lanai_packet_crc_ok(p));
	p->h.len = 4;
	h = p->h;
	ck_assert_int_eq(lanai_packet_header_check(&h, 4, 2, why, sizeof(why)), -EPROTO);
	h.nhops = 1;
	h.hop[0] = 256;
	ck_assert_int_eq(lanai_packet_header_check(&h, 4, 2, why, sizeof(why)), 0);
	ck_assert_int_eq(lanai_packet_header_check(&h, 5, 2, why, sizeof(why)), -EPROTO);
	h.src = 7;
	ck_assert_int_eq(lanai_packet_header_check(&h, 4, 2, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "from node 7"), "%s", why);
	h.src = 0;
	h.kind = 99;
	ck_assert_int_eq(lanai_packet_header_check(&h, 4, 2, why, sizeof(why)), -EPROTO);
	free(p);
}
END_TEST

/* A datagram from board 0 that carries 16 bytes and gathers 200 at data. */
static struct lanai_packet *gather_packet(const uint8_t *data)
{
	struct lanai_packet *p = lanai_packet_new(16);
	int i;

	ck_assert_ptr_nonnull(p);
	p->h.kind = LANAI_PKT_DGRAM;
	p->h.src = 0;
	p->h.dst = 1;
	for (i = 0; i < 16; i++)
		p->payload[i] = (uint8_t)(0xc0 + i);
	p->g = (struct lanai_gather){.addr = (uint64_t)(uintptr_t)data, .len = 200,
				     .pid = (int32_t)getpid()};
	p->h.len = 16 + 200;
	return p;
}

/*
 * A datagram that gathers its data at delivery (struct lanai_gather): the
 * wire's CRC covers the bytes it carries and the descriptor of the rest;
 * the receiving board reads the rest from the sender's memory into its
 * host's queue, but only while the sending board runs for that process:
 * zeros once the process is gone or for another process.  A flipped bit of
 * the descriptor, or a length beyond what it carries and gathers, fails
 * the wire's CRC.
 */
START_TEST(test_dgram_gather)
{
	static uint8_t data[200];
	struct lanai_packet *p;
	struct bip_tagq_entry *e;
	const uint8_t *w;
	int i, round;

	for (i = 0; i < 200; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	fw_setup(2, NULL, NULL);
	host_setup(2 * bip_tagq_entry_size(BIP_LANAI_SHORT_MAX));
	fw.boards[0].state = BIP_LANAI_BOARD_RUNNING;
	fw.boards[0].pid = getpid();
	fw.boards[0].mode = fw.boards[1].mode = BIP_LANAI_MODE_DGRAM;
	for (round = 0; round < 3; round++) {
		p = gather_packet(data);
		lanai_wire_send(&fw, p);
		p = pop(1);
		ck_assert_ptr_nonnull(p);
		ck_assert(lanai_packet_crc_ok(p));
		ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
		if (round == 1)
			fw.boards[0].pid = getppid(); /* the board runs for another process */
		if (round == 2) {
			fw.boards[0].pid = getpid();
			fw.boards[0].host_ended = 1;
		}
		ck_assert_int_eq(lanai_queue_arrival(&fw, &fw.boards[1], p), 0);
		lanai_packet_drop(&fw, p);
		ck_assert_int_eq(host_poll(), 1);
		e = bip_tagq_peek(&hostq[0]);
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(e->kind, BIP_TAGQ_SHORT);
		ck_assert_uint_eq(e->len, 216);
		w = bip_tagq_payload(e);
		for (i = 0; i < 16; i++)
			ck_assert_uint_eq(w[i], 0xc0 + i);
		for (i = 0; i < 200; i++)
			ck_assert_uint_eq(w[16 + i], round ? 0 : data[i]);
		bip_tagq_pop(&hostq[0]);
	}
	fw.boards[0].host_ended = 0;
	lanai_wire_send(&fw, gather_packet(data));
	p = pop(1);
	p->g.addr ^= 64;
	ck_assert(!lanai_packet_crc_ok(p));
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EBADMSG);
	lanai_packet_drop(&fw, p);
	lanai_wire_send(&fw, gather_packet(data));
	p = pop(1);
	p->h.len++;
	ck_assert(!lanai_packet_crc_ok(p));
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EBADMSG);
	lanai_packet_drop(&fw, p);
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	free(window);
	fw_teardown();
}
END_TEST

/* A link that confirms nothing for the link time-out is down: its host gets
 * a report naming the link and the peer, and no more SYNC goes. */
START_TEST(test_link_timeout)
{
	struct bip_lanai_event *ev;
	uint32_t cons = 0;
	uint64_t t;

	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	fw.faults.link_timeout_us = 2000000;
	lanai_wire_send(&fw, short_packet(0, 1, 4, "lost"));
	lanai_packet_drop(&fw, pop(1)); /* never arrives */
	t = link_of(0, 1)->since;
	/* Before the time-out: a SYNC. */
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], t + 1999999), 1);
	lanai_packet_drop(&fw, pop(1));
	ck_assert_ptr_null(next_event(0, &cons));
	/* After it: down, reported once, nothing sent. */
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], t + 2000000), 0);
	ck_assert_ptr_null(fw.boards[1].in_head);
	ck_assert_int_eq(fw.boards[0].npending, 0);
	ev = next_event(0, &cons);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->kind, BIP_LANAI_EV_ERROR);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_LINKDOWN);
	ck_assert_msg(strstr((char *)ev->payload, "link from node 0 to node 1 is down"), "%s",
		      (char *)ev->payload);
	ck_assert_ptr_null(next_event(0, &cons));
	fw_teardown();
}
END_TEST

START_TEST(test_sync_faults_and_reports)
{
	struct lanai_packet *p;
	uint64_t rng;

	struct bip_lanai_event *ev;
	uint32_t cons = 0;

	/* A corrupt SYNC is a corrupt packet; a duplicated one, a duplicate. */
	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	lanai_wire_send(&fw, short_packet(0, 1, 4, "a"));
	p = pop(1);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), 0);
	lanai_packet_drop(&fw, p);
	fw.faults.ppm[BIP_LANAI_FAULT_CORRUPT] = 1000000;
	fw.faults.ppm[BIP_LANAI_FAULT_DUPLICATE] = 1000000;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], link_of(0, 1)->sync_due), 1);
	ck_assert_int_eq(fw.boards[1].in_count, 2);
	p = pop(1);
	ck_assert_uint_eq(p->h.kind, LANAI_PKT_SYNC);
	ck_assert_int_eq(lanai_wire_check(&fw, &fw.boards[1], p), -EBADMSG);
	lanai_packet_drop(&fw, p);
	ev = next_event(1, &cons);
	ck_assert_uint_eq(ev->fault, BIP_LANAI_DET_CRC);
	ck_assert_msg(strstr((char *)ev->payload, "in the SYNC packet from node 0 on tag 0, "
						  "sequence 1: dropped, not delivered"),
		      "%s", (char *)ev->payload);
	lanai_packet_drop(&fw, pop(1));
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	fw_teardown();

	/* SYNCs draw their faults apart: the others stay reproducible. */
	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	fw.faults.ppm[BIP_LANAI_FAULT_LOSS] = 1000000;
	fw.rng = 7;
	fw.rng_sync = 9;
	p = short_packet(0, 1, 4, "a");
	fw.faults.ppm[BIP_LANAI_FAULT_LOSS] = 0;
	lanai_wire_send(&fw, p);
	lanai_packet_drop(&fw, pop(1));
	fw.faults.ppm[BIP_LANAI_FAULT_LOSS] = 1000000;
	rng = fw.rng;
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], link_of(0, 1)->sync_due), 1);
	ck_assert_uint_eq(fw.rng, rng);
	ck_assert_uint_ne(fw.rng_sync, 9);
	ck_assert_uint_eq(fw.seg->injected[BIP_LANAI_FAULT_LOSS], 1);
	ck_assert(!fw.boards[1].in_head);
	ck_assert_int_eq(fw.boards[0].npending, 1);
	ck_assert_int_eq(fw.boards[0].inflight, 0);
	fw_teardown();

	/* The link is down: the sender's host has the report, no SYNC follows. */
	fw_setup(2, NULL, NULL);
	fw.faults.sync_us = 1000;
	fw.faults.linkdown_node = 1;
	fw.faults.linkdown_after = 0;
	lanai_wire_send(&fw, short_packet(0, 1, 4, "a"));
	ck_assert_uint_eq(fw.boards[0].regs->detected[BIP_LANAI_DET_LINKDOWN], 1);
	ck_assert_int_eq(fw.boards[0].npending, 0);
	ck_assert(link_of(0, 1)->failed);
	ck_assert_int_eq(lanai_sync_links(&fw, &fw.boards[0], lanai_now_us() + 10000000), 0);
	fw_teardown();
}
END_TEST

START_TEST(test_drop_knob)
{
	struct lanai_packet *p;
	int i;

	fw_setup(3, NULL, NULL);
	fw.faults.sync_us = 1000;
	fw.faults.drop_kind = LANAI_PKT_SHORT;
	fw.faults.drop_src = 0;
	fw.faults.drop_dst = 1;
	fw.faults.drop_n = 2;
	for (i = 0; i < 4; i++) {
		lanai_wire_send(&fw, short_packet(0, 2, 4, "other link"));
		lanai_wire_send(&fw, short_packet(0, 1, 4, "x"));
	}
	ck_assert_uint_eq(fw.seg->injected[BIP_LANAI_FAULT_LOSS], 1);
	for (i = 0; (p = pop(1)); i++) {
		ck_assert_uint_eq(p->h.seq, i < 2 ? (uint32_t)i : (uint32_t)i + 1);
		lanai_packet_drop(&fw, p);
	}
	ck_assert_int_eq(i, 3);
	while ((p = pop(2)))
		lanai_packet_drop(&fw, p);
	fw_teardown();
}
END_TEST

/* --- knobs --- */

START_TEST(test_fault_knobs_from_env)
{
	struct lanai_faults f;
	char err[256];

	setenv("BIP_LANAI_LOSS", "2.5%", 1);
	setenv("BIP_LANAI_CORRUPT", "1", 1);
	setenv("BIP_LANAI_DELAY", "250us", 1);
	setenv("BIP_LANAI_SEED", "99", 1);
	setenv("BIP_LANAI_LINK_DOWN", "3@50ms", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.ppm[BIP_LANAI_FAULT_LOSS], 25000);
	ck_assert_uint_eq(f.ppm[BIP_LANAI_FAULT_CORRUPT], 10000);
	ck_assert_uint_eq(f.delay_us, 250);
	ck_assert_uint_eq(f.seed, 99);
	ck_assert_int_eq(f.linkdown_node, 3);
	ck_assert_int_eq(f.linkdown_in_time, 1);
	ck_assert_uint_eq(f.linkdown_after, 50000);
	setenv("BIP_LANAI_LINK_DOWN", "1@40", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(f.linkdown_in_time, 0);
	ck_assert_uint_eq(f.linkdown_after, 40);
	setenv("BIP_LANAI_LINK_DOWN", "1@", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "BIP_LANAI_LINK_DOWN=1@: expected NODE@DOWN or NODE@DOWN:UP"),
		      "%s", err);
	/* Down, then up again: counted the same way, up after down. */
	setenv("BIP_LANAI_LINK_DOWN", "1@50ms:300ms", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(f.linkdown_in_time, 1);
	ck_assert_uint_eq(f.linkdown_after, 50000);
	ck_assert_uint_eq(f.linkup_after, 300000);
	setenv("BIP_LANAI_LINK_DOWN", "2@100:900", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(f.linkdown_in_time, 0);
	ck_assert_uint_eq(f.linkup_after, 900);
	setenv("BIP_LANAI_LINK_DOWN", "2@100:50ms", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "counted the same way"), "%s", err);
	setenv("BIP_LANAI_LINK_DOWN", "2@100:100", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	setenv("BIP_LANAI_LINK_DOWN", "2@100:", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	unsetenv("BIP_LANAI_LINK_DOWN");
	/* A knob of one rail wins on that rail only. */
	setenv("BIP_LANAI_RAIL1_LINK_DOWN", "0@10:20", 1);
	setenv("BIP_LANAI_RAIL1_LOSS", "7", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(f.linkdown_node, -1);
	ck_assert_uint_eq(f.ppm[BIP_LANAI_FAULT_LOSS], 25000);
	ck_assert_int_eq(lanai_faults_from_env(&f, 1, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(f.linkdown_node, 0);
	ck_assert_uint_eq(f.linkup_after, 20);
	ck_assert_uint_eq(f.ppm[BIP_LANAI_FAULT_LOSS], 70000);
	ck_assert_uint_eq(f.ppm[BIP_LANAI_FAULT_CORRUPT], 10000);
	/* ... and is an error where there is no such rail. */
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "BIP_LANAI_RAIL1_LINK_DOWN: rail 1, but the job has 1 rail") ||
			  strstr(err, "BIP_LANAI_RAIL1_LOSS: rail 1, but the job has 1 rail"),
		      "%s", err);
	unsetenv("BIP_LANAI_RAIL1_LINK_DOWN");
	unsetenv("BIP_LANAI_RAIL1_LOSS");
	setenv("BIP_LANAI_RAIL0_JITTER", "3", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 2, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "BIP_LANAI_RAIL0_JITTER: no such knob"), "%s", err);
	unsetenv("BIP_LANAI_RAIL0_JITTER");
	setenv("BIP_LANAI_LOSS", "101", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "BIP_LANAI_LOSS=101: expected a percentage from 0 to 100 (e.g. 5%)");
	unsetenv("BIP_LANAI_LOSS");
	unsetenv("BIP_LANAI_CORRUPT");
	unsetenv("BIP_LANAI_DELAY");
	unsetenv("BIP_LANAI_SEED");
	ck_assert_uint_eq(f.sync_us, LANAI_SYNC_US);
	ck_assert_uint_eq(f.drop_kind, 0);
	setenv("BIP_LANAI_DROP", "SYNC_ACK:1:0:3", 1);
	setenv("BIP_LANAI_SYNC", "250us", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.drop_kind, LANAI_PKT_SYNC_ACK);
	ck_assert_uint_eq(f.drop_src, 1);
	ck_assert_uint_eq(f.drop_dst, 0);
	ck_assert_uint_eq(f.drop_n, 3);
	ck_assert_uint_eq(f.sync_us, 250);
	setenv("BIP_LANAI_DROP", "SHORT:1:1:0", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "BIP_LANAI_DROP=SHORT:1:1:0: expected KIND:SRC:DST:N"), "%s",
		      err);
	setenv("BIP_LANAI_DROP", "SHORT:1:0:0x", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	unsetenv("BIP_LANAI_DROP");
	setenv("BIP_LANAI_SYNC", "0us", 1);
	ck_assert_int_eq(lanai_faults_from_env(&f, 0, 1, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "BIP_LANAI_SYNC=0us: expected a time above 0 (1ms, 500us, 1s)");
	unsetenv("BIP_LANAI_SYNC");
}
END_TEST

/* --- one-sided operations (rma.c) --- */

START_TEST(test_rma_apply_integers)
{
	/* Each op on int8 and uint8 at the edges, and on int64, unaligned. */
	static const struct {
		int op, type;
		int64_t t, o, want;
	} cases[] = {
		{ BIP_RMA_SUM, BIP_RMA_INT8, 127, 1, -128 }, /* wraps */
		{ BIP_RMA_SUM, BIP_RMA_UINT8, 255, 2, 1 },
		{ BIP_RMA_PROD, BIP_RMA_INT16, -300, 3, -900 },
		{ BIP_RMA_PROD, BIP_RMA_UINT8, 30, 25, 750 % 256 },
		{ BIP_RMA_MIN, BIP_RMA_INT8, 5, -3, -3 },
		{ BIP_RMA_MIN, BIP_RMA_UINT8, 5, 0xfd, 5 }, /* 253 unsigned */
		{ BIP_RMA_MAX, BIP_RMA_INT32, -5, -7, -5 },
		{ BIP_RMA_MAX, BIP_RMA_UINT32, 1, 0xffffffff, 0xffffffff },
		{ BIP_RMA_MIN, BIP_RMA_INT64, INT64_MIN, 0, INT64_MIN },
		{ BIP_RMA_MAX, BIP_RMA_UINT64, 0, -1, -1 },
		{ BIP_RMA_BAND, BIP_RMA_UINT16, 0xf0f0, 0x0ff0, 0x00f0 },
		{ BIP_RMA_BOR, BIP_RMA_INT8, 0x10, 0x01, 0x11 },
		{ BIP_RMA_BXOR, BIP_RMA_UINT64, 0xff, 0x0f, 0xf0 },
		{ BIP_RMA_LAND, BIP_RMA_INT32, 7, 0, 0 },
		{ BIP_RMA_LAND, BIP_RMA_INT32, 7, -1, 1 },
		{ BIP_RMA_LOR, BIP_RMA_UINT8, 0, 0, 0 },
		{ BIP_RMA_LOR, BIP_RMA_UINT8, 0, 9, 1 },
		{ BIP_RMA_LXOR, BIP_RMA_INT16, 3, 4, 0 },
		{ BIP_RMA_LXOR, BIP_RMA_INT16, 3, 0, 1 },
		{ BIP_RMA_REPLACE, BIP_RMA_INT64, 1, -42, -42 },
		{ BIP_RMA_NO_OP, BIP_RMA_INT64, 1, -42, 1 },
		{ BIP_RMA_CSWAP, BIP_RMA_UINT32, 8, 9, 9 },
	};
	size_t i, size;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t t[3 * 8 + 1], o[3 * 8], c[8], old[3 * 8];
		int64_t got = 0, before = 0;
		int k;

		size = lanai_rma_type_size(cases[i].type);
		for (k = 0; k < 3; k++) {
			memcpy(t + 1 + k * size, &cases[i].t, size); /* little-endian */
			memcpy(o + k * size, &cases[i].o, size);
		}
		memcpy(c, &cases[i].t, size);
		ck_assert_int_eq(lanai_rma_apply(cases[i].op, cases[i].type,
						 cases[i].op == BIP_RMA_CSWAP ? 1 : 3, t + 1, o, c,
						 old), 0);
		for (k = 0; k < (cases[i].op == BIP_RMA_CSWAP ? 1 : 3); k++) {
			memcpy(&got, t + 1 + k * size, size);
			memcpy(&before, old + k * size, size);
			ck_assert_msg(!memcmp(&got, &cases[i].want, size),
				      "case %zu (op %d type %d) element %d: 0x%llx, not 0x%llx", i,
				      cases[i].op, cases[i].type, k, (unsigned long long)got,
				      (unsigned long long)cases[i].want);
			ck_assert_msg(!memcmp(&before, &cases[i].t, size), "case %zu: old value",
				      i);
		}
	}
}
END_TEST

START_TEST(test_rma_apply_floats_and_refusals)
{
	double d[2] = { 1.5, -2 }, od[2] = { 0.25, -3 };
	float f = 2.0f, of = 0.5f, cf = 2.0f, old;
	uint64_t u = 5, ou = 1;

	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_SUM, BIP_RMA_DOUBLE, 2, d, od, NULL, NULL), 0);
	ck_assert(d[0] == 1.75 && d[1] == -5);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_MIN, BIP_RMA_DOUBLE, 2, d, od, NULL, NULL), 0);
	ck_assert(d[0] == 0.25 && d[1] == -5);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_PROD, BIP_RMA_FLOAT, 1, &f, &of, NULL, &old), 0);
	ck_assert(f == 1.0f && old == 2.0f);
	/* CSWAP compares the bits: 1.0 != 2.0, nothing written. */
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_CSWAP, BIP_RMA_FLOAT, 1, &f, &of, &cf, &old), 0);
	ck_assert(f == 1.0f && old == 1.0f);
	/* Refused, nothing written. */
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_BAND, BIP_RMA_FLOAT, 1, &f, &of, NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_LOR, BIP_RMA_DOUBLE, 1, d, od, NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(0, BIP_RMA_UINT64, 1, &u, &ou, NULL, NULL), -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_CSWAP + 1, BIP_RMA_UINT64, 1, &u, &ou, NULL,
					 NULL), -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_SUM, 0, 1, &u, &ou, NULL, NULL), -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_SUM, BIP_RMA_DOUBLE + 1, 1, &u, &ou, NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_CSWAP, BIP_RMA_UINT64, 1, &u, &ou, NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_SUM, BIP_RMA_UINT64, 1, &u, NULL, NULL, NULL),
			 -EINVAL);
	ck_assert(u == 5 && f == 1.0f);
	ck_assert_int_eq(lanai_rma_apply(BIP_RMA_NO_OP, BIP_RMA_UINT64, 1, &u, NULL, NULL, &ou), 0);
	ck_assert(u == 5 && ou == 5);
}
END_TEST

/* A request packet for the checks: what, len bytes at offset of a span. */
static struct lanai_packet *rma_request(uint64_t key, uint8_t what, uint64_t offset,
					uint32_t len, uint64_t span_off, uint64_t span_len)
{
	struct lanai_rma_req q = { .key = key, .offset = offset, .span_off = span_off,
				   .span_len = span_len, .len = len, .what = what,
				   .op = BIP_RMA_SUM, .type = BIP_RMA_UINT32, .count = len / 4 };
	uint32_t data = what == BIP_LANAI_RMA_GET ? 0 : len;
	struct lanai_packet *p = lanai_packet_new((uint32_t)sizeof(q) + data);

	ck_assert_ptr_nonnull(p);
	memcpy(p->payload, &q, sizeof(q));
	memset(p->payload + sizeof(q), 0, data);
	p->h.kind = LANAI_PKT_RMA_REQ;
	return p;
}

START_TEST(test_rma_check)
{
	struct lanai_rma_region rgn[LANAI_RMA_REGIONS] = { 0 };
	const uint16_t stamp = 0x1234;
	/* Slot 7, generation 3, node 2. */
	uint64_t key = (uint64_t)stamp << 48 | 2ull << 32 | 3u << 8 | 7, addr = 0;
	struct lanai_packet *p;

	rgn[7] = (struct lanai_rma_region){ .base = 0x10000, .len = 1000, .gen = 3, .active = 1 };
	p = rma_request(key, BIP_LANAI_RMA_PUT, 992, 8, 992, 8);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), 0);
	ck_assert_uint_eq(addr, 0x10000);
	/* Another node, another stamp, an old generation, a free slot. */
	ck_assert_int_eq(lanai_rma_check(p, 3, stamp, rgn, &addr), -EACCES);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp + 1, rgn, &addr), -EACCES);
	rgn[7].gen = 4;
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EACCES);
	rgn[7].gen = 3;
	rgn[7].active = 0;
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EACCES);
	rgn[7].active = 1;
	free(p);
	/* The whole operation's span must fit, even for a request inside. */
	p = rma_request(key, BIP_LANAI_RMA_PUT, 0, 8, 0, 1001);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -ERANGE);
	free(p);
	p = rma_request(key, BIP_LANAI_RMA_GET, 996, 8, 996, 8);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -ERANGE);
	free(p);
	p = rma_request(key, BIP_LANAI_RMA_GET, UINT64_MAX - 3, 8, UINT64_MAX - 3, 8);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -ERANGE);
	free(p);
	/* A request outside its own span, or of a shape no board makes. */
	p = rma_request(key, BIP_LANAI_RMA_PUT, 100, 8, 0, 104);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EPROTO);
	free(p);
	p = rma_request(key, 9, 0, 8, 0, 8);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EPROTO);
	free(p);
	p = rma_request(key, BIP_LANAI_RMA_ATOMIC, 0, 6, 0, 6); /* not whole elements */
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EPROTO);
	free(p);
	p = rma_request(key, BIP_LANAI_RMA_ATOMIC, 0, 8, 0, 8);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), 0);
	p->cap--; /* one byte of operand short */
	p->h.len--;
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EPROTO);
	free(p);
	p = lanai_packet_new(4); /* no header */
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(lanai_rma_check(p, 2, stamp, rgn, &addr), -EPROTO);
	free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lanai");
	TCase *tc;
	SRunner *sr;
	int failed;

	tc = tcase_create("descriptor ring");
	tcase_add_test(tc, test_desc_ring_in_order_over_laps);
	tcase_add_test(tc, test_desc_ring_full_then_room);
	tcase_add_test(tc, test_desc_stale_slot_not_ready);
	suite_add_tcase(s, tc);
	tc = tcase_create("event queue");
	tcase_add_test(tc, test_event_queue_full_and_freed);
	suite_add_tcase(s, tc);
	tc = tcase_create("crc32c");
	tcase_add_test(tc, test_crc32c_vectors);
	tcase_add_test(tc, test_crc32c_chained_and_paths_agree);
	tcase_add_test(tc, test_crc32c_stripes);
	tcase_add_test(tc, test_crc32c_copy);
	suite_add_tcase(s, tc);
	tc = tcase_create("routes");
	tcase_add_test(tc, test_route_walk);
	tcase_add_test(tc, test_wire_wrong_route_never_queued);
	suite_add_tcase(s, tc);
	tc = tcase_create("wire checks");
	tcase_add_test(tc, test_wire_check_in_order);
	tcase_add_test(tc, test_wire_check_corrupt);
	tcase_add_test(tc, test_wire_check_duplicate_and_gap);
	tcase_add_test(tc, test_wire_faults_counted);
	tcase_add_test(tc, test_sync_reveals_lost_last_packet);
	tcase_add_test(tc, test_sync_ack_confirms_the_link);
	tcase_add_test(tc, test_sync_none_towards_an_ended_host);
	tcase_add_test(tc, test_sync_faults_and_reports);
	tcase_add_test(tc, test_link_timeout);
	tcase_add_test(tc, test_packet_decode_checks);
	tcase_add_test(tc, test_dgram_gather);
	tcase_add_test(tc, test_drop_knob);
	suite_add_tcase(s, tc);
	tc = tcase_create("fault knobs");
	tcase_add_test(tc, test_fault_knobs_from_env);
	tcase_add_test(tc, test_dma_tagq_laps);
	tcase_add_test(tc, test_dma_stall_per_source);
	tcase_add_test(tc, test_dma_bad_tables);
	suite_add_tcase(s, tc);
	tc = tcase_create("one-sided operations");
	tcase_add_test(tc, test_rma_apply_integers);
	tcase_add_test(tc, test_rma_apply_floats_and_refusals);
	tcase_add_test(tc, test_rma_check);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
