/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fsutil.h - file-system helpers of preload/archive/fsutil.c, shared by the core
 * and tools/tracer-merge and tracer-run (no process state).
 */
#ifndef TR_FSUTIL_H
#define TR_FSUTIL_H

#include <stddef.h>

/* Remove path and, for a directory, everything below it. */
int tr_rm_rf(const char *path);
/* to becomes a plain file with the content of from (hard link, else copy). */
int tr_link_or_copy(const char *from, const char *to);

/* fn(path, name, d_type, ud) for every entry of dir but those starting
 * with '.': getdents64, no allocation (async-signal-safe; usable in our
 * clone child (fdtable.c), which never calls the program's malloc). */
void tr_dir_each(const char *dir, void (*fn)(const char *path, const char *name, int type, void *ud), void *ud);

/* s made safe as one file name component: every byte but [A-Za-z0-9._-]
 * becomes '_'. */
void tr_name_sanitize(char *s);
/* The default archive directory name of program prog (a name, no
 * directory; sanitized into out) started now by this process:
 * tracer-PROG-YYYYmmdd-HHMMSS-PID, local time, PROG at most 200 bytes. */
void tr_default_dir_name(char *out, size_t n, const char *prog);

#endif /* TR_FSUTIL_H */
