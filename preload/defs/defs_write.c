/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_write.c - a definition set written as OTF2 global definitions
 * (clock properties, strings, paradigms, system tree, location groups and
 * locations, then every class in dependency order) and the mapping tables
 * of local definition files. No process state: the registry (defs_local.c)
 * passes its own set, the unification a unified one. Callers serialise
 * (registry lock, crash path, one-threaded tool): static scratch, so one
 * process needs no malloc.
 */
#include <stdlib.h>
#include <string.h>
#include "defset.h"
#include "tr_config.h"   /* (TR_BIG_BSS) */

#define W(call) do { otf2w_status _s = (call); if (_s != OTF2W_OK && !err) err = _s; } while (0)

/* ---- location ids of a unified archive ----
 * A process's location ids are (rank << 32 | thread index): unique, but
 * readers that take a rank number for a location id (ViTE, when it cannot
 * use a COMM_GROUP) need 0, 1, 2, ... So a unified archive numbers its
 * locations sequentially: rank-major (the processes in set order, which is
 * rank order), threads in id order, then the foreign locations (ranks not in
 * the archive). Every location reference written for it goes through
 * out_loc; its event and local definition files are named by that id. */
static const struct defset *tr_gid_set;   /* the unified set being written (NULL: ids as they are) */
static uint32_t tr_nforeign;
static uint64_t tr_foreign[4096] TR_BIG_BSS;

/* Position of location id in the unified numbering: the processes'
 * locations, then (foreign) the foreign ones of the set being written. */
static int find_gid(const struct defset *s, uint64_t id, int foreign, uint64_t *out)
{
	uint64_t g = 0;
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++, g++)
			if (s->procs[i].locs[k].id == id) {
				*out = g;
				return 1;
			}
	for (uint32_t j = 0; foreign && j < tr_nforeign; j++, g++)
		if (tr_foreign[j] == id) {
			*out = g;
			return 1;
		}
	return 0;
}

static uint64_t set_gid(const struct defset *s, uint64_t id)
{
	uint64_t g;
	return find_gid(s, id, 1, &g) ? g : id;
}

uint64_t tr_ds_location_gid(const struct defset *s, uint64_t id)
{
	uint64_t g;
	return find_gid(s, id, 0, &g) ? g : id;
}

static uint64_t out_loc(const struct defset *s, uint64_t id)
{
	return s == tr_gid_set && id != OTF2W_UNDEFINED_LOCATION ? set_gid(s, id) : id;
}

/* System tree node of a host (String id): nodes are numbered 1.. in the
 * order hosts first appear among the set's processes (tr_ds_write_set). */
static uint32_t host_node(const struct defset *s, uint64_t host)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t j = 0;
		while (j < i && s->procs[j].host != s->procs[i].host)
			j++;
		if (j < i)
			continue;
		if (s->procs[i].host == host)
			return 1 + k;
		k++;
	}
	return UNDEF;
}

/* The generated writer of the classes stored as their record's arguments
 * (preload/defs/gen_defs.py from format/records.tab). */
#define OUT_LOC(x) out_loc(s, (x))
#define OWN_GROUP(x) ((x) == UNDEF ? own_group : (uint32_t)(x))
#define TR_DEFS_GEN_WRITE
#include "defs_gen.h"

static otf2w_status write_def(otf2w_gdef_writer *g, const struct defset *s, const struct def *d,
			      uint32_t own_group)
{
	otf2w_status err = OTF2W_OK;
	const uint64_t *v = d->v;
	uint32_t id = d->id;
	uint32_t a32[256];

	if (write_record(g, d->cls, id, v, s, own_group, &err))
		return err;
	switch (d->cls) {
	case TR_DEF_GROUP:
		if (s == tr_gid_set && (v[1] == OTF2W_GROUP_LOCATIONS || v[1] == OTF2W_GROUP_COMM_LOCATIONS)) {
			uint64_t *m = otf2w_sys.malloc((v[4] ? v[4] : 1) * sizeof(uint64_t));
			if (!m)
				return OTF2W_E_NO_MEMORY;
			for (uint64_t i = 0; i < v[4]; i++)
				m[i] = out_loc(s, v[5 + i]);
			W(otf2w_gdef_group(g, id, (uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2], (uint32_t)v[3],
					   (uint32_t)v[4], m));
			otf2w_sys.free(m);
			break;
		}
		W(otf2w_gdef_group(g, id, (uint32_t)v[0], (uint8_t)v[1], (uint8_t)v[2], (uint32_t)v[3],
				   (uint32_t)v[4], v + 5));
		break;
	case TR_DEF_METRIC:
		for (uint32_t i = 0; i < v[2] && i < 255; i++)
			a32[i] = (uint32_t)v[3 + i];
		W(otf2w_gdef_metric_class(g, id, (uint8_t)v[2], a32, (uint8_t)v[0], (uint8_t)v[1]));
		break;
	case TR_DEF_IO_PARADIGM: {
		uint8_t prop = 0 /* VERSION */, type = (uint8_t)v[6];
		W(otf2w_gdef_io_paradigm(g, (uint8_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint8_t)v[3],
					 (uint32_t)v[4], (uint8_t)v[5], &prop, &type, &v[7]));
		break;
	}
	case TR_DEF_IO_FILE:
		if (v[0])
			W(otf2w_gdef_io_directory(g, id, (uint32_t)v[1], host_node(s, v[2])));
		else
			W(otf2w_gdef_io_regular_file(g, id, (uint32_t)v[1], host_node(s, v[2])));
		break;
	default:
		break;
	}
	return err;
}

/* Locations referenced by groups/recorders/properties but owned by no
 * process of the set (a rank that is not in this archive): defined as empty
 * locations of a location group per rank, so every reference resolves.
 * No malloc (crash path): fixed arrays. */
static int set_has_loc(const struct defset *s, uint64_t id)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++)
			if (s->procs[i].locs[k].id == id)
				return 1;
	return 0;
}

static void foreign_add(uint32_t *n, const struct defset *s, uint64_t id)
{
	if (id == OTF2W_UNDEFINED_LOCATION || set_has_loc(s, id))
		return;
	for (uint32_t i = 0; i < *n; i++)
		if (tr_foreign[i] == id)
			return;
	if (*n < sizeof(tr_foreign) / sizeof(tr_foreign[0]))
		tr_foreign[(*n)++] = id;
}

static otf2w_status write_foreign(otf2w_gdef_writer *g, const struct defset *s)
{
	otf2w_status err = OTF2W_OK;
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n[TR_DEF_GROUP]; i++) {
		/* the owner's view: thread comm placeholders completed (crash path) */
		const struct def *d = tr_ds_view(s, s->items[TR_DEF_GROUP][i]);
		if (d->len < 5 || (d->v[1] != OTF2W_GROUP_LOCATIONS && d->v[1] != OTF2W_GROUP_COMM_LOCATIONS))
			continue;
		for (uint32_t m = 5; m < d->len; m++)
			foreign_add(&n, s, d->v[m]);
	}
	for (uint32_t i = 0; i < s->n[TR_DEF_METRIC_CLASS_RECORDER]; i++)
		foreign_add(&n, s, s->items[TR_DEF_METRIC_CLASS_RECORDER][i]->v[1]);
	for (uint32_t i = 0; i < s->n[TR_DEF_LOCATION_PROPERTY]; i++)
		foreign_add(&n, s, s->items[TR_DEF_LOCATION_PROPERTY][i]->v[0]);
	uint32_t sg = tr_ds_sid_find(s, "MPI Rank (not in this archive)");
	uint32_t sm = tr_ds_sid_find(s, "Master thread"), st = tr_ds_sid_find(s, "Thread");
	uint32_t group = s->nprocs;
	uint64_t last_rank = UINT64_MAX;
	/* sort by id so each rank's locations are together */
	for (uint32_t a = 1; a < n; a++) {
		uint64_t x = tr_foreign[a];
		uint32_t b = a;
		while (b > 0 && tr_foreign[b - 1] > x) {
			tr_foreign[b] = tr_foreign[b - 1];
			b--;
		}
		tr_foreign[b] = x;
	}
	tr_nforeign = n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t rank = tr_foreign[i] >> 32;
		if (rank != last_rank) {
			if (last_rank != UINT64_MAX)
				group++;
			last_rank = rank;
			W(otf2w_gdef_location_group(g, group, sg, OTF2W_LGROUP_PROCESS, 1, UNDEF));
		}
		W(otf2w_gdef_location(g, out_loc(s, tr_foreign[i]), (tr_foreign[i] & 0xffffffffu) ? st : sm,
				      OTF2W_LOC_CPU_THREAD, 0, group));
	}
	return err;
}

/* Write a whole def set (with its processes) as the global definitions
 * (defset.h). */
otf2w_status tr_ds_write_set(otf2w_gdef_writer *g, const struct defset *s, int renumber, uint64_t fallback_res)
{
	otf2w_status err = OTF2W_OK;
	tr_nforeign = 0;
	tr_gid_set = renumber ? s : NULL;
	uint64_t first = UINT64_MAX, last = 0, res = 0, rt = OTF2W_UNDEFINED_TIMESTAMP;

	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct tr_procinfo *p = &s->procs[i];
		if (p->t_first < first) {
			first = p->t_first;
			rt = p->realtime;
			res = p->resolution;
		}
		if (p->t_last > last)
			last = p->t_last;
	}
	if (first == UINT64_MAX)
		first = 0;
	if (!res)
		res = fallback_res;
	W(otf2w_gdef_clock_properties(g, res, first, last > first ? last - first : 0, rt));

	for (uint32_t i = 0; i < s->n[TR_DEF_STRING]; i++)
		W(otf2w_gdef_string(g, i, (const char *)s->items[TR_DEF_STRING][i]->v));

	for (int p = 0; p < TR_NPARADIGMS; p++)
		if (s->paradigm_name[p] != UNDEF)
			W(otf2w_gdef_paradigm(g, (uint8_t)p, s->paradigm_name[p], tr_ds_paradigm_class((uint8_t)p)));

	/* System tree: machine -> one node per distinct host name. */
	uint32_t machine = 0, nnodes = 0;
	static uint32_t hosts[65536] TR_BIG_BSS;   /* callers are serialised (registry lock or crash path) */
	W(otf2w_gdef_system_tree_node(g, machine, tr_ds_sid_find(s, "machine"), tr_ds_sid_find(s, "machine"), UNDEF));
	W(otf2w_gdef_system_tree_node_domain(g, machine, OTF2W_STD_MACHINE));
	/* no malloc for one process: the crash path (signal handler) comes here */
	static uint32_t proc_node_one[16];
	uint32_t *proc_node = s->nprocs <= 16 ? proc_node_one
					      : otf2w_sys.calloc(s->nprocs, sizeof(uint32_t));
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t k;
		for (k = 0; k < nnodes; k++)
			if (hosts[k] == s->procs[i].host)
				break;
		if (k == nnodes && nnodes < sizeof(hosts) / sizeof(hosts[0])) {
			hosts[nnodes++] = s->procs[i].host;
			W(otf2w_gdef_system_tree_node(g, 1 + k, s->procs[i].host, tr_ds_sid_find(s, "node"), machine));
			W(otf2w_gdef_system_tree_node_domain(g, 1 + k, OTF2W_STD_SHARED_MEMORY));
		}
		if (proc_node)
			proc_node[i] = 1 + (k < nnodes ? k : 0);
	}
	for (uint32_t i = 0; i < s->nprocs; i++) {
		uint32_t creator = UNDEF;   /* the process that created it, when in the set */
		for (uint32_t j = 0; s->procs[i].creator >= 0 && j < s->nprocs; j++)
			creator = j != i && s->procs[j].rank == s->procs[i].creator ? j : creator;
		W(otf2w_gdef_location_group(g, i, s->procs[i].gname, OTF2W_LGROUP_PROCESS,
					    proc_node ? proc_node[i] : 1, creator));
	}
	if (proc_node != proc_node_one)
		otf2w_sys.free(proc_node);
	for (uint32_t i = 0; i < s->nprocs; i++)
		for (uint32_t k = 0; k < s->procs[i].nlocs; k++)
			W(otf2w_gdef_location(g, out_loc(s, s->procs[i].locs[k].id), s->procs[i].locs[k].name,
					      OTF2W_LOC_CPU_THREAD, s->procs[i].locs[k].nevents, i));
	W(write_foreign(g, s));

	for (size_t o = 0; o < tr_ds_norder; o++) {
		int c = tr_ds_order[o];
		for (uint32_t i = 0; i < s->n[c]; i++)
			W(write_def(g, s, tr_ds_view(s, s->items[c][i]), 0));
	}
	tr_gid_set = NULL;
	return err;
}

/* ---- mapping tables ---- */

static const int tr_map_type[TR_DEF_NCLASSES] = {
	[TR_DEF_STRING] = OTF2W_MAP_STRING + 1, [TR_DEF_ATTRIBUTE] = OTF2W_MAP_ATTRIBUTE + 1,
	[TR_DEF_REGION] = OTF2W_MAP_REGION + 1, [TR_DEF_GROUP] = OTF2W_MAP_GROUP + 1,
	[TR_DEF_METRIC] = OTF2W_MAP_METRIC + 1, [TR_DEF_COMM] = OTF2W_MAP_COMM + 1,
	[TR_DEF_PARAMETER] = OTF2W_MAP_PARAMETER + 1, [TR_DEF_RMA_WIN] = OTF2W_MAP_RMA_WIN + 1,
	[TR_DEF_SOURCE_CODE_LOCATION] = OTF2W_MAP_SOURCE_CODE_LOCATION + 1,
	[TR_DEF_CALLING_CONTEXT] = OTF2W_MAP_CALLING_CONTEXT + 1,
	[TR_DEF_INTERRUPT_GENERATOR] = OTF2W_MAP_INTERRUPT_GENERATOR + 1,
	[TR_DEF_IO_FILE] = OTF2W_MAP_IO_FILE + 1, [TR_DEF_IO_HANDLE] = OTF2W_MAP_IO_HANDLE + 1,
};

/* Mapping tables (non-identity entries only, never empty) and clock
 * offsets into a local def writer (defset.h). */
void tr_ds_write_maps(otf2w_def_writer *dw, uint32_t *const *maps, const uint32_t *n,
		       const struct tr_coff *co, uint32_t nco)
{
	for (int c = 0; maps && c < TR_DEF_NCLASSES; c++) {
		if (!tr_map_type[c] || !maps[c])
			continue;
		uint32_t nonid = 0;
		for (uint32_t i = 0; i < n[c]; i++)
			nonid += maps[c][i] != i;
		if (!nonid)
			continue;
		otf2w_id_map *m = otf2w_id_map_new(1, nonid);
		if (!m)
			continue;
		for (uint32_t i = 0; i < n[c]; i++)
			if (maps[c][i] != i)
				otf2w_id_map_add(m, i, maps[c][i]);
		otf2w_status st = otf2w_ldef_mapping_table(dw, (uint8_t)(tr_map_type[c] - 1), m);
		if (st)
			tr_ds_error("writing a mapping table: %s", otf2w_status_str(st));
		otf2w_id_map_delete(m);
	}
	for (uint32_t i = 0; i < nco; i++)
		otf2w_ldef_clock_offset(dw, co[i].time, co[i].offset, co[i].stddev);
}

