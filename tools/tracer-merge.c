/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer-merge - make one OTF2 archive out of the per-rank archives that
 * libtracer.so leaves when an MPI run ends without MPI_Finalize (crash,
 * MPI_Abort, killed ranks).
 *
 * usage: tracer-merge [--wait SECONDS --ranks N] DIR   (--help)
 *
 * --wait/--ranks: wait (at most SECONDS) until rank0..rank<N-1>.otf2 and
 * their .tdefs exist and stop growing (used by MPI_Abort, which starts this
 * tool while the other ranks are still being killed). Only one merge runs at
 * a time (DIR/ranks/.tracer-merge.lock); nothing is done when DIR/traces.otf2
 * exists already.
 *
 * DIR/ranks holds, per rank r, rank<r>.otf2 + rank<r>/ (a standalone archive) and
 * rank<r>.tdefs (the rank's packed local definitions, preload/defs/defs_pack.c). The
 * tool does offline what rank 0 does at MPI_Finalize, with the same code:
 * tr_defs_merge unifies the packed sets by content, tr_defs_map_buf gives
 * each rank's local -> unified maps, and our own writer (format/, otf2w)
 * writes DIR/traces.otf2 + DIR/traces.def + DIR/traces/<loc>.def (mapping
 * tables, clock offsets); each location's events DIR/ranks/rank<r>/<loc>.evt
 * are hard-linked (or copied) to DIR/traces/<id>.evt (sequential ids, as the
 * online unification numbers them). The per-rank archives
 * stay readable. No libotf2: the definition code of the core that knows no
 * process (preload/defs/defset.c, defs_write.c, defs_pack.c, defs_unify.c:
 * tr_defs.h) is compiled into this tool.
 *
 * Process trees (TRACER_TREE=one, preload/tree/proctree.c): DIR/procs holds
 * proc<N>/ + proc<N>.tdefs (chunk sizes included; a process that ended
 * appended "#tracer-end events locations") or proc<N>.end per process image
 * (merge_parts.c reads the parts), proc0.otf2 too (the root: standalone); the same merge makes DIR/traces.otf2 (run again, it
 * replaces it: a daemon that outlived the others). A rank merge and a
 * repeated tree merge write the new archive in DIR/.tracer-merge.<pid>
 * and move it into place; a tree's first one writes in place, the event
 * links before the anchor (no temporary directory, no rename per location). --final (tracer-run, or
 * the tree's last process): every process has ended, the live entries and
 * registry links are removed; DIR/procs/unified gets the totals
 * "processes locations events bytes killed".
 *
 * TRACER_DURABLE: a part whose process was killed (SIGKILL, OOM killer)
 * left NAME.durable instead of its anchor; the parts (ranks, processes
 * of a tree) are first recovered here (tools/recover.c; without --final
 * only those whose process is gone; --wait counts a killed rank's
 * NAME.durable as its archive). A recovered part (rank or process image) has
 * "killed" in its NAME.end: the unified archive then gets the anchor
 * property TRACER::RUN_END naming how many were killed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fsutil.h"
#include "recover.h"
#include "tr_defs.h"
#include "../preload/tree/tree_files.h"
#include "merge_int.h"

/* Errors of the definition code (tr_defs_set_error_log). */
int tr_merge_quiet;

static void merge_log(const char *fmt, ...)
{
	va_list ap;
	if (tr_merge_quiet)
		return;
	va_start(ap, fmt);
	fputs("tracer-merge: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- helpers ----------------------------------------------------------------- */


struct rank *ranks;
int nranks;
const char *dir;
char rdir[4100];
const char *pfx = "rank";
const char *what = "rank";
int tree;

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "tracer-merge: out of memory\n");
		exit(1);
	}
	return p;
}

static int cmp_rank(const void *a, const void *b)
{
	return ((const struct rank *)a)->r - ((const struct rank *)b)->r;
}

/* Events of a location: hard link of the rank's file (copy if links fail).
 * Returns 0 when DIR/traces/<gid>.evt holds the rank's events. */
static int link_events(int r, uint64_t loc, uint64_t gid)
{
	char from[4200], to[4200];
	part_file(r, loc, "evt", from, sizeof(from));
	snprintf(to, sizeof(to), "%s/traces/%llu.evt", dir, (unsigned long long)gid);
	if (tr_link_or_copy(from, to)) {
		fprintf(stderr, "tracer-merge: cannot copy %s to %s: %s\n", from, to, strerror(errno));
		return -1;
	}
	return 0;
}

/* Unified locations and their ranks (tr_defs_write_unified_buf callback). */
struct uloc {
	uint64_t gid, id;
	int32_t rank;
	int evt;   /* its part's event file: 1 there, -1 not, 0 not asked */
};
static struct uloc *ulocs;
static size_t nulocs;

static void collect_loc(uint64_t gid, uint64_t loc, int32_t rank, void *ud)
{
	ulocs = xrealloc(ulocs, (nulocs + 1) * sizeof(*ulocs));
	ulocs[nulocs].gid = gid;
	ulocs[nulocs].id = loc;
	ulocs[nulocs].rank = rank;
	ulocs[nulocs].evt = 0;
	nulocs++;
}

static const struct rank *rank_of(int32_t r)
{
	for (int i = 0; i < nranks; i++)
		if (ranks[i].r == r)
			return &ranks[i];
	return NULL;
}

/* Unified location u has events in a usable part's file (looked at once). */
static int uloc_events(struct uloc *u)
{
	char p[4200];
	const struct rank *rk = rank_of(u->rank);
	if (!u->evt)
		u->evt = rk && rk->ok && rk->evt_chunk && access(part_file(rk->r, u->id, "evt", p, sizeof(p)), F_OK) == 0
			 ? 1 : -1;
	return u->evt > 0;
}

/* The event file of unified location gid comes from a part (linked
 * before the close when in place, else after it): no empty file for it
 * in the new archive. */
static int events_elsewhere(uint64_t gid, void *ud)
{
	(void)ud;
	for (size_t i = gid < nulocs && ulocs[gid].gid == gid ? gid : 0; i < nulocs; i++) {   /* (ids 0, 1, ...) */
		if (ulocs[i].gid != gid)
			continue;
		return uloc_events(&ulocs[i]);
	}
	return 0;
}

static int place(const char *from, const char *to)
{
	if (rename(from, to) == 0)
		return 0;
	fprintf(stderr, "tracer-merge: cannot move %s to %s: %s\n", from, to, strerror(errno));
	return -1;
}

static int link_all_events(int *noevents);

/* The archive written in tmp moved into place: every location's files,
 * then the global definitions, the anchor last. *noevents, *foreign: the
 * locations without events of a part, of ranks left out. 1 on failure. */
static int place_all(const char *tmp, int *noevents, int *foreign)
{
	char p1[8400], p2[8400];
	DIR *d;
	struct dirent *de;
	int bad = 0;
	snprintf(p1, sizeof(p1), "%s/traces", dir);
	if (tree)
		tr_rm_rf(p1);   /* an earlier unification of the tree (ids may differ) */
	if (link_all_events(noevents))
		bad = 1;
	for (size_t i = 0; i < nulocs; i++) {
		unsigned long long id = (unsigned long long)ulocs[i].gid;
		snprintf(p1, sizeof(p1), "%s/traces/%llu.def", tmp, id);
		snprintf(p2, sizeof(p2), "%s/traces/%llu.def", dir, id);
		bad |= place(p1, p2);
		snprintf(p1, sizeof(p1), "%s/traces/%llu.evt", tmp, id);
		if (uloc_events(&ulocs[i])) {
			unlink(p1);   /* (none: events_elsewhere; never over the link) */
			continue;
		}
		/* no events of this location: the empty event file */
		snprintf(p2, sizeof(p2), "%s/traces/%llu.evt", dir, id);
		bad |= place(p1, p2);
	}
	/* locations other ranks refer to (ranks left out): their empty files */
	snprintf(p1, sizeof(p1), "%s/traces", tmp);
	d = opendir(p1);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p1, sizeof(p1), "%s/traces/%s", tmp, de->d_name);
		snprintf(p2, sizeof(p2), "%s/traces/%s", dir, de->d_name);
		bad |= place(p1, p2);
		*foreign += strstr(de->d_name, ".evt") != NULL;
	}
	if (d)
		closedir(d);
	snprintf(p1, sizeof(p1), "%s/traces.def", tmp);
	snprintf(p2, sizeof(p2), "%s/traces.def", dir);
	bad |= place(p1, p2);
	if (!bad) {
		snprintf(p1, sizeof(p1), "%s/traces.otf2", tmp);
		snprintf(p2, sizeof(p2), "%s/traces.otf2", dir);
		bad |= place(p1, p2);
	}
	tr_rm_rf(tmp);
	return bad;
}

/* Written in place: the event files beyond the unified locations' (ranks
 * left out: the writer's empty files). */
static int count_foreign(void)
{
	char p[4200];
	int n = 0;
	snprintf(p, sizeof(p), "%s/traces", dir);
	DIR *d = opendir(p);
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.' && strstr(de->d_name, ".evt") != NULL;
	if (d)
		closedir(d);
	return n > (int)nulocs ? n - (int)nulocs : 0;
}

static char lockpath[4200];
static void unlock_merge(void)
{
	if (lockpath[0])
		unlink(lockpath);
}

/* ---- the merge ------------------------------------------------------------------ */

/* Part r is to be merged (once). */
static void add_part(int r)
{
	for (int i = 0; i < nranks; i++)
		if (ranks[i].r == r)
			return;
	ranks = xrealloc(ranks, (nranks + 1) * sizeof(*ranks));
	memset(&ranks[nranks], 0, sizeof(*ranks));
	ranks[nranks++].r = r;
}

static int nkilled;   /* recovered parts among those unified */

/* The archive into tmp (in place: tmp is dir, direct). */
static int write_archive(const void *ubuf, size_t ulen, uint64_t evt_chunk, uint64_t def_chunk, const char *tmp,
			 int direct, int *noevents)
{
	otf2w_archive_params p;
	otf2w_archive *a;
	otf2w_gdef_writer *g;
	char host[256] = "";
	int ret = 0;

	gethostname(host, sizeof(host) - 1);
	memset(&p, 0, sizeof(p));
	p.path = tmp;
	p.name = "traces";
	p.event_chunk_size = evt_chunk;
	p.def_chunk_size = def_chunk;
	p.max_chunks = 4;
	p.machine_name = host;
	p.creator = "libtracer (tracer-merge)";
	p.description = "libtracer (LD_PRELOAD) trace, MPI run merged after it ended without MPI_Finalize";
	if (otf2w_archive_open(&p, &a) != OTF2W_OK) {
		fprintf(stderr, "tracer-merge: cannot create %s\n", tmp);
		return -1;
	}
	if (nkilled) {
		char v[256];
		snprintf(v, sizeof(v), "killed: %d of the %d %s%s of this run (SIGKILL or another uncatchable end) "
			 "recovered by tracer recover", nkilled, nranks, what, nranks == 1 ? "" : "s");
		otf2w_archive_set_property(a, "TRACER::RUN_END", v);
	}
	/* per-location definitions: mapping tables local -> unified, clock offsets */
	for (int i = 0; i < nranks; i++) {
		struct rank *rk = &ranks[i];
		if (!rk->ok)
			continue;
		for (uint32_t k = 0; k < rk->m.nlocs; k++) {
			otf2w_def_writer *dw;
			if (otf2w_archive_get_def_writer(a, rk->m.gids[k], &dw) != OTF2W_OK) {
				ret = -1;
				continue;
			}
			tr_defs_write_mapped(dw, &rk->m);
			if (otf2w_archive_close_def_writer(a, dw) != OTF2W_OK) {
				fprintf(stderr, "tracer-merge: %s\n", otf2w_archive_error(a));
				ret = -1;
			}
		}
	}
	if (otf2w_archive_get_gdef_writer(a, &g) != OTF2W_OK ||
	    tr_defs_write_unified_buf(g, ubuf, ulen, collect_loc, NULL)) {
		fprintf(stderr, "tracer-merge: writing the unified definitions failed\n");
		ret = -1;
	}
	/* in place: the parts' event files before the anchor */
	if (direct && !ret && link_all_events(noevents))
		ret = -1;
	/* anchor, global defs and empty files of the locations without writers
	 * and without events of a part */
	otf2w_archive_set_events_elsewhere(a, events_elsewhere, NULL);
	otf2w_status st = otf2w_archive_close(a);
	if (st != OTF2W_OK) {
		fprintf(stderr, "tracer-merge: writing %s: %s\n", tmp, otf2w_status_str(st));
		ret = -1;
	}
	if (direct && ret) {   /* no anchor over a location without its events */
		char p[4200];
		snprintf(p, sizeof(p), "%s/traces.otf2", dir);
		unlink(p);
	}
	return ret;
}

/* Every unified location's events: the part's event file linked to
 * DIR/traces/<id>.evt; *noevents: the locations without (the writer makes
 * their empty files). 0, or -1 when a link failed. */
static int link_all_events(int *noevents)
{
	char p[4200];
	int bad = 0;
	snprintf(p, sizeof(p), "%s/traces", dir);
	mkdir(p, 0755);   /* (the definition writers made it, if any) */
	for (size_t i = 0; i < nulocs; i++) {
		const struct rank *rk = rank_of(ulocs[i].rank);
		if (!uloc_events(&ulocs[i])) {
			(*noevents)++;
			continue;
		}
		if (link_events(rk->r, ulocs[i].id, ulocs[i].gid))
			bad = 1;
	}
	return bad ? -1 : 0;
}

/* ---- process trees ---- */

static unsigned long long file_bytes(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) ? (unsigned long long)st.st_size : 0;
}

/* Every process has ended: its live entry and registry link go. */
static void tree_cleanup(void)
{
	char p[8400], d[4200], reg[64], live[4200], adir[4200];
	struct tr_live_name le;
	int have_adir = realpath(dir, adir) != NULL;
	snprintf(reg, sizeof(reg), "/tmp/.tracer-%u", (unsigned)getuid());
	snprintf(live, sizeof(live), "%.4000s", rdir);
	DIR *dd = opendir(live);
	struct dirent *e;
	while (dd && (e = readdir(dd))) {
		if (tr_live_parse(e->d_name, &le))
			continue;
		snprintf(p, sizeof(p), "%s/%s", live, e->d_name);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%ld", reg, le.pid);
		ssize_t l = readlink(p, d, sizeof(d) - 1);
		if (l > 0 && have_adir && (d[l] = 0, !strcmp(d, adir)))
			unlink(p);
	}
	if (dd)
		closedir(dd);
	snprintf(p, sizeof(p), "%s/" TR_LIVE_TARGET, live);
	unlink(p);
}

/* The tree's totals: processes, locations, events (proc<N>.end), bytes. */
static int tree_done(int nok, int nparts, int nlocs, int final)
{
	char p[8400];
	unsigned long long events = 0, bytes = 0;
	for (int i = 0; i < nranks; i++)
		if (ranks[i].ok)
			events += part_end(ranks[i].r, NULL);
	snprintf(p, sizeof(p), "%s/traces.otf2", dir);
	bytes += file_bytes(p);
	snprintf(p, sizeof(p), "%s/traces.def", dir);
	bytes += file_bytes(p);
	snprintf(p, sizeof(p), "%s/traces", dir);
	DIR *d = opendir(p);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char f[8800];
		snprintf(f, sizeof(f), "%s/%s", p, e->d_name);
		bytes += file_bytes(f);
	}
	if (d)
		closedir(d);
	if (final)
		tree_cleanup();
	snprintf(p, sizeof(p), "%s/unified", rdir);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d %d %llu %llu %d\n", nok, nlocs, events, bytes, nkilled);
		fclose(f);
	}
	printf("tracer-merge: %s/traces.otf2: %d of %d processes (%d killed, recovered), %d locations, %llu events, "
	       "%llu bytes\n", dir, nok, nparts, nkilled, nlocs, events, bytes);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer-merge [--wait SECONDS --ranks N] [--final] DIR\n"
		   "\n"
		   "Makes DIR/traces.otf2, one OTF2 archive of every rank, out of the per-rank\n"
		   "archives DIR/ranks/rank<r>.otf2 (+ rank<r>.tdefs) that libtracer.so leaves when\n"
		   "an MPI run ends without MPI_Finalize (crash, MPI_Abort, killed ranks). Ranks whose\n"
		   "data is missing or damaged are named in one line each and left out.\n"
		   "A process tree's archive (DIR/procs/proc<N>, one part per process image)\n"
		   "is unified the same way; run again, it replaces DIR/traces.otf2.\n"
		   "\n"
		   "  --final                    (process tree) every process has ended: remove\n"
		   "                             the tree's live entries, write DIR/procs/unified\n"
		   "  --wait SECONDS --ranks N   first wait (at most SECONDS) until the N ranks'\n"
		   "                             archives are complete (ranks still being killed)\n"
		   "  -h, --help                 this text\n"
		   "  --version                  the version\n");
}

int main(int argc, char **argv)
{
	int wait_s = 0, want = 0, final = 0;
	tr_defs_set_error_log(merge_log);
	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[1], "--version")) {
			printf("tracer-merge (libtracer) %s\n", TRACER_VERSION);
			return 0;
		}
		if (!strcmp(argv[1], "--final")) {
			final = 1;
			argv++;
			argc--;
			continue;
		}
		if (!strcmp(argv[1], "--wait") && argc > 3)
			wait_s = atoi(argv[2]);
		else if (!strcmp(argv[1], "--ranks") && argc > 3)
			want = atoi(argv[2]);
		else {
			fprintf(stderr, "tracer-merge: unknown option or missing value: %s\n", argv[1]);
			usage(stderr);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	dir = argv[1];
	struct stat dst;
	if (stat(dir, &dst) || !S_ISDIR(dst.st_mode)) {
		fprintf(stderr, "tracer-merge: %s: not a directory\n", dir);
		return 2;
	}
	snprintf(rdir, sizeof(rdir), "%.4000s/procs", dir);
	if (stat(rdir, &dst) == 0 && S_ISDIR(dst.st_mode)) {
		char mpi[4200];
		snprintf(mpi, sizeof(mpi), "%.4000s/ranks", dir);
		if (stat(mpi, &dst) == 0) {
			/* an MPI launcher traced around its ranks: never replace their archive */
			printf("tracer-merge: %s holds an MPI run's archive (ranks/): the process tree's parts stay "
			       "in %s (not unified)\n", dir, rdir);
			return 0;
		}
		tree = 1;
		pfx = "proc";
		what = "process part";
	} else {
		snprintf(rdir, sizeof(rdir), "%.4000s/ranks", dir);
		if (stat(rdir, &dst) || !S_ISDIR(dst.st_mode))
			snprintf(rdir, sizeof(rdir), "%.4000s", dir);
	}
	/* every anchor (> 64 bytes) and definitions file (written after the
	 * anchor) present and unchanged for 0.3 s */
	long long last_sum = -1;
	int stable = 0;
	for (int i = 0; want > 0 && i < wait_s * 10; i++) {
		int have = 0;
		long long sum = 0;
		for (int r = 0; r < want; r++) {
			long long sz = file_size(r, ".otf2"), dsz = file_size(r, ".tdefs");
			/* (a killed rank of TRACER_DURABLE: recovered below) */
			have += (sz > 64 && dsz > 0) || tracer_recover_killed(rdir, part(r));
			sum += sz + dsz;
		}
		stable = have == want && sum == last_sum ? stable + 1 : 0;
		last_sum = sum;
		if (stable >= 3)
			break;
		usleep(100000);
	}
	snprintf(lockpath, sizeof(lockpath), "%.4000s/.tracer-merge.lock", rdir);
	for (int i = 0;; i++) {
		int fd = open(lockpath, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
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
	char p1[8400];
	snprintf(p1, sizeof(p1), "%s/traces.otf2", dir);
	struct stat ast;
	if (!tree && stat(p1, &ast) == 0 && ast.st_size > 0) {   /* (0 bytes: a placeholder) */
		printf("tracer-merge: %s exists already\n", p1);
		return 0;
	}
	/* the parts of killed processes (TRACER_DURABLE: ranks killed by the
	 * launcher, processes of a tree); --final: every process of the tree
	 * has ended */
	struct tr_recover_totals rt = { 0 };
	tracer_recover_parts(rdir, stdout, !final, &rt);
	DIR *d = opendir(rdir);
	if (!d) {
		fprintf(stderr, "tracer-merge: %s: %s\n", rdir, strerror(errno));
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		/* a rank: its anchor, its definitions, its claim or (a member of
		 * a tree, which claims nothing) its directory of event files (the
		 * root; the others' are in parts/, below): killed early, named by
		 * load_ranks */
		int r = -1, len = 0;
		char tail[8];
		char fmt[16];
		snprintf(fmt, sizeof(fmt), "%s%%d%%n.%%7s", pfx);
		int got = sscanf(de->d_name, fmt, &r, &len, tail);
		int part_dir = got == 1 && !de->d_name[len] && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN);
		if (r < 0 || (!part_dir && (got != 2 || (strcmp(tail, "otf2") && strcmp(tail, "tdefs") &&
							  strcmp(tail, "claim")))))
			continue;
		add_part(r);
	}
	closedir(d);
	if (tree) {
		parts_in_records(add_part);   /* procs/parts.tdefs */
		parts_with_events(add_part);  /* members killed early: only their event files (procs/parts) */
		parts_of_live(add_part);      /* ... or not even those: a live entry */
	}
	if (!nranks) {
		fprintf(stderr, "tracer-merge: no rank<r>.otf2 archive in %s\n", dir);
		return 1;
	}
	qsort(ranks, nranks, sizeof(*ranks), cmp_rank);
	if (!load_ranks()) {
		if (tree)
			fprintf(stderr, "tracer-merge: no process of %s has usable definitions (proc<N>.tdefs: every "
				"process was killed before it wrote any): nothing merged\n", dir);
		else
			fprintf(stderr, "tracer-merge: no rank of %s has usable definitions (rank<r>.tdefs): nothing "
				"merged\n", dir);
		return 1;
	}

	/* unification: the code rank 0 runs at MPI_Finalize */
	const void **bufs = xrealloc(NULL, nranks * sizeof(*bufs));
	size_t *lens = xrealloc(NULL, nranks * sizeof(*lens));
	int nin = 0;
	uint64_t evt_chunk = 0, def_chunk = 0;
	for (int i = 0; i < nranks; i++) {
		if (!ranks[i].ok)
			continue;
		bufs[nin] = ranks[i].buf;
		lens[nin++] = ranks[i].len;
		if (!evt_chunk && ranks[i].evt_chunk) {
			evt_chunk = ranks[i].evt_chunk;
			def_chunk = ranks[i].def_chunk;
		}
	}
	if (!evt_chunk) {
		evt_chunk = 1u << 20;
		def_chunk = 1u << 20;
	}
	void *ubuf;
	size_t ulen;
	int merged = tr_defs_merge(bufs, lens, nin, &ubuf, &ulen);
	free(bufs);
	free(lens);
	if (merged) {
		fprintf(stderr, "tracer-merge: unifying the definitions failed\n");
		return 1;
	}
	int nok = 0;
	for (int i = 0; i < nranks; i++) {
		struct rank *rk = &ranks[i];
		if (!rk->ok)
			continue;
		int missing = tr_defs_map_buf(ubuf, ulen, rk->buf, rk->len, &rk->m);
		if (missing < 0) {
			fprintf(stderr, "tracer-merge: %s %d: its definitions cannot be mapped: its events are left out\n",
				what, rk->r);
			tr_defs_mapped_free(&rk->m);
			rk->ok = 0;
			continue;
		}
		if (missing > 0)
			fprintf(stderr, "tracer-merge: warning: %s %d: %d definitions missing in the unified set\n",
				what, rk->r, missing);
		if (tree)
			compose_cc_map(rk);
		if (rk->evt_chunk && rk->evt_chunk != evt_chunk) {
			fprintf(stderr, "tracer-merge: %s %d: event chunk size %llu differs from %llu: its events "
				"are left out\n", what, rk->r, (unsigned long long)rk->evt_chunk,
				(unsigned long long)evt_chunk);
			rk->evt_chunk = 0;
		}
		nok++;
	}

	for (int i = 0; i < nranks; i++) {
		int k = 0;
		if (ranks[i].ok && (part_end(ranks[i].r, &k), k))
			nkilled++;
	}
	/* new archive in a temporary directory, then moved into place (anchor
	 * last). A process tree's first unification (no anchor there yet) is
	 * written in place, its event files linked before the writer writes
	 * the anchor: no temporary directories to make and remove, no rename
	 * per location (on an ext4 without a journal ~40 us each, and every
	 * inode removed slows the creates of the next 30 s) */
	char tmp[4200];
	snprintf(p1, sizeof(p1), "%s/traces.otf2", dir);
	int direct = tree && access(p1, F_OK) != 0;
	int bad = 0, noevents = 0, foreign = 0;
	if (direct) {
		snprintf(tmp, sizeof(tmp), "%s", dir);
		snprintf(p1, sizeof(p1), "%s/traces", dir);
		tr_rm_rf(p1);   /* (of a unification killed before its anchor) */
	} else {
		snprintf(tmp, sizeof(tmp), "%s/.tracer-merge.%d", dir, (int)getpid());
		tr_rm_rf(tmp);
	}
	int wrote = write_archive(ubuf, ulen, evt_chunk, def_chunk, tmp, direct, &noevents);
	free(ubuf);
	for (int i = 0; i < nranks; i++) {
		free(ranks[i].buf);
		tr_defs_mapped_free(&ranks[i].m);
	}
	if (wrote) {
		if (!direct)
			tr_rm_rf(tmp);
		return 1;
	}
	if (direct)
		foreign = count_foreign();
	else
		bad = place_all(tmp, &noevents, &foreign);
	free(ulocs);
	if (bad)
		return 1;
	if (nkilled) {   /* recovered parts: their sampled functions named (recover_syms.c) */
		snprintf(p1, sizeof(p1), "%s/traces.otf2", dir);
		(void)tr_recover_name_samples(p1, stdout);
	}
	if (tree) {
		int r = tree_done(nok, nranks, (int)nulocs + foreign, final);
		free(ranks);
		return r;
	}
	free(ranks);
	printf("tracer-merge: %s/traces.otf2: %d of %d ranks, %d locations (%d without events)\n", dir, nok, nranks,
	       (int)nulocs + foreign, noevents + foreign);
	return 0;
}
