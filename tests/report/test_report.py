#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_report.py CASE - tests of our OTF2 reader and the `tracer` command.

Environment (set by CMakeLists.txt): RECORDS_TAB, OTF2R_DUMP, FMT_DUAL (may
be empty), TRACER_LIB, DEMO, TRACER (build/bin/tracer), WORK, SRC, MPIRUN,
MPI_DEMO, CHROMIUM.
Every archive is also read by the reference reader (python3-otf2), the
oracle for every number checked.
"""
import gzip
import glob
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


def case_report_pywriter():
    ours = compare_report(py_archive('report_pywriter'), 20, want_messages=True)
    if not sum(L['late_sender'] for L in ours['locations']):
        ck.fail('no late-sender time in an archive with receives posted before their sends')
    if not sum(L['late_receiver'] for L in ours['locations']):
        ck.fail('no late-receiver time in an archive with sends before their receives')


def case_report_demo():
    a = traced_demo('report_demo')
    compare_report(a, 10, want_locks=True)
    # thread%: a region's exclusive time as a share of the threads' time (the
    # sum of the locations' durations), from the JSON's figures
    j = json.loads(tracer('report', '--json', '--limit', '0', a)[1])
    threads = sum(L['last'] - L['first'] for L in j['locations'])
    want = {x['name']: 100.0 * x['excl'] / threads for x in j['regions']}
    out = tracer('report', '--limit', '0', a)[1].split('Regions, all locations')[1].split('\n\n')[0]
    rows = [l.split() for l in out.splitlines()[2:] if l.strip()]
    got = {r[0]: float(r[4].rstrip('%')) for r in rows}
    bad = {k: (v, round(want.get(k, -1), 1)) for k, v in got.items() if abs(v - want.get(k, -1)) > 0.051}
    if bad or not got or sum(got.values()) > 100.5:
        ck.fail('thread%% per region (got, want): %r' % bad)


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


def case_report_sampling():
    d, out = sampled_archive('report_sampling', TRACER_METRICS='rusage::minflt')
    ours = compare_report(out, 2, want_samples=True, want_metrics=True)
    names = [f['name'] for f in ours['samples']['functions'][:3]]
    if sorted(names) != ['leaf_a', 'leaf_b', 'leaf_c'] or ':' not in ours['samples']['functions'][0]['line']:
        ck.fail('top self functions %s (want the three leaves, with file:line)' % ours['samples']['functions'][:3])
    # the facts: asked and delivered rate, samples/deferred/lost as the tracer's exit line said
    import re
    _, text, _ = tracer('report', out)
    line = [l for l in text.splitlines() if l.startswith('sampling ')]
    said = re.search(r'tracer: sampling: (\d+) samples on \d+ threads \((\d+) deferred, (\d+) lost',
                     sampled_archive.stderr)
    if not line or not said:
        ck.fail('no sampling facts: report %r, exit line %r' % (line, sampled_archive.stderr))
    m = re.search(r'asked (\d+)/s .*samples (\d+), deferred (\d+), lost (\d+)', line[0])
    if not m or m.group(1) != '1000' or m.groups()[1:] != said.groups():
        ck.fail('sampling facts %r, the exit line said %s' % (line[0], said.groups()))
    # the process column of the thread table: the whole name (pid included)
    import otf2
    with otf2.reader.open(runcheck.find_anchor(out)) as tr:
        groups = [g.name for g in tr.definitions.location_groups]
    threads = text.split('Threads (locations):', 1)[-1].split('\n\n', 1)[0]
    cut = [g for g in groups if g not in threads]
    if cut:
        ck.fail('thread table: process names %s not printed whole' % cut)
    # --collapsed: one "a;b;c N" line per call path, the counts those of the
    # reference reader (samples per path of function names)
    import collections
    coll = os.path.join(d, 'stacks.txt')
    tracer('report', '--collapsed', coll, out)
    got = collections.Counter()
    for l in open(coll).read().splitlines():
        path, n = l.rsplit(' ', 1)
        if path in got:
            ck.fail('collapsed stacks: %r twice' % path)
        got[path] = int(n)
    want = collections.Counter()
    _, evs, _ = runcheck.read_back(runcheck.find_anchor(out))
    for lst in evs.values():
        for ev in lst:
            if type(ev).__name__ == 'CallingContextSample':
                names, c = [], ev.calling_context
                while c is not None:
                    names.append(c.region.name.replace(';', ','))
                    c = c.parent
                want[';'.join(reversed(names))] += 1
    if got != want:
        ck.fail('collapsed stacks: %d paths, %d samples; the reference reader: %d paths, %d samples; e.g. %s' %
                (len(got), sum(got.values()), len(want), sum(want.values()),
                 sorted(set(got.items()) ^ set(want.items()))[:3]))
    print('report_sampling: %d collapsed stacks, %d samples, as the reference reader counts' %
          (len(got), sum(got.values())))


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


def case_report_vt():
    """a VT_* program: region classes"""
    compare_report(traced_test_prog('report_vt', 'VT_PROG', 'VT'), 3, want_classes=True)


def case_report_argobots():
    """Argobots work units (stand-in libabt.so of tests/argobots): tasks per thread"""
    ours = compare_report(traced_test_prog('report_argobots', 'ABT_PROG', 'Argobots'), 1)
    if not sum(L['tasks'][0] for L in ours['locations']):
        ck.fail('no task created')


def case_report_mpi():
    a = mpi_archive('report_mpi')
    compare_report(a, 10, want_messages=True)
    compare_waits(a)


def check_chrome_json(path, archive, want_flows=False, min_regions=100):
    """structure of the Chrome Trace Event file, counts against the reference"""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        doc = json.load(f)
    evs = doc['traceEvents']
    sys.path.insert(0, SRC)
    import oracle_report
    anchor = json.loads(tracer('report', '--json', '--limit', '1', archive)[1])['archive']
    locs, enters, sends, _ = oracle_report.compute(anchor)
    errors = []
    names = {(e['pid'], e.get('tid')): e['args']['name'] for e in evs if e['ph'] == 'M'}
    for L in locs.values():   # pid/tid: the group's and the location's id + 1 (0 is Perfetto's idle task)
        if names.get((L['process'] + 1, L['id'] + 1)) != L['name']:
            errors.append('thread_name of location %d: %s' % (L['id'], names.get((L['process'] + 1, L['id'] + 1))))
        if (L['process'] + 1, None) not in names:
            errors.append('no process_name for process %d' % L['process'])
    zero = [e for e in evs if e.get('pid') == 0 or e.get('tid') == 0]
    if zero:
        errors.append('pid or tid 0 (Perfetto takes it for the idle task): %s' % zero[:2])
    stacks, last, flows = {}, {}, {}
    nb = counters = 0
    for e in evs:
        if e['ph'] == 'M':
            continue
        key = (e['pid'], e['tid'])
        if e['ph'] in ('s', 'f'):
            flows.setdefault(e['id'], []).append(e['ph'])
            continue
        if e['ph'] == 'C':
            counters += 1
            continue
        if e['ts'] < last.get(key, -1e300):
            errors.append('time goes back on tid %s: %s' % (key, e))
        last[key] = e['ts']
        if e['ph'] == 'B':
            nb += 1
            stacks.setdefault(key, []).append(e['name'])
        elif e['ph'] == 'E':
            st = stacks.get(key)
            if not st or st[-1] != e['name']:
                errors.append('E without its B on %s: %s' % (key, e))
            else:
                st.pop()
        elif e['ph'] != 'i':
            errors.append('unexpected event ' + str(e))
        if len(errors) > 10:
            break
    open_ = sum(len(x) for x in stacks.values())
    if open_:
        errors.append('%d B events without their E' % open_)
    if nb != enters:
        errors.append('%d B events, the archive has %d Enter' % (nb, enters))
    if nb < min_regions:
        errors.append('only %d regions' % nb)
    bad = [i for i, v in flows.items() if sorted(v) != ['f', 's']]
    if bad:
        errors.append('%d flows without both ends, e.g. %s' % (len(bad), flows[bad[0]]))
    if want_flows and not flows:
        errors.append('no message flow')
    # I/O slices: the E of an I/O call carries the file and bytes of the
    # IoOperationComplete before its Leave (the reference reader's)
    # and that of a lock call the lock it acquired
    import otf2
    want_io, want_lock = [], []
    with otf2.reader.open(anchor) as tr:
        last, lock = {}, {}
        for loc, ev in tr.events:
            k = type(ev).__name__
            if k == 'IoOperationComplete':
                last[loc._ref] = ev
            elif k == 'ThreadAcquireLock':
                lock[loc._ref] = ev.lock_id
            elif k in ('Leave', 'CallingContextLeave'):
                if loc._ref in last:
                    c = last.pop(loc._ref)
                    want_io.append((c.handle.file.name, None if c.bytes_result == 2 ** 64 - 1 else c.bytes_result))
                if loc._ref in lock:
                    want_lock.append(lock.pop(loc._ref))
    args = [e['args'] for e in evs if e['ph'] == 'E' and 'args' in e]
    got_io = [(a['file'], a.get('bytes')) for a in args if 'file' in a]
    got_lock = [a['lock'] for a in args if 'lock' in a]
    if sorted(got_io, key=repr) != sorted(want_io, key=repr):
        errors.append('I/O slice args: %d, the reference reader %d; e.g. %s' %
                      (len(got_io), len(want_io), sorted(set(got_io) ^ set(want_io), key=repr)[:3]))
    if sorted(got_lock) != sorted(want_lock):
        errors.append('lock slice args: %d, the reference reader %d' % (len(got_lock), len(want_lock)))
    for e in errors:
        print('FAIL: ' + e, file=sys.stderr)
    if errors:
        ck.fail('%d errors in %s' % (len(errors), path))
    print('%s: %d events, %d begin/end pairs, every B has its E, times monotonic per thread, '
          '%d message flows, %d counter values, %d I/O slices with file and bytes, %d lock slices with their lock'
          % (path, len(evs), nb, len(flows), counters, len(got_io), len(got_lock)))


def case_convert_demo():
    a = traced_demo('convert_demo')
    d = os.path.join(WORK, 'convert_demo')
    for name in ('out.json', 'out.json.gz'):
        tracer('convert', a, '-o', os.path.join(d, name))
        check_chrome_json(os.path.join(d, name), a)


def case_convert_mpi():
    a = mpi_archive('convert_mpi')
    out = os.path.join(WORK, 'convert_mpi', 'out.json')
    tracer('convert', '--chrome', out, a)
    check_chrome_json(out, a, want_flows=True)


def case_convert_sampling():
    """samples as instant events with stacks, metrics as counters"""
    d, a = sampled_archive('convert_sampling', TRACER_METRICS='rusage::minflt')
    out = os.path.join(d, 'out.json')
    tracer('convert', a, '-o', out)
    check_chrome_json(out, a, min_regions=1)
    evs = json.load(open(out))['traceEvents']
    samples = [e for e in evs if e.get('cat') == 'sample']
    want = json.loads(tracer('report', '--json', a)[1])['samples']['total']
    if len(samples) != want or want < 10:
        ck.fail('%d sample events, the archive has %d samples' % (len(samples), want))
    if not any(e['name'].startswith('leaf_') and e['args']['stack'][-1] == e['name'] and
               'caller' in e['args']['stack'] for e in samples):
        ck.fail('no sample in a leaf with its stack: %s' % samples[:3])
    counters = [e for e in evs if e['ph'] == 'C']
    if not counters or not all('minflt' in e['name'] for e in counters):
        ck.fail('metric counters: %s' % counters[:3])
    print('convert_sampling: %d samples with stacks, %d counter values' % (len(samples), len(counters)))
    # --perf: the samples as `perf script` text in the grammar Perfetto's
    # perf text importer and stackcollapse-perf.pl parse; per thread, time
    # and stack (innermost first) those of the reference reader
    import collections
    import otf2
    import re
    perf = os.path.join(d, 'samples.txt')
    tracer('convert', a, '--perf', perf)
    head = re.compile(r'^(\S.*) (\d+)/(\d+) \[\d+\] (\d+\.\d{6}): 1 cpu-clock:$')
    frame = re.compile(r'^\t *[0-9a-f]+ (\S.*) \((\S+)\)$')
    got = collections.Counter()
    objects = set()
    for block in open(perf).read().split('\n\n'):
        if not block.strip():
            continue
        lines = block.split('\n')
        m = head.match(lines[0])
        fr = [frame.match(l) for l in lines[1:]]
        if not m or not fr or not all(fr):
            ck.fail('--perf: not a perf script sample: %r' % block[:300])
            return
        objects.update(f.group(2) for f in fr)
        got[(int(m.group(3)), m.group(4), tuple(f.group(1) for f in fr))] += 1
    want = collections.Counter()
    with otf2.reader.open(runcheck.find_anchor(a)) as tr:
        off = tr.definitions.clock_properties.global_offset
        res = tr.timer_resolution
        for loc, ev in tr.events:
            if type(ev).__name__ != 'CallingContextSample':
                continue
            names, c = [], ev.calling_context
            while c is not None:
                names.append(c.region.name)
                c = c.parent
            want[(loc._ref + 1, '%.6f' % ((ev.time - off) / res), tuple(names))] += 1
    if got != want:
        ck.fail('--perf: %d samples, the reference reader %d; e.g. %s' %
                (sum(got.values()), sum(want.values()), sorted(set(got) ^ set(want))[:3]))
    prog = os.path.basename(os.environ['SMP_PROG'])
    if prog not in objects:
        ck.fail('--perf: no frame names the program %s as its object: %s' % (prog, sorted(objects)))
    print('convert_sampling: --perf: %d samples, as the reference reader reads them' % sum(got.values()))


def case_cli():
    """every subcommand has --help; errors are one line and a non-zero status"""
    for cmd in ('report', 'convert', 'diff', 'run', 'merge', 'recover'):
        rc, out, err = tracer(cmd, '--help', ok=False)
        if rc != 0 or 'usage' not in out:
            ck.fail('tracer %s --help: rc %d, stdout %r' % (cmd, rc, out[:200]))
    rc, out, err = tracer('recover', 'x', ok=False)   # nothing to recover: one line, status 1
    if rc != 1 or not err.startswith('tracer: recover: nothing to recover') or len(err.splitlines()) != 1:
        ck.fail('tracer recover: rc %d %r' % (rc, err))
    rc, out, err = tracer('report', '/nonexistent', ok=False)
    if rc != 1 or not err.startswith('tracer: ') or len(err.splitlines()) != 1:
        ck.fail('tracer report /nonexistent: rc %d %r' % (rc, err))
    rc, out, err = tracer('report', '--sort', 'bogus', 'x', ok=False)
    if rc != 2:
        ck.fail('tracer report --sort bogus: rc %d' % rc)
    rc, out, err = tracer('bogus', ok=False)
    if rc != 2:
        ck.fail('tracer bogus: rc %d' % rc)
    # tracer run = the launcher: the program runs and its archive is readable
    d = workdir('cli_run')
    out_dir = os.path.join(d, 'archive')
    p = runcheck.run_untraced([os.environ['TRACER'], 'run', '-o', out_dir, '--', os.environ['DEMO']],
                              {'TRACER_LIB': os.environ['TRACER_LIB']}, binary=True)
    plain = runcheck.run_untraced([os.environ['DEMO']], binary=True)
    if p.returncode != 0 or p.stdout != plain.stdout:
        ck.fail('tracer run demo: rc %d, stdout differs: %s' % (p.returncode, p.stdout != plain.stdout))
    rc, out, err = tracer('report', out_dir)
    if 'pthread_create' not in out:
        ck.fail('tracer report after tracer run: no pthread_create in\n' + out[:2000])
    # --sort, --limit, --location
    full = json.loads(tracer('report', '--json', '--limit', '0', out_dir)[1])
    for key in ('calls', 'incl', 'excl', 'max'):
        top = json.loads(tracer('report', '--json', '--limit', '1', '--sort', key, out_dir)[1])
        best = max(x[key] for x in full['regions'])
        if len(top['regions']) != 1 or top['regions'][0][key] != best:
            ck.fail('--sort %s --limit 1: %s, want %s = %d' % (key, top['regions'], key, best))
    loc = full['locations'][-1]['id']
    one = json.loads(tracer('report', '--json', '--location', str(loc), out_dir)[1])
    if [x['id'] for x in one['locations']] != [loc]:
        ck.fail('--location %d: %s' % (loc, [x['id'] for x in one['locations']]))
    # bad options: one line, status 2, nothing on stdout
    missing = max(x['id'] for x in full['locations']) + 99
    for args, want in ((['--limit', '-3'], '--limit'), (['--location', str(missing)], 'no such location'),
                       (['--location', '-1'], '--location')):
        rc, out, err = tracer('report', *(args + [out_dir]), ok=False)
        if rc != 2 or out or want not in err or len(err.splitlines()) != 1:
            ck.fail('tracer report %s: rc %d, stdout %r, stderr %r' % (' '.join(args), rc, out[:200], err))
    # a damaged archive (an event file cut): one line that names tracer recover and tracer merge
    cut = os.path.join(d, 'cut')
    shutil.copytree(out_dir, cut)
    evt = sorted(glob.glob(os.path.join(cut, 'traces', '*.evt')))[0]
    os.truncate(evt, 30)
    for cmd in (['report', cut], ['convert', '-o', os.path.join(d, 'cut.json'), cut]):
        rc, out, err = tracer(*cmd, ok=False)
        if rc != 1 or len(err.splitlines()) != 1 or 'tracer recover ' + cut not in err or 'tracer merge' not in err:
            ck.fail('tracer %s of a cut archive: rc %d, stderr %r' % (cmd[0], rc, err))
    print('cli: --help of every command, error paths, tracer run + report, --sort/--limit/--location, '
          'bad options, a damaged archive')


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


def case_window():
    """tracer report --from/--to: two halves of the demo's run add up to the
    whole (calls and exclusive time per region, to the tick), and each half
    is the reference reader's figures for that window"""
    a = traced_demo('window')
    full = json.loads(tracer('report', '--json', '--limit', '0', a)[1])
    halves = [json.loads(tracer('report', '--json', '--limit', '0', *w, a)[1])
              for w in (['--to', '50%'], ['--from', '50%'])]
    if halves[0]['window']['to'] != halves[1]['window']['from']:
        ck.fail('the halves do not meet: %r %r' % (halves[0]['window'], halves[1]['window']))
    regs = [{x['name']: x for x in h['regions']} for h in halves]
    for x in full['regions']:
        got = [regs[k].get(x['name'], {'calls': 0, 'excl': 0}) for k in (0, 1)]
        if got[0]['calls'] + got[1]['calls'] != x['calls'] or got[0]['excl'] + got[1]['excl'] != x['excl']:
            ck.fail('%s: halves %r + %r, whole %r' % (x['name'], got[0], got[1], x))
    anchor = os.path.join(a, 'traces.otf2')
    for k in (0, 1):
        w = halves[k]['window']
        ref = ref_regions(anchor, (w['from'], w['to']), ticks=True)
        for name, (calls, excl) in ref.items():
            x = regs[k].get(name, {'calls': 0, 'excl': 0})
            if x['calls'] != calls or x['excl'] != excl:
                ck.fail('half %d, %s: report %r, the reference reader %d calls, %d ticks' % (k, name, x, calls, excl))
    # the text says which window; a bad or empty window: one line, status 2
    rc, out, err = tracer('report', '--from', '0.001', '--to', '90%', a)
    if 'window     0.001000 s to ' not in out:
        ck.fail('no window line in:\n' + out[:1000])
    for args in (['--from', 'x'], ['--to', '101%'], ['--from', '60%', '--to', '40%']):
        rc, out, err = tracer('report', *(args + [a]), ok=False)
        if rc != 2 or out or len(err.splitlines()) != 1:
            ck.fail('tracer report %s: rc %d %r %r' % (' '.join(args), rc, out[:200], err))
    # tracer convert --from 50%: B/E balanced per thread, every time inside the
    # window, one B per Enter inside it plus one per call open at its start
    import otf2
    from otf2.events import Enter, Leave
    w = halves[1]['window']
    out = os.path.join(WORK, 'window', 'half.json')
    tracer('convert', '--from', '50%', a, '-o', out)
    with open(out) as f:
        evs = [e for e in json.load(f)['traceEvents'] if e['ph'] in ('B', 'E')]
    open_at, inside = 0, 0
    with otf2.reader.open(anchor) as r:
        res = float(r.definitions.clock_properties.timer_resolution)
        off = r.definitions.clock_properties.global_offset
        depth = {}
        for loc, ev in r.events:
            if isinstance(ev, Enter):
                if ev.time >= w['from']:
                    inside += 1
                else:
                    depth[loc] = depth.get(loc, 0) + 1
            elif isinstance(ev, Leave) and ev.time < w['from']:
                depth[loc] -= 1
        open_at = sum(depth.values())
    lo = (w['from'] - off) * 1e6 / res
    stacks, nb, bad = {}, 0, []
    for e in evs:
        st = stacks.setdefault((e['pid'], e['tid']), [])
        if e['ts'] < lo - 0.001:
            bad.append(e)
        if e['ph'] == 'B':
            nb += 1
            st.append(e['name'])
        elif not st or st.pop() != e['name']:
            bad.append(e)
    if bad or any(stacks.values()) or nb != inside + open_at:
        ck.fail('convert --from 50%%: %d B (want %d Enters inside + %d open at its start), %d bad %r, open %r' % (
            nb, inside, open_at, len(bad), bad[:3], {k: v for k, v in stacks.items() if v}))
    # --thread: the report of one location = that location's figures in the
    # whole report; --rank 0: the whole run (one process); convert --thread:
    # that thread only
    loc = full['locations'][2]
    one = json.loads(tracer('report', '--json', '--limit', '0', '--thread', str(loc['id']), a)[1])
    mine = {x['name']: (x['calls'], x['excl']) for x in loc['regions']}
    if [x['id'] for x in one['locations']] != [loc['id']] or \
            {x['name']: (x['calls'], x['excl']) for x in one['regions']} != mine or one['events'] != loc['events']:
        ck.fail('--thread %d: %r, want %r' % (loc['id'], one['regions'], mine))
    allp = json.loads(tracer('report', '--json', '--limit', '0', '--rank', str(loc['process']), a)[1])
    if allp['regions'] != full['regions']:
        ck.fail('--rank %d of a one-process run differs from the whole report' % loc['process'])
    out = os.path.join(WORK, 'window', 'thread.json')
    tracer('convert', '--thread', str(loc['id']), a, '-o', out)
    with open(out) as f:
        tids = {e.get('tid') for e in json.load(f)['traceEvents'] if e['ph'] != 'M'}
    if tids != {loc['id'] + 1}:
        ck.fail('convert --thread %d: threads %r' % (loc['id'], tids))
    for args in (['--thread', '99'], ['--rank', '7'], ['--thread', 'x']):
        rc, out, err = tracer('report', *(args + [a]), ok=False)
        if rc != 2 or out or len(err.splitlines()) != 1:
            ck.fail('tracer report %s: rc %d %r %r' % (' '.join(args), rc, out[:200], err))
    n = sum(x['calls'] for x in full['regions'])
    print('window: %d calls split %d + %d, every region = the reference reader per half' % (
        n, sum(x['calls'] for x in halves[0]['regions']), sum(x['calls'] for x in halves[1]['regions'])))


def case_wait_mpi():
    """wait states at collectives: wait_mpi.c makes one member late by a known
    time at an Allreduce (rank 0 waits at NxN ~80 ms), a Bcast (rank 1: late
    broadcast ~60 ms) and a Reduce (root 0: early reduce ~40 ms); every
    figure equals the reference reader's (oracle_report.py)"""
    prog, mpirun = os.environ.get('WAIT_MPI'), os.environ.get('MPIRUN')
    if not prog or not mpirun:
        raise runcheck.Skip('no MPI: skipped')
    d = workdir('wait_mpi')
    out = os.path.join(d, 'archive')
    p = runcheck.run_mpi(mpirun, 2, [prog], ['TRACER_OUTPUT=' + out], lib=os.environ['TRACER_LIB'], timeout=120)
    if p.returncode != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        ck.fail('mpirun wait_mpi under the tracer: rc %d\n%s' % (p.returncode, p.stderr[-2000:]))
    compare_report(out, 10)
    j = json.loads(tracer('report', '--json', out)[1])
    res = j['resolution']
    by = {L['process']: L for L in j['locations']}
    got = {k: (by[0][k] / res, by[1][k] / res) for k in ('wait_nxn', 'late_broadcast', 'early_reduce')}
    want = {'wait_nxn': (0, 0.080), 'late_broadcast': (1, 0.060), 'early_reduce': (0, 0.040)}
    for k, (rank, t) in want.items():
        mine, other = got[k][rank], got[k][1 - rank]
        if not 0.9 * t <= mine <= t + 0.05 or other > 0.01:
            ck.fail('%s: rank 0 %.6f s, rank 1 %.6f s; want about %.3f s on rank %d' % (k, got[k][0], got[k][1],
                                                                                     t, rank))
    text = tracer('report', out)[1]
    if 'Wait states' not in text or 'wait NxN ms' not in text:
        ck.fail('no wait-state table in the text report')
    # who waits on whom: 0 for 1 at the Allreduce and the Reduce, 1 for root 0 at the Bcast
    j, _ = compare_waits(out)
    rank = {L['id']: L['process'] for L in j['locations']}
    pairs = {(rank[p['waiter']], rank[p['waits_for']]): p for p in j['wait_pairs']}
    for (a, b, kind), t in (((0, 1, 'wait_nxn'), 0.080), ((1, 0, 'late_broadcast'), 0.060),
                            ((0, 1, 'early_reduce'), 0.040)):
        mine = pairs.get((a, b), {}).get(kind, [0, 0])
        if not 0.9 * t <= mine[0] / res <= t + 0.05 or not mine[1]:   # (+ the first barrier's wait)
            ck.fail('rank %d waits for %d (%s): %r, want about %.3f s' % (a, b, kind, mine, t))
    if 'Who waits on whom' not in text or 'Critical path' not in text:
        ck.fail('no pair or critical path section in the text report')
    print('wait_mpi: %s' % {k: ['%.4f' % x for x in v] for k, v in got.items()})



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


# path_mpi.c's deliberate delays: (waiting rank, rank waited for, kind) ->
# (the region on the waited-for rank whose end ends the wait, its nominal ms
# less what the waiting rank spends before its own call)
PATH_DESIGN = {(0, 1, 'late_sender'): ('cp_send', 80), (2, 1, 'late_sender'): ('cp_send', 80),
               (0, 2, 'wait_nxn'): ('cp_barrier', 60), (1, 2, 'wait_nxn'): ('cp_barrier', 60),
               (0, 1, 'late_broadcast'): ('cp_bcast', 30), (2, 1, 'late_broadcast'): ('cp_bcast', 50),
               (0, 2, 'early_reduce'): ('cp_reduce', 40), (0, 2, 'late_receiver'): ('cp_recv', 30),
               (2, 0, 'wait_nxn'): ('cp_tail', 20)}


def region_spans(anchor):
    """(location, region name) -> [(enter, leave)] from the reference reader"""
    import otf2
    spans, open_ = {}, {}
    with otf2.reader.open(anchor) as tr:
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.Enter):
                open_.setdefault((loc._ref, ev.region.name), []).append(ev.time)
            elif isinstance(ev, otf2.events.Leave) and open_.get((loc._ref, ev.region.name)):
                spans.setdefault((loc._ref, ev.region.name), []).append(
                    (open_[(loc._ref, ev.region.name)].pop(), ev.time))
    return spans


def case_path_mpi():
    """who waits on whom and the critical path: path_mpi.c (3 ranks) puts
    every kind of wait state behind a known delay in a cp_* region; the pairs
    and the path equal the reference reader's (whole run, a time window,
    --rank, --thread); each designed wait is on its pair and kind, ends
    within 10 ms of the end of its delay on the rank waited for (the Enter of
    its next call: 0.01-0.2 ms) and is about as long (a quarter of it to 25 ms
    more: the load); the path runs through every cp_* region whole (100 %) and
    through no off_* region"""
    out = mpi_run('path_mpi', 'PATH_MPI', 3)
    compare_report(out, 15, want_messages=True)
    j, ref = compare_waits(out)
    res = j['resolution']
    proc = {L['id']: L['process'] for L in j['locations']}
    spans = region_spans(j['archive'])
    rank_loc = {v: k for k, v in proc.items()}
    errors, shown = [], []
    for (a, b, kind), (region, ms) in sorted(PATH_DESIGN.items()):
        ends = [e for _, e in spans.get((rank_loc[b], region), [])]
        recs = [x for x in ref['records'] if (proc[x['waiter']], proc[x['waited']], x['kind']) == (a, b, kind)
                and ends and 0 <= x['end'] - ends[0] <= 0.010 * res]
        if len(recs) != 1 or len(ends) != 1:
            errors.append('%d waits for %d (%s): %d wait states ending within 10 ms of %s on rank %d' % (
                a, b, kind, len(recs), region, b))
            continue
        # its length: the delay, less what the waiting rank came late
        # (a rank woken on this shared 2-core machine may get the CPU 20-30
        # ms late: typical runs are within 1 ms, the bounds allow the load)
        t = recs[0]['time'] / res * 1e3
        shown.append('%d->%d %s %.1f ms (%d)' % (a, b, kind, t, ms))
        if not 0.25 * ms <= t <= ms + 25:
            errors.append('%d waits for %d (%s): %.3f ms, want about %d' % (a, b, kind, t, ms))
    # the pairs of the designed waits hold them (and the JSON's pairs are the oracle's: compare_waits)
    pairs = {(proc[p['waiter']], proc[p['waits_for']]): p for p in j['wait_pairs']}
    for (a, b, kind), (region, ms) in PATH_DESIGN.items():
        if pairs.get((a, b), {}).get(kind, [0])[0] < 0.25 * ms * res / 1e3:
            errors.append('pair %d -> %d: %s %r, want about %d ms' % (a, b, kind, pairs.get((a, b)), ms))
    cp = j['critical_path']
    on = {x['name']: x for x in cp['regions']}
    for x in j['regions']:
        if x['name'].startswith('cp_') and on.get(x['name'], {}).get('time') != x['excl']:
            errors.append('%s: %s ticks on the critical path of its %d' % (x['name'], on.get(x['name']), x['excl']))
        if x['name'].startswith('off_') and x['name'] in on:
            errors.append('%s is on the critical path: %r' % (x['name'], on[x['name']]))
    if sorted(x['name'] for x in j['regions'] if x['name'][:3] in ('cp_', 'off')) != sorted(
            ['cp_send', 'cp_barrier', 'cp_bcast', 'cp_reduce', 'cp_recv', 'cp_tail', 'off_bcast', 'off_reduce']):
        errors.append('regions: %s' % sorted(x['name'] for x in j['regions']))
    # the slow ranks carry the path: rank 1 at least cp_send + cp_bcast, rank 2 cp_barrier + cp_reduce + cp_recv
    lt = {proc[x['id']]: x['time'] / res * 1e3 for x in cp['locations']}
    if lt.get(1, 0) < 130 or lt.get(2, 0) < 130 or lt.get(0, 0) < 20:
        errors.append('time on the path per rank: %r ms' % lt)
    for e in errors:
        print('FAIL: ' + e, file=sys.stderr)
    if errors:
        ck.fail('%d errors in the designed wait states or the path' % len(errors))
    # selections: a window, two ranks (the third's events unread: no collective completes), one thread
    compare_waits(out, '--from', '30%', '--to', '80%')
    compare_waits(out, '--from', '50%')
    sel, _ = compare_waits(out, '--rank', '0', '--rank', '1', ranks=[0, 1])
    if any(proc[p['waiter']] == 2 or proc[p['waits_for']] == 2 for p in sel['wait_pairs']) or \
            any(p[k][0] for p in sel['wait_pairs'] for k in ('wait_nxn', 'late_broadcast', 'early_reduce')):
        ck.fail('--rank 0 --rank 1: pairs %r' % sel['wait_pairs'])
    compare_waits(out, '--thread', str(rank_loc[2]), threads=[rank_loc[2]])
    # the text and the page
    text = tracer('report', out)[1]
    for want in ('Who waits on whom', 'Critical path', 'length %.3f ms' % (cp['length'] / res * 1e3),
                 'cp_send', '(inside no traced region)'):
        if want not in text:
            ck.fail('%r not in the text report' % want)
    page = os.path.join(WORK, 'path_mpi', 'report.html')
    tracer('report', '--limit', '0', '--html', page, out)
    html = open(page, encoding='utf-8').read()
    import re
    rows = re.findall(r'<tr data-waiter="(\d+)" data-waits-for="(\d+)" data-time="(\d+)">', html)
    if sorted((int(a), int(b), int(t)) for a, b, t in rows) != sorted(
            (p['waiter'], p['waits_for'], p['time']) for p in j['wait_pairs']):
        ck.fail('the page\'s pair table %r, the JSON %r' % (rows, j['wait_pairs']))
    m = re.search(r'<table id="critical_path_regions">(.*?)</table>', html, re.S)
    if not m or sum(int(x) for x in re.findall(r'data-time="(\d+)"', m.group(1))) != cp['length'] or \
            '<table id="critical_path">' not in html:
        ck.fail('the page\'s critical path tables')
    nbar, nline = check_cpath(html, j, lod_data(html))
    print('path_mpi: %s; path %.1f ms over %d segments, per rank %s ms, cp_* regions 100 %% on it; on the '
          'timeline %d bars, %d jumps' % (', '.join(shown), cp['length'] / res * 1e3, cp['nsegments'],
                                          {k: round(v, 1) for k, v in sorted(lt.items())}, nbar, nline))


def case_diff():
    """tracer diff of two runs of one program, the second holding a mutex
    11 times longer: the lock call is the top row, its change is what was
    injected, and every region's calls and exclusive times (both runs) are
    the reference reader's"""
    prog = os.environ['DIFF_PROG']
    d = workdir('diff')
    runs = []
    for ms in (5, 55):
        out = os.path.join(d, 'run%d' % ms)
        rc, sout, err = run([prog, str(ms), os.path.join(d, 'out.dat')],
                            env=dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out))
        with open(os.path.join(d, 'stdout%d' % ms), 'w') as f:
            f.write(sout)
        if rc != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
            ck.fail('diff_prog %d under the tracer: rc %d\n%s' % (ms, rc, err))
        runs.append(out)
    j = json.loads(tracer('diff', '--json', '--limit', '0', runs[0], runs[1])[1])
    refs = [ref_regions(os.path.join(a, 'traces.otf2')) for a in runs]
    rows = {x['name']: x for x in j['regions']}
    for k in (0, 1):
        for name, (calls, excl) in refs[k].items():
            x = rows.get(name)
            if not x or x['calls'][k] != calls or abs(x['excl'][k] - excl) > 2e-6:
                ck.fail('run %s, %s: diff says %r, the reference reader %d calls, %.9f s' % ('AB'[k], name, x,
                                                                                             calls, excl))
    if set(rows) != set(refs[0]) | set(refs[1]):
        ck.fail('regions %s, the reference reader %s' % (sorted(rows), sorted(set(refs[0]) | set(refs[1]))))
    top = j['regions'][0]
    change = top['excl'][1] - top['excl'][0]
    if top['name'] != 'pthread_mutex_lock' or not 0.9 * 5 * 0.050 <= change <= 5 * 0.050 + 0.5:
        ck.fail('top row %r (change %.6f s), want pthread_mutex_lock about +0.25 s' % (top, change))
    # the lock is named by its address: the one the program printed
    printed = [l.split()[-1] for l in open(os.path.join(d, 'stdout5')).read().splitlines() if 'lock at' in l]
    locks = json.loads(tracer('report', '--json', runs[0])[1])['locks']
    if len(locks) != 1 or not printed or locks[0]['address'] != int(printed[0], 16):
        ck.fail('lock address: report %r, the program printed %r' % (locks, printed))
    io = [x for x in j['io'] if x['file'].endswith('/out.dat') and x['layer'] == 'POSIX']
    if len(io) != 1 or io[0]['operations'] != [16, 16] or io[0]['bytes'] != [65536, 65536]:
        ck.fail('I/O rows of out.dat: %r' % j['io'])
    if j['a']['path'] != runs[0] or j['b']['duration'] <= j['a']['duration']:
        ck.fail('runs: %r %r' % (j['a'], j['b']))
    # --from/--to: the same window of each run (a percentage of its own
    # length); per run, calls and exclusive time = report's in that window
    jw = json.loads(tracer('diff', '--json', '--limit', '0', '--from', '50%', runs[0], runs[1])[1])
    wrows = {x['name']: x for x in jw['regions']}
    for k in (0, 1):
        rep = json.loads(tracer('report', '--json', '--limit', '0', '--from', '50%', runs[k])[1])
        want = {}
        for x in rep['regions']:
            c, e = want.get(x['name'], (0, 0))
            want[x['name']] = (c + x['calls'], e + x['excl'] / rep['resolution'])
        for name, (calls, excl) in want.items():
            x = wrows.get(name)
            if not x or x['calls'][k] != calls or abs(x['excl'][k] - excl) > 2e-6:
                ck.fail('diff --from 50%%, run %s, %s: %r, report --from 50%%: %d calls, %.9f s' %
                        ('AB'[k], name, x, calls, excl))
    if jw['regions'] == j['regions']:
        ck.fail('diff --from 50%: the same rows as without a window')
    # the text: the same top row, the lock wait in the totals
    rc, out, err = tracer('diff', runs[0], runs[1])
    lines = out.splitlines()
    first = [i for i, l in enumerate(lines) if l.startswith('region ')]
    if not first or not lines[first[0] + 1].startswith('pthread_mutex_lock ') or 'lock wait s' not in out:
        ck.fail('tracer diff text:\n' + out)
    rc, out, err = tracer('diff', runs[0], ok=False)
    if rc != 2 or 'usage' not in err:
        ck.fail('tracer diff with one archive: rc %d %r' % (rc, err))
    rc, out, err = tracer('diff', runs[0], '/nonexistent', ok=False)
    if rc != 1 or len(err.splitlines()) != 1 or not err.startswith('tracer: '):
        ck.fail('tracer diff A /nonexistent: rc %d %r' % (rc, err))
    print('diff: pthread_mutex_lock %+.6f s (%.6f -> %.6f), %d regions checked against the reference reader'
          % (change, top['excl'][0], top['excl'][1], len(rows)))


def chromium(*args):
    exe = os.environ.get('CHROMIUM') or shutil.which('chromium')
    if not exe:
        raise runcheck.Skip('chromium not installed (scripts/install-deps): skipped')
    home = workdir('chromium_home_%d' % os.getpid())   # one per test: ctest -j runs several
    return runcheck.run_untraced([exe, '--headless', '--no-sandbox', '--disable-gpu',
                                  '--no-first-run', '--user-data-dir=' + home,
                                  '--enable-logging=stderr', '--v=0'] + list(args),
                                 {'HOME': home}, timeout=120, binary=True)


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


def check_lod(text, archive, locks):
    """What the finest and a middle level draw is what happened: per
    location, the drawn time of each region (sum over its runs of bins x bin
    width x height share) = its exclusive time from the reference reader,
    the drawn lock wait = the location's lock wait (locks: {location id:
    ticks}, the report's), within 1 % of the time or 2 bins of the level
    (the demo: 0.03 bins); a region may be drawn short by at most the
    row's slack more: the time left blank in its bins that show 3 regions
    (a bin keeps the 3 that covered most of it; the MPI demo's MPI_Isend,
    1 us calls among Irecv, Waitall and Allreduce in 10 us bins, is drawn
    up to 1 bin short at 64000 bins). The levels' runs in time order,
    inside the level. Returns the data, the worst difference (bins)."""
    D = lod_data(text)
    lv, span = D['levels'], D['span']
    ref = ref_regions(os.path.join(archive, 'traces.otf2'), ticks=True, by_loc=True)
    worst = 0
    for k in sorted({len(lv) - 1, (len(lv) - 1) // 2}):
        L = lv[k]
        bw = span / L['nb']
        for i, row in enumerate(D['rows']):
            drawn, last, inbin = {}, 0, {}
            a = L['r'][i]
            for j in range(0, len(a), 4):
                b, e, ri, p = a[j:j + 4]
                if not (last <= b < e <= L['nb']) or not 0 < p <= 1000:
                    ck.fail('level %d, row %d: run %r after bin %d' % (L['nb'], i, a[j:j + 4], last))
                last = b if e == b + 1 and p < 1000 else e   # (a bin's regions: runs of that bin)
                name = D['names'][ri]
                drawn[name] = drawn.get(name, 0) + (e - b) * bw * p / 1000
                if p < 1000:
                    inbin.setdefault(b, []).append(p)
            slack = sum(bw * (1000 - sum(ps)) / 1000 for ps in inbin.values() if len(ps) >= 3)
            want = {n: v[1] for n, v in ref.get(row['id'], {}).items()}
            a, last, got = L['l'][i], 0, 0
            for j in range(0, len(a), 3):
                b, e, p = a[j:j + 3]
                if not (last <= b < e <= L['nb']) or not 0 < p <= 1000:
                    ck.fail('level %d, row %d: lock run %r after bin %d' % (L['nb'], i, a[j:j + 3], last))
                last = e
                got += (e - b) * bw * p / 1000
            want['(lock wait)'], drawn['(lock wait)'] = locks.get(row['id'], 0), got
            for n in set(want) | set(drawn):
                d = drawn.get(n, 0) - want.get(n, 0)
                worst = max(worst, abs(d) / bw)   # (in bins of the level)
                if abs(d) > max(0.01 * want.get(n, 0), 2 * bw) + (slack if d < 0 and n != '(lock wait)' else 0):
                    ck.fail('level of %d bins, location %d: drawn vs real time per region (ticks): %r' % (
                        L['nb'], row['id'], {x: (round(drawn.get(x, 0)), want.get(x, 0))
                                             for x in set(want) | set(drawn)}))
    return D, worst


def lock_waits(archive):
    """{location id: lock wait ticks} of tracer report --json"""
    w = {}
    for lk in json.loads(tracer('report', '--json', archive)[1]).get('locks', []):
        for x in lk['waiters']:
            w[x['location']] = w.get(x['location'], 0) + x['wait']
    return w


def check_zoom(page, D, frac, level):
    """the page opened at #zoom=T0,T1 (the window frac of the run around its
    middle): the script drew level `level` into #detail (rects with hover
    text inside the window) and hid #coarse; the axis shows the window"""
    import re
    ms = D['ms']
    t0, t1 = ms * (0.5 - frac / 2), ms * (0.5 + frac / 2)
    p = chromium('--virtual-time-budget=5000', '--dump-dom', 'file://%s#zoom=%.9f,%.9f' % (page, t0, t1))
    dom = p.stdout.decode('utf-8', 'replace')
    co = re.search(r'<g id="coarse"([^>]*)>', dom)
    de = re.search(r'<g id="detail"([^>]*)>(.*?)</g>', dom, re.S)
    if not co or 'display: none' not in co.group(1):
        ck.fail('zoomed to %.6f-%.6f ms: #coarse not hidden: %r' % (t0, t1, co and co.group(0)))
    rects = re.findall(r'<rect [^>]*data-t="([^"]*)"', de.group(2)) if de else []
    if not rects or 'display: none' in de.group(1):
        ck.fail('zoomed to %.6f-%.6f ms: no rects in #detail (%r)' % (t0, t1, de and de.group(1)))
    nb = D['levels'][level]['nb']
    sc = re.search(r'scale\(([0-9.e+-]+),1\)', de.group(1))
    W = 1000 * (t1 - t0) / ms   # the visible width in level-0 bins
    if not sc or abs(float(sc.group(1)) - 1000.0 / nb * 1000 / W) > 1e-6 * float(sc.group(1)):
        ck.fail('zoomed to %.6f-%.6f ms: #detail %r, not level %d (%d bins)' % (t0, t1, de.group(1), level, nb))
    for t in rects:
        m = re.search(r' \| ([0-9.]+)-([0-9.]+) ms', t)
        a, b = float(m.group(1)), float(m.group(2))
        if b < t0 - (t1 - t0) or a > t1 + (t1 - t0):   # (drawn: the window and half of it each side)
            ck.fail('zoomed to %.6f-%.6f ms: a detail rect at %r' % (t0, t1, t))
    axis = re.search(r'<div id="axis"[^>]*>(.*?)</div>', dom, re.S)
    texts = re.findall(r'>([0-9.]+) ms<', axis.group(1)) if axis else []
    labels = [float(x) for x in texts]
    ulp = [0.51 * 10 ** -len(x.partition('.')[2]) for x in texts]   # (half the last digit shown)
    if len(labels) != 11 or abs(labels[0] - t0) > ulp[0] or abs(labels[-1] - t1) > ulp[-1] or \
            ulp[0] > 0.05 * (t1 - t0):
        ck.fail('zoomed to %.6f-%.6f ms: axis labels %r' % (t0, t1, texts))
    errs = [x for x in p.stderr.decode('utf-8', 'replace').splitlines() if 'CONSOLE' in x or 'Uncaught' in x]
    if errs:
        ck.fail('zoomed: console messages:\n' + '\n'.join(errs[:10]))
    return len(rects)


def case_html():
    """the page is self-contained, renders in headless Chromium without console
    errors, the timeline is drawn and the region names are in the DOM"""
    sys.path.insert(0, SRC)
    import png
    a = traced_demo('html')
    page = os.path.join(WORK, 'html', 'report.html')
    tracer('report', '--html', page, a)
    text = open(page, encoding='utf-8').read()
    for bad in ('<link', ' src=', 'href=', '@import', 'url('):
        if bad in text:
            ck.fail('page is not self-contained: %r' % bad)
    regions = json.loads(tracer('report', '--json', '--limit', '0', a)[1])['regions']
    p = chromium('--dump-dom', 'file://' + page)
    dom = p.stdout.decode('utf-8', 'replace')
    for r in regions:
        if r['name'] not in dom:
            ck.fail('region %s not in the DOM' % r['name'])
    if '<h2>Locks</h2>' not in dom:
        ck.fail('no lock table in the page of the demo (a shared lock)')
    if 'class="lockwait"' not in dom:
        ck.fail('no lock wait in the timeline of the demo')
    # a legend of the colour families, and a time axis of 11 labels
    if '<p id="legend">' not in dom or 'threads (pthread, locks)' not in dom:
        ck.fail('no legend with the pthread family in the page')
    import re
    axis = re.search(r'<div id="axis"[^>]*>(.*?)</div>', dom, re.S)
    labels = re.findall(r'>([0-9.]+) ms<', axis.group(1)) if axis else []
    if len(labels) != 11 or float(labels[0]) != 0 or float(labels[-1]) <= 0:
        ck.fail('time axis labels %r' % labels)
    if dom.count('<rect') < 6:     # the background + at least one bar per thread
        ck.fail('timeline has %d rects' % dom.count('<rect'))
    # what the timeline draws is what happened: per region, the drawn area
    # (width x height share of the row) in time = its exclusive time from the
    # reference reader, as shares of all rows' time within 1 percentage point
    import re
    span = float(re.search(r'<h2>Timeline</h2><p>([0-9.]+) ms, 1000 bins', text).group(1))
    drawn = {}
    for m in re.finditer(r'<rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="([0-9.]+)" fill="[^"]*" '
                         r'data-t="([^|"]*) \|', text):
        w_, h_, name = float(m.group(1)), float(m.group(2)), m.group(3).replace('&amp;', '&')
        drawn[name] = drawn.get(name, 0) + w_ * h_ / 14.0 * span / 1000
    nrows = len(json.loads(tracer('report', '--json', a)[1])['locations'])
    ref = ref_regions(os.path.join(a, 'traces.otf2'))
    worst = max(abs(drawn.get(k, 0) - v[1] * 1e3) / (span * nrows) for k, v in ref.items())
    if worst > 0.01:
        ck.fail('timeline: drawn vs real time per region (ms): %r' % {k: (round(drawn.get(k, 0), 3),
                round(v[1] * 1e3, 3)) for k, v in ref.items()})
    errs = [x for x in p.stderr.decode('utf-8', 'replace').splitlines()
            if 'CONSOLE' in x or 'Uncaught' in x]
    if errs:
        ck.fail('console messages:\n' + '\n'.join(errs[:10]))
    # not zoomed: level 0 only (#detail empty, #coarse shown)
    de = re.search(r'<g id="detail"[^>]*>(.*?)</g>', dom, re.S)
    co = re.search(r'<g id="coarse"([^>]*)>', dom)
    if not de or '<rect' in de.group(1) or not co or 'display: none' in co.group(1):
        ck.fail('not zoomed: #detail %r, #coarse %r' % (de and de.group(0)[:200], co and co.group(0)))
    if 'id="cpath' in dom:   # (no MPI: no critical path on the timeline)
        ck.fail('a critical path (#cpath) on the page of a run without MPI')
    # the finer levels, what they draw, and the page zoomed in on them
    D, lod_worst = check_lod(text, a, lock_waits(a))
    if len(D['levels']) < 2:
        ck.fail('the demo (5 threads) has %d finer levels, 2 expected (8000, 64000 bins)' % len(D['levels']))
    zoomed = [(check_zoom(page, D, f, k), k) for f, k in ((0.2, 0), (0.01, len(D['levels']) - 1))]
    shot = os.path.join(WORK, 'html', 'shot.png')
    p = chromium('--screenshot=' + shot, '--window-size=1200,900', 'file://' + page)
    if not os.path.exists(shot):
        ck.fail('no screenshot: ' + p.stderr.decode()[-2000:])
    w, h, rows = png.read(shot)
    colors = set()
    colored = 0
    for row in rows[::3]:
        for (r, g, b) in row[::3]:
            colors.add((r, g, b))
            if max(r, g, b) - min(r, g, b) > 60:    # saturated: timeline bars
                colored += 1
    if len(colors) < 20 or colored < 500:
        ck.fail('screenshot looks blank: %d colors, %d saturated samples' % (len(colors), colored))
    print('html: %d bytes, %d regions in the DOM, screenshot %dx%d with %d colors, '
          '%d saturated samples; drawn time within %.3f %% of the real per region; levels of detail %r '
          'bins, drawn time per location within %.3f bins of the level; zoomed: %s' % (
              len(text), len(regions), w, h, len(colors), colored, 100 * worst,
              [L['nb'] for L in D['levels']], lod_worst,
              ', '.join('%d rects of level %d' % z for z in zoomed)))


def case_html_sampling():
    """a sampled run: the flame graph holds the sampled functions"""
    d, out = sampled_archive('html_sampling')
    page = os.path.join(d, 'report.html')
    tracer('report', '--html', page, out)
    p = chromium('--dump-dom', 'file://' + page)
    dom = p.stdout.decode('utf-8', 'replace')
    i = dom.find('id="flame"')
    flame = dom[i:dom.find('</svg>', i)] if i >= 0 else ''
    for name in ('leaf_a', 'leaf_b', 'caller', 'main'):
        if name not in flame:
            ck.fail('%s not in the flame graph' % name)
    errs = [x for x in p.stderr.decode('utf-8', 'replace').splitlines()
            if 'CONSOLE' in x or 'Uncaught' in x]
    if errs:
        ck.fail('console messages:\n' + '\n'.join(errs[:10]))
    # merged by function: below one box no two boxes of one function, and
    # a function's self samples over its boxes = the samples whose leaf is
    # that function (the reference reader's count)
    import re
    boxes = [(float(x), int(y), float(w), t.rsplit(' | ', 1)[0], int(sf))
             for x, y, w, t, sf in re.findall(r'<rect x="([0-9.]+)" y="([0-9]+)" width="([0-9.]+)"[^>]*data-t="'
                                              r'([^"]*) \| [0-9]+ samples \(([0-9]+) self\)"', flame)]
    if len(boxes) < 4:
        ck.fail('flame graph: %d boxes parsed' % len(boxes))
    seen = set()
    for x, y, w, name, sf in boxes:
        # the parent holds the box's middle (coordinates are printed to
        # 3 decimals: a box's left edge may round onto its neighbour's end)
        parents = [b for b in boxes if b[1] == y - 16 and b[0] <= x + w / 2 < b[0] + b[2]] if y else [None]
        key = (parents[0][:2] if parents and parents[0] else None, y, name)
        if key in seen:
            import otf2
            with otf2.reader.open(runcheck.find_anchor(out)) as tr:
                regs = [(r.name, r.source_file, r.begin_line_number) for r in tr.definitions.regions
                        if r.name == name]
            ck.fail('flame graph: two boxes of %s below one box at depth %d (box x %.3f; parent %r; regions of '
                    'that name: %r)' % (name, y // 16, x, key[0], regs))
        seen.add(key)
    defs, evs, _ = runcheck.read_back(runcheck.find_anchor(out))
    for name in ('leaf_a', 'leaf_b'):
        want = sum(1 for lst in evs.values() for ev in lst if type(ev).__name__ == 'CallingContextSample'
                   and ev.calling_context.region.name == name)
        got = sum(b[4] for b in boxes if b[3] == name)
        if got != want:
            ck.fail('flame graph: %d self samples in %s boxes, the reference reader counts %d' % (got, name, want))
    D, worst = check_lod(open(page, encoding='utf-8').read(), out, lock_waits(out))
    print('html_sampling: flame graph with %d boxes, one per function and caller box; levels of detail %r bins, '
          'drawn time per location within %.3f bins of the level' % (flame.count('<rect'),
                                                                     [L['nb'] for L in D['levels']], worst))


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


def case_html_mpi():
    """2 ranks: one process group each, the messages drawn as lines"""
    a = mpi_archive('html_mpi')
    page = os.path.join(WORK, 'html_mpi', 'report.html')
    tracer('report', '--html', page, a)
    ours = json.loads(tracer('report', '--json', a)[1])
    p = chromium('--dump-dom', 'file://' + page)
    dom = p.stdout.decode('utf-8', 'replace')
    lines = dom.count('class="msg"')
    sent = sum(m['count'] for P in ours['processes'] for m in P['messages_to'])
    if lines != min(sent, 5000) or not sent:
        ck.fail('%d message lines, %d messages sent' % (lines, sent))
    for P in ours['processes']:
        if P['name'] not in dom:
            ck.fail('process %s not in the page' % P['name'])
    errs = [x for x in p.stderr.decode('utf-8', 'replace').splitlines()
            if 'CONSOLE' in x or 'Uncaught' in x]
    if errs:
        ck.fail('console messages:\n' + '\n'.join(errs[:10]))
    # the text report's tables are in the page: the message matrix (its
    # counts = the JSON's), the collectives, the processes, the whole text
    import re
    m = re.search(r'<table id="messages">(.*?)</table>', dom, re.S)
    counts = [int(x) for x in re.findall(r'data-count="(\d+)"', m.group(1))] if m else []
    if sum(counts) != sent or len(counts) != len(ours['processes']) ** 2:
        ck.fail('message matrix in the page: %r, %d sent' % (counts, sent))
    colls = sum(c['operations'] for c in ours.get('collectives', []))
    if colls and '<table id="collectives">' not in dom:
        ck.fail('no collectives table (%d operations in the JSON)' % colls)
    for want in ('<table id="processes">', '<details id="text">', 'MPI messages sent (count / bytes)',
                 'late sender ms'):
        if want not in dom:
            ck.fail('%r not in the page' % want)
    # who waits on whom and the critical path: tables in the page, a row per pair
    for want in ('<table id="critical_path">', '<table id="critical_path_regions">', 'Who waits on whom'):
        if want not in dom:
            ck.fail('%r not in the page' % want)
    if dom.count('data-waits-for=') != min(len(ours['wait_pairs']), 20) or not ours['wait_pairs']:
        ck.fail('%d pair rows in the page, %d pairs' % (dom.count('data-waits-for='), len(ours['wait_pairs'])))
    D, worst = check_lod(open(page, encoding='utf-8').read(), a, lock_waits(a))
    n = check_zoom(page, D, 0.01, len(D['levels']) - 1)
    # the critical path on the timeline, unzoomed and zoomed in to one bin
    # of the finest level around the jump (else the middle) whose x in
    # level-0 bins single precision rounds most (float geometry there: px off)
    import struct
    jf = json.loads(tracer('report', '--json', '--limit', '0', a)[1])
    nbar, nline = check_cpath(dom, jf, D)
    segs = jf['critical_path']['segments']

    def f32err(t):
        x = (t - D['t0']) / D['span'] * 1000
        return abs(struct.unpack('f', struct.pack('f', x))[0] - x)
    tj = max((q[1] for p, q in zip(segs, segs[1:]) if p[0] != q[0]), key=f32err,
             default=D['t0'] + D['span'] // 2)
    MS = float(re.search(r'<div id="axis" data-ms="([0-9.]+)"', dom).group(1))
    c, half = (tj - D['t0']) / D['span'] * MS, MS / D['levels'][-1]['nb'] / 2
    za, zb = '%.9f' % (c - half), '%.9f' % (c + half)
    pz = chromium('--virtual-time-budget=5000', '--dump-dom', 'file://%s#zoom=%s,%s' % (page, za, zb))
    W = 1000.0
    zw = min(W, max(W / D['levels'][-1]['nb'], (float(zb) - float(za)) / MS * W))
    zx0 = min(W - zw, max(0.0, float(za) / MS * W))
    check_cpath(pz.stdout.decode('utf-8', 'replace'), jf, D, (zx0, zw))
    print('html_mpi: %d message lines, matrix %r, %d collective operations; levels of detail %r bins, drawn time '
          'per location within %.3f bins of the level; zoomed: %d rects; critical path: %d bars, %d jumps, '
          'also zoomed to %.6f ms' % (lines, counts, colls, [L['nb'] for L in D['levels']], worst, n, nbar, nline,
                                      2 * half))


def case_reader_demo():
    check_reader(traced_demo('reader_demo'), 1000)


def case_reader_pywriter():
    check_reader(py_archive('reader_pywriter'), 1000)


def case_reader_dual():
    if not os.environ.get('FMT_DUAL'):
        raise runcheck.Skip('fmt_dual not built (no libotf2-trace-dev): skipped')
    for mode, n in (('all-py', 200), ('edge', 100000)):
        d = workdir('reader_dual_' + mode)
        rc, _, err = run([os.environ['FMT_DUAL'], mode, d])
        if rc != 0:
            ck.fail('fmt_dual %s: %s' % (mode, err))
        for who in ('ref', 'ours'):   # libotf2-written and otf2w-written
            check_reader(os.path.join(d, who, 'traces.otf2'), n)


def case_reader_mpi():
    check_reader(mpi_archive('reader_mpi'), 100)


def case_reader_order():
    """per location = file order; merged = same events, times non-decreasing"""
    a = traced_demo('reader_order')
    rc, per, err = run([os.environ['OTF2R_DUMP'], '--per-location', a])
    rc2, merged, err2 = run([os.environ['OTF2R_DUMP'], a])
    if rc or rc2:
        ck.fail(err + err2)
    per = [x for x in per.splitlines() if x.startswith('EVT')]
    merged = [x for x in merged.splitlines() if x.startswith('EVT')]
    if sorted(per) != sorted(merged) or len(per) < 1000:
        ck.fail('per-location and merged streams differ (%d / %d events)' % (len(per), len(merged)))
    last = -1
    for x in merged:
        t = int(x.split()[2])
        if t < last:
            ck.fail('merged stream goes back in time: ' + x)
        last = t
    print('reader_order: %d events, merged in time order' % len(merged))


def main():
    case = sys.argv[1]
    fn = globals().get('case_' + case)
    if not fn:
        sys.exit('unknown case ' + case)
    return runcheck.run_case(fn, case)


if __name__ == '__main__':
    sys.exit(main())
