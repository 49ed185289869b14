/* SPDX-License-Identifier: MIT */
/*
 * bridge.c - the inter-communicator between two groups of the job that
 * share no communicator (dpm.h): the channel, a hidden communicator whose
 * rank r is node r, and the bridge over it.
 *
 * The protocol of the two leaders, on the channel's collective context
 * with tag MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_BRIDGE, key):
 *
 *   each leader                              the other leader
 *   post the receive of the header
 *   header {key, size, ctx}   ------------>  (and the same back)
 *   wait for the other's header, up to the time-out: then withdraw
 *   the receive and fail (MPI_ERR_PORT)
 *   check it: the same key, size 0 (the other gave up: MPI_ERR_PENDING)
 *   or 1 .. mpi_shim_dpm_nodes(), a context below the channel's
 *   nodes[size]               ------------>  its group's nodes, in rank order
 *   check them: each below the bound, none twice, the other leader among
 *   them, none in this group (MPI_ERR_COMM)
 *   verdict (int32)           ------------>  both take the first fault
 *
 * A fault found in the header ends the trade at once (the other side
 * finds its own, or its nodes go unread: a few bytes left queued).  Then
 * each leader broadcasts {verdict, size, ctx} and the nodes to its group,
 * and every member makes the inter-communicator on ctx .. ctx + 3, ctx
 * being the larger of the two groups' largest next_ctx: no member of
 * either group uses an id that high yet.
 *
 * The header is 16 bytes and always leaves at once (an eager message), so
 * a leader that times out leaves no send behind, only its header queued at
 * the other node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "shim.h"
#include "engine.h"
#include "p2p.h"
#include "dpm.h"

struct trade_hdr {
	uint64_t key;
	int32_t size; /* 0: gave up */
	uint32_t ctx;
};

_Static_assert(sizeof(struct trade_hdr) == 16, "the bridge's header");

/* What a leader tells its group. */
struct trade_news {
	int32_t err;
	int32_t size;
	uint32_t ctx;
};

static struct {
	struct mpi_shim_comm comm;
	int made;
} channel;

MPI_Comm mpi_shim_dpm_channel(void)
{
	int n = mpi_shim_dpm_nodes(), refs = 1, i;
	int *world;

	if (channel.made && channel.comm.size == n)
		return &channel.comm;
	/* Made again, in place, when the bound rose: requests on it keep
	 * their pointer and their references. */
	if (channel.made) {
		refs = channel.comm.refcount;
		mpi_shim_comm_fini(&channel.comm);
		channel.made = 0;
	}
	world = malloc((size_t)n * sizeof(*world));
	if (!world)
		return NULL;
	for (i = 0; i < n; i++)
		world[i] = i;
	if (mpi_shim_comm_setup_channel(&channel.comm, n, world, mpi_shim.world_rank,
					MPI_SHIM_DPM_CTX))
		return NULL;
	channel.comm.predefined = 1;
	channel.comm.refcount = refs;
	snprintf(channel.comm.name, sizeof(channel.comm.name), "the process management channel");
	channel.made = 1;
	return &channel.comm;
}

void mpi_shim_dpm_fini(void)
{
	mpi_shim_dpm_ports_fini();
	if (channel.made)
		mpi_shim_comm_fini(&channel.comm);
	channel.made = 0;
}

double mpi_shim_dpm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int mpi_shim_dpm_random(void *buf, size_t n)
{
	unsigned char *p = buf;
	ssize_t got;

	while (n) {
		got = getrandom(p, n, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

int mpi_shim_dpm_wait_until(MPI_Request req, double deadline)
{
	struct bip_layer_wait w = { 0, 0 };

	while (!req->done) {
		mpi_shim_progress();
		if (req->done)
			break;
		if (deadline > 0 && mpi_shim_dpm_now() >= deadline)
			return MPI_ERR_PENDING;
		if (mpi_shim_progress_wait(&w) < 0) {
			mpi_shim_progress_poll();
			if (req->done)
				break;
			return MPI_ERR_OTHER;
		}
	}
	return MPI_SUCCESS;
}

void mpi_shim_dpm_give_up(int node, uint64_t key)
{
	struct trade_hdr h = { key, 0, 0 };
	MPI_Comm ch = mpi_shim_dpm_channel();

	if (ch && node >= 0 && node < ch->size)
		(void)mpi_shim_coll_send(&h, sizeof(h), MPI_BYTE, node,
					 MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_BRIDGE, key), ch);
}

/* The other leader's header, within timeout seconds (0: no limit). */
static int trade_header(MPI_Comm ch, int node, int tag, const struct trade_hdr *mine,
			double timeout, struct trade_hdr *theirs)
{
	double deadline = timeout > 0 ? mpi_shim_dpm_now() + timeout : 0;
	MPI_Request r;
	int rc;

	if ((rc = mpi_shim_coll_irecv(theirs, sizeof(*theirs), MPI_BYTE, node, tag, ch, &r)))
		return rc;
	rc = mpi_shim_coll_send(mine, sizeof(*mine), MPI_BYTE, node, tag, ch);
	if (!rc)
		rc = mpi_shim_dpm_wait_until(r, deadline);
	if (rc == MPI_ERR_PENDING)
		rc = MPI_ERR_PORT;
	/* Given up: withdrawn, unless it was matched meanwhile (it then
	 * completes, and counts). */
	if (rc && !mpi_shim_recv_cancel(r) && rc == MPI_ERR_PORT)
		rc = MPI_SUCCESS;
	if (rc) {
		(void)mpi_shim_request_wait(&r, MPI_STATUS_IGNORE);
		return rc;
	}
	return mpi_shim_request_wait(&r, MPI_STATUS_IGNORE);
}

/* MPI_SUCCESS if the remote group's nodes are well formed and foreign to
 * comm's group. */
static int check_nodes(MPI_Comm comm, int remote_node, const int *rworld, int rsize)
{
	int n = mpi_shim_dpm_nodes(), i, leader = 0, rc = MPI_SUCCESS;
	unsigned char *seen = calloc((size_t)n, 1);

	if (!seen)
		return MPI_ERR_NO_MEM;
	for (i = 0; i < comm->size; i++)
		if (comm->world[i] >= 0 && comm->world[i] < n)
			seen[comm->world[i]] = 1;
	for (i = 0; i < rsize && rc != MPI_ERR_INTERN; i++) {
		if (rworld[i] < 0 || rworld[i] >= n || seen[rworld[i]] == 2) {
			rc = MPI_ERR_INTERN;
			break;
		}
		if (seen[rworld[i]] == 1)
			rc = MPI_ERR_COMM;
		seen[rworld[i]] = 2;
		leader |= rworld[i] == remote_node;
	}
	free(seen);
	if (!rc && !leader)
		rc = MPI_ERR_INTERN;
	return rc;
}

void mpi_shim_dpm_trade(MPI_Comm comm, uint32_t ctx, int remote_node, uint64_t key,
			double timeout, struct mpi_shim_dpm_far *far)
{
	int tag = MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_BRIDGE, key);
	struct trade_hdr mine = { key, comm->size, ctx }, theirs;
	MPI_Comm ch = mpi_shim_dpm_channel();
	int32_t verdict, their_verdict;
	int *rworld = NULL, rc;

	far->world = NULL;
	far->size = 0;
	far->ctx = ctx;
	far->why[0] = '\0';
	if (!ch) {
		far->err = MPI_ERR_NO_MEM;
		return;
	}
	if (remote_node < 0 || remote_node >= mpi_shim_dpm_nodes()) {
		far->err = MPI_ERR_INTERN;
		return;
	}
	if (remote_node == mpi_shim.world_rank) {
		far->err = MPI_ERR_COMM;
		return;
	}
	if ((rc = trade_header(ch, remote_node, tag, &mine, timeout, &theirs))) {
		far->err = rc;
		return;
	}
	if (theirs.key != key) {
		far->err = MPI_ERR_INTERN;
		return;
	}
	if (theirs.size == 0) {
		far->err = MPI_ERR_PENDING;
		return;
	}
	/* The context ids below the channel's are the communicators'. */
	if (theirs.size < 0 || theirs.size > mpi_shim_dpm_nodes() ||
	    theirs.ctx > MPI_SHIM_DPM_CTX - 4 || ctx > MPI_SHIM_DPM_CTX - 4) {
		far->err = MPI_ERR_INTERN;
		return;
	}
	rworld = malloc((size_t)theirs.size * sizeof(*rworld));
	/* Without memory the trade goes on (the nodes are refused, as
	 * truncated), so that the other side gets to the verdict. */
	rc = mpi_shim_coll_sendrecv(comm->world, (size_t)comm->size, MPI_INT, remote_node, tag,
				    rworld, rworld ? (size_t)theirs.size : 0, MPI_INT, remote_node,
				    tag, ch, MPI_STATUS_IGNORE);
	if (!rworld)
		verdict = MPI_ERR_NO_MEM;
	else if (rc)
		verdict = rc;
	else
		verdict = check_nodes(comm, remote_node, rworld, theirs.size);
	rc = mpi_shim_coll_sendrecv(&verdict, 1, MPI_INT, remote_node, tag, &their_verdict, 1,
				    MPI_INT, remote_node, tag, ch, MPI_STATUS_IGNORE);
	if (!verdict && rc)
		verdict = rc;
	if (!verdict && their_verdict)
		verdict = their_verdict == MPI_ERR_COMM ? MPI_ERR_COMM : MPI_ERR_INTERN;
	if (verdict) {
		free(rworld);
		far->err = verdict;
		return;
	}
	far->err = MPI_SUCCESS;
	far->size = theirs.size;
	far->ctx = theirs.ctx > ctx ? theirs.ctx : ctx;
	far->world = rworld;
}

static const char *fault_text(int err)
{
	switch (err) {
	case MPI_ERR_PORT:
		return "the leader of this group could not reach the other side (its own "
		       "message says why)";
	case MPI_ERR_COMM:
		return "the two groups overlap: a process would be in both";
	case MPI_ERR_PENDING:
		return "the other side gave up";
	case MPI_ERR_NO_MEM:
		return "no memory";
	case MPI_ERR_INTERN:
		return "the other side's leader described its group wrongly";
	default:
		return "the exchange between the two leaders failed";
	}
}

int mpi_shim_dpm_finish(MPI_Comm comm, int root, struct mpi_shim_dpm_far *far,
			MPI_Comm *newcomm, const char *call)
{
	struct trade_news news = { far->err, far->size, far->ctx };
	int *rworld = far->world, rc, bc;

	far->world = NULL;
	rc = PMPI_Bcast(&news, (int)sizeof(news), MPI_BYTE, root, comm);
	if (!rc && !news.err) {
		if (comm->rank != root) {
			if (news.size <= 0 || news.size > mpi_shim_dpm_nodes())
				rc = MPI_ERR_INTERN;
			else if (!(rworld = malloc((size_t)news.size * sizeof(*rworld))))
				rc = MPI_ERR_NO_MEM;
		}
		/* Every member takes part in the broadcast even when it failed
		 * above: the others are in it. */
		bc = PMPI_Bcast(rworld, rworld ? news.size : 0, MPI_INT, root, comm);
		if (!rc)
			rc = bc;
	}
	if (!rc && news.err)
		rc = news.err;
	if (!rc) {
		if (mpi_shim.next_ctx < news.ctx + 4)
			mpi_shim.next_ctx = news.ctx + 4;
		rc = mpi_shim_intercomm_new(comm, comm->size, comm->world, comm->rank, news.size,
					    rworld, news.ctx, newcomm);
	}
	free(rworld);
	if (rc)
		return mpi_shim_err(comm, rc, call, "%s",
				    comm->rank == root && rc == far->err && far->why[0] ? far->why :
				    fault_text(rc));
	return MPI_SUCCESS;
}

int mpi_shim_dpm_bridge_timeout(MPI_Comm comm, int root, int remote_node, uint64_t key,
				double timeout, MPI_Comm *newcomm, const char *call)
{
	struct mpi_shim_dpm_far far = { MPI_SUCCESS, 0, 0, NULL, "" };
	uint32_t ctx;
	int rc;

	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "an intra-communicator is needed, not an inter-communicator");
	if (root < 0 || root >= comm->size)
		return mpi_shim_err(comm, MPI_ERR_ROOT, call, "root %d is not a rank of the "
				    "communicator (size %d)", root, comm->size);
	if ((rc = mpi_shim_comm_max_ctx(comm, &ctx)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	if (comm->rank == root)
		mpi_shim_dpm_trade(comm, ctx, remote_node, key, timeout, &far);
	return mpi_shim_dpm_finish(comm, root, &far, newcomm, call);
}
