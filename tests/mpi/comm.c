/* SPDX-License-Identifier: MIT */
/*
 * comm.c - tests of the MPI shim's environment, communicators, groups,
 * attributes and errors, run through bipload:
 *   bipload -sz N comm TEST
 * The tests "fatal" and "abort" end the job on purpose; fatal.sh checks
 * what they print.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bip.h>
#include <mpi.h>

#include "mpicheck.h"

static int rank, size;

/* Send one int to every other rank of comm, receive theirs: the
 * communicator works and its ranks are what they say. */
static void exchange(MPI_Comm comm, int tag)
{
	int r, n, i, v;

	OK(MPI_Comm_rank(comm, &r));
	OK(MPI_Comm_size(comm, &n));
	for (i = 0; i < n; i++) {
		MPI_Request req;
		MPI_Status st;
		int out = r * 100 + i;

		OK(MPI_Irecv(&v, 1, MPI_INT, i, tag, comm, &req));
		OK(MPI_Send(&out, 1, MPI_INT, i, tag, comm));
		OK(MPI_Wait(&req, &st));
		CHECK(v == i * 100 + r && st.MPI_SOURCE == i, "from rank %d got %d", i, v);
	}
}

static void test_env(void)
{
	int flag = 0, v, sv, len, provided = -1;
	char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
	double t0, t1;

	OK(MPI_Initialized(&flag));
	CHECK(flag == 1, "Initialized says %d", flag);
	OK(MPI_Finalized(&flag));
	CHECK(flag == 0, "Finalized says %d", flag);
	OK(MPI_Get_version(&v, &sv));
	CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v, sv);
	OK(MPI_Get_library_version(lib, &len));
	CHECK(len > 0 && (int)strlen(lib) == len && strstr(lib, "BIP"), "library version '%s'",
	      lib);
	OK(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && (int)strlen(name) == len, "processor name '%s'", name);
	t0 = MPI_Wtime();
	t1 = MPI_Wtime();
	CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1, "Wtime %g %g tick %g", t0, t1,
	      MPI_Wtick());
	OK(MPI_Query_thread(&provided));
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	OK(MPI_Is_thread_main(&flag));
	CHECK(flag == 1, "Is_thread_main %d", flag);
	CHECK(PMPI_Wtime() >= t1, "PMPI_Wtime");
}

static void test_split(void)
{
	MPI_Comm half, rev, dup, shared, none, world2;
	int r, n, result, i;

	/* Even and odd ranks, ordered by descending world rank. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
	OK(MPI_Comm_rank(half, &r));
	OK(MPI_Comm_size(half, &n));
	CHECK(n == (size + 1 - rank % 2) / 2, "size %d", n);
	CHECK(r == n - 1 - rank / 2, "rank %d in half of %d (world %d)", r, n, rank);
	exchange(half, 1);
	/* Same key: ordered by world rank. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &rev));
	OK(MPI_Comm_rank(rev, &r));
	CHECK(r == rank, "equal keys: rank %d", r);
	OK(MPI_Comm_compare(rev, MPI_COMM_WORLD, &result));
	CHECK(result == MPI_CONGRUENT, "split of all: %d", result);
	/* MPI_UNDEFINED: no communicator. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
	CHECK((rank == 0) == (none == MPI_COMM_NULL), "undefined color");
	if (none != MPI_COMM_NULL) {
		exchange(none, 2);
		OK(MPI_Comm_free(&none));
	}
	/* Dup: congruent, and its messages never match the original's. */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &result));
	CHECK(result == MPI_CONGRUENT, "dup compares %d", result);
	OK(MPI_Comm_compare(dup, dup, &result));
	CHECK(result == MPI_IDENT, "self compares %d", result);
	if (size > 1 && rank < 2) {
		int a = 1, b = 2, x;

		if (rank == 0) {
			OK(MPI_Send(&a, 1, MPI_INT, 1, 5, dup));
			OK(MPI_Send(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
		} else {
			OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(x == 2, "world receive got the dup's message (%d)", x);
			OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup,
				    MPI_STATUS_IGNORE));
			CHECK(x == 1, "dup receive got %d", x);
		}
	}
	OK(MPI_Comm_dup(dup, &world2));
	exchange(world2, 3);
	/* Every process of this job runs on this host. */
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
			       &shared));
	OK(MPI_Comm_size(shared, &n));
	CHECK(n == size, "shared communicator of %d processes, %d expected", n, size);
	exchange(shared, 4);
	OK(MPI_Comm_split_type(half, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &none));
	OK(MPI_Comm_compare(none, half, &result));
	CHECK(result == MPI_CONGRUENT, "split_type of half: %d", result);
	OK(MPI_Comm_free(&none));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
	CHECK(none == MPI_COMM_NULL, "split_type MPI_UNDEFINED");
	/* Many communicators at once keep distinct contexts. */
	{
		MPI_Comm cs[10];

		for (i = 0; i < 10; i++)
			OK(MPI_Comm_dup(i % 2 ? half : MPI_COMM_WORLD, &cs[i]));
		for (i = 0; i < 10; i++)
			exchange(cs[i], 10 + i);
		for (i = 0; i < 10; i++)
			OK(MPI_Comm_free(&cs[i]));
	}
	OK(MPI_Comm_free(&half));
	OK(MPI_Comm_free(&rev));
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free(&world2));
	OK(MPI_Comm_free(&shared));
	CHECK(shared == MPI_COMM_NULL, "freed handle not null");
}

static void test_group(void)
{
	MPI_Group world, evens, odds, u, in, diff, g, back;
	MPI_Comm comm;
	int n, r, result, i, ranks[64], out[64], ranges[1][3];

	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	OK(MPI_Group_size(world, &n));
	CHECK(n == size, "group size %d", n);
	OK(MPI_Group_rank(world, &r));
	CHECK(r == rank, "group rank %d", r);
	ranges[0][0] = 0;
	ranges[0][1] = size - 1;
	ranges[0][2] = 2;
	OK(MPI_Group_range_incl(world, 1, ranges, &evens));
	OK(MPI_Group_range_excl(world, 1, ranges, &odds));
	OK(MPI_Group_size(evens, &n));
	CHECK(n == (size + 1) / 2, "evens %d", n);
	OK(MPI_Group_rank(odds, &r));
	CHECK(r == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "rank in odds %d", r);
	OK(MPI_Group_union(odds, evens, &u));
	OK(MPI_Group_compare(u, world, &result));
	CHECK(result == (size > 1 ? MPI_SIMILAR : MPI_IDENT),
	      "union compares %d", result);
	OK(MPI_Group_intersection(evens, odds, &in));
	CHECK(in == MPI_GROUP_EMPTY, "intersection of evens and odds not empty");
	OK(MPI_Group_difference(world, odds, &diff));
	OK(MPI_Group_compare(diff, evens, &result));
	CHECK(result == MPI_IDENT, "world - odds compares %d with evens", result);
	/* Reversed order: translate ranks. */
	for (i = 0; i < size; i++)
		ranks[i] = size - 1 - i;
	OK(MPI_Group_incl(world, size, ranks, &g));
	for (i = 0; i < size; i++)
		ranks[i] = i;
	OK(MPI_Group_translate_ranks(world, size, ranks, g, out));
	for (i = 0; i < size; i++)
		CHECK(out[i] == size - 1 - i, "translate %d -> %d", i, out[i]);
	OK(MPI_Group_translate_ranks(world, size, ranks, odds, out));
	for (i = 0; i < size; i++)
		CHECK(out[i] == (i % 2 ? i / 2 : MPI_UNDEFINED), "to odds %d -> %d", i, out[i]);
	OK(MPI_Group_excl(world, 1, ranks, &back));
	OK(MPI_Group_size(back, &n));
	CHECK(n == size - 1, "excl size %d", n);
	/* A communicator of the reversed group. */
	OK(MPI_Comm_create(MPI_COMM_WORLD, g, &comm));
	OK(MPI_Comm_rank(comm, &r));
	CHECK(r == size - 1 - rank, "rank in reversed %d", r);
	exchange(comm, 7);
	OK(MPI_Comm_free(&comm));
	OK(MPI_Comm_create(MPI_COMM_WORLD, odds, &comm));
	CHECK((comm == MPI_COMM_NULL) == (rank % 2 == 0), "comm of odds");
	if (comm != MPI_COMM_NULL) {
		exchange(comm, 8);
		OK(MPI_Comm_free(&comm));
	}
	OK(MPI_Group_free(&world));
	OK(MPI_Group_free(&evens));
	OK(MPI_Group_free(&odds));
	OK(MPI_Group_free(&u));
	OK(MPI_Group_free(&in));
	OK(MPI_Group_free(&diff));
	OK(MPI_Group_free(&g));
	OK(MPI_Group_free(&back));
	CHECK(g == MPI_GROUP_NULL, "freed group not null");
}

static int deleted;

static int count_delete(MPI_Comm comm, int key, void *value, void *extra)
{
	deleted += *(int *)extra;
	return MPI_SUCCESS;
}

/* A delete callback that deletes the communicator's other attributes. */
static int chain_keys[3];

static int chain_delete(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)key;
	(void)val;
	(void)extra;
	int rc0 = MPI_Comm_delete_attr(comm, chain_keys[0]);
	int rc2 = MPI_Comm_delete_attr(comm, chain_keys[2]);

	/* MPI_Comm_free deletes in an order of its own: one may be gone. */
	CHECK((rc0 == MPI_SUCCESS || rc0 == MPI_ERR_KEYVAL) &&
	      (rc2 == MPI_SUCCESS || rc2 == MPI_ERR_KEYVAL), "deletes gave %d and %d", rc0, rc2);
	return MPI_SUCCESS;
}

static void attr_chain(void)
{
	MPI_Comm c;
	int k, flag = -1;
	void *v;

	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &chain_keys[0],
				  NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, chain_delete, &chain_keys[1], NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &chain_keys[2],
				  NULL));
	for (k = 0; k < 3; k++)
		OK(MPI_Comm_set_attr(c, chain_keys[k], (void *)(intptr_t)(k + 1)));
	OK(MPI_Comm_delete_attr(c, chain_keys[1]));
	for (k = 0; k < 3; k++) {
		OK(MPI_Comm_get_attr(c, chain_keys[k], &v, &flag));
		CHECK(flag == 0, "attribute %d is still there", k);
	}
	/* Again, deleted by MPI_Comm_free this time. */
	for (k = 0; k < 3; k++)
		OK(MPI_Comm_set_attr(c, chain_keys[k], (void *)(intptr_t)(k + 1)));
	OK(MPI_Comm_free(&c));
	for (k = 0; k < 3; k++)
		OK(MPI_Comm_free_keyval(&chain_keys[k]));
}

static void test_attr(void)
{
	int *v, flag = 0, key, key2, extra = 1, value = 42, *got;
	MPI_Comm dup;
	attr_chain();

	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
	CHECK(flag && *v >= 32767, "MPI_TAG_UB %d", flag ? *v : -1);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
	CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL");
	OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
	/* The job's room: its processes, and those it may spawn (bipload
	 * --universe; 256 more by default on one host). */
	CHECK(flag && *v >= size, "MPI_UNIVERSE_SIZE %d", *v);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
	CHECK(flag, "MPI_HOST");
	/* A key copied by dup, and one that is not. */
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &key, &extra));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
	OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value));
	OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key2, &value));
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag));
	CHECK(flag && got == &value, "get after set");
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_get_attr(dup, key, &got, &flag));
	CHECK(flag && got == &value, "copied by MPI_COMM_DUP_FN");
	OK(MPI_Comm_get_attr(dup, key2, &got, &flag));
	CHECK(!flag, "not copied by MPI_COMM_NULL_COPY_FN");
	OK(MPI_Comm_free(&dup));
	CHECK(deleted == 1, "delete callback ran %d times on free", deleted);
	OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
	CHECK(deleted == 2, "delete callback ran %d times", deleted);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag));
	CHECK(!flag, "deleted attribute still there");
	OK(MPI_Comm_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "freed key");
	OK(MPI_Comm_free_keyval(&key2));
}

/* Every misuse returns its class under MPI_ERRORS_RETURN. */
#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		CHECK(rc_ == (cls), "%s returned %d (%s), expected %s", #call, rc_,          \
		      errname(rc_), #cls);                                                   \
	} while (0)

static const char *errname(int code)
{
	static char s[MPI_MAX_ERROR_STRING];
	int len;

	if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
		return "?";
	return s;
}

static void test_errors(void)
{
	int v[4] = { 0 }, flag, cls, len, peer = size > 1 ? 1 - (rank & 1) : 0;
	char s[MPI_MAX_ERROR_STRING];
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Group g, g2;
	MPI_Comm c;
	MPI_Errhandler eh;

	OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler is not MPI_ERRORS_ARE_FATAL");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	EXPECT(MPI_ERR_RANK, MPI_Send(v, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_RANK, MPI_Send(v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_RANK, MPI_Recv(v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	EXPECT(MPI_ERR_TAG, MPI_Send(v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_TAG, MPI_Send(v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_TAG, MPI_Irecv(v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &req));
	EXPECT(MPI_ERR_COUNT, MPI_Send(v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_COUNT, MPI_Irecv(v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req));
	EXPECT(MPI_ERR_TYPE, MPI_Send(v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_COMM, MPI_Send(v, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
	EXPECT(MPI_ERR_COMM, MPI_Comm_size(MPI_COMM_NULL, &len));
	c = MPI_COMM_WORLD;
	EXPECT(MPI_ERR_COMM, MPI_Comm_free(&c));
	EXPECT(MPI_ERR_BUFFER, MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
	EXPECT(MPI_ERR_REQUEST, MPI_Wait(NULL, MPI_STATUS_IGNORE));
	EXPECT(MPI_ERR_REQUEST, MPI_Start(&req));
	EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&req));
	EXPECT(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &c));
	EXPECT(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &len));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
	EXPECT(MPI_ERR_RANK, MPI_Group_incl(g, 1, &size, &g2));
	v[0] = v[1] = 0;
	EXPECT(MPI_ERR_RANK, MPI_Group_incl(g, size > 1 ? 2 : 1, size > 1 ? v : &size, &g2));
	OK(MPI_Group_free(&g));
	EXPECT(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, v));
	EXPECT(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, v, &flag));
	EXPECT(MPI_ERR_ARG, MPI_Error_string(MPI_ERR_LASTCODE + 1, s, &len));
	/* Classes and strings. */
	for (cls = MPI_SUCCESS; cls <= MPI_ERR_LASTCODE; cls++) {
		int c2 = -1;

		OK(MPI_Error_class(cls, &c2));
		CHECK(c2 == cls, "class of %d is %d", cls, c2);
		OK(MPI_Error_string(cls, s, &len));
		CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len,
		      "string of %d", cls);
	}
	OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
	CHECK(strstr(s, "MPI_ERR_TRUNCATE") != NULL, "'%s'", s);
	/* Truncation: the receive reports it; the message is consumed. */
	if (size > 1 && rank < 2) {
		int big[100], small[2], i;
		static int huge[50000], hsmall[10];
		MPI_Status st;

		for (i = 0; i < 100; i++)
			big[i] = i;
		OK(MPI_Irecv(small, 2, MPI_INT, peer, 9, MPI_COMM_WORLD, &req));
		OK(MPI_Send(big, 10, MPI_INT, peer, 9, MPI_COMM_WORLD));
		EXPECT(MPI_ERR_TRUNCATE, MPI_Wait(&req, &st));
		CHECK(small[0] == 0 && small[1] == 1, "truncated data %d %d", small[0], small[1]);
		OK(MPI_Isend(huge, 50000, MPI_INT, peer, 10, MPI_COMM_WORLD, &req));
		EXPECT(MPI_ERR_TRUNCATE,
		       MPI_Recv(hsmall, 10, MPI_INT, peer, 10, MPI_COMM_WORLD, &st));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 10, "status of a truncated message");
		/* The link still works. */
		OK(MPI_Sendrecv(big, 1, MPI_INT, peer, 11, small, 1, MPI_INT, peer, 11,
				MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	/* Calls after the error handler is restored still work. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_ARE_FATAL, "handler not restored");
}

static int handler_calls, handler_code;

static void my_handler(MPI_Comm *comm, int *code, ...)
{
	handler_calls++;
	handler_code = *code;
}

static void test_errhandler(void)
{
	MPI_Errhandler eh, got;
	MPI_Comm dup;
	int v = 0, rc;

	OK(MPI_Comm_create_errhandler(my_handler, &eh));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_set_errhandler(dup, eh));
	OK(MPI_Comm_get_errhandler(dup, &got));
	CHECK(got == eh, "handler read back");
	OK(MPI_Errhandler_free(&got));
	OK(MPI_Errhandler_free(&eh));
	rc = MPI_Send(&v, 1, MPI_INT, size + 3, 0, dup);
	CHECK(rc == MPI_ERR_RANK && handler_calls == 1 && handler_code == MPI_ERR_RANK,
	      "user handler: rc %d, %d calls, code %d", rc, handler_calls, handler_code);
	OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
	CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
	/* A communicator made from dup inherits its handler. */
	{
		MPI_Comm d2;

		OK(MPI_Comm_dup(dup, &d2));
		rc = MPI_Send(&v, 1, MPI_INT, 0, -1, d2);
		CHECK(rc == MPI_ERR_TAG && handler_calls == 3, "inherited handler");
		OK(MPI_Comm_free(&d2));
	}
	OK(MPI_Comm_free(&dup));
}

/* Run by hosts.sh with a configuration whose first half of nodes names
 * this machine by its own name and the second half "localhost": the same
 * host for BIP (both use shm), so MPI_COMM_TYPE_SHARED puts every process
 * in one communicator, in world order. */
static void test_hosts(void)
{
	MPI_Comm shared;
	MPI_Group g, wg;
	int n, r, i, ranks[64], out[64];

	CHECK(size <= 64, "at most 64 processes (%d)", size);
	for (i = 0; i < size; i++)
		CHECK(bip_layer_same_host(rank, i) == 1, "nodes %d (%s) and %d (%s) are not one host",
		      rank, bip_layer_host(rank), i, bip_layer_host(i));
	/* Bad nodes: -1 with the call named (on standard error). */
	CHECK(bip_layer_same_host(-1, 0) == -1, "node -1 accepted");
	/* Beyond the job's room (bip_universe(3)): nodes that may join are
	 * named within it. */
	CHECK(bip_layer_same_host(0, bip_universe()) == -1, "node %d of %d accepted",
	      bip_universe(), bip_universe());
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_size(shared, &n));
	OK(MPI_Comm_rank(shared, &r));
	CHECK(n == size, "%d processes share my host, expected all %d", n, size);
	CHECK(r == rank, "rank %d on my host, expected %d", r, rank);
	OK(MPI_Comm_group(shared, &g));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	for (i = 0; i < n; i++)
		ranks[i] = i;
	OK(MPI_Group_translate_ranks(g, n, ranks, wg, out));
	for (i = 0; i < n; i++)
		CHECK(out[i] == i, "member %d is world rank %d", i, out[i]);
	exchange(shared, 30);
	OK(MPI_Group_free(&g));
	OK(MPI_Group_free(&wg));
	OK(MPI_Comm_free(&shared));
	/* The file names no cluster: one cluster, every process in it. */
	for (i = 0; i < size; i++)
		CHECK(bip_layer_cluster(i) == 0, "node %d in cluster %d", i, bip_layer_cluster(i));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, BIP_COMM_TYPE_CLUSTER, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_size(shared, &n));
	CHECK(n == size, "%d processes in my cluster, expected all %d", n, size);
	OK(MPI_Comm_free(&shared));
}

/* Run by hosts.sh clusters: the same configuration, and two clusters, one
 * per half (this machine's name, then "localhost"), joined by a gateway.
 * BIP_COMM_TYPE_CLUSTER splits the halves, MPI_COMM_TYPE_SHARED still
 * holds them all (one machine), and a bad node is -1. */
static void test_clusters(void)
{
	MPI_Comm cl, shared;
	int n, r, i, half = size / 2, mine = rank >= half;

	for (i = 0; i < size; i++)
		CHECK(bip_layer_cluster(i) == (i >= half), "node %d in cluster %d, expected %d", i,
		      bip_layer_cluster(i), i >= half);
	CHECK(bip_layer_cluster(-1) == -1, "node -1 in a cluster");
	CHECK(bip_layer_cluster(size) == -1, "node %d of %d in a cluster", size, size);
	/* Key: the reverse of the world order. */
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, BIP_COMM_TYPE_CLUSTER, size - rank, MPI_INFO_NULL,
			       &cl));
	OK(MPI_Comm_size(cl, &n));
	OK(MPI_Comm_rank(cl, &r));
	CHECK(n == (mine ? size - half : half), "%d processes in my cluster %d", n, mine);
	CHECK(r == (mine ? size - 1 - rank : half - 1 - rank), "rank %d in my cluster", r);
	exchange(cl, 31);
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_size(shared, &n));
	CHECK(n == size, "%d processes share my host, expected all %d", n, size);
	OK(MPI_Comm_free(&shared));
	/* Of the cluster communicator, again: itself. */
	OK(MPI_Comm_split_type(cl, BIP_COMM_TYPE_CLUSTER, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_compare(cl, shared, &r));
	CHECK(r == MPI_CONGRUENT, "the cluster of my cluster: %d", r);
	OK(MPI_Comm_free(&shared));
	OK(MPI_Comm_free(&cl));
}

/*
 * Under srun: MPI_COMM_TYPE_SHARED groups the ranks exactly as Slurm
 * placed them (SLURMD_NODENAME, the node each task runs on), and the
 * processor name is that node.
 */
static void test_slurmhosts(void)
{
	char (*names)[64], mine[64], proc[MPI_MAX_PROCESSOR_NAME];
	const char *node = getenv("SLURMD_NODENAME");
	MPI_Comm shared;
	int n, r, i, k, len, want = 0, wrank = 0;

	CHECK(node && *node && strlen(node) < sizeof(mine), "SLURMD_NODENAME not set: not "
	      "started by srun");
	names = calloc((size_t)size, sizeof(*names));
	CHECK(names, "no memory");
	memset(mine, 0, sizeof(mine));
	snprintf(mine, sizeof(mine), "%s", node);
	OK(MPI_Allgather(mine, 64, MPI_CHAR, names, 64, MPI_CHAR, MPI_COMM_WORLD));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_size(shared, &n));
	OK(MPI_Comm_rank(shared, &r));
	for (i = 0; i < size; i++) {
		if (strcmp(names[i], mine))
			continue;
		if (i == rank)
			wrank = want;
		want++;
		CHECK(bip_layer_same_host(rank, i) == 1, "ranks %d and %d are both on %s",
		      rank, i, mine);
	}
	for (i = 0; i < size; i++)
		if (strcmp(names[i], mine))
			CHECK(bip_layer_same_host(rank, i) == 0, "rank %d (%s) is not on %s", i,
			      names[i], mine);
	CHECK(n == want, "%d ranks share my node %s, Slurm placed %d there", n, mine, want);
	CHECK(r == wrank, "rank %d on my node, expected %d", r, wrank);
	/* Every member of shared says it is on this node. */
	for (k = 0; k < n; k++) {
		char theirs[64];

		memcpy(theirs, mine, sizeof(theirs));
		OK(MPI_Bcast(theirs, 64, MPI_CHAR, k, shared));
		CHECK(!strcmp(theirs, mine), "member %d of my shared communicator is on %s, not %s",
		      k, theirs, mine);
	}
	OK(MPI_Get_processor_name(proc, &len));
	exchange(shared, 31);
	OK(MPI_Comm_free(&shared));
	free(names);
	if (rank == 0)
		printf("slurmhosts: %d ranks; rank 0 on %s with %d (processor %s)\n", size, mine, n,
		       proc);
}

/* A communicator freed while requests on it are in flight: they complete
 * normally (the standard's deferred deallocation). */
static int freed_deletes;

static int note_delete(MPI_Comm comm, int key, void *value, void *extra)
{
	freed_deletes++;
	return MPI_SUCCESS;
}

static void test_freecomm(void)
{
	int peer = rank ^ 1, v, w = rank, key, i;
	static unsigned char big[200000], in[200000];
	MPI_Request reqs[4];
	MPI_Comm dup;

	if (peer >= size)
		peer = rank;
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_delete, &key, NULL));
	for (i = 0; i < 3; i++) {
		v = -1;
		big[i] = (unsigned char)(rank + i);
		OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
		OK(MPI_Comm_set_attr(dup, key, &v));
		OK(MPI_Irecv(&v, 1, MPI_INT, peer, 1, dup, &reqs[0]));
		OK(MPI_Irecv(in, sizeof(in), MPI_BYTE, peer, 2, dup, &reqs[1]));
		OK(MPI_Isend(&w, 1, MPI_INT, peer, 1, dup, &reqs[2]));
		OK(MPI_Isend(big, sizeof(big), MPI_BYTE, peer, 2, dup, &reqs[3]));
		OK(MPI_Comm_free(&dup));
		CHECK(dup == MPI_COMM_NULL && freed_deletes == i + 1,
		      "attributes deleted when the handle is freed (%d)", freed_deletes);
		/* Another communicator meanwhile: a context of its own. */
		OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
		OK(MPI_Comm_free(&dup));
		OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
		CHECK(v == peer && in[i] == (unsigned char)(peer + i), "got %d and %u", v, in[i]);
	}
	OK(MPI_Comm_free_keyval(&key));
}

/* MPI_THREAD_SERIALIZED: another thread calls MPI, one thread at a time. */
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	int peer = *(int *)arg, i, v, flag = -1;

	pthread_mutex_lock(&mpi_lock);
	OK(MPI_Is_thread_main(&flag));
	pthread_mutex_unlock(&mpi_lock);
	CHECK(flag == 0, "Is_thread_main in another thread says %d", flag);
	for (i = 0; i < 50; i++) {
		MPI_Request req;
		int done = 0;

		pthread_mutex_lock(&mpi_lock);
		OK(MPI_Irecv(&v, 1, MPI_INT, peer, 70, MPI_COMM_WORLD, &req));
		OK(MPI_Send(&i, 1, MPI_INT, peer, 70, MPI_COMM_WORLD));
		pthread_mutex_unlock(&mpi_lock);
		while (!done) {
			pthread_mutex_lock(&mpi_lock);
			OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
			pthread_mutex_unlock(&mpi_lock);
		}
		CHECK(v == i, "thread got %d, expected %d", v, i);
	}
	return NULL;
}

static void test_threads(void)
{
	int peer = rank ^ 1, i, v;
	pthread_t th;

	if (peer >= size)
		peer = rank;
	CHECK(pthread_create(&th, NULL, thread_main, &peer) == 0, "pthread_create");
	/* The main thread talks on another tag meanwhile. */
	for (i = 0; i < 50; i++) {
		MPI_Request req;
		int done = 0;

		pthread_mutex_lock(&mpi_lock);
		OK(MPI_Irecv(&v, 1, MPI_INT, peer, 71, MPI_COMM_WORLD, &req));
		OK(MPI_Send(&i, 1, MPI_INT, peer, 71, MPI_COMM_WORLD));
		pthread_mutex_unlock(&mpi_lock);
		while (!done) {
			pthread_mutex_lock(&mpi_lock);
			OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
			pthread_mutex_unlock(&mpi_lock);
		}
		CHECK(v == i, "main thread got %d, expected %d", v, i);
	}
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
}

/* Stopped by the default handler; fatal.sh checks the message. */
static void test_fatal(void)
{
	int v = 0;

	if (rank == size - 1)
		MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
	/* The others wait for a message that never comes; bipload stops them. */
	MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(0, "the fatal handler did not stop the job");
}

static void test_abort(void)
{
	int v = 0;

	if (rank == 0)
		MPI_Abort(MPI_COMM_WORLD, 7);
	MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(0, "MPI_Abort did not stop the job");
}

/* MPI_Comm_idup and MPI_Comm_idup_with_info: made in the background. */
static void test_idup(void)
{
	MPI_Comm c1 = MPI_COMM_NULL, c2, c3, c4, dupw, blocking;
	MPI_Request reqs[3], req;
	MPI_Info info, got;
	char value[16];
	int res, flag, v = -1, i, order[3] = { 0, 0, 0 };

	/* Rank 0 starts its idup, then sends to rank 1, which receives
	 * before it starts its own: the idup must not wait for rank 1. */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dupw));
	if (rank == 1) {
		OK(MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(v == 33, "got %d", v);
	}
	OK(MPI_Comm_idup(MPI_COMM_WORLD, &c1, &reqs[0]));
	if (rank == 0 && size > 1) {
		v = 33;
		OK(MPI_Send(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
	}
	/* More of them in flight, on two parents, and a blocking dup of the
	 * same parent meanwhile (it may take the id the first idup proposed). */
	OK(MPI_Comm_idup(dupw, &c2, &reqs[1]));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &blocking));
	OK(MPI_Comm_idup(MPI_COMM_WORLD, &c3, &reqs[2]));
	for (i = 2; i >= 0; i--)
		OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
	/* Each works, and none sees another's messages. */
	exchange(c1, 1);
	exchange(c2, 2);
	exchange(c3, 3);
	exchange(blocking, 4);
	for (i = 0; i < 3; i++) {
		MPI_Comm cs[3] = { c1, c2, c3 };
		int next = (rank + 1) % size, prev = (rank + size - 1) % size;

		v = 100 + i;
		OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 9, &order[i], 1, MPI_INT, prev, 9, cs[2 - i],
				MPI_STATUS_IGNORE));
		CHECK(order[i] == 100 + i, "message %d crossed communicators: %d", i, order[i]);
	}
	OK(MPI_Comm_compare(c1, MPI_COMM_WORLD, &res));
	CHECK(res == MPI_CONGRUENT, "idup compares %d", res);
	OK(MPI_Comm_free(&c1));
	OK(MPI_Comm_free(&c2));
	OK(MPI_Comm_free(&c3));
	OK(MPI_Comm_free(&blocking));

	/* With info: its hints, not the parent's. */
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "bip_hint", "yes"));
	OK(MPI_Comm_idup_with_info(dupw, info, &c4, &req));
	OK(MPI_Info_free(&info)); /* the call keeps its own copy */
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	OK(MPI_Comm_get_info(c4, &got));
	OK(MPI_Info_get(got, "bip_hint", (int)sizeof(value) - 1, value, &flag));
	CHECK(flag && !strcmp(value, "yes"), "hint %d '%s'", flag, flag ? value : "");
	OK(MPI_Info_free(&got));
	exchange(c4, 5);
	OK(MPI_Comm_free(&c4));

	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Comm_idup(MPI_COMM_NULL, &c1, &req) == MPI_ERR_COMM, "idup of COMM_NULL");
	CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &c1, NULL) == MPI_ERR_ARG, "NULL request");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_free(&dupw));
}

/* The handler of test_idup_early: counts its calls, keeps what it saw. */
static int early_calls, early_code;
static MPI_Comm early_comm;

static void early_handler(MPI_Comm *comm, int *code, ...)
{
	early_calls++;
	early_comm = *comm;
	early_code = *code;
}

/*
 * What a language binding does right after MPI_Comm_idup, before the
 * request completes: set the new communicator's error handler (and a name
 * and attributes).  Erroneous by the letter of the standard, accepted by
 * the common implementations; once the request completes they are the
 * communicator's, the attributes set on it before those copied from the
 * parent.  Rank 1 starts its idup only after rank 0 has made these calls,
 * so rank 0 makes them while its request cannot have completed.
 */
static void test_idup_early(void)
{
	static int mine = 11, parents = 22, both_parent = 33, both_mine = 44;
	MPI_Comm parent, c, c2;
	MPI_Request req;
	MPI_Errhandler eh, got;
	int key, pkey, bkey, flag, v = 0, len, rc, cls;
	int *val;
	char name[MPI_MAX_OBJECT_NAME];

	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &pkey, NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &bkey, NULL));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
	OK(MPI_Comm_set_attr(parent, pkey, &parents));
	OK(MPI_Comm_set_attr(parent, bkey, &both_parent));
	OK(MPI_Comm_create_errhandler(early_handler, &eh));

	if (rank == 1)
		OK(MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Comm_idup(parent, &c, &req));
	if (rank == 0 && size > 1) {
		OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
		CHECK(!flag, "the idup completed before rank 1 started its own");
	}
	OK(MPI_Comm_set_errhandler(c, eh));
	OK(MPI_Comm_get_errhandler(c, &got));
	CHECK(got == eh, "get_errhandler before completion gives another handler");
	OK(MPI_Errhandler_free(&got));
	OK(MPI_Comm_set_name(c, "early"));
	OK(MPI_Comm_get_name(c, name, &len));
	CHECK(!strcmp(name, "early"), "name before completion '%s'", name);
	OK(MPI_Comm_set_attr(c, key, &mine));
	OK(MPI_Comm_set_attr(c, bkey, &both_mine));
	OK(MPI_Comm_get_attr(c, key, &val, &flag));
	CHECK(flag && val == &mine, "attribute before completion: flag %d", flag);
	if (rank == 0 && size > 1)
		OK(MPI_Send(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

	/* The communicator has them now, and works. */
	OK(MPI_Comm_get_errhandler(c, &got));
	CHECK(got == eh, "the handler set before completion is not the communicator's");
	OK(MPI_Errhandler_free(&got));
	OK(MPI_Errhandler_free(&eh)); /* the communicator holds it */
	OK(MPI_Comm_get_name(c, name, &len));
	CHECK(!strcmp(name, "early") && len == 5, "name '%s'", name);
	OK(MPI_Comm_get_attr(c, key, &val, &flag));
	CHECK(flag && val == &mine, "the attribute set before completion: flag %d", flag);
	OK(MPI_Comm_get_attr(c, pkey, &val, &flag));
	CHECK(flag && val == &parents, "the parent's attribute was not copied: flag %d", flag);
	OK(MPI_Comm_get_attr(c, bkey, &val, &flag));
	CHECK(flag && val == &both_mine, "the parent's attribute replaced the program's");
	exchange(c, 6);
	rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, c);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK && early_calls == 1 && early_comm == c &&
		      early_code == MPI_ERR_RANK,
	      "the handler: %d call(s), code %d, rc %d", early_calls, early_code, rc);

	/* MPI_ERRORS_RETURN, the binding's usual choice, on a parent whose
	 * handler is fatal. */
	if (rank == 1)
		OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Comm_idup(MPI_COMM_WORLD, &c2, &req));
	OK(MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN));
	if (rank == 0 && size > 1)
		OK(MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, c2);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK, "an error on the new communicator returned %d", rc);
	exchange(c2, 7);

	OK(MPI_Comm_free(&c2));
	OK(MPI_Comm_free(&c));
	OK(MPI_Comm_free(&parent));
	OK(MPI_Comm_free_keyval(&key));
	OK(MPI_Comm_free_keyval(&pkey));
	OK(MPI_Comm_free_keyval(&bkey));
}

/* MPI_Comm_create_group: collective over the group only. */
static void test_create_group(void)
{
	MPI_Group world, half, pair;
	MPI_Comm c, sub;
	int n = (size + 1) / 2, *members = malloc(sizeof(int) * (size_t)size), i, r, s;

	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	/* The even ranks, or the odd ones: both groups at the same time. */
	for (i = 0; i < size; i++)
		members[i] = 2 * i + rank % 2;
	n = rank % 2 ? size / 2 : (size + 1) / 2;
	OK(MPI_Group_incl(world, n, members, &half));
	OK(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &c));
	OK(MPI_Comm_rank(c, &r));
	OK(MPI_Comm_size(c, &s));
	CHECK(r == rank / 2 && s == n, "rank %d of %d", r, s);
	exchange(c, 1);
	OK(MPI_Comm_free(&c));
	/* Overlapping pairs {k, k+1} with tag k: rank k takes part in two,
	 * the one with k - 1 first. */
	for (i = rank - 1; i <= rank; i++) {
		int p[2] = { i, i + 1 };

		if (i < 0 || i + 1 >= size)
			continue;
		OK(MPI_Group_incl(world, 2, p, &pair));
		OK(MPI_Comm_create_group(MPI_COMM_WORLD, pair, i, &c));
		OK(MPI_Comm_size(c, &s));
		CHECK(s == 2, "pair of %d", s);
		exchange(c, 2);
		OK(MPI_Comm_free(&c));
		OK(MPI_Group_free(&pair));
	}
	/* Not a member: MPI_COMM_NULL. */
	members[0] = 0;
	OK(MPI_Group_incl(world, 1, members, &pair));
	if (rank != 0) {
		OK(MPI_Comm_create_group(MPI_COMM_WORLD, pair, 1, &c));
		CHECK(c == MPI_COMM_NULL, "a non-member got a communicator");
	} else {
		OK(MPI_Comm_create_group(MPI_COMM_WORLD, pair, 1, &c));
		OK(MPI_Comm_size(c, &s));
		CHECK(s == 1, "alone: %d", s);
		OK(MPI_Comm_free(&c));
	}
	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, pair, -1, &c) == MPI_ERR_TAG, "tag -1");
	CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 1, &c) == MPI_ERR_GROUP,
	      "GROUP_NULL");
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &sub));
	OK(MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN));
	if (size > 1)
		CHECK(MPI_Comm_create_group(sub, world, 1, &c) == MPI_ERR_GROUP,
		      "a group larger than the communicator");
	OK(MPI_Comm_free(&sub));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Group_free(&pair));
	OK(MPI_Group_free(&half));
	OK(MPI_Group_free(&world));
	free(members);
}


struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "env", test_env },
	{ "split", test_split },
	{ "group", test_group },
	{ "attr", test_attr },
	{ "errors", test_errors },
	{ "errhandler", test_errhandler },
	{ "hosts", test_hosts },
	{ "clusters", test_clusters },
	{ "slurmhosts", test_slurmhosts },
	{ "threads", test_threads },
	{ "freecomm", test_freecomm },
	{ "idup", test_idup },
	{ "idupearly", test_idup_early },
	{ "creategroup", test_create_group },
	{ "fatal", test_fatal },
	{ "abort", test_abort },
};

int main(int argc, char **argv)
{
	int provided = -1, flag = 1;
	size_t i;

	OK(MPI_Initialized(&flag));
	CHECK(flag == 0, "Initialized before MPI_Init");
	/* More than is provided: the answer says what is. */
	OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	if (argc != 2) {
		fprintf(stderr, "usage: comm TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		tests[i].fn();
		OK(MPI_Finalize());
		OK(MPI_Finalized(&flag));
		CHECK(flag == 1, "Finalized after MPI_Finalize");
		return 0;
	}
	fprintf(stderr, "comm: no test %s\n", argv[1]);
	return 2;
}
