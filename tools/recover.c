/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover.c - `tracer recover DIR`: the archive of a process traced with
 * TRACER_DURABLE that was killed before it could write it (SIGKILL, the
 * OOM killer, a batch system's time limit), from what it left on disk
 * (preload/durable.c):
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
 * a process tree's (DIR/procs/proc<N>.*, preload/proctree.c). A part of a
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
#include "../preload/durable_index.h"
#include "recover.h"

#define HDR 18

struct loc_result {
	uint64_t events;
	uint64_t last_time;
	int begin;   /* ProgramBegin recovered (master location) */
};

static int read_full(int fd, void *p, size_t n, off_t off)
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

static int write_full(int fd, const void *p, size_t n, off_t off)
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

/* Length of the record at p (type byte included), or 0 when it cannot be
 * decoded within lim. */
static size_t rec_len(const uint8_t *p, const uint8_t *lim)
{
	uint8_t t = p[0];
	if (t == 5)
		return p + 9 <= lim ? 9 : 0;
	switch (t) {
	case 12: case 13: case 16: case 17: case 20: case 21: case 24: case 28: case 29: case 30: {
		/* singleton: one compressed field */
		if (p + 2 > lim)
			return 0;
		size_t n = p[1] == 0xff ? 0 : p[1];
		return p + 2 + n <= lim ? 2 + n : 0;
	}
	default:
		break;
	}
	if (p + 2 > lim)
		return 0;
	if (p[1] != 0xff)
		return p + 2 + p[1] <= lim ? 2 + (size_t)p[1] : 0;
	if (p + 10 > lim)
		return 0;
	uint64_t l;
	memcpy(&l, p + 2, 8);
	return l <= (uint64_t)(lim - p - 10) ? 10 + (size_t)l : 0;
}

static uint32_t cu32(const uint8_t *p)
{
	uint32_t v = 0;
	if (p[0] == 0xff)
		return 0xffffffffu;
	for (int i = 0; i < p[0] && i < 4; i++)
		v |= (uint32_t)p[1 + i] << (8 * i);
	return v;
}

/* A compressed unsigned integer at *p (n bytes, then n little-endian
 * bytes; ff: all ones), *p moved past it, never past lim. */
static uint64_t take_cu(const uint8_t **p, const uint8_t *lim)
{
	const uint8_t *q = *p;
	if (q >= lim)
		return 0;
	if (*q == 0xff) {
		*p = q + 1;
		return UINT64_MAX;
	}
	uint64_t v = 0;
	int n = *q++;
	for (int i = 0; i < n && i < 8 && q < lim; i++)
		v |= (uint64_t)*q++ << (8 * i);
	*p = q;
	return v;
}

static uint8_t *put_cu(uint8_t *p, uint64_t v)
{
	int n = 0;
	for (uint64_t x = v; x; x >>= 8)
		n++;
	*p++ = (uint8_t)n;
	for (int i = 0; i < n; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static void put_header(uint8_t *c, uint64_t first, uint64_t last)
{
	c[0] = 0x03;
	c[1] = 0x42;
	memcpy(c + 2, &first, 8);
	memcpy(c + 10, &last, 8);
}

/* Fix one event file; master: ProgramEnd (at end_at, when that is later
 * than its own last record). -1 on an I/O error. */
static int fix_evt(const char *path, const struct tr_durable_slot *slot, int master, uint64_t cs, uint64_t end_at,
		   struct loc_result *res)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	memset(res, 0, sizeof(*res));
	uint64_t size = (uint64_t)st.st_size;
	uint8_t *buf = calloc(1, cs + 64);
	/* completed by the process: cut right after its end (02 01). A file
	 * whose last chunk is only partly reserved (a location's first window:
	 * preload reserves 64 KiB of it first; a nearly full disk) has zeros
	 * there instead: the process was killed. */
	uint8_t tail[2] = { 0, 0 };
	int completed = size % cs != 0 && size >= 2 && read_full(fd, tail, 2, (off_t)(size - 2)) == 2 &&
			tail[0] == 0x02 && tail[1] == 0x01;
	if (completed) {
		/* ended by the process itself (cut after 02 01), perhaps after
		 * the last tick: its last time (ClockProperties cover it) */
		for (uint64_t c = size / cs + 1; buf && c-- > 0 && !res->last_time && c + 2 > size / cs;) {
			uint64_t len = size - c * cs < cs ? size - c * cs : cs;
			if (read_full(fd, buf, len, (off_t)(c * cs)) != (int)len || buf[0] != 0x03)
				break;
			for (size_t at = HDR, l; at < len && buf[at] != 0 && buf[at] != 2; at += l) {
				if (!(l = rec_len(buf + at, buf + len)))
					break;
				if (buf[at] == 5)
					memcpy(&res->last_time, buf + at + 1, 8);
			}
		}
		free(buf);
		close(fd);
		return 1;
	}
	uint32_t *stack = NULL;
	size_t depth = 0, cap = 0;
	int begin = 0, end = 0, ret = 0;
	/* a thread's ThreadBegin (its contingent and sequence count) and
	 * whether its ThreadEnd is in: recovered, it ends with one */
	int tbegin = 0, tend = 0;
	uint64_t tcont = 0, tseq = 0;
	uint64_t cut_chunk = 0, cut_bytes = HDR, chunk_first = 1, nev = 0, k;
	if (slot && slot->state == TR_DURABLE_VALID && slot->chunk * cs + slot->bytes <= size && slot->bytes >= HDR &&
	    slot->bytes <= cs) {
		cut_chunk = slot->chunk;
		cut_bytes = slot->bytes;
	}
	size_t pos = HDR;
	for (k = 0; k <= cut_chunk && size > 0; k++) {
		/* (the last chunk may be reserved in part: the rest reads as zeros) */
		uint64_t have = k * cs < size ? (size - k * cs < cs ? size - k * cs : cs) : 0;
		memset(buf + have, 0, cs - have);
		if (!have || read_full(fd, buf, have, (off_t)(k * cs)) != (int)have || buf[0] != 0x03) {
			/* unreadable chunk: the file ends before it */
			cut_chunk = k ? k - 1 : 0;
			break;
		}
		uint64_t lim = k == cut_chunk ? cut_bytes : cs;
		chunk_first = nev + 1;
		pos = HDR;
		while (pos < lim) {
			uint8_t t = buf[pos];
			if (t == 0 || t == 2)
				break;
			size_t l = rec_len(buf + pos, buf + lim);
			if (!l)
				break;
			if (t == 5) {
				memcpy(&res->last_time, buf + pos + 1, 8);
			} else if (t != 6) {
				nev++;
				if (t == 12) {
					if (depth == cap) {
						cap = cap ? 2 * cap : 64;
						stack = realloc(stack, cap * sizeof(*stack));
						if (!stack)
							return -1;
					}
					stack[depth++] = cu32(buf + pos + 1);
				} else if (t == 13 && depth) {
					depth--;
				} else if (t == 83) {
					begin = 1;
				} else if (t == 84) {
					end = 1;
				} else if (t == 63 && !master) {   /* ThreadBegin: contingent, sequence */
					const uint8_t *f = buf + pos + (buf[pos + 1] == 0xff ? 10 : 2), *fl = buf + pos + l;
					tcont = take_cu(&f, fl);
					tseq = take_cu(&f, fl);
					tbegin = 1;
				} else if (t == 65) {
					tend = 1;
				}
			}
			pos += l;
		}
		if (k == cut_chunk)
			break;
	}
	if (size == 0 || k > cut_chunk) {
		/* nothing readable: an empty location */
		cut_chunk = 0;
		pos = HDR;
		nev = 0;
		chunk_first = 1;
		depth = 0;
		begin = end = 0;
		tbegin = tend = 0;
	}
	int thread_end = tbegin && !tend;
	/* the records to append: time, Leaves, ThreadEnd, ProgramEnd, end of file */
	size_t need = 9 + depth * 6 + (thread_end ? 16 : 0) + (master && begin && !end ? 12 : 0) + 2;
	uint64_t at = cut_chunk * cs;
	if (size == 0)
		memset(buf, 0, cs);
	if (pos + need >= cs) {
		/* a new chunk after this one */
		memset(buf + pos, 0, cs - pos);
		put_header(buf, chunk_first, nev);
		if (write_full(fd, buf, cs, (off_t)at))
			ret = -1;
		at += cs;
		chunk_first = nev + 1;
		pos = HDR;
		memset(buf, 0, cs);
	}
	uint8_t *p = buf + pos;
	if (depth || thread_end || (master && begin && !end) || pos == HDR) {
		if (end_at > res->last_time)
			res->last_time = end_at;   /* (never before what is recorded) */
		*p++ = 5;
		memcpy(p, &res->last_time, 8);
		p += 8;
	}
	while (depth) {
		*p++ = 13;
		p = put_cu(p, stack[--depth]);
		nev++;
	}
	if (thread_end) {
		/* ThreadEnd: the thread's contingent, its begin's sequence count */
		*p++ = 65;
		uint8_t *lp = p++;
		uint8_t *v = p;
		if (tcont > 0xffffffffu)
			*v++ = 0xff;   /* (undefined) */
		else
			v = put_cu(v, tcont);
		v = put_cu(v, tseq);
		*lp = (uint8_t)(v - p);
		p = v;
		nev++;
	}
	if (master && begin && !end) {
		*p++ = 84;
		uint8_t *lp = p++;
		uint8_t *v = put_cu(p, 128 + 9);
		*lp = (uint8_t)(v - p);
		p = v;
		nev++;
	}
	*p++ = 0x02;
	*p++ = 0x01;
	put_header(buf, chunk_first, nev);
	size_t len = (size_t)(p - buf);
	if (write_full(fd, buf, len, (off_t)at) || ftruncate(fd, (off_t)(at + len)) != 0)
		ret = -1;
	res->events = nev;
	res->begin = begin;
	free(stack);
	free(buf);
	if (close(fd) != 0)
		ret = -1;
	return ret;
}

/* ClockProperties (global def 5, first in NAME.def): trace length widened
 * to cover last (same encoded size or one chunk-local shift). */
static void widen_clock(const char *def, uint64_t last)
{
	int fd = open(def, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < HDR + 4) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n + 16);
	if (!b || read_full(fd, b, n, 0) != (int)n) {
		free(b);
		close(fd);
		return;
	}
	size_t pos = HDR;
	while (pos + 2 < n && b[pos] != 5 && b[pos] != 0 && b[pos] != 2) {
		size_t l = rec_len(b + pos, b + n);
		if (!l || b[pos] == 5)
			break;
		pos += l;
	}
	if (pos + 2 < n && b[pos] == 5 && b[pos + 1] != 0xff) {
		size_t rl = b[pos + 1];
		uint8_t *f = b + pos + 2;
		uint64_t v[3] = { 0, 0, 0 };
		uint8_t *q = f;
		for (int i = 0; i < 3; i++) {
			int m = *q == 0xff ? 0 : *q;
			if (*q == 0xff)
				v[i] = ~0ull;
			for (int j = 0; j < m; j++)
				v[i] |= (uint64_t)q[1 + j] << (8 * j);
			q += 1 + m;
		}
		if (last > v[1] && last - v[1] > v[2]) {
			uint8_t rec[64], *w = rec + 2;
			w = put_cu(w, v[0]);
			w = put_cu(w, v[1]);
			w = put_cu(w, last - v[1]);
			size_t rest = rl - (size_t)(q - f);   /* realtime and later fields */
			memcpy(w, q, rest);
			w += rest;
			rec[0] = 5;
			rec[1] = (uint8_t)(w - rec - 2);
			size_t newl = (size_t)(w - rec), oldl = 2 + rl;
			/* the chunk must keep a free byte: the def chunk is far from full */
			if (newl >= oldl && n + (newl - oldl) < (1u << 20)) {
				memmove(b + pos + newl, b + pos + oldl, n - pos - oldl);
				memcpy(b + pos, rec, newl);
				n += newl - oldl;
				(void)write_full(fd, b, n, 0);
			}
		}
	}
	free(b);
	close(fd);
}

static int has_suffix(const char *s, const char *sfx)
{
	size_t a = strlen(s), b = strlen(sfx);
	return a > b && !strcmp(s + a - b, sfx);
}

/* Recovered locations of one archive (for its packed definitions). */
struct loc_count {
	uint64_t id, events;
};

/* A part's packed local definitions NAME.tdefs (preload/defs_pack.c,
 * tr_ds_pack: magic "TRDF", version 3, then the one process: rank, pid,
 * host, group name, creator (5 x 4 bytes), first time, last time,
 * resolution, realtime (4 x 8), nlocs (4), per location id (8), name (4),
 * events (8)). Its last time and event counts are those of the last tick:
 * brought up to the recovered files, so that the unified ClockProperties
 * cover every recovered event. Another version is left alone. */
#define TD_MAGIC 0x46445254u
#define TD_VERSION 3u
#define TD_TLAST 40
#define TD_NLOCS 64
#define TD_LOCS 68
#define TD_LOC 20

static void patch_tdefs(const char *path, uint64_t last, const struct loc_count *lc, size_t n)
{
	uint8_t h[TD_LOCS];
	uint32_t magic, version, nprocs, nlocs;
	uint64_t t_last;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (read_full(fd, h, sizeof(h), 0) != (int)sizeof(h))
		goto out;
	memcpy(&magic, h, 4);
	memcpy(&version, h + 4, 4);
	memcpy(&nprocs, h + 8, 4);
	memcpy(&t_last, h + TD_TLAST, 8);
	memcpy(&nlocs, h + TD_NLOCS, 4);
	if (magic != TD_MAGIC || version != TD_VERSION || nprocs != 1 || nlocs > (1u << 20))
		goto out;
	if (last > t_last)
		(void)write_full(fd, &last, 8, TD_TLAST);
	for (uint32_t k = 0; k < nlocs; k++) {
		uint8_t l[TD_LOC];
		off_t at = TD_LOCS + (off_t)k * TD_LOC;
		uint64_t id;
		if (read_full(fd, l, sizeof(l), at) != (int)sizeof(l))
			break;
		memcpy(&id, l, 8);
		for (size_t i = 0; i < n; i++)
			if (lc[i].id == id)
				(void)write_full(fd, &lc[i].events, 8, at + 12);
	}
out:
	close(fd);
}

/* A local definitions file is whole: one chunk header first, the end
 * of file (02 01) last. */
static int local_def_ok(const char *path)
{
	uint8_t h, t[2];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int ok = fstat(fd, &st) == 0 && st.st_size >= HDR + 2 && read_full(fd, &h, 1, 0) == 1 && h == 0x03 &&
		 read_full(fd, t, 2, st.st_size - 2) == 2 && t[0] == 0x02 && t[1] == 0x01;
	close(fd);
	return ok;
}

/* to gets the bytes of from (replaced). 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	struct stat st;
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
	if (in >= 0 && fstat(in, &st) == 0 && (out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
		uint8_t *b = malloc((size_t)st.st_size + 1);
		if (b && read_full(in, b, (size_t)st.st_size, 0) == (int)st.st_size)
			ret = write_full(out, b, (size_t)st.st_size, 0);
		free(b);
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ret = -1;
	return ret;
}

/* Removes D/NAME<sfx>. */
static void unlink_own(const char *d, const char *name, const char *sfx)
{
	char p[4400];
	snprintf(p, sizeof(p), "%.4000s/%.255s%s", d, name, sfx);
	unlink(p);
}

/* The definitions snapshot is replaced by writing NAME.recovery.new whole
 * (its anchor last), then renaming it over NAME.recovery file by file, the
 * anchor last (preload/durable.c, write_snapshot). A kill between the two:
 * with NAME.recovery.new.otf2 the new snapshot is whole and its renames are
 * finished here; without it, the new one was cut and goes (the previous
 * snapshot is whole). */
static void settle_snapshot(const char *d, const char *name)
{
	char nw[4400], old[4400], p[8800], q[8800];
	snprintf(nw, sizeof(nw), "%.4000s/%.255s.recovery.new", d, name);
	snprintf(old, sizeof(old), "%.4000s/%.255s.recovery", d, name);
	snprintf(p, sizeof(p), "%s.otf2", nw);
	int whole = access(p, F_OK) == 0;
	DIR *dd = opendir(nw);
	struct dirent *e;
	if (whole)
		mkdir(old, 0755);
	while (dd && (e = readdir(dd))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%.255s", nw, e->d_name);
		snprintf(q, sizeof(q), "%s/%.255s", old, e->d_name);
		if (!whole || rename(p, q) != 0)
			unlink(p);
	}
	if (dd)
		closedir(dd);
	rmdir(nw);
	snprintf(p, sizeof(p), "%s.def", nw);
	snprintf(q, sizeof(q), "%s.def", old);
	if (!whole || (access(p, F_OK) == 0 && rename(p, q) != 0))
		unlink(p);
	snprintf(p, sizeof(p), "%s.otf2", nw);
	snprintf(q, sizeof(q), "%s.otf2", old);
	if (whole && rename(p, q) != 0)
		unlink(p);
	snprintf(p, sizeof(p), "%s.otf2.part", nw);
	unlink(p);
}

/* A process is still running (its pid exists). */
static int pid_alive(uint64_t pid)
{
	return pid > 0 && pid < (1u << 30) && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
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

/* A member of the tree in procs still runs (live.<pid>: "<start time>
 * ...", the start time against pid reuse, preload/proctree.c): its pid,
 * else 0. */
static long running_member(const char *procs)
{
	long found = 0;
	DIR *dd = opendir(procs);
	struct dirent *e;
	while (dd && !found && (e = readdir(dd))) {
		char p[4400], b[1024];
		long pid;
		unsigned long long start = 0, st = 0;
		if (sscanf(e->d_name, "live.%ld", &pid) != 1 || pid <= 0 || !pid_alive((uint64_t)pid))
			continue;
		snprintf(p, sizeof(p), "%.4000s/%.255s", procs, e->d_name);
		FILE *f = fopen(p, "r");
		int ok = f && fscanf(f, "%llu", &start) == 1;
		if (f)
			fclose(f);
		snprintf(p, sizeof(p), "/proc/%ld/stat", pid);
		f = fopen(p, "r");
		size_t n = f ? fread(b, 1, sizeof(b) - 1, f) : 0;
		if (f)
			fclose(f);
		b[n] = 0;
		const char *q = strrchr(b, ')');   /* fields 3.. after the command */
		if (q && (q[1] != ' ' || q[2] == 'Z' || q[2] == 'X'))
			continue;   /* ended, not reaped yet */
		for (int k = 2; q && *q && k < 22; k++)
			q = strchr(q + 1, ' ');
		if (ok && q && sscanf(q, " %llu", &st) == 1 && st == start)
			found = pid;
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
