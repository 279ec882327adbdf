/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e2e.c - end-to-end tests of the OTF2 writer (format/): archives written
 * with otf2w, read back with the reference reader (libotf2 via oracle.c,
 * otf2-print): scale, threads, buffer-full policies, chunk ends (malformed
 * use: e2e_misuse.c; the helpers: e2e_util.c).
 */
#include "e2e.h"

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
