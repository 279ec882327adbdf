/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_abi.h - the MPI layer built once per MPI ABI (Open MPI: handles are
 * pointers; MPICH and its derivatives: handles are ints), both linked into
 * libtracer.so (docs/mpi.md "One library for Open MPI and MPICH").
 *
 * Each ABI's objects (the files of wrappers/mpi/ compiled against that MPI's mpi.h)
 * are joined into one object in which every symbol is local except its
 * entry points, renamed tr_mpix_<abi>_<name>, and its descriptor
 * tr_mpi_abi_<abi> (scripts/gen-mpi-wrappers --link). The names the program
 * calls (MPI_Send, mpi_send_, ...) are defined once, in the generated
 * mpi_disp.c: a trampoline that jumps through tr_mpi_disp[], which
 * mpi_abi.c fills at the first call of each name with the active ABI's
 * function, or with the MPI library's own function when that ABI has no
 * wrapper for the name or the MPI is of an unknown ABI.
 *
 * This header is ABI-neutral: it never includes mpi.h.
 */
#ifndef TR_MPI_ABI_H
#define TR_MPI_ABI_H

/* Defined by each ABI's objects (mpi_sym.c). */
struct tr_mpi_abi_info {
	const char *name;        /* "ompi", "mpich": the build's ABI name */
	const char *what;        /* for messages: "Open MPI", "MPICH" */
	int err_other;           /* MPI_ERR_OTHER of that ABI */
};

/* One entry per ABI built (generated mpi_disp.c), ended by { NULL, NULL }. */
struct tr_mpi_abi {
	const struct tr_mpi_abi_info *info;
	const int *fn;           /* [entry point index]: that ABI's wrapper, as its address
				  * relative to the entry's own (0: none; read-only data) */
};
extern const struct tr_mpi_abi tr_mpi_abis[];
/* Entry point names: one string and offsets (no relocations at load). */
extern const char tr_mpi_xstr[];
extern const unsigned tr_mpi_xoff[];
#define tr_mpi_xname(i) (tr_mpi_xstr + tr_mpi_xoff[i])
extern void *tr_mpi_disp[];

/* The MPI library's own definition of name (never libtracer's): global
 * scope first, else every loaded object (a libmpi opened RTLD_LOCAL, as by
 * mpi4py). NULL if no loaded object has it. */
void *tr_mpi_lookup(const char *name);

/* TRACER_MPI_POLLING=all (the family's settings, mpi_abi.c: parsed once
 * for every ABI) */
int tr_mpi_polling_all(void);

#endif /* TR_MPI_ABI_H */
