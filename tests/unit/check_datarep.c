/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the data representations (lib/mpi_shim/io/datarep.c)
 * through the chapter's internal calls: sizes and extents, the bytes of
 * native and external32, and the arguments a registered representation's
 * functions receive (section 13.5.3: the operation's buffer, counts and
 * positions in data items).  The calls through files are in
 * tests/mpi/io_datarep.c.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "shim.h"
#include "datatype.h"
#include "io.h"

/* What the registered functions saw, call by call. */
static struct {
	int calls, extents;
	void *userbuf;
	MPI_Datatype type;
	int count;
	MPI_Offset position;
	void *filebuf;
} seen;

static int rec_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
	(void)extra;
	seen.extents++;
	*extent = t == MPI_INT ? 8 : (MPI_Aint)t->size;
	return MPI_SUCCESS;
}

static int native_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
	(void)extra;
	*extent = (MPI_Aint)t->size;
	return MPI_SUCCESS;
}

/* Writes each int (the test passes only ints) as 8 bytes: 0x5a then the value. */
static int rec_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
		     void *extra)
{
	const int *in = (const int *)userbuf + position;
	unsigned char *out = filebuf;
	int i;

	(void)extra;
	seen.calls++;
	seen.userbuf = userbuf;
	seen.type = t;
	seen.count = count;
	seen.position = position;
	seen.filebuf = filebuf;
	for (i = 0; i < count; i++) {
		memset(out + 8 * i, 0x5a, 4);
		memcpy(out + 8 * i + 4, &in[i], 4);
	}
	return MPI_SUCCESS;
}

static int rec_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
		    void *extra)
{
	int *out = (int *)userbuf + position;
	const unsigned char *in = filebuf;
	int i;

	(void)extra;
	(void)t;
	seen.calls++;
	seen.count = count;
	seen.position = position;
	for (i = 0; i < count; i++)
		memcpy(&out[i], in + 8 * i + 4, 4);
	return MPI_SUCCESS;
}

static int fail_write(void *userbuf, MPI_Datatype t, int count, void *filebuf,
		      MPI_Offset position, void *extra)
{
	(void)userbuf, (void)t, (void)count, (void)filebuf, (void)position, (void)extra;
	return MPI_ERR_OTHER;
}

static void setup(void)
{
	/* MPI_Register_datarep checks that MPI is initialized; these calls
	 * need nothing else of MPI_Init. */
	mpi_shim.initialized = 1;
}

static void teardown(void)
{
	mpi_shim_datarep_fini();
	mpi_shim.initialized = 0;
}

START_TEST(test_find)
{
	ck_assert(mpi_shim_datarep_is_native(mpi_shim_datarep_find("native")));
	ck_assert(mpi_shim_datarep_is_native(mpi_shim_datarep_find("internal")));
	ck_assert(!mpi_shim_datarep_is_native(mpi_shim_datarep_find("external32")));
	ck_assert_str_eq(mpi_shim_datarep_name(mpi_shim_datarep_find("internal")), "internal");
	ck_assert_ptr_null(mpi_shim_datarep_find("nothing"));
	ck_assert_ptr_null(mpi_shim_datarep_find(NULL));
	ck_assert_int_eq(PMPI_Register_datarep("rec", rec_read, rec_write, rec_extent, NULL),
			 MPI_SUCCESS);
	ck_assert_ptr_nonnull(mpi_shim_datarep_find("rec"));
	mpi_shim_datarep_fini();
	ck_assert_ptr_null(mpi_shim_datarep_find("rec"));
}
END_TEST

START_TEST(test_native)
{
	const struct mpi_shim_datarep *rep = mpi_shim_datarep_find("native");
	int v[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0}, file[3];
	MPI_Datatype vec;
	MPI_Offset bytes;
	MPI_Aint ext;

	/* Every other int: the file holds the packed form. */
	ck_assert_int_eq(PMPI_Type_vector(3, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
	ck_assert_int_eq(PMPI_Type_commit(&vec), MPI_SUCCESS);
	ck_assert_int_eq(mpi_shim_datarep_size(rep, vec, 1, &bytes), MPI_SUCCESS);
	ck_assert_int_eq(bytes, 12);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, vec, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 20);
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v, 1, vec, file, 0), MPI_SUCCESS);
	ck_assert(file[0] == 1 && file[1] == 3 && file[2] == 5);
	ck_assert_int_eq(mpi_shim_datarep_from_file(rep, file, back, 1, vec, 0), MPI_SUCCESS);
	ck_assert(back[0] == 1 && back[1] == 0 && back[2] == 3 && back[4] == 5);
	PMPI_Type_free(&vec);
}
END_TEST

START_TEST(test_external32)
{
	const struct mpi_shim_datarep *rep = mpi_shim_datarep_find("external32");
	long l[3] = {-5, 7, 0x01020304}, big = (long)1 << 40, lback[3];
	int v[2] = {0x01020304, -2}, back[2];
	static const unsigned char e_l[] = {0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 7, 1, 2, 3, 4},
				   e_v[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
	unsigned char file[16];
	MPI_Datatype three, vec;
	MPI_Offset bytes;
	MPI_Aint ext;

	ck_assert_int_eq(mpi_shim_datarep_size(rep, MPI_LONG, 3, &bytes), MPI_SUCCESS);
	ck_assert_int_eq(bytes, 12);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, MPI_LONG, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 4);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, MPI_INT, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 4);
	/* No holes: the external32 size of one element. */
	ck_assert_int_eq(PMPI_Type_contiguous(3, MPI_LONG, &three), MPI_SUCCESS);
	ck_assert_int_eq(PMPI_Type_commit(&three), MPI_SUCCESS);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, three, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 12);
	/* Same sizes: the type's extent. */
	ck_assert_int_eq(PMPI_Type_vector(2, 1, 3, MPI_INT, &vec), MPI_SUCCESS);
	ck_assert_int_eq(PMPI_Type_commit(&vec), MPI_SUCCESS);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, vec, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 16);

	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, l, 1, three, file, 0), MPI_SUCCESS);
	ck_assert_mem_eq(file, e_l, 12);
	ck_assert_int_eq(mpi_shim_datarep_from_file(rep, file, lback, 1, three, 0), MPI_SUCCESS);
	ck_assert_mem_eq(lback, l, sizeof(l));
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v, 2, MPI_INT, file, 0), MPI_SUCCESS);
	ck_assert_mem_eq(file, e_v, 8);
	ck_assert_int_eq(mpi_shim_datarep_from_file(rep, file, back, 2, MPI_INT, 0), MPI_SUCCESS);
	ck_assert(back[0] == v[0] && back[1] == v[1]);
	if (sizeof(long) > 4)
		ck_assert_int_eq(mpi_shim_datarep_to_file(rep, &big, 1, MPI_LONG, file, 0),
				 MPI_ERR_CONVERSION);
	PMPI_Type_free(&three);
	PMPI_Type_free(&vec);
}
END_TEST

START_TEST(test_registered)
{
	const struct mpi_shim_datarep *rep;
	int v[8] = {10, 11, 12, 13, 14, 15, 16, 17}, back[8] = {0};
	unsigned char file[64];
	MPI_Datatype pair;
	MPI_Offset bytes;
	MPI_Aint ext;

	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(PMPI_Register_datarep("rec", rec_read, rec_write, rec_extent, NULL),
			 MPI_SUCCESS);
	rep = mpi_shim_datarep_find("rec");
	ck_assert_int_eq(PMPI_Type_contiguous(2, MPI_INT, &pair), MPI_SUCCESS);
	ck_assert_int_eq(PMPI_Type_commit(&pair), MPI_SUCCESS);
	ck_assert_int_eq(mpi_shim_datarep_size(rep, pair, 3, &bytes), MPI_SUCCESS);
	ck_assert_int_eq(bytes, 48);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, MPI_INT, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 8);
	ck_assert_int_eq(mpi_shim_datarep_extent(rep, pair, &ext), MPI_SUCCESS);
	ck_assert_int_eq(ext, 16);
	/* Asked once for MPI_INT, then kept. */
	ck_assert_int_eq(seen.extents, 1);

	/* Elements 1 and 2 of an operation on pairs: the function gets the
	 * operation's buffer, the items of two pairs and the index of the
	 * first item, 2. */
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v + 2, 2, pair, file, 1), MPI_SUCCESS);
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_ptr_eq(seen.userbuf, v);
	ck_assert_ptr_eq(seen.type, pair);
	ck_assert_int_eq(seen.count, 4);
	ck_assert_int_eq(seen.position, 2);
	ck_assert_ptr_eq(seen.filebuf, file);
	ck_assert_int_eq(file[0], 0x5a);
	ck_assert_mem_eq(file + 4, &v[2], 4);
	ck_assert_mem_eq(file + 28, &v[5], 4);
	ck_assert_int_eq(mpi_shim_datarep_from_file(rep, file, back + 2, 2, pair, 1), MPI_SUCCESS);
	ck_assert_int_eq(seen.position, 2);
	ck_assert(back[1] == 0 && back[2] == 12 && back[5] == 15 && back[6] == 0);

	/* Null conversion functions: native bytes where the sizes agree... */
	ck_assert_int_eq(PMPI_Register_datarep("plain", NULL, NULL, native_extent, NULL),
			 MPI_SUCCESS);
	rep = mpi_shim_datarep_find("plain");
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v, 2, pair, file, 0), MPI_SUCCESS);
	ck_assert_mem_eq(file, v, 16);
	/* ...MPI_ERR_CONVERSION where they do not. */
	ck_assert_int_eq(PMPI_Register_datarep("nullwide", rec_read, NULL, rec_extent, NULL),
			 MPI_SUCCESS);
	rep = mpi_shim_datarep_find("nullwide");
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v, 2, pair, file, 0), MPI_ERR_CONVERSION);
	ck_assert_int_eq(mpi_shim_datarep_from_file(rep, file, v, 1, pair, 0), MPI_SUCCESS);
	/* A function that fails. */
	ck_assert_int_eq(PMPI_Register_datarep("failing", NULL, fail_write, rec_extent, NULL),
			 MPI_SUCCESS);
	rep = mpi_shim_datarep_find("failing");
	ck_assert_int_eq(mpi_shim_datarep_to_file(rep, v, 2, pair, file, 0), MPI_ERR_CONVERSION);
	PMPI_Type_free(&pair);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datarep");
	TCase *tc = tcase_create("datarep");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_native);
	tcase_add_test(tc, test_external32);
	tcase_add_test(tc, test_registered);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
