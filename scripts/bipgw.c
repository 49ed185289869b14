/* SPDX-License-Identifier: MIT */
/*
 * bipgw - the relay of a gateway host (bipgw(1)): a node of the job that
 * forwards messages between clusters (lib/bip/paths/fwd.c).  bipload starts one
 * on each gateway host of a configuration with clusters; it is not run by
 * hand.
 */
#include <stdio.h>
#include <string.h>

#include "fwd.h"

int main(int argc, char **argv)
{
	if (argc > 1) {
		int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");

		fprintf(help ? stdout : stderr,
			"usage: bipgw\n"
			"The relay of a gateway host: bipload starts it on each gateway host of a\n"
			"configuration with clusters (bipconf(5)), as a node of the job, and it\n"
			"forwards messages between the clusters until the job ends.  It takes no\n"
			"arguments; see bipgw(1).\n");
		return help ? 0 : 2;
	}
	return bip_relay_run();
}
