#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_callers.py - TRACER_CALLERS and the report's callers table.

callers_prog.c runs untraced and with TRACER_CALLERS=on (no sampling): the
same stdout (its /proc/self/task count is 1 in both: the calling contexts
need no thread of ours), and the archive's pthread_mutex_lock calls are
CallingContextEnter/Leave records. `tracer report --json` names, for the
lock calls, the two calling functions at the lines of the program's
source marked "CALL <function>", with 200 and 2000 calls; every caller's
time and call count equal those the reference reader gives (python3-otf2:
the parent context of each call's context, tracer frames skipped; the
durations from CallingContextEnter to its Leave). The text report has the
table. Environment: TRACER_LIB, TRACER, CALLERS_PROG, WORK, SRC.
"""
import collections
import json
import os
import re
import shutil
import sys

SRC = os.environ.get('SRC', os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, '..', 'lib'))
import runcheck  # noqa: E402

ck = runcheck.Checker()


def source_lines():
    """{function: line} of the "CALL <function>" marks of callers_prog.c"""
    out = {}
    with open(os.path.join(SRC, 'callers_prog.c')) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r'/\* CALL (\w+) \*/', line)
            if m:
                out[m.group(1)] = n
    return out


def reference_callers(anchor):
    """{(call, caller, line): [calls, ticks]} from the reference reader"""
    import otf2
    got = collections.defaultdict(lambda: [0, 0])
    with otf2.reader.open(anchor) as r:
        open_at = collections.defaultdict(list)
        for loc, ev in r.events:
            name = type(ev).__name__
            if name == 'CallingContextEnter':
                open_at[loc].append((ev.calling_context, ev.time))
            elif name == 'CallingContextLeave':
                cc, t0 = open_at[loc].pop()
                p = cc.parent
                while p is not None and p.region.name == '[tracer]':
                    p = p.parent
                if p is None:
                    continue
                scl = p.source_code_location
                line = '%s:%d' % (scl.file, scl.line_number) if scl is not None else '-'
                k = got[(cc.region.name, p.region.name, line)]
                k[0] += 1
                k[1] += ev.time - t0
    return got


def main():
    prog, lib, tracer = os.environ['CALLERS_PROG'], os.environ['TRACER_LIB'], os.environ['TRACER']
    work = os.path.join(os.environ.get('WORK', '/tmp/report-tests'), 'callers')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, 'archive')
    base = runcheck.run_untraced([prog], timeout=120)
    traced = runcheck.run_untraced([prog], dict(LD_PRELOAD=lib, TRACER_OUTPUT=out, TRACER_CALLERS='on'),
                                   timeout=120)
    ck.expect(base.returncode == 0 and base.stdout.startswith('tasks 1 '), 'untraced: %r' % base.stdout)
    ck.expect(traced.returncode == 0 and traced.stdout == base.stdout,
              'traced stdout %r, untraced %r' % (traced.stdout, base.stdout))
    anchor = os.path.join(out, 'traces.otf2')
    want = source_lines()
    ref = reference_callers(anchor)
    p = runcheck.run_untraced([tracer, 'report', '--json', out], timeout=120)
    ck.expect(p.returncode == 0, 'tracer report --json: %s' % p.stderr[-500:])
    rows = json.loads(p.stdout)['callers']
    mine = {(c['call'], c['caller'], c['line']): [c['calls'], c['time']] for c in rows}
    lock = {k: v for k, v in mine.items() if k[0] == 'pthread_mutex_lock'}
    for fn, n in (('hold_long', 200), ('take_short', 2000)):
        at = [k for k in lock if k[1] == fn]
        ck.expect(len(at) == 1 and at[0][2].endswith('callers_prog.c:%d' % want[fn]),
                  'pthread_mutex_lock in %s: callers %r, want line %d' % (fn, at, want[fn]))
        if at:
            ck.expect(lock[at[0]][0] == n, '%s: %d lock calls, want %d' % (fn, lock[at[0]][0], n))
    ref = dict(ref)
    diff = sorted(k for k in set(mine) | set(ref) if mine.get(k) != ref.get(k))
    ck.expect(not diff, 'callers differ from the reference reader\'s: %r' %
              [(k, mine.get(k), ref.get(k)) for k in diff[:5]])
    p = runcheck.run_untraced([tracer, 'report', out], timeout=120)
    ck.expect('Callers of the traced calls' in p.stdout and 'take_short' in p.stdout, 'text report: no callers table')
    print('ok callers: %d rows, lock calls by %s' % (len(rows), sorted(k[1] for k in lock)))
    sys.exit(ck.done())


if __name__ == '__main__':
    main()
