/* SPDX-License-Identifier: MIT */
/* Assertions of the MPI tests: a failure names the rank and exits 1. */
#ifndef MPI_TEST_CHECK_H
#define MPI_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int check_rank = -1;

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "rank %d: FAILED at %s:%d: %s: ", check_rank,        \
				__FILE__, __LINE__, #cond);                                  \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

/* A call that must succeed. */
#define OK(call)                                                                             \
	do {                                                                                 \
		int ok_rc_ = (call);                                                         \
		CHECK(ok_rc_ == MPI_SUCCESS, "returned %d", ok_rc_);                         \
	} while (0)

#endif /* MPI_TEST_CHECK_H */
