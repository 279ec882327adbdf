#!/bin/sh
# bench/io.sh - ns added per traced I/O call (run: scripts/bench io).
#
# 10^6 pwrite and 10^6 pread of 4 KiB on a tmpfs file (/dev/shm), 10^6
# fwrite of 64 bytes to a stream there, and 10^6 pwrite of 4 KiB to a file
# on the disk the build directory is on (page cache: what an HPC program's
# writes cost before write-back), untraced, traced (default settings:
# Enter/IoOperationBegin/IoOperationComplete/Leave per call) and with
# TRACER_IO=off (pass-through cost). Each variant runs REPS times
# (interleaved); the median ns per call (thread CPU time: user + system,
# the tracer's in-loop buffer flushes included) is used. Per kind: the
# untraced and traced medians, the difference in ns and in % of the
# untraced call. Then, when valgrind is installed, the instructions the
# tracer adds per pwrite (callgrind, traced minus untraced: independent
# of the machine's load). The last line is the mean overhead of the POSIX
# read and write calls on tmpfs.
#   IO_BENCH_N (default 1000000), IO_BENCH_REPS (default 7), IO_BENCH_DIR (default /dev/shm),
#   IO_BENCH_DISK (default: a directory in the build directory)
set -e
. "$(dirname "$0")/common.sh"
n=${IO_BENCH_N:-1000000}
reps=${IO_BENCH_REPS:-7}
bench_setup io bench/bench_io_calls lib/libtracer.so
bin=$build/bench/bench_io_calls
lib=$build/lib/libtracer.so
dir=$(mktemp -d "${IO_BENCH_DIR:-/dev/shm}/tracer-bench-io.XXXXXX")
disk=$(mktemp -d "${IO_BENCH_DISK:-$build}/tracer-bench-io.XXXXXX")
bench_cleanup="$dir $disk"
fstype() { df -PT "$1" | awk 'NR == 2 { print $2 }'; }

echo "bench/io: $n calls per kind, $reps runs each, median ns per call (thread CPU time)," \
	"files in $dir ($(fstype "$dir")) and $disk ($(fstype "$disk"))"
for kind in pwrite pread fwrite pwrite-disk; do
	: >"$work/plain"; : >"$work/traced"; : >"$work/off"
	call=${kind%-disk}
	where=$dir
	[ "$kind" = "$call" ] || where=$disk
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$bin" "$call" "$where" "$n" >>"$work/plain"
		rm -rf "$work/trace"
		TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 LD_PRELOAD="$lib" "$bin" "$call" "$where" "$n" >>"$work/traced"
		size=$(du -sm "$work/trace" | cut -f1)
		rm -rf "$work/trace"
		TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 TRACER_IO=off LD_PRELOAD="$lib" "$bin" "$call" "$where" "$n" >>"$work/off"
		i=$((i + 1))
	done
	plain=$(median <"$work/plain")
	traced=$(median <"$work/traced")
	off=$(median <"$work/off")
	case $kind in
	fwrite) what="64-byte fwrite" ;;
	pwrite-disk) what="4 KiB pwrite (disk, page cache)" ;;
	*) what="4 KiB $kind (tmpfs)" ;;
	esac
	echo "  $what: untraced $plain ns, traced $traced ns: $(bench_pct "$plain" "$traced"); TRACER_IO=off $(bench_pct "$plain" "$off")"
	echo "    runs untraced: $(bench_runs "$work/plain")"
	echo "    runs traced:   $(bench_runs "$work/traced") (archive ${size} MB)"
	echo "    runs off:      $(bench_runs "$work/off")"
	echo "$plain $traced" >"$work/res.$kind"
done

# Instructions per call: callgrind's count for 2m and m calls, traced and
# untraced; the differences cancel start-up and shut-down.
if command -v valgrind >/dev/null 2>&1; then
	m=100000
	ir()
	{
		rm -rf "$work/trace"
		env ${2:+LD_PRELOAD="$lib"} TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 \
			valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" pwrite "$dir" "$1" 2>&1 >/dev/null |
			callgrind_refs
	}
	t1=$(ir $m 1); t2=$(ir $((2 * m)) 1); u1=$(ir $m); u2=$(ir $((2 * m)))
	echo "  instructions per 4 KiB pwrite (callgrind): untraced $(((u2 - u1) / m)), traced $(((t2 - t1) / m)):" \
		"+$(((t2 - t1 - u2 + u1) / m)) added by the tracer"
fi
cat "$work/res.pwrite" "$work/res.pread" |
	awk '{ d += $2 - $1 } END { printf "io overhead ns per call: %.1f\n", d / NR }'
