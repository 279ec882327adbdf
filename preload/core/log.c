/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - "tracer: " one-line messages on stderr.
 *
 * Every message is formatted into a stack buffer and written with a single
 * write(2), so lines of concurrent threads/processes never interleave. The
 * errno of the program is preserved. tr_log_sigsafe() is async-signal-safe
 * (own formatter, no stdio, no malloc).
 *
 * Notices (the exit summary, info messages) reach stderr in one process of
 * a run only: the first process under plain LD_PRELOAD. A process launched
 * by tracer-run (TRACER_LAUNCHER = its log file), a fork child, a process
 * whose parent is traced, and an image about to exec append them to a log
 * file instead (the launcher's, else tracer.log in the archive directory),
 * opened and closed for each message: no descriptor is kept. Errors and
 * warnings (real problems) go to stderr while fd 2 is still the stderr the
 * process started with (else to that log file: never into a file the
 * program opened at number 2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tr_int.h"

#define TR_LOG_MAX 1024

/* Async-signal-safe; also before the real functions are resolved (the
 * system call itself). */
static void write_fd_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = tr_syscall(SYS_write, fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

static void log_file_write(const char *buf, size_t n);

/* The stderr the run started with (tr_log_init): a line goes to fd 2 only
 * while fd 2 is still that file. A program that closed its stderr and
 * opened a file of its own at number 2 (daemons, freopen) never receives
 * our lines: they go to the log file in the archive directory instead. */
static int tr_err_state;            /* 0 before init: fd 2; 1 identity known; 2 no stderr at start */
static uint64_t tr_err_dev, tr_err_ino;

static int stderr_is_ours(void)
{
	struct stat st;
	if (tr_err_state == 0)
		return 1;
	if (tr_err_state == 2 || tr_real.fstat(2, &st) != 0)
		return 0;
	return (uint64_t)st.st_dev == tr_err_dev && (uint64_t)st.st_ino == tr_err_ino;
}

static void err_write(int to_stderr, const char *buf, size_t n)
{
	if (to_stderr)
		write_fd_all(2, buf, n);
	else
		log_file_write(buf, n);
}

/* One line on stderr: control characters inside it (a value echoed from the
 * environment may hold a newline or an escape sequence) are written as \n,
 * \r, \t or \xNN, so a message is always exactly one line and cannot drive
 * the terminal; the final newline stays. One write(2) unless the escaped
 * line exceeds the stack buffer. Async-signal-safe. */
void tr_log_write(const char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char out[2048];
	size_t k = 0;
	int saved = errno;
	int to_stderr = stderr_is_ours();
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (k + 4 > sizeof(out)) {
			err_write(to_stderr, out, k);
			k = 0;
		}
		if ((c >= 0x20 && c != 0x7f) || (c == '\n' && i == n - 1)) {
			out[k++] = (char)c;
			continue;
		}
		out[k++] = '\\';
		switch (c) {
		case '\n': out[k++] = 'n'; break;
		case '\r': out[k++] = 'r'; break;
		case '\t': out[k++] = 't'; break;
		default:
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	err_write(to_stderr, out, k);
	errno = saved;
}

static int tr_log_to_file;          /* notices go to the log file */
static int tr_log_parent_pending;   /* parent_traced() not asked yet (tr_log_parent_settle) */
static char tr_log_path[4200];      /* TRACER_LAUNCHER's file ("": archive dir) */

/* 1 if the parent process has a libtracer.so mapped (then this process is
 * not the first of its run). Reads /proc/<ppid>/maps in blocks. */
static int parent_traced(void)
{
	char name[512], path[64];
	static char buf[65536 + 512] TR_BIG_BSS;
	const char *self = tr_self_path();
	if (!self)
		return 0;
	const char *base = strrchr(self, '/');
	int nl = snprintf(name, sizeof(name), "/%s\n", base ? base + 1 : self);
	if (nl <= 1 || (size_t)nl >= sizeof(name))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getppid());
	int fd = tr_real.open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t keep = 0;
	int found = 0;
	for (;;) {
		ssize_t r = tr_real.read(fd, buf + keep, sizeof(buf) - 512);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t len = keep + (size_t)r;
		if (memmem(buf, len, name, (size_t)nl)) {
			found = 1;
			break;
		}
		keep = len < (size_t)nl - 1 ? len : (size_t)nl - 1;
		memmove(buf, buf + len - keep, keep);
	}
	tr_real.close(fd);
	return found;
}

void tr_log_init(void)
{
	int saved = errno;
	struct stat st;
	if (tr_real.fstat(2, &st) == 0) {
		tr_err_dev = (uint64_t)st.st_dev;
		tr_err_ino = (uint64_t)st.st_ino;
		tr_err_state = 1;
	} else {
		tr_err_state = 2;
	}
	const char *l = tr_getenv("TRACER_LAUNCHER");
	if (l && l[0] == '/') {
		snprintf(tr_log_path, sizeof(tr_log_path), "%s", l);
		tr_log_to_file = 1;
	} else if (tr_proc.rank < 0) {
		tr_log_parent_pending = 1;   /* (MPI ranks: rank 0 prints, tr_finish) */
	}
	errno = saved;
}

/* Whether the parent is traced, once: known (the process joined its
 * parent's process tree: no /proc/<ppid>/maps to read, which is long for
 * a big parent), or read now (at start, while the parent runs). */
void tr_log_parent_settle(int parent_member)
{
	if (!tr_log_parent_pending)
		return;
	tr_log_parent_pending = 0;
	int saved = errno;
	if (parent_member || parent_traced())
		tr_log_to_file = 1;
	errno = saved;
}

void tr_log_notices_to_file(void)
{
	tr_log_to_file = 1;
}

int tr_log_notices_on_stderr(void)
{
	tr_log_parent_settle(0);
	return !tr_log_to_file && !tr_g.fork_child;
}

struct log_call {
	const char *path, *buf;
	size_t n;
};

/* Runs in a descriptor table of our own when it can (fdtable.c): the
 * descriptor never takes a number in the program's table. */
static void log_file_io(void *p)
{
	struct log_call *c = p;
	int fd = tr_real.open(c->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;   /* a notice, not a problem: dropped */
	write_fd_all(fd, c->buf, c->n);
	tr_real.close(fd);
}

/* Appends to the log file (async-signal-safe: open, write, close, in a
 * clone child of ours or here). */
static void log_file_write(const char *buf, size_t n)
{
	char p[4300];
	const char *path = tr_log_path;
	if (!path[0]) {
		size_t k = 0;
		for (const char *d = tr_g.dir; *d && k < sizeof(p) - 16; d++)
			p[k++] = *d;
		if (k == 0)
			return;
		memcpy(p + k, "/tracer.log", 12);
		path = p;
	}
	struct log_call c = { path, buf, n };
	tr_fd_private_call(log_file_io, &c);
}

void tr_log_notice_write(const char *buf, size_t n)
{
	int saved = errno;
	if (tr_log_notices_on_stderr())
		tr_log_write(buf, n);
	else
		log_file_write(buf, n);
	errno = saved;
}

static void tr_vlog(const char *kind, int notice, const char *fmt, va_list ap)
{
	char buf[TR_LOG_MAX];
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "tracer: %s", kind);
	if (n < 0)
		n = 0;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (n == 0 || buf[n - 1] != '\n')
		buf[n++] = '\n';
	if (notice)
		tr_log_notice_write(buf, (size_t)n);
	else
		tr_log_write(buf, (size_t)n);
	errno = saved;
}

void tr_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("error: ", 0, fmt, ap);
	va_end(ap);
}

void tr_log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("warning: ", 0, fmt, ap);
	va_end(ap);
}

void tr_log_info(const char *fmt, ...)
{
	if (tr_cfg.verbose < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("", 1, fmt, ap);
	va_end(ap);
}

void tr_log_debug(const char *fmt, ...)
{
	if (tr_cfg.verbose < 2)
		return;
	char pre[64];
	snprintf(pre, sizeof(pre), "[%d/%d] ", (int)tr_self_pid(), (int)gettid());
	va_list ap;
	va_start(ap, fmt);
	tr_vlog(pre, 0, fmt, ap);
	va_end(ap);
}

/* ---- async-signal-safe formatter ---- */

struct sbuf {
	char b[512];
	size_t n;
};

static void sb_putc(struct sbuf *s, char c)
{
	if (s->n < sizeof(s->b) - 1)
		s->b[s->n++] = c;
}

static void sb_puts(struct sbuf *s, const char *p)
{
	if (!p)
		p = "(null)";
	while (*p)
		sb_putc(s, *p++);
}

static void sb_putu(struct sbuf *s, unsigned long long v, unsigned base, int neg)
{
	char tmp[32];
	int i = 0;
	do {
		unsigned d = (unsigned)(v % base);
		tmp[i++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	if (neg)
		sb_putc(s, '-');
	while (i > 0)
		sb_putc(s, tmp[--i]);
}

static void sb_vformat(struct sbuf *sp, const char *fmt, va_list ap)
{
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			sb_putc(sp, *p);
			continue;
		}
		p++;
		int l = 0;
		while (*p == 'l') {
			l++;
			p++;
		}
		switch (*p) {
		case 's':
			sb_puts(sp, va_arg(ap, const char *));
			break;
		case 'd': {
			long long v = l >= 2 ? va_arg(ap, long long) : l ? va_arg(ap, long) : va_arg(ap, int);
			sb_putu(sp, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, v < 0);
			break;
		}
		case 'u': {
			unsigned long long v = l >= 2 ? va_arg(ap, unsigned long long)
					     : l ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			sb_putu(sp, v, 10, 0);
			break;
		}
		case 'x': {
			unsigned long long v = l >= 2 ? va_arg(ap, unsigned long long)
					     : l ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			sb_putu(sp, v, 16, 0);
			break;
		}
		case 'p':
			sb_puts(sp, "0x");
			sb_putu(sp, (unsigned long long)(uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case '%':
			sb_putc(sp, '%');
			break;
		case '\0':
			p--;
			break;
		default:
			sb_putc(sp, '%');
			sb_putc(sp, *p);
		}
	}
	if (sp->n == 0 || sp->b[sp->n - 1] != '\n')
		sp->b[sp->n++] = '\n';
}

/* "tracer: " + the formatted message + newline, async-signal-safe. */
static void sb_line(struct sbuf *s, const char *fmt, va_list ap)
{
	s->n = 0;
	sb_puts(s, "tracer: ");
	sb_vformat(s, fmt, ap);
}

void tr_log_sigsafe(const char *fmt, ...)
{
	struct sbuf s;
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	sb_line(&s, fmt, ap);
	va_end(ap);
	tr_log_write(s.b, s.n);
	errno = saved;
}

void tr_log_notice_sigsafe(const char *fmt, ...)
{
	struct sbuf s;
	va_list ap;
	va_start(ap, fmt);
	sb_line(&s, fmt, ap);
	va_end(ap);
	tr_log_notice_write(s.b, s.n);
}
