/* SPDX-License-Identifier: BSD-3-Clause */
/* reader.c - otf2r: archive, anchor, global and local definitions,
 * primitives shared with the event reader (reader_evt.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include "reader_arch.h"

/* ---- arena ---- */

struct otf2r__block {
	otf2r__block *next;
	size_t size, used;
	max_align_t data[];
};

void *otf2r__alloc(otf2r__arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		return NULL;
	otf2r__block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t sz = n > 65536 ? n : 65536;
		b = malloc(sizeof *b + sz);
		if (!b)
			return NULL;
		b->size = sz;
		b->used = 0;
		b->next = NULL;
		if (a->head) {
			a->head->next = a->full;
			a->full = a->head;
		}
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void otf2r__arena_reset(otf2r__arena *a)
{
	/* keep the largest block only */
	otf2r__block *keep = a->head;
	for (otf2r__block *b = a->full, *nx; b; b = nx) {
		nx = b->next;
		if (keep && b->size > keep->size) {
			free(keep);
			keep = b;
		} else {
			free(b);
		}
	}
	a->full = NULL;
	a->head = keep;
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
	}
}

void otf2r__arena_free(otf2r__arena *a)
{
	otf2r__arena_reset(a);
	free(a->head);
	a->head = NULL;
}

/* ---- primitives ---- */

int otf2r__av(otf2r__cur *c, unsigned type, uint64_t *v)
{
	uint32_t x32;
	uint64_t x;
	switch (type) {
	case 1: case 5:                      /* UINT8, INT8 */
		if (c->end - c->p < 1)
			return -1;
		*v = type == 5 ? (uint64_t)(int64_t)(int8_t)c->p[0] : c->p[0];
		c->p++;
		return 0;
	case 2: case 6:                      /* UINT16, INT16 */
		if (c->end - c->p < 2)
			return -1;
		x = otf2r__fixed(c, 2);
		*v = type == 6 ? (uint64_t)(int64_t)(int16_t)x : x;
		return 0;
	case 9:                              /* FLOAT */
		if (c->end - c->p < 4)
			return -1;
		*v = otf2r__fixed(c, 4);
		return 0;
	case 10:                             /* DOUBLE */
		return otf2r__t64(c, v);
	case 7:                              /* INT32: ci32 */
		if (otf2r__cu(c, &x, 4))
			return -1;
		*v = (uint64_t)(int64_t)(int32_t)(uint32_t)x;
		return 0;
	case 3: case 11: case 12: case 14: case 15: case 16: case 17: case 18:
	case 19: case 20: case 21: case 22: case 23: case 24: case 25:
		if (otf2r__cu32(c, &x32))
			return -1;
		*v = x32 == UINT32_MAX ? UINT32_MAX : x32;
		return 0;
	default:                             /* UINT64, INT64, LOCATION, NONE, unknown */
		return otf2r__cu64(c, v);
	}
}

int otf2r__idmap(otf2r__cur *c, otf2r__arena *a, otf2r_idmap *m)
{
	if (otf2r__cu64(c, &m->count) || otf2r__u8(c, &m->mode) || m->mode > 1)
		return -1;
	size_t per = m->mode ? 2 : 1;
	if (m->count > (size_t)(c->end - c->p))   /* at least one byte per id */
		return -1;
	uint64_t *ids = otf2r__alloc(a, (size_t)m->count * per * sizeof *ids);
	if (!ids && m->count)
		return -1;
	for (size_t i = 0; i < m->count * per; i++)
		if (otf2r__cu64(c, &ids[i]))
			return -1;
	m->ids = ids;
	return 0;
}

size_t otf2r__fmt_idmap(char *b, size_t n, const char *name, const otf2r_idmap *m)
{
	size_t o = (size_t)snprintf(b, n, " %s=%s:", name, m->mode ? "sparse" : "dense");
	size_t per = m->mode ? 2 : 1;
	for (size_t i = 0; i < m->count * per; i++)
		o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s%" PRIu64,
				      i ? "," : "", m->ids[i]);
	return o;
}

uint64_t otf2r__map(const otf2r__maps *m, unsigned type, uint64_t id)
{
	if (type >= OTF2R__NMAPS || !m->ids[type])
		return id;
	const uint64_t *ids = m->ids[type];
	size_t n = m->count[type];
	if (!m->sparse[type])
		return id < n ? ids[id] : id;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ids[2 * mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[2 * lo] == id ? ids[2 * lo + 1] : id;
}

/* ---- archive ---- */

int otf2r__fail(otf2r_archive *ar, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ar->err, sizeof ar->err, fmt, ap);
	va_end(ap);
	return -1;
}

const char *otf2r_error(const otf2r_archive *ar) { return ar->err; }
const char *otf2r_path(const otf2r_archive *ar) { return ar->anchor_path; }
const otf2r_anchor *otf2r_anchor_info(const otf2r_archive *ar) { return &ar->anchor; }

/* Whole file into memory (anchor, definitions: bounded by the definitions). */
int otf2r__slurp(otf2r_archive *ar, const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return otf2r__fail(ar, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return otf2r__fail(ar, "%s: %s", path, strerror(errno));
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t k = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		free(buf);
		return otf2r__fail(ar, "%s: short read", path);
	}
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

static int parse_anchor(otf2r_archive *ar, const uint8_t *b, size_t n)
{
	otf2r_anchor *a = &ar->anchor;
	otf2r__cur c = { b, b + n, 0 };
	const char *magic;
	uint8_t u8;
	if (n < 2 || b[0] != 3 || (b[1] != 0x42 && b[1] != 0x23))
		return otf2r__fail(ar, "%s: not an OTF2 anchor", ar->anchor_path);
	c.be = b[1] == 0x23;
	c.p += 2;
	if (otf2r__str(&c, &magic) || strcmp(magic, "OTF2") != 0)
		return otf2r__fail(ar, "%s: not an OTF2 anchor", ar->anchor_path);
	if (c.end - c.p < 7 + 16 + 2 + 16)
		return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
	a->anchor_version = *c.p++;
	a->trace_version = *c.p++;
	memcpy(a->otf2_version, c.p, 3);
	c.p += 3;
	otf2r__t64(&c, &a->event_chunk_size);
	otf2r__t64(&c, &a->def_chunk_size);
	a->substrate = *c.p++;
	a->compression = *c.p++;
	otf2r__t64(&c, &a->number_of_locations);
	otf2r__t64(&c, &a->number_of_global_defs);
	if (a->anchor_version == 0 || a->trace_version > 2)
		return otf2r__fail(ar, "%s: unsupported anchor version %u/%u", ar->anchor_path,
				   a->anchor_version, a->trace_version);
	if (a->compression != 1)
		return otf2r__fail(ar, "%s: compressed archives are not supported", ar->anchor_path);
	if (a->event_chunk_size < 1024 || a->event_chunk_size > (1u << 30) ||
	    a->def_chunk_size < 1024 || a->def_chunk_size > (1u << 30))
		return otf2r__fail(ar, "%s: bad chunk sizes", ar->anchor_path);
	if (otf2r__str(&c, &a->machine) || otf2r__str(&c, &a->creator) ||
	    otf2r__str(&c, &a->description))
		return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
	if (a->anchor_version >= 2) {
		if (c.end - c.p < 4)
			return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
		a->number_of_properties = (uint32_t)otf2r__fixed(&c, 4);
		if (a->number_of_properties > n)
			return otf2r__fail(ar, "%s: bad property count", ar->anchor_path);
		a->property_names = calloc(a->number_of_properties + 1, sizeof(char *));
		a->property_values = calloc(a->number_of_properties + 1, sizeof(char *));
		if (!a->property_names || !a->property_values)
			return otf2r__fail(ar, "out of memory");
		for (uint32_t i = 0; i < a->number_of_properties; i++)
			if (otf2r__str(&c, &a->property_names[i]) ||
			    otf2r__str(&c, &a->property_values[i]))
				return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
		if (otf2r__t64(&c, &a->trace_id))
			return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
	}
	if (a->anchor_version >= 3) {
		if (c.end - c.p < 9)
			return otf2r__fail(ar, "%s: truncated anchor", ar->anchor_path);
		a->number_of_snapshots = (uint32_t)otf2r__fixed(&c, 4);
		a->number_of_thumbnails = (uint32_t)otf2r__fixed(&c, 4);
		if (otf2r__u8(&c, &u8) || u8 != 2)
			return otf2r__fail(ar, "%s: anchor end marker missing", ar->anchor_path);
	}
	return 0;
}

/* Iterate the records of a chunked definition file held in memory. cb gets
 * the record type and a cursor bounded to its payload. */
typedef int (*def_cb)(otf2r_archive *ar, unsigned type, otf2r__cur *c, void *ud);

static int walk_defs(otf2r_archive *ar, const char *path, const uint8_t *b, size_t n,
		     def_cb cb, void *ud)
{
	size_t cs = ar->anchor.def_chunk_size;
	for (size_t off = 0; off < n; off += cs) {
		size_t end = off + cs < n ? off + cs : n;
		if (end - off < 18 || b[off] != 3 || (b[off + 1] != 0x42 && b[off + 1] != 0x23))
			return otf2r__fail(ar, "%s: bad chunk header at %zu", path, off);
		otf2r__cur c = { b + off + 18, b + end, b[off + 1] == 0x23 };
		for (;;) {
			uint8_t type;
			if (otf2r__u8(&c, &type))
				return otf2r__fail(ar, "%s: chunk at %zu has no end", path, off);
			if (type == 0)
				break;                    /* next chunk */
			if (type == 1 || type == 2)
				return 0;                 /* end of file */
			uint64_t len;
			uint8_t l8;
			if (otf2r__u8(&c, &l8))
				return otf2r__fail(ar, "%s: truncated record", path);
			len = l8;
			if (l8 == 0xff && otf2r__t64(&c, &len))
				return otf2r__fail(ar, "%s: truncated record", path);
			if (len > (uint64_t)(c.end - c.p))
				return otf2r__fail(ar, "%s: record %u longer than its chunk", path, type);
			otf2r__cur rc = { c.p, c.p + len, c.be };
			c.p += len;
			if (cb(ar, type, &rc, ud))
				return -1;
		}
	}
	return 0;     /* no END_OF_FILE: accept what was there */
}

static int gdef_cb(otf2r_archive *ar, unsigned type, otf2r__cur *c, void *ud)
{
	(void)ud;
	if (ar->ndefs == ar->capdefs) {
		size_t cap = ar->capdefs ? 2 * ar->capdefs : 256;
		otf2r_def *d = realloc(ar->defs, cap * sizeof *d);
		if (!d)
			return otf2r__fail(ar, "out of memory");
		ar->defs = d;
		ar->capdefs = cap;
	}
	otf2r_def *d = &ar->defs[ar->ndefs];
	memset(d, 0, sizeof *d);
	int rc = otf2r__dec_gdef(c, type, &d->u, &ar->defmem);
	if (rc < 0)
		return otf2r__fail(ar, "%s: bad %s definition (#%zu)", ar->def_path,
				   otf2r_gdef_name(type), ar->ndefs);
	if (rc > 0)
		return 0;     /* unknown record: skipped */
	d->type = (uint8_t)type;
	ar->ndefs++;
	return 0;
}

struct idx_ent { uint64_t id; size_t at; };

static int cmp_idx(const void *a, const void *b)
{
	const struct idx_ent *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id ? 1 : (x->at > y->at) - (x->at < y->at);
}

static int build_index(otf2r_archive *ar)
{
	size_t per[64] = { 0 };
	uint64_t self;
	for (size_t i = 0; i < ar->ndefs; i++) {
		const otf2r_def *d = &ar->defs[i];
		if (d->type < 64 && otf2r__gdef_self(d->type, &d->u, &self))
			per[d->type]++;
		if (d->type == OTF2R_GDEF_LOCATION)
			ar->nlocs++;
		if (d->type == OTF2R_GDEF_CLOCK_PROPERTIES && !ar->clock)
			ar->clock = &d->u.clock_properties;
	}
	for (unsigned t = 0; t < 64; t++) {
		if (!per[t])
			continue;
		ar->idx[t] = malloc(per[t] * sizeof(struct idx_ent));
		if (!ar->idx[t])
			return otf2r__fail(ar, "out of memory");
	}
	ar->locs = malloc((ar->nlocs + 1) * sizeof *ar->locs);
	if (!ar->locs)
		return otf2r__fail(ar, "out of memory");
	size_t nl = 0;
	for (size_t i = 0; i < ar->ndefs; i++) {
		const otf2r_def *d = &ar->defs[i];
		if (d->type < 64 && otf2r__gdef_self(d->type, &d->u, &self)) {
			struct idx_ent *e = ar->idx[d->type];
			e[ar->nidx[d->type]++] = (struct idx_ent){ self, i };
		}
		if (d->type == OTF2R_GDEF_LOCATION)
			ar->locs[nl++] = &d->u.location;
	}
	for (unsigned t = 0; t < 64; t++)
		if (ar->idx[t])
			qsort(ar->idx[t], ar->nidx[t], sizeof(struct idx_ent), cmp_idx);
	/* strings: dense table when ids are dense (the usual case) */
	size_t ns = ar->nidx[OTF2R_GDEF_STRING];
	struct idx_ent *se = ar->idx[OTF2R_GDEF_STRING];
	if (ns && se[ns - 1].id < 4 * ns + 1024) {
		ar->nstrings = (size_t)se[ns - 1].id + 1;
		ar->strings = calloc(ar->nstrings, sizeof(char *));
		if (!ar->strings)
			return otf2r__fail(ar, "out of memory");
		for (size_t i = 0; i < ns; i++)
			if (!ar->strings[se[i].id])
				ar->strings[se[i].id] = ar->defs[se[i].at].u.string.string;
	}
	return 0;
}

const otf2r_def *otf2r_def_find(const otf2r_archive *ar, unsigned type, uint64_t id)
{
	if (type >= 64 || !ar->idx[type])
		return NULL;
	const struct idx_ent *e = ar->idx[type];
	size_t lo = 0, hi = ar->nidx[type];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ar->nidx[type] && e[lo].id == id ? &ar->defs[e[lo].at] : NULL;
}

const char *otf2r_string(const otf2r_archive *ar, uint32_t id)
{
	if (ar->strings)
		return id < ar->nstrings ? ar->strings[id] : NULL;
	const otf2r_def *d = otf2r_def_find(ar, OTF2R_GDEF_STRING, id);
	return d ? d->u.string.string : NULL;
}

size_t otf2r_def_count(const otf2r_archive *ar) { return ar->ndefs; }
const otf2r_def *otf2r_def_at(const otf2r_archive *ar, size_t i) { return i < ar->ndefs ? &ar->defs[i] : NULL; }
const otf2r_gdef_clock_properties *otf2r_clock(const otf2r_archive *ar) { return ar->clock; }
size_t otf2r_location_count(const otf2r_archive *ar) { return ar->nlocs; }
const otf2r_gdef_location *otf2r_location_at(const otf2r_archive *ar, size_t i)
{
	return i < ar->nlocs ? ar->locs[i] : NULL;
}

/* DIR with exactly one *.otf2, or the anchor path itself. */
static int find_anchor(const char *path, char *out, size_t n, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(out, n, "%s", path);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int found = 0, traces = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".otf2") == 0) {
			if (found++ == 0)
				snprintf(out, n, "%s/%s", path, e->d_name);
			traces |= strcmp(e->d_name, "traces.otf2") == 0;
		}
	}
	closedir(d);
	if (traces) {        /* MPI: the merged archive next to the per-rank ones */
		snprintf(out, n, "%s/traces.otf2", path);
		found = 1;
	}
	if (found != 1) {
		snprintf(err, errlen, "%s: %s", path, found ? "more than one .otf2 anchor, name one"
			 : "no .otf2 anchor file in this directory");
		return -1;
	}
	return 0;
}

int otf2r_open(const char *path, otf2r_archive **out, char *err, size_t errlen)
{
	*out = NULL;
	otf2r_archive *ar = calloc(1, sizeof *ar);
	if (!ar) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (find_anchor(path, ar->anchor_path, sizeof ar->anchor_path, err, errlen)) {
		free(ar);
		return -1;
	}
	size_t l = strlen(ar->anchor_path);
	if (l < 6 || strcmp(ar->anchor_path + l - 5, ".otf2") != 0) {
		snprintf(err, errlen, "%s: an anchor file ends in .otf2", ar->anchor_path);
		free(ar);
		return -1;
	}
	snprintf(ar->base, sizeof ar->base, "%.*s", (int)(l - 5), ar->anchor_path);
	snprintf(ar->def_path, sizeof ar->def_path, "%s.def", ar->base);
	size_t n;
	if (otf2r__slurp(ar, ar->anchor_path, &ar->anchor_buf, &n) ||
	    parse_anchor(ar, ar->anchor_buf, n) ||
	    otf2r__slurp(ar, ar->def_path, &ar->def_buf, &n) ||
	    walk_defs(ar, ar->def_path, ar->def_buf, n, gdef_cb, NULL) ||
	    build_index(ar)) {
		snprintf(err, errlen, "%s", ar->err);
		otf2r_close(ar);
		return -1;
	}
	*out = ar;
	return 0;
}

void otf2r_close(otf2r_archive *ar)
{
	if (!ar)
		return;
	free(ar->anchor.property_names);
	free(ar->anchor.property_values);
	free(ar->anchor_buf);
	free(ar->def_buf);
	free(ar->defs);
	for (unsigned t = 0; t < 64; t++)
		free(ar->idx[t]);
	free(ar->locs);
	free(ar->strings);
	otf2r__arena_free(&ar->defmem);
	free(ar);
}

/* ---- local definitions and marker file: whole file, records to a callback ---- */

struct rec_walk {
	int marker;                   /* marker file, else local definitions */
	otf2r_ldef_cb lcb;
	otf2r_marker_cb mcb;
	void *ud;
	otf2r__arena *mem;
	const char *path;
};

static int rec_cb(otf2r_archive *ar, unsigned type, otf2r__cur *c, void *ud)
{
	struct rec_walk *w = ud;
	union {
		union otf2r_ldef_u l;
		union otf2r_marker_u m;
	} u;
	memset(&u, 0, sizeof u);
	int rc = w->marker ? otf2r__dec_marker(c, type, &u.m, w->mem)
			   : otf2r__dec_ldef(c, type, &u.l, w->mem);
	if (rc < 0)
		return otf2r__fail(ar, "%s: bad %s record", w->path,
				   w->marker ? otf2r_marker_name(type) : otf2r_ldef_name(type));
	if (rc > 0)
		return 0;
	return w->marker ? w->mcb(w->ud, type, &u.m) : w->lcb(w->ud, type, &u.l);
}

/* A missing file has no records (accepted by the reference). */
static int walk_file(otf2r_archive *ar, const char *path, struct rec_walk *w)
{
	if (access(path, F_OK) != 0)
		return 0;
	uint8_t *b;
	size_t n;
	if (otf2r__slurp(ar, path, &b, &n))
		return -1;
	w->path = path;
	int rc = walk_defs(ar, path, b, n, rec_cb, w);
	free(b);
	return rc;
}

int otf2r__walk_local_defs(otf2r_archive *ar, uint64_t location, otf2r_ldef_cb cb, void *ud,
			   otf2r__arena *mem)
{
	char path[sizeof ar->base + 32];
	snprintf(path, sizeof path, "%s/%" PRIu64 ".def", ar->base, location);
	struct rec_walk w = { .lcb = cb, .ud = ud, .mem = mem };
	return walk_file(ar, path, &w);
}

int otf2r_read_local_defs(otf2r_archive *ar, uint64_t location, otf2r_ldef_cb cb, void *ud)
{
	otf2r__arena mem = { 0 };
	int rc = otf2r__walk_local_defs(ar, location, cb, ud, &mem);
	otf2r__arena_free(&mem);
	return rc;
}

int otf2r_read_markers(otf2r_archive *ar, otf2r_marker_cb cb, void *ud)
{
	char path[sizeof ar->base + 16];
	snprintf(path, sizeof path, "%s.marker", ar->base);
	otf2r__arena mem = { 0 };
	struct rec_walk w = { .marker = 1, .mcb = cb, .ud = ud, .mem = &mem };
	int rc = walk_file(ar, path, &w);
	otf2r__arena_free(&mem);
	return rc;
}
