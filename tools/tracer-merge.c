/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer-merge - make one OTF2 archive out of the per-rank archives that
 * libtracer.so leaves when an MPI run ends without MPI_Finalize (crash,
 * MPI_Abort, killed ranks).
 *
 * usage: tracer-merge [--wait SECONDS --ranks N] DIR
 *
 * --wait/--ranks: wait (at most SECONDS) until rank0..rank<N-1>.otf2 exist
 * (used by MPI_Abort, which starts this tool while the other ranks are
 * still being killed). Only one merge runs at a time (DIR/.tracer-merge.lock);
 * nothing is done when DIR/traces.otf2 exists already.
 *
 * DIR holds rank<r>.otf2 / rank<r>.def / rank<r>/ (one standalone archive
 * per rank, each with its own definition ids). The tool reads every rank's
 * global definitions (reference libotf2 reader), unifies them by content
 * (Comms agreed at creation have equal names and groups on every member),
 * and writes DIR/traces.otf2 + DIR/traces.def + DIR/traces/<loc>.def (mapping
 * tables local -> unified ids, the rank's clock offsets), linking each
 * location's events DIR/rank<r>/<loc>.evt to DIR/traces/<loc>.evt. The
 * per-rank archives stay readable.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <otf2/otf2.h>

#define UNDEF32 0xffffffffu

enum cls {
	C_STR, C_PARADIGM, C_STN, C_STND, C_LG, C_LOC, C_REGION, C_ATTR, C_PARAM, C_GROUP, C_COMM,
	C_RMAWIN, C_CARTDIM, C_CARTTOPO, C_CARTCOORD, C_SCL, C_CC, C_IG, C_LOCPROP, C_LGPROP, C_N
};
/* classes with an id space (the others are deduplicated by content only) */
static const int has_id[C_N] = {
	[C_STR] = 1, [C_STN] = 1, [C_LG] = 1, [C_REGION] = 1, [C_ATTR] = 1, [C_PARAM] = 1, [C_GROUP] = 1,
	[C_COMM] = 1, [C_RMAWIN] = 1, [C_CARTDIM] = 1, [C_CARTTOPO] = 1, [C_SCL] = 1, [C_CC] = 1, [C_IG] = 1,
};

struct rec {
	int cls, sub;
	uint64_t f[10];
	uint32_t narr;
	uint64_t *arr;
	char *s;
	uint64_t gid;
	int owner;           /* C_LOC: rank that owns the location */
};

static struct rec *recs;
static size_t nrecs, caprecs;
static uint64_t next_gid[C_N];

/* content hash table: index + 1 into recs */
static size_t *ht;
static size_t htcap;

/* per-rank local -> global maps */
struct map {
	uint64_t *v;
	size_t n;
};
static struct map cur_map[C_N];

static uint64_t hash_rec(const struct rec *r)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)r->cls * 31 ^ (uint64_t)r->sub;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ull)
	for (int i = 0; i < 10; i++)
		MIX(r->f[i]);
	MIX(r->narr);
	for (uint32_t i = 0; i < r->narr; i++)
		MIX(r->arr[i]);
	if (r->s)
		for (const char *p = r->s; *p; p++)
			MIX(*p);
#undef MIX
	return h;
}

static int eq_rec(const struct rec *a, const struct rec *b)
{
	if (a->cls != b->cls || a->sub != b->sub || a->narr != b->narr || memcmp(a->f, b->f, sizeof(a->f)))
		return 0;
	if (a->narr && memcmp(a->arr, b->arr, sizeof(uint64_t) * a->narr))
		return 0;
	if (!a->s != !b->s || (a->s && strcmp(a->s, b->s)))
		return 0;
	return 1;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "tracer-merge: out of memory\n");
		exit(1);
	}
	return p;
}

static void ht_grow(void)
{
	size_t ncap = htcap ? htcap * 2 : 4096;
	size_t *n = calloc(ncap, sizeof(size_t));
	if (!n) {
		fprintf(stderr, "tracer-merge: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < htcap; i++) {
		if (!ht[i])
			continue;
		size_t j = hash_rec(&recs[ht[i] - 1]) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = ht[i];
	}
	free(ht);
	ht = n;
	htcap = ncap;
}

/* Unified id of a record (added if new). Takes ownership of r->arr/r->s. */
static uint64_t unify(struct rec *r)
{
	if ((nrecs + 1) * 2 > htcap)
		ht_grow();
	size_t j = hash_rec(r) & (htcap - 1);
	while (ht[j]) {
		struct rec *x = &recs[ht[j] - 1];
		if (eq_rec(x, r)) {
			free(r->arr);
			free(r->s);
			return x->gid;
		}
		j = (j + 1) & (htcap - 1);
	}
	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 1024;
		recs = xrealloc(recs, caprecs * sizeof(*recs));
	}
	r->gid = has_id[r->cls] ? next_gid[r->cls]++ : 0;
	recs[nrecs++] = *r;
	ht[j] = nrecs;
	return r->gid;
}

static void map_set(int cls, uint64_t lid, uint64_t gid)
{
	struct map *m = &cur_map[cls];
	if (lid >= m->n) {
		size_t n = lid + 1 > m->n * 2 ? lid + 1 : m->n * 2;
		m->v = xrealloc(m->v, n * sizeof(uint64_t));
		for (size_t i = m->n; i < n; i++)
			m->v[i] = UNDEF32;
		m->n = n;
	}
	m->v[lid] = gid;
}

static uint64_t M(int cls, uint64_t lid)
{
	if (lid == UNDEF32 || lid == (uint64_t)-1)
		return UNDEF32;
	if (lid < cur_map[cls].n && cur_map[cls].v[lid] != UNDEF32)
		return cur_map[cls].v[lid];
	return UNDEF32;
}

static int cur_rank;

#define REC(c) struct rec r; memset(&r, 0, sizeof(r)); r.cls = (c)
#define CB(name, ...) static OTF2_CallbackCode cb_##name(void *ud, __VA_ARGS__)

CB(string, OTF2_StringRef self, const char *s)
{
	REC(C_STR);
	r.s = strdup(s);
	map_set(C_STR, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

static uint64_t clk_res, clk_min = UINT64_MAX, clk_max, clk_real = UINT64_MAX;
CB(clock, uint64_t res, uint64_t off, uint64_t len, uint64_t real)
{
	clk_res = res;
	if (off < clk_min) {
		clk_min = off;
		clk_real = real;
	}
	if (off + len > clk_max)
		clk_max = off + len;
	return OTF2_CALLBACK_SUCCESS;
}

CB(paradigm, OTF2_Paradigm p, OTF2_StringRef name, OTF2_ParadigmClass c)
{
	REC(C_PARADIGM);
	r.f[0] = p;
	r.f[1] = M(C_STR, name);
	r.f[2] = c;
	unify(&r);
	return OTF2_CALLBACK_SUCCESS;
}

CB(stn, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cn, OTF2_SystemTreeNodeRef parent)
{
	REC(C_STN);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_STR, cn);
	r.f[2] = M(C_STN, parent);
	map_set(C_STN, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(stnd, OTF2_SystemTreeNodeRef n, OTF2_SystemTreeDomain d)
{
	REC(C_STND);
	r.f[0] = M(C_STN, n);
	r.f[1] = d;
	unify(&r);
	return OTF2_CALLBACK_SUCCESS;
}

CB(lg, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType t, OTF2_SystemTreeNodeRef p,
   OTF2_LocationGroupRef creating)
{
	REC(C_LG);
	r.f[0] = M(C_STR, name);
	r.f[1] = t;
	r.f[2] = M(C_STN, p);
	r.f[3] = M(C_LG, creating);
	map_set(C_LG, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

/* Locations: the owner rank's definition wins (other ranks only name the
 * master locations of their peers). */
struct loc {
	uint64_t id, name, type, nev, lg;
	int owner, rank_seen;
};
static struct loc *locs;
static size_t nlocs;

CB(loc, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType t, uint64_t nev, OTF2_LocationGroupRef lg)
{
	int owner = (int)(self >> 32) == cur_rank;
	for (size_t i = 0; i < nlocs; i++) {
		if (locs[i].id != self)
			continue;
		if (owner && !locs[i].owner) {
			locs[i] = (struct loc){ self, M(C_STR, name), t, nev, M(C_LG, lg), 1, cur_rank };
		}
		return OTF2_CALLBACK_SUCCESS;
	}
	locs = xrealloc(locs, (nlocs + 1) * sizeof(*locs));
	locs[nlocs++] = (struct loc){ self, M(C_STR, name), t, nev, M(C_LG, lg), owner, cur_rank };
	return OTF2_CALLBACK_SUCCESS;
}

CB(region, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef cn, OTF2_StringRef desc, OTF2_RegionRole role,
   OTF2_Paradigm p, OTF2_RegionFlag fl, OTF2_StringRef file, uint32_t b, uint32_t e)
{
	REC(C_REGION);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_STR, cn);
	r.f[2] = M(C_STR, desc);
	r.f[3] = role;
	r.f[4] = p;
	r.f[5] = fl;
	r.f[6] = M(C_STR, file);
	r.f[7] = b;
	r.f[8] = e;
	map_set(C_REGION, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(attr, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef desc, OTF2_Type t)
{
	REC(C_ATTR);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_STR, desc);
	r.f[2] = t;
	map_set(C_ATTR, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(param, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType t)
{
	REC(C_PARAM);
	r.f[0] = M(C_STR, name);
	r.f[1] = t;
	map_set(C_PARAM, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

/* Group(COMM_LOCATIONS) is one per paradigm: the union of every rank's
 * members; COMM_GROUP members are indices into it and are translated. */
struct ulocs {
	int paradigm;
	uint64_t gid;
	uint64_t *m;         /* union members (location ids) */
	uint32_t n;
	uint64_t *cur;       /* the current rank's own list */
	uint32_t ncur;
};
static struct ulocs ul[32];
static int nul;

static struct ulocs *ulocs_of(int paradigm)
{
	for (int i = 0; i < nul; i++)
		if (ul[i].paradigm == paradigm)
			return &ul[i];
	return NULL;
}

static uint64_t ulocs_index(struct ulocs *u, uint64_t loc)
{
	for (uint32_t i = 0; i < u->n; i++)
		if (u->m[i] == loc)
			return i;
	u->m = xrealloc(u->m, (u->n + 1) * sizeof(uint64_t));
	u->m[u->n] = loc;
	return u->n++;
}

CB(group, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType t, OTF2_Paradigm p, OTF2_GroupFlag fl,
   uint32_t n, const uint64_t *m)
{
	REC(C_GROUP);
	r.f[0] = M(C_STR, name);
	r.f[1] = t;
	r.f[2] = p;
	r.f[3] = fl;
	if (t == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
		struct ulocs *u = ulocs_of(p);
		if (!u && nul < 32) {
			u = &ul[nul++];
			u->paradigm = p;
			r.sub = 100 + p;   /* placeholder, members written at the end */
			u->gid = unify(&r);
		}
		if (!u)
			return OTF2_CALLBACK_SUCCESS;
		free(u->cur);
		u->cur = xrealloc(NULL, sizeof(uint64_t) * n);
		u->ncur = n;
		for (uint32_t i = 0; i < n; i++) {
			u->cur[i] = m[i];
			ulocs_index(u, m[i]);
		}
		map_set(C_GROUP, self, u->gid);
		return OTF2_CALLBACK_SUCCESS;
	}
	struct ulocs *u = t == OTF2_GROUP_TYPE_COMM_GROUP ? ulocs_of(p) : NULL;
	r.narr = n;
	r.arr = xrealloc(NULL, sizeof(uint64_t) * n);
	for (uint32_t i = 0; i < n; i++) {
		if (t == OTF2_GROUP_TYPE_REGIONS)
			r.arr[i] = M(C_REGION, m[i]);
		else if (u && m[i] < u->ncur)
			r.arr[i] = ulocs_index(u, u->cur[m[i]]);
		else
			r.arr[i] = m[i];   /* ranks / location ids: global already */
	}
	map_set(C_GROUP, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(comm, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef g, OTF2_CommRef parent, OTF2_CommFlag fl)
{
	REC(C_COMM);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_GROUP, g);
	r.f[2] = M(C_COMM, parent);
	r.f[3] = fl;
	map_set(C_COMM, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(intercomm, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef a, OTF2_GroupRef b, OTF2_CommRef common,
   OTF2_CommFlag fl)
{
	REC(C_COMM);
	r.sub = 1;
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_GROUP, a);
	r.f[2] = M(C_GROUP, b);
	r.f[3] = M(C_COMM, common);
	r.f[4] = fl;
	map_set(C_COMM, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(rmawin, OTF2_RmaWinRef self, OTF2_StringRef name, OTF2_CommRef c, OTF2_RmaWinFlag fl)
{
	REC(C_RMAWIN);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_COMM, c);
	r.f[2] = fl;
	map_set(C_RMAWIN, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(cartdim, OTF2_CartDimensionRef self, OTF2_StringRef name, uint32_t size, OTF2_CartPeriodicity per)
{
	REC(C_CARTDIM);
	r.f[0] = M(C_STR, name);
	r.f[1] = size;
	r.f[2] = per;
	map_set(C_CARTDIM, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(carttopo, OTF2_CartTopologyRef self, OTF2_StringRef name, OTF2_CommRef c, uint8_t nd, const OTF2_CartDimensionRef *d)
{
	REC(C_CARTTOPO);
	r.f[0] = M(C_STR, name);
	r.f[1] = M(C_COMM, c);
	r.narr = nd;
	r.arr = xrealloc(NULL, sizeof(uint64_t) * nd);
	for (int i = 0; i < nd; i++)
		r.arr[i] = M(C_CARTDIM, d[i]);
	map_set(C_CARTTOPO, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(cartcoord, OTF2_CartTopologyRef topo, uint32_t rank, uint8_t nd, const uint32_t *c)
{
	REC(C_CARTCOORD);
	r.f[0] = M(C_CARTTOPO, topo);
	r.f[1] = rank;
	r.narr = nd;
	r.arr = xrealloc(NULL, sizeof(uint64_t) * nd);
	for (int i = 0; i < nd; i++)
		r.arr[i] = c[i];
	unify(&r);
	return OTF2_CALLBACK_SUCCESS;
}

CB(scl, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t line)
{
	REC(C_SCL);
	r.f[0] = M(C_STR, file);
	r.f[1] = line;
	map_set(C_SCL, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(cc, OTF2_CallingContextRef self, OTF2_RegionRef reg, OTF2_SourceCodeLocationRef scl, OTF2_CallingContextRef parent)
{
	REC(C_CC);
	r.f[0] = M(C_REGION, reg);
	r.f[1] = M(C_SCL, scl);
	r.f[2] = M(C_CC, parent);
	map_set(C_CC, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(ig, OTF2_InterruptGeneratorRef self, OTF2_StringRef name, OTF2_InterruptGeneratorMode mode, OTF2_Base base,
   int64_t exp, uint64_t period)
{
	REC(C_IG);
	r.f[0] = M(C_STR, name);
	r.f[1] = mode;
	r.f[2] = base;
	r.f[3] = (uint64_t)exp;
	r.f[4] = period;
	map_set(C_IG, self, unify(&r));
	return OTF2_CALLBACK_SUCCESS;
}

CB(locprop, OTF2_LocationRef loc, OTF2_StringRef name, OTF2_Type t, OTF2_AttributeValue v)
{
	if ((int)(loc >> 32) != cur_rank)
		return OTF2_CALLBACK_SUCCESS;
	REC(C_LOCPROP);
	r.f[0] = loc;
	r.f[1] = M(C_STR, name);
	r.f[2] = t;
	r.f[3] = t == OTF2_TYPE_STRING ? M(C_STR, v.stringRef) : v.uint64;
	unify(&r);
	return OTF2_CALLBACK_SUCCESS;
}

CB(lgprop, OTF2_LocationGroupRef lg, OTF2_StringRef name, OTF2_Type t, OTF2_AttributeValue v)
{
	REC(C_LGPROP);
	r.f[0] = M(C_LG, lg);
	r.f[1] = M(C_STR, name);
	r.f[2] = t;
	r.f[3] = t == OTF2_TYPE_STRING ? M(C_STR, v.stringRef) : v.uint64;
	unify(&r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_unknown(void *ud)
{
	static int once;
	if (!once++)
		fprintf(stderr, "tracer-merge: warning: a definition kind this tool does not merge was dropped\n");
	return OTF2_CALLBACK_SUCCESS;
}

/* ---- per rank ---------------------------------------------------------------------------- */

struct rank {
	int r;
	struct map maps[C_N];
	uint64_t *locs;          /* owned locations */
	size_t nlocs;
	struct { uint64_t loc, t; int64_t off; double sd; } *co;
	size_t nco;
};
static struct rank *ranks;
static int nranks;
static uint64_t evt_chunk = 1 << 20, def_chunk = 4 << 20;
static const char *dir;

static uint64_t co_loc;
static struct rank *co_rank;
static OTF2_CallbackCode cb_clock_offset(void *ud, OTF2_TimeStamp t, int64_t off, double sd)
{
	struct rank *rk = co_rank;
	rk->co = xrealloc(rk->co, (rk->nco + 1) * sizeof(*rk->co));
	rk->co[rk->nco].loc = co_loc;
	rk->co[rk->nco].t = t;
	rk->co[rk->nco].off = off;
	rk->co[rk->nco].sd = sd;
	rk->nco++;
	return OTF2_CALLBACK_SUCCESS;
}

static int read_rank(struct rank *rk)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/rank%d.otf2", dir, rk->r);
	OTF2_Reader *rd = OTF2_Reader_Open(path);
	if (!rd)
		return -1;
	OTF2_Reader_SetSerialCollectiveCallbacks(rd);
	uint64_t ec, dc;
	if (OTF2_Reader_GetChunkSize(rd, &ec, &dc) == OTF2_SUCCESS && rk->r == ranks[0].r) {
		evt_chunk = ec;
		def_chunk = dc;
	}
	OTF2_GlobalDefReader *gr = OTF2_Reader_GetGlobalDefReader(rd);
	OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReaderCallbacks_SetUnknownCallback(cb, cb_unknown);
	OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, cb_string);
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, cb_clock);
	OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(cb, cb_paradigm);
	OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, cb_stn);
	OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeDomainCallback(cb, cb_stnd);
	OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, cb_lg);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, cb_loc);
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, cb_region);
	OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, cb_attr);
	OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, cb_param);
	OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, cb_group);
	OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, cb_comm);
	OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, cb_intercomm);
	OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, cb_rmawin);
	OTF2_GlobalDefReaderCallbacks_SetCartDimensionCallback(cb, cb_cartdim);
	OTF2_GlobalDefReaderCallbacks_SetCartTopologyCallback(cb, cb_carttopo);
	OTF2_GlobalDefReaderCallbacks_SetCartCoordinateCallback(cb, cb_cartcoord);
	OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(cb, cb_scl);
	OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, cb_cc);
	OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(cb, cb_ig);
	OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cb, cb_locprop);
	OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cb, cb_lgprop);
	OTF2_Reader_RegisterGlobalDefCallbacks(rd, gr, cb, NULL);
	OTF2_GlobalDefReaderCallbacks_Delete(cb);
	cur_rank = rk->r;
	memset(cur_map, 0, sizeof(cur_map));
	for (int i = 0; i < nul; i++)
		ul[i].ncur = 0;
	size_t loc0 = nlocs;
	uint64_t n;
	OTF2_ErrorCode e = OTF2_Reader_ReadAllGlobalDefinitions(rd, gr, &n);
	memcpy(rk->maps, cur_map, sizeof(cur_map));
	(void)loc0;
	for (size_t i = 0; i < nlocs; i++) {
		if (locs[i].owner && locs[i].rank_seen == rk->r) {
			rk->locs = xrealloc(rk->locs, (rk->nlocs + 1) * sizeof(uint64_t));
			rk->locs[rk->nlocs++] = locs[i].id;
		}
	}
	/* clock offsets of the rank's locations */
	OTF2_DefReaderCallbacks *dcb = OTF2_DefReaderCallbacks_New();
	OTF2_DefReaderCallbacks_SetClockOffsetCallback(dcb, cb_clock_offset);
	co_rank = rk;
	for (size_t i = 0; i < rk->nlocs; i++) {
		char lp[4200];
		snprintf(lp, sizeof(lp), "%s/rank%d/%llu.def", dir, rk->r, (unsigned long long)rk->locs[i]);
		if (access(lp, R_OK))
			continue;
		OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, rk->locs[i]);
		if (!dr)
			continue;
		co_loc = rk->locs[i];
		OTF2_Reader_RegisterDefCallbacks(rd, dr, dcb, NULL);
		uint64_t m;
		OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &m);
		OTF2_Reader_CloseDefReader(rd, dr);
	}
	OTF2_DefReaderCallbacks_Delete(dcb);
	OTF2_Reader_Close(rd);
	return e == OTF2_SUCCESS ? 0 : -1;
}

/* ---- writing ------------------------------------------------------------------------------- */

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *c, bool final)
{
	return OTF2_FLUSH;
}
static OTF2_FlushCallbacks flush_cb = { pre_flush, NULL };

static void write_global(OTF2_GlobalDefWriter *w)
{
	OTF2_GlobalDefWriter_WriteClockProperties(w, clk_res ? clk_res : 1000000000, clk_min == UINT64_MAX ? 0 : clk_min,
						  clk_max > clk_min ? clk_max - clk_min : 0, clk_real);
	static const int order[] = { C_STR, C_PARADIGM, C_STN, C_STND, C_LG, C_LOC, C_REGION, C_ATTR, C_PARAM, C_GROUP,
				     C_COMM, C_RMAWIN, C_CARTDIM, C_CARTTOPO, C_CARTCOORD, C_SCL, C_CC, C_IG,
				     C_LOCPROP, C_LGPROP };
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		int c = order[k];
		if (c == C_LOC) {
			for (size_t i = 0; i < nlocs; i++)
				OTF2_GlobalDefWriter_WriteLocation(w, locs[i].id, (OTF2_StringRef)locs[i].name,
								   (OTF2_LocationType)locs[i].type, locs[i].nev,
								   (OTF2_LocationGroupRef)locs[i].lg);
			continue;
		}
		for (size_t i = 0; i < nrecs; i++) {
			struct rec *r = &recs[i];
			if (r->cls != c)
				continue;
			uint32_t g = (uint32_t)r->gid;
			uint64_t *f = r->f;
			switch (c) {
			case C_STR: OTF2_GlobalDefWriter_WriteString(w, g, r->s); break;
			case C_PARADIGM: OTF2_GlobalDefWriter_WriteParadigm(w, f[0], f[1], f[2]); break;
			case C_STN: OTF2_GlobalDefWriter_WriteSystemTreeNode(w, g, f[0], f[1], f[2]); break;
			case C_STND: OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(w, f[0], f[1]); break;
			case C_LG: OTF2_GlobalDefWriter_WriteLocationGroup(w, g, f[0], f[1], f[2], f[3]); break;
			case C_REGION:
				OTF2_GlobalDefWriter_WriteRegion(w, g, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
				break;
			case C_ATTR: OTF2_GlobalDefWriter_WriteAttribute(w, g, f[0], f[1], f[2]); break;
			case C_PARAM: OTF2_GlobalDefWriter_WriteParameter(w, g, f[0], f[1]); break;
			case C_GROUP:
				if (r->sub >= 100) {
					struct ulocs *u = ulocs_of(r->sub - 100);
					OTF2_GlobalDefWriter_WriteGroup(w, g, f[0], f[1], f[2], f[3], u->n, u->m);
				} else {
					OTF2_GlobalDefWriter_WriteGroup(w, g, f[0], f[1], f[2], f[3], r->narr, r->arr);
				}
				break;
			case C_COMM:
				if (r->sub)
					OTF2_GlobalDefWriter_WriteInterComm(w, g, f[0], f[1], f[2], f[3], f[4]);
				else
					OTF2_GlobalDefWriter_WriteComm(w, g, f[0], f[1], f[2], f[3]);
				break;
			case C_RMAWIN: OTF2_GlobalDefWriter_WriteRmaWin(w, g, f[0], f[1], f[2]); break;
			case C_CARTDIM: OTF2_GlobalDefWriter_WriteCartDimension(w, g, f[0], f[1], f[2]); break;
			case C_CARTTOPO: {
				uint32_t d[256];
				for (uint32_t j = 0; j < r->narr && j < 256; j++)
					d[j] = (uint32_t)r->arr[j];
				OTF2_GlobalDefWriter_WriteCartTopology(w, g, f[0], f[1], (uint8_t)r->narr, d);
				break;
			}
			case C_CARTCOORD: {
				uint32_t d[256];
				for (uint32_t j = 0; j < r->narr && j < 256; j++)
					d[j] = (uint32_t)r->arr[j];
				OTF2_GlobalDefWriter_WriteCartCoordinate(w, f[0], f[1], (uint8_t)r->narr, d);
				break;
			}
			case C_SCL: OTF2_GlobalDefWriter_WriteSourceCodeLocation(w, g, f[0], f[1]); break;
			case C_CC: OTF2_GlobalDefWriter_WriteCallingContext(w, g, f[0], f[1], f[2]); break;
			case C_IG: OTF2_GlobalDefWriter_WriteInterruptGenerator(w, g, f[0], f[1], f[2], (int64_t)f[3], f[4]); break;
			case C_LOCPROP:
			case C_LGPROP: {
				OTF2_AttributeValue v;
				if (f[2] == OTF2_TYPE_STRING)
					v.stringRef = (OTF2_StringRef)f[3];
				else
					v.uint64 = f[3];
				if (c == C_LOCPROP)
					OTF2_GlobalDefWriter_WriteLocationProperty(w, f[0], f[1], f[2], v);
				else
					OTF2_GlobalDefWriter_WriteLocationGroupProperty(w, f[0], f[1], f[2], v);
				break;
			}
			}
		}
	}
}

static const struct { int cls; OTF2_MappingType mt; } maptypes[] = {
	{ C_STR, OTF2_MAPPING_STRING }, { C_ATTR, OTF2_MAPPING_ATTRIBUTE }, { C_REGION, OTF2_MAPPING_REGION },
	{ C_GROUP, OTF2_MAPPING_GROUP }, { C_COMM, OTF2_MAPPING_COMM }, { C_PARAM, OTF2_MAPPING_PARAMETER },
	{ C_RMAWIN, OTF2_MAPPING_RMA_WIN }, { C_SCL, OTF2_MAPPING_SOURCE_CODE_LOCATION },
	{ C_CC, OTF2_MAPPING_CALLING_CONTEXT }, { C_IG, OTF2_MAPPING_INTERRUPT_GENERATOR },
};

static void write_local(OTF2_Archive *ar, struct rank *rk, uint64_t loc)
{
	OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, loc);
	if (!dw)
		return;
	if (rk) {
		for (size_t k = 0; k < sizeof(maptypes) / sizeof(maptypes[0]); k++) {
			struct map *m = &rk->maps[maptypes[k].cls];
			size_t n = 0;
			for (size_t i = 0; i < m->n; i++)
				n += m->v[i] != UNDEF32;
			if (!n)
				continue;
			OTF2_IdMap *im = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, n);
			for (size_t i = 0; i < m->n; i++)
				if (m->v[i] != UNDEF32)
					OTF2_IdMap_AddIdPair(im, i, m->v[i]);
			OTF2_DefWriter_WriteMappingTable(dw, maptypes[k].mt, im);
			OTF2_IdMap_Free(im);
		}
		for (size_t i = 0; i < rk->nco; i++)
			if (rk->co[i].loc == loc)
				OTF2_DefWriter_WriteClockOffset(dw, rk->co[i].t, rk->co[i].off, rk->co[i].sd);
	}
	OTF2_Archive_CloseDefWriter(ar, dw);
}

static int place(const char *from, const char *to)
{
	if (rename(from, to) == 0)
		return 0;
	fprintf(stderr, "tracer-merge: cannot move %s to %s: %s\n", from, to, strerror(errno));
	return -1;
}

/* Events of a location: hard link of the rank's file (copy if links fail). */
static void link_events(int r, uint64_t loc)
{
	char from[4200], to[4200];
	snprintf(from, sizeof(from), "%s/rank%d/%llu.evt", dir, r, (unsigned long long)loc);
	snprintf(to, sizeof(to), "%s/traces/%llu.evt", dir, (unsigned long long)loc);
	struct stat a, b;
	if (stat(from, &a) == 0 && stat(to, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return;   /* rank<r>/ is the same directory as traces/ */
	unlink(to);
	if (r >= 0 && link(from, to) == 0)
		return;
	int in = r >= 0 ? open(from, O_RDONLY) : -1, out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "tracer-merge: cannot write %s: %s\n", to, strerror(errno));
		if (in >= 0)
			close(in);
		return;
	}
	if (in < 0) {
		/* no events of this location: an empty event file */
		static const unsigned char empty[20] = { 3, 0x42, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1 };
		if (write(out, empty, sizeof(empty)) != (ssize_t)sizeof(empty))
			fprintf(stderr, "tracer-merge: short write on %s\n", to);
	} else {
		char buf[1 << 16];
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
		close(in);
	}
	close(out);
}

static int cmp_rank(const void *a, const void *b)
{
	return ((const struct rank *)a)->r - ((const struct rank *)b)->r;
}

static int exists(const char *fmt, const char *a, int r)
{
	char p[4200];
	snprintf(p, sizeof(p), fmt, a, r);
	return access(p, F_OK) == 0;
}

/* Size of a rank's anchor (written last by the tracer), -1 if missing. */
static long long anchor_size(const char *a, int r)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/rank%d.otf2", a, r);
	return stat(p, &st) ? -1 : (long long)st.st_size;
}

static char lockpath[4200];
static void unlock_merge(void)
{
	if (lockpath[0])
		unlink(lockpath);
}

int main(int argc, char **argv)
{
	int wait_s = 0, want = 0;
	while (argc > 2 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--wait") && argc > 3)
			wait_s = atoi(argv[2]);
		else if (!strcmp(argv[1], "--ranks") && argc > 3)
			want = atoi(argv[2]);
		else
			break;
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: tracer-merge [--wait SECONDS --ranks N] DIR   (DIR holds rank<r>.otf2 archives of one MPI run)\n");
		return 2;
	}
	dir = argv[1];
	/* every anchor present, complete (an anchor is > 64 bytes) and
	 * unchanged for 0.3 s */
	long long last_sum = -1;
	int stable = 0;
	for (int i = 0; want > 0 && i < wait_s * 10; i++) {
		int have = 0;
		long long sum = 0;
		for (int r = 0; r < want; r++) {
			long long sz = anchor_size(dir, r);
			have += sz > 64;
			sum += sz;
		}
		stable = have == want && sum == last_sum ? stable + 1 : 0;
		last_sum = sum;
		if (stable >= 3)
			break;
		usleep(100000);
	}
	snprintf(lockpath, sizeof(lockpath), "%s/.tracer-merge.lock", dir);
	for (int i = 0;; i++) {
		int fd = open(lockpath, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd >= 0) {
			close(fd);
			atexit(unlock_merge);
			break;
		}
		if (errno != EEXIST || i > 600) {
			fprintf(stderr, "tracer-merge: %s: %s\n", lockpath, strerror(errno));
			lockpath[0] = 0;
			return 1;
		}
		usleep(100000);   /* another merge is running: wait for it */
	}
	if (exists("%s/traces.otf2%.0d", dir, 0)) {
		printf("tracer-merge: %s/traces.otf2 exists already\n", dir);
		return 0;
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "tracer-merge: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		int r;
		char tail[8];
		if (sscanf(de->d_name, "rank%d.otf%1s", &r, tail) == 2 && !strcmp(tail, "2")) {
			ranks = xrealloc(ranks, (nranks + 1) * sizeof(*ranks));
			memset(&ranks[nranks], 0, sizeof(*ranks));
			ranks[nranks++].r = r;
		}
	}
	closedir(d);
	if (!nranks) {
		fprintf(stderr, "tracer-merge: no rank<r>.otf2 archive in %s\n", dir);
		return 1;
	}
	qsort(ranks, nranks, sizeof(*ranks), cmp_rank);
	for (int i = 0; i < nranks; i++)
		if (read_rank(&ranks[i]))
			fprintf(stderr, "tracer-merge: warning: rank %d's definitions incomplete\n", ranks[i].r);

	/* new archive in a temporary directory, then moved into place */
	char tmp[4200], p1[4300], p2[4300];
	snprintf(tmp, sizeof(tmp), "%s/.tracer-merge.%d", dir, (int)getpid());
	OTF2_Archive *ar = OTF2_Archive_Open(tmp, "traces", OTF2_FILEMODE_WRITE, evt_chunk, def_chunk,
					     OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!ar) {
		fprintf(stderr, "tracer-merge: cannot create %s\n", tmp);
		return 1;
	}
	OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(ar);
	OTF2_Archive_SetCreator(ar, "tracer-merge (libtracer.so partial MPI run)");
	OTF2_Archive_OpenDefFiles(ar);
	for (size_t i = 0; i < nlocs; i++) {
		struct rank *rk = NULL;
		for (int k = 0; k < nranks; k++)
			if (locs[i].owner && ranks[k].r == locs[i].rank_seen)
				rk = &ranks[k];
		write_local(ar, rk, locs[i].id);
	}
	OTF2_Archive_CloseDefFiles(ar);
	OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
	write_global(gw);
	OTF2_Archive_CloseGlobalDefWriter(ar, gw);
	if (OTF2_Archive_Close(ar) != OTF2_SUCCESS) {
		fprintf(stderr, "tracer-merge: writing %s failed\n", tmp);
		return 1;
	}
	snprintf(p1, sizeof(p1), "%s/traces", dir);
	mkdir(p1, 0755);
	for (size_t i = 0; i < nlocs; i++) {
		snprintf(p1, sizeof(p1), "%s/traces/%llu.def", tmp, (unsigned long long)locs[i].id);
		snprintf(p2, sizeof(p2), "%s/traces/%llu.def", dir, (unsigned long long)locs[i].id);
		place(p1, p2);
		link_events(locs[i].owner ? locs[i].rank_seen : -1, locs[i].id);
	}
	snprintf(p1, sizeof(p1), "%s/traces.def", tmp);
	snprintf(p2, sizeof(p2), "%s/traces.def", dir);
	int bad = place(p1, p2);
	snprintf(p1, sizeof(p1), "%s/traces.otf2", tmp);
	snprintf(p2, sizeof(p2), "%s/traces.otf2", dir);
	bad |= place(p1, p2);
	snprintf(p1, sizeof(p1), "%s/traces", tmp);
	rmdir(p1);
	rmdir(tmp);
	if (bad)
		return 1;
	int owned = 0;
	for (size_t i = 0; i < nlocs; i++)
		owned += locs[i].owner;
	printf("tracer-merge: %s/traces.otf2: %d ranks, %d locations (%d without events)\n", dir, nranks,
	       (int)nlocs, (int)nlocs - owned);
	return 0;
}
