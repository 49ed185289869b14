/* SPDX-License-Identifier: MIT */
/*
 * shared.c - the shared file pointer (MPI-3.1 13.4.4): read_shared,
 * write_shared and their nonblocking forms, read_ordered and
 * write_ordered, seek_shared and get_position_shared.
 *
 * Where it lives.  The pointer is 8 bytes (an etype count, host order) at
 * the start of a hidden file next to the file, ".NAME.shfp.ID", ID chosen
 * by rank 0 at open so that two opens of one file do not share it.  A
 * process moves it under an fcntl write lock on those 8 bytes: lock,
 * pread, pwrite, unlock.  fcntl locks work across hosts on NFS, and NFS
 * writes back and revalidates a file's data at lock and unlock, so the
 * pointer needs no process to serve it and no message: a rank that
 * computes or sleeps is never needed by another's write_shared.  The
 * hidden file is made by the first process that uses the pointer and
 * removed by rank 0 at MPI_File_close; while it is empty (or absent) the
 * pointer is the value at open (0, or the end of the file with
 * MPI_MODE_APPEND) or after the last set_view (0).  A directory where no
 * file can be made leaves the shared pointer unusable: those calls fail
 * with MPI_ERR_ACCESS, and the rest works.
 *
 * The ordered calls are collective: an allgather of each rank's count,
 * rank 0 moves the pointer by the total and broadcasts where it was, and
 * rank r accesses at that position plus the counts of the ranks before
 * it, through the collective path of coll_io.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

static int shfp_open(MPI_File fh)
{
	if (fh->shfp_fd >= 0)
		return MPI_SUCCESS;
	fh->shfp_fd = open(fh->shfp_name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fh->shfp_fd < 0)
		return mpi_shim_io_errclass(errno);
	return MPI_SUCCESS;
}

/* The pointer's value, and what it becomes (add; set: replace). */
static int shfp_update(MPI_File fh, int64_t add, int set, int64_t *old)
{
	int64_t v, nv;
	uint64_t got;
	int rc;

	if ((rc = shfp_open(fh)))
		return rc;
	if ((rc = mpi_shim_io_lock(fh->shfp_fd, F_WRLCK, 0, sizeof(v))))
		return rc;
	rc = mpi_shim_io_pread(fh->shfp_fd, &v, sizeof(v), 0, &got);
	if (!rc) {
		if (got < sizeof(v))
			v = fh->shfp_init;
		nv = set ? add : v + add;
		if (nv != v || got < sizeof(v))
			rc = mpi_shim_io_pwrite(fh->shfp_fd, &nv, sizeof(nv), 0);
		*old = v;
	}
	mpi_shim_io_lock(fh->shfp_fd, F_UNLCK, 0, sizeof(v));
	return rc;
}

void mpi_shim_shfp_close(MPI_File fh)
{
	if (fh->shfp_fd >= 0)
		close(fh->shfp_fd);
	fh->shfp_fd = -1;
}

int mpi_shim_shfp_reset(MPI_File fh, int want, int64_t *current)
{
	struct {
		int64_t at;
		int32_t err;
	} out = { 0, 0 };
	int rc;

	/* Every process has finished its shared-pointer calls of the old
	 * view before rank 0 reads and empties the hidden file; the others
	 * go on after the broadcast, so after the reset. */
	if ((rc = PMPI_Barrier(fh->comm)))
		return rc;
	if (fh->comm->rank == 0) {
		int fd;

		if (want)
			out.err = shfp_update(fh, 0, 0, &out.at);
		fd = fh->shfp_fd >= 0 ? fh->shfp_fd : open(fh->shfp_name, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			/* emptied, the file holds the new view's start again */
			if (!mpi_shim_io_lock(fd, F_WRLCK, 0, 8)) {
				if (ftruncate(fd, 0) && !out.err)
					out.err = mpi_shim_io_errclass(errno);
				mpi_shim_io_lock(fd, F_UNLCK, 0, 8);
			}
			if (fd != fh->shfp_fd)
				close(fd);
		}
	}
	if ((rc = mpi_shim_comm_bcast0(fh->comm, &out, sizeof(out))))
		return rc;
	fh->shfp_init = 0;
	*current = out.at;
	return out.err;
}

/* The bytes of count elements of type in the file, in etypes. */
static int etypes_of(MPI_File fh, int count, MPI_Datatype type, int64_t *n)
{
	MPI_Offset bytes;
	int rc;

	if ((rc = mpi_shim_datarep_size(fh->rep, type, count, &bytes)))
		return rc;
	if (bytes % (MPI_Offset)fh->etype->size)
		return MPI_ERR_ARG;
	*n = bytes / (MPI_Offset)fh->etype->size;
	return MPI_SUCCESS;
}

static int shared_error(MPI_File fh, int rc, const char *call)
{
	return mpi_shim_file_err(fh, rc, call, "%s",
				 rc == MPI_ERR_ARG ? "the data is not a whole number of etypes" :
				 rc == MPI_ERR_IO ? "the shared file pointer could not be locked" :
						    "the shared file pointer's hidden file could "
						    "not be used (is the file's directory "
						    "writable?)");
}

static int shared_call(MPI_File fh, const void *buf, int count, MPI_Datatype type,
		       enum io_dir dir, MPI_Status *status, MPI_Request *req, const char *call)
{
	struct io_access a;
	int64_t n, at;
	int rc;

	if ((rc = mpi_shim_io_check(fh, buf, count, type, dir, 1, call)))
		return rc;
	if (req)
		*req = MPI_REQUEST_NULL;
	if ((rc = etypes_of(fh, count, type, &n)) || (rc = shfp_update(fh, n, 0, &at)))
		return shared_error(fh, rc, call);
	rc = mpi_shim_io_access_init(&a, fh, dir, buf, count, type,
				     (uint64_t)at * fh->etype->size);
	if (rc)
		return mpi_shim_file_err(fh, rc, call, "the access could not be prepared");
	if (req) {
		if ((rc = mpi_shim_io_indep_start(&a, req)))
			return mpi_shim_file_err(fh, rc, call, "no memory");
		return MPI_SUCCESS;
	}
	mpi_shim_io_indep(&a, UINT64_MAX);
	if ((rc = mpi_shim_io_access_done(&a, status == MPI_STATUS_IGNORE ? NULL : status)))
		return mpi_shim_file_err(fh, rc, call, "the %s failed",
					 dir == IO_WRITE ? "write" : "read");
	return MPI_SUCCESS;
}

int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			  MPI_Status *status)
{
	MPI_SHIM_ENTER();
	return shared_call(fh, buf, count, datatype, IO_READ, status, NULL,
			   "MPI_File_read_shared");
}
MPI_SHIM_ALIAS(MPI_File_read_shared);

int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			   MPI_Status *status)
{
	MPI_SHIM_ENTER();
	return shared_call(fh, buf, count, datatype, IO_WRITE, status, NULL,
			   "MPI_File_write_shared");
}
MPI_SHIM_ALIAS(MPI_File_write_shared);

int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			   MPI_Request *request)
{
	MPI_SHIM_ENTER();
	if (!request)
		return mpi_shim_file_err(fh, MPI_ERR_REQUEST, "MPI_File_iread_shared",
					 "request is NULL");
	return shared_call(fh, buf, count, datatype, IO_READ, NULL, request,
			   "MPI_File_iread_shared");
}
MPI_SHIM_ALIAS(MPI_File_iread_shared);

int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			    MPI_Request *request)
{
	MPI_SHIM_ENTER();
	if (!request)
		return mpi_shim_file_err(fh, MPI_ERR_REQUEST, "MPI_File_iwrite_shared",
					 "request is NULL");
	return shared_call(fh, buf, count, datatype, IO_WRITE, NULL, request,
			   "MPI_File_iwrite_shared");
}
MPI_SHIM_ALIAS(MPI_File_iwrite_shared);

int mpi_shim_io_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
			enum io_dir dir, MPI_Request *req, const char *call)
{
	struct io_access a;
	int64_t n, *all = NULL, before = 0, total = 0, base = 0;
	int rc, i, err;

	if ((rc = mpi_shim_io_check(fh, buf, count, type, dir, 1, call)))
		return rc;
	if ((rc = etypes_of(fh, count, type, &n)))
		return shared_error(fh, rc, call);
	all = malloc(sizeof(int64_t) * (size_t)fh->comm->size);
	if (!all)
		return mpi_shim_file_err(fh, MPI_ERR_NO_MEM, call, "no memory");
	if ((rc = PMPI_Allgather(&n, 1, MPI_INT64_T, all, 1, MPI_INT64_T, fh->comm))) {
		free(all);
		return mpi_shim_file_err(fh, rc, call, "the allgather failed");
	}
	for (i = 0; i < fh->comm->size; i++) {
		if (i < fh->comm->rank)
			before += all[i];
		total += all[i];
	}
	free(all);
	{
		/* rank 0 moves the pointer; everyone learns where it was */
		struct {
			int64_t base;
			int32_t err;
		} out = { 0, 0 };

		if (fh->comm->rank == 0)
			out.err = shfp_update(fh, total, 0, &out.base);
		if ((rc = mpi_shim_comm_bcast0(fh->comm, &out, sizeof(out))))
			return mpi_shim_file_err(fh, rc, call, "the broadcast failed");
		if (out.err)
			return shared_error(fh, out.err, call);
		base = out.base;
	}
	err = mpi_shim_io_access_init(&a, fh, dir, buf, count, type,
				      (uint64_t)(base + before) * fh->etype->size);
	if (err)
		return mpi_shim_file_err(fh, err, call, "the access could not be prepared");
	if ((rc = mpi_shim_io_coll_start(&a, req)))
		return mpi_shim_file_err(fh, rc, call, "the collective could not start");
	return MPI_SUCCESS;
}

static int ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type, enum io_dir dir,
		   MPI_Status *status, const char *call)
{
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_io_ordered(fh, buf, count, type, dir, &r, call)))
		return rc;
	if ((rc = mpi_shim_io_wait(&r, status == MPI_STATUS_IGNORE ? NULL : status, call)))
		return mpi_shim_file_err(fh, rc, call, "the collective %s failed",
					 dir == IO_WRITE ? "write" : "read");
	return MPI_SUCCESS;
}

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			   MPI_Status *status)
{
	MPI_SHIM_ENTER();
	return ordered(fh, buf, count, datatype, IO_READ, status, "MPI_File_read_ordered");
}
MPI_SHIM_ALIAS(MPI_File_read_ordered);

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			    MPI_Status *status)
{
	MPI_SHIM_ENTER();
	return ordered(fh, buf, count, datatype, IO_WRITE, status, "MPI_File_write_ordered");
}
MPI_SHIM_ALIAS(MPI_File_write_ordered);

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_seek_shared";
	int64_t v[3], all[3];
	struct {
		int32_t err;
	} out = { 0 };
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call,
					 "whence %d is not MPI_SEEK_SET, _CUR or _END", whence);
	/* the same arguments everywhere */
	v[0] = offset;
	v[1] = -offset;
	v[2] = whence;
	if ((rc = PMPI_Allreduce(v, all, 3, MPI_INT64_T, MPI_MAX, fh->comm)))
		return mpi_shim_file_err(fh, rc, call, "the agreement failed");
	if (all[0] != -all[1] || all[2] != whence)
		return mpi_shim_file_err(fh, MPI_ERR_NOT_SAME, call,
					 "the processes gave different offsets or whence");
	if (fh->comm->rank == 0) {
		MPI_Offset base = 0;
		int64_t old;

		if (whence == MPI_SEEK_CUR) {
			out.err = shfp_update(fh, 0, 0, &old);
			base = old;
		} else if (whence == MPI_SEEK_END) {
			out.err = mpi_shim_io_end_etypes(fh, &base);
		}
		if (!out.err && base + offset < 0)
			out.err = MPI_ERR_ARG;
		if (!out.err)
			out.err = shfp_update(fh, base + offset, 1, &old);
	}
	if ((rc = mpi_shim_comm_bcast0(fh->comm, &out, sizeof(out))))
		return mpi_shim_file_err(fh, rc, call, "the broadcast failed");
	if (out.err == MPI_ERR_ARG)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "the new position is negative");
	if (out.err)
		return shared_error(fh, out.err, call);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_seek_shared);

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_position_shared";
	int64_t v;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!offset)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "offset is NULL");
	if ((rc = shfp_update(fh, 0, 0, &v)))
		return shared_error(fh, rc, call);
	*offset = v;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_position_shared);
