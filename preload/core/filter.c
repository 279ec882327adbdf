/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter.c - TRACER_FILTER: region names or globs, one per line.
 *
 *   # comment
 *   -name | exclude name     exclude regions matching (fnmatch glob)
 *   +name | include name     include regions matching
 *   name                     (no prefix) exclude
 * The last matching line wins; no match: recorded. Evaluated once per region
 * at definition time into a bitmap the hot path tests with one load.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tr_int.h"

/* the largest filter file read (a bigger one, or anything but a regular
 * file, gives one message and no filter) */
#define TR_FILTER_MAX (1 << 20)

uint8_t tr_filter_bits[TR_FILTER_CAP / 8];
int tr_filter_active;

struct rule {
	int exclude;
	const char *pat;
};
/* The file's text and the rules live in one private mapping (never the
 * program's allocator), kept for the life of the process. */
static struct rule *tr_rules;
static int tr_nrules;

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static char *trim(char *s)
{
	while (is_space(*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && is_space(s[n - 1]))
		s[--n] = 0;
	return s;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The filter file: a regular file of at most TR_FILTER_MAX bytes, read
 * without ever blocking (stat before open: a FIFO, a terminal or a device is
 * never opened, so the program's standard input is never consumed; O_NONBLOCK
 * for the race where the path changes in between; fstat after open). Returns
 * the byte count, the text NUL-terminated in a private mapping (*out), or -1
 * after one message. */
static ssize_t read_filter_file(const char *path, char **out, size_t *mapped)
{
	struct stat st;
	const char *why = NULL;
	int err = 0;
	if (tr_real.stat(path, &st) != 0)
		err = errno;
	else if (!S_ISREG(st.st_mode))
		why = file_kind(st.st_mode);
	else if (st.st_size > TR_FILTER_MAX)
		why = "larger than 1 MiB";
	int fd = -1;
	if (!err && !why) {
		fd = tr_real.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			err = errno;
		else if (tr_real.fstat(fd, &st) != 0)
			err = errno;
		else if (!S_ISREG(st.st_mode))
			why = file_kind(st.st_mode);
		else if (st.st_size > TR_FILTER_MAX)
			why = "larger than 1 MiB";
	}
	char *buf = NULL;
	size_t size = 0;
	ssize_t n = 0;
	if (!err && !why) {
		size = (size_t)st.st_size + 2;   /* one byte more: a file that grew is seen */
		buf = tr_real.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED) {
			buf = NULL;
			err = errno;
		}
	}
	while (buf && (size_t)n < size - 1) {
		ssize_t r = tr_real.read(fd, buf + n, size - 1 - (size_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	if (!err && !why && n > TR_FILTER_MAX)
		why = "larger than 1 MiB";
	if (fd >= 0)
		tr_real.close(fd);
	if (err || why) {
		if (buf)
			tr_real.munmap(buf, size);
		if (why)
			tr_log_error("TRACER_FILTER=%s: %s (a regular file of at most 1 MiB is needed); no filter "
				     "applied", path, why);
		else
			tr_log_error("TRACER_FILTER=%s: cannot read the file (%s); no filter applied", path,
				     strerror(err));
		return -1;
	}
	buf[n] = 0;
	*out = buf;
	*mapped = size;
	return n;
}

void tr_filter_load(void)
{
	char *text;
	size_t mapped;
	if (!tr_cfg.filter[0])
		return;
	ssize_t len = read_filter_file(tr_cfg.filter, &text, &mapped);
	if (len < 0)
		return;
	/* one rule per line at most */
	size_t lines = 1;
	for (ssize_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	size_t rbytes = lines * sizeof(struct rule);
	struct rule *rules = tr_real.mmap(NULL, rbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rules == MAP_FAILED) {
		tr_log_error("TRACER_FILTER=%s: out of memory (%s); no filter applied", tr_cfg.filter,
			     strerror(errno));
		tr_real.munmap(text, mapped);
		return;
	}
	int lineno = 0, bad = 0, n = 0;
	for (char *line = text, *next; line && line < text + len; line = next) {
		next = memchr(line, '\n', (size_t)(text + len - line));
		if (next)
			*next++ = 0;
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		int exclude = 1;
		if (*s == '-' || *s == '+') {
			exclude = *s == '-';
			s = trim(s + 1);
		} else if (!strncmp(s, "exclude", 7) && is_space(s[7])) {
			s = trim(s + 7);
		} else if (!strncmp(s, "include", 7) && is_space(s[7])) {
			exclude = 0;
			s = trim(s + 7);
		}
		if (!*s) {
			if (!bad++)
				tr_log_warn("TRACER_FILTER=%s:%d: empty pattern ignored", tr_cfg.filter, lineno);
			continue;
		}
		rules[n].exclude = exclude;
		rules[n].pat = s;
		n++;
	}
	tr_rules = rules;
	tr_nrules = n;
	tr_filter_active = n > 0;
	tr_log_debug("TRACER_FILTER=%s: %d rules", tr_cfg.filter, n);
}

void tr_filter_region_defined(uint32_t region, const char *name)
{
	if (!tr_filter_active || region >= TR_FILTER_CAP)
		return;
	int exclude = 0;
	for (int i = 0; i < tr_nrules; i++)
		if (fnmatch(tr_rules[i].pat, name, 0) == 0)
			exclude = tr_rules[i].exclude;
	if (exclude)
		__atomic_fetch_or(&tr_filter_bits[region >> 3], (uint8_t)(1u << (region & 7)), __ATOMIC_RELAXED);
}

int tr_region_filtered(uint32_t region)
{
	return tr_region_is_filtered(region);
}
