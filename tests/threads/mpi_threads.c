/* SPDX-License-Identifier: MIT */
/*
 * mpi_threads - the MPI shim with MPI_THREAD_MULTIPLE: many threads of each
 * rank in point-to-point and collective calls at once.
 *
 *   bipload -sz N mpi_threads [-t THREADS] [-m MESSAGES]     (N = 2 .. 4)
 *
 * MPI_Init_thread must provide MPI_THREAD_MULTIPLE; otherwise every rank
 * prints "FAIL: rank R: ..." and exits 1.  The main thread duplicates
 * MPI_COMM_WORLD once per thread (THREADS, default 4), then the threads run
 * together, thread i only on its own communicator:
 *
 *  1. Wildcards: every rank sends MESSAGES messages to every other rank
 *     (MPI_Isend, tags and lengths varying, short and long), and receives
 *     them all with MPI_ANY_SOURCE and MPI_ANY_TAG, in turn by MPI_Recv,
 *     MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv and MPI_Irecv +
 *     MPI_Wait.  Each message carries (rank, thread, sequence) and a pattern;
 *     the status's source, tag and count must match it, and messages from
 *     one source must come in the order sent (MPI's non-overtaking rule).
 *     A barrier on the thread's communicator ends the phase, so that no
 *     message of the next one meets a wildcard receive.
 *  2. Named peers: MPI_Irecv from and MPI_Isend to every other rank, then
 *     one MPI_Waitall, for a few rounds; every word checked.
 *  3. Collectives: MPI_Bcast from a root that changes each round, MPI_Allreduce
 *     (sum), MPI_Iallreduce (max) + MPI_Wait and MPI_Barrier, each result
 *     checked against the value computed locally.
 *
 * Any mismatch prints one line "FAIL: rank R thread T: what" and exits 1;
 * success prints "mpi_threads: rank R: ... checked".
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "args.h"

#define MAX_THREADS 16
#define MAX_RANKS 64
#define HEAD 3
#define ROUNDS 6

static const int LENS[] = { HEAD, 16, 63, 64, 65, 66, 1000, 4097, 20000 }; /* in ints */
#define NLENS ((int)(sizeof(LENS) / sizeof(LENS[0])))
#define MAXLEN 20000

static int nthreads = 4, nmessages = 20;
static int rank, size;
static MPI_Comm comms[MAX_THREADS];

#define FAIL(t, ...)                                                                         \
	do {                                                                                 \
		fprintf(stderr, "FAIL: rank %d thread %d: ", rank, (t));                     \
		fprintf(stderr, __VA_ARGS__);                                                \
		fputc('\n', stderr);                                                         \
		_exit(1);                                                                    \
	} while (0)

#define OK(t, call)                                                                          \
	do {                                                                                 \
		int ok_rc_ = (call);                                                         \
		if (ok_rc_ != MPI_SUCCESS)                                                   \
			FAIL(t, "%s returned %d", #call, ok_rc_);                            \
	} while (0)

static int msg_len(int src, int thread, int seq)
{
	return LENS[(3 * seq + thread + src) % NLENS];
}

static int msg_tag(int src, int seq)
{
	return (seq * 7 + src) % 100;
}

static int pattern(int src, int thread, int seq, int w)
{
	uint32_t x = (uint32_t)src * 0x9e3779b1u ^ (uint32_t)thread * 0x85ebca77u ^
		     (uint32_t)seq * 0xc2b2ae3du ^ (uint32_t)w * 0x27d4eb2fu;

	return (int)(x + (uint32_t)w);
}

static void fill(int *buf, int len, int src, int thread, int seq)
{
	int w;

	buf[0] = src;
	buf[1] = thread;
	buf[2] = seq;
	for (w = HEAD; w < len; w++)
		buf[w] = pattern(src, thread, seq, w);
}

/* Check a message that the status says came from src with tag and count ints. */
static void check(int t, const int *buf, int src, int tag, int count, int seq, const char *how)
{
	int len = msg_len(src, t, seq), w;

	if (src < 0 || src >= size || src == rank)
		FAIL(t, "%s: status source %d", how, src);
	if (buf[0] != src || buf[1] != t)
		FAIL(t, "%s: message of rank %d thread %d, the status says rank %d (this "
		     "thread %d)", how, buf[0], buf[1], src, t);
	if (buf[2] != seq)
		FAIL(t, "%s: from rank %d, message %d arrived where %d was expected (order)",
		     how, src, buf[2], seq);
	if (tag != msg_tag(src, seq) || count != len)
		FAIL(t, "%s: message %d from rank %d: tag %d and %d ints, expected tag %d and %d",
		     how, seq, src, tag, count, msg_tag(src, seq), len);
	for (w = HEAD; w < len; w++)
		if (buf[w] != pattern(src, t, seq, w))
			FAIL(t, "%s: message %d from rank %d: int %d is %#x, expected %#x", how,
			     seq, src, w, (unsigned)buf[w], (unsigned)pattern(src, t, seq, w));
}

/* Receive one message from anyone, in the way number n says. */
static void recv_any(int t, int n, int *buf, int *next)
{
	MPI_Comm comm = comms[t];
	MPI_Status st;
	MPI_Message msg;
	MPI_Request req;
	static const char *const how[] = { "MPI_Recv", "MPI_Mprobe+MPI_Mrecv",
					   "MPI_Improbe+MPI_Imrecv", "MPI_Irecv+MPI_Wait" };
	int count, flag = 0;

	memset(buf, 0, HEAD * sizeof(int));
	switch (n % 4) {
	case 0:
		OK(t, MPI_Recv(buf, MAXLEN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
		break;
	case 1:
		OK(t, MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &msg, &st));
		OK(t, MPI_Get_count(&st, MPI_INT, &count));
		if (count != msg_len(st.MPI_SOURCE, t, next[st.MPI_SOURCE]))
			FAIL(t, "MPI_Mprobe: %d ints from rank %d, expected %d", count,
			     st.MPI_SOURCE, msg_len(st.MPI_SOURCE, t, next[st.MPI_SOURCE]));
		OK(t, MPI_Mrecv(buf, count, MPI_INT, &msg, &st));
		if (msg != MPI_MESSAGE_NULL)
			FAIL(t, "MPI_Mrecv left the message handle set");
		break;
	case 2:
		while (!flag) {
			OK(t, MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st));
			if (!flag)
				sched_yield();
		}
		OK(t, MPI_Imrecv(buf, MAXLEN, MPI_INT, &msg, &req));
		OK(t, MPI_Wait(&req, &st));
		break;
	default:
		OK(t, MPI_Irecv(buf, MAXLEN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req));
		OK(t, MPI_Wait(&req, &st));
		break;
	}
	OK(t, MPI_Get_count(&st, MPI_INT, &count));
	if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= size || st.MPI_SOURCE == rank)
		FAIL(t, "%s: status source %d", how[n % 4], st.MPI_SOURCE);
	check(t, buf, st.MPI_SOURCE, st.MPI_TAG, count, next[st.MPI_SOURCE], how[n % 4]);
	next[st.MPI_SOURCE]++;
}

static void phase_wildcards(int t, int *rbuf)
{
	int npeers = size - 1, nsend = npeers * nmessages, s = 0, seq, p, n;
	int *sbuf = malloc((size_t)nsend * MAXLEN * sizeof(int));
	MPI_Request *reqs = malloc((size_t)nsend * sizeof(MPI_Request));
	int next[MAX_RANKS] = { 0 };

	if (!sbuf || !reqs)
		FAIL(t, "out of memory");
	for (seq = 0; seq < nmessages; seq++)
		for (p = 0; p < size; p++) {
			int *b = sbuf + (size_t)s * MAXLEN;

			if (p == rank)
				continue;
			fill(b, msg_len(rank, t, seq), rank, t, seq);
			OK(t, MPI_Isend(b, msg_len(rank, t, seq), MPI_INT, p, msg_tag(rank, seq),
					comms[t], &reqs[s]));
			s++;
		}
	for (n = 0; n < nsend; n++)
		recv_any(t, n + t, rbuf, next);
	OK(t, MPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE));
	for (p = 0; p < size; p++)
		if (p != rank && next[p] != nmessages)
			FAIL(t, "wildcards: %d messages from rank %d, expected %d", next[p], p,
			     nmessages);
	/* A peer done with its receives would otherwise start the next
	 * phase, whose first message a wildcard receive here may take. */
	OK(t, MPI_Barrier(comms[t]));
	free(sbuf);
	free(reqs);
}

static void phase_named(int t)
{
	int len = msg_len(rank, t, 1), round, p, w;
	int *sbuf = malloc((size_t)size * MAXLEN * sizeof(int));
	int *rbuf = malloc((size_t)size * MAXLEN * sizeof(int));
	MPI_Request *reqs = malloc(2 * (size_t)size * sizeof(MPI_Request));

	if (!sbuf || !rbuf || !reqs)
		FAIL(t, "out of memory");
	for (round = 0; round < ROUNDS; round++) {
		int nreq = 0;

		for (p = 0; p < size; p++) {
			if (p == rank)
				continue;
			len = msg_len(p, t, round * 5);
			memset(rbuf + (size_t)p * MAXLEN, 0, (size_t)len * sizeof(int));
			OK(t, MPI_Irecv(rbuf + (size_t)p * MAXLEN, len, MPI_INT, p, round, comms[t],
					&reqs[nreq++]));
		}
		for (p = 0; p < size; p++) {
			if (p == rank)
				continue;
			len = msg_len(rank, t, round * 5);
			fill(sbuf + (size_t)p * MAXLEN, len, rank, t, round * 5);
			OK(t, MPI_Isend(sbuf + (size_t)p * MAXLEN, len, MPI_INT, p, round, comms[t],
					&reqs[nreq++]));
		}
		OK(t, MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
		for (p = 0; p < size; p++) {
			const int *b = rbuf + (size_t)p * MAXLEN;

			if (p == rank)
				continue;
			len = msg_len(p, t, round * 5);
			if (b[0] != p || b[1] != t || b[2] != round * 5)
				FAIL(t, "Waitall round %d: from rank %d got (%d, %d, %d)", round, p,
				     b[0], b[1], b[2]);
			for (w = HEAD; w < len; w++)
				if (b[w] != pattern(p, t, round * 5, w))
					FAIL(t, "Waitall round %d: from rank %d, int %d is %#x",
					     round, p, w, (unsigned)b[w]);
		}
	}
	free(sbuf);
	free(rbuf);
	free(reqs);
}

static void phase_collectives(int t)
{
	enum { N = 300 };
	int buf[N], out[N], round, root, i, r;
	MPI_Request req;

	for (round = 0; round < ROUNDS * 2; round++) {
		root = (round + t) % size;
		for (i = 0; i < N; i++)
			buf[i] = rank == root ? pattern(root, t, round, i) : -1;
		OK(t, MPI_Bcast(buf, N, MPI_INT, root, comms[t]));
		for (i = 0; i < N; i++)
			if (buf[i] != pattern(root, t, round, i))
				FAIL(t, "MPI_Bcast round %d from root %d: int %d is %#x", round, root,
				     i, (unsigned)buf[i]);

		for (i = 0; i < N; i++)
			buf[i] = (rank + 1) * (t + 1) + i + round;
		OK(t, MPI_Allreduce(buf, out, N, MPI_INT, MPI_SUM, comms[t]));
		for (i = 0; i < N; i++) {
			int want = 0;

			for (r = 0; r < size; r++)
				want += (r + 1) * (t + 1) + i + round;
			if (out[i] != want)
				FAIL(t, "MPI_Allreduce round %d: int %d is %d, expected %d", round, i,
				     out[i], want);
		}

		for (i = 0; i < N; i++)
			buf[i] = (rank * 31 + i * 7 + round + t) % 1000;
		OK(t, MPI_Iallreduce(buf, out, N, MPI_INT, MPI_MAX, comms[t], &req));
		OK(t, MPI_Wait(&req, MPI_STATUS_IGNORE));
		for (i = 0; i < N; i++) {
			int want = -1;

			for (r = 0; r < size; r++)
				if ((r * 31 + i * 7 + round + t) % 1000 > want)
					want = (r * 31 + i * 7 + round + t) % 1000;
			if (out[i] != want)
				FAIL(t, "MPI_Iallreduce round %d: int %d is %d, expected %d", round, i,
				     out[i], want);
		}
		OK(t, MPI_Barrier(comms[t]));
	}
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	int *rbuf = malloc(MAXLEN * sizeof(int));

	if (!rbuf)
		FAIL(t, "out of memory");
	phase_wildcards(t, rbuf);
	phase_named(t);
	phase_collectives(t);
	free(rbuf);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: mpi_threads [-t THREADS (1 .. %d)] [-m MESSAGES (1 .. 1000)]\n",
		MAX_THREADS);
	exit(2);
}

static int arg_int(const char *s, int lo, int hi)
{
	return arg_int_in(s, lo, hi, usage);
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	int provided = -1, opt, i, rc;

	while ((opt = getopt(argc, argv, "t:m:")) != -1) {
		if (opt == 't')
			nthreads = arg_int(optarg, 1, MAX_THREADS);
		else if (opt == 'm')
			nmessages = arg_int(optarg, 1, 1000);
		else
			usage();
	}
	if (optind != argc)
		usage();
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "FAIL: MPI_Init_thread failed\n");
		return 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided != MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "FAIL: rank %d: MPI_Init_thread provided thread level %d, not "
			"MPI_THREAD_MULTIPLE (%d): this test needs MPI_THREAD_MULTIPLE\n", rank,
			provided, MPI_THREAD_MULTIPLE);
		return 1;
	}
	if (size < 2 || size > MAX_RANKS) {
		fprintf(stderr, "FAIL: rank %d: mpi_threads needs 2 .. %d ranks, not %d\n", rank,
			MAX_RANKS, size);
		return 1;
	}
	for (i = 0; i < nthreads; i++)
		OK(-1, MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
	for (i = 0; i < nthreads; i++) {
		rc = pthread_create(&tid[i], NULL, thread_main, (void *)(intptr_t)i);
		if (rc)
			FAIL(i, "pthread_create: %s", strerror(rc));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < nthreads; i++)
		OK(-1, MPI_Comm_free(&comms[i]));
	printf("mpi_threads: rank %d of %d: %d threads: %d wildcard messages per peer, %d "
	       "Waitall rounds and %d rounds of collectives checked\n", rank, size, nthreads,
	       nmessages, ROUNDS, ROUNDS * 2);
	OK(-1, MPI_Finalize());
	return 0;
}
