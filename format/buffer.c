/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * buffer.c - chunked buffers (otf2-format.md §3): chunk switch, the chunk
 * budget, pre/post flush, stop mode, writing chunks to a file.
 *
 * A buffer is filled record by record in memory. Each chunk starts with an
 * 18-byte header; a record never spans chunks; at least one byte stays
 * free at each chunk end. Event buffers own at most max_chunks chunks; when
 * they are all full, pre_flush decides: FLUSH writes them to the location's
 * file (opened for the flush and closed after it) and starts over with a BufferFlush
 * record; NO_FLUSH writes MeasurementOnOff(OFF) into space reserved in the
 * last chunk and drops later events.
 *
 * All functions here are called by the owning thread of the buffer; the
 * archive lock is taken only to get/return chunks and to open files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"

/* ---- chunk memory ---------------------------------------------------------- */

static uint8_t *chunk_alloc(otf2w_archive *ar, uint64_t size, int evt)
{
	uint8_t *c = NULL;

	if (otf2w__lock(ar) != OTF2W_OK)
		return NULL;
	if (evt && ar->npool > 0)
		c = ar->pool[--ar->npool];
	if (!c) {
		ar->chunks_allocated = 1;
		if (ar->mem_cb.allocate)
			c = ar->mem_cb.allocate(ar->mem_ud, size);
		else
			c = otf2w_sys.aligned_alloc(64, size);
	}
	otf2w__unlock(ar);
	return c;
}

/* Return a buffer's chunks to the archive pool (event chunks) or free them. */
void otf2w__buf_release(struct otf2w_buf *b)
{
	otf2w_archive *ar = b->ar;
	int evt = b->kind == OTF2W_BUF_EVT;

	if (!b->chunks)
		return;
	if (otf2w__is_durable(b)) {
		otf2w__dur_release(b);
		return;
	}
	if (otf2w__lock(ar) == OTF2W_OK) {
		for (uint32_t i = 0; i < b->nchunks; i++) {
			uint8_t *c = b->chunks[i];
			if (evt && ar->npool < ar->cap_pool) {
				ar->pool[ar->npool++] = c;
				continue;
			}
			if (evt && ar->npool == ar->cap_pool) {
				uint32_t nc = ar->cap_pool ? 2 * ar->cap_pool : 16;
				uint8_t **np = otf2w_sys.realloc(ar->pool, nc * sizeof(*np));
				if (np) {
					ar->pool = np;
					ar->cap_pool = nc;
					ar->pool[ar->npool++] = c;
					continue;
				}
			}
			otf2w__chunk_free(ar, c, b->chunk_size, evt);
		}
		otf2w__unlock(ar);
	}
	if (b->chunks != b->chunk_inline)
		otf2w_sys.free(b->chunks);
	b->chunks = NULL;
	b->nchunks = b->cap = 0;
	b->cur = -1;
	b->f.pos = b->f.end = NULL;
}

void otf2w__chunk_free(otf2w_archive *ar, uint8_t *c, uint64_t size, int evt)
{
	if (ar->mem_cb.free_all)
		ar->mem_cb.free_all(ar->mem_ud, c, size);
	else
		otf2w_sys.free(c);
}

void otf2w__buf_init(struct otf2w_buf *b, otf2w_archive *ar, int kind, uint64_t loc)
{
	memset(b, 0, sizeof(*b));
	b->ar = ar;
	b->kind = kind;
	b->timed = kind == OTF2W_BUF_EVT || kind == OTF2W_BUF_SNAP;
	b->chunk_size = b->timed ? ar->evt_chunk : ar->def_chunk;
	b->max = kind == OTF2W_BUF_EVT ? ar->max_chunks : 0;
	b->cur = -1;
	b->fd = -1;
	b->location = loc;
	/* durable event files with a due callback: at the first record */
	b->f.due = kind == OTF2W_BUF_EVT && ar->durable && ar->io_cb.due ? 0 : UINT64_MAX;
}

/* The record at time is due (otf2w_io_callbacks.due): the embedder's
 * periodic work, then the next due time. */
static void call_due(struct otf2w_buf *b, uint64_t time)
{
	otf2w_archive *ar = b->ar;
	if (ar->emergency || !ar->io_cb.due) {
		b->f.due = UINT64_MAX;
		return;
	}
	b->f.due = ar->io_cb.due(ar->io_ud, time);
}

/* ---- chunk header / end ---------------------------------------------------- */

static void put_header(struct otf2w_buf *b, uint8_t *c, uint64_t first, uint64_t last)
{
	c[0] = 0x03;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	c[1] = 0x42;
#else
	c[1] = 0x23;
#endif
	if (!b->timed) {
		first = 1;
		last = 0;
	}
	memcpy(c + 2, &first, 8);
	memcpy(c + 10, &last, 8);
}

/* Close the current chunk for writing as a full chunk: counters, 00 fill. */
static void finish_chunk(struct otf2w_buf *b)
{
	uint8_t *c = b->chunks[b->cur];
	uint8_t *ce = c + b->chunk_size;

	put_header(b, c, b->chunk_first + 1, b->f.nevents);
	memset(b->f.pos, 0, (size_t)(ce - b->f.pos));
}

/* The last chunk c: counters, file end (02 01, or 02 alone when only one
 * byte is left) at p; its length up to the end. */
size_t otf2w__end_chunk(struct otf2w_buf *b, uint8_t *c, uint8_t *p)
{
	put_header(b, c, b->chunk_first + 1, b->f.nevents);
	p[0] = 0x02;
	if (c + b->chunk_size - p >= 2) {
		p[1] = 0x01;
		return (size_t)(p + 2 - c);
	}
	return (size_t)(p + 1 - c);
}

/* ---- files ----------------------------------------------------------------- */

static const char *buf_ext(const struct otf2w_buf *b)
{
	switch (b->kind) {
	case OTF2W_BUF_EVT: return "evt";
	case OTF2W_BUF_SNAP: return "snap";
	default: return "def";
	}
}

/* Build the file path of a buffer into out (no allocation). */
size_t otf2w__buf_path(const struct otf2w_buf *b, char *out, size_t n)
{
	const otf2w_archive *ar = b->ar;
	char num[24];
	switch (b->kind) {
	case OTF2W_BUF_GDEF:
		return otf2w__path_join(out, n, ar->dir, "/", ar->name, ".def", NULL);
	case OTF2W_BUF_MARKER:
		return otf2w__path_join(out, n, ar->dir, "/", ar->name, ".marker", NULL);
	default:
		otf2w__u64_dec(num, b->location);
		return otf2w__path_join(out, n, ar->dir, "/", ar->name, "/", num, ".",
					buf_ext(b), NULL);
	}
}

void otf2w__note_identity(struct otf2w_buf *b, int fd)
{
	struct stat st;
	if (otf2w_sys.fstat(fd, &st) == 0) {
		b->fd_dev = (uint64_t)st.st_dev;
		b->fd_ino = (uint64_t)st.st_ino;
	}
}

/* Write at off through b->fd, which must still be the file opened for this
 * flush: another thread of the program may close it meanwhile
 * (close_range, closefrom) and even open a file of its own at that
 * number. Before each write the descriptor is checked (fstat: same file);
 * if it was closed or now names another file, the file is opened again
 * (chunks go to fixed offsets, so a retried write is harmless) and the
 * other file is left alone. Async-signal-safe; 0 or an errno. */
int otf2w__write_checked(struct otf2w_buf *b, const uint8_t *data, size_t len, uint64_t off)
{
	for (int attempt = 0;; attempt++) {
		struct stat st;
		int ok = otf2w_sys.fstat(b->fd, &st) == 0 && (uint64_t)st.st_dev == b->fd_dev &&
			 (uint64_t)st.st_ino == b->fd_ino;
		if (ok) {
			int e = otf2w__pwrite_all(b->fd, data, len, (int64_t)off);
			if (e != EBADF || attempt >= 3)
				return e;
		} else if (attempt >= 3) {
			return EBADF;
		}
		/* ours is gone: never close the number (it may be the program's now) */
		char path[4096];
		if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
			return ENAMETOOLONG;
		int fd = otf2w__open(path, O_WRONLY, 0644);
		if (fd < 0)
			return errno;
		otf2w__note_identity(b, fd);
		b->fd = fd;
	}
}

/* Close b->fd if it is still the file we opened (the program may have
 * closed it and opened one of its own at that number: that one is left
 * alone); b->fd becomes -1. 0 or the errno of close. Async-signal-safe. */
int otf2w__buf_close_own(struct otf2w_buf *b)
{
	struct stat st;
	int e = 0;
	if (b->fd >= 0 && otf2w_sys.fstat(b->fd, &st) == 0 && (uint64_t)st.st_dev == b->fd_dev &&
	    (uint64_t)st.st_ino == b->fd_ino)
		e = otf2w_sys.close(b->fd) != 0 ? errno : 0;
	b->fd = -1;
	return e;
}

otf2w_status otf2w__buf_open(struct otf2w_buf *b)
{
	otf2w_archive *ar = b->ar;
	char path[4096], why[1024];
	otf2w_status st;

	if (b->fd >= 0)
		return OTF2W_OK;
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	st = otf2w__lock(ar);
	if (st)
		return st;
	st = otf2w__make_dirs(ar, b->kind != OTF2W_BUF_GDEF && b->kind != OTF2W_BUF_MARKER);
	if (st == OTF2W_OK) {
		/* the first open truncates; a re-open (fd closed to save file
		 * descriptors) continues the file: chunks go to fixed offsets */
		int fd = otf2w__open(path, O_WRONLY | O_CREAT | (b->file_used ? 0 : O_TRUNC), 0644);
		if (fd < 0) {
			st = otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path,
				     otf2w__open_error(path, errno, why, sizeof(why)));
		} else {
			otf2w__note_identity(b, fd);
			b->fd = fd;
			b->file_used = 1;
			ar->nopen++;
		}
	}
	otf2w__unlock(ar);
	return st;
}

otf2w_status otf2w__buf_pwrite(struct otf2w_buf *b, const uint8_t *data, size_t len, uint64_t off)
{
	int e = otf2w__write_checked(b, data, len, off);
	if (e) {
		char path[4096];
		otf2w__buf_path(b, path, sizeof(path));
		return otf2w__seterr(b->ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	}
	return OTF2W_OK;
}

/* No descriptor is kept between flushes (fileio.c): a program that closes
 * every descriptor and opens its own files must never get ours. */
static void buf_maybe_close(struct otf2w_buf *b)
{
	otf2w_archive *ar = b->ar;

	if (b->fd < 0)
		return;
	otf2w__buf_close_own(b);
	if (otf2w__lock(ar) == OTF2W_OK) {
		ar->nopen--;
		otf2w__unlock(ar);
	}
}

/* Close the buffer's file; returns 0 or the errno of close(). */
int otf2w__buf_close_fd(struct otf2w_buf *b, int emerg)
{
	int e = otf2w__buf_close_own(b);

	if (!emerg && otf2w__lock(b->ar) == OTF2W_OK) {
		b->ar->nopen--;
		otf2w__unlock(b->ar);
	}
	return e == EINTR ? 0 : e;
}

/* Write chunks [0, n) (all finished, full size) to the file after the chunks
 * already there. On failure the unwritten chunks move to the front of the
 * array and the buffer keeps them. */
static otf2w_status write_full_chunks(struct otf2w_buf *b, uint32_t n, uint32_t *written)
{
	otf2w_status st = otf2w__buf_open(b);
	uint32_t i = 0;

	if (st == OTF2W_OK) {
		for (; i < n; i++) {
			st = otf2w__buf_pwrite(b, b->chunks[i], b->chunk_size,
					(b->disk_chunks + i) * b->chunk_size);
			if (st)
				break;
		}
	}
	b->disk_chunks += i;
	*written = i;
	if (i > 0 && i < b->nchunks) {
		/* rotate: unwritten chunks first, written ones after */
		uint8_t *tmp[i];
		memcpy(tmp, b->chunks, i * sizeof(*tmp));
		memmove(b->chunks, b->chunks + i, (b->nchunks - i) * sizeof(*tmp));
		memcpy(b->chunks + b->nchunks - i, tmp, i * sizeof(*tmp));
	}
	return st;
}

/* ---- chunk switch (slow path) ----------------------------------------------- */

static int is_last_chunk(const struct otf2w_buf *b, int32_t idx)
{
	return b->max && (uint32_t)idx + 1 >= b->max;
}

/* Space to keep free in chunk idx: MeasurementOnOff(OFF) must fit in the
 * last chunk of the budget if pre_flush may answer NO_FLUSH (without a
 * pre_flush callback the answer is always FLUSH: no reserve, and the chunk
 * layout equals the reference writer's). */
static size_t chunk_reserve(const struct otf2w_buf *b, int32_t idx)
{
	if (otf2w__is_durable(b))
		return OTF2W_DUR_RESERVE;   /* OFF and the last records at a full disk */
	if (!is_last_chunk(b, idx) || !b->ar->flush_cb.pre_flush)
		return 0;
	return OTF2W_STOP_RESERVE;
}

static void start_chunk(struct otf2w_buf *b, int32_t idx)
{
	uint8_t *c = b->chunks[idx];

	b->cur = idx;
	put_header(b, c, b->f.nevents + 1, b->f.nevents);
	b->f.pos = c + OTF2W_CHUNK_HEADER;
	b->f.end = c + b->chunk_size - 1 - chunk_reserve(b, idx);
	b->chunk_first = b->f.nevents;
	b->need_ts = b->timed;
}

/*
 * A flush in the middle of a record (chunk switch, forced flush) does
 * open/pwrite/close: cancellation points. A pending deferred cancel of the
 * writing thread must not unwind it there (the buffer would be left half
 * switched, and the caller - libtracer's hot path - holds its recursion
 * guard and in_record flag): cancellation is disabled for the write and the
 * previous state restored afterwards, so a pending cancel acts at the
 * program's next cancellation point. pthread_setcancelstate is not wrapped
 * by libtracer (this is libc's) and only updates the thread's cancel bits,
 * so it is harmless in the sampler's signal handler too. Writes
 * write_full_chunks(b, n, written) and closes the file if the buffer keeps
 * no fd (buf_maybe_close) on success.
 */
struct chunks_call {
	struct otf2w_buf *b;
	uint32_t n;
	uint32_t *written;
};

static otf2w_status write_chunks_io(void *p)
{
	struct chunks_call *c = p;
	otf2w_status st = write_full_chunks(c->b, c->n, c->written);
	if (st == OTF2W_OK)
		buf_maybe_close(c->b);
	return st;
}

static otf2w_status write_chunks_nocancel(struct otf2w_buf *b, uint32_t n, uint32_t *written)
{
	int old;
	otf2w_status st;
	struct chunks_call c = { b, n, written };

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	st = otf2w__io(b->ar, write_chunks_io, &c);
	pthread_setcancelstate(old, NULL);
	return st;
}

static otf2w_status get_chunk(struct otf2w_buf *b, int32_t idx)
{
	if ((uint32_t)idx < b->nchunks)
		return OTF2W_OK;
	if (!b->chunks) {
		b->chunks = b->chunk_inline;
		b->cap = sizeof(b->chunk_inline) / sizeof(b->chunk_inline[0]);
	}
	if (b->nchunks == b->cap) {
		uint32_t nc = 2 * b->cap;
		uint8_t **nv;
		if (b->chunks == b->chunk_inline) {
			nv = otf2w_sys.malloc(nc * sizeof(*nv));
			if (nv)
				memcpy(nv, b->chunks, b->nchunks * sizeof(*nv));
		} else {
			nv = otf2w_sys.realloc(b->chunks, nc * sizeof(*nv));
		}
		if (!nv)
			return otf2w__seterr(b->ar, OTF2W_E_NO_MEMORY, "out of memory");
		b->chunks = nv;
		b->cap = nc;
	}
	uint8_t *c = chunk_alloc(b->ar, b->chunk_size, b->kind == OTF2W_BUF_EVT);
	if (!c)
		return otf2w__seterr(b->ar, OTF2W_E_NO_MEMORY,
				     "cannot allocate a %llu-byte chunk",
				     (unsigned long long)b->chunk_size);
	b->chunks[b->nchunks++] = c;
	return OTF2W_OK;
}

/* Write a timestamp record if the next record needs one. */
static uint8_t *put_ts(struct otf2w_buf *b, uint8_t *p, uint64_t time)
{
	if (b->need_ts || time != b->f.last_time || time == 0) {
		*p = 5;
		memcpy(p + 1, &time, 8);
		p += 9;
		b->f.last_time = time;
		b->need_ts = 0;
	}
	return p;
}

/* Stop the location: MeasurementOnOff(OFF) at time into the reserved
 * space of the current chunk. */
static void stop_buffer(struct otf2w_buf *b, uint64_t time)
{
	if (b->cur >= 0 && b->f.pos) {
		uint8_t *p = b->f.pos;
		uint8_t *lim = b->chunks[b->cur] + b->chunk_size - 1;
		if (time < b->f.last_time)
			time = b->f.last_time;
		if (lim - p >= OTF2W_STOP_RESERVE) {
			p = put_ts(b, p, time);
			*p++ = 11;
			*p++ = 1;
			*p++ = OTF2W_MEASUREMENT_OFF;
			otf2w__commit(b, p);
		}
	}
	b->stopped = 1;
	b->f.end = b->f.pos;	/* every later record takes the slow path */
}

static otf2w_status next_chunk_errno(struct otf2w_buf *b, uint64_t time, size_t need);

/* Called when a record of need bytes does not fit. Returns OK with a
 * chunk ready (space >= need), or an error/STOPPED. A chunk switch happens
 * in the middle of a traced call: whatever the flush and the callbacks do
 * (a failed write leaves ENOSPC/EIO in errno), the caller's errno is kept;
 * the error itself is reported through the status and the error text. */
static otf2w_status next_chunk(struct otf2w_buf *b, uint64_t time, size_t need)
{
	int saved = errno;
	otf2w_status st = next_chunk_errno(b, time, need);
	errno = saved;
	return st;
}

static otf2w_status next_chunk_errno(struct otf2w_buf *b, uint64_t time, size_t need)
{
	otf2w_archive *ar = b->ar;
	int flushed = 0;
	int32_t next = b->cur + 1;
	otf2w_status st;

	if (otf2w__is_durable(b))
		return otf2w__dur_next_chunk(b, time, need);
	if (b->cur >= 0 && is_last_chunk(b, b->cur)) {
		otf2w_flush_type ft = OTF2W_FLUSH;
		if (ar->flush_cb.pre_flush)
			ft = ar->flush_cb.pre_flush(ar->flush_ud, b->location, 0);
		if (ft == OTF2W_NO_FLUSH) {
			stop_buffer(b, time);
			return OTF2W_E_STOPPED;
		}
		finish_chunk(b);
		uint32_t written = 0;
		st = write_chunks_nocancel(b, (uint32_t)b->cur + 1, &written);
		if (st) {
			/* keep the unwritten chunks in memory (close retries them)
			 * and stop the location with OFF in the reserved space */
			b->cur -= (int32_t)written;
			stop_buffer(b, time);
			put_header(b, b->chunks[b->cur], b->chunk_first + 1, b->f.nevents);
			return st;
		}
		next = 0;
		flushed = 1;
	} else if (b->cur >= 0) {
		finish_chunk(b);
	}
	st = get_chunk(b, next);
	if (st) {
		if (b->cur >= 0) {
			/* cannot get memory: stay in the current chunk */
			uint8_t *c = b->chunks[b->cur];
			put_header(b, c, b->chunk_first + 1, b->f.nevents);
		}
		return st;
	}
	start_chunk(b, next);
	if (flushed && ar->flush_cb.post_flush) {
		uint64_t stop = ar->flush_cb.post_flush(ar->flush_ud, b->location);
		uint8_t *p = b->f.pos;
		p = put_ts(b, p, b->f.last_time);
		*p++ = 10;
		*p++ = 8;
		p = otf2w__put_u64(p, stop);
		otf2w__commit(b, p);
	}
	if ((size_t)(b->f.end - b->f.pos) < need)
		return otf2w__seterr(ar, OTF2W_E_RECORD_TOO_LARGE, "record of %zu bytes does not fit a chunk", need);
	return OTF2W_OK;
}

/* ---- record begin (called by the generated writers) ------------------------ */

static size_t attr_payload_max(const otf2w_attr_list *al)
{
	return 5 + 15 * (size_t)al->n;
}

static size_t attr_total_max(const otf2w_attr_list *al)
{
	size_t pl = attr_payload_max(al);
	return 1 + (pl < 255 ? 1 : 9) + pl;
}

static uint8_t *put_attrs(uint8_t *p, const otf2w_attr_list *al)
{
	size_t pl = attr_payload_max(al);
	uint8_t *start = otf2w__rec_open(&p, 6, pl);
	p = otf2w__put_cu32(p, al->n);
	for (uint32_t i = 0; i < al->n; i++) {
		p = otf2w__put_cu32(p, al->e[i].id);
		*p++ = al->e[i].type;
		p = otf2w__put_av(p, al->e[i].type, al->e[i].value);
	}
	otf2w__rec_close(start, p, pl);
	return p;
}

static uint8_t *timed_begin(struct otf2w_buf *b, const otf2w_attr_list *al, uint64_t time,
			    size_t max, otf2w_status *st)
{
	if (otf2w_unlikely(b->closed || b->ar->abandoned)) {
		*st = OTF2W_E_INVALID_CALL;
		return NULL;
	}
	if (otf2w_unlikely(time >= b->f.due))
		call_due(b, time);
	if (b->stopped) {
		b->dropped++;
		*st = OTF2W_E_STOPPED;
		return NULL;
	}
	if (time < b->f.last_time) {
		*st = otf2w__seterr(b->ar, OTF2W_E_TIME_BACKWARDS,
				    "location %llu: time %llu is before %llu (record not written)",
				    (unsigned long long)b->location, (unsigned long long)time,
				    (unsigned long long)b->f.last_time);
		return NULL;
	}
	if (al && al->n == 0)
		al = NULL;
	size_t need = 9 + max + (al ? attr_total_max(al) : 0);
	if (need + OTF2W_CHUNK_HEADER + 1 + OTF2W_STOP_RESERVE > b->chunk_size) {
		*st = otf2w__seterr(b->ar, OTF2W_E_RECORD_TOO_LARGE,
				    "record of up to %zu bytes does not fit a %llu-byte chunk",
				    need, (unsigned long long)b->chunk_size);
		return NULL;
	}
	if (!b->f.pos || (size_t)(b->f.end - b->f.pos) < need) {
		*st = next_chunk(b, time, need);
		if (*st) {
			b->dropped++;
			return NULL;
		}
	}
	uint8_t *p = put_ts(b, b->f.pos, time);
	if (al)
		p = put_attrs(p, al);
	*st = OTF2W_OK;
	return p;
}

static uint8_t *untimed_begin(struct otf2w_buf *b, size_t max, otf2w_status *st)
{
	if (otf2w_unlikely(b->closed || b->ar->abandoned)) {
		*st = OTF2W_E_INVALID_CALL;
		return NULL;
	}
	if (max + OTF2W_CHUNK_HEADER + 1 > b->chunk_size) {
		*st = otf2w__seterr(b->ar, OTF2W_E_RECORD_TOO_LARGE,
				    "definition of up to %zu bytes does not fit a %llu-byte chunk",
				    max, (unsigned long long)b->chunk_size);
		return NULL;
	}
	if (!b->f.pos || (size_t)(b->f.end - b->f.pos) < max) {
		*st = next_chunk(b, 0, max);
		if (*st)
			return NULL;
	}
	*st = OTF2W_OK;
	return b->f.pos;
}

uint8_t *otf2w__evt_begin(otf2w_evt_writer *w, const otf2w_attr_list *al, uint64_t time,
			  size_t max, otf2w_status *st)
{
	if (otf2w_unlikely(!w)) {
		*st = OTF2W_E_INVALID_ARGUMENT;
		return NULL;
	}
	return timed_begin(&w->b, al, time, max, st);
}

uint8_t *otf2w__snap_begin(otf2w_snap_writer *w, const otf2w_attr_list *al, uint64_t time,
			   size_t max, otf2w_status *st)
{
	if (!w) {
		*st = OTF2W_E_INVALID_ARGUMENT;
		return NULL;
	}
	return timed_begin(&w->b, al, time, max, st);
}

uint8_t *otf2w__gdef_begin(otf2w_gdef_writer *w, size_t max, otf2w_status *st)
{
	if (!w) {
		*st = OTF2W_E_INVALID_ARGUMENT;
		return NULL;
	}
	return untimed_begin(&w->b, max, st);
}

uint8_t *otf2w__ldef_begin(otf2w_def_writer *w, size_t max, otf2w_status *st)
{
	if (!w) {
		*st = OTF2W_E_INVALID_ARGUMENT;
		return NULL;
	}
	return untimed_begin(&w->b, max, st);
}

uint8_t *otf2w__marker_begin(otf2w_marker_writer *w, size_t max, otf2w_status *st)
{
	if (!w) {
		*st = OTF2W_E_INVALID_ARGUMENT;
		return NULL;
	}
	return untimed_begin(&w->b, max, st);
}

/* ---- forced flush, resume ----------------------------------------------------- */

/* Write all finished and the current chunk (as a full chunk) to the file
 * and start over with an empty buffer. Owner thread. */
otf2w_status otf2w__buf_flush(struct otf2w_buf *b)
{
	uint32_t written = 0;
	otf2w_status st;

	if (b->closed)
		return OTF2W_E_INVALID_CALL;
	if (b->cur < 0)
		return OTF2W_OK;
	if (otf2w__is_durable(b)) {
		if (b->dur_full) {
			/* full disk: the window stays, its reserve opens */
			otf2w__dur_open_reserve(b);
			return OTF2W_OK;
		}
		otf2w__dur_flush(b);
		st = OTF2W_OK;
		goto flushed;
	}
	finish_chunk(b);
	st = write_chunks_nocancel(b, (uint32_t)b->cur + 1, &written);
	if (st) {
		b->cur -= (int32_t)written;
		if (!b->stopped)
			stop_buffer(b, b->f.last_time);
		put_header(b, b->chunks[b->cur], b->chunk_first + 1, b->f.nevents);
		return st;
	}
	b->cur = -1;
	b->f.pos = b->f.end = NULL;
flushed:
	if (b->stopped && b->resume_pending) {
		b->stopped = 0;
		b->resume_pending = 0;
		return otf2w_evt_measurement_on_off((otf2w_evt_writer *)b, NULL,
						    b->resume_time, OTF2W_MEASUREMENT_ON);
	}
	if (b->stopped) {
		/* chunks are free again but the location stays off until resumed */
		b->f.pos = b->f.end = NULL;
	}
	return OTF2W_OK;
}

otf2w_status otf2w__buf_resume(struct otf2w_buf *b, uint64_t t)
{
	if (b->closed)
		return OTF2W_E_INVALID_CALL;
	if (!b->stopped)
		return OTF2W_OK;
	if (t < b->f.last_time)
		return OTF2W_E_TIME_BACKWARDS;
	if (b->cur < 0 || (otf2w__is_durable(b) && b->dur_full)) {
		/* chunks were flushed: recording can go on right away */
		b->stopped = 0;
		b->resume_pending = 0;
		return otf2w_evt_measurement_on_off((otf2w_evt_writer *)b, NULL, t,
						    OTF2W_MEASUREMENT_ON);
	}
	b->resume_pending = 1;
	b->resume_time = t;
	return OTF2W_OK;
}

/* ---- for mapped.c ------------------------------------------------------------- */

void otf2w__put_header(struct otf2w_buf *b, uint8_t *c, uint64_t first, uint64_t last)
{
	put_header(b, c, first, last);
}

/* A durable window: zeros up to its reserved end only (a partly reserved
 * window's rest is a hole of the file, read as zeros; a store there would
 * be a SIGBUS). */
void otf2w__finish_chunk(struct otf2w_buf *b)
{
	uint8_t *c = b->chunks[b->cur];
	put_header(b, c, b->chunk_first + 1, b->f.nevents);
	memset(b->f.pos, 0, (size_t)(c + b->dlen - b->f.pos));
}

void otf2w__start_chunk(struct otf2w_buf *b, int32_t idx)
{
	start_chunk(b, idx);
}

void otf2w__stop_buffer(struct otf2w_buf *b, uint64_t time)
{
	stop_buffer(b, time);
}
