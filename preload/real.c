/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * real.c - the real functions behind our interposed symbols, resolved in
 * one table-driven place with dlsym(RTLD_NEXT), plus small utilities
 * (futex lock, allocation helpers).
 *
 * We do not interpose malloc/calloc, so dlsym's own allocations cannot
 * recurse into us; the per-thread guard keeps everything else untraced.
 */
#include <dlfcn.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tr_int.h"

int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
void (*real__exit)(int);
void (*real__Exit)(int);
int (*real_execve)(const char *, char *const[], char *const[]);
int (*real_execv)(const char *, char *const[]);
int (*real_execvp)(const char *, char *const[]);
int (*real_execvpe)(const char *, char *const[], char *const[]);
int (*real_fexecve)(int, char *const[], char *const[]);
void (*real_quick_exit)(int);

static const struct {
	const char *name;
	void **slot;
} tr_real_table[] = {
#define R(fn) { #fn, (void **)&real_##fn }
	R(sigaction), R(_exit), R(_Exit), R(execve), R(execv), R(execvp), R(execvpe), R(fexecve),
	R(quick_exit),
#undef R
};

void *tr_dlsym_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		p = dlsym(RTLD_DEFAULT, name);
	return p;
}

void tr_real_init(void)
{
	for (size_t i = 0; i < sizeof(tr_real_table) / sizeof(tr_real_table[0]); i++) {
		if (*tr_real_table[i].slot)
			continue;
		void *p = tr_dlsym_next(tr_real_table[i].name);
		if (!p) {
			tr_log_error("cannot resolve the real %s: %s", tr_real_table[i].name, dlerror());
			continue;
		}
		__atomic_store_n(tr_real_table[i].slot, p, __ATOMIC_RELEASE);
	}
}

/* ---- futex lock (Drepper, "Futexes are tricky", mutex #2) ---- */

TR_TLS int tr_tls_internal;

static long futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

void tr_lock_slow(struct tr_lock *l)
{
	int c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex(&l->v, FUTEX_WAIT_PRIVATE, 2);
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	}
}

void tr_unlock_slow(struct tr_lock *l)
{
	futex(&l->v, FUTEX_WAKE_PRIVATE, 1);
}

void *tr_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		tr_log_error("out of memory (%zu bytes)", n * sz);
	return p;
}

char *tr_xstrdup(const char *s)
{
	size_t n = strlen(s ? s : "") + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s ? s : "", n);
	return p;
}
