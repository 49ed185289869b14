/* SPDX-License-Identifier: MIT */
/* Assertions of the multi-process tests: a failure names the node and exits 1. */
#ifndef BIP_TEST_CHECK_H
#define BIP_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "bip.h"

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "node %d: FAILED at %s:%d: %s: ", bip_mynode, __FILE__, \
				__LINE__, #cond);                                            \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

#endif /* BIP_TEST_CHECK_H */
