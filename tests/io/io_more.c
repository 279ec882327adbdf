/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_more.c - the I/O calls beyond read/write for tests/io/io_tests.py
 * (case more): known sizes, printed so the test can compare the records.
 *
 *   io_more DIR   in DIR:
 *     chars.txt  300 fputc + 200 putc, read back with fgetc/getc to EOF
 *                (one ungetc on the way: read again), 3 fscanf of numbers
 *     stdout     putchar x 10, printf lines
 *     map.dat    16 KiB written, mapped shared read-write (written through
 *                the mapping, msync, munmap), mapped read-only (munmap)
 *     copy1.dat  copy_file_range of map.dat (16 KiB)
 *     copy2.dat  sendfile of map.dat (16 KiB)
 *     copy3.dat  splice of map.dat into a pipe and out of it (2 x 4 KiB)
 *     aio.dat    aio_write 8 KiB (aio_suspend), aio_read 4 KiB (polled
 *                with aio_error), aio_return of both
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

static char path[4][4096];

static void die(const char *what)
{
	fprintf(stderr, "io_more: %s: %s\n", what, strerror(errno));
	exit(2);
}

static const char *at(int i, const char *dir, const char *name)
{
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static void chars(const char *dir)
{
	FILE *fp = fopen(at(0, dir, "chars.txt"), "w");
	if (!fp)
		die("fopen chars.txt");
	long put = 0;
	for (int i = 0; i < 300; i++)
		put += fputc('a' + i % 26, fp) != EOF;
	for (int i = 0; i < 200; i++)
		put += putc(i % 50 == 49 ? '\n' : 'A' + i % 26, fp) != EOF;
	fprintf(fp, "\n12 345 6789\n");
	fclose(fp);
	printf("chars put %ld\n", put);

	fp = fopen(path[0], "r");
	if (!fp)
		die("fopen chars.txt for reading");
	long got = 0;
	int c;
	for (int i = 0; i < 500 && (c = fgetc(fp)) != EOF; i++) {
		got++;
		if (i == 250) {   /* pushed back and read again */
			ungetc(c, fp);
			got += getc(fp) != EOF;
		}
	}
	int a = 0, b = 0, d = 0;
	int n = fscanf(fp, "%d", &a);
	n += fscanf(fp, "%d %d", &b, &d);
	while ((c = getc(fp)) != EOF)
		got++;
	fclose(fp);
	printf("chars got %ld, scanned %d: %d %d %d\n", got, n, a, b, d);
	for (int i = 0; i < 10; i++)
		putchar('0' + i);
	putchar('\n');
}

static long mapped(const char *dir)
{
	static char buf[16384];
	memset(buf, 'm', sizeof(buf));
	int fd = open(at(1, dir, "map.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("map.dat");
	char *m = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	memcpy(m, "written through the mapping\n", 28);
	if (msync(m, sizeof(buf), MS_SYNC))
		die("msync");
	close(fd);              /* the mapping stays */
	m[30] = 'x';
	munmap(m, sizeof(buf));
	fd = open(path[1], O_RDONLY);
	char *r = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	if (r == MAP_FAILED)
		die("mmap read-only");
	long sum = 0;
	for (int i = 0; i < 4096; i++)
		sum += r[i];
	munmap(r, 4096);
	close(fd);
	printf("mapped: sum %ld\n", sum);
	return sum;
}

static void copies(const char *dir)
{
	int in = open(path[1], O_RDONLY);
	int out = open(at(2, dir, "copy1.dat"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		die("open copy1");
	long n = 0;
	ssize_t r;
	while ((r = copy_file_range(in, NULL, out, NULL, 10000, 0)) > 0)
		n += r;
	close(out);
	out = open(at(2, dir, "copy2.dat"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	off_t off = 0;
	long s = 0;
	while ((r = sendfile(out, in, &off, 10000)) > 0)
		s += r;
	close(out);
	int p[2];
	if (pipe(p))
		die("pipe");
	out = open(at(2, dir, "copy3.dat"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	loff_t ioff = 0;
	long sp = 0;
	for (int i = 0; i < 2; i++) {
		ssize_t k = splice(in, &ioff, p[1], NULL, 4096, 0);
		if (k != 4096)
			die("splice in");
		sp += k;
		if (splice(p[0], NULL, out, NULL, 4096, 0) != 4096)
			die("splice out");
	}
	close(p[0]);
	close(p[1]);
	close(out);
	close(in);
	printf("copied %ld, sent %ld, spliced %ld\n", n, s, sp);
}

static void async(const char *dir)
{
	static char wbuf[8192], rbuf[4096];
	memset(wbuf, 'w', sizeof(wbuf));
	int fd = open(at(3, dir, "aio.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0)
		die("open aio.dat");
	struct aiocb w = { 0 }, r = { 0 };
	w.aio_fildes = fd;
	w.aio_buf = wbuf;
	w.aio_nbytes = sizeof(wbuf);
	if (aio_write(&w))
		die("aio_write");
	const struct aiocb *list[1] = { &w };
	while (aio_error(&w) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	ssize_t wn = aio_return(&w);
	r.aio_fildes = fd;
	r.aio_buf = rbuf;
	r.aio_nbytes = sizeof(rbuf);
	r.aio_offset = 2048;
	if (aio_read(&r))
		die("aio_read");
	while (aio_error(&r) == EINPROGRESS)
		usleep(100);
	ssize_t rn = aio_return(&r);
	close(fd);
	printf("aio wrote %zd, read %zd\n", wn, rn);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	chars(argv[1]);
	mapped(argv[1]);
	copies(argv[1]);
	async(argv[1]);
	return 0;
}
