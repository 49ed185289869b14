/* SPDX-License-Identifier: MIT */
/*
 * ofi_wait.c - sleeping on a libfabric completion queue, for the ofi
 * driver (reliable endpoints) and the udp driver (datagram endpoints,
 * under the reliability layer).
 *
 * When a waiter of this process may sleep (BIP_WAIT=block, or auto with
 * more local processes than processors), and only then, the completion
 * queue is opened with a
 * wait object of kind FI_WAIT_FD, and its file descriptor is taken with
 * fi_control(FI_GETWAIT): the provider makes it readable when the queue
 * may have a completion (for providers that progress in the caller, such
 * as tcp;ofi_rxm and udp, when one of their sockets has something).  The
 * other modes open the queue as before, with no wait object, so that the
 * busy-polling path keeps its cost: a provider may signal its wait object
 * at every completion.
 *
 * The sleep, in nic.h's two halves: fi_trywait with the core's lock held
 * (bip_ofi_cq_sleep_arm), which answers FI_SUCCESS only when nothing is
 * left to read and the descriptor will be signalled by what comes next,
 * so that no completion between the waiter's last poll and its sleep is
 * missed; then, without the lock, ppoll() on the descriptor with the
 * time-out (bip_nicsleep_wait), which reads nothing of the provider's or
 * the driver's state.  Several threads may wait on the descriptor at once:
 * it is level-triggered, and what makes it readable wakes them all.  Any
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
#include <stdio.h>

#include "core.h"
#include "ofi.h"

int bip_ofi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		    int *fd, char *why, size_t len)
{
	int rc;

	*fd = -1;
	why[0] = '\0';
	if (bip_may_sleep()) {
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

int bip_ofi_cq_sleep_arm(struct fid_fabric *fabric, struct fid_cq *cq, int fd,
			 struct bip_nic_sleep *s)
{
	struct fid *fids[1] = { &cq->fid };
	int rc = fi_trywait(fabric, fids, 1);

	/* -FI_EAGAIN: completions are there to read (the next poll does);
	 * another error: the provider cannot tell, and the waiter yields. */
	if (rc != FI_SUCCESS)
		return 0;
	s->word = NULL;
	s->sleepers = NULL;
	s->fd = fd;
	return 1;
}
