/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * buffer_end.c - the end of a chunked buffer (buffer.c): its final write
 * (the file completed, also from a crash path: emergency opens and writes
 * without the io callback), and the deferred close of many short-lived
 * threads' buffers (their whole content kept until the archive's close).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otf2w_int.h"
#include "format_int.h"

/* ---- final write ------------------------------------------------------------ */

static otf2w_status emerg_open(struct otf2w_buf *b)
{
	char path[4096];

	if (b->fd >= 0)
		return OTF2W_OK;
	if (otf2w__buf_path(b, path, sizeof(path)) >= sizeof(path))
		return OTF2W_E_INVALID_ARGUMENT;
	otf2w__make_dirs_nolock(b->ar, b->kind != OTF2W_BUF_GDEF && b->kind != OTF2W_BUF_MARKER);
	int fd = otf2w__open(path, O_WRONLY | O_CREAT | (b->file_used ? 0 : O_TRUNC), 0644);
	if (fd < 0)
		return OTF2W_E_IO;
	otf2w__note_identity(b, fd);
	b->fd = fd;
	b->file_used = 1;
	return OTF2W_OK;
}

static otf2w_status emerg_pwrite(struct otf2w_buf *b, const uint8_t *data, size_t len, uint64_t off)
{
	return otf2w__write_checked(b, data, len, off) ? OTF2W_E_IO : OTF2W_OK;
}

/* The buffered chunks could not be written (file size limit, full disk):
 * end the file after its last whole chunk on disk with an empty chunk
 * (header + 02 01), dropping whole chunks until that fits, so the reader
 * opens what was saved. Async-signal-safe. 0 when the file is readable. */
static int terminate_cut_file(struct otf2w_buf *b)
{
	uint8_t tmp[OTF2W_CHUNK_HEADER + 2];
	for (;;) {
		uint64_t last = 0;
		uint64_t off = b->disk_chunks * b->chunk_size;
		if (b->disk_chunks > 0) {
			uint8_t hdr[OTF2W_CHUNK_HEADER];
			if (otf2w_sys.pread(b->fd, hdr, sizeof(hdr), (off_t)(off - b->chunk_size)) != (ssize_t)sizeof(hdr))
				return -1;
			memcpy(&last, hdr + 10, 8);
		}
		if (otf2w_sys.ftruncate(b->fd, (off_t)off) != 0)
			return -1;
		otf2w__put_header(b, tmp, last + 1, last);
		tmp[OTF2W_CHUNK_HEADER] = 0x02;
		tmp[OTF2W_CHUNK_HEADER + 1] = 0x01;
		int e = otf2w__pwrite_all(b->fd, tmp, sizeof(tmp), (int64_t)off);
		if (!e)
			return 0;
		if (b->disk_chunks == 0)
			return -1;
		b->disk_chunks--;
	}
}

static otf2w_status buf_write_final(struct otf2w_buf *b, int emerg);

static otf2w_status write_final_io(void *p)
{
	return buf_write_final(p, 0);
}

/* Write what is buffered plus the file end (02 01) and close the file.
 * emerg: async-signal-safe variant (no lock, no malloc, no error text). */
otf2w_status otf2w__buf_write_final(struct otf2w_buf *b, int emerg)
{
	if (emerg || b->closed)
		return buf_write_final(b, emerg);
	return otf2w__io(b->ar, write_final_io, b);
}

static otf2w_status buf_write_final(struct otf2w_buf *b, int emerg)
{
	uint8_t tmp[OTF2W_CHUNK_HEADER + 2];
	otf2w_status st;

	if (b->closed)
		return OTF2W_OK;
	if (otf2w__is_durable(b) && (b->cur >= 0 || b->dstage)) {
		st = otf2w__dur_final(b, emerg);
		if (st == OTF2W_OK) {
			b->closed = 1;
			b->f.end = b->f.pos;
		}
		return st;
	}
	st = emerg ? emerg_open(b) : otf2w__buf_open(b);
	if (st)
		return st;
	if (b->cur < 0) {
		otf2w__put_header(b, tmp, b->f.nevents + 1, b->f.nevents);
		tmp[OTF2W_CHUNK_HEADER] = 0x02;
		tmp[OTF2W_CHUNK_HEADER + 1] = 0x01;
		st = emerg ? emerg_pwrite(b, tmp, sizeof(tmp), b->disk_chunks * b->chunk_size)
			   : otf2w__buf_pwrite(b, tmp, sizeof(tmp), b->disk_chunks * b->chunk_size);
	} else {
		uint8_t *c = b->chunks[b->cur];
		uint8_t *p = b->f.pos;
		size_t len;

		len = otf2w__end_chunk(b, c, p);
		st = OTF2W_OK;
		for (int32_t i = 0; i <= b->cur && st == OTF2W_OK; i++) {
			size_t l = i == b->cur ? len : b->chunk_size;
			uint64_t off = (b->disk_chunks + (uint64_t)i) * b->chunk_size;
			st = emerg ? emerg_pwrite(b, b->chunks[i], l, off)
				   : otf2w__buf_pwrite(b, b->chunks[i], l, off);
		}
	}
	if (st != OTF2W_OK && b->fd >= 0)
		(void)terminate_cut_file(b);   /* the error stays reported */
	if (st == OTF2W_OK) {
		/* delayed write errors (NFS, quota) show up at close() */
		int e = otf2w__buf_close_fd(b, emerg);
		if (e && !emerg) {
			char path[4096];
			otf2w__buf_path(b, path, sizeof(path));
			st = otf2w__seterr(b->ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
		}
		b->closed = 1;
		b->f.end = b->f.pos;	/* later inline writes take the slow path */
	}
	return st;
}

/* ---- deferred close (many short-lived threads) ------------------------------ */

/* The file content of a buffer that has nothing on disk and at most one
 * chunk: header + records + end, compacted into an exact-size malloc copy. */
int otf2w__buf_defer(struct otf2w_buf *b, uint64_t max_each, uint64_t max_total)
{
	otf2w_archive *ar = b->ar;
	uint8_t tmp[OTF2W_CHUNK_HEADER + 2];
	const uint8_t *src;
	size_t len;

	if (b->closed || b->deferred || b->fd >= 0 || b->file_used || b->disk_chunks || b->cur > 0 ||
	    ar->abandoned || otf2w__is_durable(b))
		return 0;
	if (b->cur < 0) {
		otf2w__put_header(b, tmp, b->f.nevents + 1, b->f.nevents);
		tmp[OTF2W_CHUNK_HEADER] = 0x02;
		tmp[OTF2W_CHUNK_HEADER + 1] = 0x01;
		src = tmp;
		len = sizeof(tmp);
	} else {
		uint8_t *c = b->chunks[0];
		uint8_t *p = b->f.pos;

		len = otf2w__end_chunk(b, c, p);
		src = c;
	}
	if (len > max_each)
		return 0;
	if (otf2w__lock(ar) != OTF2W_OK)
		return 0;
	if (ar->deferred_bytes + len > max_total) {
		otf2w__unlock(ar);
		return 0;
	}
	ar->deferred_bytes += len;
	otf2w__unlock(ar);
	uint8_t *copy = otf2w_sys.malloc(len);
	if (!copy) {
		if (otf2w__lock(ar) == OTF2W_OK) {
			ar->deferred_bytes -= len;
			otf2w__unlock(ar);
		}
		return 0;
	}
	memcpy(copy, src, len);
	b->deferred_len = len;
	__atomic_store_n(&b->deferred, copy, __ATOMIC_RELEASE);
	__atomic_store_n(&b->closed, 1, __ATOMIC_RELEASE);
	b->f.end = b->f.pos;	/* later inline writes take the slow path */
	otf2w__buf_release(b);
	return 1;
}

static otf2w_status buf_write_deferred(struct otf2w_buf *b, int emerg);

static otf2w_status write_deferred_io(void *p)
{
	return buf_write_deferred(p, 0);
}

otf2w_status otf2w__buf_write_deferred(struct otf2w_buf *b, int emerg)
{
	if (emerg)
		return buf_write_deferred(b, 1);
	return otf2w__io(b->ar, write_deferred_io, b);
}

static otf2w_status buf_write_deferred(struct otf2w_buf *b, int emerg)
{
	uint8_t *d = __atomic_load_n(&b->deferred, __ATOMIC_ACQUIRE);
	size_t len = b->deferred_len;
	otf2w_status st;

	if (!d)
		return OTF2W_OK;
	st = emerg ? emerg_open(b) : otf2w__buf_open(b);
	if (st)
		return st;
	st = emerg ? emerg_pwrite(b, d, len, 0) : otf2w__buf_pwrite(b, d, len, 0);
	int e = otf2w__buf_close_fd(b, emerg);
	if (st == OTF2W_OK && e && !emerg) {
		char path[4096];
		otf2w__buf_path(b, path, sizeof(path));
		st = otf2w__seterr(b->ar, OTF2W_E_IO, "cannot write %s: %s", path, strerror(e));
	}
	b->deferred = NULL;	/* written (or failed): never twice */
	if (!emerg) {
		otf2w_sys.free(d);
		if (otf2w__lock(b->ar) == OTF2W_OK) {
			b->ar->deferred_bytes -= len;
			otf2w__unlock(b->ar);
		}
	}
	return st;
}
