/* SPDX-License-Identifier: MIT */
/*
 * rma.c - one-sided communication: each test below at several process
 * counts, every word of every window checked.
 *
 *   bipload -sz N rma TEST
 *
 * putget   put and get, contiguous and derived types on both sides, fence
 * acc      accumulate (SUM, MAX, REPLACE) and get_accumulate (NO_OP too)
 * fop      N ranks x M fetch_and_op increments of one counter: every
 *          value fetched once, the final value N*M; every window flavour
 * flavors  every synchronisation mode x every window flavour: put,
 *          accumulate and get, every word checked
 * passive  the target computes, then sleeps in MPI_Recv, while the others
 *          lock its window, put, add and read: it is never needed
 *          (create, allocate and shared windows of one host; skipped
 *          where the memory model is separate)
 * cas      a ticket lock built on compare_and_swap guards a plain counter
 * lock     exclusive and shared locks, flush, lock_all
 * pscw     post/start/complete/wait and Win_test
 * dynamic  create_dynamic, attach, put and get at addresses, detach
 * shared   allocate_shared and shared_query: loads of the others' parts
 * rreq     MPI_Rput, Rget, Raccumulate, Rget_accumulate
 * attrs    attributes, group, name, info, error handlers
 * errors   every misuse gets its class and nothing is written
 * pairs    MAXLOC and MINLOC on the pair types (MPI_DOUBLE_INT, MPI_2INT,
 *          MPI_SHORT_INT with its hole), predefined and derived
 * edges    MPI_PROC_NULL in request-based calls, target types of size 0,
 *          an access across adjacent attached regions, the request of a
 *          refused call
 * keyvals  window keys: set, get, replace, delete, the callbacks, free,
 *          MPI_WIN_NULL_COPY_FN/DUP_FN/NULL_DELETE_FN, misuse
 * types    many derived target types, used in turn: every word checked
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bip.h>
#include <mpi.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, \
				__LINE__);                                  \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			if (++failures > 20)                                \
				MPI_Abort(MPI_COMM_WORLD, 1);               \
		}                                                           \
	} while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)
#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		CHECK(rc_ == (cls), "%s returned %d, want %s (%d)", #call, rc_, #cls, cls);  \
	} while (0)

#define N 64

static void test_putget(void)
{
	int *base, i, r, right = (rank + 1) % size, left = (rank + size - 1) % size;
	int got[N], mine[N];
	MPI_Datatype vec;
	MPI_Win win;

	OK(MPI_Win_allocate(3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
			    &base, &win));
	for (i = 0; i < 3 * N; i++)
		base[i] = -1;
	for (i = 0; i < N; i++)
		mine[i] = rank * 1000 + i;
	/* every other int: N/2 elements, stride 2 */
	OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec));
	OK(MPI_Type_commit(&vec));
	OK(MPI_Win_fence(0, win));
	/* contiguous to contiguous, into [0, N) of the right neighbour */
	OK(MPI_Put(mine, N, MPI_INT, right, 0, N, MPI_INT, win));
	/* contiguous origin, strided target: [N, 2N) even slots */
	OK(MPI_Put(mine, N / 2, MPI_INT, right, N, 1, vec, win));
	/* strided origin, contiguous target: [2N, 2N + N/2) */
	OK(MPI_Put(mine, 1, vec, right, 2 * N, N / 2, MPI_INT, win));
	OK(MPI_Win_fence(0, win));
	for (i = 0; i < N; i++)
		CHECK(base[i] == left * 1000 + i, "put: word %d is %d", i, base[i]);
	for (i = 0; i < N; i++)
		CHECK(base[N + i] == (i % 2 ? -1 : left * 1000 + i / 2), "vector put: word %d is %d",
		      N + i, base[N + i]);
	for (i = 0; i < N; i++)
		CHECK(base[2 * N + i] == (i < N / 2 ? left * 1000 + 2 * i : -1),
		      "put of a vector: word %d is %d", 2 * N + i, base[2 * N + i]);
	/* every rank gets every other rank's first block */
	for (r = 0; r < size; r++) {
		memset(got, 0, sizeof(got));
		OK(MPI_Win_fence(0, win));
		OK(MPI_Get(got, N, MPI_INT, r, 0, N, MPI_INT, win));
		OK(MPI_Win_fence(0, win));
		for (i = 0; i < N; i++)
			CHECK(got[i] == ((r + size - 1) % size) * 1000 + i, "get from %d: word %d is %d",
			      r, i, got[i]);
		memset(got, 0, sizeof(got));
		OK(MPI_Win_fence(0, win));
		OK(MPI_Get(got, 1, vec, r, N, 1, vec, win));
		OK(MPI_Win_fence(0, win));
		for (i = 0; i < N; i++)
			CHECK(got[i] == (i % 2 || i >= N ? 0 : ((r + size - 1) % size) * 1000 + i / 2),
			      "vector get from %d: word %d is %d", r, i, got[i]);
	}
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	OK(MPI_Type_free(&vec));
	OK(MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
}

static void test_acc(void)
{
	long buf[N], one[N], res[N];
	int i, r;
	MPI_Win win;

	for (i = 0; i < N; i++) {
		buf[i] = 0;
		one[i] = rank + 1;
	}
	OK(MPI_Win_create(buf, sizeof(buf), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_fence(0, win));
	for (r = 0; r < size; r++)
		OK(MPI_Accumulate(one, N, MPI_LONG, r, 0, N, MPI_LONG, MPI_SUM, win));
	OK(MPI_Win_fence(0, win));
	for (i = 0; i < N; i++)
		CHECK(buf[i] == (long)size * (size + 1) / 2, "sum: word %d is %ld", i, buf[i]);
	OK(MPI_Win_fence(0, win));
	OK(MPI_Accumulate(one, N / 2, MPI_LONG, 0, 0, N / 2, MPI_LONG, MPI_MAX, win));
	OK(MPI_Win_fence(0, win));
	if (rank == 0)
		for (i = 0; i < N / 2; i++)
			CHECK(buf[i] == (size > (long)size * (size + 1) / 2 ? size :
									    (long)size * (size + 1) / 2),
			      "max: word %d is %ld", i, buf[i]);
	OK(MPI_Win_fence(0, win));
	if (rank == size - 1)
		for (r = 0; r < size; r++)
			OK(MPI_Accumulate(one, N, MPI_LONG, r, 0, N, MPI_LONG, MPI_REPLACE, win));
	OK(MPI_Win_fence(0, win));
	for (i = 0; i < N; i++)
		CHECK(buf[i] == size, "replace: word %d is %ld", i, buf[i]);
	/* get_accumulate: the old values come back, the sum is applied */
	OK(MPI_Win_fence(0, win));
	if (rank == 0)
		for (r = 0; r < size; r++) {
			OK(MPI_Get_accumulate(one, N, MPI_LONG, res, N, MPI_LONG, r, 0, N, MPI_LONG,
					      MPI_SUM, win));
			OK(MPI_Win_fence(0, win));
			for (i = 0; i < N; i++)
				CHECK(res[i] == size, "get_accumulate: old word %d is %ld", i, res[i]);
		}
	else
		for (r = 0; r < size; r++)
			OK(MPI_Win_fence(0, win));
	for (i = 0; i < N; i++)
		CHECK(buf[i] == size + 1, "get_accumulate: word %d is %ld", i, buf[i]);
	OK(MPI_Win_fence(0, win));
	OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, res, N, MPI_LONG, (rank + 1) % size, 0,
			      N, MPI_LONG, MPI_NO_OP, win));
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	for (i = 0; i < N; i++)
		CHECK(res[i] == size + 1 && buf[i] == size + 1, "no_op: word %d is %ld, %ld", i,
		      res[i], buf[i]);
	OK(MPI_Win_free(&win));
}

/* The window flavours, made alike for the tests that sweep them. */
enum { FL_CREATE, FL_ALLOCATE, FL_SHARED, FL_DYNAMIC, FL_COUNT };
static const char *const fl_name[FL_COUNT] = { "create", "allocate", "shared", "dynamic" };

struct twin {
	MPI_Win win;
	void *base;      /* this rank's memory */
	void *own;       /* malloc'd for create and dynamic */
	MPI_Aint *addr;  /* dynamic: every rank's address */
	int flavor;
};

/* A window of bytes bytes per rank, zeroed, of flavour fl: 1, or 0 when
 * this machine cannot make it (a shared window across hosts). */
static int twin_make(int fl, size_t bytes, int disp_unit, struct twin *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->flavor = fl;
	switch (fl) {
	case FL_CREATE:
		t->own = t->base = calloc(1, bytes);
		OK(MPI_Win_create(t->base, (MPI_Aint)bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD,
				  &t->win));
		break;
	case FL_ALLOCATE:
		OK(MPI_Win_allocate((MPI_Aint)bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD,
				    &t->base, &t->win));
		memset(t->base, 0, bytes);
		break;
	case FL_SHARED:
		rc = MPI_Win_allocate_shared((MPI_Aint)bytes, disp_unit, MPI_INFO_NULL,
					     MPI_COMM_WORLD, &t->base, &t->win);
		if (rc != MPI_SUCCESS) {
			int cls;

			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared: class %d", cls);
			return 0;
		}
		memset(t->base, 0, bytes);
		break;
	default: {
		MPI_Aint me;

		t->own = t->base = calloc(1, bytes);
		t->addr = malloc(sizeof(MPI_Aint) * (size_t)size);
		OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &t->win));
		OK(MPI_Win_attach(t->win, t->base, (MPI_Aint)bytes));
		OK(MPI_Get_address(t->base, &me));
		OK(MPI_Allgather(&me, 1, MPI_AINT, t->addr, 1, MPI_AINT, MPI_COMM_WORLD));
		break;
	}
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	return 1;
}

/* The displacement of element idx (of size unit) of target's memory. */
static MPI_Aint twin_disp(const struct twin *t, int target, int idx, size_t unit)
{
	if (t->flavor == FL_DYNAMIC)
		return MPI_Aint_add(t->addr[target], (MPI_Aint)((size_t)idx * unit));
	return idx;
}

static void twin_free(struct twin *t)
{
	if (t->flavor == FL_DYNAMIC)
		OK(MPI_Win_detach(t->win, t->base));
	OK(MPI_Win_free(&t->win));
	free(t->own);
	free(t->addr);
}

static void test_fop(void)
{
	enum { M = 200 };
	long one = 1, old, *seen = NULL, *all = NULL, *counter;
	int i, fl;
	struct twin t;

	seen = malloc(M * sizeof(long));
	for (fl = 0; fl < FL_COUNT; fl++) {
		if (!twin_make(fl, sizeof(long), sizeof(long), &t))
			continue;
		counter = t.base;
		OK(MPI_Win_lock_all(0, t.win));
		for (i = 0; i < M; i++) {
			OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, twin_disp(&t, 0, 0, sizeof(long)),
					    MPI_SUM, t.win));
			OK(MPI_Win_flush(0, t.win));
			seen[i] = old;
		}
		OK(MPI_Win_unlock_all(t.win));
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0) {
			char *hit = calloc((size_t)size * M, 1);

			all = malloc((size_t)size * M * sizeof(long));
			CHECK(*counter == (long)size * M, "%s: counter is %ld, want %ld",
			      fl_name[fl], *counter, (long)size * M);
			MPI_Gather(seen, M, MPI_LONG, all, M, MPI_LONG, 0, MPI_COMM_WORLD);
			for (i = 0; i < size * M; i++) {
				CHECK(all[i] >= 0 && all[i] < (long)size * M && !hit[all[i]],
				      "%s: value %ld fetched twice or out of range", fl_name[fl],
				      all[i]);
				if (all[i] >= 0 && all[i] < (long)size * M)
					hit[all[i]] = 1;
			}
			free(hit);
			free(all);
		} else {
			MPI_Gather(seen, M, MPI_LONG, NULL, M, MPI_LONG, 0, MPI_COMM_WORLD);
		}
		twin_free(&t);
	}
	free(seen);
}

/*
 * Every synchronisation mode on every window flavour: each rank puts K
 * words into its own slot of every rank's window, adds 1 to every rank's
 * counter, then reads its right neighbour's slot back from every rank;
 * every word of every window checked after each epoch.
 */
enum { SY_FENCE, SY_PSCW, SY_EXCL, SY_SHARED, SY_ALL, SY_ALL_NOCHECK, SY_COUNT };
static const char *const sy_name[SY_COUNT] = { "fence", "pscw", "lock exclusive", "lock shared",
					       "lock_all", "lock_all nocheck" };

static void sync_open(int sy, struct twin *t, MPI_Group world, int target)
{
	switch (sy) {
	case SY_FENCE:
		if (target == 0)
			OK(MPI_Win_fence(0, t->win));
		break;
	case SY_PSCW:
		if (target == 0) {
			OK(MPI_Win_post(world, 0, t->win));
			OK(MPI_Win_start(world, 0, t->win));
		}
		break;
	case SY_EXCL:
	case SY_SHARED:
		OK(MPI_Win_lock(sy == SY_EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target, 0,
				t->win));
		break;
	default:
		if (target == 0)
			OK(MPI_Win_lock_all(sy == SY_ALL_NOCHECK ? MPI_MODE_NOCHECK : 0, t->win));
		break;
	}
}

static void sync_close(int sy, struct twin *t, int target)
{
	switch (sy) {
	case SY_FENCE:
		if (target == size - 1)
			OK(MPI_Win_fence(0, t->win));
		break;
	case SY_PSCW:
		if (target == size - 1) {
			OK(MPI_Win_complete(t->win));
			OK(MPI_Win_wait(t->win));
		}
		break;
	case SY_EXCL:
	case SY_SHARED:
		OK(MPI_Win_unlock(target, t->win));
		break;
	default:
		if (target == size - 1)
			OK(MPI_Win_unlock_all(t->win));
		break;
	}
}

static void test_flavors(void)
{
	enum { K = 16 };
	int fl, sy, r, i, seed = 0, right = (rank + 1) % size;
	int mine[K], *got = malloc(sizeof(int) * (size_t)size * K), one = 1;
	MPI_Group world;
	struct twin t;

	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	for (fl = 0; fl < FL_COUNT; fl++) {
		/* K words per rank, then the counter */
		if (!twin_make(fl, ((size_t)size * K + 1) * sizeof(int), sizeof(int), &t))
			continue;
		for (sy = 0; sy < SY_COUNT; sy++) {
			int *w = t.base;

			seed++;
			for (i = 0; i < size * K + 1; i++)
				w[i] = -1;
			w[size * K] = 0;
			for (i = 0; i < K; i++)
				mine[i] = seed * 100000 + rank * 100 + i;
			OK(MPI_Barrier(MPI_COMM_WORLD));
			for (r = 0; r < size; r++) {
				sync_open(sy, &t, world, r);
				OK(MPI_Put(mine, K, MPI_INT, r, twin_disp(&t, r, rank * K, sizeof(int)),
					   K, MPI_INT, t.win));
				OK(MPI_Accumulate(&one, 1, MPI_INT, r,
						  twin_disp(&t, r, size * K, sizeof(int)), 1, MPI_INT,
						  MPI_SUM, t.win));
				sync_close(sy, &t, r);
			}
			OK(MPI_Barrier(MPI_COMM_WORLD));
			for (r = 0; r < size; r++)
				for (i = 0; i < K; i++)
					CHECK(w[r * K + i] == seed * 100000 + r * 100 + i,
					      "%s, %s: word %d is %d", fl_name[fl], sy_name[sy],
					      r * K + i, w[r * K + i]);
			CHECK(w[size * K] == size, "%s, %s: counter is %d, want %d", fl_name[fl],
			      sy_name[sy], w[size * K], size);
			OK(MPI_Barrier(MPI_COMM_WORLD));
			memset(got, 0, sizeof(int) * (size_t)size * K);
			for (r = 0; r < size; r++) {
				sync_open(sy, &t, world, r);
				OK(MPI_Get(got + r * K, K, MPI_INT, r,
					   twin_disp(&t, r, right * K, sizeof(int)), K, MPI_INT, t.win));
				sync_close(sy, &t, r);
			}
			for (r = 0; r < size; r++)
				for (i = 0; i < K; i++)
					CHECK(got[r * K + i] == seed * 100000 + right * 100 + i,
					      "%s, %s: get from %d: word %d is %d", fl_name[fl],
					      sy_name[sy], r, i, got[r * K + i]);
			OK(MPI_Barrier(MPI_COMM_WORLD));
		}
		twin_free(&t);
	}
	OK(MPI_Group_free(&world));
	free(got);
}

/*
 * A passive target is never needed.  Rank 0 computes without calling
 * anything that makes progress (it only loads a word of its window and
 * calls MPI_Win_sync) while the others lock its window, put, add to a
 * counter and unlock: it sees their data (with messages, this would wait
 * for ever).  Then it waits in MPI_Recv (asleep there under BIP_WAIT=
 * block) while they do it again and read it back, and only then send it
 * one message: it was woken a few times at most (bip_get_counters),
 * where every operation of a window of messages would wake it.  Only for a window whose memory is shared
 * (MPI_WIN_UNIFIED here); the messages of a separate window need the
 * target.
 */
#define PASSIVE_OPS 100

static void test_passive_on(int fl)
{
	enum { K = 32 };
	int *w, *model, flag, i, r, round, one = 1, mine[K], got[K];
	struct bip_counters c0, c1;
	struct twin t;
	MPI_Win win;

	if (!twin_make(fl, (size_t)(size * K + 1) * sizeof(int), sizeof(int), &t))
		return;
	w = t.base;
	win = t.win;
	OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
	if (!flag || *model != MPI_WIN_UNIFIED) {
		if (rank == 0)
			printf("SKIP: %s: the window's memory model is separate here\n",
			       fl_name[fl]);
		twin_free(&t);
		return;
	}
	for (round = 0; round < 2; round++) {
		int reps = round ? PASSIVE_OPS : 1;

		for (i = 0; i < size * K + 1; i++)
			w[i] = 0;
		for (i = 0; i < K; i++)
			mine[i] = round * 1000 + rank * 100 + i + 1;
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0) {
			if (round == 0) {
				/* Computing: no call that makes progress. */
				while (__atomic_load_n(&w[size * K], __ATOMIC_ACQUIRE) != size - 1)
					MPI_Win_sync(win);
			} else {
				MPI_Status st;
				int msg = 0;

				bip_get_counters(&c0);
				OK(MPI_Recv(&msg, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &st));
				bip_get_counters(&c1);
				CHECK(msg == 42, "the message is %d", msg);
				/* Asleep (BIP_WAIT=block) during the others'
				 * PASSIVE_OPS epochs of 4 operations each, it was
				 * woken a few times: by that message, and by the
				 * drivers' own control messages (shm's fast-box grants
				 * and revokes, the reliability layer's acknowledgements
				 * and repairs on a faulty wire), never by an
				 * operation, each of which would wake it with
				 * messages: fewer than one per 20 operations. */
				CHECK((c1.wakeups - c0.wakeups) * 20 < (uint64_t)(size - 1) * PASSIVE_OPS * 4,
				      "%s: the target was woken %llu times in %llu sleeps during %d "
				      "operations", fl_name[fl],
				      (unsigned long long)(c1.wakeups - c0.wakeups),
				      (unsigned long long)(c1.sleeps - c0.sleeps),
				      (size - 1) * PASSIVE_OPS * 4);
				for (r = 1; r < size; r++)
					OK(MPI_Send(&msg, 1, MPI_INT, r, 8, MPI_COMM_WORLD));
			}
			MPI_Win_sync(win);
			for (r = 1; r < size; r++)
				for (i = 0; i < K; i++)
					CHECK(w[r * K + i] == round * 1000 + r * 100 + i + 1,
					      "round %d: word %d is %d", round, r * K + i,
					      w[r * K + i]);
			CHECK(w[size * K] == (size - 1) * reps, "round %d: counter %d", round,
			      w[size * K]);
		} else {
			for (i = 0; i < reps; i++) {
				OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
				OK(MPI_Put(mine, K, MPI_INT, 0, rank * K, K, MPI_INT, win));
				OK(MPI_Win_flush(0, win));
				OK(MPI_Accumulate(&one, 1, MPI_INT, 0, size * K, 1, MPI_INT, MPI_SUM,
						  win));
				OK(MPI_Win_unlock(0, win));
			}
			if (round == 1) {
				/* Read it back; when every origin has, rank 1 wakes the
				 * target. */
				OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
				OK(MPI_Get(got, K, MPI_INT, 0, rank * K, K, MPI_INT, win));
				OK(MPI_Win_unlock(0, win));
				for (i = 0; i < K; i++)
					CHECK(got[i] == mine[i], "read back: word %d is %d", i,
					      got[i]);
				do {
					OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
					OK(MPI_Get(&flag, 1, MPI_INT, 0, size * K, 1, MPI_INT, win));
					OK(MPI_Win_unlock(0, win));
				} while (flag != (size - 1) * reps);
				if (rank == 1) {
					int msg = 42;

					OK(MPI_Send(&msg, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
				}
				OK(MPI_Recv(&flag, 1, MPI_INT, 0, 8, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE));
			}
		}
		OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	twin_free(&t);
}

static void test_passive(void)
{
	if (size < 2)
		return;
	test_passive_on(FL_CREATE);
	test_passive_on(FL_ALLOCATE);
	test_passive_on(FL_SHARED);
}

static void test_cas(void)
{
	enum { M = 50 };
	/* [0] the lock word (-1: free, else the holder), [1] the counter */
	int *w, i, me = rank, nobody = -1, old, val;
	MPI_Win win;

	OK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
	w[0] = -1;
	w[1] = 0;
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_lock_all(0, win));
	for (i = 0; i < M; i++) {
		do {
			OK(MPI_Compare_and_swap(&me, &nobody, &old, MPI_INT, 0, 0, win));
			OK(MPI_Win_flush(0, win));
		} while (old != -1);
		/* in the critical section: a read-modify-write by get and put */
		OK(MPI_Get(&val, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
		OK(MPI_Win_flush(0, win));
		val++;
		OK(MPI_Put(&val, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
		OK(MPI_Win_flush(0, win));
		OK(MPI_Compare_and_swap(&nobody, &me, &old, MPI_INT, 0, 0, win));
		OK(MPI_Win_flush(0, win));
		CHECK(old == me, "the lock word was %d while held by %d", old, me);
	}
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(w[0] == -1 && w[1] == size * M, "lock word %d, counter %d (want %d)", w[0],
		      w[1], size * M);
	OK(MPI_Win_free(&win));
}

static void test_lock(void)
{
	int *base, i, r, got[N], mine[N];
	MPI_Win win;

	OK(MPI_Win_allocate((MPI_Aint)size * N * sizeof(int), sizeof(int), MPI_INFO_NULL,
			    MPI_COMM_WORLD, &base, &win));
	for (i = 0; i < size * N; i++)
		base[i] = 0;
	for (i = 0; i < N; i++)
		mine[i] = rank * 100 + i;
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (r = 0; r < size; r++) {
		OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
		OK(MPI_Put(mine, N, MPI_INT, r, rank * N, N, MPI_INT, win));
		OK(MPI_Win_unlock(r, win));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (r = 0; r < size; r++)
		for (i = 0; i < N; i++)
			CHECK(base[r * N + i] == r * 100 + i, "exclusive: word %d is %d", r * N + i,
			      base[r * N + i]);
	for (r = 0; r < size; r++) {
		OK(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
		OK(MPI_Get(got, N, MPI_INT, r, ((rank + 1) % size) * N, N, MPI_INT, win));
		OK(MPI_Win_flush(r, win));
		for (i = 0; i < N; i++)
			CHECK(got[i] == ((rank + 1) % size) * 100 + i, "shared get from %d: %d is %d",
			      r, i, got[i]);
		OK(MPI_Win_unlock(r, win));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_free(&win));
}

static void test_pscw(void)
{
	int *base, i, round, r, got;
	MPI_Group world, peers;
	int ranks[64], n = 0;
	MPI_Win win;

	OK(MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			    &win));
	for (i = 0; i < size; i++)
		base[i] = -1;
	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	for (r = 0; r < size; r++)
		ranks[n++] = r;
	OK(MPI_Group_incl(world, n, ranks, &peers));
	for (round = 0; round < 3; round++) {
		int flag = 0;

		OK(MPI_Win_post(peers, 0, win));
		OK(MPI_Win_start(peers, 0, win));
		for (r = 0; r < size; r++)
			OK(MPI_Put(&round, 1, MPI_INT, r, rank, 1, MPI_INT, win));
		OK(MPI_Win_complete(win));
		if (round == 1)
			while (!flag)
				OK(MPI_Win_test(win, &flag));
		else
			OK(MPI_Win_wait(win));
		for (i = 0; i < size; i++)
			CHECK(base[i] == round, "round %d: word %d is %d", round, i, base[i]);
		OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	/* the even ranks read from the odd ones */
	OK(MPI_Group_free(&peers));
	if (rank % 2 == 0 && rank + 1 < size) {
		r = rank + 1;
		OK(MPI_Group_incl(world, 1, &r, &peers));
		OK(MPI_Win_start(peers, 0, win));
		OK(MPI_Get(&got, 1, MPI_INT, r, 0, 1, MPI_INT, win));
		OK(MPI_Win_complete(win));
		CHECK(got == 2, "get in pscw: %d", got);
		OK(MPI_Group_free(&peers));
	} else if (rank % 2 == 1) {
		r = rank - 1;
		OK(MPI_Group_incl(world, 1, &r, &peers));
		OK(MPI_Win_post(peers, 0, win));
		OK(MPI_Win_wait(win));
		OK(MPI_Group_free(&peers));
	}
	OK(MPI_Group_free(&world));
	OK(MPI_Win_free(&win));
}

static void test_dynamic(void)
{
	int *mem = malloc(N * sizeof(int)), i, got[N], mine[N], right = (rank + 1) % size;
	MPI_Aint mine_addr, *addrs = malloc(size * sizeof(MPI_Aint));
	MPI_Win win;

	for (i = 0; i < N; i++) {
		mem[i] = 0;
		mine[i] = rank + i;
	}
	OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_attach(win, mem, N * sizeof(int)));
	OK(MPI_Get_address(mem, &mine_addr));
	OK(MPI_Allgather(&mine_addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
	OK(MPI_Win_fence(0, win));
	OK(MPI_Put(mine, N, MPI_INT, right, addrs[right], N, MPI_INT, win));
	OK(MPI_Win_fence(0, win));
	for (i = 0; i < N; i++)
		CHECK(mem[i] == (rank + size - 1) % size + i, "dynamic put: word %d is %d", i, mem[i]);
	OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	OK(MPI_Get(got, N, MPI_INT, right, addrs[right], N, MPI_INT, win));
	OK(MPI_Win_unlock(right, win));
	for (i = 0; i < N; i++)
		CHECK(got[i] == rank + i, "dynamic get: word %d is %d", i, got[i]);
	/* one int past the attached memory: the target refuses it */
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	OK(MPI_Put(mine, 2, MPI_INT, right, addrs[right] + (N - 1) * sizeof(int), 2, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Win_unlock(right, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(mem[N - 1] == (rank + size - 1) % size + N - 1, "the refused put wrote %d",
	      mem[N - 1]);
	OK(MPI_Win_fence(0, win));
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	OK(MPI_Win_detach(win, mem));
	EXPECT(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, mem));
	OK(MPI_Win_free(&win));
	free(mem);
	free(addrs);
}

static void test_shared(void)
{
	MPI_Comm node;
	int *mine, *theirs, nr, ns, r, du, i;
	MPI_Aint sz;
	MPI_Win win;

	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
	MPI_Comm_rank(node, &nr);
	MPI_Comm_size(node, &ns);
	OK(MPI_Win_allocate_shared((nr + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
				   &win));
	for (i = 0; i <= nr; i++)
		mine[i] = nr * 10 + i;
	OK(MPI_Win_sync(win));
	OK(MPI_Barrier(node));
	for (r = 0; r < ns; r++) {
		OK(MPI_Win_shared_query(win, r, &sz, &du, &theirs));
		CHECK(sz == (MPI_Aint)((r + 1) * sizeof(int)) && du == sizeof(int),
		      "rank %d: size %td, disp_unit %d", r, sz, du);
		for (i = 0; i <= r; i++)
			CHECK(theirs[i] == r * 10 + i, "rank %d's word %d is %d", r, i, theirs[i]);
	}
	/* the same memory through put and get */
	OK(MPI_Win_fence(0, win));
	if (nr == 0)
		for (r = 0; r < ns; r++)
			OK(MPI_Put(&r, 1, MPI_INT, r, 0, 1, MPI_INT, win));
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHECK(mine[0] == nr, "put into the shared window: %d", mine[0]);
	OK(MPI_Win_free(&win));
	OK(MPI_Comm_free(&node));
}

static void test_rreq(void)
{
	long *base, v[N], got[N], res[N];
	MPI_Request reqs[4];
	int i, right = (rank + 1) % size;
	MPI_Win win;

	OK(MPI_Win_allocate(2 * N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
			    &base, &win));
	for (i = 0; i < 2 * N; i++)
		base[i] = 0;
	for (i = 0; i < N; i++)
		v[i] = rank * 7 + i;
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_lock_all(0, win));
	OK(MPI_Rput(v, N, MPI_LONG, right, 0, N, MPI_LONG, win, &reqs[0]));
	OK(MPI_Raccumulate(v, N, MPI_LONG, right, N, N, MPI_LONG, MPI_SUM, win, &reqs[1]));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	OK(MPI_Rget(got, N, MPI_LONG, right, 0, N, MPI_LONG, win, &reqs[2]));
	OK(MPI_Rget_accumulate(v, N, MPI_LONG, res, N, MPI_LONG, right, N, N, MPI_LONG, MPI_SUM,
			       win, &reqs[3]));
	OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
	OK(MPI_Wait(&reqs[3], MPI_STATUS_IGNORE));
	for (i = 0; i < N; i++)
		CHECK(got[i] == rank * 7 + i && res[i] == rank * 7 + i, "rget %ld, rget_acc %ld", got[i],
		      res[i]);
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < N; i++)
		CHECK(base[N + i] == 2 * (((rank + size - 1) % size) * 7 + i), "raccumulate: %ld",
		      base[N + i]);
	OK(MPI_Win_free(&win));
}

static int handler_calls, handler_code;

static void win_handler(MPI_Win *win, int *code, ...)
{
	(void)win;
	handler_calls++;
	handler_code = *code;
}

static void test_attrs(void)
{
	int buf[4], *v, flag, len, cmp;
	void *b;
	char name[MPI_MAX_OBJECT_NAME];
	MPI_Aint *sz;
	MPI_Group g, wg;
	MPI_Errhandler eh, got;
	MPI_Info info;
	MPI_Win win;

	OK(MPI_Win_create(buf, sizeof(buf), 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
	CHECK(flag && b == buf, "MPI_WIN_BASE");
	OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
	CHECK(flag && *sz == sizeof(buf), "MPI_WIN_SIZE %td", *sz);
	OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
	CHECK(flag && *v == 2, "MPI_WIN_DISP_UNIT %d", *v);
	OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
	CHECK(flag && *v == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR %d", *v);
	OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
	CHECK(flag && (*v == MPI_WIN_UNIFIED || *v == MPI_WIN_SEPARATE), "MPI_WIN_MODEL %d", *v);
	{
		/* Each window's values are its own: reading a second window's
		 * attributes leaves the first one's alone. */
		MPI_Win w2;
		MPI_Aint *sz2;
		int *du, *du2, *fl2;

		OK(MPI_Win_create(buf, 2, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w2));
		OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
		OK(MPI_Win_get_attr(w2, MPI_WIN_SIZE, &sz2, &flag));
		OK(MPI_Win_get_attr(w2, MPI_WIN_DISP_UNIT, &du2, &flag));
		OK(MPI_Win_get_attr(w2, MPI_WIN_CREATE_FLAVOR, &fl2, &flag));
		CHECK(*sz == sizeof(buf) && *sz2 == 2, "sizes %td and %td", *sz, *sz2);
		CHECK(*du == 2 && *du2 == 1, "disp_units %d and %d", *du, *du2);
		CHECK(*fl2 == MPI_WIN_FLAVOR_CREATE, "flavor %d", *fl2);
		OK(MPI_Win_free(&w2));
		OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
		EXPECT(MPI_ERR_KEYVAL, MPI_Win_get_attr(win, MPI_TAG_UB, &v, &flag));
		OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
	}
	OK(MPI_Win_get_group(win, &g));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	OK(MPI_Group_compare(g, wg, &cmp));
	CHECK(cmp == MPI_IDENT, "the window's group is not the world's");
	OK(MPI_Group_free(&g));
	OK(MPI_Group_free(&wg));
	OK(MPI_Win_get_name(win, name, &len));
	CHECK(len == 0, "a new window has a name");
	OK(MPI_Win_set_name(win, "halo"));
	OK(MPI_Win_get_name(win, name, &len));
	CHECK(len == 4 && !strcmp(name, "halo"), "name %s", name);
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "no_locks", "true"));
	OK(MPI_Win_set_info(win, info));
	OK(MPI_Info_free(&info));
	OK(MPI_Win_get_info(win, &info));
	OK(MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, name, &flag));
	CHECK(flag && !strcmp(name, "true"), "info no_locks");
	OK(MPI_Info_free(&info));
	OK(MPI_Win_get_errhandler(win, &got));
	CHECK(got == MPI_ERRORS_ARE_FATAL, "a new window's handler is not MPI_ERRORS_ARE_FATAL");
	OK(MPI_Win_create_errhandler(win_handler, &eh));
	OK(MPI_Win_set_errhandler(win, eh));
	OK(MPI_Errhandler_free(&eh));
	OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
	CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "call_errhandler");
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
	CHECK(handler_calls == 2 && handler_code == MPI_ERR_RMA_SYNC, "the handler was not called");
	OK(MPI_Win_free(&win));
}

/*
 * Edges that MPICH's suite found: request-based calls to MPI_PROC_NULL
 * inside a lock on MPI_PROC_NULL; accumulates with a target type of size
 * 0; one access across two attached regions side by side in a dynamic
 * window (and one past them refused, nothing written); the request of a
 * refused call is MPI_REQUEST_NULL.
 */
static void test_edges(void)
{
	enum { H = 16 };
	int i, v[4] = { 1, 2, 3, 4 }, got[4], *mem, *base, right = (rank + 1) % size;
	int span[2 * H], rc;
	MPI_Aint addr, *addrs;
	MPI_Datatype empty;
	MPI_Request rq[4];
	MPI_Win win;

	OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			    &win));
	for (i = 0; i < 4; i++)
		base[i] = -1;
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_lock(MPI_LOCK_SHARED, MPI_PROC_NULL, 0, win));
	OK(MPI_Rput(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rq[0]));
	OK(MPI_Rget(got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rq[1]));
	OK(MPI_Raccumulate(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win, &rq[2]));
	OK(MPI_Rget_accumulate(v, 1, MPI_INT, got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM,
			       win, &rq[3]));
	OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
	OK(MPI_Win_unlock(MPI_PROC_NULL, win));
	/* A refused request-based call: its request is MPI_REQUEST_NULL. */
	rq[0] = (MPI_Request)(uintptr_t)1;
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]));
	CHECK(rq[0] == MPI_REQUEST_NULL, "a refused MPI_Rput left its request set");
	/* A target type of size 0: nothing moves, nothing is refused. */
	OK(MPI_Type_contiguous(0, MPI_INT, &empty));
	OK(MPI_Type_commit(&empty));
	OK(MPI_Win_lock_all(0, win));
	OK(MPI_Accumulate(v, 0, MPI_INT, right, 0, 1, empty, MPI_SUM, win));
	OK(MPI_Accumulate(v, 1, empty, right, 0, 1, empty, MPI_SUM, win));
	OK(MPI_Get_accumulate(v, 1, empty, got, 1, empty, right, 0, 1, empty, MPI_SUM, win));
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Type_free(&empty));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < 4; i++)
		CHECK(base[i] == -1, "word %d is %d after operations of no data", i, base[i]);
	OK(MPI_Win_free(&win));

	/* Two regions side by side, attached one by one. */
	mem = malloc(2 * H * sizeof(int));
	addrs = malloc(sizeof(MPI_Aint) * (size_t)size);
	for (i = 0; i < 2 * H; i++) {
		mem[i] = -1;
		span[i] = rank * 1000 + i;
	}
	OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	OK(MPI_Win_attach(win, mem, H * sizeof(int)));
	OK(MPI_Win_attach(win, mem + H, H * sizeof(int)));
	OK(MPI_Get_address(mem, &addr));
	OK(MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
	OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	OK(MPI_Put(span + 2, H, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), H,
		   MPI_INT, win));
	OK(MPI_Win_unlock(right, win));
	/* One int past the second region: refused, nothing written. */
	OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	rc = MPI_Put(span, 2, MPI_INT, right, MPI_Aint_add(addrs[right], (2 * H - 1) * sizeof(int)),
		     2, MPI_INT, win);
	if (rc == MPI_SUCCESS)
		rc = MPI_Win_unlock(right, win);
	else
		OK(MPI_Win_unlock(right, win));
	EXPECT(MPI_ERR_RMA_RANGE, rc);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < 2 * H; i++) {
		int left = (rank + size - 1) % size;
		int want = i >= 2 && i < 2 + H ? left * 1000 + i : -1;

		CHECK(mem[i] == want, "dynamic: word %d is %d, want %d", i, mem[i], want);
	}
	OK(MPI_Win_detach(win, mem));
	OK(MPI_Win_detach(win, mem + H));
	OK(MPI_Win_free(&win));
	free(mem);
	free(addrs);
}

static void test_errors(void)
{
	int *base, i, v[4] = { 7, 7, 7, 7 }, right = (rank + 1) % size;
	MPI_Win win;

	OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			    &win));
	for (i = 0; i < 4; i++)
		base[i] = -1;
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	/* outside an epoch */
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
	EXPECT(MPI_ERR_LOCKTYPE, MPI_Win_lock(99, right, 0, win));
	EXPECT(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win));
	/* request-based operations outside a passive-target epoch */
	{
		MPI_Request rq = MPI_REQUEST_NULL;
		MPI_Group g;
		long lv = 1, lr;

		EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq));
		OK(MPI_Win_fence(0, win));
		EXPECT(MPI_ERR_RMA_SYNC, MPI_Rget(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq));
		EXPECT(MPI_ERR_RMA_SYNC, MPI_Raccumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT,
							 MPI_SUM, win, &rq));
		EXPECT(MPI_ERR_RMA_SYNC, MPI_Rget_accumulate(&lv, 1, MPI_LONG, &lr, 1, MPI_LONG,
							     right, 0, 1, MPI_LONG, MPI_SUM, win,
							     &rq));
		EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT,
						  win, &rq));
		OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		/* an access epoch of MPI_Win_start is active target too */
		OK(MPI_Win_get_group(win, &g));
		OK(MPI_Win_post(g, 0, win));
		OK(MPI_Win_start(g, 0, win));
		EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq));
		OK(MPI_Win_complete(win));
		OK(MPI_Win_wait(win));
		OK(MPI_Group_free(&g));
		CHECK(rq == MPI_REQUEST_NULL, "a refused call set the request");
		/* and inside one, on MPI_PROC_NULL: a request already complete */
		OK(MPI_Win_lock_all(0, win));
		OK(MPI_Rput(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rq));
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		OK(MPI_Win_unlock_all(win));
		OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	/* out of range: at the call, nothing sent */
	OK(MPI_Win_fence(0, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(v, 1, MPI_INT, right, 4, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(v, 2, MPI_INT, right, 3, 2, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_RANGE, MPI_Accumulate(v, 4, MPI_INT, right, 1, 4, MPI_INT, MPI_SUM,
						 win));
	EXPECT(MPI_ERR_OP, MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win));
	EXPECT(MPI_ERR_TYPE, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, win));
	EXPECT(MPI_ERR_COUNT, MPI_Put(v, -1, MPI_INT, right, 0, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RANK, MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win));
	OK(MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
	/* mixing fence and lock once operations are in the fence epoch */
	OK(MPI_Put(v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	/* freeing with operations not completed */
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
	CHECK(win != MPI_WIN_NULL, "the refused MPI_Win_free freed the window");
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	for (i = 0; i < 4; i++)
		CHECK(base[i] == (i == 3 ? 7 : -1), "word %d is %d after the refused operations", i,
		      base[i]);
	/* a lock held: no fence, no free */
	OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
	OK(MPI_Win_unlock(right, win));
	EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, v, sizeof(v)));
	OK(MPI_Win_free(&win));
	EXPECT(MPI_ERR_WIN, MPI_Win_fence(0, MPI_WIN_NULL));
	EXPECT(MPI_ERR_DISP, MPI_Win_create(v, sizeof(v), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	EXPECT(MPI_ERR_SIZE, MPI_Win_create(v, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
}

struct dint {
	double v;
	int i;
};
struct sint {
	short v;
	int i;
};

/* MAXLOC and MINLOC on pair types: each rank offers a value for every
 * slot of rank 0's window; the winner and its index are checked. */
static void test_pairs(void)
{
	struct dint *dw, dv[N], dres[N];
	int (*iw)[2], iv[N][2];
	struct sint *sw, sv[N], sget[N];
	MPI_Datatype dvec, svec;
	MPI_Win win_d, win_i, win_s;
	int i, r;

	OK(MPI_Win_allocate(2 * N * sizeof(*dw), sizeof(*dw), MPI_INFO_NULL, MPI_COMM_WORLD, &dw,
			    &win_d));
	OK(MPI_Win_allocate(N * sizeof(*iw), sizeof(*iw), MPI_INFO_NULL, MPI_COMM_WORLD, &iw,
			    &win_i));
	OK(MPI_Win_allocate(2 * N * sizeof(*sw), sizeof(*sw), MPI_INFO_NULL, MPI_COMM_WORLD, &sw,
			    &win_s));
	for (i = 0; i < 2 * N; i++) {
		dw[i].v = -1e9;
		dw[i].i = -1;
		sw[i].v = 30000;
		sw[i].i = -1;
	}
	for (i = 0; i < N; i++) {
		iw[i][0] = -1000000;
		iw[i][1] = -1;
		/* the winner of slot i is rank i % size */
		dv[i].v = (i % size == rank) ? 100.0 + i : (double)rank;
		dv[i].i = rank;
		iv[i][0] = (i % size == rank) ? 1000 + i : rank;
		iv[i][1] = rank * 10;
		sv[i].v = (short)((i % size == rank) ? -100 - i : rank);
		sv[i].i = rank + 100;
	}
	/* every other pair of the second half: a derived type of pairs */
	OK(MPI_Type_vector(N / 2, 1, 2, MPI_DOUBLE_INT, &dvec));
	OK(MPI_Type_commit(&dvec));
	OK(MPI_Type_vector(N / 2, 1, 2, MPI_SHORT_INT, &svec));
	OK(MPI_Type_commit(&svec));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_lock_all(0, win_d));
	OK(MPI_Accumulate(dv, N, MPI_DOUBLE_INT, 0, 0, N, MPI_DOUBLE_INT, MPI_MAXLOC, win_d));
	OK(MPI_Accumulate(dv, N / 2, MPI_DOUBLE_INT, 0, N, 1, dvec, MPI_MAXLOC, win_d));
	OK(MPI_Win_unlock_all(win_d));
	OK(MPI_Win_fence(0, win_i));
	OK(MPI_Accumulate(iv, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_MAXLOC, win_i));
	OK(MPI_Win_fence(0, win_i));
	OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_s));
	OK(MPI_Accumulate(sv, N, MPI_SHORT_INT, 0, 0, N, MPI_SHORT_INT, MPI_MINLOC, win_s));
	OK(MPI_Accumulate(sv, N / 2, MPI_SHORT_INT, 0, N, 1, svec, MPI_MINLOC, win_s));
	OK(MPI_Win_unlock(0, win_s));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		for (i = 0; i < N; i++) {
			r = i % size;
			CHECK(dw[i].v == 100.0 + i && dw[i].i == r, "DOUBLE_INT slot %d: %g %d", i,
			      dw[i].v, dw[i].i);
			CHECK(iw[i][0] == 1000 + i && iw[i][1] == r * 10, "2INT slot %d: %d %d", i,
			      iw[i][0], iw[i][1]);
			CHECK(sw[i].v == -100 - i && sw[i].i == r + 100, "SHORT_INT slot %d: %d %d",
			      i, sw[i].v, sw[i].i);
		}
		for (i = 0; i < N; i++) {
			int want = i % 2 ? -1 : (i / 2) % size;

			CHECK(dw[N + i].i == want &&
				      (want < 0 || dw[N + i].v == 100.0 + i / 2),
			      "DOUBLE_INT vector slot %d: %g %d, want index %d", i, dw[N + i].v,
			      dw[N + i].i, want);
			CHECK(sw[N + i].i == (want < 0 ? -1 : want + 100) &&
				      sw[N + i].v == (want < 0 ? 30000 : -100 - i / 2),
			      "SHORT_INT vector slot %d: %d %d", i, sw[N + i].v, sw[N + i].i);
		}
	}
	{
		/* A window that ends right after one pair's data (12 bytes of
		 * MPI_DOUBLE_INT's 16), in memory of exactly that size (the
		 * sanitizer builds see any byte touched past it): the
		 * operation must not read or write the pair's padding. */
		size_t elen = sizeof(double) + sizeof(int);
		unsigned char *edge = malloc(elen);
		struct dint mine = { 10.0 + rank, rank };
		double ev = -1.0;
		int ei = -1;
		MPI_Win win_e;

		CHECK(edge != NULL, "out of memory");
		memcpy(edge, &ev, sizeof(ev));
		memcpy(edge + sizeof(double), &ei, sizeof(ei));
		OK(MPI_Win_create(edge, (MPI_Aint)elen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_e));
		OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_e));
		OK(MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
				  win_e));
		OK(MPI_Win_unlock(0, win_e));
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0) {
			memcpy(&ev, edge, sizeof(ev));
			memcpy(&ei, edge + sizeof(double), sizeof(ei));
			CHECK(ev == 10.0 + size - 1 && ei == size - 1, "edge pair: %g %d", ev, ei);
		}
		OK(MPI_Win_free(&win_e));
		free(edge);
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	/* get_accumulate with MPI_NO_OP reads the pairs; get of a derived
	 * type of pairs with holes */
	OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_d));
	OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, dres, N, MPI_DOUBLE_INT, 0, 0, N,
			      MPI_DOUBLE_INT, MPI_NO_OP, win_d));
	OK(MPI_Win_unlock(0, win_d));
	for (i = 0; i < N; i++)
		CHECK(dres[i].v == 100.0 + i && dres[i].i == i % size, "get_acc slot %d: %g %d", i,
		      dres[i].v, dres[i].i);
	OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_s));
	OK(MPI_Get(sget, N / 2, MPI_SHORT_INT, 0, N, 1, svec, win_s));
	OK(MPI_Win_unlock(0, win_s));
	for (i = 0; i < N / 2; i++)
		CHECK(sget[i].v == -100 - i && sget[i].i == i % size + 100, "get slot %d: %d %d", i,
		      sget[i].v, sget[i].i);
	/* MAXLOC on a type that is not a pair */
	OK(MPI_Win_set_errhandler(win_i, MPI_ERRORS_RETURN));
	OK(MPI_Win_fence(0, win_i));
	EXPECT(MPI_ERR_OP, MPI_Accumulate(iv, 2, MPI_INT, 0, 0, 2, MPI_INT, MPI_MAXLOC, win_i));
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win_i));
	OK(MPI_Type_free(&dvec));
	OK(MPI_Type_free(&svec));
	OK(MPI_Win_free(&win_d));
	OK(MPI_Win_free(&win_i));
	OK(MPI_Win_free(&win_s));
}

/* More distinct derived target types than a target keeps rebuilt, used in
 * turn and again, some differing only in their extent or in one block. */
static void test_types(void)
{
	enum { NT = 12, W = 512 };
	MPI_Datatype t[NT];
	int *base, i, k, round, right = (rank + 1) % size, left = (rank + size - 1) % size;
	int src[W], want[W];
	MPI_Win win;

	for (k = 0; k < NT; k++) {
		if (k % 3 == 0) {
			OK(MPI_Type_vector(4, 1, k + 2, MPI_INT, &t[k]));
		} else if (k % 3 == 1) {
			int lens[2] = { 1, 2 }, disps[2] = { 0, k + 1 };

			OK(MPI_Type_indexed(2, lens, disps, MPI_INT, &t[k]));
		} else {
			MPI_Datatype v;

			/* the vector of k - 2 resized: same blocks, other extent */
			OK(MPI_Type_vector(4, 1, k, MPI_INT, &v));
			OK(MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int) * (4 * k + 1), &t[k]));
			OK(MPI_Type_free(&v));
		}
		OK(MPI_Type_commit(&t[k]));
	}
	OK(MPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			    &win));
	for (round = 0; round < 3; round++) {
		for (k = 0; k < NT; k++) {
			MPI_Aint lb, ext;
			int n, sz;

			for (i = 0; i < W; i++)
				base[i] = -1;
			OK(MPI_Type_size(t[k], &sz));
			OK(MPI_Type_get_extent(t[k], &lb, &ext));
			n = 2;
			for (i = 0; i < W; i++)
				src[i] = rank * 100000 + round * 1000 + k * 10 + i;
			OK(MPI_Win_fence(0, win));
			OK(MPI_Put(src, n * sz / (int)sizeof(int), MPI_INT, right, 0, n, t[k], win));
			OK(MPI_Win_fence(0, win));
			/* what left's put must have written: unpack its data
			 * locally through the same type */
			for (i = 0; i < W; i++) {
				want[i] = -1;
				src[i] = left * 100000 + round * 1000 + k * 10 + i;
			}
			{
				int pos = 0;
				char packed[W * sizeof(int)];

				OK(MPI_Pack(src, n * sz / (int)sizeof(int), MPI_INT, packed,
					    sizeof(packed), &pos, MPI_COMM_SELF));
				pos = 0;
				OK(MPI_Unpack(packed, sizeof(packed), &pos, want, n, t[k],
					      MPI_COMM_SELF));
			}
			for (i = 0; i < W; i++)
				CHECK(base[i] == want[i], "round %d type %d: word %d is %d, want %d",
				      round, k, i, base[i], want[i]);
		}
	}
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	OK(MPI_Win_free(&win));
	for (k = 0; k < NT; k++)
		OK(MPI_Type_free(&t[k]));
}

static int deletes, delete_fails;

static int count_delete(MPI_Win win, int keyval, void *value, void *extra)
{
	(void)win;
	(void)keyval;
	deletes++;
	*(int *)extra += *(int *)value;
	return delete_fails ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_keyvals(void)
{
	int buf[2], key, key2, ckey, sum = 0, one = 1, ten = 10, *got, flag, copy_flag = 0;
	void *out = NULL;
	MPI_Win win;

	OK(MPI_Win_create(buf, sizeof(buf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &sum));
	OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
	CHECK(key != key2 && key != MPI_WIN_BASE && key2 != MPI_WIN_MODEL, "keys %d %d", key, key2);
	OK(MPI_Win_get_attr(win, key, &got, &flag));
	CHECK(!flag, "an attribute never set is there");
	OK(MPI_Win_set_attr(win, key, &one));
	OK(MPI_Win_get_attr(win, key, &got, &flag));
	CHECK(flag && got == &one, "get after set");
	/* replacing calls the delete callback on the old value */
	OK(MPI_Win_set_attr(win, key, &ten));
	CHECK(deletes == 1 && sum == 1, "replace: %d deletes, sum %d", deletes, sum);
	OK(MPI_Win_delete_attr(win, key));
	CHECK(deletes == 2 && sum == 11, "delete: %d deletes, sum %d", deletes, sum);
	OK(MPI_Win_get_attr(win, key, &got, &flag));
	CHECK(!flag, "a deleted attribute is there");
	EXPECT(MPI_ERR_KEYVAL, MPI_Win_delete_attr(win, key));
	/* the predefined callbacks, called as a duplication would */
	OK(MPI_WIN_DUP_FN(win, key2, NULL, &ten, &out, &copy_flag));
	CHECK(copy_flag == 1 && out == &ten, "MPI_WIN_DUP_FN");
	OK(MPI_WIN_NULL_COPY_FN(win, key2, NULL, &ten, &out, &copy_flag));
	CHECK(copy_flag == 0, "MPI_WIN_NULL_COPY_FN");
	OK(MPI_WIN_NULL_DELETE_FN(win, key2, &ten, NULL));
	/* a freed key keeps working for the attribute that uses it */
	OK(MPI_Win_set_attr(win, key, &one));
	OK(MPI_Win_set_attr(win, key2, &ten));
	ckey = key;
	OK(MPI_Win_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not reset the key");
	OK(MPI_Win_get_attr(win, ckey, &got, &flag));
	CHECK(flag && got == &one, "the attribute of a freed key");
	/* misuse */
	EXPECT(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, MPI_WIN_BASE, &one));
	EXPECT(MPI_ERR_KEYVAL, MPI_Win_delete_attr(win, MPI_WIN_SIZE));
	EXPECT(MPI_ERR_KEYVAL, MPI_Win_get_attr(win, 12345, &got, &flag));
	{
		int ckv;

		OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv,
					  NULL));
		EXPECT(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, ckv, &one));
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		EXPECT(MPI_ERR_KEYVAL, MPI_Win_free_keyval(&ckv));
		OK(MPI_Comm_free_keyval(&ckv));
	}
	EXPECT(MPI_ERR_ARG, MPI_Win_create_keyval(NULL, NULL, NULL, NULL));
	EXPECT(MPI_ERR_WIN, MPI_Win_set_attr(MPI_WIN_NULL, key2, &one));
	/* MPI_Win_free deletes what is left: the freed key's last use goes */
	OK(MPI_Win_free(&win));
	CHECK(deletes == 3 && sum == 12, "free: %d deletes, sum %d", deletes, sum);
	/* a delete callback that fails: the window is freed, the error returned */
	OK(MPI_Win_create(buf, sizeof(buf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_create_keyval(NULL, count_delete, &key, &sum));
	OK(MPI_Win_set_attr(win, key, &one));
	delete_fails = 1;
	EXPECT(MPI_ERR_OTHER, MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL, "the window was not freed");
	delete_fails = 0;
	OK(MPI_Win_free_keyval(&key));
	OK(MPI_Win_free_keyval(&key2));
	EXPECT(MPI_ERR_KEYVAL, MPI_Win_free_keyval(&ckey));
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{ "putget", test_putget }, { "acc", test_acc },         { "fop", test_fop },
		{ "cas", test_cas },       { "lock", test_lock },       { "pscw", test_pscw },
		{ "dynamic", test_dynamic }, { "shared", test_shared }, { "rreq", test_rreq },
		{ "attrs", test_attrs },   { "errors", test_errors },   { "pairs", test_pairs },
		{ "types", test_types },   { "keyvals", test_keyvals }, { "flavors", test_flavors },
		{ "passive", test_passive }, { "edges", test_edges },
	};
	size_t i;
	int total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: rma TEST\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[1], tests[i].name))
			tests[i].fn();
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0 && total)
		fprintf(stderr, "rma %s: %d failures\n", argv[1], total);
	return total ? 1 : 0;
}
