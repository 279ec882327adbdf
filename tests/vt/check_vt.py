#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs a VT API test program (tests/vt/vt_api.c or vt_api.f90) under
libtracer.so at DETAILED-STATES level 0, 1 and 2 and checks the archive with
the reference reader (python3-otf2): region names/classes, the exact
Enter/Leave sequence and nesting of the VT regions (the ITC reference
tables), counters, Callsites/SourceCodeLocations, class groups,
MeasurementOnOff, and the return codes the program printed.

usage: check_vt.py PROGRAM LIBTRACER WORKDIR
"""
import os
import sys

import otf2
from otf2.enums import Paradigm, GroupType, MeasurementMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

PROG, LIB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]

COMMON_HEAD = [
    ("E", "Application:compute"),
    ("E", "MPI:TRANSFER:SEND"), ("L", "MPI:TRANSFER:SEND"),
    ("E", "OLD:ACT:oldsym"), ("L", "OLD:ACT:oldsym"),
    ("L", "Application:compute"),
    ("E", "Solver:step"), ("L", "Solver:step"),
]
SIX = {
    0: [("E", "MPI:TRANSFER"), ("L", "MPI:TRANSFER")],
    1: [("E", "MPI:TRANSFER:WAIT"), ("E", "MPI:TRANSFER:COPY"), ("L", "MPI:TRANSFER:COPY"),
        ("E", "MPI:TRANSFER:WAIT"), ("L", "MPI:TRANSFER:WAIT"), ("L", "MPI:TRANSFER:WAIT")],
}
SIX[2] = SIX[1]
EXAMPLES = {
    0: [("E", "MPI:TRANSFER"), ("L", "MPI:TRANSFER")],
    1: [("E", "MPI:TRANSFER:SEND"), ("L", "MPI:TRANSFER:SEND"),
        ("E", "MPI:INTERNAL"), ("L", "MPI:INTERNAL")],
    2: [("E", "MPI:TRANSFER:SEND:COPY"), ("L", "MPI:TRANSFER:SEND:COPY"),
        ("E", "MPI:INTERNAL"), ("L", "MPI:INTERNAL")],
}
STDOUT = {
    0: ["six r1=0 r2=nz r4=nz wait_trunc=1 copy_trunc=1", "ex1 r=0 trunc=1", "ex2 r=nz trunc=1"],
    1: ["six r1=0 r2=0 r4=0 wait_trunc=0 copy_trunc=0", "ex1 r=0 trunc=1", "ex2 r=0 trunc=0"],
    2: ["six r1=0 r2=0 r4=0 wait_trunc=0 copy_trunc=0", "ex1 r=0 trunc=0", "ex2 r=0 trunc=0"],
}

ck = rc.Checker()
fail = ck.fail


def run(level):
    out = os.path.join(WORK, "level%d" % level)
    # (linked against libtracer.so for the VT API: no untraced run to compare with)
    p, anchor = rc.run_traced([PROG], LIB, out, {"TRACER_DETAILED_STATES": str(level)}, echo=False)
    print("--- level %d: exit %d" % (level, p.returncode))
    print(p.stdout, end="")
    print(p.stderr, end="", file=sys.stderr)
    ck.expect(p.returncode == 0, "level %d: program exit %d" % (level, p.returncode))
    rc.expect_lines(ck, p.stdout, STDOUT[level], "level %d: stdout" % level)
    ck.expect("done failures=0" in [l.strip() for l in p.stdout.splitlines()],
              "level %d: the program's own return-code checks failed" % level)
    if not ck.expect(anchor, "level %d: expected one archive under %s" % (level, out)):
        return
    check_archive(level, anchor)


def check_archive(level, anchor):
    seq = []
    metrics = []
    onoff = []
    with rc.open_trace(anchor) as trace:
        defs = trace.definitions
        regions = {r.canonical_name: r for r in defs.regions}
        for canon, name in [("MPI:TRANSFER:SEND", "SEND"), ("Application:compute", "compute"),
                            ("Solver:step", "step"), ("OLD:ACT:oldsym", "oldsym")]:
            r = regions.get(canon)
            if r is None:
                fail("level %d: no region with canonical name %s" % (level, canon))
            elif r.name != name or r.paradigm != Paradigm.USER:
                fail("level %d: region %s: name %r paradigm %s" % (level, canon, r.name, r.paradigm))
        groups = {g.name: g for g in defs.groups if g.group_type == GroupType.REGIONS}
        for cls, member in [("MPI:TRANSFER", "MPI:TRANSFER:SEND"), ("Application", "Application:compute"),
                            ("Solver", "Solver:step"), ("OLD:ACT", "OLD:ACT:oldsym")]:
            g = groups.get(cls)
            if g is None:
                fail("level %d: no REGIONS group %r" % (level, cls))
            elif member not in [m.canonical_name for m in g.members]:
                fail("level %d: group %r lacks %s" % (level, cls, member))
        scls = [(str(s.file), s.line_number)
                for s in defs.source_code_locations]
        for want in [("vt_api.c", 100), ("vt_api.c", 200)]:
            if want not in scls:
                fail("level %d: no SourceCodeLocation %s (have %s)" % (level, want, scls))
        sites = set()
        for c in defs.callsites:
            sites.add((str(c.source_file), c.line_number, c.entered_region.canonical_name,
                       c.left_region.canonical_name if c.left_region is not None else None))
        for want in [("vt_api.c", 100, "MPI:TRANSFER:SEND", "Application:compute"),
                     ("vt_api.c", 200, "OLD:ACT:oldsym", "Application:compute"),
                     ("vt_api.c", 100, "Solver:step", None)]:
            if want not in sites:
                fail("level %d: no Callsite %s (have %s)" % (level, want, sorted(sites, key=str)))
        props = [(str(p.name), str(p.value)) for p in defs.location_properties]
        if ("VT_THREAD_NAME", "main") not in props:
            fail("level %d: no location property VT_THREAD_NAME=main (have %s)" % (level, props))
        members = {m.name: m for m in defs.metric_members}
        for n in ["iterations", "residual", "legacy"]:
            if n not in members:
                fail("level %d: no MetricMember %s" % (level, n))
        if "legacy" in members and members["legacy"].unit != "bytes":
            fail("level %d: legacy unit %r" % (level, members["legacy"].unit))
        if "iterations" in members and members["iterations"].description != "MPI:TRANSFER":
            fail("level %d: iterations description %r" % (level, members["iterations"].description))
        master = None
        for loc, ev in trace.events:
            if master is None:
                master = loc
            if loc != master:
                continue
            if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                if ev.region.paradigm != Paradigm.USER:
                    continue
                seq.append(("E" if isinstance(ev, otf2.events.Enter) else "L", ev.region.canonical_name))
            elif isinstance(ev, otf2.events.Metric):
                for m, v in zip(ev.metric.members, ev.values):
                    metrics.append((m.name, v))
            elif isinstance(ev, otf2.events.MeasurementOnOff):
                onoff.append(ev.measurement_mode)
    want = COMMON_HEAD + SIX[level] + EXAMPLES[level]
    if seq != want:
        fail("level %d: VT region sequence\n  got  %s\n  want %s" % (level, seq, want))
    depth = 0
    for kind, _ in seq:
        depth += 1 if kind == "E" else -1
        if depth < 0:
            fail("level %d: Leave without Enter" % level)
    if depth:
        fail("level %d: %d regions left open" % (level, depth))
    want_metrics = []
    for i in range(1, 4):
        want_metrics += [("iterations", i * 10), ("residual", 1.0 / i), ("legacy", (1 << 32) + i)]
    if metrics != want_metrics:
        fail("level %d: metric values\n  got  %s\n  want %s" % (level, metrics, want_metrics))
    if onoff[:2] != [MeasurementMode.OFF, MeasurementMode.ON]:
        fail("level %d: MeasurementOnOff %s" % (level, onoff))


os.makedirs(WORK, exist_ok=True)
for lvl in (0, 1, 2):
    run(lvl)
sys.exit(ck.done("all VT checks passed"))
