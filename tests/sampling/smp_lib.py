# SPDX-License-Identifier: BSD-3-Clause
"""smp_lib.py - what the sampling and metrics tests share (smp_check.py,
smp_cases_metrics.py, smp_unwind.py): running a program with libtracer.so
preloaded, loading its archive with the reference reader, calling-context
paths and names, the summary line, PAPI's answers.

Generic checks on every sampled archive (check_cc_streams):
  - per-location timestamps never decrease;
  - CallingContextEnter/Leave nest and balance; a Leave names the innermost
    open context; after it the previous context is its parent;
  - unwindDistance follows the OTF2 CallingContext semantics: with path P
    (root..node) of the event and path Q of the previous calling-context
    event, 1 <= d <= len(P) + 1 and the node d - 1 steps above the event's
    node (P[len(P) - d]) is on Q at the same depth (or d = len(P) + 1);
  - every sample taken while instrumented regions are open lies below the
    innermost one (regions bound the unwind distance).
"""
import collections
import os
import re
import subprocess
import sys

from otf2.events import CallingContextEnter, CallingContextLeave, CallingContextSample, Enter, Leave

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402


ck = rc.Checker(stop=True)     # a case stops at its first failed check
expect = ck.expect


def papi_perf_event():
    """(active, disabled reason) of PAPI's perf_event component, as
    papi_component_avail (papi-tools) reports it: independent of the tracer."""
    try:
        r = subprocess.run(["papi_component_avail"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
    except FileNotFoundError:
        raise rc.CheckFailed("papi_component_avail not found (papi-tools, scripts/install-deps)")
    out = r.stdout.decode(errors="replace")
    expect("Active components:" in out, "papi_component_avail output not understood: %r" % out[-500:])
    active = re.search(r"^Name:\s+perf_event\s", out.split("Active components:", 1)[1], re.M) is not None
    m = re.search(r"^Name:\s+perf_event\s.*\n\s*\\-> Disabled: (.*)$", out, re.M)
    return active, (m.group(1).strip() if m else "")


def member_scale(m):
    """Factor from a MetricMember's values to its unit (base ** exponent)."""
    base = 2 if str(m.base).endswith("BINARY") else 10
    return float(base) ** m.exponent


def papi_rejection(se, name, why, recording):
    """The one tracer: metrics line when PAPI's perf_event is disabled."""
    lines = [l for l in se.splitlines() if "metrics:" in l]
    expect(len(lines) == 1, "expected one metrics line, got %s" % lines)
    l = lines[0]
    expect(l.startswith("tracer:"), "not a tracer: line: %s" % l)
    want = "%s (unknown event: PAPI component perf_event disabled: %s)" % (name, why)
    expect(want in l, "'%s' missing in: %s" % (want, l))
    expect(l.endswith("recording " + recording), "'recording %s' missing in: %s" % (recording, l))
    return l


def run_traced(args, name, cmd, env_extra, timeout=120, expect_rc=0, stdout_path=None):
    """cmd traced (clean environment, TRACER_VERBOSE=1 unless env_extra says
    otherwise) into WORK/name: (anchor, stdout, stderr) once it exited
    expect_rc (None: any) and otf2-print read its archive."""
    print("run:", " ".join("%s=%s" % kv for kv in sorted(env_extra.items())), " ".join(cmd))
    env = {"TRACER_VERBOSE": "1"}
    env.update(env_extra)
    p, anchor = rc.run_traced(cmd, args.lib, os.path.join(args.work, name), env, timeout=timeout,
                              stdout_path=stdout_path)
    if expect_rc is not None:
        expect(p.returncode == expect_rc, "%s exited %d, expected %d" % (cmd[0], p.returncode, expect_rc))
    expect(anchor, "no archive under %s" % os.path.join(args.work, name))
    bad = [l for l in p.stderr.splitlines() if l.startswith("tracer: archive") and " errors (first:" in l]
    expect(not bad, "records rejected by the writer: %s" % bad)
    rc.otf2_print(ck, anchor)
    return anchor, p.stdout, p.stderr


def load(anchor):
    """(definitions info, {location name: [events]}, timer resolution)"""
    defs, evs, res = rc.read_back(anchor)
    info = {
        "ccs": list(defs.calling_contexts),
        "regions": list(defs.regions),
        "members": list(defs.metric_members),
        "classes": list(defs.metric_classes),
        "recorders": list(defs.metric_class_recorders) if hasattr(defs, "metric_class_recorders") else [],
        "igs": list(defs.interrupt_generators),
        "locations": list(defs.locations),
        "props": list(defs.location_properties),
    }
    return info, evs, res


def path_of(cc):
    p = []
    while cc is not None:
        p.append(cc)
        cc = cc.parent
    p.reverse()
    return p


def names(cc):
    return [c.region.name for c in path_of(cc)]


def check_cc_streams(evs):
    nsamples = 0
    for loc, lst in evs.items():
        last = -1
        prev = []          # path of the previous calling-context event
        open_nodes = []    # CallingContextEnter nodes still open
        for ev in lst:
            expect(ev.time >= last, "%s: time goes backwards at %r" % (loc, ev))
            last = ev.time
            if isinstance(ev, (CallingContextEnter, CallingContextSample)):
                P = path_of(ev.calling_context)
                d = ev.unwind_distance
                expect(1 <= d <= len(P) + 1, "%s: unwind distance %d for a path of %d" % (loc, d, len(P)))
                k = len(P) - d
                if k >= 0:
                    expect(k < len(prev) and prev[k] is P[k],
                           "%s: unwind distance %d of %s: node %s not in the previous context %s"
                           % (loc, d, names(ev.calling_context), P[k].region.name,
                              [c.region.name for c in prev]))
                if open_nodes:
                    top = open_nodes[-1]
                    expect(any(c is top for c in P),
                           "%s: sample/enter %s not below the open region %s"
                           % (loc, names(ev.calling_context), top.region.name))
                if isinstance(ev, CallingContextEnter):
                    open_nodes.append(ev.calling_context)
                else:
                    nsamples += 1
                prev = P
            elif isinstance(ev, CallingContextLeave):
                expect(open_nodes and open_nodes[-1] is ev.calling_context,
                       "%s: CallingContextLeave %s does not match the open %s"
                       % (loc, names(ev.calling_context), [c.region.name for c in open_nodes]))
                open_nodes.pop()
                prev = path_of(ev.calling_context.parent)
            elif isinstance(ev, (Enter, Leave)):
                raise rc.CheckFailed("%s: Enter/Leave mixed with calling-context events: %r" % (loc, ev))
        expect(not open_nodes, "%s: regions left open: %s" % (loc, [c.region.name for c in open_nodes]))
    return nsamples


def unique_contexts(ccs):
    """One CallingContext per distinct (parent, region, source location):
    two pcs on one line, two calls on one line, the same path on two
    threads are one context."""
    def key(c):
        scl = c.source_code_location
        return (c.region.name, scl.file if scl else None, scl.line_number if scl else None)
    def path(c):
        p = []
        while c is not None:
            p.append(key(c))
            c = c.parent
        return tuple(reversed(p))
    dups = collections.Counter(path(c) for c in ccs)
    bad = [(" -> ".join("%s:%s" % (k[0], k[2]) for k in p), n) for p, n in dups.items() if n > 1]
    expect(not bad, "%d calling contexts defined more than once, e.g. %s" % (len(bad), bad[:3]))
    print("  %d calling contexts, all distinct" % len(ccs))


def sampling_line(se):
    m = re.search(r"tracer: sampling: (\d+) samples on (\d+) threads \((\d+) deferred, (\d+) lost", se)
    expect(m, "no 'tracer: sampling:' summary line on stderr")
    return [int(x) for x in m.groups()]


def markers(src):
    lines = {}
    with open(src) as f:
        for i, l in enumerate(f, 1):
            for m in re.finditer(r"/\* ([A-Z0-9_]+) \*/", l):
                lines[m.group(1)] = i
    return lines


def props_of(info):
    """{location name: {property: value}} (SAMPLING:: location properties)."""
    out = collections.defaultdict(dict)
    for p in info["props"]:
        out[p.location.name][p.name] = p.value
    return out


def summary_rates(se):
    m = re.search(r"asked (\d+)/s of CPU per thread, delivered min (\d+)/s, median (\d+)/s over (\d+) threads", se)
    expect(m, "no requested/delivered rate in the sampling line")
    return [int(x) for x in m.groups()]
