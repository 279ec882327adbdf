#!/bin/sh
# bench/mpiio.sh - ns added per traced MPI-IO call (run: scripts/bench mpiio).
#
# One rank (mpirun -np 1) does N MPI_File_write_at, N MPI_File_read_at and
# N MPI_File_iwrite_at + MPI_Wait of 4 KiB on a tmpfs file (/dev/shm),
# untraced and traced (default settings: Enter, IoOperationBegin,
# IoOperationComplete, Leave per call; the i* form also IoOperationIssued
# and the request tracked to MPI_Wait), REPS runs of each, interleaved, with
# Open MPI (bench_mpiio_calls, its mpirun) and MPICH (bench_mpichio_calls,
# mpirun.mpich) when built. Median ns per call (thread CPU time) per MPI and
# kind: untraced, traced, the difference in ns and %. The last line is the
# mean difference of write_at and read_at over the MPIs measured.
#   MPIIO_BENCH_N (default 200000), MPIIO_BENCH_REPS (default 7), MPIIO_BENCH_DIR (default /dev/shm)
set -e
. "$(dirname "$0")/common.sh"
n=${MPIIO_BENCH_N:-200000}
reps=${MPIIO_BENCH_REPS:-7}
bench_setup mpiio lib/libtracer.so
lib=$build/lib/libtracer.so
dir=$(mktemp -d "${MPIIO_BENCH_DIR:-/dev/shm}/tracer-bench-mpiio.XXXXXX")
bench_cleanup="$dir"

# run MPI TRACED|PLAIN KIND: one run's ns per call
run() {
	if [ "$1" = mpich ]; then
		set -- "$2" "$3" mpirun.mpich -n 1 "$build/bench/bench_mpichio_calls"
		[ "$1" = traced ] && set -- "$1" "$2" mpirun.mpich -n 1 -genv LD_PRELOAD "$lib" \
			-genv TRACER_OUTPUT "$work/trace" -genv TRACER_VERBOSE 0 "$build/bench/bench_mpichio_calls"
	else
		set -- "$2" "$3" mpirun -np 1 --bind-to none "$build/bench/bench_mpiio_calls"
		[ "$1" = traced ] && set -- "$1" "$2" mpirun -np 1 --bind-to none -x LD_PRELOAD="$lib" \
			-x TRACER_OUTPUT="$work/trace" -x TRACER_VERBOSE=0 "$build/bench/bench_mpiio_calls"
	fi
	r_kind=$2
	shift 2
	rm -rf "$work/trace"
	"$@" "$r_kind" "$dir" "$n"
}

echo "bench/mpiio: $n calls per kind, $reps runs each, median ns per call (thread CPU time), files in $dir"
: >"$work/diffs"
for mpi in ompi mpich; do
	prog=bench_mpiio_calls
	[ "$mpi" = mpich ] && prog=bench_mpichio_calls
	if [ ! -x "$build/bench/$prog" ]; then
		echo "  $mpi: $prog not built, skipped"
		continue
	fi
	for kind in write_at read_at iwrite_at; do
		: >"$work/plain"; : >"$work/traced"
		i=0
		while [ "$i" -lt "$reps" ]; do
			run "$mpi" plain "$kind" >>"$work/plain"
			run "$mpi" traced "$kind" >>"$work/traced"
			i=$((i + 1))
		done
		plain=$(median <"$work/plain")
		traced=$(median <"$work/traced")
		echo "  $mpi MPI_File_$kind 4 KiB: untraced $plain ns, traced $traced ns: $(bench_pct "$plain" "$traced")"
		echo "    runs untraced: $(bench_runs "$work/plain")"
		echo "    runs traced:   $(bench_runs "$work/traced")"
		[ "$kind" = iwrite_at ] || echo "$plain $traced" >>"$work/diffs"
	done
done
awk '{ d += $2 - $1 } END { if (NR) printf "mpiio overhead ns per call: %.1f\n", d / NR }' "$work/diffs"
