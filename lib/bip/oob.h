/* SPDX-License-Identifier: MIT */
/*
 * oob.h - the out-of-band address exchange of the network drivers.
 *
 * At start-up every node gives a small blob (a driver's endpoint address)
 * and gets every node's blob back: an all-gather over TCP, independent of
 * bipload, so that processes may also be started by hand and in any order.
 *
 * Node 0 listens on the address of its host (from the configuration), on a
 * port derived from the job id (BIP_OOB_PORT sets the port instead); when
 * that port is busy it takes the next free one of a short fixed sequence
 * (BIP_OOB_PORTS ports), which the other nodes try in the same order.  Both
 * sides prove that they know the job's secret (BIP_SECRET) and check the job
 * id, the node count and the blob size in a handshake, so a listener of
 * another job or program is passed over and nobody else can join (oob.c has
 * the frames).  The others connect to node 0's host, retrying until the
 * start-up timeout.  On a timeout the error names the nodes that never
 * connected (node 0's view, which it also sends to the nodes that did
 * connect) or the host that could not be reached.
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
	const struct bip_conf *conf;  /* node 0's host name */
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
 * Check a join frame (n bytes; at least its fixed part) as node 0 reads it
 * from the network, for job jobid of numnodes nodes and len-byte blobs.
 * Sets *blob_p to the blob size it announces (1 .. BIP_OOB_BLOB_MAX) unless
 * -EPROTO; returns 0 with *node_p, -EPROTO (not a frame of ours), -ESRCH
 * (another job), or -EINVAL (this job with another configuration); why
 * says it.
 */
int bip_oob_join_check(const void *frame, size_t n, const char *jobid, int numnodes,
		       size_t len, int *node_p, size_t *blob_p, char *why, size_t whylen);

/*
 * Exchange blobs: every node gives len bytes (the same len on every node,
 * 1 .. BIP_OOB_BLOB_MAX); on success all (numnodes * len bytes) holds node
 * i's blob at i * len and 0 is returned.  On failure a negative errno and a
 * message in err; all is untouched.
 */
int bip_oob_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		      char *err, size_t errlen);

#endif /* BIP_OOB_H */
