/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pth_plugin.c - threads, locks and file I/O reached only from a plugin
 * opened with dlopen(RTLD_LOCAL), as a Python extension module or a
 * program's plugin does them: built twice, as the plugin (-DPTH_PLUGIN
 * -shared) and as the program (no pthread or file calls of its own but
 * dlopen) that opens it with RTLD_NOW | RTLD_LOCAL and calls its entry.
 *
 *   pth_plugin PLUGIN.so FILE
 *     -> "pth_plugin: threads 2 locked 2000 bytes 9216 read 18432"
 * (FILE written with write by the two threads under the lock, 4 KiB each,
 * then 1 KiB with fwrite; read back with pread and fread.)
 */
#ifdef PTH_PLUGIN
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long locked;
static int fd;

static void *worker(void *arg)
{
	char buf[1024];
	memset(buf, 'a' + (int)(long)arg, sizeof(buf));
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&mu);
		locked++;
		if (i % 250 == 0 && write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			locked = -1000000;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int plugin_run(const char *path, long *nlocked, long *bytes, long *nread)
{
	pthread_t th[2];
	char buf[16384];
	if ((fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644)) < 0)
		return -1;
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	FILE *f = fdopen(fd, "r+");
	if (!f)
		return -1;
	memset(buf, 'z', 1024);
	fseek(f, 0, SEEK_END);
	fwrite(buf, 1, 1024, f);
	fflush(f);
	*bytes = lseek(fd, 0, SEEK_END);
	*nread = pread(fd, buf, sizeof(buf), 0);
	rewind(f);
	*nread += (long)fread(buf, 1, sizeof(buf), f);
	fclose(f);
	*nlocked = locked;
	return 2;
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: pth_plugin PLUGIN.so FILE\n", stderr);
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*run)(const char *, long *, long *, long *) = h ? (int (*)(const char *, long *, long *, long *))dlsym(h, "plugin_run") : NULL;
	if (!run) {
		fprintf(stderr, "pth_plugin: %s\n", dlerror());
		return 1;
	}
	long nlocked = 0, bytes = 0, nread = 0;
	int threads = run(argv[2], &nlocked, &bytes, &nread);
	printf("pth_plugin: threads %d locked %ld bytes %ld read %ld\n", threads, nlocked, bytes, nread);
	return threads == 2 ? 0 : 1;
}
#endif
