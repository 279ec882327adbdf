/* SPDX-License-Identifier: BSD-3-Clause */
/* report_html.c - `tracer report --html`: one self-contained page (inline
 * CSS, SVG and a little JS, no network): the facts, a timeline with one row
 * per location grouped by process (REP_NBINS bins a row: the regions that
 * covered most of each bin; zoom with the wheel, pan by dragging, hover for
 * the region and time; zoomed in, finer levels of bins: report_html_lod.c;
 * with MPI the critical path over the rows: cpath_overlay), and the
 * report's tables. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define ROW_H 18
#define LABEL_W 220

static const char css[] =
	"body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}"
	"h1{font-size:18px}h2{font-size:15px;margin-top:24px}"
	"table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
	"th{background:#f2f2f2;cursor:pointer;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"#tl{border:1px solid #ccc;display:block;background:#fafafa}.obj{color:#777}"
	".facts td:first-child{color:#666}#tip{position:fixed;pointer-events:none;background:#ffe;"
	"border:1px solid #999;padding:2px 6px;display:none;font-size:12px}";

/* A click on a table header sorts the table (the timeline's script:
 * rep_html_timeline_js). */
static const char js[] =
	"document.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){"
	"var tb=th.closest('table').tBodies[0],col=th.cellIndex,rows=[].slice.call(tb.rows);"
	"var num=th.classList.contains('n');rows.sort(function(a,b){var x=a.cells[col].textContent,"
	"y=b.cells[col].textContent;return num?parseFloat(y)-parseFloat(x):x.localeCompare(y);});"
	"rows.forEach(function(r){tb.appendChild(r);});});});";

/* Colours by paradigm, one hue band each (the legend's); regions of one
 * band differ in hue and lightness (hashed colours made MPI_Init and
 * MPI_Finalize, read and stat64 look alike). */
static const struct {
	unsigned lo, hi;
	const char *name;
} fam[] = {
	{ 200, 245, "MPI" }, { 95, 145, "threads (pthread, locks)" }, { 15, 45, "I/O" }, { 275, 320, "OpenMP" },
	{ 160, 190, "functions (sampled, VT, user)" }, { 330, 355, "other" },
};
#define NFAM (sizeof fam / sizeof fam[0])

static size_t family(const otf2r_gdef_region *rg)
{
	if (rg->region_role == 27 || rg->region_role == 38)   /* FILE_IO, FILE_IO_METADATA */
		return 2;
	switch (rg->paradigm) {
	case 4: return 0;            /* MPI */
	case 7: return 1;            /* PTHREAD */
	case 3: return 3;            /* OPENMP */
	case 1: case 2: case 21: return 4;   /* USER, COMPILER, SAMPLING */
	}
	return 5;
}

void rep_html_color(const struct rep *r, size_t ri, char *out, size_t n)
{
	size_t f = ri < r->nregions ? family(r->regions[ri]) : NFAM - 1;
	unsigned band = fam[f].hi - fam[f].lo + 1;
	unsigned h = fam[f].lo + (unsigned)((double)ri * 29.7) % band;
	unsigned l = 42 + (unsigned)(ri * 11u) % 24u;
	snprintf(out, n, "hsl(%u,68%%,%u%%)", h, l);
}

/* The families present, as swatches. */
static void legend(const struct rep *r, FILE *f)
{
	int seen[NFAM] = { 0 };
	for (size_t i = 0; i < r->nregions; i++)
		seen[family(r->regions[i])] = 1;
	fputs("<p id=\"legend\">", f);
	for (size_t k = 0; k < NFAM; k++)
		if (seen[k])
			fprintf(f, "<span style=\"display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
				"background:hsl(%u,68%%,52%%)\"></span>%s", (fam[k].lo + fam[k].hi) / 2, fam[k].name);
	fputs("<span style=\"display:inline-block;width:12px;height:3px;margin:0 4px 3px 12px;background:#d00\">"
	      "</span>lock wait</p>\n", f);
}

/* One location's row of level 0 (rep_bins_runs): each bin's regions with
 * heights of their share of the bin's time (a call covering 1 % of a bin
 * draws 1 % of it), stacked from the bottom, runs of bins one region fills
 * one rectangle; lock waits as a red band of the width they cover. */
struct row {
	const struct rep *r;
	FILE *f;
	int y;
	double bin_ms, bottom;
	size_t bin;
};

static void row_region(void *ud, const struct rep_run *u)
{
	struct row *w = ud;
	const double hmax = ROW_H - 4;
	char c[32];
	rep_html_color(w->r, u->ri, c, sizeof c);
	if (u->full) {
		fprintf(w->f, "<rect x=\"%zu\" y=\"%d\" width=\"%zu\" height=\"%d\" fill=\"%s\" data-t=\"", u->b,
			w->y + 2, u->e - u->b, ROW_H - 4, c);
		rep_html_str(w->f, w->r->region_names[u->ri]);
		fprintf(w->f, " | %.3f-%.3f ms\"/>\n", w->bin_ms * (double)u->b, w->bin_ms * (double)u->e);
		return;
	}
	if (u->b != w->bin) {   /* a bin's first region: from the bottom */
		w->bin = u->b;
		w->bottom = w->y + 2 + hmax;
	}
	double bt = (double)u->bt;
	double hgt = hmax * (double)u->cov / bt;
	if (hgt > w->bottom - (w->y + 2))
		hgt = w->bottom - (w->y + 2);
	fprintf(w->f, "<rect x=\"%zu\" y=\"%.2f\" width=\"1\" height=\"%.2f\" fill=\"%s\" data-t=\"", u->b,
		w->bottom - hgt, hgt, c);
	rep_html_str(w->f, w->r->region_names[u->ri]);
	fprintf(w->f, " | %.3f-%.3f ms, %.0f%%\"/>\n", w->bin_ms * (double)u->b, w->bin_ms * (double)(u->b + 1),
		100.0 * (double)u->cov / bt);
	w->bottom -= hgt;
}

static void row_lock(void *ud, const struct rep_run *u)
{
	struct row *w = ud;
	double share = (double)u->cov / (double)u->bt;
	fprintf(w->f, "<rect class=\"lockwait\" x=\"%zu\" y=\"%d\" width=\"%.3f\" height=\"3\" fill=\"#d00\" "
		"data-t=\"lock wait | %.3f-%.3f ms\"/>\n", u->b, w->y + ROW_H - 3,
		u->full ? (double)(u->e - u->b) : share, w->bin_ms * (double)u->b, w->bin_ms * (double)u->e);
}

static void draw_row(const struct rep *r, const struct rep_loc *L, int y, double bin_ms, FILE *f)
{
	struct row w = { r, f, y, bin_ms, 0, SIZE_MAX };
	rep_bins_runs(&L->lod[0], r, 0, row_region, &w);
	rep_bins_runs(&L->lod[0], r, 1, row_lock, &w);
}

static int cmp_seg_time(const void *a, const void *b)
{
	const struct rep_seg *x = a, *y = b;
	return (x->a > y->a) - (x->a < y->a);
}

/* The critical path (report_path.c) over the rows (top: each location's
 * row top): per segment a dark bar 3 high at the top of its location's
 * row, per jump between consecutive segments in time order a vertical line
 * from the one row to the other at the jump's time. x in level-0 bins as
 * #bars, data-a/data-b the same to full precision: at each zoom the script
 * places them in the visible window itself (rep_html_timeline_js), so that
 * they stay exact deep in. */
static void cpath_overlay(const struct rep *r, const size_t *top, FILE *f)
{
	const struct rep_cpath *p = r->cpath;
	struct rep_seg *s = rep_xcalloc(p->nseg, sizeof *s);
	memcpy(s, p->seg, p->nseg * sizeof *s);
	qsort(s, p->nseg, sizeof *s, cmp_seg_time);
	double span = (double)(r->t1 - r->t0);
	fprintf(f, "<g id=\"cpath\" transform=\"translate(%d,0)\">\n", LABEL_W);
	for (size_t k = 0; k < p->nseg; k++) {
		double a = (double)(s[k].a - r->t0) / span * REP_NBINS, b = (double)(s[k].b - r->t0) / span * REP_NBINS;
		fprintf(f, "<rect class=\"cpseg\" x=\"%.4f\" y=\"%zu\" width=\"%.4f\" height=\"3\" fill=\"#222\" "
			"data-a=\"%.17g\" data-b=\"%.17g\" data-t=\"critical path | ", a, top[s[k].loc], b - a, a, b);
		rep_html_str(f, r->locs[s[k].loc].name);
		fprintf(f, " | %.3f-%.3f ms\"/>\n", rep_ms(r, s[k].a - r->t0), rep_ms(r, s[k].b - r->t0));
		if (k && s[k].loc != s[k - 1].loc)
			fprintf(f, "<line class=\"cpjump\" x1=\"%.4f\" y1=\"%zu.5\" x2=\"%.4f\" y2=\"%zu.5\" "
				"data-a=\"%.17g\" stroke=\"#222\" stroke-width=\"1.5\" "
				"vector-effect=\"non-scaling-stroke\"/>\n", a, top[s[k - 1].loc] + 1, a, top[s[k].loc] + 1, a);
	}
	fputs("</g>\n", f);
	free(s);
}

static void timeline(const struct rep *r, FILE *f)
{
	if (r->t1 <= r->t0 || !r->nlocs)
		return;
	size_t rows = 0;
	for (size_t g = 0; g < r->ngroups; g++)
		if (r->groups[g].nlocs)
			rows += 1 + r->groups[g].nlocs;
	int w = REP_NBINS, h = (int)rows * ROW_H;
	fprintf(f, "<h2>Timeline</h2><p>%.3f ms, %d bins per row: each bin shows the regions that "
		"covered most of it, each as high as its share of the bin's time (white: outside traced "
		"calls); red band: waiting for a lock, as wide as the wait; black lines: MPI messages. "
		"Wheel: zoom, drag: pan, hover: region.", rep_ms(r, r->t1 - r->t0), REP_NBINS);
	char *lod = NULL;
	size_t lod_len = 0, levels = rep_html_lod(r, ROW_H, &lod, &lod_len);
	for (size_t l = 1, nb = REP_NBINS * REP_LOD_STEP; l <= levels; l++, nb *= REP_LOD_STEP)
		fprintf(f, "%s%zu", l > 1 ? ", " : " Zoomed in, the rows are drawn again from finer bins, "
			"computed from the events: ", nb);
	fputs(levels ? " bins per row.</p>\n" : "</p>\n", f);
	legend(r, f);
	fprintf(f, "<svg id=\"tl\" width=\"100%%\" viewBox=\"0 0 %d %d\" data-w=\"%d\" data-h=\"%d\" "
		"data-l=\"%d\" preserveAspectRatio=\"none\" style=\"height:%dpx\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", w + LABEL_W, h, w, h, LABEL_W, h);
	fprintf(f, "<g id=\"bars\" transform=\"translate(%d,0)\"><g id=\"coarse\">\n", LABEL_W);
	double bin_ms = rep_ms(r, r->t1 - r->t0) / REP_NBINS;
	int y = 0;
	for (size_t g = 0; g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		y += ROW_H;
		for (size_t i = 0; i < r->nlocs; i++) {
			const struct rep_loc *L = &r->locs[i];
			if (L->group != g)
				continue;
			draw_row(r, L, y, bin_ms, f);
			y += ROW_H;
		}
	}
	/* the finer levels' bins, drawn by the script (rep_html_lod); above
	 * them the critical path, then the matched MPI messages: a line from
	 * the send to the receive */
	fputs("</g></g>\n<g id=\"detail\"></g>\n", f);
	size_t *top = calloc(r->nlocs + 1, sizeof *top);   /* [location] its row's top */
	for (size_t g = 0, ry = 0; top && g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		ry += ROW_H;
		for (size_t i = 0; i < r->nlocs; i++)
			if (r->locs[i].group == g) {
				top[i] = ry;
				ry += ROW_H;
			}
	}
	if (top && r->cpath && r->cpath->nseg)
		cpath_overlay(r, top, f);
	fprintf(f, "<g id=\"msgs\" transform=\"translate(%d,0)\">\n", LABEL_W);
	double span = (double)(r->t1 - r->t0);
	for (size_t k = 0; top && k < r->nmsgs; k++) {
		const struct rep_msg *m = &r->msgs[k];
		double x0 = (double)(m->sent - r->t0) / span * REP_NBINS;
		double x1 = (double)(m->received - r->t0) / span * REP_NBINS;
		fprintf(f, "<line class=\"msg\" x1=\"%.2f\" y1=\"%zu\" x2=\"%.2f\" y2=\"%zu\" "
			"stroke=\"#000\" stroke-width=\"0.6\" vector-effect=\"non-scaling-stroke\"/>\n",
			x0, top[m->from] + ROW_H / 2, x1, top[m->to] + ROW_H / 2);
	}
	free(top);
	fputs("</g>\n<g>\n", f);
	y = 0;
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", LABEL_W, h);
	for (size_t g = 0; g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		fprintf(f, "<text x=\"4\" y=\"%d\" font-size=\"12\" font-weight=\"bold\">", y + 13);
		rep_html_str(f, r->groups[g].name);
		fputs("</text>\n", f);
		y += ROW_H;
		for (size_t i = 0; i < r->nlocs; i++) {
			if (r->locs[i].group != g)
				continue;
			fprintf(f, "<text x=\"14\" y=\"%d\" font-size=\"11\">", y + 13);
			rep_html_str(f, r->locs[i].name);
			fputs("</text>\n", f);
			y += ROW_H;
		}
	}
	fputs("</g></svg>\n", f);
	/* the time axis: ten intervals, relabelled by the script at each zoom */
	fprintf(f, "<div id=\"axis\" data-ms=\"%.6f\" style=\"position:relative;height:16px;font-size:11px\">",
		rep_ms(r, r->t1 - r->t0));
	for (int i = 0; i <= 10; i++)
		fprintf(f, "<span style=\"position:absolute;left:%.3f%%;transform:translateX(-50%%)\">%.3f ms</span>",
			100.0 * (LABEL_W + i * REP_NBINS / 10.0) / (REP_NBINS + LABEL_W),
			rep_ms(r, r->t1 - r->t0) * i / 10.0);
	fputs("</div>\n", f);
	if (r->cpath && r->cpath->nseg)
		fprintf(f, "<p id=\"cpath_note\">dark bars: the critical path, %.3f ms (vertical lines: its jumps "
			"from one location to another)</p>\n", rep_ms(r, r->cpath->end - r->cpath->start));
	if (lod)   /* the finer levels (rep_html_lod) for the script */
		fwrite(lod, 1, lod_len, f);
	free(lod);
}

/* Flame graph (icicle, root on top) of the sampled calling contexts,
 * merged by function: the contexts of one function below one box (one per
 * source line of the call or of the pc) are one box, as in perf's and
 * Brendan Gregg's flame graphs. Box n: region ri[n], parent up[n]; its
 * samples total[n] (self[n] in itself). */
struct flame {
	const struct rep *r;
	uint32_t *ri, *up, *child, *next, *of;   /* of[c]: the box of context c */
	uint32_t *canon;                          /* rep_region_canon: one box per function name */
	uint64_t *total, *self;
	uint32_t n;
	FILE *f;
	int maxdepth;
};

/* The box of region ri below box up (UINT32_MAX: a root), made if new. */
static uint32_t flame_box(struct flame *fl, uint32_t up, uint32_t ri)
{
	uint32_t k = up == UINT32_MAX ? UINT32_MAX : fl->child[up];
	if (up == UINT32_MAX) {   /* roots: every box without parent */
		for (uint32_t b = 0; b < fl->n; b++)
			if (fl->up[b] == UINT32_MAX && fl->ri[b] == ri)
				return b;
	}
	for (; k != UINT32_MAX; k = fl->next[k])
		if (fl->ri[k] == ri)
			return k;
	uint32_t b = fl->n++;
	fl->ri[b] = ri;
	fl->up[b] = up;
	fl->child[b] = UINT32_MAX;
	fl->next[b] = UINT32_MAX;
	if (up != UINT32_MAX) {   /* appended: children in the order first seen */
		uint32_t *t = &fl->child[up];
		while (*t != UINT32_MAX)
			t = &fl->next[*t];
		*t = b;
	}
	return b;
}

/* The function of region ri: the first region of its name. */
static uint32_t flame_fn(const struct flame *fl, uint32_t ri)
{
	return ri == UINT32_MAX ? ri : fl->canon[ri];
}

/* The box of context c (its parents' first: iterative, paths may be deep). */
static uint32_t flame_of(struct flame *fl, uint32_t c)
{
	const struct rep *r = fl->r;
	uint32_t chain[256], n = 0, p = c;
	while (p != UINT32_MAX && p < r->ncc && fl->of[p] == UINT32_MAX) {
		if (n == 256) {   /* deeper than that: start a box from here */
			fl->of[p] = flame_box(fl, UINT32_MAX, flame_fn(fl, r->cc_region[p]));
			break;
		}
		chain[n++] = p;
		p = r->cc_parent[p];
	}
	while (n-- > 0) {
		uint32_t q = chain[n], pp = r->cc_parent[q];
		uint32_t up = pp != UINT32_MAX && pp < r->ncc ? fl->of[pp] : UINT32_MAX;
		fl->of[q] = flame_box(fl, up, flame_fn(fl, r->cc_region[q]));
	}
	return fl->of[c];
}

static void flame_node(struct flame *fl, uint32_t b, double x, int depth)
{
	const struct rep *r = fl->r;
	double w = 1000.0 * (double)fl->total[b] / (double)r->samples;
	if (depth > fl->maxdepth)
		fl->maxdepth = depth;
	uint32_t ri = fl->ri[b];
	char col[32];
	rep_html_color(r, ri == UINT32_MAX ? 0 : ri, col, sizeof col);
	fprintf(fl->f, "<rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"15\" fill=\"%s\" "
		"stroke=\"#fff\" stroke-width=\"0.3\" data-t=\"", x, depth * 16, w, col);
	rep_html_str(fl->f, ri == UINT32_MAX ? "?" : r->region_names[ri]);
	fprintf(fl->f, " | %" PRIu64 " samples (%" PRIu64 " self)\"/>\n", fl->total[b], fl->self[b]);
	if (w > 40 && ri != UINT32_MAX) {
		fprintf(fl->f, "<text x=\"%.3f\" y=\"%d\" font-size=\"10\" pointer-events=\"none\">",
			x + 2, depth * 16 + 11);
		rep_html_str(fl->f, r->region_names[ri]);
		fputs("</text>\n", fl->f);
	}
	for (uint32_t k = fl->child[b]; k != UINT32_MAX; k = fl->next[k]) {
		if (!fl->total[k])
			continue;
		flame_node(fl, k, x, depth + 1);
		x += 1000.0 * (double)fl->total[k] / (double)r->samples;
	}
}

static void flame_graph(const struct rep *r, FILE *f)
{
	if (!r->samples || !r->ncc)
		return;
	size_t n = r->ncc;
	struct flame fl = { r, malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)),
			    malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)), NULL,
			    calloc(n, sizeof(uint64_t)), calloc(n, sizeof(uint64_t)), 0, f, 0 };
	fl.canon = rep_region_canon(r);
	if (!fl.ri || !fl.up || !fl.child || !fl.next || !fl.of || !fl.total || !fl.self)
		goto out;
	memset(fl.of, 0xff, n * sizeof(uint32_t));
	for (size_t c = 0; c < n; c++) {
		if (!r->cc_samples[c])
			continue;
		uint32_t b = flame_of(&fl, (uint32_t)c);
		fl.self[b] += r->cc_samples[c];
		size_t steps = 0;
		for (uint32_t p = b; p != UINT32_MAX && steps++ <= n; p = fl.up[p])
			fl.total[p] += r->cc_samples[c];
	}
	fprintf(f, "<h2>Samples: flame graph</h2><p>%" PRIu64 " samples; outermost frame on top, "
		"width = share of the samples; one box per function and caller box.</p>\n<svg id=\"flame\" "
		"viewBox=\"0 0 1000 400\" width=\"100%%\" preserveAspectRatio=\"none\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", r->samples);
	double x = 0;
	for (uint32_t b = 0; b < fl.n; b++) {
		if (fl.up[b] != UINT32_MAX || !fl.total[b])
			continue;
		flame_node(&fl, b, x, 0);
		x += 1000.0 * (double)fl.total[b] / (double)r->samples;
	}
	fputs("</svg>\n", f);
	fprintf(f, "<script>document.getElementById('flame').setAttribute('viewBox','0 0 1000 %d');"
		"document.getElementById('flame').style.height='%dpx';</script>\n",
		(fl.maxdepth + 1) * 16, (fl.maxdepth + 1) * 16);
out:
	free(fl.canon);
	free(fl.ri);
	free(fl.up);
	free(fl.child);
	free(fl.next);
	free(fl.of);
	free(fl.total);
	free(fl.self);
}

static void lock_table(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	rep_html_callers(r, o->limit, f);
	const struct rep_lock **locks = calloc(r->nlocks + 1, sizeof *locks);
	size_t nl = locks ? rep_sorted_locks(r, locks) : 0;
	if (nl) {
		fputs("<h2>Locks</h2>\n<table><thead><tr><th>process</th><th class=\"n\">lock</th><th>address</th><th>name</th>"
		      "<th class=\"n\">acquisitions</th><th class=\"n\">wait ms</th>"
		      "<th class=\"n\">max wait us</th><th>threads that waited most</th></tr></thead>"
		      "<tbody>\n", f);
		for (size_t k = 0; k < nl && (!o->limit || k < o->limit); k++) {
			const struct rep_lock *l = locks[k];
			fputs("<tr><td>", f);
			rep_html_str(f, r->groups[l->group].name);
			fprintf(f, "</td><td class=\"n\">%" PRIu32 "</td><td>0x%" PRIx64 "</td><td>", l->id, l->address);
			rep_html_str(f, l->name ? l->name : "-");
			if (!l->name && l->init) {
				fputs(" <span class=\"obj\">made in ", f);
				rep_html_str(f, l->init);
				fputs("</span>", f);
			}
			if (l->object) {
				fputs(" <span class=\"obj\">", f);
				rep_html_str(f, l->object);
				fputs("</span>", f);
			}
			fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td>",
				l->acquisitions, rep_ms(r, l->wait), rep_ms(r, l->max) * 1e3);
			for (size_t w = 0; w < l->nwaiters && w < 3; w++) {
				fputs(w ? ", " : "", f);
				rep_html_str(f, r->locs[l->waiters[w].loc].name);
				fprintf(f, " %.3f ms", rep_ms(r, l->waiters[w].wait));
			}
			fputs("</td></tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	free(locks);
}

static void region_table(const struct rep *r, const struct rep_opts *o, FILE *f,
			 const struct rep_stat *st, size_t *order)
{
	size_t n;
	rep_sorted(r, st, o, order, &n);
	fputs("<table><thead><tr><th></th><th>region</th><th class=\"n\">calls</th>"
	      "<th class=\"n\">incl ms</th><th class=\"n\">excl ms</th><th class=\"n\">min us</th>"
	      "<th class=\"n\">avg us</th><th class=\"n\">max us</th></tr></thead><tbody>\n", f);
	for (size_t k = 0; k < n; k++) {
		const struct rep_stat *s = &st[order[k]];
		char c[32];
		rep_html_color(r, order[k], c, sizeof c);
		fprintf(f, "<tr><td style=\"background:%s;width:10px\"></td><td>", c);
		rep_html_str(f, r->region_names[order[k]]);
		fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.3f</td></tr>\n", s->calls, rep_ms(r, s->incl),
			rep_ms(r, s->excl), rep_ms(r, s->min) * 1e3,
			rep_ms(r, REP_AVG(r, s)) * 1e3, rep_ms(r, s->max) * 1e3);
	}
	fputs("</tbody></table>\n", f);
}

/* Processes, MPI collectives and the message matrix, as the text report
 * has them. */
static void mpi_tables(const struct rep *r, FILE *f)
{
	fputs("<h2>Processes</h2>\n<table id=\"processes\"><thead><tr><th>process</th><th class=\"n\">threads</th>"
	      "<th class=\"n\">events</th><th class=\"n\">in calls ms</th><th class=\"n\">MPI ms</th>"
	      "<th class=\"n\">late sender ms</th></tr></thead><tbody>\n", f);
	for (size_t g = 0; g < r->ngroups; g++) {
		uint64_t ev = 0, busy = 0, mpi = 0, late = 0;
		if (!r->groups[g].nlocs)
			continue;
		for (size_t i = 0; i < r->nlocs; i++)
			if (r->locs[i].group == g) {
				ev += r->locs[i].events;
				busy += r->locs[i].busy;
				mpi += r->locs[i].mpi;
				late += r->locs[i].late_sender;
			}
		fputs("<tr><td>", f);
		rep_html_str(f, r->groups[g].name);
		fprintf(f, "</td><td class=\"n\">%zu</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td></tr>\n", r->groups[g].nlocs, ev,
			rep_ms(r, busy), rep_ms(r, mpi), rep_ms(r, late));
	}
	fputs("</tbody></table>\n", f);
	int ncoll = 0;
	for (size_t cm = 0; cm < r->ncomm; cm++)
		ncoll += r->coll_count[cm] > 0;
	if (ncoll) {
		fputs("<h2>MPI collectives per communicator</h2><p>MpiCollectiveBegin to End, all ranks.</p>\n"
		      "<table id=\"collectives\"><thead><tr><th class=\"n\">comm</th><th>name</th>"
		      "<th class=\"n\">calls</th><th class=\"n\">operations</th><th class=\"n\">time ms</th></tr>"
		      "</thead><tbody>\n", f);
		for (size_t cm = 0; cm < r->ncomm; cm++) {
			if (!r->coll_count[cm])
				continue;
			fprintf(f, "<tr><td class=\"n\">%zu</td><td>", cm);
			rep_html_str(f, rep_comm_name(r, (uint32_t)cm));
			fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 "</td>"
				"<td class=\"n\">%.3f</td></tr>\n", r->coll_calls[cm], r->coll_count[cm],
				rep_ms(r, r->coll_time[cm]));
		}
		fputs("</tbody></table>\n", f);
	}
	if (!r->messages)
		return;
	fputs("<h2>MPI messages sent</h2><p>count / bytes, sender row &rarr; receiver column.</p>\n"
	      "<table id=\"messages\"><thead><tr><th></th>", f);
	for (size_t g = 0; g < r->ngroups; g++) {
		fputs("<th class=\"n\">", f);
		rep_html_str(f, r->groups[g].name);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t s = 0; s < r->ngroups; s++) {
		fputs("<tr><td>", f);
		rep_html_str(f, r->groups[s].name);
		fputs("</td>", f);
		for (size_t g = 0; g < r->ngroups; g++)
			fprintf(f, "<td class=\"n\" data-count=\"%" PRIu64 "\">%" PRIu64 " / %" PRIu64 "</td>",
				r->msg_count[s * r->ngroups + g], r->msg_count[s * r->ngroups + g],
				r->msg_bytes[s * r->ngroups + g]);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* Every table of the text report (region classes, tasks, metrics, top
 * sampled functions and call paths, per-process regions among them), as
 * the text report prints it. */
static void text_section(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	int bad = rep_print_text(r, o, m);
	if (fclose(m) || bad || !buf) {
		free(buf);
		return;
	}
	fputs("<h2>The text report</h2>\n<details id=\"text\"><summary>every table of <code>tracer report</code>"
	      "</summary><pre>", f);
	rep_html_str(f, buf);
	fputs("</pre></details>\n", f);
	free(buf);
}

int rep_print_html(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	size_t *order = calloc(r->nregions + 1, sizeof *order);
	struct rep_stat *st = calloc(r->nregions + 1, sizeof *st);
	if (!order || !st)
		return -1;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tracer report: ", f);
	rep_html_str(f, r->program);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>tracer report: ", css);
	rep_html_str(f, r->program);
	fputs("</h1>\n<table class=\"facts\">", f);
	fputs("<tr><td>archive</td><td>", f);
	rep_html_str(f, otf2r_path(r->ar));
	fprintf(f, "</td></tr><tr><td>threads</td><td>%zu</td></tr><tr><td>duration</td>"
		"<td>%.3f ms</td></tr><tr><td>events</td><td>%" PRIu64 "</td></tr><tr><td>bytes</td>"
		"<td>%" PRIu64 "</td></tr><tr><td>MPI messages</td><td>%" PRIu64 "</td></tr></table>\n",
		r->nlocs, rep_ms(r, r->last - r->first), r->events, r->bytes, r->messages);
	if (r->windowed)
		fprintf(f, "<p>Time window: %.6f s to %.6f s from the start: calls that begin in it, their time "
			"in it.</p>\n", rep_ms(r, r->win_from - r->offset) / 1e3,
			rep_ms(r, (r->win_to == UINT64_MAX ? r->last : r->win_to) - r->offset) / 1e3);
	timeline(r, f);
	flame_graph(r, f);
	fputs("<h2>Regions, all locations</h2>\n", f);
	for (size_t i = 0; i < r->nregions; i++)
		st[i] = rep_total(r, i, -1);
	region_table(r, o, f, st, order);
	fputs("<h2>Threads</h2>\n<table><thead><tr><th class=\"n\">location</th><th>name</th>"
	      "<th>process</th><th class=\"n\">events</th><th class=\"n\">duration ms</th>"
	      "<th class=\"n\">in calls ms</th><th class=\"n\">MPI ms</th><th class=\"n\">late sender ms</th>"
	      "<th class=\"n\">late receiver ms</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		fprintf(f, "<tr><td class=\"n\">%" PRIu64 "</td><td>", L->id);
		rep_html_str(f, L->name);
		fputs("</td><td>", f);
		rep_html_str(f, r->groups[L->group].name);
		fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td></tr>\n", L->events,
			rep_ms(r, L->last - L->first), rep_ms(r, L->busy), rep_ms(r, L->mpi),
			rep_ms(r, L->late_sender), rep_ms(r, L->late_receiver));
	}
	fputs("</tbody></table>\n", f);
	mpi_tables(r, f);
	rep_pairs_html(r, o, f);
	rep_cpath_html(r, o, f);
	lock_table(r, o, f);
	rep_io_print_html(r, o, f);
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_loc *L = &r->locs[i];
		if ((o->has_location && L->id != o->location) || !L->events)
			continue;
		fprintf(f, "<h2>Regions of location %" PRIu64 " (", L->id);
		rep_html_str(f, L->name);
		fputs(")</h2>\n", f);
		region_table(r, o, f, L->reg, order);
	}
	text_section(r, o, f);
	fprintf(f, "<div id=\"tip\"></div>\n<script>%s%s</script>\n</body></html>\n", rep_html_timeline_js, js);
	free(order);
	free(st);
	return ferror(f) ? -1 : 0;
}
