/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_sym.c - run-time lookup of the PMPI functions and predefined MPI
 * objects the wrappers use (slots of tr_mpi_symtab, names generated from
 * mpi.h into mpi_gen.c; Fortran pmpi_*_ have a slot each).
 *
 * A symbol is looked up on first use: in the global scope first (libmpi
 * linked to the program, or opened RTLD_GLOBAL), else in every loaded object
 * (a libmpi opened RTLD_LOCAL, as Python extensions are). The object that
 * had it is remembered and searched first next time. A function found
 * nowhere (the program called MPI_X but no loaded library has PMPI_X)
 * becomes a stub that says so once and returns MPI_ERR_OTHER; an object
 * found nowhere reads as an address that equals no handle. Nothing is ever
 * called through a NULL pointer.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_int.h"

void *tr_mpi_symtab[TR_MPI_NSYM];

static void *mpi_dlh;    /* object where a symbol was last found outside the global scope */

struct names {
	char **v;
	size_t n, cap;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct names *nm = arg;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? nm->cap * 2 : 64;
		char **v = realloc(nm->v, cap * sizeof(char *));
		if (!v)
			return 1;
		nm->v = v;
		nm->cap = cap;
	}
	nm->v[nm->n] = strdup(info->dlpi_name);
	if (nm->v[nm->n])
		nm->n++;
	return 0;
}

/* Look in every loaded object (names collected first: no dlopen while
 * dl_iterate_phdr holds the loader's lock). */
static void *search_loaded(const char *name)
{
	struct names nm = { NULL, 0, 0 };
	void *p = NULL;
	dl_iterate_phdr(collect, &nm);
	for (size_t i = 0; i < nm.n; i++) {
		if (!p) {
			void *h = dlopen(nm.v[i], RTLD_LAZY | RTLD_NOLOAD);
			if (h) {
				p = dlsym(h, name);
				if (p)
					__atomic_store_n(&mpi_dlh, h, __ATOMIC_RELEASE);
				else
					dlclose(h);
			}
		}
		free(nm.v[i]);
	}
	free(nm.v);
	return p;
}

static void *lookup(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p)
		return p;
	void *h = __atomic_load_n(&mpi_dlh, __ATOMIC_ACQUIRE);
	if (h && (p = dlsym(h, name)))
		return p;
	return search_loaded(name);
}

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
	const char *name = tr_mpi_symname[idx];
	void *p = lookup(name);
	if (p) {
		__atomic_store_n(&tr_mpi_symtab[idx], p, __ATOMIC_RELEASE);
		return p;
	}
	tr_log_debug("MPI symbol %s not found", name);
	return func ? (void *)missing : (void *)no_object;
}

void *tr_mpi_fsym_slow(void **slot, const char *name)
{
	void *p = lookup(name);
	if (p) {
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
		return p;
	}
	tr_log_debug("MPI symbol %s not found", name);
	return (void *)missing;
}
