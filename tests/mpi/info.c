/* SPDX-License-Identifier: MIT */
/*
 * info.c - tests of info objects, MPI_INFO_ENV, communicator hints, added
 * error classes, codes and strings, and the thread levels, run through
 * bipload:
 *   bipload -sz N info TEST [LEVEL]
 * "thread LEVEL" starts MPI with MPI_Init_thread(LEVEL) ("init": MPI_Init)
 * and checks that MPI_Query_thread and MPI_Is_thread_main agree with it;
 * the other tests start with MPI_Init.  Every misuse is made under
 * MPI_ERRORS_RETURN and must return its error class.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <mpi.h>

#include "mpicheck.h"

static int rank, size;

/* A call that must fail with class cls. */
#define FAILS(cls, call)                                                                     \
	do {                                                                                 \
		int fails_rc_ = (call);                                                      \
		CHECK(fails_rc_ == (cls), "returned %d, not %s (%d)", fails_rc_, #cls, cls); \
	} while (0)

static void get(MPI_Info info, const char *key, const char *want)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag = -1, len = -1;

	OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
	CHECK(flag == (want != NULL), "key %s: flag %d", key, flag);
	OK(MPI_Info_get_valuelen(info, key, &len, &flag));
	CHECK(flag == (want != NULL), "key %s: valuelen flag %d", key, flag);
	if (want)
		CHECK(!strcmp(v, want) && len == (int)strlen(want), "key %s: '%s' (%d), not '%s'",
		      key, v, len, want);
}

static void nkeys(MPI_Info info, int want)
{
	int n = -1;

	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == want, "%d keys, not %d", n, want);
}

/* Info calls made before MPI_Init (allowed by MPI-4.0). */
static void before_init(void)
{
	MPI_Info info;

	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "a", "1"));
	get(info, "a", "1");
	OK(MPI_Info_free(&info));
	CHECK(info == MPI_INFO_NULL, "Info_free leaves the handle");
}

static void test_info(void)
{
	char key[MPI_MAX_INFO_KEY + 2], val[MPI_MAX_INFO_VAL + 2], v[16];
	MPI_Info info, dup, stale;
	int flag, len, i;

	OK(MPI_Info_create(&info));
	nkeys(info, 0);
	get(info, "missing", NULL);
	OK(MPI_Info_set(info, "one", "1"));
	OK(MPI_Info_set(info, "two", "second value"));
	OK(MPI_Info_set(info, "three", ""));
	nkeys(info, 3);
	get(info, "one", "1");
	get(info, "three", "");
	/* Keys are case-sensitive; setting again replaces, in place. */
	get(info, "ONE", NULL);
	OK(MPI_Info_set(info, "one", "uno"));
	nkeys(info, 3);
	get(info, "one", "uno");
	{
		const char *order[] = { "one", "two", "three" };

		for (i = 0; i < 3; i++) {
			OK(MPI_Info_get_nthkey(info, i, key));
			CHECK(!strcmp(key, order[i]), "key %d is %s", i, key);
		}
	}
	/* MPI_Info_get: valuelen characters at most, then a null. */
	memset(v, 'x', sizeof(v));
	OK(MPI_Info_get(info, "two", 6, v, &flag));
	CHECK(flag && !strcmp(v, "second") && v[7] == 'x', "truncated to '%s'", v);
	OK(MPI_Info_get(info, "two", 0, v, &flag));
	CHECK(flag && v[0] == '\0', "valuelen 0 gives '%s'", v);
	/* MPI_Info_get_string: buflen becomes the room the value needs. */
	len = 4;
	OK(MPI_Info_get_string(info, "two", &len, v, &flag));
	CHECK(flag && len == 13 && !strcmp(v, "sec"), "get_string: %d '%s'", len, v);
	len = 0;
	v[0] = 'y';
	OK(MPI_Info_get_string(info, "two", &len, NULL, &flag));
	CHECK(flag && len == 13 && v[0] == 'y', "get_string with 0: %d", len);
	len = (int)sizeof(v);
	OK(MPI_Info_get_string(info, "two", &len, v, &flag));
	CHECK(flag && len == 13 && !strcmp(v, "second value"), "get_string: %d '%s'", len, v);
	len = 5;
	OK(MPI_Info_get_string(info, "nothere", &len, v, &flag));
	CHECK(!flag && len == 5, "get_string of a missing key: flag %d len %d", flag, len);

	/* MPI_Info_dup: an independent copy. */
	OK(MPI_Info_dup(info, &dup));
	OK(MPI_Info_delete(info, "one"));
	nkeys(info, 2);
	get(info, "one", NULL);
	OK(MPI_Info_get_nthkey(info, 0, key));
	CHECK(!strcmp(key, "two"), "after delete, key 0 is %s", key);
	nkeys(dup, 3);
	get(dup, "one", "uno");
	OK(MPI_Info_set(dup, "four", "4"));
	get(info, "four", NULL);

	/* The longest key and value are accepted. */
	memset(key, 'k', MPI_MAX_INFO_KEY);
	key[MPI_MAX_INFO_KEY] = '\0';
	memset(val, 'v', MPI_MAX_INFO_VAL);
	val[MPI_MAX_INFO_VAL] = '\0';
	OK(MPI_Info_set(info, key, val));
	get(info, key, val);

	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	key[MPI_MAX_INFO_KEY] = 'k';
	key[MPI_MAX_INFO_KEY + 1] = '\0';
	FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "x"));
	FAILS(MPI_ERR_INFO_KEY, MPI_Info_get(info, key, 4, v, &flag));
	FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
	FAILS(MPI_ERR_INFO_KEY, MPI_Info_delete(info, NULL));
	val[MPI_MAX_INFO_VAL] = 'v';
	val[MPI_MAX_INFO_VAL + 1] = '\0';
	FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "long", val));
	FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "null", NULL));
	get(info, "long", NULL);
	FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "one"));
	FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 3, key));
	FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, key));
	FAILS(MPI_ERR_ARG, MPI_Info_get(info, "two", -1, v, &flag));
	FAILS(MPI_ERR_ARG, MPI_Info_get(info, "two", 4, v, NULL));
	len = -1;
	FAILS(MPI_ERR_ARG, MPI_Info_get_string(info, "two", &len, v, &flag));
	FAILS(MPI_ERR_ARG, MPI_Info_get_nkeys(info, NULL));
	FAILS(MPI_ERR_ARG, MPI_Info_create(NULL));
	FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "a", "b"));
	FAILS(MPI_ERR_INFO, MPI_Info_get_nkeys(MPI_INFO_NULL, &len));
	FAILS(MPI_ERR_INFO, MPI_Info_dup(MPI_INFO_NULL, &dup));
	stale = MPI_INFO_NULL;
	FAILS(MPI_ERR_INFO, MPI_Info_free(&stale));
	nkeys(info, 3); /* nothing was changed by the failures */
	OK(MPI_Info_free(&dup));
	/* A freed handle is refused (until the object is made again). */
	stale = info;
	OK(MPI_Info_free(&info));
	FAILS(MPI_ERR_INFO, MPI_Info_get_nkeys(stale, &len));
	FAILS(MPI_ERR_INFO, MPI_Info_set(stale, "a", "b"));
	FAILS(MPI_ERR_INFO, MPI_Info_free(&stale));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_env(void)
{
	char cwd[4096], host[MPI_MAX_INFO_VAL + 1], sz[16], key[MPI_MAX_INFO_KEY + 1];
	struct utsname u;
	MPI_Info copy;
	int n, i, flag;

	nkeys(MPI_INFO_ENV, 6);
	for (i = 0; i < 6; i++)
		OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
	snprintf(sz, sizeof(sz), "%d", size);
	get(MPI_INFO_ENV, "maxprocs", sz);
	CHECK(uname(&u) == 0, "uname");
	get(MPI_INFO_ENV, "host", u.nodename);
	get(MPI_INFO_ENV, "arch", u.machine);
	CHECK(getcwd(cwd, sizeof(cwd)), "getcwd");
	get(MPI_INFO_ENV, "wdir", cwd);
	/* The command is this program; argv its arguments, "env". */
	OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, host, &flag));
	CHECK(flag && strstr(host, "mpi_info"), "command '%s'", host);
	get(MPI_INFO_ENV, "argv", "env");
	get(MPI_INFO_ENV, "thread_level", NULL);
	/* A copy can be changed; the object itself cannot. */
	OK(MPI_Info_dup(MPI_INFO_ENV, &copy));
	OK(MPI_Info_set(copy, "maxprocs", "0"));
	OK(MPI_Info_get_nkeys(copy, &n));
	CHECK(n == 6, "copy has %d keys", n);
	OK(MPI_Info_free(&copy));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_ENV, "maxprocs", "0"));
	FAILS(MPI_ERR_INFO, MPI_Info_delete(MPI_INFO_ENV, "host"));
	copy = MPI_INFO_ENV;
	FAILS(MPI_ERR_INFO, MPI_Info_free(&copy));
	get(MPI_INFO_ENV, "maxprocs", sz);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_comminfo(void)
{
	MPI_Comm dup, dup2, dup3;
	MPI_Info info, used, stale;

	/* No hints at first: an empty object. */
	OK(MPI_Comm_get_info(MPI_COMM_WORLD, &used));
	nkeys(used, 0);
	OK(MPI_Info_free(&used));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
	OK(MPI_Info_set(info, "my_hint", "a"));
	OK(MPI_Comm_set_info(dup, info));
	/* The communicator keeps its own copy. */
	OK(MPI_Info_set(info, "my_hint", "changed"));
	OK(MPI_Comm_get_info(dup, &used));
	nkeys(used, 2);
	get(used, "mpi_assert_no_any_tag", "true");
	get(used, "my_hint", "a");
	OK(MPI_Info_free(&used));
	/* A second set replaces the keys it names and keeps the others. */
	OK(MPI_Info_free(&info));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "my_hint", "b"));
	OK(MPI_Info_set(info, "other", "c"));
	OK(MPI_Comm_set_info(dup, info));
	OK(MPI_Comm_set_info(dup, MPI_INFO_NULL));
	OK(MPI_Comm_get_info(dup, &used));
	nkeys(used, 3);
	get(used, "mpi_assert_no_any_tag", "true");
	get(used, "my_hint", "b");
	get(used, "other", "c");
	OK(MPI_Info_free(&used));
	/* MPI_Comm_dup carries the hints; MPI_Comm_dup_with_info takes info's. */
	OK(MPI_Comm_dup(dup, &dup2));
	OK(MPI_Comm_get_info(dup2, &used));
	nkeys(used, 3);
	get(used, "other", "c");
	OK(MPI_Info_free(&used));
	OK(MPI_Info_free(&info));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "only", "this"));
	OK(MPI_Comm_dup_with_info(dup, info, &dup3));
	OK(MPI_Comm_get_info(dup3, &used));
	nkeys(used, 1);
	get(used, "only", "this");
	OK(MPI_Info_free(&used));
	/* The new communicator works. */
	{
		int sum = 0, one = 1;

		OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup3));
		CHECK(sum == size, "sum %d on the new communicator", sum);
	}
	OK(MPI_Comm_free(&dup3));
	OK(MPI_Comm_dup_with_info(dup, MPI_INFO_NULL, &dup3));
	OK(MPI_Comm_get_info(dup3, &used));
	nkeys(used, 0);
	OK(MPI_Info_free(&used));
	OK(MPI_Comm_free(&dup3));

	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
	stale = info;
	OK(MPI_Info_free(&info));
	FAILS(MPI_ERR_INFO, MPI_Comm_set_info(dup, stale));
	FAILS(MPI_ERR_INFO, MPI_Comm_dup_with_info(dup, stale, &dup3));
	FAILS(MPI_ERR_COMM, MPI_Comm_set_info(MPI_COMM_NULL, MPI_INFO_ENV));
	FAILS(MPI_ERR_COMM, MPI_Comm_get_info(MPI_COMM_NULL, &used));
	FAILS(MPI_ERR_ARG, MPI_Comm_get_info(dup, NULL));
	OK(MPI_Comm_get_info(dup, &used));
	nkeys(used, 3);
	OK(MPI_Info_free(&used));
	OK(MPI_Comm_free(&dup2));
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static int handler_code = -1;

static void record(MPI_Comm *comm, int *code, ...)
{
	handler_code = *code;
}

static void error_string(int code, const char *want)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = -1;

	OK(MPI_Error_string(code, s, &len));
	CHECK(!strcmp(s, want) && len == (int)strlen(want), "string of %d is '%s' (%d), not '%s'",
	      code, s, len, want);
}

static int lastused(void)
{
	int *v, flag = 0;

	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
	CHECK(flag, "MPI_LASTUSEDCODE not set");
	return *v;
}

static void test_errcodes(void)
{
	char s[MPI_MAX_ERROR_STRING + 1];
	int cls, cls2, code, code2, code3, c, len;
	MPI_Errhandler eh;

	CHECK(lastused() == MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d at first", lastused());
	OK(MPI_Add_error_class(&cls));
	CHECK(cls > MPI_ERR_LASTCODE && lastused() >= cls, "class %d, last used %d", cls,
	      lastused());
	OK(MPI_Add_error_code(cls, &code));
	OK(MPI_Add_error_code(cls, &code2));
	OK(MPI_Add_error_code(MPI_ERR_ARG, &code3));
	OK(MPI_Add_error_class(&cls2));
	CHECK(code != cls && code2 != code && code3 != code2 && cls2 != code3, "values %d %d %d %d %d",
	      cls, code, code2, code3, cls2);
	CHECK(lastused() == cls2, "MPI_LASTUSEDCODE %d, not %d", lastused(), cls2);
	/* The same values everywhere (every process adds in the same order). */
	{
		int mine[5] = { cls, code, code2, code3, cls2 }, lo[5], hi[5], i;

		OK(MPI_Allreduce(mine, lo, 5, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
		OK(MPI_Allreduce(mine, hi, 5, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		for (i = 0; i < 5; i++)
			CHECK(lo[i] == hi[i], "value %d differs between ranks", i);
	}
	OK(MPI_Error_class(cls, &c));
	CHECK(c == cls, "class of class %d is %d", cls, c);
	OK(MPI_Error_class(code2, &c));
	CHECK(c == cls, "class of code %d is %d", code2, c);
	OK(MPI_Error_class(code3, &c));
	CHECK(c == MPI_ERR_ARG, "class of code %d is %d", code3, c);
	OK(MPI_Error_class(MPI_ERR_TAG, &c));
	CHECK(c == MPI_ERR_TAG, "class of MPI_ERR_TAG is %d", c);
	/* No string yet: the empty string. */
	error_string(code, "");
	OK(MPI_Add_error_string(code, "my error"));
	error_string(code, "my error");
	OK(MPI_Add_error_string(code, "my error, again"));
	error_string(code, "my error, again");
	OK(MPI_Add_error_string(cls, "my class"));
	error_string(cls, "my class");
	error_string(code2, "");
	/* The longest string is kept whole. */
	memset(s, 's', MPI_MAX_ERROR_STRING - 1);
	s[MPI_MAX_ERROR_STRING - 1] = '\0';
	OK(MPI_Add_error_string(code2, s));
	error_string(code2, s);
	/* A handler sees the added code. */
	OK(MPI_Comm_create_errhandler(record, &eh));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code2));
	CHECK(handler_code == code2, "the handler got %d, not %d", handler_code, code2);
	OK(MPI_Errhandler_free(&eh));

	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_TAG, "not mine"));
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(MPI_SUCCESS, "not mine"));
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(cls2 + 1, "unknown"));
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(-5, "unknown"));
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(code, NULL));
	s[MPI_MAX_ERROR_STRING - 1] = 's';
	s[MPI_MAX_ERROR_STRING] = '\0';
	FAILS(MPI_ERR_ARG, MPI_Add_error_string(code, s));
	error_string(code, "my error, again");
	FAILS(MPI_ERR_ARG, MPI_Add_error_code(cls2 + 1, &c));
	FAILS(MPI_ERR_ARG, MPI_Add_error_code(code, &c)); /* a code, not a class */
	FAILS(MPI_ERR_ARG, MPI_Add_error_code(MPI_SUCCESS, &c));
	FAILS(MPI_ERR_ARG, MPI_Add_error_code(-1, &c));
	FAILS(MPI_ERR_ARG, MPI_Add_error_code(cls, NULL));
	FAILS(MPI_ERR_ARG, MPI_Add_error_class(NULL));
	CHECK(lastused() == cls2, "a refused call changed MPI_LASTUSEDCODE to %d", lastused());
	FAILS(MPI_ERR_ARG, MPI_Error_class(cls2 + 1, &c));
	FAILS(MPI_ERR_ARG, MPI_Error_class(-1, &c));
	FAILS(MPI_ERR_ARG, MPI_Error_string(cls2 + 1, s, &len));
	/* A predefined string is still the library's. */
	OK(MPI_Error_string(MPI_ERR_TAG, s, &len));
	CHECK(strstr(s, "MPI_ERR_TAG") != NULL, "string of MPI_ERR_TAG: '%s'", s);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* --- thread levels --- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *other_thread(void *arg)
{
	int flag = -1, level = -1;

	pthread_mutex_lock(&lock);
	OK(MPI_Is_thread_main(&flag));
	OK(MPI_Query_thread(&level));
	pthread_mutex_unlock(&lock);
	CHECK(flag == 0, "MPI_Is_thread_main in another thread says %d", flag);
	CHECK(level == *(int *)arg, "another thread: level %d, not %d", level, *(int *)arg);
	return NULL;
}

/* The level MPI_Init_thread(required) must give: required itself, every
 * level being provided, brought into MPI_THREAD_SINGLE .. MULTIPLE. */
static int expected_level(int required)
{
	if (required < MPI_THREAD_SINGLE)
		return MPI_THREAD_SINGLE;
	return required < MPI_THREAD_MULTIPLE ? required : MPI_THREAD_MULTIPLE;
}

static void test_thread(int provided, int required)
{
	int level = -1, flag = -1, again = -1;
	pthread_t th;

	CHECK(provided == expected_level(required), "required %d: provided %d, not %d", required,
	      provided, expected_level(required));
	OK(MPI_Query_thread(&level));
	CHECK(level == provided, "MPI_Query_thread says %d, MPI_Init_thread gave %d", level,
	      provided);
	OK(MPI_Is_thread_main(&flag));
	CHECK(flag == 1, "MPI_Is_thread_main in the main thread says %d", flag);
	/* Not a level the program may rely on below MPI_THREAD_SERIALIZED,
	 * but these two calls only read. */
	CHECK(pthread_create(&th, NULL, other_thread, &level) == 0, "pthread_create");
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	/* A second start is refused; provided then still says the level. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	FAILS(MPI_ERR_OTHER, MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &again));
	CHECK(again == provided, "refused MPI_Init_thread: provided %d, not %d", again, provided);
	FAILS(MPI_ERR_OTHER, MPI_Init(NULL, NULL));
	FAILS(MPI_ERR_ARG, MPI_Query_thread(NULL));
	FAILS(MPI_ERR_ARG, MPI_Is_thread_main(NULL));
	OK(MPI_Query_thread(&level));
	CHECK(level == provided, "MPI_Query_thread says %d after, not %d", level, provided);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "info", test_info },
	{ "env", test_env },
	{ "comminfo", test_comminfo },
	{ "errcodes", test_errcodes },
};

int main(int argc, char **argv)
{
	int provided = -1, required = MPI_THREAD_SINGLE, thread = 0, flag = 1;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: info TEST [LEVEL]\n");
		return 2;
	}
	before_init();
	if (!strcmp(argv[1], "thread") && argc == 3) {
		thread = 1;
		if (strcmp(argv[2], "init")) {
			required = atoi(argv[2]);
			OK(MPI_Init_thread(&argc, &argv, required, &provided));
		} else {
			OK(MPI_Init(&argc, &argv));
			provided = MPI_THREAD_SINGLE; /* what MPI_Init gives here */
		}
	} else {
		OK(MPI_Init(&argc, &argv));
	}
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	if (thread) {
		test_thread(provided, required);
	} else {
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			if (!strcmp(argv[1], tests[i].name))
				break;
		if (i == sizeof(tests) / sizeof(tests[0])) {
			fprintf(stderr, "info: no test %s\n", argv[1]);
			return 2;
		}
		tests[i].fn();
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Finalize());
	/* After MPI_Finalize: info calls still work, MPI_INFO_ENV is empty. */
	before_init();
	nkeys(MPI_INFO_ENV, 0);
	OK(MPI_Finalized(&flag));
	CHECK(flag == 1, "Finalized after MPI_Finalize");
	return 0;
}
