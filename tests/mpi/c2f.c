/* SPDX-License-Identifier: MIT */
/*
 * c2f.c - handle conversion in C (MPI_Comm_c2f/f2c and the others), with
 * or without the Fortran binding: round trips of predefined and user
 * handles of every kind (messages and windows too), the null handles as 0, distinct numbers for
 * distinct objects, numbers that are not handles, and MPI_Status_c2f/f2c
 * with their misuse under MPI_ERRORS_RETURN.
 */
#include <string.h>

#include "mpicheck.h"

static void predefined(void)
{
	MPI_Datatype types[] = { MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_BYTE, MPI_PACKED, MPI_2INT,
				 MPI_LONG_LONG, MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_COUNT };
	MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_MINLOC, MPI_MAXLOC, MPI_BXOR };
	MPI_Fint seen[16];

	CHECK(MPI_Comm_c2f(MPI_COMM_NULL) == 0 && MPI_Comm_f2c(0) == MPI_COMM_NULL, "null comm");
	CHECK(MPI_Group_c2f(MPI_GROUP_NULL) == 0 && MPI_Type_c2f(MPI_DATATYPE_NULL) == 0 &&
	      MPI_Op_c2f(MPI_OP_NULL) == 0 && MPI_Request_c2f(MPI_REQUEST_NULL) == 0 &&
	      MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL) == 0 && MPI_Info_c2f(MPI_INFO_NULL) == 0,
	      "null handles are 0");
	CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD &&
	      MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF &&
	      MPI_Comm_c2f(MPI_COMM_WORLD) != MPI_Comm_c2f(MPI_COMM_SELF) &&
	      MPI_Comm_c2f(MPI_COMM_WORLD) > 0, "predefined communicators");
	CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY");
	CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN &&
	      MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL)) ==
		      MPI_ERRORS_ARE_FATAL, "predefined error handlers");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		seen[i] = MPI_Type_c2f(types[i]);
		CHECK(seen[i] > 0 && MPI_Type_f2c(seen[i]) == types[i], "datatype %zu", i);
		for (size_t j = 0; j < i; j++)
			CHECK(seen[j] != seen[i], "datatypes %zu and %zu share a number", i, j);
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		seen[i] = MPI_Op_c2f(ops[i]);
		CHECK(seen[i] > 0 && MPI_Op_f2c(seen[i]) == ops[i], "op %zu", i);
		for (size_t j = 0; j < i; j++)
			CHECK(seen[j] != seen[i], "ops %zu and %zu share a number", i, j);
	}
	/* Numbers that are no handle give the null handle. */
	CHECK(MPI_Comm_f2c(-1) == MPI_COMM_NULL && MPI_Comm_f2c(1 << 30) == MPI_COMM_NULL &&
	      MPI_Type_f2c(-7) == MPI_DATATYPE_NULL && MPI_Request_f2c(123456) == MPI_REQUEST_NULL,
	      "bad numbers");
}

static void user(void)
{
	MPI_Comm dup, dup2;
	MPI_Group g;
	MPI_Datatype t;
	MPI_Request r;
	MPI_Fint fd, fd2, fg, ft, fr;
	int v = 1, w = 0, rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
	fd = MPI_Comm_c2f(dup);
	fd2 = MPI_Comm_c2f(dup2);
	CHECK(fd > 0 && fd2 > 0 && fd != fd2 && fd != MPI_Comm_c2f(MPI_COMM_WORLD), "numbers");
	CHECK(MPI_Comm_c2f(dup) == fd, "the same number again");
	CHECK(MPI_Comm_f2c(fd) == dup && MPI_Comm_f2c(fd2) == dup2, "round trip");
	OK(MPI_Comm_group(dup, &g));
	fg = MPI_Group_c2f(g);
	CHECK(fg > 0 && MPI_Group_f2c(fg) == g, "group");
	OK(MPI_Type_contiguous(2, MPI_INT, &t));
	ft = MPI_Type_c2f(t);
	CHECK(ft > 0 && MPI_Type_f2c(ft) == t && ft != MPI_Type_c2f(MPI_INT), "datatype");
	OK(MPI_Irecv(&w, 1, MPI_INT, rank, 3, MPI_Comm_f2c(fd), &r));
	fr = MPI_Request_c2f(r);
	CHECK(fr > 0 && MPI_Request_f2c(fr) == r, "request");
	OK(MPI_Send(&v, 1, MPI_INT, rank, 3, MPI_Comm_f2c(fd)));
	r = MPI_Request_f2c(fr);
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(w == 1, "the request converted back completes");
	OK(MPI_Type_free(&t));
	OK(MPI_Group_free(&g));
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free(&dup2));
}

/* Message handles: the two predefined ones, and a matched message that
 * converted back is received. */
static void messages(void)
{
	MPI_Message m, m2;
	MPI_Request r;
	MPI_Fint fm;
	int v = 5, w = 0;

	CHECK(MPI_Message_c2f(MPI_MESSAGE_NULL) == 0 && MPI_Message_f2c(0) == MPI_MESSAGE_NULL,
	      "null message");
	CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC &&
	      MPI_Message_c2f(MPI_MESSAGE_NO_PROC) > 0, "MPI_MESSAGE_NO_PROC");
	OK(MPI_Isend(&v, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &r));
	OK(MPI_Mprobe(0, 4, MPI_COMM_SELF, &m, MPI_STATUS_IGNORE));
	fm = MPI_Message_c2f(m);
	CHECK(fm > 0 && fm != MPI_Message_c2f(MPI_MESSAGE_NO_PROC), "message number");
	m2 = MPI_Message_f2c(fm);
	CHECK(m2 == m, "message round trip");
	OK(MPI_Mrecv(&w, 1, MPI_INT, &m2, MPI_STATUS_IGNORE));
	CHECK(w == 5 && m2 == MPI_MESSAGE_NULL, "the message converted back is received");
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(MPI_Message_f2c(-4) == MPI_MESSAGE_NULL, "a number that is no message");
}

static void windows(void)
{
	MPI_Win win, win2;
	MPI_Fint fw;
	int v = 0;

	CHECK(MPI_Win_c2f(MPI_WIN_NULL) == 0 && MPI_Win_f2c(0) == MPI_WIN_NULL, "null window");
	OK(MPI_Win_create(&v, sizeof(v), sizeof(v), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	fw = MPI_Win_c2f(win);
	CHECK(fw > 0 && MPI_Win_c2f(win) == fw, "window number %d", fw);
	win2 = MPI_Win_f2c(fw);
	CHECK(win2 == win, "window round trip");
	OK(MPI_Win_free(&win2));
	CHECK(MPI_Win_f2c(-3) == MPI_WIN_NULL, "a number that is no window");
}

static void statuses(void)
{
	MPI_Status s, back;
	MPI_Fint f[sizeof(MPI_Status) / sizeof(MPI_Fint)];
	int rank, v = 4, w, count;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	OK(MPI_Sendrecv(&v, 1, MPI_INT, rank, 9, &w, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &s));
	OK(MPI_Status_c2f(&s, f));
	/* MPI_SOURCE, MPI_TAG and MPI_ERROR are Fortran's indices 1, 2 and 3. */
	CHECK(f[0] == rank && f[1] == 9, "the Fortran status: %d %d", f[0], f[1]);
	memset(&back, 0xff, sizeof(back));
	OK(MPI_Status_f2c(f, &back));
	CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 9, "back to C");
	OK(MPI_Get_count(&back, MPI_INT, &count));
	CHECK(count == 1, "the count survives the round trip: %d", count);

	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CHECK(MPI_Status_c2f(MPI_STATUS_IGNORE, f) == MPI_ERR_ARG, "c2f of MPI_STATUS_IGNORE");
	CHECK(MPI_Status_c2f(&s, NULL) == MPI_ERR_ARG, "c2f into NULL");
	CHECK(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back) == MPI_ERR_ARG,
	      "f2c of MPI_F_STATUS_IGNORE");
	CHECK(MPI_Status_f2c(MPI_F_STATUSES_IGNORE, &back) == MPI_ERR_ARG,
	      "f2c of MPI_F_STATUSES_IGNORE");
	CHECK(MPI_Status_f2c(f, NULL) == MPI_ERR_ARG, "f2c into NULL");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	OK(MPI_Init(&argc, &argv));
	MPI_Comm_rank(MPI_COMM_WORLD, &check_rank);
	predefined();
	user();
	messages();
	windows();
	statuses();
	OK(MPI_Finalize());
	return 0;
}
