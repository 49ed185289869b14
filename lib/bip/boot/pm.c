/* SPDX-License-Identifier: MIT */
/*
 * pm.c - the channel to the process manager (pm.h has the protocol).
 *
 * A request is one record and its answer the next record from bipload, so
 * one mutex serialises the requests of a process's threads.  A wait for an
 * answer polls the descriptor with no time limit of its own: bipload
 * answers every request, and when it goes the socket ends (EOF), which is
 * an error here.  A grow request lasts as long as the new processes take
 * to start BIP.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pm.h"

static int pm_fd = -1;
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

int bip_pm_open(void)
{
	const char *s = getenv(BIP_ENV_PM_FD);
	char *end;
	long v;
	int type;
	socklen_t len = sizeof(type);

	if (pm_fd >= 0)
		return 1;
	if (!s || !*s)
		return 0;
	v = strtol(s, &end, 10);
	unsetenv(BIP_ENV_PM_FD);
	if (*end || v < 3 || v > 65535)
		return 0;
	/* Only a descriptor that is the socket bipload made counts. */
	if (getsockopt((int)v, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		return 0;
	fcntl((int)v, F_SETFD, FD_CLOEXEC);
	pm_fd = (int)v;
	return 1;
}

int bip_pm_present(void)
{
	return pm_fd >= 0;
}

void bip_pm_close(void)
{
	if (pm_fd >= 0)
		close(pm_fd);
	pm_fd = -1;
}

/* A record of the fields given (each NUL-ended). */
struct rec {
	char buf[BIP_PM_MSG_MAX];
	size_t len;
	int over;
};

static void put(struct rec *r, const char *field)
{
	size_t n = strlen(field) + 1;

	if (r->len + n > sizeof(r->buf)) {
		r->over = 1;
		return;
	}
	memcpy(r->buf + r->len, field, n);
	r->len += n;
}

static void put_int(struct rec *r, long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld", v);
	put(r, s);
}

static int send_rec(const struct rec *r)
{
	ssize_t n;

	do
		n = send(pm_fd, r->buf, r->len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)r->len ? 0 : -(n < 0 ? errno : EPROTO);
}

/* The next record, split into at most max fields; the count, or a
 * negative errno. */
static int recv_rec(struct rec *r, char **field, int max)
{
	struct pollfd p = { .fd = pm_fd, .events = POLLIN };
	ssize_t n;
	size_t at = 0;
	int nf = 0;

	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -errno;
		n = recv(pm_fd, r->buf, sizeof(r->buf) - 1, MSG_DONTWAIT);
		if (n > 0)
			break;
		if (n == 0)
			return -ECONNRESET;
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
	r->len = (size_t)n;
	r->buf[n] = '\0';
	if (r->buf[n - 1] != '\0')
		return -EPROTO; /* every field ends with its NUL */
	while (at < r->len && nf < max) {
		field[nf++] = r->buf + at;
		at += strlen(r->buf + at) + 1;
	}
	return at < r->len ? -EPROTO : nf;
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return *s && !*end && !errno && *v >= lo && *v <= hi ? 0 : -EPROTO;
}

void bip_pm_up(int segfd)
{
	struct rec r = { .len = 0 };

	if (pm_fd < 0)
		return;
	put(&r, "up");
	put_int(&r, segfd);
	put_int(&r, (int)getpid());
	pthread_mutex_lock(&pm_lock);
	send_rec(&r);
	pthread_mutex_unlock(&pm_lock);
}

int bip_pm_where(int node, pid_t *pid, int *fd, char *err, size_t errlen)
{
	static struct rec r;
	char *f[4];
	long a, b;
	int n, rc;

	if (pm_fd < 0) {
		snprintf(err, errlen, "no process manager to ask where node %d is", node);
		return -ENOTCONN;
	}
	pthread_mutex_lock(&pm_lock);
	r.len = 0;
	put(&r, "where");
	put_int(&r, node);
	rc = send_rec(&r);
	n = rc < 0 ? rc : recv_rec(&r, f, 4);
	pthread_mutex_unlock(&pm_lock);
	if (n < 0) {
		snprintf(err, errlen, "asking bipload where node %d is: %s", node, strerror(-n));
		return n;
	}
	if (n < 4 || strcmp(f[0], "where") || parse_long(f[1], node, node, &a) < 0 ||
	    parse_long(f[2], -4095, 1L << 30, &a) < 0) {
		snprintf(err, errlen, "asking bipload where node %d is: a malformed answer", node);
		return -EPROTO;
	}
	if (a < 0) {
		snprintf(err, errlen, "%s", f[3]);
		return (int)a;
	}
	if (parse_long(f[3], 0, 1 << 20, &b) < 0 || a == 0) {
		snprintf(err, errlen, "asking bipload where node %d is: a malformed answer", node);
		return -EPROTO;
	}
	*pid = (pid_t)a;
	*fd = (int)b;
	return 0;
}

int bip_pm_host(int node, char *host, size_t len, char *err, size_t errlen)
{
	static struct rec r;
	char *f[4];
	long a;
	int n, rc;

	if (pm_fd < 0) {
		snprintf(err, errlen, "no process manager to ask for node %d's host", node);
		return -ENOTCONN;
	}
	pthread_mutex_lock(&pm_lock);
	r.len = 0;
	put(&r, "host");
	put_int(&r, node);
	rc = send_rec(&r);
	n = rc < 0 ? rc : recv_rec(&r, f, 4);
	if (n < 0) {
		snprintf(err, errlen, "asking bipload for node %d's host: %s", node, strerror(-n));
	} else if (n < 3 || strcmp(f[0], "host") || parse_long(f[1], node, node, &a) < 0) {
		n = -EPROTO;
	} else if (n == 4 && parse_long(f[2], -4095, -1, &a) == 0) {
		/* -errno and why */
		snprintf(err, errlen, "%s", f[3]);
		n = (int)a;
	} else if (n == 3 && *f[2] && strlen(f[2]) < len && !strchr(f[2], '/')) {
		snprintf(host, len, "%s", f[2]);
		n = 0;
	} else {
		n = -EPROTO;
	}
	pthread_mutex_unlock(&pm_lock);
	if (n == -EPROTO)
		snprintf(err, errlen, "asking bipload for node %d's host: a malformed answer", node);
	return n;
}

int bip_pm_blob_put(const void *blob, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	struct rec r = { .len = 0 };
	char h[2 * BIP_PM_BLOB_MAX + 1];
	const unsigned char *b = blob;
	size_t i;
	int rc;

	if (pm_fd < 0)
		return -ENOTCONN;
	if (len > BIP_PM_BLOB_MAX)
		return -E2BIG;
	for (i = 0; i < len; i++) {
		h[2 * i] = hex[b[i] >> 4];
		h[2 * i + 1] = hex[b[i] & 15];
	}
	h[2 * len] = '\0';
	put(&r, "blob");
	put(&r, h);
	pthread_mutex_lock(&pm_lock);
	rc = send_rec(&r);
	pthread_mutex_unlock(&pm_lock);
	return rc;
}

static int unhex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int bip_pm_blob_get(int node, void *blob, size_t len, char *err, size_t errlen)
{
	static struct rec r;
	unsigned char *b = blob;
	char *f[4];
	size_t i, n;
	long a;
	int nf, rc;

	if (pm_fd < 0) {
		snprintf(err, errlen, "no process manager to ask for node %d's address", node);
		return -ENOTCONN;
	}
	pthread_mutex_lock(&pm_lock);
	r.len = 0;
	put(&r, "addr");
	put_int(&r, node);
	rc = send_rec(&r);
	nf = rc < 0 ? rc : recv_rec(&r, f, 4);
	pthread_mutex_unlock(&pm_lock);
	if (nf < 0) {
		snprintf(err, errlen, "asking bipload for node %d's address: %s", node,
			 strerror(-nf));
		return nf;
	}
	if (nf < 3 || strcmp(f[0], "addr") || parse_long(f[1], node, node, &a) < 0)
		goto malformed;
	if (nf == 4) {
		if (parse_long(f[2], -4095, -1, &a) < 0)
			goto malformed;
		snprintf(err, errlen, "%s", f[3]);
		return (int)a;
	}
	n = strlen(f[2]);
	if (n % 2 || n / 2 > len)
		goto malformed;
	for (i = 0; i < n / 2; i++) {
		int hi = unhex(f[2][2 * i]), lo = unhex(f[2][2 * i + 1]);

		if (hi < 0 || lo < 0)
			goto malformed;
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	return (int)(n / 2);

malformed:
	snprintf(err, errlen, "asking bipload for node %d's address: a malformed answer", node);
	return -EPROTO;
}

int bip_pm_grow(const struct bip_pm_cmd *cmds, int ncmds, int *first, int *errcodes, int *room,
		char *err, size_t errlen)
{
	static struct rec r;
	static char *f[4096 + 8]; /* grew, first, total, room, a code each, message */
	long v, total = 0;
	int i, j, n, rc, argc;

	if (pm_fd < 0) {
		snprintf(err, errlen, "this process has no process manager to start others (it "
			 "was not started by bipload on bipload's host)");
		return -ENOTCONN;
	}
	pthread_mutex_lock(&pm_lock);
	r.len = 0;
	r.over = 0;
	put(&r, "grow");
	put_int(&r, ncmds);
	for (i = 0; i < ncmds; i++) {
		put_int(&r, cmds[i].count);
		total += cmds[i].count;
		put(&r, cmds[i].host ? cmds[i].host : "");
		put(&r, cmds[i].wdir ? cmds[i].wdir : "");
		put(&r, cmds[i].path ? cmds[i].path : "");
		for (argc = 0; cmds[i].argv[argc]; argc++)
			;
		put_int(&r, argc);
		for (j = 0; j < argc; j++)
			put(&r, cmds[i].argv[j]);
		for (n = 0; cmds[i].env && cmds[i].env[n]; n++)
			;
		put_int(&r, n);
		for (j = 0; j < n; j++)
			put(&r, cmds[i].env[j]);
	}
	if (r.over) {
		pthread_mutex_unlock(&pm_lock);
		snprintf(err, errlen, "the commands and their arguments take more than %d bytes",
			 BIP_PM_MSG_MAX);
		return -E2BIG;
	}
	if (total > 4096) {
		pthread_mutex_unlock(&pm_lock);
		snprintf(err, errlen, "%ld processes asked at once, at most 4096", total);
		return -E2BIG;
	}
	rc = send_rec(&r);
	n = rc < 0 ? rc : recv_rec(&r, f, (int)(sizeof(f) / sizeof(f[0])));
	pthread_mutex_unlock(&pm_lock);
	if (n < 0) {
		snprintf(err, errlen, "asking bipload to start processes: %s", strerror(-n));
		return n;
	}
	if (n != 5 + total || strcmp(f[0], "grew") || parse_long(f[1], 0, 1 << 24, &v) < 0 ||
	    parse_long(f[2], total, total, &v) < 0 || parse_long(f[3], 0, 1 << 24, &v) < 0) {
		snprintf(err, errlen, "asking bipload to start processes: a malformed answer");
		return -EPROTO;
	}
	*room = (int)v;
	parse_long(f[1], 0, 1 << 24, &v);
	*first = (int)v;
	rc = 0;
	for (i = 0; i < total; i++) {
		if (parse_long(f[4 + i], 0, 4095, &v) < 0) {
			snprintf(err, errlen, "asking bipload to start processes: a malformed answer");
			return -EPROTO;
		}
		errcodes[i] = (int)v;
		if (v && !rc)
			rc = -(int)v;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", f[4 + total]);
		return rc;
	}
	return (int)total;
}
