#!/bin/sh
# bench/mpi-scale.sh - MPI tracing at scale (run: scripts/bench mpi-scale).
#
# bench_mpi_finalize (communicators from splits and dups, collectives on each,
# a Sendrecv ring) at 2, 4, 8, 16, 32 and 64 ranks (oversubscribed where the
# machine has fewer cores; MPI_SCALE_RANKS overrides the list), untraced and
# traced, MPI_SCALE_REPS runs each (default 1). Per rank count: MPI_Finalize
# time (slowest rank, ms; traced: clock offsets + unification), the
# unification time (rank 0's debug line, ms), the archive's events and the
# wall time of the whole mpirun. Ends with "unification ms at <max> ranks: X".
set -e
. "$(dirname "$0")/common.sh"
fin=$build/bench/bench_mpi_finalize
lib=$build/lib/libtracer.so
bench_setup mpi-scale bench/bench_mpi_finalize lib/libtracer.so
ranks=${MPI_SCALE_RANKS:-2 4 8 16 32 64}
reps=${MPI_SCALE_REPS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
wall() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
now() { date +%s.%N; }

echo "bench/mpi-scale: bench_mpi_finalize, $(nproc) cores, ranks: $ranks, $reps run(s) each"
echo "  ranks  finalize ms untraced  finalize ms traced  unification ms  events  wall s untraced  wall s traced"
last_u=0
last_np=0
for np in $ranks; do
	: >"$work/fp"; : >"$work/ft"; : >"$work/fu"; : >"$work/wp"; : >"$work/wt"; : >"$work/ev"
	k=0
	while [ "$k" -lt "$reps" ]; do
		a=$(now)
		mpirun -np "$np" --oversubscribe --bind-to none "$fin" | awk '{ if ($3 > m) m = $3 } END { print m }' >>"$work/fp"
		b=$(now)
		wall "$a" "$b" >>"$work/wp"; echo >>"$work/wp"
		rm -rf "$work/trace"
		a=$(now)
		mpirun -np "$np" --oversubscribe --bind-to none -x LD_PRELOAD="$lib" -x TRACER_OUTPUT="$work/trace" \
			-x TRACER_VERBOSE=2 "$fin" >"$work/out" 2>"$work/err" || true
		b=$(now)
		wall "$a" "$b" >>"$work/wt"; echo >>"$work/wt"
		awk '/^finalize/ { if ($3 > m) m = $3 } END { print m }' "$work/out" >>"$work/ft"
		# rank 0's debug line: "MPI unification of N ranks: B bytes, U us"
		sed -n 's/.*MPI unification of [0-9]* ranks: [0-9]* bytes, \([0-9]*\) us.*/\1/p' "$work/err" |
			awk '{ printf "%.3f\n", $1 / 1000 }' >>"$work/fu"
		sed -n 's/.*traces.otf2: [0-9]* MPI ranks, [0-9]* locations, \([0-9]*\) events.*/\1/p' "$work/err" >>"$work/ev"
		k=$((k + 1))
	done
	u=$(median <"$work/fu")
	printf "  %5s  %20s  %18s  %14s  %6s  %15s  %13s\n" "$np" "$(median <"$work/fp")" "$(median <"$work/ft")" \
		"$u" "$(median <"$work/ev")" "$(sed '/^$/d' "$work/wp" | median)" "$(sed '/^$/d' "$work/wt" | median)"
	last_u=$u
	last_np=$np
done
echo "unification ms at $last_np ranks: $last_u"
