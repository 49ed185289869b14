/* SPDX-License-Identifier: MIT */
/*
 * Data representations of the I/O chapter (lib/mpi_shim/io/datarep.c).
 * Cases (argv[1]):
 *
 * register    MPI_Register_datarep: a new name, and each misuse by its
 *             error class (the default file error handler returns them)
 * external32  the external32 bytes, byte by byte, through
 *             MPI_Pack_external: the conversion path the files share
 * file        a file written through an "external32" view holds those
 *             bytes (read back raw through a native view) and reads back
 *             as written; a registered representation's functions are
 *             called with the standard's arguments; a null conversion
 *             function moves native bytes, and is MPI_ERR_CONVERSION where
 *             the extent function's size is not the native one
 *
 * Errors are returned and checked by class.
 */
#include <mpi.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpicheck.h"

static int rank, size;

static int error_class(int rc)
{
	int cls = MPI_SUCCESS;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	return cls;
}

#define EXPECT_CLASS(call, want)                                                             \
	do {                                                                                 \
		int cls_ = error_class(call);                                                \
		CHECK(cls_ == (want), "%s: class %d, want %d (%s)", #call, cls_, (want),     \
		      #want);                                                                \
	} while (0)

static void check_bytes(const unsigned char *got, const unsigned char *want, size_t n,
			const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(got[i] == want[i], "%s: byte %zu is 0x%02x, want 0x%02x", what, i, got[i],
		      want[i]);
}

/* --- A registered representation: MPI_INT as 8 bytes, big-endian --- */

struct wide_state {
	int reads, writes, extents;
	MPI_Offset last_position;
	int last_count;
	int fail; /* the conversion functions return an error */
};

static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
	struct wide_state *s = extra;
	int sz;

	s->extents++;
	if (t == MPI_INT) {
		*extent = 8;
		return MPI_SUCCESS;
	}
	MPI_Type_size(t, &sz);
	*extent = sz;
	return MPI_SUCCESS;
}

/* userbuf holds ints (the test only passes MPI_INT); position counts them. */
static int wide_write(void *userbuf, MPI_Datatype t, int count, void *filebuf,
		      MPI_Offset position, void *extra)
{
	struct wide_state *s = extra;
	const int *in = (const int *)userbuf + position;
	unsigned char *out = filebuf;
	int i, k;

	s->writes++;
	s->last_position = position;
	s->last_count = count;
	if (s->fail || t != MPI_INT)
		return MPI_ERR_OTHER;
	for (i = 0; i < count; i++) {
		uint64_t v = (uint64_t)(int64_t)in[i];

		for (k = 0; k < 8; k++)
			out[8 * i + k] = (unsigned char)(v >> (56 - 8 * k));
	}
	return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype t, int count, void *filebuf,
		     MPI_Offset position, void *extra)
{
	struct wide_state *s = extra;
	int *out = (int *)userbuf + position;
	const unsigned char *in = filebuf;
	int i, k;

	s->reads++;
	s->last_position = position;
	s->last_count = count;
	if (s->fail || t != MPI_INT)
		return MPI_ERR_OTHER;
	for (i = 0; i < count; i++) {
		uint64_t v = 0;

		for (k = 0; k < 8; k++)
			v = v << 8 | in[8 * i + k];
		out[i] = (int)(int64_t)v;
	}
	return MPI_SUCCESS;
}

/* The native size of every type: what a null conversion function needs. */
static int same_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
	int sz;

	(void)extra;
	MPI_Type_size(t, &sz);
	*extent = sz;
	return MPI_SUCCESS;
}

static int failing_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
	(void)t;
	(void)extent;
	(void)extra;
	return MPI_ERR_OTHER;
}

static struct wide_state wide;

/* --- register --- */

static void case_register(void)
{
	char name[MPI_MAX_DATAREP_STRING + 1];

	OK(MPI_Register_datarep("io_datarep_wide", wide_read, wide_write, wide_extent, &wide));
	/* Registering never asks the extent function anything. */
	CHECK(wide.extents == 0, "the extent function was called %d times", wide.extents);
	EXPECT_CLASS(MPI_Register_datarep("io_datarep_wide", wide_read, wide_write, wide_extent,
					  NULL),
		     MPI_ERR_DUP_DATAREP);
	EXPECT_CLASS(MPI_Register_datarep("native", NULL, NULL, same_extent, NULL),
		     MPI_ERR_DUP_DATAREP);
	EXPECT_CLASS(MPI_Register_datarep("internal", NULL, NULL, same_extent, NULL),
		     MPI_ERR_DUP_DATAREP);
	EXPECT_CLASS(MPI_Register_datarep("external32", NULL, NULL, same_extent, NULL),
		     MPI_ERR_DUP_DATAREP);
	EXPECT_CLASS(MPI_Register_datarep(NULL, NULL, NULL, same_extent, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Register_datarep("", NULL, NULL, same_extent, NULL), MPI_ERR_ARG);
	EXPECT_CLASS(MPI_Register_datarep("io_datarep_noextent", NULL, NULL, NULL, NULL),
		     MPI_ERR_ARG);
	/* The longest name has MPI_MAX_DATAREP_STRING - 1 characters. */
	memset(name, 'x', sizeof(name));
	name[MPI_MAX_DATAREP_STRING] = '\0';
	EXPECT_CLASS(MPI_Register_datarep(name, NULL, NULL, same_extent, NULL), MPI_ERR_ARG);
	name[MPI_MAX_DATAREP_STRING - 1] = '\0';
	OK(MPI_Register_datarep(name, NULL, NULL, same_extent, NULL));
	/* Null conversion functions are allowed in either direction. */
	OK(MPI_Register_datarep("io_datarep_plain", MPI_CONVERSION_FN_NULL,
				MPI_CONVERSION_FN_NULL, same_extent, NULL));
}

/* --- external32 through MPI_Pack_external --- */

static void pack_one(const void *value, MPI_Datatype t, const unsigned char *want, size_t n,
		     const char *what)
{
	unsigned char out[32];
	MPI_Aint pos = 0;

	memset(out, 0xee, sizeof(out));
	OK(MPI_Pack_external("external32", value, 1, t, out, sizeof(out), &pos));
	CHECK(pos == (MPI_Aint)n, "%s: %ld bytes, want %zu", what, (long)pos, n);
	check_bytes(out, want, n, what);
	CHECK(out[n] == 0xee, "%s: a byte past the value was written", what);
}

static void case_external32(void)
{
	int i32 = 0x01020304;
	double d = 1.0;
	long l = -5, big = (long)1 << 40;
	unsigned long ubig = (unsigned long)1 << 32;
	static const unsigned char e_i32[] = {0x01, 0x02, 0x03, 0x04},
				   e_d[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0},
				   e_l[] = {0xff, 0xff, 0xff, 0xfb};
	unsigned char out[16];
	MPI_Aint pos = 0;

	pack_one(&i32, MPI_INT, e_i32, 4, "MPI_INT 0x01020304");
	pack_one(&d, MPI_DOUBLE, e_d, 8, "MPI_DOUBLE 1.0");
	pack_one(&l, MPI_LONG, e_l, 4, "MPI_LONG -5");
	if (sizeof(long) > 4) {
		EXPECT_CLASS(MPI_Pack_external("external32", &big, 1, MPI_LONG, out, sizeof(out),
					       &pos),
			     MPI_ERR_CONVERSION);
		CHECK(pos == 0, "a failed pack moved position to %ld", (long)pos);
		EXPECT_CLASS(MPI_Pack_external("external32", &ubig, 1, MPI_UNSIGNED_LONG, out,
					       sizeof(out), &pos),
			     MPI_ERR_CONVERSION);
	}
}

/* --- file --- */

/* One name for every rank: rank 0's, with its process id. */
static const char *file_name(void)
{
	static char name[256];
	const char *dir = getenv("TMPDIR");

	if (!name[0]) {
		if (rank == 0)
			snprintf(name, sizeof(name), "%s/io_datarep.%ld", dir ? dir : ".",
				 (long)getpid());
		OK(MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD));
	}
	return name;
}

/* The first n bytes of the file as they are, on every rank, through a
 * native view of bytes (MPI_File_set_view is collective); the view of
 * datarep again after. */
static void read_raw(MPI_File fh, unsigned char *buf, int n, const char *datarep)
{
	MPI_Status st;
	int got;

	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	OK(MPI_File_read_at(fh, 0, buf, n, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &got));
	CHECK(got == n, "read %d raw bytes, want %d", got, n);
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, datarep, MPI_INFO_NULL));
}

static void case_file(void)
{
	/* Each rank writes its two ints and its double at its own 16 bytes. */
	int ints[2] = {0x01020304 + rank, -2}, back[2];
	double dbl = 1.0, dback;
	long big = (long)1 << 40;
	MPI_Aint ext;
	MPI_File fh;
	MPI_Status st;
	unsigned char raw[64];
	const MPI_Offset mine = 16 * (MPI_Offset)rank;
	int i, rc;

	OK(MPI_Register_datarep("io_datarep_wide", wide_read, wide_write, wide_extent, &wide));
	OK(MPI_Register_datarep("io_datarep_plain", MPI_CONVERSION_FN_NULL,
				MPI_CONVERSION_FN_NULL, same_extent, NULL));
	OK(MPI_Register_datarep("io_datarep_nullwide", NULL, NULL, wide_extent, &wide));
	OK(MPI_Register_datarep("io_datarep_nosize", NULL, NULL, failing_extent, NULL));
	OK(MPI_File_open(MPI_COMM_WORLD, file_name(), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));

	/* external32: the bytes of the standard, and back. */
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
	OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
	CHECK(ext == 4, "external32 extent of MPI_INT %ld", (long)ext);
	OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
	CHECK(ext == 4, "external32 extent of MPI_LONG %ld", (long)ext);
	OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
	CHECK(ext == 8, "external32 extent of MPI_DOUBLE %ld", (long)ext);
	OK(MPI_File_write_at(fh, mine, ints, 2, MPI_INT, &st));
	OK(MPI_File_write_at(fh, mine + 8, &dbl, 1, MPI_DOUBLE, &st));
	if (sizeof(long) > 4)
		EXPECT_CLASS(MPI_File_write_at(fh, mine, &big, 1, MPI_LONG, &st),
			     MPI_ERR_CONVERSION);
	OK(MPI_File_sync(fh));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_File_sync(fh));
	read_raw(fh, raw, 16 * size, "external32");
	for (i = 0; i < size; i++) {
		const unsigned char want[16] = {0x01, 0x02, 0x03, 0x04 + i, 0xff, 0xff, 0xff, 0xfe,
						0x3f, 0xf0, 0,    0,    0,    0,    0,    0};

		check_bytes(raw + 16 * i, want, 16, "external32 in the file");
	}
	memset(back, 0, sizeof(back));
	OK(MPI_File_read_at(fh, mine, back, 2, MPI_INT, &st));
	OK(MPI_File_read_at(fh, mine + 8, &dback, 1, MPI_DOUBLE, &st));
	CHECK(back[0] == ints[0] && back[1] == ints[1] && dback == 1.0,
	      "external32 read back %#x %d %g", back[0], back[1], dback);
	OK(MPI_Barrier(MPI_COMM_WORLD));

	/* A registered representation: an int takes 8 bytes, big-endian. */
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "io_datarep_wide", MPI_INFO_NULL));
	OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
	CHECK(ext == 8, "io_datarep_wide extent of MPI_INT %ld", (long)ext);
	OK(MPI_File_write_at(fh, mine, ints, 2, MPI_INT, &st));
	CHECK(wide.writes >= 1 && wide.last_position == 0 && wide.last_count == 2,
	      "write function: %d calls, position %lld, count %d", wide.writes,
	      (long long)wide.last_position, wide.last_count);
	wide.fail = 1;
	EXPECT_CLASS(MPI_File_write_at(fh, mine, ints, 2, MPI_INT, &st), MPI_ERR_CONVERSION);
	wide.fail = 0;
	OK(MPI_File_sync(fh));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_File_sync(fh));
	read_raw(fh, raw, 16 * size, "io_datarep_wide");
	for (i = 0; i < size; i++) {
		const unsigned char want[16] = {0,    0,    0,    0,    0x01, 0x02, 0x03, 0x04 + i,
						0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};

		check_bytes(raw + 16 * i, want, 16, "io_datarep_wide in the file");
	}
	memset(back, 0, sizeof(back));
	OK(MPI_File_read_at(fh, mine, back, 2, MPI_INT, &st));
	CHECK(back[0] == ints[0] && back[1] == ints[1], "io_datarep_wide read back %#x %d",
	      back[0], back[1]);
	CHECK(wide.reads >= 1, "the read function was not called");
	OK(MPI_Barrier(MPI_COMM_WORLD));

	/* Null conversion functions: the native bytes when the sizes are
	 * native... */
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "io_datarep_plain", MPI_INFO_NULL));
	OK(MPI_File_write_at(fh, mine, ints, 2, MPI_INT, &st));
	memset(back, 0, sizeof(back));
	OK(MPI_File_read_at(fh, mine, back, 2, MPI_INT, &st));
	CHECK(back[0] == ints[0] && back[1] == ints[1], "io_datarep_plain read back %#x %d",
	      back[0], back[1]);
	/* ...and an error when the extent function gives another size... */
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "io_datarep_nullwide", MPI_INFO_NULL));
	EXPECT_CLASS(MPI_File_write_at(fh, mine, ints, 2, MPI_INT, &st), MPI_ERR_CONVERSION);
	EXPECT_CLASS(MPI_File_read_at(fh, mine, back, 2, MPI_INT, &st), MPI_ERR_CONVERSION);
	/* ...or fails (when the view is set, or when a size is first needed). */
	rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "io_datarep_nosize", MPI_INFO_NULL);
	if (rc == MPI_SUCCESS)
		rc = MPI_File_get_type_extent(fh, MPI_INT, &ext);
	EXPECT_CLASS(rc, MPI_ERR_CONVERSION);

	OK(MPI_File_close(&fh));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		OK(MPI_File_delete(file_name(), MPI_INFO_NULL));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{"register", case_register},
	{"external32", case_external32},
	{"file", case_file},
};

int main(int argc, char **argv)
{
	size_t i;
	int found = 0;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		found = 1;
		cases[i].fn();
	}
	CHECK(found, "no case named %s", argc > 1 ? argv[1] : "");
	OK(MPI_Finalize());
	return 0;
}
