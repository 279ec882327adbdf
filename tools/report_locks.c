/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_locks.c - the names of the locks: a pthread lock in a file
 * mapping of the traced process (a static or global mutex) has its site
 * in a property of the process's master location,
 * TRACER::LOCK_SITE::<lock id> = "0x<offset> <path>" (wrappers/pthread/
 * pthread_site.c: the offset from where the object's file offset 0 was
 * mapped). Here it becomes the symbol, read from the object with libdw
 * (its symbol table, or the separate debug information libdw finds by
 * build id), offline as perf report does: "queue_lock", "stats+0x8";
 * without a symbol "<object>+0x<offset>". A lock on the heap or a stack
 * has no site: the report shows its address, and where it was made when
 * an init call made it (TRACER::LOCK_INIT::<lock id>, the same form for
 * the return address of pthread_mutex_init & co.): "make_queue
 * (queue.c:42)", the function and line that initialised it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "objsyms.h"
#include "report.h"

/* "symbol", "symbol+0x<n>" or "<object>+0x<offset>" for offset in o. */
static char *lk_name(const struct tool_obj *o, uint64_t offset)
{
	const char *sym = NULL, *base = strrchr(o->path, '/');
	GElf_Off off = 0;
	GElf_Sym s;
	char *out = NULL;

	sym = tool_obj_symbol(o, o->delta + offset, &off, &s);
	/* (a function's name for a data address would be wrong: data symbols only) */
	if (sym && GELF_ST_TYPE(s.st_info) != STT_OBJECT && GELF_ST_TYPE(s.st_info) != STT_NOTYPE)
		sym = NULL;
	int k = sym ? (off ? asprintf(&out, "%s+0x%" PRIx64, sym, (uint64_t)off) : asprintf(&out, "%s", sym))
		    : asprintf(&out, "%s+0x%" PRIx64, base ? base + 1 : o->path, offset);
	return k < 0 ? NULL : out;
}

static struct rep_lock *lk_find(struct rep *r, size_t group, uint32_t id)
{
	for (size_t i = 0; i < r->caplocks; i++)
		if (r->locks[i].acquisitions && r->locks[i].group == group && r->locks[i].id == id)
			return &r->locks[i];
	return NULL;
}

/* Where a lock was made, from the return address of its init call (file
 * offset `offset` in o): "function (file:line)", "function+0x<n>" without
 * line information, "<object>+0x<offset>" without a symbol. */
static char *lk_init(const struct tool_obj *o, uint64_t offset)
{
	const char *base = strrchr(o->path, '/'), *file;
	GElf_Addr a = o->delta + offset - 1;   /* (inside the call instruction) */
	GElf_Off off = 0;
	GElf_Sym s;
	char *out = NULL;
	int line = 0, k;

	const char *sym = tool_obj_symbol(o, a, &off, &s);
	if (sym && GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC)
		sym = NULL;
	if (sym && (file = tool_obj_line(o, a, &line)) != NULL && line > 0) {
		const char *fb = strrchr(file, '/');
		k = asprintf(&out, "%s (%s:%d)", sym, fb ? fb + 1 : file, line);
	} else if (sym) {
		k = asprintf(&out, "%s+0x%" PRIx64, sym, (uint64_t)off + 1);
	} else {
		k = asprintf(&out, "%s+0x%" PRIx64, base ? base + 1 : o->path, offset);
	}
	return k < 0 ? NULL : out;
}

void rep_lock_names(struct rep *r)
{
	static const char site[] = "TRACER::LOCK_SITE::", init[] = "TRACER::LOCK_INIT::";
	struct tool_objs objs = { NULL, 0 };
	size_t n = otf2r_def_count(r->ar);

	if (!r->nlocks)
		return;
	for (size_t i = 0; i < n; i++) {
		const otf2r_def *d = otf2r_def_at(r->ar, i);
		if (d->type != OTF2R_GDEF_LOCATION_PROPERTY)
			continue;
		const otf2r_gdef_location_property *p = &d->u.location_property;
		const char *pn = otf2r_string(r->ar, p->name);
		const char *sv = otf2r_string(r->ar, p->string_value);
		int is_init = pn && !strncmp(pn, init, sizeof init - 1);
		if (!pn || !sv || (!is_init && strncmp(pn, site, sizeof site - 1)))
			continue;
		char *end;
		unsigned long id = strtoul(pn + sizeof site - 1, &end, 10);   /* (both prefixes are as long) */
		uint64_t offset = strtoull(sv, &end, 16);
		if (*end != ' ' || end[1] != '/')
			continue;
		size_t li = 0;
		while (li < r->nlocs && r->locs[li].id != p->location)
			li++;
		struct rep_lock *l = li < r->nlocs ? lk_find(r, r->locs[li].group, (uint32_t)id) : NULL;
		if (!l || (is_init ? l->init != NULL : l->name != NULL))
			continue;
		const struct tool_obj *o = tool_obj_open(&objs, end + 1);
		if (is_init) {
			l->init = lk_init(o, offset);
			continue;
		}
		l->name = lk_name(o, offset);
		l->object = strdup(end + 1);
	}
	tool_objs_free(&objs);
}
