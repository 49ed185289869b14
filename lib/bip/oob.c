/* SPDX-License-Identifier: MIT */
/*
 * oob.c - the out-of-band all-gather of the network drivers (see oob.h).
 *
 * Frames (integers in network byte order):
 *   hello, sent by node 0 when a node connects:
 *     magic[8] jobid[40] numnodes len
 *   join, the node's answer once the hello matched its job:
 *     magic[8] jobid[40] numnodes len node, then len bytes of blob
 *   result, from node 0 once every node has joined, or on failure:
 *     status (0) then numnodes * len bytes, or
 *     status (1) msglen, then msglen bytes of message
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "oob.h"

#define OOB_MAGIC "BIPOOB1"
#define OOB_JOBLEN 40
/* Seconds a connected peer may take to say who it is. */
#define OOB_HANDSHAKE 5.0

struct oob_hello {
	char magic[8];
	char jobid[OOB_JOBLEN];
	uint32_t numnodes;
	uint32_t len;
};

struct oob_join {
	struct oob_hello h;
	uint32_t node;
};

_Static_assert(sizeof(struct oob_hello) == 56, "hello frame layout");
_Static_assert(sizeof(struct oob_join) == 60, "join frame layout");

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int bip_oob_port(const char *jobid, char *err, size_t errlen)
{
	const char *s = getenv("BIP_OOB_PORT");
	uint64_t h = 1469598103934665603ull;

	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (*end || v < 1 || v > 65535 - (BIP_OOB_PORTS - 1)) {
			snprintf(err, errlen, "BIP_OOB_PORT=%s: expected a port in 1 .. %d", s,
				 65535 - (BIP_OOB_PORTS - 1));
			return -EINVAL;
		}
		return (int)v;
	}
	for (; *jobid; jobid++)
		h = (h ^ (unsigned char)*jobid) * 1099511628211ull;
	return 20000 + (int)(h % 40000);
}

static void hello_fill(struct oob_hello *h, const struct bip_oob_job *job, size_t len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, OOB_MAGIC, sizeof(OOB_MAGIC));
	snprintf(h->jobid, sizeof(h->jobid), "%s", job->jobid);
	h->numnodes = htonl((uint32_t)job->numnodes);
	h->len = htonl((uint32_t)len);
}

static int hello_same_job(const struct oob_hello *h, const struct bip_oob_job *job)
{
	return !memcmp(h->magic, OOB_MAGIC, sizeof(OOB_MAGIC)) &&
	       !strncmp(h->jobid, job->jobid, sizeof(h->jobid));
}

/* Write all of buf; the socket is blocking with a send timeout. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read len bytes before deadline; -ETIMEDOUT, -ECONNRESET on end of file. */
static int read_all(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - now_s();
		ssize_t n;
		int rc;

		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			continue;
		n = recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

static void set_send_timeout(int fd, double secs)
{
	struct timeval tv = { (time_t)secs, (suseconds_t)((secs - (time_t)secs) * 1e6) };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* --- node 0 --- */

/* Listen on the first free port of the sequence; returns the socket. */
static int oob_listen(int first, int *port_p, char *err, size_t errlen)
{
	int i, fd, one = 1, rc = 0;

	for (i = 0; i < BIP_OOB_PORTS; i++) {
		struct sockaddr_in sa = {
			.sin_family = AF_INET,
			.sin_port = htons((uint16_t)(first + i)),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "cannot create a socket: %s", strerror(-rc));
			return rc;
		}
		/* A port left in TIME_WAIT by an earlier job is free to take. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 128) == 0) {
			set_nonblock(fd, 1);
			*port_p = first + i;
			return fd;
		}
		rc = -errno;
		close(fd);
		if (rc != -EADDRINUSE && rc != -EACCES)
			break;
	}
	snprintf(err, errlen, "node 0 cannot listen on any port of %d .. %d: %s (set BIP_OOB_PORT "
		 "to a free port)", first, first + BIP_OOB_PORTS - 1, strerror(-rc));
	return rc;
}

/* Send a failure result to every connected node. */
static void fail_all(int *conns, int n, const char *msg)
{
	uint32_t head[2] = { htonl(1), htonl((uint32_t)strlen(msg)) };
	int i;

	for (i = 1; i < n; i++) {
		if (conns[i] < 0)
			continue;
		if (write_all(conns[i], head, sizeof(head)) == 0)
			write_all(conns[i], msg, strlen(msg));
	}
}

/* Take one connection: check its join frame and keep it under its node. */
static void oob_accept_one(int lfd, const struct bip_oob_job *job, size_t len, char *all,
			   int *conns, int *joined)
{
	struct oob_hello hello;
	struct oob_join join;
	int fd, node, one = 1;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	set_send_timeout(fd, OOB_HANDSHAKE);
	hello_fill(&hello, job, len);
	if (write_all(fd, &hello, sizeof(hello)) < 0 ||
	    read_all(fd, &join, sizeof(join), now_s() + OOB_HANDSHAKE) < 0 ||
	    !hello_same_job(&join.h, job))
		goto drop; /* not one of ours (the node went on to the next port) */
	node = (int)ntohl(join.node);
	if (ntohl(join.h.numnodes) != (uint32_t)job->numnodes || ntohl(join.h.len) != len ||
	    node < 1 || node >= job->numnodes || conns[node] >= 0) {
		char msg[200];
		uint32_t head[2];

		snprintf(msg, sizeof(msg), "node 0 refused a node claiming to be node %d of %u "
			 "(blob of %u bytes): node 0 has %d nodes and %zu-byte blobs%s", node,
			 ntohl(join.h.numnodes), ntohl(join.h.len), job->numnodes, len,
			 node >= 1 && node < job->numnodes && conns[node] >= 0 ?
			 ", and that node already joined" : "");
		head[0] = htonl(1);
		head[1] = htonl((uint32_t)strlen(msg));
		if (write_all(fd, head, sizeof(head)) == 0)
			write_all(fd, msg, strlen(msg));
		goto drop;
	}
	if (read_all(fd, all + (size_t)node * len, len, now_s() + OOB_HANDSHAKE) < 0)
		goto drop;
	conns[node] = fd;
	(*joined)++;
	return;
drop:
	close(fd);
}

static int oob_serve(const struct bip_oob_job *job, const void *blob, size_t len, char *all,
		     char *err, size_t errlen)
{
	double deadline = now_s() + job->timeout;
	int first, port = 0, lfd, i, joined = 0, rc = 0;
	int *conns;

	first = bip_oob_port(job->jobid, err, errlen);
	if (first < 0)
		return first;
	conns = malloc((size_t)job->numnodes * sizeof(*conns));
	if (!conns) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < job->numnodes; i++)
		conns[i] = -1;
	lfd = oob_listen(first, &port, err, errlen);
	if (lfd < 0) {
		rc = lfd;
		goto undo_conns;
	}
	memcpy(all, blob, len);
	while (joined < job->numnodes - 1) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		double left = deadline - now_s();

		if (left <= 0) {
			size_t used = (size_t)snprintf(err, errlen, "timed out after %.0f s "
						       "waiting for node", job->timeout);
			int any = 0;

			for (i = 1; i < job->numnodes && used < errlen; i++) {
				if (conns[i] >= 0)
					continue;
				used += (size_t)snprintf(err + used, errlen - used, "%s %d (%s)",
							 any ? "," : "", i,
							 job->conf->nodes[i].host);
				any = 1;
			}
			if (used < errlen)
				snprintf(err + used, errlen - used, " to connect to node 0 (%s) on "
					 "port %d (%s address exchange); they never started bip_init, "
					 "or cannot reach that host", job->conf->nodes[0].host, port,
					 job->what);
			fail_all(conns, job->numnodes, err);
			rc = -ETIMEDOUT;
			goto undo_listen;
		}
		if (poll(&pfd, 1, (int)(left * 1000) + 1) > 0)
			oob_accept_one(lfd, job, len, all, conns, &joined);
	}
	for (i = 1; i < job->numnodes; i++) {
		uint32_t status = htonl(0);

		set_send_timeout(conns[i], job->timeout);
		if (write_all(conns[i], &status, sizeof(status)) < 0 ||
		    write_all(conns[i], all, (size_t)job->numnodes * len) < 0) {
			/* That node has gone since it joined; it reports its own end. */
			continue;
		}
	}
undo_listen:
	close(lfd);
	for (i = 1; i < job->numnodes; i++)
		if (conns[i] >= 0)
			close(conns[i]);
undo_conns:
	free(conns);
	return rc;
}

/* --- the other nodes --- */

/* Connect to addr before deadline; returns the socket or a negative errno. */
static int oob_connect(const struct sockaddr_in *addr, double deadline)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, rc, soerr = 0, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0 &&
	    errno != EINPROGRESS) {
		rc = -errno;
		goto undo_socket;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	for (;;) {
		double left = deadline - now_s();

		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto undo_socket;
		}
		rc = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (rc > 0)
			break;
		if (rc < 0 && errno != EINTR) {
			rc = -errno;
			goto undo_socket;
		}
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
	if (soerr) {
		rc = -soerr;
		goto undo_socket;
	}
	set_nonblock(fd, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;

undo_socket:
	close(fd);
	return rc;
}

/*
 * Talk to the listener on fd.  Returns 0 with all filled, 1 when the
 * listener is not node 0 of this job (try the next port), or a negative
 * errno with a message.
 */
static int oob_join(int fd, const struct bip_oob_job *job, const void *blob, size_t len,
		    char *all, double deadline, char *err, size_t errlen)
{
	const char *host = job->conf->nodes[0].host;
	struct oob_hello hello;
	struct oob_join join;
	uint32_t head[2];
	double hs = now_s() + OOB_HANDSHAKE;
	int rc;

	rc = read_all(fd, &hello, sizeof(hello), hs < deadline ? hs : deadline);
	if (rc < 0 || !hello_same_job(&hello, job))
		return 1;
	if (ntohl(hello.numnodes) != (uint32_t)job->numnodes || ntohl(hello.len) != len) {
		snprintf(err, errlen, "%s: node 0 (%s) runs job %s with %u nodes and %u-byte "
			 "addresses, this node has %d nodes and %zu-byte addresses (a different "
			 "configuration or driver)", job->what, host, job->jobid,
			 ntohl(hello.numnodes), ntohl(hello.len), job->numnodes, len);
		return -EPROTO;
	}
	hello_fill(&join.h, job, len);
	join.node = htonl((uint32_t)job->mynode);
	set_send_timeout(fd, OOB_HANDSHAKE);
	if (write_all(fd, &join, sizeof(join)) < 0 || write_all(fd, blob, len) < 0)
		return 1;
	/* Node 0 answers once every node has joined, or names those that did
	 * not at its own time-out: wait a little longer than ours for that. */
	rc = read_all(fd, head, sizeof(uint32_t), deadline + 3.0);
	if (rc == -ETIMEDOUT) {
		snprintf(err, errlen, "%s: timed out after %.0f s waiting for node 0 (%s) to "
			 "gather the other nodes", job->what, job->timeout, host);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: node 0 (%s) closed the start-up connection: %s",
			 job->what, host, strerror(-rc));
		return rc;
	}
	if (ntohl(head[0]) == 0) {
		rc = read_all(fd, all, (size_t)job->numnodes * len, deadline + 3.0);
		if (rc < 0) {
			snprintf(err, errlen, "%s: reading the addresses from node 0 (%s): %s",
				 job->what, host, strerror(-rc));
			return rc;
		}
		return 0;
	}
	rc = read_all(fd, &head[1], sizeof(uint32_t), deadline + 3.0);
	if (rc == 0) {
		uint32_t mlen = ntohl(head[1]);
		char msg[1024];

		if (mlen >= sizeof(msg))
			mlen = sizeof(msg) - 1;
		rc = read_all(fd, msg, mlen, deadline + 3.0);
		msg[rc == 0 ? mlen : 0] = '\0';
		snprintf(err, errlen, "%s", msg); /* node 0's words: they name it */
	} else {
		snprintf(err, errlen, "%s: node 0 (%s) refused this node", job->what, host);
	}
	return -ECONNREFUSED;
}

static int oob_client(const struct bip_oob_job *job, const void *blob, size_t len, char *all,
		      char *err, size_t errlen)
{
	const char *host = job->conf->nodes[0].host;
	double deadline = now_s() + job->timeout;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	struct sockaddr_in addr;
	int first, i, rc, last = -ETIMEDOUT, answered = 0;

	first = bip_oob_port(job->jobid, err, errlen);
	if (first < 0)
		return first;
	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "%s: cannot find the address of host %s (node 0): %s",
			 job->what, host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	memcpy(&addr, ai->ai_addr, sizeof(addr));
	freeaddrinfo(ai);
	for (;;) {
		for (i = 0; i < BIP_OOB_PORTS; i++) {
			double step = now_s() + 2.0;
			int fd;

			addr.sin_port = htons((uint16_t)(first + i));
			if (now_s() >= deadline)
				break;
			fd = oob_connect(&addr, step < deadline ? step : deadline);
			if (fd < 0) {
				if (fd == -ECONNREFUSED) {
					answered = 1; /* the host is there, the port is not */
					continue;
				}
				last = fd;
				break; /* the host itself does not answer: wait, retry */
			}
			answered = 1;
			rc = oob_join(fd, job, blob, len, all, deadline, err, errlen);
			close(fd);
			if (rc <= 0)
				return rc;
		}
		if (now_s() >= deadline)
			break;
		nap_ms(50);
	}
	if (answered)
		snprintf(err, errlen, "%s: timed out after %.0f s: node 0 (host %s) never listened "
			 "on ports %d .. %d; it did not start bip_init, or runs another job",
			 job->what, job->timeout, host, first, first + BIP_OOB_PORTS - 1);
	else
		snprintf(err, errlen, "%s: host %s (node 0) could not be reached within %.0f s: %s",
			 job->what, host, job->timeout, strerror(-last));
	return -ETIMEDOUT;
}

int bip_oob_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		      char *err, size_t errlen)
{
	char *tmp;
	int rc;

	if (len < 1 || len > BIP_OOB_BLOB_MAX) {
		snprintf(err, errlen, "%s: address of %zu bytes (at most %d)", job->what, len,
			 BIP_OOB_BLOB_MAX);
		return -EINVAL;
	}
	tmp = malloc((size_t)job->numnodes * len);
	if (!tmp) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (job->numnodes == 1) {
		memcpy(tmp, blob, len);
		rc = 0;
	} else if (job->mynode == 0) {
		rc = oob_serve(job, blob, len, tmp, err, errlen);
	} else {
		rc = oob_client(job, blob, len, tmp, err, errlen);
	}
	if (rc == 0)
		memcpy(all, tmp, (size_t)job->numnodes * len);
	free(tmp);
	return rc;
}
