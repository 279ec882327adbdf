#!/bin/sh
# bench/report.sh - reading an archive: our reader (format/otf2r) against the
# reference readers (run: scripts/bench report).
#
# REPORT_EVENTS events (default 10^7: Enter/Leave on 2 locations, written by
# bench/writer_ours) read in global time order by
#   ours        report_bench_ours: otf2r merge of all locations (heap)
#   libotf2     report_bench_ref: libotf2 3.0.2 global event reader, C callbacks
#   python3-otf2  otf2.reader events loop, first REPORT_PY_EVENTS events
#               (default 10^6; the rate is extrapolated, a full read takes minutes)
#   otf2-print  the whole archive printed to /dev/null
# and `tracer report` on the same archive (wall time, peak RSS). REPORT_REPS
# runs (default 3) of ours and libotf2, interleaved, medians reported.
# REPORT_BIG_EVENTS=N (e.g. 100000000): also `tracer report` on an N-event
# archive (wall time, peak RSS: memory must not grow with N).
set -e
. "$(dirname "$0")/common.sh"
events=${REPORT_EVENTS:-10000000}
pyevents=${REPORT_PY_EVENTS:-1000000}
reps=${REPORT_REPS:-3}
ours=$build/bench/report_bench_ours
ref=$build/bench/report_bench_ref
writer=$build/bench/writer_ours
tracer=$build/bin/tracer
bench_setup report bench/report_bench_ours bench/writer_ours bin/tracer
# "events/s (wall) events/s (CPU: user+sys)"
rate() { awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "%.0f %.0f\n", v["events"] / v["seconds"], v["events"] / (v["cpu"] > 0 ? v["cpu"] : 1e-9) }'; }

"$writer" "$work/a" $((events / 4)) 2 >/dev/null
anchor=$work/a/traces.otf2
echo "bench/report: $events events on 2 locations ($(du -sh "$work/a" | cut -f1)), $reps runs, medians"
i=0
while [ "$i" -lt "$reps" ]; do
	"$ours" "$anchor" | rate >>"$work/ours"
	[ -x "$ref" ] && "$ref" "$anchor" 2>/dev/null | rate >>"$work/ref"
	i=$((i + 1))
done
eps_ours=$(cut -d' ' -f1 <"$work/ours" | median)
cpu_ours=$(cut -d' ' -f2 <"$work/ours" | median)
printf '  %-34s %14.0f events/s   %14.0f events/CPU-s   wall runs: %s\n' "ours (otf2r, merged)" "$eps_ours" "$cpu_ours" "$(cut -d' ' -f1 <"$work/ours" | tr '\n' ' ')"
if [ -s "$work/ref" ]; then
	eps_ref=$(cut -d' ' -f1 <"$work/ref" | median)
	cpu_ref=$(cut -d' ' -f2 <"$work/ref" | median)
	printf '  %-34s %14.0f events/s   %14.0f events/CPU-s   wall runs: %s\n' "libotf2 global reader (C)" "$eps_ref" "$cpu_ref" "$(cut -d' ' -f1 <"$work/ref" | tr '\n' ' ')"
fi
/usr/bin/python3 - "$anchor" "$pyevents" <<'PY' >"$work/py" || true
import sys, time, otf2
n = int(sys.argv[2])
t0 = time.monotonic()
k = 0
with otf2.reader.open(sys.argv[1]) as tr:
    for loc, ev in tr.events:
        k += 1
        if k >= n:
            break
print('%.0f' % (k / (time.monotonic() - t0)))
PY
[ -s "$work/py" ] && printf '  %-34s %14.0f events/s   (first %s events)\n' "python3-otf2 (otf2.reader)" "$(cat "$work/py")" "$pyevents"
if command -v otf2-print >/dev/null; then
	t0=$(date +%s.%N)
	otf2-print "$anchor" >/dev/null 2>&1
	t1=$(date +%s.%N)
	printf '  %-34s %14.0f events/s\n' "otf2-print > /dev/null" "$(echo "$events $t0 $t1" | awk '{ print $1 / ($3 - $2) }')"
fi
/usr/bin/time -f '%e %M' -o "$work/time" "$tracer" report "$anchor" >/dev/null
read -r wall rss <"$work/time"
printf '  %-34s %14.0f events/s   wall %s s, peak RSS %s KiB\n' "tracer report (all tables)" "$(echo "$events $wall" | awk '{ print $1 / $2 }')" "$wall" "$rss"
[ -n "${eps_ref:-}" ] && awk -v o="$eps_ours" -v r="$eps_ref" -v co="$cpu_ours" -v cr="$cpu_ref" \
	'BEGIN { printf "  ours / libotf2: %.2f (wall), %.2f (CPU time)\n", o / r, co / cr }'
if [ "${REPORT_BIG_EVENTS:-0}" -gt 0 ]; then
	rm -rf "$work/a"
	"$writer" "$work/big" $((REPORT_BIG_EVENTS / 4)) 2 >/dev/null
	/usr/bin/time -f '%e %M' -o "$work/time" "$tracer" report "$work/big/traces.otf2" >/dev/null
	read -r wall rss <"$work/time"
	printf '  %-34s %14.0f events/s   wall %s s, peak RSS %s KiB (%s events, %s)\n' "tracer report, big archive" \
		"$(echo "$REPORT_BIG_EVENTS $wall" | awk '{ print $1 / $2 }')" "$wall" "$rss" "$REPORT_BIG_EVENTS" "$(du -sh "$work/big" | cut -f1)"
	rm -rf "$work/big"
fi
[ -n "${eps_ref:-}" ] && awk -v o="$eps_ours" -v r="$eps_ref" 'BEGIN { printf "reader speedup vs reference: %.2f\n", o / r }'
echo "report events per second: $eps_ours"
