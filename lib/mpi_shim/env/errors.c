/* SPDX-License-Identifier: MIT */
/*
 * errors.c - error handlers, error classes and strings, and the argument
 * checks shared by every call.
 *
 * A misuse is reported once, where it is found, through the error handler
 * of the communicator concerned: MPI_ERRORS_ARE_FATAL (the default) prints
 * one message naming the host, the process, its rank, the call, the error
 * class and what was wrong, with a hint, and stops the job; bipload then
 * stops the other processes.  MPI_ERRORS_RETURN returns the class.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip.h"
#include "shim.h"

struct mpi_shim_errhandler mpi_shim_errors_are_fatal = {
	.refcount = 1,
	.predefined = 1,
	.kind = MPI_SHIM_ERRORS_FATAL,
};

struct mpi_shim_errhandler mpi_shim_errors_return = {
	.refcount = 1,
	.predefined = 1,
	.kind = MPI_SHIM_ERRORS_RETURN,
};

struct err_info {
	const char *name;
	const char *text;
	const char *hint;
};

static const struct err_info errs[] = {
	[MPI_SUCCESS] = { "MPI_SUCCESS", "no error", "" },
	[MPI_ERR_BUFFER] = { "MPI_ERR_BUFFER", "invalid buffer pointer",
			     "pass a valid buffer (NULL only with a count of 0); for "
			     "MPI_Bsend, attach a buffer large enough with MPI_Buffer_attach" },
	[MPI_ERR_COUNT] = { "MPI_ERR_COUNT", "invalid count argument",
			    "counts must be 0 or more" },
	[MPI_ERR_TYPE] = { "MPI_ERR_TYPE", "invalid datatype",
			   "use a predefined datatype, or commit a derived one with "
			   "MPI_Type_commit before communicating with it" },
	[MPI_ERR_TAG] = { "MPI_ERR_TAG", "invalid tag",
			  "tags are 0 to MPI_TAG_UB; MPI_ANY_TAG only when receiving" },
	[MPI_ERR_COMM] = { "MPI_ERR_COMM", "invalid communicator",
			   "use MPI_COMM_WORLD, MPI_COMM_SELF or a communicator that was "
			   "created and not freed (not MPI_COMM_NULL)" },
	[MPI_ERR_RANK] = { "MPI_ERR_RANK", "invalid rank",
			   "ranks are 0 to the size of the communicator - 1, or "
			   "MPI_PROC_NULL; MPI_ANY_SOURCE only when receiving" },
	[MPI_ERR_REQUEST] = { "MPI_ERR_REQUEST", "invalid request",
			      "pass a request returned by a non-blocking or _init call and "
			      "not yet completed or freed" },
	[MPI_ERR_ROOT] = { "MPI_ERR_ROOT", "invalid root",
			   "the root is a rank of the communicator, the same on every process" },
	[MPI_ERR_GROUP] = { "MPI_ERR_GROUP", "invalid group",
			    "use a group from MPI_Comm_group or a group constructor, not freed" },
	[MPI_ERR_OP] = { "MPI_ERR_OP", "invalid reduction operation",
			 "use a predefined operation that applies to the datatype, or one made "
			 "by MPI_Op_create" },
	[MPI_ERR_TOPOLOGY] = { "MPI_ERR_TOPOLOGY", "invalid topology", "" },
	[MPI_ERR_DIMS] = { "MPI_ERR_DIMS", "invalid dimension argument", "" },
	[MPI_ERR_ARG] = { "MPI_ERR_ARG", "invalid argument",
			  "check the pointers and values passed to the call" },
	[MPI_ERR_UNKNOWN] = { "MPI_ERR_UNKNOWN", "unknown error", "" },
	[MPI_ERR_TRUNCATE] = { "MPI_ERR_TRUNCATE", "message truncated",
			       "post a receive buffer at least as large as the message (probe "
			       "first with MPI_Probe and MPI_Get_count if the size varies)" },
	[MPI_ERR_OTHER] = { "MPI_ERR_OTHER", "other error", "" },
	[MPI_ERR_INTERN] = { "MPI_ERR_INTERN", "internal error", "" },
	[MPI_ERR_IN_STATUS] = { "MPI_ERR_IN_STATUS", "error code is in status",
				"look at the MPI_ERROR field of each status" },
	[MPI_ERR_PENDING] = { "MPI_ERR_PENDING", "pending request", "" },
	[MPI_ERR_KEYVAL] = { "MPI_ERR_KEYVAL", "invalid attribute key",
			     "use a predefined key or one from MPI_Comm_create_keyval" },
	[MPI_ERR_NO_MEM] = { "MPI_ERR_NO_MEM", "out of memory", "" },
	[MPI_ERR_BASE] = { "MPI_ERR_BASE", "invalid base address", "" },
	[MPI_ERR_INFO_KEY] = { "MPI_ERR_INFO_KEY", "invalid info key", "" },
	[MPI_ERR_INFO_VALUE] = { "MPI_ERR_INFO_VALUE", "invalid info value", "" },
	[MPI_ERR_INFO_NOKEY] = { "MPI_ERR_INFO_NOKEY", "info key not defined", "" },
	[MPI_ERR_SPAWN] = { "MPI_ERR_SPAWN", "spawn error", "" },
	[MPI_ERR_PORT] = { "MPI_ERR_PORT", "invalid port name", "" },
	[MPI_ERR_SERVICE] = { "MPI_ERR_SERVICE", "invalid service name", "" },
	[MPI_ERR_NAME] = { "MPI_ERR_NAME", "invalid service name", "" },
	[MPI_ERR_WIN] = { "MPI_ERR_WIN", "invalid window", "" },
	[MPI_ERR_SIZE] = { "MPI_ERR_SIZE", "invalid size", "" },
	[MPI_ERR_DISP] = { "MPI_ERR_DISP", "invalid displacement", "" },
	[MPI_ERR_INFO] = { "MPI_ERR_INFO", "invalid info object", "" },
	[MPI_ERR_LOCKTYPE] = { "MPI_ERR_LOCKTYPE", "invalid lock type", "" },
	[MPI_ERR_ASSERT] = { "MPI_ERR_ASSERT", "invalid assertion", "" },
	[MPI_ERR_RMA_CONFLICT] = { "MPI_ERR_RMA_CONFLICT", "conflicting window accesses", "" },
	[MPI_ERR_RMA_SYNC] = { "MPI_ERR_RMA_SYNC", "wrong window synchronisation", "" },
	[MPI_ERR_FILE] = { "MPI_ERR_FILE", "invalid file handle", "" },
	[MPI_ERR_NOT_SAME] = { "MPI_ERR_NOT_SAME", "arguments differ between processes", "" },
	[MPI_ERR_AMODE] = { "MPI_ERR_AMODE", "invalid file access mode", "" },
	[MPI_ERR_UNSUPPORTED_DATAREP] = { "MPI_ERR_UNSUPPORTED_DATAREP",
					  "unsupported data representation", "" },
	[MPI_ERR_UNSUPPORTED_OPERATION] = { "MPI_ERR_UNSUPPORTED_OPERATION",
					    "unsupported operation",
					    "see mpi_shim(7) for what this library provides" },
	[MPI_ERR_NO_SUCH_FILE] = { "MPI_ERR_NO_SUCH_FILE", "no such file", "" },
	[MPI_ERR_FILE_EXISTS] = { "MPI_ERR_FILE_EXISTS", "file exists", "" },
	[MPI_ERR_BAD_FILE] = { "MPI_ERR_BAD_FILE", "invalid file name", "" },
	[MPI_ERR_ACCESS] = { "MPI_ERR_ACCESS", "permission denied", "" },
	[MPI_ERR_NO_SPACE] = { "MPI_ERR_NO_SPACE", "no space left", "" },
	[MPI_ERR_QUOTA] = { "MPI_ERR_QUOTA", "quota exceeded", "" },
	[MPI_ERR_READ_ONLY] = { "MPI_ERR_READ_ONLY", "read-only file", "" },
	[MPI_ERR_FILE_IN_USE] = { "MPI_ERR_FILE_IN_USE", "file in use", "" },
	[MPI_ERR_DUP_DATAREP] = { "MPI_ERR_DUP_DATAREP", "data representation already defined",
				  "" },
	[MPI_ERR_CONVERSION] = { "MPI_ERR_CONVERSION", "data conversion failed", "" },
	[MPI_ERR_IO] = { "MPI_ERR_IO", "I/O error", "" },
	[MPI_ERR_RMA_RANGE] = { "MPI_ERR_RMA_RANGE", "target memory is not part of the window",
				"" },
	[MPI_ERR_RMA_ATTACH] = { "MPI_ERR_RMA_ATTACH", "memory cannot be attached to the window",
				 "" },
	[MPI_ERR_RMA_SHARED] = { "MPI_ERR_RMA_SHARED",
				 "memory cannot be shared among the window's processes", "" },
	[MPI_ERR_RMA_FLAVOR] = { "MPI_ERR_RMA_FLAVOR", "wrong flavor of window for this call",
				 "" },
	[MPI_T_ERR_MEMORY] = { "MPI_T_ERR_MEMORY", "out of memory", "" },
	[MPI_T_ERR_NOT_INITIALIZED] = { "MPI_T_ERR_NOT_INITIALIZED",
					"the tools interface is not initialized",
					"call MPI_T_init_thread first" },
	[MPI_T_ERR_CANNOT_INIT] = { "MPI_T_ERR_CANNOT_INIT",
				    "the tools interface cannot be initialized", "" },
	[MPI_T_ERR_INVALID_INDEX] = { "MPI_T_ERR_INVALID_INDEX",
				      "index of a variable or category out of range", "" },
	[MPI_T_ERR_INVALID_ITEM] = { "MPI_T_ERR_INVALID_ITEM",
				     "item index of an enumeration out of range", "" },
	[MPI_T_ERR_INVALID_HANDLE] = { "MPI_T_ERR_INVALID_HANDLE", "invalid handle", "" },
	[MPI_T_ERR_OUT_OF_HANDLES] = { "MPI_T_ERR_OUT_OF_HANDLES", "no more handles", "" },
	[MPI_T_ERR_OUT_OF_SESSIONS] = { "MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions", "" },
	[MPI_T_ERR_INVALID_SESSION] = { "MPI_T_ERR_INVALID_SESSION",
					"invalid performance variable session", "" },
	[MPI_T_ERR_CVAR_SET_NOT_NOW] = { "MPI_T_ERR_CVAR_SET_NOT_NOW",
					 "control variable cannot be set now", "" },
	[MPI_T_ERR_CVAR_SET_NEVER] = { "MPI_T_ERR_CVAR_SET_NEVER",
				       "control variable cannot be set any more", "" },
	[MPI_T_ERR_PVAR_NO_STARTSTOP] = { "MPI_T_ERR_PVAR_NO_STARTSTOP",
					  "performance variable cannot be started or stopped", "" },
	[MPI_T_ERR_PVAR_NO_WRITE] = { "MPI_T_ERR_PVAR_NO_WRITE",
				      "performance variable cannot be written or reset", "" },
	[MPI_T_ERR_PVAR_NO_ATOMIC] = { "MPI_T_ERR_PVAR_NO_ATOMIC",
				       "performance variable cannot be read and reset atomically",
				       "" },
	[MPI_T_ERR_INVALID_NAME] = { "MPI_T_ERR_INVALID_NAME", "no variable or category of that name",
				     "" },
	[MPI_T_ERR_INVALID] = { "MPI_T_ERR_INVALID", "invalid use of the tools interface", "" },
};

_Static_assert(sizeof(errs) / sizeof(errs[0]) == MPI_ERR_LASTCODE + 1,
	       "one entry per error class");

const char *mpi_shim_err_name(int errclass)
{
	if (errclass < 0 || errclass > MPI_ERR_LASTCODE)
		return "MPI_ERR_UNKNOWN";
	return errs[errclass].name;
}

const char *mpi_shim_err_text(int errclass)
{
	if (errclass < 0 || errclass > MPI_ERR_LASTCODE)
		return "";
	return errs[errclass].text;
}

static int rank_in_world(void)
{
	return mpi_shim.initialized ? mpi_shim.world_rank : -1;
}

/* Print the fatal message and stop the job. */
mpi_shim_cold static void fatal(MPI_Comm comm, int errclass, const char *call, const char *msg)
{
	char host[256] = "";
	const char *hint = errclass >= 0 && errclass <= MPI_ERR_LASTCODE ?
				   errs[errclass].hint : "";

	gethostname(host, sizeof(host) - 1);
	fflush(stdout);
	fprintf(stderr, "mpi: host %s, pid %d, rank %d: %s: %s: %s\n", host, (int)getpid(),
		rank_in_world(), call, mpi_shim_err_name(errclass), msg);
	if (hint && *hint)
		fprintf(stderr, "mpi: hint: %s\n", hint);
	fprintf(stderr, "mpi: the error handler is MPI_ERRORS_ARE_FATAL: stopping the job "
		"(MPI_Comm_set_errhandler with MPI_ERRORS_RETURN returns errors instead)\n");
	fflush(stderr);
	/* A failing status makes bipload stop the other processes. */
	_exit(errclass > 0 && errclass < 256 ? errclass : 1);
}

int mpi_shim_err(MPI_Comm comm, int errclass, const char *call, const char *fmt, ...)
{
	struct mpi_shim_errhandler *eh;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!mpi_shim_comm_ok(comm) && !(comm != MPI_COMM_NULL && comm->pending))
		comm = MPI_COMM_WORLD;
	eh = comm->errhandler ? comm->errhandler : &mpi_shim_errors_are_fatal;
	switch (eh->kind) {
	case MPI_SHIM_ERRORS_RETURN:
		break;
	case MPI_SHIM_ERRORS_USER: {
		MPI_Comm c = comm;
		int code = errclass;

		eh->fn(&c, &code, call, msg);
		break;
	}
	default:
		fatal(comm, errclass, call, msg);
	}
	return errclass;
}

/* --- the argument checks --- */

int mpi_shim_check_init(const char *call)
{
	if (mpi_shim_likely(mpi_shim.initialized && !mpi_shim.finalized))
		return MPI_SUCCESS;
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call, "%s",
			    mpi_shim.finalized ? "called after MPI_Finalize" :
						 "called before MPI_Init");
}

int mpi_shim_check_comm(MPI_Comm comm, const char *call)
{
	if (mpi_shim_likely(mpi_shim_comm_ok(comm)))
		return MPI_SUCCESS;
	return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_COMM, call, "%s",
			    comm == MPI_COMM_NULL ? "the communicator is MPI_COMM_NULL" :
						    "the communicator was freed");
}

/*
 * MPI_Comm_idup's handle before completion is erroneous to use by the
 * letter of the standard, but the common implementations accept its error
 * handler, name and attributes, and language bindings set the handler on
 * every new communicator at once.
 */
int mpi_shim_check_comm_or_pending(MPI_Comm comm, const char *call)
{
	if (comm != MPI_COMM_NULL && comm->pending)
		return MPI_SUCCESS;
	return mpi_shim_check_comm(comm, call);
}

int mpi_shim_check_count(MPI_Comm comm, int count, const char *call)
{
	if (mpi_shim_likely(count >= 0))
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_COUNT, call, "count %d is negative", count);
}

int mpi_shim_check_rank(MPI_Comm comm, int rank, int any_source, const char *call)
{
	if ((rank >= 0 && rank < comm->peer_size) || rank == MPI_PROC_NULL ||
	    (any_source && rank == MPI_ANY_SOURCE))
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_RANK, call,
			    "rank %d is not in the %scommunicator (size %d)%s", rank,
			    mpi_shim_is_inter(comm) ? "remote group of the inter-" : "",
			    comm->peer_size,
			    rank == MPI_ANY_SOURCE ? ": MPI_ANY_SOURCE is only for receives" : "");
}

int mpi_shim_check_root(MPI_Comm comm, int root, const char *call)
{
	if (root >= 0 && root < comm->size)
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_ROOT, call, "root %d is not in the communicator (size %d)",
			    root, comm->size);
}

int mpi_shim_check_tag(MPI_Comm comm, int tag, int any_tag, const char *call)
{
	if (tag >= 0 || (any_tag && tag == MPI_ANY_TAG))
		return MPI_SUCCESS;
	return mpi_shim_err(comm, MPI_ERR_TAG, call, "tag %d is invalid (0 to %d%s)", tag, INT_MAX,
			    any_tag ? " or MPI_ANY_TAG" : "; MPI_ANY_TAG only when receiving");
}

/* --- the calls --- */

static int check_errhandler(MPI_Comm comm, MPI_Errhandler eh, const char *call)
{
	if (eh == MPI_ERRHANDLER_NULL || eh->refcount <= 0)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "invalid error handler (%s)",
				    eh ? "freed" : "MPI_ERRHANDLER_NULL");
	return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_errhandler *eh;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_create_errhandler")))
		return rc;
	if (!fn || !errhandler)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler",
				    "function or errhandler is NULL");
	eh = mpi_shim_errhandler_new(fn);
	if (!eh)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler",
				    "no memory");
	*errhandler = eh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_create_errhandler);

struct mpi_shim_errhandler *mpi_shim_errhandler_new(MPI_Comm_errhandler_function *fn)
{
	struct mpi_shim_errhandler *eh = calloc(1, sizeof(*eh));

	if (eh) {
		eh->refcount = 1;
		eh->kind = MPI_SHIM_ERRORS_USER;
		eh->fn = fn;
	}
	return eh;
}

int PMPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_create_errhandler(fn, errhandler);
}
MPI_SHIM_ALIAS(MPI_Errhandler_create);

static void errhandler_release(struct mpi_shim_errhandler *eh)
{
	if (eh && !eh->predefined && --eh->refcount == 0)
		free(eh);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_set_errhandler")) ||
	    (rc = mpi_shim_check_comm_or_pending(comm, "MPI_Comm_set_errhandler")) ||
	    (rc = check_errhandler(comm, eh, "MPI_Comm_set_errhandler")))
		return rc;
	if (!eh->predefined)
		eh->refcount++;
	errhandler_release(comm->errhandler);
	comm->errhandler = eh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_set_errhandler);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler eh)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_set_errhandler(comm, eh);
}
MPI_SHIM_ALIAS(MPI_Errhandler_set);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_get_errhandler")) ||
	    (rc = mpi_shim_check_comm_or_pending(comm, "MPI_Comm_get_errhandler")))
		return rc;
	if (!eh)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler",
				    "errhandler is NULL");
	*eh = comm->errhandler;
	if (!(*eh)->predefined)
		(*eh)->refcount++;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_get_errhandler);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *eh)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_get_errhandler(comm, eh);
}
MPI_SHIM_ALIAS(MPI_Errhandler_get);

int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Errhandler_free")))
		return rc;
	if (!eh || (rc = check_errhandler(MPI_COMM_NULL, *eh, "MPI_Errhandler_free")))
		return rc ? rc :
			    mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free",
					 "errhandler is NULL");
	errhandler_release(*eh);
	*eh = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Errhandler_free);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_call_errhandler")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_call_errhandler")))
		return rc;
	mpi_shim_err(comm, errorcode, "MPI_Comm_call_errhandler", "raised by the program");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_call_errhandler);

void mpi_shim_errhandler_release(struct mpi_shim_errhandler *eh)
{
	errhandler_release(eh);
}
