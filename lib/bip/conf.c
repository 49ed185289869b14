/* SPDX-License-Identifier: MIT */
/*
 * conf.c - the configuration file (manual section 5), BIP_OPTS and the
 * names of the start-up environment.  See conf.h.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "conf.h"

/* A cursor over the lines of a text, skipping blank and comment lines. */
struct conf_reader {
	const char *name;
	const char *p;
	int line;           /* number of the line last returned */
	char buf[1024];
};

static int next_line(struct conf_reader *r)
{
	while (*r->p) {
		const char *end = strchr(r->p, '\n');
		size_t len = end ? (size_t)(end - r->p) : strlen(r->p);
		const char *s = r->p;
		size_t i = 0;

		r->p = end ? end + 1 : s + len;
		r->line++;
		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i == len || s[i] == '#')
			continue;
		if (len >= sizeof(r->buf))
			len = sizeof(r->buf) - 1;
		memcpy(r->buf, s, len);
		r->buf[len] = '\0';
		return 1;
	}
	return 0;
}

static int conf_fail(char *err, size_t errlen, const struct conf_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int conf_fail(char *err, size_t errlen, const struct conf_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%d: %s", r->name, r->line, msg);
	return -EINVAL;
}

/* Split buf into at most max integer fields; returns the count, or -1 for junk. */
static int parse_ints(char *buf, long *v, int max)
{
	char *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(buf, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		char *end;

		if (*tok == '#')
			break;
		if (n == max)
			return max + 1;
		errno = 0;
		v[n] = strtol(tok, &end, 10);
		if (*end || errno)
			return -1;
		n++;
	}
	return n;
}

static struct bip_conf *conf_alloc_rails(int n, int nrails)
{
	struct bip_conf *conf = calloc(1, sizeof(*conf));

	if (!conf)
		return NULL;
	conf->n = n;
	conf->nrails = nrails;
	conf->nodes = calloc((size_t)n, sizeof(*conf->nodes));
	conf->routes = calloc((size_t)nrails * n * (size_t)n, sizeof(*conf->routes));
	if (!conf->nodes || !conf->routes) {
		bip_conf_free(conf);
		return NULL;
	}
	return conf;
}

static int parse_node_line(struct conf_reader *r, struct bip_conf_node *node, char *err,
			   size_t errlen)
{
	char host[BIP_CONF_HOSTLEN], extra[2];
	long unit;
	char *end;
	char ustr[64];

	if (sscanf(r->buf, "%255s %63s %1s", host, ustr, extra) != 2 || ustr[0] == '#')
		return conf_fail(err, errlen, r, "expected \"hostname unit\", got \"%s\"", r->buf);
	unit = strtol(ustr, &end, 10);
	if (*end || unit < 0 || unit > 1000000)
		return conf_fail(err, errlen, r, "unit \"%s\" is not a non-negative number", ustr);
	snprintf(node->host, sizeof(node->host), "%s", host);
	node->unit = (int)unit;
	node->line = r->line;
	return 0;
}

/* One route: 1 to 4 numbers in text (a part of the line r holds). */
static int parse_route(struct conf_reader *r, char *text, struct bip_route *route, char *err,
		       size_t errlen)
{
	long v[BIP_CONF_MAXHOPS];
	char shown[sizeof(r->buf)];
	int n, i;

	snprintf(shown, sizeof(shown), "%s", text);
	n = parse_ints(text, v, BIP_CONF_MAXHOPS);
	if (n < 0)
		return conf_fail(err, errlen, r, "route \"%s\" is not a list of numbers", shown);
	if (n == 0 || n > BIP_CONF_MAXHOPS)
		return conf_fail(err, errlen, r, "a route has 1 to %d numbers, this line has %s",
				 BIP_CONF_MAXHOPS, n ? "more" : "none");
	for (i = 0; i < n; i++) {
		if (v[i] < 0 || v[i] > BIP_ROUTE_DIRECT)
			return conf_fail(err, errlen, r, "route number %ld out of range (0 .. %d)",
					 v[i], BIP_ROUTE_DIRECT);
		if (v[i] == BIP_ROUTE_DIRECT && n > 1)
			return conf_fail(err, errlen, r, "%d (no switch) must be alone on its line",
					 BIP_ROUTE_DIRECT);
		route->hop[i] = (int)v[i];
	}
	route->nhops = n;
	return 0;
}

/*
 * A route line: the routes of rail 0, 1, ... separated by '/'.  Returns
 * how many (1 .. BIP_CONF_MAXRAILS), or a negative errno.
 */
static int parse_route_line(struct conf_reader *r, struct bip_route *routes, char *err,
			    size_t errlen)
{
	char *part = r->buf, *slash;
	int k = 0, rc;

	for (;;) {
		slash = strchr(part, '/');
		if (slash)
			*slash = '\0';
		if (k == BIP_CONF_MAXRAILS)
			return conf_fail(err, errlen, r, "more than %d routes (rails) on a line",
					 BIP_CONF_MAXRAILS);
		if (!part[strspn(part, " \t\r")] && (slash || k))
			return conf_fail(err, errlen, r, "an empty route %s '/'",
					 slash ? "before" : "after");
		rc = parse_route(r, part, &routes[k++], err, errlen);
		if (rc < 0)
			return rc;
		if (!slash)
			return k;
		part = slash + 1;
	}
}

/* Routes on the first route line (after the first node's line), 1 if the
 * file does not say. */
static int first_line_rails(struct conf_reader r)
{
	const char *q;
	int k = 1;

	if (!next_line(&r) || !next_line(&r))
		return 1;
	for (q = r.buf; *q && *q != '#'; q++)
		k += *q == '/';
	return k > BIP_CONF_MAXRAILS ? BIP_CONF_MAXRAILS : k;
}

/* Parse the n nodes of a file too short for them, storing nothing: the
 * first malformed line, or where the file ends; always -EINVAL. */
static int conf_check_only(struct conf_reader *r, long n, const char *name, char *err,
			   size_t errlen)
{
	struct bip_conf_node node;
	struct bip_route route[BIP_CONF_MAXRAILS];
	long i, j;
	int rc;

	for (i = 0; i < n; i++) {
		if (!next_line(r)) {
			snprintf(err, errlen, "%s:%d: file ends before node %ld (of %ld): expected "
				 "\"hostname unit\"", name, r->line, i, n);
			return -EINVAL;
		}
		rc = parse_node_line(r, &node, err, errlen);
		if (rc < 0)
			return rc;
		for (j = 0; j < n; j++) {
			if (!next_line(r)) {
				snprintf(err, errlen, "%s:%d: file ends in the routes of node %ld: "
					 "%ld of %ld route lines", name, r->line, i, j, n);
				return -EINVAL;
			}
			rc = parse_route_line(r, route, err, errlen);
			if (rc < 0)
				return rc;
		}
	}
	return -EINVAL; /* not reached: the file was short */
}

int bip_conf_parse_string(const char *text, const char *name, struct bip_conf **conf_p,
			  char *err, size_t errlen)
{
	struct conf_reader r = { .name = name, .p = text };
	struct bip_route routes[BIP_CONF_MAXRAILS];
	struct bip_conf *conf;
	long n;
	int i, j, k, rc;

	if (!next_line(&r)) {
		snprintf(err, errlen, "%s: empty configuration: the first line must hold the "
			 "number of nodes", name);
		return -EINVAL;
	}
	if (parse_ints(r.buf, &n, 1) != 1 || n < 1 || n > BIP_CONF_MAXNODES)
		return conf_fail(err, errlen, &r, "expected the number of nodes (1 .. %d), got "
				 "\"%s\"", BIP_CONF_MAXNODES, r.buf);
	/* The file must hold every line the count promises (a node line and n
	 * route lines per node) before n * n routes are allocated: a first
	 * line of 65535 alone is a short file, not a 64 GiB allocation.  A
	 * short file is parsed without storing anything, so that a malformed
	 * line is still named before the end of the file. */
	{
		struct conf_reader c = r;
		long long lines = 0, want = (long long)n * (n + 1);

		while (lines < want && next_line(&c))
			lines++;
		if (lines < want)
			return conf_check_only(&r, n, name, err, errlen);
	}
	conf = conf_alloc_rails((int)n, first_line_rails(r));
	if (!conf) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (!next_line(&r)) {
			snprintf(err, errlen, "%s:%d: file ends before node %d (of %ld): expected "
				 "\"hostname unit\"", name, r.line, i, n);
			rc = -EINVAL;
			goto fail;
		}
		rc = parse_node_line(&r, &conf->nodes[i], err, errlen);
		if (rc < 0)
			goto fail;
		for (j = 0; j < n; j++) {
			if (!next_line(&r)) {
				snprintf(err, errlen, "%s:%d: file ends in the routes of node %d: "
					 "%d of %ld route lines", name, r.line, i, j, n);
				rc = -EINVAL;
				goto fail;
			}
			rc = parse_route_line(&r, routes, err, errlen);
			if (rc < 0)
				goto fail;
			if (rc != conf->nrails) {
				rc = conf_fail(err, errlen, &r,
					       "%d route%s (rails) on this line, %d on the first "
					       "route line: every line gives one route per rail",
					       rc, rc == 1 ? "" : "s", conf->nrails);
				goto fail;
			}
			for (k = 0; k < conf->nrails; k++)
				conf->routes[((size_t)k * n + i) * n + j] = routes[k];
		}
	}
	/* Then the clusters' statements, if any (clusters.c). */
	while (next_line(&r)) {
		rc = bip_conf_clusters_statement(conf, r.buf, name, r.line, err, errlen);
		if (rc < 0)
			goto fail;
	}
	rc = bip_conf_clusters_finish(conf, name, err, errlen);
	if (rc < 0)
		goto fail;
	*conf_p = conf;
	return 0;
fail:
	bip_conf_free(conf);
	return rc;
}

int bip_file_read_text(const char *path, char **text_p, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *more = realloc(text, cap ? 2 * cap : 8192);

			if (!more) {
				rc = -ENOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto free_text;
			}
			text = more;
			cap = cap ? 2 * cap : 8192;
		}
		got = fread(text + len, 1, 4096, f);
		len += got;
	} while (got == 4096);
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
		goto free_text;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s: not a text file (it holds a NUL byte)", path);
		goto free_text;
	}
	fclose(f);
	*text_p = text;
	return 0;
free_text:
	free(text);
	fclose(f);
	return rc;
}

int bip_array_grow(void **p, int n, size_t size)
{
	void *q;

	if (n && (n & (n - 1)))
		return 0;
	q = realloc(*p, (size_t)(n ? 2 * n : 8) * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

int bip_conf_parse_file(const char *path, struct bip_conf **conf_p, char *err, size_t errlen)
{
	char *text;
	int rc = bip_file_read_text(path, &text, err, errlen);

	if (rc < 0)
		return rc;
	rc = bip_conf_parse_string(text, path, conf_p, err, errlen);
	free(text);
	return rc;
}

int bip_conf_local(int n, struct bip_conf **conf_p)
{
	return bip_conf_local_rails(n, 1, conf_p);
}

int bip_conf_local_rails(int n, int nrails, struct bip_conf **conf_p)
{
	struct bip_conf *conf;
	struct utsname u;
	int i;

	if (n < 1 || nrails < 1 || nrails > BIP_CONF_MAXRAILS)
		return -EINVAL;
	if (uname(&u) < 0)
		return -errno;
	conf = conf_alloc_rails(n, nrails);
	if (!conf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		snprintf(conf->nodes[i].host, sizeof(conf->nodes[i].host), "%s", u.nodename);
		conf->nodes[i].unit = 0;
	}
	for (i = 0; i < nrails * n * n; i++) {
		conf->routes[i].nhops = 1;
		conf->routes[i].hop[0] = BIP_ROUTE_DIRECT;
	}
	*conf_p = conf;
	return 0;
}

int bip_conf_truncate(struct bip_conf *conf, int n)
{
	int i, j, r;

	if (n < 1 || n > conf->n)
		return -EINVAL;
	/* The relays are the last nodes: a shorter job has none. */
	if (n < conf->n)
		conf->nrelays = 0;
	/* Routes are rows of conf->n, rail after rail: repack them as rows of n. */
	for (r = 0; r < conf->nrails; r++)
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				conf->routes[((size_t)r * n + i) * n + j] =
				    conf->routes[((size_t)r * conf->n + i) * conf->n + j];
	conf->n = n;
	return 0;
}

int bip_conf_write(FILE *f, const struct bip_conf *conf)
{
	int i, j, k, rail;

	fprintf(f, "%d\n", conf->n);
	for (i = 0; i < conf->n; i++) {
		fprintf(f, "%s %d\n", conf->nodes[i].host, conf->nodes[i].unit);
		for (j = 0; j < conf->n; j++) {
			for (rail = 0; rail < conf->nrails; rail++) {
				const struct bip_route *r = bip_conf_route(conf, rail, i, j);

				if (rail)
					fputs(" / ", f);
				for (k = 0; k < r->nhops; k++)
					fprintf(f, k ? " %d" : "%d", r->hop[k]);
			}
			fputc('\n', f);
		}
	}
	bip_conf_clusters_write(f, conf);
	return ferror(f) ? -EIO : 0;
}

int bip_file_replace(const char *path, int (*writer)(FILE *f, const void *arg), const void *arg,
		     char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int fd, rc;

	/* A fresh name of our own in the same directory (mkstemp: O_EXCL, mode
	 * 0600), never a path another user may have planted a link at; then
	 * rename, which replaces path itself, not what it may point to. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(-rc));
		return rc;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(-rc));
		close(fd);
		remove(tmp);
		return rc;
	}
	rc = writer(f, arg);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		remove(tmp);
	}
	return rc;
}

void bip_conf_free(struct bip_conf *conf)
{
	if (!conf)
		return;
	bip_conf_clusters_free(conf);
	free(conf->nodes);
	free(conf->routes);
	free(conf);
}

int bip_conf_default_path(char *buf, size_t len)
{
	const char *env = getenv(BIP_ENV_CONF);
	const char *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.bip/bipconf", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return 0;
}

/* The kernel's view: uname -n, its short form, "localhost", a loopback name. */
static int host_is_this_machine(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct utsname u;
	size_t short_len;
	int local;

	if (!strcmp(host, "localhost"))
		return 1;
	if (uname(&u) == 0) {
		if (!strcmp(host, u.nodename))
			return 1;
		/* "a" names "a.example.org" and the other way round. */
		short_len = strcspn(u.nodename, ".");
		if (strcspn(host, ".") == short_len && !strncmp(host, u.nodename, short_len) &&
		    (host[short_len] == '\0' || u.nodename[short_len] == '\0'))
			return 1;
	}
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return 0;
	local = 1;
	for (ai = res; ai; ai = ai->ai_next)
		local &= is_loopback(ai->ai_addr);
	freeaddrinfo(res);
	return local;
}

/*
 * BIP_HOST is the configuration's name of the host a process was started on
 * (bipload sets it).  Test hosts made of network namespaces share one kernel
 * and so one uname: only BIP_HOST tells them apart.  When BIP_HOST itself
 * does not name this machine for the kernel, it is the only local name;
 * when it does, the other names of this machine are local too.
 */
static char host_self[BIP_CONF_HOSTLEN];

void bip_host_set_self(const char *name)
{
	snprintf(host_self, sizeof(host_self), "%s", name ? name : "");
}

int bip_host_is_local(const char *host)
{
	const char *me = getenv(BIP_ENV_HOST);

	if (host_self[0])
		return !strcmp(host, host_self);

	if (me && *me) {
		if (!strcmp(host, me))
			return 1;
		if (!host_is_this_machine(me))
			return 0;
	}
	return host_is_this_machine(host);
}

int bip_opts_parse(const char *s, struct bip_opts *opts, char *err, size_t errlen)
{
	struct bip_opts o = { 0, 0 };
	const char *p = s;

	while (*p) {
		if (*p == 'q') {
			o.quiet = 1;
			p++;
		} else if (*p == 'n') {
			char *end;
			long v = strtol(p + 1, &end, 10);

			if (end == p + 1 || v < 1 || v > 65535) {
				snprintf(err, errlen, "\"n\" must be followed by a node count "
					 "(1 .. 65535) in \"%s\"", s);
				return -EINVAL;
			}
			o.nodes = (int)v;
			p = end;
		} else {
			snprintf(err, errlen, "unknown option '%c' in \"%s\" (expected n<count> "
				 "and q)", *p, s);
			return -EINVAL;
		}
	}
	*opts = o;
	return 0;
}

int bip_jobid_valid(const char *id)
{
	size_t n = 0;

	for (; id[n]; n++) {
		char c = id[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return 0;
	}
	return n >= 1 && n <= BIP_JOBID_MAX;
}

int bip_shm_prefix(char *buf, size_t len, unsigned uid, const char *jobid)
{
	int n = snprintf(buf, len, "bip-%u-%s-", uid, jobid);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int bip_process_runs(int pid)
{
	char path[64], stat[256], *state;
	FILE *f;
	size_t n;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	state = strrchr(stat, ')');
	return !(state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X'));
}
