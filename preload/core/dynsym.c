/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dynsym.c - our own look-up of a dynamic symbol in the objects the
 * program was started with, read from their GNU hash tables.
 *
 * Why: dlsym walks the loader's scope with locks, error catching and
 * version checks, about 700-900 instructions and a few cold cache lines a
 * name; the 150 names the tracer resolves at start were a fifth of a short
 * traced process's instructions (callgrind: 100 K of 450 K). The tables
 * read here are mapped once and never change, so a look-up is a bloom
 * filter test, a bucket and a short chain per object: no lock, no
 * allocation, no system call (async-signal-safe, unlike dlsym).
 *
 * The objects: those dl_iterate_phdr lists at tr_sym_init (the tracer's
 * constructor), kept only when they belong to the start-up set - the main
 * program, what LD_PRELOAD names, and everything their DT_NEEDED entries
 * name, transitively: such an object is never unloaded, while one opened
 * by another library's constructor could be closed later. Objects without
 * a GNU hash table, the vDSO and anything loaded later are not read here.
 *
 * What it answers (enum tr_sym_found):
 * - TR_SYM_FOUND: the first definition after libtracer.so in load order
 *   (what dlsym(RTLD_NEXT) gives for these objects: the global scope of
 *   the start-up set is its load order), or with any set in any object
 *   but libtracer.so; of the default version (a hidden, older version is
 *   skipped, as dlsym does) or of the version asked for (dlvsym);
 * - TR_SYM_ABSENT: no object of the set has it, and the set is all there
 *   is (every object had a hash table, nothing loaded since): dlsym would
 *   find nothing either;
 * - TR_SYM_ASK: anything else (an indirect function, a thread-local
 *   symbol, an object not read here): the caller asks dlsym.
 * TRACER_TEST_DYNSYM=check (tests only): tr_real_resolve compares every
 * answer with dlsym's and logs each difference.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include "tr_int.h"

#define DS_MAX 128

struct ds_obj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu;        /* DT_GNU_HASH */
	const ElfW(Half) *versym;   /* NULL: unversioned */
	const ElfW(Verdef) *verdef;
	const ElfW(Dyn) *dyn;
	const char *name;
	int self, start;            /* libtracer.so; of the start-up set */
	int vdso;                   /* the vDSO: never asked (dlsym does not look there) */
};

static struct ds_obj ds[DS_MAX];
static int nds, ds_self = -1, ds_complete;
static int ds_startup = 1;   /* in the constructors: nothing loaded since tr_sym_init */

void tr_sym_startup_done(void)
{
	ds_startup = 0;
}

static uintptr_t ds_ptr(uintptr_t base, ElfW(Addr) v)
{
	/* the loader relocated these in place, except where the dynamic
	 * section is read-only (the vDSO): then they are offsets */
	return v < base ? base + v : v;
}

/* base name of a path */
static const char *ds_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int ds_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (nds >= DS_MAX) {
		ds_complete = 0;
		return 1;
	}
	struct ds_obj *o = &ds[nds];
	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	o->name = info->dlpi_name ? info->dlpi_name : "";
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			o->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_LOAD && tr_in_self((const void *)(info->dlpi_addr + ph->p_vaddr)))
			o->self = 1;
	}
	if (!o->dyn)
		return 0;   /* a static main program: nothing to look up */
	for (const ElfW(Dyn) *d = o->dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: o->sym = (const ElfW(Sym) *)ds_ptr(o->base, d->d_un.d_ptr); break;
		case DT_STRTAB: o->str = (const char *)ds_ptr(o->base, d->d_un.d_ptr); break;
		case DT_GNU_HASH: o->gnu = (const uint32_t *)ds_ptr(o->base, d->d_un.d_ptr); break;
		case DT_VERSYM: o->versym = (const ElfW(Half) *)ds_ptr(o->base, d->d_un.d_ptr); break;
		case DT_VERDEF: o->verdef = (const ElfW(Verdef) *)ds_ptr(o->base, d->d_un.d_ptr); break;
		}
	}
	o->vdso = !strcmp(ds_base(o->name), "linux-vdso.so.1");
	if (o->self)
		ds_self = nds;
	nds++;
	return 0;
}

/* o is named by a DT_NEEDED entry of a start-up object, or by LD_PRELOAD */
static int ds_needed(const struct ds_obj *o, const char *preload)
{
	const char *bn = ds_base(o->name);
	if (!bn[0])
		return 0;
	for (int i = 0; i < nds; i++) {
		if (!ds[i].start || !ds[i].dyn || !ds[i].str)
			continue;
		for (const ElfW(Dyn) *d = ds[i].dyn; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_NEEDED && !strcmp(ds_base(ds[i].str + d->d_un.d_val), bn))
				return 1;
	}
	/* LD_PRELOAD: names separated by spaces or colons */
	size_t bl = strlen(bn);
	for (const char *p = preload; p && *p;) {
		while (*p == ' ' || *p == ':')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != ':')
			e++;
		const char *b = p;
		for (const char *q = p; q < e; q++)
			if (*q == '/')
				b = q + 1;
		if ((size_t)(e - b) == bl && !memcmp(b, bn, bl))
			return 1;
		p = e;
	}
	return 0;
}

void tr_sym_init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	ds_complete = 1;
	(void)tr_in_self((const void *)tr_sym_init);   /* its own dl_iterate_phdr first */
	dl_iterate_phdr(ds_collect, NULL);
	if (nds)
		ds[0].start = 1;   /* the main program (load order: first) */
	/* the start-up closure: repeat until nothing is added (a few rounds) */
	/* (not tr_getenv: this runs before the real functions it needs; where
	 * the C library has no environment yet, no object counts as preloaded,
	 * and a look-up that meets one asks dlsym) */
	extern char **environ;
	const char *preload = NULL;
	for (char **e = environ; e && *e && !preload; e++)
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			preload = *e + 11;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 1; i < nds; i++)
			if (!ds[i].start && (ds[i].self || ds_needed(&ds[i], preload)))
				ds[i].start = changed = 1;
	}
	for (int i = 0; i < nds; i++)
		if (ds[i].dyn && !ds[i].vdso && (!ds[i].start || !ds[i].gnu || !ds[i].sym || !ds[i].str))
			ds_complete = 0;   /* defines names we do not read */
}

static uint32_t ds_hash(const char *s)
{
	uint32_t h = 5381;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = h * 33 + *p;
	return h;
}

/* the name of version index ndx of o (NULL: none) */
static const char *ds_vername(const struct ds_obj *o, unsigned ndx)
{
	const ElfW(Verdef) *v = o->verdef;
	while (v) {
		if (v->vd_ndx == ndx) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)v + v->vd_aux);
			return o->str + a->vda_name;
		}
		if (!v->vd_next)
			break;
		v = (const ElfW(Verdef) *)((const char *)v + v->vd_next);
	}
	return NULL;
}

/* name in o: 1 found (*out), 0 not there, -1 ask dlsym */
static int ds_in(const struct ds_obj *o, const char *name, uint32_t h, const char *version, void **out)
{
	const uint32_t nbuckets = o->gnu[0], symoffset = o->gnu[1], bloom_size = o->gnu[2], shift = o->gnu[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(o->gnu + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	if (!nbuckets || !bloom_size)
		return 0;
	ElfW(Addr) word = bloom[(h / bits) % bloom_size];
	ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
	if ((word & mask) != mask)
		return 0;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1)) {
			const ElfW(Sym) *s = &o->sym[i];
			if (!strcmp(o->str + s->st_name, name) && s->st_shndx != SHN_UNDEF) {
				int ok = 1;
				if (o->versym) {
					unsigned vs = o->versym[i];
					if (version) {
						const char *vn = ds_vername(o, vs & 0x7fff);
						ok = vn && !strcmp(vn, version);
					} else {
						ok = !(vs & 0x8000);   /* a hidden (older) version: not dlsym's */
					}
				} else if (version) {
					ok = 0;
				}
				if (ok) {
					unsigned type = ELF64_ST_TYPE(s->st_info);
					if (type == STT_GNU_IFUNC || type == STT_TLS || s->st_shndx == SHN_ABS)
						return -1;
					*out = (void *)(o->base + s->st_value);
					return 1;
				}
			}
		}
		if (ch & 1)
			break;
	}
	return 0;
}

enum tr_sym_found tr_sym_find(const char *name, const char *version, int any, void **out)
{
	*out = NULL;
	if (!nds)
		tr_sym_init();   /* a wrapper called before our constructor (another library's) */
	if (!nds || (!any && ds_self < 0))
		return TR_SYM_ASK;
	uint32_t h = ds_hash(name);
	for (int i = any ? 0 : ds_self + 1; i < nds; i++) {
		const struct ds_obj *o = &ds[i];
		if (o->self || !o->dyn || o->vdso)
			continue;
		if (!o->start || !o->gnu || !o->sym || !o->str)
			return TR_SYM_ASK;   /* an object we do not read comes first */
		int r = ds_in(o, name, h, version, out);
		if (r > 0)
			return TR_SYM_FOUND;
		if (r < 0)
			return TR_SYM_ASK;
	}
	/* (before libtracer.so: only the main program and earlier preloads;
	 * RTLD_NEXT does not look there, the fallbacks do) */
	if (!any)
		for (int i = 0; i < ds_self; i++) {
			const struct ds_obj *o = &ds[i];
			if (!o->dyn || o->vdso)
				continue;
			if (!o->start || !o->gnu || !o->sym || !o->str)
				return TR_SYM_ASK;
			int r = ds_in(o, name, h, version, out);
			if (r != 0) {
				*out = NULL;
				return TR_SYM_ASK;
			}
		}
	return ds_complete && ds_startup ? TR_SYM_ABSENT : TR_SYM_ASK;
}
