# SPDX-License-Identifier: BSD-3-Clause
"""report_lib.py - what the cases of test_report.py share: running a command in
runcheck's clean environment, the archives the cases read (the demo, the
Python writer's, a sampled run, an MPI run), the `tracer` command, and the
comparisons with the reference reader (regions, waits, the timeline's
levels of detail and critical path).
"""
import json
import os
import shutil
import sys

SRC = os.environ.get('SRC', os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get('WORK', '/tmp/report-tests')
PY = sys.executable
sys.path.insert(0, os.path.join(SRC, '..', 'lib'))
import runcheck  # noqa: E402  (not "rc": the cases name exit statuses rc)

ck = runcheck.Checker(stop=True)   # a case stops at its first failed check


def run(cmd, env=None, timeout=300, **kw):
    """cmd in runcheck's clean environment plus env: (exit status, stdout, stderr)."""
    p = runcheck.run_untraced(cmd, env, timeout=timeout, **kw)
    return p.returncode, p.stdout, p.stderr


def workdir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def check_reader(path, min_events):
    rc, out, err = run([PY, os.path.join(SRC, 'check_reader.py'), os.environ['RECORDS_TAB'],
                        os.environ['OTF2R_DUMP'], path, str(min_events)])
    sys.stdout.write(out)
    if rc != 0:
        ck.fail('reader differs from the reference on %s:\n%s' % (path, (out + err)[-3000:]))


def traced_demo(name):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    env = dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out)
    rc, _, err = run([os.environ['DEMO']], env=env)
    if rc != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        ck.fail('demo under the tracer: rc %d\n%s' % (rc, err))
    return out


def py_archive(name, per=2000):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    rc, _, err = run([PY, os.path.join(SRC, 'gen_pyarchive.py'), out, str(per)])
    if rc != 0:
        ck.fail('gen_pyarchive.py: ' + err)
    return out


def mpi_archive(name):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    mpirun, prog = os.environ.get('MPIRUN'), os.environ.get('MPI_DEMO')
    if not mpirun or not prog:
        raise runcheck.Skip('no MPI: skipped')
    p = runcheck.run_mpi(mpirun, 2, [prog], ['TRACER_OUTPUT=' + out], lib=os.environ['TRACER_LIB'], timeout=120)
    rc, err = p.returncode, p.stderr
    if rc != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        ck.fail('mpirun demo_mpi under the tracer: rc %d\n%s' % (rc, err[-2000:]))
    return out


def tracer(*args, ok=True):
    rc, out, err = run([os.environ['TRACER']] + list(args))
    if ok and rc != 0:
        ck.fail('tracer %s: rc %d\n%s' % (' '.join(args), rc, err))
    return rc, out, err


def sampled_archive(name, **extra):
    """smp_accuracy (three CPU-bound leaves) sampled at 1 ms"""
    prog = os.environ.get('SMP_PROG')
    if not prog:
        raise runcheck.Skip('sampling test program not built: skipped')
    d = workdir(name)
    out = os.path.join(d, 'archive')
    env = dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out,
               TRACER_SAMPLING='1ms', SMP_CPU_SECONDS='0.3', **extra)
    rc, _, err = run([prog], env=env)
    if rc != 0:
        ck.fail('sampled program: rc %d %s' % (rc, err))
    sampled_archive.stderr = err
    return d, out


def traced_test_prog(name, var, what):
    """a test program of another area ($var) under the tracer"""
    prog = os.environ.get(var)
    if not prog:
        raise runcheck.Skip('%s test program not built: skipped' % what)
    d = workdir(name)
    out = os.path.join(d, 'archive')
    env = dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out)
    rc, _, err = run([prog], env=env, cwd=d)
    if not os.path.exists(os.path.join(out, 'traces.otf2')):
        ck.fail('%s program: rc %d %s' % (what, rc, err))
    return out


def mpi_run(name, env_prog, np):
    prog, mpirun = os.environ.get(env_prog), os.environ.get('MPIRUN')
    if not prog or not mpirun:
        raise runcheck.Skip('no MPI: skipped')
    d = workdir(name)
    out = os.path.join(d, 'archive')
    p = runcheck.run_mpi(mpirun, np, [prog], ['TRACER_OUTPUT=' + out], lib=os.environ['TRACER_LIB'], timeout=120)
    if p.returncode != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        ck.fail('mpirun %s under the tracer: rc %d\n%s' % (name, p.returncode, p.stderr[-2000:]))
    return out


def ref_regions(anchor, window=None, ticks=False, by_loc=False):
    """The reference reader's figures per region name over all locations:
    {name: [calls, exclusive seconds]} (a region's time minus the time of
    the regions entered inside it; a CallingContextEnter/Leave, --callers
    or sampling, is its context's region's). window (from, to) in ticks: the
    calls that begin in it, the time spent in it (times clamped to it).
    by_loc: per location, {location id: {name: [calls, exclusive]}}."""
    import otf2
    from otf2.events import Enter, Leave, CallingContextEnter, CallingContextLeave
    figs, stacks = {}, {}
    lo, hi = window or (0, 1 << 64)
    with otf2.reader.open(anchor) as r:
        res = float(r.definitions.clock_properties.timer_resolution)
        for loc, ev in r.events:
            st = stacks.setdefault(loc, [])
            fig = figs.setdefault(loc._ref if by_loc else None, {})
            t = min(max(ev.time, lo), hi)
            if isinstance(ev, (Enter, CallingContextEnter)):
                if st:
                    fig[st[-1][0]][1] += t - st[-1][1]
                name = ev.region.name if isinstance(ev, Enter) else ev.calling_context.region.name
                fig.setdefault(name, [0, 0])[0] += 1 if lo <= ev.time < hi else 0
                st.append([name, t])
            elif isinstance(ev, (Leave, CallingContextLeave)) and st:
                name, since = st.pop()
                fig[name][1] += t - since
                if st:
                    st[-1][1] = t
    figs = {loc: {k: [v[0], v[1] if ticks else v[1] / res] for k, v in fig.items()} for loc, fig in figs.items()}
    return figs if by_loc else figs.get(None, {})


def compare_report(archive, min_regions, want_messages=False, want_locks=False, want_samples=False,
                   want_metrics=False, want_classes=False):
    """tracer report --json against oracle_report.py (reference reader)"""
    sys.path.insert(0, SRC)
    import oracle_report
    _, out, _ = tracer('report', '--json', '--limit', '0', archive)
    ours = json.loads(out)
    locs, enters, sends, send_bytes = oracle_report.compute(ours['archive'])
    errors = []
    if ours['events'] != sum(L['events'] for L in locs.values()):
        errors.append('events %d, reference %d' % (ours['events'], sum(L['events'] for L in locs.values())))
    compared = 0
    totals = {}
    for OL in ours['locations']:
        L = locs[OL['id']]
        for k in ('events', 'first', 'last', 'busy', 'process', 'late_sender', 'late_receiver', 'wait_nxn',
                  'late_broadcast', 'early_reduce',
                  'tasks'):
            if L[k] is not None and OL[k] != L[k]:
                errors.append('location %d %s: ours %s, reference %s' % (OL['id'], k, OL[k], L[k]))
        ref = {r: s for r, s in L['regions'].items() if s['calls']}
        mine = {x['id']: x for x in OL['regions']}
        if set(ref) != set(mine):
            errors.append('location %d regions: ours %s, reference %s' % (OL['id'], sorted(mine), sorted(ref)))
        for r, s in ref.items():
            m = mine.get(r, {})
            for k in ('calls', 'incl', 'excl', 'min', 'max'):
                if m.get(k) != s[k]:
                    errors.append('location %d region %d %s: ours %s, reference %s'
                                  % (OL['id'], r, k, m.get(k), s[k]))
            compared += 1
            t = totals.setdefault(r, dict(calls=0, incl=0, excl=0))
            for k in t:
                t[k] += s[k]
    for x in ours['regions']:
        for k in ('calls', 'incl', 'excl'):
            if totals.get(x['id'], {}).get(k) != x[k]:
                errors.append('total region %s %s: ours %s, reference %s'
                              % (x['name'], k, x[k], totals.get(x['id'], {}).get(k)))
    if len(ours['regions']) != len(totals):
        errors.append('regions with calls: ours %d, reference %d' % (len(ours['regions']), len(totals)))
    for P in ours['processes']:
        ptot = {}
        for L in locs.values():
            if L['process'] != P['id']:
                continue
            for r, st in L['regions'].items():
                if st['calls']:
                    t = ptot.setdefault(r, [0, 0, 0])
                    t[0] += st['calls']
                    t[1] += st['incl']
                    t[2] += st['excl']
        mine = {x['id']: [x['calls'], x['incl'], x['excl']] for x in P['regions']}
        if mine != ptot:
            errors.append('process %d regions: ours %s, reference %s' % (P['id'], mine, ptot))
        c = sum(m['count'] for m in P['messages_to'])
        b = sum(m['bytes'] for m in P['messages_to'])
        if c != sends[P['id']] or b != send_bytes[P['id']]:
            errors.append('process %d messages sent: ours %d/%d bytes, reference %d/%d'
                          % (P['id'], c, b, sends[P['id']], send_bytes[P['id']]))
    mine = {(x['process'], x['lock']): x for x in ours['locks']}
    if set(mine) != set(oracle_report.compute.locks):
        errors.append('locks: ours %s, reference %s' % (sorted(mine), sorted(oracle_report.compute.locks)))
    for key, (acq, wait, mx, who) in oracle_report.compute.locks.items():
        x = mine.get(key, {})
        if (x.get('acquisitions'), x.get('wait'), x.get('max')) != (acq, wait, mx) or \
                {w['location']: w['wait'] for w in x.get('waiters', [])} != dict(who):
            errors.append('lock %s: ours %s, reference %s %s %s %s' % (key, x, acq, wait, mx, dict(who)))
        if x.get('address', 0) != oracle_report.compute.lock_address.get(key, 0):
            errors.append('lock %s: address ours %s, reference %s' % (key, x.get('address'),
                                                                      oracle_report.compute.lock_address.get(key)))
    mine = {(x['region'], x['member']): x for x in ours['metrics']}
    refm = oracle_report.compute.metrics
    if set(mine) != set(refm):
        errors.append('metrics per region: ours %s, reference %s' % (sorted(mine), sorted(refm)))
    for k, (n, v) in refm.items():
        x = mine.get(k, {})
        if x.get('calls') != n or abs(x.get('incl', 1e300) - v) > 1e-9 * max(1.0, abs(v)):
            errors.append('metric %s: ours %s, reference %d calls %r' % (k, x, n, v))
    if want_metrics and not refm:
        errors.append('no metric per region')
    mine = {x['group']: [x['calls'], x['excl']] for x in ours['classes']}
    if mine != oracle_report.compute.classes:
        errors.append('region classes: ours %s, reference %s' % (mine, oracle_report.compute.classes))
    if want_classes and not mine:
        errors.append('no region class (REGIONS group)')
    mine = {x['comm']: [x['operations'], x['time'], x['calls']] for x in ours['collectives']}
    if mine != {k: v[:3] for k, v in oracle_report.compute.collectives.items()}:
        errors.append('collectives: ours %s, reference %s' % (mine, oracle_report.compute.collectives))
    if want_messages and not mine:
        errors.append('no MPI collective in the archive')
    total, fself, ftotal = oracle_report.compute.samples
    S = ours['samples']
    if S['total'] != total:
        errors.append('samples: ours %d, reference %d' % (S['total'], total))
    mine = {x['id']: (x['self'], x['total']) for x in S['functions']}
    refs = {r: (fself.get(r, 0), n) for r, n in ftotal.items()}
    if mine != refs:
        errors.append('samples per function: ours %s, reference %s' % (mine, refs))
    if want_samples and total < 10:
        errors.append('only %d samples' % total)
    if want_locks and not oracle_report.compute.locks:
        errors.append('no lock in the archive')
    if want_messages and not sum(sends.values()):
        errors.append('no MPI message in the archive')
    if compared < min_regions:
        errors.append('only %d (location, region) pairs compared' % compared)
    for e in errors[:20]:
        print('FAIL: ' + e, file=sys.stderr)
    if errors:
        ck.fail('%d figures differ from the reference reader\'s' % len(errors))
    print('report figures identical to the reference reader: %d locations, %d (location, region) '
          'pairs, %d events, %d messages, %d locks, %d samples'
          % (len(ours['locations']), compared, ours['events'], sum(sends.values()),
             len(ours['locks']), total))
    return ours


def compare_waits(archive, *args, ranks=None, threads=None):
    """tracer report --json [selection] ARCHIVE against oracle_report.waits
    (the reference reader's events): the wait figures per location, who
    waits on whom (time and count per kind and pair), the critical path
    (its segments, time per location and per region); and the path's
    invariants: length = the run's span, segments tiling it, per-location
    times adding up to it. Returns (our JSON, the oracle's)."""
    sys.path.insert(0, SRC)
    import oracle_report
    j = json.loads(tracer('report', '--json', '--limit', '0', *(list(args) + [archive]))[1])
    w = j.get('window')
    ref = oracle_report.waits(j['archive'], (w['from'], w['to']) if w else None, ranks, threads)
    errors = []
    for L in j['locations']:
        for k in oracle_report.KINDS:
            if L[k] != ref['locs'][L['id']][k]:
                errors.append('location %d %s: ours %d, reference %d' % (L['id'], k, L[k], ref['locs'][L['id']][k]))
    mine = {(p['waiter'], p['waits_for']): {k: p[k] for k in oracle_report.KINDS} for p in j['wait_pairs']}
    if mine != ref['pairs']:
        errors.append('who waits on whom: ours %s, reference %s' % (mine, ref['pairs']))
    for p in j['wait_pairs']:
        if p['time'] != sum(p[k][0] for k in oracle_report.KINDS) or \
                p['count'] != sum(p[k][1] for k in oracle_report.KINDS):
            errors.append('pair %s: total %d/%d is not the sum of its kinds' % (p, p['time'], p['count']))
    # per waiter and kind, the pairs add up to the location's figure
    for L in j['locations']:
        for k in oracle_report.KINDS:
            s = sum(p[k][0] for p in j['wait_pairs'] if p['waiter'] == L['id'])
            if s != L[k]:
                errors.append('location %d %s %d, its pairs add up to %d' % (L['id'], k, L[k], s))
    cp, rp = j.get('critical_path'), ref['path']
    if (cp is None) != (rp is None):
        errors.append('critical path: ours %s, reference %s' % (cp is not None, rp is not None))
    elif cp:
        if (cp['start'], cp['end'], cp['length']) != (j['first'], j['last'], j['last'] - j['first']):
            errors.append('path %d..%d (%d), the run %d..%d' % (cp['start'], cp['end'], cp['length'], j['first'],
                                                               j['last']))
        segs = cp['segments']
        if segs[0][1] != cp['start'] or segs[-1][2] != cp['end'] or \
                any(a[2] != b[1] for a, b in zip(segs, segs[1:])) or len(segs) != cp['nsegments']:
            errors.append('the segments do not tile the run: %s' % segs[:6])
        if sum(x['time'] for x in cp['locations']) != cp['length']:
            errors.append('per-location path times add up to %d, not %d' % (
                sum(x['time'] for x in cp['locations']), cp['length']))
        if sum(x['time'] for x in cp['regions']) + cp['outside'] != cp['length']:
            errors.append('per-region path times + outside add up to %d, not %d' % (
                sum(x['time'] for x in cp['regions']) + cp['outside'], cp['length']))
        got = dict(start=cp['start'], end=cp['end'], end_location=cp['end_location'], jumps=cp['jumps'],
                   segments=segs, locations={x['id']: x['time'] for x in cp['locations']},
                   regions={x['id']: x['time'] for x in cp['regions']}, outside=cp['outside'])
        for k in got:
            if got[k] != rp[k]:
                errors.append('critical path %s: ours %s, reference %s' % (k, got[k], rp[k]))
        excl = {x['id']: x['excl'] for x in j['regions']}
        for x in cp['regions']:
            if x['excl'] != excl.get(x['id']) or x['time'] > x['excl']:
                errors.append('path region %s: %d on the path, excl %d (regions table %s)' % (
                    x['name'], x['time'], x['excl'], excl.get(x['id'])))
    for e in errors[:20]:
        print('FAIL: ' + e, file=sys.stderr)
    if errors:
        ck.fail('%d wait/path figures differ from the reference reader\'s (%s)' % (len(errors), ' '.join(args)))
    print('waits %s: %d pairs, %d wait states, path of %s segments = the reference reader\'s' % (
        ' '.join(args) or '(whole run)', len(mine), len(ref['records']), cp['nsegments'] if cp else 'no'))
    return j, ref


def lod_data(text):
    """The page's levels of detail (<script id="lod">): there, each level
    REP_LOD_STEP (8) times the bins of the one above from level 0's 1000, a
    row of runs per timeline row, within the budgets (1M bins of all levels
    and rows, 8 MB of JSON)"""
    import re
    m = re.search(r'<script type="application/json" id="lod">(.*?)</script>', text, re.S)
    if not m:
        ck.fail('no level-of-detail data (<script type="application/json" id="lod">) in the page')
    if len(m.group(1)) > 8.5 * 2 ** 20:
        ck.fail('level-of-detail data of %d bytes (at most 8 MiB)' % len(m.group(1)))
    D = json.loads(m.group(1))
    lv = D.get('levels', [])
    if D.get('nb0') != 1000 or D.get('step') != 8 or not lv:
        ck.fail('level-of-detail data: nb0 %r, step %r, %d levels' % (D.get('nb0'), D.get('step'), len(lv)))
    nbs = [L['nb'] for L in lv]
    if nbs != [1000 * 8 ** (i + 1) for i in range(len(lv))]:
        ck.fail('levels of detail not 8x finer each: %r bins' % nbs)
    if (1000 + sum(nbs)) * len(D['rows']) > 2 ** 20 and len(lv) > 1:
        ck.fail('levels of detail: %d bins in all, over the budget' % ((1000 + sum(nbs)) * len(D['rows'])))
    for L in lv:
        if len(L['r']) != len(D['rows']) or len(L['l']) != len(D['rows']) or \
                any(len(a) % 4 for a in L['r']) or any(len(a) % 3 for a in L['l']):
            ck.fail('level of %d bins: runs of %d/%d rows for %d rows' % (L['nb'], len(L['r']), len(L['l']),
                                                                           len(D['rows'])))
    return D


def check_cpath(dom, j, D, view=None):
    """The critical path on the timeline (<g id="cpath">, translate(L,0)):
    one bar 3 high per segment of the JSON's (j: --limit 0) at the top of the
    row the page draws for its location (the level-of-detail rows: D), from
    its start to its end mapped as the region bars are (level-0 bins of the
    run, at view=(x0, w) the window's: L + (X - x0) * W / w, clipped to a
    window each side), within 0.5 px; its hover text the location and times;
    one vertical line per jump between consecutive segments (time order)
    from the one row to the other at the jump; unzoomed the bars' widths
    add up to the path's length within 0.1 %. Returns (bars, lines)."""
    import re
    cp = j['critical_path']
    segs = cp['segments']
    W, L = 1000.0, float(re.search(r'<svg id="tl"[^>]*data-l="(\d+)"', dom).group(1))
    x0, w = view or (0.0, W)
    S = W / w
    g = re.search(r'<g id="cpath" transform="translate\(([0-9.]+),0\)">(.*?)</g>', dom, re.S)
    if not g or float(g.group(1)) != L:
        ck.fail('no <g id="cpath" transform="translate(%d,0)"> in the page' % L)
    # above the region bars (#bars, #detail), below the message lines
    if not dom.index('<g id="detail"') < dom.index('<g id="cpath"') < dom.index('<g id="msgs"'):
        ck.fail('#cpath not between #detail and #msgs')
    attrs = [(tag, dict(re.findall(r'([\w-]+)="([^"]*)"', a)))
             for tag, a in re.findall(r'<(rect|line) ([^>]*)>', g.group(2))]
    bars = [a for t, a in attrs if t == 'rect']
    lines = [a for t, a in attrs if t == 'line']
    row = {x['id']: x['y'] for x in D['rows']}
    name = {x['id']: x['name'] for x in j['locations']}
    res = j['resolution']

    def X(t):   # time -> x in #cpath's coordinates
        return max(-W, min(2 * W, ((t - D['t0']) / D['span'] * W - x0) * S))
    if len(bars) != len(segs) or not segs:
        ck.fail('%d critical path bars in the page, %d segments in the JSON' % (len(bars), len(segs)))
    errors, total = [], 0.0
    for (loc, a, b), r in zip(segs, bars):
        x, wd, y = float(r['x']), float(r['width']), float(r['y'])
        if y != row[loc] or float(r['height']) != 3 or abs(x - X(a)) > 0.5 or abs(x + wd - X(b)) > 0.5:
            errors.append('segment %r: bar x %.4f-%.4f y %g, want %.4f-%.4f y %d' % (
                (loc, a, b), x, x + wd, y, X(a), X(b), row[loc]))
        m = re.match(r'critical path \| (.*) \| ([0-9.]+)-([0-9.]+) ms$', r.get('data-t', ''))
        if not m or m.group(1).replace('&amp;', '&') != name[loc] or \
                abs(float(m.group(2)) - (a - D['t0']) / res * 1e3) > 0.0006 or \
                abs(float(m.group(3)) - (b - D['t0']) / res * 1e3) > 0.0006:
            errors.append('segment %r: hover text %r' % ((loc, a, b), r.get('data-t')))
        total += wd
    jumps = [(p, q) for p, q in zip(segs, segs[1:]) if p[0] != q[0]]
    if len(lines) != len(jumps):
        errors.append('%d connector lines, %d jumps between consecutive segments' % (len(lines), len(jumps)))
    for (p, q), ln in zip(jumps, lines):
        if abs(float(ln['x1']) - X(q[1])) > 0.5 or ln['x1'] != ln['x2'] or \
                sorted((float(ln['y1']), float(ln['y2']))) != sorted((row[p[0]] + 1.5, row[q[0]] + 1.5)):
            errors.append('jump %r -> %r: line %r' % (p, q, ln))
    if view is None and abs(total * D['span'] / W - cp['length']) > 0.001 * cp['length']:
        errors.append('bars of %.1f ticks in all, the path %d' % (total * D['span'] / W, cp['length']))
    for e in errors[:10]:
        print('FAIL: ' + e, file=sys.stderr)
    if errors:
        ck.fail('%d errors in the critical path on the timeline' % len(errors))
    if view is None and not re.search(r'<p id="cpath_note">dark bars: the critical path, %.3f ms' % (
            cp['length'] / res * 1e3), dom):
        ck.fail('no caption of the critical path under the timeline')
    return len(bars), len(lines)
