/* SPDX-License-Identifier: MIT */
/*
 * biptrace - merge the pieces of a traced job (DIR/ranks/RANK, written by
 * libbip_trace, trace_piece.h) into an OTF2 archive, DIR/traces.otf2, and
 * a Chrome trace-event file, DIR.json (bip_trace(7)).
 *
 *   biptrace [-q] [-k] DIR
 *   biptrace --lib
 *
 * bipload --trace DIR runs it when the job has ended, however it ended;
 * by hand it merges the pieces of a job started otherwise (srun).  -k
 * keeps the pieces (otherwise removed once both files are written); -q
 * says nothing unless something is wrong.  Exit 0 if both files were
 * written (even from a partial set of pieces, which it says), 1 if not.
 * --lib prints the path of the tracer's library, for LD_PRELOAD under
 * another launcher: the one beside biptrace (the build tree), else the
 * installed one.
 *
 * Each piece is put in time order (see order_piece): a call gives its
 * entry at t0 and its exit at t1, and the events inside it fall between.
 * Times get the piece's clock offset (to rank 0's clock), then the
 * earliest time of the job is subtracted in the JSON file and is OTF2's
 * global offset.
 *
 * OTF2: one location (and location group, a process) per rank, on a
 * system tree node per host; one region per MPI call; the communicator
 * MPI_COMM_WORLD (group of every rank) and a second one, "BIP messages",
 * whose MpiSend/MpiRecv events are the shim's BIP messages (tag: BIP's
 * tag), so that the protocol shows apart from the MPI messages.
 *
 * JSON: one process per rank (pid = rank, named "rank R (host)"), thread
 * 0; a complete event ("ph":"X") per call with its arguments, a flow
 * ("ph":"s" at the send, "ph":"f" with "bp":"e" at the arrival) per BIP
 * message whose both ends are in the trace, numbered from 1.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "trace_piece.h"
#include "trace_regions.h"

struct piece {
	struct trace_piece_header h;
	struct trace_event *ev;
	struct point *pt;  /* ev in time order, entries and exits apart */
	size_t npt;
	uint64_t otf2_events;
};

/* One moment of a rank's timeline; at one time, entries come before the
 * events inside a call, which come before exits. */
enum point_type {
	PT_ENTER,
	PT_COLL_BEGIN,
	PT_AT,      /* the event's own time (t0): sends, arrivals, completions */
	PT_RECV,    /* the receive half of a TRACE_EV_CALL_P2P, at its exit */
	PT_COLL_END,
	PT_LEAVE,
};

struct point {
	uint64_t t;
	uint32_t type; /* enum point_type, also the order at equal times */
	uint32_t seq;
	const struct trace_event *e;
};

static struct {
	const char *dir;
	int quiet, keep;
	int size;                 /* ranks */
	struct piece **pieces;    /* by rank; NULL: no piece */
	int *rank_of_node;        /* BIP node -> rank, -1 */
	int nnodes;
	uint64_t tmin, tmax;
	/* BIP messages per (node pair): sent and taken, to pair flows. */
	uint64_t *sent, *taken, *base;
} m;

static void say(const char *fmt, ...)
{
	va_list ap;

	if (m.quiet)
		return;
	va_start(ap, fmt);
	fputs("biptrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("biptrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static struct piece *load_piece(const char *path)
{
	struct piece *p = calloc(1, sizeof(*p));
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!p || !f)
		goto fail;
	if (fread(&p->h, sizeof(p->h), 1, f) != 1 || p->h.magic != TRACE_PIECE_MAGIC) {
		warn("%s: not a piece of a trace", path);
		goto fail;
	}
	if (p->h.version != TRACE_PIECE_VERSION || p->h.nregions != TRACE_NREGIONS) {
		warn("%s: written by another version of the tracer (version %u, %u calls)", path,
		     p->h.version, p->h.nregions);
		goto fail;
	}
	if (p->h.rank < 0 || p->h.size <= p->h.rank || p->h.nevents > SIZE_MAX / sizeof(*p->ev)) {
		warn("%s: a bad header", path);
		goto fail;
	}
	p->ev = malloc((size_t)p->h.nevents * sizeof(*p->ev) + 1);
	if (!p->ev)
		goto fail;
	n = fread(p->ev, sizeof(*p->ev), (size_t)p->h.nevents, f);
	if (n != p->h.nevents) {
		warn("%s: cut short (%zu events of %" PRIu64 "); the rest is used", path, n,
		     p->h.nevents);
		p->h.nevents = n;
	}
	p->h.host[sizeof(p->h.host) - 1] = '\0';
	fclose(f);
	return p;
fail:
	if (f)
		fclose(f);
	if (p)
		free(p->ev);
	free(p);
	return NULL;
}

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void add_point(struct piece *p, uint64_t t, enum point_type type,
		      const struct trace_event *e)
{
	struct point *pt = &p->pt[p->npt];

	pt->t = t + (uint64_t)p->h.clock_offset;
	pt->type = type;
	pt->seq = (uint32_t)p->npt;
	pt->e = e;
	p->npt++;
}

/* The piece's timeline: at most four points per event. */
static int order_piece(struct piece *p)
{
	size_t i;

	p->pt = malloc(((size_t)p->h.nevents * 4 + 1) * sizeof(*p->pt));
	if (!p->pt)
		return -1;
	for (i = 0; i < p->h.nevents; i++) {
		const struct trace_event *e = &p->ev[i];

		switch (e->kind) {
		case TRACE_EV_CALL:
		case TRACE_EV_CALL_P2P:
		case TRACE_EV_CALL_ISEND:
		case TRACE_EV_CALL_IRECV:
		case TRACE_EV_CALL_COLL:
			if (e->region >= TRACE_NREGIONS || e->t1 < e->t0)
				continue;
			add_point(p, e->t0, PT_ENTER, e);
			add_point(p, e->t1, PT_LEAVE, e);
			if (e->kind == TRACE_EV_CALL_COLL) {
				add_point(p, e->t0, PT_COLL_BEGIN, e);
				add_point(p, e->t1, PT_COLL_END, e);
			} else if (e->kind == TRACE_EV_CALL_P2P) {
				if (e->dst != TRACE_NO_PEER)
					add_point(p, e->t0, PT_AT, e);
				if (e->src != TRACE_NO_PEER)
					add_point(p, e->t1, PT_RECV, e);
			} else if (e->kind != TRACE_EV_CALL) {
				add_point(p, e->t0, PT_AT, e);
			}
			break;
		case TRACE_EV_ISEND_DONE:
		case TRACE_EV_IRECV_DONE:
		case TRACE_EV_BIP_SEND:
		case TRACE_EV_BIP_RECV:
		case TRACE_EV_BIP_LONG:
			add_point(p, e->t0, PT_AT, e);
			break;
		default:
			break;
		}
	}
	qsort(p->pt, p->npt, sizeof(*p->pt), cmp_point);
	if (p->npt) {
		if (p->pt[0].t < m.tmin)
			m.tmin = p->pt[0].t;
		if (p->pt[p->npt - 1].t > m.tmax)
			m.tmax = p->pt[p->npt - 1].t;
	}
	return 0;
}

static int load_pieces(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;
	int r, found = 0;

	snprintf(path, sizeof(path), "%s/ranks", m.dir);
	dir = opendir(path);
	if (!dir) {
		warn("%s: %s (no rank made it: no rank went through MPI_Init's C function with "
		     "the tracer loaded?)", path, strerror(errno));
		return -1;
	}
	while ((d = readdir(dir))) {
		struct piece *p;
		char *end;
		long rank = strtol(d->d_name, &end, 10);

		if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end)
			continue;
		snprintf(path, sizeof(path), "%s/ranks/%s", m.dir, d->d_name);
		p = load_piece(path);
		if (!p)
			continue;
		if (p->h.rank != rank) {
			warn("%s: the piece of rank %d", path, p->h.rank);
			free(p->ev);
			free(p);
			continue;
		}
		if (p->h.size > m.size) {
			struct piece **more = realloc(m.pieces, (size_t)p->h.size * sizeof(*more));

			if (!more)
				return -1;
			memset(more + m.size, 0, (size_t)(p->h.size - m.size) * sizeof(*more));
			m.pieces = more;
			m.size = p->h.size;
		}
		m.pieces[rank] = p;
		if (p->h.node + 1 > m.nnodes)
			m.nnodes = p->h.node + 1;
		found++;
	}
	closedir(dir);
	if (!found) {
		warn("%s/ranks: no piece of a trace (no rank went through MPI_Init's C "
		     "function with the tracer loaded: a Fortran program, or not an MPI program?)",
		     m.dir);
		return -1;
	}
	m.rank_of_node = malloc((size_t)m.nnodes * sizeof(int));
	if (!m.rank_of_node)
		return -1;
	for (r = 0; r < m.nnodes; r++)
		m.rank_of_node[r] = -1;
	m.tmin = UINT64_MAX;
	for (r = 0; r < m.size; r++) {
		if (!m.pieces[r]) {
			warn("rank %d left no piece (killed before it could write it?): its timeline "
			     "is missing", r);
			continue;
		}
		if (!m.pieces[r]->h.complete)
			say("rank %d's piece was written on a signal or at exit, not at MPI_Finalize",
			    r);
		if (m.pieces[r]->h.node >= 0)
			m.rank_of_node[m.pieces[r]->h.node] = r;
		if (order_piece(m.pieces[r]) < 0)
			return -1;
	}
	if (m.tmin == UINT64_MAX)
		m.tmin = m.tmax = 0;
	return 0;
}

/* The BIP messages of each pair of nodes, sent and taken: a flow is
 * drawn for the numbers both sides have. */
static int count_messages(void)
{
	size_t n = (size_t)m.nnodes * (size_t)m.nnodes, i, k;
	uint64_t next = 1;
	int r;

	m.sent = calloc(n, sizeof(*m.sent));
	m.taken = calloc(n, sizeof(*m.taken));
	m.base = calloc(n, sizeof(*m.base));
	if (!m.sent || !m.taken || !m.base)
		return -1;
	for (r = 0; r < m.size; r++) {
		struct piece *p = m.pieces[r];

		for (i = 0; p && i < p->h.nevents; i++) {
			const struct trace_event *e = &p->ev[i];

			if (e->kind == TRACE_EV_BIP_SEND && e->dst >= 0 && e->dst < m.nnodes) {
				k = (size_t)p->h.node * (size_t)m.nnodes + (size_t)e->dst;
				if (e->req + 1 > m.sent[k])
					m.sent[k] = e->req + 1;
			} else if (e->kind == TRACE_EV_BIP_RECV && e->src >= 0 &&
				   e->src < m.nnodes) {
				k = (size_t)e->src * (size_t)m.nnodes + (size_t)p->h.node;
				if (e->req + 1 > m.taken[k])
					m.taken[k] = e->req + 1;
			}
		}
	}
	for (k = 0; k < n; k++) {
		uint64_t both = m.sent[k] < m.taken[k] ? m.sent[k] : m.taken[k];

		m.base[k] = next;
		next += both;
		if (m.sent[k] != m.taken[k] && m.rank_of_node[k / (size_t)m.nnodes] >= 0 &&
		    m.rank_of_node[k % (size_t)m.nnodes] >= 0)
			say("node %zu to node %zu: %" PRIu64 " BIP messages sent, %" PRIu64
			    " taken (in flight at the end, or a piece cut short)",
			    k / (size_t)m.nnodes, k % (size_t)m.nnodes, m.sent[k], m.taken[k]);
	}
	return 0;
}

/* The flow id of message seq from node src to node dst, 0 if one of its
 * ends is not in the trace. */
static uint64_t flow_id(int src, int dst, uint64_t seq)
{
	size_t k;

	if (src < 0 || dst < 0 || src >= m.nnodes || dst >= m.nnodes)
		return 0;
	k = (size_t)src * (size_t)m.nnodes + (size_t)dst;
	if (seq >= m.sent[k] || seq >= m.taken[k])
		return 0;
	return m.base[k] + seq;
}

/* --- OTF2 --- */

enum { COMM_WORLD = 0, COMM_BIP = 1 };
enum { GROUP_LOCATIONS = 0, GROUP_WORLD = 1, GROUP_BIP = 2 };

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
				void *caller, bool final)
{
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
	return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = {
	.otf2_pre_flush = pre_flush,
	.otf2_post_flush = post_flush,
};

static OTF2_CollectiveOp otf2_coll(unsigned c)
{
	static const OTF2_CollectiveOp ops[] = {
		[TRACE_COLL_BARRIER] = OTF2_COLLECTIVE_OP_BARRIER,
		[TRACE_COLL_BCAST] = OTF2_COLLECTIVE_OP_BCAST,
		[TRACE_COLL_REDUCE] = OTF2_COLLECTIVE_OP_REDUCE,
		[TRACE_COLL_ALLREDUCE] = OTF2_COLLECTIVE_OP_ALLREDUCE,
		[TRACE_COLL_GATHER] = OTF2_COLLECTIVE_OP_GATHER,
		[TRACE_COLL_SCATTER] = OTF2_COLLECTIVE_OP_SCATTER,
		[TRACE_COLL_ALLGATHER] = OTF2_COLLECTIVE_OP_ALLGATHER,
		[TRACE_COLL_ALLTOALL] = OTF2_COLLECTIVE_OP_ALLTOALL,
		[TRACE_COLL_REDUCE_SCATTER_BLOCK] = OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
		[TRACE_COLL_SCAN] = OTF2_COLLECTIVE_OP_SCAN,
		[TRACE_COLL_EXSCAN] = OTF2_COLLECTIVE_OP_EXSCAN,
	};

	return c < sizeof(ops) / sizeof(ops[0]) ? ops[c] : OTF2_COLLECTIVE_OP_BARRIER;
}

static int ok(OTF2_ErrorCode rc, const char *what)
{
	if (rc == OTF2_SUCCESS)
		return 0;
	warn("OTF2 %s: %s", what, OTF2_Error_GetDescription(rc));
	return -1;
}

/* The MPI events of one point (not the entry and exit): the count. */
static int otf2_point(OTF2_EvtWriter *w, const struct piece *p, const struct point *pt,
		      uint64_t *n)
{
	const struct trace_event *e = pt->e;
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	int peer;

	switch (pt->type) {
	case PT_ENTER:
		rc = OTF2_EvtWriter_Enter(w, NULL, pt->t, e->region);
		break;
	case PT_LEAVE:
		rc = OTF2_EvtWriter_Leave(w, NULL, pt->t, e->region);
		break;
	case PT_COLL_BEGIN:
		if (e->comm != TRACE_COMM_WORLD)
			return 0;
		rc = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, pt->t);
		break;
	case PT_COLL_END:
		if (e->comm != TRACE_COMM_WORLD)
			return 0;
		rc = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, pt->t, otf2_coll(e->coll), COMM_WORLD,
						     e->dst >= 0 ? (uint32_t)e->dst :
								   OTF2_UNDEFINED_UINT32,
						     e->sent, e->recvd);
		break;
	case PT_RECV:
		if (e->comm != TRACE_COMM_WORLD)
			return 0;
		rc = OTF2_EvtWriter_MpiRecv(w, NULL, pt->t, (uint32_t)e->src, COMM_WORLD,
					    (uint32_t)e->rtag, e->recvd);
		break;
	case PT_AT:
		switch (e->kind) {
		case TRACE_EV_CALL_P2P:
			if (e->comm != TRACE_COMM_WORLD)
				return 0;
			rc = OTF2_EvtWriter_MpiSend(w, NULL, pt->t, (uint32_t)e->dst, COMM_WORLD,
						    (uint32_t)e->stag, e->sent);
			break;
		case TRACE_EV_CALL_ISEND:
			if (e->comm != TRACE_COMM_WORLD || !e->req || e->dst == TRACE_NO_PEER)
				return 0;
			rc = OTF2_EvtWriter_MpiIsend(w, NULL, pt->t, (uint32_t)e->dst, COMM_WORLD,
						     (uint32_t)e->stag, e->sent, e->req);
			break;
		case TRACE_EV_CALL_IRECV:
			if (e->comm != TRACE_COMM_WORLD || !e->req)
				return 0;
			rc = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, pt->t, e->req);
			break;
		case TRACE_EV_ISEND_DONE:
			if (e->comm != TRACE_COMM_WORLD)
				return 0;
			rc = OTF2_EvtWriter_MpiIsendComplete(w, NULL, pt->t, e->req);
			break;
		case TRACE_EV_IRECV_DONE:
			if (e->comm != TRACE_COMM_WORLD)
				return 0;
			if (e->src == TRACE_NO_PEER)
				rc = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, pt->t, e->req);
			else
				rc = OTF2_EvtWriter_MpiIrecv(w, NULL, pt->t, (uint32_t)e->src,
							     COMM_WORLD, (uint32_t)e->rtag,
							     e->recvd, e->req);
			break;
		case TRACE_EV_BIP_SEND:
			peer = e->dst < m.nnodes ? m.rank_of_node[e->dst] : -1;
			if (peer < 0)
				return 0;
			rc = OTF2_EvtWriter_MpiSend(w, NULL, pt->t, (uint32_t)peer, COMM_BIP,
						    (uint32_t)e->stag, e->sent);
			break;
		case TRACE_EV_BIP_RECV:
			peer = e->src < m.nnodes ? m.rank_of_node[e->src] : -1;
			if (peer < 0)
				return 0;
			rc = OTF2_EvtWriter_MpiRecv(w, NULL, pt->t, (uint32_t)peer, COMM_BIP,
						    (uint32_t)e->rtag, e->recvd);
			break;
		default:
			return 0;
		}
		break;
	}
	(*n)++;
	(void)p;
	return ok(rc, "event");
}

static OTF2_StringRef nstrings;

static OTF2_StringRef str(OTF2_GlobalDefWriter *g, const char *s)
{
	OTF2_GlobalDefWriter_WriteString(g, nstrings, s);
	return nstrings++;
}

static OTF2_RegionRole region_role(const char *name)
{
	static const char *const coll[] = { "MPI_Barrier", "MPI_Bcast", "MPI_Reduce",
					    "MPI_Allreduce", "MPI_Gather", "MPI_Scatter",
					    "MPI_Allgather", "MPI_Alltoall", "MPI_Scan",
					    "MPI_Exscan", "MPI_Reduce_scatter_block" };
	static const char *const p2p[] = { "MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend",
					   "MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace",
					   "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend",
					   "MPI_Irecv" };
	size_t i;

	if (!strcmp(name, "MPI_Barrier"))
		return OTF2_REGION_ROLE_BARRIER;
	for (i = 0; i < sizeof(coll) / sizeof(coll[0]); i++)
		if (!strcmp(name, coll[i]))
			return OTF2_REGION_ROLE_COLL_ALL2ALL;
	for (i = 0; i < sizeof(p2p) / sizeof(p2p[0]); i++)
		if (!strcmp(name, p2p[i]))
			return OTF2_REGION_ROLE_POINT2POINT;
	return OTF2_REGION_ROLE_FUNCTION;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int write_otf2(void)
{
	OTF2_Archive *ar;
	OTF2_GlobalDefWriter *g;
	char path[PATH_MAX];
	uint64_t *members;
	int r, i, nhosts = 0, rc = -1;
	const char **hosts;

	/* A previous archive of the same name goes. */
	snprintf(path, sizeof(path), "%s/traces", m.dir);
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(path, sizeof(path), "%s/traces.otf2", m.dir);
	remove(path);
	snprintf(path, sizeof(path), "%s/traces.def", m.dir);
	remove(path);

	ar = OTF2_Archive_Open(m.dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
			       4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!ar) {
		warn("%s/traces.otf2: cannot make the archive", m.dir);
		return -1;
	}
	if (ok(OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, NULL), "flush callbacks") ||
	    ok(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "collective callbacks") ||
	    ok(OTF2_Archive_SetCreator(ar, "biptrace (BIP)"), "creator") ||
	    ok(OTF2_Archive_OpenEvtFiles(ar), "event files"))
		goto close;

	for (r = 0; r < m.size; r++) {
		struct piece *p = m.pieces[r];
		OTF2_EvtWriter *w;
		size_t k;

		if (!p)
			continue;
		w = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)r);
		if (!w)
			goto close;
		for (k = 0; k < p->npt; k++)
			if (otf2_point(w, p, &p->pt[k], &p->otf2_events) < 0)
				goto close;
		if (ok(OTF2_Archive_CloseEvtWriter(ar, w), "event writer"))
			goto close;
	}
	if (ok(OTF2_Archive_CloseEvtFiles(ar), "event files"))
		goto close;
	/* Readers open every location's local definitions: empty ones. */
	if (ok(OTF2_Archive_OpenDefFiles(ar), "definition files"))
		goto close;
	for (r = 0; r < m.size; r++) {
		OTF2_DefWriter *dw;

		if (!m.pieces[r])
			continue;
		dw = OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)r);
		if (!dw || ok(OTF2_Archive_CloseDefWriter(ar, dw), "local definitions"))
			goto close;
	}
	if (ok(OTF2_Archive_CloseDefFiles(ar), "definition files"))
		goto close;

	g = OTF2_Archive_GetGlobalDefWriter(ar);
	if (!g)
		goto close;
	OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000ull, m.tmin, m.tmax - m.tmin + 1,
						  OTF2_UNDEFINED_TIMESTAMP);
	{
		OTF2_StringRef empty = str(g, ""), machine = str(g, "machine"), node = str(g, "node");

		OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str(g, "job"), machine,
							 OTF2_UNDEFINED_SYSTEM_TREE_NODE);
		hosts = calloc((size_t)m.size, sizeof(*hosts));
		members = calloc((size_t)m.size + 1, sizeof(*members));
		if (!hosts || !members)
			goto close;
		for (r = 0; r < m.size; r++) {
			const char *host = m.pieces[r] ? m.pieces[r]->h.host : "?";
			char name[64];

			for (i = 0; i < nhosts && strcmp(hosts[i], host); i++)
				;
			if (i == nhosts) {
				hosts[nhosts++] = host;
				OTF2_GlobalDefWriter_WriteSystemTreeNode(g, (uint32_t)i + 1,
									 str(g, host), node, 0);
			}
			snprintf(name, sizeof(name), "rank %d", r);
			OTF2_GlobalDefWriter_WriteLocationGroup(
				g, (uint32_t)r, str(g, name), OTF2_LOCATION_GROUP_TYPE_PROCESS,
				(uint32_t)i + 1, OTF2_UNDEFINED_LOCATION_GROUP);
			OTF2_GlobalDefWriter_WriteLocation(g, (uint64_t)r, str(g, name),
							   OTF2_LOCATION_TYPE_CPU_THREAD,
							   m.pieces[r] ? m.pieces[r]->otf2_events : 0,
							   (uint32_t)r);
			members[r] = (uint64_t)r;
		}
		for (i = 0; i < TRACE_NREGIONS; i++) {
			OTF2_StringRef name = str(g, trace_region_names[i]);

			OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)i, name, name, empty,
							 region_role(trace_region_names[i]),
							 OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
							 empty, 0, 0);
		}
		OTF2_GlobalDefWriter_WriteGroup(g, GROUP_LOCATIONS, str(g, "MPI processes"),
						OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
						OTF2_GROUP_FLAG_NONE, (uint32_t)m.size, members);
		OTF2_GlobalDefWriter_WriteGroup(g, GROUP_WORLD, str(g, "MPI_COMM_WORLD"),
						OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
						OTF2_GROUP_FLAG_NONE, (uint32_t)m.size, members);
		OTF2_GlobalDefWriter_WriteGroup(g, GROUP_BIP, str(g, "BIP nodes"),
						OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
						OTF2_GROUP_FLAG_NONE, (uint32_t)m.size, members);
		OTF2_GlobalDefWriter_WriteComm(g, COMM_WORLD, str(g, "MPI_COMM_WORLD"), GROUP_WORLD,
					       OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
		OTF2_GlobalDefWriter_WriteComm(g, COMM_BIP, str(g, "BIP messages"), GROUP_BIP,
					       OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
		free(hosts);
		free(members);
	}
	if (ok(OTF2_Archive_CloseGlobalDefWriter(ar, g), "definitions"))
		goto close;
	rc = 0;
close:
	if (OTF2_Archive_Close(ar) != OTF2_SUCCESS)
		rc = -1;
	return rc;
}

/* --- JSON --- */

static double us(uint64_t t)
{
	return (double)(t - m.tmin) / 1000.0;
}

static void json_peer(FILE *f, const char *key, int peer)
{
	if (peer == TRACE_NO_PEER)
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%d", key, peer);
}

static const char *comm_name(const struct trace_event *e)
{
	return e->comm == TRACE_COMM_WORLD ? "MPI_COMM_WORLD" : "other";
}

/* A call, as a complete event, at its entry. */
static void json_call(FILE *f, int r, const struct point *pt)
{
	const struct trace_event *e = pt->e;

	fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"MPI\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,"
		   "\"ts\":%.3f,\"dur\":%.3f,\"args\":{",
		trace_region_names[e->region], r, us(pt->t),
		(double)(e->t1 - e->t0) / 1000.0);
	switch (e->kind) {
	case TRACE_EV_CALL_P2P:
		fprintf(f, "\"comm\":\"%s\"", comm_name(e));
		json_peer(f, "dest", e->dst);
		if (e->dst != TRACE_NO_PEER)
			fprintf(f, ",\"sendtag\":%d,\"sent_bytes\":%" PRIu64, e->stag, e->sent);
		json_peer(f, "source", e->src);
		if (e->src != TRACE_NO_PEER)
			fprintf(f, ",\"recvtag\":%d,\"received_bytes\":%" PRIu64, e->rtag,
				e->recvd);
		break;
	case TRACE_EV_CALL_ISEND:
		fprintf(f, "\"comm\":\"%s\"", comm_name(e));
		json_peer(f, "dest", e->dst);
		fprintf(f, ",\"tag\":%d,\"bytes\":%" PRIu64 ",\"request\":%" PRIu64, e->stag,
			e->sent, e->req);
		break;
	case TRACE_EV_CALL_IRECV:
		fprintf(f, "\"comm\":\"%s\",\"source\":%d,\"tag\":%d,\"request\":%" PRIu64,
			comm_name(e), e->src, e->rtag, e->req);
		break;
	case TRACE_EV_CALL_COLL:
		fprintf(f, "\"comm\":\"%s\"", comm_name(e));
		json_peer(f, "root", e->dst);
		fprintf(f, ",\"sent_bytes\":%" PRIu64 ",\"received_bytes\":%" PRIu64, e->sent,
			e->recvd);
		break;
	default:
		break;
	}
	fputs("}}", f);
}

static void json_at(FILE *f, int r, const struct piece *p, const struct point *pt)
{
	const struct trace_event *e = pt->e;
	uint64_t id;

	switch (e->kind) {
	case TRACE_EV_BIP_SEND:
		id = flow_id(p->h.node, e->dst, e->req);
		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"bip\",\"name\":\"BIP send\","
			   "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"to_node\":%d,\"tag\":%d,"
			   "\"bytes\":%" PRIu64 ",\"number\":%" PRIu64 "}}",
			r, us(pt->t), e->dst, e->stag, e->sent, e->req);
		if (id)
			fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"bip\",\"name\":\"BIP message\","
				   "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"id\":%" PRIu64 "}",
				r, us(pt->t), id);
		break;
	case TRACE_EV_BIP_RECV:
		id = flow_id(e->src, p->h.node, e->req);
		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"bip\",\"name\":\"BIP arrival\","
			   "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"from_node\":%d,\"tag\":%d,"
			   "\"bytes\":%" PRIu64 ",\"number\":%" PRIu64 "}}",
			r, us(pt->t), e->src, e->rtag, e->recvd, e->req);
		if (id)
			fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"bip\",\"name\":\"BIP "
				   "message\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"id\":%" PRIu64 "}",
				r, us(pt->t), id);
		break;
	case TRACE_EV_BIP_LONG:
		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"bip\",\"name\":\"BIP long part\","
			   "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"from_node\":%d,"
			   "\"bytes\":%" PRIu64 ",\"number\":%" PRIu64 "}}",
			r, us(pt->t), e->src, e->recvd, e->req);
		break;
	case TRACE_EV_ISEND_DONE:
	case TRACE_EV_IRECV_DONE:
		fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"MPI\",\"name\":\"request done\","
			   "\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"request\":%" PRIu64,
			r, us(pt->t), e->req);
		if (e->kind == TRACE_EV_IRECV_DONE) {
			json_peer(f, "source", e->src);
			fprintf(f, ",\"tag\":%d,\"bytes\":%" PRIu64, e->rtag, e->recvd);
		}
		fputs("}}", f);
		break;
	default:
		break;
	}
}

static int write_json(void)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s.json", m.dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		warn("%s: %s", tmp, strerror(errno));
		return -1;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"CLOCK_MONOTONIC of rank 0's "
	      "host, from the job's first event\"},\"traceEvents\":[\n",
	      f);
	fputs("{\"ph\":\"M\",\"name\":\"trace\",\"pid\":0,\"args\":{\"name\":\"biptrace\"}}", f);
	for (r = 0; r < m.size; r++) {
		struct piece *p = m.pieces[r];
		size_t k;

		if (!p)
			continue;
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":"
			   "{\"name\":\"rank %d (%s)\"}}", r, r, p->h.host);
		fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":"
			   "{\"sort_index\":%d}}", r, r);
		for (k = 0; k < p->npt; k++) {
			if (p->pt[k].type == PT_ENTER)
				json_call(f, r, &p->pt[k]);
			else if (p->pt[k].type == PT_AT && p->pt[k].e->kind >= TRACE_EV_ISEND_DONE)
				json_at(f, r, p, &p->pt[k]);
		}
	}
	fputs("\n]}\n", f);
	if (ferror(f) | fclose(f) || rename(tmp, path) < 0) {
		warn("%s: %s", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

static void remove_pieces(void)
{
	char path[PATH_MAX];
	int r;

	for (r = 0; r < m.size; r++) {
		snprintf(path, sizeof(path), "%s/ranks/%d", m.dir, r);
		remove(path);
	}
	snprintf(path, sizeof(path), "%s/ranks", m.dir);
	rmdir(path);
}

/* --lib: see the header. */
static int print_library(void)
{
	char self[PATH_MAX], path[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libbip_trace.so", self);
			if (access(path, R_OK) == 0) {
				printf("%s\n", path);
				return 0;
			}
		}
	}
	snprintf(path, sizeof(path), "%s/libbip_trace.so", BIP_TRACE_LIBDIR);
	if (access(path, R_OK) < 0) {
		warn("%s: %s", path, strerror(errno));
		return 1;
	}
	printf("%s\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	if (argc == 2 && !strcmp(argv[1], "--lib"))
		return print_library();

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-q")) {
			m.quiet = 1;
		} else if (!strcmp(argv[i], "-k")) {
			m.keep = 1;
		} else {
			fprintf(stderr, "usage: biptrace [-q] [-k] DIR\n       biptrace --lib\n");
			return 2;
		}
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: biptrace [-q] [-k] DIR\n       biptrace --lib\n");
		return 2;
	}
	m.dir = argv[i];
	if (load_pieces() < 0 || count_messages() < 0)
		return 1;
	if (write_otf2() < 0 || write_json() < 0)
		return 1;
	if (!m.keep)
		remove_pieces();
	say("%s/traces.otf2 and %s.json: %d rank%s", m.dir, m.dir, m.size, m.size > 1 ? "s" : "");
	return 0;
}
