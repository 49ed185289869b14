/* SPDX-License-Identifier: MIT */
/*
 * coll_check.h - what the tests of the collectives share: a failed check
 * names the rank, the test and the values and stops the job; the
 * communicators every test runs on; a deterministic pattern.
 */
#ifndef MPI_TEST_COLL_CHECK_H
#define MPI_TEST_COLL_CHECK_H

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int coll_world_rank;
static const char *coll_where = "";

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "rank %d: FAILED at %s:%d (%s): %s: ",               \
				coll_world_rank, __FILE__, __LINE__, coll_where, #cond);     \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			fflush(stderr);                                                      \
			MPI_Abort(MPI_COMM_WORLD, 1);                                        \
		}                                                                            \
	} while (0)

/* A call that must succeed. */
#define OK(call)                                                                             \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		CHECK(rc_ == MPI_SUCCESS, "returned %d", rc_);                               \
	} while (0)

/* The value rank r puts at index i of a buffer in test t (computed
 * unsigned: a large t or i wraps instead of overflowing). */
static inline int coll_val(int t, int r, int i)
{
	return (int)((unsigned)(t + 1) * 1000003u + (unsigned)r * 10007u + (unsigned)i * 7u);
}

static inline void *coll_alloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	CHECK(p != NULL, "cannot allocate %zu bytes", bytes);
	return p;
}

/*
 * The communicators of a test: MPI_COMM_WORLD, the world in reverse order
 * (every root and neighbour changes), and the two halves of the world
 * (odd sizes, and ranks that are not world ranks).  The names say which.
 */
#define COLL_NCOMMS 3

static inline MPI_Comm coll_comm(int k, const char **name)
{
	MPI_Comm c = MPI_COMM_NULL;
	int r, p;

	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	switch (k) {
	case 0:
		*name = "MPI_COMM_WORLD";
		return MPI_COMM_WORLD;
	case 1:
		*name = "world reversed";
		OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - r, &c));
		return c;
	default:
		*name = r < (p + 1) / 2 ? "lower half" : "upper half";
		OK(MPI_Comm_split(MPI_COMM_WORLD, r < (p + 1) / 2, r, &c));
		return c;
	}
}

static inline void coll_comm_done(MPI_Comm *c)
{
	if (*c != MPI_COMM_WORLD)
		OK(MPI_Comm_free(c));
}

static inline void coll_init(int *argc, char ***argv)
{
	OK(MPI_Init(argc, argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &coll_world_rank);
}

#endif /* MPI_TEST_COLL_CHECK_H */
