/* SPDX-License-Identifier: MIT */
/*
 * dpm.h - process management inside the shim (MPI-3.1 chapter 10): the
 * bridge that joins two groups of processes into an inter-communicator
 * (bridge.c), on which ports (port.c), MPI_Comm_join (join.c) and the
 * spawning calls build.
 *
 * The channel.  Two groups that share no communicator still share the
 * job: every node of it may send to every other.  The chapter talks
 * through a hidden communicator of the shim, the channel, whose rank r is
 * node r (so a message names its peer by node number), on the context ids
 * MPI_SHIM_DPM_CTX (point-to-point, unused) and MPI_SHIM_DPM_CTX + 1
 * (every message of the chapter, sent and received with the mpi_shim_coll_*
 * calls).  Ordinary communicators take their ids upwards from 4, two or
 * four at a time (comm_ctx.c); these two are the last ids of the 32 bits,
 * which no communicator gets before 2^31 communicators were made (and the
 * bridge refuses a context that would reach them).  The channel is made
 * by the first call that needs it, for mpi_shim_dpm_nodes() nodes, made
 * again in place when that bound has risen (requests on it keep their
 * pointer), and lives until MPI_Finalize (mpi_shim_dpm_fini).
 *
 * Tags on the channel (MPI_SHIM_DPM_TAG):
 *   kind 0   requests to a port's node (port.c);
 *   kind 1   the answer to one request, low bits from the connector's key;
 *   kind 2   the bridge's trade between the two leaders, low bits from
 *            the bridge's key (and a leader's giving up, a header of
 *            group size 0: mpi_shim_dpm_give_up).
 * A tag is kind << 28 | (key & 0x0fffffff); the whole key travels in each
 * message and is checked, so two bridges whose keys share the low bits
 * fail instead of mixing.
 */
#ifndef MPI_SHIM_DPM_H
#define MPI_SHIM_DPM_H

#include <stdint.h>

#include "shim.h"

#define MPI_SHIM_DPM_CTX 0xfffffffeu

#define MPI_SHIM_DPM_TAG_REQUEST 0
#define MPI_SHIM_DPM_TAG(kind, key) ((int)((uint32_t)(kind) << 28 | ((key) & 0x0fffffffu)))
#define MPI_SHIM_DPM_KIND_ANSWER 1u
#define MPI_SHIM_DPM_KIND_BRIDGE 2u

/*
 * The bound of a node number: every node that a message of this job may
 * come from or go to is below it.  Every value received from another
 * process (a group's size, a node number) is checked against it.  The
 * job's room (bip_universe(3)): the nodes it started with and those that
 * may join it.
 */
static inline int mpi_shim_dpm_nodes(void)
{
	return mpi_shim.nodes;
}

/* spawn.c: in a spawned process, the inter-communicator to its parents,
 * made at MPI_Init with them (BIP_PARENT); and its release at
 * MPI_Finalize. */
int mpi_shim_dpm_parent_init(void);
void mpi_shim_dpm_parent_fini(void);

/* The channel (made at the first call, MPI_ERR_NO_MEM), or NULL. */
MPI_Comm mpi_shim_dpm_channel(void);

/*
 * The bridge: collective over the intra-communicator comm, whose rank root
 * is its leader; remote_node (read at root only) is the node of the other
 * group's leader, which calls it with this process's node and the same
 * key.  On success *newcomm is an inter-communicator whose local group is
 * comm's and whose remote group is the other one, ranks in the order each
 * group had in its own comm; its error handler is comm's.
 *
 *  1. comm agrees on the largest next_ctx of its members;
 *  2. the leaders trade on the channel (tag kind 2 of key): a header
 *     (key, group size, context), then the group's node numbers, then a
 *     verdict; each checks the other's (the key, a size in 1 ..
 *     mpi_shim_dpm_nodes(), a context below the channel's, nodes below
 *     the bound, no node twice, the leader among them, no node of its own
 *     group), and both fail when either found a fault;
 *  3. each leader broadcasts the verdict, the remote size and the larger
 *     of the two contexts to its group, then the remote nodes (as
 *     MPI_Intercomm_create does), and every member makes the
 *     inter-communicator on that context (ctx .. ctx + 3).
 *
 * timeout (seconds, at root; 0: none) bounds the wait for the other
 * leader's header: when it passes, the receive is withdrawn and the call
 * fails with MPI_ERR_PORT on every member.  Groups that overlap:
 * MPI_ERR_COMM; a fault in what came from the other side: MPI_ERR_INTERN.
 * Errors are reported on comm through mpi_shim_err under call's name and
 * the class is returned; *newcomm is written only on success.
 */
int mpi_shim_dpm_bridge_timeout(MPI_Comm comm, int root, int remote_node, uint64_t key,
				double timeout, MPI_Comm *newcomm, const char *call);

static inline int mpi_shim_dpm_bridge(MPI_Comm comm, int root, int remote_node, uint64_t key,
				      MPI_Comm *newcomm, const char *call)
{
	return mpi_shim_dpm_bridge_timeout(comm, root, remote_node, key, 0, newcomm, call);
}

/*
 * The bridge in its three steps, for a caller whose leader has more to do
 * between them (MPI_Comm_accept takes the next request when a connector
 * gave up):
 *   mpi_shim_comm_max_ctx(comm, &ctx)                  every member;
 *   mpi_shim_dpm_trade(comm, ctx, node, key, t, &far)  the leader only;
 *   mpi_shim_dpm_finish(comm, root, &far, ...)         every member.
 * far.err carries the leader's verdict to finish, which broadcasts it:
 * trade sets it (MPI_ERR_PENDING when the other leader gave up,
 * mpi_shim_dpm_give_up), and a leader that failed before trading sets it
 * itself (and may say why).  finish frees far.world; the other members
 * report the class with a sentence of their own.
 */
struct mpi_shim_dpm_far {
	int err;        /* an MPI error class */
	int size;       /* the remote group's size */
	uint32_t ctx;   /* the larger of the two groups' contexts */
	int *world;     /* the remote group's nodes (malloc'ed), or NULL */
	char why[200];  /* the leader's account of err ("": one by its class) */
};
void mpi_shim_dpm_trade(MPI_Comm comm, uint32_t ctx, int remote_node, uint64_t key,
			double timeout, struct mpi_shim_dpm_far *far);
int mpi_shim_dpm_finish(MPI_Comm comm, int root, struct mpi_shim_dpm_far *far,
			MPI_Comm *newcomm, const char *call);
/* Tell the leader on node, which may be waiting in mpi_shim_dpm_trade for
 * key, that this side will not come (a header of group size 0). */
void mpi_shim_dpm_give_up(int node, uint64_t key);

/* Wait for the internal request req until it is done or the monotonic
 * clock (mpi_shim_dpm_now, seconds) passes deadline (0: no deadline):
 * MPI_SUCCESS when done, MPI_ERR_PENDING when the deadline passed (the
 * request is still there), MPI_ERR_OTHER when every other process ended. */
int mpi_shim_dpm_wait_until(MPI_Request req, double deadline);
double mpi_shim_dpm_now(void);

/* n random bytes from the kernel (getrandom): 0 or -errno. */
int mpi_shim_dpm_random(void *buf, size_t n);

/* MPI_Finalize: the ports (their requests) and the channel go
 * (bridge.c, which calls port.c's part first). */
void mpi_shim_dpm_fini(void);
void mpi_shim_dpm_ports_fini(void);

#endif /* MPI_SHIM_DPM_H */
