/* SPDX-License-Identifier: BSD-3-Clause */
/* reader_evt.c - otf2r event reading: one location's .evt file through a
 * small window that grows only for a record larger than it (never beyond
 * a chunk), mapping tables and clock offsets of <loc>.def, and the merge of
 * all locations in time order (binary heap). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reader_arch.h"

#define WINDOW (64 * 1024)
#define MAX_OPEN_FDS 128

struct otf2r_evt_reader {
	otf2r_archive *ar;
	uint64_t loc;
	char path[PATH_MAX + 32];
	int fd;                       /* -1: opened per read */
	uint64_t fsize, cs;
	uint8_t *buf;
	size_t cap;
	uint64_t chunk_off, chunk_end, win_off;
	otf2r__cur c;
	uint64_t time, pos;
	int eof;
	otf2r__maps maps;
	otf2r__arena mem;             /* local definitions */
	otf2r__arena scratch;         /* arrays of the current event */
	int scratch_used;
	otf2r_attr *attrs;
	uint32_t nattrs, capattrs;
	uint64_t *ct;                 /* clock offsets: times, offsets */
	int64_t *co;
	size_t nco, capco, ci;
};

static int rfail(otf2r_evt_reader *r, const char *what)
{
	return otf2r__fail(r->ar, "%s: %s (chunk at %" PRIu64 ")", r->path, what, r->chunk_off);
}

static int read_at(otf2r_evt_reader *r, uint64_t off, uint8_t *dst, size_t n)
{
	int fd = r->fd;
	if (fd < 0 && (fd = open(r->path, O_RDONLY | O_CLOEXEC)) < 0)
		return otf2r__fail(r->ar, "%s: %s", r->path, strerror(errno));
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, dst + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (fd != r->fd)
		close(fd);
	if (got != n)
		return otf2r__fail(r->ar, "%s: short read at %" PRIu64, r->path, off);
	return 0;
}

/* 0 = chunk loaded, 1 = end of file, -1 = error */
static int start_chunk(otf2r_evt_reader *r, uint64_t off)
{
	if (off >= r->fsize) {
		r->eof = 1;
		return 1;
	}
	r->chunk_off = off;
	r->chunk_end = off + r->cs < r->fsize ? off + r->cs : r->fsize;
	size_t n = r->chunk_end - off < r->cap ? (size_t)(r->chunk_end - off) : r->cap;
	if (read_at(r, off, r->buf, n))
		return -1;
	r->win_off = off;
	if (n < 18 || r->buf[0] != 3 || (r->buf[1] != 0x42 && r->buf[1] != 0x23))
		return rfail(r, "bad chunk header");
	r->c.be = r->buf[1] == 0x23;
	r->c.p = r->buf + 18;
	r->c.end = r->buf + n;
	return 0;
}

static int window_at_chunk_end(const otf2r_evt_reader *r)
{
	return r->win_off + (uint64_t)(r->c.end - r->buf) >= r->chunk_end;
}

/* Move [from, end) to the window start and read more of the chunk. */
static int refill(otf2r_evt_reader *r, const uint8_t *from)
{
	if (window_at_chunk_end(r))
		return rfail(r, "record runs past the end of its chunk");
	uint64_t foff = r->win_off + (uint64_t)(from - r->buf);
	size_t keep = (size_t)(r->c.end - from);
	if (keep * 2 > r->cap) {                 /* a record as large as the window */
		size_t cap = r->cap * 2;
		uint8_t *nb = malloc(cap);
		if (!nb)
			return otf2r__fail(r->ar, "out of memory");
		memcpy(nb, from, keep);
		free(r->buf);
		r->buf = nb;
		r->cap = cap;
	} else {
		memmove(r->buf, from, keep);
	}
	uint64_t left = r->chunk_end - (foff + keep);
	size_t n = left < r->cap - keep ? (size_t)left : r->cap - keep;
	if (read_at(r, foff + keep, r->buf + keep, n))
		return -1;
	r->win_off = foff;
	r->c.p = r->buf;
	r->c.end = r->buf + keep + n;
	return 0;
}

static uint64_t clock_apply(otf2r_evt_reader *r, uint64_t t)
{
	if (r->nco < 2)
		return t;
	size_t i = r->ci;
	if (!(r->ct[i] <= t && (i + 2 >= r->nco || t < r->ct[i + 1]))) {
		size_t lo = 0, hi = r->nco - 1;   /* last i with ct[i] <= t */
		while (lo + 1 < hi) {
			size_t mid = (lo + hi) / 2;
			if (r->ct[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
		i = lo;
		if (i > r->nco - 2)
			i = r->nco - 2;
		r->ci = i;
	}
	double slope = (double)(r->co[i + 1] - r->co[i]) / (double)(r->ct[i + 1] - r->ct[i]);
	double dt = t >= r->ct[i] ? (double)(t - r->ct[i]) : -(double)(r->ct[i] - t);
	return t + (uint64_t)r->co[i] + (uint64_t)(int64_t)floor(slope * dt + 0.5);
}

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int local_def(void *ud, unsigned type, const union otf2r_ldef_u *u)
{
	otf2r_evt_reader *r = ud;
	if (type == OTF2R_LDEF_MAPPING_TABLE) {
		unsigned mt = u->mapping_table.mapping_type;
		const otf2r_idmap *m = &u->mapping_table.id_map;
		if (mt >= OTF2R__NMAPS)
			return 0;                       /* unknown types are ignored */
		if (r->maps.ids[mt])
			return otf2r__fail(r->ar, "%s: two mapping tables of type %u", r->path, mt);
		r->maps.ids[mt] = (uint64_t *)m->ids;
		r->maps.count[mt] = m->count;
		r->maps.sparse[mt] = m->mode;
		if (m->mode)
			qsort(r->maps.ids[mt], (size_t)m->count, 2 * sizeof(uint64_t), cmp_pair);
		r->maps.any = 1;
	} else if (type == OTF2R_LDEF_CLOCK_OFFSET) {
		if (r->nco == r->capco) {
			size_t cap = r->capco ? 2 * r->capco : 16;
			uint64_t *ct = realloc(r->ct, cap * sizeof *ct);
			if (ct)
				r->ct = ct;
			int64_t *co = realloc(r->co, cap * sizeof *co);
			if (co)
				r->co = co;
			if (!ct || !co)
				return otf2r__fail(r->ar, "out of memory");
			r->capco = cap;
		}
		if (r->nco && u->clock_offset.time <= r->ct[r->nco - 1])
			return otf2r__fail(r->ar, "%s: clock offsets not in increasing time", r->path);
		r->ct[r->nco] = u->clock_offset.time;
		r->co[r->nco++] = u->clock_offset.offset;
	}
	return 0;
}

static int open_reader(otf2r_archive *ar, uint64_t location, int snap, otf2r_evt_reader **out)
{
	*out = NULL;
	otf2r_evt_reader *r = calloc(1, sizeof *r);
	if (!r)
		return otf2r__fail(ar, "out of memory");
	r->ar = ar;
	r->loc = location;
	r->fd = -1;
	r->cs = ar->anchor.event_chunk_size;
	snprintf(r->path, sizeof r->path, "%s/%" PRIu64 ".%s", ar->base, location,
		 snap ? "snap" : "evt");
	r->cap = WINDOW;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		free(r);
		return otf2r__fail(ar, "out of memory");
	}
	if (!snap && otf2r__walk_local_defs(ar, location, local_def, r, &r->mem))
		goto fail;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		otf2r__fail(ar, "%s: %s", r->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	r->fsize = (uint64_t)st.st_size;
	if (ar->open_fds < MAX_OPEN_FDS) {
		r->fd = fd;
		ar->open_fds++;
	} else {
		close(fd);
	}
	if (r->fsize == 0) {
		rfail(r, "empty event file");
		goto fail;
	}
	if (start_chunk(r, 0) < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	otf2r_evt_close(r);
	return -1;
}

int otf2r_evt_open(otf2r_archive *ar, uint64_t location, otf2r_evt_reader **out)
{
	return open_reader(ar, location, 0, out);
}

void otf2r_evt_close(otf2r_evt_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0) {
		close(r->fd);
		r->ar->open_fds--;
	}
	free(r->buf);
	free(r->attrs);
	free(r->ct);
	free(r->co);
	otf2r__arena_free(&r->mem);
	otf2r__arena_free(&r->scratch);
	free(r);
}

/* 0 ok, 1 needs more bytes, -1 corrupt */
static int attr_list(otf2r_evt_reader *r)
{
	uint64_t len;
	if (otf2r__reclen(&r->c, &len))
		return 1;
	otf2r__cur c = { r->c.p, r->c.p + len, r->c.be };
	uint32_t n;
	if (otf2r__cu32(&c, &n) || n > len)
		return -1;
	if (n > r->capattrs) {
		otf2r_attr *a = realloc(r->attrs, n * sizeof *a);
		if (!a)
			return -1;
		r->attrs = a;
		r->capattrs = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		otf2r_attr *a = &r->attrs[i];
		if (otf2r__cu32(&c, &a->id) || otf2r__u8(&c, &a->type) ||
		    otf2r__av(&c, a->type, &a->value))
			return -1;
		a->id = otf2r__map32(&r->maps, OTF2R_MAP_ATTRIBUTE, a->id);
		if (a->type >= 11 && a->type <= 25 && r->maps.any &&
		    a->value != (a->type == 13 ? UINT64_MAX : UINT32_MAX))
			a->value = otf2r__map(&r->maps, a->type - 11u, a->value);
	}
	r->nattrs = n;
	r->c.p += len;
	return 0;
}

/* Timestamps, attribute lists, chunk and file ends: up to the next record.
 * 1 = *tp is its type, r->c is after the type byte, *startp at the type
 * byte (refill(r, start) and `continue` re-reads it); 0 = end; -1 = error. */
static int next_type(otf2r_evt_reader *r, unsigned *tp, const uint8_t **startp)
{
	if (r->eof)
		return 0;
	for (;;) {
		const uint8_t *start = r->c.p;
		if (start >= r->c.end) {
			if (window_at_chunk_end(r)) {   /* chunk without end marker */
				int rc = start_chunk(r, r->chunk_off + r->cs);
				if (rc)
					return rc > 0 ? 0 : -1;
			} else if (refill(r, start)) {
				return -1;
			}
			continue;
		}
		unsigned t = *r->c.p++;
		if (t == 0) {                           /* END_OF_CHUNK */
			int rc = start_chunk(r, r->chunk_off + r->cs);
			if (rc)
				return rc > 0 ? 0 : -1;
			continue;
		}
		if (t == 1 || t == 2) {                 /* END_OF_BUFFER / FILE */
			r->eof = 1;
			return 0;
		}
		if (t == 5) {
			uint64_t raw;
			if (otf2r__t64(&r->c, &raw)) {
				if (refill(r, start))
					return -1;
				continue;
			}
			r->time = clock_apply(r, raw);
			continue;
		}
		if (t == 6) {
			int rc = attr_list(r);
			if (rc < 0)
				return rfail(r, "bad attribute list");
			if (rc > 0) {
				if (refill(r, start))
					return -1;
				r->nattrs = 0;
			}
			continue;
		}
		*tp = t;
		*startp = start;
		return 1;
	}
}

int otf2r_evt_next(otf2r_evt_reader *r, otf2r_event *ev)
{
	for (;;) {
		unsigned t;
		const uint8_t *start;
		int nt = next_type(r, &t, &start);
		if (nt <= 0)
			return nt;
		if (t == OTF2R_EVT_ENTER || t == OTF2R_EVT_LEAVE) {   /* fast path: no arrays */
			if (otf2r__cu32(&r->c, &ev->u.enter.region)) {
				r->c.p = start;
				if (window_at_chunk_end(r))
					return rfail(r, "truncated event");
				if (refill(r, start))
					return -1;
				continue;
			}
			r->pos++;
			if (r->maps.any)
				ev->u.enter.region = otf2r__map32(&r->maps, OTF2R_MAP_REGION,
								  ev->u.enter.region);
			goto deliver;
		}
		otf2r__cur rc = r->c;
		if (!otf2r__evt_single[t]) {
			uint64_t len;
			if (otf2r__reclen(&r->c, &len)) {
				if (refill(r, start))
					return -1;
				continue;
			}
			rc.p = r->c.p;
			rc.end = r->c.p + len;
			r->c.p += len;
		}
		if (r->scratch_used)
			otf2r__arena_reset(&r->scratch);
		r->scratch_used = 1;
		int d = otf2r__dec_evt(&rc, t, &ev->u, &r->scratch);
		if (d < 0) {
			if (otf2r__evt_single[t] && !window_at_chunk_end(r)) {
				if (refill(r, start))
					return -1;
				continue;
			}
			return rfail(r, otf2r__evt_single[t] ? "truncated event" : "bad event record");
		}
		if (otf2r__evt_single[t])
			r->c.p = rc.p;
		r->pos++;
		if (d > 0) {                            /* unknown event: skipped */
			r->nattrs = 0;
			continue;
		}
		if (r->maps.any)
			otf2r__map_evt(t, &ev->u, &r->maps);
		if (t == OTF2R_EVT_BUFFER_FLUSH)
			ev->u.buffer_flush.stop_time = clock_apply(r, ev->u.buffer_flush.stop_time);
deliver:
		ev->location = r->loc;
		ev->time = r->time;
		ev->pos = r->pos;
		ev->type = (uint8_t)t;
		ev->nattrs = r->nattrs;
		ev->attrs = r->attrs;
		r->nattrs = 0;
		return 1;
	}
}

/* ---- snapshots (<loc>.snap: no mapping, no clock offsets) ---- */

int otf2r_snap_open(otf2r_archive *ar, uint64_t location, otf2r_evt_reader **out)
{
	return open_reader(ar, location, 1, out);
}

int otf2r_snap_next(otf2r_evt_reader *r, otf2r_snap_event *ev)
{
	unsigned t;
	const uint8_t *start;
	int nt;
	while ((nt = next_type(r, &t, &start)) > 0) {
		uint64_t len;
		if (otf2r__reclen(&r->c, &len)) {     /* not all in the window */
			if (refill(r, start))
				return -1;
			continue;
		}
		otf2r__cur rc = { r->c.p, r->c.p + len, r->c.be };
		r->c.p += len;
		otf2r__arena_reset(&r->scratch);
		int d = otf2r__dec_snap(&rc, t, &ev->u, &r->scratch);
		if (d < 0)
			return rfail(r, "bad snapshot record");
		r->pos++;
		if (d == 0) {
			*ev = (otf2r_snap_event){ .location = r->loc, .time = r->time, .pos = r->pos,
						  .type = (uint8_t)t, .nattrs = r->nattrs,
						  .attrs = r->attrs, .u = ev->u };
			r->nattrs = 0;
			return 1;
		}
		r->nattrs = 0;                          /* unknown record: skipped */
	}
	return nt;
}

/* ---- merge ---- */

struct otf2r_merge {
	size_t n, live;
	otf2r_evt_reader **rd;
	otf2r_event *cur;
	size_t *heap;                 /* indices into rd/cur */
	ssize_t advance;              /* reader whose event was returned last */
};

static int before(const otf2r_merge *m, size_t a, size_t b)
{
	const otf2r_event *x = &m->cur[a], *y = &m->cur[b];
	if (x->time != y->time)
		return x->time < y->time;
	return x->location < y->location;
}

static void sift_down(otf2r_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, s = i;
		if (l < m->live && before(m, m->heap[l], m->heap[s]))
			s = l;
		if (l + 1 < m->live && before(m, m->heap[l + 1], m->heap[s]))
			s = l + 1;
		if (s == i)
			return;
		size_t t = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = t;
		i = s;
	}
}

int otf2r_merge_open(otf2r_archive *ar, const uint64_t *locations, size_t n, otf2r_merge **out)
{
	*out = NULL;
	if (!locations)
		n = ar->nlocs;
	otf2r_merge *m = calloc(1, sizeof *m);
	if (!m)
		return otf2r__fail(ar, "out of memory");
	m->rd = calloc(n + 1, sizeof *m->rd);
	m->cur = calloc(n + 1, sizeof *m->cur);
	m->heap = calloc(n + 1, sizeof *m->heap);
	m->n = n;
	m->advance = -1;
	if (!m->rd || !m->cur || !m->heap) {
		otf2r_merge_close(m);
		return otf2r__fail(ar, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t loc = locations ? locations[i] : ar->locs[i]->self;
		if (otf2r_evt_open(ar, loc, &m->rd[i])) {
			otf2r_merge_close(m);
			return -1;
		}
		int rc = otf2r_evt_next(m->rd[i], &m->cur[i]);
		if (rc < 0) {
			otf2r_merge_close(m);
			return -1;
		}
		if (rc > 0)
			m->heap[m->live++] = i;
	}
	for (size_t i = m->live / 2 + 1; i-- > 0;)
		sift_down(m, i);
	*out = m;
	return 0;
}

int otf2r_merge_next(otf2r_merge *m, otf2r_event *ev)
{
	if (m->advance >= 0) {
		size_t i = (size_t)m->advance;
		m->advance = -1;
		int rc = otf2r_evt_next(m->rd[i], &m->cur[i]);
		if (rc < 0)
			return -1;
		if (rc == 0)
			m->heap[0] = m->heap[--m->live];
		if (m->live)
			sift_down(m, 0);
	}
	if (!m->live)
		return 0;
	size_t i = m->heap[0];
	*ev = m->cur[i];
	m->advance = (ssize_t)i;
	return 1;
}

void otf2r_merge_close(otf2r_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n && m->rd; i++)
		otf2r_evt_close(m->rd[i]);
	free(m->rd);
	free(m->cur);
	free(m->heap);
	free(m);
}
