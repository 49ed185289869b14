/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the shm driver (lib/bip/drivers/shm).  "rings": two
 * processes, forked here, open the driver as nodes 0 and 1; node 0 posts,
 * node 1 polls, and the core's tag queues receive.  "sharing": several
 * nodes in this one process, with segments in memory, so that the lending
 * of boxes and pipes among many senders is tested step by step.  "trust":
 * headers, names and slots that a peer forged.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "core.h"
#include "fwd.h"
#include "drivers/shm/shm.h"
#include "segment.h"

static char jobid[32];
static char err[512];

/* Core state for the arrivals: tag 5 holds two messages of the largest
 * short size, the least a queue holds (bip_init sizes queues so: one asked
 * for, and one for what a wrap mark can waste); the others 8. */
static void core_setup(void)
{
	int i;

	bip_state.numnodes = 2;
	bip_state.napp = 2;
	bip_state.peers = calloc(2, sizeof(*bip_state.peers));
	ck_assert_ptr_nonnull(bip_state.peers);
	for (i = 0; i < BIP_ALL_TAGS; i++) {
		uint32_t cap = (BIPSMALLSIZE + BIP_MSG_HEAD) * 4 * (i == 5 ? 2 : 8);

		ck_assert_int_eq(bip_tagq_init(&bip_state.tags[i].q, cap), 0);
	}
}

static struct bip_nic *open_node(int node, struct bip_conf *conf)
{
	unsigned char serve[2] = { node != 0, node != 1 };
	struct bip_nic_job job = {
		.mynode = node, .numnodes = 2, .conf = conf, .serve = serve, .jobid = jobid,
		.timeout = 20, .quiet = 1, .err = err, .errlen = sizeof(err),
	};
	struct bip_nic *nic = NULL;

	ck_assert_msg(bip_shm_ops.open(&job, &nic) == 0, "open node %d: %s", node, err);
	bip_state.mynode = node;
	bip_state.peers[0].nic = bip_state.peers[1].nic = nic;
	return nic;
}

static int segments_left(void)
{
	char prefix[96];
	struct dirent *d;
	DIR *dir = opendir("/dev/shm");
	int n = 0;

	bip_shm_prefix(prefix, sizeof(prefix), (unsigned)getuid(), jobid);
	while (dir && (d = readdir(dir)))
		n += !strncmp(d->d_name, prefix, strlen(prefix));
	if (dir)
		closedir(dir);
	return n;
}

/* Node 1: receive count messages on tag, checking order, length and content. */
static int receive_all(struct bip_nic *nic, uint32_t tag, int count)
{
	int got = 0;

	while (got < count) {
		struct bip_tagq_entry *e;

		nic->ops->poll(nic);
		/* What found the queue full is kept by the core until now. */
		bip_flow_progress();
		while ((e = bip_tagq_peek(&bip_state.tags[tag].q))) {
			const uint32_t *w = bip_tagq_payload(e);
			uint32_t words = (uint32_t)got % (BIPSMALLSIZE + 1), i;

			if (e->src != 0 || e->len != words * 4)
				return 1;
			for (i = 0; i < words; i++)
				if (w[i] != (uint32_t)got * 1000 + i)
					return 2;
			bip_tagq_pop(&bip_state.tags[tag].q);
			got++;
		}
	}
	return 0;
}

/* Node 0: post count messages of every short length, retrying when full. */
static unsigned send_all(struct bip_nic *nic, uint32_t tag, int count)
{
	uint32_t buf[BIPSMALLSIZE];
	unsigned refused = 0;
	int n, rc;

	for (n = 0; n < count; n++) {
		uint32_t words = (uint32_t)n % (BIPSMALLSIZE + 1), i;

		for (i = 0; i < words; i++)
			buf[i] = (uint32_t)n * 1000 + i;
		while ((rc = nic->ops->post_short(nic, 1, tag, buf, words * 4)) == -EAGAIN) {
			refused++;
			nic->ops->poll(nic);
		}
		ck_assert_int_eq(rc, 0);
	}
	return refused;
}

static void run_pair(uint32_t tag, int count, int slow_receiver, unsigned *refused)
{
	struct bip_conf *conf;
	struct bip_nic *nic;
	int status;
	pid_t child;

	snprintf(jobid, sizeof(jobid), "u%x%lx", (unsigned)getpid(), (long)time(NULL));
	ck_assert_int_eq(bip_conf_local(2, &conf), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		core_setup();
		nic = open_node(1, conf);
		if (slow_receiver)
			usleep(200000);
		status = receive_all(nic, tag, count);
		nic->ops->close(nic);
		_exit(status);
	}
	core_setup();
	nic = open_node(0, conf);
	*refused = send_all(nic, tag, count);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "receiver status %d", status);
	/* Each owner removed its name once the other had attached. */
	ck_assert_int_eq(segments_left(), 0);
	nic->ops->close(nic);
	bip_conf_free(conf);
}

/* Many laps of the fifo and the box, every short length, in order and intact. */
START_TEST(test_ring_laps_in_order)
{
	unsigned refused;

	run_pair(3, 20 * BIP_SHM_FIFO_SLOTS, 0, &refused);
}
END_TEST

/* A slow receiver leaves messages in the queue: the sender is refused
 * (-EAGAIN) until it drains; what finds the small tag queue full is kept by
 * the core and moved in as room appears; nothing is lost, order is kept. */
START_TEST(test_full_queue_pushes_back)
{
	unsigned refused;

	run_pair(5, 3 * BIP_SHM_FIFO_SLOTS, 1, &refused);
	ck_assert_uint_gt(refused, 0);
}
END_TEST

START_TEST(test_unavailable_peer_times_out)
{
	unsigned char serve[2] = { 0, 1 };
	struct bip_conf *conf;
	struct bip_nic_job job = {
		.mynode = 0, .numnodes = 2, .serve = serve, .jobid = jobid,
		.timeout = 0.3, .quiet = 1, .err = err, .errlen = sizeof(err),
	};
	struct bip_nic *nic = NULL;

	snprintf(jobid, sizeof(jobid), "t%x", (unsigned)getpid());
	ck_assert_int_eq(bip_conf_local(2, &conf), 0);
	job.conf = conf;
	ck_assert_int_eq(bip_shm_ops.open(&job, &nic), -ETIMEDOUT);
	ck_assert_ptr_null(nic);
	ck_assert_msg(strstr(err, "waiting for node 1") != NULL, "%s", err);
	ck_assert_int_eq(segments_left(), 0);
	bip_conf_free(conf);
}
END_TEST

/* A header as node 1 of 3 writes it, in a buffer of the layout's size. */
static struct bip_shm_header *good_header(size_t *size_p)
{
	uint64_t off[BIP_SHM_PARTS];
	size_t size = bip_shm_segment_size(3, off);
	struct bip_shm_header *h = calloc(1, size);

	ck_assert_ptr_nonnull(h);
	*h = (struct bip_shm_header){ .magic = BIP_SHM_MAGIC, .version = BIP_SHM_VERSION,
				      .numnodes = 3, .node = 1, .pid = 42, .size = size };
	memcpy(h->off, off, sizeof(off));
	*size_p = size;
	return h;
}

/* Every field of a peer's header is checked against the layout this process
 * computes; a forged one is refused naming the field, never used. */
START_TEST(test_header_check)
{
	size_t size;
	struct bip_shm_header *h = good_header(&size);
	struct bip_shm_header saved = *h;
	static const struct {
		size_t off;
		uint64_t value;
		int width;
		const char *says;
	} bad[] = {
		{ offsetof(struct bip_shm_header, magic), 0x41414141, 4, "magic" },
		{ offsetof(struct bip_shm_header, version), 999, 4, "layout version 999" },
		{ offsetof(struct bip_shm_header, numnodes), 2, 4, "of 2 nodes" },
		{ offsetof(struct bip_shm_header, node), 2, 4, "node 2 of 3" },
		{ offsetof(struct bip_shm_header, size), 1ull << 40, 8, "size" },
		{ offsetof(struct bip_shm_header, off[BIP_SHM_FIFO]), 0xfffffffffffff000ull, 8,
		  "offsets" },
		{ offsetof(struct bip_shm_header, off[BIP_SHM_LSEND]), 8, 8, "offsets" },
		{ offsetof(struct bip_shm_header, off[BIP_SHM_PIPES_AT]), 1ull << 62, 8, "offsets" },
		{ offsetof(struct bip_shm_header, off[BIP_SHM_ATTACHED]), 4096 * 1024, 8,
		  "offsets" },
		{ offsetof(struct bip_shm_header, off[BIP_SHM_LDONE]), 1, 8, "offsets" },
		{ offsetof(struct bip_shm_header, pid), 0, 4, "process id 0" },
	};
	size_t i;

	ck_assert_msg(bip_shm_header_check(h, size, 3, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(bip_shm_header_check(h, size, 3, 2, err, sizeof(err)), -EPROTO);
	ck_assert_int_eq(bip_shm_header_check(h, size + 4096, 3, 1, err, sizeof(err)), -EPROTO);
	ck_assert_int_eq(bip_shm_header_check(h, 16, 3, 1, err, sizeof(err)), -EPROTO);
	ck_assert_ptr_nonnull(strstr(err, "less than a header"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		*h = saved;
		memcpy((char *)h + bad[i].off, &bad[i].value, (size_t)bad[i].width);
		ck_assert_int_eq(bip_shm_header_check(h, size, 3, 1, err, sizeof(err)), -EPROTO);
		ck_assert_msg(strstr(err, bad[i].says), "field at %zu: %s", bad[i].off, err);
	}
	/* Random headers: refused, never a crash. */
	srand(7);
	for (i = 0; i < 10000; i++) {
		size_t k;

		for (k = 0; k < sizeof(*h); k++)
			((unsigned char *)h)[k] = (unsigned char)rand();
		if (i % 2)
			h->magic = BIP_SHM_MAGIC, h->version = BIP_SHM_VERSION;
		ck_assert_int_eq(bip_shm_header_check(h, size, 3, 1, err, sizeof(err)), -EPROTO);
	}
	free(h);
}
END_TEST

/* A name another user's file, a link or a file of the wrong mode holds is
 * refused by bip_segment_open, naming the file; ours opens. */
START_TEST(test_segment_open_checks)
{
	char name[64], path[96];
	int fd;

	snprintf(name, sizeof(name), "/bip-test-%d", (int)getpid());
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	ck_assert_int_eq(bip_segment_open(name, O_RDWR, NULL, err, sizeof(err)), -ENOENT);
	fd = bip_segment_open(name, O_RDWR | O_CREAT | O_EXCL, NULL, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	close(fd);
	ck_assert_int_eq(bip_segment_open(name, O_RDWR | O_CREAT | O_EXCL, NULL, err, sizeof(err)),
			 -EEXIST);
	ck_assert_msg(strstr(err, "another job of this user"), "%s", err);
	chmod(path, 0644);
	ck_assert_int_eq(bip_segment_open(name, O_RDWR, NULL, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "mode 0644"), "%s", err);
	unlink(path);
	ck_assert_int_eq(symlink("/etc/hostname", path), 0);
	ck_assert_int_eq(bip_segment_open(name, O_RDWR, NULL, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "symbolic link"), "%s", err);
	ck_assert_int_eq(bip_segment_open(name, O_RDWR | O_CREAT | O_EXCL, NULL, err, sizeof(err)),
			 -EEXIST);
	ck_assert_msg(strstr(err, "symbolic link"), "%s", err);
	unlink(path);
}
END_TEST

/*
 * Several nodes in this one process, each with a segment in memory of its
 * own (bip_shm_init, bip_shm_attach_mem): node 0 is the receiver, with
 * the core's state; its arrivals on tag NTAGS go to a layer of the test,
 * which records them.  The others only send, and poll for the driver's
 * own control messages.  Sends complete with cookies the core ignores
 * (a relay's, with no relay); the senders' state says when they are done.
 */
#define SIM_MAX 16

static struct sim {
	int n;
	struct bip_shm shm[SIM_MAX];
	struct bip_shm_header *seg[SIM_MAX];
	/* what node 0's layer got */
	int next[SIM_MAX];              /* short messages in order, per sender */
	int bad;                        /* out of order or corrupt */
	uint64_t handles[256];
	int hsrc[256];
	size_t hlen[256];
	int nhandles;
	int recv_done;
} sim;

static void sim_fill(uint32_t *w, size_t words, int src, int i)
{
	size_t k;

	for (k = 0; k < words; k++)
		w[k] = (uint32_t)src << 24 ^ (uint32_t)i << 12 ^ (uint32_t)k;
}

static int sim_short(int src, int tag, const void *data, size_t len)
{
	uint32_t w[BIP_SHM_SLOT_SIZE / 4];
	int i = sim.next[src];

	/* Message i of src: i % 60 + 1 words. */
	sim_fill(w, (size_t)(i % 60 + 1), src, i);
	if (len != (size_t)(i % 60 + 1) * 4 || memcmp(w, data, len))
		sim.bad++;
	sim.next[src]++;
	return 0;
}

static int sim_long(int src, int tag, size_t len, uint64_t handle)
{
	ck_assert_int_lt(sim.nhandles, 256);
	sim.handles[sim.nhandles] = handle;
	sim.hsrc[sim.nhandles] = src;
	sim.hlen[sim.nhandles++] = len;
	return 0;
}

static void sim_send_done(uint64_t cookie, int status)
{
}

static void sim_recv_done(uint64_t cookie, int status)
{
	ck_assert_int_eq(status, 0);
	sim.recv_done++;
}

static const struct bip_layer_ops sim_ops = {
	.short_arrived = sim_short, .long_arrived = sim_long,
	.send_done = sim_send_done, .recv_done = sim_recv_done,
};

static void sim_setup(int n)
{
	uint64_t off[BIP_SHM_PARTS];
	size_t size = bip_shm_segment_size(n, off);
	int i, j;

	ck_assert_int_le(n, SIM_MAX);
	memset(&sim, 0, sizeof(sim));
	sim.n = n;
	memset(&bip_state, 0, sizeof(bip_state));
	bip_state.numnodes = n;
	bip_state.napp = n;
	bip_state.peers = calloc((size_t)n, sizeof(*bip_state.peers));
	ck_assert_ptr_nonnull(bip_state.peers);
	for (i = 0; i < BIP_ALL_TAGS; i++)
		ck_assert_int_eq(bip_tagq_init(&bip_state.tags[i].q, 1 << 16), 0);
	bip_state.layer[0] = &sim_ops;
	for (i = 0; i < n; i++) {
		sim.seg[i] = aligned_alloc(4096, size);
		ck_assert_ptr_nonnull(sim.seg[i]);
		memset(sim.seg[i], 0, size);
		ck_assert_int_eq(bip_shm_init(&sim.shm[i], i, n, sim.seg[i]), 0);
		sim.shm[i].cma_min = SIZE_MAX;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j) {
				sim.shm[i].local[sim.shm[i].nlocal++] = j;
				bip_shm_attach_mem(&sim.shm[i], j, sim.seg[j], getpid());
			}
}

static void sim_teardown(void)
{
	int i;

	for (i = 0; i < sim.n; i++) {
		bip_shm_fini(&sim.shm[i]);
		free(sim.seg[i]);
	}
	for (i = 0; i < BIP_ALL_TAGS; i++)
		bip_tagq_free(&bip_state.tags[i].q);
	free(bip_state.peers);
	memset(&bip_state, 0, sizeof(bip_state));
}

/* One round of everyone's progress. */
static void sim_poll(void)
{
	int i;

	for (i = 0; i < sim.n; i++) {
		bip_shm_poll_queues(&sim.shm[i]);
		if (bip_shm_long_busy(&sim.shm[i]))
			bip_shm_poll_long(&sim.shm[i]);
	}
}

/* Node src sends its messages from first to first + count - 1 to node 0,
 * polling everyone whenever there is no room. */
static void sim_send(int src, int first, int count)
{
	uint32_t w[BIP_SHM_SLOT_SIZE / 4];
	int i;

	for (i = first; i < first + count; i++) {
		size_t words = (size_t)(i % 60 + 1);

		sim_fill(w, words, src, i);
		while (bip_shm_post(&sim.shm[src], 0, BIP_SHM_SHORT, NTAGS, w, words * 4, NULL,
				    0) == -EAGAIN)
			sim_poll();
	}
}

/*
 * Eleven senders to one receiver, one after the other, then the first
 * again: each gets a box after BIP_SHM_BOX_AFTER messages, the ninth finds
 * all eight lent and takes back the idle first one (REVOKE, END), and the
 * first's messages after that go through the fifo again, after those in
 * its box: every message arrives, in order, intact.
 */
START_TEST(test_boxes_lent_taken_back_in_order)
{
	struct bip_shm *r;
	int s, k;

	sim_setup(12);
	r = &sim.shm[0];
	for (s = 1; s < 12; s++) {
		sim_send(s, 0, 300);
		for (k = 0; k < 4; k++)
			sim_poll();
		ck_assert_int_eq(sim.next[s], 300);
	}
	ck_assert_int_eq(sim.bad, 0);
	ck_assert_uint_ge(r->stats.box_grants, 9);
	ck_assert_uint_ge(r->stats.box_revokes, 1);
	ck_assert_uint_ge(r->stats.box_ends, 1);
	ck_assert_int_le(r->nlent, BIP_SHM_BOXES);
	/* Senders 1 .. 11, taken back or not, and all at once. */
	for (k = 0; k < 40; k++)
		for (s = 1; s < 12; s++)
			sim_send(s, 300 + 10 * k, 10);
	for (k = 0; k < 8; k++)
		sim_poll();
	for (s = 1; s < 12; s++)
		ck_assert_int_eq(sim.next[s], 700);
	ck_assert_int_eq(sim.bad, 0);
	sim_teardown();
}
END_TEST

/* Receive every long message announced so far, into bufs. */
static void sim_receive_long(uint8_t **bufs, int *taken)
{
	int i;

	for (i = *taken; i < sim.nhandles; i++) {
		uint64_t cookie = BIP_LAYER_RECV | (uint64_t)i;
		int rc = bip_shm_post_long_recv(&sim.shm[0].nic, sim.handles[i], bufs[i],
						sim.hlen[i], cookie);

		ck_assert_int_ge(rc, 0);
		sim.recv_done += rc;
	}
	*taken = sim.nhandles;
}

/*
 * Long messages from five senders to one receiver with two pipes: the
 * pipes are lent by the claims and go from sender to sender; the small
 * ones are prepushed into the senders' stages, the oldest taken back when
 * a sender needs its stage again and claimed instead; every byte arrives.
 */
START_TEST(test_pipes_lent_to_many_senders)
{
	static const size_t sizes[] = { 4096, 65536, 300000, 20000, 1 << 20 };
	uint8_t *src[SIM_MAX][5], *dst[256];
	int s, m, i, taken = 0, rounds = 0;

	sim_setup(6);
	for (s = 1; s < 6; s++)
		for (m = 0; m < 5; m++) {
			src[s][m] = malloc(sizes[m]);
			for (i = 0; i < (int)sizes[m]; i++)
				src[s][m][i] = (uint8_t)(s * 31 + m * 7 + i * 13);
			ck_assert_int_eq(bip_shm_post_long(&sim.shm[s].nic, 0, NTAGS, src[s][m],
							   sizes[m], BIP_FWD_SEND | (uint64_t)m), 0);
		}
	for (i = 0; i < 256; i++)
		dst[i] = malloc(1 << 20);
	while (sim.recv_done < 25) {
		sim_poll();
		sim_receive_long(dst, &taken);
		ck_assert_int_lt(++rounds, 100000);
	}
	for (i = 0; i < 25; i++) {
		s = sim.hsrc[i];
		for (m = 0; m < 5 && sizes[m] != sim.hlen[i]; m++)
			;
		ck_assert_int_lt(m, 5);
		ck_assert_msg(!memcmp(dst[i], src[s][m], sizes[m]), "message %d of node %d", m, s);
	}
	for (i = 0; i < 4; i++)
		sim_poll();
	for (s = 1; s < 6; s++)
		ck_assert_int_eq(sim.shm[s].nlactive, 0);
	ck_assert_uint_ge(sim.shm[0].stats.pipe_lends, 3);
	ck_assert_uint_ge(sim.shm[0].stats.pipe_takebacks, 1);
	/* Each sender staged its 4 KiB and 20 KB messages, then took its
	 * stage back for the next one before node 0 came. */
	for (s = 1; s < 6; s++) {
		ck_assert_uint_ge(sim.shm[s].stats.prepushed, 3);
		ck_assert_uint_ge(sim.shm[s].stats.stage_reclaimed, 1);
	}
	/* A second round, received at once: staged, copied out, no claim. */
	sim.nhandles = sim.recv_done = taken = 0;
	for (s = 1; s < 6; s++)
		ck_assert_int_eq(bip_shm_post_long(&sim.shm[s].nic, 0, NTAGS, src[s][0], sizes[0],
						   BIP_FWD_SEND), 0);
	for (rounds = 0; sim.recv_done < 5; rounds++) {
		sim_poll();
		sim_receive_long(dst, &taken);
		ck_assert_int_lt(rounds, 100000);
	}
	for (i = 0; i < 5; i++)
		ck_assert(!memcmp(dst[i], src[sim.hsrc[i]][0], sizes[0]));
	ck_assert_uint_ge(sim.shm[0].stats.stage_taken, 5);
	for (s = 1; s < 6; s++)
		for (m = 0; m < 5; m++)
			free(src[s][m]);
	for (i = 0; i < 256; i++)
		free(dst[i]);
	sim_teardown();
}
END_TEST

/*
 * Two senders whose claims hold both pipes stop polling (they compute):
 * a third sender's claim waits, and once the claims have not moved for a
 * while the receiver takes a pipe back and claims the stalled message
 * again later from the bytes it has; all three arrive whole.
 */
START_TEST(test_stalled_claim_gives_its_pipe)
{
	const size_t len = 1 << 20;
	uint8_t *src[4], *dst[256];
	int s, i, k, taken = 0;
	struct timespec pause = { 0, 3000000 };

	sim_setup(4);
	for (s = 1; s < 4; s++) {
		src[s] = malloc(len);
		for (i = 0; i < (int)len; i++)
			src[s][i] = (uint8_t)(s + i * 7);
	}
	for (i = 0; i < 256; i++)
		dst[i] = malloc(len);
	for (s = 1; s < 3; s++)
		ck_assert_int_eq(bip_shm_post_long(&sim.shm[s].nic, 0, NTAGS, src[s], len,
						   BIP_FWD_SEND), 0);
	bip_shm_poll_queues(&sim.shm[0]);
	sim_receive_long(dst, &taken);
	/* Senders 1 and 2 serve their claims once, then compute. */
	for (s = 1; s < 3; s++)
		sim_poll();
	ck_assert_int_eq(bip_shm_post_long(&sim.shm[3].nic, 0, NTAGS, src[3], len, BIP_FWD_SEND),
			 0);
	for (k = 0; k < 50 && sim.recv_done < 1; k++) {
		/* Only nodes 0 and 3 make progress. */
		bip_shm_poll_queues(&sim.shm[0]);
		sim_receive_long(dst, &taken);
		bip_shm_poll_long(&sim.shm[0]);
		bip_shm_poll_queues(&sim.shm[3]);
		bip_shm_poll_long(&sim.shm[3]);
		nanosleep(&pause, NULL);
	}
	ck_assert_int_eq(sim.recv_done, 1);
	ck_assert_uint_ge(sim.shm[0].stats.pipe_stalls, 1);
	for (k = 0; k < 100000 && sim.recv_done < 3; k++)
		sim_poll();
	ck_assert_int_eq(sim.recv_done, 3);
	for (i = 0; i < 3; i++)
		ck_assert(!memcmp(dst[i], src[sim.hsrc[i]], len));
	for (s = 1; s < 4; s++)
		free(src[s]);
	for (i = 0; i < 256; i++)
		free(dst[i]);
	sim_teardown();
}
END_TEST

/* Write a slot into node 0's fifo as node `as` would, unchecked. */
static void forge_fifo(int as, uint32_t kind_word, uint32_t tag, uint32_t len, const void *pl,
		       size_t plen)
{
	struct bip_shm_fifo *f = sim.shm[0].me->fifo;
	uint32_t pos = f->head++;
	struct bip_shm_slot *slot = &f->slots[pos & (BIP_SHM_FIFO_SLOTS - 1)];

	(void)as;
	slot->kind = kind_word;
	slot->tag = tag;
	slot->len = len;
	memcpy(slot->payload, pl, plen);
	__atomic_store_n(&slot->seq, pos + 1, __ATOMIC_RELEASE);
}

/* What a peer may write into the fifo and the control messages is
 * checked: bad slots are dropped and said once, never followed. */
START_TEST(test_forged_slots_dropped)
{
	struct bip_shm_ctl c = { 0 };
	struct bip_shm_rts rts = { .lslot = 5000, .gen = 1 };
	uint32_t w[4] = { 0 };
	uint64_t handle;

	sim_setup(3);
	forge_fifo(1, bip_shm_kind_word(9, 1), NTAGS, 4, w, 4);          /* no such kind */
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_SHORT, 7), NTAGS, 4, w, 4);  /* no such node */
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_SHORT, 2), NTAGS, 4000, w, 4); /* too long */
	c.op = BIP_SHM_BOX_GRANT;
	c.index = 99;
	forge_fifo(2, bip_shm_kind_word(BIP_SHM_CTL, 2), 0, sizeof(c), &c, sizeof(c));
	c.op = BIP_SHM_BOX_END;
	c.index = 3;
	forge_fifo(2, bip_shm_kind_word(BIP_SHM_CTL, 2), 0, sizeof(c), &c, sizeof(c));
	c.op = BIP_SHM_CLAIM;
	c.index = 7;
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_CTL, 1), 0, sizeof(c), &c, sizeof(c));
	c.op = 77;
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_CTL, 1), 0, sizeof(c), &c, sizeof(c));
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_CTL, 1), 0, 3, &c, 3);
	forge_fifo(1, bip_shm_kind_word(BIP_SHM_RTS, 1), NTAGS, 100000, &rts, sizeof(rts));
	bip_shm_poll_queues(&sim.shm[0]);
	ck_assert_int_eq(sim.shm[0].fifo_cons, 9);
	ck_assert_int_eq(sim.bad, 0);
	ck_assert_int_eq(sim.nhandles, 1);
	ck_assert_int_eq(sim.shm[0].nlent, 0);
	/* The forged announcement names no send of node 1: refused. */
	handle = sim.handles[0];
	ck_assert_int_eq(bip_shm_post_long_recv(&sim.shm[0].nic, handle, w, 100000,
						BIP_LAYER_RECV), -EPROTO);
	/* A bad handle, and a send node 1 never made. */
	ck_assert_int_eq(bip_shm_post_long_recv(&sim.shm[0].nic, (uint64_t)9 << 48, w, 16,
						BIP_LAYER_RECV), -EPROTO);
	ck_assert_int_eq(bip_shm_post_long_recv(&sim.shm[0].nic, (uint64_t)1 << 48 | 1, w, 16,
						BIP_LAYER_RECV), -EPROTO);
	/* Node 2 may still send, in order. */
	sim_send(2, 0, 50);
	bip_shm_poll_queues(&sim.shm[0]);
	ck_assert_int_eq(sim.next[2], 50);
	ck_assert_int_eq(sim.bad, 0);
	sim_teardown();
}
END_TEST

/* A segment is the same size for 2 nodes and for 65536 but for two bits
 * per node: the shared memory of a host grows with its processes. */
START_TEST(test_segment_size_per_process)
{
	uint64_t off[BIP_SHM_PARTS];
	size_t two = bip_shm_segment_size(2, off), big = bip_shm_segment_size(65536, off);

	ck_assert_uint_le(two, 512 * 1024);
	ck_assert_uint_le(big - two, 2 * 65536 / 8 + 4096);
}
END_TEST

static Suite *shm_suite(void)
{
	Suite *s = suite_create("shm");
	TCase *tc = tcase_create("rings");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_ring_laps_in_order);
	tcase_add_test(tc, test_full_queue_pushes_back);
	tcase_add_test(tc, test_unavailable_peer_times_out);
	suite_add_tcase(s, tc);
	tc = tcase_create("sharing");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_boxes_lent_taken_back_in_order);
	tcase_add_test(tc, test_pipes_lent_to_many_senders);
	tcase_add_test(tc, test_stalled_claim_gives_its_pipe);
	tcase_add_test(tc, test_segment_size_per_process);
	suite_add_tcase(s, tc);
	tc = tcase_create("trust");
	tcase_add_test(tc, test_header_check);
	tcase_add_test(tc, test_segment_open_checks);
	tcase_add_test(tc, test_forged_slots_dropped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
