#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs abt_prog (stand-in libabt.so) under libtracer.so and checks the
archive with the reference reader.

  tasks    tool interface present: ThreadTaskCreate/Switch/Complete with
           creating thread = the creator's rank in the "Argobots" thread team
           and per-thread generation numbers; every Enter/Leave nests per
           task (a region begun in a ULT on one stream ends on the other);
           YIELD/SUSPEND switches carry the sync-object attributes.
  no_tool  register returns ABT_ERR_FEATURE_NA: exactly one "tracer:" line
           about Argobots, no task records, the rest is traced.

usage: check_abt.py MODE PROGRAM LIBTRACER WORKDIR
"""
import os
import sys

import otf2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

MODE, PROG, LIB, WORK = sys.argv[1:5]
ck = rc.Checker()
fail = ck.fail

# (linked against libtracer.so and the stand-in libabt.so: no untraced run to compare with)
p, anchor = rc.run_traced([PROG], LIB, WORK, {"ABTD_NO_TOOL": "1"} if MODE == "no_tool" else None)
ck.expect(p.returncode == 0, "program exit %d" % p.returncode)
rc.expect_lines(ck, p.stdout, ["script rc=0 counter=1", "finalize rc=0"])
abt_lines = [l for l in rc.tracer_lines(p.stderr) if "Argobots" in l]
if MODE == "no_tool" and len(abt_lines) != 1:
    fail("expected one tracer: line about Argobots, got %s" % abt_lines)
if MODE == "tasks" and abt_lines:
    fail("unexpected Argobots messages: %s" % abt_lines)
if not anchor:
    fail("expected one archive under %s" % WORK)
    sys.exit(1)

T = otf2.events
with rc.open_trace(anchor) as trace:
    defs = trace.definitions
    teams = [c for c in defs.comms if c.name == "Argobots"]
    events = list(trace.events)

task_events = [(l, e) for l, e in events
               if isinstance(e, (T.ThreadTaskCreate, T.ThreadTaskSwitch, T.ThreadTaskComplete))]
user_regions = [(l, e) for l, e in events
                if isinstance(e, (T.Enter, T.Leave)) and e.region.name in
                ("work", "inner", "again", "outer", "child", "leak", "migr")]
locs = sorted({l for l, _ in events}, key=lambda l: l._ref)

if MODE == "no_tool":
    if task_events:
        fail("task records although the tool interface is missing: %d" % len(task_events))
    names = [e.region.name for _, e in user_regions if isinstance(e, T.Enter)]
    for n in ["work", "inner", "again", "outer", "child", "leak", "migr"]:
        if n not in names:
            fail("region %s not traced" % n)
    if not any(isinstance(e, T.Enter) and "mutex" in e.region.name for _, e in events):
        fail("pthread mutex inside a ULT not traced")
else:
    if len(teams) != 1:
        fail("expected one Comm 'Argobots', found %s" % [c.name for c in defs.comms])
        sys.exit(1)
    team = teams[0]
    members = list(team.group.members)
    rank_of = {m: i for i, m in enumerate(members)}
    # main thread = location of the first event
    main = events[0][0]
    es1 = [l for l in locs if l != main]
    if not es1:
        fail("only one location")
        sys.exit(1)
    r0, r1 = rank_of.get(main), None
    current = {}          # location -> task key
    stacks = {}           # task key -> [region]
    created = []
    completed = []
    switch_attrs = []
    migrated = False
    enter_loc = {}
    for loc, e in events:
        if loc not in rank_of:
            fail("location %s not in the Argobots team" % loc.name)
            continue
        implicit = (rank_of[loc], 0)
        cur = current.get(loc, implicit)
        if isinstance(e, (T.ThreadTaskCreate, T.ThreadTaskSwitch, T.ThreadTaskComplete)):
            if e.thread_team != team:
                fail("task record with team %s" % e.thread_team)
            key = (e.creating_thread, e.generation_number)
        if isinstance(e, T.ThreadTaskCreate):
            if e.creating_thread != rank_of[loc]:
                fail("Create %s on location of rank %d" % (key, rank_of[loc]))
            if key in created:
                fail("task %s created twice" % (key,))
            created.append(key)
            stacks[key] = []
        elif isinstance(e, T.ThreadTaskSwitch):
            if key != (rank_of[loc], 0) and key not in created:
                fail("switch to unknown task %s" % (key,))
            if key[1] == 0 and key[0] != rank_of[loc]:
                fail("switch to another stream's implicit task %s" % (key,))
            current[loc] = key
            if e.attributes:
                switch_attrs.append({a.name: v for a, v in e.attributes.items()})
        elif isinstance(e, T.ThreadTaskComplete):
            if key not in created or key in completed:
                fail("Complete of %s (created %s, completed %s)" % (key, created, completed))
            if stacks.get(key):
                fail("task %s completes with open regions %s" % (key, stacks[key]))
            completed.append(key)
        elif isinstance(e, T.Enter):
            stacks.setdefault(cur, []).append(e.region.name)
            enter_loc[(cur, e.region.name)] = loc
        elif isinstance(e, T.Leave):
            st = stacks.setdefault(cur, [])
            if not st or st[-1] != e.region.name:
                fail("Leave %s in task %s on %s, stack %s" % (e.region.name, cur, loc.name, st))
            else:
                st.pop()
                if enter_loc.get((cur, e.region.name)) not in (None, loc):
                    migrated = True
    want_created = [(r0, g) for g in range(1, 8)]
    for k in want_created:
        if k not in created:
            fail("missing ThreadTaskCreate %s (have %s)" % (k, created))
    others = [k for k in created if k[0] != r0]
    if len(others) != 1 or others[0][1] != 1:
        fail("unit created on stream 1 should be (rank of stream 1, 1): %s" % others)
    if sorted(created) != sorted(completed):
        fail("created %s but completed %s" % (created, completed))
    for k, st in stacks.items():
        if st:
            fail("task %s ends with open regions %s" % (k, st))
    if not migrated:
        fail("no region was begun on one stream and ended on the other")
    kinds = sorted((a.get("ABT_SYNC_EVENT_TYPE"), bool(a.get("ABT_SYNC_OBJECT"))) for a in switch_attrs)
    if kinds != [(1, False), (1, False), (5, True)]:
        fail("YIELD/SUSPEND attributes: %s" % switch_attrs)
    joins = [e for _, e in events if isinstance(e, T.Enter) and e.region.name == "ABT_thread_join"]
    if len(joins) != 7:
        fail("expected 7 ABT_thread_join regions, got %d" % len(joins))
    n_switch = sum(1 for _, e in task_events if isinstance(e, T.ThreadTaskSwitch))
    if n_switch != 20:
        fail("expected 20 ThreadTaskSwitch records, got %d" % n_switch)
    # unit 5 ran on top of unit 4: its FINISH switches back to unit 4
    sw0 = [(e.creating_thread, e.generation_number) for l, e in task_events
           if l == main and isinstance(e, T.ThreadTaskSwitch)]
    if [(r0, 4), (r0, 5), (r0, 4), (r0, 0)] not in [sw0[i:i + 4] for i in range(len(sw0))]:
        fail("nested run 4 > 5 not seen as switches 4,5,4,implicit on the main stream: %s" % sw0)
    # unit 6 finished with "leak" open: Leave written before its Complete
    names = [(type(e).__name__, getattr(getattr(e, "region", None), "name", None),
              getattr(e, "generation_number", None)) for _, e in events]
    try:
        i = names.index(("Leave", "leak", None))
        if names[i + 1] != ("ThreadTaskComplete", None, 6):
            fail("Leave(leak) not followed by Complete of unit 6: %s" % (names[i:i + 2],))
    except ValueError:
        fail("no Leave of the region left open by unit 6")

sys.exit(ck.done("argobots %s: all checks passed" % MODE))
