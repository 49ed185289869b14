/* SPDX-License-Identifier: MIT */
/*
 * core.h - the BIP core as its drivers and its tests see it: the headers of
 * its modules in one.
 *
 * state.c     the state of the core and its lock (state.h)
 * error.c     error messages and the last error string (error.h)
 * tagq.c      the per-tag circular queues of short messages (tagq.h)
 * progress.c  polling the NICs and waiting (spin, then yield or sleep)
 * proto.c     the short/long protocol, requests, and the driver entry points
 * rma.c       the requests of one-sided operations and their completion
 * async.c     the progress thread (BIP_PROGRESS_THREAD=1)
 * api.c       the public calls: argument checks, then the protocol
 * api/rma.c   the public one-sided calls: argument checks, then core/rma.c
 * layer.c     the calls for layers built on BIP (the MPI shim)
 * init.c      bip_init, bip_finalize, bip_taginit: configuration and start-up
 *
 * Arrows point down that list: a module calls only those above it in it,
 * and those of lib/bip below the core (lib/README.md).  A module of the
 * core includes the headers it needs, not this one.
 */
#ifndef BIP_CORE_H
#define BIP_CORE_H

#include <stddef.h>

#include "state.h"
#include "error.h"
#include "progress.h"
#include "proto.h"
#include "async.h"

/* --- start-up (init.c) --- */

/* Where this node runs, one line without a newline: "node 1 of 4: host h,
 * pid 123, driver shm, cpus 1" (BIP_REPORT_BINDINGS, bipinfo --job). */
void bip_where(char *buf, size_t len);

#endif /* BIP_CORE_H */
