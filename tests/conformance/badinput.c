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
}

static void sender_misuse(void)
{
	int v = 5, big[100];

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

	/* Nothing was lost: the traffic of the test still works. */
	v = 11;
	CHECK(bip_send(1, &v, 1) == 0, "send");
	CHECK(bip_tsend(1, 3, big, 3) == 0, "too long for the receiver's buffer");
	CHECK(bip_tsend(1, 4, big, 100) == 0, "long, too long for the receiver's buffer");
	CHECK(bip_recv(&v, 1) == 1 && v == 12, "answer");
}

static void receiver_misuse(void)
{
	int v = 0, w = 0, id, small[2], big[100], len, node;

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
	bip_tfreemsg(2);
	expect_error("bip_tfreemsg", "no message");
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

	/* A long message likewise. */
	id = bip_tirecv(4, big, 99);
	CHECK(bip_rwait(id) == -1, "long too long");
	expect_error("bip_rwait", "100 words from node 0 on tag 4");
	CHECK(bip_trecv(4, big, 100) == 100, "long received with a large enough buffer");

	v = 12;
	CHECK(bip_send(0, &v, 1) == 0, "answer");
}

int main(void)
{
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
	CHECK(bip_finalize() == 0, "finalize");
	return 0;
}
