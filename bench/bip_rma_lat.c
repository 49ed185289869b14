/* SPDX-License-Identifier: MIT */
/*
 * bip_rma_lat.c - the latency of one-sided operations (bip_rma(3)).
 *
 *   bipload -sz 2 ./bip_rma_lat [-i ITERS] [-s BYTES]
 *
 * Node 1 exposes a region, sends its key to node 0 and waits for a message
 * (its process takes no part in the operations).  Node 0 times ITERS
 * (default 10000, after a tenth as many to warm up) of each operation
 * started and waited for one at a time: a put and a get of BYTES (default
 * 8), and an 8-byte fetch-and-add.  It prints the median, the 1st and the
 * 99th percentile of each, in microseconds.  A node that cannot run them
 * (bip_rma_capable is 0) says so and exits with 77.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bip.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "bip_rma_lat: node %d: %s: error %d\n", bip_mynode, what, rc);
		exit(1);
	}
}

enum what { PUT, GET, FADD };

static void run(enum what w, uint64_t key, void *buf, size_t bytes, int iters, double *t)
{
	uint64_t one = 1, old;
	int i, warm = iters / 10;

	for (i = -warm; i < iters; i++) {
		double t0 = now_us();
		int id = w == PUT   ? bip_rma_put(1, key, 64, buf, bytes)
			 : w == GET ? bip_rma_get(1, key, 64, buf, bytes)
				    : bip_rma_atomic(1, key, 0, BIP_RMA_SUM, BIP_RMA_UINT64, 1, &one,
						     NULL, &old);

		check(id, "start");
		check(bip_rma_wait(id), "wait");
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	qsort(t, (size_t)iters, sizeof(*t), by_value);
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "put", "get", "fetch-add" };
	size_t bytes = 8;
	int iters = 10000, c, w, word[2];
	uint64_t key = 0;
	double *t;
	char *buf;

	while ((c = getopt(argc, argv, "i:s:")) != -1) {
		if (c == 'i')
			iters = atoi(optarg);
		else if (c == 's')
			bytes = (size_t)atol(optarg);
		else
			return 2;
	}
	bip_init();
	if (bip_numnodes < 2 || !bip_rma_capable(1) || iters < 10) {
		if (bip_mynode == 0)
			printf("bip_rma_lat: node 1 cannot run one-sided operations here\n");
		bip_finalize();
		return 77;
	}
	buf = calloc(1, bytes + 64 > 4096 ? bytes + 64 : 4096);
	t = calloc((size_t)iters, sizeof(*t));
	if (!buf || !t)
		return 1;
	if (bip_mynode == 1) {
		check(bip_rma_expose(buf, bytes + 64 > 4096 ? bytes + 64 : 4096, &key), "expose");
		memcpy(word, &key, sizeof(key));
		bip_tsend(0, 1, word, 2);
		bip_trecv(2, word, 2);
	} else if (bip_mynode == 0) {
		bip_trecv(1, word, 2);
		memcpy(&key, word, sizeof(key));
		printf("# one-sided operations on node 1, %zu bytes, %d iterations, microseconds\n"
		       "# op median p1 p99\n", bytes, iters);
		for (w = PUT; w <= FADD; w++) {
			run(w, key, buf, bytes, iters, t);
			printf("%s %.2f %.2f %.2f\n", names[w], t[iters / 2], t[iters / 100],
			       t[iters - 1 - iters / 100]);
		}
		bip_tsend(1, 2, word, 2);
	}
	bip_finalize();
	free(t);
	free(buf);
	return 0;
}
