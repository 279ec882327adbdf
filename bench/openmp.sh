#!/bin/sh
# bench/openmp.sh - cost of OpenMP tracing (run: scripts/bench openmp).
#
# For each compiler (clang -fopenmp: libomp traced through OMPT; gcc
# -fopenmp: libgomp traced through its GOMP_* entry points), untraced and
# traced runs interleaved, REPS each, medians:
#   - 10^5 empty parallel regions of 4 threads: wall-clock us per region
#     (a traced region of 4 threads writes ThreadFork, ThreadJoin and per
#     thread ThreadTeamBegin/End, Enter/Leave "omp parallel" and the
#     implicit barrier);
#   - 10^6 omp_set_lock/omp_unset_lock pairs in one thread: ns per pair
#     (thread CPU time).
# The same with 1-thread regions, timed by the thread's CPU time (robust
# against other load): the records of one team member (fork, team begin/end,
# regions, join), i.e. the tracing cost on the critical path of a region.
# And 4-thread regions with OMP_WAIT_POLICY=passive (threads sleep instead of
# spinning or yielding), timed by the CPU time of the whole process: the
# work of all 4 members per region, robust against other load (1/10 of the
# regions: each one wakes the team through the kernel).
# On a small shared machine 4 threads per region oversubscribe the cores and
# region times are noisy: runs are interleaved and the overheads are the
# differences of the medians (traced - untraced; more runs, steadier
# medians: OMP_BENCH_REPS). The last line is the larger of the two
# compilers' overheads per 4-thread region.
#   OMP_BENCH_REGIONS (default 100000), OMP_BENCH_LOCKS (1000000), OMP_BENCH_REPS (7)
set -e
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}
nreg=${OMP_BENCH_REGIONS:-100000}
nlock=${OMP_BENCH_LOCKS:-1000000}
reps=${OMP_BENCH_REPS:-7}
ncpu=$((nreg / 10))
lib=$build/lib/libtracer.so
[ -e "$lib" ] || { echo "bench/openmp: $lib missing (build first)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-openmp.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
traced() {
	rm -rf "$work/trace"
	TRACER_OUTPUT="$work/trace" TRACER_VERBOSE=0 LD_PRELOAD="$lib" "$@"
}

worst=""
for cc in clang gcc; do
	bin=$build/bench/bench_openmp_$cc
	[ -x "$bin" ] || { echo "bench/openmp: $bin missing, $cc skipped" >&2; continue; }
	for f in par_plain par_traced one_plain one_traced cpu_plain cpu_traced lock_plain lock_traced; do : >"$work/$f"; done
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$bin" par "$nreg" >>"$work/par_plain"
		traced "$bin" par "$nreg" >>"$work/par_traced"
		size=$(du -sm "$work/trace" | cut -f1)
		"$bin" par "$nreg" 1 >>"$work/one_plain"
		traced "$bin" par "$nreg" 1 >>"$work/one_traced"
		export OMP_WAIT_POLICY=passive
		"$bin" par "$ncpu" 4 cpu >>"$work/cpu_plain"
		traced "$bin" par "$ncpu" 4 cpu >>"$work/cpu_traced"
		unset OMP_WAIT_POLICY
		"$bin" lock "$nlock" >>"$work/lock_plain"
		traced "$bin" lock "$nlock" >>"$work/lock_traced"
		i=$((i + 1))
	done
	pp=$(median <"$work/par_plain"); pt=$(median <"$work/par_traced")
	op=$(median <"$work/one_plain"); ot=$(median <"$work/one_traced")
	lp=$(median <"$work/lock_plain"); lt=$(median <"$work/lock_traced")
	cp=$(median <"$work/cpu_plain"); ct=$(median <"$work/cpu_traced")
	echo "bench/openmp $cc: $nreg empty parallel regions, $nlock omp lock pairs, $reps runs each"
	echo "  4 threads, us per region untraced: median $(median <"$work/par_plain") (runs: $(tr '\n' ' ' <"$work/par_plain"))"
	echo "  4 threads, us per region traced:   median $(median <"$work/par_traced") (runs: $(tr '\n' ' ' <"$work/par_traced"); archive ${size} MB)"
	echo "  1 thread,  us per region untraced: median $(median <"$work/one_plain") (runs: $(tr '\n' ' ' <"$work/one_plain"))"
	echo "  1 thread,  us per region traced:   median $(median <"$work/one_traced") (runs: $(tr '\n' ' ' <"$work/one_traced"))"
	echo "  4 threads passive, CPU us per region (all threads) untraced: median $cp   traced: median $ct (runs: $(tr '\n' ' ' <"$work/cpu_traced"))"
	echo "  ns per lock pair untraced: median $(median <"$work/lock_plain")   traced: median $(median <"$work/lock_traced")"
	o=$(awk -v p="$pp" -v t="$pt" 'BEGIN { printf "%.2f", t - p }')
	echo "  $cc overhead (medians): us per 4-thread region $o, per 1-thread region $(awk -v p="$op" -v t="$ot" 'BEGIN { printf "%.2f", t - p }'), CPU us per passive 4-thread region $(awk -v p="$cp" -v t="$ct" 'BEGIN { printf "%.2f", t - p }'), ns per lock pair $(awk -v p="$lp" -v t="$lt" 'BEGIN { printf "%.1f", t - p }')"
	worst=$(awk -v w="$worst" -v o="$o" 'BEGIN { print (w == "" || o > w) ? o : w }')
done
[ -n "$worst" ] || { echo "bench/openmp: no compiler" >&2; exit 1; }
echo "openmp overhead us per parallel region: $worst"
