/* SPDX-License-Identifier: MIT */
/*
 * io_basic.c - the file object (MPI-3.1 13.2 to 13.4): opening, closing,
 * sizes, pointers and the queries, each test at several process counts.
 *
 *   bipload -sz N io_basic TEST
 *
 * modes     CREATE|EXCL, RDONLY, WRONLY, RDWR, APPEND (every pointer at the
 *           end), DELETE_ON_CLOSE (gone after the close), SEQUENTIAL with
 *           the shared pointer, files of MPI_COMM_SELF; what each rank
 *           wrote with write_at read back by every rank
 * pointers  the individual pointer: seek SET, CUR and END, get_position,
 *           get_byte_offset with and without a displacement, reads moving
 *           the pointer by what they read (a short read at the end of the
 *           file by what it read: 13.4.3, "the number of etypes read";
 *           Open MPI 4.1 moves it by the count asked for)
 * size      get_size, set_size up and down, preallocate (never shrinks,
 *           keeps what was written), a write past the end
 * query     get_amode, get_group, get_atomicity, sync, the default error
 *           handler, c2f/f2c, MPI_File_delete
 * info      get_info with the hints in use, hints given at open and by
 *           set_info.  The hint names are ROMIO's (cb_buffer_size, cb_nodes,
 *           romio_cb_read, romio_cb_write), which the shim implements: an
 *           MPI library may ignore hints and report none (Open MPI's ompio
 *           reports none of these)
 */
#include "iocheck.h"

#define REC 64

/* Every rank writes REC bytes of its own at rank * REC with write_at. */
static void write_records(MPI_File fh)
{
	unsigned char buf[REC];
	MPI_Status st;
	int n = -1;

	io_fill(buf, REC, rank, (int64_t)rank * REC);
	OK(MPI_File_write_at(fh, (MPI_Offset)rank * REC, buf, REC, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == REC, "write_at wrote %d bytes, want %d", n, REC);
}

/* Every rank reads the whole file and checks every rank's record. */
static void check_records(MPI_File fh, int nrec)
{
	unsigned char *buf = malloc((size_t)nrec * REC);
	MPI_Status st;
	int r, n = -1;

	OK(MPI_File_read_at(fh, 0, buf, nrec * REC, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == nrec * REC, "read_at read %d bytes, want %d", n, nrec * REC);
	for (r = 0; r < nrec; r++)
		CHECK_BYTES(buf + r * REC, REC, r, (int64_t)r * REC, "record");
	free(buf);
}

static void test_modes(void)
{
	const char *path = io_path("modes");
	unsigned char buf[REC], self[32];
	MPI_File fh;
	MPI_Offset sz, pos;
	MPI_Status st;
	char name[64];
	int n;

	/* CREATE|EXCL on a new file, then RDWR: each rank's record. */
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	CHECK(io_exists(path), "no file after CREATE|EXCL");
	write_records(fh);
	OK(MPI_File_close(&fh));
	CHECK(fh == MPI_FILE_NULL, "close did not set the handle to MPI_FILE_NULL");

	/* RDONLY: every record, by every rank. */
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	check_records(fh, size);
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == (MPI_Offset)size * REC, "size %lld, want %lld", (long long)sz,
	      (long long)size * REC);
	OK(MPI_File_close(&fh));

	/* WRONLY: rewrite the records (the same bytes, another open). */
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	write_records(fh);
	OK(MPI_File_close(&fh));

	/* APPEND: every pointer starts at the end; rank 0 adds a record
	 * through its individual pointer. */
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
			 &fh));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (MPI_Offset)size * REC, "APPEND: individual pointer at %lld, want %lld",
	      (long long)pos, (long long)size * REC);
	OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == (MPI_Offset)size * REC, "APPEND: shared pointer at %lld, want %lld",
	      (long long)pos, (long long)size * REC);
	if (rank == 0) {
		io_fill(buf, REC, size, (int64_t)size * REC);
		OK(MPI_File_write(fh, buf, REC, MPI_BYTE, &st));
	}
	OK(MPI_File_close(&fh));
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	check_records(fh, size + 1);
	OK(MPI_File_close(&fh));

	/* DELETE_ON_CLOSE: there while open, gone after the close. */
	path = io_path("doc");
	OK(MPI_File_open(MPI_COMM_WORLD, path,
			 MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
			 &fh));
	write_records(fh);
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	check_records(fh, size);
	CHECK(io_exists(path), "DELETE_ON_CLOSE file missing while open");
	OK(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(!io_exists(path), "DELETE_ON_CLOSE file still there after the close");

	/* SEQUENTIAL: the shared pointer only; each rank's record once. */
	path = io_path("seq");
	OK(MPI_File_open(MPI_COMM_WORLD, path,
			 MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
			 &fh));
	memset(buf, 'a' + rank % 26, REC);
	buf[0] = (unsigned char)rank;
	OK(MPI_File_write_shared(fh, buf, REC, MPI_BYTE, &st));
	OK(MPI_File_close(&fh));
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == (MPI_Offset)size * REC, "SEQUENTIAL: size %lld, want %lld", (long long)sz,
	      (long long)size * REC);
	{
		/* Each rank reads one record through the shared pointer:
		 * together they have seen each writer once. */
		int *seen = calloc((size_t)size, sizeof(int)), *all = calloc((size_t)size, sizeof(int));
		int r, i;

		OK(MPI_File_read_shared(fh, buf, REC, MPI_BYTE, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &n));
		CHECK(n == REC, "read_shared read %d bytes", n);
		r = buf[0];
		CHECK(r < size, "record of writer %d", r);
		for (i = 1; r < size && i < REC; i++)
			if (buf[i] != 'a' + r % 26)
				break;
		CHECK(i == REC, "record of writer %d mixed at byte %d", r, i);
		if (r < size)
			seen[r]++;
		MPI_Allreduce(seen, all, size, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		for (r = 0; r < size; r++)
			CHECK(all[r] == 1, "the record of rank %d read %d times", r, all[r]);
		free(seen);
		free(all);
	}
	OK(MPI_File_close(&fh));

	/* A file of each rank's own, opened on MPI_COMM_SELF. */
	snprintf(name, sizeof(name), "self%d", rank);
	path = io_path(name);
	OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			 &fh));
	io_fill(self, sizeof(self), rank, 1000);
	OK(MPI_File_write_at(fh, 1000, self, sizeof(self), MPI_BYTE, &st));
	memset(self, 0, sizeof(self));
	OK(MPI_File_read_at(fh, 1000, self, sizeof(self), MPI_BYTE, &st));
	CHECK_BYTES(self, sizeof(self), rank, 1000, "MPI_COMM_SELF file");
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 1000 + (MPI_Offset)sizeof(self), "size %lld", (long long)sz);
	OK(MPI_File_close(&fh));
}

static void test_pointers(void)
{
	const char *path = io_path("ptr");
	const int total = 64 * size;
	unsigned char *all = malloc((size_t)total), buf[16];
	MPI_Offset pos, off;
	MPI_Status st;
	MPI_File fh;
	int ints[3], n;

	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			 &fh));
	if (rank == 0) {
		io_fill(all, (size_t)total, 0, 0);
		OK(MPI_File_write(fh, all, total, MPI_BYTE, &st));
		OK(MPI_File_get_position(fh, &pos));
		CHECK(pos == total, "after writing %d bytes, pointer at %lld", total,
		      (long long)pos);
	}
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));

	/* Every process has a pointer of its own, at 0 after the open. */
	OK(MPI_File_seek(fh, 0, MPI_SEEK_CUR));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (rank == 0 ? total : 0), "pointer at %lld", (long long)pos);

	OK(MPI_File_seek(fh, (MPI_Offset)rank * 8, MPI_SEEK_SET));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == rank * 8, "SEEK_SET %d: at %lld", rank * 8, (long long)pos);
	OK(MPI_File_read(fh, buf, 8, MPI_BYTE, &st));
	CHECK_BYTES(buf, 8, 0, (int64_t)rank * 8, "read after SEEK_SET");
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == rank * 8 + 8, "after reading 8: at %lld", (long long)pos);
	OK(MPI_File_seek(fh, -4, MPI_SEEK_CUR));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == rank * 8 + 4, "SEEK_CUR -4: at %lld", (long long)pos);
	OK(MPI_File_read(fh, buf, 4, MPI_BYTE, &st));
	CHECK_BYTES(buf, 4, 0, (int64_t)rank * 8 + 4, "read after SEEK_CUR");
	OK(MPI_File_seek(fh, -3, MPI_SEEK_END));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == total - 3, "SEEK_END -3: at %lld, want %d", (long long)pos, total - 3);
	OK(MPI_File_read(fh, buf, 16, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == 3, "reading 16 bytes 3 before the end read %d", n);
	CHECK_BYTES(buf, 3, 0, total - 3, "read at the end");
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == total, "after the short read: at %lld", (long long)pos);
	OK(MPI_File_read(fh, buf, 16, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(n == 0, "a read at the end read %d bytes", n);
	/* Past the end is allowed. */
	OK(MPI_File_seek(fh, 10, MPI_SEEK_END));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == total + 10, "SEEK_END +10: at %lld", (long long)pos);
	OK(MPI_File_get_byte_offset(fh, 5, &off));
	CHECK(off == 5, "byte offset of 5 with the default view: %lld", (long long)off);

	/* A view of ints from displacement 8: positions count ints. */
	OK(MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == 0, "set_view did not reset the pointer: %lld", (long long)pos);
	OK(MPI_File_get_byte_offset(fh, 2, &off));
	CHECK(off == 8 + 2 * (MPI_Offset)sizeof(int), "byte offset of int 2: %lld",
	      (long long)off);
	OK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
	OK(MPI_File_read(fh, ints, 3, MPI_INT, &st));
	CHECK_BYTES(ints, sizeof(ints), 0, 8 + sizeof(int), "ints through the view");
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == 4, "after reading ints 1 to 3: at %lld", (long long)pos);
	OK(MPI_File_get_byte_offset(fh, pos, &off));
	CHECK(off == 8 + 4 * (MPI_Offset)sizeof(int), "byte offset of the pointer: %lld",
	      (long long)off);
	OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (total - 8) / (MPI_Offset)sizeof(int) - 1, "SEEK_END -1 in ints: at %lld",
	      (long long)pos);
	OK(MPI_File_close(&fh));
	free(all);
}

static void test_size(void)
{
	const char *path = io_path("size");
	unsigned char buf[64];
	MPI_Offset sz;
	MPI_Status st;
	MPI_File fh;
	int i;

	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			 &fh));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 0, "new file of size %lld", (long long)sz);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		memset(buf, 0xab, sizeof(buf));
		OK(MPI_File_write_at(fh, 0, buf, 40, MPI_BYTE, &st));
	}
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 40, "size %lld after writing 40", (long long)sz);
	/* A collective call need not synchronise: nobody changes the size
	 * before everyone has seen it. */
	MPI_Barrier(MPI_COMM_WORLD);

	/* Growing leaves what was written alone; the new bytes are
	 * undefined (13.2.4): only the written ones are checked. */
	OK(MPI_File_set_size(fh, 100));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 100, "size %lld after set_size(100)", (long long)sz);
	OK(MPI_File_read_at(fh, 0, buf, 40, MPI_BYTE, &st));
	for (i = 0; i < 40; i++)
		CHECK(buf[i] == 0xab, "byte %d after growing is %#x", i, buf[i]);
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_set_size(fh, 10));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 10, "size %lld after set_size(10)", (long long)sz);
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_preallocate(fh, 1000));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 1000, "size %lld after preallocate(1000)", (long long)sz);
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_preallocate(fh, 50));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 1000, "preallocate(50) changed the size to %lld", (long long)sz);
	/* Preallocated bytes are undefined too; the first 10 are kept. */
	OK(MPI_File_read_at(fh, 0, buf, 10, MPI_BYTE, &st));
	for (i = 0; i < 10; i++)
		CHECK(buf[i] == 0xab, "byte %d after preallocate is %#x", i, buf[i]);

	/* A write past the end by the last rank: everyone sees the size. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == size - 1)
		OK(MPI_File_write_at(fh, 5000, buf, 7, MPI_BYTE, &st));
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 5007, "size %lld after a write of 7 at 5000", (long long)sz);
	OK(MPI_File_close(&fh));
}

static void test_query(void)
{
	const char *path = io_path("query");
	const int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
	MPI_Group g, wg;
	MPI_Errhandler eh;
	MPI_File fh, fh2;
	MPI_Fint f;
	int got, cmp, flag;

	OK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
	OK(MPI_File_get_amode(fh, &got));
	CHECK(got == amode, "amode %#x, want %#x", got, amode);
	OK(MPI_File_get_group(fh, &g));
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	OK(MPI_Group_compare(g, wg, &cmp));
	CHECK(cmp == MPI_IDENT, "the file's group compares %d to the world's", cmp);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
	OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 0, "atomicity %d after the open", flag);
	OK(MPI_File_set_atomicity(fh, 1));
	OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 1, "atomicity %d after set_atomicity(1)", flag);
	OK(MPI_File_set_atomicity(fh, 0));
	OK(MPI_File_sync(fh));
	OK(MPI_File_get_errhandler(fh, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "a file's error handler is not MPI_ERRORS_RETURN");
	MPI_Errhandler_free(&eh);
	OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "the default file error handler is not MPI_ERRORS_RETURN");
	MPI_Errhandler_free(&eh);

	f = MPI_File_c2f(fh);
	fh2 = MPI_File_f2c(f);
	CHECK(fh2 == fh, "MPI_File_f2c(MPI_File_c2f(fh)) is another handle");
	CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL,
	      "MPI_FILE_NULL does not go through c2f and f2c");
	OK(MPI_File_close(&fh));

	/* A file of MPI_COMM_SELF: a group of one, with this rank. */
	OK(MPI_File_open(MPI_COMM_SELF, io_path(rank ? "q1" : "q0"),
			 MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	OK(MPI_File_get_group(fh, &g));
	OK(MPI_Group_size(g, &got));
	CHECK(got == 1, "a file of MPI_COMM_SELF has a group of %d", got);
	MPI_Group_free(&g);
	OK(MPI_File_close(&fh));

	/* MPI_File_delete: by one rank, seen by all. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		OK(MPI_File_delete(path, MPI_INFO_NULL));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(!io_exists(path), "the file is still there after MPI_File_delete");
}

/* The value of key in info, or "" if it has none (buf of 256). */
static const char *info_get(MPI_Info info, const char *key, char *buf)
{
	int flag = 0;

	OK(MPI_Info_get(info, key, 255, buf, &flag));
	if (!flag)
		buf[0] = 0;
	return buf;
}

static void test_info(void)
{
	const char *path = io_path("info");
	static const char *const keys[] = { "cb_buffer_size", "cb_nodes", "romio_cb_read",
					    "romio_cb_write" };
	char v[256];
	MPI_Info in, out;
	MPI_File fh;
	size_t i;

	/* The hints in use, without any given. */
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			 &fh));
	OK(MPI_File_get_info(fh, &out));
	CHECK(out != MPI_INFO_NULL, "get_info returned MPI_INFO_NULL");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK(*info_get(out, keys[i], v), "no hint %s in use", keys[i]);
	CHECK(atol(info_get(out, "cb_buffer_size", v)) > 0, "cb_buffer_size \"%s\"", v);
	CHECK(atoi(info_get(out, "cb_nodes", v)) >= 1, "cb_nodes \"%s\"", v);
	if (*info_get(out, "striping_unit", v))
		CHECK(atol(v) >= 0, "striping_unit \"%s\"", v);
	OK(MPI_Info_free(&out));
	OK(MPI_File_close(&fh));

	/* Hints given at the open are the ones in use. */
	MPI_Info_create(&in);
	MPI_Info_set(in, "cb_buffer_size", "8192");
	MPI_Info_set(in, "cb_nodes", "1");
	MPI_Info_set(in, "romio_cb_write", "enable");
	MPI_Info_set(in, "romio_cb_read", "disable");
	MPI_Info_set(in, "striping_unit", "65536");
	MPI_Info_set(in, "io_test_unknown_key", "whatever");
	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, in, &fh));
	MPI_Info_free(&in);
	OK(MPI_File_get_info(fh, &out));
	CHECK(!strcmp(info_get(out, "cb_buffer_size", v), "8192"), "cb_buffer_size \"%s\"", v);
	CHECK(!strcmp(info_get(out, "cb_nodes", v), "1"), "cb_nodes \"%s\"", v);
	CHECK(!strcmp(info_get(out, "romio_cb_write", v), "enable"), "romio_cb_write \"%s\"", v);
	CHECK(!strcmp(info_get(out, "romio_cb_read", v), "disable"), "romio_cb_read \"%s\"", v);
	OK(MPI_Info_free(&out));

	/* set_info: a hint that may change while the file is open. */
	MPI_Info_create(&in);
	MPI_Info_set(in, "romio_cb_read", "enable");
	OK(MPI_File_set_info(fh, in));
	MPI_Info_free(&in);
	OK(MPI_File_get_info(fh, &out));
	CHECK(!strcmp(info_get(out, "romio_cb_read", v), "enable"),
	      "romio_cb_read \"%s\" after set_info", v);
	CHECK(!strcmp(info_get(out, "cb_buffer_size", v), "8192"),
	      "cb_buffer_size \"%s\" after a set_info that did not name it", v);
	OK(MPI_Info_free(&out));
	OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "modes", test_modes }, { "pointers", test_pointers }, { "size", test_size },
		{ "query", test_query }, { "info", test_info },
	};

	return io_main(argc, argv, "io_basic", tests, sizeof(tests) / sizeof(tests[0]));
}
