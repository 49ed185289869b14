/* SPDX-License-Identifier: MIT */
/*
 * Long messages around the eager limit of the network drivers, run through
 * bipload over every driver: `bipload -sz N eager SUBTEST`.
 *
 *   sizes   node 0 and each other node exchange messages of the sizes at
 *           the edges (the short limit, the eager limit, 1 MiB), with the
 *           receive posted before the message arrives and after it
 *   pool    node 0 sends many messages to each other node before any is
 *           received, more than the receiver's bounce buffers hold, on
 *           two tags; the receiver then takes them all, in order
 *   small   a receive too small for a message fails, and the message waits
 *           whole for a larger one
 *   early   (ofi with eager messages on) sends up to the number of bounce
 *           buffers complete before the receiver posts any receive, twice
 *           (so the credits came back); the ones past them, sent by
 *           rendezvous, arrive too
 *   rxm     (ofi) ofi_rxm's buffer size, FI_OFI_RXM_BUFFER_SIZE, is what
 *           the environment's RXM_WANT says after bip_init: the user's
 *           value kept, or the driver's (the default eager message, 16384
 *           bytes, with the headers: 16640) when unset; then sizes
 *
 * Every word of every message is checked.  EAGER is the sizes' limit:
 * BIP_OFI_EAGER if set, else 16384; EAGER_BUFS, BIP_OFI_EAGER_BUFS or 8.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "../conformance/check.h"

#define TAG_DATA 1
#define TAG_DATA2 2
#define TAG_SYNC 3
#define MIB (1u << 20)

static size_t eager_limit(void)
{
	const char *s = getenv("BIP_OFI_EAGER");

	return s && *s ? strtoul(s, NULL, 10) : 16384;
}

static int eager_bufs(void)
{
	const char *s = getenv("BIP_OFI_EAGER_BUFS");

	return s && *s ? atoi(s) : 8;
}

static uint32_t word(int src, int seq, size_t i)
{
	return (uint32_t)src * 2654435761u ^ (uint32_t)seq * 40503u ^ (uint32_t)i * 2246822519u;
}

static void fill(uint8_t *buf, size_t len, int src, int seq)
{
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t w = word(src, seq, i / 4);

		memcpy(buf + i, &w, 4);
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)(word(src, seq, i / 4) >> (8 * (i % 4)));
}

static void check(const uint8_t *buf, size_t len, int src, int seq)
{
	uint8_t *want = malloc(len ? len : 1);
	size_t i;

	CHECK(want != NULL, "out of memory");
	fill(want, len, src, seq);
	for (i = 0; i < len; i++)
		if (buf[i] != want[i])
			break;
	CHECK(i == len, "byte %zu of the %zu-byte message %d from node %d is %#x, not %#x", i,
	      len, seq, src, buf[i], want[i]);
	free(want);
}

static void send_sync(int dst, int v)
{
	CHECK(bip_tsend(dst, TAG_SYNC, &v, 1) == 0, "sync to node %d", dst);
}

static int recv_sync(int from)
{
	int v = -1, node = -1;

	CHECK(bip_trecvx(TAG_SYNC, &v, 1, &node) == 1 && node == from,
	      "sync from node %d came from %d", from, node);
	return v;
}

/* Receive one message of len bytes from src on tag into buf, and check it. */
static void recv_check(int tag, uint8_t *buf, size_t cap, size_t len, int src, int seq)
{
	int node = -1;
	long n;

	memset(buf, 0, len < cap ? len + 1 : cap);
	n = bip_rwait_bytes(bip_tirecv_bytes(tag, buf, cap), &node);
	CHECK(n == (long)len && node == src, "message %d: %ld bytes from node %d, expected %zu "
	      "from %d (%s)", seq, n, node, len, src, n < 0 ? bip_error_string() : "");
	check(buf, len, src, seq);
	if (len < cap)
		CHECK(buf[len] == 0, "message %d of %zu bytes wrote past its end", seq, len);
}

/*
 * One message of len bytes from node from to node to, the receive posted
 * before it arrives (before) or after (the sync, which follows the message,
 * has come).
 */
static void one_way(int from, int to, size_t len, int seq, int before, uint8_t *buf,
		    uint8_t *out, size_t cap)
{
	int id, node = -1;
	long got;

	if (bip_mynode == from) {
		fill(out, len, from, seq);
		if (before)
			CHECK(recv_sync(to) == seq, "sync");
		id = bip_tisend_bytes(to, TAG_DATA, out, len);
		CHECK(id >= 0, "send of %zu bytes: %s", len, bip_error_string());
		if (!before)
			send_sync(to, seq);
		bip_swait(id);
	} else if (bip_mynode == to) {
		memset(buf, 0, len < cap ? len + 1 : cap);
		if (before) {
			id = bip_tirecv_bytes(TAG_DATA, buf, cap);
			send_sync(from, seq);
		} else {
			CHECK(recv_sync(from) == seq, "sync");
			id = bip_tirecv_bytes(TAG_DATA, buf, cap);
		}
		CHECK(id >= 0, "receive: %s", bip_error_string());
		got = bip_rwait_bytes(id, &node);
		CHECK(got == (long)len && node == from, "message %d: %ld bytes from node %d, "
		      "expected %zu from %d (%s)", seq, got, node, len, from,
		      got < 0 ? bip_error_string() : "");
		check(buf, len, from, seq);
		if (len < cap)
			CHECK(buf[len] == 0, "message %d of %zu bytes wrote past its end", seq, len);
	}
}

static void t_sizes(void)
{
	size_t e = eager_limit();
	size_t sizes[] = { BIPSMALLSIZE * 4, BIPSMALLSIZE * 4 + 4, 1000, 16384 - 4, 16384,
			   16384 + 4, e > 4 ? e - 4 : 0, e, e + 4, MIB };
	int n = (int)(sizeof(sizes) / sizeof(sizes[0]));
	size_t cap = MIB + 64;
	uint8_t *buf = malloc(cap), *out = malloc(cap);
	int peer, s, before, seq = 0;

	CHECK(buf && out, "out of memory");
	for (peer = 1; peer < bip_numnodes; peer++)
		for (s = 0; s < n; s++)
			for (before = 0; before < 2; before++) {
				size_t len = sizes[s] > MIB ? MIB : sizes[s];

				one_way(0, peer, len, seq++, before, buf, out, cap);
				one_way(peer, 0, len, seq++, before, buf, out, cap);
			}
	free(buf);
	free(out);
}

/*
 * Many messages in flight from node 0 to each other node before the
 * receiver takes any: round r of each sends count messages of sizes
 * cycling around the limits, alternating between two tags; then a sync.
 * The receiver takes tag TAG_DATA2's then TAG_DATA's, each in order.
 */
static void t_pool(void)
{
	size_t e = eager_limit();
	size_t sizes[] = { e > 8 ? e : 4096, 4096, 100, e > 8 ? e - 4 : 1000, e + 4, 20000 };
	int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
	int count = eager_bufs() * 3 + 7, r, peer, i;
	size_t cap = 65536;
	uint8_t **out = calloc((size_t)count, sizeof(*out)), *buf = malloc(cap);
	int *ids = calloc((size_t)count, sizeof(*ids));

	CHECK(out && buf && ids, "out of memory");
	if (count > 25)
		count = 25; /* within a tag's default queue (32 entries), for two tags */
	for (i = 0; i < count; i++) {
		out[i] = malloc(cap);
		CHECK(out[i] != NULL, "out of memory");
	}
	for (r = 0; r < 3; r++)
		for (peer = 1; peer < bip_numnodes; peer++) {
			if (bip_mynode == 0) {
				for (i = 0; i < count; i++) {
					size_t len = sizes[i % nsizes];

					fill(out[i], len, 0, r * 1000 + i);
					ids[i] = bip_tisend_bytes(peer, i % 2 ? TAG_DATA2 : TAG_DATA,
								  out[i], len);
					CHECK(ids[i] >= 0, "send %d: %s", i, bip_error_string());
				}
				send_sync(peer, r);
				for (i = 0; i < count; i++)
					bip_swait(ids[i]);
				CHECK(recv_sync(peer) == r, "sync back");
			} else if (bip_mynode == peer) {
				CHECK(recv_sync(0) == r, "sync");
				for (i = 1; i < count; i += 2)
					recv_check(TAG_DATA2, buf, cap, sizes[i % nsizes], 0,
						   r * 1000 + i);
				for (i = 0; i < count; i += 2)
					recv_check(TAG_DATA, buf, cap, sizes[i % nsizes], 0,
						   r * 1000 + i);
				send_sync(0, r);
			}
		}
	for (i = 0; i < count; i++)
		free(out[i]);
	free(out);
	free(ids);
	free(buf);
}

/*
 * A receive too small fails, posted before the message arrives or after;
 * the message stays whole for the next receive.
 */
static void t_small(void)
{
	size_t e = eager_limit(), sizes[] = { e > 8 ? e : 4096, e + 4, 300 };
	size_t cap = 65536;
	uint8_t *buf = malloc(cap), *out = malloc(cap);
	int s, peer, before;

	CHECK(buf && out, "out of memory");
	for (peer = 1; peer < bip_numnodes; peer++)
		for (s = 0; s < 3; s++)
			for (before = 0; before < 2; before++) {
				size_t len = sizes[s];
				int seq = s * 2 + before, id, node = -1;
				long got;

				if (bip_mynode == 0) {
					fill(out, len, 0, seq);
					if (before)
						CHECK(recv_sync(peer) == seq, "sync");
					id = bip_tisend_bytes(peer, TAG_DATA, out, len);
					CHECK(id >= 0, "send: %s", bip_error_string());
					if (!before)
						send_sync(peer, seq);
					bip_swait(id);
					CHECK(recv_sync(peer) == seq, "sync back");
				} else if (bip_mynode == peer) {
					if (before) {
						id = bip_tirecv_bytes(TAG_DATA, buf, len - 4);
						send_sync(0, seq);
					} else {
						CHECK(recv_sync(0) == seq, "sync");
						id = bip_tirecv_bytes(TAG_DATA, buf, len - 4);
					}
					got = id < 0 ? -1 : bip_rwait_bytes(id, &node);
					CHECK(got < 0, "a %zu-byte message fit a %zu-byte receive",
					      len, len - 4);
					recv_check(TAG_DATA, buf, cap, len, 0, seq);
					send_sync(0, seq);
				}
			}
	free(buf);
	free(out);
}

/*
 * ofi with eager messages: the first bufs sends to each peer complete
 * with no receive posted (the receiver only polls for the sync); those
 * past them go by rendezvous and complete once received.  Twice, so that
 * the bounce buffer credits have come back in between.
 */
static void t_early(void)
{
	size_t e = eager_limit(), cap = e + 64;
	int bufs = eager_bufs(), extra = 3, count = bufs + extra, r, peer, i;
	uint8_t **out = calloc((size_t)count, sizeof(*out)), *buf = malloc(cap);
	int *ids = calloc((size_t)count, sizeof(*ids));

	CHECK(out && buf && ids && e > BIPSMALLSIZE * 4, "out of memory, or eager off");
	CHECK(count <= 30, "BIP_OFI_EAGER_BUFS %d: at most 27 here", bufs);
	for (i = 0; i < count; i++) {
		out[i] = malloc(cap);
		CHECK(out[i] != NULL, "out of memory");
	}
	for (r = 0; r < 2; r++)
		for (peer = 1; peer < bip_numnodes; peer++) {
			if (bip_mynode == 0) {
				for (i = 0; i < count; i++) {
					size_t len = i % 2 ? e : e - 4;

					fill(out[i], len, 0, r * 1000 + i);
					ids[i] = bip_tisend_bytes(peer, TAG_DATA, out[i], len);
					CHECK(ids[i] >= 0, "send %d: %s", i, bip_error_string());
				}
				for (i = 0; i < bufs; i++)
					bip_swait(ids[i]); /* no receive is posted yet */
				send_sync(peer, r);
				for (; i < count; i++)
					bip_swait(ids[i]);
				CHECK(recv_sync(peer) == r, "sync back");
			} else if (bip_mynode == peer) {
				/* Polls, and posts nothing on TAG_DATA, until the
				 * sync: the eager sends complete meanwhile. */
				CHECK(recv_sync(0) == r, "sync");
				for (i = 0; i < count; i++)
					recv_check(TAG_DATA, buf, cap, i % 2 ? e : e - 4, 0,
						   r * 1000 + i);
				send_sync(0, r);
			}
		}
	for (i = 0; i < count; i++)
		free(out[i]);
	free(out);
	free(ids);
	free(buf);
}

static void t_rxm(void)
{
	const char *want = getenv("RXM_WANT"), *got = getenv("FI_OFI_RXM_BUFFER_SIZE");

	CHECK(want && *want, "RXM_WANT is not set");
	CHECK(got && !strcmp(got, want), "FI_OFI_RXM_BUFFER_SIZE is %s, expected %s",
	      got ? got : "unset", want);
	t_sizes();
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{ "sizes", t_sizes }, { "pool", t_pool }, { "small", t_small }, { "early", t_early },
		{ "rxm", t_rxm },
	};
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: eager sizes|pool|small|early|rxm\n");
		return 2;
	}
	bip_init();
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[1], tests[i].name))
			break;
	CHECK(i < sizeof(tests) / sizeof(tests[0]), "no test %s", argv[1]);
	tests[i].fn();
	CHECK(bip_finalize() == 0, "bip_finalize: %s", bip_error_string());
	return 0;
}
