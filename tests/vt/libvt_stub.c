/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libvt_stub.c - stands in for ITC's libVT.so: every function fails with
 * VT_ERR_NOTIMPLEMENTED. vt_api.c linked against it passes check_vt.py only
 * if libtracer.so, preloaded, interposes the whole VT API.
 */
#include <VT.h>

#define NI return VT_ERR_NOTIMPLEMENTED

__attribute__((visibility("default"))) int VT_initialize(int *a, char ***b) { (void)a; (void)b; NI; }
__attribute__((visibility("default"))) int VT_finalize(void) { NI; }
__attribute__((visibility("default"))) void VT_traceon(void) { }
__attribute__((visibility("default"))) void VT_traceoff(void) { }
__attribute__((visibility("default"))) int VT_tracestate(int *s) { *s = 2; NI; }
__attribute__((visibility("default"))) int VT_flush(void) { NI; }
__attribute__((visibility("default"))) int VT_wakeup(void) { NI; }
__attribute__((visibility("default"))) double VT_timestamp(void) { return -1.0; }
__attribute__((visibility("default"))) double VT_timestart(void) { return -1.0; }
__attribute__((visibility("default"))) int VT_getrank(int *r) { (void)r; NI; }
__attribute__((visibility("default"))) int VT_registerthread(int i) { (void)i; NI; }
__attribute__((visibility("default"))) int VT_registernamed(const char *n, int i) { (void)n; (void)i; NI; }
__attribute__((visibility("default"))) int VT_getthrank(int *r) { (void)r; NI; }
__attribute__((visibility("default"))) int VT_classdef(const char *n, int *h) { (void)n; (void)h; NI; }
__attribute__((visibility("default"))) int VT_funcdef(const char *n, int c, int *h) { (void)n; (void)c; (void)h; NI; }
__attribute__((visibility("default"))) int VT_symdef(int h, const char *n, const char *a) { (void)h; (void)n; (void)a; NI; }
__attribute__((visibility("default"))) int VT_scldef(const char *f, int l, int *h) { (void)f; (void)l; (void)h; NI; }
__attribute__((visibility("default"))) int VT_thisloc(int s) { (void)s; NI; }
__attribute__((visibility("default"))) int VT_begin(int h) { (void)h; NI; }
__attribute__((visibility("default"))) int VT_beginl(int h, int s) { (void)h; (void)s; NI; }
__attribute__((visibility("default"))) int VT_end(int h) { (void)h; NI; }
__attribute__((visibility("default"))) int VT_endl(int h, int s) { (void)h; (void)s; NI; }
__attribute__((visibility("default"))) int VT_enter(int h, int s) { (void)h; (void)s; NI; }
__attribute__((visibility("default"))) int VT_leave(int s) { (void)s; NI; }
__attribute__((visibility("default"))) int VT_enterstate(const char *n, int *h, int *t) { (void)n; (void)h; (void)t; NI; }
__attribute__((visibility("default"))) int VT_countdef(const char *n, int c, int g, int s, const void *b,
						       const char *u, int *h)
{
	(void)n; (void)c; (void)g; (void)s; (void)b; (void)u; (void)h; NI;
}
__attribute__((visibility("default"))) int VT_countval(int n, int *h, void *v) { (void)n; (void)h; (void)v; NI; }
