/* SPDX-License-Identifier: MIT */
/*
 * oob.c - the out-of-band all-gather of the network drivers (see oob.h).
 *
 * Node 0 listens on the address of its host in the configuration (not on
 * every interface) and serves every connection at once in one poll loop,
 * each with OOB_HANDSHAKE seconds to prove itself, so that silent or slow
 * clients cannot hold the others up; at most OOB_PENDING wait at a time.  A
 * connection that is not a node of this job (another job's, garbage, a
 * wrong proof, silence) is dropped with one line on stderr, and the exchange
 * goes on.
 *
 * Who may join: a process that knows the job's secret (BIP_SECRET, which
 * bipload makes and hands to the job's processes only).  The secret never
 * crosses the wire; each side proves it knows it with an HMAC-SHA256 keyed
 * with it, over fresh random nonces of both sides, so that a recorded
 * exchange cannot be replayed.  libsodium gives the HMAC, the random
 * nonces and the constant-time comparison: a small, well-kept library with
 * exactly these primitives and no configuration (OpenSSL's libcrypto would
 * do as well, at the price of a far larger API to get right).
 *
 * Frames (integers in network byte order; "|" is concatenation):
 *   hello, node 0's first words on each connection:
 *     magic[8] jobid[40] numnodes len nonce0[32]
 *   join, the node's answer once the hello names its job:
 *     magic[8] jobid[40] numnodes len node nonce1[32], blob[len],
 *     mac1 = HMAC(key, "join" | hello | join | blob)
 *   accept, node 0's proof, at once once mac1 checks:
 *     mac0 = HMAC(key, "accept" | hello | join | blob)
 *   result, once every node has joined, or on failure:
 *     status (0), then numnodes * len bytes; or
 *     status (1), msglen, then msglen bytes of message;
 *     then HMAC(key, "result" | nonce0 | nonce1 | the result's bytes)
 * A node whose listener fails to send a good accept within OOB_HANDSHAKE
 * tries the next port: node 0 may be there, and a listener that does not
 * know the secret is not node 0.  The job id and node count travel in clear
 * (they name the job, they admit nobody); the blobs are endpoint addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "oob.h"

#define OOB_MAGIC "BIPOOB2"
#define OOB_JOBLEN 40
/* Seconds a connected peer may take to prove who it is. */
#define OOB_HANDSHAKE 5.0
/* Connections node 0 keeps waiting for their proof at once. */
#define OOB_PENDING 64
#define OOB_NONCE 32
#define OOB_MAC crypto_auth_hmacsha256_BYTES

struct oob_hello {
	char magic[8];
	char jobid[OOB_JOBLEN];
	uint32_t numnodes;
	uint32_t len;
	unsigned char nonce[OOB_NONCE];
};

struct oob_join {
	char magic[8];
	char jobid[OOB_JOBLEN];
	uint32_t numnodes;
	uint32_t len;
	uint32_t node;
	unsigned char nonce[OOB_NONCE];
};

_Static_assert(sizeof(struct oob_hello) == 88, "hello frame layout");
_Static_assert(sizeof(struct oob_join) == 92, "join frame layout");
_Static_assert(OOB_MAC == 32, "HMAC-SHA256");

/* The job's secret, read once by bip_oob_secret_load. */
static struct {
	int state;                    /* 0 none, 1 loaded, -1 malformed */
	unsigned char key[64];
	size_t len;
	char why[160];
} oob_secret;

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

/* --- the secret and the proofs --- */

int bip_oob_secret_load(void)
{
	const char *s = getenv(BIP_OOB_SECRET_ENV);
	size_t n, i;

	if (oob_secret.state)
		return oob_secret.state > 0 ? 0 : -EINVAL;
	if (!s || !*s)
		return 0; /* an exchange will say how to set one */
	n = strlen(s);
	for (i = 0; i < n && strchr("0123456789abcdefABCDEF", s[i]); i++)
		;
	if (n < 32 || n > 128 || n % 2 || i < n) {
		snprintf(oob_secret.why, sizeof(oob_secret.why), "%s must be 32 to 128 hex "
			 "digits, an even number of them (it has %zu characters%s)",
			 BIP_OOB_SECRET_ENV, n, i < n ? ", not all hex digits" : "");
		oob_secret.state = -1;
	} else {
		for (i = 0; i < n / 2; i++) {
			unsigned v;

			sscanf(s + 2 * i, "%2x", &v);
			oob_secret.key[i] = (unsigned char)v;
		}
		oob_secret.len = n / 2;
		oob_secret.state = 1;
	}
	/* Programs that the application starts do not inherit it. */
	unsetenv(BIP_OOB_SECRET_ENV);
	return oob_secret.state > 0 ? 0 : -EINVAL;
}

/* The key, or -EACCES with why it is missing. */
static int secret_ready(const struct bip_oob_job *job, char *err, size_t errlen)
{
	if (bip_oob_secret_load() < 0) {
		snprintf(err, errlen, "%s: %s", job->what, oob_secret.why);
		return -EINVAL;
	}
	if (oob_secret.state <= 0) {
		snprintf(err, errlen, "%s: no job secret: the start-up exchange between hosts "
			 "admits only processes that know the job's %s, which bipload sets; for "
			 "processes started by hand, give every node the same one, e.g. %s=$(od "
			 "-An -N32 -tx1 /dev/urandom | tr -d ' \\n')", job->what,
			 BIP_OOB_SECRET_ENV, BIP_OOB_SECRET_ENV);
		return -EACCES;
	}
	if (sodium_init() < 0) {
		snprintf(err, errlen, "%s: libsodium cannot start", job->what);
		return -EIO;
	}
	return 0;
}

/* HMAC(key, label | p1 | p2 | p3 | p4) into mac. */
static void oob_mac(unsigned char *mac, const char *label, const void *p1, size_t n1,
		    const void *p2, size_t n2, const void *p3, size_t n3, const void *p4,
		    size_t n4)
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, oob_secret.key, oob_secret.len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, p1, n1);
	crypto_auth_hmacsha256_update(&st, p2, n2);
	crypto_auth_hmacsha256_update(&st, p3, n3);
	crypto_auth_hmacsha256_update(&st, p4, n4);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

static void hello_fill(struct oob_hello *h, const struct bip_oob_job *job, size_t len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, OOB_MAGIC, sizeof(OOB_MAGIC));
	snprintf(h->jobid, sizeof(h->jobid), "%s", job->jobid);
	h->numnodes = htonl((uint32_t)job->numnodes);
	h->len = htonl((uint32_t)len);
	randombytes_buf(h->nonce, sizeof(h->nonce));
}

/* 1 if the magic and job id are those of job. */
static int frame_same_job(const char *magic, const char *jobid, const struct bip_oob_job *job)
{
	return !memcmp(magic, OOB_MAGIC, sizeof(OOB_MAGIC)) &&
	       !strncmp(jobid, job->jobid, OOB_JOBLEN) && memchr(jobid, 0, OOB_JOBLEN);
}

int bip_oob_join_check(const void *frame, size_t n, const char *jobid, int numnodes,
		       size_t len, int *node_p, size_t *blob_p, char *why, size_t whylen)
{
	struct oob_join j;
	uint32_t node, blob;

	if (n < sizeof(j)) {
		snprintf(why, whylen, "a join of %zu bytes, %zu expected", n, sizeof(j));
		return -EPROTO;
	}
	memcpy(&j, frame, sizeof(j));
	if (memcmp(j.magic, OOB_MAGIC, sizeof(OOB_MAGIC))) {
		snprintf(why, whylen, "not a BIP start-up frame");
		return -EPROTO;
	}
	if (!memchr(j.jobid, 0, sizeof(j.jobid)) || strcmp(j.jobid, jobid)) {
		snprintf(why, whylen, "a node of another job");
		return -ESRCH;
	}
	node = ntohl(j.node);
	blob = ntohl(j.len);
	if (blob < 1 || blob > BIP_OOB_BLOB_MAX) {
		snprintf(why, whylen, "an address of %u bytes (1 .. %d)", blob, BIP_OOB_BLOB_MAX);
		return -EPROTO;
	}
	*blob_p = blob;
	if (ntohl(j.numnodes) != (uint32_t)numnodes || blob != len || node < 1 ||
	    node >= (uint32_t)numnodes) {
		snprintf(why, whylen, "node 0 refused a node claiming to be node %u of %u "
			 "(addresses of %u bytes): node 0 has %d nodes and %zu-byte addresses",
			 node, ntohl(j.numnodes), blob, numnodes, len);
		*node_p = -1;
		return -EINVAL;
	}
	*node_p = (int)node;
	return 0;
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

/* The IPv4 address of host, or -EHOSTUNREACH with a message. */
static int host_addr(const struct bip_oob_job *job, const char *host, struct sockaddr_in *sa,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &ai);

	if (rc != 0) {
		snprintf(err, errlen, "%s: cannot find the address of host %s (node 0): %s",
			 job->what, host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	freeaddrinfo(ai);
	return 0;
}

/*
 * Listen on the address of node 0's host, on the first free port of the
 * sequence; returns the socket.
 */
static int oob_listen(const struct bip_oob_job *job, int first, int *port_p, char *err,
		      size_t errlen)
{
	const char *host = job->conf->nodes[0].host;
	struct sockaddr_in sa;
	int i, fd, one = 1, rc;
	char addr[INET_ADDRSTRLEN];

	rc = host_addr(job, host, &sa, err, errlen);
	if (rc < 0)
		return rc;
	inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof(addr));
	for (i = 0; i < BIP_OOB_PORTS; i++) {
		sa.sin_port = htons((uint16_t)(first + i));
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
	if (rc == -EADDRNOTAVAIL)
		snprintf(err, errlen, "%s: node 0 cannot listen on %s, the address of its host %s "
			 "in the configuration: it is not an address of this machine", job->what,
			 addr, host);
	else
		snprintf(err, errlen, "node 0 cannot listen on %s (host %s) on any port of %d .. "
			 "%d: %s (set BIP_OOB_PORT to a free port)", addr, host, first,
			 first + BIP_OOB_PORTS - 1, strerror(-rc));
	return rc;
}

/* A connection waiting for its proof. */
struct oob_pending {
	int fd;
	double deadline;
	char peer[INET_ADDRSTRLEN + 8];
	struct oob_hello hello;
	size_t have, need;            /* bytes of in[] read, and wanted so far */
	unsigned char in[sizeof(struct oob_join) + BIP_OOB_BLOB_MAX + OOB_MAC];
};

/* The state of node 0's exchange. */
struct oob_server {
	const struct bip_oob_job *job;
	size_t len;
	char *all;
	int *conns;                   /* per node: its authenticated connection */
	unsigned char (*nonces)[OOB_NONCE]; /* per node: its nonce, and ours */
	unsigned char (*ours)[OOB_NONCE];
	int joined;
	struct oob_pending *pend[OOB_PENDING];
	int npend;
};

static void drop(struct oob_server *sv, int i, const char *why)
{
	struct oob_pending *c = sv->pend[i];

	fprintf(stderr, "bip: node 0: start-up: dropped a connection from %s: %s\n", c->peer,
		why);
	close(c->fd);
	free(c);
	sv->pend[i] = sv->pend[--sv->npend];
}

/* Write a result (status 0: the blobs; 1: msg) and its proof to node's fd. */
static int send_result(const struct oob_server *sv, int fd, const unsigned char *nonce0,
		       const unsigned char *nonce1, uint32_t status, const char *msg)
{
	uint32_t head[2] = { htonl(status), htonl(msg ? (uint32_t)strlen(msg) : 0) };
	size_t hlen = status ? sizeof(head) : sizeof(uint32_t);
	const void *body = status ? (const void *)msg : sv->all;
	size_t blen = status ? strlen(msg) : (size_t)sv->job->numnodes * sv->len;
	unsigned char mac[OOB_MAC];

	oob_mac(mac, "result", nonce0, OOB_NONCE, nonce1, OOB_NONCE, head, hlen, body, blen);
	if (write_all(fd, head, hlen) < 0 || write_all(fd, body, blen) < 0 ||
	    write_all(fd, mac, sizeof(mac)) < 0)
		return -EPIPE;
	return 0;
}

/* c has sent all of its join: check its proof, then take it as its node. */
static void join_complete(struct oob_server *sv, int i)
{
	struct oob_pending *c = sv->pend[i];
	const struct oob_join *j = (const struct oob_join *)c->in;
	size_t blob = c->need - sizeof(*j) - OOB_MAC;
	unsigned char mac[OOB_MAC];
	char why[256];
	int node, rc;
	size_t bl;

	oob_mac(mac, "join", &c->hello, sizeof(c->hello), c->in, sizeof(*j) + blob, NULL, 0,
		NULL, 0);
	if (crypto_verify_32(mac, c->in + sizeof(*j) + blob)) {
		drop(sv, i, "its proof of the job's secret is wrong (another job with the same "
			    "id, or an attempt to join)");
		return;
	}
	rc = bip_oob_join_check(c->in, c->need, sv->job->jobid, sv->job->numnodes, sv->len,
				&node, &bl, why, sizeof(why));
	if (rc == 0 && sv->conns[node] >= 0) {
		snprintf(why, sizeof(why), "node 0 refused a second node %d: that node already "
			 "joined", node);
		rc = -EEXIST;
	}
	oob_mac(mac, "accept", &c->hello, sizeof(c->hello), c->in, sizeof(*j) + blob, NULL, 0,
		NULL, 0);
	if (write_all(c->fd, mac, sizeof(mac)) < 0) {
		drop(sv, i, "it went away before it was accepted");
		return;
	}
	if (rc < 0) {
		/* One of ours, with a wrong configuration: it prints why. */
		set_nonblock(c->fd, 0);
		set_send_timeout(c->fd, OOB_HANDSHAKE);
		send_result(sv, c->fd, c->hello.nonce, j->nonce, 1, why);
		drop(sv, i, why);
		return;
	}
	memcpy(sv->all + (size_t)node * sv->len, c->in + sizeof(*j), sv->len);
	memcpy(sv->nonces[node], j->nonce, OOB_NONCE);
	memcpy(sv->ours[node], c->hello.nonce, OOB_NONCE);
	set_nonblock(c->fd, 0);
	sv->conns[node] = c->fd;
	sv->joined++;
	free(c);
	sv->pend[i] = sv->pend[--sv->npend];
}

/* Read what c has sent; complete its join when all of it is there. */
static void pending_read(struct oob_server *sv, int i)
{
	struct oob_pending *c = sv->pend[i];
	ssize_t n = recv(c->fd, c->in + c->have, c->need - c->have, 0);

	if (n == 0) {
		drop(sv, i, c->have ? "it closed in the middle of its join" :
				      "it closed without a word (a node of another job?)");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			drop(sv, i, strerror(errno));
		return;
	}
	c->have += (size_t)n;
	if (c->have < c->need)
		return;
	if (c->need == sizeof(struct oob_join)) {
		char why[256];
		size_t blob;
		int node;
		int rc = bip_oob_join_check(c->in, c->have, sv->job->jobid, sv->job->numnodes,
					    sv->len, &node, &blob, why, sizeof(why));

		if (rc == -EPROTO || rc == -ESRCH) {
			drop(sv, i, why);
			return;
		}
		c->need += blob + OOB_MAC; /* the blob and the proof follow */
		return;
	}
	join_complete(sv, i);
}

/* Take a new connection: say hello, and wait for its join. */
static void accept_new(struct oob_server *sv, int lfd)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct oob_pending *c;
	char peer[INET_ADDRSTRLEN];
	int fd, one = 1;

	fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer));
	if (sv->npend == OOB_PENDING || !(c = calloc(1, sizeof(*c)))) {
		fprintf(stderr, "bip: node 0: start-up: dropped a connection from %s:%d: %d "
			"others wait for their proof already\n", peer, ntohs(sa.sin_port),
			sv->npend);
		close(fd);
		return;
	}
	c->fd = fd;
	c->deadline = now_s() + OOB_HANDSHAKE;
	c->need = sizeof(struct oob_join);
	snprintf(c->peer, sizeof(c->peer), "%s:%d", peer, ntohs(sa.sin_port));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	hello_fill(&c->hello, sv->job, sv->len);
	sv->pend[sv->npend++] = c;
	/* A fresh socket's buffer takes the 88 bytes at once. */
	if (send(fd, &c->hello, sizeof(c->hello), MSG_NOSIGNAL) != (ssize_t)sizeof(c->hello))
		drop(sv, sv->npend - 1, "it cannot take node 0's hello");
}

/* The message for a time-out: the nodes that never joined. */
static void missing(const struct oob_server *sv, int port, char *err, size_t errlen)
{
	const struct bip_oob_job *job = sv->job;
	size_t used = (size_t)snprintf(err, errlen, "timed out after %.0f s waiting for node",
				       job->timeout);
	int i, any = 0;

	for (i = 1; i < job->numnodes && used < errlen; i++) {
		if (sv->conns[i] >= 0)
			continue;
		used += (size_t)snprintf(err + used, errlen - used, "%s %d (%s)", any ? "," : "",
					 i, job->conf->nodes[i].host);
		any = 1;
	}
	if (used < errlen)
		snprintf(err + used, errlen - used, " to connect to node 0 (%s) on port %d (%s "
			 "address exchange); they never started bip_init, or cannot reach that "
			 "host", job->conf->nodes[0].host, port, job->what);
}

static int oob_serve(const struct bip_oob_job *job, const void *blob, size_t len, char *all,
		     char *err, size_t errlen)
{
	struct oob_server sv = { .job = job, .len = len, .all = all };
	struct pollfd pfd[1 + OOB_PENDING];
	double deadline = now_s() + job->timeout;
	int first, port = 0, lfd, i, rc = 0;

	first = bip_oob_port(job->jobid, err, errlen);
	if (first < 0)
		return first;
	sv.conns = malloc((size_t)job->numnodes * sizeof(*sv.conns));
	sv.nonces = malloc((size_t)job->numnodes * sizeof(*sv.nonces));
	sv.ours = malloc((size_t)job->numnodes * sizeof(*sv.ours));
	if (!sv.conns || !sv.nonces || !sv.ours) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto undo_alloc;
	}
	for (i = 0; i < job->numnodes; i++)
		sv.conns[i] = -1;
	lfd = oob_listen(job, first, &port, err, errlen);
	if (lfd < 0) {
		rc = lfd;
		goto undo_alloc;
	}
	memcpy(all, blob, len);
	while (sv.joined < job->numnodes - 1) {
		double now = now_s(), wake = deadline;

		if (now >= deadline) {
			missing(&sv, port, err, errlen);
			for (i = 1; i < job->numnodes; i++)
				if (sv.conns[i] >= 0)
					send_result(&sv, sv.conns[i], sv.ours[i], sv.nonces[i], 1,
						    err);
			rc = -ETIMEDOUT;
			goto undo_listen;
		}
		for (i = sv.npend; i-- > 0;)
			if (now >= sv.pend[i]->deadline)
				drop(&sv, i, sv.pend[i]->have ? "its join did not come whole within "
							      "the time limit" :
							      "it said nothing within the time limit");
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < sv.npend; i++) {
			pfd[1 + i] = (struct pollfd){ .fd = sv.pend[i]->fd, .events = POLLIN };
			if (sv.pend[i]->deadline < wake)
				wake = sv.pend[i]->deadline;
		}
		if (poll(pfd, (nfds_t)(1 + sv.npend), (int)((wake - now) * 1000) + 1) <= 0)
			continue;
		/* Newest first, so that dropping one moves only those seen. */
		for (i = sv.npend; i-- > 0;)
			if (pfd[1 + i].revents)
				pending_read(&sv, i);
		if (pfd[0].revents & POLLIN)
			accept_new(&sv, lfd);
	}
	for (i = 1; i < job->numnodes; i++) {
		set_send_timeout(sv.conns[i], job->timeout);
		/* A node gone since it joined reports its own end. */
		send_result(&sv, sv.conns[i], sv.ours[i], sv.nonces[i], 0, NULL);
	}
undo_listen:
	close(lfd);
	while (sv.npend)
		drop(&sv, sv.npend - 1, sv.pend[sv.npend - 1]->have ?
			"its join was not whole when the exchange ended" :
			"it had said nothing when the exchange ended");
	for (i = 1; i < job->numnodes; i++)
		if (sv.conns[i] >= 0)
			close(sv.conns[i]);
undo_alloc:
	free(sv.conns);
	free(sv.nonces);
	free(sv.ours);
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
 * listener is not node 0 of this job (try the next port; why in *skip), or
 * a negative errno with a message.
 */
static int oob_join(int fd, const struct bip_oob_job *job, const void *blob, size_t len,
		    char *all, double deadline, char *err, size_t errlen, const char **skip)
{
	const char *host = job->conf->nodes[0].host;
	size_t alen = (size_t)job->numnodes * len;
	struct oob_hello hello;
	struct oob_join join;
	unsigned char mac[OOB_MAC], got[OOB_MAC];
	uint32_t head[2];
	double hs = now_s() + OOB_HANDSHAKE;
	int rc;

	rc = read_all(fd, &hello, sizeof(hello), hs < deadline ? hs : deadline);
	if (rc < 0 || !frame_same_job(hello.magic, hello.jobid, job))
		return 1;
	if (ntohl(hello.numnodes) != (uint32_t)job->numnodes || ntohl(hello.len) != len) {
		snprintf(err, errlen, "%s: node 0 (%s) runs job %s with %u nodes and %u-byte "
			 "addresses, this node has %d nodes and %zu-byte addresses (a different "
			 "configuration or driver)", job->what, host, job->jobid,
			 ntohl(hello.numnodes), ntohl(hello.len), job->numnodes, len);
		return -EPROTO;
	}
	memset(&join, 0, sizeof(join));
	memcpy(join.magic, OOB_MAGIC, sizeof(OOB_MAGIC));
	snprintf(join.jobid, sizeof(join.jobid), "%s", job->jobid);
	join.numnodes = htonl((uint32_t)job->numnodes);
	join.len = htonl((uint32_t)len);
	join.node = htonl((uint32_t)job->mynode);
	randombytes_buf(join.nonce, sizeof(join.nonce));
	oob_mac(mac, "join", &hello, sizeof(hello), &join, sizeof(join), blob, len, NULL, 0);
	set_send_timeout(fd, OOB_HANDSHAKE);
	if (write_all(fd, &join, sizeof(join)) < 0 || write_all(fd, blob, len) < 0 ||
	    write_all(fd, mac, sizeof(mac)) < 0)
		return 1;
	/* Node 0 proves at once that it knows the secret too. */
	hs = now_s() + OOB_HANDSHAKE;
	if (read_all(fd, got, sizeof(got), hs < deadline ? hs : deadline) < 0) {
		*skip = "a listener there took the join and gave no proof of the job's secret";
		return 1;
	}
	oob_mac(mac, "accept", &hello, sizeof(hello), &join, sizeof(join), blob, len, NULL, 0);
	if (crypto_verify_32(mac, got)) {
		*skip = "a listener there does not know the job's secret (another job with the "
			"same id, or an impostor)";
		return 1;
	}
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
		rc = read_all(fd, all, alen, deadline + 3.0);
		if (rc == 0)
			rc = read_all(fd, got, sizeof(got), deadline + 3.0);
		if (rc < 0) {
			snprintf(err, errlen, "%s: reading the addresses from node 0 (%s): %s",
				 job->what, host, strerror(-rc));
			return rc;
		}
		oob_mac(mac, "result", hello.nonce, OOB_NONCE, join.nonce, OOB_NONCE, head,
			sizeof(uint32_t), all, alen);
		if (crypto_verify_32(mac, got)) {
			snprintf(err, errlen, "%s: the addresses from node 0 (%s) fail their proof: "
				 "changed on the way", job->what, host);
			return -EBADMSG;
		}
		return 0;
	}
	rc = read_all(fd, &head[1], sizeof(uint32_t), deadline + 3.0);
	if (rc == 0) {
		uint32_t mlen = ntohl(head[1]);
		char msg[1024];

		if (mlen >= sizeof(msg) - 1) {
			snprintf(err, errlen, "%s: node 0 (%s) refused this node (a message of %u "
				 "bytes)", job->what, host, mlen);
			return -ECONNREFUSED;
		}
		rc = read_all(fd, msg, mlen, deadline + 3.0);
		if (rc == 0)
			rc = read_all(fd, got, sizeof(got), deadline + 3.0);
		msg[rc == 0 ? mlen : 0] = '\0';
		oob_mac(mac, "result", hello.nonce, OOB_NONCE, join.nonce, OOB_NONCE, head,
			sizeof(head), msg, mlen);
		if (rc == 0 && !crypto_verify_32(mac, got))
			snprintf(err, errlen, "%s", msg); /* node 0's words: they name it */
		else
			snprintf(err, errlen, "%s: node 0 (%s) refused this node (its message "
				 "fails its proof)", job->what, host);
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
	struct sockaddr_in addr;
	const char *skip = NULL;
	int first, i, rc, last = -ETIMEDOUT, answered = 0;

	first = bip_oob_port(job->jobid, err, errlen);
	if (first < 0)
		return first;
	rc = host_addr(job, host, &addr, err, errlen);
	if (rc < 0)
		return rc;
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
			rc = oob_join(fd, job, blob, len, all, deadline, err, errlen, &skip);
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
			 "on ports %d .. %d; it did not start bip_init, or runs another job%s%s",
			 job->what, job->timeout, host, first, first + BIP_OOB_PORTS - 1,
			 skip ? "; " : "", skip ? skip : "");
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
	if (job->numnodes > 1) {
		rc = secret_ready(job, err, errlen);
		if (rc < 0)
			return rc;
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
