/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs_local.c - the registry on the process side: this process's
 * locations and time range (from the thread list and the clock), the
 * global definitions of its own archive (also from the crash path), its
 * packed set for MPI unification (tr_defs_pack) and rank<r>.tdefs
 * (tr_defs_save, also from the crash path), and the installed unified set
 * (mapping tables, unified location ids, rank 0's unified definitions).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "defs_int.h"
#include "proctree.h"

/* Unified set (MPI) and local -> unified maps. */
static struct defset *tr_unified;
static uint32_t *tr_umap[TR_DEF_NCLASSES];

/* tr_local with this process as its one process and its clock offsets, for
 * writing or packing (under the lock, or the crash path); local_end undoes it. */
static void local_begin(struct tr_procinfo *p)
{
	tr_local.procs = p;
	tr_local.nprocs = 1;
	tr_local.coffs = tr_coffs;
	tr_local.ncoffs = (uint32_t)tr_ncoffs;
	tr_local.evt_chunk = tr_cfg.chunk_bytes;
	tr_local.def_chunk = TR_DEF_CHUNK_BYTES;
}

static void local_end(void)
{
	tr_local.procs = NULL;
	tr_local.nprocs = 0;
	tr_local.coffs = NULL;
	tr_local.ncoffs = 0;
	tr_local.evt_chunk = tr_local.def_chunk = 0;
}

void tr_defs_fork_child(void)
{
	tr_reg_lock.v = 0;
	tr_ncoffs = 0;
	if (tr_unified) {
		tr_ds_free(tr_unified);
		tr_free(tr_unified);
		tr_unified = NULL;
	}
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		tr_free(tr_umap[c]);
		tr_umap[c] = NULL;
	}
	tr_defs_process_renamed();
}

/* A local time on the reference clock (MPI: rank 0's), as the reference
 * reader corrects it with this process's clock offsets: linear in the
 * interval between two offsets, extrapolated with the first interval's
 * slope before it and the last one's after it; constant with one offset,
 * identity without. */
static uint64_t corrected(uint64_t t)
{
	int n = tr_ncoffs;
	if (n == 0)
		return t;
	int64_t off = tr_coffs[0].offset;
	if (n > 1) {
		int i = 0;
		while (i < n - 2 && t > tr_coffs[i + 1].time)
			i++;
		double slope = (double)(tr_coffs[i + 1].offset - tr_coffs[i].offset) /
			       (double)(tr_coffs[i + 1].time - tr_coffs[i].time);
		double d = t >= tr_coffs[i].time ? (double)(t - tr_coffs[i].time)
						 : -(double)(tr_coffs[i].time - t);
		double x = slope * d;
		off = tr_coffs[i].offset + (int64_t)(x >= 0 ? x + 0.5 : x - 0.5);
	}
	return off < 0 && (uint64_t)-off > t ? 0 : (uint64_t)((int64_t)t + off);
}

/* Fill proc with this process's locations (thread list); nolock: crash path
 * (then the locations array is a static buffer). Its time range covers
 * every event and clock offset written so far, on the reference clock
 * (see corrected; a rank's standalone archive has no offsets: there the
 * range is corrected back by tr_defs_write_global). */
static struct tr_loc tr_crash_locs[16384] TR_BIG_BSS;

static int local_proc(struct tr_procinfo *p, int crash)
{
	uint32_t n = 0, i = 0;
	memset(p, 0, sizeof(*p));
	p->rank = tr_proc.rank >= 0 ? tr_proc.rank : tr_tree.part;   /* process tree: its part */
	p->creator = tr_tree.creator;
	p->pid = (uint32_t)tr_self_pid();
	p->host = tr_sid_host;
	p->gname = tr_sid_gname;
	p->t_first = tr_g.t_start;
	p->resolution = tr_clock_freq();
	for (struct tr_thread *t = tr_g.threads; t; t = t->next)
		n++;
	if (crash) {
		if (n > sizeof(tr_crash_locs) / sizeof(tr_crash_locs[0]))
			n = sizeof(tr_crash_locs) / sizeof(tr_crash_locs[0]);
		p->locs = tr_crash_locs;
	} else {
		p->locs = tr_calloc(n ? n : 1, sizeof(*p->locs));
		if (!p->locs)
			return -1;
	}
	uint64_t last = tr_g.t_start;
	for (struct tr_thread *t = tr_g.threads; t && i < n; t = t->next, i++) {
		p->locs[i].id = t->location;
		p->locs[i].name = t->name_sid;
		p->locs[i].nevents = t->w ? otf2w_evt_writer_count(t->w) : 0;
		uint64_t lt = t->w ? otf2w_evt_writer_last_time(t->w) : 0;
		if (lt > last)
			last = lt;
	}
	p->nlocs = i;
	if (tr_ncoffs > 0 && tr_coffs[tr_ncoffs - 1].time > last)
		last = tr_coffs[tr_ncoffs - 1].time;
	/* sort by location id (insertion sort; few threads) */
	for (uint32_t a = 1; a < p->nlocs; a++) {
		struct tr_loc x = p->locs[a];
		uint32_t b = a;
		while (b > 0 && p->locs[b - 1].id > x.id) {
			p->locs[b] = p->locs[b - 1];
			b--;
		}
		p->locs[b] = x;
	}
	p->t_first = corrected(tr_g.t_start);
	p->t_last = corrected(last);
	p->realtime = tr_clock_realtime_of(tr_g.t_start);
	return 0;
}

/* The local definitions as global definitions (non-MPI, fork child, or a
 * rank's standalone archive). crash: no lock, no malloc (signal handler). */
void tr_defs_write_global(otf2w_gdef_writer *g, int crash)
{
	struct tr_procinfo p;
	otf2w_status st;

	if (!g)
		return;
	if (!crash)
		reg_lock();
	/* no ClockOffset records in this archive: its own clock */
	int ncoffs = tr_ncoffs;
	tr_ncoffs = 0;
	int lp = local_proc(&p, crash);
	tr_ncoffs = ncoffs;
	if (lp == 0) {
		if (!crash)
			tr_defs_complete_thread_comms(&p);
		local_begin(&p);
		st = tr_ds_write_set(g, &tr_local, 0, tr_clock_freq());
		local_end();
		if (!crash)
			tr_free(p.locs);
		if (st != OTF2W_OK && !crash)
			tr_log_error("writing the global definitions: %s", otf2w_status_str(st));
	}
	if (!crash)
		reg_unlock();
}

/* The definitions of each class when the set to unify was packed:
 * anything defined after it (a file opened, a thread started after
 * MPI_Finalize) is not in the unified set (tr_defs_late) */
static uint32_t packed_n[TR_DEF_NCLASSES];

int tr_defs_pack(void **buf, size_t *len)
{
	struct tr_bbuf b = { 0 };
	struct tr_procinfo p;

	*buf = NULL;
	*len = 0;
	/* definitions the modules add at the end (VT class groups, sampled
	 * calling contexts) and those of calls made after MPI_Finalize must
	 * be in the packed (unified) set */
	tr_modules_defs_freeze();
	tr_modules_fini();
	reg_lock();
	if (local_proc(&p, 0)) {
		reg_unlock();
		return -1;
	}
	tr_defs_complete_thread_comms(&p);
	local_begin(&p);
	tr_ds_pack(&b, &tr_local);
	local_end();
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		packed_n[c] = tr_local.n[c];
	reg_unlock();
	tr_free(p.locs);
	if (b.err) {
		tr_free(b.p);
		return -1;
	}
	*buf = b.p;
	*len = b.n;
	return 0;
}

int tr_defs_late(void)
{
	if (!tr_g.unified)
		return 0;
	for (int c = 0; c < TR_DEF_NCLASSES; c++)
		if (tr_defs_count(c) > packed_n[c])
			return 1;
	return 0;
}

int tr_defs_install_unified(const void *buf, size_t len)
{
	struct defset *u = tr_calloc(1, sizeof(*u));
	uint32_t *map[TR_DEF_NCLASSES];
	struct tr_procinfo p;
	int missing;

	if (!u)
		return -1;
	if (tr_ds_unpack(buf, len, u)) {
		tr_free(u);
		tr_log_error("MPI unification: unified definitions unreadable");
		return -1;
	}
	reg_lock();
	if (local_proc(&p, 0) == 0) {
		tr_defs_complete_thread_comms(&p);
		tr_free(p.locs);
	}
	uint32_t gi = 0;
	for (uint32_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].rank == tr_proc.rank && u->procs[i].pid == (uint32_t)tr_self_pid())
			gi = i;
	missing = tr_ds_map_into(&tr_local, u, gi, map);
	if (missing < 0) {
		reg_unlock();
		tr_ds_free(u);
		tr_free(u);
		return -1;
	}
	if (missing > 0)
		tr_log_warn("MPI unification: %d local definitions missing in the unified set", missing);
	if (tr_unified) {
		tr_ds_free(tr_unified);
		tr_free(tr_unified);
	}
	for (int c = 0; c < TR_DEF_NCLASSES; c++) {
		tr_free(tr_umap[c]);
		tr_umap[c] = map[c];
	}
	tr_unified = u;
	tr_g.unified = 1;
	reg_unlock();
	/* this rank's mapping tables */
	tr_archive_unified_installed();
	return 0;
}

/* Without unification: the CALLING_CONTEXT mapping table of
 * tr_def_calling_context_map in every location's local definitions. */
void tr_defs_write_cc_maps(otf2w_archive *a)
{
	reg_lock();
	if (!tr_g.unified && tr_cc_map) {
		for (struct tr_thread *t = tr_g.threads; t; t = t->next) {
			otf2w_def_writer *dw;
			if (otf2w_archive_get_def_writer(a, t->location, &dw) != OTF2W_OK)
				continue;
			uint32_t nonid = 0;
			for (uint32_t i = 0; i < tr_cc_nmap; i++)
				nonid += tr_cc_map[i] != i;
			otf2w_id_map *m = nonid ? otf2w_id_map_new(1, nonid) : NULL;
			if (m) {
				for (uint32_t i = 0; i < tr_cc_nmap; i++)
					if (tr_cc_map[i] != i)
						otf2w_id_map_add(m, i, tr_cc_map[i]);
				if (otf2w_ldef_mapping_table(dw, OTF2W_MAP_CALLING_CONTEXT, m) != OTF2W_OK)
					tr_log_error("writing a calling-context mapping table failed");
				otf2w_id_map_delete(m);
			}
			otf2w_archive_close_def_writer(a, dw);
		}
	}
	reg_unlock();
}

void tr_defs_write_local_to(otf2w_def_writer *dw)
{
	reg_lock();
	tr_ds_write_maps(dw, tr_g.unified ? tr_umap : NULL, tr_local.n, tr_coffs, (uint32_t)tr_ncoffs);
	reg_unlock();
}

/* Totals of the unified set for rank 0's exit line: ranks, locations and
 * events of the whole run. Events are those counted when each rank packed
 * its definitions (MPI_Finalize); for this rank, final_events (counted at
 * exit) replaces its packed count. Returns 0 when there is no unified set. */
int tr_defs_unified_totals(uint64_t final_events, uint32_t *nranks, uint32_t *nlocs, uint64_t *events)
{
	int ok = 0;
	*nranks = *nlocs = 0;
	*events = 0;
	reg_lock();
	if (tr_unified) {
		ok = 1;
		for (uint32_t i = 0; i < tr_unified->nprocs; i++) {
			const struct tr_procinfo *p = &tr_unified->procs[i];
			uint64_t ev = 0;
			for (uint32_t k = 0; k < p->nlocs; k++)
				ev += p->locs[k].nevents;
			if (p->rank == tr_proc.rank)
				ev = final_events > ev ? final_events : ev;
			(*nranks)++;
			*nlocs += p->nlocs;
			*events += ev;
		}
	}
	reg_unlock();
	return ok;
}

/* This process's time range so far on the reference clock (every event
 * and clock offset; call while the event writers exist). */
void tr_defs_local_range(uint64_t *first, uint64_t *last)
{
	struct tr_procinfo p;
	*first = *last = 0;
	reg_lock();
	if (local_proc(&p, 0) == 0) {
		*first = p.t_first;
		*last = p.t_last;
		tr_free(p.locs);
	}
	reg_unlock();
}

/* Widen the time range of a rank of the unified set (its final range,
 * known only when it ended: events after MPI_Finalize). */
void tr_defs_unified_widen(int32_t rank, uint64_t first, uint64_t last)
{
	reg_lock();
	for (uint32_t i = 0; tr_unified && i < tr_unified->nprocs; i++) {
		struct tr_procinfo *p = &tr_unified->procs[i];
		if (p->rank != rank)
			continue;
		if (first < p->t_first)
			p->t_first = first;
		if (last > p->t_last)
			p->t_last = last;
	}
	reg_unlock();
}

/* Id of one of this process's locations in the unified archive, or
 * UINT64_MAX when it is not in it (created after unification). */
uint64_t tr_defs_unified_gid(uint64_t loc)
{
	uint64_t g = UINT64_MAX;
	reg_lock();
	if (tr_unified) {
		for (uint32_t i = 0; i < tr_unified->nprocs; i++) {
			const struct tr_procinfo *p = &tr_unified->procs[i];
			if (p->rank != tr_proc.rank || p->pid != (uint32_t)tr_self_pid())
				continue;
			for (uint32_t k = 0; k < p->nlocs; k++)
				if (p->locs[k].id == loc)
					g = tr_ds_location_gid(tr_unified, loc);
		}
	}
	reg_unlock();
	return g;
}

/* The unified global definitions (rank 0). Returns the unified locations
 * through the callback (for the per-location links). */
void tr_defs_write_unified(otf2w_gdef_writer *g, void (*each_loc)(uint64_t gid, uint64_t loc, int32_t rank, void *),
			   void *ud)
{
	reg_lock();
	if (tr_unified) {
		otf2w_status st = tr_ds_write_set(g, tr_unified, 1, tr_clock_freq());
		if (st)
			tr_log_error("writing the unified definitions: %s", otf2w_status_str(st));
		uint64_t gid = 0;
		for (uint32_t i = 0; each_loc && i < tr_unified->nprocs; i++)
			for (uint32_t k = 0; k < tr_unified->procs[i].nlocs; k++)
				each_loc(gid++, tr_unified->procs[i].locs[k].id, tr_unified->procs[i].rank, ud);
	}
	reg_unlock();
}

/* The packed local definitions into a file (MPI ranks, for tracer-merge).
 * crash: no lock, no malloc (arena prepared by tr_defs_arena_init). */
static uint8_t *tr_arena;
static size_t tr_arena_size;

void tr_defs_arena_init(void)
{
	if (tr_arena)
		return;
	size_t sz = 256u << 20;   /* virtual only: pages are touched on use */
	void *p = tr_mem_space(sz);
	if (p) {
		tr_arena = p;
		tr_arena_size = sz;
	}
}

static int put_file(const void *buf, size_t n, void *ud)
{
	int fd = tr_real.open((const char *)ud, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < n) {
		ssize_t w = tr_real.write(fd, (const char *)buf + off, n - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	return tr_real.close(fd) == 0 && off == n ? 0 : -1;
}

int tr_defs_save_with(int crash, int (*put)(const void *buf, size_t n, void *ud), void *ud)
{
	struct tr_bbuf b = { 0 };
	struct tr_procinfo p;
	int ret = -1;

	if (crash) {
		if (!tr_arena)
			return -1;
		b.p = tr_arena;
		b.cap = tr_arena_size;
		b.fixed = 1;
	} else {
		reg_lock();
	}
	if (local_proc(&p, crash) == 0) {
		local_begin(&p);
		tr_ds_pack(&b, &tr_local);
		local_end();
		if (!crash)
			tr_free(p.locs);
		if (!b.err)
			ret = put(b.p, b.n, ud);
	}
	if (!crash) {
		reg_unlock();
		tr_free(b.p);
	}
	return ret;
}

int tr_defs_save(const char *path, int crash)
{
	return tr_defs_save_with(crash, put_file, (void *)path);
}
