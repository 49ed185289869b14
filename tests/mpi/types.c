/* SPDX-License-Identifier: MIT */
/*
 * types.c - derived datatypes through point-to-point, run with bipload:
 *
 *   bipload -sz 2 mpi_types CASE
 *
 * Mostly rank 0 sends and rank 1 receives (other ranks only take part in
 * MPI_Init and MPI_Finalize, and in the sends to self).  Every receive buffer is first filled with
 * a pattern; after the receive, every byte is compared with what the type map says: the type's
 * bytes hold the sent values, every other byte (the gaps between blocks, the padding of structs,
 * what lies before and after) still holds the pattern.  Errors are returned (MPI_ERRORS_RETURN) and
 * checked by class.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "types: rank %d: %s:%d: ", rank, __FILE__, __LINE__);      \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define MPI_OK(call)                                                                               \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_ != MPI_SUCCESS) {                                                          \
			fprintf(stderr, "types: rank %d: %s failed with class %d\n", rank, #call,  \
				rc_);                                                              \
			MPI_Abort(MPI_COMM_WORLD, 2);                                              \
		}                                                                                  \
	} while (0)

#define PATTERN 0xa5

/* The first byte where a and b differ, or -1. */
static long first_difference(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

static void check_bytes(const void *got, const void *want, size_t n, const char *what)
{
	long at = first_difference(got, want, n);

	CHECK(at < 0, "%s: byte %ld of %zu is 0x%02x, want 0x%02x", what, at, n,
	      at < 0 ? 0 : ((const unsigned char *)got)[at],
	      at < 0 ? 0 : ((const unsigned char *)want)[at]);
}

/* --- A column of a matrix, and several columns with a resized type --- */

enum { ROWS = 50, COLS = 40 };

static double matrix_value(int r, int c)
{
	return r * 1000.0 + c + 0.25;
}

static void case_column(void)
{
	static double m[ROWS][COLS], want[ROWS][COLS];
	MPI_Datatype col, cols;
	int r, c;

	MPI_OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col));
	MPI_OK(MPI_Type_commit(&col));
	/* One double of extent: consecutive columns, sent as count 3. */
	MPI_OK(MPI_Type_create_resized(col, 0, sizeof(double), &cols));
	MPI_OK(MPI_Type_commit(&cols));
	if (rank == 0) {
		for (r = 0; r < ROWS; r++)
			for (c = 0; c < COLS; c++)
				m[r][c] = matrix_value(r, c);
		MPI_OK(MPI_Send(&m[0][7], 1, col, 1, 1, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(&m[0][10], 3, cols, 1, 2, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_Status st;
		int n;

		memset(m, PATTERN, sizeof(m));
		memcpy(want, m, sizeof(m));
		for (r = 0; r < ROWS; r++)
			want[r][2] = matrix_value(r, 7);
		MPI_OK(MPI_Recv(&m[0][2], 1, col, 0, 1, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, col, &n));
		CHECK(n == 1, "column: count %d", n);
		MPI_OK(MPI_Get_elements(&st, col, &n));
		CHECK(n == ROWS, "column: elements %d, want %d", n, ROWS);
		check_bytes(m, want, sizeof(m), "column into column 2");

		/* Three columns arrive as columns 30..32. */
		for (r = 0; r < ROWS; r++)
			for (c = 0; c < 3; c++)
				want[r][30 + c] = matrix_value(r, 10 + c);
		MPI_OK(MPI_Recv(&m[0][30], 3, cols, 0, 2, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, cols, &n));
		CHECK(n == 3, "columns: count %d", n);
		check_bytes(m, want, sizeof(m), "3 columns into columns 30..32");
	}
	MPI_OK(MPI_Type_free(&cols));
	MPI_OK(MPI_Type_free(&col));
}

/* --- A struct with holes --- */

struct rec {
	char c;
	double d;
	short s[3];
	int i;
};

static MPI_Datatype rec_type(void)
{
	struct rec r = {0};
	int bl[4] = {1, 1, 3, 1};
	MPI_Aint disp[4], base;
	MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT}, t;
	int k;

	MPI_OK(MPI_Get_address(&r, &base));
	MPI_OK(MPI_Get_address(&r.c, &disp[0]));
	MPI_OK(MPI_Get_address(&r.d, &disp[1]));
	MPI_OK(MPI_Get_address(&r.s, &disp[2]));
	MPI_OK(MPI_Get_address(&r.i, &disp[3]));
	for (k = 0; k < 4; k++)
		disp[k] -= base;
	MPI_OK(MPI_Type_create_struct(4, bl, disp, types, &t));
	MPI_OK(MPI_Type_commit(&t));
	return t;
}

static void rec_fill(struct rec *r, int k)
{
	r->c = (char)('a' + k);
	r->d = k * 3.5;
	r->s[0] = (short)(k * 7);
	r->s[1] = (short)-k;
	r->s[2] = (short)(k + 100);
	r->i = k * 100000;
}

enum { NREC = 17 };

static void case_struct(void)
{
	MPI_Datatype t = rec_type();
	struct rec recs[NREC + 2], want[NREC + 2];
	MPI_Aint lb, ext;
	int k, n;

	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(lb == 0 && ext == sizeof(struct rec), "struct: lb %ld extent %ld, want 0 %zu",
	      (long)lb, (long)ext, sizeof(struct rec));
	MPI_OK(MPI_Type_size(t, &n));
	CHECK(n == 1 + 8 + 6 + 4, "struct: size %d", n);
	if (rank == 0) {
		memset(recs, 0x3c, sizeof(recs)); /* the holes: must not arrive */
		for (k = 0; k < NREC; k++)
			rec_fill(&recs[k + 1], k);
		MPI_OK(MPI_Send(&recs[1], NREC, t, 1, 3, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_Status st;

		memset(recs, PATTERN, sizeof(recs));
		memset(want, PATTERN, sizeof(want));
		for (k = 0; k < NREC; k++)
			rec_fill(&want[k + 1], k);
		MPI_OK(MPI_Recv(&recs[1], NREC, t, 0, 3, MPI_COMM_WORLD, &st));
		check_bytes(recs, want, sizeof(recs), "structs (holes keep the pattern)");
		MPI_OK(MPI_Get_count(&st, t, &n));
		CHECK(n == NREC, "struct: count %d", n);
		MPI_OK(MPI_Get_elements(&st, t, &n));
		CHECK(n == NREC * 6, "struct: elements %d, want %d", n, NREC * 6);
	}
	MPI_OK(MPI_Type_free(&t));
}

/* --- Indexed: the sender's and receiver's layouts differ --- */

static void case_indexed(void)
{
	int bl[4] = {3, 1, 4, 2}, disp[4] = {20, 0, 9, 30};
	int data[40], want[40], k, j, v;
	MPI_Datatype t, blk;

	MPI_OK(MPI_Type_indexed(4, bl, disp, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	/* 10 ints as 5 blocks of 2, each block at 3 * i ints (hindexed_block). */
	{
		MPI_Aint hd[5];

		for (k = 0; k < 5; k++)
			hd[k] = (MPI_Aint)(3 * k * sizeof(int));
		MPI_OK(MPI_Type_create_hindexed_block(5, 2, hd, MPI_INT, &blk));
		MPI_OK(MPI_Type_commit(&blk));
	}
	if (rank == 0) {
		for (k = 0; k < 40; k++)
			data[k] = 1000 + k;
		/* Sent: data[20..22], data[0], data[9..12], data[30..31]. */
		MPI_OK(MPI_Send(data, 1, t, 1, 4, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(data, 1, t, 1, 5, MPI_COMM_WORLD));
	} else if (rank == 1) {
		int sent[10];

		v = 0;
		for (k = 0; k < 4; k++)
			for (j = 0; j < bl[k]; j++)
				sent[v++] = 1000 + disp[k] + j;
		/* Received as it was sent. */
		memset(data, PATTERN, sizeof(data));
		memcpy(want, data, sizeof(data));
		v = 0;
		for (k = 0; k < 4; k++)
			for (j = 0; j < bl[k]; j++)
				want[disp[k] + j] = sent[v++];
		MPI_OK(MPI_Recv(data, 1, t, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		check_bytes(data, want, sizeof(data), "indexed into the same indexed type");
		/* Received into another layout of 10 ints. */
		memset(data, PATTERN, sizeof(data));
		memcpy(want, data, sizeof(data));
		for (k = 0; k < 5; k++) {
			want[3 * k] = sent[2 * k];
			want[3 * k + 1] = sent[2 * k + 1];
		}
		MPI_OK(MPI_Recv(data, 1, blk, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		check_bytes(data, want, sizeof(data), "indexed into hindexed_block");
	}
	MPI_OK(MPI_Type_free(&blk));
	MPI_OK(MPI_Type_free(&t));
}

/* --- Resized with a negative lower bound, and a negative stride --- */

static void case_resized(void)
{
	MPI_Datatype pair, t;
	short buf[64], want[64];
	int k;

	/* Two shorts 3 apart, going down (stride -3), extent from -6 to 6. */
	MPI_OK(MPI_Type_vector(2, 1, -3, MPI_SHORT, &pair));
	MPI_OK(MPI_Type_create_resized(pair, -6 * (MPI_Aint)sizeof(short),
				       12 * (MPI_Aint)sizeof(short), &t));
	MPI_OK(MPI_Type_commit(&t));
	if (rank == 0) {
		for (k = 0; k < 64; k++)
			buf[k] = (short)(k * 11);
		/* Elements at 10, 22, 34, 46: shorts 10,7 22,19 34,31 46,43. */
		MPI_OK(MPI_Send(&buf[10], 4, t, 1, 6, MPI_COMM_WORLD));
	} else if (rank == 1) {
		memset(buf, PATTERN, sizeof(buf));
		memcpy(want, buf, sizeof(buf));
		/* Received at 20, 32, 44, 56. */
		for (k = 0; k < 4; k++) {
			want[20 + 12 * k] = (short)((10 + 12 * k) * 11);
			want[17 + 12 * k] = (short)((7 + 12 * k) * 11);
		}
		MPI_OK(MPI_Recv(&buf[20], 4, t, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		check_bytes(buf, want, sizeof(buf), "resized with a negative lb and stride");
	}
	MPI_OK(MPI_Type_free(&t));
	MPI_OK(MPI_Type_free(&pair));
}

/* --- A large strided message (long-message path) --- */

enum { NLARGE = 300000 };

static void case_large(void)
{
	MPI_Datatype t;
	double *a = malloc(sizeof(double) * 3 * NLARGE);
	long k;

	CHECK(a != NULL, "out of memory");
	if (!a)
		return;
	MPI_OK(MPI_Type_vector(NLARGE, 2, 3, MPI_DOUBLE, &t));
	MPI_OK(MPI_Type_commit(&t));
	if (rank == 0) {
		for (k = 0; k < 3L * NLARGE; k++)
			a[k] = (double)k;
		MPI_OK(MPI_Send(a, 1, t, 1, 7, MPI_COMM_WORLD));
	} else if (rank == 1) {
		long bad = -1;

		memset(a, PATTERN, sizeof(double) * 3 * NLARGE);
		MPI_OK(MPI_Recv(a, 1, t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (k = 0; k < 3L * NLARGE && bad < 0; k++) {
			double v;
			unsigned char pat[sizeof(double)];

			memset(pat, PATTERN, sizeof(pat));
			if (k % 3 == 2) {
				if (memcmp(&a[k], pat, sizeof(double)))
					bad = k;
				continue;
			}
			v = (double)k;
			if (a[k] != v)
				bad = k;
		}
		CHECK(bad < 0, "large vector: double %ld is wrong", bad);
	}
	MPI_OK(MPI_Type_free(&t));
	free(a);
}

/* --- Derived types that are one block: sent from where the data starts --- */

enum { NCONTIG = 70000 };

static void case_contig(void)
{
	MPI_Datatype blk, two;
	int bl = NCONTIG, *a = malloc(sizeof(int) * (2 * NCONTIG + 64)), k;
	MPI_Aint disp = 16 * sizeof(int);

	CHECK(a != NULL, "out of memory");
	if (!a)
		return;
	/* One block 16 ints into the buffer: the copies abut (extent = size),
	 * so count 2 is 2 * NCONTIG ints from a + 16. */
	MPI_OK(MPI_Type_create_hindexed(1, &bl, &disp, MPI_INT, &blk));
	MPI_OK(MPI_Type_commit(&blk));
	/* A contiguous of it, for the nesting. */
	MPI_OK(MPI_Type_contiguous(2, blk, &two));
	MPI_OK(MPI_Type_commit(&two));
	if (rank == 0) {
		for (k = 0; k < 2 * NCONTIG + 64; k++)
			a[k] = k * 3;
		MPI_OK(MPI_Send(a, 2, blk, 1, 14, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(a, 1, two, 1, 15, MPI_COMM_WORLD));
	} else if (rank == 1) {
		int *want = malloc(sizeof(int) * (2 * NCONTIG + 64));

		CHECK(want != NULL, "out of memory");
		if (!want) {
			free(a);
			return;
		}
		memset(a, PATTERN, sizeof(int) * (2 * NCONTIG + 64));
		memcpy(want, a, sizeof(int) * (2 * NCONTIG + 64));
		for (k = 16; k < 16 + 2 * NCONTIG; k++)
			want[k] = k * 3;
		MPI_OK(MPI_Recv(a, 2, blk, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		check_bytes(a, want, sizeof(int) * (2 * NCONTIG + 64), "one-block hindexed");
		memset(a, PATTERN, sizeof(int) * (2 * NCONTIG + 64));
		MPI_OK(MPI_Recv(a, 1, two, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		check_bytes(a, want, sizeof(int) * (2 * NCONTIG + 64), "contiguous of it");
		free(want);
	}
	MPI_OK(MPI_Type_free(&two));
	MPI_OK(MPI_Type_free(&blk));
	free(a);
}

/* --- Several derived-type requests in flight, to self, and replace --- */

enum { NB = 6, NBLEN = 5000 };

static void case_nonblocking(void)
{
	MPI_Datatype t[NB];
	MPI_Request req[NB + 1];
	static int a[NB][3 * NBLEN], want[NB][3 * NBLEN];
	int k, j, self[40], selfwant[40], rep[30], repwant[30];
	MPI_Datatype v;

	/* Vectors of growing stride; the last ones go by rendezvous. */
	for (k = 0; k < NB; k++) {
		MPI_OK(MPI_Type_vector(k < 3 ? 50 : NBLEN, 1, 1 + k % 3, MPI_INT, &t[k]));
		MPI_OK(MPI_Type_commit(&t[k]));
	}
	if (rank == 0) {
		for (k = 0; k < NB; k++)
			for (j = 0; j < 3 * NBLEN; j++)
				a[k][j] = k * 100000 + j;
		for (k = 0; k < NB; k++)
			MPI_OK(MPI_Isend(a[k], 1, t[k], 1, 40 + k, MPI_COMM_WORLD, &req[k]));
		MPI_OK(MPI_Waitall(NB, req, MPI_STATUSES_IGNORE));
	} else if (rank == 1) {
		memset(a, PATTERN, sizeof(a));
		memcpy(want, a, sizeof(a));
		for (k = 0; k < NB; k++) {
			int n = k < 3 ? 50 : NBLEN, stride = 1 + k % 3;

			for (j = 0; j < n; j++)
				want[k][j * stride] = k * 100000 + j * stride;
		}
		/* Posted in reverse order of the sends. */
		for (k = NB - 1; k >= 0; k--)
			MPI_OK(MPI_Irecv(a[k], 1, t[k], 0, 40 + k, MPI_COMM_WORLD, &req[k]));
		MPI_OK(MPI_Waitall(NB, req, MPI_STATUSES_IGNORE));
		check_bytes(a, want, sizeof(a), "vectors received by Irecv and Waitall");
	}

	/* To self: 10 ints of a vector of stride 4 arrive as a contiguous 10. */
	MPI_OK(MPI_Type_vector(10, 1, 4, MPI_INT, &v));
	MPI_OK(MPI_Type_commit(&v));
	for (k = 0; k < 40; k++)
		self[k] = rank * 1000 + k;
	memset(selfwant, PATTERN, sizeof(selfwant));
	for (k = 0; k < 10; k++)
		selfwant[k] = rank * 1000 + 4 * k;
	{
		int got[40];

		memset(got, PATTERN, sizeof(got));
		MPI_OK(MPI_Isend(self, 1, v, rank, 50, MPI_COMM_WORLD, &req[NB]));
		MPI_OK(MPI_Recv(got, 10, MPI_INT, rank, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Wait(&req[NB], MPI_STATUS_IGNORE));
		check_bytes(got, selfwant, sizeof(got), "vector sent to self");
	}

	/* Sendrecv_replace on a vector: ranks 0 and 1 swap every third int. */
	if (rank < 2) {
		MPI_Datatype third;
		int peer = 1 - rank;

		MPI_OK(MPI_Type_vector(10, 1, 3, MPI_INT, &third));
		MPI_OK(MPI_Type_commit(&third));
		for (k = 0; k < 30; k++)
			rep[k] = repwant[k] = rank * 1000 + k;
		for (k = 0; k < 10; k++)
			repwant[3 * k] = peer * 1000 + 3 * k;
		MPI_OK(MPI_Sendrecv_replace(rep, 1, third, peer, 51, peer, 51, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE));
		check_bytes(rep, repwant, sizeof(rep), "Sendrecv_replace of a vector");
		MPI_OK(MPI_Type_free(&third));
	}
	MPI_OK(MPI_Type_free(&v));
	for (k = 0; k < NB; k++)
		MPI_OK(MPI_Type_free(&t[k]));
}

/* --- Element counts of a message shorter than the receive --- */

static void case_elements(void)
{
	MPI_Datatype t;
	int bl[2] = {1, 1};
	MPI_Aint disp[2] = {0, 8};
	MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};

	/* { double; int; } padded to 16: 12 bytes of data per element. */
	MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &t));
	MPI_OK(MPI_Type_commit(&t));
	if (rank == 0) {
		double d[4] = {1, 2, 3, 4};
		char raw[20] = {0};

		/* 2 whole elements and a double: 28 bytes. */
		struct {
			double d;
			int i;
		} s[3] = {{1, 2}, {3, 4}, {5, 6}};

		MPI_OK(MPI_Send(s, 2, t, 1, 8, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(d, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(raw, 20, MPI_BYTE, 1, 10, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(raw, 10, MPI_BYTE, 1, 11, MPI_COMM_WORLD));
	} else if (rank == 1) {
		struct {
			double d;
			int i;
		} r[3];
		MPI_Status st;
		int n;

		MPI_OK(MPI_Recv(r, 3, t, 0, 8, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, t, &n));
		CHECK(n == 2, "2 structs: count %d", n);
		MPI_OK(MPI_Get_elements(&st, t, &n));
		CHECK(n == 4, "2 structs: elements %d, want 4", n);
		CHECK(r[1].d == 3 && r[1].i == 4, "2 structs: second is %g %d", r[1].d, r[1].i);
		MPI_OK(MPI_Recv(r, 3, t, 0, 9, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, t, &n));
		CHECK(n == MPI_UNDEFINED, "a double: count %d, want MPI_UNDEFINED", n);
		MPI_OK(MPI_Get_elements(&st, t, &n));
		CHECK(n == 1, "a double: elements %d, want 1", n);
		/* 20 bytes: a struct and a double. */
		MPI_OK(MPI_Recv(r, 3, t, 0, 10, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_elements(&st, t, &n));
		CHECK(n == 3, "20 bytes: elements %d, want 3", n);
		/* 10 bytes end inside the int: not a whole number of elements. */
		MPI_OK(MPI_Recv(r, 3, t, 0, 11, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_elements(&st, t, &n));
		CHECK(n == MPI_UNDEFINED, "10 bytes: elements %d, want MPI_UNDEFINED", n);
	}
	MPI_OK(MPI_Type_free(&t));
}

/* --- A type freed while a receive that uses it is pending --- */

static void case_freed(void)
{
	MPI_Datatype t;
	int data[30], want[30], k;

	MPI_OK(MPI_Type_vector(10, 1, 3, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	if (rank == 0) {
		for (k = 0; k < 30; k++)
			data[k] = k + 1;
		/* The receive is posted (and its type freed) before this send. */
		MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Send(data, 1, t, 1, 13, MPI_COMM_WORLD));
		MPI_OK(MPI_Type_free(&t));
	} else if (rank == 1) {
		MPI_Datatype other[4];
		MPI_Request req;

		memset(data, PATTERN, sizeof(data));
		memcpy(want, data, sizeof(data));
		for (k = 0; k < 10; k++)
			want[3 * k] = 3 * k + 1;
		MPI_OK(MPI_Irecv(data, 1, t, 0, 13, MPI_COMM_WORLD, &req));
		MPI_OK(MPI_Type_free(&t));
		CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free did not clear the handle");
		/* Types of the same shape made now would take the memory of the
		 * freed one if the receive did not keep it alive. */
		for (k = 0; k < 4; k++) {
			MPI_OK(MPI_Type_vector(10, 1, 2, MPI_INT, &other[k]));
			MPI_OK(MPI_Type_commit(&other[k]));
		}
		MPI_OK(MPI_Send(NULL, 0, MPI_INT, 0, 12, MPI_COMM_WORLD));
		MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		check_bytes(data, want, sizeof(data), "receive with a type freed meanwhile");
		for (k = 0; k < 4; k++)
			MPI_OK(MPI_Type_free(&other[k]));
	}
}

/* --- Misuse, each with its error class --- */

static void expect_class(int rc, int want, const char *what)
{
	int cls = -1;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	else
		cls = MPI_SUCCESS;
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

static void case_errors(void)
{
	MPI_Datatype t = MPI_DATATYPE_NULL, u, p = MPI_INT;
	int bl[2] = {1, -2}, disp[2] = {0, 4}, buf[8] = {0}, pos;
	MPI_Aint adisp[2] = {0, 4};
	MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
	char packed[16];

	expect_class(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "contiguous count -1");
	expect_class(MPI_Type_vector(-3, 1, 1, MPI_INT, &t), MPI_ERR_COUNT, "vector count -3");
	expect_class(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, "vector blocklength -1");
	expect_class(MPI_Type_indexed(2, bl, disp, MPI_INT, &t), MPI_ERR_ARG,
		     "indexed blocklength -2");
	expect_class(MPI_Type_indexed(2, bl, NULL, MPI_INT, &t), MPI_ERR_ARG,
		     "indexed without displacements");
	expect_class(MPI_Type_create_hindexed(2, NULL, adisp, MPI_INT, &t), MPI_ERR_ARG,
		     "hindexed without block lengths");
	bl[1] = 1;
	expect_class(MPI_Type_create_struct(2, bl, adisp, types, &t), MPI_ERR_TYPE,
		     "struct with MPI_DATATYPE_NULL");
	expect_class(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE,
		     "contiguous of MPI_DATATYPE_NULL");
	CHECK(t == MPI_DATATYPE_NULL, "a failed constructor set newtype");
	expect_class(MPI_Type_free(&p), MPI_ERR_TYPE, "freeing MPI_INT");
	CHECK(p == MPI_INT, "freeing MPI_INT changed the handle");
	expect_class(MPI_Type_commit(&t), MPI_ERR_TYPE, "committing MPI_DATATYPE_NULL");

	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &u));
	/* Not committed: no communication, no packing. */
	expect_class(MPI_Send(buf, 1, u, (rank + 1) % size, 20, MPI_COMM_WORLD), MPI_ERR_TYPE,
		     "send with an uncommitted type");
	pos = 0;
	expect_class(MPI_Pack(buf, 1, u, packed, 16, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE,
		     "pack with an uncommitted type");
	expect_class(MPI_Send(buf, 1, MPI_DATATYPE_NULL, (rank + 1) % size, 20, MPI_COMM_WORLD),
		     MPI_ERR_TYPE, "send with MPI_DATATYPE_NULL");
	MPI_OK(MPI_Type_commit(&u));
	/* 3 elements of 8 bytes overrun 16 bytes. */
	pos = 0;
	expect_class(MPI_Pack(buf, 3, u, packed, 16, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
		     "pack past the end");
	CHECK(pos == 0, "a failed pack moved position to %d", pos);
	MPI_OK(MPI_Pack(buf, 2, u, packed, 16, &pos, MPI_COMM_WORLD));
	CHECK(pos == 16, "pack: position %d, want 16", pos);
	pos = 8;
	expect_class(MPI_Unpack(packed, 16, &pos, buf, 2, u, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
		     "unpack past the end");
	expect_class(MPI_Pack(buf, -1, u, packed, 16, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT,
		     "pack count -1");
	/* A message longer than the receive: truncated. */
	if (rank == 0 && size > 1) {
		MPI_OK(MPI_Send(buf, 3, u, 1, 21, MPI_COMM_WORLD));
	} else if (rank == 1) {
		expect_class(MPI_Recv(buf, 2, u, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
			     MPI_ERR_TRUNCATE, "receive of 3 elements into 2");
	}
	MPI_OK(MPI_Type_free(&u));
	expect_class(MPI_Type_free(&u), MPI_ERR_TYPE, "freeing twice");

	/* Sizes past an int: 2^33 bytes is a valid type (its layout is one
	 * block, nothing is allocated), whose size an int cannot hold; 2^63
	 * bytes is refused. */
	{
		MPI_Datatype big, huge = MPI_DATATYPE_NULL;
		MPI_Count sx;
		int si;

		MPI_OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &big));
		MPI_OK(MPI_Type_size_x(big, &sx));
		CHECK(sx == (MPI_Count)1 << 33, "size_x of 2^30 doubles: %lld", (long long)sx);
		MPI_OK(MPI_Type_size(big, &si));
		CHECK(si == MPI_UNDEFINED, "size of 2^30 doubles: %d, want MPI_UNDEFINED", si);
		expect_class(MPI_Pack_size(1, big, MPI_COMM_WORLD, &si), MPI_ERR_COUNT,
			     "pack size of 2^33 bytes");
		expect_class(MPI_Type_contiguous(1 << 30, big, &huge), MPI_ERR_COUNT,
			     "a type of 2^63 bytes");
		CHECK(huge == MPI_DATATYPE_NULL, "a refused type was returned");
		MPI_OK(MPI_Type_free(&big));
	}
}

/* --- Pack and Unpack of a struct, sent as MPI_PACKED --- */

static void case_packed(void)
{
	MPI_Datatype t = rec_type();
	struct rec recs[3], want[3];
	char buf[256];
	int pos = 0, n, k, sz;

	MPI_OK(MPI_Pack_size(3, t, MPI_COMM_WORLD, &sz));
	CHECK(sz == 3 * 19, "pack size %d", sz);
	if (rank == 0) {
		memset(recs, 0, sizeof(recs));
		for (k = 0; k < 3; k++)
			rec_fill(&recs[k], k + 5);
		n = 42;
		MPI_OK(MPI_Pack(&n, 1, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
		MPI_OK(MPI_Pack(recs, 3, t, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(buf, pos, MPI_PACKED, 1, 30, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_Status st;

		MPI_OK(MPI_Recv(buf, sizeof(buf), MPI_PACKED, 0, 30, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, MPI_PACKED, &sz));
		CHECK(sz == 4 + 3 * 19, "packed message of %d bytes", sz);
		memset(recs, PATTERN, sizeof(recs));
		memset(want, PATTERN, sizeof(want));
		for (k = 0; k < 3; k++)
			rec_fill(&want[k], k + 5);
		MPI_OK(MPI_Unpack(buf, sz, &pos, &n, 1, MPI_INT, MPI_COMM_WORLD));
		CHECK(n == 42, "unpacked int %d", n);
		MPI_OK(MPI_Unpack(buf, sz, &pos, recs, 3, t, MPI_COMM_WORLD));
		CHECK(pos == sz, "unpack stopped at %d of %d", pos, sz);
		check_bytes(recs, want, sizeof(recs), "unpacked structs");
	}
	MPI_OK(MPI_Type_free(&t));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    /* clang-format off */
	{ "column", case_column },
	{ "struct", case_struct },
	{ "indexed", case_indexed },
	{ "resized", case_resized },
	{ "large", case_large },
	{ "elements", case_elements },
	{ "freed", case_freed },
	{ "errors", case_errors },
	{ "packed", case_packed },
	{ "contig", case_contig },
	{ "nonblocking", case_nonblocking },
    /* clang-format on */
};

int main(int argc, char **argv)
{
	size_t i;
	int found = 0;

	MPI_OK(MPI_Init(&argc, &argv));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (size < 2) {
		if (rank == 0)
			printf("types: needs 2 processes, has %d: skipped\n", size);
		MPI_Finalize();
		return 77;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		found = 1;
		cases[i].fn();
	}
	if (!found) {
		fprintf(stderr, "types: no case named %s\n", argv[1]);
		failures++;
	}
	MPI_Finalize();
	return failures ? 1 : 0;
}
