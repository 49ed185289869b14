/* SPDX-License-Identifier: MIT */
/*
 * finalize.c - what MPI_Finalize leaves behind: nothing.
 *
 *   bipload -sz N finalize use     every kind of object and message the
 *                                  library keeps memory for, then
 *                                  MPI_Finalize; leaks.sh runs it under
 *                                  LeakSanitizer, which must find nothing
 *                                  (memory still pointed to by the library's
 *                                  statics counts as left behind)
 *   bipload -sz N finalize reinit  MPI_Init after MPI_Finalize: refused by
 *                                  the default handler, which names the call
 *                                  and stops the job (leaks.sh checks it)
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpicheck.h"

static int rank, size;

/* Large enough for temporary buffers in the collectives and for
 * rendezvous messages. */
#define BIG 50000

static void use_collectives(void)
{
	int *in = malloc(BIG * sizeof(int)), *out = malloc((size_t)BIG * size * sizeof(int));
	int *counts = malloc((size_t)size * sizeof(int)), i;
	MPI_Request reqs[2];

	CHECK(in && out && counts, "out of memory");
	for (i = 0; i < BIG; i++)
		in[i] = rank + i;
	OK(MPI_Allreduce(in, out, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (i = 0; i < BIG; i += 997)
		CHECK(out[i] == size * i + size * (size - 1) / 2, "allreduce [%d] = %d", i, out[i]);
	OK(MPI_Reduce(in, out, BIG, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
	OK(MPI_Allgather(in, BIG, MPI_INT, out, BIG, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < size; i++)
		counts[i] = BIG / size;
	OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Alltoall(out, BIG / size, MPI_INT, in, BIG / size, MPI_INT, MPI_COMM_WORLD));
	OK(MPI_Iallreduce(in, out, BIG, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	free(in);
	free(out);
	free(counts);
}

static void use_point_to_point(void)
{
	int peer = (rank + 1) % size, from = (rank + size - 1) % size, small = rank, got = -1;
	char *big = calloc(BIG, 1), *bin = malloc(BIG), *battach = malloc(BIG + 1024);
	MPI_Request reqs[4];
	MPI_Datatype column;
	void *detached;
	int dsize, flag = -1;
	MPI_Status st;

	CHECK(big && bin && battach, "out of memory");
	/* Unexpected eager and rendezvous messages, a synchronous one. */
	OK(MPI_Isend(&small, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Isend(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Issend(&small, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &reqs[2]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Recv(bin, BIG, MPI_CHAR, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Recv(&got, 1, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(got == from, "got %d from %d", got, from);
	OK(MPI_Recv(&got, 1, MPI_INT, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
	/* A derived datatype, packed on the way. */
	OK(MPI_Type_vector(BIG / 16, 1, 4, MPI_INT, &column));
	OK(MPI_Type_commit(&column));
	OK(MPI_Irecv(bin, 1, column, from, 4, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Send(big, 1, column, peer, 4, MPI_COMM_WORLD));
	OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
	OK(MPI_Type_free(&column));
	/* A buffered send through an attached buffer. */
	OK(MPI_Buffer_attach(battach, BIG + 1024));
	OK(MPI_Bsend(big, 1000, MPI_CHAR, peer, 5, MPI_COMM_WORLD));
	OK(MPI_Recv(bin, 1000, MPI_CHAR, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Buffer_detach(&detached, &dsize));
	/* A cancelled rendezvous send: its data is dropped by the receiver. */
	OK(MPI_Isend(big, BIG, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Probe(from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Cancel(&reqs[0]));
	OK(MPI_Wait(&reqs[0], &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag == 1, "rendezvous send to %d not cancelled", peer);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	/* A cancelled receive, and a persistent request. */
	OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Cancel(&reqs[0]));
	OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
	OK(MPI_Send_init(&small, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Start(&reqs[0]));
	OK(MPI_Recv(&got, 1, MPI_INT, from, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
	OK(MPI_Request_free(&reqs[0]));
	free(big);
	free(bin);
	free(battach);
}

static int keyval_deleted;

static int note_delete(MPI_Comm comm, int key, void *value, void *extra)
{
	keyval_deleted++;
	return MPI_SUCCESS;
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
	CHECK(0, "error %d", *code);
}

static void use_communicators(void)
{
	MPI_Comm dup, split, shared;
	MPI_Group g, odd;
	MPI_Errhandler eh;
	int key, one = 1;

	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_split(dup, rank % 2, -rank, &split));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_delete, &key, NULL));
	OK(MPI_Comm_set_attr(dup, key, &one));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
	OK(MPI_Group_incl(g, 1, &rank, &odd));
	OK(MPI_Comm_create_errhandler(on_error, &eh));
	OK(MPI_Comm_set_errhandler(dup, eh));
	OK(MPI_Errhandler_free(&eh));
	OK(MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, split));
	OK(MPI_Group_free(&odd));
	OK(MPI_Group_free(&g));
	OK(MPI_Comm_free(&shared));
	OK(MPI_Comm_free(&split));
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free_keyval(&key));
	CHECK(keyval_deleted == 1, "attribute deleted %d times", keyval_deleted);
	/* The predefined communicators' attributes and handlers go at
	 * MPI_Finalize. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
	int flag = 0;

	if (argc != 2 || (strcmp(argv[1], "use") && strcmp(argv[1], "reinit"))) {
		fprintf(stderr, "usage: finalize use|reinit\n");
		return 2;
	}
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	if (!strcmp(argv[1], "use")) {
		use_collectives();
		use_point_to_point();
		use_communicators();
		/* Once more, with the buffers the first round kept. */
		use_collectives();
	}
	OK(MPI_Finalize());
	OK(MPI_Initialized(&flag));
	CHECK(flag == 1, "MPI_Initialized after MPI_Finalize says %d", flag);
	OK(MPI_Finalized(&flag));
	CHECK(flag == 1, "MPI_Finalized after MPI_Finalize says %d", flag);
	if (!strcmp(argv[1], "reinit")) {
		/* Erroneous: the default handler stops the job with a message. */
		MPI_Init(&argc, &argv);
		CHECK(0, "MPI_Init after MPI_Finalize returned");
	}
	return 0;
}
