/* SPDX-License-Identifier: MIT */
/*
 * view.c - file views (MPI-3.1 13.3): MPI_File_set_view, get_view,
 * get_byte_offset and get_type_extent, and the map every access goes
 * through, from bytes of the view's data to extents of the file.
 *
 * A view is a displacement, an etype and a filetype: the file seen by
 * this process is the filetype tiled from the displacement, and only the
 * bytes the filetype's blocks cover are its data.  At set_view the
 * filetype is flattened once into its blocks (struct io_flat: offset and
 * length of each, merged where they touch, and the data bytes before
 * each), so that finding the file offset of any byte of the view's data
 * is a division (which instance of the filetype) and a binary search
 * (which block), and the extents of an access are a walk from there.
 *
 * The standard's rules on views, checked here: the etype and filetype
 * are committed; the filetype's size is a multiple of the etype's
 * (MPI_ERR_ARG); the etype's and filetype's displacements are
 * non-negative and non-decreasing, which is what makes the order of an
 * access's data the order of its file offsets, and do not overlap
 * unless the file is only read (MPI_ERR_IO otherwise, as MPICH); the data
 * representation exists (MPI_ERR_UNSUPPORTED_DATAREP).  With a
 * representation other than native, the filetype must take as many bytes
 * in the file as in memory, since its displacements are memory's
 * (MPI_ERR_UNSUPPORTED_OPERATION otherwise; the etype MPI_BYTE with any
 * data works).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "datatype.h"

void mpi_shim_view_free(MPI_File fh)
{
	free(fh->flat.off);
	free(fh->flat.len);
	free(fh->flat.pre);
	memset(&fh->flat, 0, sizeof(fh->flat));
	if (fh->etype)
		mpi_shim_datatype_release(fh->etype);
	if (fh->filetype)
		mpi_shim_datatype_release(fh->filetype);
	fh->etype = fh->filetype = MPI_DATATYPE_NULL;
}

/* Blocks of a filetype, as the flattening collects them. */
struct flatten {
	struct io_flat f;
	uint64_t cap;
	int bad;     /* a negative or decreasing displacement */
	int overlap; /* a block that starts inside the one before */
	int allow_overlap;
};

static int add_block(void *arg, int64_t disp, uint64_t len)
{
	struct flatten *fl = arg;
	struct io_flat *f = &fl->f;

	if (!len)
		return 0;
	if (disp < 0 || (f->n && disp < f->off[f->n - 1])) {
		fl->bad = 1;
		return 1;
	}
	if (f->n && disp < f->off[f->n - 1] + (int64_t)f->len[f->n - 1]) {
		fl->overlap = 1;
		if (!fl->allow_overlap)
			return 1;
	}
	if (f->n && f->off[f->n - 1] + (int64_t)f->len[f->n - 1] == disp) {
		f->len[f->n - 1] += len;
		return 0;
	}
	if (f->n == fl->cap) {
		uint64_t cap = fl->cap ? 2 * fl->cap : 16;
		int64_t *off = realloc(f->off, cap * sizeof(*off));
		uint64_t *l;

		if (!off)
			return MPI_ERR_NO_MEM;
		f->off = off;
		l = realloc(f->len, cap * sizeof(*l));
		if (!l)
			return MPI_ERR_NO_MEM;
		f->len = l;
		fl->cap = cap;
	}
	f->off[f->n] = disp;
	f->len[f->n] = len;
	f->n++;
	return 0;
}

/*
 * The blocks of t, or MPI_ERR_IO for displacements that are negative or
 * decreasing, or that overlap unless allow_overlap (a file only read):
 * MPI-3.1 13.3 asks for non-negative, monotonically non-decreasing
 * displacements of the etype and filetype, and names no class; MPICH's
 * is MPI_ERR_IO, and programs test for it.
 */
static int flatten(MPI_Datatype t, int allow_overlap, struct io_flat *out)
{
	struct flatten fl;
	uint64_t i, pre = 0;
	int rc;

	memset(&fl, 0, sizeof(fl));
	fl.allow_overlap = allow_overlap;
	rc = mpi_shim_datatype_for_each_block(t, add_block, &fl);
	if (fl.overlap && !allow_overlap)
		fl.bad = 1;
	if (!rc && !fl.bad) {
		fl.f.pre = malloc((fl.f.n ? fl.f.n : 1) * sizeof(uint64_t));
		if (!fl.f.pre)
			rc = MPI_ERR_NO_MEM;
	}
	if (rc || fl.bad) {
		free(fl.f.off);
		free(fl.f.len);
		free(fl.f.pre);
		return fl.bad ? MPI_ERR_IO : rc;
	}
	for (i = 0; i < fl.f.n; i++) {
		fl.f.pre[i] = pre;
		pre += fl.f.len[i];
	}
	fl.f.size = pre;
	fl.f.extent = t->extent;
	*out = fl.f;
	return MPI_SUCCESS;
}

/* Install a view already checked: the types are retained. */
static int view_set(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
		    const struct mpi_shim_datarep *rep)
{
	struct io_flat flat;
	int rc;

	if ((rc = flatten(filetype, !!(fh->amode & MPI_MODE_RDONLY), &flat)))
		return rc;
	mpi_shim_view_free(fh);
	fh->flat = flat;
	fh->disp = disp;
	fh->etype = etype;
	fh->filetype = filetype;
	mpi_shim_datatype_retain(etype);
	mpi_shim_datatype_retain(filetype);
	fh->rep = rep;
	fh->fp = 0;
	return MPI_SUCCESS;
}

int mpi_shim_view_default(MPI_File fh)
{
	return view_set(fh, 0, MPI_BYTE, MPI_BYTE, mpi_shim_datarep_find("native"));
}

int64_t mpi_shim_view_byte_offset(MPI_File fh, uint64_t pos)
{
	const struct io_flat *f = &fh->flat;
	uint64_t k, r, lo = 0, hi = f->n;

	if (!f->size)
		return fh->disp;
	k = pos / f->size;
	r = pos % f->size;
	/* the last block whose data starts at or before r */
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;

		if (f->pre[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	return fh->disp + (int64_t)k * f->extent + f->off[lo] + (int64_t)(r - f->pre[lo]);
}

int mpi_shim_view_map(MPI_File fh, uint64_t pos, uint64_t bytes, struct io_extent **ext_p,
		      uint64_t *n_p)
{
	const struct io_flat *f = &fh->flat;
	struct io_extent *ext = NULL;
	uint64_t n = 0, cap = 0, k, r, i, lo, hi;

	*ext_p = NULL;
	*n_p = 0;
	if (!bytes)
		return MPI_SUCCESS;
	if (!f->size)
		return MPI_ERR_ARG; /* a filetype without data holds nothing */
	if (f->n == 1 && f->off[0] == 0 && (int64_t)f->len[0] == f->extent) {
		/* a contiguous filetype (the default view's MPI_BYTE): one extent */
		if ((uint64_t)fh->disp > INT64_MAX - pos || fh->disp + pos > INT64_MAX - bytes)
			return MPI_ERR_ARG;
		ext = malloc(sizeof(*ext));
		if (!ext)
			return MPI_ERR_NO_MEM;
		ext->off = fh->disp + (int64_t)pos;
		ext->len = bytes;
		*ext_p = ext;
		*n_p = 1;
		return MPI_SUCCESS;
	}
	k = pos / f->size;
	r = pos % f->size;
	lo = 0;
	hi = f->n;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;

		if (f->pre[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	i = lo;
	r -= f->pre[i]; /* bytes of block i already before pos */
	while (bytes) {
		uint64_t len = f->len[i] - r;
		__int128 off128 = (__int128)fh->disp + (__int128)k * f->extent + f->off[i] + r;
		int64_t off;

		if (off128 < 0 || off128 > INT64_MAX - (__int128)bytes) {
			free(ext);
			return MPI_ERR_ARG;
		}
		off = (int64_t)off128;
		if (len > bytes)
			len = bytes;
		if (n && ext[n - 1].off + (int64_t)ext[n - 1].len == off) {
			ext[n - 1].len += len;
		} else {
			if (n == cap) {
				struct io_extent *e;

				cap = cap ? 2 * cap : 8;
				e = realloc(ext, cap * sizeof(*e));
				if (!e) {
					free(ext);
					return MPI_ERR_NO_MEM;
				}
				ext = e;
			}
			ext[n].off = off;
			ext[n].len = len;
			n++;
		}
		bytes -= len;
		r = 0;
		if (++i == f->n) {
			i = 0;
			k++;
		}
	}
	*ext_p = ext;
	*n_p = n;
	return MPI_SUCCESS;
}

/* The displacements of t as a view needs them (flatten), reported. */
static int check_shape(MPI_File fh, MPI_Datatype t, const char *what, const char *call)
{
	struct io_flat f;
	int rc = flatten(t, !!(fh->amode & MPI_MODE_RDONLY), &f);

	if (rc == MPI_ERR_IO)
		return mpi_shim_file_err(fh, rc, call,
					 "the %s's displacements are negative or decreasing, or "
					 "overlap in a file open for writing",
					 what);
	if (rc)
		return mpi_shim_file_err(fh, rc, call, "no memory");
	free(f.off);
	free(f.len);
	free(f.pre);
	return MPI_SUCCESS;
}

static int check_type(MPI_File fh, MPI_Datatype t, const char *what, const char *call)
{
	if (t == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(t))
		return mpi_shim_file_err(fh, MPI_ERR_TYPE, call, "the %s is %s", what,
					 t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" :
								  "a freed datatype");
	if (!t->committed)
		return mpi_shim_file_err(fh, MPI_ERR_TYPE, call,
					 "the %s is not committed (MPI_Type_commit)", what);
	return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
		       const char *datarep, MPI_Info info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_set_view";
	const struct mpi_shim_datarep *rep;
	MPI_Offset bytes;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)) ||
	    (rc = check_type(fh, etype, "etype", call)) ||
	    (rc = check_type(fh, filetype, "filetype", call)))
		return rc;
	if (!datarep)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "datarep is NULL");
	if (!(rep = mpi_shim_datarep_find(datarep)))
		return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_DATAREP, call,
					 "no data representation is called \"%s\" (native, "
					 "internal, external32, or one of MPI_Register_datarep)",
					 datarep);
	if (disp == MPI_DISPLACEMENT_CURRENT && !(fh->amode & MPI_MODE_SEQUENTIAL))
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "MPI_DISPLACEMENT_CURRENT is for files opened "
					 "MPI_MODE_SEQUENTIAL");
	if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "disp %lld is negative",
					 (long long)disp);
	if (!etype->size)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "the etype holds no data");
	/* both shapes, before the collective part of the call */
	if ((rc = check_shape(fh, etype, "etype", call)) ||
	    (rc = check_shape(fh, filetype, "filetype", call)))
		return rc;
	if (filetype->size % etype->size)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "the filetype's size (%zu bytes) is not a multiple of the "
					 "etype's (%zu)",
					 filetype->size, etype->size);
	/* A filetype without data (size 0) is allowed: this process then
	 * accesses nothing, as in a collective where some ranks have no
	 * part. */
	if (filetype->size && filetype->extent <= 0)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "the filetype's extent (%td) is not positive",
					 filetype->extent);
	if (!mpi_shim_datarep_is_native(rep)) {
		if ((rc = mpi_shim_datarep_size(rep, filetype, 1, &bytes)))
			return mpi_shim_file_err(fh, rc, call,
						 "the filetype has no form in \"%s\"", datarep);
		if ((uint64_t)bytes != filetype->size)
			return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
						 "the filetype takes %lld bytes in \"%s\" and %zu "
						 "in memory: such views are not supported (use "
						 "types of the same size in both)",
						 (long long)bytes, datarep, filetype->size);
	}
	/* MPI-3.1 13.3 makes a set_view with nonblocking or split operations
	 * pending erroneous; codes do it (MPICH's own tests), and here it is
	 * harmless: an operation maps its extents and copies the hints when
	 * it starts, so it keeps the view it started with. */
	if (info != MPI_INFO_NULL && mpi_shim_info_check(MPI_COMM_SELF, info, call))
		return mpi_shim_file_err(fh, MPI_ERR_INFO, call, "invalid info");
	/* The shared pointer goes back to 0, once every process is done with
	 * the old view; MPI_DISPLACEMENT_CURRENT is where it was then. */
	{
		int64_t at = 0;

		if ((rc = mpi_shim_shfp_reset(fh, disp == MPI_DISPLACEMENT_CURRENT, &at)))
			return mpi_shim_file_err(fh, rc, call,
						 "the shared file pointer could not be read or reset");
		if (disp == MPI_DISPLACEMENT_CURRENT)
			disp = mpi_shim_view_byte_offset(fh, (uint64_t)at * fh->etype->size);
	}
	if ((rc = view_set(fh, disp, etype, filetype, rep)))
		return mpi_shim_file_err(fh, rc, call, "%s",
					 rc == MPI_ERR_IO ?
						 "the filetype's displacements are negative or "
						 "decreasing, or overlap in a file open for writing" :
						 "no memory");
	if ((rc = mpi_shim_file_set_hints(fh, info)))
		return mpi_shim_file_err(fh, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_set_view);

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
		       char *datarep)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_view";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!disp || !etype || !filetype || !datarep)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "an argument is NULL");
	/* Derived types come back as new handles, which the program frees
	 * (MPI-3.1 13.3). */
	if (!fh->etype->predefined && (rc = PMPI_Type_dup(fh->etype, etype)))
		return mpi_shim_file_err(fh, rc, call, "no memory");
	if (fh->etype->predefined)
		*etype = fh->etype;
	if (!fh->filetype->predefined && (rc = PMPI_Type_dup(fh->filetype, filetype)))
		return mpi_shim_file_err(fh, rc, call, "no memory");
	if (fh->filetype->predefined)
		*filetype = fh->filetype;
	*disp = fh->disp;
	snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", mpi_shim_datarep_name(fh->rep));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_view);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_byte_offset";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!disp)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "disp is NULL");
	if (offset < 0 || (uint64_t)offset > INT64_MAX / fh->etype->size)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "offset %lld is out of range",
					 (long long)offset);
	*disp = mpi_shim_view_byte_offset(fh, (uint64_t)offset * fh->etype->size);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_byte_offset);

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_type_extent";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (datatype == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(datatype))
		return mpi_shim_file_err(fh, MPI_ERR_TYPE, call, "invalid datatype");
	if (!extent)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "extent is NULL");
	if ((rc = mpi_shim_datarep_extent(fh->rep, datatype, extent)))
		return mpi_shim_file_err(fh, rc, call, "the datatype has no form in \"%s\"",
					 mpi_shim_datarep_name(fh->rep));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_type_extent);
