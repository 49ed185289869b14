/* SPDX-License-Identifier: MIT */
/*
 * type_large.c - the large-count (MPI-4.0 _c) forms of the datatype
 * queries, of packing and of the status queries: MPI_Type_size_c,
 * MPI_Type_get_extent_c, MPI_Type_get_true_extent_c, MPI_Pack_c,
 * MPI_Unpack_c, MPI_Pack_size_c, MPI_Get_count_c, MPI_Get_elements_c.
 * The _c constructors and envelope calls are in datatype.c, the subarray
 * and darray ones in type_array.c, the external32 ones in type_external.c.
 * Counts, sizes and positions are MPI_Count: nothing is MPI_UNDEFINED for
 * being past an int.
 */
#include <stdint.h>

#include "shim.h"
#include "datatype.h"

static int check_type(MPI_Comm comm, MPI_Datatype t, int committed, const char *call)
{
	if (t == MPI_DATATYPE_NULL || !mpi_shim_datatype_ok(t))
		return mpi_shim_err(comm, MPI_ERR_TYPE, call,
				    "datatype is MPI_DATATYPE_NULL or has been freed");
	if (committed && !t->committed)
		return mpi_shim_err(comm, MPI_ERR_TYPE, call,
				    "datatype is not committed (MPI_Type_commit)");
	return MPI_SUCCESS;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_size_c";
	int rc;

	if ((rc = check_type(MPI_COMM_NULL, datatype, 0, call)))
		return rc;
	if (!size)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "size is NULL");
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_size_c);

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_extent_c";
	int rc;

	if ((rc = check_type(MPI_COMM_NULL, datatype, 0, call)))
		return rc;
	if (!lb || !extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !lb ? "lb" : "extent");
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_extent_c);

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
				MPI_Count *true_extent)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_true_extent_c";
	int rc;

	if ((rc = check_type(MPI_COMM_NULL, datatype, 0, call)))
		return rc;
	if (!true_lb || !true_extent)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is NULL",
				    !true_lb ? "true_lb" : "true_extent");
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_true_extent_c);

/* The checks of Pack_c and Unpack_c; the packed size in *bytes_p. */
static int check_pack(MPI_Count count, MPI_Datatype t, MPI_Count size, const MPI_Count *position,
		      const void *buf, MPI_Comm comm, const char *call, const char *sizename,
		      uint64_t *bytes_p)
{
	uint64_t bytes;
	int rc;

	if ((rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (count < 0)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "count %lld is negative", count);
	if ((rc = check_type(comm, t, 1, call)))
		return rc;
	if (!position)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "position is NULL");
	if (size < 0 || *position < 0 || *position > size)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "position %lld outside %s %lld",
				    *position, sizename, size);
	if (__builtin_mul_overflow((uint64_t)count, (uint64_t)t->size, &bytes) ||
	    bytes > (uint64_t)(size - *position))
		return mpi_shim_err(comm, MPI_ERR_TRUNCATE, call,
				    "%lld elements of %zu bytes do not fit in %s %lld from "
				    "position %lld",
				    count, t->size, sizename, size, *position);
	if (bytes && !buf)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call, "the packed buffer is NULL");
	*bytes_p = bytes;
	return MPI_SUCCESS;
}

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
		MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	uint64_t bytes;
	int rc;

	rc = check_pack(incount, datatype, outsize, position, outbuf, comm, "MPI_Pack_c",
			"outsize", &bytes);
	if (rc)
		return rc;
	mpi_shim_datatype_pack(inbuf, (size_t)incount, datatype, 0, (char *)outbuf + *position,
			       bytes);
	*position += (MPI_Count)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Pack_c);

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
		  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	MPI_SHIM_ENTER();
	uint64_t bytes;
	int rc;

	rc = check_pack(outcount, datatype, insize, position, inbuf, comm, "MPI_Unpack_c",
			"insize", &bytes);
	if (rc)
		return rc;
	mpi_shim_datatype_unpack((const char *)inbuf + *position, bytes, outbuf, (size_t)outcount,
				 datatype, 0);
	*position += (MPI_Count)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Unpack_c);

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Pack_size_c";
	uint64_t bytes;
	int rc;

	if ((rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (incount < 0)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call, "incount %lld is negative", incount);
	if ((rc = check_type(comm, datatype, 0, call)))
		return rc;
	if (!size)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "size is NULL");
	if (__builtin_mul_overflow((uint64_t)incount, (uint64_t)datatype->size, &bytes) ||
	    bytes > INT64_MAX)
		return mpi_shim_err(comm, MPI_ERR_COUNT, call,
				    "%lld elements of %zu bytes overflow a count", incount,
				    datatype->size);
	*size = (MPI_Count)bytes;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Pack_size_c);

static int check_status(const MPI_Status *status, MPI_Datatype t, const MPI_Count *out,
			const char *call)
{
	if (!status || status == MPI_STATUS_IGNORE || !out)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "status or result is NULL or MPI_STATUS_IGNORE");
	return check_type(MPI_COMM_NULL, t, 0, call);
}

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	MPI_SHIM_ENTER();
	MPI_Count bytes;
	int rc;

	if ((rc = check_status(status, datatype, count, "MPI_Get_count_c")))
		return rc;
	bytes = status->mpi_shim_bytes;
	if (datatype->size == 0)
		*count = bytes ? MPI_UNDEFINED : 0;
	else if (bytes % (MPI_Count)datatype->size)
		*count = MPI_UNDEFINED;
	else
		*count = bytes / (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_count_c);

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = check_status(status, datatype, count, "MPI_Get_elements_c")))
		return rc;
	*count = mpi_shim_datatype_elements(datatype, status->mpi_shim_bytes);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Get_elements_c);
