/* SPDX-License-Identifier: MIT */
/*
 * gather - messages whose data the simulated board reads from the sender's
 * memory only when the datagram is delivered (bip_lanai(7), a datagram's
 * descriptor), for the tests of that path.
 *
 *   gather [MIB]
 *
 * Node 0 sends node 1 one message of each size of a list: around what a
 * send descriptor carries inline (a few hundred bytes), around the
 * reliability layer's fragments (k * 64 KiB - 1, k * 64 KiB and
 * k * 64 KiB + 1 bytes for k = 1 to 4), then one of MIB MiB (default 64),
 * and node 1 sends each back as it got it.  Every message leaves from a
 * buffer mapped for it alone, filled with a pattern of its number and
 * size, and unmapped as soon as its send completes: a datagram still on
 * the wire then (a duplicate, a retransmission) finds its data gone, and
 * must be dropped, never delivered.  The receiver fills its buffer with a
 * poison first and checks every byte of the message and that the bytes
 * after it still hold the poison.  A wrong byte ends the node with "WRONG
 * DATA" and status 3, a failed call with status 1; at the end node 0
 * prints how many messages and bytes went both ways.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bip.h"

#define TAG 5
#define POISON 0xa5
#define SLACK 64 /* bytes after the message the receiver checks */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Byte j of message i: a word of the generator, so a byte at the wrong
 * offset or from another message shows. */
static void fill(uint8_t *p, size_t len, int i)
{
	size_t j;

	for (j = 0; j < len; j += 8) {
		uint64_t w = mix((uint64_t)i << 40 ^ j);
		size_t n = len - j < 8 ? len - j : 8;

		memcpy(p + j, &w, n);
	}
}

static void check(const uint8_t *p, size_t len, long got, int i)
{
	size_t j;

	if (got != (long)len) {
		fprintf(stderr, "node %d: WRONG DATA: message %d has %ld bytes, not %zu\n",
			bip_mynode, i, got, len);
		exit(3);
	}
	for (j = 0; j < len; j += 8) {
		uint64_t w = mix((uint64_t)i << 40 ^ j);
		size_t n = len - j < 8 ? len - j : 8;

		if (memcmp(p + j, &w, n)) {
			fprintf(stderr, "node %d: WRONG DATA: message %d (%zu bytes), bytes %zu..%zu\n",
				bip_mynode, i, len, j, j + n - 1);
			exit(3);
		}
	}
	for (j = len; j < len + SLACK; j++) {
		if (p[j] != POISON) {
			fprintf(stderr, "node %d: WRONG DATA: message %d (%zu bytes) wrote byte %zu "
				"past its end\n", bip_mynode, i, len, j);
			exit(3);
		}
	}
}

static uint8_t *map(size_t len)
{
	void *p = mmap(NULL, len + SLACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("gather: mmap");
		exit(1);
	}
	return p;
}

/* Send message i of len bytes from a buffer of its own, gone once sent. */
static void send_one(int dst, size_t len, int i)
{
	uint8_t *p = map(len);
	int id;

	fill(p, len, i);
	id = bip_tisend_bytes(dst, TAG, p, len);
	if (id < 0) {
		fprintf(stderr, "node %d: gather: send of message %d (%zu bytes) failed: %s\n",
			bip_mynode, i, len, bip_error_string());
		exit(1);
	}
	bip_swait(id);
	munmap(p, len + SLACK);
}

static void recv_one(size_t len, int i)
{
	uint8_t *p = map(len);
	long got;
	int id, node = -1;

	memset(p, POISON, len + SLACK);
	id = bip_tirecv_bytes(TAG, p, len + SLACK);
	got = id < 0 ? -1 : bip_rwait_bytes(id, &node);
	if (got < 0) {
		fprintf(stderr, "node %d: gather: receive of message %d (%zu bytes) failed: %s\n",
			bip_mynode, i, len, bip_error_string());
		exit(1);
	}
	if (node != 1 - bip_mynode) {
		fprintf(stderr, "node %d: WRONG DATA: message %d came from node %d\n", bip_mynode,
			i, node);
		exit(3);
	}
	check(p, len, got, i);
	munmap(p, len + SLACK);
}

int main(int argc, char **argv)
{
	static size_t sizes[64];
	int n = 0, i, k, mib = argc > 1 ? atoi(argv[1]) : 64;
	size_t total = 0;

	if (argc > 2 || mib < 1 || mib > 1024) {
		fprintf(stderr, "usage: gather [MIB]   (1 to 1024, default 64)\n");
		return 2;
	}
	for (k = 200; k <= 520; k += 40)
		sizes[n++] = (size_t)k + (size_t)(k & 4 ? 1 : 0);
	for (k = 1; k <= 4; k++) {
		sizes[n++] = (size_t)k * 65536 - 1;
		sizes[n++] = (size_t)k * 65536;
		sizes[n++] = (size_t)k * 65536 + 1;
	}
	sizes[n++] = (size_t)mib << 20;
	bip_init();
	if (bip_numnodes < 2) {
		fprintf(stderr, "gather: needs 2 nodes\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (bip_mynode == 0) {
			send_one(1, sizes[i], i);
			recv_one(sizes[i], i);
		} else if (bip_mynode == 1) {
			recv_one(sizes[i], i);
			send_one(0, sizes[i], i);
		}
		total += sizes[i];
	}
	if (bip_mynode == 0)
		printf("node 0: %d messages, %zu bytes each way, every byte right\n", n, total);
	bip_finalize();
	return 0;
}
