/* SPDX-License-Identifier: BSD-3-Clause */
/* report_text.c - `tracer report`: options, text tables and --json. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

static const char usage_text[] =
	"usage: tracer report [options] ARCHIVE\n"
	"\n"
	"Where did the time go? Reads an OTF2 archive (the directory the tracer\n"
	"wrote, or its .otf2 anchor) with our own reader and prints: the run's\n"
	"facts (program, processes, threads, duration, events, bytes, buffer\n"
	"flushes, measurement on/off switches, sampling asked and delivered);\n"
	"per region calls, inclusive and exclusive time, min/avg/max per call, in\n"
	"total, per process and per location; a summary per process and per\n"
	"thread; tasks; metrics per region; locks by wait; I/O per file and per\n"
	"operation kind; MPI messages (matrix, late senders), collectives and\n"
	"polling, wait states, who waits on whom and the critical path (a second\n"
	"pass over the events of the ranks on it); sampled functions and the\n"
	"hottest call paths. Tables without data are left out.\n"
	"Inclusive time counts the outermost activation of a recursive region\n"
	"once; regions still open at the end close at the location's last event.\n"
	"\n"
	"options:\n"
	"  -n, --limit N       rows per table (default 20, 0 = all)\n"
	"  -s, --sort KEY      excl (default), incl, calls, avg, max, name\n"
	"  -l, --location ID   only this location (thread) in the per-location tables\n"
	REP_SELECT_HELP
	"                      (calls that begin in the window, with their time in it;\n"
	"                      --thread/--rank: every table covers those locations)\n"
	"      --json          machine-readable output (times in ticks) on stdout\n"
	"      --html FILE     also write one self-contained HTML page (tables and a\n"
	"                      timeline, no network access needed) to FILE\n"
	"      --collapsed FILE  also write the sampled call paths as collapsed stacks\n"
	"                      (\"main;f;g 12\" lines: flamegraph.pl, speedscope) to FILE\n"
	"  -h, --help          this text\n";

static void row(const struct rep *r, FILE *f, const char *name, const struct rep_stat *s,
		uint64_t total)
{
	fprintf(f, "  %-32.32s %10" PRIu64 " %12.3f %12.3f %6.1f%% %10.3f %10.3f %10.3f\n", name,
		s->calls, rep_ms(r, s->incl), rep_ms(r, s->excl),
		total ? 100.0 * (double)s->excl / (double)total : 0.0,
		rep_ms(r, s->min) * 1e3, rep_ms(r, REP_AVG(r, s)) * 1e3,
		rep_ms(r, s->max) * 1e3);
}

static void header(FILE *f)
{
	fprintf(f, "  %-32s %10s %12s %12s %7s %10s %10s %10s\n", "region", "calls", "incl ms",
		"excl ms", "thread%", "min us", "avg us", "max us");
}

/* Thread time of the locations of group g (-1: all): the sum of their
 * durations, what excl% is a share of (a share of the traced calls' time
 * alone read "printf 100 %" in a run that only sampled). */
static uint64_t thread_time(const struct rep *r, int g)
{
	uint64_t t = 0;
	for (size_t i = 0; i < r->nlocs; i++)
		if (g < 0 || r->locs[i].group == (size_t)g)
			t += r->locs[i].last - r->locs[i].first;
	return t;
}

static void table(const struct rep *r, const struct rep_opts *o, FILE *f,
		  const struct rep_stat *st, size_t *order, uint64_t total)
{
	size_t n;
	rep_sorted(r, st, o, order, &n);
	header(f);
	for (size_t k = 0; k < n; k++)
		row(r, f, r->region_names[order[k]], &st[order[k]], total);
}

/* Region classes: Group definitions of type REGIONS (VT classes, e.g.). */
static void print_classes(const struct rep *r, FILE *f, const struct rep_stat *st, int json)
{
	int k = 0;
	for (size_t i = 0; i < otf2r_def_count(r->ar); i++) {
		const otf2r_def *d = otf2r_def_at(r->ar, i);
		if (d->type != OTF2R_GDEF_GROUP || d->u.group.group_type != 2)   /* REGIONS */
			continue;
		uint64_t calls = 0, excl = 0;
		for (uint32_t m = 0; m < d->u.group.number_of_members; m++) {
			uint64_t id = d->u.group.members[m];
			uint32_t ri = id < r->region_ids ? r->region_by_id[id] : UINT32_MAX;
			if (ri == UINT32_MAX)
				continue;
			calls += st[ri].calls;
			excl += st[ri].excl;
		}
		const char *name = otf2r_string(r->ar, d->u.group.name);
		if (json) {
			fprintf(f, "%s{\"group\":%" PRIu32 ",\"name\":", k++ ? "," : "", d->u.group.self);
			rep_json_str(f, name);
			fprintf(f, ",\"regions\":%" PRIu32 ",\"calls\":%" PRIu64 ",\"excl\":%" PRIu64 "}",
				d->u.group.number_of_members, calls, excl);
			continue;
		}
		if (!k++) {
			fprintf(f, "\nRegion classes (REGIONS groups, e.g. VT classes):\n");
			fprintf(f, "  %-32s %8s %10s %12s\n", "class", "regions", "calls", "excl ms");
		}
		fprintf(f, "  %-32.32s %8" PRIu32 " %10" PRIu64 " %12.3f\n", name ? name : "?",
			d->u.group.number_of_members, calls, rep_ms(r, excl));
	}
}

static void print_samples(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	struct rep_fn *fn = calloc(r->nregions + 1, sizeof *fn);
	uint32_t *cc = calloc(r->ncc + 1, sizeof *cc);
	if (!fn || !cc) {
		free(fn);
		free(cc);
		return;
	}
	char line[4096];
	size_t n = rep_sample_functions(r, fn);
	fprintf(f, "\nSamples: %" PRIu64 " (CallingContextSample), top functions by self samples:\n",
		r->samples);
	fprintf(f, "  %-32s %8s %7s %8s %7s  %s\n", "function", "self", "self%", "total", "total%",
		"hottest line");
	for (size_t k = 0; k < n && (!o->limit || k < o->limit); k++)
		fprintf(f, "  %-32.32s %8" PRIu64 " %6.1f%% %8" PRIu64 " %6.1f%%  %s\n",
			r->region_names[fn[k].ri], fn[k].self, 100.0 * (double)fn[k].self / (double)r->samples,
			fn[k].total, 100.0 * (double)fn[k].total / (double)r->samples,
			rep_scl_text(r, fn[k].scl, line, sizeof line));
	size_t np = rep_sample_paths(r, cc);
	fprintf(f, "\nHottest call paths (samples, outermost first):\n");
	for (size_t k = 0; k < np && k < (o->limit ? o->limit : np) && k < 10; k++) {
		uint32_t chain[256];
		size_t d = 0;
		for (uint32_t p = cc[k]; p != UINT32_MAX && d < 256; p = r->cc_parent[p])
			chain[d++] = p;
		fprintf(f, "  %8" PRIu64 "  ", r->cc_samples[cc[k]]);
		while (d-- > 0) {
			uint32_t ri = r->cc_region[chain[d]];
			fprintf(f, "%s%s", ri == UINT32_MAX ? "?" : r->region_names[ri], d ? " > " : "");
		}
		fprintf(f, "  (%s)\n", rep_scl_text(r, r->cc_scl[cc[k]], line, sizeof line));
	}
	free(fn);
	free(cc);
}

/* The SAMPLING:: location properties the sampler leaves (samples, deferred,
 * lost, CPU time per thread) and the InterruptGenerator: asked and
 * delivered rate, as the tracer's exit line says it. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void print_sampling_facts(const struct rep *r, FILE *f)
{
	enum { SAMPLES, DEFERRED, LOST, CPU_NS, NPROP };
	static const char *const names[NPROP] = { "SAMPLING::SAMPLES", "SAMPLING::DEFERRED",
						  "SAMPLING::LOST", "SAMPLING::CPU_NS" };
	const otf2r_gdef_interrupt_generator *ig = NULL;
	const char *ig_name = NULL;
	size_t n = otf2r_def_count(r->ar), nlocs = 0;
	uint64_t (*v)[NPROP] = calloc(n + 1, sizeof *v);
	uint64_t *loc = calloc(n + 1, sizeof *loc);
	double *rate = calloc(n + 1, sizeof *rate);
	if (!v || !loc || !rate)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const otf2r_def *d = otf2r_def_at(r->ar, i);
		if (d->type == OTF2R_GDEF_INTERRUPT_GENERATOR && !ig) {
			ig = &d->u.interrupt_generator;
			ig_name = otf2r_string(r->ar, ig->name);
			continue;
		}
		if (d->type != OTF2R_GDEF_LOCATION_PROPERTY)
			continue;
		const otf2r_gdef_location_property *p = &d->u.location_property;
		const char *pn = otf2r_string(r->ar, p->name);
		int k = 0;
		while (k < NPROP && (!pn || strcmp(pn, names[k])))
			k++;
		if (k == NPROP)
			continue;
		const char *sv = otf2r_string(r->ar, p->string_value);
		uint64_t val = sv ? strtoull(sv, NULL, 10) : p->value;
		size_t j = 0;
		while (j < nlocs && loc[j] != p->location)
			j++;
		if (j == nlocs)
			loc[nlocs++] = p->location;
		v[j][k] = val;
	}
	if (!ig && !nlocs)
		goto out;
	uint64_t tot[NPROP] = { 0 };
	size_t nrate = 0;
	for (size_t j = 0; j < nlocs; j++) {
		for (int k = 0; k < NPROP; k++)
			tot[k] += v[j][k];
		if (v[j][CPU_NS] > 0)
			rate[nrate++] = (double)v[j][SAMPLES] * 1e9 / (double)v[j][CPU_NS];
	}
	fprintf(f, "sampling   %s", ig_name ? ig_name : "samples");
	if (ig && ig->period) {
		double sec = (double)ig->period;
		for (int64_t e = ig->exponent; e < 0; e++)
			sec /= ig->base == 0 ? 2.0 : 10.0;
		for (int64_t e = ig->exponent; e > 0; e--)
			sec *= ig->base == 0 ? 2.0 : 10.0;
		if (ig->interrupt_generator_mode == 0 && sec > 0)
			fprintf(f, ": asked %.0f/s of CPU per thread", 1.0 / sec);
	}
	if (nrate) {
		qsort(rate, nrate, sizeof *rate, cmp_double);
		fprintf(f, ", delivered min %.0f/s median %.0f/s over %zu threads", rate[0], rate[nrate / 2],
			nrate);
	}
	fprintf(f, "; samples %" PRIu64 ", deferred %" PRIu64 ", lost %" PRIu64 "\n", tot[SAMPLES],
		tot[DEFERRED], tot[LOST]);
out:
	free(v);
	free(loc);
	free(rate);
}

int rep_print_text(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	size_t *order = calloc(r->nregions + 1, sizeof *order);
	struct rep_stat *st = calloc(r->nregions + 1, sizeof *st);
	if (!order || !st)
		return -1;
	size_t nthreads = r->nlocs, nranks = 0;
	for (size_t g = 0; g < r->ngroups; g++)
		nranks += r->groups[g].nlocs > 0;
	uint64_t flushes = 0, onoff = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		flushes += r->locs[i].flushes;
		onoff += r->locs[i].onoff;
	}
	fprintf(f, "archive    %s\n", otf2r_path(r->ar));
	fprintf(f, "program    %s\n", r->program ? r->program : "?");
	fprintf(f, "processes  %zu   threads %zu   duration %.3f ms   events %" PRIu64
		"   bytes %" PRIu64 "\n", nranks, nthreads, rep_ms(r, r->last - r->first), r->events,
		r->bytes);
	if (r->windowed)
		fprintf(f, "window     %.6f s to %s%.6f s from the start (calls that begin in it, their time in it)\n",
			rep_ms(r, r->win_from - r->offset) / 1e3, r->win_to == UINT64_MAX ? "the end, " : "",
			r->win_to == UINT64_MAX ? rep_ms(r, r->last - r->offset) / 1e3 : rep_ms(r, r->win_to - r->offset) / 1e3);
	fprintf(f, "flushes    %" PRIu64 "   measurement on/off switches %" PRIu64
		"   timer %" PRIu64 " ticks/s\n", flushes, onoff, r->resolution);
	print_sampling_facts(r, f);

	fprintf(f, "\nRegions, all locations (sorted by %s):\n", o->sort ? o->sort : "excl");
	for (size_t i = 0; i < r->nregions; i++)
		st[i] = rep_total(r, i, -1);
	table(r, o, f, st, order, thread_time(r, -1));

	print_classes(r, f, st, 0);

	fprintf(f, "\nProcesses (location groups):\n");
	fprintf(f, "  %-32s %8s %10s %12s %12s\n", "process", "threads", "events", "in calls ms",
		"MPI ms");
	for (size_t g = 0; g < r->ngroups; g++) {
		uint64_t ev = 0, busy = 0, mpi = 0;
		for (size_t i = 0; i < r->nlocs; i++) {
			if (r->locs[i].group != g)
				continue;
			ev += r->locs[i].events;
			busy += r->locs[i].busy;
			mpi += r->locs[i].mpi;
		}
		if (r->groups[g].nlocs)
			fprintf(f, "  %-32.32s %8zu %10" PRIu64 " %12.3f %12.3f\n", r->groups[g].name,
				r->groups[g].nlocs, ev, rep_ms(r, busy), rep_ms(r, mpi));
	}

	size_t nproc = 0;
	for (size_t g = 0; g < r->ngroups; g++)
		nproc += r->groups[g].nlocs > 0;
	for (size_t g = 0; g < r->ngroups && nproc > 1; g++) {
		if (!r->groups[g].nlocs)
			continue;
		fprintf(f, "\nRegions of process %s:\n", r->groups[g].name);
		for (size_t i = 0; i < r->nregions; i++)
			st[i] = rep_total(r, i, (int)g);
		table(r, o, f, st, order, thread_time(r, (int)g));
	}

	fprintf(f, "\nThreads (locations):\n");
	fprintf(f, "  %-12s %-24s %-16s %10s %12s %12s %12s %14s %14s\n", "location", "name",
		"process", "events", "duration ms", "in calls ms", "MPI ms", "late sender ms",
		"late recv ms");
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		fprintf(f, "  %-12" PRIu64 " %-24.24s %-16s %10" PRIu64 " %12.3f %12.3f %12.3f %14.3f %14.3f\n",
			L->id, L->name, r->groups[L->group].name, L->events,
			rep_ms(r, L->last - L->first), rep_ms(r, L->busy), rep_ms(r, L->mpi),
			rep_ms(r, L->late_sender), rep_ms(r, L->late_receiver));
	}

	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		if ((o->has_location && L->id != o->location) || !L->events)
			continue;
		fprintf(f, "\nRegions of location %" PRIu64 " (%s, %s):\n", L->id, L->name,
			r->groups[L->group].name);
		table(r, o, f, L->reg, order, L->last - L->first);
	}

	if (r->samples)
		print_samples(r, o, f);

	uint64_t tk[3] = { 0, 0, 0 };
	for (size_t i = 0; i < r->nlocs; i++)
		for (int k = 0; k < 3; k++)
			tk[k] += r->locs[i].tasks[k];
	if (tk[0] + tk[1] + tk[2]) {
		fprintf(f, "\nTasks (ThreadTaskCreate / Switch / Complete, e.g. Argobots work units): "
			"%" PRIu64 " created, %" PRIu64 " switches, %" PRIu64 " completed\n", tk[0], tk[1],
			tk[2]);
		fprintf(f, "  %-12s %-24s %10s %10s %10s\n", "location", "name", "created", "switches",
			"completed");
		for (size_t i = 0; i < r->nlocs; i++) {
			const struct rep_loc *L = &r->locs[i];
			if (L->tasks[0] + L->tasks[1] + L->tasks[2])
				fprintf(f, "  %-12" PRIu64 " %-24.24s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
					L->id, L->name, L->tasks[0], L->tasks[1], L->tasks[2]);
		}
	}

	int mhead = 0;
	for (size_t i = 0; i < r->nregions; i++)
		for (size_t m = 0; m < r->nmm; m++) {
			if (!r->mreg_n[i * r->nmm + m])
				continue;
			if (!mhead++) {
				fprintf(f, "\nMetrics per region (value at Leave - value at Enter, outermost "
					"calls, all locations):\n");
				fprintf(f, "  %-32s %-24s %10s %18s %14s\n", "region", "metric", "calls",
					"total", "per call");
			}
			const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_MEMBER, r->mm_ids[m]);
			const char *mn = d ? otf2r_string(r->ar, d->u.metric_member.name) : NULL;
			uint64_t n = r->mreg_n[i * r->nmm + m];
			fprintf(f, "  %-32.32s %-24.24s %10" PRIu64 " %18.6g %14.6g\n", r->region_names[i],
				mn ? mn : "?", n, r->mreg[i * r->nmm + m], r->mreg[i * r->nmm + m] / (double)n);
		}

	rep_metric_totals_text(r, f);

	int whead = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		if (!L->wait_nxn && !L->late_bcast && !L->early_reduce && !L->late_sender && !L->late_receiver)
			continue;
		if (!whead++) {
			fprintf(f, "\nWait states (MPI: late sender/receiver at messages; at collectives: wait at NxN "
				"until the last member enters, late broadcast until the root enters, early reduce "
				"of the root until the last one enters):\n");
			fprintf(f, "  %-12s %-24s %14s %14s %14s %14s %14s\n", "location", "name", "late sender ms",
				"late recv ms", "wait NxN ms", "late bcast ms", "early reduce ms");
		}
		fprintf(f, "  %-12" PRIu64 " %-24.24s %14.3f %14.3f %14.3f %14.3f %14.3f\n", L->id, L->name,
			rep_ms(r, L->late_sender), rep_ms(r, L->late_receiver), rep_ms(r, L->wait_nxn),
			rep_ms(r, L->late_bcast), rep_ms(r, L->early_reduce));
	}

	rep_pairs_text(r, o, f);
	rep_cpath_text(r, o, f);

	rep_text_callers(r, o->limit, f);

	const struct rep_lock **locks = calloc(r->nlocks + 1, sizeof *locks);
	size_t nl = locks ? rep_sorted_locks(r, locks) : 0;
	if (nl) {
		fprintf(f, "\nLocks (%zu, by total wait = Enter of the lock call to the acquisition):\n", nl);
		fprintf(f, "  %-16s %10s %18s %-24s %12s %12s %12s  %s\n", "process", "lock", "address", "name",
			"acquisitions", "wait ms", "max wait us", "threads that waited most (ms)");
		for (size_t k = 0; k < nl && (!o->limit || k < o->limit); k++) {
			const struct rep_lock *l = locks[k];
			char a[24] = "-";
			if (l->address)
				snprintf(a, sizeof a, "0x%" PRIx64, l->address);
			char made[160];
			if (!l->name && l->init)
				snprintf(made, sizeof made, "- (made in %s)", l->init);
			fprintf(f, "  %-16s %10" PRIu32 " %18s %-24s %12" PRIu64 " %12.3f %12.3f  ",
				r->groups[l->group].name, l->id, a, l->name ? l->name : l->init ? made : "-",
				l->acquisitions, rep_ms(r, l->wait), rep_ms(r, l->max) * 1e3);
			for (size_t w = 0; w < l->nwaiters && w < 3; w++)
				fprintf(f, "%s%s: %.3f", w ? ", " : "", r->locs[l->waiters[w].loc].name,
					rep_ms(r, l->waiters[w].wait));
			fputc('\n', f);
		}
	}
	free(locks);

	size_t ncoll = 0;
	for (size_t cm = 0; cm < r->ncomm; cm++)
		ncoll += r->coll_count[cm] > 0;
	if (ncoll) {
		fprintf(f, "\nMPI collectives per communicator (calls; operations and time: MpiCollectiveBegin to "
			"End of every rank):\n");
		fprintf(f, "  %-6s %-32s %8s %12s %12s\n", "comm", "name", "calls", "operations", "time ms");
		for (size_t cm = 0; cm < r->ncomm; cm++)
			if (r->coll_count[cm])
				fprintf(f, "  %-6zu %-32.32s %8" PRIu64 " %12" PRIu64 " %12.3f\n", cm,
					rep_comm_name(r, (uint32_t)cm), r->coll_calls[cm], r->coll_count[cm],
					rep_ms(r, r->coll_time[cm]));
	}

	if (r->messages) {
		fprintf(f, "\nMPI messages sent (count / bytes), sender row -> receiver column:\n");
		fprintf(f, "  %-16s", "");
		for (size_t g = 0; g < r->ngroups; g++)
			fprintf(f, " %22.22s", r->groups[g].name);
		fputc('\n', f);
		for (size_t s = 0; s < r->ngroups; s++) {
			fprintf(f, "  %-16s", r->groups[s].name);
			for (size_t g = 0; g < r->ngroups; g++) {
				char cell[64];
				snprintf(cell, sizeof cell, "%" PRIu64 " / %" PRIu64,
					 r->msg_count[s * r->ngroups + g], r->msg_bytes[s * r->ngroups + g]);
				fprintf(f, " %22s", cell);
			}
			fputc('\n', f);
		}
	}
	rep_io_print_text(r, o, f);
	free(order);
	free(st);
	return ferror(f) ? -1 : 0;
}

static void json_stat(FILE *f, const struct rep *r, size_t ri, const struct rep_stat *s)
{
	fputs("{\"name\":", f);
	rep_json_str(f, r->region_names[ri]);
	fprintf(f, ",\"id\":%" PRIu32 ",\"calls\":%" PRIu64 ",\"incl\":%" PRIu64 ",\"excl\":%" PRIu64
		",\"min\":%" PRIu64 ",\"max\":%" PRIu64 "}", r->regions[ri]->self, s->calls, s->incl,
		s->excl, s->min, s->max);
}

static void json_regions(FILE *f, const struct rep *r, const struct rep_opts *o,
			 const struct rep_stat *st, size_t *order)
{
	size_t n;
	rep_sorted(r, st, o, order, &n);
	fputc('[', f);
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputc(',', f);
		json_stat(f, r, order[k], &st[order[k]]);
	}
	fputc(']', f);
}

int rep_print_json(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	size_t *order = calloc(r->nregions + 1, sizeof *order);
	struct rep_stat *st = calloc(r->nregions + 1, sizeof *st);
	if (!order || !st)
		return -1;
	fputs("{\"archive\":", f);
	rep_json_str(f, otf2r_path(r->ar));
	fputs(",\"program\":", f);
	rep_json_str(f, r->program);
	fprintf(f, ",\"resolution\":%" PRIu64 ",\"first\":%" PRIu64 ",\"last\":%" PRIu64
		",\"events\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"messages\":%" PRIu64 ",\"regions\":",
		r->resolution, r->first, r->last, r->events, r->bytes, r->messages);
	for (size_t i = 0; i < r->nregions; i++)
		st[i] = rep_total(r, i, -1);
	json_regions(f, r, o, st, order);
	rep_json_callers(r, f);
	if (r->windowed)
		fprintf(f, ",\"window\":{\"from\":%" PRIu64 ",\"to\":%" PRIu64 "}", r->win_from,
			r->win_to == UINT64_MAX ? r->last + 1 : r->win_to);
	fputs(",\"classes\":[", f);
	print_classes(r, f, st, 1);
	fputs("],\"processes\":[", f);
	int first = 1;
	for (size_t g = 0; g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		fprintf(f, "%s{\"id\":%" PRIu32 ",\"name\":", first ? "" : ",", r->groups[g].id);
		first = 0;
		rep_json_str(f, r->groups[g].name);
		fputs(",\"regions\":", f);
		for (size_t i = 0; i < r->nregions; i++)
			st[i] = rep_total(r, i, (int)g);
		json_regions(f, r, o, st, order);
		fputs(",\"messages_to\":[", f);
		for (size_t t = 0, k = 0; t < r->ngroups; t++) {
			if (!r->msg_count[g * r->ngroups + t])
				continue;
			fprintf(f, "%s{\"to\":%" PRIu32 ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
				k++ ? "," : "", r->groups[t].id, r->msg_count[g * r->ngroups + t],
				r->msg_bytes[g * r->ngroups + t]);
		}
		fputs("]}", f);
	}
	fputs("],\"locations\":[", f);
	first = 1;
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		if (o->has_location && L->id != o->location)
			continue;
		fprintf(f, "%s{\"id\":%" PRIu64 ",\"name\":", first ? "" : ",", L->id);
		first = 0;
		rep_json_str(f, L->name);
		fprintf(f, ",\"process\":%" PRIu32 ",\"events\":%" PRIu64 ",\"first\":%" PRIu64
			",\"last\":%" PRIu64 ",\"busy\":%" PRIu64 ",\"mpi\":%" PRIu64 ",\"flushes\":%" PRIu64
			",\"onoff\":%" PRIu64 ",\"late_sender\":%" PRIu64 ",\"late_sender_n\":%" PRIu64
			",\"late_receiver\":%" PRIu64 ",\"wait_nxn\":%" PRIu64 ",\"late_broadcast\":%" PRIu64
			",\"early_reduce\":%" PRIu64 ",\"tasks\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64
			"],\"regions\":", r->groups[L->group].id, L->events, L->first, L->last, L->busy,
			L->mpi, L->flushes, L->onoff, L->late_sender, L->late_sender_n, L->late_receiver,
			L->wait_nxn, L->late_bcast, L->early_reduce, L->tasks[0], L->tasks[1], L->tasks[2]);
		json_regions(f, r, o, L->reg, order);
		fputc('}', f);
	}
	fprintf(f, "],\"samples\":{\"total\":%" PRIu64 ",\"functions\":[", r->samples);
	struct rep_fn *fn = calloc(r->nregions + 1, sizeof *fn);
	size_t nf = fn ? rep_sample_functions(r, fn) : 0;
	for (size_t k = 0; k < nf; k++) {
		fprintf(f, "%s{\"id\":%" PRIu32 ",\"name\":", k ? "," : "", r->regions[fn[k].ri]->self);
		rep_json_str(f, r->region_names[fn[k].ri]);
		char line[4096];
		fprintf(f, ",\"self\":%" PRIu64 ",\"total\":%" PRIu64 ",\"line\":", fn[k].self,
			fn[k].total);
		rep_json_str(f, rep_scl_text(r, fn[k].scl, line, sizeof line));
		fputc('}', f);
	}
	free(fn);
	fputs("]},\"metrics\":[", f);
	for (size_t i = 0, k = 0; i < r->nregions; i++)
		for (size_t m = 0; m < r->nmm; m++)
			if (r->mreg_n[i * r->nmm + m])
				fprintf(f, "%s{\"region\":%" PRIu32 ",\"member\":%" PRIu32 ",\"calls\":%" PRIu64
					",\"incl\":%.17g}", k++ ? "," : "", r->regions[i]->self, r->mm_ids[m],
					r->mreg_n[i * r->nmm + m], r->mreg[i * r->nmm + m]);
	fputc(']', f);
	rep_metric_totals_json(r, f);
	fputs(",\"collectives\":[", f);
	for (size_t cm = 0, k = 0; cm < r->ncomm; cm++) {
		if (!r->coll_count[cm])
			continue;
		fprintf(f, "%s{\"comm\":%zu,\"name\":", k++ ? "," : "", cm);
		rep_json_str(f, rep_comm_name(r, (uint32_t)cm));
		fprintf(f, ",\"calls\":%" PRIu64 ",\"operations\":%" PRIu64 ",\"time\":%" PRIu64 "}",
			r->coll_calls[cm], r->coll_count[cm], r->coll_time[cm]);
	}
	fputs("],\"locks\":[", f);
	const struct rep_lock **locks = calloc(r->nlocks + 1, sizeof *locks);
	size_t nl = locks ? rep_sorted_locks(r, locks) : 0;
	for (size_t k = 0; k < nl; k++) {
		const struct rep_lock *l = locks[k];
		fprintf(f, "%s{\"process\":%" PRIu32 ",\"lock\":%" PRIu32 ",\"address\":%" PRIu64 ",\"name\":",
			k ? "," : "", r->groups[l->group].id, l->id, l->address);
		l->name ? rep_json_str(f, l->name) : (void)fputs("null", f);
		fputs(",\"object\":", f);
		l->object ? rep_json_str(f, l->object) : (void)fputs("null", f);
		fputs(",\"init\":", f);
		l->init ? rep_json_str(f, l->init) : (void)fputs("null", f);
		fprintf(f, ",\"acquisitions\":%" PRIu64 ",\"wait\":%" PRIu64 ",\"max\":%" PRIu64 ",\"waiters\":[",
			l->acquisitions, l->wait, l->max);
		for (size_t w = 0; w < l->nwaiters; w++)
			fprintf(f, "%s{\"location\":%" PRIu64 ",\"wait\":%" PRIu64 "}", w ? "," : "",
				r->locs[l->waiters[w].loc].id, l->waiters[w].wait);
		fputs("]}", f);
	}
	free(locks);
	fputc(']', f);
	rep_io_print_json(r, f);
	rep_pairs_json(r, f);
	rep_cpath_json(r, o, f);
	fputs("}\n", f);
	free(order);
	free(st);
	return ferror(f) ? -1 : 0;
}

int tracer_report_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "limit", required_argument, 0, 'n' }, { "sort", required_argument, 0, 's' },
		{ "location", required_argument, 0, 'l' }, { "json", no_argument, 0, 'j' },
		{ "html", required_argument, 0, 'H' }, { "collapsed", required_argument, 0, 'C' },
		REP_SELECT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	struct rep_opts o = { .limit = 20, .sort = "excl" };
	struct rep_select sel = REP_SELECT_INIT;
	sel.cpath = 1;   /* (the wait states kept for the critical path) */
	int json = 0, c;
	const char *html = NULL, *coll = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:s:l:h", lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'n':
			o.limit = strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg < '0' || *optarg > '9') {
				fprintf(stderr, "tracer report: --limit wants a number, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 's':
			if (!strstr(" excl incl calls avg max name ", optarg) || strchr(optarg, ' ') ||
			    !*optarg) {
				fprintf(stderr, "tracer report: --sort: excl, incl, calls, avg, max or name\n");
				return 2;
			}
			o.sort = optarg;
			break;
		case 'l':
			o.location = strtoull(optarg, &end, 10);
			if (*end || !*optarg || *optarg < '0' || *optarg > '9') {
				fprintf(stderr, "tracer report: --location wants a location id\n");
				return 2;
			}
			o.has_location = 1;
			break;
		REP_SELECT_CASES(sel, c, "report");
		case 'j': json = 1; break;
		case 'H': html = optarg; break;
		case 'C': coll = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	otf2r_archive *ar;
	int orc = rep_open(argc, argv, usage_text, &ar);
	if (orc)
		return orc;
	struct rep r;
	int rc = rep_build_select(&r, ar, html != NULL, &sel);
	if (rc == -2) {   /* a bad selection: said */
		rep_free(&r);
		otf2r_close(ar);
		return 2;
	}
	if (rc == 0 && rep_cpath_build(&r))   /* (a second pass, over the locations on the path) */
		rc = -1;
	if (rc)
		rep_read_error(argv[optind], otf2r_error(ar));
	if (rc == 0 && o.has_location) {
		size_t i = 0;
		while (i < r.nlocs && r.locs[i].id != o.location)
			i++;
		if (i == r.nlocs) {
			fprintf(stderr, "tracer report: --location %llu: %s has no such location (its ids:",
				(unsigned long long)o.location, argv[optind]);
			for (i = 0; i < r.nlocs && i < 16; i++)
				fprintf(stderr, " %llu", (unsigned long long)r.locs[i].id);
			fprintf(stderr, "%s)\n", r.nlocs > 16 ? " ..." : "");
			rep_free(&r);
			otf2r_close(ar);
			return 2;
		}
	}
	if (rc == 0 && html) {
		FILE *f = fopen(html, "w");
		if (!f || rep_print_html(&r, &o, f) || fclose(f)) {
			fprintf(stderr, "tracer: cannot write %s\n", html);
			rc = -1;
		}
	}
	if (rc == 0 && coll) {
		FILE *f = fopen(coll, "w");
		if (!f || rep_print_collapsed(&r, f) || fclose(f)) {
			fprintf(stderr, "tracer: cannot write %s\n", coll);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = json ? rep_print_json(&r, &o, stdout) : rep_print_text(&r, &o, stdout);
	rep_free(&r);
	otf2r_close(ar);
	return rc ? 1 : 0;
}
