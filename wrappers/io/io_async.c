/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_async.c - file I/O that outlives its call: memory mappings of files
 * (mmap, munmap, msync) and POSIX asynchronous I/O (aio_*), on the POSIX
 * I/O paradigm of wrappers/io/io.c.
 *
 * Mappings: mmap of a descriptor (not MAP_ANONYMOUS) defines an IoHandle
 * of its own for the mapping - same file and name as the descriptor's
 * handle, parent = the descriptor's handle - and records IoCreateHandle
 * (access mode: READ_ONLY, or READ_WRITE for a shared writable mapping);
 * munmap of the whole mapping records IoDestroyHandle; msync is a FLUSH
 * operation on it. The page faults that move the data are not seen.
 * Anonymous mappings and munmap of memory the tracer did not record are
 * passed through without a region, and so is every mmap/munmap of a vfork
 * child (it shares the parent's memory, hence its table).
 *
 * Asynchronous I/O: aio_read/aio_write record IoOperationBegin (flag
 * NON_BLOCKING, bytes requested) and IoOperationIssued; aio_error answering
 * EINPROGRESS records IoOperationTest; aio_return IoOperationComplete (the
 * bytes transferred); aio_cancel IoOperationCancelled; aio_fsync a FLUSH
 * operation the same way. The operation is found again by its aiocb. Its
 * records are written by the thread that issued it: a test or completion
 * made by another thread is a region only. lio_listio: each LIO_READ or
 * LIO_WRITE entry the same way as aio_read/aio_write. aio_suspend is a
 * region only.
 *
 * Both tables are fixed arrays (no allocation), entries claimed with a
 * compare-and-swap (no lock); a full table leaves the call a region only.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <aio.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io_int.h"

#define IO_ASYNC_LIST(X) \
	X(mmap) X(mmap64) X(munmap) X(msync) X(aio_read) X(aio_write) X(aio_error) X(aio_return) \
	X(aio_suspend) X(aio_cancel) X(aio_fsync) X(lio_listio)
IO_ASYNC_LIST(IO_REAL_DEF)
static const struct tr_real_sym io_async_syms[] = { IO_ASYNC_LIST(IO_REAL_SYM) };

/* ---- pointer-keyed table (mappings by address, operations by aiocb) ---- */

#define IO_SLOTS 512
struct io_slot {
	_Atomic uintptr_t key;    /* 0: free */
	_Atomic int claimed;
	size_t len;               /* mapping length */
	uint32_t h;               /* handle */
	int fd;                   /* aio: the descriptor */
	uint64_t id;              /* aio: matching id */
	struct tr_thread *t;      /* aio: the issuing thread */
};
struct io_ptab {
	struct io_slot s[IO_SLOTS];
	_Atomic int n;            /* entries in use (0: nothing to look up) */
	_Atomic int probe;        /* longest probe an entry was put at (slots freed
				   * in a run do not end a look-up: no tombstones) */
};
static struct io_ptab io_maps TR_BIG_BSS, io_aios TR_BIG_BSS;

static size_t io_slot_of(uintptr_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 55) & (IO_SLOTS - 1);
}

static struct io_slot *io_ptab_put(struct io_ptab *tab, uintptr_t key)
{
	for (size_t i = 0, j = io_slot_of(key); i < IO_SLOTS; i++, j = (j + 1) & (IO_SLOTS - 1)) {
		int z = 0;
		if (atomic_compare_exchange_strong(&tab->s[j].claimed, &z, 1)) {
			atomic_fetch_add(&tab->n, 1);
			int p = atomic_load(&tab->probe);
			while (p < (int)i && !atomic_compare_exchange_weak(&tab->probe, &p, (int)i))
				;
			return &tab->s[j];   /* caller fills it, then io_ptab_publish */
		}
	}
	return NULL;
}

static void io_ptab_publish(struct io_slot *s, uintptr_t key)
{
	atomic_store_explicit(&s->key, key, memory_order_release);
}

static struct io_slot *io_ptab_get(struct io_ptab *tab, uintptr_t key)
{
	if (!atomic_load_explicit(&tab->n, memory_order_relaxed))
		return NULL;
	size_t last = (size_t)atomic_load_explicit(&tab->probe, memory_order_relaxed);
	for (size_t i = 0, j = io_slot_of(key); i <= last; i++, j = (j + 1) & (IO_SLOTS - 1))
		if (atomic_load_explicit(&tab->s[j].key, memory_order_acquire) == key)
			return &tab->s[j];
	return NULL;
}

/* Take s out (1: this caller did, 0: another one was first). */
static int io_ptab_drop(struct io_ptab *tab, struct io_slot *s, uintptr_t key)
{
	uintptr_t k = key;
	if (!atomic_compare_exchange_strong(&s->key, &k, 0))
		return 0;
	atomic_store_explicit(&s->claimed, 0, memory_order_release);
	atomic_fetch_sub(&tab->n, 1);
	return 1;
}

/* ---- mappings ---------------------------------------------------------------- */

static void *io_mmap(enum io_rgn rgn, void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	IO_INIT(mmap); IO_INIT(mmap64);
#define IO_MMAP_CALL (rgn == IO_R_mmap ? real_mmap(addr, len, prot, flags, fd, (off_t)off) \
		      : real_mmap64(addr, len, prot, flags, fd, off))
	struct tr_thread *t = (flags & MAP_ANONYMOUS) || fd < 0 ? NULL : io_get_meta();
	if (!t)
		return IO_MMAP_CALL;
	uint32_t ph = io_posix_handle(fd);
	io_meta_begin(t, rgn);
	void *p = IO_MMAP_CALL;
	int err = errno;
	uint64_t now = tr_time();
	if (p != MAP_FAILED && ph != IO_UNDEF32) {
		uint32_t h = tr_def_io_handle(atomic_load_explicit(&io_tab[fd].name, memory_order_relaxed),
					      atomic_load_explicit(&io_tab[fd].file, memory_order_relaxed),
					      IO_PARADIGM_POSIX, 0, IO_UNDEF32, ph,
					      (1ull << 63) | (uint64_t)(uintptr_t)p);
		struct io_slot *s = h != IO_UNDEF32 ? io_ptab_put(&io_maps, (uintptr_t)p) : NULL;
		if (s) {
			s->len = len;
			s->h = h;
			io_ptab_publish(s, (uintptr_t)p);
			int rw = (prot & PROT_WRITE) && (flags & MAP_TYPE) != MAP_PRIVATE;
			io_rec_create(t, now, h, rw ? IO_ACC_READ_WRITE : IO_ACC_READ_ONLY, 0, 0);
		}
	}
	io_meta_end(t, rgn, now, err);
	return p;
#undef IO_MMAP_CALL
}

TR_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return io_mmap(IO_R_mmap, addr, len, prot, flags, fd, off);
}

TR_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return io_mmap(IO_R_mmap64, addr, len, prot, flags, fd, off);
}

/* Recorded mappings that lie within [addr, addr + len). */
static int io_maps_within(uintptr_t a, size_t len, struct io_slot **out, int max)
{
	int n = 0;
	if (!atomic_load_explicit(&io_maps.n, memory_order_relaxed))
		return 0;
	for (size_t j = 0; j < IO_SLOTS && n < max; j++) {
		uintptr_t k = atomic_load_explicit(&io_maps.s[j].key, memory_order_acquire);
		if (k && k >= a && k - a < len && io_maps.s[j].len <= len - (k - a))
			out[n++] = &io_maps.s[j];
	}
	return n;
}

TR_EXPORT int munmap(void *addr, size_t len)
{
	IO_INIT(munmap);
	struct io_slot *gone[16];
	int n = io_maps_within((uintptr_t)addr, len, gone, 16);
	struct tr_thread *t = n ? io_get_meta() : NULL;
	if (!t)
		return real_munmap(addr, len);
	io_meta_begin(t, IO_R_munmap);
	int r = real_munmap(addr, len);
	int err = errno;
	uint64_t now = tr_time();
	if (r == 0) {
		for (int i = 0; i < n; i++) {
			uint32_t h = gone[i]->h;
			if (io_ptab_drop(&io_maps, gone[i], atomic_load(&gone[i]->key)))
				io_rec_destroy(t, now, h);
		}
	}
	io_meta_end(t, IO_R_munmap, now, err);
	return r;
}

/* msync: a FLUSH operation on the mapping that holds addr. */
TR_EXPORT int msync(void *addr, size_t len, int flags)
{
	IO_INIT(msync);
	struct io_slot *s = io_ptab_get(&io_maps, (uintptr_t)addr);
	struct tr_thread *t = s ? io_get() : NULL;
	if (!t)
		return real_msync(addr, len, flags);
	struct io_op o;
	io_op_begin(&o, t, s->h, IO_R_msync, IO_OP_FLUSH, 0);
	int r = real_msync(addr, len, flags);
	io_op_end(&o, r == 0 ? 0 : -1, errno);
	return r;
}

/* ---- asynchronous I/O ---------------------------------------------------------- */

static void io_aio_rec(struct tr_thread *t, uint64_t now, int kind, uint32_t h, uint64_t id, uint64_t bytes)
{
	if (!tr_rec_begin(t))
		return;
	otf2w_evt_writer *w = t->w;
	switch (kind) {
	case 'I': tr_evt_status(t, otf2w_evt_io_operation_issued(w, NULL, now, h, id)); break;
	case 'T': tr_evt_status(t, otf2w_evt_io_operation_test(w, NULL, now, h, id)); break;
	case 'X': tr_evt_status(t, otf2w_evt_io_operation_cancelled(w, NULL, now, h, id)); break;
	default: tr_evt_status(t, otf2w_evt_io_operation_complete(w, NULL, now, h, bytes, id)); break;
	}
	tr_rec_end(t);
}

/* aio_read / aio_write / aio_fsync: Begin (non-blocking), the real call,
 * Issued (or Complete with undefined bytes when it could not be queued). */
static int io_aio_issue(enum io_rgn rgn, uint8_t mode, struct aiocb *cb, int op)
{
	IO_INIT(aio_read); IO_INIT(aio_write); IO_INIT(aio_fsync);
#define IO_AIO_CALL (rgn == IO_R_aio_read ? real_aio_read(cb) : rgn == IO_R_aio_write ? real_aio_write(cb) \
		     : real_aio_fsync(op, cb))
	struct tr_thread *t = cb ? io_get() : NULL;
	if (!t)
		return IO_AIO_CALL;
	uint32_t h = io_posix_handle(cb->aio_fildes);
	uint64_t now = io_meta_begin(t, rgn);
	uint64_t id = 0;
	if (h != IO_UNDEF32 && !io_rgn_filtered[rgn] && tr_rec_begin(t)) {
		id = ++io_tls_opid;
		tr_evt_status(t, otf2w_evt_io_operation_begin(t->w, NULL, now, h, mode, IO_OPFL_NON_BLOCKING,
							      mode == IO_OP_FLUSH ? 0 : cb->aio_nbytes, id));
		tr_rec_end(t);
	}
	errno = t->saved_errno;
	int r = IO_AIO_CALL;
	int err = errno;
	struct io_slot *s = NULL;
	if (id) {
		s = r == 0 ? io_ptab_put(&io_aios, (uintptr_t)cb) : NULL;
		if (s) {
			s->h = h;
			s->id = id;
			s->t = t;
			s->fd = cb->aio_fildes;
			io_ptab_publish(s, (uintptr_t)cb);
		}
	}
	uint64_t end = tr_time();
	if (id)
		io_aio_rec(t, end, s ? 'I' : 'C', h, id, IO_UNDEF64);
	io_meta_end(t, rgn, end, err);
	return r;
#undef IO_AIO_CALL
}

TR_EXPORT int aio_read(struct aiocb *cb)
{
	return io_aio_issue(IO_R_aio_read, IO_OP_READ, cb, 0);
}

TR_EXPORT int aio_write(struct aiocb *cb)
{
	return io_aio_issue(IO_R_aio_write, IO_OP_WRITE, cb, 0);
}

TR_EXPORT int aio_fsync(int op, struct aiocb *cb)
{
	return io_aio_issue(IO_R_aio_fsync, IO_OP_FLUSH, cb, op);
}

/* lio_listio: each LIO_READ/LIO_WRITE entry is an operation as aio_read's
 * and aio_write's are (Begin NON_BLOCKING with its bytes requested before
 * the call, Issued after it when queued, Complete by aio_return, Cancelled
 * by aio_cancel), whatever the mode: with LIO_WAIT the data has moved when
 * the call returns, but the bytes are known only to aio_return. Entries
 * that were not queued (the call failed: EINVAL none; EAGAIN/EIO/EINTR
 * those whose aio_error is neither 0 nor EINPROGRESS) complete at once with
 * undefined bytes. Matching ids are consecutive in list order, so the
 * second pass finds them again without storing them (no allocation). */
static int io_lio_begun(struct aiocb *cb, uint32_t *h)
{
	if (!cb || (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE))
		return 0;
	*h = io_posix_handle(cb->aio_fildes);
	return *h != IO_UNDEF32;
}

TR_EXPORT int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
	IO_INIT(lio_listio); IO_INIT(aio_error);
	struct tr_thread *t = n > 0 ? io_get() : NULL;
	if (!t)
		return real_lio_listio(mode, list, n, sev);
	uint64_t now = io_meta_begin(t, IO_R_lio_listio);
	uint64_t first = io_tls_opid + 1;
	int begun = 0;   /* entries with a Begin: the first `begun` that io_lio_begun accepts */
	uint32_t h;
	for (int i = 0; i < n && !io_rgn_filtered[IO_R_lio_listio]; i++) {
		if (!io_lio_begun(list[i], &h))
			continue;
		if (!tr_rec_begin(t))
			break;
		uint8_t op = list[i]->aio_lio_opcode == LIO_READ ? IO_OP_READ : IO_OP_WRITE;
		tr_evt_status(t, otf2w_evt_io_operation_begin(t->w, NULL, now, h, op, IO_OPFL_NON_BLOCKING,
							      list[i]->aio_nbytes, ++io_tls_opid));
		tr_rec_end(t);
		begun++;
	}
	errno = t->saved_errno;
	int r = real_lio_listio(mode, list, n, sev);
	int err = errno;
	uint64_t end = tr_time();
	uint64_t id = first;
	for (int i = 0; i < n && id < first + (uint64_t)begun; i++) {
		if (!io_lio_begun(list[i], &h))
			continue;
		int e = r == 0 ? 0 : err == EINVAL ? EINVAL : real_aio_error(list[i]);
		struct io_slot *s = e == 0 || e == EINPROGRESS ? io_ptab_put(&io_aios, (uintptr_t)list[i]) : NULL;
		if (s) {
			s->h = h;
			s->id = id;
			s->t = t;
			s->fd = list[i]->aio_fildes;
			io_ptab_publish(s, (uintptr_t)list[i]);
		}
		io_aio_rec(t, end, s ? 'I' : 'C', h, id, IO_UNDEF64);
		id++;
	}
	io_meta_end(t, IO_R_lio_listio, end, err);
	return r;
}

/* The recorded operation of cb when this thread issued it, else NULL. */
static struct io_slot *io_aio_mine(struct tr_thread *t, const struct aiocb *cb)
{
	struct io_slot *s = io_ptab_get(&io_aios, (uintptr_t)cb);
	return s && s->t == t ? s : NULL;
}

/* aio_error (IoOperationTest while EINPROGRESS) and aio_return
 * (IoOperationComplete with the bytes transferred; the entry ends). */
static ssize_t io_aio_poll(enum io_rgn rgn, struct aiocb *cb)
{
	IO_INIT(aio_error); IO_INIT(aio_return);
#define IO_AIO_POLL_CALL (rgn == IO_R_aio_error ? (ssize_t)real_aio_error(cb) : real_aio_return(cb))
	struct tr_thread *t = io_get();
	if (!t)
		return IO_AIO_POLL_CALL;
	struct io_slot *s = io_aio_mine(t, cb);
	io_meta_begin(t, rgn);
	ssize_t r = IO_AIO_POLL_CALL;
	int err = errno;
	uint64_t now = tr_time();
	if (s && rgn == IO_R_aio_error) {
		if (r == EINPROGRESS)
			io_aio_rec(t, now, 'T', s->h, s->id, 0);
	} else if (s) {
		uint32_t h = s->h;
		uint64_t id = s->id;
		if (io_ptab_drop(&io_aios, s, (uintptr_t)cb))
			io_aio_rec(t, now, 'C', h, id, r < 0 ? IO_UNDEF64 : (uint64_t)r);
	}
	io_meta_end(t, rgn, now, err);
	return r;
#undef IO_AIO_POLL_CALL
}

TR_EXPORT int aio_error(const struct aiocb *cb)
{
	return (int)io_aio_poll(IO_R_aio_error, (struct aiocb *)cb);
}

TR_EXPORT ssize_t aio_return(struct aiocb *cb)
{
	return io_aio_poll(IO_R_aio_return, cb);
}

TR_EXPORT int aio_suspend(const struct aiocb *const list[], int n, const struct timespec *timeout)
{
	IO_INIT(aio_suspend);
	struct tr_thread *t = io_get();
	if (!t)
		return real_aio_suspend(list, n, timeout);
	io_meta_begin(t, IO_R_aio_suspend);
	int r = real_aio_suspend(list, n, timeout);
	io_meta_end(t, IO_R_aio_suspend, tr_time(), errno);
	return r;
}

/* aio_cancel(fd, cb): AIO_CANCELED ends cb's operation (cb NULL: every
 * operation this thread issued on fd) with IoOperationCancelled. */
TR_EXPORT int aio_cancel(int fd, struct aiocb *cb)
{
	IO_INIT(aio_cancel);
	struct tr_thread *t = io_get();
	if (!t)
		return real_aio_cancel(fd, cb);
	io_meta_begin(t, IO_R_aio_cancel);
	int r = real_aio_cancel(fd, cb);
	int err = errno;
	uint64_t now = tr_time();
	if (r == AIO_CANCELED && atomic_load(&io_aios.n)) {
		for (size_t j = 0; j < IO_SLOTS; j++) {
			struct io_slot *s = &io_aios.s[j];
			uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
			if (!k || s->t != t || s->fd != fd || (cb && k != (uintptr_t)cb))
				continue;
			uint32_t h = s->h;
			uint64_t id = s->id;
			if (io_ptab_drop(&io_aios, s, k))
				io_aio_rec(t, now, 'X', h, id, 0);
		}
	}
	io_meta_end(t, IO_R_aio_cancel, now, err);
	return r;
}

/* The 64-bit offset forms (the same structure on LP64). */
#if defined(__LP64__) && !defined(__USE_FILE_OFFSET64)
TR_EXPORT int aio_read64(struct aiocb64 *cb)
{
	return aio_read((struct aiocb *)cb);
}
TR_EXPORT int aio_write64(struct aiocb64 *cb)
{
	return aio_write((struct aiocb *)cb);
}
TR_EXPORT int aio_fsync64(int op, struct aiocb64 *cb)
{
	return aio_fsync(op, (struct aiocb *)cb);
}
TR_EXPORT int aio_error64(const struct aiocb64 *cb)
{
	return aio_error((const struct aiocb *)cb);
}
TR_EXPORT ssize_t aio_return64(struct aiocb64 *cb)
{
	return aio_return((struct aiocb *)cb);
}
TR_EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sev)
{
	return lio_listio(mode, (struct aiocb *const *)list, n, sev);
}
TR_EXPORT int aio_cancel64(int fd, struct aiocb64 *cb)
{
	return aio_cancel(fd, (struct aiocb *)cb);
}
TR_EXPORT int aio_suspend64(const struct aiocb64 *const list[], int n, const struct timespec *timeout)
{
	return aio_suspend((const struct aiocb *const *)list, n, timeout);
}
#endif

void io_async_init(void)
{
	IO_REAL_RESOLVE(io_async_syms);
}
