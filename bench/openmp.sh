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
# spinning or yielding) on one CPU (the program pins itself), timed by the
# CPU time of the whole process: the work of all 4 members per region, robust
# against other load (1/10 of the regions: each one wakes the team through
# the kernel). Traced with TRACER_PTHREAD=off: a passive libomp sleeps and
# wakes its threads through pthread mutexes and condition variables, calls
# the pthread layer would record on every region (+~1 us) that the default
# wait policy does not make; the OpenMP records are the same.
# On a small shared machine 4 threads per region oversubscribe the cores and
# wall-clock region times are noise (runs of one variant vary 2-10x with the
# other load): they are shown, but the overhead per 4-thread region is the
# passive CPU one - all the work tracing adds to a region, summed over its 4
# threads, an upper bound of what it adds to the region's critical path when
# the members have cores (they record in parallel). Runs are interleaved;
# overheads are differences of medians (traced - untraced). The last line is
# the larger of the two compilers' overheads per 4-thread region.
#   OMP_BENCH_REGIONS (default 100000), OMP_BENCH_LOCKS (1000000), OMP_BENCH_REPS (7)
set -e
. "$(dirname "$0")/common.sh"
nreg=${OMP_BENCH_REGIONS:-100000}
nlock=${OMP_BENCH_LOCKS:-1000000}
reps=${OMP_BENCH_REPS:-7}
ncpu=$((nreg / 10))
lib=$build/lib/libtracer.so
bench_setup openmp lib/libtracer.so

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
		TRACER_PTHREAD=off traced "$bin" par "$ncpu" 4 cpu >>"$work/cpu_traced"
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
	echo "  4 threads, us per region untraced: median $(median <"$work/par_plain") (runs: $(bench_runs "$work/par_plain"))"
	echo "  4 threads, us per region traced:   median $(median <"$work/par_traced") (runs: $(bench_runs "$work/par_traced"); archive ${size} MB)"
	echo "  1 thread,  us per region untraced: median $(median <"$work/one_plain") (runs: $(bench_runs "$work/one_plain"))"
	echo "  1 thread,  us per region traced:   median $(median <"$work/one_traced") (runs: $(bench_runs "$work/one_traced"))"
	echo "  4 threads passive, CPU us per region (all threads) untraced: median $cp (runs: $(bench_runs "$work/cpu_plain"))"
	echo "  4 threads passive, CPU us per region (all threads) traced:   median $ct (runs: $(bench_runs "$work/cpu_traced"))"
	echo "  ns per lock pair untraced: median $(median <"$work/lock_plain")   traced: median $(median <"$work/lock_traced")"
	w=$(awk -v p="$pp" -v t="$pt" 'BEGIN { printf "%.2f", t - p }')
	o=$(awk -v p="$cp" -v t="$ct" 'BEGIN { printf "%.2f", t - p }')
	echo "  $cc overhead (medians): wall us per 4-thread region $w (noise here), per 1-thread region $(awk -v p="$op" -v t="$ot" 'BEGIN { printf "%.2f", t - p }'), CPU us per passive 4-thread region $o, ns per lock pair $(awk -v p="$lp" -v t="$lt" 'BEGIN { printf "%.1f", t - p }')"
	echo "openmp overhead us per parallel region ($cc): $o"
	worst=$(awk -v w="$worst" -v o="$o" 'BEGIN { print (w == "" || o > w) ? o : w }')
done
[ -n "$worst" ] || { echo "bench/openmp: no compiler" >&2; exit 1; }
echo "openmp overhead us per parallel region: $worst"
