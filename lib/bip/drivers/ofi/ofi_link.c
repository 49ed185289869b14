/* SPDX-License-Identifier: MIT */
/*
 * ofi_link.c - connections on first use, and liveness, for the ofi driver.
 *
 * Each process listens on a TCP port of its own (its liveness listener),
 * given to the others in the address exchange.  A peer reaches it on the
 * loopback when both run in one network namespace of one kernel (the
 * exchange says so), else at the address its host's name in the
 * configuration resolves to; a node that joined a job that grows, whose
 * host the configuration does not name, at its endpoint's IPv4 address
 * when the provider's addresses are such (tcp), else by the name too
 * (ofi.c).  It serves two purposes.
 *
 * Liveness: a provider does not say when a peer's process has ended
 * (tcp;ofi_rxm queues what is sent to it and reconnects), so a process
 * asks a peer of another host by connecting to that port: refused, the
 * process has gone; no answer for BIP_OFI_ALIVE_TIMEOUT, its host has.
 *
 * Links: over a provider that makes connections (ofi_rxm), no process
 * connects to a peer before it has a message for it, and two rules keep
 * what libfabric 1.17's ofi_rxm needs:
 *  - of two nodes, only the higher one ever opens the connection: two
 *    processes connecting to each other at the same moment can make
 *    ofi_rxm drop one of the two connections with messages already on it
 *    (an inject then lost without an error);
 *  - it opens it only once the lower one has asked for it, so after the
 *    lower one has filled its address vector: a connection that comes
 *    before its sender's address is there is not tied to that address,
 *    and sending back opens a second connection, over which a message was
 *    seen lost.
 * The lower node asks through the side channel: a short-lived TCP
 * connection to the higher node's listener carrying one request, CONNECT
 * ("connect to me"), then closed.  The higher node answers with a note over
 * the provider (a credit message of nothing), which opens the connection;
 * the lower node sends only once something has come from the higher one.
 * A higher node that needs a lower one first sends it ASK ("I need you")
 * the same way, and the lower node answers with CONNECT.  Until its link
 * is up, a message to a peer is refused with -EAGAIN, and the core posts it
 * again later, in order.  Two nodes that need each other at the same
 * moment cross only on the side channel: the lower one's CONNECT answers
 * both, and its ASK is dropped.  Nothing is done per pair at start-up, and
 * nothing at close with a peer that was never linked (its last note goes
 * only to the peers that sent or received).
 *
 * A request (struct bip_ofi_linkreq, 24 bytes, network order) is untrusted
 * input: one that is short, of another version, kind or job (a hash of the
 * job id), not addressed to this node, or from a node this driver does not
 * serve or that may not send that kind, is dropped and counted.  All that
 * a forged one can cause is a connection to an address the job already
 * has.  A connection that brings nothing (a liveness check) is closed.
 * The listener is looked at every OFI_LINK_POLLS polls and at every wake-up
 * (a sleeping process also waits on it, through an epoll descriptor with
 * the completion queue's).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "conf.h"
#include "ofi.h"

/* Seconds an accepted connection may take to bring its request. */
#define OFI_INREQ_WAIT 5.0

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int bip_ofi_link_listen(struct bip_ofi *ofi)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return 0;
	/* Many lower nodes may ask one node at once (a gather to node 0). */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		close(fd);
		return 0;
	}
	ofi->live_fd = fd;
	return ntohs(sa.sin_port);
}

int bip_ofi_link_init(struct bip_ofi *ofi, const char *jobid)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	const char *c;

	for (c = jobid; c && *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	ofi->jobkey = h;
	ofi->reqs = calloc((size_t)ofi->numnodes, sizeof(*ofi->reqs));
	return ofi->reqs ? 0 : -ENOMEM;
}

void bip_ofi_link_fini(struct bip_ofi *ofi)
{
	int i;

	for (i = 0; i < ofi->nreqs; i++) {
		close(ofi->peers[ofi->reqs[i]].req_fd);
		ofi->peers[ofi->reqs[i]].req_fd = -1;
	}
	ofi->nreqs = 0;
	for (i = 0; i < ofi->ninreqs; i++)
		close(ofi->inreqs[i].fd);
	ofi->ninreqs = 0;
	free(ofi->reqs);
	ofi->reqs = NULL;
}

/*
 * The address of node's listener, from its host's name in the
 * configuration, resolved when first needed (not at start-up for every
 * peer); nodes of one host after another are resolved once.
 */
static int resolve(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	const char *host = ofi->conf->nodes[node].host;
	struct addrinfo *ai;
	int i;

	if (p->live_ok)
		return 1;
	if (!p->live_port)
		return 0;
	if (p->same_netns) {
		/* The same machine and network namespace: the loopback
		 * reaches it, whatever name the configuration gives its host
		 * (a launcher's or a test's name may not resolve). */
		p->live_addr.sin_family = AF_INET;
		p->live_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		goto found;
	}
	/* A neighbour whose address came from its endpoint (a node that
	 * joined: its name in the configuration may not be its host) is
	 * not taken as another's. */
	for (i = node - 1; i <= node + 1; i += 2)
		if (i >= 0 && i < ofi->numnodes && ofi->peers[i].live_ok &&
		    !ofi->peers[i].live_own && !strcmp(ofi->conf->nodes[i].host, host)) {
			p->live_addr = ofi->peers[i].live_addr;
			goto found;
		}
	if (getaddrinfo(host, NULL, &hints, &ai) != 0)
		return 0;
	memcpy(&p->live_addr, ai->ai_addr, sizeof(p->live_addr));
	freeaddrinfo(ai);
found:
	p->live_addr.sin_port = htons(p->live_port);
	p->live_ok = 1;
	return 1;
}

/* A connection to node's listener, started: the descriptor, or -errno. */
static int dial(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	int fd, err;

	if (!resolve(ofi, node))
		return -EHOSTUNREACH;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&p->live_addr, sizeof(p->live_addr)) == 0 ||
	    errno == EINPROGRESS)
		return fd;
	err = errno;
	close(fd);
	return -err;
}

/* The answer to a connection to node's listener (soerr, 0: accepted):
 * whether the node counts as ended now. */
static int refused(struct bip_ofi *ofi, int node, int soerr)
{
	struct bip_ofi_peer *p = &ofi->peers[node];

	if (soerr == ECONNREFUSED) {
		p->dead = 1;
	} else if (soerr == ETIMEDOUT || soerr == EHOSTUNREACH || soerr == ENETUNREACH) {
		p->dead = 1;
		fprintf(stderr, "bip: node %d: ofi: the host of node %d (%s) %s: node %d counts "
			"as ended\n", ofi->mynode, node, inet_ntoa(p->live_addr.sin_addr),
			soerr == ETIMEDOUT ? "has not answered a liveness check" :
					     "cannot be reached", node);
	}
	return p->dead;
}

/* Where a connection in progress since 'since' stands: 1 connected, 0 not
 * yet, -1 failed with *soerr (ETIMEDOUT after the alive timeout). */
static int dial_state(struct bip_ofi *ofi, int fd, double since, short revents, int *soerr)
{
	socklen_t sl = sizeof(int);

	*soerr = 0;
	if (!revents) {
		if (now_s() - since < ofi->alive_timeout)
			return 0;
		*soerr = ETIMEDOUT;
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, soerr, &sl) < 0)
		*soerr = errno;
	return *soerr ? -1 : 1;
}

/* --- liveness --- */

/* One step of asking whether the process of a peer on another host still
 * runs: never blocks; marks the peer dead when refused or silent. */
static void live_check(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	struct pollfd pfd;
	int soerr = 0, rc;

	if (p->live_fd < 0) {
		rc = dial(ofi, node);
		if (rc == -EHOSTUNREACH && !p->live_ok)
			return; /* no address to ask: the provider will tell */
		if (rc < 0) {
			refused(ofi, node, -rc);
			return;
		}
		p->live_fd = rc;
		p->live_since = now_s();
		return; /* answered on a later call */
	}
	pfd = (struct pollfd){ .fd = p->live_fd, .events = POLLOUT };
	if (poll(&pfd, 1, 0) < 0)
		return;
	if (dial_state(ofi, p->live_fd, p->live_since, pfd.revents, &soerr) == 0)
		return;
	refused(ofi, node, soerr);
	close(p->live_fd);
	p->live_fd = -1;
}

int bip_ofi_link_alive(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];

	if (p->dead)
		return 0;
	if (!p->same_kernel) {
		bip_ofi_link_progress(ofi);
		live_check(ofi, node);
		return !p->dead;
	}
	return bip_process_runs(p->pid);
}

int bip_ofi_link_ended(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	double now;

	if (p->dead)
		return 1;
	now = now_s();
	if (now < p->ended_check)
		return 0;
	p->ended_check = now + 0.01;
	if (p->same_kernel)
		p->dead = !bip_process_runs(p->pid);
	else
		live_check(ofi, node);
	return p->dead;
}

/* --- requests out --- */

static void req_drop(struct bip_ofi *ofi, int i)
{
	struct bip_ofi_peer *p = &ofi->peers[ofi->reqs[i]];

	close(p->req_fd);
	p->req_fd = -1;
	ofi->reqs[i] = ofi->reqs[--ofi->nreqs];
}

/* Start the request that node's link needs: CONNECT to a higher node, ASK
 * to a lower one.  A failure that says nothing of the peer leaves the link
 * as it was, to be asked again at the next post. */
static void req_start(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	int fd;

	if (!resolve(ofi, node)) {
		fprintf(stderr, "bip: node %d: ofi: no address for the listener of node %d (host "
			"%s): node %d counts as ended\n", ofi->mynode, node,
			ofi->conf->nodes[node].host, node);
		p->dead = 1;
		return;
	}
	fd = dial(ofi, node);
	if (fd < 0) {
		refused(ofi, node, -fd); /* else: asked again at the next post */
		return;
	}
	p->req_fd = fd;
	p->req_since = now_s();
	p->link = BIP_OFI_LINK_ASKING;
	ofi->reqs[ofi->nreqs++] = node;
}

/* Send the request once connected; drop it when done or failed. */
static void reqs_step(struct bip_ofi *ofi)
{
	struct pollfd pfd[64];
	int i, n, rc, soerr;

	n = ofi->nreqs < 64 ? ofi->nreqs : 64;
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = ofi->peers[ofi->reqs[i]].req_fd, .events = POLLOUT };
	if (poll(pfd, (nfds_t)n, 0) < 0)
		return;
	/* From the last: req_drop moves the last one into the hole. */
	for (i = n; i-- > 0;) {
		int node = ofi->reqs[i];
		struct bip_ofi_peer *p = &ofi->peers[node];
		struct bip_ofi_linkreq r = {
			.version = htonl(BIP_OFI_LINKREQ_VERSION),
			.kind = htonl(node > ofi->mynode ? BIP_OFI_LINKREQ_CONNECT :
							   BIP_OFI_LINKREQ_ASK),
			.src = htonl((uint32_t)ofi->mynode),
			.dst = htonl((uint32_t)node),
			.job = ofi->jobkey,
		};

		rc = dial_state(ofi, p->req_fd, p->req_since, pfd[i].revents, &soerr);
		if (rc == 0)
			continue;
		if (rc > 0 && send(p->req_fd, &r, sizeof(r), MSG_NOSIGNAL) == (ssize_t)sizeof(r)) {
			req_drop(ofi, i); /* the link is up once the peer's note comes */
			continue;
		}
		if (rc > 0)
			soerr = errno;
		req_drop(ofi, i);
		if (!refused(ofi, node, soerr))
			p->link = BIP_OFI_LINK_NONE; /* asked again at the next post */
	}
}

int bip_ofi_link_need(struct bip_ofi *ofi, int dst)
{
	struct bip_ofi_peer *p = &ofi->peers[dst];

	if (!ofi->lazy)
		return bip_ofi_peer_open(ofi, dst);
	if (p->link == BIP_OFI_LINK_NONE && !p->dead)
		req_start(ofi, dst);
	return -EAGAIN;
}

/* --- requests in --- */

/* A higher node may connect to this one now: its first note opens the
 * connection, and tells the lower one that its link is up. */
static void link_up(struct bip_ofi *ofi, int node)
{
	struct bip_ofi_peer *p = &ofi->peers[node];
	int rc;

	/* A note that could not go before: the provider may be failing to
	 * connect to a process that has ended since it asked (tcp;ofi_rxm
	 * tries again at each send, a connect each time), so whether it
	 * runs is asked first, as alive does. */
	if (p->hello_due)
		bip_ofi_link_ended(ofi, node);
	if (p->dead && p->hello_due) {
		p->hello_due = 0;
		ofi->nhello--;
	}
	if (p->dead || (p->link == BIP_OFI_LINK_UP && !p->hello_due))
		return;
	if (bip_ofi_peer_open(ofi, node) < 0)
		return;
	rc = bip_ofi_send_note(ofi, node, 0);
	if (rc == -EAGAIN && !p->hello_due) {
		p->hello_due = 1; /* no send buffer free: at a later poll */
		ofi->nhello++;
	} else if (rc != -EAGAIN && p->hello_due) {
		p->hello_due = 0;
		ofi->nhello--;
	}
	if (rc < 0 && rc != -EAGAIN) {
		fprintf(stderr, "bip: node %d: ofi: cannot connect to node %d (host %s)\n",
			ofi->mynode, node, ofi->conf->nodes[node].host);
		p->dead = 1;
	}
}

static void bad_request(struct bip_ofi *ofi, const char *why, ssize_t len,
			const struct bip_ofi_linkreq *r)
{
	if (!ofi->bad_reqs++)
		fprintf(stderr, "bip: node %d: ofi: dropped a connection request (%s: %zd bytes, "
			"version %u, kind %u, from node %u to node %u); later ones are dropped "
			"silently\n", ofi->mynode, why, len, ntohl(r->version), ntohl(r->kind),
			ntohl(r->src), ntohl(r->dst));
}

static void handle_request(struct bip_ofi *ofi, const struct bip_ofi_linkreq *r, ssize_t len)
{
	uint32_t src = ntohl(r->src), kind = ntohl(r->kind);
	struct bip_ofi_peer *p;

	if (len != (ssize_t)sizeof(*r) || ntohl(r->version) != BIP_OFI_LINKREQ_VERSION) {
		bad_request(ofi, "not of this length and version", len, r);
		return;
	}
	if (r->job != ofi->jobkey) {
		bad_request(ofi, "of another job", len, r);
		return;
	}
	if (ntohl(r->dst) != (uint32_t)ofi->mynode || src >= (uint32_t)ofi->numnodes ||
	    (!ofi->peers[src].served && !bip_ofi_reach_sender(ofi, src))) {
		bad_request(ofi, "not between nodes of this driver", len, r);
		return;
	}
	p = &ofi->peers[src];
	if (kind == BIP_OFI_LINKREQ_CONNECT && src < (uint32_t)ofi->mynode) {
		link_up(ofi, (int)src);
	} else if (kind == BIP_OFI_LINKREQ_ASK && src > (uint32_t)ofi->mynode) {
		/* Asking already (our CONNECT answers both), or up (a stale
		 * request): nothing more to do. */
		if (p->link == BIP_OFI_LINK_NONE && !p->dead)
			req_start(ofi, (int)src);
	} else {
		bad_request(ofi, "a kind this node may not be sent", len, r);
	}
}

static void inreq_drop(struct bip_ofi *ofi, int i)
{
	close(ofi->inreqs[i].fd);
	ofi->inreqs[i] = ofi->inreqs[--ofi->ninreqs];
}

/* Accept what came to the listener, and read what the accepted
 * connections bring. */
static void inreqs_step(struct bip_ofi *ofi)
{
	int max = (int)(sizeof(ofi->inreqs) / sizeof(ofi->inreqs[0]));
	ssize_t n;
	int fd, i;

	while (ofi->live_fd >= 0 && ofi->ninreqs < max &&
	       (fd = accept4(ofi->live_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
		ofi->inreqs[ofi->ninreqs++] = (struct bip_ofi_inreq){ .fd = fd, .since = now_s() };
	for (i = ofi->ninreqs; i-- > 0;) {
		struct bip_ofi_inreq *q = &ofi->inreqs[i];

		n = recv(q->fd, (uint8_t *)&q->req + q->got, sizeof(q->req) - q->got, 0);
		if (n > 0) {
			q->got += (uint8_t)n;
			if (q->got < sizeof(q->req))
				continue;
			handle_request(ofi, &q->req, q->got);
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (now_s() - q->since <= OFI_INREQ_WAIT)
				continue;
			if (q->got)
				handle_request(ofi, &q->req, q->got);
		} else if (n == 0 && q->got) {
			handle_request(ofi, &q->req, q->got); /* short: dropped */
		}
		/* else closed with nothing: a liveness check, which only connects */
		inreq_drop(ofi, i);
	}
}

void bip_ofi_link_progress(struct bip_ofi *ofi)
{
	int i;

	ofi->link_polls = 0;
	if (ofi->nreqs)
		reqs_step(ofi);
	inreqs_step(ofi);
	for (i = 0; ofi->nhello && i < ofi->numnodes; i++)
		if (ofi->peers[i].hello_due)
			link_up(ofi, i);
}
