/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer_bench - Enter/Leave write throughput of an OTF2 writer.
 * Built twice: writer_ours (format/otf2w) and, when libotf2-trace-dev is
 * installed, writer_ref (reference libotf2, BENCH_REF=1).
 *
 *   writer_{ours,ref} DIR PAIRS THREADS
 *
 * Each thread owns one location and writes PAIRS Enter/Leave pairs with
 * timestamps from a counter (one tick per event), region = pair % 64.
 * Both writers: 1 MiB event chunks, 128 MiB of chunks per location before
 * the buffer is flushed to DIR (libotf2's default budget), flush callbacks
 * that always flush, no BufferFlush records. The time measured runs from
 * archive open to archive close (files written, closed). Prints:
 *   events=N seconds=S bytes=B user=U sys=K
 * (S = wall time, B = size of all .evt files, U/K = user/system CPU
 * seconds of the process: U is the writer's own encoding cost, K mostly
 * page faults on chunk memory and copying chunks into the page cache).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "bench_clock.h"

#if BENCH_REF
#include <otf2/otf2.h>
#include <otf2/OTF2_Pthread_Locks.h>
#else
#include "otf2w.h"
#endif

#define CHUNK (1ull << 20)
#define BUDGET_CHUNKS 128
#define NREGIONS 64

static uint64_t pairs;
static pthread_barrier_t barrier;

static void die(const char *what)
{
	fprintf(stderr, "writer_bench: %s\n", what);
	exit(1);
}

#if BENCH_REF
/* ---- reference libotf2 ----------------------------------------------------------- */

static OTF2_Archive *ar;

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cb,
				bool final)
{
	return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cb = { .otf2_pre_flush = pre_flush };

static void archive_open(const char *dir, int threads)
{
	ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, CHUNK, 4 * CHUNK,
			       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!ar)
		die("OTF2_Archive_Open");
	OTF2_Archive_SetFlushCallbacks(ar, &flush_cb, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(ar);
	if (threads > 1 && OTF2_Pthread_Archive_SetLockingCallbacks(ar, NULL) != OTF2_SUCCESS)
		die("locking callbacks");
	OTF2_Archive_OpenEvtFiles(ar);
}

static void *thread_main(void *arg)
{
	uint64_t loc = (uintptr_t)arg, i, t = 0;
	OTF2_EvtWriter *w;

	pthread_barrier_wait(&barrier);
	w = OTF2_Archive_GetEvtWriter(ar, loc);
	if (!w)
		die("OTF2_Archive_GetEvtWriter");
	for (i = 0; i < pairs; i++) {
		uint32_t r = (uint32_t)(i % NREGIONS);

		if (OTF2_EvtWriter_Enter(w, NULL, t++, r) != OTF2_SUCCESS ||
		    OTF2_EvtWriter_Leave(w, NULL, t++, r) != OTF2_SUCCESS)
			die("event");
	}
	if (OTF2_Archive_CloseEvtWriter(ar, w) != OTF2_SUCCESS)
		die("OTF2_Archive_CloseEvtWriter");
	return NULL;
}

static void archive_close(int threads)
{
	OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
	char name[32];
	int i;

	OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 2 * pairs, UINT64_MAX);
	OTF2_GlobalDefWriter_WriteString(g, 0, "");
	for (i = 0; i < NREGIONS; i++) {
		snprintf(name, sizeof(name), "region_%d", i);
		OTF2_GlobalDefWriter_WriteString(g, 1 + i, name);
	}
	OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
						OTF2_UNDEFINED_LOCATION_GROUP);
	for (i = 0; i < threads; i++)
		OTF2_GlobalDefWriter_WriteLocation(g, i, 0, OTF2_LOCATION_TYPE_CPU_THREAD,
						   2 * pairs, 0);
	for (i = 0; i < NREGIONS; i++)
		OTF2_GlobalDefWriter_WriteRegion(g, i, 1 + i, 1 + i, 0, OTF2_REGION_ROLE_FUNCTION,
						 OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
						 OTF2_UNDEFINED_STRING, 0, 0);
	OTF2_Archive_CloseGlobalDefWriter(ar, g);
	if (OTF2_Archive_Close(ar) != OTF2_SUCCESS)
		die("OTF2_Archive_Close");
}

#else
/* ---- ours ----------------------------------------------------------------------------- */

static otf2w_archive *ar;

static int lk_create(void *ud, void **lock)
{
	pthread_mutex_t *m = malloc(sizeof(*m));

	if (!m || pthread_mutex_init(m, NULL))
		return -1;
	*lock = m;
	return 0;
}

static int lk_destroy(void *ud, void *lock)
{
	pthread_mutex_destroy(lock);
	free(lock);
	return 0;
}

static int lk_lock(void *ud, void *lock)
{
	return pthread_mutex_lock(lock);
}

static int lk_unlock(void *ud, void *lock)
{
	return pthread_mutex_unlock(lock);
}

static const otf2w_locking_callbacks lock_cb = { lk_create, lk_destroy, lk_lock, lk_unlock };

static otf2w_flush_type pre_flush(void *ud, uint64_t loc, int final)
{
	return OTF2W_FLUSH;
}

static const otf2w_flush_callbacks flush_cb = { pre_flush, NULL };

static void archive_open(const char *dir, int threads)
{
	otf2w_archive_params p;

	memset(&p, 0, sizeof(p));
	p.path = dir;
	p.event_chunk_size = CHUNK;
	p.def_chunk_size = 4 * CHUNK;
	p.max_chunks = BUDGET_CHUNKS;
	if (otf2w_archive_open(&p, &ar) != OTF2W_OK)
		die("otf2w_archive_open");
	if (otf2w_archive_set_flush(ar, &flush_cb, NULL) != OTF2W_OK)
		die("flush callbacks");
	if (threads > 1 && otf2w_archive_set_locking(ar, &lock_cb, NULL) != OTF2W_OK)
		die("locking callbacks");
}

static void *thread_main(void *arg)
{
	uint64_t loc = (uintptr_t)arg, i, t = 0;
	otf2w_evt_writer *w;

	pthread_barrier_wait(&barrier);
	if (otf2w_archive_get_evt_writer(ar, loc, &w) != OTF2W_OK)
		die("otf2w_archive_get_evt_writer");
	for (i = 0; i < pairs; i++) {
		uint32_t r = (uint32_t)(i % NREGIONS);

		if (otf2w_evt_enter(w, NULL, t++, r) != OTF2W_OK ||
		    otf2w_evt_leave(w, NULL, t++, r) != OTF2W_OK)
			die("event");
	}
	if (otf2w_archive_close_evt_writer(ar, w) != OTF2W_OK)
		die(otf2w_archive_error(ar));
	return NULL;
}

static void archive_close(int threads)
{
	otf2w_gdef_writer *g;
	char name[32];
	int i;

	if (otf2w_archive_get_gdef_writer(ar, &g) != OTF2W_OK)
		die("gdef writer");
	otf2w_gdef_clock_properties(g, 1000000000, 0, 2 * pairs, UINT64_MAX);
	otf2w_gdef_string(g, 0, "");
	for (i = 0; i < NREGIONS; i++) {
		snprintf(name, sizeof(name), "region_%d", i);
		otf2w_gdef_string(g, 1 + i, name);
	}
	otf2w_gdef_system_tree_node(g, 0, 0, 0, OTF2W_UNDEFINED_REF);
	otf2w_gdef_location_group(g, 0, 0, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF);
	for (i = 0; i < threads; i++)
		otf2w_gdef_location(g, i, 0, OTF2W_LOC_CPU_THREAD, 2 * pairs, 0);
	for (i = 0; i < NREGIONS; i++)
		otf2w_gdef_region(g, i, 1 + i, 1 + i, 0, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER,
				  OTF2W_REGION_FLAG_NONE, OTF2W_UNDEFINED_REF, 0, 0);
	if (otf2w_archive_close(ar) != OTF2W_OK)
		die("otf2w_archive_close");
}
#endif

static uint64_t evt_bytes(const char *dir)
{
	char path[4096];
	struct dirent *e;
	struct stat sb;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/traces", dir);
	d = opendir(path);
	if (!d)
		die("no traces/ directory");
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 4 && !strcmp(e->d_name + n - 4, ".evt")) {
			snprintf(path, sizeof(path), "%s/traces/%s", dir, e->d_name);
			if (stat(path, &sb) == 0)
				sum += (uint64_t)sb.st_size;
		}
	}
	closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	struct rusage ru;
	int threads, i;
	double t0, t1;

	if (argc != 4)
		die("usage: writer_{ours,ref} DIR PAIRS THREADS");
	pairs = strtoull(argv[2], NULL, 0);
	threads = atoi(argv[3]);
	if (threads < 1 || threads > 64)
		die("THREADS must be 1..64");
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);

	t0 = bench_wall_s();
	archive_open(argv[1], threads);
	for (i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, thread_main, (void *)(uintptr_t)i))
			die("pthread_create");
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	archive_close(threads);
	t1 = bench_wall_s();

	getrusage(RUSAGE_SELF, &ru);
	printf("events=%llu seconds=%.6f bytes=%llu user=%.6f sys=%.6f\n",
	       (unsigned long long)(2 * pairs * (uint64_t)threads), t1 - t0,
	       (unsigned long long)evt_bytes(argv[1]),
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6);
	return 0;
}
