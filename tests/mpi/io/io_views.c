/* SPDX-License-Identifier: MIT */
/*
 * io_views.c - file views (MPI-3.1 13.3) and noncontiguous access: what
 * each rank writes through its view, every rank reads back whole and
 * checks, every int of the file.
 *
 *   bipload -sz N io_views TEST
 *
 * view      set_view/get_view: the default view, a displacement, an
 *           etype and a derived filetype (given back as a new type),
 *           get_type_extent
 * noncontig interleaved ints (a resized filetype), a vector in memory,
 *           independent and collective writes; an indexed filetype with
 *           holes, which must keep what the file held (no rank's write
 *           may clobber another's or a hole); a struct with a resized
 *           extent in memory
 * subarray  a 2-D grid of blocks, one per rank, in C and in Fortran
 *           order, write_all then read_all through the same view
 * darray    block x cyclic(2) in C order and cyclic x block in Fortran
 *           order over the process grid of MPI_Dims_create
 */
#include "iocheck.h"

/* The int at int index k of a file: what every check expects. */
static int val(int64_t k)
{
	return (int)(k * 7 + 1);
}

/* Sync, barrier, sync: what one rank wrote is then seen by the others
 * (13.6.10). */
static void settle(MPI_File fh)
{
	OK(MPI_File_sync(fh));
	MPI_Barrier(MPI_COMM_WORLD);
	OK(MPI_File_sync(fh));
}

/* Every rank reads the n ints of the file and checks each against
 * want(k), or val(k) if want is NULL. */
static void check_file(MPI_File fh, int64_t n, const int *want, const char *what)
{
	int *buf = malloc((size_t)n * sizeof(int));
	MPI_Offset sz;
	MPI_Status st;
	int64_t k;
	int bad = 0;

	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == n * (MPI_Offset)sizeof(int), "%s: file of %lld bytes, want %lld", what,
	      (long long)sz, (long long)(n * (int64_t)sizeof(int)));
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	OK(MPI_File_read_at(fh, 0, buf, (int)n, MPI_INT, &st));
	for (k = 0; k < n; k++) {
		int w = want ? want[k] : val(k);

		if (buf[k] != w && bad++ < 5)
			CHECK(0, "%s: int %lld of the file is %d, want %d", what, (long long)k,
			      buf[k], w);
	}
	free(buf);
}

static void test_view(void)
{
	MPI_Datatype etype, ftype, vec, st3;
	MPI_Offset disp;
	MPI_Aint ext, lb, fext;
	MPI_File fh;
	int ni, na, nd, comb;
	char rep[MPI_MAX_DATAREP_STRING + 1];

	OK(MPI_File_open(MPI_COMM_WORLD, io_path("view"), MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh));
	OK(MPI_File_get_view(fh, &disp, &etype, &ftype, rep));
	CHECK(disp == 0, "default displacement %lld", (long long)disp);
	CHECK(etype == MPI_BYTE && ftype == MPI_BYTE, "default etype or filetype not MPI_BYTE");
	CHECK(!strcmp(rep, "native"), "default representation \"%s\"", rep);

	MPI_Type_vector(3, 2, 2 * size, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	OK(MPI_File_set_view(fh, 16 + 8 * rank, MPI_INT, vec, "native", MPI_INFO_NULL));
	OK(MPI_File_get_view(fh, &disp, &etype, &ftype, rep));
	CHECK(disp == 16 + 8 * rank, "displacement %lld, want %d", (long long)disp,
	      16 + 8 * rank);
	CHECK(etype == MPI_INT, "etype is not MPI_INT");
	CHECK(!strcmp(rep, "native"), "representation \"%s\"", rep);
	/* A derived filetype comes back as a new type of the same layout. */
	OK(MPI_Type_get_envelope(ftype, &ni, &na, &nd, &comb));
	CHECK(comb != MPI_COMBINER_NAMED, "the filetype came back as a named type");
	OK(MPI_Type_get_extent(ftype, &lb, &fext));
	OK(MPI_Type_get_extent(vec, &lb, &ext));
	CHECK(fext == ext, "the filetype's extent %ld, want %ld", (long)fext, (long)ext);
	OK(MPI_Type_free(&ftype));
	MPI_Type_free(&vec);

	/* get_type_extent: native extents are the memory ones. */
	OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
	CHECK(ext == sizeof(int), "file extent of MPI_INT %ld", (long)ext);
	OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
	CHECK(ext == sizeof(double), "file extent of MPI_DOUBLE %ld", (long)ext);
	{
		int bl[2] = { 1, 1 };
		MPI_Aint d[2] = { 0, 12 };
		MPI_Datatype t[2] = { MPI_INT, MPI_DOUBLE };

		MPI_Type_create_struct(2, bl, d, t, &st3);
		MPI_Type_commit(&st3);
		OK(MPI_Type_get_extent(st3, &lb, &ext));
		OK(MPI_File_get_type_extent(fh, st3, &fext));
		CHECK(fext == ext, "file extent of a struct %ld, want %ld", (long)fext, (long)ext);
		MPI_Type_free(&st3);
	}
	OK(MPI_File_close(&fh));
}

#define N 50 /* ints per rank */

static void test_noncontig(void)
{
	MPI_Datatype ftype, mtype, idx, itype, sttype, stres;
	MPI_Status st;
	MPI_File fh;
	int *mem = malloc(2 * N * sizeof(int)), *want, i, k;
	const int64_t total = (int64_t)N * size;

	/* 1: interleaved ints, rank r owns ints r, r+P, r+2P...; in memory
	 * every second int (a vector).  Independent writes, then the same
	 * collectively into another file. */
	MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)size * sizeof(int), &ftype);
	MPI_Type_commit(&ftype);
	MPI_Type_vector(N, 1, 2, MPI_INT, &mtype);
	MPI_Type_commit(&mtype);
	for (i = 0; i < N; i++) {
		mem[2 * i] = val((int64_t)i * size + rank);
		mem[2 * i + 1] = -1;
	}
	for (k = 0; k < 2; k++) {
		OK(MPI_File_open(MPI_COMM_WORLD, io_path(k ? "nc1c" : "nc1"),
				 MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, ftype, "native",
				     MPI_INFO_NULL));
		if (k)
			OK(MPI_File_write_all(fh, mem, 1, mtype, &st));
		else
			OK(MPI_File_write(fh, mem, 1, mtype, &st));
		settle(fh);
		check_file(fh, total, NULL, k ? "interleaved, write_all" : "interleaved, write");
		/* Read back through the view into the vector: the gaps stay. */
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, ftype, "native",
				     MPI_INFO_NULL));
		memset(mem, 0, 2 * N * sizeof(int));
		for (i = 0; i < N; i++)
			mem[2 * i + 1] = -1;
		if (k)
			OK(MPI_File_read_all(fh, mem, 1, mtype, &st));
		else
			OK(MPI_File_read(fh, mem, 1, mtype, &st));
		for (i = 0; i < N; i++) {
			CHECK(mem[2 * i] == val((int64_t)i * size + rank), "read int %d is %d", i,
			      mem[2 * i]);
			CHECK(mem[2 * i + 1] == -1, "read wrote into the gap after int %d", i);
		}
		OK(MPI_File_close(&fh));
	}
	MPI_Type_free(&ftype);
	MPI_Type_free(&mtype);

	/* 2: tiles of 4 ints, one per rank in turn; each rank writes ints 0,
	 * 1 and 3 of its tiles (indexed), int 2 is a hole that keeps the
	 * 0x55555555 the file was filled with.  Every rank writes at once,
	 * independently: the other ranks' ints next to each of its blocks
	 * must survive (no read-modify-write of the others' bytes). */
	{
		int bl[2] = { 2, 1 }, dl[2] = { 0, 3 };
		const int tiles = N / 2;

		MPI_Type_indexed(2, bl, dl, MPI_INT, &idx);
		MPI_Type_create_resized(idx, 0, (MPI_Aint)size * 4 * sizeof(int), &itype);
		MPI_Type_commit(&itype);
		want = malloc((size_t)tiles * size * 4 * sizeof(int));
		for (k = 0; k < tiles * size * 4; k++)
			want[k] = (k % 4 == 2) ? 0x55555555 : val(k);
		OK(MPI_File_open(MPI_COMM_WORLD, io_path("nc2"), MPI_MODE_CREATE | MPI_MODE_RDWR,
				 MPI_INFO_NULL, &fh));
		if (rank == 0) {
			int *fill = malloc((size_t)tiles * size * 4 * sizeof(int));

			for (k = 0; k < tiles * size * 4; k++)
				fill[k] = 0x55555555;
			OK(MPI_File_write_at(fh, 0, fill, tiles * size * 4, MPI_INT, &st));
			free(fill);
		}
		settle(fh);
		OK(MPI_File_set_view(fh, (MPI_Offset)rank * 4 * sizeof(int), MPI_INT, itype,
				     "native", MPI_INFO_NULL));
		for (i = 0; i < tiles; i++) {
			int64_t t0 = ((int64_t)i * size + rank) * 4;

			mem[3 * i] = val(t0);
			mem[3 * i + 1] = val(t0 + 1);
			mem[3 * i + 2] = val(t0 + 3);
		}
		OK(MPI_File_write(fh, mem, 3 * tiles, MPI_INT, &st));
		settle(fh);
		check_file(fh, (int64_t)tiles * size * 4, want, "indexed with holes");
		OK(MPI_File_close(&fh));
		free(want);
		MPI_Type_free(&idx);
		MPI_Type_free(&itype);
	}

	/* 3: a struct in memory (ints at bytes 0, 8 and 20 of 24, resized to
	 * 28) to contiguous records of 3 ints, rank after rank; collective. */
	{
		int bl[3] = { 1, 1, 1 };
		MPI_Aint d[3] = { 0, 8, 20 };
		MPI_Datatype t[3] = { MPI_INT, MPI_INT, MPI_INT };
		const int recs = 10;
		unsigned char *sbuf = malloc((size_t)recs * 28);

		MPI_Type_create_struct(3, bl, d, t, &sttype);
		MPI_Type_create_resized(sttype, 0, 28, &stres);
		MPI_Type_commit(&stres);
		memset(sbuf, 0x77, (size_t)recs * 28);
		for (i = 0; i < recs; i++)
			for (k = 0; k < 3; k++) {
				int v = val((int64_t)rank * recs * 3 + i * 3 + k);

				memcpy(sbuf + i * 28 + d[k], &v, sizeof(int));
			}
		OK(MPI_File_open(MPI_COMM_WORLD, io_path("nc3"), MPI_MODE_CREATE | MPI_MODE_RDWR,
				 MPI_INFO_NULL, &fh));
		OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * recs * 3 * sizeof(int), sbuf, recs,
					 stres, &st));
		settle(fh);
		check_file(fh, (int64_t)size * recs * 3, NULL, "struct in memory");
		/* And back into the struct: the padding is left alone. */
		memset(sbuf, 0x77, (size_t)recs * 28);
		OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * recs * 3 * sizeof(int), sbuf, recs,
					stres, &st));
		for (i = 0; i < recs * 28; i++) {
			int field = i % 28;

			if (field == 0 || field == 8 || field == 20) {
				int v;

				memcpy(&v, sbuf + i, sizeof(int));
				CHECK(v == val((int64_t)rank * recs * 3 + i / 28 * 3 +
					       (field == 0 ? 0 : field == 8 ? 1 : 2)),
				      "struct record %d field at %d: %d", i / 28, field, v);
				i += 3;
			} else {
				CHECK(sbuf[i] == 0x77, "read wrote the padding at byte %d", i);
			}
		}
		OK(MPI_File_close(&fh));
		free(sbuf);
		MPI_Type_free(&sttype);
		MPI_Type_free(&stres);
	}
	free(mem);
}

static void test_subarray(void)
{
	int dims[2] = { 0, 0 }, coords[2], o;

	MPI_Dims_create(size, 2, dims);
	coords[0] = rank / dims[1];
	coords[1] = rank % dims[1];
	for (o = 0; o < 2; o++) {
		const int order = o ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
		const int lsz[2] = { 6, 5 };
		int gsz[2] = { lsz[0] * dims[0], lsz[1] * dims[1] };
		int start[2] = { coords[0] * lsz[0], coords[1] * lsz[1] };
		int *loc = malloc(6 * 5 * sizeof(int)), a, b;
		MPI_Datatype sub;
		MPI_Status st;
		MPI_File fh;

		MPI_Type_create_subarray(2, gsz, lsz, start, order, MPI_INT, &sub);
		MPI_Type_commit(&sub);
		/* The local block in the same order as the global array. */
		for (a = 0; a < lsz[0]; a++)
			for (b = 0; b < lsz[1]; b++) {
				int64_t gi = start[0] + a, gj = start[1] + b;

				if (o)
					loc[a + b * lsz[0]] = val(gi + gj * gsz[0]);
				else
					loc[a * lsz[1] + b] = val(gi * gsz[1] + gj);
			}
		OK(MPI_File_open(MPI_COMM_WORLD, io_path(o ? "subf" : "subc"),
				 MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
		OK(MPI_File_write_all(fh, loc, 30, MPI_INT, &st));
		settle(fh);
		check_file(fh, (int64_t)gsz[0] * gsz[1], NULL, o ? "subarray, Fortran order" :
								   "subarray, C order");
		OK(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
		memset(loc, 0, 30 * sizeof(int));
		OK(MPI_File_read_all(fh, loc, 30, MPI_INT, &st));
		for (a = 0; a < lsz[0]; a++)
			for (b = 0; b < lsz[1]; b++) {
				int64_t gi = start[0] + a, gj = start[1] + b;
				int got = o ? loc[a + b * lsz[0]] : loc[a * lsz[1] + b];
				int w = o ? val(gi + gj * gsz[0]) : val(gi * gsz[1] + gj);

				CHECK(got == w, "read_all: element (%d,%d) is %d, want %d", a, b, got,
				      w);
			}
		OK(MPI_File_close(&fh));
		MPI_Type_free(&sub);
		free(loc);
	}
}

/* The grid coordinate of the owner of index i of a dimension of g
 * elements over p processes: block, or cyclic of arg. */
static int owner(int distrib, int arg, int g, int p, int i)
{
	if (distrib == MPI_DISTRIBUTE_BLOCK)
		return i / ((g + p - 1) / p);
	return (i / arg) % p;
}

static void test_darray(void)
{
	int psz[2] = { 0, 0 }, c;

	MPI_Dims_create(size, 2, psz);
	for (c = 0; c < 2; c++) {
		const int order = c ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
		int gsz[2] = { 7 * psz[0] + 1, 5 * psz[1] + 3 };
		int dist[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC };
		int darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 };
		int me[2], i, j, n = 0, tsize;
		int64_t g = (int64_t)gsz[0] * gsz[1];
		int *loc, *got;
		MPI_Datatype dt;
		MPI_Status st;
		MPI_File fh;

		if (c) {
			dist[0] = MPI_DISTRIBUTE_CYCLIC;
			dist[1] = MPI_DISTRIBUTE_BLOCK;
			darg[0] = 2;
			darg[1] = MPI_DISTRIBUTE_DFLT_DARG;
		}
		/* The process grid is row-major whatever the array's order. */
		me[0] = rank / psz[1];
		me[1] = rank % psz[1];
		OK(MPI_Type_create_darray(size, rank, 2, gsz, dist, darg, psz, order, MPI_INT,
					  &dt));
		MPI_Type_commit(&dt);
		MPI_Type_size(dt, &tsize);
		loc = malloc((size_t)g * sizeof(int));
		got = malloc((size_t)g * sizeof(int));
		/* The local array holds the owned elements in the array's
		 * order, the fastest index last (C) or first (Fortran). */
		if (!c) {
			for (i = 0; i < gsz[0]; i++)
				for (j = 0; j < gsz[1]; j++)
					if (owner(dist[0], darg[0], gsz[0], psz[0], i) == me[0] &&
					    owner(dist[1], darg[1], gsz[1], psz[1], j) == me[1])
						loc[n++] = val((int64_t)i * gsz[1] + j);
		} else {
			for (j = 0; j < gsz[1]; j++)
				for (i = 0; i < gsz[0]; i++)
					if (owner(dist[0], darg[0], gsz[0], psz[0], i) == me[0] &&
					    owner(dist[1], darg[1], gsz[1], psz[1], j) == me[1])
						loc[n++] = val(i + (int64_t)j * gsz[0]);
		}
		CHECK(n * (int)sizeof(int) == tsize, "darray of %d bytes, %d elements owned",
		      tsize, n);
		OK(MPI_File_open(MPI_COMM_WORLD, io_path(c ? "darf" : "darc"),
				 MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_view(fh, 0, MPI_INT, dt, "native", MPI_INFO_NULL));
		OK(MPI_File_write_all(fh, loc, n, MPI_INT, &st));
		settle(fh);
		check_file(fh, g, NULL, c ? "darray cyclic x block, Fortran" :
					    "darray block x cyclic, C");
		OK(MPI_File_set_view(fh, 0, MPI_INT, dt, "native", MPI_INFO_NULL));
		OK(MPI_File_read_all(fh, got, n, MPI_INT, &st));
		for (i = 0; i < n; i++)
			CHECK(got[i] == loc[i], "darray read_all: element %d is %d, want %d", i,
			      got[i], loc[i]);
		OK(MPI_File_close(&fh));
		MPI_Type_free(&dt);
		free(loc);
		free(got);
	}
}

int main(int argc, char **argv)
{
	static const struct io_test tests[] = {
		{ "view", test_view },
		{ "noncontig", test_noncontig },
		{ "subarray", test_subarray },
		{ "darray", test_darray },
	};

	return io_main(argc, argv, "io_views", tests, sizeof(tests) / sizeof(tests[0]));
}
