/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the datatypes (lib/mpi_shim/datatype.c) and of their layout
 * engine (lib/mpi_shim/type_layout.c).
 *
 * Every derived type is checked against a reference type map built here
 * from the constructor's definition in the standard: a list of basic
 * elements (displacement, size) in packing order.  Packing must produce the
 * bytes of those elements in that order; unpacking must write exactly those
 * bytes and leave every other byte of the buffer as it was; any range of the
 * packed stream must come out the same when packed or unpacked in pieces.
 * None of these calls needs MPI_Init; the misuse of the calls, which goes
 * through the error handlers, is tested in tests/mpi/types.c.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"
#include "type_layout.h"

/* --- Reference type maps --- */

struct ref_elem {
	long disp;
	int size;
};

struct ref {
	int n;
	struct ref_elem *e;
};

static void ref_add(struct ref *r, long disp, int size)
{
	r->e = realloc(r->e, (size_t)(r->n + 1) * sizeof(*r->e));
	ck_assert_ptr_nonnull(r->e);
	r->e[r->n].disp = disp;
	r->e[r->n].size = size;
	r->n++;
}

/* Append `copies` copies of old's map, the k-th at disp + k * step. */
static void ref_append(struct ref *r, const struct ref *old, long copies, long disp, long step)
{
	long k;
	int i;

	for (k = 0; k < copies; k++)
		for (i = 0; i < old->n; i++)
			ref_add(r, disp + k * step + old->e[i].disp, old->e[i].size);
}

static struct ref ref_basic(int size)
{
	struct ref r = {0, NULL};

	ref_add(&r, 0, size);
	return r;
}

static long extent_of(MPI_Datatype t)
{
	MPI_Aint lb, ext;

	ck_assert_int_eq(MPI_Type_get_extent(t, &lb, &ext), MPI_SUCCESS);
	return ext;
}

/* --- Checking a type against its reference map --- */

/* Fill a buffer with a pattern that differs from byte to byte. */
static void fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

/*
 * Check count elements of t (count >= 1) against ref: size, true bounds,
 * Pack, Unpack (bytes between blocks untouched), piecewise packing and
 * unpacking with several piece sizes, and the element counts of every
 * prefix of the packed stream.
 */
static void check_against(MPI_Datatype t, const struct ref *ref, int count)
{
	MPI_Aint lb, ext, tlb, text;
	long lo = 0, hi = 0, span, origin;
	size_t size = 0, total, bufsize, off;
	unsigned char *mem, *packed, *expect, *out, *mem2;
	int i, k, sz, pieces[] = {1, 3, 7, 64, 1000};

	ck_assert_int_eq(MPI_Type_get_extent(t, &lb, &ext), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_true_extent(t, &tlb, &text), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_size(t, &sz), MPI_SUCCESS);
	for (i = 0; i < ref->n; i++) {
		if (i == 0 || ref->e[i].disp < lo)
			lo = ref->e[i].disp;
		if (i == 0 || ref->e[i].disp + ref->e[i].size > hi)
			hi = ref->e[i].disp + ref->e[i].size;
		size += (size_t)ref->e[i].size;
	}
	ck_assert_msg((size_t)sz == size, "size %d, type map says %zu", sz, size);
	if (ref->n) {
		ck_assert_msg(tlb == lo && text == hi - lo, "true lb %ld extent %ld, map: %ld %ld",
			      (long)tlb, (long)text, lo, hi - lo);
	}

	/* A buffer that holds count elements, wherever their bytes fall. */
	span = (count - 1) * (long)ext;
	origin = -(lo + (span < 0 ? span : 0)) + 64;
	bufsize = (size_t)(hi - lo + labs(span) + 128);
	total = size * (size_t)count;
	mem = malloc(bufsize);
	mem2 = malloc(bufsize);
	expect = malloc(bufsize);
	packed = malloc(total + 1);
	out = malloc(total + 1);
	ck_assert(mem && mem2 && expect && packed && out);
	fill(mem, bufsize, 1);

	/* The reference packed stream. */
	off = 0;
	for (k = 0; k < count; k++)
		for (i = 0; i < ref->n; i++) {
			memcpy(packed + off, mem + origin + k * ext + ref->e[i].disp,
			       (size_t)ref->e[i].size);
			off += (size_t)ref->e[i].size;
		}

	memset(out, 0, total + 1);
	mpi_shim_datatype_pack(mem + origin, count, t, 0, out, total);
	ck_assert_msg(memcmp(out, packed, total) == 0, "packing differs from the type map");

	/* Unpack into a buffer of another pattern: only the map's bytes change. */
	fill(mem2, bufsize, 99);
	memcpy(expect, mem2, bufsize);
	off = 0;
	for (k = 0; k < count; k++)
		for (i = 0; i < ref->n; i++) {
			memcpy(expect + origin + k * ext + ref->e[i].disp, packed + off,
			       (size_t)ref->e[i].size);
			off += (size_t)ref->e[i].size;
		}
	mpi_shim_datatype_unpack(packed, total, mem2 + origin, count, t, 0);
	ck_assert_msg(memcmp(mem2, expect, bufsize) == 0, "unpacking differs from the type map");

	/* Pieces: the engine resumes from any byte of the packed stream. */
	for (i = 0; i < (int)(sizeof(pieces) / sizeof(pieces[0])); i++) {
		size_t piece = (size_t)pieces[i];

		memset(out, 0, total + 1);
		for (off = 0; off < total; off += piece) {
			size_t len = total - off < piece ? total - off : piece;

			mpi_shim_datatype_pack(mem + origin, count, t, off, out + off, len);
		}
		ck_assert_msg(memcmp(out, packed, total) == 0, "pack in pieces of %zu differs",
			      piece);
		fill(mem2, bufsize, 99);
		for (off = 0; off < total; off += piece) {
			size_t len = total - off < piece ? total - off : piece;

			mpi_shim_datatype_unpack(packed + off, len, mem2 + origin, count, t, off);
		}
		ck_assert_msg(memcmp(mem2, expect, bufsize) == 0, "unpack in pieces of %zu differs",
			      piece);
	}

	/* Element counts of every prefix: whole elements, or undefined. */
	if (total <= 4096) {
		size_t b;

		for (b = 0; b <= total; b++) {
			MPI_Count want = 0;
			size_t at = 0;

			for (k = 0; k < count && at < b; k++)
				for (i = 0; i < ref->n && at < b; i++) {
					at += (size_t)ref->e[i].size;
					want++;
				}
			if (at != b)
				want = MPI_UNDEFINED;
			else
				ck_assert_msg(
				    mpi_shim_datatype_elements_bytes(t, want) == (MPI_Count)b,
				    "bytes of %lld elements: %lld, want %zu", (long long)want,
				    (long long)mpi_shim_datatype_elements_bytes(t, want), b);
			ck_assert_msg(mpi_shim_datatype_elements(t, (MPI_Count)b) == want,
				      "elements in %zu bytes: %lld, want %lld", b,
				      (long long)mpi_shim_datatype_elements(t, (MPI_Count)b),
				      (long long)want);
		}
	}
	free(mem);
	free(mem2);
	free(expect);
	free(packed);
	free(out);
}

static void check_bounds(MPI_Datatype t, long lb, long ext, long tlb, long text, int size)
{
	MPI_Aint l, e, tl, te;
	int s;

	ck_assert_int_eq(MPI_Type_get_extent(t, &l, &e), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_true_extent(t, &tl, &te), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_size(t, &s), MPI_SUCCESS);
	ck_assert_msg(l == lb && e == ext, "lb %ld extent %ld, want %ld %ld", (long)l, (long)e, lb,
		      ext);
	ck_assert_msg(tl == tlb && te == text, "true lb %ld extent %ld, want %ld %ld", (long)tl,
		      (long)te, tlb, text);
	ck_assert_int_eq(s, size);
}

static void layout_stats(MPI_Datatype t, uint64_t *nodes, uint64_t *blocks)
{
	mpi_shim_layout_stats((const struct mpi_shim_layout *)t->layout, nodes, blocks);
}

static void commit(MPI_Datatype *t)
{
	ck_assert_int_eq(MPI_Type_commit(t), MPI_SUCCESS);
}

static void release(MPI_Datatype *t)
{
	ck_assert_int_eq(MPI_Type_free(t), MPI_SUCCESS);
	ck_assert_ptr_eq(*t, MPI_DATATYPE_NULL);
}

/* --- Predefined types --- */

#define PAIR_CHECK(T, vtype)                                                                       \
	do {                                                                                       \
		struct {                                                                           \
			vtype v;                                                                   \
			int i;                                                                     \
		} s;                                                                               \
		struct ref r = {0, NULL};                                                          \
		ref_add(&r, 0, sizeof(vtype));                                                     \
		ref_add(&r, (long)((char *)&s.i - (char *)&s), sizeof(int));                       \
		check_bounds(T, 0, sizeof(s), 0, (char *)&s.i - (char *)&s + sizeof(int),          \
			     sizeof(vtype) + sizeof(int));                                         \
		check_against(T, &r, 3);                                                           \
		ck_assert_int_eq(T->contiguous, sizeof(s) == sizeof(vtype) + sizeof(int));         \
		free(r.e);                                                                         \
	} while (0)

START_TEST(test_predefined)
{
	struct ref r;

	check_bounds(MPI_DOUBLE, 0, 8, 0, 8, 8);
	check_bounds(MPI_CHAR, 0, 1, 0, 1, 1);
	check_bounds(MPI_LONG_DOUBLE, 0, sizeof(long double), 0, sizeof(long double),
		     sizeof(long double));
	r = ref_basic(sizeof(int));
	check_against(MPI_INT, &r, 5);
	free(r.e);
	ck_assert(MPI_INT->contiguous);
	/* The pairs have the layout and the holes of their C struct. */
	PAIR_CHECK(MPI_FLOAT_INT, float);
	PAIR_CHECK(MPI_DOUBLE_INT, double);
	PAIR_CHECK(MPI_LONG_INT, long);
	PAIR_CHECK(MPI_2INT, int);
	PAIR_CHECK(MPI_SHORT_INT, short);
	PAIR_CHECK(MPI_LONG_DOUBLE_INT, long double);
	/* Every pair is two basic elements for MPI_Get_elements. */
	ck_assert_int_eq(mpi_shim_datatype_elements(MPI_DOUBLE_INT, 8), 1);
	ck_assert_int_eq(mpi_shim_datatype_elements(MPI_DOUBLE_INT, 12), 2);
	ck_assert_int_eq(mpi_shim_datatype_elements(MPI_DOUBLE_INT, 10), MPI_UNDEFINED);
}
END_TEST

/* Packed pairs become C structs and back (the reductions' MINLOC/MAXLOC). */
START_TEST(test_pairs_expand_compress)
{
	struct {
		short v;
		int i;
	} s[3] = {{1, 10}, {-2, 20}, {3, 30}}, e[3];
	struct {
		long double v;
		int i;
	} l[2] = {{1.5L, 7}, {-2.5L, 8}}, le[2];
	char packed[64], again[64];

	mpi_shim_datatype_pack(s, 3, MPI_SHORT_INT, 0, packed, 3 * MPI_SHORT_INT->size);
	memset(e, 0x5a, sizeof(e));
	mpi_shim_datatype_pairs_expand(MPI_SHORT_INT, packed, e, 3);
	ck_assert(e[0].v == 1 && e[0].i == 10 && e[1].v == -2 && e[1].i == 20 && e[2].v == 3 &&
		  e[2].i == 30);
	mpi_shim_datatype_pairs_compress(MPI_SHORT_INT, e, again, 3);
	ck_assert(memcmp(packed, again, 3 * MPI_SHORT_INT->size) == 0);

	mpi_shim_datatype_pack(l, 2, MPI_LONG_DOUBLE_INT, 0, packed, 2 * MPI_LONG_DOUBLE_INT->size);
	memset(le, 0, sizeof(le));
	mpi_shim_datatype_pairs_expand(MPI_LONG_DOUBLE_INT, packed, le, 2);
	ck_assert(le[0].v == 1.5L && le[0].i == 7 && le[1].v == -2.5L && le[1].i == 8);
	mpi_shim_datatype_pairs_compress(MPI_LONG_DOUBLE_INT, le, again, 2);
	ck_assert(memcmp(packed, again, 2 * MPI_LONG_DOUBLE_INT->size) == 0);
}
END_TEST

/* --- Constructors --- */

START_TEST(test_contiguous)
{
	MPI_Datatype t, tt;
	struct ref d = ref_basic(8), r = {0, NULL}, rr = {0, NULL};

	ck_assert_int_eq(MPI_Type_contiguous(5, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	check_bounds(t, 0, 40, 0, 40, 40);
	ref_append(&r, &d, 5, 0, 8);
	check_against(t, &r, 3);
	ck_assert(t->contiguous);
	/* A contiguous of a contiguous is still one block. */
	ck_assert_int_eq(MPI_Type_contiguous(4, t, &tt), MPI_SUCCESS);
	commit(&tt);
	ref_append(&rr, &r, 4, 0, 40);
	check_against(tt, &rr, 2);
	ck_assert(tt->contiguous);
	release(&tt);
	release(&t);
	/* Zero elements: an empty type. */
	ck_assert_int_eq(MPI_Type_contiguous(0, MPI_INT, &t), MPI_SUCCESS);
	commit(&t);
	check_bounds(t, 0, 0, 0, 0, 0);
	ck_assert_int_eq(mpi_shim_datatype_elements(t, 0), 0);
	release(&t);
	free(d.e);
	free(r.e);
	free(rr.e);
}
END_TEST

START_TEST(test_vector)
{
	MPI_Datatype t;
	struct ref i4 = ref_basic(4), r = {0, NULL};
	long k;

	/* 3 blocks of 2 ints, 5 ints apart. */
	ck_assert_int_eq(MPI_Type_vector(3, 2, 5, MPI_INT, &t), MPI_SUCCESS);
	commit(&t);
	for (k = 0; k < 3; k++)
		ref_append(&r, &i4, 2, k * 20, 4);
	check_bounds(t, 0, 48, 0, 48, 24);
	check_against(t, &r, 4);
	ck_assert(!t->contiguous);
	release(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;

	/* A negative stride: the blocks go down in memory, lb is negative. */
	ck_assert_int_eq(MPI_Type_vector(3, 1, -2, MPI_INT, &t), MPI_SUCCESS);
	commit(&t);
	for (k = 0; k < 3; k++)
		ref_append(&r, &i4, 1, -k * 8, 4);
	check_bounds(t, -16, 20, -16, 20, 12);
	check_against(t, &r, 3);
	release(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;

	/* Stride equal to the block length: contiguous. */
	ck_assert_int_eq(MPI_Type_vector(4, 3, 3, MPI_INT, &t), MPI_SUCCESS);
	commit(&t);
	ref_append(&r, &i4, 12, 0, 4);
	check_against(t, &r, 2);
	ck_assert(t->contiguous);
	release(&t);
	free(r.e);
	free(i4.e);
}
END_TEST

START_TEST(test_hvector_of_struct)
{
	MPI_Datatype s, t;
	int bl[2] = {1, 1};
	MPI_Aint disp[2] = {0, 8};
	MPI_Datatype types[2] = {MPI_DOUBLE, MPI_CHAR};
	struct ref rs = {0, NULL}, r = {0, NULL};
	long k;

	/* struct { double; char; }: padded to 16 as a C compiler does. */
	ck_assert_int_eq(MPI_Type_create_struct(2, bl, disp, types, &s), MPI_SUCCESS);
	check_bounds(s, 0, 16, 0, 9, 9);
	ref_add(&rs, 0, 8);
	ref_add(&rs, 8, 1);
	/* 4 blocks of 2 structs, 100 bytes apart (a stride that is not a
	 * multiple of the extent). */
	ck_assert_int_eq(MPI_Type_create_hvector(4, 2, 100, s, &t), MPI_SUCCESS);
	commit(&t);
	for (k = 0; k < 4; k++)
		ref_append(&r, &rs, 2, k * 100, 16);
	check_bounds(t, 0, 332, 0, 325, 72);
	check_against(t, &r, 3);
	release(&t);
	ck_assert_int_eq(MPI_Type_hvector(2, 1, -40, s, &t), MPI_SUCCESS);
	commit(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;
	ref_append(&r, &rs, 1, 0, 0);
	ref_append(&r, &rs, 1, -40, 0);
	check_bounds(t, -40, 56, -40, 49, 18);
	check_against(t, &r, 2);
	release(&t);
	release(&s);
	free(rs.e);
	free(r.e);
}
END_TEST

START_TEST(test_indexed)
{
	MPI_Datatype t;
	int bl[4] = {2, 0, 1, 3}, disp[4] = {5, 1, 0, 10};
	int hbl[3] = {2, 1, 1};
	MPI_Aint hdisp[3] = {40, -8, 3};
	struct ref d = ref_basic(8), r = {0, NULL};
	int i;

	/* Blocks out of order and an empty block; packing follows the list. */
	ck_assert_int_eq(MPI_Type_indexed(4, bl, disp, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	for (i = 0; i < 4; i++)
		ref_append(&r, &d, bl[i], disp[i] * 8L, 8);
	check_bounds(t, 0, 104, 0, 104, 48);
	check_against(t, &r, 3);
	release(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;

	/* Byte displacements, one negative, one unaligned. */
	ck_assert_int_eq(MPI_Type_create_hindexed(3, hbl, hdisp, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	for (i = 0; i < 3; i++)
		ref_append(&r, &d, hbl[i], hdisp[i], 8);
	check_bounds(t, -8, 64, -8, 64, 32);
	check_against(t, &r, 2);
	release(&t);
	ck_assert_int_eq(MPI_Type_hindexed(3, hbl, hdisp, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	check_against(t, &r, 2);
	release(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;

	/* Blocks of the same length. */
	ck_assert_int_eq(MPI_Type_create_indexed_block(4, 2, disp, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	for (i = 0; i < 4; i++)
		ref_append(&r, &d, 2, disp[i] * 8L, 8);
	check_against(t, &r, 2);
	release(&t);
	free(r.e);
	r.n = 0;
	r.e = NULL;
	ck_assert_int_eq(MPI_Type_create_hindexed_block(3, 1, hdisp, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	for (i = 0; i < 3; i++)
		ref_append(&r, &d, 1, hdisp[i], 8);
	check_against(t, &r, 2);
	release(&t);
	free(r.e);
	free(d.e);
}
END_TEST

START_TEST(test_struct)
{
	struct rec {
		char c;
		double d[2];
		int i;
	} recs[2] = {0};
	int bl[3] = {1, 2, 1};
	MPI_Aint disp[3], base;
	MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
	struct ref r = {0, NULL};

	MPI_Get_address(&recs[0], &base);
	MPI_Get_address(&recs[0].c, &disp[0]);
	MPI_Get_address(&recs[0].d, &disp[1]);
	MPI_Get_address(&recs[0].i, &disp[2]);
	disp[0] -= base;
	disp[1] -= base;
	disp[2] -= base;
	ck_assert_int_eq(MPI_Type_create_struct(3, bl, disp, types, &t), MPI_SUCCESS);
	commit(&t);
	/* The extent is the C struct's: the padding after the int counts. */
	check_bounds(t, 0, sizeof(struct rec), 0, (long)disp[2] + 4, 21);
	ref_add(&r, disp[0], 1);
	ref_add(&r, disp[1], 8);
	ref_add(&r, disp[1] + 8, 8);
	ref_add(&r, disp[2], 4);
	check_against(t, &r, 3);
	ck_assert(!t->contiguous);
	release(&t);
	free(r.e);
}
END_TEST

/* A struct of fields that touch is one block. */
START_TEST(test_struct_without_gaps_is_contiguous)
{
	int bl[3] = {2, 1, 3};
	MPI_Aint disp[3] = {0, 8, 12};
	MPI_Datatype types[3] = {MPI_INT, MPI_FLOAT, MPI_INT}, t;
	uint64_t nodes, blocks;

	ck_assert_int_eq(MPI_Type_create_struct(3, bl, disp, types, &t), MPI_SUCCESS);
	commit(&t);
	check_bounds(t, 0, 24, 0, 24, 24);
	ck_assert(t->contiguous);
	layout_stats(t, &nodes, &blocks);
	ck_assert_uint_eq(nodes, 1);
	ck_assert_uint_eq(blocks, 1);
	release(&t);
}
END_TEST

START_TEST(test_resized)
{
	MPI_Datatype r, t, s;
	struct ref i4 = ref_basic(4), ref = {0, NULL};
	int bl[2] = {1, 1};
	MPI_Aint disp[2] = {0, 16};
	MPI_Datatype types[2];

	/* An int with a hole of 12 bytes after it. */
	ck_assert_int_eq(MPI_Type_create_resized(MPI_INT, 0, 16, &r), MPI_SUCCESS);
	check_bounds(r, 0, 16, 0, 4, 4);
	ck_assert_int_eq(MPI_Type_contiguous(3, r, &t), MPI_SUCCESS);
	commit(&t);
	ref_append(&ref, &i4, 3, 0, 16);
	check_bounds(t, 0, 48, 0, 36, 12);
	check_against(t, &ref, 2);
	release(&t);

	/* The bounds of a resized type stick: data beyond the ub marker
	 * does not move the ub of a struct built on it. */
	types[0] = r;
	types[1] = MPI_INT;
	ck_assert_int_eq(MPI_Type_create_struct(2, bl, disp, types, &s), MPI_SUCCESS);
	check_bounds(s, 0, 16, 0, 20, 8);
	release(&s);

	/* A negative lower bound. */
	ck_assert_int_eq(MPI_Type_create_resized(MPI_INT, -4, 12, &t), MPI_SUCCESS);
	commit(&t);
	check_bounds(t, -4, 12, 0, 4, 4);
	free(ref.e);
	ref.n = 0;
	ref.e = NULL;
	ref_append(&ref, &i4, 1, 0, 0);
	check_against(t, &ref, 5);
	release(&t);

	/* Shrinking the extent to the size: a strided type becomes
	 * contiguous in count, one element after another. */
	ck_assert_int_eq(MPI_Type_create_resized(MPI_INT, 0, 4, &t), MPI_SUCCESS);
	commit(&t);
	ck_assert(t->contiguous);
	release(&t);
	release(&r);
	free(ref.e);
	free(i4.e);
}
END_TEST

START_TEST(test_dup_and_free_keep_components)
{
	MPI_Datatype v, d, c;
	struct ref i4 = ref_basic(4), ref = {0, NULL};
	long k;

	ck_assert_int_eq(MPI_Type_vector(2, 1, 3, MPI_INT, &v), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_dup(v, &d), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_contiguous(2, d, &c), MPI_SUCCESS);
	/* Freeing the components leaves the types built on them whole. */
	release(&v);
	release(&d);
	commit(&c);
	for (k = 0; k < 2; k++) {
		ref_append(&ref, &i4, 1, k * 16, 0);
		ref_append(&ref, &i4, 1, k * 16 + 12, 0);
	}
	check_bounds(c, 0, 32, 0, 32, 16);
	check_against(c, &ref, 2);
	ck_assert_int_eq(mpi_shim_datatype_elements(c, 12), 3);
	/* A request's reference keeps it valid after MPI_Type_free. */
	mpi_shim_datatype_retain(c);
	{
		MPI_Datatype keep = c;

		release(&c);
		ck_assert_int_eq(keep->size, 16);
		ck_assert(!mpi_shim_datatype_ok(keep));
		mpi_shim_datatype_release(keep);
	}
	free(ref.e);
	free(i4.e);
}
END_TEST

/* Nested types of mixed basic types, resized in the middle. */
START_TEST(test_nested)
{
	int bl[2] = {1, 2};
	MPI_Aint disp[2] = {0, 4};
	MPI_Datatype types[2] = {MPI_SHORT, MPI_FLOAT}, s, rs, v, idx;
	struct ref rsr = {0, NULL}, rv = {0, NULL}, ridx = {0, NULL};
	int ibl[2] = {1, 2}, idisp[2] = {3, -2};
	long k;

	ck_assert_int_eq(MPI_Type_create_struct(2, bl, disp, types, &s), MPI_SUCCESS);
	check_bounds(s, 0, 12, 0, 12, 10);
	ck_assert_int_eq(MPI_Type_create_resized(s, -2, 20, &rs), MPI_SUCCESS);
	ref_add(&rsr, 0, 2);
	ref_add(&rsr, 4, 4);
	ref_add(&rsr, 8, 4);
	ck_assert_int_eq(MPI_Type_vector(3, 2, -3, rs, &v), MPI_SUCCESS);
	for (k = 0; k < 3; k++)
		ref_append(&rv, &rsr, 2, -k * 60, 20);
	commit(&v);
	check_against(v, &rv, 2);
	ck_assert_int_eq(MPI_Type_indexed(2, ibl, idisp, v, &idx), MPI_SUCCESS);
	commit(&idx);
	for (k = 0; k < 2; k++)
		ref_append(&ridx, &rv, ibl[k], idisp[k] * extent_of(v), extent_of(v));
	check_against(idx, &ridx, 2);
	release(&idx);
	release(&v);
	release(&rs);
	release(&s);
	free(rsr.e);
	free(rv.e);
	free(ridx.e);
}
END_TEST

/* The query calls and their _x forms agree; names; addresses. */
START_TEST(test_queries)
{
	MPI_Datatype t;
	MPI_Aint lb, ext, tlb, text, e2, a1, a2;
	MPI_Count xlb, xext, xtlb, xtext, xsize;
	char name[MPI_MAX_OBJECT_NAME];
	int len, size;
	double arr[4];

	ck_assert_int_eq(MPI_Type_vector(3, 2, -4, MPI_SHORT, &t), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_extent(t, &lb, &ext), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_extent_x(t, &xlb, &xext), MPI_SUCCESS);
	ck_assert(xlb == lb && xext == ext && lb == -16 && ext == 20);
	ck_assert_int_eq(MPI_Type_get_true_extent(t, &tlb, &text), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_true_extent_x(t, &xtlb, &xtext), MPI_SUCCESS);
	ck_assert(xtlb == tlb && xtext == text);
	ck_assert_int_eq(MPI_Type_extent(t, &e2), MPI_SUCCESS);
	ck_assert(e2 == ext);
	ck_assert_int_eq(MPI_Type_size(t, &size), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_size_x(t, &xsize), MPI_SUCCESS);
	ck_assert(size == 12 && xsize == 12);

	ck_assert_int_eq(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len), MPI_SUCCESS);
	ck_assert_str_eq(name, "MPI_DOUBLE_INT");
	ck_assert_int_eq(len, 14);
	ck_assert_int_eq(MPI_Type_get_name(t, name, &len), MPI_SUCCESS);
	ck_assert_int_eq(len, 0);
	ck_assert_int_eq(MPI_Type_set_name(t, "every other pair"), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_get_name(t, name, &len), MPI_SUCCESS);
	ck_assert_str_eq(name, "every other pair");
	release(&t);

	ck_assert_int_eq(MPI_Get_address(&arr[3], &a2), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Address(&arr[1], &a1), MPI_SUCCESS);
	ck_assert_int_eq(a2 - a1, 2 * sizeof(double));
}
END_TEST

/* --- Layout representation --- */

START_TEST(test_million_blocks_are_one_node)
{
	MPI_Datatype t, col;
	uint64_t nodes, blocks;

	ck_assert_int_eq(MPI_Type_vector(1000000, 1, 2, MPI_DOUBLE, &t), MPI_SUCCESS);
	layout_stats(t, &nodes, &blocks);
	ck_assert_uint_eq(nodes, 1);
	ck_assert_uint_eq(blocks, 1000000);
	release(&t);

	/* A column of a 1000 x 1000 matrix, resized to one double to send
	 * several columns: still one node. */
	ck_assert_int_eq(MPI_Type_vector(1000, 1, 1000, MPI_DOUBLE, &t), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_create_resized(t, 0, 8, &col), MPI_SUCCESS);
	layout_stats(col, &nodes, &blocks);
	ck_assert_uint_eq(nodes, 1);
	ck_assert_uint_eq(blocks, 1000);
	release(&col);
	release(&t);

	/* A vector of vectors with abutting inner rows is one loop. */
	ck_assert_int_eq(MPI_Type_vector(10, 4, 4, MPI_INT, &col), MPI_SUCCESS);
	ck_assert_int_eq(MPI_Type_vector(100, 1, 2, col, &t), MPI_SUCCESS);
	layout_stats(t, &nodes, &blocks);
	ck_assert_uint_eq(nodes, 1);
	ck_assert_uint_eq(blocks, 100);
	release(&t);
	release(&col);
}
END_TEST

START_TEST(test_touching_blocks_merge)
{
	int bl[4] = {2, 3, 1, 1}, disp[4] = {0, 2, 5, 9};
	MPI_Datatype t;
	uint64_t nodes, blocks;

	/* [0,2) [2,5) [5,6) touch, [9,10) does not: two blocks. */
	ck_assert_int_eq(MPI_Type_indexed(4, bl, disp, MPI_INT, &t), MPI_SUCCESS);
	layout_stats(t, &nodes, &blocks);
	ck_assert_uint_eq(blocks, 2);
	ck_assert_uint_eq(nodes, 3);
	release(&t);
}
END_TEST

/* Lists inside lists are flattened, and their blocks merge across. */
START_TEST(test_nested_lists_flatten)
{
	int bl[2] = {1, 1};
	MPI_Aint d1[2] = {0, 8}, d2[2] = {0, 12};
	MPI_Datatype t1[2] = {MPI_INT, MPI_INT}, inner, outer, t2[2];
	uint64_t nodes, blocks;

	/* inner: [0,4) [8,12); outer: inner, then an int at 12. */
	ck_assert_int_eq(MPI_Type_create_struct(2, bl, d1, t1, &inner), MPI_SUCCESS);
	t2[0] = inner;
	t2[1] = MPI_INT;
	ck_assert_int_eq(MPI_Type_create_struct(2, bl, d2, t2, &outer), MPI_SUCCESS);
	layout_stats(outer, &nodes, &blocks);
	ck_assert_uint_eq(blocks, 2); /* [0,4) [8,16) */
	ck_assert_uint_eq(nodes, 3);
	release(&outer);
	release(&inner);
}
END_TEST

/* --- Piecewise packing of a large vector, against an element copy --- */

/* --- Random nestings of every constructor against their type maps --- */

static uint32_t rnd_state = 12345;

/* A deterministic generator: the same types on every run. */
static int rnd(int lo, int hi)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return lo + (int)((rnd_state >> 8) % (uint32_t)(hi - lo + 1));
}

static const MPI_Datatype rnd_basics[] = {
    MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_SHORT_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT};

static struct ref ref_of_basic(MPI_Datatype t)
{
	struct ref r = {0, NULL};

	if (t == MPI_SHORT_INT) {
		ref_add(&r, 0, sizeof(short));
		ref_add(&r,
			offsetof(
			    struct {
				    short v;
				    int i;
			    },
			    i),
			sizeof(int));
	} else if (t == MPI_DOUBLE_INT) {
		ref_add(&r, 0, sizeof(double));
		ref_add(&r,
			offsetof(
			    struct {
				    double v;
				    int i;
			    },
			    i),
			sizeof(int));
	} else if (t == MPI_LONG_DOUBLE_INT) {
		ref_add(&r, 0, sizeof(long double));
		ref_add(&r,
			offsetof(
			    struct {
				    long double v;
				    int i;
			    },
			    i),
			sizeof(int));
	} else {
		ref_add(&r, 0, (int)t->size);
	}
	return r;
}

/* A random type of nesting depth at most `depth`, and its type map. */
static MPI_Datatype rnd_type(int depth, struct ref *ref)
{
	MPI_Datatype old, t, olds[3];
	struct ref oref, orefs[3];
	int bl[3], idisp[3], n, k, i, kind = depth ? rnd(0, 9) : 9;
	MPI_Aint adisp[3], ext;

	ref->n = 0;
	ref->e = NULL;
	if (kind == 9) {
		t = rnd_basics[rnd(0, (int)(sizeof(rnd_basics) / sizeof(rnd_basics[0])) - 1)];
		*ref = ref_of_basic(t);
		return t;
	}
	if (kind == 7) {
		/* A struct of random members. */
		n = rnd(1, 3);
		for (i = 0; i < n; i++) {
			olds[i] = rnd_type(depth - 1, &orefs[i]);
			bl[i] = rnd(0, 9) ? rnd(1, 2) : 0;
			adisp[i] = rnd(-40, 40);
		}
		ck_assert_int_eq(MPI_Type_create_struct(n, bl, adisp, olds, &t), MPI_SUCCESS);
		for (i = 0; i < n; i++) {
			ref_append(ref, &orefs[i], bl[i], adisp[i], extent_of(olds[i]));
			free(orefs[i].e);
			if (!olds[i]->predefined)
				release(&olds[i]);
		}
		return t;
	}
	old = rnd_type(depth - 1, &oref);
	ext = extent_of(old);
	/* Now and then an empty count or block: they must vanish. */
	n = rnd(0, 9) ? rnd(1, 3) : 0;
	for (i = 0; i < 3; i++) {
		bl[i] = rnd(0, 9) ? rnd(1, 3) : 0;
		idisp[i] = rnd(-5, 5);
		adisp[i] = rnd(-50, 50);
	}
	switch (kind) {
	case 0:
		ck_assert_int_eq(MPI_Type_contiguous(n, old, &t), MPI_SUCCESS);
		ref_append(ref, &oref, n, 0, ext);
		break;
	case 1:
		ck_assert_int_eq(MPI_Type_vector(n, bl[0], idisp[0], old, &t), MPI_SUCCESS);
		for (k = 0; k < n; k++)
			ref_append(ref, &oref, bl[0], k * idisp[0] * ext, ext);
		break;
	case 2:
		ck_assert_int_eq(MPI_Type_create_hvector(n, bl[0], adisp[0], old, &t), MPI_SUCCESS);
		for (k = 0; k < n; k++)
			ref_append(ref, &oref, bl[0], k * adisp[0], ext);
		break;
	case 3:
		ck_assert_int_eq(MPI_Type_indexed(n, bl, idisp, old, &t), MPI_SUCCESS);
		for (k = 0; k < n; k++)
			ref_append(ref, &oref, bl[k], idisp[k] * ext, ext);
		break;
	case 4:
		ck_assert_int_eq(MPI_Type_create_hindexed(n, bl, adisp, old, &t), MPI_SUCCESS);
		for (k = 0; k < n; k++)
			ref_append(ref, &oref, bl[k], adisp[k], ext);
		break;
	case 5:
		ck_assert_int_eq(MPI_Type_create_indexed_block(n, bl[0], idisp, old, &t),
				 MPI_SUCCESS);
		for (k = 0; k < n; k++)
			ref_append(ref, &oref, bl[0], idisp[k] * ext, ext);
		break;
	case 6:
		ck_assert_int_eq(MPI_Type_create_resized(old, rnd(-20, 20), rnd(0, 80), &t),
				 MPI_SUCCESS);
		ref_append(ref, &oref, 1, 0, 0);
		break;
	default:
		ck_assert_int_eq(MPI_Type_dup(old, &t), MPI_SUCCESS);
		ref_append(ref, &oref, 1, 0, 0);
		break;
	}
	free(oref.e);
	if (!old->predefined)
		release(&old);
	return t;
}

START_TEST(test_random_nestings)
{
	int round, nonempty = 0, scattered = 0;

	for (round = 0; round < 1500; round++) {
		struct ref ref;
		MPI_Datatype t = rnd_type(3, &ref);
		MPI_Count elems = 0;
		int i;

		if (t->predefined) {
			free(ref.e);
			continue;
		}
		commit(&t);
		if (ref.n) {
			check_against(t, &ref, rnd(1, 3));
			nonempty++;
			scattered += !t->contiguous;
		}
		/* Get_elements of whole elements: the map's entries. */
		for (i = 0; i < ref.n; i++)
			elems++;
		if (t->size)
			ck_assert_int_eq(mpi_shim_datatype_elements(t, (MPI_Count)t->size), elems);
		release(&t);
		free(ref.e);
	}
	/* The generator must exercise something. */
	fprintf(stderr, "random nestings: %d with data, %d of them not contiguous\n", nonempty,
		scattered);
	ck_assert_int_ge(nonempty, 900);
	ck_assert_int_ge(scattered, 700);
}
END_TEST

START_TEST(test_piecewise_large)
{
	enum { N = 100000 };
	MPI_Datatype t;
	double *a = malloc(sizeof(double) * 3 * N), *p = malloc(sizeof(double) * N);
	size_t off, piece = 4093;
	long i;

	ck_assert(a && p);
	for (i = 0; i < 3L * N; i++)
		a[i] = (double)i;
	ck_assert_int_eq(MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &t), MPI_SUCCESS);
	commit(&t);
	/* A piece size that cuts doubles in two. */
	for (off = 0; off < sizeof(double) * N; off += piece) {
		size_t len = sizeof(double) * N - off < piece ? sizeof(double) * N - off : piece;

		mpi_shim_datatype_pack(a, 1, t, off, (char *)p + off, len);
	}
	for (i = 0; i < N; i++)
		ck_assert_msg(p[i] == (double)(3 * i), "element %ld is %g", i, p[i]);
	release(&t);
	free(a);
	free(p);
}
END_TEST

static Suite *datatype_suite(void)
{
	Suite *s = suite_create("datatype");
	TCase *tc = tcase_create("datatype");

	tcase_add_test(tc, test_predefined);
	tcase_add_test(tc, test_pairs_expand_compress);
	tcase_add_test(tc, test_contiguous);
	tcase_add_test(tc, test_vector);
	tcase_add_test(tc, test_hvector_of_struct);
	tcase_add_test(tc, test_indexed);
	tcase_add_test(tc, test_struct);
	tcase_add_test(tc, test_struct_without_gaps_is_contiguous);
	tcase_add_test(tc, test_resized);
	tcase_add_test(tc, test_dup_and_free_keep_components);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_queries);
	tcase_add_test(tc, test_million_blocks_are_one_node);
	tcase_add_test(tc, test_touching_blocks_merge);
	tcase_add_test(tc, test_nested_lists_flatten);
	tcase_add_test(tc, test_piecewise_large);
	tcase_add_test(tc, test_random_nestings);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(datatype_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
