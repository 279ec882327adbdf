#!/bin/sh
# bench/tree.sh - cost of tracing a whole process tree (run: scripts/bench tree).
#
# make -j2 of the small autoconf project of tests/real/autoconf (configured
# once, untraced): `make clean; make -j2` untraced and under tracer-run,
# alternated, REPS (5) times each; medians of the wall times. The archive
# count is one per process today (no unification step: its time is 0).
# Ends with "process tree overhead ratio: R" (traced / untraced wall time).
set -e
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}
reps=${TREE_BENCH_REPS:-5}
run=$build/bin/tracer-run
lib=$build/lib/libtracer.so
for f in "$run" "$lib"; do
	[ -e "$f" ] || { echo "bench/tree: $f missing (build first)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-tree.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp -r "$top/tests/real/autoconf" "$work/proj"
cd "$work/proj"
autoreconf -i >/dev/null 2>&1
./configure >/dev/null
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
: >"$work/plain"; : >"$work/traced"
i=0
while [ "$i" -lt "$reps" ]; do
	make clean >/dev/null
	t0=$(now); make -j2 >/dev/null; t1=$(now)
	awk "BEGIN { print $t1 - $t0 }" >>"$work/plain"
	make clean >/dev/null
	rm -rf "$work/trace"*
	t0=$(now); "$run" --lib "$lib" -q -o "$work/trace" -- make -j2 >/dev/null; t1=$(now)
	awk "BEGIN { print $t1 - $t0 }" >>"$work/traced"
	i=$((i + 1))
done
archives=$(ls -d "$work"/trace* | wc -l)
p=$(median <"$work/plain")
t=$(median <"$work/traced")
printf 'tree make -j2: untraced %.3f s, traced %.3f s (medians of %d), %d archives (one per process), unification 0 s (not done: one archive per process)\n' \
	"$p" "$t" "$reps" "$archives"
printf 'process tree overhead ratio: %.2f\n' "$(awk "BEGIN { print $t / $p }")"
