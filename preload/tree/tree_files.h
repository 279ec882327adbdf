/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tree_files.h - two files of a process tree's DIR/procs that a member
 * writes (preload/tree/proctree.c, preload/archive/) and the tools read
 * (tracer-merge, tracer recover): the live entries and the parts' packed
 * definitions. Both are made so that a short process creates no file for
 * them: on an ext4 without a journal every new inode scans the inodes
 * freed in the last minutes (0.2-0.5 ms a create where files were just
 * removed), and a file made and removed per process adds to that scan.
 *
 * Live entries: DIR/procs/live.<pid>.<start>.<part>.<self>, each a hard
 * link of a file that is there anyway (a link adds a name, no inode): the
 * root's claim proc0.claim while the root runs, else the part counter
 * tree, else live.target (made for it):
 *   start  field 22 of /proc/<pid>/stat (against pid reuse)
 *   part   the part the entry names (the process's own, or for an entry
 *          written by its parent the parent's: its creator)
 *   self   1 written by the process itself, 0 by another process (its
 *          parent, for a child that has not started the tracer yet)
 * Of several entries of one pid and start, one with self 1 wins over
 * self 0, then the higher part (an exec'd image's part is newer).
 *
 * Packed definitions: a part whose process never saved them at a
 * durability tick appends them at its end to DIR/procs/parts.tdefs, one
 * record per write(2) (O_APPEND: records of concurrent processes never
 * interleave), then its end as a second record:
 *   "TRPART1 <part> <kind> <len>\n" <len bytes> "\n"
 *   kind d: the packed definitions (tr_defs_pack format, as NAME.tdefs)
 *   kind e: "<events> <locations>" (the "#tracer-end" line of NAME.tdefs)
 * A part's own NAME.tdefs (written at ticks, or by tracer recover) wins
 * over its records here; of several records of one kind the last wins. A
 * record cut short (a full disk, a kill within a write of several pages)
 * is skipped: the reader goes on at the next header.
 */
#ifndef TR_TREE_FILES_H
#define TR_TREE_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TR_PARTS_EVENTS "parts"           /* below DIR/procs: the event files of the parts but the root's */
#define TR_LIVE_PREFIX "live."            /* entries below DIR/procs */
#define TR_LIVE_TARGET "live.target"      /* what an entry links when neither proc0.claim nor tree is there */
#define TR_PARTS_TDEFS "parts.tdefs"      /* below DIR/procs */
#define TR_PARTS_MAGIC "TRPART1 "

struct tr_live_name {
	long pid;
	unsigned long long start;
	int part;
	int self;
};

static inline int tr_tf_num(const char **p, unsigned long long *v, char end)
{
	const char *s = *p;
	unsigned long long x = 0;
	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9')
		x = x * 10 + (unsigned long long)(*s++ - '0');
	if (*s != end)
		return -1;
	*v = x;
	*p = end ? s + 1 : s;
	return 0;
}

/* A live entry's name: 0 and *e filled, -1 for any other name. */
static inline int tr_live_parse(const char *name, struct tr_live_name *e)
{
	unsigned long long pid, start, part, self;
	const char *s = name + sizeof(TR_LIVE_PREFIX) - 1;
	if (strncmp(name, TR_LIVE_PREFIX, sizeof(TR_LIVE_PREFIX) - 1))
		return -1;
	if (tr_tf_num(&s, &pid, '.') || tr_tf_num(&s, &start, '.') || tr_tf_num(&s, &part, '.') ||
	    tr_tf_num(&s, &self, 0) || !pid || pid > 0x7fffffff || part > 0x7fffffff || self > 1)
		return -1;
	e->pid = (long)pid;
	e->start = start;
	e->part = (int)part;
	e->self = (int)self;
	return 0;
}

/* 1 when entry a names the process better than b (same pid and start). */
static inline int tr_live_better(const struct tr_live_name *a, const struct tr_live_name *b)
{
	return a->self != b->self ? a->self > b->self : a->part > b->part;
}

struct tr_parts_rec {
	int part;
	char kind;                 /* 'd' or 'e' */
	const unsigned char *data;
	size_t len;
};

/* The record header at buf + o (within len): 0 and part, kind, body
 * offset and length filled, -1 if there is none. */
static inline int tr_parts_head(const unsigned char *buf, size_t len, size_t o, struct tr_parts_rec *r, size_t *body)
{
	const size_t ml = sizeof(TR_PARTS_MAGIC) - 1;
	char h[64];
	size_t i = 0;
	if (len - o <= ml || memcmp(buf + o, TR_PARTS_MAGIC, ml))
		return -1;
	for (o += ml; o < len && buf[o] != '\n' && i < sizeof(h) - 1; o++)
		h[i++] = (char)buf[o];
	if (o >= len || buf[o] != '\n')
		return -1;
	h[i] = 0;
	const char *s = h;
	unsigned long long part, n;
	if (tr_tf_num(&s, &part, ' ') || (s[0] != 'd' && s[0] != 'e') || s[1] != ' ' || part > 0x7fffffff)
		return -1;
	r->kind = s[0];
	s += 2;
	if (tr_tf_num(&s, &n, 0) || n >= len - o)
		return -1;
	r->part = (int)part;
	r->len = (size_t)n;
	*body = o + 1;
	return 0;
}

/* The next whole record of buf (len bytes) from *off: 1 and *r filled,
 * *off past it; 0 at the end. A damaged record is skipped. */
static inline int tr_parts_next(const unsigned char *buf, size_t len, size_t *off, struct tr_parts_rec *r)
{
	const size_t ml = sizeof(TR_PARTS_MAGIC) - 1;
	for (size_t o = *off; o < len;) {
		size_t body, end;
		/* whole: its body, its newline, then the end or the next header */
		if (tr_parts_head(buf, len, o, r, &body) == 0 && (end = body + r->len) < len && buf[end] == '\n' &&
		    (end + 1 == len || (len - end - 1 > ml && !memcmp(buf + end + 1, TR_PARTS_MAGIC, ml)))) {
			r->data = buf + body;
			*off = end + 1;
			return 1;
		}
		/* damaged (cut short): on at the next header */
		size_t i = o + 1;
		while (i + ml < len && memcmp(buf + i, TR_PARTS_MAGIC, ml))
			i++;
		o = i + ml < len ? i : len;
	}
	*off = len;
	return 0;
}

#endif /* TR_TREE_FILES_H */
