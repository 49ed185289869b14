/* SPDX-License-Identifier: MIT */
/*
 * io_edges.c - the corners of the I/O chapter that real test suites and
 * libraries reach and the other programs do not:
 *
 *   bipload -sz N io_edges TEST
 *
 * current  MPI_File_set_view with MPI_DISPLACEMENT_CURRENT on an
 *          MPI_MODE_SEQUENTIAL file, some ranks coming late: every rank
 *          gets the position the shared pointer had when the call began
 *          (not the 0 that set_view makes of it afterwards)
 * zero     a collective write and read where some ranks' filetype holds
 *          no data (size 0) and they access nothing
 * eof      a collective read past the end of the file, under two-phase
 *          I/O (forced by the hints): the count says what was there, and
 *          the program's bytes past it keep their value (MPICH 4.0
 *          counts the whole request there)
 * pending  MPI_File_set_view while an MPI_File_iwrite_all started under the
 *          previous view is pending: the write lands where the old view
 *          said (the standard makes this erroneous; codes do it, and it is
 *          accepted)
 */
#include <unistd.h>

#include "iocheck.h"

static void test_current(void)
{
	const char *path = io_path("cur");
	int v[8] = { -1, 0, 1, 2, 3, 4, 5, 6 }, x = -7, n;
	MPI_Offset disp;
	MPI_Datatype et, ft;
	char rep[MPI_MAX_DATAREP_STRING];
	MPI_File fh;
	MPI_Status st;

	if (rank == 0) {
		OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
				 MPI_INFO_NULL, &fh));
		OK(MPI_File_write(fh, v, 8, MPI_INT, &st));
		OK(MPI_File_close(&fh));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
			 &fh));
	/* the header: the shared pointer moves to byte 4 */
	if (rank == 0)
		OK(MPI_File_read_shared(fh, &x, 1, MPI_INT, &st));
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank != 0)
		usleep(100000); /* the others come to the collective call later */
	OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native",
			     MPI_INFO_NULL));
	OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	CHECK(disp == 4, "the displacement is %lld, not 4", (long long)disp);
	OK(MPI_File_read_ordered(fh, &x, 1, MPI_INT, &st));
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == (rank < 7 ? 1 : 0), "read_ordered read %d ints", n);
	if (rank < 7)
		CHECK(x == rank, "read_ordered gave %d, not %d", x, rank);
	OK(MPI_File_close(&fh));
}

static void test_zero(void)
{
	const int per = 3, writers = size > 1 ? size - 1 : 1;
	int buf[3], got[3], n = rank < writers ? per : 0, disp[3], i, cnt;
	MPI_Datatype t0, t;
	MPI_Status st;
	MPI_File fh;

	/* writers own ints rank, rank + writers, rank + 2 * writers */
	for (i = 0; i < per; i++) {
		disp[i] = rank + i * writers;
		buf[i] = 1000 * rank + i;
	}
	MPI_Type_create_indexed_block(n, 1, disp, MPI_INT, &t0);
	MPI_Type_create_resized(t0, 0, (MPI_Aint)(per * writers * sizeof(int)), &t);
	MPI_Type_commit(&t);
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("zero"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL));
	OK(MPI_File_write_all(fh, buf, n, MPI_INT, &st));
	MPI_Get_count(&st, MPI_INT, &cnt);
	CHECK(cnt == n, "write_all wrote %d ints, not %d", cnt, n);
	memset(got, 0, sizeof(got));
	OK(MPI_File_read_at_all(fh, 0, got, n, MPI_INT, &st));
	for (i = 0; i < n; i++)
		CHECK(got[i] == buf[i], "int %d read back as %d, not %d", i, got[i], buf[i]);
	OK(MPI_File_close(&fh));
	MPI_Type_free(&t);
	MPI_Type_free(&t0);
}

static void test_eof(void)
{
	unsigned char buf[64];
	MPI_Info info;
	MPI_Status st;
	MPI_File fh;
	int i, n;

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_cb_read", "enable");
	MPI_Info_set(info, "romio_cb_write", "enable");
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("eof"), MPI_MODE_CREATE | MPI_MODE_RDWR, info,
			 &fh));
	MPI_Info_free(&info);
	for (i = 0; i < 64; i++)
		buf[i] = (unsigned char)i;
	/* 5 bytes in all */
	OK(MPI_File_write_at_all(fh, 0, buf, rank == 0 ? 5 : 0, MPI_BYTE, &st));
	memset(buf, 99, sizeof(buf));
	/* each rank asks for 10 bytes from byte 2 * rank: what is before byte 5 comes */
	OK(MPI_File_read_at_all(fh, 2 * rank, buf, 10, MPI_BYTE, &st));
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == (2 * rank < 5 ? 5 - 2 * rank : 0), "rank %d read %d bytes", rank, n);
	for (i = 0; i < n; i++)
		CHECK(buf[i] == 2 * rank + i, "byte %d is %d", i, buf[i]);
	for (i = n; i < 64; i++)
		if (buf[i] != 99) {
			CHECK(buf[i] == 99, "byte %d past the end was overwritten (%d)", i, buf[i]);
			break;
		}
	OK(MPI_File_close(&fh));
}

static void test_pending(void)
{
	int a[4], b[4 * 64], i;
	MPI_Request r;
	MPI_Status st;
	MPI_File fh;

	for (i = 0; i < 4; i++)
		a[i] = 100 * rank + i;
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("pend"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(a), MPI_INT, MPI_INT, "native",
			     MPI_INFO_NULL));
	OK(MPI_File_iwrite_all(fh, a, 4, MPI_INT, &r));
	OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	OK(MPI_Wait(&r, &st));
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	OK(MPI_File_read_at_all(fh, 0, b, 4 * size, MPI_INT, &st));
	for (i = 0; i < 4 * size; i++)
		CHECK(b[i] == 100 * (i / 4) + i % 4, "int %d is %d", i, b[i]);
	OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "current", test_current },
		{ "zero", test_zero },
		{ "eof", test_eof },
		{ "pending", test_pending },
	};

	return io_main(argc, argv, "io_edges", tests, sizeof(tests) / sizeof(tests[0]));
}
