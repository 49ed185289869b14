/* SPDX-License-Identifier: MIT */
/*
 * dma.c - the board's DMA engine: reading and writing the hosts' memory.
 *
 * Long messages move between the users' buffers, wherever they are, with
 * process_vm_readv and process_vm_writev.  A datagram's data (datagram
 * mode: a fragment of a user's buffer) is read at delivery from the
 * sending host straight into the receiving host's queue, one
 * process_vm_readv, as the packet only describes it (struct lanai_gather).
 * Short messages and the
 * announcements of long ones go into the host's per-tag queues, which lie
 * in its DMA window (a memfd the host creates and the firmware maps when
 * the board is attached): the firmware writes them with plain stores, with
 * the placement rule of lib/bip/core/tagq.h, and tells the host with an event.
 * What finds its queue full waits here, in order per source and tag, until
 * the host frees room; the source's packets for other tags pass it.  The
 * board tells its host when it starts keeping a source's packets for a tag
 * (BIP_LANAI_EV_HELD) and when it keeps none any more (RELEASED), so that
 * the host's core tells that source to hold the tag (nic.h, flow control;
 * bip_lanai(7), "Tag queues").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "firmware.h"

int lanai_dma_read(pid_t pid, void *dst, uint64_t addr, size_t len)
{
	struct iovec local = {dst, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int lanai_dma_write(pid_t pid, uint64_t addr, const void *src, size_t len)
{
	struct iovec local = {(void *)src, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

void lanai_board_error(struct lanai_board *b, int status, const char *fmt, ...)
{
	struct bip_lanai_event ev = {.kind = BIP_LANAI_EV_ERROR, .status = status,
				     .fault = BIP_LANAI_NDETECT};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf((char *)ev.payload, sizeof(ev.payload), fmt, ap);
	va_end(ap);
	lanai_event_put(b, &ev);
}

/* --- the host's DMA window and its tag queues --- */

void lanai_drop_window(struct lanai_board *b)
{
	if (b->qwin)
		munmap(b->qwin, b->qwin_size);
	b->qwin = NULL;
	b->ntags = 0;
}

/* Take the table of the queues in a window of size bytes mapped at p. */
int lanai_set_tagqs(struct lanai_board *b, void *p, uint64_t size,
		    const struct bip_lanai_tagq *t, uint32_t n)
{
	uint32_t i, least = 2 * bip_tagq_entry_size(b->mode == BIP_LANAI_MODE_DGRAM
							? LANAI_PAYLOAD_MAX
							: BIP_LANAI_SHORT_MAX);

	if (n > BIP_LANAI_TAGQ_SLOTS || (b->mode == BIP_LANAI_MODE_DGRAM && n != 1)) {
		lanai_board_error(b, -EPROTO,
				  "board %d: the host lists %u tag queues, the board has room "
				  "for %d (datagram mode: exactly 1)", b->node, n,
				  BIP_LANAI_TAGQ_SLOTS);
		return -EPROTO;
	}
	for (i = 0; i < n; i++) {
		if (t[i].cap % 4 || t[i].cap < least || t[i].cap > (1u << 31) ||
		    t[i].off > size || size - t[i].off < t[i].cap || t[i].off % 4 ||
		    !t[i].freed_addr) {
			lanai_board_error(b, -EPROTO,
					  "board %d: the queue of tag %u (%u bytes at offset %llu "
					  "of the window) is not one the firmware can write: it "
					  "needs a multiple of 4 bytes, at least %u, inside the "
					  "window of %llu bytes",
					  b->node, i, t[i].cap, (unsigned long long)t[i].off, least,
					  (unsigned long long)size);
			return -EPROTO;
		}
	}
	for (i = 0; i < n; i++)
		b->tq[i] = (struct lanai_tagq){.buf = (uint8_t *)p + t[i].off,
					       .freed_addr = t[i].freed_addr, .cap = t[i].cap};
	b->ntags = n;
	return 0;
}

void lanai_take_tagqs(struct lanai_board *b)
{
	const struct bip_lanai_tagq *t =
	    (const struct bip_lanai_tagq *)((const char *)b->regs + b->regs->off_tagq);
	uint64_t size = b->regs->qwin_size;
	char path[64];
	struct stat st;
	void *p;
	int fd;

	lanai_drop_window(b);
	/* The host's memfd, reached as any process allowed to trace it can. */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b->pid, (int)b->regs->qwin_fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < size || !size) {
		lanai_board_error(b, -EPROTO,
				  "board %d: cannot map the host's DMA window (%s, %llu bytes): "
				  "%s", b->node, path, (unsigned long long)size,
				  fd < 0 ? strerror(errno) : "too small");
		if (fd >= 0)
			close(fd);
		return;
	}
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		lanai_board_error(b, -EPROTO, "board %d: cannot map the host's DMA window: %s",
				  b->node, strerror(errno));
		return;
	}
	b->qwin = p;
	b->qwin_size = (size_t)size;
	if (lanai_set_tagqs(b, p, size, t, b->regs->ntags) < 0)
		lanai_drop_window(b);
}

/*
 * Write one entry into a tag queue: a wrap mark at the old tail first if
 * the entry goes back to offset 0, then the entry's head and payload.  The
 * host reads them once it has seen the event, published with release
 * after them.
 */
static void write_entry(struct lanai_tagq *q, int64_t at, int wrap,
			const struct bip_tagq_entry *e, const void *payload, uint32_t payload_len)
{
	if (wrap)
		((struct bip_tagq_entry *)(q->buf + q->prod.tail))->kind = BIP_TAGQ_WRAP;
	memcpy(q->buf + at, e, sizeof(*e));
	if (payload_len)
		memcpy(q->buf + at + sizeof(*e), payload, payload_len);
}

/*
 * The rest of a datagram's payload, which the packet only describes: one
 * process_vm_readv from the sending host's memory straight into the
 * receiving host's queue, the only copy the data makes in the firmware.
 * Only while the sending board still runs for that process (a pid is
 * never read once its process is known to be gone); a buffer that cannot
 * be read (gone already: a retransmission its host no longer needs) leaves
 * zeros, which the receiving host's CRC rejects or drops as a duplicate.
 */
static void gather(struct lanai_fw *fw, const struct lanai_packet *p, uint8_t *to)
{
	const struct lanai_board *s = &fw->boards[p->from];

	if (s->state != BIP_LANAI_BOARD_RUNNING || s->host_ended || s->pid != p->g.pid ||
	    lanai_dma_read(p->g.pid, to, p->g.addr, p->g.len) < 0)
		memset(to, 0, p->g.len);
}

int lanai_queue_arrival(struct lanai_fw *fw, struct lanai_board *b,
			const struct lanai_packet *p)
{
	const struct lanai_pkt_header *h = &p->h;
	struct bip_lanai_event ev = {.src = h->src, .tag = h->tag};
	struct bip_tagq_entry e = {.src = (int32_t)h->src};
	const void *payload;
	uint32_t payload_len;
	struct lanai_tagq *q;
	uint64_t handle;
	int64_t at;
	int wrap, rc;

	if (h->tag >= b->ntags) {
		lanai_board_error(b, -EPROTO,
				  "%s from node %u for tag %u dropped: board %d has no queue for "
				  "that tag", h->kind == LANAI_PKT_SHORT ? "message" : "long message",
				  h->src, h->tag, b->node);
		return -EPROTO;
	}
	if (!lanai_event_room(b))
		return -EAGAIN; /* the host could not be told: not now */
	q = &b->tq[h->tag];
	if (h->kind != LANAI_PKT_RTS) { /* SHORT, DGRAM */
		e.kind = BIP_TAGQ_SHORT;
		e.len = h->len;
		payload = p->payload;
		payload_len = h->len; /* p->cap carried, then p->g.len gathered */
		ev.kind = BIP_LANAI_EV_SHORT;
		ev.len = h->len;
	} else {
		handle = bip_lanai_handle(h->src, (uint32_t)h->arg0);
		e.kind = BIP_TAGQ_LONG;
		e.len = (uint32_t)h->arg1;
		payload = &handle;
		payload_len = sizeof(handle);
		ev.kind = BIP_LANAI_EV_LONG;
		ev.len = h->arg1;
		ev.handle = handle;
	}
	e.size = bip_tagq_entry_size(payload_len);
	at = bip_tagq_place(&q->prod, q->cap, q->freed_seen, e.size, &wrap);
	if (at < 0) {
		/* Looks full: read the host's count of freed bytes again (a
		 * 4-byte DMA read, made only now, as the rings do). */
		rc = lanai_dma_read(b->pid, &q->freed_seen, q->freed_addr, sizeof(q->freed_seen));
		if (rc < 0) {
			lanai_board_error(b, rc,
					  "board %d: cannot read the count of freed bytes of the "
					  "queue of tag %u from its host (DMA: %s)",
					  b->node, h->tag, strerror(-rc));
			return rc;
		}
		at = bip_tagq_place(&q->prod, q->cap, q->freed_seen, e.size, &wrap);
		if (at < 0)
			return -EAGAIN;
	}
	if (h->kind == LANAI_PKT_RTS) {
		write_entry(q, at, wrap, &e, payload, payload_len);
	} else {
		uint8_t *to = q->buf + at + sizeof(e);

		write_entry(q, at, wrap, &e, payload, p->cap);
		if (p->g.len)
			gather(fw, p, to + p->cap);
		if (p->bus_flip) /* the corrupt fault, on the bus into the host */
			to[(p->bus_flip - 1) / 8] ^= (uint8_t)(1u << ((p->bus_flip - 1) % 8));
	}
	bip_tagq_advance(&q->prod, q->cap, wrap, e.size);
	/* After the entry: the host reads it once it sees the event. */
	lanai_event_put(b, &ev);
	return 0;
}

/* --- arrivals waiting for room --- */

static int tag_bit(const uint64_t *bits, uint32_t tag)
{
	return (int)((bits[tag / 64] >> (tag % 64)) & 1);
}

int lanai_stalled_tag(const struct lanai_board *b, uint32_t src, uint32_t tag)
{
	return tag < LANAI_TAG_WORDS * 64 && tag_bit(b->stall[src].tags, tag);
}

/* Tell the host of each change of what it holds for src, while the event
 * queue has room (what is left is told at the next retry). */
static void tell_holds(struct lanai_board *b, struct lanai_stall *st, uint32_t src)
{
	uint32_t w;

	for (w = 0; w < LANAI_TAG_WORDS; w++) {
		while (st->tags[w] != st->told[w]) {
			uint64_t diff = st->tags[w] ^ st->told[w];
			uint32_t bit = (uint32_t)__builtin_ctzll(diff);
			int held = (int)((st->tags[w] >> bit) & 1);
			struct bip_lanai_event ev = {
				.kind = held ? BIP_LANAI_EV_HELD : BIP_LANAI_EV_RELEASED,
				.src = src,
				.tag = w * 64 + bit,
			};

			if (!lanai_event_room(b))
				return;
			lanai_event_put(b, &ev);
			st->told[w] ^= 1ull << bit;
		}
	}
}

void lanai_stall(struct lanai_fw *fw, struct lanai_board *b, struct lanai_packet *p)
{
	struct lanai_stall *st = &b->stall[p->h.src];
	uint32_t tag = p->h.tag;

	if (!tag_bit(st->tags, tag)) {
		lanai_trace(fw, "recv", b->node, &p->h, "waits: the queue of its tag is full");
		st->tags[tag / 64] |= 1ull << (tag % 64);
	}
	p->next = NULL;
	if (st->tail)
		st->tail->next = p;
	else
		st->head = p;
	st->tail = p;
	st->count++;
	b->nstalled++;
	tell_holds(b, st, p->h.src);
}

int lanai_retry_stalled(struct lanai_fw *fw, struct lanai_board *b)
{
	int src, n = 0, gone = b->state != BIP_LANAI_BOARD_RUNNING || b->releasing;

	for (src = 0; src < fw->nactive && b->nstalled; src++) {
		struct lanai_stall *st = &b->stall[src];
		struct lanai_packet **link = &st->head, *p, *last = NULL;
		uint64_t stuck[LANAI_TAG_WORDS] = { 0 };

		if (!st->head) {
			tell_holds(b, st, (uint32_t)src);
			continue;
		}
		/* Oldest first; once a packet of a tag finds no room, the later
		 * ones of that tag stay behind it, and the other tags go on. */
		while ((p = *link)) {
			uint32_t tag = p->h.tag;

			if (!gone && (tag_bit(stuck, tag) || !lanai_event_room(b) ||
				      lanai_queue_arrival(fw, b, p) == -EAGAIN)) {
				stuck[tag / 64] |= 1ull << (tag % 64);
				last = p;
				link = &p->next;
				continue;
			}
			if (gone)
				lanai_trace(fw, "recv", b->node, &p->h, "dropped: its host has ended");
			*link = p->next;
			st->count--;
			b->nstalled--;
			lanai_packet_drop(fw, p);
			n++;
		}
		st->tail = last;
		memcpy(st->tags, stuck, sizeof(stuck));
		if (!gone)
			tell_holds(b, st, (uint32_t)src);
	}
	if (b->nstalled)
		fw->blocked = 1; /* the host frees queue room without ringing */
	return n;
}
