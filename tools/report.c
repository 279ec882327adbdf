/* SPDX-License-Identifier: BSD-3-Clause */
/* report.c - the figures of `tracer report` (MPI parts: report_mpi.c): one pass over the merged
 * event stream, a call stack per location, per-region statistics, MPI
 * message matrix between location groups; the timeline's bins are filled
 * here too (report_bins.c). */
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "report.h"

#define UNDEF32 UINT32_MAX

static uint64_t dir_bytes(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	char p[8192];
	while ((e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

int rep_setup_defs(struct rep *r, otf2r_archive *ar)
{
	memset(r, 0, sizeof *r);
	r->ar = ar;
	const otf2r_gdef_clock_properties *cp = otf2r_clock(ar);
	r->resolution = cp && cp->timer_resolution ? cp->timer_resolution : 1000000000;
	r->lock_addr_attr = UINT32_MAX;
	r->offset = cp ? cp->global_offset : 0;
	size_t nd = otf2r_def_count(ar);
	size_t maxid = 0;
	for (size_t i = 0; i < nd; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type == OTF2R_GDEF_REGION) {
			r->nregions++;
			if (d->u.region.self != UNDEF32 && d->u.region.self + 1 > maxid)
				maxid = d->u.region.self + 1;
		} else if (d->type == OTF2R_GDEF_LOCATION_GROUP) {
			r->ngroups++;
		}
	}
	r->regions = rep_xcalloc(r->nregions, sizeof *r->regions);
	r->region_names = rep_xcalloc(r->nregions, sizeof *r->region_names);
	r->region_ids = maxid;
	r->region_by_id = rep_xcalloc(maxid, sizeof *r->region_by_id);
	memset(r->region_by_id, 0xff, maxid * sizeof *r->region_by_id);
	r->groups = rep_xcalloc(r->ngroups + 1, sizeof *r->groups);
	size_t ri = 0, gi = 0;
	for (size_t i = 0; i < nd; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type == OTF2R_GDEF_REGION) {
			r->regions[ri] = &d->u.region;
			r->region_names[ri] = rep_str_or(r, d->u.region.name, "?");
			if (d->u.region.self != UNDEF32 && r->region_by_id[d->u.region.self] == UNDEF32)
				r->region_by_id[d->u.region.self] = (uint32_t)ri;
			ri++;
		} else if (d->type == OTF2R_GDEF_ATTRIBUTE) {
			const char *an = otf2r_string(ar, d->u.attribute.name);
			if (an && !strcmp(an, "TRACER::LOCK_ADDRESS"))
				r->lock_addr_attr = d->u.attribute.self;
		} else if (d->type == OTF2R_GDEF_LOCATION_GROUP) {
			r->groups[gi].id = d->u.location_group.self;
			r->groups[gi].name = rep_str_or(r, d->u.location_group.name, "?");
			r->groups[gi].type = d->u.location_group.location_group_type;
			gi++;
		}
	}
	/* a location without a known group goes to an extra "(none)" group */
	r->groups[r->ngroups].id = UNDEF32;
	r->groups[r->ngroups].name = "(none)";
	r->nlocs = otf2r_location_count(ar);
	r->locs = rep_xcalloc(r->nlocs, sizeof *r->locs);
	int extra = 0;
	for (size_t i = 0; i < r->nlocs; i++) {
		const otf2r_gdef_location *l = otf2r_location_at(ar, i);
		struct rep_loc *L = &r->locs[i];
		L->id = l->self;
		L->name = rep_str_or(r, l->name, "?");
		L->group = r->ngroups;
		for (size_t g = 0; g < r->ngroups; g++)
			if (r->groups[g].id == l->location_group)
				L->group = g;
		extra |= L->group == r->ngroups;
		r->groups[L->group].nlocs++;
		L->reg = rep_xcalloc(r->nregions, sizeof *L->reg);
		L->active = rep_xcalloc(r->nregions, sizeof *L->active);
		L->first = UINT64_MAX;
	}
	if (extra)
		r->ngroups++;
	for (size_t i = 0; i < nd; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		if (d->type == OTF2R_GDEF_CALLING_CONTEXT && d->u.calling_context.self != UNDEF32 &&
		    d->u.calling_context.self < (1u << 26) && d->u.calling_context.self + 1 > r->ncc)
			r->ncc = d->u.calling_context.self + 1;
	}
	r->cc_region = rep_xcalloc(r->ncc, sizeof *r->cc_region);
	r->cc_parent = rep_xcalloc(r->ncc, sizeof *r->cc_parent);
	r->cc_scl = rep_xcalloc(r->ncc, sizeof *r->cc_scl);
	r->cc_samples = rep_xcalloc(r->ncc, sizeof *r->cc_samples);
	memset(r->cc_region, 0xff, r->ncc * sizeof *r->cc_region);
	memset(r->cc_parent, 0xff, r->ncc * sizeof *r->cc_parent);
	for (size_t i = 0; i < nd; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		const otf2r_gdef_calling_context *cc = &d->u.calling_context;
		if (d->type != OTF2R_GDEF_CALLING_CONTEXT || cc->self >= r->ncc)
			continue;
		r->cc_region[cc->self] = cc->region < r->region_ids ? r->region_by_id[cc->region] : UNDEF32;
		r->cc_parent[cc->self] = cc->parent < r->ncc ? cc->parent : UNDEF32;
		r->cc_scl[cc->self] = cc->source_code_location;
	}
	for (size_t i = 0; i < nd; i++) {
		const otf2r_def *d = otf2r_def_at(ar, i);
		uint32_t id = d->type == OTF2R_GDEF_COMM ? d->u.comm.self
			: d->type == OTF2R_GDEF_INTER_COMM ? d->u.inter_comm.self : UNDEF32;
		if (id < (1u << 24) && id + 1 > r->ncomm)
			r->ncomm = id + 1;
	}
	for (size_t i = 0; i < nd; i++)
		r->nmm += otf2r_def_at(ar, i)->type == OTF2R_GDEF_METRIC_MEMBER;
	r->mm_ids = rep_xcalloc(r->nmm, sizeof *r->mm_ids);
	r->mm_rel = rep_xcalloc(r->nmm + 1, 1);
	for (size_t i = 0, k = 0; i < nd; i++)
		if (otf2r_def_at(ar, i)->type == OTF2R_GDEF_METRIC_MEMBER) {
			uint8_t mode = otf2r_def_at(ar, i)->u.metric_member.metric_mode;
			r->mm_rel[k] = (mode & 0x0f) == 0x02;   /* RELATIVE_POINT 0x12, _LAST 0x22, _NEXT 0x32 */
			r->mm_ids[k++] = otf2r_def_at(ar, i)->u.metric_member.self;
		}
	r->mreg = rep_xcalloc(r->nregions * r->nmm, sizeof *r->mreg);
	r->mreg_n = rep_xcalloc(r->nregions * r->nmm, sizeof *r->mreg_n);
	for (size_t i = 0; i < r->nlocs && r->nmm; i++) {
		r->locs[i].mcur = rep_xcalloc(r->nmm, sizeof(double));
		r->locs[i].msum = rep_xcalloc(r->nmm, sizeof(double));
		r->locs[i].mhave = rep_xcalloc(r->nmm, 1);
	}
	r->coll_count = rep_xcalloc(r->ncomm, sizeof *r->coll_count);
	r->coll_time = rep_xcalloc(r->ncomm, sizeof *r->coll_time);
	r->coll_calls = rep_xcalloc(r->ncomm, sizeof *r->coll_calls);
	r->coll_first = rep_xcalloc(r->ncomm, sizeof *r->coll_first);
	memset(r->coll_first, 0xff, r->ncomm * sizeof *r->coll_first);
	for (size_t i = 0; i < r->nlocs; i++)
		r->locs[i].coll_begin = UINT64_MAX;
	r->msg_count = rep_xcalloc(r->ngroups * r->ngroups, sizeof *r->msg_count);
	r->msg_bytes = rep_xcalloc(r->ngroups * r->ngroups, sizeof *r->msg_bytes);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", otf2r_path(ar));
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	char sub[4200];
	size_t l = strlen(otf2r_path(ar));
	snprintf(sub, sizeof sub, "%.*s", (int)(l - 5), otf2r_path(ar));
	/* the anchor's own files: NAME.otf2, NAME.def, NAME/ (other ranks' archives aside) */
	struct stat st;
	char p[4300];
	snprintf(p, sizeof p, "%s.otf2", sub);
	if (stat(p, &st) == 0)
		r->bytes += (uint64_t)st.st_size;
	snprintf(p, sizeof p, "%s.def", sub);
	if (stat(p, &st) == 0)
		r->bytes += (uint64_t)st.st_size;
	r->bytes += dir_bytes(sub);
	return 0;
}

static uint64_t lock_hash(size_t group, uint32_t id)
{
	uint64_t k = ((uint64_t)group << 32 | id) * 0x9e3779b97f4a7c15ull;
	return k ^ (k >> 29);
}

static struct rep_lock *lock_get(struct rep *r, size_t group, uint32_t id)
{
	if (2 * (r->nlocks + 1) > r->caplocks) {      /* grow and rehash */
		size_t cap = r->caplocks ? 2 * r->caplocks : 256;
		struct rep_lock *nl = rep_xcalloc(cap, sizeof *nl);
		for (size_t i = 0; i < r->caplocks; i++) {
			if (!r->locks[i].acquisitions)
				continue;
			size_t j = lock_hash(r->locks[i].group, r->locks[i].id) & (cap - 1);
			while (nl[j].acquisitions)
				j = (j + 1) & (cap - 1);
			nl[j] = r->locks[i];
		}
		free(r->locks);
		r->locks = nl;
		r->caplocks = cap;
	}
	size_t j = lock_hash(group, id) & (r->caplocks - 1);
	while (r->locks[j].acquisitions && (r->locks[j].group != group || r->locks[j].id != id))
		j = (j + 1) & (r->caplocks - 1);
	struct rep_lock *l = &r->locks[j];
	if (!l->acquisitions) {
		l->group = group;
		l->id = id;
		r->nlocks++;
	}
	return l;
}

static void acquire(struct rep *r, size_t li, uint32_t id, uint64_t t, const otf2r_event *ev)
{
	struct rep_loc *L = &r->locs[li];
	uint64_t w = L->depth && t > L->stack[L->depth - 1].enter ? t - L->stack[L->depth - 1].enter : 0;
	/* a condition wait takes its mutex again at its end: the time before
	 * is waiting for the condition, not for the lock (it read 1045 ms of
	 * "lock wait" where pthread_mutex_lock took 27.9) */
	if (L->depth && !strncmp(r->region_names[L->stack[L->depth - 1].ri], "pthread_cond_", 13))
		w = 0;
	struct rep_lock *l = lock_get(r, L->group, id);
	for (uint32_t i = 0; i < ev->nattrs && !l->address; i++)
		if (ev->attrs[i].id == r->lock_addr_attr)
			l->address = ev->attrs[i].value;   /* its identity: the pthread lock's address */
	if (w && L->lod)
		rep_bins_lock(r, li, t - w, t);
	l->acquisitions++;
	l->wait += w;
	if (w > l->max)
		l->max = w;
	size_t k = 0;
	while (k < l->nwaiters && l->waiters[k].loc != li)
		k++;
	if (k == l->nwaiters) {
		if (l->nwaiters == l->capwaiters)
			l->waiters = rep_grow(l->waiters, &l->capwaiters, 4, sizeof *l->waiters);
		l->waiters[l->nwaiters++] = (struct rep_waiter){ li, 0 };
	}
	l->waiters[k].wait += w;
}

static int cmp_waiter(const void *a, const void *b)
{
	const struct rep_waiter *x = a, *y = b;
	return x->wait != y->wait ? (x->wait < y->wait ? 1 : -1) : (x->loc > y->loc) - (x->loc < y->loc);
}

static int cmp_lock(const void *a, const void *b)
{
	const struct rep_lock *x = *(const struct rep_lock *const *)a, *y = *(const struct rep_lock *const *)b;
	if (x->wait != y->wait)
		return x->wait < y->wait ? 1 : -1;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

size_t rep_sorted_locks(const struct rep *r, const struct rep_lock **out)
{
	size_t n = 0;
	for (size_t i = 0; i < r->caplocks; i++) {
		if (!r->locks[i].acquisitions)
			continue;
		qsort(r->locks[i].waiters, r->locks[i].nwaiters, sizeof(struct rep_waiter), cmp_waiter);
		out[n++] = &r->locks[i];
	}
	qsort(out, n, sizeof *out, cmp_lock);
	return n;
}

static void enter(struct rep *r, struct rep_loc *L, uint32_t ri, uint64_t t, int counted)
{
	if (L->depth == L->cap) {
		L->stack = rep_grow(L->stack, &L->cap, 64, sizeof *L->stack);
		if (r->nmm) {
			L->mstart = realloc(L->mstart, L->cap * r->nmm * sizeof(double));
			L->mstart_have = realloc(L->mstart_have, L->cap * r->nmm);
			if (!L->mstart || !L->mstart_have) {
				fprintf(stderr, "tracer: out of memory\n");
				exit(1);
			}
		}
	}
	if (r->nmm) {
		memcpy(L->mstart + L->depth * r->nmm, L->mcur, r->nmm * sizeof(double));
		memcpy(L->mstart_have + L->depth * r->nmm, L->mhave, r->nmm);
	}
	if (L->depth && L->lod)
		rep_bins_region(r, (size_t)(L - r->locs), L->stack[L->depth - 1].ri, L->last_change, t);
	L->last_change = t;
	L->stack[L->depth++] = (struct rep_frame){ ri, t, 0, 0, counted, UNDEF32 };
	L->active[ri]++;
	L->reg[ri].calls += (uint64_t)counted;
}

static void leave_top(struct rep *r, struct rep_loc *L, uint64_t t)
{
	struct rep_frame *f = &L->stack[--L->depth];
	if (f->bsend)
		rep_bsend_left(r, f->bsend, t);
	if (L->lod)
		rep_bins_region(r, (size_t)(L - r->locs), f->ri, L->last_change, t);
	L->last_change = t;
	uint64_t d = t - f->enter;
	uint64_t ex = d > f->child ? d - f->child : 0;
	struct rep_stat *s = &L->reg[f->ri];
	s->excl += ex;
	if (--L->active[f->ri] == 0) {
		s->incl += d;
		for (size_t m = 0; m < r->nmm; m++) {
			size_t at = L->depth * r->nmm + m;
			if (L->mstart_have[at] && L->mhave[m]) {
				r->mreg[f->ri * r->nmm + m] += L->mcur[m] - L->mstart[at];
				r->mreg_n[f->ri * r->nmm + m]++;
			}
		}
	}
	if (f->counted) {
		if (f->cc != UNDEF32)
			rep_caller_add(r, f->ri, f->cc, d);
		s->sum += d;
		if (s->done++ == 0 || d < s->min)
			s->min = d;
		if (d > s->max)
			s->max = d;
	}
	if (L->depth)
		L->stack[L->depth - 1].child += d;
	else
		L->busy += d;
	const otf2r_gdef_region *rg = r->regions[f->ri];
	if (rg->paradigm == 4)                  /* MPI */
		L->mpi += ex;
}

static void leave(struct rep *r, struct rep_loc *L, uint32_t ri, uint64_t t)
{
	size_t k = L->depth;
	while (k > 0 && L->stack[k - 1].ri != ri)
		k--;
	if (k == 0)
		return;                             /* Leave without Enter: ignored */
	while (L->depth >= k)
		leave_top(r, L, t);
}

static uint32_t region_index(const struct rep *r, uint32_t id)
{
	return id < r->region_ids ? r->region_by_id[id] : UNDEF32;
}

/* Metric record: the current value of each of its members on L. */
static void metric_values(struct rep *r, struct rep_loc *L, const otf2r_event *ev, int in)
{
	const otf2r_def *d = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_CLASS, ev->u.metric.metric);
	if (!d) {
		const otf2r_def *in = otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_INSTANCE,
						     ev->u.metric.metric);
		d = in ? otf2r_def_find(r->ar, OTF2R_GDEF_METRIC_CLASS, in->u.metric_instance.metric_class)
		       : NULL;
	}
	if (!d || !r->nmm)
		return;
	for (unsigned i = 0; i < ev->u.metric.number_of_metrics &&
	     i < d->u.metric_class.number_of_metrics; i++) {
		uint32_t id = d->u.metric_class.metric_members[i];
		size_t m = 0;
		while (m < r->nmm && r->mm_ids[m] != id)
			m++;
		if (m == r->nmm)
			continue;
		double v = rep_metric_value(ev->u.metric.type_i_ds[i], ev->u.metric.metric_values[i]);
		if (r->mm_rel[m]) {   /* a change over an interval: summed, no value at a region's ends */
			if (in)
				L->msum[m] += v;
			continue;
		}
		L->mcur[m] = v;
		L->mhave[m] = 1;
	}
}

double rep_metric_value(uint8_t type, uint64_t raw)
{
	double v;
	if (type == 10) {
		memcpy(&v, &raw, sizeof v);
		return v;
	}
	return type == 8 ? (double)(int64_t)raw : (double)raw;
}

static uint32_t cc_region(const struct rep *r, uint32_t cc)
{
	return cc < r->ncc ? r->cc_region[cc] : UNDEF32;
}

int rep_build(struct rep *r, otf2r_archive *ar, int timeline)
{
	return rep_build_select(r, ar, timeline, NULL);
}

int rep_build_select(struct rep *r, otf2r_archive *ar, int timeline, const struct rep_select *w)
{
	rep_setup_defs(r, ar);
	if (rep_select_set(r, w))
		return -2;   /* (said: no such thread or rank, an empty window) */
	r->cpath_on = w && w->cpath;   /* (each location's wait states kept: report_pairs.c) */
	r->first = UINT64_MAX;
	if (timeline) {
		/* one more pass for the range: ClockProperties may not cover the
		 * times after clock offsets */
		otf2r_merge *m;
		otf2r_event ev;
		if (otf2r_merge_open(ar, NULL, 0, &m) == 0) {
			r->t0 = UINT64_MAX;
			while (otf2r_merge_next(m, &ev) > 0) {
				if (ev.time < r->win_from || ev.time >= r->win_to)
					continue;
				if (r->sel) {
					size_t k = 0;
					while (k < r->nlocs && r->locs[k].id != ev.location)
						k++;
					if (k == r->nlocs)
						continue;
				}
				if (ev.time < r->t0)
					r->t0 = ev.time;
				r->t1 = ev.time;
			}
			otf2r_merge_close(m);
			if (r->t0 == UINT64_MAX)
				r->t0 = r->t1 = 0;
		}
		rep_bins_setup(r);   /* (report_bins.c) */
	}
	otf2r_merge *m;
	if (otf2r_merge_open(ar, NULL, 0, &m))
		return -1;   /* (the caller says why: otf2r_error) */
	otf2r_event ev;
	int rc;
	size_t li = 0;
	while ((rc = otf2r_merge_next(m, &ev)) > 0) {
		if (li >= r->nlocs || r->locs[li].id != ev.location)
			for (li = 0; li < r->nlocs && r->locs[li].id != ev.location; li++)
				;
		if (li == r->nlocs)
			continue;   /* not a selected location (--thread, --rank) */
		struct rep_loc *L = &r->locs[li];
		/* outside the window: regions still entered and left (what is
		 * open when it begins), at its edge; the rest is not counted */
		int in = ev.time >= r->win_from && ev.time < r->win_to;
		uint64_t tc = in ? ev.time : ev.time < r->win_from ? r->win_from : r->win_to;
		if (in) {
			L->events++;
			if (L->first == UINT64_MAX)
				L->first = ev.time;
			L->last = ev.time;
			r->events++;
			if (ev.time < r->first)
				r->first = ev.time;
			if (ev.time > r->last)
				r->last = ev.time;
		}
		uint32_t ri;
		switch (ev.type) {
		case OTF2R_EVT_ENTER:
			if ((ri = region_index(r, ev.u.enter.region)) != UNDEF32)
				enter(r, L, ri, tc, in);
			continue;
		case OTF2R_EVT_LEAVE:
			if ((ri = region_index(r, ev.u.leave.region)) != UNDEF32)
				leave(r, L, ri, tc);
			continue;
		case OTF2R_EVT_CALLING_CONTEXT_ENTER:
			ri = cc_region(r, ev.u.calling_context_enter.calling_context);
			if (ri != UNDEF32) {
				enter(r, L, ri, tc, in);
				L->stack[L->depth - 1].cc = ev.u.calling_context_enter.calling_context;
			}
			continue;
		case OTF2R_EVT_CALLING_CONTEXT_LEAVE:
			ri = cc_region(r, ev.u.calling_context_leave.calling_context);
			if (ri != UNDEF32)
				leave(r, L, ri, tc);
			continue;
		case OTF2R_EVT_MPI_COLLECTIVE_END:
			/* every end numbers the communicator's operations (a window
			 * too); waits count for the ends inside it */
			rep_wait_end(r, li, &ev, in);
			if (!in)
				continue;
			break;
		case OTF2R_EVT_METRIC:
			metric_values(r, L, &ev, in);   /* (the values regions start from) */
			if (in && ev.nattrs)
				rep_io_chars(r, &ev);   /* folded per-character stream calls */
			continue;
		default:
			if (!in)
				continue;
		}
		switch (ev.type) {
		case OTF2R_EVT_CALLING_CONTEXT_SAMPLE:
			r->samples++;
			if (ev.u.calling_context_sample.calling_context < r->ncc)
				r->cc_samples[ev.u.calling_context_sample.calling_context]++;
			break;
		case OTF2R_EVT_THREAD_TASK_CREATE:
		case OTF2R_EVT_THREAD_TASK_SWITCH:
		case OTF2R_EVT_THREAD_TASK_COMPLETE:
			L->tasks[ev.type - OTF2R_EVT_THREAD_TASK_CREATE]++;
			break;
		case OTF2R_EVT_MPI_COLLECTIVE_BEGIN:
			L->coll_begin = ev.time;
			break;
		case OTF2R_EVT_MPI_COLLECTIVE_END: {
			uint32_t cm = ev.u.mpi_collective_end.communicator;
			if (L->coll_begin != UINT64_MAX && cm < r->ncomm) {
				r->coll_count[cm]++;
				r->coll_time[cm] += ev.time - L->coll_begin;
				if (r->coll_first[cm] == SIZE_MAX)
					r->coll_first[cm] = li;
				r->coll_calls[cm] += r->coll_first[cm] == li;
			}
			L->coll_begin = UINT64_MAX;
			break;
		}
		case OTF2R_EVT_THREAD_ACQUIRE_LOCK:
			acquire(r, li, ev.u.thread_acquire_lock.lock_id, ev.time, &ev);
			break;
		case OTF2R_EVT_OMP_ACQUIRE_LOCK:
			acquire(r, li, ev.u.omp_acquire_lock.lock_id, ev.time, &ev);
			break;
		case OTF2R_EVT_BUFFER_FLUSH:
			L->flushes++;
			break;
		case OTF2R_EVT_MEASUREMENT_ON_OFF:
			L->onoff++;
			break;
		case OTF2R_EVT_PROGRAM_BEGIN:
			if (!r->program)
				r->program = otf2r_string(ar, ev.u.program_begin.program_name);
			break;
		case OTF2R_EVT_MPI_RECV:
		case OTF2R_EVT_MPI_IRECV:
			rep_late_sender(r, li, &ev);
			break;
		case OTF2R_EVT_MPI_SEND:
		case OTF2R_EVT_MPI_ISEND: {
			rep_late_sender(r, li, &ev);
			uint32_t to, comm, tag;
			uint64_t len;
			rep_message(&ev, &to, &comm, &tag, &len);
			size_t g = rep_peer_group(r, comm, to);
			r->messages++;
			if (g != SIZE_MAX) {
				r->msg_count[L->group * r->ngroups + g]++;
				r->msg_bytes[L->group * r->ngroups + g] += len;
			}
			break;
		}
		case OTF2R_EVT_IO_OPERATION_BEGIN:
		case OTF2R_EVT_IO_OPERATION_COMPLETE:
		case OTF2R_EVT_IO_OPERATION_CANCELLED:
			rep_io_event(r, li, &ev);
			break;
		default:
			break;
		}
	}
	otf2r_merge_close(m);
	if (rc < 0)
		return -1;   /* (the caller says why: otf2r_error) */
	for (size_t i = 0; i < r->nlocs; i++) {      /* still open: end at the last event */
		struct rep_loc *L = &r->locs[i];
		while (L->depth)
			leave_top(r, L, L->depth && L->stack[L->depth - 1].enter > L->last ? L->stack[L->depth - 1].enter
											       : L->last);
		if (L->first == UINT64_MAX)
			L->first = L->last = 0;
	}
	if (r->first == UINT64_MAX)
		r->first = r->last = 0;
	if (!r->program && r->nlocs)
		r->program = r->groups[r->locs[0].group].name;
	rep_lock_names(r);
	return 0;
}

void rep_free(struct rep *r)
{
	rep_io_free(r);
	rep_wait_free(r);
	rep_pairs_free(r);
	rep_cpath_free(r);
	rep_bins_free(r);
	free(r->sel);
	for (size_t i = 0; i < r->nlocs; i++) {
		free(r->locs[i].msum);
		free(r->locs[i].stack);
		free(r->locs[i].reg);
		free(r->locs[i].active);
		free(r->locs[i].mcur);
		free(r->locs[i].mhave);
		free(r->locs[i].mstart);
		free(r->locs[i].mstart_have);
	}
	free(r->locs);
	free(r->regions);
	free(r->region_names);
	free(r->region_by_id);
	free(r->groups);
	free(r->msg_count);
	free(r->msg_bytes);
	for (size_t i = 0; i < r->caplocks; i++) {
		free(r->locks[i].waiters);
		free(r->locks[i].name);
		free(r->locks[i].object);
		free(r->locks[i].init);
	}
	free(r->locks);
	free(r->cc_region);
	free(r->cc_parent);
	free(r->cc_scl);
	free(r->cc_samples);
	free(r->callers);
	free(r->coll_count);
	free(r->coll_time);
	free(r->coll_calls);
	free(r->coll_first);
	free(r->pend);
	free(r->bsend);
	free(r->msgs);
	free(r->mm_ids);
	free(r->mreg);
	free(r->mreg_n);
	free(r->mm_rel);
	rep_match_free(&r->match);
}

struct rep_stat rep_total(const struct rep *r, size_t ri, int group)
{
	struct rep_stat t = { 0 };
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rep_stat *s = &r->locs[i].reg[ri];
		/* (no calls but time: a call begun before a --from window) */
		if ((group >= 0 && r->locs[i].group != (size_t)group) || (!s->calls && !s->incl && !s->excl))
			continue;
		if (s->done && (!t.done || s->min < t.min))
			t.min = s->min;
		if (s->max > t.max)
			t.max = s->max;
		t.calls += s->calls;
		t.done += s->done;
		t.sum += s->sum;
		t.incl += s->incl;
		t.excl += s->excl;
	}
	return t;
}

static const struct rep_stat *sort_st;
static const struct rep *sort_rep;
static int sort_key;

static int cmp_rows(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct rep_stat *p = &sort_st[x], *q = &sort_st[y];
	uint64_t u = 0, v = 0;
	switch (sort_key) {
	case 'n': {
		int c = strcmp(sort_rep->region_names[x], sort_rep->region_names[y]);
		return c ? c : (x > y) - (x < y);
	}
	case 'c': u = p->calls; v = q->calls; break;
	case 'i': u = p->incl; v = q->incl; break;
	case 'm': u = p->max; v = q->max; break;
	case 'a': u = REP_AVG(sort_rep, p); v = REP_AVG(sort_rep, q); break;
	default: u = p->excl; v = q->excl; break;
	}
	if (u != v)
		return u < v ? 1 : -1;
	return (x > y) - (x < y);
}

/* Regions with calls, sorted, at most limit. st is indexed by region. */
void rep_sorted(const struct rep *r, const struct rep_stat *st, const struct rep_opts *o,
		size_t *order, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < r->nregions; i++)
		if (st[i].calls || st[i].incl || st[i].excl)
			order[k++] = i;
	sort_st = st;
	sort_rep = r;
	const char *s = o->sort ? o->sort : "excl";
	sort_key = strcmp(s, "name") == 0 ? 'n' : strcmp(s, "calls") == 0 ? 'c'
		: strcmp(s, "incl") == 0 ? 'i' : strcmp(s, "max") == 0 ? 'm'
		: strcmp(s, "avg") == 0 ? 'a' : 'e';
	qsort(order, k, sizeof *order, cmp_rows);
	if (o->limit && k > o->limit)
		k = o->limit;
	*n = k;
}
