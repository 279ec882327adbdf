/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_real.h - the one table of the real C library functions behind the
 * names libtracer.so exports, and the raw system call.
 *
 * The library exports open, close, sigprocmask, waitpid, execve, ... (its
 * wrappers); its own code never calls those names. It calls tr_real.<fn>,
 * the C library's function (resolved once at start, tr_real_init; a
 * wrapper that runs before that calls TR_REAL_INIT(fn) first), its heap
 * (tr_malloc & co., below) for memory, and tr_syscall for a system call.
 * The writer and the code shared with the tools call through otf2w_sys
 * (format/otf2w_sys.h), filled from this table. tests/core/self_calls.py
 * checks every object of the library: no reference to a name the library
 * exports, no allocation but the heap's, no jump slot to an export.
 *
 * The wrappers of preload/ and sampling/ forward the program's calls
 * through the same table; the families of wrappers/ (I/O, pthread,
 * OpenMP, MPI, Argobots) keep the tables their generated lists make.
 */
#ifndef TR_REAL_H
#define TR_REAL_H

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "otf2w_sys.h"

/* (declared by the C library's headers only with _GNU_SOURCE) */
int execvpe(const char *, char *const[], char *const[]);
int setresuid(uid_t, uid_t, uid_t);
int clone(int (*)(void *), void *, int, void *, ...);

/* OTF2W_SYS_CALLS first: mmap and munmap are resolved before anything
 * the resolver may allocate */
#define TR_REAL_LIBC(X)                                                                       \
	OTF2W_SYS_CALLS(X)                                                                    \
	X(dlclose) X(dup2) X(pthread_sigmask) X(sigsuspend) X(sigaction) X(clone)             \
	X(wait) X(waitpid) X(wait3) X(wait4) X(waitid)                                        \
	X(_exit) X(_Exit) X(quick_exit)                                                       \
	X(execve) X(execv) X(execvp) X(execvpe) X(fexecve)                                    \
	X(setuid) X(seteuid) X(setreuid) X(setresuid)

#define TR_REAL_MEMBER(fn) __typeof__(fn) *fn;
struct tr_real_fns {
	TR_REAL_LIBC(TR_REAL_MEMBER)
};
extern struct tr_real_fns tr_real;

/* Resolves every entry still NULL (idempotent; not async-signal-safe). */
void tr_real_init(void);
#define TR_REAL_INIT(fn)                                  \
	do {                                              \
		if (__builtin_expect(!tr_real.fn, 0))     \
			tr_real_init();                   \
	} while (0)

/* The private heap (mem.c): the tracer's own memory, never the program's
 * allocator's; tr_free and tr_realloc also take a block of the C library's. */
void *tr_malloc(size_t n);
void *tr_calloc(size_t n, size_t m);
void *tr_realloc(void *p, size_t n);
void tr_free(void *p);
void *tr_aligned_alloc(size_t align, size_t n);
int tr_posix_memalign(void **out, size_t align, size_t n);
char *tr_strdup(const char *s);
char *tr_strndup(const char *s, size_t max);
/* len bytes (rounded up to pages) of zero-filled address space whose pages
 * are committed when first touched, for a table that lives as long as the
 * process (never freed; a fork child may map fresh zero pages over it);
 * NULL if there is none. Cut from one reservation (mem.c). */
void *tr_mem_space(size_t len);
/* Zero n bytes of zero-initialised (.bss) or anonymous memory without
 * touching the pages the process never wrote: their whole pages are given
 * back (madvise MADV_DONTNEED: they read as zero again), only the partial
 * pages at both ends are written. For a fork child's reset of large tables
 * (a memset would fault in every page of them, ~3 us each in this VM).
 * Never on initialised data (.data), whose pages would revert to the file. */
void tr_mem_zero(void *p, size_t n);

/* A system call from our own text, without the C library (usable before
 * the table is resolved, in signal handlers, in a vfork-like child): the
 * result, or -1 with errno set. tr_syscall(SYS_x, args...): up to six. */
#if defined(__x86_64__)
static inline long tr_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	if ((unsigned long)ret > -4096ul) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#else
static inline long tr_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	TR_REAL_INIT(syscall);
	return tr_real.syscall(n, a, b, c, d, e, f);
}
#endif
#define TR_SYSCALL7(n, a, b, c, d, e, f, ...)                                                   \
	tr_syscall6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define tr_syscall(...) TR_SYSCALL7(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/* ---- real symbols (dlsym(RTLD_NEXT)) ------------------------------------------------- */

/* Resolve a symbol of the next object after libtracer.so (RTLD_NEXT, then
 * RTLD_DEFAULT, then every loaded object: a library opened with
 * dlopen(RTLD_LOCAL) is in no global scope); never a definition of
 * libtracer.so itself (tr_in_self). NULL: no loaded object has it.
 * dlsym's own allocations cannot recurse into the tracer: it interposes no
 * allocator, and its objects live on its own heap (mem.c). */
void *tr_dlsym_next(const char *name);
/* The last step alone: the first loaded object other than libtracer.so
 * that defines name (*handle, if given: its dlopen handle, kept open). */
void *tr_dlsym_loaded(const char *name, void **handle);
/* p lies in libtracer.so. */
int tr_in_self(const void *p);
/* libtracer.so's file name as loaded (NULL: unknown). */
const char *tr_self_path(void);
/* The one table-driven resolver of real functions, used by every module:
 * each entry whose slot is still NULL is looked up (dlvsym(RTLD_NEXT) when
 * a version is given, else tr_dlsym_next) and stored atomically. Returns
 * how many entries stay unresolved (the caller decides what that means).
 * Not async-signal-safe (dlsym): constructor, or the first call. */
struct tr_real_sym {
	void **slot;
	const char *name;
	const char *version;   /* NULL: the default version */
};
#define TR_REAL_SYM(fn) { (void **)&real_##fn, #fn, NULL }
#define TR_REAL_SYMV(fn, v) { (void **)&real_##fn, #fn, v }
size_t tr_real_resolve(const struct tr_real_sym *tab, size_t n);

#endif /* TR_REAL_H */
