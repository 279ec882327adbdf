/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sys_libc.c - otf2w_sys for a program of its own (the tools, the tests,
 * the benchmarks; library otf2w_libc): the C library's functions.
 * libtracer.so never links this: it defines otf2w_sys itself (preload/core/real.c).
 */
#define _GNU_SOURCE
#include "otf2w_sys.h"

#define SYS_LIBC(fn) .fn = fn,
struct otf2w_sys otf2w_sys = { OTF2W_SYS_HEAP(SYS_LIBC) OTF2W_SYS_CALLS(SYS_LIBC) };
