/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fileio.c - the writer's only contact with files: open, positioned writes,
 * close. Three rules, because the writer runs inside programs it does not
 * control:
 *
 * - No descriptor is kept between two writes of a buffer (buffer.c closes
 *   after every flush), and the descriptor lives at a high number: a program
 *   that closes every descriptor (close_range(3, ~0U, 0), closefrom, daemon
 *   start-up) and then opens its own files gets the lowest free numbers, so
 *   its files never receive the writer's bytes, and ours is never one it
 *   could have closed between two flushes.
 * - SIGXFSZ is blocked around the writes: under RLIMIT_FSIZE the write
 *   fails with EFBIG instead of killing the program, and the signal the
 *   write raised is taken back (sigtimedwait) unless one was pending
 *   before. A chunk cut by the limit is truncated away, so the file ends
 *   at the last whole chunk (readable).
 * - Everything here is async-signal-safe (emergency writers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "format_int.h"

/* Lowest number for the writer's descriptors: half the descriptor limit,
 * at most 1000 (far above what programs open, below the usual 1024). */
static int high_base(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1000;
	if (rl.rlim_cur < 32)
		return 0;
	rlim_t b = rl.rlim_cur / 2;
	return b > 1000 ? 1000 : (int)b;
}

int otf2w__open(const char *path, int flags, mode_t mode)
{
	int fd = otf2w_sys.open(path, flags | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	int base = high_base();
	if (base > 2 && fd < base) {
		int hi = otf2w_sys.fcntl(fd, F_DUPFD_CLOEXEC, base);
		if (hi >= 0) {
			int saved = errno;
			otf2w_sys.close(fd);
			errno = saved;
			fd = hi;
		}
		/* no descriptor free up there (limit reached): keep the low one */
	}
	return fd;
}

/* SIGXFSZ blocked around a write that may pass RLIMIT_FSIZE; the signal
 * it raised is taken back unless one was pending before. */
struct xfsz_guard {
	sigset_t xfsz, old;
	int was_pending;
};

static void xfsz_block(struct xfsz_guard *g)
{
	sigset_t pend;
	sigemptyset(&g->xfsz);
	sigaddset(&g->xfsz, SIGXFSZ);
	otf2w_sys.sigprocmask(SIG_BLOCK, &g->xfsz, &g->old);
	sigemptyset(&pend);
	sigpending(&pend);
	g->was_pending = sigismember(&pend, SIGXFSZ);
}

static void xfsz_restore(struct xfsz_guard *g, int err)
{
	if (err == EFBIG && !g->was_pending) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&g->xfsz, NULL, &zero);
	}
	if (!sigismember(&g->old, SIGXFSZ))
		otf2w_sys.sigprocmask(SIG_SETMASK, &g->old, NULL);
}

int otf2w__reserve(int fd, int64_t off, int64_t len)
{
	struct xfsz_guard g;
	int err;

	xfsz_block(&g);
	do
		err = otf2w_sys.posix_fallocate(fd, (off_t)off, (off_t)len);
	while (err == EINTR);
	xfsz_restore(&g, err);
	return err;
}

int otf2w__pwrite_all(int fd, const void *data, size_t len, int64_t off)
{
	struct xfsz_guard g;
	int err = 0;
	const uint8_t *p = data;
	int64_t start = off;

	xfsz_block(&g);
	while (len > 0) {
		ssize_t r = off >= 0 ? otf2w_sys.pwrite(fd, p, len, (off_t)off) : otf2w_sys.write(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? errno : ENOSPC;
			break;
		}
		p += r;
		len -= (size_t)r;
		if (off >= 0)
			off += r;
	}
	if (err == EFBIG && start >= 0)
		(void)otf2w_sys.ftruncate(fd, (off_t)start);   /* no half chunk */
	xfsz_restore(&g, err);
	return err;
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
	/* usually there already (a process of a tree): one call, not one per
	 * component */
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
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

const char *otf2w__open_error(const char *path, int err, char *buf, size_t n)
{
	char p[4096];
	struct stat sb;
	snprintf(buf, n, "%s", strerror(err));
	if (err != ENOTDIR || snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return buf;
	/* the first component, from the root, that exists and is no directory */
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (otf2w_sys.lstat(p, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			snprintf(buf, n, "%s (%s is %s of %lld bytes, mode %o, modified %lld.%09ld)", strerror(err), p,
				 S_ISREG(sb.st_mode) ? "a regular file" : S_ISLNK(sb.st_mode) ? "a symbolic link"
											: "not a directory",
				 (long long)sb.st_size, (unsigned)(sb.st_mode & 07777), (long long)sb.st_mtim.tv_sec,
				 sb.st_mtim.tv_nsec);
			return buf;
		}
		*s = '/';
	}
	return buf;
}

int otf2w__path_exists(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	struct stat sb;

	otf2w__path_join(path, sizeof(path), dir, "/", name, ext, NULL);
	return otf2w_sys.stat(path, &sb) == 0;
}
