/* SPDX-License-Identifier: MIT */
/*
 * shm.c - the shm driver: peers on the same host through shared memory.
 *
 * Start-up: each process creates its segment (O_CREAT|O_EXCL, mode 0600),
 * reserves its pages (posix_fallocate, so that a full /dev/shm is an error
 * now and never a SIGBUS later), publishes it (ready), then maps every
 * peer's segment as it appears and marks itself in the peer's attached
 * bitmap.  Once every peer has marked it, the owner unlinks the name: from
 * then on nothing of the job is left in /dev/shm, even after kill -9.
 *
 * Short messages and long-message announcements go into the receiver's
 * fifo, or into the fast box it lent the sender, with no lock and no
 * system call (shm_queue.c); long messages move by single copy or through
 * a pipe the receiver lends, or, small ones, from the sender's own stage
 * (shm_long.c).  A segment holds one fifo, a few boxes and pipes and a
 * stage, whatever the number of peers: the shared memory of a host grows
 * with its processes (460 KiB each), not with their pairs.
 *
 * Sleeping (BIP_WAIT=block, and auto with more local processes than
 * processors: bip_may_sleep).  A waiter with nothing to do, under the
 * core's lock, reads its bell, adds one to sleeping in its own header (a
 * count: several threads may sleep at once), and after a full fence looks
 * once more for anything published to it (shm_pending); if there is
 * nothing, it lets go of the lock and sleeps on the bell (FUTEX_WAIT, a
 * shared futex: the word is in the segment) for at most BIP_SLEEP_MAX,
 * then takes its one off sleeping (nicsleep.c).  Whoever publishes
 * something a peer waits for (bip_shm_wake) fences, and if the peer's
 * sleeping is not 0, adds one to its bell and wakes every thread on it.
 * The two fences make sure that either the waiter sees the publication or
 * the publisher sees the waiter (store, fence, load on both sides).  Only
 * a process that may sleep pays the fence; every process of a job on this
 * host computes the same answer (init.c), and one whose peer was told
 * otherwise (BIP_WAIT set differently) is woken by the time-out.  A waiter
 * that has chunks of a long message to push or pull does not sleep (their
 * progress is its own work); one whose long transfers wait for the other
 * side does (shm_pending).
 *
 * Trust: a segment is opened only if it is a regular file of this user with
 * mode 0600 and not a symbolic link (segment.h), so another user who creates
 * a job's names first gets the job refused with a message naming him, and
 * never inside it.  A peer's header must describe exactly the layout this
 * process computes for the job (bip_shm_header_check); after that check the
 * driver uses its own offsets and never reads the peer's again.  A slot's
 * fields are read once, into locals, and checked (kind, length, sender)
 * before use; indices that come from a peer are masked or range-checked
 * (shm_queue.c, shm_long.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "conf.h"
#include "core.h"
#include "nicsleep.h"
#include "pm.h"
#include "segment.h"
#include "shm.h"

#define SHM_DIR "/dev/shm"

static uint64_t bip_shm_probe_value;
int bip_shm_bells;

void bip_shm_wake_slow(struct bip_shm_peer *p)
{
	struct bip_shm_header *h = p->seg;

	/* Orders the publication before the read of sleeping (see Sleeping). */
	bip_fence();
	if (!bip_load_relaxed(&h->sleeping))
		return;
	__atomic_fetch_add(&h->bell, 1, __ATOMIC_RELAXED);
	syscall(SYS_futex, &h->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t bip_shm_segment_size(int n, uint64_t off[BIP_SHM_PARTS])
{
	size_t bitmap = ((size_t)n / 64 + 1) * sizeof(uint64_t);
	size_t sizes[BIP_SHM_PARTS] = {
		[BIP_SHM_ATTACHED] = bitmap,
		[BIP_SHM_WANTED] = bitmap,
		[BIP_SHM_FIFO] = sizeof(struct bip_shm_fifo),
		[BIP_SHM_BOXES_AT] = BIP_SHM_BOXES * sizeof(struct bip_shm_box),
		[BIP_SHM_PIPES_AT] = BIP_SHM_PIPES * sizeof(struct bip_shm_pipe),
		[BIP_SHM_STAGE] = sizeof(struct bip_shm_stage),
		[BIP_SHM_LSEND] = BIP_SHM_LSENDS * sizeof(struct bip_shm_lsend),
		[BIP_SHM_LDONE] = BIP_SHM_LSENDS * sizeof(uint32_t),
	};
	size_t at = align_up(sizeof(struct bip_shm_header), 64);
	int i;

	for (i = 0; i < BIP_SHM_PARTS; i++) {
		off[i] = at;
		at = align_up(at + sizes[i], 64);
	}
	return align_up(at, 4096);
}

int bip_shm_header_check(const struct bip_shm_header *h, size_t seglen, int numnodes, int node,
			 char *err, size_t errlen)
{
	uint64_t off[BIP_SHM_PARTS];
	size_t size;
	struct bip_shm_header c;

	if (seglen < sizeof(c)) {
		snprintf(err, errlen, "%zu bytes, less than a header", seglen);
		return -EPROTO;
	}
	/* One read of each field: the peer may change them meanwhile. */
	memcpy(&c, h, sizeof(c));
	if (c.magic != BIP_SHM_MAGIC) {
		snprintf(err, errlen, "no BIP segment (magic %#x)", c.magic);
		return -EPROTO;
	}
	if (c.version != BIP_SHM_VERSION) {
		snprintf(err, errlen, "layout version %u, this library's is %u (another BIP?)",
			 c.version, BIP_SHM_VERSION);
		return -EPROTO;
	}
	if (numnodes < 1 || c.numnodes != (uint32_t)numnodes || c.node != (uint32_t)node) {
		snprintf(err, errlen, "node %u of %u nodes, expected node %d of %d", c.node,
			 c.numnodes, node, numnodes);
		return -EPROTO;
	}
	size = bip_shm_segment_size(numnodes, off);
	if (c.size != size || seglen != size || memcmp(c.off, off, sizeof(off))) {
		snprintf(err, errlen, "size %llu (file %zu) or the offsets of its parts differ "
			 "from the layout of %d nodes (%zu bytes)", (unsigned long long)c.size,
			 seglen, numnodes, size);
		return -EPROTO;
	}
	if (c.pid <= 0) {
		snprintf(err, errlen, "process id %d", c.pid);
		return -EPROTO;
	}
	return 0;
}

static void seg_name(char *buf, size_t len, const char *jobid, int node)
{
	char prefix[80];

	bip_shm_prefix(prefix, sizeof(prefix), (unsigned)getuid(), jobid);
	snprintf(buf, len, "/%s%d", prefix, node);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

static int shm_available(char *why, size_t len)
{
	struct statvfs st;

	if (statvfs(SHM_DIR, &st) < 0) {
		snprintf(why, len, "%s: %s", SHM_DIR, strerror(errno));
		return 0;
	}
	return 1;
}

/* The part `part` of a segment, at the offsets this process computed,
 * never at the ones a peer's header says. */
static void *part_of(const struct bip_shm *shm, struct bip_shm_header *h, int part)
{
	return (char *)h + shm->off[part];
}

void bip_shm_attach_mem(struct bip_shm *shm, int node, struct bip_shm_header *h, pid_t pid)
{
	struct bip_shm_peer *p = &shm->peers[node];

	p->seg = h;
	p->seg_size = shm->self_size;
	p->pid = pid;
	p->attached = part_of(shm, h, BIP_SHM_ATTACHED);
	p->wanted = part_of(shm, h, BIP_SHM_WANTED);
	p->fifo = part_of(shm, h, BIP_SHM_FIFO);
	p->boxes = part_of(shm, h, BIP_SHM_BOXES_AT);
	p->pipes = part_of(shm, h, BIP_SHM_PIPES_AT);
	p->stage = part_of(shm, h, BIP_SHM_STAGE);
	p->lsend = part_of(shm, h, BIP_SHM_LSEND);
	p->ldone = part_of(shm, h, BIP_SHM_LDONE);
}

int bip_shm_init(struct bip_shm *shm, int mynode, int numnodes, struct bip_shm_header *seg)
{
	int i;

	shm->mynode = mynode;
	shm->numnodes = numnodes;
	shm->self_size = bip_shm_segment_size(numnodes, shm->off);
	shm->box_after = 16;
	shm->peers = calloc((size_t)numnodes, sizeof(*shm->peers));
	shm->local = calloc((size_t)numnodes, sizeof(*shm->local));
	shm->holding = calloc((size_t)numnodes, sizeof(*shm->holding));
	shm->pipe_wait = calloc((size_t)numnodes, sizeof(*shm->pipe_wait));
	shm->pushing = calloc((size_t)numnodes, sizeof(*shm->pushing));
	if (!shm->peers || !shm->local || !shm->holding || !shm->pipe_wait || !shm->pushing)
		return -ENOMEM;
	for (i = 0; i < numnodes; i++) {
		shm->peers[i].node = i;
		shm->peers[i].lease = -1;
		shm->peers[i].box_in = -1;
		shm->peers[i].pipe_in = -1;
	}
	for (i = 0; i < BIP_SHM_BOXES; i++) {
		shm->box_own[i].box = &((struct bip_shm_box *)part_of(shm, seg, BIP_SHM_BOXES_AT))[i];
		shm->box_own[i].lessee = -1;
	}
	shm->self = seg;
	shm->me = &shm->peers[mynode];
	bip_shm_attach_mem(shm, mynode, seg, getpid());
	bip_shm_watch_update(shm);
	bip_shm_long_init(shm);
	return 0;
}

void bip_shm_fini(struct bip_shm *shm)
{
	if (shm->peers) {
		bip_shm_long_fini(shm);
		bip_shm_queues_fini(shm);
	}
	free(shm->peers);
	free(shm->local);
	free(shm->holding);
	free(shm->pipe_wait);
	free(shm->pushing);
	shm->peers = NULL;
}

/* Create, size and publish my segment. */
static int create_self(struct bip_shm *shm, const struct bip_nic_job *job)
{
	size_t size = shm->self_size;
	struct bip_shm_header *h;
	struct statvfs st;
	int fd, rc;

	seg_name(shm->name, sizeof(shm->name), job->jobid, job->mynode);
	if (statvfs(SHM_DIR, &st) == 0 && (uint64_t)st.f_bavail * st.f_frsize < size) {
		snprintf(job->err, job->errlen, "%s has %llu KiB free, the shm driver needs "
			 "%zu KiB for %d nodes", SHM_DIR,
			 (unsigned long long)st.f_bavail * st.f_frsize / 1024, size / 1024,
			 job->numnodes);
		return -ENOSPC;
	}
	fd = bip_segment_open(shm->name, O_CREAT | O_EXCL | O_RDWR, NULL, job->err, job->errlen);
	if (fd < 0)
		return fd;
	rc = -posix_fallocate(fd, 0, (off_t)size);
	if (rc < 0) {
		snprintf(job->err, job->errlen, "cannot reserve %zu KiB of shared memory in %s: %s",
			 size / 1024, SHM_DIR, strerror(-rc));
		goto undo_create;
	}
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		rc = -errno;
		snprintf(job->err, job->errlen, "cannot map shared memory %s: %s", shm->name,
			 strerror(-rc));
		goto undo_create;
	}
	if (job->grows)
		shm->segfd = fd; /* for the nodes that join later (grow.c) */
	else
		close(fd);
	h->magic = BIP_SHM_MAGIC;
	h->version = BIP_SHM_VERSION;
	h->numnodes = (uint32_t)job->numnodes;
	h->node = (uint32_t)job->mynode;
	h->pid = (int32_t)getpid();
	h->size = size;
	memcpy(h->off, shm->off, sizeof(h->off));
	bip_shm_probe_value = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h ^ 0x5a5aa5a5u;
	h->probe_addr = (uint64_t)(uintptr_t)&bip_shm_probe_value;
	h->probe_value = bip_shm_probe_value;
	rc = bip_shm_init(shm, job->mynode, job->numnodes, h);
	if (rc < 0) {
		munmap(h, size);
		goto undo_map;
	}
	/* Pairs with the acquire of ready in attach_peer. */
	bip_store_release(&h->ready, 1);
	return 0;

undo_create:
	close(fd);
undo_map:
	shm_unlink(shm->name);
	return rc;
}

/*
 * Single copy: let the peer of pid read this process's memory with
 * process_vm_readv, as narrowly as Yama allows.  Without Yama, or in its
 * classic mode 0, the kernel allows it between processes of one user and
 * nothing is needed; in mode 1 (restricted to descendants) the process names
 * its one peer, or any process when it has several peers, since the kernel
 * keeps a single exception; modes 2 and 3 refuse it whatever is set, and the
 * probe then falls back to the pipe.
 */
static void allow_reads(struct bip_shm *shm, pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope != 1)
		return;
	if (shm->nlocal == 1)
		prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0);
	else
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

/*
 * Map node's segment from fd (whose stat is st), check it and take it:
 * 0, -EAGAIN when it is not ready yet, or -EPROTO and others with a
 * message in err.
 */
static int map_peer(struct bip_shm *shm, int node, int fd, const struct stat *st,
		    const char *name, char *err, size_t errlen)
{
	struct bip_shm_header *h;
	char why[256];
	pid_t pid;
	int rc;

	if (st->st_size < (off_t)shm->self_size)
		return -EAGAIN; /* created, not yet sized: the owner sizes it before ready */
	/* Map only the size of the layout, whatever the file's size: a
	 * bigger file fails the header check below. */
	h = mmap(NULL, shm->self_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -errno;
	/* Pairs with the release of ready in create_self. */
	if (!bip_load_acquire(&h->ready)) {
		munmap(h, shm->self_size);
		return -EAGAIN;
	}
	rc = bip_shm_header_check(h, (size_t)st->st_size, shm->numnodes, node, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "shared memory %s of node %d is not a segment of this job: "
			 "%s", name, node, why);
		munmap(h, shm->self_size);
		return rc;
	}
	pid = h->pid;
	if (pid <= 0) { /* changed since the check */
		snprintf(err, errlen, "shared memory %s of node %d: process id %d", name, node,
			 pid);
		munmap(h, shm->self_size);
		return -EPROTO;
	}
	bip_shm_attach_mem(shm, node, h, pid);
	if (shm->cma_min != SIZE_MAX)
		allow_reads(shm, pid);
	/* Tell the owner we have it mapped (start-up only: a locked atomic is
	 * fine).  After allow_reads: the owner probes single copy from us
	 * only once every peer has said so. */
	__atomic_fetch_or(&shm->peers[node].attached[shm->mynode / 64],
			  1ull << (shm->mynode % 64), __ATOMIC_RELEASE);
	return 0;
}

/* Try once to map the segment of node; 0 when mapped, -EAGAIN when not there yet. */
static int attach_peer(struct bip_shm *shm, const struct bip_nic_job *job, int node)
{
	char name[96], path[sizeof(SHM_DIR) + 96];
	struct stat st;
	int fd, rc;

	seg_name(name, sizeof(name), job->jobid, node);
	fd = bip_segment_open(name, O_RDWR, &st, job->err, job->errlen);
	if (fd == -ENOENT)
		return -EAGAIN;
	if (fd < 0)
		return -EPROTO; /* the message is in job->err */
	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	rc = map_peer(shm, node, fd, &st, path, job->err, job->errlen);
	close(fd);
	return rc;
}

int bip_shm_reach_node(struct bip_shm *shm, int node, char *err, size_t errlen)
{
	char path[64];
	struct stat st;
	pid_t pid;
	int fd, pidfd, rc;

	if (node < 0 || node >= shm->numnodes || node == shm->mynode) {
		snprintf(err, errlen, "node %d is not a node of this job", node);
		return -EINVAL;
	}
	if (shm->peers[node].seg)
		return 0;
	rc = bip_pm_where(node, &pid, &pidfd, err, errlen);
	if (rc < 0)
		return rc;
	fd = bip_segment_reopen(pid, pidfd, &st, err, errlen);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, pidfd);
	rc = map_peer(shm, node, fd, &st, path, err, errlen);
	close(fd);
	if (rc == 0 && shm->peers[node].pid != pid) {
		/* The segment is another process's than bipload said. */
		snprintf(err, errlen, "the segment held by process %d is process %d's", (int)pid,
			 (int)shm->peers[node].pid);
		munmap(shm->peers[node].seg, shm->self_size);
		shm->peers[node].seg = NULL;
		return -EPROTO;
	}
	if (rc == 0)
		shm->local[shm->nlocal++] = node;
	return rc;
}

static int shm_reach(struct bip_nic *nic, int node, char *err, size_t errlen)
{
	return bip_shm_reach_node(bip_shm_of(nic), node, err, errlen);
}

int bip_shm_segment_fd(struct bip_nic *nic)
{
	return bip_shm_of(nic)->segfd;
}

static int all_attached_me(struct bip_shm *shm)
{
	int i;

	for (i = 0; i < shm->nlocal; i++) {
		int n = shm->local[i];

		if (!(bip_load_acquire(&shm->me->attached[n / 64]) & (1ull << (n % 64))))
			return 0;
	}
	return 1;
}

/* List the nodes that have not shown up, for the time-out message. */
static void missing_nodes(struct bip_shm *shm, const struct bip_nic_job *job)
{
	size_t used;
	int i, any = 0;

	used = (size_t)snprintf(job->err, job->errlen, "timed out after %.0f s waiting for node",
				job->timeout);
	for (i = 0; i < shm->nlocal && used < job->errlen; i++) {
		int n = shm->local[i];

		if (shm->peers[n].seg && (bip_load_acquire(&shm->me->attached[n / 64]) &
					  (1ull << (n % 64))))
			continue;
		used += (size_t)snprintf(job->err + used, job->errlen - used, "%s %d (%s)",
					 any ? "," : "", n, job->conf->nodes[n].host);
		any = 1;
	}
	if (used < job->errlen)
		snprintf(job->err + used, job->errlen - used,
			 "; they never started bip_init, or started in another job");
}

static int wait_for_peers(struct bip_shm *shm, const struct bip_nic_job *job)
{
	double deadline = now_s() + job->timeout;
	int i, rc, pending;

	for (;;) {
		pending = 0;
		for (i = 0; i < shm->nlocal; i++) {
			int n = shm->local[i];

			if (shm->peers[n].seg)
				continue;
			rc = attach_peer(shm, job, n);
			if (rc == -EAGAIN) {
				pending = 1;
			} else if (rc < 0) {
				if (rc != -EPROTO)
					snprintf(job->err, job->errlen, "cannot map the shared "
						 "memory of node %d: %s", n, strerror(-rc));
				return rc;
			}
		}
		if (!pending && all_attached_me(shm))
			return 0;
		if (now_s() > deadline) {
			missing_nodes(shm, job);
			return -ETIMEDOUT;
		}
		nap();
	}
}

static size_t env_size(const char *name, size_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || end == s) {
		fprintf(stderr, "bip: %s=%s is not a size; ignored\n", name, s);
		return def;
	}
	return (size_t)v;
}

static void shm_close(struct bip_nic *nic);

static int shm_open_nic(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct bip_shm *shm;
	int i, rc;

	if (job->numnodes > 65536) {
		snprintf(job->err, job->errlen, "the shm driver serves at most 65536 nodes, the "
			 "job has %d", job->numnodes);
		return -EINVAL;
	}
	shm = calloc(1, sizeof(*shm));
	if (!shm)
		return -ENOMEM;
	shm->nic.ops = &bip_shm_ops;
	shm->nic.max_short = sizeof(((struct bip_shm_slot *)0)->payload);
	shm->unlinked = 1;
	shm->segfd = -1;
	bip_shm_bells = bip_may_sleep();
	shm->self_size = bip_shm_segment_size(job->numnodes, shm->off);
	/* The pipelined copy measured faster than process_vm_readv at every
	 * size (figures in bip_shm(7)), so single copy is used only from the
	 * size the user sets. */
	shm->cma_min = env_size("BIP_SHM_CMA_MIN", SIZE_MAX);
	if (getenv("BIP_SHM_CMA") && !strcmp(getenv("BIP_SHM_CMA"), "0"))
		shm->cma_min = SIZE_MAX;
	rc = create_self(shm, job);
	if (rc < 0)
		goto undo;
	shm->unlinked = 0;
	for (i = 0; i < job->numnodes; i++)
		if (job->serve[i])
			shm->local[shm->nlocal++] = i;
	rc = wait_for_peers(shm, job);
	if (rc < 0)
		goto undo;
	/* Every peer has mapped my segment: its name is no longer needed. */
	shm_unlink(shm->name);
	shm->unlinked = 1;
	if (shm->cma_min != SIZE_MAX)
		bip_shm_probe_cma(shm);
	*nic_p = &shm->nic;
	return 0;

undo:
	shm_close(&shm->nic);
	return rc;
}

static void shm_close(struct bip_nic *nic)
{
	struct bip_shm *shm = bip_shm_of(nic);
	int i;

	if (!shm->unlinked)
		shm_unlink(shm->name);
	if (shm->segfd >= 0)
		close(shm->segfd);
	for (i = 0; shm->peers && i < shm->numnodes; i++)
		if (shm->peers[i].seg && i != shm->mynode)
			munmap(shm->peers[i].seg, shm->peers[i].seg_size);
	bip_shm_fini(shm);
	if (shm->self)
		munmap(shm->self, shm->self_size);
	free(shm);
}

static int shm_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len)
{
	return bip_shm_post(bip_shm_of(nic), dst, BIP_SHM_SHORT, tag, buf, len, NULL, 0);
}

/* A layer's header and data, copied one after the other into one slot. */
static int shm_post_short2(struct bip_nic *nic, int dst, uint32_t tag, const void *hdr,
			   size_t hlen, const void *buf, size_t len)
{
	return bip_shm_post(bip_shm_of(nic), dst, BIP_SHM_SHORT, tag, hdr, hlen, buf, len);
}

/* A peer is gone once its process has exited (or is a zombie not yet reaped). */
static int shm_alive(struct bip_nic *nic, int node)
{
	struct bip_shm_peer *p = &bip_shm_of(nic)->peers[node];

	if (!p->seg || node == bip_shm_of(nic)->mynode)
		return 0;
	return bip_process_runs((int)p->pid);
}

/*
 * Something to do before sleeping: a message queued, or chunks of a long
 * transfer that this process can move now (bip_shm_long_pending).  A long
 * send only announced, whose receiver has not come or copies it by itself
 * (process_vm_readv), waits for the receiver: its claim comes as a
 * message and its end rings the bell (shm_long.c), so it is no reason to
 * stay awake; nor is a pull whose sender does not fill the pipe, or a push
 * whose pipe is full: the other side rings the bell when it moves.  A
 * relay holding packets for a process that computes, or taking one from a
 * process that stopped polling halfway through its send, sleeps so.
 */
static int shm_pending(struct bip_shm *shm)
{
	return ((shm->npulls || shm->npushing) && bip_shm_long_pending(shm)) ||
	       bip_shm_queues_pending(shm);
}

static int shm_pending_arg(void *shm)
{
	return shm_pending(shm);
}

/* Arm the sleep on this process's bell (nicsleep.c); the wait is shared. */
static int shm_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_shm *shm = bip_shm_of(nic);
	struct bip_shm_header *h = shm->self;

	return bip_nicsleep_arm(&h->sleeping, &h->bell, shm_pending_arg, shm, s);
}

const struct bip_nic_ops bip_shm_ops = {
	.name = "shm",
	.post_per_peer = 1,
	.available = shm_available,
	.open = shm_open_nic,
	.post_short = shm_post_short,
	.post_short2 = shm_post_short2,
	.post_long = bip_shm_post_long,
	.post_long_recv = bip_shm_post_long_recv,
	.poll = bip_shm_poll,
	.alive = shm_alive,
	.sleep_arm = shm_sleep_arm,
	.sleep_wait = bip_nicsleep_wait,
	.close = shm_close,
	.reach = shm_reach,
};
