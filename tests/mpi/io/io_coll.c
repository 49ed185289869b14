/* SPDX-License-Identifier: MIT */
/*
 * io_coll.c - collective data access (MPI-3.1 13.4): interleaved
 * patterns under hints that turn collective buffering on and off, the
 * nonblocking collectives with communication done before the wait, and
 * the split collectives.  Every rank checks every byte of the file.
 *
 *   bipload -sz N io_coll TEST
 *
 * interleaved  blocks of B bytes, block i written by rank i mod P:
 *              write_all/read_all through a view and write_at_all/
 *              read_at_all with a strided memory type, under each hint
 *              set: none, romio_cb_write/read=enable with cb_nodes=1 and
 *              2 and cb_buffer_size=4096 (many cycles of two-phase I/O),
 *              romio_cb_write/read=disable; one rank with nothing to
 *              write in one of the rounds
 * nonblocking  MPI_File_iwrite_at_all and MPI_File_iread_all, a ring of
 *              messages passed round before MPI_Wait
 * split        write_all_begin/end, read_all_begin/end, the _at_ forms;
 *              the status of the end call counts what moved
 */
#include "iocheck.h"

#define B 100    /* bytes a block: not a power of 2 */
#define NB 37    /* blocks a rank */

static const char *const hint_sets[][7] = {
	{ NULL },
	{ "romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "1", NULL },
	{ "romio_cb_write", "enable", "romio_cb_read", "enable", "cb_nodes", "2", NULL },
	{ "romio_cb_write", "disable", "romio_cb_read", "disable", NULL },
};

static MPI_Info make_info(int h)
{
	MPI_Info info;
	int i;

	MPI_Info_create(&info);
	for (i = 0; hint_sets[h][i]; i += 2)
		MPI_Info_set(info, hint_sets[h][i], hint_sets[h][i + 1]);
	if (h == 1 || h == 2)
		MPI_Info_set(info, "cb_buffer_size", "4096");
	return info;
}

static void settle(MPI_File fh)
{
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
}

/* Every rank checks the whole file: block i is rank i mod P's, at its
 * offset.  The blocks of skip (a rank that wrote nothing) were never
 * written: what they hold is not defined, only that the file reaches the
 * end of the last block written. */
static void check_blocks(MPI_File fh, int nblocks, int skip, const char *what)
{
	size_t n = (size_t)nblocks * B;
	unsigned char *buf = malloc(n);
	MPI_Status st;
	int i, cnt = -1, end = 0;

	for (i = 0; i < nblocks; i++)
		if (i % size != skip)
			end = (i + 1) * B;
	OK(MPI_File_read_at(fh, 0, buf, (int)n, MPI_BYTE, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
	CHECK(cnt >= end && cnt <= (int)n, "%s: read %d of %zu bytes, want at least %d", what,
	      cnt, n, end);
	for (i = 0; i < nblocks && (i + 1) * B <= cnt; i++)
		if (i % size != skip)
			CHECK_BYTES(buf + (size_t)i * B, B, i % size, (int64_t)i * B, what);
	free(buf);
}

static void test_interleaved(void)
{
	const int nblocks = NB * size;
	unsigned char *mine = malloc((size_t)NB * B), *wide = malloc((size_t)NB * 2 * B);
	MPI_Datatype ftype, blk, mtype;
	MPI_Status st;
	int h, i, cnt;
	char what[96];

	/* The view: one block of B bytes every P blocks. */
	MPI_Type_contiguous(B, MPI_BYTE, &blk);
	MPI_Type_commit(&blk);
	MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B, &ftype);
	MPI_Type_commit(&ftype);
	/* In memory for the _at_ forms: a block, a gap of a block. */
	MPI_Type_vector(NB, B, 2 * B, MPI_BYTE, &mtype);
	MPI_Type_commit(&mtype);
	for (i = 0; i < NB; i++)
		io_fill(mine + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B);
	for (h = 0; h < (int)(sizeof(hint_sets) / sizeof(hint_sets[0])); h++) {
		MPI_Info info = make_info(h);
		MPI_File fh;
		char name[32];
		int skip = h == 3 ? size - 1 : -1;

		/* write_all / read_all through the view. */
		snprintf(name, sizeof(name), "all%d", h);
		OK(MPI_File_open(MPI_COMM_WORLD, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
				 info, &fh));
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		OK(MPI_File_write_all(fh, mine, rank == skip ? 0 : NB * B, MPI_BYTE, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		CHECK(cnt == (rank == skip ? 0 : NB * B), "write_all moved %d bytes", cnt);
		settle(fh);
		OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
		snprintf(what, sizeof(what), "write_all, hints %d", h);
		check_blocks(fh, nblocks, skip, what);
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		memset(wide, 0, (size_t)NB * B);
		OK(MPI_File_read_all(fh, wide, NB * B, MPI_BYTE, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		if (rank != skip) {
			CHECK(cnt == NB * B, "read_all moved %d bytes", cnt);
			for (i = 0; i < NB; i++)
				CHECK_BYTES(wide + (size_t)i * B, B, rank,
					    ((int64_t)i * size + rank) * B, "read_all");
		}
		OK(MPI_File_close(&fh));

		/* write_at_all / read_at_all: from a strided buffer (a
		 * block, a gap) at an explicit offset of the view. */
		snprintf(name, sizeof(name), "at%d", h);
		OK(MPI_File_open(MPI_COMM_WORLD, io_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
				 info, &fh));
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		memset(wide, 0xee, (size_t)NB * 2 * B);
		for (i = 0; i < NB; i++)
			memcpy(wide + (size_t)i * 2 * B, mine + (size_t)i * B, B);
		OK(MPI_File_write_at_all(fh, 0, wide, rank == skip ? 0 : 1, mtype, &st));
		settle(fh);
		OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
		snprintf(what, sizeof(what), "write_at_all, hints %d", h);
		check_blocks(fh, nblocks, skip, what);
		/* Back, block by block, each rank its last NB/2 blocks. */
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		memset(wide, 0xee, (size_t)NB * 2 * B);
		OK(MPI_File_read_at_all(fh, (MPI_Offset)(NB / 2) * B, wide, NB - NB / 2, blk, &st));
		if (rank != skip)
			for (i = NB / 2; i < NB; i++)
				CHECK_BYTES(wide + (size_t)(i - NB / 2) * B, B, rank,
					    ((int64_t)i * size + rank) * B, "read_at_all");
		OK(MPI_File_close(&fh));
		MPI_Info_free(&info);
	}
	MPI_Type_free(&ftype);
	MPI_Type_free(&mtype);
	MPI_Type_free(&blk);
	free(mine);
	free(wide);
}

/* One round of a ring: each rank sends its number to the next one. */
static void ring(int round)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, in = -1, out = rank * 100 + round;
	MPI_Request r;

	OK(MPI_Isend(&out, 1, MPI_INT, next, round, MPI_COMM_WORLD, &r));
	OK(MPI_Recv(&in, 1, MPI_INT, prev, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(in == prev * 100 + round, "ring round %d: got %d", round, in);
}

static void test_nonblocking(void)
{
	const int nblocks = NB * size;
	unsigned char *mine = malloc((size_t)NB * B), *back = malloc((size_t)NB * B);
	MPI_Datatype ftype, blk;
	MPI_Request req;
	MPI_Status st;
	MPI_File fh;
	int i, cnt, h;

	MPI_Type_contiguous(B, MPI_BYTE, &blk);
	MPI_Type_commit(&blk);
	MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B, &ftype);
	MPI_Type_commit(&ftype);
	for (i = 0; i < NB; i++)
		io_fill(mine + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B);
	for (h = 0; h < 2; h++) {
		MPI_Info info = make_info(h);

		OK(MPI_File_open(MPI_COMM_WORLD, io_path(h ? "nb1" : "nb0"),
				 MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		OK(MPI_File_iwrite_at_all(fh, 0, mine, NB, blk, &req));
		for (i = 0; i < 5; i++)
			ring(i);
		OK(MPI_Wait(&req, &st));
		OK(MPI_Get_count(&st, blk, &cnt));
		CHECK(cnt == NB, "iwrite_at_all: %d blocks", cnt);
		settle(fh);
		OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
		check_blocks(fh, nblocks, -1, h ? "iwrite_at_all, cb_nodes=1" : "iwrite_at_all");
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", info));
		memset(back, 0, (size_t)NB * B);
		OK(MPI_File_iread_all(fh, back, NB * B, MPI_BYTE, &req));
		for (i = 5; i < 10; i++)
			ring(i);
		OK(MPI_Wait(&req, &st));
		OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		CHECK(cnt == NB * B, "iread_all: %d bytes", cnt);
		for (i = 0; i < NB; i++)
			CHECK_BYTES(back + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B,
				    "iread_all");
		/* The pointer moved by what was read. */
		{
			MPI_Offset pos;

			OK(MPI_File_get_position(fh, &pos));
			CHECK(pos == NB * B, "after iread_all, pointer at %lld", (long long)pos);
		}
		OK(MPI_File_close(&fh));
		MPI_Info_free(&info);
	}
	MPI_Type_free(&ftype);
	MPI_Type_free(&blk);
	free(mine);
	free(back);
}

static void test_split(void)
{
	const int nblocks = NB * size;
	unsigned char *mine = malloc((size_t)NB * B), *back = malloc((size_t)NB * B);
	MPI_Datatype ftype, blk;
	MPI_Status st;
	MPI_File fh;
	MPI_Offset pos;
	int i, cnt;

	MPI_Type_contiguous(B, MPI_BYTE, &blk);
	MPI_Type_commit(&blk);
	MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B, &ftype);
	MPI_Type_commit(&ftype);
	for (i = 0; i < NB; i++)
		io_fill(mine + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B);
	OK(MPI_File_open(MPI_COMM_WORLD, io_path("split"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", MPI_INFO_NULL));
	/* The first half through the individual pointer, the second at an
	 * explicit offset. */
	OK(MPI_File_write_all_begin(fh, mine, NB / 2, blk));
	ring(0);
	OK(MPI_File_write_all_end(fh, mine, &st));
	OK(MPI_Get_count(&st, blk, &cnt));
	CHECK(cnt == NB / 2, "write_all_end: %d blocks", cnt);
	OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (NB / 2) * B, "after write_all_end, pointer at %lld", (long long)pos);
	OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)(NB / 2) * B, mine + (NB / 2) * B,
				       NB - NB / 2, blk));
	OK(MPI_File_write_at_all_end(fh, mine + (NB / 2) * B, &st));
	OK(MPI_Get_count(&st, blk, &cnt));
	CHECK(cnt == NB - NB / 2, "write_at_all_end: %d blocks", cnt);
	settle(fh);
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	check_blocks(fh, nblocks, -1, "split writes");

	OK(MPI_File_set_view(fh, (MPI_Offset)rank * B, MPI_BYTE, ftype, "native", MPI_INFO_NULL));
	memset(back, 0, (size_t)NB * B);
	OK(MPI_File_read_all_begin(fh, back, NB * B, MPI_BYTE));
	ring(1);
	OK(MPI_File_read_all_end(fh, back, &st));
	OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
	CHECK(cnt == NB * B, "read_all_end: %d bytes", cnt);
	for (i = 0; i < NB; i++)
		CHECK_BYTES(back + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B,
			    "read_all_end");
	memset(back, 0, (size_t)NB * B);
	OK(MPI_File_read_at_all_begin(fh, B, back, NB - 1, blk));
	OK(MPI_File_read_at_all_end(fh, back, &st));
	OK(MPI_Get_count(&st, blk, &cnt));
	CHECK(cnt == NB - 1, "read_at_all_end: %d blocks", cnt);
	for (i = 1; i < NB; i++)
		CHECK_BYTES(back + (size_t)(i - 1) * B, B, rank, ((int64_t)i * size + rank) * B,
			    "read_at_all_end");
	OK(MPI_File_close(&fh));
	MPI_Type_free(&ftype);
	MPI_Type_free(&blk);
	free(mine);
	free(back);
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "interleaved", test_interleaved },
		{ "nonblocking", test_nonblocking },
		{ "split", test_split },
	};

	return io_main(argc, argv, "io_coll", tests, sizeof(tests) / sizeof(tests[0]));
}
