/* SPDX-License-Identifier: MIT */
/*
 * io_atomic.c - consistency (MPI-3.1 13.6): atomic mode and the
 * sync-barrier-sync rule of nonatomic mode.
 *
 *   bipload -sz N io_atomic TEST
 *
 * overlap      set_atomicity(1); every rank but a reader writes its whole
 *              record (a noncontiguous filetype: several extents) over
 *              the same bytes, again and again, while the reader (rank 0
 *              from 2 processes on) reads it: every read sees one writer's
 *              record whole, never a mix; at the end the file holds one
 *              whole record
 * syncbarrier  nonatomic mode: a writer writes, MPI_File_sync, barrier,
 *              MPI_File_sync on the reader (another rank), which then sees
 *              all of it; the roles go round the ranks
 */
#include "iocheck.h"

#define RI 8192 /* ints of a record */
#define ROUNDS 30

/* The writer whose record buf is, 0 for a file never written, -1 for a mix. */
static int whose(const int *buf, int n)
{
	int i;

	for (i = 1; i < n; i++)
		if (buf[i] != buf[0])
			return -1;
	return buf[0];
}

static void test_overlap(void)
{
	const int reader = size > 1 ? 0 : -1;
	int *rec = malloc(RI * sizeof(int)), *got = malloc(RI * sizeof(int));
	MPI_Datatype ftype;
	MPI_Status st;
	MPI_File fh;
	int i, w, flag;

	/* Blocks of 512 ints with a gap of 512 between them. */
	MPI_Type_vector(RI / 512, 512, 1024, MPI_INT, &ftype);
	MPI_Type_commit(&ftype);
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("atomic"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_set_atomicity(fh, 1));
	OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 1, "atomicity %d", flag);
	OK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL));
	for (i = 0; i < RI; i++)
		rec[i] = rank + 1;
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < ROUNDS; i++) {
		if (rank == reader) {
			int n;

			/* before any write the read finds the end of the file
			 * (count 0) and leaves got as it is: zeros */
			memset(got, 0, RI * sizeof(int));
			OK(MPI_File_read_at(fh, 0, got, RI, MPI_INT, &st));
			MPI_Get_count(&st, MPI_INT, &n);
			CHECK(n == 0 || n == RI, "read %d got %d ints, not 0 or %d", i, n, RI);
			/* 0: nothing written yet; else one writer's record whole */
			w = whose(got, RI);
			CHECK(w >= 0 && w <= size, "read %d saw a mix of records (%d at int 0, "
			      "%d at the last)", i, got[0], got[RI - 1]);
		} else {
			OK(MPI_File_write_at(fh, 0, rec, RI, MPI_INT, &st));
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	memset(got, 0xff, RI * sizeof(int));
	OK(MPI_File_read_at(fh, 0, got, RI, MPI_INT, &st));
	w = whose(got, RI);
	CHECK(w >= 1 && w <= size && w - 1 != reader, "after the writes the record is %s (%d)",
	      w < 0 ? "a mix" : "not a writer's", w);
	OK(MPI_File_close(&fh));
	MPI_Type_free(&ftype);
	free(rec);
	free(got);
}

static void test_syncbarrier(void)
{
	int *buf = malloc(RI * sizeof(int)), r, i, k;
	MPI_Status st;
	MPI_File fh;

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("sbs"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	for (r = 0; r < 2 * size; r++) {
		const int writer = r % size, reader = (r + 1) % size;

		if (rank == writer) {
			for (i = 0; i < RI; i++)
				buf[i] = r * 100000 + i;
			OK(MPI_File_write_at(fh, (MPI_Offset)(r % 3) * 100, buf, RI, MPI_INT, &st));
		}
		OK(MPI_File_sync(fh));
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_File_sync(fh));
		if (rank == reader) {
			memset(buf, 0, RI * sizeof(int));
			OK(MPI_File_read_at(fh, (MPI_Offset)(r % 3) * 100, buf, RI, MPI_INT, &st));
			for (i = 0, k = 0; i < RI; i++)
				if (buf[i] != r * 100000 + i && k++ < 3)
					CHECK(0, "round %d: rank %d read int %d as %d after rank %d's "
					      "sync-barrier-sync", r, rank, i, buf[i], writer);
		}
		/* Nobody writes the next round before this one is read. */
		MPI_Barrier(MPI_COMM_WORLD);
	}
	OK(MPI_File_close(&fh));
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "overlap", test_overlap },
		{ "syncbarrier", test_syncbarrier },
	};

	return io_main(argc, argv, "io_atomic", tests, sizeof(tests) / sizeof(tests[0]));
}
