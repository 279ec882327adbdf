#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""VT calls made before libtracer.so is initialized (a preloaded library's
constructor that runs first) return VT_ERR_NOTINITIALIZED (-3) and do not
crash; afterwards the program's own VT calls are traced. (The program links
libtracer.so: there is no untraced run to compare with.)

usage: check_early.py PROGRAM LIBTRACER LIBEARLY WORKDIR
"""
import os
import sys

import otf2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

prog, lib, early, work = sys.argv[1:5]
ck = rc.Checker()
# the early library after libtracer.so: its constructor runs first
p, anchor = rc.run_traced([prog], lib, work, {"LD_PRELOAD": lib + " " + early})
ck.expect(p.returncode == 0, "exit %d" % p.returncode)
ck.expect("vt_early: " + " ".join(["-3"] * 12) + " state=2" in p.stderr.splitlines(),
          "early VT calls did not all return VT_ERR_NOTINITIALIZED")
ck.expect("main: 0 0 0" in p.stdout.splitlines(), "VT calls in main failed")
if ck.expect(anchor, "not exactly one archive in %s" % work):
    defs, evs, _ = rc.read_back(anchor)
    names = [str(e.region.name) for loc in evs.values() for e in loc if isinstance(e, otf2.events.Enter)]
    regions = [str(r.name) for r in defs.regions]
    ck.expect(names.count("late") == 1, "region 'late' entered %d times" % names.count("late"))
    ck.expect("early" not in regions and "early7" not in regions,
              "early definitions reached the archive: %s" % regions)
sys.exit(ck.done())
