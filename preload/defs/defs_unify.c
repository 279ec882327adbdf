/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_unify.c - unification of definition sets: packed sets of several
 * processes merged into one unified set by content (tr_defs_merge, rank 0
 * at MPI_Finalize or tools/tracer-merge), and the local -> unified id maps
 * of one process (tr_ds_map_into: the registry installing the unified set;
 * tr_defs_map_buf: offline). Definitions are translated class by class in
 * dependency order through their schema (defset.c); the per-paradigm
 * COMM_LOCATIONS groups of the inputs become one union each. No process
 * state.
 */
#include <stdlib.h>
#include <string.h>
#include "defset.h"

/* ---- translation ---- */

/* The one COMM_LOCATIONS group per paradigm of the unified set. */
struct cl_union {
	int have;
	uint64_t name;   /* unified String id (UINT64_MAX: not inserted yet) */
	const char *name_str;
	uint64_t flags;
	uint32_t n, cap;
	uint64_t *m;
};

/* Append loc (known not to be a member yet). */
static void cl_push(struct cl_union *u, uint64_t loc)
{
	if (u->n == u->cap) {
		uint32_t nc = u->cap ? u->cap * 2 : 16;
		uint64_t *nm = otf2w_sys.realloc(u->m, nc * 8);
		if (!nm)
			return;
		u->m = nm;
		u->cap = nc;
	}
	u->m[u->n++] = loc;
}

static void cl_add(struct cl_union *u, uint64_t loc)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (u->m[i] == loc)
			return;
	cl_push(u, loc);
}

static int cl_index(const struct cl_union *u, uint64_t loc)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (u->m[i] == loc)
			return (int)i;
	return -1;
}

/* The one COMM_LOCATIONS group per paradigm of a unified set. */
static void cl_from_set(const struct defset *u, struct cl_union *cl)
{
	memset(cl, 0, sizeof(*cl) * TR_NPARADIGMS);
	for (uint32_t i = 0; i < u->n[TR_DEF_GROUP]; i++) {
		const struct def *d = u->items[TR_DEF_GROUP][i];
		if (d->len < 5 || d->v[1] != OTF2W_GROUP_COMM_LOCATIONS || d->v[2] >= TR_NPARADIGMS)
			continue;
		struct cl_union *cu = &cl[d->v[2]];
		if (cu->have)
			continue;
		cu->have = 1;
		cu->name = d->v[0];
		cu->flags = d->v[3];
		/* a unified set's group lists each location once: no look-up
		 * (tracer-merge builds this once per part: a look-up per member
		 * made the unification quadratic in the parts) */
		for (uint32_t m = 5; m < d->len; m++)
			cl_push(cu, d->v[m]);
	}
}

/* The source set's COMM_LOCATIONS group of a paradigm. */
static const struct def *src_cl(const struct defset *s, uint64_t paradigm)
{
	for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
		const struct def *d = s->items[TR_DEF_GROUP][i];
		if (d->len >= 5 && d->v[1] == OTF2W_GROUP_COMM_LOCATIONS && d->v[2] == paradigm)
			return d;
	}
	return NULL;
}

struct xlate {
	const struct defset *src;
	uint32_t *map[TR_DEF_NCLASSES];   /* src id -> unified id */
	uint32_t group_index;             /* unified location group of src's process */
	struct cl_union *cl;              /* [TR_NPARADIGMS] */
};

static uint64_t xref(const struct xlate *x, int cls, uint64_t v)
{
	if (cls < 0 || v == UNDEF || v >= x->src->n[cls] || !x->map[cls])
		return v;
	return x->map[cls][v];
}

/* Translate d into out (same length); returns 0, or -1 if not translatable. */
static int translate(const struct xlate *x, const struct def *d, uint64_t *out)
{
	const char *sch = tr_ds_schema_of(d);
	for (uint32_t i = 0; i < d->len; i++) {
		char k = tr_ds_kind_at(d, sch, i);
		uint64_t v = d->v[i];
		if (k == 'V')
			out[i] = i > 0 ? xref(x, tr_ds_type_class(d->v[i - 1]), v) : v;
		else if (k == 'G')
			out[i] = v == UNDEF ? x->group_index : v;
		else
			out[i] = xref(x, tr_ds_kind_class(k), v);
	}
	if (d->cls == TR_DEF_GROUP && d->len >= 5) {
		uint64_t type = d->v[1], par = d->v[2];
		if (par < TR_NPARADIGMS && type == OTF2W_GROUP_COMM_LOCATIONS && x->cl[par].have) {
			/* replaced by the union: caller rebuilds (length differs) */
			return 1;
		}
		if (par < TR_NPARADIGMS && par != OTF2W_PARADIGM_MPI &&
		    (type == OTF2W_GROUP_COMM_GROUP || type == OTF2W_GROUP_COMM_SELF) && x->cl[par].have) {
			const struct def *scl = src_cl(x->src, par);
			if (scl) {
				for (uint32_t i = 5; i < d->len; i++) {
					uint64_t idx = d->v[i];
					if (idx < scl->v[4] && 5 + idx < scl->len) {
						int u = cl_index(&x->cl[par], scl->v[5 + idx]);
						if (u >= 0)
							out[i] = (uint64_t)u;
					}
				}
			}
		}
	}
	return 0;
}

/* Translate (and insert into u when insert, else look up) every definition
 * of src in dependency order, filling x->map. */
static int xlate_all(struct xlate *x, struct defset *u, int insert)
{
	const struct defset *s = x->src;
	uint64_t *tmp = NULL;
	size_t tcap = 0;
	int missing = 0;

	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		x->map[c] = otf2w_sys.calloc(s->n[c] ? s->n[c] : 1, sizeof(uint32_t));
		if (!x->map[c])
			return -1;
	}
	for (uint32_t i = 0; i < s->n[TR_DEF_STRING]; i++) {
		const struct def *d = s->items[TR_DEF_STRING][i];
		uint32_t id;
		if (insert) {
			id = tr_ds_insert(u, TR_DEF_STRING, d->v, d->len);
		} else {
			struct def *f = tr_ds_find(u, TR_DEF_STRING, d->v, d->len, d->hash);
			id = f ? f->id : UNDEF;
		}
		if (id == UNDEF)
			missing++;
		x->map[TR_DEF_STRING][i] = id == UNDEF ? i : id;
	}
	for (size_t o = 0; o < tr_ds_norder; o++) {
		int c = tr_ds_order[o];
		for (uint32_t i = 0; i < s->n[c]; i++) {
			const struct def *d = s->items[c][i];
			size_t need = d->len + 5;
			if (c == TR_DEF_GROUP && d->len >= 5 && d->v[2] < TR_NPARADIGMS)
				need += x->cl[d->v[2]].n;
			if (need > tcap) {
				otf2w_sys.free(tmp);
				tcap = need * 2;
				tmp = otf2w_sys.malloc(tcap * 8);
				if (!tmp)
					return -1;
			}
			uint32_t len = d->len;
			int r = translate(x, d, tmp);
			if (r == 1) {
				struct cl_union *cu = &x->cl[d->v[2]];
				if (cu->name == UINT64_MAX) {
					/* first use: the string after this input's strings, so a
					 * single input keeps its ids */
					if (insert) {
						cu->name = tr_ds_string(u, cu->name_str);
					} else {
						uint32_t l = (uint32_t)strlen(cu->name_str) + 1;
						struct def *f = tr_ds_find(u, TR_DEF_STRING, cu->name_str, l,
									 tr_ds_hash(TR_DEF_STRING, cu->name_str, l));
						cu->name = f ? f->id : UNDEF;
					}
				}
				tmp[0] = cu->name;
				tmp[1] = OTF2W_GROUP_COMM_LOCATIONS;
				tmp[2] = d->v[2];
				tmp[3] = cu->flags;
				tmp[4] = cu->n;
				memcpy(tmp + 5, cu->m, (size_t)cu->n * 8);
				len = 5 + cu->n;
			}
			uint32_t id;
			if (insert) {
				id = tr_ds_insert(u, (uint32_t)c, tmp, len);
			} else {
				struct def *f = tr_ds_find(u, (uint32_t)c, tmp, len,
							 tr_ds_hash((uint32_t)c, tmp, (size_t)len * 8));
				id = f ? f->id : UNDEF;
			}
			if (id == UNDEF)
				missing++;
			x->map[c][i] = id == UNDEF ? i : id;
		}
	}
	otf2w_sys.free(tmp);
	return missing;
}

static void xlate_free(struct xlate *x)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		otf2w_sys.free(x->map[c]);
}

static void cl_free(struct cl_union *cl)
{
	for (int p = 0; p < TR_NPARADIGMS; p++)
		otf2w_sys.free(cl[p].m);
}

int tr_defs_merge(const void *const *bufs, const size_t *lens, int n, void **out, size_t *out_len)
{
	struct defset *in = otf2w_sys.calloc(n > 0 ? (size_t)n : 1, sizeof(*in));
	int *order = otf2w_sys.calloc(n > 0 ? (size_t)n : 1, sizeof(int));
	struct defset u;
	struct cl_union cl[TR_NPARADIGMS];
	struct tr_bbuf b = { 0 };
	int ret = -1, nin = 0;

	*out = NULL;
	*out_len = 0;
	memset(&u, 0, sizeof(u));
	memset(cl, 0, sizeof(cl));
	if (!in || !order)
		goto done;
	for (int i = 0; i < n; i++) {
		if (tr_ds_unpack(bufs[i], lens[i], &in[nin]) == 0)
			order[nin] = nin, nin++;
		else
			tr_ds_error("MPI unification: definitions of input %d unreadable, skipped", i);
	}
	/* deterministic: by the rank of the first process of each input */
	for (int a = 1; a < nin; a++) {
		int x = order[a], k = a;
		int32_t rx = in[x].nprocs ? in[x].procs[0].rank : 0;
		while (k > 0 && (in[order[k - 1]].nprocs ? in[order[k - 1]].procs[0].rank : 0) > rx) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = x;
	}
	for (int i = 0; i < TR_NPARADIGMS; i++)
		u.paradigm_name[i] = UNDEF;
	/* pass 1: the COMM_LOCATIONS unions */
	for (int k = 0; k < nin; k++) {
		const struct defset *s = &in[order[k]];
		for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
			const struct def *d = s->items[TR_DEF_GROUP][i];
			if (d->len < 5 || d->v[1] != OTF2W_GROUP_COMM_LOCATIONS || d->v[2] >= TR_NPARADIGMS)
				continue;
			struct cl_union *cu = &cl[d->v[2]];
			if (!cu->have) {
				cu->have = 1;
				cu->name = UINT64_MAX;
				cu->name_str = tr_ds_str(s, (uint32_t)d->v[0]);
				cu->flags = d->v[3];
			}
			for (uint32_t m = 5; m < d->len; m++)
				cl_add(cu, d->v[m]);
		}
	}
	/* pass 2: every input in rank order */
	uint32_t nprocs = 0;
	for (int k = 0; k < nin; k++)
		nprocs += in[order[k]].nprocs;
	u.procs = otf2w_sys.calloc(nprocs ? nprocs : 1, sizeof(*u.procs));
	if (!u.procs)
		goto done;
	for (int k = 0; k < nin; k++) {
		const struct defset *s = &in[order[k]];
		struct xlate x = { .src = s, .group_index = u.nprocs, .cl = cl };
		if (xlate_all(&x, &u, 1) < 0) {
			xlate_free(&x);
			goto done;
		}
		for (int p = 0; p < TR_NPARADIGMS; p++)
			if (s->paradigm_name[p] != UNDEF && u.paradigm_name[p] == UNDEF)
				u.paradigm_name[p] = (uint32_t)xref(&x, TR_DEF_STRING, s->paradigm_name[p]);
		for (uint32_t i = 0; i < s->nprocs; i++) {
			struct tr_procinfo *p = &u.procs[u.nprocs++];
			*p = s->procs[i];
			p->host = (uint32_t)xref(&x, TR_DEF_STRING, p->host);
			p->gname = (uint32_t)xref(&x, TR_DEF_STRING, p->gname);
			p->locs = otf2w_sys.calloc(p->nlocs ? p->nlocs : 1, sizeof(*p->locs));
			if (!p->locs) {
				p->nlocs = 0;
				continue;
			}
			for (uint32_t l = 0; l < p->nlocs; l++) {
				p->locs[l] = s->procs[i].locs[l];
				p->locs[l].name = (uint32_t)xref(&x, TR_DEF_STRING, p->locs[l].name);
			}
		}
		xlate_free(&x);
	}
	/* strings the global definitions need (after the inputs' strings) */
	tr_ds_string(&u, "");
	tr_ds_string(&u, "machine");
	tr_ds_string(&u, "node");
	tr_ds_string(&u, "MPI Rank (not in this archive)");
	tr_ds_string(&u, "Master thread");
	tr_ds_string(&u, "Thread");
	tr_ds_pack(&b, &u);
	if (!b.err) {
		*out = b.p;
		*out_len = b.n;
		b.p = NULL;
		ret = 0;
	}
done:
	otf2w_sys.free(b.p);
	for (int i = 0; i < nin; i++)
		tr_ds_free(&in[i]);
	otf2w_sys.free(in);
	otf2w_sys.free(order);
	tr_ds_free(&u);
	cl_free(cl);
	return ret;
}

/* ---- maps of one local set (install in the process, tracer-merge offline) ---- */

int tr_ds_map_into(const struct defset *src, const struct defset *u, uint32_t group_index,
		   uint32_t *map[TR_DEF_NCLASSES])
{
	struct cl_union cl[TR_NPARADIGMS];
	cl_from_set(u, cl);
	/* look-up only (insert 0): u is not modified */
	struct xlate x = { .src = src, .group_index = group_index, .cl = cl };
	int missing = xlate_all(&x, (struct defset *)u, 0);
	if (missing < 0)
		xlate_free(&x);
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		map[c] = missing < 0 ? NULL : x.map[c];
	cl_free(cl);
	return missing;
}

/* Local -> unified maps of one packed local set against a packed unified set. */
int tr_defs_map_buf(const void *ubuf, size_t ulen, const void *lbuf, size_t llen, struct tr_mapped *out)
{
	struct defset l;
	/* tracer-merge maps every process part against one unified set: it is
	 * unpacked once (kept with a copy of its bytes to compare) */
	static struct defset u;
	static void *u_bytes;
	static size_t u_len;
	memset(out, 0, sizeof(*out));
	if (!u_bytes || u_len != ulen || memcmp(u_bytes, ubuf, ulen)) {
		if (u_bytes)
			tr_ds_free(&u);
		otf2w_sys.free(u_bytes);
		u_bytes = otf2w_sys.malloc(ulen ? ulen : 1);
		if (!u_bytes || tr_ds_unpack(ubuf, ulen, &u)) {
			otf2w_sys.free(u_bytes);
			u_bytes = NULL;
			return -1;
		}
		memcpy(u_bytes, ubuf, ulen);
		u_len = ulen;
	}
	if (tr_ds_unpack(lbuf, llen, &l))
		return -1;
	uint32_t gi = 0;
	if (l.nprocs) {
		for (uint32_t i = 0; i < u.nprocs; i++)
			if (u.procs[i].rank == l.procs[0].rank && u.procs[i].pid == l.procs[0].pid)
				gi = i;
		out->rank = l.procs[0].rank;
		out->nlocs = l.procs[0].nlocs;
		out->locs = otf2w_sys.calloc(out->nlocs ? out->nlocs : 1, sizeof(uint64_t));
		out->gids = otf2w_sys.calloc(out->nlocs ? out->nlocs : 1, sizeof(uint64_t));
		for (uint32_t k = 0; out->locs && out->gids && k < out->nlocs; k++) {
			out->locs[k] = l.procs[0].locs[k].id;
			out->gids[k] = tr_ds_location_gid(&u, out->locs[k]);
		}
	}
	int missing = tr_ds_map_into(&l, &u, gi, out->map);
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		out->n[c] = l.n[c];
	out->coffs = l.coffs;
	out->ncoffs = l.ncoffs;
	out->evt_chunk = l.evt_chunk;
	out->def_chunk = l.def_chunk;
	l.coffs = NULL;
	tr_ds_free(&l);
	return missing < 0 || !out->locs || !out->gids ? -1 : missing;
}

void tr_defs_mapped_free(struct tr_mapped *m)
{
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		otf2w_sys.free(m->map[c]);
	otf2w_sys.free(m->locs);
	otf2w_sys.free(m->gids);
	otf2w_sys.free(m->coffs);
	memset(m, 0, sizeof(*m));
}

void tr_defs_write_mapped(otf2w_def_writer *dw, const struct tr_mapped *m)
{
	tr_ds_write_maps(dw, m->map, m->n, m->coffs, m->ncoffs);
}

int tr_defs_write_unified_buf(otf2w_gdef_writer *g, const void *ubuf, size_t ulen,
			      void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *), void *ud)
{
	struct defset u;
	if (tr_ds_unpack(ubuf, ulen, &u))
		return -1;
	/* the resolution of a set without processes: ns */
	otf2w_status st = tr_ds_write_set(g, &u, 1, 1000000000u);
	uint64_t gid = 0;
	for (uint32_t i = 0; each_loc && i < u.nprocs; i++)
		for (uint32_t k = 0; k < u.procs[i].nlocs; k++)
			each_loc(gid++, u.procs[i].locs[k].id, u.procs[i].rank, ud);
	tr_ds_free(&u);
	return st == OTF2W_OK ? 0 : -1;
}

