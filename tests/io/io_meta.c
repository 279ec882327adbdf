/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_meta.c - tests/io case `meta`: calls OTF2 has no record for (regions
 * of role FILE_IO_METADATA only) and lio_listio (operations by aiocb).
 *
 *   io_meta DIR
 *
 * In DIR: meta.dat written (10000 bytes), ftruncate'd to 4096, truncate'd
 * to 1000, fallocate'd and posix_fallocate'd to 8192, posix_fadvise'd, and
 * stat'ed by stat, lstat, fstat, fstatat and statx (one call each; the
 * sizes they see are printed). lio.dat: lio_listio(LIO_WAIT) of two writes
 * (4096 at 0, 2048 at 4096) and a LIO_NOP, then lio_listio(LIO_NOWAIT) of
 * a read (4096 at 0) and a write (1024 at 6144), waited for with
 * aio_suspend; every entry's bytes come from aio_return. Output:
 *   sizes S1 S2 S3 S4 S5
 *   lio wrote W read R
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void prep(struct aiocb *cb, int fd, int op, void *buf, size_t n, off_t off)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_fildes = fd;
	cb->aio_lio_opcode = op;
	cb->aio_buf = buf;
	cb->aio_nbytes = n;
	cb->aio_offset = off;
}

/* aio_return of each entry that is not a LIO_NOP; *rd / *wr add the bytes. */
static void collect(struct aiocb *const *list, int n, long *rd, long *wr)
{
	for (int i = 0; i < n; i++) {
		if (list[i]->aio_lio_opcode == LIO_NOP)
			continue;
		const struct aiocb *one[1] = { list[i] };
		while (aio_error(list[i]) == EINPROGRESS)
			aio_suspend(one, 1, NULL);
		ssize_t r = aio_return(list[i]);
		if (r < 0)
			die("aio_return");
		*(list[i]->aio_lio_opcode == LIO_READ ? rd : wr) += r;
	}
}

int main(int argc, char **argv)
{
	static char buf[10000], rbuf[4096];
	char path[4096], lio[4096];
	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "%s/meta.dat", argv[1]);
	snprintf(lio, sizeof(lio), "%s/lio.dat", argv[1]);
	memset(buf, 'm', sizeof(buf));

	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("meta.dat");
	struct stat st;
	struct statx sx;
	long s[5];
	if (ftruncate(fd, 4096) || fstat(fd, &st))
		die("ftruncate");
	s[0] = (long)st.st_size;
	if (truncate(path, 1000) || stat(path, &st))
		die("truncate");
	s[1] = (long)st.st_size;
	if (fallocate(fd, 0, 0, 4096) || lstat(path, &st))
		die("fallocate");
	s[2] = (long)st.st_size;
	if (posix_fallocate(fd, 0, 8192) || fstatat(AT_FDCWD, path, &st, 0))
		die("posix_fallocate");
	s[3] = (long)st.st_size;
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) || statx(AT_FDCWD, path, 0, STATX_SIZE, &sx))
		die("posix_fadvise");
	s[4] = (long)sx.stx_size;
	close(fd);
	printf("sizes %ld %ld %ld %ld %ld\n", s[0], s[1], s[2], s[3], s[4]);

	fd = open(lio, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("lio.dat");
	struct aiocb a[3], b[2];
	struct aiocb *la[3] = { &a[0], &a[1], &a[2] }, *lb[2] = { &b[0], &b[1] };
	prep(&a[0], fd, LIO_WRITE, buf, 4096, 0);
	prep(&a[1], fd, LIO_WRITE, buf, 2048, 4096);
	prep(&a[2], fd, LIO_NOP, NULL, 0, 0);
	long rd = 0, wr = 0;
	if (lio_listio(LIO_WAIT, la, 3, NULL))
		die("lio_listio LIO_WAIT");
	collect(la, 3, &rd, &wr);
	prep(&b[0], fd, LIO_READ, rbuf, 4096, 0);
	prep(&b[1], fd, LIO_WRITE, buf, 1024, 6144);
	if (lio_listio(LIO_NOWAIT, lb, 2, NULL))
		die("lio_listio LIO_NOWAIT");
	collect(lb, 2, &rd, &wr);
	close(fd);
	printf("lio wrote %ld read %ld\n", wr, rd);
	return 0;
}
