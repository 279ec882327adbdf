/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.c - otf2w_archive: open, callbacks, writer registry, lazy files,
 * close (normal, emergency, abandon), anchor file; attribute lists, id
 * maps, status texts and the attic helpers of the generated writers.
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

/* ---- status / errors --------------------------------------------------------- */

const char *otf2w_status_str(otf2w_status s)
{
	switch (s) {
	case OTF2W_OK: return "success";
	case OTF2W_E_INVALID_ARGUMENT: return "invalid argument";
	case OTF2W_E_INVALID_CALL: return "invalid call (wrong order)";
	case OTF2W_E_TIME_BACKWARDS: return "timestamp goes backwards";
	case OTF2W_E_RECORD_TOO_LARGE: return "record larger than a chunk";
	case OTF2W_E_NO_MEMORY: return "out of memory";
	case OTF2W_E_IO: return "file error";
	case OTF2W_E_EXISTS: return "archive exists";
	case OTF2W_E_STOPPED: return "location stopped recording (event dropped)";
	case OTF2W_E_LOCKING: return "locking callback failed";
	case OTF2W_E_INTERRUPTED: return "interrupted by a callback";
	}
	return "unknown status";
}

/* The last error text of this thread (initial-exec: no allocation on first
 * access when we are preloaded), and of the archive (any thread). */
static __thread char tl_err[1024] __attribute__((tls_model("initial-exec")));
static __thread const otf2w_archive *tl_err_ar __attribute__((tls_model("initial-exec")));

otf2w_status otf2w__seterr(otf2w_archive *ar, otf2w_status st, const char *fmt, ...)
{
	va_list ap;

	if (!ar)
		return st;
	va_start(ap, fmt);
	vsnprintf(tl_err, sizeof(tl_err), fmt, ap);
	va_end(ap);
	tl_err_ar = ar;
	memcpy(ar->err, tl_err, sizeof(ar->err));
	if (ar->first_error == OTF2W_OK)
		ar->first_error = st;
	return st;
}

/* The calling thread's last error text (path and errno text for file
 * errors); unlike otf2w_archive_error it stays valid after the archive was
 * closed and freed, so a caller can report why otf2w_archive_close failed. */
const char *otf2w_last_error(void)
{
	return tl_err[0] ? tl_err : "no error";
}

const char *otf2w_archive_error(const otf2w_archive *ar)
{
	if (!ar)
		return "no archive";
	if (tl_err_ar == ar && tl_err[0])
		return tl_err;
	return ar->err[0] ? ar->err : "no error";
}

/* ---- locking --------------------------------------------------------------------- */

otf2w_status otf2w__lock(otf2w_archive *ar)
{
	if (!ar->have_lock)
		return OTF2W_OK;
	if (ar->lock_cb.lock(ar->lock_ud, ar->lock) != 0)
		return OTF2W_E_LOCKING;
	return OTF2W_OK;
}

void otf2w__unlock(otf2w_archive *ar)
{
	if (ar->have_lock)
		ar->lock_cb.unlock(ar->lock_ud, ar->lock);
}

/* ---- paths and directories (async-signal-safe helpers) -------------------------- */

size_t otf2w__path_join(char *out, size_t n, ...)
{
	va_list ap;
	size_t len = 0;
	const char *s;

	va_start(ap, n);
	while ((s = va_arg(ap, const char *)) != NULL) {
		for (; *s; s++, len++) {
			if (len + 1 < n)
				out[len] = *s;
		}
	}
	va_end(ap);
	if (n)
		out[len < n ? len : n - 1] = 0;
	return len;
}

void otf2w__u64_dec(char *out, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int j = 0; j < i; j++)
		out[j] = tmp[i - 1 - j];
	out[i] = 0;
}

/* mkdir -p; returns 0 or errno. Async-signal-safe. */
static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return n ? ENAMETOOLONG : ENOENT;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		char c = buf[i];
		buf[i] = 0;
		if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
			int e = errno;
			buf[i] = c;
			return e;
		}
		buf[i] = c;
	}
	return 0;
}

otf2w_status otf2w__make_dirs(otf2w_archive *ar, int loc_dir)
{
	int e;

	if (!ar->files_created) {
		e = mkdir_p(ar->dir);
		if (e)
			return otf2w__seterr(ar, OTF2W_E_IO, "cannot create directory %s: %s",
					     ar->dir, strerror(e));
		ar->files_created = 1;
	}
	if (loc_dir && !ar->loc_dir_made) {
		char path[4096];
		if (otf2w__path_join(path, sizeof(path), ar->dir, "/", ar->name, NULL) >= sizeof(path))
			return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long");
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return otf2w__seterr(ar, OTF2W_E_IO, "cannot create directory %s: %s",
					     path, strerror(errno));
		ar->loc_dir_made = 1;
	}
	return OTF2W_OK;
}

void otf2w__make_dirs_nolock(otf2w_archive *ar, int loc_dir)
{
	if (!ar->files_created) {
		mkdir_p(ar->dir);
		ar->files_created = 1;
	}
	if (loc_dir && !ar->loc_dir_made) {
		char path[4096];
		if (otf2w__path_join(path, sizeof(path), ar->dir, "/", ar->name, NULL) < sizeof(path))
			mkdir(path, 0755);
		ar->loc_dir_made = 1;
	}
}

static int path_exists(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	struct stat sb;

	otf2w__path_join(path, sizeof(path), dir, "/", name, ext, NULL);
	return stat(path, &sb) == 0;
}

/* ---- archive ------------------------------------------------------------------------ */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
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

static void archive_free(otf2w_archive *ar);

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
	if (p->exclusive && (path_exists(p->path, name, ".otf2") || path_exists(p->path, name, "")))
		return OTF2W_E_EXISTS;

	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return OTF2W_E_NO_MEMORY;
	ar->dir = strdup(p->path);
	ar->name = strdup(name);
	ar->machine = dup_or_empty(p->machine_name);
	ar->creator = dup_or_empty(p->creator);
	ar->description = dup_or_empty(p->description);
	if (!ar->dir || !ar->name || !ar->machine || !ar->creator || !ar->description) {
		archive_free(ar);
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
	if (ar->exclusive && (path_exists(path, ar->name, ".otf2") || path_exists(path, ar->name, ""))) {
		otf2w__unlock(ar);
		return otf2w__seterr(ar, OTF2W_E_EXISTS, "archive %s/%s exists", path, ar->name);
	}
	d = strdup(path);
	if (!d) {
		otf2w__unlock(ar);
		return OTF2W_E_NO_MEMORY;
	}
	free(ar->dir);
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

otf2w_status otf2w_archive_set_flush(otf2w_archive *ar, const otf2w_flush_callbacks *cb, void *user_data)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (cb)
		ar->flush_cb = *cb;
	else
		memset(&ar->flush_cb, 0, sizeof(ar->flush_cb));
	ar->flush_ud = user_data;
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
	if (cb)
		ar->mem_cb = *cb;
	else
		memset(&ar->mem_cb, 0, sizeof(ar->mem_cb));
	ar->mem_ud = user_data;
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
	n = strdup(name);
	if (!n)
		return OTF2W_E_NO_MEMORY;
	for (char *c = n; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	for (uint32_t i = 0; i < ar->nprops; i++) {
		if (strcmp(ar->props[i].name, n) != 0)
			continue;
		free(n);
		if (!value[0]) {
			free(ar->props[i].name);
			free(ar->props[i].value);
			ar->props[i] = ar->props[--ar->nprops];
			return OTF2W_OK;
		}
		v = strdup(value);
		if (!v)
			return OTF2W_E_NO_MEMORY;
		free(ar->props[i].value);
		ar->props[i].value = v;
		return OTF2W_OK;
	}
	if (!value[0]) {
		free(n);
		return OTF2W_OK;
	}
	struct otf2w_prop *np = realloc(ar->props, (ar->nprops + 1) * sizeof(*np));
	v = strdup(value);
	if (!np || !v) {
		if (np)
			ar->props = np;
		free(n);
		free(v);
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
		void **nv = realloc(v->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = p;
	return 0;
}

static struct otf2w_buf *vec_find(const struct otf2w_vec *v, uint64_t loc)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		if (b->location == loc)
			return b;
	}
	return NULL;
}

static otf2w_status get_loc_writer(otf2w_archive *ar, struct otf2w_vec *v, int kind,
				   uint64_t loc, void **out)
{
	otf2w_status st;
	struct otf2w_buf *b;

	if (!ar || !out)
		return OTF2W_E_INVALID_ARGUMENT;
	*out = NULL;
	if (ar->abandoned)
		return OTF2W_E_INVALID_CALL;
	st = otf2w__lock(ar);
	if (st)
		return st;
	b = vec_find(v, loc);
	if (!b) {
		/* all writer structs are the same size (a struct otf2w_buf) */
		b = calloc(1, sizeof(struct otf2w_evt_writer));
		if (!b || vec_push(v, b) != 0) {
			free(b);
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

	if (!ar || !out)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->abandoned)
		return OTF2W_E_INVALID_CALL;
	st = otf2w__lock(ar);
	if (st)
		return st;
	struct otf2w_buf *b;
	if (kind == OTF2W_BUF_GDEF) {
		if (!ar->gdef && (ar->gdef = calloc(1, sizeof(*ar->gdef))))
			created = 1;
		b = ar->gdef ? &ar->gdef->b : NULL;
	} else {
		if (!ar->marker && (ar->marker = calloc(1, sizeof(*ar->marker))))
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
			nv = malloc(nc * sizeof(*nv));
			if (nv)
				memcpy(nv, ar->locations, ar->nlocations * sizeof(*nv));
		} else {
			nv = realloc(ar->locations, nc * sizeof(*nv));
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

static otf2w_status close_buf(otf2w_archive *ar, struct otf2w_buf *b)
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
	return close_buf(ar, w ? &w->b : NULL);
}

otf2w_status otf2w_archive_close_def_writer(otf2w_archive *ar, otf2w_def_writer *w)
{
	return close_buf(ar, w ? &w->b : NULL);
}

otf2w_status otf2w_archive_close_snap_writer(otf2w_archive *ar, otf2w_snap_writer *w)
{
	return close_buf(ar, w ? &w->b : NULL);
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
	return close_buf(ar, &w->b);
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
	struct otf2w_buf *o = vec_find(&ar->evt, location);
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
	char path[4096], part[4096];
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
			     : otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path, strerror(errno));
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
	if (close(fd) != 0 && !s.err)
		s.err = errno;
	if (!s.err && rename(part, path) != 0)
		s.err = errno;
	if (s.err) {
		unlink(part);
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
		if (emerg)
			keep_first(&first, otf2w__buf_write_final(b, 1));
		else
			keep_first(&first, close_buf(ar, b));
	}
	/* locations of the global defs without a writer of this kind */
	for (uint64_t i = 0; i < ar->nlocations; i++) {
		if (vec_find(v, ar->locations[i]))
			continue;
		keep_first(&first, write_empty(ar, kind, ar->locations[i], emerg));
	}
	/* locations with an event writer but no global def (still get files) */
	if (kind != OTF2W_BUF_EVT) {
		for (uint32_t i = 0; i < ar->evt.n; i++) {
			struct otf2w_buf *e = ar->evt.v[i];
			if (vec_find(v, e->location) || loc_known(ar, e->location, ar->nlocations))
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
		if (b->fd >= 0)
			close(b->fd);
		free(b->deferred);
		free(b);
	}
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

static void archive_free(otf2w_archive *ar)
{
	if (tl_err_ar == ar)
		tl_err_ar = NULL;
	free_vec(&ar->evt);
	free_vec(&ar->def);
	free_vec(&ar->snap);
	if (ar->gdef) {
		otf2w__buf_release(&ar->gdef->b);
		if (ar->gdef->b.fd >= 0)
			close(ar->gdef->b.fd);
		free(ar->gdef);
	}
	if (ar->marker) {
		otf2w__buf_release(&ar->marker->b);
		if (ar->marker->b.fd >= 0)
			close(ar->marker->b.fd);
		free(ar->marker);
	}
	for (uint32_t i = 0; i < ar->npool; i++)
		otf2w__chunk_free(ar, ar->pool[i], ar->evt_chunk, 1);
	free(ar->pool);
	for (uint32_t i = 0; i < ar->nprops; i++) {
		free(ar->props[i].name);
		free(ar->props[i].value);
	}
	free(ar->props);
	if (ar->locations != ar->locations_inline)
		free(ar->locations);
	if (ar->have_lock && ar->lock_cb.destroy)
		ar->lock_cb.destroy(ar->lock_ud, ar->lock);
	free(ar->dir);
	free(ar->name);
	free(ar->machine);
	free(ar->creator);
	free(ar->description);
	free(ar);
}

otf2w_status otf2w_archive_close(otf2w_archive *ar)
{
	otf2w_status first = OTF2W_OK;

	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->abandoned)
		return OTF2W_E_INVALID_CALL;
	keep_first(&first, close_kind(ar, &ar->evt, OTF2W_BUF_EVT, 0));
	keep_first(&first, close_kind(ar, &ar->def, OTF2W_BUF_LDEF, 0));
	if (ar->nsnapshots > 0 || ar->snap.n > 0)
		keep_first(&first, close_kind(ar, &ar->snap, OTF2W_BUF_SNAP, 0));
	if (ar->marker)
		keep_first(&first, otf2w__buf_write_final(&ar->marker->b, 0));
	if (!ar->gdef) {
		otf2w_gdef_writer *g;
		keep_first(&first, otf2w_archive_get_gdef_writer(ar, &g));
	}
	if (ar->gdef)
		keep_first(&first, otf2w__buf_write_final(&ar->gdef->b, 0));
	/* the anchor last: a reader never sees an archive without its files */
	keep_first(&first, write_anchor(ar, 0));
	archive_free(ar);
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
	archive_free(ar);
}

/* (fix) Crash/exit-in-handler paths: from now on no locking callback is
 * called (the interrupted thread may hold the archive lock, e.g. a signal
 * landed during a chunk switch). Async-signal-safe. */
void otf2w_archive_begin_emergency(otf2w_archive *ar)
{
	if (ar)
		ar->have_lock = 0;
}

otf2w_status otf2w_archive_close_emergency(otf2w_archive *ar)
{
	otf2w_status first = OTF2W_OK;

	if (!ar || ar->abandoned)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->have_lock = 0;	/* never lock from a crash path */
	keep_first(&first, close_kind(ar, &ar->evt, OTF2W_BUF_EVT, 1));
	keep_first(&first, close_kind(ar, &ar->def, OTF2W_BUF_LDEF, 1));
	if (ar->nsnapshots > 0 || ar->snap.n > 0)
		keep_first(&first, close_kind(ar, &ar->snap, OTF2W_BUF_SNAP, 1));
	if (ar->marker)
		keep_first(&first, otf2w__buf_write_final(&ar->marker->b, 1));
	if (ar->gdef) {
		keep_first(&first, otf2w__buf_write_final(&ar->gdef->b, 1));
	} else {
		struct otf2w_buf g;
		otf2w__buf_init(&g, ar, OTF2W_BUF_GDEF, 0);
		keep_first(&first, otf2w__buf_write_final(&g, 1));
	}
	keep_first(&first, write_anchor(ar, 1));
	ar->abandoned = 1;
	return first;
}

static void abandon_vec(struct otf2w_vec *v)
{
	for (uint32_t i = 0; i < v->n; i++) {
		struct otf2w_buf *b = v->v[i];
		if (b->fd >= 0)
			close(b->fd);
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
	abandon_vec(&ar->evt);
	abandon_vec(&ar->def);
	abandon_vec(&ar->snap);
	if (ar->gdef && ar->gdef->b.fd >= 0)
		close(ar->gdef->b.fd);
	if (ar->marker && ar->marker->b.fd >= 0)
		close(ar->marker->b.fd);
}

/* ---- attribute lists ------------------------------------------------------------ */

otf2w_attr_list *otf2w_attr_list_new(void)
{
	return calloc(1, sizeof(otf2w_attr_list));
}

void otf2w_attr_list_delete(otf2w_attr_list *al)
{
	free(al);
}

void otf2w_attr_list_clear(otf2w_attr_list *al)
{
	if (al)
		al->n = 0;
}

uint32_t otf2w_attr_list_count(const otf2w_attr_list *al)
{
	return al ? al->n : 0;
}

otf2w_status otf2w_attr_list_add(otf2w_attr_list *al, uint32_t attribute, uint8_t type, uint64_t value)
{
	if (!al || attribute == OTF2W_UNDEFINED_UINT32)
		return OTF2W_E_INVALID_ARGUMENT;
	for (uint32_t i = 0; i < al->n; i++)
		if (al->e[i].id == attribute)
			return OTF2W_E_INVALID_ARGUMENT;
	if (al->n == OTF2W_ATTR_MAX)
		return OTF2W_E_RECORD_TOO_LARGE;
	al->e[al->n].id = attribute;
	al->e[al->n].type = type;
	al->e[al->n].value = value;
	al->n++;
	return OTF2W_OK;
}

otf2w_status otf2w_attr_list_add_uint64(otf2w_attr_list *al, uint32_t attribute, uint64_t v)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_UINT64, v);
}

otf2w_status otf2w_attr_list_add_int64(otf2w_attr_list *al, uint32_t attribute, int64_t v)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_INT64, (uint64_t)v);
}

otf2w_status otf2w_attr_list_add_double(otf2w_attr_list *al, uint32_t attribute, double v)
{
	uint64_t x;
	memcpy(&x, &v, 8);
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_DOUBLE, x);
}

otf2w_status otf2w_attr_list_add_string(otf2w_attr_list *al, uint32_t attribute, uint32_t string_id)
{
	return otf2w_attr_list_add(al, attribute, OTF2W_TYPE_STRING, string_id);
}

/* ---- id maps ------------------------------------------------------------------------ */

otf2w_id_map *otf2w_id_map_new(int sparse, uint64_t capacity_hint)
{
	otf2w_id_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->sparse = sparse != 0;
	m->cap = capacity_hint ? capacity_hint : 8;
	m->v = malloc(m->cap * (m->sparse ? 2 : 1) * sizeof(uint64_t));
	if (!m->v) {
		free(m);
		return NULL;
	}
	return m;
}

void otf2w_id_map_delete(otf2w_id_map *m)
{
	if (m) {
		free(m->v);
		free(m);
	}
}

otf2w_status otf2w_id_map_add(otf2w_id_map *m, uint64_t local_id, uint64_t global_id)
{
	if (!m)
		return OTF2W_E_INVALID_ARGUMENT;
	if (!m->sparse && local_id != m->n) {
		/* not dense any more: convert to (local, global) pairs */
		uint64_t *nv = malloc((m->cap > m->n ? m->cap : m->n + 1) * 2 * sizeof(uint64_t));
		if (!nv)
			return OTF2W_E_NO_MEMORY;
		for (uint64_t i = 0; i < m->n; i++) {
			nv[2 * i] = i;
			nv[2 * i + 1] = m->v[i];
		}
		free(m->v);
		m->v = nv;
		m->sparse = 1;
		if (m->cap <= m->n)
			m->cap = m->n + 1;
	}
	if (m->n == m->cap) {
		uint64_t nc = 2 * m->cap;
		uint64_t *nv = realloc(m->v, nc * (m->sparse ? 2 : 1) * sizeof(uint64_t));
		if (!nv)
			return OTF2W_E_NO_MEMORY;
		m->v = nv;
		m->cap = nc;
	}
	if (m->sparse) {
		m->v[2 * m->n] = local_id;
		m->v[2 * m->n + 1] = global_id;
	} else {
		m->v[m->n] = global_id;
	}
	m->n++;
	return OTF2W_OK;
}

size_t otf2w__idmap_size(const otf2w_id_map *m)
{
	return 9 + 1 + (size_t)m->n * (m->sparse ? 18 : 9);
}

uint8_t *otf2w__put_idmap(uint8_t *p, const otf2w_id_map *m)
{
	p = otf2w__put_cu64(p, m->n);
	*p++ = (uint8_t)m->sparse;
	if (m->sparse)
		for (uint64_t i = 0; i < 2 * m->n; i++)
			p = otf2w__put_cu64(p, m->v[i]);
	else
		for (uint64_t i = 0; i < m->n; i++)
			p = otf2w__put_cu64(p, m->v[i]);
	return p;
}

/* ---- attic values (otf2-format.md §5.2) ---------------------------------------- */

uint8_t otf2w__region_type(uint8_t paradigm, uint8_t role, uint32_t flags)
{
	int dyn = (flags & OTF2W_REGION_FLAG_DYNAMIC) != 0;
	int phase = (flags & OTF2W_REGION_FLAG_PHASE) != 0;

	switch (paradigm) {
	case OTF2W_PARADIGM_UNKNOWN:
	case OTF2W_PARADIGM_COMPILER:
		return role == OTF2W_ROLE_FUNCTION ? 1 : 0;
	case OTF2W_PARADIGM_USER:
		switch (role) {
		case OTF2W_ROLE_FUNCTION: return dyn ? 31 : 3;
		case OTF2W_ROLE_FILE_IO: return 4;
		case OTF2W_ROLE_LOOP:
			if (dyn)
				return phase ? 32 : 30;
			return phase ? 0 : 2;
		case OTF2W_ROLE_CODE:
			if (dyn)
				return phase ? 29 : 28;
			return phase ? 27 : 1;
		default: return 0;
		}
	case OTF2W_PARADIGM_OPENMP: {
		/* role -> OMP region type */
		static const uint8_t omp[][2] = {
			{ OTF2W_ROLE_PARALLEL, 5 }, { OTF2W_ROLE_LOOP, 6 },
			{ OTF2W_ROLE_SECTIONS, 7 }, { OTF2W_ROLE_SECTION, 8 },
			{ OTF2W_ROLE_WORKSHARE, 9 }, { OTF2W_ROLE_SINGLE, 10 },
			{ OTF2W_ROLE_MASTER, 11 }, { OTF2W_ROLE_CRITICAL, 12 },
			{ OTF2W_ROLE_ATOMIC, 13 }, { OTF2W_ROLE_BARRIER, 14 },
			{ OTF2W_ROLE_IMPLICIT_BARRIER, 15 }, { OTF2W_ROLE_FLUSH, 16 },
			{ OTF2W_ROLE_CRITICAL_SBLOCK, 17 }, { OTF2W_ROLE_SINGLE_SBLOCK, 18 },
			{ OTF2W_ROLE_WRAPPER, 19 }, { OTF2W_ROLE_TASK, 20 },
			{ OTF2W_ROLE_TASK_WAIT, 21 }, { OTF2W_ROLE_TASK_CREATE, 33 },
			{ OTF2W_ROLE_ORDERED, 34 }, { OTF2W_ROLE_ORDERED_SBLOCK, 35 },
		};
		for (size_t i = 0; i < sizeof(omp) / sizeof(omp[0]); i++)
			if (omp[i][0] == role)
				return omp[i][1];
		return 0;
	}
	case OTF2W_PARADIGM_MPI:
		switch (role) {
		case OTF2W_ROLE_BARRIER: return 22;
		case OTF2W_ROLE_COLL_ONE2ALL: return 23;
		case OTF2W_ROLE_COLL_ALL2ONE: return 24;
		case OTF2W_ROLE_COLL_ALL2ALL: return 25;
		case OTF2W_ROLE_COLL_OTHER: return 26;
		default: return 0;
		}
	default:
		return 0;
	}
}

uint8_t otf2w__group_pre12(uint8_t type, uint8_t paradigm, uint32_t flags)
{
	if (flags != OTF2W_GROUP_FLAG_NONE)
		return 0;
	if (paradigm == OTF2W_PARADIGM_UNKNOWN) {
		switch (type) {
		case OTF2W_GROUP_LOCATIONS: return 1;
		case OTF2W_GROUP_REGIONS: return 2;
		case OTF2W_GROUP_METRIC: return 3;
		default: return 0;
		}
	}
	if (paradigm == OTF2W_PARADIGM_MPI) {
		switch (type) {
		case OTF2W_GROUP_COMM_LOCATIONS: return 6;
		case OTF2W_GROUP_COMM_GROUP: return 4;
		case OTF2W_GROUP_COMM_SELF: return 5;
		default: return 0;
		}
	}
	return 0;
}
