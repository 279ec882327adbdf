#!/bin/sh
# bench/sampling.sh - cost of statistical sampling and of PAPI metrics
# (run as: scripts/bench sampling).
#
# 1. sampling_cpu: CPU-bound work at stack depth 20 and 100, each case the
#    best (least CPU) of SMP_BENCH_REPS runs (default 3) of the same work:
#      untraced   no tracer, no signal
#      floor      an empty SIGPROF handler on the same delivery the sampler
#                 uses (per-thread perf_event task-clock, signal to the thread)
#      sampler    libtracer.so with TRACER_SAMPLING
#    at 1 kHz and 10 kHz requested. Per case: samples/s asked and samples
#    actually taken per CPU second, CPU overhead against untraced, cost per
#    sample (extra CPU / samples) and, for the sampler, its cost above the
#    floor, plus the median time the handler itself measured per sample
#    (unwind + tree + record: the part an empty handler does not do; median
#    of the runs' medians). CPU time on a shared VM varies by a few percent
#    from run to run: the difference columns are indicative only, the
#    handler time is the measure.
# 2. numpy's matrix product on OpenBLAS with TRACER_SAMPLING=1ms (below).
# 3. sampling_metric: one Metric record with two PAPI counters per region
#    enter/leave (TRACER_METRICS=perf::TASK-CLOCK,perf::PAGE-FAULTS) against
#    the same regions without metrics, and PAPI_read of the same two events
#    alone.
set -e
. "$(dirname "$0")/common.sh"
LIB=$build/lib/libtracer.so
CPU=$build/bench/sampling_cpu
MET=$build/bench/sampling_metric
CHUNKS=${SMP_BENCH_CHUNKS:-30000}
REPS=${SMP_BENCH_REPS:-3}
bench_setup sampling lib/libtracer.so bench/sampling_cpu bench/sampling_metric

# run_case NAME DEPTH [floor NS | traced HZ] -> "cpu signals samples handler_us"
run_case() {
	name=$1 depth=$2 mode=$3 arg=$4
	best=""
	huss=""
	i=0
	while [ $i -lt "$REPS" ]; do
		i=$((i + 1))
		case $mode in
		floor) out=$("$CPU" "$depth" "$CHUNKS" floor "$arg" 2>"$work/err") ;;
		traced) rm -rf "$work/tr"
			out=$(env LD_PRELOAD="$LIB" TRACER_OUTPUT="$work/tr" TRACER_VERBOSE=1 \
			      TRACER_SAMPLING="$arg" "$CPU" "$depth" "$CHUNKS" 2>"$work/err") ;;
		*) out=$("$CPU" "$depth" "$CHUNKS" 2>"$work/err") ;;
		esac
		cpu=$(echo "$out" | sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p')
		sig=$(echo "$out" | sed -n 's/.*signals=\([0-9]*\).*/\1/p')
		smp=$(sed -n 's/.*tracer: sampling: \([0-9]*\) samples.*/\1/p' "$work/err")
		hus=$(sed -n 's/.*median \([0-9.]*\) us per sample in the handler.*/\1/p' "$work/err")
		[ -n "$smp" ] || smp=$sig
		[ -n "$hus" ] || hus=0
		if [ -z "$best" ] || awk "BEGIN{exit !($cpu < $(echo "$best" | cut -d' ' -f1))}"; then
			best="$cpu $sig $smp"
		fi
		huss="$huss $hus"
	done
	# handler time: the median of the runs' medians
	hmed=$(echo $huss | tr ' ' '\n' | median)
	echo "$best $hmed"
}

printf '%-5s %-6s %-9s %8s %10s %9s %10s %11s %12s %11s\n' depth rate case asked/s samples/s cpu_s overhead% us/sample above-floor handler_us
for depth in 20 100; do
	set -- $(run_case untraced "$depth")
	base=$1
	printf '%-5s %-6s %-9s %8s %10s %9.3f %10s %11s %12s %11s\n' "$depth" - untraced 0 0 "$base" - - - -
	for hz in 1000 10000; do
		ns=$((1000000000 / hz))
		set -- $(run_case floor "$depth" floor "$ns")
		fcpu=$1 fn=$3
		fcost=$(awk "BEGIN{print ($fn > 0) ? ($fcpu - $base) / $fn * 1e6 : 0}")
		awk "BEGIN{printf \"%-5s %-6s %-9s %8d %10.0f %9.3f %10.2f %11.2f %12s %11s\n\", $depth, \"${hz}Hz\", \"floor\", $hz, $fn / $fcpu, $fcpu, ($fcpu - $base) / $base * 100, $fcost, \"-\", \"-\"}"
		set -- $(run_case sampler "$depth" traced "${hz}Hz")
		scpu=$1 sn=$3 hus=$4
		scost=$(awk "BEGIN{print ($sn > 0) ? ($scpu - $base) / $sn * 1e6 : 0}")
		awk "BEGIN{printf \"%-5s %-6s %-9s %8d %10.0f %9.3f %10.2f %11.2f %12.2f %11.2f\n\", $depth, \"${hz}Hz\", \"sampler\", $hz, $sn / $scpu, $scpu, ($scpu - $base) / $base * 100, $scost, $scost - $fcost, $hus}"
		if [ "$depth" = 20 ] && [ "$hz" = 1000 ]; then
			x20=$hus
			d20=$(awk "BEGIN{printf \"%.2f\", $scost - $fcost}")
		fi
	done
done

uw=$("$CPU" 20 "$CHUNKS" unwind 1000000 | sed -n 's/.*unwind_us=\([0-9.]*\).*/\1/p')
echo "reference: unw_backtrace alone in a SIGPROF handler (depth 20, same machine now): median $uw us"

# 2. A real library: numpy's matrix product on OpenBLAS (OpenMP, 2
#    threads, N=1500, 5 products), untraced and with TRACER_SAMPLING=1ms,
#    and with TRACER_DURABLE=off too, SMP_BENCH_REPS runs each, alternated;
#    medians of the product's wall time, of the whole process's CPU (user +
#    system of every thread: the handler, the calling-context trees and the
#    symbols resolved at the end) and of the handler's own times. Skipped
#    without python3-numpy.
PY=/usr/bin/python3
if [ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null; then
	cat >"$work/mm.py" <<'PYEOF'
import time
import numpy as np
a = np.random.default_rng(1).random((1500, 1500))
t = time.perf_counter()
for _ in range(5):
    b = a @ a
print("wall=%.4f" % (time.perf_counter() - t))
PYEOF
	: >"$work/np.plain"; : >"$work/np.traced"; : >"$work/np.off"
	i=0
	while [ $i -lt "$REPS" ]; do
		i=$((i + 1))
		OMP_NUM_THREADS=2 /usr/bin/time -f "cpu=%U %S" "$PY" "$work/mm.py" >"$work/np.out" 2>"$work/np.err"
		echo "$(sed -n 's/wall=//p' "$work/np.out") $(sed -n 's/cpu=//p' "$work/np.err" | awk '{print $1 + $2}')" >>"$work/np.plain"
		rm -rf "$work/np"
		OMP_NUM_THREADS=2 /usr/bin/time -f "cpu=%U %S" env LD_PRELOAD="$LIB" TRACER_OUTPUT="$work/np" \
			TRACER_VERBOSE=2 TRACER_SAMPLING=1ms "$PY" "$work/mm.py" >"$work/np.out" 2>"$work/np.err"
		echo "$(sed -n 's/wall=//p' "$work/np.out") $(sed -n 's/cpu=//p' "$work/np.err" | awk '{print $1 + $2}')" \
		     "$(sed -n 's/.*tracer: sampling: \([0-9]*\) samples.*/\1/p' "$work/np.err")" \
		     "$(sed -n 's/.*median \([0-9.]*\) us per sample in the handler.*/\1/p' "$work/np.err")" \
		     "$(sed -n 's/.*per sample in the handler: .* mean \([0-9]*\) ns, mean in the stack walk.*/\1/p' "$work/np.err")" >>"$work/np.traced"
		rm -rf "$work/np"
		OMP_NUM_THREADS=2 /usr/bin/time -f "cpu=%U %S" env LD_PRELOAD="$LIB" TRACER_OUTPUT="$work/np" \
			TRACER_DURABLE=off TRACER_SAMPLING=1ms "$PY" "$work/mm.py" >"$work/np.out" 2>"$work/np.err"
		echo "$(sed -n 's/wall=//p' "$work/np.out") $(sed -n 's/cpu=//p' "$work/np.err" | awk '{print $1 + $2}')" >>"$work/np.off"
	done
	col() { cut -d' ' -f"$1" "$2" | median; }
	pw=$(col 1 "$work/np.plain") pc=$(col 2 "$work/np.plain")
	tw=$(col 1 "$work/np.traced") tc=$(col 2 "$work/np.traced") tn=$(col 3 "$work/np.traced")
	hm=$(col 4 "$work/np.traced") hmean=$(col 5 "$work/np.traced")
	echo "numpy a @ a (OpenBLAS-OpenMP, 2 threads, N=1500, x5), medians of $REPS: untraced ${pw} s wall, ${pc} s CPU;" \
	     "TRACER_SAMPLING=1ms ${tw} s wall, ${tc} s CPU, $tn samples"
	ow=$(col 1 "$work/np.off") oc=$(col 2 "$work/np.off")
	awk "BEGIN{printf \"numpy sampling: wall ratio %.2f, whole-process CPU ratio %.2f, %.1f us of CPU per sample; handler median %s us, mean %.1f us\n\", $tw / $pw, $tc / $pc, ($tn > 0) ? ($tc - $pc) / $tn * 1e6 : 0, \"$hm\", $hmean / 1000}"
	awk "BEGIN{printf \"numpy sampling with TRACER_DURABLE=off: wall ratio %.2f, whole-process CPU ratio %.2f (the difference: the durable ticks in the handlers of the 2 threads, the first defining every calling context made so far, later ones only the new ones)\n\", $ow / $pw, $oc / $pc}"
else
	echo "numpy sampling: skipped (no python3-numpy)"
fi

echo
N=${SMP_BENCH_REGIONS:-200000}
EV=perf::TASK-CLOCK,perf::PAGE-FAULTS
rm -rf "$work/m0" "$work/m1"
r0=$(env LD_PRELOAD="$LIB" TRACER_OUTPUT="$work/m0" "$MET" regions "$N" 2>/dev/null | sed -n 's/ns_per_iter=//p')
r1=$(env LD_PRELOAD="$LIB" TRACER_OUTPUT="$work/m1" TRACER_METRICS=$EV "$MET" regions "$N" 2>"$work/merr" |
     sed -n 's/ns_per_iter=//p')
pr=$("$MET" papi "$N" "$EV" 2>/dev/null | sed -n 's/ns_per_iter=//p' || true)
if grep -q "rejected" "$work/merr"; then
	echo "metrics: $(grep rejected "$work/merr")"
fi
echo "region enter+leave without metrics: $r0 ns, with $EV: $r1 ns"
awk "BEGIN{printf \"metric record with 2 PAPI counters: %.0f ns per region enter or leave (PAPI_read alone: %s ns, record above it: %.0f ns)\n\", ($r1 - $r0) / 2, \"$pr\", ($r1 - $r0) / 2 - (\"$pr\" + 0)}"
echo "sampling cost above floor us per sample: $x20"
echo "(depth 20, 1 kHz: handler median; CPU-time difference sampler - floor: $d20 us)"
