/* SPDX-License-Identifier: MIT */
/*
 * async.c - the progress thread (BIP_PROGRESS_THREAD=1).
 *
 * Without it, the NICs move data only inside BIP calls: a long message
 * whose receiver posted its buffer waits, on a path that needs the
 * sender's help (shm's pipelined copy, a rendezvous read the sender's NIC
 * answers), until the sender calls BIP again; a layer's non-blocking
 * operations (the MPI shim's collectives) take their next step only when
 * the application calls it.  With it, bip_init starts one thread per
 * process that does what a waiting call does, on its own:
 *
 *   loop: take the lock, poll every NIC (bip_progress), run the layer's
 *         progress (bip_layer_progress: the shim's deferred work and its
 *         non-blocking collectives), let go of the lock;
 *         after a round that found nothing, yield; after BUSY_ROUNDS
 *         such rounds in a row, sleep for a time that doubles from
 *         NAP_MIN to NAP_MAX, back to NAP_MIN at the first event.  (Not
 *         on the NIC, as a waiting thread that may sleep does: its peers
 *         ring it only when the process may sleep, which in auto mode it
 *         mostly may not, so the nap is kept for every mode.)
 *
 * So an idle process's thread wakes at most every NAP_MAX, and a process
 * with traffic has its transfers moved within about NAP_MIN of the
 * moment they can move.  The thread holds the lock only while it polls,
 * as a waiting call does, so the application's threads are never kept
 * out longer than one poll.  It is a second thread: from its start every
 * BIP and MPI call takes the lock (state.h), which costs the
 * single-threaded fast path a lock and an unlock per call; that is why
 * it stays off by default (bip(7) gives the figures).
 *
 * bip_finalize stops it first, before it tears anything down: it sets
 * stop and joins the thread, which sees stop within one sleep.  The
 * thread blocks every signal, so that the application's signals go to
 * its own threads.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "async.h"
#include "progress.h"
#include "state.h"

#define BUSY_ROUNDS 64
#define NAP_MIN_NS 2000L
#define NAP_MAX_NS 1000000L

static struct {
	pthread_t thread;
	int running;
	int stop;               /* read and written with atomics */
	void (*layer)(void);    /* bip_layer_progress; under the lock */
} async;

/* One round: 1 if it found something to do. */
static int round_once(void)
{
	int locked = bip_lock();
	int events = bip_progress();

	if (async.layer)
		async.layer();
	bip_unlock(locked);
	return events != 0;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static void *async_main(void *arg)
{
	unsigned idle = 0;
	long ns = NAP_MIN_NS;

	(void)arg;
	while (!__atomic_load_n(&async.stop, __ATOMIC_ACQUIRE)) {
		if (round_once()) {
			idle = 0;
			ns = NAP_MIN_NS;
			continue;
		}
		if (++idle < BUSY_ROUNDS) {
			sched_yield();
		} else {
			nap(ns);
			if (ns < NAP_MAX_NS)
				ns *= 2;
		}
	}
	return NULL;
}

int bip_async_requested(void)
{
	const char *v = getenv("BIP_PROGRESS_THREAD");

	return v && !strcmp(v, "1");
}

int bip_async_start(char *err, size_t errlen)
{
	const char *v = getenv("BIP_PROGRESS_THREAD");
	sigset_t all, old;
	int rc;

	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (strcmp(v, "1")) {
		snprintf(err, errlen, "BIP_PROGRESS_THREAD=%s: expected 0 or 1", v);
		return -EINVAL;
	}
	async.stop = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&async.thread, NULL, async_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "BIP_PROGRESS_THREAD=1: cannot start the thread: %s",
			 strerror(rc));
		return -rc;
	}
	async.running = 1;
	return 0;
}

void bip_async_stop(void)
{
	if (!async.running)
		return;
	__atomic_store_n(&async.stop, 1, __ATOMIC_RELEASE);
	pthread_join(async.thread, NULL);
	async.running = 0;
}

BIP_EXPORT void bip_layer_progress(void (*fn)(void))
{
	int locked = bip_lock();

	async.layer = fn;
	bip_unlock(locked);
}
