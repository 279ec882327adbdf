/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_int.h - internals shared by the I/O wrappers (wrappers/io/io.c POSIX,
 * wrappers/io/io_stdio.c ISO C, wrappers/io/io_async.c mappings and POSIX aio,
 * wrappers/io/io_meta.c truncate, allocation, advice and stat as regions).
 * Not a public header.
 *
 * Descriptor table: one entry per descriptor number (mmap'ed once at init,
 * virtual, pages touched on use), holding the POSIX and the ISO C handle
 * (id + 1, 0 = none) of that descriptor. Entries are atomics: read without
 * a lock, written with plain stores (the descriptor number belongs to one
 * open file at a time; the kernel serialises open/close).
 */
#ifndef TR_IO_INT_H
#define TR_IO_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include "tracer.h"

/* IoParadigm ids (fixed: the same in every process, not mapped). */
enum { IO_PARADIGM_POSIX = 0, IO_PARADIGM_ISOC = 1, IO_PARADIGM_MPIIO = 2 /* wrappers/mpi/mpi_io.c */ };

/* OTF2 enumeration values (OTF2 3.0 facts). */
enum { IO_ACC_READ_ONLY = 0, IO_ACC_WRITE_ONLY = 1, IO_ACC_READ_WRITE = 2 };
enum { IO_OP_READ = 0, IO_OP_WRITE = 1, IO_OP_FLUSH = 2 };
enum {
	IO_CRE_CREATE = 1 << 0, IO_CRE_TRUNCATE = 1 << 1, IO_CRE_DIRECTORY = 1 << 2,
	IO_CRE_EXCLUSIVE = 1 << 3, IO_CRE_NOCTTY = 1 << 4, IO_CRE_NOFOLLOW = 1 << 5,
	IO_CRE_PATH = 1 << 6, IO_CRE_TMPFILE = 1 << 7, IO_CRE_LARGEFILE = 1 << 8,
	IO_CRE_NO_SEEK = 1 << 9, IO_CRE_UNIQUE = 1 << 10,
};
enum {
	IO_ST_CLOEXEC = 1 << 0, IO_ST_APPEND = 1 << 1, IO_ST_NONBLOCK = 1 << 2, IO_ST_ASYNC = 1 << 3,
	IO_ST_SYNC = 1 << 4, IO_ST_DSYNC = 1 << 5, IO_ST_DIRECT = 1 << 6, IO_ST_NOATIME = 1 << 7,
	IO_ST_DELETE_ON_CLOSE = 1 << 8,
};
enum { IO_OPFL_NON_BLOCKING = 1 << 0, IO_OPFL_COLLECTIVE = 1 << 1 };
enum { IO_HANDLE_FLAG_PRE_CREATED = 1 };
enum { IO_SEEK_SET = 0, IO_SEEK_CUR = 1, IO_SEEK_END = 2, IO_SEEK_DATA = 3, IO_SEEK_HOLE = 4 };
#define IO_UNDEF32 OTF2W_UNDEFINED_UINT32
#define IO_UNDEF64 OTF2W_UNDEFINED_UINT64

/* Regions: X(c name, region role) - one per wrapped function. */
#define IO_ROLE_D OTF2W_ROLE_FILE_IO
#define IO_ROLE_M OTF2W_ROLE_FILE_IO_METADATA
#define IO_REGIONS(X) \
	X(open, M) X(open64, M) X(openat, M) X(openat64, M) X(creat, M) X(creat64, M) \
	X(close, M) X(close_range, M) X(closefrom, M) X(dup, M) X(dup2, M) X(dup3, M) X(fcntl, M) \
	X(read, D) X(write, D) X(pread, D) X(pread64, D) X(pwrite, D) X(pwrite64, D) \
	X(readv, D) X(writev, D) X(preadv, D) X(preadv64, D) X(pwritev, D) X(pwritev64, D) \
	X(lseek, M) X(lseek64, M) X(fsync, D) X(fdatasync, D) \
	X(copy_file_range, D) X(sendfile, D) X(sendfile64, D) X(splice, D) \
	X(unlink, M) X(unlinkat, M) X(rename, M) \
	X(fopen, M) X(fopen64, M) X(fdopen, M) X(freopen, M) X(freopen64, M) X(fclose, M) X(pclose, M) X(fread, D) X(fwrite, D) \
	X(fread_unlocked, D) X(fwrite_unlocked, D) X(fgets_unlocked, D) X(fputs_unlocked, D) \
	X(fgets, D) X(fputs, D) X(puts, D) X(getline, D) X(getdelim, D) X(fprintf, D) X(vfprintf, D) X(printf, D) \
	X(vprintf, D) X(dprintf, D) X(vdprintf, D) X(fflush, D) X(fseek, M) X(fseeko, M) X(fseeko64, M) \
	X(fgetc, D) X(getc, D) X(fgetc_unlocked, D) X(getc_unlocked, D) X(getchar, D) X(fputc, D) X(putc, D) \
	X(fputc_unlocked, D) X(putc_unlocked, D) X(putchar, D) X(ungetc, M) X(fscanf, D) X(scanf, D) \
	X(vfscanf, D) X(vscanf, D) \
	X(mmap, M) X(mmap64, M) X(munmap, M) X(msync, D) X(aio_read, D) X(aio_write, D) X(aio_fsync, D) \
	X(aio_error, M) X(aio_return, M) X(aio_suspend, D) X(aio_cancel, M) X(lio_listio, D) \
	X(truncate, M) X(truncate64, M) X(ftruncate, M) X(ftruncate64, M) X(fallocate, M) X(fallocate64, M) \
	X(posix_fallocate, M) X(posix_fallocate64, M) X(posix_fadvise, M) X(posix_fadvise64, M) \
	X(stat, M) X(stat64, M) X(lstat, M) X(lstat64, M) X(fstat, M) X(fstat64, M) X(fstatat, M) \
	X(fstatat64, M) X(statx, M)
#define IO_ENUM(n, r) IO_R_##n,
enum io_rgn { IO_REGIONS(IO_ENUM) IO_R_N };
#undef IO_ENUM

struct io_ent {
	_Atomic uint32_t posix;   /* POSIX handle + 1 */
	_Atomic uint32_t isoc;    /* ISO C handle + 1 (FILE over this descriptor) */
	_Atomic uint32_t file;    /* IoFile of the POSIX handle */
	_Atomic uint32_t name;    /* String id of the POSIX handle's name */
};
extern struct io_ent *io_tab;
extern uint32_t io_cap;
extern int io_on;
/* Region ids + 1, 0 until the region's first call: a process defines
 * only the I/O regions it calls (a short process wrote and unified about
 * a hundred it never used). io_region(r) defines it then (io.c); the
 * region's io_code and io_rgn_filtered are set before io_rgn. */
extern uint32_t io_rgn[IO_R_N];
extern uint8_t io_rgn_filtered[IO_R_N];   /* TRACER_FILTER excludes the region: no operation records */
uint32_t io_region_define(enum io_rgn r);
static inline uint32_t io_region(enum io_rgn r)
{
	uint32_t v = __atomic_load_n(&io_rgn[r], __ATOMIC_ACQUIRE);
	return tr_likely(v) ? v - 1 : io_region_define(r);
}
extern TR_TLS uint64_t io_tls_opid;
extern pid_t io_pid;              /* the traced process (vfork children differ) */
extern _Atomic uint32_t io_hiwater;   /* highest descriptor entered + 1 */

/* The calling thread's state when this call is recorded, else NULL (call
 * the real function untraced): I/O tracing on, the thread has a location
 * (none is created here), tracing active, not inside the tracer. */
static inline struct tr_thread *io_get(void)
{
	if (tr_unlikely(!io_on) || !tr_tls_self || !tr_is_active())
		return NULL;
	return tr_thread_get();
}
/* The same for calls that open, close or duplicate descriptors: also NULL
 * in a vfork child (it shares our memory but has its own descriptors: it
 * must neither record nor change the table). One getpid: not hot. */
static inline struct tr_thread *io_get_meta(void)
{
	struct tr_thread *t = io_get();
	if (t && tr_unlikely(getpid() != io_pid)) {
		tr_thread_put(t);
		return NULL;
	}
	return t;
}

/* POSIX handle of fd (IO_UNDEF32: none). A descriptor the tracer has not
 * seen opened (inherited, opened untraced) is adopted on first use as a
 * pre-created handle (slow path, once per descriptor). Guard held. */
uint32_t io_adopt(int fd);
static inline uint32_t io_posix_handle(int fd)
{
	if (tr_unlikely((unsigned)fd >= io_cap))
		return IO_UNDEF32;
	uint32_t v = atomic_load_explicit(&io_tab[fd].posix, memory_order_acquire);
	if (tr_likely(v))
		return v - 1;
	return io_adopt(fd);
}
/* Forget descriptor fd (closed): also on untraced paths (one store). */
static inline void io_forget(int fd)
{
	if (io_tab && (unsigned)fd < io_cap &&
	    (atomic_load_explicit(&io_tab[fd].posix, memory_order_relaxed) ||
	     atomic_load_explicit(&io_tab[fd].isoc, memory_order_relaxed))) {
		atomic_store_explicit(&io_tab[fd].posix, 0, memory_order_release);
		atomic_store_explicit(&io_tab[fd].isoc, 0, memory_order_release);
	}
}

/* io_forget on an untraced path (not in a vfork child). */
static inline void io_forget_mine(int fd)
{
	if (io_tab && getpid() == io_pid)
		io_forget(fd);
}

/* A recorded operation: Enter, IoOperationBegin ... IoOperationComplete, Leave.
 * Always inlined into the wrapper (bench/io: a call less each, and errno's
 * address - a call into libc from a shared object - is computed once).
 * The hot path is two record groups (tr_span_enter, tr_span_leave: Enter
 * and Leave encoded once per region in io_code); everything else (no
 * handle, a chunk switch, tr_evt_general) is io_op_begin_slow and
 * io_op_end_slow, which write the same records one by one. A TRACER_FILTER
 * sets tr_evt_general, so the hot path never meets a filtered region. */
#define IO_INLINE static inline __attribute__((always_inline))
struct io_op {
	struct tr_thread *t;
	uint32_t h;        /* handle or IO_UNDEF32 */
	uint32_t rgn;
	uint32_t r;        /* enum io_rgn */
	uint64_t id;       /* matching id; 0: no Begin written */
};
extern struct tr_call_code io_code[IO_R_N];   /* io_rgn's Enter/Leave encoded */

/* io_chars.c: per-character stream calls folded into counts (TRACER_IO_CHARS). */
struct io_chars {
	uint32_t h;            /* the ISO C handle counted */
	uint32_t calls;        /* 0: nothing to write */
	uint8_t write;         /* the direction counted: 0 reads, 1 writes */
	uint64_t bytes;
	otf2w_attr_list *al;   /* the handle attribute (the thread's, made at its first record) */
};
extern int io_chars_fold;
extern int io_chars_all;   /* TRACER_IO_CHARS=all (io.c: the family's settings) */
extern TR_TLS struct io_chars io_chars_tls;
void io_chars_init(void);
void io_chars_defs_freeze(void);   /* MPI_Finalize: the folding's definitions, for calls after it */
void io_chars_flush(struct tr_thread *t, uint64_t time);
void io_chars_add_slow(struct tr_thread *t, uint32_t h, int write);
void io_chars_thread_ending(struct tr_thread *t);
void io_chars_fork_child(void);
/* A folded call on handle h (IO_UNDEF32: not counted) that returned
 * result bytes (< 0: failed). Guard held. */
static inline void io_chars_add(struct tr_thread *t, uint32_t h, int mode, int64_t result)
{
	int write = mode == IO_OP_WRITE;
	if (tr_unlikely(h == IO_UNDEF32))
		return;
	if (tr_unlikely(h != io_chars_tls.h || write != io_chars_tls.write || !io_chars_tls.calls))
		io_chars_add_slow(t, h, write);
	io_chars_tls.calls++;
	if (result > 0)
		io_chars_tls.bytes += (uint64_t)result;
}
void io_op_begin_slow(struct io_op *o, uint64_t now, uint8_t mode, uint64_t request);
void io_op_end_slow(struct io_op *o, uint64_t now, uint64_t bytes);
IO_INLINE void io_op_begin(struct io_op *o, struct tr_thread *t, uint32_t h, enum io_rgn r,
			       uint8_t mode, uint64_t request)
{
	uint64_t now = tr_time();
	uint8_t *p;

	if (tr_unlikely(io_chars_tls.calls != 0))
		io_chars_flush(t, now);   /* the folded characters before it */
	o->t = t;
	o->h = h;
	o->rgn = io_region(r);
	o->r = r;
	if (tr_likely(h != IO_UNDEF32) &&
	    (p = tr_span_enter(t, now, &io_code[r], o->rgn, OTF2W_EVT_IO_OPERATION_BEGIN_MAX)) != NULL) {
		o->id = ++io_tls_opid;
		tr_fast_end(t, otf2w_evt_put_io_operation_begin(p, h, mode, 0, request, o->id), 2);
	} else {
		io_op_begin_slow(o, now, mode, request);
	}
	*t->errnop = t->saved_errno;   /* the real call starts with the program's errno */
}
/* result < 0: failed (bytesResult undefined). err: errno after the real call. */
IO_INLINE void io_op_end(struct io_op *o, int64_t result, int err)
{
	struct tr_thread *t = o->t;
	uint64_t now = tr_time();
	uint64_t bytes = result < 0 ? IO_UNDEF64 : (uint64_t)result;
	uint8_t *p;

	if (tr_likely(o->id != 0) &&
	    (p = tr_span_leave_begin(t, now, OTF2W_EVT_IO_OPERATION_COMPLETE_MAX)) != NULL)
		tr_span_leave(t, otf2w_evt_put_io_operation_complete(p, o->h, bytes, o->id), &io_code[o->r], 1);
	else
		io_op_end_slow(o, now, bytes);
	t->saved_errno = err;
	tr_thread_put(t);
}

/* A metadata call as a region only (handle records written by the caller
 * between io_meta_begin and io_meta_end, at time *now). */
static inline uint64_t io_meta_begin(struct tr_thread *t, enum io_rgn r)
{
	uint64_t now = tr_time();
	if (tr_unlikely(io_chars_tls.calls != 0))
		io_chars_flush(t, now);
	tr_enter(t, now, io_region(r));
	errno = t->saved_errno;
	return now;
}
static inline void io_meta_end(struct tr_thread *t, enum io_rgn r, uint64_t now, int err)
{
	tr_leave(t, now, io_rgn[r] - 1);   /* (defined by io_meta_begin) */
	t->saved_errno = err;
	tr_thread_put(t);
}

/* Define the POSIX handle of descriptor fd (name: String id) over file and
 * enter it in the table; flags: IO_HANDLE_FLAG_*; parent: the handle of the
 * higher-level paradigm that created the descriptor (IO_UNDEF32: none).
 * Returns the handle or IO_UNDEF32. Guard held (registry lock, allocation:
 * not hot). */
uint32_t io_define_posix(int fd, uint32_t name, uint32_t file, uint32_t flags, uint32_t parent);
/* An ISO C handle over descriptor fd, which the stream did not create
 * (fdopen, a stream adopted on first use): no parent either way, the two
 * handles share the IoFile. */
uint32_t io_define_isoc(int fd, uint32_t name, uint32_t flags);
/* A stream that opened descriptor fd itself (fopen, freopen): its ISO C
 * handle, then the POSIX handle with the ISO C handle as parent (OTF2:
 * "created and operated by an higher-level I/O paradigm"), both entered
 * in the table. Returns the ISO C handle, *posix the POSIX one. */
uint32_t io_define_stream(int fd, uint32_t name, uint32_t file, uint32_t *posix);

/* Handle records (guard held; no-op when the location does not record). */
void io_rec_create(struct tr_thread *t, uint64_t time, uint32_t h, uint8_t mode, uint32_t cflags,
		   uint32_t sflags);
void io_rec_destroy(struct tr_thread *t, uint64_t time, uint32_t h);
/* IoDeleteFile of file (IO_UNDEF32: none): unlink, rename (io_meta.c) */
void io_rec_delete(struct tr_thread *t, uint64_t time, uint32_t file);

/* Canonical absolute path of `path` (relative to dirfd, AT_FDCWD: the
 * working directory): "." / ".." / "//" removed lexically. No allocation. */
void io_canon(int dirfd, const char *path, char *out, size_t size);
/* OTF2 status flags of open(2) flags. */
uint32_t io_status_flags(int oflags);

/* Real functions: `static __typeof__(fn) *real_fn` per name of a file's
 * list (IO_REAL_DEF), and a table of them (IO_REAL_SYM) that the file's
 * init function hands to the core's resolver tr_real_resolve. io_real_init
 * (constructor) resolves the tables of io.c, io_async.c, io_meta.c and
 * io_copy.c (system calls a signal handler may make, so never looked up
 * in one); the streams of io_stdio.c (not async-signal-safe) are resolved
 * one by one at their first call (a short process calls few: 41 lookups
 * less at its start). A call that arrives before the constructor, or the
 * first call of a stream function (IO_INIT: the slot is still NULL),
 * resolves its own slot (and the constructor's tables, once). */
#define IO_REAL_DEF(fn) static __typeof__(fn) *real_##fn;
#define IO_REAL_SYM(fn) TR_REAL_SYM(fn),
#define IO_REAL_RESOLVE(tab) ((void)tr_real_resolve(tab, sizeof(tab) / sizeof((tab)[0])))
#define IO_INIT(fn)                                                  \
	do {                                                         \
		if (tr_unlikely(!real_##fn))                         \
			io_real_one((void **)&real_##fn, #fn);       \
	} while (0)

void io_real_init(void);
void io_real_one(void **slot, const char *name);
void io_async_init(void);
void io_meta_init(void);
void io_copy_init(void);
#endif /* TR_IO_INT_H */
