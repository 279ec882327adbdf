#!/bin/sh
# README's first command on a build directory that does not exist yet, as on
# a fresh machine: scripts/demo must configure, build what it runs (the
# library, tracer-run, the tracer command, the demo) and show the archive.
# (A demo that only worked because an earlier full build left tracer-run in
# build/bin once failed on a fresh Debian 12.)
set -u
top=$1 work=$2
# a copy of the source tree without any build directory, as a fresh clone
rm -rf "$work" && mkdir -p "$work/src" || exit 1
tar -C "$top" --exclude="./build*" --exclude=./.git --exclude="./tracer-*" -cf - . | tar -C "$work/src" -xf - || exit 1
cd "$work" || exit 1
out=$(env -u TRACER_OUTPUT -u TRACER_BUILD_DIR "$work/src/scripts/demo" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 25
fail() { echo "FAIL readme_demo: $*"; exit 1; }
[ $rc -eq 0 ] || fail "scripts/demo exit status $rc"
printf '%s\n' "$out" | grep -q '^== running: .*tracer-run' || fail "not run under tracer-run"
printf '%s\n' "$out" | grep -q '^== archive: '"$work"'/tracer-demo-' || fail "no archive line in $work"
printf '%s\n' "$out" | grep -q 'tracer report' || fail "no pointer to tracer report"
[ -x "$work/src/build/bin/tracer" ] || fail "the tracer command was not built"
"$work/src/build/bin/tracer" report "$work"/tracer-demo-*/ >/dev/null || fail "tracer report failed on the demo archive"
echo "PASS readme_demo"
