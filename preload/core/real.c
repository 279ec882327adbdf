/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * real.c - the real functions behind our interposed symbols, resolved in
 * one table-driven place (RTLD_NEXT, else any loaded object but ours), plus small utilities
 * (futex lock, allocation helpers).
 *
 * We do not interpose malloc/calloc, so dlsym's own allocations cannot
 * recurse into us; the per-thread guard keeps everything else untraced.
 * The table itself: tr_real.h.
 */
#include <dlfcn.h>
#include <link.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "otf2w_sys.h"
#include "tr_int.h"

/* The one table (tr_real.h) */
struct tr_real_fns tr_real;
#define REAL_SYM(fn) { (void **)&tr_real.fn, #fn, NULL },
static const struct tr_real_sym tr_real_table[] = { TR_REAL_LIBC(REAL_SYM) };

/* ---- where a real function is ----
 * RTLD_NEXT finds what comes after libtracer.so in the global scope. A
 * library opened with dlopen(RTLD_LOCAL) (numpy's OpenBLAS and its libgomp,
 * mpi4py's libmpi, a plugin) is in no global scope, but the program's calls
 * into it still reach our wrapper (the global scope, where we are, is
 * searched first): then every loaded object is asked, never libtracer.so
 * itself, whose own definition would call itself until the stack ends. */

static uintptr_t self_lo, self_hi;   /* libtracer.so's loaded segments */
static char self_path[4096];         /* its file name as loaded */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t me = (uintptr_t)tr_in_self, lo = UINTPTR_MAX, hi = 0;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
		if (me >= a && me < b)
			mine = 1;
	}
	if (!mine)
		return 0;
	self_lo = lo;
	self_hi = hi;
	if (info->dlpi_name)
		snprintf(self_path, sizeof(self_path), "%s", info->dlpi_name);
	return 1;
}

/* An address range test, not dladdr (which scans symbol tables: 13 % of a
 * short traced process when every resolved symbol was checked so). */
int tr_in_self(const void *p)
{
	if (!self_hi)
		dl_iterate_phdr(find_self, NULL);
	return (uintptr_t)p >= self_lo && (uintptr_t)p < self_hi;
}

/* Not dladdr either: it walks the library's 1,200 dynamic symbols (a fifth
 * of the C library's time in a traced /bin/true, three calls). */
const char *tr_self_path(void)
{
	if (!self_hi)
		dl_iterate_phdr(find_self, NULL);
	return self_path[0] ? self_path : NULL;
}

struct names {
	char **v;
	size_t n, cap;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct names *nm = arg;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? nm->cap * 2 : 64;
		char **v = tr_realloc(nm->v, cap * sizeof(char *));
		if (!v)
			return 1;
		nm->v = v;
		nm->cap = cap;
	}
	nm->v[nm->n] = tr_strdup(info->dlpi_name);
	if (nm->v[nm->n])
		nm->n++;
	return 0;
}

/* Every loaded object but libtracer.so (names collected first: no dlopen
 * while dl_iterate_phdr holds the loader's lock). *handle: the object's
 * handle (kept open), or NULL. */
void *tr_dlsym_loaded(const char *name, void **handle)
{
	struct names nm = { NULL, 0, 0 };
	void *p = NULL;
	if (handle)
		*handle = NULL;
	dl_iterate_phdr(collect, &nm);
	for (size_t i = 0; i < nm.n; i++) {
		if (!p) {
			void *h = dlopen(nm.v[i], RTLD_LAZY | RTLD_NOLOAD);
			if (h) {
				p = dlsym(h, name);
				if (p && tr_in_self(p))
					p = NULL;
				if (p && handle)
					*handle = h;
				else if (tr_real.dlclose)
					tr_real.dlclose(h);
			}
		}
		tr_free(nm.v[i]);
	}
	tr_free(nm.v);
	return p;
}

/* TRACER_TEST_DYNSYM=check: every answer of dynsym.c against dlsym's */
static int sym_check = -1, sym_checked, sym_differ;

static int check_mode(void)
{
	if (sym_check < 0) {
		sym_check = 0;   /* tr_getenv may resolve (early: it reads /proc/self/environ) */
		const char *v = tr_getenv("TRACER_TEST_DYNSYM");
		sym_check = v && !strcmp(v, "check");
	}
	return sym_check;
}

static void *dlsym_next_slow(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p && !tr_in_self(p))
		return p;
	p = dlsym(RTLD_DEFAULT, name);
	if (p && !tr_in_self(p))
		return p;
	return tr_dlsym_loaded(name, NULL);
}

/* check mode: dynsym.c's answer p against dlsym's q */
static void check_answer(const char *name, const char *what, void *p, void *q)
{
	sym_checked++;
	if (p != q) {
		sym_differ++;
		tr_log_error("dynsym check: %s%s: ours %p, dlsym %p", name, what, p, q);
	}
}

/* The real name[@version]: dynsym.c's answer, else dlsym's (what it
 * answered before dynsym.c: dlvsym(RTLD_NEXT) for a version, then the
 * steps of tr_dlsym_next). */
static void *real_sym(const char *name, const char *version)
{
	void *p = NULL, *q = NULL;
	enum tr_sym_found f = tr_sym_find(name, version, 0, &p);
	if (f != TR_SYM_ASK && !check_mode())
		return p;
	if (version)
		q = dlvsym(RTLD_NEXT, name, version);
	if (!q)
		q = dlsym_next_slow(name);
	if (sym_check > 0 && f != TR_SYM_ASK) {
		char v[96];
		snprintf(v, sizeof(v), "%s%.80s", version ? "@" : "", version ? version : "");
		check_answer(name, v, p, q);
	}
	return q;
}

void *tr_dlsym_next(const char *name)
{
	return real_sym(name, NULL);
}

void *tr_sym_default(const char *name)
{
	void *p;
	enum tr_sym_found f = tr_sym_find(name, NULL, 1, &p);
	if (f != TR_SYM_ASK && !check_mode())
		return p;
	void *q = dlsym(RTLD_DEFAULT, name);
	if (q && tr_in_self(q))
		q = NULL;   /* (only other objects' names are asked for) */
	if (sym_check > 0 && f != TR_SYM_ASK)
		check_answer(name, " (default scope)", p, q);
	return q;
}

void tr_real_startup_done(void)
{
	tr_sym_startup_done();
	if (sym_check > 0)
		tr_log_warn("dynsym check: %d names compared with dlsym, %d differ", sym_checked, sym_differ);
}

size_t tr_real_resolve(const struct tr_real_sym *tab, size_t n)
{
	size_t missing = 0;
	for (size_t i = 0; i < n; i++) {
		void *p = NULL;
		if (__atomic_load_n(tab[i].slot, __ATOMIC_ACQUIRE))
			continue;
		if (tab[i].version)
			p = real_sym(tab[i].name, tab[i].version);
		if (!p)
			p = real_sym(tab[i].name, NULL);
		if (p)
			__atomic_store_n(tab[i].slot, p, __ATOMIC_RELEASE);
		else
			missing++;
	}
	return missing;
}

/* ---- the writer's system layer (format/otf2w_sys.h) ----
 * The writer and the definition code shared with the tools call these:
 * the real C library functions of the table, the private heap of mem.c. */
struct otf2w_sys otf2w_sys;

void tr_real_init(void)
{
	size_t n = sizeof(tr_real_table) / sizeof(tr_real_table[0]);
	tr_sym_init();
	if (tr_real_resolve(tr_real_table, n))
		for (size_t i = 0; i < n; i++)
			if (!*tr_real_table[i].slot)
				tr_log_error("cannot resolve the real %s: %s", tr_real_table[i].name, dlerror());
#define SYS_HEAP(fn) otf2w_sys.fn = tr_##fn;
#define SYS_CALL(fn) otf2w_sys.fn = tr_real.fn;
	OTF2W_SYS_HEAP(SYS_HEAP)
	OTF2W_SYS_CALLS(SYS_CALL)
}

/* ---- futex lock (Drepper, "Futexes are tricky", mutex #2) ---- */

TR_TLS int tr_tls_internal;

static long futex(int *uaddr, int op, int val)
{
	return tr_syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
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
	void *p = tr_calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		tr_log_error("out of memory (%zu bytes)", n * sz);
	return p;
}

