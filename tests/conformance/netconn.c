/* SPDX-License-Identifier: MIT */
/*
 * netconn - what the network drivers connect, checked through the API:
 * `bipload -sz N netconn MODE [ARG]`.
 *
 *   ring [MAX]      a ring exchange (each node sends to the next and hears
 *                   from the previous, short and long messages), then each
 *                   process counts its own sockets (/proc/self/fd) and
 *                   prints the count; with MAX, fails naming the count when
 *                   it is above MAX.  A driver that connects on first use
 *                   holds connections to two peers, not to every one.  The
 *                   line also gives the process's resident memory
 *                   (bench/ofi_sockets.sh).  BIP_NETCONN_SHORT=1: short
 *                   messages only, in both.
 *   alltoall [MAX]  the same after every node has exchanged with every other.
 *   forged          each process first sends forged requests to its own
 *                   side channel listener (the TCP listener on every
 *                   address: garbage, a short request, other versions,
 *                   jobs, kinds and nodes), then the ring runs; the driver
 *                   drops them (netconn_forged.sh checks that it says so).
 *   crossing        node 0 starts rounds; in each, the other nodes meet in
 *                   pairs that have never exchanged before (a round-robin
 *                   schedule, every pair once) and both nodes of a pair
 *                   send to each other at the same moment (short, eager-
 *                   sized and rendezvous-sized messages), each the first
 *                   message of that pair: the connections cross.  Every
 *                   word is checked.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bip.h"
#include "check.h"

#define TAG_RING 1
#define TAG_READY 2
#define TAG_GO 3
#define TAG_CROSS 10 /* and the next CROSS_MSGS - 1 */
#define TAG_ALLTOALL 20 /* and the next bip_numnodes - 1 */
#define TAG_SYNC 4

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

/* The sockets this process holds. */
static int count_sockets(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL, "cannot open /proc/self/fd");
	while ((e = readdir(d))) {
		char path[300], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strncmp(target, "socket:", 7);
	}
	closedir(d);
	return n;
}

/* This process's resident memory in KiB (VmRSS), or -1. */
static long resident_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/*
 * A token twice round the ring (its links only): after the first lap
 * every process has counted, after the second every one knows it, so that
 * no process closes (and takes its connections away from the others'
 * counts) before all have counted.
 */
static void ring_sync(void)
{
	int next = (bip_mynode + 1) % bip_numnodes;
	int lap, v = 0;

	for (lap = 0; lap < 2; lap++) {
		if (bip_mynode == 0) {
			CHECK(bip_tsend(next, TAG_SYNC, &lap, 1) == 0, "sync");
			CHECK(bip_trecv(TAG_SYNC, &v, 1) == 1 && v == lap, "sync %d", v);
		} else {
			CHECK(bip_trecv(TAG_SYNC, &v, 1) == 1 && v == lap, "sync %d", v);
			CHECK(bip_tsend(next, TAG_SYNC, &lap, 1) == 0, "sync");
		}
	}
}

static void report_sockets(const char *what, int max)
{
	int n = count_sockets();

	printf("node %d: %d sockets after the %s on %d nodes; resident %ld KiB\n", bip_mynode, n,
	       what, bip_numnodes, resident_kib());
	fflush(stdout);
	if (max >= 0)
		CHECK(n <= max, "%d sockets after the %s on %d nodes, more than %d", n, what,
		      bip_numnodes, max);
	ring_sync();
}

/* Send to dst and receive from src at once on tag: len words, message seq. */
static void exchange(int tag, int dst, int src, int len, int seq)
{
	int *out = malloc((size_t)len * 4 + 4), *in = malloc((size_t)len * 4 + 4);
	int rid, sid, n, node;

	CHECK(out && in, "out of memory");
	fill(out, len, bip_mynode, seq);
	rid = bip_tirecv(tag, in, len);
	CHECK(rid >= 0, "receive: %s", bip_error_string());
	sid = bip_tisend(dst, tag, out, len);
	CHECK(sid >= 0, "send to node %d: %s", dst, bip_error_string());
	n = bip_rwaitx(rid, &node);
	CHECK(n == len && node == src, "got %d words from node %d, not %d from node %d", n, node,
	      len, src);
	check_data(in, len, src, seq);
	bip_swait(sid);
	free(out);
	free(in);
}

/* BIP_NETCONN_SHORT=1: short messages only (bench/ofi_sockets.sh). */
static int short_only(void)
{
	const char *s = getenv("BIP_NETCONN_SHORT");

	return s && !strcmp(s, "1");
}

static void t_ring(int max)
{
	int next = (bip_mynode + 1) % bip_numnodes;
	int prev = (bip_mynode + bip_numnodes - 1) % bip_numnodes;

	exchange(TAG_RING, next, prev, 4, 0);
	exchange(TAG_RING, next, prev, BIPSMALLSIZE, 1);
	if (!short_only()) {
		exchange(TAG_RING, next, prev, 3000, 2);   /* long, eager over ofi */
		exchange(TAG_RING, next, prev, 100000, 3); /* long, rendezvous */
	}
	report_sockets("ring", max);
}

static void t_alltoall(int max)
{
	int k;

	/* A tag per step: a later step's message may come first. */
	CHECK(bip_numnodes <= NTAGS - TAG_ALLTOALL, "alltoall needs a tag per node");
	for (k = 1; k < bip_numnodes; k++) {
		int dst = (bip_mynode + k) % bip_numnodes;
		int src = (bip_mynode + bip_numnodes - k) % bip_numnodes;

		exchange(TAG_ALLTOALL + k, dst, src, 16, k);
		if (short_only())
			continue;
		exchange(TAG_ALLTOALL + k, dst, src, 4000, k);  /* eager over ofi */
		exchange(TAG_ALLTOALL + k, dst, src, 20000, k); /* rendezvous */
	}
	report_sockets("all-to-all", max);
}

/* The port of this process's TCP listener on every address (the ofi
 * driver's liveness listener), or 0: /proc/self/net/tcp's listening
 * sockets of 0.0.0.0 whose inode is one of this process's descriptors. */
static int own_any_listener(void)
{
	FILE *f = fopen("/proc/self/net/tcp", "r");
	char line[512], want[64];
	unsigned port, state;
	unsigned long inode;
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		DIR *d;
		struct dirent *e;

		if (sscanf(line, " %*d: 00000000:%x %*s %x %*s %*s %*s %*s %*s %lu", &port, &state,
			   &inode) != 3 || state != 0x0a)
			continue;
		snprintf(want, sizeof(want), "socket:[%lu]", inode);
		d = opendir("/proc/self/fd");
		while (d && !found && (e = readdir(d))) {
			char path[300], target[64];
			ssize_t len;

			snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
			len = readlink(path, target, sizeof(target) - 1);
			if (len > 0) {
				target[len] = '\0';
				found = !strcmp(target, want) ? (int)port : 0;
			}
		}
		if (d)
			closedir(d);
	}
	if (f)
		fclose(f);
	return found;
}

static void send_raw(int port, const void *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(fd >= 0, "socket");
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect to port %d", port);
	if (len)
		CHECK(send(fd, buf, len, 0) == (ssize_t)len, "send to port %d", port);
	close(fd);
}

/* The side channel's request (lib/bip/drivers/ofi/ofi.h), in network order. */
struct forged_req {
	uint32_t version, kind, src, dst;
	uint64_t job;
};

/* The job's key in the requests: FNV-1a of the job id (BIP_JOBID, which
 * bipload sets), or 0 when unknown. */
static uint64_t job_key(void)
{
	const char *c = getenv("BIP_JOBID");
	uint64_t h = 1469598103934665603ull;

	if (!c)
		return 0;
	for (; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h;
}

static void t_forged(void)
{
	static const char junk[] = "GET / HTTP/1.0\r\n\r\n";
	struct forged_req r;
	int port = own_any_listener();

	CHECK(port > 0, "no TCP listener of this process on every address (BIP_NIC=ofi over "
	      "tcp has one)");
	send_raw(port, junk, sizeof(junk) - 1);
	send_raw(port, NULL, 0);                  /* a liveness check: not an error */
	send_raw(port, junk, 7);                  /* short */
	r = (struct forged_req){ htonl(99), htonl(1), htonl(0), htonl((uint32_t)bip_mynode), 0 };
	send_raw(port, &r, sizeof(r));            /* another version */
	r.version = htonl(1);
	r.job = job_key() + 1;
	send_raw(port, &r, sizeof(r));            /* another job */
	r.job = job_key();
	r.dst = htonl((uint32_t)bip_mynode + 1);
	send_raw(port, &r, sizeof(r));            /* to another node */
	r.dst = htonl((uint32_t)bip_mynode);
	r.src = htonl(1000000);
	send_raw(port, &r, sizeof(r));            /* no such node */
	r.src = htonl((uint32_t)bip_mynode);
	r.kind = htonl(2);
	send_raw(port, &r, sizeof(r));            /* from itself */
	r.kind = htonl(77);
	send_raw(port, &r, sizeof(r));            /* no such kind */
	t_ring(-1);
}

/* The partner of participant i (0 .. m - 1, m even) in round r of a
 * round-robin schedule (the circle method): every pair meets once in m - 1
 * rounds. */
static int partner(int i, int r, int m)
{
	if (i == m - 1)
		return r;
	if (i == r)
		return m - 1;
	return ((2 * r - i) % (m - 1) + (m - 1)) % (m - 1);
}

#define CROSS_MSGS 5
static const int cross_len[CROSS_MSGS] = { 1, BIPSMALLSIZE, 2000, 70000, 3 };

static void cross_round(int peer, int seq)
{
	int *in[CROSS_MSGS], *out[CROSS_MSGS], rid[CROSS_MSGS], sid[CROSS_MSGS];
	int k, n, node;

	for (k = 0; k < CROSS_MSGS; k++) {
		in[k] = calloc((size_t)cross_len[k], 4);
		out[k] = malloc((size_t)cross_len[k] * 4);
		CHECK(in[k] && out[k], "out of memory");
		fill(out[k], cross_len[k], bip_mynode, seq * CROSS_MSGS + k);
		rid[k] = bip_tirecv(TAG_CROSS + k, in[k], cross_len[k]);
		CHECK(rid[k] >= 0, "receive: %s", bip_error_string());
	}
	for (k = 0; k < CROSS_MSGS; k++) {
		sid[k] = bip_tisend(peer, TAG_CROSS + k, out[k], cross_len[k]);
		CHECK(sid[k] >= 0, "send to node %d: %s", peer, bip_error_string());
	}
	for (k = 0; k < CROSS_MSGS; k++) {
		n = bip_rwaitx(rid[k], &node);
		CHECK(n == cross_len[k] && node == peer, "message %d: got %d words from node %d, "
		      "not %d from node %d", k, n, node, cross_len[k], peer);
		check_data(in[k], cross_len[k], peer, seq * CROSS_MSGS + k);
	}
	for (k = 0; k < CROSS_MSGS; k++) {
		bip_swait(sid[k]);
		free(in[k]);
		free(out[k]);
	}
}

static void t_crossing(void)
{
	int parts = bip_numnodes - 1, m = parts + (parts & 1), r, v = 0, i, node, p;

	CHECK(bip_numnodes >= 3, "crossing needs 3 nodes at least");
	for (r = 0; r < m - 1; r++) {
		if (bip_mynode == 0) {
			/* Everyone ready, then everyone goes at once. */
			for (i = 1; i < bip_numnodes; i++)
				CHECK(bip_trecvx(TAG_READY, &v, 1, &node) == 1 && v == r,
				      "round %d: ready %d from node %d", r, v, node);
			for (i = 1; i < bip_numnodes; i++)
				CHECK(bip_tsend(i, TAG_GO, &r, 1) == 0, "go to node %d", i);
			continue;
		}
		p = partner(bip_mynode - 1, r, m);
		CHECK(bip_tsend(0, TAG_READY, &r, 1) == 0, "ready: %s", bip_error_string());
		CHECK(bip_trecv(TAG_GO, &v, 1) == 1 && v == r, "go %d in round %d", v, r);
		if (p < parts)
			cross_round(p + 1, r);
	}
	if (bip_mynode == 0) {
		printf("crossing: %d pairs met for the first time, each sending first\n",
		       parts * (parts - 1) / 2);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	int max = -1;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: netconn ring|alltoall [MAX] | netconn crossing|forged\n");
		return 2;
	}
	if (argc == 3) {
		char *end;

		max = (int)strtol(argv[2], &end, 10);
		if (*end || max < 0) {
			fprintf(stderr, "netconn: MAX must be a number of sockets, not %s\n",
				argv[2]);
			return 2;
		}
	}
	if (strcmp(argv[1], "ring") && strcmp(argv[1], "alltoall") &&
	    strcmp(argv[1], "crossing") && strcmp(argv[1], "forged")) {
		fprintf(stderr, "netconn: no mode %s\n", argv[1]);
		return 2;
	}
	bip_init();
	if (!strcmp(argv[1], "ring"))
		t_ring(max);
	else if (!strcmp(argv[1], "alltoall"))
		t_alltoall(max);
	else if (!strcmp(argv[1], "forged"))
		t_forged();
	else
		t_crossing();
	bip_finalize();
	return 0;
}
