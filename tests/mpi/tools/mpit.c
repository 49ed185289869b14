/* SPDX-License-Identifier: MIT */
/*
 * mpit.c - the tools information interface (MPI_T, mpi_shim(7) TOOLS
 * INFORMATION INTERFACE), through its calls only.  One check per run,
 * named by the first argument:
 *
 *   enumerate   every control variable, performance variable and category
 *               enumerates, with consistent information: get_index finds
 *               each by its name, names are unique, every variable is in
 *               exactly one category and every category but the roots in
 *               one parent; the enumeration of mpi_shim_state; the string
 *               rules (length asked with 0, truncation, NULL); before
 *               MPI_Init, between it and MPI_Finalize, and after; the
 *               nesting of MPI_T_init_thread and MPI_T_finalize
 *   counters    (2 processes) bytes sent, and received, between start
 *               and stop grow by at least a 1 MiB message; a stopped handle
 *               keeps its value; readreset, reset, write; a second
 *               session is not disturbed; MPI_T_PVAR_ALL_HANDLES; the
 *               wait timer counts a receive that waits
 *   unexpected  (2 processes) the unexpected queue's length and high-water
 *               mark grow when sends arrive before their receives; the
 *               mark stays once they are received, and a reset brings it
 *               to the length now
 *   cvar        a control variable written between MPI_T_init_thread and
 *               MPI_Init (BIP_WAIT=yield, BIP_SPIN) is in the environment
 *               BIP reads at MPI_Init, and takes effect there
 *               (BIP_PROGRESS_THREAD=1: one more thread after MPI_Init than
 *               before); it still reads so after MPI_Init, and cannot
 *               be written any more (MPI_T_ERR_CVAR_SET_NEVER); bad values
 *               and read-only variables are refused
 *   errors      bad input: calls before MPI_T_init_thread, invalid
 *               indices, handles, sessions, enumeration items and names;
 *               read-only and continuous performance variables; short
 *               string buffers; BIP_SECRET never shown
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../mpicheck.h"

#define EXPECT(err, call)                                                                    \
	do {                                                                                 \
		int e_rc_ = (call);                                                          \
		CHECK(e_rc_ == (err), "returned %d, expected %d (%s)", e_rc_, (err), #err);  \
	} while (0)

static void t_init(void)
{
	int provided = -1;

	OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
	CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
}

/* --- enumerate --- */

static int cat_of_cvar[4096], cat_of_pvar[4096];

static void enumerate(void)
{
	int ncvar, npvar, ncat, i, j, idx, len, dlen, verb, scope, bind, cls, ro, cont, at;
	int cat_parents[64];
	char name[256], name2[256], desc[1024];
	MPI_Datatype type;
	MPI_T_enum en;

	OK(MPI_T_cvar_get_num(&ncvar));
	OK(MPI_T_pvar_get_num(&npvar));
	OK(MPI_T_category_get_num(&ncat));
	CHECK(ncvar > 40 && ncvar < 4096, "%d control variables", ncvar);
	CHECK(npvar > 20 && npvar < 4096, "%d performance variables", npvar);
	CHECK(ncat > 1 && ncat < 64, "%d categories", ncat);
	for (i = 0; i < ncvar; i++) {
		len = sizeof(name);
		dlen = sizeof(desc);
		OK(MPI_T_cvar_get_info(i, name, &len, &verb, &type, &en, desc, &dlen, &bind,
				       &scope));
		CHECK(len == (int)strlen(name) + 1 && len > 1, "cvar %d: name length %d", i, len);
		CHECK(dlen == (int)strlen(desc) + 1 && dlen > 1, "cvar %s: no description", name);
		CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
		      "cvar %s: verbosity %d", name, verb);
		CHECK(type == MPI_CHAR || type == MPI_INT, "cvar %s: type", name);
		CHECK(en == MPI_T_ENUM_NULL, "cvar %s: an enumeration", name);
		CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s: bind %d", name, bind);
		CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ,
		      "cvar %s: scope %d", name, scope);
		OK(MPI_T_cvar_get_index(name, &idx));
		CHECK(idx == i, "cvar %s: index %d, get_index %d (names not unique?)", name, i, idx);
		cat_of_cvar[i] = -1;
	}
	for (i = 0; i < npvar; i++) {
		len = sizeof(name);
		dlen = sizeof(desc);
		OK(MPI_T_pvar_get_info(i, name, &len, &verb, &cls, &type, &en, desc, &dlen, &bind,
				       &ro, &cont, &at));
		CHECK(len == (int)strlen(name) + 1 && len > 1, "pvar %d: name length %d", i, len);
		CHECK(dlen > 1, "pvar %s: no description", name);
		CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC,
		      "pvar %s: class %d", name, cls);
		CHECK(type == MPI_UNSIGNED_LONG_LONG || type == MPI_DOUBLE || type == MPI_INT,
		      "pvar %s: type", name);
		CHECK((cls == MPI_T_PVAR_CLASS_STATE) == (en != MPI_T_ENUM_NULL),
		      "pvar %s: a state has an enumeration, nothing else", name);
		CHECK(bind == MPI_T_BIND_NO_OBJECT, "pvar %s: bind", name);
		CHECK(!(cont && !ro) || cls != MPI_T_PVAR_CLASS_LEVEL, "pvar %s: flags", name);
		CHECK(!(ro && at), "pvar %s: read-only yet atomic readreset", name);
		OK(MPI_T_pvar_get_index(name, cls, &idx));
		CHECK(idx == i, "pvar %s: index %d, get_index %d (names not unique?)", name, i, idx);
		/* Unique across classes too. */
		for (j = MPI_T_PVAR_CLASS_STATE; j <= MPI_T_PVAR_CLASS_GENERIC; j++)
			if (j != cls)
				EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index(name, j, &idx));
		cat_of_pvar[i] = -1;
	}
	for (i = 0; i < ncat; i++)
		cat_parents[i] = -1;
	for (i = 0; i < ncat; i++) {
		int nc, np, nk, *list;

		len = sizeof(name);
		dlen = sizeof(desc);
		OK(MPI_T_category_get_info(i, name, &len, desc, &dlen, &nc, &np, &nk));
		CHECK(dlen > 1, "category %s: no description", name);
		OK(MPI_T_category_get_index(name, &idx));
		CHECK(idx == i, "category %s: index %d, get_index %d", name, i, idx);
		CHECK(nc + np + nk > 0, "category %s is empty", name);
		list = malloc(sizeof(int) * (size_t)(nc + np + nk + 1));
		CHECK(list != NULL, "malloc");
		OK(MPI_T_category_get_cvars(i, nc, list));
		for (j = 0; j < nc; j++) {
			CHECK(list[j] >= 0 && list[j] < ncvar, "category %s: cvar %d", name, list[j]);
			CHECK(cat_of_cvar[list[j]] == -1, "cvar %d in two categories", list[j]);
			cat_of_cvar[list[j]] = i;
		}
		OK(MPI_T_category_get_pvars(i, np, list));
		for (j = 0; j < np; j++) {
			CHECK(list[j] >= 0 && list[j] < npvar, "category %s: pvar %d", name, list[j]);
			CHECK(cat_of_pvar[list[j]] == -1, "pvar %d in two categories", list[j]);
			cat_of_pvar[list[j]] = i;
		}
		OK(MPI_T_category_get_categories(i, nk, list));
		for (j = 0; j < nk; j++) {
			CHECK(list[j] >= 0 && list[j] < ncat && list[j] != i, "category %s: sub %d",
			      name, list[j]);
			CHECK(cat_parents[list[j]] == -1, "category %d has two parents", list[j]);
			cat_parents[list[j]] = i;
		}
		free(list);
	}
	for (i = 0; i < ncvar; i++)
		CHECK(cat_of_cvar[i] >= 0, "cvar %d in no category", i);
	for (i = 0; i < npvar; i++)
		CHECK(cat_of_pvar[i] >= 0, "pvar %d in no category", i);
	OK(MPI_T_category_changed(&i));
	OK(MPI_T_category_changed(&j));
	CHECK(i == j, "categories changed from %d to %d", i, j);

	/* The names asked for. */
	OK(MPI_T_cvar_get_index("BIP_WAIT", &idx));
	OK(MPI_T_pvar_get_index("bip_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
	OK(MPI_T_pvar_get_index("mpi_shim_unexpected", MPI_T_PVAR_CLASS_LEVEL, &idx));
	OK(MPI_T_pvar_get_index("mpi_shim_unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &idx));
	OK(MPI_T_pvar_get_index("mpi_shim_wait_time", MPI_T_PVAR_CLASS_TIMER, &idx));
	OK(MPI_T_category_get_index("reliability", &idx));

	/* The string rules: the length asked with 0, then truncation. */
	OK(MPI_T_cvar_get_index("BIP_WAIT", &idx));
	len = 0;
	strcpy(name, "untouched");
	OK(MPI_T_cvar_get_info(idx, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	CHECK(len == (int)sizeof("BIP_WAIT"), "length asked: %d", len);
	CHECK(!strcmp(name, "untouched"), "written with a length of 0");
	len = 4;
	OK(MPI_T_cvar_get_info(idx, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	CHECK(len == 4 && !strcmp(name, "BIP"), "truncated to \"%s\", length %d", name, len);
	OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	dlen = 0;
	OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, &dlen, NULL, NULL));
	CHECK(dlen > 10, "description length %d", dlen);

	/* The enumeration of mpi_shim_state. */
	OK(MPI_T_pvar_get_index("mpi_shim_state", MPI_T_PVAR_CLASS_STATE, &idx));
	OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL, NULL,
			       NULL));
	len = sizeof(name);
	OK(MPI_T_enum_get_info(en, &j, name, &len));
	CHECK(j == 3, "%d states", j);
	for (i = 0; i < j; i++) {
		int value;

		len = sizeof(name2);
		OK(MPI_T_enum_get_item(en, i, &value, name2, &len));
		CHECK(value == i && len > 1, "state %d: value %d", i, value);
	}
}

/* The state mpi_shim_state reads now. */
static int mpi_state(void)
{
	MPI_T_pvar_session s;
	MPI_T_pvar_handle h;
	int idx, count, v = -1;

	OK(MPI_T_pvar_get_index("mpi_shim_state", MPI_T_PVAR_CLASS_STATE, &idx));
	OK(MPI_T_pvar_session_create(&s));
	OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
	CHECK(count == 1, "count %d", count);
	OK(MPI_T_pvar_read(s, h, &v));
	OK(MPI_T_pvar_session_free(&s));
	CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not set to null");
	return v;
}

static void run_enumerate(int argc, char **argv)
{
	int n;

	t_init();
	enumerate();
	CHECK(mpi_state() == 0, "state before MPI_Init");
	OK(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &check_rank);
	enumerate();
	CHECK(mpi_state() == 1, "state after MPI_Init");
	/* Nested: a second start needs a second end. */
	t_init();
	OK(MPI_T_finalize());
	OK(MPI_T_cvar_get_num(&n));
	OK(MPI_Finalize());
	enumerate();
	CHECK(mpi_state() == 2, "state after MPI_Finalize");
	/* BIP's counters still read after MPI_Finalize. */
	{
		MPI_T_pvar_session s;
		MPI_T_pvar_handle h;
		unsigned long long v = 1;
		int idx, count;

		OK(MPI_T_pvar_get_index("bip_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
		OK(MPI_T_pvar_session_create(&s));
		OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
		OK(MPI_T_pvar_start(s, h));
		OK(MPI_T_pvar_read(s, h, &v));
		CHECK(v == 0, "bytes sent after MPI_Finalize: %llu", v);
		OK(MPI_T_pvar_stop(s, h));
		OK(MPI_T_pvar_session_free(&s));
	}
	OK(MPI_T_finalize());
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
	/* And again, after the last end. */
	t_init();
	enumerate();
	OK(MPI_T_finalize());
}

/* --- counters --- */

static MPI_T_pvar_handle alloc(MPI_T_pvar_session s, const char *name, int cls)
{
	MPI_T_pvar_handle h;
	int idx, count;

	OK(MPI_T_pvar_get_index(name, cls, &idx));
	OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
	CHECK(count == 1, "%s: count %d", name, count);
	return h;
}

static unsigned long long rd(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
	unsigned long long v;

	OK(MPI_T_pvar_read(s, h, &v));
	return v;
}

#define MIB (1 << 20)

static void run_counters(int argc, char **argv)
{
	MPI_T_pvar_session s, s2;
	MPI_T_pvar_handle sent, recvd, other, timer;
	unsigned long long v, v2, w;
	double secs = -1, zero = 0;
	char *buf = malloc(MIB);
	int rank, size;

	CHECK(buf != NULL, "malloc");
	memset(buf, 7, MIB);
	t_init();
	OK(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check_rank = rank;
	CHECK(size == 2, "run on 2 processes");
	OK(MPI_T_pvar_session_create(&s));
	OK(MPI_T_pvar_session_create(&s2));
	sent = alloc(s, "bip_bytes_sent", MPI_T_PVAR_CLASS_COUNTER);
	recvd = alloc(s, "bip_bytes_received", MPI_T_PVAR_CLASS_COUNTER);
	other = alloc(s2, "bip_bytes_sent", MPI_T_PVAR_CLASS_COUNTER);
	timer = alloc(s2, "mpi_shim_wait_time", MPI_T_PVAR_CLASS_TIMER);
	/* Stopped handles count nothing. */
	CHECK(rd(s, sent) == 0 && rd(s, recvd) == 0, "not started, yet counting");

	OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
	OK(MPI_T_pvar_start(s2, other));
	if (rank == 0)
		OK(MPI_Send(buf, MIB, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
	else
		OK(MPI_Recv(buf, MIB, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
	/* The sender's count, and the receiver's. */
	v = rd(s, sent);
	if (rank == 0)
		CHECK(v >= MIB, "sent %llu bytes, at least %d expected", v, MIB);
	else
		CHECK(rd(s, recvd) >= MIB, "received %llu bytes, at least %d expected",
		      rd(s, recvd), MIB);
	/* Stopped: the value stays while more is sent. */
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(rd(s, sent) == v, "a stopped handle changed");
	/* The other session's handle is still counting. */
	if (rank == 0)
		CHECK(rd(s2, other) > v, "the other session: %llu, not above %llu", rd(s2, other), v);

	/* readreset gives the value and zeroes the handle. */
	OK(MPI_T_pvar_readreset(s, sent, &v2));
	CHECK(v2 == v, "readreset read %llu, read gave %llu", v2, v);
	CHECK(rd(s, sent) == 0, "readreset did not reset");
	/* Write and reset, one handle, then every handle of the session. */
	w = 12345;
	OK(MPI_T_pvar_write(s, sent, &w));
	CHECK(rd(s, sent) == 12345, "write: read %llu", rd(s, sent));
	OK(MPI_T_pvar_reset(s, sent));
	CHECK(rd(s, sent) == 0, "reset: read %llu", rd(s, sent));
	OK(MPI_T_pvar_write(s, recvd, &w));
	OK(MPI_T_pvar_write(s, sent, &w));
	OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
	CHECK(rd(s, sent) == 0 && rd(s, recvd) == 0, "reset of every handle");
	/* The reset of one session leaves the other alone. */
	if (rank == 0)
		CHECK(rd(s2, other) >= MIB, "the other session reset");

	/* Started again: counts from its start, on top of what it had. */
	w = 1000;
	OK(MPI_T_pvar_write(s, sent, &w));
	OK(MPI_T_pvar_start(s, sent));
	OK(MPI_T_pvar_start(s, sent)); /* started already: nothing */
	if (rank == 0)
		OK(MPI_Send(buf, MIB, MPI_BYTE, 1, 6, MPI_COMM_WORLD));
	else
		OK(MPI_Recv(buf, MIB, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	v = rd(s, sent);
	if (rank == 0)
		CHECK(v >= 1000 + MIB, "started again: %llu", v);
	else
		CHECK(v >= 1000, "started again: %llu", v);
	OK(MPI_T_pvar_stop(s, sent));

	/* The timer counts a receive that has to wait (rank 1 waits for a
	 * message rank 0 sends after a pause). */
	OK(MPI_T_pvar_read(s2, timer, &secs));
	CHECK(secs == 0, "timer not started, yet %g", secs);
	OK(MPI_T_pvar_start(s2, timer));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		usleep(100000);
		OK(MPI_Send(buf, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
	} else {
		OK(MPI_Recv(buf, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	OK(MPI_T_pvar_stop(s2, timer));
	OK(MPI_T_pvar_read(s2, timer, &secs));
	if (rank == 1)
		CHECK(secs > 0 && isfinite(secs), "no time counted waiting: %g", secs);
	OK(MPI_T_pvar_write(s2, timer, &zero));
	OK(MPI_T_pvar_read(s2, timer, &secs));
	CHECK(secs == 0, "timer written 0, reads %g", secs);

	OK(MPI_T_pvar_handle_free(s, &sent));
	CHECK(sent == MPI_T_PVAR_HANDLE_NULL, "handle not set to null");
	OK(MPI_T_pvar_session_free(&s));
	OK(MPI_T_pvar_session_free(&s2));
	OK(MPI_Finalize());
	OK(MPI_T_finalize());
	free(buf);
}

/* --- unexpected --- */

#define NUNEXP 10

static void run_unexpected(int argc, char **argv)
{
	MPI_T_pvar_session s;
	MPI_T_pvar_handle level, hwm, stopped;
	unsigned long long l, m, frozen;
	int rank, i, x = 0;

	t_init();
	OK(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	check_rank = rank;
	OK(MPI_T_pvar_session_create(&s));
	level = alloc(s, "mpi_shim_unexpected", MPI_T_PVAR_CLASS_LEVEL);
	hwm = alloc(s, "mpi_shim_unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK);
	stopped = alloc(s, "mpi_shim_unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK);
	OK(MPI_T_pvar_start(s, hwm));
	frozen = rd(s, stopped);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		for (i = 0; i < NUNEXP; i++)
			OK(MPI_Send(&i, 1, MPI_INT, 1, i, MPI_COMM_WORLD));
	} else if (rank == 1) {
		/* The last one arrived: all did (one sender, in order), and no
		 * receive was posted for them. */
		OK(MPI_Probe(0, NUNEXP - 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		l = rd(s, level);
		m = rd(s, hwm);
		CHECK(l >= NUNEXP, "queue length %llu, %d messages sent first", l, NUNEXP);
		CHECK(m >= l, "high-water mark %llu below the length %llu", m, l);
		for (i = 0; i < NUNEXP; i++) {
			OK(MPI_Recv(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(x == i, "message %d is %d", i, x);
		}
		CHECK(rd(s, level) <= l - NUNEXP, "queue length %llu after receiving", rd(s, level));
		CHECK(rd(s, hwm) >= m, "the mark fell from %llu to %llu", m, rd(s, hwm));
		CHECK(rd(s, stopped) == frozen, "a stopped mark moved: %llu to %llu", frozen,
		      rd(s, stopped));
		/* Reset: the mark is the length now. */
		OK(MPI_T_pvar_reset(s, hwm));
		l = rd(s, level);
		CHECK(rd(s, hwm) == l, "after reset the mark is %llu, the length %llu",
		      rd(s, hwm), l);
		CHECK(l < NUNEXP, "length %llu", l);
		/* readreset on a continuous read-only variable is refused. */
		EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_readreset(s, level, &l));
	}
	OK(MPI_T_pvar_session_free(&s));
	OK(MPI_Finalize());
	OK(MPI_T_finalize());
}

/* --- cvar --- */

/* The threads of this process. */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL, "no /proc/self/task");
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static MPI_T_cvar_handle cvar(const char *name, int *scope)
{
	MPI_T_cvar_handle h;
	int idx, count;
	MPI_Datatype type;

	OK(MPI_T_cvar_get_index(name, &idx));
	OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, scope));
	CHECK(type == MPI_CHAR, "%s is no string", name);
	OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
	CHECK(count >= 256, "%s: count %d", name, count);
	return h;
}

static void run_cvar(int argc, char **argv)
{
	MPI_T_cvar_handle wait, spin, nic, thread;
	char v[1024];
	const char *env;
	int scope, rank, nthreads;

	t_init();
	wait = cvar("BIP_WAIT", &scope);
	CHECK(scope == MPI_T_SCOPE_LOCAL, "BIP_WAIT: scope %d", scope);
	spin = cvar("BIP_SPIN", &scope);
	nic = cvar("BIP_NIC", &scope);
	CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_CONSTANT, "BIP_NIC: scope %d",
	      scope);
	OK(MPI_T_cvar_write(wait, "yield"));
	OK(MPI_T_cvar_read(wait, v));
	CHECK(!strcmp(v, "yield"), "BIP_WAIT reads \"%s\"", v);
	env = getenv("BIP_WAIT");
	CHECK(env && !strcmp(env, "yield"), "BIP_WAIT not in the environment");
	EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(wait, "bogus"));
	EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(spin, "12x"));
	OK(MPI_T_cvar_write(spin, "100"));
	OK(MPI_T_cvar_write(spin, ""));
	CHECK(!getenv("BIP_SPIN"), "an empty value does not unset");
	OK(MPI_T_cvar_write(spin, "100"));
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(nic, "shm"));
	/* Observable at MPI_Init: BIP starts its progress thread. */
	thread = cvar("BIP_PROGRESS_THREAD", &scope);
	EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(thread, "2"));
	OK(MPI_T_cvar_write(thread, "1"));
	nthreads = threads();

	OK(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	check_rank = rank;
	CHECK(threads() > nthreads, "BIP_PROGRESS_THREAD=1 written, but %d threads, as before",
	      threads());
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(thread, "0"));
	OK(MPI_T_cvar_handle_free(&thread));
	/* MPI_Init started with BIP_WAIT=yield (an unknown value would have
	 * failed it): it reads so, and is fixed from now on. */
	OK(MPI_T_cvar_read(wait, v));
	CHECK(!strcmp(v, "yield"), "BIP_WAIT reads \"%s\" after MPI_Init", v);
	OK(MPI_T_cvar_read(spin, v));
	CHECK(!strcmp(v, "100"), "BIP_SPIN reads \"%s\" after MPI_Init", v);
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(wait, "spin"));
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(spin, "5"));
	OK(MPI_T_cvar_read(wait, v));
	CHECK(!strcmp(v, "yield"), "BIP_WAIT changed to \"%s\"", v);
	/* Messages still flow under the mode written. */
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_T_cvar_handle_free(&wait));
	CHECK(wait == MPI_T_CVAR_HANDLE_NULL, "handle not set to null");
	OK(MPI_Finalize());
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(spin, "5"));
	OK(MPI_T_cvar_handle_free(&spin));
	OK(MPI_T_cvar_handle_free(&nic));
	OK(MPI_T_finalize());
}

/* --- errors --- */

static void run_errors(void)
{
	MPI_T_cvar_handle ch, freed_ch;
	MPI_T_pvar_session s, s2, freed_s;
	MPI_T_pvar_handle h, h2, lvl, freed_h;
	MPI_T_enum en;
	char v[1024], small[4];
	int n, idx, count, len, provided, i;
	unsigned long long u = 1;

	/* Before MPI_T_init_thread. */
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_get_num(&n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_get_num(&n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_index("BIP_WAIT", &n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_session_create(&s));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_changed(&n));
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());

	OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	OK(MPI_T_cvar_get_num(&n));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL,
							    NULL, NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL,
							     NULL, NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_handle_alloc(n, NULL, &ch, &count));
	OK(MPI_T_pvar_get_num(&n));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL,
							    NULL, NULL, NULL, NULL, NULL, NULL));
	OK(MPI_T_category_get_num(&n));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL,
								NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_cvars(-1, 0, NULL));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_pvars(n, 0, NULL));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_categories(n, 0, NULL));
	EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &idx));
	EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("no_such_category", &idx));
	EXPECT(MPI_T_ERR_INVALID_NAME,
	       MPI_T_pvar_get_index("bip_bytes_sent", MPI_T_PVAR_CLASS_TIMER, &idx));

	/* Control-variable handles: freed, and a read-only variable. */
	OK(MPI_T_cvar_get_index("BIP_JOBID", &idx));
	OK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count));
	EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(ch, "x"));
	freed_ch = ch;
	OK(MPI_T_cvar_handle_free(&ch));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(freed_ch, v));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_write(freed_ch, "x"));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&freed_ch));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, v));
	/* The job's secret is never shown. */
	setenv("BIP_SECRET", "00112233445566778899aabbccddeeff", 1);
	OK(MPI_T_cvar_get_index("BIP_SECRET", &idx));
	OK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count));
	strcpy(v, "untouched");
	OK(MPI_T_cvar_read(ch, v));
	CHECK(v[0] == '\0', "BIP_SECRET reads \"%s\"", v);
	OK(MPI_T_cvar_handle_free(&ch));

	/* Sessions and handles. */
	OK(MPI_T_pvar_session_create(&s));
	OK(MPI_T_pvar_session_create(&s2));
	OK(MPI_T_pvar_get_index("bip_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
	EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_handle_alloc(s, -1, NULL, &h, &count));
	OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
	OK(MPI_T_pvar_handle_alloc(s2, idx, NULL, &h2, &count));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, h2, &u)); /* another session's */
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_start(s2, h));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &u));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &u));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &u));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &u));
	freed_h = h;
	OK(MPI_T_pvar_handle_free(s, &h));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, freed_h, &u));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_free(s, &freed_h));
	freed_s = s2;
	OK(MPI_T_pvar_session_free(&s2)); /* frees h2 too */
	EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read(freed_s, h2, &u));
	EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_handle_alloc(freed_s, idx, NULL, &h, &count));
	EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&freed_s));
	EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL,
							   MPI_T_PVAR_ALL_HANDLES));

	/* A continuous, read-only variable. */
	OK(MPI_T_pvar_get_index("mpi_shim_unexpected", MPI_T_PVAR_CLASS_LEVEL, &idx));
	OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &lvl, &count));
	EXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s, lvl));
	EXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_stop(s, lvl));
	EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s, lvl, &u));
	EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(s, lvl));
	EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_readreset(s, lvl, &u));
	OK(MPI_T_pvar_read(s, lvl, &u));
	CHECK(u == 0, "unexpected messages before MPI_Init: %llu", u);
	/* ALL_HANDLES leaves it out. */
	OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
	OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
	OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

	/* Enumerations. */
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_enum_get_info((MPI_T_enum)v, &n, NULL, NULL));
	OK(MPI_T_pvar_get_index("mpi_shim_state", MPI_T_PVAR_CLASS_STATE, &idx));
	OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL, NULL,
			       NULL));
	OK(MPI_T_enum_get_info(en, &n, NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_ITEM, MPI_T_enum_get_item(en, n, &i, NULL, NULL));
	EXPECT(MPI_T_ERR_INVALID_ITEM, MPI_T_enum_get_item(en, -1, &i, NULL, NULL));

	/* Short string buffers: truncated, NUL-terminated, length written. */
	OK(MPI_T_category_get_index("reliability", &idx));
	len = sizeof(small);
	memset(small, 'x', sizeof(small));
	OK(MPI_T_category_get_info(idx, small, &len, NULL, NULL, NULL, NULL, NULL));
	CHECK(len == 4 && !memcmp(small, "rel", 4), "category name \"%.4s\", length %d", small,
	      len);
	len = 1;
	OK(MPI_T_category_get_info(idx, small, &len, NULL, NULL, NULL, NULL, NULL));
	CHECK(len == 1 && small[0] == '\0', "one byte: length %d", len);
	len = 0;
	OK(MPI_T_enum_get_item(en, 0, &i, NULL, &len));
	CHECK(len == (int)sizeof("uninitialized"), "item name length %d", len);
	/* A list shorter than the category: only len written. */
	{
		int nc, list[2] = { -7, -7 };

		OK(MPI_T_category_get_index("bip_wait", &idx));
		OK(MPI_T_category_get_info(idx, NULL, NULL, NULL, NULL, &nc, NULL, NULL));
		CHECK(nc >= 2, "bip_wait has %d control variables", nc);
		OK(MPI_T_category_get_cvars(idx, 1, list));
		CHECK(list[0] >= 0 && list[1] == -7, "wrote past len");
	}
	OK(MPI_T_pvar_session_free(&s));
	OK(MPI_T_finalize());
	EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "enumerate"))
		run_enumerate(argc, argv);
	else if (!strcmp(what, "counters"))
		run_counters(argc, argv);
	else if (!strcmp(what, "unexpected"))
		run_unexpected(argc, argv);
	else if (!strcmp(what, "cvar"))
		run_cvar(argc, argv);
	else if (!strcmp(what, "errors"))
		run_errors();
	else
		CHECK(0, "unknown check \"%s\"", what);
	return 0;
}
