/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_io.c - MPI-IO (MPI_File_*) as OTF2 Io records over the IoParadigm
 * "MPI-IO" (docs/io.md "MPI-IO"). The wrappers are generated from the
 * fopen/fclose/fdelete/fio/fseek lines of mpi.spec and call the functions
 * below; the definitions and handle records are the I/O module's
 * (wrappers/io/io_int.h: io_canon, io_rec_create/destroy, the matching ids).
 *
 * MPI_File_open defines the IoFile (canonical path, interned once per open)
 * and one IoHandle per process and MPI_File, whose comm is the file's
 * communicator, and records IoCreateHandle (OTF2: collective over that
 * comm). The descriptor the MPI library opened for it inside the call (not
 * recorded by the POSIX layer: the MPI wrapper holds the guard) is found by
 * its inode in /proc/self/fd and defined as a POSIX handle whose parent is
 * the MPI-IO handle (OTF2: "parent, in case this I/O handle was created and
 * operated by an higher-level I/O paradigm").
 *
 * An MPI_File is found again through a small open-addressing table:
 * entries claimed and freed under tr_mpi_lock at open/close, looked up
 * without a lock by the transfers (the MPI standard orders them between the
 * open and the close of their file). Transfers allocate nothing and take no
 * lock. Non-blocking transfers go into mpi_req.c's request table (kind
 * TR_MPI_REQ_IO) and are completed by MPI_Wait/Test & co.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mpi_int.h"

#define FT_BITS  8
#define FT_SLOTS (1u << FT_BITS)
#define FT_TOMB  ((uintptr_t)1)

struct tr_mpi_file {
	_Atomic uintptr_t key;   /* the MPI_File (0: never used, FT_TOMB: freed) */
	uint32_t h;              /* MPI-IO IoHandle */
	uint32_t file;           /* IoFile */
	uint32_t posix;          /* POSIX handle of the library's descriptor (IO_UNDEF32: none) */
	int fd;                  /* that descriptor (-1: none) */
	int amode;
	uint64_t split_id;       /* split collective in progress: its matching id (0: none) */
};
static struct tr_mpi_file file_tab[FT_SLOTS];
static uint64_t file_lost;   /* opens beyond the table (under tr_mpi_lock) */
static uint32_t file_ctr;    /* per-process counter of the handles' unique keys */

static inline uint32_t ft_hash(uintptr_t k)
{
	return (uint32_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> (64 - FT_BITS));
}

struct tr_mpi_file *tr_mpi_file_get(MPI_File fh)
{
	uintptr_t k = (uintptr_t)fh;
	if (k <= FT_TOMB)
		return NULL;
	uint32_t h = ft_hash(k);
	for (uint32_t i = 0; i < FT_SLOTS; i++) {
		struct tr_mpi_file *e = &file_tab[(h + i) & (FT_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&e->key, memory_order_acquire);
		if (cur == k)
			return e;
		if (!cur)
			return NULL;
	}
	return NULL;
}

/* A free slot for k (under tr_mpi_lock), marked busy, not yet findable. */
static struct tr_mpi_file *ft_claim(uintptr_t k)
{
	uint32_t h = ft_hash(k);
	for (uint32_t i = 0; i < FT_SLOTS; i++) {
		struct tr_mpi_file *e = &file_tab[(h + i) & (FT_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(&e->key, memory_order_relaxed);
		if (cur == 0 || cur == FT_TOMB) {
			atomic_store_explicit(&e->key, FT_TOMB, memory_order_relaxed);
			return e;
		}
	}
	return NULL;
}

/* Descriptor fd belongs to an open MPI file already (under tr_mpi_lock). */
static int ft_has_fd(int fd)
{
	for (uint32_t i = 0; i < FT_SLOTS; i++)
		if (atomic_load_explicit(&file_tab[i].key, memory_order_relaxed) > FT_TOMB && file_tab[i].fd == fd)
			return 1;
	return 0;
}

/* The IoParadigm, once per process (before its first handle). */
static void paradigm_define(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	int v = 0, sv = 0;
	char ver[24];
	if (PMPI_Get_version(&v, &sv) != MPI_SUCCESS)
		v = sv = 0;
	snprintf(ver, sizeof(ver), "%d.%d", v, sv);
	tr_def_io_paradigm(IO_PARADIGM_MPIIO, "MPI-IO", "MPI I/O", 1 /* PARALLEL */, 0 /* NONE */, ver);
}

/* ROMIO's file system prefix ("ufs:", "nfs:", "lustre:" ...) is not part of the path. */
static const char *strip_prefix(const char *name)
{
	const char *c = strchr(name, ':');
	if (!c || c - name < 2 || c[1] == 0)
		return name;
	for (const char *p = name; p < c; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return name;
	return c + 1;
}

static uint8_t access_mode(int amode)
{
	if (amode & MPI_MODE_RDWR)
		return IO_ACC_READ_WRITE;
	if (amode & MPI_MODE_WRONLY)
		return IO_ACC_WRITE_ONLY;
	return IO_ACC_READ_ONLY;
}

static uint32_t creation_flags(int amode)
{
	uint32_t c = 0;
	if (amode & MPI_MODE_CREATE) c |= IO_CRE_CREATE;
	if (amode & MPI_MODE_EXCL) c |= IO_CRE_EXCLUSIVE;
	if (amode & MPI_MODE_SEQUENTIAL) c |= IO_CRE_NO_SEEK;
	if (amode & MPI_MODE_UNIQUE_OPEN) c |= IO_CRE_UNIQUE;
	return c;
}

static uint32_t status_flags(int amode)
{
	uint32_t s = 0;
	if (amode & MPI_MODE_APPEND) s |= IO_ST_APPEND;
	if (amode & MPI_MODE_DELETE_ON_CLOSE) s |= IO_ST_DELETE_ON_CLOSE;
	return s;
}

/* The descriptor of the file (same inode as canon) that the MPI library
 * opened inside MPI_File_open: not the program's own (known to the POSIX
 * layer), not another open MPI file's. -1: none. Under tr_mpi_lock. */
static int library_fd(const char *canon)
{
	struct stat want, st;
	if (tr_real.stat(canon, &want) != 0)
		return -1;
	int dfd = tr_real.open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	char buf[2048] __attribute__((aligned(8)));
	ssize_t n;
	int found = -1;
	while (found < 0 && (n = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n && found < 0;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);
			off += d->d_reclen;
			char *end;
			long fd = strtol(d->d_name, &end, 10);
			if (*end || end == d->d_name || fd == dfd || fd < 0 || fd > INT_MAX)
				continue;
			if (io_tab && (uint32_t)fd < io_cap && atomic_load_explicit(&io_tab[fd].posix, memory_order_relaxed))
				continue;
			if (tr_real.fstat((int)fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino &&
			    !ft_has_fd((int)fd))
				found = (int)fd;
		}
	}
	tr_real.close(dfd);
	return found;
}

uint64_t tr_mpi_file_opened(struct tr_thread *t, uint64_t time, int ret, MPI_Comm comm, const char *name,
			    int amode, MPI_File fh)
{
	if (ret != MPI_SUCCESS || fh == MPI_FILE_NULL || !io_on || !name)
		return time;
	paradigm_define();
	const char *path = strip_prefix(name);
	char canon[PATH_MAX];
	io_canon(AT_FDCWD, path, canon, sizeof(canon));
	uint32_t file = tr_def_io_file(canon, 0);
	uint32_t hname = tr_def_string(name);
	uint32_t cref = tr_mpi_comm_get(comm)->ref;
	tr_mpi_lock();
	/* an entry for this handle value is stale (its close was not recorded:
	 * a thread without a location, TRACER_MPI off then): reused */
	struct tr_mpi_file *e = tr_mpi_file_get(fh);
	if (e)
		atomic_store_explicit(&e->key, FT_TOMB, memory_order_relaxed);
	else
		e = ft_claim((uintptr_t)fh);
	if (!e) {
		__atomic_fetch_add(&file_lost, 1, __ATOMIC_RELAXED);
		tr_mpi_unlock();
		return time;
	}
	uint64_t uniq = (1ull << 63) | ((uint64_t)(uint32_t)tr_mpi_world_rank << 32) | ++file_ctr;
	e->h = tr_def_io_handle(hname, file, IO_PARADIGM_MPIIO, 0, cref, IO_UNDEF32, uniq);
	e->file = file;
	e->amode = amode;
	e->split_id = 0;
	e->posix = IO_UNDEF32;
	e->fd = library_fd(canon);
	int fl = e->fd >= 0 ? tr_real.fcntl(e->fd, F_GETFL) : -1;
	if (fl >= 0 && e->h != IO_UNDEF32)
		e->posix = tr_def_io_handle(tr_def_string(path), file, IO_PARADIGM_POSIX, 0, IO_UNDEF32, e->h, uniq);
	if (e->h == IO_UNDEF32) {
		atomic_store_explicit(&e->key, FT_TOMB, memory_order_relaxed);
		tr_mpi_unlock();
		return time;
	}
	atomic_store_explicit(&e->key, (uintptr_t)fh, memory_order_release);
	tr_mpi_unlock();
	time = tr_time();
	io_rec_create(t, time, e->h, access_mode(amode), creation_flags(amode), status_flags(amode));
	if (e->posix != IO_UNDEF32) {
		uint8_t m = (fl & O_ACCMODE) == O_RDWR ? IO_ACC_READ_WRITE
			    : (fl & O_ACCMODE) == O_WRONLY ? IO_ACC_WRITE_ONLY : IO_ACC_READ_ONLY;
		io_rec_create(t, time, e->posix, m, 0, io_status_flags(fl));
	}
	return time;
}

void tr_mpi_file_closed(struct tr_thread *t, uint64_t time, struct tr_mpi_file *e, int ret)
{
	if (!e || ret != MPI_SUCCESS)
		return;
	io_rec_destroy(t, time, e->posix);
	io_rec_destroy(t, time, e->h);
	if (e->amode & MPI_MODE_DELETE_ON_CLOSE)
		TR_MPI_REC(t, otf2w_evt_io_delete_file(t->w, NULL, time, IO_PARADIGM_MPIIO, e->file));
	tr_mpi_lock();
	e->fd = -1;
	atomic_store_explicit(&e->key, FT_TOMB, memory_order_release);
	tr_mpi_unlock();
}

void tr_mpi_file_deleted(struct tr_thread *t, uint64_t time, const char *name)
{
	if (!io_on || !name)
		return;
	paradigm_define();
	char canon[PATH_MAX];
	io_canon(AT_FDCWD, strip_prefix(name), canon, sizeof(canon));
	TR_MPI_REC(t, otf2w_evt_io_delete_file(t->w, NULL, time, IO_PARADIGM_MPIIO, tr_def_io_file(canon, 0)));
}

void tr_mpi_file_seek(struct tr_thread *t, uint64_t time, MPI_File fh, MPI_Offset offset, int whence, int shared)
{
	struct tr_mpi_file *e = tr_mpi_file_get(fh);
	if (!e)
		return;
	MPI_Offset pos = 0, byte = 0;
	uint64_t res = IO_UNDEF64;
	int r = shared ? PMPI_File_get_position_shared(fh, &pos) : PMPI_File_get_position(fh, &pos);
	if (r == MPI_SUCCESS && PMPI_File_get_byte_offset(fh, pos, &byte) == MPI_SUCCESS && byte >= 0)
		res = (uint64_t)byte;
	uint8_t w = whence == MPI_SEEK_CUR ? IO_SEEK_CUR : whence == MPI_SEEK_END ? IO_SEEK_END : IO_SEEK_SET;
	TR_MPI_REC(t, otf2w_evt_io_seek(t->w, NULL, time, e->h, (int64_t)offset, w, res));
}

/* Bytes a completed transfer moved (its status; MPI_Count: beyond 2 GiB
 * too), or undefined. */
static uint64_t status_bytes(const MPI_Status *st)
{
	MPI_Count n = 0;
	if (!st)
		return 0;
	if (PMPI_Get_elements_x((MPI_Status *)st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return IO_UNDEF64;
	return (uint64_t)n;
}

void tr_mpi_file_op_begin(struct tr_thread *t, uint64_t time, struct tr_mpi_fop *o, MPI_File fh, uint8_t mode,
			  uint32_t flags, uint64_t bytes)
{
	struct tr_mpi_file *e = tr_mpi_file_get(fh);
	o->e = e;
	o->id = 0;
	if (!e || !tr_rec_begin(t))
		return;
	/* unique per handle across the threads of the process (the request may
	 * be completed by another thread) */
	o->id = ((uint64_t)t->index << 40) | ++io_tls_opid;
	tr_evt_status(t, otf2w_evt_io_operation_begin(t->w, NULL, time, e->h, mode, flags, bytes, o->id));
	tr_rec_end(t);
}

void tr_mpi_file_op_end(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret,
			const MPI_Status *st)
{
	if (o->id)
		TR_MPI_REC(t, otf2w_evt_io_operation_complete(t->w, NULL, time, o->e->h,
							      ret == MPI_SUCCESS ? status_bytes(st) : IO_UNDEF64, o->id));
}

void tr_mpi_file_op_issued(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret, MPI_Request r)
{
	if (!o->id)
		return;
	if (ret != MPI_SUCCESS || r == MPI_REQUEST_NULL) {
		tr_mpi_file_op_end(t, time, o, MPI_ERR_OTHER, NULL);
		return;
	}
	TR_MPI_REC(t, otf2w_evt_io_operation_issued(t->w, NULL, time, o->e->h, o->id));
	tr_mpi_req_io(r, o->e->h, o->id);
}

void tr_mpi_file_split_issued(struct tr_thread *t, uint64_t time, const struct tr_mpi_fop *o, int ret)
{
	if (!o->id)
		return;
	if (ret != MPI_SUCCESS) {
		tr_mpi_file_op_end(t, time, o, ret, NULL);
		return;
	}
	TR_MPI_REC(t, otf2w_evt_io_operation_issued(t->w, NULL, time, o->e->h, o->id));
	o->e->split_id = o->id;
}

void tr_mpi_file_split_end(struct tr_thread *t, uint64_t time, MPI_File fh, int ret, const MPI_Status *st)
{
	struct tr_mpi_file *e = tr_mpi_file_get(fh);
	if (!e || !e->split_id)
		return;
	uint64_t id = e->split_id;
	e->split_id = 0;
	TR_MPI_REC(t, otf2w_evt_io_operation_complete(t->w, NULL, time, e->h,
						      ret == MPI_SUCCESS ? status_bytes(st) : IO_UNDEF64, id));
}

/* Not MPI_Test_cancelled: Open MPI's ompio leaves the cancelled bit of a
 * file request's status undefined (it said "cancelled" for completed reads
 * here), and neither MPI cancels file I/O (MPI_Cancel of one completes it). */
void tr_mpi_file_req_done(struct tr_thread *t, uint64_t time, uint32_t h, uint64_t id, const MPI_Status *st)
{
	TR_MPI_REC(t, otf2w_evt_io_operation_complete(t->w, NULL, time, h, status_bytes(st), id));
}

uint64_t tr_mpi_file_lost(void)
{
	return __atomic_load_n(&file_lost, __ATOMIC_RELAXED);
}
