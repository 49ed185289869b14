/* SPDX-License-Identifier: MIT */
/*
 * mpi_scale.c - what a job costs the host as it grows: MPI_Init, one
 * all-to-all of 8 bytes and one of 64 KiB between every pair of ranks, then,
 * while every rank still holds what the exchange made it allocate, rank 0
 * reads the host's shared memory ("Shmem:" of /proc/meminfo) and prints it
 * less the value in SCALE_SHMEM_BEFORE (kB, read by the script before the
 * job), and MPI_Finalize.  Each rank checks every byte it received.
 * bench/scale.sh runs it under the MPI shim, Open MPI and MPICH.
 *
 * Output: "ranks N shmem_kb K errors E".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long shmem_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Shmem:", 6)) {
			v = atol(line + 6);
			break;
		}
	fclose(f);
	return v;
}

/* Check that block src of rbuf holds what rank src sent this rank. */
static long check(const unsigned char *rbuf, size_t block, int n, int me)
{
	long bad = 0;
	int src;
	size_t i;

	for (src = 0; src < n; src++)
		for (i = 0; i < block; i++)
			bad += rbuf[(size_t)src * block + i] != (unsigned char)(src * 7 + me + i);
	return bad;
}

int main(int argc, char **argv)
{
	const char *before_s = getenv("SCALE_SHMEM_BEFORE");
	long before = before_s ? atol(before_s) : 0, bad = 0, all_bad = 0;
	size_t big = 65536, i;
	unsigned char *sbuf, *rbuf;
	int me, n, dst;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	sbuf = malloc(big * (size_t)n);
	rbuf = malloc(big * (size_t)n);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (dst = 0; dst < n; dst++)
		for (i = 0; i < big; i++)
			sbuf[(size_t)dst * big + i] = (unsigned char)(me * 7 + dst + i);
	/* 8 bytes: block dst of sbuf's first 8 bytes each, packed. */
	{
		unsigned char s8[8 * 4096], r8[8 * 4096];

		if (n > 4096)
			MPI_Abort(MPI_COMM_WORLD, 2);
		for (dst = 0; dst < n; dst++)
			memcpy(s8 + 8 * dst, sbuf + (size_t)dst * big, 8);
		MPI_Alltoall(s8, 8, MPI_BYTE, r8, 8, MPI_BYTE, MPI_COMM_WORLD);
		bad += check(r8, 8, n, me);
	}
	MPI_Alltoall(sbuf, (int)big, MPI_BYTE, rbuf, (int)big, MPI_BYTE, MPI_COMM_WORLD);
	bad += check(rbuf, big, n, me);
	MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("ranks %d shmem_kb %ld errors %ld\n", n, shmem_kb() - before, all_bad);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return all_bad != 0;
}
