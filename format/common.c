/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.c - status texts, per-thread error texts and the archive lock:
 * the helpers every format/ source uses.
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

/* ---- file operations off the calling thread ----------------------------------------- */

struct io_call {
	otf2w_status (*fn)(void *);
	void *arg;
	otf2w_status st;
	char err[sizeof(tl_err)];
};

static void io_tramp(void *p)
{
	struct io_call *c = p;
	tl_err[0] = 0;
	c->st = c->fn(c->arg);
	if (c->st != OTF2W_OK)
		memcpy(c->err, tl_err, sizeof(c->err));
}

otf2w_status otf2w__io(otf2w_archive *ar, otf2w_status (*fn)(void *), void *arg)
{
	struct io_call c;

	if (!ar->io_cb.run || ar->emergency || ar->abandoned)
		return fn(arg);
	c.fn = fn;
	c.arg = arg;
	c.st = OTF2W_OK;
	c.err[0] = 0;
	if (ar->io_cb.run(ar->io_ud, io_tramp, &c) != 0)
		return fn(arg);
	if (c.st != OTF2W_OK && c.err[0]) {
		memcpy(tl_err, c.err, sizeof(tl_err));
		tl_err_ar = ar;
	}
	return c.st;
}

/* The archive is being freed: its error text must not be returned by
 * otf2w_archive_error for a later archive at the same address. */
void otf2w__forget_error(const otf2w_archive *ar)
{
	if (tl_err_ar == ar)
		tl_err_ar = NULL;
}
