/* SPDX-License-Identifier: MIT */
/*
 * coll_flat.c - Bcast and Allgather around the sizes where the shim
 * changes algorithm: up to 256 bytes on 3 to 8 ranks (Bcast: 5 to 8),
 * every rank trades with every other in one round; above, and on other
 * rank counts, the trees, recursive doubling and Bruck; from 64 KiB, the
 * scatter and ring of Bcast.  Each size below, at, and just above 256
 * bytes, then 64 KiB and 1 MiB (on MPI_COMM_WORLD; 1 MiB contiguous
 * only); every root; contiguous and strided (derived) datatypes;
 * Allgather in place.  Every element of every
 * result is checked against the value computed here, and the bytes
 * around each result (gaps of the strided type, past the end) must stay
 * untouched.  Misuse under MPI_ERRORS_RETURN returns its error class and
 * the next calls still work.
 *
 *   bipload -sz N coll_flat
 */
#include "coll_check.h"

#define GUARD (-7)

/* Element counts of ints: 8 B, 252 B, 256 B, 260 B, 264 B, 64 KiB, 1 MiB. */
static const int counts[] = { 2, 63, 64, 65, 66, 16384, 262144 };
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

/* Every other int: a vector of n ints with gaps, extent 2 ints per element. */
static MPI_Datatype strided(void)
{
	MPI_Datatype v, t;

	OK(MPI_Type_vector(1, 1, 2, MPI_INT, &v));
	OK(MPI_Type_create_resized(v, 0, 2 * sizeof(int), &t));
	OK(MPI_Type_commit(&t));
	OK(MPI_Type_free(&v));
	return t;
}

/* Bcast of n elements from every root; stride 2: the strided type. */
static void bcast_case(MPI_Comm c, int n, int stride, MPI_Datatype t)
{
	int r, p, root, i, len = n * stride + 1, *b = coll_alloc(len * sizeof(int));

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	for (root = 0; root < p; root++) {
		for (i = 0; i < len; i++)
			b[i] = r == root && i % stride == 0 && i < n * stride ?
				       coll_val(root, root, i) : GUARD;
		OK(MPI_Bcast(b, n, t, root, c));
		for (i = 0; i < len; i++) {
			int want = i % stride == 0 && i < n * stride ? coll_val(root, root, i) :
								       GUARD;

			CHECK(b[i] == want, "bcast n %d stride %d root %d: [%d] = %d, not %d", n,
			      stride, root, i, b[i], want);
		}
	}
	free(b);
}

/* Allgather of n elements per rank, in place or not. */
static void allgather_case(MPI_Comm c, int n, int stride, MPI_Datatype t, int in_place)
{
	int r, p, i, j, blk = n * stride, len, *s = coll_alloc((blk + 1) * sizeof(int)), *g;

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	len = p * blk + 1;
	g = coll_alloc(len * sizeof(int));
	for (i = 0; i < len; i++)
		g[i] = GUARD;
	for (i = 0; i <= blk; i++)
		s[i] = i % stride == 0 && i < blk ? coll_val(n, r, i) : GUARD;
	if (in_place) {
		memcpy(g + r * blk, s, blk * sizeof(int));
		OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, n, t, c));
	} else {
		OK(MPI_Allgather(s, n, t, g, n, t, c));
	}
	for (j = 0; j < p; j++) {
		for (i = 0; i < blk; i++) {
			int want = i % stride == 0 ? coll_val(n, j, i) : GUARD;

			CHECK(g[j * blk + i] == want, "allgather n %d stride %d%s: block %d [%d] = "
			      "%d, not %d", n, stride, in_place ? " in place" : "", j, i,
			      g[j * blk + i], want);
		}
	}
	CHECK(g[p * blk] == GUARD, "allgather n %d: written past the end", n);
	free(s);
	free(g);
}

/* Misuse: each returns its class, and the collectives after it still work. */
static void errors_case(MPI_Comm c)
{
	int r, p, j, b[4] = { 1, 2, 3, 4 }, g[64];

	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &p);
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	CHECK(MPI_Bcast(b, 2, MPI_INT, p, c) == MPI_ERR_ROOT, "Bcast root %d accepted", p);
	CHECK(MPI_Bcast(b, 2, MPI_INT, -1, c) == MPI_ERR_ROOT, "Bcast root -1 accepted");
	CHECK(MPI_Bcast(b, -1, MPI_INT, 0, c) == MPI_ERR_COUNT, "Bcast count -1 accepted");
	CHECK(MPI_Bcast(b, 2, MPI_DATATYPE_NULL, 0, c) == MPI_ERR_TYPE,
	      "Bcast without a type accepted");
	CHECK(MPI_Allgather(b, -1, MPI_INT, g, 1, MPI_INT, c) == MPI_ERR_COUNT,
	      "Allgather send count -1 accepted");
	CHECK(MPI_Allgather(b, 1, MPI_INT, g, 1, MPI_DATATYPE_NULL, c) == MPI_ERR_TYPE,
	      "Allgather without a receive type accepted");
	CHECK(MPI_Allgather(b, 1, MPI_INT, NULL, 1, MPI_INT, c) == MPI_ERR_BUFFER,
	      "Allgather into NULL accepted");
	/* MPI_COMM_NULL reports through MPI_COMM_WORLD's handler. */
	if (c == MPI_COMM_WORLD)
		CHECK(MPI_Bcast(b, 2, MPI_INT, 0, MPI_COMM_NULL) == MPI_ERR_COMM,
		      "Bcast on MPI_COMM_NULL accepted");
	/* Nothing was sent or lost: the next calls see their own data only. */
	b[0] = r == 0 ? 41 : 0;
	OK(MPI_Bcast(b, 1, MPI_INT, 0, c));
	CHECK(b[0] == 41, "Bcast after the errors: %d", b[0]);
	b[0] = r * 3 + 1;
	OK(MPI_Allgather(b, 1, MPI_INT, g, 1, MPI_INT, c));
	for (j = 0; j < p && j < 64; j++)
		CHECK(g[j] == j * 3 + 1, "Allgather after the errors: [%d] = %d", j, g[j]);
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	MPI_Datatype st;
	int k, z, p;
	char where[128];

	coll_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	st = strided();
	for (k = 0; k < COLL_NCOMMS; k++) {
		const char *cname;
		MPI_Comm c = coll_comm(k, &cname);

		for (z = 0; z < NCOUNTS; z++) {
			/* 64 KiB and 1 MiB on the world only, 1 MiB contiguous only:
			 * they are slow on shared cores. */
			if (counts[z] >= 16384 && k)
				continue;
			snprintf(where, sizeof(where), "%s, %d ints", cname, counts[z]);
			coll_where = where;
			bcast_case(c, counts[z], 1, MPI_INT);
			allgather_case(c, counts[z], 1, MPI_INT, 0);
			allgather_case(c, counts[z], 1, MPI_INT, 1);
			if (counts[z] > 16384)
				continue;
			bcast_case(c, counts[z], 2, st);
			allgather_case(c, counts[z], 2, st, 0);
			allgather_case(c, counts[z], 2, st, 1);
		}
		snprintf(where, sizeof(where), "%s, errors", cname);
		coll_where = where;
		errors_case(c);
		coll_comm_done(&c);
	}
	OK(MPI_Type_free(&st));
	coll_where = "finalize";
	OK(MPI_Finalize());
	if (coll_world_rank == 0)
		printf("coll_flat: passed on %d ranks\n", p);
	return 0;
}
