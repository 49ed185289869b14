/* SPDX-License-Identifier: MIT */
/*
 * monitor.h - the page a process shares with its launcher for
 * bipload --monitor (bipload(1)): the layout, which both sides compile,
 * and the process's side of it (monitor.c).
 *
 * The launcher (bipload for its own host's processes, bipload-proxy for
 * the others) creates the page before it starts the process: an anonymous
 * memory file (memfd_create) of the size below, sealed so that it can
 * neither shrink nor grow (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL; a
 * reader's mapping can then never fault past its end).  The process
 * inherits it as a descriptor, named by BIP_MONITOR_FD; nothing has a name
 * in a file system, so no other user can open, pre-create or replace it.
 *
 * The process writes, the launcher only reads.  One writer: a sequence
 * number, odd while a copy is being written (a seqlock).  The launcher
 * copies the page, then reads seq again; it keeps the copy only if seq was
 * even and did not change.  It treats the copy as untrusted: every field is
 * a number, peers is clamped to the page's room and to the job's nodes.
 *
 * Layout (host byte order; the two sides run on the same host):
 *
 *   0   u32 version     BIP_MONITOR_VERSION
 *   4   u32 peers       entries of peer[] written (the process's nodes,
 *                       at most the room the launcher gave)
 *   8   u64 seq         even: stable; odd: being written
 *   16  s32 node        the process's node
 *   20  u32 counters_size  sizeof(struct bip_counters) of the process
 *   24  u64 updates     copies written so far
 *   32  struct bip_counters counters   (bip_get_counters(3))
 *   ... struct bip_monitor_peer peer[peers]: to each node, the bytes and
 *       messages this process handed to its driver (short and long
 *       messages of the API and of the layers, the core's own flow-control
 *       and forwarding messages too)
 */
#ifndef BIP_MONITOR_H
#define BIP_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "bip.h"

#define BIP_MONITOR_VERSION 1
/* The variable naming the page's descriptor in the process. */
#define BIP_MONITOR_ENV "BIP_MONITOR_FD"
/* The most peers a page holds, whatever a launcher asks. */
#define BIP_MONITOR_PEERS_MAX 65536

struct bip_monitor_peer {
	uint64_t bytes;
	uint64_t msgs;
};

struct bip_monitor_page {
	uint32_t version;
	uint32_t peers;
	uint64_t seq;
	int32_t node;
	uint32_t counters_size;
	uint64_t updates;
	struct bip_counters counters;
	struct bip_monitor_peer peer[];
};

_Static_assert(offsetof(struct bip_monitor_page, seq) == 8, "layout");
_Static_assert(offsetof(struct bip_monitor_page, counters) == 32, "layout");
_Static_assert(sizeof(struct bip_monitor_peer) == 16, "layout");
_Static_assert(offsetof(struct bip_monitor_page, peer) % 8 == 0, "layout");

/* The bytes of a page with room for peers nodes. */
static inline size_t bip_monitor_size(size_t peers)
{
	return offsetof(struct bip_monitor_page, peer) + peers * sizeof(struct bip_monitor_peer);
}

/*
 * The launcher's side: copy the page map (len bytes, room for at least
 * one header) into out (len bytes) if it is stable and of this version.
 * Returns the peers of the copy, clamped to the page's room and to
 * max_peers, or -1 (being written, not written yet, or another version:
 * try again later).
 */
static inline int bip_monitor_copy(const struct bip_monitor_page *map, size_t len,
				   struct bip_monitor_page *out, size_t max_peers)
{
	size_t room = (len - bip_monitor_size(0)) / sizeof(struct bip_monitor_peer);
	int tries;

	for (tries = 0; tries < 4; tries++) {
		/* Pairs with the process's release store of an even seq
		 * (monitor.c): what is copied below is of that copy or of
		 * later ones, which the second read of seq catches. */
		uint64_t s1 = __atomic_load_n(&map->seq, __ATOMIC_ACQUIRE), s2;
		size_t peers;

		if (s1 & 1 || s1 == 0)
			continue;
		__builtin_memcpy(out, (const void *)map, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&map->seq, __ATOMIC_RELAXED);
		if (s1 != s2)
			continue;
		if (out->version != BIP_MONITOR_VERSION)
			return -1;
		peers = out->peers;
		if (peers > room)
			peers = room;
		if (peers > max_peers)
			peers = max_peers;
		out->peers = (uint32_t)peers;
		return (int)peers;
	}
	return -1;
}

/* The process's side (monitor.c), for the core. */
/* If BIP_MONITOR_FD names a page, map it (after the peers exist). */
void bip_monitor_open(void);
/* Write a copy now (the end of bip_init, bip_finalize). */
void bip_monitor_publish(void);
/* From bip_progress while a page is mapped: a copy every
 * BIP_MONITOR_PERIOD_MS at most. */
void bip_monitor_tick(void);
void bip_monitor_close(void);

#define BIP_MONITOR_PERIOD_MS 100

#endif /* BIP_MONITOR_H */
