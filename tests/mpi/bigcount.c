/* SPDX-License-Identifier: MIT */
/*
 * Byte counts past 2^31 (size_t end to end), and counts whose byte size
 * overflows (MPI_ERR_COUNT).
 *
 *   overflow   no memory: a datatype of 2^62 bytes; sending 5 of it, or
 *              receiving, reducing or gathering with it, is MPI_ERR_COUNT
 *              naming the overflow; a message above 4 GiB - 1 bytes is
 *              MPI_ERR_COUNT naming the limit; nothing is sent
 *   p2p        2.2 GB from rank 0 to rank 1 (a count of doubles past 2^28,
 *              bytes past 2^31), every word checked
 *   allgather  720,000,000 MPI_BYTEs from each of 3 ranks (2.16 GB gathered)
 *   bcast      2.2 GB from the root
 *
 * The last three need a few GiB (suite bigmem, run once, in the normal
 * build: see tests/mpi/meson.build).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpicheck.h"

static int rank, size;

/* A word of the pattern at index i of rank r's data. */
static uint64_t word(int r, size_t i)
{
	return ((uint64_t)r << 56) ^ (i * 0x9e3779b97f4a7c15ull);
}

static void fill(uint64_t *p, size_t n, int r)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = word(r, i);
}

static void expect(const uint64_t *p, size_t n, int r, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(p[i] == word(r, i), "%s: word %zu of rank %d's data is %llx", what, i, r,
		      (unsigned long long)p[i]);
}

static void *big(size_t bytes)
{
	void *p = malloc(bytes);

	CHECK(p != NULL, "cannot allocate %zu bytes for the test", bytes);
	return p;
}

/* The message itself is checked by fatal.sh count (the fatal handler's
 * words); here the class. */
static void expect_count_error(int rc, const char *says)
{
	int cls;

	CHECK(rc != MPI_SUCCESS, "accepted (%s expected)", says);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_COUNT, "error class %d, not MPI_ERR_COUNT (%s)", cls, says);
}

static void t_overflow(void)
{
	MPI_Datatype g8, huge, five;
	double buf[4] = { 0 }, out[4];
	int peer = size > 1 ? 1 - rank : rank;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* 2^30 doubles: 8 GiB; 2^29 of those: 2^62 bytes.  No memory is
	 * touched: every call below must fail before it reads a byte. */
	OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &g8));
	OK(MPI_Type_contiguous(1 << 29, g8, &huge));
	OK(MPI_Type_commit(&huge));
	OK(MPI_Type_contiguous(5, MPI_BYTE, &five));
	OK(MPI_Type_commit(&five));
	expect_count_error(MPI_Send(buf, 5, huge, peer, 1, MPI_COMM_WORLD), "overflows");
	expect_count_error(MPI_Recv(buf, 5, huge, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
			   "overflows");
	expect_count_error(MPI_Bcast(buf, 4, huge, 0, MPI_COMM_WORLD), "overflows");
	expect_count_error(MPI_Allgather(buf, 5, huge, out, 5, huge, MPI_COMM_WORLD),
			   "overflows");
	/* 5 bytes times 900 million: 4.5 GB, more than one message carries. */
	expect_count_error(MPI_Send(buf, 900000000, five, peer, 1, MPI_COMM_WORLD),
			   "at most 4294967295");
	/* Nothing was sent: a small message goes and comes as usual. */
	if (size > 1) {
		buf[0] = rank + 0.5;
		OK(MPI_Sendrecv(buf, 1, MPI_DOUBLE, peer, 2, out, 1, MPI_DOUBLE, peer, 2,
				MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(out[0] == peer + 0.5, "got %g", out[0]);
	}
	MPI_Type_free(&huge);
	MPI_Type_free(&g8);
	MPI_Type_free(&five);
}

/* The same send under MPI_ERRORS_ARE_FATAL: the job stops, saying why. */
static void t_overflowfatal(void)
{
	MPI_Datatype g8, huge;
	double buf[1] = { 0 };

	OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &g8));
	OK(MPI_Type_contiguous(1 << 29, g8, &huge));
	OK(MPI_Type_commit(&huge));
	MPI_Send(buf, 5, huge, rank, 1, MPI_COMM_WORLD);
	CHECK(0, "MPI_Send returned");
}

/* 2.2 GB: 275 million words. */
#define BIG_WORDS 275000000ull

static void t_p2p(void)
{
	uint64_t *p = big(BIG_WORDS * 8);

	CHECK(size >= 2, "p2p needs 2 ranks");
	if (rank == 0) {
		fill(p, BIG_WORDS, 0);
		OK(MPI_Send(p, (int)BIG_WORDS, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_Status st;
		int n;

		memset(p, 0, BIG_WORDS * 8);
		OK(MPI_Recv(p, (int)BIG_WORDS, MPI_UINT64_T, 0, 7, MPI_COMM_WORLD, &st));
		OK(MPI_Get_count(&st, MPI_UINT64_T, &n));
		CHECK((size_t)n == BIG_WORDS, "count %d", n);
		expect(p, BIG_WORDS, 0, "p2p");
	}
	free(p);
}

static void t_allgather(void)
{
	const size_t words = 90000000; /* 720,000,000 bytes */
	uint64_t *mine = big(words * 8), *all = big(words * 8 * (size_t)size);
	int r;

	fill(mine, words, rank);
	/* In bytes, as the issue had it: counts times ranks pass 2^31. */
	OK(MPI_Allgather(mine, (int)(words * 8), MPI_BYTE, all, (int)(words * 8), MPI_BYTE,
			 MPI_COMM_WORLD));
	for (r = 0; r < size; r++)
		expect(all + (size_t)r * words, words, r, "allgather");
	free(mine);
	free(all);
}

static void t_bcast(void)
{
	uint64_t *p = big(BIG_WORDS * 8);

	if (rank == 0)
		fill(p, BIG_WORDS, 0);
	else
		memset(p, 0, BIG_WORDS * 8);
	OK(MPI_Bcast(p, (int)BIG_WORDS, MPI_UINT64_T, 0, MPI_COMM_WORLD));
	expect(p, BIG_WORDS, 0, "bcast");
	free(p);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} tests[] = {
		{ "overflow", t_overflow },
		{ "overflowfatal", t_overflowfatal },
		{ "p2p", t_p2p },
		{ "allgather", t_allgather },
		{ "bcast", t_bcast },
	};
	size_t i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check_rank = rank;
	CHECK(argc == 2, "usage: bigcount overflow|p2p|allgather|bcast");
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[1], tests[i].name))
			break;
	CHECK(i < sizeof(tests) / sizeof(tests[0]), "no test %s", argv[1]);
	tests[i].run();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
