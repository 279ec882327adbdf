/* SPDX-License-Identifier: BSD-3-Clause */
/* convert.c - `tracer convert`: the Chrome Trace Event format (JSON, read
 * by Perfetto's UI and chrome://tracing), gzip-compressed when the output
 * name ends in .gz. Processes = location groups, threads = locations (tid
 * = location id), regions as B/E pairs (every B gets its E: regions still
 * open at the end close at the location's last event; a Leave without its
 * Enter is dropped), MPI messages as instant events with their peer, tag
 * and size. Times in microseconds from the archive's global offset. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef TRACER_HAVE_ZLIB
#include <zlib.h>
#endif
#include "report.h"

static const char usage_text[] =
	"usage: tracer convert [options] ARCHIVE -o OUT.json[.gz]\n"
	"\n"
	"Writes the archive in the Chrome Trace Event format, for Perfetto's UI\n"
	"(ui.perfetto.dev, opens local files) and chrome://tracing: one process per\n"
	"location group (rank), one thread per location, regions as begin/end\n"
	"events, MPI sends and receives as instant events. OUT ending in .gz is\n"
	"gzip-compressed.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE   output file (required; .gz: compressed)\n"
	"      --chrome FILE   the same as -o\n"
	"  -h, --help          this text\n";

struct out {
	FILE *f;
#ifdef TRACER_HAVE_ZLIB
	gzFile gz;
#endif
	char buf[1 << 16];
	size_t n;
	int err;
};

static void flush_out(struct out *o)
{
#ifdef TRACER_HAVE_ZLIB
	if (o->gz) {
		if (o->n && gzwrite(o->gz, o->buf, (unsigned)o->n) != (int)o->n)
			o->err = 1;
		o->n = 0;
		return;
	}
#endif
	if (o->n && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->err = 1;
	o->n = 0;
}

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	if (sizeof o->buf - o->n < 4096)
		flush_out(o);
	va_start(ap, fmt);
	int k = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof o->buf - o->n) {
		o->err = 1;
		return;
	}
	o->n += (size_t)k;
}

static void put_str(struct out *o, const char *s)
{
	put(o, "\"");
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			put(o, "\\%c", *p);
		else if (*p < 0x20)
			put(o, "\\u%04x", *p);
		else
			put(o, "%c", *p);
	}
	put(o, "\"");
}

struct conv {
	struct rep r;                 /* definitions only (rep_build not run) */
	uint32_t **stack;             /* per location: open region ids */
	size_t *depth, *cap;
	uint64_t *last;
	int first;
};

static double usec(const struct rep *r, uint64_t t)
{
	return t >= r->offset ? (double)(t - r->offset) * 1e6 / (double)r->resolution
			      : -(double)(r->offset - t) * 1e6 / (double)r->resolution;
}

static void sep(struct out *o, struct conv *c)
{
	put(o, c->first ? "\n" : ",\n");
	c->first = 0;
}

static void be(struct out *o, struct conv *c, size_t li, char ph, uint32_t region, uint64_t t)
{
	const struct rep *r = &c->r;
	const struct rep_loc *L = &r->locs[li];
	const char *name = NULL;
	if (region < r->region_ids && r->region_by_id[region] != UINT32_MAX)
		name = r->region_names[r->region_by_id[region]];
	char id[32];
	if (!name) {
		snprintf(id, sizeof id, "region %" PRIu32, region);
		name = id;
	}
	sep(o, c);
	put(o, "{\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":%.3f,\"name\":", ph,
	    r->groups[L->group].id, L->id, usec(r, t));
	put_str(o, name);
	put(o, "}");
}

static void push(struct conv *c, size_t li, uint32_t region)
{
	if (c->depth[li] == c->cap[li]) {
		c->cap[li] = c->cap[li] ? 2 * c->cap[li] : 64;
		c->stack[li] = realloc(c->stack[li], c->cap[li] * sizeof **c->stack);
		if (!c->stack[li]) {
			fprintf(stderr, "tracer: out of memory\n");
			exit(1);
		}
	}
	c->stack[li][c->depth[li]++] = region;
}

int tracer_convert_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "chrome", required_argument, 0, 'o' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	const char *outp = NULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'o': outp = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	otf2r_archive *ar;
	int orc = rep_open(!outp ? -1 : argc, argv, usage_text, &ar);
	if (orc)
		return orc;
	static struct out o;
	size_t ol = strlen(outp);
	int gz = ol > 3 && strcmp(outp + ol - 3, ".gz") == 0;
#ifdef TRACER_HAVE_ZLIB
	if (gz)
		o.gz = gzopen(outp, "wb6");
	else
#endif
		o.f = gz ? NULL : fopen(outp, "w");
	if (!o.f
#ifdef TRACER_HAVE_ZLIB
	    && !o.gz
#endif
	   ) {
		fprintf(stderr, "tracer: cannot write %s%s\n", outp,
			gz ? " (built without zlib?)" : "");
		otf2r_close(ar);
		return 1;
	}
	struct conv c;
	memset(&c, 0, sizeof c);
	rep_setup_defs(&c.r, ar);
	struct rep *r = &c.r;
	c.stack = calloc(r->nlocs + 1, sizeof *c.stack);
	c.depth = calloc(r->nlocs + 1, sizeof *c.depth);
	c.cap = calloc(r->nlocs + 1, sizeof *c.cap);
	c.last = calloc(r->nlocs + 1, sizeof *c.last);
	c.first = 1;
	put(&o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"archive\":");
	put_str(&o, otf2r_path(ar));
	put(&o, "},\"traceEvents\":[");
	for (size_t g = 0; g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		sep(&o, &c);
		put(&o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"args\":{\"name\":",
		    r->groups[g].id);
		put_str(&o, r->groups[g].name);
		put(&o, "}}");
	}
	for (size_t i = 0; i < r->nlocs; i++) {
		sep(&o, &c);
		put(&o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
		    ",\"args\":{\"name\":", r->groups[r->locs[i].group].id, r->locs[i].id);
		put_str(&o, r->locs[i].name);
		put(&o, "}}");
	}
	otf2r_merge *m;
	int rc = otf2r_merge_open(ar, NULL, 0, &m);
	otf2r_event ev;
	size_t li = 0;
	while (rc == 0 && (rc = otf2r_merge_next(m, &ev)) > 0) {
		rc = 0;
		if (li >= r->nlocs || r->locs[li].id != ev.location)
			for (li = 0; li < r->nlocs && r->locs[li].id != ev.location; li++)
				;
		c.last[li] = ev.time;
		if (ev.type == OTF2R_EVT_ENTER) {
			push(&c, li, ev.u.enter.region);
			be(&o, &c, li, 'B', ev.u.enter.region, ev.time);
		} else if (ev.type == OTF2R_EVT_LEAVE) {
			size_t k = c.depth[li];
			while (k > 0 && c.stack[li][k - 1] != ev.u.leave.region)
				k--;
			while (k > 0 && c.depth[li] >= k)
				be(&o, &c, li, 'E', c.stack[li][--c.depth[li]], ev.time);
		} else if (ev.type == OTF2R_EVT_MPI_SEND || ev.type == OTF2R_EVT_MPI_RECV) {
			int send = ev.type == OTF2R_EVT_MPI_SEND;
			sep(&o, &c);
			put(&o, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
			    ",\"ts\":%.3f,\"name\":\"%s\",\"args\":{\"peer\":%" PRIu32 ",\"tag\":%" PRIu32
			    ",\"bytes\":%" PRIu64 "}}", r->groups[r->locs[li].group].id, ev.location,
			    usec(r, ev.time), send ? "MPI send" : "MPI recv",
			    send ? ev.u.mpi_send.receiver : ev.u.mpi_recv.sender,
			    send ? ev.u.mpi_send.msg_tag : ev.u.mpi_recv.msg_tag,
			    send ? ev.u.mpi_send.msg_length : ev.u.mpi_recv.msg_length);
		}
	}
	if (rc < 0)
		fprintf(stderr, "tracer: %s\n", otf2r_error(ar));
	otf2r_merge_close(m);
	for (size_t i = 0; i < r->nlocs; i++) {
		while (c.depth[i])
			be(&o, &c, i, 'E', c.stack[i][--c.depth[i]], c.last[i]);
		free(c.stack[i]);
	}
	put(&o, "\n]}\n");
	flush_out(&o);
	int cerr = 0;
#ifdef TRACER_HAVE_ZLIB
	if (o.gz)
		cerr = gzclose(o.gz) != Z_OK;
	else
#endif
		cerr = fclose(o.f) != 0;
	if (o.err || cerr) {
		fprintf(stderr, "tracer: error writing %s\n", outp);
		rc = -1;
	}
	free(c.stack);
	free(c.depth);
	free(c.cap);
	free(c.last);
	rep_free(r);
	otf2r_close(ar);
	return rc < 0 ? 1 : 0;
}
