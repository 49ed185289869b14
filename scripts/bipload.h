/* SPDX-License-Identifier: MIT */
/*
 * bipload.h - the parts of bipload and what each offers the others.
 *
 * bipload is split by concern, as MPICH's Hydra is:
 *
 *   bipload.c       the user interface: options, BIP_OPTS, the configuration,
 *                   the program, main
 *   bipload_pm.c    the process manager: the job's identity (id, secret), the
 *                   process table, output forwarding, supervision (failures,
 *                   time-outs, signals), clean-up and the final report
 *   bipload_boot.c  the bootstrap back ends that start one node's process:
 *                   local (fork and exec) and rsh (a remote shell running a
 *                   small sh script), each a struct bipload_boot
 *   bipload_hosts.c the nodes of a host list or host file (--host,
 *                   --hostfile), and the job's configuration file
 *   bipload_lanai.c the simulated board's firmware, started for the job
 *   bipload_slurm.c the nodes of a Slurm allocation, started through srun
 *
 * Everything here is one process's state, shared by the parts.
 */
#ifndef BIPLOAD_H
#define BIPLOAD_H

#include <stddef.h>
#include <sys/types.h>

#include "conf.h"

#define LINE_MAX_FWD 65536
#define DEFAULT_RSH "ssh -o BatchMode=yes -o ConnectTimeout=10"
/* Seconds a stopped remote process's shell gets beyond the grace period
 * before bipload kills the remote shell itself. */
#define REMOTE_SLACK 10.0

struct stream {
	int fd;                 /* -1 at EOF */
	int out;                /* where its lines go: 1 or 2 */
	size_t len;
	char buf[LINE_MAX_FWD];
};

struct bipload_boot;

struct proc {
	int node;
	int app;                /* its command (MPMD: bipload a : b) */
	int relay;              /* a relay of a gateway host (bipgw), not the program */
	const struct bipload_boot *boot; /* how it is started */
	pid_t pid;              /* 0 once reaped */
	pid_t started;          /* its pid, for the report */
	int status;
	int stopped;            /* bipload sent it a signal */
	int judged;             /* its end was taken into account */
	struct stream s[2];     /* stdout, stderr */
	int file[2];            /* --output-filename: its files, or -1 */
	/* Remote processes: pid and started are those of the remote shell. */
	int remote;
	int stdin_fd;           /* our end of the remote shell's stdin, or -1 */
	double kill_at;         /* when stopped: kill the remote shell after this */
	long remote_pid;        /* the process's pid on its host, 0 until told */
	int start_late;         /* not started within start_limit: a failure */
	int remote_status;      /* its status as its host tells, -1 until told */
	char **rargv;           /* the remote shell's command: words of */
	char *rwords, *rscript; /* these two strings */
	char *cmd;              /* the command, quoted, for messages */
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
};

extern struct bipload_opts opt;
extern struct bip_conf *conf;
extern struct proc *procs;
extern int nprocs;
extern char jobid[BIP_JOBID_MAX + 1];
extern char mark[BIP_JOBID_MAX + 16];  /* "bipload-<jobid>: " */
extern char secret[129];               /* the job's BIP_SECRET (make_secret) */
extern int sig_pipe[2];
extern pid_t bipload_pid;
extern double grace;                   /* seconds from SIGTERM to SIGKILL */
extern double start_limit;             /* seconds for a remote shell to start */

/* --- bipload.c: messages and helpers --- */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double now_s(void);
/* 1 if s[0..len) is a variable name. */
int valid_name(const char *s, size_t len);
/* A program bipload starts for the job (lanai-sim, bipgw): $env_name, else
 * name beside bipload, else in build_dir relative to it (the build tree;
 * NULL: none), else name for PATH. */
void bipload_find_helper(const char *env_name, const char *name, const char *build_dir,
			 char *buf, size_t len);
/* The command node runs. */
const struct bipload_app *app_of(int node);
/* The relays of the gateway hosts (bipgw), started after the program's
 * nodes: their count (bipload.c). */
extern int nrelays;

/* --- bipload_hosts.c: host lists and the job's configuration file --- */
/* If --host or --hostfile was given: the configuration of their nodes
 * (nodes processes, 0: one per slot), written to a file named in conf_path
 * when some host is another ("" if all are this one); returns 1.  0 if
 * neither was given.  Dies with the reason when it cannot. */
int bipload_hosts_conf(int nodes, char *conf_path, size_t len);
/* Write conf to .bipload-<job id>.conf in the working directory, which
 * every host must share (its path in conf_path), removed when bipload
 * exits; what names the source for the error. */
void bipload_conf_file(char *conf_path, size_t len, const char *what);

/* --- bipload_slurm.c: inside a Slurm allocation --- */
/* If SLURM_JOB_ID is set: the configuration of nodes processes (0: the
 * allocation's tasks) on the allocation's nodes, written to a file named in
 * conf_path (removed at exit), srun as the remote shell unless the user
 * gave one; returns 1.  0 outside an allocation.  Dies with the reason
 * when it cannot.  Needs the job id. */
int bipload_slurm_conf(int nodes, char *conf_path, size_t len);
/* 1 if every process starts through the remote shell (inside an allocation). */
int bipload_slurm_all_remote(void);

/* --- bipload_boot.c: starting one node's process --- */
struct bipload_boot {
	const char *name;
	/* Before any process starts: what the back end needs for node. */
	void (*prepare)(struct proc *p, int node, const char *conf_path, const char *cwd);
	/* In the forked child, its stdio set: become node's process. */
	void (*exec)(struct proc *p, int node, const char *conf_path) __attribute__((noreturn));
};
extern const struct bipload_boot bipload_boot_local;
extern const struct bipload_boot bipload_boot_rsh;
/* Choose node's back end and prepare it. */
void bipload_boot_prepare(struct proc *p, int node, const char *conf_path, const char *cwd);
/* Start node's process (stdin_fd: node 0's stdin when local, or -1). */
void start(int node, const char *conf_path, int stdin_fd);
void set_cloexec_nonblock(int fd);
/* In a child of bipload (parent): die with bipload whatever kills it (and
 * at once if it is gone already), a process group of its own, default
 * signal handling. */
void bipload_child_setup(pid_t parent);

/* --- bipload_pm.c: the job --- */
void make_jobid(void);
void make_secret(void);
void on_signal(int sig);
void write_all(int fd, const char *buf, size_t len);
/* --output-filename: make the directory and open each node's two files
 * (every file -1 without it).  Before any process starts. */
void bipload_output_files(void);
/* Run the started job until every process has ended and its output is
 * forwarded; returns bipload's exit status. */
int bipload_pm_run(int stdin_fd);

#endif /* BIPLOAD_H */
