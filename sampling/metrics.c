/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.c - hardware/software counters as OTF2 Metric events (module
 * "metrics").
 *
 * TRACER_METRICS=<comma list>: PAPI preset or native names (PAPI_TOT_INS,
 * perf::TASK-CLOCK, perf::PAGE-FAULTS) and resource-usage metrics that need
 * no PAPI (rusage::utime, rusage::stime, rusage::minflt, rusage::majflt,
 * rusage::nvcsw, rusage::nivcsw, rusage::inblock, rusage::oublock,
 * rusage::maxrss; getrusage(RUSAGE_THREAD)).
 *
 * Definitions: one MetricMember per accepted name (mode ACCUMULATED_START:
 * value accumulated since the thread started, maxrss ABSOLUTE_POINT), one
 * MetricClass (SYNCHRONOUS_STRICT, CPU recorder) and a MetricClassRecorder
 * per thread location. Events: one Metric record with all values, at the
 * timestamp of every region enter and leave (on_enter/on_leave observers,
 * written before the Enter/Leave record by preload/), read on the owning
 * thread (per-thread PAPI event sets, started in thread_init).
 *
 * Samples: PAPI is not async-signal-safe, so samples carry no PAPI values;
 * when only rusage:: metrics are asked for, every sample is followed by a
 * Metric record of the same time (getrusage is a plain system call).
 *
 * Rejected names (unknown, not supported here, too many counters together,
 * no working PAPI component) are reported in one `tracer:` line that also
 * names the accepted ones; tracing goes on without the rejected ones.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "smp_int.h"
#include "smp_libs.h"

#define MET_MAX 32

enum met_rus {
	RUS_UTIME, RUS_STIME, RUS_MAXRSS, RUS_MINFLT, RUS_MAJFLT, RUS_NVCSW, RUS_NIVCSW,
	RUS_INBLOCK, RUS_OUBLOCK,
};

static const struct {
	const char *name;
	const char *desc;
	const char *unit;
	uint8_t base;
	int exponent;
	uint8_t mode;
} met_rus_tab[] = {
	/* value x base^exponent is in unit: utime counts us (s x 10^-6),
	 * maxrss KiB (B x 2^10) */
#define D OTF2W_BASE_DECIMAL
	[RUS_UTIME] = { "utime", "user CPU time of the thread", "s", D, -6, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_STIME] = { "stime", "system CPU time of the thread", "s", D, -6, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_MAXRSS] = { "maxrss", "maximum resident set size", "B", OTF2W_BASE_BINARY, 10, OTF2W_METRIC_ABSOLUTE_POINT },
	[RUS_MINFLT] = { "minflt", "minor page faults", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_MAJFLT] = { "majflt", "major page faults", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_NVCSW] = { "nvcsw", "voluntary context switches", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_NIVCSW] = { "nivcsw", "involuntary context switches", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_INBLOCK] = { "inblock", "block input operations", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
	[RUS_OUBLOCK] = { "oublock", "block output operations", "#", D, 0, OTF2W_METRIC_ACCUMULATED_START },
#undef D
};
#define MET_NRUS (sizeof(met_rus_tab) / sizeof(met_rus_tab[0]))

/* accepted metrics: PAPI ones first (their order in the event set), then rusage */
static int met_papi_code[MET_MAX];
static char met_papi_name[MET_MAX][128];
static int met_npapi;
static int met_rus[MET_MAX];
static int met_nrus;
static uint32_t met_class = SMP_UNDEF;
static uint8_t met_types[MET_MAX];
static int met_papi_on;
static volatile int met_disabled;
int tr_smp_met_with_samples;
static uint64_t met_read_errors;

struct met_thread {
	int es;          /* PAPI event set or PAPI_NULL */
	int papi_ok;
	pid_t tid;
	uint64_t base[MET_MAX];
};

/* PAPI calls this on every PAPI_read: pthread_self, not a gettid syscall. */
static unsigned long met_thread_id(void)
{
	return (unsigned long)pthread_self();
}

static int met_rus_lookup(const char *n)
{
	for (unsigned i = 0; i < MET_NRUS; i++)
		if (!strcmp(n, met_rus_tab[i].name))
			return (int)i;
	return -1;
}

static void met_append(char *buf, size_t cap, const char *s)
{
	size_t l = strlen(buf);
	if (l + 1 < cap)
		snprintf(buf + l, cap - l, "%s%s", l ? ", " : "", s);
}

static const char *met_papi_reason(int err)
{
	switch (err) {
	case PAPI_ENOEVNT: return "not supported here";
	case PAPI_ECNFLCT: return "too many counters together";
	default: return smp_papi->PAPI_strerror(err);
	}
}

/* Why a PAPI name is unknown: the component that would provide it may be
 * disabled (perf:: and PAPI_ presets come from perf_event, which PAPI
 * disables when libpfm4 finds no PMU, e.g. in a VM without counters). */
static const char *met_unknown_reason(const char *name, char *buf, size_t cap)
{
	char pre[64];
	const char *c = strstr(name, "::");
	if (c && (size_t)(c - name) < sizeof(pre))
		snprintf(pre, sizeof(pre), "%.*s", (int)(c - name), name);
	else if (!strncmp(name, "PAPI_", 5))
		snprintf(pre, sizeof(pre), "perf_event");
	else
		return "unknown event";
	for (int i = 0; i < smp_papi->PAPI_num_components(); i++) {
		const PAPI_component_info_t *ci = smp_papi->PAPI_get_component_info(i);
		if (ci && ci->disabled && !strncmp(ci->name, pre, strlen(pre))) {
			snprintf(buf, cap, "unknown event: PAPI component %.40s disabled: %.120s", ci->name,
				 ci->disabled_reason[0] ? ci->disabled_reason : "no reason given");
			return buf;
		}
	}
	return "unknown event";
}

/* Unit of a PAPI event: the software clocks of perf_event count
 * nanoseconds (s x 10^-9); else PAPI's own unit when it gives one; else a
 * count. */
static const char *met_papi_unit(const char *name, const char *papi_unit, int *exponent)
{
	const char *c = strstr(name, "::");
	const char *ev = c ? c + 2 : name;
	*exponent = 0;
	if (!strncasecmp(ev, "TASK-CLOCK", 10) || !strncasecmp(ev, "CPU-CLOCK", 9)) {
		*exponent = -9;
		return "s";
	}
	if (papi_unit && papi_unit[0])
		return papi_unit;
	return "#";
}

static void met_init(void)
{
	if (!tr_smp_cfg.metrics[0])
		return;
	char list[sizeof(tr_smp_cfg.metrics)];
	char rejected[2048] = "", accepted[2048] = "";
	char papi_req[MET_MAX][128];
	int npapi_req = 0;
	snprintf(list, sizeof(list), "%s", tr_smp_cfg.metrics);

	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		size_t l = strlen(tok);
		while (l && tok[l - 1] == ' ')
			tok[--l] = 0;
		if (!l)
			continue;
		if (npapi_req + met_nrus >= MET_MAX) {
			char b[200];
			snprintf(b, sizeof(b), "%.120s (more than %d metrics)", tok, MET_MAX);
			met_append(rejected, sizeof(rejected), b);
			continue;
		}
		if (!strncmp(tok, "rusage::", 8)) {
			int r = met_rus_lookup(tok + 8);
			if (r < 0) {
				char b[200];
				snprintf(b, sizeof(b), "%.120s (unknown rusage metric)", tok);
				met_append(rejected, sizeof(rejected), b);
			} else {
				met_rus[met_nrus++] = r;
			}
			continue;
		}
		snprintf(papi_req[npapi_req++], sizeof(papi_req[0]), "%.120s", tok);
	}

	if (npapi_req) {
		const char *why = NULL;
		char whybuf[300];
		int v = PAPI_VER_CURRENT;
		if (!smp_papi_load("TRACER_METRICS")) {
			why = "PAPI cannot be loaded";   /* (the reason said once) */
		} else if ((v = smp_papi->PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT) {
			snprintf(whybuf, sizeof(whybuf), "PAPI unavailable: %s",
				 v > 0 ? "version mismatch" : smp_papi->PAPI_strerror(v));
			why = whybuf;
		} else if (smp_papi->PAPI_thread_init(met_thread_id) != PAPI_OK) {
			why = "PAPI_thread_init failed";
		} else {
			int any = 0;
			for (int c = 0; c < smp_papi->PAPI_num_components(); c++) {
				const PAPI_component_info_t *ci = smp_papi->PAPI_get_component_info(c);
				if (ci && !ci->disabled)
					any = 1;
			}
			if (!any)
				why = "no working PAPI component";
		}
		int es = PAPI_NULL;
		if (!why && smp_papi->PAPI_create_eventset(&es) != PAPI_OK)
			why = "PAPI_create_eventset failed";
		for (int i = 0; i < npapi_req; i++) {
			char b[400];
			if (why) {
				snprintf(b, sizeof(b), "%.120s (%.250s)", papi_req[i], why);
				met_append(rejected, sizeof(rejected), b);
				continue;
			}
			int code = 0;
			int r = smp_papi->PAPI_event_name_to_code(papi_req[i], &code);
			if (r != PAPI_OK) {
				char rb[250];
				snprintf(b, sizeof(b), "%.120s (%s)", papi_req[i],
					 met_unknown_reason(papi_req[i], rb, sizeof(rb)));
				met_append(rejected, sizeof(rejected), b);
				continue;
			}
			r = smp_papi->PAPI_add_event(es, code);
			if (r != PAPI_OK) {
				snprintf(b, sizeof(b), "%.120s (%.250s)", papi_req[i], met_papi_reason(r));
				met_append(rejected, sizeof(rejected), b);
				continue;
			}
			met_papi_code[met_npapi] = code;
			snprintf(met_papi_name[met_npapi], sizeof(met_papi_name[0]), "%.120s", papi_req[i]);
			met_npapi++;
		}
		/* the set must also start: drop from the end until it does */
		while (!why && met_npapi) {
			int r = smp_papi->PAPI_start(es);
			if (r == PAPI_OK) {
				long long tmp[MET_MAX];
				smp_papi->PAPI_stop(es, tmp);
				break;
			}
			met_npapi--;
			char b[400];
			snprintf(b, sizeof(b), "%.120s (%.250s)", met_papi_name[met_npapi], met_papi_reason(r));
			met_append(rejected, sizeof(rejected), b);
			smp_papi->PAPI_remove_event(es, met_papi_code[met_npapi]);
		}
		if (es != PAPI_NULL) {
			smp_papi->PAPI_cleanup_eventset(es);
			smp_papi->PAPI_destroy_eventset(&es);
		}
		met_papi_on = met_npapi > 0;
	}

	uint32_t members[MET_MAX];
	int n = 0;
	for (int i = 0; i < met_npapi; i++) {
		PAPI_event_info_t info;
		const char *desc = "", *punit = NULL;
		int exponent = 0;
		if (smp_papi->PAPI_get_event_info(met_papi_code[i], &info) == PAPI_OK) {
			desc = info.long_descr[0] ? info.long_descr : info.short_descr;
			punit = info.units;
		}
		const char *unit = met_papi_unit(met_papi_name[i], punit, &exponent);
		members[n] = tr_def_metric_member(met_papi_name[i], desc, OTF2W_METRIC_TYPE_PAPI,
						  OTF2W_METRIC_ACCUMULATED_START, OTF2W_TYPE_UINT64,
						  OTF2W_BASE_DECIMAL, exponent, unit);
		met_types[n++] = OTF2W_TYPE_UINT64;
		met_append(accepted, sizeof(accepted), met_papi_name[i]);
	}
	for (int i = 0; i < met_nrus; i++) {
		char name[64];
		int r = met_rus[i];
		snprintf(name, sizeof(name), "rusage::%s", met_rus_tab[r].name);
		members[n] = tr_def_metric_member(name, met_rus_tab[r].desc, OTF2W_METRIC_TYPE_RUSAGE,
						  met_rus_tab[r].mode, OTF2W_TYPE_UINT64, met_rus_tab[r].base,
						  met_rus_tab[r].exponent, met_rus_tab[r].unit);
		met_types[n++] = OTF2W_TYPE_UINT64;
		met_append(accepted, sizeof(accepted), name);
	}
	if (rejected[0])
		tr_log_warn("metrics: rejected %s; recording %s", rejected, accepted[0] ? accepted : "none");
	if (!n)
		return;
	met_class = tr_def_metric_class((uint32_t)n, members, OTF2W_METRIC_SYNCHRONOUS_STRICT,
					OTF2W_RECORDER_CPU);
	tr_smp_met_with_samples = met_npapi == 0;
	tr_log_debug("metrics: recording %s", accepted);
}

static void met_thread_init(struct tr_thread *t)
{
	if (met_class == SMP_UNDEF || met_disabled)
		return;
	struct met_thread *m = tr_calloc(1, sizeof(*m));
	if (!m)
		return;
	m->es = PAPI_NULL;
	m->tid = (pid_t)tr_syscall(SYS_gettid);
	t->guard++;   /* PAPI's own locks and allocations are not traced */
	if (met_papi_on) {
		int ok = smp_papi->PAPI_create_eventset(&m->es) == PAPI_OK;
		for (int i = 0; ok && i < met_npapi; i++)
			ok = smp_papi->PAPI_add_event(m->es, met_papi_code[i]) == PAPI_OK;
		if (ok)
			ok = smp_papi->PAPI_start(m->es) == PAPI_OK;
		if (!ok) {
			tr_log_warn("metrics: PAPI counters cannot start on thread %u; its Metric records are not written",
				    t->index);
			if (m->es != PAPI_NULL) {
				smp_papi->PAPI_cleanup_eventset(m->es);
				smp_papi->PAPI_destroy_eventset(&m->es);
			}
			tr_free(m);
			t->guard--;
			return;
		}
		m->papi_ok = 1;
	}
	tr_def_metric_class_recorder(met_class, t->location);
	t->metrics = m;
	t->guard--;
}

/* Async-signal-safe when no PAPI metric is configured (rusage only). */
void tr_smp_met_record(struct tr_thread *t, uint64_t time)
{
	struct met_thread *m = t->metrics;
	if (!m || met_disabled)
		return;
	otf2w_metric_value v[MET_MAX];
	int n = 0;
	if (met_npapi) {
		long long pv[MET_MAX];
		if (!m->papi_ok || smp_papi->PAPI_read(m->es, pv) != PAPI_OK) {
			met_read_errors++;
			return;
		}
		for (int i = 0; i < met_npapi; i++)
			v[n++].unsigned_int = (uint64_t)pv[i];
	}
	if (met_nrus) {
		struct rusage ru;
		if (getrusage(RUSAGE_THREAD, &ru) != 0) {
			met_read_errors++;
			return;
		}
		for (int i = 0; i < met_nrus; i++) {
			uint64_t x = 0;
			switch (met_rus[i]) {
			case RUS_UTIME: x = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec; break;
			case RUS_STIME: x = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec; break;
			case RUS_MAXRSS: x = (uint64_t)ru.ru_maxrss; break;
			case RUS_MINFLT: x = (uint64_t)ru.ru_minflt; break;
			case RUS_MAJFLT: x = (uint64_t)ru.ru_majflt; break;
			case RUS_NVCSW: x = (uint64_t)ru.ru_nvcsw; break;
			case RUS_NIVCSW: x = (uint64_t)ru.ru_nivcsw; break;
			case RUS_INBLOCK: x = (uint64_t)ru.ru_inblock; break;
			case RUS_OUBLOCK: x = (uint64_t)ru.ru_oublock; break;
			}
			v[n++].unsigned_int = x;
		}
	}
	if (otf2w_evt_metric(t->w, NULL, time, met_class, (uint8_t)n, met_types, v) != OTF2W_OK)
		met_read_errors++;
}

static void met_on_event(struct tr_thread *t, uint64_t time, uint32_t region)
{
	/* deferred samples older than this event go before its Metric record */
	tr_smp_drain_before(t, time);
	tr_smp_met_record(t, time);
}

/* VT_wakeup (tr_wakeup): "sample now" - one Metric record at `time`, after
 * the deferred samples older than it, exactly as at a region enter/leave. */
static void met_wakeup(struct tr_thread *t, uint64_t time)
{
	met_on_event(t, time, 0);
}

static void met_thread_fini(struct tr_thread *t)
{
	struct met_thread *m = t->metrics;
	if (!m)
		return;
	if (m->tid != (pid_t)tr_syscall(SYS_gettid))
		return;   /* another thread's PAPI state cannot be touched from here */
	t->metrics = NULL;
	t->guard++;
	if (m->papi_ok) {
		long long tmp[MET_MAX];
		smp_papi->PAPI_stop(m->es, tmp);
		smp_papi->PAPI_cleanup_eventset(m->es);
		smp_papi->PAPI_destroy_eventset(&m->es);
		smp_papi->PAPI_unregister_thread();
	}
	t->guard--;
	tr_free(m);
}

static void met_fini(void)
{
	if (met_read_errors)
		tr_log_warn("metrics: %llu Metric records could not be read or written",
			    (unsigned long long)met_read_errors);
}

static void met_fork_child(void)
{
	if (met_papi_on && !met_disabled) {
		/* the inherited PAPI state counts the parent's thread */
		met_disabled = 1;
		tr_log_info("metrics: no Metric records in the forked child (PAPI counters belong to the parent)");
	}
}

/* The counters restart in a fork child at once: its archive is made then. */
static int met_fork_records(void)
{
	return 1;
}

static const struct tr_module met_module = {
	.name = "metrics",
	.init = met_init,
	.thread_init = met_thread_init,
	.thread_fini = met_thread_fini,
	.fini = met_fini,
	.fork_child = met_fork_child,
	.on_enter = met_on_event,
	.on_leave = met_on_event,
	.wakeup = met_wakeup,
	.fork_records = met_fork_records,
};

void tr_smp_metrics_register(void)
{
	if (tr_smp_cfg.metrics[0])
		tr_module_register(&met_module);
}
