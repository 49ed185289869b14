/* SPDX-License-Identifier: MIT */
/*
 * args.h - the thread tests' numeric options: a whole number in lo .. hi,
 * else the program's usage (which exits).
 */
#ifndef BIP_TESTS_THREADS_ARGS_H
#define BIP_TESTS_THREADS_ARGS_H

#include <stdlib.h>

static inline int arg_int_in(const char *s, int lo, int hi, void (*usage)(void))
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi)
		usage();
	return (int)v;
}

#endif
