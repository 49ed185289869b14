/* SPDX-License-Identifier: MIT */
/*
 * io_big.c - offsets past 2^32 (MPI_Offset is 64 bits): a few bytes at
 * 5 GiB and at 2^33 + 1 of a sparse file, written by different ranks,
 * read back by every rank; the size; and the file stays sparse (its
 * st_blocks a few pages: nothing in between was written, the disk is
 * never filled).  Skipped where the file system cannot hold a file of
 * that size.
 *
 *   bipload -sz N io_big offsets
 */
#include "iocheck.h"

static void test_offsets(void)
{
	const MPI_Offset at[2] = { (MPI_Offset)5 << 30, ((MPI_Offset)1 << 33) + 1 };
	const char *path = io_path("big");
	unsigned char buf[64], got[64];
	MPI_Offset sz;
	MPI_Status st;
	MPI_File fh;
	int i, rc, ok, n;

	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			 &fh));
	/* Rank 0 writes at 5 GiB, the last rank at 2^33 + 1. */
	rc = MPI_SUCCESS;
	for (i = 0; i < 2; i++)
		if (rank == (i ? size - 1 : 0)) {
			io_fill(buf, sizeof(buf), i, at[i]);
			rc |= MPI_File_write_at(fh, at[i], buf, sizeof(buf), MPI_BYTE, &st);
		}
	ok = rc == MPI_SUCCESS;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!ok) {
		int c;

		MPI_Error_class(rc, &c);
		OK(MPI_File_close(&fh));
		if (c == MPI_ERR_NO_SPACE || c == MPI_ERR_QUOTA || c == MPI_ERR_IO)
			io_skip("the file system refuses a write past 2^33 (file size limit?)");
		CHECK(0, "a write past 2^32 failed: %s", io_errstr(rc));
		return;
	}
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == at[1] + (MPI_Offset)sizeof(buf), "size %lld, want %lld", (long long)sz,
	      (long long)(at[1] + (MPI_Offset)sizeof(buf)));
	for (i = 0; i < 2; i++) {
		memset(got, 0, sizeof(got));
		OK(MPI_File_read_at(fh, at[i], got, sizeof(got), MPI_BYTE, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &n));
		CHECK(n == (int)sizeof(got), "read at %lld: %d bytes", (long long)at[i], n);
		CHECK_BYTES(got, sizeof(got), i, at[i], "past 2^32");
	}
	/* Through a view whose displacement is past 2^32, and the pointer. */
	OK(MPI_File_set_view(fh, at[0], MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	OK(MPI_File_seek(fh, 10, MPI_SEEK_SET));
	OK(MPI_File_read(fh, got, 20, MPI_BYTE, &st));
	CHECK_BYTES(got, 20, 0, at[0] + 10, "through a view at 5 GiB");
	{
		MPI_Offset off;

		OK(MPI_File_get_byte_offset(fh, 30, &off));
		CHECK(off == at[0] + 30, "byte offset %lld", (long long)off);
	}
	OK(MPI_File_close(&fh));
	if (rank == 0) {
		struct stat sb;

		CHECK(stat(path, &sb) == 0, "stat: %s", strerror(errno));
		CHECK((long long)sb.st_blocks * 512 < 16 << 20,
		      "the file takes %lld bytes of disk: not sparse", (long long)sb.st_blocks * 512);
	}
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "offsets", test_offsets },
	};

	return io_main(argc, argv, "io_big", tests, sizeof(tests) / sizeof(tests[0]));
}
