/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * snapshot.c - the sampled calling contexts in a TRACER_DURABLE snapshot.
 *
 * A tick reads no symbols (the first session of an object takes 0.2 s,
 * libdw allocates with the program's malloc, and the tick may run in the
 * SIGPROF handler): each node not defined with its symbols yet gets a
 * placeholder Region "0x<address in the file> [<object>]" whose source
 * file is the object's path (tools/recover_syms.c names it after a kill),
 * or "0x<address>" outside every known object; "[truncated]" and
 * "[tracer]" for the pseudo frames; a node of an instrumented region keeps
 * its region. Parents come first.
 *
 * Each placeholder is made once, into the registry's snapshot tail
 * (preload/defs/defs_tail.c: its ids are fixed at every snapshot), and a
 * tick makes only those of the nodes created since the last one: a tick
 * costs the new contexts, not all of them (34,000 contexts of an OpenBLAS
 * run cost 11 ms per tick when each tick defined all of them again).
 * Regions are shared by the nodes of one address (a hash table of their
 * keys). Without MPI the events' node indices go through a mapping table
 * (node -> definition); with MPI the CallingContext ids are the node
 * indices.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "smp_int.h"

uint32_t tr_smp_snap_nodes;

static uint32_t snap_from = UINT32_MAX;   /* the nodes before: defined with symbols */
static uint32_t snap_n;                   /* the nodes in the tail so far */
static uint32_t *snap_map;                /* node -> definition (without MPI), mapped once */
static uint32_t desc_s = UINT32_MAX, trunc_r = UINT32_MAX, tracer_r = UINT32_MAX;

/* Placeholder regions by address: open addressing, grown at half load. */
struct snap_reg {
	uint64_t off;   /* address in its object's file (or the address) */
	uint32_t obj;   /* object index + 1, 0: none */
	uint32_t region;   /* tail index + 1, 0: free slot */
};
static struct snap_reg *regs;
static uint32_t nregs, capregs;
/* The path string of each object (tail index + 1), by object index. */
static uint32_t *obj_path;
static uint32_t cap_obj_path;

static void snap_reset(void)
{
	tr_defs_tail_clear();
	if (regs)
		memset(regs, 0, sizeof(*regs) * capregs);
	nregs = 0;
	if (obj_path)
		memset(obj_path, 0, sizeof(*obj_path) * cap_obj_path);
	desc_s = trunc_r = tracer_r = UINT32_MAX;
}

static uint32_t reg_slot(const struct snap_reg *t, uint32_t cap, uint64_t off, uint32_t obj)
{
	uint64_t h = (off ^ ((uint64_t)obj << 40)) * 0x9e3779b97f4a7c15ull;
	uint32_t i = (uint32_t)(h >> 32) & (cap - 1);
	while (t[i].region && (t[i].off != off || t[i].obj != obj))
		i = (i + 1) & (cap - 1);
	return i;
}

static int regs_grow(void)
{
	uint32_t nc = capregs ? capregs * 2 : 4096;
	struct snap_reg *t = tr_calloc(nc, sizeof(*t));
	if (!t)
		return -1;
	for (uint32_t i = 0; i < capregs; i++)
		if (regs[i].region)
			t[reg_slot(t, nc, regs[i].off, regs[i].obj)] = regs[i];
	tr_free(regs);
	regs = t;
	capregs = nc;
	return 0;
}

static uint32_t tail_string(const char *s)
{
	return tr_defs_tail_add(TR_DEF_STRING, s, (uint32_t)strlen(s) + 1);
}

/* A tail Region (name: tail string index; file: tail string index or
 * UNDEF); its tail index. */
static uint32_t tail_region(uint32_t name, uint32_t desc, uint8_t role, uint8_t paradigm, uint32_t file)
{
	if (name == SMP_UNDEF || desc == SMP_UNDEF)
		return SMP_UNDEF;
	uint64_t v[9] = { TR_DEFS_TAIL | name, TR_DEFS_TAIL | name, TR_DEFS_TAIL | desc, role, paradigm,
			  OTF2W_REGION_FLAG_NONE, file == SMP_UNDEF ? SMP_UNDEF : (TR_DEFS_TAIL | file), 0, 0 };
	return tr_defs_tail_add(TR_DEF_REGION, v, 9);
}

static uint32_t pseudo_region(uint32_t *r, const char *name, const char *desc)
{
	if (*r == UINT32_MAX)
		*r = tail_region(tail_string(name), tail_string(desc), OTF2W_ROLE_ARTIFICIAL,
				 OTF2W_PARADIGM_MEASUREMENT_SYSTEM, SMP_UNDEF);
	return *r;
}

/* The placeholder of an address node: its tail Region index, SMP_UNDEF on
 * no memory. */
static uint32_t address_region(const struct smp_node *nd)
{
	uint64_t a = SMP_KEY_ADDR(nd->key), off;
	uint64_t look = (nd->key & SMP_KEY_RET) && a ? a - 1 : a;
	const char *name, *path;
	uint32_t oi = tr_smp_obj_at(look, nd->gen, &off, &name, &path);
	uint32_t obj = oi == UINT32_MAX || !path ? 0 : oi + 1;
	if (!obj)
		off = a;
	if ((nregs + 1) * 2 > capregs && regs_grow())
		return SMP_UNDEF;
	uint32_t slot = reg_slot(regs, capregs, off, obj);
	if (regs[slot].region)
		return regs[slot].region - 1;
	uint32_t file = SMP_UNDEF;
	if (obj) {
		if (oi >= cap_obj_path) {
			uint32_t nc = cap_obj_path ? cap_obj_path : 64;
			while (nc <= oi)
				nc *= 2;
			uint32_t *m = tr_calloc(nc, sizeof(*m));
			if (!m)
				return SMP_UNDEF;
			if (obj_path)
				memcpy(m, obj_path, sizeof(*m) * cap_obj_path);
			tr_free(obj_path);
			obj_path = m;
			cap_obj_path = nc;
		}
		if (!obj_path[oi])
			obj_path[oi] = tail_string(path) + 1;   /* (UNDEF + 1 = 0: tried again) */
		if (!obj_path[oi])
			return SMP_UNDEF;
		file = obj_path[oi] - 1;
	}
	if (desc_s == UINT32_MAX)
		desc_s = tail_string(TR_DEFS_PLACEHOLDER);
	char buf[96];
	if (obj)
		snprintf(buf, sizeof(buf), "0x%llx [%.60s]", (unsigned long long)off, name);
	else
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
	uint32_t r = tail_region(tail_string(buf), desc_s, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_SAMPLING, file);
	if (r == SMP_UNDEF)
		return SMP_UNDEF;
	regs[slot] = (struct snap_reg){ .off = off, .obj = obj, .region = r + 1 };
	nregs++;
	return r;
}

void tr_smp_snapshot_defs(void)
{
	int by_index = tr_proc.rank >= 0;
	const uint32_t *map;
	uint32_t defined = tr_smp_defined(&map);
	uint32_t n = __atomic_load_n(&tr_smp_nnodes, __ATOMIC_ACQUIRE);
	if (n > tr_smp_node_cap)
		n = tr_smp_node_cap;
	/* with MPI the ids are the node numbers: those defined so far */
	uint32_t from = by_index ? tr_defs_count(TR_DEF_CALLING_CONTEXT) : defined;
	if (from != snap_from) {
		/* the first snapshot, or the nodes were defined with symbols
		 * since the last (the tail's contexts are theirs no more) */
		snap_reset();
		snap_from = snap_n = from;
	}
	uint32_t m = snap_n;   /* (the nodes before are complete) */
	while (m < n && __atomic_load_n(&tr_smp_nodes[m].depth, __ATOMIC_ACQUIRE))
		m++;
	n = m;
	if (!by_index && !snap_map && n > from) {
		void *p = tr_real.mmap(NULL, sizeof(uint32_t) * (size_t)tr_smp_node_cap, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return;
		snap_map = p;
	}
	if (!by_index && snap_n == from && from && snap_map)
		memcpy(snap_map, map, sizeof(*snap_map) * from);
	uint32_t i, prev = snap_n;
	for (i = snap_n; i < n; i++) {
		const struct smp_node *nd = &tr_smp_nodes[i];
		uint64_t r;
		if (nd->key & SMP_KEY_REGION)
			r = (uint32_t)(nd->key & 0xffffffffu);   /* an instrumented region (the registry's) */
		else if (nd->key == SMP_KEY_TRUNC)
			r = pseudo_region(&trunc_r, "[truncated]", "frames beyond TRACER_SAMPLING_DEPTH");
		else if (nd->key & SMP_KEY_PSEUDO)
			r = pseudo_region(&tracer_r, "[tracer]", "time spent inside libtracer.so");
		else
			r = address_region(nd);
		if (r == SMP_UNDEF)
			break;
		if (!(nd->key & SMP_KEY_REGION))
			r |= TR_DEFS_TAIL;
		/* the parent: defined with symbols (its id, or its definition
		 * without MPI) or in the tail */
		uint64_t parent = nd->parent;
		if (parent != SMP_UNDEF)
			parent = parent < from ? (by_index ? parent : map[parent]) : (TR_DEFS_TAIL | (parent - from));
		uint64_t v[3] = { r, SMP_UNDEF, parent };
		if (tr_defs_tail_add(TR_DEF_CALLING_CONTEXT, v, 3) == SMP_UNDEF)
			break;
	}
	static int said;
	if (i < n && !said++)
		tr_log_sigsafe("sampling: no memory for the calling contexts of a durability snapshot; "
			       "tracer recover may find contexts undefined");
	snap_n = i;
	__atomic_store_n(&tr_smp_snap_nodes, snap_n, __ATOMIC_RELEASE);
	/* without MPI: node -> the id its tail context has in the snapshots
	 * (the tail's contexts come right after the registry's, whose count
	 * changes only when the nodes are defined with symbols) */
	if (!by_index && snap_map && snap_n > from) {
		/* (the registry's count moves without `from` while
		 * tr_smp_define_contexts is half-way: then all of them again) */
		static uint32_t snap_base = UINT32_MAX;
		uint32_t base = tr_defs_count(TR_DEF_CALLING_CONTEXT);
		if (base != snap_base)
			prev = from;
		snap_base = base;
		for (uint32_t k = prev; k < snap_n; k++)
			snap_map[k] = base + (k - from);
		tr_def_calling_context_map(snap_map, snap_n);
	}
}
