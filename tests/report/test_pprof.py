#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_pprof.py - `tracer convert --pprof OUT.pb.gz` against the reference reader.

The profile is decoded independently of our encoder: gunzip (Python's gzip),
then `protoc --decode=perftools.profiles.Profile` (Debian's protobuf-compiler)
with profile.proto beside this file (pprof's message and field numbers), its
text format parsed here. The archive: tests/sampling/smp_accuracy sampled at
1 ms on two threads, as the sampling report tests record it; the oracle:
python3-otf2 reading the same archive.

Checked: string_table[0] == ""; sample types [samples/count, cpu/nanoseconds],
period type cpu/nanoseconds, period = the InterruptGenerator's (ns); every
value[1] = value[0] x period; the total of value[0] = the CallingContextSample
events; per thread (label) the multiset of call paths root to leaf, each frame
(function name, line), = the reference's calling contexts (region name, source
line), so the leaf-first order, the per-leaf counts and the merging are all
checked; no two samples with one stack and one thread; one Function per
(name, file), one Location per (function, line), ids unique and nonzero, every
reference resolved; duration_nanos = the run's length, time_nanos = its
realtime start; --thread and --to 50% select as the reference's events do;
-o with --pprof in one pass gives the same profile. Errors: an archive
without samples and an unwritable output: status 1, one line, no file.

Environment (tests/report/CMakeLists.txt): TRACER, TRACER_LIB, SMP_PROG, DEMO,
WORK, SRC. No protoc: SKIP (77) only when protobuf-compiler cannot be
installed from the machine's package sources; when it can, the test fails
and says to run scripts/install-deps.
"""
import collections
import gzip
import os
import re
import shutil
import subprocess
import sys

SRC = os.environ.get('SRC', os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get('WORK', '/tmp/report-tests')
sys.path.insert(0, os.path.join(SRC, '..', 'lib'))
import runcheck  # noqa: E402

ck = runcheck.Checker(stop=True)


def run(cmd, env=None, **kw):
    p = runcheck.run_untraced(cmd, env, timeout=300, **kw)
    return p.returncode, p.stdout, p.stderr


def tracer(*args, ok=True):
    rc, out, err = run([os.environ['TRACER']] + list(args))
    if ok and rc != 0:
        ck.fail('tracer %s: rc %d\n%s' % (' '.join(args), rc, err))
    return rc, out, err


def workdir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def protoc():
    """protoc's path; Skip when protobuf-compiler cannot be installed here."""
    p = shutil.which('protoc')
    if p:
        return p
    try:
        pol = subprocess.run(['apt-cache', 'policy', 'protobuf-compiler'], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        pol = ''
    m = re.search(r'Candidate:\s*(\S+)', pol)
    if not m or m.group(1) == '(none)':
        raise runcheck.Skip('protoc missing and protobuf-compiler not installable here (apt-cache: %r)'
                            % pol.strip()[:200])
    ck.fail('protoc missing: protobuf-compiler %s is installable: run scripts/install-deps' % m.group(1))


# ---- protoc's text format ------------------------------------------------------
TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(:)|(\{)|(\})|("(?:[^"\\]|\\.)*")|(-?[0-9][0-9.eE+-]*))')


def unescape(s):
    """a C-escaped text format string (octal escapes are bytes) to str"""
    out, i = bytearray(), 0
    simple = {'n': 10, 't': 9, 'r': 13, '"': 34, "'": 39, '\\': 92, 'a': 7, 'b': 8, 'f': 12, 'v': 11}
    while i < len(s):
        c = s[i]
        if c != '\\':
            out += c.encode()
            i += 1
        elif s[i + 1] in simple:
            out.append(simple[s[i + 1]])
            i += 2
        elif s[i + 1] == 'x':
            m = re.match(r'[0-9a-fA-F]{1,2}', s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            m = re.match(r'[0-7]{1,3}', s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
    return out.decode('utf-8', errors='surrogateescape')


def parse_text(text):
    """{field: [values]} where a value is an int, a str or such a dict"""
    toks = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip():
                ck.fail('protoc output: cannot parse at %r' % text[pos:pos + 80])
            break
        pos = m.end()
        toks.append(m)

    def msg(i):
        d = collections.defaultdict(list)
        while i < len(toks) and not toks[i].group(4):
            name = toks[i].group(1)
            if not name:
                ck.fail('protoc output: a field name expected, got %r' % toks[i].group(0))
            i += 1
            if toks[i].group(2):          # name: value
                v = toks[i + 1]
                d[name].append(unescape(v.group(5)[1:-1]) if v.group(5) else
                               int(v.group(6)) if v.group(6) else v.group(1))
                i += 2
            elif toks[i].group(3):        # name { ... }
                sub, i = msg(i + 1)
                d[name].append(sub)
                i += 1
            else:
                ck.fail('protoc output: %r after %s' % (toks[i].group(0), name))
        return d, i

    d, i = msg(0)
    if i != len(toks):
        ck.fail('protoc output: unbalanced braces')
    return d


def one(d, k, default=0):
    v = d.get(k, [])
    if len(v) > 1:
        ck.fail('field %s given %d times' % (k, len(v)))
    return v[0] if v else default


def decode(path):
    """the Profile of the .pb.gz at path, decoded by protoc"""
    raw = gzip.open(path).read()   # raises if not gzip
    p = subprocess.run([protoc(), '--proto_path=' + SRC, '--decode=perftools.profiles.Profile', 'profile.proto'],
                       input=raw, capture_output=True, timeout=120)
    if p.returncode != 0:
        ck.fail('protoc --decode: rc %d %s' % (p.returncode, p.stderr.decode(errors='replace')[-2000:]))
    return parse_text(p.stdout.decode('utf-8', errors='surrogateescape')), p.stdout


class Profile:
    """The decoded profile checked for self-consistency, with its samples
    as (thread, process, ((function, line), ... root to leaf)) -> [count, value]."""

    def __init__(self, path):
        d, self.text = decode(path)
        self.d = d
        st = d.get('string_table', [])
        if not st or st[0] != '':
            ck.fail('string_table[0] is %r, not ""' % (st[:1],))
        self.strings = st

        def s(i):
            if not 0 <= i < len(st):
                ck.fail('string index %d outside the table (%d strings)' % (i, len(st)))
            return st[i]
        self.s = s
        self.sample_type = [(s(one(v, 'type')), s(one(v, 'unit'))) for v in d.get('sample_type', [])]
        pt = one(d, 'period_type', {})
        self.period_type = (s(one(pt, 'type')), s(one(pt, 'unit'))) if pt else None
        self.period = one(d, 'period')
        self.time_nanos = one(d, 'time_nanos')
        self.duration_nanos = one(d, 'duration_nanos')
        funcs = {}
        for f in d.get('function', []):
            fid = one(f, 'id')
            if not fid or fid in funcs:
                ck.fail('function id %d zero or given twice' % fid)
            funcs[fid] = (s(one(f, 'name')), s(one(f, 'filename')), s(one(f, 'system_name')), one(f, 'start_line'))
        if len(set(v[:2] for v in funcs.values())) != len(funcs):
            ck.fail('two functions of one (name, file)')
        self.funcs = funcs
        locs = {}
        for L in d.get('location', []):
            lid = one(L, 'id')
            lines = L.get('line', [])
            if not lid or lid in locs or len(lines) != 1:
                ck.fail('location %d: id zero or given twice, or %d lines (want 1)' % (lid, len(lines)))
            fid = one(lines[0], 'function_id')
            if fid not in funcs:
                ck.fail('location %d: function %d undefined' % (lid, fid))
            locs[lid] = (fid, one(lines[0], 'line'))
        if len(set(locs.values())) != len(locs):
            ck.fail('two locations of one (function, line)')
        self.locs = locs
        self.samples = collections.defaultdict(lambda: [0, 0])
        seen = set()
        self.nvalues = set()
        for x in d.get('sample', []):
            ids = x.get('location_id', [])
            vals = x.get('value', [])
            self.nvalues.add(len(vals))
            labels = {}
            for lab in x.get('label', []):
                k = s(one(lab, 'key'))
                if k in labels:
                    ck.fail('sample with label %s twice' % k)
                labels[k] = s(one(lab, 'str')) if 'str' in lab else one(lab, 'num')
            for k in ('thread', 'process'):
                if not isinstance(labels.get(k), str):
                    ck.fail('sample without a string label %s: %s' % (k, labels))
            key = (tuple(ids), tuple(sorted(labels.items())))
            if key in seen:
                ck.fail('two samples of one stack and labels (not merged): %s' % (key,))
            seen.add(key)
            for i in ids:
                if i not in locs:
                    ck.fail('sample: location %d undefined' % i)
            frames = tuple((funcs[locs[i][0]][0], locs[i][1]) for i in reversed(ids))   # root to leaf
            e = self.samples[(labels['thread'], labels['process'], frames)]
            e[0] += vals[0]
            e[1] += vals[1] if len(vals) > 1 else 0
        if self.nvalues and self.nvalues != {len(self.sample_type)}:
            ck.fail('samples with %s values, %d sample types' % (sorted(self.nvalues), len(self.sample_type)))

    def total(self):
        return sum(v[0] for v in self.samples.values())

    def paths(self, lines=True):
        c = collections.Counter()
        for (thr, proc, frames), (n, _) in self.samples.items():
            c[(thr, proc, frames if lines else tuple(f for f, _ in frames))] += n
        return c


def reference(anchor, loc_ids=None, before=None):
    """the reference reader's samples: Counter of (thread, process, ((region,
    line), ... root to leaf)), the InterruptGenerators used, the clock"""
    import otf2
    c = collections.Counter()
    igs = set()
    with otf2.reader.open(anchor) as tr:
        cp = tr.definitions.clock_properties
        clock = (cp.timer_resolution, cp.global_offset, cp.trace_length, cp.realtime_timestamp)
        for loc, ev in tr.events:
            if type(ev).__name__ != 'CallingContextSample':
                continue
            if loc_ids is not None and loc._ref not in loc_ids:
                continue
            if before is not None and ev.time >= before:
                continue
            frames, cc = [], ev.calling_context
            while cc is not None:
                scl = cc.source_code_location
                frames.append((cc.region.name, scl.line_number if scl is not None else 0))
                cc = cc.parent
            c[(loc.name, loc.group.name, tuple(reversed(frames)))] += 1
            g = ev.interrupt_generator
            igs.add((str(g.interrupt_generator_mode), str(g.base), g.exponent, g.period))
    return c, igs, clock


def diff(a, b):
    keys = sorted(set(a) | set(b), key=repr)
    return ['%s: ours %d, reference %d' % (k, a.get(k, 0), b.get(k, 0)) for k in keys if a.get(k, 0) != b.get(k, 0)]


def compare(prof, ref, what):
    if prof.total() != sum(ref.values()):
        ck.fail('%s: %d samples, the reference reader %d' % (what, prof.total(), sum(ref.values())))
    leaves = collections.Counter()
    for (_, _, fr), n in prof.paths().items():
        leaves[fr[-1][0] if fr else None] += n
    rleaves = collections.Counter()
    for (_, _, fr), n in ref.items():
        rleaves[fr[-1][0] if fr else None] += n
    if leaves != rleaves:
        ck.fail('%s: samples per leaf function differ:\n  %s' % (what, '\n  '.join(diff(leaves, rleaves)[:10])))
    got = prof.paths()
    if got != ref:
        ck.fail('%s: call paths (root to leaf, with lines) differ:\n  %s' % (what, '\n  '.join(diff(got, ref)[:10])))
    return leaves


def sampled_archive(name):
    """smp_accuracy (three CPU-bound leaves on two threads) sampled at 1 ms"""
    prog = os.environ.get('SMP_PROG')
    if not prog:
        raise runcheck.Skip('sampling test program not built: skipped')
    d = workdir(name)
    out = os.path.join(d, 'archive')
    env = dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out, TRACER_SAMPLING='1ms',
               SMP_CPU_SECONDS='0.3')
    rc, _, err = run([prog], env=env)
    if rc != 0:
        ck.fail('sampled program: rc %d %s' % (rc, err))
    return d, out


def case_pprof():
    protoc()
    d, a = sampled_archive('pprof')
    anchor = runcheck.find_anchor(a)
    out = os.path.join(d, 'out.pb.gz')
    rc, _, err = tracer('convert', a, '--pprof', out)
    if err.strip():
        ck.fail('convert --pprof said something: %r' % err)
    prof = Profile(out)
    ref, igs, (res, off, length, realtime) = reference(anchor)
    if len(igs) != 1:
        ck.fail('want one InterruptGenerator in the samples, the reference reads %s' % igs)
    mode, base, exp, period = igs.pop()
    if 'TIME' not in mode or 'DECIMAL' not in base:
        ck.fail('InterruptGenerator %s %s: want a time-mode, decimal one' % (mode, base))
    period_ns = period * 10 ** (exp + 9) if exp >= -9 else period // 10 ** (-9 - exp)
    if prof.sample_type != [('samples', 'count'), ('cpu', 'nanoseconds')]:
        ck.fail('sample_type %s' % prof.sample_type)
    if prof.period_type != ('cpu', 'nanoseconds') or prof.period != period_ns or period_ns != 1000000:
        ck.fail('period %s %d, the InterruptGenerator %d ns' % (prof.period_type, prof.period, period_ns))
    bad = [(k, v) for k, v in prof.samples.items() if v[1] != v[0] * period_ns]
    if bad:
        ck.fail('value[1] != samples x period: %s' % bad[:3])
    leaves = compare(prof, ref, 'whole run')
    if sum(ref.values()) < 100 or not all(leaves.get(f, 0) >= 10 for f in ('leaf_a', 'leaf_b', 'leaf_c')):
        ck.fail('too few samples to say anything: %s' % dict(leaves))
    if leaves.most_common(1)[0][0] != 'leaf_a':
        ck.fail('leaf_a (60 %% of the CPU time) is not the top leaf: %s' % dict(leaves))
    # merging: fewer samples than events, one per (stack, thread)
    if len(prof.d['sample']) >= sum(ref.values()):
        ck.fail('%d samples for %d events: identical stacks not merged' % (len(prof.d['sample']), sum(ref.values())))
    # functions: the leaves carry their file and first line, system_name the symbol
    prog_src = [f for f in prof.funcs.values() if f[0] in ('leaf_a', 'leaf_b', 'leaf_c', 'caller')]
    if len(prog_src) != 4 or not all(f[1].endswith('smp_accuracy.c') and f[2] == f[0] and f[3] > 0
                                     for f in prog_src):
        ck.fail('functions of smp_accuracy.c: %s' % prog_src)
    # the clock: the run's length and realtime start
    if abs(prof.duration_nanos - length * 1e9 / res) > 1:
        ck.fail('duration_nanos %d, the run %.0f ns' % (prof.duration_nanos, length * 1e9 / res))
    if realtime and abs(prof.time_nanos - realtime) > 1:
        ck.fail('time_nanos %d, the archive\'s realtime start %d' % (prof.time_nanos, realtime))
    print('pprof: %d samples in %d merged samples, %d locations, %d functions, %d strings; per thread, '
          'call path and line = the reference reader\'s; leaves %s'
          % (prof.total(), len(prof.d['sample']), len(prof.locs), len(prof.funcs), len(prof.strings),
             dict(leaves)))

    # one pass with -o: the same profile
    both = os.path.join(d, 'both.pb.gz')
    tracer('convert', a, '-o', os.path.join(d, 'out.json'), '--pprof', both)
    if Profile(both).text != prof.text or not os.path.getsize(os.path.join(d, 'out.json')):
        ck.fail('convert -o X --pprof Y: a different profile than --pprof alone')

    # selection: one thread, the first half of the run
    import otf2
    with otf2.reader.open(anchor) as tr:
        locs = {L._ref: L.name for L in tr.definitions.locations}
    worker = max(locs)
    part = os.path.join(d, 'thread.pb.gz')
    tracer('convert', '--thread', str(worker), a, '--pprof', part)
    compare(Profile(part), reference(anchor, loc_ids={worker})[0], '--thread %d' % worker)
    half = os.path.join(d, 'half.pb.gz')
    tracer('convert', '--to', '50%', a, '--pprof', half)
    hp = Profile(half)
    compare(hp, reference(anchor, before=off + int(0.5 * length + 0.5))[0], '--to 50%')
    if abs(hp.duration_nanos - int(0.5 * length + 0.5) * 1e9 / res) > 1:
        ck.fail('--to 50%%: duration_nanos %d, half the run %.0f' % (hp.duration_nanos, length * 5e8 / res))
    print('pprof: --thread %d and --to 50%% select the reference reader\'s samples' % worker)

    # errors: no samples, an unwritable output: status 1, one line, no file
    demo = os.path.join(d, 'demo')
    rc, _, err = run([os.environ['DEMO']], env=dict(LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=demo))
    if rc != 0:
        ck.fail('demo under the tracer: rc %d %s' % (rc, err))
    none = os.path.join(d, 'none.pb.gz')
    rc, _, err = tracer('convert', demo, '--pprof', none, ok=False)
    if rc != 1 or len(err.splitlines()) != 1 or not err.startswith('tracer: ') or 'no samples' not in err \
            or os.path.exists(none):
        ck.fail('convert --pprof of an archive without samples: rc %d %r, file left: %s'
                % (rc, err, os.path.exists(none)))
    said = err.strip()
    rc, _, err = tracer('convert', a, '--pprof', os.path.join(d, 'no', 'such', 'dir.pb.gz'), ok=False)
    if rc != 1 or len(err.splitlines()) != 1 or not err.startswith('tracer: cannot write'):
        ck.fail('convert --pprof to an unwritable path: rc %d %r' % (rc, err))
    print('pprof: errors, status 1 and one line each: %r; %r' % (said, err.strip()))


if __name__ == '__main__':
    sys.exit(runcheck.run_case(case_pprof, 'pprof'))
