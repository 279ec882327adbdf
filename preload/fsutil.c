/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsutil.c - file-system helpers shared by the core and tools/tracer-merge
 * (which compiles this file in; no other core dependency).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tr_int.h"

/* Remove path and, for a directory, everything below it (not on any hot
 * path: temporary directories of the archive writers). */
int tr_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
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
	return unlink(path);
}
