/* SPDX-License-Identifier: MIT */
/*
 * datarep.c - data representations (MPI-3.1 section 13.5): how the data of
 * an access look in the file, and MPI_Register_datarep.
 *
 * Every representation works on count elements of a datatype t; the file
 * form of those elements is one contiguous run of bytes (the view places
 * it, view.c), and the "data items" of the standard are the basic
 * elements of t's type signature, in the order of t's packed form.
 *
 * "native"      the packed form of the elements: t->size bytes per
 *               element, the bytes as they are in memory (this machine's
 *               byte order and sizes).  Writing packs
 *               (mpi_shim_datatype_pack, a memcpy for a contiguous t),
 *               reading unpacks.  The file extent of t is its extent.
 *
 * "internal"    the same bytes as "native".  The standard leaves internal
 *               to the implementation, for files that one implementation
 *               writes and reads on machines that may differ; this one
 *               runs on machines of the same kind, so native's bytes serve
 *               and cost no conversion.  A file written as internal reads
 *               back as native and the reverse.
 *
 * "external32"  the standard's portable form (section 13.5.2), the one of
 *               MPI_Pack_external: big-endian, IEEE floating point, the
 *               sizes of the standard's table (a long takes 4 bytes, a
 *               long double 16).  The elements are packed to the native
 *               packed form in a temporary, then converted by
 *               datatype/type_external.c (mpi_shim_external32_encode); a
 *               read decodes, then unpacks.  A file and a buffer of
 *               MPI_Pack_external hold the same bytes.  A value that does
 *               not fit its external32 size (a long beyond 32 bits) makes
 *               the write fail with MPI_ERR_CONVERSION; a type with no
 *               external32 form is MPI_ERR_UNSUPPORTED_DATAREP.
 *
 * registered    a name of MPI_Register_datarep, with the program's three
 *               functions.  The file size of a basic type is what the
 *               extent function says for it, asked once per basic kind and
 *               kept; the size of an element of t is the sum over its
 *               basic elements (mpi_shim_datatype_for_each_basic).  An
 *               extent function that fails, or gives a negative size, is
 *               MPI_ERR_CONVERSION.
 *
 *               A write calls write_fn(userbuf, t, n, filebuf, position,
 *               extra_state) and a read read_fn(...) as section 13.5.3
 *               says: n counts data items (basic elements), position is
 *               the index of the first one in the typemap of t tiled over
 *               userbuf, and userbuf is the start of the operation's
 *               buffer, the same in every call of one operation.  Since
 *               mpi_shim_datarep_to_file receives the elements at buf,
 *               `position` elements into the operation, the buffer handed
 *               to the functions is buf - position * extent(t) and their
 *               position is position times the items of one element.  n
 *               is an int: a larger access is converted in pieces of whole
 *               elements of at most INT_MAX items, userbuf kept, filebuf
 *               advanced by the file bytes and position by the items done.
 *               A function that returns other than MPI_SUCCESS is
 *               MPI_ERR_CONVERSION.
 *
 *               MPI_CONVERSION_FN_NULL for a direction means that MPI does
 *               no conversion and moves the native bytes (section 13.5.3);
 *               the sizes still come from the extent function, so they
 *               must be the native ones: an access through a null function
 *               on a type whose file size differs from its native size is
 *               MPI_ERR_CONVERSION (the bytes could not be placed
 *               otherwise).
 *
 * The file extent of t (MPI_File_get_type_extent) outside "native": for a
 * registered representation and a predefined t, the extent function's
 * answer (section 13.5.3: the bytes t takes in the file).  Otherwise, when
 * one element of t takes as many bytes in the file as in memory (in
 * external32, every type but those holding a long, an unsigned long or a
 * wchar_t, 8, 8 and 4 bytes here against 4, 4 and 2), it is t's extent.
 * When the sizes differ and t has no holes (extent equal to size), it is
 * the file size of one element; with holes, t's extent with the data part
 * replaced by its file size (extent - size + file size): the holes are
 * kept as they are, which is exact when the differing elements come last,
 * and the nearest simple rule otherwise (the elements' offsets would have
 * to be laid out anew, which the standard does not define).
 *
 * The registry is the process's own (MPI_Register_datarep is local); it
 * lives until MPI_Finalize (mpi_shim_datarep_fini), as the standard has no
 * call to remove an entry.  Every call runs under BIP's lock
 * (MPI_SHIM_ENTER), the one the I/O calls that use a representation hold,
 * so the registry and its size caches need no lock of their own.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "datatype.h"
#include "io.h"

enum datarep_kind {
	DATAREP_NATIVE,     /* native and internal */
	DATAREP_EXTERNAL32,
	DATAREP_USER,       /* MPI_Register_datarep */
};

struct mpi_shim_datarep {
	enum datarep_kind kind;
	char name[MPI_MAX_DATAREP_STRING];
	/* DATAREP_USER only */
	MPI_Datarep_conversion_function *read_fn, *write_fn; /* NULL: native bytes */
	MPI_Datarep_extent_function *extent_fn;
	void *extra_state;
	/* The extent function's answer for each basic kind, -1 until asked.
	 * A pointer, so that the cache may fill through the const handles
	 * that mpi_shim_datarep_find gives. */
	MPI_Aint *file_size;
	struct mpi_shim_datarep *next;
};

static const struct mpi_shim_datarep datarep_native = {
	.kind = DATAREP_NATIVE,
	.name = "native",
};
static const struct mpi_shim_datarep datarep_internal = {
	.kind = DATAREP_NATIVE,
	.name = "internal",
};
static const struct mpi_shim_datarep datarep_external32 = {
	.kind = DATAREP_EXTERNAL32,
	.name = "external32",
};

static const struct mpi_shim_datarep *const datarep_predefined[] = {
	&datarep_native,
	&datarep_internal,
	&datarep_external32,
};

/* Registered representations, newest first. */
static struct mpi_shim_datarep *datarep_registry;

const struct mpi_shim_datarep *mpi_shim_datarep_find(const char *name)
{
	const struct mpi_shim_datarep *rep;
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(datarep_predefined) / sizeof(datarep_predefined[0]); i++)
		if (!strcmp(datarep_predefined[i]->name, name))
			return datarep_predefined[i];
	for (rep = datarep_registry; rep; rep = rep->next)
		if (!strcmp(rep->name, name))
			return rep;
	return NULL;
}

int mpi_shim_datarep_is_native(const struct mpi_shim_datarep *rep)
{
	return rep->kind == DATAREP_NATIVE;
}

const char *mpi_shim_datarep_name(const struct mpi_shim_datarep *rep)
{
	return rep->name;
}

/* --- Registered representations: sizes --- */

/* One element of t in a registered representation. */
struct user_element {
	const struct mpi_shim_datarep *rep;
	uint64_t bytes; /* in the file */
	uint64_t items; /* basic elements (the conversion functions' data items) */
};

/* The file size of one basic element, from the cache or the extent function. */
static int user_basic_size(const struct mpi_shim_datarep *rep, MPI_Datatype basic,
			   MPI_Aint *size)
{
	unsigned kind = (unsigned)basic->kind;
	int cached = kind != MPI_SHIM_BASIC_NONE && kind < MPI_SHIM_BASIC_COUNT_OF_KINDS;
	MPI_Aint e = 0;

	if (cached && rep->file_size[kind] >= 0) {
		*size = rep->file_size[kind];
		return MPI_SUCCESS;
	}
	if (rep->extent_fn(basic, &e, rep->extra_state) != MPI_SUCCESS || e < 0)
		return MPI_ERR_CONVERSION;
	if (cached)
		rep->file_size[kind] = e;
	*size = e;
	return MPI_SUCCESS;
}

static int user_element_run(void *arg, MPI_Datatype basic, uint64_t n)
{
	struct user_element *u = arg;
	uint64_t run;
	MPI_Aint e;
	int rc;

	if ((rc = user_basic_size(u->rep, basic, &e)))
		return rc;
	if (__builtin_mul_overflow(n, (uint64_t)e, &run) ||
	    __builtin_add_overflow(u->bytes, run, &u->bytes))
		return MPI_ERR_COUNT;
	u->items += n;
	return MPI_SUCCESS;
}

static int user_element(const struct mpi_shim_datarep *rep, MPI_Datatype t,
			struct user_element *u)
{
	*u = (struct user_element){.rep = rep};
	return mpi_shim_datatype_for_each_basic(t, 1, user_element_run, u);
}

/* --- Sizes and extents --- */

/* The file bytes of one element of t: MPI_SUCCESS or an error class. */
static int element_size(const struct mpi_shim_datarep *rep, MPI_Datatype t, uint64_t *bytes)
{
	struct user_element u;
	int rc;

	switch (rep->kind) {
	case DATAREP_NATIVE:
		*bytes = t->size;
		return MPI_SUCCESS;
	case DATAREP_EXTERNAL32:
		rc = mpi_shim_external32_size(t, 1, bytes);
		return rc == MPI_ERR_TYPE ? MPI_ERR_UNSUPPORTED_DATAREP : rc;
	case DATAREP_USER:
		if ((rc = user_element(rep, t, &u)))
			return rc;
		*bytes = u.bytes;
		return MPI_SUCCESS;
	}
	return MPI_ERR_INTERN;
}

/*
 * MPI_ERR_COUNT when the total passes MPI_Offset: no file could hold it,
 * and the caller reports it as it reports a count too large.
 */
int mpi_shim_datarep_size(const struct mpi_shim_datarep *rep, MPI_Datatype t, MPI_Count count,
			  MPI_Offset *bytes)
{
	uint64_t one, all;
	int rc;

	if (count <= 0 || !t->size) {
		*bytes = 0;
		return MPI_SUCCESS;
	}
	if ((rc = element_size(rep, t, &one)))
		return rc;
	if (__builtin_mul_overflow(one, (uint64_t)count, &all) || all > INT64_MAX)
		return MPI_ERR_COUNT;
	*bytes = (MPI_Offset)all;
	return MPI_SUCCESS;
}

int mpi_shim_datarep_extent(const struct mpi_shim_datarep *rep, MPI_Datatype t,
			    MPI_Aint *extent)
{
	uint64_t one;
	int rc;

	if (rep->kind == DATAREP_NATIVE || !t->size) {
		*extent = t->extent;
		return MPI_SUCCESS;
	}
	if ((rc = element_size(rep, t, &one)))
		return rc;
	if (one > (uint64_t)INTPTR_MAX)
		return MPI_ERR_COUNT;
	if (rep->kind == DATAREP_USER && t->predefined && t->basic == t && t->nbasic == 1)
		*extent = (MPI_Aint)one;
	else if (one == t->size)
		*extent = t->extent;
	else if (t->extent == (MPI_Aint)t->size)
		*extent = (MPI_Aint)one;
	else
		*extent = t->extent - (MPI_Aint)t->size + (MPI_Aint)one;
	return MPI_SUCCESS;
}

/* --- Moving the data --- */

/* native: the packed form is the file form (a memcpy for a contiguous t). */
static void native_to_file(const void *buf, MPI_Count count, MPI_Datatype t, void *out)
{
	mpi_shim_datatype_pack(buf, (size_t)count, t, 0, out, (size_t)count * t->size);
}

static void native_from_file(const void *in, void *buf, MPI_Count count, MPI_Datatype t)
{
	mpi_shim_datatype_unpack(in, (size_t)count * t->size, buf, (size_t)count, t, 0);
}

static int external32_error(int rc)
{
	return rc == MPI_ERR_TYPE ? MPI_ERR_UNSUPPORTED_DATAREP : rc;
}

/*
 * A contiguous t is its own native packed form, so it is converted where
 * it is; any other goes through a temporary of count * t->size bytes.
 */
static int external32_to_file(const void *buf, MPI_Count count, MPI_Datatype t, void *out)
{
	size_t native = (size_t)count * t->size;
	unsigned char *tmp;
	int rc;

	if (t->contiguous)
		return external32_error(mpi_shim_external32_encode(
			t, (uint64_t)count, mpi_shim_datatype_start(buf, t), out));
	tmp = malloc(native);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	mpi_shim_datatype_pack(buf, (size_t)count, t, 0, tmp, native);
	rc = mpi_shim_external32_encode(t, (uint64_t)count, tmp, out);
	free(tmp);
	return external32_error(rc);
}

static int external32_from_file(const void *in, void *buf, MPI_Count count, MPI_Datatype t)
{
	size_t native = (size_t)count * t->size;
	unsigned char *tmp;
	int rc;

	if (t->contiguous)
		return external32_error(mpi_shim_external32_decode(
			t, (uint64_t)count, in, mpi_shim_datatype_start(buf, t)));
	tmp = malloc(native);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	rc = mpi_shim_external32_decode(t, (uint64_t)count, in, tmp);
	if (!rc)
		mpi_shim_datatype_unpack(tmp, native, buf, (size_t)count, t, 0);
	free(tmp);
	return external32_error(rc);
}

/*
 * A registered representation: fn (the read or the write function) over
 * count elements of t at buf, `position` elements into the operation,
 * and their file form at file (section 13.5.3's arguments, see the top
 * of the file).  write: which direction, for MPI_CONVERSION_FN_NULL.
 */
static int user_convert(const struct mpi_shim_datarep *rep, MPI_Datarep_conversion_function *fn,
			int write, void *buf, MPI_Count count, MPI_Datatype t, unsigned char *file,
			MPI_Offset position)
{
	struct user_element u;
	uint64_t per_call, done, n, first;
	uintptr_t userbuf;
	int rc;

	if ((rc = user_element(rep, t, &u)))
		return rc;
	if (!fn) {
		/* No conversion: the native bytes, which must fill exactly
		 * the sizes the extent function gave. */
		if (u.bytes != t->size)
			return MPI_ERR_CONVERSION;
		if (write)
			native_to_file(buf, count, t, file);
		else
			native_from_file(file, buf, count, t);
		return MPI_SUCCESS;
	}
	if (!u.items)
		return MPI_SUCCESS;
	/* Pieces of whole elements, so that each starts where the file form
	 * of an element starts; an element of more than INT_MAX items cannot
	 * be passed at all. */
	per_call = INT_MAX / u.items;
	if (!per_call)
		return MPI_ERR_CONVERSION;
	if (__builtin_mul_overflow((uint64_t)position, u.items, &first) || first > INT64_MAX)
		return MPI_ERR_COUNT;
	/* The start of the operation's buffer, as an integer: buf less the
	 * elements before it may lie outside any object (as
	 * mpi_shim_datatype_start computes). */
	userbuf = (uintptr_t)buf - (uintptr_t)((intptr_t)position * t->extent);
	for (done = 0; done < (uint64_t)count; done += n) {
		n = (uint64_t)count - done < per_call ? (uint64_t)count - done : per_call;
		rc = fn((void *)userbuf, t, (int)(n * u.items), file + done * u.bytes,
			(MPI_Offset)(first + done * u.items), rep->extra_state);
		if (rc != MPI_SUCCESS)
			return MPI_ERR_CONVERSION;
	}
	return MPI_SUCCESS;
}

int mpi_shim_datarep_to_file(const struct mpi_shim_datarep *rep, const void *buf,
			     MPI_Count count, MPI_Datatype t, void *out, MPI_Offset position)
{
	if (count <= 0 || !t->size)
		return MPI_SUCCESS;
	switch (rep->kind) {
	case DATAREP_NATIVE:
		native_to_file(buf, count, t, out);
		return MPI_SUCCESS;
	case DATAREP_EXTERNAL32:
		return external32_to_file(buf, count, t, out);
	case DATAREP_USER:
		/* The write function only reads userbuf. */
		return user_convert(rep, rep->write_fn, 1, (void *)buf, count, t, out, position);
	}
	return MPI_ERR_INTERN;
}

int mpi_shim_datarep_from_file(const struct mpi_shim_datarep *rep, const void *in, void *buf,
			       MPI_Count count, MPI_Datatype t, MPI_Offset position)
{
	if (count <= 0 || !t->size)
		return MPI_SUCCESS;
	switch (rep->kind) {
	case DATAREP_NATIVE:
		native_from_file(in, buf, count, t);
		return MPI_SUCCESS;
	case DATAREP_EXTERNAL32:
		return external32_from_file(in, buf, count, t);
	case DATAREP_USER:
		/* The read function only reads filebuf. */
		return user_convert(rep, rep->read_fn, 0, buf, count, t, (unsigned char *)in,
				    position);
	}
	return MPI_ERR_INTERN;
}

/* --- MPI_Register_datarep --- */

void mpi_shim_datarep_fini(void)
{
	struct mpi_shim_datarep *rep, *next;

	for (rep = datarep_registry; rep; rep = next) {
		next = rep->next;
		free(rep->file_size);
		free(rep);
	}
	datarep_registry = NULL;
}

/*
 * Errors go to the default file error handler (MPI_FILE_NULL's), as for
 * every I/O call that has no file (section 13.7).
 */
int PMPI_Register_datarep(const char *datarep,
			  MPI_Datarep_conversion_function *read_conversion_fn,
			  MPI_Datarep_conversion_function *write_conversion_fn,
			  MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Register_datarep";
	struct mpi_shim_datarep *rep;
	size_t len, i;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!datarep || !datarep[0])
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call, "datarep is %s",
					 datarep ? "empty" : "NULL");
	len = strnlen(datarep, MPI_MAX_DATAREP_STRING);
	if (len >= MPI_MAX_DATAREP_STRING)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call,
					 "datarep is longer than %d characters "
					 "(MPI_MAX_DATAREP_STRING - 1)",
					 MPI_MAX_DATAREP_STRING - 1);
	if (!dtype_file_extent_fn)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call,
					 "dtype_file_extent_fn is NULL: the sizes in the file of "
					 "\"%s\" come from it",
					 datarep);
	if (mpi_shim_datarep_find(datarep))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, call,
					 "data representation \"%s\" is already defined", datarep);
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		goto err_nomem;
	rep->file_size = malloc(MPI_SHIM_BASIC_COUNT_OF_KINDS * sizeof(*rep->file_size));
	if (!rep->file_size)
		goto err_free_rep;
	for (i = 0; i < MPI_SHIM_BASIC_COUNT_OF_KINDS; i++)
		rep->file_size[i] = -1;
	rep->kind = DATAREP_USER;
	memcpy(rep->name, datarep, len + 1);
	rep->read_fn = read_conversion_fn;
	rep->write_fn = write_conversion_fn;
	rep->extent_fn = dtype_file_extent_fn;
	rep->extra_state = extra_state;
	rep->next = datarep_registry;
	datarep_registry = rep;
	return MPI_SUCCESS;

err_free_rep:
	free(rep);
err_nomem:
	return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "no memory for \"%s\"",
				 datarep);
}
MPI_SHIM_ALIAS(MPI_Register_datarep);
