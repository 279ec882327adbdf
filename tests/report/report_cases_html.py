# SPDX-License-Identifier: BSD-3-Clause
"""report_cases_html.py - cases of test_report.py on what is drawn or exported:
the Chrome/Perfetto JSON of `tracer convert` and the HTML page of
`tracer report --html` loaded in Chromium (levels of detail, zoom, the
critical path), each against the reference reader.
"""
import gzip
import json
import os
import shutil
import sys

from report_lib import *  # noqa: F401,F403  (the shared helpers, SRC, WORK, PY, ck)


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


def chromium(*args):
    exe = os.environ.get('CHROMIUM') or shutil.which('chromium')
    if not exe:
        raise runcheck.Skip('chromium not installed (scripts/install-deps): skipped')
    home = workdir('chromium_home_%d' % os.getpid())   # one per test: ctest -j runs several
    return runcheck.run_untraced([exe, '--headless', '--no-sandbox', '--disable-gpu',
                                  '--no-first-run', '--user-data-dir=' + home,
                                  '--enable-logging=stderr', '--v=0'] + list(args),
                                 {'HOME': home}, timeout=120, binary=True)


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
