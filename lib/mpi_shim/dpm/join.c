/* SPDX-License-Identifier: MIT */
/*
 * join.c - MPI_Comm_join (MPI-3.1 10.5.4): two processes that hold the
 * two ends of a connected socket make an inter-communicator of one process
 * on each side.
 *
 * The protocol over the socket: each side writes its frame, then reads
 * the other's (both write first, so neither waits on the other's read):
 *
 *   mark[16]   "MPI_Comm_join 1" and a NUL: what the frame is, and its
 *              version
 *   jobid[48]  bip_layer_jobid(), NUL-terminated
 *   node       uint32, big-endian: this process's node
 *   nodes      uint32, big-endian: mpi_shim_dpm_nodes() here
 *   key        uint64, big-endian: 64 random bits
 *
 * Nothing is read past the frame, and the socket is left as it was (the
 * program closes it).  A frame that is not one (another mark, a job id
 * not terminated, a node out of range), a short one or the end of the
 * stream: MPI_ERR_OTHER.  A frame from another job: MPI_ERR_OTHER, since
 * BIP moves messages only between the nodes of one job.  Otherwise both
 * sides call the bridge (dpm.h) over MPI_COMM_SELF with the other's node
 * and the xor of both keys.  The wait for the other's frame goes through
 * the shim's progress (other requests of this process advance) and ends
 * after BIP_CONNECT_TIMEOUT seconds (10 by default): MPI_ERR_OTHER.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shim.h"
#include "engine.h"
#include "dpm.h"

#define JOIN_MARK "MPI_Comm_join 1"

struct join_frame {
	char mark[16];
	char jobid[48];
	unsigned char node[4];
	unsigned char nodes[4];
	unsigned char key[8];
};

_Static_assert(sizeof(struct join_frame) == 80, "the frame of MPI_Comm_join");
_Static_assert(sizeof(JOIN_MARK) <= 16, "the mark fits");

static void put_be(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Until the fd is ready for ev, or the deadline: 1 ready, 0 time-out, -errno. */
static int fd_wait(int fd, short ev, double deadline)
{
	struct bip_layer_wait w = { 0, 0 };
	struct pollfd p = { fd, ev, 0 };
	int rc;

	for (;;) {
		rc = poll(&p, 1, 0);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc > 0) {
			if (p.revents & POLLNVAL)
				return -EBADF;
			return 1;
		}
		if (mpi_shim_dpm_now() >= deadline)
			return 0;
		mpi_shim_progress();
		(void)mpi_shim_progress_wait(&w);
	}
}

/* Move the whole frame: 0, -errno, or -EPIPE at the end of the stream. */
static int frame_io(int fd, void *buf, size_t n, int out, double deadline)
{
	unsigned char *p = buf;
	ssize_t got;
	int rc;

	while (n) {
		rc = fd_wait(fd, out ? POLLOUT : POLLIN, deadline);
		if (rc <= 0)
			return rc ? rc : -ETIMEDOUT;
		if (out) {
			got = send(fd, p, n, MSG_NOSIGNAL);
			if (got < 0 && errno == ENOTSOCK)
				got = write(fd, p, n);
		} else {
			got = read(fd, p, n);
		}
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return -errno;
		}
		if (got == 0)
			return -EPIPE;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

static double join_timeout(void)
{
	const char *s = getenv("BIP_CONNECT_TIMEOUT");
	char *end;
	double t;

	if (s && *s) {
		t = strtod(s, &end);
		if (!*end && t > 0)
			return t;
	}
	return 10;
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_join";
	struct join_frame mine, theirs;
	double deadline;
	uint64_t key;
	int node, rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!intercomm)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "intercomm is NULL");
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "%d is not an open file descriptor", fd);
	if (mpi_shim_dpm_random(&key, sizeof(key)) < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "no random bytes from the kernel: %s", strerror(errno));
	memset(&mine, 0, sizeof(mine));
	memcpy(mine.mark, JOIN_MARK, sizeof(JOIN_MARK));
	snprintf(mine.jobid, sizeof(mine.jobid), "%s", bip_layer_jobid());
	put_be(mine.node, (uint32_t)mpi_shim.world_rank, 4);
	put_be(mine.nodes, (uint32_t)mpi_shim_dpm_nodes(), 4);
	put_be(mine.key, key, 8);
	deadline = mpi_shim_dpm_now() + join_timeout();
	rc = frame_io(fd, &mine, sizeof(mine), 1, deadline);
	if (rc < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "writing to the socket (fd %d) failed: %s", fd, strerror(-rc));
	rc = frame_io(fd, &theirs, sizeof(theirs), 0, deadline);
	if (rc == -EPIPE)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "the other side closed the socket (fd %d) before sending its "
				    "frame", fd);
	if (rc == -ETIMEDOUT)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "nothing came from the other side over fd %d within %g s "
				    "(BIP_CONNECT_TIMEOUT)", fd, join_timeout());
	if (rc < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "reading from the socket (fd %d) failed: %s", fd, strerror(-rc));
	if (memcmp(theirs.mark, mine.mark, sizeof(mine.mark)) ||
	    !memchr(theirs.jobid, 0, sizeof(theirs.jobid)))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "what came over fd %d is not the frame of MPI_Comm_join", fd);
	if (strcmp(theirs.jobid, mine.jobid))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "the other side belongs to another job (%.47s, this is %s): "
				    "start one side in the other's job (bipload --attach %.47s prog)",
				    theirs.jobid, mine.jobid, theirs.jobid);
	node = (int)get_be(theirs.node, 4);
	if (get_be(theirs.node, 4) >= (uint64_t)mpi_shim_dpm_nodes())
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "the other side names node %llu, beyond the %d of this job",
				    (unsigned long long)get_be(theirs.node, 4), mpi_shim_dpm_nodes());
	if (node == mpi_shim.world_rank)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "both ends of fd %d are in this process", fd);
	return mpi_shim_dpm_bridge(MPI_COMM_SELF, 0, node, key ^ get_be(theirs.key, 8), intercomm,
				   call);
}
MPI_SHIM_ALIAS(MPI_Comm_join);
