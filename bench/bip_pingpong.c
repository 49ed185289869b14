/* SPDX-License-Identifier: MIT */
/*
 * bip_pingpong.c - latency and bandwidth between BIP nodes 0 and 1.
 *
 *   bipload -sz 2 ./bip_pingpong [-s MIN] [-S MAX] [-i ITERS] [-w W] [-b B] [--csv]
 *
 * Latency: bip_tsend/bip_trecv ping-pong on one tag, half the round trip.
 * Bandwidth: node 0 sends a window of W messages with bip_tisend, all in
 * flight at once (the library allows many sends in progress, beyond the
 * manual of 1997), then waits for them; node 1 has W receives posted with
 * bip_tirecv (one receive per tag at a time in BIP, so W tags, each with its
 * own buffer), then node 1 sends a one-word acknowledgement.  Node 1 posts
 * the receives of the next window before acknowledging, so long messages
 * always find their receive posted.
 *
 * For every size one message is checked against a pattern on node 1 (and
 * its echo on node 0); a wrong word aborts the run.  Nodes beyond 1 only
 * initialise and exit.
 *
 *   bipload -sz N ./bip_pingpong --chain [OPTIONS]
 *
 * --chain: the same between node 0 and node N-1, with nodes 1 .. N-2 in a
 * line between them, each receiving every message whole and sending it on
 * (bip_trecv, then bip_tsend) in both directions: the hops of a path
 * through relays, forwarded by the program instead (bench/netns_clusters.sh
 * sets it beside the relays' path).  Node N-1 checks what it receives.
 */
#include <bip.h>

#include "pingpong.h"

#define TAG_PING 0
#define TAG_WIN 1 /* TAG_WIN .. TAG_WIN + W - 1, then the acknowledgement */

static void fail(const char *call)
{
	fprintf(stderr, "bip_pingpong: node %d: %s failed: %s\n", bip_mynode, call,
		bip_error_string());
	abort();
}

static void die_data(const char *what, size_t bytes, long at, uint32_t got)
{
	fprintf(stderr, "bip_pingpong: node %d: %s of %zu bytes: word %ld is 0x%08x, expected 0x%08x\n",
		bip_mynode, what, bytes, at, got, pp_word(bytes, at));
	abort();
}

static void check(const uint32_t *buf, size_t bytes, const char *what)
{
	long at = pp_check(buf, bytes);

	if (at >= 0)
		die_data(what, bytes, at, buf[at]);
}

static void check_len(int got, int words, const char *what)
{
	if (got < 0)
		fail(what);
	if (got != words) {
		fprintf(stderr, "bip_pingpong: node %d: %s: %d words received, expected %d\n",
			bip_mynode, what, got, words);
		abort();
	}
}

/* Node 0's peer and the last node's: node 1 and node 0 without --chain. */
static int peer;
/* --chain: the nodes before and after this one; chain_mid, it forwards. */
static int chain_prev, chain_next, chain_mid;

static inline void send_to(int dst, int tag, uint32_t *buf, int words)
{
	if (bip_tsend(dst, tag, (int *)buf, words) < 0)
		fail("bip_tsend");
}

static inline void send(int tag, uint32_t *buf, int words)
{
	send_to(peer, tag, buf, words);
}

static inline void recv(int tag, uint32_t *buf, int words)
{
	int got = bip_trecv(tag, (int *)buf, words);

	if (got != words)
		check_len(got, words, "bip_trecv");
}

static double latency(const struct pp_opts *o, size_t bytes, uint32_t *sbuf, uint32_t *rbuf,
		      double *samples)
{
	long n = pp_lat_iters(o, bytes);
	int b, words = (int)(bytes / 4);
	long i;

	if (chain_mid) {
		/* The checked exchange, the warm-up and the batches: each a
		 * message forth, then its echo back. */
		for (i = 0; i < 1 + (o->batches + 1) * n; i++) {
			recv(TAG_PING, rbuf, words);
			send_to(chain_next, TAG_PING, rbuf, words);
			recv(TAG_PING, rbuf, words);
			send_to(chain_prev, TAG_PING, rbuf, words);
		}
		return 0;
	}

	/* One checked exchange: node 1 checks the data, node 0 the echo. */
	if (bip_mynode == 0) {
		send(TAG_PING, sbuf, words);
		recv(TAG_PING, rbuf, words);
		check(rbuf, bytes, "echo");
	} else {
		memset(rbuf, 0, bytes);
		recv(TAG_PING, rbuf, words);
		check(rbuf, bytes, "message");
		send(TAG_PING, rbuf, words);
	}

	/* Batch -1 is the warm-up. */
	for (b = -1; b < o->batches; b++) {
		double t0 = pp_now();

		if (bip_mynode == 0) {
			for (i = 0; i < n; i++) {
				send(TAG_PING, sbuf, words);
				recv(TAG_PING, rbuf, words);
			}
		} else {
			for (i = 0; i < n; i++) {
				recv(TAG_PING, rbuf, words);
				send(TAG_PING, rbuf, words);
			}
		}
		if (b >= 0)
			samples[b] = (pp_now() - t0) / (2.0 * n) * 1e6;
	}
	return pp_median(samples, o->batches);
}

static void post_window(const struct pp_opts *o, uint32_t **wbuf, int words, int *ids)
{
	int k;

	for (k = 0; k < o->window; k++) {
		ids[k] = bip_tirecv(TAG_WIN + k, (int *)wbuf[k], words);
		if (ids[k] < 0)
			fail("bip_tirecv");
	}
}

static double bandwidth(const struct pp_opts *o, size_t bytes, uint32_t *sbuf,
			uint32_t **wbuf, double *samples)
{
	long reps = pp_bw_reps(o, bytes);
	long total = reps * (o->batches + 1), w;
	int ack_tag = TAG_WIN + o->window;
	int words = (int)(bytes / 4);
	int ids[PP_MAX_WINDOW];
	uint32_t ack = 0;
	int b, k;

	if (chain_mid) {
		/* Each window's messages on, one at a time; each acknowledgement
		 * back. */
		recv(ack_tag, &ack, 1);
		send_to(chain_prev, ack_tag, &ack, 1);
		for (w = 0; w < total; w++) {
			for (k = 0; k < o->window; k++) {
				recv(TAG_WIN + k, wbuf[0], words);
				send_to(chain_next, TAG_WIN + k, wbuf[0], words);
			}
			recv(ack_tag, &ack, 1);
			send_to(chain_prev, ack_tag, &ack, 1);
		}
		return 0;
	}
	if (bip_mynode != 0) {
		for (k = 0; k < o->window; k++)
			memset(wbuf[k], 0, bytes);
		post_window(o, wbuf, words, ids);
		send(ack_tag, &ack, 1);
		for (w = 0; w < total; w++) {
			for (k = 0; k < o->window; k++) {
				int got = bip_rwait(ids[k]);

				if (got != words)
					check_len(got, words, "bip_rwait");
			}
			if (w == 0) {
				check(wbuf[0], bytes, "window message");
				check(wbuf[o->window - 1], bytes, "window message");
			}
			if (w + 1 < total)
				post_window(o, wbuf, words, ids);
			send(ack_tag, &ack, 1);
		}
		return 0;
	}

	recv(ack_tag, &ack, 1);
	for (b = -1; b < o->batches; b++) {
		double t0 = pp_now();
		long r;

		for (r = 0; r < reps; r++) {
			for (k = 0; k < o->window; k++) {
				ids[k] = bip_tisend(peer, TAG_WIN + k, (int *)sbuf, words);
				if (ids[k] < 0)
					fail("bip_tisend");
			}
			for (k = 0; k < o->window; k++)
				bip_swait(ids[k]);
			recv(ack_tag, &ack, 1);
		}
		if (b >= 0)
			samples[b] = (double)bytes * o->window * reps / (pp_now() - t0) / 1e6;
	}
	return pp_median(samples, o->batches);
}

int main(int argc, char **argv)
{
	struct pp_opts o;
	int chain = 0, role, i, j;
	char name[64];

	/* --chain is this program's own; the rest are pingpong.h's. */
	for (i = j = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--chain"))
			chain = 1;
		else
			argv[j++] = argv[i];
	}
	argc = j;
	argv[argc] = NULL;
	if (pp_parse(argc, argv, &o))
		return 0;
	if (o.window + 1 >= NTAGS) {
		fprintf(stderr, "bip_pingpong: WINDOW must be below %d\n", NTAGS - 1);
		return 2;
	}
	bip_init();
	if (bip_numnodes < 2) {
		fprintf(stderr, "bip_pingpong: needs 2 nodes (bipload -sz 2)\n");
		return 2;
	}
	if (chain) {
		/* Node 0 and the last are the ends; the others forward. */
		peer = bip_mynode == 0 ? 1 : bip_numnodes - 2;
		chain_prev = bip_mynode - 1;
		chain_next = bip_mynode + 1;
		chain_mid = bip_mynode > 0 && bip_mynode < bip_numnodes - 1;
		role = bip_mynode == 0 ? 0 : chain_mid ? 2 : 1;
	} else if (bip_mynode > 1) {
		/* Nodes beyond 1 take no part. */
		bip_finalize();
		return 0;
	} else {
		peer = !bip_mynode;
		role = bip_mynode;
	}

	snprintf(name, sizeof(name), chain ? "BIP through %d forwarding nodes" : "BIP",
		 bip_numnodes - 2);
	pp_run(argv[0], &o, role, &(struct pp_bench){ name, latency, bandwidth });
	bip_finalize();
	return 0;
}
