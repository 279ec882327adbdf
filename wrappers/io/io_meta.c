/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_meta.c - POSIX calls that change or query a file without moving data:
 * truncate/ftruncate, fallocate/posix_fallocate, posix_fadvise and the
 * stat family (stat, lstat, fstat, fstatat, statx). OTF2 3.0 has no record
 * for a size change, an allocation, advice or a metadata query (its Io
 * records are handle life cycles, seeks, status flags, deletion, data
 * operations of mode READ/WRITE/FLUSH and locks), so each of these calls is
 * a region of role FILE_IO_METADATA and nothing else: its time shows, which
 * file it concerned does not. Recording a truncate as a WRITE operation or
 * a status-flags change would say something that did not happen.
 *
 * unlink, unlinkat and rename are regions of that role too, with the
 * IoDeleteFile of the file they removed (rename: the file it replaced).
 *
 * The tracer's own calls to stat, lstat, fstat, ftruncate, posix_fallocate,
 * unlink and rename never come here (tr_real, otf2w_sys): never a region.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_int.h"

/* X(return type, function, (parameters), (arguments)) */
#define IO_META_CALLS(X) \
	X(int, truncate, (const char *p, off_t len), (p, len)) \
	X(int, truncate64, (const char *p, off64_t len), (p, len)) \
	X(int, ftruncate, (int fd, off_t len), (fd, len)) \
	X(int, ftruncate64, (int fd, off64_t len), (fd, len)) \
	X(int, fallocate, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len)) \
	X(int, fallocate64, (int fd, int mode, off64_t off, off64_t len), (fd, mode, off, len)) \
	X(int, posix_fallocate, (int fd, off_t off, off_t len), (fd, off, len)) \
	X(int, posix_fallocate64, (int fd, off64_t off, off64_t len), (fd, off, len)) \
	X(int, posix_fadvise, (int fd, off_t off, off_t len, int advice), (fd, off, len, advice)) \
	X(int, posix_fadvise64, (int fd, off64_t off, off64_t len, int advice), (fd, off, len, advice)) \
	X(int, stat, (const char *p, struct stat *st), (p, st)) \
	X(int, stat64, (const char *p, struct stat64 *st), (p, st)) \
	X(int, lstat, (const char *p, struct stat *st), (p, st)) \
	X(int, lstat64, (const char *p, struct stat64 *st), (p, st)) \
	X(int, fstat, (int fd, struct stat *st), (fd, st)) \
	X(int, fstat64, (int fd, struct stat64 *st), (fd, st)) \
	X(int, fstatat, (int dirfd, const char *p, struct stat *st, int fl), (dirfd, p, st, fl)) \
	X(int, fstatat64, (int dirfd, const char *p, struct stat64 *st, int fl), (dirfd, p, st, fl)) \
	X(int, statx, (int dirfd, const char *p, int fl, unsigned mask, struct statx *st), \
	  (dirfd, p, fl, mask, st))

/* the calls that also record the deletion of a file */
#define IO_META_DELETE(X) X(unlink) X(unlinkat) X(rename)

#define IO_MC_DEF(ret_t, fn, params, args) IO_REAL_DEF(fn)
#define IO_MC_SYM(ret_t, fn, params, args) IO_REAL_SYM(fn)
IO_META_CALLS(IO_MC_DEF)
IO_META_DELETE(IO_REAL_DEF)
static const struct tr_real_sym io_meta_syms[] = { IO_META_CALLS(IO_MC_SYM) IO_META_DELETE(IO_REAL_SYM) };

void io_meta_init(void)
{
	IO_REAL_RESOLVE(io_meta_syms);
}

/* The region around the real call; errno and the result are the real call's. */
#define IO_MC_WRAP(ret_t, fn, params, args)                                 \
	TR_EXPORT ret_t fn params                                           \
	{                                                                   \
		IO_INIT(fn);                                                \
		struct tr_thread *t = io_get();                             \
		if (!t)                                                     \
			return real_##fn args;                              \
		io_meta_begin(t, IO_R_##fn);                                \
		ret_t r = real_##fn args;                                   \
		io_meta_end(t, IO_R_##fn, tr_time(), errno);                \
		return r;                                                   \
	}
IO_META_CALLS(IO_MC_WRAP)

/* ---- unlink & rename ------------------------------------------------------------ */

/* The end of a call that removed file when it returned 0 (IoDeleteFile,
 * then the region's Leave); errno the call's. */
static int deleted(struct tr_thread *t, enum io_rgn r, int ret, uint32_t file)
{
	int err = errno;
	uint64_t now = tr_time();
	if (ret == 0)
		io_rec_delete(t, now, file);
	io_meta_end(t, r, now, err);
	return ret;
}

static int io_unlink(enum io_rgn r, int dirfd, const char *path, int flags)
{
	IO_INIT(unlink); IO_INIT(unlinkat);
	struct tr_thread *t = io_get();
	if (!t)
		return r == IO_R_unlink ? real_unlink(path) : real_unlinkat(dirfd, path, flags);
	char canon[PATH_MAX];
	io_canon(dirfd, path, canon, sizeof(canon));
	uint32_t file = tr_def_io_file(canon, (flags & AT_REMOVEDIR) != 0);
	io_meta_begin(t, r);
	int ret = r == IO_R_unlink ? real_unlink(path) : real_unlinkat(dirfd, path, flags);
	return deleted(t, r, ret, file);
}

TR_EXPORT int unlink(const char *path)
{
	return io_unlink(IO_R_unlink, AT_FDCWD, path, 0);
}

TR_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return io_unlink(IO_R_unlinkat, dirfd, path, flags);
}

/* rename: the file replaced at the new path (if one existed) is deleted. */
static int io_rename(const char *from, const char *to)
{
	IO_INIT(rename);
	struct tr_thread *t = io_get();
	if (!t)
		return real_rename(from, to);
	char canon[PATH_MAX];
	struct stat st;
	uint32_t file = IO_UNDEF32;
	if (to && tr_real.lstat(to, &st) == 0) {
		io_canon(AT_FDCWD, to, canon, sizeof(canon));
		file = tr_def_io_file(canon, S_ISDIR(st.st_mode));
	}
	io_meta_begin(t, IO_R_rename);
	int ret = real_rename(from, to);
	return deleted(t, IO_R_rename, ret, file);
}

TR_EXPORT int rename(const char *from, const char *to)
{
	return io_rename(from, to);
}
