/* SPDX-License-Identifier: MIT */
/*
 * io.h - parallel I/O inside the shim (MPI-3.1 chapter 13): the file
 * object and the contract between the chapter's files.
 *
 *   file.c    the object: open, close, delete, sizes, info and hints,
 *             atomicity, sync, error handlers, handle conversion;
 *   view.c    views: the filetype flattened into blocks, and the map
 *             from a position in the view's data to extents of the file;
 *   rw.c      independent access (explicit offsets, individual pointer):
 *             straight pwritev/preadv, data sieving, atomic mode, and the
 *             nonblocking forms as progress-driven requests;
 *   coll_io.c collective access: two-phase I/O through aggregators, one
 *             state machine for the blocking, nonblocking and split forms;
 *   shared.c  the shared file pointer and the ordered calls;
 *   datarep.c data representations: native, internal, external32 and
 *             those of MPI_Register_datarep.
 *
 * Inside the folder the files call each other both ways: rw.c holds the
 * access that every positioning shares and the split collectives of
 * every positioning (so it starts coll_io.c's collectives and shared.c's
 * ordered ones), and those two build their accesses with rw.c.  Moving
 * the split calls to a file of their own would only rename the circle:
 * they are one call family of the standard over the three positionings.
 *
 * The code assumes POSIX with NFS's guarantees and no more: data written
 * by one process is seen by another after the writer's fsync (or close)
 * and the reader's open or lock (MPI_File_sync's rule), and fcntl byte
 * range locks work across hosts.
 */
#ifndef MPI_SHIM_IO_H
#define MPI_SHIM_IO_H

#include <stdint.h>
#include <sys/types.h>

#include "shim.h"
#include "engine.h"
#include "datatype.h"

/* --- data representations (datarep.c) --- */

struct mpi_shim_datarep;

/*
 * The representation named name: "native", "internal" (the same bytes as
 * native here), "external32", or one registered by MPI_Register_datarep;
 * NULL if there is none of that name.
 */
const struct mpi_shim_datarep *mpi_shim_datarep_find(const char *name);
/* 1 for native and internal: the file holds the packed bytes as they are. */
int mpi_shim_datarep_is_native(const struct mpi_shim_datarep *rep);
const char *mpi_shim_datarep_name(const struct mpi_shim_datarep *rep);
/*
 * The bytes that count elements of t take in the file.  MPI_SUCCESS, or
 * MPI_ERR_UNSUPPORTED_DATAREP when t holds a type the representation
 * cannot express, MPI_ERR_CONVERSION when a user extent function fails.
 */
int mpi_shim_datarep_size(const struct mpi_shim_datarep *rep, MPI_Datatype t, MPI_Count count,
			  MPI_Offset *bytes);
/* MPI_File_get_type_extent: the extent of t in the file's representation. */
int mpi_shim_datarep_extent(const struct mpi_shim_datarep *rep, MPI_Datatype t,
			    MPI_Aint *extent);
/*
 * Write side: count elements of t at buf (the program's memory, t's
 * layout) to out, their file form (mpi_shim_datarep_size bytes).
 * position: the index, in elements of t, of the first one in the
 * operation (the user functions' argument).  MPI_SUCCESS or
 * MPI_ERR_CONVERSION.  Nothing is reported.
 */
int mpi_shim_datarep_to_file(const struct mpi_shim_datarep *rep, const void *buf,
			     MPI_Count count, MPI_Datatype t, void *out, MPI_Offset position);
/* Read side: the file form at in (mpi_shim_datarep_size bytes) to count
 * elements of t at buf. */
int mpi_shim_datarep_from_file(const struct mpi_shim_datarep *rep, const void *in, void *buf,
			       MPI_Count count, MPI_Datatype t, MPI_Offset position);
/* MPI_Finalize: forget the representations of MPI_Register_datarep. */
void mpi_shim_datarep_fini(void);

/* --- the file object (file.c) --- */

/* What a collective hint says (romio_cb_read, romio_cb_write, romio_ds_*). */
enum io_switch {
	IO_AUTO,    /* "automatic": the library decides per call */
	IO_ENABLE,
	IO_DISABLE,
};

/* The hints in use (MPI_File_set_info, MPI_File_get_info). */
struct io_hints {
	uint64_t cb_buffer_size;    /* bytes an aggregator moves per cycle */
	int cb_nodes;               /* aggregators (default: one per host) */
	enum io_switch cb_read, cb_write;
	enum io_switch ds_read, ds_write;
	uint64_t ind_rd_buffer_size, ind_wr_buffer_size; /* data sieving */
	uint64_t striping_unit;     /* file domains are aligned to it (0: none) */
	int striping_factor;
	char access_style[64];
};

/* A filetype as blocks of one instance, for the view (view.c). */
struct io_flat {
	uint64_t n;        /* blocks */
	int64_t *off;      /* from the instance's origin, non-decreasing */
	uint64_t *len;     /* bytes, each > 0 */
	uint64_t *pre;     /* data bytes of the instance before block i */
	uint64_t size;     /* data bytes of one instance (the sum of len) */
	int64_t extent;    /* distance between two instances */
};

struct mpi_shim_file {
	int valid;
	int fd;
	int amode;
	MPI_Comm comm;          /* a duplicate of the one it was opened on */
	char *filename;         /* as opened (prefix "ufs:" or "nfs:" removed) */
	struct mpi_shim_errhandler *errhandler;
	struct io_hints hints;
	int atomic;             /* MPI_File_set_atomicity */
	int can_read;           /* opened for reading too (data sieving) */
	int pending;            /* nonblocking independent operations */
	int naggs;              /* the aggregators: ranks in comm */
	int *aggs;

	/* the view */
	MPI_Offset disp;
	MPI_Datatype etype, filetype; /* held */
	const struct mpi_shim_datarep *rep;
	struct io_flat flat;
	MPI_Offset fp;          /* the individual file pointer, in etypes */

	/* the shared file pointer (shared.c) */
	char *shfp_name;        /* the hidden file that holds it */
	int64_t shfp_init;      /* its value while that file is empty, in etypes */
	int shfp_fd;            /* -1 until first used here */

	/* collective operations run one at a time, in the order they were
	 * started (the same on every rank): the queue of their requests */
	void *coll_head, *coll_tail; /* coll_io.c's struct coll */
	/* the split collective in progress (MPI_File_*_begin), if any */
	MPI_Request split;
	const void *split_buf;
	int split_kind;
};

/* 1 if fh is a file that may be used. */
static inline int mpi_shim_file_ok(MPI_File fh)
{
	return fh != MPI_FILE_NULL && fh->valid;
}

/* Report an error on fh (MPI_FILE_NULL: the default file error handler,
 * MPI_ERRORS_RETURN unless the program set another); returns errclass. */
mpi_shim_cold int mpi_shim_file_err(MPI_File fh, int errclass, const char *call,
				    const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* MPI_ERR_FILE (reported) unless fh may be used. */
int mpi_shim_check_file(MPI_File fh, const char *call);
/* The error class of an errno from the file system. */
int mpi_shim_io_errclass(int err);

/* --- views (view.c) --- */

/* The default view (MPI_File_open): displacement 0, MPI_BYTE, native. */
int mpi_shim_view_default(MPI_File fh);
void mpi_shim_view_free(MPI_File fh);

/* One piece of an access: len bytes at file offset off. */
struct io_extent {
	int64_t off;
	uint64_t len;
};

/*
 * The extents of the file that bytes [0, bytes) of the data stream of an
 * access starting at `pos` bytes into the view's data hold, in order
 * (adjacent ones merged).  *ext is malloc'ed.  MPI_SUCCESS or
 * MPI_ERR_NO_MEM; MPI_ERR_ARG when an offset would pass 2^63.
 */
int mpi_shim_view_map(MPI_File fh, uint64_t pos, uint64_t bytes, struct io_extent **ext,
		      uint64_t *n);
/* The file offset of byte `pos` of the view's data (MPI_File_get_byte_offset). */
int64_t mpi_shim_view_byte_offset(MPI_File fh, uint64_t pos);

/* --- an access, as rw.c and coll_io.c share it --- */

enum io_dir { IO_READ, IO_WRITE };

/*
 * One data access after the checks: `bytes` bytes of the file's
 * representation at `pos` bytes into the view, from or to count elements
 * of type at buf.  The stream is those bytes contiguous in memory: buf
 * itself when its type is contiguous and the representation native,
 * else a buffer of the access (packed and converted before a write,
 * converted and unpacked after a read).
 */
struct io_access {
	MPI_File fh;
	enum io_dir dir;
	void *buf;
	MPI_Count count;
	MPI_Datatype type;      /* held until io_access_done */
	uint64_t pos;           /* bytes into the view's data */
	uint64_t bytes;         /* in the file's representation */
	MPI_Offset position;    /* elements before it (user datareps) */
	unsigned char *stream;  /* contiguous bytes of the access */
	int own_stream;         /* stream was allocated */
	struct io_extent *ext;  /* where they go */
	uint64_t n;             /* extents */
	uint64_t next;          /* the first extent not moved yet */
	uint64_t spos;          /* its first byte in the stream */
	int err;
	int eof;                /* a read reached the end of the file */
	uint64_t done;          /* bytes moved, from the stream's start */
};

/* The checks that every data access call makes: the file, count, type and
 * buffer, and the access mode against the direction and positioning
 * (seq: a shared-pointer call, the only ones MPI_MODE_SEQUENTIAL allows).
 * Reported on fh. */
int mpi_shim_io_check(MPI_File fh, const void *buf, int count, MPI_Datatype type,
		      enum io_dir dir, int seq, const char *call);

/* Fill a from its arguments (stream packed for a write): MPI_SUCCESS or
 * an error class, nothing reported; io_access_done releases it. */
int mpi_shim_io_access_init(struct io_access *a, MPI_File fh, enum io_dir dir, const void *buf,
			    MPI_Count count, MPI_Datatype type, uint64_t pos);
/* The end of a: unpack a read's stream; the status; release.  Returns
 * a->err, or the conversion's error. */
int mpi_shim_io_access_done(struct io_access *a, MPI_Status *status);

/* rw.c: move a's extents from a->next on, independently (data sieving,
 * locks in atomic mode), stopping after about budget bytes: an error
 * class (also left in a->err). */
int mpi_shim_io_indep(struct io_access *a, uint64_t budget);
/* rw.c: a nonblocking independent access as a progress-driven request
 * (a is moved into it). */
int mpi_shim_io_indep_start(struct io_access *a, MPI_Request *req);
/* rw.c: len bytes at off, all of them (EINTR and short counts retried). */
int mpi_shim_io_pwrite(int fd, const void *buf, uint64_t len, int64_t off);
/* A read past the end gives fewer bytes: *got says how many. */
int mpi_shim_io_pread(int fd, void *buf, uint64_t len, int64_t off, uint64_t *got);
/* fcntl byte-range lock over [off, off + len) (len 0: to the end), or
 * its release (type F_UNLCK); waits. */
int mpi_shim_io_lock(int fd, int type, int64_t off, uint64_t len);

/* rw.c: the end of the file, in etypes of the view (MPI_SEEK_END). */
int mpi_shim_io_end_etypes(MPI_File fh, MPI_Offset *out);

/* shared.c: MPI_File_read_ordered and write_ordered, and their split
 * forms: the collective as a request (req), reported errors. */
int mpi_shim_io_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type,
			enum io_dir dir, MPI_Request *req, const char *call);

/* coll_io.c: start a collective access on fh's communicator; the request
 * completes when this process's part is done.  a is moved into it. */
int mpi_shim_io_coll_start(struct io_access *a, MPI_Request *req);

/* file.c: new hints (MPI_File_set_info, MPI_File_set_view); at
 * MPI_Finalize, the default error handler back to MPI_ERRORS_RETURN. */
int mpi_shim_file_set_hints(MPI_File fh, MPI_Info info);
void mpi_shim_io_fini(void);

/* The wait of a blocking call that runs as a request (collective, split
 * end): progress steps the requests, as MPI_Wait does; the request is
 * released and its error class returned. */
static inline int mpi_shim_io_wait(MPI_Request *r, MPI_Status *st, const char *call)
{
	int rc = mpi_shim_wait_done(*r, call, 1);

	return rc ? rc : mpi_shim_req_finish(r, st);
}

/* shared.c */
void mpi_shim_shfp_close(MPI_File fh);  /* at close: this process's descriptor */
/* set_view: the shared pointer back to 0 once every process is done with
 * the old view (collective); want: *current is its value before. */
int mpi_shim_shfp_reset(MPI_File fh, int want, int64_t *current);

#endif /* MPI_SHIM_IO_H */
