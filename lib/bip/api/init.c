/* SPDX-License-Identifier: MIT */
/*
 * init.c - bip_init, bip_taginit and bip_finalize.
 *
 * Start-up: learn this process's node, the node count and their hosts from
 * the start-up module (boot.h: bipload's environment and the configuration,
 * PMIx or PMI-2), size the tag queues, and open the NIC drivers: shm for
 * the peers on this host, a network driver (ofi, psm2) for the others.
 * The drivers wait for the peers, so processes may start in any order and
 * with any delay.  Before any of that, the process binds itself to a CPU
 * if BIP_BIND asks (bind.h), so that what it allocates is near it; with
 * BIP_REPORT_BINDINGS, each node says on stderr where it runs once BIP is
 * up (bip_where).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "boot.h"
#include "conf.h"
#include "core.h"
#include "fwd.h"
#include "monitor.h"
#include "env.h"
#include "oob.h"
#include "pm.h"
#include "drivers/shm/shm.h"
#include "rel.h"
#include "rma.h"

BIP_EXPORT int bip_mynode = -1;
BIP_EXPORT int bip_numnodes = 0;


#define BIP_ERR 512

BIP_EXPORT int bip_taginit(int tag, int nbufs, int size)
{
	struct bip_tag *t;

	if (bip_state.initialized) {
		bip_error("bip_taginit", "called after bip_init (tag %d)", tag);
		return -1;
	}
	if (tag < 0 || tag >= NTAGS) {
		bip_error("bip_taginit", "tag %d out of range (0 .. %d)", tag, NTAGS - 1);
		return -1;
	}
	if (nbufs < 1 || size < 0) {
		bip_error("bip_taginit", "tag %d: need nbufs >= 1 and size >= 0 (got %d, %d)", tag,
			  nbufs, size);
		return -1;
	}
	if ((uint64_t)nbufs * ((uint64_t)size + BIP_MSG_HEAD) * 4 > (1u << 30)) {
		bip_error("bip_taginit", "tag %d: %d messages of %d words exceed 1 GiB", tag, nbufs,
			  size);
		return -1;
	}
	t = &bip_state.tags[tag];
	if (t->sized) {
		bip_error("bip_taginit", "tag %d was already sized (%d messages of %d words)", tag,
			  t->nbufs, t->size);
		return -1;
	}
	t->nbufs = nbufs;
	t->size = size;
	t->sized = 1;
	return 0;
}

/*
 * Queue bytes of a tag: what bip_taginit asked (at least one message of
 * every short size, so that any short message can be queued), and room for
 * one more message of the largest size.  The queue never moves its tail
 * back to 0 when it empties (a NIC may own the tail), so the messages asked
 * for may start anywhere; the extra room is the most a wrap mark can waste,
 * and with it nbufs messages of size words always fit, and an empty queue
 * always takes any short message.
 */
static uint32_t tag_capacity(const struct bip_tag *t, int tag)
{
	uint64_t nbufs = t->sized ? (uint64_t)t->nbufs : BIP_DEFAULT_NBUFS;
	uint64_t size = t->sized ? (uint64_t)t->size : BIP_DEFAULT_BUFSIZE;
	uint64_t cap = nbufs * (size + BIP_MSG_HEAD) * 4;
	uint64_t one = (BIPSMALLSIZE + BIP_MSG_HEAD) * 4;

	if (tag == BIP_TAG_FLOW)
		cap = 16 * one; /* emptied as soon as it is written */
	else if (tag >= NTAGS)
		cap = 256 * one; /* internal tags carry the traffic of a whole layer */
	return (uint32_t)((cap < one ? one : cap) + one);
}

/* BIP_SLEEP_AFTER (microseconds): how long a wait lasts in auto mode,
 * with more local processes than processors, before its waiter sleeps. */
#define BIP_SLEEP_AFTER_US 2000

static int setup_sleep(char *err)
{
	const char *sleep_max = getenv("BIP_SLEEP_MAX");
	const char *after = getenv("BIP_SLEEP_AFTER");

	bip_state.sleep_max_ns = 10000000L;
	if (sleep_max && *sleep_max) {
		char *end;
		double v = strtod(sleep_max, &end);

		if (*end || !(v >= 0.0001 && v <= 60)) {
			snprintf(err, BIP_ERR, "BIP_SLEEP_MAX=%s: expected seconds, 0.0001 to 60",
				 sleep_max);
			return -EINVAL;
		}
		bip_state.sleep_max_ns = (long)(v * 1e9);
	}
	bip_state.sleep_after_auto_ns = BIP_SLEEP_AFTER_US * 1000L;
	if (after && *after) {
		char *end;
		long v = strtol(after, &end, 10);

		if (*end || v < 0 || v > 60000000L) {
			snprintf(err, BIP_ERR,
				 "BIP_SLEEP_AFTER=%s: expected microseconds, 0 to 60000000", after);
			return -EINVAL;
		}
		bip_state.sleep_after_auto_ns = v * 1000L;
	}
	bip_state.sleep_after_ns = bip_state.wait_mode == BIP_WAIT_BLOCK ? 0 : -1;
	return 0;
}

static int setup_wait(int nlocal, char *err)
{
	const char *mode = getenv("BIP_WAIT");
	const char *spin = getenv("BIP_SPIN");
	long ncpu = bip_state.host_cpus;

	bip_state.wait_mode = BIP_WAIT_AUTO;
	/* More processes than cores: spin less before yielding. */
	bip_state.spin_limit = (ncpu > 0 && nlocal > ncpu) ? BIP_SPIN_SHARED_CPU : BIP_SPIN_OWN_CPU;
	if (mode && *mode) {
		if (!strcmp(mode, "spin")) {
			bip_state.wait_mode = BIP_WAIT_SPIN;
			bip_state.spin_limit = ~0u;
		} else if (!strcmp(mode, "yield")) {
			bip_state.wait_mode = BIP_WAIT_YIELD;
			bip_state.spin_limit = 0;
		} else if (!strcmp(mode, "block")) {
			bip_state.wait_mode = BIP_WAIT_BLOCK;
		} else if (strcmp(mode, "auto")) {
			snprintf(err, BIP_ERR, "BIP_WAIT=%s: expected spin, yield, block or auto", mode);
			return -EINVAL;
		}
	}
	if (setup_sleep(err) < 0)
		return -EINVAL;
	if (spin && *spin && (bip_state.wait_mode == BIP_WAIT_AUTO ||
			      bip_state.wait_mode == BIP_WAIT_BLOCK)) {
		char *end;
		long v = strtol(spin, &end, 10);

		if (*end || v < 0) {
			snprintf(err, BIP_ERR, "BIP_SPIN=%s: expected a number of rounds", spin);
			return -EINVAL;
		}
		bip_state.spin_limit = (unsigned)v;
	}
	/* And in auto mode, sleep once a wait lasts.  Every process of this
	 * host computes the same (the job's configuration, the host's
	 * processors), so that its peers know to wake it (nic.h). */
	if (ncpu > 0 && nlocal > ncpu)
		bip_wait_oversubscribed();
	return 0;
}

static const struct bip_nic_ops *find_driver(const char *name)
{
	size_t i;

	for (i = 0; i < bip_ndrivers; i++)
		if (!strcmp(bip_drivers[i]->name, name))
			return bip_drivers[i];
	return NULL;
}

static void no_such_driver(const char *want, char *err)
{
	int n = snprintf(err, BIP_ERR, "BIP_NIC=%s: no such driver (compiled in:", want);
	size_t i;

	for (i = 0; i < bip_ndrivers && n > 0 && n < BIP_ERR; i++)
		n += snprintf(err + n, (size_t)(BIP_ERR - n), " %s", bip_drivers[i]->name);
	if (n > 0 && n < BIP_ERR)
		snprintf(err + n, (size_t)(BIP_ERR - n), ")");
}

/*
 * The driver for the peers on other hosts: the first network driver of the
 * table (in order of preference) that can run here; drivers that serve only
 * this host (shm, the simulated board) are never chosen for them.  err says why none can,
 * naming a peer that needs one.
 */
static const struct bip_nic_ops *pick_network(int remote, char *err)
{
	const struct bip_conf *conf = bip_state.conf;
	char why[256], all[400] = "";
	size_t i, used = 0;

	for (i = 0; i < bip_ndrivers; i++) {
		const struct bip_nic_ops *ops = bip_drivers[i];

		if (!ops->network)
			continue;
		why[0] = '\0';
		if (ops->available(why, sizeof(why)))
			return ops;
		if (used < sizeof(all))
			used += (size_t)snprintf(all + used, sizeof(all) - used, "; %s: %s",
						 ops->name, why);
	}
	if (remote < 0) {
		snprintf(err, BIP_ERR, "no network driver can run here%s",
			 used ? all : " (none compiled in)");
		return NULL;
	}
	/* The drivers' reasons cut to what fits beside the longest host name. */
	snprintf(err, BIP_ERR, "node %d is on host %s, another host, and no network driver can "
		 "run here%.160s", remote, conf->nodes[remote].host,
		 used ? all : " (none compiled in)");
	return NULL;
}

/* The nodes that exist when this process starts (boot.h's known): every
 * node, relays too, in a job that does not grow. */
static int known_at_start;
/* The job has room to grow (boot.h). */
static int job_grows;

/* 1 if node i opens its drivers with this process (the others joined the
 * job, or will, and are reached on first use: nic.h). */
static int opens_with(int i)
{
	return i < known_at_start && i >= bip_state.group_first;
}

/* The reliability layer over the forwarding driver (open_fwd), or NULL. */
static struct bip_nic *fwd_nic;

/*
 * The nodes of other clusters (bipconf(5) "Clusters"), reached through the
 * relays: the forwarding driver, with the reliability layer on top
 * (fwd.c).  A job whose clusters have no relay (not started by bipload)
 * cannot reach them: said, naming one.
 */
static int open_fwd(struct bip_nic_job *job, unsigned char *serve, char *err)
{
	const struct bip_conf *conf = bip_state.conf;
	int i, any = 0, me = bip_state.mynode, rc;
	struct bip_nic *nic;

	/* In a job that grows, the nodes it does not open with are reached
	 * through it later (bip_core_reach, fwd.c's reach). */
	for (i = 0; i < conf->n; i++) {
		serve[i] = i != me && opens_with(i) && !bip_conf_direct(conf, me, i);
		any |= serve[i];
	}
	if (job_grows && conf->nrelays && !bip_state.relay)
		any = 1;
	if (!any)
		return 0;
	for (i = 0; i < conf->n; i++) {
		if (!serve[i] || bip_fwd_reaches(i))
			continue;
		snprintf(err, BIP_ERR, "node %d (host %s) is in cluster %s and this node in "
			 "cluster %s: %s", i, conf->nodes[i].host,
			 conf->clusters[conf->cluster_of[i]].name,
			 conf->clusters[conf->cluster_of[me]].name,
			 conf->nrelays ? "no route through the gateways' relays reaches it (more "
					 "than 4 gateways, or a gateway host without relay)" :
					 "messages between clusters go through the relays of the "
					 "gateway hosts, and this job has none (bipload starts them)");
		return -EHOSTUNREACH;
	}
	if (bip_state.nnics == (int)(sizeof(bip_state.nics) / sizeof(bip_state.nics[0]))) {
		snprintf(err, BIP_ERR, "too many drivers");
		return -EINVAL;
	}
	job->serve = serve;
	job->tagqs = NULL;
	rc = bip_fwd_ops.open(job, &nic);
	if (rc == 0)
		rc = bip_rel_open(job, nic, &nic);
	if (rc < 0)
		return rc;
	bip_state.nics[bip_state.nnics++] = nic;
	fwd_nic = nic;
	bip_fwd_upper(nic);
	for (i = 0; i < conf->n; i++)
		if (serve[i])
			bip_state.peers[i].nic = nic;
	return 0;
}

/*
 * Choose a driver for each peer: peers on this host use shm, peers on other
 * hosts the best network driver; BIP_NIC forces one driver for every peer
 * (so that a network driver can be tested on one host).  Then open each
 * driver chosen, shm first, with the set of peers it serves.  Every node
 * opens its drivers in the same order, so their start-up waits interlock.
 */
/*
 * A job that grows over several hosts with the drivers of their choice
 * (BIP_NIC unset; bipload says BIP_GROW_SPANS=1 when its nodes may run on
 * several hosts, or it is seen from the hosts of the job's first nodes):
 * every process opens a network driver, even when it serves no node yet,
 * since nodes may join on other hosts; and shm when a
 * node it knows at start runs on its host (the job's first nodes, and a
 * new node's siblings), as in any job.  So a process alone on its host
 * keeps one driver, and sleeps on it (BIP_WAIT=block).  A node picks a
 * peer's driver by host, at open for the nodes it opens with and at reach
 * for the others (bip_core_reach): shm for a node of its host that has a
 * segment, the network driver otherwise.  A node that joined learns the
 * hosts of its siblings before it opens (bipload knows them from the
 * request that started them), and every node learns the host of a node
 * that joined before it reaches it.  The job's first nodes name their
 * hosts in the configuration.
 */
static int spans_hosts;

static void find_spans_hosts(void)
{
	const char *want = getenv("BIP_NIC");
	int i;

	spans_hosts = 0;
	/* Clusters joined by relays: the clusters of the nodes started with
	 * this one decide which it reaches through the relays (open_fwd). */
	for (i = bip_state.group_first; job_grows && bip_state.conf->nrelays &&
					bip_state.group_first && i < known_at_start; i++)
		bip_nic_learn_host(i);
	if (!job_grows || (want && *want) || bip_state.conf->nrelays)
		return;
	/* bipload's word: nodes may join on hosts where none runs yet. */
	want = getenv("BIP_GROW_SPANS");
	spans_hosts = want && !strcmp(want, "1");
	for (i = 0; i < bip_state.started && !spans_hosts; i++)
		spans_hosts = !bip_nic_same_host(bip_state.conf, 0, i) ||
			      !bip_nic_same_host(bip_state.conf, bip_state.mynode, i);
	for (i = bip_state.group_first; spans_hosts && bip_state.group_first &&
					i < known_at_start; i++)
		bip_nic_learn_host(i);
}

static int open_nics(int quiet, const char *jobid, char *err)
{
	const struct bip_conf *conf = bip_state.conf;
	const char *want = getenv("BIP_NIC");
	const struct bip_nic_ops *choice[2] = { NULL, NULL }; /* [0] this host, [1] others */
	static struct bip_nic_tagq tagqs[BIP_ALL_TAGS];
	struct bip_nic_job job;
	unsigned char *serve;
	double timeout;
	char why[256];
	int i, k, rc, remote = -1, local = 0;

	rc = bip_boot_timeout(known_at_start, &timeout, err, BIP_ERR);
	if (rc < 0)
		return rc;
	for (i = 0; i < conf->n; i++) {
		/* Over several hosts, a job that grows picks its drivers for
		 * its first nodes' hosts too. */
		if (i == bip_state.mynode || !(opens_with(i) || (spans_hosts && i < bip_state.started)) ||
		    !bip_conf_direct(conf, bip_state.mynode, i))
			continue;
		if (bip_nic_same_host(conf, bip_state.mynode, i))
			local = 1;
		else if (remote < 0)
			remote = i;
	}
	if (want && *want) {
		const struct bip_nic_ops *ops = find_driver(want);

		if (!ops) {
			no_such_driver(want, err);
			return -ENODEV;
		}
		why[0] = '\0';
		if (!ops->available(why, sizeof(why))) {
			snprintf(err, BIP_ERR, "BIP_NIC=%s: driver cannot run here: %s", want, why);
			return -ENODEV;
		}
		if (remote >= 0 && !strcmp(ops->name, "shm")) {
			snprintf(err, BIP_ERR, "BIP_NIC=shm: node %d is on host %s, another host",
				 remote, conf->nodes[remote].host);
			return -EINVAL;
		}
		choice[0] = choice[1] = ops;
	} else {
		/* Over several hosts, only the network driver can reach the
		 * nodes that join elsewhere: one alone on its host takes it
		 * alone, if it can run here. */
		if (!local && remote < 0 && spans_hosts) {
			choice[1] = pick_network(remote, err);
			if (!choice[1])
				spans_hosts = 0;
		}
		if (local || (remote < 0 && !choice[1])) {
			choice[0] = find_driver("shm");
			why[0] = '\0';
			if (!choice[0] || !choice[0]->available(why, sizeof(why))) {
				snprintf(err, BIP_ERR, "the shm driver cannot run here: %s",
					 choice[0] ? why : "not compiled in");
				return -ENODEV;
			}
		}
		if (remote >= 0 || (spans_hosts && !choice[1])) {
			choice[1] = pick_network(remote, err);
			if (!choice[1] && remote >= 0)
				return -ENODEV;
			if (!choice[1])
				spans_hosts = 0; /* this host's nodes only */
		}
	}
	for (i = 0; i < BIP_ALL_TAGS; i++) {
		struct bip_tagq *q = &bip_state.tags[i].q;

		tagqs[i] = (struct bip_nic_tagq){ .buf = q->buf, .cap = q->cap, .freed = &q->freed };
	}
	serve = calloc((size_t)conf->n, 1);
	if (!serve)
		return -ENOMEM;
	for (k = 0; k < 2; k++) {
		struct bip_nic *nic, *drv;
		int any = 0, all = 1, sole;

		if (!choice[k] || (k == 1 && choice[1] == choice[0]))
			continue;
		/* The one instance: in a job that grows, the nodes it does not
		 * open with are reached through it later (bip_core_reach). */
		sole = !choice[1 - k] || choice[0] == choice[1];
		for (i = 0; i < conf->n; i++) {
			int same = bip_nic_same_host(conf, bip_state.mynode, i);

			serve[i] = i != bip_state.mynode && opens_with(i) &&
				   bip_conf_direct(conf, bip_state.mynode, i) &&
				   (choice[0] == choice[1] || same == (k == 0));
			any |= serve[i];
			all &= serve[i] || i == bip_state.mynode ||
			       (sole && job_grows && !opens_with(i));
		}
		/* The network driver of a job that grows over several
		 * hosts opens even when it serves no node yet. */
		if (!any && bip_state.nnics && !(spans_hosts && k == 1))
			continue;
		job = (struct bip_nic_job){
			.mynode = bip_state.mynode,
			.numnodes = conf->n,
			.conf = conf,
			.serve = serve,
			.jobid = jobid,
			.timeout = timeout,
			.quiet = quiet,
			.err = err,
			.errlen = BIP_ERR,
			/* Its NIC may write the queues only as their one producer. */
			.tagqs = all ? tagqs : NULL,
			.ntags = BIP_ALL_TAGS,
			.grows = job_grows,
			.known = known_at_start,
			.first = bip_state.group_first,
		};
		rc = choice[k]->open(&job, &nic);
		/* One-sided operations go to the driver itself, below the
		 * reliability layer (nic.h). */
		drv = rc == 0 ? nic : NULL;
		if (rc == 0 && nic->dgram)
			rc = bip_rel_open(&job, nic, &nic);
		if (rc < 0) {
			free(serve);
			return rc;
		}
		if (drv->ops->rma_post && !bip_state.rma_nic)
			bip_state.rma_nic = drv;
		for (i = 0; i < conf->n && drv->ops->rma_post; i++)
			if (serve[i] || (i == bip_state.mynode && bip_state.rma_nic == drv))
				bip_state.peers[i].rma = drv;
		for (i = 0; nic->fills_queues && i < BIP_ALL_TAGS; i++) {
			struct bip_tagq *q = &bip_state.tags[i].q;

			q->nic_fills = 1;
			if (tagqs[i].buf != q->buf)
				bip_tagq_adopt(q, tagqs[i].buf); /* the NIC's DMA window */
		}
		bip_state.nics[bip_state.nnics++] = nic;
		for (i = 0; i < conf->n; i++)
			if (serve[i] || (i == bip_state.mynode && bip_state.nnics == 1))
				bip_state.peers[i].nic = nic;
	}
	rc = open_fwd(&job, serve, err);
	free(serve);
	return rc;
}

static void release_all(void)
{
	int i;

	/* The reliability layers first, the last opened first: the
	 * forwarding driver's sends its last acknowledgements over the
	 * drivers below it, and each waits for its peers' as any waiter does
	 * (rel.c), so the drivers, and the watchers that wake a sleep over
	 * several of them, are still there.  Each leaves the list once closed:
	 * the next one's waits poll what is left. */
	bip_fwd_closing();
	for (i = bip_state.nnics; i-- > 0;) {
		struct bip_nic *nic = bip_state.nics[i];

		if (!bip_rel_is(nic))
			continue;
		nic->ops->close(nic);
		memmove(&bip_state.nics[i], &bip_state.nics[i + 1],
			(size_t)(bip_state.nnics - i - 1) * sizeof(nic));
		bip_state.nnics--;
	}
	bip_waitset_fini(); /* its watchers wait on the drivers' words */
	for (i = bip_state.nnics; i-- > 0;)
		bip_state.nics[i]->ops->close(bip_state.nics[i]);
	bip_state.nnics = 0;
	for (i = 0; i < BIP_ALL_TAGS; i++) {
		bip_tagq_free(&bip_state.tags[i].q);
		free(bip_state.tags[i].failure);
		bip_state.tags[i].failure = NULL;
		bip_state.tags[i].state = BIP_RECV_IDLE;
		pthread_mutex_destroy(&bip_state.tags[i].lock);
	}
	bip_sreq_table_free();
	bip_rma_free();
	bip_state.rma_nic = NULL;
	bip_flow_free();
	bip_fwd_close();
	for (i = 0; bip_state.peers && i < bip_state.numnodes; i++)
		pthread_mutex_destroy(&bip_state.peers[i].send_lock);
	free(bip_state.peers);
	bip_state.peers = NULL;
	bip_conf_free(bip_state.conf);
	bip_state.conf = NULL;
	free(bip_state.host_learnt);
	bip_state.host_learnt = NULL;
	bip_boot_finish();
	bip_host_forget();
	bip_state.grow_nic = NULL;
	bip_state.grow_local = NULL;
	/* bipload stops saying where this process's segment is. */
	bip_pm_close();
}

/* A launcher started this process (its stdout is then usually a pipe). */
static int launched;

/* BIP_BIND: this node's CPU among its host's (bind.h). */
static int setup_bind(char *err)
{
	enum bip_bind_mode mode;
	int rc = bip_bind_parse(getenv(BIP_ENV_BIND), &mode, err, BIP_ERR);

	if (rc < 0 || mode == BIP_BIND_NONE)
		return rc;
	return bip_bind_core(bip_bind_local_index(bip_state.conf, bip_state.mynode), err,
			     BIP_ERR);
}

/* The drivers this process uses, "shm + ofi". */
static void drivers_desc(char *what, size_t len)
{
	size_t used = 0;
	int i;

	what[0] = '\0';
	for (i = 0; i < bip_state.nnics && used < len; i++) {
		const struct bip_nic *nic = bip_state.nics[i];

		used += (size_t)snprintf(what + used, len - used, "%s%s", i ? " + " : "",
					 nic->desc ? nic->desc : nic->ops->name);
	}
}

void bip_where(char *buf, size_t len)
{
	char what[256], cpus[256];

	drivers_desc(what, sizeof(what));
	bip_bind_cpus(cpus, sizeof(cpus));
	snprintf(buf, len, "node %d of %d: host %s, pid %d, driver %s, cpus %s", bip_state.mynode,
		 bip_state.napp, bip_state.conf->nodes[bip_state.mynode].host, (int)getpid(),
		 what[0] ? what : "none", cpus);
}

/* The lanes' locks (state.h): a peer's is recursive, since a layer's
 * callback run under it may send to the same peer. */
static void locks_init(void)
{
	pthread_mutexattr_t attr;
	int i;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	for (i = 0; i < bip_state.numnodes; i++)
		pthread_mutex_init(&bip_state.peers[i].send_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	for (i = 0; i < BIP_ALL_TAGS; i++)
		pthread_mutex_init(&bip_state.tags[i].lock, NULL);
}

static int setup(char *err)
{
	struct bip_boot boot;
	int i, rc, nlocal = 0;

	/* The job's secret leaves the environment before anything else runs:
	 * programs the application starts do not inherit it. */
	bip_oob_secret_load();
	bip_pm_open();
	rc = bip_boot_start(&boot, err, BIP_ERR);
	if (rc < 0)
		return rc;
	bip_state.conf = boot.conf;
	bip_state.quiet = boot.quiet;
	bip_state.mynode = boot.mynode;
	bip_state.numnodes = boot.numnodes;
	snprintf(bip_state.jobid, sizeof(bip_state.jobid), "%s", boot.jobid);
	bip_state.napp = bip_conf_app_nodes(boot.conf);
	bip_state.started = boot.started - boot.conf->nrelays;
	bip_state.nrelays = boot.conf->nrelays;
	known_at_start = boot.known;
	job_grows = boot.grows;
	bip_state.group_first = boot.group_first;
	/* The job's first processes: the nodes running the program, not
	 * the relays. */
	bip_state.group_size = boot.group_first ? boot.group_size : bip_state.started;
	if (boot.grows) {
		/* Room to grow, if the nodes' driver can reach nodes joining
		 * later: shm, the board, or ofi alone (grow.c). */
		const char *nic = getenv("BIP_NIC");

		if (nic && *nic && strcmp(nic, "shm") && strcmp(nic, "ofi") && strcmp(nic, "lanai") &&
		    !boot.group_first) {
			bip_conf_truncate(boot.conf, boot.known);
			bip_state.numnodes = boot.numnodes = boot.known;
			job_grows = 0;
		}
		bip_state.napp = boot.known;
	}
	bip_state.relay = bip_is_relay(bip_state.mynode);
	launched = boot.launched;
	if (bip_state.relay != bip_relay_wanted) {
		snprintf(err, BIP_ERR, bip_state.relay ?
			 "node %d is a relay of gateway host %s (the configuration's \"relays\"): "
			 "it runs bipgw, not a program" :
			 "node %d (host %s) is not a relay: bipgw runs only on the relay nodes",
			 bip_state.mynode, boot.conf->nodes[bip_state.mynode].host);
		rc = -EINVAL;
		goto undo_all;
	}
	bip_state.watch_peers = boot.can_abort;
	/* The processes that share this host's processors: the nodes running
	 * the program (in a job that grows, those started so far, not its
	 * room) and the relays, which wait as they do. */
	for (i = 0; i < bip_state.numnodes; i++)
		if (i < bip_state.napp || bip_is_relay(i))
			nlocal += bip_host_is_local(bip_state.conf->nodes[i].host);
	/* Before this process binds itself: its affinity is still the
	 * launcher's, the same for every process of the host. */
	bip_state.host_cpus = bip_host_cpus(&bip_state.host_cpus_why);
	bip_state.host_procs = nlocal;
	rc = setup_bind(err);
	if (rc < 0)
		goto undo_all;
	rc = setup_wait(nlocal, err);
	if (rc < 0)
		goto undo_all;
	rc = -ENOMEM;
	snprintf(err, BIP_ERR, "out of memory");
	bip_state.peers = calloc((size_t)bip_state.numnodes, sizeof(*bip_state.peers));
	if (!bip_state.peers)
		goto undo_all;
	locks_init();
	if (bip_sreq_table_init() < 0)
		goto undo_all;
	bip_progress_set_rma(bip_rma_push);
	for (i = 0; i < BIP_ALL_TAGS; i++) {
		struct bip_tag *t = &bip_state.tags[i];

		if (bip_tagq_init(&t->q, tag_capacity(t, i)) < 0)
			goto undo_all;
		bip_recv_set(t, BIP_RECV_IDLE);
	}
	err[0] = '\0';
	if (bip_state.conf->nrelays) {
		rc = bip_fwd_setup(bip_state.mynode, bip_state.conf, err, BIP_ERR);
		if (rc < 0)
			goto undo_all;
	}
	find_spans_hosts();
	rc = open_nics(boot.quiet, boot.jobid, err);
	if (rc < 0)
		goto undo_all;
	for (i = 0; i < bip_state.numnodes; i++)
		bip_state.peers[i].by_shm = bip_state.peers[i].nic &&
					    bip_state.peers[i].nic->ops == &bip_shm_ops;
	if (job_grows && bip_state.nnics == 1 &&
	    bip_state.nics[0]->ops->reach)
		bip_state.grow_nic = bip_state.nics[0];
	/* shm, then the network driver (open_nics): both reach nodes that
	 * join, or the job cannot grow (bip_grow says why).  Without shm,
	 * the network driver alone (above). */
	if (job_grows && spans_hosts && bip_state.nnics == 2 &&
	    bip_state.nics[0]->ops == &bip_shm_ops && bip_state.nics[1]->ops->reach) {
		bip_state.grow_local = bip_state.nics[0];
		bip_state.grow_nic = bip_state.nics[1];
	}
	/* Clusters joined by relays (shm inside each): shm reaches the nodes
	 * of this node's cluster that join, the forwarding driver the others;
	 * a relay reaches with shm those of its cluster it forwards to (fwd.c).
	 * Anything else inside a cluster, and the job cannot grow. */
	if (bip_state.nrelays) {
		bip_state.grow_nic = bip_state.grow_local = NULL;
		if (job_grows && bip_state.nics[0]->ops == &bip_shm_ops &&
		    (bip_state.relay ? bip_state.nnics <= 2 :
		     bip_state.nnics == 2 && bip_state.nics[1] == fwd_nic &&
		     fwd_nic->ops->reach)) {
			bip_state.grow_local = bip_state.nics[0];
			bip_state.grow_nic = bip_state.relay ? NULL : fwd_nic;
		}
	}
	if (bip_state.grow_local)
		bip_pm_up(bip_shm_segment_fd(bip_state.grow_local));
	else
		bip_pm_up(bip_state.grow_nic && bip_state.grow_nic->ops == &bip_shm_ops ?
				  bip_shm_segment_fd(bip_state.grow_nic) : -1);
	return 0;

undo_all:
	release_all();
	return rc;
}

static void finalize_at_exit(void)
{
	if (bip_state.initialized)
		bip_finalize();
}

BIP_EXPORT void bip_init(void)
{
	static int atexit_done;
	char err[BIP_ERR] = "";
	const char *report;

	if (bip_state.initialized) {
		bip_error("bip_init", "called twice");
		return;
	}
	if (bip_state.finalized) {
		/* The drivers' peers have released their boards and segments
		 * for this job: there is nothing left to join. */
		bip_error("bip_init", "BIP cannot start again after bip_finalize");
		return;
	}
	if (setup(err) < 0) {
		fprintf(stderr, "bip: bip_init: %s\n", err[0] ? err : "start-up failed");
		exit(EXIT_FAILURE);
	}
	/* Under bipload or srun, stdout is a pipe: make it line-buffered so
	 * that the nodes' lines reach the user as they are printed, not at
	 * exit. */
	if (launched && !isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&bip_state.counters, 0, sizeof(bip_state.counters));
	bip_mynode = bip_state.mynode;
	bip_numnodes = bip_state.started;
	bip_state.initialized = 1;
	bip_monitor_open();
	if (bip_async_start(err, sizeof(err)) < 0) {
		fprintf(stderr, "bip: node %d: bip_init: %s\n", bip_mynode, err);
		exit(EXIT_FAILURE);
	}
	if (!atexit_done) {
		atexit(finalize_at_exit);
		atexit_done = 1;
	}
	if (!bip_state.quiet && bip_mynode == 0) {
		char what[256];

		drivers_desc(what, sizeof(what));
		fprintf(stderr, "bip: %d node%s, driver %s\n", bip_numnodes,
			bip_numnodes > 1 ? "s" : "", what);
	}
	report = getenv(BIP_ENV_REPORT_BINDINGS);
	if (report && *report && strcmp(report, "0")) {
		char line[1024];

		bip_where(line, sizeof(line));
		fprintf(stderr, "bip: %s\n", line);
	}
}

/* Seconds bip_finalize waits for sends the receivers have not taken. */
#define BIP_FINALIZE_WAIT 30.0

BIP_EXPORT int bip_finalize(void)
{
	struct bip_wait w;
	struct timespec start, now;
	unsigned depth;
	int locked, rc;

	if (!bip_state.initialized) {
		bip_error("bip_finalize", "BIP is not initialised");
		return -1;
	}
	/* A layer calls it holding the lock (MPI_Finalize): the thread may
	 * need the lock to see that it must stop. */
	depth = bip_lock_drop();
	bip_async_stop();
	bip_lock_retake(depth);
	clock_gettime(CLOCK_MONOTONIC, &start);
	bip_wait_start(&w);
	locked = bip_lock();
	while (bip_state.inflight_sends) {
		bip_progress();
		depth = bip_lock_drop();
		rc = bip_wait_step(&w);
		clock_gettime(CLOCK_MONOTONIC, &now);
		bip_lock_retake(depth);
		if (rc < 0) {
			bip_error("bip_finalize", "%u send(s) not taken: %s",
				  bip_state.inflight_sends, bip_wait_failure());
			break;
		}
		if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) * 1e-9 >
		    BIP_FINALIZE_WAIT) {
			bip_error("bip_finalize", "%u send(s) not taken by their receivers after "
				  "%.0f s; giving up on them", bip_state.inflight_sends,
				  BIP_FINALIZE_WAIT);
			break;
		}
	}
	if (bip_state.watch_peers)
		bip_flow_bye();
	bip_monitor_close();
	release_all();
	bip_state.initialized = 0;
	bip_state.finalized = 1;
	bip_state.watch_peers = 0;
	bip_state.queued_sends = 0;
	bip_state.inflight_sends = 0;
	bip_unlock(locked);
	return 0;
}
