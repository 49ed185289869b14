/* SPDX-License-Identifier: MIT */
/*
 * bipload_proxy.h - bipload and its proxies: one bipload-proxy per host of
 * a job other than bipload's own (every host inside a Slurm allocation),
 * which starts that host's processes, forwards their output, tells how they
 * ended, and stops them when bipload says so or is gone.  As MPICH's
 * Hydra does with its proxies: one remote shell or one srun step per host
 * instead of one per process, and bipload's own work per process O(1).
 *
 * How a proxy starts and what it talks over (its channel):
 *
 *   rsh   through the remote shell, one per host: RSH HOST bipload-proxy.
 *         The channel is the remote shell's stdin (to the proxy) and stdout
 *         (from it).  The proxy's first words on stdout are the line
 *         BIPLOAD_PROXY_READY; whatever comes before it (a login script's
 *         chatter) is the remote shell's own output.  The proxy's stderr is
 *         the remote shell's, for messages of its own.
 *   srun  inside a Slurm allocation, every proxy at once through one srun
 *         step of one task per host: bipload-proxy --connect ADDR:PORT,...
 *         The channel is a TCP connection from the proxy to bipload, which
 *         listens for the step.  Both prove that they know the job's secret
 *         before anything else (the frames below, HMAC-SHA256 over fresh
 *         nonces of both sides); the proxy names its host (SLURMD_NODENAME),
 *         and bipload takes one proxy per host of the job, no other.
 *
 * The job's secret never goes on a command line or into a file: in the job
 * description on the remote shell's stdin (rsh), or in srun's environment,
 * which Slurm hands to the step's tasks (srun).
 *
 * Frames, both ways: type, node, len (32-bit, network byte order), then len
 * bytes.  Each side checks every frame before it acts on it: the type is
 * one the other side sends, the node one of this proxy's, the length the
 * type's (BIPLOAD_FRAME_MAX at most); a frame that fails ends the channel.
 *
 *   bipload to the proxy
 *     JOB      once, first: the job description, NUL-terminated records
 *              whose first character says what they are:
 *                S<secret> (rsh only), C<working directory>,
 *                G<grace seconds>, B<1 to bind each process to a core>,
 *                H<this host's name in the configuration>,
 *                E<VAR=value> for every process,
 *                A<app> a command, then a<arg>... and e<VAR=value>... of it,
 *                N<node> <app> <index of the node on this host>,
 *                J<1: the job may grow, give each process a channel>,
 *                M<peers: bipload --monitor, give each process a page
 *                  with room for peers nodes (lib/bip/boot/monitor.h)>
 *              no N record: a late proxy, for the nodes that join the job
 *              on its host (bipload_remote.c's bipload_remote_late); it
 *              needs J1, and ends when its channel closes, not when its
 *              processes have
 *     STDIN    node 0's standard input (len 0: its end); at most
 *              BIPLOAD_STDIN_WINDOW bytes not yet acknowledged
 *     SIGNAL   u32 signal: to every process's group; unless SIGKILL, those
 *              still running get SIGKILL after the grace period
 *     PM       node, then one record for that node's process channel
 *              (lib/bip/boot/pm.h), at most BIPLOAD_PM_MAX bytes
 *     GROW     node (a new one, above every node of the proxy): a process
 *              that joins the running job (bip_grow(3)), as NUL-terminated
 *              records: a<arg>... (argv[0] first), e<VAR=value>...,
 *              W<working directory>, P<PATH>, n<app number>,
 *              g<first>:<count> (its BIP_GROUP); W and P may be empty
 *     KILL     node: SIGKILL to that process's group (a grow that failed)
 *   the proxy to bipload
 *     HELLO    u32 the proxy's pid, then its host's name
 *     STARTED  node, u32 its pid
 *     OUT      node, u8 stream (1 stdout, 2 stderr), then bytes; none: that
 *              stream's end
 *     EXIT     node, u32 its wait status
 *     STDIN_ACK  u32 bytes of node 0's input taken, u32 1 if node 0 takes
 *              no more
 *     DONE     every process ended and its output sent: the proxy exits
 *     PMREC    node, then one record its process sent on its channel; none
 *              (len 0): the process closed its channel
 *     GREW     node, u32 pid (0 if it did not start), u32 errno (0, or why
 *              exec or the working directory failed)
 *     MONITOR  node, then a stable copy of its process's --monitor page
 *              (lib/bip/boot/monitor.h, the proxy's byte order, which is
 *              the processes'): the header, the counters and its peers
 *              entries, no more; sent every BIPLOAD_MONITOR_PERIOD_MS at
 *              most, when the page has changed.  bipload takes it as
 *              untrusted: a length of a header and whole entries, for no
 *              more nodes than the job's, of a node of that proxy.
 *
 * Process channels.  In a job that may grow (a J record in the job
 * description: bipload_grow.c), the proxy gives each of its processes a
 * SOCK_SEQPACKET socket pair as descriptor 3 (BIP_PM_FD), as bipload does
 * on its own host, and passes records both ways without reading them:
 * bipload checks what processes send, and the proxy checks only that a
 * record is for one of its nodes and of a length it allows.
 *
 * The channel's end stops everything: a proxy whose channel closes (bipload
 * died, the connection or the remote shell was lost) sends its processes
 * SIGTERM, SIGKILL after the grace period, and exits; a proxy that is
 * killed takes its processes with it (they have it as their parent-death
 * signal's parent); bipload reports the processes of a channel that closed
 * before DONE as lost.
 */
#ifndef BIPLOAD_PROXY_H
#define BIPLOAD_PROXY_H

#include <stddef.h>
#include <stdint.h>

#define BIPLOAD_PROXY_READY "bipload-proxy 1 ready\n"
#define BIPLOAD_FRAME_HEAD 12
#define BIPLOAD_FRAME_MAX (16u << 20)
#define BIPLOAD_OUT_CHUNK 65536
#define BIPLOAD_STDIN_WINDOW 65536
/* The longest record of a process channel (lib/bip/boot/pm.h). */
#define BIPLOAD_PM_MAX 65536

enum bipload_frame_type {
	BPF_JOB = 1,
	BPF_STDIN = 2,
	BPF_SIGNAL = 3,
	BPF_PM = 4,
	BPF_GROW = 5,
	BPF_KILL = 6,
	BPF_HELLO = 16,
	BPF_STARTED = 17,
	BPF_OUT = 18,
	BPF_EXIT = 19,
	BPF_STDIN_ACK = 20,
	BPF_DONE = 21,
	BPF_PMREC = 22,
	BPF_GREW = 23,
	BPF_MONITOR = 24,
};

struct bipload_frame {
	uint32_t type;
	uint32_t node;
	uint32_t len;
	const unsigned char *data;
};

/* One end of a channel: frames out through a buffer, frames in. */
struct bipload_chan {
	int rfd, wfd;           /* -1 once closed */
	unsigned char *in;
	size_t in_len, in_cap, in_off;
	unsigned char *out;
	size_t out_len, out_cap, out_off;
};

void bipload_chan_init(struct bipload_chan *c, int rfd, int wfd);
void bipload_chan_close(struct bipload_chan *c);
/* Queue a frame; -ENOMEM. */
int bipload_chan_put(struct bipload_chan *c, uint32_t type, uint32_t node, const void *a,
		     size_t alen, const void *b, size_t blen);
/* Bytes queued, not yet written. */
size_t bipload_chan_pending(const struct bipload_chan *c);
/* Write what the descriptor takes now; 0, or a negative errno (closed). */
int bipload_chan_flush(struct bipload_chan *c);
/* Write everything before deadline (a monotonic time); 0 or negative errno. */
int bipload_chan_drain(struct bipload_chan *c, double deadline);
/* Read what the descriptor has: >0, 0 at its end, or a negative errno. */
ssize_t bipload_chan_read(struct bipload_chan *c);
/* The next whole frame read: 1 (f filled; valid until the next read), 0
 * (none yet), -EPROTO (its length is over BIPLOAD_FRAME_MAX). */
int bipload_chan_next(struct bipload_chan *c, struct bipload_frame *f);

uint32_t bipload_get32(const unsigned char *p);
void bipload_put32(unsigned char *p, uint32_t v);
double bipload_now(void);

/* --- the srun channel's proofs --- */
#define BIPLOAD_AUTH_MAGIC "BIPPRX1"
#define BIPLOAD_AUTH_NONCE 32
#define BIPLOAD_AUTH_MAC 32
#define BIPLOAD_AUTH_HOST 64
/* bipload's hello: magic[8] nonce[32]. */
#define BIPLOAD_AUTH_HELLO 40
/* The proxy's answer: magic[8] host[64] nonce[32] mac[32]. */
#define BIPLOAD_AUTH_JOIN 136

/* The key of secret (32 to 128 hex digits) into key; its length, or -EINVAL. */
int bipload_auth_key(const char *secret, unsigned char *key, size_t keymax);
/* HMAC-SHA256(key, label | a | b) into mac. */
void bipload_auth_mac(unsigned char *mac, const unsigned char *key, size_t keylen,
		      const char *label, const void *a, size_t alen, const void *b, size_t blen);

/*
 * What a process's ending leaves on its host: its shared memory when it
 * failed (named for node, of job jobid), and libfabric's shm regions named
 * after its pid ("PID:..."); only files of this user.
 */
void bipload_remove_node_shm(const char *jobid, int node);
void bipload_remove_pid_regions(const int *pids, int npids);

#endif /* BIPLOAD_PROXY_H */
