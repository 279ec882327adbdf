/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover_evt.c - event surgery of `tracer recover` (recover.c): a killed
 * location's event file cut after its last whole record and completed,
 * read with format/'s chunk decoder (otf2r_chunk_*) and completed with
 * its record encoders (otf2w_evt_put_*).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "otf2r.h"
#include "otf2w.h"
#include "otf2w_stage.h"
#include "recover_int.h"

static void put_header(uint8_t *c, uint64_t first, uint64_t last)
{
	c[0] = 0x03;
	c[1] = 0x42;
	memcpy(c + 2, &first, 8);
	memcpy(c + 10, &last, 8);
}

/* Fix one event file; master: ProgramEnd (at end_at, when that is later
 * than its own last record). -1 on an I/O error. */
int fix_evt(const char *path, const struct tr_durable_slot *slot, int master, uint64_t cs, uint64_t end_at,
		   struct loc_result *res)
{
	/* chunks past the first were recorded in a staging file: its chunk
	 * goes into the file first */
	(void)otf2w_durable_settle(path);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	memset(res, 0, sizeof(*res));
	uint64_t size = (uint64_t)st.st_size;
	uint8_t *buf = calloc(1, cs + 64);
	/* completed by the process: cut right after its end (02 01). A file
	 * whose last chunk is only partly reserved (a location's first window:
	 * preload reserves 64 KiB of it first; a nearly full disk) has zeros
	 * there instead: the process was killed. */
	uint8_t tail[2] = { 0, 0 };
	int completed = size % cs != 0 && size >= 2 && read_full(fd, tail, 2, (off_t)(size - 2)) == 2 &&
			tail[0] == 0x02 && tail[1] == 0x01;
	if (completed) {
		/* ended by the process itself (cut after 02 01), perhaps after
		 * the last tick: its last time (ClockProperties cover it) */
		for (uint64_t c = size / cs + 1; buf && c-- > 0 && !res->last_time && c + 2 > size / cs;) {
			uint64_t len = size - c * cs < cs ? size - c * cs : cs;
			otf2r_chunk *k = read_full(fd, buf, len, (off_t)(c * cs)) == (int)len ? otf2r_chunk_open(buf, len, OTF2R_CHUNK_EVENTS) : NULL;
			if (!k)
				break;
			otf2r_chunk_rec r;
			while (otf2r_chunk_next(k, &r) > 0)
				;
			res->last_time = otf2r_chunk_time(k);
			otf2r_chunk_close(k);
		}
		free(buf);
		close(fd);
		return 1;
	}
	uint32_t *stack = NULL;
	size_t depth = 0, cap = 0;
	int begin = 0, end = 0, ret = 0;
	/* a thread's ThreadBegin (its contingent and sequence count) and
	 * whether its ThreadEnd is in: recovered, it ends with one */
	int tbegin = 0, tend = 0;
	uint64_t tcont = 0, tseq = 0;
	uint64_t cut_chunk = 0, cut_bytes = HDR, chunk_first = 1, nev = 0, k;
	if (slot && slot->state == TR_DURABLE_VALID && slot->chunk * cs + slot->bytes <= size && slot->bytes >= HDR &&
	    slot->bytes <= cs) {
		cut_chunk = slot->chunk;
		cut_bytes = slot->bytes;
	}
	size_t pos = HDR;
	/* an MPI or RMA collective begun and not ended (a rank killed inside
	 * it): where its Begin is, to cut the stream there (the End's
	 * operation and communicator are not known); the region's Leave then
	 * closes the call */
	int coll_open = 0;
	uint64_t coll_chunk = 0, coll_nev = 0;
	size_t coll_pos = 0;
	uint32_t coll_depth = 0;
	for (k = 0; k <= cut_chunk && size > 0; k++) {
		/* (the last chunk may be reserved in part: the rest reads as zeros) */
		uint64_t have = k * cs < size ? (size - k * cs < cs ? size - k * cs : cs) : 0;
		memset(buf + have, 0, cs - have);
		if (!have || read_full(fd, buf, have, (off_t)(k * cs)) != (int)have || buf[0] != 0x03) {
			/* unreadable chunk: the file ends before it */
			cut_chunk = k ? k - 1 : 0;
			break;
		}
		uint64_t lim = k == cut_chunk ? cut_bytes : cs;
		chunk_first = nev + 1;
		pos = HDR;
		otf2r_chunk *ch = otf2r_chunk_open(buf, lim, OTF2R_CHUNK_EVENTS);
		otf2r_chunk_rec r;
		while (ch && otf2r_chunk_next(ch, &r) > 0) {
			pos = r.off + r.len;   /* after the last whole record */
			if (r.type == 5)
				res->last_time = r.time;
			if (r.type == 5 || r.type == 6)
				continue;   /* (a timestamp, an attribute list: no events) */
			nev++;
			if (r.type == OTF2R_EVT_ENTER) {
				if (depth == cap) {
					cap = cap ? 2 * cap : 64;
					stack = realloc(stack, cap * sizeof(*stack));
					if (!stack)
						return -1;
				}
				stack[depth++] = r.u.evt.enter.region;
			} else if (r.type == OTF2R_EVT_LEAVE && depth) {
				depth--;
			} else if (r.type == OTF2R_EVT_PROGRAM_BEGIN) {
				begin = 1;
			} else if (r.type == OTF2R_EVT_PROGRAM_END) {
				end = 1;
			} else if (r.type == OTF2R_EVT_THREAD_BEGIN && !master) {
				tcont = r.u.evt.thread_begin.thread_contingent;
				tseq = r.u.evt.thread_begin.sequence_count;
				tbegin = 1;
			} else if (r.type == OTF2R_EVT_THREAD_END) {
				tend = 1;
			} else if (r.type == OTF2R_EVT_MPI_COLLECTIVE_BEGIN || r.type == OTF2R_EVT_RMA_COLLECTIVE_BEGIN) {
				coll_open = 1;
				coll_chunk = k;
				coll_pos = r.off;
				coll_nev = nev - 1;
				coll_depth = (uint32_t)depth;
			} else if (r.type == OTF2R_EVT_MPI_COLLECTIVE_END || r.type == OTF2R_EVT_RMA_COLLECTIVE_END) {
				coll_open = 0;
			}
		}
		otf2r_chunk_close(ch);
		if (k == cut_chunk)
			break;
	}
	if (size == 0 || k > cut_chunk) {
		/* nothing readable: an empty location */
		cut_chunk = 0;
		pos = HDR;
		nev = 0;
		chunk_first = 1;
		depth = 0;
		begin = end = 0;
		tbegin = tend = 0;
	}
	if (coll_open && coll_chunk == cut_chunk && coll_depth == depth && size > 0) {
		pos = coll_pos;   /* (what followed it in the call: samples, metrics) */
		nev = coll_nev;
	}
	int thread_end = tbegin && !tend;
	/* the records to append (the writer's encoders): time, Leaves,
	 * ThreadEnd, ProgramEnd, end of file */
	size_t need = 9 + depth * OTF2W_EVT_LEAVE_MAX + (thread_end ? OTF2W_EVT_THREAD_END_MAX : 0) +
		      (master && begin && !end ? OTF2W_EVT_PROGRAM_END_MAX : 0) + 2;
	uint64_t at = cut_chunk * cs;
	if (size == 0)
		memset(buf, 0, cs);
	if (pos + need >= cs) {
		/* a new chunk after this one */
		memset(buf + pos, 0, cs - pos);
		put_header(buf, chunk_first, nev);
		if (write_full(fd, buf, cs, (off_t)at))
			ret = -1;
		at += cs;
		chunk_first = nev + 1;
		pos = HDR;
		memset(buf, 0, cs);
	}
	uint8_t *p = buf + pos;
	if (depth || thread_end || (master && begin && !end) || pos == HDR) {
		if (end_at > res->last_time)
			res->last_time = end_at;   /* (never before what is recorded) */
		*p++ = 5;   /* Timestamp (otf2-format.md §5) */
		memcpy(p, &res->last_time, 8);
		p += 8;
	}
	while (depth) {
		p = otf2w_evt_put_leave(p, stack[--depth]);
		nev++;
	}
	if (thread_end) {
		/* ThreadEnd: the thread's contingent, its begin's sequence count */
		p = otf2w_evt_put_thread_end(p, tcont > 0xffffffffu ? 0xffffffffu : (uint32_t)tcont, tseq);
		nev++;
	}
	if (master && begin && !end) {
		p = otf2w_evt_put_program_end(p, 128 + 9);   /* killed: SIGKILL */
		nev++;
	}
	*p++ = 0x02;
	*p++ = 0x01;
	put_header(buf, chunk_first, nev);
	size_t len = (size_t)(p - buf);
	if (write_full(fd, buf, len, (off_t)at) || ftruncate(fd, (off_t)(at + len)) != 0)
		ret = -1;
	res->events = nev;
	res->begin = begin;
	free(stack);
	free(buf);
	if (close(fd) != 0)
		ret = -1;
	return ret;
}
