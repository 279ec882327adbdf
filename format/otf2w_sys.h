/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2w_sys.h - the writer's system layer: every allocation and every file
 * operation of format/'s writer (and of the definition and file code of
 * preload/ that the tools share) goes through otf2w_sys, never through a
 * C library name.
 *
 * Whoever embeds the writer defines otf2w_sys and fills it before the first
 * archive is opened:
 *   - libtracer.so (preload/core/real.c): the real C library functions of its
 *     one table (never its own interposed open, close, ...: the tracer's
 *     files are not the program's I/O) and its private heap (preload/core/mem.c:
 *     the program's allocator never sees the tracer's memory);
 *   - a program of its own (the tools, the tests, the benchmarks) links
 *     otf2w_libc (format/sys_libc.c): the C library's functions.
 * Every function has its C library meaning (errno included); the file
 * functions are async-signal-safe where the C library's are (the
 * emergency writers call them from signal handlers).
 */
#ifndef OTF2W_SYS_H
#define OTF2W_SYS_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The allocator (libtracer.so: its private heap) */
#define OTF2W_SYS_HEAP(X) X(malloc) X(calloc) X(realloc) X(free) X(aligned_alloc) X(strdup)
/* The system calls (libtracer.so: the real C library functions) */
#define OTF2W_SYS_CALLS(X)                                                                    \
	X(mmap) X(munmap) X(open) X(close) X(read) X(write) X(pread) X(pwrite) X(fcntl)       \
	X(fstat) X(stat) X(lstat) X(ftruncate) X(posix_fallocate) X(unlink) X(rename)         \
	X(sigprocmask) X(syscall)

/* one member per function, of the C library function's own type */
#define OTF2W_SYS_MEMBER(fn) __typeof__(fn) *fn;
struct otf2w_sys {
	OTF2W_SYS_HEAP(OTF2W_SYS_MEMBER)
	OTF2W_SYS_CALLS(OTF2W_SYS_MEMBER)
};

extern struct otf2w_sys otf2w_sys;

#ifdef __cplusplus
}
#endif
#endif /* OTF2W_SYS_H */
