/* SPDX-License-Identifier: MIT */
/*
 * layer.c - the calls for layers built on BIP (bip_layer(3)).
 *
 * A layer owns some of the reserved tags: their arrivals go to its
 * callbacks straight from the NIC (proto.c, bip_core_*_arrived), it sends
 * with a header gathered in front of its data, and it receives a long
 * message by the handle of its announcement, in any order.  Nothing here
 * changes how the manual's calls behave on the other tags.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "core.h"
#include "conf.h"
#include "pm.h"

static int check_layer_tag(const char *call, int tag)
{
	if (tag < NTAGS || tag >= BIP_TAG_FLOW) {
		bip_error(call, "tag %d is not a reserved tag (%d to %d)", tag, NTAGS,
			  BIP_TAG_FLOW - 1);
		return 0;
	}
	return 1;
}

static int check_registered(const char *call, int tag)
{
	if (!check_layer_tag(call, tag))
		return 0;
	if (!bip_state.layer[tag - NTAGS]) {
		bip_error(call, "no layer is registered on tag %d", tag);
		return 0;
	}
	return 1;
}

static int check_node(const char *call, int node)
{
	/* In a job that grows, every node of its room may be named: one that
	 * has not joined yet fails when something is sent to it. */
	if (bip_is_relay(node)) {
		bip_error(call, "node %d is a relay of the gateways (bipgw(1)): it runs no program",
			  node);
		return 0;
	}
	if (node >= 0 && node < bip_state.numnodes && bip_state.grow_nic)
		return 1;
	if (node < 0 || node >= bip_state.napp) {
		bip_error(call, "node %d does not exist (nodes 0 to %d)", node,
			  bip_state.napp - 1);
		return 0;
	}
	return 1;
}

BIP_EXPORT int bip_layer_init(void)
{
	if (bip_state.initialized)
		return 0;
	bip_init();
	return 1;
}

BIP_EXPORT int bip_layer_register(int tag, const struct bip_layer_ops *ops)
{
	const char *call = "bip_layer_register";
	struct bip_tag *t;
	int locked;

	if (!bip_check_init(call) || !check_layer_tag(call, tag))
		return -1;
	if (ops && (!ops->short_arrived || !ops->long_arrived || !ops->send_done ||
		    !ops->recv_done)) {
		bip_error(call, "tag %d: every callback must be given", tag);
		return -1;
	}
	t = &bip_state.tags[tag];
	locked = bip_lock();
	if (ops && bip_state.layer[tag - NTAGS]) {
		bip_unlock(locked);
		bip_error(call, "tag %d is already registered by a layer", tag);
		return -1;
	}
	if (ops && (bip_recv_state(t) == BIP_RECV_POSTED || bip_recv_state(t) == BIP_RECV_LONG)) {
		bip_unlock(locked);
		bip_error(call, "tag %d is in use by byte-length calls (a receive is posted)", tag);
		return -1;
	}
	/* What peers that started the layer earlier sent before this one
	 * took the tag waits in its queue: the layer gets it first, in order
	 * (later arrivals are still in the NIC, behind it). */
	if (ops) {
		int rc = bip_layer_drain((uint32_t)tag, ops);

		if (rc < 0) {
			bip_unlock(locked);
			bip_error(call, "tag %d: the layer refused a message queued before it "
				  "registered (%s)", tag, strerror(-rc));
			return -1;
		}
	}
	bip_state.layer[tag - NTAGS] = ops;
	bip_unlock(locked);
	return 0;
}

BIP_EXPORT int bip_layer_send(int dst, int tag, const void *hdr, size_t hlen, const void *buf,
			      size_t len, uint64_t cookie)
{
	const char *call = "bip_layer_send";
	int locked, id;

	/* A node that joined the job: reached on first use. */
	if (bip_unlikely(bip_state.grow_nic && dst >= 0 && dst < bip_state.numnodes &&
			 dst != bip_state.mynode && !bip_state.peers[dst].nic) &&
	    bip_core_reach(dst, call) < 0)
		return -1;
	if (bip_unlikely(!bip_state.initialized || dst < 0 || dst >= bip_state.napp ||
			 bip_is_relay(dst) || !bip_layer_of((uint32_t)tag) || hlen > BIP_SHORT_MAX ||
			 (hlen && !hdr) || (len && !buf) || len > BIP_MAX_MESSAGE ||
			 cookie > BIP_LAYER_COOKIE_MAX)) {
		if (bip_check_init(call) && check_node(call, dst) && check_registered(call, tag)) {
			if (len > BIP_MAX_MESSAGE)
				bip_error(call, "a message of %zu bytes: one message carries at "
					  "most %u", len, BIP_MAX_MESSAGE);
			else
				bip_error(call, "bad arguments: header %p of %zu bytes (at most "
					  "%d), buffer %p of %zu bytes, cookie %llu", hdr, hlen,
					  BIP_SHORT_MAX, buf, len, (unsigned long long)cookie);
		}
		return -1;
	}
	locked = bip_lock();
	if (hlen + len <= bip_layer_short_limit(bip_state.peers[dst].nic)) {
		id = bip_send_post_hdr(dst, (uint32_t)tag, hdr, hlen, buf, len, BIP_SEND_LAYER,
				       cookie);
	} else {
		/* The header first, then the data as a long message right
		 * behind it: nothing from this node can come between them
		 * (two free slots first, so that neither post waits and lets
		 * another thread in). */
		id = bip_send_reserve();
		if (id >= 0)
			id = bip_send_post_hdr(dst, (uint32_t)tag, hdr, hlen, NULL, 0, 0, 0);
		if (id >= 0)
			id = bip_send_post_hdr(dst, (uint32_t)tag, NULL, 0, buf, len,
					       BIP_SEND_LAYER | BIP_SEND_FORCE_LONG, cookie);
		/* A long send never completes at once. */
		if (id == 0)
			id = 1;
	}
	bip_unlock(locked);
	if (bip_unlikely(id < 0)) {
		bip_error(call, "sending %zu + %zu bytes to node %d on tag %d failed: %s", hlen, len,
			  dst, tag, strerror(-id));
		return -1;
	}
	return id == 0;
}

BIP_EXPORT int bip_layer_recv_long(int src, uint64_t handle, void *buf, size_t len,
				   uint64_t cookie)
{
	const char *call = "bip_layer_recv_long";
	struct bip_nic *nic;
	int locked, rc;

	if (!bip_check_init(call) || !check_node(call, src))
		return -1;
	if ((len && !buf) || cookie > BIP_LAYER_COOKIE_MAX) {
		bip_error(call, "bad arguments: buffer %p of %zu bytes, cookie %llu", buf, len,
			  (unsigned long long)cookie);
		return -1;
	}
	/* The cookie names the layer; any registered tag will do, since the
	 * completion goes to the same callbacks. */
	for (rc = 0; rc < BIP_INTERNAL_TAGS && !bip_state.layer[rc]; rc++)
		;
	if (rc == BIP_INTERNAL_TAGS) {
		bip_error(call, "no layer is registered");
		return -1;
	}
	cookie |= BIP_LAYER_RECV | ((uint64_t)rc << BIP_LAYER_TAG_SHIFT);
	nic = bip_state.peers[src].nic;
	locked = bip_lock();
	rc = nic->ops->post_long_recv(nic, handle, buf, len, cookie);
	/* Counted once the data is there or on its way (a failure is
	 * reported to the layer, and said). */
	if (rc >= 0) {
		bip_count(&bip_state.counters.long_received, 1);
		bip_count(&bip_state.counters.bytes_received, len);
	}
	bip_unlock(locked);
	if (rc < 0) {
		bip_error(call, "receiving %zu bytes from node %d failed: %s", len, src,
			  strerror(-rc));
		return -1;
	}
	return rc;
}

BIP_EXPORT int bip_layer_poll(void)
{
	int locked, rc;

	if (!bip_check_init("bip_layer_poll"))
		return -1;
	locked = bip_lock();
	rc = bip_progress();
	bip_unlock(locked);
	if (rc < 0) {
		bip_error("bip_layer_poll", "the NIC failed: %s", strerror(-rc));
		return -1;
	}
	return rc;
}

BIP_EXPORT int bip_layer_lock(void)
{
	return bip_lock();
}

BIP_EXPORT void bip_layer_unlock(int locked)
{
	bip_unlock(locked);
}

BIP_EXPORT int bip_layer_wait(struct bip_layer_wait *w)
{
	struct bip_wait bw = { .spins = w->spins, .yields = w->yields };
	/* The layer may hold the lock (bip_layer_lock): nobody waits with it. */
	unsigned depth = bip_lock_drop();
	int rc = bip_wait_step(&bw);

	bip_lock_retake(depth);

	w->spins = bw.spins;
	w->yields = bw.yields;
	return rc < 0 ? -1 : 0;
}

BIP_EXPORT size_t bip_layer_short_max(int node)
{
	if (!bip_check_init("bip_layer_short_max") || !check_node("bip_layer_short_max", node))
		return 0;
	/* A node not reached yet is reached through the instance for joining
	 * nodes; this node's own entry is any instance's. */
	return bip_layer_short_limit(bip_state.peers[node].nic ? bip_state.peers[node].nic :
				     bip_state.grow_nic ? bip_state.grow_nic :
							  bip_state.nics[0]);
}

BIP_EXPORT const char *bip_layer_host(int node)
{
	if (!bip_state.initialized || !bip_state.conf || node < 0 || node >= bip_state.conf->n)
		return "";
	bip_nic_learn_host(node);
	return bip_state.conf->nodes[node].host;
}

/* The core's own rule (bip_nic_same_host), which also picks the shm driver:
 * the same name, or two names of this machine ("localhost" and its name). */
BIP_EXPORT int bip_layer_same_host(int a, int b)
{
	const char *call = "bip_layer_same_host";

	if (!bip_check_init(call) || !check_node(call, a) || !check_node(call, b))
		return -1;
	bip_nic_learn_host(a);
	bip_nic_learn_host(b);
	return bip_nic_same_host(bip_state.conf, a, b);
}

BIP_EXPORT int bip_layer_cluster(int node)
{
	const char *call = "bip_layer_cluster";

	if (!bip_check_init(call) || !check_node(call, node))
		return -1;
	bip_nic_learn_host(node); /* a node that joined: its host's cluster */
	return bip_state.conf->nclusters ? bip_state.conf->cluster_of[node] : 0;
}

BIP_EXPORT int bip_layer_relays(void)
{
	return bip_state.initialized ? bip_state.nrelays : 0;
}

BIP_EXPORT const char *bip_layer_jobid(void)
{
	return bip_state.initialized ? bip_state.jobid : "";
}

BIP_EXPORT void bip_layer_abort(int code, const char *msg)
{
	bip_boot_abort(code > 0 && code < 256 ? code : 1, msg ? msg : "aborted");
}
