/* SPDX-License-Identifier: MIT */
/*
 * async.h - the progress thread (async.c).
 */
#ifndef BIP_ASYNC_H
#define BIP_ASYNC_H

#include <stddef.h>

/* The progress thread (async.c): started at the end of bip_init when
 * BIP_PROGRESS_THREAD=1 (0, or a negative errno with err set), stopped
 * first thing in bip_finalize. */
int bip_async_start(char *err, size_t errlen);
void bip_async_stop(void);
/* 1 if bip_init starts the thread (BIP_PROGRESS_THREAD=1): for a driver
 * that opens before it (ofi's one-sided operations rely on it). */
int bip_async_requested(void);

#endif /* BIP_ASYNC_H */
