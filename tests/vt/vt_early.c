/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_early.c - a library whose constructor calls the VT API before
 * libtracer.so is initialized (preloaded after it: LD_PRELOAD="libtracer.so
 * libvt_early.so" runs this constructor first). Every call must return
 * VT_ERR_NOTINITIALIZED and nothing may crash. Not linked against
 * libtracer.so: the VT_* symbols are resolved at load time.
 */
#include <stdio.h>
#include <VT.h>

__attribute__((constructor)) static void vt_early(void)
{
	int h = 0, c = 0, s = 0, tr = 0, st = -1;
	int v[2] = { 0, 0 };
	int rc[12];
	int n = 0;
	rc[n++] = VT_initialize(NULL, NULL);
	rc[n++] = VT_classdef("Early", &c);
	rc[n++] = VT_funcdef("early", VT_NOCLASS, &h);
	rc[n++] = VT_symdef(7, "early7", "Early");
	rc[n++] = VT_scldef("vt_early.c", 1, &s);
	rc[n++] = VT_thisloc(1);
	rc[n++] = VT_begin(h);
	rc[n++] = VT_end(h);
	rc[n++] = VT_enterstate("Early/state", &h, &tr);
	rc[n++] = VT_countval(1, &c, v);
	rc[n++] = VT_flush();
	rc[n++] = VT_finalize();
	VT_traceoff();
	VT_traceon();
	VT_tracestate(&st);
	fprintf(stderr, "vt_early:");
	for (int i = 0; i < n; i++)
		fprintf(stderr, " %d", rc[i]);
	fprintf(stderr, " state=%d\n", st);
}
