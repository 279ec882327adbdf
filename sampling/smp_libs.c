/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_libs.c - libunwind, libdw and PAPI opened on demand (smp_libs.h).
 * The sonames come from the build (sampling/CMakeLists.txt: the libraries
 * found at configure time), so the loaded library is the one the headers
 * describe.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "smp_int.h"
#include "smp_libs.h"

const struct smp_unwind_lib *smp_unw;
const struct smp_dw_lib *smp_dw;
const struct smp_papi_lib *smp_papi;

#define SMP_STR2(x) #x
#define SMP_STR(x) SMP_STR2(x)

/* The address of name in h, or NULL after one tracer: line. */
static void *sym(void *h, const char *soname, const char *name, const char *what)
{
	void *p = dlsym(h, name);
	if (!p)
		tr_log_error("%s: %s has no %s; %s off", what, soname, name, what);
	return p;
}

static void *open_lib(const char *soname, const char *what)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		tr_log_error("%s: cannot load %s (%s); %s off", what, soname, e ? e : "dlopen failed", what);
	}
	return h;
}

/* One loader per library (tried once): every name of its list into its
 * member, by the name the member has after macro expansion. */
#define SMP_LIB_SET(n)                                                          \
	if (ok && !(lib.n = (__typeof__(lib.n))sym(h, soname, SMP_STR(n), what))) \
		ok = 0;
#define SMP_LOADER(fn, type, var, so, LIST)                 \
	const struct type *fn(const char *what)             \
	{                                                   \
		static struct type lib;                     \
		static int tried;                           \
		const char *soname = so;                    \
		if (tried)                                  \
			return var;                         \
		tried = 1;                                  \
		void *h = open_lib(soname, what);           \
		int ok = h != NULL;                         \
		LIST(SMP_LIB_SET)                           \
		if (ok)                                     \
			var = &lib;                         \
		return var;                                 \
	}

SMP_LOADER(smp_unwind_load, smp_unwind_lib, smp_unw, TR_SONAME_UNWIND, SMP_UNWIND_SYMS)
SMP_LOADER(smp_dw_load, smp_dw_lib, smp_dw, TR_SONAME_DW, SMP_DW_SYMS)
SMP_LOADER(smp_papi_load, smp_papi_lib, smp_papi, TR_SONAME_PAPI, SMP_PAPI_SYMS)
