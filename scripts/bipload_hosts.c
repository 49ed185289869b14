/* SPDX-License-Identifier: MIT */
/*
 * bipload_hosts.c - the nodes of a host list or a host file (bipload.h).
 *
 *   --host a,b:2,a      a host per word; ":N" gives it N slots, a word
 *                       without one gives 1, and a host named again adds
 *                       its slots (Open MPI's --host, MPICH's -hosts)
 *   --hostfile FILE     one host per line: "a", "a slots=N", "a:N" (MPICH),
 *                       "a slots=N max_slots=M"; '#' starts a comment
 *
 * Every host keeps the order it was first named in.  The nodes fill the
 * hosts in that order, each up to its slots (or --ppn N each, whatever the
 * slots say), as Open MPI's and MPICH's launchers place ranks by slot.
 * Without -sz the job has one node per slot.  More nodes than slots is an
 * error unless --oversubscribe: the rest then go one per host in turn,
 * never beyond a host's max_slots.
 *
 * The hosts of other machines that the nodes do not fill are kept
 * (bipload_spare_hosts): a job that grows may start nodes there.
 *
 * When every host is this one, the configuration is the one bipload makes
 * for -sz alone and no file is written.  Otherwise the processes on other
 * hosts read it from a file in the working directory, which bipload's
 * remote shells need on every host already (bipload_conf_file, also used
 * inside a Slurm allocation).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bipload.h"

struct host {
	char *name;
	int slots;
	int max;        /* max_slots, 0: none */
	int placed;
};

static struct host *hosts;
static int nhosts;
static char conf_file[PATH_MAX];

static void remove_conf(void)
{
	if (conf_file[0] && getpid() == bipload_pid)
		unlink(conf_file);
}

static int conf_writer(FILE *f, const void *arg)
{
	return bip_conf_write(f, arg);
}

void bipload_conf_file(char *conf_path, size_t len, const char *what)
{
	char err[512], cwd[PATH_MAX];
	int rc;

	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));
	rc = snprintf(conf_path, len, "%s/.bipload-%s.conf", cwd, jobid);
	if (rc < 0 || (size_t)rc >= len)
		die("the working directory's path is too long");
	if (bip_file_replace(conf_path, conf_writer, conf, err, sizeof(err)) < 0)
		die("%s: cannot write the job's configuration: %s (the working directory must be "
		    "one that every host shares)", what, err);
	snprintf(conf_file, sizeof(conf_file), "%s", conf_path);
	atexit(remove_conf);
}

/* A host name as the configuration and the remote shell take it. */
static int valid_host(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= BIP_CONF_HOSTLEN || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < len; i++)
		if (!(s[i] == '-' || s[i] == '.' || s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/* "N" as a count of slots (1 .. 65535); -1 if it is not one. */
static int slot_count(const char *s, size_t len)
{
	char buf[16], *end;
	long v;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtol(buf, &end, 10);
	return *end || v < 1 || v > 65535 ? -1 : (int)v;
}

static void add_host(const char *name, size_t len, int slots, int max, const char *where)
{
	int i;

	for (i = 0; i < nhosts; i++) {
		if (strlen(hosts[i].name) != len || strncmp(hosts[i].name, name, len))
			continue;
		if (hosts[i].slots + slots > 65535)
			die("%s: host %s has more than 65535 slots", where, hosts[i].name);
		hosts[i].slots += slots;
		if (max)
			hosts[i].max = max;
		return;
	}
	if (bip_array_grow((void **)&hosts, nhosts + 1, sizeof(*hosts)) < 0 ||
	    !(hosts[nhosts].name = strndup(name, len)))
		die("out of memory");
	hosts[nhosts].slots = slots;
	hosts[nhosts].max = max;
	hosts[nhosts].placed = 0;
	nhosts++;
}

/* "host" or "host:N", of --host or a host file's MPICH line. */
static void add_word(const char *w, size_t len, const char *where)
{
	const char *colon = memchr(w, ':', len);
	size_t hlen = colon ? (size_t)(colon - w) : len;
	int slots = 1;

	if (colon) {
		slots = slot_count(colon + 1, len - hlen - 1);
		if (slots < 0)
			die("%s: %.*s: expected HOST or HOST:N, N a number of slots (1 .. 65535)",
			    where, (int)len, w);
	}
	if (!valid_host(w, hlen))
		die("%s: %.*s: not a host name (letters, digits, '.', '-' and '_')", where,
		    (int)hlen, w);
	add_host(w, hlen, slots, 0, where);
}

static void parse_list(const char *list)
{
	char where[64];
	const char *p = list;

	snprintf(where, sizeof(where), "--host %.40s", list);
	do {
		size_t n = strcspn(p, ",");

		if (!n)
			die("%s: an empty host name", where);
		add_word(p, n, where);
		p += n;
	} while (*p++ == ',');
}

/* "key=N" of a host file; -1 if line's word w is not key=N. */
static int keyword(const char *w, const char *key, const char *where)
{
	size_t k = strlen(key);
	int v;

	if (strncmp(w, key, k) || w[k] != '=')
		return -1;
	v = slot_count(w + k + 1, strlen(w + k + 1));
	if (v < 0)
		die("%s: %s: expected a number (1 .. 65535)", where, w);
	return v;
}

static void parse_line(char *line, const char *where)
{
	char *save = NULL, *w = strtok_r(line, " \t\r", &save);
	int slots = -1, max = 0, v;
	char *name = w;

	if (!w)
		return;
	if (strchr(w, ':')) {
		add_word(w, strlen(w), where);
		if ((w = strtok_r(NULL, " \t\r", &save)))
			die("%s: %s: nothing may follow HOST:N", where, w);
		return;
	}
	if (!valid_host(name, strlen(name)))
		die("%s: %s: not a host name (letters, digits, '.', '-' and '_')", where, name);
	while ((w = strtok_r(NULL, " \t\r", &save))) {
		if ((v = keyword(w, "slots", where)) > 0)
			slots = v;
		else if ((v = keyword(w, "max_slots", where)) > 0 ||
			 (v = keyword(w, "max-slots", where)) > 0)
			max = v;
		else
			die("%s: %s: expected slots=N or max_slots=N", where, w);
	}
	if (slots < 0)
		slots = 1;
	if (max && slots > max)
		die("%s: slots=%d is more than max_slots=%d", where, slots, max);
	add_host(name, strlen(name), slots, max, where);
}

static void parse_file(const char *path)
{
	char line[4096], where[PATH_MAX + 32];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		die("--hostfile %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');

		n++;
		snprintf(where, sizeof(where), "%s:%d", path, n);
		if (!strchr(line, '\n') && !feof(f))
			die("%s: line too long", where);
		if (hash)
			*hash = '\0';
		line[strcspn(line, "\n")] = '\0';
		parse_line(line, where);
	}
	if (ferror(f))
		die("--hostfile %s: %s", path, strerror(errno));
	fclose(f);
	if (!nhosts)
		die("--hostfile %s: no host in it", path);
}

/* The host of the next node: the first with a free slot, else (with
 * --oversubscribe) the next in turn below its max_slots; -1 if none. */
static int capacity(const struct host *h)
{
	int cap = opt.ppn ? opt.ppn : h->slots;

	return h->max && cap > h->max ? h->max : cap;
}

static int next_host(int *turn)
{
	int i;

	for (i = 0; i < nhosts; i++)
		if (hosts[i].placed < capacity(&hosts[i]))
			return i;
	for (i = 0; i < nhosts; i++) {
		int h = (*turn)++ % nhosts;

		if (!hosts[h].max || hosts[h].placed < hosts[h].max)
			return h;
	}
	return -1;
}

int bipload_host_slots;
char **bipload_spare_hosts;
int bipload_nspare;

int bipload_hosts_conf(int nodes, char *conf_path, size_t len)
{
	int i, total = 0, turn = 0, all_here = 1, rc;
	char what[64];

	if (!opt.nhosts && !opt.hostfile)
		return 0;
	for (i = 0; i < opt.nhosts; i++)
		parse_list(opt.hosts[i]);
	if (opt.hostfile)
		parse_file(opt.hostfile);
	for (i = 0; i < nhosts; i++) {
		total += capacity(&hosts[i]);
		all_here &= bip_host_is_local(hosts[i].name);
	}
	bipload_host_slots = total;
	if (!nodes)
		nodes = total;
	if (nodes > total && !opt.oversubscribe)
		die("%d nodes, but the hosts have %d slot%s%s: give fewer, more slots, or "
		    "--oversubscribe", nodes, total, total > 1 ? "s" : "",
		    opt.ppn ? " at --ppn" : "");
	if (nodes > BIP_CONF_MAXNODES)
		die("%d nodes: at most %d", nodes, BIP_CONF_MAXNODES);
	rc = bip_conf_local(nodes, &conf);
	if (rc < 0)
		die("cannot describe %d nodes: %s", nodes, strerror(-rc));
	for (i = 0; i < nodes; i++) {
		int h = next_host(&turn);

		if (h < 0)
			die("%d nodes: more than the hosts' max_slots", nodes);
		snprintf(conf->nodes[i].host, BIP_CONF_HOSTLEN, "%s", hosts[h].name);
		conf->nodes[i].unit = hosts[h].placed++;
	}
	/* Hosts of the list that got no node: a job that grows may start
	 * nodes there later, through a proxy started then
	 * (bipload_remote.c). */
	for (i = 0; i < nhosts; i++) {
		if (!hosts[i].placed && !bip_host_is_local(hosts[i].name)) {
			bipload_spare_hosts = realloc(bipload_spare_hosts,
						      ((size_t)bipload_nspare + 1) * sizeof(char *));
			if (!bipload_spare_hosts)
				die("out of memory");
			bipload_spare_hosts[bipload_nspare++] = hosts[i].name;
			continue;
		}
		free(hosts[i].name);
	}
	free(hosts);
	if (all_here) {
		/* This host's own name, as for -sz alone. */
		bip_conf_free(conf);
		rc = bip_conf_local(nodes, &conf);
		if (rc < 0)
			die("cannot describe %d nodes: %s", nodes, strerror(-rc));
		conf_path[0] = '\0';
		return 1;
	}
	snprintf(what, sizeof(what), "%d nodes on %d hosts", nodes, nhosts);
	bipload_conf_file(conf_path, len, what);
	return 1;
}
