# SPDX-License-Identifier: BSD-3-Clause
"""smp_cases_metrics.py - the metrics cases of smp_check.py: PAPI and rusage
metrics per region against the program's own counts, a rejected metric's
message and archive.
"""
import os
import re
from otf2.events import (CallingContextEnter, CallingContextLeave, CallingContextSample, Enter,
                         Leave, Metric)

from smp_lib import *  # noqa: F401,F403  (rc, ck, expect, run_traced, load, names, ...)


def metric_deltas(info, evs, res, region, member):
    """[(wall ns, metric delta)] for each instance of region (Enter/Leave or
    CallingContextEnter/Leave), from the Metric records at the same times."""
    out = []
    for loc, lst in evs.items():
        last_metric = None
        stack = []
        for ev in lst:
            if isinstance(ev, Metric):
                names_ = [m.name for m in ev.metric.members]
                last_metric = (ev.time, dict(zip(names_, ev.values)))
                continue
            if isinstance(ev, (Enter, CallingContextEnter)):
                r = ev.region if isinstance(ev, Enter) else ev.calling_context.region
                expect(last_metric and last_metric[0] == ev.time,
                       "%s: no Metric record at the time of Enter %s" % (loc, r.name))
                stack.append((r.name, ev.time, last_metric[1]))
            elif isinstance(ev, (Leave, CallingContextLeave)):
                r = ev.region if isinstance(ev, Leave) else ev.calling_context.region
                expect(last_metric and last_metric[0] == ev.time,
                       "%s: no Metric record at the time of Leave %s" % (loc, r.name))
                name, t0, m0 = stack.pop()
                if name == region:
                    wall = (ev.time - t0) * 1e9 / res
                    out.append((wall, last_metric[1][member] - m0[member]))
    return out


def deltas(info, evs, res, region, member):
    """metric_deltas of one member, or of the sum of members "a+b" (prefix shared)."""
    if "+" not in member:
        return metric_deltas(info, evs, res, region, member)
    ns, names = member.split("::", 1)
    parts = [metric_deltas(info, evs, res, region, ns + "::" + n) for n in names.split("+")]
    return [(p[0][0], sum(x[1] for x in p)) for p in zip(*parts)]


def case_metrics(args):
    papi, why = papi_perf_event()
    want = (["perf::TASK-CLOCK"] if papi else []) + ["rusage::utime", "rusage::stime"]
    anchor, so, se = run_traced(args, "metrics", [os.path.join(args.bindir, "smp_metrics")],
                                {"TRACER_METRICS": "perf::TASK-CLOCK,rusage::utime,rusage::stime"}, timeout=120)
    if papi:
        expect("rejected" not in se, "metrics rejected: %s" % se)
    else:
        print("PAPI perf_event disabled (%s): expecting one line rejecting perf::TASK-CLOCK" % why)
        papi_rejection(se, "perf::TASK-CLOCK", why, "rusage::utime, rusage::stime")
    info, evs, res = load(anchor)
    mm = {m.name: m for m in info["members"]}
    expect(sorted(mm) == sorted(want), "metric members %s, expected %s" % (sorted(mm), want))
    # units: the values times base^exponent are seconds (CPU time)
    for name, exp in (("perf::TASK-CLOCK", -9), ("rusage::utime", -6), ("rusage::stime", -6)):
        if name in mm:
            m = mm[name]
            print("  %s: unit %r, base %s, exponent %d" % (name, m.unit, m.base, m.exponent))
            expect(m.unit == "s" and member_scale(m) == 10.0 ** exp,
                   "%s: unit %r x %s^%d, expected s x 10^%d" % (name, m.unit, m.base, m.exponent, exp))
            expect(str(m.metric_mode).endswith("ACCUMULATED_START"), "%s mode %s" % (name, m.metric_mode))
    expect(len(info["classes"]) == 1 and len(info["classes"][0].members) == len(want),
           "one class with %d members expected" % len(want))
    nmetric = sum(1 for l in evs.values() for e in l if isinstance(e, Metric))
    nregion = sum(1 for l in evs.values() for e in l if isinstance(e, (Enter, Leave, CallingContextEnter, CallingContextLeave)))
    print("Metric records %d, region events %d" % (nmetric, nregion))
    expect(nmetric == nregion, "one Metric per enter/leave expected (%d vs %d)" % (nmetric, nregion))
    # CPU time the program measured inside each busy region (its own clock)
    own = [float(x) for x in re.findall(r"busy \d+ cpu_ns=(\d+)", so)]
    expect(len(own) == 5, "program output missing")
    # rusage: utime + stime. The kernel splits a thread's CPU time into
    # user and system by tick samples, and under load a share of a pure
    # user-mode loop can land in stime; the sum follows the real CPU time.
    checks = [("rusage::utime+stime", member_scale(mm["rusage::utime"]) * 1e9)]
    if papi:
        checks.insert(0, ("perf::TASK-CLOCK", member_scale(mm["perf::TASK-CLOCK"]) * 1e9))
    for member, scale in checks:
        busy = deltas(info, evs, res, "busy", member)
        expect(len(busy) == 5, "5 busy regions expected, got %d" % len(busy))
        for (w, d), c in zip(busy, own):
            v = d * scale
            print("  %s busy: metric %.2f ms, program cpu %.2f ms, wall %.2f ms (cpu/wall %.2f)"
                  % (member, v / 1e6, c / 1e6, w / 1e6, v / w))
            # the region's CPU time: as measured by the program (within 10 %)
            expect(abs(v - c) <= 0.1 * c, "%s: %.2f ms in the region, the program measured %.2f ms"
                   % (member, v / 1e6, c / 1e6))
            # and the wall duration bounds it; equal (10 %) when the thread
            # was not preempted (cpu/wall of the program's own measure >= 0.95)
            expect(v <= 1.05 * w, "%s: %.2f ms of CPU in %.2f ms of wall time" % (member, v / 1e6, w / 1e6))
            if c >= 0.95 * w:
                expect(v >= 0.9 * w, "%s: %.2f ms for %.2f ms of CPU-bound wall time" % (member, v / 1e6, w / 1e6))
        sleepy = deltas(info, evs, res, "sleepy", member)
        expect(len(sleepy) == 3, "3 sleepy regions expected, got %d" % len(sleepy))
        for w, d in sleepy:
            expect(d * scale / w < 0.3, "%s: sleeping region used %.3f of its wall time" % (member, d * scale / w))
    if not papi:
        raise rc.Skip("PAPI's perf_event component is disabled here (%s): the perf::TASK-CLOCK values were not "
                   "checked (rusage metrics and the rejection line were)" % why)


def case_rusage(args):
    """rusage-only metrics also come with every sample."""
    anchor, so, se = run_traced(args, "rusage", [os.path.join(args.bindir, "smp_tree")],
                                {"TRACER_METRICS": "rusage::utime,rusage::minflt,rusage::maxrss", "TRACER_SAMPLING": "1ms",
                                 "SMP_CPU_SECONDS": "0.4"}, timeout=120)
    info, evs, res = load(anchor)
    n = check_cc_streams(evs)
    expect(n >= 20, "only %d samples" % n)
    for loc, lst in evs.items():
        for i, ev in enumerate(lst):
            if isinstance(ev, (CallingContextSample, CallingContextEnter, CallingContextLeave)):
                nb = [e for e in lst[max(0, i - 1):i + 2] if isinstance(e, Metric) and e.time == ev.time]
                expect(nb, "%s: no Metric record next to %r" % (loc, ev))
    vals = [e.values[0] for l in evs.values() for e in l if isinstance(e, Metric)]
    expect(vals == sorted(vals), "rusage::utime decreases")
    expect(vals[-1] - vals[0] > 200000, "utime grew only %d us" % (vals[-1] - vals[0]))
    # maxrss counts KiB: B x 2^10; the program's peak RSS (its own getrusage
    # is in KiB too) lies between 1 MiB and 1 GiB
    mm = {m.name: m for m in info["members"]}
    rss = mm["rusage::maxrss"]
    expect(rss.unit == "B" and member_scale(rss) == 1024.0, "maxrss unit %r x %s^%d, expected B x 2^10"
           % (rss.unit, rss.base, rss.exponent))
    peak = max(e.values[2] for l in evs.values() for e in l if isinstance(e, Metric)) * member_scale(rss)
    print("maxrss %.1f MiB" % (peak / 2 ** 20))
    expect(2 ** 20 <= peak <= 2 ** 30, "maxrss %.0f bytes" % peak)


def case_badmetric(args):
    papi, why = papi_perf_event()
    anchor, so, se = run_traced(args, "badmetric", [os.path.join(args.bindir, "smp_metrics")],
                                {"TRACER_METRICS": "perf::TASK-CLOCK,NO_SUCH_EVENT,rusage::bogus,rusage::minflt",
                                 "SMP_BUSY_MS": "20"}, timeout=120)
    lines = [l for l in se.splitlines() if "metrics:" in l]
    expect(len(lines) == 1, "expected one metrics line, got %s" % lines)
    l = lines[0]
    expect(l.startswith("tracer:"), "not a tracer: line: %s" % l)
    for w in ("NO_SUCH_EVENT (unknown event)", "rusage::bogus (unknown rusage metric)"):
        expect(w in l, "'%s' missing in: %s" % (w, l))
    want = (["perf::TASK-CLOCK"] if papi else []) + ["rusage::minflt"]
    if papi:
        expect(l.endswith("recording perf::TASK-CLOCK, rusage::minflt"), "accepted metrics not named: %s" % l)
    else:
        papi_rejection(se, "perf::TASK-CLOCK", why, "rusage::minflt")
    info, evs, res = load(anchor)
    expect([m.name for m in info["members"]] == want, "members %s, expected %s" % ([m.name for m in info["members"]], want))
    busy = metric_deltas(info, evs, res, "busy", want[0])
    expect(len(busy) == 5, "5 busy regions expected, got %d" % len(busy))
    if not papi:
        raise rc.Skip("PAPI's perf_event component is disabled here (%s): perf::TASK-CLOCK not recorded "
                   "(the rejection line and the other metrics were checked)" % why)
