/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vt_fortran.c - Fortran bindings of the VT API (ITC routine names in lower
 * case with one trailing underscore, as gfortran calls them). Arguments come
 * by reference, INTEGER ierr is last, and each CHARACTER argument adds a
 * hidden length (size_t since gfortran 8) after all the others.
 */
#include <stddef.h>
#include <string.h>

#include "tracer.h"
#include "VT.h"

#define VTF_STR_MAX 1024

/* Fortran string (blank padded, not terminated) to a C string in buf. */
static const char *vtf_str(const char *s, size_t len, char *buf)
{
	if (!s)
		return NULL;
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\0'))
		len--;
	if (len >= VTF_STR_MAX)
		len = VTF_STR_MAX - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

static void vtf_set(int *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

TR_EXPORT void vtinit_(int *ierr)
{
	vtf_set(ierr, VT_initialize(NULL, NULL));
}

TR_EXPORT void vtfini_(int *ierr)
{
	vtf_set(ierr, VT_finalize());
}

TR_EXPORT void vttraceon_(void)
{
	VT_traceon();
}

TR_EXPORT void vttraceoff_(void)
{
	VT_traceoff();
}

TR_EXPORT void vttracestate_(int *state, int *ierr)
{
	vtf_set(ierr, VT_tracestate(state));
}

TR_EXPORT void vtflush_(int *ierr)
{
	vtf_set(ierr, VT_flush());
}

TR_EXPORT void vtwakeup_(int *ierr)
{
	vtf_set(ierr, VT_wakeup());
}

TR_EXPORT double vttimestamp_(void)
{
	return VT_timestamp();
}

TR_EXPORT double vttimestart_(void)
{
	return VT_timestart();
}

TR_EXPORT void vtclassdef_(const char *classname, int *classhandle, int *ierr, size_t len)
{
	char b[VTF_STR_MAX];
	vtf_set(ierr, VT_classdef(vtf_str(classname, len, b), classhandle));
}

TR_EXPORT void vtfuncdef_(const char *symname, int *classhandle, int *statehandle, int *ierr,
			  size_t len)
{
	char b[VTF_STR_MAX];
	vtf_set(ierr, classhandle ? VT_funcdef(vtf_str(symname, len, b), *classhandle, statehandle)
				  : VT_ERR_BADARG);
}

TR_EXPORT void vtsymdef_(int *code, const char *symname, const char *activity, int *ierr,
			 size_t len1, size_t len2)
{
	char b1[VTF_STR_MAX], b2[VTF_STR_MAX];
	vtf_set(ierr, code ? VT_symdef(*code, vtf_str(symname, len1, b1), vtf_str(activity, len2, b2))
			   : VT_ERR_BADARG);
}

TR_EXPORT void vtscldef_(const char *file, int *line_nr, int *sclhandle, int *ierr, size_t len)
{
	char b[VTF_STR_MAX];
	vtf_set(ierr, line_nr ? VT_scldef(vtf_str(file, len, b), *line_nr, sclhandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtthisloc_(int *sclhandle, int *ierr)
{
	vtf_set(ierr, sclhandle ? VT_thisloc(*sclhandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtbegin_(int *statehandle, int *ierr)
{
	vtf_set(ierr, statehandle ? VT_begin(*statehandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtbeginl_(int *statehandle, int *sclhandle, int *ierr)
{
	vtf_set(ierr, statehandle && sclhandle ? VT_beginl(*statehandle, *sclhandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtend_(int *statehandle, int *ierr)
{
	vtf_set(ierr, VT_end(statehandle ? *statehandle : 0));
}

TR_EXPORT void vtendl_(int *statehandle, int *sclhandle, int *ierr)
{
	vtf_set(ierr, sclhandle ? VT_endl(statehandle ? *statehandle : 0, *sclhandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtenter_(int *statehandle, int *sclhandle, int *ierr)
{
	vtf_set(ierr, statehandle && sclhandle ? VT_enter(*statehandle, *sclhandle) : VT_ERR_BADARG);
}

TR_EXPORT void vtleave_(int *sclhandle, int *ierr)
{
	vtf_set(ierr, VT_leave(sclhandle ? *sclhandle : VT_NOSCL));
}

TR_EXPORT void vtenterstate_(const char *name, int *statehandle, int *truncated, int *ierr,
			     size_t len)
{
	char b[VTF_STR_MAX];
	vtf_set(ierr, VT_enterstate(vtf_str(name, len, b), statehandle, truncated));
}

TR_EXPORT void vtcountdef_(const char *name, int *classhandle, int *genre, int *scope,
			   const void *bounds, const char *unit, int *counterhandle, int *ierr,
			   size_t len1, size_t len2)
{
	char b1[VTF_STR_MAX], b2[VTF_STR_MAX];
	if (!classhandle || !genre || !scope) {
		vtf_set(ierr, VT_ERR_BADARG);
		return;
	}
	vtf_set(ierr, VT_countdef(vtf_str(name, len1, b1), *classhandle, *genre, *scope, bounds,
				  vtf_str(unit, len2, b2), counterhandle));
}

TR_EXPORT void vtcountval_(int *ncounters, int *handles, void *values, int *ierr)
{
	vtf_set(ierr, ncounters ? VT_countval(*ncounters, handles, values) : VT_ERR_BADARG);
}

TR_EXPORT void vtgetrank_(int *rank, int *ierr)
{
	vtf_set(ierr, VT_getrank(rank));
}

TR_EXPORT void vtregisterthread_(int *thindex, int *ierr)
{
	vtf_set(ierr, thindex ? VT_registerthread(*thindex) : VT_ERR_BADARG);
}

TR_EXPORT void vtregisternamed_(const char *threadname, int *thindex, int *ierr, size_t len)
{
	char b[VTF_STR_MAX];
	vtf_set(ierr, thindex ? VT_registernamed(vtf_str(threadname, len, b), *thindex) : VT_ERR_BADARG);
}

TR_EXPORT void vtgetthrank_(int *thrank, int *ierr)
{
	vtf_set(ierr, VT_getthrank(thrank));
}
