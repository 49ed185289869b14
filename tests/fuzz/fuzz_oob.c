/* SPDX-License-Identifier: MIT */
/* Fuzz target: a join frame of the start-up exchange, as node 0 reads it
 * from the network (before its proof is checked). */
#include <stdint.h>
#include <string.h>

#include "oob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	size_t blob;
	int node;

	if (!size)
		return 0;
	bip_oob_join_check(data + 1, size - 1, "fuzzjob", 1 + data[0] % 16, 48, &node, &blob, why,
			   sizeof(why));
	return 0;
}
