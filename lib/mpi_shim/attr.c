/* SPDX-License-Identifier: MIT */
/*
 * attr.c - attributes of communicators: the predefined keys (MPI_TAG_UB,
 * MPI_WTIME_IS_GLOBAL...) and keys made by MPI_Comm_create_keyval, with
 * their copy and delete callbacks.
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"

/* Keys below this are predefined (MPI_TAG_UB .. MPI_LASTUSEDCODE). */
#define FIRST_USER_KEY 16

struct keyval {
	int used;
	int refcount; /* the user's key, plus attributes that use it */
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
};

static struct {
	struct keyval *keys;
	int nkeys;
} attrs;

/* The predefined attributes' values; their addresses are returned. */
static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_is_global = 0,
	   universe_size, appnum = 0, lastusedcode = MPI_ERR_LASTCODE;

int mpi_shim_comm_null_copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
			       int *flag)
{
	*flag = 0;
	return MPI_SUCCESS;
}

int mpi_shim_comm_dup_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
			 int *flag)
{
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mpi_shim_comm_null_delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
	return MPI_SUCCESS;
}

static struct keyval *key_of(int keyval)
{
	int i = keyval - FIRST_USER_KEY;

	if (i < 0 || i >= attrs.nkeys || !attrs.keys[i].used)
		return NULL;
	return &attrs.keys[i];
}

static void key_release(int keyval)
{
	struct keyval *k = &attrs.keys[keyval - FIRST_USER_KEY];

	if (--k->refcount == 0)
		k->used = 0;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy,
			    MPI_Comm_delete_attr_function *del, int *keyval, void *extra)
{
	struct keyval *k;
	int i, rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_create_keyval")))
		return rc;
	if (!keyval)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval",
				    "keyval is NULL");
	for (i = 0; i < attrs.nkeys && attrs.keys[i].used; i++)
		;
	if (i == attrs.nkeys) {
		int n = attrs.nkeys ? 2 * attrs.nkeys : 16;

		k = realloc(attrs.keys, (size_t)n * sizeof(*k));
		if (!k)
			return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_keyval",
					    "no memory");
		for (int j = attrs.nkeys; j < n; j++)
			k[j].used = 0;
		attrs.keys = k;
		attrs.nkeys = n;
	}
	k = &attrs.keys[i];
	k->used = 1;
	k->refcount = 1;
	k->copy = copy ? copy : mpi_shim_comm_null_copy_fn;
	k->del = del ? del : mpi_shim_comm_null_delete_fn;
	k->extra = extra;
	*keyval = FIRST_USER_KEY + i;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_create_keyval);

int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval,
		       void *extra)
{
	return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}
MPI_SHIM_ALIAS(MPI_Keyval_create);

static int check_user_key(MPI_Comm comm, int keyval, const char *call)
{
	if (keyval >= 0 && keyval < FIRST_USER_KEY)
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
				    "key %d is predefined: it cannot be set, deleted or freed",
				    keyval);
	if (!key_of(keyval))
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
				    "key %d was not made by MPI_Comm_create_keyval (or was freed)",
				    keyval);
	return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int *keyval)
{
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_free_keyval")))
		return rc;
	if (!keyval)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free_keyval",
				    "keyval is NULL");
	if ((rc = check_user_key(MPI_COMM_NULL, *keyval, "MPI_Comm_free_keyval")))
		return rc;
	key_release(*keyval);
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_free_keyval);

int PMPI_Keyval_free(int *keyval)
{
	return PMPI_Comm_free_keyval(keyval);
}
MPI_SHIM_ALIAS(MPI_Keyval_free);

static struct mpi_shim_attr **find(MPI_Comm comm, int keyval)
{
	struct mpi_shim_attr **pp;

	for (pp = &comm->attrs; *pp; pp = &(*pp)->next)
		if ((*pp)->keyval == keyval)
			return pp;
	return NULL;
}

/* Delete the attribute at *pp, calling its delete callback. */
static int delete_at(MPI_Comm comm, struct mpi_shim_attr **pp)
{
	struct mpi_shim_attr *a = *pp;
	struct keyval *k = &attrs.keys[a->keyval - FIRST_USER_KEY];
	int rc = k->del(comm, a->keyval, a->value, k->extra);

	if (rc != MPI_SUCCESS)
		return rc;
	*pp = a->next;
	key_release(a->keyval);
	free(a);
	return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
	struct mpi_shim_attr **pp, *a;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_set_attr")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_set_attr")) ||
	    (rc = check_user_key(comm, keyval, "MPI_Comm_set_attr")))
		return rc;
	pp = find(comm, keyval);
	if (pp && (rc = delete_at(comm, pp)))
		return mpi_shim_err(comm, rc, "MPI_Comm_set_attr",
				    "the delete callback of key %d failed", keyval);
	a = malloc(sizeof(*a));
	if (!a)
		return mpi_shim_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_set_attr", "no memory");
	a->keyval = keyval;
	a->value = value;
	a->next = comm->attrs;
	comm->attrs = a;
	key_of(keyval)->refcount++;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_set_attr);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *value)
{
	return PMPI_Comm_set_attr(comm, keyval, value);
}
MPI_SHIM_ALIAS(MPI_Attr_put);

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
	struct mpi_shim_attr **pp;
	void *v = NULL;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_get_attr")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_get_attr")))
		return rc;
	if (!value || !flag)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr",
				    "attribute_val or flag is NULL");
	universe_size = mpi_shim.world_size;
	switch (keyval) {
	case MPI_TAG_UB:
		v = &tag_ub;
		break;
	case MPI_HOST:
		v = &host;
		break;
	case MPI_IO:
		v = &io;
		break;
	case MPI_WTIME_IS_GLOBAL:
		v = &wtime_is_global;
		break;
	case MPI_UNIVERSE_SIZE:
		v = &universe_size;
		break;
	case MPI_APPNUM:
		v = &appnum;
		break;
	case MPI_LASTUSEDCODE:
		lastusedcode = mpi_shim_errcode_last(); /* follows MPI_Add_error_* */
		v = &lastusedcode;
		break;
	default:
		if (!key_of(keyval))
			return mpi_shim_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
					    "key %d is not a valid attribute key", keyval);
		pp = find(comm, keyval);
		*flag = pp != NULL;
		if (pp)
			*(void **)value = (*pp)->value;
		return MPI_SUCCESS;
	}
	*(void **)value = v;
	*flag = 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_get_attr);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *value, int *flag)
{
	return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
MPI_SHIM_ALIAS(MPI_Attr_get);

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_delete_attr")) ||
	    (rc = mpi_shim_check_comm(comm, "MPI_Comm_delete_attr")) ||
	    (rc = check_user_key(comm, keyval, "MPI_Comm_delete_attr")))
		return rc;
	pp = find(comm, keyval);
	if (!pp)
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr",
				    "the communicator has no attribute for key %d", keyval);
	if ((rc = delete_at(comm, pp)))
		return mpi_shim_err(comm, rc, "MPI_Comm_delete_attr",
				    "the delete callback of key %d failed", keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_delete_attr);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return PMPI_Comm_delete_attr(comm, keyval);
}
MPI_SHIM_ALIAS(MPI_Attr_delete);

/* MPI_Comm_dup: each attribute whose copy callback says so. */
int mpi_shim_attr_copy_all(MPI_Comm from, MPI_Comm to)
{
	struct mpi_shim_attr *a, *b;

	for (a = from->attrs; a; a = a->next) {
		struct keyval *k = &attrs.keys[a->keyval - FIRST_USER_KEY];
		void *out = NULL;
		int flag = 0, rc;

		rc = k->copy(from, a->keyval, k->extra, a->value, &out, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (!flag)
			continue;
		b = malloc(sizeof(*b));
		if (!b)
			return MPI_ERR_NO_MEM;
		b->keyval = a->keyval;
		b->value = out;
		b->next = to->attrs;
		to->attrs = b;
		k->refcount++;
	}
	return MPI_SUCCESS;
}

/* MPI_Comm_free and MPI_Finalize: every attribute, callbacks called. */
void mpi_shim_attr_delete_all(MPI_Comm comm)
{
	while (comm->attrs) {
		if (delete_at(comm, &comm->attrs) != MPI_SUCCESS) {
			/* Dropped anyway: the communicator is going. */
			struct mpi_shim_attr *a = comm->attrs;

			comm->attrs = a->next;
			key_release(a->keyval);
			free(a);
		}
	}
}

void mpi_shim_attr_fini(void)
{
	mpi_shim_attr_delete_all(&mpi_shim_comm_self);
	mpi_shim_attr_delete_all(&mpi_shim_comm_world);
}

void mpi_shim_attr_free_keys(void)
{
	free(attrs.keys);
	attrs.keys = NULL;
	attrs.nkeys = 0;
}
