/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recover_evt.c - event surgery of `tracer recover` (recover.c): a killed
 * location's event file cut after its last whole record and completed.
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
#include "otf2w_stage.h"
#include "recover_int.h"

/* Length of the record at p (type byte included), or 0 when it cannot be
 * decoded within lim. */
size_t rec_len(const uint8_t *p, const uint8_t *lim)
{
	uint8_t t = p[0];
	if (t == 5)
		return p + 9 <= lim ? 9 : 0;
	switch (t) {
	case 12: case 13: case 16: case 17: case 20: case 21: case 24: case 28: case 29: case 30: {
		/* singleton: one compressed field */
		if (p + 2 > lim)
			return 0;
		size_t n = p[1] == 0xff ? 0 : p[1];
		return p + 2 + n <= lim ? 2 + n : 0;
	}
	default:
		break;
	}
	if (p + 2 > lim)
		return 0;
	if (p[1] != 0xff)
		return p + 2 + p[1] <= lim ? 2 + (size_t)p[1] : 0;
	if (p + 10 > lim)
		return 0;
	uint64_t l;
	memcpy(&l, p + 2, 8);
	return l <= (uint64_t)(lim - p - 10) ? 10 + (size_t)l : 0;
}

static uint32_t cu32(const uint8_t *p)
{
	uint32_t v = 0;
	if (p[0] == 0xff)
		return 0xffffffffu;
	for (int i = 0; i < p[0] && i < 4; i++)
		v |= (uint32_t)p[1 + i] << (8 * i);
	return v;
}

/* A compressed unsigned integer at *p (n bytes, then n little-endian
 * bytes; ff: all ones), *p moved past it, never past lim. */
uint64_t take_cu(const uint8_t **p, const uint8_t *lim)
{
	const uint8_t *q = *p;
	if (q >= lim)
		return 0;
	if (*q == 0xff) {
		*p = q + 1;
		return UINT64_MAX;
	}
	uint64_t v = 0;
	int n = *q++;
	for (int i = 0; i < n && i < 8 && q < lim; i++)
		v |= (uint64_t)*q++ << (8 * i);
	*p = q;
	return v;
}

uint8_t *put_cu(uint8_t *p, uint64_t v)
{
	int n = 0;
	for (uint64_t x = v; x; x >>= 8)
		n++;
	*p++ = (uint8_t)n;
	for (int i = 0; i < n; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

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
			if (read_full(fd, buf, len, (off_t)(c * cs)) != (int)len || buf[0] != 0x03)
				break;
			for (size_t at = HDR, l; at < len && buf[at] != 0 && buf[at] != 2; at += l) {
				if (!(l = rec_len(buf + at, buf + len)))
					break;
				if (buf[at] == 5)
					memcpy(&res->last_time, buf + at + 1, 8);
			}
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
		while (pos < lim) {
			uint8_t t = buf[pos];
			if (t == 0 || t == 2)
				break;
			size_t l = rec_len(buf + pos, buf + lim);
			if (!l)
				break;
			if (t == 5) {
				memcpy(&res->last_time, buf + pos + 1, 8);
			} else if (t != 6) {
				nev++;
				if (t == 12) {
					if (depth == cap) {
						cap = cap ? 2 * cap : 64;
						stack = realloc(stack, cap * sizeof(*stack));
						if (!stack)
							return -1;
					}
					stack[depth++] = cu32(buf + pos + 1);
				} else if (t == 13 && depth) {
					depth--;
				} else if (t == 83) {
					begin = 1;
				} else if (t == 84) {
					end = 1;
				} else if (t == 63 && !master) {   /* ThreadBegin: contingent, sequence */
					const uint8_t *f = buf + pos + (buf[pos + 1] == 0xff ? 10 : 2), *fl = buf + pos + l;
					tcont = take_cu(&f, fl);
					tseq = take_cu(&f, fl);
					tbegin = 1;
				} else if (t == 65) {
					tend = 1;
				} else if (t == 22 || t == 37) {   /* Mpi/RmaCollectiveBegin */
					coll_open = 1;
					coll_chunk = k;
					coll_pos = pos;
					coll_nev = nev - 1;
					coll_depth = (uint32_t)depth;
				} else if (t == 23 || t == 38) {   /* their End */
					coll_open = 0;
				}
			}
			pos += l;
		}
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
	/* the records to append: time, Leaves, ThreadEnd, ProgramEnd, end of file */
	size_t need = 9 + depth * 6 + (thread_end ? 16 : 0) + (master && begin && !end ? 12 : 0) + 2;
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
		*p++ = 5;
		memcpy(p, &res->last_time, 8);
		p += 8;
	}
	while (depth) {
		*p++ = 13;
		p = put_cu(p, stack[--depth]);
		nev++;
	}
	if (thread_end) {
		/* ThreadEnd: the thread's contingent, its begin's sequence count */
		*p++ = 65;
		uint8_t *lp = p++;
		uint8_t *v = p;
		if (tcont > 0xffffffffu)
			*v++ = 0xff;   /* (undefined) */
		else
			v = put_cu(v, tcont);
		v = put_cu(v, tseq);
		*lp = (uint8_t)(v - p);
		p = v;
		nev++;
	}
	if (master && begin && !end) {
		*p++ = 84;
		uint8_t *lp = p++;
		uint8_t *v = put_cu(p, 128 + 9);
		*lp = (uint8_t)(v - p);
		p = v;
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
