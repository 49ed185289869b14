/* SPDX-License-Identifier: MIT */
/*
 * boot.h - the start-up module: who this process is, who its peers are, and
 * the exchange of the network drivers' addresses.
 *
 * One module answers, whoever started the job: the node number, the node
 * count, the host of each node (a configuration, struct bip_conf), the job
 * id that names the job's shared memory, and an all-gather of small blobs
 * for the network drivers.  Three back ends give the answers:
 *
 *   bipload  bipload's environment (BIP_NODE, BIP_JOBID, BIP_SECRET) and the
 *            configuration file, or a process started by hand; the drivers'
 *            addresses go through the job's own exchange (oob.h).
 *   pmix     a PMIx server (Slurm's srun --mpi=pmix, PRRTE): the rank, the
 *            size and the namespace from PMIx; each process puts its host
 *            name and its addresses, and a fence gathers them.
 *   pmi2     a PMI-2 server (srun --mpi=pmi2, MPICH's Hydra), through
 *            Slurm's libpmi2 (the client of the PMI-2 wire protocol the
 *            servers speak; it depends on nothing but libc): the same,
 *            with string values (blobs go as hex, in pieces of the
 *            protocol's largest value).
 *
 * The back end is chosen from the environment: BIP_BOOTSTRAP names one
 * (bipload, pmix, pmi2); otherwise BIP_NODE (bipload) wins, then PMIX_RANK
 * (pmix), then PMI_FD or PMI_RANK (pmi2), and a process with none of them
 * was started by hand (bipload's rules).  libpmix and libpmi2 are loaded
 * when their back end is chosen, not when a program starts: a program
 * started by bipload never loads them, and a binary built where they are
 * runs where they are not.
 *
 * Under a resource manager its node names are the hosts: nodes with the
 * same name share a host (shm between them, a network driver to others),
 * and this process's host is the name of its own node.  The job id is
 * derived from the launcher's id of the job (PMIx namespace, PMI-2 job id),
 * the same in every process of the job and different for every job step.
 * Under a launcher that can end the job, a process whose peer ends without
 * the goodbye of bip_finalize ends the job through it (progress.c): srun
 * does not end a step when one task dies.  A fence that does not complete
 * within BIP_INIT_TIMEOUT (a process of the
 * job died before bip_init, or never started) ends this process with a
 * message saying so, instead of waiting for ever.
 *
 * boot.c and the back ends call each other: boot.c holds the table of back
 * ends (bip_boots) and the helpers they share (bip_boot_conf, _jobid,
 * _hostname, _opts, _timeout, _guard_start, _hex ...).  A circle inside
 * this folder, left as it is: moving the helpers into a file of their own,
 * with a header of their own, would open it (lib/README.md).
 */
#ifndef BIP_BOOT_H
#define BIP_BOOT_H

#include <stddef.h>

#include "conf.h"

struct bip_oob_job;

/* What start-up learns. */
struct bip_boot {
	int mynode;
	int numnodes;
	struct bip_conf *conf;          /* numnodes nodes: their hosts (and routes) */
	char jobid[BIP_JOBID_MAX + 2];
	int quiet;                      /* BIP_OPTS's q */
	int launched;                   /* 1 if a launcher started this process */
	int can_abort;                  /* 1 if the launcher can end the whole job */
	/* A job that may grow (bip_grow(3)): numnodes is then the job's room
	 * (BIP_UNIVERSE), nodes known the nodes that exist when this process
	 * starts, and this process was started with the nodes group_first to
	 * group_first + group_size - 1 (BIP_GROUP; 0 and known for the
	 * job's first processes).  Without: all three equal numnodes. */
	int known;
	int started;                    /* the nodes the job started with */
	int grows;                      /* 1 if the job has room to grow */
	int group_first, group_size;
};

struct bip_boot_ops {
	const char *name;
	/* 1 if compiled in and its library loads; else 0 and why. */
	int (*available)(char *why, size_t len);
	/* 1 if the environment says this back end started the process. */
	int (*detected)(void);
	/* Fill b (conf allocated); a negative errno with a message in err. */
	int (*start)(struct bip_boot *b, char *err, size_t errlen);
	/* The drivers' all-gather (as bip_oob_allgather). */
	int (*allgather)(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
			 char *err, size_t errlen);
	/* End the whole job now, with an exit code and a message; NULL: the
	 * back end has no way to, and the process exits alone. */
	void (*abort)(int code, const char *msg);
	/* Leave the launcher at bip_finalize (may be NULL). */
	void (*finish)(void);
};

/* The back ends compiled in, bipload first. */
extern const struct bip_boot_ops *const bip_boots[];
extern const size_t bip_nboots;

/*
 * The back end chosen by the environment now (see above), without starting
 * it: NULL with a message in err when BIP_BOOTSTRAP is wrong or names one
 * that is not compiled in or cannot run here.
 */
const struct bip_boot_ops *bip_boot_choose(char *err, size_t errlen);

/* Choose and start a back end (bip_init).  0 or a negative errno with err. */
int bip_boot_start(struct bip_boot *b, char *err, size_t errlen);

/* The name of the back end started ("" before). */
const char *bip_boot_name(void);

/* The all-gather of the network drivers, through the back end started. */
int bip_boot_allgather(const struct bip_oob_job *job, const void *blob, size_t len, void *all,
		       char *err, size_t errlen);

/* End the whole job (MPI_Abort): through the launcher when the back end
 * can, else this process exits with code (its launcher ends the rest). */
void bip_boot_abort(int code, const char *msg) __attribute__((noreturn));

/* Leave the launcher (bip_finalize). */
void bip_boot_finish(void);

/*
 * Helpers of the back ends (boot.c).
 */
/* A job id from a launcher's id of the job: a letter and a 64-bit hash. */
void bip_boot_jobid(char *out, size_t len, char prefix, const char *launcher_id);
/* The configuration of numnodes nodes on the given hosts (host of node i
 * at hosts + i * stride); this process's host is hosts[mynode]. */
int bip_boot_conf(struct bip_boot *b, const char *hosts, size_t stride, char *err,
		  size_t errlen);
/* This host's name for the launcher's peers: SLURMD_NODENAME, BIP_HOST, or
 * the kernel's host name. */
void bip_boot_hostname(char *out, size_t len);
/* BIP_OPTS under a launcher: q applies; n<k> must match the size. */
int bip_boot_opts(struct bip_boot *b, char *err, size_t errlen);
/* Seconds a fence may take: BIP_INIT_TIMEOUT, else 10 + 2 per node. */
int bip_boot_timeout(int numnodes, double *out, char *err, size_t errlen);
/* A guard for a blocking call of the launcher's library: if it has not
 * returned within secs, the process prints why and exits. */
void bip_boot_guard_start(double secs, const char *what);
void bip_boot_guard_stop(void);
/* Hex for blobs that travel as strings. */
void bip_boot_hex(char *out, const void *blob, size_t len);
int bip_boot_unhex(void *blob, const char *hex, size_t len);

#endif /* BIP_BOOT_H */
