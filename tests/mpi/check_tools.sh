#!/bin/sh
# tracer-merge and tracer-mpirun from the build tree, from an installed
# prefix (cmake --install into OUTDIR.prefix) and tracer-mpirun from the
# source tree: --help answers, tracer-mpirun traces a 2-rank run.
# usage: check_tools.sh BUILD_BIN SRC_TOOLS PROG OUTDIR
set -u
bin=$1 src=$2 prog=$3 out=$4
rc=0
pfx=$out.prefix
rm -rf "$pfx"
if ! cmake --install "$bin/.." --prefix "$pfx" >/dev/null; then
	echo "FAIL: cmake --install --prefix $pfx"; rc=1
fi
for t in "$bin/tracer-merge" "$bin/tracer-mpirun" "$src/tracer-mpirun" "$pfx/bin/tracer-merge" \
	 "$pfx/bin/tracer-mpirun"; do
	h=$("$t" --help 2>&1); s=$?
	if [ $s != 0 ] || ! echo "$h" | grep -q '^usage: '; then
		echo "FAIL: $t --help: exit $s: $h"; rc=1
	fi
done
if "$bin/tracer-merge" /nonexistent-dir >/dev/null 2>&1; then
	echo "FAIL: tracer-merge accepted a missing directory"; rc=1
fi
runs="$bin/tracer-mpirun $pfx/bin/tracer-mpirun"
# the source tree's script finds ../build/lib: only when the build tree is there
[ "$(cd "$bin/.." && pwd)" = "$(cd "$src/.." && pwd)/build" ] && runs="$runs $src/tracer-mpirun"
for t in $runs; do
	rm -rf "$out"
	if ! "$t" -o "$out" --oversubscribe -np 2 "$prog" >"$out.log" 2>&1; then
		echo "FAIL: $t -np 2: $(cat "$out.log")"; rc=1
	fi
	if grep -q "cannot preload" "$out.log" || ! otf2-print -Werror "$out/traces.otf2" >/dev/null; then
		echo "FAIL: $t: no readable $out/traces.otf2: $(cat "$out.log")"; rc=1
	fi
done
[ $rc = 0 ] && echo ok
exit $rc
