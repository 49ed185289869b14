/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: what a peer writes into shared memory, as this process reads
 * it.  The first byte picks the part:
 *
 *  - odd: a segment header (its node count and node from the next bytes),
 *    checked against the layout;
 *  - even: three nodes with segments in memory (the driver's state as
 *    bip_shm_init and bip_shm_attach_mem make it), some real traffic from
 *    node 1 to node 0 (short messages, long ones that go through a pipe),
 *    and between its steps the bytes write what a peer may write: any
 *    word of node 0's fifo, boxes and pipes, and of node 1's long sends,
 *    done words and stage.  Node 0 then polls, receives the long messages
 *    announced, and the senders poll; nothing may read or write outside
 *    the segments, whatever the words say.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "drivers/shm/shm.h"
#include "fwd.h"

#define NODES 3

static struct bip_shm shm[NODES];
static struct bip_shm_header *seg[NODES];
static size_t seg_size;
static uint64_t handles[64];
static size_t hlens[64];
static int nhandles;
static uint8_t rbuf[1 << 17], sbuf[1 << 17];

static int on_short(int src, int tag, const void *data, size_t len)
{
	return len % 7 == 3 ? -EAGAIN : 0; /* a refusal now and then */
}

static int on_long(int src, int tag, size_t len, uint64_t handle)
{
	if (nhandles < 64) {
		hlens[nhandles] = len;
		handles[nhandles++] = handle;
	}
	return 0;
}

static void on_send_done(uint64_t cookie, int status)
{
}

static void on_recv_done(uint64_t cookie, int status)
{
}

static const struct bip_layer_ops ops = {
	.short_arrived = on_short, .long_arrived = on_long,
	.send_done = on_send_done, .recv_done = on_recv_done,
};

static void setup_once(void)
{
	uint64_t off[BIP_SHM_PARTS];
	int i;

	if (seg[0])
		return;
	seg_size = bip_shm_segment_size(NODES, off);
	bip_state.numnodes = NODES;
	bip_state.napp = NODES;
	bip_state.peers = calloc(NODES, sizeof(*bip_state.peers));
	for (i = 0; i < BIP_ALL_TAGS; i++)
		bip_tagq_init(&bip_state.tags[i].q, 1 << 14);
	bip_state.layer[0] = &ops;
	for (i = 0; i < NODES; i++)
		seg[i] = aligned_alloc(4096, seg_size);
	memset(sbuf, 0x5a, sizeof(sbuf));
}

static void start(void)
{
	int i, j;

	nhandles = 0;
	for (i = 0; i < NODES; i++) {
		memset(seg[i], 0, seg_size);
		memset(&shm[i], 0, sizeof(shm[i]));
		bip_shm_init(&shm[i], i, NODES, seg[i]);
		shm[i].cma_min = SIZE_MAX;
		shm[i].box_after = 2; /* boxes early, to reach their code */
	}
	for (i = 0; i < NODES; i++)
		for (j = 0; j < NODES; j++)
			if (i != j) {
				shm[i].local[shm[i].nlocal++] = j;
				bip_shm_attach_mem(&shm[i], j, seg[j], 1);
			}
}

static void stop(void)
{
	int i;

	for (i = 0; i < NODES; i++)
		bip_shm_fini(&shm[i]);
	for (i = 0; i < BIP_ALL_TAGS; i++)
		while (bip_tagq_peek(&bip_state.tags[i].q))
			bip_tagq_pop(&bip_state.tags[i].q);
}

/* Where a peer may write: a part of node 0's segment, or node 1's long
 * sends (which node 0 reads). */
static uint8_t *region(unsigned which, size_t *len)
{
	struct bip_shm *r = &shm[0];

	switch (which % 6) {
	case 0:
		*len = sizeof(*r->me->fifo);
		return (uint8_t *)r->me->fifo;
	case 1:
		*len = BIP_SHM_BOXES * sizeof(*r->me->boxes);
		return (uint8_t *)r->me->boxes;
	case 2: /* the pipes' words, not their chunks */
		*len = offsetof(struct bip_shm_pipe, chunk);
		return (uint8_t *)&r->me->pipes[(which / 6) % BIP_SHM_PIPES];
	case 5: /* node 1's stage: its chunks' states */
		*len = sizeof(shm[1].me->stage->state);
		return (uint8_t *)shm[1].me->stage->state;
	case 3:
		*len = BIP_SHM_LSENDS * sizeof(struct bip_shm_lsend);
		return (uint8_t *)shm[1].me->lsend;
	default:
		*len = BIP_SHM_LSENDS * sizeof(uint32_t);
		return (uint8_t *)shm[1].me->ldone;
	}
}

static void poll_all(void)
{
	int i;

	for (i = 0; i < NODES; i++) {
		bip_shm_poll_queues(&shm[i]);
		if (bip_shm_long_busy(&shm[i]))
			bip_shm_poll_long(&shm[i]);
	}
}

static void traffic(unsigned step)
{
	static const size_t sizes[] = { 400, 5000, 40000, 70000, 1 << 17 };
	int i;

	for (i = 0; i < 3; i++)
		bip_shm_post(&shm[1], 0, BIP_SHM_SHORT, NTAGS, sbuf, (step + i) % 300, NULL, 0);
	bip_shm_post_long(&shm[1].nic, 0, NTAGS, sbuf, sizes[step % 5], BIP_FWD_SEND);
	poll_all();
	for (i = 0; i < nhandles; i++)
		if (hlens[i] <= sizeof(rbuf))
			bip_shm_post_long_recv(&shm[0].nic, handles[i], rbuf, hlens[i],
					       BIP_LAYER_RECV | (uint64_t)i);
	nhandles = 0;
	poll_all();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	unsigned step = 0;

	if (size < 3)
		return 0;
	if (data[0] & 1) {
		/* A header, in a mapping of the bytes' length. */
		int numnodes = 1 + data[1] % 64, node = data[2] % 65;
		void *h = malloc(size - 3 ? size - 3 : 1);

		if (!h)
			return 0;
		memcpy(h, data + 3, size - 3);
		bip_shm_header_check(h, size - 3, numnodes, node, err, sizeof(err));
		free(h);
		return 0;
	}
	setup_once();
	start();
	data++;
	size--;
	/* Records: region, offset (2 bytes), length, then the bytes. */
	while (size >= 4 && step < 64) {
		size_t rlen, off = (size_t)data[1] << 8 | data[2], n = data[3];
		uint8_t *r = region(data[0], &rlen);

		data += 4;
		size -= 4;
		if (n > size)
			n = size;
		off = off * 4 % rlen;
		if (n > rlen - off)
			n = rlen - off;
		memcpy(r + off, data, n);
		data += n;
		size -= n;
		traffic(step++);
	}
	traffic(step);
	stop();
	return 0;
}
