/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_sym.c - run-time lookup of the PMPI functions and predefined MPI
 * objects the wrappers use (slots of tr_mpi_symtab, names generated from
 * mpi.h into mpi_gen.c; Fortran pmpi_*_ have a slot each), and the
 * descriptor of this build's MPI ABI (mpi_abi.h).
 *
 * A symbol is looked up on first use by tr_mpi_lookup (mpi_abi.c: global
 * scope, else every loaded object, so a libmpi opened RTLD_LOCAL by Python
 * is found too). A function found nowhere (the program called MPI_X but no
 * loaded library has PMPI_X) becomes a stub that says so once and returns
 * MPI_ERR_OTHER; an object found nowhere reads as an address that equals no
 * handle. Nothing is ever called through a NULL pointer.
 */
#include "mpi_int.h"
#include "mpi_abi.h"

#define TR_MPI_ABI_CAT2(a, b) a##b
#define TR_MPI_ABI_CAT(a, b)  TR_MPI_ABI_CAT2(a, b)
#define TR_MPI_ABI_STR2(a)    #a
#define TR_MPI_ABI_STR(a)     TR_MPI_ABI_STR2(a)

/* TR_MPI_ABI (ompi, mpich) and TR_MPI_ABI_WHAT come from wrappers/mpi/mpi.cmake. */
const struct tr_mpi_abi_info TR_MPI_ABI_CAT(tr_mpi_abi_, TR_MPI_ABI) = {
	TR_MPI_ABI_STR(TR_MPI_ABI), TR_MPI_ABI_WHAT, MPI_ERR_OTHER
};

void *tr_mpi_symtab[TR_MPI_NSYM];

static int missing_said;

static int missing(void)
{
	if (!__atomic_exchange_n(&missing_said, 1, __ATOMIC_RELAXED))
		tr_log_error("an MPI function called by the program is in no loaded library "
			     "(set TRACER_VERBOSE=2 for its name); it returns MPI_ERR_OTHER");
	return MPI_ERR_OTHER;
}

static char no_object[64];

void *tr_mpi_sym_slow(int idx, int func)
{
	const char *name = tr_mpi_symname(idx);
	void *p = tr_mpi_lookup(name);
	if (p) {
		__atomic_store_n(&tr_mpi_symtab[idx], p, __ATOMIC_RELEASE);
		return p;
	}
	tr_log_debug("MPI symbol %s not found", name);
	return func ? (void *)missing : (void *)no_object;
}

void *tr_mpi_fsym_slow(void **slot, const char *name)
{
	void *p = tr_mpi_lookup(name);
	if (p) {
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
		return p;
	}
	tr_log_debug("MPI symbol %s not found", name);
	return (void *)missing;
}
