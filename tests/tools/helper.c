/* SPDX-License-Identifier: MIT */
/* A program for bipload's tests; it does not use BIP.  helper WHAT [ARG] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_or_dash(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "-";
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int node = atoi(getenv("BIP_NODE") ? getenv("BIP_NODE") : "-1");
	int i;

	if (!strcmp(what, "env")) {
		printf("node %d opts %s conf %s\n", node, getenv("BIP_OPTS"),
		       getenv("BIPCONF") ? getenv("BIPCONF") : "-");
	} else if (!strcmp(what, "where")) {
		/* Where it runs and what it was given, one line: bipload across hosts. */
		static const char *const vars[] = { "BIP_HOST",   "BIP_OPTS",   "BIPCONF",
						    "BIP_JOBID",  "PATH",       "LD_LIBRARY_PATH",
						    "BIPTEST_X1", "BIPTEST_X2", "BIP_TEST_CARRIED",
						    "NOT_CARRIED", "BIP_SECRET", "BIP_APPNUM",
						    "BIPTEST_ENV" };
		char net[64] = "-", cwd[4096] = "-";
		ssize_t n = readlink("/proc/self/ns/net", net, sizeof(net) - 1);
		size_t k;

		if (n > 0)
			net[n] = '\0';
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, "-");
		printf("node %d net %s cwd [%s]", node, net, cwd);
		for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
			printf(" %s=[%s]", vars[k], env_or_dash(vars[k]));
		for (i = 2; i < argc; i++)
			printf(" arg=[%s]", argv[i]);
		printf("\n");
	} else if (!strcmp(what, "cpus")) {
		/* The CPUs it may run on, as the kernel says: --bind-to. */
		char line[4096];
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18))
				printf("node %d cpus %s", node, line + 18 + strspn(line + 18, " \t"));
		if (f)
			fclose(f);
	} else if (!strcmp(what, "lines")) {
		/* Many lines written in small pieces: they must arrive whole. */
		for (i = 0; i < 200; i++) {
			printf("node %d line %d ", node, i);
			fflush(stdout);
			printf("%0300d end\n", i);
			fflush(stdout);
		}
	} else if (!strcmp(what, "stdin")) {
		char line[256];

		if (node == 0 && fgets(line, sizeof(line), stdin))
			printf("node 0 read %s", line);
	} else if (!strcmp(what, "exit")) {
		if (node == 1)
			exit(atoi(argv[2]));
		sleep(30);
	} else if (!strcmp(what, "signal")) {
		if (node == 2)
			raise(atoi(argv[2]));
		sleep(30);
	} else if (!strcmp(what, "stubborn")) {
		/* Ignores SIGTERM: only SIGKILL stops it. */
		signal(SIGTERM, SIG_IGN);
		if (node == 1)
			exit(atoi(argv[2]));
		sleep(30);
	} else if (!strcmp(what, "sleep")) {
		sleep(30);
	}
	return 0;
}
