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
	int fd = open(path, flags | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	int base = high_base();
	if (base > 2 && fd < base) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, base);
		if (hi >= 0) {
			int saved = errno;
			close(fd);
			errno = saved;
			fd = hi;
		}
		/* no descriptor free up there (limit reached): keep the low one */
	}
	return fd;
}

int otf2w__pwrite_all(int fd, const void *data, size_t len, int64_t off)
{
	sigset_t xfsz, old, pend;
	int was_pending, err = 0;
	const uint8_t *p = data;
	int64_t start = off;

	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &xfsz, &old);
	sigemptyset(&pend);
	sigpending(&pend);
	was_pending = sigismember(&pend, SIGXFSZ);
	while (len > 0) {
		ssize_t r = off >= 0 ? pwrite(fd, p, len, (off_t)off) : write(fd, p, len);
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
	if (err == EFBIG) {
		if (!was_pending) {
			struct timespec zero = { 0, 0 };
			sigtimedwait(&xfsz, NULL, &zero);
		}
		if (start >= 0)
			(void)ftruncate(fd, (off_t)start);   /* no half chunk */
	}
	if (!sigismember(&old, SIGXFSZ))
		sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}
