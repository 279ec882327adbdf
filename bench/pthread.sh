#!/bin/sh
# bench/pthread.sh - ns added per wrapped pthread call (run: scripts/bench pthread).
#
# 10^7 uncontended pthread_mutex_lock/unlock pairs in one thread, untraced
# and traced (default settings: TSC clock, 16M buffer, flush to disk), and
# with TRACER_PTHREAD=off (pass-through cost). Each variant runs REPS times
# (interleaved); the median ns per pair is used. Time is the thread's CPU
# time around the loop (in-loop buffer flushes included), robust against
# other load on the machine. A traced pair records
# Enter/ThreadAcquireLock/Leave (one timestamp) + ThreadReleaseLock.
# The traced thread's user and system time are shown apart (getrusage
# RUSAGE_THREAD), for the default writer and for TRACER_DURABLE=on (the
# same since durability became the default: records go into shared file
# mappings, chunk 0 a window of the event file, later chunks a reused
# staging window written into the file with one pwrite each, in a short
# private-descriptor child: its time counts in the whole process, not in
# the thread). Last line: the traced thread's user + system ns per call
# with TRACER_DURABLE=on (what the default is). Before it: the
# whole process's user + system time (every thread, and the short-lived
# file children of preload/core/fdtable.c, through GNU time) traced with default
# settings minus untraced, per call ("pthread whole-process cpu ns per
# call"; issue target <= 20). Before that, when
# valgrind is installed, the instructions per traced pair (callgrind, runs of
# 2m and m pairs: start-up and shut-down cancel; the program's own process,
# not the tracer's short-lived file children), untraced, default writer
# and TRACER_DURABLE=on: the one figure the machine's load does not move.
#   PTH_BENCH_N (default 10000000), PTH_BENCH_REPS (default 5)
set -e
. "$(dirname "$0")/common.sh"
n=${PTH_BENCH_N:-10000000}
reps=${PTH_BENCH_REPS:-5}
bench_setup pthread bench/bench_pthread_mutex lib/libtracer.so
bin=$build/bench/bench_pthread_mutex
lib=$build/lib/libtracer.so

# median of column ${1:-1} (common.sh's median: column 1)
median() { awk -v c="${1:-1}" '{ print $c }' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" '{ printf "%s ", $c }' "$2"; }

: >"$work/plain"; : >"$work/traced"; : >"$work/off"; : >"$work/durable"
: >"$work/wplain"; : >"$work/wtraced"
# whole-process CPU (user + system of every thread and of the processes it
# waited for, GNU time's wait4): untraced and traced with default settings
i=0
while [ "$i" -lt "$reps" ]; do
	"$bin" "$n" >>"$work/plain"
	/usr/bin/time -f "%U %S" -a -o "$work/wplain" "$bin" "$n" >/dev/null
	rm -rf "$work/trace"
	/usr/bin/time -f "%U %S" -a -o "$work/wtraced" \
		env TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 LD_PRELOAD="$lib" "$bin" "$n" >/dev/null
	rm -rf "$work/trace"
	TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 LD_PRELOAD="$lib" "$bin" "$n" >>"$work/traced"
	size=$(du -sm "$work/trace" | cut -f1)
	rm -rf "$work/trace"
	TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 TRACER_PTHREAD=off LD_PRELOAD="$lib" "$bin" "$n" >>"$work/off"
	rm -rf "$work/trace"
	TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 TRACER_DURABLE=on LD_PRELOAD="$lib" "$bin" "$n" >>"$work/durable"
	rm -rf "$work/trace"
	i=$((i + 1))
done
plain=$(median <"$work/plain")
traced=$(median <"$work/traced")
off=$(median <"$work/off")
durable=$(median <"$work/durable")
echo "bench/pthread: $n lock/unlock pairs, $reps runs each, median ns per pair (thread CPU time)"
echo "  untraced:                 $plain   (runs: $(col 1 "$work/plain"))"
echo "  traced:                   $traced   (runs: $(col 1 "$work/traced"); archive ${size} MB)"
echo "  TRACER_PTHREAD=off:       $off   (runs: $(col 1 "$work/off"))"
echo "  TRACER_DURABLE=on:        $durable   (runs: $(col 1 "$work/durable"))"
for v in traced durable; do
	echo "  $v: traced thread user $(median 2 <"$work/$v") system $(median 3 <"$work/$v") ns per pair (user runs: $(col 2 "$work/$v"); system runs: $(col 3 "$work/$v"))"
done
awk -v p="$plain" -v o="$off" 'BEGIN { printf "  pass-through ns per call: %.1f\n", (o - p) / 2 }'
awk -v p="$plain" -v t="$traced" 'BEGIN { printf "pthread overhead ns per call: %.1f\n", (t - p) / 2 }'
awk -v u="$(median 2 <"$work/traced")" -v s="$(median 3 <"$work/traced")" \
	'BEGIN { printf "  traced thread user+system ns per call, default writer: %.1f\n", (u + s) / 2 }'
# Instructions per pair: callgrind's count for 2m and m pairs.
if command -v valgrind >/dev/null 2>&1; then
	m=100000
	ir()
	{
		rm -rf "$work/trace"
		env ${2:+LD_PRELOAD="$lib"} ${3:+TRACER_DURABLE=on} TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 \
			valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" 2>&1 >/dev/null |
			callgrind_refs
	}
	per() { echo $((($(ir $((2 * m)) "$@") - $(ir $m "$@")) / m)); }
	echo "  instructions per lock/unlock pair (callgrind): untraced $(per), traced $(per 1)," \
		"TRACER_DURABLE=on $(per 1 1)"
fi
wp=$(awk '{ print $1 + $2 }' "$work/wplain" | median)
wt=$(awk '{ print $1 + $2 }' "$work/wtraced" | median)
echo "  whole process user+system s: untraced $wp, traced $wt (runs: $(awk '{ printf "%.2f ", $1 + $2 }' "$work/wtraced"))"
awk -v p="$wp" -v t="$wt" -v n="$n" 'BEGIN { printf "pthread whole-process cpu ns per call: %.1f\n", (t - p) * 1e9 / (2 * n) }'
awk -v u="$(median 2 <"$work/durable")" -v s="$(median 3 <"$work/durable")" \
	'BEGIN { printf "pthread traced-thread ns per call: %.1f\n", (u + s) / 2 }'
