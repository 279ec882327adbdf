#!/bin/sh
# vite_shot.sh ANCHOR SHOT.ppm - run under xvfb-run: start ViTE on ANCHOR,
# after 6 s say whether it is still running ("alive"/"dead"), grab the
# screen into SHOT.ppm, stop ViTE.
vite "$1" >"$2.log" 2>&1 &
pid=$!
sleep 6
if kill -0 $pid 2>/dev/null; then echo alive; else echo dead; fi
import -window root -depth 8 "$2"
kill $pid 2>/dev/null
wait $pid
exit 0
