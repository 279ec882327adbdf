/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * close.c - the end of an archive: the anchor file (written then renamed),
 * closing every writer (normal, emergency, abandon after fork, discard).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"

/* ---- anchor ------------------------------------------------------------------------- */

/* A small write-through sink with a fixed buffer (no allocation). */
struct sink {
	int fd;
	size_t n;
	int err;
	uint8_t buf[2048];
};

static void sink_flush(struct sink *s)
{
	if (s->n && !s->err)
		s->err = otf2w__pwrite_all(s->fd, s->buf, s->n, -1);
	s->n = 0;
}

static void sink_put(struct sink *s, const void *d, size_t len)
{
	const uint8_t *p = d;
	while (len) {
		if (s->n == sizeof(s->buf))
			sink_flush(s);
		size_t k = sizeof(s->buf) - s->n;
		if (k > len)
			k = len;
		memcpy(s->buf + s->n, p, k);
		s->n += k;
		p += k;
		len -= k;
	}
}

static void sink_u8(struct sink *s, uint8_t v)
{
	sink_put(s, &v, 1);
}

static void sink_u32(struct sink *s, uint32_t v)
{
	sink_put(s, &v, 4);
}

static void sink_u64(struct sink *s, uint64_t v)
{
	sink_put(s, &v, 8);
}

static void sink_str(struct sink *s, const char *str)
{
	sink_put(s, str, strlen(str) + 1);
}

static uint64_t count_locations(const otf2w_archive *ar)
{
	return ar->nlocations;
}

/* Writes NAME.otf2 (otf2-format.md §2) through NAME.otf2.part and a
 * rename: a process killed while writing never leaves a half anchor.
 * Async-signal-safe when emerg. */
static otf2w_status write_anchor(otf2w_archive *ar, int emerg)
{
	char path[4096], why[1024], part[4096];
	struct sink s;
	int fd;

	if (otf2w__path_join(path, sizeof(path), ar->dir, "/", ar->name, ".otf2", NULL) >= sizeof(path) ||
	    otf2w__path_join(part, sizeof(part), path, ".part", NULL) >= sizeof(part))
		return emerg ? OTF2W_E_INVALID_ARGUMENT
			     : otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long");
	if (emerg) {
		otf2w__make_dirs_nolock(ar, 0);
	} else {
		otf2w_status st = otf2w__make_dirs(ar, 0);
		if (st)
			return st;
	}
	fd = otf2w__open(part, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return emerg ? OTF2W_E_IO
			     : otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path,
				     otf2w__open_error(path, errno, why, sizeof(why)));
	s.fd = fd;
	s.n = 0;
	s.err = 0;
	sink_u8(&s, 0x03);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	sink_u8(&s, 0x42);
#else
	sink_u8(&s, 0x23);
#endif
	sink_str(&s, "OTF2");
	sink_u8(&s, 3);		/* anchor format version */
	sink_u8(&s, 2);		/* trace format version (OTF2 3.0 writes 2) */
	sink_u8(&s, 3);		/* OTF2 version 3.0.2 */
	sink_u8(&s, 0);
	sink_u8(&s, 2);
	sink_u64(&s, ar->evt_chunk);
	sink_u64(&s, ar->def_chunk);
	sink_u8(&s, 1);		/* substrate POSIX */
	sink_u8(&s, 1);		/* compression NONE */
	sink_u64(&s, count_locations(ar));
	sink_u64(&s, ar->gdef ? ar->gdef->b.f.nevents : 0);
	sink_str(&s, ar->machine);
	sink_str(&s, ar->creator);
	sink_str(&s, ar->description);
	sink_u32(&s, ar->nprops);
	for (uint32_t i = 0; i < ar->nprops; i++) {
		sink_str(&s, ar->props[i].name);
		sink_str(&s, ar->props[i].value);
	}
	sink_u64(&s, ar->trace_id);
	sink_u32(&s, ar->nsnapshots);
	sink_u32(&s, 0);	/* thumbnails */
	sink_u8(&s, 0x02);
	sink_u8(&s, 0x01);
	sink_u8(&s, 0x00);
	sink_flush(&s);
	if (otf2w_sys.close(fd) != 0 && !s.err)
		s.err = errno;
	if (!s.err && otf2w_sys.rename(part, path) != 0)
		s.err = errno;
	if (s.err) {
		otf2w_sys.unlink(part);
		return emerg ? OTF2W_E_IO
			     : otf2w__seterr(ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(s.err));
	}
	return OTF2W_OK;
}

/* ---- archive close ---------------------------------------------------------------- */

static void keep_first(otf2w_status *first, otf2w_status st)
{
	if (*first == OTF2W_OK && st != OTF2W_OK)
		*first = st;
}

/* Header + 02 01 for a location that has no file of this kind. */
static otf2w_status write_empty(otf2w_archive *ar, int kind, uint64_t loc, int emerg)
{
	struct otf2w_buf b;

	otf2w__buf_init(&b, ar, kind, loc);
	return otf2w__buf_write_final(&b, emerg);
}

/* Every location that needs per-location files: global defs + evt writers. */
static int loc_known(const otf2w_archive *ar, uint64_t loc, uint64_t upto_defs)
{
	for (uint64_t i = 0; i < upto_defs; i++)
		if (ar->locations[i] == loc)
			return 1;
	return 0;
}

static otf2w_status close_kind(otf2w_archive *ar, struct otf2w_vec *v, int kind, int emerg)
{
	otf2w_status first = OTF2W_OK;

	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		if (b->deferred) {
			keep_first(&first, otf2w__buf_write_deferred(b, emerg));
			continue;
		}
		if (b->closed)
			continue;
		if (ar->events_only && kind != OTF2W_BUF_EVT && b->f.nevents == 0) {
			b->closed = 1;   /* (nothing was ever flushed: no file) */
			continue;
		}
		if (emerg)
			keep_first(&first, otf2w__buf_write_final(b, 1));
		else
			keep_first(&first, otf2w__close_buf(ar, b));
	}
	if (ar->events_only)
		return first;   /* no empty files */
	/* locations of the global defs without a writer of this kind */
	for (uint64_t i = 0; i < ar->nlocations; i++) {
		if (otf2w__vec_find(v, ar->locations[i]) ||
		    (kind == OTF2W_BUF_EVT && ar->elsewhere && ar->elsewhere(ar->locations[i], ar->elsewhere_ud)))
			continue;
		keep_first(&first, write_empty(ar, kind, ar->locations[i], emerg));
	}
	/* locations with an event writer but no global def (still get files) */
	if (kind != OTF2W_BUF_EVT) {
		for (uint32_t i = 0; i < ar->evt.n; i++) {
			struct otf2w_buf *e = ar->evt.v[i];
			if (otf2w__vec_find(v, e->location) || loc_known(ar, e->location, ar->nlocations))
				continue;
			keep_first(&first, write_empty(ar, kind, e->location, emerg));
		}
	}
	return first;
}

static void free_vec(struct otf2w_vec *v)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		otf2w__buf_release(b);
		otf2w__buf_close_own(b);
		otf2w_sys.free(b->deferred);
		otf2w_sys.free(b);
	}
	otf2w_sys.free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

void otf2w__archive_free(otf2w_archive *ar)
{
	otf2w__forget_error(ar);
	free_vec(&ar->evt);
	free_vec(&ar->def);
	free_vec(&ar->snap);
	if (ar->gdef) {
		otf2w__buf_release(&ar->gdef->b);
		otf2w__buf_close_own(&ar->gdef->b);
		otf2w_sys.free(ar->gdef);
	}
	if (ar->marker) {
		otf2w__buf_release(&ar->marker->b);
		otf2w__buf_close_own(&ar->marker->b);
		otf2w_sys.free(ar->marker);
	}
	for (uint32_t i = 0; i < ar->npool; i++)
		otf2w__chunk_free(ar, ar->pool[i], ar->evt_chunk, 1);
	otf2w_sys.free(ar->pool);
	for (uint32_t i = 0; i < ar->nprops; i++) {
		otf2w_sys.free(ar->props[i].name);
		otf2w_sys.free(ar->props[i].value);
	}
	otf2w_sys.free(ar->props);
	if (ar->locations != ar->locations_inline)
		otf2w_sys.free(ar->locations);
	if (ar->have_lock && ar->lock_cb.destroy)
		ar->lock_cb.destroy(ar->lock_ud, ar->lock);
	otf2w_sys.free(ar->dir);
	otf2w_sys.free(ar->name);
	otf2w_sys.free(ar->machine);
	otf2w_sys.free(ar->creator);
	otf2w_sys.free(ar->description);
	otf2w_sys.free(ar);
}

static otf2w_status archive_close(void *p);

/* Every file of the close is written through the io callback (one call:
 * the service thread opens, writes and closes them all). */
otf2w_status otf2w_archive_close(otf2w_archive *ar)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->abandoned)
		return OTF2W_E_INVALID_CALL;
	return otf2w__io(ar, archive_close, ar);
}

static otf2w_status archive_close(void *p)
{
	otf2w_archive *ar = p;
	otf2w_status first = OTF2W_OK;

	keep_first(&first, close_kind(ar, &ar->evt, OTF2W_BUF_EVT, 0));
	keep_first(&first, close_kind(ar, &ar->def, OTF2W_BUF_LDEF, 0));
	if (ar->nsnapshots > 0 || ar->snap.n > 0)
		keep_first(&first, close_kind(ar, &ar->snap, OTF2W_BUF_SNAP, 0));
	if (ar->marker)
		keep_first(&first, otf2w__buf_write_final(&ar->marker->b, 0));
	if (!ar->events_only) {
		if (!ar->gdef) {
			otf2w_gdef_writer *g;
			keep_first(&first, otf2w_archive_get_gdef_writer(ar, &g));
		}
		if (ar->gdef)
			keep_first(&first, otf2w__buf_write_final(&ar->gdef->b, 0));
		/* the anchor last: a reader never sees an archive without its files */
		keep_first(&first, write_anchor(ar, 0));
	}
	otf2w__archive_free(ar);
	return first;
}

void otf2w_archive_discard(otf2w_archive *ar)
{
	if (!ar)
		return;
	if (ar->abandoned) {
		/* fork child: the chunks may be the parent's (shared memory
		 * callbacks); only our own bookkeeping would be safe to free */
		return;
	}
	otf2w__archive_free(ar);
}

/* (fix) Crash/exit-in-handler paths: from now on no locking callback is
 * called (the interrupted thread may hold the archive lock, e.g. a signal
 * landed during a chunk switch). Async-signal-safe. */
void otf2w_archive_begin_emergency(otf2w_archive *ar)
{
	if (ar) {
		ar->have_lock = 0;
		ar->emergency = 1;
	}
}

otf2w_status otf2w_archive_close_emergency(otf2w_archive *ar)
{
	otf2w_status first = OTF2W_OK;

	if (!ar || ar->abandoned)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->have_lock = 0;	/* never lock from a crash path */
	ar->emergency = 1;
	keep_first(&first, close_kind(ar, &ar->evt, OTF2W_BUF_EVT, 1));
	keep_first(&first, close_kind(ar, &ar->def, OTF2W_BUF_LDEF, 1));
	if (ar->nsnapshots > 0 || ar->snap.n > 0)
		keep_first(&first, close_kind(ar, &ar->snap, OTF2W_BUF_SNAP, 1));
	if (ar->marker)
		keep_first(&first, otf2w__buf_write_final(&ar->marker->b, 1));
	if (ar->events_only) {
		/* no global definitions, no anchor */
	} else if (ar->gdef) {
		keep_first(&first, otf2w__buf_write_final(&ar->gdef->b, 1));
	} else {
		struct otf2w_buf g;
		otf2w__buf_init(&g, ar, OTF2W_BUF_GDEF, 0);
		keep_first(&first, otf2w__buf_write_final(&g, 1));
	}
	if (!ar->events_only)
		keep_first(&first, write_anchor(ar, 1));
	ar->abandoned = 1;
	return first;
}

static void abandon_vec(struct otf2w_vec *v)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		otf2w__buf_close_own(b);
		if (otf2w__is_durable(b))
			otf2w__dur_release(b);   /* the parent's windows: dropped, nothing written */
		b->fd = -1;
		b->closed = 1;
		b->deferred = NULL;	/* the parent writes it (the copy leaks here) */
		b->f.end = b->f.pos;	/* inline writers take the slow path */
	}
}

void otf2w_archive_abandon(otf2w_archive *ar)
{
	if (!ar)
		return;
	ar->abandoned = 1;
	ar->have_lock = 0;
	ar->emergency = 1;
	abandon_vec(&ar->evt);
	abandon_vec(&ar->def);
	abandon_vec(&ar->snap);
	if (ar->gdef)
		otf2w__buf_close_own(&ar->gdef->b);
	if (ar->marker)
		otf2w__buf_close_own(&ar->marker->b);
}
