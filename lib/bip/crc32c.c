/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c - CRC32C with the SSE4.2 instruction, or a table.
 *
 * The table is the classic byte-at-a-time one: entry b is the CRC of the
 * byte b alone (eight shift-and-xor steps of the reflected polynomial),
 * so that each input byte costs one lookup.  It is only the fallback, so
 * no slicing-by-8 here.
 */
#include <pthread.h>

#include "crc32c.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82f63b78u

static uint32_t crc_table[256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_build(void)
{
	uint32_t b, c;
	int k;

	for (b = 0; b < 256; b++) {
		c = b;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? CRC32C_POLY : 0);
		crc_table[b] = c;
	}
}

uint32_t bip_crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_table_once, crc_table_build);
	crc = ~crc;
	while (len--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		__builtin_memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

int bip_crc32c_hw(void)
{
	static int hw = -1;

	if (hw < 0) {
		__builtin_cpu_init();
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	}
	return hw;
}

uint32_t bip_crc32c(uint32_t crc, const void *buf, size_t len)
{
	if (bip_crc32c_hw())
		return crc_hw(crc, buf, len);
	return bip_crc32c_table(crc, buf, len);
}
#else
int bip_crc32c_hw(void)
{
	return 0;
}

uint32_t bip_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return bip_crc32c_table(crc, buf, len);
}
#endif
