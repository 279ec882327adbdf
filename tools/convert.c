/* SPDX-License-Identifier: BSD-3-Clause */
/* convert.c - `tracer convert`: the Chrome Trace Event format (JSON, read
 * by Perfetto's UI and chrome://tracing), gzip-compressed when the output
 * name ends in .gz. Processes = location groups, threads = locations (pid
 * = location group id + 1, tid = location id + 1: never 0), regions as B/E pairs (every B gets its E: regions still
 * open at the end close at the location's last event; a Leave without its
 * Enter is dropped), MPI messages as instant events with their peer, tag
 * and size plus a flow from the send to its receive (matched in order per
 * sender, receiver, communicator and tag), Metric records as counters,
 * CallingContextSample as instant events with their stack. Times in
 * microseconds from the archive's global offset. --perf FILE: the samples
 * in the text format of `perf script` (a header line per sample, its frames
 * innermost first, a blank line), which Perfetto's UI shows as CPU samples
 * with a flame graph and FlameGraph's stackcollapse-perf.pl reads.
 * --pprof FILE: the samples as a gzip-compressed pprof profile
 * (convert_pprof.c). */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef TRACER_HAVE_ZLIB
#include <zlib.h>
#endif
#include "report.h"

/* Perfetto takes pid 0 and tid 0 for the kernel's idle task: the ids are
 * the location group's and the location's plus one. */
#define CPID(group) ((uint32_t)(group) + 1)
#define CTID(loc) ((uint64_t)(loc) + 1)

/* convert_pprof.c: the samples as a pprof profile (perftools.profiles.
 * Profile, gzip-compressed). open: NULL after one line; sample: a
 * CallingContextSample of location li inside the selection; close: writes
 * the samples of [from, to) (write 0: removes the file) and frees it, 0,
 * 1 without any sample, -1 on a write error (one line each). */

static const char usage_text[] =
	"usage: tracer convert [options] ARCHIVE -o OUT.json[.gz] | --perf OUT.txt[.gz] |\n"
	"                      --pprof OUT.pb.gz\n"
	"\n"
	"Writes the archive in the Chrome Trace Event format, for Perfetto's UI\n"
	"(ui.perfetto.dev, opens local files) and chrome://tracing: one process per\n"
	"location group (rank), one thread per location, regions as begin/end\n"
	"events, MPI sends and receives as instant events joined by flow arrows,\n"
	"metrics as counters, samples as instant events with their call stack.\n"
	"OUT ending in .gz is gzip-compressed.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE   the Chrome Trace Event JSON file (.gz: compressed)\n"
	"      --chrome FILE   the same as -o\n"
	"      --perf FILE     the samples as `perf script` text (.gz: compressed): CPU\n"
	"                      samples with a flame graph in Perfetto's UI; FlameGraph's\n"
	"                      stackcollapse-perf.pl reads it too\n"
	"      --pprof FILE    the samples as a pprof profile (gzip-compressed protobuf,\n"
	"                      for `pprof -http=: FILE`, speedscope): identical stacks\n"
	"                      of a thread merged, values samples and CPU time (ns),\n"
	"                      labels thread and process; no samples: status 1\n"
	"  (-o, --perf and --pprof combine: one pass writes each file asked)\n"
	REP_SELECT_HELP
	"                      (calls open at the window's edges begin or end there)\n"
	"  -h, --help          this text\n";

struct out {
	FILE *f;
#ifdef TRACER_HAVE_ZLIB
	gzFile gz;
#endif
	char buf[1 << 16];
	size_t n;
	int err;
	int off;       /* not asked for: nothing is written */
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
	if (o->n && (!o->f || fwrite(o->buf, 1, o->n, o->f) != o->n))
		o->err = 1;
	o->n = 0;
}

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	if (o->off)
		return;
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

static void emit_out(void *o, const char *p, size_t n)
{
	put(o, "%.*s", (int)n, p);
}

static void put_str(struct out *o, const char *s)
{
	rep_json_escape(s, emit_out, o);
}

/* path: written through zlib when it ends in .gz. 0, or -1 said. */
static int out_open(struct out *o, const char *path)
{
	size_t l = strlen(path);
	int gz = l > 3 && strcmp(path + l - 3, ".gz") == 0;
#ifdef TRACER_HAVE_ZLIB
	if (gz)
		o->gz = gzopen(path, "wb6");
	else
#endif
		o->f = gz ? NULL : fopen(path, "w");
#ifdef TRACER_HAVE_ZLIB
	if (o->gz)
		return 0;
#endif
	if (o->f)
		return 0;
	fprintf(stderr, "tracer: cannot write %s%s\n", path, gz ? " (built without zlib?)" : "");
	return -1;
}

/* Flushed and closed (nothing open: 0). 0, or -1 when a write failed. */
static int out_close(struct out *o)
{
	int err = 0;
	flush_out(o);
#ifdef TRACER_HAVE_ZLIB
	if (o->gz)
		err = gzclose(o->gz) != Z_OK;
	o->gz = NULL;
#endif
	if (o->f)
		err = fclose(o->f) != 0;
	o->f = NULL;
	return o->err || err ? -1 : 0;
}

struct conv {
	struct rep r;                 /* definitions only (rep_build not run) */
	uint32_t **stack;             /* per location: open region ids */
	size_t *depth, *cap;
	uint64_t *last;
	/* per location: the last IoOperationComplete (handle + 1, 0: none),
	 * written as the args of the E event of the Leave that follows */
	uint32_t *io_handle;
	uint64_t *io_bytes;
	uint64_t *lock;               /* the last ThreadAcquireLock's lock + 1 (0: none), the same way */
	int first;
	struct rep_match flows;       /* flow ids of unmatched sends / receives */
	uint64_t next_flow;
	struct out *perf;             /* --perf: the samples as perf script text */
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
	    CPID(r->groups[L->group].id), CTID(L->id), usec(r, t));
	put_str(o, name);
	if (ph == 'E' && (c->io_handle[li] || c->lock[li])) {
		put(o, ",\"args\":{");
		if (c->io_handle[li]) {   /* the I/O call's file and bytes */
			const otf2r_def *h = otf2r_def_find(r->ar, OTF2R_GDEF_IO_HANDLE, c->io_handle[li] - 1);
			put(o, "\"file\":");
			put_str(o, h ? rep_io_file_name(r, h->u.io_handle.file) : "?");
			if (c->io_bytes[li] != UINT64_MAX)
				put(o, ",\"bytes\":%" PRIu64, c->io_bytes[li]);
		}
		if (c->lock[li])          /* the lock the call acquired */
			put(o, "%s\"lock\":%" PRIu64, c->io_handle[li] ? "," : "", c->lock[li] - 1);
		put(o, "}");
		c->io_handle[li] = 0;
		c->lock[li] = 0;
	}
	put(o, "}");
}

static void message(struct out *o, struct conv *c, size_t li, const otf2r_event *ev)
{
	const struct rep *r = &c->r;
	const struct rep_loc *L = &r->locs[li];
	uint32_t peer, comm, tag;
	uint64_t bytes;
	int send = rep_message(ev, &peer, &comm, &tag, &bytes);
	double ts = usec(r, ev->time);
	sep(o, c);
	put(o, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
	    ",\"ts\":%.3f,\"name\":\"%s\",\"args\":{\"peer\":%" PRIu32 ",\"tag\":%" PRIu32
	    ",\"bytes\":%" PRIu64 "}}", CPID(r->groups[L->group].id), CTID(L->id), ts,
	    send ? "MPI send" : "MPI recv", peer, tag, bytes);
	size_t pg = rep_peer_group(r, comm, peer);
	if (pg == SIZE_MAX || r->sel)
		return;   /* (with --thread/--rank the other end may not be written: no flow) */
	uint64_t key[4] = { send ? L->group : pg, send ? pg : L->group, comm, tag };
	int matched;
	uint64_t id = rep_match(&c->flows, key, !send, c->next_flow, &matched);
	if (!matched)
		c->next_flow++;
	sep(o, c);
	put(o, "{\"ph\":\"%s\",\"cat\":\"mpi\",\"name\":\"message\",\"id\":%" PRIu64
	    ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":%.3f%s}", send ? "s" : "f", id,
	    CPID(r->groups[L->group].id), CTID(L->id), ts, send ? "" : ",\"bp\":\"e\"");
}

/* Metric events: one counter per member and thread. */
static void metric(struct out *o, struct conv *c, size_t li, const otf2r_event *ev)
{
	const struct rep *r = &c->r;
	const struct rep_loc *L = &r->locs[li];
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_CLASS, ev->u.metric.metric);
	if (!d) {
		const otf2r_def *in = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_INSTANCE, ev->u.metric.metric);
		d = in ? otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_CLASS, in->u.metric_instance.metric_class)
		       : NULL;
	}
	for (unsigned i = 0; i < ev->u.metric.number_of_metrics; i++) {
		const char *name = "metric";
		if (d && i < d->u.metric_class.number_of_metrics) {
			const otf2r_def *m = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_MEMBER,
							    d->u.metric_class.metric_members[i]);
			const char *s = m ? otf2r_string(r->ar, m->u.metric_member.name) : NULL;
			if (s)
				name = s;
		}
		double v = rep_metric_value(ev->u.metric.type_i_ds[i], ev->u.metric.metric_values[i]);
		sep(o, c);
		put(o, "{\"ph\":\"C\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":%.3f,\"name\":",
		    CPID(r->groups[L->group].id), CTID(L->id), usec(r, ev->time));
		char full[512];
		snprintf(full, sizeof full, "%s (%s)", name, L->name);
		put_str(o, full);
		put(o, ",\"args\":{\"value\":%.17g}}", v);
	}
}

/* A sample as `perf script` prints one: "comm pid/tid [cpu] seconds: period
 * event:", then a line per frame from the sampled one outwards, "address
 * function (object)" (no address here: 0; the object is the one the
 * sampler named, else [unknown]), then a blank line. */
static void perf_sample(struct out *p, struct conv *c, size_t li, uint64_t t, const uint32_t *chain, size_t d)
{
	const struct rep *r = &c->r;
	const struct rep_loc *L = &r->locs[li];
	char comm[256];
	snprintf(comm, sizeof comm, "%s", r->groups[L->group].name);
	for (char *q = comm; *q; q++)
		if (*q == '\n' || *q == '\t' || *q == ':')
			*q = ' ';
	put(p, "%s %" PRIu32 "/%" PRIu64 " [000] %.6f: 1 cpu-clock:\n", comm, CPID(r->groups[L->group].id), CTID(L->id),
	    usec(r, t) / 1e6);
	for (size_t k = 0; k < d; k++) {
		uint32_t q = r->cc_region[chain[k]];
		const char *obj = NULL;
		if (q != UINT32_MAX)
			obj = otf2r_string(r->ar, r->regions[q]->description);
		put(p, "\t%16x %s (%s)\n", 0, q == UINT32_MAX ? "[unknown]" : r->region_names[q],
		    obj && *obj && !strpbrk(obj, " ()") ? obj : "[unknown]");
	}
	put(p, "\n");
}

/* CallingContextSample: an instant event named by the sampled function,
 * its stack (outermost first) in args. */
static void sample(struct out *o, struct conv *c, size_t li, const otf2r_event *ev)
{
	const struct rep *r = &c->r;
	const struct rep_loc *L = &r->locs[li];
	uint32_t cc = ev->u.calling_context_sample.calling_context;
	if (cc >= r->ncc)
		return;
	uint32_t chain[256];
	size_t d = 0;
	for (uint32_t p = cc; p != UINT32_MAX && d < 256; p = r->cc_parent[p])
		chain[d++] = p;
	uint32_t ri = r->cc_region[cc];
	if (c->perf)
		perf_sample(c->perf, c, li, ev->time, chain, d);
	if (o->off)
		return;
	sep(o, c);
	put(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
	    ",\"ts\":%.3f,\"name\":", CPID(r->groups[L->group].id), CTID(L->id), usec(r, ev->time));
	put_str(o, ri == UINT32_MAX ? "?" : r->region_names[ri]);
	put(o, ",\"args\":{\"stack\":[");
	for (size_t k = d; k-- > 0;) {
		uint32_t q = r->cc_region[chain[k]];
		put(o, k + 1 < d ? "," : "");
		put_str(o, q == UINT32_MAX ? "?" : r->region_names[q]);
	}
	put(o, "]}}");
}

static void push(struct conv *c, size_t li, uint32_t region)
{
	if (c->depth[li] == c->cap[li])
		c->stack[li] = rep_grow(c->stack[li], &c->cap[li], 64, sizeof **c->stack);
	c->stack[li][c->depth[li]++] = region;
}

/* Leave: E for the innermost open `region` and everything above it (o
 * NULL: before the time window, nothing written). */
static void leave_to(struct out *o, struct conv *c, size_t li, uint32_t region, uint64_t t)
{
	size_t k = c->depth[li];
	while (k > 0 && c->stack[li][k - 1] != region)
		k--;
	while (k > 0 && c->depth[li] >= k) {
		--c->depth[li];
		if (o)
			be(o, c, li, 'E', c->stack[li][c->depth[li]], t);
	}
}

/* The time window begins (ph 'B': every open call begins at t) or ends
 * ('E': every open call ends at t). */
static void window_edge(struct out *o, struct conv *c, char ph, uint64_t t)
{
	for (size_t i = 0; i < c->r.nlocs; i++) {
		if (ph == 'B')
			for (size_t k = 0; k < c->depth[i]; k++)
				be(o, c, i, 'B', c->stack[i][k], t);
		else
			while (c->depth[i])
				be(o, c, i, 'E', c->stack[i][--c->depth[i]], t);
	}
}

int tracer_convert_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "chrome", required_argument, 0, 'o' },
		{ "perf", required_argument, 0, 'P' }, { "pprof", required_argument, 0, 'G' },
		REP_SELECT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	const char *outp = NULL, *perfp = NULL, *pprofp = NULL;
	struct rep_select sel = REP_SELECT_INIT;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'o': outp = optarg; break;
		case 'P': perfp = optarg; break;
		case 'G': pprofp = optarg; break;
		REP_SELECT_CASES(sel, ch, "convert");
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	otf2r_archive *ar;
	int orc = rep_open(!outp && !perfp && !pprofp ? -1 : argc, argv, usage_text, &ar);
	if (orc)
		return orc;
	static struct out o, po;
	o.off = !outp;
	po.off = !perfp;
	struct rep_pprof *pp = NULL;
	if ((outp && out_open(&o, outp)) || (perfp && out_open(&po, perfp)) ||
	    (pprofp && !(pp = rep_pprof_open(pprofp)))) {
		out_close(&o);
		out_close(&po);
		otf2r_close(ar);
		return 1;
	}
	struct conv c;
	memset(&c, 0, sizeof c);
	rep_setup_defs(&c.r, ar);
	struct rep *r = &c.r;
	if (rep_select_set(r, &sel)) {
		if (pp)
			rep_pprof_close(pp, r, 0, 0, 0);
		rep_free(r);
		otf2r_close(ar);
		out_close(&o);
		out_close(&po);
		if (outp)
			unlink(outp);
		if (perfp)
			unlink(perfp);
		return 2;
	}
	int inside = !sel.on || r->win_from <= r->offset;   /* the window has begun */
	c.stack = calloc(r->nlocs + 1, sizeof *c.stack);
	c.depth = calloc(r->nlocs + 1, sizeof *c.depth);
	c.cap = calloc(r->nlocs + 1, sizeof *c.cap);
	c.last = calloc(r->nlocs + 1, sizeof *c.last);
	c.io_handle = calloc(r->nlocs + 1, sizeof *c.io_handle);
	c.io_bytes = calloc(r->nlocs + 1, sizeof *c.io_bytes);
	c.lock = calloc(r->nlocs + 1, sizeof *c.lock);
	c.first = 1;
	c.next_flow = 1;
	c.perf = perfp ? &po : NULL;
	put(&o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"archive\":");
	put_str(&o, otf2r_path(ar));
	put(&o, "},\"traceEvents\":[");
	for (size_t g = 0; g < r->ngroups; g++) {
		int any = 0;
		for (size_t i = 0; i < r->nlocs; i++)
			any |= r->locs[i].group == g;
		if (!any)
			continue;
		sep(&o, &c);
		put(&o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"args\":{\"name\":",
		    CPID(r->groups[g].id));
		put_str(&o, r->groups[g].name);
		put(&o, "}}");
	}
	for (size_t i = 0; i < r->nlocs; i++) {
		sep(&o, &c);
		put(&o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64
		    ",\"args\":{\"name\":", CPID(r->groups[r->locs[i].group].id), CTID(r->locs[i].id));
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
		if (li == r->nlocs)
			continue;   /* not a selected location (--thread, --rank) */
		if (ev.time >= r->win_to) {   /* the window ends: so do its open calls */
			window_edge(&o, &c, 'E', r->win_to);
			break;
		}
		if (!inside && ev.time >= r->win_from) {
			inside = 1;
			window_edge(&o, &c, 'B', r->win_from);
		}
		struct out *w = inside ? &o : NULL;   /* before the window: calls kept, nothing written */
		if (inside)
			c.last[li] = ev.time;
		if (ev.type == OTF2R_EVT_ENTER) {
			push(&c, li, ev.u.enter.region);
			if (w)
				be(w, &c, li, 'B', ev.u.enter.region, ev.time);
		} else if (ev.type == OTF2R_EVT_LEAVE) {
			leave_to(w, &c, li, ev.u.leave.region, ev.time);
		} else if (ev.type == OTF2R_EVT_CALLING_CONTEXT_ENTER ||
			   ev.type == OTF2R_EVT_CALLING_CONTEXT_LEAVE) {
			uint32_t cc = ev.u.calling_context_enter.calling_context;
			uint32_t ri = cc < r->ncc ? r->cc_region[cc] : UINT32_MAX;
			uint32_t id = ri == UINT32_MAX ? UINT32_MAX : r->regions[ri]->self;
			if (ev.type == OTF2R_EVT_CALLING_CONTEXT_ENTER) {
				push(&c, li, id);
				if (w)
					be(w, &c, li, 'B', id, ev.time);
			} else {
				leave_to(w, &c, li, id, ev.time);
			}
		} else if (!w) {
			continue;
		} else if (ev.type == OTF2R_EVT_MPI_SEND || ev.type == OTF2R_EVT_MPI_ISEND ||
			   ev.type == OTF2R_EVT_MPI_RECV || ev.type == OTF2R_EVT_MPI_IRECV) {
			message(&o, &c, li, &ev);
		} else if (ev.type == OTF2R_EVT_METRIC) {
			metric(&o, &c, li, &ev);
		} else if (ev.type == OTF2R_EVT_CALLING_CONTEXT_SAMPLE) {
			if (pp)
				rep_pprof_sample(pp, r, li, &ev);
			sample(&o, &c, li, &ev);
		} else if (ev.type == OTF2R_EVT_THREAD_ACQUIRE_LOCK) {
			c.lock[li] = (uint64_t)ev.u.thread_acquire_lock.lock_id + 1;
		} else if (ev.type == OTF2R_EVT_IO_OPERATION_COMPLETE) {
			c.io_handle[li] = ev.u.io_operation_complete.handle + 1;
			c.io_bytes[li] = ev.u.io_operation_complete.bytes_result;
		}
	}
	if (rc < 0)
		rep_read_error(argv[optind], otf2r_error(ar));
	if (rc > 0)
		rc = 0;   /* (left at the window's end) */
	otf2r_merge_close(m);
	for (size_t i = 0; i < r->nlocs; i++) {
		while (c.depth[i] && inside)
			be(&o, &c, i, 'E', c.stack[i][--c.depth[i]], c.last[i] > r->win_from ? c.last[i] : r->win_from);
		free(c.stack[i]);
	}
	put(&o, "\n]}\n");
	if ((outp && out_close(&o)) || (perfp && out_close(&po))) {
		fprintf(stderr, "tracer: error writing %s\n", outp && (o.err || !perfp) ? outp : perfp);
		rc = -1;
	}
	/* (a read error was said: no profile of part of the samples) */
	if (pp && rep_pprof_close(pp, r, rc >= 0, r->win_from, r->win_to))
		rc = -1;
	rep_match_free(&c.flows);
	free(c.stack);
	free(c.depth);
	free(c.cap);
	free(c.last);
	free(c.io_handle);
	free(c.io_bytes);
	free(c.lock);
	rep_free(r);
	otf2r_close(ar);
	return rc < 0 ? 1 : 0;
}
