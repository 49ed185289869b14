/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c - CRC32C with the SSE4.2 instruction, or a table.
 *
 * The table is the classic byte-at-a-time one: entry b is the CRC of the
 * byte b alone (eight shift-and-xor steps of the reflected polynomial),
 * so that each input byte costs one lookup.  It is only the fallback, so
 * no slicing-by-8 here.
 *
 * With the instruction, a long buffer is cut into blocks of three stripes
 * of CRC_STRIPE bytes, whose CRCs are computed at once: the instruction
 * takes 3 cycles but can start one per cycle, so three independent chains
 * go three times as fast as one.  The three are then joined: the CRC
 * register after stripes A and B is the register after A, moved over
 * CRC_STRIPE zero bytes, xor the register of B started from 0 (the CRC is
 * linear), and the move over zero bytes is a linear map of the 32-bit
 * register, kept as four tables of 256 entries (one per byte of it),
 * computed once with the instruction itself.
 *
 * bip_crc32c_copy runs the same three stripes and stores each word it
 * reads, so that a copy and its check take one pass over the data instead
 * of two: the reliability layer's fragments land in the user's buffer so.
 * Each word is read once through a volatile access, so the CRC is of what
 * was stored even if another process rewrites the source meanwhile.
 */
#include <pthread.h>
#include <string.h>

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
#define CRC_STRIPE 256 /* bytes of each of the three stripes of a block */

/* shift[k][b]: the register b << 8k moved over CRC_STRIPE zero bytes. */
static uint32_t crc_shift[4][256];
static pthread_once_t crc_shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t zeros_hw(uint32_t reg, size_t len)
{
	uint64_t c = reg;

	for (; len >= 8; len -= 8)
		c = _mm_crc32_u64(c, 0);
	return (uint32_t)c;
}

static void crc_shift_build(void)
{
	uint32_t b;
	int k;

	for (k = 0; k < 4; k++)
		for (b = 0; b < 256; b++)
			crc_shift[k][b] = zeros_hw(b << (8 * k), CRC_STRIPE);
}

static inline uint32_t shift_stripe(uint32_t reg)
{
	return crc_shift[0][reg & 0xff] ^ crc_shift[1][(reg >> 8) & 0xff] ^
	       crc_shift[2][(reg >> 16) & 0xff] ^ crc_shift[3][reg >> 24];
}

/* One word of src, read exactly once (another process may write it). */
struct crc_word {
	uint64_t v;
} __attribute__((packed, may_alias));

static inline uint64_t load_once(const uint8_t *p)
{
	return ((const volatile struct crc_word *)p)->v;
}

/*
 * The three stripes over p, and with copy, each word stored to d as it is
 * read (d is not touched without).  Inlined into its two callers, where
 * copy is a constant.
 */
__attribute__((target("sse4.2"), always_inline)) static inline uint32_t
crc_stripes(uint32_t crc, uint8_t *d, const uint8_t *p, size_t len, const int copy)
{
	uint64_t c = ~crc;

	if (len >= 3 * CRC_STRIPE) {
		pthread_once(&crc_shift_once, crc_shift_build);
		do {
			uint64_t c1 = 0, c2 = 0, v0, v1, v2;
			const uint8_t *end = p + CRC_STRIPE;

			for (; p < end; p += 8) {
				v0 = load_once(p);
				v1 = load_once(p + CRC_STRIPE);
				v2 = load_once(p + 2 * CRC_STRIPE);
				if (copy) {
					__builtin_memcpy(d, &v0, 8);
					__builtin_memcpy(d + CRC_STRIPE, &v1, 8);
					__builtin_memcpy(d + 2 * CRC_STRIPE, &v2, 8);
					d += 8;
				}
				c = _mm_crc32_u64(c, v0);
				c1 = _mm_crc32_u64(c1, v1);
				c2 = _mm_crc32_u64(c2, v2);
			}
			c = shift_stripe(shift_stripe((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
			p += 2 * CRC_STRIPE;
			if (copy)
				d += 2 * CRC_STRIPE;
			len -= 3 * CRC_STRIPE;
		} while (len >= 3 * CRC_STRIPE);
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v = load_once(p);

		if (copy) {
			__builtin_memcpy(d, &v, 8);
			d += 8;
		}
		c = _mm_crc32_u64(c, v);
	}
	while (len--) {
		uint8_t b = *(const volatile uint8_t *)p++;

		if (copy)
			*d++ = b;
		c = _mm_crc32_u8((uint32_t)c, b);
	}
	return ~(uint32_t)c;
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const void *buf, size_t len)
{
	return crc_stripes(crc, NULL, buf, len, 0);
}

__attribute__((target("sse4.2"))) static uint32_t crc_copy_hw(uint32_t crc, void *dst,
							      const void *src, size_t len)
{
	return crc_stripes(crc, dst, src, len, 1);
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

uint32_t bip_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	if (bip_crc32c_hw())
		return crc_copy_hw(crc, dst, src, len);
	memcpy(dst, src, len);
	return bip_crc32c_table(crc, dst, len);
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

uint32_t bip_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return bip_crc32c_table(crc, dst, len);
}
#endif
