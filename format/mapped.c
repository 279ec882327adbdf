/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapped.c - durable event files (otf2w_archive_set_durable): a location
 * records straight into a MAP_SHARED window of its .evt file, one chunk at
 * a time, so that every record written is in the page cache and survives
 * the death of the process (SIGKILL, OOM killer); a full chunk is left to
 * the kernel's writeback. The window's space is reserved first
 * (posix_fallocate): a full disk gives ENOSPC there - the location stops
 * with MeasurementOnOff(OFF) in the space every durable chunk keeps for it -
 * never a SIGBUS on a later store. Opening, reserving and mapping run
 * through the io callback (the tracer-io thread: its pages are touched
 * there, so the recording thread takes no page fault on them). Windows are
 * mapped AHEAD: when a location starts a window, the io thread is asked
 * (io post, no waiting) to unmap the full one and to map the next, so the
 * recording thread, when its window fills, only swaps pointers - no mmap,
 * munmap, fallocate or write, no waiting - unless the io thread is behind
 * (it then waits for it) or has no room (full disk: the map is retried
 * synchronously for its error). The first window of a location is mapped
 * synchronously; otf2w_archive_set_durable_first: its chunk reserved in
 * two steps, a part first, the rest in place when that fills (a short
 * process reserves, zeroes on tmpfs and gives back at close a few pages,
 * not a chunk). The last chunk is cut after its end (02 01) with
 * ftruncate at close (which also gives back the window mapped ahead).
 *
 * dseq (odd while the owner switches windows) lets another thread read a
 * consistent (window, committed bytes) pair: otf2w_evt_writer_durable_pos.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"

/* The smallest part of a window worth reserving when the whole one does
 * not fit: header, a few records and the stop reserve. */
#define DUR_MIN_WINDOW (16u << 10)

otf2w_status otf2w_archive_set_durable(otf2w_archive *ar, int on)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	if (ar->evt.n)
		return otf2w__seterr(ar, OTF2W_E_INVALID_CALL, "durable mode must be set before the first event writer");
	ar->durable = on != 0;
	return OTF2W_OK;
}

otf2w_status otf2w_archive_set_durable_first(otf2w_archive *ar, uint64_t bytes)
{
	if (!ar)
		return OTF2W_E_INVALID_ARGUMENT;
	ar->dur_first = bytes && bytes < DUR_MIN_WINDOW ? DUR_MIN_WINDOW : bytes;
	return OTF2W_OK;
}

int otf2w__is_durable(const struct otf2w_buf *b)
{
	return b->kind == OTF2W_BUF_EVT && b->ar->durable;
}

static void seq_begin(struct otf2w_buf *b)
{
	__atomic_store_n(&b->dseq, b->dseq + 1, __ATOMIC_SEQ_CST);
}

static void seq_end(struct otf2w_buf *b)
{
	__atomic_store_n(&b->dseq, b->dseq + 1, __ATOMIC_RELEASE);
}

int otf2w_evt_writer_durable_pos(const otf2w_evt_writer *w, uint64_t *chunk, uint64_t *bytes)
{
	const struct otf2w_buf *b = &w->b;
	uint32_t s1 = __atomic_load_n(&b->dseq, __ATOMIC_ACQUIRE);
	if (s1 & 1)
		return -1;
	int32_t cur = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
	uint8_t **chunks = __atomic_load_n(&b->chunks, __ATOMIC_ACQUIRE);
	uint8_t *base = cur == 0 && chunks ? __atomic_load_n(&chunks[0], __ATOMIC_ACQUIRE) : NULL;
	uint8_t *pos = __atomic_load_n(&b->f.pos, __ATOMIC_ACQUIRE);
	uint64_t idx = __atomic_load_n(&b->disk_chunks, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&b->dseq, __ATOMIC_ACQUIRE) != s1 || !base || !pos || pos < base ||
	    pos > base + b->chunk_size)
		return -1;
	*chunk = idx;
	*bytes = (uint64_t)(pos - base);
	return 0;
}

/* ---- windows ---------------------------------------------------------------- */

struct map_call {
	struct otf2w_buf *b;
	uint64_t index;
	uint8_t *p;
	uint64_t len;   /* reserved: the chunk, or less when the disk (or RLIMIT_FSIZE) has no more */
	uint64_t want;  /* to reserve (0: the chunk) */
};





/* Open (create) the file, reserve chunk `index`, map it, close. Runs on
 * the io thread (or here on the emergency path). */
static otf2w_status map_window(void *arg)
{
	struct map_call *c = arg;
	struct otf2w_buf *b = c->b;
	otf2w_archive *ar = b->ar;
	char path[4096], why[1024];
	otf2w_status st;

	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	if (ar->emergency) {
		otf2w__make_dirs_nolock(ar, 1);
	} else {
		st = otf2w__lock(ar);
		if (st)
			return st;
		st = otf2w__make_dirs(ar, 1);
		otf2w__unlock(ar);
		if (st)
			return st;
	}
	int fd = otf2w__open(path, O_RDWR | O_CREAT | (b->file_used ? 0 : O_TRUNC), 0644);
	if (fd < 0)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path,
				     otf2w__open_error(path, errno, why, sizeof(why)));
	b->file_used = 1;
	uint64_t cs = b->chunk_size, len = c->want && c->want < cs ? c->want : cs;
	int e = otf2w__reserve(fd, (int64_t)(c->index * cs), (int64_t)len);
	/* no room for the whole window (ENOSPC, EFBIG): the part that fits, so
	 * that what can still be saved is (the location stops at its end) */
	while ((e == ENOSPC || e == EFBIG) && len / 2 >= DUR_MIN_WINDOW) {
		len /= 2;
		e = otf2w__reserve(fd, (int64_t)(c->index * cs), (int64_t)len);
	}
	void *m = MAP_FAILED;
	if (!e) {
		/* the first window of a location is filled page by page: a
		 * short process touches a page or two of it */
		int pop = c->index > 0 && len == cs ? MAP_POPULATE : 0;
		m = otf2w_sys.mmap(NULL, cs, PROT_READ | PROT_WRITE, MAP_SHARED | pop, fd, (off_t)(c->index * cs));
		if (m == MAP_FAILED)
			e = errno;
	}
	otf2w_sys.close(fd);
	if (e)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot reserve %llu bytes in %s: %s",
				     (unsigned long long)cs, path, strerror(e));
	/* later windows: the pages are in the page cache and mapped
	 * (MAP_POPULATE: one call, about half the kernel time of a fault per
	 * page on ext4); the first store to each still makes the file system
	 * note it dirty */
	c->p = m;
	c->len = len;
	return OTF2W_OK;
}

struct grow_call {
	struct otf2w_buf *b;
	uint64_t from, to;   /* bytes of the chunk reserved now, wanted */
};

/* The rest of the current window's chunk reserved in place (the mapping
 * covers the whole chunk already). Runs on the io thread. */
static otf2w_status grow_window(void *arg)
{
	struct grow_call *g = arg;
	struct otf2w_buf *b = g->b;
	char path[4096];
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(b->ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	int fd = otf2w__open(path, O_RDWR, 0644);
	if (fd < 0)
		return otf2w__seterr(b->ar, OTF2W_E_IO, "cannot open %s: %s", path, strerror(errno));
	int e = otf2w__reserve(fd, (int64_t)(b->disk_chunks * b->chunk_size + g->from), (int64_t)(g->to - g->from));
	otf2w_sys.close(fd);
	if (e)
		return otf2w__seterr(b->ar, OTF2W_E_IO, "cannot reserve %llu bytes in %s: %s",
				     (unsigned long long)(g->to - g->from), path, strerror(e));
	return OTF2W_OK;
}

/* Detach the current window (after finishing it as a full chunk); the
 * caller unmaps it (or has the io thread do it). */
static uint8_t *drop_window(struct otf2w_buf *b, int finish)
{
	if (b->cur < 0 || !b->chunks)
		return NULL;
	if (finish)
		otf2w__finish_chunk(b);
	uint8_t *old = b->chunks[0];
	b->chunks[0] = NULL;
	b->nchunks = 0;
	b->cur = -1;
	b->disk_chunks++;
	b->f.pos = b->f.end = NULL;
	return old;
}

/* ---- mapping ahead ---------------------------------------------------------- */

static otf2w_status io_noop(void *unused)
{
	(void)unused;
	return OTF2W_OK;
}

/* On the io thread: unmap the full window, map the next one. */
static void prep_window(void *arg)
{
	struct otf2w_buf *b = arg;
	if (b->dold) {
		otf2w_sys.munmap(b->dold, b->chunk_size);
		b->dold = NULL;
	}
	struct map_call c = { b, b->dnext_index, NULL, 0, 0 };
	otf2w_status st = map_window(&c);
	b->dnext = st ? NULL : c.p;
	b->dnext_len = c.len;
	__atomic_store_n(&b->dstate, st ? OTF2W_DNEXT_FAILED : OTF2W_DNEXT_READY, __ATOMIC_RELEASE);
}

/* The posted preparation has run (a request of run is served after it),
 * unless this is an emergency path (nothing is waited for: the window
 * mapped ahead is then left alone). 1 when dstate is final. */
static int ahead_settled(struct otf2w_buf *b)
{
	if (__atomic_load_n(&b->dstate, __ATOMIC_ACQUIRE) != OTF2W_DNEXT_BUSY)
		return 1;
	if (b->ar->emergency || b->ar->abandoned)
		return 0;
	(void)otf2w__io(b->ar, io_noop, NULL);
	return __atomic_load_n(&b->dstate, __ATOMIC_ACQUIRE) != OTF2W_DNEXT_BUSY;
}

/* The window of file chunk index from the one mapped ahead, or NULL. */
static uint8_t *take_ahead(struct otf2w_buf *b, uint64_t index)
{
	if (!ahead_settled(b) || b->dstate != OTF2W_DNEXT_READY)
		return NULL;
	uint8_t *p = b->dnext;
	b->dnext = NULL;
	b->dstate = OTF2W_DNEXT_NONE;
	if (b->dnext_index == index)
		return p;
	otf2w_sys.munmap(p, b->chunk_size);   /* not the one needed (not expected) */
	return NULL;
}

static void unmap_old(void *arg)
{
	struct otf2w_buf *b = arg;
	otf2w_sys.munmap(b->dold, b->chunk_size);
	b->dold = NULL;
	__atomic_store_n(&b->dstate, OTF2W_DNEXT_NONE, __ATOMIC_RELEASE);
}

/* After a window switch: the io thread unmaps old (may be NULL) and maps
 * the next window, unless the location stops before it (TRACER_ON_FULL=stop
 * at its budget). Without a post callback old is unmapped here. */
static void post_ahead(struct otf2w_buf *b, uint8_t *old)
{
	otf2w_archive *ar = b->ar;
	int want = !(b->max && b->disk_chunks + 1 >= b->max && ar->flush_cb.pre_flush &&
		     ar->flush_cb.pre_flush(ar->flush_ud, b->location, 0) == OTF2W_NO_FLUSH);
	if (ar->io_cb.post && !ar->emergency && !ar->abandoned && (want || old) &&
	    b->dstate == OTF2W_DNEXT_NONE) {
		b->dold = old;
		b->dnext_index = b->disk_chunks + 1;
		b->dstate = OTF2W_DNEXT_BUSY;
		if (ar->io_cb.post(ar->io_ud, want ? prep_window : unmap_old, b, b->dnode) == 0)
			return;
		b->dstate = OTF2W_DNEXT_NONE;
		b->dold = NULL;
	}
	if (old)
		otf2w_sys.munmap(old, b->chunk_size);
}

/* The record of need bytes does not fit: next window (see next_chunk). */
otf2w_status otf2w__dur_next_chunk(struct otf2w_buf *b, uint64_t time, size_t need)
{
	otf2w_archive *ar = b->ar;

	if (b->cur >= 0 && b->max && b->disk_chunks + 1 >= b->max && ar->flush_cb.pre_flush &&
	    ar->flush_cb.pre_flush(ar->flush_ud, b->location, 0) == OTF2W_NO_FLUSH) {
		otf2w__stop_buffer(b, time);
		return OTF2W_E_STOPPED;
	}
	/* the first window, partly reserved: the rest of its chunk now */
	if (b->cur >= 0 && b->dgrow) {
		struct grow_call g = { b, b->dlen, b->chunk_size };
		b->dgrow = 0;
		if (otf2w__io(ar, grow_window, &g) == OTF2W_OK) {
			b->f.end += b->chunk_size - b->dlen;
			b->dlen = b->chunk_size;
			if ((size_t)(b->f.end - b->f.pos) >= need)
				return OTF2W_OK;
		}
		/* no room for it: the next window (whose reserving says why) */
	}
	int first = b->cur < 0 && b->disk_chunks == 0;
	struct map_call c = { b, b->cur >= 0 ? b->disk_chunks + 1 : b->disk_chunks, NULL, 0,
			      first ? ar->dur_first : 0 };
	otf2w_status st = OTF2W_OK;
	c.p = take_ahead(b, c.index);
	if (c.p)
		c.len = b->dnext_len;
	else
		st = otf2w__io(ar, map_window, &c);   /* first window, io thread behind, or its error */
	if (st) {
		/* full disk: OFF into the reserved space, later events dropped */
		if (b->cur >= 0) {
			otf2w__stop_buffer(b, time);
			b->dur_full = 1;
		} else {
			b->stopped = 1;
		}
		return st;
	}
	seq_begin(b);
	uint8_t *old = drop_window(b, 1);
	if (!b->chunks) {
		b->chunks = b->chunk_inline;
		b->cap = sizeof(b->chunk_inline) / sizeof(b->chunk_inline[0]);
	}
	b->chunks[0] = c.p;
	b->nchunks = 1;
	b->dlen = c.len;
	b->dgrow = first && ar->dur_first && c.len == ar->dur_first && c.len < b->chunk_size;
	otf2w__start_chunk(b, 0);
	b->f.end -= b->chunk_size - c.len;   /* a partly reserved window ends early */
	seq_end(b);
	post_ahead(b, old);
	if ((size_t)(b->f.end - b->f.pos) < need)
		return otf2w__seterr(ar, OTF2W_E_RECORD_TOO_LARGE, "record of %zu bytes does not fit a chunk", need);
	return OTF2W_OK;
}

/* A location stopped by a full disk resumes (at close): its last records
 * go into the current window's reserve. */
void otf2w__dur_open_reserve(struct otf2w_buf *b)
{
	if (b->cur >= 0 && b->chunks && b->chunks[0])
		b->f.end = b->chunks[0] + b->dlen - 1 - OTF2W_STOP_RESERVE;
}

/* otf2w_evt_writer_flush: the current window ends as a full chunk. */
void otf2w__dur_flush(struct otf2w_buf *b)
{
	seq_begin(b);
	uint8_t *old = drop_window(b, 1);
	seq_end(b);
	if (old)
		otf2w_sys.munmap(old, b->chunk_size);
}

/* Give back what the io thread holds for b: the window mapped ahead (its
 * reserved chunk is cut off by the final ftruncate) and a full window not
 * yet unmapped. settled: no preparation runs any more. */
static void give_back_ahead(struct otf2w_buf *b, int settled)
{
	if (!settled)
		return;
	if (b->dstate == OTF2W_DNEXT_READY && b->dnext)
		otf2w_sys.munmap(b->dnext, b->chunk_size);
	if (b->dold)
		otf2w_sys.munmap(b->dold, b->chunk_size);
	b->dnext = b->dold = NULL;
	b->dstate = OTF2W_DNEXT_NONE;
}

/* The file's end: 02 01 after the last record of the window, the window
 * unmapped, the file cut there. emerg: async-signal-safe (own descriptor). */
otf2w_status otf2w__dur_final(struct otf2w_buf *b, int emerg)
{
	otf2w_archive *ar = b->ar;
	uint8_t *c = b->chunks[0];
	uint8_t *p = b->f.pos;
	size_t len;
	char path[4096];

	len = otf2w__end_chunk(b, c, p);
	uint64_t size = b->disk_chunks * b->chunk_size + len;
	seq_begin(b);
	uint8_t *old = drop_window(b, 0);
	seq_end(b);
	if (old)
		otf2w_sys.munmap(old, b->chunk_size);
	give_back_ahead(b, ahead_settled(b));   /* not waited for on an emergency path */
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return emerg ? OTF2W_E_IO : otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	int fd = otf2w__open(path, O_WRONLY, 0644);
	int e = fd < 0 ? errno : otf2w_sys.ftruncate(fd, (off_t)size) != 0 ? errno : 0;
	if (fd >= 0 && otf2w_sys.close(fd) != 0 && !e)
		e = errno;
	if (e)
		return emerg ? OTF2W_E_IO : otf2w__seterr(ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	return OTF2W_OK;
}

static void wait_nothing(void *unused)
{
	(void)unused;
}

/* Writer freed or abandoned (fork child: the parent's windows are dropped
 * without writing anything). */
void otf2w__dur_release(struct otf2w_buf *b)
{
	if (b->cur >= 0 && b->chunks && b->chunks[0])
		otf2w_sys.munmap(b->chunks[0], b->chunk_size);
	/* a preparation still queued ends first (b is freed after this); one
	 * of the parent, in a fork child, never ends: left alone */
	otf2w_archive *ar = b->ar;
	if (__atomic_load_n(&b->dstate, __ATOMIC_ACQUIRE) == OTF2W_DNEXT_BUSY && ar->io_cb.run && !ar->emergency)
		(void)ar->io_cb.run(ar->io_ud, wait_nothing, NULL);
	give_back_ahead(b, __atomic_load_n(&b->dstate, __ATOMIC_ACQUIRE) != OTF2W_DNEXT_BUSY);
	if (b->chunks && b->chunks != b->chunk_inline)
		otf2w_sys.free(b->chunks);
	b->chunks = NULL;
	b->nchunks = b->cap = 0;
	b->cur = -1;
	b->f.pos = b->f.end = NULL;
}
