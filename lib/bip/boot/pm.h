/* SPDX-License-Identifier: MIT */
/*
 * pm.h - the channel between a process and the process manager that
 * started it (bipload), through which a running job grows (bip_grow(3)).
 *
 * bipload gives each process of its own host one end of a socket pair
 * (SOCK_SEQPACKET: one record per message), named by BIP_PM_FD, and keeps
 * the other; in a job over ofi alone, the proxy of another host does the
 * same for its processes and passes the records on both ways.  The
 * library takes the descriptor at bip_init, removes the variable and marks
 * it close-on-exec, so that the programs a process starts do not inherit
 * it.  A process started by hand or under srun has no channel: it cannot
 * grow the job.
 *
 * Messages are records of fields, each ended by a NUL byte, the first the
 * verb.  From the process (every answer comes on the same record order, and
 * the library sends one request at a time, under its own lock):
 *
 *   up FD PID      the drivers are open; FD is the descriptor of this
 *                  process's shared-memory segment, or -1, and PID its pid
 *                  (which bipload gives its host's peers when a proxy
 *                  started it; no answer)
 *   blob HEX       a network driver's address of this process, before it
 *                  looks for its peers' (no answer)
 *   addr NODE      NODE's: "addr NODE HEX", or "addr NODE -E MESSAGE" (EAGAIN:
 *                  not published yet; ESRCH: no such node, or it ended)
 *   where NODE     how to reach NODE's segment: "where NODE PID FD", or
 *                  "where NODE -E MESSAGE" with an errno E (EAGAIN: not up
 *                  yet; ESRCH: no such node, or it ended)
 *   host NODE      the configuration's name of NODE's host: "host NODE
 *                  NAME", or "host NODE -E MESSAGE" (ESRCH); answered
 *                  from the start of NODE's request, so that siblings ask
 *                  before they open their drivers
 *   grow N  then N commands, each: COUNT HOST WDIR PATH ARGC ARGV... NENV
 *                  ENV... (HOST, WDIR, PATH may be empty: where nodes join
 *                  by default, bipload's directory, PATH).  The answer, once every new
 *                  process has said up or failed: "grew FIRST TOTAL ROOM
 *                  E0 E1 ... MESSAGE": the first new node, the processes
 *                  asked, the nodes the job could still take before the
 *                  request, an errno per process (0: it runs), and a
 *                  message when any failed.  When any failed, none of them
 *                  runs any more.
 *
 * Everything bipload sends is read as untrusted: fields are counted and
 * their numbers range-checked before use.
 */
#ifndef BIP_PM_H
#define BIP_PM_H

#include <stddef.h>
#include <sys/types.h>

#define BIP_ENV_PM_FD "BIP_PM_FD"
/* The longest record either side sends or takes. */
#define BIP_PM_MSG_MAX 65536

/* One command of a grow request. */
struct bip_pm_cmd {
	int count;
	const char *host, *wdir, *path;   /* NULL or "": bipload's choice */
	char *const *argv;                /* NULL-terminated */
	const char *const *env;           /* NULL-terminated, or NULL */
};

/* Take BIP_PM_FD (bip_init).  1 with a channel, 0 without. */
int bip_pm_open(void);
/* 1 if this process has a channel to its manager. */
int bip_pm_present(void);
void bip_pm_close(void);

/* Tell the manager the drivers are open (segfd: the shm segment, or -1). */
void bip_pm_up(int segfd);

/* Publish this process's address for a network driver (len bytes, at most
 * BIP_PM_BLOB_MAX), before any peer may ask for it: 0 or a negative errno. */
#define BIP_PM_BLOB_MAX 1024
int bip_pm_blob_put(const void *blob, size_t len);
/* NODE's address as it published it: its length, -EAGAIN (not yet),
 * -ESRCH (no such node, or ended), -ENOTCONN, or another negative errno,
 * with a message in err. */
int bip_pm_blob_get(int node, void *blob, size_t len, char *err, size_t errlen);

/* Where NODE's segment is held: 0 with *pid, *fd; -EAGAIN (not up yet),
 * -ESRCH (no such node, or ended), -ENOTCONN (no manager), or another
 * negative errno, with a message in err. */
int bip_pm_where(int node, pid_t *pid, int *fd, char *err, size_t errlen);

/* The configuration's name of NODE's host, as bipload started it, into
 * host (len bytes): 0, -ESRCH (no such node yet), -ENOTCONN (no manager),
 * or another negative errno, with a message in err. */
int bip_pm_host(int node, char *host, size_t len, char *err, size_t errlen);

/* Start the processes of ncmds commands as new nodes.  Returns the number
 * started (all of them) with *first; or a negative errno with a message in
 * err, errcodes[i] for each process asked (0 for those that could have
 * run), and *room the nodes the job could still take. */
int bip_pm_grow(const struct bip_pm_cmd *cmds, int ncmds, int *first, int *errcodes, int *room,
		char *err, size_t errlen);

#endif /* BIP_PM_H */
