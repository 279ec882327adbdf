/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * objsyms.h - the symbols of an object file of a traced process, read
 * after the run with libdw (its symbol tables, or the separate debug
 * information libdw finds by build id), offline as perf report does: the
 * names of static locks and where the others were made (report_locks.c)
 * and of the sampled addresses a killed process left unnamed, with their
 * source files and lines (recover_syms.c).
 */
#ifndef TRACER_OBJSYMS_H
#define TRACER_OBJSYMS_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>

struct tool_obj {
	char *path;
	Dwfl *dwfl;          /* NULL: cannot be read */
	Dwfl_Module *mod;
	GElf_Addr bias;      /* libdw's address of the file's ELF address 0 */
	GElf_Addr delta;     /* libdw's address of file offset 0 (first PT_LOAD: p_vaddr - p_offset) */
};

struct tool_objs {
	struct tool_obj *v;
	size_t n;
};

/* The object at path, opened at its first use (a later call may move the
 * entries: use the result before the next call). Exits on no memory. */
const struct tool_obj *tool_obj_open(struct tool_objs *s, const char *path);
/* The symbol containing libdw's address a of o (o->bias + ELF address, or
 * o->delta + file offset): its name, *off the distance from its start and
 * *sym the symbol; NULL when none. */
const char *tool_obj_symbol(const struct tool_obj *o, GElf_Addr a, GElf_Off *off, GElf_Sym *sym);
/* Where the function starting at libdw's address entry of o is, as a
 * normal end defines its region (sampling/symbols.c): the file of the line
 * at its entry (NULL: no line information; valid while o is open) and in
 * *line the DW_AT_decl_line of its DW_TAG_subprogram (0: unknown). */
const char *tool_obj_source(const struct tool_obj *o, GElf_Addr entry, int *line);
/* The source file and line of libdw's address a of o (NULL: no line
 * information; valid while o is open). */
const char *tool_obj_line(const struct tool_obj *o, GElf_Addr a, int *line);
void tool_objs_free(struct tool_objs *s);

#endif
