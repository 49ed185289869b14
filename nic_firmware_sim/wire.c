/* SPDX-License-Identifier: MIT */
/*
 * wire.c - the simulated wire between the boards.
 *
 * A packet leaves its board with the configuration's route to its
 * destination, the next sequence number of the link (source, destination)
 * and a CRC32C over header and payload (a datagram that gathers its data at
 * delivery, struct lanai_gather, has its descriptor covered instead of the
 * data, which the host's own CRC checks).  The wire walks the route through
 * the simulated switches: a packet whose route does not land on the
 * destination's host is dropped and reported to the sender, never
 * delivered.  Then the fault knobs act on it (loss, corruption,
 * duplication, reordering, delay, a link going down), with their own
 * counters, and it is queued for the destination board.
 *
 * The receiving board checks the CRC and the sequence number before it
 * delivers anything: a corrupt, duplicated or out-of-sequence packet (a
 * loss shows as a gap at the next packet) is dropped and reported to its
 * host, and nothing more is delivered from that link.
 *
 * The one-sided protocol's packets (RMA_REQ, RMA_ANS) keep the sequence
 * numbers rma.c gives them and take none of the link's: a fault on them is
 * counted and the packet dropped, never reported to a host, since rma.c
 * repairs it.  A board's packets to itself (rma.c's loopback) do not
 * cross the wire.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "firmware.h"

static const char *const kind_names[] = {
    [LANAI_PKT_SHORT] = "SHORT", [LANAI_PKT_RTS] = "RTS",	    [LANAI_PKT_CTS] = "CTS",
    [LANAI_PKT_DATA] = "DATA",	 [LANAI_PKT_ACK] = "ACK",	    [LANAI_PKT_ABORT] = "ABORT",
    [LANAI_PKT_SYNC] = "SYNC",	 [LANAI_PKT_SYNC_ACK] = "SYNC_ACK", [LANAI_PKT_DGRAM] = "DGRAM",
    [LANAI_PKT_RMA_REQ] = "RMA_REQ", [LANAI_PKT_RMA_ANS] = "RMA_ANS",
};

#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

static const char *kind_name(unsigned kind)
{
	return kind < NKINDS && kind_names[kind] ? kind_names[kind] : "?";
}

uint64_t lanai_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct lanai_packet *lanai_packet_new(uint32_t len)
{
	/* The payload is not cleared: every sender writes all of it (a
	 * 64 KiB DATA packet would otherwise cost one more pass). */
	struct lanai_packet *p = malloc(sizeof(*p) + len);

	if (p) {
		memset(p, 0, sizeof(*p));
		p->h.len = len;
		p->cap = len;
	}
	return p;
}

/* --- fault knobs --- */

/*
 * Each knob has a name in the knob file and a variable; the variable wins.
 * what is how the user wrote the setting ("BIP_LANAI_LOSS=5" or
 * "FILE:LINE: loss 5"), for messages.
 */
enum knob_type {
	KNOB_PERCENT,
	KNOB_TIME,
	KNOB_SEED,
	KNOB_LINKDOWN,
	KNOB_TRACE,
	KNOB_DROP,
	KNOB_SYNC,
	KNOB_LINK_TIMEOUT,
	KNOB_RATE,
};

static const struct knob {
	const char *key;
	const char *env;
	enum knob_type type;
	int fault;
} knobs[] = {
    {"loss", "BIP_LANAI_LOSS", KNOB_PERCENT, BIP_LANAI_FAULT_LOSS},
    {"corrupt", "BIP_LANAI_CORRUPT", KNOB_PERCENT, BIP_LANAI_FAULT_CORRUPT},
    {"duplicate", "BIP_LANAI_DUPLICATE", KNOB_PERCENT, BIP_LANAI_FAULT_DUPLICATE},
    {"reorder", "BIP_LANAI_REORDER", KNOB_PERCENT, BIP_LANAI_FAULT_REORDER},
    {"delay", "BIP_LANAI_DELAY", KNOB_TIME, BIP_LANAI_FAULT_DELAY},
    {"seed", "BIP_LANAI_SEED", KNOB_SEED, 0},
    {"link-down", "BIP_LANAI_LINK_DOWN", KNOB_LINKDOWN, BIP_LANAI_FAULT_LINKDOWN},
    {"trace", "BIP_LANAI_TRACE", KNOB_TRACE, 0},
    {"drop", "BIP_LANAI_DROP", KNOB_DROP, 0}, /* counted as a loss */
    {"sync", "BIP_LANAI_SYNC", KNOB_SYNC, 0},
    {"link-timeout", "BIP_LANAI_LINK_TIMEOUT", KNOB_LINK_TIMEOUT, 0},
    {"rate", "BIP_LANAI_RATE", KNOB_RATE, 0},
};

#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

/* "10ms", "250us", "1s", "10" (milliseconds): microseconds. */
static int parse_time(const char *s, uint64_t *us)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -EINVAL;
	if (!*end || !strcmp(end, "ms"))
		v *= 1000.0;
	else if (!strcmp(end, "s"))
		v *= 1e6;
	else if (strcmp(end, "us"))
		return -EINVAL;
	*us = (uint64_t)v;
	return 0;
}

/* A packet count ("100") or a time with its unit ("50ms"). */
static int parse_after(const char *s, uint64_t *v, int *in_time)
{
	char *end;

	*in_time = 0;
	*v = strtoull(s, &end, 10);
	if (end != s && !*end && isdigit((unsigned char)*s))
		return 0;
	*in_time = 1;
	return parse_time(s, v) < 0 || !strpbrk(s, "su") ? -EINVAL : 0;
}

static int knob_set(struct lanai_faults *f, const struct knob *k, const char *s, const char *what,
		    char *err, size_t errlen)
{
	char *end;

	switch (k->type) {
	case KNOB_PERCENT: {
		double v = strtod(s, &end);

		if (end == s || (*end && strcmp(end, "%")) || v < 0 || v > 100) {
			snprintf(err, errlen, "%s: expected a percentage from 0 to 100 (e.g. 5%%)",
				 what);
			return -EINVAL;
		}
		f->ppm[k->fault] = (uint32_t)(v * 10000.0 + 0.5);
		return 0;
	}
	case KNOB_TIME:
		if (parse_time(s, &f->delay_us) < 0) {
			snprintf(err, errlen, "%s: expected a time (10ms, 250us, 1s)", what);
			return -EINVAL;
		}
		return 0;
	case KNOB_SEED:
		f->seed = strtoull(s, &end, 0);
		if (end == s || *end) {
			snprintf(err, errlen, "%s: expected a number", what);
			return -EINVAL;
		}
		return 0;
	case KNOB_LINKDOWN: {
		/* NODE@DOWN or NODE@DOWN:UP, both packet counts or both times. */
		long node = strtol(s, &end, 10);
		const char *after = end + 1, *colon;
		char down[64];
		int in_time, up_in_time = 0;

		colon = strchr(after, ':');
		if (end == s || *end != '@' || node < 0 || !*after ||
		    (size_t)(colon ? colon - after : (long)strlen(after)) >= sizeof(down) ||
		    (colon && !colon[1])) {
			snprintf(err, errlen,
				 "%s: expected NODE@DOWN or NODE@DOWN:UP, packet counts or times "
				 "(e.g. 1@100, 1@50ms, 1@50ms:300ms)",
				 what);
			return -EINVAL;
		}
		snprintf(down, sizeof(down), "%.*s", (int)(colon ? colon - after : (long)strlen(after)),
			 after);
		f->linkdown_node = (int)node;
		f->linkup_after = 0;
		if (parse_after(down, &f->linkdown_after, &in_time) < 0 ||
		    (colon && parse_after(colon + 1, &f->linkup_after, &up_in_time) < 0)) {
			snprintf(err, errlen,
				 "%s: after '@' and ':', a packet count or a time with its unit "
				 "(50ms, 1s)",
				 what);
			return -EINVAL;
		}
		if (colon && (up_in_time != in_time || f->linkup_after <= f->linkdown_after)) {
			snprintf(err, errlen,
				 "%s: the link comes up again after it goes down, counted the same "
				 "way (both packets or both times)",
				 what);
			return -EINVAL;
		}
		f->linkdown_in_time = in_time;
		return 0;
	}
	case KNOB_DROP: {
		/* KIND:SRC:DST:N */
		char kind[16];
		unsigned long long src, dst, n;
		int used = 0;
		size_t i;

		if (sscanf(s, "%15[A-Z_]:%llu:%llu:%llu%n", kind, &src, &dst, &n, &used) != 4 ||
		    s[used] || src > 0xffffffffull || dst > 0xffffffffull || src == dst) {
			snprintf(err, errlen,
				 "%s: expected KIND:SRC:DST:N, the N-th packet (from 0) of KIND "
				 "from node SRC to node DST (e.g. SHORT:1:0:0)",
				 what);
			return -EINVAL;
		}
		for (i = 1; i < NKINDS && strcmp(kind, kind_name((unsigned)i)); i++)
			;
		if (i == NKINDS) {
			snprintf(err, errlen,
				 "%s: unknown packet kind '%s' (SHORT, RTS, CTS, DATA, ACK, ABORT, "
				 "SYNC, SYNC_ACK, DGRAM, RMA_REQ, RMA_ANS)",
				 what, kind);
			return -EINVAL;
		}
		f->drop_kind = (uint32_t)i;
		f->drop_src = (uint32_t)src;
		f->drop_dst = (uint32_t)dst;
		f->drop_n = n;
		return 0;
	}
	case KNOB_SYNC:
		if (parse_time(s, &f->sync_us) < 0 || !f->sync_us) {
			snprintf(err, errlen, "%s: expected a time above 0 (1ms, 500us, 1s)", what);
			return -EINVAL;
		}
		return 0;
	case KNOB_LINK_TIMEOUT:
		/* A bare number is seconds here, as the variable's name says. */
		if (*s && !s[strspn(s, "0123456789")]) {
			char *end;
			unsigned long long v = strtoull(s, &end, 10);

			f->link_timeout_us = v > UINT64_MAX / 1000000 ? 0 : v * 1000000;
		} else if (parse_time(s, &f->link_timeout_us) < 0) {
			f->link_timeout_us = 0;
		}
		if (!f->link_timeout_us) {
			snprintf(err, errlen, "%s: expected a time above 0 (10, 10s, 500ms)", what);
			return -EINVAL;
		}
		return 0;
	case KNOB_RATE: {
		double v = strtod(s, &end);

		if (end == s || *end || v < 0 || v > 1e6) {
			snprintf(err, errlen,
				 "%s: expected the speed of a link in MB/s (e.g. 250; 0: no limit)",
				 what);
			return -EINVAL;
		}
		f->rate_mbs = v;
		return 0;
	}
	case KNOB_TRACE:
		if ((size_t)snprintf(f->trace, sizeof(f->trace), "%s", s) >= sizeof(f->trace)) {
			snprintf(err, errlen, "%s: file name too long", what);
			return -ENAMETOOLONG;
		}
		return 0;
	}
	return -EINVAL;
}

/* "rail<N>.key" (file) or "RAIL<N>_" (variable, after BIP_LANAI_): the rail
 * N and where the knob's own name starts; -1 if s names no rail. */
static int rail_prefix(const char *s, const char *word, char sep, const char **rest)
{
	size_t n = strlen(word);
	char *end;
	long r;

	if (strncmp(s, word, n) || !isdigit((unsigned char)s[n]))
		return -1;
	r = strtol(s + n, &end, 10);
	if (*end != sep || r > 1000)
		return -1;
	*rest = end + 1;
	return (int)r;
}

/*
 * The knob file: "NAME VALUE" per line, blank lines and '#' comments
 * ignored; "railN.NAME VALUE" for rail N alone.  Pass 0 takes the knobs of
 * every rail, pass 1 those of this rail, so that these win.
 */
static int knobs_from_file(struct lanai_faults *f, int rail, int nrails, int pass,
			   const char *path, char *err, size_t errlen)
{
	char line[1024], what[5200];
	FILE *in = fopen(path, "r");
	int lineno = 0, rc = 0;

	if (!in) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (rc == 0 && fgets(line, sizeof(line), in)) {
		const char *name;
		char *key, *val, *e;
		size_t i;
		int r;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		key = line + strspn(line, " \t");
		if (!*key || *key == '#')
			continue;
		val = key + strcspn(key, " \t");
		if (*val)
			*val++ = '\0';
		val += strspn(val, " \t");
		for (e = val + strlen(val); e > val && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		snprintf(what, sizeof(what), "%s:%d: %s %s", path, lineno, key, val);
		name = key;
		r = rail_prefix(key, "rail", '.', &name);
		if (r >= nrails) {
			snprintf(err, errlen, "%s:%d: %s: rail %d, but the job has %d rail%s", path,
				 lineno, key, r, nrails, nrails == 1 ? "" : "s");
			rc = -EINVAL;
			break;
		}
		for (i = 0; i < NKNOBS && strcmp(name, knobs[i].key); i++)
			;
		if (i == NKNOBS) {
			snprintf(err, errlen,
				 "%s:%d: unknown knob '%s' (loss, corrupt, duplicate, reorder, "
				 "delay, seed, link-down, trace, drop, sync, link-timeout, rate)",
				 path, lineno, name);
			rc = -EINVAL;
		} else if (!*val) {
			snprintf(err, errlen, "%s:%d: %s needs a value", path, lineno, key);
			rc = -EINVAL;
		} else if ((pass == 0 && r < 0) || (pass == 1 && r == rail)) {
			rc = knob_set(f, &knobs[i], val, what, err, errlen);
		}
	}
	fclose(in);
	return rc;
}

/* BIP_LANAI_RAIL<N>_* for a rail the job does not have, or a knob that does
 * not exist: an error, not a knob silently ignored. */
static int check_rail_vars(int nrails, char *err, size_t errlen)
{
	extern char **environ;
	char **e;

	for (e = environ; *e; e++) {
		const char *rest;
		size_t i, n;
		int r;

		if (strncmp(*e, "BIP_LANAI_", 10))
			continue;
		r = rail_prefix(*e + 10, "RAIL", '_', &rest);
		if (r < 0)
			continue;
		n = strcspn(*e, "=");
		if (r >= nrails) {
			snprintf(err, errlen, "%.*s: rail %d, but the job has %d rail%s", (int)n, *e,
				 r, nrails, nrails == 1 ? "" : "s");
			return -EINVAL;
		}
		for (i = 0; i < NKNOBS; i++)
			if (!strncmp(rest, knobs[i].env + 10, strlen(knobs[i].env + 10)) &&
			    rest[strlen(knobs[i].env + 10)] == '=')
				break;
		if (i == NKNOBS) {
			snprintf(err, errlen, "%.*s: no such knob (BIP_LANAI_RAIL%d_LOSS, _CORRUPT, "
				 "_DUPLICATE, _REORDER, _DELAY, _SEED, _LINK_DOWN, _DROP)", (int)n, *e,
				 r);
			return -EINVAL;
		}
	}
	return 0;
}

int lanai_faults_from_env(struct lanai_faults *f, int rail, int nrails, char *err,
			  size_t errlen)
{
	const char *conf = getenv("BIP_LANAI_CONF"), *home = getenv("HOME");
	char path[4096], what[4200], var[64];
	const char *file = NULL;
	size_t i;
	int rc, pass;

	memset(f, 0, sizeof(*f));
	f->linkdown_node = -1;
	f->seed = 1;
	f->sync_us = LANAI_SYNC_US;
	f->link_timeout_us = LANAI_LINK_TIMEOUT_US;
	if (conf && *conf)
		file = conf;
	else if (home &&
		 (size_t)snprintf(path, sizeof(path), "%s/.bip/biplanai", home) < sizeof(path) &&
		 access(path, F_OK) == 0)
		file = path;
	for (pass = 0; file && pass < 2; pass++) {
		rc = knobs_from_file(f, rail, nrails, pass, file, err, errlen);
		if (rc < 0)
			return rc;
	}
	rc = check_rail_vars(nrails, err, errlen);
	if (rc < 0)
		return rc;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < NKNOBS; i++) {
			const char *name = knobs[i].env, *s;

			if (pass) {
				snprintf(var, sizeof(var), "BIP_LANAI_RAIL%d_%s", rail,
					 knobs[i].env + 10);
				name = var;
			}
			s = getenv(name);
			if (!s || !*s)
				continue;
			snprintf(what, sizeof(what), "%s=%s", name, s);
			rc = knob_set(f, &knobs[i], s, what, err, errlen);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

void lanai_count_injected(struct lanai_fw *fw, enum bip_lanai_fault k)
{
	fw->injected[k]++;
	fw->seg->injected[k]++;
}

void lanai_count_detected(struct lanai_fw *fw, enum bip_lanai_detect k)
{
	fw->detected[k]++;
	fw->seg->detected[k]++;
}

/* splitmix64: the fault generator, reproducible from BIP_LANAI_SEED. */
static uint64_t rng_next(uint64_t *rng)
{
	uint64_t z = (*rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int fault_hits(struct lanai_fw *fw, uint64_t *rng, enum bip_lanai_fault f)
{
	return fw->faults.ppm[f] && rng_next(rng) % 1000000u < fw->faults.ppm[f];
}

/* --- trace --- */

/* "rail 1: " when the host has several rails, else "". */
static const char *rail_name(const struct lanai_fw *fw)
{
	static const char *const names[] = { "rail 0: ", "rail 1: ", "rail 2: ", "rail 3: " };

	return fw->nrails > 1 && fw->rail < 4 ? names[fw->rail] : "";
}

void lanai_trace(struct lanai_fw *fw, const char *dir, int board, const struct lanai_pkt_header *h,
		 const char *verdict)
{
	char route[40];
	size_t used = 0;
	int i;

	if (!fw->trace)
		return;
	route[0] = '\0';
	for (i = 0; i < h->nhops && i < BIP_CONF_MAXHOPS && used < sizeof(route); i++)
		used += (size_t)snprintf(route + used, sizeof(route) - used, "%s%u", i ? "," : "",
					 h->hop[i]);
	fprintf(fw->trace,
		"%.6f %sboard %d %s src %u dst %u route %s kind %s tag %u seq %u len %u "
		"crc 0x%08x: %s\n",
		(double)(lanai_now_us() - fw->t0) * 1e-6, rail_name(fw), board, dir, h->src, h->dst, route,
		kind_name(h->kind), h->tag, h->seq, h->len, h->crc, verdict);
}

/* --- events to the host --- */

int lanai_event_put(struct lanai_board *b, const struct bip_lanai_event *ev)
{
	struct bip_lanai_event *slot;

	if (!bip_lanai_ring_room(&b->evp, &b->regs->event_cons, BIP_LANAI_EVENT_SLOTS))
		return -EAGAIN;
	slot = bip_lanai_slot(b->events, BIP_LANAI_EVENT_SLOTS, sizeof(*slot), b->evp.prod);
	memcpy((char *)slot + sizeof(slot->seq), (const char *)ev + sizeof(ev->seq),
	       sizeof(*ev) - sizeof(ev->seq));
	bip_lanai_ring_publish(&b->evp, &slot->seq);
	b->notify = 1;
	return 0;
}

void lanai_report(struct lanai_fw *fw, struct lanai_board *b, enum bip_lanai_detect what,
		  const struct lanai_pkt_header *h, const char *fmt, ...)
{
	struct bip_lanai_event ev = {
	    .kind = BIP_LANAI_EV_ERROR,
	    .src = h->src,
	    .dst = h->dst,
	    .tag = h->tag,
	    .pseq = h->seq,
	    .fault = what,
	    .status = -EIO,
	};
	va_list ap;

	lanai_count_detected(fw, what);
	b->regs->detected[what]++;
	va_start(ap, fmt);
	vsnprintf((char *)ev.payload, sizeof(ev.payload), fmt, ap);
	va_end(ap);
	if (b->mode == BIP_LANAI_MODE_DGRAM) {
		/* Its host repairs losses itself: it hears only of links that
		 * cannot deliver, to use its other paths; when its event queue
		 * is full, it hears of the next one. */
		if ((what == BIP_LANAI_DET_LINKDOWN || what == BIP_LANAI_DET_ROUTE) &&
		    lanai_event_room(b))
			lanai_event_put(b, &ev);
		return;
	}
	if (b->has_pending_err)
		return; /* its host has a report already; it ends at the first */
	if (lanai_event_put(b, &ev) < 0) {
		b->pending_err = ev;
		b->has_pending_err = 1;
	}
}

/* --- sending --- */

/* Over the header, the payload the packet carries and, if it gathers the
 * rest, the descriptor of that rest (a header that claims more than that
 * fails its CRC: the length is part of what it covers). */
static uint32_t packet_crc(const struct lanai_packet *p)
{
	struct lanai_pkt_header h = p->h;
	uint32_t len = p->h.len <= p->cap ? p->h.len : p->cap;
	uint32_t crc;

	h.crc = 0;
	crc = bip_crc32c(bip_crc32c(0, &h, sizeof(h)), p->payload, len);
	if (p->g.len)
		crc = bip_crc32c(crc, &p->g, sizeof(p->g));
	return crc;
}

int lanai_packet_crc_ok(const struct lanai_packet *p)
{
	return p->h.len <= lanai_packet_bytes(p) && packet_crc(p) == p->h.crc;
}

void lanai_packet_drop(struct lanai_fw *fw, struct lanai_packet *p)
{
	fw->boards[p->from].inflight--;
	free(p);
}

static void enqueue(struct lanai_fw *fw, struct lanai_board *d, struct lanai_packet *p)
{
	p->next = NULL;
	if (d->in_tail)
		d->in_tail->next = p;
	else
		d->in_head = p;
	d->in_tail = p;
	d->in_count++;
	if (p->deliver_at && (!fw->next_due || p->deliver_at < fw->next_due))
		fw->next_due = p->deliver_at;
}

void lanai_wire_loopback(struct lanai_fw *fw, struct lanai_packet *p)
{
	struct lanai_board *b = &fw->boards[p->h.src];

	p->from = p->h.src;
	p->h.nhops = 1;
	memset(p->h.hop, 0, sizeof(p->h.hop));
	p->h.hop[0] = BIP_ROUTE_DIRECT;
	p->h.crc = 0;
	p->h.crc = packet_crc(p);
	p->deliver_at = 0;
	b->inflight++;
	lanai_trace(fw, "send", b->node, &p->h, "to itself");
	enqueue(fw, b, p);
}

static int route_verdict(struct lanai_fw *fw, int src, int dst, const char **why)
{
	size_t k = (size_t)src * fw->nboards + dst;

	if (!fw->route_ok[k]) {
		char w[256];

		if (lanai_route_check(fw->conf, fw->topo, fw->rail, src, dst, w, sizeof(w)) == 0) {
			fw->route_ok[k] = 1;
		} else {
			fw->route_ok[k] = -1;
			fw->route_why[k] = strdup(w);
		}
	}
	*why = fw->route_why[k] ? fw->route_why[k] : "wrong route";
	return fw->route_ok[k];
}

/* Where the link-down knob counts from: packets this rail carried before
 * this one, or microseconds since the start. */
static uint64_t linkdown_clock(const struct lanai_fw *fw)
{
	return fw->faults.linkdown_in_time ? lanai_now_us() - fw->t0 : fw->packets - 1;
}

static int link_is_down(struct lanai_fw *fw, const struct lanai_pkt_header *h)
{
	const struct lanai_faults *f = &fw->faults;

	if (f->linkdown_node < 0 || fw->linkdown == 2)
		return 0;
	if (!fw->linkdown) {
		if (linkdown_clock(fw) < f->linkdown_after)
			return 0;
		fw->linkdown = 1;
		fw->linkdown_at = fw->packets - 1;
		lanai_count_injected(fw, BIP_LANAI_FAULT_LINKDOWN);
		if (fw->trace)
			fprintf(fw->trace, "%.6f rail %d: link of board %d down\n",
				(double)(lanai_now_us() - fw->t0) * 1e-6, fw->rail, f->linkdown_node);
	}
	if (f->linkup_after && linkdown_clock(fw) >= f->linkup_after) {
		fw->linkdown = 2;
		fw->linkup_at = fw->packets - 1;
		if (fw->trace)
			fprintf(fw->trace, "%.6f rail %d: link of board %d up again\n",
				(double)(lanai_now_us() - fw->t0) * 1e-6, fw->rail, f->linkdown_node);
		return 0;
	}
	return h->src == (uint32_t)f->linkdown_node || h->dst == (uint32_t)f->linkdown_node;
}

/* --- the tail of a link: SYNC and SYNC_ACK --- */

static void link_settle(struct lanai_board *s, struct lanai_link *l)
{
	if (l->pending && (int32_t)(l->confirmed - l->need) >= 0) {
		l->pending = 0;
		s->npending--;
	}
}

/* Board s sends a packet (not a SYNC_ACK) on link l: the link is busy, and
 * unless it is a SYNC, the packet is one more to confirm. */
static void link_sent(struct lanai_fw *fw, struct lanai_board *s, struct lanai_link *l,
		      const struct lanai_pkt_header *h)
{
	uint64_t wait = fw->faults.sync_us;

	if (l->failed)
		return;
	if (h->kind == LANAI_PKT_SYNC) {
		wait <<= l->unanswered < 6 ? l->unanswered : 5;
		if (wait > fw->faults.sync_us * LANAI_SYNC_BACKOFF_MAX)
			wait = fw->faults.sync_us * LANAI_SYNC_BACKOFF_MAX;
		l->unanswered++;
	} else {
		l->need = h->seq + 1;
		l->unanswered = 0;
		if (!l->pending) {
			l->pending = 1;
			l->since = lanai_now_us();
			s->npending++;
		}
	}
	l->sync_due = lanai_now_us() + wait;
}

/* The sender's host has a report that the link cannot deliver: no SYNC
 * would tell it more. */
static void link_failed(struct lanai_board *s, struct lanai_link *l)
{
	l->failed = 1;
	if (l->pending) {
		l->pending = 0;
		s->npending--;
	}
}

int lanai_sync_links(struct lanai_fw *fw, struct lanai_board *b, uint64_t now)
{
	uint32_t dst;
	int n = 0;

	for (dst = 0; b->npending && dst < (uint32_t)fw->nactive; dst++) {
		struct lanai_link *l = &b->link[dst];
		const struct lanai_board *d = &fw->boards[dst];
		struct lanai_packet *p;

		if (!l->pending)
			continue;
		if (d->state != BIP_LANAI_BOARD_RUNNING || d->releasing) {
			/* Its host has ended: nobody is left to tell. */
			l->pending = 0;
			b->npending--;
			continue;
		}
		if (now > l->since && now - l->since >= fw->faults.link_timeout_us) {
			struct lanai_pkt_header h = { .src = (uint32_t)b->node, .dst = dst,
						      .seq = l->confirmed };

			lanai_report(fw, b, BIP_LANAI_DET_LINKDOWN, &h,
				     "lanai: the link from node %d to node %u is down: no packet "
				     "of it was acknowledged for %.1f s (BIP_LANAI_LINK_TIMEOUT); "
				     "node %u cannot be reached", b->node, dst,
				     (double)fw->faults.link_timeout_us / 1e6, dst);
			link_failed(b, l);
			continue;
		}
		if (now >= l->sync_due) {
			p = lanai_packet_new(0);
			if (!p)
				return n; /* the next pass tries again */
			p->h.kind = LANAI_PKT_SYNC;
			p->h.src = (uint32_t)b->node;
			p->h.dst = dst;
			lanai_wire_send(fw, p);
			n++;
		}
		if (l->pending && (!fw->next_due || l->sync_due < fw->next_due))
			fw->next_due = l->sync_due;
	}
	return n;
}

void lanai_sync_acked(struct lanai_fw *fw, struct lanai_board *b, uint32_t peer, uint32_t seq)
{
	struct lanai_link *l;

	if (peer >= (uint32_t)fw->nactive)
		return;
	l = &b->link[peer];
	/* Only what was sent can be confirmed; an older answer (duplicated or
	 * overtaken) confirms nothing new. */
	if ((int32_t)(seq - b->tx_seq[peer]) >= 0 || (int32_t)(seq + 1 - l->confirmed) <= 0)
		return;
	l->confirmed = seq + 1;
	l->unanswered = 0;
	l->since = lanai_now_us(); /* it moves: the time-out starts again */
	link_settle(b, l);
}

/* The drop knob: 1 if this is the packet it names. */
static int drop_hits(struct lanai_fw *fw, const struct lanai_pkt_header *h)
{
	const struct lanai_faults *f = &fw->faults;

	return f->drop_kind && h->kind == f->drop_kind && h->src == f->drop_src &&
	       h->dst == f->drop_dst && fw->drop_seen++ == f->drop_n;
}

void lanai_wire_send(struct lanai_fw *fw, struct lanai_packet *p)
{
	struct lanai_board *s = &fw->boards[p->h.src], *d = &fw->boards[p->h.dst];
	const struct bip_route *r = bip_conf_route(fw->conf, fw->rail, (int)p->h.src, (int)p->h.dst);
	struct lanai_link *l = &s->link[p->h.dst];
	uint64_t *rng = p->h.kind == LANAI_PKT_SYNC || p->h.kind == LANAI_PKT_SYNC_ACK
			    ? &fw->rng_sync
			    : &fw->rng;
	const char *why;
	int i;

	p->from = p->h.src;
	p->h.nhops = (uint8_t)r->nhops;
	for (i = 0; i < BIP_CONF_MAXHOPS; i++)
		p->h.hop[i] = (uint16_t)(i < r->nhops ? r->hop[i] : 0);
	if (!lanai_rma_kind(p->h.kind)) /* rma.c numbers its own */
		p->h.seq = s->tx_seq[p->h.dst]++;
	p->h.crc = 0;
	p->h.crc = packet_crc(p);
	p->deliver_at = 0;
	fw->seg->packets++;
	fw->packets++;
	s->regs->pkts_sent++;
	s->regs->bytes_sent += p->h.len;
	s->inflight++;
	/* A datagram's loss is its host's to find, a one-sided packet's
	 * rma.c's: no SYNC follows them. */
	if (p->h.kind != LANAI_PKT_SYNC_ACK && p->h.kind != LANAI_PKT_DGRAM &&
	    !lanai_rma_kind(p->h.kind))
		link_sent(fw, s, l, &p->h);

	if (link_is_down(fw, &p->h)) {
		int down = fw->faults.linkdown_node;

		lanai_trace(fw, "send", s->node, &p->h, "dropped: link down");
		lanai_report(fw, s, BIP_LANAI_DET_LINKDOWN, &p->h,
			     "%slink of node %d (host %s) is down after %llu packets on the wire: "
			     "%s packet to node %u on tag %u, sequence %u not delivered",
			     rail_name(fw), down, fw->conf->nodes[down].host,
			     (unsigned long long)fw->linkdown_at,
			     kind_name(p->h.kind), p->h.dst, p->h.tag, p->h.seq);
		link_failed(s, l);
		lanai_packet_drop(fw, p);
		return;
	}
	if (route_verdict(fw, (int)p->h.src, (int)p->h.dst, &why) < 0) {
		lanai_trace(fw, "send", s->node, &p->h, "dropped: wrong route");
		lanai_report(fw, s, BIP_LANAI_DET_ROUTE, &p->h,
			     "%swrong route: %s; %s packet to node %u on tag %u, sequence %u "
			     "dropped, not delivered",
			     rail_name(fw), why, kind_name(p->h.kind), p->h.dst, p->h.tag, p->h.seq);
		link_failed(s, l);
		lanai_packet_drop(fw, p);
		return;
	}
	if (drop_hits(fw, &p->h) || fault_hits(fw, rng, BIP_LANAI_FAULT_LOSS)) {
		lanai_count_injected(fw, BIP_LANAI_FAULT_LOSS);
		lanai_trace(fw, "send", s->node, &p->h, "lost (injected)");
		lanai_packet_drop(fw, p);
		return;
	}
	if (fault_hits(fw, rng, BIP_LANAI_FAULT_CORRUPT)) {
		lanai_count_injected(fw, BIP_LANAI_FAULT_CORRUPT);
		/* One bit, after the CRC: in the payload, else in an argument.
		 * Half the datagrams are damaged on the receiving board's DMA
		 * into its host instead, after the wire's CRC passed: only the
		 * host's own check can see that. */
		if (p->h.kind == LANAI_PKT_DGRAM && p->h.len && rng_next(rng) % 2) {
			lanai_trace(fw, "send", s->node, &p->h,
				    "to be corrupted on the receiver's bus (injected)");
			p->bus_flip = 1 + (uint32_t)(rng_next(rng) % ((uint64_t)p->h.len * 8));
		} else if (p->h.len) {
			/* A byte past what the packet carries is one of
			 * the descriptor of the rest (struct lanai_gather). */
			/* The bit is drawn first, as it always was: a
			 * seed hits the same packet and bit as before. */
			uint8_t bit = (uint8_t)(1u << (rng_next(rng) % 8));
			uint64_t at = rng_next(rng) % p->h.len;

			if (at < p->cap)
				p->payload[at] ^= bit;
			else
				((uint8_t *)&p->g)[(at - p->cap) % sizeof(p->g)] ^= bit;
		} else
			p->h.arg1 ^= 1ull << 63;
		if (!p->bus_flip)
			lanai_trace(fw, "send", s->node, &p->h, "corrupted (injected)");
	} else {
		lanai_trace(fw, "send", s->node, &p->h, "sent");
	}
	if (fw->faults.rate_mbs > 0) {
		/* The sender's link carries rate_mbs bytes per microsecond: the
		 * packet leaves once those before it have, and takes its time. */
		uint64_t now_ns = lanai_now_us() * 1000;

		if (s->tx_free_ns < now_ns)
			s->tx_free_ns = now_ns;
		s->tx_free_ns += (uint64_t)((double)(sizeof(p->h) + p->h.len) * 1000.0 /
					    fw->faults.rate_mbs);
		p->deliver_at = (s->tx_free_ns + 999) / 1000;
	}
	if (fw->faults.delay_us) {
		lanai_count_injected(fw, BIP_LANAI_FAULT_DELAY);
		p->deliver_at = (p->deliver_at ? p->deliver_at : lanai_now_us()) +
				fw->faults.delay_us;
	}
	if (fault_hits(fw, rng, BIP_LANAI_FAULT_DUPLICATE)) {
		struct lanai_packet *c = lanai_packet_new(p->cap);

		if (c) {
			memcpy(c, p, sizeof(*p) + p->cap);
			lanai_count_injected(fw, BIP_LANAI_FAULT_DUPLICATE);
			s->inflight++;
			lanai_trace(fw, "send", s->node, &c->h, "duplicated (injected)");
			enqueue(fw, d, p);
			p = c;
		}
	}
	if (!d->held && fault_hits(fw, rng, BIP_LANAI_FAULT_REORDER)) {
		/* Held back until the next packet for d has passed it. */
		d->held = p;
		d->held_since = lanai_now_us();
		if (!fw->next_due || d->held_since + 10000 < fw->next_due)
			fw->next_due = d->held_since + 10000;
		return;
	}
	enqueue(fw, d, p);
	if (d->held && d->held != p) {
		struct lanai_packet *h = d->held;

		d->held = NULL;
		lanai_count_injected(fw, BIP_LANAI_FAULT_REORDER);
		lanai_trace(fw, "send", s->node, &h->h,
			    "reordered (injected): after the next packet");
		enqueue(fw, d, h);
	}
}

/* --- receiving --- */

/* 1 if the packet seq of the link from src to b is still on the wire: it was
 * overtaken (reordered), not lost.  Every packet on its way to b is in b's
 * queue or held back there. */
static int still_on_wire(const struct lanai_board *b, uint32_t src, uint32_t seq)
{
	const struct lanai_packet *q;

	/* One-sided packets carry numbers of their own (rma.c). */
	for (q = b->in_head; q; q = q->next)
		if (q->h.src == src && q->h.seq == seq && !lanai_rma_kind(q->h.kind))
			return 1;
	return b->held && b->held->h.src == src && b->held->h.seq == seq &&
	       !lanai_rma_kind(b->held->h.kind);
}

int lanai_packet_header_check(const struct lanai_pkt_header *h, size_t payload_len, int nboards,
			      char *why, size_t whylen)
{
	int i;

	if (h->len != payload_len ||
	    h->len > (h->kind == LANAI_PKT_DGRAM	 ? LANAI_PAYLOAD_MAX
		      : lanai_rma_kind(h->kind) ? LANAI_RMA_PAYLOAD_MAX
						 : LANAI_DATA_CHUNK)) {
		snprintf(why, whylen, "payload of %u bytes, %zu on the wire (at most %d)", h->len,
			 payload_len, LANAI_PAYLOAD_MAX);
		return -EPROTO;
	}
	if (nboards < 1 || h->src >= (uint32_t)nboards || h->dst >= (uint32_t)nboards) {
		snprintf(why, whylen, "from node %u to node %u, of %d", h->src, h->dst, nboards);
		return -EPROTO;
	}
	if (h->kind < LANAI_PKT_SHORT || h->kind > LANAI_PKT_RMA_ANS) {
		snprintf(why, whylen, "kind %u", h->kind);
		return -EPROTO;
	}
	if (h->nhops < 1 || h->nhops > BIP_CONF_MAXHOPS) {
		snprintf(why, whylen, "route of %u hops", h->nhops);
		return -EPROTO;
	}
	for (i = 0; i < h->nhops; i++) {
		if (h->hop[i] > BIP_ROUTE_DIRECT || (h->hop[i] == BIP_ROUTE_DIRECT && h->nhops > 1)) {
			snprintf(why, whylen, "route hop %u", h->hop[i]);
			return -EPROTO;
		}
	}
	if (h->kind == LANAI_PKT_SHORT && h->len > BIP_LANAI_SHORT_MAX) {
		snprintf(why, whylen, "a short message of %u bytes", h->len);
		return -EPROTO;
	}
	return 0;
}

int lanai_wire_check(struct lanai_fw *fw, struct lanai_board *b, struct lanai_packet *p)
{
	const struct lanai_pkt_header *h = &p->h;
	uint32_t crc = packet_crc(p), expected;
	char why[128];

	if ((crc != h->crc || h->len > lanai_packet_bytes(p)) && lanai_rma_kind(h->kind)) {
		/* rma.c sends it again: counted, not reported. */
		lanai_trace(fw, "recv", b->node, h, "dropped: CRC32C mismatch");
		lanai_count_detected(fw, BIP_LANAI_DET_CRC);
		b->regs->detected[BIP_LANAI_DET_CRC]++;
		return -EBADMSG;
	}
	if (crc != h->crc || h->len > lanai_packet_bytes(p)) {
		lanai_trace(fw, "recv", b->node, h, "dropped: CRC32C mismatch");
		if (h->src < (uint32_t)fw->nactive)
			b->rx_failed[h->src] = 1;
		lanai_report(fw, b, BIP_LANAI_DET_CRC, h,
			     "corrupt packet: CRC32C mismatch (packet 0x%08x, computed 0x%08x) in "
			     "the %s packet from node %u on tag %u, sequence %u: dropped, not "
			     "delivered",
			     h->crc, crc, kind_name(h->kind), h->src, h->tag, h->seq);
		return -EBADMSG;
	}
	/* Every field is checked before it indexes anything. */
	if (lanai_packet_header_check(h, lanai_packet_bytes(p), fw->nactive, why, sizeof(why)) < 0) {
		lanai_trace(fw, "recv", b->node, h, "dropped: not a packet of this wire");
		if (lanai_rma_kind(h->kind)) {
			lanai_count_detected(fw, BIP_LANAI_DET_CRC);
			return -EBADMSG;
		}
		if (h->src < (uint32_t)fw->nactive)
			b->rx_failed[h->src] = 1;
		lanai_report(fw, b, BIP_LANAI_DET_CRC, h,
			     "malformed packet (%s) with a good CRC32C: dropped, not delivered", why);
		return -EBADMSG;
	}
	if (h->kind == LANAI_PKT_DGRAM || lanai_rma_kind(h->kind)) {
		/* Sequence, loss and order of datagrams are the host's, of
		 * one-sided packets rma.c's. */
		b->regs->pkts_received++;
		b->regs->bytes_received += h->len;
		lanai_trace(fw, "recv", b->node, h, "delivered");
		return 0;
	}
	if (b->rx_failed[h->src]) {
		lanai_trace(fw, "recv", b->node, h, "dropped: a fault was detected on this link");
		return -EIO;
	}
	expected = b->rx_seq[h->src];
	if (h->seq != expected) {
		b->rx_failed[h->src] = 1;
		if ((int32_t)(h->seq - expected) < 0) {
			lanai_trace(fw, "recv", b->node, h, "dropped: duplicate");
			lanai_report(fw, b, BIP_LANAI_DET_DUPLICATE, h,
				     "duplicate packet: the %s packet from node %u on tag %u has "
				     "sequence %u, already received (next expected %u): dropped, "
				     "not delivered",
				     kind_name(h->kind), h->src, h->tag, h->seq, expected);
		} else if (still_on_wire(b, h->src, expected)) {
			lanai_trace(fw, "recv", b->node, h, "dropped: reordered");
			lanai_report(fw, b, BIP_LANAI_DET_REORDER, h,
				     "reordered packets: the %s packet from node %u on tag %u has "
				     "sequence %u, but sequence %u comes after it: dropped, not "
				     "delivered; nothing more from node %u is delivered",
				     kind_name(h->kind), h->src, h->tag, h->seq, expected, h->src);
		} else {
			lanai_trace(fw, "recv", b->node, h, "dropped: sequence gap");
			lanai_report(fw, b, BIP_LANAI_DET_GAP, h,
				     "sequence gap: the %s packet from node %u on tag %u has "
				     "sequence %u where %u was expected: packet %u was lost; "
				     "nothing more from node %u is delivered",
				     kind_name(h->kind), h->src, h->tag, h->seq, expected, expected,
				     h->src);
		}
		return -EIO;
	}
	b->rx_seq[h->src] = expected + 1;
	b->regs->pkts_received++;
	b->regs->bytes_received += h->len;
	lanai_trace(fw, "recv", b->node, h, "delivered");
	return 0;
}
