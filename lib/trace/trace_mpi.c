/* SPDX-License-Identifier: MIT */
/*
 * trace_mpi.c - the MPI wrappers written by hand: those whose buffers,
 * peers, tags and requests the trace records (gen.py's HAND list; every
 * other call gets the generated wrapper, entry and exit only).
 *
 * Sizes are bytes: count times the type's size (MPI_Type_size).  Peers
 * are ranks of the call's communicator; the merger writes OTF2's message
 * and collective events for MPI_COMM_WORLD only (TRACE_COMM_OTHER: the
 * call's entry and exit and its BIP messages, bip_trace(7)).
 *
 *   Send, Bsend, Ssend, Rsend   TRACE_EV_CALL_P2P, the send half, at entry
 *   Recv                        TRACE_EV_CALL_P2P, the receive half, from
 *                               the status (source, tag, bytes), at exit
 *   Sendrecv(_replace)          both halves
 *   Isend, Ibsend, ...          TRACE_EV_CALL_ISEND with a request id
 *   Irecv                       TRACE_EV_CALL_IRECV with a request id
 *   Wait, Test and families     TRACE_EV_ISEND_DONE / TRACE_EV_IRECV_DONE
 *                               per request of Isend or Irecv they end
 *                               (its handle became MPI_REQUEST_NULL, even
 *                               when the call reports the request's error)
 *   Request_free                forgets the request
 *   the blocking collectives    TRACE_EV_CALL_COLL: op, root, bytes
 *
 * The requests of Isend and Irecv are kept in a table (struct req_table)
 * from their handle to their id until a Wait or Test ends them or
 * Request_free frees them: a handle the shim gives again later is a new
 * request.  Persistent and collective requests are not in the table;
 * their completion shows as the Wait's or Test's entry and exit only.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "trace.h"
#include "trace_regions.h"

/* --- helpers --- */

static inline uint16_t comm_id(MPI_Comm comm)
{
	return comm == MPI_COMM_WORLD ? TRACE_COMM_WORLD : TRACE_COMM_OTHER;
}

static uint64_t type_bytes(int count, MPI_Datatype type)
{
	int size;

	if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

static int comm_size(MPI_Comm comm)
{
	int n;

	return PMPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

static int comm_rank(MPI_Comm comm)
{
	int r;

	return PMPI_Comm_rank(comm, &r) == MPI_SUCCESS ? r : -1;
}

static uint64_t status_bytes(const MPI_Status *st)
{
	int n;

	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return (uint64_t)n;
}

/* A call that sent (dst != TRACE_NO_PEER) and/or received. */
static void rec_p2p(unsigned region, uint64_t t0, MPI_Comm comm, int dst, int stag,
		    uint64_t sent, const MPI_Status *st)
{
	struct trace_event *e = trace_slot();

	e->t0 = t0;
	e->t1 = trace_now();
	e->kind = TRACE_EV_CALL_P2P;
	e->region = (uint16_t)region;
	e->comm = comm_id(comm);
	e->dst = dst == MPI_PROC_NULL ? TRACE_NO_PEER : dst;
	e->stag = stag;
	e->sent = sent;
	if (st && st->MPI_SOURCE >= 0) {
		e->src = st->MPI_SOURCE;
		e->rtag = st->MPI_TAG;
		e->recvd = status_bytes(st);
	} else {
		e->src = TRACE_NO_PEER;
		e->rtag = 0;
		e->recvd = 0;
	}
	trace_commit();
	trace_tls.cur_region = 0;
}

/* --- the requests of Isend and Irecv --- */

struct req_entry {
	MPI_Request key; /* NULL: free */
	uint64_t id;
	uint16_t comm;
	uint16_t is_send;
};

static struct {
	pthread_mutex_t lock;
	struct req_entry *slots;
	size_t mask;     /* slots - 1, a power of two less one; 0: no table yet */
	size_t n;
	uint64_t next_id;
} reqs = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1 };

static size_t req_hash(MPI_Request r)
{
	uint64_t x = (uint64_t)(uintptr_t)r;

	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 32);
}

/* Put e in slots (mask): the table has room. */
static void req_place(struct req_entry *slots, size_t mask, const struct req_entry *e)
{
	size_t i = req_hash(e->key) & mask;

	while (slots[i].key && slots[i].key != e->key)
		i = (i + 1) & mask;
	slots[i] = *e;
}

/* Keep at most half the slots used: 0, or -1 without memory. */
static int req_make_room(void)
{
	size_t cap = reqs.mask ? (reqs.mask + 1) * 2 : 256, i;
	struct req_entry *slots;

	if (reqs.mask && (reqs.n + 1) * 2 <= reqs.mask + 1)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; reqs.mask && i <= reqs.mask; i++)
		if (reqs.slots[i].key)
			req_place(slots, cap - 1, &reqs.slots[i]);
	free(reqs.slots);
	reqs.slots = slots;
	reqs.mask = cap - 1;
	return 0;
}

/* The id of a new request (0 if it cannot be kept). */
static uint64_t req_track(MPI_Request r, MPI_Comm comm, int is_send)
{
	struct req_entry e = { .key = r, .comm = comm_id(comm), .is_send = (uint16_t)is_send };

	pthread_mutex_lock(&reqs.lock);
	if (req_make_room() < 0) {
		pthread_mutex_unlock(&reqs.lock);
		return 0;
	}
	e.id = reqs.next_id++;
	reqs.n++;
	req_place(reqs.slots, reqs.mask, &e);
	pthread_mutex_unlock(&reqs.lock);
	return e.id;
}

/* Take r out of the table: 1 and *out if it was there. */
static int req_forget(MPI_Request r, struct req_entry *out)
{
	size_t i, j, k;

	if (!r || r == MPI_REQUEST_NULL)
		return 0;
	pthread_mutex_lock(&reqs.lock);
	if (!reqs.mask)
		goto absent;
	for (i = req_hash(r) & reqs.mask; reqs.slots[i].key != r; i = (i + 1) & reqs.mask)
		if (!reqs.slots[i].key)
			goto absent;
	*out = reqs.slots[i];
	/* Linear probing: move back the entries that the hole would cut
	 * off from their home slot. */
	for (j = (i + 1) & reqs.mask; reqs.slots[j].key; j = (j + 1) & reqs.mask) {
		k = req_hash(reqs.slots[j].key) & reqs.mask;
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			reqs.slots[i] = reqs.slots[j];
			i = j;
		}
	}
	reqs.slots[i].key = NULL;
	reqs.n--;
	pthread_mutex_unlock(&reqs.lock);
	return 1;
absent:
	pthread_mutex_unlock(&reqs.lock);
	return 0;
}

static void rec_isend(unsigned region, uint64_t t0, MPI_Comm comm, int dst, int tag,
		      uint64_t sent, MPI_Request r)
{
	struct trace_event *e = trace_slot();

	e->t0 = t0;
	e->t1 = trace_now();
	e->kind = TRACE_EV_CALL_ISEND;
	e->region = (uint16_t)region;
	e->comm = comm_id(comm);
	e->dst = dst == MPI_PROC_NULL ? TRACE_NO_PEER : dst;
	e->stag = tag;
	e->sent = sent;
	e->req = dst == MPI_PROC_NULL ? 0 : req_track(r, comm, 1);
	trace_commit();
	trace_tls.cur_region = 0;
}

/* Request r (the handle before the call) ended with status st. */
static void rec_done(MPI_Request r, const MPI_Status *st)
{
	struct req_entry re;
	struct trace_event *e;

	if (!req_forget(r, &re) || !re.id)
		return;
	e = trace_slot();
	e->t0 = trace_time_inside(); /* the Wait's or Test's exit (trace.h) */
	e->req = re.id;
	e->comm = re.comm;
	if (re.is_send) {
		e->kind = TRACE_EV_ISEND_DONE;
	} else {
		e->kind = TRACE_EV_IRECV_DONE;
		e->src = st->MPI_SOURCE >= 0 ? st->MPI_SOURCE : TRACE_NO_PEER;
		e->rtag = st->MPI_TAG;
		e->recvd = st->MPI_SOURCE >= 0 ? status_bytes(st) : 0;
	}
	trace_commit();
}

/*
 * The Wait and Test families keep the handles of the call (the shim sets
 * the ended ones to MPI_REQUEST_NULL) and statuses of their own when the
 * program gives MPI_STATUSES_IGNORE.  Up to SMALL_REQS on the stack.
 */
#define SMALL_REQS 16

struct req_copy {
	MPI_Request small_reqs[SMALL_REQS];
	MPI_Status small_st[SMALL_REQS];
	MPI_Request *reqs;
	MPI_Status *st;
};

/* 0, or -1 without memory (then the call is not looked into). */
static int req_copy_make(struct req_copy *c, int count, const MPI_Request *r,
			 MPI_Status *user_st)
{
	c->reqs = c->small_reqs;
	c->st = user_st ? user_st : c->small_st;
	if (count < 0 || (count > 0 && !r)) {
		c->reqs = NULL;
		return -1;
	}
	if (count > SMALL_REQS) {
		c->reqs = malloc((size_t)count * sizeof(*c->reqs));
		if (!user_st)
			c->st = malloc((size_t)count * sizeof(*c->st));
		if (!c->reqs || !c->st) {
			if (c->reqs != c->small_reqs)
				free(c->reqs);
			if (c->st != user_st)
				free(c->st);
			c->reqs = NULL;
			return -1;
		}
	}
	memcpy(c->reqs, r, (size_t)count * sizeof(*r));
	return 0;
}

static void req_copy_free(struct req_copy *c, MPI_Status *user_st)
{
	if (c->reqs && c->reqs != c->small_reqs)
		free(c->reqs);
	if (c->reqs && c->st != user_st && c->st != c->small_st)
		free(c->st);
}

/* --- start and end --- */

int MPI_Init(int *argc, char ***argv)
{
	const char *file = getenv("BIP_TRACE");
	uint64_t t0;
	int ret;

	if (!file || !*file)
		return PMPI_Init(argc, argv);
	trace_clock_init();
	trace_on = 1;
	t0 = trace_enter(TRACE_R_Init);
	ret = PMPI_Init(argc, argv);
	if (ret != MPI_SUCCESS) {
		trace_on = 0;
		return ret;
	}
	trace_start();
	if (trace_on)
		trace_call(TRACE_R_Init, t0);
	return ret;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	const char *file = getenv("BIP_TRACE");
	uint64_t t0;
	int ret;

	if (!file || !*file)
		return PMPI_Init_thread(argc, argv, required, provided);
	trace_clock_init();
	trace_on = 1;
	t0 = trace_enter(TRACE_R_Init_thread);
	ret = PMPI_Init_thread(argc, argv, required, provided);
	if (ret != MPI_SUCCESS) {
		trace_on = 0;
		return ret;
	}
	trace_start();
	if (trace_on)
		trace_call(TRACE_R_Init_thread, t0);
	return ret;
}

int MPI_Finalize(void)
{
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Finalize();
	t0 = trace_enter(TRACE_R_Finalize);
	ret = PMPI_Finalize();
	trace_call(TRACE_R_Finalize, t0);
	trace_flush(1);
	return ret;
}

int MPI_Pcontrol(const int level, ...)
{
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Pcontrol(level);
	t0 = trace_enter(TRACE_R_Pcontrol);
	ret = PMPI_Pcontrol(level);
	trace_call(TRACE_R_Pcontrol, t0);
	return ret;
}

/* --- point to point --- */

#define TRACE_SEND(name)                                                                   \
	int MPI_##name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, \
		       MPI_Comm comm)                                                      \
	{                                                                                  \
		uint64_t t0;                                                               \
		int ret;                                                                   \
                                                                                           \
		if (!trace_on)                                                             \
			return PMPI_##name(buf, count, datatype, dest, tag, comm);         \
		t0 = trace_enter(TRACE_R_##name);                                          \
		ret = PMPI_##name(buf, count, datatype, dest, tag, comm);                  \
		if (ret == MPI_SUCCESS)                                                    \
			rec_p2p(TRACE_R_##name, t0, comm, dest, tag,                       \
				type_bytes(count, datatype), NULL);                        \
		else                                                                       \
			trace_call(TRACE_R_##name, t0);                                    \
		return ret;                                                                \
	}

TRACE_SEND(Send)
TRACE_SEND(Bsend)
TRACE_SEND(Ssend)
TRACE_SEND(Rsend)

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	MPI_Status own;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
	t0 = trace_enter(TRACE_R_Recv);
	if (!status)
		status = &own;
	ret = PMPI_Recv(buf, count, datatype, source, tag, comm, status);
	if (ret == MPI_SUCCESS)
		rec_p2p(TRACE_R_Recv, t0, comm, MPI_PROC_NULL, 0, 0, status);
	else
		trace_call(TRACE_R_Recv, t0);
	return ret;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
		 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
		 int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
				     recvcount, recvtype, source, recvtag, comm, status);
	t0 = trace_enter(TRACE_R_Sendrecv);
	if (!status)
		status = &own;
	ret = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
			    recvtype, source, recvtag, comm, status);
	if (ret == MPI_SUCCESS)
		rec_p2p(TRACE_R_Sendrecv, t0, comm, dest, sendtag, type_bytes(sendcount, sendtype),
			status);
	else
		trace_call(TRACE_R_Sendrecv, t0);
	return ret;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
			 int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
					     comm, status);
	t0 = trace_enter(TRACE_R_Sendrecv_replace);
	if (!status)
		status = &own;
	ret = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
				    status);
	if (ret == MPI_SUCCESS)
		rec_p2p(TRACE_R_Sendrecv_replace, t0, comm, dest, sendtag,
			type_bytes(count, datatype), status);
	else
		trace_call(TRACE_R_Sendrecv_replace, t0);
	return ret;
}

#define TRACE_ISEND(name)                                                                   \
	int MPI_##name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,  \
		       MPI_Comm comm, MPI_Request *request)                                 \
	{                                                                                   \
		uint64_t t0;                                                                \
		int ret;                                                                    \
                                                                                            \
		if (!trace_on)                                                              \
			return PMPI_##name(buf, count, datatype, dest, tag, comm, request); \
		t0 = trace_enter(TRACE_R_##name);                                           \
		ret = PMPI_##name(buf, count, datatype, dest, tag, comm, request);          \
		if (ret == MPI_SUCCESS)                                                     \
			rec_isend(TRACE_R_##name, t0, comm, dest, tag,                      \
				  type_bytes(count, datatype), *request);                   \
		else                                                                        \
			trace_call(TRACE_R_##name, t0);                                     \
		return ret;                                                                 \
	}

TRACE_ISEND(Isend)
TRACE_ISEND(Ibsend)
TRACE_ISEND(Issend)
TRACE_ISEND(Irsend)

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	      MPI_Request *request)
{
	struct trace_event *e;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	t0 = trace_enter(TRACE_R_Irecv);
	ret = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Irecv, t0);
		return ret;
	}
	e = trace_slot();
	e->t0 = t0;
	e->t1 = trace_now();
	e->kind = TRACE_EV_CALL_IRECV;
	e->region = TRACE_R_Irecv;
	e->comm = comm_id(comm);
	e->src = source;
	e->rtag = tag;
	e->req = source == MPI_PROC_NULL ? 0 : req_track(*request, comm, 0);
	trace_commit();
	trace_tls.cur_region = 0;
	return ret;
}

int MPI_Request_free(MPI_Request *request)
{
	struct req_entry re;
	MPI_Request r;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Request_free(request);
	t0 = trace_enter(TRACE_R_Request_free);
	r = request ? *request : MPI_REQUEST_NULL;
	ret = PMPI_Request_free(request);
	if (ret == MPI_SUCCESS)
		req_forget(r, &re);
	trace_call(TRACE_R_Request_free, t0);
	return ret;
}

/* --- completion --- */

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	MPI_Status own;
	MPI_Request r;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Wait(request, status);
	t0 = trace_enter(TRACE_R_Wait);
	r = request ? *request : MPI_REQUEST_NULL;
	if (!status)
		status = &own;
	ret = PMPI_Wait(request, status);
	if (request && *request == MPI_REQUEST_NULL)
		rec_done(r, status);
	trace_call(TRACE_R_Wait, t0);
	return ret;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	MPI_Status own;
	MPI_Request r;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Test(request, flag, status);
	t0 = trace_enter(TRACE_R_Test);
	r = request ? *request : MPI_REQUEST_NULL;
	if (!status)
		status = &own;
	ret = PMPI_Test(request, flag, status);
	if (request && *request == MPI_REQUEST_NULL)
		rec_done(r, status);
	trace_call(TRACE_R_Test, t0);
	return ret;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	struct req_copy c;
	uint64_t t0;
	int ret, i;

	if (!trace_on)
		return PMPI_Waitall(count, array_of_requests, array_of_statuses);
	t0 = trace_enter(TRACE_R_Waitall);
	if (req_copy_make(&c, count, array_of_requests, array_of_statuses) < 0) {
		ret = PMPI_Waitall(count, array_of_requests, array_of_statuses);
	} else {
		ret = PMPI_Waitall(count, array_of_requests, c.st);
		for (i = 0; i < count; i++)
			if (array_of_requests[i] == MPI_REQUEST_NULL)
				rec_done(c.reqs[i], &c.st[i]);
	}
	req_copy_free(&c, array_of_statuses);
	trace_call(TRACE_R_Waitall, t0);
	return ret;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
		MPI_Status array_of_statuses[])
{
	struct req_copy c;
	uint64_t t0;
	int ret, i;

	if (!trace_on)
		return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
	t0 = trace_enter(TRACE_R_Testall);
	if (req_copy_make(&c, count, array_of_requests, array_of_statuses) < 0) {
		ret = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
	} else {
		ret = PMPI_Testall(count, array_of_requests, flag, c.st);
		for (i = 0; i < count; i++)
			if (array_of_requests[i] == MPI_REQUEST_NULL)
				rec_done(c.reqs[i], &c.st[i]);
	}
	req_copy_free(&c, array_of_statuses);
	trace_call(TRACE_R_Testall, t0);
	return ret;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
	struct req_copy c;
	MPI_Status own;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Waitany(count, array_of_requests, indx, status);
	t0 = trace_enter(TRACE_R_Waitany);
	if (!status)
		status = &own;
	if (req_copy_make(&c, count, array_of_requests, status) < 0) {
		ret = PMPI_Waitany(count, array_of_requests, indx, status);
	} else {
		ret = PMPI_Waitany(count, array_of_requests, indx, status);
		if (ret == MPI_SUCCESS && *indx != MPI_UNDEFINED && *indx >= 0 && *indx < count)
			rec_done(c.reqs[*indx], status);
	}
	req_copy_free(&c, status);
	trace_call(TRACE_R_Waitany, t0);
	return ret;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag,
		MPI_Status *status)
{
	struct req_copy c;
	MPI_Status own;
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Testany(count, array_of_requests, indx, flag, status);
	t0 = trace_enter(TRACE_R_Testany);
	if (!status)
		status = &own;
	if (req_copy_make(&c, count, array_of_requests, status) < 0) {
		ret = PMPI_Testany(count, array_of_requests, indx, flag, status);
	} else {
		ret = PMPI_Testany(count, array_of_requests, indx, flag, status);
		if (ret == MPI_SUCCESS && *flag && *indx != MPI_UNDEFINED && *indx >= 0 &&
		    *indx < count)
			rec_done(c.reqs[*indx], status);
	}
	req_copy_free(&c, status);
	trace_call(TRACE_R_Testany, t0);
	return ret;
}

/* Waitsome and Testsome: the statuses are those of the ended requests,
 * in the order of array_of_indices. */
static void rec_some(const struct req_copy *c, int incount, int outcount, const int *indices)
{
	int i;

	for (i = 0; outcount != MPI_UNDEFINED && i < outcount; i++)
		if (indices[i] >= 0 && indices[i] < incount)
			rec_done(c->reqs[indices[i]], &c->st[i]);
}

/* MPI_Waitsome and MPI_Testsome: the same arguments, the same records. */
#define TRACE_SOME(name)                                                                   \
	int MPI_##name(int incount, MPI_Request array_of_requests[], int *outcount,        \
		       int array_of_indices[], MPI_Status array_of_statuses[])             \
	{                                                                                  \
		struct req_copy c;                                                         \
		uint64_t t0;                                                               \
		int ret;                                                                   \
                                                                                           \
		if (!trace_on)                                                             \
			return PMPI_##name(incount, array_of_requests, outcount,           \
					   array_of_indices, array_of_statuses);           \
		t0 = trace_enter(TRACE_R_##name);                                          \
		if (req_copy_make(&c, incount, array_of_requests, array_of_statuses) < 0) {\
			ret = PMPI_##name(incount, array_of_requests, outcount,            \
					  array_of_indices, array_of_statuses);            \
		} else {                                                                   \
			ret = PMPI_##name(incount, array_of_requests, outcount,            \
					  array_of_indices, c.st);                         \
			if (ret == MPI_SUCCESS)                                            \
				rec_some(&c, incount, *outcount, array_of_indices);        \
		}                                                                          \
		req_copy_free(&c, array_of_statuses);                                      \
		trace_call(TRACE_R_##name, t0);                                            \
		return ret;                                                                \
	}

TRACE_SOME(Waitsome)
TRACE_SOME(Testsome)

/* --- collectives --- */

static void rec_coll(unsigned region, uint64_t t0, enum trace_coll coll, MPI_Comm comm,
		     int root, uint64_t sent, uint64_t recvd)
{
	struct trace_event *e = trace_slot();

	e->t0 = t0;
	e->t1 = trace_now();
	e->kind = TRACE_EV_CALL_COLL;
	e->region = (uint16_t)region;
	e->coll = (uint16_t)coll;
	e->comm = comm_id(comm);
	e->dst = root;
	e->sent = sent;
	e->recvd = recvd;
	trace_commit();
	trace_tls.cur_region = 0;
}

/*
 * The sizes come from the arguments by MPI_Type_size, MPI_Comm_rank and
 * MPI_Comm_size, asked only after the call succeeded: with bad arguments
 * they would raise an error the program did not make.
 */

int MPI_Barrier(MPI_Comm comm)
{
	uint64_t t0;
	int ret;

	if (!trace_on)
		return PMPI_Barrier(comm);
	t0 = trace_enter(TRACE_R_Barrier);
	ret = PMPI_Barrier(comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Barrier, t0);
		return ret;
	}
	rec_coll(TRACE_R_Barrier, t0, TRACE_COLL_BARRIER, comm, TRACE_NO_PEER, 0, 0);
	return ret;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	uint64_t t0, b;
	int ret, me;

	if (!trace_on)
		return PMPI_Bcast(buffer, count, datatype, root, comm);
	t0 = trace_enter(TRACE_R_Bcast);
	ret = PMPI_Bcast(buffer, count, datatype, root, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Bcast, t0);
		return ret;
	}
	b = type_bytes(count, datatype);
	me = comm_rank(comm);
	rec_coll(TRACE_R_Bcast, t0, TRACE_COLL_BCAST, comm, root, me == root ? b : 0,
		 me == root ? 0 : b);
	return ret;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	       int root, MPI_Comm comm)
{
	uint64_t t0, b;
	int ret;

	if (!trace_on)
		return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
	t0 = trace_enter(TRACE_R_Reduce);
	ret = PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Reduce, t0);
		return ret;
	}
	b = type_bytes(count, datatype);
	rec_coll(TRACE_R_Reduce, t0, TRACE_COLL_REDUCE, comm, root, b,
		 comm_rank(comm) == root ? b : 0);
	return ret;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		  MPI_Op op, MPI_Comm comm)
{
	uint64_t t0, b;
	int ret;

	if (!trace_on)
		return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
	t0 = trace_enter(TRACE_R_Allreduce);
	ret = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Allreduce, t0);
		return ret;
	}
	b = type_bytes(count, datatype);
	rec_coll(TRACE_R_Allreduce, t0, TRACE_COLL_ALLREDUCE, comm, TRACE_NO_PEER, b, b);
	return ret;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
	       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	uint64_t t0, sent, recvd = 0;
	int ret, is_root;

	if (!trace_on)
		return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				   root, comm);
	t0 = trace_enter(TRACE_R_Gather);
	ret = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
			  comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Gather, t0);
		return ret;
	}
	is_root = comm_rank(comm) == root;
	if (is_root)
		recvd = type_bytes(recvcount, recvtype) * (uint64_t)comm_size(comm);
	sent = sendbuf == MPI_IN_PLACE ? type_bytes(recvcount, recvtype) :
					 type_bytes(sendcount, sendtype);
	rec_coll(TRACE_R_Gather, t0, TRACE_COLL_GATHER, comm, root, sent, recvd);
	return ret;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	uint64_t t0, sent = 0, recvd;
	int ret, is_root;

	if (!trace_on)
		return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				    root, comm);
	t0 = trace_enter(TRACE_R_Scatter);
	ret = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
			   comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Scatter, t0);
		return ret;
	}
	is_root = comm_rank(comm) == root;
	if (is_root)
		sent = type_bytes(sendcount, sendtype) * (uint64_t)comm_size(comm);
	recvd = is_root && recvbuf == MPI_IN_PLACE ? type_bytes(sendcount, sendtype) :
						     type_bytes(recvcount, recvtype);
	rec_coll(TRACE_R_Scatter, t0, TRACE_COLL_SCATTER, comm, root, sent, recvd);
	return ret;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	uint64_t t0, sent, recvd;
	int ret;

	if (!trace_on)
		return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				      comm);
	t0 = trace_enter(TRACE_R_Allgather);
	ret = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Allgather, t0);
		return ret;
	}
	recvd = type_bytes(recvcount, recvtype);
	sent = sendbuf == MPI_IN_PLACE ? recvd : type_bytes(sendcount, sendtype);
	rec_coll(TRACE_R_Allgather, t0, TRACE_COLL_ALLGATHER, comm, TRACE_NO_PEER, sent,
		 recvd * (uint64_t)comm_size(comm));
	return ret;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	uint64_t t0, sent, recvd;
	int ret, n;

	if (!trace_on)
		return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				     comm);
	t0 = trace_enter(TRACE_R_Alltoall);
	ret = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Alltoall, t0);
		return ret;
	}
	n = comm_size(comm);
	recvd = type_bytes(recvcount, recvtype) * (uint64_t)n;
	sent = sendbuf == MPI_IN_PLACE ? recvd : type_bytes(sendcount, sendtype) * (uint64_t)n;
	rec_coll(TRACE_R_Alltoall, t0, TRACE_COLL_ALLTOALL, comm, TRACE_NO_PEER, sent, recvd);
	return ret;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	uint64_t t0, b;
	int ret;

	if (!trace_on)
		return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
	t0 = trace_enter(TRACE_R_Reduce_scatter_block);
	ret = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Reduce_scatter_block, t0);
		return ret;
	}
	b = type_bytes(recvcount, datatype);
	rec_coll(TRACE_R_Reduce_scatter_block, t0, TRACE_COLL_REDUCE_SCATTER_BLOCK, comm,
		 TRACE_NO_PEER, b * (uint64_t)comm_size(comm), b);
	return ret;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	     MPI_Comm comm)
{
	uint64_t t0, b;
	int ret;

	if (!trace_on)
		return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
	t0 = trace_enter(TRACE_R_Scan);
	ret = PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Scan, t0);
		return ret;
	}
	b = type_bytes(count, datatype);
	rec_coll(TRACE_R_Scan, t0, TRACE_COLL_SCAN, comm, TRACE_NO_PEER, b, b);
	return ret;
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	       MPI_Comm comm)
{
	uint64_t t0, b;
	int ret;

	if (!trace_on)
		return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
	t0 = trace_enter(TRACE_R_Exscan);
	ret = PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
	if (ret != MPI_SUCCESS) {
		trace_call(TRACE_R_Exscan, t0);
		return ret;
	}
	b = type_bytes(count, datatype);
	rec_coll(TRACE_R_Exscan, t0, TRACE_COLL_EXSCAN, comm, TRACE_NO_PEER, b, b);
	return ret;
}
