/* SPDX-License-Identifier: MIT */
/*
 * fwdcheck - messages between clusters, through the relays of the gateway
 * hosts (forward.sh runs it on configurations with clusters).
 *
 *   fwdcheck long [PEER] node 0 and every other node (or PEER only)
 *                        exchange messages of every size class up to
 *                        64 MiB, each word checked
 *   fwdcheck kill FILE [FILE2]
 *                        node 0 and node 1 exchange 1 MiB messages; after
 *                        the fifth round node 0 prints "ready" and waits
 *                        for FILE (the test kills a relay meanwhile), then
 *                        they go on for 20 more rounds; the other nodes
 *                        wait for FILE and end.  With FILE2, node 0 also
 *                        prints "paused" after the fifteenth round and
 *                        waits for FILE2 outside BIP (the test watches
 *                        the others idle with a path retired).  Exits 3
 *                        with the error printed when a round fails.
 *   fwdcheck early FILE  every node above 1 sends node 0 one message, gets
 *                        its answer and ends; node 0 answers them all,
 *                        prints "ready", waits for FILE outside BIP (the
 *                        test watches the relays meanwhile), then sends
 *                        node 1 one message.  Each node above 1 prints,
 *                        after bip_finalize, how many acknowledgements it
 *                        sent on their own (bip_counters's acks_sent):
 *                        what its wait for node 0's last word cost.
 */
#include <bip.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what, long a, long b)
{
	printf("node %d: FAILED: %s (%ld, %ld): %s\n", bip_mynode, what, a, b,
	       bip_error_string());
	fflush(stdout);
	exit(1);
}

static uint32_t word(long i, int seed)
{
	return (uint32_t)(i * 2654435761u) ^ (uint32_t)seed * 40503u;
}

static void fill(int *buf, long n, int seed)
{
	long i;

	for (i = 0; i < n; i++)
		buf[i] = (int)word(i, seed);
}

static void check(const int *buf, long n, int seed)
{
	long i;

	for (i = 0; i < n; i++)
		if ((uint32_t)buf[i] != word(i, seed))
			fail("word differs", i, n);
}

/* Every size class: short, the layer's header and long paths, one
 * fragment, several, and 64 MiB; node 0 with each other node in turn. */
static void t_long(int only)
{
	static const long sizes[] = { 1, 47, 64, 1000, 16384 + 3, 65536, 262144 + 5,
				      16L << 20 };
	long maxw = 16L << 20, n;
	int *buf = malloc((size_t)maxw * 4), peer, s, node;

	if (!buf)
		fail("out of memory", 0, 0);
	for (peer = 1; peer < bip_numnodes; peer++) {
		if (only > 0 && peer != only)
			continue;
		for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
			long len = sizes[s];
			int seed = peer * 100 + s;

			if (bip_mynode == 0) {
				fill(buf, len, seed);
				if (bip_tsend(peer, 3, buf, (int)len) != 0)
					fail("send", peer, len);
				memset(buf, 0, (size_t)len * 4);
				n = bip_trecvx(3, buf, (int)maxw, &node);
				if (n != len || node != peer)
					fail("reply", n, node);
				check(buf, len, seed + 1);
			} else if (bip_mynode == peer) {
				n = bip_trecvx(3, buf, (int)maxw, &node);
				if (n != len || node != 0)
					fail("receive", n, node);
				check(buf, len, seed);
				fill(buf, len, seed + 1);
				if (bip_tsend(0, 3, buf, (int)len) != 0)
					fail("send back", 0, len);
			}
		}
	}
	free(buf);
	printf("node %d: long: done\n", bip_mynode);
}

static void wait_file(const char *file)
{
	while (access(file, F_OK) != 0)
		usleep(10000);
}

static void t_kill(const char *file, const char *file2)
{
	long len = 262144, n;
	int *buf, r, node;

	if (bip_mynode > 1) {
		/* The others wait too, outside BIP, so that every node is
		 * there during the pause (the idle tests). */
		wait_file(file2 ? file2 : file);
		return;
	}
	buf = malloc((size_t)len * 4);
	if (!buf)
		fail("out of memory", 0, 0);
	for (r = 0; r < 25; r++) {
		if (bip_mynode == 0) {
			if (r == 5) {
				printf("node 0 ready\n");
				fflush(stdout);
				wait_file(file);
			}
			if (r == 15 && file2) {
				printf("node 0 paused\n");
				fflush(stdout);
				wait_file(file2);
			}
			fill(buf, len, r);
			if (bip_tsend(1, 4, buf, (int)len) != 0)
				fail("send", r, len);
			n = bip_trecvx(4, buf, (int)len, &node);
			if (n != len) {
				printf("node 0: round %d: %s\n", r, bip_error_string());
				fflush(stdout);
				exit(3);
			}
			check(buf, len, r + 1000);
		} else {
			n = bip_trecvx(4, buf, (int)len, &node);
			if (n != len) {
				printf("node 1: round %d: %s\n", r, bip_error_string());
				fflush(stdout);
				exit(3);
			}
			check(buf, len, r);
			fill(buf, len, r + 1000);
			if (bip_tsend(0, 4, buf, (int)len) != 0)
				fail("send back", r, len);
		}
	}
	free(buf);
	printf("node %d: kill: 25 rounds done\n", bip_mynode);
}

/* Nodes that end while others run: the relays that carried their
 * messages go on without them (and without trying to reach them). */
static void t_early(const char *file)
{
	int v = bip_mynode, i, node;

	if (bip_mynode > 1) {
		/* The answer acknowledges the message: nothing keeps this
		 * node past its end while node 0 pauses. */
		if (bip_tsend(0, 1, &v, 1) != 0 || bip_trecv(3, &v, 1) != 1 || v != -bip_mynode)
			fail("send and answer", 0, v);
		return;
	}
	if (bip_mynode == 0) {
		for (i = 2; i < bip_numnodes; i++) {
			if (bip_trecvx(1, &v, 1, &node) != 1 || v != node)
				fail("receive", i, v);
			v = -node;
			if (bip_tsend(node, 3, &v, 1) != 0)
				fail("answer", node, 0);
		}
		printf("node 0 ready\n");
		fflush(stdout);
		while (access(file, F_OK) != 0)
			usleep(10000);
		v = 7;
		if (bip_tsend(1, 2, &v, 1) != 0)
			fail("send to node 1", 0, 0);
	} else if (bip_trecv(2, &v, 1) != 1 || v != 7) {
		fail("receive from node 0", 0, v);
	}
	printf("node %d: early: done\n", bip_mynode);
}

int main(int argc, char **argv)
{
	int kill = argc > 1 && !strcmp(argv[1], "kill");
	int file = kill || (argc > 1 && !strcmp(argv[1], "early")), node;

	if (argc < 2 || (strcmp(argv[1], "long") && !file) || (file && argc < 3) ||
	    argc > 3 + kill) {
		fprintf(stderr, "usage: fwdcheck long [PEER] | kill FILE [FILE2] | early FILE\n");
		return 2;
	}
	bip_init();
	if (!strcmp(argv[1], "long"))
		t_long(argc == 3 ? atoi(argv[2]) : 0);
	else if (!strcmp(argv[1], "kill"))
		t_kill(argv[2], argc > 3 ? argv[3] : NULL);
	else
		t_early(argv[2]);
	node = bip_mynode;
	bip_finalize();
	if (!strcmp(argv[1], "early") && node > 1) {
		struct bip_counters c;

		bip_get_counters(&c);
		printf("node %d: acknowledgements sent on their own: %llu\n", node,
		       (unsigned long long)c.acks_sent);
	}
	return 0;
}
