/* SPDX-License-Identifier: BSD-3-Clause */
/* report_io.c - the I/O figures of `tracer report`: every IoOperationBegin
 * matched with its IoOperationComplete (same location and matching id;
 * cancelled ones dropped) gives one operation of its handle's file and
 * I/O paradigm (layer): its kind (read, write, flush), the bytes returned
 * and the time from Begin to Complete. Summed per file and layer and per
 * layer and kind; printed as text or HTML (two tables) and JSON ("io"). Layers
 * are kept apart: an ISO C write and the POSIX write under it are the same
 * bytes seen twice (the tracer records only the outermost one). Folded
 * per-character stream calls (Metric records of "ISO C character reads"
 * and "... writes" with the handle in an attribute) count as operations
 * of their handle's file too: their calls and bytes. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define IO_KINDS 3              /* IoOperationMode: READ, WRITE, FLUSH */
#define IO_LAYERS 4             /* IoParadigm ids below this are counted */
static const char *const io_kind_names[IO_KINDS] = { "read", "write", "flush" };

struct io_fig {
	uint64_t ops, bytes, time;
};
struct io_file {
	uint32_t file;                  /* IoFile id */
	uint8_t layer;
	struct io_fig k[IO_KINDS];
};
struct io_pend {
	uint64_t key;                   /* location index << 40 ^ matching id, 0 free */
	uint64_t begin;
	uint32_t file;
	uint8_t mode, layer, used;
};
struct rep_io {
	struct io_file *files;          /* one per (file, layer) seen */
	size_t nfiles, capfiles;
	struct io_fig kinds[IO_LAYERS][IO_KINDS];
	struct io_pend *pend;           /* open addressing, power-of-two size */
	size_t npend, cappend;
	uint64_t unmatched;             /* Completes without a Begin */
};

static size_t pend_slot(const struct rep_io *io, uint64_t key)
{
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull) & (io->cappend - 1);
	while (io->pend[j].used && io->pend[j].key != key)
		j = (j + 1) & (io->cappend - 1);
	return j;
}

static void pend_grow(struct rep_io *io)
{
	struct io_pend *old = io->pend;
	size_t oldcap = io->cappend;
	io->cappend = oldcap ? 2 * oldcap : 256;
	io->pend = rep_xcalloc(io->cappend, sizeof *io->pend);
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].used)
			io->pend[pend_slot(io, old[i].key)] = old[i];
	free(old);
}

/* Remove slot j (linear probing: re-place the run after it). */
static void pend_remove(struct rep_io *io, size_t j)
{
	io->pend[j].used = 0;
	io->npend--;
	for (size_t k = (j + 1) & (io->cappend - 1); io->pend[k].used; k = (k + 1) & (io->cappend - 1)) {
		struct io_pend e = io->pend[k];
		io->pend[k].used = 0;
		io->pend[pend_slot(io, e.key)] = e;
	}
}

static struct io_file *file_of(struct rep_io *io, uint32_t file, uint8_t layer)
{
	for (size_t i = 0; i < io->nfiles; i++)   /* files are few */
		if (io->files[i].file == file && io->files[i].layer == layer)
			return &io->files[i];
	if (io->nfiles == io->capfiles)
		io->files = rep_grow(io->files, &io->capfiles, 16, sizeof *io->files);
	struct io_file *f = &io->files[io->nfiles++];
	memset(f, 0, sizeof *f);
	f->file = file;
	f->layer = layer;
	return f;
}

void rep_io_event(struct rep *r, size_t li, const otf2r_event *ev)
{
	if (!r->io)
		r->io = rep_xcalloc(1, sizeof *r->io);
	struct rep_io *io = r->io;
	if (ev->type == OTF2R_EVT_IO_OPERATION_BEGIN) {
		const otf2r_def *h = otf2r_def_find(r->ar, OTF2R_GDEF_IO_HANDLE, ev->u.io_operation_begin.handle);
		if (!h || ev->u.io_operation_begin.mode >= IO_KINDS || h->u.io_handle.io_paradigm >= IO_LAYERS)
			return;
		if (2 * (io->npend + 1) > io->cappend)
			pend_grow(io);
		uint64_t key = ((uint64_t)li << 40 ^ ev->u.io_operation_begin.matching_id) | 1ull << 63;
		size_t j = pend_slot(io, key);
		if (!io->pend[j].used)
			io->npend++;
		io->pend[j] = (struct io_pend){ key, ev->time, h->u.io_handle.file, ev->u.io_operation_begin.mode,
						h->u.io_handle.io_paradigm, 1 };
		return;
	}
	uint64_t id = ev->type == OTF2R_EVT_IO_OPERATION_COMPLETE ? ev->u.io_operation_complete.matching_id
			: ev->u.io_operation_cancelled.matching_id;
	uint64_t key = ((uint64_t)li << 40 ^ id) | 1ull << 63;
	size_t j = io->cappend ? pend_slot(io, key) : 0;
	if (!io->cappend || !io->pend[j].used) {
		io->unmatched += ev->type == OTF2R_EVT_IO_OPERATION_COMPLETE;
		return;
	}
	struct io_pend p = io->pend[j];
	pend_remove(io, j);
	if (ev->type != OTF2R_EVT_IO_OPERATION_COMPLETE)
		return;   /* cancelled */
	uint64_t bytes = ev->u.io_operation_complete.bytes_result;
	if (bytes == UINT64_MAX)
		bytes = 0;   /* failed */
	uint64_t dt = ev->time >= p.begin ? ev->time - p.begin : 0;
	struct io_fig *figs[2] = { &file_of(io, p.file, p.layer)->k[p.mode], &io->kinds[p.layer][p.mode] };
	for (int i = 0; i < 2; i++) {
		figs[i]->ops++;
		figs[i]->bytes += bytes;
		figs[i]->time += dt;
	}
}

/* The direction of a folded-characters Metric class (IO_KINDS when the
 * class is another), from its first member's name. */
static int chars_kind(const struct rep *r, uint32_t metric)
{
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_CLASS, metric);
	if (!d || d->u.metric_class.number_of_metrics != 2)
		return IO_KINDS;
	const otf2r_def *m = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_MEMBER, d->u.metric_class.metric_members[0]);
	const char *n = m ? otf2r_string(r->ar, m->u.metric_member.name) : NULL;
	if (!n)
		return IO_KINDS;
	return !strcmp(n, "ISO C character read calls") ? 0 : !strcmp(n, "ISO C character write calls") ? 1 : IO_KINDS;
}

void rep_io_chars(struct rep *r, const otf2r_event *ev)
{
	const otf2r_attr *a = NULL;
	for (uint32_t i = 0; i < ev->nattrs; i++)
		if (ev->attrs[i].type == 24 /* OTF2 type IO_HANDLE */)
			a = &ev->attrs[i];
	int kind = a && ev->u.metric.number_of_metrics == 2 ? chars_kind(r, ev->u.metric.metric) : IO_KINDS;
	if (kind == IO_KINDS)
		return;
	const otf2r_def *h = otf2r_def_find(r->ar, OTF2R_GDEF_IO_HANDLE, (uint32_t)a->value);
	if (!h || h->u.io_handle.io_paradigm >= IO_LAYERS)
		return;
	if (!r->io)
		r->io = rep_xcalloc(1, sizeof *r->io);
	const uint64_t *v = ev->u.metric.metric_values;
	struct io_fig *figs[2] = { &file_of(r->io, h->u.io_handle.file, h->u.io_handle.io_paradigm)->k[kind],
				   &r->io->kinds[h->u.io_handle.io_paradigm][kind] };
	for (int i = 0; i < 2; i++) {   /* (no time: the calls are not timed) */
		figs[i]->ops += v[0];
		figs[i]->bytes += v[1];
	}
}

void rep_io_free(struct rep *r)
{
	if (!r->io)
		return;
	free(r->io->files);
	free(r->io->pend);
	free(r->io);
	r->io = NULL;
}

static const char *layer_name(const struct rep *r, uint8_t layer)
{
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_IO_PARADIGM, layer);
	const char *s = d ? otf2r_string(r->ar, d->u.io_paradigm.identification) : NULL;
	return s ? s : "?";
}

const char *rep_io_file_name(const struct rep *r, uint32_t file)
{
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_IO_REGULAR_FILE, file);
	if (!d)
		d = otf2r_def_find(r->ar, OTF2R_GDEF_IO_DIRECTORY, file);
	const char *s = d ? otf2r_string(r->ar, d->type == OTF2R_GDEF_IO_REGULAR_FILE ? d->u.io_regular_file.name
							   : d->u.io_directory.name) : NULL;
	return s ? s : "?";
}

static uint64_t file_total(const struct io_file *f, int what)   /* 0 bytes, 1 time */
{
	uint64_t s = 0;
	for (int k = 0; k < IO_KINDS; k++)
		s += what ? f->k[k].time : f->k[k].bytes;
	return s;
}

size_t rep_io_rows(const struct rep *r, struct rep_io_row **out)
{
	struct rep_io *io = r->io;
	*out = NULL;
	if (!io || !io->nfiles)
		return 0;
	*out = rep_xcalloc(io->nfiles, sizeof **out);
	for (size_t i = 0; i < io->nfiles; i++) {
		const struct io_file *x = &io->files[i];
		(*out)[i].file = rep_io_file_name(r, x->file);
		(*out)[i].layer = layer_name(r, x->layer);
		for (int k = 0; k < IO_KINDS; k++)
			(*out)[i].ops += x->k[k].ops;
		(*out)[i].bytes = file_total(x, 0);
		(*out)[i].time = file_total(x, 1);
	}
	return io->nfiles;
}

static int by_bytes(const void *a, const void *b)
{
	const struct io_file *x = a, *y = b;
	uint64_t bx = file_total(x, 0), by = file_total(y, 0);
	if (bx != by)
		return bx < by ? 1 : -1;
	uint64_t tx = file_total(x, 1), ty = file_total(y, 1);
	return tx < ty ? 1 : tx > ty ? -1 : 0;
}

/* One table cell: text (right-aligned in width, name cells left-aligned
 * when width < 0) or HTML. */
static void cell(FILE *f, int html, int width, const char *s)
{
	if (html) {
		fputs(width < 0 ? "<td>" : "<td class=\"n\">", f);
		rep_html_str(f, s);
		fputs("</td>", f);
	} else {
		fprintf(f, " %*s", width, s);
	}
}

static void cell_u(FILE *f, int html, int width, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%" PRIu64, v);
	cell(f, html, width, b);
}

static void cell_f(FILE *f, int html, int width, const char *fmt, double v)
{
	char b[48];
	snprintf(b, sizeof b, fmt, v);
	cell(f, html, width, b);
}

static void row_begin(FILE *f, int html) { fputs(html ? "<tr>" : " ", f); }
static void row_end(FILE *f, int html) { fputs(html ? "</tr>\n" : "\n", f); }

static void header(FILE *f, int html, const char *title, const char *const *cols, const int *w, int n)
{
	if (html)
		fprintf(f, "<h2>%s</h2>\n<table><thead><tr>", title);
	else
		fprintf(f, "\n%s:\n ", title);
	for (int i = 0; i < n; i++) {
		if (html)
			fprintf(f, w[i] < 0 ? "<th>%s</th>" : "<th class=\"n\">%s</th>", cols[i]);
		else
			fprintf(f, " %*s", w[i], cols[i]);
	}
	fputs(html ? "</tr></thead><tbody>\n" : "\n", f);
}

/* The two I/O tables, as text or HTML. */
static void io_tables(const struct rep *r, const struct rep_opts *o, FILE *f, int html)
{
	struct rep_io *io = r->io;
	if (!io || !io->nfiles)
		return;
	qsort(io->files, io->nfiles, sizeof *io->files, by_bytes);
	static const char *const fcols[] = { "file", "layer", "reads", "bytes read", "writes", "bytes written",
					     "flushes", "time ms" };
	static const int fw[] = { -40, -6, 8, 12, 8, 13, 7, 10 };
	char title[96];
	snprintf(title, sizeof title, "I/O per file (%zu, by bytes; IoOperationBegin to Complete, each layer apart)",
		 io->nfiles);
	header(f, html, title, fcols, fw, 8);
	for (size_t i = 0; i < io->nfiles && (!o->limit || i < o->limit); i++) {
		const struct io_file *x = &io->files[i];
		const char *name = rep_io_file_name(r, x->file);
		size_t n = strlen(name);
		row_begin(f, html);
		cell(f, html, -40, !html && n > 40 ? name + n - 40 : name);
		cell(f, html, -6, layer_name(r, x->layer));
		for (int k = 0; k < IO_KINDS; k++) {
			cell_u(f, html, fw[2 + 2 * k], x->k[k].ops);
			if (k < 2)
				cell_u(f, html, fw[3 + 2 * k], x->k[k].bytes);
		}
		cell_f(f, html, 10, "%.3f", rep_ms(r, file_total(x, 1)));
		row_end(f, html);
	}
	if (html)
		fputs("</tbody></table>\n", f);
	static const char *const kcols[] = { "layer", "kind", "operations", "bytes", "time ms", "MB/s" };
	static const int kw[] = { -6, -6, 12, 14, 12, 12 };
	header(f, html, "I/O per operation kind", kcols, kw, 6);
	for (uint8_t l = 0; l < IO_LAYERS; l++)
		for (int k = 0; k < IO_KINDS; k++) {
			const struct io_fig *x = &io->kinds[l][k];
			if (!x->ops)
				continue;
			double ms = rep_ms(r, x->time);
			row_begin(f, html);
			cell(f, html, -6, layer_name(r, l));
			cell(f, html, -6, io_kind_names[k]);
			cell_u(f, html, 12, x->ops);
			cell_u(f, html, 14, x->bytes);
			cell_f(f, html, 12, "%.3f", ms);
			cell_f(f, html, 12, "%.1f", ms > 0 ? (double)x->bytes / 1e3 / ms : 0.0);
			row_end(f, html);
		}
	if (html)
		fputs("</tbody></table>\n", f);
	if (io->npend || io->unmatched)
		fprintf(f, html ? "<p>%zu operations not completed, %" PRIu64 " completions without a begin</p>\n"
				: "  (%zu operations not completed, %" PRIu64 " completions without a begin)\n",
			io->npend, io->unmatched);
}

void rep_io_print_text(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	io_tables(r, o, f, 0);
}

void rep_io_print_html(const struct rep *r, const struct rep_opts *o, FILE *f)
{
	io_tables(r, o, f, 1);
}

static void json_fig(FILE *f, const struct io_fig *x)
{
	fprintf(f, "{\"operations\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"time\":%" PRIu64 "}", x->ops, x->bytes,
		x->time);
}

void rep_io_print_json(const struct rep *r, FILE *f)
{
	struct rep_io *io = r->io;
	fputs(",\"io\":{\"files\":[", f);
	for (size_t i = 0; io && i < io->nfiles; i++) {
		const struct io_file *x = &io->files[i];
		fputs(i ? ",{\"file\":" : "{\"file\":", f);
		rep_json_str(f, rep_io_file_name(r, x->file));
		fputs(",\"layer\":", f);
		rep_json_str(f, layer_name(r, x->layer));
		for (int k = 0; k < IO_KINDS; k++) {
			fprintf(f, ",\"%s\":", io_kind_names[k]);
			json_fig(f, &x->k[k]);
		}
		fputc('}', f);
	}
	fputs("],\"kinds\":[", f);
	int first = 1;
	for (uint8_t l = 0; io && l < IO_LAYERS; l++)
		for (int k = 0; k < IO_KINDS; k++) {
			if (!io->kinds[l][k].ops)
				continue;
			fputs(first ? "{\"layer\":" : ",{\"layer\":", f);
			first = 0;
			rep_json_str(f, layer_name(r, l));
			fprintf(f, ",\"kind\":\"%s\",\"figures\":", io_kind_names[k]);
			json_fig(f, &io->kinds[l][k]);
			fputc('}', f);
		}
	fputs("]}", f);
}
