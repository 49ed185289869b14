/* SPDX-License-Identifier: MIT */
/*
 * error.h - error messages and the last error string (error.c).
 */
#ifndef BIP_ERROR_H
#define BIP_ERROR_H

#include <stddef.h>

#include "atomics.h"

/* Log "bip: node N: CALL: message" once, and keep it for bip_error_string(). */
bip_cold void bip_error(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same, for a message already formatted. */
bip_cold void bip_error_msg(const char *call, const char *msg);
/* Format a message into a malloc'ed string (NULL if out of memory). */
bip_cold char *bip_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 if BIP is initialised; otherwise log that call came first and return 0. */
int bip_check_init(const char *call);

#endif /* BIP_ERROR_H */
