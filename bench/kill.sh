#!/bin/sh
# bench/kill.sh - events lost at SIGKILL with TRACER_DURABLE at its default
# interval (run: scripts/bench kill).
#
# tests/durable's lock program (4 threads, one mutex, KILL_WORK_US of work
# between two locks of a thread) runs traced with TRACER_DURABLE=on and is killed (SIGKILL)
# KILL_AFTER seconds after its start; `tracer recover` rebuilds the archive.
# The program prints every 50 ms how many lock/unlock pairs were complete;
# lost = (pairs complete at its last line before the kill - pairs in the
# recovered archive, counted as ThreadReleaseLock by otf2-print), never
# below 0, times the 4 events of a pair. Also shown: the pairs recovered
# beyond that line. Median of REPS runs.
#   KILL_REPS (default 5), KILL_AFTER (default 3), KILL_WORK_US (default 5)
set -e
. "$(dirname "$0")/common.sh"
reps=${KILL_REPS:-5}
after=${KILL_AFTER:-3}
work_us=${KILL_WORK_US:-5}
bin=$build/tests/durable/durable_lock_prog
lib=$build/lib/libtracer.so
tracer=$build/bin/tracer
bench_setup kill tests/durable/durable_lock_prog lib/libtracer.so bin/tracer

: >"$work/lost"; : >"$work/extra"; : >"$work/total"
i=0
while [ "$i" -lt "$reps" ]; do
	rm -rf "$work/trace"
	TRACER_OUTPUT="$work/trace" TRACER_DURABLE=on TRACER_VERBOSE=0 LD_PRELOAD="$lib" \
		"$bin" 60 4 "$work_us" >"$work/out" 2>/dev/null &
	pid=$!
	sleep "$after"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	"$tracer" recover "$work/trace" 2>/dev/null
	printed=$(awk '$1 == "t" { n = $4 } END { print n + 0 }' "$work/out")
	got=$(otf2-print "$work/trace/traces.otf2" | grep -c '^THREAD_RELEASE_LOCK' || true)
	echo "$printed $got" | awk '{ d = $1 - $2; print (d > 0 ? d : 0) * 4 }' >>"$work/lost"
	echo "$printed $got" | awk '{ d = $2 - $1; print (d > 0 ? d : 0) }' >>"$work/extra"
	echo "$got" >>"$work/total"
	i=$((i + 1))
done
echo "bench/kill: SIGKILL ${after}s after the start, TRACER_DURABLE=on (250 ms), $reps runs"
echo "  pairs recovered:                      $(median <"$work/total")   (runs: $(tr '\n' ' ' <"$work/total"))"
echo "  pairs recovered after the last count: $(median <"$work/extra")   (runs: $(tr '\n' ' ' <"$work/extra"))"
echo "events lost at SIGKILL: $(median <"$work/lost")   (runs: $(tr '\n' ' ' <"$work/lost"))"
