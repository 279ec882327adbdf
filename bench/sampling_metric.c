/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampling_metric.c - cost of Metric records per region enter/leave.
 *
 * usage: sampling_metric regions N   N VT user regions (VT_begin/VT_end of
 *                                    libtracer.so, looked up at run time);
 *                                    run traced with and without
 *                                    TRACER_METRICS: the difference per
 *                                    enter+leave is the metric cost
 *        sampling_metric papi N EV1,EV2   N PAPI_read of an event set with the
 *                                    given events (untraced): the floor
 * Prints ns_per_iter=<wall ns per iteration (min of 5 rounds)>.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_clock.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[2]);
	double best = 1e30;
	if (!strcmp(argv[1], "regions")) {
		int (*funcdef)(const char *, int, int *) =
			(int (*)(const char *, int, int *))dlsym(RTLD_DEFAULT, "VT_funcdef");
		int (*begin)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "VT_begin");
		int (*end)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "VT_end");
		if (!funcdef || !begin || !end) {
			fprintf(stderr, "VT API not found (run with libtracer.so preloaded)\n");
			return 1;
		}
		int h = 0;
		funcdef("bench_region", 0, &h);
		for (int r = 0; r < 5; r++) {
			double t0 = bench_wall_ns();
			for (long i = 0; i < n; i++) {
				begin(h);
				end(h);
			}
			double t = (bench_wall_ns() - t0) / (double)n;
			if (t < best)
				best = t;
		}
	} else if (!strcmp(argv[1], "papi") && argc >= 4) {
		if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
			return 1;
		int es = PAPI_NULL;
		PAPI_create_eventset(&es);
		char list[512];
		snprintf(list, sizeof(list), "%s", argv[3]);
		int nev = 0;
		for (char *sv = NULL, *tok = strtok_r(list, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv)) {
			if (PAPI_add_named_event(es, tok) != PAPI_OK) {
				fprintf(stderr, "cannot add %s\n", tok);
				return 1;
			}
			nev++;
		}
		if (PAPI_start(es) != PAPI_OK)
			return 1;
		long long v[16];
		for (int r = 0; r < 5; r++) {
			double t0 = bench_wall_ns();
			for (long i = 0; i < n; i++)
				PAPI_read(es, v);
			double t = (bench_wall_ns() - t0) / (double)n;
			if (t < best)
				best = t;
		}
		(void)nev;
	} else {
		return 2;
	}
	printf("ns_per_iter=%.1f\n", best);
	return 0;
}
