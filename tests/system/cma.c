/* SPDX-License-Identifier: MIT */
/*
 * cma - long messages over shm around the sizes where the copy path
 * changes, for tests/system/cma.sh.
 *
 *   cma sizes|refuse|refuse-init [big]
 *
 * Two nodes.  The sizes: 4 bytes either side of, and at, BIP_SHM_CMA_MIN
 * (if set), a pipe chunk (16 KiB), the largest prepushed message (64 KiB),
 * the whole pipe (128 KiB) and 1 MiB, and with big 64 MiB.  For each, node 0 sends
 * a pattern that depends on the size and the direction; node 1 receives it
 * into a buffer with guard words after the end, checks every word and the
 * guards, and sends it back, which node 0 checks the same way.  Then node 0
 * sends one message of every size at once (bip_tisend) and says so with a
 * short message; node 1 posts its receives only after that one, in reverse
 * order of size, so that every long message is announced before its
 * receive is posted and prepushed ones are passed over.
 *
 * refuse: after bip_init, both nodes forbid themselves process_vm_readv
 * (a seccomp filter: EPERM), so the single copy, which the start-up probe
 * allowed, is refused at its first use and the driver must fall back to
 * the pipelined copy without losing the message.  refuse-init: the same
 * before bip_init, so the probe itself fails.
 *
 * Each node prints "cma: node N: M messages checked" at the end; a wrong word is
 * printed with its size and index, and the program exits 1.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bip.h"

#define GUARD 4                 /* words after every receive buffer */
#define GUARD_WORD 0x5a5a5a5au
#define MAXSIZES 32
#define TAG_PING 1
#define TAG_SENT 2
#define TAG_ALL 3               /* TAG_ALL + i: size i of the all-at-once phase */

static size_t sizes[MAXSIZES];
static int nsizes;
static long checked;

static uint32_t pattern(size_t bytes, int dir, size_t i)
{
	return (uint32_t)(i * 2654435761u) ^ (uint32_t)bytes ^ ((uint32_t)dir << 31);
}

static void add_size(size_t s)
{
	int i;

	if (s < 4 || s % 4 || nsizes == MAXSIZES)
		return;
	for (i = 0; i < nsizes; i++)
		if (sizes[i] == s)
			return;
	sizes[nsizes++] = s;
}

static void add_around(size_t s)
{
	add_size(s - 4);
	add_size(s);
	add_size(s + 4);
}

static int refuse_cma(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		/* cma.sh skips the case on this line. */
		printf("cma: cannot refuse process_vm_readv here (seccomp: %s)\n", strerror(errno));
		return -1;
	}
	return 0;
}

static uint32_t *alloc_words(size_t bytes)
{
	uint32_t *b = malloc(bytes + GUARD * 4);

	if (!b) {
		fprintf(stderr, "cma: node %d: cannot allocate %zu bytes\n", bip_mynode, bytes);
		exit(1);
	}
	return b;
}

static void fill(uint32_t *b, size_t bytes, int dir)
{
	size_t i;

	for (i = 0; i < bytes / 4; i++)
		b[i] = pattern(bytes, dir, i);
}

static void prepare(uint32_t *b, size_t bytes)
{
	size_t i;

	memset(b, 0, bytes);
	for (i = 0; i < GUARD; i++)
		b[bytes / 4 + i] = GUARD_WORD;
}

static void check(const uint32_t *b, size_t bytes, int got, int dir, const char *what)
{
	size_t i;

	if (got != (int)(bytes / 4)) {
		printf("cma: node %d: FAIL: %s of %zu bytes: %d words received, expected %zu\n",
		       bip_mynode, what, bytes, got, bytes / 4);
		exit(1);
	}
	for (i = 0; i < bytes / 4; i++)
		if (b[i] != pattern(bytes, dir, i)) {
			printf("cma: node %d: FAIL: %s of %zu bytes: word %zu is 0x%08x, "
			       "expected 0x%08x\n", bip_mynode, what, bytes, i, b[i],
			       pattern(bytes, dir, i));
			exit(1);
		}
	for (i = 0; i < GUARD; i++)
		if (b[bytes / 4 + i] != GUARD_WORD) {
			printf("cma: node %d: FAIL: %s of %zu bytes: written past the end\n",
			       bip_mynode, what, bytes);
			exit(1);
		}
	checked++;
}

/* Every size there and back, one at a time. */
static void pingpong(uint32_t *b)
{
	int i;

	for (i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		int w = (int)(s / 4);

		if (bip_mynode == 0) {
			fill(b, s, 0);
			if (bip_tsend(1, TAG_PING, (int *)b, w) < 0)
				goto fail;
			prepare(b, s);
			check(b, s, bip_trecv(TAG_PING, (int *)b, w), 1, "echo");
		} else {
			prepare(b, s);
			check(b, s, bip_trecv(TAG_PING, (int *)b, w), 0, "message");
			fill(b, s, 1);
			if (bip_tsend(0, TAG_PING, (int *)b, w) < 0)
				goto fail;
		}
	}
	return;
fail:
	printf("cma: node %d: FAIL: bip_tsend: %s\n", bip_mynode, bip_error_string());
	exit(1);
}

/* Every size at once, received late and in reverse order. */
static void all_at_once(void)
{
	uint32_t *bufs[MAXSIZES];
	int ids[MAXSIZES], i, one = 1;

	for (i = 0; i < nsizes; i++)
		bufs[i] = alloc_words(sizes[i]);
	if (bip_mynode == 0) {
		for (i = 0; i < nsizes; i++) {
			fill(bufs[i], sizes[i], 0);
			ids[i] = bip_tisend(1, TAG_ALL + i, (int *)bufs[i], (int)(sizes[i] / 4));
			if (ids[i] < 0) {
				printf("cma: node 0: FAIL: bip_tisend: %s\n", bip_error_string());
				exit(1);
			}
		}
		if (bip_tsend(1, TAG_SENT, &one, 1) < 0)
			exit(1);
		for (i = 0; i < nsizes; i++)
			bip_swait(ids[i]);
		/* The acknowledgement: node 1 checked everything. */
		if (bip_trecv(TAG_SENT, &one, 1) != 1)
			exit(1);
	} else {
		if (bip_trecv(TAG_SENT, &one, 1) != 1)
			exit(1);
		for (i = nsizes; i-- > 0;) {
			prepare(bufs[i], sizes[i]);
			ids[i] = bip_tirecv(TAG_ALL + i, (int *)bufs[i], (int)(sizes[i] / 4));
			if (ids[i] < 0) {
				printf("cma: node 1: FAIL: bip_tirecv: %s\n", bip_error_string());
				exit(1);
			}
		}
		for (i = nsizes; i-- > 0;)
			check(bufs[i], sizes[i], bip_rwait(ids[i]), 0, "message sent at once");
		if (bip_tsend(0, TAG_SENT, &one, 1) < 0)
			exit(1);
	}
	for (i = 0; i < nsizes; i++)
		free(bufs[i]);
}

int main(int argc, char **argv)
{
	const char *min = getenv("BIP_SHM_CMA_MIN");
	uint32_t *b;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "big")) ||
	    (strcmp(argv[1], "sizes") && strcmp(argv[1], "refuse") &&
	     strcmp(argv[1], "refuse-init"))) {
		fprintf(stderr, "usage: cma sizes|refuse|refuse-init [big]\n");
		return 2;
	}
	if (min && strtoull(min, NULL, 0) >= 4 && strtoull(min, NULL, 0) < (64u << 20))
		add_around((size_t)strtoull(min, NULL, 0) & ~(size_t)3);
	add_around(16384);
	add_around(65536);
	add_around(131072);
	add_around(1 << 20);
	if (argc == 3)
		add_size(64 << 20);
	if (!strcmp(argv[1], "refuse-init") && refuse_cma() < 0)
		return 0;
	bip_init();
	if (bip_numnodes != 2) {
		fprintf(stderr, "cma: needs 2 nodes\n");
		return 2;
	}
	if (!strcmp(argv[1], "refuse") && refuse_cma() < 0) {
		bip_finalize();
		return 0;
	}
	b = alloc_words(64 << 20);
	pingpong(b);
	free(b);
	all_at_once();
	printf("cma: node %d: %ld messages checked, every word\n", bip_mynode, checked);
	bip_finalize();
	return 0;
}
