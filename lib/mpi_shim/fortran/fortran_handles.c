/* SPDX-License-Identifier: MIT */
/*
 * fortran_handles.c - handle conversion between C and Fortran:
 * MPI_Comm_c2f/f2c and the others, MPI_Status_c2f/f2c, and the objects
 * behind the Fortran constants MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
 * and MPI_STATUSES_IGNORE (common blocks of mpif.h and of the mpi module).
 *
 * C handles are pointers, Fortran handles INTEGERs.  Each kind of handle
 * has a table: number -> pointer, and a hash of the pointers back to their
 * numbers.  The predefined handles are loaded first with the numbers of
 * lib/mpi_fortran/handles.txt (fortran_predef.h, generated from it), the
 * same as the PARAMETERs of mpif.h and of the module; any other handle gets
 * the lowest free number above them the first time it is converted.
 *
 * A number is given back when the Fortran calls have freed every handle of
 * the object they returned: each Fortran call that returns a handle holds
 * its number once (MPI_COMM_GET_ERRHANDLER returns the same error handler
 * again, MPI_COMM_GROUP the same group), each free call (MPI_COMM_FREE,
 * MPI_TYPE_FREE, a request completed by MPI_WAIT...) releases it once.  An
 * object freed from C keeps its number: harmless (a new object at the same
 * address takes it over) and only a few bytes.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortran_handles.h"
#include "shim.h"

/* The Fortran common blocks: INTEGER, INTEGER, INTEGER(MPI_STATUS_SIZE),
 * INTEGER(MPI_STATUS_SIZE, 1).  Only their addresses matter. */
#define MPI_SHIM_F_STATUS_SIZE 6
_Static_assert(sizeof(MPI_Status) == MPI_SHIM_F_STATUS_SIZE * sizeof(MPI_Fint),
	       "MPI_STATUS_SIZE of mpif.h (gen.py) is the size of MPI_Status");
MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_;
MPI_Fint mpi_fortran_status_ignore_[MPI_SHIM_F_STATUS_SIZE];
MPI_Fint mpi_fortran_statuses_ignore_[MPI_SHIM_F_STATUS_SIZE];

/*
 * A Fortran program has its own copy of each common block when it is linked
 * (the dynamic linker binds every reference to that copy), but this library
 * may reach its definition without going through the dynamic linker (an
 * AddressSanitizer build does).  The addresses that count are those the
 * dynamic linker gives the names: looked up once.
 */
static struct mpi_shim_fconst fconst;
static pthread_once_t fconst_once = PTHREAD_ONCE_INIT;

static void *resolve(const char *name, void *own)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p ? p : own;
}

static void fconst_load(void)
{
	fconst.bottom = resolve("mpi_fortran_bottom_", &mpi_fortran_bottom_);
	fconst.in_place = resolve("mpi_fortran_in_place_", &mpi_fortran_in_place_);
	fconst.status_ignore = resolve("mpi_fortran_status_ignore_", mpi_fortran_status_ignore_);
	fconst.statuses_ignore = resolve("mpi_fortran_statuses_ignore_",
					 mpi_fortran_statuses_ignore_);
}

const struct mpi_shim_fconst *mpi_shim_fconst(void)
{
	pthread_once(&fconst_once, fconst_load);
	return &fconst;
}

struct mpi_shim_fpredef {
	int kind;
	MPI_Fint num;
	const void *handle;
	int alias; /* not the number MPI_x_c2f gives for this handle */
};

#include "fortran_predef.h"

struct ftable {
	void **obj;        /* number -> handle; NULL: free */
	int *next;         /* number -> next number of the same hash chain, or -1 */
	int *refs;         /* number -> handles the Fortran calls returned (hold) */
	int *bucket;       /* hash -> first number, or -1 */
	unsigned nbucket;  /* a power of two */
	int cap;           /* room of obj and next */
	int end;           /* numbers in use are below */
	int first_user;    /* numbers below are predefined */
	int *free;         /* released numbers, to give again */
	int nfree;
};

static struct ftable tables[MPI_SHIM_F_NKINDS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

static unsigned hash(const struct ftable *t, const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (unsigned)x & (t->nbucket - 1);
}

/* Room for number n; rehashes when the table outgrows its buckets. */
static int grow(struct ftable *t, int n)
{
	int cap = t->cap ? t->cap : 64;

	while (cap <= n)
		cap *= 2;
	if (cap != t->cap) {
		void **obj = realloc(t->obj, cap * sizeof(*obj));
		int *next, *fr;

		if (!obj)
			return -1;
		t->obj = obj;
		if (!(next = realloc(t->next, cap * sizeof(*next))))
			return -1;
		t->next = next;
		if (!(fr = realloc(t->free, cap * sizeof(*fr))))
			return -1;
		t->free = fr;
		if (!(fr = realloc(t->refs, cap * sizeof(*fr))))
			return -1;
		t->refs = fr;
		memset(t->obj + t->cap, 0, (cap - t->cap) * sizeof(*obj));
		memset(t->refs + t->cap, 0, (cap - t->cap) * sizeof(*fr));
		t->cap = cap;
	}
	if ((unsigned)t->cap > t->nbucket) {
		int *b = malloc(t->cap * sizeof(*b));

		if (!b)
			return -1;
		free(t->bucket);
		t->bucket = b;
		t->nbucket = t->cap;
		memset(b, 0xff, t->nbucket * sizeof(*b));
		for (int i = 0; i < t->end; i++) {
			if (t->obj[i] && t->next[i] != -2) {
				unsigned h = hash(t, t->obj[i]);

				t->next[i] = b[h];
				b[h] = i;
			}
		}
	}
	return 0;
}

static int lookup(const struct ftable *t, const void *p)
{
	if (!t->nbucket)
		return -1;
	for (int i = t->bucket[hash(t, p)]; i >= 0; i = t->next[i])
		if (t->obj[i] == p)
			return i;
	return -1;
}

/* Number n is handle p; hashed unless unhashed (next -2: a second name). */
static void put(struct ftable *t, int n, void *p, int hashed)
{
	t->obj[n] = p;
	t->refs[n] = 0;
	if (n >= t->end)
		t->end = n + 1;
	if (hashed) {
		unsigned h = hash(t, p);

		t->next[n] = t->bucket[h];
		t->bucket[h] = n;
	} else {
		t->next[n] = -2;
	}
}

static void unhash(struct ftable *t, int n)
{
	int *pp = &t->bucket[hash(t, t->obj[n])];

	while (*pp >= 0 && *pp != n)
		pp = &t->next[*pp];
	if (*pp == n)
		*pp = t->next[n];
}

/* The predefined handles, once.  The last line of a handle that is not an
 * alias gives its number: earlier lines of the same handle are unhashed. */
static int load(void)
{
	size_t n = sizeof(mpi_shim_fpredef) / sizeof(mpi_shim_fpredef[0]);

	for (size_t i = 0; i < n; i++) {
		struct ftable *t = &tables[mpi_shim_fpredef[i].kind];

		if (mpi_shim_fpredef[i].num >= t->first_user)
			t->first_user = mpi_shim_fpredef[i].num + 1;
	}
	for (int k = 0; k < MPI_SHIM_F_NKINDS; k++)
		if (grow(&tables[k], tables[k].first_user))
			return -1;
	for (size_t i = 0; i < n; i++) {
		const struct mpi_shim_fpredef *e = &mpi_shim_fpredef[i];
		struct ftable *t = &tables[e->kind];
		void *p = (void *)e->handle;
		int old;

		if (!p)
			continue;
		if (e->alias) {
			put(t, e->num, p, 0);
			continue;
		}
		if ((old = lookup(t, p)) >= 0) {
			unhash(t, old);
			t->next[old] = -2;
		}
		put(t, e->num, p, 1);
	}
	loaded = 1;
	return 0;
}

MPI_Fint mpi_shim_c2f(int kind, const void *handle)
{
	struct ftable *t = &tables[kind];
	int n;

	if (!handle)
		return 0;
	pthread_mutex_lock(&lock);
	if (!loaded && load()) {
		n = 0;
		goto out;
	}
	if ((n = lookup(t, handle)) >= 0)
		goto out;
	if (t->nfree) {
		n = t->free[--t->nfree];
	} else {
		n = t->end > t->first_user ? t->end : t->first_user;
		if (n == INT32_MAX || grow(t, n)) {
			n = 0;
			goto out;
		}
	}
	put(t, n, (void *)handle, 1);
out:
	pthread_mutex_unlock(&lock);
	return n;
}

void *mpi_shim_f2c(int kind, MPI_Fint f)
{
	struct ftable *t = &tables[kind];
	void *p = NULL;

	pthread_mutex_lock(&lock);
	if (!loaded && load())
		goto out;
	if (f > 0 && f < t->end)
		p = t->obj[f];
out:
	pthread_mutex_unlock(&lock);
	return p;
}

void mpi_shim_f_hold(int kind, MPI_Fint f)
{
	struct ftable *t = &tables[kind];

	pthread_mutex_lock(&lock);
	if (loaded && f >= t->first_user && f < t->end && t->obj[f])
		t->refs[f]++;
	pthread_mutex_unlock(&lock);
}

void mpi_shim_f_release(int kind, MPI_Fint f)
{
	struct ftable *t = &tables[kind];

	pthread_mutex_lock(&lock);
	if (loaded && f >= t->first_user && f < t->end && t->obj[f] && --t->refs[f] <= 0) {
		unhash(t, f);
		t->obj[f] = NULL;
		t->free[t->nfree++] = f;
	}
	pthread_mutex_unlock(&lock);
}

/* --- The calls of the standard --- */

#define MPI_SHIM_F_CONVERT(Name, ctype, kind)                        \
	MPI_Fint PMPI_##Name##_c2f(ctype handle)                     \
	{                                                            \
		return mpi_shim_c2f(kind, handle);                   \
	}                                                            \
	MPI_SHIM_ALIAS(MPI_##Name##_c2f);                            \
	ctype PMPI_##Name##_f2c(MPI_Fint handle)                     \
	{                                                            \
		return (ctype)mpi_shim_f2c(kind, handle);            \
	}                                                            \
	MPI_SHIM_ALIAS(MPI_##Name##_f2c)

MPI_SHIM_F_CONVERT(Comm, MPI_Comm, MPI_SHIM_F_COMM);
MPI_SHIM_F_CONVERT(Group, MPI_Group, MPI_SHIM_F_GROUP);
MPI_SHIM_F_CONVERT(Type, MPI_Datatype, MPI_SHIM_F_TYPE);
MPI_SHIM_F_CONVERT(Op, MPI_Op, MPI_SHIM_F_OP);
MPI_SHIM_F_CONVERT(Request, MPI_Request, MPI_SHIM_F_REQUEST);
MPI_SHIM_F_CONVERT(Errhandler, MPI_Errhandler, MPI_SHIM_F_ERRHANDLER);
MPI_SHIM_F_CONVERT(Info, MPI_Info, MPI_SHIM_F_INFO);
MPI_SHIM_F_CONVERT(Message, MPI_Message, MPI_SHIM_F_MESSAGE);
MPI_SHIM_F_CONVERT(Win, MPI_Win, MPI_SHIM_F_WIN);
MPI_SHIM_F_CONVERT(File, MPI_File, MPI_SHIM_F_FILE);

/*
 * A Fortran status is MPI_STATUS_SIZE INTEGERs laid out as MPI_Status
 * (MPI_SOURCE, MPI_TAG, MPI_ERROR first, at Fortran indices 1, 2, 3): the
 * conversion is a copy.  The ignore constants cannot be converted.
 */
static int status_check(const void *c, const void *f, const char *call)
{
	if (!c || !f)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "the %s status is NULL",
				    !c ? "C" : "Fortran");
	if (f == mpi_shim_fconst()->status_ignore || f == mpi_shim_fconst()->statuses_ignore ||
	    f == mpi_fortran_status_ignore_ || f == mpi_fortran_statuses_ignore_)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "the Fortran status is MPI_F_STATUS(ES)_IGNORE");
	return MPI_SUCCESS;
}

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = status_check(c_status, f_status, "MPI_Status_c2f")))
		return rc;
	memcpy(f_status, c_status, sizeof(*c_status));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Status_c2f);

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = status_check(c_status, f_status, "MPI_Status_f2c")))
		return rc;
	memcpy(c_status, f_status, sizeof(*c_status));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Status_f2c);
