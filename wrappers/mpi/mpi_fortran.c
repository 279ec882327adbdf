/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_fortran.c - MPI_Init/MPI_Init_thread/MPI_Finalize/MPI_Abort called
 * from Fortran. Open MPI's Fortran bindings (mpif.h / use mpi: mpi_init_
 * & co.; use mpi_f08: mpi_init_f08_ -> ompi_init_f) call PMPI_* directly,
 * so the C wrappers never see these calls. Without them a Fortran program
 * would get no rank agreement and no unification. The other Fortran MPI
 * point-to-point and collective calls are generated (mpi_fgen.c); the
 * completion calls Wait, Waitall, Waitany, Test are here.
 *
 * Each entry point exists under every name the Fortran compilers use
 * (mpi_init, mpi_init_, mpi_init__, MPI_INIT) and as ompi_*_f (the f08
 * path); the real work is the pmpi_*_ of libmpi_mpifh, looked up on first
 * use (TR_FSYM). TRACER_MPI=0: straight to pmpi_*_. MPI_File_open, close and
 * delete (a string argument) are here too; the other MPI-IO calls are generated.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_fortran_int.h"

extern void pmpi_init_(MPI_Fint *ierr);
TR_FSLOT(pmpi_init_)
#define pmpi_init_ TR_FSYM(pmpi_init_)
extern void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
TR_FSLOT(pmpi_init_thread_)
#define pmpi_init_thread_ TR_FSYM(pmpi_init_thread_)
extern void pmpi_finalize_(MPI_Fint *ierr);
TR_FSLOT(pmpi_finalize_)
#define pmpi_finalize_ TR_FSYM(pmpi_finalize_)
extern void pmpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr);
TR_FSLOT(pmpi_abort_)
#define pmpi_abort_ TR_FSYM(pmpi_abort_)

static void f_init(MPI_Fint *ierr)
{
	TR_MPI_BRACKET(MPI_Init, TR_MPI_INIT, pmpi_init_(ierr), *ierr == MPI_SUCCESS, 0);
}

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	TR_MPI_BRACKET(MPI_Init_thread, TR_MPI_INIT, pmpi_init_thread_(required, provided, ierr),
		       *ierr == MPI_SUCCESS, 0);
}

static void f_finalize(MPI_Fint *ierr)
{
	TR_MPI_BRACKET(MPI_Finalize, TR_MPI_FINALIZE, pmpi_finalize_(ierr), 1, 0);
}

static void f_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	TR_MPI_BRACKET(MPI_Abort, TR_MPI_ABORT, pmpi_abort_(comm, errorcode, ierr), 1, (int)*errorcode);
}

#define TR_F_NAMES(lower, upper, impl, params, args)      \
	TR_EXPORT void lower params { impl args; }         \
	TR_EXPORT void lower##_ params { impl args; }      \
	TR_EXPORT void lower##__ params { impl args; }     \
	TR_EXPORT void upper params { impl args; }

TR_F_NAMES(mpi_init, MPI_INIT, f_init, (MPI_Fint *ierr), (ierr))
TR_F_NAMES(mpi_init_thread, MPI_INIT_THREAD, f_init_thread,
	   (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr), (required, provided, ierr))
TR_F_NAMES(mpi_finalize, MPI_FINALIZE, f_finalize, (MPI_Fint *ierr), (ierr))
TR_F_NAMES(mpi_abort, MPI_ABORT, f_abort, (MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr),
	   (comm, errorcode, ierr))

/* use mpi_f08: mpi_init_f08_ & co. call these (through the PLT) */
TR_EXPORT void ompi_init_f(MPI_Fint *ierr) { f_init(ierr); }
TR_EXPORT void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	f_init_thread(required, provided, ierr);
}
TR_EXPORT void ompi_finalize_f(MPI_Fint *ierr) { f_finalize(ierr); }
TR_EXPORT void ompi_abort_f(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	f_abort(comm, errorcode, ierr);
}

/* ---- completion calls ---------------------------------------------------------------- */

extern void pmpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr);
TR_FSLOT(pmpi_wait_)
#define pmpi_wait_ TR_FSYM(pmpi_wait_)
extern void pmpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr);
TR_FSLOT(pmpi_waitall_)
#define pmpi_waitall_ TR_FSYM(pmpi_waitall_)
extern void pmpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr);
TR_FSLOT(pmpi_waitany_)
#define pmpi_waitany_ TR_FSYM(pmpi_waitany_)
extern void pmpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr);
TR_FSLOT(pmpi_test_)
#define pmpi_test_ TR_FSYM(pmpi_test_)

/* Fortran MPI_STATUS_SIZE in MPI_Fint */
#define F_ST ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

#define F_BEGIN(fn, passthrough)                                  \
	struct tr_thread *t = tr_mpi_tget();                      \
	if (!t) {                                                 \
		passthrough;                                      \
		return;                                           \
	}                                                         \
	const uint32_t rgn = tr_mpi_region(TR_MPI_FN_##fn);       \
	tr_mpi_enter(t, tr_time(), rgn)

#define F_END()                       \
	tr_leave(t, t1, rgn);         \
	tr_thread_put(t)

static void f_wait(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
	F_BEGIN(MPI_Wait, pmpi_wait_(request, status, ierr));
	MPI_Fint stl[16], *use = tr_mpi_f_status_ignore(status) ? stl : status;
	struct tr_mpi_req *e = tr_mpi_req_take(PMPI_Request_f2c(*request));
	pmpi_wait_(request, use, ierr);
	uint64_t t1 = tr_time();
	if (*ierr == MPI_SUCCESS && e) {
		MPI_Status st;
		PMPI_Status_f2c(use, &st);
		tr_mpi_req_complete(t, t1, e, &st, 1);
	} else {
		tr_mpi_req_release(e);
	}
	F_END();
}

static void f_test(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	/* a poll: folded like the C MPI_Test when it completes nothing */
	struct tr_thread *t = tr_mpi_tget();
	if (!t) {
		pmpi_test_(request, flag, status, ierr);
		return;
	}
	const uint32_t rgn = tr_mpi_region(TR_MPI_FN_MPI_Test);
	uint64_t t0 = tr_time();
	const int fold = tr_mpi_fold;
	if (!fold)
		tr_mpi_enter(t, t0, rgn);
	MPI_Fint stl[16], *use = tr_mpi_f_status_ignore(status) ? stl : status;
	struct tr_mpi_req *e = tr_mpi_req_take(PMPI_Request_f2c(*request));
	pmpi_test_(request, flag, use, ierr);
	uint64_t t1 = tr_time();
	if (fold && *ierr == MPI_SUCCESS && !*flag) {
		tr_mpi_req_release(e);
		tr_mpi_poll_folded(t0, t1);
		tr_thread_put(t);
		return;
	}
	if (fold)
		tr_mpi_poll_enter(t, &t0, rgn);
	if (*ierr == MPI_SUCCESS && e) {
		MPI_Status st;
		if (*flag)
			PMPI_Status_f2c(use, &st);
		tr_mpi_req_complete(t, t1, e, &st, *flag != 0);
	} else {
		tr_mpi_req_release(e);
	}
	F_END();
}

static void f_waitall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
	F_BEGIN(MPI_Waitall, pmpi_waitall_(count, requests, statuses, ierr));
	int n = *count > 0 ? (int)*count : 0;
	struct tr_mpi_req *el[64], **e = n <= 64 ? el : tr_malloc(sizeof(*e) * (size_t)n);
	MPI_Fint stl[64 * 8], *use = statuses, *own = NULL;
	if (tr_mpi_f_statuses_ignore(statuses))
		use = n * F_ST <= 64 * 8 ? stl : (own = tr_malloc(sizeof(MPI_Fint) * (size_t)(n * F_ST)));
	if (!e || !use) {
		/* no memory: untraced completion */
		pmpi_waitall_(count, requests, statuses, ierr);
		uint64_t t1 = tr_time();
		if (e != el)
			tr_free(e);
		tr_free(own);
		F_END();
		return;
	}
	for (int i = 0; i < n; i++)
		e[i] = tr_mpi_req_take(PMPI_Request_f2c(requests[i]));
	pmpi_waitall_(count, requests, use, ierr);
	uint64_t t1 = tr_time();
	for (int i = 0; i < n; i++) {
		if (*ierr == MPI_SUCCESS && e[i]) {
			MPI_Status st;
			PMPI_Status_f2c(use + i * F_ST, &st);
			tr_mpi_req_complete(t, t1, e[i], &st, 1);
		} else {
			tr_mpi_req_release(e[i]);
		}
	}
	if (e != el)
		tr_free(e);
	tr_free(own);
	F_END();
}

static void f_waitany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
{
	F_BEGIN(MPI_Waitany, pmpi_waitany_(count, requests, index, status, ierr));
	int n = *count > 0 ? (int)*count : 0;
	struct tr_mpi_req *el[64], **e = n <= 64 ? el : tr_malloc(sizeof(*e) * (size_t)n);
	MPI_Fint stl[16], *use = tr_mpi_f_status_ignore(status) ? stl : status;
	if (!e) {
		pmpi_waitany_(count, requests, index, status, ierr);
		uint64_t t1 = tr_time();
		F_END();
		return;
	}
	for (int i = 0; i < n; i++)
		e[i] = tr_mpi_req_take(PMPI_Request_f2c(requests[i]));
	pmpi_waitany_(count, requests, index, use, ierr);
	uint64_t t1 = tr_time();
	int k = (int)*index - 1;   /* Fortran indices start at 1 */
	for (int i = 0; i < n; i++) {
		if (*ierr == MPI_SUCCESS && i == k && e[i]) {
			MPI_Status st;
			PMPI_Status_f2c(use, &st);
			tr_mpi_req_complete(t, t1, e[i], &st, 1);
		} else {
			tr_mpi_req_release(e[i]);
		}
	}
	if (e != el)
		tr_free(e);
	F_END();
}

TR_F_NAMES(mpi_wait, MPI_WAIT, f_wait, (MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr),
	   (request, status, ierr))
TR_F_NAMES(mpi_test, MPI_TEST, f_test, (MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr),
	   (request, flag, status, ierr))
TR_F_NAMES(mpi_waitall, MPI_WAITALL, f_waitall,
	   (MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr),
	   (count, requests, statuses, ierr))
TR_F_NAMES(mpi_waitany, MPI_WAITANY, f_waitany,
	   (MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr),
	   (count, requests, index, status, ierr))

/* ---- MPI-IO: open, close, delete (the transfers and seeks are generated) ---------------- */

extern void pmpi_file_open_(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
			    MPI_Fint *ierr, size_t name_len);
TR_FSLOT(pmpi_file_open_)
#define pmpi_file_open_ TR_FSYM(pmpi_file_open_)
extern void pmpi_file_close_(MPI_Fint *fh, MPI_Fint *ierr);
TR_FSLOT(pmpi_file_close_)
#define pmpi_file_close_ TR_FSYM(pmpi_file_close_)
extern void pmpi_file_delete_(char *name, MPI_Fint *info, MPI_Fint *ierr, size_t name_len);
TR_FSLOT(pmpi_file_delete_)
#define pmpi_file_delete_ TR_FSYM(pmpi_file_delete_)

/* A Fortran string (blank-padded, not terminated) as a C string in buf. */
static const char *f_string(const char *s, size_t len, char *buf, size_t size)
{
	while (len > 0 && s[len - 1] == ' ')
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return buf;
}

static void f_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
			MPI_Fint *ierr, size_t name_len)
{
	F_BEGIN(MPI_File_open, pmpi_file_open_(comm, name, amode, info, fh, ierr, name_len));
	pmpi_file_open_(comm, name, amode, info, fh, ierr, name_len);
	uint64_t t1 = tr_time();
	char buf[PATH_MAX];
	if (*ierr == MPI_SUCCESS)
		t1 = tr_mpi_file_opened(t, t1, *ierr, PMPI_Comm_f2c(*comm), f_string(name, name_len, buf, sizeof(buf)),
					(int)*amode, PMPI_File_f2c(*fh));
	F_END();
}

static void f_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
	F_BEGIN(MPI_File_close, pmpi_file_close_(fh, ierr));
	struct tr_mpi_file *e = tr_mpi_file_get(PMPI_File_f2c(*fh));
	pmpi_file_close_(fh, ierr);
	uint64_t t1 = tr_time();
	tr_mpi_file_closed(t, t1, e, *ierr);
	F_END();
}

static void f_file_delete(char *name, MPI_Fint *info, MPI_Fint *ierr, size_t name_len)
{
	F_BEGIN(MPI_File_delete, pmpi_file_delete_(name, info, ierr, name_len));
	pmpi_file_delete_(name, info, ierr, name_len);
	uint64_t t1 = tr_time();
	char buf[PATH_MAX];
	if (*ierr == MPI_SUCCESS)
		tr_mpi_file_deleted(t, t1, f_string(name, name_len, buf, sizeof(buf)));
	F_END();
}

TR_F_NAMES(mpi_file_open, MPI_FILE_OPEN, f_file_open,
	   (MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh, MPI_Fint *ierr,
	    size_t name_len),
	   (comm, name, amode, info, fh, ierr, name_len))
TR_F_NAMES(mpi_file_close, MPI_FILE_CLOSE, f_file_close, (MPI_Fint *fh, MPI_Fint *ierr), (fh, ierr))
TR_F_NAMES(mpi_file_delete, MPI_FILE_DELETE, f_file_delete,
	   (char *name, MPI_Fint *info, MPI_Fint *ierr, size_t name_len), (name, info, ierr, name_len))
/* use mpi_f08 */
TR_EXPORT void ompi_file_open_f(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
				MPI_Fint *ierr, size_t name_len)
{
	f_file_open(comm, name, amode, info, fh, ierr, name_len);
}
TR_EXPORT void ompi_file_close_f(MPI_Fint *fh, MPI_Fint *ierr) { f_file_close(fh, ierr); }
TR_EXPORT void ompi_file_delete_f(char *name, MPI_Fint *info, MPI_Fint *ierr, size_t name_len)
{
	f_file_delete(name, info, ierr, name_len);
}
