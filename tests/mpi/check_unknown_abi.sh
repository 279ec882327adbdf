#!/bin/sh
# An MPI library of an unknown ABI (tests/mpi/fake_mpi.c, soname
# libmpi_abi.so.1): the traced program prints and exits exactly as
# untraced, stderr has one tracer: line naming the library, the archive is
# readable and holds no MPI region.
# usage: check_unknown_abi.sh LIB PROG OUTDIR
set -u
lib=$1 prog=$2 out=$3
rc=0
rm -rf "$out" "$out.plain"
mkdir -p "$out.plain"
"$prog" >"$out.plain/stdout" 2>"$out.plain/stderr"; s0=$?
env LD_PRELOAD="$lib" TRACER_OUTPUT="$out" "$prog" >"$out.plain/tstdout" 2>"$out.plain/tstderr"; s1=$?
cat "$out.plain/tstdout" "$out.plain/tstderr"
[ $s0 = $s1 ] || { echo "FAIL: exit $s1 traced, $s0 untraced"; rc=1; }
cmp -s "$out.plain/stdout" "$out.plain/tstdout" || { echo "FAIL: stdout differs"; rc=1; }
grep -q "4 calls" "$out.plain/stdout" || { echo "FAIL: the library's functions were not all called"; rc=1; }
if [ -n "$(grep -v '^tracer:' "$out.plain/tstderr")" ] || [ -s "$out.plain/stderr" ]; then
	echo "FAIL: stderr other than tracer: lines"; rc=1
fi
n=$(grep -c '^tracer: warning: MPI library libmpi_abi.so.1 is of an unknown ABI' "$out.plain/tstderr")
[ "$n" = 1 ] || { echo "FAIL: want one tracer: line about the unknown MPI ABI, got $n"; rc=1; }
# no other tracer: line than that and the archive's exit line
[ "$(grep '^tracer:' "$out.plain/tstderr" | grep -vc '^tracer: archive ')" = 1 ] || { echo "FAIL: more tracer: lines"; rc=1; }
grep -q 'send 42 1 123456789abc 3 99 7edcba987654' "$out.plain/tstdout" || { echo "FAIL: MPI_Send arguments changed"; rc=1; }
if ! otf2-print -Werror "$out/traces.otf2" >"$out.plain/print" 2>&1; then
	echo "FAIL: archive unreadable"; rc=1
fi
if grep -q 'MPI_' "$out.plain/print"; then
	echo "FAIL: MPI regions recorded"; rc=1
fi
[ $rc = 0 ] && echo ok
exit $rc
