/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover_syms.c - the sampled functions of a killed process named after
 * the kill.
 *
 * A TRACER_DURABLE snapshot reads no symbol (its tick may run in the
 * program's SIGPROF handler, and there is no thread of the tracer to do
 * it): it names each sampled address by a Region "0x<address in the
 * file> [<object>]", the object file as its source file, described
 * TR_DEFS_PLACEHOLDER (preload/defs/
 * tr_defs.h, sampling/symbols.c). Here, once the archive is recovered,
 * each such name becomes the function's, read from that file with libdw
 * (objsyms.c), C++ names demangled, as at a normal end; an address no
 * symbol of a readable file covers keeps its name. The
 * global definitions are rewritten record by record: the renamed String
 * records encoded anew (format/'s encoder), every other record copied as
 * it is, into chunks of the archive's definition chunk size. The region
 * keeps the object file as its source file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "objsyms.h"
#include "otf2r.h"
#include "otf2w.h"
#include "recover_int.h"
#include "tr_defs.h"

#define CHUNK_HDR 18

struct rename {
	uint32_t id;
	char *to;
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* The symbol's name as a normal end names it: demangled, without its
 * version ("clock_gettime@@GLIBC_2.17": clock_gettime). */
static char *function_name(const char *sym)
{
	static demangle_fn dm;
	static int tried;
	if (!tried) {
		tried = 1;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		dm = h ? (demangle_fn)dlsym(h, "__cxa_demangle") : NULL;
	}
	int st = -1;
	char *d = dm && sym[0] == '_' && sym[1] == 'Z' ? dm(sym, NULL, NULL, &st) : NULL;
	if (d && st == 0)
		return d;
	free(d);
	const char *at = strchr(sym, '@');
	return at ? strndup(sym, (size_t)(at - sym)) : strdup(sym);
}

/* The new name of a placeholder "0x<address> [<object>]" of the object
 * file at path: its function, or NULL when no symbol covers it (or it is
 * none of that form). */
static char *resolve(struct tool_objs *objs, const char *name, const char *path)
{
	char *end;
	if (strncmp(name, "0x", 2) || !path || path[0] != '/')
		return NULL;
	unsigned long long a = strtoull(name + 2, &end, 16);
	if (end[0] != ' ' || end[1] != '[')
		return NULL;
	const struct tool_obj *o = tool_obj_open(objs, path);
	GElf_Off off;
	GElf_Sym s;
	const char *sym = tool_obj_symbol(o, o->bias + a, &off, &s);
	return sym ? function_name(sym) : NULL;
}

static const char *renamed(const struct rename *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return v[i].to;
	return NULL;
}

/* Global definitions buf (n bytes, chunks of cs) with the strings of v
 * replaced, into *out (its length *olen). 0, -1 on a malformed file. */
static int rewrite(const uint8_t *buf, size_t n, size_t cs, const struct rename *v, size_t nv, uint8_t **out,
		   size_t *olen)
{
	size_t cap = n + 2 * cs, len = 0, chunk = 0;   /* out, its length, where its current chunk starts */
	uint8_t *o = malloc(cap);
	if (!o || n < CHUNK_HDR)
		goto bad;
	memcpy(o, buf, CHUNK_HDR);   /* (definition chunks: first 1, last 0, in every header) */
	len = CHUNK_HDR;
	for (size_t at = 0; at < n; at += cs) {
		size_t clen = n - at < cs ? n - at : cs;
		otf2r_chunk *k = otf2r_chunk_open(buf + at, clen, OTF2R_CHUNK_GLOBAL_DEFS);
		otf2r_chunk_rec r;
		int rc;
		if (!k)
			goto bad;
		while ((rc = otf2r_chunk_next(k, &r)) > 0) {
			const char *to = r.type == OTF2R_GDEF_STRING && r.decoded ? renamed(v, nv, r.u.gdef.string.self)
										    : NULL;
			size_t need = to ? OTF2W_GDEF_STRING_MAX(strlen(to)) : r.len;
			if (need + 1 + CHUNK_HDR > cs) {
				otf2r_chunk_close(k);
				goto bad;
			}
			if (len + need + 2 > chunk + cs) {   /* (at least one byte free at a chunk's end) */
				memset(o + len, 0, chunk + cs - len);
				chunk += cs;
				len = chunk;
				memcpy(o + len, buf, CHUNK_HDR);
				len += CHUNK_HDR;
			}
			if (len + need + 2 > cap) {
				uint8_t *g = realloc(o, cap *= 2);
				if (!g) {
					otf2r_chunk_close(k);
					goto bad;
				}
				o = g;
			}
			if (to)
				len = (size_t)(otf2w_gdef_put_string(o + len, r.u.gdef.string.self, to) - o);
			else
				memcpy(o + len, buf + at + r.off, r.len), len += r.len;
		}
		otf2r_chunk_close(k);
		if (rc < 0)
			goto bad;
	}
	o[len++] = 0x02;   /* END_OF_FILE, END_OF_BUFFER */
	o[len++] = 0x01;
	*out = o;
	*olen = len;
	return 0;
bad:
	free(o);
	return -1;
}

int tr_recover_name_samples(const char *anchor, FILE *msg)
{
	char err[256], def[4400], tmp[4500];
	otf2r_archive *ar;
	if (otf2r_open(anchor, &ar, err, sizeof(err)) != 0)
		return -1;
	size_t n = otf2r_def_count(ar), nv = 0, cs = otf2r_anchor_info(ar)->def_chunk_size;
	struct rename *v = NULL;
	struct tool_objs objs = { NULL, 0 };
	int named = 0, rc = 0;
	uint32_t desc = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type != OTF2R_GDEF_REGION)
			continue;
		const otf2r_gdef_region *g = &d->u.region;
		const char *ds = otf2r_string(ar, g->description), *nm = otf2r_string(ar, g->name);
		if (!ds || !nm || strcmp(ds, TR_DEFS_PLACEHOLDER) || renamed(v, nv, g->name))
			continue;
		desc = g->description;
		char *to = resolve(&objs, nm, otf2r_string(ar, g->source_file));
		struct rename *m = to ? realloc(v, (nv + 2) * sizeof(*v)) : NULL;
		if (!m) {
			free(to);
			continue;
		}
		v = m;
		v[nv++] = (struct rename){ g->name, to };
		named++;
	}
	tool_objs_free(&objs);
	snprintf(def, sizeof(def), "%.4000s", otf2r_path(ar));
	otf2r_close(ar);
	size_t dl = strlen(def);
	if (dl > 5 && !strcmp(def + dl - 5, ".otf2"))
		strcpy(def + dl - 5, ".def");
	if (named && desc != UINT32_MAX)
		v[nv++] = (struct rename){ desc, strdup(TR_DEFS_PLACEHOLDER_READ) };
	if (named) {
		FILE *f = fopen(def, "rb");
		uint8_t *buf = NULL, *out = NULL;
		size_t len = 0, olen = 0, cap = 0, got;
		while (f) {
			if (len == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 1 << 20)))
				break;
			if ((got = fread(buf + len, 1, cap - len, f)) == 0)
				break;
			len += got;
		}
		if (f)
			fclose(f);
		snprintf(tmp, sizeof(tmp), "%s.names", def);
		FILE *w = NULL;
		rc = !buf || rewrite(buf, len, cs, v, nv, &out, &olen) != 0 || !(w = fopen(tmp, "wb")) ||
		     fwrite(out, 1, olen, w) != olen;
		if (w && fclose(w) != 0)
			rc = 1;
		if (!rc && rename(tmp, def) != 0)
			rc = 1;
		if (rc) {
			unlink(tmp);
			if (msg)
				fprintf(msg, "tracer: recover: %s: the sampled functions could not be named (%s)\n", def,
					errno ? strerror(errno) : "malformed definitions");
		}
		free(buf);
		free(out);
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i].to);
	free(v);
	return rc ? -1 : named;
}
