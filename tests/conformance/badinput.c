/* SPDX-License-Identifier: MIT */
/*
 * Bad input: every misuse of the API gets a clear message naming the call,
 * its documented result, and loses nothing.  `bipload -sz 2 badinput`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "check.h"


static unsigned long long errors_before;

/* The last call failed: its message names the call, and the error was counted. */
static void expect_error(const char *call, const char *words)
{
	struct bip_counters c;
	const char *msg = bip_error_string();

	CHECK(strstr(msg, call) != NULL, "message \"%s\" should name %s", msg, call);
	CHECK(!words || strstr(msg, words) != NULL, "message \"%s\" should say \"%s\"", msg, words);
	if (errors_before != (unsigned long long)-1) {
		bip_get_counters(&c);
		CHECK(c.errors == errors_before + 1, "errors counter %llu, expected %llu",
		      (unsigned long long)c.errors, errors_before + 1);
		errors_before = c.errors;
	}
}

static void before_init(void)
{
	int v = 0, len, node;

	errors_before = (unsigned long long)-1; /* counters start at bip_init */
	CHECK(bip_mynode == -1 && bip_numnodes == 0, "variables before bip_init");
	CHECK(bip_tisend(1, 0, &v, 1) == -1, "send");
	expect_error("bip_tisend", "before bip_init");
	CHECK(bip_tirecv(0, &v, 1) == -1, "irecv");
	expect_error("bip_tirecv", "before bip_init");
	CHECK(bip_rwait(1) == -1, "rwait");
	expect_error("bip_rwait", "before bip_init");
	CHECK(bip_tprobe(0) == -1, "probe");
	expect_error("bip_tprobe", "before bip_init");
	CHECK(bip_tgetmsg(0, &len, &node) == NULL, "getmsg");
	expect_error("bip_tgetmsg", "before bip_init");
	CHECK(bip_stest(0) == -1, "stest");
	expect_error("bip_stest", "before bip_init");
	CHECK(bip_finalize() == -1, "finalize");
	expect_error("bip_finalize", NULL);

	/* Every other call, blocking ones included, fails at once. */
	CHECK(bip_tsend(1, 0, &v, 1) == -1, "tsend");
	expect_error("bip_tsend", "before bip_init");
	CHECK(bip_send(1, &v, 1) == -1, "send");
	expect_error("bip_send", "before bip_init");
	CHECK(bip_isend(1, &v, 1) == -1, "isend");
	expect_error("bip_isend", "before bip_init");
	CHECK(bip_irecv(&v, 1) == -1, "irecv");
	expect_error("bip_irecv", "before bip_init");
	CHECK(bip_trecv(0, &v, 1) == -1, "trecv");
	expect_error("bip_trecv", "before bip_init");
	CHECK(bip_trecvx(0, &v, 1, &node) == -1, "trecvx");
	expect_error("bip_trecvx", "before bip_init");
	CHECK(bip_recv(&v, 1) == -1, "recv");
	expect_error("bip_recv", "before bip_init");
	CHECK(bip_recvx(&v, 1, &node) == -1, "recvx");
	expect_error("bip_recvx", "before bip_init");
	CHECK(bip_tnrecv(0, &v, 1) == -1, "tnrecv");
	expect_error("bip_tnrecv", "before bip_init");
	CHECK(bip_tnrecvx(0, &v, 1, &node) == -1, "tnrecvx");
	expect_error("bip_tnrecvx", "before bip_init");
	CHECK(bip_nrecv(&v, 1) == -1, "nrecv");
	expect_error("bip_nrecv", "before bip_init");
	CHECK(bip_nrecvx(&v, 1, &node) == -1, "nrecvx");
	expect_error("bip_nrecvx", "before bip_init");
	CHECK(bip_rwaitx(1, &node) == -1, "rwaitx");
	expect_error("bip_rwaitx", "before bip_init");
	CHECK(bip_rtest(1) == -1, "rtest");
	expect_error("bip_rtest", "before bip_init");
	CHECK(bip_rtestx(1, &node) == -1, "rtestx");
	expect_error("bip_rtestx", "before bip_init");
	CHECK(bip_probe() == -1, "probe");
	expect_error("bip_probe", "before bip_init");
	CHECK(bip_tngetmsg(0, &len, &node) == NULL, "tngetmsg");
	expect_error("bip_tngetmsg", "before bip_init");
	CHECK(bip_getmsg(&len, &node) == NULL, "getmsg");
	expect_error("bip_getmsg", "before bip_init");
	CHECK(bip_ngetmsg(&len, &node) == NULL, "ngetmsg");
	expect_error("bip_ngetmsg", "before bip_init");
	bip_swait(1);
	expect_error("bip_swait", "before bip_init");
	bip_tfreemsg(0);
	expect_error("bip_tfreemsg", "before bip_init");
	bip_freemsg();
	expect_error("bip_freemsg", "before bip_init");

	/* bip_taginit is the one call made before bip_init. */
	CHECK(bip_taginit(10, 3, 2) == 0, "taginit before bip_init");
	CHECK(bip_taginit(10, 3, 2) == -1, "taginit of a tag twice");
	expect_error("bip_taginit", "10");
}

static void sender_misuse(void)
{
	struct bip_counters c;
	int v = 5, big[100], i;

	CHECK(bip_tisend(-1, 0, &v, 1) == -1, "negative node");
	expect_error("bip_tisend", "-1");
	CHECK(bip_tsend(bip_numnodes, 0, &v, 1) == -1, "node out of range");
	expect_error("bip_tsend", "out of range");
	CHECK(bip_send(bip_mynode, &v, 1) == -1, "send to self");
	expect_error("bip_send", "yourself");
	CHECK(bip_isend(1, &v, -1) == -1, "negative length");
	expect_error("bip_isend", "negative");
	CHECK(bip_tisend(1, NTAGS, &v, 1) == -1, "tag too large");
	expect_error("bip_tisend", "tag 200");
	CHECK(bip_tisend(1, -3, &v, 1) == -1, "negative tag");
	expect_error("bip_tisend", "tag -3");
	CHECK(bip_tisend(1, 0, NULL, 1) == -1, "NULL buffer");
	expect_error("bip_tisend", "NULL");
	CHECK(bip_stest(-5) == -1, "bad send id");
	expect_error("bip_stest", "-5");
	bip_swait(7);
	expect_error("bip_swait", "7");
	bip_swait(-1);
	expect_error("bip_swait", "-1");
	bip_swait(5);
	expect_error("bip_swait", "5");
	CHECK(bip_stest(-1) == -1, "stest on -1");
	expect_error("bip_stest", "-1");
	CHECK(bip_tsend(1, 2, NULL, 0) == 0, "NULL buffer of length 0 is valid");
	CHECK(bip_isend(-2, &v, 1) == -1, "isend to a negative node");
	expect_error("bip_isend", "-2");
	CHECK(bip_send(1, &v, -4) == -1, "send of negative length");
	expect_error("bip_send", "-4");
	CHECK(bip_tsend(1, -1, big, 100) == -1, "long send on a bad tag");
	expect_error("bip_tsend", "tag -1");
	CHECK(bip_tisend(1, 5, NULL, 100) == -1, "long send from NULL");
	expect_error("bip_tisend", "NULL");

	/* Nothing was lost: the traffic of the test still works. */
	v = 11;
	CHECK(bip_send(1, &v, 1) == 0, "send");
	for (i = 0; i < 100; i++)
		big[i] = 3 * i + 1;
	CHECK(bip_tsend(1, 3, big, 3) == 0, "too long for the receiver's buffer");
	CHECK(bip_tsend(1, 4, big, 100) == 0, "long, too long for the receiver's buffer");
	CHECK(bip_tsend(1, 10, big, 2) == 0, "on the tag of bip_taginit");
	CHECK(bip_recv(&v, 1) == 1 && v == 12, "answer");
	bip_get_counters(&c);
	CHECK(c.short_sent == 4 && c.long_sent == 1, "sent %llu short, %llu long",
	      (unsigned long long)c.short_sent, (unsigned long long)c.long_sent);
}

static void receiver_misuse(void)
{
	struct bip_counters c;
	int v = 0, w = 0, id, small[2], big[100], len, node, i, n;

	CHECK(bip_tirecv(NTAGS, &v, 1) == -1, "bad tag");
	expect_error("bip_tirecv", "tag 200");
	CHECK(bip_irecv(&v, -1) == -1, "negative maxlength");
	expect_error("bip_irecv", "negative");
	CHECK(bip_tirecv(1, NULL, 1) == -1, "NULL buffer");
	expect_error("bip_tirecv", "NULL");
	CHECK(bip_rwait(-1) == -1, "rwait on -1");
	expect_error("bip_rwait", "invalid receive id");
	CHECK(bip_rtestx(12345, &node) == -1, "rtestx on a bad id");
	expect_error("bip_rtestx", "invalid receive id");
	CHECK(bip_rwaitx(-1, &node) == -1, "rwaitx on -1");
	expect_error("bip_rwaitx", "invalid receive id");
	CHECK(bip_rtest(-1) == -1, "rtest on -1");
	expect_error("bip_rtest", "invalid receive id");
	CHECK(bip_rtest(7) == -1, "rtest on an id never returned");
	expect_error("bip_rtest", "invalid receive id");
	bip_tfreemsg(2);
	expect_error("bip_tfreemsg", "no message");
	bip_freemsg();
	expect_error("bip_freemsg", "no message");
	CHECK(bip_tprobe(NTAGS) == -1, "probe of a bad tag");
	expect_error("bip_tprobe", "tag 200");
	CHECK(bip_tngetmsg(-1, &len, &node) == NULL, "ngetmsg of a bad tag");
	expect_error("bip_tngetmsg", "tag -1");
	id = bip_tirecv(2, NULL, 0);
	CHECK(id >= 0, "NULL buffer of maxlength 0 is valid");
	CHECK(bip_tirecv(2, &v, 1) == -1, "the receive above is still posted");
	expect_error("bip_tirecv", "already posted");
	CHECK(bip_tnrecv(2, &v, 1) == -1, "nrecv on a tag with a receive posted");
	expect_error("bip_tnrecv", "posted");
	node = -1;
	CHECK(bip_rwaitx(id, &node) == 0 && node == 0, "zero-length message from node 0");
	CHECK(bip_tnrecv(-1, &v, 1) == -1, "bad tag");
	expect_error("bip_tnrecv", "tag -1");

	/* A second receive on a busy tag. */
	id = bip_tirecv(0, &v, 1);
	CHECK(id >= 0, "irecv");
	CHECK(bip_tirecv(0, &w, 1) == -1, "second receive on tag 0");
	expect_error("bip_tirecv", "already posted");
	CHECK(bip_tgetmsg(0, &len, &node) == NULL, "getmsg on a busy tag");
	expect_error("bip_tgetmsg", "posted");
	CHECK(bip_rwait(id) == 1 && v == 11, "the first receive still works: %d", v);
	CHECK(bip_rwait(id) == -1, "an id already waited for");
	expect_error("bip_rwait", "invalid receive id");

	/* A short message longer than the buffer fails the receive and stays queued. */
	CHECK(bip_trecv(3, small, 2) == -1, "too long");
	expect_error("bip_trecv", "3 words from node 0 on tag 3");
	CHECK(bip_tnrecv(3, small, 2) == -1, "nrecv too long");
	expect_error("bip_tnrecv", "longer than the receive buffer");
	CHECK(bip_tprobe(3) == 3, "still queued");
	CHECK(bip_trecv(3, big, 100) == 3, "received with a larger buffer");

	for (i = 0; i < 3; i++)
		CHECK(big[i] == 3 * i + 1, "word %d of the short message is %d", i, big[i]);

	/* A long message likewise, and a failed test or wait is the end of the receive. */
	id = bip_tirecv(4, big, 99);
	while ((n = bip_rtestx(id, &node)) == -1 && !strstr(bip_error_string(), "tag 4"))
		;
	CHECK(n == -1, "long too long");
	expect_error("bip_rtestx", "100 words from node 0 on tag 4");
	CHECK(bip_rwait(id) == -1, "the failed receive is over");
	expect_error("bip_rwait", "invalid receive id");
	CHECK(bip_tnrecv(4, big, 100) == -1, "nrecv takes no long message");
	CHECK(bip_trecvx(4, big, 50, &node) == -1, "still too long");
	expect_error("bip_trecvx", "longer than the receive buffer");
	memset(big, 0, sizeof(big));
	CHECK(bip_trecvx(4, big, 100, &node) == 100 && node == 0,
	      "long received with a large enough buffer");
	for (i = 0; i < 100; i++)
		CHECK(big[i] == 3 * i + 1, "word %d of the long message is %d", i, big[i]);

	/* The tag of bip_taginit before bip_init works. */
	CHECK(bip_trecv(10, big, 2) == 2 && big[0] == 1 && big[1] == 4, "tag 10");
	bip_get_counters(&c);
	CHECK(c.short_received == 4 && c.long_received == 1, "received %llu short, %llu long",
	      (unsigned long long)c.short_received, (unsigned long long)c.long_received);

	v = 12;
	CHECK(bip_send(0, &v, 1) == 0, "answer");
}

int main(void)
{
	struct bip_counters c;

	before_init();
	bip_init();
	CHECK(bip_numnodes == 2, "run on 2 nodes");
	CHECK(bip_taginit(1, 1, 1) == -1, "taginit after bip_init");
	errors_before = 0; /* counters start at bip_init */
	expect_error("bip_taginit", "after bip_init");
	if (bip_mynode == 0)
		sender_misuse();
	else
		receiver_misuse();
	bip_get_counters(&c);
	/* For the wrapper script: one line on stderr per error counted. */
	printf("node %d errors %llu\n", bip_mynode, (unsigned long long)c.errors);
	fflush(stdout);
	CHECK(bip_finalize() == 0, "finalize");
	return 0;
}
