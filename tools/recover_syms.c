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
 * symbol of a readable file covers keeps its name. The region gets the
 * function's place as at a normal end: its source file the file of the
 * line at the function's entry (a String added, one per file, before the
 * first Region naming it, its id after every other String's), its begin
 * line the function's declaration's; without line information it keeps
 * the object file and line 0. The global definitions are rewritten record
 * by record: the renamed String records and those Regions encoded anew
 * (format/'s raw encoders), every other record copied as it is, into
 * chunks of the archive's definition chunk size; the anchor's number of
 * global definitions counts the added Strings.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "objsyms.h"
#include "otf2r.h"
#include "otf2w.h"
#include "recover_int.h"
#include "tr_defs.h"

/* The anchor's number of global definitions: a t64 in the anchor's byte
 * order after 03, the endianness, "OTF2", three version bytes, the OTF2
 * version (3), both chunk sizes (8 each), substrate, compression and the
 * number of locations (8) (otf2-format.md §2, fields 0-11). */
#define ANCHOR_NDEFS 38
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ANCHOR_ORDER 0x42
#else
#define ANCHOR_ORDER 0x23
#endif

struct rename {          /* a String renamed: a placeholder's name */
	uint32_t id;
	char *to;
	uint32_t file, line;   /* its function's source file (an added String; UINT32_MAX: none) and line */
};

struct refile {          /* a Region given its function's source file and line */
	uint32_t region, file, line;
};

struct newstr {          /* an added String: a source file */
	char *s;
	int put;              /* written (before the first Region naming it) */
};

struct names {
	struct rename *v;
	size_t nv;
	struct refile *rf;
	size_t nrf;
	struct newstr *ns;    /* ns[i]: the String of id base + i */
	size_t nns;
	uint32_t base;
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static void no_memory(void)
{
	fputs("tracer: out of memory\n", stderr);
	exit(2);
}

/* Room for one more of n elements of size each in *v. Exits on no memory. */
static void more(void *v, size_t n, size_t size)
{
	void *g = realloc(*(void **)v, (n + 1) * size);
	if (!g)
		no_memory();
	*(void **)v = g;
}

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
 * none of that form); *file the function's source file (NULL: no line
 * information; valid until the next call), *line its declaration's. */
static char *resolve(struct tool_objs *objs, const char *name, const char *path, const char **file, int *line)
{
	char *end;
	*file = NULL;
	*line = 0;
	if (strncmp(name, "0x", 2) || !path || path[0] != '/')
		return NULL;
	unsigned long long a = strtoull(name + 2, &end, 16);
	if (end[0] != ' ' || end[1] != '[')
		return NULL;
	const struct tool_obj *o = tool_obj_open(objs, path);
	GElf_Off off;
	GElf_Sym s;
	const char *sym = tool_obj_symbol(o, o->bias + a, &off, &s);
	if (!sym)
		return NULL;
	*file = tool_obj_source(o, o->bias + a - off, line);
	return function_name(sym);
}

static const struct rename *renamed(const struct names *nm, uint32_t id)
{
	for (size_t i = 0; i < nm->nv; i++)
		if (nm->v[i].id == id)
			return &nm->v[i];
	return NULL;
}

static const struct refile *refiled(const struct names *nm, uint32_t region)
{
	for (size_t i = 0; i < nm->nrf; i++)
		if (nm->rf[i].region == region)
			return &nm->rf[i];
	return NULL;
}

/* The id of the added String of file name s (added at its first use). */
static uint32_t source_id(struct names *nm, const char *s)
{
	for (size_t i = 0; i < nm->nns; i++)
		if (!strcmp(nm->ns[i].s, s))
			return nm->base + (uint32_t)i;
	char *c = strdup(s);
	if (!c)
		no_memory();
	more(&nm->ns, nm->nns, sizeof(*nm->ns));
	nm->ns[nm->nns] = (struct newstr){ c, 0 };
	return nm->base + (uint32_t)nm->nns++;
}

/* The definitions being written: chunks of cs bytes, each starting with hdr. */
struct out {
	uint8_t *o;
	size_t cap, len, chunk, cs;   /* its bytes, their length, where the current chunk starts */
	const uint8_t *hdr;
};

/* Where a record of at most need bytes goes: this chunk, or the next when
 * it would not fit (at least one byte free at a chunk's end, room for the
 * end of the file). NULL: a record larger than a chunk, or no memory. */
static uint8_t *room(struct out *w, size_t need)
{
	if (need + 1 + HDR > w->cs)
		return NULL;
	while (w->cap < w->chunk + 2 * w->cs) {   /* (this chunk and the next one) */
		uint8_t *g = realloc(w->o, w->cap * 2);
		if (!g)
			return NULL;
		w->o = g;
		w->cap *= 2;
	}
	if (w->len + need + 2 > w->chunk + w->cs) {
		memset(w->o + w->len, 0, w->chunk + w->cs - w->len);
		w->chunk += w->cs;
		memcpy(w->o + w->chunk, w->hdr, HDR);   /* (definition chunks: first 1, last 0, in every header) */
		w->len = w->chunk + HDR;
	}
	return w->o + w->len;
}

/* One record of the chunk at buf (r) into w, renamed or given its source
 * (nm) or as it is. 0, -1 when it does not fit. */
static int put_record(struct out *w, const uint8_t *buf, const otf2r_chunk_rec *r, struct names *nm)
{
	const struct rename *to = r->type == OTF2R_GDEF_STRING && r->decoded ? renamed(nm, r->u.gdef.string.self) : NULL;
	const otf2r_gdef_region *g = &r->u.gdef.region;
	const struct refile *f = r->type == OTF2R_GDEF_REGION && r->decoded ? refiled(nm, g->self) : NULL;
	uint8_t *p;
	if (f && !nm->ns[f->file - nm->base].put) {   /* its file's String first */
		struct newstr *s = &nm->ns[f->file - nm->base];
		if (!(p = room(w, OTF2W_GDEF_STRING_MAX(strlen(s->s)))))
			return -1;
		w->len = (size_t)(otf2w_gdef_put_string(p, f->file, s->s) - w->o);
		s->put = 1;
	}
	if (!(p = room(w, to ? OTF2W_GDEF_STRING_MAX(strlen(to->to)) : f ? OTF2W_GDEF_REGION_MAX : r->len)))
		return -1;
	if (to)
		p = otf2w_gdef_put_string(p, to->id, to->to);
	else if (f)
		p = otf2w_gdef_put_region(p, g->self, g->name, g->canonical_name, g->description, g->region_role,
					  g->paradigm, g->region_flags, f->file, f->line, g->end_line_number, g->region_type);
	else
		p = (uint8_t *)memcpy(p, buf + r->off, r->len) + r->len;
	w->len = (size_t)(p - w->o);
	return 0;
}

/* Global definitions buf (n bytes, chunks of cs) with the changes of nm,
 * into *out (its length *olen). 0, -1 on a malformed file. */
static int rewrite(const uint8_t *buf, size_t n, size_t cs, struct names *nm, uint8_t **out, size_t *olen)
{
	struct out w = { malloc(n + 2 * cs), n + 2 * cs, HDR, 0, cs, buf };
	if (!w.o || n < HDR)
		goto bad;
	memcpy(w.o, buf, HDR);
	for (size_t at = 0; at < n; at += cs) {
		otf2r_chunk *k = otf2r_chunk_open(buf + at, n - at < cs ? n - at : cs, OTF2R_CHUNK_GLOBAL_DEFS);
		otf2r_chunk_rec r;
		int rc;
		if (!k)
			goto bad;
		while ((rc = otf2r_chunk_next(k, &r)) > 0 && put_record(&w, buf + at, &r, nm) == 0)
			;
		otf2r_chunk_close(k);
		if (rc != 0)
			goto bad;
	}
	w.o[w.len++] = 0x02;   /* END_OF_FILE, END_OF_BUFFER */
	w.o[w.len++] = 0x01;
	*out = w.o;
	*olen = w.len;
	return 0;
bad:
	free(w.o);
	return -1;
}

/* The whole file at path (*len bytes), NULL when it cannot be read
 * (read_full: recover.c). */
static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf = NULL;
	*len = 0;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < INT_MAX &&
	    (buf = malloc((size_t)st.st_size)) != NULL) {
		if (read_full(fd, buf, (size_t)st.st_size, 0) == (int)st.st_size) {
			*len = (size_t)st.st_size;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

/* n bytes into a new file path (write_full: recover.c). 0, or -1. */
static int put_file(const char *path, const uint8_t *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int bad = fd < 0 || write_full(fd, b, n, 0) != 0;
	if (fd >= 0 && close(fd) != 0)
		bad = 1;
	return bad ? -1 : 0;
}

/* The anchor at path counting from + add global definitions, into tmp.
 * 0, or -1 (no anchor of this byte order counting from). */
static int recount(const char *path, const char *tmp, uint64_t from, uint64_t add)
{
	size_t n;
	uint8_t *b = slurp(path, &n);
	uint64_t was = 0;
	if (b && n >= ANCHOR_NDEFS + 8 && b[0] == 0x03 && b[1] == ANCHOR_ORDER && !memcmp(b + 2, "OTF2", 5))
		memcpy(&was, b + ANCHOR_NDEFS, 8);
	int rc = -1;
	if (b && was == from && from) {
		was += add;
		memcpy(b + ANCHOR_NDEFS, &was, 8);
		rc = put_file(tmp, b, n);
	}
	free(b);
	return rc;
}

/* The definitions file def rewritten with nm and, when Strings were
 * added, the anchor recounted (ndefs: its count): both written aside,
 * then renamed over, the anchor last. 0, or -1. */
static int rewrite_files(const char *anchor, const char *def, uint64_t ndefs, size_t cs, struct names *nm)
{
	char dtmp[4500], atmp[4500];
	size_t len = 0, olen = 0;
	uint8_t *buf = slurp(def, &len), *out = NULL;
	snprintf(dtmp, sizeof(dtmp), "%s.names", def);
	snprintf(atmp, sizeof(atmp), "%.4000s.names", anchor);
	errno = 0;
	int rc = !buf || rewrite(buf, len, cs, nm, &out, &olen) != 0 || put_file(dtmp, out, olen) != 0 ||
		 (nm->nns && recount(anchor, atmp, ndefs, nm->nns) != 0) || rename(dtmp, def) != 0 ||
		 (nm->nns && rename(atmp, anchor) != 0);
	int e = errno;
	unlink(dtmp);   /* (what was not renamed) */
	unlink(atmp);
	free(buf);
	free(out);
	errno = rc ? e : 0;
	return rc ? -1 : 0;
}

/* The placeholder Regions of ar to rename, into nm (base: the first
 * String id after ar's). Returns how many were named. */
static int collect(otf2r_archive *ar, struct names *nm, uint32_t *desc)
{
	size_t n = otf2r_def_count(ar);
	struct tool_objs objs = { NULL, 0 };
	int named = 0;
	for (size_t i = 0; i < n; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type == OTF2R_GDEF_STRING && d->u.string.self >= nm->base)
			nm->base = d->u.string.self + 1;
	}
	for (size_t i = 0; i < n; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type != OTF2R_GDEF_REGION)
			continue;
		const otf2r_gdef_region *g = &d->u.region;
		const char *ds = otf2r_string(ar, g->description), *name = otf2r_string(ar, g->name), *file;
		if (!ds || !name || strcmp(ds, TR_DEFS_PLACEHOLDER))
			continue;
		*desc = g->description;
		const struct rename *was = renamed(nm, g->name);
		struct rename r = was ? *was : (struct rename){ g->name, NULL, UINT32_MAX, 0 };
		int line;
		if (!was) {
			if (!(r.to = resolve(&objs, name, otf2r_string(ar, g->source_file), &file, &line)))
				continue;
			if (file) {
				r.file = source_id(nm, file);
				r.line = line > 0 ? (uint32_t)line : 0;
			}
			more(&nm->v, nm->nv + 1, sizeof(*nm->v));   /* (and one for the description) */
			nm->v[nm->nv++] = r;
			named++;
		}
		if (r.file != UINT32_MAX) {
			more(&nm->rf, nm->nrf, sizeof(*nm->rf));
			nm->rf[nm->nrf++] = (struct refile){ g->self, r.file, r.line };
		}
	}
	tool_objs_free(&objs);
	return named;
}

int tr_recover_name_samples(const char *anchor, FILE *msg)
{
	char err[256], def[4400], apath[4400];
	otf2r_archive *ar;
	if (otf2r_open(anchor, &ar, err, sizeof(err)) != 0)
		return -1;
	struct names nm = { 0 };
	size_t cs = otf2r_anchor_info(ar)->def_chunk_size;
	uint64_t ndefs = otf2r_anchor_info(ar)->number_of_global_defs;
	uint32_t desc = UINT32_MAX;
	int named = collect(ar, &nm, &desc), rc = 0;
	snprintf(apath, sizeof(apath), "%.4000s", otf2r_path(ar));
	otf2r_close(ar);
	snprintf(def, sizeof(def), "%s", apath);
	size_t dl = strlen(def);
	if (dl > 5 && !strcmp(def + dl - 5, ".otf2"))
		strcpy(def + dl - 5, ".def");
	if (named && desc != UINT32_MAX)
	{
		char *d = strdup(TR_DEFS_PLACEHOLDER_READ);
		if (!d)
			no_memory();
		nm.v[nm.nv++] = (struct rename){ desc, d, UINT32_MAX, 0 };
	}
	if (named && (rc = rewrite_files(apath, def, ndefs, cs, &nm)) != 0 && msg)
		fprintf(msg, "tracer: recover: %s: the sampled functions could not be named (%s)\n", def,
			errno ? strerror(errno) : "malformed definitions");
	for (size_t i = 0; i < nm.nv; i++)
		free(nm.v[i].to);
	for (size_t i = 0; i < nm.nns; i++)
		free(nm.ns[i].s);
	free(nm.v);
	free(nm.rf);
	free(nm.ns);
	return rc ? -1 : named;
}
