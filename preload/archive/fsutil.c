/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsutil.c - file-system helpers shared by the core and tools/tracer-merge
 * and tracer-run (which compile this file in; no other core dependency).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "fsutil.h"
#include "otf2w_sys.h"

/* Remove path and, for a directory, everything below it (not on any hot
 * path: temporary directories of the archive writers). */
int tr_rm_rf(const char *path)
{
	struct stat st;
	if (otf2w_sys.lstat(path, &st))
		return -1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			char sub[8192];
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
				tr_rm_rf(sub);
			}
			closedir(d);
		}
		return rmdir(path);
	}
	return otf2w_sys.unlink(path);
}

/* to becomes a plain file with the content of from: a hard link (no copy,
 * no symbolic link: the archive stays whole under any copy tool), else a
 * copy (other file system). 0, or -1 with errno. */
int tr_link_or_copy(const char *from, const char *to)
{
	struct stat a, b;
	if (otf2w_sys.stat(from, &a))
		return -1;
	if (otf2w_sys.stat(to, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return 0;
	otf2w_sys.unlink(to);
	if (link(from, to) == 0)
		return 0;
	int in = otf2w_sys.open(from, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
	if (in >= 0)
		out = otf2w_sys.open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in >= 0 && out >= 0) {
		char buf[1 << 16];
		ssize_t n;
		ret = 0;
		while ((n = otf2w_sys.read(in, buf, sizeof(buf))) > 0)
			if (otf2w_sys.write(out, buf, (size_t)n) != n) {
				ret = -1;
				break;
			}
		if (n < 0)
			ret = -1;
	}
	if (out >= 0 && otf2w_sys.close(out))
		ret = -1;
	if (in >= 0)
		otf2w_sys.close(in);
	if (ret)
		otf2w_sys.unlink(to);
	return ret;
}

void tr_dir_each(const char *dir, void (*fn)(const char *path, const char *name, int type, void *ud), void *ud)
{
	char buf[4096], p[8800];
	long got;
	int d = otf2w_sys.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (d >= 0 && (got = otf2w_sys.syscall(SYS_getdents64, d, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, 2);
			int type = (unsigned char)buf[off + 18];
			const char *e = buf + off + 19;
			off += reclen;
			if (e[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e);
			fn(p, e, type, ud);
		}
	}
	if (d >= 0)
		otf2w_sys.close(d);
}

void tr_name_sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			*s = '_';
}

void tr_default_dir_name(char *out, size_t n, const char *prog)
{
	char when[64], p[256];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	snprintf(p, sizeof(p), "%s", prog);
	tr_name_sanitize(p);
	snprintf(out, n, "tracer-%.200s-%s-%d", p, when, (int)getpid());
}
