/* SPDX-License-Identifier: MIT */
/*
 * relcheck - every word and the order of many messages, for the tests of
 * the reliability layer.
 *
 *   relcheck [SHORTS [LONGS [MAXBYTES]]]
 *
 * Every node sends to every other node its share of SHORTS short messages
 * (16 bytes to the short limit) and LONGS long ones (up to MAXBYTES,
 * default 4 MiB), interleaved, on tag 2 * sender (short) and 2 * sender + 1
 * (long), and receives what the others send it.  Each message carries its
 * sender, its number in the stream of its (sender, receiver, tag) and a
 * pattern of that number: the receiver checks every word and that the
 * numbers come in order, and ends with status 3 at the first wrong one
 * ("WRONG", then what).  Each node then prints what it received and the
 * reliability layer's counters on one line:
 *
 *   node 1: 33333 short, 333 long from 2 nodes: every word and the order right;
 *   retransmits 12 timeouts 10 duplicates 3 corrupt 4 nacks 4/4 rebinds 0 ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"

#define INFLIGHT 32 /* sends in flight per node */

static long shorts_total = 100000, longs_total = 1000;
static long max_bytes = 4 << 20;
static int me, n;

static uint32_t word_of(int src, int dst, long idx, long k)
{
	uint64_t x = (uint64_t)src * 0x9e3779b97f4a7c15ull ^ (uint64_t)dst << 40 ^
		     (uint64_t)idx * 0xbf58476d1ce4e5b9ull ^ (uint64_t)k * 0x94d049bb133111ebull;

	x ^= x >> 31;
	return (uint32_t)x;
}

/* Words of long message idx: from just above the short limit to max_bytes,
 * mostly small, some of every size up to the largest. */
static int long_words(long idx)
{
	long lo = BIPSMALLSIZE + 1, hi = max_bytes / 4, span;
	int shift = (int)(idx % 12);

	span = hi >> (11 - shift);
	if (span <= lo)
		span = lo + 1;
	return (int)(lo + (long)((uint64_t)idx * 2654435761u % (uint64_t)(span - lo + 1)));
}

static int short_words(long idx)
{
	return 4 + (int)(idx % (BIPSMALLSIZE - 3));
}

static void fill(int *w, int words, int src, int dst, long idx)
{
	long k;

	w[0] = src;
	w[1] = (int)idx;
	for (k = 2; k < words; k++)
		w[k] = (int)word_of(src, dst, idx, k);
}

static void wrong(const char *what, int src, long idx, long k, long got, long want)
{
	fprintf(stderr, "node %d: WRONG %s: message %ld from node %d, word %ld: %ld, expected %ld\n",
		me, what, idx, src, k, got, want);
	exit(3);
}

static void check(const int *w, int words, int got, int src, long idx, int is_long)
{
	long k;

	if (got != words)
		wrong(is_long ? "length (long)" : "length (short)", src, idx, -1, got, words);
	if (w[0] != src)
		wrong("sender", src, idx, 0, w[0], src);
	if (w[1] != (int)idx)
		wrong("order", src, idx, 1, w[1], idx);
	for (k = 2; k < words; k++)
		if ((uint32_t)w[k] != word_of(src, me, idx, k))
			wrong("data", src, idx, k, w[k], (long)word_of(src, me, idx, k));
}

struct stream {
	long next, count;
	int id;   /* posted receive */
	int *buf;
	int words;
};

int main(int argc, char **argv)
{
	struct stream *in;  /* [2 * n]: from each node, short and long */
	long *sent_s, *sent_l, per_s, per_l, todo, done_s = 0, done_l = 0;
	int ids[INFLIGHT], nids = 0, *sbuf[INFLIGHT], i, t, peers;
	struct bip_counters c;

	if (argc > 1)
		shorts_total = atol(argv[1]);
	if (argc > 2)
		longs_total = atol(argv[2]);
	if (argc > 3)
		max_bytes = atol(argv[3]);
	if (shorts_total < 0 || longs_total < 0 || max_bytes < 4 * (BIPSMALLSIZE + 2)) {
		fprintf(stderr, "usage: relcheck [SHORTS [LONGS [MAXBYTES]]]\n");
		return 2;
	}
	bip_init();
	me = bip_mynode;
	n = bip_numnodes;
	if (n < 2) {
		fprintf(stderr, "relcheck: needs two nodes or more\n");
		return 2;
	}
	peers = n - 1;
	per_s = shorts_total / ((long)n * peers);
	per_l = longs_total / ((long)n * peers);
	in = calloc((size_t)(2 * n), sizeof(*in));
	sent_s = calloc((size_t)n, sizeof(long));
	sent_l = calloc((size_t)n, sizeof(long));
	for (i = 0; i < INFLIGHT; i++)
		sbuf[i] = malloc((size_t)max_bytes);
	for (i = 0; i < n; i++) {
		if (i == me)
			continue;
		for (t = 0; t < 2; t++) {
			struct stream *s = &in[2 * i + t];

			s->count = t ? per_l : per_s;
			s->buf = malloc(t ? (size_t)max_bytes : BIPSMALLSIZE * 4);
			s->id = -1;
		}
	}
	todo = (per_s + per_l) * peers;
	for (;;) {
		int busy = 0;

		/* Receive: one receive posted per (sender, kind). */
		for (i = 0; i < 2 * n; i++) {
			struct stream *s = &in[i];
			int src = i / 2, is_long = i % 2, node, got;

			if (src == me || s->next == s->count)
				continue;
			busy = 1;
			if (s->id < 0) {
				s->words = is_long ? long_words(s->next) : short_words(s->next);
				s->id = bip_tirecv(i, s->buf, s->words);
				if (s->id < 0) {
					fprintf(stderr, "node %d: bip_tirecv: %s\n", me,
						bip_error_string());
					return 1;
				}
			}
			got = bip_rtestx(s->id, &node);
			if (got < 0)
				continue; /* not yet */
			check(s->buf, s->words, got, src, s->next, is_long);
			if (node != src)
				wrong("source", src, s->next, -1, node, src);
			s->next++;
			s->id = -1;
			if (is_long)
				done_l++;
			else
				done_s++;
		}
		/* Send: the next message to each peer in turn, short and long interleaved. */
		for (i = 0; i < nids; i++) {
			int r = bip_stest(ids[i]);

			if (r < 0) {
				fprintf(stderr, "node %d: send: %s\n", me, bip_error_string());
				return 1;
			}
			if (r) {
				int *b = sbuf[i];

				ids[i] = ids[--nids];
				sbuf[i] = sbuf[nids];
				sbuf[nids] = b;
				i--;
			}
		}
		for (i = 0; i < n && todo; i++) {
			int dst = (me + 1 + i) % n, words, is_long, id;
			long idx;

			if (dst == me || nids == INFLIGHT)
				continue;
			is_long = sent_l[dst] < per_l &&
				  (sent_s[dst] == per_s || sent_l[dst] * per_s <= sent_s[dst] * per_l);
			if (!is_long && sent_s[dst] == per_s)
				continue;
			idx = is_long ? sent_l[dst] : sent_s[dst];
			words = is_long ? long_words(idx) : short_words(idx);
			fill(sbuf[nids], words, me, dst, idx);
			id = bip_tisend(dst, 2 * me + is_long, sbuf[nids], words);
			if (id < 0) {
				fprintf(stderr, "node %d: bip_tisend: %s\n", me, bip_error_string());
				return 1;
			}
			if (id > 0)
				ids[nids++] = id;
			if (is_long)
				sent_l[dst]++;
			else
				sent_s[dst]++;
			todo--;
			busy = 1;
		}
		if (!busy && !nids && !todo)
			break;
	}
	bip_get_counters(&c);
	printf("node %d: %ld short, %ld long from %d nodes: every word and the order right; "
	       "retransmits %llu fast %llu timeouts %llu duplicates %llu early %llu corrupt %llu "
	       "nacks %llu/%llu rebinds %llu failbacks %llu",
	       me, done_s, done_l, peers, (unsigned long long)c.retransmits,
	       (unsigned long long)c.fast_retransmits, (unsigned long long)c.timeouts,
	       (unsigned long long)c.duplicates, (unsigned long long)c.early,
	       (unsigned long long)c.corrupt, (unsigned long long)c.nacks_sent,
	       (unsigned long long)c.nacks_received, (unsigned long long)c.rebinds,
	       (unsigned long long)c.failbacks);
	for (i = 0; i < BIP_COUNTER_PATHS; i++)
		if (c.path[i].sent)
			printf(" path %d: sent %llu retired %llu restored %llu", i,
			       (unsigned long long)c.path[i].sent,
			       (unsigned long long)c.path[i].retired,
			       (unsigned long long)c.path[i].restored);
	printf("\n");
	fflush(stdout);
	bip_finalize();
	for (i = 0; i < INFLIGHT; i++)
		free(sbuf[i]);
	for (i = 0; i < 2 * n; i++)
		free(in[i].buf);
	free(in);
	free(sent_s);
	free(sent_l);
	return 0;
}
