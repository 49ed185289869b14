/* SPDX-License-Identifier: MIT */
/*
 * bipload_slurm.c - bipload inside a Slurm allocation (bipload.h).
 *
 * When SLURM_JOB_ID is set and the user gives no configuration (no -f, no
 * $BIPCONF, no ~/.bip/bipconf), the nodes come from the allocation:
 * SLURM_JOB_NODELIST, expanded by scontrol show hostnames, and
 * SLURM_TASKS_PER_NODE ("2(x3),1"), filled node after node (as srun's
 * block distribution does); processes beyond the allocation's tasks go one
 * per node in turn.  Without -sz, the job has the allocation's tasks.
 *
 * Every process then starts through one proxy per host (bipload-proxy,
 * bipload_remote.c), and every proxy through one srun step of one task per
 * host, as MPICH's Hydra does:
 *
 *   srun -N H -n H --ntasks-per-node=1 --overlap --mpi=none
 *        --kill-on-bad-exit=0 --input=none --export=ALL -w HOSTS
 *        bipload-proxy --connect ADDR:PORT,...
 *
 * so that Slurm accounts for one step whatever the number of processes,
 * kills the proxies (and with them the processes) with the allocation, and
 * gives each proxy, the only task of its node, all the job's CPUs there (a
 * step takes them all unless --exact).  A --rsh or BIP_RSH given by the
 * user still wins: one proxy per host through it.
 *
 * A job that grows has room for the allocation's tasks (MPI_UNIVERSE_SIZE),
 * and may start nodes on the allocation's hosts where none runs yet: the proxy of such a host comes from a step of its own, "srun
 * -N 1 -n 1 ... -w HOST bipload-proxy --connect ...", with --overlap, and
 * connects back as the others did (bipload_remote_late).
 *
 * The processes on other nodes read the configuration from a file, so it
 * is written into the working directory, which the proxies already need on
 * every node (.bipload-<job id>.conf), and removed when bipload exits.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bipload.h"

static int all_remote;
static int one_step;

/* The allocation's host names, one per line of scontrol's output. */
static int hostnames(const char *nodelist, char ***hosts_p)
{
	char cmd[64 + 4096], line[BIP_CONF_HOSTLEN + 2], **hosts = NULL;
	int n = 0, rc;
	FILE *f;

	if (strlen(nodelist) > 4000 || strchr(nodelist, '\''))
		die("SLURM_JOB_NODELIST is not a node list: %.80s", nodelist);
	snprintf(cmd, sizeof(cmd), "scontrol show hostnames '%s' 2>&1", nodelist);
	f = popen(cmd, "r");
	if (!f)
		die("cannot run scontrol to expand the allocation's nodes: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (bip_array_grow((void **)&hosts, n + 1, sizeof(*hosts)) < 0 ||
		    !(hosts[n] = strdup(line)))
			die("out of memory");
		n++;
	}
	rc = pclose(f);
	if (rc != 0 || n == 0)
		die("scontrol show hostnames '%s' failed%s%s: is Slurm's scontrol in PATH? (or "
		    "give a configuration with -f)", nodelist, n ? ": " : "", n ? hosts[0] : "");
	*hosts_p = hosts;
	return n;
}

/* SLURM_TASKS_PER_NODE, "2(x3),1": counts[i] for each of n nodes (0 where
 * it says nothing).  Returns the total. */
static int tasks_per_node(const char *s, int *counts, int n)
{
	int node = 0, total = 0;

	while (s && *s && node < n) {
		char *end;
		long c = strtol(s, &end, 10), rep = 1;

		if (end == s || c < 0 || c > 65535)
			return 0;
		s = end;
		if (!strncmp(s, "(x", 2)) {
			rep = strtol(s + 2, &end, 10);
			if (end == s + 2 || *end != ')' || rep < 1)
				return 0;
			s = end + 1;
		}
		while (rep-- > 0 && node < n) {
			counts[node++] = (int)c;
			total += (int)c;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
	}
	return total;
}

int bipload_slurm_conf(int nodes, char *conf_path, size_t len)
{
	const char *jobenv = getenv("SLURM_JOB_ID");
	const char *list = getenv("SLURM_JOB_NODELIST");
	char **hosts, what[128];
	int *counts, *placed, n, total, i, k, rc;

	if (!jobenv || !*jobenv)
		return 0;
	if (!list || !*list)
		list = getenv("SLURM_NODELIST");
	if (!list || !*list)
		die("SLURM_JOB_ID=%s is set but SLURM_JOB_NODELIST is not: cannot find the "
		    "allocation's nodes (give a configuration with -f)", jobenv);
	n = hostnames(list, &hosts);
	counts = calloc((size_t)n, sizeof(*counts));
	placed = calloc((size_t)n, sizeof(*placed));
	if (!counts || !placed)
		die("out of memory");
	total = tasks_per_node(getenv("SLURM_TASKS_PER_NODE"), counts, n);
	if (!nodes)
		nodes = total > 0 ? total : n;
	if (nodes > BIP_CONF_MAXNODES)
		die("-sz %d: at most %d nodes", nodes, BIP_CONF_MAXNODES);
	rc = bip_conf_local(nodes, &conf);
	if (rc < 0)
		die("cannot describe %d nodes: %s", nodes, strerror(-rc));
	/* Block: fill each node with its tasks; then one per node in turn. */
	for (i = 0, k = 0; i < nodes; i++) {
		while (k < n && placed[k] >= counts[k])
			k++;
		if (k == n) {
			int m = (i - total) % n;

			snprintf(conf->nodes[i].host, BIP_CONF_HOSTLEN, "%s", hosts[m]);
			conf->nodes[i].unit = placed[m]++;
		} else {
			snprintf(conf->nodes[i].host, BIP_CONF_HOSTLEN, "%s", hosts[k]);
			conf->nodes[i].unit = placed[k]++;
		}
	}
	/* The allocation's hosts where no node runs: a job that grows may
	 * start nodes there, through a proxy of a step of its own
	 * (bipload_remote_late). */
	for (k = 0; k < n; k++) {
		for (i = 0; i < nodes && strcmp(conf->nodes[i].host, hosts[k]); i++)
			;
		if (i < nodes)
			continue;
		bipload_spare_hosts = realloc(bipload_spare_hosts,
					      ((size_t)bipload_nspare + 1) * sizeof(char *));
		if (!bipload_spare_hosts || !(bipload_spare_hosts[bipload_nspare] = strdup(hosts[k])))
			die("out of memory");
		bipload_nspare++;
	}
	/* The room of a job that grows, as MPI's launchers count the
	 * universe inside an allocation: its tasks (bipload_grow.c). */
	bipload_host_slots = total > 0 ? total : n;
	snprintf(what, sizeof(what), "inside Slurm allocation %.64s", jobenv);
	bipload_conf_file(conf_path, len, what);
	all_remote = 1;
	one_step = !opt.rsh;
	if (!opt.quiet)
		info("inside Slurm allocation %s: %d node%s on %d host%s (%s), started %s",
		     jobenv, nodes, nodes > 1 ? "s" : "", n, n > 1 ? "s" : "", list,
		     one_step ? "by one srun step, a proxy per host" : "through the remote shell");
	for (i = 0; i < n; i++)
		free(hosts[i]);
	free(hosts);
	free(counts);
	free(placed);
	return 1;
}

int bipload_slurm_all_remote(void)
{
	return all_remote;
}

int bipload_slurm_step(void)
{
	return one_step;
}

void bipload_slurm_command(char **argv, char *const *hosts, int n, char *const *proxy_argv)
{
	static char count[16], nodes[32], *list;
	size_t len = 1;
	int i, k = 0;

	for (i = 0; i < n; i++)
		len += strlen(hosts[i]) + 1;
	free(list);
	list = malloc(len);
	if (!list)
		die("out of memory");
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, hosts[i]);
	}
	snprintf(count, sizeof(count), "%d", n);
	snprintf(nodes, sizeof(nodes), "%d", n);
	argv[k++] = "srun";
	argv[k++] = "-N";
	argv[k++] = nodes;
	argv[k++] = "-n";
	argv[k++] = count;
	argv[k++] = "--ntasks-per-node=1";
	argv[k++] = "--overlap";
	argv[k++] = "--mpi=none";
	argv[k++] = "--kill-on-bad-exit=0";
	argv[k++] = "--input=none";
	argv[k++] = "--export=ALL";
	argv[k++] = "-w";
	argv[k++] = list;
	for (i = 0; proxy_argv[i]; i++)
		argv[k++] = proxy_argv[i];
	argv[k] = NULL;
}
