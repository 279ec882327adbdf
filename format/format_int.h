/* SPDX-License-Identifier: BSD-3-Clause */
/* format_int.h - internal functions shared by the format/ sources. */
#ifndef OTF2W_FORMAT_INT_H
#define OTF2W_FORMAT_INT_H

#include "otf2w_int.h"
#include "otf2w_sys.h"

/* common.c */
otf2w_status otf2w__lock(otf2w_archive *ar);
void otf2w__unlock(otf2w_archive *ar);
otf2w_status otf2w__seterr(otf2w_archive *ar, otf2w_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void otf2w__forget_error(const otf2w_archive *ar);
/* Run fn(arg) through the archive's io callback (the service thread with
 * its own descriptor table), or here when there is none, it cannot, or the
 * archive is in emergency mode. The error text of a failure is carried
 * back to the calling thread. */
otf2w_status otf2w__io(otf2w_archive *ar, otf2w_status (*fn)(void *), void *arg);

/* archive.c */
struct otf2w_buf *otf2w__vec_find(const struct otf2w_vec *v, uint64_t loc);
otf2w_status otf2w__close_buf(otf2w_archive *ar, struct otf2w_buf *b);
/* buffer.c, for buffer_end.c: the buffer's file (opened, identity noted,
 * written at off with the descriptor check, closed) */
otf2w_status otf2w__buf_open(struct otf2w_buf *b);
void otf2w__note_identity(struct otf2w_buf *b, int fd);
int otf2w__write_checked(struct otf2w_buf *b, const uint8_t *data, size_t len, uint64_t off);
otf2w_status otf2w__buf_pwrite(struct otf2w_buf *b, const uint8_t *data, size_t len, uint64_t off);
int otf2w__buf_close_fd(struct otf2w_buf *b, int emerg);

/* buffer.c, for mapped.c */
void otf2w__put_header(struct otf2w_buf *b, uint8_t *c, uint64_t first, uint64_t last);
size_t otf2w__end_chunk(struct otf2w_buf *b, uint8_t *c, uint8_t *p);
void otf2w__finish_chunk(struct otf2w_buf *b);
void otf2w__start_chunk(struct otf2w_buf *b, int32_t idx);
void otf2w__stop_buffer(struct otf2w_buf *b, uint64_t time);

/* mapped.c: durable event files */
int otf2w__is_durable(const struct otf2w_buf *b);
otf2w_status otf2w__dur_next_chunk(struct otf2w_buf *b, uint64_t time, size_t need);
void otf2w__dur_flush(struct otf2w_buf *b);
void otf2w__dur_open_reserve(struct otf2w_buf *b);
otf2w_status otf2w__dur_final(struct otf2w_buf *b, int emerg);
void otf2w__dur_release(struct otf2w_buf *b);

/* close.c */
void otf2w__archive_free(otf2w_archive *ar);

/* fileio.c: paths and directories (async-signal-safe helpers) */
/* Concatenate NULL-terminated list of strings into out; returns the full
 * length (>= n: truncated). Async-signal-safe. */
size_t otf2w__path_join(char *out, size_t n, ...);
/* Decimal text of v (buffer of >= 21 bytes). Async-signal-safe. */
void otf2w__u64_dec(char *out, uint64_t v);
/* Create the archive directory (and NAME/ when loc_dir); caller holds the lock. */
otf2w_status otf2w__make_dirs(otf2w_archive *ar, int loc_dir);
void otf2w__make_dirs_nolock(otf2w_archive *ar, int loc_dir);
/* 1 if dir/nameext exists. */
int otf2w__path_exists(const char *dir, const char *name, const char *ext);
/* strerror(err) of a failed open of path; for ENOTDIR also which component
 * is not a directory and what it is (diagnostics of a failed run) */
const char *otf2w__open_error(const char *path, int err, char *buf, size_t n);

/* fileio.c (async-signal-safe) */
#include <sys/types.h>
/* open(2) with O_CLOEXEC, the descriptor moved to a high number. */
int otf2w__open(const char *path, int flags, mode_t mode);
/* Write all of data at off (off < 0: at the file position); 0 or the errno.
 * SIGXFSZ blocked around it; EFBIG truncates a positioned write's partial
 * data away. */
int otf2w__pwrite_all(int fd, const void *data, size_t len, int64_t off);
/* Reserve [off, off + len) of fd (posix_fallocate); 0 or the errno
 * (ENOSPC, EFBIG: SIGXFSZ blocked and taken back as for writes). */
int otf2w__reserve(int fd, int64_t off, int64_t len);

/* buffer.c */
void otf2w__buf_init(struct otf2w_buf *b, otf2w_archive *ar, int kind, uint64_t loc);
void otf2w__buf_release(struct otf2w_buf *b);
/* Close b->fd only if it still names the file opened for b. */
int otf2w__buf_close_own(struct otf2w_buf *b);
void otf2w__chunk_free(otf2w_archive *ar, uint8_t *c, uint64_t size, int evt);
size_t otf2w__buf_path(const struct otf2w_buf *b, char *out, size_t n);
otf2w_status otf2w__buf_flush(struct otf2w_buf *b);
otf2w_status otf2w__buf_resume(struct otf2w_buf *b, uint64_t t);
otf2w_status otf2w__buf_write_final(struct otf2w_buf *b, int emerg);
/* Deferred close (small event buffers): 1 if b now holds its file content in
 * b->deferred (chunks released), 0 if it must be written normally. */
int otf2w__buf_defer(struct otf2w_buf *b, uint64_t max_each, uint64_t max_total);
/* Write b->deferred to the file (emerg: async-signal-safe, the copy leaks). */
otf2w_status otf2w__buf_write_deferred(struct otf2w_buf *b, int emerg);

#endif
