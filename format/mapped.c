/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapped.c - durable event files (otf2w_archive_set_durable): every record
 * a location stores is in a MAP_SHARED file mapping, so it is in the page
 * cache at once and survives the death of the process (SIGKILL, OOM
 * killer).
 * - Chunk 0 is recorded straight into a window of the .evt file itself. A
 *   short process touches a page or two of it; its space is reserved first
 *   (posix_fallocate), in two steps with otf2w_archive_set_durable_first.
 * - Chunks 1, 2, ... are recorded into one reused window: the staging file
 *   <evt>.stage (the chunk, then a page with struct otf2w_stage_tail: which
 *   chunk it holds). A full staged chunk is written into the .evt file
 *   with one pwrite; the staging window is then reused for the next chunk.
 *   Its pages stay mapped and in the caches: a chunk costs one copy in the
 *   kernel, as a flush does, not a page fault and a cold page per 4 KiB
 *   (a fresh window per chunk cost the process 2-3x the CPU of the flush
 *   writer).
 * - The space of each chunk in the .evt file is reserved before the chunk
 *   starts: a full disk gives ENOSPC there - the location stops with
 *   MeasurementOnOff(OFF) in the space every durable chunk keeps for it -
 *   never a SIGBUS on a later store or a failed write of a full chunk.
 * - Every open, reserve, map and write runs through the io callback
 *   (otf2w__io). At close the last chunk is written (staged) or left in
 *   place (chunk 0), the file cut after its end (02 01) with ftruncate and
 *   the staging file removed. After a kill, otf2w_durable_settle puts the
 *   staged chunk into the .evt file (tracer recover).
 *
 * dseq (odd while the owner switches chunks) lets another thread read a
 * consistent (chunk, committed bytes) pair: otf2w_evt_writer_durable_pos.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"
#include "otf2w_stage.h"

/* The smallest part of a window worth reserving when the whole one does
 * not fit: header, a few records and the stop reserve. */
#define DUR_MIN_WINDOW (16u << 10)
/* The smallest first step of a location's first window: one page (one
 * file system block), which holds a short process's records. Cutting the
 * file after its end at close then frees no reserved block: on ext4
 * (mounted with discard) freeing them cost ~0.1 ms at the cut and as much
 * again when the file is removed, in every short process. */
#define DUR_FIRST_MIN 4096u

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
	ar->dur_first = bytes && bytes < DUR_FIRST_MIN ? DUR_FIRST_MIN : bytes;
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

/* ---- the staging file ------------------------------------------------------- */

static struct otf2w_stage_tail *stage_tail(const struct otf2w_buf *b)
{
	return (struct otf2w_stage_tail *)(b->dstage + otf2w_stage_tail_at(b->chunk_size));
}

static int is_staged(const struct otf2w_buf *b)
{
	return b->dstage && b->cur >= 0 && b->chunks && b->chunks[0] == b->dstage;
}

static size_t stage_path(const struct otf2w_buf *b, char *out, size_t n)
{
	size_t l = otf2w__buf_path(b, out, n);
	if (l + sizeof(OTF2W_STAGE_SUFFIX) > n)
		return n;
	memcpy(out + l, OTF2W_STAGE_SUFFIX, sizeof(OTF2W_STAGE_SUFFIX));
	return l + sizeof(OTF2W_STAGE_SUFFIX) - 1;
}

/* Reserve [off, off + *len) of fd, halving *len on ENOSPC/EFBIG down to
 * DUR_MIN_WINDOW (what can still be saved is: the location stops at its
 * end). 0 or the errno. */
static int reserve_fit(int fd, uint64_t off, uint64_t *len)
{
	int e = otf2w__reserve(fd, (int64_t)off, (int64_t)*len);
	while ((e == ENOSPC || e == EFBIG) && *len / 2 >= DUR_MIN_WINDOW) {
		*len /= 2;
		e = otf2w__reserve(fd, (int64_t)off, (int64_t)*len);
	}
	return e;
}

struct map_call {
	struct otf2w_buf *b;
	uint64_t index;  /* file chunk */
	uint8_t *p;      /* chunk 0: its window */
	uint64_t len;    /* reserved: the chunk, or less when the disk (or RLIMIT_FSIZE) has no more */
	uint64_t want;   /* to reserve (0: the chunk) */
	int write;       /* prepare_staged: then finish the full staged chunk and write it (one call) */
	int finished;    /* ... it was finished (its write may have failed) */
};

/* Chunk 0: open (create) the .evt file, reserve the chunk's space, map
 * it, close. */
static otf2w_status map_first(void *arg)
{
	struct map_call *c = arg;
	struct otf2w_buf *b = c->b;
	otf2w_archive *ar = b->ar;
	char path[4096], why[1024];
	otf2w_status st;

	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	/* the directories are made when the file cannot be created without
	 * them: the parts of a process tree share theirs, made by the first
	 * (two mkdir calls less per process) */
	int flags = O_RDWR | O_CREAT | (b->file_used ? 0 : O_TRUNC);
	int fd = otf2w__open(path, flags, 0644);
	if (fd < 0 && errno == ENOENT) {
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
		fd = otf2w__open(path, flags, 0644);
	} else if (fd >= 0 && !ar->files_created) {
		/* (the path is fixed from now on, as after otf2w__make_dirs) */
		if (ar->emergency) {
			ar->files_created = 1;
		} else if (otf2w__lock(ar) == OTF2W_OK) {
			ar->files_created = 1;
			otf2w__unlock(ar);
		}
	}
	if (fd < 0)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path,
				     otf2w__open_error(path, errno, why, sizeof(why)));
	b->file_used = 1;
	uint64_t cs = b->chunk_size;
	c->len = c->want && c->want < cs ? c->want : cs;
	int e = reserve_fit(fd, 0, &c->len);
	void *m = MAP_FAILED;
	if (!e) {
		m = otf2w_sys.mmap(NULL, cs, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			e = errno;
	}
	otf2w_sys.close(fd);
	if (e)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot reserve %llu bytes in %s: %s",
				     (unsigned long long)cs, path, strerror(e));
	c->p = m;
	return OTF2W_OK;
}

/* Chunk index >= 1: the staging file created and mapped (the first time),
 * the chunk's space in the .evt file reserved; with c->write, the full
 * staged chunk before it then finished and written into the file (one
 * open of the file for both, one call of the io callback per chunk). */
static otf2w_status prepare_staged(void *arg)
{
	struct map_call *c = arg;
	struct otf2w_buf *b = c->b;
	otf2w_archive *ar = b->ar;
	uint64_t cs = b->chunk_size;
	char path[4096], why[1024];
	int e;

	if (!b->dstage) {
		uint64_t sz = otf2w_stage_tail_at(cs) + OTF2W_STAGE_PAGE;
		if (stage_path(b, path, sizeof(path)) >= sizeof(path))
			return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
		int fd = otf2w__open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return otf2w__seterr(ar, OTF2W_E_IO, "cannot create %s: %s", path,
					     otf2w__open_error(path, errno, why, sizeof(why)));
		void *m = MAP_FAILED;
		e = otf2w__reserve(fd, 0, (int64_t)sz);
		if (!e) {
			m = otf2w_sys.mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m == MAP_FAILED)
				e = errno;
		}
		otf2w_sys.close(fd);
		if (e) {
			otf2w_sys.unlink(path);
			return otf2w__seterr(ar, OTF2W_E_IO, "cannot reserve %llu bytes in %s: %s",
					     (unsigned long long)sz, path, strerror(e));
		}
		b->dstage = m;
		struct otf2w_stage_tail *t = stage_tail(b);
		memcpy(t->magic, OTF2W_STAGE_MAGIC, sizeof(t->magic));
		t->chunk_size = cs;
		t->index = 0;   /* nothing staged yet */
	}
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	int fd = otf2w__open(path, O_RDWR, 0644);
	if (fd < 0)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot open %s: %s", path,
				     otf2w__open_error(path, errno, why, sizeof(why)));
	c->len = cs;
	e = reserve_fit(fd, c->index * cs, &c->len);
	if (e) {
		otf2w_sys.close(fd);
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot reserve %llu bytes in %s: %s",
				     (unsigned long long)cs, path, strerror(e));
	}
	if (c->write) {
		otf2w__finish_chunk(b);
		c->finished = 1;
		e = otf2w__pwrite_all(fd, b->dstage, b->dlen, (int64_t)(b->disk_chunks * cs));
	}
	otf2w_sys.close(fd);
	if (e)
		return otf2w__seterr(ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	return OTF2W_OK;
}

/* The finished staged chunk (its reserved bytes) into the .evt file. */
static otf2w_status write_staged(void *arg)
{
	struct otf2w_buf *b = arg;
	char path[4096];
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return otf2w__seterr(b->ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	int fd = otf2w__open(path, O_WRONLY, 0644);
	int e = fd < 0 ? errno : otf2w__pwrite_all(fd, b->dstage, b->dlen, (int64_t)(b->disk_chunks * b->chunk_size));
	if (fd >= 0)
		otf2w_sys.close(fd);
	if (e)
		return otf2w__seterr(b->ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	return OTF2W_OK;
}

struct grow_call {
	struct otf2w_buf *b;
	uint64_t from, to;   /* bytes of the chunk reserved now, wanted */
};

/* The rest of chunk 0 reserved in place (the mapping covers the whole
 * chunk already). */
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

/* Detach the current chunk: chunk 0's window is returned for the caller to
 * unmap (the staging window stays mapped). disk_chunks counts it. */
static uint8_t *drop_chunk(struct otf2w_buf *b)
{
	uint8_t *old = b->chunks[0] == b->dstage ? NULL : b->chunks[0];
	b->chunks[0] = NULL;
	b->nchunks = 0;
	b->cur = -1;
	b->disk_chunks++;
	b->f.pos = b->f.end = NULL;
	return old;
}

/* A finished staged chunk could not be written into the file: it stays
 * staged (written at close) and the location stops. */
static void staged_unsaved(struct otf2w_buf *b)
{
	b->dunsaved = 1;
	b->stopped = 1;
	b->dur_full = 1;
	b->f.end = b->f.pos;
}

/* End the current chunk as a full one: chunk 0 stays in its file (its
 * window is unmapped), a staged one is written into the file. A failed
 * write keeps the chunk staged (dunsaved: written at close) and stops
 * the location. Between seq_begin and seq_end. */
static otf2w_status finish_current(struct otf2w_buf *b)
{
	otf2w__finish_chunk(b);
	if (!is_staged(b)) {
		otf2w_sys.munmap(drop_chunk(b), b->chunk_size);
		return OTF2W_OK;
	}
	otf2w_status st = otf2w__io(b->ar, write_staged, b);
	if (st) {
		staged_unsaved(b);
		return st;
	}
	(void)drop_chunk(b);
	return OTF2W_OK;
}

/* The rest of a partly reserved chunk 0, in place (dgrow). */
static otf2w_status grow_first(struct otf2w_buf *b)
{
	struct grow_call g = { b, b->dlen, b->chunk_size };
	b->dgrow = 0;
	otf2w_status st = otf2w__io(b->ar, grow_window, &g);
	if (st == OTF2W_OK) {
		b->f.end += b->chunk_size - b->dlen;
		b->dlen = b->chunk_size;
	}
	return st;
}

otf2w_status otf2w_evt_writer_durable_whole(otf2w_evt_writer *w)
{
	if (!w)
		return OTF2W_E_INVALID_ARGUMENT;
	struct otf2w_buf *b = &w->b;
	if (!otf2w__is_durable(b) || b->cur < 0 || !b->dgrow)
		return OTF2W_OK;
	return grow_first(b);
}

/* The record of need bytes does not fit: next chunk (see next_chunk). */
otf2w_status otf2w__dur_next_chunk(struct otf2w_buf *b, uint64_t time, size_t need)
{
	otf2w_archive *ar = b->ar;

	if (b->dunsaved)
		return OTF2W_E_STOPPED;
	if (b->cur >= 0 && b->max && b->disk_chunks + 1 >= b->max && ar->flush_cb.pre_flush &&
	    ar->flush_cb.pre_flush(ar->flush_ud, b->location, 0) == OTF2W_NO_FLUSH) {
		otf2w__stop_buffer(b, time);
		return OTF2W_E_STOPPED;
	}
	/* chunk 0, partly reserved: the rest of it now */
	if (b->cur >= 0 && b->dgrow) {
		if (grow_first(b) == OTF2W_OK && (size_t)(b->f.end - b->f.pos) >= need)
			return OTF2W_OK;
		/* no room for it: the next chunk (whose reserving says why) */
	}
	uint64_t index = b->cur >= 0 ? b->disk_chunks + 1 : b->disk_chunks;
	/* a full staged chunk is finished and written in the same call that
	 * reserves the next one (between seq_begin and seq_end) */
	struct map_call c = { b, index, NULL, 0, index == 0 ? ar->dur_first : 0, is_staged(b), 0 };
	if (c.write)
		seq_begin(b);
	otf2w_status st = otf2w__io(ar, index == 0 ? map_first : prepare_staged, &c);
	if (st && c.finished) {
		staged_unsaved(b);   /* reserved, but the full chunk not written */
		seq_end(b);
		return st;
	}
	if (st) {
		if (c.write)
			seq_end(b);
		/* full disk: OFF into the reserved space, later events dropped */
		if (b->cur >= 0) {
			otf2w__stop_buffer(b, time);
			b->dur_full = 1;
		} else {
			b->stopped = 1;
		}
		return st;
	}
	if (c.write) {
		(void)drop_chunk(b);   /* finished and written: the window is free */
	} else {
		seq_begin(b);
		if (b->cur >= 0 && (st = finish_current(b)) != OTF2W_OK) {
			seq_end(b);
			return st;
		}
	}
	if (!b->chunks) {
		b->chunks = b->chunk_inline;
		b->cap = sizeof(b->chunk_inline) / sizeof(b->chunk_inline[0]);
	}
	if (index > 0) {
		/* the staged chunk before is in the file: the window is free */
		__atomic_store_n(&stage_tail(b)->index, index, __ATOMIC_RELEASE);
		c.p = b->dstage;
	}
	b->chunks[0] = c.p;
	b->nchunks = 1;
	b->dlen = c.len;
	b->dgrow = index == 0 && ar->dur_first && c.len == ar->dur_first && c.len < b->chunk_size;
	otf2w__start_chunk(b, 0);
	b->f.end -= b->chunk_size - c.len;   /* a partly reserved chunk ends early */
	seq_end(b);
	if ((size_t)(b->f.end - b->f.pos) < need)
		return otf2w__seterr(ar, OTF2W_E_RECORD_TOO_LARGE, "record of %zu bytes does not fit a chunk", need);
	return OTF2W_OK;
}

/* A location stopped by a full disk resumes (at close): its last records
 * go into the current chunk's reserve. */
void otf2w__dur_open_reserve(struct otf2w_buf *b)
{
	if (b->cur >= 0 && b->chunks && b->chunks[0] && !b->dunsaved)
		b->f.end = b->chunks[0] + b->dlen - 1 - OTF2W_STOP_RESERVE;
}

/* otf2w_evt_writer_flush: the current chunk ends as a full chunk. */
void otf2w__dur_flush(struct otf2w_buf *b)
{
	if (b->dunsaved)
		return;
	seq_begin(b);
	(void)finish_current(b);
	seq_end(b);
}

/* Write all of data at off of fd; 0 or the errno. */
static int put_at(int fd, const void *data, size_t len, uint64_t off)
{
	return otf2w__pwrite_all(fd, data, len, (int64_t)off);
}

/* The file's end: the last chunk (02 01 after its last record; a staged
 * one written into the file, chunk 0 left in place), the file cut there,
 * the staging file removed. emerg: async-signal-safe (own descriptor). */
otf2w_status otf2w__dur_final(struct otf2w_buf *b, int emerg)
{
	otf2w_archive *ar = b->ar;
	uint64_t cs = b->chunk_size, at = b->disk_chunks * cs, size;
	uint8_t tmp[OTF2W_CHUNK_HEADER + 2];
	char path[4096];
	int e = 0;

	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return emerg ? OTF2W_E_IO : otf2w__seterr(ar, OTF2W_E_INVALID_ARGUMENT, "path too long: %s", path);
	int fd = otf2w__open(path, O_RDWR, 0644);
	if (fd < 0)
		e = errno;
	if (b->cur >= 0 && !b->dunsaved) {
		int staged = is_staged(b);
		size_t len = otf2w__end_chunk(b, b->chunks[0], b->f.pos);
		size = at + len;
		if (!e && staged)
			e = put_at(fd, b->dstage, len, at);
		seq_begin(b);
		uint8_t *old = drop_chunk(b);
		seq_end(b);
		if (old)
			otf2w_sys.munmap(old, cs);
	} else {
		/* no chunk open (flushed), or a staged full chunk that could not
		 * be written: that chunk, then an empty one with the end */
		if (b->dunsaved) {
			if (!e)
				e = put_at(fd, b->dstage, b->dlen, at);
			at += cs;
			seq_begin(b);
			(void)drop_chunk(b);
			seq_end(b);
			b->dunsaved = 0;
		}
		otf2w__put_header(b, tmp, b->f.nevents + 1, b->f.nevents);
		tmp[OTF2W_CHUNK_HEADER] = 0x02;
		tmp[OTF2W_CHUNK_HEADER + 1] = 0x01;
		if (!e)
			e = put_at(fd, tmp, sizeof(tmp), at);
		size = at + sizeof(tmp);
	}
	if (!e && otf2w_sys.ftruncate(fd, (off_t)size) != 0)
		e = errno;
	if (fd >= 0 && otf2w_sys.close(fd) != 0 && !e)
		e = errno;
	if (b->dstage) {
		otf2w_sys.munmap(b->dstage, otf2w_stage_tail_at(cs) + OTF2W_STAGE_PAGE);
		b->dstage = NULL;
		/* kept when the chunk it holds is not in the file (recovery) */
		if (!e && stage_path(b, path, sizeof(path)) < sizeof(path))
			otf2w_sys.unlink(path);
	}
	if (e)
		return emerg ? OTF2W_E_IO : otf2w__seterr(ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	return OTF2W_OK;
}

/* Writer freed or abandoned (fork child: the parent's windows are dropped
 * without writing anything, its staging file left alone). */
void otf2w__dur_release(struct otf2w_buf *b)
{
	if (b->cur >= 0 && b->chunks && b->chunks[0] && b->chunks[0] != b->dstage)
		otf2w_sys.munmap(b->chunks[0], b->chunk_size);
	if (b->dstage)
		otf2w_sys.munmap(b->dstage, otf2w_stage_tail_at(b->chunk_size) + OTF2W_STAGE_PAGE);
	b->dstage = NULL;
	if (b->chunks && b->chunks != b->chunk_inline)
		otf2w_sys.free(b->chunks);
	b->chunks = NULL;
	b->nchunks = b->cap = 0;
	b->cur = -1;
	b->f.pos = b->f.end = NULL;
}
