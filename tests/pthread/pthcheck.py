#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a program under libtracer.so and check the pthread content of the
archive with the reference reader (python3-otf2, /usr/bin/python3 only).
Built on the shared tests/lib/tracecheck.py (loading, otf2-print,
timestamps, ProgramBegin/End).

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
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck as tc  # noqa: E402  (shared: tests/lib/tracecheck.py)
import otf2  # noqa: E402
from otf2.events import (Enter, Leave, ThreadAcquireLock, ThreadBegin, ThreadCreate,
                         ThreadEnd, ThreadReleaseLock, ThreadWait)


class CheckError(Exception):
    pass


def fail(msg):
    raise CheckError(msg)


def expect(cond, msg):
    if not cond:
        fail(msg)


def run_traced(cmd, outdir, lib, env_extra=None, stdout=None, stdin=None, timeout=120,
               expect_rc=0):
    """Run cmd with the tracer preloaded (only into this child) writing into
    outdir (fresh). Returns the CompletedProcess."""
    shutil.rmtree(outdir, ignore_errors=True)
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    env["TRACER_OUTPUT"] = outdir
    env.setdefault("TRACER_VERBOSE", "1")
    if env_extra:
        env.update(env_extra)
    p = subprocess.run(cmd, env=env, stdin=stdin,
                       stdout=stdout if stdout is not None else subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    if stdout is None:
        sys.stdout.write(p.stdout.decode(errors="replace"))
    sys.stderr.write(p.stderr.decode(errors="replace"))
    if expect_rc is not None:
        expect(p.returncode == expect_rc,
               "%s exited with %d (expected %d)" % (cmd[0], p.returncode, expect_rc))
    return p


def find_anchor(outdir):
    anchors = glob.glob(os.path.join(outdir, "*.otf2")) + glob.glob(os.path.join(outdir, "*", "*.otf2"))
    expect(len(anchors) == 1, "expected one anchor file under %s, found %r" % (outdir, anchors))
    return anchors[0]


class Trace:
    """All events of an archive, grouped per location in file order (the
    reference event objects), on top of the shared tests/lib/tracecheck."""

    def __init__(self, anchor):
        self.anchor = anchor
        self.tc = tc.load(anchor)
        tc.otf2_print(anchor)   # the reference tool must read it too
        self.events = collections.OrderedDict()
        self.names = {}
        for loc in self.tc.locations:
            self.events[loc.id] = [e.ev for e in loc.events]
            self.names[loc.id] = loc.name
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


def check_lifecycle(tr, require_end=True, allow_unstarted=0, allow_open=()):
    """Returns {seq: (create_loc, begin_loc)}, the Waits by seq."""
    creates, begins, ends, waits = {}, {}, {}, {}
    for loc, evs in tr.events.items():
        for i, e in enumerate(evs):
            if isinstance(e, ThreadCreate):
                expect(e.sequence_count not in creates, "ThreadCreate seq %d twice" % e.sequence_count)
                creates[e.sequence_count] = (loc, e)
            elif isinstance(e, ThreadBegin):
                expect(i == 0, "%s: ThreadBegin is event %d, not the first" % (tr.names[loc], i))
                expect(e.sequence_count not in begins, "ThreadBegin seq %d twice" % e.sequence_count)
                begins[e.sequence_count] = (loc, e)
            elif isinstance(e, ThreadEnd):
                # nothing of the thread after its end; a thread ended at exit
                # (allow_open) may get the Leaves that close its open regions
                after = [x for x in evs[i + 1:]
                         if isinstance(x, (ThreadAcquireLock, ThreadReleaseLock, ThreadEnd,
                                           ThreadCreate, ThreadWait)) or
                         (isinstance(x, (Enter, Leave)) and x.region.paradigm == otf2.Paradigm.PTHREAD and
                          not (loc in allow_open and isinstance(x, Leave)))]
                expect(not after, "%s: pthread events after ThreadEnd: %r"
                       % (tr.names[loc], [type(x).__name__ for x in after[:5]]))
                expect(e.sequence_count not in ends, "ThreadEnd seq %d twice" % e.sequence_count)
                ends[e.sequence_count] = (loc, e)
            elif isinstance(e, ThreadWait):
                expect(e.sequence_count not in waits, "ThreadWait seq %d twice" % e.sequence_count)
                waits[e.sequence_count] = (loc, e)
    for kind, d in (("ThreadCreate", creates), ("ThreadBegin", begins), ("ThreadEnd", ends),
                    ("ThreadWait", waits)):
        for seq, (loc, e) in d.items():
            expect(e.thread_contingent is not None and e.thread_contingent.name,
                   "%s seq %d without a thread contingent" % (kind, seq))
    for seq, (loc, e) in begins.items():
        expect(seq in creates, "ThreadBegin seq %d on %s has no ThreadCreate" % (seq, tr.names[loc]))
        cloc, c = creates[seq]
        expect(cloc != loc, "ThreadCreate and ThreadBegin seq %d on one location" % seq)
        expect(c.time <= e.time, "ThreadBegin seq %d before its ThreadCreate" % seq)
        expect(c.thread_contingent == e.thread_contingent, "seq %d: contingents differ" % seq)
    unstarted = [s for s in creates if s not in begins]
    expect(len(unstarted) <= allow_unstarted,
           "ThreadCreate without ThreadBegin: seqs %r" % unstarted)
    for seq, (loc, e) in ends.items():
        expect(seq in begins, "ThreadEnd seq %d without ThreadBegin" % seq)
        expect(begins[seq][0] == loc, "ThreadEnd seq %d on another location than its Begin" % seq)
    if require_end:
        for seq, (loc, e) in begins.items():
            expect(seq in ends, "thread %s (seq %d) has no ThreadEnd" % (tr.names[loc], seq))
    for seq, (loc, e) in waits.items():
        expect(seq in ends, "ThreadWait seq %d without ThreadEnd" % seq)
        expect(ends[seq][1].time <= e.time, "ThreadWait seq %d before the ThreadEnd" % seq)
    return creates, begins, ends, waits


def check_locks(tr, exclusive_ids=None, allow_held=()):
    """Pairs per location; orders 1..N per lock. exclusive_ids: locks whose
    acquisition times must follow their orders (mutex/spin/write locks)."""
    orders = collections.defaultdict(list)    # lock -> [(order, time)]
    for loc, evs in tr.events.items():
        held = collections.defaultdict(list)
        for e in evs:
            if isinstance(e, ThreadAcquireLock):
                expect(e.model == otf2.Paradigm.PTHREAD, "acquire with paradigm %s" % e.model)
                held[e.lock_id].append(e.acquisition_order)
                orders[e.lock_id].append((e.acquisition_order, e.time))
            elif isinstance(e, ThreadReleaseLock):
                expect(e.acquisition_order in held[e.lock_id],
                       "%s: release of lock %d order %d that it does not hold (holds %r)"
                       % (tr.names[loc], e.lock_id, e.acquisition_order, held[e.lock_id]))
                held[e.lock_id].remove(e.acquisition_order)
        if loc not in allow_held:
            left = {k: v for k, v in held.items() if v}
            expect(not left, "%s: locks held at the end: %r" % (tr.names[loc], left))
    for lock, lst in orders.items():
        got = sorted(o for o, _ in lst)
        expect(got == list(range(1, len(got) + 1)),
               "lock %d: acquisition orders are not 1..%d (first bad: %r)"
               % (lock, len(got), next((g for i, g in enumerate(got) if g != i + 1), None)))
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
