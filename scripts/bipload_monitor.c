/* SPDX-License-Identifier: MIT */
/*
 * bipload_monitor.c - bipload --monitor: a live view of the job in a
 * browser (bipload(1)).
 *
 * Where the numbers come from.  Every process of the job gets a page of
 * its own (lib/bip/boot/monitor.h): an anonymous memory file, sealed
 * against shrinking and growing, which its launcher creates before it
 * starts it and hands over as a descriptor (BIP_MONITOR_FD); the process
 * copies its counters there (lib/bip/boot/monitor.c).  bipload maps the
 * pages of its own host's processes and reads them every
 * BIPLOAD_MONITOR_PERIOD_MS; nothing travels on the job's message paths.
 * On other hosts, the proxy (bipload_proxy.c) gives its processes pages the
 * same way, reads them as often, and sends bipload a MONITOR frame with the
 * copy when it has changed (bipload_proxy.h), on the proxy's own channel.
 * A page is the process's word, untrusted, and a frame the proxy's: bipload
 * copies a page under its sequence number, checks a frame's length against
 * the job's nodes, takes only numbers from either, and clamps the number of
 * peers to the page's room and to the job's nodes.
 *
 * What it keeps.  The last good copy of each process's page (kept after
 * the process ends, so the view holds the last state), and a history of
 * each process's bytes sent, BIPLOAD_MONITOR_HISTORY samples, from which the
 * page draws throughput over time.  The core counts by process, not by
 * driver, so throughput is per process, and the page says so.
 *
 * The server.  A small HTTP/1.1 server on a listening socket of its own
 * (127.0.0.1 and a port the system chooses, unless --monitor ADDR:PORT),
 * polled in bipload's own loop (bipload_pm.c) with every socket
 * non-blocking: it never waits for a client.  It answers GET of two
 * targets and nothing else:
 *
 *   /?token=T        the page (scripts/monitor/index.html, built into
 *                    bipload as a string, monitor_page.h)
 *   /state?token=T   the state as JSON (below)
 *
 * T is the job's monitor token: 256 bits from libsodium's generator, in
 * hex, printed on bipload's stderr at start in the page's URL.  Any request
 * without it gets 403; the check compares in constant time (sodium_memcmp).
 * Every request is untrusted: at most BIPLOAD_MONITOR_REQ_MAX bytes of
 * request head (longer: 431), a request line of three words and only GET
 * (others: 400, 405), at most BIPLOAD_MONITOR_CONNS connections at once (a
 * new one beyond is closed at once), each given BIPLOAD_MONITOR_IDLE_S
 * seconds to send its request and take its answer.  One request per
 * connection (Connection: close); request bodies are never read.
 *
 * The JSON state:
 *   {"job": id, "nodes": N, "running": processes still running,
 *    "split": "process" (throughput is per process, see above),
 *    "ranks": [{"node", "host", "cluster" (name or null), "relay" (bool),
 *               "local" (bool: its page is read, here or by its proxy),
 *               "state": "waiting" |
 *               "running" | "ended", "updates"}...],
 *    "matrix": [[bytes sent from row to column]...] (the first
 *              BIPLOAD_MONITOR_MATRIX_MAX nodes), "messages": the same in
 *              messages,
 *    "counters": [{name: value of struct bip_counters}..., with "path":
 *                 [{...}...] per path] per node,
 *    "history": {"period_ms", "t": [seconds since start...],
 *                "bytes": [[bytes sent by node at each t]...]},
 *    "gateways": [{"clusters": [a, b], "hosts": [h, h], "driver",
 *                  "relays": [node...]}...],
 *    "trace": {"dir": the absolute DIR of --trace} or null}
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_monitor.h"
#include "monitor.h"
#include "monitor_page.h"

#define BIPLOAD_MONITOR_CONNS 16
#define BIPLOAD_MONITOR_REQ_MAX 4096
#define BIPLOAD_MONITOR_IDLE_S 10.0
#define BIPLOAD_MONITOR_HISTORY 240
#define BIPLOAD_MONITOR_MATRIX_MAX 256
#define BIPLOAD_MONITOR_TOKEN_BYTES 32

struct conn {
	int fd;                 /* -1: free */
	double since;
	size_t got;
	char req[BIPLOAD_MONITOR_REQ_MAX + 1];
	char *out;              /* the answer, once known */
	size_t out_len, out_done;
};

/* A process's page and the last good copy of it. */
struct watched {
	struct bip_monitor_page *map;   /* bipload's read-only mapping, or NULL */
	size_t map_len;
	struct bip_monitor_page *copy;  /* the last good copy (same size) */
	struct bip_monitor_page *scratch; /* a copy being checked */
	int good;                       /* copy holds one */
	int remote;                     /* copies come from its host's proxy */
	int peers;                      /* its peers, clamped */
};

static int listen_fd = -1;
static char token[2 * BIPLOAD_MONITOR_TOKEN_BYTES + 1];
static struct conn conns[BIPLOAD_MONITOR_CONNS];
static struct watched *watched;
static int nwatched;
static double started, last_sample = -1;
/* history: hist_bytes[node * HISTORY + slot], slots in a ring of hist_n */
static uint64_t *hist_bytes;
static double hist_t[BIPLOAD_MONITOR_HISTORY];
static unsigned hist_head, hist_n;

int bipload_monitor_on(void)
{
	return listen_fd >= 0;
}

/* ADDR:PORT or [ADDR6]:PORT into a socket address. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;
	size_t hl;

	if (!colon)
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -EINVAL;
}

int bipload_monitor_addr_like(const char *s)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return s && parse_addr(s, &ss, &len) == 0;
}

void bipload_monitor_start(const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	unsigned char raw[BIPLOAD_MONITOR_TOKEN_BYTES];
	char shown[INET6_ADDRSTRLEN + 2];
	int one = 1, i, port;

	if (sodium_init() < 0)
		die("--monitor: libsodium cannot start");
	if (parse_addr(addr ? addr : "127.0.0.1:0", &ss, &len) < 0)
		die("--monitor %s: expected ADDR:PORT (such as 127.0.0.1:8080)", addr);
	listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		die("--monitor: socket: %s", strerror(errno));
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, (struct sockaddr *)&ss, len) < 0 || listen(listen_fd, 16) < 0)
		die("--monitor %s: %s", addr ? addr : "127.0.0.1:0", strerror(errno));
	len = sizeof(ss);
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) < 0)
		die("--monitor: getsockname: %s", strerror(errno));
	if (ss.ss_family == AF_INET6) {
		shown[0] = '[';
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, shown + 1,
			  sizeof(shown) - 2);
		strcat(shown, "]");
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, shown, sizeof(shown));
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(token, sizeof(token), raw, sizeof(raw));
	sodium_memzero(raw, sizeof(raw));
	for (i = 0; i < BIPLOAD_MONITOR_CONNS; i++)
		conns[i].fd = -1;
	started = now_s();
	/* Printed whatever -q says: it is the only way to the page. */
	fprintf(stderr, "bipload: monitor at http://%s:%d/?token=%s\n", shown, port, token);
}

void bipload_monitor_prepare(int room)
{
	if (listen_fd < 0)
		return;
	nwatched = room;
	watched = calloc((size_t)room, sizeof(*watched));
	hist_bytes = calloc((size_t)room * BIPLOAD_MONITOR_HISTORY, sizeof(*hist_bytes));
	if (!watched || !hist_bytes)
		die("out of memory");
}

int bipload_monitor_page_fd(int node)
{
	struct watched *w;
	size_t peers, len;
	int fd;

	if (listen_fd < 0 || node < 0 || node >= nwatched)
		return -1;
	w = &watched[node];
	peers = (size_t)nwatched;
	if (peers > BIP_MONITOR_PEERS_MAX)
		peers = BIP_MONITOR_PEERS_MAX;
	len = bip_monitor_size(peers);
	fd = memfd_create("bip-monitor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		info("--monitor: node %d: memfd_create: %s", node, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		info("--monitor: node %d: the page: %s", node, strerror(errno));
		close(fd);
		return -1;
	}
	/* Above the descriptors a child is given (3 and 4): its dup2s
	 * cannot overwrite it. */
	if (fd < 10) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);

		close(fd);
		if (high < 0)
			return -1;
		fd = high;
	}
	w->map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	w->copy = calloc(1, len);
	w->scratch = calloc(1, len);
	if (w->map == MAP_FAILED || !w->copy || !w->scratch) {
		info("--monitor: node %d: cannot map its page", node);
		if (w->map != MAP_FAILED)
			munmap(w->map, len);
		w->map = NULL;
		free(w->copy);
		free(w->scratch);
		w->copy = w->scratch = NULL;
		close(fd);
		return -1;
	}
	w->map_len = len;
	return fd;
}

/* Copy node's page if it is stable; keep the last good copy otherwise. */
static void read_page(struct watched *w)
{
	int peers = bip_monitor_copy(w->map, w->map_len, w->scratch, (size_t)nwatched);

	if (peers < 0)
		return;
	memcpy(w->copy, w->scratch, w->map_len);
	w->peers = peers;
	w->good = 1;
}

int bipload_monitor_remote(int node, const void *data, size_t len)
{
	struct watched *w;
	struct bip_monitor_page *pg;
	size_t room = (size_t)nwatched < BIP_MONITOR_PEERS_MAX ? (size_t)nwatched :
			BIP_MONITOR_PEERS_MAX;
	size_t peers;

	if (listen_fd < 0 || node < 0 || node >= nwatched || len < bip_monitor_size(0) ||
	    len > bip_monitor_size(room) ||
	    (len - bip_monitor_size(0)) % sizeof(struct bip_monitor_peer))
		return -EPROTO;
	w = &watched[node];
	if (w->map)
		return -EPROTO; /* a page of this host's */
	if (!w->copy) {
		w->copy = calloc(1, bip_monitor_size(room));
		if (!w->copy)
			return -ENOMEM;
		w->map_len = bip_monitor_size(room);
	}
	pg = w->copy;
	memcpy(pg, data, len);
	/* What the proxy copied is the process's word: numbers only. */
	peers = (len - bip_monitor_size(0)) / sizeof(struct bip_monitor_peer);
	if (pg->version != BIP_MONITOR_VERSION)
		return -EPROTO;
	if (pg->peers < peers)
		peers = pg->peers;
	pg->peers = (uint32_t)peers;
	w->peers = (int)peers;
	w->good = 1;
	w->remote = 1;
	return 0;
}

static uint64_t bytes_sent(int node)
{
	return watched[node].good ? watched[node].copy->counters.bytes_sent : 0;
}

static void sample(double t)
{
	int i;

	for (i = 0; i < nwatched; i++)
		if (watched[i].map)
			read_page(&watched[i]);
	hist_t[hist_head] = t - started;
	for (i = 0; i < nwatched; i++)
		hist_bytes[(size_t)i * BIPLOAD_MONITOR_HISTORY + hist_head] = bytes_sent(i);
	hist_head = (hist_head + 1) % BIPLOAD_MONITOR_HISTORY;
	if (hist_n < BIPLOAD_MONITOR_HISTORY)
		hist_n++;
	last_sample = t;
}

int bipload_monitor_timeout(int ms)
{
	double left;

	if (listen_fd < 0)
		return ms;
	left = (last_sample + BIPLOAD_MONITOR_PERIOD_MS / 1000.0 - now_s()) * 1000;
	if (left < 0)
		return 0;
	return left < ms ? (int)left + 1 : ms;
}

/* --- the answers --- */

struct buf {
	char *p;
	size_t len, cap;
	int failed;
};

#define BIPLOAD_MONITOR_JSON_MAX (64u << 20)

static void bput(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = 1;
			return;
		}
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap * 2 : 65536;
			char *p;

			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			if (cap > BIPLOAD_MONITOR_JSON_MAX || !(p = realloc(b->p, cap))) {
				b->failed = 1;
				return;
			}
			b->p = p;
			b->cap = cap;
		}
	}
}

/* A JSON string: names from the configuration, escaped. */
static void bput_str(struct buf *b, const char *s)
{
	bput(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			bput(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			bput(b, "\\u%04x", c);
		else
			bput(b, "%c", c);
	}
	bput(b, "\"");
}

static void bput_counters(struct buf *b, const struct bip_counters *c)
{
#define F(name) bput(b, "\"" #name "\":%llu,", (unsigned long long)c->name)
	F(short_sent); F(long_sent); F(short_received); F(long_received);
	F(bytes_sent); F(bytes_received); F(send_stalls); F(errors);
	F(retransmits); F(fast_retransmits); F(timeouts); F(duplicates); F(early);
	F(corrupt); F(nacks_sent); F(nacks_received); F(acks_sent); F(rebinds);
	F(failbacks); F(sleeps); F(wakeups);
#undef F
	bput(b, "\"path\":[");
	for (int i = 0; i < BIP_COUNTER_PATHS; i++) {
		const struct bip_path_counters *p = &c->path[i];

		bput(b, "%s{\"sent\":%llu,\"retransmits\":%llu,\"timeouts\":%llu,"
		     "\"duplicates\":%llu,\"corrupt\":%llu,\"retired\":%llu,\"restored\":%llu}",
		     i ? "," : "", (unsigned long long)p->sent, (unsigned long long)p->retransmits,
		     (unsigned long long)p->timeouts, (unsigned long long)p->duplicates,
		     (unsigned long long)p->corrupt, (unsigned long long)p->retired,
		     (unsigned long long)p->restored);
	}
	bput(b, "]");
}

static const char *proc_state(const struct proc *p)
{
	if (!bipload_proc_running(p))
		return "ended";
	return (p->proxy < 0 ? p->started : p->remote_pid) ? "running" : "waiting";
}

static void json_state(struct buf *b)
{
	int n = nprocs < nwatched ? nprocs : nwatched, m, i, j, running = 0;
	static const struct bip_counters zero;

	for (i = 0; i < n; i++)
		running += bipload_proc_running(&procs[i]);
	m = n < BIPLOAD_MONITOR_MATRIX_MAX ? n : BIPLOAD_MONITOR_MATRIX_MAX;
	bput(b, "{\"job\":\"%s\",\"nodes\":%d,\"running\":%d,\"split\":\"process\",", jobid,
	     n, running);
	bput(b, "\"ranks\":[");
	for (i = 0; i < n; i++) {
		const struct proc *p = &procs[i];
		const char *host = p->host ? p->host : i < conf->n ? conf->nodes[i].host : "";

		bput(b, "%s{\"node\":%d,\"host\":", i ? "," : "", i);
		bput_str(b, host);
		bput(b, ",\"cluster\":");
		if (conf->nclusters && conf->cluster_of && i < conf->n &&
		    conf->cluster_of[i] >= 0 && conf->cluster_of[i] < conf->nclusters)
			bput_str(b, conf->clusters[conf->cluster_of[i]].name);
		else
			bput(b, "null");
		bput(b, ",\"relay\":%s,\"local\":%s,\"state\":\"%s\",\"updates\":%llu}",
		     p->relay ? "true" : "false",
		     watched[i].map || watched[i].remote ? "true" : "false",
		     proc_state(p),
		     watched[i].good ? (unsigned long long)watched[i].copy->updates : 0ULL);
	}
	for (int k = 0; k < 2; k++) {
		bput(b, "],\"%s\":[", k ? "messages" : "matrix");
		for (i = 0; i < m; i++) {
			const struct watched *w = &watched[i];

			bput(b, "%s[", i ? "," : "");
			for (j = 0; j < m; j++) {
				uint64_t v = 0;

				if (w->good && j < w->peers)
					v = k ? w->copy->peer[j].msgs : w->copy->peer[j].bytes;
				bput(b, "%s%llu", j ? "," : "", (unsigned long long)v);
			}
			bput(b, "]");
		}
	}
	bput(b, "],\"counters\":[");
	for (i = 0; i < n; i++) {
		bput(b, "%s{", i ? "," : "");
		bput_counters(b, watched[i].good ? &watched[i].copy->counters : &zero);
		bput(b, "}");
	}
	bput(b, "],\"history\":{\"period_ms\":%d,\"t\":[", BIPLOAD_MONITOR_PERIOD_MS);
	for (unsigned s = 0; s < hist_n; s++) {
		unsigned slot = (hist_head + BIPLOAD_MONITOR_HISTORY - hist_n + s) %
				BIPLOAD_MONITOR_HISTORY;

		bput(b, "%s%.3f", s ? "," : "", hist_t[slot]);
	}
	bput(b, "],\"bytes\":[");
	for (i = 0; i < m; i++) {
		bput(b, "%s[", i ? "," : "");
		for (unsigned s = 0; s < hist_n; s++) {
			unsigned slot = (hist_head + BIPLOAD_MONITOR_HISTORY - hist_n + s) %
					BIPLOAD_MONITOR_HISTORY;

			bput(b, "%s%llu", s ? "," : "",
			     (unsigned long long)hist_bytes[(size_t)i * BIPLOAD_MONITOR_HISTORY + slot]);
		}
		bput(b, "]");
	}
	bput(b, "]},\"gateways\":[");
	for (i = 0; i < conf->ngateways; i++) {
		const struct bip_conf_gateway *g = &conf->gateways[i];
		int first = 1;

		bput(b, "%s{\"clusters\":[", i ? "," : "");
		bput_str(b, conf->clusters[g->cluster[0]].name);
		bput(b, ",");
		bput_str(b, conf->clusters[g->cluster[1]].name);
		bput(b, "],\"hosts\":[");
		bput_str(b, g->host[0]);
		bput(b, ",");
		bput_str(b, g->host[1]);
		bput(b, "],\"driver\":");
		bput_str(b, g->driver);
		bput(b, ",\"relays\":[");
		for (j = 0; j < n; j++)
			if (procs[j].relay && j < conf->n &&
			    (!strcmp(conf->nodes[j].host, g->host[0]) ||
			     !strcmp(conf->nodes[j].host, g->host[1]))) {
				bput(b, "%s%d", first ? "" : ",", j);
				first = 0;
			}
		bput(b, "]}");
	}
	bput(b, "],\"trace\":");
	if (bipload_trace_dir()) {
		/* Where biptrace writes once the job has ended (bipload_trace.c). */
		bput(b, "{\"dir\":");
		bput_str(b, bipload_trace_dir());
		bput(b, "}");
	} else {
		bput(b, "null");
	}
	bput(b, "}\n");
}

static void answer(struct conn *c, int code, const char *type, const char *body, size_t len)
{
	static const char *const reasons[] = {
		[200] = "OK", [400] = "Bad Request", [403] = "Forbidden", [404] = "Not Found",
		[405] = "Method Not Allowed", [431] = "Request Header Fields Too Large",
		[500] = "Internal Server Error",
	};
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			 "Referrer-Policy: no-referrer\r\n"
			 "Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; "
			 "style-src 'unsafe-inline'; connect-src 'self'; img-src data:\r\n"
			 "Connection: close\r\n\r\n",
			 code, reasons[code] ? reasons[code] : "", type, len);

	c->out = malloc((size_t)n + len);
	if (!c->out) {
		c->out_len = 0;
		return;
	}
	memcpy(c->out, head, (size_t)n);
	memcpy(c->out + n, body, len);
	c->out_len = (size_t)n + len;
	c->out_done = 0;
}

static void answer_text(struct conn *c, int code, const char *text)
{
	answer(c, code, "text/plain; charset=utf-8", text, strlen(text));
}

/* 1 if query (up to its end) carries token=<the token>. */
static int token_ok(const char *query, size_t len)
{
	const size_t tl = sizeof(token) - 1;
	size_t i = 0;

	while (i < len) {
		size_t end = i;

		while (end < len && query[end] != '&')
			end++;
		if (end - i == 6 + tl && !memcmp(query + i, "token=", 6) &&
		    sodium_memcmp(query + i + 6, token, tl) == 0)
			return 1;
		i = end + 1;
	}
	return 0;
}

/* The whole head is in c->req: decide the answer. */
static void respond(struct conn *c)
{
	char *line_end = strstr(c->req, "\r\n");
	char *sp1, *sp2, *target, *q;
	size_t path_len, qlen;

	if (!line_end) {
		answer_text(c, 400, "bad request\n");
		return;
	}
	*line_end = '\0';
	sp1 = strchr(c->req, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || strncmp(sp2 + 1, "HTTP/1.", 7)) {
		answer_text(c, 400, "bad request\n");
		return;
	}
	*sp1 = *sp2 = '\0';
	if (strcmp(c->req, "GET")) {
		answer_text(c, 405, "only GET\n");
		return;
	}
	target = sp1 + 1;
	q = strchr(target, '?');
	path_len = q ? (size_t)(q - target) : strlen(target);
	qlen = q ? strlen(q + 1) : 0;
	if (!q || !token_ok(q + 1, qlen)) {
		answer_text(c, 403, "forbidden\n");
		return;
	}
	if (path_len == 1 && target[0] == '/') {
		answer(c, 200, "text/html; charset=utf-8", bipload_monitor_html,
		       sizeof(bipload_monitor_html) - 1);
	} else if (path_len == 6 && !memcmp(target, "/state", 6)) {
		struct buf b = { 0 };

		json_state(&b);
		if (b.failed)
			answer_text(c, 500, "the state is too large\n");
		else
			answer(c, 200, "application/json", b.p, b.len);
		free(b.p);
	} else {
		answer_text(c, 404, "not found\n");
	}
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->got = c->out_len = c->out_done = 0;
}

int bipload_monitor_pollfds(struct pollfd *pfd)
{
	int n = 0, i;

	if (listen_fd < 0)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
	for (i = 0; i < BIPLOAD_MONITOR_CONNS; i++)
		pfd[n++] = (struct pollfd){ .fd = conns[i].fd,
					    .events = conns[i].out ? POLLOUT : POLLIN };
	return n;
}

static void conn_read(struct conn *c)
{
	ssize_t r = read(c->fd, c->req + c->got, BIPLOAD_MONITOR_REQ_MAX - c->got);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		conn_close(c);
		return;
	}
	c->got += (size_t)r;
	c->req[c->got] = '\0';
	if (memchr(c->req, '\0', c->got)) {
		answer_text(c, 400, "bad request\n");
	} else if (strstr(c->req, "\r\n\r\n")) {
		respond(c);
	} else if (c->got == BIPLOAD_MONITOR_REQ_MAX) {
		answer_text(c, 431, "request too large\n");
	} else {
		return;
	}
	if (!c->out)
		conn_close(c);
}

static void conn_write(struct conn *c)
{
	ssize_t r = send(c->fd, c->out + c->out_done, c->out_len - c->out_done, MSG_NOSIGNAL);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r < 0) {
		conn_close(c);
		return;
	}
	c->out_done += (size_t)r;
	if (c->out_done == c->out_len) {
		/* Say we are done and let the client close first, so that an
		 * unread request byte does not turn the end into a reset. */
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
}

void bipload_monitor_events(const struct pollfd *pfd, int n)
{
	double t = now_s();
	int i;

	if (listen_fd < 0)
		return;
	if (n > 0 && pfd[0].revents & POLLIN) {
		for (;;) {
			int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd < 0)
				break;
			for (i = 0; i < BIPLOAD_MONITOR_CONNS && conns[i].fd >= 0; i++)
				;
			if (i == BIPLOAD_MONITOR_CONNS) {
				close(fd); /* too many: the client tries again */
				continue;
			}
			conns[i] = (struct conn){ .fd = fd, .since = t };
		}
	}
	for (i = 0; i < BIPLOAD_MONITOR_CONNS; i++) {
		struct conn *c = &conns[i];
		short ev = 1 + i < n ? pfd[1 + i].revents : 0;

		if (c->fd < 0)
			continue;
		/* pfd holds the descriptor polled; a connection accepted
		 * just now into a free slot has no events yet. */
		if (1 + i < n && pfd[1 + i].fd == c->fd && ev) {
			if (ev & (POLLERR | POLLNVAL))
				conn_close(c);
			else if (c->out)
				conn_write(c);
			else
				conn_read(c);
		}
		if (c->fd >= 0 && t - c->since > BIPLOAD_MONITOR_IDLE_S)
			conn_close(c);
	}
	if (t - last_sample >= BIPLOAD_MONITOR_PERIOD_MS / 1000.0)
		sample(t);
}

int bipload_monitor_maxfds(void)
{
	return listen_fd >= 0 ? 1 + BIPLOAD_MONITOR_CONNS : 0;
}

void bipload_monitor_stop(void)
{
	int i;

	if (listen_fd < 0)
		return;
	for (i = 0; i < BIPLOAD_MONITOR_CONNS; i++)
		if (conns[i].fd >= 0)
			conn_close(&conns[i]);
	close(listen_fd);
	listen_fd = -1;
	for (i = 0; i < nwatched; i++) {
		if (watched[i].map)
			munmap(watched[i].map, watched[i].map_len);
		free(watched[i].copy);
		free(watched[i].scratch);
	}
	free(watched);
	free(hist_bytes);
	watched = NULL;
	hist_bytes = NULL;
}
