#!/bin/sh
# bench/io.sh - ns added per traced I/O call (run: scripts/bench io).
#
# 10^6 pwrite and 10^6 pread of 4 KiB on a tmpfs file (/dev/shm), and 10^6
# fwrite of 64 bytes to a stream there, untraced, traced (default
# settings: Enter/IoOperationBegin/IoOperationComplete/Leave per call) and
# with TRACER_IO=off (pass-through cost). Each variant runs REPS times
# (interleaved); the median ns per call (thread CPU time) is used. The last
# line is the mean overhead of the POSIX read and write calls.
#   IO_BENCH_N (default 1000000), IO_BENCH_REPS (default 5), IO_BENCH_DIR (default /dev/shm)
set -e
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}
n=${IO_BENCH_N:-1000000}
reps=${IO_BENCH_REPS:-5}
bin=$build/bench/bench_io_calls
lib=$build/lib/libtracer.so
for f in "$bin" "$lib"; do
	[ -e "$f" ] || { echo "bench/io: $f missing (build first)" >&2; exit 1; }
done
dir=$(mktemp -d "${IO_BENCH_DIR:-/dev/shm}/tracer-bench-io.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-io.XXXXXX")
trap 'rm -rf "$work" "$dir"' EXIT INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

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
	echo "  $kind untraced:   $plain   (runs: $(tr '\n' ' ' <"$work/plain"))"
	echo "  $kind traced:     $traced   (runs: $(tr '\n' ' ' <"$work/traced"); archive ${size} MB)"
	echo "  $kind TRACER_IO=off: $off   (runs: $(tr '\n' ' ' <"$work/off"))"
	awk -v p="$plain" -v t="$traced" -v o="$off" -v k="$kind" \
		'BEGIN { printf "  %s overhead ns per call: %.1f (%.1f %%), pass-through %.1f\n", k, t - p, 100 * (t - p) / p, o - p }'
	echo "$plain $traced" >"$work/res.$kind"
done
cat "$work/res.pwrite" "$work/res.pread" |
	awk '{ d += $2 - $1 } END { printf "io overhead ns per call: %.1f\n", d / NR }'
