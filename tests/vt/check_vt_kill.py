#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vt_durable_kill: a VT program (vt_kill.c) under TRACER_DURABLE (the
default) killed with SIGKILL 1.5 s after its classes and functions are
defined and its first regions recorded (the definitions are older than the
1 s bound); `tracer recover DIR`; the recovered archive read back with the
reference reader (otf2-print, python3-otf2) has every class as a REGIONS
group holding its regions, and the regions' events.

usage: check_vt_kill.py PROGRAM LIBTRACER TRACER WORKDIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

from otf2.enums import GroupType

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

PROG, LIB, TRACER, WORK = sys.argv[1:5]
GROUPS = {"Solver": {"Solver:step", "Solver:solve"}, "Solver:Inner": {"Solver:Inner:reduce"},
          "IO": {"IO:read", "IO:write"}}


def case():
    ck = rc.Checker()
    out = os.path.join(WORK, "archive")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    # (linked against libtracer.so for the VT API; durable mode is the default)
    env = rc.clean_env({"TRACER_OUTPUT": out})
    p = subprocess.Popen([PROG], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise rc.CheckFailed("vt_kill did not start: %r %r" % (line, p.communicate()[1]))
    time.sleep(1.5)
    p.kill()
    p.communicate(timeout=60)
    r = subprocess.run([TRACER, "recover", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=rc.clean_env(), timeout=120)
    ck.expect(r.returncode == 0 and "tracer: recovered" in r.stderr,
              "tracer recover: exit %d: %s" % (r.returncode, r.stderr.strip()))
    anchor = os.path.join(out, "traces.otf2")
    if not os.path.exists(anchor):
        raise rc.CheckFailed("no recovered archive %s" % anchor)
    rc.otf2_print(ck, anchor)
    g = subprocess.run(["otf2-print", "-G", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    glines = [l for l in g.stdout.splitlines() if l.startswith("GROUP ") and "REGIONS" in l]
    for name in GROUPS:
        ck.expect(any('Name: "%s"' % name in l for l in glines), "otf2-print -G: no REGIONS group %r" % name)
    defs, evs, _ = rc.read_back(anchor)
    groups = {x.name: x for x in defs.groups if x.group_type == GroupType.REGIONS}
    for name, members in GROUPS.items():
        x = groups.get(name)
        if x is None:
            ck.fail("no REGIONS group %r in the recovered archive (groups: %s)"
                    % (name, sorted(y.name for y in defs.groups)))
            continue
        have = {m.canonical_name for m in x.members}
        ck.expect(have == members, "group %r holds %s, expected %s" % (name, sorted(have), sorted(members)))
    entered = {}
    for ev in (e for l in evs.values() for e in l):
        if type(ev).__name__ == "Enter":
            entered[ev.region.canonical_name] = entered.get(ev.region.canonical_name, 0) + 1
    for members in GROUPS.values():
        for m in members:
            ck.expect(entered.get(m, 0) >= 50, "region %s entered %d times (>= 50 before the ready line)"
                      % (m, entered.get(m, 0)))
    if ck.errors:
        raise rc.CheckFailed("%d failure(s)" % len(ck.errors))
    print("groups %s, enters %s" % ({n: sorted(m.canonical_name for m in x.members) for n, x in groups.items()},
                                     entered))


sys.exit(rc.run_case(case, "vt_durable_kill"))
