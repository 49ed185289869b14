// SPDX-License-Identifier: MIT
/*
 * win.c - windows (MPI-3.1 11.2): MPI_Win_create, _allocate,
 * _allocate_shared with _shared_query, _create_dynamic with _attach and
 * _detach, MPI_Win_free; their attributes, group, name, info and error
 * handlers.
 *
 * Every window has its own duplicate of the communicator it was made on
 * (rma.h): the protocol of rma.c runs on it, so that its messages never
 * meet the program's.  The window's error handler is the window's own
 * (MPI_ERRORS_ARE_FATAL when it is made, as the standard says); the
 * duplicate returns errors to this code, which reports them through it.
 *
 * A shared window (MPI_Win_allocate_shared), and a window of
 * MPI_Win_allocate whose ranks are all on one host, is one segment in
 * /dev/shm for the whole communicator: every process's part in rank
 * order (one after the other, as MPI-3.1 11.2.3 says, unless the info key
 * alloc_shared_noncontig is true; 64-byte aligned then, and always for
 * MPI_Win_allocate), then the lock words of rma_shm.c.  Rank 0 creates
 * it (mode 0600, O_EXCL), the others open it through bip_segment_open,
 * which refuses anything but a regular file of this user with that mode,
 * and check its length; it is unlinked as soon as everyone has it mapped.
 * Such a window is direct (rma_shm.c) unless a rank asks for messages
 * (BIP_MPI_RMA=messages); MPI_Win_allocate falls back to private memory
 * and messages when the segment cannot be made.  A window of
 * MPI_Win_create on one host keeps the program's memory, and has a
 * segment of lock words only: it is direct by single copy where the
 * kernel lets every rank read every other (rma_shm.c), else messages.
 * A dynamic window is always messages: its memory is attached by the
 * target alone, and no origin could check its range.  A window of create
 * or allocate that is not direct is served by the NICs (rma_nic.c) when
 * every rank's NIC to every other can (the LANai board), unless a rank
 * asks for messages.  BIP_MPI_RMA=nic skips direct windows, so that the
 * NICs serve windows of one host too.
 *
 * The memory model (MPI_WIN_MODEL) is MPI_WIN_UNIFIED for a direct window,
 * and MPI_WIN_SEPARATE where an operation reaches the target through the
 * target's own progress (rma.c), a shared window of messages included:
 * there an update becomes visible only when the target calls MPI.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rma.h"
#include "../../bip/base/segment.h"

/* What one process tells the others when a window is made. */
struct win_peer {
	int64_t size;
	int64_t disp_unit;
};

#define WIN_SHARED_ALIGN 64

int mpi_shim_win_err(MPI_Win win, int errclass, const char *call, const char *fmt, ...)
{
	struct mpi_shim_errhandler *eh;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	eh = win && win->errhandler ? win->errhandler : MPI_ERRORS_ARE_FATAL;
	switch (eh->kind) {
	case MPI_SHIM_ERRORS_RETURN:
		return errclass;
	case MPI_SHIM_ERRORS_USER: {
		MPI_Win w = win;
		int code = errclass;

		((MPI_Win_errhandler_function *)eh->fn)(&w, &code, call, msg);
		return errclass;
	}
	default:
		/* The fatal path is the communicators': MPI_COMM_SELF's
		 * handler may be MPI_ERRORS_RETURN, so hand it a
		 * communicator whose handler is the fatal one. */
		{
			struct mpi_shim_errhandler *keep = MPI_COMM_SELF->errhandler;

			MPI_COMM_SELF->errhandler = MPI_ERRORS_ARE_FATAL;
			mpi_shim_err(MPI_COMM_SELF, errclass, call, "%s", msg);
			MPI_COMM_SELF->errhandler = keep;
		}
		return errclass;
	}
}

int mpi_shim_check_win(MPI_Win win, const char *call)
{
	if (mpi_shim_likely(mpi_shim_win_ok(win)))
		return MPI_SUCCESS;
	return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_WIN, call, "%s",
			    win == MPI_WIN_NULL ? "the window is MPI_WIN_NULL" :
						  "the window was freed");
}

static void win_release(MPI_Win win)
{
	struct rma_region *g;

	while ((g = win->regions)) {
		win->regions = g->next;
		free(g);
	}
	if (win->segment)
		munmap(win->segment, win->segment_len);
	free(win->allocated);
	free(win->sizes);
	free(win->disp_units);
	free(win->offsets);
	free(win->pids);
	free(win->bases);
	mpi_shim_rma_nic_fini(win);
	if (win->errhandler)
		mpi_shim_errhandler_release(win->errhandler);
	if (win->comm != MPI_COMM_NULL)
		PMPI_Comm_free(&win->comm);
	free(win);
}

/*
 * The common part of every flavor: the checks of the arguments, the
 * window's communicator, the exchange of sizes and disp_units (not for a
 * dynamic window).  On error nothing is left and the error is reported.
 */
static int win_new(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, int flavor,
		   const char *call, MPI_Win *win_p)
{
	struct win_peer me, *all = NULL;
	MPI_Win win;
	int rc, i;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)) ||
	    (rc = mpi_shim_info_check(comm, info, call)))
		return rc;
	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "a window is made on an intra-communicator");
	if (size < 0)
		return mpi_shim_err(comm, MPI_ERR_SIZE, call, "size %td is negative", size);
	if (disp_unit <= 0)
		return mpi_shim_err(comm, MPI_ERR_DISP, call, "disp_unit %d is not positive",
				    disp_unit);
	win = calloc(1, sizeof(*win));
	if (!win)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for a window");
	win->flavor = flavor;
	win->model = MPI_WIN_SEPARATE;
	win->size = size;
	win->disp_unit = disp_unit;
	win->excl_holder = -1;
	if ((rc = PMPI_Comm_dup(comm, &win->comm)))
		goto free_win;
	PMPI_Comm_set_errhandler(win->comm, MPI_ERRORS_RETURN);
	if (info != MPI_INFO_NULL && (rc = PMPI_Comm_set_info(win->comm, info)))
		goto free_win;
	win->id = win->comm->ctx;
	if (flavor != MPI_WIN_FLAVOR_DYNAMIC) {
		all = malloc(sizeof(*all) * (size_t)comm->size);
		win->sizes = malloc(sizeof(*win->sizes) * (size_t)comm->size);
		win->disp_units = malloc(sizeof(*win->disp_units) * (size_t)comm->size);
		if (!all || !win->sizes || !win->disp_units) {
			rc = MPI_ERR_NO_MEM;
			goto free_all;
		}
		me.size = size;
		me.disp_unit = disp_unit;
		if ((rc = PMPI_Allgather(&me, 2, MPI_INT64_T, all, 2, MPI_INT64_T, win->comm)))
			goto free_all;
		for (i = 0; i < comm->size; i++) {
			win->sizes[i] = (MPI_Aint)all[i].size;
			win->disp_units[i] = (int)all[i].disp_unit;
		}
		free(all);
	}
	win->errhandler = MPI_ERRORS_ARE_FATAL;
	win->valid = 1;
	*win_p = win;
	return MPI_SUCCESS;

free_all:
	free(all);
free_win:
	win_release(win);
	return mpi_shim_err(comm, rc, call, "making the window's communicator failed");
}

/* The rest of a new window: the protocol's part; the handle is set. */
static int win_finish(MPI_Win win, MPI_Comm comm, const char *call, MPI_Win *win_p)
{
	int rc = mpi_shim_rma_win_init(win);

	if (rc) {
		win_release(win);
		return mpi_shim_err(comm, rc, call, "no memory for the window's state");
	}
	*win_p = win;
	return MPI_SUCCESS;
}

/* 1 if every rank of comm is on this host. */
static int win_one_host(MPI_Comm comm)
{
	int i;

	for (i = 1; i < comm->size; i++)
		if (comm->host[i] != comm->host[0])
			return 0;
	return 1;
}

/* 1 if info says alloc_shared_noncontig=true. */
static int win_noncontig(MPI_Info info)
{
	char v[16];
	int flag = 0;

	if (info == MPI_INFO_NULL ||
	    PMPI_Info_get(info, "alloc_shared_noncontig", (int)sizeof(v) - 1, v, &flag) || !flag)
		return 0;
	return !strcmp(v, "true");
}

enum rma_mode mpi_shim_rma_mode(void)
{
	static int mode = -1;
	const char *s;

	if (mode >= 0)
		return (enum rma_mode)mode;
	s = getenv("BIP_MPI_RMA");
	mode = RMA_MODE_AUTO;
	if (s && !strcmp(s, "messages"))
		mode = RMA_MODE_MESSAGES;
	else if (s && !strcmp(s, "nic"))
		mode = RMA_MODE_NIC;
	else if (s && s[0] && strcmp(s, "auto"))
		fprintf(stderr, "BIP_MPI_RMA=%s: the values are auto, nic and messages; "
				"auto is used\n", s);
	return (enum rma_mode)mode;
}

/* Whether every rank of win wants a direct window (collective). */
static int win_agree_direct(MPI_Win win, int *direct)
{
	*direct = mpi_shim_rma_mode() == RMA_MODE_AUTO;
	return PMPI_Allreduce(MPI_IN_PLACE, direct, 1, MPI_INT, MPI_LAND, win->comm);
}

/* Make win, which is not direct, one the NICs serve when every rank wants
 * it and can (collective): MPI_SUCCESS, or an MPI error. */
static int win_try_nic(MPI_Win win)
{
	int want = mpi_shim_rma_mode() != RMA_MODE_MESSAGES, ok = 0, rc;

	if ((rc = PMPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_LAND, win->comm)))
		return rc;
	if (!want)
		return MPI_SUCCESS;
	if ((rc = mpi_shim_rma_nic_setup(win, &ok)))
		return rc;
	if (ok) {
		win->nic = 1;
		win->model = MPI_WIN_UNIFIED;
	}
	return MPI_SUCCESS;
}

/*
 * Map the shared segment of win (every rank's part, one after the other
 * or each 64-byte aligned, then the lock words), rank 0 creating it.
 * Collective; every rank returns the same code.
 */
enum win_parts { WIN_PARTS_PACKED, WIN_PARTS_ALIGNED, WIN_PARTS_NONE };

static int win_map_shared(MPI_Win win, enum win_parts parts, char *why, size_t whylen)
{
	MPI_Comm c = win->comm;
	char name[64];
	struct stat st;
	size_t len = 0, part, ctl;
	int i, fd = -1, rc, ok;
	void *p;

	win->offsets = malloc(sizeof(*win->offsets) * (size_t)c->size);
	if (!win->offsets)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < c->size; i++) {
		win->offsets[i] = (MPI_Aint)len;
		part = parts == WIN_PARTS_NONE ? 0 : (size_t)win->sizes[i];
		if (parts == WIN_PARTS_ALIGNED)
			part = (part + WIN_SHARED_ALIGN - 1) & ~(size_t)(WIN_SHARED_ALIGN - 1);
		if (__builtin_add_overflow(len, part, &len))
			return MPI_ERR_NO_MEM;
	}
	/* The lock words, on their own cache lines. */
	len = (len + WIN_SHARED_ALIGN - 1) & ~(size_t)(WIN_SHARED_ALIGN - 1);
	ctl = len;
	len += mpi_shim_rma_shm_ctl_len(c->size);
	/* Rank 0's pid and the context id name it: unique while it lives. */
	if (c->rank == 0)
		snprintf(name, sizeof(name), "/bip-win-%d-%u", (int)getpid(), win->id);
	if ((rc = mpi_shim_comm_bcast0(c, name, sizeof(name))))
		return rc;
	ok = 1;
	if (c->rank == 0) {
		fd = bip_segment_open(name, O_CREAT | O_EXCL | O_RDWR, NULL, why, whylen);
		if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
			if (fd >= 0 && !why[0])
				snprintf(why, whylen, "ftruncate of %s to %zu bytes failed", name,
					 len);
			ok = 0;
		}
	}
	if ((rc = mpi_shim_comm_bcast0(c, &ok, sizeof(ok))))
		goto close_fd;
	if (!ok) {
		if (!why[0])
			snprintf(why, whylen, "rank 0 could not create %s", name);
		rc = MPI_ERR_RMA_SHARED;
		goto close_fd;
	}
	if (c->rank != 0) {
		fd = bip_segment_open(name, O_RDWR, &st, why, whylen);
		if (fd >= 0 && (size_t)st.st_size != len) {
			snprintf(why, whylen, "%s holds %lld bytes, not %zu", name,
				 (long long)st.st_size, len);
			close(fd);
			fd = -1;
		}
	}
	p = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	ok = p != MAP_FAILED;
	if (!ok && !why[0])
		snprintf(why, whylen, "mapping %s failed", name);
	/* Everyone has it mapped (or failed): the name can go. */
	if ((rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, c)) == 0 && !ok)
		rc = MPI_ERR_RMA_SHARED;
	if (c->rank == 0)
		shm_unlink(name);
	if (rc) {
		if (p != MAP_FAILED)
			munmap(p, len);
		goto close_fd;
	}
	win->segment = p;
	win->segment_len = len;
	win->ctl = (void *)((char *)p + ctl);
	if (parts != WIN_PARTS_NONE)
		win->base = win->size ? (char *)p + win->offsets[c->rank] : NULL;
close_fd:
	if (fd >= 0)
		close(fd);
	return rc;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
		    MPI_Win *win_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_create";
	MPI_Win win;
	int rc;

	if (!win_p)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "win is NULL");
	if (size > 0 && !base)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "base is NULL with size %td", size);
	if ((rc = win_new(size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, call, &win)))
		return rc;
	win->base = base;
	if (win_one_host(comm)) {
		/* Direct by single copy, with the lock words in a segment,
		 * when every rank wants it and the kernel lets them. */
		char why[256] = "";
		int direct = 0, ok = 0;

		if ((rc = win_agree_direct(win, &direct))) {
			win_release(win);
			return mpi_shim_err(comm, rc, call, "agreeing on the window's kind failed");
		}
		if (direct && !win_map_shared(win, WIN_PARTS_NONE, why, sizeof(why))) {
			if ((rc = mpi_shim_rma_shm_cma_setup(win, &ok))) {
				win_release(win);
				return mpi_shim_err(comm, rc, call, "agreeing on the window's kind failed");
			}
			if (ok) {
				win->direct = win->cma = 1;
				win->model = MPI_WIN_UNIFIED;
			} else {
				munmap(win->segment, win->segment_len);
				win->segment = NULL;
				win->ctl = NULL;
			}
		}
	}
	if (!win->direct && (rc = win_try_nic(win))) {
		win_release(win);
		return mpi_shim_err(comm, rc, call, "agreeing on the window's kind failed");
	}
	return win_finish(win, comm, call, win_p);
}
MPI_SHIM_ALIAS(MPI_Win_create);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
		      MPI_Win *win_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_allocate";
	MPI_Win win;
	int rc;

	if (!win_p || !baseptr)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "win or baseptr is NULL");
	if ((rc = win_new(size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, call, &win)))
		return rc;
	if (win_one_host(comm)) {
		/* In a segment that every rank maps, when they all want it
		 * and it can be made; else private memory and messages. */
		char why[256] = "";
		int direct = 0;

		if ((rc = win_agree_direct(win, &direct)))
			goto failed;
		if (direct && !win_map_shared(win, WIN_PARTS_ALIGNED, why, sizeof(why))) {
			win->direct = 1;
			win->model = MPI_WIN_UNIFIED;
			if ((rc = win_finish(win, comm, call, win_p)))
				return rc;
			*(void **)baseptr = win->base;
			return MPI_SUCCESS;
		}
		free(win->offsets);
		win->offsets = NULL;
	}
	win->allocated = calloc(1, size ? (size_t)size : 1);
	if (!win->allocated) {
		win_release(win);
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, call, "no memory for %td bytes", size);
	}
	win->base = size ? win->allocated : NULL;
	if ((rc = win_try_nic(win)))
		goto failed;
	if ((rc = win_finish(win, comm, call, win_p)))
		return rc;
	*(void **)baseptr = win->base;
	return MPI_SUCCESS;

failed:
	win_release(win);
	return mpi_shim_err(comm, rc, call, "agreeing on the window's kind failed");
}
MPI_SHIM_ALIAS(MPI_Win_allocate);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			     void *baseptr, MPI_Win *win_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_allocate_shared";
	char why[256] = "";
	MPI_Win win;
	int rc, i, direct;

	if (!win_p || !baseptr)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "win or baseptr is NULL");
	if ((rc = win_new(size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, call, &win)))
		return rc;
	for (i = 1; i < comm->size; i++)
		if (comm->host[i] != comm->host[0]) {
			win_release(win);
			return mpi_shim_err(comm, MPI_ERR_RMA_SHARED, call,
					    "ranks 0 and %d are on different hosts", i);
		}
	if ((rc = win_map_shared(win, win_noncontig(info) ? WIN_PARTS_ALIGNED : WIN_PARTS_PACKED,
				 why, sizeof(why))) ||
	    (rc = win_agree_direct(win, &direct))) {
		win_release(win);
		return mpi_shim_err(comm, rc, call, "%s", why[0] ? why : "no shared segment");
	}
	win->direct = direct;
	win->model = direct ? MPI_WIN_UNIFIED : MPI_WIN_SEPARATE;
	if ((rc = win_finish(win, comm, call, win_p)))
		return rc;
	*(void **)baseptr = win->base;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_allocate_shared);

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_shared_query";
	int rc, i;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (win->flavor != MPI_WIN_FLAVOR_SHARED)
		return mpi_shim_win_err(win, MPI_ERR_RMA_FLAVOR, call,
					"the window is not from MPI_Win_allocate_shared");
	if (!size || !disp_unit || !baseptr)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call,
					"size, disp_unit or baseptr is NULL");
	if (rank != MPI_PROC_NULL && (rank < 0 || rank >= win->comm->size))
		return mpi_shim_win_err(win, MPI_ERR_RANK, call,
					"rank %d is not in the window's group (size %d)", rank,
					win->comm->size);
	if (rank == MPI_PROC_NULL) {
		/* The first rank with memory. */
		for (i = 0; i < win->comm->size && !win->sizes[i]; i++)
			;
		if (i == win->comm->size) {
			*size = 0;
			*disp_unit = win->disp_units[0];
			*(void **)baseptr = NULL;
			return MPI_SUCCESS;
		}
		rank = i;
	}
	*size = win->sizes[rank];
	*disp_unit = win->disp_units[rank];
	*(void **)baseptr = win->sizes[rank] ? (char *)win->segment + win->offsets[rank] : NULL;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_shared_query);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_create_dynamic";
	MPI_Win win;
	int rc;

	if (!win_p)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "win is NULL");
	if ((rc = win_new(0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, call, &win)))
		return rc;
	win->base = MPI_BOTTOM;
	return win_finish(win, comm, call, win_p);
}
MPI_SHIM_ALIAS(MPI_Win_create_dynamic);

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_attach";
	struct rma_region *g;
	uintptr_t b = (uintptr_t)base;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return mpi_shim_win_err(win, MPI_ERR_RMA_FLAVOR, call,
					"the window is not from MPI_Win_create_dynamic");
	if (size < 0)
		return mpi_shim_win_err(win, MPI_ERR_SIZE, call, "size %td is negative", size);
	if (size > 0 && !base)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "base is NULL");
	for (g = win->regions; g; g = g->next)
		if (b < g->base + g->size && g->base < b + (uintptr_t)size)
			return mpi_shim_win_err(win, MPI_ERR_RMA_ATTACH, call,
						"%td bytes at %p overlap memory already attached",
						size, base);
	g = malloc(sizeof(*g));
	if (!g)
		return mpi_shim_win_err(win, MPI_ERR_NO_MEM, call, "no memory");
	g->base = b;
	g->size = (uintptr_t)size;
	g->next = win->regions;
	win->regions = g;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_attach);

int PMPI_Win_detach(MPI_Win win, const void *base)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_detach";
	struct rma_region **gp, *g;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return mpi_shim_win_err(win, MPI_ERR_RMA_FLAVOR, call,
					"the window is not from MPI_Win_create_dynamic");
	for (gp = &win->regions; (g = *gp); gp = &g->next)
		if (g->base == (uintptr_t)base) {
			*gp = g->next;
			free(g);
			return MPI_SUCCESS;
		}
	return mpi_shim_win_err(win, MPI_ERR_RMA_ATTACH, call,
				"no memory attached at %p", (void *)base);
}
MPI_SHIM_ALIAS(MPI_Win_detach);

int PMPI_Win_free(MPI_Win *win_p)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_free";
	MPI_Win win;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!win_p)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_ARG, call, "win is NULL");
	win = *win_p;
	if ((rc = mpi_shim_check_win(win, call)) || (rc = mpi_shim_rma_win_busy(win, call)))
		return rc;
	/* Nobody may still be reaching into this process's memory. */
	if ((rc = PMPI_Barrier(win->comm)))
		return mpi_shim_win_err(win, rc, call, "the barrier failed");
	/* The attributes go first, while the window is still whole: a
	 * delete callback may look at it.  The window is freed even when one
	 * fails (as a communicator is), and that error is returned. */
	rc = mpi_shim_win_attr_delete_all(win);
	mpi_shim_rma_win_fini(win);
	win->valid = 0;
	win_release(win);
	*win_p = MPI_WIN_NULL;
	if (rc)
		return mpi_shim_err(MPI_COMM_WORLD, rc, call,
				    "a delete callback of the window's attributes failed");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_free);

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Win_get_group")) ||
	    (rc = mpi_shim_check_win(win, "MPI_Win_get_group")))
		return rc;
	if (!group)
		return mpi_shim_win_err(win, MPI_ERR_ARG, "MPI_Win_get_group", "group is NULL");
	return PMPI_Comm_group(win->comm, group);
}
MPI_SHIM_ALIAS(MPI_Win_get_group);

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_get_attr";
	void *v;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (!value || !flag)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "attribute_val or flag is NULL");
	/* The predefined attributes point into the window itself: each
	 * window's values, valid as long as it is. */
	switch (keyval) {
	case MPI_WIN_BASE:
		v = win->base;
		break;
	case MPI_WIN_SIZE:
		v = &win->size;
		break;
	case MPI_WIN_DISP_UNIT:
		v = &win->disp_unit;
		break;
	case MPI_WIN_CREATE_FLAVOR:
		v = &win->flavor;
		break;
	case MPI_WIN_MODEL:
		v = &win->model;
		break;
	default:
		return mpi_shim_win_attr_get(win, keyval, value, flag);
	}
	*(void **)value = v;
	*flag = 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_get_attr);

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Win_set_name")) ||
	    (rc = mpi_shim_check_win(win, "MPI_Win_set_name")))
		return rc;
	if (!name)
		return mpi_shim_win_err(win, MPI_ERR_ARG, "MPI_Win_set_name", "name is NULL");
	snprintf(win->name, sizeof(win->name), "%s", name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Win_get_name")) ||
	    (rc = mpi_shim_check_win(win, "MPI_Win_get_name")))
		return rc;
	if (!name || !resultlen)
		return mpi_shim_win_err(win, MPI_ERR_ARG, "MPI_Win_get_name",
					"name or resultlen is NULL");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", win->name);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_get_name);

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_set_info";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if ((rc = PMPI_Comm_set_info(win->comm, info)))
		return mpi_shim_win_err(win, rc, call, "the info could not be set");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_get_info";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (!info_used)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "info_used is NULL");
	if ((rc = PMPI_Comm_get_info(win->comm, info_used)))
		return mpi_shim_win_err(win, rc, call, "the info could not be read");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_get_info);

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_create_errhandler";
	struct mpi_shim_errhandler *eh;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!fn || !errhandler)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_ARG, call,
				    "the function or errhandler is NULL");
	eh = mpi_shim_errhandler_new((MPI_Comm_errhandler_function *)fn);
	if (!eh)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "no memory");
	*errhandler = eh;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_create_errhandler);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_set_errhandler";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (errhandler == MPI_ERRHANDLER_NULL)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "errhandler is MPI_ERRHANDLER_NULL");
	errhandler->refcount++;
	if (win->errhandler)
		mpi_shim_errhandler_release(win->errhandler);
	win->errhandler = errhandler;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_get_errhandler";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	if (!errhandler)
		return mpi_shim_win_err(win, MPI_ERR_ARG, call, "errhandler is NULL");
	win->errhandler->refcount++;
	*errhandler = win->errhandler;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
	MPI_SHIM_ENTER();
	const char *call = "MPI_Win_call_errhandler";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)))
		return rc;
	mpi_shim_win_err(win, errorcode, call, "called by the program");
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_call_errhandler);
