/* SPDX-License-Identifier: MIT */
/*
 * io_shared.c - the shared file pointer (MPI-3.1 13.4.4): records written
 * by every rank at once land once each, whole; the ordered calls go in
 * rank order.
 *
 *   bipload -sz N io_shared TEST
 *
 * shared   K write_shared calls a rank: the file holds each (rank, k)
 *          record exactly once, a rank's own in the order it wrote them;
 *          seek_shared back to 0, get_position_shared, read_shared by
 *          every rank: together they read each record once
 * ordered  write_ordered with a size of each rank's own: the file is the
 *          parts in rank order, the shared pointer after them all;
 *          read_ordered gives each rank its part; the split forms
 * iwrite   iwrite_shared and iread_shared, MPI_Wait; seek_shared CUR
 *          and END
 */
#include "iocheck.h"

#define REC 48
#define K 6

/* A record: rank, k, then bytes of (rank, k). */
static void make_rec(unsigned char *b, int r, int k)
{
	int32_t h[2] = { r, k };

	memcpy(b, h, 8);
	io_fill(b + 8, REC - 8, r, (int64_t)k * 1000);
}

/* The writer of a record and its number, or -1 if it is not one whole. */
static int parse_rec(const unsigned char *b, int *r, int *k)
{
	int32_t h[2];

	memcpy(h, b, 8);
	if (h[0] < 0 || h[0] >= size || h[1] < 0 || h[1] >= K)
		return -1;
	if (io_diff(b + 8, REC - 8, h[0], (int64_t)h[1] * 1000) >= 0)
		return -1;
	*r = h[0];
	*k = h[1];
	return 0;
}

/* Every rank reads the file of n records: each (rank, k) once, whole,
 * a rank's records in the order of k. */
static void check_recs(MPI_File fh, const char *what)
{
	const int n = size * K;
	unsigned char *buf = malloc((size_t)n * REC);
	int *seen = calloc((size_t)n, sizeof(int)), *last = malloc((size_t)size * sizeof(int));
	MPI_Offset sz;
	MPI_Status st;
	int i, r, k;

	for (r = 0; r < size; r++)
		last[r] = -1;
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == (MPI_Offset)n * REC, "%s: %lld bytes, want %d", what, (long long)sz, n * REC);
	OK(MPI_File_read_at(fh, 0, buf, n * REC, MPI_BYTE, &st));
	for (i = 0; i < n; i++) {
		if (parse_rec(buf + (size_t)i * REC, &r, &k)) {
			CHECK(0, "%s: record %d is not a whole record", what, i);
			continue;
		}
		seen[r * K + k]++;
		CHECK(k > last[r], "%s: record %d of rank %d after its record %d", what, k, r,
		      last[r]);
		last[r] = k;
	}
	for (i = 0; i < n; i++)
		CHECK(seen[i] == 1, "%s: record %d of rank %d found %d times", what, i % K, i / K,
		      seen[i]);
	free(buf);
	free(seen);
	free(last);
}

static void settle(MPI_File fh)
{
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
}

/* Each rank has read K records through the shared pointer: together,
 * every record once. */
static void check_reads(const unsigned char *mine, const char *what)
{
	int ids[K], *all = malloc((size_t)size * K * sizeof(int)), *seen = calloc((size_t)size * K,
										      sizeof(int));
	int i, r, k;

	for (i = 0; i < K; i++) {
		ids[i] = -1;
		if (parse_rec(mine + (size_t)i * REC, &r, &k) == 0)
			ids[i] = r * K + k;
		CHECK(ids[i] >= 0, "%s: read %d is not a whole record", what, i);
	}
	MPI_Allgather(ids, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < size * K; i++)
		if (all[i] >= 0)
			seen[all[i]]++;
	for (i = 0; i < size * K; i++)
		CHECK(seen[i] == 1, "%s: record %d of rank %d read %d times", what, i % K, i / K,
		      seen[i]);
	free(all);
	free(seen);
}

static void test_shared(void)
{
	unsigned char rec[REC], mine[K * REC];
	MPI_Offset pos;
	MPI_Status st;
	MPI_File fh;
	int k, n;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("shared"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 0, "shared pointer at %lld after the open", (long long)pos);
	MPI_Barrier(MPI_COMM_WORLD);
	for (k = 0; k < K; k++) {
		make_rec(rec, rank, k);
		OK(MPI_File_write_shared(fh, rec, REC, MPI_BYTE, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &n));
		CHECK(n == REC, "write_shared wrote %d bytes", n);
	}
	settle(fh);
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == (MPI_Offset)size * K * REC, "shared pointer at %lld, want %d",
	      (long long)pos, size * K * REC);
	check_recs(fh, "write_shared");
	/* The individual pointer did not move. */
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == 0, "write_shared moved the individual pointer to %lld", (long long)pos);

	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 0, "seek_shared(0, SET): at %lld", (long long)pos);
	MPI_Barrier(MPI_COMM_WORLD);
	for (k = 0; k < K; k++)
		OK(MPI_File_read_shared(fh, mine + k * REC, REC, MPI_BYTE, &st));
	check_reads(mine, "read_shared");
	OK(MPI_File_close(&fh));
}

static void test_ordered(void)
{
	const int part = 10 * (rank + 1) + 3;
	int total = 0, before = 0, r, n;
	unsigned char *buf = malloc((size_t)part), *all;
	MPI_Offset pos;
	MPI_Status st;
	MPI_File fh;

	for (r = 0; r < size; r++) {
		if (r < rank)
			before += 10 * (r + 1) + 3;
		total += 10 * (r + 1) + 3;
	}
	all = malloc((size_t)total * 2);
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("ordered"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	io_fill(buf, (size_t)part, rank, before);
	OK(MPI_File_write_ordered(fh, buf, part, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == part, "write_ordered wrote %d bytes", n);
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == total, "after write_ordered, shared pointer at %lld, want %d",
	      (long long)pos, total);
	/* The pointer is shared: nobody moves it before all have looked. */
	MPI_Barrier(MPI_COMM_WORLD);
	/* The split form: a second copy after the first. */
	io_fill(buf, (size_t)part, rank, total + before);
	OK(MPI_File_write_ordered_begin(fh, buf, part, MPI_BYTE));
	OK(MPI_File_write_ordered_end(fh, buf, &st));
	settle(fh);
	OK(MPI_File_read_at(fh, 0, all, 2 * total, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == 2 * total, "file of %d bytes, want %d", n, 2 * total);
	{
		int off = 0;

		for (r = 0; r < 2 * size; r++) {
			int w = r % size, len = 10 * (w + 1) + 3;

			CHECK_BYTES(all + off, (size_t)len, w, off, "write_ordered");
			off += len;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	memset(buf, 0, (size_t)part);
	OK(MPI_File_read_ordered(fh, buf, part, MPI_BYTE, &st));
	CHECK_BYTES(buf, (size_t)part, rank, before, "read_ordered");
	memset(buf, 0, (size_t)part);
	OK(MPI_File_read_ordered_begin(fh, buf, part, MPI_BYTE));
	OK(MPI_File_read_ordered_end(fh, buf, &st));
	CHECK_BYTES(buf, (size_t)part, rank, total + before, "read_ordered_end");
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 2 * total, "after reading both, shared pointer at %lld", (long long)pos);
	OK(MPI_File_close(&fh));
	free(buf);
	free(all);
}

static void test_iwrite(void)
{
	unsigned char recs[K * REC], mine[K * REC];
	MPI_Status sts[K];
	MPI_Request req[K];
	MPI_Offset pos;
	MPI_File fh;
	int k;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("ishared"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	for (k = 0; k < K; k++) {
		make_rec(recs + k * REC, rank, k);
		OK(MPI_File_iwrite_shared(fh, recs + k * REC, REC, MPI_BYTE, &req[k]));
		/* One at a time: a rank's records then go in its order. */
		OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
	}
	settle(fh);
	check_recs(fh, "iwrite_shared");

	/* seek_shared is collective; SEEK_END and SEEK_CUR. */
	OK(MPI_File_seek_shared(fh, -(MPI_Offset)REC, MPI_SEEK_END));
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == (MPI_Offset)(size * K - 1) * REC, "seek_shared(-REC, END): at %lld",
	      (long long)pos);
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_seek_shared(fh, -(MPI_Offset)(size * K - 1) * REC, MPI_SEEK_CUR));
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 0, "seek_shared back with CUR: at %lld", (long long)pos);
	MPI_Barrier(MPI_COMM_WORLD);
	for (k = 0; k < K; k++)
		OK(MPI_File_iread_shared(fh, mine + k * REC, REC, MPI_BYTE, &req[k]));
	OK(MPI_Waitall(K, req, sts));
	check_reads(mine, "iread_shared");
	OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "shared", test_shared },
		{ "ordered", test_ordered },
		{ "iwrite", test_iwrite },
	};

	return io_main(argc, argv, "io_shared", tests, sizeof(tests) / sizeof(tests[0]));
}
