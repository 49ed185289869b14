/* SPDX-License-Identifier: MIT */
/*
 * p2p.h - point-to-point inside the shim: p2p.c's sends, receives, cancels
 * and probes, for the point-to-point calls (pt2pt.c), buffered sends
 * (bsend.c) and the collectives.
 */
#ifndef MPI_SHIM_P2P_H
#define MPI_SHIM_P2P_H

#include "shim.h"
#include "engine.h"

/* The reserved BIP tag that carries every message of the shim. */
#define MPI_SHIM_BIP_TAG NTAGS

/* Request flags of the protocol (struct mpi_shim_request.flags; engine.h has
 * MPI_SHIM_F_POOL and MPI_SHIM_F_COMM) */
#define MPI_SHIM_F_LOCAL_DONE 1u /* send: BIP has taken the data */
#define MPI_SHIM_F_ACKED 2u      /* synchronous send: the receiver matched it */
#define MPI_SHIM_F_SYNC 4u       /* synchronous send waiting for its ack */
#define MPI_SHIM_F_POSTED 8u     /* receive: in the posted queue */
#define MPI_SHIM_F_TRUNC 16u     /* receive: message longer than the buffer */
#define MPI_SHIM_F_CANCELLING 128u /* send: the answer to a cancel is to come */
#define MPI_SHIM_F_NAMED 256u    /* send: wpeer and msgno name a message that left */
#define MPI_SHIM_F_REOPENED 512u /* send: was complete when cancelled: done again
				    when the answer comes */
/* Flags that stay from one start of a request to the next. */
#define MPI_SHIM_F_KEEP (MPI_SHIM_F_POOL | MPI_SHIM_F_COMM)

/* The callbacks of sends and receives (p2p.c), and of the requests the
 * program holds for buffered sends (bsend.c). */
extern const struct mpi_shim_req_ops mpi_shim_p2p_ops;
extern const struct mpi_shim_req_ops mpi_shim_bsend_ops;

/* Start a send or a receive on request r (fields set by these calls). */
int mpi_shim_send_start(struct mpi_shim_request *r, const void *buf, size_t count, MPI_Datatype t,
			int dst, int tag, MPI_Comm comm, uint32_t ctx, int mode);
int mpi_shim_recv_start(struct mpi_shim_request *r, void *buf, size_t count, MPI_Datatype t,
			int src, int tag, MPI_Comm comm, uint32_t ctx);

/* Remove a receive from the posted queue if nothing matched it yet:
 * 1 if it was cancelled. */
int mpi_shim_recv_cancel(struct mpi_shim_request *r);

/* Ask to cancel a send not yet reported by Wait or Test (of any kind, even
 * complete); the answer completes it (again) later, with r->cancelled set if
 * the message was withdrawn.  1 if it was cancelled at once (to oneself). */
int mpi_shim_send_cancel(struct mpi_shim_request *r);

/* Look for a message that a receive (src, tag) on comm's point-to-point
 * context would match; fills status if found and returns 1. */
int mpi_shim_probe_unexpected(MPI_Comm comm, int src, int tag, MPI_Status *status);
/* Matched probe: the same, and the message is taken out of the queue (an
 * opaque pointer; NULL if there is none).  mpi_shim_message_recv receives
 * it on r, as mpi_shim_recv_start would (the message is gone after). */
void *mpi_shim_message_claim(MPI_Comm comm, int src, int tag, MPI_Status *status);
void mpi_shim_message_recv(struct mpi_shim_request *r, void *buf, size_t count, MPI_Datatype t,
			   MPI_Comm comm, void *message);

/* The unexpected queue, for the performance variables (tools/pvar.c):
 * the messages queued now; the most queued since the last restart (or
 * since MPI_Init); and the restart, which sets that high-water mark to the
 * messages queued now.  The queue keeps the mark at each arrival that is
 * queued: an increment and a compare. */
int mpi_shim_unexp_level(void);
int mpi_shim_unexp_hwm(void);
void mpi_shim_unexp_hwm_restart(void);

/* Buffered sends (bsend.c) */
/* user (NULL for MPI_Bsend): the request the user holds, which learns the
 * name of the message (MPI_SHIM_F_NAMED) so that MPI_Cancel can withdraw it. */
int mpi_shim_bsend_start(const void *buf, size_t count, MPI_Datatype t, int dst, int tag,
			 MPI_Comm comm, struct mpi_shim_request *user, const char *call);
void mpi_shim_bsend_flush(void);

#endif /* MPI_SHIM_P2P_H */
