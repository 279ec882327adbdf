/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - "tracer: " one-line messages on stderr.
 *
 * Every message is formatted into a stack buffer and written with a single
 * write(2), so lines of concurrent threads/processes never interleave. The
 * errno of the program is preserved. tr_log_sigsafe() is async-signal-safe
 * (own formatter, no stdio, no malloc).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tr_int.h"

#define TR_LOG_MAX 1024

static void write_all(const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(2, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
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
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (k + 4 > sizeof(out)) {
			write_all(out, k);
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
	write_all(out, k);
	errno = saved;
}

static void tr_vlog(const char *kind, const char *fmt, va_list ap)
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
	tr_log_write(buf, (size_t)n);
	errno = saved;
}

void tr_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("error: ", fmt, ap);
	va_end(ap);
}

void tr_log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("warning: ", fmt, ap);
	va_end(ap);
}

void tr_log_info(const char *fmt, ...)
{
	if (tr_cfg.verbose < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	tr_vlog("", fmt, ap);
	va_end(ap);
}

void tr_log_debug(const char *fmt, ...)
{
	if (tr_cfg.verbose < 2)
		return;
	char pre[64];
	snprintf(pre, sizeof(pre), "[%d/%d] ", (int)getpid(), (int)gettid());
	va_list ap;
	va_start(ap, fmt);
	tr_vlog(pre, fmt, ap);
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

void tr_log_sigsafe(const char *fmt, ...)
{
	struct sbuf s;
	int saved = errno;
	va_list ap;

	s.n = 0;
	sb_puts(&s, "tracer: ");
	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			sb_putc(&s, *p);
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
			sb_puts(&s, va_arg(ap, const char *));
			break;
		case 'd': {
			long long v = l >= 2 ? va_arg(ap, long long) : l ? va_arg(ap, long) : va_arg(ap, int);
			sb_putu(&s, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, v < 0);
			break;
		}
		case 'u': {
			unsigned long long v = l >= 2 ? va_arg(ap, unsigned long long)
					     : l ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			sb_putu(&s, v, 10, 0);
			break;
		}
		case 'x': {
			unsigned long long v = l >= 2 ? va_arg(ap, unsigned long long)
					     : l ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			sb_putu(&s, v, 16, 0);
			break;
		}
		case 'p':
			sb_puts(&s, "0x");
			sb_putu(&s, (unsigned long long)(uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case '%':
			sb_putc(&s, '%');
			break;
		case '\0':
			p--;
			break;
		default:
			sb_putc(&s, '%');
			sb_putc(&s, *p);
		}
	}
	va_end(ap);
	if (s.n == 0 || s.b[s.n - 1] != '\n')
		s.b[s.n++] = '\n';
	tr_log_write(s.b, s.n);
	errno = saved;
}

void tr_log_init(void)
{
}
