/* SPDX-License-Identifier: MIT */
/*
 * error.c - error messages: logged once, where the error is decided, and
 * kept per thread for bip_error_string().
 */
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "state.h"

#define BIP_ERRLEN 512

static __thread char bip_last_error[BIP_ERRLEN];

void bip_error_msg(const char *call, const char *msg)
{
	if (bip_state.initialized)
		snprintf(bip_last_error, sizeof(bip_last_error), "bip: node %d: %s: %s",
			 bip_state.mynode, call, msg);
	else
		snprintf(bip_last_error, sizeof(bip_last_error), "bip: %s: %s", call, msg);
	fprintf(stderr, "%s\n", bip_last_error);
	__atomic_fetch_add(&bip_state.counters.errors, 1, __ATOMIC_RELAXED);
}

void bip_error(const char *call, const char *fmt, ...)
{
	char msg[BIP_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bip_error_msg(call, msg);
}

char *bip_format(const char *fmt, ...)
{
	char *s;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	return rc < 0 ? NULL : s;
}

int bip_check_init(const char *call)
{
	if (bip_likely(bip_state.initialized))
		return 1;
	bip_error(call, "called before bip_init");
	return 0;
}

BIP_EXPORT const char *bip_error_string(void)
{
	return bip_last_error;
}
