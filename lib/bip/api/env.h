/* SPDX-License-Identifier: MIT */
/*
 * env.h - what the library knows about itself, for bipinfo: the drivers
 * compiled in and the environment variables it reads, with their defaults.
 */
#ifndef BIP_ENV_H
#define BIP_ENV_H

#include <stddef.h>

#include "nic.h"

struct bip_env_var {
	const char *name;
	const char *def;         /* the default, as a user would write it */
	const char *what;
};

/* The drivers, in order of preference. */
extern const struct bip_nic_ops *const bip_drivers[];
extern const size_t bip_ndrivers;

/* Every variable read by the library, bipload and the commands. */
extern const struct bip_env_var bip_env_vars[];
extern const size_t bip_nenv_vars;

#endif /* BIP_ENV_H */
