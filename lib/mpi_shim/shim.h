/* SPDX-License-Identifier: MIT */
/*
 * shim.h - the inside of the MPI shim, shared by its parts.
 *
 * One folder per chapter of the MPI standard (mpi_shim(7), "Layout"):
 *
 * init/      init.c MPI_Init..MPI_Finalize, MPI_Abort: starts and stops
 *            every chapter, so it stands above them all
 * env/       the bottom, which every chapter may use: env.c the global
 *            state, the hosts, Wtime, processor name, versions; info.c
 *            info objects, communicator hints; errors.c error handlers,
 *            error strings, the argument checks; errcode.c added error
 *            codes
 * request/   engine.c the request and progress engine (engine.h, which
 *            holds its contract); request.c the calls on requests
 *            (Wait/Test families, Start, Cancel, free); greq.c
 *            generalized requests
 * pt2pt/     p2p.c matching, eager and rendezvous protocols (p2p.h);
 *            pt2pt.c the point-to-point calls and their argument checks;
 *            bsend.c buffered sends; isendrecv.c MPI_Isendrecv[_replace]
 * coll/      coll*.c collectives; nbc.c non-blocking collectives;
 *            coll_neighbor.c neighbourhood collectives; op.c operations
 * datatype/  datatype.c datatypes (datatype.h); type_array.c subarrays and
 *            darrays, type_external.c external32, type_large.c the _c
 *            queries, type_match.c match_size and the f90 types
 * comm/      comm_object.c the communicator object (set-up, references,
 *            release), below point-to-point; comm.c the communicator
 *            calls, Comm_split_type; comm_ctx.c the agreement on
 *            context ids;
 *            intercomm.c inter-communicators (coll/coll_inter.c their
 *            collectives); group.c groups; topo.c virtual topologies;
 *            attr.c attributes and keyvals (communicators and datatypes)
 * dpm/       bridge.c the inter-communicator between two groups that share
 *            no communicator (dpm.h); port.c ports, MPI_Comm_accept and
 *            MPI_Comm_connect; names.c the name service; join.c
 *            MPI_Comm_join; spawn.c MPI_Comm_spawn, MPI_Comm_get_parent;
 *            disconnect.c MPI_Comm_disconnect
 * fortran/   fortran_handles.c MPI_Comm_c2f...: Fortran handle numbers
 *            (lib/mpi_fortran)
 * rma/       win.c windows, their attributes and error handlers (rma.h);
 *            rma.c the one-sided operations, their protocol and the
 *            synchronisation calls
 * io/        parallel I/O: file.c the file object, view.c views, rw.c
 *            independent access, coll_io.c collective access, shared.c
 *            the shared file pointer, datarep.c data representations
 * tools/     the tools information interface (MPI_T, tools/mpit.h):
 *            control and performance variables, sessions, categories
 *
 * Every MPI_ call is defined as PMPI_name and MPI_name is a weak alias of
 * it (MPI_SHIM_ALIAS), so that a profiling tool can define MPI_name and
 * call PMPI_name.  Inside the library, calls go to the PMPI_ names.
 *
 * Threads (MPI_THREAD_MULTIPLE): every public call runs under BIP's lock
 * (MPI_SHIM_ENTER, first line of each PMPI_ function), the one the
 * shim's BIP callbacks run under, so the shim's state is seen by one
 * thread at a time.  A call that waits lets go of it at each waiting step
 * (mpi_shim_progress_wait), so other threads' calls go on meanwhile and
 * may complete what it waits for.  Until the process has a second thread
 * nothing is taken.
 *
 * Error convention: functions that return an int return an MPI error class
 * (MPI_SUCCESS is 0).  A public call reports a misuse through mpi_shim_err,
 * which applies the communicator's error handler.
 */
#ifndef MPI_SHIM_SHIM_H
#define MPI_SHIM_SHIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>

#include "bip.h"
#include "mpi.h"

/* Defines MPI_name as a weak alias of PMPI_name (after PMPI_name is defined). */
#define MPI_SHIM_ALIAS(name) \
	extern __typeof__(P##name) name __attribute__((weak, alias("P" #name)))

#define mpi_shim_likely(x) __builtin_expect(!!(x), 1)
#define mpi_shim_unlikely(x) __builtin_expect(!!(x), 0)
#define mpi_shim_cold __attribute__((cold, noinline))

static inline int mpi_shim_enter(void)
{
	return mpi_shim_likely(__libc_single_threaded) ? 0 : bip_layer_lock();
}

static inline void mpi_shim_leave(const int *locked)
{
	if (mpi_shim_unlikely(*locked))
		bip_layer_unlock(*locked);
}

/* The first line of every public call: BIP's lock until it returns. */
#define MPI_SHIM_ENTER() \
	const int mpi_shim_locked_ __attribute__((cleanup(mpi_shim_leave))) = mpi_shim_enter()

/* --- Global state (env.c) --- */

struct mpi_shim_state {
	int initialized;   /* MPI_Init has run */
	int finalized;     /* MPI_Finalize has run */
	int thread_level;  /* provided thread level */
	int world_rank, world_size; /* this node; MPI_COMM_WORLD's size */
	int nodes;         /* the bound of a node number: the job's room (bip_universe) */
	int nhosts;        /* distinct hosts of the job */
	const char *const *hostnames; /* hostname of each host index */
	uint32_t next_ctx; /* lowest context id this process has not used */
};

extern struct mpi_shim_state mpi_shim;

/* Filled by MPI_Init (init/init.c), emptied by MPI_Finalize: the host index
 * of every node (0, or -1 without memory; mpi_shim_host_of reads it), and
 * the start of MPI_Wtime's clock. */
int mpi_shim_hosts_init(int n, int me);
void mpi_shim_hosts_fini(void);
void mpi_shim_clock_start(void);

/* --- Groups (group.c) --- */

struct mpi_shim_group {
	int refcount;
	int predefined;    /* never freed */
	int size;
	int rank;          /* this process's rank, or MPI_UNDEFINED */
	int *world;        /* world rank of each member */
};

/* A new group of n members (world ranks copied from world); refcount 1. */
int mpi_shim_group_new(int n, const int *world, struct mpi_shim_group **group_p);
void mpi_shim_group_release(struct mpi_shim_group *group);

/* --- Error handlers (errors.c) --- */

enum mpi_shim_errhandler_kind {
	MPI_SHIM_ERRORS_FATAL,
	MPI_SHIM_ERRORS_RETURN,
	MPI_SHIM_ERRORS_USER,
};

struct mpi_shim_errhandler {
	int refcount;
	int predefined;
	enum mpi_shim_errhandler_kind kind;
	MPI_Comm_errhandler_function *fn;
};

/* --- Attributes (attr.c) --- */

struct mpi_shim_attr {
	int keyval;
	void *value;
	struct mpi_shim_attr *next;
};

/* --- Communicators (comm_object.c the object, comm.c the calls) --- */

/*
 * Context ids: each communicator has two, agreed by all its members when
 * it is made: ctx for point-to-point, coll_ctx (= ctx + 1) for the
 * collectives, so that a collective's messages never match a user's
 * receive.  Messages match on (context, source rank in the communicator,
 * tag).
 */
struct mpi_shim_comm {
	int rank, size;
	int *world;        /* world rank of each rank */
	int *host;         /* host index of each rank: same index, same host */
	int *cluster;      /* cluster of each rank (bipconf(5) "Clusters"), or
			      NULL when every rank is in one cluster */
	int *rank_of_world; /* rank in this communicator of each world rank, or -1;
			       NULL for MPI_COMM_WORLD (identity) */
	uint32_t ctx;      /* point-to-point context */
	uint32_t coll_ctx; /* collective context */
	/* The processes that point-to-point ranks name: world rank of each
	 * rank, and how many; this group's (world, size) in an
	 * intra-communicator, the remote group's in an inter-communicator. */
	int *peer_world;
	int peer_size;
	/* Inter-communicators (intercomm.c): the remote group, and an
	 * intra-communicator of the local group that the collectives use;
	 * NULL in an intra-communicator. */
	struct mpi_shim_group *remote_group;
	struct mpi_shim_comm *local;
	struct mpi_shim_errhandler *errhandler;
	struct mpi_shim_attr *attrs;
	struct mpi_shim_group *group;
	struct mpi_shim_info *hints; /* set by the program (info.c), or NULL */
	int refcount;      /* the user's handle, plus requests in flight */
	int predefined;    /* MPI_COMM_WORLD, MPI_COMM_SELF */
	int valid;         /* 1 from creation until MPI_Comm_free */
	/* The handle MPI_Comm_idup gave, its request not complete yet: only
	 * the error handler, the name and attributes are kept (set and read),
	 * and become the communicator's when it is made (comm_create.c). */
	int pending;
	/* For the collectives: a sequence number that the members advance
	 * together (every member starts the same collectives in the same
	 * order), so that concurrent non-blocking collectives use distinct
	 * tags; and a place for their own state, freed by coll_free. */
	unsigned coll_seq;
	void *coll;
	void (*coll_free)(struct mpi_shim_comm *comm);
	struct mpi_shim_topo *topo; /* virtual topology (topo.c), or NULL */
	char name[MPI_MAX_OBJECT_NAME];
};

/* The world rank of rank in comm. */
static inline int mpi_shim_world_rank(MPI_Comm comm, int rank)
{
	return comm->world[rank];
}

/* 1 if comm is an inter-communicator. */
static inline int mpi_shim_is_inter(MPI_Comm comm)
{
	return comm->local != NULL;
}

/* --- Requests (engine.h; request.c the Wait and Test calls) --- */

struct mpi_shim_request;

/*
 * Point-to-point on the collective context of comm, for the collectives:
 * no argument checks, no error handler; they return an MPI error class
 * (MPI_ERR_TRUNCATE when a message is longer than the receive).  Any int
 * is a valid tag.  MPI_PROC_NULL is accepted.  Completion through
 * mpi_shim_request_test/wait or PMPI_Wait/Test.
 */
int mpi_shim_coll_isend(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
			MPI_Comm comm, MPI_Request *req);
int mpi_shim_coll_irecv(void *buf, size_t count, MPI_Datatype t, int src, int tag,
			MPI_Comm comm, MPI_Request *req);
int mpi_shim_coll_send(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
		       MPI_Comm comm);
int mpi_shim_coll_recv(void *buf, size_t count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		       MPI_Status *status);
int mpi_shim_coll_sendrecv(const void *sbuf, size_t scount, MPI_Datatype stype, int dst,
			   int stag, void *rbuf, size_t rcount, MPI_Datatype rtype, int src,
			   int rtag, MPI_Comm comm, MPI_Status *status);

/*
 * Tags on the collective context: the collectives use tags >= 0;
 * negative tags are for communicator creation (comm.c).
 */
#define MPI_SHIM_TAG_COMM_CREATE (-1000)

/* --- Errors (errors.c) --- */

/*
 * Report errclass raised by call on comm (MPI_COMM_NULL: MPI_COMM_WORLD's
 * handler) and apply the handler: MPI_ERRORS_ARE_FATAL prints host, pid,
 * rank, the call, the error name, the formatted detail and a hint, and
 * stops the job; MPI_ERRORS_RETURN returns errclass; a user handler is
 * called, then errclass is returned.
 */
mpi_shim_cold int mpi_shim_err(MPI_Comm comm, int errclass, const char *call, const char *fmt,
			       ...) __attribute__((format(printf, 4, 5)));

/* The name of an error class ("MPI_ERR_RANK"). */
const char *mpi_shim_err_name(int errclass);
/* The text of a predefined error class ("" for another value). */
const char *mpi_shim_err_text(int errclass);

/*
 * Argument checks: MPI_SUCCESS, or the error class after reporting it
 * through mpi_shim_err (so a caller does: if ((rc = check(...))) return rc;).
 */
int mpi_shim_check_init(const char *call);                          /* MPI_ERR_OTHER */
int mpi_shim_check_comm(MPI_Comm comm, const char *call);           /* MPI_ERR_COMM */
/* The same, also accepting the pending handle of an MPI_Comm_idup: for the
 * calls a program (or a language binding) makes on it before the request
 * completes, error handler, name and attributes. */
int mpi_shim_check_comm_or_pending(MPI_Comm comm, const char *call); /* MPI_ERR_COMM */
int mpi_shim_check_count(MPI_Comm comm, int count, const char *call); /* MPI_ERR_COUNT */
/* Bytes one message carries at most: one BIP message's (bip.h). */
#define MPI_SHIM_MESSAGE_MAX 0xffffffffull
/* The checks of a datatype and its buffer are datatype/datatype.c's. */
int mpi_shim_check_type(MPI_Comm comm, MPI_Datatype t, const char *call); /* MPI_ERR_TYPE */
int mpi_shim_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype t,
		       const char *call);                           /* MPI_ERR_BUFFER */
/* The block of a v or w collective that starts disp bytes from buf: buf may
 * be MPI_BOTTOM and disp an absolute address (MPI_ERR_BUFFER, MPI_ERR_COUNT). */
int mpi_shim_check_block(MPI_Comm comm, const void *buf, MPI_Aint disp, int count,
			 MPI_Datatype t, const char *call);
/* A destination (any_source 0) or source (1) rank; MPI_PROC_NULL is valid. */
int mpi_shim_check_rank(MPI_Comm comm, int rank, int any_source, const char *call);
int mpi_shim_check_root(MPI_Comm comm, int root, const char *call); /* MPI_ERR_ROOT */
/* A send tag (any_tag 0) or receive tag (1). */
int mpi_shim_check_tag(MPI_Comm comm, int tag, int any_tag, const char *call);
/* MPI_ERR_OP: defined in op.c with the operations. */
int mpi_shim_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype t, const char *call);

/* 1 if comm is a communicator that may be used. */
static inline int mpi_shim_comm_ok(MPI_Comm comm)
{
	return comm != MPI_COMM_NULL && comm->valid;
}

/* --- Between the parts of the library --- */

/* comm_object.c: fill c (size members, world ranks owned by c), and release it. */
int mpi_shim_comm_setup(struct mpi_shim_comm *c, int size, int *world, int rank, uint32_t ctx);
/* The same for the process management channel (dpm.h), whose members are
 * every node of the job's room, most of them not in the job yet: without
 * hosts (every c->host[i] is -1), since asking BIP about a node that has
 * not joined is a question to bipload each time, and nothing asks the
 * channel about hosts (no window, file or split by type is made on it). */
int mpi_shim_comm_setup_channel(struct mpi_shim_comm *c, int size, int *world, int rank,
				uint32_t ctx);
void mpi_shim_comm_fini(struct mpi_shim_comm *c);
/* Drop a reference (the user's handle, or a request's): the last one of a
 * freed communicator releases it. */
void mpi_shim_comm_release(struct mpi_shim_comm *c);
/* A communicator of size members (world ranks, owned by it), rank being
 * this process, with context ctx, inheriting the error handler of parent. */
int mpi_shim_comm_new(MPI_Comm parent, int size, int *world, int rank, uint32_t ctx,
		      MPI_Comm *newcomm);
/* The same in c, allocated by the caller (MPI_Comm_idup); world is freed
 * on failure. */
int mpi_shim_comm_init(struct mpi_shim_comm *c, MPI_Comm parent, int size, int *world, int rank,
		       uint32_t ctx);
/* comm_ctx.c: small collectives on c's collective context for making communicators:
 * the largest next_ctx of c's members (next_ctx is not changed), and a
 * broadcast from rank 0. */
int mpi_shim_comm_max_ctx(MPI_Comm c, uint32_t *ctx_p);
int mpi_shim_comm_bcast0(MPI_Comm c, void *buf, int bytes);
/* intercomm.c: MPI_Comm_dup of an inter-communicator (reported errors). */
int mpi_shim_intercomm_dup(MPI_Comm comm, MPI_Comm *newcomm, const char *call);
/* Sets up c as a copy of inter-communicator comm's groups on context ctx
 * (ctx to ctx + 3); MPI_Comm_idup's last step. */
int mpi_shim_intercomm_init_dup(struct mpi_shim_comm *c, MPI_Comm comm, uint32_t ctx);
/* intercomm.c: a new inter-communicator of local group (size, world, rank)
 * and remote group (rsize, rworld), both copied, on context ctx (ctx to
 * ctx + 3), inheriting parent's error handler; MPI_ERR_NO_MEM, not
 * reported (dpm/bridge.c). */
int mpi_shim_intercomm_new(MPI_Comm parent, int size, const int *world, int rank, int rsize,
			   const int *rworld, uint32_t ctx, MPI_Comm *newcomm);
/* intercomm.c: MPI_Comm_split of an inter-communicator (reported errors). */
int mpi_shim_intercomm_split(MPI_Comm ic, int color, int key, MPI_Comm *newcomm,
			     const char *call);
/* env.c: the host index of a world rank (same index: same host). */
int mpi_shim_host_of(int world_rank);
/* errors.c: a handler of the program's function fn (a window's or file's
 * function is stored as a communicator's and called with its own type),
 * refcount 1, or NULL without memory; and the release of one. */
struct mpi_shim_errhandler *mpi_shim_errhandler_new(MPI_Comm_errhandler_function *fn);
void mpi_shim_errhandler_release(struct mpi_shim_errhandler *eh);
/* attr.c */
int mpi_shim_attr_copy_all(MPI_Comm from, MPI_Comm to);
/* Every attribute deleted (even when a delete callback fails): the error
 * class of the first callback that failed, or MPI_SUCCESS. */
int mpi_shim_attr_delete_all(MPI_Comm comm);
void mpi_shim_attr_fini(void);
/* Datatypes' attributes: MPI_Type_dup copies them (an error class of a copy
 * callback), MPI_Type_free deletes them (as mpi_shim_attr_delete_all). */
int mpi_shim_type_attr_copy_all(MPI_Datatype from, MPI_Datatype to);
int mpi_shim_type_attr_delete_all(MPI_Datatype t);
/* The keyval table, after the last communicator is gone (MPI_Finalize). */
void mpi_shim_attr_free_keys(void);
/* p2p.c */
int mpi_shim_p2p_init(void);
void mpi_shim_p2p_fini(void);
/* coll_sched.c: free the temporary buffers kept for later collectives. */
void mpi_shim_coll_fini(void);
/* comm_object.c: release c's topology (with c); topo.c: copy from's to to
 * (MPI_Comm_dup: MPI_SUCCESS or MPI_ERR_NO_MEM, nothing reported). */
void mpi_shim_topo_free(struct mpi_shim_comm *c);
int mpi_shim_topo_copy(MPI_Comm from, MPI_Comm to);
/* info.c: MPI_INFO_ENV (MPI_Init), what MPI_Finalize frees, the hints of a
 * communicator: copied by MPI_Comm_dup (MPI_SUCCESS or MPI_ERR_NO_MEM, not
 * reported), freed with it. */
void mpi_shim_info_env_init(int argc, char **argv);
void mpi_shim_info_fini(void);
int mpi_shim_comm_hints_copy(MPI_Comm from, MPI_Comm to);
/* The hints of comm become a copy of info's (MPI_INFO_NULL: none). */
int mpi_shim_comm_hints_set(MPI_Comm comm, MPI_Info info);
/* An info argument: MPI_INFO_NULL or a valid object (else MPI_ERR_INFO,
 * reported on comm). */
int mpi_shim_info_check(MPI_Comm comm, MPI_Info info, const char *call);
void mpi_shim_comm_hints_free(MPI_Comm comm);
/* errcode.c: error classes and codes added by the program.  The highest
 * value in use; the class of an added code (MPI_ERR_ARG if not one); its
 * string (NULL if not an added code); MPI_Finalize forgets them. */
int mpi_shim_errcode_last(void);
int mpi_shim_errcode_class(int code, int *errclass);
const char *mpi_shim_errcode_string(int code);
void mpi_shim_errcode_fini(void);

/* --- Operations (op.c) --- */

/* struct mpi_shim_op is defined in op.c. */
struct mpi_shim_op;

/* inout[i] = in[i] op inout[i] for count elements of t. */
void mpi_shim_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype t);
/* The loop of a predefined op on n elements of the contiguous predefined
 * type t (inout[i] = in[i] op inout[i]), or NULL (a user's op, REPLACE,
 * NO_OP, one that does not apply, another type). */
typedef void (*mpi_shim_op_loop)(const void *in, void *inout, size_t n);
mpi_shim_op_loop mpi_shim_op_loop_of(MPI_Op op, MPI_Datatype t);
/* MPI_SUCCESS if op applies to t, else MPI_ERR_OP (nothing reported). */
int mpi_shim_op_valid(MPI_Op op, MPI_Datatype t);
/* One-sided messages name a predefined operation by its index: the index
 * of op (-1 for a user's operation), and the operation of an index
 * (MPI_OP_NULL if none).  MPI_REPLACE and MPI_NO_OP have no loop of
 * their own: the one-sided chapter asks for them by name. */
int mpi_shim_op_index(MPI_Op op);
MPI_Op mpi_shim_op_of_index(unsigned index);
int mpi_shim_op_is_replace(MPI_Op op);
int mpi_shim_op_is_no_op(MPI_Op op);

#endif /* MPI_SHIM_SHIM_H */
