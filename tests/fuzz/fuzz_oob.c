/* SPDX-License-Identifier: MIT */
/* Fuzz target: what a listener of the start-up exchange reads from the
 * network before it trusts it: a join frame (before its proof is checked),
 * and a child's report (its proof checked, its contents not yet), for a job
 * of 16 nodes on 4 hosts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "oob.h"

static struct bip_oob_tree *tree;

static struct bip_oob_tree *job_tree(void)
{
	static const char *const hosts[] = { "a", "b", "c", "d" };
	struct bip_conf *conf = NULL;
	char text[4096], err[256];
	size_t used;
	int i, j;

	used = (size_t)snprintf(text, sizeof(text), "16\n");
	for (i = 0; i < 16; i++) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s 0\n", hosts[i % 4]);
		for (j = 0; j < 16; j++)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "256\n");
	}
	if (bip_conf_parse_string(text, "fuzz", &conf, err, sizeof(err)) < 0 ||
	    bip_oob_tree_new(conf, 16, &tree) < 0)
		abort();
	bip_conf_free(conf);
	return tree;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[320];
	int node;

	if (size < 2)
		return 0;
	if (!tree)
		job_tree();
	if (data[0] & 1)
		bip_oob_join_check(data + 2, size - 2, "fuzzjob", 1 + data[1] % 16, 48, data[0] >> 1,
				   &node, why, sizeof(why));
	else
		bip_oob_report_check(tree, 1 + data[1] % 15, data + 2, size - 2, 1 + (data[0] >> 1) % 8,
				     why, sizeof(why));
	return 0;
}
