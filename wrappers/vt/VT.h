/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VT.h - the Intel(R) Trace Collector user API as implemented by libtracer.so.
 *
 * Written from the public ITC reference documentation: function names,
 * argument lists and the meaning of the constants follow ITC, so a program
 * written for ITC compiles against this header and runs with libtracer.so
 * (linked, or preloaded in place of libVT.so). Only the subset listed here is
 * implemented; see docs/vt.md for the mapping to OTF2.
 *
 * Fortran: every function has a binding named like the ITC Fortran routine in
 * lower case with one trailing underscore (VTBEGIN -> vtbegin_), arguments by
 * reference, INTEGER ierr last (gfortran hidden string lengths follow).
 */
#ifndef VT_H
#define VT_H

#ifdef __cplusplus
extern "C" {
#endif

/* API version (the ITC 8.x series) */
#define VT_VERSION               8000
#define VT_VERSION_COMPATIBILITY 8000

/* ---- error codes (returned by every int function) ------------------------- */
enum _VT_ErrorCode {
	VT_OK                  =   0,  /* no error */
	VT_ERR_NOLICENSE       =  -1,  /* no valid license (never returned) */
	VT_ERR_NOTIMPLEMENTED  =  -2,  /* not implemented */
	VT_ERR_NOTINITIALIZED  =  -3,  /* tracer not active, or VT_finalize() called */
	VT_ERR_BADREQUEST      =  -4,  /* request not valid now (e.g. VT_end with no open region) */
	VT_ERR_BADSYMBOLID     =  -5,  /* unknown state (symbol) handle */
	VT_ERR_BADSCLID        =  -6,  /* unknown source code location handle */
	VT_ERR_BADSCL          =  -7,  /* source code location could not be found */
	VT_ERR_BADFORMAT       =  -8,  /* wrong format */
	VT_ERR_BADKIND         =  -9,  /* wrong kind of handle */
	VT_ERR_NOMEMORY        = -10,  /* out of memory / table full / stack too deep */
	VT_ERR_BADFILE         = -11,  /* error reading or writing a file */
	VT_ERR_FLUSH           = -12,  /* error while flushing */
	VT_ERR_BADARG          = -13,  /* invalid argument */
	VT_ERR_NOTHREADS       = -14,  /* no worker threads */
	VT_ERR_BADINDEX        = -15,  /* wrong thread index */
	VT_ERR_COMM            = -16,  /* communication error */
	VT_ERR_INVT            = -17,  /* VT function called from inside the tracer */
	VT_ERR_IGNORE          = -18   /* non-fatal: the request was ignored */
};

/* ---- special handles --------------------------------------------------------- */
#define VT_NOSCL    0     /* no source code location */
#define VT_NOCLASS  0     /* class "Application" */

/* ---- counters (VT_countdef genre = data type | mode | validity) --------------- */
enum _VT_CountData {
	VT_COUNT_INTEGER      = 0 << 0,  /* value = two 32-bit unsigned words: high, low */
	VT_COUNT_FLOAT        = 1 << 0,  /* value = 64-bit double */
	VT_COUNT_INTEGER64    = 2 << 0,  /* value = 64-bit signed integer */
	VT_COUNT_DATA         = 3 << 0,  /* mask of the data type */

	VT_COUNT_ABSVAL       = 0 << 2,  /* the value itself */
	VT_COUNT_RATE         = 1 << 2,  /* monotonically increasing, shown as rate */
	VT_COUNT_DISPLAY      = 1 << 2,  /* mask of the mode */

	VT_COUNT_VALID_BEFORE = 0 << 3,  /* valid since the previous value */
	VT_COUNT_VALID_POINT  = 1 << 3,  /* valid at this point only */
	VT_COUNT_VALID_AFTER  = 2 << 3,  /* valid until the next value */
	VT_COUNT_VALID_SAMPLE = 3 << 3,  /* sample of a continuous curve */
	VT_COUNT_VALID        = 3 << 3   /* mask of the validity */
};

/* counter scopes (VT_countdef scope argument) */
enum _VT_Groups {
	VT_ME             = -1,  /* the calling thread */
	VT_GROUP_THREAD   = -2,  /* every thread */
	VT_GROUP_PROCESS  = -3,  /* every process */
	VT_GROUP_CLUSTER  = -4   /* every node */
};

/* ---- life cycle ----------------------------------------------------------------- */
int VT_initialize(int *argc, char ***argv);
int VT_finalize(void);
void VT_traceon(void);
void VT_traceoff(void);
int VT_tracestate(int *state);      /* 0 = on, 1 = off for this thread, 2 = off for good */
int VT_flush(void);
int VT_wakeup(void);
double VT_timestamp(void);          /* seconds on the archive's clock */
double VT_timestart(void);

/* ---- process and thread identity ------------------------------------------------ */
int VT_getrank(int *rank);                   /* MPI rank, 0 without MPI */
int VT_registerthread(int thindex);          /* accepted; threads register themselves */
int VT_registernamed(const char *threadname, int thindex);   /* location property VT_THREAD_NAME */
int VT_getthrank(int *thrank);               /* location index of the calling thread */

/* ---- definitions ----------------------------------------------------------------- */
int VT_classdef(const char *classname, int *classhandle);
int VT_funcdef(const char *symname, int classhandle, int *statehandle);
int VT_symdef(int statehandle, const char *symname, const char *activity);
int VT_scldef(const char *file, int line_nr, int *sclhandle);
int VT_thisloc(int sclhandle);

/* ---- state changes ------------------------------------------------------------ */
int VT_begin(int statehandle);
int VT_beginl(int statehandle, int sclhandle);
int VT_end(int statehandle);
int VT_endl(int statehandle, int sclhandle);
int VT_enter(int statehandle, int sclhandle);
int VT_leave(int sclhandle);
int VT_enterstate(const char *name, int *statehandle, int *truncated);

/* ---- counters ----------------------------------------------------------------- */
int VT_countdef(const char *name, int classhandle, int genre, int scope,
		const void *bounds, const char *unit, int *counterhandle);
int VT_countval(int ncounters, int *handles, void *values);

#ifdef __cplusplus
}
#endif
#endif /* VT_H */
