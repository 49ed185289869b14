/* SPDX-License-Identifier: MIT */
/*
 * p2p.c - point-to-point tests of the MPI shim, run through bipload:
 *   bipload -sz N p2p TEST
 * Each test checks the data and the statuses it gets.
 */
#include <stdint.h>
#include <limits.h>
#include <string.h>

#include <bip.h>
#include <mpi.h>

#include "mpicheck.h"

static int rank, size;
/* The barrier's own communicator: its messages never match the tests'
 * wildcard receives. */
static MPI_Comm sync_comm;

#define TAG_SYNC 32000

/* A barrier made of point-to-point messages (the test must not depend on
 * the collectives). */
static void sync_all(void)
{
	int i, x = 0;

	if (rank == 0) {
		for (i = 1; i < size; i++)
			OK(MPI_Recv(&x, 1, MPI_INT, i, TAG_SYNC, sync_comm, MPI_STATUS_IGNORE));
		for (i = 1; i < size; i++)
			OK(MPI_Send(&x, 1, MPI_INT, i, TAG_SYNC, sync_comm));
	} else {
		OK(MPI_Send(&x, 1, MPI_INT, 0, TAG_SYNC, sync_comm));
		OK(MPI_Recv(&x, 1, MPI_INT, 0, TAG_SYNC, sync_comm, MPI_STATUS_IGNORE));
	}
}

/* The byte at position i of a message from src with sequence seq. */
static unsigned char pattern(int src, int seq, size_t i)
{
	return (unsigned char)(src * 31 + seq * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int src, int seq)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pattern(src, seq, i);
}

static void expect_data(const unsigned char *b, size_t n, int src, int seq)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(b[i] == pattern(src, seq, i),
		      "byte %zu of %zu from rank %d (message %d) is %u, expected %u", i, n, src,
		      seq, b[i], pattern(src, seq, i));
}

static void expect_status(const MPI_Status *st, int src, int tag, int bytes)
{
	int n = -1;

	CHECK(st->MPI_SOURCE == src, "source %d, expected %d", st->MPI_SOURCE, src);
	CHECK(st->MPI_TAG == tag, "tag %d, expected %d", st->MPI_TAG, tag);
	OK(MPI_Get_count(st, MPI_BYTE, &n));
	CHECK(n == bytes, "count %d bytes, expected %d", n, bytes);
}

/* Sizes around every protocol boundary: eager (240 bytes of data with the
 * envelope in BIP's short message, 288 in shm's; 232 and 280 for a
 * synchronous send), rendezvous with data that alone would fit a short
 * message, medium and large long messages. */
static const int sizes[] = { 0, 1, 4, 200, 232, 233, 240, 241, 256, 257, 280, 281, 288, 289,
			     304, 1000, 4096, 65536,
			     1 << 20, 4 << 20 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

/* Each rank sends to the next around the ring, every size. */
static void test_ring(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, i;
	/* One byte more than the largest message: nothing is written past it. */
	unsigned char *s = malloc((4 << 20) + 1), *r = malloc((4 << 20) + 1);
	MPI_Status st;
	MPI_Request req;

	for (i = 0; i < NSIZES; i++) {
		fill(s, (size_t)sizes[i], rank, i);
		memset(r, 0, (size_t)sizes[i] + 1);
		OK(MPI_Irecv(r, sizes[i], MPI_BYTE, prev, i, MPI_COMM_WORLD, &req));
		OK(MPI_Send(s, sizes[i], MPI_BYTE, next, i, MPI_COMM_WORLD));
		OK(MPI_Wait(&req, &st));
		CHECK(req == MPI_REQUEST_NULL, "the request is not freed");
		expect_status(&st, prev, i, sizes[i]);
		expect_data(r, (size_t)sizes[i], prev, i);
		CHECK(sizes[i] == 0 || r[sizes[i]] == 0, "wrote past the message");
	}
	/* Blocking receives posted after the send arrived (unexpected). */
	for (i = 0; i < NSIZES; i++) {
		fill(s, (size_t)sizes[i], rank, i);
		OK(MPI_Isend(s, sizes[i], MPI_BYTE, next, 100 + i, MPI_COMM_WORLD, &req));
		sync_all();
		OK(MPI_Recv(r, sizes[i], MPI_BYTE, prev, 100 + i, MPI_COMM_WORLD, &st));
		expect_status(&st, prev, 100 + i, sizes[i]);
		expect_data(r, (size_t)sizes[i], prev, i);
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	}
	free(s);
	free(r);
}

/* Rank 0 receives everything with wildcards; each source's messages
 * arrive in the order they were sent (non-overtaking), whatever their
 * tags and protocols. */
#define NMSG 40
static void test_order(void)
{
	static unsigned char buf[8192];
	int i, seq[64] = { 0 };
	MPI_Status st;

	if (rank != 0) {
		MPI_Request reqs[NMSG];
		static unsigned char out[NMSG][8192];

		for (i = 0; i < NMSG; i++) {
			int len = (i % 3 == 0) ? 5000 : (i % 3 == 1) ? 8 : 240;

			fill(out[i], (size_t)len, rank, i);
			OK(MPI_Isend(out[i], len, MPI_BYTE, 0, i % 5, MPI_COMM_WORLD, &reqs[i]));
		}
		OK(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
		return;
	}
	for (i = 0; i < NMSG * (size - 1); i++) {
		int src, len;

		OK(MPI_Recv(buf, sizeof(buf), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
			    &st));
		src = st.MPI_SOURCE;
		CHECK(src > 0 && src < size, "source %d", src);
		len = (seq[src] % 3 == 0) ? 5000 : (seq[src] % 3 == 1) ? 8 : 240;
		expect_status(&st, src, seq[src] % 5, len);
		expect_data(buf, (size_t)len, src, seq[src]);
		seq[src]++;
	}
}

static void test_order_tag(void)
{
	int i, v;
	MPI_Status st;

	if (rank == 1) {
		for (i = 0; i < 10; i++)
			OK(MPI_Send(&i, 1, MPI_INT, 0, i % 2, MPI_COMM_WORLD));
	} else if (rank == 0) {
		/* The odd ones first (tag 1), then the even ones. */
		for (i = 1; i < 10; i += 2) {
			OK(MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &st));
			CHECK(v == i, "tag 1: got %d, expected %d", v, i);
		}
		for (i = 0; i < 10; i += 2) {
			OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				    &st));
			CHECK(v == i && st.MPI_TAG == 0, "got %d tag %d, expected %d tag 0", v,
			      st.MPI_TAG, i);
		}
	}
}

/* Many receives posted on one buffer, as benchmarks do; every completion
 * function in turn. */
#define WIN 64
static void test_window(void)
{
	static unsigned char buf[WIN * 300];
	MPI_Request reqs[WIN];
	MPI_Status sts[WIN];
	int round, i, n, idx[WIN], flag;

	for (round = 0; round < 6; round++) {
		int len = round % 2 ? 300 : 16;

		if (rank == 0) {
			for (i = 0; i < WIN; i++) {
				fill(buf + i * 300, (size_t)len, 0, i);
				OK(MPI_Isend(buf + i * 300, len, MPI_BYTE, 1, 7, MPI_COMM_WORLD,
					     &reqs[i]));
			}
			OK(MPI_Waitall(WIN, reqs, MPI_STATUSES_IGNORE));
			OK(MPI_Recv(&flag, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			continue;
		}
		if (rank != 1)
			continue;
		/* Each receive its own part of the buffer: receives in flight
		 * into one buffer are erroneous in MPI, and end as whichever
		 * lands last (the reliability layer places repaired fragments
		 * whenever they come). */
		for (i = 0; i < WIN; i++)
			OK(MPI_Irecv(buf + i * 300, len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]));
		switch (round) {
		case 0:
		case 1:
			OK(MPI_Waitall(WIN, reqs, sts));
			for (i = 0; i < WIN; i++)
				expect_status(&sts[i], 0, 7, len);
			break;
		case 2:
			for (n = 0; n < WIN; n++) {
				OK(MPI_Waitany(WIN, reqs, &i, &sts[0]));
				CHECK(i >= 0 && i < WIN && reqs[i] == MPI_REQUEST_NULL, "index %d", i);
				expect_status(&sts[0], 0, 7, len);
			}
			OK(MPI_Waitany(WIN, reqs, &i, &sts[0]));
			CHECK(i == MPI_UNDEFINED, "all null: index %d", i);
			break;
		case 3:
			for (n = 0; n < WIN;) {
				int out;

				OK(MPI_Waitsome(WIN, reqs, &out, idx, sts));
				CHECK(out >= 1, "outcount %d", out);
				n += out;
			}
			OK(MPI_Waitsome(WIN, reqs, &n, idx, sts));
			CHECK(n == MPI_UNDEFINED, "all null: outcount %d", n);
			break;
		case 4:
			for (n = 0; n < WIN;) {
				OK(MPI_Testany(WIN, reqs, &i, &flag, &sts[0]));
				if (flag)
					n++;
			}
			OK(MPI_Testany(WIN, reqs, &i, &flag, &sts[0]));
			CHECK(flag && i == MPI_UNDEFINED, "all null: flag %d index %d", flag, i);
			break;
		case 5:
			do
				OK(MPI_Testall(WIN, reqs, &flag, sts));
			while (!flag);
			for (i = 0; i < WIN; i++)
				CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
			OK(MPI_Testsome(WIN, reqs, &n, idx, sts));
			CHECK(n == MPI_UNDEFINED, "all null: outcount %d", n);
			break;
		}
		for (i = 0; i < WIN; i++)
			expect_data(buf + i * 300, (size_t)len, 0, i);
		OK(MPI_Send(&flag, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
	}
}

static void test_persistent(void)
{
	int peer = rank ^ 1, i, in = -1, out;
	MPI_Request reqs[2];
	MPI_Status sts[2];
	static unsigned char big_in[100000], big_out[100000];

	if (peer >= size)
		return;
	OK(MPI_Recv_init(&in, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Send_init(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &reqs[1]));
	for (i = 0; i < 20; i++) {
		out = rank * 1000 + i;
		OK(MPI_Startall(2, reqs));
		OK(MPI_Waitall(2, reqs, sts));
		CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
		      "persistent requests stay");
		CHECK(in == peer * 1000 + i, "round %d: got %d", i, in);
		expect_status(&sts[0], peer, 3, 4);
	}
	/* Waiting on an inactive persistent request returns at once. */
	OK(MPI_Wait(&reqs[0], &sts[0]));
	CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[0].MPI_TAG == MPI_ANY_TAG,
	      "empty status");
	OK(MPI_Request_free(&reqs[0]));
	OK(MPI_Request_free(&reqs[1]));
	CHECK(reqs[0] == MPI_REQUEST_NULL, "freed");
	/* Rendezvous and synchronous persistent sends, started one by one. */
	OK(MPI_Recv_init(big_in, sizeof(big_in), MPI_BYTE, peer, 4, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Ssend_init(big_out, sizeof(big_out), MPI_BYTE, peer, 4, MPI_COMM_WORLD, &reqs[1]));
	for (i = 0; i < 3; i++) {
		fill(big_out, sizeof(big_out), rank, i);
		OK(MPI_Start(&reqs[0]));
		OK(MPI_Start(&reqs[1]));
		OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
		OK(MPI_Wait(&reqs[0], &sts[0]));
		expect_data(big_in, sizeof(big_in), peer, i);
	}
	OK(MPI_Request_free(&reqs[0]));
	OK(MPI_Request_free(&reqs[1]));
}

/* A synchronous send completes only once the receive has matched it. */
static void test_ssend(void)
{
	static unsigned char big[300000];
	int i, flag, go = 1, lens[5] = { 0, 8, 280, 281, (int)sizeof(big) }, k;
	MPI_Request req;

	/* Acknowledged eager messages (up to 280 bytes over shm), then
	 * rendezvous ones. */
	for (k = 0; k < 5; k++) {
		if (rank == 0) {
			fill(big, (size_t)lens[k], 0, k);
			OK(MPI_Issend(big, lens[k], MPI_BYTE, 1, 11, MPI_COMM_WORLD, &req));
			for (i = 0; i < 2000; i++) {
				OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
				CHECK(!flag, "MPI_Issend of %d bytes completed before any receive",
				      lens[k]);
			}
			OK(MPI_Send(&go, 1, MPI_INT, 1, 12, MPI_COMM_WORLD));
			OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		} else if (rank == 1) {
			static unsigned char in[300000];
			MPI_Status st;

			/* Only after rank 0 has seen its send incomplete. */
			OK(MPI_Recv(&go, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			OK(MPI_Recv(in, sizeof(in), MPI_BYTE, 0, 11, MPI_COMM_WORLD, &st));
			expect_status(&st, 0, 11, lens[k]);
			expect_data(in, (size_t)lens[k], 0, k);
		}
	}
	/* Blocking Ssend and Rsend against a posted receive. */
	if (rank == 0) {
		OK(MPI_Recv(&go, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Ssend(&go, 1, MPI_INT, 1, 14, MPI_COMM_WORLD));
		OK(MPI_Rsend(&go, 1, MPI_INT, 1, 15, MPI_COMM_WORLD));
	} else if (rank == 1) {
		MPI_Request r[2];

		OK(MPI_Irecv(&i, 1, MPI_INT, 0, 14, MPI_COMM_WORLD, &r[0]));
		OK(MPI_Irecv(&flag, 1, MPI_INT, 0, 15, MPI_COMM_WORLD, &r[1]));
		OK(MPI_Send(&go, 1, MPI_INT, 0, 13, MPI_COMM_WORLD));
		OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
		CHECK(i == 1 && flag == 1, "got %d and %d", i, flag);
	}
}

static void test_bsend(void)
{
	int bufsize = 2 * (100 + MPI_BSEND_OVERHEAD), rc, n, v[25], i;
	void *buf = malloc((size_t)bufsize), *back;
	MPI_Request req;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank == 0) {
		for (i = 0; i < 25; i++)
			v[i] = i;
		/* Nothing attached. */
		rc = MPI_Bsend(v, 25, MPI_INT, 1, 21, MPI_COMM_WORLD);
		CHECK(rc == MPI_ERR_BUFFER, "Bsend without a buffer returned %d", rc);
		OK(MPI_Buffer_attach(buf, bufsize));
		rc = MPI_Buffer_attach(buf, bufsize);
		CHECK(rc == MPI_ERR_BUFFER, "second attach returned %d", rc);
		/* Room for two messages of 100 bytes; the receiver is not there
		 * yet, so the third finds no room. */
		OK(MPI_Bsend(v, 25, MPI_INT, 1, 21, MPI_COMM_WORLD));
		OK(MPI_Ibsend(v, 25, MPI_INT, 1, 21, MPI_COMM_WORLD, &req));
		OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		rc = MPI_Bsend(v, 200, MPI_INT, 1, 21, MPI_COMM_WORLD);
		CHECK(rc == MPI_ERR_BUFFER, "Bsend too big for the buffer returned %d", rc);
		OK(MPI_Send(v, 1, MPI_INT, 1, 22, MPI_COMM_WORLD));
		/* Detach waits until the buffered messages are delivered. */
		OK(MPI_Buffer_detach(&back, &n));
		CHECK(back == buf && n == bufsize, "detach gave %p/%d", back, n);
	} else if (rank == 1) {
		MPI_Status st;

		OK(MPI_Recv(v, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (n = 0; n < 2; n++) {
			memset(v, 0xff, sizeof(v));
			OK(MPI_Recv(v, 25, MPI_INT, 0, 21, MPI_COMM_WORLD, &st));
			for (i = 0; i < 25; i++)
				CHECK(v[i] == i, "buffered message %d: v[%d] = %d", n, i, v[i]);
		}
	}
	free(buf);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* An unmatched receive is cancelled; a completed one is not. */
static void test_cancel(void)
{
	MPI_Request req;
	MPI_Status st;
	int v = 0, x = 5, flag = -1;

	/* Nothing will ever match tag 77. */
	OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &req));
	OK(MPI_Cancel(&req));
	OK(MPI_Wait(&req, &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag == 1, "cancelled receive: Test_cancelled says %d", flag);
	CHECK(req == MPI_REQUEST_NULL, "request not freed");
	/* Cancelled, then freed without waiting. */
	OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &req));
	OK(MPI_Cancel(&req));
	OK(MPI_Request_free(&req));
	if (size < 2 || rank >= 2)
		return;
	OK(MPI_Irecv(&v, 1, MPI_INT, 1 - rank, 90, MPI_COMM_WORLD, &req));
	OK(MPI_Send(&x, 1, MPI_INT, 1 - rank, 90, MPI_COMM_WORLD));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	/* req is MPI_REQUEST_NULL now; a fresh one completes, then cancel. */
	OK(MPI_Irecv(&v, 1, MPI_INT, 1 - rank, 91, MPI_COMM_WORLD, &req));
	OK(MPI_Send(&x, 1, MPI_INT, 1 - rank, 91, MPI_COMM_WORLD));
	do
		OK(MPI_Request_get_status(req, &flag, &st));
	while (!flag);
	OK(MPI_Cancel(&req));
	OK(MPI_Wait(&req, &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag == 0, "a completed receive reads as cancelled");
	CHECK(v == 5, "value %d", v);
}

/*
 * Cancelling sends.  A send that waits for its receiver - a rendezvous
 * (large), a synchronous send, a send to oneself - is cancelled while its
 * message is still unexpected at the receiver: MPI_Test_cancelled says so
 * and the receiver never sees it (a wildcard receive gets the next message
 * and nothing else is there).  Once a receive matched it, or for an eager
 * send that BIP has taken, the send completes normally.
 */
enum send_kind {
	SEND_RNDV,
	SEND_SSEND_SMALL,
	SEND_SSEND_BIG,
	SEND_PERSISTENT,
	SEND_EAGER,            /* complete at once: withdrawn at the receiver */
	SEND_PERSISTENT_SMALL, /* the same, started from MPI_Send_init */
	SEND_BUFFERED_SMALL,
	SEND_BUFFERED_BIG,
	SEND_BSEND_INIT,
	SEND_FREED,
};

static const char *const send_kind_names[] = {
	"rendezvous", "small synchronous", "large synchronous", "persistent", "eager",
	"small persistent", "small buffered", "large buffered", "persistent buffered", "freed",
};

#define CANCEL_BIG 65536
#define CANCEL_SMALL 16

static int cancelled(const MPI_Status *st)
{
	int flag = -1;

	OK(MPI_Test_cancelled(st, &flag));
	CHECK(flag == 0 || flag == 1, "Test_cancelled flag %d", flag);
	return flag;
}

/* The receiver gets message seq from rank 0 by a wildcard receive, and
 * nothing else is waiting. */
static void receive_only(unsigned char *buf, int n, int tag, int seq)
{
	MPI_Status st;
	int flag = -1;

	memset(buf, 0, (size_t)n);
	OK(MPI_Recv(buf, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	expect_status(&st, 0, tag, n);
	expect_data(buf, (size_t)n, 0, seq);
	CHECK(cancelled(&st) == 0, "a received message reads as cancelled");
	OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
	CHECK(flag == 0, "a message from rank %d with tag %d is still there", st.MPI_SOURCE,
	      st.MPI_TAG);
}

static void cancel_unexpected(enum send_kind kind, unsigned char *a, unsigned char *b)
{
	int tag = 200 + (int)kind, seq = 2 * (int)kind;
	int small = kind == SEND_SSEND_SMALL || kind == SEND_EAGER ||
		    kind == SEND_PERSISTENT_SMALL || kind == SEND_BUFFERED_SMALL ||
		    kind == SEND_BSEND_INIT;
	int buffered = kind == SEND_BUFFERED_SMALL || kind == SEND_BUFFERED_BIG ||
		       kind == SEND_BSEND_INIT;
	int n = small ? CANCEL_SMALL : CANCEL_BIG, bsize;
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Status st;
	void *battach = NULL;

	if (rank == 0) {
		fill(a, (size_t)n, 0, seq);
		if (buffered) {
			battach = malloc((size_t)(n + MPI_BSEND_OVERHEAD) * 2);
			OK(MPI_Buffer_attach(battach, (n + MPI_BSEND_OVERHEAD) * 2));
		}
		switch (kind) {
		case SEND_SSEND_SMALL:
		case SEND_SSEND_BIG:
			OK(MPI_Issend(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
			break;
		case SEND_PERSISTENT:
		case SEND_PERSISTENT_SMALL:
			OK(MPI_Send_init(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
			OK(MPI_Start(&req));
			break;
		case SEND_BUFFERED_SMALL:
		case SEND_BUFFERED_BIG:
			OK(MPI_Ibsend(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
			/* The data is copied: the user's buffer is free. */
			memset(a, 0, (size_t)n);
			break;
		case SEND_BSEND_INIT:
			OK(MPI_Bsend_init(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
			OK(MPI_Start(&req));
			break;
		default:
			OK(MPI_Isend(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
		}
	} else if (rank == 1) {
		/* The envelope is here, unexpected; no receive is posted. */
		OK(MPI_Probe(0, tag, MPI_COMM_WORLD, &st));
		expect_status(&st, 0, tag, n);
	}
	sync_all();
	if (rank == 0) {
		OK(MPI_Cancel(&req));
		if (kind == SEND_FREED) {
			OK(MPI_Request_free(&req));
			CHECK(req == MPI_REQUEST_NULL, "request not freed");
		} else {
			OK(MPI_Cancel(&req)); /* twice: no more than once */
			OK(MPI_Wait(&req, &st));
			CHECK(cancelled(&st) == 1, "%s send not cancelled",
			      send_kind_names[kind]);
		}
	}
	/* The receiver answers the cancel while it waits here; the cancel
	 * reaches it before rank 0's message of this barrier. */
	sync_all();
	if (rank == 0) {
		fill(b, (size_t)n, 0, seq + 1);
		if (kind == SEND_PERSISTENT || kind == SEND_PERSISTENT_SMALL ||
		    kind == SEND_BSEND_INIT) {
			/* Started again, the same request is a normal send. */
			fill(a, (size_t)n, 0, seq + 1);
			OK(MPI_Start(&req));
			OK(MPI_Wait(&req, &st));
			CHECK(cancelled(&st) == 0, "restarted persistent send reads as cancelled");
			OK(MPI_Request_free(&req));
		} else {
			OK(MPI_Send(b, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
		}
		if (buffered) {
			/* Waits for the buffered sends: the cancelled one too. */
			OK(MPI_Buffer_detach(&battach, &bsize));
			CHECK(bsize == (n + MPI_BSEND_OVERHEAD) * 2, "detached %d bytes", bsize);
			free(battach);
		}
	} else if (rank == 1) {
		receive_only(b, n, tag, seq + 1);
	}
	sync_all();
}

/* The receive is posted before the send starts: matched on arrival. */
static void cancel_matched(int ssend, int n, unsigned char *a, unsigned char *b)
{
	int tag = 220 + ssend, seq = 20 + ssend;
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_Status st;

	if (rank == 1)
		OK(MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &req));
	sync_all();
	if (rank == 0) {
		fill(a, (size_t)n, 0, seq);
		if (ssend)
			OK(MPI_Issend(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
		else
			OK(MPI_Isend(a, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req));
		OK(MPI_Cancel(&req));
		OK(MPI_Wait(&req, &st));
		CHECK(cancelled(&st) == 0, "a matched %s send of %d bytes reads as cancelled",
		      ssend ? "synchronous" : "standard", n);
	} else if (rank == 1) {
		OK(MPI_Wait(&req, &st));
		expect_status(&st, 0, tag, n);
		expect_data(b, (size_t)n, 0, seq);
	}
	sync_all();
}

/* Sends to oneself: cancelled while no receive took them. */
static void cancel_self(unsigned char *a, unsigned char *b)
{
	const int lens[] = { CANCEL_SMALL, CANCEL_BIG };
	MPI_Request req, rreq;
	MPI_Status st;
	int k, flag = -1;

	for (k = 0; k < 2; k++) {
		/* Synchronous, or too large to be copied: waits for a receive. */
		fill(a, (size_t)lens[k], rank, 40 + k);
		if (k == 0)
			OK(MPI_Issend(a, lens[k], MPI_BYTE, rank, 240, MPI_COMM_WORLD, &req));
		else
			OK(MPI_Isend(a, lens[k], MPI_BYTE, rank, 240, MPI_COMM_WORLD, &req));
		OK(MPI_Cancel(&req));
		OK(MPI_Wait(&req, &st));
		CHECK(cancelled(&st) == 1, "send of %d bytes to oneself not cancelled", lens[k]);
		OK(MPI_Iprobe(rank, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
		CHECK(flag == 0, "a cancelled send to oneself is still there");
		/* Matched by a posted receive: completes normally. */
		OK(MPI_Irecv(b, lens[k], MPI_BYTE, MPI_ANY_SOURCE, 241, MPI_COMM_WORLD, &rreq));
		OK(MPI_Issend(a, lens[k], MPI_BYTE, rank, 241, MPI_COMM_WORLD, &req));
		OK(MPI_Cancel(&req));
		OK(MPI_Wait(&req, &st));
		CHECK(cancelled(&st) == 0, "a received send to oneself reads as cancelled");
		OK(MPI_Wait(&rreq, &st));
		expect_status(&st, rank, 241, lens[k]);
		expect_data(b, (size_t)lens[k], rank, 40 + k);
	}
	/* Small, standard: copied and complete at once, withdrawn all the same. */
	fill(a, CANCEL_SMALL, rank, 42);
	OK(MPI_Isend(a, CANCEL_SMALL, MPI_BYTE, rank, 242, MPI_COMM_WORLD, &req));
	OK(MPI_Cancel(&req));
	OK(MPI_Wait(&req, &st));
	CHECK(cancelled(&st) == 1, "a copied send to oneself not cancelled");
	OK(MPI_Iprobe(rank, 242, MPI_COMM_WORLD, &flag, &st));
	CHECK(flag == 0, "a cancelled copied send to oneself is still there");
	/* Received first: too late. */
	OK(MPI_Isend(a, CANCEL_SMALL, MPI_BYTE, rank, 243, MPI_COMM_WORLD, &req));
	OK(MPI_Recv(b, CANCEL_SMALL, MPI_BYTE, rank, 243, MPI_COMM_WORLD, &st));
	expect_data(b, CANCEL_SMALL, rank, 42);
	OK(MPI_Cancel(&req));
	OK(MPI_Wait(&req, &st));
	CHECK(cancelled(&st) == 0, "a received copied send to oneself reads as cancelled");
}

static void test_cancel_send(void)
{
	static unsigned char a[CANCEL_BIG], b[CANCEL_BIG];
	MPI_Request req = MPI_REQUEST_NULL;
	int k;

	/* Misuse: no request. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Cancel(NULL) == MPI_ERR_REQUEST, "MPI_Cancel(NULL) accepted");
	CHECK(MPI_Cancel(&req) == MPI_ERR_REQUEST, "MPI_Cancel(MPI_REQUEST_NULL) accepted");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	cancel_self(a, b);
	if (size < 2)
		return;
	for (k = SEND_RNDV; k <= SEND_FREED; k++)
		cancel_unexpected((enum send_kind)k, a, b);
	cancel_matched(0, CANCEL_BIG, a, b);
	cancel_matched(1, CANCEL_BIG, a, b);
	cancel_matched(1, CANCEL_SMALL, a, b);
	cancel_matched(0, CANCEL_SMALL, a, b);
}

static void test_zero(void)
{
	MPI_Status st;
	MPI_Request req;
	int n = -1, flag = 0, peer = rank ^ 1;

	/* MPI_PROC_NULL: complete at once, empty. */
	OK(MPI_Send(NULL, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
	OK(MPI_Recv(NULL, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status");
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 0, "PROC_NULL count %d", n);
	OK(MPI_Irecv(NULL, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
	OK(MPI_Test(&req, &flag, &st));
	CHECK(flag && req == MPI_REQUEST_NULL, "PROC_NULL Irecv done at once");
	OK(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "probe of PROC_NULL");
	if (peer >= size)
		return;
	/* Zero bytes with a NULL buffer, every mode. */
	OK(MPI_Irecv(NULL, 0, MPI_INT, peer, 2, MPI_COMM_WORLD, &req));
	OK(MPI_Send(NULL, 0, MPI_INT, peer, 2, MPI_COMM_WORLD));
	OK(MPI_Wait(&req, &st));
	expect_status(&st, peer, 2, 0);
	OK(MPI_Irecv(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req));
	OK(MPI_Ssend(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
	OK(MPI_Wait(&req, &st));
	expect_status(&st, peer, 3, 0);
}

static void test_probe(void)
{
	int lens[] = { 16, 100000 }, k, n;
	MPI_Status st;
	int flag;

	if (size < 2 || rank >= 2)
		return;
	for (k = 0; k < 2; k++) {
		if (rank == 0) {
			unsigned char *b = malloc((size_t)lens[k]);

			fill(b, (size_t)lens[k], 0, k);
			OK(MPI_Send(b, lens[k], MPI_BYTE, 1, 40 + k, MPI_COMM_WORLD));
			free(b);
		} else {
			unsigned char *b;

			OK(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			expect_status(&st, 0, 40 + k, lens[k]);
			OK(MPI_Iprobe(MPI_ANY_SOURCE, 40 + k, MPI_COMM_WORLD, &flag, &st));
			CHECK(flag, "Iprobe after Probe found nothing");
			OK(MPI_Get_count(&st, MPI_BYTE, &n));
			OK(MPI_Get_elements(&st, MPI_BYTE, &n));
			CHECK(n == lens[k], "elements %d", n);
			OK(MPI_Get_count(&st, MPI_INT, &n));
			CHECK(n == lens[k] / 4, "count in ints %d", n);
			b = malloc((size_t)lens[k]);
			OK(MPI_Recv(b, lens[k], MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
				    &st));
			expect_data(b, (size_t)lens[k], 0, k);
			free(b);
			OK(MPI_Iprobe(0, 40 + k, MPI_COMM_WORLD, &flag, &st));
			CHECK(!flag, "the message is still there after its receive");
		}
	}
	/* A count in a type that does not divide the message. */
	if (rank == 0) {
		char c[3] = { 1, 2, 3 };

		OK(MPI_Send(c, 3, MPI_CHAR, 1, 50, MPI_COMM_WORLD));
	} else {
		char c[3];

		OK(MPI_Recv(c, 3, MPI_CHAR, 0, 50, MPI_COMM_WORLD, &st));
		OK(MPI_Get_count(&st, MPI_INT, &n));
		CHECK(n == MPI_UNDEFINED, "3 bytes as ints: %d", n);
	}
}

static void test_sendrecv(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, v, w;
	static unsigned char s[50000], r[50000];
	MPI_Status st;

	v = rank;
	OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 60, &w, 1, MPI_INT, prev, 60, MPI_COMM_WORLD, &st));
	CHECK(w == prev, "sendrecv got %d", w);
	expect_status(&st, prev, 60, 4);
	fill(s, sizeof(s), rank, 1);
	OK(MPI_Sendrecv(s, sizeof(s), MPI_BYTE, next, 61, r, sizeof(r), MPI_BYTE, prev, 61,
			MPI_COMM_WORLD, &st));
	expect_data(r, sizeof(r), prev, 1);
	fill(s, sizeof(s), rank, 2);
	OK(MPI_Sendrecv_replace(s, sizeof(s), MPI_BYTE, next, 62, prev, 62, MPI_COMM_WORLD, &st));
	expect_data(s, sizeof(s), prev, 2);
	expect_status(&st, prev, 62, (int)sizeof(s));
	v = rank;
	/* (Not MPI_ANY_TAG: ranks that are done already send to rank 0.) */
	OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, next, 63, MPI_ANY_SOURCE, 63, MPI_COMM_WORLD,
				&st));
	CHECK(v == prev && st.MPI_SOURCE == prev, "replace got %d from %d", v, st.MPI_SOURCE);
}

/* Messages to oneself, small and large, on MPI_COMM_WORLD and MPI_COMM_SELF. */
static void test_self(void)
{
	static unsigned char s[200000], r[200000];
	MPI_Request req;
	MPI_Status st;
	int n;

	fill(s, 100, rank, 1);
	OK(MPI_Send(s, 100, MPI_BYTE, rank, 1, MPI_COMM_WORLD));
	OK(MPI_Recv(r, sizeof(r), MPI_BYTE, rank, 1, MPI_COMM_WORLD, &st));
	expect_status(&st, rank, 1, 100);
	expect_data(r, 100, rank, 1);
	fill(s, sizeof(s), rank, 2);
	OK(MPI_Isend(s, sizeof(s), MPI_BYTE, 0, 2, MPI_COMM_SELF, &req));
	OK(MPI_Recv(r, sizeof(r), MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_SELF, &st));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	expect_status(&st, 0, 2, (int)sizeof(s));
	expect_data(r, sizeof(r), rank, 2);
	OK(MPI_Comm_size(MPI_COMM_SELF, &n));
	CHECK(n == 1, "MPI_COMM_SELF has %d processes", n);
	OK(MPI_Comm_rank(MPI_COMM_SELF, &n));
	CHECK(n == 0, "rank in MPI_COMM_SELF is %d", n);
	/* Posted first, then sent. */
	OK(MPI_Irecv(r, 10, MPI_BYTE, 0, 3, MPI_COMM_SELF, &req));
	fill(s, 10, rank, 3);
	OK(MPI_Ssend(s, 10, MPI_BYTE, 0, 3, MPI_COMM_SELF));
	OK(MPI_Wait(&req, &st));
	expect_data(r, 10, rank, 3);
}

/* A program may use BIP and MPI together: BIP's own tags are untouched. */
static void test_mix(void)
{
	int peer = rank ^ 1, i, v[4], w = -1, node = -1;
	static unsigned char big[70000];

	if (peer >= size)
		return;
	CHECK(bip_mynode == rank && bip_numnodes == size, "BIP node %d of %d", bip_mynode,
	      bip_numnodes);
	for (i = 0; i < 10; i++) {
		if (rank < peer) {
			v[0] = i;
			CHECK(bip_tsend(peer, 5, v, 1) >= 0, "bip_tsend: %s", bip_error_string());
			OK(MPI_Send(&i, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
			fill(big, sizeof(big), rank, i);
			OK(MPI_Send(big, sizeof(big), MPI_BYTE, peer, 6, MPI_COMM_WORLD));
		} else {
			OK(MPI_Recv(&w, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(w == i, "MPI got %d, expected %d", w, i);
			CHECK(bip_trecvx(5, v, 4, &node) == 1, "bip_trecv: %s", bip_error_string());
			CHECK(v[0] == i && node == peer, "BIP got %d from %d", v[0], node);
			OK(MPI_Recv(big, sizeof(big), MPI_BYTE, peer, 6, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
			expect_data(big, sizeof(big), peer, i);
		}
	}
}

/*
 * More rendezvous receives posted at once than any NIC table holds (the
 * lanai board has 512 entries): rank 0 sends them all, then a short
 * message on another tag, which rank 1 receives first, so that every
 * announcement is waiting when rank 1 posts its receives one after the
 * other.  Every message lands in its own buffer, in order.
 */
static void test_manylong(void)
{
	enum { COUNT = 1000, LEN = 2048 };
	static unsigned char buf[COUNT][LEN];
	static MPI_Request reqs[COUNT];
	int i, last = 1;

	if (rank > 1)
		return;
	if (rank == 1) {
		OK(MPI_Recv(&last, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (i = 0; i < COUNT; i++)
			OK(MPI_Irecv(buf[i], LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &reqs[i]));
		OK(MPI_Waitall(COUNT, reqs, MPI_STATUSES_IGNORE));
		for (i = 0; i < COUNT; i++)
			expect_data(buf[i], LEN, 0, i);
		return;
	}
	for (i = 0; i < COUNT; i++) {
		fill(buf[i], LEN, 0, i);
		OK(MPI_Isend(buf[i], LEN, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &reqs[i]));
	}
	OK(MPI_Send(&last, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
	OK(MPI_Waitall(COUNT, reqs, MPI_STATUSES_IGNORE));
}

/*
 * Unexpected messages from several sources, tags and communicators, of
 * every protocol (eager, synchronous eager, rendezvous, to oneself), queued
 * in an order rank 0 fixes, then taken by receives and probes by source,
 * by tag and by wildcards: each must get the earliest message it matches,
 * per source and, for MPI_ANY_SOURCE, in arrival order across sources.
 * Then receives from one source and from any source, posted before their
 * messages, must be matched in posting order.
 */
#define UQ_N 72
#define UQ_BIG 3000 /* a rendezvous over every driver */
#define UQ_TAG_GO 32001
#define UQ_TAG_SENT 32002

struct uq_msg {
	int src, tag, len, other, taken;
};

static void uq_schedule(struct uq_msg *m, int k)
{
	m->src = (k * 5 + k / 7) % size;
	m->tag = (k / 2 + k % 3) % 3;
	m->len = k % 5 == 4 ? UQ_BIG : 4 + k;
	m->other = k % 7 == 3; /* on the duplicate communicator */
	m->taken = 0;
}

/* The earliest message not yet taken that (comm, src, tag) matches, or -1. */
static int uq_expected(const struct uq_msg *m, int other, int src, int tag)
{
	int k;

	for (k = 0; k < UQ_N; k++)
		if (!m[k].taken && m[k].other == other &&
		    (src == MPI_ANY_SOURCE || m[k].src == src) &&
		    (tag == MPI_ANY_TAG || m[k].tag == tag))
			return k;
	return -1;
}

static void uq_queue(struct uq_msg *m, MPI_Comm other, MPI_Request *reqs, unsigned char **bufs)
{
	int k, x = 0, nreq = 0;

	for (k = 0; k < UQ_N; k++) {
		MPI_Comm c = m[k].other ? other : MPI_COMM_WORLD;

		if (m[k].src == rank && (rank == 0 || (k % 4 != 1 && m[k].len != UQ_BIG))) {
			bufs[k] = malloc((size_t)m[k].len);
			fill(bufs[k], (size_t)m[k].len, m[k].src, k);
			if (rank != 0)
				OK(MPI_Recv(&x, 1, MPI_INT, 0, UQ_TAG_GO, sync_comm,
					    MPI_STATUS_IGNORE));
			if (rank == 0 || k % 2)
				OK(MPI_Isend(bufs[k], m[k].len, MPI_BYTE, 0, m[k].tag, c,
					     &reqs[nreq++]));
			else
				OK(MPI_Send(bufs[k], m[k].len, MPI_BYTE, 0, m[k].tag, c));
			if (rank != 0)
				OK(MPI_Send(&x, 1, MPI_INT, 0, UQ_TAG_SENT, sync_comm));
		} else if (m[k].src == rank) {
			/* Synchronous or rendezvous: completes at the receive. */
			bufs[k] = malloc((size_t)m[k].len);
			fill(bufs[k], (size_t)m[k].len, m[k].src, k);
			OK(MPI_Recv(&x, 1, MPI_INT, 0, UQ_TAG_GO, sync_comm, MPI_STATUS_IGNORE));
			OK(MPI_Issend(bufs[k], m[k].len, MPI_BYTE, 0, m[k].tag, c, &reqs[nreq++]));
			OK(MPI_Send(&x, 1, MPI_INT, 0, UQ_TAG_SENT, sync_comm));
		}
		/* Rank 0 lets the next message go only once this one is here:
		 * the arrival order is the schedule's. */
		if (rank == 0 && m[k].src != 0) {
			OK(MPI_Send(&x, 1, MPI_INT, m[k].src, UQ_TAG_GO, sync_comm));
			OK(MPI_Recv(&x, 1, MPI_INT, m[k].src, UQ_TAG_SENT, sync_comm,
				    MPI_STATUS_IGNORE));
		}
	}
	/* Rank 0's own complete once it has taken them. */
	if (rank != 0)
		OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
}

static void uq_take(struct uq_msg *m, MPI_Comm other)
{
	static unsigned char b[UQ_BIG];
	int step, left = UQ_N, k, flag, src, tag, oth;
	MPI_Status st;

	for (step = 0; left; step++) {
		oth = step % 5 == 2;
		src = step % 4 == 0 || step % 4 == 3 ? MPI_ANY_SOURCE : step % size;
		tag = step % 3 == 0 ? MPI_ANY_TAG : step % 3;
		k = uq_expected(m, oth, src, tag);
		if (k < 0) {
			OK(MPI_Iprobe(src, tag, oth ? other : MPI_COMM_WORLD, &flag, &st));
			CHECK(!flag, "step %d: Iprobe(%d, %d) found a message from %d tag %d, "
			      "none expected", step, src, tag, st.MPI_SOURCE, st.MPI_TAG);
			continue;
		}
		if (step % 2) {
			OK(MPI_Iprobe(src, tag, oth ? other : MPI_COMM_WORLD, &flag, &st));
			CHECK(flag, "step %d: Iprobe(%d, %d) found nothing, expected message %d",
			      step, src, tag, k);
			expect_status(&st, m[k].src, m[k].tag, m[k].len);
		}
		memset(b, 0, sizeof(b));
		OK(MPI_Recv(b, UQ_BIG, MPI_BYTE, src, tag, oth ? other : MPI_COMM_WORLD, &st));
		CHECK(st.MPI_SOURCE == m[k].src && st.MPI_TAG == m[k].tag,
		      "step %d: Recv(%d, %d%s) got source %d tag %d, expected message %d "
		      "(source %d tag %d)", step, src, tag, oth ? ", dup" : "", st.MPI_SOURCE,
		      st.MPI_TAG, k, m[k].src, m[k].tag);
		expect_status(&st, m[k].src, m[k].tag, m[k].len);
		expect_data(b, (size_t)m[k].len, m[k].src, k);
		m[k].taken = 1;
		left--;
	}
	OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag, "a message from %d tag %d is left", st.MPI_SOURCE, st.MPI_TAG);
}

/* Posted receives: from any source and from rank 1, matched in posting
 * order whichever list they wait in. */
static void uq_posted(void)
{
	int v[4] = { -1, -1, -1, -1 }, x = 0, i;
	MPI_Request r[4];
	MPI_Status st;

	if (rank == 0) {
		OK(MPI_Irecv(&v[0], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]));
		OK(MPI_Irecv(&v[1], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[1]));
		OK(MPI_Irecv(&v[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
			     &r[2]));
		OK(MPI_Irecv(&v[3], 1, MPI_INT, 2, 6, MPI_COMM_WORLD, &r[3]));
		OK(MPI_Send(&x, 1, MPI_INT, 1, UQ_TAG_GO, sync_comm));
		/* Rank 1's three: the first to r[0], then r[1] (posted before
		 * r[2]), then r[2]. */
		for (i = 0; i < 3; i++) {
			OK(MPI_Wait(&r[i], &st));
			CHECK(v[i] == 100 + i && st.MPI_SOURCE == 1,
			      "posted receive %d got %d from %d, expected %d from 1", i, v[i],
			      st.MPI_SOURCE, 100 + i);
		}
		OK(MPI_Send(&x, 1, MPI_INT, 2, UQ_TAG_GO, sync_comm));
		OK(MPI_Wait(&r[3], &st));
		CHECK(v[3] == 200 && st.MPI_SOURCE == 2, "posted receive 3 got %d from %d", v[3],
		      st.MPI_SOURCE);
	} else if (rank <= 2) {
		OK(MPI_Recv(&x, 1, MPI_INT, 0, UQ_TAG_GO, sync_comm, MPI_STATUS_IGNORE));
		for (i = 0; i < (rank == 1 ? 3 : 1); i++) {
			x = rank * 100 + i;
			OK(MPI_Send(&x, 1, MPI_INT, 0, rank == 1 ? 5 : 6, MPI_COMM_WORLD));
		}
	}
}

static void test_unexpected(void)
{
	struct uq_msg m[UQ_N];
	MPI_Request reqs[UQ_N];
	unsigned char *bufs[UQ_N] = { NULL };
	MPI_Comm other;
	int k, x = 0;

	OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
	for (k = 0; k < UQ_N; k++)
		uq_schedule(&m[k], k);
	uq_queue(m, other, reqs, bufs);
	if (rank == 0) {
		uq_take(m, other);
		/* Its sends to itself, all taken now, complete. */
		for (k = 0; k < UQ_N; k++)
			x += m[k].src == 0;
		OK(MPI_Waitall(x, reqs, MPI_STATUSES_IGNORE));
	}
	for (k = 0; k < UQ_N; k++)
		free(bufs[k]);
	sync_all();
	uq_posted();
	OK(MPI_Comm_free(&other));
}

/* Matched probe: the probed message is the one received, whatever comes
 * after it; no other receive or probe sees it meanwhile. */
static void test_mprobe(void)
{
	static unsigned char a[CANCEL_BIG], b[CANCEL_BIG];
	const int lens[] = { CANCEL_SMALL, CANCEL_BIG };
	MPI_Message msg = MPI_MESSAGE_NULL;
	MPI_Request req;
	MPI_Status st;
	int k, flag = -1;

	/* A call that returns one status leaves its MPI_ERROR as it was. */
	{
		MPI_Request s1;

		st.MPI_ERROR = -77;
		OK(MPI_Isend(a, 4, MPI_BYTE, rank, 71, MPI_COMM_WORLD, &s1));
		OK(MPI_Probe(rank, 71, MPI_COMM_WORLD, &st));
		CHECK(st.MPI_ERROR == -77, "MPI_Probe set MPI_ERROR to %d", st.MPI_ERROR);
		OK(MPI_Mprobe(rank, 71, MPI_COMM_WORLD, &msg, &st));
		CHECK(st.MPI_ERROR == -77, "MPI_Mprobe set MPI_ERROR to %d", st.MPI_ERROR);
		OK(MPI_Mrecv(b, 4, MPI_BYTE, &msg, &st));
		CHECK(st.MPI_ERROR == -77, "MPI_Mrecv set MPI_ERROR to %d", st.MPI_ERROR);
		OK(MPI_Wait(&s1, &st));
		CHECK(st.MPI_ERROR == -77, "MPI_Wait set MPI_ERROR to %d", st.MPI_ERROR);
		OK(MPI_Sendrecv(a, 4, MPI_BYTE, rank, 72, b, 4, MPI_BYTE, rank, 72, MPI_COMM_WORLD,
				&st));
		CHECK(st.MPI_ERROR == -77, "MPI_Sendrecv set MPI_ERROR to %d", st.MPI_ERROR);
	}

	/* MPI_PROC_NULL: the no-process message, received as empty. */
	OK(MPI_Mprobe(MPI_PROC_NULL, 7, MPI_COMM_WORLD, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "Mprobe PROC_NULL");
	OK(MPI_Mrecv(b, 4, MPI_BYTE, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL &&
	      st.MPI_TAG == MPI_ANY_TAG, "Mrecv of MPI_MESSAGE_NO_PROC");
	OK(MPI_Improbe(MPI_PROC_NULL, 7, MPI_COMM_WORLD, &flag, &msg, &st));
	CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe PROC_NULL");
	OK(MPI_Imrecv(b, 4, MPI_BYTE, &msg, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv of MPI_MESSAGE_NO_PROC");

	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Mrecv(b, 1, MPI_BYTE, &msg, &st) == MPI_ERR_REQUEST, "Mrecv of MESSAGE_NULL");
	CHECK(MPI_Imrecv(b, 1, MPI_BYTE, NULL, &req) == MPI_ERR_REQUEST, "Imrecv of NULL");
	CHECK(MPI_Mprobe(0, 1, MPI_COMM_WORLD, NULL, &st) == MPI_ERR_ARG, "Mprobe NULL message");
	CHECK(MPI_Improbe(size, 1, MPI_COMM_WORLD, &flag, &msg, &st) == MPI_ERR_RANK,
	      "Improbe of rank %d", size);
	CHECK(MPI_Improbe(0, -5, MPI_COMM_WORLD, &flag, &msg, &st) == MPI_ERR_TAG, "tag -5");
	CHECK(MPI_Improbe(0, 1, MPI_COMM_NULL, &flag, &msg, &st) == MPI_ERR_COMM, "COMM_NULL");
	OK(MPI_Improbe(0, 99, MPI_COMM_WORLD, &flag, &msg, &st));
	CHECK(flag == 0 && msg == MPI_MESSAGE_NULL, "Improbe found a message that was not sent");

	/* To oneself, small and large: the probed one, then the next. */
	for (k = 0; k < 2; k++) {
		MPI_Request s1, s2;

		fill(a, (size_t)lens[k], rank, 60 + k);
		OK(MPI_Isend(a, lens[k], MPI_BYTE, rank, 70, MPI_COMM_WORLD, &s1));
		OK(MPI_Isend(a, 8, MPI_BYTE, rank, 70, MPI_COMM_WORLD, &s2));
		OK(MPI_Mprobe(rank, 70, MPI_COMM_WORLD, &msg, &st));
		expect_status(&st, rank, 70, lens[k]);
		/* The claimed message is nobody else's now. */
		OK(MPI_Iprobe(rank, 70, MPI_COMM_WORLD, &flag, &st));
		CHECK(flag == 1, "the second message is not there");
		expect_status(&st, rank, 70, 8);
		OK(MPI_Recv(b, 8, MPI_BYTE, rank, 70, MPI_COMM_WORLD, &st));
		expect_status(&st, rank, 70, 8);
		memset(b, 0, (size_t)lens[k]);
		OK(MPI_Mrecv(b, lens[k], MPI_BYTE, &msg, &st));
		expect_status(&st, rank, 70, lens[k]);
		expect_data(b, (size_t)lens[k], rank, 60 + k);
		OK(MPI_Waitall(1, &s1, MPI_STATUSES_IGNORE));
		OK(MPI_Wait(&s2, MPI_STATUS_IGNORE));
	}
	if (size < 2)
		goto out;
	/* From rank 0 to rank 1, eager and rendezvous; a cancel of a probed
	 * send fails, and truncation is reported by the receive. */
	for (k = 0; k < 2; k++) {
		if (rank == 0) {
			fill(a, (size_t)lens[k], 0, 80 + k);
			OK(MPI_Isend(a, lens[k], MPI_BYTE, 1, 81, MPI_COMM_WORLD, &req));
		}
		if (rank == 1) {
			do
				OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
					       &st));
			while (!flag);
			expect_status(&st, 0, 81, lens[k]);
		}
		sync_all();
		if (rank == 0) {
			OK(MPI_Cancel(&req));
			OK(MPI_Wait(&req, &st));
			CHECK(cancelled(&st) == 0, "a probed send of %d bytes reads as cancelled",
			      lens[k]);
			OK(MPI_Send(a, 4, MPI_BYTE, 1, 82, MPI_COMM_WORLD));
		}
		if (rank == 1) {
			OK(MPI_Imrecv(b, lens[k], MPI_BYTE, &msg, &req));
			CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left the message handle");
			OK(MPI_Wait(&req, &st));
			expect_status(&st, 0, 81, lens[k]);
			expect_data(b, (size_t)lens[k], 0, 80 + k);
			OK(MPI_Mprobe(0, 82, MPI_COMM_WORLD, &msg, &st));
			CHECK(MPI_Mrecv(b, 2, MPI_BYTE, &msg, &st) == MPI_ERR_TRUNCATE,
			      "4 bytes into 2 not truncated");
			CHECK(msg == MPI_MESSAGE_NULL, "message handle after a truncated receive");
		}
		sync_all();
	}
out:
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* The large-count forms: the same messages through MPI_Count counts, and
 * more than INT_MAX elements of an empty type. */
static void test_large(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, i;
	int out[10], in[10], bsize_probe;
	MPI_Count n = -1, big = (MPI_Count)INT_MAX + 1000;
	MPI_Datatype empty;
	MPI_Request reqs[2];
	MPI_Message msg;
	MPI_Status st;
	void *battach;
	MPI_Count bsize;

	for (i = 0; i < 10; i++)
		out[i] = rank * 100 + i;
	OK(MPI_Irecv_c(in, 10, MPI_INT, prev, 1, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Send_c(out, 10, MPI_INT, next, 1, MPI_COMM_WORLD));
	OK(MPI_Wait(&reqs[0], &st));
	OK(MPI_Get_count_c(&st, MPI_INT, &n));
	CHECK(n == 10 && in[9] == prev * 100 + 9, "count %lld, last %d", (long long)n, in[9]);
	OK(MPI_Sendrecv_c(out, 10, MPI_INT, next, 2, in, 10, MPI_INT, prev, 2, MPI_COMM_WORLD,
			  &st));
	CHECK(in[3] == prev * 100 + 3, "sendrecv_c got %d", in[3]);
	OK(MPI_Send_init_c(out, 10, MPI_INT, next, 3, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Recv_init_c(in, 10, MPI_INT, prev, 3, MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Startall(2, reqs));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	CHECK(in[5] == prev * 100 + 5, "persistent _c got %d", in[5]);
	OK(MPI_Request_free(&reqs[0]));
	OK(MPI_Request_free(&reqs[1]));
	/* Buffered, with the buffer's size as an MPI_Count. */
	OK(MPI_Pack_size(10, MPI_INT, MPI_COMM_WORLD, &bsize_probe));
	battach = malloc((size_t)bsize_probe + MPI_BSEND_OVERHEAD);
	OK(MPI_Buffer_attach_c(battach, (MPI_Count)bsize_probe + MPI_BSEND_OVERHEAD));
	OK(MPI_Bsend_c(out, 10, MPI_INT, next, 4, MPI_COMM_WORLD));
	OK(MPI_Mprobe(prev, 4, MPI_COMM_WORLD, &msg, &st));
	OK(MPI_Mrecv_c(in, 10, MPI_INT, &msg, &st));
	CHECK(in[0] == prev * 100, "bsend_c/mrecv_c got %d", in[0]);
	OK(MPI_Buffer_detach_c(&battach, &bsize));
	CHECK(bsize == (MPI_Count)bsize_probe + MPI_BSEND_OVERHEAD, "detached %lld",
	      (long long)bsize);
	free(battach);
	/* More elements than an int counts: an empty type moves nothing. */
	OK(MPI_Type_contiguous(0, MPI_INT, &empty));
	OK(MPI_Type_commit(&empty));
	OK(MPI_Irecv_c(in, big, empty, prev, 5, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Isend_c(out, big, empty, next, 5, MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	OK(MPI_Type_free(&empty));
	/* A status that counts past an int. */
	OK(MPI_Status_set_elements_x(&st, MPI_INT, 7));
	OK(MPI_Get_elements_x(&st, MPI_INT, &n));
	CHECK(n == 7, "elements %lld", (long long)n);
	OK(MPI_Status_set_elements_c(&st, MPI_BYTE, big));
	OK(MPI_Get_elements_c(&st, MPI_BYTE, &n));
	CHECK(n == big, "elements %lld", (long long)n);
	/* Misuse. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Status_set_elements_x(&st, MPI_INT, -1) == MPI_ERR_COUNT, "elements -1");
	CHECK(MPI_Send_c(out, -1, MPI_INT, next, 1, MPI_COMM_WORLD) == MPI_ERR_COUNT, "count -1");
	CHECK(MPI_Recv_c(in, 10, MPI_INT, size, 1, MPI_COMM_WORLD, &st) == MPI_ERR_RANK,
	      "rank %d", size);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

struct test {
	const char *name;
	void (*fn)(void);
	int min;
};

static const struct test tests[] = {
	{ "ring", test_ring, 1 },
	{ "order", test_order, 2 },
	{ "ordertag", test_order_tag, 2 },
	{ "window", test_window, 2 },
	{ "persistent", test_persistent, 2 },
	{ "ssend", test_ssend, 2 },
	{ "bsend", test_bsend, 2 },
	{ "cancel", test_cancel, 1 },
	{ "cancelsend", test_cancel_send, 1 },
	{ "mprobe", test_mprobe, 1 },
	{ "large", test_large, 1 },
	{ "zero", test_zero, 1 },
	{ "probe", test_probe, 2 },
	{ "sendrecv", test_sendrecv, 1 },
	{ "self", test_self, 1 },
	{ "mix", test_mix, 2 },
	{ "manylong", test_manylong, 2 },
	{ "unexpected", test_unexpected, 3 },
};

/* BIP started by the program before MPI, and still usable after it. */
static int bip_first(int argc, char **argv)
{
	int v[1], node = -1, peer, x;
	MPI_Status st;

	bip_init();
	peer = bip_mynode ^ 1;
	if (peer < bip_numnodes) {
		v[0] = 100 + bip_mynode;
		CHECK(bip_tsend(peer, 3, v, 1) >= 0, "bip_tsend before MPI: %s", bip_error_string());
		CHECK(bip_trecvx(3, v, 1, &node) == 1 && v[0] == 100 + peer && node == peer,
		      "bip_trecv before MPI");
	}
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	CHECK(rank == bip_mynode && size == bip_numnodes, "MPI rank %d of %d, BIP node %d of %d",
	      rank, size, bip_mynode, bip_numnodes);
	if (peer < size) {
		x = rank;
		OK(MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD, &st));
		CHECK(x == peer, "MPI got %d", x);
	}
	OK(MPI_Finalize());
	/* BIP belongs to the program: MPI_Finalize left it running. */
	if (peer < bip_numnodes) {
		v[0] = 200 + bip_mynode;
		CHECK(bip_tsend(peer, 4, v, 1) >= 0, "bip_tsend after MPI: %s", bip_error_string());
		CHECK(bip_trecv(4, v, 1) == 1 && v[0] == 200 + peer, "bip_trecv after MPI");
	}
	CHECK(bip_finalize() == 0, "bip_finalize");
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && strcmp(argv[1], "bipfirst") == 0)
		return bip_first(argc, argv);
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_rank = rank;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &sync_comm));
	if (argc != 2) {
		fprintf(stderr, "usage: p2p TEST\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(argv[1], tests[i].name))
			continue;
		if (size < tests[i].min) {
			printf("p2p %s needs %d processes\n", argv[1], tests[i].min);
			MPI_Finalize();
			return 77;
		}
		tests[i].fn();
		sync_all();
		OK(MPI_Comm_free(&sync_comm));
		OK(MPI_Finalize());
		return 0;
	}
	fprintf(stderr, "p2p: no test %s\n", argv[1]);
	return 2;
}
