#!/bin/sh
# bench/reader.sh - our OTF2 reader against libotf2's (run: scripts/bench reader).
# The same measurement as bench/report.sh (which also times `tracer report`),
# ending with the reader's line: `reader speedup vs reference: R`.
set -e
out=$(sh "$(dirname "$0")/report.sh" "$@")
printf '%s\n' "$out" | grep -v '^reader speedup vs reference:'
printf '%s\n' "$out" | grep '^reader speedup vs reference:'
