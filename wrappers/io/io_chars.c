/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_chars.c - per-character stream calls folded into counts
 * (TRACER_IO_CHARS=fold, the default).
 *
 * fgetc, getc, getchar, fputc, putc, putchar (and their _unlocked forms)
 * move one byte each: recorded one by one they cost four records and two
 * timestamps per byte (a program writing 100 MB with putc would write
 * gigabytes of trace). Folded, such a call writes no record: the thread
 * counts the calls and their bytes, per ISO C handle and direction (no
 * clock is read: two reads would cost five times the call). The counts are
 * written as one Metric record of the class "ISO C character reads" or
 * "ISO C character writes" (members: calls, bytes; RELATIVE_LAST: since the
 * previous record of the class on the location) carrying the handle in the attribute TRACER::ISOC_HANDLE
 * (type IoHandle), when the thread turns to another handle or direction,
 * before its next recorded I/O call and when it ends (not after a crash,
 * nor for a thread still running at exit). `tracer report` adds them to
 * the handle's file. TRACER_IO_CHARS=all records every call as the other
 * transfers.
 */
#include <stdint.h>
#include "tracer.h"
#include "io_int.h"

int io_chars_fold;
TR_TLS struct io_chars io_chars_tls;
static uint32_t chars_class[2] = { UINT32_MAX, UINT32_MAX }, chars_attr = UINT32_MAX;

#define IO_CHARS_MEMBERS 2

void io_chars_init(void)
{
	io_chars_fold = !io_chars_all;
}

/* The definitions, at the first folded call (an archive without one has
 * none of them). Two threads may both get here: the registry gives both
 * the same ids. */
static void chars_define(void)
{
	static const char *const what[2][3] = {
		{ "ISO C character reads", "ISO C character read calls", "ISO C characters read" },
		{ "ISO C character writes", "ISO C character write calls", "ISO C characters written" },
	};
	uint32_t cls[2];
	for (int d = 0; d < 2; d++) {
		uint32_t m[IO_CHARS_MEMBERS];
		m[0] = tr_def_metric_member(what[d][1], d ? "fputc/putc/putchar calls (and their _unlocked forms) "
						       "on the handle, since the previous record"
						     : "fgetc/getc/getchar calls (and their _unlocked forms) on the "
						       "handle, since the previous record",
					    OTF2W_METRIC_TYPE_OTHER, OTF2W_METRIC_RELATIVE_LAST, OTF2W_TYPE_UINT64,
					    OTF2W_BASE_DECIMAL, 0, "#");
		m[1] = tr_def_metric_member(what[d][2], "bytes those calls moved", OTF2W_METRIC_TYPE_OTHER,
					    OTF2W_METRIC_RELATIVE_LAST, OTF2W_TYPE_UINT64, OTF2W_BASE_DECIMAL, 0, "B");
		cls[d] = tr_def_metric_class(IO_CHARS_MEMBERS, m, OTF2W_METRIC_ASYNCHRONOUS, OTF2W_RECORDER_CPU);
	}
	chars_class[0] = cls[0];
	chars_class[1] = cls[1];
	uint32_t a = tr_def_attribute("TRACER::ISOC_HANDLE", "the ISO C handle whose character calls a Metric "
				      "record of \"ISO C character reads\" or \"... writes\" counts",
				      OTF2W_TYPE_IO_HANDLE);
	__atomic_store_n(&chars_attr, a, __ATOMIC_RELEASE);   /* last: the classes are set */
}

void io_chars_defs_freeze(void)
{
	if (io_chars_fold && __atomic_load_n(&chars_attr, __ATOMIC_ACQUIRE) == UINT32_MAX)
		chars_define();
}

/* The counts as one Metric record at `time` (t: the calling thread, guard
 * held). */
static void chars_write(struct tr_thread *t, uint64_t time)
{
	static const uint8_t types[IO_CHARS_MEMBERS] = { OTF2W_TYPE_UINT64, OTF2W_TYPE_UINT64 };
	struct io_chars *c = &io_chars_tls;
	otf2w_metric_value v[IO_CHARS_MEMBERS];
	v[0].unsigned_int = c->calls;
	v[1].unsigned_int = c->bytes;
	c->calls = 0;
	c->bytes = 0;
	if (__atomic_load_n(&chars_attr, __ATOMIC_ACQUIRE) == UINT32_MAX)
		return;
	if (!c->al)
		c->al = otf2w_attr_list_new();
	if (c->al) {
		otf2w_attr_list_clear(c->al);
		if (otf2w_attr_list_add(c->al, chars_attr, OTF2W_TYPE_IO_HANDLE, c->h) != OTF2W_OK)
			otf2w_attr_list_clear(c->al);
	}
	if (tr_rec_begin(t)) {
		tr_evt_status(t, otf2w_evt_metric(t->w, c->al, time, chars_class[c->write], IO_CHARS_MEMBERS, types,
						  v));
		tr_rec_end(t);
	}
}

void io_chars_flush(struct tr_thread *t, uint64_t time)
{
	chars_write(t, time);
}

void io_chars_add_slow(struct tr_thread *t, uint32_t h, int write)
{
	if (__atomic_load_n(&chars_attr, __ATOMIC_ACQUIRE) == UINT32_MAX)
		chars_define();
	if (io_chars_tls.calls)
		chars_write(t, tr_time());   /* another handle or direction: the counts so far first */
	io_chars_tls.h = h;
	io_chars_tls.write = (uint8_t)write;
}

/* The thread ends (the io module's thread_ending: on the thread, before
 * its ThreadEnd): what it counted since its last record. The counts of a
 * thread still running at exit, and those of a crash, are not written. */
void io_chars_thread_ending(struct tr_thread *t)
{
	if (io_chars_tls.calls && t && t->w && t == tr_thread_peek())
		chars_write(t, tr_time());
}

/* Fork child: the parent's counts are not the child's. */
void io_chars_fork_child(void)
{
	io_chars_tls.calls = 0;
	io_chars_tls.bytes = 0;
}
