/* SPDX-License-Identifier: MIT */
/*
 * ofi_dl.c - libfabric is loaded when the ofi driver is first used, not
 * when a program starts.
 *
 * Why: libfabric pulls in the libraries of its providers, and libpsm2 (the
 * psm2 provider) installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and
 * SIGABRT that print a backtrace and exit with status 1: a crash would no
 * longer look like one (bipload reports the signal that killed a node).
 * Loading late keeps programs that never use the network untouched, and
 * the handlers the program had before the load are put back after it.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "ofi.h"

struct bip_ofi_dl bip_ofi_dl;

/*
 * tcp;ofi_rxm sends a message of more than FI_OFI_RXM_BUFFER_SIZE bytes, its
 * own header included (16384 by default), by a slower protocol of its own:
 * a BIP eager message of the default BIP_OFI_EAGER (16384 bytes) and its
 * 24-byte header would just miss its eager path.  Unless the user set it,
 * the size is made BIP_OFI_RXM_BUFFER_SIZE, before libfabric reads it (at its
 * first fi_getinfo, which the load precedes).  The same value in every
 * process, whatever its BIP_OFI_EAGER: ofi_rxm's peers must agree on it.
 */
static void rxm_buffer_size(void)
{
	char v[16];

	if (getenv("FI_OFI_RXM_BUFFER_SIZE"))
		return;
	snprintf(v, sizeof(v), "%u", BIP_OFI_RXM_BUFFER_SIZE);
	setenv("FI_OFI_RXM_BUFFER_SIZE", v, 0);
}

int bip_ofi_load(char *why, size_t len)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction saved[sizeof(sigs) / sizeof(sigs[0])];
	static int loaded;
	void *h;
	size_t i;

	if (loaded)
		return 0;
	rxm_buffer_size();
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], NULL, &saved[i]);
	h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &saved[i], NULL);
	if (!h) {
		snprintf(why, len, "cannot load libfabric: %s", dlerror());
		return -1;
	}
	bip_ofi_dl.getinfo = (__typeof__(bip_ofi_dl.getinfo))dlsym(h, "fi_getinfo");
	bip_ofi_dl.freeinfo = (__typeof__(bip_ofi_dl.freeinfo))dlsym(h, "fi_freeinfo");
	bip_ofi_dl.dupinfo = (__typeof__(bip_ofi_dl.dupinfo))dlsym(h, "fi_dupinfo");
	bip_ofi_dl.fabric = (__typeof__(bip_ofi_dl.fabric))dlsym(h, "fi_fabric");
	bip_ofi_dl.strerror = (__typeof__(bip_ofi_dl.strerror))dlsym(h, "fi_strerror");
	if (!bip_ofi_dl.getinfo || !bip_ofi_dl.freeinfo || !bip_ofi_dl.dupinfo ||
	    !bip_ofi_dl.fabric || !bip_ofi_dl.strerror) {
		snprintf(why, len, "libfabric.so.1 lacks fi_getinfo, fi_freeinfo, fi_dupinfo, "
			 "fi_fabric or fi_strerror");
		dlclose(h);
		return -1;
	}
	/* Stays loaded: providers keep threads and handlers of their own. */
	loaded = 1;
	return 0;
}
