/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h - CRC32C (Castagnoli, reflected polynomial 0x82f63b78), the CRC
 * of the simulated wire and of the reliability layer (rel.c).  The SSE4.2 crc32 instruction computes it where
 * the processor has it; elsewhere a 256-entry table built at first use.
 */
#ifndef BIP_CRC32C_H
#define BIP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC32C: crc is the value returned for the data before (0 to start). */
uint32_t bip_crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * Copy len bytes from src to dst and continue a CRC32C over them, in one
 * pass.  Each word is read from src once and the CRC is of what was written
 * to dst: src may be memory another process writes (a NIC's queue), and the
 * CRC still checks the copy.  The buffers must not overlap.
 */
uint32_t bip_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* The same, always with the table (for tests of both paths). */
uint32_t bip_crc32c_table(uint32_t crc, const void *buf, size_t len);

/* 1 if bip_crc32c uses the SSE4.2 instruction. */
int bip_crc32c_hw(void);

#endif /* BIP_CRC32C_H */
