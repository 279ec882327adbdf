/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * settings.c - sampling/'s TRACER_* settings (the sampler and the metrics):
 * one table, registered with the core (tr_settings_register) before the
 * modules' constructors read it.
 */
#include <stdlib.h>
#include <string.h>
#include "smp_int.h"

struct tr_smp_config tr_smp_cfg = { .depth = 64 };

static const char *set_sampling(const char *v)
{
	uint64_t ns;
	int b;
	const char *at = strchr(v, '@');
	char *end = NULL;
	tr_smp_cfg.event = TR_SMP_EVENT_TIME;
	if (tr_cfg_parse_bool(v, &b) == 0 && b == 0)
		tr_smp_cfg.period_ns = 0;
	else if (tr_cfg_parse_duration(v, &ns) == 0 && (ns == 0 || ns >= 1000))
		tr_smp_cfg.period_ns = ns;
	else if (at && (ns = strtoull(at + 1, &end, 10)) >= 1000 && end && !*end &&
		 (!strncmp(v, "cycles@", 7) || !strncmp(v, "instructions@", 13))) {
		tr_smp_cfg.period_ns = ns;   /* a count of events */
		tr_smp_cfg.event = v[0] == 'c' ? TR_SMP_EVENT_CYCLES : TR_SMP_EVENT_INSTRUCTIONS;
	} else
		return "off, a period >= 1us (1ms, 250us, 1000Hz, 2s), cycles@N or instructions@N (N >= 1000)";
	return NULL;
}

static const char *set_depth(const char *v)
{
	long l;
	if (tr_cfg_parse_int(v, 1, 4096, &l))
		return "an integer 1..4096";
	tr_smp_cfg.depth = (uint32_t)l;
	return NULL;
}

static const char *set_unwind(const char *v)
{
	static const char *const nm[] = { "cfi", "libunwind", "check" };
	for (uint32_t i = 0; i < 3; i++) {
		if (!strcmp(v, nm[i])) {
			tr_smp_cfg.unwind = i;
			return NULL;
		}
	}
	return "cfi, libunwind or check";
}

static const char *set_metrics(const char *v)
{
	if (strlen(v) >= sizeof(tr_smp_cfg.metrics))
		return "a comma-separated list shorter than 1024 bytes";
	strcpy(tr_smp_cfg.metrics, v);
	return NULL;
}

static const struct tr_setting smp_settings[] = {
	TR_SETTING("TRACER_SAMPLING", set_sampling, "off"),
	TR_SETTING("TRACER_SAMPLING_DEPTH", set_depth, "64"),
	TR_SETTING("TRACER_SAMPLING_UNWIND", set_unwind, "cfi"),
	TR_SETTING_ON_OFF("TRACER_CALLERS", &tr_smp_cfg.callers, "off"),
	TR_SETTING("TRACER_METRICS", set_metrics, "none"),
};
TR_SETTINGS_TABLE(smp_table, "sampling", smp_settings);
