/* SPDX-License-Identifier: MIT */
/*
 * Conformance tests of the BIP API (manual sections 2 and 3), run through
 * bipload on every driver: `bipload -sz N conformance SUBTEST`.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"
#include "check.h"


static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int pattern(int src, int seq, int i)
{
	return src * 1000003 + seq * 7919 + i;
}

static void fill(int *buf, int len, int src, int seq)
{
	int i;

	for (i = 0; i < len; i++)
		buf[i] = pattern(src, seq, i);
}

static void check_data(const int *buf, int len, int src, int seq)
{
	int i;

	for (i = 0; i < len; i++)
		CHECK(buf[i] == pattern(src, seq, i), "word %d of %d from node %d (message %d) is %d",
		      i, len, src, seq, buf[i]);
}

/* Ping-pong of every size with every other node: short, at the limit, long, large. */
static void t_sizes(void)
{
	static const int sizes[] = { 0, 1, 2, BIPSMALLSIZE - 1, BIPSMALLSIZE, BIPSMALLSIZE + 1,
				     1000, 4097, 262144, 1048576 };
	int *buf = malloc(1048576 * 4);
	int peer, s, n, node;

	for (peer = 1; peer < bip_numnodes; peer++) {
		for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
			int len = sizes[s];

			if (bip_mynode == 0) {
				fill(buf, len, 0, s);
				CHECK(bip_tsend(peer, 1, buf, len) == 0, "send");
				memset(buf, 0, (size_t)len * 4);
				n = bip_trecvx(1, buf, 1048576, &node);
				CHECK(n == len && node == peer, "got %d words from %d", n, node);
				check_data(buf, len, peer, s);
			} else if (bip_mynode == peer) {
				memset(buf, 0, (size_t)len * 4);
				n = bip_trecvx(1, buf, 1048576, &node);
				CHECK(n == len && node == 0, "got %d words from %d", n, node);
				check_data(buf, len, 0, s);
				fill(buf, len, peer, s);
				CHECK(bip_tsend(0, 1, buf, len) == 0, "send");
			}
		}
	}
	free(buf);
}

/* The manual's quick start example, checked. */
static void t_token(void)
{
	int token;

	if (bip_mynode == 0) {
		token = 333;
		CHECK(bip_send(1, &token, 1) == 0, "send");
		CHECK(bip_recv(&token, 1) == 1, "recv");
		CHECK(token == 333 + bip_numnodes - 1, "token %d", token);
	} else {
		CHECK(bip_recv(&token, 1) == 1, "recv");
		CHECK(token == 333 + bip_mynode - 1, "token %d on %d", token, bip_mynode);
		token++;
		CHECK(bip_send((bip_mynode + 1) % bip_numnodes, &token, 1) == 0, "send");
	}
}

/* Every tag: sent in one order, received in another. */
static void t_tags(void)
{
	int tag, v;

	if (bip_mynode == 0) {
		for (tag = NTAGS - 1; tag >= 0; tag--) {
			v = tag * 3;
			CHECK(bip_tsend(1, tag, &v, 1) == 0, "send on tag %d", tag);
		}
	} else if (bip_mynode == 1) {
		for (tag = 0; tag < NTAGS; tag++) {
			CHECK(bip_trecv(tag, &v, 1) == 1, "tag %d", tag);
			CHECK(v == tag * 3, "tag %d got %d", tag, v);
		}
	}
}

/* Many to one: per-sender order on one shared tag and on per-sender tags. */
static void t_ordering(void)
{
	const int count = 300;
	int msg[3], i, n, node;

	if (bip_mynode != 0) {
		for (i = 0; i < count; i++) {
			msg[0] = bip_mynode;
			msg[1] = i;
			msg[2] = -i;
			CHECK(bip_tsend(0, 1, msg, 3) == 0, "send");
			CHECK(bip_tsend(0, 2 + bip_mynode % 5, msg, 2) == 0, "send");
		}
		return;
	}
	{
		int *next = calloc((size_t)bip_numnodes, sizeof(int));
		int *next_own = calloc((size_t)bip_numnodes, sizeof(int));
		int total = count * (bip_numnodes - 1), got;

		for (got = 0; got < 2 * total;) {
			if (bip_tprobe(1) >= 0) {
				n = bip_trecvx(1, msg, 3, &node);
				CHECK(n == 3 && node == msg[0] && msg[1] == next[node] &&
					      msg[2] == -msg[1],
				      "from %d: message %d, expected %d", node, msg[1], next[node]);
				next[node]++;
				got++;
			}
			for (i = 2; i < 7; i++) {
				while ((n = bip_tnrecvx(i, msg, 3, &node)) >= 0) {
					CHECK(n == 2 && node == msg[0] && 2 + node % 5 == i &&
						      msg[1] == next_own[node],
					      "tag %d from %d: message %d, expected %d", i, node,
					      msg[1], next_own[node]);
					next_own[node]++;
					got++;
				}
			}
		}
		for (i = 1; i < bip_numnodes; i++)
			CHECK(next[i] == count && next_own[i] == count, "node %d", i);
		free(next);
		free(next_own);
	}
}

/*
 * All to all with non-blocking calls and mixed sizes.  A receive takes any
 * sender on its tag, so each tag has one sender per receiver (BIP keeps
 * the order per sender and tag): the tags of one round's steps differ,
 * and three rounds in a row use different ones, up to 67 nodes (NTAGS 200).
 * Above, each sender has a tag of its own (1 + its node, up to 199 nodes),
 * and each size is sent once (7 rounds): 128 nodes exchange 16,256 pairs'
 * worth of every size.
 */
static void t_alltoall(void)
{
	static const int sizes[] = { 1, 10, 64, 65, 300, 5000, 70000 };
	const int maxw = 70000;
	int *sb = malloc(maxw * 4), *rb = malloc(maxw * 4);
	int me = bip_mynode, n = bip_numnodes, r, k;
	int wide = n > 67, rounds = wide ? 7 : 21;

	CHECK(n < NTAGS, "alltoall takes at most %d nodes", NTAGS - 1);
	for (r = 0; r < rounds; r++) {
		int len = sizes[r % 7];

		for (k = 1; k < n; k++) {
			int dst = (me + k) % n, src = (me - k + n) % n;
			int tag = 1 + ((r % 3) * (n - 1) + k - 1) % (NTAGS - 1);
			int stag = tag, rid, sid, node = -1, got;

			if (wide) {
				tag = 1 + src;
				stag = 1 + me;
			}

			fill(sb, len, me, r);
			rid = bip_tirecv(tag, rb, maxw);
			sid = bip_tisend(dst, stag, sb, len);
			CHECK(rid >= 0 && sid >= 0, "ids %d %d", rid, sid);
			got = bip_rwaitx(rid, &node);
			bip_swait(sid);
			CHECK(bip_stest(sid) == 1, "stest after swait");
			CHECK(got == len && node == src, "round %d: %d words from %d", r, got, node);
			check_data(rb, len, src, r);
		}
	}
	free(sb);
	free(rb);
}

/* A small queue: the sender waits, nothing is lost, order is kept. */
static void t_taginit(void)
{
	const int count = 1000;
	struct bip_counters c;
	int i, v;

	CHECK(bip_taginit(5, 2, 1) == 0, "taginit");
	CHECK(bip_taginit(5, 2, 1) == -1, "second taginit of a tag");
	CHECK(bip_taginit(NTAGS, 2, 1) == -1, "bad tag");
	CHECK(bip_taginit(-1, 2, 1) == -1, "negative tag");
	CHECK(bip_taginit(6, 0, 1) == -1, "nbufs 0");
	CHECK(bip_taginit(6, 1, -1) == -1, "negative size");
	CHECK(bip_taginit(7, 100, 10) == 0, "taginit");
	bip_init();
	CHECK(bip_taginit(8, 2, 1) == -1, "taginit after bip_init");
	if (bip_mynode == 0) {
		for (i = 0; i < 100; i++) {
			int m[10];

			fill(m, 10, 0, i);
			CHECK(bip_tsend(1, 7, m, 10) == 0, "send");
		}
		for (i = 0; i < count; i++)
			CHECK(bip_tsend(1, 5, &i, 1) == 0, "send %d", i);
		bip_get_counters(&c);
		CHECK(c.send_stalls > 0, "1000 sends into a queue of 2 never waited");
		CHECK(c.short_sent == 100 + (uint64_t)count, "short_sent %llu",
		      (unsigned long long)c.short_sent);
	} else if (bip_mynode == 1) {
		int m[10];

		sleep_ms(200);
		/* Tag 7 holds all 100 messages of 10 words without a receive. */
		for (i = 0; i < 100; i++) {
			CHECK(bip_trecv(7, m, 10) == 10, "tag 7 message %d", i);
			check_data(m, 10, 0, i);
		}
		for (i = 0; i < count; i++) {
			CHECK(bip_trecv(5, &v, 1) == 1, "recv");
			CHECK(v == i, "message %d is %d", i, v);
		}
	}
}

/* getmsg / freemsg: held in place, freed oldest first. */
static void t_getmsg(void)
{
	struct bip_counters c;
	uint64_t errors;
	int i, id, len, node, v[4], *m[3];

	if (bip_mynode == 0) {
		for (i = 0; i < 3; i++) {
			fill(v, 4, 0, i);
			CHECK(bip_tsend(1, 3, v, i + 1) == 0, "send");
		}
		CHECK(bip_recv(v, 1) == 1 && v[0] == 2, "request");
		fill(v, 4, 0, 3);
		CHECK(bip_tsend(1, 3, v, 4) == 0, "send");
		v[0] = 77;
		CHECK(bip_send(1, v, 1) == 0, "send");
		v[1] = 78;
		CHECK(bip_send(1, v + 1, 1) == 0, "send");
		CHECK(bip_recv(v, 1) == 1 && v[0] == 1, "ack");
		return;
	}
	if (bip_mynode != 1)
		return;
	for (i = 0; i < 2; i++) {
		len = node = -1;
		m[i] = bip_tgetmsg(3, &len, &node);
		CHECK(m[i] && len == i + 1 && node == 0, "getmsg %d: len %d node %d", i, len, node);
	}
	/* The third one may still be on its way: poll for it without blocking. */
	len = node = -1;
	while (!(m[2] = bip_tngetmsg(3, &len, &node)))
		;
	CHECK(len == 3 && node == 0, "ngetmsg: len %d node %d", len, node);
	CHECK(m[0] != m[1] && m[1] != m[2] && m[0] != m[2], "three distinct messages held");
	CHECK(bip_tngetmsg(3, &len, &node) == NULL, "nothing more");
	CHECK(bip_tirecv(3, v, 4) == -1, "receive refused while messages are held");
	CHECK(strstr(bip_error_string(), "bip_tirecv") != NULL, "%s", bip_error_string());
	CHECK(bip_tnrecv(3, v, 4) == -1, "nrecv refused while messages are held");
	CHECK(bip_trecv(3, v, 4) == -1, "trecv refused while messages are held");
	for (i = 0; i < 3; i++)
		check_data(m[i], i + 1, 0, i);
	bip_tfreemsg(3);
	/* The oldest was freed; the others are still held, intact. */
	check_data(m[1], 2, 0, 1);
	check_data(m[2], 3, 0, 2);
	CHECK(bip_tnrecv(3, v, 4) == -1, "nrecv refused while two are held");
	bip_tfreemsg(3);
	check_data(m[2], 3, 0, 2);
	bip_tfreemsg(3);
	/* Nothing held: the tag takes receives again. */
	bip_get_counters(&c);
	CHECK(bip_tnrecv(3, v, 4) == -1, "empty");
	errors = c.errors;
	bip_get_counters(&c);
	CHECK(c.errors == errors, "nrecv on an empty tag is no error: %s", bip_error_string());
	id = bip_tirecv(3, v, 4);
	CHECK(id >= 0, "receive accepted once everything is freed");
	CHECK(bip_rtest(id) == -1, "nothing sent on tag 3 yet");
	v[0] = 2;
	CHECK(bip_send(0, v, 1) == 0, "ask for one more");
	CHECK(bip_rwait(id) == 4, "message after the freed ones");
	check_data(v, 4, 0, 3);
	/* Untagged forms on tag 0. */
	m[0] = bip_getmsg(&len, &node);
	CHECK(m[0] && len == 1 && m[0][0] == 77 && node == 0, "getmsg");
	len = node = -1;
	while (!(m[1] = bip_ngetmsg(&len, &node)))
		;
	CHECK(len == 1 && m[1][0] == 78 && node == 0, "ngetmsg: len %d node %d", len, node);
	CHECK(m[0][0] == 77, "the first stays held");
	CHECK(bip_ngetmsg(&len, &node) == NULL, "ngetmsg empty");
	CHECK(bip_irecv(v, 1) == -1, "irecv refused while messages are held");
	bip_freemsg();
	CHECK(m[1][0] == 78, "the second is still held");
	bip_freemsg();
	v[0] = 1;
	CHECK(bip_send(0, v, 1) == 0, "ack");
}

/* probe / nrecv see short messages only; a long one waits for trecv. */
static void t_probe(void)
{
	static int big[5000];
	int v[2], n, node, len, id;

	if (bip_mynode == 0) {
		v[0] = 5;
		v[1] = 6;
		CHECK(bip_tsend(1, 4, v, 2) == 0, "send");
		fill(big, 5000, 0, 1);
		id = bip_tisend(1, 4, big, 5000);
		CHECK(id > 0, "long send");
		v[0] = 9;
		CHECK(bip_send(1, v, 1) == 0, "send");
		bip_swait(id);
		return;
	}
	if (bip_mynode != 1)
		return;
	CHECK(bip_tprobe(9) == -1, "empty tag");
	CHECK(bip_tnrecv(9, v, 2) == -1, "empty tag");
	while ((n = bip_tprobe(4)) < 0)
		;
	CHECK(n == 2, "probe %d", n);
	node = -1;
	CHECK(bip_tnrecvx(4, v, 2, &node) == 2 && v[1] == 6 && node == 0, "nrecvx");
	while (bip_probe() < 0)
		;
	/* The long message is at the head of tag 4 now. */
	CHECK(bip_tprobe(4) == -1, "probe sees no long message");
	CHECK(bip_tnrecv(4, big, 5000) == -1, "nrecv takes no long message");
	CHECK(bip_tngetmsg(4, &len, &node) == NULL, "ngetmsg takes no long message");
	CHECK(bip_tgetmsg(4, &len, &node) == NULL, "getmsg takes no long message");
	CHECK(strstr(bip_error_string(), "long message") != NULL, "%s", bip_error_string());
	memset(big, 0, sizeof(big));
	CHECK(bip_trecv(4, big, 5000) == 5000, "long receive");
	check_data(big, 5000, 0, 1);
	CHECK(bip_nrecvx(v, 1, &node) == 1 && v[0] == 9 && node == 0, "nrecvx");
	CHECK(bip_nrecv(v, 1) == -1, "nothing left");
}

/* A long receive posted late; shorts flow on another tag meanwhile. */
static void t_late(void)
{
	static int big[100000];
	int i, v, id;

	if (bip_mynode == 0) {
		fill(big, 100000, 0, 3);
		id = bip_tisend(1, 1, big, 100000);
		CHECK(id > 0, "long send id %d", id);
		for (i = 0; i < 10; i++) {
			CHECK(bip_tsend(1, 2, &i, 1) == 0, "short");
			CHECK(bip_trecv(2, &v, 1) == 1 && v == -i, "answer");
		}
		bip_swait(id);
		CHECK(bip_stest(id) == 1, "done");
	} else if (bip_mynode == 1) {
		for (i = 0; i < 10; i++) {
			CHECK(bip_trecv(2, &v, 1) == 1 && v == i, "short");
			v = -v;
			CHECK(bip_tsend(0, 2, &v, 1) == 0, "answer");
		}
		sleep_ms(300);
		CHECK(bip_trecv(1, big, 100000) == 100000, "late long receive");
		check_data(big, 100000, 0, 3);
	}
}

/* A long message at the head of a tag does not block another tag. */
static void t_longblock(void)
{
	static int big[20000];
	int v = 42, id1, id2;

	if (bip_mynode == 0) {
		fill(big, 20000, 0, 4);
		id1 = bip_tisend(1, 1, big, 20000);
		id2 = bip_tisend(1, 2, &v, 1);
		bip_swait(id2);
		bip_swait(id1);
	} else if (bip_mynode == 1) {
		CHECK(bip_trecv(2, &v, 1) == 1 && v == 42, "short behind a long message");
		CHECK(bip_trecv(1, big, 20000) == 20000, "long");
		check_data(big, 20000, 0, 4);
	}
}

/* The untagged calls are tag 0. */
static void t_untagged(void)
{
	int v[100], id, node;

	if (bip_mynode == 0) {
		fill(v, 100, 0, 5);
		id = bip_isend(1, v, 100);
		CHECK(id >= 0, "isend");
		bip_swait(id);
		CHECK(bip_send(1, v, 3) == 0, "send");
		CHECK(bip_tsend(1, 0, v, 2) == 0, "tsend on tag 0");
	} else if (bip_mynode == 1) {
		id = bip_irecv(v, 100);
		CHECK(id >= 0, "irecv");
		while (bip_rtestx(id, &node) < 0)
			;
		check_data(v, 100, 0, 5);
		CHECK(node == 0, "source");
		CHECK(bip_recvx(v, 3, &node) == 3 && node == 0, "recvx");
		while (bip_probe() != 2)
			;
		CHECK(bip_trecv(0, v, 2) == 2, "trecv on tag 0");
		check_data(v, 2, 0, 5);
	}
}

/* Counters count what happened; finalize once. */
static void t_counters(void)
{
	static int big[1000];
	struct bip_counters c;
	int v = 1;

	if (bip_mynode == 0) {
		CHECK(bip_send(1, &v, 1) == 0, "send");
		CHECK(bip_tsend(1, 1, big, 1000) == 0, "long");
		bip_get_counters(&c);
		CHECK(c.short_sent == 1 && c.long_sent == 1 && c.bytes_sent == 4004,
		      "sent %llu %llu %llu", (unsigned long long)c.short_sent,
		      (unsigned long long)c.long_sent, (unsigned long long)c.bytes_sent);
	} else if (bip_mynode == 1) {
		CHECK(bip_recv(&v, 1) == 1, "recv");
		CHECK(bip_trecv(1, big, 1000) == 1000, "long");
		bip_get_counters(&c);
		CHECK(c.short_received == 1 && c.long_received == 1 && c.bytes_received == 4004 &&
			      c.errors == 0,
		      "received %llu %llu %llu", (unsigned long long)c.short_received,
		      (unsigned long long)c.long_received, (unsigned long long)c.bytes_received);
	}
	CHECK(bip_finalize() == 0, "finalize");
	CHECK(bip_finalize() == -1, "second finalize");
	/* Once finalized, BIP does not start again (as MPI): a clear error. */
	bip_init();
	CHECK(strstr(bip_error_string(), "bip_init: BIP cannot start again after bip_finalize"),
	      "bip_init after bip_finalize: %s", bip_error_string());
	CHECK(bip_tsend(0, 1, &v, 1) == -1, "send after a refused bip_init");
}

/* Receives on different tags in different threads, sends from the main thread. */
static void *thread_recv(void *arg)
{
	int tag = (int)(long)arg, i, v;

	for (i = 0; i < 2000; i++) {
		CHECK(bip_trecv(tag, &v, 1) == 1, "recv");
		CHECK(v == i * tag, "tag %d message %d is %d", tag, i, v);
	}
	return NULL;
}

static void t_threads(void)
{
	pthread_t t[3];
	int i, tag, v;

	if (bip_mynode == 1) {
		for (i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, thread_recv, (void *)(long)(i + 1));
		for (i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	} else if (bip_mynode == 0) {
		for (i = 0; i < 2000; i++)
			for (tag = 1; tag <= 3; tag++) {
				v = i * tag;
				CHECK(bip_tsend(1, tag, &v, 1) == 0, "send");
			}
	}
}

/* Medium long messages received in another order than sent: the first may
 * travel with its announcement and must still arrive whole when taken last. */
static void t_reorder(void)
{
	static const int len[4] = { 2000, 2000, 3000, 150 };
	static int buf[4][3000];
	int i, round, id[4];

	for (round = 0; round < 20; round++) {
		if (bip_mynode == 0) {
			for (i = 0; i < 4; i++) {
				fill(buf[i], len[i], 0, round * 4 + i);
				id[i] = bip_tisend(1, i + 1, buf[i], len[i]);
				CHECK(id[i] >= 0, "send %d", i);
			}
			for (i = 0; i < 4; i++)
				bip_swait(id[i]);
		} else if (bip_mynode == 1) {
			if (round % 4 == 0)
				sleep_ms(20); /* let every announcement arrive first */
			/* Last sent first, first sent last. */
			for (i = 3; i >= 0; i--) {
				memset(buf[i], 0, sizeof(buf[i]));
				CHECK(bip_trecv(i + 1, buf[i], 3000) == len[i], "message %d", i);
				check_data(buf[i], len[i], 0, round * 4 + i);
			}
		}
	}
}

/* Batches of messages of random sizes on 8 tags, two batches in flight, each
 * received in a shuffled order: the sender keeps posting while the receiver
 * passes over, claims and takes messages out of order. */
static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void t_stream(void)
{
	enum { BATCHES = 60, TAGS = 8, MAXW = 24000 };
	static int buf[2][TAGS][MAXW];
	static int len[BATCHES][TAGS];
	int id[2][TAGS], order[TAGS];
	unsigned seed = 42;
	int b, t, i;

	for (b = 0; b < BATCHES; b++)
		for (t = 0; t < TAGS; t++) {
			unsigned r = next_rand(&seed);

			len[b][t] = r % 4 ? BIPSMALLSIZE + 1 + (int)(r % 5000) : (int)(r % MAXW);
		}
	if (bip_mynode == 0) {
		for (b = 0; b < BATCHES; b++) {
			if (b >= 2)
				for (t = 0; t < TAGS; t++)
					bip_swait(id[b % 2][t]);
			for (t = 0; t < TAGS; t++) {
				fill(buf[b % 2][t], len[b][t], 0, b * TAGS + t);
				id[b % 2][t] = bip_tisend(1, t + 1, buf[b % 2][t], len[b][t]);
				CHECK(id[b % 2][t] >= 0, "send");
			}
		}
		for (b = 0; b < 2; b++)
			for (t = 0; t < TAGS; t++)
				bip_swait(id[b][t]);
	} else if (bip_mynode == 1) {
		for (b = 0; b < BATCHES; b++) {
			for (t = 0; t < TAGS; t++)
				order[t] = t;
			for (t = TAGS - 1; t > 0; t--) {
				int j = (int)(next_rand(&seed) % (unsigned)(t + 1)), x = order[t];

				order[t] = order[j];
				order[j] = x;
			}
			for (i = 0; i < TAGS; i++) {
				t = order[i];
				CHECK(bip_trecv(t + 1, buf[0][t], MAXW) == len[b][t], "batch %d tag %d",
				      b, t + 1);
				check_data(buf[0][t], len[b][t], 0, b * TAGS + t);
			}
		}
	}
}

/* The receiver claims a message it passed over while the sender, not yet
 * aware of the claim, sends another that travels with its announcement: the
 * claimed data must not be taken from the newer message's chunks. */
static void t_claimrace(void)
{
	static int a[300], b[300], c[300];
	int ia, ib, ic, round;

	for (round = 0; round < 10; round++) {
		if (bip_mynode == 0) {
			fill(a, 300, 0, round * 3);
			fill(b, 300, 0, round * 3 + 1);
			fill(c, 300, 0, round * 3 + 2);
			ia = bip_tisend(1, 1, a, 300);
			ib = bip_tisend(1, 2, b, 300);
			bip_swait(ib);   /* the receiver took b first, passing over a */
			sleep_ms(30);    /* meanwhile it claims a */
			ic = bip_tisend(1, 3, c, 300);
			bip_swait(ia);
			bip_swait(ic);
		} else if (bip_mynode == 1) {
			sleep_ms(10);    /* both announcements are here */
			CHECK(bip_trecv(2, b, 300) == 300, "b");
			check_data(b, 300, 0, round * 3 + 1);
			CHECK(bip_trecv(1, a, 300) == 300, "a");
			check_data(a, 300, 0, round * 3);
			CHECK(bip_trecv(3, c, 300) == 300, "c");
			check_data(c, 300, 0, round * 3 + 2);
		}
	}
}

/* Many long receives posted at once on one buffer, as benchmarks do: the
 * messages of one sender land in the order it sent them, so once every
 * receive is complete the buffer holds the last message.  Sizes of one
 * packet and of several; the receiver waits for them last sent first. */
static void t_window(void)
{
	enum { WIN = 64, MAXW = 40000 };
	static const int sizes[] = { 75, 1000, MAXW };
	/* One buffer per receive: receives in flight into one buffer would
	 * leave it as whichever lands last, which no driver promises (the
	 * reliability layer places repaired fragments whenever they come). */
	static int sbuf[WIN][MAXW], rbuf[WIN][MAXW];
	int id[WIN], s, i, v = 0, node;

	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
		int len = sizes[s];

		if (bip_mynode == 0) {
			CHECK(bip_trecv(0, &v, 1) == 1, "ready %d", s);
			for (i = 0; i < WIN; i++) {
				fill(sbuf[i], len, 0, s * WIN + i);
				id[i] = bip_tisend(1, i + 1, sbuf[i], len);
				CHECK(id[i] >= 0, "send %d of %d words", i, len);
			}
			for (i = 0; i < WIN; i++)
				bip_swait(id[i]);
		} else if (bip_mynode == 1) {
			memset(rbuf, 0, sizeof(rbuf));
			for (i = 0; i < WIN; i++) {
				id[i] = bip_tirecv(i + 1, rbuf[i], len);
				CHECK(id[i] >= 0, "receive %d", i);
			}
			CHECK(bip_tsend(0, 0, &v, 1) == 0, "ready %d", s);
			for (i = WIN; i-- > 0;) {
				node = -1;
				CHECK(bip_rwaitx(id[i], &node) == len && node == 0,
				      "receive %d of %d words from %d", i, len, node);
			}
			for (i = 0; i < WIN; i++)
				check_data(rbuf[i], len, 0, s * WIN + i);
		}
	}
}

/* Byte-length forms: any byte count, short and long, on normal and reserved tags. */
static void t_bytes(void)
{
	static const size_t sizes[] = { 0, 1, 3, 255, 256, 257, 4099, 100001 };
	static unsigned char sb[100001], rb[100001];
	int peer = 1 - bip_mynode, s, tag, node, id, sid;
	long n;

	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
		for (tag = 0; tag < 2; tag++) {
			int t = tag ? NTAGS + BIP_RESERVED_TAGS - 1 : 7;
			size_t len = sizes[s], i;

			for (i = 0; i < len; i++)
				sb[i] = (unsigned char)(i * 7 + s + bip_mynode);
			memset(rb, 0xee, sizeof(rb));
			id = bip_tirecv_bytes(t, rb, sizeof(rb));
			CHECK(id >= 0, "receive on tag %d", t);
			sid = bip_tisend_bytes(peer, t, sb, len);
			CHECK(sid >= 0, "send %zu bytes", len);
			node = -1;
			n = bip_rwait_bytes(id, &node);
			bip_swait(sid); /* before sb changes */
			CHECK(n == (long)len && node == peer, "got %ld bytes from %d, want %zu", n,
			      node, len);
			for (i = 0; i < len; i++)
				CHECK(rb[i] == (unsigned char)(i * 7 + s + peer), "byte %zu of %zu", i,
				      len);
			CHECK(len == sizeof(rb) || rb[len] == 0xee, "wrote past %zu bytes", len);
		}
	}
	/* Misuse. */
	CHECK(bip_tisend_bytes(peer, NTAGS + BIP_RESERVED_TAGS, sb, 1) == -1, "tag too large");
	CHECK(strstr(bip_error_string(), "bip_tisend_bytes") != NULL, "%s", bip_error_string());
	CHECK(bip_tisend_bytes(peer, 1, sb, (size_t)1 << 33) == -1, "8 GiB");
	CHECK(strstr(bip_error_string(), "largest message") != NULL, "%s", bip_error_string());
	CHECK(bip_tisend_bytes(bip_mynode, 1, sb, 1) == -1, "to self");
	CHECK(bip_tirecv_bytes(1, NULL, 4) == -1, "NULL buffer");
	CHECK(bip_tirecv(NTAGS, (int *)rb, 1) == -1, "the word calls stay below NTAGS");
	id = bip_tirecv_bytes(NTAGS, rb, 4);
	CHECK(id >= 0, "receive on a reserved tag");
	CHECK(bip_rtest(id) == -1 && strstr(bip_error_string(), "invalid receive id"),
	      "the word calls do not see reserved tags: %s", bip_error_string());
	CHECK(bip_tisend_bytes(peer, NTAGS, sb, 2) >= 0, "send");
	CHECK(bip_rwait_bytes(id, NULL) == 2, "still there for the byte calls");
	while ((n = bip_rtest_bytes(-1, NULL)) != -1)
		;
}

/* The other nodes have ended: a wait nobody can end fails instead of hanging. */
static void t_gone(void)
{
	static int big[1000];
	int v;

	if (bip_mynode != 0)
		return; /* ends at once, with status 0 */
	CHECK(bip_recv(&v, 1) == -1, "receive from nobody");
	CHECK(strstr(bip_error_string(), "every other node has ended") != NULL, "%s",
	      bip_error_string());
	CHECK(bip_tsend(1, 2, big, 1000) == -1, "long send to an ended node");
	CHECK(strstr(bip_error_string(), "bip_tsend") != NULL, "%s", bip_error_string());
}

/* Every call that reports a source names the right one, with N - 1 senders;
 * a test of a receive nobody has sent to yet says "not complete". */
static void t_sources(void)
{
	int v[2], n, node, len, id, src, k, *m;
	int go = 1;
	int *next;

	if (bip_mynode != 0) {
		/* Wait for node 0's go, then one message of each round on tag 1. */
		CHECK(bip_trecv(2, v, 1) == 1 && v[0] == 1, "go");
		for (k = 0; k < 8; k++) {
			v[0] = bip_mynode;
			v[1] = k;
			CHECK(bip_tsend(0, k == 7 ? 0 : 1, v, 2) == 0, "send round %d", k);
		}
		return;
	}
	id = bip_tirecv(1, v, 2);
	CHECK(id >= 0, "irecv");
	CHECK(bip_rtest(id) == -1, "rtest before anything was sent");
	CHECK(bip_rtestx(id, &node) == -1, "rtestx before anything was sent");
	CHECK(bip_tprobe(1) == -1, "probe before anything was sent");
	/* The go is sent from a buffer of its own, not from v: v belongs to
	 * the receive posted above until it completes, and a message on tag 1
	 * may land in it while a go is still being sent (a send the driver
	 * cannot take at once, e.g. before its first contact with a peer, is
	 * queued and its words are read when it leaves). */
	for (src = 1; src < bip_numnodes; src++)
		CHECK(bip_tsend(src, 2, &go, 1) == 0, "go to %d", src);
	next = calloc((size_t)bip_numnodes, sizeof(int));
	/* Each receiving call in turn takes N - 1 messages; each node's rounds
	 * arrive in the order it sent them. */
	for (k = 0; k < 7; k++) {
		for (n = 1; n < bip_numnodes; n++) {
			node = -1;
			switch (k) {
			case 0: /* the receive posted before the go */
				if (n == 1) {
					len = bip_rwaitx(id, &node);
					break;
				}
				len = bip_trecvx(1, v, 2, &node);
				break;
			case 1:
				id = bip_tirecv(1, v, 2);
				while ((len = bip_rtestx(id, &node)) < 0)
					;
				break;
			case 2:
				while ((len = bip_tnrecvx(1, v, 2, &node)) < 0)
					;
				break;
			case 3:
				m = bip_tgetmsg(1, &len, &node);
				CHECK(m != NULL, "getmsg");
				memcpy(v, m, sizeof(v));
				bip_tfreemsg(1);
				break;
			case 4:
				while (!(m = bip_tngetmsg(1, &len, &node)))
					;
				memcpy(v, m, sizeof(v));
				bip_tfreemsg(1);
				break;
			case 5:
				while (bip_tprobe(1) != 2)
					;
				len = bip_trecvx(1, v, 2, &node);
				break;
			default:
				id = bip_tirecv(1, v, 2);
				len = bip_rwaitx(id, &node);
				break;
			}
			CHECK(len == 2 && node == v[0] && node > 0 && node < bip_numnodes,
			      "call %d: %d words from node %d, payload says node %d", k, len, node,
			      v[0]);
			CHECK(v[1] == next[node], "call %d: round %d of node %d, expected %d", k,
			      v[1], node, next[node]);
			next[node]++;
		}
	}
	/* Untagged x-variants on tag 0. */
	for (n = 1; n < bip_numnodes; n++) {
		node = -1;
		if (n % 2)
			len = bip_recvx(v, 2, &node);
		else
			while ((len = bip_nrecvx(v, 2, &node)) < 0)
				;
		CHECK(len == 2 && node == v[0] && v[1] == 7, "untagged: %d words from %d (%d %d)",
		      len, node, v[0], v[1]);
		CHECK(next[node] == 7, "node %d: untagged message after %d rounds", node,
		      next[node]);
		next[node]++;
	}
	for (src = 1; src < bip_numnodes; src++)
		CHECK(next[src] == 8, "node %d: %d messages of 8", src, next[src]);
	free(next);
}

/* Sends still in flight when a program returns from main are completed by
 * the finalize run at exit: the receiver posts its receives late. */
static void t_exitflush(void)
{
	enum { LONGW = 262144 };
	static int big[LONGW];
	int v[3], i, id;

	if (bip_mynode == 0) {
		fill(big, LONGW, 0, 9);
		id = bip_tisend(1, 1, big, LONGW);
		CHECK(id >= 0, "long send");
		for (i = 0; i < 3; i++) {
			v[i] = 100 + i;
			CHECK(bip_tisend(1, 2, &v[i], 1) >= 0, "short send");
		}
		return; /* neither swait nor finalize */
	}
	if (bip_mynode != 1)
		return;
	sleep_ms(300);
	for (i = 0; i < 3; i++)
		CHECK(bip_trecv(2, v, 1) == 1 && v[0] == 100 + i, "short %d: %d", i, v[0]);
	memset(big, 0, sizeof(big));
	CHECK(bip_trecv(1, big, LONGW) == LONGW, "long message of an ended sender");
	check_data(big, LONGW, 0, 9);
}

/* Zero-length messages: valid everywhere, with or without a buffer. */
static void t_zero(void)
{
	int v = 5, n, node, len, id, *m;

	CHECK(bip_taginit(9, 4, 0) == 0, "a queue of zero-word messages");
	bip_init();
	if (bip_mynode == 0) {
		CHECK(bip_tsend(1, 9, NULL, 0) == 0, "zero length, NULL buffer");
		CHECK(bip_tsend(1, 9, &v, 0) == 0, "zero length");
		CHECK(bip_tsend(1, 9, &v, 0) == 0, "zero length");
		id = bip_tisend(1, 9, NULL, 0);
		CHECK(id >= 0, "isend zero length");
		bip_swait(id);
		for (n = 0; n < 50; n++)
			CHECK(bip_tsend(1, 9, NULL, 0) == 0, "through a queue of 4");
		CHECK(bip_send(1, NULL, 0) == 0, "untagged");
		CHECK(bip_recv(&v, 1) == 1 && v == 1, "ack");
		return;
	}
	if (bip_mynode != 1)
		return;
	while ((n = bip_tprobe(9)) < 0)
		;
	CHECK(n == 0, "probe of a zero-length message is 0, not %d", n);
	node = -1;
	CHECK(bip_tnrecvx(9, NULL, 0, &node) == 0 && node == 0, "nrecvx into no buffer");
	v = 5;
	CHECK(bip_trecv(9, &v, 1) == 0 && v == 5, "trecv: the buffer is untouched");
	len = node = -1;
	m = bip_tgetmsg(9, &len, &node);
	CHECK(m != NULL && len == 0 && node == 0, "getmsg of zero words: %p %d %d", (void *)m,
	      len, node);
	bip_tfreemsg(9);
	id = bip_tirecv(9, NULL, 0);
	CHECK(id >= 0, "irecv with no buffer");
	node = -1;
	CHECK(bip_rwaitx(id, &node) == 0 && node == 0, "rwaitx");
	for (n = 0; n < 50; n++)
		CHECK(bip_trecv(9, NULL, 0) == 0, "message %d", n);
	CHECK(bip_recvx(&v, 1, &node) == 0 && node == 0, "untagged");
	v = 1;
	CHECK(bip_send(0, &v, 1) == 0, "ack");
}

/* Start-up and crash behaviour, checked by the wrapper script. */
static void t_noinit(void)
{
	const char *node = getenv("BIP_NODE");

	if (!node)
		node = getenv("SLURM_PROCID"); /* under srun */
	if (atoi(node ? node : "0") == 2)
		exit(0); /* never calls bip_init */
	bip_init();
}

/* Node 1 ends by signal sig, or (sig 0) by _exit(1), which runs no cleanup
 * either, as a fatal error of a library may. */
static void crash_with(int sig)
{
	int v;

	bip_init();
	if (bip_mynode == 0)
		printf("job %s\n", getenv("BIP_JOBID"));
	if (bip_mynode == 1) {
		sleep_ms(100);
		if (!sig)
			_exit(1);
		raise(sig);
	}
	bip_recv(&v, 1); /* waits until bipload stops it */
}

static void t_crash(void)
{
	crash_with(SIGSEGV);
}

/* Killed without a chance to clean up anything. */
static void t_killed(void)
{
	crash_with(SIGKILL);
}

static void t_exited(void)
{
	crash_with(0);
}

/*
 * A short message may be reused as soon as the send call returns, even when
 * the receiver's queue is full and the send has to wait: node 1's tag 8
 * holds one message, node 0 sends more than any driver's rings hold from
 * one buffer changed after each call, and node 1 takes them only after a
 * while.
 */
static void t_reuse(void)
{
	enum { COUNT = 2000 };
	static int id[COUNT];
	int v[2], i;

	CHECK(bip_taginit(8, 1, 2) == 0, "taginit");
	bip_init();
	if (bip_mynode == 0) {
		for (i = 0; i < COUNT; i++) {
			v[0] = i;
			v[1] = -i;
			id[i] = bip_tisend(1, 8, v, 2);
			CHECK(id[i] >= 0, "send %d", i);
			v[0] = v[1] = 12345; /* the message must not change */
		}
		for (i = 0; i < COUNT; i++)
			bip_swait(id[i]);
		return;
	}
	if (bip_mynode != 1)
		return;
	sleep_ms(100); /* let the queue fill; correctness does not depend on it */
	for (i = 0; i < COUNT; i++)
		CHECK(bip_trecv(8, v, 2) == 2 && v[0] == i && v[1] == -i, "message %d: %d %d", i,
		      v[0], v[1]);
}

/*
 * A full queue holds back only what goes into it: node 0 floods node 1's
 * small tag 4 queue, which node 1 leaves alone until it has the messages
 * every other node sends it on tag 6, once node 1 has said "go" (so that
 * they come while node 0's wait).  Those must not wait behind node 0's (on
 * lanai the firmware keeps what does not fit per source, not for the whole
 * board).  Then node 1 takes node 0's, in order.
 */
static void t_fullq(void)
{
	enum { COUNT = 400 };
	static int id[COUNT];
	int v, i, node;

	CHECK(bip_taginit(4, 1, 1) == 0, "taginit");
	bip_init();
	CHECK(bip_numnodes >= 3, "fullq needs 3 nodes or more, not %d", bip_numnodes);
	if (bip_mynode == 0) {
		for (i = 0; i < COUNT; i++) {
			id[i] = bip_tisend(1, 4, &i, 1);
			CHECK(id[i] >= 0, "send %d", i);
		}
		for (i = 0; i < COUNT; i++)
			bip_swait(id[i]);
	} else if (bip_mynode == 1) {
		sleep_ms(100); /* let the queue fill; correctness does not depend on it */
		for (i = 2; i < bip_numnodes; i++)
			CHECK(bip_tsend(i, 7, &i, 1) == 0, "go to node %d", i);
		for (i = 2; i < bip_numnodes; i++) {
			CHECK(bip_trecvx(6, &v, 1, &node) == 1, "tag 6 message %d", i);
			CHECK(v == 1000 + node && node >= 2, "tag 6: %d from node %d", v, node);
		}
		for (i = 0; i < COUNT; i++)
			CHECK(bip_trecv(4, &v, 1) == 1 && v == i, "tag 4 message %d is %d", i, v);
	} else {
		CHECK(bip_trecv(7, &v, 1) == 1 && v == bip_mynode, "go");
		v = 1000 + bip_mynode;
		CHECK(bip_tsend(1, 6, &v, 1) == 0, "send on tag 6");
	}
}

/*
 * Traffic that goes on until someone stops it (startup.sh orphans kills
 * bipload under it): a token round the ring, for at most 60 s.  Each node
 * says its pid once it runs, and node 0 the job id.
 */
static void t_orphan(void)
{
	int next = (bip_mynode + 1) % bip_numnodes;
	time_t end = time(NULL) + 60;
	int v = 0;

	if (bip_mynode == 0)
		printf("job %s\n", getenv("BIP_JOBID"));
	printf("node %d runs as pid %d\n", bip_mynode, (int)getpid());
	fflush(stdout);
	while (time(NULL) < end) {
		if (bip_mynode == 0) {
			CHECK(bip_tsend(next, 3, &v, 1) == 0, "send");
			CHECK(bip_trecv(3, &v, 1) == 1, "receive");
		} else {
			CHECK(bip_trecv(3, &v, 1) == 1, "receive");
			v++;
			CHECK(bip_tsend(next, 3, &v, 1) == 0, "send");
		}
	}
}

/*
 * A full queue holds back only its own tag (issue: 600 sends to tag 7 then
 * one to tag 8 deadlocked, since the full tag 7 held the sender's tag 8
 * behind it).  Node 0 sends 600 one-word messages to tag 7, whose queue
 * takes about 400, then one to tag 8; node 1 waits for tag 8 first, then
 * takes tag 7's messages, which must come whole and in order.
 */
static void t_tagpass(void)
{
	enum { COUNT = 600 };
	static int id[COUNT];
	int v, i, last;

	if (bip_mynode == 0) {
		for (i = 0; i < COUNT; i++) {
			id[i] = bip_tisend(1, 7, &i, 1);
			CHECK(id[i] >= 0, "send %d to tag 7", i);
		}
		v = 8888;
		last = bip_tisend(1, 8, &v, 1);
		CHECK(last >= 0, "send to tag 8");
		bip_swait(last);
		for (i = 0; i < COUNT; i++)
			bip_swait(id[i]);
	} else if (bip_mynode == 1) {
		CHECK(bip_trecv(8, &v, 1) == 1 && v == 8888, "tag 8 message is %d", v);
		for (i = 0; i < COUNT; i++)
			CHECK(bip_trecv(7, &v, 1) == 1 && v == i, "tag 7 message %d is %d", i, v);
	}
}

/*
 * Every tag but one full: each sender (every node but 1) fills tags 1 ..
 * NTAGS-1 of node 1 past their queues with messages of BIPSMALLSIZE words
 * (queues sized for 2 of them), then sends one message to tag 0, which
 * node 1 waits for first.  Then node 1 takes every tag's messages,
 * checking each sender's order per tag and every word.
 */
static void t_tagsfull(void)
{
	enum { PER_TAG = 8 };
	static int id[NTAGS * PER_TAG];
	static int msg[BIPSMALLSIZE];
	int next[16] = { 0 };
	int v, i, k, tag, node, n = 0;

	for (tag = 1; tag < NTAGS; tag++)
		CHECK(bip_taginit(tag, 2, BIPSMALLSIZE) == 0, "taginit %d", tag);
	bip_init();
	CHECK(bip_numnodes <= 16, "tagsfull takes at most 16 nodes");
	if (bip_mynode != 1) {
		for (tag = 1; tag < NTAGS; tag++)
			for (i = 0; i < PER_TAG; i++) {
				for (k = 0; k < BIPSMALLSIZE; k++)
					msg[k] = (bip_mynode << 24) + tag * 1000 + i + k;
				id[n] = bip_tisend(1, tag, msg, BIPSMALLSIZE);
				CHECK(id[n] >= 0, "send %d to tag %d", i, tag);
				n++;
			}
		v = bip_mynode;
		CHECK(bip_tsend(1, 0, &v, 1) == 0, "send to tag 0");
		for (i = 0; i < n; i++)
			bip_swait(id[i]);
		return;
	}
	for (i = 0; i < bip_numnodes - 1; i++)
		CHECK(bip_trecvx(0, &v, 1, &node) == 1 && v == node, "tag 0: %d from %d", v, node);
	for (tag = 1; tag < NTAGS; tag++) {
		memset(next, 0, sizeof(next));
		for (i = 0; i < PER_TAG * (bip_numnodes - 1); i++) {
			CHECK(bip_trecvx(tag, msg, BIPSMALLSIZE, &node) == BIPSMALLSIZE,
			      "tag %d message %d", tag, i);
			CHECK(node != 1 && node < 16, "tag %d: message from node %d", tag, node);
			for (k = 0; k < BIPSMALLSIZE; k++)
				CHECK(msg[k] == (node << 24) + tag * 1000 + next[node] + k,
				      "tag %d: word %d of message %d from node %d is %d", tag, k,
				      next[node], node, msg[k]);
			next[node]++;
		}
	}
}

/*
 * A host that goes silent, as after a crash (run by tests/netns/conformance.sh
 * hostdown): node 1 says it is ready and stops itself, and the test cuts its
 * host off, so that nothing there answers any more.  Node 0's receive must
 * end with "every other node has ended" instead of waiting forever; it then
 * exits with status 3, which the script expects.
 */
static void t_hostdown(void)
{
	int v;

	bip_init();
	if (bip_mynode == 1) {
		printf("node 1 ready\n");
		fflush(stdout);
		raise(SIGSTOP);
		return;
	}
	if (bip_mynode != 0)
		return;
	CHECK(bip_trecv(5, &v, 1) == -1, "a message came from a silent host");
	CHECK(strstr(bip_error_string(), "every other node has ended"), "%s", bip_error_string());
	printf("node 0: node 1 counted as ended\n");
	fflush(stdout);
	_exit(3);
}

/*
 * A region in /dev/shm named after this process, as a killed process with
 * the same pid would have left it for libfabric's shm provider ("PID:0:0"):
 * start-up does not trip over it, and it is gone afterwards.
 */
static void t_stale(void)
{
	char path[64];
	int fd, v = 0;

	snprintf(path, sizeof(path), "/dev/shm/%ld:0:0", (long)getpid());
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	CHECK(fd >= 0, "cannot create %s", path);
	CHECK(ftruncate(fd, 4096) == 0, "ftruncate");
	close(fd);
	bip_init();
	if (bip_mynode == 0)
		v = 1;
	else
		CHECK(bip_recv(&v, 1) == 1, "token");
	if (bip_mynode + 1 < bip_numnodes)
		CHECK(bip_send(bip_mynode + 1, &v, 1) == 0, "token");
	CHECK(v == 1, "token %d", v);
	bip_finalize();
	unlink(path); /* left alone by the drivers that do not use that name */
}

static const struct {
	const char *name;
	void (*run)(void);
	int own_init;
} tests[] = {
	{ "sizes", t_sizes, 0 },       { "token", t_token, 0 },       { "tags", t_tags, 0 },
	{ "ordering", t_ordering, 0 }, { "alltoall", t_alltoall, 0 }, { "taginit", t_taginit, 1 },
	{ "getmsg", t_getmsg, 0 },     { "probe", t_probe, 0 },       { "late", t_late, 0 },
	{ "longblock", t_longblock, 0 }, { "untagged", t_untagged, 0 }, { "counters", t_counters, 0 },
	{ "threads", t_threads, 0 },   { "gone", t_gone, 0 },         { "reorder", t_reorder, 0 },
	{ "stream", t_stream, 0 },     { "claimrace", t_claimrace, 0 }, { "window", t_window, 0 },
	{ "bytes", t_bytes, 0 },       { "sources", t_sources, 0 },   { "exitflush", t_exitflush, 0 },
	{ "zero", t_zero, 1 },         { "reuse", t_reuse, 1 },       { "noinit", t_noinit, 1 },
	{ "crash", t_crash, 1 },       { "killed", t_killed, 1 },     { "exited", t_exited, 1 },     { "stale", t_stale, 1 },
	{ "fullq", t_fullq, 1 },       { "hostdown", t_hostdown, 1 },
	{ "tagpass", t_tagpass, 0 },   { "tagsfull", t_tagsfull, 1 },
	{ "orphan", t_orphan, 0 },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: conformance TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		if (!tests[i].own_init)
			bip_init();
		tests[i].run();
		return 0;
	}
	fprintf(stderr, "conformance: no test %s\n", argv[1]);
	return 2;
}
