/* SPDX-License-Identifier: MIT */
/*
 * header.c - include/mpi.h compiles as strict C99 and as C++ (this file is
 * built both ways) and its predefined handles are address constants.
 */
#include <mpi.h>

#include <stdio.h>

/* Address constants: valid in static initializers, in C and C++. */
static const MPI_Datatype types[] = {
	MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_PACKED, MPI_WCHAR,
	MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
	MPI_LONG_LONG_INT, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
	MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
	MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT,
	MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
	MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
	MPI_LONG_DOUBLE_INT,
};

/* The special weights of the distributed graphs are address constants too. */
static int *const weights[] = { MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY };

static int failures;

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "header: %s\n", what);
		failures++;
	}
}

int main(void)
{
	MPI_Status st;
	size_t i, j, n = sizeof(types) / sizeof(types[0]);

	st.MPI_SOURCE = 1;
	st.MPI_TAG = 2;
	st.MPI_ERROR = MPI_SUCCESS;
	expect(st.MPI_SOURCE + st.MPI_TAG == 3, "MPI_Status fields");
	expect(MPI_SUCCESS == 0, "MPI_SUCCESS is 0");
	expect(MPI_ERR_LASTCODE > MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_LASTCODE is the last");
	expect(MPI_IDENT < MPI_CONGRUENT && MPI_CONGRUENT < MPI_SIMILAR &&
	       MPI_SIMILAR < MPI_UNEQUAL, "comparison results ordered");
	expect(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
	       MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
	       MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread levels ordered");
	expect(MPI_COMM_NULL == (MPI_Comm)0 && MPI_REQUEST_NULL == (MPI_Request)0,
	       "null handles");
	expect(MPI_LONG_LONG == MPI_LONG_LONG_INT, "MPI_LONG_LONG is MPI_LONG_LONG_INT");
	expect(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX is MPI_C_FLOAT_COMPLEX");
	expect(weights[0] && weights[1] && weights[0] != weights[1],
	       "MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are distinct and not NULL");
	expect(MPI_CART != MPI_GRAPH && MPI_GRAPH != MPI_DIST_GRAPH && MPI_CART != MPI_UNDEFINED,
	       "topology kinds distinct");
	for (i = 0; i < n; i++) {
		expect(types[i] != MPI_DATATYPE_NULL, "predefined datatype not null");
		for (j = i + 1; j < n; j++)
			if (types[i] == types[j] && !((i == 12 && j == 13) || (i == 30 && j == 31)))
				expect(0, "two predefined datatypes share one handle");
	}
	if (failures)
		return 1;
	printf("header: %zu predefined datatypes, MPI %d.%d\n", n, MPI_VERSION, MPI_SUBVERSION);
	return 0;
}
