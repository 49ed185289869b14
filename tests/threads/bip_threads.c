/* SPDX-License-Identifier: MIT */
/*
 * bip_threads - many threads of each process calling BIP at once.
 *
 *   bipload -sz N bip_threads [-t THREADS] [-m MESSAGES]     (N = 2 .. 4)
 *
 * Each process runs THREADS workers (default 8) and one getmsg thread, all
 * started after bip_init and calling BIP at the same time.
 *
 * Worker i of node n owns tag 1 + i.  It sends MESSAGES messages on that tag
 * to node n + s and receives as many on it from node n - s (modulo N, with a
 * stride s = 1 + i % (N - 1), so that with three or four nodes the workers
 * have different peers); every tag thus has one sender and one receiving
 * thread, and the order of its messages is known.  Message k is
 * LENS[(5k + i + sender) % NLENS] words long: short ones, lengths around the
 * short limit (BIPSMALLSIZE words) and long ones (rendezvous) of up to
 * 64 Ki words.  Words 0 .. 2 hold (sender, worker, k), every other word a
 * pattern of those and its index; the receiver checks every word, the
 * sequence number (the order per tag), the length, the source node and
 * that nothing was written past the message.  Up to WINDOW sends are in
 * flight per worker, one receive posted at a time.  How a message is
 * waited for changes with k:
 *   k % 4 == 0  bip_tirecv before the send; bip_rwait
 *   k % 4 == 1  bip_tirecv before the send; bip_rtest in a loop
 *   k % 4 == 2  bip_tirecv before the send; bip_rwaitx (source checked)
 *   k % 4 == 3  the send first, then bip_trecvx
 * and a send slot is taken back with bip_swait (k even) or bip_stest in a
 * loop (k odd).  Every receive is posted before its thread waits on a send
 * whose receiver may need it, so the ring cannot deadlock.
 *
 * The getmsg thread owns tag GETMSG_TAG, sized small with bip_taginit so
 * that its senders stall for room.  It sends MESSAGES short messages there
 * to node n + 1 with bip_tsend and takes those of node n - 1 with
 * bip_tgetmsg, two at a time, checking both before bip_tfreemsg frees them
 * oldest first; while it holds them, a receive on the tag must be refused.
 *
 * At the end each process checks its counters (bip_get_counters): exactly
 * the short and long messages expected were received and no call failed.
 * Any mismatch prints one line "FAIL: node N thread T: what" and exits 1;
 * success prints "bip_threads: node N: ... checked".
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "args.h"

#define MAX_THREADS 64
#define WINDOW 4
#define GETMSG_TAG 150
#define GETMSG_NBUFS 2
#define GETMSG_SIZE BIPSMALLSIZE
#define POISON ((int)0xa5a5a5a5)
#define GUARD 16 /* words checked past each message */

/* Lengths in words: short, around the short limit, around a 4 KiB page, long. */
static const int LENS[] = { 3,    4,    17,   BIPSMALLSIZE - 1, BIPSMALLSIZE, BIPSMALLSIZE + 1,
			    BIPSMALLSIZE + 2, 255, 1023, 1024, 1025, 4096, 16387, 65536 };
#define NLENS ((int)(sizeof(LENS) / sizeof(LENS[0])))
#define MAXLEN 65536

static int nthreads = 8, nmessages = 100;

struct worker {
	int index;   /* 0 .. nthreads - 1; nthreads for the getmsg thread */
	int tag;
	int to, from;
	int *sbuf[WINDOW];
	int sid[WINDOW];
	int *rbuf;   /* MAXLEN + GUARD words */
};

#define FAIL(w, ...)                                                                         \
	do {                                                                                 \
		fprintf(stderr, "FAIL: node %d thread %d: ", bip_mynode, (w)->index);        \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		_exit(1);                                                                    \
	} while (0)

static int msg_len(int sender, int thread, int k)
{
	return LENS[(5 * k + thread + sender) % NLENS];
}

static int is_short(int len)
{
	return len <= BIPSMALLSIZE;
}

/* Word w (w >= 3) of message k of worker thread of node sender. */
static int pattern(int sender, int thread, int k, int w)
{
	uint32_t x = (uint32_t)sender * 0x9e3779b1u ^ (uint32_t)thread * 0x85ebca77u ^
		     (uint32_t)k * 0xc2b2ae3du ^ (uint32_t)w * 0x27d4eb2fu;

	return (int)(x + (uint32_t)w);
}

static void fill(int *buf, int len, int sender, int thread, int k)
{
	int w;

	buf[0] = sender;
	buf[1] = thread;
	buf[2] = k;
	for (w = 3; w < len; w++)
		buf[w] = pattern(sender, thread, k, w);
}

/* Check message k of w's peer, got = the length reported, node = its source. */
static void check_msg(struct worker *w, const int *buf, int got, int node, int k, int guard)
{
	int len = msg_len(w->from, w->index, k), i;

	if (got != len)
		FAIL(w, "message %d on tag %d from node %d: %d words, expected %d", k, w->tag,
		     w->from, got, len);
	if (node != w->from)
		FAIL(w, "message %d on tag %d came from node %d, expected node %d", k, w->tag,
		     node, w->from);
	if (buf[0] != w->from || buf[1] != w->index)
		FAIL(w, "message %d on tag %d is from node %d thread %d, expected node %d thread "
		     "%d", k, w->tag, buf[0], buf[1], w->from, w->index);
	if (buf[2] != k)
		FAIL(w, "tag %d out of order: message %d arrived where %d was expected", w->tag,
		     buf[2], k);
	for (i = 3; i < len; i++)
		if (buf[i] != pattern(w->from, w->index, k, i))
			FAIL(w, "message %d on tag %d (%d words): word %d is %#x, expected %#x", k,
			     w->tag, len, i, (unsigned)buf[i],
			     (unsigned)pattern(w->from, w->index, k, i));
	for (i = len; guard && i < len + GUARD; i++)
		if (buf[i] != POISON)
			FAIL(w, "message %d on tag %d (%d words): word %d past its end was "
			     "written (%#x)", k, w->tag, len, i, (unsigned)buf[i]);
}

static void poison(int *buf, int len)
{
	int i;

	for (i = 0; i < len + GUARD; i++)
		buf[i] = POISON;
}

/* Take back the send slot of message k: swait (k even) or stest in a loop. */
static void send_done(struct worker *w, int k)
{
	int slot = k % WINDOW, r;

	if (w->sid[slot] < 0)
		return;
	if (k % 2 == 0) {
		bip_swait(w->sid[slot]);
		r = bip_stest(w->sid[slot]);
		if (r != 1)
			FAIL(w, "bip_stest of send %d after bip_swait: %d (%s)", w->sid[slot], r,
			     bip_error_string());
	} else {
		while ((r = bip_stest(w->sid[slot])) == 0)
			sched_yield();
		if (r != 1)
			FAIL(w, "bip_stest of send %d (message %d to node %d): %d (%s)",
			     w->sid[slot], k, w->to, r, bip_error_string());
	}
	w->sid[slot] = -1;
}

static void send_msg(struct worker *w, int k)
{
	int slot = k % WINDOW, len = msg_len(bip_mynode, w->index, k);

	if (k >= WINDOW)
		send_done(w, k - WINDOW);
	fill(w->sbuf[slot], len, bip_mynode, w->index, k);
	w->sid[slot] = bip_tisend(w->to, w->tag, w->sbuf[slot], len);
	if (w->sid[slot] < 0)
		FAIL(w, "bip_tisend of message %d (%d words) to node %d on tag %d: %s", k, len,
		     w->to, w->tag, bip_error_string());
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int k, id, got, node;

	for (k = 0; k < nmessages; k++) {
		poison(w->rbuf, MAXLEN);
		node = -1;
		if (k % 4 == 3) {
			send_msg(w, k);
			got = bip_trecvx(w->tag, w->rbuf, MAXLEN, &node);
			if (got < 0)
				FAIL(w, "bip_trecvx of message %d on tag %d: %s", k, w->tag,
				     bip_error_string());
			check_msg(w, w->rbuf, got, node, k, 1);
			continue;
		}
		id = bip_tirecv(w->tag, w->rbuf, MAXLEN);
		if (id < 0)
			FAIL(w, "bip_tirecv of message %d on tag %d: %s", k, w->tag,
			     bip_error_string());
		send_msg(w, k);
		if (k % 4 == 0) {
			got = bip_rwait(id);
			node = w->from; /* bip_rwait does not tell: checked in the message */
		} else if (k % 4 == 1) {
			while ((got = bip_rtest(id)) < 0 && !bip_error_string()[0])
				sched_yield();
			node = w->from;
		} else {
			got = bip_rwaitx(id, &node);
		}
		if (got < 0)
			FAIL(w, "waiting for message %d on tag %d (receive %d): %s", k, w->tag, id,
			     bip_error_string());
		check_msg(w, w->rbuf, got, node, k, 1);
	}
	for (k = nmessages - WINDOW; k < nmessages; k++)
		if (k >= 0)
			send_done(w, k);
	return NULL;
}

/* Short messages on a small queue, taken two at a time with bip_tgetmsg. */
static int getmsg_len(int k)
{
	static const int l[] = { 3, 8, 9, 20, BIPSMALLSIZE };

	return l[k % 5];
}

static void take_getmsg(struct worker *w, int k, const int **msg)
{
	int len = -1, node = -1;

	*msg = bip_tgetmsg(w->tag, &len, &node);
	if (!*msg)
		FAIL(w, "bip_tgetmsg of message %d on tag %d: %s", k, w->tag, bip_error_string());
	if (len != getmsg_len(k) || node != w->from)
		FAIL(w, "bip_tgetmsg message %d on tag %d: %d words from node %d, expected %d "
		     "from node %d", k, w->tag, len, node, getmsg_len(k), w->from);
}

static void check_getmsg(struct worker *w, const int *p, int k)
{
	int i;

	if (p[0] != w->from || p[1] != w->index || p[2] != k)
		FAIL(w, "bip_tgetmsg on tag %d: message (node %d, thread %d, %d), expected "
		     "(node %d, thread %d, %d)", w->tag, p[0], p[1], p[2], w->from, w->index, k);
	for (i = 3; i < getmsg_len(k); i++)
		if (p[i] != pattern(w->from, w->index, k, i))
			FAIL(w, "bip_tgetmsg message %d on tag %d: word %d is %#x, expected %#x", k,
			     w->tag, i, (unsigned)p[i], (unsigned)pattern(w->from, w->index, k, i));
}

static int refusals; /* receives refused on purpose, counted as errors */

static void *getmsg_main(void *arg)
{
	struct worker *w = arg;
	const int *m[2];
	char tagname[32];
	int k, first, n, j;

	snprintf(tagname, sizeof(tagname), "tag %d", w->tag);
	for (k = 0; k < nmessages; k++) {
		fill(w->sbuf[0], getmsg_len(k), bip_mynode, w->index, k);
		if (bip_tsend(w->to, w->tag, w->sbuf[0], getmsg_len(k)) != 0)
			FAIL(w, "bip_tsend of message %d to node %d on tag %d: %s", k, w->to,
			     w->tag, bip_error_string());
		if (k % 2 == 0 && k + 1 < nmessages)
			continue;
		/* Messages k - 1 and k, or k alone at an even end: both held at once. */
		first = k % 2 ? k - 1 : k;
		n = k - first + 1;
		for (j = 0; j < n; j++)
			take_getmsg(w, first + j, &m[j]);
		/* A receive on the tag is refused while messages are held (tried on
		 * the first and the last pair: each refusal prints a line). */
		if (first == 0 || k == nmessages - 1) {
			if (bip_tirecv(w->tag, w->rbuf, MAXLEN) != -1 ||
			    !strstr(bip_error_string(), tagname))
				FAIL(w, "bip_tirecv on tag %d with messages held: not refused as it "
				     "should (%s)", w->tag, bip_error_string());
			refusals++;
		}
		/* bip_tfreemsg frees the oldest: the newer stays valid. */
		for (j = 0; j < n; j++) {
			check_getmsg(w, m[j], first + j);
			bip_tfreemsg(w->tag);
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: bip_threads [-t THREADS (1 .. %d)] [-m MESSAGES (1 .. 100000)]\n",
		MAX_THREADS);
	exit(2);
}

static int arg_int(const char *s, int lo, int hi)
{
	return arg_int_in(s, lo, hi, usage);
}

static void setup(struct worker *w, int index, int stride)
{
	int j;

	w->index = index;
	w->tag = index < nthreads ? 1 + index : GETMSG_TAG;
	w->to = (bip_mynode + stride) % bip_numnodes;
	w->from = (bip_mynode - stride + bip_numnodes) % bip_numnodes;
	for (j = 0; j < WINDOW; j++) {
		w->sbuf[j] = malloc(MAXLEN * sizeof(int));
		w->sid[j] = -1;
	}
	w->rbuf = malloc((MAXLEN + GUARD) * sizeof(int));
	if (!w->rbuf || !w->sbuf[WINDOW - 1])
		FAIL(w, "out of memory");
}

/* The counters must show exactly the messages this node received. */
static void check_counters(struct worker *ws)
{
	struct bip_counters c;
	uint64_t shorts = (uint64_t)nmessages, longs = 0;
	int i, k;

	for (i = 0; i < nthreads; i++)
		for (k = 0; k < nmessages; k++) {
			if (is_short(msg_len(ws[i].from, i, k)))
				shorts++;
			else
				longs++;
		}
	bip_get_counters(&c);
	if (c.short_received != shorts || c.long_received != longs ||
	    c.errors != (uint64_t)refusals)
		FAIL(&ws[nthreads], "counters: %llu short and %llu long messages received, %llu "
		     "errors; expected %llu, %llu and %d", (unsigned long long)c.short_received,
		     (unsigned long long)c.long_received, (unsigned long long)c.errors,
		     (unsigned long long)shorts, (unsigned long long)longs, refusals);
}

int main(int argc, char **argv)
{
	struct worker *ws;
	pthread_t *tid;
	int opt, i, rc;

	while ((opt = getopt(argc, argv, "t:m:")) != -1) {
		if (opt == 't')
			nthreads = arg_int(optarg, 1, MAX_THREADS);
		else if (opt == 'm')
			nmessages = arg_int(optarg, 1, 100000);
		else
			usage();
	}
	if (optind != argc)
		usage();
	if (bip_taginit(GETMSG_TAG, GETMSG_NBUFS, GETMSG_SIZE) != 0) {
		fprintf(stderr, "FAIL: bip_taginit(%d): %s\n", GETMSG_TAG, bip_error_string());
		return 1;
	}
	bip_init();
	if (bip_numnodes < 2) {
		fprintf(stderr, "FAIL: node %d: bip_threads needs at least 2 nodes, not %d\n",
			bip_mynode, bip_numnodes);
		return 1;
	}
	ws = calloc((size_t)nthreads + 1, sizeof(*ws));
	tid = calloc((size_t)nthreads + 1, sizeof(*tid));
	if (!ws || !tid) {
		fprintf(stderr, "FAIL: node %d: out of memory\n", bip_mynode);
		return 1;
	}
	for (i = 0; i < nthreads; i++)
		setup(&ws[i], i, 1 + i % (bip_numnodes - 1));
	setup(&ws[nthreads], nthreads, 1);
	for (i = 0; i <= nthreads; i++) {
		rc = pthread_create(&tid[i], NULL, i < nthreads ? worker_main : getmsg_main, &ws[i]);
		if (rc)
			FAIL(&ws[i], "pthread_create: %s", strerror(rc));
	}
	for (i = 0; i <= nthreads; i++)
		pthread_join(tid[i], NULL);
	check_counters(ws);
	printf("bip_threads: node %d of %d: %d threads x %d messages and %d bip_tgetmsg messages "
	       "checked\n", bip_mynode, bip_numnodes, nthreads, nmessages, nmessages);
	for (i = 0; i <= nthreads; i++) {
		int j;

		for (j = 0; j < WINDOW; j++)
			free(ws[i].sbuf[j]);
		free(ws[i].rbuf);
	}
	free(ws);
	free(tid);
	return bip_finalize() == 0 ? 0 : 1;
}
