/* SPDX-License-Identifier: MIT */
/* Fuzz target: the topology parser (bipconf(5)), then a route through what
 * it parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[512];
	struct bip_topology *topo = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (bip_topology_parse_string(text, "fuzz", &topo, err, sizeof(err)) == 0) {
		struct bip_route r;

		bip_topology_route(topo, "127.0.0.1", "127.0.0.5", &r);
		bip_topology_route(topo, "a", "b", &r);
		bip_topology_free(topo);
	}
	free(text);
	return 0;
}
