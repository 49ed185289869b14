/* SPDX-License-Identifier: MIT */
/*
 * lanai_rma - one-sided operations executed by the simulated board
 * (bip_rma(3)), through the public calls, every word checked; the same
 * over libfabric (tests/ofi/rma.sh).
 *
 *   lanai_rma all | notcapable | unserved | sleep
 *
 * all: every node exposes a region and hands its key to the others, then
 *   - puts and gets of 1 B, 8 B, 4 KiB, 64 KiB + 1 and 1 MiB at aligned
 *     and unaligned offsets, on the next node and on itself (loopback);
 *   - gets started right after puts of the same bytes, without waiting
 *     between them: the get sees the put;
 *   - every operation on every type with several elements, CSWAP, and
 *     the values before each of them;
 *   - contention: every node adds 1 to one counter of node 0, many
 *     times, with fetch-and-add: the total is exact, and each node sees
 *     the counter grow;
 *   - a spin lock made of CSWAP on node 0 guarding a read-modify-write
 *     of a plain word there with get and put: no increment is lost;
 *   - bad inputs: out of the region (-ERANGE, nothing written, even for
 *     a 1 MiB put whose start lies inside), a withdrawn key and a forged
 *     one (-EACCES), bad op, type or count (-EINVAL).
 * notcapable: bip_rma_capable is 0 for every node, and the calls refuse
 *   (a driver without one-sided operations: shm).
 * unserved: bip_rma_capable is 0 for every node, but this process may
 *   expose memory (ofi without the progress thread: its NIC has them, but
 *   nobody serves a node's memory while its process computes).
 * sleep: node 0 waits for a message in a blocking wait while the others
 *   run thousands of operations on its memory; it must not be woken by
 *   them (struct bip_counters' wakeups), and the operations are all done.
 *
 * A failed check prints "FAIL" and ends the node with status 3.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"

#define MIB (1u << 20)
#define REGION (4 * MIB)
#define TAG_KEY 1
#define TAG_SYNC 2
#define TAG_DONE 3

/* Where each test lives in a node's region: the left neighbour's
 * operations and this node's own (through its board) never meet. */
#define AREA_PUT 0			/* the left neighbour's puts and gets */
#define AREA_PUT_SELF (MIB + MIB / 4)	/* this node's own */
#define AREA_ATOMIC (5 * MIB / 2)	/* the left neighbour's atomics */
#define AREA_ATOMIC_SELF (11 * MIB / 4) /* this node's own */
#define COUNTER (REGION - 64)	   /* node 0: the contended counter */
#define LOCK (REGION - 128)	   /* node 0: the spin lock */
#define GUARDED (REGION - 192)	   /* node 0: the word it guards */

static int me, n;
static uint8_t *region;
static uint64_t keys[64];

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "node %d: FAIL line %d: ", me, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                                 \
			fprintf(stderr, "\n");                                        \
			exit(3);                                                      \
		}                                                                     \
	} while (0)

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)mix(seed ^ i);
}

static void check_fill(const uint8_t *p, size_t len, uint64_t seed, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		CHECK(p[i] == (uint8_t)mix(seed ^ i), "%s: byte %zu of %zu is 0x%02x, not 0x%02x",
		      what, i, len, p[i], (uint8_t)mix(seed ^ i));
}

static void send_u64(int dst, int tag, uint64_t v)
{
	int w[2];

	memcpy(w, &v, sizeof(v));
	CHECK(bip_tsend(dst, tag, w, 2) == 0, "send to %d: %s", dst, bip_error_string());
}

static uint64_t recv_u64(int tag, int *from)
{
	int w[2];
	uint64_t v;

	CHECK(bip_trecvx(tag, w, 2, from) == 2, "receive: %s", bip_error_string());
	memcpy(&v, w, sizeof(v));
	return v;
}

static void barrier(void)
{
	int i, from;

	if (me) {
		send_u64(0, TAG_SYNC, 0);
		recv_u64(TAG_SYNC, &from);
		return;
	}
	for (i = 1; i < n; i++)
		recv_u64(TAG_SYNC, &from);
	for (i = 1; i < n; i++)
		send_u64(i, TAG_SYNC, 0);
}

/* Expose a region of len bytes and learn every node's key for it. */
static uint8_t *expose_all(size_t len, uint64_t *all)
{
	uint8_t *p = aligned_alloc(4096, len);
	uint64_t key = 0;
	int i, from, rc;

	CHECK(p, "out of memory");
	memset(p, 0, len);
	rc = bip_rma_expose(p, len, &key);
	CHECK(rc == 0, "bip_rma_expose: %d", rc);
	all[me] = key;
	for (i = 0; i < n; i++)
		if (i != me)
			send_u64(i, TAG_KEY, key);
	for (i = 0; i < n - 1; i++) {
		uint64_t k = recv_u64(TAG_KEY, &from);

		all[from] = k;
	}
	return p;
}

static int wait_ok(int id, const char *what)
{
	int rc;

	CHECK(id >= 0, "%s: started with %d", what, id);
	rc = bip_rma_wait(id);
	CHECK(rc == 0, "%s: completed with %d", what, rc);
	return rc;
}

/* --- puts and gets --- */

static void put_get(int t, uint64_t base)
{
	static const size_t sizes[] = { 1, 8, 4096, 65537, MIB };
	static const uint64_t offs[] = { 0, 3, 4093, 65535 };
	uint8_t *src = malloc(MIB + 64), *dst = malloc(MIB + 64);
	size_t s, o;

	CHECK(src && dst, "out of memory");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
			size_t len = sizes[s];
			uint64_t seed = (uint64_t)me << 40 | (uint64_t)t << 32 | s << 8 | o;

			fill(src, len, seed);
			wait_ok(bip_rma_put(t, keys[t], base + offs[o], src, len), "put");
			memset(dst, 0x5a, len + 64);
			wait_ok(bip_rma_get(t, keys[t], base + offs[o], dst, len), "get");
			check_fill(dst, len, seed, "get after put");
			for (size_t i = len; i < len + 64; i++)
				CHECK(dst[i] == 0x5a, "get wrote past its buffer at %zu", i);
		}
	}
	free(src);
	free(dst);
}

/* Puts and gets of the same bytes started back to back: each get sees the
 * put before it, never an older or a later one. */
static void ordering(int t, uint64_t base)
{
	enum { ROUNDS = 64, LEN = 70000 };
	uint8_t *src = malloc((size_t)ROUNDS * LEN), *dst = malloc((size_t)ROUNDS * LEN);
	int put[ROUNDS], get[ROUNDS], r;

	CHECK(src && dst, "out of memory");
	for (r = 0; r < ROUNDS; r++) {
		size_t len = r % 3 == 0 ? 8 : r % 3 == 1 ? 4096 : LEN;

		fill(src + (size_t)r * LEN, len, (uint64_t)r << 20 | 7);
		put[r] = bip_rma_put(t, keys[t], base + 17, src + (size_t)r * LEN, len);
		get[r] = bip_rma_get(t, keys[t], base + 17, dst + (size_t)r * LEN, len);
		CHECK(put[r] >= 0 && get[r] >= 0, "round %d: %d %d", r, put[r], get[r]);
	}
	for (r = ROUNDS; r-- > 0;) {
		wait_ok(get[r], "get");
		wait_ok(put[r], "put");
	}
	for (r = 0; r < ROUNDS; r++) {
		size_t len = r % 3 == 0 ? 8 : r % 3 == 1 ? 4096 : LEN;

		check_fill(dst + (size_t)r * LEN, len, (uint64_t)r << 20 | 7, "get after its put");
	}
	free(src);
	free(dst);
}

/* --- atomics --- */

static size_t type_size(int type)
{
	static const size_t sizes[] = { [BIP_RMA_INT8] = 1,   [BIP_RMA_INT16] = 2,
					[BIP_RMA_INT32] = 4,  [BIP_RMA_INT64] = 8,
					[BIP_RMA_UINT8] = 1,  [BIP_RMA_UINT16] = 2,
					[BIP_RMA_UINT32] = 4, [BIP_RMA_UINT64] = 8,
					[BIP_RMA_FLOAT] = 4,  [BIP_RMA_DOUBLE] = 8 };

	return sizes[type];
}

static int is_float(int type)
{
	return type == BIP_RMA_FLOAT || type == BIP_RMA_DOUBLE;
}

/* Element i of a test vector, as a double (exact for every type). */
static double value(int type, int which, int i)
{
	static const double signed_v[2][5] = { { 5, -3, 0, 100, -7 }, { 3, 4, -9, 0, -7 } };
	static const double unsigned_v[2][5] = { { 5, 3, 0, 200, 12 }, { 6, 250, 0, 1, 12 } };
	static const double float_v[2][5] = { { 1.5, -2.25, 0, 8, 3 }, { 0.5, 4, -1, 8, -3 } };

	if (is_float(type))
		return float_v[which][i];
	return type <= BIP_RMA_INT64 ? signed_v[which][i] : unsigned_v[which][i];
}

/* v in type's representation; an integer wraps as unsigned arithmetic does. */
static void store(int type, void *p, double v)
{
	uint64_t u = (uint64_t)(int64_t)v;

	switch (type) {
	case BIP_RMA_INT8: case BIP_RMA_UINT8: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
	case BIP_RMA_INT16: case BIP_RMA_UINT16: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
	case BIP_RMA_INT32: case BIP_RMA_UINT32: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
	case BIP_RMA_INT64: case BIP_RMA_UINT64: memcpy(p, &u, 8); break;
	case BIP_RMA_FLOAT: { float x = (float)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* What op makes of target t and operand o, as the type's own arithmetic
 * does it (the vectors keep every result in range). */
static void expect(int type, int op, double t, double o, void *out)
{
	double r = t;

	switch (op) {
	case BIP_RMA_SUM: r = t + o; break;
	case BIP_RMA_PROD: r = t * o; break;
	case BIP_RMA_MIN: r = o < t ? o : t; break;
	case BIP_RMA_MAX: r = o > t ? o : t; break;
	case BIP_RMA_LAND: r = t != 0 && o != 0; break;
	case BIP_RMA_LOR: r = t != 0 || o != 0; break;
	case BIP_RMA_LXOR: r = (t != 0) != (o != 0); break;
	case BIP_RMA_REPLACE: r = o; break;
	case BIP_RMA_NO_OP: break;
	case BIP_RMA_BAND:
	case BIP_RMA_BOR:
	case BIP_RMA_BXOR: {
		int64_t a = (int64_t)t, b = (int64_t)o;

		r = (double)(op == BIP_RMA_BAND ? a & b : op == BIP_RMA_BOR ? a | b : a ^ b);
		break;
	}
	}
	store(type, out, r);
}

static void atomics(int t, uint64_t base)
{
	enum { COUNT = 5 };
	int type, op, i;

	for (type = BIP_RMA_INT8; type <= BIP_RMA_DOUBLE; type++) {
		size_t sz = type_size(type);

		for (op = BIP_RMA_SUM; op <= BIP_RMA_NO_OP; op++) {
			uint8_t init[COUNT * 8], operand[COUNT * 8], result[COUNT * 8 + 8];
			uint8_t want[COUNT * 8], got[COUNT * 8];
			int rc;

			if (is_float(type) && op >= BIP_RMA_BAND && op <= BIP_RMA_LXOR)
				continue;
			for (i = 0; i < COUNT; i++) {
				store(type, init + i * sz, value(type, 0, i));
				store(type, operand + i * sz, value(type, 1, i));
				expect(type, op, value(type, 0, i), value(type, 1, i),
				       want + i * sz);
			}
			wait_ok(bip_rma_put(t, keys[t], base + 1, init, COUNT * sz), "put");
			memset(result, 0xee, sizeof(result));
			rc = bip_rma_atomic(t, keys[t], base + 1, op, type, COUNT,
					    op == BIP_RMA_NO_OP ? NULL : operand, NULL, result);
			wait_ok(rc, "atomic");
			wait_ok(bip_rma_get(t, keys[t], base + 1, got, COUNT * sz), "get");
			CHECK(!memcmp(result, init, COUNT * sz) && result[COUNT * sz] == 0xee,
			      "type %d op %d: the values before are wrong", type, op);
			CHECK(!memcmp(got, want, COUNT * sz),
			      "type %d op %d: the target holds the wrong values", type, op);
		}
		/* CSWAP: equal swaps, unequal leaves it. */
		{
			uint8_t v[8], w[8], z[8], old[8], got[8];

			store(type, v, value(type, 0, 0));
			store(type, w, value(type, 1, 0));
			store(type, z, value(type, 0, 3));
			wait_ok(bip_rma_put(t, keys[t], base + 2, v, sz), "put");
			wait_ok(bip_rma_atomic(t, keys[t], base + 2, BIP_RMA_CSWAP, type, 1, w, v, old),
				"cswap");
			CHECK(!memcmp(old, v, sz), "type %d: CSWAP's old value", type);
			wait_ok(bip_rma_atomic(t, keys[t], base + 2, BIP_RMA_CSWAP, type, 1, z, v, old),
				"cswap");
			CHECK(!memcmp(old, w, sz), "type %d: CSWAP's old value, unequal", type);
			wait_ok(bip_rma_get(t, keys[t], base + 2, got, sz), "get");
			CHECK(!memcmp(got, w, sz), "type %d: an unequal CSWAP wrote", type);
		}
	}
	/* Many elements: more than one request's worth (64 KiB / 2). */
	{
		enum { MANY = 6000 };
		uint64_t *ops = malloc(MANY * 8), *old = malloc(MANY * 8), *got = malloc(MANY * 8);

		CHECK(ops && old && got, "out of memory");
		for (i = 0; i < MANY; i++)
			ops[i] = (uint64_t)i * 3 + 1;
		wait_ok(bip_rma_atomic(t, keys[t], base + 4096, BIP_RMA_REPLACE, BIP_RMA_UINT64,
				       MANY, ops, NULL, NULL), "replace");
		wait_ok(bip_rma_atomic(t, keys[t], base + 4096, BIP_RMA_SUM, BIP_RMA_UINT64, MANY,
				       ops, NULL, old), "sum");
		wait_ok(bip_rma_get(t, keys[t], base + 4096, got, MANY * 8), "get");
		for (i = 0; i < MANY; i++) {
			CHECK(old[i] == ops[i], "element %d: %" PRIu64 " before", i, old[i]);
			CHECK(got[i] == 2 * ops[i], "element %d: %" PRIu64 " after", i, got[i]);
		}
		free(ops);
		free(old);
		free(got);
	}
}

/* --- several nodes on one word --- */

static void contention(void)
{
	enum { M = 500 };
	uint64_t one = 1, old, last = 0;
	int i;

	barrier();
	for (i = 0; i < M; i++) {
		wait_ok(bip_rma_atomic(0, keys[0], COUNTER, BIP_RMA_SUM, BIP_RMA_UINT64, 1, &one,
				       NULL, &old), "fetch-add");
		CHECK(i == 0 || old > last, "the counter went from %" PRIu64 " to %" PRIu64, last,
		      old);
		last = old;
	}
	barrier();
	if (me == 0) {
		uint64_t v;

		memcpy(&v, region + COUNTER, 8);
		CHECK(v == (uint64_t)n * M, "the counter is %" PRIu64 ", not %d", v, n * M);
	}
}

/* A spin lock of CSWAP guarding get, add, put of a plain word. */
static void spin_lock(void)
{
	enum { K = 100 };
	uint64_t mine = (uint64_t)me + 1, zero = 0, old, v;
	int i, spins = 0;

	barrier();
	for (i = 0; i < K; i++) {
		do {
			wait_ok(bip_rma_atomic(0, keys[0], LOCK, BIP_RMA_CSWAP, BIP_RMA_UINT64, 1,
					       &mine, &zero, &old), "lock");
			spins++;
		} while (old != 0);
		wait_ok(bip_rma_get(0, keys[0], GUARDED, &v, 8), "get");
		v++;
		/* The put reaches node 0 before the release: one origin's
		 * operations are executed in order. */
		CHECK(bip_rma_put(0, keys[0], GUARDED, &v, 8) >= 0, "put");
		wait_ok(bip_rma_atomic(0, keys[0], LOCK, BIP_RMA_CSWAP, BIP_RMA_UINT64, 1, &zero,
				       &mine, &old), "unlock");
		CHECK(old == mine, "the lock was %" PRIu64 ", held by %" PRIu64, old, mine);
	}
	barrier();
	if (me == 0) {
		memcpy(&v, region + GUARDED, 8);
		CHECK(v == (uint64_t)n * K, "the guarded word is %" PRIu64 ", not %d", v, n * K);
		printf("node 0: spin lock: %d increments by %d nodes, none lost\n", n * K, n);
	}
	(void)spins;
}

/* --- bad inputs --- */

static void bad_inputs(int t)
{
	uint8_t *big = malloc(MIB), before[64];
	uint64_t v = 42, k2[64], forged;
	uint8_t *r2;
	int rc;

	CHECK(big, "out of memory");
	memset(big, 0x77, MIB);
	barrier();
	memcpy(before, region + REGION - MIB / 2, sizeof(before));
	barrier();
	/* Out of the region: nothing written, even where it starts inside. */
	CHECK(bip_rma_wait(bip_rma_put(t, keys[t], REGION, &v, 1)) == -ERANGE, "put at the end");
	CHECK(bip_rma_wait(bip_rma_put(t, keys[t], REGION - 4, &v, 8)) == -ERANGE, "put across");
	CHECK(bip_rma_wait(bip_rma_get(t, keys[t], REGION - 4, &v, 8)) == -ERANGE, "get across");
	CHECK(bip_rma_wait(bip_rma_atomic(t, keys[t], REGION, BIP_RMA_SUM, BIP_RMA_UINT8, 1, &v,
					  NULL, NULL)) == -ERANGE, "atomic at the end");
	rc = bip_rma_put(t, keys[t], REGION - MIB / 2, big, MIB);
	CHECK(bip_rma_wait(rc) == -ERANGE, "1 MiB put across the end");
	CHECK(bip_rma_wait(bip_rma_put(t, keys[t], UINT64_MAX - 8, &v, 8)) == -ERANGE,
	      "put near 2^64");
	barrier();
	CHECK(!memcmp(before, region + REGION - MIB / 2, sizeof(before)),
	      "an operation out of bounds wrote");
	/* Bad arguments, refused at once. */
	CHECK(bip_rma_atomic(t, keys[t], 0, 0, BIP_RMA_INT8, 1, &v, NULL, NULL) == -EINVAL, "op 0");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_CSWAP + 1, BIP_RMA_INT8, 1, &v, NULL, NULL) ==
	      -EINVAL, "op");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_SUM, 0, 1, &v, NULL, NULL) == -EINVAL, "type 0");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_SUM, BIP_RMA_DOUBLE + 1, 1, &v, NULL, NULL) ==
	      -EINVAL, "type");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_SUM, BIP_RMA_INT8, 0, &v, NULL, NULL) == -EINVAL,
	      "count 0");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_BAND, BIP_RMA_FLOAT, 1, &v, NULL, NULL) ==
	      -EINVAL, "BAND on floats");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_CSWAP, BIP_RMA_INT64, 2, &v, &v, NULL) ==
	      -EINVAL, "CSWAP of 2");
	CHECK(bip_rma_atomic(t, keys[t], 0, BIP_RMA_CSWAP, BIP_RMA_INT64, 1, &v, NULL, NULL) ==
	      -EINVAL, "CSWAP without compare");
	CHECK(bip_rma_put(n, keys[t], 0, &v, 8) == -EINVAL, "node out of range");
	CHECK(bip_rma_test(123456789) == -EINVAL, "an id never given");
	/* A key withdrawn, and a forged one. */
	r2 = expose_all(4096, k2);
	wait_ok(bip_rma_put(t, k2[t], 0, &v, 8), "put to the second region");
	barrier();
	CHECK(bip_rma_withdraw(k2[me]) == 0, "withdraw");
	CHECK(bip_rma_withdraw(k2[me]) == -EINVAL, "withdraw twice");
	barrier();
	CHECK(bip_rma_wait(bip_rma_put(t, k2[t], 0, &v, 8)) == -EACCES, "put, withdrawn key");
	CHECK(bip_rma_wait(bip_rma_get(t, k2[t], 0, &v, 8)) == -EACCES, "get, withdrawn key");
	forged = keys[t] ^ (1ull << 50);
	CHECK(bip_rma_wait(bip_rma_get(t, forged, 0, &v, 8)) == -EACCES, "forged key");
	forged = keys[t] ^ (1ull << 8);
	CHECK(bip_rma_wait(bip_rma_get(t, forged, 0, &v, 8)) == -EACCES, "old generation");
	CHECK(bip_rma_wait(bip_rma_get(t, keys[(t + 1) % n], 0, &v, 8)) == -EACCES,
	      "another node's key");
	barrier();
	free(r2);
	free(big);
}

/* --- modes --- */

static void all(void)
{
	int t = (me + 1) % n, i;

	for (i = 0; i < n; i++)
		CHECK(bip_rma_capable(i) == 1, "node %d not capable", i);
	region = expose_all(REGION, keys);
	barrier();
	put_get(t, AREA_PUT);
	put_get(me, AREA_PUT_SELF);
	ordering(t, AREA_PUT);
	ordering(me, AREA_PUT_SELF);
	atomics(t, AREA_ATOMIC);
	atomics(me, AREA_ATOMIC_SELF);
	contention();
	spin_lock();
	bad_inputs(t);
	CHECK(bip_rma_withdraw(keys[me]) == 0, "withdraw");
	barrier();
	if (me == 0)
		printf("node 0: one-sided operations of %d nodes: every word right\n", n);
}

static void notcapable(void)
{
	uint64_t key, v = 0;
	int i;

	for (i = 0; i < n; i++)
		CHECK(bip_rma_capable(i) == 0, "node %d capable", i);
	CHECK(bip_rma_capable(-1) == 0 && bip_rma_capable(n) == 0, "nodes out of range");
	CHECK(bip_rma_expose(&v, 8, &key) == -ENOTSUP, "expose");
	CHECK(bip_rma_put((me + 1) % n, 0, 0, &v, 8) == -ENOTSUP, "put");
	barrier();
	if (me == 0)
		printf("node 0: no node capable, as expected\n");
}

static void unserved(void)
{
	uint64_t key, v = 0;
	int i;

	for (i = 0; i < n; i++)
		CHECK(bip_rma_capable(i) == 0, "node %d capable", i);
	CHECK(bip_rma_put((me + 1) % n, 0, 0, &v, 8) == -ENOTSUP, "put");
	CHECK(bip_rma_expose(&v, 8, &key) == 0, "expose");
	CHECK(bip_rma_withdraw(key) == 0, "withdraw");
	barrier();
	if (me == 0)
		printf("node 0: no node capable, as expected\n");
}

/* Poll for ms milliseconds: acknowledgements of past messages go out. */
static void poll_for(long ms)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		bip_tprobe(TAG_DONE);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L < ms);
}

/* Node 0 waits, blocking, while the others work on its memory. */
static void sleep_test(void)
{
	enum { OPS = 2000 };
	struct bip_counters c0, c1;
	uint64_t one = 1, v;
	int i, from;

	region = expose_all(REGION, keys);
	barrier();
	if (me == 0) {
		/* The one message that ends the wait comes from node 1 once
		 * every node is done; nobody sends node 0 anything before it,
		 * and what came before has been acknowledged both ways. */
		poll_for(100);
		bip_get_counters(&c0);
		recv_u64(TAG_DONE, &from);
		bip_get_counters(&c1);
		for (i = 1; i < n; i++)
			send_u64(i, TAG_DONE, 0);
		memcpy(&v, region + COUNTER, 8);
		CHECK(v == (uint64_t)(n - 1) * OPS, "the counter is %" PRIu64, v);
		printf("node 0: slept %" PRIu64 " times, woken %" PRIu64 " times (the message "
		       "at the end included) during %d one-sided operations on its memory\n",
		       c1.sleeps - c0.sleeps, c1.wakeups - c0.wakeups, (n - 1) * OPS * 2);
		CHECK(c1.sleeps > c0.sleeps, "node 0 never slept");
		CHECK(c1.wakeups - c0.wakeups <= 2, "node 0 was woken %" PRIu64 " times",
		      c1.wakeups - c0.wakeups);
	} else {
		uint8_t buf[256];

		/* Node 0 asleep first. */
		poll_for(200);
		for (i = 0; i < OPS; i++) {
			fill(buf, sizeof(buf), (uint64_t)i);
			wait_ok(bip_rma_atomic(0, keys[0], COUNTER, BIP_RMA_SUM, BIP_RMA_UINT64, 1,
					       &one, NULL, NULL), "fetch-add");
			wait_ok(bip_rma_put(0, keys[0], (uint64_t)me * 4096, buf, sizeof(buf)), "put");
		}
		/* The others' operations too, before node 0 wakes. */
		if (me == 1) {
			for (i = 2; i < n; i++)
				recv_u64(TAG_SYNC, &from);
			send_u64(0, TAG_DONE, 0);
		} else {
			send_u64(1, TAG_SYNC, 0);
		}
		recv_u64(TAG_DONE, &from);
	}
	barrier();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";

	bip_init();
	me = bip_mynode;
	n = bip_numnodes;
	if (n < 2 || n > 64) {
		fprintf(stderr, "lanai_rma: 2 to 64 nodes\n");
		return 77;
	}
	if (!strcmp(mode, "notcapable"))
		notcapable();
	else if (!strcmp(mode, "unserved"))
		unserved();
	else if (!strcmp(mode, "sleep"))
		sleep_test();
	else
		all();
	bip_finalize();
	return 0;
}
