/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_symtab_check.c - sampling/symtab.c (the sorted symbol table that
 * names sampled addresses) against libdw's own lookup,
 * dwfl_module_addrinfo, on real objects: every STEP-th (default 64)
 * address of every executable section of each file named, and every
 * symbol's first and last byte that is code (sampled addresses are).
 * The PLT stubs, which libdw does not name, against objdump's
 * "<function@plt>" labels (its "*ABS*+0x...@plt" ones, IRELATIVE slots,
 * get no name). Prints the objects, the addresses compared,
 * each disagreement (at most 20) and the time per lookup of each; exit 0
 * when there was none, 1 otherwise, 77 when no object could be read.
 *
 *   smp_symtab_check [-s STEP] [-k K] FILE...   (K: every K-th symbol's ends, default 1)
 *
 * Built from symtab.c itself, with libdw linked (no libtracer.so): the
 * tracer's allocator is malloc here.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include "smp_symtab.h"

#define SMP_SET(n) .n = &n,
static const struct smp_dw_lib dw = { SMP_DW_SYMS(SMP_SET) };
const struct smp_dw_lib *smp_dw = &dw;

void *tr_malloc(size_t n)
{
	return malloc(n);
}
void *tr_realloc(void *p, size_t n)
{
	return realloc(p, n);
}
void tr_free(void *p)
{
	free(p);
}

static unsigned long compared, differ;
static double t_libdw, t_table;   /* seconds in each lookup */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sampled addresses are code: an executable section's. */
static int in_code(const struct smp_symtab *st, uint64_t a)
{
	for (size_t k = 0; k < st->nsec; k++)
		if (a >= st->sec[k].lo && a < st->sec[k].hi)
			return 1;
	return 0;
}

static void compare(Dwfl_Module *mod, struct smp_symtab *st, const char *path, GElf_Addr a)
{
	GElf_Off off = 0;
	GElf_Sym es;
	double t0 = now();
	const char *want = dwfl_module_addrinfo(mod, a, &off, &es, NULL, NULL, NULL);
	double t1 = now();
	struct smp_sym *y = smp_symtab_find(st, a);
	t_table += now() - t1;
	t_libdw += t1 - t0;
	if (y && y->plt)
		return;   /* libdw has no name for a PLT stub (checked against objdump below) */
	const char *got = y ? y->name : NULL;
	compared++;
	if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
		if (differ++ < 20)
			printf("  %s 0x%llx: libdw %s, symtab %s\n", path, (unsigned long long)a,
			       want ? want : "(none)", got ? got : "(none)");
	}
}

/* The PLT stubs' names against objdump's ("<puts@plt>:" headers of
 * .plt.sec, else of .plt): each the table's name at that address. The
 * number compared, or -1 when objdump cannot be run. */
static long plt_vs_objdump(struct smp_symtab *st, const char *path)
{
	char cmd[4200];
	long n = 0;
	for (int k = 0; k < 2 && n == 0; k++) {
		snprintf(cmd, sizeof(cmd), "objdump -d -j %s '%s' 2>/dev/null", k ? ".plt" : ".plt.sec", path);
		FILE *p = popen(cmd, "r");
		if (!p)
			return -1;
		char line[4096];
		while (fgets(line, sizeof(line), p)) {
			unsigned long long a;
			char name[4096];
			size_t ln;
			/* "<f@plt>:" (not "<f@plt-0x10>:", objdump's label of the
			 * resolver entry before the first stub) */
			if (sscanf(line, "%llx <%4095[^>]>:", &a, name) != 2 || (ln = strlen(name)) < 5 ||
			    strcmp(name + ln - 4, "@plt") != 0)
				continue;
			struct smp_sym *y = smp_symtab_find(st, a);
			n++;
			compared++;
			/* "*ABS*+0x...@plt": an IRELATIVE slot, no function name to give */
			int bad = strncmp(name, "*ABS*", 5) == 0 ? y && y->plt : !y || strcmp(y->name, name) != 0;
			if (bad) {
				if (differ++ < 20)
					printf("  %s 0x%llx: objdump %s, symtab %s\n", path, a, name, y ? y->name : "(none)");
			}
		}
		int st = pclose(p);
		if (n == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
			return -1;   /* no objdump: that part is not checked */
	}
	return n;
}

int main(int argc, char **argv)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	unsigned step = 64;
	int i = 1, read = 0, plt_ran = 0;
	long plt_total = 0;
	unsigned every = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-s") == 0)
			step = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-k") == 0)
			every = (unsigned)atoi(argv[i + 1]);
	}
	if (every == 0)
		every = 1;
	if (step == 0)
		step = 1;
	for (; i < argc; i++) {
		Dwfl *dwfl = dwfl_begin(&cb);
		dwfl_report_begin(dwfl);
		Dwfl_Module *mod = dwfl_report_elf(dwfl, argv[i], argv[i], -1, 0, false);
		dwfl_report_end(dwfl, NULL, NULL);
		struct smp_symtab st;
		if (!mod || smp_symtab_build(&st, mod) != 0) {
			printf("%s: no symbols (skipped)\n", argv[i]);
			dwfl_end(dwfl);
			continue;
		}
		read++;
		unsigned long before = compared;
		for (size_t k = 0; k < st.nsec; k++)
			for (GElf_Addr a = st.sec[k].lo; a < st.sec[k].hi; a += step)
				compare(mod, &st, argv[i], a);
		for (size_t k = 0; k < st.n; k += every) {
			if (in_code(&st, st.v[k].lo))
				compare(mod, &st, argv[i], st.v[k].lo);
			if (st.v[k].size > 1 && in_code(&st, st.v[k].lo + st.v[k].size - 1))
				compare(mod, &st, argv[i], st.v[k].lo + st.v[k].size - 1);
		}
		long plt = plt_vs_objdump(&st, argv[i]);
		if (plt > 0)
			plt_total += plt;
		else if (plt == 0)
			plt_ran = 1;
		printf("%s: %zu symbols, %zu executable sections, %lu addresses compared (%ld PLT stubs with "
		       "objdump)\n", argv[i], st.n, st.nsec, compared - before, plt);
		smp_symtab_free(&st);
		dwfl_end(dwfl);
	}
	if (plt_ran && plt_total == 0) {
		printf("objdump ran but no PLT stub was compared\n");
		differ++;
	}
	printf("%lu addresses, %lu named differently; per lookup: libdw %.2f us, the sorted table %.3f us\n",
	       compared, differ, compared ? t_libdw * 1e6 / (double)compared : 0.0,
	       compared ? t_table * 1e6 / (double)compared : 0.0);
	if (!read)
		return 77;
	return differ ? 1 : 0;
}
