/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_copy.c - in-kernel copies (copy_file_range, sendfile, splice: a read
 * of the source and a write of the destination, IoOperationBegin/Complete
 * pairs) and seeks (lseek: IoSeek) of the POSIX I/O wrappers (io.c).
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "io_int.h"

#define IO_COPY_LIST(X) X(copy_file_range) X(sendfile) X(sendfile64) X(splice) X(lseek) X(lseek64)
IO_COPY_LIST(IO_REAL_DEF)
static const struct tr_real_sym io_copy_syms[] = { IO_COPY_LIST(IO_REAL_SYM) };

void io_copy_init(void)
{
	IO_REAL_RESOLVE(io_copy_syms);
}

/* ---- in-kernel copies: a read of the source and a write of the destination ---- */

/* kind 0: copy_file_range, 1: sendfile, 2: sendfile64, 3: splice (one end
 * a pipe: adopted as a pre-created handle on first use). Both operations
 * begin and complete together (matching ids n and n + 1). */
static ssize_t io_call_copy(int kind, int in, off64_t *oin, int out, off64_t *oout, size_t len,
			    unsigned flags)
{
	switch (kind) {
	case 0: IO_INIT(copy_file_range); return real_copy_file_range(in, oin, out, oout, len, flags);
	case 1: IO_INIT(sendfile); return real_sendfile(out, in, (off_t *)oin, len);
	case 2: IO_INIT(sendfile64); return real_sendfile64(out, in, oin, len);
	default: IO_INIT(splice); return real_splice(in, oin, out, oout, len, flags);
	}
}

static ssize_t io_copy(int kind, int in, off64_t *oin, int out, off64_t *oout, size_t len, unsigned flags)
{
	struct tr_thread *t = io_get();
	if (!t)
		return io_call_copy(kind, in, oin, out, oout, len, flags);
	static const enum io_rgn rgns[] = { IO_R_copy_file_range, IO_R_sendfile, IO_R_sendfile64, IO_R_splice };
	enum io_rgn rgn = rgns[kind];
	uint32_t hin = io_posix_handle(in), hout = io_posix_handle(out);
	struct io_op o;
	io_op_begin(&o, t, hin, rgn, IO_OP_READ, len);
	uint64_t wid = 0;
	if (hout != IO_UNDEF32 && !io_rgn_filtered[rgn] && tr_rec_begin(t)) {
		wid = ++io_tls_opid;
		tr_evt_status(t, otf2w_evt_io_operation_begin(t->w, NULL, otf2w_evt_writer_last_time(t->w), hout,
							      IO_OP_WRITE, 0, len, wid));
		tr_rec_end(t);
	}
	errno = t->saved_errno;
	ssize_t r = io_call_copy(kind, in, oin, out, oout, len, flags);
	int err = errno;
	if (wid && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_operation_complete(t->w, NULL, tr_time(), hout,
								 r < 0 ? IO_UNDEF64 : (uint64_t)r, wid));
		tr_rec_end(t);
	}
	io_op_end(&o, r, err);
	return r;
}

TR_EXPORT ssize_t copy_file_range(int in, off64_t *oin, int out, off64_t *oout, size_t len, unsigned flags)
{
	return io_copy(0, in, oin, out, oout, len, flags);
}

TR_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	return io_copy(1, in, (off64_t *)off, out, NULL, count, 0);
}

TR_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	return io_copy(2, in, off, out, NULL, count, 0);
}

TR_EXPORT ssize_t splice(int in, off64_t *oin, int out, off64_t *oout, size_t len, unsigned flags)
{
	return io_copy(3, in, oin, out, oout, len, flags);
}

/* ---- seek ----------------------------------------------------------------------- */

static uint8_t io_whence(int w)
{
	switch (w) {
	case SEEK_CUR: return IO_SEEK_CUR;
	case SEEK_END: return IO_SEEK_END;
#ifdef SEEK_DATA
	case SEEK_DATA: return IO_SEEK_DATA;
	case SEEK_HOLE: return IO_SEEK_HOLE;
#endif
	default: return IO_SEEK_SET;
	}
}

static off64_t io_lseek(enum io_rgn r, int fd, off64_t off, int whence)
{
	IO_INIT(lseek); IO_INIT(lseek64);
	struct tr_thread *t = io_get();
	if (!t)
		return r == IO_R_lseek ? real_lseek(fd, off, whence) : real_lseek64(fd, off, whence);
	uint32_t h = io_posix_handle(fd);
	io_meta_begin(t, r);
	off64_t res = r == IO_R_lseek ? real_lseek(fd, off, whence) : real_lseek64(fd, off, whence);
	int err = errno;
	uint64_t now = tr_time();
	if (res >= 0 && h != IO_UNDEF32 && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_seek(t->w, NULL, now, h, off, io_whence(whence), (uint64_t)res));
		tr_rec_end(t);
	}
	io_meta_end(t, r, now, err);
	return res;
}

TR_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	return io_lseek(IO_R_lseek, fd, off, whence);
}

TR_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	return io_lseek(IO_R_lseek64, fd, off, whence);
}
