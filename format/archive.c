/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.c - otf2w_archive: open, configuration (path, callbacks,
 * properties), the writer registry (writers created lazily per location),
 * closing single writers, event writer accessors. The end of an archive is
 * in close.c, files in fileio.c, shared helpers in common.c.
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

#define MIN_CHUNK 262144ull
#define MAX_CHUNK 16777216ull

/* ---- archive ------------------------------------------------------------------------ */

static char *dup_or_empty(const char *s)
{
	return otf2w_sys.strdup(s ? s : "");
}

static uint64_t make_trace_id(void)
{
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	/* splitmix64 finaliser */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}


otf2w_status otf2w_archive_open(const otf2w_archive_params *p, otf2w_archive **out)
{
	otf2w_archive *ar;

	if (!out)
		return OTF2W_E_INVALID_ARGUMENT;
	*out = NULL;
	if (!p || !p->path || !p->path[0])
		return OTF2W_E_INVALID_ARGUMENT;
	uint64_t ec = p->event_chunk_size ? p->event_chunk_size : (1ull << 20);
	uint64_t dc = p->def_chunk_size ? p->def_chunk_size : (4ull << 20);
	if (ec < MIN_CHUNK || ec > MAX_CHUNK || dc < MIN_CHUNK || dc > MAX_CHUNK)
		return OTF2W_E_INVALID_ARGUMENT;
	const char *name = p->name && p->name[0] ? p->name : "traces";
	if (strchr(name, '/'))
		return OTF2W_E_INVALID_ARGUMENT;
	if (p->exclusive && (otf2w__path_exists(p->path, name, ".otf2") || otf2w__path_exists(p->path, name, "")))
		return OTF2W_E_EXISTS;

	ar = otf2w_sys.calloc(1, sizeof(*ar));
	if (!ar)
		return OTF2W_E_NO_MEMORY;
	ar->dir = otf2w_sys.strdup(p->path);
	ar->name = otf2w_sys.strdup(name);
	ar->machine = dup_or_empty(p->machine_name);
	ar->creator = dup_or_empty(p->creator);
	ar->description = dup_or_empty(p->description);
	if (!ar->dir || !ar->name || !ar->machine || !ar->creator || !ar->description) {
		otf2w__archive_free(ar);
		return OTF2W_E_NO_MEMORY;
	}
	ar->evt_chunk = ec;
	ar->def_chunk = dc;
	ar->max_chunks = p->max_chunks ? p->max_chunks : 16;
	ar->exclusive = p->exclusive;
	ar->trace_id = make_trace_id();
	*out = ar;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_path(otf2w_archive *ar, const char *path)
{
	otf2w_status st;
	char *d;

	if (!ar || !path || !path[0])
		return OTF2W_E_INVALID_ARGUMENT;
	st = otf2w__lock(ar);
	if (st)
		return st;
	if (ar->files_created) {
		otf2w__unlock(ar);
		return otf2w__seterr(ar, OTF2W_E_INVALID_CALL,
				     "archive path can not change: files exist in %s", ar->dir);
	}
	if (ar->exclusive && (otf2w__path_exists(path, ar->name, ".otf2") || otf2w__path_exists(path, ar->name, ""))) {
		otf2w__unlock(ar);
		return otf2w__seterr(ar, OTF2W_E_EXISTS, "archive %s/%s exists", path, ar->name);
	}
	d = otf2w_sys.strdup(path);
	if (!d) {
		otf2w__unlock(ar);
		return OTF2W_E_NO_MEMORY;
	}
	otf2w_sys.free(ar->dir);
	ar->dir = d;
	otf2w__unlock(ar);
	return OTF2W_OK;
}

const char *otf2w_archive_path(const otf2w_archive *ar)
{
	return ar ? ar->dir : NULL;
}

otf2w_status otf2w_archive_set_locking(otf2w_archive *ar, const otf2w_locking_callbacks *cb, void *user_data)
{
	void *lock = NULL;

	if (!ar || !cb || !cb->lock || !cb->unlock)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->have_lock || ar->evt.n || ar->def.n || ar->snap.n || ar->gdef || ar->marker)
		return otf2w__seterr(ar, OTF2W_E_INVALID_CALL,
				     "locking callbacks must be set once, before the first writer");
	if (cb->create && cb->create(user_data, &lock) != 0)
		return otf2w__seterr(ar, OTF2W_E_LOCKING, "lock creation callback failed");
	ar->lock_cb = *cb;
	ar->lock_ud = user_data;
	ar->lock = lock;
	ar->have_lock = 1;
	return OTF2W_OK;
}

/* A set of callbacks: a copy of *cb, or none (all NULL) when cb is NULL. */
static void set_callbacks(void *dst, const void *cb, size_t size, void **ud_dst, void *user_data)
{
	if (cb)
		memcpy(dst, cb, size);
	else
		memset(dst, 0, size);
	*ud_dst = user_data;
}

otf2w_status otf2w_archive_set_flush(otf2w_archive *ar, const otf2w_flush_callbacks *cb, void *user_data)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	set_callbacks(&ar->flush_cb, cb, sizeof(ar->flush_cb), &ar->flush_ud, user_data);
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_io(otf2w_archive *ar, const otf2w_io_callbacks *cb, void *user_data)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	set_callbacks(&ar->io_cb, cb, sizeof(ar->io_cb), &ar->io_ud, user_data);
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_events_only(otf2w_archive *ar, int on)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->events_only = on != 0;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_events_elsewhere(otf2w_archive *ar, int (*elsewhere)(uint64_t location, void *ud),
						 void *ud)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->elsewhere = elsewhere;
	ar->elsewhere_ud = ud;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_memory(otf2w_archive *ar, const otf2w_memory_callbacks *cb, void *user_data)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (cb && (!cb->allocate || !cb->free_all))
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->chunks_allocated)
		return otf2w__seterr(ar, OTF2W_E_INVALID_CALL,
				     "memory callbacks must be set before the first chunk is allocated");
	set_callbacks(&ar->mem_cb, cb, sizeof(ar->mem_cb), &ar->mem_ud, user_data);
	return OTF2W_OK;
}

static int valid_prop_name(const char *n)
{
	int comps = 0, len = 0;

	for (;; n++) {
		if (*n == 0 || (n[0] == ':' && n[1] == ':')) {
			if (len == 0)
				return 0;
			comps++;
			len = 0;
			if (*n == 0)
				break;
			n++;
			continue;
		}
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '_'))
			return 0;
		len++;
	}
	return comps >= 2;
}

otf2w_status otf2w_archive_set_property(otf2w_archive *ar, const char *name, const char *value)
{
	char *n, *v;

	if (!ar || !name || !value)
		return OTF2W_E_INVALID_ARGUMENT;
	if (!valid_prop_name(name))
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT,
				     "invalid property name '%s' (want NS::NAME, chars [A-Za-z0-9_])", name);
	n = otf2w_sys.strdup(name);
	if (!n)
		return OTF2W_E_NO_MEMORY;
	for (char *c = n; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	for (uint32_t i = 0; i < ar->nprops; i++) {
		if (strcmp(ar->props[i].name, n) != 0)
			continue;
		otf2w_sys.free(n);
		if (!value[0]) {
			otf2w_sys.free(ar->props[i].name);
			otf2w_sys.free(ar->props[i].value);
			ar->props[i] = ar->props[--ar->nprops];
			return OTF2W_OK;
		}
		v = otf2w_sys.strdup(value);
		if (!v)
			return OTF2W_E_NO_MEMORY;
		otf2w_sys.free(ar->props[i].value);
		ar->props[i].value = v;
		return OTF2W_OK;
	}
	if (!value[0]) {
		otf2w_sys.free(n);
		return OTF2W_OK;
	}
	struct otf2w_prop *np = otf2w_sys.realloc(ar->props, (ar->nprops + 1) * sizeof(*np));
	v = otf2w_sys.strdup(value);
	if (!np || !v) {
		if (np)
			ar->props = np;
		otf2w_sys.free(n);
		otf2w_sys.free(v);
		return OTF2W_E_NO_MEMORY;
	}
	ar->props = np;
	ar->props[ar->nprops].name = n;
	ar->props[ar->nprops].value = v;
	ar->nprops++;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_trace_id(otf2w_archive *ar, uint64_t id)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->trace_id = id;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_number_of_snapshots(otf2w_archive *ar, uint32_t n)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->nsnapshots = n;
	return OTF2W_OK;
}

/* ---- writer registry ------------------------------------------------------------------ */

static int vec_push(struct otf2w_vec *v, void *p)
{
	if (v->n == v->cap) {
		uint32_t nc = v->cap ? 2 * v->cap : 16;
		void **nv = otf2w_sys.realloc(v->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = p;
	return 0;
}

struct otf2w_buf *otf2w__vec_find(const struct otf2w_vec *v, uint64_t loc)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		if (b->location == loc)
			return b;
	}
	return NULL;
}

/* The start of every writer request: its arguments, the archive not
 * abandoned, the archive lock taken (0) or the error. */
static otf2w_status writer_request(otf2w_archive *ar, const void *out)
{
	if (!ar || !out)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->abandoned)
		return OTF2W_E_INVALID_CALL;
	return otf2w__lock(ar);
}

static otf2w_status get_loc_writer(otf2w_archive *ar, struct otf2w_vec *v, int kind,
				   uint64_t loc, void **out)
{
	otf2w_status st;
	struct otf2w_buf *b;

	if (ar && out)
		*out = NULL;
	st = writer_request(ar, out);
	if (st)
		return st;
	b = otf2w__vec_find(v, loc);
	if (!b) {
		/* all writer structs are the same size (a struct otf2w_buf) */
		b = otf2w_sys.calloc(1, sizeof(struct otf2w_evt_writer));
		if (!b || vec_push(v, b) != 0) {
			otf2w_sys.free(b);
			otf2w__unlock(ar);
			return otf2w__seterr(ar, OTF2W_E_NO_MEMORY, "out of memory");
		}
		otf2w__buf_init(b, ar, kind, loc);
	}
	otf2w__unlock(ar);
	*out = b;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_get_evt_writer(otf2w_archive *ar, uint64_t location, otf2w_evt_writer **out)
{
	return get_loc_writer(ar, ar ? &ar->evt : NULL, OTF2W_BUF_EVT, location, (void **)out);
}

otf2w_status otf2w_archive_get_def_writer(otf2w_archive *ar, uint64_t location, otf2w_def_writer **out)
{
	return get_loc_writer(ar, ar ? &ar->def : NULL, OTF2W_BUF_LDEF, location, (void **)out);
}

otf2w_status otf2w_archive_get_snap_writer(otf2w_archive *ar, uint64_t location, otf2w_snap_writer **out)
{
	return get_loc_writer(ar, ar ? &ar->snap : NULL, OTF2W_BUF_SNAP, location, (void **)out);
}

/* The archive's one global-definition or marker writer (each is a single
 * buffer), created on first request under the archive lock. */
static otf2w_status get_archive_writer(otf2w_archive *ar, int kind, struct otf2w_buf **out)
{
	otf2w_status st;
	int created = 0;

	st = writer_request(ar, out);
	if (st)
		return st;
	struct otf2w_buf *b;
	if (kind == OTF2W_BUF_GDEF) {
		if (!ar->gdef && (ar->gdef = otf2w_sys.calloc(1, sizeof(*ar->gdef))))
			created = 1;
		b = ar->gdef ? &ar->gdef->b : NULL;
	} else {
		if (!ar->marker && (ar->marker = otf2w_sys.calloc(1, sizeof(*ar->marker))))
			created = 1;
		b = ar->marker ? &ar->marker->b : NULL;
	}
	if (created)
		otf2w__buf_init(b, ar, kind, 0);
	otf2w__unlock(ar);
	*out = b;
	return b ? OTF2W_OK : OTF2W_E_NO_MEMORY;
}

otf2w_status otf2w_archive_get_gdef_writer(otf2w_archive *ar, otf2w_gdef_writer **out)
{
	struct otf2w_buf *b = NULL;
	otf2w_status st = out ? get_archive_writer(ar, OTF2W_BUF_GDEF, &b) : OTF2W_E_INVALID_ARGUMENT;
	if (st == OTF2W_OK)
		*out = ar->gdef;
	return st;
}

otf2w_status otf2w_archive_get_marker_writer(otf2w_archive *ar, otf2w_marker_writer **out)
{
	struct otf2w_buf *b = NULL;
	otf2w_status st = out ? get_archive_writer(ar, OTF2W_BUF_MARKER, &b) : OTF2W_E_INVALID_ARGUMENT;
	if (st == OTF2W_OK)
		*out = ar->marker;
	return st;
}

otf2w_status otf2w__gdef_note_location(otf2w_gdef_writer *w, uint64_t location)
{
	otf2w_archive *ar = w->b.ar;
	otf2w_status st = otf2w__lock(ar);

	if (st)
		return st;
	for (uint64_t i = ar->nlocations; i-- > 0;) {
		if (ar->locations[i] == location) {
			otf2w__unlock(ar);
			return OTF2W_OK;
		}
	}
	if (ar->nlocations == ar->cap_locations) {
		uint64_t nc = ar->cap_locations ? 2 * ar->cap_locations : 64;
		uint64_t *nv;
		if (!ar->locations) {
			nc = sizeof(ar->locations_inline) / sizeof(ar->locations_inline[0]);
			nv = ar->locations_inline;
		} else if (ar->locations == ar->locations_inline) {
			nv = otf2w_sys.malloc(nc * sizeof(*nv));
			if (nv)
				memcpy(nv, ar->locations, ar->nlocations * sizeof(*nv));
		} else {
			nv = otf2w_sys.realloc(ar->locations, nc * sizeof(*nv));
		}
		if (!nv) {
			otf2w__unlock(ar);
			return otf2w__seterr(ar, OTF2W_E_NO_MEMORY, "out of memory");
		}
		ar->locations = nv;
		ar->cap_locations = nc;
	}
	ar->locations[ar->nlocations++] = location;
	otf2w__unlock(ar);
	return OTF2W_OK;
}

/* ---- closing single writers -------------------------------------------------------- */

otf2w_status otf2w__close_buf(otf2w_archive *ar, struct otf2w_buf *b)
{
	otf2w_status st;

	if (!ar || !b || b->ar != ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (b->closed)
		return OTF2W_OK;
	if (b->kind == OTF2W_BUF_EVT && ar->flush_cb.pre_flush)
		(void)ar->flush_cb.pre_flush(ar->flush_ud, b->location, 1);
	st = otf2w__buf_write_final(b, 0);
	if (st == OTF2W_OK)
		otf2w__buf_release(b);
	return st;
}

otf2w_status otf2w_archive_close_evt_writer(otf2w_archive *ar, otf2w_evt_writer *w)
{
	return otf2w__close_buf(ar, w ? &w->b : NULL);
}

otf2w_status otf2w_archive_close_def_writer(otf2w_archive *ar, otf2w_def_writer *w)
{
	return otf2w__close_buf(ar, w ? &w->b : NULL);
}

otf2w_status otf2w_archive_close_snap_writer(otf2w_archive *ar, otf2w_snap_writer *w)
{
	return otf2w__close_buf(ar, w ? &w->b : NULL);
}

otf2w_status otf2w_archive_close_evt_writer_deferred(otf2w_archive *ar, otf2w_evt_writer *w,
						     uint64_t max_each, uint64_t max_total)
{
	if (!ar || !w || w->b.ar != ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (w->b.closed)
		return OTF2W_OK;
	if (otf2w__buf_defer(&w->b, max_each, max_total))
		return OTF2W_OK;
	return otf2w__close_buf(ar, &w->b);
}

/* ---- event writer accessors ------------------------------------------------------- */

uint64_t otf2w_evt_writer_location(const otf2w_evt_writer *w)
{
	return w ? w->b.location : OTF2W_UNDEFINED_LOCATION;
}

uint64_t otf2w_evt_writer_count(const otf2w_evt_writer *w)
{
	return w ? w->b.f.nevents : 0;
}

uint64_t otf2w_evt_writer_dropped(const otf2w_evt_writer *w)
{
	return w ? w->b.dropped : 0;
}

uint64_t otf2w_evt_writer_bytes(const otf2w_evt_writer *w)
{
	if (!w)
		return 0;
	const struct otf2w_buf *b = &w->b;
	uint64_t n = b->disk_chunks * b->chunk_size + (b->deferred ? b->deferred_len : 0);
	if (b->cur >= 0 && b->f.pos)
		n += (uint64_t)b->cur * b->chunk_size + (uint64_t)(b->f.pos - b->chunks[b->cur]);
	return n;
}

uint64_t otf2w_evt_writer_last_time(const otf2w_evt_writer *w)
{
	return w ? w->b.f.last_time : 0;
}

otf2w_status otf2w_evt_writer_resume(otf2w_evt_writer *w, uint64_t t)
{
	if (!w)
		return OTF2W_E_INVALID_ARGUMENT;
	return otf2w__buf_resume(&w->b, t);
}

otf2w_status otf2w_evt_writer_resume_emergency(otf2w_evt_writer *w, uint64_t t)
{
	if (!w)
		return OTF2W_E_INVALID_ARGUMENT;
	if (w->b.closed || !w->b.stopped)
		return w->b.closed ? OTF2W_E_INVALID_CALL : OTF2W_OK;
	if (t < w->b.f.last_time)
		t = w->b.f.last_time;
	if (w->b.max)
		w->b.max++;   /* the next record takes a new chunk */
	if (otf2w__is_durable(&w->b) && w->b.dur_full)
		otf2w__dur_open_reserve(&w->b);   /* full disk: the window's reserve */
	w->b.stopped = 0;
	w->b.resume_pending = 0;
	return otf2w_evt_measurement_on_off(w, NULL, t, OTF2W_MEASUREMENT_ON);
}

otf2w_status otf2w_evt_writer_flush(otf2w_evt_writer *w)
{
	if (!w)
		return OTF2W_E_INVALID_ARGUMENT;
	return otf2w__buf_flush(&w->b);
}

int otf2w_evt_writer_stopped(const otf2w_evt_writer *w)
{
	return w ? w->b.stopped : 0;
}

otf2w_status otf2w_evt_writer_set_location(otf2w_evt_writer *w, uint64_t location)
{
	otf2w_status st;

	if (!w)
		return OTF2W_E_INVALID_ARGUMENT;
	otf2w_archive *ar = w->b.ar;
	st = otf2w__lock(ar);
	if (st)
		return st;
	if (w->b.file_used || w->b.fd >= 0 || w->b.disk_chunks || (w->b.closed && !w->b.deferred)) {
		otf2w__unlock(ar);
		return otf2w__seterr(ar, OTF2W_E_INVALID_CALL,
				     "location %llu: data already on disk, can not rename",
				     (unsigned long long)w->b.location);
	}
	struct otf2w_buf *o = otf2w__vec_find(&ar->evt, location);
	if (o && o != &w->b) {
		otf2w__unlock(ar);
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT,
				     "location %llu already has an event writer",
				     (unsigned long long)location);
	}
	w->b.location = location;
	otf2w__unlock(ar);
	return OTF2W_OK;
}
