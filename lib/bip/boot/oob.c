/* SPDX-License-Identifier: MIT */
/*
 * oob.c - the out-of-band all-gather of the network drivers (see oob.h).
 *
 * The tree.  A host is a host name of the configuration; hosts are ordered
 * by their first node (node 0's host is host 0), and a host's nodes by
 * number (its rank 0 is its first node).  On each host the ranks form a
 * binomial tree: rank r reports to rank r with its lowest set bit cleared,
 * and so has the children r + 1, r + 2, r + 4 ... below its own lowest
 * set bit.  The hosts' first nodes form one tree over the hosts' indexes in
 * the same way, rooted at node 0.  So every node knows its parent and its
 * children from the configuration alone, a node has at most
 * log2(nodes of its host) + log2(hosts) children, and a node is as many
 * links from node 0 as its rank and its host's index have bits set.
 *
 * The exchange.  A node with children listens, takes the reports of its
 * children (each its subtree's blobs, in one message), then reports its own
 * and theirs to its parent, and waits for the result; node 0, once it has
 * every report, sends the result (every blob, or the failure) down the
 * same links.  Nodes send their report only when their subtree's is
 * complete, so a parent serves each child once, and all of them at once in
 * one poll loop, each connection with OOB_HANDSHAKE seconds to prove itself
 * so that silent or slow clients cannot hold the others up (at most
 * OOB_PENDING at a time).  A connection that is not a child of this node in
 * this job (another job's, garbage, a wrong proof, silence) is dropped with
 * one line on stderr, and the exchange goes on.
 *
 * Links.  Between two nodes of one host: a UNIX stream socket in the
 * abstract namespace, whose name is an HMAC of the job id, the round and the
 * parent's node keyed with the secret (nobody else can take it first), and
 * whose peers are checked to be of this user (SO_PEERCRED).  A host's
 * processes share a network namespace, and so these names: test hosts made
 * of network namespaces each have their own.  Between hosts: TCP to the
 * address of the parent's host in the configuration (not every interface),
 * on the job's port or the next free one of the sequence (oob.h).  Several
 * first nodes of this job on one address (two host names of one machine)
 * take several ports: a child tells its parent by the node number that the
 * parent's proof covers, and passes the others over.
 *
 * Time.  Every node has the start-up timeout from its own start.  A node
 * waits for its children's reports until that timeout less a step for each
 * link between it and node 0 (deeper nodes give up first), then reports
 * what it has and the children that never reported, so that node 0 hears
 * of them before its own time is up and names the nodes that never joined.
 * A node that cannot reach its parent says so at its timeout, naming it; a
 * node waits for the result OOB_RESULT_SLACK seconds beyond its timeout.
 *
 * Who may join: a process that knows the job's secret (BIP_SECRET, which
 * bipload makes and hands to the job's processes only).  The secret never
 * crosses the wire; each side of each link proves it knows it with an
 * HMAC-SHA256 keyed with it, over fresh random nonces of both sides, so
 * that a recorded exchange cannot be replayed.  libsodium gives the HMAC,
 * the random nonces and the constant-time comparison: a small, well-kept
 * library with exactly these primitives and no configuration.
 *
 * Frames (integers in network byte order; "|" is concatenation; hello and
 * join stand for the two frames of the link):
 *   hello, the listener's first words on each connection:
 *     magic[8] jobid[40] numnodes len round node nonce0[32]
 *   join, the child's answer once the hello is its parent's:
 *     magic[8] jobid[40] numnodes len round node parent nonce1[32],
 *     HMAC(key, "join" | hello | join)
 *   accept, the parent's proof and verdict, at once:
 *     status (0: go on, 1: refused), msglen, msg[msglen],
 *     HMAC(key, "accept" | hello | join | status | msglen | msg)
 *   report, the child's subtree:
 *     count, nmissing, node[count], missing[nmissing], blob[count][len],
 *     HMAC(key, "report" | hello | join | the report's bytes)
 *   result, once node 0 has every report, or on failure:
 *     status (0), msglen (0), blob[numnodes][len]; or
 *     status (1), msglen, msg[msglen] (node 0's message, which names the
 *     nodes that never joined; or a node's own error, to its children);
 *     then HMAC(key, "result" | hello | join | the result's bytes)
 * A child whose listener fails to send a good accept within OOB_HANDSHAKE
 * tries the next port: its parent may be there, and a listener that does
 * not know the secret is not its parent.  The job id, the node numbers and
 * the counts travel in clear (they name the job, they admit nobody); the
 * blobs are endpoint addresses.  Everything read is checked before use.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "oob.h"

#define OOB_MAGIC "BIPOOB3"
#define OOB_JOBLEN 40
/* Seconds a connected peer may take to prove who it is and report. */
#define OOB_HANDSHAKE 5.0
/* Connections a node keeps waiting for their proof at once. */
#define OOB_PENDING 64
#define OOB_NONCE 32
#define OOB_MAC crypto_auth_hmacsha256_BYTES
/* Seconds a node waits for its parent's result beyond its own timeout. */
#define OOB_RESULT_SLACK 5.0
/* Longest message in an accept or a result. */
#define OOB_MSG_MAX 1024
/* Most children of a node: the bits of a rank and of a host's index. */
#define OOB_CHILDREN_MAX 34

struct oob_hello {
	char magic[8];
	char jobid[OOB_JOBLEN];
	uint32_t numnodes;
	uint32_t len;
	uint32_t round;
	uint32_t node;
	unsigned char nonce[OOB_NONCE];
};

struct oob_join {
	char magic[8];
	char jobid[OOB_JOBLEN];
	uint32_t numnodes;
	uint32_t len;
	uint32_t round;
	uint32_t node;
	uint32_t parent;
	unsigned char nonce[OOB_NONCE];
};

_Static_assert(sizeof(struct oob_hello) == 96, "hello frame layout");
_Static_assert(sizeof(struct oob_join) == 100, "join frame layout");
_Static_assert(OOB_MAC == 32, "HMAC-SHA256");

/* The job's secret, read once by bip_oob_secret_load. */
static struct {
	int state;                    /* 0 none, 1 loaded, -1 malformed */
	unsigned char key[64];
	size_t len;
	char why[160];
} oob_secret;

/* Exchanges so far in this process: every node counts the same. */
static unsigned oob_round;

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

static int poll_ms(double deadline)
{
	double left = deadline - now_s();

	return left <= 0 ? 0 : (int)(left * 1000) + 1;
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

/* --- the tree --- */

struct bip_oob_tree {
	int n;
	int nhosts;
	int maxlocal;   /* most nodes of one host */
	int *order;     /* host h's nodes by number: order[first[h] .. first[h + 1]) */
	int *first;     /* nhosts + 1 entries */
	int *host;      /* per node: its host's index */
	int *rank;      /* per node: its rank on its host */
};

static int by_host(const void *a, const void *b, void *arg)
{
	const struct bip_conf *conf = arg;
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(conf->nodes[x].host, conf->nodes[y].host);

	return c ? c : x - y;
}

struct oob_group {
	int leader;
	int start;      /* in the sorted nodes */
	int count;
};

static int by_leader(const void *a, const void *b)
{
	return ((const struct oob_group *)a)->leader - ((const struct oob_group *)b)->leader;
}

int bip_oob_tree_new(const struct bip_conf *conf, int numnodes, struct bip_oob_tree **tree_p)
{
	struct bip_oob_tree *t = calloc(1, sizeof(*t));
	struct oob_group *g = NULL;
	int *sorted = NULL, i, h, k, ng = 0;

	if (!t)
		return -ENOMEM;
	t->n = numnodes;
	t->order = malloc((size_t)numnodes * sizeof(int));
	t->first = malloc(((size_t)numnodes + 1) * sizeof(int));
	t->host = malloc((size_t)numnodes * sizeof(int));
	t->rank = malloc((size_t)numnodes * sizeof(int));
	sorted = malloc((size_t)numnodes * sizeof(int));
	g = malloc((size_t)numnodes * sizeof(*g));
	if (!t->order || !t->first || !t->host || !t->rank || !sorted || !g) {
		free(sorted);
		free(g);
		bip_oob_tree_free(t);
		return -ENOMEM;
	}
	/* O(n log n): sorted by host name, then each host's group in the
	 * order of its first node. */
	for (i = 0; i < numnodes; i++)
		sorted[i] = i;
	qsort_r(sorted, (size_t)numnodes, sizeof(int), by_host, (void *)conf);
	for (i = 0; i < numnodes; i++) {
		if (i && !strcmp(conf->nodes[sorted[i]].host, conf->nodes[sorted[i - 1]].host)) {
			g[ng - 1].count++;
			continue;
		}
		g[ng++] = (struct oob_group){ .leader = sorted[i], .start = i, .count = 1 };
	}
	qsort(g, (size_t)ng, sizeof(*g), by_leader);
	for (h = 0, k = 0; h < ng; h++) {
		t->first[h] = k;
		for (i = 0; i < g[h].count; i++, k++) {
			int node = sorted[g[h].start + i];

			t->order[k] = node;
			t->host[node] = h;
			t->rank[node] = i;
		}
		if (g[h].count > t->maxlocal)
			t->maxlocal = g[h].count;
	}
	t->first[ng] = k;
	t->nhosts = ng;
	free(sorted);
	free(g);
	*tree_p = t;
	return 0;
}

void bip_oob_tree_free(struct bip_oob_tree *t)
{
	if (!t)
		return;
	free(t->order);
	free(t->first);
	free(t->host);
	free(t->rank);
	free(t);
}

static int host_count(const struct bip_oob_tree *t, int h)
{
	return t->first[h + 1] - t->first[h];
}

static int node_at(const struct bip_oob_tree *t, int h, int r)
{
	return t->order[t->first[h] + r];
}

/* The children of v in a binomial tree over 0 .. m - 1: v + 1, v + 2, ...
 * below v's lowest set bit (every power of two for the root). */
static int lowbit_limit(int v)
{
	return v ? v & -v : 1 << 30;
}

int bip_oob_tree_parent(const struct bip_oob_tree *t, int node, int *local_p)
{
	int h = t->host[node], r = t->rank[node];

	if (r) {
		*local_p = 1;
		return node_at(t, h, r & (r - 1));
	}
	*local_p = 0;
	return h ? node_at(t, h & (h - 1), 0) : -1;
}

int bip_oob_tree_children(const struct bip_oob_tree *t, int node, int *children, int max)
{
	int h = t->host[node], r = t->rank[node], m = host_count(t, h), b, k = 0;

	for (b = 1; b < lowbit_limit(r) && r + b < m && k < max; b <<= 1)
		children[k++] = node_at(t, h, r + b);
	if (r)
		return k;
	for (b = 1; b < lowbit_limit(h) && h + b < t->nhosts && k < max; b <<= 1)
		children[k++] = node_at(t, h + b, 0);
	return k;
}

int bip_oob_tree_depth(const struct bip_oob_tree *t, int node)
{
	return __builtin_popcount((unsigned)t->rank[node]) +
	       __builtin_popcount((unsigned)t->host[node]);
}

/* The most links between node 0 and any node. */
static int tree_height(const struct bip_oob_tree *t)
{
	int bits = 0, v;

	for (v = t->maxlocal - 1; v; v >>= 1)
		bits++;
	for (v = t->nhosts - 1; v; v >>= 1)
		bits++;
	return bits;
}

/* 1 if node y is in the subtree under child c. */
static int in_subtree(const struct bip_oob_tree *t, int c, int y)
{
	int hc = t->host[c], rc = t->rank[c];

	if (rc)
		return t->host[y] == hc && t->rank[y] >= rc && t->rank[y] < rc + (rc & -rc);
	if (hc)
		return t->host[y] >= hc && t->host[y] < hc + (hc & -hc);
	return 1;
}

/* The nodes in the subtree under c. */
static int subtree_size(const struct bip_oob_tree *t, int c)
{
	int hc = t->host[c], rc = t->rank[c], m = host_count(t, hc), h, end;

	if (rc) {
		end = rc + (rc & -rc);
		return (end < m ? end : m) - rc;
	}
	if (!hc)
		return t->n;
	end = hc + (hc & -hc);
	if (end > t->nhosts)
		end = t->nhosts;
	for (h = hc, m = 0; h < end; h++)
		m += host_count(t, h);
	return m;
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

/* --- frames --- */

/* 1 if the magic and job id are those of jobid. */
static int frame_same_job(const char *magic, const char *fjob, const char *jobid)
{
	return !memcmp(magic, OOB_MAGIC, sizeof(OOB_MAGIC)) && memchr(fjob, 0, OOB_JOBLEN) &&
	       !strcmp(fjob, jobid);
}

int bip_oob_join_check(const void *frame, size_t n, const char *jobid, int numnodes,
		       size_t len, unsigned round, int *node_p, char *why, size_t whylen)
{
	struct oob_join j;
	uint32_t node;

	if (n < sizeof(j) + OOB_MAC) {
		snprintf(why, whylen, "a join of %zu bytes, %zu expected", n,
			 sizeof(j) + OOB_MAC);
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
	if (ntohl(j.numnodes) != (uint32_t)numnodes || ntohl(j.len) != len ||
	    ntohl(j.round) != round || node >= (uint32_t)numnodes) {
		snprintf(why, whylen, "refused a node claiming to be node %u of %u (addresses of "
			 "%u bytes, exchange %u): this job has %d nodes and %zu-byte addresses, "
			 "exchange %u", node, ntohl(j.numnodes), ntohl(j.len), ntohl(j.round) + 1,
			 numnodes, len, round + 1);
		return -EINVAL;
	}
	*node_p = (int)node;
	return 0;
}

int bip_oob_report_check(const struct bip_oob_tree *t, int child, const void *report,
			 size_t n, size_t len, char *why, size_t whylen)
{
	const unsigned char *p = report;
	unsigned char *seen;
	uint32_t count, nmissing, v;
	size_t i, room = (size_t)subtree_size(t, child);
	int self = 0, rc = 0;

	if (n < 8) {
		snprintf(why, whylen, "a report of %zu bytes", n);
		return -EPROTO;
	}
	memcpy(&v, p, 4);
	count = ntohl(v);
	memcpy(&v, p + 4, 4);
	nmissing = ntohl(v);
	if (count > room || nmissing > room - count ||
	    n != 8 + 4 * ((size_t)count + nmissing) + (size_t)count * len) {
		snprintf(why, whylen, "a report of %zu bytes for %u nodes and %u missing, in a "
			 "subtree of %zu", n, count, nmissing, room);
		return -EPROTO;
	}
	seen = calloc((size_t)t->n, 1);
	if (!seen) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < (size_t)count + nmissing; i++) {
		memcpy(&v, p + 8 + 4 * i, 4);
		v = ntohl(v);
		if (v >= (uint32_t)t->n || !in_subtree(t, child, (int)v) || seen[v]) {
			snprintf(why, whylen, "a report naming node %u, %s", v,
				 v >= (uint32_t)t->n ? "not a node of the job" :
				 seen[v] ? "twice" : "not below node it came from");
			rc = -EPROTO;
			break;
		}
		seen[v] = 1;
		self |= i < count && v == (uint32_t)child;
	}
	if (!rc && !self) {
		snprintf(why, whylen, "a report without the address of node %d, which sent it",
			 child);
		rc = -EPROTO;
	}
	free(seen);
	return rc;
}

/* --- sockets --- */

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
		ssize_t n;
		int rc;

		if (now_s() >= deadline)
			return -ETIMEDOUT;
		rc = poll(&pfd, 1, poll_ms(deadline));
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

/* The IPv4 address of node's host, or -EHOSTUNREACH with a message. */
static int host_addr(const struct bip_oob_job *job, int node, struct sockaddr_in *sa,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	const char *host = job->conf->nodes[node].host;
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &ai);

	if (rc != 0) {
		snprintf(err, errlen, "%s: cannot find the address of host %s (node %d): %s",
			 job->what, host, node, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	freeaddrinfo(ai);
	return 0;
}

/* The abstract UNIX name of node's listener for its own host's children. */
static void unix_name(const struct bip_oob_job *job, unsigned round, int node,
		      struct sockaddr_un *sa, socklen_t *len_p)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t r = htonl(round), v = htonl((uint32_t)node);
	unsigned char mac[OOB_MAC];
	int i, k;

	oob_mac(mac, "unix", job->jobid, strlen(job->jobid), &r, 4, &v, 4, NULL, 0);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	k = 1 + snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "bip-oob-");
	for (i = 0; i < 20; i++) {
		sa->sun_path[k++] = hex[mac[i] >> 4];
		sa->sun_path[k++] = hex[mac[i] & 15];
	}
	*len_p = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)k);
}

/* --- one exchange --- */

struct oob_ctx {
	const struct bip_oob_job *job;
	const struct bip_oob_tree *t;
	size_t len;
	unsigned round;
	double start;
	double gather_end;     /* children's reports until then */
	double deadline;       /* the start-up timeout */
	char *all;             /* numnodes * len */
	unsigned char *have;   /* per node: its blob is in all */
	uint32_t *got;         /* the nodes in all, in the order they came */
	int ngot;
	uint32_t *missing;     /* nodes that never reported, as their parents tell */
	int nmissing;
	int children[OOB_CHILDREN_MAX];
	int nchildren;
};

/* A connection to this node: a child proving itself, then reporting. */
struct oob_conn {
	int fd;
	int local;
	int node;                     /* the child, once its join is checked */
	int done;                     /* its report is in */
	double deadline;
	struct oob_hello hello;
	struct oob_join join;
	unsigned char *in;
	size_t need, have;
	int in_report;                /* reading the report (else the join) */
	char peer[80];
};

static void conn_drop(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, int i,
		      const char *why)
{
	struct oob_conn *c = conns[i];

	fprintf(stderr, "bip: node %d: start-up: dropped a connection from %s: %s\n",
		cx->job->mynode, c->peer, why);
	close(c->fd);
	free(c->in);
	free(c);
	conns[i] = conns[--*nconns];
}

static int child_index(const struct oob_ctx *cx, int node)
{
	int i;

	for (i = 0; i < cx->nchildren; i++)
		if (cx->children[i] == node)
			return i;
	return -1;
}

/* Send the accept: the proof, and a refusal's reason when why is set. */
static int send_accept(struct oob_conn *c, const char *why)
{
	uint32_t head[2] = { htonl(why ? 1 : 0), htonl(why ? (uint32_t)strlen(why) : 0) };
	unsigned char mac[OOB_MAC];
	size_t mlen = why ? strlen(why) : 0;
	int rc;

	oob_mac(mac, "accept", &c->hello, sizeof(c->hello), &c->join, sizeof(c->join), head,
		sizeof(head), why, mlen);
	set_nonblock(c->fd, 0);
	set_send_timeout(c->fd, OOB_HANDSHAKE);
	rc = write_all(c->fd, head, sizeof(head));
	if (!rc && mlen)
		rc = write_all(c->fd, why, mlen);
	if (!rc)
		rc = write_all(c->fd, mac, sizeof(mac));
	set_nonblock(c->fd, 1);
	return rc;
}

/* c has sent its join and proof: check them, accept or refuse it. */
static void join_complete(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, int i)
{
	struct oob_conn *c = conns[i];
	const struct bip_oob_job *job = cx->job;
	unsigned char mac[OOB_MAC];
	char why[320];
	int node, rc, k;

	rc = bip_oob_join_check(c->in, c->have, job->jobid, job->numnodes, cx->len, cx->round,
				&node, why, sizeof(why));
	if (rc == -EPROTO || rc == -ESRCH) {
		conn_drop(cx, conns, nconns, i, why);
		return;
	}
	memcpy(&c->join, c->in, sizeof(c->join));
	oob_mac(mac, "join", &c->hello, sizeof(c->hello), &c->join, sizeof(c->join), NULL, 0,
		NULL, 0);
	if (crypto_verify_32(mac, c->in + sizeof(c->join))) {
		conn_drop(cx, conns, nconns, i, "its proof of the job's secret is wrong (another "
			  "job with the same id, or an attempt to join)");
		return;
	}
	if (rc == 0) {
		k = child_index(cx, node);
		if (k < 0 || ntohl(c->join.parent) != (uint32_t)job->mynode) {
			snprintf(why, sizeof(why), "node %d refused node %d: it is not one of its "
				 "children in the start-up tree (node %d's parent is node %u by its "
				 "configuration; a different configuration?)", job->mynode, node,
				 node, ntohl(c->join.parent));
			rc = -EINVAL;
		} else if (c->local != (cx->t->host[node] == cx->t->host[job->mynode])) {
			snprintf(why, sizeof(why), "node %d refused node %d: it came over %s",
				 job->mynode, node, c->local ? "a socket of this host, from another host" :
				 "the network, from this host");
			rc = -EINVAL;
		} else {
			for (k = 0; k < *nconns; k++) {
				if (conns[k] != c && conns[k]->node == node) {
					snprintf(why, sizeof(why), "node %d refused a second node "
						 "%d: that node already joined", job->mynode, node);
					rc = -EEXIST;
				}
			}
		}
	}
	if (rc < 0) {
		/* One of ours, with a wrong configuration: it prints why. */
		send_accept(c, why);
		conn_drop(cx, conns, nconns, i, why);
		return;
	}
	if (send_accept(c, NULL) < 0) {
		conn_drop(cx, conns, nconns, i, "it went away before it was accepted");
		return;
	}
	c->node = node;
	c->in_report = 1;
	c->need = 8;
	c->have = 0;
}

/* c's report is in, proof and all: take its blobs. */
static void report_complete(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, int i)
{
	struct oob_conn *c = conns[i];
	size_t body = c->need - OOB_MAC;
	unsigned char mac[OOB_MAC];
	uint32_t count, nmissing, v;
	char why[256];
	size_t k;

	oob_mac(mac, "report", &c->hello, sizeof(c->hello), &c->join, sizeof(c->join), c->in,
		body, NULL, 0);
	if (crypto_verify_32(mac, c->in + body)) {
		conn_drop(cx, conns, nconns, i, "its report fails its proof");
		return;
	}
	if (bip_oob_report_check(cx->t, c->node, c->in, body, cx->len, why, sizeof(why)) < 0) {
		conn_drop(cx, conns, nconns, i, why);
		return;
	}
	memcpy(&v, c->in, 4);
	count = ntohl(v);
	memcpy(&v, c->in + 4, 4);
	nmissing = ntohl(v);
	for (k = 0; k < count; k++) {
		memcpy(&v, c->in + 8 + 4 * k, 4);
		v = ntohl(v);
		memcpy(cx->all + (size_t)v * cx->len,
		       c->in + 8 + 4 * ((size_t)count + nmissing) + k * cx->len, cx->len);
		cx->have[v] = 1;
		cx->got[cx->ngot++] = v;
	}
	for (k = 0; k < nmissing; k++) {
		memcpy(&v, c->in + 8 + 4 * ((size_t)count + k), 4);
		cx->missing[cx->nmissing++] = ntohl(v);
	}
	free(c->in);
	c->in = NULL;
	c->done = 1;
	set_nonblock(c->fd, 0);
}

/* Read what c has sent; go on when a frame is whole. */
static void conn_read(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, int i)
{
	struct oob_conn *c = conns[i];
	ssize_t n = recv(c->fd, c->in + c->have, c->need - c->have, 0);

	if (n == 0) {
		conn_drop(cx, conns, nconns, i, c->in_report ? "it closed in the middle of its "
			  "report" : c->have ? "it closed in the middle of its join" :
			  "it closed without a word (a node of another job?)");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_drop(cx, conns, nconns, i, strerror(errno));
		return;
	}
	c->have += (size_t)n;
	if (c->have < c->need)
		return;
	if (!c->in_report) {
		join_complete(cx, conns, nconns, i);
		return;
	}
	if (c->need == 8) {
		/* The counts: the rest follows, bounded by the child's subtree. */
		uint32_t count, nmissing;
		size_t room = (size_t)subtree_size(cx->t, c->node);
		unsigned char *in;

		memcpy(&count, c->in, 4);
		memcpy(&nmissing, c->in + 4, 4);
		count = ntohl(count);
		nmissing = ntohl(nmissing);
		if (count > room || nmissing > room - count) {
			char why[160];

			snprintf(why, sizeof(why), "a report for %u nodes and %u missing, in a "
				 "subtree of %zu", count, nmissing, room);
			conn_drop(cx, conns, nconns, i, why);
			return;
		}
		c->need = 8 + 4 * ((size_t)count + nmissing) + (size_t)count * cx->len + OOB_MAC;
		in = realloc(c->in, c->need);
		if (!in) {
			conn_drop(cx, conns, nconns, i, "out of memory for its report");
			return;
		}
		c->in = in;
		return;
	}
	report_complete(cx, conns, nconns, i);
}

static void conn_accept(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, int lfd,
			int local)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct oob_conn *c;
	char peer[80];
	int fd, one = 1;

	fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (local) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
			close(fd);
			return;
		}
		snprintf(peer, sizeof(peer), "this host (pid %d, uid %u)", (int)cred.pid,
			 (unsigned)cred.uid);
		if (cred.uid != geteuid()) {
			fprintf(stderr, "bip: node %d: start-up: dropped a connection from %s: a "
				"process of another user\n", cx->job->mynode, peer);
			close(fd);
			return;
		}
	} else {
		struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
		char addr[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &sa->sin_addr, addr, sizeof(addr));
		snprintf(peer, sizeof(peer), "%s:%d", addr, ntohs(sa->sin_port));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c = *nconns < OOB_PENDING + cx->nchildren ? calloc(1, sizeof(*c)) : NULL;
	if (c && !(c->in = malloc(sizeof(struct oob_join) + OOB_MAC))) {
		free(c);
		c = NULL;
	}
	if (!c) {
		fprintf(stderr, "bip: node %d: start-up: dropped a connection from %s: %d others "
			"wait for their proof already\n", cx->job->mynode, peer, *nconns);
		close(fd);
		return;
	}
	c->fd = fd;
	c->local = local;
	c->node = -1;
	c->deadline = now_s() + OOB_HANDSHAKE;
	c->need = sizeof(struct oob_join) + OOB_MAC;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	memset(&c->hello, 0, sizeof(c->hello));
	memcpy(c->hello.magic, OOB_MAGIC, sizeof(OOB_MAGIC));
	snprintf(c->hello.jobid, sizeof(c->hello.jobid), "%s", cx->job->jobid);
	c->hello.numnodes = htonl((uint32_t)cx->job->numnodes);
	c->hello.len = htonl((uint32_t)cx->len);
	c->hello.round = htonl(cx->round);
	c->hello.node = htonl((uint32_t)cx->job->mynode);
	randombytes_buf(c->hello.nonce, sizeof(c->hello.nonce));
	conns[(*nconns)++] = c;
	/* A fresh socket's buffer takes the 96 bytes at once. */
	if (send(fd, &c->hello, sizeof(c->hello), MSG_NOSIGNAL) != (ssize_t)sizeof(c->hello))
		conn_drop(cx, conns, nconns, *nconns - 1, "it cannot take the hello");
}

/* Listen for this node's children: on its abstract UNIX name (children of
 * its host), and on its host's address (first nodes of other hosts). */
static int listen_unix(struct oob_ctx *cx, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int fd;

	unix_name(cx->job, cx->round, cx->job->mynode, &sa, &sl);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 128) < 0) {
		int rc = -errno;

		snprintf(err, errlen, "%s: node %d cannot listen for the nodes of its host (a "
			 "UNIX socket): %s%s", cx->job->what, cx->job->mynode, strerror(-rc),
			 rc == -EADDRINUSE ? " (another process of this job with this node "
			 "number?)" : "");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

static int listen_tcp(struct oob_ctx *cx, int *port_p, char *err, size_t errlen)
{
	const struct bip_oob_job *job = cx->job;
	const char *host = job->conf->nodes[job->mynode].host;
	struct sockaddr_in sa;
	int i, fd, one = 1, rc, first;
	char addr[INET_ADDRSTRLEN];

	first = bip_oob_port(job->jobid, err, errlen);
	if (first < 0)
		return first;
	rc = host_addr(job, job->mynode, &sa, err, errlen);
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
		snprintf(err, errlen, "%s: node %d cannot listen on %s, the address of its host %s "
			 "in the configuration: this host does not have it (a wrong host name for "
			 "this node?)", job->what, job->mynode, addr, host);
	else
		snprintf(err, errlen, "%s: node %d cannot listen on %s (host %s), ports %d .. %d: "
			 "%s", job->what, job->mynode, addr, host, first, first + BIP_OOB_PORTS - 1,
			 strerror(-rc));
	return rc;
}

/*
 * Take the children's reports until every child has reported or the gather
 * time is up; the children that reported keep their connection in conns
 * (their result goes down it).  0, or a negative errno with err when this
 * node cannot listen.
 */
static int gather(struct oob_ctx *cx, struct oob_conn **conns, int *nconns, char *err,
		  size_t errlen)
{
	struct pollfd pfd[2 + OOB_PENDING + OOB_CHILDREN_MAX];
	int lfd[2] = { -1, -1 }, port = 0, i, k, done, need_local = 0, need_tcp = 0;

	for (i = 0; i < cx->nchildren; i++) {
		if (cx->t->host[cx->children[i]] == cx->t->host[cx->job->mynode])
			need_local = 1;
		else
			need_tcp = 1;
	}
	if (need_local && (lfd[0] = listen_unix(cx, err, errlen)) < 0)
		return lfd[0];
	if (need_tcp && (lfd[1] = listen_tcp(cx, &port, err, errlen)) < 0) {
		int rc = lfd[1];

		if (lfd[0] >= 0)
			close(lfd[0]);
		return rc;
	}
	for (;;) {
		double now = now_s(), wake = cx->gather_end;
		int n = 0;

		for (i = 0, done = 0; i < *nconns; i++)
			done += conns[i]->done;
		if (done == cx->nchildren || now >= cx->gather_end)
			break;
		for (i = *nconns; i-- > 0;)
			if (!conns[i]->done && now >= conns[i]->deadline)
				conn_drop(cx, conns, nconns, i, conns[i]->in_report ?
					  "its report did not come whole within the time limit" :
					  conns[i]->have ? "its join did not come whole within the "
					  "time limit" : "it said nothing within the time limit");
		for (k = 0; k < 2; k++)
			pfd[n++] = (struct pollfd){ .fd = lfd[k], .events = POLLIN };
		for (i = 0; i < *nconns; i++) {
			pfd[n++] = (struct pollfd){ .fd = conns[i]->done ? -1 : conns[i]->fd,
						    .events = POLLIN };
			if (!conns[i]->done && conns[i]->deadline < wake)
				wake = conns[i]->deadline;
		}
		if (poll(pfd, (nfds_t)n, poll_ms(wake)) <= 0)
			continue;
		/* Newest first, so that dropping one moves only those seen. */
		for (i = *nconns; i-- > 0;)
			if (pfd[2 + i].revents && !conns[i]->done)
				conn_read(cx, conns, nconns, i);
		for (k = 0; k < 2; k++)
			if (pfd[k].revents & POLLIN)
				conn_accept(cx, conns, nconns, lfd[k], k == 0);
	}
	/* No listener outlives the gathering: a child that connects later
	 * finds nobody, rather than a parent that has moved on. */
	for (k = 0; k < 2; k++)
		if (lfd[k] >= 0)
			close(lfd[k]);
	for (i = *nconns; i-- > 0;)
		if (!conns[i]->done)
			conn_drop(cx, conns, nconns, i, conns[i]->in_report ?
				  "its report was not whole when the gathering ended" :
				  conns[i]->have ? "its join was not whole when the gathering ended" :
				  "it had said nothing when the gathering ended");
	/* The children that never reported are missing, as the nodes below them. */
	for (i = 0; i < cx->nchildren; i++) {
		for (k = 0; k < *nconns && conns[k]->node != cx->children[i]; k++)
			;
		if (k == *nconns)
			cx->missing[cx->nmissing++] = (uint32_t)cx->children[i];
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The message of a failed exchange: the nodes that never joined. */
static void missing_message(const struct oob_ctx *cx, uint32_t *missing, int nm, int reached,
			    char *err, size_t errlen)
{
	const struct bip_oob_job *job = cx->job;
	size_t used;
	int i, below;

	qsort(missing, (size_t)nm, sizeof(*missing), cmp_u32);
	used = (size_t)snprintf(err, errlen, "%s: timed out after %.0f s waiting for node",
				job->what, job->timeout);
	for (i = 0; i < nm && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s %u (%s)", i ? "," : "",
					 missing[i], job->conf->nodes[missing[i]].host);
	below = job->numnodes - reached - nm;
	if (used < errlen)
		used += (size_t)snprintf(err + used, errlen - used, " in the start-up address "
					 "exchange: %s never started bip_init, or cannot reach the "
					 "node %s report%s to", nm > 1 ? "they" : "it",
					 nm > 1 ? "they" : "it", nm > 1 ? "" : "s");
	if (below > 0 && used < errlen)
		snprintf(err + used, errlen - used, " (%d more node%s join%s through %s)", below,
			 below > 1 ? "s" : "", below > 1 ? "" : "s", nm > 1 ? "them" : "it");
}

/* Send the result to every child that reported, each with its own proof:
 * every blob, or (msg set) the failure in node 0's words. */
static void send_down(struct oob_ctx *cx, struct oob_conn **conns, int nconns, const char *msg)
{
	size_t alen = (size_t)cx->job->numnodes * cx->len, mlen = msg ? strlen(msg) : 0;
	uint32_t head[2] = { htonl(msg ? 1 : 0), htonl((uint32_t)mlen) };
	const void *body = msg ? (const void *)msg : (const void *)cx->all;
	size_t blen = msg ? mlen : alen;
	int i;

	for (i = 0; i < nconns; i++) {
		struct oob_conn *c = conns[i];
		unsigned char mac[OOB_MAC];

		oob_mac(mac, "result", &c->hello, sizeof(c->hello), &c->join, sizeof(c->join),
			head, sizeof(head), body, blen);
		set_send_timeout(c->fd, cx->job->timeout);
		/* A child gone since it reported tells its own end. */
		if (write_all(c->fd, head, sizeof(head)) < 0 || write_all(c->fd, body, blen) < 0)
			continue;
		write_all(c->fd, mac, sizeof(mac));
	}
}

/* --- towards the parent --- */

/* Connect to addr before deadline; returns the socket or a negative errno. */
static int oob_connect(const struct sockaddr *addr, socklen_t alen, double deadline)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, rc, soerr = 0, one = 1;

	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, addr, alen) < 0 && errno != EINPROGRESS) {
		rc = -errno;
		goto undo_socket;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	for (;;) {
		if (now_s() >= deadline) {
			rc = -ETIMEDOUT;
			goto undo_socket;
		}
		rc = poll(&pfd, 1, poll_ms(deadline));
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
	if (addr->sa_family == AF_INET)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;

undo_socket:
	close(fd);
	return rc;
}

/* What this node sends its parent. */
struct oob_report {
	unsigned char *bytes;
	size_t len;
};

static int report_make(struct oob_ctx *cx, struct oob_report *r)
{
	size_t n = 8 + 4 * ((size_t)cx->ngot + (size_t)cx->nmissing) + (size_t)cx->ngot * cx->len;
	unsigned char *p = malloc(n);
	uint32_t v;
	int i;

	if (!p)
		return -ENOMEM;
	v = htonl((uint32_t)cx->ngot);
	memcpy(p, &v, 4);
	v = htonl((uint32_t)cx->nmissing);
	memcpy(p + 4, &v, 4);
	for (i = 0; i < cx->ngot; i++) {
		v = htonl(cx->got[i]);
		memcpy(p + 8 + 4 * (size_t)i, &v, 4);
		memcpy(p + 8 + 4 * ((size_t)cx->ngot + cx->nmissing) + (size_t)i * cx->len,
		       cx->all + (size_t)cx->got[i] * cx->len, cx->len);
	}
	for (i = 0; i < cx->nmissing; i++) {
		v = htonl(cx->missing[i]);
		memcpy(p + 8 + 4 * ((size_t)cx->ngot + i), &v, 4);
	}
	r->bytes = p;
	r->len = n;
	return 0;
}

/* Read the result from the parent (node parent on fd) into result. */
static int read_result(struct oob_ctx *cx, int fd, int parent, const struct oob_hello *hello,
		       const struct oob_join *join, char *result, char *err, size_t errlen)
{
	const struct bip_oob_job *job = cx->job;
	const char *host = job->conf->nodes[parent].host;
	size_t alen = (size_t)job->numnodes * cx->len;
	double deadline = cx->deadline + OOB_RESULT_SLACK;
	unsigned char mac[OOB_MAC], got[OOB_MAC];
	char msg[OOB_MSG_MAX + 1];
	uint32_t head[2], status, mlen;
	int rc;

	rc = read_all(fd, head, sizeof(head), deadline);
	if (rc == -ETIMEDOUT) {
		snprintf(err, errlen, "%s: timed out after %.0f s waiting for node %d (%s) to "
			 "send the addresses of the job", job->what, job->timeout, parent, host);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: node %d (%s) closed the start-up connection: %s",
			 job->what, parent, host, strerror(-rc));
		return rc;
	}
	status = ntohl(head[0]);
	mlen = ntohl(head[1]);
	if (status > 1 || (status == 0 && mlen) || mlen > OOB_MSG_MAX) {
		snprintf(err, errlen, "%s: node %d (%s) sent a malformed result", job->what,
			 parent, host);
		return -EBADMSG;
	}
	rc = status ? read_all(fd, msg, mlen, deadline) : read_all(fd, result, alen, deadline);
	if (!rc)
		rc = read_all(fd, got, sizeof(got), deadline);
	if (rc < 0) {
		snprintf(err, errlen, "%s: reading the result from node %d (%s): %s", job->what,
			 parent, host, strerror(-rc));
		return rc;
	}
	oob_mac(mac, "result", hello, sizeof(*hello), join, sizeof(*join), head, sizeof(head),
		status ? (const void *)msg : (const void *)result, status ? mlen : alen);
	if (crypto_verify_32(mac, got)) {
		snprintf(err, errlen, "%s: the result from node %d (%s) fails its proof: changed "
			 "on the way", job->what, parent, host);
		return -EBADMSG;
	}
	if (status) {
		msg[mlen] = '\0';
		snprintf(err, errlen, "%s", msg); /* node 0's words, which name it */
		return -ETIMEDOUT;
	}
	/* This node's own address came back as it gave it. */
	if (memcmp(result + (size_t)job->mynode * cx->len, cx->all + (size_t)job->mynode * cx->len,
		   cx->len)) {
		snprintf(err, errlen, "%s: the addresses from node %d (%s) do not hold this node's "
			 "own", job->what, parent, host);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Talk to the listener on fd as node parent's child.  Returns 0 with result
 * filled, 1 when the listener is not this node's parent in this exchange
 * (try elsewhere; why in *skip), or a negative errno with a message.
 */
static int talk_up(struct oob_ctx *cx, int fd, int parent, const struct oob_report *r,
		   char *result, char *err, size_t errlen, const char **skip)
{
	const struct bip_oob_job *job = cx->job;
	const char *host = job->conf->nodes[parent].host;
	struct oob_hello hello;
	struct oob_join join;
	unsigned char mac[OOB_MAC], got[OOB_MAC];
	uint32_t head[2], status, mlen;
	char msg[OOB_MSG_MAX + 1];
	double hs = now_s() + OOB_HANDSHAKE;
	int rc;

	if (hs > cx->deadline)
		hs = cx->deadline;
	rc = read_all(fd, &hello, sizeof(hello), hs);
	if (rc < 0 || !frame_same_job(hello.magic, hello.jobid, job->jobid))
		return 1;
	if (ntohl(hello.numnodes) != (uint32_t)job->numnodes || ntohl(hello.len) != cx->len) {
		snprintf(err, errlen, "%s: node %u (%s) runs job %s with %u nodes and %u-byte "
			 "addresses, this node has %d nodes and %zu-byte addresses (a different "
			 "configuration or driver)", job->what, ntohl(hello.node), host, job->jobid,
			 ntohl(hello.numnodes), ntohl(hello.len), job->numnodes, cx->len);
		return -EPROTO;
	}
	if (ntohl(hello.node) != (uint32_t)parent || ntohl(hello.round) != cx->round) {
		*skip = "a listener there is another node of this job, or another exchange";
		return 1;
	}
	memset(&join, 0, sizeof(join));
	memcpy(join.magic, OOB_MAGIC, sizeof(OOB_MAGIC));
	snprintf(join.jobid, sizeof(join.jobid), "%s", job->jobid);
	join.numnodes = htonl((uint32_t)job->numnodes);
	join.len = htonl((uint32_t)cx->len);
	join.round = htonl(cx->round);
	join.node = htonl((uint32_t)job->mynode);
	join.parent = htonl((uint32_t)parent);
	randombytes_buf(join.nonce, sizeof(join.nonce));
	oob_mac(mac, "join", &hello, sizeof(hello), &join, sizeof(join), NULL, 0, NULL, 0);
	set_send_timeout(fd, OOB_HANDSHAKE);
	if (write_all(fd, &join, sizeof(join)) < 0 || write_all(fd, mac, sizeof(mac)) < 0)
		return 1;
	/* The parent proves at once that it knows the secret too, and says
	 * whether it takes this node. */
	hs = now_s() + OOB_HANDSHAKE;
	if (read_all(fd, head, sizeof(head), hs < cx->deadline ? hs : cx->deadline) < 0) {
		*skip = "a listener there took the join and gave no proof of the job's secret";
		return 1;
	}
	status = ntohl(head[0]);
	mlen = ntohl(head[1]);
	if (status > 1 || mlen > OOB_MSG_MAX || (status == 0 && mlen) ||
	    read_all(fd, msg, mlen, hs) < 0 || read_all(fd, got, sizeof(got), hs) < 0) {
		*skip = "a listener there took the join and gave no proof of the job's secret";
		return 1;
	}
	oob_mac(mac, "accept", &hello, sizeof(hello), &join, sizeof(join), head, sizeof(head),
		msg, mlen);
	if (crypto_verify_32(mac, got)) {
		*skip = "a listener there does not know the job's secret (another job with the "
			"same id, or an impostor)";
		return 1;
	}
	if (status) {
		msg[mlen] = '\0';
		snprintf(err, errlen, "%s: %s", job->what, msg);
		return -ECONNREFUSED;
	}
	oob_mac(mac, "report", &hello, sizeof(hello), &join, sizeof(join), r->bytes, r->len,
		NULL, 0);
	set_send_timeout(fd, cx->job->timeout);
	if (write_all(fd, r->bytes, r->len) < 0 || write_all(fd, mac, sizeof(mac)) < 0) {
		snprintf(err, errlen, "%s: node %d (%s) closed the start-up connection before "
			 "this node's report", job->what, parent, host);
		return -ECONNRESET;
	}
	return read_result(cx, fd, parent, &hello, &join, result, err, errlen);
}

/* Report to the parent, retrying until the timeout; then its result. */
static int report_up(struct oob_ctx *cx, char *result, char *err, size_t errlen)
{
	const struct bip_oob_job *job = cx->job;
	struct oob_report r;
	struct sockaddr_storage addr;
	socklen_t alen;
	const char *skip = NULL, *host;
	int local, parent, first = 0, i, rc, last = -ETIMEDOUT, answered = 0, nap = 2;

	parent = bip_oob_tree_parent(cx->t, job->mynode, &local);
	host = job->conf->nodes[parent].host;
	if (local) {
		unix_name(job, cx->round, parent, (struct sockaddr_un *)&addr, &alen);
	} else {
		first = bip_oob_port(job->jobid, err, errlen);
		if (first < 0)
			return first;
		rc = host_addr(job, parent, (struct sockaddr_in *)&addr, err, errlen);
		if (rc < 0)
			return rc;
		alen = sizeof(struct sockaddr_in);
	}
	rc = report_make(cx, &r);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	for (;;) {
		for (i = 0; i < (local ? 1 : BIP_OOB_PORTS); i++) {
			double step = now_s() + 2.0;
			int fd;

			if (!local)
				((struct sockaddr_in *)&addr)->sin_port = htons((uint16_t)(first + i));
			if (now_s() >= cx->deadline)
				break;
			fd = oob_connect((struct sockaddr *)&addr, alen,
					 step < cx->deadline ? step : cx->deadline);
			if (fd < 0) {
				if (fd == -ECONNREFUSED || (local && fd == -ENOENT)) {
					answered = 1; /* the host is there, the listener is not */
					continue;
				}
				last = fd;
				break; /* the host itself does not answer: wait, retry */
			}
			answered = 1;
			rc = talk_up(cx, fd, parent, &r, result, err, errlen, &skip);
			close(fd);
			if (rc <= 0) {
				free(r.bytes);
				return rc;
			}
		}
		if (now_s() >= cx->deadline)
			break;
		nap_ms(nap);
		nap = nap < 25 ? 2 * nap : 50;
	}
	free(r.bytes);
	if (local)
		snprintf(err, errlen, "%s: timed out after %.0f s: node %d (host %s, this node's "
			 "host), to which this node reports in the start-up address exchange, "
			 "never listened for it: it did not start bip_init, or had stopped waiting "
			 "for this node%s%s", job->what, job->timeout, parent, host,
			 skip ? "; " : "", skip ? skip : "");
	else if (answered)
		snprintf(err, errlen, "%s: timed out after %.0f s: node %d (host %s), to which this "
			 "node reports in the start-up address exchange, never listened for it on "
			 "ports %d .. %d: it did not start bip_init, had stopped waiting for this "
			 "node, or runs another job%s%s", job->what, job->timeout, parent, host,
			 first, first + BIP_OOB_PORTS - 1, skip ? "; " : "", skip ? skip : "");
	else
		snprintf(err, errlen, "%s: host %s (node %d) could not be reached within %.0f s: %s",
			 job->what, host, parent, job->timeout, strerror(-last));
	return -ETIMEDOUT;
}

static int exchange(const struct bip_oob_job *job, const struct bip_oob_tree *t,
		    const void *blob, size_t len, char *result, char *err, size_t errlen)
{
	struct oob_ctx cx = { .job = job, .t = t, .len = len, .round = oob_round - 1 };
	struct oob_conn *conns[OOB_PENDING + OOB_CHILDREN_MAX];
	int nconns = 0, i, rc, depth, height;
	double step;

	cx.start = now_s();
	cx.deadline = cx.start + job->timeout;
	/* Deeper nodes stop gathering first, a step for each link from node 0,
	 * so that what they miss reaches node 0 before its own time is up. */
	depth = bip_oob_tree_depth(t, job->mynode);
	height = tree_height(t);
	step = job->timeout / (4.0 * (height + 1));
	if (step > 0.5)
		step = 0.5;
	cx.gather_end = cx.deadline - step * depth;
	cx.nchildren = bip_oob_tree_children(t, job->mynode, cx.children, OOB_CHILDREN_MAX);
	cx.all = malloc((size_t)job->numnodes * len);
	cx.have = calloc((size_t)job->numnodes, 1);
	cx.got = malloc((size_t)job->numnodes * sizeof(*cx.got));
	cx.missing = malloc((size_t)job->numnodes * sizeof(*cx.missing));
	if (!cx.all || !cx.have || !cx.got || !cx.missing) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto undo_alloc;
	}
	memcpy(cx.all + (size_t)job->mynode * len, blob, len);
	cx.have[job->mynode] = 1;
	cx.got[cx.ngot++] = (uint32_t)job->mynode;
	rc = gather(&cx, conns, &nconns, err, errlen);
	if (rc < 0)
		goto undo_conns;
	if (job->mynode != 0) {
		rc = report_up(&cx, result, err, errlen);
		if (rc == 0)
			memcpy(cx.all, result, (size_t)job->numnodes * len);
		/* On failure the children learn why from this node's words. */
		send_down(&cx, conns, nconns, rc == 0 ? NULL : err);
		goto undo_conns;
	}
	if (cx.ngot == job->numnodes) {
		memcpy(result, cx.all, (size_t)job->numnodes * len);
		send_down(&cx, conns, nconns, NULL);
		rc = 0;
	} else {
		missing_message(&cx, cx.missing, cx.nmissing, cx.ngot, err, errlen);
		send_down(&cx, conns, nconns, err);
		rc = -ETIMEDOUT;
	}
undo_conns:
	for (i = 0; i < nconns; i++) {
		close(conns[i]->fd);
		free(conns[i]->in);
		free(conns[i]);
	}
undo_alloc:
	free(cx.all);
	free(cx.have);
	free(cx.got);
	free(cx.missing);
	return rc;
}

int bip_oob_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		      char *err, size_t errlen)
{
	struct bip_oob_tree *t;
	char *tmp;
	int rc;

	if (len < 1 || len > BIP_OOB_BLOB_MAX) {
		snprintf(err, errlen, "%s: address of %zu bytes (at most %d)", job->what, len,
			 BIP_OOB_BLOB_MAX);
		return -EINVAL;
	}
	if (job->numnodes == 1) {
		memcpy(all, blob, len);
		return 0;
	}
	rc = secret_ready(job, err, errlen);
	if (rc < 0)
		return rc;
	oob_round++;
	tmp = malloc((size_t)job->numnodes * len);
	rc = tmp ? bip_oob_tree_new(job->conf, job->numnodes, &t) : -ENOMEM;
	if (rc < 0) {
		free(tmp);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	rc = exchange(job, t, blob, len, tmp, err, errlen);
	if (rc == 0)
		memcpy(all, tmp, (size_t)job->numnodes * len);
	bip_oob_tree_free(t);
	free(tmp);
	return rc;
}
