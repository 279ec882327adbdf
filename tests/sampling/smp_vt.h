/* SPDX-License-Identifier: BSD-3-Clause */
/* smp_vt.h - user regions for the sampling tests through the VT API of
 * libtracer.so, looked up at run time (the programs also run untraced). */
#ifndef SMP_VT_H
#define SMP_VT_H
#include <dlfcn.h>

static int (*smp_vt_funcdef)(const char *, int, int *);
static int (*smp_vt_begin)(int);
static int (*smp_vt_end)(int);

static inline void smp_vt_init(void)
{
	smp_vt_funcdef = (int (*)(const char *, int, int *))dlsym(RTLD_DEFAULT, "VT_funcdef");
	smp_vt_begin = (int (*)(int))dlsym(RTLD_DEFAULT, "VT_begin");
	smp_vt_end = (int (*)(int))dlsym(RTLD_DEFAULT, "VT_end");
}

static inline int smp_region(const char *name)
{
	int h = 0;
	if (smp_vt_funcdef)
		smp_vt_funcdef(name, 0, &h);
	return h;
}

static inline void smp_begin(int h)
{
	if (smp_vt_begin)
		smp_vt_begin(h);
}

static inline void smp_end(int h)
{
	if (smp_vt_end)
		smp_vt_end(h);
}
#endif
