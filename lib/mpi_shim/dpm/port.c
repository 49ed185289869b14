/* SPDX-License-Identifier: MIT */
/*
 * port.c - ports (MPI-3.1 10.4.2, 10.4.3): MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect.
 *
 * A port name is
 *
 *     bip:JOBID:NODE:CAPABILITY
 *
 * JOBID the job's id (bip_layer_jobid: 1 to 33 letters and digits), NODE
 * the node of the process that opened it (decimal), CAPABILITY 128 bits
 * from getrandom in 32 hex digits.  Knowing the name is what lets a
 * process connect: the capability cannot be guessed, and it is compared
 * in constant time.  BIP moves messages only between the nodes of one
 * job, so a name of another job is refused at once (MPI_ERR_PORT); a
 * program started apart connects to a job by joining it (bipload
 * --attach, scripts/bipload_attach.c), as a group of its own.
 *
 * The protocol, on the channel (dpm.h):
 *
 *   connector's leader                     the port's process
 *   post the receive of the answer
 *   request {1, key, capability} --------> (tag kind 0, from node S)
 *                                          its listener (below) checks the
 *                                          capability against its open
 *                                          ports: none matches -> answer
 *                                          {key, MPI_ERR_PORT} at once;
 *                                          one does -> queued on that port
 *                                          (first come, first served)
 *                                          MPI_Comm_accept's leader takes
 *                                          the first request of its port:
 *                      <------------------ answer {key, MPI_SUCCESS} (kind 1)
 *   both leaders bridge with the connector's key (dpm.h)
 *
 * The connector waits for the answer up to its time-out (info key
 * "timeout" in seconds at the root, else BIP_CONNECT_TIMEOUT, else 10):
 * then it withdraws the receive, tells the port's process that it gives
 * up (a bridge header of size 0, which that process's accept reads
 * instead of the connector's header if it takes the request later, and
 * goes on to the next request) and fails with MPI_ERR_PORT.  An answer
 * that comes after that is left unread; the header of a give-up whose
 * request was never taken too: 32 bytes each, only after a time-out.
 *
 * The listener: from the first MPI_Open_port of the process until
 * MPI_Finalize, a receive from any node is posted on the channel's tag
 * kind 0 and a progress hook (engine.h, run at each progress) takes what
 * it received and posts it again, so that requests are answered or
 * queued whenever this process makes progress, inside an accept or not.
 * A process that never opened a port has no listener: a request sent to
 * it stays queued there, and its connector times out.  What listening
 * costs a process that opened a port: the hook's test at each progress,
 * and one entry in the list of receives from any source, which each
 * arrival of the process looks at.
 *
 * Closing a port refuses the requests queued on it; so does MPI_Finalize
 * for the ports still open, and a request that comes after it goes
 * unanswered.  A port is this
 * process's: MPI_Comm_accept and MPI_Close_port take only the names this
 * process opened.  The leaders of accept and connect may be any rank of
 * any intra-communicator, so two parts of one job (after MPI_Comm_split,
 * say) connect to each other, as well as processes of one job that only
 * learned each other's port name (MPI_Lookup_name).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"
#include "engine.h"
#include "p2p.h"
#include "dpm.h"

#define CAP_BYTES 16
#define REQUEST_CONNECT 1u

/* Messages on the channel; both well under the shortest eager size. */
struct port_request {
	uint32_t what; /* REQUEST_CONNECT */
	uint32_t unused;
	uint64_t key;
	unsigned char cap[CAP_BYTES];
};

struct port_answer {
	uint64_t key;
	int32_t verdict; /* MPI_SUCCESS, or MPI_ERR_PORT */
	int32_t unused;
};

_Static_assert(sizeof(struct port_request) == 32, "the request of a connect");
_Static_assert(sizeof(struct port_answer) == 16, "the answer to a connect");

/* A connect waiting on a port. */
struct port_conn {
	struct port_conn *next;
	int node;
	uint64_t key;
};

struct port {
	struct port *next;
	unsigned char cap[CAP_BYTES];
	char name[MPI_MAX_PORT_NAME];
	struct port_conn *head, *tail;
	int waiters; /* accepts waiting on it (other threads may close it) */
	int closed;
};

/* An answer on its way: its buffer lives until the send is done. */
struct port_sent {
	struct port_sent *next;
	MPI_Request req;
	struct port_answer answer;
};

static struct {
	struct port *ports;
	int hook;               /* the listener's progress hook, or -1 */
	int listening;
	MPI_Request listen;     /* the posted receive, or MPI_REQUEST_NULL */
	struct port_request msg;
	struct port_sent *sent;
} pt = { .hook = -1 };

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 1 if a and b hold the same capability; the time does not depend on
 * where they differ. */
static int cap_equal(const unsigned char *a, const unsigned char *b)
{
	unsigned diff = 0;
	int i;

	for (i = 0; i < CAP_BYTES; i++)
		diff |= (unsigned)(a[i] ^ b[i]);
	return diff == 0;
}

/* The open port whose capability is cap, or NULL; every port is compared. */
static struct port *port_by_cap(const unsigned char *cap)
{
	struct port *p, *found = NULL;

	for (p = pt.ports; p; p = p->next)
		if (cap_equal(p->cap, cap))
			found = p;
	return found;
}

/*
 * Parse a port name: MPI_SUCCESS and its job id, node and capability, or
 * MPI_ERR_PORT with why filled.
 */
static int port_parse(const char *name, char *jobid, size_t jlen, int *node_p,
		      unsigned char *cap, char *why, size_t wlen)
{
	const char *s = name, *colon;
	unsigned long long node = 0;
	size_t n, i;
	int hi, lo;

	if (!name) {
		snprintf(why, wlen, "the port name is NULL");
		return MPI_ERR_PORT;
	}
	n = strnlen(name, MPI_MAX_PORT_NAME);
	if (n == MPI_MAX_PORT_NAME || strncmp(s, "bip:", 4)) {
		snprintf(why, wlen, "\"%.80s\" is not a port name of this library "
			 "(bip:JOBID:NODE:CAPABILITY)", name);
		return MPI_ERR_PORT;
	}
	s += 4;
	colon = strchr(s, ':');
	if (!colon || colon == s || (size_t)(colon - s) >= jlen)
		goto malformed;
	for (i = 0; s + i < colon; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			goto malformed;
	memcpy(jobid, s, (size_t)(colon - s));
	jobid[colon - s] = '\0';
	s = colon + 1;
	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 9)
			goto malformed;
		node = node * 10 + (unsigned)(s[i] - '0');
	}
	if (i == 0 || s[i] != ':')
		goto malformed;
	s += i + 1;
	if (strlen(s) != 2 * CAP_BYTES)
		goto malformed;
	for (i = 0; i < CAP_BYTES; i++) {
		hi = hexval(s[2 * i]);
		lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			goto malformed;
		cap[i] = (unsigned char)(hi << 4 | lo);
	}
	*node_p = (int)node;
	return MPI_SUCCESS;

malformed:
	snprintf(why, wlen, "\"%.80s\" is not a well-formed port name "
		 "(bip:JOBID:NODE:CAPABILITY, 32 hex digits)", name);
	return MPI_ERR_PORT;
}

/* One of this process's open ports by name, or NULL. */
static struct port *port_by_name(const char *name)
{
	unsigned char cap[CAP_BYTES];
	char jobid[48], why[8];
	int node;

	if (port_parse(name, jobid, sizeof(jobid), &node, cap, why, sizeof(why)) ||
	    node != mpi_shim.world_rank || strcmp(jobid, bip_layer_jobid()))
		return NULL;
	return port_by_cap(cap);
}

/* --- the listener --- */

static void answer_sent_reap(void)
{
	struct port_sent **pp = &pt.sent, *s;

	while ((s = *pp)) {
		if (s->req->done) {
			*pp = s->next;
			(void)mpi_shim_request_wait(&s->req, MPI_STATUS_IGNORE);
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

/* Send the answer without waiting (from the hook as well as a call). */
static void answer_post(int node, uint64_t key, int verdict)
{
	struct port_sent *s = malloc(sizeof(*s));
	MPI_Comm ch = mpi_shim_dpm_channel();

	if (!s || !ch) {
		free(s);
		return; /* the connector times out */
	}
	s->answer.key = key;
	s->answer.verdict = verdict;
	s->answer.unused = 0;
	if (mpi_shim_coll_isend(&s->answer, sizeof(s->answer), MPI_BYTE, node,
				MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_ANSWER, key), ch, &s->req)) {
		free(s);
		return;
	}
	s->next = pt.sent;
	pt.sent = s;
}

static void listen_post(void)
{
	MPI_Comm ch = mpi_shim_dpm_channel();

	pt.listen = MPI_REQUEST_NULL;
	if (ch && mpi_shim_coll_irecv(&pt.msg, sizeof(pt.msg), MPI_BYTE, MPI_ANY_SOURCE,
				      MPI_SHIM_DPM_TAG_REQUEST, ch, &pt.listen))
		pt.listen = MPI_REQUEST_NULL;
}

static void request_take(int node, const struct port_request *m)
{
	struct port *p;
	struct port_conn *c;

	if (m->what != REQUEST_CONNECT || node < 0 || node >= mpi_shim_dpm_nodes())
		return;
	p = port_by_cap(m->cap);
	if (!p || !(c = malloc(sizeof(*c)))) {
		answer_post(node, m->key, MPI_ERR_PORT);
		return;
	}
	c->next = NULL;
	c->node = node;
	c->key = m->key;
	if (p->tail)
		p->tail->next = c;
	else
		p->head = c;
	p->tail = c;
}

/* The progress hook: what came is answered or queued, and the receive
 * posted again; answers sent are released. */
static void listener_run(void)
{
	MPI_Status st;
	int err;

	while (pt.listen != MPI_REQUEST_NULL && pt.listen->done) {
		struct port_request m = pt.msg;

		mpi_shim_status_empty(&st);
		err = mpi_shim_request_wait(&pt.listen, &st);
		pt.listen = MPI_REQUEST_NULL;
		if (!err && !st.mpi_shim_cancelled && st.mpi_shim_bytes == sizeof(m))
			request_take(st.MPI_SOURCE, &m);
		listen_post();
	}
	if (pt.sent)
		answer_sent_reap();
}

static int listener_start(void)
{
	if (pt.listening)
		return MPI_SUCCESS;
	if (!mpi_shim_dpm_channel())
		return MPI_ERR_NO_MEM;
	pt.hook = mpi_shim_progress_register(listener_run, MPI_SHIM_PROGRESS_ALWAYS);
	if (pt.hook < 0)
		return MPI_ERR_INTERN;
	listen_post();
	if (pt.listen == MPI_REQUEST_NULL) {
		mpi_shim_progress_unregister(pt.hook);
		pt.hook = -1;
		return MPI_ERR_NO_MEM;
	}
	pt.listening = 1;
	return MPI_SUCCESS;
}

/* --- the calls --- */

int PMPI_Open_port(MPI_Info info, char *port_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Open_port";
	struct port *p;
	int rc, i, len;

	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_info_check(MPI_COMM_NULL, info, call)))
		return rc;
	if (!port_name)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "port_name is NULL");
	if ((rc = listener_start()))
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "the listener of connect requests cannot start (%s)",
				    rc == MPI_ERR_NO_MEM ? "no memory" : "no progress hook left");
	p = calloc(1, sizeof(*p));
	if (!p)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no memory");
	if ((rc = mpi_shim_dpm_random(p->cap, sizeof(p->cap))) < 0) {
		free(p);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_OTHER, call,
				    "no random bytes from the kernel: %s", strerror(-rc));
	}
	len = snprintf(p->name, sizeof(p->name), "bip:%s:%d:", bip_layer_jobid(),
		       mpi_shim.world_rank);
	for (i = 0; i < CAP_BYTES; i++)
		len += snprintf(p->name + len, sizeof(p->name) - (size_t)len, "%02x", p->cap[i]);
	p->next = pt.ports;
	pt.ports = p;
	memcpy(port_name, p->name, (size_t)len + 1);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Open_port);

/* Refuse the requests queued on p, and free it unless an accept still
 * looks at it (that accept frees it). */
static void port_close(struct port *p)
{
	struct port **pp;
	struct port_conn *c;

	for (pp = &pt.ports; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	while ((c = p->head)) {
		p->head = c->next;
		answer_post(c->node, c->key, MPI_ERR_PORT);
		free(c);
	}
	p->tail = NULL;
	p->closed = 1;
	if (!p->waiters)
		free(p);
}

int PMPI_Close_port(const char *port_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Close_port";
	struct port *p;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!port_name)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "port_name is NULL");
	p = port_by_name(port_name);
	if (!p)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_PORT, call,
				    "\"%.80s\" is not a port that this process opened and has not "
				    "closed", port_name);
	port_close(p);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Close_port);

/* MPI_Finalize: what came is handled, the connects queued on the ports
 * still open are refused (a connect that comes later times out), and the
 * listener stops. */
void mpi_shim_dpm_ports_fini(void)
{
	struct port_sent *s;

	if (pt.listening)
		listener_run();
	while (pt.ports)
		port_close(pt.ports);
	if (pt.listening) {
		if (pt.listen != MPI_REQUEST_NULL) {
			(void)mpi_shim_recv_cancel(pt.listen);
			(void)mpi_shim_request_wait(&pt.listen, MPI_STATUS_IGNORE);
		}
		mpi_shim_progress_unregister(pt.hook);
	}
	pt.listen = MPI_REQUEST_NULL;
	pt.hook = -1;
	pt.listening = 0;
	/* An answer still in BIP's hands keeps its buffer (a few bytes):
	 * BIP sends it before it ends. */
	answer_sent_reap();
	while ((s = pt.sent)) {
		pt.sent = s->next;
		s->req->freed = 1;
	}
}

/* The checks of accept and connect that every member makes alike. */
static int check_collective(MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm,
			    const char *call)
{
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm(comm, call)))
		return rc;
	if (mpi_shim_is_inter(comm))
		return mpi_shim_err(comm, MPI_ERR_COMM, call,
				    "%s is an inter-communicator; an intra-communicator is needed",
				    comm->name[0] ? comm->name : "the communicator");
	if ((rc = mpi_shim_check_root(comm, root, call)))
		return rc;
	if (!newcomm)
		return mpi_shim_err(comm, MPI_ERR_ARG, call, "newcomm is NULL");
	if (comm->rank == root && (rc = mpi_shim_info_check(comm, info, call)))
		return rc;
	return MPI_SUCCESS;
}

/* The accept leader's part: take the first live connect of p. */
static void accept_leader(struct port *p, MPI_Comm comm, uint32_t ctx,
			  struct mpi_shim_dpm_far *far)
{
	struct bip_layer_wait w = { 0, 0 };
	struct port_conn *c;
	MPI_Comm ch = mpi_shim_dpm_channel();
	struct port_answer a;

	p->waiters++;
	for (;;) {
		mpi_shim_progress();
		if (p->closed) {
			far->err = MPI_ERR_PORT;
			snprintf(far->why, sizeof(far->why),
				 "the port was closed while MPI_Comm_accept waited on it");
			break;
		}
		if (!(c = p->head)) {
			if (mpi_shim_progress_wait(&w) < 0) {
				mpi_shim_progress();
				/* In a job that may grow, a command started
				 * apart may still join it and connect (bipload
				 * --attach): the accept waits on, napping. */
				if (!p->head && bip_universe() > bip_numnodes) {
					nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
					continue;
				}
				if (!p->head) {
					far->err = MPI_ERR_OTHER;
					snprintf(far->why, sizeof(far->why),
						 "every other process has ended: no connect can "
						 "come");
					break;
				}
			}
			continue;
		}
		p->head = c->next;
		if (!p->head)
			p->tail = NULL;
		a.key = c->key;
		a.verdict = MPI_SUCCESS;
		a.unused = 0;
		far->err = mpi_shim_coll_send(&a, sizeof(a), MPI_BYTE, c->node,
					      MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_ANSWER, c->key), ch);
		if (!far->err)
			mpi_shim_dpm_trade(comm, ctx, c->node, c->key, 0, far);
		free(c);
		if (far->err != MPI_ERR_PENDING)
			break;
		/* That connector gave up: the next one. */
		w.spins = w.yields = 0;
	}
	if (--p->waiters == 0 && p->closed)
		free(p);
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
		     MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_accept";
	struct mpi_shim_dpm_far far = { MPI_SUCCESS, 0, 0, NULL, "" };
	struct port *p = NULL;
	uint32_t ctx;
	int rc;

	if ((rc = check_collective(info, root, comm, newcomm, call)))
		return rc;
	if ((rc = mpi_shim_comm_max_ctx(comm, &ctx)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	if (comm->rank == root) {
		far.ctx = ctx;
		if (!mpi_shim_dpm_channel()) {
			far.err = MPI_ERR_NO_MEM;
		} else if (!(p = port_by_name(port_name))) {
			far.err = MPI_ERR_PORT;
			snprintf(far.why, sizeof(far.why),
				 "\"%.80s\" is not a port that this process opened and has not "
				 "closed", port_name ? port_name : "(NULL)");
		} else {
			accept_leader(p, comm, ctx, &far);
		}
	}
	return mpi_shim_dpm_finish(comm, root, &far, newcomm, call);
}
MPI_SHIM_ALIAS(MPI_Comm_accept);

/* The time a connect waits for its answer: info's "timeout", else
 * BIP_CONNECT_TIMEOUT, else 10 s.  -1 for a value that is not a number
 * of seconds above 0. */
static double connect_timeout(MPI_Info info)
{
	char v[64];
	const char *s = NULL;
	char *end;
	int flag = 0;
	double t;

	if (info != MPI_INFO_NULL &&
	    PMPI_Info_get(info, "timeout", (int)sizeof(v) - 1, v, &flag) == MPI_SUCCESS && flag)
		s = v;
	else
		s = getenv("BIP_CONNECT_TIMEOUT");
	if (!s || !*s)
		return 10;
	t = strtod(s, &end);
	return *end || !(t > 0) || t > 1e9 ? -1 : t;
}

/* The connect leader's part: request, answer, trade. */
static void connect_leader(const char *port_name, MPI_Info info, MPI_Comm comm, uint32_t ctx,
			   struct mpi_shim_dpm_far *far)
{
	struct port_request m = { REQUEST_CONNECT, 0, 0, { 0 } };
	struct port_answer a;
	char jobid[48];
	double timeout;
	MPI_Comm ch;
	MPI_Request r;
	int node, rc;

	far->ctx = ctx;
	if ((far->err = port_parse(port_name, jobid, sizeof(jobid), &node, m.cap, far->why,
				   sizeof(far->why))))
		return;
	if (strcmp(jobid, bip_layer_jobid())) {
		far->err = MPI_ERR_PORT;
		snprintf(far->why, sizeof(far->why),
			 "the port is job %.33s's, not this job's (%.33s): join that job to "
			 "connect (bipload --attach %.33s prog)", jobid, bip_layer_jobid(), jobid);
		return;
	}
	if (node >= mpi_shim_dpm_nodes()) {
		far->err = MPI_ERR_PORT;
		snprintf(far->why, sizeof(far->why),
			 "the port names node %d, and this job has %d", node,
			 mpi_shim_dpm_nodes());
		return;
	}
	if ((timeout = connect_timeout(info)) < 0) {
		far->err = MPI_ERR_INFO_VALUE;
		snprintf(far->why, sizeof(far->why),
			 "the time-out (info key \"timeout\" or BIP_CONNECT_TIMEOUT) is not a "
			 "number of seconds above 0");
		return;
	}
	if (!(ch = mpi_shim_dpm_channel())) {
		far->err = MPI_ERR_NO_MEM;
		return;
	}
	if (mpi_shim_dpm_random(&m.key, sizeof(m.key)) < 0) {
		far->err = MPI_ERR_OTHER;
		snprintf(far->why, sizeof(far->why), "no random bytes from the kernel");
		return;
	}
	if ((far->err = mpi_shim_coll_irecv(&a, sizeof(a), MPI_BYTE, node,
					    MPI_SHIM_DPM_TAG(MPI_SHIM_DPM_KIND_ANSWER, m.key), ch,
					    &r)))
		return;
	rc = mpi_shim_coll_send(&m, sizeof(m), MPI_BYTE, node, MPI_SHIM_DPM_TAG_REQUEST, ch);
	if (rc) {
		/* A node of the job's room that has not joined, or has ended. */
		if (mpi_shim_recv_cancel(r))
			(void)mpi_shim_request_wait(&r, MPI_STATUS_IGNORE);
		far->err = MPI_ERR_PORT;
		snprintf(far->why, sizeof(far->why),
			 "the port's process (node %d) cannot be reached: it has not joined "
			 "the job, or has ended", node);
		return;
	}
	rc = mpi_shim_dpm_wait_until(r, mpi_shim_dpm_now() + timeout);
	if (rc && mpi_shim_recv_cancel(r)) {
		(void)mpi_shim_request_wait(&r, MPI_STATUS_IGNORE);
		far->err = rc == MPI_ERR_PENDING || rc == MPI_ERR_OTHER ? MPI_ERR_PORT : rc;
		if (rc == MPI_ERR_PENDING) {
			mpi_shim_dpm_give_up(node, m.key);
			snprintf(far->why, sizeof(far->why),
				 "no answer from the port's process (node %d) within %g s: it is "
				 "not open, or that process makes no progress", node, timeout);
		} else if (rc == MPI_ERR_OTHER) {
			snprintf(far->why, sizeof(far->why),
				 "no answer can come from the port's process (node %d): every "
				 "other process of the job has ended", node);
		}
		return;
	}
	/* The answer came (perhaps while the receive was being withdrawn). */
	if ((far->err = mpi_shim_request_wait(&r, MPI_STATUS_IGNORE)))
		return;
	if (a.key != m.key || a.verdict != MPI_SUCCESS) {
		far->err = MPI_ERR_PORT;
		snprintf(far->why, sizeof(far->why),
			 "the port is not open: its process (node %d) refused the connection",
			 node);
		return;
	}
	mpi_shim_dpm_trade(comm, ctx, node, m.key, 0, far);
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
		      MPI_Comm *newcomm)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_connect";
	struct mpi_shim_dpm_far far = { MPI_SUCCESS, 0, 0, NULL, "" };
	uint32_t ctx;
	int rc;

	if ((rc = check_collective(info, root, comm, newcomm, call)))
		return rc;
	if ((rc = mpi_shim_comm_max_ctx(comm, &ctx)))
		return mpi_shim_err(comm, rc, call, "agreeing on a context failed");
	if (comm->rank == root)
		connect_leader(port_name, info, comm, ctx, &far);
	return mpi_shim_dpm_finish(comm, root, &far, newcomm, call);
}
MPI_SHIM_ALIAS(MPI_Comm_connect);
