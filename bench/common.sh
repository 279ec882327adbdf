# bench/common.sh - scaffolding shared by the bench/*.sh scripts (sourced:
# `. "$(dirname "$0")/common.sh"`). Not run on its own.
#
#   bench_setup NAME FILE...  top/build from the environment scripts/bench
#                             sets, every FILE must exist (paths relative
#                             to the build directory), a work directory
#                             $work removed on exit.
#   median                    the median of the numbers on stdin
#   bench_pct PLAIN TRACED    "+D ns (+P %)" of TRACED over PLAIN
#   bench_runs FILE           the numbers in FILE on one line
#   callgrind_refs            valgrind's stderr on stdin: the instructions
#                             of the program's own process (the first pid
#                             reported; not the tracer's short-lived file
#                             children, which valgrind counts apart)
top=${TRACER_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TRACER_BUILD_DIR:-$top/build-bench}

bench_setup()
{
	bench_name=$1
	shift
	for f in "$@"; do
		[ -e "$build/$f" ] || { echo "bench/$bench_name: $build/$f missing (build first)" >&2; exit 1; }
	done
	work=$(mktemp -d "${TMPDIR:-/tmp}/tracer-bench-$bench_name.XXXXXX")
	trap 'rm -rf "$work" ${bench_cleanup:-}' EXIT INT TERM
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench_pct() { awk -v p="$1" -v t="$2" 'BEGIN { printf "%+.1f ns (%+.1f %%)", t - p, 100 * (t - p) / p }'; }

bench_runs() { tr '\n' ' ' <"$1"; }

callgrind_refs() { awk '/^==[0-9]+==/ && !pid { pid = $1 } $1 == pid && /refs:/ { sub(/.*refs: */, ""); gsub(/,/, ""); print }'; }
