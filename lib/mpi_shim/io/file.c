/* SPDX-License-Identifier: MIT */
/*
 * file.c - the file object of the I/O chapter: MPI_File_open and
 * MPI_File_close, the calls that describe or change a file as a whole,
 * hints, atomicity, error handlers and handle conversion.
 *
 * Opening.  MPI_File_open is collective and every process ends with the
 * same outcome.  Rank 0 opens first, with O_CREAT and O_EXCL as the
 * access mode asks, so that "create" and "exclusive" are decided once on
 * a shared file system; it broadcasts its outcome (an error class, whether
 * it created the file, the size, and the name of the hidden file of the
 * shared pointer), then the others open the file that now exists, and an
 * allreduce tells everyone whether some process failed (and whether the
 * processes gave the same access mode).  On any failure every process
 * closes what it opened and rank 0 removes a file it created: a failed
 * open leaves nothing behind.  The mode is checked before anything
 * touches the file system.
 *
 * A file opened MPI_MODE_WRONLY is opened O_RDWR where permissions allow,
 * so that data sieving and two-phase I/O can read the gaps they write
 * around; otherwise O_WRONLY, and those paths write piece by piece.
 * MPI_MODE_APPEND sets both file pointers to the end at open; the file
 * is not opened O_APPEND, which would move explicit-offset writes.
 *
 * Aggregators.  The collective calls of coll_io.c gather the pieces of a
 * file region on a few processes: by default the first process of each
 * host (cb_nodes is the number of hosts), then more processes taken from
 * the hosts in turn when cb_nodes asks for more.  The list is computed
 * from the communicator's host table, the same on every process.
 *
 * Errors.  A file's error handler is MPI_ERRORS_RETURN unless the program
 * sets another; calls that have no file (MPI_File_open, MPI_File_delete,
 * MPI_Register_datarep) use the handler of MPI_FILE_NULL, the default for
 * new files, MPI_ERRORS_RETURN too until MPI_File_set_errhandler changes
 * it (MPI-3.1 13.7).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "datatype.h"

/* The handler of MPI_FILE_NULL: the one new files take. */
static struct mpi_shim_errhandler *default_eh = MPI_ERRORS_RETURN;

int mpi_shim_file_err(MPI_File fh, int errclass, const char *call, const char *fmt, ...)
{
	struct mpi_shim_errhandler *eh;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	eh = mpi_shim_file_ok(fh) && fh->errhandler ? fh->errhandler : default_eh;
	switch (eh->kind) {
	case MPI_SHIM_ERRORS_RETURN:
		return errclass;
	case MPI_SHIM_ERRORS_USER: {
		MPI_File f = fh;
		int code = errclass;

		((MPI_File_errhandler_function *)eh->fn)(&f, &code, call, msg);
		return errclass;
	}
	default: {
		/* The fatal path is the communicators' (see win.c). */
		struct mpi_shim_errhandler *keep = MPI_COMM_SELF->errhandler;

		MPI_COMM_SELF->errhandler = MPI_ERRORS_ARE_FATAL;
		mpi_shim_err(MPI_COMM_SELF, errclass, call, "%s", msg);
		MPI_COMM_SELF->errhandler = keep;
		return errclass;
	}
	}
}

int mpi_shim_check_file(MPI_File fh, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (mpi_shim_likely(mpi_shim_file_ok(fh)))
		return MPI_SUCCESS;
	return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_FILE, call, "%s",
				 fh == MPI_FILE_NULL ? "the file is MPI_FILE_NULL" :
						       "the file was closed");
}

int mpi_shim_io_errclass(int err)
{
	switch (err) {
	case ENOENT:
		return MPI_ERR_NO_SUCH_FILE;
	case EEXIST:
		return MPI_ERR_FILE_EXISTS;
	case EACCES:
	case EPERM:
		return MPI_ERR_ACCESS;
	case EROFS:
		return MPI_ERR_READ_ONLY;
	case ENOSPC:
	case EFBIG:
		return MPI_ERR_NO_SPACE;
	case EDQUOT:
		return MPI_ERR_QUOTA;
	case EISDIR:
	case ENOTDIR:
	case ENAMETOOLONG:
	case ELOOP:
	case ENXIO:
	case ENODEV:
		return MPI_ERR_BAD_FILE;
	case ETXTBSY:
	case EBUSY:
		return MPI_ERR_FILE_IN_USE;
	case ENOMEM:
		return MPI_ERR_NO_MEM;
	default:
		return MPI_ERR_IO;
	}
}

/* --- hints --- */

static void hints_default(MPI_File fh)
{
	struct io_hints *h = &fh->hints;
	int i, hosts = 0;

	memset(h, 0, sizeof(*h));
	h->cb_buffer_size = 16u << 20;
	/* the distinct hosts of comm (host indices are the job's) */
	for (i = 0; i < fh->comm->size; i++) {
		int j;

		for (j = 0; j < i && fh->comm->host[j] != fh->comm->host[i]; j++)
			;
		hosts += j == i;
	}
	h->cb_nodes = hosts > 0 ? hosts : 1;
	h->cb_read = h->cb_write = IO_AUTO;
	h->ds_read = h->ds_write = IO_AUTO;
	h->ind_rd_buffer_size = 4u << 20;
	h->ind_wr_buffer_size = 512u << 10;
	strcpy(h->access_style, "read_mostly,write_mostly");
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-')
		return -1;
	*out = x;
	return 0;
}

static int parse_switch(const char *v, enum io_switch *out)
{
	if (!strcmp(v, "enable") || !strcmp(v, "true"))
		*out = IO_ENABLE;
	else if (!strcmp(v, "disable") || !strcmp(v, "false"))
		*out = IO_DISABLE;
	else if (!strcmp(v, "automatic"))
		*out = IO_AUTO;
	else
		return -1;
	return 0;
}

/*
 * The hints of info that this library uses; others are kept by nobody
 * (MPI-3.1 13.2.8: an implementation ignores hints it does not know, and
 * MPI_File_get_info reports the ones in use).  A value that does not
 * parse is ignored as well.  Hints that decide how collective calls
 * work (cb_nodes, cb_buffer_size) are the same on every process only if
 * the program gives the same ones everywhere, as the standard asks.
 */
static void hints_apply(MPI_File fh, MPI_Info info)
{
	struct io_hints *h = &fh->hints;
	char v[MPI_MAX_INFO_VAL + 1];
	uint64_t x;
	int flag;

	if (info == MPI_INFO_NULL)
		return;
#define GET(key) (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
	if (GET("cb_buffer_size") && !parse_u64(v, &x) && x >= 4096 && x <= (1ull << 30))
		h->cb_buffer_size = x;
	if (GET("cb_nodes") && !parse_u64(v, &x) && x >= 1)
		h->cb_nodes = x > (uint64_t)fh->comm->size ? fh->comm->size : (int)x;
	if (GET("romio_cb_read"))
		parse_switch(v, &h->cb_read);
	if (GET("romio_cb_write"))
		parse_switch(v, &h->cb_write);
	if (GET("collective_buffering")) {
		enum io_switch s;

		if (!parse_switch(v, &s))
			h->cb_read = h->cb_write = s == IO_DISABLE ? IO_DISABLE : IO_ENABLE;
	}
	if (GET("romio_ds_read"))
		parse_switch(v, &h->ds_read);
	if (GET("romio_ds_write"))
		parse_switch(v, &h->ds_write);
	if (GET("ind_rd_buffer_size") && !parse_u64(v, &x) && x >= 4096 && x <= (1ull << 31))
		h->ind_rd_buffer_size = x;
	if (GET("ind_wr_buffer_size") && !parse_u64(v, &x) && x >= 4096 && x <= (1ull << 31))
		h->ind_wr_buffer_size = x;
	if (GET("striping_unit") && !parse_u64(v, &x) && x <= (1ull << 40))
		h->striping_unit = x;
	if (GET("striping_factor") && !parse_u64(v, &x) && x <= INT_MAX)
		h->striping_factor = (int)x;
	if (GET("access_style"))
		snprintf(h->access_style, sizeof(h->access_style), "%.63s", v);
#undef GET
}

static const char *switch_name(enum io_switch s)
{
	return s == IO_ENABLE ? "enable" : s == IO_DISABLE ? "disable" : "automatic";
}

/* The aggregators: the first rank of each host, then the second of each,
 * and so on, until cb_nodes. */
static int aggregators(MPI_File fh)
{
	MPI_Comm c = fh->comm;
	int n = fh->hints.cb_nodes, k = 0, round, i, j, *idx;

	free(fh->aggs);
	fh->aggs = malloc(sizeof(int) * (size_t)n);
	idx = malloc(sizeof(int) * (size_t)c->size);
	if (!fh->aggs || !idx) {
		free(idx);
		return MPI_ERR_NO_MEM;
	}
	/* idx[i]: how many ranks before i are on i's host */
	for (i = 0; i < c->size; i++)
		for (idx[i] = 0, j = 0; j < i; j++)
			idx[i] += c->host[j] == c->host[i];
	for (round = 0; k < n && round < c->size; round++)
		for (i = 0; i < c->size && k < n; i++)
			if (idx[i] == round)
				fh->aggs[k++] = i;
	fh->naggs = k;
	free(idx);
	return MPI_SUCCESS;
}

static int hints_to_info(MPI_File fh, MPI_Info *info)
{
	struct io_hints *h = &fh->hints;
	char v[64];
	int rc;

	if ((rc = PMPI_Info_create(info)))
		return rc;
#define SET(key, fmt, val)                                   \
	do {                                                 \
		snprintf(v, sizeof(v), fmt, val);            \
		if ((rc = PMPI_Info_set(*info, key, v)))     \
			goto fail;                           \
	} while (0)
	SET("cb_buffer_size", "%llu", (unsigned long long)h->cb_buffer_size);
	SET("cb_nodes", "%d", h->cb_nodes);
	SET("romio_cb_read", "%s", switch_name(h->cb_read));
	SET("romio_cb_write", "%s", switch_name(h->cb_write));
	SET("collective_buffering", "%s",
	    h->cb_read == IO_DISABLE && h->cb_write == IO_DISABLE ? "false" : "true");
	SET("romio_ds_read", "%s", switch_name(h->ds_read));
	SET("romio_ds_write", "%s", switch_name(h->ds_write));
	SET("ind_rd_buffer_size", "%llu", (unsigned long long)h->ind_rd_buffer_size);
	SET("ind_wr_buffer_size", "%llu", (unsigned long long)h->ind_wr_buffer_size);
	SET("striping_unit", "%llu", (unsigned long long)h->striping_unit);
	SET("striping_factor", "%d", h->striping_factor);
	SET("access_style", "%s", h->access_style);
#undef SET
	if ((rc = PMPI_Info_set(*info, "filename", fh->filename)))
		goto fail;
	return MPI_SUCCESS;
fail:
	PMPI_Info_free(info);
	return rc;
}

/* --- open and close --- */

static void file_release(MPI_File fh)
{
	if (fh->fd >= 0)
		close(fh->fd);
	if (fh->shfp_fd >= 0)
		close(fh->shfp_fd);
	mpi_shim_view_free(fh);
	free(fh->shfp_name);
	free(fh->filename);
	free(fh->aggs);
	if (fh->errhandler)
		mpi_shim_errhandler_release(fh->errhandler);
	if (fh->comm != MPI_COMM_NULL)
		PMPI_Comm_free(&fh->comm);
	fh->valid = 0;
	free(fh);
}

/*
 * The path of a file name.  Programs written for ROMIO name the file
 * system in a prefix ("ufs:", "nfs:", "lustre:/path"): here every file
 * system is POSIX, so the prefixes of ROMIO's file systems go, and so does
 * any other word of letters, digits and '_' before ':' when a '/' follows
 * it (no relative path starts so).
 */
static const char *path_of(const char *filename)
{
	static const char *const prefixes[] = { "ufs:", "nfs:", "tmpfs:", "posix:", "xfs:",
						"lustre:", "gpfs:", "panfs:", "pvfs2:" };
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(filename, prefixes[i], strlen(prefixes[i])))
			return filename + strlen(prefixes[i]);
	for (p = filename; *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9');
	     p++)
		;
	if (p > filename + 1 && p[0] == ':' && p[1] == '/')
		return p + 1;
	return filename;
}

/* The checks of an access mode that need no other process: MPI_SUCCESS
 * or MPI_ERR_AMODE with why in *why. */
static int check_amode(int amode, const char **why)
{
	int rw = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
	int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
		    MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
		    MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

	*why = NULL;
	if (amode & ~known)
		*why = "it has bits that are no MPI_MODE_ constant";
	else if (rw != MPI_MODE_RDONLY && rw != MPI_MODE_WRONLY && rw != MPI_MODE_RDWR)
		*why = "it needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR";
	else if (rw == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
		*why = "MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL";
	else if (rw == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
		*why = "MPI_MODE_SEQUENTIAL cannot go with MPI_MODE_RDWR";
	return *why ? MPI_ERR_AMODE : MPI_SUCCESS;
}

/* What rank 0 tells the others after its open. */
struct open_outcome {
	int32_t err;
	int32_t created;
	int64_t size;
	char shfp[24];
};

/* open(2) as the mode asks; create: rank 0's first open. */
static int open_fd(const char *path, int amode, int create, int *can_read)
{
	int flags = 0, fd;

	if (create && (amode & MPI_MODE_CREATE))
		flags |= O_CREAT;
	if (create && (amode & MPI_MODE_EXCL))
		flags |= O_EXCL;
	flags |= O_CLOEXEC;
	*can_read = 1;
	if (amode & MPI_MODE_RDONLY)
		return open(path, flags | O_RDONLY);
	if (amode & MPI_MODE_RDWR)
		return open(path, flags | O_RDWR, 0666);
	fd = open(path, flags | O_RDWR, 0666);
	if (fd >= 0 || (errno != EACCES && errno != EPERM))
		return fd;
	*can_read = 0;
	return open(path, flags | O_WRONLY, 0666);
}

/* After open(2): only regular files (and devices) hold a file's data. */
static int check_fd(int fd, int64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return mpi_shim_io_errclass(errno);
	if (S_ISDIR(st.st_mode))
		return MPI_ERR_BAD_FILE;
	*size = st.st_size;
	return MPI_SUCCESS;
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_open";
	struct open_outcome out;
	const char *why, *path;
	int rc, can_read = 1, agree[3], all[3];
	MPI_File fh;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!mpi_shim_comm_ok(comm))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_COMM, call,
					 "the communicator is MPI_COMM_NULL or was freed");
	if (mpi_shim_is_inter(comm))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_COMM, call,
					 "a file is opened on an intra-communicator");
	if (!fh_p)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call, "fh is NULL");
	*fh_p = MPI_FILE_NULL;
	if (!filename || !*filename)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_BAD_FILE, call,
					 "the file name is NULL or empty");
	if (check_amode(amode, &why))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_AMODE, call,
					 "access mode %#x: %s", amode, why);
	if (info != MPI_INFO_NULL && mpi_shim_info_check(MPI_COMM_SELF, info, call))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_INFO, call, "invalid info");
	path = path_of(filename);

	fh = calloc(1, sizeof(*fh));
	if (!fh)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "no memory");
	fh->fd = -1;
	fh->shfp_fd = -1;
	fh->amode = amode;
	fh->filename = strdup(path);
	if (!fh->filename || (rc = PMPI_Comm_dup(comm, &fh->comm))) {
		fh->comm = MPI_COMM_NULL;
		file_release(fh);
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "no memory");
	}
	PMPI_Comm_set_errhandler(fh->comm, MPI_ERRORS_RETURN);
	fh->errhandler = default_eh;
	fh->errhandler->refcount++;

	/* Rank 0 first: it creates, and says how it went. */
	memset(&out, 0, sizeof(out));
	if (fh->comm->rank == 0) {
		struct stat st;
		int existed = stat(path, &st) == 0;

		fh->fd = open_fd(path, amode, 1, &can_read);
		if (fh->fd < 0) {
			out.err = mpi_shim_io_errclass(errno);
		} else {
			out.created = !existed;
			out.err = check_fd(fh->fd, &out.size);
		}
		/* the hidden file of the shared pointer: a name of its own */
		snprintf(out.shfp, sizeof(out.shfp), "%08lx%08x", (unsigned long)getpid(),
			 (unsigned)random() ^ (unsigned)fh->comm->ctx);
	}
	rc = mpi_shim_comm_bcast0(fh->comm, &out, sizeof(out));
	if (rc)
		out.err = rc;
	if (fh->comm->rank != 0 && !out.err) {
		fh->fd = open_fd(path, amode, 0, &can_read);
		if (fh->fd < 0)
			agree[0] = mpi_shim_io_errclass(errno);
		else
			agree[0] = check_fd(fh->fd, &out.size);
	} else {
		agree[0] = out.err;
	}
	agree[1] = amode;
	agree[2] = -amode;
	if (!out.err && (rc = PMPI_Allreduce(agree, all, 3, MPI_INT, MPI_MAX, fh->comm)))
		all[0] = rc;
	else if (out.err)
		all[0] = out.err, all[1] = amode, all[2] = -amode;
	if (!all[0] && all[1] != -all[2])
		all[0] = MPI_ERR_NOT_SAME;
	if (!all[0]) {
		rc = mpi_shim_view_default(fh);
		if (!rc) {
			hints_default(fh);
			hints_apply(fh, info);
			rc = aggregators(fh);
		}
		if (!rc && !(fh->shfp_name = malloc(strlen(path) + 64)))
			rc = MPI_ERR_NO_MEM;
		if (rc)
			all[0] = rc; /* local only: memory */
	}
	if (all[0]) {
		const char *what = agree[0] ? "this process could not open it" :
				   out.err ? "rank 0 could not open it" :
				   all[0] == MPI_ERR_NOT_SAME ? "the processes gave different access modes" :
				   "another process could not open it";

		if (fh->comm->rank == 0 && out.created && !out.err) {
			unlink(path);
		}
		file_release(fh);
		return mpi_shim_file_err(MPI_FILE_NULL, all[0], call, "\"%s\": %s%s%s", filename,
					 what, agree[0] ? ": " : "",
					 agree[0] ? mpi_shim_err_text(agree[0]) : "");
	}
	{
		/* ".NAME.shfp.ID" next to the file */
		const char *slash = strrchr(path, '/');
		int dirlen = slash ? (int)(slash - path) + 1 : 0;

		sprintf(fh->shfp_name, "%.*s.%s.shfp.%s", dirlen, path, path + dirlen, out.shfp);
	}
	fh->can_read = can_read;
	if (amode & MPI_MODE_APPEND) {
		fh->fp = out.size / (MPI_Offset)fh->etype->size;
		fh->shfp_init = out.size;
	}
	fh->valid = 1;
	*fh_p = fh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_open);

int PMPI_File_close(MPI_File *fh_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_close";
	MPI_File fh;
	int rc, err = MPI_SUCCESS;

	if (!fh_p)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call, "fh is NULL");
	fh = *fh_p;
	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (fh->coll_head || fh->split || fh->pending)
		return mpi_shim_file_err(fh, MPI_ERR_OTHER, call,
					 "operations on the file are still pending (%s): complete "
					 "them first",
					 fh->split ? "a split collective" :
					 fh->coll_head ? "a nonblocking collective" :
							 "nonblocking operations");
	/* Everyone's writes are issued before the hidden file and a
	 * MPI_MODE_DELETE_ON_CLOSE file go. */
	if (fh->fd >= 0 && close(fh->fd))
		err = mpi_shim_io_errclass(errno);
	fh->fd = -1;
	rc = PMPI_Barrier(fh->comm);
	if (fh->comm->rank == 0) {
		unlink(fh->shfp_name);
		if ((fh->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(fh->filename) && !err)
			err = mpi_shim_io_errclass(errno);
	}
	mpi_shim_shfp_close(fh);
	*fh_p = MPI_FILE_NULL;
	fh->valid = 0;
	if (err || rc) {
		int e = err ? err : rc;

		file_release(fh);
		return mpi_shim_file_err(MPI_FILE_NULL, e, call, "closing the file failed");
	}
	file_release(fh);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_close);

int PMPI_File_delete(const char *filename, MPI_Info info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_delete";
	struct stat st;
	const char *path;
	int rc;

	(void)info;
	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!filename || !*filename)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_BAD_FILE, call,
					 "the file name is NULL or empty");
	path = path_of(filename);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_BAD_FILE, call,
					 "\"%s\" is a directory", filename);
	if (unlink(path))
		return mpi_shim_file_err(MPI_FILE_NULL, mpi_shim_io_errclass(errno), call,
					 "\"%s\": %s", filename, strerror(errno));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_delete);

/* --- size --- */

/* The size argument of a collective call, checked everywhere and the same
 * everywhere (MPI_ERR_NOT_SAME otherwise). */
static int same_size(MPI_File fh, MPI_Offset size, const char *call)
{
	int64_t v[2] = { size, -size }, all[2];
	int rc;

	if ((rc = PMPI_Allreduce(v, all, 2, MPI_INT64_T, MPI_MAX, fh->comm)))
		return mpi_shim_file_err(fh, rc, call, "the agreement on the size failed");
	if (all[0] != -all[1])
		return mpi_shim_file_err(fh, MPI_ERR_NOT_SAME, call,
					 "the processes gave different sizes");
	return MPI_SUCCESS;
}

/* Rank 0 does fn, everyone gets its outcome. */
static int on_rank0(MPI_File fh, int err, const char *call, const char *what)
{
	int32_t e = err;
	int rc = mpi_shim_comm_bcast0(fh->comm, &e, sizeof(e));

	if (rc)
		return mpi_shim_file_err(fh, rc, call, "the broadcast failed");
	if (e)
		return mpi_shim_file_err(fh, e, call, "%s failed on rank 0", what);
	return MPI_SUCCESS;
}

static int check_size_call(MPI_File fh, MPI_Offset size, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (size < 0)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "size %lld is negative",
					 (long long)size);
	if (fh->amode & MPI_MODE_RDONLY)
		return mpi_shim_file_err(fh, MPI_ERR_READ_ONLY, call,
					 "the file was opened MPI_MODE_RDONLY");
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpi_shim_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
					 "the file was opened MPI_MODE_SEQUENTIAL");
	return same_size(fh, size, call);
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_set_size";
	int rc, err = 0;

	if ((rc = check_size_call(fh, size, call)))
		return rc;
	if (fh->comm->rank == 0 && ftruncate(fh->fd, size))
		err = mpi_shim_io_errclass(errno);
	return on_rank0(fh, err, call, "ftruncate");
}
MPI_SHIM_ALIAS(MPI_File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_preallocate";
	int rc, err = 0;

	if ((rc = check_size_call(fh, size, call)))
		return rc;
	if (fh->comm->rank == 0 && size > 0) {
		rc = posix_fallocate(fh->fd, 0, size);
		if (rc == EOPNOTSUPP || rc == EINVAL) {
			/* No allocation on this file system: at least the
			 * size, as the standard asks of a larger size. */
			struct stat st;

			rc = fstat(fh->fd, &st) ? errno :
			     st.st_size < size && ftruncate(fh->fd, size) ? errno : 0;
		}
		if (rc)
			err = mpi_shim_io_errclass(rc);
	}
	return on_rank0(fh, err, call, "the allocation");
}
MPI_SHIM_ALIAS(MPI_File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_size";
	struct stat st;
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!size)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "size is NULL");
	if (fstat(fh->fd, &st))
		return mpi_shim_file_err(fh, mpi_shim_io_errclass(errno), call, "fstat: %s",
					 strerror(errno));
	*size = st.st_size;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_size);

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_group";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!group)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "group is NULL");
	if ((rc = PMPI_Comm_group(fh->comm, group)))
		return mpi_shim_file_err(fh, rc, call, "no group");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_group);

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_amode";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!amode)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "amode is NULL");
	*amode = fh->amode;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_amode);

/* --- info --- */

int mpi_shim_file_set_hints(MPI_File fh, MPI_Info info)
{
	hints_apply(fh, info);
	return aggregators(fh);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_set_info";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (info != MPI_INFO_NULL && mpi_shim_info_check(MPI_COMM_SELF, info, call))
		return mpi_shim_file_err(fh, MPI_ERR_INFO, call, "invalid info");
	if ((rc = mpi_shim_file_set_hints(fh, info)))
		return mpi_shim_file_err(fh, rc, call, "no memory");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_info";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!info_used)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "info_used is NULL");
	if ((rc = hints_to_info(fh, info_used)))
		return mpi_shim_file_err(fh, rc, call, "the info could not be made");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_info);

/* --- consistency --- */

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_set_atomicity";
	int rc, v[2], all[2];

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	v[0] = !!flag;
	v[1] = -!!flag;
	if ((rc = PMPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, fh->comm)))
		return mpi_shim_file_err(fh, rc, call, "the agreement failed");
	if (all[0] != -all[1])
		return mpi_shim_file_err(fh, MPI_ERR_NOT_SAME, call,
					 "the processes gave different flags");
	fh->atomic = !!flag;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_atomicity";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!flag)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "flag is NULL");
	*flag = fh->atomic;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_atomicity);

/*
 * MPI_File_sync: what this process wrote reaches the storage (fsync),
 * and what others wrote and synced becomes visible to this process's
 * next reads: the page cache of a local file system is coherent, and
 * NFS revalidates at the next open or lock (the sync-barrier-sync
 * pattern of MPI-3.1 13.6.10 then works on both).  Collective, as the
 * standard says, but it needs no message.
 */
int PMPI_File_sync(MPI_File fh)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_sync";
	int rc;

	if ((rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (fh->amode & MPI_MODE_RDONLY)
		return MPI_SUCCESS;
	if (fsync(fh->fd) && errno != EINVAL && errno != EROFS)
		return mpi_shim_file_err(fh, mpi_shim_io_errclass(errno), call, "fsync: %s",
					 strerror(errno));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_sync);

/* --- error handlers --- */

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_create_errhandler";
	struct mpi_shim_errhandler *eh;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!fn || !errhandler)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_ARG, call,
					 "the function or errhandler is NULL");
	eh = mpi_shim_errhandler_new((MPI_Comm_errhandler_function *)fn);
	if (!eh)
		return mpi_shim_file_err(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "no memory");
	*errhandler = eh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_create_errhandler);

int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_set_errhandler";
	struct mpi_shim_errhandler **slot;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (fh != MPI_FILE_NULL && (rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (errhandler == MPI_ERRHANDLER_NULL)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "errhandler is MPI_ERRHANDLER_NULL");
	slot = fh == MPI_FILE_NULL ? &default_eh : &fh->errhandler;
	errhandler->refcount++;
	if (*slot)
		mpi_shim_errhandler_release(*slot);
	*slot = errhandler;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_get_errhandler";
	struct mpi_shim_errhandler *eh;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (fh != MPI_FILE_NULL && (rc = mpi_shim_check_file(fh, call)))
		return rc;
	if (!errhandler)
		return mpi_shim_file_err(fh, MPI_ERR_ARG, call, "errhandler is NULL");
	eh = fh == MPI_FILE_NULL ? default_eh : fh->errhandler;
	eh->refcount++;
	*errhandler = eh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_File_call_errhandler";
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (fh != MPI_FILE_NULL && (rc = mpi_shim_check_file(fh, call)))
		return rc;
	mpi_shim_file_err(fh, errorcode, call, "raised by the program");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_File_call_errhandler);

/* MPI_Finalize: the default handler goes back to MPI_ERRORS_RETURN. */
void mpi_shim_io_fini(void)
{
	if (default_eh != MPI_ERRORS_RETURN) {
		mpi_shim_errhandler_release(default_eh);
		default_eh = MPI_ERRORS_RETURN;
	}
}
