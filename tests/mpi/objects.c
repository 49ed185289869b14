/* SPDX-License-Identifier: MIT */
/*
 * objects.c - tests of the lives of MPI objects in the MPI shim: keys
 * freed while attributes use them, attribute callbacks that fail, the
 * names of the predefined datatypes, empty groups, the balance of
 * MPI_Dims_create and MPI_Comm_disconnect; run through bipload:
 *   bipload -sz N objects TEST
 * keyfree     keys freed while in use (also from a delete callback, and
 *             again through a copy of the handle), then gone
 * attrerr     copy and delete callbacks that fail: the calls that ran
 *             them fail, Type_dup gives MPI_DATATYPE_NULL, nothing is lost
 * typename    the default names, MPI_C_COMPLEX, renaming a predefined type
 * groupempty  empty groups from incl, excl and ranges; communicators of them
 * dims        MPI_Dims_create: balanced factorizations, fixed entries, errors
 * disconnect  MPI_Comm_disconnect: messages in flight arrive, errors
 */
#include <string.h>

#include <mpi.h>

#include "mpicheck.h"

static int rank, size;

/* An error class expected from a call under MPI_ERRORS_RETURN. */
#define FAILS(cls, call)                                                                     \
	do {                                                                                 \
		int fails_rc_ = (call), fails_class_ = fails_rc_;                            \
		MPI_Error_class(fails_rc_, &fails_class_);                                   \
		CHECK(fails_class_ == (cls), "returned %d, expected %d (%s)", fails_rc_,     \
		      (cls), #cls);                                                          \
	} while (0)

/* --- keys freed while in use --- */

static int comm_deletes, type_deletes;

/* Frees the key it is given, as a program may do (the key stays usable by
 * the attributes that remain). */
static int comm_delete_frees(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm;
	(void)value;
	(void)extra;
	comm_deletes++;
	OK(MPI_Comm_free_keyval(&keyval));
	CHECK(keyval == MPI_KEYVAL_INVALID, "handle not reset: %d", keyval);
	return MPI_SUCCESS;
}

static int type_delete_frees(MPI_Datatype t, int keyval, void *value, void *extra)
{
	(void)t;
	(void)value;
	(void)extra;
	type_deletes++;
	OK(MPI_Type_free_keyval(&keyval));
	return MPI_SUCCESS;
}

static void test_keyfree_comm(void)
{
	MPI_Comm a, b;
	int key, copy, stale, flag;
	void *v;

	OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete_frees, &key, NULL));
	copy = stale = key;
	OK(MPI_Comm_set_attr(a, key, (void *)1));
	OK(MPI_Comm_set_attr(b, key, (void *)2));
	/* The first free: from the delete callback. */
	OK(MPI_Comm_free(&a));
	CHECK(comm_deletes == 1, "%d deletes", comm_deletes);
	/* Freed again through the program's two copies of the handle: the
	 * key is still used by b's attribute, nothing more to do. */
	OK(MPI_Comm_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "handle not reset: %d", key);
	OK(MPI_Comm_free_keyval(&copy));
	/* The attribute keeps working. */
	OK(MPI_Comm_get_attr(b, stale, &v, &flag));
	CHECK(flag && v == (void *)2, "flag %d value %p", flag, v);
	OK(MPI_Comm_set_attr(b, stale, (void *)3));
	CHECK(comm_deletes == 2, "%d deletes", comm_deletes);
	OK(MPI_Comm_get_attr(b, stale, &v, &flag));
	CHECK(flag && v == (void *)3, "flag %d value %p", flag, v);
	/* Its last attribute gone, the key is gone. */
	OK(MPI_Comm_delete_attr(b, stale));
	CHECK(comm_deletes == 3, "%d deletes", comm_deletes);
	key = stale;
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&key));
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(b, stale, &v, &flag));
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(b, stale, NULL));
	key = MPI_KEYVAL_INVALID;
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&key));
	key = MPI_TAG_UB;
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&key));
	FAILS(MPI_ERR_ARG, MPI_Comm_free_keyval(NULL));
	/* A free key, used by no attribute: freed once only. */
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
	copy = key;
	OK(MPI_Comm_free_keyval(&key));
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&copy));
	OK(MPI_Comm_free(&b));
	CHECK(comm_deletes == 3, "%d deletes", comm_deletes);
}

static void test_keyfree_type(void)
{
	MPI_Datatype t, u;
	int key, copy, stale, flag;
	void *v;

	OK(MPI_Type_dup(MPI_INT, &t));
	OK(MPI_Type_dup(MPI_INT, &u));
	OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete_frees, &key, NULL));
	copy = stale = key;
	OK(MPI_Type_set_attr(t, key, (void *)1));
	OK(MPI_Type_set_attr(u, key, (void *)2));
	OK(MPI_Type_free(&t));
	CHECK(type_deletes == 1, "%d deletes", type_deletes);
	OK(MPI_Type_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "handle not reset: %d", key);
	OK(MPI_Type_free_keyval(&copy));
	OK(MPI_Type_get_attr(u, stale, &v, &flag));
	CHECK(flag && v == (void *)2, "flag %d value %p", flag, v);
	/* A communicator key is not a datatype key. */
	FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, stale, NULL));
	OK(MPI_Type_free(&u));
	CHECK(type_deletes == 2, "%d deletes", type_deletes);
	key = stale;
	FAILS(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&key));
	key = MPI_KEYVAL_INVALID;
	FAILS(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&key));
}

static void test_keyfree(void)
{
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_keyfree_comm();
	test_keyfree_type();
}

/* --- callbacks that fail --- */

static int fail_deletes, delete_ok;

static int type_copy_fails(MPI_Datatype t, int keyval, void *extra, void *in, void *out,
			   int *flag)
{
	(void)t;
	(void)keyval;
	(void)extra;
	(void)in;
	(void)out;
	*flag = 1;
	return MPI_ERR_OTHER;
}

static int type_delete_fails(MPI_Datatype t, int keyval, void *value, void *extra)
{
	(void)t;
	(void)keyval;
	(void)value;
	(void)extra;
	fail_deletes++;
	return delete_ok ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static int comm_delete_fails(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)value;
	(void)extra;
	fail_deletes++;
	return MPI_ERR_OTHER;
}

static void test_attrerr(void)
{
	MPI_Datatype t, d = MPI_INT, t2;
	MPI_Comm c;
	int key, ckey, flag, n;
	void *v;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Type_contiguous(2, MPI_INT, &t));
	OK(MPI_Type_commit(&t));
	OK(MPI_Type_create_keyval(type_copy_fails, type_delete_fails, &key, NULL));
	OK(MPI_Type_set_attr(t, key, (void *)7));
	/* Replacing the value runs the failing delete: the call fails and the
	 * old value stays. */
	FAILS(MPI_ERR_OTHER, MPI_Type_set_attr(t, key, (void *)8));
	FAILS(MPI_ERR_OTHER, MPI_Type_delete_attr(t, key));
	CHECK(fail_deletes == 2, "%d deletes", fail_deletes);
	OK(MPI_Type_get_attr(t, key, &v, &flag));
	CHECK(flag && v == (void *)7, "flag %d value %p", flag, v);
	/* The copy callback fails: no new type. */
	FAILS(MPI_ERR_OTHER, MPI_Type_dup(t, &d));
	CHECK(d == MPI_DATATYPE_NULL, "newtype not MPI_DATATYPE_NULL");
	/* The type still works. */
	OK(MPI_Type_size(t, &n));
	CHECK(n == 2 * (int)sizeof(int), "size %d", n);
	OK(MPI_Type_contiguous(2, t, &t2));
	OK(MPI_Type_free(&t2));
	/* Freeing runs the failing delete: the call fails, the type is gone. */
	fail_deletes = 0;
	FAILS(MPI_ERR_OTHER, MPI_Type_free(&t));
	CHECK(t == MPI_DATATYPE_NULL && fail_deletes == 1, "handle %p, %d deletes", (void *)t,
	      fail_deletes);
	/* A delete that succeeds. */
	OK(MPI_Type_dup(MPI_INT, &t));
	OK(MPI_Type_set_attr(t, key, NULL));
	delete_ok = 1;
	OK(MPI_Type_free(&t));
	OK(MPI_Type_free_keyval(&key));
	/* A communicator whose attribute cannot be deleted. */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_delete_fails, &ckey, NULL));
	OK(MPI_Comm_set_attr(c, ckey, (void *)5));
	fail_deletes = 0;
	FAILS(MPI_ERR_OTHER, MPI_Comm_free(&c));
	CHECK(c == MPI_COMM_NULL && fail_deletes == 1, "%d deletes", fail_deletes);
	OK(MPI_Comm_free_keyval(&ckey));
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* --- datatype names --- */

static void expect_name(MPI_Datatype t, const char *want)
{
	char name[MPI_MAX_OBJECT_NAME];
	int len = -1;

	OK(MPI_Type_get_name(t, name, &len));
	CHECK(!strcmp(name, want) && len == (int)strlen(want), "name \"%s\" (%d), expected %s",
	      name, len, want);
}

static void test_typename(void)
{
	MPI_Datatype t;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	expect_name(MPI_INT, "MPI_INT");
	expect_name(MPI_DOUBLE, "MPI_DOUBLE");
	expect_name(MPI_C_BOOL, "MPI_C_BOOL");
	/* One type, two names: MPI_C_COMPLEX is the name of both. */
	expect_name(MPI_C_COMPLEX, "MPI_C_COMPLEX");
	expect_name(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX");
	expect_name(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
	expect_name(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
	expect_name(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
	expect_name(MPI_2INT, "MPI_2INT");
	expect_name(MPI_COUNT, "MPI_COUNT");
	/* A predefined type may be renamed, and named back. */
	OK(MPI_Type_set_name(MPI_INT, "int"));
	expect_name(MPI_INT, "int");
	OK(MPI_Type_set_name(MPI_INT, "MPI_INT"));
	expect_name(MPI_INT, "MPI_INT");
	/* A derived type has no name until it is given one. */
	OK(MPI_Type_contiguous(3, MPI_INT, &t));
	expect_name(t, "");
	OK(MPI_Type_set_name(t, "three ints"));
	expect_name(t, "three ints");
	FAILS(MPI_ERR_ARG, MPI_Type_set_name(t, NULL));
	expect_name(t, "three ints");
	OK(MPI_Type_free(&t));
	FAILS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));
}

/* --- empty groups --- */

static void expect_empty(MPI_Group g)
{
	int n = -1, r = -1, cmp = -1;

	OK(MPI_Group_size(g, &n));
	OK(MPI_Group_rank(g, &r));
	OK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &cmp));
	CHECK(n == 0 && r == MPI_UNDEFINED && cmp == MPI_IDENT, "size %d rank %d compare %d", n,
	      r, cmp);
}

static void test_groupempty(void)
{
	MPI_Group world, g;
	MPI_Comm c;
	int i, *all = malloc((size_t)size * sizeof(int)), range[1][3] = { { 0, 0, 1 } };

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	OK(MPI_Group_incl(world, 0, NULL, &g));
	expect_empty(g);
	OK(MPI_Group_free(&g));
	for (i = 0; i < size; i++)
		all[i] = i;
	OK(MPI_Group_excl(world, size, all, &g));
	expect_empty(g);
	/* An empty group makes no communicator. */
	OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
	CHECK(c == MPI_COMM_NULL, "a communicator of no process");
	OK(MPI_Group_free(&g));
	OK(MPI_Group_range_incl(world, 0, range, &g));
	expect_empty(g);
	OK(MPI_Group_free(&g));
	OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
	CHECK(c == MPI_COMM_NULL, "a communicator of MPI_GROUP_EMPTY");
	/* Empty from the empty group. */
	OK(MPI_Group_incl(MPI_GROUP_EMPTY, 0, NULL, &g));
	expect_empty(g);
	OK(MPI_Group_free(&g));
	/* Misuse. */
	FAILS(MPI_ERR_GROUP, MPI_Group_incl(MPI_GROUP_NULL, 0, NULL, &g));
	FAILS(MPI_ERR_GROUP, MPI_Group_excl(MPI_GROUP_NULL, 0, NULL, &g));
	all[0] = size;
	FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, all, &g));
	FAILS(MPI_ERR_ARG, MPI_Group_incl(world, 1, NULL, &g));
	FAILS(MPI_ERR_ARG, MPI_Group_range_incl(world, -1, range, &g));
	FAILS(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c));
	OK(MPI_Group_free(&world));
	free(all);
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* --- MPI_Dims_create --- */

static void dims_expect(int nnodes, int ndims, const int *in, const int *want)
{
	int d[20], i, rc;

	memcpy(d, in, (size_t)ndims * sizeof(int));
	rc = MPI_Dims_create(nnodes, ndims, d);
	CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d) returned %d", nnodes, ndims, rc);
	for (i = 0; i < ndims; i++)
		CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] is %d, expected %d",
		      nnodes, ndims, i, d[i], want[i]);
}

/* nnodes in ndims free dims: non-increasing, the product right, the first
 * as expected. */
static void dims_valid(int nnodes, int ndims, int first)
{
	int d[32] = { 0 }, i;
	long long p = 1;

	OK(MPI_Dims_create(nnodes, ndims, d));
	for (i = 0; i < ndims; i++) {
		CHECK(d[i] >= 1 && (i == 0 || d[i] <= d[i - 1]), "dims[%d] is %d", i, d[i]);
		p *= d[i];
	}
	CHECK(p == nnodes && d[0] == first, "%d in %d dims: product %lld, first %d", nnodes,
	      ndims, p, d[0]);
}

static void test_dims(void)
{
	static const int z[20];
	int d[3], i, ones[20];

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	/* The smallest difference between the largest and smallest. */
	dims_expect(72, 2, z, (int[]){ 9, 8 });
	dims_expect(180, 2, z, (int[]){ 15, 12 });
	dims_expect(100, 3, z, (int[]){ 5, 5, 4 });
	dims_expect(5040, 3, z, (int[]){ 21, 16, 15 });
	dims_expect(7488, 3, z, (int[]){ 26, 18, 16 });
	/* Ties of that difference: the largest first, then the rest balanced. */
	dims_expect(7344, 4, z, (int[]){ 17, 9, 8, 6 });
	dims_expect(1024, 10, z, (int[]){ 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 });
	/* A large prime must stand alone. */
	dims_expect(2 * 999983, 2, z, (int[]){ 999983, 2 });
	dims_expect(999983, 3, z, (int[]){ 999983, 1, 1 });
	dims_expect(1, 4, z, (int[]){ 1, 1, 1, 1 });
	/* More dims than prime factors: 7776 = 2^5 3^5. */
	for (i = 0; i < 20; i++)
		ones[i] = i < 5 ? 3 : i < 10 ? 2 : 1;
	dims_expect(7776, 20, z, ones);
	/* Many divisors, many dims (a search without pruning takes minutes). */
	dims_valid(735134400, 6, 34);
	dims_valid(735134400, 20, 17);
	dims_valid(1 << 30, 30, 2);
	/* Fixed entries stay, the others are balanced in non-increasing order. */
	dims_expect(60, 3, (int[]){ 0, 5, 0 }, (int[]){ 4, 5, 3 });
	dims_expect(5040, 4, (int[]){ 0, 0, 7, 0 }, (int[]){ 10, 9, 7, 8 });
	dims_expect(24, 3, (int[]){ 2, 3, 4 }, (int[]){ 2, 3, 4 });
	dims_expect(1, 0, z, z);
	/* Misuse. */
	d[0] = 0, d[1] = 7, d[2] = 0;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(60, 3, d));
	CHECK(d[0] == 0 && d[1] == 7 && d[2] == 0, "dims changed");
	d[0] = -1;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(60, 3, d));
	d[0] = 2, d[1] = 3, d[2] = 4;
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(25, 3, d));
	FAILS(MPI_ERR_DIMS, MPI_Dims_create(6, -1, d));
	FAILS(MPI_ERR_ARG, MPI_Dims_create(0, 2, d));
	FAILS(MPI_ERR_ARG, MPI_Dims_create(6, 2, NULL));
	dims_expect(12, 2, z, (int[]){ 4, 3 });
}

/* --- MPI_Comm_disconnect --- */

static int disconnect_deletes;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)value;
	(void)extra;
	disconnect_deletes++;
	return MPI_SUCCESS;
}

#define LONG_MSG (1 << 20)

static void test_disconnect(void)
{
	MPI_Comm c, keep, half;
	MPI_Request req = MPI_REQUEST_NULL;
	int key, i, next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int *out = malloc(LONG_MSG * sizeof(int)), *in = malloc(LONG_MSG * sizeof(int));

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	/* Messages in flight: each sends a long message (a freed request) and
	 * a short one to the next; the receives are posted before the
	 * disconnect and complete after it. */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL));
	OK(MPI_Comm_set_attr(c, key, NULL));
	for (i = 0; i < LONG_MSG; i++)
		out[i] = rank * 7 + i;
	OK(MPI_Irecv(in, LONG_MSG, MPI_INT, prev, 1, c, &req));
	{
		MPI_Request s;

		OK(MPI_Isend(out, LONG_MSG, MPI_INT, next, 1, c, &s));
		OK(MPI_Request_free(&s));
	}
	OK(MPI_Comm_disconnect(&c));
	CHECK(c == MPI_COMM_NULL, "handle not MPI_COMM_NULL");
	CHECK(disconnect_deletes == 1, "%d deletes", disconnect_deletes);
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	for (i = 0; i < LONG_MSG; i++)
		CHECK(in[i] == prev * 7 + i, "element %d is %d", i, in[i]);
	/* A communicator of half of the processes. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
	OK(MPI_Comm_dup(half, &keep));
	OK(MPI_Comm_disconnect(&half));
	OK(MPI_Barrier(keep));
	OK(MPI_Comm_free(&keep));
	/* Misuse. */
	c = MPI_COMM_WORLD;
	FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&c));
	CHECK(c == MPI_COMM_WORLD, "handle changed");
	c = MPI_COMM_SELF;
	FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&c));
	c = MPI_COMM_NULL;
	FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&c));
	FAILS(MPI_ERR_ARG, MPI_Comm_disconnect(NULL));
	OK(MPI_Comm_free_keyval(&key));
	/* Nothing lost: the world still works. */
	OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 2, &i, 1, MPI_INT, prev, 2, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	CHECK(i == prev, "got %d from %d", i, prev);
	free(out);
	free(in);
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "keyfree", test_keyfree },	   { "attrerr", test_attrerr },
	{ "typename", test_typename },	   { "groupempty", test_groupempty },
	{ "dims", test_dims },		   { "disconnect", test_disconnect },
};

int main(int argc, char **argv)
{
	size_t i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	if (argc != 2) {
		fprintf(stderr, "usage: objects TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "objects: no test %s\n", argv[1]);
	return 2;
}
