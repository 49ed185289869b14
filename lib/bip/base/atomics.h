/* SPDX-License-Identifier: MIT */
/*
 * atomics.h - the memory-ordering helpers of BIP.
 *
 * Every use says which other access it pairs with.  Shared words are plain
 * integers accessed only through these helpers (C11 __atomic builtins), never
 * through volatile.
 */
#ifndef BIP_ATOMICS_H
#define BIP_ATOMICS_H

#include <stdint.h>

#define BIP_CACHELINE 64

#define bip_likely(x) __builtin_expect(!!(x), 1)
#define bip_unlikely(x) __builtin_expect(!!(x), 0)
#define bip_cold __attribute__((cold, noinline))

/* Plain (relaxed) access to a word another process reads or writes. */
#define bip_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define bip_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Reads after this load see everything written before the paired release. */
#define bip_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Everything written before this store is visible to the paired acquire. */
#define bip_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Full fence: orders earlier stores before later loads. */
static inline void bip_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Fence before ringing a device doorbell: descriptor writes reach memory
 * before the doorbell write. */
static inline void bip_doorbell_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void bip_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* BIP_ATOMICS_H */
