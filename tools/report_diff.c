/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_diff.c - `tracer diff A B`: what changed between two runs of a
 * program. Both archives are read by the report's pass (report.c) and
 * compared by name: regions (calls, exclusive and inclusive time over all
 * locations), I/O per file and layer (operations, bytes, time), locks and
 * MPI in total (lock and communicator ids are not stable from run to run),
 * and the run's duration and size. Rows are sorted by the size of the
 * change, largest first. Times are seconds of each archive's own clock.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char diff_usage[] =
	"usage: tracer diff [options] A B\n"
	"\n"
	"What changed from run A to run B (two OTF2 archives: directories or\n"
	".otf2 anchors)? Regions by the change of their exclusive time over all\n"
	"locations, with calls and inclusive time; I/O per file and layer; lock\n"
	"wait and MPI messages in total; the runs' duration and size. Regions and\n"
	"files are matched by name; rows sorted by the size of the change.\n"
	"\n"
	"options:\n"
	"  -n, --limit N   rows per table (default 20, 0 = all)\n"
	"      --json      machine-readable output (seconds) on stdout\n"
	REP_SELECT_HELP
	"                      (both runs: a percentage is of each run's own length)\n"
	"  -h, --help      this text\n";

struct side {
	const char *path;
	otf2r_archive *ar;
	struct rep r;
	uint64_t lock_wait, lock_acq, nlocks, msg_bytes, late_sender;
};

/* A region (or a file) of either run: figures per side in seconds. */
struct drow {
	const char *name, *layer;
	uint64_t n[2];          /* calls (regions), operations (files) */
	double v[2], w[2];      /* excl, incl (regions); time, bytes (files) */
	int side;               /* (collection: which side the row came from) */
};

static double sec(const struct rep *r, uint64_t ticks)
{
	return rep_ms(r, ticks) / 1e3;
}

static int by_name(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (!c && x->layer && y->layer)
		c = strcmp(x->layer, y->layer);
	return c ? c : x->side - y->side;
}

static int by_change(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double cx = fabs(x->v[1] - x->v[0]), cy = fabs(y->v[1] - y->v[0]);
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Rows of both sides (side 0 then 1, each filled in its own slot) merged by
 * name: one row per name with both sides' figures. Returns their number. */
static size_t merge_rows(struct drow *rows, size_t n)
{
	qsort(rows, n, sizeof *rows, by_name);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(rows[k - 1].name, rows[i].name) &&
		    (!rows[i].layer || !strcmp(rows[k - 1].layer, rows[i].layer))) {
			for (int s = 0; s < 2; s++) {
				rows[k - 1].n[s] += rows[i].n[s];
				rows[k - 1].v[s] += rows[i].v[s];
				rows[k - 1].w[s] += rows[i].w[s];
			}
			continue;
		}
		rows[k++] = rows[i];
	}
	qsort(rows, k, sizeof *rows, by_change);
	return k;
}

static size_t region_rows(struct side *s, struct drow **out)
{
	size_t n = 0, cap = s[0].r.nregions + s[1].r.nregions;
	struct drow *rows = rep_xcalloc(cap ? cap : 1, sizeof *rows);
	for (int k = 0; k < 2; k++) {
		const struct rep *r = &s[k].r;
		for (size_t i = 0; i < r->nregions; i++) {
			struct rep_stat t = rep_total(r, i, -1);
			if (!t.calls && !t.incl && !t.excl)
				continue;
			struct drow *d = &rows[n++];
			d->name = r->region_names[i] ? r->region_names[i] : "?";
			d->side = k;
			d->n[k] = t.calls;
			d->v[k] = sec(r, t.excl);
			d->w[k] = sec(r, t.incl);
		}
	}
	*out = rows;
	return merge_rows(rows, n);
}

/* Pipes and sockets are named by their inode, new in every run: one row
 * for each kind. */
static const char *unnamed(const char *file)
{
	static const char *const kinds[] = { "pipe:[", "socket:[", "anon_inode:" };
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strncmp(file, kinds[i], strlen(kinds[i])))
			return i == 0 ? "pipe:[*]" : i == 1 ? "socket:[*]" : "anon_inode:*";
	return file;
}

static size_t io_rows(struct side *s, struct drow **out)
{
	struct rep_io_row *f[2];
	size_t nf[2] = { rep_io_rows(&s[0].r, &f[0]), rep_io_rows(&s[1].r, &f[1]) };
	struct drow *rows = rep_xcalloc(nf[0] + nf[1] + 1, sizeof *rows);
	size_t n = 0;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < nf[k]; i++) {
			struct drow *d = &rows[n++];
			d->name = unnamed(f[k][i].file);
			d->layer = f[k][i].layer;
			d->side = k;
			d->n[k] = f[k][i].ops;
			d->v[k] = sec(&s[k].r, f[k][i].time);
			d->w[k] = (double)f[k][i].bytes;
		}
		free(f[k]);
	}
	*out = rows;
	return merge_rows(rows, n);
}

static void totals(struct side *s)
{
	const struct rep *r = &s->r;
	for (size_t i = 0; i < r->caplocks; i++) {
		if (!r->locks[i].acquisitions)
			continue;
		s->nlocks++;
		s->lock_acq += r->locks[i].acquisitions;
		s->lock_wait += r->locks[i].wait;
	}
	for (size_t i = 0; r->msg_bytes && i < r->ngroups * r->ngroups; i++)
		s->msg_bytes += r->msg_bytes[i];
	for (size_t i = 0; i < r->nlocs; i++)
		s->late_sender += r->locs[i].late_sender;
}

static void ratio(char *b, size_t n, double a, double v)
{
	if (a > 0)
		snprintf(b, n, "%.2f", v / a);
	else
		snprintf(b, n, "%s", v > 0 ? "new" : "-");
}

static void print_text(struct side *s, struct drow *reg, size_t nreg, struct drow *io, size_t nio, size_t limit,
		       FILE *f)
{
	const struct rep *a = &s[0].r, *b = &s[1].r;
	double da = sec(a, a->last - a->first), db = sec(b, b->last - b->first);
	char q[32];
	fprintf(f, "tracer diff: A = %s (%s), B = %s (%s)\n\n", s[0].path, a->program ? a->program : "?", s[1].path,
		b->program ? b->program : "?");
	fprintf(f, "%-26s %14s %14s %14s %8s\n", "", "A", "B", "change", "B/A");
	ratio(q, sizeof q, da, db);
	fprintf(f, "%-26s %14.6f %14.6f %+14.6f %8s\n", "duration s", da, db, db - da, q);
	fprintf(f, "%-26s %14llu %14llu %+14lld\n", "events", (unsigned long long)a->events,
		(unsigned long long)b->events, (long long)(b->events - a->events));
	fprintf(f, "%-26s %14zu %14zu %+14lld\n", "processes", a->ngroups, b->ngroups,
		(long long)b->ngroups - (long long)a->ngroups);
	fprintf(f, "%-26s %14zu %14zu %+14lld\n", "locations", a->nlocs, b->nlocs,
		(long long)b->nlocs - (long long)a->nlocs);
	if (s[0].lock_acq || s[1].lock_acq) {
		double wa = sec(a, s[0].lock_wait), wb = sec(b, s[1].lock_wait);
		ratio(q, sizeof q, wa, wb);
		fprintf(f, "%-26s %14.6f %14.6f %+14.6f %8s\n", "lock wait s (all locks)", wa, wb, wb - wa, q);
		fprintf(f, "%-26s %14llu %14llu %+14lld\n", "lock acquisitions", (unsigned long long)s[0].lock_acq,
			(unsigned long long)s[1].lock_acq, (long long)(s[1].lock_acq - s[0].lock_acq));
	}
	if (a->messages || b->messages) {
		fprintf(f, "%-26s %14llu %14llu %+14lld\n", "MPI messages", (unsigned long long)a->messages,
			(unsigned long long)b->messages, (long long)(b->messages - a->messages));
		fprintf(f, "%-26s %14llu %14llu %+14lld\n", "MPI bytes sent", (unsigned long long)s[0].msg_bytes,
			(unsigned long long)s[1].msg_bytes, (long long)(s[1].msg_bytes - s[0].msg_bytes));
		double la = sec(a, s[0].late_sender), lb = sec(b, s[1].late_sender);
		ratio(q, sizeof q, la, lb);
		fprintf(f, "%-26s %14.6f %14.6f %+14.6f %8s\n", "MPI late-sender wait s", la, lb, lb - la, q);
	}
	size_t shown = limit && nreg > limit ? limit : nreg;
	fprintf(f, "\nRegions by change of exclusive time, all locations (%zu of %zu)\n", shown, nreg);
	fprintf(f, "%-32s %9s %9s %12s %12s %12s %8s %12s %12s\n", "region", "calls A", "calls B", "excl A s",
		"excl B s", "change s", "B/A", "incl A s", "incl B s");
	for (size_t i = 0; i < shown; i++) {
		const struct drow *d = &reg[i];
		size_t l = strlen(d->name);
		ratio(q, sizeof q, d->v[0], d->v[1]);
		fprintf(f, "%-32s %9llu %9llu %12.6f %12.6f %+12.6f %8s %12.6f %12.6f\n",
			l > 32 ? d->name + l - 32 : d->name, (unsigned long long)d->n[0], (unsigned long long)d->n[1],
			d->v[0], d->v[1], d->v[1] - d->v[0], q, d->w[0], d->w[1]);
	}
	if (!nio)
		return;
	shown = limit && nio > limit ? limit : nio;
	fprintf(f, "\nI/O per file by change of time (%zu of %zu; IoOperationBegin to Complete)\n", shown, nio);
	fprintf(f, "%-40s %-6s %8s %8s %12s %12s %11s %11s %11s\n", "file", "layer", "ops A", "ops B", "bytes A",
		"bytes B", "time A s", "time B s", "change s");
	for (size_t i = 0; i < shown; i++) {
		const struct drow *d = &io[i];
		size_t l = strlen(d->name);
		fprintf(f, "%-40s %-6s %8llu %8llu %12.0f %12.0f %11.6f %11.6f %+11.6f\n",
			l > 40 ? d->name + l - 40 : d->name, d->layer, (unsigned long long)d->n[0],
			(unsigned long long)d->n[1], d->w[0], d->w[1], d->v[0], d->v[1], d->v[1] - d->v[0]);
	}
}

static void json_side(const struct side *s, FILE *f)
{
	const struct rep *r = &s->r;
	fputs("{\"path\":", f);
	rep_json_str(f, s->path);
	fputs(",\"program\":", f);
	rep_json_str(f, r->program ? r->program : "");
	fprintf(f, ",\"duration\":%.9f,\"events\":%llu,\"processes\":%zu,\"locations\":%zu,\"lock_wait\":%.9f,"
		"\"lock_acquisitions\":%llu,\"messages\":%llu,\"message_bytes\":%llu,\"late_sender\":%.9f}",
		sec(r, r->last - r->first), (unsigned long long)r->events, r->ngroups, r->nlocs,
		sec(r, s->lock_wait), (unsigned long long)s->lock_acq, (unsigned long long)r->messages,
		(unsigned long long)s->msg_bytes, sec(r, s->late_sender));
}

static void print_json(struct side *s, struct drow *reg, size_t nreg, struct drow *io, size_t nio, size_t limit,
		       FILE *f)
{
	fputs("{\"a\":", f);
	json_side(&s[0], f);
	fputs(",\"b\":", f);
	json_side(&s[1], f);
	fputs(",\"regions\":[", f);
	for (size_t i = 0; i < nreg && (!limit || i < limit); i++) {
		const struct drow *d = &reg[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rep_json_str(f, d->name);
		fprintf(f, ",\"calls\":[%llu,%llu],\"excl\":[%.9f,%.9f],\"incl\":[%.9f,%.9f]}",
			(unsigned long long)d->n[0], (unsigned long long)d->n[1], d->v[0], d->v[1], d->w[0], d->w[1]);
	}
	fputs("],\"io\":[", f);
	for (size_t i = 0; i < nio && (!limit || i < limit); i++) {
		const struct drow *d = &io[i];
		fputs(i ? ",{\"file\":" : "{\"file\":", f);
		rep_json_str(f, d->name);
		fputs(",\"layer\":", f);
		rep_json_str(f, d->layer);
		fprintf(f, ",\"operations\":[%llu,%llu],\"bytes\":[%.0f,%.0f],\"time\":[%.9f,%.9f]}",
			(unsigned long long)d->n[0], (unsigned long long)d->n[1], d->w[0], d->w[1], d->v[0], d->v[1]);
	}
	fputs("]}\n", f);
}

int tracer_diff_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "limit", required_argument, 0, 'n' }, { "json", no_argument, 0, 'j' },
		REP_SELECT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	struct rep_select sel = REP_SELECT_INIT;
	size_t limit = 20;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'n':
			limit = strtoul(optarg, &end, 10);
			if (*end || *optarg < '0' || *optarg > '9') {
				fprintf(stderr, "tracer diff: --limit wants a number, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'j': json = 1; break;
		REP_SELECT_CASES(sel, c, "diff");
		case 'h': fputs(diff_usage, stdout); return 0;
		default: fputs(diff_usage, stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(diff_usage, stderr);
		return 2;
	}
	struct side s[2];
	memset(s, 0, sizeof s);
	int rc = 0, opened = 0, built = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		char err[8192];
		s[k].path = argv[optind + k];
		if (otf2r_open(s[k].path, &s[k].ar, err, sizeof err)) {
			rep_read_error(s[k].path, err);
			rc = 1;
			break;
		}
		opened++;
		built++;
		int b = rep_build_select(&s[k].r, s[k].ar, 0, &sel);
		if (b) {
			if (b != -2)   /* (-2: a bad selection, said) */
				rep_read_error(s[k].path, otf2r_error(s[k].ar));
			rc = b == -2 ? 2 : 1;
			break;
		}
		totals(&s[k]);
	}
	if (!rc) {
		struct drow *reg, *io;
		size_t nreg = region_rows(s, &reg), nio = io_rows(s, &io);
		if (json)
			print_json(s, reg, nreg, io, nio, limit, stdout);
		else
			print_text(s, reg, nreg, io, nio, limit, stdout);
		free(reg);
		free(io);
		if (fflush(stdout) != 0)
			rc = 1;
	}
	for (int k = 0; k < opened; k++) {
		if (k < built)
			rep_free(&s[k].r);
		otf2r_close(s[k].ar);
	}
	return rc;
}
