/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_prog.c - target of core_sigterm_own_malloc: the program supplies its
 * own allocator (as with jemalloc/tcmalloc linked in) whose spin lock is held
 * inside malloc/free; it is killed by SIGTERM (default action) while it
 * allocates. The tracer must not allocate on that path (it would spin on
 * the program's lock forever).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void tracer_test_enter(const char *name) __attribute__((weak));

/* the build uses -fvisibility=hidden: these must interpose libc's */
#pragma GCC visibility push(default)

static volatile int alloc_lock;
static char *arena, *cur;

static void take(void)
{
	while (__atomic_exchange_n(&alloc_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void drop(void)
{
	__atomic_store_n(&alloc_lock, 0, __ATOMIC_RELEASE);
}

static void *alloc_aligned(size_t n, size_t al)
{
	take();
	if (!arena) {
		arena = mmap(NULL, 1ul << 32, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			     -1, 0);
		cur = arena;
	}
	for (volatile int i = 0; i < 2000; i++)
		;   /* bookkeeping time inside the lock */
	uintptr_t p = ((uintptr_t)cur + 16 + al - 1) & ~(uintptr_t)(al - 1);
	((size_t *)p)[-1] = n;
	cur = (char *)p + n;
	drop();
	return (void *)p;
}

void *malloc(size_t n)
{
	return alloc_aligned(n, 16);
}

void free(void *p)
{
	if (!p)
		return;
	take();
	for (volatile int i = 0; i < 2000; i++)
		;
	drop();
}

void *calloc(size_t a, size_t b)
{
	void *p = malloc(a * b);
	memset(p, 0, a * b);
	return p;
}

void *realloc(void *o, size_t n)
{
	void *p = malloc(n);
	if (o) {
		size_t m = ((size_t *)o)[-1];
		memcpy(p, o, m < n ? m : n);
	}
	return p;
}

void *memalign(size_t al, size_t n)
{
	return alloc_aligned(n, al < 16 ? 16 : al);
}

void *aligned_alloc(size_t al, size_t n)
{
	return memalign(al, n);
}

int posix_memalign(void **r, size_t al, size_t n)
{
	*r = memalign(al, n);
	return 0;
}

size_t malloc_usable_size(void *p)
{
	return p ? ((size_t *)p)[-1] : 0;
}

#pragma GCC visibility pop

int main(void)
{
	if (tracer_test_enter)
		tracer_test_enter("alloc_loop");
	for (;;) {
		void *volatile p = malloc(64);
		free(p);
	}
}
