/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * symbols.c - loaded objects and symbol resolution for the sampler.
 *
 * At sample time a frame is only a raw address (the handler cannot resolve
 * anything). The object table records every object seen by dl_iterate_phdr
 * (at init, at every thread start/end, around every dlclose - interposed
 * here because it serves sampling - and at shut-down) with the table
 * generation in which it appeared and disappeared; a node remembers the
 * generation it was created in, so an address of a library that was
 * dlclose'd before the end is still resolved against the right file.
 *
 * With TRACER_DURABLE the durability snapshots name every node by its
 * object file and address (snapshot.c), which `tracer recover` resolves
 * after a kill (tools/recover_syms.c).
 * At shut-down (never in the handler) each address is resolved with libdw
 * (libdwfl): the function from the ELF symbol tables (.symtab, .dynsym,
 * MiniDebugInfo, separate debuginfo by build-id), file and line from DWARF,
 * C++ names demangled with libstdc++'s __cxa_demangle when the program has
 * it. Frames that cannot be resolved are named "0x<offset> [<library>]".
 * Return addresses are looked up at ip - 1 (the call instruction).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <link.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "smp_int.h"
#include "smp_libs.h"
#include "smp_symtab.h"

struct smp_obj {
	char *path;           /* file to read (NULL: no file, e.g. vdso) */
	char *name;           /* basename for display */
	uintptr_t bias, lo, hi;
	uint32_t gen_from, gen_to;   /* alive in generations [from, to) */
	int live;
	/* its symbol session, kept between the definitions of TRACER_DURABLE
	 * ticks (reading DWARF again each tick costs up to a second) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct smp_symtab syms;   /* mod's symbols, sorted at its first lookup */
	uintptr_t eh_hdr, eh_table;   /* its .eh_frame_hdr and the search table in it (ehgap.c) */
	uint32_t eh_count;
};

volatile uint32_t tr_smp_obj_gen;
uintptr_t tr_smp_self_lo, tr_smp_self_hi;

/* The object table: mapped once (never moves), entries appended (the
 * count published last) and only marked gone, so the definitions read it
 * without its lock: a refresh (thread start/end, dlclose) never waits for
 * symbol reading. smp_obj_lock: the refreshes; smp_def_lock: the
 * definitions (shut-down) and the symbol sessions. */
#define SMP_MAX_OBJS 16384
static struct smp_obj *smp_objs;
static uint32_t smp_nobjs;   /* atomic */
static atomic_flag smp_obj_lock = ATOMIC_FLAG_INIT;
static atomic_flag smp_def_lock = ATOMIC_FLAG_INIT;
static unsigned long long smp_last_adds = ~0ull, smp_last_subs = ~0ull;

struct smp_cur {
	const char *name;
	uintptr_t bias, lo, hi, eh;
	int seen;
};

struct smp_scan {
	struct smp_cur *v;
	size_t n, cap;
	int unchanged;
	int first;
};

static int smp_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct smp_scan *sc = arg;
	if (sc->first) {
		sc->first = 0;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			if (info->dlpi_adds == smp_last_adds && info->dlpi_subs == smp_last_subs) {
				sc->unchanged = 1;
				return 1;
			}
			smp_last_adds = info->dlpi_adds;
			smp_last_subs = info->dlpi_subs;
		}
	}
	uintptr_t lo = UINTPTR_MAX, hi = 0, eh = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			eh = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	if (sc->n == sc->cap) {
		size_t nc = sc->cap ? sc->cap * 2 : 64;
		struct smp_cur *nv = tr_realloc(sc->v, nc * sizeof(*nv));
		if (!nv)
			return 1;
		sc->v = nv;
		sc->cap = nc;
	}
	struct smp_cur *c = &sc->v[sc->n++];
	c->name = info->dlpi_name ? info->dlpi_name : "";
	c->bias = info->dlpi_addr;
	c->lo = lo;
	c->hi = hi;
	c->eh = eh;
	c->seen = 0;
	return 0;
}

static char *smp_exe_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return tr_strdup("/proc/self/exe");
	buf[n] = 0;
	return tr_strdup(buf);
}

static int smp_obj_add(const struct smp_cur *c, uint32_t gen)
{
	if (!smp_objs) {
		void *m = tr_real.mmap(NULL, sizeof(*smp_objs) * SMP_MAX_OBJS, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		smp_objs = m;
	}
	if (smp_nobjs == SMP_MAX_OBJS)
		return -1;   /* (frames of later objects are named by address) */
	struct smp_obj *o = &smp_objs[smp_nobjs];
	memset(o, 0, sizeof(*o));
	if (!c->name[0]) {
		o->path = smp_exe_path();
	} else if (c->name[0] == '/' || access(c->name, R_OK) == 0) {
		o->path = tr_strdup(c->name);
	}
	const char *disp = c->name[0] ? c->name : (o->path ? o->path : "?");
	const char *sl = strrchr(disp, '/');
	o->name = tr_strdup(sl ? sl + 1 : disp);
	o->bias = c->bias;
	o->lo = c->lo;
	o->hi = c->hi;
	o->gen_from = gen;
	o->gen_to = UINT32_MAX;
	if (tr_smp_eh_table(c->eh, &o->eh_table, &o->eh_count) == 0)
		o->eh_hdr = c->eh;
	o->live = 1;
	__atomic_store_n(&smp_nobjs, smp_nobjs + 1, __ATOMIC_RELEASE);
	return 0;
}

static void smp_refresh_locked(void);

/* In thread context, with this thread's SIGPROF blocked meanwhile: the
 * loader's lock that dl_iterate_phdr takes is recursive, but a sample that
 * lands while it is being released (inside pthread_mutex_unlock, the owner
 * already cleared, the word not yet) and asks libunwind for the stack (a
 * signal frame below: the archive written from a SIGTERM handler) waited
 * for it forever in dl_iterate_phdr, and the other threads' samples for
 * libunwind's lock behind it (pthread.alloc_tcmalloc_first.sigterm, once
 * in CI). */
void tr_smp_objects_refresh(void)
{
	sigset_t prof, old;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	tr_real.pthread_sigmask(SIG_BLOCK, &prof, &old);
	while (atomic_flag_test_and_set_explicit(&smp_obj_lock, memory_order_acquire))
		sched_yield();
	smp_refresh_locked();
	tr_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The SIGPROF handler (smp_stale): a refresh only when no other one runs,
 * never a wait, and at most every 10 ms (code in no object at all, e.g. a
 * JIT's, misses at every sample: the walk of the loaded objects then
 * costs at most 100 times a second). Like libunwind's own walk in the
 * handler, it calls dl_iterate_phdr (whose lock is recursive in glibc) in
 * plain program context only (the handler checks the thread is outside
 * the tracer). */
int tr_smp_stale;
static uint64_t smp_last_try;   /* archive clock */

void tr_smp_objects_refresh_try(void)
{
	uint64_t now = tr_time(), last = __atomic_load_n(&smp_last_try, __ATOMIC_RELAXED);
	if (now - last < tr_clock_resolution() / 100 ||
	    !__atomic_compare_exchange_n(&smp_last_try, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (!__atomic_exchange_n(&tr_smp_stale, 0, __ATOMIC_ACQ_REL))
		return;
	if (atomic_flag_test_and_set_explicit(&smp_obj_lock, memory_order_acquire)) {
		__atomic_store_n(&tr_smp_stale, 1, __ATOMIC_RELEASE);
		return;
	}
	smp_refresh_locked();
}

static void smp_refresh_locked(void)
{
	struct smp_scan sc;
	memset(&sc, 0, sizeof(sc));
	sc.first = 1;
	dl_iterate_phdr(smp_phdr_cb, &sc);
	if (sc.unchanged)
		goto out;
	uint32_t gen = tr_smp_obj_gen + 1;
	int changed = 0;
	for (uint32_t i = 0; i < smp_nobjs; i++) {
		struct smp_obj *o = &smp_objs[i];
		if (!o->live)
			continue;
		int found = 0;
		for (size_t k = 0; k < sc.n; k++) {
			struct smp_cur *c = &sc.v[k];
			if (!c->seen && c->bias == o->bias && c->lo == o->lo && c->hi == o->hi) {
				c->seen = 1;
				found = 1;
				break;
			}
		}
		if (!found) {
			o->live = 0;
			__atomic_store_n(&o->gen_to, gen, __ATOMIC_RELAXED);
			changed = 1;
		}
	}
	for (size_t k = 0; k < sc.n; k++) {
		if (!sc.v[k].seen) {
			smp_obj_add(&sc.v[k], smp_nobjs ? gen : 0);
			changed = 1;
		}
	}
	if (changed && smp_nobjs)
		__atomic_store_n(&tr_smp_obj_gen, gen, __ATOMIC_RELEASE);
out:
	atomic_flag_clear_explicit(&smp_obj_lock, memory_order_release);
	tr_free(sc.v);
}

/* An object's .eh_frame_hdr is read by signal handlers (ehgap.c) while
 * another thread may unload it: dlclose raises smp_unloading and waits
 * until no handler reads one (smp_eh_readers), and handlers read none
 * until the refresh after the unload has marked the object gone (its
 * pages may be another object's by then, loaded at once by a third
 * thread). Handlers never wait: they give up. */
static int smp_unloading, smp_eh_readers;

int tr_smp_eh_begin(void)
{
	__atomic_add_fetch(&smp_eh_readers, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&smp_unloading, __ATOMIC_SEQ_CST))
		return 0;
	__atomic_sub_fetch(&smp_eh_readers, 1, __ATOMIC_SEQ_CST);
	return -1;
}

void tr_smp_eh_end(void)
{
	__atomic_sub_fetch(&smp_eh_readers, 1, __ATOMIC_SEQ_CST);
}

int tr_smp_obj_eh(uintptr_t pc, struct tr_smp_eh *out)
{
	uint32_t n = __atomic_load_n(&smp_nobjs, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		const struct smp_obj *o = &smp_objs[i];
		if (o->live && pc >= o->lo && pc < o->hi) {
			if (!o->eh_hdr)
				return -1;
			out->hdr = o->eh_hdr;
			out->table = o->eh_table;
			out->count = o->eh_count;
			out->lo = o->lo;
			out->hi = o->hi;
			return 0;
		}
	}
	return -1;
}

void tr_smp_objects_init(void)
{
	tr_smp_objects_refresh();
	uintptr_t me = (uintptr_t)(void *)tr_smp_objects_init;
	for (uint32_t i = 0; i < smp_nobjs; i++) {
		if (me >= smp_objs[i].lo && me < smp_objs[i].hi) {
			tr_smp_self_lo = smp_objs[i].lo;
			tr_smp_self_hi = smp_objs[i].hi;
			break;
		}
	}
}

/* Interposed (serves the sampler): capture an object before it goes away. */
TR_EXPORT int dlclose(void *handle)
{
	TR_REAL_INIT(dlclose);
	if (!tr_real.dlclose)
		return -1;
	if (!tr_smp_enabled)
		return tr_real.dlclose(handle);
	tr_smp_objects_refresh();
	__atomic_add_fetch(&smp_unloading, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&smp_eh_readers, __ATOMIC_SEQ_CST))
		sched_yield();   /* a handler in another thread, a microsecond */
	int ret = tr_real.dlclose(handle);
	tr_smp_objects_refresh();
	__atomic_sub_fetch(&smp_unloading, 1, __ATOMIC_SEQ_CST);
	return ret;
}

/* ---- resolution at shut-down ------------------------------------------------------ */

struct smp_addr {
	uint64_t addr;        /* lookup address */
	uint64_t raw;         /* address as recorded */
	uint32_t node;
	uint32_t obj;         /* UINT32_MAX: none */
};

static int smp_addr_cmp(const void *a, const void *b)
{
	const struct smp_addr *x = a, *y = b;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* The object of the last answer, tried first: consecutive nodes are
 * mostly in one object (a snapshot's 36,000 placeholders scanned a
 * numpy run's 100-odd objects each). A hint only, checked like any entry. */
static uint32_t smp_obj_hint;

static uint32_t smp_obj_of(uint64_t a, uint32_t gen)
{
	uint32_t best = UINT32_MAX, n = __atomic_load_n(&smp_nobjs, __ATOMIC_ACQUIRE);
	uint32_t h = __atomic_load_n(&smp_obj_hint, __ATOMIC_RELAXED);
	if (h < n) {
		const struct smp_obj *o = &smp_objs[h];
		if (a >= o->lo && a < o->hi && o->gen_from <= gen && gen < __atomic_load_n(&o->gen_to, __ATOMIC_RELAXED))
			return h;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct smp_obj *o = &smp_objs[i];
		uint32_t to = __atomic_load_n(&o->gen_to, __ATOMIC_RELAXED);
		if (a < o->lo || a >= o->hi)
			continue;
		if (o->gen_from <= gen && gen < to) {
			__atomic_store_n(&smp_obj_hint, i, __ATOMIC_RELAXED);
			return i;
		}
		if (gen < to && best == UINT32_MAX)
			best = i;   /* loaded after the node's generation was taken */
	}
	return best;
}

typedef char *(*smp_demangle_fn)(const char *, char *, size_t *, int *);

static char *smp_demangle(const char *s)
{
	static smp_demangle_fn fn;
	static int looked;
	if (!s || s[0] != '_' || s[1] != 'Z')
		return NULL;
	if (!looked) {
		looked = 1;
		fn = (smp_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	}
	if (!fn)
		return NULL;
	int status = -1;
	char *d = fn(s, NULL, NULL, &status);
	if (status != 0) {
		tr_free(d);
		return NULL;
	}
	return d;
}

struct smp_res {
	uint32_t region;
	uint32_t scl;
	uint32_t bline;
	const char *name;    /* region name (owned by the name list) */
	const char *file;    /* owned by libdw until dwfl_end: copied */
};

/* names kept until the definitions are made */
static char **smp_names;
static size_t smp_nnames, smp_capnames;

static const char *smp_keep(char *s)
{
	if (!s)
		return NULL;
	if (smp_nnames == smp_capnames) {
		size_t nc = smp_capnames ? smp_capnames * 2 : 256;
		char **nv = tr_realloc(smp_names, nc * sizeof(*nv));
		if (!nv) {
			tr_free(s);
			return NULL;
		}
		smp_names = nv;
		smp_capnames = nc;
	}
	smp_names[smp_nnames++] = s;
	return s;
}

static uint32_t smp_pseudo_region(const char *name, const char *desc)
{
	return tr_def_region(name, name, desc, OTF2W_ROLE_ARTIFICIAL, OTF2W_PARADIGM_MEASUREMENT_SYSTEM,
			     OTF2W_REGION_FLAG_NONE, NULL, 0, 0);
}

/* Line where the function containing addr is declared (DWARF decl_line of
 * its DW_TAG_subprogram), 0 if unknown. */
static int smp_decl_line(Dwfl_Module *mod, Dwarf_Addr addr)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = smp_dw->dwfl_module_addrdie(mod, addr, &bias);
	if (!cu)
		return 0;
	Dwarf_Die *scopes = NULL;
	int n = smp_dw->dwarf_getscopes(cu, addr - bias, &scopes);
	int line = 0;
	for (int i = 0; i < n; i++) {
		if (smp_dw->dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			if (smp_dw->dwarf_decl_line(&scopes[i], &line) != 0)
				line = 0;
			break;
		}
	}
	tr_free(scopes);
	return line;
}

/* Resolve the addresses v[0..n-1] (all of object o, sorted) into res. */
static void smp_resolve_obj(struct smp_obj *o, struct smp_addr *v, size_t n, struct smp_res *res)
{
	static char *debuginfo_path;
	static Dwfl_Callbacks cb;
	if (!cb.find_elf) {
		cb.find_elf = smp_dw->dwfl_build_id_find_elf;
		cb.find_debuginfo = smp_dw->dwfl_standard_find_debuginfo;
		cb.section_address = smp_dw->dwfl_offline_section_address;
		cb.debuginfo_path = &debuginfo_path;
	}
	Dwfl *dwfl = o ? o->dwfl : NULL;
	Dwfl_Module *mod = o ? o->mod : NULL;
	if (o && o->path && !dwfl) {
		dwfl = smp_dw->dwfl_begin(&cb);
		if (dwfl) {
			smp_dw->dwfl_report_begin(dwfl);
			mod = smp_dw->dwfl_report_elf(dwfl, o->name, o->path, -1, o->bias, false);
			smp_dw->dwfl_report_end(dwfl, NULL, NULL);
		}
		o->dwfl = dwfl;
		o->mod = mod;
	}
	if (o && mod && !o->syms.built)
		(void)smp_symtab_build(&o->syms, mod);
	uint64_t prev = ~0ull;
	struct smp_res last = { SMP_UNDEF, SMP_UNDEF, 0, NULL, NULL };
	for (size_t i = 0; i < n; i++) {
		if (v[i].addr == prev) {
			res[i] = last;
			continue;
		}
		prev = v[i].addr;
		const char *sym = NULL;
		const char *file = NULL, *fn_file = NULL;   /* the pc's line's, the function's */
		int is_plt = 0;                              /* "<function>@plt": keeps its @ */
		int line = 0, bline = 0;
		if (mod) {
			struct smp_sym *y = smp_symtab_find(&o->syms, v[i].addr);
			Dwfl_Line *l = smp_dw->dwfl_module_getsrc(mod, v[i].addr);
			if (l)
				file = smp_dw->dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
			fn_file = file;
			if (y) {
				sym = y->name;
				is_plt = y->plt;
				/* once per function, at its entry: the line and the
				 * file of the function itself (an address inside
				 * inlined code would give the inlined function's:
				 * one function, several regions) */
				if (y->decl_line < 0) {
					Dwfl_Line *el = smp_dw->dwfl_module_getsrc(mod, y->lo);
					y->decl_file = el ? smp_dw->dwfl_lineinfo(el, NULL, NULL, NULL, NULL, NULL) : NULL;
					y->decl_line = smp_decl_line(mod, y->lo);
				}
				bline = y->decl_line;
				fn_file = y->decl_file;
			}
		}
		char buf[512];
		uint32_t region;
		const char *name;
		char sbuf[512];
		if (sym && strchr(sym, '@') && !is_plt) {
			/* versioned symbol: "__libc_start_main@@GLIBC_2.34" */
			snprintf(sbuf, sizeof(sbuf), "%.*s", (int)(strchr(sym, '@') - sym), sym);
			sym = sbuf;
		}
		if (sym && sym[0]) {
			char *dm = smp_demangle(sym);
			name = smp_keep(dm ? dm : tr_strdup(sym));
			region = tr_def_region(name ? name : sym, sym, o ? o->name : "", OTF2W_ROLE_FUNCTION,
					       OTF2W_PARADIGM_SAMPLING, OTF2W_REGION_FLAG_NONE,
					       fn_file, (uint32_t)(bline > 0 ? bline : 0), 0);
		} else {
			uint64_t offset = o ? v[i].raw - o->bias : v[i].raw;
			snprintf(buf, sizeof(buf), "0x%llx [%s]", (unsigned long long)offset,
				 o ? o->name : "unknown");
			name = smp_keep(tr_strdup(buf));
			region = tr_def_region(buf, buf, o ? o->name : "", OTF2W_ROLE_FUNCTION,
					       OTF2W_PARADIGM_SAMPLING, OTF2W_REGION_FLAG_NONE, file, 0, 0);
			bline = 0;
		}
		uint32_t scl = SMP_UNDEF;
		if (file && line > 0)
			scl = tr_def_source_code_location(file, (uint32_t)line);
		last.region = region;
		last.scl = scl;
		last.name = name;
		last.file = file ? smp_keep(tr_strdup(file)) : NULL;
		last.bline = (uint32_t)(bline > 0 ? bline : 0);
		res[i] = last;
	}
}

/* The symbol sessions end (the last definitions were made). */
static void smp_dwfl_end(void)
{
	uint32_t n = __atomic_load_n(&smp_nobjs, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		if (smp_objs[i].dwfl)
			smp_dw->dwfl_end(smp_objs[i].dwfl);
		smp_objs[i].dwfl = NULL;
		smp_objs[i].mod = NULL;
		smp_symtab_free(&smp_objs[i].syms);
	}
}

/* Nodes defined so far (under smp_def_lock). Without MPI smp_map[i] is
 * node i's deduplicated definition. */
static uint32_t smp_ndefined;   /* atomic: read by tr_smp_snapshot_defs without the lock */
static uint32_t *smp_map;       /* tr_smp_node_cap entries, mapped once (never moves) */

/* A map of tr_smp_node_cap entries (lazily backed), NULL when none. */
static uint32_t *smp_map_new(void)
{
	void *m = tr_real.mmap(NULL, sizeof(uint32_t) * (size_t)tr_smp_node_cap, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

uint32_t tr_smp_define_contexts(uint32_t n)
{
	uint32_t distinct = n, from;
	int by_index = tr_proc.rank >= 0;
	if (!n)
		return 0;
	while (atomic_flag_test_and_set_explicit(&smp_def_lock, memory_order_acquire))
		sched_yield();
	/* the complete nodes after those defined already (a node being created
	 * has depth 0; every node an event refers to is complete) */
	from = smp_ndefined;
	uint32_t m = from;
	while (m < n && __atomic_load_n(&tr_smp_nodes[m].depth, __ATOMIC_ACQUIRE))
		m++;
	n = m;
	if (!by_index && !smp_map && !(smp_map = smp_map_new())) {
		tr_log_error("sampling: no memory to map %u calling contexts", n);
		goto unlock;
	}
	distinct = n;
	if (from >= n)
		goto unlock;

	struct smp_res *nres = tr_malloc(sizeof(*nres) * n);
	struct smp_addr *v = tr_malloc(sizeof(*v) * n);
	struct smp_res *res = tr_malloc(sizeof(*res) * n);
	uint32_t *where = tr_malloc(sizeof(*where) * n);   /* node -> index in v, or UINT32_MAX */
	if (!nres || !v || !res || !where) {
		tr_log_error("sampling: no memory to resolve %u calling contexts", n);
		goto out;
	}
	uint32_t trunc_r = SMP_UNDEF, tracer_r = SMP_UNDEF;
	size_t nv = 0;
	for (uint32_t i = from; i < n; i++) {
		const struct smp_node *nd = &tr_smp_nodes[i];
		where[i] = UINT32_MAX;
		memset(&nres[i], 0, sizeof(nres[i]));
		nres[i].scl = SMP_UNDEF;
		if (nd->key & SMP_KEY_REGION) {
			nres[i].region = (uint32_t)(nd->key & 0xffffffffu);
		} else if (nd->key & SMP_KEY_PSEUDO) {
			if (nd->key == SMP_KEY_TRUNC) {
				if (trunc_r == SMP_UNDEF)
					trunc_r = smp_pseudo_region("[truncated]",
								    "frames beyond TRACER_SAMPLING_DEPTH");
				nres[i].region = trunc_r;
			} else {
				if (tracer_r == SMP_UNDEF)
					tracer_r = smp_pseudo_region("[tracer]", "time spent inside libtracer.so");
				nres[i].region = tracer_r;
			}
		} else {
			uint64_t raw = SMP_KEY_ADDR(nd->key);
			v[nv].raw = raw;
			v[nv].addr = (nd->key & SMP_KEY_RET) && raw ? raw - 1 : raw;
			v[nv].node = i;
			v[nv].obj = smp_obj_of(v[nv].addr, nd->gen);
			nv++;
		}
	}
	qsort(v, nv, sizeof(*v), smp_addr_cmp);
	for (size_t i = 0; i < nv;) {
		size_t j = i;
		while (j < nv && v[j].obj == v[i].obj)
			j++;
		smp_resolve_obj(v[i].obj == UINT32_MAX ? NULL : &smp_objs[v[i].obj], v + i, j - i, res + i);
		i = j;
	}
	for (size_t i = 0; i < nv; i++) {
		nres[v[i].node] = res[i];
		where[v[i].node] = (uint32_t)i;
	}

	/* CallingContext definitions (parents come first). Events carry node
	 * indices. Without MPI: one definition per distinct (region, source
	 * location, parent) - nodes of two pcs on one line, of two calls on
	 * one line, of the same path on two threads are one context - and a
	 * mapping table node -> definition in every location's local
	 * definitions. With MPI: ids = node indices (tr_def_calling_context_new)
	 * and the unifier deduplicates the same way. Both in steps (durable
	 * ticks: nodes from..n). */
	uint32_t bad = 0;
	uint32_t *map = !by_index ? smp_map : NULL;
	for (uint32_t i = from; i < n; i++) {
		const struct smp_node *nd = &tr_smp_nodes[i];
		if (map) {
			map[i] = tr_def_calling_context(nres[i].region, nres[i].scl,
							nd->parent == SMP_UNDEF ? SMP_UNDEF : map[nd->parent]);
			continue;
		}
		if (tr_def_calling_context_new(nres[i].region, nres[i].scl, nd->parent) != i)
			bad++;
	}
	if (map) {
		distinct = 0;
		for (uint32_t i = 0; i < n; i++)
			distinct = map[i] + 1 > distinct ? map[i] + 1 : distinct;
		tr_def_calling_context_map(map, n);
		tr_log_debug("sampling: %u calling-context nodes, %u distinct contexts", n, distinct);
	}
	__atomic_store_n(&smp_ndefined, n, __ATOMIC_RELEASE);
	if (bad)
		tr_log_error("sampling: %u calling-context ids differ from the recorded ones; samples may be misattributed",
			     bad);
out:
	for (size_t i = 0; i < smp_nnames; i++)
		tr_free(smp_names[i]);
	tr_free(smp_names);
	smp_names = NULL;
	smp_nnames = smp_capnames = 0;
	tr_free(nres);
	tr_free(v);
	tr_free(res);
	tr_free(where);
unlock:
	smp_dwfl_end();   /* (its descriptors are in this call's table: fdtable.c) */
	if (!by_index && smp_map && from >= n) {
		distinct = 0;   /* nothing new: the distinct contexts so far */
		for (uint32_t i = 0; i < smp_ndefined; i++)
			distinct = smp_map[i] + 1 > distinct ? smp_map[i] + 1 : distinct;
	}
	atomic_flag_clear_explicit(&smp_def_lock, memory_order_release);
	return distinct;
}

/* ---- for the TRACER_DURABLE snapshots (snapshot.c) ------------------------------ */

/* The object of a node's address a (gen: the node's), its index (UINT32_MAX:
 * none), the address in its file, its display name and file path (NULL: no
 * file). Async-signal-safe: the table is read without its lock. */
uint32_t tr_smp_obj_at(uint64_t a, uint32_t gen, uint64_t *off, const char **name, const char **path)
{
	uint32_t oi = smp_obj_of(a, gen);
	const struct smp_obj *o = oi == UINT32_MAX ? NULL : &smp_objs[oi];
	*off = o ? a - o->bias : a;
	*name = o ? o->name : NULL;
	*path = o ? o->path : NULL;
	return oi;
}

/* The nodes defined with their symbols so far and (without MPI) their
 * definitions (smp_map). */
uint32_t tr_smp_defined(const uint32_t **map)
{
	*map = smp_map;
	return __atomic_load_n(&smp_ndefined, __ATOMIC_ACQUIRE);
}

/* fork child: another thread of the parent (a refresh, the definitions)
 * may have held a lock. */
void tr_smp_objects_fork_child(void)
{
	atomic_flag_clear_explicit(&smp_obj_lock, memory_order_release);
	atomic_flag_clear_explicit(&smp_def_lock, memory_order_release);
}
