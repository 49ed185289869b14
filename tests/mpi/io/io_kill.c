/* SPDX-License-Identifier: MIT */
/*
 * io_kill.c - what MPI_File_sync makes durable survives the job's death.
 *
 *   io_kill write DIR   part A (every rank's blocks, write_at_all), then
 *                       MPI_File_sync and a barrier; rank 0 then makes
 *                       DIR/synced; then part B is written over and over
 *                       until the job is killed (io_kill.sh kills it)
 *   io_kill check DIR   part A is there byte for byte; part B's bytes are
 *                       each B's or never written (zero)
 */
#include <signal.h>

#include "iocheck.h"

#define B 1000
#define NB 64 /* blocks of a rank in part A */

int main(int argc, char **argv)
{
	char path[PATH_MAX + 16], mark[PATH_MAX + 16];
	unsigned char *buf = malloc((size_t)NB * B);
	MPI_Offset a_end;
	MPI_Status st;
	MPI_File fh;
	int i, round;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: io_kill write|check DIR\n");
		MPI_Finalize();
		return 2;
	}
	snprintf(path, sizeof(path), "%s/data", argv[2]);
	snprintf(mark, sizeof(mark), "%s/synced", argv[2]);
	a_end = (MPI_Offset)NB * B * size;
	if (!strcmp(argv[1], "write")) {
		OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
				 MPI_INFO_NULL, &fh));
		/* Part A: block i of rank r at (i * P + r) * B. */
		for (i = 0; i < NB; i++)
			io_fill(buf + (size_t)i * B, B, rank, ((int64_t)i * size + rank) * B);
		for (i = 0; i < NB; i++)
			OK(MPI_File_write_at_all(fh, ((MPI_Offset)i * size + rank) * B,
						 buf + (size_t)i * B, B, MPI_BYTE, &st));
		OK(MPI_File_sync(fh));
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			FILE *f = fopen(mark, "w");

			CHECK(f != NULL, "%s: %s", mark, strerror(errno));
			if (f)
				fclose(f);
			printf("io_kill: part A synced\n");
			fflush(stdout);
		}
		/* Part B, after A, until killed (a bound in case nobody
		 * does). */
		for (round = 0; round < 100000; round++) {
			MPI_Offset off = a_end + ((MPI_Offset)(round % 16) * size + rank) * B;

			io_fill(buf, B, size + rank, off);
			OK(MPI_File_write_at(fh, off, buf, B, MPI_BYTE, &st));
			if (round % 16 == 15)
				usleep(10000);
		}
		OK(MPI_File_close(&fh));
		MPI_Finalize();
		fprintf(stderr, "io_kill write: rank %d was never killed\n", rank);
		return 1;
	}
	/* check: rank 0 alone reads it all. */
	if (rank == 0) {
		MPI_Offset sz;
		unsigned char *all;
		int r;

		OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
		OK(MPI_File_get_size(fh, &sz));
		CHECK(sz >= a_end, "the file has %lld bytes, part A %lld", (long long)sz,
		      (long long)a_end);
		all = calloc((size_t)sz + 1, 1);
		OK(MPI_File_read_at(fh, 0, all, (int)sz, MPI_BYTE, &st));
		for (i = 0; i < NB * size; i++)
			CHECK_BYTES(all + (size_t)i * B, B, i % size, (int64_t)i * B, "part A");
		/* Part B: each byte B's or zero. */
		for (r = 0; (MPI_Offset)(r + 1) * B <= sz - a_end; r++) {
			MPI_Offset off = a_end + (MPI_Offset)r * B;
			int j, w = size + r % size;

			for (j = 0; j < B; j++) {
				unsigned char c = all[off + j];

				if (c && c != io_byte(w, off + j)) {
					CHECK(0, "part B: byte at %lld is %d, neither 0 nor %d",
					      (long long)(off + j), c, io_byte(w, off + j));
					break;
				}
			}
		}
		OK(MPI_File_close(&fh));
		free(all);
		if (!failures)
			printf("io_kill check: part A (%lld bytes of %d ranks) intact, file of "
			       "%lld bytes\n", (long long)a_end, size, (long long)sz);
	}
	MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	free(buf);
	return failures ? 1 : 0;
}
