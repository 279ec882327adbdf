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
 * the master location its ProgramEnd (exit status 128 + 9: the run was
 * killed), the file ends (02 01); the trace length of ClockProperties is
 * widened to the last event; the definitions become NAME.def and the
 * anchor NAME.otf2 (last: a reader never sees a half-recovered archive).
 * The anchor property TRACER::RUN_END says the run was killed.
 * DIR may be the archive directory or an MPI run's (DIR/ranks/rank<r>.*).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../preload/durable_index.h"
#include "recover.h"

#define HDR 18

struct loc_result {
	uint64_t events;
	uint64_t last_time;
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

/* Fix one event file; master: ProgramEnd. -1 on an I/O error. */
static int fix_evt(const char *path, const struct tr_durable_slot *slot, int master, uint64_t cs,
		   struct loc_result *res)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	memset(res, 0, sizeof(*res));
	uint64_t size = (uint64_t)st.st_size;
	if (size % cs != 0) {
		close(fd);   /* ended by the process itself (cut after 02 01) */
		return 1;
	}
	uint8_t *buf = calloc(1, cs + 64);
	uint32_t *stack = NULL;
	size_t depth = 0, cap = 0;
	int begin = 0, end = 0, ret = 0;
	uint64_t cut_chunk = 0, cut_bytes = HDR, chunk_first = 1, nev = 0, k;
	if (slot && slot->state == TR_DURABLE_VALID && (slot->chunk + 1) * cs <= size && slot->bytes >= HDR &&
	    slot->bytes <= cs) {
		cut_chunk = slot->chunk;
		cut_bytes = slot->bytes;
	}
	size_t pos = HDR;
	for (k = 0; k <= cut_chunk && size > 0; k++) {
		if (read_full(fd, buf, cs, (off_t)(k * cs)) != (int)cs || buf[0] != 0x03) {
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
	}
	/* the records to append: time, Leaves, ProgramEnd, end of file */
	size_t need = 9 + depth * 6 + (master && begin && !end ? 12 : 0) + 2;
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
	if (depth || (master && begin && !end) || pos == HDR) {
		*p++ = 5;
		memcpy(p, &res->last_time, 8);
		p += 8;
	}
	while (depth) {
		*p++ = 13;
		p = put_cu(p, stack[--depth]);
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

/* One process's files: D/NAME.durable. 0 recovered, -1 error. */
static int recover_one(const char *d, const char *name, FILE *msg)
{
	char p[8400], q[8400], evtdir[8300], snapdir[8300];
	struct tr_durable_index *ix = malloc(sizeof(*ix));
	int fd;

	snprintf(p, sizeof(p), "%.4000s/%.255s.durable", d, name);
	if (!ix || (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(msg, "tracer: recover: cannot read %s: %s\n", p, strerror(errno));
		free(ix);
		return -1;
	}
	memset(ix, 0, sizeof(*ix));
	int n = read_full(fd, ix, sizeof(*ix), 0);
	close(fd);
	if (n < (int)sizeof(*ix) || memcmp(ix->magic, TR_DURABLE_MAGIC, 8) || !ix->chunk_size) {
		fprintf(msg, "tracer: recover: %s is no durable index\n", p);
		free(ix);
		return -1;
	}
	snprintf(q, sizeof(q), "%.4000s/%.255s.recovery.otf2", d, name);
	if (access(q, R_OK) != 0) {
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
	DIR *dd = opendir(evtdir);
	struct dirent *e;
	while (dd && (e = readdir(dd))) {
		if (!has_suffix(e->d_name, ".evt"))
			continue;
		uint64_t loc = strtoull(e->d_name, NULL, 10);
		const struct tr_durable_slot *s = NULL;
		for (uint64_t i = 0; i < ix->nslots && i < TR_DURABLE_SLOTS; i++)
			if (ix->slot[i].location == loc)
				s = &ix->slot[i];
		struct loc_result r = { 0, 0 };
		snprintf(p, sizeof(p), "%.4300s/%.255s", evtdir, e->d_name);
		int rc = fix_evt(p, s, (loc & 0xffffffffu) == 0, ix->chunk_size, &r);
		if (rc < 0)
			errors++;
		nloc++;
		events += r.events;
		if (r.last_time > last)
			last = r.last_time;
	}
	if (dd)
		closedir(dd);
	/* the snapshot's empty local files for locations without a file of ours */
	dd = opendir(snapdir);
	while (dd && (e = readdir(dd))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%.4300s/%.255s", snapdir, e->d_name);
		snprintf(q, sizeof(q), "%.4300s/%.255s", evtdir, e->d_name);
		if (access(q, F_OK) != 0)
			rename(p, q);
		else
			unlink(p);
	}
	if (dd)
		closedir(dd);
	rmdir(snapdir);
	snprintf(p, sizeof(p), "%.4000s/%.255s.recovery.def", d, name);
	snprintf(q, sizeof(q), "%.4000s/%.255s.def", d, name);
	if (rename(p, q) != 0)
		errors++;
	widen_clock(q, last);
	snprintf(p, sizeof(p), "%.4000s/%.255s.recovery.otf2", d, name);
	snprintf(q, sizeof(q), "%.4000s/%.255s.otf2", d, name);
	if (rename(p, q) != 0)
		errors++;
	snprintf(p, sizeof(p), "%.4000s/%.255s.durable", d, name);
	unlink(p);
	snprintf(p, sizeof(p), "%.4000s/%.255s.claim", d, name);
	unlink(p);
	fprintf(msg, "tracer: recovered %s: %u locations, %llu events (the process %llu was killed; open regions "
		"closed at their last recorded time)%s\n", q, nloc, (unsigned long long)events,
		(unsigned long long)ix->pid, errors ? "; some files could not be fixed" : "");
	free(ix);
	return errors ? -1 : 0;
}

/* Every NAME.durable in d. Returns the number recovered, -1 on errors. */
static int recover_in(const char *d, FILE *msg, int *errs)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	int n = 0;
	char names[64][256];
	int nn = 0;
	while (dd && (e = readdir(dd)) && nn < 64) {
		size_t l = strlen(e->d_name);
		if (has_suffix(e->d_name, ".durable") && l - 8 < sizeof(names[0])) {
			memcpy(names[nn], e->d_name, l - 8);
			names[nn++][l - 8] = 0;
		}
	}
	if (dd)
		closedir(dd);
	for (int i = 0; i < nn; i++) {
		if (recover_one(d, names[i], msg) == 0)
			n++;
		else
			(*errs)++;
	}
	return n;
}

int tracer_recover_dir(const char *dir, FILE *msg)
{
	char r[4200];
	int errs = 0;
	int n = recover_in(dir, msg, &errs);
	snprintf(r, sizeof(r), "%.4000s/ranks", dir);
	n += recover_in(r, msg, &errs);
	if (errs)
		return 2;
	return n ? 0 : 1;
}

static const char recover_usage[] =
	"usage: tracer recover DIR\n"
	"\n"
	"Rebuild the archive of a process traced with TRACER_DURABLE that was killed\n"
	"(SIGKILL, OOM killer, time limit) before it wrote it: every event up to its\n"
	"last durability tick, open regions closed at the last recorded time, ProgramEnd\n"
	"with status 137, anchor property TRACER::RUN_END. DIR is the archive directory\n"
	"(an MPI run's: every rank in DIR/ranks; then `tracer merge DIR`).\n"
	"Exit status: 0 recovered, 1 nothing to recover, 2 errors.\n";

int tracer_recover_main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(recover_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	int rc = tracer_recover_dir(argv[1], stderr);
	if (rc == 1)
		fprintf(stderr, "tracer: recover: nothing to recover in %s (no NAME.durable: the archive was "
			"written, or TRACER_DURABLE was off)\n", argv[1]);
	return rc;
}
