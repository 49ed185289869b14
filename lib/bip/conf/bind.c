/* SPDX-License-Identifier: MIT */
/*
 * bind.c - a node's process bound to one CPU (bind.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind.h"

/* Enough for the CPU numbers Linux has today (CPU_SETSIZE is 1024). */
#define BIND_MAXCPUS 8192

int bip_bind_parse(const char *s, enum bip_bind_mode *mode, char *err, size_t errlen)
{
	if (!s || !*s || !strcmp(s, "none")) {
		*mode = BIP_BIND_NONE;
		return 0;
	}
	if (!strcmp(s, "core")) {
		*mode = BIP_BIND_CORE;
		return 0;
	}
	snprintf(err, errlen, "%s=%s: expected core or none", BIP_ENV_BIND, s);
	return -EINVAL;
}

int bip_bind_local_index(const struct bip_conf *conf, int node)
{
	const char *me = conf->nodes[node].host;
	int local = bip_host_is_local(me), i, k = 0;

	for (i = 0; i < node; i++) {
		const char *h = conf->nodes[i].host;

		k += !strcmp(h, me) || (local && bip_host_is_local(h));
	}
	return k;
}

static cpu_set_t *cpus_get(size_t *size)
{
	cpu_set_t *set = CPU_ALLOC(BIND_MAXCPUS);

	*size = CPU_ALLOC_SIZE(BIND_MAXCPUS);
	if (set && sched_getaffinity(0, *size, set) < 0) {
		CPU_FREE(set);
		return NULL;
	}
	return set;
}

int bip_bind_core(int k, char *err, size_t errlen)
{
	size_t size;
	cpu_set_t *set = cpus_get(&size);
	int n, cpu, seen = 0, rc = 0;

	if (!set) {
		snprintf(err, errlen, "cannot read the CPUs this process may use: %s",
			 strerror(errno));
		return -errno;
	}
	n = CPU_COUNT_S(size, set);
	if (n <= 0) {
		CPU_FREE(set);
		snprintf(err, errlen, "this process may use no CPU");
		return -EINVAL;
	}
	for (cpu = 0; cpu < BIND_MAXCPUS; cpu++) {
		if (!CPU_ISSET_S(cpu, size, set))
			continue;
		if (seen++ == k % n)
			break;
	}
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	if (sched_setaffinity(0, size, set) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot bind to CPU %d: %s", cpu, strerror(errno));
	}
	CPU_FREE(set);
	return rc;
}

void bip_bind_cpus(char *buf, size_t len)
{
	size_t size, used = 0;
	cpu_set_t *set = cpus_get(&size);
	int cpu = 0;

	snprintf(buf, len, "?");
	if (!set)
		return;
	buf[0] = '\0';
	while (cpu < BIND_MAXCPUS && used < len) {
		int first;

		if (!CPU_ISSET_S(cpu, size, set)) {
			cpu++;
			continue;
		}
		first = cpu;
		while (cpu + 1 < BIND_MAXCPUS && CPU_ISSET_S(cpu + 1, size, set))
			cpu++;
		if (cpu == first)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", first);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
						 first, cpu);
		cpu++;
	}
	CPU_FREE(set);
}

int bip_host_cpus(const char **why)
{
	const char *slurm = getenv("SLURM_CPUS_ON_NODE"), *bind = getenv(BIP_ENV_BIND);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	const char *dummy;
	size_t size;
	cpu_set_t *set;
	int n;

	if (!why)
		why = &dummy;
	if (slurm && *slurm) {
		char *end;
		long v = strtol(slurm, &end, 10);

		if (!*end && v > 0 && v < BIND_MAXCPUS) {
			*why = "SLURM_CPUS_ON_NODE";
			return (int)v;
		}
	}
	*why = "online";
	if (online < 1)
		online = 1;
	if (bind && !strcmp(bind, "core"))
		return (int)online;
	set = cpus_get(&size);
	if (!set)
		return (int)online;
	n = CPU_COUNT_S(size, set);
	CPU_FREE(set);
	if (n < 1)
		return (int)online;
	*why = "affinity";
	return n;
}
