/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e2e.c - end-to-end tests of the OTF2 writer (format/): archives written
 * with otf2w, read back with the reference reader (libotf2 via oracle.c,
 * otf2-print). Scale, threads, buffer-full policies and malformed use.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <otf2/otf2.h>
#include "otf2w.h"
#include "oracle.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* one directory per test (each test runs in its own process) */
static char *tmpdir(const char *tag)
{
	static char p[4096];
	const char *base = getenv("FMT_TEST_DIR");

	if (!base || !*base)
		base = "/tmp";
	mkdir(base, 0777);
	snprintf(p, sizeof(p), "%s/%s-XXXXXX", base, tag);
	cr_assert_not_null(mkdtemp(p), "mkdtemp %s: %s", p, strerror(errno));
	return p;
}

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static void rmtree(const char *dir)
{
	if (!getenv("FMT_KEEP"))        /* FMT_KEEP=1: keep archives for debugging */
		sh("rm -rf '%s'", dir);
}

static otf2w_archive *open_archive(const char *dir, uint64_t chunk, uint32_t max_chunks)
{
	otf2w_archive_params p;
	otf2w_archive *ar = NULL;
	otf2w_status st;

	memset(&p, 0, sizeof(p));
	p.path = dir;
	p.event_chunk_size = chunk;
	p.max_chunks = max_chunks;
	p.creator = "fmt e2e";
	st = otf2w_archive_open(&p, &ar);
	cr_assert_eq(st, OTF2W_OK, "otf2w_archive_open(%s): %s", dir, otf2w_status_str(st));
	cr_assert_not_null(ar);
	return ar;
}

#define OK(call) do { otf2w_status _s = (call); \
	cr_assert_eq(_s, OTF2W_OK, "%s: %s (%s)", #call, otf2w_status_str(_s), \
		     ar ? otf2w_archive_error(ar) : ""); } while (0)

/* minimal clean global definitions: locations locs[], regions 0..nregions-1 */
static void gdefs(otf2w_archive *ar, const uint64_t *locs, int n, uint32_t nregions)
{
	otf2w_gdef_writer *g;
	char name[32];
	uint32_t i;

	OK(otf2w_archive_get_gdef_writer(ar, &g));
	OK(otf2w_gdef_clock_properties(g, 1000000000, 0, UINT64_MAX >> 1, OTF2W_UNDEFINED_UINT64));
	OK(otf2w_gdef_string(g, 0, ""));
	OK(otf2w_gdef_string(g, 1, "node"));
	OK(otf2w_gdef_string(g, 2, "process"));
	OK(otf2w_gdef_string(g, 3, "thread"));
	for (i = 0; i < nregions; i++) {
		snprintf(name, sizeof(name), "region_%u", i);
		OK(otf2w_gdef_string(g, 4 + i, name));
	}
	OK(otf2w_gdef_system_tree_node(g, 0, 1, 0, OTF2W_UNDEFINED_REF));
	OK(otf2w_gdef_location_group(g, 0, 2, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF));
	for (i = 0; i < (uint32_t)n; i++)
		OK(otf2w_gdef_location(g, locs[i], 3, OTF2W_LOC_CPU_THREAD, 0, 0));
	for (i = 0; i < nregions; i++)
		OK(otf2w_gdef_region(g, i, 4 + i, 4 + i, 0, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER,
				     OTF2W_REGION_FLAG_NONE, OTF2W_UNDEFINED_REF, 0, 0));
}

static void anchor_of(char *buf, size_t len, const char *dir)
{
	snprintf(buf, len, "%s/traces.otf2", dir);
}

static void oracle_check(const char *dir, struct oracle_loc *locs, int n)
{
	char anchor[4096], err[512];
	int i;

	anchor_of(anchor, sizeof(anchor), dir);
	cr_assert_eq(oracle_read(anchor, locs, n, err, sizeof(err)), 0, "reference reader: %s", err);
	for (i = 0; i < n; i++) {
		struct oracle_loc *l = &locs[i];

		cr_assert(l->seen, "location %lu not read", (unsigned long)l->loc);
		cr_assert_eq(l->bad, 0, "location %lu: %lu Enter/Leave records differ from the "
			     "written ones (first at record %lu)", (unsigned long)l->loc,
			     (unsigned long)l->bad, (unsigned long)l->first_bad);
		cr_assert_eq(l->backwards, 0, "location %lu: time goes backwards",
			     (unsigned long)l->loc);
		cr_assert_eq(l->bad_position, 0, "location %lu: %lu event positions (chunk header "
			     "counters) wrong", (unsigned long)l->loc, (unsigned long)l->bad_position);
		cr_assert_eq(l->nother, 0, "location %lu: unexpected records", (unsigned long)l->loc);
	}
}

static void otf2_print_ok(const char *dir)
{
	int rc = sh("otf2-print -Werror --silent '%s/traces.otf2' >'%s.print' 2>&1", dir, dir);

	if (rc != 0)
		sh("head -c 2000 '%s.print' >&2", dir);
	cr_assert_eq(rc, 0, "otf2-print -Werror rejects %s (see above)", dir);
	cr_assert_eq(sh("grep -q '^\\[OTF2\\]' '%s.print'", dir), 1,
		     "otf2-print reports [OTF2] errors for %s", dir);
	sh("rm -f '%s.print'", dir);
}

/* Enter/Leave generator of oracle.h */
static inline otf2w_status gen_event(otf2w_evt_writer *w, uint64_t k, uint32_t base, uint32_t mod,
				     uint64_t div)
{
	uint32_t r = base + (mod ? (uint32_t)((k / 2) % mod) : 0);

	return (k & 1) ? otf2w_evt_leave(w, NULL, k / div, r) : otf2w_evt_enter(w, NULL, k / div, r);
}

/* ---- scale: 10^7 events on one location ------------------------------------------------ */

Test(scale, ten_million_events_one_location, .timeout = 300)
{
	const uint64_t n = 10000000;
	char *dir = tmpdir("scale");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_evt_writer *w;
	uint64_t loc = 0, k, bytes;
	struct oracle_loc ol = { .loc = 0, .region_mod = 16, .time_div = 2 };

	gdefs(ar, &loc, 1, 16);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	for (k = 0; k < n; k++) {
		otf2w_status st = gen_event(w, k, 0, 16, 2);

		if (st != OTF2W_OK)
			cr_assert_fail("event %lu: %s", (unsigned long)k, otf2w_status_str(st));
	}
	cr_assert_eq(otf2w_evt_writer_count(w), n);
	cr_assert_eq(otf2w_evt_writer_dropped(w), 0);
	bytes = otf2w_evt_writer_bytes(w);
	cr_assert(bytes > n * 2 && bytes < n * 12, "implausible byte count %lu", (unsigned long)bytes);
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	oracle_check(dir, &ol, 1);
	cr_assert_eq(ol.nseq, n, "%lu of %lu events read back", (unsigned long)ol.nseq,
		     (unsigned long)n);
	cr_assert_eq(ol.nflush, 0);
	rmtree(dir);
}

/* ---- threads: 8 threads x 10^6 events, pthread locking callbacks ------------------------ */

struct lockstat {
	pthread_mutex_t m;
	long creates, destroys, locks, unlocks, depth, max_depth_err;
};

static int lk_create(void *ud, void **lock)
{
	struct lockstat *s = ud;
	pthread_mutex_t *m = malloc(sizeof(*m));

	if (!m || pthread_mutex_init(m, NULL))
		return -1;
	__atomic_add_fetch(&s->creates, 1, __ATOMIC_SEQ_CST);
	*lock = m;
	return 0;
}

static int lk_destroy(void *ud, void *lock)
{
	struct lockstat *s = ud;

	__atomic_add_fetch(&s->destroys, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_destroy(lock);
	free(lock);
	return 0;
}

static int lk_lock(void *ud, void *lock)
{
	struct lockstat *s = ud;

	if (pthread_mutex_lock(lock))
		return -1;
	s->locks++;               /* under the lock */
	if (++s->depth != 1)
		s->max_depth_err++;
	return 0;
}

static int lk_unlock(void *ud, void *lock)
{
	struct lockstat *s = ud;

	s->unlocks++;
	s->depth--;
	return pthread_mutex_unlock(lock) ? -1 : 0;
}

static const otf2w_locking_callbacks lk_cb = { lk_create, lk_destroy, lk_lock, lk_unlock };

struct thr {
	otf2w_archive *ar;
	pthread_barrier_t *bar;
	uint64_t loc, n;
	uint32_t base;
	otf2w_status st;
	uint64_t failed_at, count, dropped;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	otf2w_evt_writer *w;
	uint64_t k;

	pthread_barrier_wait(t->bar);
	t->st = otf2w_archive_get_evt_writer(t->ar, t->loc, &w);
	if (t->st)
		return NULL;
	for (k = 0; k < t->n; k++) {
		t->st = gen_event(w, k, t->base, 10, 1);
		if (t->st) {
			t->failed_at = k;
			return NULL;
		}
	}
	t->count = otf2w_evt_writer_count(w);
	t->dropped = otf2w_evt_writer_dropped(w);
	t->st = otf2w_archive_close_evt_writer(t->ar, w);
	return NULL;
}

Test(threads, eight_threads_million_events_each, .timeout = 300)
{
	enum { NT = 8 };
	const uint64_t n = 1000000;
	char *dir = tmpdir("threads");
	/* small chunks and 2 chunks per location: many concurrent flushes */
	otf2w_archive *ar = open_archive(dir, 262144, 2);
	struct lockstat ls = { .m = PTHREAD_MUTEX_INITIALIZER };
	pthread_barrier_t bar;
	pthread_t tid[NT];
	struct thr t[NT];
	struct oracle_loc ol[NT];
	uint64_t locs[NT];
	int i;

	OK(otf2w_archive_set_locking(ar, &lk_cb, &ls));
	cr_assert_eq(ls.creates, 1, "lock create callback not called once");
	for (i = 0; i < NT; i++)
		locs[i] = 1000 + (uint64_t)i * 7;
	gdefs(ar, locs, NT, NT * 10);
	pthread_barrier_init(&bar, NULL, NT);
	for (i = 0; i < NT; i++) {
		t[i] = (struct thr){ .ar = ar, .bar = &bar, .loc = locs[i], .n = n,
				     .base = (uint32_t)i * 10 };
		cr_assert_eq(pthread_create(&tid[i], NULL, thr_main, &t[i]), 0);
	}
	for (i = 0; i < NT; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < NT; i++) {
		cr_assert_eq(t[i].st, OTF2W_OK, "thread %d: %s at event %lu (%s)", i,
			     otf2w_status_str(t[i].st), (unsigned long)t[i].failed_at,
			     otf2w_archive_error(ar));
		cr_assert_eq(t[i].count, n, "thread %d: count %lu", i, (unsigned long)t[i].count);
		cr_assert_eq(t[i].dropped, 0);
	}
	cr_assert(ls.locks > 0, "locking callbacks never used");
	cr_assert_eq(ls.locks, ls.unlocks, "lock/unlock unbalanced: %ld/%ld", ls.locks, ls.unlocks);
	cr_assert_eq(ls.max_depth_err, 0, "lock taken recursively");
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	cr_assert_eq(ls.destroys, ls.creates, "lock destroy callback: %ld destroys for %ld creates",
		     ls.destroys, ls.creates);
	for (i = 0; i < NT; i++)
		ol[i] = (struct oracle_loc){ .loc = locs[i], .region_base = (uint32_t)i * 10,
					     .region_mod = 10, .time_div = 1 };
	oracle_check(dir, ol, NT);
	for (i = 0; i < NT; i++) {
		cr_assert_eq(ol[i].nseq, n, "location %lu: %lu of %lu events",
			     (unsigned long)locs[i], (unsigned long)ol[i].nseq, (unsigned long)n);
		cr_assert_eq(ol[i].nflush, 0);
	}
	rmtree(dir);
}

/* ---- buffer full: flush and stop policies ------------------------------------------------- */

struct flushstat {
	otf2w_flush_type answer;
	uint64_t now;                        /* time of the last event written */
	long pre, pre_final, post;
	uint64_t returned[ORACLE_MAX_FLUSH];
};

static otf2w_flush_type fl_pre(void *ud, uint64_t loc, int final)
{
	struct flushstat *s = ud;

	if (final)
		s->pre_final++;
	else
		s->pre++;
	return s->answer;
}

static uint64_t fl_post(void *ud, uint64_t loc)
{
	struct flushstat *s = ud;
	uint64_t t = s->now + 1;       /* the flush "took" one tick */

	if (s->post < ORACLE_MAX_FLUSH)
		s->returned[s->post] = t;
	s->post++;
	return t;
}

static const otf2w_flush_callbacks fl_cb = { fl_pre, fl_post };

Test(buffer_full, flush_writes_buffer_flush_records, .timeout = 120)
{
	const uint64_t n = 400000;
	char *dir = tmpdir("flush");
	otf2w_archive *ar = open_archive(dir, 262144, 2);
	struct flushstat fs = { .answer = OTF2W_FLUSH };
	struct oracle_loc ol = { .loc = 3, .region_mod = 5, .time_mul = 2 };
	otf2w_evt_writer *w;
	uint64_t loc = 3, k;
	long i;

	OK(otf2w_archive_set_flush(ar, &fl_cb, &fs));
	gdefs(ar, &loc, 1, 5);
	OK(otf2w_archive_get_evt_writer(ar, loc, &w));
	/* times leave room for the BufferFlush stop time (now + 1): k -> 2k */
	for (k = 0; k < n; k++) {
		fs.now = 2 * k;
		OK(k & 1 ? otf2w_evt_leave(w, NULL, 2 * k, (uint32_t)((k / 2) % 5))
			 : otf2w_evt_enter(w, NULL, 2 * k, (uint32_t)((k / 2) % 5)));
	}
	cr_assert_eq(otf2w_evt_writer_dropped(w), 0);
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	cr_assert(fs.pre >= 5, "pre_flush called %ld times for ~%lu MiB of events", fs.pre,
		  (unsigned long)(n * 12 >> 20));
	cr_assert_eq(fs.post, fs.pre, "post_flush %ld times, pre_flush %ld", fs.post, fs.pre);

	{
		char anchor[4096], err[512];

		anchor_of(anchor, sizeof(anchor), dir);
		cr_assert_eq(oracle_read(anchor, &ol, 1, err, sizeof(err)), 0, "%s", err);
	}
	cr_assert_eq(ol.bad, 0, "%lu events differ from the written ones (first at record %lu)",
		     (unsigned long)ol.bad, (unsigned long)ol.first_bad);
	cr_assert_eq(ol.nseq, n, "%lu of %lu events read back", (unsigned long)ol.nseq,
		     (unsigned long)n);
	cr_assert_eq(ol.backwards, 0);
	cr_assert_eq(ol.bad_position, 0, "event positions (chunk header counters) wrong");
	cr_assert_eq((long)ol.nflush, fs.post, "%lu BufferFlush records for %ld flushes",
		     (unsigned long)ol.nflush, fs.post);
	for (i = 0; i < fs.post && i < ORACLE_MAX_FLUSH; i++) {
		cr_assert_eq(ol.flush_stop[i], fs.returned[i], "BufferFlush %ld: stopTime %lu, "
			     "post_flush returned %lu", i, (unsigned long)ol.flush_stop[i],
			     (unsigned long)fs.returned[i]);
		cr_assert(ol.flush_time[i] <= ol.flush_stop[i] && ol.flush_time[i] % 2 == 0,
			  "BufferFlush %ld at %lu (stop %lu)", i, (unsigned long)ol.flush_time[i],
			  (unsigned long)ol.flush_stop[i]);
	}
	otf2_print_ok(dir);
	rmtree(dir);
}

static void stop_run(int resume)
{
	const uint64_t n = 400000;
	char *dir = tmpdir(resume ? "resume" : "stop");
	otf2w_archive *ar = open_archive(dir, 262144, 2);
	struct flushstat fs = { .answer = OTF2W_NO_FLUSH };
	struct oracle_loc ol = { .loc = 9, .region_mod = 5, .time_div = 1, .gaps = 1 };
	otf2w_evt_writer *w;
	uint64_t loc = 9, k, ok = 0, stopped = 0, first_drop = 0, resumed_at = 0, count;

	OK(otf2w_archive_set_flush(ar, &fl_cb, &fs));
	gdefs(ar, &loc, 1, 5);
	OK(otf2w_archive_get_evt_writer(ar, loc, &w));
	for (k = 0; k < n; k++) {
		otf2w_status st = gen_event(w, k, 0, 5, 1);

		if (st == OTF2W_OK) {
			ok++;
		} else if (st == OTF2W_E_STOPPED) {
			if (!stopped++)
				first_drop = k;
			if (resume && !resumed_at && k >= first_drop + 1000) {
				cr_assert_eq(otf2w_evt_writer_stopped(w), 1);
				OK(otf2w_evt_writer_flush(w));
				/* the ON record is at time k: events from k + 1 on */
				OK(otf2w_evt_writer_resume(w, k));
				resumed_at = k;
			}
		} else {
			cr_assert_fail("event %lu: %s (%s)", (unsigned long)k, otf2w_status_str(st),
				       otf2w_archive_error(ar));
		}
	}
	cr_assert(stopped > 0, "no event was dropped: stop-on-full not reached");
	cr_assert(fs.pre >= 1);
	cr_assert_eq(fs.post, 0, "post_flush called although nothing was flushed");
	cr_assert_eq(otf2w_evt_writer_dropped(w), stopped, "dropped counter %lu, %lu E_STOPPED",
		     (unsigned long)otf2w_evt_writer_dropped(w), (unsigned long)stopped);
	count = otf2w_evt_writer_count(w);
	cr_assert_eq(ok + stopped, n);
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);

	oracle_check(dir, &ol, 1);
	cr_assert_eq(ol.nseq, ok, "%lu events in the file, %lu accepted (%lu dropped)",
		     (unsigned long)ol.nseq, (unsigned long)ok, (unsigned long)stopped);
	cr_assert_eq(ol.seq_after_off, 0, "events recorded while OFF");
	/* the writer's count: every record it wrote, its OFF/ON records included */
	cr_assert_eq(count, ol.records, "writer count %lu, %lu records in the file "
		     "(%lu accepted events + %lu OFF + %lu ON)", (unsigned long)count,
		     (unsigned long)ol.records, (unsigned long)ok, (unsigned long)ol.noff,
		     (unsigned long)ol.non);
	cr_assert(ol.noff >= 1, "no MeasurementOnOff(OFF) record");
	cr_assert(ol.off_time >= first_drop - 1 && ol.off_time <= n,
		  "OFF at %lu, first dropped event %lu", (unsigned long)ol.off_time,
		  (unsigned long)first_drop);
	if (!resume) {
		cr_assert_eq(ol.noff, 1);
		cr_assert_eq(ol.non, 0);
		cr_assert_eq(ol.nseq, first_drop, "events before the first drop missing");
	} else {
		cr_assert(resumed_at > 0, "writer never stopped long enough to resume");
		cr_assert(ol.non >= 1, "no MeasurementOnOff(ON) record after resume");
		cr_assert(ol.noff == ol.non || ol.noff == ol.non + 1, "%lu OFF, %lu ON",
			  (unsigned long)ol.noff, (unsigned long)ol.non);
		cr_assert(ol.nseq > first_drop, "no event after the resume");
	}
	otf2_print_ok(dir);
	rmtree(dir);
}

Test(buffer_full, stop_writes_off_record_and_counts_drops, .timeout = 120)
{
	stop_run(0);
}

Test(buffer_full, stop_then_flush_and_resume, .timeout = 120)
{
	stop_run(1);
}

/* ---- chunk boundaries: records of every size straddling chunk ends ----------------------- */

/*
 * Record i (time i): i % 3 == 0: ProgramBegin with (i * 7) % 701 arguments of
 * varying compressed sizes; 1: MpiSend with a msgLength of 1..8 bytes;
 * 2: Enter. Every 5th record carries an attribute list of i % 20 UINT64
 * entries. Sizes vary by single bytes, so over ~40 chunks of 256 KiB the
 * chunk end falls at many different offsets into a record.
 */
#define STR_N 30000

static uint32_t str_arg(uint64_t i, uint32_t j)
{
	return (uint32_t)(((i + j) * 2654435761u) >> (j % 32));
}

static uint64_t str_attr(uint64_t i, uint32_t j)
{
	return (i * 1000003u) << (j * 3 % 60);
}

struct straddle {
	uint64_t n, bad, first_bad, attrs;
};

static void str_check_attrs(struct straddle *s, uint64_t i, OTF2_AttributeList *al)
{
	uint32_t n = al ? OTF2_AttributeList_GetNumberOfElements(al) : 0, j;
	uint32_t want = i % 5 == 0 ? (uint32_t)(i % 20) : 0;

	if (n != want)
		goto bad;
	for (j = 0; j < n; j++) {
		OTF2_AttributeRef a;
		OTF2_Type t;
		OTF2_AttributeValue v;

		if (OTF2_AttributeList_GetAttributeByIndex(al, j, &a, &t, &v) != OTF2_SUCCESS ||
		    a != j || t != OTF2_TYPE_UINT64 || v.uint64 != str_attr(i, j))
			goto bad;
	}
	s->attrs += n;
	return;
bad:
	if (!s->bad++)
		s->first_bad = i;
}

static void str_record(struct straddle *s, uint64_t t, uint64_t pos, int ok)
{
	if (!ok || t != s->n || pos != s->n + 1) {
		if (!s->bad++)
			s->first_bad = s->n;
	}
	s->n++;
}

static OTF2_CallbackCode str_pb(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos, void *ud,
				OTF2_AttributeList *al, OTF2_StringRef name, uint32_t n,
				const OTF2_StringRef *args)
{
	int ok = t % 3 == 0 && name == (uint32_t)(t % 50) && n == (uint32_t)((t * 7) % 701);
	uint32_t j;

	for (j = 0; ok && j < n; j++)
		ok = args[j] == str_arg(t, j);
	str_check_attrs(ud, t, al);
	str_record(ud, t, pos, ok);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode str_send(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos, void *ud,
				  OTF2_AttributeList *al, uint32_t recv, OTF2_CommRef comm,
				  uint32_t tag, uint64_t len)
{
	str_check_attrs(ud, t, al);
	str_record(ud, t, pos, t % 3 == 1 && recv == (uint32_t)t && comm == t % 3 &&
		   tag == (uint32_t)(t * 3) && len == (uint64_t)1 << (t % 64));
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode str_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				   void *ud, OTF2_AttributeList *al, OTF2_RegionRef r)
{
	str_check_attrs(ud, t, al);
	str_record(ud, t, pos, t % 3 == 2 && r == t % 1000);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode str_other(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				   void *ud, OTF2_AttributeList *al)
{
	str_record(ud, t, pos, 0);
	return OTF2_CALLBACK_SUCCESS;
}

Test(chunks, records_of_every_size_straddle_chunk_ends, .timeout = 120)
{
	char *dir = tmpdir("straddle");
	otf2w_archive *ar = open_archive(dir, 262144, 0);
	otf2w_evt_writer *w;
	otf2w_attr_list *al = otf2w_attr_list_new();
	uint32_t *args = malloc(701 * sizeof(*args));
	struct straddle s = { 0 };
	char anchor[4096], path[4200];
	uint64_t loc = 5, i, want_attrs = 0;
	OTF2_Reader *r;
	OTF2_EvtReader *er;
	OTF2_EvtReaderCallbacks *cb;
	struct stat sb;

	cr_assert(al && args);
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, loc, &w));
	for (i = 0; i < STR_N; i++) {
		const otf2w_attr_list *a = NULL;
		uint32_t j, n;

		if (i % 5 == 0 && i % 20) {
			otf2w_attr_list_clear(al);
			for (j = 0; j < i % 20; j++)
				OK(otf2w_attr_list_add_uint64(al, j, str_attr(i, j)));
			want_attrs += i % 20;
			a = al;
		}
		switch (i % 3) {
		case 0:
			n = (uint32_t)((i * 7) % 701);
			for (j = 0; j < n; j++)
				args[j] = str_arg(i, j);
			OK(otf2w_evt_program_begin(w, a, i, (uint32_t)(i % 50), n, args));
			break;
		case 1:
			OK(otf2w_evt_mpi_send(w, a, i, (uint32_t)i, (uint32_t)(i % 3), (uint32_t)(i * 3),
					      (uint64_t)1 << (i % 64)));
			break;
		default:
			OK(otf2w_evt_enter(w, a, i, (uint32_t)(i % 1000)));
		}
	}
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	snprintf(path, sizeof(path), "%s/traces/5.evt", dir);
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert(sb.st_size > 30 * 262144, "only %ld bytes: too few chunk ends", (long)sb.st_size);

	anchor_of(anchor, sizeof(anchor), dir);
	r = OTF2_Reader_Open(anchor);
	cr_assert_not_null(r);
	OTF2_Reader_SetSerialCollectiveCallbacks(r);
	OTF2_Reader_SelectLocation(r, loc);
	cr_assert_eq(OTF2_Reader_OpenEvtFiles(r), OTF2_SUCCESS);
	er = OTF2_Reader_GetEvtReader(r, loc);
	cr_assert_not_null(er);
	cb = OTF2_EvtReaderCallbacks_New();
	OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cb, str_pb);
	OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, str_send);
	OTF2_EvtReaderCallbacks_SetEnterCallback(cb, str_enter);
	OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, str_other);
	OTF2_Reader_RegisterEvtCallbacks(r, er, cb, &s);
	cr_assert_eq(OTF2_Reader_ReadAllLocalEvents(r, er, &i), OTF2_SUCCESS, "reference reader failed");
	OTF2_EvtReaderCallbacks_Delete(cb);
	OTF2_Reader_Close(r);
	cr_assert_eq(s.n, STR_N, "%lu of %d records read back", (unsigned long)s.n, STR_N);
	cr_assert_eq(s.bad, 0, "%lu records differ, first: record %lu", (unsigned long)s.bad,
		     (unsigned long)s.first_bad);
	cr_assert_eq(s.attrs, want_attrs, "%lu of %lu attributes read back", (unsigned long)s.attrs,
		     (unsigned long)want_attrs);
	otf2w_attr_list_delete(al);
	free(args);
	rmtree(dir);
}

/* ---- malformed use ------------------------------------------------------------------------ */

Test(misuse, out_of_order_timestamps)
{
	char *dir = tmpdir("order");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_evt_writer *w;
	uint64_t loc = 0;
	struct oracle_loc ol = { .loc = 0, .time_div = 1 };
	char anchor[4096], err[512];

	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 100, 0));
	cr_assert_eq(otf2w_evt_enter(w, NULL, 99, 0), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_mpi_send(w, NULL, 5, 1, 0, 2, 3), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 0, 0), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_writer_last_time(w), 100);
	OK(otf2w_evt_leave(w, NULL, 100, 0));     /* equal time is fine */
	cr_assert_eq(otf2w_evt_writer_count(w), 2);
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	anchor_of(anchor, sizeof(anchor), dir);
	cr_assert_eq(oracle_read(anchor, &ol, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ol.records, 2, "%lu records, expected Enter and Leave at 100",
		     (unsigned long)ol.records);
	cr_assert_eq(ol.nseq, 2);
	cr_assert_eq(ol.backwards, 0);
	cr_assert_eq(ol.last_time, 100);
	otf2_print_ok(dir);
	rmtree(dir);
}

Test(misuse, wrong_order_of_calls)
{
	char *dir = tmpdir("calls");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_evt_writer *w, *w2;
	otf2w_status st;
	uint64_t loc = 0;
	static const otf2w_locking_callbacks cb = { NULL, NULL, lk_lock, lk_unlock };
	struct lockstat ls = { .m = PTHREAD_MUTEX_INITIALIZER };

	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w2));
	cr_assert_eq(w, w2, "two writers for one location");
	/* locking callbacks after the first writer: too late */
	cr_assert_eq(otf2w_archive_set_locking(ar, &cb, &ls), OTF2W_E_INVALID_CALL);
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	OK(otf2w_archive_close_evt_writer(ar, w));
	cr_assert_eq(otf2w_evt_leave(w, NULL, 2, 0), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_mpi_recv(w, NULL, 3, 0, 0, 0, 0), OTF2W_E_INVALID_CALL);
	cr_assert_eq(otf2w_evt_writer_flush(w), OTF2W_E_INVALID_CALL);
	st = otf2w_archive_close_evt_writer(ar, w);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_INVALID_CALL, "second close: %s",
		  otf2w_status_str(st));
	cr_assert_eq(otf2w_evt_writer_count(w), 1);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2_print_ok(dir);
	rmtree(dir);
}

Test(misuse, null_and_invalid_arguments)
{
	char *dir = tmpdir("null");
	otf2w_archive_params p;
	otf2w_archive *ar = NULL;
	otf2w_evt_writer *w;
	otf2w_gdef_writer *g;
	otf2w_status st;
	uint64_t loc = 0;

	memset(&p, 0, sizeof(p));
	cr_assert_eq(otf2w_archive_open(NULL, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);  /* no path */
	p.path = dir;
	p.event_chunk_size = 1000;                   /* below 256 KiB */
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.event_chunk_size = 1ull << 25;             /* above 16 MiB */
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.event_chunk_size = 0;
	p.def_chunk_size = 262143;
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	p.def_chunk_size = 0;
	p.name = "a/b";
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_null(ar);

	ar = open_archive(dir, 0, 0);
	cr_assert_eq(otf2w_archive_get_evt_writer(NULL, 0, &w), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, NULL), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_mpi_send(NULL, NULL, 1, 0, 0, 0, 0), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_close_evt_writer(ar, NULL), OTF2W_E_INVALID_ARGUMENT);
	OK(otf2w_archive_get_gdef_writer(ar, &g));
	/* a NULL string: refused, or written as "" (checked below) */
	st = otf2w_gdef_string(g, 999, NULL);
	cr_assert(st == OTF2W_E_INVALID_ARGUMENT || st == OTF2W_OK,
		  "String def with a NULL string: %s", otf2w_status_str(st));
	cr_assert_eq(otf2w_gdef_string(NULL, 0, "x"), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_archive_set_trace_id(NULL, 1), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_attr_list_add(NULL, 0, OTF2W_TYPE_UINT8, 1), OTF2W_E_INVALID_ARGUMENT);
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	OK(otf2w_evt_leave(w, NULL, 2, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);  /* closes the open writer */
	otf2_print_ok(dir);
	if (st == OTF2W_OK)
		cr_assert_eq(sh("otf2-print -G '%s/traces.otf2' | grep -Eq '^STRING +999  \"\"$'",
				dir), 0, "NULL string accepted but not written as \"\"");
	rmtree(dir);
}

/* the inline Enter/Leave fast path must also refuse a NULL writer (otf2w.h:
 * "NULL writer" -> OTF2W_E_INVALID_ARGUMENT) */
Test(misuse, null_writer_enter_leave)
{
	cr_assert_eq(otf2w_evt_enter(NULL, NULL, 1, 0), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_leave(NULL, NULL, 1, 0), OTF2W_E_INVALID_ARGUMENT);
}

Test(misuse, unwritable_directory_reports_path)
{
	char *dir = tmpdir("unwritable");
	char file[4096], path[4200];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	otf2w_status st;
	uint64_t loc = 0;
	const char *e;
	FILE *f;

	/* a path below a regular file can never be created (even as root) */
	snprintf(file, sizeof(file), "%s/plainfile", dir);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub/archive", file);
	{
		otf2w_archive_params p = { .path = path };

		st = otf2w_archive_open(&p, &ar);
		if (st != OTF2W_OK) {      /* may fail right away */
			cr_assert_eq(st, OTF2W_E_IO, "open: %s", otf2w_status_str(st));
			rmtree(dir);
			return;
		}
	}
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	st = otf2w_evt_enter(w, NULL, 1, 0);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_IO, "enter: %s", otf2w_status_str(st));
	st = otf2w_evt_writer_flush(w);
	cr_assert_eq(st, OTF2W_E_IO, "flush to an impossible directory: %s", otf2w_status_str(st));
	e = otf2w_archive_error(ar);
	cr_assert_not_null(e);
	cr_assert(strstr(e, file) != NULL, "error text without the path: \"%s\"", e);
	cr_assert(strstr(e, strerror(ENOTDIR)) != NULL, "error text without errno text: \"%s\"", e);
	/* further use: statuses, no crash */
	st = otf2w_evt_leave(w, NULL, 2, 0);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_IO || st == OTF2W_E_STOPPED, "leave: %s",
		  otf2w_status_str(st));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_E_IO);
	rmtree(dir);
}

Test(misuse, invalid_anchor_property_rejected)
{
	static const char *const bad[] = {
		"", "NOCOLON", "A::", "::B", "A:::B", "A::B::", "A::B C", "A::B-C", "A::ü",
		"A:B", "A::B\n",
	};
	static const char *const good[] = { "A::B", "tracer::config::SAMPLING_hz", "X1::Y_2" };
	char *dir = tmpdir("prop");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	uint64_t loc = 0;
	otf2w_evt_writer *w;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(otf2w_archive_set_property(ar, bad[i], "v"), OTF2W_E_INVALID_ARGUMENT,
			     "property name \"%s\" accepted", bad[i]);
	cr_assert_eq(otf2w_archive_set_property(ar, NULL, "v"), OTF2W_E_INVALID_ARGUMENT);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		OK(otf2w_archive_set_property(ar, good[i], "value ü"));
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 1, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2_print_ok(dir);
	cr_assert_eq(sh("otf2-print -I '%s/traces.otf2' | grep -q 'TRACER::CONFIG::SAMPLING_HZ'",
			dir), 0, "valid property not in the anchor");
	cr_assert_eq(sh("test $(otf2-print -I '%s/traces.otf2' | grep -c '^Property name') -eq 3",
			dir), 0, "anchor does not hold exactly the 3 valid properties");
	rmtree(dir);
}

Test(misuse, exclusive_open_of_existing_archive)
{
	char *dir = tmpdir("excl");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_archive_params p;
	otf2w_archive *ar2 = NULL;
	uint64_t loc = 0;

	gdefs(ar, &loc, 1, 1);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	memset(&p, 0, sizeof(p));
	p.path = dir;
	p.exclusive = 1;
	cr_assert_eq(otf2w_archive_open(&p, &ar2), OTF2W_E_EXISTS);
	cr_assert_null(ar2);
	otf2_print_ok(dir);       /* the location without a writer got an empty .evt */
	rmtree(dir);
}

Test(misuse, record_too_large)
{
	char *dir = tmpdir("large");
	otf2w_archive *ar = open_archive(dir, 262144, 0);
	otf2w_evt_writer *w;
	otf2w_gdef_writer *g;
	uint32_t *args = calloc(100000, sizeof(*args));
	char *big = malloc(300001);
	uint64_t loc = 0;
	struct oracle_loc ol = { .loc = 0, .time_div = 1 };

	cr_assert(args && big);
	memset(big, 'y', 300000);
	big[300000] = 0;
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_gdef_writer(ar, &g));
	/* 300 KB string in a 4 MiB def chunk is fine ... */
	OK(otf2w_gdef_string(g, 100, big));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 0, 0));
	/* ... 100000 x 5-byte string refs in a 256 KiB event chunk is not */
	memset(args, 0xee, 100000 * sizeof(*args));
	cr_assert_eq(otf2w_evt_program_begin(w, NULL, 1, 1, 100000, args),
		     OTF2W_E_RECORD_TOO_LARGE);
	OK(otf2w_evt_leave(w, NULL, 1, 0));
	cr_assert_eq(otf2w_evt_writer_count(w), 2);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	oracle_check(dir, &ol, 1);
	cr_assert_eq(ol.nseq, 2);
	otf2_print_ok(dir);
	free(args);
	free(big);
	rmtree(dir);
}

Test(misuse, empty_mapping_table)
{
	char *dir = tmpdir("emptymap");
	otf2w_archive *ar = open_archive(dir, 0, 0);
	otf2w_def_writer *d;
	otf2w_evt_writer *w;
	otf2w_id_map *m = otf2w_id_map_new(1, 0);
	otf2w_status st;
	uint64_t loc = 0;

	cr_assert_not_null(m);
	gdefs(ar, &loc, 1, 1);
	OK(otf2w_archive_get_def_writer(ar, 0, &d));
	/* an empty map makes the reference reader fail: must be refused, or
	 * at least not break the archive */
	st = otf2w_ldef_mapping_table(d, OTF2W_MAP_REGION, m);
	cr_assert(st == OTF2W_OK || st == OTF2W_E_INVALID_ARGUMENT, "%s", otf2w_status_str(st));
	OK(otf2w_archive_close_def_writer(ar, d));
	OK(otf2w_archive_get_evt_writer(ar, 0, &w));
	OK(otf2w_evt_enter(w, NULL, 0, 0));
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2w_id_map_delete(m);
	cr_assert_eq(sh("otf2-print -M '%s/traces.otf2' >/dev/null 2>&1", dir), 0,
		     "archive with an empty mapping table is unreadable (st=%s)",
		     otf2w_status_str(st));
	rmtree(dir);
}
