/* SPDX-License-Identifier: MIT */
/*
 * Ports, MPI_Comm_join and MPI_Comm_disconnect inside one job (MPI-3.1
 * chapter 10): dpm_ports TEST, under bipload.
 *
 *   halves     the job split in two halves; the first opens a port, the
 *              second connects; point-to-point, bcast, allreduce across,
 *              MPI_Intercomm_merge, disconnect (2 or more processes)
 *   cycles     the same five times on one port, a new port each time too
 *   oddeven    the even ranks accept on rank 0's port, the odd ones connect
 *              (interleaved groups); remote ranks, allreduce, merge
 *   many       rank 0 opens a port for each other rank, which connects to
 *              its own; rank 0 accepts them in the reverse order, so that
 *              connects wait on several ports at once
 *   queue      every other rank connects to one port of rank 0, which
 *              accepts them one after the other, once all have asked
 *   closed     a connect to a port that was closed: MPI_ERR_PORT, at once
 *   names      malformed port names, another job's, a node out of range,
 *              closing a port twice or someone else's: MPI_ERR_PORT
 *   timeout    a connect to a node that has never opened a port: MPI_ERR_PORT
 *              after the time-out (info key "timeout")
 *   gaveup     a connect that timed out on an open port (nobody accepted)
 *              stays queued there; the next accept passes over it and
 *              takes the connect that came after
 *   finalize   rank 0 ends with its port open while rank 1 connects to it:
 *              the connect fails with MPI_ERR_PORT (refused at MPI_Finalize,
 *              or timed out if it came after)
 *   threads    (MPI_THREAD_MULTIPLE) rank 0 accepts in a thread of its own
 *              while its main thread exchanges messages with rank 2; only
 *              then does rank 1 connect (3 or more processes)
 *   join       MPI_Comm_join over a TCP connection on the loopback between
 *              ranks 0 and 1; a closed socket and a bad fd fail
 *   disconnect MPI_Comm_disconnect completes an Isend and an Irecv still
 *              pending on the communicator
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../mpicheck.h"

static int rank, size;

/* A call that must fail with class cls. */
#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int ex_rc_ = (call), ex_cls_ = MPI_SUCCESS;                                  \
		if (ex_rc_ != MPI_SUCCESS)                                                   \
			MPI_Error_class(ex_rc_, &ex_cls_);                                   \
		CHECK(ex_cls_ == (cls), "class %d, want %d", ex_cls_, (cls));                \
	} while (0)

/* Rank 0 of the first half (world ranks below size / 2) opens a port and
 * hands it to rank 0 of the second; both halves are made of consecutive
 * world ranks. */
static void across(MPI_Comm half, int first, const char *port, MPI_Comm *ic)
{
	char name[MPI_MAX_PORT_NAME];
	int lo = size / 2;

	if (first) {
		OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, ic));
	} else {
		if (rank == lo)
			OK(MPI_Recv(name, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
		OK(MPI_Comm_connect(rank == lo ? name : NULL, MPI_INFO_NULL, 0, half, ic));
	}
}

/* What an inter-communicator between the two halves must do. */
static void check_intercomm(MPI_Comm ic, MPI_Comm half, int first)
{
	int lo = size / 2, rsize, flag, hrank, hsize, v, sum, want, i;
	MPI_Comm merged;
	MPI_Group rg, wg;
	int r0 = 0, w0 = -1;

	OK(MPI_Comm_rank(half, &hrank));
	OK(MPI_Comm_size(half, &hsize));
	OK(MPI_Comm_test_inter(ic, &flag));
	CHECK(flag, "not an inter-communicator");
	OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK(rsize == (first ? size - lo : lo), "remote size %d", rsize);
	OK(MPI_Comm_rank(ic, &v));
	CHECK(v == hrank, "rank %d in the inter-communicator, %d in the half", v, hrank);
	/* The remote group's rank 0 is the other half's first world rank. */
	OK(MPI_Comm_remote_group(ic, &rg));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	OK(MPI_Group_translate_ranks(rg, 1, &r0, wg, &w0));
	CHECK(w0 == (first ? lo : 0), "remote rank 0 is world rank %d", w0);
	OK(MPI_Group_free(&rg));
	OK(MPI_Group_free(&wg));

	/* Point-to-point: rank i of each side with rank i of the other. */
	if (hrank < rsize && hrank < hsize) {
		int got = -1;

		v = rank * 1000 + 17;
		OK(MPI_Sendrecv(&v, 1, MPI_INT, hrank, 5, &got, 1, MPI_INT, hrank, 5, ic,
				MPI_STATUS_IGNORE));
		CHECK(got == ((first ? lo : 0) + hrank) * 1000 + 17, "got %d", got);
	}

	/* Bcast from the first side's rank 0 to the second side. */
	v = first ? 4242 : -1;
	if (first)
		OK(MPI_Bcast(&v, 1, MPI_INT, hrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
	else
		OK(MPI_Bcast(&v, 1, MPI_INT, 0, ic));
	CHECK(v == 4242, "bcast gave %d", v);

	/* Allreduce across: each side gets the sum of the other's world ranks. */
	OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
	want = 0;
	for (i = first ? lo : 0; i < (first ? size : lo); i++)
		want += i;
	CHECK(sum == want, "allreduce %d, want %d", sum, want);

	/* Merge: the first half below. */
	OK(MPI_Intercomm_merge(ic, !first, &merged));
	OK(MPI_Comm_rank(merged, &v));
	CHECK(v == rank, "merged rank %d", v);
	OK(MPI_Comm_size(merged, &v));
	CHECK(v == size, "merged size %d", v);
	OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
	CHECK(sum == size * (size - 1) / 2, "merged allreduce %d", sum);
	OK(MPI_Comm_free(&merged));
}

static void test_halves(int cycles, int new_port_each)
{
	int lo = size / 2, first = rank < lo, c;
	char port[MPI_MAX_PORT_NAME] = "";
	MPI_Comm half, ic;

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_split(MPI_COMM_WORLD, first, rank, &half));
	for (c = 0; c < cycles; c++) {
		if (rank == 0 && (c == 0 || new_port_each)) {
			OK(MPI_Open_port(MPI_INFO_NULL, port));
			CHECK(!strncmp(port, "bip:", 4) && strlen(port) < MPI_MAX_PORT_NAME,
			      "port name %s", port);
		}
		if (rank == 0)
			OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, lo, 7, MPI_COMM_WORLD));
		across(half, first, port, &ic);
		check_intercomm(ic, half, first);
		OK(MPI_Comm_disconnect(&ic));
		CHECK(ic == MPI_COMM_NULL, "disconnect left the handle");
		if (rank == 0 && (c == cycles - 1 || new_port_each))
			OK(MPI_Close_port(port));
	}
	OK(MPI_Comm_free(&half));
}

/* Interleaved groups: the even ranks accept, the odd ones connect. */
static void test_oddeven(void)
{
	int even = rank % 2 == 0, rsize, i, w, sum, want = 0, v, high;
	char port[MPI_MAX_PORT_NAME] = "";
	MPI_Comm group, ic, merged;
	MPI_Group rg, wg;

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_split(MPI_COMM_WORLD, even, rank, &group));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
	} else if (rank == 1) {
		OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	}
	if (even)
		OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, group, &ic));
	else
		OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, group, &ic));
	OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK(rsize == (even ? size / 2 : (size + 1) / 2), "remote size %d", rsize);
	OK(MPI_Comm_remote_group(ic, &rg));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	for (i = 0; i < rsize; i++) {
		OK(MPI_Group_translate_ranks(rg, 1, &i, wg, &w));
		CHECK(w == 2 * i + even, "remote rank %d is world rank %d", i, w);
		want += w;
	}
	OK(MPI_Group_free(&rg));
	OK(MPI_Group_free(&wg));
	OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
	CHECK(sum == want, "allreduce %d, want %d", sum, want);
	/* Merged with the odd ranks first. */
	high = even;
	OK(MPI_Intercomm_merge(ic, high, &merged));
	OK(MPI_Comm_rank(merged, &v));
	CHECK(v == (even ? size / 2 + rank / 2 : rank / 2), "merged rank %d", v);
	OK(MPI_Comm_free(&merged));
	OK(MPI_Comm_disconnect(&ic));
	if (rank == 0)
		OK(MPI_Close_port(port));
	OK(MPI_Comm_free(&group));
}

/* Rank 0 opens one port per other rank and accepts in reverse order. */
static void test_many(void)
{
	char port[MPI_MAX_PORT_NAME];
	char (*ports)[MPI_MAX_PORT_NAME];
	MPI_Comm ic;
	int i, v;

	CHECK(size >= 2, "needs 2 processes");
	if (rank == 0) {
		ports = malloc((size_t)size * sizeof(*ports));
		CHECK(ports != NULL, "no memory");
		for (i = 1; i < size; i++) {
			OK(MPI_Open_port(MPI_INFO_NULL, ports[i]));
			OK(MPI_Send(ports[i], MPI_MAX_PORT_NAME, MPI_CHAR, i, 7, MPI_COMM_WORLD));
		}
		for (i = 1; i < size; i++)
			CHECK(strcmp(ports[i], ports[i == 1 ? size - 1 : i - 1]) || size == 2,
			      "two ports share a name");
		for (i = size - 1; i >= 1; i--) {
			OK(MPI_Comm_accept(ports[i], MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
			OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
			CHECK(v == i, "port %d reached rank %d", i, v);
			OK(MPI_Send(&i, 1, MPI_INT, 0, 2, ic));
			OK(MPI_Comm_disconnect(&ic));
			OK(MPI_Close_port(ports[i]));
		}
		free(ports);
	} else {
		OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
		OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
		OK(MPI_Send(&rank, 1, MPI_INT, 0, 1, ic));
		OK(MPI_Recv(&v, 1, MPI_INT, 0, 2, ic, MPI_STATUS_IGNORE));
		CHECK(v == rank, "answer %d", v);
		OK(MPI_Comm_disconnect(&ic));
	}
}

/* Several connects queued on one port: each is served once. */
static void test_queue(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm ic;
	int i, v, *seen;

	CHECK(size >= 2, "needs 2 processes");
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		for (i = 1; i < size; i++)
			OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, i, 7, MPI_COMM_WORLD));
		/* Every connector says it is about to connect: the requests
		 * then pile up on the port before the first accept. */
		for (i = 1; i < size; i++)
			OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
		seen = calloc((size_t)size, sizeof(*seen));
		CHECK(seen != NULL, "no memory");
		for (i = 1; i < size; i++) {
			OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
			OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
			CHECK(v > 0 && v < size && !seen[v], "connector %d", v);
			if (v > 0 && v < size)
				seen[v] = 1;
			OK(MPI_Comm_disconnect(&ic));
		}
		free(seen);
		OK(MPI_Close_port(port));
	} else {
		OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
		OK(MPI_Send(&rank, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
		OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
		OK(MPI_Send(&rank, 1, MPI_INT, 0, 1, ic));
		OK(MPI_Comm_disconnect(&ic));
	}
}

static void test_closed(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm ic = MPI_COMM_NULL;
	MPI_Info info;

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Close_port(port));
		if (size > 1)
			OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size - 1, 7,
				    MPI_COMM_WORLD));
	}
	if (rank == size - 1) {
		if (size > 1)
			OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
		/* A long time-out: the refusal must come well before it. */
		OK(MPI_Info_create(&info));
		OK(MPI_Info_set(info, "timeout", "600"));
		/* At one process, its own closed port: refused just the same. */
		EXPECT(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic));
		CHECK(ic == MPI_COMM_NULL, "a communicator came out of a failed connect");
		OK(MPI_Info_free(&info));
	}
	/* Rank 0 makes progress until the refusal is out. */
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_names(void)
{
	char port[MPI_MAX_PORT_NAME], bad[MPI_MAX_PORT_NAME + 8];
	MPI_Comm ic = MPI_COMM_NULL;
	char *p;
	int i;
	static const char *const malformed[] = {
		"", "bip", "bip:", "tcp://host:4000", "bip::0:00112233445566778899aabbccddeeff",
		"bip:job:x:00112233445566778899aabbccddeeff", "bip:job:0:0011",
		"bip:job:0:00112233445566778899aabbccddeefg", "bip:jo-b:0:00112233445566778899aabbccddeeff",
		"bip:job:-1:00112233445566778899aabbccddeeff",
		"bip:job:0:00112233445566778899aabbccddeeff00",
	};

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	for (i = 0; i < (int)(sizeof(malformed) / sizeof(malformed[0])); i++) {
		EXPECT(MPI_ERR_PORT, MPI_Comm_connect(malformed[i], MPI_INFO_NULL, 0,
						      MPI_COMM_SELF, &ic));
		EXPECT(MPI_ERR_PORT, MPI_Close_port(malformed[i]));
		EXPECT(MPI_ERR_PORT, MPI_Comm_accept(malformed[i], MPI_INFO_NULL, 0,
						     MPI_COMM_SELF, &ic));
	}
	/* Not terminated within MPI_MAX_PORT_NAME. */
	memset(bad, 'a', sizeof(bad) - 1);
	bad[sizeof(bad) - 1] = '\0';
	memcpy(bad, "bip:", 4);
	EXPECT(MPI_ERR_PORT, MPI_Comm_connect(bad, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));

	OK(MPI_Open_port(MPI_INFO_NULL, port));
	/* Another job's port: the job id changed, the rest kept. */
	snprintf(bad, sizeof(bad), "bip:otherjob0:%s", strchr(port + 4, ':') + 1);
	EXPECT(MPI_ERR_PORT, MPI_Comm_connect(bad, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
	CHECK(ic == MPI_COMM_NULL, "a communicator came out of a failed connect");
	EXPECT(MPI_ERR_PORT, MPI_Close_port(bad));
	/* A node beyond the job. */
	p = strchr(port + 4, ':');
	snprintf(bad, sizeof(bad), "%.*s:%d:%s", (int)(p - port), port, size + 5,
		 strchr(p + 1, ':') + 1);
	EXPECT(MPI_ERR_PORT, MPI_Comm_connect(bad, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
	/* Accept on a port of this process whose capability is another. */
	strcpy(bad, port);
	bad[strlen(bad) - 1] = bad[strlen(bad) - 1] == '0' ? '1' : '0';
	EXPECT(MPI_ERR_PORT, MPI_Comm_accept(bad, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
	EXPECT(MPI_ERR_PORT, MPI_Close_port(bad));
	OK(MPI_Close_port(port));
	EXPECT(MPI_ERR_PORT, MPI_Close_port(port));
	/* Another rank's open port cannot be closed here. */
	if (size > 1) {
		if (rank == 0) {
			OK(MPI_Open_port(MPI_INFO_NULL, port));
			OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
		} else if (rank == 1) {
			OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
			EXPECT(MPI_ERR_PORT, MPI_Close_port(port));
			EXPECT(MPI_ERR_PORT, MPI_Comm_accept(port, MPI_INFO_NULL, 0,
							     MPI_COMM_SELF, &ic));
		}
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0)
			OK(MPI_Close_port(port));
	}
}

/* A connect to a node that never opened a port: nobody answers. */
static void test_timeout(void)
{
	char port[MPI_MAX_PORT_NAME], forged[MPI_MAX_PORT_NAME];
	MPI_Comm ic = MPI_COMM_NULL;
	MPI_Info info;
	char *p;

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	if (rank == 0) {
		/* A name of this job naming rank 1, which opens no port. */
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		p = strchr(port + 4, ':');
		snprintf(forged, sizeof(forged), "%.*s:1:%s", (int)(p - port), port,
			 strchr(p + 1, ':') + 1);
		OK(MPI_Info_create(&info));
		OK(MPI_Info_set(info, "timeout", "0.5"));
		EXPECT(MPI_ERR_PORT, MPI_Comm_connect(forged, info, 0, MPI_COMM_SELF, &ic));
		CHECK(ic == MPI_COMM_NULL, "a communicator came out of a failed connect");
		OK(MPI_Info_set(info, "timeout", "soon"));
		EXPECT(MPI_ERR_INFO_VALUE, MPI_Comm_connect(forged, info, 0, MPI_COMM_SELF, &ic));
		OK(MPI_Info_free(&info));
		OK(MPI_Close_port(port));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 1's first connect times out (rank 0 accepts only later); its second
 * is the one the accept takes. */
static void test_gaveup(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm ic = MPI_COMM_NULL;
	MPI_Info info;
	int v = -1;

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
		/* Rank 1 gave up once: its first request waits on the port, and
		 * the message says so (from the same process, so it came after). */
		OK(MPI_Recv(&v, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
		OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
		CHECK(v == 2, "the accept took connect number %d", v);
		OK(MPI_Comm_disconnect(&ic));
		OK(MPI_Close_port(port));
	} else if (rank == 1) {
		OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
		OK(MPI_Info_create(&info));
		OK(MPI_Info_set(info, "timeout", "0.3"));
		EXPECT(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic));
		OK(MPI_Info_free(&info));
		v = 1;
		OK(MPI_Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
		OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
		v = 2;
		OK(MPI_Send(&v, 1, MPI_INT, 0, 1, ic));
		OK(MPI_Comm_disconnect(&ic));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 0 finalizes with an open port that rank 1 connects to. */
static void test_finalize(void)
{
	char port[MPI_MAX_PORT_NAME];
	MPI_Comm ic = MPI_COMM_NULL;
	MPI_Info info;

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
	} else if (rank == 1) {
		OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
		OK(MPI_Info_create(&info));
		OK(MPI_Info_set(info, "timeout", "2"));
		EXPECT(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic));
		CHECK(ic == MPI_COMM_NULL, "a communicator came out of a failed connect");
		OK(MPI_Info_free(&info));
	}
}

static char thread_port[MPI_MAX_PORT_NAME];

static void *accept_thread(void *arg)
{
	MPI_Comm ic;
	int v = -1;

	(void)arg;
	OK(MPI_Comm_accept(thread_port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
	OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
	CHECK(v == 4711, "got %d through the accepted communicator", v);
	OK(MPI_Comm_disconnect(&ic));
	return NULL;
}

/* An accept waiting in one thread lets the process's other threads work. */
static void test_threads(void)
{
	MPI_Comm ic;
	pthread_t th;
	int provided, i, v;

	OK(MPI_Query_thread(&provided));
	CHECK(provided == MPI_THREAD_MULTIPLE, "thread level %d", provided);
	CHECK(size >= 3, "needs 3 processes");
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, thread_port));
		OK(MPI_Send(thread_port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
		CHECK(!pthread_create(&th, NULL, accept_thread, NULL), "pthread_create");
		for (i = 0; i < 100; i++) {
			OK(MPI_Recv(&v, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(v == i, "ping %d", v);
			OK(MPI_Send(&v, 1, MPI_INT, 2, 3, MPI_COMM_WORLD));
		}
		CHECK(!pthread_join(th, NULL), "pthread_join");
		OK(MPI_Close_port(thread_port));
	} else if (rank == 1) {
		OK(MPI_Recv(thread_port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
		OK(MPI_Recv(&v, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Comm_connect(thread_port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
		v = 4711;
		OK(MPI_Send(&v, 1, MPI_INT, 0, 1, ic));
		OK(MPI_Comm_disconnect(&ic));
	} else if (rank == 2) {
		for (i = 0; i < 100; i++) {
			OK(MPI_Send(&i, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
			OK(MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(v == i, "pong %d", v);
		}
		OK(MPI_Send(&i, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Ranks 0 and 1 join over a loopback TCP connection made here. */
static void test_join(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	MPI_Comm ic = MPI_COMM_NULL;
	int fd = -1, s, port = 0, v, got = -1, rsize, sv[2];

	CHECK(size >= 2, "needs 2 processes");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank > 1) {
		OK(MPI_Barrier(MPI_COMM_WORLD));
		return;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rank == 0) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(s >= 0, "socket");
		CHECK(!bind(s, (struct sockaddr *)&a, sizeof(a)) && !listen(s, 1), "bind");
		CHECK(!getsockname(s, (struct sockaddr *)&a, &len), "getsockname");
		port = ntohs(a.sin_port);
		OK(MPI_Send(&port, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
		fd = accept(s, NULL, NULL);
		CHECK(fd >= 0, "accept");
		close(s);
	} else {
		OK(MPI_Recv(&port, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		a.sin_port = htons((uint16_t)port);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)), "connect");
	}
	OK(MPI_Comm_join(fd, &ic));
	OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK(rsize == 1, "remote size %d", rsize);
	v = 100 + rank;
	OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE));
	CHECK(got == 101 - rank, "got %d", got);
	OK(MPI_Comm_disconnect(&ic));
	/* The socket is still the program's: it carries bytes after the join. */
	v = rank == 0 ? 'x' : 'y';
	CHECK(write(fd, &v, 1) == 1, "write after join");
	got = 0;
	CHECK(read(fd, &got, 1) == 1 && got == (rank == 0 ? 'y' : 'x'), "read after join");
	close(fd);

	/* The other end closed without a frame: an error, not a hang. */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	close(sv[1]);
	EXPECT(MPI_ERR_OTHER, MPI_Comm_join(sv[0], &ic));
	close(sv[0]);
	/* A short frame, then the end. */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	CHECK(write(sv[1], "MPI_Comm_join 1", 16) == 16, "write");
	close(sv[1]);
	EXPECT(MPI_ERR_OTHER, MPI_Comm_join(sv[0], &ic));
	close(sv[0]);
	/* Not a frame at all. */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	{
		char junk[80];

		memset(junk, 'z', sizeof(junk));
		CHECK(write(sv[1], junk, sizeof(junk)) == (ssize_t)sizeof(junk), "write");
	}
	EXPECT(MPI_ERR_OTHER, MPI_Comm_join(sv[0], &ic));
	close(sv[0]);
	close(sv[1]);
	/* Not a file descriptor. */
	EXPECT(MPI_ERR_ARG, MPI_Comm_join(-1, &ic));
	EXPECT(MPI_ERR_ARG, MPI_Comm_join(1000000, &ic));
	CHECK(ic == MPI_COMM_NULL, "a communicator came out of a failed join");
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Disconnect completes what is pending on the communicator. */
static void test_disconnect(void)
{
	MPI_Comm c, half, ic;
	MPI_Request rq[2];
	int big = 1 << 16, *out, *in, i, peer, lo = size / 2, first = rank < lo;
	char port[MPI_MAX_PORT_NAME] = "";

	CHECK(size >= 2, "needs 2 processes");
	out = malloc((size_t)big * sizeof(int));
	in = malloc((size_t)big * sizeof(int));
	CHECK(out && in, "no memory");
	/* An intra-communicator: a long message (rendezvous) each way. */
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	peer = rank ^ 1;
	if (peer < size) {
		for (i = 0; i < big; i++)
			out[i] = rank * 7 + i;
		OK(MPI_Irecv(in, big, MPI_INT, peer, 1, c, &rq[0]));
		OK(MPI_Isend(out, big, MPI_INT, peer, 1, c, &rq[1]));
	}
	OK(MPI_Comm_disconnect(&c));
	if (peer < size) {
		int flag = 0;

		/* Complete already: a test says so at once. */
		OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
		CHECK(flag, "disconnect returned before its requests completed");
		for (i = 0; i < big; i++)
			if (in[i] != peer * 7 + i)
				break;
		CHECK(i == big, "element %d is %d", i, in[i]);
	}
	/* The same across an inter-communicator from a port. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, first, rank, &half));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, lo, 7, MPI_COMM_WORLD));
	}
	across(half, first, port, &ic);
	for (i = 0; i < big; i++)
		out[i] = rank + i;
	memset(in, 0, (size_t)big * sizeof(int));
	OK(MPI_Comm_rank(half, &peer));
	/* Rank i of each half with rank i of the other, where both exist. */
	if (peer < lo && peer < size - lo) {
		int flag = 0, from = first ? lo + peer : peer;

		OK(MPI_Irecv(in, big, MPI_INT, peer, 2, ic, &rq[0]));
		OK(MPI_Isend(out, big, MPI_INT, peer, 2, ic, &rq[1]));
		OK(MPI_Comm_disconnect(&ic));
		OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
		CHECK(flag, "disconnect returned before its requests completed");
		for (i = 0; i < big; i++)
			if (in[i] != from + i)
				break;
		CHECK(i == big, "element %d is %d", i, in[i]);
	} else {
		OK(MPI_Comm_disconnect(&ic));
	}
	if (rank == 0)
		OK(MPI_Close_port(port));
	OK(MPI_Comm_free(&half));
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";
	int provided;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check_rank = rank;
	if (!strcmp(t, "halves"))
		test_halves(1, 0);
	else if (!strcmp(t, "cycles")) {
		test_halves(5, 0);
		test_halves(3, 1);
	} else if (!strcmp(t, "oddeven"))
		test_oddeven();
	else if (!strcmp(t, "many"))
		test_many();
	else if (!strcmp(t, "queue"))
		test_queue();
	else if (!strcmp(t, "closed"))
		test_closed();
	else if (!strcmp(t, "names"))
		test_names();
	else if (!strcmp(t, "timeout"))
		test_timeout();
	else if (!strcmp(t, "gaveup"))
		test_gaveup();
	else if (!strcmp(t, "finalize"))
		test_finalize();
	else if (!strcmp(t, "threads"))
		test_threads();
	else if (!strcmp(t, "join"))
		test_join();
	else if (!strcmp(t, "disconnect"))
		test_disconnect();
	else
		CHECK(0, "unknown test \"%s\"", t);
	MPI_Finalize();
	return 0;
}
