/* SPDX-License-Identifier: MIT */
/*
 * rma.c - the public calls of one-sided operations (bip_rma(3)): their
 * arguments are checked here, then core/rma.c makes them requests of the
 * NIC that serves the target (bip_state.peers[node].rma, chosen by
 * bip_init: a driver with nic.h's rma_ ops).
 *
 * Bad arguments are errors of the call: logged, and -errno returned.  What
 * an operation meets at its target (-ERANGE, -EACCES ...) is its result,
 * returned by bip_rma_test or bip_rma_wait and not logged: a layer above
 * turns it into its own error.
 */
#include <errno.h>
#include <stdint.h>

#include "error.h"
#include "progress.h"
#include "rma.h"
#include "state.h"

/* The NIC that executes operations on node's memory in *nic_p: 0, or
 * -EINVAL (no such node) or -ENOTSUP (no such NIC) after logging it. */
static int target_nic(const char *call, int node, struct bip_nic **nic_p)
{
	struct bip_nic *nic;

	if (bip_is_relay(node)) {
		bip_error(call, "node %d is a relay of the gateways: it runs no program", node);
		return -EINVAL;
	}
	if (node < 0 || node >= bip_state.napp) {
		bip_error(call, "node %d out of range (0 .. %d)", node, bip_state.napp - 1);
		return -EINVAL;
	}
	nic = bip_state.peers[node].rma;
	if (!nic || !nic->ops->rma_capable(nic, node)) {
		bip_error(call, "node %d is not reached through a NIC that executes one-sided "
			  "operations (bip_rma_capable is 0)", node);
		return -ENOTSUP;
	}
	*nic_p = nic;
	return 0;
}

/* Wait until request id completes: its status; key_p gets an exposure's key. */
static int wait_request(const char *call, int id, uint64_t *key_p)
{
	struct bip_wait w;
	unsigned depth;
	uint64_t key = 0;
	int locked, rc, status;

	bip_wait_start(&w);
	for (;;) {
		locked = bip_lock();
		bip_progress();
		rc = bip_rma_take(id, &status, &key);
		bip_unlock(locked);
		if (rc) {
			if (key_p)
				*key_p = key;
			return status;
		}
		depth = bip_lock_drop();
		rc = bip_wait_step(&w);
		bip_lock_retake(depth);
		if (rc < 0) {
			bip_error(call, "one-sided request %d will never complete: %s", id,
				  bip_wait_failure());
			return rc;
		}
	}
}

/* Start a request on nic: its id, or -errno after logging it. */
static int start(const char *call, struct bip_nic *nic, const struct bip_rma_args *a)
{
	int locked = bip_lock(), id = bip_rma_start(nic, a);

	bip_unlock(locked);
	if (id < 0)
		bip_error(call, "the NIC refused the request: error %d", -id);
	return id;
}

BIP_EXPORT int bip_rma_capable(int node)
{
	struct bip_nic *nic;

	if (!bip_check_init("bip_rma_capable"))
		return 0;
	if (node < 0 || node >= bip_state.napp || bip_is_relay(node))
		return 0;
	nic = bip_state.peers[node].rma;
	return nic && nic->ops->rma_capable(nic, node) ? 1 : 0;
}

BIP_EXPORT int bip_rma_expose(void *base, size_t len, uint64_t *key)
{
	struct bip_rma_args a = { .what = BIP_RMA_WHAT_EXPOSE, .base = base, .len = len };
	uint64_t k = 0;
	int id, rc;

	if (!bip_check_init("bip_rma_expose"))
		return -EINVAL;
	if (!base || !len || !key || (uintptr_t)base > UINTPTR_MAX - len) {
		bip_error("bip_rma_expose", "expected memory (base %p, %zu bytes) and a key to "
			  "write", base, len);
		return -EINVAL;
	}
	if (!bip_state.rma_nic) {
		bip_error("bip_rma_expose", "no NIC of this process executes one-sided operations");
		return -ENOTSUP;
	}
	id = start("bip_rma_expose", bip_state.rma_nic, &a);
	if (id < 0)
		return id;
	rc = wait_request("bip_rma_expose", id, &k);
	if (rc == 0)
		*key = k;
	return rc;
}

BIP_EXPORT int bip_rma_withdraw(uint64_t key)
{
	struct bip_rma_args a = { .what = BIP_RMA_WHAT_WITHDRAW, .key = key };
	int id;

	if (!bip_check_init("bip_rma_withdraw"))
		return -EINVAL;
	if (!bip_state.rma_nic) {
		bip_error("bip_rma_withdraw", "no NIC of this process executes one-sided "
			  "operations");
		return -ENOTSUP;
	}
	id = start("bip_rma_withdraw", bip_state.rma_nic, &a);
	if (id < 0)
		return id;
	return wait_request("bip_rma_withdraw", id, NULL);
}

/* A put or a get. */
static int put_get(const char *call, int kind, int node, uint64_t key, uint64_t offset,
		   void *buf, size_t len)
{
	struct bip_rma_args a = { .what = BIP_RMA_WHAT_OP,
				  .op = { .kind = kind, .node = node, .key = key,
					  .offset = offset, .buf = buf, .len = len } };
	struct bip_nic *nic = NULL;
	int rc;

	if (!bip_check_init(call))
		return -EINVAL;
	rc = target_nic(call, node, &nic);
	if (rc < 0)
		return rc;
	if ((!buf && len) || offset > UINT64_MAX - len) {
		bip_error(call, "buffer %p of %zu bytes, offset %llu", buf, len,
			  (unsigned long long)offset);
		return -EINVAL;
	}
	if (!len)
		a.what = BIP_RMA_WHAT_NOTHING;
	return start(call, nic, &a);
}

BIP_EXPORT int bip_rma_put(int node, uint64_t key, uint64_t offset, const void *buf, size_t len)
{
	/* The NIC only reads a put's buffer. */
	return put_get("bip_rma_put", BIP_NIC_RMA_PUT, node, key, offset, (void *)(uintptr_t)buf,
		       len);
}

BIP_EXPORT int bip_rma_get(int node, uint64_t key, uint64_t offset, void *buf, size_t len)
{
	return put_get("bip_rma_get", BIP_NIC_RMA_GET, node, key, offset, buf, len);
}

BIP_EXPORT int bip_rma_atomic(int node, uint64_t key, uint64_t offset, int op, int type,
			      size_t count, const void *operand, const void *compare, void *result)
{
	static const char call[] = "bip_rma_atomic";
	struct bip_rma_args a = { .what = BIP_RMA_WHAT_OP,
				  .op = { .kind = BIP_NIC_RMA_ATOMIC, .node = node, .key = key,
					  .offset = offset, .op = op, .type = type,
					  .count = count, .operand = operand,
					  .compare = compare, .result = result } };
	size_t size = bip_nic_rma_type_size(type);
	struct bip_nic *nic = NULL;
	int rc;

	if (!bip_check_init(call))
		return -EINVAL;
	if (!size || op < BIP_RMA_SUM || op > BIP_RMA_CSWAP) {
		bip_error(call, "operation %d or type %d does not exist", op, type);
		return -EINVAL;
	}
	if ((type == BIP_RMA_FLOAT || type == BIP_RMA_DOUBLE) && op >= BIP_RMA_BAND &&
	    op <= BIP_RMA_LXOR) {
		bip_error(call, "operation %d applies to integers only, not type %d", op, type);
		return -EINVAL;
	}
	if (!count || count > UINT32_MAX || (op == BIP_RMA_CSWAP && (count != 1 || !compare)) ||
	    (op != BIP_RMA_NO_OP && !operand) || offset > UINT64_MAX - count * size) {
		bip_error(call, "count %zu, operand %p, compare %p, offset %llu: expected count >= "
			  "1 (CSWAP: 1 and a compare) and an operand (NO_OP excepted)", count,
			  operand, compare, (unsigned long long)offset);
		return -EINVAL;
	}
	rc = target_nic(call, node, &nic);
	if (rc < 0)
		return rc;
	return start(call, nic, &a);
}

BIP_EXPORT int bip_rma_test(int id)
{
	uint64_t key;
	int locked, status, done;

	if (!bip_check_init("bip_rma_test"))
		return -EINVAL;
	locked = bip_lock();
	if (!bip_rma_known(id)) {
		bip_unlock(locked);
		bip_error("bip_rma_test", "no one-sided operation %d (or it was reported already)",
			  id);
		return -EINVAL;
	}
	bip_progress();
	done = bip_rma_take(id, &status, &key);
	bip_unlock(locked);
	if (!done)
		return 0;
	return status < 0 ? status : 1;
}

BIP_EXPORT int bip_rma_wait(int id)
{
	int locked, known;

	if (!bip_check_init("bip_rma_wait"))
		return -EINVAL;
	locked = bip_lock();
	known = bip_rma_known(id);
	bip_unlock(locked);
	if (!known) {
		bip_error("bip_rma_wait", "no one-sided operation %d (or it was reported already)",
			  id);
		return -EINVAL;
	}
	return wait_request("bip_rma_wait", id, NULL);
}
