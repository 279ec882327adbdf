#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""VT calls made before libtracer.so is initialized (a preloaded library's
constructor that runs first) return VT_ERR_NOTINITIALIZED (-3) and do not
crash; afterwards the program's own VT calls are traced.

usage: check_early.py PROGRAM LIBTRACER LIBEARLY WORKDIR
"""
import glob
import os
import shutil
import subprocess
import sys

import otf2

prog, lib, early, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, LD_PRELOAD=lib + " " + early, TRACER_OUTPUT=work)
p = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=60)
print(p.stdout, end="")
print(p.stderr, end="", file=sys.stderr)
errors = []
if p.returncode != 0:
    errors.append("exit %d" % p.returncode)
if "vt_early: " + " ".join(["-3"] * 12) + " state=2" not in p.stderr.splitlines():
    errors.append("early VT calls did not all return VT_ERR_NOTINITIALIZED")
if "main: 0 0 0" not in p.stdout.splitlines():
    errors.append("VT calls in main failed")
anchors = glob.glob(os.path.join(work, "**", "*.otf2"), recursive=True)
if len(anchors) != 1:
    errors.append("archives: %s" % anchors)
else:
    with otf2.reader.open(anchors[0]) as trace:
        names = [str(e.region.name) for _, e in trace.events if isinstance(e, otf2.events.Enter)]
        regions = [str(r.name) for r in trace.definitions.regions]
    if names.count("late") != 1:
        errors.append("region 'late' entered %d times" % names.count("late"))
    if "early" in regions or "early7" in regions:
        errors.append("early definitions reached the archive: %s" % regions)
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
