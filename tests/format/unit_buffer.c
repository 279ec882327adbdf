/* SPDX-License-Identifier: BSD-3-Clause */
/* unit_buffer.c - chunked event buffers: chunk layout rules (otf2-format.md
 * §3), bounded memory, pre/post flush (FLUSH and NO_FLUSH), resume,
 * time going backwards, records too large. */
#include <criterion/criterion.h>

#include "unit_util.h"

#define CHUNK 262144u

struct cbstate {
	int mode;                 /* answer of pre_flush */
	int pre_calls;
	int pre_final_calls;
	int post_calls;
	uint64_t stop_time;
	long allocs;              /* live chunks from the memory callbacks */
	long max_allocs;
};

static otf2w_flush_type pre(void *ud, uint64_t loc, int final)
{
	struct cbstate *s = ud;
	if (final)
		s->pre_final_calls++;
	else
		s->pre_calls++;
	return s->mode ? OTF2W_FLUSH : OTF2W_NO_FLUSH;
}

static uint64_t post(void *ud, uint64_t loc)
{
	struct cbstate *s = ud;
	s->post_calls++;
	return s->stop_time;
}

static void *m_alloc(void *ud, size_t size)
{
	struct cbstate *s = ud;
	if (size == CHUNK) {	/* event chunks (definition chunks are 2 * CHUNK) */
		s->allocs++;
		if (s->allocs > s->max_allocs)
			s->max_allocs = s->allocs;
	}
	return aligned_alloc(64, size);
}

static void m_free(void *ud, void *c, size_t size)
{
	struct cbstate *s = ud;
	if (size == CHUNK)
		s->allocs--;
	free(c);
}

static otf2w_archive *open_ar(const char *dir, uint32_t max_chunks, struct cbstate *s)
{
	otf2w_archive *ar;
	otf2w_archive_params p = { .path = dir, .event_chunk_size = CHUNK,
				   .def_chunk_size = 2 * CHUNK, .max_chunks = max_chunks };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	if (s) {
		otf2w_flush_callbacks fc = { pre, post };
		otf2w_memory_callbacks mc = { m_alloc, m_free };
		cr_assert_eq(otf2w_archive_set_flush(ar, &fc, s), OTF2W_OK);
		cr_assert_eq(otf2w_archive_set_memory(ar, &mc, s), OTF2W_OK);
	}
	ut_defs(ar, 1, 300);
	return ar;
}

/* Walk an .evt file: check every chunk header, counters, that each chunk
 * starts with a timestamp record, 00 fill, one free byte, 02 01 end.
 * Returns the number of event records (Enter/Leave/BufferFlush/OnOff). */
static uint64_t check_evt_file(const char *path, uint64_t *nchunks)
{
	size_t n;
	uint8_t *d = ut_read(path, &n);
	cr_assert_not_null(d, "%s missing", path);
	uint64_t events = 0;
	size_t nch = n / CHUNK + 1;
	int ended = 0;
	for (size_t c = 0; c < nch && !ended; c++) {
		uint8_t *ch = d + c * CHUNK;
		size_t len = c + 1 < nch ? CHUNK : n - c * CHUNK;
		if (len == 0)
			break;
		cr_assert(c + 1 == nch || len == CHUNK, "chunk %zu not full size", c);
		cr_assert_eq(ch[0], 0x03, "chunk %zu: no header", c);
		cr_assert_eq(ch[1], 0x42);
		uint64_t first, last;
		memcpy(&first, ch + 2, 8);
		memcpy(&last, ch + 10, 8);
		cr_assert_eq(first, events + 1, "chunk %zu first %llu want %llu", c,
			     (unsigned long long)first, (unsigned long long)events + 1);
		size_t i = 18;
		if (ch[i] != 0x02)
			cr_assert_eq(ch[i], 0x05, "chunk %zu does not start with a timestamp", c);
		while (i < len) {
			uint8_t t = ch[i];
			if (t == 0x00) {
				for (size_t k = i; k < len; k++)
					cr_assert_eq(ch[k], 0, "chunk %zu: fill not 00", c);
				break;
			}
			if (t == 0x02) {
				ended = 1;
				cr_assert(i + 2 >= len, "data after end of file");
				break;
			}
			switch (t) {
			case 0x05: i += 9; continue;
			case 12: case 13:
				i += 2 + (ch[i + 1] == 0xff ? 0 : ch[i + 1]);
				break;
			case 10: case 11:
				i += 2 + ch[i + 1];
				break;
			default:
				cr_assert_fail("unexpected record %u at %zu", t, i);
			}
			events++;
			cr_assert(i < len || (c + 1 == nch), "record reaches the chunk end");
			cr_assert(i <= CHUNK - 1, "no free byte at chunk end");
		}
		cr_assert_eq(last, events, "chunk %zu last %llu want %llu", c,
			     (unsigned long long)last, (unsigned long long)events);
	}
	cr_assert(ended, "no 02 end marker");
	cr_assert_eq(d[n - 2], 0x02);
	cr_assert_eq(d[n - 1], 0x01);
	free(d);
	*nchunks = nch;
	return events;
}

Test(buffer, many_chunks_unbounded_flush)
{
	char dir[512], path[600];
	struct cbstate s = { .mode = 1, .stop_time = 0 };
	ut_tmpdir(dir, sizeof(dir), "chunks");
	otf2w_archive *ar = open_ar(dir, 3, &s);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	const uint64_t N = 300000;
	for (uint64_t i = 0; i < N; i++) {
		s.stop_time = 100 + i * 10 + 5;
		otf2w_status st = (i & 1) ? otf2w_evt_leave(w, NULL, 100 + i * 10, (uint32_t)(i / 2 % 300))
					  : otf2w_evt_enter(w, NULL, 100 + i * 10, (uint32_t)(i / 2 % 300));
		cr_assert_eq(st, OTF2W_OK, "event %llu: %s", (unsigned long long)i, otf2w_status_str(st));
	}
	cr_assert_leq(s.max_allocs, 3, "more chunks than the budget: %ld", s.max_allocs);
	cr_assert_gt(s.pre_calls, 0);
	cr_assert_eq(s.post_calls, s.pre_calls);
	uint64_t count = otf2w_evt_writer_count(w);
	cr_assert_eq(count, N + (uint64_t)s.post_calls);
	cr_assert_eq(otf2w_evt_writer_dropped(w), 0);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	cr_assert_eq(s.pre_final_calls, 1);
	cr_assert_eq(s.allocs, 0, "chunks leaked: %ld", s.allocs);

	uint64_t nch;
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir);
	cr_assert_eq(check_evt_file(path, &nch), count);
	cr_assert_gt(nch, 10);

	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), (long)N / 2);
	cr_assert_eq(ut_count(out, "\nLEAVE "), (long)N / 2);
	cr_assert_eq(ut_count(out, "\nBUFFER_FLUSH "), s.post_calls);
	free(out);
	ut_rmrf(dir);
}

Test(buffer, no_flush_stops_and_counts)
{
	char dir[512], path[600];
	struct cbstate s = { .mode = 0 };
	ut_tmpdir(dir, sizeof(dir), "stop");
	otf2w_archive *ar = open_ar(dir, 2, &s);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	uint64_t ok = 0, stopped = 0;
	const uint64_t N = 200000;
	for (uint64_t i = 0; i < N; i++) {
		otf2w_status st = (i & 1) ? otf2w_evt_leave(w, NULL, 100 + i, 7)
					  : otf2w_evt_enter(w, NULL, 100 + i, 7);
		if (st == OTF2W_OK) {
			cr_assert_eq(stopped, 0, "event written after stop");
			ok++;
		} else {
			cr_assert_eq(st, OTF2W_E_STOPPED);
			stopped++;
		}
	}
	cr_assert_gt(stopped, 0);
	cr_assert_eq(ok + stopped, N);
	cr_assert_eq(otf2w_evt_writer_dropped(w), stopped);
	cr_assert(otf2w_evt_writer_stopped(w));
	cr_assert_eq(s.pre_calls, 1);
	cr_assert_leq(s.max_allocs, 2);
	cr_assert_eq(otf2w_evt_writer_count(w), ok + 1);	/* + MeasurementOnOff */
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);

	uint64_t nch;
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir);
	cr_assert_eq(check_evt_file(path, &nch), ok + 1);
	cr_assert_eq(nch, 2);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "MEASUREMENT_ON_OFF"), 1);
	cr_assert_eq(ut_count(out, "Mode: OFF"), 1);
	cr_assert_eq(ut_count(out, "\nENTER ") + ut_count(out, "\nLEAVE "), (long)ok);
	free(out);
	ut_rmrf(dir);
}

Test(buffer, resume_after_flush)
{
	char dir[512];
	struct cbstate s = { .mode = 0 };
	ut_tmpdir(dir, sizeof(dir), "resume");
	otf2w_archive *ar = open_ar(dir, 1, &s);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	uint64_t t = 1, ok = 0;
	while (otf2w_evt_enter(w, NULL, t++, 1) == OTF2W_OK)
		ok++;
	cr_assert(otf2w_evt_writer_stopped(w));
	cr_assert_eq(otf2w_evt_writer_resume(w, t), OTF2W_OK);
	cr_assert(otf2w_evt_writer_stopped(w), "resumed without free chunks");
	cr_assert_eq(otf2w_evt_writer_flush(w), OTF2W_OK);
	cr_assert(!otf2w_evt_writer_stopped(w));
	cr_assert_eq(otf2w_evt_leave(w, NULL, t + 1, 1), OTF2W_OK);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "Mode: OFF"), 1);
	cr_assert_eq(ut_count(out, "Mode: ON"), 1);
	cr_assert_eq(ut_count(out, "\nENTER "), (long)ok);
	cr_assert_eq(ut_count(out, "\nLEAVE "), 1);
	free(out);
	ut_rmrf(dir);
}

Test(buffer, time_backwards_rejected)
{
	char dir[512];
	ut_tmpdir(dir, sizeof(dir), "back");
	otf2w_archive *ar = open_ar(dir, 4, NULL);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	cr_assert_eq(otf2w_evt_enter(w, NULL, 100, 1), OTF2W_OK);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 99, 1), OTF2W_E_TIME_BACKWARDS);
	cr_assert(strstr(otf2w_archive_error(ar), "location 0") != NULL, "%s", otf2w_archive_error(ar));
	cr_assert_eq(otf2w_evt_mpi_send(w, NULL, 50, 1, 0, 0, 0), OTF2W_E_TIME_BACKWARDS);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 100, 1), OTF2W_OK);
	cr_assert_eq(otf2w_evt_writer_count(w), 2);
	cr_assert_eq(otf2w_evt_writer_last_time(w), 100);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "\nENTER "), 1);
	cr_assert_eq(ut_count(out, "\nLEAVE "), 1);
	cr_assert_eq(ut_count(out, "MPI_SEND"), 0);
	free(out);
	ut_rmrf(dir);
}

Test(buffer, long_records_and_too_large)
{
	char dir[512];
	ut_tmpdir(dir, sizeof(dir), "long");
	otf2w_archive *ar = open_ar(dir, 4, NULL);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	/* ProgramBegin with 100 arguments: payload > 255 -> long length form */
	uint32_t args[100];
	for (int i = 0; i < 100; i++)
		args[i] = 2 + (uint32_t)i;
	cr_assert_eq(otf2w_evt_program_begin(w, NULL, 10, 2, 100, args), OTF2W_OK);
	/* an attribute list with 40 entries (long form too) */
	otf2w_attr_list *al = otf2w_attr_list_new();
	for (uint32_t i = 0; i < 40; i++)
		cr_assert_eq(otf2w_attr_list_add(al, i, OTF2W_TYPE_UINT32, i * 1000), OTF2W_OK);
	cr_assert_eq(otf2w_attr_list_add(al, 3, OTF2W_TYPE_UINT32, 1), OTF2W_E_INVALID_ARGUMENT);
	cr_assert_eq(otf2w_evt_enter(w, al, 20, 1), OTF2W_OK);
	/* too large for a chunk */
	static uint32_t huge[70000];
	cr_assert_eq(otf2w_evt_program_begin(w, NULL, 30, 2, 70000, huge), OTF2W_E_RECORD_TOO_LARGE);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 40, 1), OTF2W_OK);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2w_attr_list_delete(al);
	int rc;
	char *out = ut_print(dir, "", &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(ut_count(out, "PROGRAM_BEGIN"), 1);
	cr_assert_eq(ut_count(out, "100 Arguments"), 1);
	cr_assert_eq(ut_count(out, "ADDITIONAL ATTRIBUTES"), 1);
	cr_assert_eq(ut_count(out, "; UINT32; 39000)"), 1);
	free(out);
	ut_rmrf(dir);
}

/* otf2w_evt_writer_room: 0 before the first chunk, shrinks
 * by exactly the bytes of each record, a record that fits never switches
 * chunks, and 0 once the location is stopped. */
Test(buffer, writer_room)
{
	char dir[512];
	struct cbstate s = { .mode = 0 };
	ut_tmpdir(dir, sizeof(dir), "room");
	otf2w_archive *ar = open_ar(dir, 1, &s);
	otf2w_evt_writer *w;
	cr_assert_eq(otf2w_evt_writer_room(NULL), 0);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	cr_assert_eq(otf2w_evt_writer_room(w), 0, "room before the first chunk");
	cr_assert_eq(otf2w_evt_enter(w, NULL, 100, 7), OTF2W_OK);
	size_t r0 = otf2w_evt_writer_room(w);
	cr_assert_gt(r0, CHUNK / 2);
	cr_assert_lt(r0, CHUNK);
	/* Leave at a new time: timestamp record (9) + type (1) + length (1) + cu32 7 (1) */
	cr_assert_eq(otf2w_evt_leave(w, NULL, 101, 7), OTF2W_OK);
	cr_assert_eq(otf2w_evt_writer_room(w), r0 - 12);
	cr_assert_eq(otf2w_evt_writer_last_time(w), 101);
	/* fill while a record fits: room only shrinks, no pre_flush */
	uint64_t t = 102;
	while (otf2w_evt_writer_room(w) >= OTF2W__SINGLETON32_MAX) {
		size_t before = otf2w_evt_writer_room(w);
		cr_assert_eq(otf2w_evt_enter(w, NULL, t++, 7), OTF2W_OK);
		cr_assert_lt(otf2w_evt_writer_room(w), before);
	}
	cr_assert_eq(s.pre_calls, 0, "a record that fit switched chunks");
	/* the budget (one chunk) is used up: the next records stop the location */
	for (int i = 0; i < 4; i++)
		(void)otf2w_evt_enter(w, NULL, t++, 7);
	cr_assert(otf2w_evt_writer_stopped(w));
	cr_assert_eq(otf2w_evt_writer_room(w), 0, "room while stopped");
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	ut_rmrf(dir);
}
