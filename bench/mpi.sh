#!/bin/sh
# bench/mpi.sh - MPI tracing cost (run: scripts/bench mpi), for each MPI built:
# Open MPI (bench_mpi_*, its mpirun) and MPICH (bench_mpich_*, Hydra's
# mpirun.mpich), one libtracer.so for both.
#
# 1. 8-byte ping-pong (MPI_Send/MPI_Recv) between two ranks bound to the two
#    cores, untraced and traced alternately, MPI_BENCH_REPS invocations each
#    (default 9) of MPI_BENCH_N round trips (default 100000); the median
#    one-way latency of each variant is used. A one-way trip crosses two
#    wrapped calls (the sender's MPI_Send, the receiver's MPI_Recv), so
#        overhead per call = (traced - untraced one-way latency) / 2.
#    Self check: one rank Irecv+Send+Wait to itself (MPI_COMM_SELF), the
#    difference per triple / 3; insensitive to a partner being descheduled,
#    so the "overhead us per call" line (the ping-pong figure follows it);
#    with valgrind, the instructions the tracer adds per call (callgrind, a
#    singleton sending to itself, 2m minus m triples: load-independent).
# 2. MPI_Finalize time (clock offsets + unification of the definitions) for
#    2, 4 and 8 ranks (Open MPI, oversubscribed on small machines; MPICH: 2
#    and 4, its ranks busy-poll), untraced and traced.
# Ends with one line per MPI: "<mpi> overhead us per call: X (2-rank
# ping-pong: Y)" (mpi = Open MPI, mpich = MPICH).
set -e
. "$(dirname "$0")/common.sh"
n=${MPI_BENCH_N:-100000}
reps=${MPI_BENCH_REPS:-9}
lib=$build/lib/libtracer.so
bench_setup mpi lib/libtracer.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncpu=$(nproc)

# launch NP BIND|FREE TRACED|PLAIN TRACE_DIR VERBOSE PROG [ARGS]: the MPI's launcher ($mpi)
launch() {
	l_np=$1 l_how=$2 l_traced=$3 l_dir=$4 l_verbose=$5
	shift 5
	if [ "$mpi" = mpich ]; then
		set -- -n "$l_np" "$@"
		[ "$l_how" = bind ] && [ "$ncpu" -ge 2 ] && set -- -bind-to core "$@"
		[ "$l_traced" = traced ] && set -- -genv LD_PRELOAD "$lib" -genv TRACER_OUTPUT "$l_dir" -genv TRACER_VERBOSE "$l_verbose" "$@"
		mpirun.mpich "$@"
	else
		set -- -np "$l_np" "$@"
		if [ "$l_how" = bind ] && [ "$ncpu" -ge 2 ]; then
			set -- --bind-to core --map-by core "$@"
		else
			set -- --oversubscribe --bind-to none "$@"
		fi
		[ "$l_traced" = traced ] && set -- -x LD_PRELOAD="$lib" -x TRACER_OUTPUT="$l_dir" -x TRACER_VERBOSE="$l_verbose" "$@"
		mpirun "$@"
	fi
}

# alternate NP PLAIN_FILE TRACED_FILE: $reps untraced and traced ping-pong
# runs of $pp, alternating, one result line each; size: the last archive's MB
alternate() {
	: >"$work/$2"; : >"$work/$3"
	i=0
	while [ "$i" -lt "$reps" ]; do
		launch "$1" bind plain - 0 "$pp" "$n" >>"$work/$2"
		rm -rf "$work/trace"
		launch "$1" bind traced "$work/trace" 0 "$pp" "$n" >>"$work/$3"
		size=$(du -sm "$work/trace" | cut -f1)
		i=$((i + 1))
	done
}

bench_one() {
	mpi=$1 what=$2 fin_ranks=$3
	pp=$build/bench/bench_${mpi}_pingpong
	fin=$build/bench/bench_${mpi}_finalize
	if [ ! -e "$pp" ] || [ ! -e "$fin" ]; then
		echo "bench/mpi: $what: $pp missing (not built for this MPI), skipped"
		return
	fi
	alternate 2 plain traced
	plain=$(median <"$work/plain")
	traced=$(median <"$work/traced")
	echo "bench/mpi: $what: 8-byte ping-pong, 2 ranks, $n round trips, $reps runs each"
	echo "  untraced one-way latency us: $plain   (runs: $(bench_runs "$work/plain"))"
	echo "  traced one-way latency us:   $traced   (runs: $(bench_runs "$work/traced"); archive ${size} MB)"

	self_check
	finalize_times
	awk -v p="$plain" -v t="$traced" -v m="$mpi" -v s="$self" 'BEGIN {
		printf "%s overhead us per call: %.3f   (2-rank ping-pong: %.3f)\n", m, s, (t - p) / 2 }' >>"$work/summary"
}

self_check() {
	alternate 1 splain straced
	splain=$(median <"$work/splain")
	straced=$(median <"$work/straced")
	self=$(awk -v p="$splain" -v t="$straced" 'BEGIN { printf "%.3f", (t - p) / 3 }')
	echo "  one rank sending to itself (no partner to be descheduled), us per Irecv+Send+Wait:"
	echo "    untraced $splain, traced $straced -> $self us per call"
	# instructions per call: callgrind's count of a singleton (no
	# launcher) sending to itself, m and 2m triples, traced and untraced;
	# the differences cancel start-up and shut-down
	if command -v valgrind >/dev/null 2>&1; then
		m=20000
		ir() {
			rm -rf "$work/irtrace"
			env ${2:+LD_PRELOAD="$lib"} TRACER_OUTPUT="$work/irtrace" TRACER_VERBOSE=0 \
				valgrind --tool=callgrind --callgrind-out-file=/dev/null "$pp" "$1" 2>&1 >/dev/null | callgrind_refs
		}
		t1=$(ir $m 1); t2=$(ir $((2 * m)) 1); u1=$(ir $m); u2=$(ir $((2 * m)))
		if [ -n "$t1" ] && [ -n "$t2" ] && [ -n "$u1" ] && [ -n "$u2" ]; then
			echo "    instructions per call (callgrind, a singleton sending to itself): untraced" \
			     "$(((u2 - u1) / m / 3)), traced $(((t2 - t1) / m / 3)): +$(((t2 - t1 - u2 + u1) / m / 3)) added by the tracer"
		fi
	fi
}

finalize_times() {

	for np in $fin_ranks; do
		: >"$work/fp"; : >"$work/ft"; : >"$work/fu"
		for k in 1 2 3; do
			launch "$np" free plain - 0 "$fin" | awk '{ if ($3 > m) m = $3 } END { print m }' >>"$work/fp"
			rm -rf "$work/ftrace"
			launch "$np" free traced "$work/ftrace" 2 "$fin" >"$work/out" 2>"$work/err" || true
			awk '/^finalize/ { if ($3 > m) m = $3 } END { print m }' "$work/out" >>"$work/ft"
			# rank 0's debug line: "MPI unification of N ranks: B bytes, U us"
			sed -n 's/.*MPI unification of [0-9]* ranks: \([0-9]*\) bytes, \([0-9]*\) us.*/\2 \1/p' "$work/err" >>"$work/fu"
		done
		u=$(cut -d' ' -f1 <"$work/fu" | median)
		b=$(cut -d' ' -f2 <"$work/fu" | median)
		echo "  MPI_Finalize ms, $np ranks: untraced $(median <"$work/fp"), traced $(median <"$work/ft") (max over ranks, median of 3); unification $u us ($b bytes of definitions)"
	done
}

: >"$work/summary"
bench_one mpi "Open MPI" "2 4 8"
bench_one mpich "MPICH" "2 4"
cat "$work/summary"
