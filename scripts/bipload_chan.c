/* SPDX-License-Identifier: MIT */
/*
 * bipload_chan.c - the channel between bipload and a proxy, and what both
 * ends share (bipload_proxy.h has the protocol).
 *
 * A channel writes through a buffer that grows as frames are queued and is
 * written when the descriptor takes it, so that neither end blocks on the
 * other: bipload keeps forwarding the others' output while one proxy is
 * slow, and a proxy keeps watching its processes while bipload is.  Each
 * end bounds what it queues (bipload node 0's input by its window, a proxy
 * its processes' output by reading their pipes only while little waits).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bipload_proxy.h"
#include "conf.h"

uint32_t bipload_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void bipload_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

double bipload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bipload_chan_init(struct bipload_chan *c, int rfd, int wfd)
{
	memset(c, 0, sizeof(*c));
	c->rfd = rfd;
	c->wfd = wfd;
}

void bipload_chan_close(struct bipload_chan *c)
{
	if (c->rfd >= 0)
		close(c->rfd);
	if (c->wfd >= 0 && c->wfd != c->rfd)
		close(c->wfd);
	c->rfd = c->wfd = -1;
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	c->in_len = c->in_cap = c->in_off = 0;
	c->out_len = c->out_cap = c->out_off = 0;
}

static int reserve(unsigned char **buf, size_t *cap, size_t need)
{
	unsigned char *p;
	size_t n = *cap ? *cap : 4096;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

int bipload_chan_put(struct bipload_chan *c, uint32_t type, uint32_t node, const void *a,
		     size_t alen, const void *b, size_t blen)
{
	unsigned char *p;

	if (alen + blen > BIPLOAD_FRAME_MAX)
		return -EMSGSIZE;
	/* What was written goes: the rest moves to the front. */
	if (c->out_off && c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	} else if (c->out_off > c->out_cap / 2) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (reserve(&c->out, &c->out_cap, c->out_len + BIPLOAD_FRAME_HEAD + alen + blen) < 0)
		return -ENOMEM;
	p = c->out + c->out_len;
	bipload_put32(p, type);
	bipload_put32(p + 4, node);
	bipload_put32(p + 8, (uint32_t)(alen + blen));
	if (alen)
		memcpy(p + BIPLOAD_FRAME_HEAD, a, alen);
	if (blen)
		memcpy(p + BIPLOAD_FRAME_HEAD + alen, b, blen);
	c->out_len += BIPLOAD_FRAME_HEAD + alen + blen;
	return 0;
}

size_t bipload_chan_pending(const struct bipload_chan *c)
{
	return c->out_len - c->out_off;
}

int bipload_chan_flush(struct bipload_chan *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->wfd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == ENOTSOCK)
			n = write(c->wfd, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		c->out_off += (size_t)n;
	}
	return 0;
}

int bipload_chan_drain(struct bipload_chan *c, double deadline)
{
	while (bipload_chan_pending(c)) {
		struct pollfd pfd = { .fd = c->wfd, .events = POLLOUT };
		double left = deadline - bipload_now();
		int rc;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return -errno;
		rc = bipload_chan_flush(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

ssize_t bipload_chan_read(struct bipload_chan *c)
{
	ssize_t n;

	if (c->in_off && c->in_off == c->in_len) {
		c->in_off = c->in_len = 0;
	} else if (c->in_off > c->in_cap / 2) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (reserve(&c->in, &c->in_cap, c->in_len + BIPLOAD_OUT_CHUNK + BIPLOAD_FRAME_HEAD) < 0)
		return -ENOMEM;
	n = read(c->rfd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -errno;
	c->in_len += (size_t)n;
	return n;
}

int bipload_chan_next(struct bipload_chan *c, struct bipload_frame *f)
{
	const unsigned char *p = c->in + c->in_off;
	size_t have = c->in_len - c->in_off;
	uint32_t len;

	if (have < BIPLOAD_FRAME_HEAD)
		return 0;
	len = bipload_get32(p + 8);
	if (len > BIPLOAD_FRAME_MAX)
		return -EPROTO;
	if (have < BIPLOAD_FRAME_HEAD + (size_t)len) {
		if (reserve(&c->in, &c->in_cap, c->in_off + BIPLOAD_FRAME_HEAD + len) < 0)
			return -ENOMEM;
		return 0;
	}
	f->type = bipload_get32(p);
	f->node = bipload_get32(p + 4);
	f->len = len;
	f->data = p + BIPLOAD_FRAME_HEAD;
	c->in_off += BIPLOAD_FRAME_HEAD + len;
	return 1;
}

int bipload_auth_key(const char *secret, unsigned char *key, size_t keymax)
{
	size_t n = strlen(secret), i;

	if (n < 32 || n > 128 || n % 2 || n / 2 > keymax ||
	    strspn(secret, "0123456789abcdefABCDEF") != n)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		sscanf(secret + 2 * i, "%2x", &v);
		key[i] = (unsigned char)v;
	}
	return (int)(n / 2);
}

void bipload_auth_mac(unsigned char *mac, const unsigned char *key, size_t keylen,
		      const char *label, const void *a, size_t alen, const void *b, size_t blen)
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, a, alen);
	crypto_auth_hmacsha256_update(&st, b, blen);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

/* Unlink /dev/shm/name if it is a regular file of ours. */
static void unlink_ours(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm/%s", name);
	/* Only a file of ours: another user may have made the name. */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		unlink(path);
}

void bipload_remove_node_shm(const char *jobid, int node)
{
	char prefix[128], name[160];
	struct dirent *d;
	size_t len;
	DIR *dir;

	if (bip_shm_prefix(prefix, sizeof(prefix), (unsigned)geteuid(), jobid) < 0)
		return;
	snprintf(name, sizeof(name), "%s%d", prefix, node);
	len = strlen(name);
	dir = opendir("/dev/shm");
	if (!dir)
		return;
	/* The node's segment, and any of its own named after it ("...-N-x"). */
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, name, len) && (!d->d_name[len] || d->d_name[len] == '-'))
			unlink_ours(d->d_name);
	closedir(dir);
}

void bipload_remove_pid_regions(const int *pids, int npids)
{
	struct dirent *d;
	DIR *dir;
	int i;

	if (!npids)
		return;
	dir = opendir("/dev/shm");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (end == d->d_name || *end != ':')
			continue;
		for (i = 0; i < npids; i++)
			if (pids[i] == pid)
				unlink_ours(d->d_name);
	}
	closedir(dir);
}
