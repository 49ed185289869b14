/* SPDX-License-Identifier: MIT */
/*
 * monitor.c - the process's side of bipload --monitor (monitor.h): the
 * copy of its counters in the page its launcher gave it.
 *
 * Nothing travels on the job's message paths: the process copies its
 * counters (bip_state.counters, and each peer's sent_bytes and sent_msgs,
 * counted on the send path, proto.c) into the page, and the launcher reads
 * the page.  The copy is made from bip_progress, at most every
 * BIP_MONITOR_PERIOD_MS (the clock is read once every 1024 rounds, so the
 * polling loop pays a counter increment), at the end of bip_init and at
 * bip_finalize, so that the page holds the last state when the process
 * ends.  A process that computes without calling BIP does not update it;
 * its counters do not move either, save the reliability layer's timers
 * when a progress thread runs, which calls bip_progress too.
 *
 * A descriptor that is not such a page (not sealed against shrinking, too
 * small, or not there) is ignored: monitoring is off.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "monitor.h"
#include "state.h"

static size_t page_len;
static unsigned rounds;
static uint64_t last_ms;
static int writing;     /* a thread is writing a copy */

static uint64_t coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void bip_monitor_open(void)
{
	const char *v = getenv(BIP_MONITOR_ENV);
	struct stat st;
	char *end;
	long fd;
	int seals;
	void *m;

	if (!v || !*v)
		return;
	fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20 || fstat((int)fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	seals = fcntl((int)fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || (size_t)st.st_size < bip_monitor_size(0))
		return;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	close((int)fd);
	unsetenv(BIP_MONITOR_ENV); /* not the page of the process's children */
	if (m == MAP_FAILED)
		return;
	page_len = (size_t)st.st_size;
	bip_state.monitor = m;
	bip_monitor_publish();
}

void bip_monitor_publish(void)
{
	struct bip_monitor_page *pg = bip_state.monitor;
	size_t room, n, i;
	uint64_t seq;

	if (!pg || __atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE))
		return;
	room = (page_len - bip_monitor_size(0)) / sizeof(struct bip_monitor_peer);
	n = bip_state.peers ? (size_t)bip_state.numnodes : 0;
	if (n > room)
		n = room;
	if (n > BIP_MONITOR_PEERS_MAX)
		n = BIP_MONITOR_PEERS_MAX;
	seq = __atomic_load_n(&pg->seq, __ATOMIC_RELAXED) | 1;
	__atomic_store_n(&pg->seq, seq, __ATOMIC_RELAXED);
	/* Pairs with the launcher's acquire fence before it reads seq again:
	 * the odd seq is visible before any field of this copy. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pg->version = BIP_MONITOR_VERSION;
	pg->node = bip_state.mynode;
	pg->counters_size = sizeof(pg->counters);
	pg->updates++;
	memcpy(&pg->counters, &bip_state.counters, sizeof(pg->counters));
	for (i = 0; i < n; i++) {
		pg->peer[i].bytes = __atomic_load_n(&bip_state.peers[i].sent_bytes,
						    __ATOMIC_RELAXED);
		pg->peer[i].msgs = __atomic_load_n(&bip_state.peers[i].sent_msgs,
						   __ATOMIC_RELAXED);
	}
	pg->peers = (uint32_t)n;
	/* Pairs with the launcher's acquire load of seq before its copy: an
	 * even seq it reads comes after every field above. */
	__atomic_store_n(&pg->seq, seq + 1, __ATOMIC_RELEASE);
	last_ms = coarse_ms();
	__atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
}

void bip_monitor_tick(void)
{
	if (++rounds & 1023)
		return;
	if (coarse_ms() - last_ms >= BIP_MONITOR_PERIOD_MS)
		bip_monitor_publish();
}

void bip_monitor_close(void)
{
	if (!bip_state.monitor)
		return;
	bip_monitor_publish();
	munmap(bip_state.monitor, page_len);
	bip_state.monitor = NULL;
}
