/* SPDX-License-Identifier: MIT */
/*
 * nicsleep.c - the two halves of a NIC's sleep (nic.h), shared by the
 * drivers.
 *
 * The protocol, for a NIC woken through a futex word (shm, lanai): the
 * sleeper, under the core's lock, reads the word, adds one to the count
 * of sleepers its wakers read (a count, not a flag: several threads of
 * one process may sleep at once, and the first to wake must not make the
 * others look awake), fences, and looks once more at what may have been
 * published to it.  If nothing is there it lets go of the lock and waits
 * on the word while it still holds the value read before the count went
 * up (FUTEX_WAIT, shared: the word is in memory other processes map).
 * The waker publishes, fences, reads the count, and if it is not 0 adds
 * one to the word and wakes every thread waiting on it (FUTEX_WAKE of
 * INT_MAX).  Store, fence, load on both sides: either the sleeper's last
 * look sees the publication, or the waker sees the count and changes the
 * word, and then the wait ends at once or is woken.  The wait reads only
 * the word and the count, which a peer may spoil (a spurious wake-up, or
 * a sleep that lasts its time-out), so nothing is taken from them.
 *
 * For a NIC woken through a descriptor (ofi, udp: the completion queue's
 * wait object) the driver's arm asks the provider (fi_trywait) and the
 * wait is a ppoll on the descriptor.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "nicsleep.h"

/* One less sleeper, never below 0 (the count is shared with peers). */
static void sleepers_down(uint32_t *sleepers)
{
	uint32_t v = bip_load_relaxed(sleepers);

	while (v && !__atomic_compare_exchange_n(sleepers, &v, v - 1, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
}

int bip_nicsleep_arm(uint32_t *sleepers, uint32_t *word, int (*pending)(void *), void *arg,
		     struct bip_nic_sleep *s)
{
	uint32_t value = bip_load_acquire(word);

	__atomic_fetch_add(sleepers, 1, __ATOMIC_RELAXED);
	/* Orders the count before the last look (see above). */
	bip_fence();
	if (pending(arg)) {
		sleepers_down(sleepers);
		return 0;
	}
	s->word = word;
	s->value = value;
	s->sleepers = sleepers;
	s->fd = -1;
	return 1;
}

void bip_nicsleep_wait(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct timespec ts = { s->timeout_ns / 1000000000L, s->timeout_ns % 1000000000L };

	(void)nic;
	if (s->word) {
		syscall(SYS_futex, s->word, FUTEX_WAIT, s->value, &ts, NULL, 0);
	} else if (s->fd >= 0) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };

		/* An error other than a signal: nothing to wait on; yield. */
		if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
			sched_yield();
	}
	if (s->sleepers)
		sleepers_down(s->sleepers);
}
