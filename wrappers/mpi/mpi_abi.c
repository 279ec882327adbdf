/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_abi.c - which MPI the program uses, decided at its first MPI call
 * (ABI-neutral: compiled without mpi.h, see mpi_abi.h).
 *
 * The first call of any MPI entry point (in practice MPI_Init, from C or
 * Fortran, or MPI_Initialized) comes through tr_mpi_slow (below) to
 * tr_mpi_resolve. By then the program's libmpi is loaded (linked, or opened
 * with dlopen by mpi4py & co.): the object that defines PMPI_Init names the
 * ABI by its soname,
 *   libmpi.so.40                           Open MPI 3.x-5.x  -> "ompi"
 *   libmpich*.so.12, libmpi*.so.12         MPICH ABI family (MPICH, Intel
 *                                          MPI, MVAPICH, Cray MPICH) -> "mpich"
 * confirmed by its symbols (Open MPI defines ompi_mpi_comm_world, the MPICH
 * family does not). Anything else (a future ABI, Open MPI 1.x's libmpi.so.12):
 * one tracer: line and every entry point goes straight to the library's
 * own function, so the program runs untraced but unharmed. TRACER_MPI=0:
 * the same without the line.
 *
 * Each entry point is resolved once (its tr_mpi_disp slot is then set and
 * the trampoline jumps directly); slots of names the active ABI has no
 * wrapper for (Fortran names under MPICH, whose Fortran bindings call the C
 * MPI_* functions and so reach the C wrappers) get the library's function.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "tracer.h"
#include "mpi_abi.h"
#include "mpi_disp.h"

static int abi_state;                        /* 0 undecided, 1 deciding, 2 decided */
static const struct tr_mpi_abi *abi_active;  /* NULL: pass through */
static void *mpi_dlh;                        /* object where a symbol was last found outside the global scope */

/* ---- symbol lookup ------------------------------------------------------------ */

/* The family's settings, parsed once (the layers are built once per ABI). */
static int polling_all;   /* TRACER_MPI_POLLING: fold (default) or all */

static const char *set_polling(const char *v)
{
	if (!*v)
		return NULL;
	const char *bad = tr_cfg_choice(v, &polling_all, "fold", 0, "all", 1, "fold, all");
	return bad && tr_env_rank() <= 0 ? bad : NULL;   /* one line per run, not one per rank */
}

static const struct tr_setting mpi_settings[] = {
	TR_SETTING("TRACER_MPI_POLLING", set_polling, "fold"),
};
TR_SETTINGS_TABLE(mpi_table, "mpi", mpi_settings);

int tr_mpi_polling_all(void)
{
	return polling_all;
}

void *tr_mpi_lookup(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p && tr_in_self(p))
		p = dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	void *h = __atomic_load_n(&mpi_dlh, __ATOMIC_ACQUIRE);
	if (h && (p = dlsym(h, name)) && !tr_in_self(p))
		return p;
	p = tr_dlsym_loaded(name, &h);
	if (p && h && !__atomic_load_n(&mpi_dlh, __ATOMIC_ACQUIRE))
		__atomic_store_n(&mpi_dlh, h, __ATOMIC_RELEASE);
	return p;
}

/* ---- which ABI ------------------------------------------------------------------ */

struct lib_of {
	uintptr_t addr;
	char soname[256];
	char path[4096];
};

/* The loaded object containing l->addr: its soname (else its file name). */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lib_of *l = arg;
	int hit = 0;
	for (int i = 0; i < info->dlpi_phnum && !hit; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		hit = ph->p_type == PT_LOAD && l->addr >= lo && l->addr < lo + ph->p_memsz;
	}
	if (!hit)
		return 0;
	snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name ? info->dlpi_name : "");
	const char *base = strrchr(l->path, '/');
	snprintf(l->soname, sizeof(l->soname), "%.255s", base ? base + 1 : l->path);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		uintptr_t strtab = 0, soname = (uintptr_t)-1;
		for (; d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_STRTAB)
				strtab = d->d_un.d_ptr;
			else if (d->d_tag == DT_SONAME)
				soname = d->d_un.d_val;
		}
		/* glibc relocates DT_STRTAB in place for most objects, not all */
		if (strtab && strtab < info->dlpi_addr)
			strtab += info->dlpi_addr;
		if (strtab && soname != (uintptr_t)-1)
			snprintf(l->soname, sizeof(l->soname), "%.255s", (const char *)(strtab + soname));
	}
	return 1;
}

static const struct tr_mpi_abi *abi_named(const char *name)
{
	for (const struct tr_mpi_abi *a = tr_mpi_abis; a->info; a++)
		if (!strcmp(a->info->name, name))
			return a;
	return NULL;
}

/* "ompi", "mpich" or NULL (unknown) for the library l. */
static const char *abi_family(const struct lib_of *l)
{
	const char *s = l->soname;
	void *h = l->path[0] ? dlopen(l->path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	void *ompi = h ? dlsym(h, "ompi_mpi_comm_world") : dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
	if (h)
		tr_real.dlclose(h);
	if (!strcmp(s, "libmpi.so.40") && ompi)
		return "ompi";
	if (!strncmp(s, "libmpi", 6) && strstr(s, ".so.12") && !strcmp(strstr(s, ".so.12"), ".so.12") && !ompi)
		return "mpich";
	return NULL;
}

static void decide(void)
{
	abi_active = NULL;
	if (!tr_cfg.mpi)
		return;   /* TRACER_MPI=0: no MPI code path of the tracer at all */
	void *init = tr_mpi_lookup("PMPI_Init");
	if (!init) {
		tr_log_warn("an MPI function was called but no loaded library defines PMPI_Init: MPI not traced");
		return;
	}
	struct lib_of l;
	memset(&l, 0, sizeof(l));
	l.addr = (uintptr_t)init;
	dl_iterate_phdr(find_lib, &l);
	const char *fam = abi_family(&l);
	abi_active = fam ? abi_named(fam) : NULL;
	if (abi_active) {
		tr_log_debug("MPI library %s: %s ABI", l.soname, abi_active->info->what);
		return;
	}
	if (tr_proc.rank <= 0)
		tr_log_warn("MPI library %s is of an unknown ABI%s (traced: Open MPI's libmpi.so.40, "
			    "the MPICH family's libmpich.so.12/libmpi.so.12): MPI calls not traced",
			    l.soname[0] ? l.soname : "(unnamed)", fam ? " for this build" : "");
}

static int missing_said;

static int missing(void)
{
	if (!__atomic_exchange_n(&missing_said, 1, __ATOMIC_RELAXED))
		tr_log_error("an MPI function called by the program is in no loaded library "
			     "(set TRACER_VERBOSE=2 for its name); it returns an error");
	return abi_active ? abi_active->info->err_other : 16;
}

/* Called by tr_mpi_slow with the index of the entry point called: its
 * function from now on. */
void *tr_mpi_resolve(unsigned idx);
__attribute__((used)) void *tr_mpi_resolve(unsigned idx)
{
	int st = 0;
	if (__atomic_compare_exchange_n(&abi_state, &st, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		decide();
		__atomic_store_n(&abi_state, 2, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&abi_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	}
	const int *rel = abi_active ? &abi_active->fn[idx] : NULL;
	void *p = rel && *rel ? (void *)((const char *)rel + *rel) : NULL;
	if (!p)
		p = tr_mpi_lookup(tr_mpi_xname(idx));
	if (!p) {
		tr_log_debug("MPI function %s not found", tr_mpi_xname(idx));
		p = (void *)missing;
	}
	__atomic_store_n(&tr_mpi_disp[idx], p, __ATOMIC_RELEASE);
	return p;
}

/* The slow path of every trampoline (mpi_disp.c): %r11d = index. Saves the
 * argument registers (integer, vector, %al of variadic calls), resolves,
 * restores, and jumps to the function with the caller's arguments. */
__asm__(".text\n"
	".globl tr_mpi_slow\n"
	".hidden tr_mpi_slow\n"
	".type tr_mpi_slow, @function\n"
	".p2align 4\n"
	"tr_mpi_slow:\n"
	"\tpushq %rdi\n\tpushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %r8\n\tpushq %r9\n\tpushq %rax\n"
	"\tsubq $128, %rsp\n"
	"\tmovdqu %xmm0, 0(%rsp)\n\tmovdqu %xmm1, 16(%rsp)\n\tmovdqu %xmm2, 32(%rsp)\n"
	"\tmovdqu %xmm3, 48(%rsp)\n\tmovdqu %xmm4, 64(%rsp)\n\tmovdqu %xmm5, 80(%rsp)\n"
	"\tmovdqu %xmm6, 96(%rsp)\n\tmovdqu %xmm7, 112(%rsp)\n"
	"\tmovl %r11d, %edi\n"
	"\tcall tr_mpi_resolve\n"
	"\tmovq %rax, %r11\n"
	"\tmovdqu 0(%rsp), %xmm0\n\tmovdqu 16(%rsp), %xmm1\n\tmovdqu 32(%rsp), %xmm2\n"
	"\tmovdqu 48(%rsp), %xmm3\n\tmovdqu 64(%rsp), %xmm4\n\tmovdqu 80(%rsp), %xmm5\n"
	"\tmovdqu 96(%rsp), %xmm6\n\tmovdqu 112(%rsp), %xmm7\n"
	"\taddq $128, %rsp\n"
	"\tpopq %rax\n\tpopq %r9\n\tpopq %r8\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\tpopq %rdi\n"
	"\tjmp *%r11\n"
	".size tr_mpi_slow, .-tr_mpi_slow\n");
