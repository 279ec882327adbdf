#!/bin/sh
# bench/writer.sh - our OTF2 writer vs the reference libotf2 writer
# (run: scripts/bench writer).
#
# WRITER_PAIRS Enter/Leave pairs (default 10^7) on one location, then on 2
# threads (one location each, WRITER_PAIRS pairs per thread). Same work for
# both writers (bench/writer_bench.c): timestamps from a counter, 1 MiB event
# chunks, 128 MiB of chunks per location (libotf2's default), flush
# callbacks that always flush to disk, files in ${TMPDIR:-/tmp}, time from
# archive open to archive close (files written and closed). `sync` before
# every run (not timed) so no run pays for the previous one's dirty pages.
# WRITER_REPS runs (default 7) per writer and configuration, ours and the
# reference interleaved (run i of ours right before run i of the reference);
# medians are reported, and the speedup is the median of the ratios of those
# interleaved pairs, which cancels slow drifts of the machine's load:
#   events/s      wall clock, open..close
#   bytes/event   size of the .evt files / events
#   user ns/ev    user CPU ns per event (the writer's own encoding cost)
#   sys ns/ev     system CPU ns per event (page faults, copies to the page cache)
set -e
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}
pairs=${WRITER_PAIRS:-10000000}
reps=${WRITER_REPS:-7}
ours=$build/bench/writer_ours
ref=$build/bench/writer_ref
[ -x "$ours" ] || { echo "bench/writer: $ours missing (build first)" >&2; exit 1; }
have_ref=1
[ -x "$ref" ] || { have_ref=0; echo "bench/writer: no reference writer (libotf2-trace-dev missing)"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-writer.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run WRITER THREADS: appends "events/s bytes/event user-ns sys-ns" to $work/WRITER.THREADS
run() {
	rm -rf "$work/a"
	sync
	line=$("$1" "$work/a" "$pairs" "$2")
	rm -rf "$work/a"
	echo "$line" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%.0f %.4f %.2f %.2f\n", v["events"] / v["seconds"], v["bytes"] / v["events"],
		       v["user"] * 1e9 / v["events"], v["sys"] * 1e9 / v["events"] }' >>"$work/$(basename "$1").$2"
}

for threads in 1 2; do
	i=0
	while [ "$i" -lt "$reps" ]; do
		run "$ours" "$threads"
		[ "$have_ref" = 1 ] && run "$ref" "$threads"
		i=$((i + 1))
	done
done

echo "bench/writer: $pairs Enter/Leave pairs per location, $reps runs each, medians"
printf '  %-22s %12s %12s %11s %11s   %s\n' "writer" "events/s" "bytes/event" "user ns/ev" "sys ns/ev" "runs (M events/s)"
for threads in 1 2; do
	for w in ours ref; do
		f=$work/writer_$w.$threads
		[ -s "$f" ] || continue
		eps=$(cut -d' ' -f1 <"$f" | median)
		bpe=$(cut -d' ' -f2 <"$f" | median)
		usr=$(cut -d' ' -f3 <"$f" | median)
		sys=$(cut -d' ' -f4 <"$f" | median)
		runs=$(awk '{ printf "%.1f ", $1 / 1e6 }' <"$f")
		[ "$w" = ours ] && name="ours" || name="reference"
		printf '  %-22s %12.0f %12.4f %11.2f %11.2f   %s\n' "$name, $threads thread(s)" "$eps" "$bpe" "$usr" "$sys" "$runs"
		eval "eps_${w}_$threads=$eps; bpe_${w}_$threads=$bpe; usr_${w}_$threads=$usr"
	done
done
if [ "$have_ref" = 1 ]; then
	awk -v o="$eps_ours_2" -v r="$eps_ref_2" 'BEGIN { printf "  2 threads: ours/reference events/s = %.2f\n", o / r }'
	awk -v o="$usr_ours_1" -v r="$usr_ref_1" -v o2="$usr_ours_2" -v r2="$usr_ref_2" \
		'BEGIN { printf "  user CPU per event, reference/ours: %.2f (1 thread), %.2f (2 threads)\n", r / o, r2 / o2 }'
	awk -v o="$bpe_ours_1" -v r="$bpe_ref_1" 'BEGIN { printf "  bytes per event: ours %.4f, reference %.4f\n", o, r }'
	awk -v o="$eps_ours_1" -v r="$eps_ref_1" 'BEGIN { printf "  ratio of the medians (1 thread): %.2f\n", o / r }'
	paste -d' ' "$work/writer_ours.1" "$work/writer_ref.1" | awk '{ print $1 / $5 }' >"$work/ratios.1"
	echo "  per-pair ratios (1 thread): $(sort -g "$work/ratios.1" | awk '{ printf "%.2f ", $1 }')"
	# instructions per event (callgrind, 1 thread, 2m minus m pairs: load-independent)
	if command -v valgrind >/dev/null 2>&1; then
		m=200000
		ir() {
			rm -rf "$work/a"
			valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$work/a" "$2" 1 2>&1 >/dev/null |
				awk '/^==[0-9]+==/ && !pid { pid = $1 } $1 == pid && /refs:/ { sub(/.*refs: */, ""); gsub(/,/, ""); print }'
		}
		o=$(( ($(ir "$ours" $((2 * m))) - $(ir "$ours" $m)) / (2 * m) ))
		r=$(( ($(ir "$ref" $((2 * m))) - $(ir "$ref" $m)) / (2 * m) ))
		rm -rf "$work/a"
		echo "  instructions per event (callgrind, 1 thread): ours $o, reference $r"
	fi
	printf 'writer speedup vs reference: %.2f\n' "$(median <"$work/ratios.1")"
fi
