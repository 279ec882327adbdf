/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * merge_parts.c - tracer-merge: reading the parts it unifies (the ranks of
 * an MPI run, DIR/ranks/rank<r>.*, or the processes of a tree,
 * DIR/procs/proc<N>.*): names, packed definitions with a process's end
 * line, chunk sizes, sampled calling-context tables, end files, live
 * entries of members killed before they wrote anything.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "merge_int.h"
#include "otf2r.h"
#include "recover_int.h"   /* tr_parts_each */
#include "../preload/tree/tree_files.h"

/* The archive name of part r: <pfx><r>, or for a rank whose MPI process
 * was started by the rank's first process (a wrapper script that did not
 * exec it) the name DIR/ranks/rank<r>.mpi gives (side<r>-<pid>). */
const char *part(int r)
{
	static char name[2][64];
	static int k;
	char *n = name[k ^= 1], p[4200];
	snprintf(n, sizeof(name[0]), "%s%d", pfx, r);
	if (strcmp(pfx, "rank"))
		return n;
	snprintf(p, sizeof(p), "%.4000s/rank%d.mpi", rdir, r);
	FILE *f = fopen(p, "r");
	if (!f)
		return n;
	char b[64];
	if (fgets(b, sizeof(b), f) && b[0] && !strchr(b, '/'))
		snprintf(n, sizeof(name[0]), "%s", b);
	fclose(f);
	return n;
}

/* The file <loc>.<ext> of part r: in its directory, or (the parts of a
 * process tree other than its root) in DIR/procs/parts, the one directory
 * of their event and local definition files (preload/archive/archive.c). */
static signed char *own_dir;   /* per part: 1 has DIR/procs/proc<N>/, -1 has not, 0 not asked */
static size_t n_own_dir;

/* Whether part r of a tree has a directory of its own (asked once: a
 * member's files are all in parts/, and a probe per file cost a path
 * lookup each, for every location of the tree). */
static int has_own_dir(int r)
{
	if (r < 0)
		return 1;
	if ((size_t)r >= n_own_dir) {
		size_t n = (size_t)r + 256;
		own_dir = xrealloc(own_dir, n);
		memset(own_dir + n_own_dir, 0, n - n_own_dir);
		n_own_dir = n;
	}
	if (!own_dir[r]) {
		char p[4200];
		struct stat st;
		snprintf(p, sizeof(p), "%.4000s/%s", rdir, part(r));
		own_dir[r] = stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? 1 : -1;
	}
	return own_dir[r] > 0;
}

const char *part_file(int r, uint64_t loc, const char *ext, char *out, size_t n)
{
	snprintf(out, n, "%.4000s/%s/%llu.%s", rdir, part(r), (unsigned long long)loc, ext);
	if (tree && (!has_own_dir(r) || access(out, F_OK) != 0))
		snprintf(out, n, "%.4000s/parts/%llu.%s", rdir, (unsigned long long)loc, ext);
	return out;
}

/* Size of DIR/rank<r><sfx>, -1 if missing. */
long long file_size(int r, const char *sfx)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%.4000s/%s%s", rdir, part(r), sfx);
	return stat(p, &st) ? -1 : (long long)st.st_size;
}

void *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	size_t n = (size_t)st.st_size, off = 0;
	char *b = xrealloc(NULL, n);
	while (off < n) {
		ssize_t k = read(fd, b + off, n - off);
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(fd);
	*len = off;
	return b;
}

/* Chunk sizes from a rank's anchor (otf2-format.md §2: fixed-width fields). */
int anchor_chunks(int r, uint64_t *evt, uint64_t *def)
{
	char p[4200];
	unsigned char h[28];
	snprintf(p, sizeof(p), "%.4000s/%s.otf2", rdir, part(r));
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || h[0] != 3 || h[1] != 0x42 || memcmp(h + 2, "OTF2", 5))
		return -1;
	*evt = *def = 0;
	for (int i = 7; i >= 0; i--) {
		*evt = *evt << 8 | h[12 + i];
		*def = *def << 8 | h[20 + i];
	}
	if (*evt < 262144 || *evt > 16777216 || *def < 262144 || *def > 16777216)
		return -1;
	return 0;
}

/* The end line(s) a process appended to its packed definitions: the
 * definitions' length (len when there is none), the last line's events. */
static size_t tdefs_end(const char *b, size_t len, int *ended, unsigned long long *events)
{
	static const char tag[] = "\n#tracer-end ";
	size_t from = len > 256 ? len - 256 : 0, cut = len;
	*ended = 0;
	for (size_t i = len; i-- > from;) {
		if (i + sizeof(tag) - 1 > len || memcmp(b + i, tag, sizeof(tag) - 1))
			continue;
		unsigned long long ev;
		if (!*ended && sscanf(b + i + sizeof(tag) - 1, "%llu", &ev) == 1) {
			*ended = 1;
			*events = ev;
		}
		cut = i;
	}
	return cut;
}

/* ---- DIR/procs/parts.tdefs: the packed definitions and ends of the
 * parts that never saved them in a file of their own (tree_files.h) ---- */

static unsigned char *ptd;
static size_t ptd_len;
static int ptd_read;
/* per part number: its last record of each kind (kind d at [2p], e at [2p+1]) */
static struct tr_parts_rec *ptd_last;
static size_t ptd_nparts;

static void parts_tdefs(void)
{
	char p[4200];
	struct tr_parts_rec rec;
	size_t off = 0;
	if (ptd_read || !tree)
		return;
	ptd_read = 1;
	snprintf(p, sizeof(p), "%.4000s/" TR_PARTS_TDEFS, rdir);
	ptd = read_all(p, &ptd_len);
	while (ptd && tr_parts_next(ptd, ptd_len, &off, &rec)) {
		size_t k = (size_t)rec.part;
		if (k >= ptd_nparts) {
			size_t n = k + 64;
			ptd_last = xrealloc(ptd_last, 2 * n * sizeof(*ptd_last));
			memset(ptd_last + 2 * ptd_nparts, 0, 2 * (n - ptd_nparts) * sizeof(*ptd_last));
			ptd_nparts = n;
		}
		ptd_last[2 * k + (rec.kind == 'e')] = rec;
	}
}

/* Part r's last whole record of kind k: 1 and *out, else 0. */
static int parts_rec(int r, char kind, struct tr_parts_rec *out)
{
	parts_tdefs();
	if (r < 0 || (size_t)r >= ptd_nparts || !ptd_last[2 * (size_t)r + (kind == 'e')].data)
		return 0;
	*out = ptd_last[2 * (size_t)r + (kind == 'e')];
	return 1;
}

void parts_in_records(void (*add)(int r))
{
	parts_tdefs();
	for (size_t k = 0; k < ptd_nparts; k++)
		if (ptd_last[2 * k].data)
			add((int)k);
}

/* A part's packed definitions and end from its records (no own file). */
static void *rec_tdefs(struct rank *rk, size_t *len)
{
	struct tr_parts_rec d, e;
	if (!tree || !parts_rec(rk->r, 'd', &d) || !d.len)
		return NULL;
	void *b = xrealloc(NULL, d.len);
	memcpy(b, d.data, d.len);
	*len = d.len;
	if (parts_rec(rk->r, 'e', &e)) {
		char t[64];
		size_t n = e.len < sizeof(t) - 1 ? e.len : sizeof(t) - 1;
		memcpy(t, e.data, n);
		t[n] = 0;
		rk->ended = sscanf(t, "%llu", &rk->end_events) == 1;
	}
	return b;
}

/* Load every rank<r>.tdefs; a rank without usable definitions is left out. */
int load_ranks(void)
{
	int good = 0;
	for (int i = 0; i < nranks; i++) {
		struct rank *rk = &ranks[i];
		char p[4200];
		snprintf(p, sizeof(p), "%.4000s/%s.tdefs", rdir, part(rk->r));
		rk->buf = read_all(p, &rk->len);
		if (rk->buf)
			rk->len = tdefs_end(rk->buf, rk->len, &rk->ended, &rk->end_events);
		else if ((rk->buf = rec_tdefs(rk, &rk->len)))
			snprintf(p, sizeof(p), "%.4000s/" TR_PARTS_TDEFS " (%s)", rdir, part(rk->r));
		if (!rk->buf) {
			fprintf(stderr, "tracer-merge: %s %d: no %s.tdefs (killed before writing its "
				"definitions?): its events cannot be mapped and are left out\n", what, rk->r, part(rk->r));
			continue;
		}
		/* a packed set that unpacks (against itself) is complete */
		struct tr_mapped m;
		tr_merge_quiet = 1;
		int st = tr_defs_map_buf(rk->buf, rk->len, rk->buf, rk->len, &m);
		tr_merge_quiet = 0;
		int mine = st >= 0 && m.rank == rk->r;
		rk->evt_chunk = m.evt_chunk;   /* (a part of a tree has no anchor) */
		rk->def_chunk = m.def_chunk;
		tr_defs_mapped_free(&m);
		if (!mine) {
			fprintf(stderr, "tracer-merge: %s %d: %s unreadable (truncated?): its events cannot be "
				"mapped and are left out\n", what, rk->r, p);
			free(rk->buf);
			rk->buf = NULL;
			continue;
		}
		if (!rk->evt_chunk && anchor_chunks(rk->r, &rk->evt_chunk, &rk->def_chunk)) {
			fprintf(stderr, "tracer-merge: %s %d: %s.otf2 unreadable: its events are left out\n",
				what, rk->r, part(rk->r));
			rk->evt_chunk = 0;
		}
		rk->ok = 1;
		good++;
	}
	return good;
}

/* ---- a process part's sampled calling contexts ---- */

/* A sampler without MPI numbers its calling contexts itself and maps them
 * to deduplicated definitions with a CALLING_CONTEXT mapping table in
 * every location's local definitions (preload tr_def_calling_context_map).
 * The part's events carry those numbers: its unified map becomes
 * unified[table[number]]. Read from its first location's <loc>.def. */
void compose_cc_map(struct rank *rk)
{
	char p[4300];
	size_t len = 0;
	if (!rk->m.nlocs)
		return;
	part_file(rk->r, rk->m.locs[0], "def", p, sizeof(p));
	unsigned char *b = read_all(p, &len);
	if (!b)
		return;
	otf2r_chunk *k = otf2r_chunk_open(b, len, OTF2R_CHUNK_LOCAL_DEFS);
	otf2r_chunk_rec r;
	while (k && otf2r_chunk_next(k, &r) > 0) {
		const otf2r_ldef_mapping_table *mt = &r.u.ldef.mapping_table;
		if (r.type != OTF2R_LDEF_MAPPING_TABLE || !r.decoded || mt->mapping_type != 10)   /* CALLING_CONTEXT */
			continue;
		uint64_t count = mt->id_map.count;
		int dense = mt->id_map.mode == 0;
		uint32_t *old = rk->m.map[TR_DEF_CALLING_CONTEXT], nold = rk->m.n[TR_DEF_CALLING_CONTEXT];
		uint64_t *loc = xrealloc(NULL, (count ? count : 1) * 2 * sizeof(*loc));
		uint64_t nn = nold;
		for (uint64_t i = 0; i < count; i++) {
			loc[2 * i] = dense ? i : mt->id_map.ids[2 * i];
			loc[2 * i + 1] = mt->id_map.ids[dense ? i : 2 * i + 1];
			if (loc[2 * i] < (1u << 26) && loc[2 * i] + 1 > nn)
				nn = loc[2 * i] + 1;
		}
		uint32_t *map = xrealloc(NULL, (nn ? nn : 1) * sizeof(*map));
		for (uint64_t i = 0; i < nn; i++)   /* numbers not in the table pass through */
			map[i] = i < nold && old ? old[i] : (uint32_t)i;
		for (uint64_t i = 0; i < count; i++)
			if (loc[2 * i] < nn)
				map[loc[2 * i]] = loc[2 * i + 1] < nold && old ? old[loc[2 * i + 1]]
									     : (uint32_t)loc[2 * i + 1];
		free(loc);
		free(old);
		rk->m.map[TR_DEF_CALLING_CONTEXT] = map;
		rk->m.n[TR_DEF_CALLING_CONTEXT] = (uint32_t)nn;
		break;
	}
	otf2r_chunk_close(k);
	free(b);
}

/* A part's NAME.end ("events locations [killed]", tools/recover.c writes
 * killed; a process that ended appends "\n#tracer-end events locations\n"
 * to its NAME.tdefs instead: struct rank.ended): its events; *killed set
 * when it was recovered. */
unsigned long long part_end(int r, int *killed)
{
	char p[4200], b[128], w[16] = "";
	unsigned long long ev = 0;
	unsigned nl = 0;
	for (int i = 0; i < nranks; i++)
		if (ranks[i].r == r && ranks[i].ended)
			return ranks[i].end_events;
	snprintf(p, sizeof(p), "%.4000s/%s%d.end", rdir, pfx, r);
	FILE *f = fopen(p, "r");
	if (f && fgets(b, sizeof(b), f) && sscanf(b, "%llu %u %15s", &ev, &nl, w) >= 1 && killed)
		*killed = !strcmp(w, "killed");
	if (f)
		fclose(f);
	return ev;
}

/* Calls add with the part of every live entry a member left behind
 * (DIR/procs/live.<pid>.<start>.<part>.<self>, tree_files.h; a member
 * removes its own when it ends): the part of a process killed before it
 * wrote anything (with the flush writer, not even a directory), so that
 * load_ranks names it; not an entry a parent wrote for a child that never
 * started the tracer (self 0). */
void parts_of_live(void (*add)(int r))
{
	char p[4200];
	struct tr_live_name e;
	snprintf(p, sizeof(p), "%.4000s", rdir);
	DIR *d = tree ? opendir(p) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (tr_live_parse(de->d_name, &e) == 0 && e.self)
			add(e.part);
	if (d)
		closedir(d);
}

static void part_of_events(const char *path, const char *name, uint64_t loc, void *ud)
{
	void (*add)(int r) = *(void (**)(int))ud;
	(void)path;
	size_t l = strlen(name);
	if (l > 4 && !strcmp(name + l - 4, ".evt") && (loc >> 32) < 0x7fffffff)
		add((int)(loc >> 32));
}

/* Calls add with the part number of every event file in DIR/procs/parts
 * (a member killed before it wrote its packed definitions: named, so that
 * the merge says it is left out). */
void parts_with_events(void (*add)(int r))
{
	tr_parts_each(rdir, part_of_events, &add);
}
