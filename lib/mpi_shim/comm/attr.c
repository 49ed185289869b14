/* SPDX-License-Identifier: MIT */
/*
 * attr.c - attributes of communicators, datatypes and windows: the
 * predefined keys of communicators (MPI_TAG_UB, MPI_WTIME_IS_GLOBAL...) and
 * the keys made by MPI_Comm_create_keyval, MPI_Type_create_keyval and
 * MPI_Win_create_keyval, with their copy and delete callbacks.  (The
 * predefined window keys, MPI_WIN_BASE..., are rma/win.c's; user keys never
 * take their numbers.)
 *
 * One table holds the keys of every kind of object; each key knows its kind,
 * and a key of one kind is MPI_ERR_KEYVAL on the other.  A key is counted by
 * the user's handle and by every attribute that uses it: MPI_*_free_keyval
 * drops only the handle's count, so attributes set with it keep working
 * (get, set, delete, copy, their callbacks) until they are deleted, and its
 * number is given to a new key only when the last of them is gone.  Freeing
 * such a key again does nothing; once its last attribute is gone, its number
 * is MPI_ERR_KEYVAL.
 *
 * The one circle left between chapters: datatype.c copies and deletes a
 * type's attributes when the type is duplicated or freed
 * (mpi_shim_type_attr_copy_all, _delete_all), and this file asks
 * datatype.c whether a type handle is still valid (mpi_shim_datatype_ok)
 * for MPI_Type_{set,get,delete}_attr.  Both sides need the other's
 * private state (the attribute lists, the type's freed mark); breaking it
 * means moving the datatype attribute calls into datatype/ over an
 * exported form of the attribute list operations, left for later.
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"
#include "datatype.h"
#include "rma.h"

/* Keys below this are predefined (MPI_TAG_UB .. MPI_LASTUSEDCODE). */
#define FIRST_USER_KEY 16

enum key_kind {
	KEY_COMM,
	KEY_TYPE,
	KEY_WIN,
};

struct keyval {
	int used;     /* the number is taken (handle or attributes) */
	int freed;    /* MPI_*_free_keyval was called */
	int refcount; /* the user's key, plus attributes that use it */
	enum key_kind kind;
	union {
		MPI_Comm_copy_attr_function *comm;
		MPI_Type_copy_attr_function *type;
		MPI_Win_copy_attr_function *win;
	} copy;
	union {
		MPI_Comm_delete_attr_function *comm;
		MPI_Type_delete_attr_function *type;
		MPI_Win_delete_attr_function *win;
	} del;
	void *extra;
};

static struct {
	struct keyval *keys;
	int nkeys;
} attrs;

static const char *const kind_name[] = {"communicator", "datatype", "window"};

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

int mpi_shim_type_null_copy_fn(MPI_Datatype oldtype, int keyval, void *extra, void *in,
			       void *out, int *flag)
{
	*flag = 0;
	return MPI_SUCCESS;
}

int mpi_shim_type_dup_fn(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out,
			 int *flag)
{
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mpi_shim_type_null_delete_fn(MPI_Datatype type, int keyval, void *value, void *extra)
{
	return MPI_SUCCESS;
}

int mpi_shim_win_null_copy_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out,
			      int *flag)
{
	*flag = 0;
	return MPI_SUCCESS;
}

int mpi_shim_win_dup_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mpi_shim_win_null_delete_fn(MPI_Win win, int keyval, void *value, void *extra)
{
	return MPI_SUCCESS;
}

/* A key of that kind still in use (its handle or an attribute), or NULL. */
static struct keyval *key_of(int keyval, enum key_kind kind)
{
	int i = keyval - FIRST_USER_KEY;

	if (i < 0 || i >= attrs.nkeys || !attrs.keys[i].used || attrs.keys[i].kind != kind)
		return NULL;
	return &attrs.keys[i];
}

static struct keyval *key_at(int keyval)
{
	return &attrs.keys[keyval - FIRST_USER_KEY];
}

static void key_release(int keyval)
{
	struct keyval *k = key_at(keyval);

	if (--k->refcount == 0)
		k->used = 0;
}

/* A new key: its number in *keyval. */
static int key_create(enum key_kind kind, int *keyval, struct keyval **k_p)
{
	struct keyval *k;
	int i;

	/* The numbers of the predefined window keys are never a user key's. */
	for (i = 0; i < attrs.nkeys && (attrs.keys[i].used || (FIRST_USER_KEY + i >= MPI_WIN_BASE &&
							       FIRST_USER_KEY + i <= MPI_WIN_MODEL));
	     i++)
		;
	if (i == attrs.nkeys) {
		int n = attrs.nkeys ? 2 * attrs.nkeys : 16;

		k = realloc(attrs.keys, (size_t)n * sizeof(*k));
		if (!k)
			return MPI_ERR_NO_MEM;
		for (int j = attrs.nkeys; j < n; j++)
			k[j].used = 0;
		attrs.keys = k;
		attrs.nkeys = n;
	}
	k = &attrs.keys[i];
	k->used = 1;
	k->freed = 0;
	k->refcount = 1;
	k->kind = kind;
	*keyval = FIRST_USER_KEY + i;
	*k_p = k;
	return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy,
			    MPI_Comm_delete_attr_function *del, int *keyval, void *extra)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_create_keyval";
	struct keyval *k;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!keyval)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "keyval is NULL");
	if ((rc = key_create(KEY_COMM, keyval, &k)))
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory");
	k->copy.comm = copy ? copy : mpi_shim_comm_null_copy_fn;
	k->del.comm = del ? del : mpi_shim_comm_null_delete_fn;
	k->extra = extra;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_create_keyval);

int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval,
		       void *extra)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}
MPI_SHIM_ALIAS(MPI_Keyval_create);

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy,
			    MPI_Type_delete_attr_function *del, int *keyval, void *extra)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_create_keyval";
	struct keyval *k;
	int rc;

	if (!keyval)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "keyval is NULL");
	if ((rc = key_create(KEY_TYPE, keyval, &k)))
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory");
	k->copy.type = copy ? copy : mpi_shim_type_null_copy_fn;
	k->del.type = del ? del : mpi_shim_type_null_delete_fn;
	k->extra = extra;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_create_keyval);

/*
 * A user key of that kind that attributes may use: its handle may have been
 * freed while attributes still use it (they keep working).
 */
static int check_user_key(MPI_Comm comm, int keyval, enum key_kind kind, const char *call)
{
	struct keyval *k;

	if (kind == KEY_COMM && keyval >= 0 && keyval < FIRST_USER_KEY)
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
				    "key %d is predefined: it cannot be set, deleted or freed",
				    keyval);
	k = key_of(keyval, kind);
	if (!k) {
		int i = keyval - FIRST_USER_KEY;

		if (i >= 0 && i < attrs.nkeys && attrs.keys[i].used)
			return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
					    "key %d is a %s key, not a %s key", keyval,
					    kind_name[attrs.keys[i].kind], kind_name[kind]);
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
				    "key %d is not a %s key (never made, or freed and no longer "
				    "used by any attribute)",
				    keyval, kind_name[kind]);
	}
	return MPI_SUCCESS;
}

static int free_keyval(int *keyval, enum key_kind kind, const char *call)
{
	int rc;

	if (!keyval)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "keyval is NULL");
	if ((rc = check_user_key(MPI_COMM_NULL, *keyval, kind, call)))
		return rc;
	/* Freed already, but still used by attributes: the key's handle is
	 * gone, there is nothing more to free (a copy of the handle freed
	 * again, or a delete callback freeing the key it was given). */
	if (!key_at(*keyval)->freed) {
		key_at(*keyval)->freed = 1;
		key_release(*keyval);
	}
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int *keyval)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_free_keyval")))
		return rc;
	return free_keyval(keyval, KEY_COMM, "MPI_Comm_free_keyval");
}
MPI_SHIM_ALIAS(MPI_Comm_free_keyval);

int PMPI_Keyval_free(int *keyval)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_free_keyval(keyval);
}
MPI_SHIM_ALIAS(MPI_Keyval_free);

int PMPI_Type_free_keyval(int *keyval)
{
	MPI_SHIM_ENTER();
	return free_keyval(keyval, KEY_TYPE, "MPI_Type_free_keyval");
}
MPI_SHIM_ALIAS(MPI_Type_free_keyval);

/* --- Lists of attributes, for either kind of object --- */

static struct mpi_shim_attr **find(struct mpi_shim_attr **list, int keyval)
{
	struct mpi_shim_attr **pp;

	for (pp = list; *pp; pp = &(*pp)->next)
		if ((*pp)->keyval == keyval)
			return pp;
	return NULL;
}

/*
 * Delete the attribute at *pp of obj (list), calling its delete callback.
 * It leaves the list first: the callback may delete or set other
 * attributes of obj.  If the callback fails, it goes back (at the head) and
 * stays.
 */
static int delete_at(void *obj, struct mpi_shim_attr **list, struct mpi_shim_attr **pp)
{
	struct mpi_shim_attr *a = *pp;
	struct keyval *k = key_at(a->keyval);
	int rc;

	*pp = a->next;
	if (k->kind == KEY_COMM)
		rc = k->del.comm(obj, a->keyval, a->value, k->extra);
	else if (k->kind == KEY_WIN)
		rc = k->del.win(obj, a->keyval, a->value, k->extra);
	else
		rc = k->del.type(obj, a->keyval, a->value, k->extra);
	if (rc != MPI_SUCCESS) {
		a->next = *list;
		*list = a;
		return rc;
	}
	key_release(a->keyval);
	free(a);
	return MPI_SUCCESS;
}

/* Set (or replace) the attribute of keyval (checked) in the list of obj. */
static int attr_set(void *obj, struct mpi_shim_attr **list, int keyval, void *value)
{
	struct mpi_shim_attr **pp, *a;
	int rc;

	pp = find(list, keyval);
	if (pp) {
		/* The key's count is held meanwhile: the old attribute may be the
		 * last user of a freed key. */
		key_at(keyval)->refcount++;
		rc = delete_at(obj, list, pp);
		if (rc == MPI_SUCCESS) {
			a = malloc(sizeof(*a));
			if (!a) {
				key_release(keyval);
				return MPI_ERR_NO_MEM;
			}
			a->keyval = keyval;
			a->value = value;
			a->next = *list;
			*list = a;
			return MPI_SUCCESS;
		}
		key_release(keyval);
		return rc;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return MPI_ERR_NO_MEM;
	a->keyval = keyval;
	a->value = value;
	a->next = *list;
	*list = a;
	key_at(keyval)->refcount++;
	return MPI_SUCCESS;
}

/*
 * Copy every attribute of `from` whose copy callback says so into `to`,
 * but those `to` has already: the program set them on the pending handle
 * of an MPI_Comm_idup, and the later copy must not undo that.
 */
static int copy_all(void *from, struct mpi_shim_attr *src, struct mpi_shim_attr **dst)
{
	struct mpi_shim_attr *a, *b;

	for (a = src; a; a = a->next) {
		struct keyval *k = key_at(a->keyval);
		void *out = NULL;
		int flag = 0, rc;

		if (find(dst, a->keyval))
			continue;

		if (k->kind == KEY_COMM)
			rc = k->copy.comm(from, a->keyval, k->extra, a->value, &out, &flag);
		else
			rc = k->copy.type(from, a->keyval, k->extra, a->value, &out, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (!flag)
			continue;
		b = malloc(sizeof(*b));
		if (!b)
			return MPI_ERR_NO_MEM;
		b->keyval = a->keyval;
		b->value = out;
		b->next = *dst;
		*dst = b;
		k->refcount++;
	}
	return MPI_SUCCESS;
}

/*
 * Every attribute of obj, callbacks called; one whose callback fails is
 * dropped anyway.  Returns the error of the first callback that failed, or
 * MPI_SUCCESS.
 */
static int delete_all(void *obj, struct mpi_shim_attr **list)
{
	int rc, first = MPI_SUCCESS;

	while (*list) {
		rc = delete_at(obj, list, list);
		if (rc != MPI_SUCCESS) {
			struct mpi_shim_attr *a = *list;

			if (first == MPI_SUCCESS)
				first = rc;
			*list = a->next;
			key_release(a->keyval);
			free(a);
		}
	}
	return first;
}

/* --- Communicators --- */

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_set_attr";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm_or_pending(comm, call)) ||
	    (rc = check_user_key(comm, keyval, KEY_COMM, call)))
		return rc;
	rc = attr_set(comm, &comm->attrs, keyval, value);
	if (rc == MPI_ERR_NO_MEM)
		return mpi_shim_err(comm, rc, call, "no memory");
	if (rc)
		return mpi_shim_err(comm, rc, call, "the delete callback of key %d failed",
				    keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_set_attr);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *value)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_set_attr(comm, keyval, value);
}
MPI_SHIM_ALIAS(MPI_Attr_put);

/* MPI_APPNUM: the command of an MPMD launch (bipload's BIP_APPNUM), 0
 * for one command or a value that is not a number. */
static int app_number(void)
{
	const char *s = getenv("BIP_APPNUM");
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > INT_MAX ? 0 : (int)v;
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_attr **pp;
	void *v = NULL;
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Comm_get_attr")) ||
	    (rc = mpi_shim_check_comm_or_pending(comm, "MPI_Comm_get_attr")))
		return rc;
	if (!value || !flag)
		return mpi_shim_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr",
				    "attribute_val or flag is NULL");
	/* The job's room: the nodes it may grow to (bipload --universe), less
	 * the relays among their numbers (bip_layer(3)). */
	universe_size = bip_universe();
	if (universe_size > bip_numnodes)
		universe_size -= bip_layer_relays();
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
		appnum = app_number();
		v = &appnum;
		break;
	case MPI_LASTUSEDCODE:
		lastusedcode = mpi_shim_errcode_last(); /* follows MPI_Add_error_* */
		v = &lastusedcode;
		break;
	default:
		if ((rc = check_user_key(comm, keyval, KEY_COMM, "MPI_Comm_get_attr")))
			return rc;
		pp = find(&comm->attrs, keyval);
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
	MPI_SHIM_ENTER();
	return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
MPI_SHIM_ALIAS(MPI_Attr_get);

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Comm_delete_attr";
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_comm_or_pending(comm, call)) ||
	    (rc = check_user_key(comm, keyval, KEY_COMM, call)))
		return rc;
	pp = find(&comm->attrs, keyval);
	if (!pp)
		return mpi_shim_err(comm, MPI_ERR_KEYVAL, call,
				    "the communicator has no attribute for key %d", keyval);
	if ((rc = delete_at(comm, &comm->attrs, pp)))
		return mpi_shim_err(comm, rc, call, "the delete callback of key %d failed",
				    keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Comm_delete_attr);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	MPI_SHIM_ENTER();
	return PMPI_Comm_delete_attr(comm, keyval);
}
MPI_SHIM_ALIAS(MPI_Attr_delete);

/* MPI_Comm_dup: each attribute whose copy callback says so. */
int mpi_shim_attr_copy_all(MPI_Comm from, MPI_Comm to)
{
	return copy_all(from, from->attrs, &to->attrs);
}

/* MPI_Comm_free and MPI_Finalize: every attribute, callbacks called. */
int mpi_shim_attr_delete_all(MPI_Comm comm)
{
	return delete_all(comm, &comm->attrs);
}

void mpi_shim_attr_fini(void)
{
	(void)mpi_shim_attr_delete_all(&mpi_shim_comm_self);
	(void)mpi_shim_attr_delete_all(&mpi_shim_comm_world);
}

void mpi_shim_attr_free_keys(void)
{
	free(attrs.keys);
	attrs.keys = NULL;
	attrs.nkeys = 0;
}

/* --- Datatypes --- */

static int check_type(MPI_Datatype t, const char *call)
{
	if (!mpi_shim_datatype_ok(t))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_TYPE, call,
				    t == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
							   : "the datatype has been freed");
	return MPI_SUCCESS;
}

int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void *value)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_set_attr";
	int rc;

	if ((rc = check_type(type, call)) ||
	    (rc = check_user_key(MPI_COMM_NULL, keyval, KEY_TYPE, call)))
		return rc;
	rc = attr_set(type, &type->attrs, keyval, value);
	if (rc == MPI_ERR_NO_MEM)
		return mpi_shim_err(MPI_COMM_NULL, rc, call, "no memory");
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "the delete callback of key %d failed", keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *value, int *flag)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_get_attr";
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = check_type(type, call)))
		return rc;
	if (!value || !flag)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call,
				    "attribute_val or flag is NULL");
	if ((rc = check_user_key(MPI_COMM_NULL, keyval, KEY_TYPE, call)))
		return rc;
	pp = find(&type->attrs, keyval);
	*flag = pp != NULL;
	if (pp)
		*(void **)value = (*pp)->value;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Type_delete_attr";
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = check_type(type, call)) ||
	    (rc = check_user_key(MPI_COMM_NULL, keyval, KEY_TYPE, call)))
		return rc;
	pp = find(&type->attrs, keyval);
	if (!pp)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_KEYVAL, call,
				    "the datatype has no attribute for key %d", keyval);
	if ((rc = delete_at(type, &type->attrs, pp)))
		return mpi_shim_err(MPI_COMM_NULL, rc, call,
				    "the delete callback of key %d failed", keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Type_delete_attr);

int mpi_shim_type_attr_copy_all(MPI_Datatype from, MPI_Datatype to)
{
	return copy_all(from, from->attrs, &to->attrs);
}

int mpi_shim_type_attr_delete_all(MPI_Datatype t)
{
	return delete_all(t, &t->attrs);
}

/* --- Windows --- */

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
			   int *keyval, void *extra)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Win_create_keyval";
	struct keyval *k;
	int rc;

	if ((rc = mpi_shim_check_init(call)))
		return rc;
	if (!keyval)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_ARG, call, "keyval is NULL");
	if ((rc = key_create(KEY_WIN, keyval, &k)))
		return mpi_shim_err(MPI_COMM_WORLD, rc, call, "no memory");
	/* Windows are never duplicated: the copy callback is kept, not called. */
	k->copy.win = copy ? copy : mpi_shim_win_null_copy_fn;
	k->del.win = del ? del : mpi_shim_win_null_delete_fn;
	k->extra = extra;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_create_keyval);

int PMPI_Win_free_keyval(int *keyval)
{
	MPI_SHIM_ENTER();
	int rc;

	if ((rc = mpi_shim_check_init("MPI_Win_free_keyval")))
		return rc;
	if (keyval && *keyval >= MPI_WIN_BASE && *keyval <= MPI_WIN_MODEL)
		return mpi_shim_err(MPI_COMM_WORLD, MPI_ERR_KEYVAL, "MPI_Win_free_keyval",
				    "key %d is predefined: it cannot be freed", *keyval);
	return free_keyval(keyval, KEY_WIN, "MPI_Win_free_keyval");
}
MPI_SHIM_ALIAS(MPI_Win_free_keyval);

/* A user window key: MPI_SUCCESS, or MPI_ERR_KEYVAL reported on win. */
static int check_win_key(MPI_Win win, int keyval, const char *call)
{
	int i = keyval - FIRST_USER_KEY;

	if (keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL)
		return mpi_shim_win_err(win, MPI_ERR_KEYVAL, call,
					"key %d is predefined: it cannot be set or deleted",
					keyval);
	if (key_of(keyval, KEY_WIN))
		return MPI_SUCCESS;
	if (i >= 0 && i < attrs.nkeys && attrs.keys[i].used)
		return mpi_shim_win_err(win, MPI_ERR_KEYVAL, call, "key %d is a %s key, not a window key",
					keyval, kind_name[attrs.keys[i].kind]);
	return mpi_shim_win_err(win, MPI_ERR_KEYVAL, call,
				"key %d is not a window key (never made, or freed and no longer "
				"used by any attribute)", keyval);
}

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *value)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Win_set_attr";
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)) ||
	    (rc = check_win_key(win, keyval, call)))
		return rc;
	rc = attr_set(win, &win->attrs, keyval, value);
	if (rc == MPI_ERR_NO_MEM)
		return mpi_shim_win_err(win, rc, call, "no memory");
	if (rc)
		return mpi_shim_win_err(win, rc, call, "the delete callback of key %d failed",
					keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_set_attr);

int mpi_shim_win_attr_get(MPI_Win win, int keyval, void *value, int *flag)
{
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = check_win_key(win, keyval, "MPI_Win_get_attr")))
		return rc;
	pp = find(&win->attrs, keyval);
	*flag = pp != NULL;
	if (pp)
		*(void **)value = (*pp)->value;
	return MPI_SUCCESS;
}

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Win_delete_attr";
	struct mpi_shim_attr **pp;
	int rc;

	if ((rc = mpi_shim_check_init(call)) || (rc = mpi_shim_check_win(win, call)) ||
	    (rc = check_win_key(win, keyval, call)))
		return rc;
	pp = find(&win->attrs, keyval);
	if (!pp)
		return mpi_shim_win_err(win, MPI_ERR_KEYVAL, call,
					"the window has no attribute for key %d", keyval);
	if ((rc = delete_at(win, &win->attrs, pp)))
		return mpi_shim_win_err(win, rc, call, "the delete callback of key %d failed",
					keyval);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Win_delete_attr);

int mpi_shim_win_attr_delete_all(MPI_Win win)
{
	return delete_all(win, &win->attrs);
}
