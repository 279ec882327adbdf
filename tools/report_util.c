/* SPDX-License-Identifier: BSD-3-Clause */
/* report_util.c - what the report files share: allocation that exits on
 * failure, tick conversion, names of definitions, JSON and HTML escaping,
 * opening the archive of a command line (report, convert). */
#include <getopt.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

void *rep_xcalloc(size_t n, size_t s)
{
	void *p = calloc(n ? n : 1, s);
	if (!p) {
		fprintf(stderr, "tracer: out of memory\n");
		exit(1);
	}
	return p;
}

void *rep_grow(void *p, size_t *cap, size_t first, size_t size)
{
	*cap = *cap ? 2 * *cap : first;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "tracer: out of memory\n");
		exit(1);
	}
	return p;
}

double rep_ms(const struct rep *r, uint64_t ticks)
{
	return (double)ticks * 1e3 / (double)r->resolution;
}

const char *rep_str_or(const struct rep *r, uint32_t id, const char *dflt)
{
	const char *s = otf2r_string(r->ar, id);
	return s ? s : dflt;
}

void rep_json_escape(const char *s, void (*emit)(void *ud, const char *p, size_t n), void *ud)
{
	const char *run = s ? s : "";
	emit(ud, "\"", 1);
	for (const char *p = run;; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch && ch != '"' && ch != '\\' && ch >= 0x20)
			continue;
		if (p > run)
			emit(ud, run, (size_t)(p - run));   /* the plain bytes before it */
		if (!ch)
			break;
		char esc[8];
		int k = ch < 0x20 ? snprintf(esc, sizeof esc, "\\u%04x", ch) : snprintf(esc, sizeof esc, "\\%c", ch);
		emit(ud, esc, (size_t)k);
		run = p + 1;
	}
	emit(ud, "\"", 1);
}

static void emit_file(void *f, const char *p, size_t n)
{
	fwrite(p, 1, n, f);
}

void rep_json_str(FILE *f, const char *s)
{
	rep_json_escape(s, emit_file, f);
}

void rep_html_str(FILE *f, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*p, f);
		}
	}
}

int rep_open(int argc, char **argv, const char *usage, otf2r_archive **ar)
{
	if (argc < 0 || optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	char err[8192];
	if (otf2r_open(argv[optind], ar, err, sizeof err)) {
		rep_read_error(argv[optind], err);
		return 1;
	}
	return 0;
}

void rep_read_error(const char *path, const char *why)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "tracer: %s\n", why);   /* no such archive: nothing to repair */
		return;
	}
	fprintf(stderr, "tracer: %s (if the run was killed, `tracer recover %s` rebuilds what was recorded; "
		"parts never unified: `tracer merge %s`)\n", why, path, path);
}
