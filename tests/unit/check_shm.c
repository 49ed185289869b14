/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the shm driver's rings (lib/bip/drivers/shm): two processes,
 * forked here, open the driver as nodes 0 and 1; node 0 posts, node 1 polls,
 * and the core's tag queues receive.
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

/* Many laps of the ring, every short length, in order and intact. */
START_TEST(test_ring_laps_in_order)
{
	unsigned refused;

	run_pair(3, 20 * BIP_SHM_RING_SLOTS, 0, &refused);
}
END_TEST

/* A slow receiver leaves messages in the ring: the sender is refused
 * (-EAGAIN) until it drains; what finds the small tag queue full is kept by
 * the core and moved in as room appears; nothing is lost, order is kept. */
START_TEST(test_full_queue_pushes_back)
{
	unsigned refused;

	run_pair(5, 3 * BIP_SHM_RING_SLOTS, 1, &refused);
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
	uint64_t r, l, pi, a;
	size_t size = bip_shm_segment_size(3, &r, &l, &pi, &a);
	struct bip_shm_header *h = calloc(1, size);

	ck_assert_ptr_nonnull(h);
	*h = (struct bip_shm_header){ .magic = BIP_SHM_MAGIC, .version = BIP_SHM_VERSION,
				      .numnodes = 3, .node = 1, .pid = 42, .size = size,
				      .off_rings = r, .off_lsend = l, .off_pipes = pi,
				      .off_attached = a };
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
		{ offsetof(struct bip_shm_header, off_rings), 0xfffffffffffff000ull, 8, "offsets" },
		{ offsetof(struct bip_shm_header, off_lsend), 8, 8, "offsets" },
		{ offsetof(struct bip_shm_header, off_pipes), 1ull << 62, 8, "offsets" },
		{ offsetof(struct bip_shm_header, off_attached), 4096 * 1024, 8, "offsets" },
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

static Suite *shm_suite(void)
{
	Suite *s = suite_create("shm");
	TCase *tc = tcase_create("rings");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_ring_laps_in_order);
	tcase_add_test(tc, test_full_queue_pushes_back);
	tcase_add_test(tc, test_unavailable_peer_times_out);
	suite_add_tcase(s, tc);
	tc = tcase_create("trust");
	tcase_add_test(tc, test_header_check);
	tcase_add_test(tc, test_segment_open_checks);
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
