/* SPDX-License-Identifier: MIT */
/*
 * bind.h - binding a node's process to a CPU (BIP_BIND), and the line that
 * reports where it runs (BIP_REPORT_BINDINGS).  Shared by libbip, which
 * binds each process as it starts BIP, and bipload, which binds its local
 * processes before they run the program.
 *
 * BIP_BIND=core gives the k-th node of a host (in node order) the
 * (k mod m)-th of the m CPUs its process may use when it starts (the
 * affinity it inherits: a cgroup's or a batch system's cpuset is kept).
 * BIP_BIND=none, or unset, leaves the affinity alone.  Binding the same
 * node twice gives the same CPU: after the first, its set is that one CPU.
 */
#ifndef BIP_BIND_H
#define BIP_BIND_H

#include <stddef.h>

#include "conf.h"

#define BIP_ENV_BIND "BIP_BIND"
#define BIP_ENV_REPORT_BINDINGS "BIP_REPORT_BINDINGS"

enum bip_bind_mode { BIP_BIND_NONE, BIP_BIND_CORE };

/* BIP_BIND's value (NULL or "" is none): the mode, or -EINVAL with the
 * reason in err. */
int bip_bind_parse(const char *s, enum bip_bind_mode *mode, char *err, size_t errlen);

/* The number of nodes before node that run on its host. */
int bip_bind_local_index(const struct bip_conf *conf, int node);

/* Bind the calling thread (and the threads it starts from then on) to the
 * CPU of local index k (see above); 0, or a negative errno with the
 * reason in err. */
int bip_bind_core(int k, char *err, size_t errlen);

/* The CPUs the calling process may run on, as a list ("0-3,6"); "?" if
 * they cannot be read. */
void bip_bind_cpus(char *buf, size_t len);

/*
 * The processors the job's processes on this host share, for the waiting
 * policy (BIP_WAIT=auto: do they outnumber them?).  Every process of the
 * host must find the same number, so it comes from what they all inherit:
 *  - under Slurm, SLURM_CPUS_ON_NODE (the job's CPUs on this node: srun
 *    may bind each task to its own, so the affinity would say 1);
 *  - with BIP_BIND=core, the processors online (the launcher may have
 *    bound each process to its own CPU already, so the affinity no longer
 *    tells the set they came from);
 *  - else the CPUs of the process's affinity (taskset, a cpuset);
 *  - the processors online when that cannot be read.
 * Call it before bip_bind_core.  *why (if not NULL) says which.
 */
int bip_host_cpus(const char **why);

#endif /* BIP_BIND_H */
