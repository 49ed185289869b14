/* SPDX-License-Identifier: MIT */
/*
 * waitset.c - one sleep over several drivers at once (progress.c): shm
 * beside a network driver, in a process of a job on several hosts or in a
 * relay (bipgw(1)).
 *
 * nic.h's sleep_arm gives either a futex word to wait on while it holds a
 * value (shm, lanai) or a descriptor to wait on until it is readable (ofi,
 * udp).  A thread cannot wait on a futex and a descriptor in one system
 * call, so each futex word gets a watcher: a thread of this process,
 * started the first time the word is waited on with others, that waits on
 * the word for ever and, each time its value changes (a peer rang it:
 * nic.h's wakers change the word, then FUTEX_WAKE it), makes one eventfd
 * readable.  The sleeper then waits in one ppoll on the descriptors and
 * that eventfd.
 *
 * No wake-up is lost: the watcher compares the word with the value it
 * last saw and says every change, including one made before it waited
 * (FUTEX_WAIT returns at once when the word no longer holds the value it
 * is given).  A change made while nobody sleeps leaves the eventfd
 * readable, so the next sleep ends at once and goes round again: a
 * spurious wake-up, as nic.h allows.  The sleeper empties the eventfd when
 * it wakes.  Peers ring a word only while this process says it sleeps
 * (the sleepers count of sleep_arm), so a watcher costs nothing while the
 * process works: it sleeps in FUTEX_WAIT.
 *
 * The watchers block every signal (the program's handlers run in its own
 * threads) and wake every WATCH_LOOK_NS to see whether bip_finalize asked
 * them to end (bip_waitset_fini, before the drivers unmap their words).
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progress.h"

#define WATCH_MAX 4
#define WATCH_LOOK_NS 100000000L /* 100 ms */

static struct {
	pthread_mutex_t lock;           /* the watchers' start and end */
	int efd;                        /* -1 until the first sleep over several */
	int nwatch;
	int stop;
	struct watch {
		uint32_t *word;
		uint32_t first;         /* the value the first sleep armed with */
		pthread_t thread;
	} watch[WATCH_MAX];
} ws = { .lock = PTHREAD_MUTEX_INITIALIZER, .efd = -1 };

static void *watcher(void *arg)
{
	const struct watch *w = arg;
	uint32_t *word = w->word;
	uint32_t seen = w->first; /* a change since is said at once */

	while (!__atomic_load_n(&ws.stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, WATCH_LOOK_NS };
		uint32_t now;

		syscall(SYS_futex, word, FUTEX_WAIT, seen, &ts, NULL, 0);
		now = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if (now != seen) {
			uint64_t one = 1;

			seen = now;
			/* Full (2^64 - 2 tokens) is readable too: ignore it. */
			if (write(ws.efd, &one, sizeof(one)) < 0)
				continue;
		}
	}
	return NULL;
}

/* The watcher of word, started if needed (from value, the one its sleep
 * armed with): 0, or -1 (no room, no thread). */
static int watch(uint32_t *word, uint32_t value)
{
	sigset_t all, old;
	int i, rc;

	for (i = 0; i < ws.nwatch; i++)
		if (ws.watch[i].word == word)
			return 0;
	if (ws.nwatch == WATCH_MAX)
		return -1;
	ws.watch[ws.nwatch].word = word;
	ws.watch[ws.nwatch].first = value;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ws.watch[ws.nwatch].thread, NULL, watcher, &ws.watch[ws.nwatch]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -1;
	ws.nwatch++;
	return 0;
}

int bip_waitset_wait(struct bip_nic_sleep *s, int n, long timeout_ns)
{
	struct pollfd pfd[WATCH_MAX + 1];
	struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };
	int i, npfd = 0, words = 0;
	uint64_t drain;

	pthread_mutex_lock(&ws.lock);
	if (ws.efd < 0)
		ws.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (i = 0; i < n && ws.efd >= 0; i++) {
		if (s[i].word) {
			if (watch(s[i].word, s[i].value) < 0)
				break;
			words++;
		} else if (s[i].fd >= 0 && npfd < WATCH_MAX) {
			pfd[npfd++] = (struct pollfd){ .fd = s[i].fd, .events = POLLIN };
		} else {
			break;
		}
	}
	pthread_mutex_unlock(&ws.lock);
	if (i < n)
		return -1;
	/* A word rung since sleep_arm read it: no need to sleep. */
	for (i = 0; i < n; i++)
		if (s[i].word && __atomic_load_n(s[i].word, __ATOMIC_ACQUIRE) != s[i].value)
			return 0;
	if (words)
		pfd[npfd++] = (struct pollfd){ .fd = ws.efd, .events = POLLIN };
	if (ppoll(pfd, (nfds_t)npfd, &ts, NULL) < 0 && errno != EINTR)
		return -1;
	if (words && read(ws.efd, &drain, sizeof(drain)) < 0 && errno != EAGAIN)
		return 0;
	return 0;
}

void bip_waitset_fini(void)
{
	int i;

	pthread_mutex_lock(&ws.lock);
	__atomic_store_n(&ws.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < ws.nwatch; i++) {
		syscall(SYS_futex, ws.watch[i].word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
		pthread_join(ws.watch[i].thread, NULL);
	}
	ws.nwatch = 0;
	if (ws.efd >= 0)
		close(ws.efd);
	ws.efd = -1;
	__atomic_store_n(&ws.stop, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ws.lock);
}
