/* SPDX-License-Identifier: MIT */
/*
 * bipload.h - the parts of bipload and what each offers the others.
 *
 * bipload is split by concern, as MPICH's Hydra is:
 *
 *   bipload.c        the user interface: options, BIP_OPTS, the configuration,
 *                    the program, main
 *   bipload_pm.c     the process manager: the job's identity (id, secret), the
 *                    process table, output forwarding, supervision (failures,
 *                    time-outs, signals), clean-up and the final report
 *   bipload_boot.c   the processes of this host: fork and exec, each with its
 *                    node's environment
 *   bipload_remote.c the processes of other hosts: one proxy per host
 *                    (bipload-proxy, bipload_proxy.c), started through a
 *                    remote shell each, or all through one srun step inside
 *                    a Slurm allocation; their frames (bipload_proxy.h)
 *   bipload_chan.c   the channel to a proxy, shared with the proxy
 *   bipload_hosts.c  the nodes of a host list or host file (--host,
 *                    --hostfile), and the job's configuration file
 *   bipload_lanai.c  the simulated board's firmware, started for the job
 *   bipload_slurm.c  the nodes of a Slurm allocation
 *   bipload_monitor.c --monitor: the job's counters in a browser, served
 *                    over HTTP from bipload's own loop
 *   bipload_attach.c --attach: a command started apart that joins a running
 *                    job, and the running job's end of it
 *
 * Everything here is one process's state, shared by the parts.
 */
#ifndef BIPLOAD_H
#define BIPLOAD_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "conf.h"

#define LINE_MAX_FWD 65536
#define DEFAULT_RSH "ssh -o BatchMode=yes -o ConnectTimeout=10"
/* Seconds a stopped proxy gets beyond twice the grace period before bipload
 * kills its remote shell (or drops its connection) itself. */
#define REMOTE_SLACK 10.0

struct stream {
	int fd;                 /* a local process's pipe; -1 at its end, and for a remote one */
	int open;               /* more may come */
	int out;                /* where its lines go: 1 or 2 */
	size_t len;
	char *buf;              /* an unfinished line (LINE_MAX_FWD bytes once needed) */
};

struct proc {
	int node;
	int app;                /* its command (MPMD: bipload a : b) */
	int relay;              /* a relay of a gateway host (bipgw), not the program */
	int proxy;              /* its host's proxy, -1 for a process of this host */
	int local_index;        /* its index among its host's nodes (--bind-to core) */
	pid_t pid;              /* local: 0 once reaped */
	pid_t started;          /* local: its pid, for the report */
	int status;             /* its wait status: local, or as its proxy tells */
	int ended;              /* remote: its end is known (status, or the proxy's loss) */
	int exited;             /* remote: status is its proxy's word */
	long remote_pid;        /* remote: its pid on its host, 0 until told */
	int stopped;            /* bipload sent it a signal */
	int judged;             /* its end was taken into account */
	int start_late;         /* its proxy did not start within start_limit: a failure */
	/* A job that grows (bipload_grow.c): */
	int pm_fd;              /* bipload's end of its channel, or -1 */
	int pm_remote;          /* remote: its channel, through its proxy, is open */
	int segfd;              /* its shm segment's descriptor there, from its "up" */
	long up_pid;            /* its pid on its host, from its "up" (0: not said) */
	int up;                 /* it said "up" */
	int grown;              /* it joined the running job */
	const char *host;       /* ... on this host (the configuration's name) */
	char *blob;             /* a network driver's address it published (hex), or NULL */
	int abandoned;          /* a new process that failed to join: not the job's */
	int attached;           /* started for an attached command: its
				 * failure is that command's (bipload_attach.c) */
	struct stream s[2];     /* stdout, stderr */
	int file[2];            /* --output-filename: its files, or -1 */
};

/* One command of the job (several: MPMD, "bipload -sz 1 a : -sz 3 b"). */
struct bipload_app {
	int nodes;              /* -sz, 0 if not given */
	char **argv;            /* the program and its arguments */
	const char **env;       /* -env VAR=value: this command's only */
	int nenv;
};

/* The options (bipload.c). */
struct bipload_opts {
	int nodes;              /* every command's nodes; 0: from the configuration */
	const char *conf_file;
	int quiet;
	int tag_output;
	double timeout;
	const char *rsh;        /* --rsh, else BIP_RSH, else DEFAULT_RSH */
	char **xvars;           /* -x: names carried to remote hosts */
	int nxvars;
	struct bipload_app *apps;
	int napps;
	const char **hosts;     /* --host lists, as given */
	int nhosts;
	const char *hostfile;   /* --hostfile */
	int ppn;                /* --ppn: processes per host, 0: by slots */
	int oversubscribe;
	char *outdir;           /* --output-filename, without ":nocopy" */
	int outcopy;            /* output also to bipload's stdout and stderr */
	const char *bind_to;    /* --bind-to, NULL if not given */
	int bind_core;          /* bind: --bind-to core, or BIP_BIND=core */
	int report_bindings;
	int universe;           /* --universe: the most nodes the job may grow to */
	const char *trace;      /* --trace DIR, NULL if not given */
	int monitor;            /* --monitor: serve the job's live view */
	const char *monitor_addr; /* its ADDR:PORT, NULL: 127.0.0.1, any port */
	const char *attach;     /* --attach JOB: join that running job */
};

extern struct bipload_opts opt;
/* Give a command one more VAR=value (kept, not copied). */
void bipload_app_env(struct bipload_app *app, const char *var_value);
extern struct bip_conf *conf;
extern struct proc *procs;
extern int nprocs;
extern char jobid[BIP_JOBID_MAX + 1];
extern char secret[129];               /* the job's BIP_SECRET (make_secret) */
extern int sig_pipe[2];
extern pid_t bipload_pid;
extern double grace;                   /* seconds from SIGTERM to SIGKILL */
extern double start_limit;             /* seconds for a proxy to start */

/* --- bipload.c: messages and helpers --- */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double now_s(void);
/* 1 if s[0..len) is a variable name. */
int valid_name(const char *s, size_t len);
/* A program bipload starts for the job (lanai-sim, bipgw): $env_name, else
 * name beside bipload, else in build_dir relative to it (the build tree;
 * NULL: none), else name for PATH. */
/* --- bipload_trace.c: --trace DIR --- */
/* Check DIR's parent, make DIR, give every command the tracer (dies on
 * error, before the job starts). */
void bipload_trace_prepare(const char *dir);
/* After the job: merge the pieces (biptrace); 0, or -1 (said). */
int bipload_trace_merge(void);
/* DIR, absolute, if the job is traced; NULL if not. */
const char *bipload_trace_dir(void);
void bipload_find_helper(const char *env_name, const char *name, const char *build_dir,
			 char *buf, size_t len);
/* The command node runs. */
const struct bipload_app *app_of(int node);
/* The relays of the gateway hosts (bipgw), started after the program's
 * nodes: their count (bipload.c). */
extern int nrelays;
/* The job's configuration file as its processes read it, or "". */
extern char bipload_conf_path[];

/* --- bipload_hosts.c: host lists and the job's configuration file --- */
/* If --host or --hostfile was given: the configuration of their nodes
 * (nodes processes, 0: one per slot), written to a file named in conf_path
 * when some host is another ("" if all are this one); returns 1.  0 if
 * neither was given.  Dies with the reason when it cannot. */
int bipload_hosts_conf(int nodes, char *conf_path, size_t len);
/* The slots of the hosts of --host or --hostfile (0 without them): the
 * room of a job that grows on this host (bipload_grow.c). */
extern int bipload_host_slots;
/* The hosts of --host or --hostfile, of other machines, where no node
 * runs at start (bipload_hosts.c). */
extern char **bipload_spare_hosts;
extern int bipload_nspare;
/* Write conf to .bipload-<job id>.conf in the working directory, which
 * every host must share (its path in conf_path), removed when bipload
 * exits; what names the source for the error. */
void bipload_conf_file(char *conf_path, size_t len, const char *what);

/* --- bipload_slurm.c: inside a Slurm allocation --- */
/* If SLURM_JOB_ID is set: the configuration of nodes processes (0: the
 * allocation's tasks) on the allocation's nodes, written to a file named in
 * conf_path (removed at exit); returns 1, and every process then starts
 * through a proxy of one srun step unless the user gave a remote shell.
 * 0 outside an allocation.  Dies with the reason when it cannot.  Needs the
 * job id. */
int bipload_slurm_conf(int nodes, char *conf_path, size_t len);
/* 1 inside an allocation: every process starts through a proxy. */
int bipload_slurm_all_remote(void);
/* 1 if the proxies start through one srun step (inside an allocation,
 * without a remote shell of the user's). */
int bipload_slurm_step(void);
/* The srun command of the step, words in argv (NULL-terminated, room for
 * 32 + the words of proxy_argv): one task per host of hosts (n of them). */
void bipload_slurm_command(char **argv, char *const *hosts, int n, char *const *proxy_argv);

/* --- bipload_boot.c: the processes of this host --- */
/* Start node's process here (stdin_fd: node 0's stdin, or -1). */
void bipload_start_local(int node, const char *conf_path, int stdin_fd);
void set_cloexec_nonblock(int fd);
/* In a child of bipload (parent): die with bipload whatever kills it (and
 * at once if it is gone already), a process group of its own, default
 * signal handling. */
void bipload_child_setup(pid_t parent);
/* 1 if name (len bytes) is carried to other hosts: BIP_* (not the secret),
 * PATH, LD_LIBRARY_PATH, BIPCONF and the -x variables. */
int bipload_carried(const char *name, size_t len);

/* --- bipload_remote.c: the processes of other hosts, through proxies --- */
/* Group the nodes by host, mark each node local or its proxy's, and give
 * each its index on its host; the proxies' commands. */
void bipload_remote_prepare(const char *conf_path, const char *cwd);
/* Start every proxy. */
void bipload_remote_start(void);
/* Node 0 runs elsewhere: its proxy takes bipload's stdin (len 0: its end).
 * bipload_remote_stdin_ready: 1 if bipload may read more of it now, 0 not
 * yet, -1 never again (node 0 takes no more). */
int bipload_remote_stdin_ready(void);
void bipload_remote_stdin(const char *buf, size_t len);
/* The descriptors to poll (at most bipload_remote_maxfds()), and what came. */
int bipload_remote_maxfds(void);
int bipload_remote_pollfds(struct pollfd *pfd);
void bipload_remote_events(const struct pollfd *pfd, int n);
/* Proxies, remote shells or srun still to hear from. */
int bipload_remote_busy(void);
/* A child of bipload that is not a local process has ended. */
void bipload_remote_reaped(pid_t pid, int status);
/* Signal every remote process (through its proxy); a proxy that has not
 * ended well after its first stop is killed, or its connection dropped. */
void bipload_remote_signal(int sig);
/* Proxies that have not started within start_limit: their nodes fail. */
void bipload_remote_check_started(double since);
/* The report of remote nodes that failed without a status of their own,
 * one line per host; 1 if node's was printed (or is to be skipped). */
int bipload_remote_report(int node);
/* The exit code of a remote node that failed without a status. */
int bipload_remote_exit_code(int node);
void bipload_remote_free(void);

/* A job that grows onto other hosts (bipload_grow.c): the proxy of host
 * (-1: none, -2: it has ended), a record for a remote node's channel, a
 * new node started by proxy with a GROW frame's records, a failed one
 * killed. */
int bipload_remote_proxy_of(const char *host);
const char *bipload_remote_host(int proxy);
void bipload_remote_pm(int node, const void *rec, size_t len);
void bipload_remote_grow(int proxy, int node, const void *cmd, size_t len);
void bipload_remote_kill(int node);
/* The proxy of a spare host, started now for new nodes (-1: host is not a
 * spare host, or inside a Slurm step); closing the channels of such
 * proxies once no process of the job runs. */
int bipload_remote_late(const char *host);
void bipload_remote_release(void);

/* --- bipload_grow.c: jobs that grow --- */
/* The room of a job that grows (0: it cannot). */
extern int bipload_universe;
/* Whether the job may grow, to want nodes (0: the default room); after
 * bipload_remote_prepare. */
void bipload_grow_prepare(int want);
/* The entries procs needs: the job's room. */
int bipload_room(void);
/* In a child: BIP_UNIVERSE and BIP_GROW_HOST, if the job grows. */
void bipload_grow_env(void);
/* A channel for node: the child's end (bipload keeps the other), or -1. */
int bipload_grow_channel(int node);
/* The channels to poll (node of each in nodes), and what came on them. */
int bipload_grow_pollfds(struct pollfd *pfd, int *nodes);
void bipload_grow_events(const struct pollfd *pfd, const int *nodes, int n);
/* A process ended: a grow request waiting for it may be answered. */
void bipload_grow_check(void);
/* The job ends: answer what waits, close the channels. */
void bipload_grow_stop(void);
/* The configuration's name of the host where nodes join by default. */
const char *bipload_grow_host(void);
/* 1 if the job's nodes run, or may run, on several hosts: its processes
 * get BIP_GROW_SPANS=1 and open a network driver beside shm. */
int bipload_grow_spans(void);
/* The grow request of an attached command (asker below 0: its slot in
 * bipload_attach.c), rec split in place. */
void bipload_grow_attach(int asker, char *rec, size_t len);
/* A record from a remote node's channel (NULL: the channel closed), and
 * the start of a remote new node (err: why it could not run, or 0). */
void bipload_grow_record(struct proc *p, const char *rec, size_t len);
void bipload_grow_started(struct proc *p, int err);

/* --- bipload_attach.c: commands that join a running job --- */
/* The running job: listen for commands attaching (a job that may grow),
 * poll them, and tell them of their processes' ends. */
void bipload_attach_listen(void);
int bipload_attach_maxfds(void);
int bipload_attach_pollfds(struct pollfd *pfd);
void bipload_attach_events(const struct pollfd *pfd, int n);
void bipload_attach_check(void);
void bipload_attach_stop(void);
/* For bipload_grow.c, of the command asker: whether it is still
 * connected, the answer to its request, its descriptor k (0, 1, 2, or -1
 * once its processes have them), and the end of its request. */
int bipload_attach_open(int asker);
void bipload_attach_answer(int asker, const char *rec, size_t len);
int bipload_attach_io(int asker, int k);
void bipload_attach_grew(int asker, int first, int total, int failed);
/* bipload --attach JOB: run the commands of the options in job JOB;
 * returns bipload's exit status. */
int bipload_attach_run(const char *target);
/* --- bipload_pm.c: the job --- */
void make_jobid(void);
void make_secret(void);
void on_signal(int sig);
void write_all(int fd, const char *buf, size_t len);
/* What came on a stream of node p: forward its whole lines. */
void bipload_stream_feed(struct proc *p, struct stream *s, const char *data, size_t len);
/* The stream has ended: forward its last line. */
void bipload_stream_end(struct proc *p, struct stream *s);
/* 1 while node p runs (its end not known yet). */
int bipload_proc_running(const struct proc *p);
/* --output-filename: make the directory and open each node's two files
 * (every file -1 without it).  Before any process starts. */
void bipload_output_files(void);
/* Run the started job until every process has ended and its output is
 * forwarded; returns bipload's exit status. */
int bipload_pm_run(int stdin_fd);

#endif /* BIPLOAD_H */
