/* SPDX-License-Identifier: MIT */
/*
 * bsend.c - buffered sends: MPI_Buffer_attach, MPI_Buffer_detach, and the
 * copy of a buffered send into the attached buffer.
 *
 * Each buffered message takes a region of the attached buffer (its packed
 * data plus MPI_BSEND_OVERHEAD bytes, the room the user is told to
 * provide), then leaves as a standard send from there; the region is free
 * again when that send completes.  Regions are kept in address order in a
 * list of their own, so the user's buffer holds only data.
 *
 * The send from a region is a request of its own that nobody waits for:
 * its region is its state, given back when it completes and goes (its
 * release callback).  The request the program holds for MPI_Ibsend or
 * MPI_Bsend_init is complete once the copy is made; its callbacks
 * (mpi_shim_bsend_ops) cancel the message that left and start a
 * persistent one again.
 */
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "shim.h"
#include "datatype.h"
#include "p2p.h"

struct region {
	size_t off, len;
	struct region *next;
};

static struct {
	char *buf;
	size_t size;
	struct region *used; /* by offset */
	int pending;         /* buffered sends not complete */
} bs;

/* A free region of len bytes, first fit; NULL if none. */
static struct region *region_take(size_t len)
{
	struct region **pp = &bs.used, *r;
	size_t off = 0;

	for (;;) {
		size_t end = *pp ? (*pp)->off : bs.size;

		if (end >= off && end - off >= len)
			break;
		if (!*pp)
			return NULL;
		off = (*pp)->off + (*pp)->len;
		pp = &(*pp)->next;
	}
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	r->off = off;
	r->len = len;
	r->next = *pp;
	*pp = r;
	return r;
}

/* The region is free again. */
static void region_put(struct region *r)
{
	struct region **pp;

	for (pp = &bs.used; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			free(r);
			break;
		}
	}
}

/* The send from a region completed and goes: so does the region. */
static void region_send_release(struct mpi_shim_request *req)
{
	region_put(req->state);
	req->state = NULL;
	bs.pending--;
}

static const struct mpi_shim_req_ops region_send_ops = {
	.release = region_send_release,
};

int mpi_shim_bsend_start(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
			 MPI_Comm comm, struct mpi_shim_request *user, const char *call)
{
	size_t bytes = (size_t)count * t->size, need = bytes + MPI_BSEND_OVERHEAD;
	struct mpi_shim_request *r;
	struct region *reg;
	void *copy;
	int rc;

	if (dst == MPI_PROC_NULL)
		return MPI_SUCCESS;
	reg = region_take(need);
	if (!reg && bs.pending) {
		/* Room may come back as earlier buffered sends complete. */
		mpi_shim_progress();
		reg = region_take(need);
	}
	if (!reg)
		return mpi_shim_err(comm, MPI_ERR_BUFFER, call,
				    "no room for %zu bytes (+%d overhead) in the attached buffer "
				    "(%zu bytes%s)",
				    bytes, MPI_BSEND_OVERHEAD, bs.size,
				    bs.buf ? ", partly in use by earlier buffered sends" :
					     "; none attached: use MPI_Buffer_attach");
	copy = bs.buf + reg->off;
	if (bytes)
		mpi_shim_datatype_pack(buf, count, t, 0, copy, bytes);
	r = mpi_shim_req_alloc();
	if (!r) {
		region_put(reg);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a request");
	}
	rc = mpi_shim_send_start(r, copy, (int)bytes, MPI_BYTE, dst, tag, comm, comm->ctx,
				 MPI_SHIM_MODE_STANDARD);
	if (rc) {
		region_put(reg);
		mpi_shim_req_free(r);
		return mpi_shim_err(comm, rc, call, "sending to rank %d failed: %s", dst,
				    bip_error_string());
	}
	/* The region goes with the request (its callbacks, set after the
	 * send's own). */
	bs.pending++;
	r->state = reg;
	r->ops = &region_send_ops;
	if (user && (r->flags & MPI_SHIM_F_NAMED)) {
		user->wpeer = r->wpeer;
		user->msgno = r->msgno;
		user->flags |= MPI_SHIM_F_NAMED;
	}
	/* Nobody waits for it: released when complete. */
	if (r->done)
		mpi_shim_request_release(r);
	else
		r->freed = 1;
	return MPI_SUCCESS;
}

/* MPI_Start of a persistent buffered send: the copy is made, the request
 * complete at once. */
static int bsend_restart(struct mpi_shim_request *r, const char *call)
{
	int rc;

	r->freed = 0;
	r->flags &= MPI_SHIM_F_KEEP;
	r->cancelled = 0;
	r->status.mpi_shim_cancelled = 0;
	rc = mpi_shim_bsend_start(r->buf, r->count, r->type, r->peer, r->tag, r->comm, r, call);
	if (rc)
		return rc; /* reported */
	r->done = 1;
	r->error = MPI_SUCCESS;
	r->active = 1;
	return MPI_SUCCESS;
}

/* MPI_Cancel: the message that left from the attached buffer, if it can. */
static int bsend_cancel(struct mpi_shim_request *r)
{
	mpi_shim_send_cancel(r);
	return MPI_SUCCESS;
}

const struct mpi_shim_req_ops mpi_shim_bsend_ops = {
	.start = bsend_restart,
	.cancel = bsend_cancel,
};

static int attach(void *buffer, MPI_Count size, const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (bs.buf)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, call,
				    "a buffer (%zu bytes) is already attached; detach it first",
				    bs.size);
	if (size < 0 || (!buffer && size > 0))
		return mpi_shim_err(MPI_COMM_WORLD, size < 0 ? MPI_ERR_COUNT : MPI_ERR_BUFFER, call,
				    "buffer %p of %lld bytes", buffer, (long long)size);
	bs.buf = buffer;
	bs.size = (size_t)size;
	return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
	MPI_SHIM_ENTER();
	return attach(buffer, size, "MPI_Buffer_attach");
}
MPI_SHIM_ALIAS(MPI_Buffer_attach);

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
	MPI_SHIM_ENTER();
	return attach(buffer, size, "MPI_Buffer_attach_c");
}
MPI_SHIM_ALIAS(MPI_Buffer_attach_c);

/* MPI_Finalize: buffered messages leave before the shim goes. */
void mpi_shim_bsend_flush(void)
{
	struct bip_layer_wait w = { 0, 0 };

	while (bs.pending) {
		mpi_shim_progress_poll();
		if (bs.pending && mpi_shim_progress_wait(&w) < 0)
			break;
	}
}

static int detach(void *buffer_addr, size_t *size, const char *call)
{
	struct bip_layer_wait w = { 0, 0 };
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	/* The buffered messages leave first. */
	while (bs.pending) {
		mpi_shim_progress();
		if (bs.pending && mpi_shim_progress_wait(&w) < 0)
			return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_OTHER, call,
					    "every other process has ended: %d buffered send(s) "
					    "cannot complete", bs.pending);
	}
	*(void **)buffer_addr = bs.buf;
	*size = bs.size;
	bs.buf = NULL;
	bs.size = 0;
	return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	MPI_SHIM_ENTER();
	size_t n;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Buffer_detach")))
		return rc;
	if (!buffer_addr || !size)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach",
				    "buffer address or size is NULL");
	if (bs.size > (size_t)0x7fffffff)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Buffer_detach",
				    "the attached buffer has %zu bytes, more than an int holds: "
				    "use MPI_Buffer_detach_c", bs.size);
	if ((rc = detach(buffer_addr, &n, "MPI_Buffer_detach")))
		return rc;
	*size = (int)n;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Buffer_detach);

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
	MPI_SHIM_ENTER();
	size_t n;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Buffer_detach_c")))
		return rc;
	if (!buffer_addr || !size)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach_c",
				    "buffer address or size is NULL");
	if ((rc = detach(buffer_addr, &n, "MPI_Buffer_detach_c")))
		return rc;
	*size = (MPI_Count)n;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Buffer_detach_c);
