#!/bin/sh
# vite_shot.sh ANCHOR SHOT.ppm - run under xvfb-run: start ViTE on ANCHOR,
# after 6 s say whether it is still running ("alive"/"dead"), grab the
# screen into SHOT.ppm once ViTE has finished drawing (two grabs a second
# apart are the same; at most 20 s more: on a busy machine the first grab
# may show a half-drawn timeline), stop ViTE.
vite "$1" >"$2.log" 2>&1 &
pid=$!
sleep 6
if kill -0 $pid 2>/dev/null; then echo alive; else echo dead; fi
import -window root -depth 8 "$2"
i=0
while [ $i -lt 20 ]; do
	sleep 1
	import -window root -depth 8 "$2.next.ppm"
	if cmp -s "$2" "$2.next.ppm"; then
		break
	fi
	mv "$2.next.ppm" "$2"
	i=$((i + 1))
done
rm -f "$2.next.ppm"
kill $pid 2>/dev/null
wait $pid
exit 0
