/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctor.c - the constructors of libtracer.so (and of tests/core's
 * libtracer_coretest.so): start-up at load (init.c). Its own object
 * library (tr_ctor, preload/CMakeLists.txt), so that a program linking
 * the core's objects (the white-box tests) starts nothing by itself.
 */
#include "tr_int.h"

/* First: the arguments glibc passes (argv before main may change it). */
__attribute__((constructor(101))) static void tr_ctor(int argc, char **argv, char **envp)
{
	(void)envp;
	tr_init_ctor(argc, argv);
}

/* Last: every module of the library registered by now. */
__attribute__((constructor(65535))) static void tr_ctor_modules(void)
{
	tr_init_modules();
}
