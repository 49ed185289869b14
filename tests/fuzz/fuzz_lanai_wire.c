/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a packet as the simulated wire hands it to a board: the
 * header's fields (route, kind, nodes, lengths) and the CRC32C, on any bytes.
 * Half the inputs get their CRC set right, so that the checks behind it run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "firmware.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lanai_pkt_header h;
	struct lanai_packet *p;
	char why[128];
	size_t plen;

	if (size < sizeof(h) + 1)
		return 0;
	memcpy(&h, data + 1, sizeof(h));
	plen = size - 1 - sizeof(h);
	if (plen > LANAI_DATA_CHUNK)
		plen = LANAI_DATA_CHUNK;
	p = lanai_packet_new((uint32_t)plen);
	if (!p)
		return 0;
	p->h = h;
	memcpy(p->payload, data + 1 + sizeof(h), plen);
	if (data[0] & 1) {
		struct lanai_pkt_header c = p->h;

		c.crc = 0;
		p->h.len = (uint32_t)plen;
		c.len = (uint32_t)plen;
		p->h.crc = bip_crc32c(bip_crc32c(0, &c, sizeof(c)), p->payload, plen);
	}
	if (lanai_packet_crc_ok(p))
		lanai_packet_header_check(&p->h, plen, 1 + data[0] / 2 % 64, why, sizeof(why));
	free(p);
	return 0;
}
