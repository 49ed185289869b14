/* SPDX-License-Identifier: MIT */
/*
 * ofi_wait.c - sleeping on a libfabric completion queue (BIP_WAIT=block),
 * for the ofi driver (reliable endpoints) and the udp driver (datagram
 * endpoints, under the reliability layer).
 *
 * In block mode, and only then, the completion queue is opened with a
 * wait object of kind FI_WAIT_FD, and its file descriptor is taken with
 * fi_control(FI_GETWAIT): the provider makes it readable when the queue
 * may have a completion (for providers that progress in the caller, such
 * as tcp;ofi_rxm and udp, when one of their sockets has something).  The
 * other modes open the queue as before, with no wait object, so that the
 * busy-polling path keeps its cost: a provider may signal its wait object
 * at every completion.
 *
 * The sleep: fi_trywait first, which answers FI_SUCCESS only when nothing
 * is left to read and the descriptor will be signalled by what comes
 * next, so that no completion between the waiter's last poll and its
 * sleep is missed; then poll() on the descriptor with the time-out.  Any
 * completion wakes it: a message into the receive pool, a send, and each
 * chunk of a long transfer (rendezvous) in either direction, since all of
 * them complete on the one queue.  The driver's poll then reads the queue.
 *
 * A provider that refuses FI_WAIT_FD (fi_cq_open or FI_GETWAIT fails)
 * keeps a queue without a wait object; the driver then has no sleep op
 * and its waiters yield, and the reason is kept for the driver's
 * description (bip_init's line, bipinfo --job).  FI_WAIT_UNSPEC is not
 * tried: its object may be a mutex and condition, which cannot be waited
 * on with anything but fi_cq_sread, and that reads the completions
 * themselves.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "core.h"
#include "ofi.h"

int bip_ofi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		    int *fd, char *why, size_t len)
{
	int rc;

	*fd = -1;
	why[0] = '\0';
	if (bip_state.wait_mode == BIP_WAIT_BLOCK) {
		attr->wait_obj = FI_WAIT_FD;
		rc = fi_cq_open(domain, attr, cq, NULL);
		if (!rc) {
			rc = fi_control(&(*cq)->fid, FI_GETWAIT, fd);
			if (!rc && *fd >= 0)
				return 0;
			snprintf(why, len, "fi_control(FI_GETWAIT): %s",
				 rc ? fi_strerror(rc < 0 ? -rc : rc) : "no descriptor");
			*fd = -1;
			fi_close(&(*cq)->fid);
			*cq = NULL;
		} else {
			snprintf(why, len, "fi_cq_open with FI_WAIT_FD: %s",
				 fi_strerror(rc < 0 ? -rc : rc));
		}
	}
	attr->wait_obj = FI_WAIT_NONE;
	return fi_cq_open(domain, attr, cq, NULL);
}

void bip_ofi_cq_sleep(struct fid_fabric *fabric, struct fid_cq *cq, int fd, long timeout_ns)
{
	struct fid *fids[1] = { &cq->fid };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };

	int rc = fi_trywait(fabric, fids, 1);

	/* -FI_EAGAIN: completions are there to read (the next poll does);
	 * another error: the provider cannot tell, and the waiter yields. */
	if (rc != FI_SUCCESS) {
		if (rc != -FI_EAGAIN)
			sched_yield();
		return;
	}
	if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
		sched_yield();
}
