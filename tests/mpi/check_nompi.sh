#!/bin/sh
# libtracer.so must not depend on libmpi and must trace non-MPI programs:
# no PMPI_* / ompi_* reference at all (looked up at run time by
# wrappers/mpi/mpi_abi.c, so a libmpi opened later with dlopen is found too);
# the remaining Fortran sentinels are weak.
# Also: every function of wrappers/mpi/mpi.spec is exported (generated or
# written by hand).
# usage: check_nompi.sh LIB PROG OUTDIR SPEC
set -u
lib=$1 prog=$2 out=$3 spec=$4
rc=0
if ldd "$lib" | grep -q libmpi; then
	echo "FAIL: $lib depends on libmpi"; rc=1
fi
strong=$(nm -D --undefined-only "$lib" | grep -iE ' U (p?mpi_|ompi_|mca_|opal_)' || true)
if [ -n "$strong" ]; then
	echo "FAIL: strong undefined MPI symbols:"; echo "$strong"; rc=1
fi
linked=$(nm -D --undefined-only "$lib" | grep -E ' [wUv] (PMPI_|ompi_|pmpi_)' || true)
if [ -n "$linked" ]; then
	echo "FAIL: PMPI/ompi symbols bound at load time (not found when libmpi is opened later):"
	echo "$linked"; rc=1
fi
n=$(nm -D --defined-only "$lib" | grep -cE ' T MPI_[A-Z][a-z]')
if [ "$n" -lt 100 ]; then
	echo "FAIL: only $n MPI_* wrappers exported"; rc=1
fi
defined=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }')
for fn in $(grep -E '^MPI_' "$spec" | awk '{ print $1 }'); do
	if ! echo "$defined" | grep -qx "$fn"; then
		echo "FAIL: $fn of mpi.spec not exported by $lib"; rc=1
	fi
done
rm -rf "$out"
if ! env LD_PRELOAD="$lib" TRACER_OUTPUT="$out" "$prog" | grep -q "nompi ok"; then
	echo "FAIL: traced non-MPI program failed"; rc=1
fi
if ! otf2-print -Werror "$out/traces.otf2" >/dev/null; then
	echo "FAIL: archive of the non-MPI program unreadable"; rc=1
fi
[ $rc = 0 ] && echo "ok ($n MPI wrappers, no libmpi)"
exit $rc
