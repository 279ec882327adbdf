/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io.c - POSIX I/O interposition (TRACER_IO=on, the default): OTF2 Io
 * records over an IoParadigm "POSIX I/O".
 *
 * open/openat/creat define an IoRegularFile (IoDirectory) named by the
 * canonical absolute path (io_canon) and an IoHandle named by the path as
 * given, and record IoCreateHandle; close records IoDestroyHandle;
 * dup/dup2/dup3/fcntl(F_DUPFD*) IoDuplicateHandle; fcntl(F_SETFL)
 * IoChangeStatusFlags; lseek IoSeek; unlink/unlinkat/rename IoDeleteFile;
 * read/write/pread/pwrite/readv/writev/preadv/pwritev/fsync/fdatasync
 * IoOperationBegin/IoOperationComplete (requested and returned bytes, one
 * matching id per operation of the location). Every call is also a region
 * (role FILE_IO or FILE_IO_METADATA) so its time shows. Descriptors the
 * tracer did not see opened (stdin/stdout/stderr, inherited, opened while
 * not recording) become pre-created handles on first use
 * (IoPreCreatedHandleState).
 *
 * Pass-through (the real call, nothing else): I/O tracing off, before
 * init and from shut-down on, in a thread without a location, and while
 * the thread is inside the tracer (guard held - also the whole time of a
 * recorded call, so the calls a wrapped function makes internally, and a
 * signal handler running during one, are never recorded). The tracer's own
 * file I/O never reaches these wrappers: it calls the C library's
 * functions through tr_real (preload/core/tr_real.h) and otf2w_sys.
 *
 * Hot path (read/write & co.): one table load, no lock, no allocation;
 * errno and every result are those of the real call.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io_int.h"

struct io_ent *io_tab;
uint32_t io_cap;
int io_on;
uint32_t io_rgn[IO_R_N];
struct tr_call_code io_code[IO_R_N];
uint8_t io_rgn_filtered[IO_R_N];
TR_TLS uint64_t io_tls_opid;
pid_t io_pid;
_Atomic uint32_t io_hiwater;

/* ---- real functions ------------------------------------------------------------ */

#define IO_REAL_LIST(X) \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64) X(close) X(dup) X(dup2) \
	X(dup3) X(fcntl) X(read) X(write) X(pread) X(pread64) X(pwrite) X(pwrite64) X(readv) \
	X(writev) X(preadv) X(preadv64) X(pwritev) X(pwritev64) X(fsync) \
	X(fdatasync) X(close_range) X(closefrom)
IO_REAL_LIST(IO_REAL_DEF)
static const struct tr_real_sym io_syms[] = { IO_REAL_LIST(IO_REAL_SYM) };

/* Every table of the I/O wrappers (each entry looked up once; a symbol the
 * C library lacks stays NULL: the program could not have called it). */
void io_real_init(void)
{
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return;
	IO_REAL_RESOLVE(io_syms);
	io_async_init();   /* mmap & co.: resolved before any signal handler may call them */
	io_meta_init();
	io_copy_init();
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

void io_real_one(void **slot, const char *name)
{
	io_real_init();
	if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
		const struct tr_real_sym s = { slot, name, NULL };
		tr_real_resolve(&s, 1);
	}
}

/* ---- helpers ----------------------------------------------------------------------- */

uint32_t io_status_flags(int fl)
{
	uint32_t s = 0;
	if (fl & O_CLOEXEC) s |= IO_ST_CLOEXEC;
	if (fl & O_APPEND) s |= IO_ST_APPEND;
	if (fl & O_NONBLOCK) s |= IO_ST_NONBLOCK;
	if (fl & O_ASYNC) s |= IO_ST_ASYNC;
	if ((fl & O_SYNC) == O_SYNC) s |= IO_ST_SYNC;
	else if (fl & O_DSYNC) s |= IO_ST_DSYNC;
	if (fl & O_DIRECT) s |= IO_ST_DIRECT;
	if (fl & O_NOATIME) s |= IO_ST_NOATIME;
	return s;
}

static uint32_t io_creation_flags(int fl)
{
	uint32_t c = 0;
	if (fl & O_CREAT) c |= IO_CRE_CREATE;
	if (fl & O_TRUNC) c |= IO_CRE_TRUNCATE;
	if ((fl & O_TMPFILE) == O_TMPFILE) c |= IO_CRE_TMPFILE;
	else if (fl & O_DIRECTORY) c |= IO_CRE_DIRECTORY;
	if (fl & O_EXCL) c |= IO_CRE_EXCLUSIVE;
	if (fl & O_NOCTTY) c |= IO_CRE_NOCTTY;
	if (fl & O_NOFOLLOW) c |= IO_CRE_NOFOLLOW;
	if (fl & O_PATH) c |= IO_CRE_PATH;
	if (fl & O_LARGEFILE) c |= IO_CRE_LARGEFILE;
	return c;
}

static uint8_t io_access_mode(int fl)
{
	switch (fl & O_ACCMODE) {
	case O_WRONLY: return IO_ACC_WRITE_ONLY;
	case O_RDWR: return IO_ACC_READ_WRITE;
	default: return IO_ACC_READ_ONLY;
	}
}

static void proc_fd_path(int fd, char *buf, size_t size)
{
	char link[40];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t k = readlink(link, buf, size - 1);
	buf[k > 0 ? k : 0] = 0;
}

void io_canon(int dirfd, const char *path, char *out, size_t size)
{
	char tmp[2 * PATH_MAX + 2];
	size_t n = 0, o = 0;
	if (!path)
		path = "";
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(tmp, PATH_MAX))
				tmp[0] = 0;
		} else {
			proc_fd_path(dirfd, tmp, PATH_MAX);
		}
		n = strlen(tmp);
		tmp[n++] = '/';
	}
	size_t pl = strnlen(path, PATH_MAX);
	memcpy(tmp + n, path, pl);
	tmp[n + pl] = 0;
	/* components: "" and "." dropped, ".." removes the previous one */
	for (char *p = tmp; *p;) {
		while (*p == '/')
			p++;
		char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else if (o + 1 + len < size) {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = e;
	}
	if (o == 0 && size > 1)
		out[o++] = '/';
	out[o] = 0;
}

static uint64_t io_unique(int fd)
{
	return ((uint64_t)(uint32_t)getpid() << 32) | (uint32_t)fd;
}

uint32_t io_define_posix(int fd, uint32_t name, uint32_t file, uint32_t flags, uint32_t parent)
{
	if (!io_tab || (unsigned)fd >= io_cap || file == IO_UNDEF32 || name == IO_UNDEF32)
		return IO_UNDEF32;
	uint32_t h = tr_def_io_handle(name, file, IO_PARADIGM_POSIX, flags, IO_UNDEF32, parent,
				      io_unique(fd));
	if (h == IO_UNDEF32)
		return h;
	struct io_ent *e = &io_tab[fd];
	atomic_store_explicit(&e->isoc, 0, memory_order_relaxed);
	atomic_store_explicit(&e->file, file, memory_order_relaxed);
	atomic_store_explicit(&e->name, name, memory_order_relaxed);
	atomic_store_explicit(&e->posix, h + 1, memory_order_release);
	uint32_t hw = atomic_load_explicit(&io_hiwater, memory_order_relaxed);
	while (hw < (uint32_t)fd + 1 &&
	       !atomic_compare_exchange_weak_explicit(&io_hiwater, &hw, (uint32_t)fd + 1, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return h;
}

uint32_t io_define_isoc(int fd, uint32_t name, uint32_t flags)
{
	if (io_posix_handle(fd) == IO_UNDEF32)
		return IO_UNDEF32;
	uint32_t file = atomic_load_explicit(&io_tab[fd].file, memory_order_relaxed);
	uint32_t h = tr_def_io_handle(name, file, IO_PARADIGM_ISOC, flags, IO_UNDEF32, IO_UNDEF32, io_unique(fd));
	if (h != IO_UNDEF32)
		atomic_store_explicit(&io_tab[fd].isoc, h + 1, memory_order_release);
	return h;
}

uint32_t io_define_stream(int fd, uint32_t name, uint32_t file, uint32_t *posix)
{
	*posix = IO_UNDEF32;
	if (!io_tab || (unsigned)fd >= io_cap || file == IO_UNDEF32 || name == IO_UNDEF32)
		return IO_UNDEF32;
	/* the ISO C handle first: the POSIX one refers to it (OTF2: a parent
	 * "created and operated" the handle, the MPI-IO layer does the same) */
	uint32_t h = tr_def_io_handle(name, file, IO_PARADIGM_ISOC, 0, IO_UNDEF32, IO_UNDEF32, io_unique(fd));
	if (h == IO_UNDEF32)
		return h;
	*posix = io_define_posix(fd, name, file, 0, h);
	if (*posix != IO_UNDEF32)
		atomic_store_explicit(&io_tab[fd].isoc, h + 1, memory_order_release);
	return h;
}

/* A descriptor opened before we saw it: a pre-created handle named `name`
 * (NULL: the path the kernel gives). */
static uint32_t io_adopt_named(int fd, const char *name)
{
	if (!io_tab || (unsigned)fd >= io_cap)
		return IO_UNDEF32;
	IO_INIT(fcntl);
	int fl = real_fcntl(fd, F_GETFL);
	if (fl < 0)
		return IO_UNDEF32;
	int fdfl = real_fcntl(fd, F_GETFD);
	char path[PATH_MAX];
	struct stat st;
	proc_fd_path(fd, path, sizeof(path));
	if (!path[0])
		snprintf(path, sizeof(path), "fd %d", fd);
	int dir = tr_real.fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	uint32_t file = tr_def_io_file(path, dir);
	uint32_t h = io_define_posix(fd, tr_def_string(name ? name : path), file, IO_HANDLE_FLAG_PRE_CREATED,
				     IO_UNDEF32);
	if (h != IO_UNDEF32)
		tr_def_io_pre_created_handle_state(h, io_access_mode(fl),
						   io_status_flags(fl) | (fdfl > 0 && (fdfl & FD_CLOEXEC) ? IO_ST_CLOEXEC : 0));
	return h;
}

/* A descriptor no wrapper saw opened, at its first use: inherited (0, 1
 * and 2 named stdin, stdout and stderr, as the streams are). One the
 * program never uses gets no definition: a short process was spared the
 * three readlink of /proc/self/fd and eight fcntl and fstat calls. */
uint32_t io_adopt(int fd)
{
	static const char *const std_names[3] = { "stdin", "stdout", "stderr" };
	return io_adopt_named(fd, fd >= 0 && fd < 3 ? std_names[fd] : NULL);
}

void io_rec_create(struct tr_thread *t, uint64_t time, uint32_t h, uint8_t mode, uint32_t cflags,
		   uint32_t sflags)
{
	if (h != IO_UNDEF32 && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_create_handle(t->w, NULL, time, h, mode, cflags, sflags));
		tr_rec_end(t);
	}
}

void io_rec_destroy(struct tr_thread *t, uint64_t time, uint32_t h)
{
	if (h != IO_UNDEF32 && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_destroy_handle(t->w, NULL, time, h));
		tr_rec_end(t);
	}
}

void io_rec_delete(struct tr_thread *t, uint64_t time, uint32_t file)
{
	if (file != IO_UNDEF32 && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_delete_file(t->w, NULL, time, IO_PARADIGM_POSIX, file));
		tr_rec_end(t);
	}
}

/* Handle known for fd (no adoption: close/dup2 targets). */
static uint32_t io_known(int fd)
{
	if (!io_tab || (unsigned)fd >= io_cap)
		return IO_UNDEF32;
	uint32_t v = atomic_load_explicit(&io_tab[fd].posix, memory_order_acquire);
	return v ? v - 1 : IO_UNDEF32;
}

/* ---- open & co. ---------------------------------------------------------------- */

static int io_call_open(enum io_rgn r, int dirfd, const char *path, int flags, mode_t mode)
{
	switch (r) {
	case IO_R_open64: IO_INIT(open64); return real_open64(path, flags, mode);
	case IO_R_openat: IO_INIT(openat); return real_openat(dirfd, path, flags, mode);
	case IO_R_openat64: IO_INIT(openat64); return real_openat64(dirfd, path, flags, mode);
	case IO_R_creat: IO_INIT(creat); return real_creat(path, mode);
	case IO_R_creat64: IO_INIT(creat64); return real_creat64(path, mode);
	default: IO_INIT(open); return real_open(path, flags, mode);
	}
}

static int io_open(enum io_rgn r, int dirfd, const char *path, int flags, mode_t mode)
{
	struct tr_thread *t = io_get_meta();
	if (!t) {
		int fd = io_call_open(r, dirfd, path, flags, mode);
		if (fd >= 0)
			io_forget_mine(fd);
		return fd;
	}
	io_meta_begin(t, r);
	int fd = io_call_open(r, dirfd, path, flags, mode);
	int err = errno;
	uint64_t now = tr_time();
	if (fd >= 0) {
		char canon[PATH_MAX];
		struct stat st;
		io_forget(fd);
		io_canon(dirfd, path, canon, sizeof(canon));
		int dir = (flags & O_DIRECTORY) || (tr_real.fstat(fd, &st) == 0 && S_ISDIR(st.st_mode));
		uint32_t h = io_define_posix(fd, tr_def_string(path), tr_def_io_file(canon, dir), 0, IO_UNDEF32);
		if (r == IO_R_creat || r == IO_R_creat64)
			flags = O_CREAT | O_WRONLY | O_TRUNC;
		now = tr_time();
		io_rec_create(t, now, h, io_access_mode(flags), io_creation_flags(flags), io_status_flags(flags));
	}
	io_meta_end(t, r, now, err);
	return fd;
}

static mode_t io_mode_arg(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

#define IO_OPEN_WRAPPER(fn, dirfd, ...)                                           \
	{                                                                         \
		va_list ap;                                                       \
		va_start(ap, flags);                                              \
		mode_t mode = io_mode_arg(flags, ap);                             \
		va_end(ap);                                                       \
		return io_open(IO_R_##fn, dirfd, path, flags, mode);              \
	}
TR_EXPORT int open(const char *path, int flags, ...) IO_OPEN_WRAPPER(open, AT_FDCWD)
TR_EXPORT int open64(const char *path, int flags, ...) IO_OPEN_WRAPPER(open64, AT_FDCWD)
TR_EXPORT int openat(int dirfd, const char *path, int flags, ...) IO_OPEN_WRAPPER(openat, dirfd)
TR_EXPORT int openat64(int dirfd, const char *path, int flags, ...) IO_OPEN_WRAPPER(openat64, dirfd)

TR_EXPORT int creat(const char *path, mode_t mode)
{
	return io_open(IO_R_creat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

TR_EXPORT int creat64(const char *path, mode_t mode)
{
	return io_open(IO_R_creat64, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* _FORTIFY_SOURCE entry points (no mode argument). */
TR_EXPORT int __open_2(const char *path, int flags)
{
	return io_open(IO_R_open, AT_FDCWD, path, flags, 0);
}
TR_EXPORT int __open64_2(const char *path, int flags)
{
	return io_open(IO_R_open64, AT_FDCWD, path, flags, 0);
}
TR_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return io_open(IO_R_openat, dirfd, path, flags, 0);
}
TR_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return io_open(IO_R_openat64, dirfd, path, flags, 0);
}

TR_EXPORT int close(int fd)
{
	IO_INIT(close);
	struct tr_thread *t = io_get_meta();
	if (!t) {
		int r = real_close(fd);
		if (r == 0 || errno != EBADF)
			io_forget_mine(fd);
		return r;
	}
	uint32_t h = io_known(fd);
	io_meta_begin(t, IO_R_close);
	int r = real_close(fd);
	int err = errno;
	uint64_t now = tr_time();
	if (r == 0 || err != EBADF) {   /* closed (EINTR/EIO: closed as well) */
		io_forget(fd);
		io_rec_destroy(t, now, h);
	}
	io_meta_end(t, IO_R_close, now, err);
	return r;
}

/* close_range/closefrom: every known descriptor in [first, last] is gone
 * (CLOSE_RANGE_CLOEXEC: only marked close-on-exec, nothing closes). */
static void io_closed_range(struct tr_thread *t, unsigned first, unsigned last)
{
	uint32_t hw = atomic_load_explicit(&io_hiwater, memory_order_relaxed);
	if (!io_tab || first >= hw)
		return;
	if (last >= hw)
		last = hw - 1;
	uint64_t now = t ? tr_time() : 0;
	for (unsigned fd = first; fd <= last; fd++) {
		uint32_t h = atomic_load_explicit(&io_tab[fd].posix, memory_order_relaxed);
		uint32_t i = atomic_load_explicit(&io_tab[fd].isoc, memory_order_relaxed);
		if (!h && !i)
			continue;
		io_forget((int)fd);
		if (t && i)
			io_rec_destroy(t, now, i - 1);
		if (t && h)
			io_rec_destroy(t, now, h - 1);
	}
}

/* kind 0: close_range(first, last, flags), 1: closefrom(first). */
static int io_close_many(int kind, unsigned first, unsigned last, int flags)
{
	IO_INIT(close_range); IO_INIT(closefrom);
#define IO_CLOSE_MANY (kind ? (real_closefrom((int)first), 0) : real_close_range(first, last, flags))
	int closes = !(flags & CLOSE_RANGE_CLOEXEC) && (kind == 0 || (int)first >= 0);
	struct tr_thread *t = io_get_meta();
	if (!t) {
		int r = IO_CLOSE_MANY;
		if (r == 0 && closes && io_tab && getpid() == io_pid)
			io_closed_range(NULL, first, last);
		return r;
	}
	enum io_rgn rgn = kind ? IO_R_closefrom : IO_R_close_range;
	io_meta_begin(t, rgn);
	int r = IO_CLOSE_MANY;
	int err = errno;
	if (r == 0 && closes)
		io_closed_range(t, first, last);
	io_meta_end(t, rgn, tr_time(), err);
	return r;
#undef IO_CLOSE_MANY
}

TR_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	return io_close_many(0, first, last, flags);
}

TR_EXPORT void closefrom(int first)
{
	io_close_many(1, (unsigned)first, ~0u, 0);
}

/* ---- dup & fcntl ------------------------------------------------------------- */

/* After a successful duplication of oldfd into newfd (recording). */
static void io_dup_done(struct tr_thread *t, int oldfd, int newfd, uint32_t oldh, int replaces)
{
	uint64_t now = tr_time();
	if (replaces && io_tab && (unsigned)newfd < io_cap) {
		/* dup2/dup3 closed what newfd was: its stream's handle and its own */
		uint32_t i = atomic_load_explicit(&io_tab[newfd].isoc, memory_order_relaxed);
		if (i)
			io_rec_destroy(t, now, i - 1);
		io_rec_destroy(t, now, io_known(newfd));
	}
	io_forget(newfd);
	if (oldh == IO_UNDEF32)
		return;
	uint32_t nh = io_define_posix(newfd, atomic_load_explicit(&io_tab[oldfd].name, memory_order_relaxed),
				      atomic_load_explicit(&io_tab[oldfd].file, memory_order_relaxed), 0, IO_UNDEF32);
	int fl = real_fcntl(newfd, F_GETFL), fdfl = real_fcntl(newfd, F_GETFD);
	uint32_t st = (fl >= 0 ? io_status_flags(fl) : 0) | (fdfl > 0 && (fdfl & FD_CLOEXEC) ? IO_ST_CLOEXEC : 0);
	if (nh != IO_UNDEF32 && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_duplicate_handle(t->w, NULL, tr_time(), oldh, nh, st));
		tr_rec_end(t);
	}
}

static int io_dup(enum io_rgn r, int oldfd, int newfd, int dup3flags, int fcntl_cmd)
{
	IO_INIT(dup); IO_INIT(dup2); IO_INIT(dup3); IO_INIT(fcntl);
#define IO_DUP_CALL (r == IO_R_dup ? real_dup(oldfd) : r == IO_R_dup2 ? real_dup2(oldfd, newfd) \
		     : r == IO_R_dup3 ? real_dup3(oldfd, newfd, dup3flags)                \
		     : real_fcntl(oldfd, fcntl_cmd, newfd))
	struct tr_thread *t = io_get_meta();
	int ret;
	if (!t) {
		ret = IO_DUP_CALL;
		if (ret >= 0 && ret != oldfd)
			io_forget_mine(ret);
		return ret;
	}
	uint32_t oldh = io_posix_handle(oldfd);
	int replaces = (r == IO_R_dup2 || r == IO_R_dup3) && newfd != oldfd;
	io_meta_begin(t, r);
	ret = IO_DUP_CALL;
#undef IO_DUP_CALL
	int err = errno;
	if (ret >= 0 && ret != oldfd)
		io_dup_done(t, oldfd, ret, oldh, replaces);
	io_meta_end(t, r, tr_time(), err);
	return ret;
}

TR_EXPORT int dup(int fd)
{
	return io_dup(IO_R_dup, fd, -1, 0, 0);
}

TR_EXPORT int dup2(int oldfd, int newfd)
{
	return io_dup(IO_R_dup2, oldfd, newfd, 0, 0);
}

TR_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return io_dup(IO_R_dup3, oldfd, newfd, flags, 0);
}

TR_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return io_dup(IO_R_fcntl, fd, (int)(intptr_t)arg, 0, cmd);
	IO_INIT(fcntl);
	struct tr_thread *t = io_get_meta();
	if (!t)
		return real_fcntl(fd, cmd, arg);
	uint32_t h = cmd == F_SETFL ? io_posix_handle(fd) : IO_UNDEF32;
	io_meta_begin(t, IO_R_fcntl);
	int ret = real_fcntl(fd, cmd, arg);
	int err = errno;
	uint64_t now = tr_time();
	if (ret >= 0 && h != IO_UNDEF32) {
		int fl = real_fcntl(fd, F_GETFL), fdfl = real_fcntl(fd, F_GETFD);
		uint32_t st = (fl >= 0 ? io_status_flags(fl) : 0) |
			      (fdfl > 0 && (fdfl & FD_CLOEXEC) ? IO_ST_CLOEXEC : 0);
		if (tr_rec_begin(t)) {
			tr_evt_status(t, otf2w_evt_io_change_status_flags(t->w, NULL, now, h, st));
			tr_rec_end(t);
		}
	}
	io_meta_end(t, IO_R_fcntl, now, err);
	return ret;
}

/* The general way of io_op_begin and io_op_end (io_int.h): the records
 * one by one (a chunk switch, no handle, tr_evt_general). */
void io_op_begin_slow(struct io_op *o, uint64_t now, uint8_t mode, uint64_t request)
{
	struct tr_thread *t = o->t;

	o->id = 0;
	tr_enter(t, now, o->rgn);
	if (o->h != IO_UNDEF32 && !io_rgn_filtered[o->r] && tr_rec_begin(t)) {
		o->id = ++io_tls_opid;
		tr_evt_status(t, otf2w_evt_io_operation_begin(t->w, NULL, now, o->h, mode, 0, request, o->id));
		tr_rec_end(t);
	}
}

void io_op_end_slow(struct io_op *o, uint64_t now, uint64_t bytes)
{
	struct tr_thread *t = o->t;

	if (o->id && tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_io_operation_complete(t->w, NULL, now, o->h, bytes, o->id));
		tr_rec_end(t);
	}
	tr_leave(t, now, o->rgn);
}

/* ---- data transfer ------------------------------------------------------------- */

static uint64_t io_iov_bytes(const struct iovec *iov, int n)
{
	uint64_t s = 0;
	for (int i = 0; iov && i < n; i++)
		s += iov[i].iov_len;
	return s;
}

/* One wrapper per transfer call: the real call between Begin and Complete. */
#define IO_XFER(ret_t, fn, mode, request, params, args)                            \
	static ret_t io_##fn params                                                 \
	{                                                                           \
		IO_INIT(fn);                                                        \
		struct tr_thread *t = io_get();                                     \
		if (!t)                                                             \
			return real_##fn args;                                      \
		struct io_op o;                                                     \
		io_op_begin(&o, t, io_posix_handle(fd), IO_R_##fn, mode, request); \
		ret_t r = real_##fn args;                                           \
		io_op_end(&o, (int64_t)r, *t->errnop);                            \
		return r;                                                           \
	}                                                                           \
	TR_EXPORT ret_t fn params                                                   \
	{                                                                           \
		return io_##fn args;                                                \
	}
IO_XFER(ssize_t, read, IO_OP_READ, n, (int fd, void *b, size_t n), (fd, b, n))
IO_XFER(ssize_t, write, IO_OP_WRITE, n, (int fd, const void *b, size_t n), (fd, b, n))
IO_XFER(ssize_t, pread, IO_OP_READ, n, (int fd, void *b, size_t n, off_t off), (fd, b, n, off))
IO_XFER(ssize_t, pread64, IO_OP_READ, n, (int fd, void *b, size_t n, off64_t off), (fd, b, n, off))
IO_XFER(ssize_t, pwrite, IO_OP_WRITE, n, (int fd, const void *b, size_t n, off_t off), (fd, b, n, off))
IO_XFER(ssize_t, pwrite64, IO_OP_WRITE, n, (int fd, const void *b, size_t n, off64_t off), (fd, b, n, off))
IO_XFER(ssize_t, readv, IO_OP_READ, io_iov_bytes(v, c), (int fd, const struct iovec *v, int c), (fd, v, c))
IO_XFER(ssize_t, writev, IO_OP_WRITE, io_iov_bytes(v, c), (int fd, const struct iovec *v, int c), (fd, v, c))
IO_XFER(ssize_t, preadv, IO_OP_READ, io_iov_bytes(v, c),
	(int fd, const struct iovec *v, int c, off_t off), (fd, v, c, off))
IO_XFER(ssize_t, preadv64, IO_OP_READ, io_iov_bytes(v, c),
	(int fd, const struct iovec *v, int c, off64_t off), (fd, v, c, off))
IO_XFER(ssize_t, pwritev, IO_OP_WRITE, io_iov_bytes(v, c),
	(int fd, const struct iovec *v, int c, off_t off), (fd, v, c, off))
IO_XFER(ssize_t, pwritev64, IO_OP_WRITE, io_iov_bytes(v, c),
	(int fd, const struct iovec *v, int c, off64_t off), (fd, v, c, off))
IO_XFER(int, fsync, IO_OP_FLUSH, 0, (int fd), (fd))
IO_XFER(int, fdatasync, IO_OP_FLUSH, 0, (int fd), (fd))

/* _FORTIFY_SOURCE entry points. */
TR_EXPORT ssize_t __read_chk(int fd, void *b, size_t n, size_t blen)
{
	if (n > blen)
		__builtin_trap();
	return io_read(fd, b, n);
}
TR_EXPORT ssize_t __pread_chk(int fd, void *b, size_t n, off_t o, size_t blen)
{
	if (n > blen)
		__builtin_trap();
	return io_pread(fd, b, n, o);
}
TR_EXPORT ssize_t __pread64_chk(int fd, void *b, size_t n, off64_t o, size_t blen)
{
	if (n > blen)
		__builtin_trap();
	return io_pread64(fd, b, n, o);
}

/* ---- module ------------------------------------------------------------------------ */

uint32_t io_region_define(enum io_rgn r)
{
#define IO_RGN_ROW(n, role) { #n, IO_ROLE_##role },
	static const struct {
		const char *name;
		uint8_t role;
	} def[IO_R_N] = { IO_REGIONS(IO_RGN_ROW) };
	/* the registry gives a region defined before its id again: two
	 * threads here at once store the same values; errno kept (it may
	 * run after the real call, before the Leave takes its errno) */
	int saved = errno;
	uint32_t id = tr_def_region(def[r].name, def[r].name, "", def[r].role, OTF2W_PARADIGM_NONE,
				    OTF2W_REGION_FLAG_NONE, "", 0, 0);
	io_rgn_filtered[r] = (uint8_t)tr_region_filtered(id);
	tr_call_code(&io_code[r], id);
	__atomic_store_n(&io_rgn[r], id + 1, __ATOMIC_RELEASE);
	errno = saved;
	return id;
}

/* TRACER_IO (on, off) and TRACER_IO_CHARS (fold, all: io_chars.c) */
static int io_setting = 1;
int io_chars_all;

static const char *set_io_chars(const char *v)
{
	return tr_cfg_choice(v, &io_chars_all, "fold", 0, "all", 1, "fold, all");
}

static const struct tr_setting io_settings[] = {
	TR_SETTING_ON_OFF("TRACER_IO", &io_setting, "on"),
	TR_SETTING("TRACER_IO_CHARS", set_io_chars, "fold"),
};
TR_SETTINGS_TABLE(io_table, "io", io_settings);

static void io_init(void)
{
	io_real_init();
	if (!io_setting)
		return;   /* TRACER_IO=off: every wrapper passes through */
	struct rlimit rl;
	uint64_t cap = 1u << 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > cap)
		cap = rl.rlim_max;
	if (cap > (1u << 20))
		cap = 1u << 20;
	void *p = tr_mem_space(cap * sizeof(struct io_ent));
	if (!p) {
		tr_log_error("io: cannot map the descriptor table (%s); I/O tracing disabled", strerror(errno));
		return;
	}
	io_tab = p;
	io_cap = (uint32_t)cap;
	io_pid = getpid();
	char ver[32];
	snprintf(ver, sizeof(ver), "%ld", sysconf(_SC_VERSION));
	tr_def_io_paradigm(IO_PARADIGM_POSIX, "POSIX", "POSIX I/O", 0 /* SERIAL */, 1 /* OS */, ver);
	tr_def_io_paradigm(IO_PARADIGM_ISOC, "ISOC", "ISO C I/O", 0 /* SERIAL */, 0, gnu_get_libc_version());
	io_chars_init();
	__atomic_store_n(&io_on, 1, __ATOMIC_RELEASE);
}

/* MPI_Finalize: every region and the character folding's definitions,
 * for the calls made after it. */
static void io_defs_freeze(void)
{
	if (!__atomic_load_n(&io_on, __ATOMIC_ACQUIRE))
		return;
	for (int r = 0; r < IO_R_N; r++)
		(void)io_region((enum io_rgn)r);
	io_chars_defs_freeze();
}

static void io_fork_child(void)
{
	io_pid = getpid();   /* same descriptors, same table */
	io_chars_fork_child();
}

static const struct tr_module io_module = {
	.name = "io",
	.init = io_init,
	.fork_child = io_fork_child,
	.thread_ending = io_chars_thread_ending,
	.defs_freeze = io_defs_freeze,
};

__attribute__((constructor(212))) static void io_ctor(void)
{
	io_real_init();
	tr_module_register(&io_module);
}
