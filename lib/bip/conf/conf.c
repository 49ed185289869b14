/* SPDX-License-Identifier: MIT */
/*
 * conf.c - the configuration file (manual section 5), BIP_OPTS and the
 * names of the start-up environment.  See conf.h.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "conf.h"

/* FNV-1a: the hash of host names, for the tables below. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* The longest line read: a cluster statement may list many hosts. */
#define CONF_LINE_MAX (1 << 20)

/* A cursor over the lines of a text, skipping blank and comment lines. */
struct conf_reader {
	const char *name;
	const char *p;
	int line;           /* number of the line last returned */
	char *buf;          /* that line, NUL-terminated (cap bytes) */
	size_t cap;
	char *err;
	size_t errlen;
};

/* The next significant line of *p as a span (not NUL-terminated), *line
 * counting every line passed; 0 at the end of the text. */
static int next_span(const char **p, int *line, const char **s_p, size_t *len_p)
{
	while (**p) {
		const char *s = *p, *end = strchr(s, '\n');
		size_t len = end ? (size_t)(end - s) : strlen(s), i = 0;

		*p = end ? end + 1 : s + len;
		++*line;
		/* The blanks sscanf's %s skips, so that what starts with '#'
		 * here is what the node and route readers see start with it. */
		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (i == len || s[i] == '#')
			continue;
		*s_p = s;
		*len_p = len;
		return 1;
	}
	return 0;
}

static int conf_fail(const struct conf_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int conf_fail(const struct conf_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s:%d: %s", r->name, r->line, msg);
	return -EINVAL;
}

/* The next significant line into r->buf: 1, 0 at the end of the text, or a
 * negative errno with the message in r->err. */
static int next_line(struct conf_reader *r)
{
	const char *s;
	size_t len;

	if (!next_span(&r->p, &r->line, &s, &len))
		return 0;
	if (len >= CONF_LINE_MAX)
		return conf_fail(r, "line longer than %d characters", CONF_LINE_MAX - 1);
	if (len + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 1024;
		char *more;

		while (cap < len + 1)
			cap *= 2;
		more = realloc(r->buf, cap);
		if (!more) {
			snprintf(r->err, r->errlen, "%s:%d: out of memory", r->name, r->line);
			return -ENOMEM;
		}
		r->buf = more;
		r->cap = cap;
	}
	memcpy(r->buf, s, len);
	r->buf[len] = '\0';
	return 1;
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

const struct bip_route bip_route_direct = { .nhops = 1, .hop = { BIP_ROUTE_DIRECT } };

static struct bip_conf *conf_alloc_rails(int n, int nrails)
{
	struct bip_conf *conf = calloc(1, sizeof(*conf));

	if (!conf)
		return NULL;
	conf->n = n;
	conf->nrails = nrails;
	conf->nodes = calloc((size_t)n, sizeof(*conf->nodes));
	if (!conf->nodes) {
		bip_conf_free(conf);
		return NULL;
	}
	return conf;
}

static int route_valid(const struct bip_route *r)
{
	int i;

	if (r->nhops < 1 || r->nhops > BIP_CONF_MAXHOPS)
		return 0;
	for (i = 0; i < r->nhops; i++)
		if (r->hop[i] < 0 || r->hop[i] > BIP_ROUTE_DIRECT ||
		    (r->hop[i] == BIP_ROUTE_DIRECT && r->nhops > 1))
			return 0;
	return 1;
}

int bip_conf_set_route(struct bip_conf *conf, int rail, int from, int to,
		       const struct bip_route *route)
{
	size_t i, count;

	if (rail < 0 || rail >= conf->nrails || from < 0 || from >= conf->n || to < 0 ||
	    to >= conf->n || !route_valid(route))
		return -EINVAL;
	if (!conf->routes) {
		if (bip_route_is_direct(route))
			return 0;
		count = (size_t)conf->nrails * (size_t)conf->n * (size_t)conf->n;
		conf->routes = malloc(count * sizeof(*conf->routes));
		if (!conf->routes)
			return -ENOMEM;
		for (i = 0; i < count; i++)
			conf->routes[i] = bip_route_direct;
	}
	conf->routes[((size_t)rail * conf->n + from) * conf->n + to] = *route;
	return 0;
}

int bip_conf_all_direct(const struct bip_conf *conf)
{
	size_t i, count = (size_t)conf->nrails * (size_t)conf->n * (size_t)conf->n;

	for (i = 0; conf->routes && i < count; i++)
		if (!bip_route_is_direct(&conf->routes[i]))
			return 0;
	return 1;
}

int bip_conf_hosts_build(const struct bip_conf *conf, struct bip_conf_hosts *h)
{
	size_t slots = 64, k;
	int i, host;

	memset(h, 0, sizeof(*h));
	while (slots < 2 * (size_t)conf->n)
		slots *= 2;
	h->host_of = malloc((size_t)conf->n * sizeof(*h->host_of));
	h->first = malloc((size_t)conf->n * sizeof(*h->first));
	h->next = malloc((size_t)conf->n * sizeof(*h->next));
	h->slot = calloc(slots, sizeof(*h->slot));
	if (!h->host_of || !h->first || !h->next || !h->slot) {
		bip_conf_hosts_free(h);
		return -ENOMEM;
	}
	h->mask = slots - 1;
	/* The hosts, numbered as the nodes first name them. */
	for (i = 0; i < conf->n; i++) {
		const char *name = conf->nodes[i].host;

		k = (size_t)name_hash(name) & h->mask;
		while (h->slot[k] && strcmp(conf->nodes[h->first[h->slot[k] - 1]].host, name))
			k = (k + 1) & h->mask;
		if (!h->slot[k]) {
			h->first[h->nhosts] = i;
			h->slot[k] = ++h->nhosts;
		}
		h->host_of[i] = h->slot[k] - 1;
	}
	/* Then, walking back, each node is linked before the nodes of its host
	 * after it, and first[] ends at the first. */
	for (host = 0; host < h->nhosts; host++)
		h->first[host] = -1;
	for (i = conf->n - 1; i >= 0; i--) {
		h->next[i] = h->first[h->host_of[i]];
		h->first[h->host_of[i]] = i;
	}
	return 0;
}

int bip_conf_hosts_find(const struct bip_conf *conf, const struct bip_conf_hosts *h,
			const char *host)
{
	size_t k = (size_t)name_hash(host) & h->mask;

	while (h->slot[k]) {
		int found = h->slot[k] - 1;

		if (!strcmp(conf->nodes[h->first[found]].host, host))
			return found;
		k = (k + 1) & h->mask;
	}
	return -1;
}

void bip_conf_hosts_free(struct bip_conf_hosts *h)
{
	free(h->host_of);
	free(h->first);
	free(h->next);
	free(h->slot);
	memset(h, 0, sizeof(*h));
}

static int parse_node_line(struct conf_reader *r, struct bip_conf_node *node)
{
	char host[BIP_CONF_HOSTLEN], extra[2];
	long unit;
	char *end;
	char ustr[64];

	if (sscanf(r->buf, "%255s %63s %1s", host, ustr, extra) != 2 || ustr[0] == '#')
		return conf_fail(r, "expected \"hostname unit\", got \"%s\"", r->buf);
	unit = strtol(ustr, &end, 10);
	if (*end || unit < 0 || unit > 1000000)
		return conf_fail(r, "unit \"%s\" is not a non-negative number", ustr);
	snprintf(node->host, sizeof(node->host), "%s", host);
	node->unit = (int)unit;
	node->line = r->line;
	return 0;
}

/* One route: 1 to 4 numbers in text (a part of the line r holds), read in
 * place: a configuration of the manual's format has n * n of them. */
static int parse_route(struct conf_reader *r, const char *text, struct bip_route *route)
{
	const char *p = text;
	int n = 0;

	for (;;) {
		char *end;
		long v;

		p += strspn(p, " \t\r");
		if (!*p || *p == '#')
			break;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || (*end && !strchr(" \t\r", *end)))
			return conf_fail(r, "route \"%.60s\" is not a list of numbers", text);
		if (n == BIP_CONF_MAXHOPS)
			return conf_fail(r, "a route has 1 to %d numbers, this line has more",
					 BIP_CONF_MAXHOPS);
		if (v < 0 || v > BIP_ROUTE_DIRECT)
			return conf_fail(r, "route number %ld out of range (0 .. %d)", v,
					 BIP_ROUTE_DIRECT);
		route->hop[n++] = (int)v;
		p = end;
	}
	if (n == 0)
		return conf_fail(r, "a route has 1 to %d numbers, this line has none",
				 BIP_CONF_MAXHOPS);
	route->nhops = n;
	if (n > 1 && !route_valid(route))
		return conf_fail(r, "%d (no switch) must be alone on its line", BIP_ROUTE_DIRECT);
	return 0;
}

/*
 * A route line: the routes of rail 0, 1, ... separated by '/'.  Returns
 * how many (1 .. BIP_CONF_MAXRAILS), or a negative errno.
 */
static int parse_route_line(struct conf_reader *r, struct bip_route *routes)
{
	char *part = r->buf, *slash;
	int k = 0, rc;

	for (;;) {
		slash = strchr(part, '/');
		if (slash)
			*slash = '\0';
		if (k == BIP_CONF_MAXRAILS)
			return conf_fail(r, "more than %d routes (rails) on a line",
					 BIP_CONF_MAXRAILS);
		if (!part[strspn(part, " \t\r")] && (slash || k))
			return conf_fail(r, "an empty route %s '/'", slash ? "before" : "after");
		rc = parse_route(r, part, &routes[k++]);
		if (rc < 0)
			return rc;
		if (!slash)
			return k;
		part = slash + 1;
	}
}

/* Routes on the first route line (after the first node's line), 1 if the
 * file does not say. */
static int first_line_rails(const struct conf_reader *r)
{
	const char *p = r->p, *s = NULL;
	int line = r->line, k = 1;
	size_t len = 0, i;

	if (!next_span(&p, &line, &s, &len) || !next_span(&p, &line, &s, &len))
		return 1;
	for (i = 0; i < len && s[i] != '#'; i++)
		k += s[i] == '/';
	return k > BIP_CONF_MAXRAILS ? BIP_CONF_MAXRAILS : k;
}

/*
 * "routes direct" (bipconf(5)): the line after the count may say that
 * every route is 256, and the nodes then come without route lines.  A node
 * line of the manual's format has a number for its second word, so a first
 * word "routes" followed by anything else is this statement, never a host
 * named "routes".
 */
static int is_routes_statement(const char *line)
{
	const char *s = line + strspn(line, " \t\r");

	if (strncmp(s, "routes", 6) || !strchr(" \t\r/", s[6]) || !s[6])
		return !strcmp(s, "routes");
	s += 6;
	s += strspn(s, " \t\r");
	if (!*s || *s == '#')
		return 1;
	s += strspn(s, "0123456789");
	return *s && !strchr(" \t\r", *s);
}

/* That statement's rails: "direct", and "/ direct" for each further one.
 * Returns 1 .. BIP_CONF_MAXRAILS, or -EINVAL. */
static int parse_routes_statement(struct conf_reader *r)
{
	char *part = r->buf + strspn(r->buf, " \t\r") + 6, *slash, *hash;
	int k = 0;

	hash = strchr(part, '#');
	if (hash)
		*hash = '\0';
	for (;; k++) {
		size_t len;

		slash = strchr(part, '/');
		if (slash)
			*slash = '\0';
		part += strspn(part, " \t\r");
		len = strcspn(part, " \t\r");
		if (k == BIP_CONF_MAXRAILS || len != 6 || strncmp(part, "direct", 6) ||
		    part[len + strspn(part + len, " \t\r")])
			break;
		if (!slash)
			return k + 1;
		part = slash + 1;
	}
	if (k == BIP_CONF_MAXRAILS)
		return conf_fail(r, "\"routes direct\" for more than %d rails (a configuration "
				 "has 1 to %d)", BIP_CONF_MAXRAILS, BIP_CONF_MAXRAILS);
	return conf_fail(r, "expected \"routes direct\", and \"/ direct\" for each further rail "
			 "(every route is 256, and the nodes have no route lines)");
}

/* "routes direct" anywhere but right after the count. */
static int routes_misplaced(struct conf_reader *r)
{
	return conf_fail(r, "\"routes direct\" is given once, on the line after the node count, "
			 "before the first node");
}

/* 1 if the line holds only numbers and '/' and cannot be a node line: a
 * route line.  Two numbers alone ("7 3") are also host 7, unit 3. */
static int is_route_line(const char *line)
{
	const char *s = line + strspn(line, " \t\r");
	int words = 0;

	if (*s < '0' || *s > '9' || s[strspn(s, "0123456789 \t\r/")])
		return 0;
	if (strchr(s, '/'))
		return 1;
	while (*s) {
		s += strspn(s, "0123456789");
		s += strspn(s, " \t\r");
		words++;
	}
	return words != 2;
}

/* In a file of direct routes, a route line where a node line should be. */
static int route_line_unexpected(struct conf_reader *r, int statement_line)
{
	return conf_fail(r, "a route line, but \"routes direct\" (line %d) says that the nodes "
			 "have none: every route is 256", statement_line);
}

/* One node: its line, and in the manual's format its n route lines. */
static int parse_node(struct conf_reader *r, struct bip_conf *conf, long n, int i,
		      int direct_line, int store)
{
	struct bip_route routes[BIP_CONF_MAXRAILS];
	struct bip_conf_node scratch;
	int j, k, rc;

	rc = next_line(r);
	if (rc < 0)
		return rc;
	if (!rc) {
		snprintf(r->err, r->errlen, "%s:%d: file ends before node %d (of %ld): expected "
			 "\"hostname unit\"", r->name, r->line, i, n);
		return -EINVAL;
	}
	if (is_routes_statement(r->buf))
		return routes_misplaced(r);
	if (direct_line && is_route_line(r->buf))
		return route_line_unexpected(r, direct_line);
	rc = parse_node_line(r, store ? &conf->nodes[i] : &scratch);
	if (rc < 0 || direct_line)
		return rc;
	for (j = 0; j < n; j++) {
		rc = next_line(r);
		if (rc < 0)
			return rc;
		if (!rc) {
			snprintf(r->err, r->errlen, "%s:%d: file ends in the routes of node %d: "
				 "%d of %ld route lines", r->name, r->line, i, j, n);
			return -EINVAL;
		}
		if (is_routes_statement(r->buf))
			return routes_misplaced(r);
		rc = parse_route_line(r, routes);
		if (rc < 0)
			return rc;
		if (!store)
			continue;
		if (rc != conf->nrails)
			return conf_fail(r, "%d route%s (rails) on this line, %d on the first "
					 "route line: every line gives one route per rail",
					 rc, rc == 1 ? "" : "s", conf->nrails);
		for (k = 0; k < conf->nrails; k++) {
			rc = bip_conf_set_route(conf, k, i, j, &routes[k]);
			if (rc < 0) {
				snprintf(r->err, r->errlen, "%s:%d: out of memory for the %ld x %ld "
					 "routes of %d rail%s", r->name, r->line, n, n,
					 conf->nrails, conf->nrails == 1 ? "" : "s");
				return rc;
			}
		}
	}
	return 0;
}

static int conf_parse(struct conf_reader *r, struct bip_conf **conf_p)
{
	struct bip_conf_hosts hosts = { 0 };
	struct bip_conf *conf = NULL;
	int i, rc, nrails = 0, direct_line = 0, indexed = 0;
	long n;

	rc = next_line(r);
	if (rc < 0)
		return rc;
	if (!rc) {
		snprintf(r->err, r->errlen, "%s: empty configuration: the first line must hold "
			 "the number of nodes", r->name);
		return -EINVAL;
	}
	if (parse_ints(r->buf, &n, 1) != 1 || n < 1 || n > BIP_CONF_MAXNODES)
		return conf_fail(r, "expected the number of nodes (1 .. %d), got \"%s\"",
				 BIP_CONF_MAXNODES, r->buf);
	/* "routes direct" right after the count: the nodes have no route lines. */
	{
		const char *p = r->p, *s;
		int line = r->line;
		size_t len;

		/* Its first words are enough to tell it from a node line. */
		if (next_span(&p, &line, &s, &len)) {
			char line[256];

			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			memcpy(line, s, len);
			line[len] = '\0';
			if (is_routes_statement(line)) {
				rc = next_line(r);
				if (rc < 0)
					return rc;
				nrails = parse_routes_statement(r);
				if (nrails < 0)
					return nrails;
				direct_line = r->line;
			}
		}
	}
	/* The file must hold every line the count promises (a node line, and
	 * in the manual's format n route lines per node) before anything is
	 * allocated: a first line of 65535 alone is a short file, not an
	 * allocation of 65535 nodes (or of their 65535 x 65535 routes, should
	 * one of them cross a switch).  A short file is parsed without storing
	 * anything, so that a malformed line is still named before its end. */
	{
		const char *p = r->p, *s;
		long long lines = 0, want = direct_line ? n : (long long)n * (n + 1);
		int line = r->line;
		size_t len;

		while (lines < want && next_span(&p, &line, &s, &len))
			lines++;
		if (lines < want) {
			for (i = 0; i < n; i++) {
				rc = parse_node(r, NULL, n, i, direct_line, 0);
				if (rc < 0)
					return rc;
			}
			return -EINVAL; /* not reached: the file was short */
		}
	}
	conf = conf_alloc_rails((int)n, direct_line ? nrails : first_line_rails(r));
	if (!conf) {
		snprintf(r->err, r->errlen, "%s: out of memory", r->name);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		rc = parse_node(r, conf, n, i, direct_line, 1);
		if (rc < 0)
			goto fail;
	}
	/* Then the clusters' statements, if any (clusters.c). */
	while ((rc = next_line(r)) > 0) {
		if (is_routes_statement(r->buf)) {
			rc = routes_misplaced(r);
			goto fail;
		}
		if (direct_line && is_route_line(r->buf)) {
			rc = route_line_unexpected(r, direct_line);
			goto fail;
		}
		if (!indexed) {
			rc = bip_conf_hosts_build(conf, &hosts);
			if (rc < 0) {
				snprintf(r->err, r->errlen, "%s: out of memory", r->name);
				goto fail;
			}
			indexed = 1;
		}
		rc = bip_conf_clusters_statement(conf, &hosts, r->buf, r->name, r->line, r->err,
						 r->errlen);
		if (rc < 0)
			goto fail;
	}
	if (rc < 0)
		goto fail;
	rc = bip_conf_clusters_finish(conf, r->name, r->err, r->errlen);
	if (rc < 0)
		goto fail;
	bip_conf_hosts_free(&hosts);
	*conf_p = conf;
	return 0;
fail:
	bip_conf_hosts_free(&hosts);
	bip_conf_free(conf);
	return rc;
}

int bip_conf_parse_string(const char *text, const char *name, struct bip_conf **conf_p,
			  char *err, size_t errlen)
{
	struct conf_reader r = { .name = name, .p = text, .err = err, .errlen = errlen };
	int rc = conf_parse(&r, conf_p);

	free(r.buf);
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
	/* Every route direct: none stored (conf.h). */
	for (i = 0; i < n; i++) {
		snprintf(conf->nodes[i].host, sizeof(conf->nodes[i].host), "%s", u.nodename);
		conf->nodes[i].unit = 0;
	}
	*conf_p = conf;
	return 0;
}

int bip_conf_truncate(struct bip_conf *conf, int n)
{
	int i, j, r;

	if (n < 1 || n > conf->n)
		return -EINVAL;
	/* The relays are the file's last nodes: a job cut into them has
	 * none; one cut into its room only keeps them. */
	if (n < conf->n - conf->grown)
		conf->nrelays = conf->grown = 0;
	else
		conf->grown -= conf->n - n;
	/* Routes are rows of conf->n, rail after rail: repack them as rows of n. */
	for (r = 0; conf->routes && r < conf->nrails; r++)
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				conf->routes[((size_t)r * n + i) * n + j] =
				    conf->routes[((size_t)r * conf->n + i) * conf->n + j];
	conf->n = n;
	/* The file written back names no cluster without a node. */
	return bip_conf_clusters_shrink(conf);
}

int bip_conf_grow(struct bip_conf *conf, int n, const char *host)
{
	struct bip_conf_node *nodes;
	int i, old = conf->n;

	if (n < conf->n || !host || !*host || strlen(host) >= sizeof(conf->nodes[0].host))
		return -EINVAL;
	/* Routes are rows of n nodes: a job with them cannot take nodes at
	 * its end.  Clusters can: a new node is in its host's cluster, and
	 * the relays keep their numbers (the new nodes come after them). */
	if (conf->routes)
		return -ENOTSUP;
	nodes = realloc(conf->nodes, (size_t)n * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	conf->nodes = nodes;
	if (conf->cluster_of) {
		int *cluster_of = realloc(conf->cluster_of, (size_t)n * sizeof(*cluster_of));

		if (!cluster_of)
			return -ENOMEM;
		conf->cluster_of = cluster_of;
	}
	conf->n = n;
	conf->grown += n - old;
	for (i = old; i < n; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		bip_conf_set_host(conf, i, host);
	}
	return 0;
}

int bip_conf_write(FILE *f, const struct bip_conf *conf)
{
	int i, j, k, rail, direct = bip_conf_all_direct(conf);
	char line[300];

	/* The short form only where no node line reads as a route line (a
	 * host named "0/"): its reader tells a stray route line by its looks,
	 * the manual's format by its place. */
	for (i = 0; direct && i < conf->n; i++) {
		snprintf(line, sizeof(line), "%s %d", conf->nodes[i].host, conf->nodes[i].unit);
		if (is_route_line(line))
			direct = 0;
	}

	fprintf(f, "%d\n", conf->n);
	if (direct) {
		fputs("routes direct", f);
		for (rail = 1; rail < conf->nrails; rail++)
			fputs(" / direct", f);
		fputc('\n', f);
	}
	for (i = 0; i < conf->n; i++) {
		fprintf(f, "%s %d\n", conf->nodes[i].host, conf->nodes[i].unit);
		for (j = 0; !direct && j < conf->n; j++) {
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
static int host_is_this_machine_now(const char *host)
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
 * The answers of host_is_this_machine_now so far, by name.  Start-up asks
 * for every node of the configuration, several times (the processes of
 * this host, the peers of each driver, the binding), and a name that is
 * not this machine's costs a query to the resolver: 10,000 nodes would be
 * 10,000 queries or more, each taking up to a resolver's time-out.  With
 * the answers kept, each distinct host costs one.  The answer depends only
 * on the machine and its resolver, not on BIP_HOST or a launcher's name
 * (bip_host_is_local applies those), so it never goes stale in a run.
 */
#define HOST_ANSWERS_MAX (1 << 17)

static struct {
	pthread_mutex_t lock;
	char **name;                  /* the slots' names, NULL for an empty slot */
	unsigned char *local;
	size_t mask, used;
} answers = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The slot of name, or of the empty slot where it would go. */
static size_t answer_slot(const char *name)
{
	size_t i = (size_t)name_hash(name) & answers.mask;

	while (answers.name[i] && strcmp(answers.name[i], name))
		i = (i + 1) & answers.mask;
	return i;
}

/* Room for one more answer: the table at most half full.  0 or -ENOMEM. */
static int answers_grow(void)
{
	char **old_name = answers.name;
	unsigned char *old_local = answers.local;
	size_t old_slots = answers.name ? answers.mask + 1 : 0, slots, i;

	if (2 * (answers.used + 1) <= old_slots)
		return 0;
	slots = old_slots ? 2 * old_slots : 64;
	answers.name = calloc(slots, sizeof(*answers.name));
	answers.local = calloc(slots, sizeof(*answers.local));
	if (!answers.name || !answers.local) {
		free(answers.name);
		free(answers.local);
		answers.name = old_name;
		answers.local = old_local;
		return -ENOMEM;
	}
	answers.mask = slots - 1;
	for (i = 0; i < old_slots; i++) {
		if (old_name[i]) {
			size_t k = answer_slot(old_name[i]);

			answers.name[k] = old_name[i];
			answers.local[k] = old_local[i];
		}
	}
	free(old_name);
	free(old_local);
	return 0;
}

static int host_is_this_machine(const char *host)
{
	char *copy;
	size_t k;
	int local;

	pthread_mutex_lock(&answers.lock);
	if (answers.name) {
		k = answer_slot(host);
		if (answers.name[k]) {
			local = answers.local[k];
			pthread_mutex_unlock(&answers.lock);
			return local;
		}
	}
	pthread_mutex_unlock(&answers.lock);
	/* Asked without the lock: the resolver may take seconds.  Two threads
	 * asking for one name at once both ask, and agree. */
	local = host_is_this_machine_now(host);
	pthread_mutex_lock(&answers.lock);
	if (answers.used < HOST_ANSWERS_MAX && answers_grow() == 0) {
		k = answer_slot(host);
		if (!answers.name[k] && (copy = strdup(host))) {
			answers.name[k] = copy;
			answers.local[k] = (unsigned char)local;
			answers.used++;
		}
	}
	pthread_mutex_unlock(&answers.lock);
	return local;
}

void bip_host_forget(void)
{
	size_t i;

	pthread_mutex_lock(&answers.lock);
	for (i = 0; answers.name && i <= answers.mask; i++)
		free(answers.name[i]);
	free(answers.name);
	free(answers.local);
	answers.name = NULL;
	answers.local = NULL;
	answers.mask = answers.used = 0;
	pthread_mutex_unlock(&answers.lock);
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
