/* SPDX-License-Identifier: MIT */
/*
 * shm_overlap.c - a long message while its sender computes.
 *
 *   bipload -sz 2 ./shm_overlap [-S BYTES] [-c MS] [-r RUNS]
 *
 * Node 1 posts a receive of BYTES (default 64 MiB) with bip_tirecv and says
 * so with a one-word message; node 0 then starts the send with bip_tisend
 * and computes for MS milliseconds (default 100) without calling BIP, and
 * only then waits for the send.  Node 1 waits for its receive, notes the
 * time, checks every word and sends the time back.  Node 0 prints, per run
 * and as the median of RUNS runs (default 5), in milliseconds from the
 * start of the send: when node 1 had the message, and when the send
 * completed on node 0.  Both processes read CLOCK_MONOTONIC, one clock for
 * the whole host.
 *
 * With the pipelined copy the sender fills the pipe only when it calls
 * BIP, so the receiver finishes after the computation; with the single
 * copy (BIP_SHM_CMA_MIN at most BYTES) the receiver reads the sender's
 * buffer alone and finishes while the sender still computes.  Nothing is
 * asserted: it prints numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bip.h>

#define TAG_READY 0
#define TAG_DATA 1
#define TAG_TIME 2
#define MAX_RUNS 99

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void fail(const char *call)
{
	fprintf(stderr, "shm_overlap: node %d: %s failed: %s\n", bip_mynode, call,
		bip_error_string());
	exit(1);
}

static uint32_t word(size_t i, int run)
{
	return (uint32_t)(i * 2654435761u) ^ (uint32_t)run;
}

/* Busy for ms milliseconds, touching only local data. */
static void compute(double ms)
{
	double end = now_ms() + ms;
	volatile uint64_t x = 1;

	while (now_ms() < end) {
		int i;

		for (i = 0; i < 1000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void sender(uint32_t *buf, int words, double ms, int runs)
{
	double recv_at[MAX_RUNS], sent_at[MAX_RUNS];
	int r;

	printf("# %d bytes, sender computes %.0f ms; ms from the start of the send\n",
	       words * 4, ms);
	printf("# run   received_on_node1   send_done_on_node0\n");
	for (r = 0; r < runs; r++) {
		size_t i;
		int ready, id;
		double t0, t1[2];

		for (i = 0; i < (size_t)words; i++)
			buf[i] = word(i, r);
		if (bip_trecv(TAG_READY, &ready, 1) < 0)
			fail("bip_trecv");
		t0 = now_ms();
		id = bip_tisend(1, TAG_DATA, (int *)buf, words);
		if (id < 0)
			fail("bip_tisend");
		compute(ms);
		bip_swait(id);
		sent_at[r] = now_ms() - t0;
		if (bip_trecv(TAG_TIME, (int *)t1, 4) != 4)
			fail("bip_trecv");
		recv_at[r] = t1[0] - t0;
		printf("%5d %19.2f %20.2f\n", r, recv_at[r], sent_at[r]);
	}
	printf("median %18.2f %20.2f\n", median(recv_at, runs), median(sent_at, runs));
}

static void receiver(uint32_t *buf, int words, int runs)
{
	int r;

	for (r = 0; r < runs; r++) {
		int ready = 1, id, got;
		double t1[2] = { 0, 0 };
		size_t i;

		memset(buf, 0, (size_t)words * 4);
		id = bip_tirecv(TAG_DATA, (int *)buf, words);
		if (id < 0)
			fail("bip_tirecv");
		if (bip_tsend(0, TAG_READY, &ready, 1) < 0)
			fail("bip_tsend");
		got = bip_rwait(id);
		t1[0] = now_ms();
		if (got != words) {
			fprintf(stderr, "shm_overlap: node 1: %d words received, expected %d\n", got,
				words);
			exit(1);
		}
		for (i = 0; i < (size_t)words; i++)
			if (buf[i] != word(i, r)) {
				fprintf(stderr, "shm_overlap: node 1: run %d: word %zu is 0x%08x, "
					"expected 0x%08x\n", r, i, buf[i], word(i, r));
				exit(1);
			}
		if (bip_tsend(0, TAG_TIME, (int *)t1, 4) < 0)
			fail("bip_tsend");
	}
}

int main(int argc, char **argv)
{
	size_t bytes = 64 << 20;
	double ms = 100;
	int runs = 5, i;
	uint32_t *buf;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-S") && i + 1 < argc)
			bytes = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			goto usage;
	}
	if (bytes < 4 || bytes % 4 || bytes > (size_t)1 << 30 || runs < 1 || runs > MAX_RUNS ||
	    ms < 0)
		goto usage;
	bip_init();
	if (bip_numnodes < 2) {
		fprintf(stderr, "shm_overlap: needs 2 nodes (bipload -sz 2)\n");
		return 2;
	}
	buf = malloc(bytes);
	if (!buf) {
		fprintf(stderr, "shm_overlap: node %d: cannot allocate %zu bytes\n", bip_mynode,
			bytes);
		return 1;
	}
	memset(buf, 0, bytes);
	if (bip_mynode == 0)
		sender(buf, (int)(bytes / 4), ms, runs);
	else if (bip_mynode == 1)
		receiver(buf, (int)(bytes / 4), runs);
	free(buf);
	bip_finalize();
	return 0;
usage:
	fprintf(stderr, "usage: shm_overlap [-S BYTES (multiple of 4, at most 1 GiB)] [-c MS] "
			"[-r RUNS (1-%d)]\n", MAX_RUNS);
	return 2;
}
