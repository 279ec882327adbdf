#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a program under libtracer.so and check the pthread content of the
archive with the reference reader (python3-otf2, /usr/bin/python3 only).
Built on the shared tests/lib/runcheck.py (running in a clean environment,
failing) and tests/lib/tracecheck.py (loading, otf2-print, timestamps,
ProgramBegin/End).

Generic checks (check_all):
  - otf2-print reads the archive; ProgramBegin first on the master (and
    ProgramEnd with the expected exit status last);
  - per-location timestamps never decrease;
  - Enter/Leave nest and balance (per location);
  - thread life cycle: every ThreadBegin is the first event of its location
    and has exactly one ThreadCreate (same sequence count, not later), every
    ThreadEnd follows the Begin of its location with the same sequence count
    and is the last event there, every ThreadWait matches one ThreadEnd that
    is not later;
  - lock pairs: each ThreadReleaseLock matches a ThreadAcquireLock of the
    same location, lock id and acquisition order; nothing held at the end;
  - acquisition orders of each lock are 1..N, each once, across all locations.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402  (shared: tests/lib/runcheck.py)
import tracecheck as tc  # noqa: E402  (shared: tests/lib/tracecheck.py)
import otf2  # noqa: E402
from otf2.events import (Enter, Leave, ThreadAcquireLock, ThreadBegin, ThreadCreate,
                         ThreadEnd, ThreadReleaseLock, ThreadWait)


ck = rc.Checker(stop=True)   # a case stops at its first failed check
CheckError = rc.CheckFailed  # what fail and expect raise
fail, expect = ck.fail, ck.expect


def run_traced(cmd, outdir, lib, env_extra=None, timeout=120, expect_rc=0, **kw):
    """rc.run_traced (output as bytes, TRACER_VERBOSE=1 unless env_extra
    says otherwise; kw: stdin, stdout_path); exit status expect_rc unless
    None. Returns the CompletedProcess."""
    env = {"TRACER_VERBOSE": "1"}
    env.update(env_extra or {})
    p, _ = rc.run_traced(cmd, lib, outdir, env, timeout=timeout, binary=True, **kw)
    if expect_rc is not None:
        expect(p.returncode == expect_rc,
               "%s exited with %d (expected %d)" % (cmd[0], p.returncode, expect_rc))
    return p


def find_anchor(outdir):
    """The archive's anchor: outdir/traces.otf2, else the only *.otf2."""
    try:
        return tc.find_anchor(outdir)
    except tc.CheckError as e:
        fail(str(e))


class Trace:
    """All events of an archive, grouped per location in file order (the
    reference event objects), on top of the shared tests/lib/tracecheck."""

    def __init__(self, anchor):
        self.anchor = anchor
        self.tc = tc.load(anchor)
        tc.otf2_print(anchor)   # the reference tool must read it too
        self.events = collections.OrderedDict()
        self.names = {}
        self.process = {}   # location -> its location group (lock ids are per process)
        for loc in self.tc.locations:
            self.events[loc.id] = [e.ev for e in loc.events]
            self.names[loc.id] = loc.name
            self.process[loc.id] = loc.group
        self.regions = self.tc.regions

    def of_type(self, loc, cls):
        return [e for e in self.events[loc] if isinstance(e, cls)]

    def count(self, cls, loc=None):
        locs = [loc] if loc is not None else list(self.events)
        return sum(1 for l in locs for e in self.events[l] if isinstance(e, cls))

    def enters(self, loc, name):
        return [e for e in self.events[loc] if isinstance(e, Enter) and e.region.name == name]

    def leaves(self, loc, name):
        return [e for e in self.events[loc] if isinstance(e, Leave) and e.region.name == name]

    def thread_locations(self):
        """Locations that start with ThreadBegin."""
        return [l for l, evs in self.events.items() if evs and isinstance(evs[0], ThreadBegin)]

    def master(self):
        return self.tc.master.id

    def lock_counts(self, loc):
        c = collections.Counter()
        for e in self.events[loc]:
            if isinstance(e, ThreadAcquireLock):
                c[e.lock_id] += 1
        return c


def check_nesting(tr, allow_open=()):
    for loc, evs in tr.events.items():
        stack = []
        for i, e in enumerate(evs):
            if isinstance(e, Enter):
                stack.append(e.region.name)
            elif isinstance(e, Leave):
                expect(stack, "%s: Leave %s (event %d) without Enter" % (tr.names[loc], e.region.name, i))
                top = stack.pop()
                expect(top == e.region.name, "%s: Leave %s (event %d) but %s is open"
                       % (tr.names[loc], e.region.name, i, top))
        if loc not in allow_open:
            expect(not stack, "%s: regions still open at the end: %r" % (tr.names[loc], stack))


def _key(e):
    """Sequence counts are unique per thread contingent (one per process)."""
    return (e.thread_contingent._ref, e.sequence_count)


def seqs(d):
    """The sequence counts of a check_lifecycle dict."""
    return {k[1] for k in d}


def check_lifecycle(tr, require_end=True, allow_unstarted=0, allow_open=()):
    """Returns the ThreadCreate, ThreadBegin, ThreadEnd, ThreadWait dicts
    {(contingent, seq): (location, event)}."""
    creates, begins, ends, waits = {}, {}, {}, {}
    for loc, evs in tr.events.items():
        for i, e in enumerate(evs):
            if isinstance(e, (ThreadCreate, ThreadBegin, ThreadEnd, ThreadWait)):
                kind = type(e).__name__
                expect(e.thread_contingent is not None and e.thread_contingent.name,
                       "%s seq %d without a thread contingent" % (kind, e.sequence_count))
                d = {ThreadCreate: creates, ThreadBegin: begins, ThreadEnd: ends,
                     ThreadWait: waits}[type(e)]
                expect(_key(e) not in d, "%s %r twice" % (kind, _key(e)))
                d[_key(e)] = (loc, e)
            if isinstance(e, ThreadBegin):
                expect(i == 0, "%s: ThreadBegin is event %d, not the first" % (tr.names[loc], i))
            elif isinstance(e, ThreadEnd):
                # nothing of the thread after its end, not even for a thread
                # still running at exit (allow_open): the core closes its open
                # regions (Leave) before the ThreadEnd is written
                after = evs[i + 1:]
                expect(not after, "%s: events after ThreadEnd: %r"
                       % (tr.names[loc], [type(x).__name__ for x in after[:5]]))
    for key, (loc, e) in begins.items():
        expect(key in creates, "ThreadBegin %r on %s has no ThreadCreate" % (key, tr.names[loc]))
        cloc, c = creates[key]
        expect(cloc != loc, "ThreadCreate and ThreadBegin %r on one location" % (key,))
        expect(c.time <= e.time, "ThreadBegin %r before its ThreadCreate" % (key,))
    unstarted = [k for k in creates if k not in begins]
    expect(len(unstarted) <= allow_unstarted, "ThreadCreate without ThreadBegin: %r" % unstarted)
    for key, (loc, e) in ends.items():
        expect(key in begins, "ThreadEnd %r without ThreadBegin" % (key,))
        expect(begins[key][0] == loc, "ThreadEnd %r on another location than its Begin" % (key,))
    if require_end:
        for key, (loc, e) in begins.items():
            expect(key in ends, "thread %s %r has no ThreadEnd" % (tr.names[loc], key))
    for key, (loc, e) in waits.items():
        expect(key in ends, "ThreadWait %r without ThreadEnd" % (key,))
        expect(ends[key][1].time <= e.time, "ThreadWait %r before the ThreadEnd" % (key,))
    return creates, begins, ends, waits


def check_locks(tr, exclusive_ids=None, allow_held=()):
    """Pairs per location; orders 1..N per lock (lock ids are per process).
    exclusive_ids: locks whose acquisition times must follow their orders
    (mutex/spin/write locks)."""
    orders = collections.defaultdict(list)    # (process, lock) -> [(order, time)]
    for loc, evs in tr.events.items():
        held = collections.defaultdict(list)
        for e in evs:
            if isinstance(e, ThreadAcquireLock):
                expect(e.model == otf2.Paradigm.PTHREAD, "acquire with paradigm %s" % e.model)
                held[e.lock_id].append(e.acquisition_order)
                orders[(tr.process[loc], e.lock_id)].append((e.acquisition_order, e.time))
            elif isinstance(e, ThreadReleaseLock):
                expect(e.acquisition_order in held[e.lock_id],
                       "%s: release of lock %d order %d that it does not hold (holds %r)"
                       % (tr.names[loc], e.lock_id, e.acquisition_order, held[e.lock_id]))
                held[e.lock_id].remove(e.acquisition_order)
        if loc not in allow_held:
            left = {k: v for k, v in held.items() if v}
            expect(not left, "%s: locks held at the end: %r" % (tr.names[loc], left))
    for (proc, lock), lst in orders.items():
        got = sorted(o for o, _ in lst)
        expect(got == list(range(1, len(got) + 1)),
               "%s lock %d: acquisition orders are not 1..%d (first bad: %r)"
               % (proc, lock, len(got), next((g for i, g in enumerate(got) if g != i + 1), None)))
        if exclusive_ids is not None and lock in exclusive_ids:
            by_order = sorted(lst)
            for (o1, t1), (o2, t2) in zip(by_order, by_order[1:]):
                expect(t1 <= t2, "lock %d: acquisition %d at %d after acquisition %d at %d"
                       % (lock, o1, t1, o2, t2))
    return orders


def check_all(tr, require_end=True, allow_open=(), allow_held=(), exclusive_ids=None,
              exit_status=0):
    """exit_status: ProgramEnd status the master must end with (None: no
    ProgramEnd required, e.g. a process ended by its last thread)."""
    try:
        tc.check_timestamps(tr.tc)
        tc.check_program(tr.tc, exit_status)
    except tc.CheckError as e:
        fail(str(e))
    check_nesting(tr, allow_open)
    lc = check_lifecycle(tr, require_end, allow_open=allow_open)
    check_locks(tr, exclusive_ids, allow_held)
    return lc


def summary(tr):
    c = collections.Counter()
    for evs in tr.events.values():
        for e in evs:
            c[type(e).__name__] += 1
    return ", ".join("%s %d" % kv for kv in sorted(c.items()))
