/* SPDX-License-Identifier: MIT */
/*
 * grow.c - a BIP job that grows (bip_grow(3)), through the public calls.
 *
 *   grow grow K      node 0 starts K new nodes running "grow child"; every
 *                    node of the job exchanges a message with each of them
 *                    (shorts and a long), the new ones with each other,
 *                    and node 0 checks every sum it is sent.  With relays
 *                    (clusters), the new nodes come after them, and a send
 *                    to one fails.
 *   grow missing     starting a program that does not exist: an error per
 *                    process, nothing runs, and the job goes on.
 *   grow full        asking more than the job's room: ENOSPC.
 *   grow early       a new process that exits before bip_init: ECHILD.
 *   grow crash       a new process that joined crashes: the job ends.
 *   grow stuck       a new process that never starts BIP: ETIMEDOUT at
 *                    bipload's BIP_GROW_TIMEOUT, and it is stopped.
 *   grow alone       a job started by hand cannot grow: ENOTSUP.
 *   grow refused     a job whose driver cannot reach nodes joining later
 *                    (udp): ENOTSUP, saying so.
 *   grow hosts K H.. node 0 starts K new nodes on each host H (over ofi,
 *                    through bipload's proxies), and every node exchanges
 *                    with them as in "grow"; then a missing program on
 *                    the last host (ENOENT, nothing left running) and a
 *                    host that is not the job's (EHOSTUNREACH).
 *   grow unreachable H  node 0 starts a node on host H, a host of the job
 *                    that cannot be reached (its proxy cannot start):
 *                    EHOSTUNREACH, twice, and the job goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"

#define TAG 3
#define LONG_WORDS 100000

static int failures;

#define CHECK(c, ...)                                                       \
	do {                                                                \
		if (!(c)) {                                                 \
			fprintf(stderr, "node %d: FAIL %s:%d: ", bip_mynode, \
				__FILE__, __LINE__);                        \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			failures++;                                         \
		}                                                           \
	} while (0)

static char *self;

/* Exchange with each of the n nodes of peers: a short message each way,
 * then a long one each way, checking who sent what. */
static void exchange(const int *peers, int n)
{
	static int big[LONG_WORDS], in[LONG_WORDS];
	int seen[64] = { 0 }, ids[64], i, j, k, got[2], from, len;

	if (n > 64) {
		CHECK(0, "%d peers: at most 64", n);
		return;
	}
	for (i = 0; i < LONG_WORDS; i++)
		big[i] = bip_mynode * 1000003 + i;
	for (j = 0; j < n; j++) {
		int msg[2] = { bip_mynode, peers[j] };

		CHECK(bip_tsend(peers[j], TAG, msg, 2) == 0, "send to %d: %s", peers[j],
		      bip_error_string());
	}
	for (k = 0; k < n; k++) {
		from = -1;
		len = bip_trecvx(TAG, got, 2, &from);
		for (j = 0; j < n && peers[j] != from; j++)
			;
		CHECK(len == 2 && j < n && !seen[j] && got[0] == from && got[1] == bip_mynode,
		      "short %d: %d words from %d: %d %d", k, len, from, got[0], got[1]);
		if (j < n)
			seen[j] = 1;
	}
	for (j = 0; j < n; j++)
		ids[j] = bip_tisend(peers[j], TAG + 1, big, LONG_WORDS);
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < n; k++) {
		from = -1;
		len = bip_trecvx(TAG + 1, in, LONG_WORDS, &from);
		for (j = 0; j < n && peers[j] != from; j++)
			;
		CHECK(len == LONG_WORDS && j < n && !seen[j], "long %d: %d words from %d", k, len,
		      from);
		if (j < n)
			seen[j] = 1;
		for (i = 0; i < len; i++)
			if (in[i] != from * 1000003 + i) {
				CHECK(0, "long from %d: word %d is %d", from, i, in[i]);
				break;
			}
	}
	for (j = 0; j < n; j++)
		if (ids[j] >= 0)
			bip_swait(ids[j]);
		else
			CHECK(0, "long to %d: %s", peers[j], bip_error_string());
}

/* Exchange with the nodes from to to - 1 but this one. */
static void exchange_range(int from, int to)
{
	int peers[64], n = 0, i;

	for (i = from; i < to && n < 64; i++)
		if (i != bip_mynode)
			peers[n++] = i;
	exchange(peers, n);
}

static int child(void)
{
	int first, count, jobnodes;

	bip_init();
	bip_group(&first, &count);
	jobnodes = bip_jobnodes();
	CHECK(bip_mynode >= first && bip_mynode < first + count, "node %d, group %d:%d",
	      bip_mynode, first, count);
	CHECK(jobnodes == first + count, "bip_jobnodes %d, group %d:%d", jobnodes, first, count);
	CHECK(first >= bip_numnodes, "group %d, bip_numnodes %d", first, bip_numnodes);
	/* The job's first nodes, then my siblings (who meet the first
	 * nodes first too: the exchanges do not mix). */
	exchange_range(0, bip_numnodes);
	exchange_range(first, first + count);
	bip_finalize();
	return failures ? 1 : 0;
}

static int parent_grow(int k)
{
	char *argv[] = { self, "child", NULL };
	struct bip_grow_cmd cmd = { .count = k, .argv = argv };
	int first = -1, *codes = calloc((size_t)k, sizeof(int)), i, n, before;

	bip_init();
	if (bip_mynode == 0) {
		/* Numbered after every node the job has had: its relays too. */
		before = bip_jobnodes();
		CHECK(before >= bip_numnodes, "bip_jobnodes %d before", before);
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == k, "bip_grow: %d (%s)", n, bip_error_string());
		CHECK(first == before, "first %d, expected %d", first, before);
		for (i = 0; i < k; i++)
			CHECK(codes[i] == 0, "code %d of process %d", codes[i], i);
		CHECK(bip_jobnodes() == first + k, "bip_jobnodes %d", bip_jobnodes());
		CHECK(bip_universe() >= first + k, "bip_universe %d", bip_universe());
		/* The relays of the gateways come before the new nodes, and
		 * run no program: naming one fails, saying so. */
		if (bip_layer_relays() > 0) {
			CHECK(first == bip_numnodes + bip_layer_relays(), "first %d, %d relays", first,
			      bip_layer_relays());
			CHECK(bip_tsend(bip_numnodes, TAG, &first, 1) != 0 &&
			      strstr(bip_error_string(), "is a relay of the gateways"),
			      "a send to relay %d: %s", bip_numnodes, bip_error_string());
			printf("to a relay: %s\n", bip_error_string());
		}
		/* The others learn the numbers from node 0. */
		for (i = 1; i < bip_numnodes; i++)
			bip_tsend(i, TAG + 2, &first, 1);
	} else {
		bip_trecv(TAG + 2, &first, 1);
		/* Known once reached, by this node or by theirs. */
		CHECK(bip_jobnodes() >= bip_numnodes, "bip_jobnodes %d before", bip_jobnodes());
	}
	exchange_range(first, first + k);
	CHECK(bip_jobnodes() == first + k, "bip_jobnodes %d after", bip_jobnodes());
	printf("node %d: exchanged with the %d new nodes %d to %d\n", bip_mynode, k, first,
	       first + k - 1);
	bip_finalize();
	free(codes);
	return failures ? 1 : 0;
}

static int parent_unreachable(const char *host)
{
	char *argv[] = { self, "child", NULL };
	struct bip_grow_cmd cmd = { .count = 1, .argv = argv, .host = host };
	int first = -1, code = -1, n, i;

	bip_init();
	/* Twice: once as its proxy fails to start, once after. */
	for (i = 0; bip_mynode == 0 && i < 2; i++) {
		n = bip_grow(&cmd, 1, &first, &code);
		CHECK(n == -EHOSTUNREACH && code == EHOSTUNREACH, "grow %d on %s: %d, code %d (%s)",
		      i, host, n, code, bip_error_string());
		printf("unreachable %d: %s\n", i, bip_error_string());
	}
	CHECK(bip_jobnodes() == bip_numnodes, "bip_jobnodes %d", bip_jobnodes());
	bip_finalize();
	return failures ? 1 : 0;
}

static int parent_hosts(int k, char **hosts, int nh)
{
	char *argv[] = { self, "child", NULL };
	char *missing[] = { "bip-no-such-program", NULL };
	struct bip_grow_cmd cmds[8];
	int first = -1, codes[64], i, n;

	if (nh < 1 || nh > 8 || k < 1 || k * nh > 64)
		return 2;
	bip_init();
	if (bip_mynode == 0) {
		for (i = 0; i < nh; i++)
			cmds[i] = (struct bip_grow_cmd){ .count = k, .argv = argv, .host = hosts[i] };
		n = bip_grow(cmds, nh, &first, codes);
		CHECK(n == k * nh, "bip_grow on %d hosts: %d (%s)", nh, n, bip_error_string());
		for (i = 1; i < bip_numnodes; i++)
			bip_tsend(i, TAG + 2, &first, 1);
	} else {
		bip_trecv(TAG + 2, &first, 1);
	}
	exchange_range(first, first + k * nh);
	printf("node %d: exchanged with the %d new nodes on %d hosts\n", bip_mynode, k * nh, nh);
	if (bip_mynode == 0) {
		struct bip_grow_cmd bad = { .count = 1, .argv = missing, .host = hosts[nh - 1] };

		n = bip_grow(&bad, 1, &first, codes);
		CHECK(n == -ENOENT && codes[0] == ENOENT, "a missing program on %s: %d (%s)",
		      hosts[nh - 1], n, bip_error_string());
		printf("missing on %s: %s\n", hosts[nh - 1], bip_error_string());
		bad = (struct bip_grow_cmd){ .count = 1, .argv = argv, .host = "bip-no-such-host" };
		n = bip_grow(&bad, 1, &first, codes);
		CHECK(n == -EHOSTUNREACH && codes[0] == EHOSTUNREACH, "a host not the job's: %d", n);
		printf("other host: %s\n", bip_error_string());
	}
	bip_finalize();
	return failures ? 1 : 0;
}

static int parent_missing(void)
{
	char *argv[] = { "/nonexistent/bip-no-such-program", NULL };
	char *argv2[] = { self, "child", NULL };
	struct bip_grow_cmd cmds[2] = { { .count = 2, .argv = argv2 },
					{ .count = 1, .argv = argv } };
	int first = -1, codes[3] = { -1, -1, -1 }, n;

	bip_init();
	if (bip_mynode == 0) {
		n = bip_grow(cmds, 2, &first, codes);
		CHECK(n == -ENOENT, "bip_grow of a missing program: %d", n);
		CHECK(codes[2] == ENOENT, "its code %d", codes[2]);
		CHECK(codes[0] == 0 && codes[1] == 0, "the others' codes %d %d", codes[0],
		      codes[1]);
		CHECK(strstr(bip_error_string(), "bip-no-such-program") != NULL, "message: %s",
		      bip_error_string());
		printf("missing program: %s\n", bip_error_string());
		/* Nothing of it runs, and the job still grows. */
		n = bip_grow(cmds, 1, &first, codes);
		CHECK(n == 2, "bip_grow after the failure: %d (%s)", n, bip_error_string());
		exchange_range(first, first + 2);
	}
	bip_finalize();
	return failures ? 1 : 0;
}

static int parent_full(void)
{
	char *argv[] = { self, "child", NULL };
	struct bip_grow_cmd cmd = { .count = 1000, .argv = argv };
	int first, codes[1000], n;

	bip_init();
	if (bip_mynode == 0) {
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == -ENOSPC && codes[0] == ENOSPC && codes[999] == ENOSPC,
		      "1000 processes: %d, codes %d", n, codes[0]);
		printf("too many: %s\n", bip_error_string());
		cmd.count = 0;
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == -EINVAL, "0 processes: %d", n);
	}
	bip_finalize();
	return failures ? 1 : 0;
}

static int parent_early(void)
{
	char *argv[] = { "/bin/sh", "-c", "exit 3", NULL };
	struct bip_grow_cmd cmd = { .count = 2, .argv = argv };
	int first, codes[2], n;

	bip_init();
	if (bip_mynode == 0) {
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == -ECHILD && (codes[0] == ECHILD || codes[1] == ECHILD),
		      "a program that ends at once: %d, codes %d %d", n, codes[0], codes[1]);
		printf("ends before bip_init: %s\n", bip_error_string());
	}
	bip_finalize();
	return failures ? 1 : 0;
}

/* A new process that never starts BIP: the request ends at bipload's
 * BIP_GROW_TIMEOUT (the test sets 2 s), and the process is stopped. */
static int parent_stuck(void)
{
	char *argv[] = { "sleep", "600", NULL };
	struct bip_grow_cmd cmd = { .count = 1, .argv = argv };
	int first, codes[1], n;

	bip_init();
	if (bip_mynode == 0) {
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == -ETIMEDOUT && codes[0] == ETIMEDOUT, "a process that never joins: %d",
		      n);
		printf("never joins: %s\n", bip_error_string());
	}
	bip_finalize();
	return failures ? 1 : 0;
}

static int crash_child(void)
{
	bip_init();
	abort();
}

static int parent_crash(void)
{
	char *argv[] = { self, "crashchild", NULL };
	struct bip_grow_cmd cmd = { .count = 1, .argv = argv };
	int first, codes[1], x;

	bip_init();
	if (bip_mynode == 0 && bip_grow(&cmd, 1, &first, codes) != 1)
		return 2;
	/* Waits for ever: the crash ends the job. */
	bip_trecv(TAG, &x, 1);
	return 3;
}

/* Under a driver that cannot reach nodes joining later: refused, clearly. */
static int refused(void)
{
	char *argv[] = { self, "child", NULL };
	struct bip_grow_cmd cmd = { .count = 1, .argv = argv };
	int first, codes[1], n;

	bip_init();
	if (bip_mynode == 0) {
		n = bip_grow(&cmd, 1, &first, codes);
		CHECK(n == -ENOTSUP && codes[0] == ENOTSUP, "grow under another driver: %d", n);
		CHECK(strstr(bip_error_string(), "only shm, lanai and ofi") != NULL, "message: %s",
		      bip_error_string());
		CHECK(bip_universe() == bip_numnodes, "universe %d", bip_universe());
		printf("refused: %s\n", bip_error_string());
	}
	bip_finalize();
	return failures ? 1 : 0;
}

static int alone(void)
{
	char *argv[] = { self, "child", NULL };
	struct bip_grow_cmd cmd = { .count = 1, .argv = argv };
	int first, codes[1], n;

	bip_init();
	n = bip_grow(&cmd, 1, &first, codes);
	CHECK(n == -ENOTSUP && codes[0] == ENOTSUP, "grow by hand: %d", n);
	printf("by hand: %s\n", bip_error_string());
	CHECK(bip_universe() == bip_numnodes, "universe %d", bip_universe());
	bip_finalize();
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc >= 2 && !strcmp(argv[1], "child"))
		return child();
	if (argc >= 2 && !strcmp(argv[1], "crashchild"))
		return crash_child();
	if (argc >= 3 && !strcmp(argv[1], "grow"))
		return parent_grow(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "hosts"))
		return parent_hosts(atoi(argv[2]), argv + 3, argc - 3);
	if (argc >= 3 && !strcmp(argv[1], "unreachable"))
		return parent_unreachable(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "missing"))
		return parent_missing();
	if (argc >= 2 && !strcmp(argv[1], "full"))
		return parent_full();
	if (argc >= 2 && !strcmp(argv[1], "early"))
		return parent_early();
	if (argc >= 2 && !strcmp(argv[1], "crash"))
		return parent_crash();
	if (argc >= 2 && !strcmp(argv[1], "stuck"))
		return parent_stuck();
	if (argc >= 2 && !strcmp(argv[1], "alone"))
		return alone();
	if (argc >= 2 && !strcmp(argv[1], "refused"))
		return refused();
	fprintf(stderr, "usage: grow grow K | hosts K HOST... | unreachable HOST | missing | full | "
		"early | crash | alone | refused\n");
	return 2;
}
