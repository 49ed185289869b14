/* SPDX-License-Identifier: MIT */
/*
 * io_errors.c - misuse of the I/O calls, each by its error class
 * (MPI-3.1 13.7, Table 13.3), under MPI_ERRORS_RETURN, the default
 * handler of files.  After each open that fails nothing was created.
 *
 *   bipload -sz N io_errors TEST
 *
 * open    RDONLY|RDWR, no access mode, RDONLY|CREATE, RDONLY|EXCL,
 *         RDWR|SEQUENTIAL: MPI_ERR_AMODE (13.2.1 calls them erroneous);
 *         CREATE|EXCL on a file that exists: MPI_ERR_FILE_EXISTS; a
 *         missing file: MPI_ERR_NO_SUCH_FILE; a directory opened for
 *         writing: MPI_ERR_BAD_FILE ("invalid file name": the name is
 *         not one of a file; MPI_ERR_FILE is about handles, and there is
 *         none yet; MPICH says the same); a file without permission:
 *         MPI_ERR_ACCESS (skipped as root, whom permissions do not stop);
 *         MPI_File_delete of a missing file: MPI_ERR_NO_SUCH_FILE
 * access  a write on a RDONLY file: MPI_ERR_READ_ONLY ("read-only file";
 *         MPICH and Open MPI agree); a read on a
 *         WRONLY one: MPI_ERR_ACCESS; a negative offset: MPI_ERR_ARG; an
 *         explicit offset, or MPI_File_seek, on a SEQUENTIAL file:
 *         MPI_ERR_UNSUPPORTED_OPERATION; MPI_FILE_NULL: MPI_ERR_FILE;
 *         nothing written by any of them (Open MPI 4.1 lets negative
 *         offsets through to the system and SEQUENTIAL files take
 *         explicit offsets: 13.2.1 and 13.4.2 make both erroneous, and
 *         MPICH refuses them with these classes)
 * view    a filetype whose size is not a multiple of the etype's:
 *         MPI_ERR_ARG; an unknown data representation:
 *         MPI_ERR_UNSUPPORTED_DATAREP; negative, decreasing or (in a
 *         file open for writing) overlapping displacements of the etype
 *         or filetype: MPI_ERR_IO
 * split   a second split collective begun before the first ended: an
 *         error (13.4.5 makes it erroneous and names no class); the first
 *         still ends well
 * space   the file system's refusals: a write past RLIMIT_FSIZE,
 *         MPI_ERR_NO_SPACE; the running executable opened for writing,
 *         MPI_ERR_FILE_IN_USE; a file error handler sees them
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "iocheck.h"

/* An open of path with amode that must fail with class cls and create
 * nothing (when path did not exist before). */
static void open_fails(const char *path, int amode, int cls, const char *what)
{
	int existed = io_exists(path), rc, c = MPI_SUCCESS;
	MPI_File fh = MPI_FILE_NULL;

	rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &c);
	CHECK(c == cls, "%s: class %s, want %s", what, io_class_name(c), io_class_name(cls));
	if (rc == MPI_SUCCESS)
		MPI_File_close(&fh);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!existed)
		CHECK(!io_exists(path), "%s: the failed open created the file", what);
}

static void test_open(void)
{
	const char *path = io_path("nofile"), *there = io_path("there");
	MPI_File fh;

	open_fails(path, MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_ERR_AMODE,
		   "RDONLY|RDWR");
	open_fails(path, MPI_MODE_CREATE, MPI_ERR_AMODE, "no access mode");
	open_fails(path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_ERR_AMODE, "RDONLY|CREATE");
	open_fails(path, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_ERR_AMODE, "RDONLY|EXCL");
	open_fails(path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE, MPI_ERR_AMODE,
		   "RDWR|SEQUENTIAL");
	open_fails(path, MPI_MODE_RDONLY, MPI_ERR_NO_SUCH_FILE, "missing file");
	open_fails(path, MPI_MODE_RDWR, MPI_ERR_NO_SUCH_FILE, "missing file, RDWR");

	/* A file that exists: CREATE|EXCL fails and leaves it as it was. */
	OK(MPI_File_open(MPI_COMM_WORLD, there, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			 &fh));
	if (rank == 0)
		OK(MPI_File_write_at(fh, 0, "abc", 3, MPI_CHAR, MPI_STATUS_IGNORE));
	OK(MPI_File_close(&fh));
	open_fails(there, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_ERR_FILE_EXISTS,
		   "CREATE|EXCL on an existing file");
	{
		struct stat st;

		CHECK(stat(there, &st) == 0 && st.st_size == 3,
		      "the failed CREATE|EXCL changed the file");
	}

	/* The scratch directory itself, opened for writing. */
	open_fails(io_dir, MPI_MODE_RDWR, MPI_ERR_BAD_FILE, "a directory");

	/* No permission. */
	if (geteuid() == 0) {
		if (rank == 0)
			printf("io_errors open: running as root, whom file permissions do not "
			       "stop: the MPI_ERR_ACCESS check is skipped\n");
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			CHECK(chmod(there, 0) == 0, "chmod: %s", strerror(errno));
		MPI_Barrier(MPI_COMM_WORLD);
		open_fails(there, MPI_MODE_RDONLY, MPI_ERR_ACCESS, "a file of mode 000");
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			chmod(there, 0600);
	}

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(path, MPI_INFO_NULL));
}

static void test_access(void)
{
	const char *path = io_path("acc");
	unsigned char buf[16] = "0123456789abcdef", got[16];
	MPI_Status st;
	MPI_Offset sz;
	MPI_File fh;

	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			 &fh));
	if (rank == 0)
		OK(MPI_File_write_at(fh, 0, buf, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, got, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_ARG, MPI_File_write_at(fh, -1, buf, 16, MPI_BYTE, &st));
	OK(MPI_File_close(&fh));

	OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	EXPECT(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 100, buf, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_READ_ONLY, MPI_File_write(fh, buf, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_ARG, MPI_File_read_at(fh, -5, got, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_ARG, MPI_File_seek(fh, -1, MPI_SEEK_SET));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 16, "the refused writes changed the size to %lld", (long long)sz);
	OK(MPI_File_read_at(fh, 0, got, 16, MPI_BYTE, &st));
	CHECK(!memcmp(got, buf, 16), "the refused writes changed the file");
	OK(MPI_File_close(&fh));

	/* SEQUENTIAL: the shared pointer only. */
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("seq"),
			 MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
			 &fh));
	EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_write_at(fh, 0, buf, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek(fh, 0, MPI_SEEK_SET));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 0, "refused explicit-offset write: size %lld", (long long)sz);
	OK(MPI_File_close(&fh));

	/* MPI_FILE_NULL: the default file error handler (ERRORS_RETURN). */
	fh = MPI_FILE_NULL;
	EXPECT(MPI_ERR_FILE, MPI_File_write_at(fh, 0, buf, 16, MPI_BYTE, &st));
	EXPECT(MPI_ERR_FILE, MPI_File_get_size(fh, &sz));
	EXPECT(MPI_ERR_FILE, MPI_File_close(&fh));
}

static void test_view(void)
{
	MPI_Datatype three;
	MPI_File fh;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("view"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	/* 3 bytes are no whole number of ints. */
	MPI_Type_contiguous(3, MPI_BYTE, &three);
	MPI_Type_commit(&three);
	EXPECT(MPI_ERR_ARG, MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL));
	EXPECT(MPI_ERR_UNSUPPORTED_DATAREP,
	       MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-representation",
				 MPI_INFO_NULL));
	/* Displacements that are negative, decreasing, or that overlap in a
	 * file open for writing: MPI_ERR_IO (MPICH's class; the standard
	 * names none), for the etype and the filetype; overlaps are accepted
	 * where the file is only read. */
	{
		int bl[2] = { 1, 1 }, neg[2] = { -2, 2 }, dec[2] = { 3, 0 }, ovl[2] = { 0, 1 };
		int bl3[2] = { 3, 1 };
		MPI_Datatype tn, td, to;
		MPI_File ro;

		MPI_Type_indexed(2, bl, neg, MPI_INT, &tn);
		MPI_Type_indexed(2, bl, dec, MPI_INT, &td);
		MPI_Type_indexed(2, bl3, ovl, MPI_INT, &to);
		MPI_Type_commit(&tn);
		MPI_Type_commit(&td);
		MPI_Type_commit(&to);
		EXPECT(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, tn, "native", MPI_INFO_NULL));
		EXPECT(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, td, "native", MPI_INFO_NULL));
		EXPECT(MPI_ERR_IO, MPI_File_set_view(fh, 0, MPI_INT, to, "native", MPI_INFO_NULL));
		EXPECT(MPI_ERR_IO, MPI_File_set_view(fh, 0, tn, tn, "native", MPI_INFO_NULL));
		OK(MPI_File_open(MPI_COMM_WORLD, io_path("view"), MPI_MODE_RDONLY, MPI_INFO_NULL,
				 &ro));
		EXPECT(MPI_ERR_IO, MPI_File_set_view(ro, 0, MPI_INT, td, "native", MPI_INFO_NULL));
		OK(MPI_File_set_view(ro, 0, MPI_INT, to, "native", MPI_INFO_NULL));
		OK(MPI_File_close(&ro));
		MPI_Type_free(&tn);
		MPI_Type_free(&td);
		MPI_Type_free(&to);
	}
	/* The file is still usable, its view the default. */
	OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	OK(MPI_File_close(&fh));
	MPI_Type_free(&three);
}

static void test_split(void)
{
	int a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[8], rc, c = MPI_SUCCESS;
	MPI_Status st;
	MPI_File fh;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("split"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * sizeof(a), a, 8, MPI_INT));
	rc = MPI_File_read_at_all_begin(fh, 0, b, 8, MPI_INT);
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &c);
	CHECK(c != MPI_SUCCESS, "a second split collective was begun");
	if (rank == 0)
		printf("io_errors split: a second begin: %s\n", io_class_name(c));
	OK(MPI_File_write_at_all_end(fh, a, &st));
	OK(MPI_File_close(&fh));
}

static int handler_calls, handler_class;

static void file_handler(MPI_File *fh, int *code, ...)
{
	(void)fh;
	handler_calls++;
	MPI_Error_class(*code, &handler_class);
}

/*
 * The classes of the file system's own refusals: a write past the
 * process's file size limit (RLIMIT_FSIZE, EFBIG) is MPI_ERR_NO_SPACE,
 * independent and collective (the same class on every rank), and nothing
 * past the limit is written; opening the running program's own
 * executable for writing (ETXTBSY) is MPI_ERR_FILE_IN_USE.  A handler
 * made by MPI_File_create_errhandler sees the class, and
 * MPI_File_call_errhandler calls it.
 */
static void test_space(void)
{
	static char buf[8192];
	char exe[4096];
	struct rlimit rl = { 1 << 20, 1 << 20 };
	MPI_Errhandler eh;
	MPI_Status st;
	MPI_Offset sz;
	MPI_File fh;
	ssize_t n;

	signal(SIGXFSZ, SIG_IGN);
	CHECK(!setrlimit(RLIMIT_FSIZE, &rl), "setrlimit: %s", strerror(errno));
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("space"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_create_errhandler(file_handler, &eh));
	OK(MPI_File_set_errhandler(fh, eh));
	EXPECT(MPI_ERR_NO_SPACE, MPI_File_write_at(fh, (MPI_Offset)(2 << 20) + rank * 8192, buf,
						   8192, MPI_BYTE, &st));
	CHECK(handler_calls == 1 && handler_class == MPI_ERR_NO_SPACE,
	      "the file's handler was called %d times, class %s", handler_calls,
	      io_class_name(handler_class));
	EXPECT(MPI_ERR_NO_SPACE, MPI_File_write_at_all(fh, (MPI_Offset)(3 << 20) + rank * 8192,
						       buf, 8192, MPI_BYTE, &st));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz <= (1 << 20), "the refused writes made the file %lld bytes", (long long)sz);
	MPI_File_call_errhandler(fh, MPI_ERR_IO);
	CHECK(handler_calls == 3 && handler_class == MPI_ERR_IO,
	      "MPI_File_call_errhandler: %d calls, class %s", handler_calls,
	      io_class_name(handler_class));
	OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	MPI_Errhandler_free(&eh);
	OK(MPI_File_close(&fh));

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		EXPECT(MPI_ERR_FILE_IN_USE,
		       MPI_File_open(MPI_COMM_WORLD, exe, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	}
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "open", test_open },
		{ "access", test_access },
		{ "view", test_view },
		{ "split", test_split },
		{ "space", test_space },
	};

	return io_main(argc, argv, "io_errors", tests, sizeof(tests) / sizeof(tests[0]));
}
