/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard_malloc.c - a program allocator that aborts when libtracer.so calls
 * it directly. Preloaded next to the tracer (tests/pthread, alloc variants):
 * the tracer's own memory must come from its own heap (preload/core/mem.c), never
 * from the program's allocator, which may be inside a wrapped call on the
 * same thread (jemalloc's locks go through pthread_mutex_lock).
 * Forwards to glibc's __libc_* entry points.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uintptr_t lo[8], hi[8];
static int nrange, ready;

static int find_tracer(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libtracer"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nrange < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo[nrange] = info->dlpi_addr + ph->p_vaddr;
		hi[nrange] = lo[nrange] + ph->p_memsz;
		nrange++;
	}
	return 0;
}

__attribute__((constructor)) static void guard_init(void)
{
	dl_iterate_phdr(find_tracer, NULL);
	ready = 1;
	if (!nrange) {
		static const char m[] = "guard_malloc: libtracer.so not loaded\n";
		write(2, m, sizeof(m) - 1);
		_exit(70);
	}
}

static void check(void *ra, const char *fn)
{
	uintptr_t a = (uintptr_t)ra;
	if (!ready)
		return;
	for (int i = 0; i < nrange; i++) {
		if (a >= lo[i] && a < hi[i]) {
			char m[128] = "guard_malloc: libtracer.so called the program's ";
			strcat(m, fn);
			strcat(m, "\n");
			write(2, m, strlen(m));
			abort();
		}
	}
}

/* free is not checked: at exit the tracer frees what libdw allocated for it
 * (symbol resolution runs libdw, which uses the program's allocator, on the
 * exit path only). */
#define ALLOC_HOOK(fn) check(__builtin_return_address(0), fn)
#define FREE_HOOK() ((void)0)
#include "../lib/libc_alloc.h"

char *strdup(const char *s)
{
	check(__builtin_return_address(0), "strdup");
	size_t n = strlen(s) + 1;
	char *d = __libc_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}
