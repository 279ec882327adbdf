/* SPDX-License-Identifier: BSD-3-Clause */
/* convert_pprof.c - `tracer convert --pprof FILE`: the archive's
 * CallingContextSample records as a pprof profile (the protobuf message
 * perftools.profiles.Profile of google/pprof's proto/profile.proto),
 * gzip-compressed as `go tool pprof`, pprof's web UI and speedscope read it.
 *
 * sample_type [samples/count, cpu/nanoseconds] (a sampler counting hardware
 * events: [samples/count, cycles|instructions|events/count]); per sample
 * its locations leaf first, value [1, the InterruptGenerator's period in
 * ns], string labels "thread" and "process" (the location's and its
 * location group's names) and a numeric label "location" (its id), with
 * identical stacks of one location merged into one sample, values summed.
 * One Function per distinct (name, file) of the calling contexts' regions
 * (system_name: the region's canonical name, the symbol; start_line: its
 * first line), one Location per distinct (function, line): the archive
 * keeps no addresses (the sampler's contexts are its regions and source
 * lines), so Location.address stays 0. time_nanos / duration_nanos: the
 * covered time (the --from/--to window within the run) on the archive's
 * clock, ClockProperties' realtime timestamp of its global offset.
 *
 * The encoding is written here (varints, length-delimited fields; repeated
 * scalars packed as proto3 does) into memory, then compressed with zlib.
 * convert.c declares the three rep_pprof_ functions it calls. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef TRACER_HAVE_ZLIB
#include <zlib.h>
#endif
#include "report.h"

#define UNDEF32 UINT32_MAX
#define IG_MODE_TIME 0          /* OTF2_INTERRUPT_GENERATOR_MODE_TIME */
#define IG_BASE_BINARY 0        /* OTF2_BASE_BINARY (else decimal) */

/* ---- protobuf encoding ---- */
struct pb {
	uint8_t *p;
	size_t n, cap;
};

static void pb_raw(struct pb *b, const void *p, size_t n)
{
	while (b->n + n > b->cap)
		b->p = rep_grow(b->p, &b->cap, 4096, 1);
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t t[10];
	size_t k = 0;
	do {
		t[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, t, k);
}

/* A varint field (wire type 0); 0 is the default and left out. int64
 * fields are the same bytes (negative values: their two's complement). */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

/* A length-delimited field (wire type 2): bytes, a string, a submessage,
 * a packed repeated scalar. Written even when empty (string_table[0]). */
static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

/* ---- hash of (a, b) -> id (ids from 1; 0: empty slot) ---- */
struct map2 {
	struct m2slot {
		uint64_t a, b;
		uint32_t id;
	} *s;
	size_t n, cap;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

/* The id of (a, b); not there: *added = 1 and it gets id `next`. */
static uint32_t map2_get(struct map2 *m, uint64_t a, uint64_t b, uint32_t next, int *added)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		struct m2slot *ns = rep_xcalloc(cap, sizeof *ns);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->s[i].id)
				continue;
			size_t j = mix(m->s[i].a, m->s[i].b) & (cap - 1);
			while (ns[j].id)
				j = (j + 1) & (cap - 1);
			ns[j] = m->s[i];
		}
		free(m->s);
		m->s = ns;
		m->cap = cap;
	}
	size_t j = mix(a, b) & (m->cap - 1);
	while (m->s[j].id) {
		if (m->s[j].a == a && m->s[j].b == b) {
			*added = 0;
			return m->s[j].id;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->s[j] = (struct m2slot){ a, b, next };
	m->n++;
	*added = 1;
	return next;
}

/* ---- the profile being built ---- */
struct fn {
	uint32_t name, system_name, file;   /* string table indices */
	uint32_t start_line;
};
struct loc {
	uint32_t fn;                        /* function id */
	uint32_t line;
};
struct node {                               /* a canonical calling context */
	uint32_t loc, parent;               /* location id, node id (0: root) */
};
struct smp {
	uint32_t node;
	size_t li;                          /* index into rep.locs */
	uint64_t n, value;                  /* samples, their periods summed */
};

struct rep_pprof {
	char *path;
#ifdef TRACER_HAVE_ZLIB
	gzFile gz;
#else
	FILE *f;
#endif
	const char **strs;                  /* string table */
	size_t nstrs, capstrs;
	struct map2 str_ix;                 /* (hash, collision step) -> string index + 1 */
	struct fn *fns;                     /* [id - 1] */
	size_t nfns, capfns;
	struct map2 fn_ix, loc_ix, node_ix, smp_ix;
	struct loc *locs;
	size_t nlocs, caplocs;
	struct node *nodes;
	size_t nnodes, capnodes;
	struct smp *smps;
	size_t nsmps, capsmps;
	uint32_t *cc_node;                  /* [ncc] node id, 0 not yet */
	uint32_t *region_fn;                /* [nregions] function id, 0 not yet */
	uint32_t *chain;                    /* walk of one context to its root */
	size_t capchain;
	uint32_t ig_id;                     /* the InterruptGenerator of the last sample */
	uint64_t ig_ns;                     /* its period (ns, or events) */
	const char *ig_name;                /* that of the first sample */
	int ig_time;
	uint64_t samples;
	int init;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* s's index in the string table (s stays valid: an archive string or a
 * literal). */
static uint32_t str_id(struct rep_pprof *p, const char *s)
{
	uint64_t h = str_hash(s);
	for (uint64_t step = 0;; step++) {
		int added;
		uint32_t id = map2_get(&p->str_ix, h, step, (uint32_t)p->nstrs + 1, &added);
		if (added) {
			if (p->nstrs == p->capstrs)
				p->strs = rep_grow(p->strs, &p->capstrs, 256, sizeof *p->strs);
			p->strs[p->nstrs++] = s;
			return id - 1;
		}
		if (!strcmp(p->strs[id - 1], s))
			return id - 1;
	}
}

static void pp_init(struct rep_pprof *p, const struct rep *r)
{
	p->init = 1;
	str_id(p, "");   /* string_table[0] = "" */
	p->cc_node = rep_xcalloc(r->ncc, sizeof *p->cc_node);
	p->region_fn = rep_xcalloc(r->nregions, sizeof *p->region_fn);
	p->ig_id = UNDEF32;
}

/* The Function of region ri (UNDEF32: no region, "?"). */
static uint32_t fn_of(struct rep_pprof *p, const struct rep *r, uint32_t ri)
{
	if (ri != UNDEF32 && p->region_fn[ri])
		return p->region_fn[ri];
	const otf2r_gdef_region *g = ri == UNDEF32 ? NULL : r->regions[ri];
	uint32_t name = str_id(p, ri == UNDEF32 ? "?" : r->region_names[ri]);
	uint32_t file = g ? str_id(p, rep_str_or(r, g->source_file, "")) : 0;
	int added;
	uint32_t id = map2_get(&p->fn_ix, name, file, (uint32_t)p->nfns + 1, &added);
	if (added) {
		if (p->nfns == p->capfns)
			p->fns = rep_grow(p->fns, &p->capfns, 256, sizeof *p->fns);
		p->fns[p->nfns++] = (struct fn){ name, g ? str_id(p, rep_str_or(r, g->canonical_name, "")) : 0,
						  file, g ? g->begin_line_number : 0 };
	}
	if (ri != UNDEF32)
		p->region_fn[ri] = id;
	return id;
}

/* The Location of calling context cc: its region's function and the line
 * of its SourceCodeLocation (0: none). */
static uint32_t loc_of(struct rep_pprof *p, const struct rep *r, uint32_t cc)
{
	uint32_t fn = fn_of(p, r, r->cc_region[cc]);
	const otf2r_def *d = r->cc_scl[cc] == UNDEF32 ? NULL
		: otf2r_def_find(r->ar, OTF2R_GDEF_SOURCE_CODE_LOCATION, r->cc_scl[cc]);
	uint32_t line = d ? d->u.source_code_location.line_number : 0;
	int added;
	uint32_t id = map2_get(&p->loc_ix, fn, line, (uint32_t)p->nlocs + 1, &added);
	if (added) {
		if (p->nlocs == p->caplocs)
			p->locs = rep_grow(p->locs, &p->caplocs, 256, sizeof *p->locs);
		p->locs[p->nlocs++] = (struct loc){ fn, line };
	}
	return id;
}

/* The canonical node of cc: one per distinct chain of Locations (two
 * contexts that differ only in regions of one name and file are one). */
static uint32_t node_of(struct rep_pprof *p, const struct rep *r, uint32_t cc)
{
	size_t d = 0;
	uint32_t c = cc;
	while (c != UNDEF32 && c < r->ncc && !p->cc_node[c] && d <= r->ncc) {
		if (d == p->capchain)
			p->chain = rep_grow(p->chain, &p->capchain, 256, sizeof *p->chain);
		p->chain[d++] = c;
		c = r->cc_parent[c];
	}
	uint32_t node = c != UNDEF32 && c < r->ncc ? p->cc_node[c] : 0;
	while (d-- > 0) {   /* from the outermost new context inwards */
		uint32_t x = p->chain[d];
		int added;
		uint32_t loc = loc_of(p, r, x);
		uint32_t id = map2_get(&p->node_ix, loc, node, (uint32_t)p->nnodes + 1, &added);
		if (added) {
			if (p->nnodes == p->capnodes)
				p->nodes = rep_grow(p->nodes, &p->capnodes, 1024, sizeof *p->nodes);
			p->nodes[p->nnodes++] = (struct node){ loc, node };
		}
		p->cc_node[x] = node = id;
	}
	return node;
}

/* The period of InterruptGenerator id in ns (time mode) or events. */
static void ig_period(struct rep_pprof *p, const struct rep *r, uint32_t id)
{
	p->ig_id = id;
	p->ig_ns = 0;
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_INTERRUPT_GENERATOR, id);
	if (!d)
		return;
	const otf2r_gdef_interrupt_generator *g = &d->u.interrupt_generator;
	int time = g->interrupt_generator_mode == IG_MODE_TIME;
	if (!p->ig_name) {
		p->ig_name = rep_str_or(r, g->name, "");
		p->ig_time = time;
	}
	if (!time) {
		p->ig_ns = g->period;
		return;
	}
	/* period x base^exponent seconds */
	double v = (double)g->period * 1e9;
	int64_t e = g->exponent;
	for (; e > 0 && v < 1e30; e--)
		v *= g->base == IG_BASE_BINARY ? 2 : 10;
	for (; e < 0 && v > 0; e++)
		v /= g->base == IG_BASE_BINARY ? 2 : 10;
	p->ig_ns = v < 9.2e18 ? (uint64_t)(v + 0.5) : 0;
}

struct rep_pprof *rep_pprof_open(const char *path)
{
	struct rep_pprof *p = rep_xcalloc(1, sizeof *p);
	p->path = strdup(path);
#ifdef TRACER_HAVE_ZLIB
	p->gz = gzopen(path, "wb9");
	int ok = p->gz != NULL;
#else
	p->f = fopen(path, "wb");
	int ok = p->f != NULL;
#endif
	if (!ok || !p->path) {
		fprintf(stderr, "tracer: cannot write %s: %s\n", path, strerror(errno ? errno : ENOMEM));
		free(p->path);
		free(p);
		return NULL;
	}
	return p;
}

/* A CallingContextSample of location li (inside the selection). */
void rep_pprof_sample(struct rep_pprof *p, const struct rep *r, size_t li, const otf2r_event *ev)
{
	if (!p->init)
		pp_init(p, r);
	uint32_t cc = ev->u.calling_context_sample.calling_context;
	uint32_t node = cc < r->ncc ? node_of(p, r, cc) : 0;   /* (undefined: no frames) */
	uint32_t ig = ev->u.calling_context_sample.interrupt_generator;
	if (ig != p->ig_id)
		ig_period(p, r, ig);
	int added;
	uint32_t id = map2_get(&p->smp_ix, node, li, (uint32_t)p->nsmps + 1, &added);
	if (added) {
		if (p->nsmps == p->capsmps)
			p->smps = rep_grow(p->smps, &p->capsmps, 1024, sizeof *p->smps);
		p->smps[p->nsmps++] = (struct smp){ node, li, 0, 0 };
	}
	p->smps[id - 1].n++;
	p->smps[id - 1].value += p->ig_ns;
	p->samples++;
}

static void value_type(struct pb *b, unsigned field, struct pb *sub, uint32_t type, uint32_t unit)
{
	pb_uint(sub, 1, type);
	pb_uint(sub, 2, unit);
	pb_msg(b, field, sub);
}

/* The Profile message of p into b. */
static void encode(struct rep_pprof *p, const struct rep *r, uint64_t from, uint64_t to, struct pb *b)
{
	struct pb s1 = { 0 }, s2 = { 0 }, pk = { 0 };
	/* strings first: the table is written last, after every index is known */
	uint32_t samples = str_id(p, "samples"), count = str_id(p, "count");
	const char *ev = !p->ig_name || p->ig_time ? "cpu"
		: strstr(p->ig_name, " cycles ") ? "cycles" : strstr(p->ig_name, " instructions ") ? "instructions" : "events";
	uint32_t kind = str_id(p, ev), unit = str_id(p, p->ig_time || !p->ig_name ? "nanoseconds" : "count");
	uint32_t k_thread = str_id(p, "thread"), k_process = str_id(p, "process"), k_loc = str_id(p, "location");
	uint32_t comment = p->ig_name && *p->ig_name ? str_id(p, p->ig_name) : 0;
	value_type(b, 1, &s1, samples, count);                        /* sample_type */
	value_type(b, 1, &s1, kind, unit);
	for (size_t i = 0; i < p->nsmps; i++) {                       /* sample */
		const struct smp *x = &p->smps[i];
		for (uint32_t n = x->node; n; n = p->nodes[n - 1].parent)   /* location_id, leaf first */
			pb_varint(&pk, p->nodes[n - 1].loc);
		if (pk.n)
			pb_msg(&s1, 1, &pk);
		pb_varint(&pk, x->n);                                 /* value */
		pb_varint(&pk, x->value);
		pb_msg(&s1, 2, &pk);
		const struct rep_loc *L = &r->locs[x->li];
		pb_uint(&s2, 1, k_thread);                            /* label */
		pb_uint(&s2, 2, str_id(p, L->name));
		pb_msg(&s1, 3, &s2);
		pb_uint(&s2, 1, k_process);
		pb_uint(&s2, 2, str_id(p, r->groups[L->group].name));
		pb_msg(&s1, 3, &s2);
		pb_uint(&s2, 1, k_loc);
		pb_varint(&s2, 3 << 3);                               /* num, 0 included */
		pb_varint(&s2, L->id);
		pb_msg(&s1, 3, &s2);
		pb_msg(b, 2, &s1);
	}
	for (size_t i = 0; i < p->nlocs; i++) {                       /* location */
		pb_uint(&s1, 1, i + 1);
		pb_uint(&s2, 1, p->locs[i].fn);
		pb_uint(&s2, 2, p->locs[i].line);
		pb_msg(&s1, 4, &s2);
		pb_msg(b, 4, &s1);
	}
	for (size_t i = 0; i < p->nfns; i++) {                        /* function */
		pb_uint(&s1, 1, i + 1);
		pb_uint(&s1, 2, p->fns[i].name);
		pb_uint(&s1, 3, p->fns[i].system_name);
		pb_uint(&s1, 4, p->fns[i].file);
		pb_uint(&s1, 5, p->fns[i].start_line);
		pb_msg(b, 5, &s1);
	}
	for (size_t i = 0; i < p->nstrs; i++)                         /* string_table */
		pb_bytes(b, 6, p->strs[i], strlen(p->strs[i]));
	/* the time covered: the window within the run, in ns of the archive's clock */
	const otf2r_gdef_clock_properties *cp = otf2r_clock(r->ar);
	uint64_t t0 = from > r->offset ? from : r->offset;
	uint64_t end = cp && cp->trace_length ? r->offset + cp->trace_length : UINT64_MAX;
	uint64_t t1 = to < end ? to : end;
	double ns = 1e9 / (double)r->resolution;
	if (cp && cp->realtime_timestamp && cp->realtime_timestamp != UINT64_MAX)
		pb_uint(b, 9, cp->realtime_timestamp + (uint64_t)((double)(t0 - r->offset) * ns + 0.5));
	if (t1 != UINT64_MAX && t1 > t0)
		pb_uint(b, 10, (uint64_t)((double)(t1 - t0) * ns + 0.5));
	value_type(b, 11, &s1, kind, unit);                           /* period_type */
	pb_uint(b, 12, p->ig_ns);                                     /* period */
	if (comment) {                                                /* comment: the sampler */
		pb_varint(&pk, comment);
		pb_msg(b, 13, &pk);
	}
	free(s1.p);
	free(s2.p);
	free(pk.p);
}

static void pp_free(struct rep_pprof *p)
{
	free(p->strs);
	free(p->str_ix.s);
	free(p->fns);
	free(p->fn_ix.s);
	free(p->loc_ix.s);
	free(p->node_ix.s);
	free(p->smp_ix.s);
	free(p->locs);
	free(p->nodes);
	free(p->smps);
	free(p->cc_node);
	free(p->region_fn);
	free(p->chain);
	free(p->path);
	free(p);
}

/* Writes the profile of the samples in [from, to) (write 0: the file is
 * removed) and frees p. 0; 1 when there was no sample (one line, the file
 * removed); -1 after a write error (one line). */
int rep_pprof_close(struct rep_pprof *p, const struct rep *r, int write, uint64_t from, uint64_t to)
{
	int rc = 0;
	struct pb b = { 0 };
	if (write && !p->samples) {
		fprintf(stderr, "tracer: %s has no samples%s (CallingContextSample records: record with "
			"--sampling PERIOD); %s not written\n", otf2r_path(r->ar),
			r->windowed || r->sel ? " in the selected time window and locations" : "", p->path);
		write = 0;
		rc = 1;
	}
	if (write)
		encode(p, r, from, to, &b);
#ifdef TRACER_HAVE_ZLIB
	int err = 0;
	for (size_t o = 0; write && o < b.n && !err; o += 1 << 20) {   /* (gzwrite takes an unsigned) */
		unsigned k = (unsigned)(b.n - o < (1u << 20) ? b.n - o : 1u << 20);
		err = gzwrite(p->gz, b.p + o, k) != (int)k;
	}
	err |= gzclose(p->gz) != Z_OK;
#else
	int err = write && b.n && fwrite(b.p, 1, b.n, p->f) != b.n;
	err |= fclose(p->f) != 0;
#endif
	if (write && err) {
		fprintf(stderr, "tracer: error writing %s\n", p->path);
		rc = -1;
	}
	if (!write || err)
		unlink(p->path);
	free(b.p);
	pp_free(p);
	return rc;
}
