/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_prog.c - known-size POSIX and stdio I/O for tests/io/io_tests.py.
 *
 *   io_prog DIR     writes DIR/a.dat (POSIX) and DIR/b.txt (stdio), reads
 *                   both back, duplicates, seeks, renames b.txt to c.txt,
 *                   deletes a.dat, closes a descriptor it never opened and,
 *                   when IO_INHERITED_FD is set, reads that inherited
 *                   descriptor to its end. Prints what it did (the same
 *                   traced and untraced).
 *   io_prog threads DIR   4 threads, each writes DIR/t<i>.dat: 100 write()
 *                   of 512 bytes, then 50 fprintf lines to DIR/t<i>.txt.
 *   io_prog inherit   run with descriptors its parent opened (sh -c 'exec
 *                   5<in 6>>out 7<other; exec io_prog inherit'): reads 5 to
 *                   its end, appends a line to 6 through fdopen, closes 7
 *                   without ever using it, closes 5.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[8192];

static void die(const char *what)
{
	fprintf(stderr, "io_prog: %s: %s\n", what, strerror(errno));
	exit(2);
}

static const char *tdir;
static long tprinted[4];

static void *thread_io(void *arg)
{
	long i = (long)arg;
	char path[4096], data[512];
	memset(data, '0' + (int)i, sizeof(data));
	snprintf(path, sizeof(path), "%s/t%ld.dat", tdir, i);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return NULL;
	for (int k = 0; k < 100; k++)
		if (write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
			break;
	close(fd);
	snprintf(path, sizeof(path), "%s/t%ld.txt", tdir, i);
	FILE *fp = fopen(path, "w");
	for (int k = 0; fp && k < 50; k++)
		tprinted[i] += fprintf(fp, "thread %ld line %d\n", i, k);
	if (fp)
		fclose(fp);
	return NULL;
}

static int threads(const char *dir)
{
	pthread_t th[4];
	tdir = dir;
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, thread_io, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		printf("thread %d printed %ld\n", i, tprinted[i]);
	return 0;
}

static int inherit(void)
{
	long n = 0;
	ssize_t r;
	while ((r = read(5, buf, sizeof(buf))) > 0)
		n += r;
	FILE *fp = fdopen(6, "a");
	if (!fp)
		die("fdopen 6");
	int w = fprintf(fp, "appended after %ld bytes\n", n);
	fclose(fp);
	errno = 0;
	int c7 = close(7);
	int c5 = close(5);
	printf("inherited read %ld, appended %d, close(7) = %d, close(5) = %d\n", n, w, c7, c5);
	return 0;
}

int main(int argc, char **argv)
{
	char a[4096], b[4096], c[4096];
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "inherit"))
		return inherit();
	if (argc < 2)
		return 2;
	snprintf(a, sizeof(a), "%s/a.dat", argv[1]);
	snprintf(b, sizeof(b), "%s/b.txt", argv[1]);
	snprintf(c, sizeof(c), "%s/c.txt", argv[1]);
	memset(buf, 'x', sizeof(buf));

	/* POSIX writes: 10 x 4096 + writev 300 + pwrite 50 + dup 7 + dup2 3 + F_DUPFD 5 */
	int fd = open(a, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		die("open a");
	long wrote = 0;
	for (int i = 0; i < 10; i++)
		wrote += write(fd, buf, 4096);
	struct iovec iov[2] = { { buf, 100 }, { buf, 200 } };
	wrote += writev(fd, iov, 2);
	wrote += pwrite(fd, "0123456789012345678901234567890123456789012345678", 50, 0);
	if (fsync(fd))
		die("fsync");
	int d = dup(fd);
	wrote += write(d, "dupdup\n", 7);
	if (dup2(fd, 50) != 50)
		die("dup2");
	wrote += write(50, "d2\n", 3);
	close(50);
	int f = fcntl(fd, F_DUPFD, 60);
	if (f < 60)
		die("F_DUPFD");
	wrote += write(f, "fcnt\n", 5);
	close(f);
	/* dup2 onto an open descriptor: x.dat's handle ends there */
	char x[4096];
	snprintf(x, sizeof(x), "%s/x.dat", argv[1]);
	int xfd = open(x, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (xfd < 0 || dup2(fd, xfd) != xfd)
		die("dup2 onto x.dat");
	close(xfd);
	if (unlink(x))
		die("unlink x.dat");
	if (fcntl(d, F_SETFL, O_APPEND))
		die("F_SETFL");
	wrote += dprintf(d, "dprintf %d\n", 7);
	close(d);
	close(fd);
	printf("posix wrote %ld\n", wrote);

	/* POSIX reads: to EOF in 1000-byte pieces, then pread 100 and readv 64+64 */
	fd = open(a, O_RDONLY);
	if (fd < 0)
		die("open a for reading");
	long got = 0;
	ssize_t r;
	while ((r = read(fd, buf, 1000)) > 0)
		got += r;
	off_t pos = lseek(fd, 0, SEEK_SET);
	got += pread(fd, buf, 100, 10);
	struct iovec riov[2] = { { buf, 64 }, { buf + 64, 64 } };
	got += readv(fd, riov, 2);
	close(fd);
	printf("posix read %ld (seek %ld)\n", got, (long)pos);

	/* stdio: 100 fprintf lines, fputs, 3 fwrite of 64 */
	FILE *fp = fopen(b, "w");
	if (!fp)
		die("fopen b");
	long sw = 0;
	for (int i = 0; i < 100; i++)
		sw += fprintf(fp, "line %d of the stdio part\n", i);
	if (fputs("a line from fputs\n", fp) >= 0)
		sw += 18;
	for (int i = 0; i < 3; i++)
		sw += (long)fwrite(buf, 1, 64, fp);
	fflush(fp);
	fclose(fp);
	printf("stdio wrote %ld\n", sw);

	fp = fopen(b, "r");
	if (!fp)
		die("fopen b for reading");
	long sr = 0;
	int lines = 0;
	while (lines < 101 && fgets(buf, sizeof(buf), fp)) {
		sr += (long)strlen(buf);
		lines++;
	}
	sr += (long)fread(buf, 1, sizeof(buf), fp);
	fseek(fp, 5, SEEK_SET);
	sr += (long)fread(buf, 1, 10, fp);
	fclose(fp);
	printf("stdio read %ld in %d lines\n", sr, lines);
	fp = fopen(b, "r");
	if (!fp)
		die("fopen b for getline");
	char *line = NULL;
	size_t cap = 0;
	long gl = 0;
	while ((r = getline(&line, &cap, fp)) > 0)
		gl += r;
	free(line);
	fclose(fp);
	printf("getline read %ld\n", gl);

	/* a descriptor never opened, the rename and the delete */
	errno = 0;
	int cr = close(999);
	printf("close(999) = %d errno %d\n", cr, errno);
	if (rename(b, c))
		die("rename");
	if (unlink(a))
		die("unlink");

	const char *inh = getenv("IO_INHERITED_FD");
	if (inh) {
		int ifd = atoi(inh);
		long n = 0;
		while ((r = read(ifd, buf, sizeof(buf))) > 0)
			n += r;
		printf("inherited read %ld\n", n);
	}
	return 0;
}
