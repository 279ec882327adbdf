#!/bin/sh
# bench/core.sh - cost of the core hot path (run: scripts/bench core).
#
# In one thread, N (default 10^7) iterations of tr_thread_get + tr_enter +
# tr_leave + tr_thread_put (two timestamps, two records written to the
# in-memory chunk; flushed to disk at 16M), and N tr_time() calls, for the
# TSC clock and for CLOCK_MONOTONIC. Median of REPS (5) runs, ns.
set -e
. "$(dirname "$0")/common.sh"
n=${CORE_BENCH_N:-10000000}
reps=${CORE_BENCH_REPS:-5}
bin=$build/bench/bench_core
lib=$build/tests/core/libtracer_coretest.so
bench_setup core bench/bench_core tests/core/libtracer_coretest.so
for clock in tsc monotonic; do
	: >"$work/pair"; : >"$work/time"
	i=0
	while [ "$i" -lt "$reps" ]; do
		rm -rf "$work/trace"
		TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 TRACER_CLOCK=$clock LD_PRELOAD="$lib" "$bin" "$n" >"$work/out"
		cut -d' ' -f1 "$work/out" >>"$work/pair"
		cut -d' ' -f2 "$work/out" >>"$work/time"
		i=$((i + 1))
	done
	printf 'core %-9s Enter+Leave pair: %6.1f ns   tr_time(): %5.1f ns   (median of %d x %d)\n' \
		"$clock" "$(median <"$work/pair")" "$(median <"$work/time")" "$reps" "$n"
done
