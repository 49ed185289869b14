/* SPDX-License-Identifier: MIT */
/*
 * lanai_sim.c - lanai-sim, the firmware of the simulated LANai boards of
 * one host.
 *
 *   lanai-sim -j JOBID -n NODES [-u UNIVERSE [-g HOST]] [-f CONF] [-T TRACE]
 *             [-r FD] [-q]
 *
 * Creates the job's board segment (one board per node and rail: rail r's
 * boards make one network, struct lanai_fw, of their own), then serves the
 * boards whose hosts attach: it takes descriptors from their send rings,
 * puts packets on the simulated wire, delivers arriving packets as events,
 * and moves long messages itself between the processes' buffers
 * (process_vm_readv / process_vm_writev: the DMA engine).  It executes
 * one-sided operations on the memory the hosts expose without them
 * (rma.c).
 *
 * It polls while there is work and sleeps on the wake word of the segment
 * when idle (the hosts ring the doorbell only then).  A host that sleeps
 * (BIP_WAIT=block) is woken after the firmware published events for it
 * (wake_hosts).  It ends on SIGTERM,
 * when its parent ends (bipload), or once every board has been attached and
 * released (the job is over), and removes the segment as it goes.
 *
 * A job that may grow (bip_grow(3)) has room for UNIVERSE nodes: the
 * segment has boards for all of them, the nodes past NODES on HOST (node
 * 0's by default).  Only the job's first boards and the register pages of
 * the others take memory at start: a node that joins reserves the rest of
 * its boards itself before it attaches (lanai.c).  Each pass walks the
 * boards of the first nodes and of those that joined; the others are
 * looked at for an attach only after a doorbell, and every 50 ms.  The
 * segment keeps its name while boards may still be attached, and the job
 * is over once every board attached has been released.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind.h"
#include "crc32c.h"
#include "firmware.h"
#include "lanai.h"
#include "segment.h"
#include "topology.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: lanai-sim -j JOBID -n NODES [-u UNIVERSE [-g HOST]] [-f CONF] [-T TRACE]\n"
		"                 [-r FD] [-q]\n"
		"  (BIP_LANAI_RAILS: boards per node, when the configuration has one route "
		"per line)\n");
	exit(status);
}

static struct lanai_board *board(struct lanai_fw *fw, int node)
{
	return &fw->boards[node];
}

/* --- the segment --- */

/* Memory for the segment now, rather than a SIGBUS at the first write
 * when /dev/shm is full: for the boards of the job's first nodes, and the
 * register page of each board a node may attach later (written here). */
static int reserve(int fd, const struct lanai_fw *fw, int nrails, uint64_t off_boards,
		   uint64_t bsize, size_t size)
{
	int rail, i, rc;

	if (ftruncate(fd, (off_t)size) < 0)
		return -errno;
	rc = -posix_fallocate(fd, 0, (off_t)(off_boards + bsize * (uint64_t)fw->nknown));
	for (rail = 0; !rc && rail < nrails; rail++) {
		uint64_t first = off_boards + (uint64_t)rail * fw->nboards * bsize;

		if (rail)
			rc = -posix_fallocate(fd, (off_t)first, (off_t)(bsize * fw->nknown));
		for (i = fw->nknown; !rc && i < fw->nboards; i++)
			rc = -posix_fallocate(fd, (off_t)(first + (uint64_t)i * bsize),
					      BIP_LANAI_REGS_SIZE);
	}
	return rc;
}

/* The segment, for every rail: fws[0] holds its name and mapping. */
static int create_segment(struct lanai_fw *fws, int nrails, const char *jobid)
{
	struct lanai_fw *fw = &fws[0];
	uint64_t off_send, off_event, off_lrecv, off_post, off_tagq;
	uint64_t bsize =
	    bip_lanai_board_layout(&off_send, &off_event, &off_lrecv, &off_post, &off_tagq);
	uint64_t off_boards = (sizeof(struct bip_lanai_fw) + 4095) & ~(uint64_t)4095;
	size_t size = off_boards + bsize * (uint64_t)fw->nboards * (uint64_t)nrails;
	struct bip_lanai_fw *seg;
	char why[512];
	int fd, i, rc, rail;

	if (bip_lanai_segment_name(fw->name, sizeof(fw->name), jobid) < 0) {
		fprintf(stderr, "lanai-sim: job id %s too long\n", jobid);
		return -ENAMETOOLONG;
	}
	fd = bip_segment_open(fw->name, O_CREAT | O_EXCL | O_RDWR, NULL, why, sizeof(why));
	if (fd < 0) {
		if (fd == -EEXIST && !strstr(why, "belongs to") && !strstr(why, "symbolic link"))
			fprintf(stderr,
				"lanai-sim: /dev/shm%s exists: a firmware already serves "
				"job %s (or one was killed: remove it if no job uses it)\n",
				fw->name, jobid);
		else
			fprintf(stderr, "lanai-sim: %s\n", why);
		return fd;
	}
	fw->unlinked = 0;
	rc = reserve(fd, fw, nrails, off_boards, bsize, size);
	if (rc < 0) {
		fprintf(stderr, "lanai-sim: cannot reserve %zu KiB in /dev/shm: %s\n", size / 1024,
			strerror(-rc));
		close(fd);
		return rc;
	}
	seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (seg == MAP_FAILED) {
		rc = -errno;
		fprintf(stderr, "lanai-sim: cannot map /dev/shm%s: %s\n", fw->name, strerror(-rc));
		return rc;
	}
	fw->seg = seg;
	fw->seg_size = size;
	seg->magic = BIP_LANAI_MAGIC;
	seg->version = BIP_LANAI_VERSION;
	seg->nboards = (uint32_t)(fw->nboards * nrails);
	seg->nnodes = (uint32_t)fw->nboards;
	seg->nrails = (uint32_t)nrails;
	seg->pid = (int32_t)getpid();
	seg->size = size;
	seg->off_boards = off_boards;
	seg->board_size = bsize;
	/* The knobs of rail 0 (bip_lanai(7)); every rail's are in its summary. */
	for (i = 0; i < BIP_LANAI_NFAULTS; i++)
		seg->knob_ppm[i] = fw->faults.ppm[i];
	seg->delay_us = (uint32_t)fw->faults.delay_us;
	seg->linkdown_node =
	    fw->faults.linkdown_node < 0 ? 0xffffffffu : (uint32_t)fw->faults.linkdown_node;
	seg->linkdown_after = fw->faults.linkdown_after;
	seg->linkdown_in_time = (uint32_t)fw->faults.linkdown_in_time;
	seg->seed = fw->faults.seed;
	for (rail = 0; rail < nrails; rail++) {
		fws[rail].seg = seg;
		for (i = 0; i < fw->nboards; i++) {
			struct bip_lanai_regs *r =
			    (struct bip_lanai_regs *)((char *)seg + off_boards +
						      ((uint64_t)rail * fw->nboards + i) * bsize);
			struct lanai_board *b = board(&fws[rail], i);

			r->magic = BIP_LANAI_MAGIC;
			r->version = BIP_LANAI_VERSION;
			r->node = (uint32_t)i;
			r->rail = (uint32_t)rail;
			r->send_slots = BIP_LANAI_SEND_SLOTS;
			r->event_slots = BIP_LANAI_EVENT_SLOTS;
			r->lrecv_slots = BIP_LANAI_LRECV_SLOTS;
			r->slot_size = BIP_LANAI_SLOT_SIZE;
			r->short_max = BIP_LANAI_SHORT_MAX;
			r->off_send = off_send;
			r->off_event = off_event;
			r->off_lrecv = off_lrecv;
			r->off_post = off_post;
			r->off_tagq = off_tagq;
			r->tagq_slots = BIP_LANAI_TAGQ_SLOTS;
			r->fw_pid = (int32_t)getpid();
			r->state = BIP_LANAI_BOARD_READY;
			b->regs = r;
			b->send = (struct bip_lanai_desc *)((char *)r + off_send);
			b->events = (struct bip_lanai_event *)((char *)r + off_event);
			b->lrecv = (struct bip_lanai_lrecv *)((char *)r + off_lrecv);
			b->post = (struct bip_lanai_post *)((char *)r + off_post);
			b->state = BIP_LANAI_BOARD_READY;
		}
	}
	/* Pairs with the acquire of ready in the host driver. */
	bip_store_release(&seg->ready, 1);
	return 0;
}

/* The firmware's state of board i: for the first nodes at start, for a
 * node that joins when it attaches (look_for_attach). */
static int board_init(struct lanai_fw *fw, int i)
{
	struct lanai_board *b = board(fw, i);
	int k;

	b->tx_seq = calloc((size_t)fw->nboards, sizeof(*b->tx_seq));
	b->rx_seq = calloc((size_t)fw->nboards, sizeof(*b->rx_seq));
	b->rx_failed = calloc((size_t)fw->nboards, 1);
	b->link = calloc((size_t)fw->nboards, sizeof(*b->link));
	b->lsend = calloc(LANAI_LSENDS, sizeof(*b->lsend));
	b->lsfree = calloc(LANAI_LSENDS, sizeof(*b->lsfree));
	b->tq = calloc(BIP_LANAI_TAGQ_SLOTS, sizeof(*b->tq));
	b->stall = calloc((size_t)fw->nboards, sizeof(*b->stall));
	b->rgn = calloc(LANAI_RMA_REGIONS, sizeof(*b->rgn));
	b->rma = calloc((size_t)fw->nboards, sizeof(*b->rma));
	if (!b->tx_seq || !b->rx_seq || !b->rx_failed || !b->link || !b->lsend ||
	    !b->lsfree || !b->tq || !b->stall || !b->rgn || !b->rma)
		return -ENOMEM;
	for (k = LANAI_LSENDS; k-- > 0;)
		b->lsfree[b->nlsfree++] = (uint32_t)k;
	return 0;
}

static int boards_init(struct lanai_fw *fw)
{
	int i;

	fw->boards = calloc((size_t)fw->nboards, sizeof(*fw->boards));
	fw->route_ok = calloc((size_t)fw->nboards * fw->nboards, 1);
	fw->route_why = calloc((size_t)fw->nboards * fw->nboards, sizeof(char *));
	if (!fw->boards || !fw->route_ok || !fw->route_why)
		return -ENOMEM;
	for (i = 0; i < fw->nboards; i++) {
		board(fw, i)->node = i;
		board(fw, i)->xfers_tail = &board(fw, i)->xfers;
		board(fw, i)->rma_done_tail = &board(fw, i)->rma_done;
	}
	for (i = 0; i < fw->nknown; i++)
		if (board_init(fw, i) < 0)
			return -ENOMEM;
	return 0;
}

/* --- hosts --- */

static void set_state(struct lanai_board *b, uint32_t state)
{
	b->state = state;
	/* Pairs with the acquire of state in the host driver. */
	bip_store_release(&b->regs->state, state);
}

/* A host asks for its board: reset it and let it run. */
static int check_control(struct lanai_fw *fw, struct lanai_board *b)
{
	/* Pairs with the release of control in the host driver. */
	uint32_t ctl = bip_load_acquire(&b->regs->control);

	if (b->state == BIP_LANAI_BOARD_READY && ctl == BIP_LANAI_CTL_ATTACH) {
		b->pid = b->regs->host_pid;
		b->host_ended = 0;
		b->send_cons = b->post_cons = 0;
		b->evp.prod = b->evp.cons_seen = 0;
		b->mode = b->regs->mode == BIP_LANAI_MODE_DGRAM ? BIP_LANAI_MODE_DGRAM
								 : BIP_LANAI_MODE_MESSAGES;
		lanai_take_tagqs(b);
		lanai_rma_reset(b, fw->nboards);
		set_state(b, BIP_LANAI_BOARD_RUNNING);
		return 1;
	}
	if (b->state == BIP_LANAI_BOARD_RUNNING && ctl == BIP_LANAI_CTL_RELEASE && !b->releasing) {
		b->releasing = 1;
		return 1;
	}
	return 0;
}

static struct lanai_packet *control_packet(uint32_t kind, int src, int dst, uint32_t tag,
					   uint64_t arg0, uint64_t arg1)
{
	struct lanai_packet *p = lanai_packet_new(0);

	if (!p)
		return NULL;
	p->h.kind = (uint8_t)kind;
	p->h.src = (uint32_t)src;
	p->h.dst = (uint32_t)dst;
	p->h.tag = tag;
	p->h.arg0 = arg0;
	p->h.arg1 = arg1;
	return p;
}

static void send_control(struct lanai_fw *fw, uint32_t kind, int src, int dst, uint32_t tag,
			 uint64_t arg0, uint64_t arg1)
{
	struct lanai_packet *p = control_packet(kind, src, dst, tag, arg0, arg1);

	if (p)
		lanai_wire_send(fw, p);
}

/*
 * Push the data of board b's transfers while the receivers' queues have room.
 * The list is first come, first served: a transfer's data goes out only once
 * every earlier transfer to the same receiver has gone out, so the data of
 * one link lands in the order the receiver asked for it.  Receives posted on
 * one buffer (a window of receives, as benchmarks post) then end up holding
 * the last message, as over every other driver; pushing the newest transfer
 * first (as this once did, the list being a stack) landed the data of a batch
 * of CTSs last sent first and left the oldest message in such a buffer.
 */
static int pump_xfers(struct lanai_fw *fw, struct lanai_board *b)
{
	struct lanai_xfer **pp = &b->xfers, *x;
	int n = 0;

	while ((x = *pp)) {
		struct lanai_lsend *ls = &b->lsend[x->lsend & (LANAI_LSENDS - 1)];
		struct lanai_board *d = board(fw, (int)x->peer);

		while (x->off < ls->len && d->in_count < 8) {
			uint32_t chunk = ls->len - x->off < LANAI_DATA_CHUNK
					     ? (uint32_t)(ls->len - x->off)
					     : LANAI_DATA_CHUNK;
			struct lanai_packet *p = lanai_packet_new(chunk);
			int rc;

			if (!p)
				return n;
			rc = lanai_dma_read(b->pid, p->payload, ls->addr + x->off, chunk);
			if (rc < 0) {
				struct bip_lanai_event ev = {.kind = BIP_LANAI_EV_SEND_DONE,
							     .cookie = ls->cookie,
							     .status = rc};

				free(p);
				send_control(fw, LANAI_PKT_ABORT, b->node, (int)x->peer, ls->tag,
					     x->rindex, (uint64_t)-rc);
				lanai_event_put(b, &ev);
				ls->active = 0;
				b->lsfree[b->nlsfree++] = x->lsend & (LANAI_LSENDS - 1);
				x->off = ls->len;
				break;
			}
			p->h.kind = LANAI_PKT_DATA;
			p->h.src = (uint32_t)b->node;
			p->h.dst = x->peer;
			p->h.tag = ls->tag;
			p->h.arg0 = x->rindex;
			p->h.arg1 = x->off;
			x->off += chunk;
			lanai_wire_send(fw, p);
			n++;
		}
		if (x->off >= ls->len) {
			*pp = x->next;
			if (!*pp)
				b->xfers_tail = pp;
			free(x);
		} else {
			pp = &x->next;
		}
	}
	return n;
}

/* Take what board b's host posted: send descriptors and long receives. */
static int take_descriptors(struct lanai_fw *fw, struct lanai_board *b)
{
	uint32_t start = b->send_cons, pstart = b->post_cons;
	int n = 0;

	for (;;) {
		struct bip_lanai_desc *d =
		    bip_lanai_slot(b->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), b->send_cons);
		struct lanai_packet *p;

		if (!bip_lanai_ring_ready(&d->seq, b->send_cons))
			break;
		if (d->kind == BIP_LANAI_DESC_RMA) {
			/* To any node, this one too; rma.c checks it all. */
			if (lanai_rma_take(fw, b, d) < 0)
				break;
			b->send_cons++;
			n++;
			continue;
		}
		if (d->dst >= (uint32_t)fw->nactive || d->dst == (uint32_t)b->node ||
		    (d->kind == BIP_LANAI_DESC_SHORT && d->len > BIP_LANAI_SHORT_MAX) ||
		    (d->kind == BIP_LANAI_DESC_DGRAM &&
		     (b->mode != BIP_LANAI_MODE_DGRAM || d->tag > BIP_LANAI_INLINE_MAX ||
		      d->len > LANAI_DATA_CHUNK))) {
			b->send_cons++; /* not from the driver: ignored */
			continue;
		}
		if (board(fw, (int)d->dst)->in_count >= LANAI_INBOUND_MAX ||
		    board(fw, (int)d->dst)->stall[b->node].count >= LANAI_STALL_MAX)
			break; /* the destination is behind: the host waits */
		if (d->kind == BIP_LANAI_DESC_SHORT) {
			p = lanai_packet_new((uint32_t)d->len);
			if (!p)
				break;
			p->h.kind = LANAI_PKT_SHORT;
			memcpy(p->payload, d->payload, d->len);
		} else if (d->kind == BIP_LANAI_DESC_DGRAM) {
			uint32_t inl = d->tag;

			p = lanai_packet_new(inl);
			if (!p)
				break;
			p->h.kind = LANAI_PKT_DGRAM;
			memcpy(p->payload, d->payload, inl);
			/* The rest stays in the host's memory: the packet
			 * carries its descriptor, and the receiving board
			 * reads it at delivery (struct lanai_gather). */
			p->g = (struct lanai_gather){.addr = d->addr, .len = (uint32_t)d->len,
						     .pid = (int32_t)b->pid};
			p->h.len = inl + (uint32_t)d->len;
			p->h.src = (uint32_t)b->node;
			p->h.dst = d->dst;
			p->h.tag = 0;
			b->send_cons++;
			lanai_wire_send(fw, p);
			n++;
			continue;
		} else {
			struct lanai_lsend *ls;
			uint32_t slot;

			if (!b->nlsfree)
				break;
			p = lanai_packet_new(0);
			if (!p)
				break;
			slot = b->lsfree[--b->nlsfree];
			ls = &b->lsend[slot];
			ls->gen = (ls->gen + 1) & 0xfffff;
			ls->addr = d->addr;
			ls->len = d->len;
			ls->cookie = d->cookie;
			ls->dst = d->dst;
			ls->tag = d->tag;
			ls->active = 1;
			p->h.kind = LANAI_PKT_RTS;
			p->h.arg0 = (uint64_t)(ls->gen << 12 | slot);
			p->h.arg1 = d->len;
		}
		p->h.src = (uint32_t)b->node;
		p->h.dst = d->dst;
		p->h.tag = d->tag;
		b->send_cons++;
		lanai_wire_send(fw, p);
		n++;
	}
	if (b->send_cons != start)
		bip_lanai_ring_release(&b->regs->send_cons, b->send_cons);

	for (;;) {
		struct bip_lanai_post *po =
		    bip_lanai_slot(b->post, BIP_LANAI_LRECV_SLOTS, sizeof(*po), b->post_cons);
		struct lanai_lrecv_fw *lr;
		uint32_t idx, src;

		if (!bip_lanai_ring_ready(&po->seq, b->post_cons))
			break;
		b->post_cons++;
		idx = po->index;
		if (idx >= BIP_LANAI_LRECV_SLOTS)
			continue;
		lr = &b->lr[idx];
		lr->e = b->lrecv[idx];
		lr->got = 0;
		lr->active = 1;
		src = (uint32_t)(lr->e.handle >> 32);
		if (src >= (uint32_t)fw->nactive) {
			struct bip_lanai_event ev = {.kind = BIP_LANAI_EV_RECV_DONE,
						     .cookie = lr->e.cookie,
						     .handle = idx,
						     .status = -EPROTO};

			lr->active = 0;
			lanai_event_put(b, &ev);
			continue;
		}
		send_control(fw, LANAI_PKT_CTS, b->node, (int)src, 0, (uint32_t)lr->e.handle, idx);
		n++;
	}
	if (b->post_cons != pstart)
		bip_lanai_ring_release(&b->regs->post_cons, b->post_cons);
	return n;
}

/*
 * Act on a packet that passed the checks at board b.  0, or -EAGAIN when
 * its tag's queue has no room: the caller keeps it for later.
 */
static int deliver(struct lanai_fw *fw, struct lanai_board *b, struct lanai_packet *p)
{
	const struct lanai_pkt_header *h = &p->h;
	struct bip_lanai_event ev = {.src = h->src, .tag = h->tag};

	switch (h->kind) {
	case LANAI_PKT_DGRAM:
		if (b->mode != BIP_LANAI_MODE_DGRAM)
			break; /* not from a board of this job's mode: dropped */
		/* The corrupt fault on the bus strikes as it is written into
		 * the host's queue (lanai_queue_arrival). */
		/* fall through */
	case LANAI_PKT_SHORT:
	case LANAI_PKT_RTS:
		if (lanai_queue_arrival(fw, b, p) == -EAGAIN)
			return -EAGAIN;
		break;
	case LANAI_PKT_CTS: {
		uint32_t slot = (uint32_t)h->arg0 & (LANAI_LSENDS - 1);
		struct lanai_lsend *ls = &b->lsend[slot];
		struct lanai_xfer *x;

		if (!ls->active || ls->dst != h->src || (ls->gen << 12 | slot) != h->arg0)
			break;
		x = calloc(1, sizeof(*x));
		if (!x)
			break;
		x->lsend = (uint32_t)h->arg0;
		x->peer = h->src;
		x->rindex = h->arg1;
		/* At the tail: pump_xfers serves transfers in CTS order. */
		*b->xfers_tail = x;
		b->xfers_tail = &x->next;
		break;
	}
	case LANAI_PKT_DATA:
	case LANAI_PKT_ABORT: {
		struct lanai_lrecv_fw *lr = &b->lr[h->arg0 & (BIP_LANAI_LRECV_SLOTS - 1)];
		int rc = 0;

		if (h->arg0 >= BIP_LANAI_LRECV_SLOTS || !lr->active ||
		    (uint32_t)(lr->e.handle >> 32) != h->src)
			break;
		if (h->kind == LANAI_PKT_ABORT) {
			rc = -(int)h->arg1;
		} else if (h->arg1 + h->len > lr->e.len) {
			rc = -EPROTO;
		} else {
			rc = lanai_dma_write(b->pid, lr->e.addr + h->arg1, p->payload, h->len);
			lr->got += h->len;
		}
		if (rc == 0 && lr->got < lr->e.len)
			break;
		ev.kind = BIP_LANAI_EV_RECV_DONE;
		ev.cookie = lr->e.cookie;
		ev.handle = h->arg0;
		ev.status = rc;
		lr->active = 0;
		lanai_event_put(b, &ev);
		if (h->kind == LANAI_PKT_DATA)
			send_control(fw, LANAI_PKT_ACK, b->node, (int)h->src, h->tag,
				     (uint32_t)lr->e.handle, 0);
		break;
	}
	case LANAI_PKT_SYNC:
		/* Every packet of the link before it has passed the checks. */
		send_control(fw, LANAI_PKT_SYNC_ACK, b->node, (int)h->src, 0, h->seq, 0);
		break;
	case LANAI_PKT_SYNC_ACK:
		lanai_sync_acked(fw, b, h->src, (uint32_t)h->arg0);
		break;
	case LANAI_PKT_RMA_REQ:
	case LANAI_PKT_RMA_ANS:
		lanai_rma_arrived(fw, b, p);
		break;
	case LANAI_PKT_ACK: {
		uint32_t slot = (uint32_t)h->arg0 & (LANAI_LSENDS - 1);
		struct lanai_lsend *ls = &b->lsend[slot];

		if (!ls->active || (ls->gen << 12 | slot) != h->arg0)
			break;
		ev.kind = BIP_LANAI_EV_SEND_DONE;
		ev.cookie = ls->cookie;
		ls->active = 0;
		b->lsfree[b->nlsfree++] = slot;
		lanai_event_put(b, &ev);
		break;
	}
	}
	return 0;
}

/*
 * Board b's host has no room for events: the one-sided requests in its
 * inbound queue, which tell it nothing, pass the packets that wait for it,
 * so that a host that does not read its events (computing, or asleep)
 * still serves them.  Their order among themselves is kept.
 */
static int serve_requests(struct lanai_fw *fw, struct lanai_board *b, uint64_t now)
{
	struct lanai_packet **pp = &b->in_head, *p, *last = NULL;
	int n = 0;

	while ((p = *pp)) {
		if (p->h.kind != LANAI_PKT_RMA_REQ || p->deliver_at > now) {
			last = p;
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		b->in_count--;
		if (lanai_wire_check(fw, b, p) == 0)
			lanai_rma_arrived(fw, b, p);
		lanai_packet_drop(fw, p);
		n++;
	}
	b->in_tail = last;
	return n;
}

/* Deliver the packets that have reached board b. */
static int deliver_inbound(struct lanai_fw *fw, struct lanai_board *b, uint64_t now)
{
	struct lanai_packet *p;
	int n = 0;

	if (b->has_pending_err && lanai_event_room(b) && lanai_event_put(b, &b->pending_err) == 0)
		b->has_pending_err = 0;
	if (b->nstalled)
		n += lanai_retry_stalled(fw, b);
	while ((p = b->in_head)) {
		if (p->deliver_at > now) {
			if (!fw->next_due || p->deliver_at < fw->next_due)
				fw->next_due = p->deliver_at;
			break;
		}
		if (b->state == BIP_LANAI_BOARD_RUNNING && !lanai_event_room(b)) {
			fw->blocked = 1;
			if (!b->releasing)
				n += serve_requests(fw, b, now);
			break;
		}
		b->in_head = p->next;
		if (!b->in_head)
			b->in_tail = NULL;
		b->in_count--;
		n++;
		if (b->state == BIP_LANAI_BOARD_RUNNING && b->releasing &&
		    p->h.kind == LANAI_PKT_SYNC_ACK && lanai_packet_crc_ok(p)) {
			/* Its host has ended, but the board still waits for its
			 * links to be confirmed before it is released.  Only the
			 * CRC is checked: an answer duplicated or overtaken
			 * confirms nothing new, and a lost one brings another
			 * SYNC. */
			lanai_trace(fw, "recv", b->node, &p->h,
				    "confirms the link (its host has ended)");
			lanai_sync_acked(fw, b, p->h.src, (uint32_t)p->h.arg0);
		} else if (b->state != BIP_LANAI_BOARD_RUNNING || b->releasing) {
			lanai_trace(fw, "recv", b->node, &p->h, "dropped: its host has ended");
		} else if (lanai_wire_check(fw, b, p) == 0) {
			/* Checked in arrival order; behind what its source has
			 * waiting for that tag, or when its queue is full, it
			 * waits too; the source's other tags pass. */
			if (lanai_queued_kind(p) &&
			    (lanai_stalled_tag(b, p->h.src, p->h.tag) ||
			     deliver(fw, b, p) == -EAGAIN)) {
				lanai_stall(fw, b, p);
				continue;
			}
			if (!lanai_queued_kind(p))
				deliver(fw, b, p);
		}
		lanai_packet_drop(fw, p);
	}
	if (b->held && now >= b->held_since + 10000) {
		/* Nothing came to pass it: it goes on, in order after all. */
		struct lanai_packet *h = b->held;

		b->held = NULL;
		h->next = NULL;
		if (b->in_tail)
			b->in_tail->next = h;
		else
			b->in_head = h;
		b->in_tail = h;
		b->in_count++;
		n++;
	} else if (b->held && (!fw->next_due || b->held_since + 10000 < fw->next_due)) {
		fw->next_due = b->held_since + 10000;
	}
	return n;
}

/* A board whose host is gone: released once all it sent has been delivered
 * and every link it sent on is confirmed (or its receiver has ended too). */
static void check_release(struct lanai_fw *fw, struct lanai_board *b)
{
	struct bip_lanai_desc *d =
	    bip_lanai_slot(b->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), b->send_cons);

	if (!b->releasing || b->state != BIP_LANAI_BOARD_RUNNING || b->inflight || b->npending ||
	    bip_lanai_ring_ready(&d->seq, b->send_cons))
		return;
	set_state(b, BIP_LANAI_BOARD_DEAD);
	lanai_drop_window(b);
	lanai_rma_reset(b, fw->nboards);
	while (b->xfers) {
		struct lanai_xfer *x = b->xfers;

		b->xfers = x->next;
		free(x);
	}
	b->xfers_tail = &b->xfers;
}

/* One pass over every board; returns how much was done. */
static int service(struct lanai_fw *fw, int check_hosts)
{
	uint64_t now = lanai_now_us();
	int i, n = 0;

	fw->blocked = 0;
	fw->next_due = 0;
	for (i = 0; i < fw->nactive; i++) {
		struct lanai_board *b = board(fw, i);

		if (b->state == BIP_LANAI_BOARD_READY || b->state == BIP_LANAI_BOARD_RUNNING)
			n += check_control(fw, b);
		if (b->state != BIP_LANAI_BOARD_RUNNING)
			continue;
		if (check_hosts && !b->host_ended && !bip_process_runs((int)b->pid))
			b->releasing = b->host_ended = 1;
		n += take_descriptors(fw, b);
		if (b->xfers)
			n += pump_xfers(fw, b);
		if (b->rma_busy || b->rma_done)
			n += lanai_rma_pump(fw, b, now);
		/* After the packets of this pass: they keep their links busy. */
		if (b->npending)
			n += lanai_sync_links(fw, b, now);
	}
	for (i = 0; i < fw->nactive; i++) {
		struct lanai_board *b = board(fw, i);

		if (b->in_head || b->held || b->has_pending_err || b->nstalled)
			n += deliver_inbound(fw, b, now);
		if (b->releasing)
			check_release(fw, b);
	}
	return n;
}

/* A board of a node that may join (past nknown) whose host asks to
 * attach: walked at each pass from now on.  Returns 1 if one did. */
static int look_for_attach(struct lanai_fw *fw)
{
	int i, found = 0;

	for (i = fw->nactive; i < fw->nboards; i++)
		/* Pairs with the release of control in the host driver. */
		if (bip_load_acquire(&board(fw, i)->regs->control) == BIP_LANAI_CTL_ATTACH)
			found = i + 1;
	for (i = fw->nactive; i < found; i++)
		if (board_init(fw, i) < 0) {
			/* Its host times out waiting: it says so. */
			fprintf(stderr, "lanai-sim: out of memory for board %d\n", i);
			found = i;
			break;
		}
	if (found > fw->nactive)
		fw->nactive = found;
	return found > 0;
}

/* 1 once every board of the first nodes has been attached, and every
 * board attached has been released: the job is over.  (A board of a node
 * that may join and has not is not waited for.) */
static int all_released(struct lanai_fw *fw)
{
	int i;

	for (i = 0; i < fw->nactive; i++) {
		uint32_t state = board(fw, i)->state;

		if (state != BIP_LANAI_BOARD_DEAD &&
		    (state != BIP_LANAI_BOARD_READY || i < fw->nknown))
			return 0;
	}
	return 1;
}

/* 1 once every board has been attached. */
static int all_attached(struct lanai_fw *fw)
{
	int i;

	for (i = 0; i < fw->nboards; i++)
		if (board(fw, i)->state == BIP_LANAI_BOARD_READY)
			return 0;
	return 1;
}

/* 1 if a host has posted something the firmware has not taken. */
static int work_posted(struct lanai_fw *fw)
{
	int i;

	for (i = 0; i < fw->nboards; i++) {
		struct lanai_board *b = board(fw, i);
		struct bip_lanai_desc *d;
		struct bip_lanai_post *po;

		if (bip_load_acquire(&b->regs->control) != BIP_LANAI_CTL_NONE &&
		    b->state == BIP_LANAI_BOARD_READY)
			return 1;
		if (b->state != BIP_LANAI_BOARD_RUNNING)
			continue;
		if (bip_load_acquire(&b->regs->control) == BIP_LANAI_CTL_RELEASE && !b->releasing)
			return 1;
		d = bip_lanai_slot(b->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), b->send_cons);
		po = bip_lanai_slot(b->post, BIP_LANAI_LRECV_SLOTS, sizeof(*po), b->post_cons);
		if (bip_lanai_ring_ready(&d->seq, b->send_cons) ||
		    bip_lanai_ring_ready(&po->seq, b->post_cons))
			return 1;
	}
	return 0;
}

static void set_need_doorbell(struct lanai_fw *fw, uint32_t v)
{
	int i;

	for (i = 0; i < fw->nactive; i++)
		bip_store_relaxed(&board(fw, i)->regs->need_doorbell, v);
}

/* Sleep until a doorbell, a delayed packet is due, or a host check is due. */
static void sleep_idle(struct lanai_fw *fws, int nrails)
{
	uint32_t w = bip_load_acquire(&fws[0].seg->wake);
	uint64_t timeout = 100000, now, due = 0;
	struct timespec ts;
	int r, posted = 0, blocked = 0;

	for (r = 0; r < nrails; r++)
		set_need_doorbell(&fws[r], 1);
	/* Orders need_doorbell before the last look at the rings; pairs with
	 * the host's fence between publishing a slot and reading need_doorbell. */
	bip_fence();
	for (r = 0; r < nrails; r++) {
		posted |= work_posted(&fws[r]);
		blocked |= fws[r].blocked;
		if (fws[r].next_due && (!due || fws[r].next_due < due))
			due = fws[r].next_due;
	}
	if (!posted && !stop_signal) {
		now = lanai_now_us();
		if (blocked)
			timeout = 1000; /* a host frees event slots without ringing */
		if (due)
			timeout = due > now ? (due - now < timeout ? due - now : timeout) : 0;
		if (timeout) {
			ts.tv_sec = (time_t)(timeout / 1000000u);
			ts.tv_nsec = (long)(timeout % 1000000u) * 1000;
			fws[0].seg->sleeps++;
			syscall(SYS_futex, &fws[0].seg->wake, FUTEX_WAIT, w, &ts, NULL, 0);
		}
	}
	for (r = 0; r < nrails; r++)
		set_need_doorbell(&fws[r], 0);
}

/*
 * The hosts' sleep: the NEED_DOORBELL rule the other way round.  Each
 * thread of a host that sleeps adds 1 to host_sleeps in its node's board
 * of rail 0, fences, looks at its event queues once more, sleeps on
 * host_wake, and takes its 1 off when it wakes.  After a pass that
 * published events, the firmware fences (the events' publication before
 * the read of host_sleeps; pairs with the host's fence) and wakes each
 * node that had events and has sleepers: host_wake + 1 (so that a thread
 * that has not yet gone to sleep does not), then FUTEX_WAKE of every
 * thread waiting (several threads of one host may sleep at once).
 * host_sleeps is the host's word: only whether it is 0 counts, and it is
 * never written here (the host's threads count on it).
 */
static void wake_hosts(struct lanai_fw *fws, int nrails)
{
	int i, r, any = 0, nactive = 0;

	for (r = 0; r < nrails; r++) {
		for (i = 0; i < fws[r].nactive; i++)
			any |= board(&fws[r], i)->notify;
		if (fws[r].nactive > nactive)
			nactive = fws[r].nactive;
	}
	if (!any)
		return;
	bip_fence();
	for (i = 0; i < nactive; i++) {
		struct bip_lanai_regs *regs = board(&fws[0], i)->regs;
		int notify = 0;

		for (r = 0; r < nrails; r++) {
			notify |= board(&fws[r], i)->notify;
			board(&fws[r], i)->notify = 0;
		}
		if (!notify || !bip_load_relaxed(&regs->host_sleeps))
			continue;
		__atomic_fetch_add(&regs->host_wake, 1, __ATOMIC_SEQ_CST);
		bip_store_relaxed(&regs->host_wakes, bip_load_relaxed(&regs->host_wakes) + 1);
		syscall(SYS_futex, &regs->host_wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

/*
 * Idle policy: for LANAI_SLEEP_US after the last work (a ping-pong's next
 * message comes soon) look again at once, then sleep.  While spinning, the
 * firmware spins only if it has a processor to itself; otherwise it yields at
 * each pass, since the host it waits for may need that very processor.
 */
#define LANAI_SLEEP_US 2000

static void run(struct lanai_fw *fws, int nrails)
{
	uint64_t last_check = 0, last_work = lanai_now_us();
	/* The hosts and the firmware each want a processor (counted as the
	 * hosts count them, bind.h). */
	int spin = bip_host_cpus(NULL) > fws[0].nknown + 1;
	uint32_t rung = bip_load_acquire(&fws[0].seg->wake);

	while (!stop_signal) {
		uint64_t now = lanai_now_us();
		int check = now - last_check > 50000, work = 0, released = 1, attached = 1, r;
		uint32_t wake = bip_load_acquire(&fws[0].seg->wake);

		if (check)
			last_check = now;
		/* A host attaches its board with a doorbell. */
		for (r = 0; r < nrails && (check || wake != rung); r++)
			if (fws[r].nactive < fws[r].nboards)
				work += look_for_attach(&fws[r]);
		rung = wake;
		for (r = 0; r < nrails; r++)
			work += service(&fws[r], check);
		wake_hosts(fws, nrails);
		if (work) {
			last_work = now;
			continue;
		}
		for (r = 0; r < nrails; r++) {
			released &= all_released(&fws[r]);
			attached &= all_attached(&fws[r]);
		}
		if (released)
			break;
		if (!fws[0].unlinked && attached) {
			/* Every host has mapped the segment: its name is no longer
			 * needed, and nothing is left in /dev/shm even after kill -9. */
			shm_unlink(fws[0].name);
			fws[0].unlinked = 1;
		}
		if (now - last_work < LANAI_SLEEP_US) {
			if (spin)
				bip_cpu_relax();
			else
				sched_yield();
		} else {
			sleep_idle(fws, nrails);
			last_work = lanai_now_us();
		}
	}
}

static void print_counts(const char *rail, uint64_t packets, const uint64_t *inj,
			 const uint64_t *det)
{
	fprintf(stderr,
		"lanai-sim: %s%llu packets; injected: loss %llu, corrupt %llu, duplicate %llu, "
		"delay %llu, reorder %llu, link-down %llu; detected: crc %llu, duplicate %llu, "
		"gap %llu, reorder %llu, wrong-route %llu, link-down %llu\n",
		rail, (unsigned long long)packets,
		(unsigned long long)inj[BIP_LANAI_FAULT_LOSS],
		(unsigned long long)inj[BIP_LANAI_FAULT_CORRUPT],
		(unsigned long long)inj[BIP_LANAI_FAULT_DUPLICATE],
		(unsigned long long)inj[BIP_LANAI_FAULT_DELAY],
		(unsigned long long)inj[BIP_LANAI_FAULT_REORDER],
		(unsigned long long)inj[BIP_LANAI_FAULT_LINKDOWN],
		(unsigned long long)det[BIP_LANAI_DET_CRC],
		(unsigned long long)det[BIP_LANAI_DET_DUPLICATE],
		(unsigned long long)det[BIP_LANAI_DET_GAP],
		(unsigned long long)det[BIP_LANAI_DET_REORDER],
		(unsigned long long)det[BIP_LANAI_DET_ROUTE],
		(unsigned long long)det[BIP_LANAI_DET_LINKDOWN]);
}

/* The wire's counters: the sums, then each rail's when there are several. */
static void summary(struct lanai_fw *fws, int nrails, int quiet)
{
	const struct bip_lanai_fw *s = fws[0].seg;
	uint64_t any = 0;
	int i, r;

	for (i = 0; i < BIP_LANAI_NFAULTS; i++)
		any |= s->injected[i];
	for (i = 0; i < BIP_LANAI_NDETECT; i++)
		any |= s->detected[i];
	for (r = 0; r < nrails; r++) {
		for (i = 0; i < BIP_LANAI_NFAULTS; i++)
			any |= fws[r].faults.ppm[i];
		any |= fws[r].faults.linkdown_node >= 0 || fws[r].faults.delay_us;
	}
	if (quiet && !any)
		return;
	if (!quiet) {
		uint64_t rung = 0;
		int used = 0;
		char room[64] = "";

		for (r = 0; r < nrails; r++) {
			for (i = 0; i < fws[r].nactive; i++)
				rung += fws[r].boards[i].regs->doorbells;
			used += fws[r].nactive;
		}
		if (fws[0].nboards > fws[0].nknown)
			snprintf(room, sizeof(room), " (of %d: room for nodes that join)",
				 fws[0].nboards * nrails);
		fprintf(stderr, "lanai-sim: %d boards%s, slept %llu times, %llu doorbells rung\n",
			used, room, (unsigned long long)s->sleeps, (unsigned long long)rung);
	}
	print_counts("", s->packets, s->injected, s->detected);
	/* One-sided operations use rail 0 only. */
	if (fws[0].rma_requests)
		fprintf(stderr,
			"lanai-sim: one-sided: %llu requests, %llu sent again, %llu answered "
			"again, %llu dropped as early\n",
			(unsigned long long)fws[0].rma_requests,
			(unsigned long long)fws[0].rma_resent,
			(unsigned long long)fws[0].rma_replayed,
			(unsigned long long)fws[0].rma_early);
	for (r = 0; nrails > 1 && r < nrails; r++) {
		char name[32];

		snprintf(name, sizeof(name), "rail %d: ", r);
		print_counts(name, fws[r].packets, fws[r].injected, fws[r].detected);
	}
}

/* The configuration the processes will read: -f, $BIPCONF, ~/.bip/bipconf,
 * else n nodes on this host. */
static struct bip_conf *load_conf(const char *file, int n, int nrails)
{
	char path[4096], err[512];
	struct bip_conf *conf = NULL;
	int rc;

	if (!file && bip_conf_default_path(path, sizeof(path)) == 0 &&
	    (getenv(BIP_ENV_CONF) || access(path, F_OK) == 0))
		file = path;
	if (file) {
		rc = bip_conf_parse_file(file, &conf, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "lanai-sim: %s\n", err);
			return NULL;
		}
		if (n > conf->n) {
			fprintf(stderr, "lanai-sim: -n %d: the configuration %s has %d nodes\n", n,
				file, conf->n);
			bip_conf_free(conf);
			return NULL;
		}
		if (nrails && nrails != conf->nrails) {
			fprintf(stderr,
				"lanai-sim: BIP_LANAI_RAILS=%d, but the configuration %s has %d "
				"route%s per line (one per rail)\n",
				nrails, file, conf->nrails, conf->nrails == 1 ? "" : "s");
			bip_conf_free(conf);
			return NULL;
		}
		bip_conf_truncate(conf, n);
		return conf;
	}
	rc = bip_conf_local_rails(n, nrails ? nrails : 1, &conf);
	if (rc < 0) {
		fprintf(stderr, "lanai-sim: cannot describe this host: %s\n", strerror(-rc));
		return NULL;
	}
	return conf;
}

/* BIP_LANAI_RAILS: boards per node; 0 when not set (the configuration says). */
static int rails_from_env(void)
{
	const char *s = getenv("BIP_LANAI_RAILS");
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || v < 1 || v > BIP_CONF_MAXRAILS) {
		fprintf(stderr, "lanai-sim: BIP_LANAI_RAILS=%s: expected 1 to %d boards per node\n",
			s, BIP_CONF_MAXRAILS);
		return -1;
	}
	return (int)v;
}

static void rail_free(struct lanai_fw *fw)
{
	int i, k;

	for (i = 0; fw->boards && i < fw->nboards; i++) {
		struct lanai_board *b = board(fw, i);
		struct lanai_packet *p, *next;

		for (p = b->in_head; p; p = next) {
			next = p->next;
			free(p);
		}
		free(b->held);
		for (k = 0; b->stall && k < fw->nboards; k++) {
			for (p = b->stall[k].head; p; p = next) {
				next = p->next;
				free(p);
			}
		}
		free(b->stall);
		free(b->tq);
		lanai_rma_reset(b, fw->nboards);
		free(b->rma);
		free(b->rgn);
		lanai_drop_window(b);
		while (b->xfers) {
			struct lanai_xfer *x = b->xfers;

			b->xfers = x->next;
			free(x);
		}
		free(b->tx_seq);
		free(b->rx_seq);
		free(b->rx_failed);
		free(b->link);
		free(b->lsend);
		free(b->lsfree);
	}
	for (i = 0; fw->route_why && i < fw->nboards * fw->nboards; i++)
		free(fw->route_why[i]);
	free(fw->route_why);
	free(fw->route_ok);
	free(fw->boards);
}

/* Rail r's knobs, checked against the job's nodes. */
static int rail_faults(struct lanai_fw *fw, int n)
{
	char err[512];

	if (lanai_faults_from_env(&fw->faults, fw->rail, fw->nrails, err, sizeof(err)) < 0) {
		fprintf(stderr, "lanai-sim: %s\n", err);
		return -EINVAL;
	}
	if (fw->faults.drop_kind && (fw->faults.drop_src >= (uint32_t)n ||
				     fw->faults.drop_dst >= (uint32_t)n)) {
		fprintf(stderr, "lanai-sim: BIP_LANAI_DROP%s: node %u or %u is not one of the %d "
			"nodes\n", fw->nrails > 1 ? " (or its rail's)" : "", fw->faults.drop_src,
			fw->faults.drop_dst, n);
		return -EINVAL;
	}
	if (fw->faults.linkdown_node >= n) {
		fprintf(stderr,
			"lanai-sim: BIP_LANAI_LINK_DOWN%s: node %d is not one of the %d nodes\n",
			fw->nrails > 1 ? " (or its rail's)" : "", fw->faults.linkdown_node, n);
		return -EINVAL;
	}
	/* Rail 0 draws as a single rail always did; the others differ. */
	fw->rng = fw->faults.seed + (uint64_t)fw->rail * 0x5241494cull; /* "RAIL" */
	fw->rng_sync = fw->rng ^ 0x53594e43u; /* "SYNC" */
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	struct lanai_fw *fws = NULL;
	const char *jobid = NULL, *conf_file = NULL, *trace = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	struct bip_conf *conf;
	struct bip_topology *topo = NULL;
	char topo_path[512];
	FILE *tf = NULL;
	const char *grow_host = NULL;
	int c, ready_fd = -1, quiet = 0, n = 0, universe = 0, rc = EXIT_FAILURE, r, nrails;
	pid_t parent = getppid();
	uint64_t t0;

	while ((c = getopt_long(argc, argv, "j:n:u:g:f:T:r:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			jobid = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'u':
			universe = atoi(optarg);
			break;
		case 'g':
			grow_host = optarg;
			break;
		case 'f':
			conf_file = optarg;
			break;
		case 'T':
			trace = optarg;
			break;
		case 'r':
			ready_fd = atoi(optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (!jobid || !bip_jobid_valid(jobid) || n < 1 || optind != argc) {
		if (jobid && !bip_jobid_valid(jobid))
			fprintf(stderr, "lanai-sim: -j %s: expected 1 to %d letters and digits\n",
				jobid, BIP_JOBID_MAX);
		if (n < 1)
			fprintf(stderr, "lanai-sim: -n: expected a number of nodes >= 1\n");
		usage(2);
	}
	if (universe && (universe < n || universe > BIP_CONF_MAXNODES)) {
		fprintf(stderr, "lanai-sim: -u %d: expected room for %d to %d nodes\n", universe, n,
			BIP_CONF_MAXNODES);
		usage(2);
	}
	if (universe < n)
		universe = n;
	/* Started by bipload: end with it, even if it is killed. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return EXIT_FAILURE;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	nrails = rails_from_env();
	if (nrails < 0)
		return EXIT_FAILURE;
	conf = load_conf(conf_file, n, nrails);
	if (!conf)
		return EXIT_FAILURE;
	if (universe > n) {
		const char *host = grow_host ? grow_host : conf->nodes[0].host;
		int e = bip_conf_grow(conf, universe, host);

		if (e < 0) {
			fprintf(stderr, "lanai-sim: -u %d%s%s: %s\n", universe, grow_host ? " -g " : "",
				grow_host ? grow_host : "",
				e == -ENOTSUP ? "a configuration with routes, clusters or relays "
						"cannot take nodes at its end" : strerror(-e));
			bip_conf_free(conf);
			return EXIT_FAILURE;
		}
	}
	nrails = conf->nrails;
	fws = calloc((size_t)nrails, sizeof(*fws));
	if (!fws) {
		fprintf(stderr, "lanai-sim: out of memory\n");
		goto undo;
	}
	for (r = 0; r < nrails; r++) {
		fws[r] = (struct lanai_fw){ .rail = r, .nrails = nrails, .unlinked = 1,
					    .nboards = universe, .nknown = n, .nactive = n,
					    .conf = conf };
		if (rail_faults(&fws[r], n) < 0)
			goto undo;
	}
	if (bip_topology_default_path(topo_path, sizeof(topo_path)) == 0 &&
	    access(topo_path, F_OK) == 0) {
		char err[512];

		if (bip_topology_load(topo_path, &topo, err, sizeof(err)) < 0) {
			fprintf(stderr, "lanai-sim: %s\n", err);
			goto undo;
		}
	}
	if (!trace)
		trace = fws[0].faults.trace;
	if (trace && *trace) {
		/* A new file of ours (mkstemp: O_EXCL, mode 0600) renamed to the
		 * path: a link another user planted there is replaced, never
		 * followed, and an older trace is replaced, not written into. */
		char tmp[4096];
		int tfd = -1;

		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", trace) < sizeof(tmp))
			tfd = mkstemp(tmp);
		if (tfd >= 0 && rename(tmp, trace) < 0) {
			int e = errno;

			unlink(tmp);
			close(tfd);
			tfd = -1;
			errno = e;
		}
		tf = tfd >= 0 ? fdopen(tfd, "w") : NULL;
		if (!tf) {
			fprintf(stderr, "lanai-sim: trace file %s: %s\n", trace, strerror(errno));
			if (tfd >= 0)
				close(tfd);
			goto undo;
		}
		setvbuf(tf, NULL, _IOLBF, 0);
		fprintf(tf, "# lanai-sim trace: job %s, %d boards%s, crc32c %s\n", jobid,
			universe * nrails, nrails > 1 ? " (rails of one network each)" : "",
			bip_crc32c_hw() ? "sse4.2" : "table");
	}
	t0 = lanai_now_us();
	for (r = 0; r < nrails; r++) {
		fws[r].topo = topo;
		fws[r].trace = tf;
		fws[r].t0 = t0;
		if (boards_init(&fws[r]) < 0) {
			fprintf(stderr, "lanai-sim: out of memory\n");
			goto undo;
		}
	}
	if (create_segment(fws, nrails, jobid) < 0)
		goto undo;
	if (ready_fd >= 0) {
		if (write(ready_fd, "ready\n", 6) != 6) {
			/* bipload is gone: the death signal ends us */
		}
		close(ready_fd);
	}
	run(fws, nrails);
	summary(fws, nrails, quiet);
	rc = EXIT_SUCCESS;
undo:
	if (fws && fws[0].seg) {
		if (!fws[0].unlinked)
			shm_unlink(fws[0].name);
		munmap(fws[0].seg, fws[0].seg_size);
	}
	if (tf)
		fclose(tf);
	for (r = 0; fws && r < nrails; r++)
		rail_free(&fws[r]);
	free(fws);
	if (topo)
		bip_topology_free(topo);
	bip_conf_free(conf);
	return rc;
}
