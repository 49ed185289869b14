/* SPDX-License-Identifier: MIT */
/*
 * rw.c - independent data access (MPI-3.1 13.4): explicit offsets and the
 * individual file pointer, blocking and nonblocking, and what every
 * access shares: the checks, the stream of the access, and the moves
 * between it and the file.
 *
 * An access is a stream and extents (io.h, struct io_access).  The
 * stream is the access's bytes in the file's representation, contiguous:
 * the program's buffer itself when its datatype is contiguous and the
 * representation native (no copy at all), else a buffer packed (and
 * converted) before a write, or unpacked after a read.  The extents are
 * where the stream's bytes go in the file, in order (view.c).
 *
 * Moving the extents independently:
 *   - an extent of 64 KiB or more, or one alone, is one pwrite or pread
 *     straight from or to the stream;
 *   - smaller extents close together are moved by data sieving: the
 *     region that holds them (at most ind_rd_buffer_size for reads,
 *     ind_wr_buffer_size for writes) is read whole, the pieces are copied
 *     out of it, or into it and the region written back whole.  A sieved
 *     write holds an fcntl write lock on the region from its read to its
 *     write, so that other processes' sieved writes in the gaps are not
 *     undone.  Files opened write-only where the file system refused
 *     read access, and the hints romio_ds_read/romio_ds_write=disable,
 *     move piece by piece.
 *   - In atomic mode (MPI_File_set_atomicity) the whole span of the
 *     access is locked for its duration: a read lock for a read, a write
 *     lock for a write, so that concurrent overlapping accesses are
 *     serialised as the standard asks (13.6.1).
 * A read that reaches the end of the file ends there: the status counts
 * what was read.
 *
 * The nonblocking calls are progress-driven requests of the engine
 * (engine.h): each step moves at most 8 MiB (the whole access in atomic
 * mode, under its lock), so that a large MPI_File_iwrite lets the
 * program's messages go on between its steps.  The first step runs in
 * the call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"
#include "datatype.h"

/* What a nonblocking step moves at most. */
#define IO_STEP_BYTES (8u << 20)
/* Extents this large go to the file system as they are. */
#define IO_DIRECT_BYTES (64u << 10)

/* --- the system calls --- */

int mpi_shim_io_pwrite(int fd, const void *buf, uint64_t len, int64_t off)
{
	const char *p = buf;

	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return mpi_shim_io_errclass(errno);
		}
		if (w == 0)
			return MPI_ERR_NO_SPACE;
		p += w;
		off += w;
		len -= (uint64_t)w;
	}
	return MPI_SUCCESS;
}

int mpi_shim_io_pread(int fd, void *buf, uint64_t len, int64_t off, uint64_t *got)
{
	char *p = buf;

	*got = 0;
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t r = pread(fd, p, n, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return mpi_shim_io_errclass(errno);
		}
		if (r == 0)
			break; /* the end of the file */
		p += r;
		off += r;
		len -= (uint64_t)r;
		*got += (uint64_t)r;
	}
	return MPI_SUCCESS;
}

int mpi_shim_io_lock(int fd, int type, int64_t off, uint64_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = (short)type;
	fl.l_whence = SEEK_SET;
	fl.l_start = off;
	fl.l_len = len > (uint64_t)INT64_MAX - (uint64_t)off ? 0 : (off_t)len;
	while (fcntl(fd, F_SETLKW, &fl)) {
		if (errno != EINTR)
			return MPI_ERR_IO;
	}
	return MPI_SUCCESS;
}

/* --- the checks --- */

int mpi_shim_io_check(MPI_File fh, const void *buf, int count, MPI_Datatype type,
		      enum io_dir dir, int seq, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (count < 0)
		return mpi_shim_file_err(fh, MPI_ERR_COUNT, call, "count %d is negative", count);
	if (type == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(type))
		return mpi_shim_file_err(fh, MPI_ERR_TYPE, call, "the datatype is %s",
					 type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" :
								     "a freed one");
	if (!type->committed)
		return mpi_shim_file_err(fh, MPI_ERR_TYPE, call,
					 "the datatype is not committed (MPI_Type_commit)");
	if (!buf && count > 0 && type->size && type->predefined)
		return mpi_shim_file_err(fh, MPI_ERR_BUFFER, call,
					 "the buffer is NULL and count is %d", count);
	if (dir == IO_WRITE && (fh->amode & MPI_MODE_RDONLY))
		return mpi_shim_file_err(fh, MPI_ERR_READ_ONLY, call,
					 "the file was opened MPI_MODE_RDONLY");
	if (dir == IO_READ && (fh->amode & MPI_MODE_WRONLY))
		return mpi_shim_file_err(fh, MPI_ERR_ACCESS, call,
					 "the file was opened MPI_MODE_WRONLY");
	if (!seq && (fh->amode & MPI_MODE_SEQUENTIAL))
		return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
					 "the file was opened MPI_MODE_SEQUENTIAL: only the "
					 "shared file pointer may be used");
	return MPI_SUCCESS;
}

/* --- the access --- */

int mpi_shim_io_access_init(struct io_access *a, MPI_File fh, enum io_dir dir, const void *buf,
			    MPI_Count count, MPI_Datatype type, uint64_t pos)
{
	MPI_Offset bytes;
	int rc;

	memset(a, 0, sizeof(*a));
	a->fh = fh;
	a->dir = dir;
	a->buf = (void *)buf;
	a->count = count;
	a->type = type;
	a->pos = pos;
	if ((rc = mpi_shim_datarep_size(fh->rep, type, count, &bytes)))
		return rc;
	a->bytes = (uint64_t)bytes;
	if (a->bytes % fh->etype->size)
		return MPI_ERR_ARG;
	mpi_shim_datatype_retain(type);
	if (!a->bytes) {
		a->stream = NULL;
	} else if (mpi_shim_datarep_is_native(fh->rep) && type->contiguous) {
		a->stream = (unsigned char *)mpi_shim_datatype_start(buf, type);
	} else {
		a->stream = malloc(a->bytes);
		if (!a->stream) {
			mpi_shim_datatype_release(type);
			return MPI_ERR_NO_MEM;
		}
		a->own_stream = 1;
		if (dir == IO_WRITE &&
		    (rc = mpi_shim_datarep_to_file(fh->rep, buf, count, type, a->stream, 0))) {
			free(a->stream);
			mpi_shim_datatype_release(type);
			return rc;
		}
	}
	if ((rc = mpi_shim_view_map(fh, pos, a->bytes, &a->ext, &a->n))) {
		if (a->own_stream)
			free(a->stream);
		mpi_shim_datatype_release(type);
		return rc;
	}
	return MPI_SUCCESS;
}

int mpi_shim_io_access_done(struct io_access *a, MPI_Status *status)
{
	int rc = a->err;
	uint64_t native = a->done;

	if (a->dir == IO_READ && a->own_stream && a->done && !rc) {
		if (mpi_shim_datarep_is_native(a->fh->rep)) {
			mpi_shim_datatype_unpack(a->stream, a->done, a->buf, (size_t)a->count,
						 a->type, 0);
		} else {
			/* whole elements only: a partial one cannot be converted */
			uint64_t per = a->bytes / (uint64_t)a->count, n = a->done / per;

			if (n)
				rc = mpi_shim_datarep_from_file(a->fh->rep, a->stream, a->buf,
								(MPI_Count)n, a->type, 0);
			native = n * a->type->size;
		}
	} else if (!mpi_shim_datarep_is_native(a->fh->rep) && a->count) {
		native = a->done / (a->bytes / (uint64_t)a->count) * a->type->size;
	}
	if (status && status != MPI_STATUS_IGNORE) {
		mpi_shim_status_empty(status);
		status->mpi_shim_bytes = (MPI_Count)native;
		status->MPI_ERROR = rc;
	}
	if (a->own_stream)
		free(a->stream);
	free(a->ext);
	a->stream = NULL;
	a->ext = NULL;
	mpi_shim_datatype_release(a->type);
	return rc;
}

/* Data sieving of extents [i, j] of a, which lie in a region of at most
 * the buffer's size. */
static int sieve(struct io_access *a, uint64_t i, uint64_t j)
{
	MPI_File fh = a->fh;
	int64_t start = a->ext[i].off, end = a->ext[j].off + (int64_t)a->ext[j].len;
	uint64_t span = (uint64_t)(end - start), got, k, spos = a->spos;
	unsigned char *buf = malloc(span);
	int rc, locked = 0;

	if (!buf)
		return MPI_ERR_NO_MEM;
	if (a->dir == IO_WRITE && !fh->atomic) {
		if ((rc = mpi_shim_io_lock(fh->fd, F_WRLCK, start, span)))
			goto out;
		locked = 1;
	}
	if ((rc = mpi_shim_io_pread(fh->fd, buf, span, start, &got)))
		goto out;
	if (a->dir == IO_WRITE) {
		memset(buf + got, 0, span - got);
		for (k = i; k <= j; k++) {
			memcpy(buf + (a->ext[k].off - start), a->stream + spos, a->ext[k].len);
			spos += a->ext[k].len;
		}
		rc = mpi_shim_io_pwrite(fh->fd, buf, span, start);
		if (!rc)
			a->done = spos;
	} else {
		for (k = i; k <= j; k++) {
			uint64_t at = (uint64_t)(a->ext[k].off - start), n = a->ext[k].len;

			if (at >= got) {
				a->eof = 1;
				break;
			}
			if (n > got - at) {
				n = got - at;
				a->eof = 1;
			}
			memcpy(a->stream + spos, buf + at, n);
			spos += n;
			a->done = spos;
			if (a->eof)
				break;
		}
	}
	if (!rc)
		a->spos = spos;
out:
	if (locked)
		mpi_shim_io_lock(fh->fd, F_UNLCK, start, span);
	free(buf);
	return rc;
}

/* One extent straight from or to the stream. */
static int direct(struct io_access *a, uint64_t i)
{
	const struct io_extent *e = &a->ext[i];
	uint64_t got;
	int rc;

	if (a->dir == IO_WRITE) {
		rc = mpi_shim_io_pwrite(a->fh->fd, a->stream + a->spos, e->len, e->off);
		if (!rc) {
			a->spos += e->len;
			a->done = a->spos;
		}
		return rc;
	}
	rc = mpi_shim_io_pread(a->fh->fd, a->stream + a->spos, e->len, e->off, &got);
	if (!rc) {
		a->spos += got;
		a->done = a->spos;
		if (got < e->len)
			a->eof = 1;
	}
	return rc;
}

int mpi_shim_io_indep(struct io_access *a, uint64_t budget)
{
	MPI_File fh = a->fh;
	enum io_switch ds = a->dir == IO_WRITE ? fh->hints.ds_write : fh->hints.ds_read;
	uint64_t bufsize = a->dir == IO_WRITE ? fh->hints.ind_wr_buffer_size :
						fh->hints.ind_rd_buffer_size;
	uint64_t moved = 0;
	int64_t lock_start = 0;
	uint64_t lock_len = 0;
	int rc = MPI_SUCCESS;

	if (a->err || a->next >= a->n)
		return a->err;
	if (fh->atomic) {
		/* the whole access, under one lock */
		lock_start = a->ext[a->next].off;
		lock_len = (uint64_t)(a->ext[a->n - 1].off + (int64_t)a->ext[a->n - 1].len -
				      lock_start);
		if ((rc = mpi_shim_io_lock(fh->fd, a->dir == IO_WRITE ? F_WRLCK : F_RDLCK,
					   lock_start, lock_len)))
			return a->err = rc;
		budget = UINT64_MAX;
	}
	while (a->next < a->n && moved < budget && !a->eof && !rc) {
		uint64_t i = a->next, j = i, before = a->spos;

		if (ds != IO_DISABLE && (a->dir == IO_READ || fh->can_read) &&
		    a->ext[i].len < IO_DIRECT_BYTES) {
			while (j + 1 < a->n && a->ext[j + 1].len < IO_DIRECT_BYTES &&
			       (uint64_t)(a->ext[j + 1].off + (int64_t)a->ext[j + 1].len -
					  a->ext[i].off) <= bufsize)
				j++;
		}
		if (j > i) {
			rc = sieve(a, i, j);
			a->next = j + 1;
		} else {
			rc = direct(a, i);
			a->next = i + 1;
		}
		moved += a->spos - before;
	}
	if (fh->atomic)
		mpi_shim_io_lock(fh->fd, F_UNLCK, lock_start, lock_len);
	if (a->eof)
		a->next = a->n;
	return a->err = rc;
}

/* --- nonblocking independent access --- */

static int indep_step(struct mpi_shim_request *r)
{
	struct io_access *a = r->state;
	int rc = mpi_shim_io_indep(a, IO_STEP_BYTES);

	if (!rc && a->next < a->n)
		return 0;
	a->fh->pending--;
	rc = mpi_shim_io_access_done(a, &r->status);
	return rc ? -rc : 1;
}

static void indep_release(struct mpi_shim_request *r)
{
	free(r->state);
	r->state = NULL;
}

static const struct mpi_shim_req_ops indep_ops = {
	.progress = indep_step,
	.release = indep_release,
};

int mpi_shim_io_indep_start(struct io_access *a, MPI_Request *req)
{
	struct io_access *s = malloc(sizeof(*s));
	int rc;

	if (!s) {
		mpi_shim_io_access_done(a, NULL);
		return MPI_ERR_NO_MEM;
	}
	*s = *a;
	if ((rc = mpi_shim_request_progress_new(a->fh->comm, &indep_ops, s, req))) {
		mpi_shim_io_access_done(s, NULL);
		free(s);
		return rc;
	}
	a->fh->pending++;
	mpi_shim_progress_step(*req);
	return MPI_SUCCESS;
}

/* --- the calls --- */

/* Where an access starts. */
enum io_where {
	IO_AT,    /* explicit offset */
	IO_INDIV, /* the individual file pointer */
};

/*
 * Every independent or collective call of explicit offsets and the
 * individual pointer: the checks, the access, then blocking (status) or
 * not (req).
 */
static int io_call(MPI_File fh, enum io_where where, MPI_Offset offset, const void *buf, int count,
		   MPI_Datatype type, enum io_dir dir, int coll, MPI_Status *status,
		   MPI_Request *req, const char *call)
{
	struct io_access a;
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_io_check(fh, buf, count, type, dir, 0, call)))
		return rc;
	if (req)
		*req = MPI_REQUEST_NULL;
	if (where == IO_AT && offset < 0)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "offset %lld is negative",
					 (long long)offset);
	if (where == IO_INDIV)
		offset = fh->fp;
	if ((uint64_t)offset > INT64_MAX / fh->etype->size)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "offset %lld is out of range",
					 (long long)offset);
	rc = mpi_shim_io_access_init(&a, fh, dir, buf, count, type,
				     (uint64_t)offset * fh->etype->size);
	if (rc)
		return mpi_shim_file_err(fh, rc, call, "%s",
					 rc == MPI_ERR_ARG ?
						 "the data is not a whole number of etypes, or "
						 "passes the largest offset" :
					 rc == MPI_ERR_CONVERSION ?
						 "the data could not be converted to the file's "
						 "representation" :
					 rc == MPI_ERR_NO_MEM ? "no memory" :
								"the datatype has no form in the "
								"file's representation");
	if (where == IO_INDIV && (req || coll))
		fh->fp += (MPI_Offset)(a.bytes / fh->etype->size);
	if (coll) {
		if ((rc = mpi_shim_io_coll_start(&a, &r)))
			return mpi_shim_file_err(fh, rc, call, "the collective could not start");
	} else if (req) {
		if ((rc = mpi_shim_io_indep_start(&a, &r)))
			return mpi_shim_file_err(fh, rc, call, "no memory");
	} else {
		mpi_shim_io_indep(&a, UINT64_MAX);
		if (where == IO_INDIV)
			fh->fp += (MPI_Offset)(a.done / fh->etype->size);
		rc = mpi_shim_io_access_done(&a, status);
		if (rc)
			return mpi_shim_file_err(fh, rc, call, "the %s failed",
						 dir == IO_WRITE ? "write" : "read");
		return MPI_SUCCESS;
	}
	if (req) {
		*req = r;
		return MPI_SUCCESS;
	}
	if ((rc = mpi_shim_io_wait(&r, status, call)))
		return mpi_shim_file_err(fh, rc, call, "the collective %s failed",
					 dir == IO_WRITE ? "write" : "read");
	return MPI_SUCCESS;
}

/* The status argument of a blocking call: MPI_STATUS_IGNORE is NULL here. */
#define ST(s) ((s) == MPI_STATUS_IGNORE ? NULL : (s))

#define IO_CALLS(At, Name, dir, coll)                                                           \
	int PMPI_File_##At(MPI_File fh, MPI_Offset offset, IO_BUF_##dir buf, int count,          \
			   MPI_Datatype type, MPI_Status *status)                                \
	{                                                                                        \
		MPI_SHIM_ENTER();                                                                \
		return io_call(fh, IO_AT, offset, buf, count, type, dir, coll, ST(status), NULL, \
			       "MPI_File_" #At);                                                 \
	}                                                                                        \
	MPI_SHIM_ALIAS(MPI_File_##At);                                                           \
	int PMPI_File_##Name(MPI_File fh, IO_BUF_##dir buf, int count, MPI_Datatype type,        \
			     MPI_Status *status)                                                 \
	{                                                                                        \
		MPI_SHIM_ENTER();                                                                \
		return io_call(fh, IO_INDIV, 0, buf, count, type, dir, coll, ST(status), NULL,   \
			       "MPI_File_" #Name);                                               \
	}                                                                                        \
	MPI_SHIM_ALIAS(MPI_File_##Name);                                                         \
	int PMPI_File_i##At(MPI_File fh, MPI_Offset offset, IO_BUF_##dir buf, int count,         \
			    MPI_Datatype type, MPI_Request *req)                                 \
	{                                                                                        \
		MPI_SHIM_ENTER();                                                                \
		if (!req)                                                                        \
			return mpi_shim_file_err(fh, MPI_ERR_REQUEST, "MPI_File_i" #At,          \
						 "request is NULL");                             \
		return io_call(fh, IO_AT, offset, buf, count, type, dir, coll, NULL, req,        \
			       "MPI_File_i" #At);                                                \
	}                                                                                        \
	MPI_SHIM_ALIAS(MPI_File_i##At);                                                          \
	int PMPI_File_i##Name(MPI_File fh, IO_BUF_##dir buf, int count, MPI_Datatype type,       \
			      MPI_Request *req)                                                  \
	{                                                                                        \
		MPI_SHIM_ENTER();                                                                \
		if (!req)                                                                        \
			return mpi_shim_file_err(fh, MPI_ERR_REQUEST, "MPI_File_i" #Name,        \
						 "request is NULL");                             \
		return io_call(fh, IO_INDIV, 0, buf, count, type, dir, coll, NULL, req,          \
			       "MPI_File_i" #Name);                                              \
	}                                                                                        \
	MPI_SHIM_ALIAS(MPI_File_i##Name)

#define IO_BUF_IO_READ void *
#define IO_BUF_IO_WRITE const void *

IO_CALLS(read_at, read, IO_READ, 0);
IO_CALLS(write_at, write, IO_WRITE, 0);
IO_CALLS(read_at_all, read_all, IO_READ, 1);
IO_CALLS(write_at_all, write_all, IO_WRITE, 1);

/* --- split collectives (13.4.5): the begin starts the nonblocking
 * collective, the end waits for it --- */

enum split_kind { SPLIT_READ_AT = 1, SPLIT_WRITE_AT, SPLIT_READ, SPLIT_WRITE, SPLIT_READ_ORD,
		  SPLIT_WRITE_ORD };

static const char *const split_names[] = {
	[SPLIT_READ_AT] = "MPI_File_read_at_all_begin",
	[SPLIT_WRITE_AT] = "MPI_File_write_at_all_begin",
	[SPLIT_READ] = "MPI_File_read_all_begin",
	[SPLIT_WRITE] = "MPI_File_write_all_begin",
	[SPLIT_READ_ORD] = "MPI_File_read_ordered_begin",
	[SPLIT_WRITE_ORD] = "MPI_File_write_ordered_begin",
};

static int split_begin(MPI_File fh, int kind, MPI_Offset offset, const void *buf, int count,
		       MPI_Datatype type, const char *call)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (fh->split)
		return mpi_shim_file_err(fh, MPI_ERR_OTHER, call,
					 "%s is still in progress on this file: one split "
					 "collective at a time (MPI-3.1 13.4.5)",
					 split_names[fh->split_kind]);
	switch (kind) {
	case SPLIT_READ_AT:
	case SPLIT_WRITE_AT:
		rc = io_call(fh, IO_AT, offset, buf, count, type,
			     kind == SPLIT_READ_AT ? IO_READ : IO_WRITE, 1, NULL, &r, call);
		break;
	case SPLIT_READ:
	case SPLIT_WRITE:
		rc = io_call(fh, IO_INDIV, 0, buf, count, type,
			     kind == SPLIT_READ ? IO_READ : IO_WRITE, 1, NULL, &r, call);
		break;
	default:
		rc = mpi_shim_io_ordered(fh, buf, count, type,
					 kind == SPLIT_READ_ORD ? IO_READ : IO_WRITE, &r, call);
		break;
	}
	if (rc)
		return rc;
	fh->split = r;
	fh->split_buf = buf;
	fh->split_kind = kind;
	return MPI_SUCCESS;
}

static int split_end(MPI_File fh, int kind, const void *buf, MPI_Status *status, const char *call)
{
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!fh->split || fh->split_kind != kind)
		return mpi_shim_file_err(fh, MPI_ERR_OTHER, call,
					 "no matching split collective was begun (%s first)",
					 split_names[kind]);
	if (buf != fh->split_buf)
		return mpi_shim_file_err(fh, MPI_ERR_BUFFER, call,
					 "buf is not the one given to %s", split_names[kind]);
	r = fh->split;
	fh->split = MPI_REQUEST_NULL;
	if ((rc = mpi_shim_io_wait(&r, ST(status), call)))
		return mpi_shim_file_err(fh, rc, call, "the collective failed");
	return MPI_SUCCESS;
}

#define SPLIT_AT(name, kind, B)                                                              \
	int PMPI_File_##name##_at_all_begin(MPI_File fh, MPI_Offset offset, B buf, int count, \
					    MPI_Datatype type)                                 \
	{                                                                                    \
		MPI_SHIM_ENTER();                                                            \
		return split_begin(fh, kind, offset, buf, count, type,                       \
				   "MPI_File_" #name "_at_all_begin");                       \
	}                                                                                    \
	MPI_SHIM_ALIAS(MPI_File_##name##_at_all_begin);                                      \
	int PMPI_File_##name##_at_all_end(MPI_File fh, B buf, MPI_Status *status)            \
	{                                                                                    \
		MPI_SHIM_ENTER();                                                            \
		return split_end(fh, kind, buf, status, "MPI_File_" #name "_at_all_end");    \
	}                                                                                    \
	MPI_SHIM_ALIAS(MPI_File_##name##_at_all_end)

#define SPLIT(name, suffix, kind, B)                                                          \
	int PMPI_File_##name##_##suffix##_begin(MPI_File fh, B buf, int count, MPI_Datatype type) \
	{                                                                                     \
		MPI_SHIM_ENTER();                                                             \
		return split_begin(fh, kind, 0, buf, count, type,                             \
				   "MPI_File_" #name "_" #suffix "_begin");                   \
	}                                                                                     \
	MPI_SHIM_ALIAS(MPI_File_##name##_##suffix##_begin);                                   \
	int PMPI_File_##name##_##suffix##_end(MPI_File fh, B buf, MPI_Status *status)         \
	{                                                                                     \
		MPI_SHIM_ENTER();                                                             \
		return split_end(fh, kind, buf, status, "MPI_File_" #name "_" #suffix "_end"); \
	}                                                                                     \
	MPI_SHIM_ALIAS(MPI_File_##name##_##suffix##_end)

SPLIT_AT(read, SPLIT_READ_AT, void *);
SPLIT_AT(write, SPLIT_WRITE_AT, const void *);
SPLIT(read, all, SPLIT_READ, void *);
SPLIT(write, all, SPLIT_WRITE, const void *);
SPLIT(read, ordered, SPLIT_READ_ORD, void *);
SPLIT(write, ordered, SPLIT_WRITE_ORD, const void *);

/* --- the individual file pointer --- */

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_seek";
	MPI_Offset base;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
					 "the file was opened MPI_MODE_SEQUENTIAL");
	switch (whence) {
	case MPI_SEEK_SET:
		base = 0;
		break;
	case MPI_SEEK_CUR:
		base = fh->fp;
		break;
	case MPI_SEEK_END:
		if ((rc = mpi_shim_io_end_etypes(fh, &base)))
			return mpi_shim_file_err(fh, rc, call, "the file's size is unknown");
		break;
	default:
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "whence %d is not MPI_SEEK_SET, _CUR or _END", whence);
	}
	if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "the new position (%lld%+lld) is negative or too large",
					 (long long)base, (long long)offset);
	fh->fp = base + offset;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_position";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!offset)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "offset is NULL");
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
					 "the file was opened MPI_MODE_SEQUENTIAL");
	*offset = fh->fp;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_position);

/*
 * The end of the file in etypes of the view: the first etype of the view
 * whose bytes lie at or past the file's size (MPI_SEEK_END).
 */
int mpi_shim_io_end_etypes(MPI_File fh, MPI_Offset *out)
{
	const struct io_flat *f = &fh->flat;
	struct stat st;
	int64_t rel, k, data;
	uint64_t i;

	if (fstat(fh->fd, &st))
		return mpi_shim_io_errclass(errno);
	rel = st.st_size - fh->disp;
	if (rel <= 0) {
		*out = 0;
		return MPI_SUCCESS;
	}
	/* whole instances before the end, then the data of the last one */
	k = rel / f->extent;
	data = k * (int64_t)f->size;
	rel -= k * f->extent;
	for (i = 0; i < f->n && f->off[i] < rel; i++)
		data += f->off[i] + (int64_t)f->len[i] <= rel ? (int64_t)f->len[i] :
								 rel - f->off[i];
	*out = (data + (int64_t)fh->etype->size - 1) / (int64_t)fh->etype->size;
	return MPI_SUCCESS;
}
