/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the core protocol (lib/bip/core/proto.c, lib/bip/api/api.c) over a mock NIC:
 * the test plays the driver, calling the bip_core_* entry points itself.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct mock_nic {
	struct bip_nic nic;
	int refuse;                 /* post_short/post_long answer -EAGAIN */
	int nshort, nlong, nlrecv;
	int last_dst;
	uint32_t last_tag;
	size_t last_len;
	int last_data[BIPSMALLSIZE];
	uint64_t last_cookie;
	uint64_t last_handle;
	void *last_buf;
};

static struct mock_nic mock;

static int mock_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len)
{
	if (mock.refuse)
		return -EAGAIN;
	mock.nshort++;
	mock.last_dst = dst;
	mock.last_tag = tag;
	mock.last_len = len;
	memcpy(mock.last_data, buf, len);
	return 0;
}

static int mock_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
		     uint64_t cookie)
{
	if (mock.refuse)
		return -EAGAIN;
	mock.nlong++;
	mock.last_dst = dst;
	mock.last_len = len;
	mock.last_cookie = cookie;
	return 0;
}

static int mock_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			  uint64_t cookie)
{
	mock.nlrecv++;
	mock.last_handle = handle;
	mock.last_buf = buf;
	mock.last_len = len;
	mock.last_cookie = cookie;
	return 0;
}

static int mock_poll(struct bip_nic *nic)
{
	return 0;
}

static int mock_alive(struct bip_nic *nic, int node)
{
	return 1;
}

static const struct bip_nic_ops mock_ops = {
	.name = "mock",
	.post_short = mock_short,
	.post_long = mock_long,
	.post_long_recv = mock_long_recv,
	.poll = mock_poll,
	.alive = mock_alive,
};

static void setup(void)
{
	int i;

	memset(&mock, 0, sizeof(mock));
	mock.nic.ops = &mock_ops;
	mock.nic.max_short = BIP_SHORT_MAX;
	bip_state.mynode = 0;
	bip_state.numnodes = 3;
	bip_state.napp = 3;
	bip_state.peers = calloc(3, sizeof(*bip_state.peers));
	for (i = 0; i < 3; i++)
		bip_state.peers[i].nic = &mock.nic;
	bip_state.nics[0] = &mock.nic;
	bip_state.nnics = 1;
	ck_assert_int_eq(bip_sreq_table_init(), 0);
	for (i = 0; i < BIP_ALL_TAGS; i++) {
		/* Tag 9 holds two messages of one word; the others the default. */
		uint32_t cap = i == 9 ? 2 * (1 + BIP_MSG_HEAD) * 4 :
					BIP_DEFAULT_NBUFS * (BIP_DEFAULT_BUFSIZE + BIP_MSG_HEAD) * 4;
		ck_assert_int_eq(bip_tagq_init(&bip_state.tags[i].q, cap), 0);
		bip_state.tags[i].state = BIP_RECV_IDLE;
	}
	bip_state.spin_limit = 10;
	bip_state.initialized = 1;
}

static void teardown(void)
{
	int i;

	for (i = 0; i < BIP_ALL_TAGS; i++) {
		bip_tagq_free(&bip_state.tags[i].q);
		free(bip_state.tags[i].failure);
		bip_state.tags[i].failure = NULL;
	}
	bip_sreq_table_free();
	bip_flow_free();
	free(bip_state.peers);
	bip_state.peers = NULL;
	bip_state.queued_sends = bip_state.inflight_sends = 0;
	bip_state.initialized = 0;
}

START_TEST(test_short_send_completes_at_once)
{
	int data[3] = { 7, 8, 9 };

	ck_assert_int_eq(bip_tisend(2, 4, data, 3), 0);
	ck_assert_int_eq(mock.nshort, 1);
	ck_assert_int_eq(mock.last_dst, 2);
	ck_assert_uint_eq(mock.last_tag, 4);
	ck_assert_uint_eq(mock.last_len, 12);
	ck_assert_int_eq(mock.last_data[2], 9);
	ck_assert_int_eq(bip_stest(0), 1);
}
END_TEST

/* A NIC without room: the sends wait in order and leave when it has room. */
START_TEST(test_refused_sends_wait_in_order)
{
	int a = 1, b = 2, id1, id2;

	mock.refuse = 1;
	id1 = bip_tisend(1, 0, &a, 1);
	id2 = bip_tisend(1, 0, &b, 1);
	ck_assert_int_gt(id1, 0);
	ck_assert_int_gt(id2, 0);
	ck_assert_int_eq(bip_stest(id1), 0);
	ck_assert_int_eq(mock.nshort, 0);
	mock.refuse = 0;
	ck_assert_int_eq(bip_stest(id2), 1);
	ck_assert_int_eq(mock.nshort, 2);
	ck_assert_int_eq(mock.last_data[0], 2); /* b went last */
	ck_assert_int_eq(bip_stest(id1), 1);
	/* A later send to the same peer goes straight out. */
	ck_assert_int_eq(bip_tisend(1, 0, &a, 1), 0);
}
END_TEST

START_TEST(test_long_send_waits_for_the_receiver)
{
	static int big[1000];
	int id;

	id = bip_tisend(1, 3, big, 1000);
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(mock.nlong, 1);
	ck_assert_uint_eq(mock.last_len, 4000);
	ck_assert_int_eq(bip_stest(id), 0);
	bip_core_send_done(mock.last_cookie, 0);
	ck_assert_int_eq(bip_stest(id), 1);
	bip_swait(id);
}
END_TEST

START_TEST(test_short_arrival_is_queued_then_received)
{
	int msg[2] = { 5, 6 }, buf[4], node = -1;

	ck_assert_int_eq(bip_tprobe(2), -1);
	ck_assert_int_eq(bip_core_short_arrived(1, 2, msg, 8), 0);
	ck_assert_int_eq(bip_tprobe(2), 2);
	ck_assert_int_eq(bip_trecvx(2, buf, 4, &node), 2);
	ck_assert_int_eq(node, 1);
	ck_assert_int_eq(buf[1], 6);
	ck_assert_int_eq(bip_tprobe(2), -1);
}
END_TEST

START_TEST(test_posted_receive_takes_arrival_directly)
{
	int msg = 42, buf = 0, node = -1, id;

	id = bip_tirecv(5, &buf, 1);
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(bip_rtest(id), -1);
	ck_assert_int_eq(bip_core_short_arrived(2, 5, &msg, 4), 0);
	ck_assert_int_eq(bip_rtestx(id, &node), 1);
	ck_assert_int_eq(buf, 42);
	ck_assert_int_eq(node, 2);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[5].q), 0);
	/* The id is spent. */
	ck_assert_int_eq(bip_rwait(id), -1);
}
END_TEST

/* Too long for the posted buffer: the receive fails, the message stays. */
START_TEST(test_too_long_message_stays_queued)
{
	int msg[3] = { 1, 2, 3 }, small = 0, big[3] = { 0 }, id;

	id = bip_tirecv(6, &small, 1);
	ck_assert_int_eq(bip_core_short_arrived(1, 6, msg, 12), 0);
	ck_assert_int_eq(bip_rwait(id), -1);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "longer than the receive buffer"));
	ck_assert_int_eq(bip_trecv(6, big, 3), 3);
	ck_assert_int_eq(big[2], 3);
}
END_TEST

/* The flow-control bitmap of the last message the mock NIC took on
 * BIP_TAG_FLOW, as its receiver reads it. */
static int told_held(uint32_t tag)
{
	uint64_t bits[BIP_TAG_WORDS];

	ck_assert_uint_eq(mock.last_tag, BIP_TAG_FLOW);
	ck_assert_uint_eq(mock.last_len, sizeof(bits));
	memcpy(bits, mock.last_data, sizeof(bits));
	return (int)((le64toh(bits[tag / 64]) >> (tag % 64)) & 1);
}

/*
 * A full queue keeps the arrival and the sender's later ones for that tag,
 * tells the sender to hold the tag, takes the sender's other tags and other
 * senders as before, and moves what it kept in, in order, as room appears.
 */
START_TEST(test_full_queue_keeps_arrival)
{
	int v, buf, node;

	mock.nshort = 0;
	for (v = 1; v <= 4; v++)
		ck_assert_int_eq(bip_core_short_arrived(1, 9, &v, 4), 0);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[9].q), 2);
	ck_assert_uint_eq(bip_state.peers[1].hold_want[0] >> 9 & 1, 1);
	/* Node 2's arrival for tag 9 is kept only because there is no room. */
	v = 20;
	ck_assert_int_eq(bip_core_short_arrived(2, 9, &v, 4), 0);
	ck_assert_uint_eq(bip_state.peers[2].hold_want[0] >> 9 & 1, 1);
	/* Node 1's other tags pass. */
	v = 77;
	ck_assert_int_eq(bip_core_short_arrived(1, 10, &v, 4), 0);
	ck_assert_int_eq(bip_trecv(10, &buf, 1), 1);
	ck_assert_int_eq(buf, 77);
	/* Progress (in bip_trecv) told both senders to hold tag 9. */
	ck_assert_int_eq(mock.nshort, 2);
	ck_assert(told_held(9));
	ck_assert(!told_held(10));
	/* Nothing new to say: nothing sent. */
	bip_progress();
	ck_assert_int_eq(mock.nshort, 2);
	/* Node 1's messages 1 .. 4 in order, then node 2's. */
	mock.nshort = 0;
	for (v = 1; v <= 4; v++) {
		ck_assert_int_eq(bip_trecvx(9, &buf, 1, &node), 1);
		ck_assert_int_eq(node, 1);
		ck_assert_int_eq(buf, v);
	}
	ck_assert_int_eq(bip_trecvx(9, &buf, 1, &node), 1);
	ck_assert_int_eq(node, 2);
	ck_assert_int_eq(buf, 20);
	/* Both were told to resume, once. */
	bip_progress();
	ck_assert_int_eq(mock.nshort, 2);
	ck_assert(!told_held(9));
	ck_assert_uint_eq(bip_state.kept_peers, 0);
}
END_TEST

/* A sender told to hold a tag keeps its sends to that tag, in order, and
 * lets its sends to other tags and other nodes pass. */
START_TEST(test_held_tag_waits_others_pass)
{
	uint64_t bits[BIP_TAG_WORDS] = { 0 };
	int v, id[3], other, i;

	bits[0] = htole64(1ull << 9);
	ck_assert_int_eq(bip_core_short_arrived(1, BIP_TAG_FLOW, bits, sizeof(bits)), 0);
	for (i = 0; i < 3; i++) {
		v = 100 + i;
		id[i] = bip_tisend(1, 9, &v, 1);
		ck_assert_int_gt(id[i], 0);
	}
	ck_assert_int_eq(mock.nshort, 0);
	/* Tag 9 of another node: at once. */
	v = 6;
	ck_assert_int_eq(bip_tisend(2, 9, &v, 1), 0);
	ck_assert_int_eq(mock.nshort, 1);
	/* Another tag of node 1 passes the held sends. */
	v = 5;
	other = bip_tisend(1, 10, &v, 1);
	ck_assert_int_ne(other, -1);
	ck_assert_int_eq(bip_stest(other), 1);
	ck_assert_int_eq(mock.nshort, 2);
	ck_assert_uint_eq(mock.last_tag, 10);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(bip_stest(id[i]), 0);
	/* Released: the held sends go, in order. */
	bits[0] = 0;
	ck_assert_int_eq(bip_core_short_arrived(1, BIP_TAG_FLOW, bits, sizeof(bits)), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(bip_stest(id[i]), 1);
	ck_assert_int_eq(mock.nshort, 5);
	ck_assert_uint_eq(mock.last_tag, 9);
	ck_assert_int_eq(mock.last_data[0], 102);
}
END_TEST

/* A malformed flow-control message is dropped with a message; the flow tag
 * itself can never be held. */
START_TEST(test_bad_flow_message)
{
	uint64_t bits[BIP_TAG_WORDS];
	int v = 1;

	memset(bits, 0xff, sizeof(bits));
	ck_assert_int_eq(bip_core_short_arrived(1, BIP_TAG_FLOW, bits, 3), 0);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "flow-control message of 3 bytes"));
	ck_assert_uint_eq(bip_state.peers[1].held_by_peer[0], 0);
	ck_assert_int_eq(bip_core_short_arrived(1, BIP_TAG_FLOW, bits, sizeof(bits)), 0);
	ck_assert(!bip_tag_held(&bip_state.peers[1], BIP_TAG_FLOW));
	ck_assert(bip_tag_held(&bip_state.peers[1], 0));
	/* Arrivals from a node that does not exist are dropped. */
	ck_assert_int_eq(bip_core_short_arrived(7, 3, &v, 4), 0);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "no such node"));
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[3].q), 0);
}
END_TEST

/* A sender that goes on sending to a held tag is kept up to BIP_KEPT_MAX
 * bytes; past that the driver must hold it back whole (-EAGAIN), and the
 * other senders still pass. */
START_TEST(test_kept_bytes_are_bounded)
{
	static int big[BIPSMALLSIZE];
	int v = 3, rc = 0;
	long n;

	for (n = 0; n < 1000000 && rc == 0; n++)
		rc = bip_core_short_arrived(1, 9, big, sizeof(big));
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_lt(n, 1000000);
	ck_assert_uint_le(bip_state.peers[1].kept_bytes, BIP_KEPT_MAX);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "all its messages wait now"));
	ck_assert_int_eq(bip_core_short_arrived(2, 10, &v, 4), 0);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[10].q), 1);
}
END_TEST

START_TEST(test_long_arrival_needs_a_receive)
{
	static int buf[2000];
	int dummy, id, node = -1;

	ck_assert_int_eq(bip_core_long_arrived(2, 7, 4000, 0xabcdull), 0);
	/* Invisible to probe, nrecv and getmsg. */
	ck_assert_int_eq(bip_tprobe(7), -1);
	ck_assert_int_eq(bip_tnrecv(7, &dummy, 1), -1);
	ck_assert_ptr_null(bip_tngetmsg(7, NULL, NULL));
	/* Other tags are not blocked by it. */
	ck_assert_int_eq(bip_core_short_arrived(2, 8, &dummy, 4), 0);
	ck_assert_int_eq(bip_tprobe(8), 1);
	id = bip_tirecv(7, buf, 2000);
	ck_assert_int_eq(mock.nlrecv, 1);
	ck_assert(mock.last_handle == 0xabcdull);
	ck_assert_ptr_eq(mock.last_buf, buf);
	ck_assert_int_eq(bip_rtest(id), -1);
	bip_core_recv_done(mock.last_cookie, 0);
	ck_assert_int_eq(bip_rwaitx(id, &node), 1000);
	ck_assert_int_eq(node, 2);
}
END_TEST

START_TEST(test_getmsg_holds_until_freed)
{
	int a = 10, b = 11, len = 0, node = -1, buf, *m1, *m2;

	bip_core_short_arrived(1, 3, &a, 4);
	bip_core_short_arrived(2, 3, &b, 4);
	m1 = bip_tgetmsg(3, &len, &node);
	ck_assert_ptr_nonnull(m1);
	ck_assert_int_eq(*m1, 10);
	ck_assert_int_eq(node, 1);
	m2 = bip_tngetmsg(3, &len, &node);
	ck_assert_int_eq(*m2, 11);
	ck_assert_int_eq(node, 2);
	/* Other receives on the tag are refused while messages are held. */
	ck_assert_int_eq(bip_tirecv(3, &buf, 1), -1);
	bip_tfreemsg(3);
	ck_assert_int_eq(*m2, 11);
	bip_tfreemsg(3);
	ck_assert_int_ge(bip_tirecv(3, &buf, 1), 0);
}
END_TEST

START_TEST(test_misuse_is_reported)
{
	struct bip_counters before, after;
	int v = 0;

	bip_get_counters(&before);
	ck_assert_int_eq(bip_tisend(0, 0, &v, 1), -1); /* to self */
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "bip_tisend"));
	ck_assert_int_eq(bip_tisend(3, 0, &v, 1), -1);
	ck_assert_int_eq(bip_tisend(1, NTAGS, &v, 1), -1);
	ck_assert_int_eq(bip_tisend(1, 0, &v, -1), -1);
	ck_assert_int_eq(bip_tisend(1, 0, NULL, 1), -1);
	ck_assert_int_eq(bip_stest(5), -1);
	ck_assert_int_eq(bip_rwait(-1), -1);
	bip_tfreemsg(0);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "bip_tfreemsg"));
	ck_assert_int_eq(bip_taginit(1, 1, 1), -1); /* after init */
	bip_get_counters(&after);
	ck_assert(after.errors == before.errors + 9);
	ck_assert_int_eq(mock.nshort, 0);
}
END_TEST


/* --- the calls for layers built on BIP (layer.c) --- */

static struct {
	int nshort, nlong, nsent, nrecvd, refuse;
	int src, tag;
	size_t len;
	unsigned char data[BIP_SHORT_MAX];
	uint64_t handle, cookie;
	int status;
} lay;

static int lay_short(int src, int tag, const void *data, size_t len)
{
	if (lay.refuse)
		return -EAGAIN;
	lay.nshort++;
	lay.src = src;
	lay.tag = tag;
	lay.len = len;
	memcpy(lay.data, data, len);
	return 0;
}

static int lay_long(int src, int tag, size_t len, uint64_t handle)
{
	lay.nlong++;
	lay.src = src;
	lay.tag = tag;
	lay.len = len;
	lay.handle = handle;
	return 0;
}

static void lay_send_done(uint64_t cookie, int status)
{
	lay.nsent++;
	lay.cookie = cookie;
	lay.status = status;
}

static void lay_recv_done(uint64_t cookie, int status)
{
	lay.nrecvd++;
	lay.cookie = cookie;
	lay.status = status;
}

static const struct bip_layer_ops lay_ops = {
	.short_arrived = lay_short,
	.long_arrived = lay_long,
	.send_done = lay_send_done,
	.recv_done = lay_recv_done,
};

static void layer_setup(void)
{
	setup();
	memset(&lay, 0, sizeof(lay));
	ck_assert_int_eq(bip_layer_register(NTAGS + 1, &lay_ops), 0);
}

static void layer_teardown(void)
{
	memset(bip_state.layer, 0, sizeof(bip_state.layer));
	teardown();
}

START_TEST(test_layer_register_checks)
{
	ck_assert_int_eq(bip_layer_register(NTAGS - 1, &lay_ops), -1);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "not a reserved tag"));
	ck_assert_int_eq(bip_layer_register(NTAGS + BIP_RESERVED_TAGS, &lay_ops), -1);
	ck_assert_int_eq(bip_layer_register(NTAGS + 1, &lay_ops), -1);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "already registered"));
	/* The byte-length calls cannot take a layer's tag. */
	ck_assert_int_eq(bip_tirecv_bytes(NTAGS + 1, lay.data, 4), -1);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "belongs to a layer"));
	/* Given back, then taken again. */
	ck_assert_int_eq(bip_layer_register(NTAGS + 1, NULL), 0);
	ck_assert_int_eq(bip_layer_register(NTAGS + 1, &lay_ops), 0);
	ck_assert_int_eq(bip_layer_send(1, NTAGS + 2, "h", 1, NULL, 0, 1), -1);
	ck_assert_ptr_nonnull(strstr(bip_error_string(), "no layer is registered on tag"));
	ck_assert_int_eq(bip_layer_send(3, NTAGS + 1, "h", 1, NULL, 0, 1), -1);
	ck_assert_int_eq(bip_layer_send(1, NTAGS + 1, "h", 1, NULL, 0, BIP_LAYER_COOKIE_MAX + 1),
			 -1);
}
END_TEST

/* What arrived before the layer registered reaches it first, in order. */
START_TEST(test_layer_gets_what_was_queued)
{
	int a = 1, b = 2;

	ck_assert_int_eq(bip_layer_register(NTAGS + 1, NULL), 0);
	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 1, &a, 4), 0);
	ck_assert_int_eq(bip_core_long_arrived(1, NTAGS + 1, 6000, 0x99ull), 0);
	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 1, &b, 4), 0);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[NTAGS + 1].q), 3);
	ck_assert_int_eq(lay.nshort, 0);
	ck_assert_int_eq(bip_layer_register(NTAGS + 1, &lay_ops), 0);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[NTAGS + 1].q), 0);
	ck_assert_int_eq(lay.nshort, 2);
	ck_assert_int_eq(lay.nlong, 1);
	ck_assert(lay.handle == 0x99ull);
	ck_assert_int_eq(lay.data[0], 2); /* b came last */
}
END_TEST

/* Arrivals on a registered tag go to the layer, not to the tag's queue. */
START_TEST(test_layer_arrivals_go_to_the_layer)
{
	int v = 77;

	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 1, &v, 4), 0);
	ck_assert_int_eq(lay.nshort, 1);
	ck_assert_int_eq(lay.src, 2);
	ck_assert_int_eq(lay.tag, NTAGS + 1);
	ck_assert_uint_eq(lay.len, 4);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[NTAGS + 1].q), 0);
	ck_assert_int_eq(bip_core_long_arrived(1, NTAGS + 1, 5000, 0x1234ull), 0);
	ck_assert_int_eq(lay.nlong, 1);
	ck_assert(lay.handle == 0x1234ull);
	ck_assert_uint_eq(lay.len, 5000);
	/* The layer's refusal: the core keeps the arrival and offers it again
	 * at progress, with node 2's later ones for that tag behind it. */
	lay.refuse = 1;
	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 1, &v, 4), 0);
	ck_assert_int_eq(lay.nshort, 1);
	lay.refuse = 0;
	v = 78;
	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 1, &v, 4), 0);
	ck_assert_int_eq(lay.nshort, 1);
	/* Another reserved tag still queues as before. */
	ck_assert_int_eq(bip_core_short_arrived(2, NTAGS + 2, &v, 4), 0);
	ck_assert_uint_eq(bip_tagq_unread(&bip_state.tags[NTAGS + 2].q), 1);
	bip_progress();
	ck_assert_int_eq(lay.nshort, 3);
	ck_assert_uint_eq(bip_state.kept_peers, 0);
}
END_TEST

/* A header and data travel as one short message, in that order. */
START_TEST(test_layer_short_send_gathers)
{
	char hdr[4] = { 'h', 'd', 'r', '!' }, data[3] = { 'a', 'b', 'c' };

	ck_assert_int_eq(bip_layer_send(2, NTAGS + 1, hdr, 4, data, 3, 9), 1);
	ck_assert_int_eq(mock.nshort, 1);
	ck_assert_uint_eq(mock.last_tag, NTAGS + 1);
	ck_assert_uint_eq(mock.last_len, 7);
	ck_assert_mem_eq(mock.last_data, "hdr!abc", 7);
	ck_assert_int_eq(lay.nsent, 0);
}
END_TEST

/* Refused by the NIC: queued, and the layer hears when it has left. */
START_TEST(test_layer_queued_send_reports)
{
	char hdr[2] = { 'x', 'y' };

	mock.refuse = 1;
	ck_assert_int_eq(bip_layer_send(1, NTAGS + 1, hdr, 2, NULL, 0, 1234), 0);
	ck_assert_int_eq(bip_layer_poll(), 0);
	ck_assert_int_eq(lay.nsent, 0);
	mock.refuse = 0;
	ck_assert_int_ge(bip_layer_poll(), 0);
	ck_assert_int_eq(lay.nsent, 1);
	ck_assert(lay.cookie == 1234);
	ck_assert_int_eq(lay.status, 0);
	ck_assert_mem_eq(mock.last_data, "xy", 2);
}
END_TEST

/* Too big for one short message: the header, then the data as a long
 * message, even when the data alone would fit a short one. */
START_TEST(test_layer_long_send)
{
	static char big[BIP_SHORT_MAX];
	char hdr[16] = "envelope";

	ck_assert_int_eq(bip_layer_send(1, NTAGS + 1, hdr, 16, big, sizeof(big), 55), 0);
	ck_assert_int_eq(mock.nshort, 1);
	ck_assert_int_eq(mock.nlong, 1);
	ck_assert_uint_eq(mock.last_len, sizeof(big));
	ck_assert_int_eq(lay.nsent, 0);
	bip_core_send_done(mock.last_cookie, 0);
	ck_assert_int_eq(lay.nsent, 1);
	ck_assert(lay.cookie == 55);
}
END_TEST

static int mock_short2(struct bip_nic *nic, int dst, uint32_t tag, const void *hdr, size_t hlen,
		       const void *buf, size_t len)
{
	mock.nshort++;
	mock.last_dst = dst;
	mock.last_tag = tag;
	mock.last_len = hlen + len;
	return 0;
}

/* A NIC that gathers, with larger short messages: layers get them whole. */
START_TEST(test_layer_short_max_follows_the_nic)
{
	static const struct bip_nic_ops gather_ops = {
		.name = "mock-gather",
		.post_short = mock_short,
		.post_short2 = mock_short2,
		.post_long = mock_long,
		.post_long_recv = mock_long_recv,
		.poll = mock_poll,
		.alive = mock_alive,
	};
	static char data[500];
	char hdr[16] = "h";

	ck_assert_uint_eq(bip_layer_short_max(1), BIP_SHORT_MAX);
	mock.nic.ops = &gather_ops;
	mock.nic.max_short = 512;
	ck_assert_uint_eq(bip_layer_short_max(1), 512);
	ck_assert_int_eq(bip_layer_send(1, NTAGS + 1, hdr, 16, data, 400, 1), 1);
	ck_assert_int_eq(mock.nshort, 1);
	ck_assert_int_eq(mock.nlong, 0);
	ck_assert_uint_eq(mock.last_len, 416);
	/* Beyond it: the header, then the data as a long message. */
	ck_assert_int_eq(bip_layer_send(1, NTAGS + 1, hdr, 16, data, 497, 2), 0);
	ck_assert_int_eq(mock.nshort, 2);
	ck_assert_int_eq(mock.nlong, 1);
	/* The manual's calls keep BIP's short size. */
	ck_assert_int_gt(bip_tisend(1, 0, (int *)data, 100), 0);
	ck_assert_int_eq(mock.nlong, 2);
	bip_core_send_done(mock.last_cookie, 0);
	mock.nic.ops = &mock_ops;
}
END_TEST

/* A long message is received by its handle; completion finds the layer. */
START_TEST(test_layer_recv_long_by_handle)
{
	static char buf[5000];

	ck_assert_int_eq(bip_core_long_arrived(2, NTAGS + 1, 5000, 0x77ull), 0);
	ck_assert_int_eq(bip_layer_recv_long(2, 0x77ull, buf, 5000, 4242), 0);
	ck_assert_int_eq(mock.nlrecv, 1);
	ck_assert(mock.last_handle == 0x77ull);
	ck_assert_ptr_eq(mock.last_buf, buf);
	ck_assert_int_eq(lay.nrecvd, 0);
	bip_core_recv_done(mock.last_cookie, 0);
	ck_assert_int_eq(lay.nrecvd, 1);
	ck_assert(lay.cookie == 4242);
	ck_assert_int_eq(bip_layer_recv_long(5, 0x77ull, buf, 5000, 1), -1);
}
END_TEST

static Suite *proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("proto");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_short_send_completes_at_once);
	tcase_add_test(tc, test_refused_sends_wait_in_order);
	tcase_add_test(tc, test_long_send_waits_for_the_receiver);
	tcase_add_test(tc, test_short_arrival_is_queued_then_received);
	tcase_add_test(tc, test_posted_receive_takes_arrival_directly);
	tcase_add_test(tc, test_too_long_message_stays_queued);
	tcase_add_test(tc, test_full_queue_keeps_arrival);
	tcase_add_test(tc, test_held_tag_waits_others_pass);
	tcase_add_test(tc, test_bad_flow_message);
	tcase_add_test(tc, test_kept_bytes_are_bounded);
	tcase_add_test(tc, test_long_arrival_needs_a_receive);
	tcase_add_test(tc, test_getmsg_holds_until_freed);
	tcase_add_test(tc, test_misuse_is_reported);
	suite_add_tcase(s, tc);

	tc = tcase_create("layer");
	tcase_add_checked_fixture(tc, layer_setup, layer_teardown);
	tcase_add_test(tc, test_layer_register_checks);
	tcase_add_test(tc, test_layer_arrivals_go_to_the_layer);
	tcase_add_test(tc, test_layer_gets_what_was_queued);
	tcase_add_test(tc, test_layer_short_send_gathers);
	tcase_add_test(tc, test_layer_queued_send_reports);
	tcase_add_test(tc, test_layer_long_send);
	tcase_add_test(tc, test_layer_short_max_follows_the_nic);
	tcase_add_test(tc, test_layer_recv_long_by_handle);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
