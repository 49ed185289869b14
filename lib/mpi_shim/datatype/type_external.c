/* SPDX-License-Identifier: MIT */
/*
 * type_external.c - MPI_Pack_external, MPI_Unpack_external and
 * MPI_Pack_external_size (and their _c forms) for the "external32"
 * representation, the only one the standard defines for them.
 *
 * external32 is big-endian, two's complement integers and IEEE floating
 * point, with the sizes of the standard's table: MPI_LONG, MPI_UNSIGNED_LONG
 * and the long of MPI_LONG_INT take 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE
 * 16 (IEEE quadruple precision), MPI_AINT, MPI_OFFSET and MPI_COUNT 8; the
 * other types have their C size (Fortran: gfortran's).  A complex number is
 * its real then imaginary part, a pair type its value then its index, each
 * in this form.  A value that does not fit the external size (a long beyond
 * 32 bits, a wchar_t beyond 16) is MPI_ERR_CONVERSION.
 *
 * The data go through the native packed form (datatype.h): packed into a
 * temporary buffer, then converted run by run of basic elements
 * (mpi_shim_datatype_for_each_basic), and the reverse for unpacking.  The
 * conversions of that form (mpi_shim_external32_size, _encode, _decode)
 * are also the I/O chapter's "external32" (io/datarep.c): one path, so
 * that a file and a packed buffer hold the same bytes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "shim.h"
#include "datatype.h"

enum conv {
	CONV_RAW,   /* bytes as they are (one-byte types) */
	CONV_SWAP,  /* the same size, big-endian */
	CONV_SLONG, /* signed native -> fewer bytes, checked */
	CONV_ULONG, /* unsigned native -> fewer bytes, checked */
	CONV_LDBL,  /* x87 long double -> IEEE quadruple */
};

/* One basic element: `n` fields of the first kind, then one of the second. */
struct field {
	enum conv conv;
	uint8_t native, external;
};

struct layout32 {
	struct field f[2];
	uint8_t n; /* copies of f[0]; f[1] follows when its size is not 0 */
};

#define F(c, ns, es) {c, ns, es}
#define ONE(c, ns, es) {{F(c, ns, es), F(CONV_RAW, 0, 0)}, 1}
#define TWO(c, ns, es) {{F(c, ns, es), F(CONV_RAW, 0, 0)}, 2}
#define PAIR(c, ns, es, c2, ns2, es2) {{F(c, ns, es), F(c2, ns2, es2)}, 1}

static const struct layout32 *layout32_of(enum mpi_shim_basic kind)
{
	static const struct layout32 raw1 = ONE(CONV_RAW, 1, 1), s2 = ONE(CONV_SWAP, 2, 2),
				     s4 = ONE(CONV_SWAP, 4, 4), s8 = ONE(CONV_SWAP, 8, 8),
				     s16 = ONE(CONV_SWAP, 16, 16),
				     ld = ONE(CONV_LDBL, sizeof(long double), 16),
				     slong = ONE(CONV_SLONG, sizeof(long), 4),
				     ulong = ONE(CONV_ULONG, sizeof(long), 4),
				     wch = ONE(CONV_ULONG, sizeof(wchar_t), 2),
				     c4 = TWO(CONV_SWAP, 4, 4), c8 = TWO(CONV_SWAP, 8, 8),
				     c16 = TWO(CONV_SWAP, 16, 16),
				     cld = TWO(CONV_LDBL, sizeof(long double), 16),
				     p44 = PAIR(CONV_SWAP, 4, 4, CONV_SWAP, 4, 4),
				     p84 = PAIR(CONV_SWAP, 8, 8, CONV_SWAP, 4, 4),
				     pl4 = PAIR(CONV_SLONG, sizeof(long), 4, CONV_SWAP, 4, 4),
				     p24 = PAIR(CONV_SWAP, 2, 2, CONV_SWAP, 4, 4),
				     pld4 = PAIR(CONV_LDBL, sizeof(long double), 16, CONV_SWAP, 4, 4),
				     p88 = PAIR(CONV_SWAP, 8, 8, CONV_SWAP, 8, 8);

	switch (kind) {
	case MPI_SHIM_BASIC_CHAR:
	case MPI_SHIM_BASIC_SIGNED_CHAR:
	case MPI_SHIM_BASIC_UNSIGNED_CHAR:
	case MPI_SHIM_BASIC_BYTE:
	case MPI_SHIM_BASIC_PACKED:
	case MPI_SHIM_BASIC_C_BOOL:
	case MPI_SHIM_BASIC_INT8_T:
	case MPI_SHIM_BASIC_UINT8_T:
	case MPI_SHIM_BASIC_CHARACTER:
	case MPI_SHIM_BASIC_INTEGER1:
	case MPI_SHIM_BASIC_LOGICAL1:
	case MPI_SHIM_BASIC_CXX_BOOL:
		return &raw1;
	case MPI_SHIM_BASIC_WCHAR:
		return &wch;
	case MPI_SHIM_BASIC_SHORT:
	case MPI_SHIM_BASIC_UNSIGNED_SHORT:
	case MPI_SHIM_BASIC_INT16_T:
	case MPI_SHIM_BASIC_UINT16_T:
	case MPI_SHIM_BASIC_INTEGER2:
	case MPI_SHIM_BASIC_LOGICAL2:
		return &s2;
	case MPI_SHIM_BASIC_INT:
	case MPI_SHIM_BASIC_UNSIGNED:
	case MPI_SHIM_BASIC_INT32_T:
	case MPI_SHIM_BASIC_UINT32_T:
	case MPI_SHIM_BASIC_INTEGER:
	case MPI_SHIM_BASIC_INTEGER4:
	case MPI_SHIM_BASIC_LOGICAL:
	case MPI_SHIM_BASIC_LOGICAL4:
	case MPI_SHIM_BASIC_FLOAT:
	case MPI_SHIM_BASIC_REAL:
	case MPI_SHIM_BASIC_REAL4:
		return &s4;
	case MPI_SHIM_BASIC_LONG:
		return &slong;
	case MPI_SHIM_BASIC_UNSIGNED_LONG:
		return &ulong;
	case MPI_SHIM_BASIC_LONG_LONG:
	case MPI_SHIM_BASIC_UNSIGNED_LONG_LONG:
	case MPI_SHIM_BASIC_INT64_T:
	case MPI_SHIM_BASIC_UINT64_T:
	case MPI_SHIM_BASIC_AINT:
	case MPI_SHIM_BASIC_OFFSET:
	case MPI_SHIM_BASIC_COUNT:
	case MPI_SHIM_BASIC_INTEGER8:
	case MPI_SHIM_BASIC_LOGICAL8:
	case MPI_SHIM_BASIC_DOUBLE:
	case MPI_SHIM_BASIC_DOUBLE_PRECISION:
	case MPI_SHIM_BASIC_REAL8:
		return &s8;
	case MPI_SHIM_BASIC_LONG_DOUBLE:
		return &ld;
	case MPI_SHIM_BASIC_REAL16:
	case MPI_SHIM_BASIC_INTEGER16:
		return &s16;
	case MPI_SHIM_BASIC_C_FLOAT_COMPLEX:
	case MPI_SHIM_BASIC_COMPLEX:
	case MPI_SHIM_BASIC_COMPLEX8:
	case MPI_SHIM_BASIC_CXX_FLOAT_COMPLEX:
		return &c4;
	case MPI_SHIM_BASIC_C_DOUBLE_COMPLEX:
	case MPI_SHIM_BASIC_DOUBLE_COMPLEX:
	case MPI_SHIM_BASIC_COMPLEX16:
	case MPI_SHIM_BASIC_CXX_DOUBLE_COMPLEX:
		return &c8;
	case MPI_SHIM_BASIC_COMPLEX32:
		return &c16;
	case MPI_SHIM_BASIC_C_LONG_DOUBLE_COMPLEX:
	case MPI_SHIM_BASIC_CXX_LONG_DOUBLE_COMPLEX:
		return &cld;
	case MPI_SHIM_BASIC_FLOAT_INT:
	case MPI_SHIM_BASIC_2INT:
	case MPI_SHIM_BASIC_2REAL:
	case MPI_SHIM_BASIC_2INTEGER:
		return &p44;
	case MPI_SHIM_BASIC_DOUBLE_INT:
		return &p84;
	case MPI_SHIM_BASIC_LONG_INT:
		return &pl4;
	case MPI_SHIM_BASIC_SHORT_INT:
		return &p24;
	case MPI_SHIM_BASIC_LONG_DOUBLE_INT:
		return &pld4;
	case MPI_SHIM_BASIC_2DOUBLE_PRECISION:
		return &p88;
	default:
		return NULL;
	}
}

static uint64_t layout32_native(const struct layout32 *l)
{
	return (uint64_t)l->n * l->f[0].native + l->f[1].native;
}

static uint64_t layout32_external(const struct layout32 *l)
{
	return (uint64_t)l->n * l->f[0].external + l->f[1].external;
}

/* --- One field --- */

static void put_be(unsigned char *out, uint64_t v, unsigned size)
{
	unsigned i;

	for (i = 0; i < size; i++)
		out[i] = (unsigned char)(v >> (8 * (size - 1 - i)));
}

static uint64_t get_be(const unsigned char *in, unsigned size)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < size; i++)
		v = v << 8 | in[i];
	return v;
}

/* Native little- or big-endian bytes reversed to big-endian, or kept. */
static void swap_bytes(unsigned char *out, const unsigned char *in, unsigned size)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned i;

	for (i = 0; i < size; i++)
		out[i] = in[size - 1 - i];
#else
	memcpy(out, in, size);
#endif
}

static int64_t native_signed(const unsigned char *in, unsigned size)
{
	switch (size) {
	case 2: {
		int16_t v;
		memcpy(&v, in, 2);
		return v;
	}
	case 4: {
		int32_t v;
		memcpy(&v, in, 4);
		return v;
	}
	default: {
		int64_t v;
		memcpy(&v, in, 8);
		return v;
	}
	}
}

static void native_store(unsigned char *out, uint64_t v, unsigned size)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (size) {
	case 2:
		memcpy(out, &v16, 2);
		break;
	case 4:
		memcpy(out, &v32, 4);
		break;
	default:
		memcpy(out, &v, 8);
		break;
	}
}

/* native -> external; MPI_ERR_CONVERSION if the value does not fit. */
static int field_out(const struct field *f, const unsigned char *in, unsigned char *out)
{
	int64_t s;
	uint64_t u;
	int64_t lim;

	switch (f->conv) {
	case CONV_RAW:
		memcpy(out, in, f->native);
		return MPI_SUCCESS;
	case CONV_SWAP:
		swap_bytes(out, in, f->native);
		return MPI_SUCCESS;
	case CONV_SLONG:
		s = native_signed(in, f->native);
		lim = (int64_t)1 << (8 * f->external - 1);
		if (s < -lim || s >= lim)
			return MPI_ERR_CONVERSION;
		put_be(out, (uint64_t)s, f->external);
		return MPI_SUCCESS;
	case CONV_ULONG:
		u = (uint64_t)native_signed(in, f->native);
		if (f->native == 4)
			u &= 0xffffffffu;
		if (f->external < 8 && u >> (8 * f->external))
			return MPI_ERR_CONVERSION;
		put_be(out, u, f->external);
		return MPI_SUCCESS;
	case CONV_LDBL: {
		long double ld;
		mpi_shim_quad q;

		memcpy(&ld, in, sizeof(ld));
		q = (mpi_shim_quad)ld;
		swap_bytes(out, (const unsigned char *)&q, 16);
		return MPI_SUCCESS;
	}
	}
	return MPI_ERR_INTERN;
}

/* external -> native (every external value fits its native type). */
static void field_in(const struct field *f, const unsigned char *in, unsigned char *out)
{
	uint64_t v;

	switch (f->conv) {
	case CONV_RAW:
		memcpy(out, in, f->native);
		break;
	case CONV_SWAP:
		swap_bytes(out, in, f->native);
		break;
	case CONV_SLONG:
		v = get_be(in, f->external);
		if (v >> (8 * f->external - 1)) /* sign-extended */
			v |= ~(uint64_t)0 << (8 * f->external);
		native_store(out, v, f->native);
		break;
	case CONV_ULONG:
		native_store(out, get_be(in, f->external), f->native);
		break;
	case CONV_LDBL: {
		long double ld;
		mpi_shim_quad q;

		swap_bytes((unsigned char *)&q, in, 16);
		ld = (long double)q;
		memset(out, 0, f->native);
		memcpy(out, &ld, sizeof(ld) < f->native ? sizeof(ld) : f->native);
		break;
	}
	}
}

/* --- Runs of basic elements --- */

struct convert {
	const unsigned char *in; /* native packed when encoding, external32 when decoding */
	unsigned char *out;	 /* the other form; NULL when only sizing */
	int decode;
	uint64_t external_bytes; /* sizing only: the total */
};

static int convert_run(void *arg, MPI_Datatype basic, uint64_t n)
{
	struct convert *c = arg;
	const struct layout32 *l = layout32_of(basic->kind);
	uint64_t i;
	unsigned k;
	int rc;

	if (!l || layout32_native(l) != basic->size)
		return MPI_ERR_TYPE;
	if (!c->out) {
		c->external_bytes += n * layout32_external(l);
		return MPI_SUCCESS;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < (unsigned)l->n + (l->f[1].native ? 1 : 0); k++) {
			const struct field *f = &l->f[k < l->n ? 0 : 1];

			if (c->decode) {
				field_in(f, c->in, c->out);
				c->in += f->external;
				c->out += f->native;
			} else {
				if ((rc = field_out(f, c->in, c->out)))
					return rc;
				c->in += f->native;
				c->out += f->external;
			}
		}
	}
	return MPI_SUCCESS;
}

/* --- On the native packed form (datatype.h) --- */

int mpi_shim_external32_size(MPI_Datatype t, uint64_t count, uint64_t *bytes)
{
	struct convert c = {0};
	int rc;

	/* The size of one element, times count: for_each_basic on count
	 * elements of a mixed type would walk every one of them. */
	rc = mpi_shim_datatype_for_each_basic(t, 1, convert_run, &c);
	if (rc)
		return rc;
	if (__builtin_mul_overflow(c.external_bytes, count, bytes))
		return MPI_ERR_COUNT;
	return MPI_SUCCESS;
}

int mpi_shim_external32_encode(MPI_Datatype t, uint64_t count, const void *native,
			       void *external)
{
	struct convert c = {.in = native, .out = external};

	return mpi_shim_datatype_for_each_basic(t, count, convert_run, &c);
}

int mpi_shim_external32_decode(MPI_Datatype t, uint64_t count, const void *external,
			       void *native)
{
	struct convert c = {.in = external, .out = native, .decode = 1};

	return mpi_shim_datatype_for_each_basic(t, count, convert_run, &c);
}

/* --- The calls --- */

static int check_datarep(const char *datarep, const char *call)
{
	if (!datarep)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "datarep is NULL");
	if (strcmp(datarep, "external32"))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_DATAREP, call,
				    "data representation \"%s\": only \"external32\" is defined "
				    "for packing",
				    datarep);
	return MPI_SUCCESS;
}

static int check_type(MPI_Datatype t, int committed, const char *call)
{
	if (t == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(t))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "datatype is MPI_DATATYPE_NULL or has been freed");
	if (committed && !t->committed)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    "datatype is not committed (MPI_Type_commit)");
	return MPI_SUCCESS;
}

static int size_error(int rc, MPI_Datatype t, const char *call)
{
	if (rc == MPI_ERR_TYPE)
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "%s has no external32 representation",
				    t->name[0] ? t->name : "the datatype");
	return mpi_shim_err(MPI_COMM_NULL, rc, call, "the packed size overflows");
}

/*
 * The checks that packing and unpacking share: count elements of t as
 * external32 at *position of a buffer of size bytes.  MPI_SUCCESS with
 * *ext the bytes they take (0: nothing to do), or the reported error.
 * pack: the names in the messages ("incount", "outsize"; else "outcount",
 * "insize").
 */
static int check_span(const char *datarep, int64_t count, MPI_Datatype t, int64_t size,
		      const int64_t *position, int pack, uint64_t *ext, const char *call)
{
	int rc;

	if ((rc = check_datarep(datarep, call)))
		return rc;
	if (count < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call, "%s %lld is negative",
				    pack ? "incount" : "outcount", (long long)count);
	if ((rc = check_type(t, 1, call)))
		return rc;
	if (!position)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "position is NULL");
	if (size < 0 || *position < 0 || *position > size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "position %lld outside %s %lld",
				    (long long)*position, pack ? "outsize" : "insize",
				    (long long)size);
	if ((rc = mpi_shim_external32_size(t, (uint64_t)count, ext)))
		return size_error(rc, t, call);
	if (*ext > (uint64_t)(size - *position))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TRUNCATE, call,
				    pack ? "%llu bytes do not fit in outsize %lld from position %lld" :
					   "%llu bytes are not in insize %lld from position %lld",
				    (unsigned long long)*ext, (long long)size, (long long)*position);
	return MPI_SUCCESS;
}

static int pack_external(const char *datarep, const void *inbuf, int64_t incount,
			 MPI_Datatype t, void *outbuf, int64_t outsize, int64_t *position,
			 const char *call)
{
	uint64_t ext, native;
	unsigned char *tmp;
	int rc;

	if ((rc = check_span(datarep, incount, t, outsize, position, 1, &ext, call)) || !ext)
		return rc;
	if (!outbuf)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "outbuf is NULL");
	native = (uint64_t)incount * t->size;
	tmp = malloc(native);
	if (!tmp)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	mpi_shim_datatype_pack(inbuf, (size_t)incount, t, 0, tmp, native);
	rc = mpi_shim_external32_encode(t, (uint64_t)incount, tmp,
					(unsigned char *)outbuf + *position);
	free(tmp);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "a value does not fit its external32 size (a long beyond 32 "
				    "bits, a wchar_t beyond 16)");
	*position += (int64_t)ext;
	return MPI_SUCCESS;
}

static int unpack_external(const char *datarep, const void *inbuf, int64_t insize,
			   int64_t *position, void *outbuf, int64_t outcount, MPI_Datatype t,
			   const char *call)
{
	uint64_t ext, native;
	unsigned char *tmp;
	int rc;

	if ((rc = check_span(datarep, outcount, t, insize, position, 0, &ext, call)) || !ext)
		return rc;
	if (!inbuf)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "inbuf is NULL");
	native = (uint64_t)outcount * t->size;
	tmp = malloc(native);
	if (!tmp)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	/* check_span sized every basic type, so decoding cannot fail. */
	mpi_shim_external32_decode(t, (uint64_t)outcount,
				   (const unsigned char *)inbuf + *position, tmp);
	mpi_shim_datatype_unpack(tmp, native, outbuf, (size_t)outcount, t, 0);
	free(tmp);
	*position += (int64_t)ext;
	return MPI_SUCCESS;
}

static int pack_external_size(const char *datarep, int64_t incount, MPI_Datatype t,
			      int64_t *size, const char *call)
{
	uint64_t ext;
	int rc;

	if ((rc = check_datarep(datarep, call)))
		return rc;
	if (incount < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COUNT, call, "incount %lld is negative",
				    (long long)incount);
	if ((rc = check_type(t, 0, call)))
		return rc;
	if (!size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "size is NULL");
	if ((rc = mpi_shim_external32_size(t, (uint64_t)incount, &ext)) || ext > INT64_MAX)
		return size_error(rc ? rc : MPI_ERR_COUNT, t, call);
	*size = (int64_t)ext;
	return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
		       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
	MPI_SHIM_ENTER();
	int64_t pos = position ? *position : 0;
	int rc = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize,
			       position ? &pos : NULL, "MPI_Pack_external");

	if (!rc)
		*position = (MPI_Aint)pos;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Pack_external);

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
			 MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
			 MPI_Count *position)
{
	MPI_SHIM_ENTER();
	int64_t pos = position ? *position : 0;
	int rc = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize,
			       position ? &pos : NULL, "MPI_Pack_external_c");

	if (!rc)
		*position = pos;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Pack_external_c);

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
			 MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
	MPI_SHIM_ENTER();
	int64_t pos = position ? *position : 0;
	int rc = unpack_external(datarep, inbuf, insize, position ? &pos : NULL, outbuf, outcount,
				 datatype, "MPI_Unpack_external");

	if (!rc)
		*position = (MPI_Aint)pos;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Unpack_external);

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
			   MPI_Count *position, void *outbuf, MPI_Count outcount,
			   MPI_Datatype datatype)
{
	MPI_SHIM_ENTER();
	int64_t pos = position ? *position : 0;
	int rc = unpack_external(datarep, inbuf, insize, position ? &pos : NULL, outbuf, outcount,
				 datatype, "MPI_Unpack_external_c");

	if (!rc)
		*position = pos;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Unpack_external_c);

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
			    MPI_Aint *size)
{
	MPI_SHIM_ENTER();
	int64_t s;
	int rc = pack_external_size(datarep, incount, datatype, size ? &s : NULL,
				    "MPI_Pack_external_size");

	if (!rc)
		*size = (MPI_Aint)s;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Pack_external_size);

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
			      MPI_Count *size)
{
	MPI_SHIM_ENTER();
	int64_t s;
	int rc = pack_external_size(datarep, incount, datatype, size ? &s : NULL,
				    "MPI_Pack_external_size_c");

	if (!rc)
		*size = s;
	return rc;
}
MPI_SHIM_ALIAS(MPI_Pack_external_size_c);
