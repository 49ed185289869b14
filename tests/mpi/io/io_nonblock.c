/* SPDX-License-Identifier: MIT */
/*
 * io_nonblock.c - nonblocking independent access (MPI-3.1 13.4.2, 13.4.3).
 *
 *   bipload -sz N io_nonblock TEST
 *
 * many   64 iwrite_at outstanding at once, MPI_Waitall with statuses;
 *        64 iread_at into blocks of their own, MPI_Waitany
 * ptr    iwrite and iread through the individual pointer, many at once:
 *        each starts where the one before ended, the pointer after them
 *        all
 * test   an iread_at completed by a loop of MPI_Test, MPI_Testall
 * free   an iwrite_at whose request is freed at once: its data reaches the
 *        file (read back, with MPI_Iprobe for progress, until it is there;
 *        the job's time-out bounds it)
 */
#include "iocheck.h"

#define NR 64
#define B 257

static void test_many(void)
{
	unsigned char *out = malloc((size_t)NR * B), *in = malloc((size_t)NR * B);
	MPI_Request req[NR];
	MPI_Status sts[NR], st;
	MPI_File fh;
	int i, idx, n;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("many"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	/* Block i of this rank at (i * P + rank) * B, issued in reverse. */
	for (i = NR - 1; i >= 0; i--) {
		MPI_Offset off = ((MPI_Offset)i * size + rank) * B;

		io_fill(out + (size_t)i * B, B, rank, off);
		OK(MPI_File_iwrite_at(fh, off, out + (size_t)i * B, B, MPI_BYTE, &req[i]));
	}
	OK(MPI_Waitall(NR, req, sts));
	for (i = 0; i < NR; i++) {
		OK(MPI_Get_count(&sts[i], MPI_BYTE, &n));
		CHECK(n == B, "iwrite_at %d: %d bytes", i, n);
		CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed by Waitall", i);
	}
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	/* Read the next rank's blocks. */
	{
		const int r = (rank + 1) % size;

		memset(in, 0, (size_t)NR * B);
		for (i = 0; i < NR; i++)
			OK(MPI_File_iread_at(fh, ((MPI_Offset)i * size + r) * B, in + (size_t)i * B,
					     B, MPI_BYTE, &req[i]));
		for (i = 0; i < NR; i++) {
			OK(MPI_Waitany(NR, req, &idx, &st));
			CHECK(idx >= 0 && idx < NR, "Waitany index %d", idx);
			OK(MPI_Get_count(&st, MPI_BYTE, &n));
			CHECK(n == B, "iread_at %d: %d bytes", idx, n);
		}
		OK(MPI_Waitany(NR, req, &idx, &st));
		CHECK(idx == MPI_UNDEFINED, "Waitany with no active request: index %d", idx);
		for (i = 0; i < NR; i++)
			CHECK_BYTES(in + (size_t)i * B, B, r, ((int64_t)i * size + r) * B,
				    "iread_at");
	}
	OK(MPI_File_close(&fh));
	free(out);
	free(in);
}

static void test_ptr(void)
{
	unsigned char *out = malloc((size_t)NR * B), *in = malloc((size_t)NR * B);
	MPI_Request req[NR];
	MPI_Status sts[NR];
	MPI_Offset pos;
	MPI_File fh;
	char name[32];
	int i;

	snprintf(name, sizeof(name), "ptr%d", rank);
	OK(MPI_File_open(MPI_COMM_SELF, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	io_fill(out, (size_t)NR * B, rank, 0);
	for (i = 0; i < NR; i++)
		OK(MPI_File_iwrite(fh, out + (size_t)i * B, B, MPI_BYTE, &req[i]));
	OK(MPI_Waitall(NR, req, sts));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (MPI_Offset)NR * B, "after %d iwrite: pointer at %lld", NR, (long long)pos);
	OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
	memset(in, 0, (size_t)NR * B);
	for (i = 0; i < NR; i++)
		OK(MPI_File_iread(fh, in + (size_t)i * B, B, MPI_BYTE, &req[i]));
	OK(MPI_Waitall(NR, req, sts));
	CHECK_BYTES(in, (size_t)NR * B, rank, 0, "iread in a row");
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (MPI_Offset)NR * B, "after %d iread: pointer at %lld", NR, (long long)pos);
	OK(MPI_File_close(&fh));
	free(out);
	free(in);
}

static void test_test(void)
{
	unsigned char out[4096], in[4096];
	MPI_Request req, two[2];
	MPI_Status st, sts[2];
	MPI_File fh;
	char name[32];
	int flag = 0, n;
	long spins = 0;

	snprintf(name, sizeof(name), "test%d", rank);
	OK(MPI_File_open(MPI_COMM_SELF, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	io_fill(out, sizeof(out), rank, 0);
	OK(MPI_File_write_at(fh, 0, out, sizeof(out), MPI_BYTE, &st));
	OK(MPI_File_iread_at(fh, 0, in, sizeof(in), MPI_BYTE, &req));
	while (!flag) {
		OK(MPI_Test(&req, &flag, &st));
		spins++;
	}
	CHECK(req == MPI_REQUEST_NULL, "a completed request is not MPI_REQUEST_NULL");
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == (int)sizeof(in), "iread_at by MPI_Test: %d bytes after %ld tests", n, spins);
	CHECK_BYTES(in, sizeof(in), rank, 0, "iread_at by MPI_Test");
	/* Testall: both or neither. */
	OK(MPI_File_iwrite_at(fh, 8192, out, 100, MPI_BYTE, &two[0]));
	OK(MPI_File_iread_at(fh, 100, in, 100, MPI_BYTE, &two[1]));
	flag = 0;
	while (!flag)
		OK(MPI_Testall(2, two, &flag, sts));
	OK(MPI_Get_count(&sts[1], MPI_BYTE, &n));
	CHECK(n == 100, "iread_at by MPI_Testall: %d bytes", n);
	CHECK_BYTES(in, 100, rank, 100, "iread_at by MPI_Testall");
	OK(MPI_File_close(&fh));
}

static void test_free(void)
{
	unsigned char out[1000], in[1000];
	MPI_Request req;
	MPI_Status st;
	MPI_File fh;
	char name[32];
	long tries = 0;
	int flag;

	snprintf(name, sizeof(name), "free%d", rank);
	OK(MPI_File_open(MPI_COMM_SELF, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	io_fill(out, sizeof(out), rank, 50);
	OK(MPI_File_iwrite_at(fh, 50, out, sizeof(out), MPI_BYTE, &req));
	OK(MPI_Request_free(&req));
	CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
	for (;;) {
		int n = 0;

		OK(MPI_File_read_at(fh, 50, in, sizeof(in), MPI_BYTE, &st));
		MPI_Get_count(&st, MPI_BYTE, &n);
		if (n == (int)sizeof(in) && io_diff(in, sizeof(in), rank, 50) < 0)
			break;
		/* MPI calls that make progress: MPICH completes its file
		 * requests only in them. */
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
		if (++tries % 1000 == 0)
			usleep(1000);
	}
	OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "many", test_many },
		{ "ptr", test_ptr },
		{ "test", test_test },
		{ "free", test_free },
	};

	return io_main(argc, argv, "io_nonblock", tests, sizeof(tests) / sizeof(tests[0]));
}
