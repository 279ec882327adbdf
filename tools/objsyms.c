/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * objsyms.c - an object file's symbols, offline (objsyms.h).
 */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "objsyms.h"

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

const struct tool_obj *tool_obj_open(struct tool_objs *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].path, path))
			return &s->v[i];
	struct tool_obj *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	char *p = strdup(path);
	if (!v || !p) {
		fputs("tracer: out of memory\n", stderr);
		exit(2);
	}
	s->v = v;
	struct tool_obj *o = &s->v[s->n++];
	*o = (struct tool_obj){ .path = p };
	Dwfl *d = dwfl_begin(&offline_cb);
	Dwfl_Module *m = d ? dwfl_report_offline(d, path, path, -1) : NULL;
	GElf_Addr bias = 0;
	Elf *e = m ? dwfl_module_getelf(m, &bias) : NULL;
	size_t nph = 0;
	if (dwfl_report_end(d, NULL, NULL) || !e || elf_getphdrnum(e, &nph)) {
		if (d)
			dwfl_end(d);
		return o;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			o->bias = bias;
			o->delta = ph.p_vaddr - ph.p_offset + bias;
			o->dwfl = d;
			o->mod = m;
			return o;
		}
	}
	dwfl_end(d);
	return o;
}

const char *tool_obj_symbol(const struct tool_obj *o, GElf_Addr a, GElf_Off *off, GElf_Sym *sym)
{
	*off = 0;
	return o->mod ? dwfl_module_addrinfo(o->mod, a, off, sym, NULL, NULL, NULL) : NULL;
}

const char *tool_obj_line(const struct tool_obj *o, GElf_Addr a, int *line)
{
	*line = 0;
	Dwfl_Line *l = o->mod ? dwfl_module_getsrc(o->mod, a) : NULL;
	return l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
}

const char *tool_obj_source(const struct tool_obj *o, GElf_Addr entry, int *line)
{
	int at;
	const char *file = tool_obj_line(o, entry, &at);
	*line = 0;
	if (!o->mod)
		return NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(o->mod, entry, &bias), *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, entry - bias, &scopes) : 0;
	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			if (dwarf_decl_line(&scopes[i], line) != 0)
				*line = 0;
			break;
		}
	}
	free(scopes);
	return file;
}

void tool_objs_free(struct tool_objs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].dwfl)
			dwfl_end(s->v[i].dwfl);
		free(s->v[i].path);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
