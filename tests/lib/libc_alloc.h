/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libc_alloc.h - a program's own malloc & co. forwarding to glibc's __libc_*
 * entry points, for test programs and preloaded test libraries that watch
 * who allocates (tests/pthread/guard_malloc.c, tests/sampling/smp_nomalloc.c).
 * Define before including it:
 *   ALLOC_HOOK(fn)   run first in every function but free (fn: its name, a
 *                    string; __builtin_return_address(0) is its caller's)
 *   FREE_HOOK()      run first in free
 */
#ifndef TESTS_LIBC_ALLOC_H
#define TESTS_LIBC_ALLOC_H

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
	ALLOC_HOOK("malloc");
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	ALLOC_HOOK("calloc");
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	ALLOC_HOOK("realloc");
	return __libc_realloc(p, n);
}

void free(void *p)
{
	FREE_HOOK();
	__libc_free(p);
}

void *aligned_alloc(size_t a, size_t n)
{
	ALLOC_HOOK("aligned_alloc");
	return __libc_memalign(a, n);
}

void *memalign(size_t a, size_t n)
{
	ALLOC_HOOK("memalign");
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	ALLOC_HOOK("posix_memalign");
	void *p = __libc_memalign(a, n);
	if (!p)
		return 12;   /* ENOMEM */
	*out = p;
	return 0;
}

#endif
