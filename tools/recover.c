/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover.c - `tracer recover DIR`: the archive of a process traced with
 * TRACER_DURABLE that was killed before it could write it (SIGKILL, the
 * OOM killer, a batch system's time limit), from what it left on disk
 * (preload/archive/durable.c):
 *   NAME.durable             committed position of every location
 *   NAME.recovery.otf2/.def  the definitions (a complete archive without events)
 *   NAME/<loc>.evt           event files written through shared mappings
 * Each event file is cut after the last whole record before its committed
 * position (a file the process completed itself is left alone), the
 * regions still open there get their Leave at the location's last time,
 * a thread that began (ThreadBegin) its ThreadEnd, the master location its ProgramEnd (exit status 128 + 9: the run was
 * killed), the file ends (02 01); the trace length of ClockProperties is
 * widened to the last event; the definitions become NAME.def and the
 * anchor NAME.otf2 (last: a reader never sees a half-recovered archive).
 * The anchor property TRACER::RUN_END says the run was killed.
 * DIR may be the archive directory, an MPI run's (DIR/ranks/rank<r>.*) or
 * a process tree's (DIR/procs/proc<N>.*, preload/tree/proctree.c). A part of a
 * run (rank or process image) also gets its packed definitions
 * (NAME.tdefs, saved at the ticks) brought up to the recovered events (last
 * time, events per location) and NAME.end ("events locations killed"), so
 * that tracer-merge unifies it like a part that ended normally; then
 * tracer-merge makes the one archive DIR/traces.otf2 (`tracer recover`;
 * tracer-merge itself recovers the parts of a tree whose processes died).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "recover.h"
#include "../preload/tree/tree_files.h"
#include "recover_int.h"

int read_full(int fd, void *p, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)p + got, n - got, off + (off_t)got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return (int)got;
}

int write_full(int fd, const void *p, size_t n, off_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pwrite(fd, (const char *)p + done, n - done, off + (off_t)done);
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* A process is still running (its pid exists). */
static int pid_alive(uint64_t pid)
{
	return pid > 0 && pid < (1u << 30) && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The files of the parts of a process tree other than the root: D/parts/
 * <location>.<ext>, location = part << 32 | thread (preload/archive/archive.c): fn
 * gets each one's path, name and location. */
void tr_parts_each(const char *d, void (*fn)(const char *path, const char *name, uint64_t loc, void *ud), void *ud)
{
	char p[8400];
	snprintf(p, sizeof(p), "%.4000s/parts", d);
	DIR *dd = opendir(p);
	struct dirent *e;
	while (dd && (e = readdir(dd))) {
		char *end;
		unsigned long long loc = strtoull(e->d_name, &end, 10);
		if (end == e->d_name || *end != '.' || !(loc >> 32))
			continue;
		snprintf(p, sizeof(p), "%.4000s/parts/%.255s", d, e->d_name);
		fn(p, e->d_name, loc, ud);
	}
	if (dd)
		closedir(dd);
}

struct gather {
	uint64_t part;
	const char *evtdir;
};

static void gather_one(const char *path, const char *name, uint64_t loc, void *ud)
{
	const struct gather *g = ud;
	char q[8700];
	if ((loc >> 32) != g->part)
		return;
	snprintf(q, sizeof(q), "%.4300s/%.255s", g->evtdir, name);
	rename(path, q);
}

/* A part proc<N> of a tree other than the root: its files in D/parts move
 * into D/NAME/, where the recovered part has them. */
static void gather_part(const char *d, const char *name, const char *evtdir)
{
	int n = -1, len = 0;
	if (sscanf(name, "proc%d%n", &n, &len) != 1 || name[len] || n <= 0)
		return;
	struct gather g = { (uint64_t)n, evtdir };
	tr_parts_each(d, gather_one, &g);
}

/* One process's files: D/NAME.durable. part: a rank's or a process
 * image's part of a run (NAME.tdefs, NAME.end); only_dead: a part whose
 * process still runs is left alone. 0 recovered, 1 left alone, -1 error. */
static int recover_one(const char *d, const char *name, FILE *msg, int part, int only_dead,
		       struct tr_recover_totals *tot)
{
	char p[8400], q[8400], evtdir[8300], snapdir[8300];
	struct tr_durable_index *ix = malloc(sizeof(*ix));
	int fd;

	snprintf(p, sizeof(p), "%.4000s/%.255s.durable", d, name);
	if (!ix || (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0) {
		if (msg)
			fprintf(msg, "tracer: recover: cannot read %s: %s\n", p, strerror(errno));
		free(ix);
		return -1;
	}
	memset(ix, 0, sizeof(*ix));
	int n = read_full(fd, ix, sizeof(*ix), 0);
	close(fd);
	if (n < (int)sizeof(*ix) || memcmp(ix->magic, TR_DURABLE_MAGIC, 8) || !ix->chunk_size) {
		if (msg)
			fprintf(msg, "tracer: recover: %s is no durable index\n", p);
		free(ix);
		return -1;
	}
	if (only_dead && pid_alive(ix->pid)) {
		if (msg)
			fprintf(msg, "tracer: recover: %s/%s: process %llu still runs: left alone\n", d, name,
				(unsigned long long)ix->pid);
		free(ix);
		return 1;
	}
	settle_snapshot(d, name);
	snprintf(q, sizeof(q), "%.4000s/%.255s.recovery.otf2", d, name);
	if (access(q, R_OK) != 0) {
		if (msg)
			fprintf(msg, "tracer: recover: %s/%s: no definitions were saved (killed within its first "
				"durability interval): nothing to recover\n", d, name);
		free(ix);
		return -1;
	}
	snprintf(evtdir, sizeof(evtdir), "%.4000s/%.255s", d, name);
	snprintf(snapdir, sizeof(snapdir), "%.4000s/%.255s.recovery", d, name);
	mkdir(evtdir, 0755);
	if (part)
		gather_part(d, name, evtdir);
	uint64_t events = 0, last = 0;
	unsigned nloc = 0, errors = 0;
	int master_begin = 0;
	struct loc_count *lc = NULL;
	size_t nlc = 0;
	DIR *dd = opendir(evtdir);
	struct dirent *e;
	/* the other threads first, the master last: its ProgramEnd comes at
	 * the latest time recovered of any location (a master that waited in
	 * a join recorded nothing while its threads ran on) */
	for (int pass = 0; dd && pass < 2; pass++) {
		rewinddir(dd);
		while ((e = readdir(dd))) {
			if (!has_suffix(e->d_name, ".evt"))
				continue;
			uint64_t loc = strtoull(e->d_name, NULL, 10);
			if (((loc & 0xffffffffu) == 0) != (pass == 1))
				continue;
			const struct tr_durable_slot *s = NULL;
			for (uint64_t i = 0; i < ix->nslots && i < TR_DURABLE_SLOTS; i++)
				if (ix->slot[i].location == loc)
					s = &ix->slot[i];
			struct loc_result r = { 0, 0, 0 };
			int master = (loc & 0xffffffffu) == 0;
			snprintf(p, sizeof(p), "%.4300s/%.255s", evtdir, e->d_name);
			int rc = fix_evt(p, s, master, ix->chunk_size, master ? last : 0, &r);
			if (rc < 0)
				errors++;
			if (master && (rc == 1 || r.begin))
				master_begin = 1;
			if (rc == 0) {
				struct loc_count *m = realloc(lc, (nlc + 1) * sizeof(*lc));
				if (m) {
					lc = m;
					lc[nlc].id = loc;
					lc[nlc++].events = r.events;
				}
			}
			nloc++;
			events += r.events;
			if (r.last_time > last)
				last = r.last_time;
		}
	}
	if (dd)
		closedir(dd);
	if (part && !master_begin) {
		/* nothing committed before the kill (not even ProgramBegin): the
		 * part is left out of the unification (its packed definitions go) */
		unlink_own(d, name, ".tdefs");
		unlink_own(d, name, ".durable");
		if (msg)
			fprintf(msg, "tracer: recover: %s/%s: the process %llu was killed before its first events were "
				"saved: left out\n", d, name, (unsigned long long)ix->pid);
		free(lc);
		free(ix);
		return -1;
	}
	/* the snapshot's local files for locations without a file of ours
	 * (empty event files; local definitions: the sampler's calling-context
	 * mapping table, the same in every location and only growing: a file
	 * cut by the kill while the snapshot was rewritten is replaced by a
	 * whole one of another location) */
	char good[8400] = "";
	dd = opendir(snapdir);
	while (dd && (e = readdir(dd))) {
		snprintf(p, sizeof(p), "%.4300s/%.255s", snapdir, e->d_name);
		if (!good[0] && has_suffix(e->d_name, ".def") && local_def_ok(p))
			snprintf(good, sizeof(good), "%s", p);
	}
	if (dd)
		rewinddir(dd);
	while (dd && (e = readdir(dd))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%.4300s/%.255s", snapdir, e->d_name);
		if (has_suffix(e->d_name, ".def") && !local_def_ok(p) && good[0] && copy_file(good, p))
			errors++;
		snprintf(q, sizeof(q), "%.4300s/%.255s", evtdir, e->d_name);
		if (access(q, F_OK) != 0)
			rename(p, q);
		else
			unlink(p);
	}
	if (dd)
		closedir(dd);
	rmdir(snapdir);
	if (part) {
		snprintf(p, sizeof(p), "%.4000s/%.255s.tdefs", d, name);
		patch_tdefs(p, last, lc, nlc);
		snprintf(p, sizeof(p), "%.4000s/%.255s.end", d, name);
		FILE *f = fopen(p, "w");
		if (f) {
			fprintf(f, "%llu %u killed\n", (unsigned long long)events, nloc);
			if (fclose(f) != 0)
				errors++;
		}
	}
	free(lc);
	snprintf(p, sizeof(p), "%.4000s/%.255s.recovery.def", d, name);
	snprintf(q, sizeof(q), "%.4000s/%.255s.def", d, name);
	if (rename(p, q) != 0)
		errors++;
	widen_clock(q, last);
	snprintf(p, sizeof(p), "%.4000s/%.255s.recovery.otf2", d, name);
	snprintf(q, sizeof(q), "%.4000s/%.255s.otf2", d, name);
	if (rename(p, q) != 0)
		errors++;
	if (!part && !errors)
		(void)tr_recover_name_samples(q, msg);   /* (a part's: in the unified archive, tracer-merge) */
	unlink_own(d, name, ".durable");
	unlink_own(d, name, ".claim");
	if (msg)
		fprintf(msg, "tracer: recovered %s: %u locations, %llu events (the process %llu was killed; open "
			"regions closed at their last recorded time)%s\n", q, nloc, (unsigned long long)events,
			(unsigned long long)ix->pid, errors ? "; some files could not be fixed" : "");
	if (tot) {
		tot->archives++;
		tot->locations += nloc;
		tot->events += events;
	}
	free(ix);
	return errors ? -1 : 0;
}

/* Every NAME.durable in d. Returns the number recovered. */
static int recover_in(const char *d, FILE *msg, int part, int only_dead, struct tr_recover_totals *tot)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	char (*names)[256] = NULL;
	size_t nn = 0;
	int n = 0;
	while (dd && (e = readdir(dd))) {
		size_t l = strlen(e->d_name);
		if (!has_suffix(e->d_name, ".durable") || l - 8 >= sizeof(names[0]))
			continue;
		char (*m)[256] = realloc(names, (nn + 1) * sizeof(*names));
		if (!m)
			break;
		names = m;
		memcpy(names[nn], e->d_name, l - 8);
		names[nn++][l - 8] = 0;
	}
	if (dd)
		closedir(dd);
	for (size_t i = 0; i < nn; i++) {
		int rc = recover_one(d, names[i], msg, part, only_dead, tot);
		if (rc == 0)
			n++;
		else if (rc < 0 && tot)
			tot->failed++;
	}
	free(names);
	return n;
}

int tracer_recover_killed(const char *d, const char *name)
{
	char p[4400];
	struct tr_durable_index h;
	snprintf(p, sizeof(p), "%.4000s/%.255s.durable", d, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int n = read_full(fd, &h, offsetof(struct tr_durable_index, slot), 0);
	close(fd);
	return n == (int)offsetof(struct tr_durable_index, slot) && !memcmp(h.magic, TR_DURABLE_MAGIC, 8) &&
	       !pid_alive(h.pid);
}

int tracer_recover_parts(const char *d, FILE *msg, int only_dead, struct tr_recover_totals *tot)
{
	return recover_in(d, msg, 1, only_dead, tot);
}

int tracer_recover_dir(const char *dir, FILE *msg)
{
	char r[4200];
	struct tr_recover_totals t = { 0 };
	int n = recover_in(dir, msg, 0, 0, &t);
	snprintf(r, sizeof(r), "%.4000s/ranks", dir);
	n += recover_in(r, msg, 1, 0, &t);
	if (t.failed)
		return 2;
	return n ? 0 : 1;
}

/* ---- the unification (tracer-merge, next to this program) ---- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs tracer-merge [--final] dir (next to this program), its output
 * appended to log (NULL: inherited). Its exit status, -1 when it could not
 * run, -2 when it is not there; secs: its wall time. */
static int tracer_run_merge(const char *dir, int final, const char *log, double *secs)
{
	char exe[4096], merge[4200];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[l > 0 ? l : 0] = 0;
	char *sl = strrchr(exe, '/');
	if (sl)
		*sl = 0;
	snprintf(merge, sizeof(merge), "%s/tracer-merge", exe);
	if (access(merge, X_OK))
		return -2;
	double t0 = now_s();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int out = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		unsetenv("LD_PRELOAD");
		if (final)
			execl(merge, merge, "--final", dir, (char *)NULL);
		else
			execl(merge, merge, dir, (char *)NULL);
		_exit(127);
	}
	int status = -1;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (secs)
		*secs = now_s() - t0;
	return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The one line of a unified process tree (DIR/procs/unified): "tracer:
 * archive ..." or "tracer: recovered ..." when parts were killed. 0, or -1
 * when tracer-merge left no totals. */
static int tracer_tree_line(const char *dir, double secs, char *line, size_t n)
{
	char p[4200];
	unsigned long long np = 0, nl = 0, ne = 0, nb = 0, nk = 0;
	snprintf(p, sizeof(p), "%.4000s/procs/unified", dir);
	FILE *f = fopen(p, "r");
	int k = f ? fscanf(f, "%llu %llu %llu %llu %llu", &np, &nl, &ne, &nb, &nk) : 0;
	if (f)
		fclose(f);
	if (k < 4)
		return -1;
	if (nk)
		snprintf(line, n, "tracer: recovered %s/traces.otf2: %llu process%s (%llu killed: events up to their "
			 "last durability tick, open regions closed), %llu locations, %llu events, %llu bytes "
			 "(unified in %.3f s)\n", dir, np, np == 1 ? "" : "es", nk, nl, ne, nb, secs);
	else
		snprintf(line, n, "tracer: archive %s/traces.otf2: %llu process%s, %llu locations, %llu events, "
			 "%llu bytes (unified in %.3f s)\n", dir, np, np == 1 ? "" : "es", nl, ne, nb, secs);
	return 0;
}

int tracer_unify_tree(const char *dir, char *log, size_t nlog, char *line, size_t n)
{
	double secs = 0;
	snprintf(log, nlog, "%.4000s/procs/tracer-merge.log", dir);
	int rc = tracer_run_merge(dir, 1, log, &secs);
	if (rc == -2)
		return -2;
	return rc != 0 || tracer_tree_line(dir, secs, line, n) ? -1 : 0;
}

/* A member of the tree in procs still runs (its live entry procs/live.
 * <pid>.<start>...: the start time against pid reuse, tree_files.h): its
 * pid, else 0. */
static long running_member(const char *procs)
{
	char live[4200];
	long found = 0;
	snprintf(live, sizeof(live), "%.4000s", procs);
	DIR *dd = opendir(live);
	struct dirent *e;
	while (dd && !found && (e = readdir(dd))) {
		char p[64], b[1024];
		struct tr_live_name le;
		unsigned long long st = 0;
		if (tr_live_parse(e->d_name, &le) || !pid_alive((uint64_t)le.pid))
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/stat", le.pid);
		FILE *f = fopen(p, "r");
		size_t n = f ? fread(b, 1, sizeof(b) - 1, f) : 0;
		if (f)
			fclose(f);
		b[n] = 0;
		const char *q = strrchr(b, ')');   /* fields 3.. after the command */
		if (q && (q[1] != ' ' || q[2] == 'Z' || q[2] == 'X'))
			continue;   /* ended, not reaped yet */
		for (int k = 2; q && *q && k < 22; k++)
			q = strchr(q + 1, ' ');
		if (q && sscanf(q, " %llu", &st) == 1 && st == le.start)
			found = le.pid;
	}
	if (dd)
		closedir(dd);
	return found;
}

long tracer_tree_running(const char *dir)
{
	char procs[4200];
	snprintf(procs, sizeof(procs), "%.4000s/procs", dir);
	return running_member(procs);
}

/* The archives of an MPI run's ranks in DIR/ranks, recovered (recovered:
 * tracer_recover_dir's status 0): tracer-merge unifies them into one and
 * prints its line. 0 done, 1 nothing to do, 2 error. */
static int unify_ranks(const char *dir, const char *ranks, int recovered)
{
	if (recovered != 0)
		return 1;
	int m = tracer_run_merge(dir, 0, NULL, NULL);
	if (m != 0) {
		fprintf(stderr, "tracer: recover: tracer-merge %s failed (%d): the ranks' archives stay in %s\n",
			dir, m, ranks);
		return 2;
	}
	return 0;
}

/* A process tree's parts in DIR/procs: tracer-merge --final recovers the
 * killed ones and unifies. 0 done, 1 nothing to do, 2 error. */
static int recover_tree(const char *dir, const char *procs, int recovered)
{
	char log[4300], p[4300], line[1024];
	struct stat st;
	(void)recovered;
	snprintf(p, sizeof(p), "%s/ranks", dir);
	if (stat(p, &st) == 0)
		return 1;   /* a launcher traced around MPI ranks: the ranks' archive is the run's */
	int pending = 0;
	DIR *dd = opendir(procs);
	struct dirent *e;
	while (dd && (e = readdir(dd)))
		pending |= has_suffix(e->d_name, ".durable");
	if (dd)
		closedir(dd);
	snprintf(p, sizeof(p), "%s/traces.otf2", dir);
	if (!pending && access(p, F_OK) == 0)
		return 1;   /* unified already, nothing killed since */
	long pid = running_member(procs);
	if (pid) {
		fprintf(stderr, "tracer: recover: process %ld of the tree in %s still runs: nothing done (its archive "
			"is written when the last process ends)\n", pid, dir);
		return 2;
	}
	int rc = tracer_unify_tree(dir, log, sizeof(log), line, sizeof(line));
	if (rc == -2) {
		fprintf(stderr, "tracer: recover: tracer-merge not found next to this program: run tracer-merge "
			"--final %s\n", dir);
		return 2;
	}
	if (rc != 0) {
		fprintf(stderr, "tracer: recover: unifying the process tree in %s failed (see %s)\n", dir, log);
		return 2;
	}
	fputs(line, stderr);
	return 0;
}

static const char recover_usage[] =
	"usage: tracer recover DIR\n"
	"\n"
	"Rebuild the archive of a traced process (TRACER_DURABLE, on by default) killed\n"
	"(SIGKILL, OOM killer, time limit) before it wrote it: every event up to its\n"
	"last durability tick, open regions closed at the last recorded time, ProgramEnd\n"
	"with status 137, anchor property TRACER::RUN_END. DIR is the archive directory:\n"
	"a process tree's parts (DIR/procs) are recovered and unified into\n"
	"DIR/traces.otf2 (tracer-merge --final), so are an MPI run's ranks (DIR/ranks).\n"
	"Exit status: 0 recovered, 1 nothing to recover, 2 errors.\n";

/* The directories of parts an archive directory may hold, in this order:
 * each unified (the killed processes' parts recovered first) into the one
 * archive DIR/traces.otf2. */
static const struct {
	const char *name;
	int (*unify)(const char *dir, const char *sub, int recovered);   /* 0 done, 1 nothing to do, 2 error */
} part_kinds[] = {
	{"ranks", unify_ranks},
	{"procs", recover_tree},
};

int tracer_recover_main(int argc, char **argv)
{
	char sub[4200];
	struct stat st;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(recover_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *dir = argv[1];
	int rc = tracer_recover_dir(dir, stderr);
	for (size_t i = 0; i < sizeof(part_kinds) / sizeof(part_kinds[0]); i++) {
		snprintf(sub, sizeof(sub), "%.4000s/%s", dir, part_kinds[i].name);
		if (stat(sub, &st) || !S_ISDIR(st.st_mode))
			continue;
		int k = part_kinds[i].unify(dir, sub, rc);
		if (k != 1)
			rc = rc == 2 || k == 2 ? 2 : 0;
	}
	if (rc == 1)
		fprintf(stderr, "tracer: recover: nothing to recover in %s (no NAME.durable: the archive was "
			"written, or TRACER_DURABLE was off)\n", dir);
	return rc;
}
