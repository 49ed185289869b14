/* SPDX-License-Identifier: MIT */
/*
 * grow.c - jobs that grow: bip_grow, bip_jobnodes, bip_universe, bip_group
 * (bip_grow(3)).
 *
 * The protocol.  bipload gives a job that may grow room for BIP_UNIVERSE
 * nodes, all on its own host, and every process of its host a channel to
 * it (boot/pm.h).  bip_grow asks bipload, through that channel, for the
 * processes of its commands; bipload numbers them after every node the job
 * has had, starts them with the job's id and secret (in their environment,
 * as its first processes), each with BIP_GROUP naming its siblings, and
 * answers once every one of them has opened its drivers and said so on its
 * own channel, or one of them failed (then it stops them all).
 *
 * Nodes learn of each other on first use (nic.h): a process sends to a
 * node it has not reached by reaching it first (bip_core_reach), and the
 * shm driver that takes a message from a node it has not reached reaches
 * it before handing the message over.  Reaching is mapping the node's
 * segment, which its owner has already removed from /dev/shm: bipload
 * says which process holds it and as which descriptor, and the segment is
 * opened through /proc under the same owner checks as at start-up.  Only
 * this user's processes can open it there, and its header is checked
 * as at start-up.  A process that joined thus proves the job's secret like any
 * other: it got it from bipload, in its environment only.
 *
 * The ofi driver (BIP_NIC=ofi) reaches nodes the same way, with their
 * endpoint addresses instead of segments: in a job that grows, each
 * process gives bipload its address ("blob"), and a node that joined
 * asks for its peers' ("addr"; the ofi.c header).  Such a job may span
 * hosts: the processes of other hosts have their channels through
 * bipload's proxies (scripts/bipload_proxy.h), and a command's host may be
 * any host of the job.  A job on bipload's host alone may also grow over
 * shm, or over the simulated board (BIP_NIC=lanai): its firmware has
 * boards for the whole room, and a node is reached once its boards run
 * (the lanai.c header).  A job whose clusters (each over shm) are joined
 * by relays grows too: a new node is in its host's cluster, numbered after
 * the relays, and reached over shm inside it and through the relays from
 * the others (fwd.c).  A job whose nodes use another driver, or whose
 * configuration has routes, or clusters over another driver, has no room,
 * and bip_grow says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "pm.h"

BIP_EXPORT int bip_grow(const struct bip_grow_cmd *cmds, int ncmds, int *first, int *errcodes)
{
	static const char call[] = "bip_grow";
	struct bip_pm_cmd *pc;
	char err[512];
	int i, j, total = 0, rc, room = 0, *codes;

	if (!bip_check_init(call))
		return -EINVAL;
	if (!cmds || ncmds < 1 || !first) {
		bip_error(call, "%s", !first ? "first is NULL" : "no command");
		return -EINVAL;
	}
	for (i = 0; i < ncmds; i++) {
		if (cmds[i].count < 1 || cmds[i].count > 4096 || !cmds[i].argv ||
		    !cmds[i].argv[0] || !cmds[i].argv[0][0]) {
			bip_error(call, "command %d: %s", i,
				  cmds[i].count < 1 || cmds[i].count > 4096 ?
					  "a count of processes from 1 to 4096 is needed" :
					  "no program");
			if (errcodes)
				for (j = 0; j < total; j++)
					errcodes[j] = EINVAL;
			return -EINVAL;
		}
		total += cmds[i].count;
	}
	if (!bip_state.grow_nic || !bip_pm_present()) {
		bip_error(call, "this job cannot grow: %s",
			  !bip_pm_present() ?
				  "this process was not started by bipload, or its job spans "
				  "hosts with BIP_NIC set to a driver other than ofi" :
				  "its nodes use a driver that cannot reach nodes joining later "
				  "(only shm, lanai and ofi can), or its configuration has routes, "
				  "or clusters whose driver is not shm");
		if (errcodes)
			for (j = 0; j < total; j++)
				errcodes[j] = ENOTSUP;
		return -ENOTSUP;
	}
	pc = calloc((size_t)ncmds, sizeof(*pc));
	codes = calloc((size_t)total, sizeof(*codes));
	if (!pc || !codes) {
		free(pc);
		free(codes);
		bip_error(call, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < ncmds; i++)
		pc[i] = (struct bip_pm_cmd){ .count = cmds[i].count, .host = cmds[i].host,
					     .wdir = cmds[i].wdir, .path = cmds[i].path,
					     .argv = cmds[i].argv, .env = cmds[i].env };
	rc = bip_pm_grow(pc, ncmds, first, codes, &room, err, sizeof(err));
	free(pc);
	if (errcodes)
		memcpy(errcodes, codes, (size_t)total * sizeof(*codes));
	free(codes);
	if (rc < 0) {
		bip_error(call, "%s", err);
		return rc;
	}
	if (*first < bip_state.started || *first + total > bip_state.numnodes) {
		bip_error(call, "bipload answered nodes %d to %d, outside the job's room (%d)",
			  *first, *first + total - 1, bip_state.numnodes);
		return -EPROTO;
	}
	if (*first + total > bip_state.napp)
		__atomic_store_n(&bip_state.napp, *first + total, __ATOMIC_RELEASE);
	return total;
}

BIP_EXPORT int bip_jobnodes(void)
{
	return bip_state.initialized ? __atomic_load_n(&bip_state.napp, __ATOMIC_ACQUIRE) : 0;
}

BIP_EXPORT int bip_universe(void)
{
	if (!bip_state.initialized)
		return 0;
	return bip_state.grow_nic ? bip_state.numnodes : bip_state.napp;
}

BIP_EXPORT void bip_group(int *first, int *count)
{
	if (first)
		*first = bip_state.initialized ? bip_state.group_first : 0;
	if (count)
		*count = bip_state.initialized ? bip_state.group_size : 0;
}
