/* SPDX-License-Identifier: MIT */
/*
 * biproute - write the routing database $HOME/.bip/bipdatabase (manual 4.5).
 *
 *   biproute host...
 *
 * For now every pair of hosts is reachable directly (route 256); the format
 * (bipconf(5)) leaves room for switches and multi-hop routes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bipdatabase.h"

/* argv: the host names, NULL-terminated. */
static int write_database(FILE *f, const void *arg)
{
	char *const *hosts = arg;
	int i, j;

	fprintf(f, "# BIP routing database, written by biproute (format: bipconf(5))\n");
	for (i = 0; hosts[i]; i++)
		fprintf(f, "host %s\n", hosts[i]);
	for (i = 0; hosts[i]; i++)
		for (j = 0; hosts[j]; j++)
			if (i != j)
				fprintf(f, "route %s %s %d\n", hosts[i], hosts[j], BIP_ROUTE_DIRECT);
	return ferror(f) ? -EIO : 0;
}

int main(int argc, char **argv)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX], err[512];
	int i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: biproute host...\n");
		return argc < 2 ? 2 : 0;
	}
	if (!home || !*home) {
		fprintf(stderr, "biproute: HOME is not set\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (!*argv[i] || strlen(argv[i]) >= 256 || strpbrk(argv[i], " \t#")) {
			fprintf(stderr, "biproute: \"%s\" is not a host name\n", argv[i]);
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s/.bip", home);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "biproute: %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/.bip/bipdatabase", home);
	if (bip_file_replace(path, write_database, argv + 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "biproute: %s\n", err);
		return 1;
	}
	return 0;
}
