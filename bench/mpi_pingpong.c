/* SPDX-License-Identifier: MIT */
/*
 * mpi_pingpong.c - the measurements of bip_pingpong.c in plain MPI, to
 * compare BIP with MPI libraries on the same machine.
 *
 *   mpiexec -n 2 ./mpi_pingpong [-s MIN] [-S MAX] [-i ITERS] [-w W] [-b B] [--csv]
 *
 * Latency: MPI_Send/MPI_Recv ping-pong on one tag, half the round trip.
 * Bandwidth: rank 0 sends a window of W messages with MPI_Isend, rank 1 has
 * W receives posted with MPI_Irecv (one tag and one buffer each), then
 * rank 1 sends a one-word acknowledgement.  Same table as bip_pingpong.
 */
#include <mpi.h>

#include "pingpong.h"

#define TAG_PING 0
#define TAG_WIN 1 /* TAG_WIN .. TAG_WIN + W - 1 */

static int rank;

static void die_data(const char *what, size_t bytes, long at, uint32_t got)
{
	fprintf(stderr, "mpi_pingpong: rank %d: %s of %zu bytes: word %ld is 0x%08x, expected 0x%08x\n",
		rank, what, bytes, at, got, pp_word(bytes, at));
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check(const uint32_t *buf, size_t bytes, const char *what)
{
	long at = pp_check(buf, bytes);

	if (at >= 0)
		die_data(what, bytes, at, buf[at]);
}

static void check_count(MPI_Status *st, size_t bytes)
{
	int n;

	MPI_Get_count(st, MPI_BYTE, &n);
	if ((size_t)n != bytes) {
		fprintf(stderr, "mpi_pingpong: rank %d: received %d bytes, expected %zu\n",
			rank, n, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static double latency(const struct pp_opts *o, size_t bytes, uint32_t *sbuf, uint32_t *rbuf,
		      double *samples)
{
	long n = pp_lat_iters(o, bytes);
	int b, cnt = (int)bytes;
	long i;

	/* One checked exchange: rank 1 checks the data, rank 0 the echo. */
	if (rank == 0) {
		MPI_Status st;

		MPI_Send(sbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
		MPI_Recv(rbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD, &st);
		check_count(&st, bytes);
		check(rbuf, bytes, "echo");
	} else {
		MPI_Status st;

		memset(rbuf, 0, bytes);
		MPI_Recv(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD, &st);
		check_count(&st, bytes);
		check(rbuf, bytes, "message");
		MPI_Send(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
	}

	/* Batch -1 is the warm-up. */
	for (b = -1; b < o->batches; b++) {
		double t0 = pp_now();

		if (rank == 0) {
			for (i = 0; i < n; i++) {
				MPI_Send(sbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
				MPI_Recv(rbuf, cnt, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			}
		} else {
			for (i = 0; i < n; i++) {
				MPI_Recv(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(rbuf, cnt, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
			}
		}
		if (b >= 0)
			samples[b] = (pp_now() - t0) / (2.0 * n) * 1e6;
	}
	return pp_median(samples, o->batches);
}

static double bandwidth(const struct pp_opts *o, size_t bytes, uint32_t *sbuf,
			uint32_t **wbuf, double *samples)
{
	long reps = pp_bw_reps(o, bytes);
	long total = reps * (o->batches + 1), w = 0;
	int ack_tag = TAG_WIN + o->window;
	int cnt = (int)bytes, ack = 0, b, k;
	MPI_Request req[PP_MAX_WINDOW];
	MPI_Status st[PP_MAX_WINDOW];

	if (rank == 1) {
		for (k = 0; k < o->window; k++) {
			memset(wbuf[k], 0, bytes);
			MPI_Irecv(wbuf[k], cnt, MPI_BYTE, 0, TAG_WIN + k, MPI_COMM_WORLD, &req[k]);
		}
		MPI_Send(&ack, 1, MPI_INT, 0, ack_tag, MPI_COMM_WORLD);
		for (w = 0; w < total; w++) {
			MPI_Waitall(o->window, req, st);
			if (w == 0) {
				check_count(&st[0], bytes);
				check(wbuf[0], bytes, "window message");
				check(wbuf[o->window - 1], bytes, "window message");
			}
			if (w + 1 < total)
				for (k = 0; k < o->window; k++)
					MPI_Irecv(wbuf[k], cnt, MPI_BYTE, 0, TAG_WIN + k,
						  MPI_COMM_WORLD, &req[k]);
			MPI_Send(&ack, 1, MPI_INT, 0, ack_tag, MPI_COMM_WORLD);
		}
		return 0;
	}

	MPI_Recv(&ack, 1, MPI_INT, 1, ack_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (b = -1; b < o->batches; b++) {
		double t0 = pp_now();
		long r;

		for (r = 0; r < reps; r++) {
			for (k = 0; k < o->window; k++)
				MPI_Isend(sbuf, cnt, MPI_BYTE, 1, TAG_WIN + k, MPI_COMM_WORLD,
					  &req[k]);
			MPI_Waitall(o->window, req, st);
			MPI_Recv(&ack, 1, MPI_INT, 1, ack_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (b >= 0)
			samples[b] = (double)bytes * o->window * reps / (pp_now() - t0) / 1e6;
	}
	return pp_median(samples, o->batches);
}

int main(int argc, char **argv)
{
	struct pp_opts o;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (pp_parse(argc, argv, &o)) {
		MPI_Finalize();
		return 0;
	}
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: needs 2 processes\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (o.max > (size_t)(1u << 31) - 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: MAX must fit an int\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank > 1) {
		/* Ranks beyond 1 take no part. */
		MPI_Finalize();
		return 0;
	}

	pp_run(argv[0], &o, rank, &(struct pp_bench){ "MPI", latency, bandwidth });
	MPI_Finalize();
	return 0;
}
