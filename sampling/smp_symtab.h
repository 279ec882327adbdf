/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_symtab.h - a module's symbols sorted once for the lookup of sampled
 * addresses (symtab.c; used by symbols.c). Never included outside
 * sampling/.
 */
#ifndef SMP_SYMTAB_H
#define SMP_SYMTAB_H

#include <stdint.h>
#include <stddef.h>
#include "smp_libs.h"

struct smp_sym {
	uint64_t lo, size;   /* run-time address, st_size (0: a label) */
	/* among the sorted symbols up to here: the highest end of a sized
	 * one, and the highest end (lo + size) in each part of the table */
	uint64_t reach, reach_part[2];
	const char *name;    /* libdw's: valid until the module's dwfl_end */
	uint32_t index;      /* in the module's symbol table */
	uint8_t bind;        /* 3 global, 2 weak, 1 local */
	uint8_t part;        /* 0: the global part of the table (searched first), 1: the local part */
	uint8_t abs;         /* an absolute symbol (no section): names its own address only */
	uint8_t plt;         /* made here: a PLT stub, "<function>@plt" */
	int32_t decl_line;   /* of its function (DWARF), -1: not looked up yet (symbols.c) */
	const char *decl_file;   /* the source file of its entry (libdw's; with decl_line) */
};
struct smp_sec {
	uint64_t lo, hi;     /* an executable section, run-time addresses */
};
struct smp_symtab {
	struct smp_sym *v;
	size_t n;
	struct smp_sec *sec;
	size_t nsec;
	char *plt_names;     /* the "<function>@plt" names, one block */
	int two_parts;       /* the table has a local part (searched when the global one names nothing) */
	int built;           /* smp_symtab_build ran (even when it found nothing) */
};

/* Read and sort mod's symbols (mod may be NULL: an empty table). -1 when
 * there are none or no memory. Outside signal handlers (allocates). */
int smp_symtab_build(struct smp_symtab *st, Dwfl_Module *mod);
/* The symbol naming addr (see symtab.c for the choice), or NULL. */
struct smp_sym *smp_symtab_find(struct smp_symtab *st, uint64_t addr);
void smp_symtab_free(struct smp_symtab *st);

#endif /* SMP_SYMTAB_H */
