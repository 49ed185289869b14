/* SPDX-License-Identifier: MIT */
/*
 * fortran.c - the hand-written part of the Fortran binding: the helpers of
 * the generated wrappers (mpi_fortran.h), the calls marked "manual" in
 * calls.txt, the Fortran user functions (operations, error handlers,
 * attribute copy and delete functions, data representation conversions)
 * and the predefined functions MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN,
 * MPI_WIN_DUP_FN, MPI_CONVERSION_FN_NULL... as Fortran sees them.
 *
 * User functions: C calls an MPI_User_function or an error handler with C
 * handles and no room for the Fortran function, so each distinct Fortran
 * function gets one of MPI_FORTRAN_SLOTS C functions (trampolines) that
 * converts the handles and calls it.  Slots are never given back (an
 * operation or error handler may still be in use after MPI_OP_FREE), so a
 * program may use at most MPI_FORTRAN_SLOTS distinct Fortran functions of
 * each of the four kinds (operations, communicator, window and file error
 * handlers).  Attribute functions get the keyval's extra_state, and the
 * conversion functions of MPI_REGISTER_DATAREP the data representation's,
 * which points to a record of the Fortran functions (kept to the end).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_fortran.h"
#include "shim.h"
#include "topo.h"

/*
 * The common blocks of MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE, defined here as well as in libmpi_shim (for C's
 * MPI_F_STATUS_IGNORE): a program links this library for its calls, so the
 * linker always sees the definitions here and binds the program's common
 * blocks to them, however it is told to treat libraries not needed
 * directly (--as-needed with --allow-shlib-undefined drops libmpi_shim and
 * gives the program a private copy).  Every reference then resolves to
 * the first definition, which mpi_shim_fconst() returns.
 */
MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_;
MPI_Fint mpi_fortran_status_ignore_[sizeof(MPI_Status) / sizeof(MPI_Fint)];
MPI_Fint mpi_fortran_statuses_ignore_[sizeof(MPI_Status) / sizeof(MPI_Fint)];

/*
 * MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY, MPI_ARGV_NULL, MPI_ARGVS_NULL and
 * MPI_ERRCODES_IGNORE: only this library knows them (C has its own
 * values), so they are looked up here the same way.  Each has the size of
 * its Fortran declaration (gen.py, COMMONS): INTEGER(1), INTEGER(1),
 * CHARACTER*1(1), CHARACTER*1(1,1), INTEGER(1).
 */
MPI_Fint mpi_fortran_unweighted_, mpi_fortran_weights_empty_;
char mpi_fortran_argv_null_, mpi_fortran_argvs_null_;
MPI_Fint mpi_fortran_errcodes_ignore_;
static const void *unweighted, *weights_empty, *argv_null, *argvs_null, *errcodes_ignore;
static pthread_once_t commons_once = PTHREAD_ONCE_INIT;

static const void *common_block(const char *name, const void *here)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p ? p : here;
}

static void commons_load(void)
{
	unweighted = common_block("mpi_fortran_unweighted_", &mpi_fortran_unweighted_);
	weights_empty = common_block("mpi_fortran_weights_empty_", &mpi_fortran_weights_empty_);
	argv_null = common_block("mpi_fortran_argv_null_", &mpi_fortran_argv_null_);
	argvs_null = common_block("mpi_fortran_argvs_null_", &mpi_fortran_argvs_null_);
	errcodes_ignore =
	    common_block("mpi_fortran_errcodes_ignore_", &mpi_fortran_errcodes_ignore_);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Report errclass through MPI_COMM_WORLD's error handler and return it. */
static int fail(int errclass, const char *call)
{
	(void)call;
	PMPI_Comm_call_errhandler(MPI_COMM_WORLD, errclass);
	return errclass;
}

int mpi_fortran_no_mem(const char *call)
{
	return fail(MPI_ERR_NO_MEM, call);
}

/* --- Helpers of the generated wrappers --- */

void *mpi_fortran_buf(void *buf)
{
	const struct mpi_shim_fconst *k = mpi_shim_fconst();

	if (buf == k->bottom)
		return MPI_BOTTOM;
	if (buf == k->in_place)
		return MPI_IN_PLACE;
	return buf;
}

int mpi_fortran_comm_size(MPI_Fint comm)
{
	MPI_Comm c = mpi_shim_f2c(MPI_SHIM_F_COMM, comm);

	return mpi_shim_comm_ok(c) ? c->peer_size : 0;
}

int mpi_fortran_degree(MPI_Fint comm, int out)
{
	MPI_Comm c = mpi_shim_f2c(MPI_SHIM_F_COMM, comm);

	if (!mpi_shim_comm_ok(c) || !c->topo)
		return 0;
	return out ? c->topo->nout : c->topo->nin;
}

int *mpi_fortran_weights(MPI_Fint *f)
{
	pthread_once(&commons_once, commons_load);
	if (f == unweighted)
		return MPI_UNWEIGHTED;
	if (f == weights_empty)
		return MPI_WEIGHTS_EMPTY;
	return (int *)f;
}

int *mpi_fortran_errcodes(MPI_Fint *f)
{
	pthread_once(&commons_once, commons_load);
	return f == errcodes_ignore ? MPI_ERRCODES_IGNORE : (int *)f;
}

void mpi_fortran_bools_out(MPI_Fint *f, int n)
{
	for (int i = 0; i < n; i++)
		f[i] = f[i] != 0;
}

int mpi_fortran_handles_in(int kind, const MPI_Fint *f, int n, void ***c, const char *call)
{
	if (!(*c = malloc((n > 0 ? n : 1) * sizeof(**c))))
		return fail(MPI_ERR_NO_MEM, call);
	for (int i = 0; i < n; i++)
		(*c)[i] = f ? mpi_shim_f2c(kind, f[i]) : NULL;
	return MPI_SUCCESS;
}

void mpi_fortran_handles_out(int kind, MPI_Fint *f, int n, void **c)
{
	for (int i = 0; i < n; i++)
		if (c[i])
			mpi_fortran_handle_out(kind, &f[i], c[i]);
}

void mpi_fortran_handle_out(int kind, MPI_Fint *f, const void *c)
{
	*f = mpi_shim_c2f(kind, c);
	mpi_shim_f_hold(kind, *f);
}

void mpi_fortran_handle_update(int kind, MPI_Fint *f, const void *c)
{
	if (mpi_shim_f2c(kind, *f) == c)
		return;
	if (!c) {
		mpi_shim_f_release(kind, *f);
		*f = 0;
	} else {
		mpi_fortran_handle_out(kind, f, c);
	}
}

void mpi_fortran_handles_update(int kind, MPI_Fint *f, int n, void **c)
{
	for (int i = 0; i < n; i++)
		mpi_fortran_handle_update(kind, &f[i], c[i]);
}

int mpi_fortran_iaints_in(const MPI_Fint *f, int n, MPI_Aint **c, const char *call)
{
	if (!(*c = malloc((n > 0 ? n : 1) * sizeof(**c))))
		return fail(MPI_ERR_NO_MEM, call);
	for (int i = 0; i < n; i++)
		(*c)[i] = f[i];
	return MPI_SUCCESS;
}

static int ignored(const MPI_Fint *f)
{
	const struct mpi_shim_fconst *k = mpi_shim_fconst();

	return f == k->status_ignore || f == k->statuses_ignore;
}

MPI_Status *mpi_fortran_status_in(const MPI_Fint *f, MPI_Status *s)
{
	if (ignored(f))
		return MPI_STATUS_IGNORE;
	memcpy(s, f, sizeof(*s));
	return s;
}

void mpi_fortran_status_out(MPI_Fint *f, const MPI_Status *s)
{
	if (s)
		memcpy(f, s, sizeof(*s));
}

int mpi_fortran_statuses_in(const MPI_Fint *f, int n, MPI_Status **c, const char *call)
{
	if (ignored(f)) {
		*c = MPI_STATUSES_IGNORE;
		return MPI_SUCCESS;
	}
	if (!(*c = malloc((n > 0 ? n : 1) * sizeof(**c))))
		return fail(MPI_ERR_NO_MEM, call);
	if (n > 0)
		memcpy(*c, f, n * sizeof(**c));
	return MPI_SUCCESS;
}

void mpi_fortran_statuses_out(MPI_Fint *f, int n, const MPI_Status *c)
{
	if (c && n > 0)
		memcpy(f, c, n * sizeof(*c));
}

void mpi_fortran_statuses_free(const MPI_Fint *f, MPI_Status *c)
{
	(void)f;
	free(c);
}

void mpi_fortran_indices_out(MPI_Fint *f, int n)
{
	for (int i = 0; i < n; i++)
		f[i]++;
}

int mpi_fortran_str_in(const char *f, size_t len, char **c, const char *call)
{
	while (len && f[len - 1] == ' ')
		len--;
	if (!(*c = malloc(len + 1)))
		return fail(MPI_ERR_NO_MEM, call);
	memcpy(*c, f, len);
	(*c)[len] = '\0';
	return MPI_SUCCESS;
}

int mpi_fortran_istr_in(const char *f, size_t len, char **c, const char *call)
{
	while (len && *f == ' ') {
		f++;
		len--;
	}
	return mpi_fortran_str_in(f, len, c, call);
}

void mpi_fortran_str_out(char *f, size_t len, const char *c)
{
	size_t n = strlen(c);

	if (n > len)
		n = len;
	memcpy(f, c, n);
	memset(f + n, ' ', len - n);
}

/* --- Fortran user functions: one C trampoline per distinct function --- */

#define MPI_FORTRAN_SLOTS 32
#define MPI_FORTRAN_EACH_SLOT(X)                                                        \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) \
	X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27)   \
	X(28) X(29) X(30) X(31)

typedef void fortran_op_fn(void *invec, void *inoutvec, MPI_Fint *len, MPI_Fint *datatype);
typedef void fortran_errh_fn(MPI_Fint *comm, MPI_Fint *code);

static mpi_fortran_fn *op_slots[MPI_FORTRAN_SLOTS];
static mpi_fortran_fn *errh_slots[MPI_FORTRAN_SLOTS];
static mpi_fortran_fn *win_errh_slots[MPI_FORTRAN_SLOTS];
static mpi_fortran_fn *file_errh_slots[MPI_FORTRAN_SLOTS];

static void op_call(int slot, void *in, void *inout, int *len, MPI_Datatype *t)
{
	MPI_Fint ft = mpi_shim_c2f(MPI_SHIM_F_TYPE, *t);
	MPI_Fint n = *len;

	((fortran_op_fn *)op_slots[slot])(in, inout, &n, &ft);
}

static void errh_call(int slot, MPI_Comm *comm, int *code)
{
	MPI_Fint fc = mpi_shim_c2f(MPI_SHIM_F_COMM, comm ? *comm : MPI_COMM_NULL);
	MPI_Fint fcode = *code;

	((fortran_errh_fn *)errh_slots[slot])(&fc, &fcode);
}

static void win_errh_call(int slot, MPI_Win *win, int *code)
{
	MPI_Fint fw = mpi_shim_c2f(MPI_SHIM_F_WIN, win ? *win : MPI_WIN_NULL);
	MPI_Fint fcode = *code;

	((fortran_errh_fn *)win_errh_slots[slot])(&fw, &fcode);
}

static void file_errh_call(int slot, MPI_File *fh, int *code)
{
	MPI_Fint ff = mpi_shim_c2f(MPI_SHIM_F_FILE, fh ? *fh : MPI_FILE_NULL);
	MPI_Fint fcode = *code;

	((fortran_errh_fn *)file_errh_slots[slot])(&ff, &fcode);
}

#define OP_TRAMPOLINE(i)                                                               \
	static void op_trampoline_##i(void *in, void *inout, int *len, MPI_Datatype *t) \
	{                                                                              \
		op_call(i, in, inout, len, t);                                         \
	}
#define ERRH_TRAMPOLINE(i)                                               \
	static void errh_trampoline_##i(MPI_Comm *comm, int *code, ...) \
	{                                                                \
		errh_call(i, comm, code);                                \
	}
#define WIN_ERRH_TRAMPOLINE(i)                                             \
	static void win_errh_trampoline_##i(MPI_Win *win, int *code, ...) \
	{                                                                  \
		win_errh_call(i, win, code);                               \
	}
#define FILE_ERRH_TRAMPOLINE(i)                                             \
	static void file_errh_trampoline_##i(MPI_File *fh, int *code, ...) \
	{                                                                   \
		file_errh_call(i, fh, code);                                \
	}
MPI_FORTRAN_EACH_SLOT(OP_TRAMPOLINE)
MPI_FORTRAN_EACH_SLOT(ERRH_TRAMPOLINE)
MPI_FORTRAN_EACH_SLOT(WIN_ERRH_TRAMPOLINE)
MPI_FORTRAN_EACH_SLOT(FILE_ERRH_TRAMPOLINE)

#define OP_ENTRY(i) op_trampoline_##i,
#define ERRH_ENTRY(i) errh_trampoline_##i,
#define WIN_ERRH_ENTRY(i) win_errh_trampoline_##i,
#define FILE_ERRH_ENTRY(i) file_errh_trampoline_##i,
static MPI_User_function *const op_trampolines[] = { MPI_FORTRAN_EACH_SLOT(OP_ENTRY) };
static MPI_Comm_errhandler_function *const errh_trampolines[] = {
	MPI_FORTRAN_EACH_SLOT(ERRH_ENTRY)
};
static MPI_Win_errhandler_function *const win_errh_trampolines[] = {
	MPI_FORTRAN_EACH_SLOT(WIN_ERRH_ENTRY)
};
static MPI_File_errhandler_function *const file_errh_trampolines[] = {
	MPI_FORTRAN_EACH_SLOT(FILE_ERRH_ENTRY)
};

/* The slot of fn (taken if fn has none yet), or -1 if all are taken. */
static int slot_of(mpi_fortran_fn **slots, mpi_fortran_fn *fn)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MPI_FORTRAN_SLOTS && slots[i] && slots[i] != fn; i++)
		;
	if (i == MPI_FORTRAN_SLOTS)
		i = -1;
	else
		slots[i] = fn;
	pthread_mutex_unlock(&lock);
	return i;
}

int mpi_fortran_opfn(mpi_fortran_fn *fn, MPI_User_function **c, const char *call)
{
	int i = fn ? slot_of(op_slots, fn) : -1;

	if (i < 0)
		return fail(fn ? MPI_ERR_OTHER : MPI_ERR_ARG, call);
	*c = op_trampolines[i];
	return MPI_SUCCESS;
}

int mpi_fortran_errfn(mpi_fortran_fn *fn, MPI_Comm_errhandler_function **c, const char *call)
{
	int i = fn ? slot_of(errh_slots, fn) : -1;

	if (i < 0)
		return fail(fn ? MPI_ERR_OTHER : MPI_ERR_ARG, call);
	*c = errh_trampolines[i];
	return MPI_SUCCESS;
}

int mpi_fortran_werrfn(mpi_fortran_fn *fn, MPI_Win_errhandler_function **c, const char *call)
{
	int i = fn ? slot_of(win_errh_slots, fn) : -1;

	if (i < 0)
		return fail(fn ? MPI_ERR_OTHER : MPI_ERR_ARG, call);
	*c = win_errh_trampolines[i];
	return MPI_SUCCESS;
}

int mpi_fortran_ferrfn(mpi_fortran_fn *fn, MPI_File_errhandler_function **c, const char *call)
{
	int i = fn ? slot_of(file_errh_slots, fn) : -1;

	if (i < 0)
		return fail(fn ? MPI_ERR_OTHER : MPI_ERR_ARG, call);
	*c = file_errh_trampolines[i];
	return MPI_SUCCESS;
}

/* --- Attributes --- */

/* The predefined attribute functions, as Fortran calls them: MPI-2 forms
 * (INTEGER(KIND=MPI_ADDRESS_KIND) values) and MPI-1 forms (INTEGER). */
void mpi_comm_null_copy_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
			    MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*flag = 0;
	*ierror = MPI_SUCCESS;
}

void mpi_comm_dup_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
		      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

void mpi_comm_null_delete_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value,
			      MPI_Aint *extra, MPI_Fint *ierror)
{
	*ierror = MPI_SUCCESS;
}

void mpi_null_copy_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
		       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*flag = 0;
	*ierror = MPI_SUCCESS;
}

void mpi_dup_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
		 MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *extra,
			 MPI_Fint *ierror)
{
	*ierror = MPI_SUCCESS;
}

/* The same for datatypes (MPI_TYPE_NULL_COPY_FN...). */
void mpi_type_null_copy_fn_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
			    MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*flag = 0;
	*ierror = MPI_SUCCESS;
}

void mpi_type_dup_fn_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
		      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

void mpi_type_null_delete_fn_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value,
			      MPI_Aint *extra, MPI_Fint *ierror)
{
	*ierror = MPI_SUCCESS;
}

/* The same for windows (MPI_WIN_NULL_COPY_FN...). */
void mpi_win_null_copy_fn_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
			   MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*flag = 0;
	*ierror = MPI_SUCCESS;
}

void mpi_win_dup_fn_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
		     MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

void mpi_win_null_delete_fn_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value,
			     MPI_Aint *extra, MPI_Fint *ierror)
{
	*ierror = MPI_SUCCESS;
}

/* A keyval made from Fortran with a user function: its extra_state. */
struct fkey {
	mpi_fortran_fn *copy, *del; /* NULL: the predefined C function is used */
	MPI_Aint extra;             /* the user's extra_state */
	int mpi1;                   /* INTEGER values (MPI_KEYVAL_CREATE) */
	struct fkey *next;
};
static struct fkey *fkeys; /* all of them, kept to the end */

typedef void fortran_copy_fn(MPI_Fint *comm, MPI_Fint *keyval, void *extra, void *in, void *out,
			     MPI_Fint *flag, MPI_Fint *ierror);
typedef void fortran_delete_fn(MPI_Fint *comm, MPI_Fint *keyval, void *value, void *extra,
			       MPI_Fint *ierror);

/* A Fortran copy function on the object of Fortran number fc. */
static int copy_call(MPI_Fint fc, int keyval, void *extra, void *in, void *out, int *flag)
{
	struct fkey *k = extra;
	MPI_Fint fk = keyval, fflag = 0;
	MPI_Fint ierr = MPI_SUCCESS;

	if (k->mpi1) {
		MPI_Fint e = (MPI_Fint)k->extra, i = (MPI_Fint)(intptr_t)in, o = 0;

		((fortran_copy_fn *)k->copy)(&fc, &fk, &e, &i, &o, &fflag, &ierr);
		if (fflag)
			*(void **)out = (void *)(intptr_t)o;
	} else {
		MPI_Aint e = k->extra, i = (MPI_Aint)(intptr_t)in, o = 0;

		((fortran_copy_fn *)k->copy)(&fc, &fk, &e, &i, &o, &fflag, &ierr);
		if (fflag)
			*(void **)out = (void *)(intptr_t)o;
	}
	*flag = fflag != 0;
	return ierr;
}

static int delete_call(MPI_Fint fc, int keyval, void *value, void *extra)
{
	struct fkey *k = extra;
	MPI_Fint fk = keyval, ierr = MPI_SUCCESS;

	if (k->mpi1) {
		MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(intptr_t)value;

		((fortran_delete_fn *)k->del)(&fc, &fk, &v, &e, &ierr);
	} else {
		MPI_Aint e = k->extra, v = (MPI_Aint)(intptr_t)value;

		((fortran_delete_fn *)k->del)(&fc, &fk, &v, &e, &ierr);
	}
	return ierr;
}

static int copy_trampoline(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
			   int *flag)
{
	return copy_call(mpi_shim_c2f(MPI_SHIM_F_COMM, comm), keyval, extra, in, out, flag);
}

static int delete_trampoline(MPI_Comm comm, int keyval, void *value, void *extra)
{
	return delete_call(mpi_shim_c2f(MPI_SHIM_F_COMM, comm), keyval, value, extra);
}

static int type_copy_trampoline(MPI_Datatype type, int keyval, void *extra, void *in,
				void *out, int *flag)
{
	return copy_call(mpi_shim_c2f(MPI_SHIM_F_TYPE, type), keyval, extra, in, out, flag);
}

static int type_delete_trampoline(MPI_Datatype type, int keyval, void *value, void *extra)
{
	return delete_call(mpi_shim_c2f(MPI_SHIM_F_TYPE, type), keyval, value, extra);
}

static int win_copy_trampoline(MPI_Win win, int keyval, void *extra, void *in, void *out,
			       int *flag)
{
	return copy_call(mpi_shim_c2f(MPI_SHIM_F_WIN, win), keyval, extra, in, out, flag);
}

static int win_delete_trampoline(MPI_Win win, int keyval, void *value, void *extra)
{
	return delete_call(mpi_shim_c2f(MPI_SHIM_F_WIN, win), keyval, value, extra);
}

/* A record of the Fortran functions of a new keyval, kept to the end. */
static struct fkey *fkey_new(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Aint extra,
			     int mpi1)
{
	struct fkey *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->copy = copy;
	k->del = del;
	k->extra = extra;
	k->mpi1 = mpi1;
	return k;
}

static void fkey_keep(struct fkey *k)
{
	pthread_mutex_lock(&lock);
	k->next = fkeys;
	fkeys = k;
	pthread_mutex_unlock(&lock);
}

static int keyval_create(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Fint *keyval,
			 MPI_Aint extra, int mpi1, const char *call)
{
	MPI_Comm_copy_attr_function *ccopy = copy_trampoline;
	MPI_Comm_delete_attr_function *cdel = delete_trampoline;
	struct fkey *k;
	int rc;

	if (copy == (mpi_fortran_fn *)mpi_comm_null_copy_fn_ ||
	    copy == (mpi_fortran_fn *)mpi_null_copy_fn_)
		ccopy = MPI_COMM_NULL_COPY_FN;
	else if (copy == (mpi_fortran_fn *)mpi_comm_dup_fn_ ||
		 copy == (mpi_fortran_fn *)mpi_dup_fn_)
		ccopy = MPI_COMM_DUP_FN;
	if (del == (mpi_fortran_fn *)mpi_comm_null_delete_fn_ ||
	    del == (mpi_fortran_fn *)mpi_null_delete_fn_)
		cdel = MPI_COMM_NULL_DELETE_FN;
	if (ccopy != copy_trampoline && cdel != delete_trampoline)
		return PMPI_Comm_create_keyval(ccopy, cdel, keyval, (void *)(intptr_t)extra);
	if (!(k = fkey_new(copy, del, extra, mpi1)))
		return fail(MPI_ERR_NO_MEM, call);
	if ((rc = PMPI_Comm_create_keyval(ccopy, cdel, keyval, k))) {
		free(k);
		return rc;
	}
	fkey_keep(k);
	return MPI_SUCCESS;
}

void pmpi_comm_create_keyval_(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Fint *keyval,
			      MPI_Aint *extra, MPI_Fint *ierror)
{
	*ierror = keyval_create(copy, del, keyval, *extra, 0, "MPI_Comm_create_keyval");
}
MPI_FORTRAN_ALIAS(mpi_comm_create_keyval_);

void pmpi_keyval_create_(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Fint *keyval,
			 MPI_Fint *extra, MPI_Fint *ierror)
{
	*ierror = keyval_create(copy, del, keyval, *extra, 1, "MPI_Keyval_create");
}
MPI_FORTRAN_ALIAS(mpi_keyval_create_);

void pmpi_type_create_keyval_(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Fint *keyval,
			      MPI_Aint *extra, MPI_Fint *ierror)
{
	MPI_Type_copy_attr_function *ccopy = type_copy_trampoline;
	MPI_Type_delete_attr_function *cdel = type_delete_trampoline;
	struct fkey *k;

	if (copy == (mpi_fortran_fn *)mpi_type_null_copy_fn_)
		ccopy = MPI_TYPE_NULL_COPY_FN;
	else if (copy == (mpi_fortran_fn *)mpi_type_dup_fn_)
		ccopy = MPI_TYPE_DUP_FN;
	if (del == (mpi_fortran_fn *)mpi_type_null_delete_fn_)
		cdel = MPI_TYPE_NULL_DELETE_FN;
	if (ccopy != type_copy_trampoline && cdel != type_delete_trampoline) {
		*ierror = PMPI_Type_create_keyval(ccopy, cdel, keyval, (void *)(intptr_t)*extra);
		return;
	}
	if (!(k = fkey_new(copy, del, *extra, 0))) {
		*ierror = fail(MPI_ERR_NO_MEM, "MPI_Type_create_keyval");
		return;
	}
	if ((*ierror = PMPI_Type_create_keyval(ccopy, cdel, keyval, k)))
		free(k);
	else
		fkey_keep(k);
}
MPI_FORTRAN_ALIAS(mpi_type_create_keyval_);

void pmpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
			 MPI_Fint *ierror)
{
	void *v = NULL;
	int f = 0;

	*ierror = PMPI_Type_get_attr(mpi_shim_f2c(MPI_SHIM_F_TYPE, *type), *keyval, &v, &f);
	if (*ierror == MPI_SUCCESS && f)
		*value = (MPI_Aint)(intptr_t)v;
	*flag = f != 0;
}
MPI_FORTRAN_ALIAS(mpi_type_get_attr_);

void pmpi_win_create_keyval_(mpi_fortran_fn *copy, mpi_fortran_fn *del, MPI_Fint *keyval,
			     MPI_Aint *extra, MPI_Fint *ierror)
{
	MPI_Win_copy_attr_function *ccopy = win_copy_trampoline;
	MPI_Win_delete_attr_function *cdel = win_delete_trampoline;
	struct fkey *k;

	if (copy == (mpi_fortran_fn *)mpi_win_null_copy_fn_)
		ccopy = MPI_WIN_NULL_COPY_FN;
	else if (copy == (mpi_fortran_fn *)mpi_win_dup_fn_)
		ccopy = MPI_WIN_DUP_FN;
	if (del == (mpi_fortran_fn *)mpi_win_null_delete_fn_)
		cdel = MPI_WIN_NULL_DELETE_FN;
	if (ccopy != win_copy_trampoline && cdel != win_delete_trampoline) {
		*ierror = PMPI_Win_create_keyval(ccopy, cdel, keyval, (void *)(intptr_t)*extra);
		return;
	}
	if (!(k = fkey_new(copy, del, *extra, 0))) {
		*ierror = fail(MPI_ERR_NO_MEM, "MPI_Win_create_keyval");
		return;
	}
	if ((*ierror = PMPI_Win_create_keyval(ccopy, cdel, keyval, k)))
		free(k);
	else
		fkey_keep(k);
}
MPI_FORTRAN_ALIAS(mpi_win_create_keyval_);

/*
 * A window attribute as Fortran sees it: MPI_WIN_BASE the base address,
 * the other predefined keys the value C returns the address of (an
 * MPI_Aint for MPI_WIN_SIZE, an int for the others), a user key the value
 * stored.
 */
void pmpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
			MPI_Fint *ierror)
{
	void *v = NULL;
	int f = 0;

	*ierror = PMPI_Win_get_attr(mpi_shim_f2c(MPI_SHIM_F_WIN, *win), *keyval, &v, &f);
	if (*ierror != MPI_SUCCESS)
		return;
	*flag = f != 0;
	if (!f)
		return;
	switch (*keyval) {
	case MPI_WIN_SIZE:
		*value = *(MPI_Aint *)v;
		break;
	case MPI_WIN_DISP_UNIT:
	case MPI_WIN_CREATE_FLAVOR:
	case MPI_WIN_MODEL:
		*value = *(int *)v;
		break;
	default:
		*value = (MPI_Aint)(intptr_t)v;
	}
}
MPI_FORTRAN_ALIAS(mpi_win_get_attr_);

/* An attribute's value as Fortran sees it: the predefined ones are
 * integers C returns the address of; the others are the value stored. */
static MPI_Aint attr_value(int keyval, void *v)
{
	switch (keyval) {
	case MPI_TAG_UB:
	case MPI_HOST:
	case MPI_IO:
	case MPI_WTIME_IS_GLOBAL:
	case MPI_UNIVERSE_SIZE:
	case MPI_APPNUM:
	case MPI_LASTUSEDCODE:
		return *(int *)v;
	}
	return (MPI_Aint)(intptr_t)v;
}

void pmpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
			 MPI_Fint *ierror)
{
	void *v = NULL;
	int f = 0;

	*ierror = PMPI_Comm_get_attr(mpi_shim_f2c(MPI_SHIM_F_COMM, *comm), *keyval, &v, &f);
	if (*ierror == MPI_SUCCESS && f)
		*value = attr_value(*keyval, v);
	*flag = f != 0;
}
MPI_FORTRAN_ALIAS(mpi_comm_get_attr_);

void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag,
		    MPI_Fint *ierror)
{
	void *v = NULL;
	int f = 0;

	*ierror = PMPI_Comm_get_attr(mpi_shim_f2c(MPI_SHIM_F_COMM, *comm), *keyval, &v, &f);
	if (*ierror == MPI_SUCCESS && f)
		*value = (MPI_Fint)attr_value(*keyval, v);
	*flag = f != 0;
}
MPI_FORTRAN_ALIAS(mpi_attr_get_);

/* --- The other calls written by hand --- */

void pmpi_init_(MPI_Fint *ierror)
{
	*ierror = PMPI_Init(NULL, NULL);
}
MPI_FORTRAN_ALIAS(mpi_init_);

void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
	*ierror = PMPI_Init_thread(NULL, NULL, *required, provided);
}
MPI_FORTRAN_ALIAS(mpi_init_thread_);

/* MPI_INFO_CREATE_ENV has no argc and argv: the kernel's command line. */
void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
	MPI_Info c = MPI_INFO_NULL;

	if ((*ierror = PMPI_Info_create_env(0, NULL, &c)) == MPI_SUCCESS)
		mpi_fortran_handle_out(MPI_SHIM_F_INFO, info, c);
}
MPI_FORTRAN_ALIAS(mpi_info_create_env_);

/* MPI_SIZEOF of an element too large for its INTEGER size (sizeof.f90). */
void mpi_fortran_sizeof_error_(MPI_Fint *ierror)
{
	*ierror = fail(MPI_ERR_ARG, "MPI_SIZEOF");
}

/* Fortran cannot use the address C returns: only the size is given back. */
void pmpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
	void *b = NULL;

	*ierror = PMPI_Buffer_detach(&b, size);
}
MPI_FORTRAN_ALIAS(mpi_buffer_detach_);

/*
 * MPI_INFO_GET_STRING: buflen counts characters (C counts the terminating
 * null too).  On entry, how many of the value to write into value (0: only
 * the length is asked), the rest of value blank; on return, the value's
 * whole length.
 */
void pmpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
			   MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len)
{
	int n = *buflen, cn = n > 0 ? n + 1 : n, f = 0;
	char *k = NULL, *v = NULL;

	if ((*ierror = mpi_fortran_istr_in(key, key_len, &k, "MPI_Info_get_string")))
		return;
	if (n > 0 && !(v = calloc(n + 1, 1))) {
		free(k);
		*ierror = fail(MPI_ERR_NO_MEM, "MPI_Info_get_string");
		return;
	}
	*ierror = PMPI_Info_get_string(mpi_shim_f2c(MPI_SHIM_F_INFO, *info), k, &cn, v, &f);
	if (*ierror == MPI_SUCCESS) {
		*flag = f != 0;
		if (f && v)
			mpi_fortran_str_out(value, value_len, v);
		if (f)
			*buflen = cn - 1;
	}
	free(k);
	free(v);
}
MPI_FORTRAN_ALIAS(mpi_info_get_string_);

/*
 * Generalized requests: the Fortran query, free and cancel functions and
 * the address of the program's EXTRA_STATE variable go into a record, the
 * C extra_state; the free function is the last call on it.  Each function
 * gets that variable itself, as Fortran passes arguments: what one
 * function stores there, the next one and the program see (so the
 * variable must outlive the request, up to its free function).
 */
struct fgreq {
	mpi_fortran_fn *query, *free, *cancel;
	MPI_Aint *extra;
};

typedef void fortran_greq_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void fortran_greq_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void fortran_greq_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

static int greq_query(void *extra, MPI_Status *status)
{
	struct fgreq *g = extra;
	MPI_Fint fs[sizeof(MPI_Status) / sizeof(MPI_Fint)], ierr = MPI_SUCCESS;

	memcpy(fs, status, sizeof(*status));
	((fortran_greq_query_fn *)g->query)(g->extra, fs, &ierr);
	memcpy(status, fs, sizeof(*status));
	return ierr;
}

static int greq_free(void *extra)
{
	struct fgreq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	((fortran_greq_free_fn *)g->free)(g->extra, &ierr);
	free(g);
	return ierr;
}

static int greq_cancel(void *extra, int complete)
{
	struct fgreq *g = extra;
	MPI_Fint fcomplete = complete != 0, ierr = MPI_SUCCESS;

	((fortran_greq_cancel_fn *)g->cancel)(g->extra, &fcomplete, &ierr);
	return ierr;
}

void pmpi_grequest_start_(mpi_fortran_fn *query, mpi_fortran_fn *freefn, mpi_fortran_fn *cancel,
			  MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
	MPI_Request r = MPI_REQUEST_NULL;
	struct fgreq *g;

	if (!query || !freefn || !cancel) {
		*ierror = fail(MPI_ERR_ARG, "MPI_Grequest_start");
		return;
	}
	if (!(g = malloc(sizeof(*g)))) {
		*ierror = fail(MPI_ERR_NO_MEM, "MPI_Grequest_start");
		return;
	}
	g->query = query;
	g->free = freefn;
	g->cancel = cancel;
	g->extra = extra;
	if ((*ierror = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r)))
		free(g);
	else
		mpi_fortran_handle_out(MPI_SHIM_F_REQUEST, request, r);
}
MPI_FORTRAN_ALIAS(mpi_grequest_start_);

/*
 * MPI_REGISTER_DATAREP: the Fortran conversion and extent functions and
 * the program's EXTRA_STATE go into a record, the C extra_state, kept to
 * the end (a data representation cannot be removed).  The C functions
 * below call the Fortran ones with the datatype's number and copies of
 * the integers; MPI_CONVERSION_FN_NULL becomes C's.
 */
struct fdatarep {
	mpi_fortran_fn *read, *write, *extent;
	MPI_Aint extra;
	struct fdatarep *next;
};
static struct fdatarep *fdatareps;

typedef void fortran_conversion_fn(void *userbuf, MPI_Fint *datatype, MPI_Fint *count,
				   void *filebuf, MPI_Offset *position, MPI_Aint *extra,
				   MPI_Fint *ierror);
typedef void fortran_extent_fn(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra,
			       MPI_Fint *ierror);

/* MPI_CONVERSION_FN_NULL as Fortran passes it: never called. */
void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
			     MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror)
{
	*ierror = MPI_ERR_CONVERSION;
}

static int conversion_call(mpi_fortran_fn *fn, void *userbuf, MPI_Datatype datatype, int count,
			   void *filebuf, MPI_Offset position, struct fdatarep *d)
{
	MPI_Fint ft = mpi_shim_c2f(MPI_SHIM_F_TYPE, datatype), n = count;
	MPI_Fint ierr = MPI_SUCCESS;
	MPI_Offset pos = position;
	MPI_Aint e = d->extra;

	((fortran_conversion_fn *)fn)(userbuf, &ft, &n, filebuf, &pos, &e, &ierr);
	return ierr;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
			MPI_Offset position, void *extra)
{
	struct fdatarep *d = extra;

	return conversion_call(d->read, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
			 MPI_Offset position, void *extra)
{
	struct fdatarep *d = extra;

	return conversion_call(d->write, userbuf, datatype, count, filebuf, position, d);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *file_extent, void *extra)
{
	struct fdatarep *d = extra;
	MPI_Fint ft = mpi_shim_c2f(MPI_SHIM_F_TYPE, datatype), ierr = MPI_SUCCESS;
	MPI_Aint ext = 0, e = d->extra;

	((fortran_extent_fn *)d->extent)(&ft, &ext, &e, &ierr);
	if (ierr == MPI_SUCCESS)
		*file_extent = ext;
	return ierr;
}

void pmpi_register_datarep_(char *datarep, mpi_fortran_fn *read, mpi_fortran_fn *write,
			    mpi_fortran_fn *extent, MPI_Aint *extra, MPI_Fint *ierror,
			    size_t datarep_len)
{
	mpi_fortran_fn *null = (mpi_fortran_fn *)mpi_conversion_fn_null_;
	struct fdatarep *d;
	char *name = NULL;

	if ((*ierror = mpi_fortran_str_in(datarep, datarep_len, &name, "MPI_Register_datarep")))
		return;
	if (!(d = malloc(sizeof(*d)))) {
		free(name);
		*ierror = fail(MPI_ERR_NO_MEM, "MPI_Register_datarep");
		return;
	}
	d->read = read == null ? NULL : read;
	d->write = write == null ? NULL : write;
	d->extent = extent;
	d->extra = *extra;
	*ierror = PMPI_Register_datarep(name, d->read ? datarep_read : MPI_CONVERSION_FN_NULL,
					d->write ? datarep_write : MPI_CONVERSION_FN_NULL,
					extent ? datarep_extent : NULL, d);
	free(name);
	if (*ierror) {
		free(d);
		return;
	}
	pthread_mutex_lock(&lock);
	d->next = fdatareps;
	fdatareps = d;
	pthread_mutex_unlock(&lock);
}
MPI_FORTRAN_ALIAS(mpi_register_datarep_);

/*
 * Process creation.  The commands, arguments, counts and infos of the
 * spawn calls are read at the root only (MPI-3.1 10.3.2), so they are
 * converted there only: elsewhere they may be anything, an ARGV without its
 * blank entry too, and C is given NULL arrays it does not read.  An
 * argument list ends at its first entry that is all blanks; each string
 * loses its trailing blanks, as every CHARACTER input does.
 */

/* 1 if the calling process is the root of a spawn on comm (an
 * intra-communicator that may be used); otherwise C reports what is wrong. */
static int spawn_root(MPI_Comm comm, MPI_Fint root)
{
	return mpi_shim_comm_ok(comm) && !mpi_shim_is_inter(comm) && comm->rank == root;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static int blank(const char *f, size_t len)
{
	while (len && f[len - 1] == ' ')
		len--;
	return len == 0;
}

/* The arguments at f, f + stride, f + 2 * stride... (len characters each),
 * up to the first blank one: a NULL-ended C array of C strings. */
static int argv_in(const char *f, size_t len, size_t stride, char ***c, const char *call)
{
	size_t n = 0, i;
	int rc;

	while (!blank(f + n * stride, len))
		n++;
	if (!(*c = calloc(n + 1, sizeof(**c))))
		return fail(MPI_ERR_NO_MEM, call);
	for (i = 0; i < n; i++) {
		if ((rc = mpi_fortran_str_in(f + i * stride, len, &(*c)[i], call))) {
			argv_free(*c);
			*c = NULL;
			return rc;
		}
	}
	return MPI_SUCCESS;
}

void pmpi_comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info,
		      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
		      MPI_Fint *ierror, size_t command_len, size_t argv_len)
{
	static const char call[] = "MPI_Comm_spawn";
	MPI_Comm c = mpi_shim_f2c(MPI_SHIM_F_COMM, *comm), ic = MPI_COMM_NULL;
	char *cmd = NULL, **cargv = NULL;
	int rc;

	pthread_once(&commons_once, commons_load);
	if (spawn_root(c, *root)) {
		if ((rc = mpi_fortran_str_in(command, command_len, &cmd, call)))
			goto out;
		if (argv != argv_null && (rc = argv_in(argv, argv_len, argv_len, &cargv, call)))
			goto out;
	}
	rc = PMPI_Comm_spawn(cmd, cargv, *maxprocs, mpi_shim_f2c(MPI_SHIM_F_INFO, *info), *root,
			     c, &ic, mpi_fortran_errcodes(errcodes));
	if (rc == MPI_SUCCESS)
		mpi_fortran_handle_out(MPI_SHIM_F_COMM, intercomm, ic);
out:
	free(cmd);
	argv_free(cargv);
	*ierror = rc;
}
MPI_FORTRAN_ALIAS(mpi_comm_spawn_);

/* ARRAY_OF_ARGV(COUNT, *): the arguments of command i are its row i, the
 * strings i, i + COUNT, i + 2 * COUNT... of the array. */
void pmpi_comm_spawn_multiple_(MPI_Fint *count, char *commands, char *argvs,
			       MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root,
			       MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
			       MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
	static const char call[] = "MPI_Comm_spawn_multiple";
	MPI_Comm c = mpi_shim_f2c(MPI_SHIM_F_COMM, *comm), ic = MPI_COMM_NULL;
	int n = *count > 0 ? *count : 0, rc = MPI_SUCCESS, i;
	char **ccmds = NULL, ***cargvs = NULL;
	void **cinfos = NULL;

	pthread_once(&commons_once, commons_load);
	if (spawn_root(c, *root) && n > 0) {
		if (!(ccmds = calloc(n, sizeof(*ccmds))) ||
		    (argvs != argvs_null && !(cargvs = calloc(n, sizeof(*cargvs))))) {
			rc = fail(MPI_ERR_NO_MEM, call);
			goto out;
		}
		for (i = 0; i < n && !rc; i++)
			rc = mpi_fortran_str_in(commands + i * commands_len, commands_len,
						&ccmds[i], call);
		for (i = 0; cargvs && i < n && !rc; i++)
			rc = argv_in(argvs + i * argvs_len, argvs_len, (size_t)n * argvs_len,
				     &cargvs[i], call);
		if (rc || (rc = mpi_fortran_handles_in(MPI_SHIM_F_INFO, infos, n, &cinfos, call)))
			goto out;
	}
	rc = PMPI_Comm_spawn_multiple(*count, ccmds, cargvs, maxprocs, (MPI_Info *)cinfos, *root,
				      c, &ic, mpi_fortran_errcodes(errcodes));
	if (rc == MPI_SUCCESS)
		mpi_fortran_handle_out(MPI_SHIM_F_COMM, intercomm, ic);
out:
	for (i = 0; ccmds && i < n; i++)
		free(ccmds[i]);
	for (i = 0; cargvs && i < n; i++)
		argv_free(cargvs[i]);
	free(ccmds);
	free(cargvs);
	free(cinfos);
	*ierror = rc;
}
MPI_FORTRAN_ALIAS(mpi_comm_spawn_multiple_);

/* The parent is one handle (MPI-3.1 10.3.2): its number is held the first
 * time only, so that the MPI_COMM_DISCONNECT or MPI_COMM_FREE that ends it
 * gives the number back. */
void pmpi_comm_get_parent_(MPI_Fint *parent, MPI_Fint *ierror)
{
	static const void *held;
	MPI_Comm c = MPI_COMM_NULL;

	if ((*ierror = PMPI_Comm_get_parent(&c)) != MPI_SUCCESS)
		return;
	*parent = mpi_shim_c2f(MPI_SHIM_F_COMM, c);
	pthread_mutex_lock(&lock);
	if (c != MPI_COMM_NULL && c != held) {
		mpi_shim_f_hold(MPI_SHIM_F_COMM, *parent);
		held = c;
	}
	pthread_mutex_unlock(&lock);
}
MPI_FORTRAN_ALIAS(mpi_comm_get_parent_);
