/* SPDX-License-Identifier: BSD-3-Clause */
/* unit_archive.c - archive level: lazy files and set_path, set_location,
 * files for every location, anchor, locking callbacks, file errors,
 * emergency close, abandon after fork. */
#include <errno.h>
#include <criterion/criterion.h>
#include <pthread.h>
#include <sys/wait.h>

#include "unit_util.h"

Test(archive, lazy_files_and_set_path)
{
	char dir[512], dir2[512], path[700];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "lazy1");
	ut_tmpdir(dir2, sizeof(dir2), "lazy2");
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 2 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 2, 2);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 1, &w), OTF2W_OK);
	for (uint64_t t = 1; t < 1000; t++)
		cr_assert_eq(otf2w_evt_enter(w, NULL, t, 1), OTF2W_OK);
	cr_assert(!ut_exists(dir), "directory created before the first flush");
	cr_assert_eq(otf2w_archive_set_path(ar, dir2), OTF2W_OK);
	cr_assert_str_eq(otf2w_archive_path(ar), dir2);
	/* fill the 2 chunks: the flush creates the files in dir2 */
	for (uint64_t t = 1000; t < 100000; t++)
		cr_assert_eq(otf2w_evt_enter(w, NULL, t, 1), OTF2W_OK);
	cr_assert(ut_exists(dir2));
	cr_assert(!ut_exists(dir));
	cr_assert_eq(otf2w_archive_set_path(ar, dir), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_writer_set_location(w, 5), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	/* location 0 had no writer: empty .evt and .def exist */
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir2);
	size_t n;
	uint8_t *d = ut_read(path, &n);
	cr_assert_not_null(d);
	cr_assert_eq(n, 20);
	cr_assert_eq(d[18], 0x02);
	free(d);
	int rc;
	char *out = ut_print(dir2, "-A -M -C", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), 99999);
	cr_assert_eq(ut_count(out, "[OTF2]"), 0, "reader complained: %s", out);
	cr_assert_eq(ut_count(out, "Number of locations            2"), 1);
	free(out);
	ut_rmrf(dir2);
}

Test(archive, set_location_before_disk)
{
	char dir[512];
	otf2w_archive *ar;
	otf2w_evt_writer *w, *w2;
	ut_tmpdir(dir, sizeof(dir), "setloc");
	otf2w_archive_params p = { .path = dir };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 77, &w), OTF2W_OK);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 3, &w2), OTF2W_OK);
	cr_assert_eq(otf2w_evt_enter(w, NULL, 5, 0), OTF2W_OK);
	cr_assert_eq(otf2w_evt_writer_set_location(w, 3), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_writer_set_location(w, 4294967296ull), OTF2W_OK);
	cr_assert_eq(otf2w_evt_writer_location(w), 4294967296ull);
	otf2w_evt_writer *again;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 4294967296ull, &again), OTF2W_OK);
	cr_assert_eq(again, w);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 6, 0), OTF2W_OK);
	otf2w_gdef_writer *g;
	cr_assert_eq(otf2w_archive_get_gdef_writer(ar, &g), OTF2W_OK);
	otf2w_gdef_string(g, 0, "x");
	otf2w_gdef_system_tree_node(g, 0, 0, 0, OTF2W_UNDEFINED_REF);
	otf2w_gdef_location_group(g, 0, 0, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF);
	otf2w_gdef_location(g, 4294967296ull, 0, OTF2W_LOC_CPU_THREAD, 2, 0);
	otf2w_gdef_location(g, 3, 0, OTF2W_LOC_CPU_THREAD, 0, 0);
	otf2w_gdef_region(g, 0, 0, 0, 0, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER, 0, OTF2W_UNDEFINED_REF, 0, 0);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "4294967296                    5"), 1, "%s", out);
	free(out);
	char path[600];
	snprintf(path, sizeof(path), "%s/traces/77.evt", dir);
	cr_assert(!ut_exists(path));
	ut_rmrf(dir);
}

Test(archive, properties_and_anchor)
{
	char dir[512];
	otf2w_archive *ar;
	ut_tmpdir(dir, sizeof(dir), "anchor");
	otf2w_archive_params p = { .path = dir, .machine_name = "mach", .creator = "unit",
				   .description = "desc" };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_property(ar, "bad", "x"), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_set_property(ar, "A::", "x"), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_set_property(ar, "A::B-C", "x"), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_set_property(ar, "tracer::version", "1.0"), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_property(ar, "TRACER::GONE", "y"), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_property(ar, "TRACER::GONE", ""), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_trace_id(ar, 0xabcdef), OTF2W_OK);
	ut_defs(ar, 3, 1);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "-I", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "TRACER::VERSION") && strstr(out, "1.0"), "%s", out);
	cr_assert(!strstr(out, "TRACER::GONE"), "%s", out);
	cr_assert(strstr(out, "abcdef"), "%s", out);
	cr_assert(strstr(out, "mach") && strstr(out, "unit") && strstr(out, "desc"), "%s", out);
	cr_assert(strstr(out, "Number of global definitions   10"), "%s", out);
	free(out);
	/* exclusive refuses an existing archive */
	otf2w_archive_params p2 = { .path = dir, .exclusive = 1 };
	cr_assert_eq(otf2w_archive_open(&p2, &ar), OTF2W_E_EXISTS);
	ut_rmrf(dir);
}

Test(archive, bad_params)
{
	otf2w_archive *ar;
	otf2w_archive_params p = { .path = "/tmp/x", .event_chunk_size = 1000 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	otf2w_archive_params p2 = { .path = NULL };
	cr_assert_eq(otf2w_archive_open(&p2, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_open(NULL, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_enter(NULL, NULL, 1, 1), OTF2W_E_INVALID_ARGUMENT);
}

Test(archive, unwritable_directory_reports_path)
{
	char dir[512], sub[600];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	if (geteuid() == 0) {
		/* root ignores permissions: use a path below a regular file */
		ut_tmpdir(dir, sizeof(dir), "eacces");
		cr_assert_eq(system("true"), 0);
		FILE *f = fopen(dir, "w");
		cr_assert_not_null(f);
		fclose(f);
	} else {
		ut_tmpdir(dir, sizeof(dir), "eacces");
		mkdir(dir, 0500);
	}
	snprintf(sub, sizeof(sub), "%s/archive", dir);
	otf2w_archive_params p = { .path = sub, .event_chunk_size = 262144, .max_chunks = 1 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 1, 1);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	otf2w_status st = OTF2W_OK;
	uint64_t t;
	for (t = 1; t < 100000 && st == OTF2W_OK; t++)
		st = otf2w_evt_enter(w, NULL, t, 0);
	cr_assert_eq(st, OTF2W_E_IO, "%s", otf2w_status_str(st));
	cr_assert(strstr(otf2w_archive_error(ar), sub) != NULL, "%s", otf2w_archive_error(ar));
	cr_assert(strstr(otf2w_archive_error(ar), "Not a directory") ||
		  strstr(otf2w_archive_error(ar), "Permission denied"), "%s", otf2w_archive_error(ar));
	/* the location stopped; events are counted as dropped, not lost silently */
	cr_assert_eq(otf2w_evt_enter(w, NULL, t, 0), OTF2W_E_STOPPED);
	cr_assert_geq(otf2w_evt_writer_dropped(w), 2);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_E_IO);
	ut_rmrf(dir);
}

/* The archive's location directory exists as a regular file (made by
 * someone else): the error names that file and says what it is. */
Test(archive, location_dir_taken_by_a_file)
{
	char dir[512], taken[600];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "notdir");
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(taken, sizeof(taken), "%s/traces", dir);
	FILE *f = fopen(taken, "w");
	cr_assert_not_null(f);
	fputs("x", f);
	fclose(f);
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 1 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 1, 1);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	otf2w_status st = OTF2W_OK;
	for (uint64_t t = 1; t < 100000 && st == OTF2W_OK; t++)
		st = otf2w_evt_enter(w, NULL, t, 0);
	cr_assert_eq(st, OTF2W_E_IO, "%s", otf2w_status_str(st));
	char want[700];
	snprintf(want, sizeof(want), "Not a directory (%s is a regular file of 1 bytes", taken);
	cr_assert(strstr(otf2w_archive_error(ar), want) != NULL, "%s", otf2w_archive_error(ar));
	otf2w_archive_close(ar);
	ut_rmrf(dir);
}

static otf2w_flush_type always_flush(void *ud, uint64_t loc, int final)
{
	return OTF2W_FLUSH;
}

/* A failed flush keeps the chunks: after the problem is gone, close writes
 * them (the archive path was changed before any file existed). */
Test(archive, failed_flush_keeps_data)
{
	char dir[512], bad[600];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "keep");
	snprintf(bad, sizeof(bad), "%s/file/archive", dir);
	mkdir(dir, 0755);
	char file[600];
	snprintf(file, sizeof(file), "%s/file", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	otf2w_archive_params p = { .path = bad, .event_chunk_size = 262144, .max_chunks = 1 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	/* with a pre_flush callback the last chunk keeps room for OFF */
	otf2w_flush_callbacks fc = { always_flush, NULL };
	cr_assert_eq(otf2w_archive_set_flush(ar, &fc, NULL), OTF2W_OK);
	ut_defs(ar, 1, 1);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	uint64_t t, ok = 0;
	otf2w_status st = OTF2W_OK;
	for (t = 1; st == OTF2W_OK; t++) {
		/* the failed flush happens inside a traced call: the caller's
		 * errno must come back unchanged (the error is in the status) */
		errno = 4242;
		st = otf2w_evt_enter(w, NULL, t, 0);
		cr_assert_eq(errno, 4242, "errno changed to %d at event %llu", errno, (unsigned long long)t);
		if (st == OTF2W_OK)
			ok++;
	}
	cr_assert_eq(st, OTF2W_E_IO);
	/* make the path usable */
	unlink(file);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(bad, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), (long)ok);
	cr_assert_eq(ut_count(out, "Mode: OFF"), 1);
	free(out);
	ut_rmrf(dir);
}

/* ---- locking --------------------------------------------------------------- */

struct lockstate {
	pthread_mutex_t m;
	long locks;
	int created, destroyed;
};

static int l_create(void *ud, void **lock)
{
	struct lockstate *s = ud;
	s->created++;
	*lock = &s->m;
	return 0;
}

static int l_destroy(void *ud, void *lock)
{
	struct lockstate *s = ud;
	s->destroyed++;
	return 0;
}

static int l_lock(void *ud, void *lock)
{
	struct lockstate *s = ud;
	pthread_mutex_lock(lock);
	s->locks++;
	return 0;
}

static int l_unlock(void *ud, void *lock)
{
	pthread_mutex_unlock(lock);
	return 0;
}

struct thr {
	otf2w_archive *ar;
	uint64_t loc;
	uint64_t n;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	otf2w_evt_writer *w;
	if (otf2w_archive_get_evt_writer(t->ar, t->loc, &w))
		return (void *)1;
	for (uint64_t i = 0; i < t->n; i++) {
		if (otf2w_evt_enter(w, NULL, 2 * i + 1, (uint32_t)(i % 4)))
			return (void *)2;
		if (otf2w_evt_leave(w, NULL, 2 * i + 2, (uint32_t)(i % 4)))
			return (void *)3;
	}
	if (otf2w_archive_close_evt_writer(t->ar, w))
		return (void *)4;
	return NULL;
}

Test(archive, threads_lock_only_for_shared_state)
{
	char dir[512];
	otf2w_archive *ar;
	struct lockstate ls = { .m = PTHREAD_MUTEX_INITIALIZER };
	otf2w_locking_callbacks lc = { l_create, l_destroy, l_lock, l_unlock };
	ut_tmpdir(dir, sizeof(dir), "threads");
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 2 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_locking(ar, &lc, &ls), OTF2W_OK);
	cr_assert_eq(ls.created, 1);
	ut_defs(ar, 4, 4);
	long before = ls.locks;
	pthread_t th[4];
	struct thr a[4];
	const uint64_t N = 100000;
	for (int i = 0; i < 4; i++) {
		a[i] = (struct thr){ ar, (uint64_t)i, N };
		pthread_create(&th[i], NULL, thread_main, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		cr_assert_null(r, "thread %d failed: %p %s", i, r, otf2w_archive_error(ar));
	}
	/* 2M events; locks only for writer creation, chunks, file opening */
	cr_assert_lt(ls.locks - before, 400, "%ld locks", ls.locks - before);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	cr_assert_eq(ls.destroyed, 1);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), 4 * (long)N);
	cr_assert_eq(ut_count(out, "\nLEAVE "), 4 * (long)N);
	free(out);
	ut_rmrf(dir);
}

/* ---- emergency close and abandon ----------------------------------------------- */

Test(archive, emergency_close_readable)
{
	char dir[512];
	ut_tmpdir(dir, sizeof(dir), "emerg");
	pid_t pid = fork();
	if (pid == 0) {
		otf2w_archive *ar;
		otf2w_evt_writer *w;
		otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 4 };
		if (otf2w_archive_open(&p, &ar))
			_exit(10);
		ut_defs(ar, 2, 2);
		otf2w_archive_get_evt_writer(ar, 0, &w);
		for (uint64_t t = 1; t <= 50000; t++)
			otf2w_evt_enter(w, NULL, t, 1);
		/* crash path: the handler writes what is buffered, no malloc */
		_exit(otf2w_archive_close_emergency(ar) == OTF2W_OK ? 0 : 11);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), 50000);
	cr_assert_eq(ut_count(out, "[OTF2]"), 0, "%s", out);
	free(out);
	ut_rmrf(dir);
}

Test(archive, abandon_in_fork_child)
{
	char dir[512];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "abandon");
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 1 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 1, 1);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	uint64_t t;
	for (t = 1; t <= 30000; t++)
		otf2w_evt_enter(w, NULL, t, 0);	/* flushes: the file is open */
	pid_t pid = fork();
	if (pid == 0) {
		otf2w_archive_abandon(ar);
		int bad = otf2w_evt_enter(w, NULL, t, 0) != OTF2W_E_INVALID_CALL;
		bad |= otf2w_archive_close(ar) != OTF2W_E_INVALID_CALL;
		_exit(bad);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (; t <= 40000; t++)
		cr_assert_eq(otf2w_evt_enter(w, NULL, t, 0), OTF2W_OK);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), 40000);
	free(out);
	ut_rmrf(dir);
}

static int count_fds(void)
{
	char cmd[64];
	int rc;
	snprintf(cmd, sizeof(cmd), "ls /proc/%d/fd | wc -l", (int)getpid());
	char *out = ut_run(cmd, &rc);
	int n = atoi(out);
	free(out);
	return n;
}

/* 150 locations that all flushed: open descriptors stay bounded. */
Test(archive, many_locations_bounded_fds)
{
	char dir[512];
	otf2w_archive *ar;
	enum { NLOC = 150 };
	static otf2w_evt_writer *w[NLOC];
	ut_tmpdir(dir, sizeof(dir), "fds");
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 1 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, NLOC, 2);
	int before = count_fds();
	uint64_t t = 1;
	for (int round = 0; round < 1; round++) {
		for (int l = 0; l < NLOC; l++) {
			cr_assert_eq(otf2w_archive_get_evt_writer(ar, (uint64_t)l, &w[l]), OTF2W_OK);
			for (int i = 0; i < 25000; i++)	/* > 1 chunk: one flush */
				cr_assert_eq(otf2w_evt_enter(w[l], NULL, t + (uint64_t)i, 1), OTF2W_OK);
		}
		t += 25000;
	}
	int during = count_fds();
	cr_assert_leq(during - before, 70, "%d descriptors open", during - before);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "--silent", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	free(out);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "otf2-print '%s/traces.otf2' | grep -c '^ENTER'", dir);
	out = ut_run(cmd, &rc);
	cr_assert_eq(atol(out), (long)NLOC * 25000, "%s", out);
	free(out);
	ut_rmrf(dir);
}

static long live_chunks;

static void *cnt_alloc(void *ud, size_t size)
{
	live_chunks++;
	return malloc(size);
}

static void cnt_free(void *ud, void *c, size_t size)
{
	live_chunks--;
	free(c);
}

/* set_memory works until the first chunk; discard writes nothing, frees all */
Test(archive, memory_callbacks_and_discard)
{
	char dir[512];
	otf2w_archive *ar;
	otf2w_gdef_writer *g;
	otf2w_evt_writer *w;
	otf2w_memory_callbacks mc = { cnt_alloc, cnt_free };
	ut_tmpdir(dir, sizeof(dir), "discard");
	otf2w_archive_params p = { .path = dir };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	cr_assert_eq(otf2w_archive_get_gdef_writer(ar, &g), OTF2W_OK);
	cr_assert_eq(otf2w_archive_set_memory(ar, &mc, NULL), OTF2W_OK);
	cr_assert_eq(otf2w_gdef_string(g, 0, "x"), OTF2W_OK);
	cr_assert_eq(live_chunks, 1);
	cr_assert_eq(otf2w_archive_set_memory(ar, NULL, NULL), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	cr_assert_eq(otf2w_evt_enter(w, NULL, 1, 0), OTF2W_OK);
	cr_assert_eq(live_chunks, 2);
	otf2w_archive_discard(ar);
	cr_assert_eq(live_chunks, 0);
	cr_assert(!ut_exists(dir), "discard created files");
}

/* close_evt_writer_deferred: small closed writers keep an exact copy
 * in memory, written at archive close; big ones are written at once. */
Test(archive, deferred_close)
{
	char dir[512], path[700];
	otf2w_archive *ar;
	otf2w_evt_writer *small, *big;
	ut_tmpdir(dir, sizeof(dir), "defer");
	otf2w_archive_params p = { .path = dir, .event_chunk_size = 262144, .max_chunks = 4 };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 3, 2);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 7, &small), OTF2W_OK);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 1, &big), OTF2W_OK);
	for (uint64_t t = 1; t <= 10; t++)
		cr_assert_eq(otf2w_evt_enter(small, NULL, t, 0), OTF2W_OK);
	for (uint64_t t = 1; t <= 50000; t++)
		cr_assert_eq(otf2w_evt_enter(big, NULL, t, 1), OTF2W_OK);
	cr_assert_eq(otf2w_archive_close_evt_writer_deferred(ar, small, 4096, 1 << 20), OTF2W_OK);
	cr_assert_eq(otf2w_evt_enter(small, NULL, 11, 0), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_writer_set_location(small, 0), OTF2W_OK);	/* still renamable */
	cr_assert_eq(otf2w_archive_close_evt_writer_deferred(ar, big, 4096, 1 << 20), OTF2W_OK);
	snprintf(path, sizeof(path), "%s/traces/1.evt", dir);
	cr_assert(ut_exists(path), "big writer not written at once");
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir);
	cr_assert(!ut_exists(path), "deferred writer written early");
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER                                          0 "), 10, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER                                          1 "), 50000);
	free(out);
	snprintf(path, sizeof(path), "%s/traces/7.evt", dir);
	cr_assert(!ut_exists(path));
	ut_rmrf(dir);
}
