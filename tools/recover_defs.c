/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover_defs.c - definition repair of `tracer recover` (recover.c): the
 * trace length widened, a part's packed definitions brought up to its
 * recovered events, local definitions files checked, the snapshot settled.
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
#include "otf2r.h"
#include "otf2w.h"
#include "recover_int.h"

/* ClockProperties of the global definitions NAME.def: the trace length
 * widened to cover last (read with format/'s chunk decoder, written with
 * its encoder; the record may grow: the definitions after it move, within
 * the chunk, which is far from full). */
void widen_clock(const char *def, uint64_t last)
{
	int fd = open(def, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < HDR + 4) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n + OTF2W_GDEF_CLOCK_PROPERTIES_MAX);
	otf2r_chunk *k = b && read_full(fd, b, n, 0) == (int)n ? otf2r_chunk_open(b, n, OTF2R_CHUNK_GLOBAL_DEFS) : NULL;
	otf2r_chunk_rec r;
	int found = 0;
	while (k && !found && otf2r_chunk_next(k, &r) > 0)
		found = r.type == OTF2R_GDEF_CLOCK_PROPERTIES && r.decoded;
	otf2r_chunk_close(k);
	const otf2r_gdef_clock_properties *c = &r.u.gdef.clock_properties;
	if (found && last > c->global_offset && last - c->global_offset > c->trace_length) {
		uint8_t rec[OTF2W_GDEF_CLOCK_PROPERTIES_MAX];
		size_t nl = (size_t)(otf2w_gdef_put_clock_properties(rec, c->timer_resolution, c->global_offset,
								      last - c->global_offset, c->realtime_timestamp) - rec);
		if (nl >= r.len && n + (nl - r.len) < (1u << 20)) {
			memmove(b + r.off + nl, b + r.off + r.len, n - r.off - r.len);
			memcpy(b + r.off, rec, nl);
			n += nl - r.len;
			(void)write_full(fd, b, n, 0);
		}
	}
	free(b);
	close(fd);
}

int has_suffix(const char *s, const char *sfx)
{
	size_t a = strlen(s), b = strlen(sfx);
	return a > b && !strcmp(s + a - b, sfx);
}

/* Recovered locations of one archive (for its packed definitions). */

/* A part's packed local definitions NAME.tdefs (preload/defs/defs_pack.c,
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

void patch_tdefs(const char *path, uint64_t last, const struct loc_count *lc, size_t n)
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
int local_def_ok(const char *path)
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
int copy_file(const char *from, const char *to)
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
void unlink_own(const char *d, const char *name, const char *sfx)
{
	char p[4400];
	snprintf(p, sizeof(p), "%.4000s/%.255s%s", d, name, sfx);
	unlink(p);
}

/* The definitions snapshot is replaced by writing NAME.recovery.new whole
 * (its anchor last), then renaming it over NAME.recovery file by file, the
 * anchor last (preload/archive/durable.c, write_snapshot). A kill between the two:
 * with NAME.recovery.new.otf2 the new snapshot is whole and its renames are
 * finished here; without it, the new one was cut and goes (the previous
 * snapshot is whole). */
void settle_snapshot(const char *d, const char *name)
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
