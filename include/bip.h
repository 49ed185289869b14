/* SPDX-License-Identifier: MIT */
/*
 * bip.h - BIP, the Basic Interface for Parallelism (API of BIP 0.92).
 *
 * Every call of the BIP 0.92 user manual, with its names, signatures and
 * semantics, plus a few modern additions at the end (bip_finalize, the last
 * error string, counters).  Lengths are counted in 4-byte words.
 */
#ifndef BIP_H
#define BIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BIP_VERSION_MAJOR 0
#define BIP_VERSION_MINOR 92

/* Number of receive queues (tags 0 .. NTAGS-1) on every node. */
#define NTAGS 200

/*
 * Messages of at most BIPSMALLSIZE words (256 bytes) are "short": they are
 * buffered in the receiver's queue for their tag.  Longer messages are "long":
 * they go straight from the sender's buffer into the receiver's buffer.
 */
#define BIPSMALLSIZE 64

/* Default size of each tag's queue: BIP_DEFAULT_NBUFS messages of
 * BIP_DEFAULT_BUFSIZE words (each with BIP_MSG_HEAD words of head). */
#define BIP_DEFAULT_NBUFS 32
#define BIP_DEFAULT_BUFSIZE BIPSMALLSIZE
#define BIP_MSG_HEAD 4

/* Logical number of this process and number of processes; valid after bip_init. */
extern int bip_mynode, bip_numnodes;

/* 3.1 Basic primitives */
void bip_init(void);
int bip_tisend(int dst, int tag, int *buf, int length);
void bip_swait(int id);
int bip_stest(int id);
int bip_tirecv(int tag, int *buf, int maxlength);
int bip_rwait(int id);
int bip_rwaitx(int id, int *node);
int bip_rtest(int id);
int bip_rtestx(int id, int *node);
int bip_tprobe(int tag);
int bip_tnrecv(int tag, int *buf, int maxlength);
int bip_tnrecvx(int tag, int *buf, int maxlength, int *node);
int *bip_tgetmsg(int tag, int *length, int *node);
int *bip_tngetmsg(int tag, int *length, int *node);
void bip_tfreemsg(int tag);
int bip_taginit(int tag, int nbufs, int size);

/* 3.2 Blocking calls */
int bip_trecv(int tag, int *buf, int maxlength);
int bip_trecvx(int tag, int *buf, int maxlength, int *node);
int bip_tsend(int dst, int tag, int *buf, int length);

/* 3.3 Untagged calls: the same on tag 0 */
int bip_isend(int dst, int *buf, int length);
int bip_irecv(int *buf, int maxlength);
int bip_nrecv(int *buf, int maxlength);
int bip_nrecvx(int *buf, int maxlength, int *node);
int *bip_getmsg(int *length, int *node);
int *bip_ngetmsg(int *length, int *node);
void bip_freemsg(void);
int bip_probe(void);
int bip_recv(int *buf, int maxlength);
int bip_recvx(int *buf, int maxlength, int *node);
int bip_send(int dst, int *buf, int length);

/* Modern additions */

/* Waits for this process's sends to complete and releases everything
 * bip_init took.  Also run at exit.  Returns 0, or -1 if BIP was not
 * initialised. */
int bip_finalize(void);

/* The message of the last failed BIP call in this thread ("" if none). */
const char *bip_error_string(void);

/* Counters of this process since bip_init. */
#define BIP_COUNTER_PATHS 4 /* paths counted one by one (rails) */
struct bip_counters {
	uint64_t short_sent;     /* short messages handed to the NIC */
	uint64_t long_sent;      /* long messages completed (sender side) */
	uint64_t short_received; /* short messages delivered to the application */
	uint64_t long_received;  /* long messages delivered to the application */
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t send_stalls;    /* sends that had to wait for room at the receiver */
	uint64_t errors;         /* calls that failed */
	/* The reliability layer (bip(7)), for drivers that go through it;
	 * zero on the others.  Packets: */
	uint64_t retransmits;    /* sent again (after a timeout, a NACK or a gap) */
	uint64_t fast_retransmits; /* of which sent again because later ones arrived */
	uint64_t timeouts;       /* retransmission timer expiries */
	uint64_t duplicates;     /* received again and dropped */
	uint64_t early;          /* messages that came before their turn and waited */
	uint64_t corrupt;        /* received with a CRC32C that did not match, dropped */
	uint64_t nacks_sent;     /* asked for again (their data was corrupt) */
	uint64_t nacks_received;
	uint64_t acks_sent;      /* acknowledgements sent on their own */
	uint64_t rebinds;        /* moved from a path that failed to another */
	uint64_t failbacks;      /* paths used again after they failed */
	struct bip_path_counters {
		uint64_t sent;       /* packets sent on the path, first or again */
		uint64_t retransmits;
		uint64_t timeouts;
		uint64_t duplicates; /* received on it */
		uint64_t corrupt;    /* received on it */
		uint64_t retired;    /* times it was taken out of use */
		uint64_t restored;   /* times it was used again */
	} path[BIP_COUNTER_PATHS];
	/* Waiting (BIP_WAIT=block, or auto when oversubscribed): */
	uint64_t sleeps;         /* times a waiter slept on its NIC */
	uint64_t wakeups;        /* of which woken by a peer before the sleep's time-out */
};
/* Programs built against BIP 0.92's or 0.93's smaller struct keep their
 * symbol, which fills only their fields. */
void bip_get_counters(struct bip_counters *counters);

/*
 * Byte-length forms, for layers built on BIP (such as MPI): the same as
 * bip_tisend, bip_tirecv, bip_rwaitx and bip_rtestx, with lengths in bytes
 * (any number, up to 4 GiB - 1) and tags from 0 to NTAGS + BIP_RESERVED_TAGS
 * - 1; the BIP_RESERVED_TAGS tags above NTAGS are for such a layer, which a
 * program using the word calls cannot disturb.  Messages of at most
 * BIPSMALLSIZE * 4 bytes are short.  The wait and test calls return the
 * length in bytes, or -1.
 */
#define BIP_RESERVED_TAGS 8
int bip_tisend_bytes(int dst, int tag, const void *buf, size_t len);
int bip_tirecv_bytes(int tag, void *buf, size_t maxlen);
long bip_rwait_bytes(int id, int *node);
long bip_rtest_bytes(int id, int *node);

/*
 * For layers built on BIP (bip_layer(3)).
 *
 * A layer (the MPI shim) registers callbacks on one of the reserved tags;
 * from then on, what arrives on that tag goes to the callbacks as it comes
 * out of the NIC, instead of waiting in the tag's queue.  The layer matches
 * messages itself and places long ones where it wants, in any order, by
 * the handle their announcement carries.  Callbacks run inside BIP's
 * progress (from any BIP call that polls) and must not call BIP; they
 * record what to do and the layer does it after bip_layer_poll returns.
 * Messages between two nodes arrive in the order they were sent.
 */
struct bip_layer_ops {
	/* A short message: data is valid only during the call.  Return 0
	 * (taken) or -EAGAIN (no room now: it is offered again later, and
	 * nothing from src arrives before it). */
	int (*short_arrived)(int src, int tag, const void *data, size_t len);
	/* The announcement of a long message of len bytes; the layer receives
	 * it with bip_layer_recv_long(src, handle, ...).  0 or -EAGAIN. */
	int (*long_arrived)(int src, int tag, size_t len, uint64_t handle);
	/* A send that did not complete at once has completed (status 0 or
	 * -errno): its buffers may be reused. */
	void (*send_done)(uint64_t cookie, int status);
	/* A long receive that did not complete at once has completed. */
	void (*recv_done)(uint64_t cookie, int status);
};

/* Cookies are below 2^56. */
#define BIP_LAYER_COOKIE_MAX ((1ull << 56) - 1)

/* Initialise BIP if the program has not: returns 1 if this call did, 0 if
 * it already was.  Exits like bip_init when start-up fails. */
int bip_layer_init(void);

/* Route tag (NTAGS .. NTAGS + BIP_RESERVED_TAGS - 1) to ops; NULL ops
 * gives the tag back.  0 or -1 (bad tag, tag busy). */
int bip_layer_register(int tag, const struct bip_layer_ops *ops);

/* The most bytes (header and data) that travel to node as one short
 * message of bip_layer_send: at least BIPSMALLSIZE * 4, more where the
 * NIC's short messages are larger.  0 for a bad node. */
size_t bip_layer_short_max(int node);

/*
 * Send hdr (hlen bytes) and buf (len bytes) to dst on a registered tag.
 * If hlen + len <= bip_layer_short_max(dst) they travel as one short
 * message, arriving as hdr then buf; otherwise hdr travels as a short
 * message (hlen at most BIPSMALLSIZE * 4) immediately followed by buf as a
 * long message, whatever its length (buf must then not be empty).  Returns 1 if the send is complete (hdr and buf may be reused),
 * 0 if send_done(cookie) will tell, or -1.
 */
int bip_layer_send(int dst, int tag, const void *hdr, size_t hlen, const void *buf, size_t len,
		   uint64_t cookie);

/* Receive the long message of handle (announced by src, len bytes, exactly
 * the announced length) into buf.  1 if complete now, 0 if recv_done(cookie)
 * will tell, or -1. */
int bip_layer_recv_long(int src, uint64_t handle, void *buf, size_t len, uint64_t cookie);

/* Poll the NICs once; callbacks run.  The number of events, or -1. */
int bip_layer_poll(void);

/* One step of waiting: spin briefly, then yield.  0, or -1 once every
 * other node has ended (nothing more can arrive).  It lets go of
 * bip_layer_lock for the step, however deep this thread holds it. */
struct bip_layer_wait {
	unsigned spins;
	unsigned yields;
};
int bip_layer_wait(struct bip_layer_wait *w);

/* BIP's lock, for a layer whose state its callbacks share with its calls
 * from several threads: a callback runs inside a poll, which holds the
 * lock, so a layer that takes it at each of its calls sees its callbacks
 * only between them.  Recursive; taken only once the process has threads
 * (returns 0 and does nothing before); give bip_layer_unlock what it
 * returned. */
int bip_layer_lock(void);
void bip_layer_unlock(int locked);

/* What a layer does at each round of the progress thread
 * (BIP_PROGRESS_THREAD=1), under the lock, after the NICs' poll: its work
 * left for after a poll, its non-blocking operations' next steps.  NULL:
 * nothing.  Without the thread it is never called. */
void bip_layer_progress(void (*fn)(void));

/* The host name of node in the configuration ("" if out of range). */
const char *bip_layer_host(int node);

/* 1 if nodes a and b run on the same host, as BIP decides it (the same
 * name, or two names of this machine, such as "localhost" and its own
 * name), 0 if not, -1 for a node out of range. */
int bip_layer_same_host(int a, int b);

/* The cluster of node as the configuration describes it (bipconf(5),
 * "Clusters"): its index, from 0 in the file's order; 0 for every node
 * when the file names no cluster; -1 for a node out of range. */
int bip_layer_cluster(int node);
/* The relays of the gateways (bipgw(1)): nodes bip_numnodes to
 * bip_numnodes + bip_layer_relays() - 1, which run no program; in a job
 * that grows, the nodes that join come after them.  0 without clusters. */
int bip_layer_relays(void);

/* The id of this job (letters and digits, at most 33 characters), the
 * same on each of its nodes and different for another job; "" before
 * bip_init. */
const char *bip_layer_jobid(void);

/* End the whole job now (MPI_Abort): through the launcher when it can
 * (srun under PMIx or PMI-2 ends the step), else this process exits with
 * code (1 .. 255; others become 1) and bipload stops the others.  msg goes
 * to the launcher where it takes one.  Does not return. */
void bip_layer_abort(int code, const char *msg) __attribute__((noreturn));

/*
 * One-sided operations executed by the NIC (bip_rma(3)).
 *
 * A process exposes memory; any process of the job that has its key then
 * reads, writes and updates it atomically through its own NIC and the
 * target's, which executes the operation without the target's process
 * (it may be computing, or asleep in a blocking wait, and is not woken).
 * Only NICs that can do it serve these calls (bip_rma_capable); elsewhere
 * a layer uses messages.  Operations from one origin to one target are
 * executed at the target in the order they were started.  The buffers of
 * an operation stay valid and unchanged until it completes.
 */

/* Element types and operations of bip_rma_atomic. */
enum bip_rma_type {
	BIP_RMA_INT8 = 1, BIP_RMA_INT16, BIP_RMA_INT32, BIP_RMA_INT64,
	BIP_RMA_UINT8, BIP_RMA_UINT16, BIP_RMA_UINT32, BIP_RMA_UINT64,
	BIP_RMA_FLOAT, BIP_RMA_DOUBLE,
};
enum bip_rma_op {
	BIP_RMA_SUM = 1, BIP_RMA_PROD, BIP_RMA_MIN, BIP_RMA_MAX,
	BIP_RMA_BAND, BIP_RMA_BOR, BIP_RMA_BXOR, BIP_RMA_LAND, BIP_RMA_LOR, BIP_RMA_LXOR,
	BIP_RMA_REPLACE, BIP_RMA_NO_OP, BIP_RMA_CSWAP,
};
/* 1 if the NIC that reaches node (node may be bip_mynode) executes the
 * operations below without node's host process; else 0 (the caller then
 * uses messages).  Valid after bip_init. */
int bip_rma_capable(int node);
/* Let the NIC serve operations from the processes of this job on
 * [base, base + len): 0 and *key (to be given to peers by the caller), or
 * -errno. */
int bip_rma_expose(void *base, size_t len, uint64_t *key);
/* Stop serving key; operations arriving later fail with -EACCES at their
 * origin.  0 or -errno. */
int bip_rma_withdraw(uint64_t key);
/* Start an operation on node's exposed memory key at byte offset: an id
 * >= 0, or -errno (bad arguments, node not capable).  Never -EAGAIN: the
 * library keeps what the NIC has no room for. */
int bip_rma_put(int node, uint64_t key, uint64_t offset, const void *buf, size_t len);
int bip_rma_get(int node, uint64_t key, uint64_t offset, void *buf, size_t len);
/* count elements of type at offset: target = target op operand, each
 * element atomically with respect to every other bip_rma_atomic on that
 * memory, whatever its origin; result (may be NULL) receives the values
 * before the operation.  CSWAP: count 1, compare required; the target
 * element becomes operand if it equals compare; result gets the old value.
 * NO_OP: fetch only. */
int bip_rma_atomic(int node, uint64_t key, uint64_t offset, int op, int type, size_t count,
		   const void *operand, const void *compare, void *result);
/* 0: not complete yet; 1: complete; -errno: complete with an error
 * (-ERANGE: outside the exposed memory, nothing written; -EACCES:
 * unknown or withdrawn key, or another job's ...).  A completed id is
 * released by the call that reports its completion. */
int bip_rma_test(int id);
/* Wait (progressing, and sleeping as BIP_WAIT says) until id completes:
 * 0 or -errno. */
int bip_rma_wait(int id);

/*
 * Jobs that grow (bip_grow(3)): new nodes join a running job with numbers
 * after the existing ones, started by bipload on its host, and are reached
 * on first use.  bip_numnodes keeps meaning the nodes the job started with,
 * in every process, those that joined too.
 */
struct bip_grow_cmd {
	int count;                 /* processes of this command (at least 1) */
	char *const *argv;         /* the program and its arguments, NULL-ended */
	const char *const *env;    /* VAR=value for these processes, NULL-ended, or NULL */
	const char *host;          /* NULL: bipload's host; else a host of the job (ofi) */
	const char *wdir;          /* NULL: bipload's directory */
	const char *path;          /* NULL: PATH, where the program is looked for */
};
/* Start the processes of ncmds commands as nodes *first, *first + 1 ...
 * (the commands' processes in order) once each has started BIP.  Returns
 * how many, or -errno with every errcodes[i] (one per process asked, may
 * be NULL) set: 0, or the errno that stopped process i (ENOENT, EACCES:
 * no such program; ENOSPC: the job has no room for them ...); then none of
 * them runs.  bip_error_string() says why. */
int bip_grow(const struct bip_grow_cmd *cmds, int ncmds, int *first, int *errcodes);
/* The nodes this process knows of: bip_numnodes, and those that joined
 * since (through this process, or that it was started with or reached). */
int bip_jobnodes(void);
/* The most nodes the job may have (bipload --universe); bip_numnodes in a
 * job that cannot grow. */
int bip_universe(void);
/* The nodes started with this one: 0 and bip_numnodes in the job's first
 * processes; a process that joined gets its command's and its siblings'. */
void bip_group(int *first, int *count);

/*
 * The settings BIP reads (bip_settings(3)): the environment variables of
 * the library, bipload and the commands, as bipinfo(1) lists them.  How
 * many; and the i-th one's name, default (as a user would write it, or a
 * description in parentheses) and meaning, each pointer may be NULL: 0, or
 * -EINVAL if i is not 0 to bip_settings() - 1.  Usable before bip_init;
 * the strings are the library's, constant for the life of the process.
 */
int bip_settings(void);
int bip_setting(int i, const char **name, const char **def, const char **what);

#ifdef __cplusplus
}
#endif

#endif /* BIP_H */
