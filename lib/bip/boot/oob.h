/* SPDX-License-Identifier: MIT */
/*
 * oob.h - the out-of-band address exchange of the network drivers.
 *
 * At start-up every node gives a small blob (a driver's endpoint address)
 * and gets every node's blob back: an all-gather independent of bipload,
 * so that processes may also be started by hand and in any order.
 *
 * The blobs go up a tree and the result comes down it (oob.c): the nodes
 * of each host (the same host name in the configuration) form a binomial
 * tree under the host's first node, over UNIX sockets; the hosts' first
 * nodes form one under node 0, over TCP.  A node serves at most
 * log2(nodes of its host) + log2(hosts) children, and the exchange takes
 * as many rounds: no process serves every other.
 *
 * A host's first node, when other hosts report to it, listens on the
 * address of its host (from the configuration), on a port derived from the
 * job id (BIP_OOB_PORT sets the port instead); when that port is busy it
 * takes the next free one of a short fixed sequence (BIP_OOB_PORTS ports),
 * which its children try in the same order.  On every link both sides prove
 * that they know the job's secret (BIP_SECRET) and check the job id, the
 * node count, the blob size and who the other is, so a listener of another
 * job or program is passed over and nobody else can join (oob.c has the
 * frames).  A node retries its parent until the start-up timeout.  On a
 * timeout the error names the nodes that never joined (node 0's view, which
 * it also sends down to every node that did join), or the node that never
 * listened for this one, or the host that could not be reached.
 *
 * Only the network drivers use it: a job whose peers are all on one host
 * (shm) never opens a socket.
 */
#ifndef BIP_OOB_H
#define BIP_OOB_H

#include <stddef.h>

struct bip_conf;

/* The job's secret, hex (bipload sets it). */
#define BIP_OOB_SECRET_ENV "BIP_SECRET"

/* Ports tried after the first, in order, when it is busy. */
#define BIP_OOB_PORTS 8
/* Largest blob a node may give. */
#define BIP_OOB_BLOB_MAX 4096

struct bip_oob_job {
	int mynode;
	int numnodes;
	const struct bip_conf *conf;  /* the nodes' host names */
	const char *jobid;
	const char *what;             /* who exchanges, for messages (e.g. "ofi") */
	double timeout;               /* seconds */
};

/*
 * The first port of the job: BIP_OOB_PORT if set (checked), else one derived
 * from the job id in 20000 .. 59999.  Returns the port or a negative errno
 * with a message in err.
 */
int bip_oob_port(const char *jobid, char *err, size_t errlen);

/*
 * Read BIP_SECRET once and remove it from the environment (programs the
 * application starts do not inherit it).  0, or -EINVAL when it is
 * malformed (an exchange then says why).  A missing secret is an error only
 * for an exchange.
 */
int bip_oob_secret_load(void);

/*
 * Exchange blobs: every node gives len bytes (the same len on every node,
 * 1 .. BIP_OOB_BLOB_MAX); on success all (numnodes * len bytes) holds node
 * i's blob at i * len and 0 is returned.  On failure a negative errno and a
 * message in err; all is untouched.  Every node of the job calls it the
 * same number of times, in the same order.
 */
int bip_oob_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		      char *err, size_t errlen);

/*
 * The tree of the exchange, for the tests and the fuzz target.
 */
struct bip_oob_tree;

/* The tree of numnodes nodes of conf.  0 or -ENOMEM. */
int bip_oob_tree_new(const struct bip_conf *conf, int numnodes, struct bip_oob_tree **tree_p);
void bip_oob_tree_free(struct bip_oob_tree *tree);
/* node's parent (-1 for node 0); *local_p: 1 if on the same host. */
int bip_oob_tree_parent(const struct bip_oob_tree *tree, int node, int *local_p);
/* node's children into children[] (room for max); returns their count. */
int bip_oob_tree_children(const struct bip_oob_tree *tree, int node, int *children, int max);
/* The number of links from node 0 down to node. */
int bip_oob_tree_depth(const struct bip_oob_tree *tree, int node);

/*
 * Check a join frame (n bytes: the frame and its proof) as a listener reads
 * it from the network, for job jobid of numnodes nodes and len-byte blobs,
 * in exchange round: returns 0 with *node_p, -EPROTO (not a frame of ours),
 * -ESRCH (another job), or -EINVAL (this job with another configuration);
 * why says it.  The proof is checked apart.
 */
int bip_oob_join_check(const void *frame, size_t n, const char *jobid, int numnodes,
		       size_t len, unsigned round, int *node_p, char *why, size_t whylen);

/*
 * Check the report of child (the n bytes after its proof's header: the
 * counts, the nodes, the missing nodes, the blobs of len bytes) as its
 * parent reads it: every node named once, each in child's subtree, child's
 * own blob among them.  0, or -EPROTO with why.
 */
int bip_oob_report_check(const struct bip_oob_tree *tree, int child, const void *report,
			 size_t n, size_t len, char *why, size_t whylen);

#endif /* BIP_OOB_H */
