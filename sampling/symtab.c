/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * symtab.c - a module's symbols sorted once, for the sampled addresses.
 *
 * dwfl_module_addrinfo reads the module's whole symbol table for every
 * address it is asked about. Sampling asks about every distinct sampled
 * address: numpy's matrix product on OpenBLAS (10^4 addresses, tables of
 * 10^4 symbols) spent a fifth of the traced run's CPU there. Here the
 * table is read once per module (dwfl_module_getsymtab), sorted by
 * address, and each address is a binary search and a short walk.
 *
 * The choice is the one libdwfl's address lookup makes (its documented
 * rules, so that names do not change with this table): the symbols of the
 * table's global part first (global and weak bindings), those of the
 * local part only when no sized global one contains the address. Among
 * the sized symbols that contain it, taken in table order, a later one
 * wins when it starts closer to the address or has the better binding,
 * or, starting at the same address, is shorter with no worse binding or
 * as long with a better one. With no sized symbol, the sizeless symbol
 * (an assembly label) last in table order at the highest start or end of
 * any symbol at or below the address, in the address's executable
 * section. Section, file and TLS symbols and undefined ones name nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include "tracer.h"
#include "smp_int.h"
#include "smp_symtab.h"

static int bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int by_address(const void *a, const void *b)
{
	const struct smp_sym *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->bind != y->bind)   /* the better binding first */
		return x->bind > y->bind ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The executable sections of the module's file, at run-time addresses. */
static void read_sections(struct smp_symtab *st, Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = smp_dw->dwfl_module_getelf(mod, &bias);
	size_t cap = 0;

	for (Elf_Scn *scn = elf ? smp_dw->elf_nextscn(elf, NULL) : NULL; scn; scn = smp_dw->elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!smp_dw->gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size == 0)
			continue;
		if (st->nsec == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct smp_sec *nv = tr_realloc(st->sec, nc * sizeof(*nv));
			if (!nv)
				return;
			st->sec = nv;
			cap = nc;
		}
		st->sec[st->nsec].lo = sh.sh_addr + bias;
		st->sec[st->nsec].hi = sh.sh_addr + bias + sh.sh_size;
		st->nsec++;
	}
}

/* The PLT stubs of the module's file as sized symbols "<function>@plt"
 * (as objdump names them; the symbol tables have none). On x86-64 each
 * 16-byte entry of .plt.sec (or of .plt after its first) jumps through a
 * GOT slot (`jmp *disp32(%rip)`, ff 25); the relocation of .rela.plt at
 * that slot names the function. Entries whose slot has no named
 * relocation (IRELATIVE) stay unnamed. Appended to st->v. */
struct plt_slot {
	uint64_t got;
	const char *name;
};

static int by_got(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

static const char *slot_name(const struct plt_slot *v, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].got == got ? v[lo].name : NULL;
}

/* The GOT slot the entry at addr (its 16 bytes at b) jumps through, 0 if
 * none. */
static uint64_t entry_slot(const uint8_t *b, uint64_t addr)
{
	for (int j = 0; j + 6 <= 16; j++) {
		if (b[j] == 0xff && b[j + 1] == 0x25) {
			int32_t d;
			memcpy(&d, b + j + 2, 4);
			return addr + (uint64_t)j + 6 + (uint64_t)(int64_t)d;
		}
	}
	return 0;
}

static void add_plt(struct smp_symtab *st, Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = smp_dw->dwfl_module_getelf(mod, &bias);
	size_t shstr;
	if (!elf || smp_dw->elf_getshdrstrndx(elf, &shstr) != 0)
		return;
	Elf_Scn *rela = NULL, *code = NULL;
	GElf_Shdr rsh = { 0 }, csh = { 0 }, sh;
	for (Elf_Scn *scn = smp_dw->elf_nextscn(elf, NULL); scn; scn = smp_dw->elf_nextscn(elf, scn)) {
		const char *nm = smp_dw->gelf_getshdr(scn, &sh) ? smp_dw->elf_strptr(elf, shstr, sh.sh_name) : NULL;
		if (!nm)
			continue;
		if (!strcmp(nm, ".rela.plt") && sh.sh_type == SHT_RELA && sh.sh_entsize) {
			rela = scn;
			rsh = sh;
		} else if ((!strcmp(nm, ".plt.sec") || (!strcmp(nm, ".plt") && !code)) && sh.sh_type == SHT_PROGBITS) {
			code = scn;   /* .plt.sec wins over .plt */
			csh = sh;
		}
	}
	Elf_Scn *dsym = rela ? smp_dw->elf_getscn(elf, rsh.sh_link) : NULL;
	GElf_Shdr dsh;
	Elf_Data *rd = rela ? smp_dw->elf_getdata(rela, NULL) : NULL;
	Elf_Data *sd = dsym && smp_dw->gelf_getshdr(dsym, &dsh) ? smp_dw->elf_getdata(dsym, NULL) : NULL;
	Elf_Data *cd = code ? smp_dw->elf_getdata(code, NULL) : NULL;
	if (!rd || !sd || !cd || !cd->d_buf || cd->d_size < csh.sh_size || csh.sh_size < 32)
		return;
	size_t nrel = rsh.sh_size / rsh.sh_entsize, nslot = 0, room = 0;
	struct plt_slot *slot = tr_malloc((nrel ? nrel : 1) * sizeof(*slot));
	if (!slot)
		return;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym ds;
		const char *nm = smp_dw->gelf_getrela(rd, (int)i, &r) && smp_dw->gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &ds)
			? smp_dw->elf_strptr(elf, dsh.sh_link, ds.st_name) : NULL;
		if (!nm || !nm[0] || GELF_R_SYM(r.r_info) == 0)
			continue;
		slot[nslot].got = r.r_offset;
		slot[nslot++].name = nm;
		room += strlen(nm) + sizeof("@plt");
	}
	qsort(slot, nslot, sizeof(*slot), by_got);
	/* .plt's first entry pushes and jumps to the resolver: no function */
	uint64_t first = strcmp(smp_dw->elf_strptr(elf, shstr, csh.sh_name), ".plt") ? 0 : 16;
	size_t nent = (csh.sh_size - first) / 16;
	struct smp_sym *nv = nslot ? tr_realloc(st->v, (st->n + nent) * sizeof(*nv)) : NULL;
	st->plt_names = nv ? tr_malloc(room) : NULL;
	if (nv)
		st->v = nv;
	size_t used = 0;
	for (size_t k = 0; st->plt_names && k < nent; k++) {
		uint64_t off = first + 16 * k, addr = csh.sh_addr + off;
		const char *nm = slot_name(slot, nslot, entry_slot((const uint8_t *)cd->d_buf + off, addr));
		size_t len = nm ? strlen(nm) : 0;
		if (!nm || used + len + sizeof("@plt") > room)
			continue;
		char *name = st->plt_names + used;
		memcpy(name, nm, len);
		memcpy(name + len, "@plt", sizeof("@plt"));
		used += len + sizeof("@plt");
		struct smp_sym *y = &st->v[st->n++];
		memset(y, 0, sizeof(*y));
		y->lo = addr + bias;
		y->size = 16;
		y->name = name;
		y->bind = 3;
		y->index = UINT32_MAX;   /* after every symbol of the table */
		y->plt = 1;
		y->decl_line = -1;
	}
	tr_free(slot);
}

int smp_symtab_build(struct smp_symtab *st, Dwfl_Module *mod)
{
	memset(st, 0, sizeof(*st));
	st->built = 1;
	int n = mod ? smp_dw->dwfl_module_getsymtab(mod) : -1;
	if (n <= 1)
		return -1;
	st->v = tr_malloc((size_t)n * sizeof(*st->v));
	if (!st->v)
		return -1;
	int first_global = smp_dw->dwfl_module_getsymtab_first_global(mod);
	st->two_parts = first_global > 1;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr value = 0;
		GElf_Word shndx = 0;
		const char *name = smp_dw->dwfl_module_getsym_info(mod, i, &s, &value, &shndx, NULL, NULL);
		int type = name ? GELF_ST_TYPE(s.st_info) : STT_SECTION;
		if (!name || !name[0] || s.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		struct smp_sym *y = &st->v[st->n++];
		y->lo = value;
		y->size = s.st_size;
		y->name = name;
		y->bind = (uint8_t)bind_rank(&s);
		y->index = (uint32_t)i;
		y->part = st->two_parts && i < first_global;
		y->abs = s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX;
		y->decl_line = -1;
		y->decl_file = NULL;
	}
	add_plt(st, mod);
	qsort(st->v, st->n, sizeof(*st->v), by_address);
	uint64_t reach = 0, part[2] = { 0, 0 };
	for (size_t i = 0; i < st->n; i++) {
		struct smp_sym *y = &st->v[i];
		if (y->size && y->lo + y->size > reach)
			reach = y->lo + y->size;
		if (y->lo + y->size > part[y->part])
			part[y->part] = y->lo + y->size;
		y->reach = reach;
		y->reach_part[0] = part[0];
		y->reach_part[1] = part[1];
	}
	read_sections(st, mod);
	return 0;
}

void smp_symtab_free(struct smp_symtab *st)
{
	tr_free(st->v);
	tr_free(st->sec);
	tr_free(st->plt_names);
	memset(st, 0, sizeof(*st));
}

static const struct smp_sec *section_of(const struct smp_symtab *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nsec; i++)
		if (addr >= st->sec[i].lo && addr < st->sec[i].hi)
			return &st->sec[i];
	return NULL;
}

/* The sized symbol of table part `part` that names addr (top: the last
 * symbol at or below addr), or NULL: the candidates (every sized symbol
 * containing addr, found below top while a sized one may still reach
 * addr) taken in table order. */
#define SMP_CANDIDATES 64
static int by_index(const void *a, const void *b)
{
	const struct smp_sym *x = *(const struct smp_sym *const *)a, *y = *(const struct smp_sym *const *)b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static struct smp_sym *sized_in(struct smp_symtab *st, size_t top, uint64_t addr, int part)
{
	struct smp_sym *c[SMP_CANDIDATES];
	size_t nc = 0;

	for (size_t j = top + 1; j-- > 0 && st->v[j].reach > addr && nc < SMP_CANDIDATES;) {
		struct smp_sym *y = &st->v[j];
		if (y->part == part && y->size && addr - y->lo < y->size)
			c[nc++] = y;
	}
	if (nc > 1)
		qsort(c, nc, sizeof(c[0]), by_index);
	struct smp_sym *best = nc ? c[0] : NULL;
	for (size_t k = 1; k < nc; k++) {
		struct smp_sym *y = c[k];
		if (best->lo < y->lo || best->bind < y->bind ||
		    (best->lo == y->lo && ((best->size > y->size && best->bind <= y->bind) ||
					   (best->size >= y->size && best->bind < y->bind))))
			best = y;
	}
	return best;
}

/* The label that names addr in the parts searched (nparts: 1 the global
 * part, 2 both), or NULL. */
static struct smp_sym *label_in(struct smp_symtab *st, size_t top, uint64_t addr, int nparts)
{
	uint64_t m = st->v[top].reach_part[0];
	if (nparts > 1 && st->v[top].reach_part[1] > m)
		m = st->v[top].reach_part[1];
	const struct smp_sec *sec = section_of(st, addr);
	struct smp_sym *best = NULL;
	if (m > addr)
		return NULL;
	for (size_t j = top + 1; j-- > 0 && st->v[j].lo >= m;) {
		struct smp_sym *y = &st->v[j];
		if (y->size || y->part >= nparts || (y->abs ? y->lo != addr : !sec || y->lo < sec->lo))
			continue;
		if (!best || y->part > best->part || (y->part == best->part && y->index > best->index))
			best = y;
	}
	return best;
}

struct smp_sym *smp_symtab_find(struct smp_symtab *st, uint64_t addr)
{
	/* top: the last symbol at or below addr */
	size_t lo = 0, hi = st->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	size_t top = lo - 1;
	struct smp_sym *y = sized_in(st, top, addr, 0);
	if (y)
		return y;
	if (!st->two_parts)
		return label_in(st, top, addr, 1);
	/* the local part, unless a global label is at addr itself */
	y = label_in(st, top, addr, 1);
	if (y && y->lo == addr)
		return y;
	y = sized_in(st, top, addr, 1);
	return y ? y : label_in(st, top, addr, 2);
}
