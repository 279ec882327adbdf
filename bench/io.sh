#!/bin/sh
# bench/io.sh - ns added per traced I/O call (run: scripts/bench io).
#
# 10^6 pwrite and 10^6 pread of 4 KiB on a tmpfs file (/dev/shm), and 10^6
# fwrite of 64 bytes to a stream there, untraced, traced (default
# settings: Enter/IoOperationBegin/IoOperationComplete/Leave per call) and
# with TRACER_IO=off (pass-through cost). Each variant runs REPS times
# (interleaved); the median ns per call (thread CPU time: user + system,
# the tracer's in-loop buffer flushes included) is used. Per kind: the
# untraced and traced medians, the difference in ns and in % of the
# untraced call. The last line is the mean overhead of the POSIX read and
# write calls.
#   IO_BENCH_N (default 1000000), IO_BENCH_REPS (default 7), IO_BENCH_DIR (default /dev/shm)
set -e
. "$(dirname "$0")/common.sh"
n=${IO_BENCH_N:-1000000}
reps=${IO_BENCH_REPS:-7}
bench_setup io bench/bench_io_calls lib/libtracer.so
bin=$build/bench/bench_io_calls
lib=$build/lib/libtracer.so
dir=$(mktemp -d "${IO_BENCH_DIR:-/dev/shm}/tracer-bench-io.XXXXXX")
bench_cleanup="$dir"

echo "bench/io: $n calls per kind, $reps runs each, median ns per call (thread CPU time), files in $dir"
for kind in pwrite pread fwrite; do
	: >"$work/plain"; : >"$work/traced"; : >"$work/off"
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$bin" "$kind" "$dir" "$n" >>"$work/plain"
		rm -rf "$work/trace"
		TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 LD_PRELOAD="$lib" "$bin" "$kind" "$dir" "$n" >>"$work/traced"
		size=$(du -sm "$work/trace" | cut -f1)
		rm -rf "$work/trace"
		TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 TRACER_IO=off LD_PRELOAD="$lib" "$bin" "$kind" "$dir" "$n" >>"$work/off"
		i=$((i + 1))
	done
	plain=$(median <"$work/plain")
	traced=$(median <"$work/traced")
	off=$(median <"$work/off")
	case $kind in
	fwrite) what="64-byte fwrite" ;;
	*) what="4 KiB $kind (tmpfs)" ;;
	esac
	echo "  $what: untraced $plain ns, traced $traced ns: $(bench_pct "$plain" "$traced"); TRACER_IO=off $(bench_pct "$plain" "$off")"
	echo "    runs untraced: $(bench_runs "$work/plain")"
	echo "    runs traced:   $(bench_runs "$work/traced") (archive ${size} MB)"
	echo "    runs off:      $(bench_runs "$work/off")"
	echo "$plain $traced" >"$work/res.$kind"
done
cat "$work/res.pwrite" "$work/res.pread" |
	awk '{ d += $2 - $1 } END { printf "io overhead ns per call: %.1f\n", d / NR }'
