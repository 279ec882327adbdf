/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_stdio.c - ISO C I/O interposition (stdio streams): IoParadigm
 * "ISO C I/O", one IoHandle per stream. fopen and freopen record
 * IoCreateHandle of the ISO C handle and of the POSIX handle of the
 * descriptor stdio opened inside (not recorded itself: the guard is held
 * during the real call), whose parent is the ISO C handle - OTF2's parent
 * is the higher-level paradigm that created and operates a handle, as
 * MPI-IO is for the POSIX handle opened inside MPI_File_open. fclose
 * records IoDestroyHandle of both. fdopen (and a stream first seen in a
 * transfer) gets an ISO C handle over a descriptor the program opened: no
 * parent link either way, the handles share the IoFile. Transfers (fread,
 * fwrite, fgets, fputs, puts, the printf family, fflush) are
 * IoOperationBegin/Complete on the ISO C handle with the bytes the program
 * asked for and got - the write()s stdio makes when its buffer fills are
 * inside libc and never seen, so only the outermost layer is recorded.
 * The printf family does not know its size before formatting: its
 * requested bytes are undefined, the returned bytes are the count printed.
 * fseek & co. are IoSeek (result: ftello). The streams stdin, stdout,
 * stderr are pre-created handles. Streams without a descriptor
 * (fmemopen, open_memstream, fopencookie) are regions only.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_int.h"

/* <stdio.h> may define these as macros (extern inlines). */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef getc
#undef putc
#undef getchar
#undef putchar
#undef getc_unlocked
#undef putc_unlocked
#undef fgetc_unlocked
#undef fputc_unlocked

int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *fp);
char *__fgets_chk(char *s, size_t slen, int n, FILE *fp);
int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap);

/* Stream transfers, one line each:
 *   X(return type, function, region, mode, stream, bytes requested,
 *     bytes returned (< 0: failed), (parameters), (arguments))
 * The expressions see the parameters and the real call's result r. Each
 * becomes an exported wrapper (IO_SXFER below) and a real function. */
#define IO_GETS_RESULT (r ? (int64_t)strlen(r) : (ferror_unlocked(fp) ? -1 : 0))
#define IO_LINE_RESULT (r >= 0 ? r : (ferror_unlocked(fp) ? -1 : 0))
#define IO_GETC_RESULT (r != EOF ? 1 : (ferror_unlocked(fp) ? -1 : 0))
#define IO_N1(n) ((n) > 0 ? (uint64_t)(n) - 1 : 0)
#define IO_FREAD_P (void *p, size_t sz, size_t n, FILE *fp), (p, sz, n, fp)
#define IO_FWRITE_P (const void *p, size_t sz, size_t n, FILE *fp), (p, sz, n, fp)
#define IO_FGETS_P (char *s, int n, FILE *fp), (s, n, fp)
#define IO_FPUTS_P (const char *s, FILE *fp), (s, fp)
#define IO_GETC_P (FILE *fp), (fp)
#define IO_PUTC_P (int c, FILE *fp), (c, fp)
#define IO_GETDELIM_P (char **l, size_t *n, int delim, FILE *fp), (l, n, delim, fp)
#define IO_STDIO_XFERS(X) \
	X(size_t, fread, fread, READ, fp, (uint64_t)sz * n, (int64_t)(r * sz), IO_FREAD_P) \
	X(size_t, fread_unlocked, fread_unlocked, READ, fp, (uint64_t)sz * n, (int64_t)(r * sz), IO_FREAD_P) \
	X(size_t, __fread_chk, fread, READ, fp, (uint64_t)sz * n, (int64_t)(r * sz), \
	  (void *p, size_t plen, size_t sz, size_t n, FILE *fp), (p, plen, sz, n, fp)) \
	X(size_t, fwrite, fwrite, WRITE, fp, (uint64_t)sz * n, (int64_t)(r * sz), IO_FWRITE_P) \
	X(size_t, fwrite_unlocked, fwrite_unlocked, WRITE, fp, (uint64_t)sz * n, (int64_t)(r * sz), IO_FWRITE_P) \
	X(char *, fgets, fgets, READ, fp, IO_N1(n), IO_GETS_RESULT, IO_FGETS_P) \
	X(char *, fgets_unlocked, fgets_unlocked, READ, fp, IO_N1(n), IO_GETS_RESULT, IO_FGETS_P) \
	X(char *, __fgets_chk, fgets, READ, fp, IO_N1(n), IO_GETS_RESULT, \
	  (char *s, size_t slen, int n, FILE *fp), (s, slen, n, fp)) \
	X(int, fputs, fputs, WRITE, fp, strlen(s), r >= 0 ? (int64_t)strlen(s) : -1, IO_FPUTS_P) \
	X(int, fputs_unlocked, fputs_unlocked, WRITE, fp, strlen(s), r >= 0 ? (int64_t)strlen(s) : -1, IO_FPUTS_P) \
	X(int, puts, puts, WRITE, stdout, strlen(s) + 1, r >= 0 ? (int64_t)strlen(s) + 1 : -1, \
	  (const char *s), (s)) \
	X(ssize_t, getline, getline, READ, fp, IO_UNDEF64, IO_LINE_RESULT, (char **l, size_t *n, FILE *fp), (l, n, fp)) \
	X(ssize_t, getdelim, getdelim, READ, fp, IO_UNDEF64, IO_LINE_RESULT, IO_GETDELIM_P) \
	X(ssize_t, __getdelim, getdelim, READ, fp, IO_UNDEF64, IO_LINE_RESULT, IO_GETDELIM_P)
/* The per-character calls: folded into counts by default (TRACER_IO_CHARS). */
#define IO_STDIO_CHARS(X) \
	X(int, fgetc, fgetc, READ, fp, 1, IO_GETC_RESULT, IO_GETC_P) \
	X(int, getc, getc, READ, fp, 1, IO_GETC_RESULT, IO_GETC_P) \
	X(int, fgetc_unlocked, fgetc_unlocked, READ, fp, 1, IO_GETC_RESULT, IO_GETC_P) \
	X(int, getc_unlocked, getc_unlocked, READ, fp, 1, IO_GETC_RESULT, IO_GETC_P) \
	X(int, getchar, getchar, READ, stdin, 1, IO_GETC_RESULT_STDIN, (void), ()) \
	X(int, fputc, fputc, WRITE, fp, 1, r != EOF ? 1 : -1, IO_PUTC_P) \
	X(int, putc, putc, WRITE, fp, 1, r != EOF ? 1 : -1, IO_PUTC_P) \
	X(int, fputc_unlocked, fputc_unlocked, WRITE, fp, 1, r != EOF ? 1 : -1, IO_PUTC_P) \
	X(int, putc_unlocked, putc_unlocked, WRITE, fp, 1, r != EOF ? 1 : -1, IO_PUTC_P) \
	X(int, putchar, putchar, WRITE, stdout, 1, r != EOF ? 1 : -1, (int c), (c))
#define IO_GETC_RESULT_STDIN (r != EOF ? 1 : (ferror_unlocked(stdin) ? -1 : 0))

/* Other stream functions with a real function. */
#define IO_STDIO_LIST(X) \
	X(fopen) X(fopen64) X(fdopen) X(fclose) X(vfprintf) X(__vfprintf_chk) X(fflush) X(fseek) \
	X(fseeko) X(fseeko64) X(freopen) X(freopen64) X(pclose) X(vdprintf) X(ungetc) X(vfscanf) \
	X(__isoc99_vfscanf)
#define IO_SX_DEF(ret_t, fn, ...) IO_REAL_DEF(fn)
IO_STDIO_LIST(IO_REAL_DEF)
IO_STDIO_XFERS(IO_SX_DEF)
IO_STDIO_CHARS(IO_SX_DEF)
/* fileno without touching errno (it sets EBADF for memory streams) and,
 * with glibc, without a call (the descriptor is a public field of FILE;
 * -1 for streams without one). */
static inline int io_fileno(FILE *fp)
{
	if (!fp)
		return -1;
#ifdef __GLIBC__
	return fp->_fileno;
#else
	int e = errno;
	int fd = fileno_unlocked(fp);
	errno = e;
	return fd;
#endif
}

/* A stream over a descriptor we saw no fopen/fdopen for: pre-created. */
static uint32_t io_isoc_adopt(int fd)
{
	uint32_t ph = io_posix_handle(fd);
	if (ph == IO_UNDEF32)
		return ph;
	int fl = tr_real.fcntl(fd, F_GETFL);
	uint32_t h = io_define_isoc(fd, atomic_load_explicit(&io_tab[fd].name, memory_order_relaxed),
				    IO_HANDLE_FLAG_PRE_CREATED);
	if (h != IO_UNDEF32 && fl >= 0)
		tr_def_io_pre_created_handle_state(h, (fl & O_ACCMODE) == O_WRONLY ? IO_ACC_WRITE_ONLY
						      : (fl & O_ACCMODE) == O_RDWR ? IO_ACC_READ_WRITE
						      : IO_ACC_READ_ONLY, io_status_flags(fl));
	return h;
}

static inline uint32_t io_isoc_handle(FILE *fp)
{
	int fd = io_fileno(fp);
	if ((unsigned)fd >= io_cap)
		return IO_UNDEF32;
	uint32_t v = atomic_load_explicit(&io_tab[fd].isoc, memory_order_acquire);
	if (tr_likely(v))
		return v - 1;
	return io_isoc_adopt(fd);
}

/* Begin a recorded stream operation; NULL: pass through. */
static inline struct tr_thread *io_sop(struct io_op *o, FILE *fp, enum io_rgn r, uint8_t mode, uint64_t req)
{
	struct tr_thread *t = io_get();
	if (t)
		io_op_begin(o, t, io_isoc_handle(fp), r, mode, req);
	return t;
}

/* fopen mode string -> OTF2 access mode, creation and status flags. */
static void io_fmode(const char *m, uint8_t *acc, uint32_t *cre, uint32_t *st)
{
	*acc = IO_ACC_READ_ONLY;
	*cre = *st = 0;
	if (!m)
		return;
	if (m[0] == 'w') {
		*acc = IO_ACC_WRITE_ONLY;
		*cre = IO_CRE_CREATE | IO_CRE_TRUNCATE;
	} else if (m[0] == 'a') {
		*acc = IO_ACC_WRITE_ONLY;
		*cre = IO_CRE_CREATE;
		*st = IO_ST_APPEND;
	}
	for (const char *p = m + 1; *p && *p != ','; p++) {
		if (*p == '+')
			*acc = IO_ACC_READ_WRITE;
		else if (*p == 'x')
			*cre |= IO_CRE_EXCLUSIVE;
		else if (*p == 'e')
			*st |= IO_ST_CLOEXEC;
	}
}

/* A stream opened on path over descriptor fd (fopen, freopen): its POSIX
 * and ISO C handles are defined and created. Returns the records' time. */
static uint64_t io_opened_stream(struct tr_thread *t, int fd, const char *path, const char *mode)
{
	char canon[PATH_MAX];
	uint8_t acc;
	uint32_t cre, st;
	io_forget(fd);
	io_canon(AT_FDCWD, path, canon, sizeof(canon));
	uint32_t name = tr_def_string(path);
	uint32_t ph;
	uint32_t ih = io_define_stream(fd, name, tr_def_io_file(canon, 0), &ph);
	io_fmode(mode, &acc, &cre, &st);
	uint64_t now = tr_time();
	io_rec_create(t, now, ih, acc, cre, st);   /* the parent first, as MPI_File_open */
	io_rec_create(t, now, ph, acc, cre, st);
	return now;
}

/* ---- open & close ---------------------------------------------------------------- */

static FILE *io_fopen(enum io_rgn r, const char *path, const char *mode)
{
	IO_INIT(fopen); IO_INIT(fopen64);
	struct tr_thread *t = io_get_meta();
	if (!t) {
		FILE *fp = r == IO_R_fopen ? real_fopen(path, mode) : real_fopen64(path, mode);
		if (fp)
			io_forget_mine(io_fileno(fp));
		return fp;
	}
	io_meta_begin(t, r);
	FILE *fp = r == IO_R_fopen ? real_fopen(path, mode) : real_fopen64(path, mode);
	int err = errno;
	uint64_t now = tr_time();
	int fd = io_fileno(fp);
	if (fd >= 0)
		now = io_opened_stream(t, fd, path, mode);
	io_meta_end(t, r, now, err);
	return fp;
}

TR_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return io_fopen(IO_R_fopen, path, mode);
}

TR_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return io_fopen(IO_R_fopen64, path, mode);
}

static FILE *io_fdopen(int fd, const char *mode)
{
	IO_INIT(fdopen);
	struct tr_thread *t = io_get_meta();
	if (!t)
		return real_fdopen(fd, mode);
	uint32_t ph = io_posix_handle(fd);
	io_meta_begin(t, IO_R_fdopen);
	FILE *fp = real_fdopen(fd, mode);
	int err = errno;
	uint64_t now = tr_time();
	if (fp && ph != IO_UNDEF32) {
		uint8_t acc;
		uint32_t cre, st;
		uint32_t ih = io_define_isoc(fd, atomic_load_explicit(&io_tab[fd].name, memory_order_relaxed), 0);
		io_fmode(mode, &acc, &cre, &st);
		now = tr_time();
		io_rec_create(t, now, ih, acc, 0, st);
	}
	io_meta_end(t, IO_R_fdopen, now, err);
	return fp;
}

TR_EXPORT FILE *fdopen(int fd, const char *mode)
{
	return io_fdopen(fd, mode);
}

static int io_known_isoc(int fd, uint32_t *ph)
{
	*ph = IO_UNDEF32;
	if (!io_tab || (unsigned)fd >= io_cap)
		return -1;
	uint32_t p = atomic_load_explicit(&io_tab[fd].posix, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&io_tab[fd].isoc, memory_order_acquire);
	*ph = p ? p - 1 : IO_UNDEF32;
	return i ? (int)(i - 1) : -1;
}

/* fclose, pclose: the stream and its descriptor are gone even when the
 * call fails: the ISO C and the POSIX handle end. */
static int io_close_stream(enum io_rgn rgn, FILE *fp, int (*real)(FILE *))
{
	struct tr_thread *t = io_get_meta();
	int fd = io_fileno(fp);
	if (!t) {
		int r = real(fp);
		if (fd >= 0)
			io_forget_mine(fd);
		return r;
	}
	uint32_t ph;
	int ih = io_known_isoc(fd, &ph);
	io_meta_begin(t, rgn);
	int r = real(fp);
	int err = errno;
	uint64_t now = tr_time();
	if (fd >= 0) {
		io_forget(fd);
		io_rec_destroy(t, now, ph);   /* the child first, as MPI_File_close */
		if (ih >= 0)
			io_rec_destroy(t, now, (uint32_t)ih);
	}
	io_meta_end(t, rgn, now, err);
	return r;
}

TR_EXPORT int fclose(FILE *fp)
{
	IO_INIT(fclose);
	return io_close_stream(IO_R_fclose, fp, real_fclose);
}

/* freopen: the stream's old handles end, new ones over the new file begin
 * (path NULL, a mode change: the stream is adopted again on next use). */
static FILE *io_freopen(enum io_rgn r, const char *path, const char *mode, FILE *old)
{
	IO_INIT(freopen); IO_INIT(freopen64);
#define IO_FREOPEN_CALL (r == IO_R_freopen ? real_freopen(path, mode, old) : real_freopen64(path, mode, old))
	struct tr_thread *t = io_get_meta();
	int ofd = io_fileno(old);
	if (!t) {
		FILE *fp = IO_FREOPEN_CALL;
		io_forget_mine(ofd);
		io_forget_mine(io_fileno(fp));
		return fp;
	}
	uint32_t oph;
	int oih = io_known_isoc(ofd, &oph);
	io_meta_begin(t, r);
	FILE *fp = IO_FREOPEN_CALL;
	int err = errno;
	uint64_t now = tr_time();
	int fd = io_fileno(fp);
	if (ofd >= 0) {
		io_forget(ofd);
		io_rec_destroy(t, now, oph);
		if (oih >= 0)
			io_rec_destroy(t, now, (uint32_t)oih);
	}
	if (fd >= 0) {
		io_forget(fd);
		if (path)
			now = io_opened_stream(t, fd, path, mode);
	}
	io_meta_end(t, r, now, err);
	return fp;
#undef IO_FREOPEN_CALL
}

TR_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	return io_freopen(IO_R_freopen, path, mode, fp);
}

TR_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	return io_freopen(IO_R_freopen64, path, mode, fp);
}

/* pclose: the pipe's descriptor is gone (its handles, if adopted, end). */
TR_EXPORT int pclose(FILE *fp)
{
	IO_INIT(pclose);
	return io_close_stream(IO_R_pclose, fp, real_pclose);
}

/* ---- transfers --------------------------------------------------------------------- */

/* One exported stream transfer (a line of IO_STDIO_XFERS): the real call
 * between IoOperationBegin and IoOperationComplete on the ISO C handle of
 * the stream. */
#define IO_SXFER(ret_t, fn, rgn, mode, fp, request, result, ...) \
	IO_SXFER_(ret_t, fn, rgn, mode, fp, request, result, __VA_ARGS__)
#define IO_SXFER_BODY(ret_t, fn, rgn, mode, fp, request, result, args) \
	struct io_op o;                                                  \
	if (!io_sop(&o, fp, IO_R_##rgn, IO_OP_##mode, request))          \
		return real_##fn args;                                   \
	ret_t r = real_##fn args;                                        \
	int err = errno;                                                 \
	io_op_end(&o, result, err);                                      \
	return r;
#define IO_SXFER_(ret_t, fn, rgn, mode, fp, request, result, params, args)           \
	TR_EXPORT ret_t fn params                                                    \
	{                                                                            \
		IO_INIT(fn);                                                         \
		IO_SXFER_BODY(ret_t, fn, rgn, mode, fp, request, result, args)       \
	}
IO_STDIO_XFERS(IO_SXFER)

/* A per-character call (a line of IO_STDIO_CHARS): with TRACER_IO_CHARS=fold
 * (the default) no record, a count of the thread's (io_chars.c); with all,
 * recorded like the other transfers. */
#define IO_SCHAR(ret_t, fn, rgn, mode, fp, request, result, ...) \
	IO_SCHAR_(ret_t, fn, rgn, mode, fp, request, result, __VA_ARGS__)
#define IO_SCHAR_(ret_t, fn, rgn, mode, fp, request, result, params, args)     \
	TR_EXPORT ret_t fn params                                              \
	{                                                                      \
		IO_INIT(fn);                                                   \
		if (tr_likely(io_chars_fold)) {                                \
			struct tr_thread *t = io_get();                        \
			if (!t)                                                \
				return real_##fn args;                         \
			*t->errnop = t->saved_errno;                           \
			ret_t r = real_##fn args;                              \
			int err = *t->errnop;                                  \
			io_chars_add(t, io_isoc_handle(fp), IO_OP_##mode, result); \
			t->saved_errno = err;                                  \
			tr_thread_put(t);                                      \
			return r;                                              \
		}                                                              \
		IO_SXFER_BODY(ret_t, fn, rgn, mode, fp, request, result, args) \
	}
IO_STDIO_CHARS(IO_SCHAR)

/* The printf family (chk < 0: plain, else the _FORTIFY_SOURCE flag). */
static int io_vfprintf(enum io_rgn rgn, FILE *fp, int chk, const char *fmt, va_list ap)
{
	IO_INIT(vfprintf); IO_INIT(__vfprintf_chk);
	struct io_op o;
	if (!io_sop(&o, fp, rgn, IO_OP_WRITE, IO_UNDEF64))
		return chk < 0 ? real_vfprintf(fp, fmt, ap) : real___vfprintf_chk(fp, chk, fmt, ap);
	int r = chk < 0 ? real_vfprintf(fp, fmt, ap) : real___vfprintf_chk(fp, chk, fmt, ap);
	io_op_end(&o, r, errno);
	return r;
}

TR_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return io_vfprintf(IO_R_vfprintf, fp, -1, fmt, ap);
}

TR_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return io_vfprintf(IO_R_vprintf, stdout, -1, fmt, ap);
}

TR_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = io_vfprintf(IO_R_fprintf, fp, -1, fmt, ap);
	va_end(ap);
	return r;
}

TR_EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = io_vfprintf(IO_R_printf, stdout, -1, fmt, ap);
	va_end(ap);
	return r;
}

TR_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return io_vfprintf(IO_R_vfprintf, fp, flag, fmt, ap);
}

TR_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return io_vfprintf(IO_R_vprintf, stdout, flag, fmt, ap);
}

TR_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = io_vfprintf(IO_R_fprintf, fp, flag, fmt, ap);
	va_end(ap);
	return r;
}

TR_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = io_vfprintf(IO_R_printf, stdout, flag, fmt, ap);
	va_end(ap);
	return r;
}

/* dprintf/vdprintf: formatted output to a descriptor (POSIX handle). */
static int io_vdprintf(enum io_rgn rgn, int fd, const char *fmt, va_list ap)
{
	IO_INIT(vdprintf);
	struct tr_thread *t = io_get();
	if (!t)
		return real_vdprintf(fd, fmt, ap);
	struct io_op o;
	io_op_begin(&o, t, io_posix_handle(fd), rgn, IO_OP_WRITE, IO_UNDEF64);
	int r = real_vdprintf(fd, fmt, ap);
	io_op_end(&o, r, errno);
	return r;
}

TR_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	return io_vdprintf(IO_R_vdprintf, fd, fmt, ap);
}

TR_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = io_vdprintf(IO_R_dprintf, fd, fmt, ap);
	va_end(ap);
	return r;
}

/* ungetc: the region only (nothing is transferred). */
TR_EXPORT int ungetc(int c, FILE *fp)
{
	IO_INIT(ungetc);
	struct tr_thread *t = io_get();
	if (!t)
		return real_ungetc(c, fp);
	uint64_t now = io_meta_begin(t, IO_R_ungetc);
	int r = real_ungetc(c, fp);
	io_meta_end(t, IO_R_ungetc, now, errno);
	return r;
}

/* The scanf family: bytes requested undefined, bytes returned = the
 * stream's position after minus before (ftello; undefined where the
 * stream cannot tell, e.g. a pipe, or on a read error). iso: the C99
 * entry points (__isoc99_*, what <stdio.h> makes of fscanf & co.). */
static int io_vfscanf(enum io_rgn rgn, FILE *fp, int iso, const char *fmt, va_list ap)
{
	IO_INIT(vfscanf); IO_INIT(__isoc99_vfscanf);
#define IO_SCANF_CALL (iso ? real___isoc99_vfscanf(fp, fmt, ap) : real_vfscanf(fp, fmt, ap))
	struct io_op o;
	if (!io_sop(&o, fp, rgn, IO_OP_READ, IO_UNDEF64))
		return IO_SCANF_CALL;
	off64_t before = ftello64(fp);
	errno = o.t->saved_errno;
	int r = IO_SCANF_CALL;
	int err = errno;
	off64_t after = ftello64(fp);
	io_op_end(&o, (r == EOF && ferror_unlocked(fp)) || before < 0 || after < before ? -1 : after - before, err);
	return r;
#undef IO_SCANF_CALL
}

/* <stdio.h> may redirect fscanf & co. to their __isoc99_ names: the
 * exported symbols are named explicitly (asm labels). */
#define IO_SCANF_WRAPPERS(prefix, iso)                                                     \
	TR_EXPORT int io_vfscanf_##iso(FILE *, const char *, va_list) __asm__(#prefix "vfscanf"); \
	TR_EXPORT int io_vscanf_##iso(const char *, va_list) __asm__(#prefix "vscanf");            \
	TR_EXPORT int io_fscanf_##iso(FILE *, const char *, ...) __asm__(#prefix "fscanf");        \
	TR_EXPORT int io_scanf_##iso(const char *, ...) __asm__(#prefix "scanf");                  \
	int io_vfscanf_##iso(FILE *fp, const char *fmt, va_list ap)                              \
	{                                                                                        \
		return io_vfscanf(IO_R_vfscanf, fp, iso, fmt, ap);                               \
	}                                                                                        \
	int io_vscanf_##iso(const char *fmt, va_list ap)                                         \
	{                                                                                        \
		return io_vfscanf(IO_R_vscanf, stdin, iso, fmt, ap);                             \
	}                                                                                        \
	int io_fscanf_##iso(FILE *fp, const char *fmt, ...)                                      \
	{                                                                                        \
		va_list ap;                                                                      \
		va_start(ap, fmt);                                                               \
		int r = io_vfscanf(IO_R_fscanf, fp, iso, fmt, ap);                               \
		va_end(ap);                                                                      \
		return r;                                                                        \
	}                                                                                        \
	int io_scanf_##iso(const char *fmt, ...)                                                 \
	{                                                                                        \
		va_list ap;                                                                      \
		va_start(ap, fmt);                                                               \
		int r = io_vfscanf(IO_R_scanf, stdin, iso, fmt, ap);                             \
		va_end(ap);                                                                      \
		return r;                                                                        \
	}
IO_SCANF_WRAPPERS(, 0)
IO_SCANF_WRAPPERS(__isoc99_, 1)

static int io_fflush(FILE *fp)
{
	IO_INIT(fflush);
	struct io_op o;
	if (!io_sop(&o, fp, IO_R_fflush, IO_OP_FLUSH, 0))   /* fflush(NULL): region only */
		return real_fflush(fp);
	int r = real_fflush(fp);
	io_op_end(&o, r == 0 ? 0 : -1, errno);
	return r;
}

TR_EXPORT int fflush(FILE *fp)
{
	return io_fflush(fp);
}

/* ---- seek ------------------------------------------------------------------------- */

static int io_fseek(enum io_rgn rgn, FILE *fp, off64_t off, int whence)
{
	IO_INIT(fseek); IO_INIT(fseeko); IO_INIT(fseeko64);
#define IO_FSEEK_CALL (rgn == IO_R_fseek ? real_fseek(fp, (long)off, whence)   \
		       : rgn == IO_R_fseeko ? real_fseeko(fp, (off_t)off, whence) \
		       : real_fseeko64(fp, off, whence))
	struct tr_thread *t = io_get();
	if (!t)
		return IO_FSEEK_CALL;
	uint32_t h = io_isoc_handle(fp);
	io_meta_begin(t, rgn);
	int r = IO_FSEEK_CALL;
	int err = errno;
	uint64_t now = tr_time();
	if (r == 0 && h != IO_UNDEF32) {
		off64_t pos = ftello64(fp);
		uint8_t w = whence == SEEK_CUR ? IO_SEEK_CUR : whence == SEEK_END ? IO_SEEK_END : IO_SEEK_SET;
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_io_seek(t->w, NULL, now, h, off, w,
							   pos >= 0 ? (uint64_t)pos : IO_UNDEF64));
			tr_rec_end(t);
		}
	}
	io_meta_end(t, rgn, now, err);
	return r;
#undef IO_FSEEK_CALL
}

TR_EXPORT int fseek(FILE *fp, long off, int whence)
{
	return io_fseek(IO_R_fseek, fp, off, whence);
}

TR_EXPORT int fseeko(FILE *fp, off_t off, int whence)
{
	return io_fseek(IO_R_fseeko, fp, off, whence);
}

TR_EXPORT int fseeko64(FILE *fp, off64_t off, int whence)
{
	return io_fseek(IO_R_fseeko64, fp, off, whence);
}
