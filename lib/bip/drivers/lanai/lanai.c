/* SPDX-License-Identifier: MIT */
/*
 * lanai.c - the lanai driver: the host side of the simulated LANai board.
 *
 * The firmware (lanai-sim, one process per host) owns the boards; this
 * driver maps the job's board segment, attaches to its node's board, and
 * then talks to it only through the board's memory:
 *
 *  - a send is a descriptor written into the send ring and published by
 *    its sequence number; the doorbell (a futex wake, the only system call)
 *    is rung only when the firmware has said it sleeps (need_doorbell);
 *  - a waiting process that sleeps (BIP_WAIT=block, or auto with more
 *    local processes and firmware than processors) does it the same way
 *    round: it counts its sleeping threads in its board (host_sleeps),
 *    and the firmware wakes them all after it publishes an event for it
 *    (lanai_sleep_arm, and wake_hosts in lanai-sim);
 *  - a long send gives the firmware the address of the user's buffer: the
 *    firmware reads it itself (process_vm_readv) when the receiver has
 *    posted its buffer, and writes it straight there (process_vm_writev);
 *  - arrivals are written by the firmware straight into the core's per-tag
 *    queues (the core offers them because this driver serves every peer):
 *    the driver moves the queues into its DMA window, a memfd the firmware
 *    maps too, and lists them in the board at attach; the firmware keeps
 *    what does not fit until the core frees room, so the core never refuses
 *    anything here;
 *  - everything that happens comes back as events in the event queue,
 *    which poll hands to the core (for arrivals: which queue has a new
 *    entry);
 *  - one-sided operations (nic.h's rma_ ops, bip_rma(3)) are descriptors
 *    of kind RMA on rail 0's board, in either mode: the board exposes this
 *    process's memory, executes the operations of the job's boards on it
 *    without this process, and moves this process's own operations with
 *    a reliability of its own (nic_firmware_sim/rma.c); their completion
 *    comes back as an RMA_DONE event, which poll hands to the core.
 *
 * That is message mode (BIP_LANAI_RELIABLE=0), for fault-free wires: a
 * fault the board detects (corrupt, duplicated, lost or reordered packet,
 * wrong route, link down) is fatal to this process: the driver prints the
 * board's report and exits with status 1, so that bipload names the node
 * and stops the job.  Nothing corrupt, duplicated or out of order is ever
 * handed to the core.
 *
 * In datagram mode (the default) the driver declares itself unreliable
 * (rel.h) and the reliability layer repairs what the wire does:
 *
 *  - a datagram is a descriptor of kind DGRAM: the layer's header and a
 *    short message's data in the descriptor itself, a fragment's data read
 *    by the firmware from the user's buffer (its DMA), so that a long send
 *    is still never copied on the host;
 *  - the firmware writes arriving datagrams into one receive queue in the
 *    DMA window (entries laid out as a tag queue's, tagq.h) and tells the
 *    host with an event; the driver hands each to the layer and frees it;
 *  - the board counts the faults it sees and drops what fails its checks,
 *    without stopping; it tells the host only of a link that cannot deliver
 *    (down, or a wrong route), which the layer takes as a path down.
 *
 * Nodes that join (bip_grow(3)).  In a job that may grow, the firmware has
 * boards for the whole room (lanai-sim -u), and the boards of the nodes
 * that have not joined stay ready, unattached.  A node that joins
 * reserves its boards' memory in the segment (reserve_board), attaches
 * them as any node does, and waits only for the nodes it started with.
 * reach says whether a node's boards run: attached (0), not yet (-EAGAIN;
 * -ESRCH if bipload says the job has no such node yet) or released (the
 * node has ended).  In message mode an event from a
 * node the core has not reached tells the core the node is ours
 * (bip_core_peer_joined); in datagram mode the layer does it (rel.c).
 *
 * Rails.  A host may give each node several boards (BIP_LANAI_RAILS, or a
 * configuration with a route per rail on each line): board r of every node
 * is on network r.  In datagram mode the driver attaches one instance per
 * board and presents them to the layer as one NIC of npaths paths, path r
 * being board r: rail 0's instance is the one the layer sees, and it hands
 * sends to the board of their path and polls every board.  Message mode
 * uses one board and refuses a host with several.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "conf.h"
#include "core.h"
#include "lanai.h"
#include "nicsleep.h"
#include "pm.h"
#include "segment.h"
#include "lanai_board.h"
#include "lanai_ring.h"
#include "rel.h"
#include "tagq.h"

struct bip_lanai_peer {
	const struct bip_lanai_regs *regs; /* the peer's board, for its state */
	int reached;			   /* message mode: the core knows it is ours */
};

/* A long receive waiting for an entry of the board's table. */
struct bip_lanai_lrecv_wait {
	uint64_t handle, cookie;
	void *buf;
	size_t len;
	struct bip_lanai_lrecv_wait *next;
};

struct bip_lanai {
	struct bip_nic nic;
	int mynode, numnodes;
	struct bip_lanai_fw *fw;
	size_t fw_size;
	uint64_t off_boards, board_size;  /* the layout computed here */
	struct bip_lanai_regs *regs;
	struct bip_lanai_desc *send;
	struct bip_lanai_event *events;
	struct bip_lanai_lrecv *lrecv;
	struct bip_lanai_post *post;
	struct bip_lanai_prod sendp, postp;
	uint32_t ev_cons, ev_published;
	uint16_t lfree[BIP_LANAI_LRECV_SLOTS];
	int nlfree;
	struct bip_lanai_lrecv_wait *lwait_head, *lwait_tail;
	struct bip_lanai_peer *peers;
	int grows;	/* the job may grow: its nodes past known join later */
	void *qwin; /* the DMA window: the tag queues, or the receive queue */
	size_t qwin_size;
	int qwin_fd;
	int attached;
	/* datagram mode */
	int dgram_mode;
	struct bip_dgram dg;
	uint32_t rx_cap;   /* bytes of the receive queue, at the window's start */
	uint32_t rx_read;  /* offset of the next entry */
	uint32_t rx_freed; /* bytes freed, published for the firmware (release) */
	unsigned rx_unread;
	/* rails: this board's rail; the instance of rail 0 (which the layer
	 * sees) holds every rail's, itself first */
	int rail, nrails;
	struct bip_lanai *top;
	struct bip_lanai *rails[BIP_REL_MAXPATHS];
};

static inline struct bip_lanai *lanai_of(struct bip_nic *nic)
{
	return (struct bip_lanai *)nic;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(void)
{
	struct timespec ts = {0, 1000000};

	nanosleep(&ts, NULL);
}

static bip_cold void ring_doorbell(struct bip_lanai *l)
{
	bip_store_relaxed(&l->regs->doorbells, bip_load_relaxed(&l->regs->doorbells) + 1);
	__atomic_fetch_add(&l->fw->wake, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &l->fw->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* After publishing a slot: wake the firmware if it sleeps. */
static inline void doorbell(struct bip_lanai *l)
{
	/* Orders the slot's publication before the read of need_doorbell; pairs
	 * with the fence the firmware makes between setting need_doorbell and
	 * looking at the rings once more before it sleeps. */
	bip_fence();
	if (bip_unlikely(bip_load_relaxed(&l->regs->need_doorbell)))
		ring_doorbell(l);
}

static int lanai_available(char *why, size_t len)
{
	struct stat st;

	if (stat("/dev/shm", &st) < 0) {
		snprintf(why, len, "/dev/shm: %s", strerror(errno));
		return 0;
	}
	return 1;
}

/*
 * A node that joined: the memory of its board of this rail, which the
 * firmware left to it (it reserves only the first nodes' boards and the
 * register pages of the others), so that a full /dev/shm is an error here
 * rather than a SIGBUS later.  The layout is checked once mapped: here
 * only the range that the node's board would have, within the file.
 */
static int reserve_board(struct bip_lanai *l, const struct bip_nic_job *job, int fd,
			 const struct stat *st)
{
	uint64_t o1, o2, o3, o4, o5, bsize = bip_lanai_board_layout(&o1, &o2, &o3, &o4, &o5);
	uint64_t off = ((sizeof(struct bip_lanai_fw) + 4095) & ~(uint64_t)4095) +
		       ((uint64_t)l->rail * (uint64_t)job->numnodes + (uint64_t)job->mynode) * bsize;
	int rc;

	if (off + bsize > (uint64_t)st->st_size)
		return 0; /* not this layout: said once mapped */
	rc = posix_fallocate(fd, (off_t)off, (off_t)bsize);
	if (rc) {
		snprintf(job->err, job->errlen, "lanai: no room for the board of node %d (rail %d) "
			 "in /dev/shm: %s", job->mynode, l->rail, strerror(rc));
		return -rc;
	}
	return 0;
}

/* Map the job's board segment; fails at once if no firmware serves the job. */
static int map_segment(struct bip_lanai *l, const struct bip_nic_job *job)
{
	char name[128], why[512];
	struct stat st;
	double deadline = now_s() + 2.0;
	uint64_t bsize, o1, o2, o3, o4, o5;
	void *p;
	int fd, rc;

	rc = bip_lanai_segment_name(name, sizeof(name), job->jobid);
	if (rc < 0) {
		snprintf(job->err, job->errlen, "lanai: job id %s too long", job->jobid);
		return rc;
	}
	for (;;) {
		/* Only a regular file of this user, mode 0600, no link (segment.h). */
		fd = bip_segment_open(name, O_RDWR, &st, why, sizeof(why));
		if (fd >= 0 && st.st_size >= (off_t)sizeof(*l->fw))
			break;
		rc = fd < 0 ? fd : -EAGAIN;
		if (fd >= 0)
			close(fd);
		if (rc != -ENOENT && rc != -EAGAIN) {
			snprintf(job->err, job->errlen, "lanai: the board segment: %s", why);
			return rc;
		}
		if (now_s() > deadline) {
			snprintf(job->err, job->errlen,
				 "lanai: no simulated board: lanai-sim is not running for job %s "
				 "on this host (no /dev/shm%s); run the program with bipload "
				 "(BIP_NIC=lanai starts lanai-sim), or start 'lanai-sim -j %s "
				 "-n %d' first",
				 job->jobid, name, job->jobid, job->numnodes);
			return -ENODEV;
		}
		nap();
	}
	rc = job->grows && job->first > 0 ? reserve_board(l, job, fd, &st) : 0;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		rc = -errno;
		snprintf(job->err, job->errlen, "lanai: cannot map %s: %s", name, strerror(-rc));
		return rc;
	}
	l->fw = p;
	l->fw_size = (size_t)st.st_size;
	/* Pairs with the release of ready in the firmware. */
	while (!bip_load_acquire(&l->fw->ready)) {
		if (now_s() > deadline) {
			snprintf(job->err, job->errlen,
				 "lanai: the firmware (pid %d) did not "
				 "make its boards ready",
				 (int)l->fw->pid);
			return -ETIMEDOUT;
		}
		nap();
	}
	if (l->fw->magic != BIP_LANAI_MAGIC || l->fw->version != BIP_LANAI_VERSION ||
	    l->fw->size != (uint64_t)st.st_size) {
		snprintf(job->err, job->errlen,
			 "lanai: %s is not a board segment of version %d "
			 "(magic 0x%x, version %u)",
			 name, BIP_LANAI_VERSION, l->fw->magic, l->fw->version);
		return -EPROTO;
	}
	if (l->fw->nnodes != (uint32_t)job->numnodes || l->fw->nrails < 1 ||
	    l->fw->nrails > BIP_REL_MAXPATHS ||
	    l->fw->nboards != (uint64_t)l->fw->nnodes * l->fw->nrails) {
		snprintf(job->err, job->errlen,
			 "lanai: the firmware (pid %d) serves %u boards of %u nodes on %u rails, "
			 "the job has %d nodes (and at most %d rails)",
			 (int)l->fw->pid, l->fw->nboards, l->fw->nnodes, l->fw->nrails,
			 job->numnodes, BIP_REL_MAXPATHS);
		return -EPROTO;
	}
	l->nrails = (int)l->fw->nrails;
	/* The boards lie where this library's layout puts them, and only
	 * there: the segment's own offsets are checked, then never used. */
	bsize = bip_lanai_board_layout(&o1, &o2, &o3, &o4, &o5);
	l->off_boards = (sizeof(struct bip_lanai_fw) + 4095) & ~(uint64_t)4095;
	l->board_size = bsize;
	if (l->fw->off_boards != l->off_boards || l->fw->board_size != bsize ||
	    (uint64_t)st.st_size != l->off_boards + bsize * (uint64_t)l->fw->nboards) {
		snprintf(job->err, job->errlen, "lanai: %s: boards at %llu of %llu bytes in %llu "
			 "bytes, not the layout of %u boards", name,
			 (unsigned long long)l->fw->off_boards,
			 (unsigned long long)l->fw->board_size, (unsigned long long)st.st_size,
			 l->fw->nboards);
		return -EPROTO;
	}
	return 0;
}

/* The board of node on this instance's rail. */
static struct bip_lanai_regs *board_of(struct bip_lanai *l, int node)
{
	return (struct bip_lanai_regs *)((char *)l->fw + l->off_boards +
					 ((size_t)l->rail * l->numnodes + node) * l->board_size);
}

/*
 * The DMA window: memory the firmware maps as well (a memfd it opens
 * through /proc), where the core's tag queues move so that the firmware
 * writes arrivals into them as a board's DMA engine writes host memory,
 * with no system call.  Each queue starts on a cache line.
 */
static size_t window_span(uint32_t cap)
{
	return ((size_t)cap + BIP_CACHELINE - 1) & ~(size_t)(BIP_CACHELINE - 1);
}

static int make_window(struct bip_lanai *l, const struct bip_nic_job *job)
{
	size_t size = 0, off = 0;
	void *p;
	int i, fd;

	if (l->dgram_mode)
		size = window_span(l->rx_cap);
	for (i = 0; !l->dgram_mode && i < job->ntags; i++)
		size += window_span(job->tagqs[i].cap);
	fd = memfd_create("bip-lanai-queues", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		snprintf(job->err, job->errlen, "lanai: cannot make the DMA window of %zu KiB: %s",
			 size / 1024, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(job->err, job->errlen, "lanai: cannot map the DMA window: %s",
			 strerror(errno));
		close(fd);
		return -ENOMEM;
	}
	l->qwin = p;
	l->qwin_size = size;
	l->qwin_fd = fd;
	for (i = 0; !l->dgram_mode && i < job->ntags; i++) {
		job->tagqs[i].buf = (char *)p + off;
		off += window_span(job->tagqs[i].cap);
	}
	return 0;
}

/* Attach to my board: reset it through the control register and wait until it runs. */
static int attach_board(struct bip_lanai *l, const struct bip_nic_job *job)
{
	struct bip_lanai_regs *r = board_of(l, l->mynode);
	struct bip_lanai_tagq *tq;
	double deadline;
	uint32_t state;
	int i;

	if (r->magic != BIP_LANAI_MAGIC || r->node != (uint32_t)l->mynode ||
	    r->rail != (uint32_t)l->rail ||
	    r->send_slots != BIP_LANAI_SEND_SLOTS || r->event_slots != BIP_LANAI_EVENT_SLOTS ||
	    r->lrecv_slots != BIP_LANAI_LRECV_SLOTS || r->slot_size != BIP_LANAI_SLOT_SIZE) {
		snprintf(job->err, job->errlen, "lanai: board %d of rail %d has an unexpected layout",
			 l->mynode, l->rail);
		return -EPROTO;
	}
	state = bip_load_acquire(&r->state);
	if (state != BIP_LANAI_BOARD_READY) {
		snprintf(job->err, job->errlen,
			 "lanai: the board of node %d (rail %d) is %s (process %d): "
			 "is another process of this job running as node %d?",
			 l->mynode, l->rail,
			 state == BIP_LANAI_BOARD_RUNNING ? "in use" : "released",
			 (int)r->host_pid, l->mynode);
		return -EBUSY;
	}
	if ((uint32_t)job->ntags > r->tagq_slots) {
		snprintf(job->err, job->errlen, "lanai: board %d serves %u tags, BIP has %d",
			 l->mynode, r->tagq_slots, job->ntags);
		return -EPROTO;
	}
	l->regs = r;
	l->send = (struct bip_lanai_desc *)((char *)r + r->off_send);
	l->events = (struct bip_lanai_event *)((char *)r + r->off_event);
	l->lrecv = (struct bip_lanai_lrecv *)((char *)r + r->off_lrecv);
	l->post = (struct bip_lanai_post *)((char *)r + r->off_post);
	/* Where the firmware writes arrivals: the core's tag queues, in the
	 * window; in datagram mode, the one receive queue at its start. */
	tq = (struct bip_lanai_tagq *)((char *)r + r->off_tagq);
	if (l->dgram_mode) {
		tq[0].off = 0;
		tq[0].freed_addr = (uint64_t)(uintptr_t)&l->rx_freed;
		tq[0].cap = l->rx_cap;
		r->ntags = 1;
		r->mode = BIP_LANAI_MODE_DGRAM;
	} else {
		for (i = 0; i < job->ntags; i++) {
			tq[i].off = (uint64_t)((char *)job->tagqs[i].buf - (char *)l->qwin);
			tq[i].freed_addr = (uint64_t)(uintptr_t)job->tagqs[i].freed;
			tq[i].cap = job->tagqs[i].cap;
		}
		r->ntags = (uint32_t)job->ntags;
		r->mode = BIP_LANAI_MODE_MESSAGES;
	}
	r->qwin_size = l->qwin_size;
	r->qwin_fd = l->qwin_fd;
	/* Let the firmware read and write this process's memory (its DMA). */
	prctl(PR_SET_PTRACER, (unsigned long)l->fw->pid, 0, 0, 0);
	r->host_pid = (int32_t)getpid();
	/* Pairs with the acquire of control in the firmware. */
	bip_store_release(&r->control, BIP_LANAI_CTL_ATTACH);
	l->attached = 1;
	ring_doorbell(l);
	deadline = now_s() + 10.0;
	/* Pairs with the release of state in the firmware. */
	while (bip_load_acquire(&r->state) != BIP_LANAI_BOARD_RUNNING) {
		if (now_s() > deadline || kill(l->fw->pid, 0) < 0) {
			snprintf(job->err, job->errlen,
				 "lanai: the firmware (lanai-sim, pid %d) "
				 "did not start the board of node %d (rail %d)",
				 (int)l->fw->pid, l->mynode, l->rail);
			return -ETIMEDOUT;
		}
		ring_doorbell(l);
		nap();
	}
	return 0;
}

/* Wait until the board of every served peer has been attached by its process. */
static int wait_for_peers(struct bip_lanai *l, const struct bip_nic_job *job)
{
	double deadline = now_s() + job->timeout;
	int i, pending;

	for (;;) {
		pending = 0;
		for (i = 0; i < l->numnodes; i++)
			if (job->serve[i] &&
			    bip_load_acquire(&l->peers[i].regs->state) < BIP_LANAI_BOARD_RUNNING)
				pending = 1;
		if (!pending)
			return 0;
		if (now_s() > deadline)
			break;
		if (kill(l->fw->pid, 0) < 0) {
			snprintf(job->err, job->errlen,
				 "lanai: the firmware (lanai-sim, pid %d) "
				 "has ended",
				 (int)l->fw->pid);
			return -ENODEV;
		}
		nap();
	}
	{
		size_t used = (size_t)snprintf(
		    job->err, job->errlen, "timed out after %.0f s waiting for node", job->timeout);
		int any = 0;

		for (i = 0; i < l->numnodes && used < job->errlen; i++) {
			if (!job->serve[i] ||
			    bip_load_acquire(&l->peers[i].regs->state) >= BIP_LANAI_BOARD_RUNNING)
				continue;
			used += (size_t)snprintf(job->err + used, job->errlen - used, "%s %d (%s)",
						 any ? "," : "", i, job->conf->nodes[i].host);
			any = 1;
		}
		if (used < job->errlen)
			snprintf(job->err + used, job->errlen - used,
				 "; they never started bip_init, or started in another job");
	}
	return -ETIMEDOUT;
}

/*
 * The firmware is one more process that must run for any message to move:
 * when the job's local processes and it outnumber the processors, a waiting
 * process in auto mode spins only briefly before it yields, and sleeps once
 * its wait lasts, as bip_init does when the processes alone outnumber them
 * (bip_wait_oversubscribed).  Every process of the job on this host counts
 * the same, and the firmware wakes a sleeper whatever the mode.
 */
static void adjust_spin(const struct bip_nic_job *job)
{
	int i, nlocal = 0;

	for (i = 0; i < job->known; i++)
		nlocal += bip_host_is_local(job->conf->nodes[i].host);
	bip_state.host_procs = nlocal + 1;
	if (nlocal + 1 > bip_state.host_cpus)
		bip_wait_oversubscribed();
}

static void lanai_close(struct bip_nic *nic);
static bip_cold __attribute__((noreturn)) void board_fault(struct bip_lanai *l,
							   const struct bip_lanai_event *ev);

extern const struct bip_dgram_ops bip_lanai_dgram_ops;

/* BIP_LANAI_RELIABLE: 1 (datagram mode) unless it says 0; -1 if it says
 * something else. */
static int reliable_mode(const struct bip_nic_job *job)
{
	const char *s = getenv("BIP_LANAI_RELIABLE");

	if (!s || !*s || !strcmp(s, "1"))
		return 1;
	if (!strcmp(s, "0"))
		return 0;
	snprintf(job->err, job->errlen,
		 "BIP_LANAI_RELIABLE=%s: expected 1 (the reliability layer repairs the wire's "
		 "faults) or 0 (fault-free wires only: the first fault ends the job)", s);
	return -1;
}

/* BIP_LANAI_RX_QUEUE: bytes of the datagram receive queue. */
static int rx_queue_size(const struct bip_nic_job *job, uint32_t *cap)
{
	const char *s = getenv("BIP_LANAI_RX_QUEUE");
	uint32_t least = 2 * bip_tagq_entry_size(BIP_LANAI_INLINE_MAX + 65536);
	char *end;
	unsigned long long v;

	*cap = 8u << 20;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (errno || end == s || *end || v < least || v > (1u << 30)) {
		snprintf(job->err, job->errlen,
			 "BIP_LANAI_RX_QUEUE=%s: expected bytes from %u to 1G (k and M suffixes)",
			 s, least);
		return -EINVAL;
	}
	*cap = (uint32_t)v & ~3u;
	return 0;
}

/* This node's board of rail: mapped, its window made, attached. */
static int open_rail(const struct bip_nic_job *job, int mode, uint32_t rx_cap, int rail,
		     struct bip_lanai **l_p)
{
	struct bip_lanai *l = calloc(1, sizeof(*l));
	int i, rc;

	if (!l)
		return -ENOMEM;
	l->nic.ops = &bip_lanai_ops;
	l->nic.max_short = BIP_LANAI_SHORT_MAX;
	l->nic.fills_queues = !mode;
	l->dgram_mode = mode;
	l->rx_cap = rx_cap;
	l->qwin_fd = -1;
	l->mynode = job->mynode;
	l->numnodes = job->numnodes;
	l->grows = job->grows;
	l->rail = rail;
	l->top = l;
	for (i = BIP_LANAI_LRECV_SLOTS; i-- > 0;)
		l->lfree[l->nlfree++] = (uint16_t)i;
	l->peers = calloc((size_t)job->numnodes, sizeof(*l->peers));
	if (!l->peers) {
		rc = -ENOMEM;
		goto undo;
	}
	rc = map_segment(l, job);
	if (rc < 0)
		goto undo;
	if (rail >= l->nrails) {
		/* The segment said more rails when rail 0 mapped it. */
		snprintf(job->err, job->errlen, "lanai: the board segment has %d rails now, not "
			 "the %d it had", l->nrails, rail + 1);
		rc = -EPROTO;
		goto undo;
	}
	if (!mode && l->nrails > 1) {
		snprintf(job->err, job->errlen,
			 "lanai: the firmware gives each node %d boards (rails), and message mode "
			 "(BIP_LANAI_RELIABLE=0) uses one: only the reliability layer spreads "
			 "traffic over rails (unset BIP_LANAI_RELIABLE, or run with one rail)",
			 l->nrails);
		rc = -EINVAL;
		goto undo;
	}
	for (i = 0; i < l->numnodes; i++) {
		l->peers[i].regs = board_of(l, i);
		l->peers[i].reached = job->serve[i];
	}
	rc = make_window(l, job);
	if (rc < 0)
		goto undo;
	rc = attach_board(l, job);
	if (rc < 0)
		goto undo;
	*l_p = l;
	return 0;

undo:
	lanai_close(&l->nic);
	return rc;
}

static int lanai_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	struct bip_lanai *l;
	int k, rc, mode = reliable_mode(job);
	uint32_t rx_cap = 0;

	if (mode < 0)
		return -EINVAL;
	if (mode && (rc = rx_queue_size(job, &rx_cap)) < 0)
		return rc;
	if (!mode && !job->tagqs) {
		/* The firmware writes the tag queues: it must be their only writer. */
		snprintf(job->err, job->errlen, "lanai: the board must serve every other node "
			 "(BIP_NIC=lanai), since it writes the tag queues itself");
		return -EINVAL;
	}
	rc = open_rail(job, mode, rx_cap, 0, &l);
	if (rc < 0)
		return rc;
	l->rails[0] = l;
	if (mode) {
		l->dg = (struct bip_dgram){ .ops = &bip_lanai_dgram_ops, .npaths = l->nrails,
					    .mtu = 65536 };
		l->nic.dgram = &l->dg;
	}
	/* Every board first, then the peers' boards: each process attaches
	 * all of its own before it waits for anyone's. */
	for (k = 1; k < l->nrails; k++) {
		rc = open_rail(job, mode, rx_cap, k, &l->rails[k]);
		if (rc < 0)
			goto undo;
		l->rails[k]->top = l;
	}
	for (k = 0; k < l->nrails; k++) {
		rc = wait_for_peers(l->rails[k], job);
		if (rc < 0)
			goto undo;
	}
	adjust_spin(job);
	*nic_p = &l->nic;
	return 0;

undo:
	lanai_close(&l->nic);
	return rc;
}

/*
 * Before releasing the board: wait until the firmware has taken every
 * descriptor (it routes a packet as it takes it), then look for a report
 * among the events not yet read, so that a send that failed on the wire
 * (wrong route, link down) is reported even by a process that ends at once.
 */
static void drain_errors(struct bip_lanai *l)
{
	double deadline = now_s() + 10.0;
	uint32_t c;

	/* Pairs with the release of send_cons in the firmware. */
	while (bip_load_acquire(&l->regs->send_cons) != l->sendp.prod) {
		if (now_s() > deadline || (kill(l->fw->pid, 0) < 0 && errno == ESRCH))
			return;
		ring_doorbell(l);
		sched_yield();
	}
	for (c = l->ev_cons; !l->dgram_mode; c++) {
		struct bip_lanai_event *ev =
		    bip_lanai_slot(l->events, BIP_LANAI_EVENT_SLOTS, sizeof(*ev), c);

		if (!bip_lanai_ring_ready(&ev->seq, c))
			break;
		if (ev->kind == BIP_LANAI_EV_ERROR)
			board_fault(l, ev);
	}
}

static void lanai_close(struct bip_nic *nic)
{
	struct bip_lanai *l = lanai_of(nic);
	int k;

	/* The other rails' boards first (the instance of rail 0 holds them). */
	for (k = 1; k < BIP_REL_MAXPATHS; k++)
		if (l->rails[k])
			lanai_close(&l->rails[k]->nic);

	if (l->attached && bip_load_acquire(&l->regs->state) == BIP_LANAI_BOARD_RUNNING)
		drain_errors(l);
	if (l->attached) {
		/* Pairs with the acquire of control in the firmware. */
		bip_store_release(&l->regs->control, BIP_LANAI_CTL_RELEASE);
		ring_doorbell(l);
	}
	if (l->fw)
		munmap(l->fw, l->fw_size);
	while (l->lwait_head) {
		struct bip_lanai_lrecv_wait *w = l->lwait_head;

		l->lwait_head = w->next;
		free(w);
	}
	/* The firmware has its own mapping of the window while it finishes. */
	if (l->qwin)
		munmap(l->qwin, l->qwin_size);
	if (l->qwin_fd >= 0)
		close(l->qwin_fd);
	free(l->peers);
	free(l);
}

/* Write a descriptor into the send ring and publish it; 0 or -EAGAIN. */
static inline int post_desc(struct bip_lanai *l, uint32_t kind, int dst, uint32_t tag,
			    const void *buf, size_t len, uint64_t cookie)
{
	struct bip_lanai_desc *d;

	if (!bip_lanai_ring_room(&l->sendp, &l->regs->send_cons, BIP_LANAI_SEND_SLOTS))
		return -EAGAIN;
	d = bip_lanai_slot(l->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), l->sendp.prod);
	d->kind = kind;
	d->dst = (uint32_t)dst;
	d->tag = tag;
	d->len = len;
	if (kind == BIP_LANAI_DESC_SHORT) {
		if (len) /* a zero-length message may come with no buffer */
			memcpy(d->payload, buf, len);
	} else {
		d->addr = (uint64_t)(uintptr_t)buf;
		d->cookie = cookie;
	}
	bip_lanai_ring_publish(&l->sendp, &d->seq);
	doorbell(l);
	return 0;
}

static int lanai_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len)
{
	return post_desc(lanai_of(nic), BIP_LANAI_DESC_SHORT, dst, tag, buf, len, 0);
}

static int lanai_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf, size_t len,
			   uint64_t cookie)
{
	return post_desc(lanai_of(nic), BIP_LANAI_DESC_LONG, dst, tag, buf, len, cookie);
}

/* Give a long receive to the board: an entry of the table, then its index
 * in the post ring.  There must be a free entry. */
static void post_lrecv(struct bip_lanai *l, uint64_t handle, void *buf, size_t len,
		       uint64_t cookie)
{
	struct bip_lanai_lrecv *e;
	struct bip_lanai_post *p;
	uint16_t idx;

	/* The post ring has room: at most BIP_LANAI_LRECV_SLOTS receives are
	 * posted, and the firmware takes a post before it completes it. */
	idx = l->lfree[--l->nlfree];
	e = &l->lrecv[idx];
	e->addr = (uint64_t)(uintptr_t)buf;
	e->len = len;
	e->handle = handle;
	e->cookie = cookie;
	p = bip_lanai_slot(l->post, BIP_LANAI_LRECV_SLOTS, sizeof(*p), l->postp.prod);
	p->index = idx;
	/* Publishes the table entry too. */
	bip_lanai_ring_publish(&l->postp, &p->seq);
	doorbell(l);
}

static int lanai_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
				uint64_t cookie)
{
	struct bip_lanai *l = lanai_of(nic);
	struct bip_lanai_lrecv_wait *w;

	if ((handle >> 32) >= (uint64_t)l->numnodes)
		return -EPROTO;
	if (bip_likely(l->nlfree && !l->lwait_head)) {
		post_lrecv(l, handle, buf, len, cookie);
		return 0;
	}
	/* Every entry of the table is in use: wait, in order, for one to
	 * complete (handle_event posts it then). */
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct bip_lanai_lrecv_wait){ .handle = handle, .buf = buf, .len = len,
					    .cookie = cookie };
	if (l->lwait_tail)
		l->lwait_tail->next = w;
	else
		l->lwait_head = w;
	l->lwait_tail = w;
	return 0;
}

/* Post the long receives that waited for table entries, while there are some. */
static void post_waiting(struct bip_lanai *l)
{
	struct bip_lanai_lrecv_wait *w;

	while (l->nlfree && (w = l->lwait_head)) {
		l->lwait_head = w->next;
		if (!l->lwait_head)
			l->lwait_tail = NULL;
		post_lrecv(l, w->handle, w->buf, w->len, w->cookie);
		free(w);
	}
}

/* A fault the board detected: report it and end this process. */
static bip_cold __attribute__((noreturn)) void board_fault(struct bip_lanai *l,
							   const struct bip_lanai_event *ev)
{
	char msg[BIP_LANAI_SHORT_MAX + 1];

	memcpy(msg, ev->payload, BIP_LANAI_SHORT_MAX);
	msg[BIP_LANAI_SHORT_MAX] = '\0';
	bip_error_msg("lanai", msg);
	fflush(NULL);
	/* Not exit(): the atexit handler would wait for sends that cannot end. */
	_exit(EXIT_FAILURE);
}

static void handle_event(struct bip_lanai *l, const struct bip_lanai_event *ev)
{
	/* An arrival from a node that joined the job since this one opened:
	 * the core sends back through this instance. */
	if (bip_unlikely(l->grows) &&
	    (ev->kind == BIP_LANAI_EV_SHORT || ev->kind == BIP_LANAI_EV_LONG ||
	     ev->kind == BIP_LANAI_EV_HELD || ev->kind == BIP_LANAI_EV_RELEASED) &&
	    ev->src < (uint32_t)l->numnodes && (int)ev->src != l->mynode &&
	    !l->peers[ev->src].reached) {
		l->peers[ev->src].reached = 1;
		bip_core_peer_joined(&l->nic, (int)ev->src);
	}
	switch (ev->kind) {
	case BIP_LANAI_EV_SHORT:
	case BIP_LANAI_EV_LONG:
		/* The entry is in the tag's queue already (the firmware's DMA
		 * came before the event's publication). */
		bip_core_queued(ev->tag);
		break;
	case BIP_LANAI_EV_SEND_DONE:
		bip_core_send_done(ev->cookie, ev->status);
		break;
	case BIP_LANAI_EV_RECV_DONE:
		if (ev->handle < BIP_LANAI_LRECV_SLOTS) {
			l->lfree[l->nlfree++] = (uint16_t)ev->handle;
			if (bip_unlikely(l->lwait_head))
				post_waiting(l);
		}
		bip_core_recv_done(ev->cookie, ev->status);
		break;
	case BIP_LANAI_EV_HELD:
	case BIP_LANAI_EV_RELEASED:
		/* The core tells src to hold or resume that tag (it checks
		 * src and tag: the board's words). */
		bip_core_tag_held((int)ev->src, ev->tag, ev->kind == BIP_LANAI_EV_HELD);
		break;
	case BIP_LANAI_EV_RMA_DONE:
		bip_core_rma_done(ev->cookie, ev->status, ev->handle);
		break;
	case BIP_LANAI_EV_ERROR:
		board_fault(l, ev);
	}
}

static void dgram_event(struct bip_lanai *l, const struct bip_lanai_event *ev);

/* The events of the board, in either mode (dgram_event: datagram mode). */
static int lanai_poll(struct bip_nic *nic)
{
	struct bip_lanai *l = lanai_of(nic);
	int n = 0;

	for (;;) {
		struct bip_lanai_event *ev =
		    bip_lanai_slot(l->events, BIP_LANAI_EVENT_SLOTS, sizeof(*ev), l->ev_cons);

		if (!bip_lanai_ring_ready(&ev->seq, l->ev_cons))
			break;
		if (l->dgram_mode)
			dgram_event(l, ev);
		else
			handle_event(l, ev);
		l->ev_cons++;
		n++;
	}
	if (l->ev_cons != l->ev_published) {
		l->ev_published = l->ev_cons;
		bip_lanai_ring_release(&l->regs->event_cons, l->ev_cons);
	}
	return n;
}

/* 1 if an event waits in the queue of any of this node's boards. */
static int events_waiting(struct bip_lanai *l)
{
	int k;

	for (k = 0; k < l->nrails; k++) {
		struct bip_lanai *b = l->rails[k];
		struct bip_lanai_event *ev =
		    bip_lanai_slot(b->events, BIP_LANAI_EVENT_SLOTS, sizeof(*ev), b->ev_cons);

		if (bip_lanai_ring_ready(&ev->seq, b->ev_cons))
			return 1;
	}
	return 0;
}

static int events_waiting_arg(void *l)
{
	return events_waiting(l);
}

/*
 * Sleeping (nic.h): until the firmware publishes an event for this node
 * (on any of its boards), or the time-out.  The doorbell rule the other
 * way round, through nicsleep.c: add one to the count of this process's
 * sleeping threads (host_sleeps, in the board of rail 0), fence (the
 * count before the last look at the event queues; pairs with the
 * firmware's fence between publishing events and reading the count),
 * look once more, then, without the lock, wait on host_wake while it
 * still holds the value read before the count went up: a wake-up that
 * came in between changed it, and the wait returns at once.  host_wake is
 * the firmware's word, used only as the futex's value; the firmware wakes
 * every thread waiting on it.
 */
static int lanai_sleep_arm(struct bip_nic *nic, struct bip_nic_sleep *s)
{
	struct bip_lanai *l = lanai_of(nic);
	struct bip_lanai_regs *r = l->regs;

	return bip_nicsleep_arm(&r->host_sleeps, &r->host_wake, events_waiting_arg, l, s);
}

/* A peer has ended once the firmware has marked its board released. */
static int lanai_alive(struct bip_nic *nic, int node)
{
	struct bip_lanai *l = lanai_of(nic);

	/* Without its firmware no board can deliver anything more: that is
	 * the cause, said once, and the process ends as at a board's fault
	 * (the waits would otherwise add that every node has ended, which is
	 * not what happened). */
	if (kill(l->fw->pid, 0) < 0 && errno == ESRCH) {
		bip_error("lanai",
			  "the firmware (lanai-sim, pid %d) has ended: no message can move any "
			  "more", (int)l->fw->pid);
		fflush(NULL);
		/* Not exit(): the atexit handler would wait for sends that cannot end. */
		_exit(EXIT_FAILURE);
	}
	/* Pairs with the release of state in the firmware, made once all the
	 * peer sent has reached its destination's event queue. */
	return bip_load_acquire(&l->peers[node].regs->state) == BIP_LANAI_BOARD_RUNNING;
}

/* --- one-sided operations: rail 0's board does them (rma.c) --- */

/* A descriptor of kind RMA to node dst: 0 or -EAGAIN. */
static int post_rma(struct bip_lanai *l, int dst, const struct bip_lanai_rma *a, uint64_t cookie)
{
	struct bip_lanai_desc *d;

	l = l->top->rails[0];
	if (!bip_lanai_ring_room(&l->sendp, &l->regs->send_cons, BIP_LANAI_SEND_SLOTS))
		return -EAGAIN;
	d = bip_lanai_slot(l->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), l->sendp.prod);
	d->kind = BIP_LANAI_DESC_RMA;
	d->dst = (uint32_t)dst;
	d->tag = 0;
	d->len = 0;
	d->cookie = cookie;
	memcpy(d->payload, a, sizeof(*a));
	bip_lanai_ring_publish(&l->sendp, &d->seq);
	doorbell(l);
	return 0;
}

static int lanai_rma_capable(struct bip_nic *nic, int node)
{
	return node >= 0 && node < lanai_of(nic)->numnodes;
}

static int lanai_rma_expose(struct bip_nic *nic, void *base, size_t len, uint64_t cookie)
{
	struct bip_lanai_rma a = { .what = BIP_LANAI_RMA_EXPOSE,
				   .addr = (uint64_t)(uintptr_t)base,
				   .len = len };

	return post_rma(lanai_of(nic), lanai_of(nic)->mynode, &a, cookie);
}

static int lanai_rma_withdraw(struct bip_nic *nic, uint64_t key, uint64_t cookie)
{
	struct bip_lanai_rma a = { .what = BIP_LANAI_RMA_WITHDRAW, .key = key };

	return post_rma(lanai_of(nic), lanai_of(nic)->mynode, &a, cookie);
}

static int lanai_rma_post(struct bip_nic *nic, const struct bip_nic_rma *op, uint64_t cookie)
{
	struct bip_lanai_rma a = { .key = op->key, .offset = op->offset };

	switch (op->kind) {
	case BIP_NIC_RMA_PUT:
	case BIP_NIC_RMA_GET:
		a.what = op->kind == BIP_NIC_RMA_PUT ? BIP_LANAI_RMA_PUT : BIP_LANAI_RMA_GET;
		a.addr = (uint64_t)(uintptr_t)op->buf;
		a.len = op->len;
		break;
	case BIP_NIC_RMA_ATOMIC:
		if (op->count > UINT32_MAX)
			return -EINVAL;
		a.what = BIP_LANAI_RMA_ATOMIC;
		a.op = (uint8_t)op->op;
		a.type = (uint8_t)op->type;
		a.count = (uint32_t)op->count;
		a.operand = (uint64_t)(uintptr_t)op->operand;
		a.compare = (uint64_t)(uintptr_t)op->compare;
		a.result = (uint64_t)(uintptr_t)op->result;
		break;
	default:
		return -EINVAL;
	}
	return post_rma(lanai_of(nic), op->node, &a, cookie);
}

/* A node of the room (nic.h): its boards run (0), are still waiting for
 * their host (-EAGAIN), or were released (its process ended). */
static int lanai_reach(struct bip_nic *nic, int node, char *err, size_t errlen)
{
	struct bip_lanai *l = lanai_of(nic);
	int k;

	if (!l->grows || node < 0 || node >= l->numnodes || node == l->mynode) {
		snprintf(err, errlen, "node %d is not a node of this job", node);
		return -EINVAL;
	}
	for (k = 0; k < l->nrails; k++) {
		/* Pairs with the release of state in the firmware. */
		uint32_t state = bip_load_acquire(&l->rails[k]->peers[node].regs->state);

		if (state == BIP_LANAI_BOARD_READY) {
			/* Not there yet, or not a node of the job at all:
			 * bipload knows which. */
			char host[256];
			int rc = bip_pm_host(node, host, sizeof(host), err, errlen);

			return rc == -ESRCH || rc == -ENOTCONN ? -ESRCH : -EAGAIN;
		}
		if (state != BIP_LANAI_BOARD_RUNNING) {
			snprintf(err, errlen, "the board of node %d (rail %d) was released: its "
				 "process has ended", node, k);
			return -ESRCH;
		}
	}
	l->peers[node].reached = 1;
	return 0;
}

const struct bip_nic_ops bip_lanai_ops = {
    .name = "lanai",
    .reach = lanai_reach,
    .available = lanai_available,
    .open = lanai_open,
    .post_short = lanai_post_short,
    .post_long = lanai_post_long,
    .post_long_recv = lanai_post_long_recv,
    .poll = lanai_poll,
    .alive = lanai_alive,
    .sleep_arm = lanai_sleep_arm,
    .sleep_wait = bip_nicsleep_wait,
    .close = lanai_close,
    .rma_capable = lanai_rma_capable,
    .rma_expose = lanai_rma_expose,
    .rma_withdraw = lanai_rma_withdraw,
    .rma_post = lanai_rma_post,
};

/* --- datagram mode --- */

static int lanai_dgram_send(struct bip_nic *nic, int path, int dst, const void *hdr, size_t hlen,
			    const void *data, size_t len)
{
	struct bip_lanai *l = lanai_of(nic)->rails[path]; /* path r: board r */
	struct bip_lanai_desc *d;

	if (!bip_lanai_ring_room(&l->sendp, &l->regs->send_cons, BIP_LANAI_SEND_SLOTS))
		return -EAGAIN;
	d = bip_lanai_slot(l->send, BIP_LANAI_SEND_SLOTS, sizeof(*d), l->sendp.prod);
	d->kind = BIP_LANAI_DESC_DGRAM;
	d->dst = (uint32_t)dst;
	memcpy(d->payload, hdr, hlen);
	if (hlen + len <= BIP_LANAI_INLINE_MAX) {
		bip_copy(d->payload + hlen, data, len);
		d->tag = (uint32_t)(hlen + len);
		d->len = 0;
	} else {
		d->tag = (uint32_t)hlen;
		d->len = len;
		d->addr = (uint64_t)(uintptr_t)data;
	}
	bip_lanai_ring_publish(&l->sendp, &d->seq);
	doorbell(l);
	return 0;
}

/* The board wrote an entry that breaks the queue's layout: nothing after
 * it can be found. */
static bip_cold __attribute__((noreturn)) void bad_entry(struct bip_lanai *l, const char *what)
{
	bip_error("lanai", "the board of node %d (rail %d) wrote a malformed entry into the "
		  "receive queue (%s at offset %u): no datagram can be read any more", l->mynode,
		  l->rail, what, l->rx_read);
	fflush(NULL);
	_exit(EXIT_FAILURE);
}

/* Hand the next datagram of the receive queue to the layer, then free it. */
static void take_datagram(struct bip_lanai *l)
{
	uint8_t *q = l->qwin;
	struct bip_tagq_entry e;
	uint32_t freed = l->rx_freed;

	/* A wrap mark is its kind alone: what is left at the end may be less
	 * than a head. */
	memcpy(&e.kind, q + l->rx_read, sizeof(e.kind));
	if (e.kind == BIP_TAGQ_WRAP) {
		freed += l->rx_cap - l->rx_read;
		l->rx_read = 0;
	}
	if (l->rx_cap - l->rx_read < BIP_TAGQ_HEAD)
		bad_entry(l, "no room for a head");
	memcpy(&e, q + l->rx_read, sizeof(e));
	if (e.kind != BIP_TAGQ_SHORT || e.len > l->rx_cap || e.size != bip_tagq_entry_size(e.len) ||
	    e.size > l->rx_cap - l->rx_read)
		bad_entry(l, "kind, length or size");
	/* The layer checks the source and everything in the datagram. */
	bip_rel_arrived(&l->top->nic, l->rail, e.src, q + l->rx_read + BIP_TAGQ_HEAD, e.len);
	freed += e.size;
	l->rx_read += e.size;
	if (l->rx_read == l->rx_cap)
		l->rx_read = 0;
	/* Pairs with the firmware's DMA read of the count. */
	bip_store_release(&l->rx_freed, freed);
}

static void dgram_event(struct bip_lanai *l, const struct bip_lanai_event *ev)
{
	char msg[BIP_LANAI_INLINE_MAX + 1];

	switch (ev->kind) {
	case BIP_LANAI_EV_SHORT:
		take_datagram(l);
		break;
	case BIP_LANAI_EV_RMA_DONE:
		bip_core_rma_done(ev->cookie, ev->status, ev->handle);
		break;
	case BIP_LANAI_EV_ERROR:
		/* A link that cannot deliver (down, or a wrong route): the
		 * path to that node is down. */
		memcpy(msg, ev->payload, BIP_LANAI_INLINE_MAX);
		msg[BIP_LANAI_INLINE_MAX] = '\0';
		if (ev->dst < (uint32_t)l->numnodes)
			bip_rel_path_state(&l->top->nic, l->rail, (int)ev->dst, 0, msg);
		break;
	default:
		/* HELD, RELEASED: the board keeps datagrams while the queue is
		 * full, and the layer's window bounds them. */
		break;
	}
}

/* Every board's events. */
static int lanai_dgram_poll(struct bip_nic *nic)
{
	struct bip_lanai *l = lanai_of(nic);
	int k, n = 0;

	for (k = 0; k < l->nrails; k++)
		n += lanai_poll(&l->rails[k]->nic);
	return n;
}

const struct bip_dgram_ops bip_lanai_dgram_ops = {
    .send = lanai_dgram_send,
    .reach = lanai_reach,
    .poll = lanai_dgram_poll,
    .alive = lanai_alive,
    .sleep_arm = lanai_sleep_arm,
    .sleep_wait = bip_nicsleep_wait,
    .close = lanai_close,
};
