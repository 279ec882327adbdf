#!/bin/sh
# bench/mpi.sh - MPI tracing cost (run: scripts/bench mpi).
#
# 1. 8-byte ping-pong (MPI_Send/MPI_Recv) between two ranks bound to the two
#    cores, untraced and traced alternately, MPI_BENCH_REPS invocations each
#    (default 9) of MPI_BENCH_N round trips (default 100000); the median
#    one-way latency of each variant is used. A one-way trip crosses two
#    wrapped calls (the sender's MPI_Send, the receiver's MPI_Recv), so
#        overhead per call = (traced - untraced one-way latency) / 2.
#    Cross-check: one rank Send+Recv to itself (MPI_COMM_SELF), same formula
#    per pair; less sensitive to a loaded machine.
# 2. MPI_Finalize time (clock offsets + unification of the definitions) for
#    2, 4 and 8 ranks (oversubscribed on small machines), untraced and traced.
set -e
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}
n=${MPI_BENCH_N:-100000}
reps=${MPI_BENCH_REPS:-9}
pp=$build/bench/bench_mpi_pingpong
fin=$build/bench/bench_mpi_finalize
lib=$build/lib/libtracer.so
for f in "$pp" "$fin" "$lib"; do
	[ -e "$f" ] || { echo "bench/mpi: $f missing (build first)" >&2; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
	bind="--bind-to core --map-by core"
else
	bind="--oversubscribe --bind-to none"
fi
run2() { mpirun -np 2 $bind "$@"; }

: >"$work/plain"; : >"$work/traced"
i=0
while [ "$i" -lt "$reps" ]; do
	run2 "$pp" "$n" >>"$work/plain"
	rm -rf "$work/trace"
	run2 -x LD_PRELOAD="$lib" -x TRACER_OUTPUT="$work/trace" -x TRACER_VERBOSE=0 "$pp" "$n" >>"$work/traced"
	size=$(du -sm "$work/trace" | cut -f1)
	i=$((i + 1))
done
plain=$(median <"$work/plain")
traced=$(median <"$work/traced")
echo "bench/mpi: 8-byte ping-pong, 2 ranks ($bind), $n round trips, $reps runs each"
echo "  untraced one-way latency us: $plain   (runs: $(tr '\n' ' ' <"$work/plain"))"
echo "  traced one-way latency us:   $traced   (runs: $(tr '\n' ' ' <"$work/traced"); archive ${size} MB)"

: >"$work/splain"; : >"$work/straced"
i=0
while [ "$i" -lt "$reps" ]; do
	mpirun -np 1 $bind "$pp" "$n" >>"$work/splain"
	rm -rf "$work/trace"
	mpirun -np 1 $bind -x LD_PRELOAD="$lib" -x TRACER_OUTPUT="$work/trace" -x TRACER_VERBOSE=0 "$pp" "$n" >>"$work/straced"
	i=$((i + 1))
done
splain=$(median <"$work/splain")
straced=$(median <"$work/straced")
echo "  cross-check, one rank sending to itself (no partner to be descheduled), us per Send+Recv pair:"
echo "    untraced $splain, traced $straced -> $(awk -v p="$splain" -v t="$straced" 'BEGIN { printf "%.3f", (t - p) / 2 }') us per call"

for np in 2 4 8; do
	: >"$work/fp"; : >"$work/ft"; : >"$work/fu"
	for k in 1 2 3; do
		mpirun -np $np --oversubscribe --bind-to none "$fin" | awk '{ if ($3 > m) m = $3 } END { print m }' >>"$work/fp"
		rm -rf "$work/ftrace"
		mpirun -np $np --oversubscribe --bind-to none -x LD_PRELOAD="$lib" -x TRACER_OUTPUT="$work/ftrace" \
			-x TRACER_VERBOSE=2 "$fin" >"$work/out" 2>"$work/err" || true
		awk '/^finalize/ { if ($3 > m) m = $3 } END { print m }' "$work/out" >>"$work/ft"
		# rank 0's debug line: "MPI unification of N ranks: B bytes, U us"
		sed -n 's/.*MPI unification of [0-9]* ranks: \([0-9]*\) bytes, \([0-9]*\) us.*/\2 \1/p' "$work/err" >>"$work/fu"
	done
	u=$(cut -d' ' -f1 <"$work/fu" | median)
	b=$(cut -d' ' -f2 <"$work/fu" | median)
	echo "  MPI_Finalize ms, $np ranks: untraced $(median <"$work/fp"), traced $(median <"$work/ft") (max over ranks, median of 3); unification $u us ($b bytes of definitions)"
done
awk -v p="$plain" -v t="$traced" 'BEGIN { printf "mpi overhead us per call: %.3f\n", (t - p) / 2 }'
