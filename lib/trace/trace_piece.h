/* SPDX-License-Identifier: MIT */
/*
 * trace_piece.h - the file each rank of a traced job writes (DIR/ranks/R,
 * R the rank in MPI_COMM_WORLD), which biptrace merges into the job's
 * OTF2 archive and Chrome trace (bip_trace(7)).
 *
 * The layout, in the byte order of the host that wrote it (the merger
 * refuses a piece whose magic does not read back):
 *
 *     struct trace_piece_header   (128 bytes)
 *     struct trace_event          (64 bytes) x nevents
 *
 * Events appear in the order they were recorded, per thread; a call is
 * recorded when it returns, after the events that happened inside it
 * (its BIP messages, its completed requests), so the merger orders a
 * piece by time (TRACE_EV_CALL* by t0 for the entry, t1 for the exit).
 * Times are CLOCK_MONOTONIC nanoseconds of the writer's host; adding
 * clock_offset gives the time of rank 0's host.
 */
#ifndef TRACE_PIECE_H
#define TRACE_PIECE_H

#include <stdint.h>

#define TRACE_PIECE_MAGIC 0x3145434152545042ull /* "BPTRACE1" read as little-endian */
#define TRACE_PIECE_VERSION 1

/* Communicators the trace names; the others are TRACE_COMM_OTHER, whose
 * messages show only as BIP messages and call arguments. */
enum trace_comm {
	TRACE_COMM_WORLD = 0,
	TRACE_COMM_OTHER = 1,
};

enum trace_event_kind {
	/* A call without more (region, t0 entry, t1 exit). */
	TRACE_EV_CALL = 1,
	/* A call that sent (dst, stag, sent bytes at t0) and/or received
	 * (src, rtag, recvd bytes at t1): MPI_Send, MPI_Recv, MPI_Sendrecv.
	 * dst or src is TRACE_NO_PEER when that half does not exist. */
	TRACE_EV_CALL_P2P,
	/* MPI_Isend and its kin: the send (dst, stag, sent) of request req. */
	TRACE_EV_CALL_ISEND,
	/* MPI_Irecv: request req posted (src, rtag as given). */
	TRACE_EV_CALL_IRECV,
	/* A collective: coll (enum trace_coll), root in dst (TRACE_NO_PEER
	 * if none), sent and recvd bytes of this rank. */
	TRACE_EV_CALL_COLL,
	/* Inside a Wait or Test: send request req completed at t0. */
	TRACE_EV_ISEND_DONE,
	/* Inside a Wait or Test: receive request req completed at t0 with
	 * the message (src, rtag, recvd). */
	TRACE_EV_IRECV_DONE,
	/* bip_layer_send at t0 to node dst on BIP tag stag, sent bytes
	 * (header and data); req is its number among this node's messages to
	 * dst (from 0). */
	TRACE_EV_BIP_SEND,
	/* A message from node src arrived at t0 (its short part, the header):
	 * rtag, recvd bytes, req its number among src's messages here, which
	 * is the req of src's TRACE_EV_BIP_SEND (BIP keeps the order of two
	 * nodes' messages). */
	TRACE_EV_BIP_RECV,
	/* The long part of the last message from src was announced at t0
	 * (recvd bytes; req as that message's TRACE_EV_BIP_RECV). */
	TRACE_EV_BIP_LONG,
};

/* The collectives of TRACE_EV_CALL_COLL (the merger maps them to OTF2's). */
enum trace_coll {
	TRACE_COLL_BARRIER,
	TRACE_COLL_BCAST,
	TRACE_COLL_REDUCE,
	TRACE_COLL_ALLREDUCE,
	TRACE_COLL_GATHER,
	TRACE_COLL_SCATTER,
	TRACE_COLL_ALLGATHER,
	TRACE_COLL_ALLTOALL,
	TRACE_COLL_REDUCE_SCATTER_BLOCK,
	TRACE_COLL_SCAN,
	TRACE_COLL_EXSCAN,
};

#define TRACE_NO_PEER (-1)

struct trace_event {
	uint64_t t0;      /* the event's time; a call's entry */
	uint64_t t1;      /* a call's exit */
	uint64_t sent;    /* bytes */
	uint64_t recvd;   /* bytes */
	uint64_t req;     /* request id, or a BIP message's number */
	uint16_t kind;    /* enum trace_event_kind */
	uint16_t region;  /* the call (trace_regions.h) */
	uint16_t comm;    /* enum trace_comm */
	uint16_t coll;    /* enum trace_coll */
	int32_t dst, src; /* ranks of comm, or BIP nodes; or TRACE_NO_PEER */
	int32_t stag, rtag;
};

struct trace_piece_header {
	uint64_t magic;        /* TRACE_PIECE_MAGIC */
	uint32_t version;      /* TRACE_PIECE_VERSION */
	uint32_t nregions;     /* TRACE_NREGIONS of the writer */
	int32_t rank, size;    /* in MPI_COMM_WORLD */
	int32_t node;          /* BIP node */
	uint32_t complete;     /* 1: written at MPI_Finalize; 0: on a signal or at exit */
	int64_t clock_offset;  /* ns to add to reach rank 0's clock */
	uint64_t nevents;
	char host[80];         /* the host's name, cut */
};

_Static_assert(sizeof(struct trace_event) == 64, "a trace event");
_Static_assert(sizeof(struct trace_piece_header) == 128, "a trace piece's header");

#endif
