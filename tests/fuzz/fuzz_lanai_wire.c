/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a packet as the simulated wire hands it to a board: the
 * header's fields (route, kind, nodes, lengths) and the CRC32C, on any bytes.
 * Half the inputs get their CRC set right, so that the checks behind it run.
 *
 * A one-sided request (RMA_REQ) then goes through the target board's
 * checks (rma.c) against a table whose regions match its key when the
 * input's first byte says so, and one that passes is executed on a local
 * region as the board would: nothing may fall outside the region.  The
 * atomic arithmetic runs on any op, type and count the request names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "crc32c.h"
#include "firmware.h"

#define REGION 4096

static void rma_request(const struct lanai_packet *p, uint8_t flags)
{
	static struct lanai_rma_region rgn[LANAI_RMA_REGIONS];
	static uint8_t mem[REGION], old[LANAI_DATA_CHUNK];
	struct lanai_rma_req q;
	uint64_t addr = 0;
	uint16_t stamp = 0x4242;
	const uint8_t *in;
	uint32_t i;

	if (p->cap < sizeof(q))
		return;
	memcpy(&q, p->payload, sizeof(q));
	if (flags & 2)
		stamp = (uint16_t)(q.key >> 48);
	for (i = 0; i < LANAI_RMA_REGIONS; i++)
		rgn[i] = (struct lanai_rma_region){
			.base = 0x1000,
			.len = flags & 8 ? REGION : REGION / 2,
			.gen = flags & 4 ? (uint32_t)(q.key >> 8) & 0xffffff : 1,
			.active = 1,
		};
	if (lanai_rma_check(p, (uint32_t)(q.key >> 32) & 0xffff, stamp, rgn, &addr) < 0)
		return;
	/* Passed: every byte it touches lies in the region. */
	if (addr != 0x1000 || q.offset >= REGION || q.len > REGION - q.offset)
		abort();
	in = p->payload + sizeof(q);
	switch (q.what) {
	case BIP_LANAI_RMA_PUT:
		memcpy(mem + q.offset, in, q.len);
		break;
	case BIP_LANAI_RMA_GET:
		memcpy(old, mem + q.offset, q.len);
		break;
	case BIP_LANAI_RMA_ATOMIC:
		if (lanai_rma_apply(q.op, q.type, q.count, mem + q.offset, in,
				    q.op == BIP_RMA_CSWAP ? in + q.len : NULL, old) < 0)
			abort(); /* the check let through what the arithmetic refuses */
		break;
	default:
		abort();
	}
}

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
	if (plen > LANAI_RMA_PAYLOAD_MAX)
		plen = LANAI_RMA_PAYLOAD_MAX;
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
	if (lanai_packet_crc_ok(p) &&
	    lanai_packet_header_check(&p->h, plen, 1 + data[0] / 2 % 64, why, sizeof(why)) == 0 &&
	    p->h.kind == LANAI_PKT_RMA_REQ)
		rma_request(p, data[0]);
	/* The arithmetic alone, on any op, type and count of whole elements. */
	if (plen >= 4 && data[0] & 16) {
		uint32_t count = (uint32_t)(plen - 4) / 8 / 2;

		lanai_rma_apply(p->payload[0], p->payload[1], count, p->payload + 4,
				p->payload + 4 + (size_t)count * 8, p->payload + 4, NULL);
	}
	free(p);
	return 0;
}
