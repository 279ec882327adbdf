#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check_dual.py FMT_DUAL MODE WORKDIR

Runs `FMT_DUAL MODE WORKDIR` (writes WORKDIR/ours with our writer and
WORKDIR/ref with the reference libotf2 writer, same calls, same values) and
compares the two archives through the reference readers:

  1. otf2-print -A -M -C: anchor, every global definition, mapping tables,
     clock offsets, every event (with its attribute list, after mapping and
     clock correction) and every snapshot record must print identically
     (only the trace identifier and the archive path may differ);
     ours must give no [OTF2] error line on stderr.
  2. otf2-print -Werror must accept ours (the reference archive is clean).
  3. otf2-marker: identical marker definitions and markers.
  4. the Python reader (otf2.reader): every definition of every registry and
     every event (type, location, time, every field, attributes) identical.
  5. explicit expectations (mode all): all 79 event types on location 0
     (4 value rounds, 3 in the python-read archive), mapping/clock-offset effect on location 1, empty
     location 2, 4 snapshots per location; (mode edge): event counts.
"""
import ctypes
import os
import re
import sys

import otf2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck  # noqa: E402  (not "rc": main names exit statuses rc)

ck = runcheck.Checker()   # every difference is reported


def run(cmd):
    """cmd in runcheck's clean environment: (exit status, stdout, stderr)."""
    p = runcheck.run_untraced(cmd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def short(s, n=300):
    return s if len(s) <= n else s[:n] + '...(%d chars)' % len(s)


def diff_lines(name, a, b):
    """a = ours, b = reference; report the first differences"""
    if a == b:
        return True
    ck.fail('%s differs from the reference (%d vs %d lines)' % (name, len(a), len(b)))
    shown = 0
    for i in range(max(len(a), len(b))):
        la = a[i] if i < len(a) else '<missing>'
        lb = b[i] if i < len(b) else '<missing>'
        if la != lb:
            print('  line %d\n    ours: %s\n    ref:  %s' % (i + 1, short(la), short(lb)),
                  file=sys.stderr)
            shown += 1
            if shown >= 10:
                break
    return False


def norm_print(text, archive):
    out = []
    for line in text.splitlines():
        if line.startswith('Trace identifier'):
            continue
        out.append(line.replace(archive, 'ARCHIVE'))
    return out


# ---- Python reader ------------------------------------------------------------------

def norm(v, depth=0):
    """a comparable value for any field of a definition or an event"""
    if v is None or isinstance(v, (int, float, str, bytes)):
        if isinstance(v, float) and v != v:
            return 'nan'
        return v
    if isinstance(v, ctypes._SimpleCData):     # _otf2 enums and flags are ctypes values
        return (type(v).__name__, v.value)
    if hasattr(v, '_ref'):                     # reference to a definition
        return (type(v).__name__, v._ref)
    if isinstance(v, dict):
        return sorted((repr(norm(k, depth + 1)), repr(norm(x, depth + 1))) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return [norm(x, depth + 1) for x in v]
    if hasattr(v, '_fields') and depth < 2:           # definition without own id
        return (type(v).__name__, def_fields(v, depth + 1))
    if hasattr(v, '__dict__') and vars(v) and depth < 2:
        return (type(v).__name__, sorted((k, repr(norm(x, depth + 1)))
                                         for k, x in vars(v).items()))
    ck.fail('python: cannot compare a value of type %s: %r' % (type(v).__name__, v))
    return repr(v)


def def_fields(d, depth=0):
    out = []
    for f in d._fields:
        name = getattr(f, 'name', None) or f[0]
        try:
            val = getattr(d, name)
        except Exception as e:          # noqa: BLE001
            val = 'ERR %s' % type(e).__name__
        out.append((name, norm(val, depth)))
    if hasattr(d, '_ref'):
        out.insert(0, ('_ref', d._ref))
    return out


def read_python(anchor):
    """(definitions, events) as comparable lists"""
    defs, evts = [], []
    with otf2.reader.open(anchor) as tr:
        dd = tr.definitions
        for name in sorted(dir(dd)):
            if name.startswith('_'):
                continue
            reg = getattr(dd, name)
            if callable(reg) or not hasattr(reg, '__iter__') or isinstance(reg, (str, bytes)):
                continue
            try:
                items = list(reg)
            except TypeError:
                continue
            for x in items:
                if hasattr(x, '_fields'):
                    defs.append((name, type(x).__name__, def_fields(x)))
                else:
                    defs.append((name, repr(norm(x))))
        cp = dd.clock_properties
        if cp is not None:
            defs.append(('clock_properties', def_fields(cp)))
        for loc, ev in tr.events:
            f = {k: norm(v) for k, v in vars(ev).items()}
            evts.append((loc._ref, type(ev).__name__, sorted((k, repr(v)) for k, v in f.items())))
    return defs, evts


def compare_python(ours, ref):
    try:
        od, oe = read_python(ours)
    except Exception as e:              # noqa: BLE001
        ck.fail('python reader failed on ours: %r' % e)
        return None
    rd, re_ = read_python(ref)
    if len(od) != len(rd):
        ck.fail('python: %d definitions in ours, %d in the reference' % (len(od), len(rd)))
    for a, b in zip(od, rd):
        if a != b:
            ck.fail('python: definition differs:\n    ours: %s\n    ref:  %s'
                 % (short(repr(a), 600), short(repr(b), 600)))
            break
    if len(oe) != len(re_):
        ck.fail('python: %d events in ours, %d in the reference' % (len(oe), len(re_)))
    bad = 0
    for i, (a, b) in enumerate(zip(oe, re_)):
        if a != b:
            ck.fail('python: event %d differs:\n    ours: %s\n    ref:  %s'
                 % (i, short(repr(a), 600), short(repr(b), 600)))
            bad += 1
            if bad >= 5:
                break
    print('python reader: %d definitions, %d events compared' % (len(od), len(oe)))
    return oe


# ---- explicit expectations --------------------------------------------------------------

def expect_all(evts, printed):
    n = sum(1 for l in printed if re.match(r'[A-Z_]+ +0 +[0-9]+ ', l)
            and not l.startswith('SNAPSHOT'))
    if n < 79 * 4:
        ck.fail('otf2-print: %d records on location 0, expected >= %d' % (n, 79 * 4))
    by_loc = {}
    for loc, name, fields in evts:
        by_loc.setdefault(loc, []).append((name, dict(fields)))
    loc0 = by_loc.get(0, [])
    counts = {}
    for name, _ in loc0:
        counts[name] = counts.get(name, 0) + 1
    if len(counts) != 79:
        ck.fail('location 0: %d distinct event types, expected 79' % len(counts))
    for name, n in counts.items():
        if n != 3:      # value rounds 0..2 (all-py archive)
            ck.fail('location 0: %s appears %d times, expected 3' % (name, n))
    if 2 in by_loc:
        ck.fail('location 2 (no events) has %d events' % len(by_loc[2]))
    if len(by_loc.get(4294967296, [])) != 2:
        ck.fail('location 2^32: expected 2 events')
    # location 1: clock offsets (0,0) (1000,100) (3000,-50) and mapping tables
    loc1 = by_loc.get(1, [])
    want = [('Enter', 550), ('MpiSend', 1100), ('ParameterString', 2025),
            ('BufferFlush', 3875), ('Leave', 3875)]
    got = [(n, int(f['time'])) for n, f in loc1]
    if got != want:
        ck.fail('location 1: clock-corrected events %s, expected %s' % (got, want))
    else:
        f = dict(loc1[0][1])
        if f.get('region') != repr(('Region', 1)):
            ck.fail('location 1: Enter region not mapped 0->1: %s' % f.get('region'))
        f = dict(loc1[1][1])
        if f.get('communicator') != repr(('Comm', 1)):
            ck.fail('location 1: MpiSend comm not mapped 1000->1: %s' % f.get('communicator'))
        attrs = f.get('attributes', '')
        if "('Attribute', 26)" not in attrs or "('Attribute', 4)" not in attrs:
            ck.fail('location 1: attribute ids not mapped (200->26, 3->4): %s' % attrs)
        f = dict(loc1[2][1])
        if f.get('string') != repr('tab\there "quoted" back\\slash'):  # string 3
            ck.fail('location 1: ParameterString string not mapped 7->3: %s' % f.get('string'))
    # otf2-print -M -C shows the tables and offsets
    for pat in [r'MAPPING_TABLE +1 +Type: REGION, \[1,0\]',
                r'MAPPING_TABLE +1 +Type: COMM, \{5=>0,1000=>1\}',
                r'CLOCK_OFFSET +1 +Time: 1000, Offset: \+100, StdDev: 0.5',
                r'CLOCK_OFFSET +1 +Time: 3000, Offset: -50, StdDev: 1.5']:
        if not any(re.match(pat, l) for l in printed):
            ck.fail('otf2-print -M -C: no line matching %s' % pat)
    section, kinds = None, {}
    for l in printed:
        if l.startswith('=== '):
            section = l.split()[1]
            continue
        m = re.match(r'([A-Z][A-Z0-9_]+) ', l)
        if m and section:
            kinds.setdefault(section, set()).add(m.group(1))
    n = len(kinds.get('Global', ()))
    if n != 38:
        ck.fail('otf2-print shows %d kinds of global definitions, expected all 38: %s'
             % (n, sorted(kinds.get('Global', ()))))
    n = len(kinds.get('Snapshots', ()))
    if n != 20:
        ck.fail('otf2-print shows %d kinds of snapshot records, expected all 20: %s'
             % (n, sorted(kinds.get('Snapshots', ()))))
    snaps = [l for l in printed if l.startswith('SNAPSHOT_START')]
    if len(snaps) != 16:
        ck.fail('%d SNAPSHOT_START records printed, expected 16 (4 per location)' % len(snaps))
    if not any(l.startswith('Number of snapshots') and l.split()[-1] == '4' for l in printed):
        ck.fail('anchor: number of snapshots is not 4')


def expect_edge(evts):
    n = {}
    for loc, name, fields in evts:
        n[loc] = n.get(loc, 0) + 1
    if n.get(0) != 100000 or n.get(1) != 2000 or 2 in n or 4294967296 in n:
        ck.fail('edge: events per location %s, expected {0: 100000, 1: 2000}' % n)


def main():
    exe, mode, work = sys.argv[1], sys.argv[2], sys.argv[3]
    rc, out, err = run([exe, mode, work])
    if rc != 0:
        ck.fail('%s %s failed (rc %d): %s' % (exe, mode, rc, err.strip()))
        return 1
    ours = os.path.join(work, 'ours', 'traces.otf2')
    ref = os.path.join(work, 'ref', 'traces.otf2')

    rc, oo, oerr = run(['otf2-print', '-A', '-M', '-C', ours])
    if rc != 0:
        ck.fail('otf2-print -A -M -C ours: rc %d: %s' % (rc, short(oerr, 2000)))
    for l in oerr.splitlines():
        if l.startswith('[OTF2]') or 'warning' in l or 'error' in l:
            ck.fail('otf2-print stderr on ours: ' + short(l))
            break
    rc, ro, rerr = run(['otf2-print', '-A', '-M', '-C', ref])
    if rc != 0:
        ck.fail('otf2-print on the reference archive failed: ' + short(rerr, 2000))
    po = norm_print(oo, os.path.dirname(ours))
    pr = norm_print(ro, os.path.dirname(ref))
    # the reference writes no <loc>.def for locations without local definitions,
    # which otf2-print reports on stderr; ours may write empty ones: not compared.
    diff_lines('otf2-print -A -M -C', po, pr)
    print('otf2-print: %d lines compared' % len(po))

    rc, _, werr = run(['otf2-print', '-Werror', '--silent', ours])
    if rc != 0:
        ck.fail('otf2-print -Werror rejects ours: ' + short(werr, 2000))

    rc, mo, merr = run(['otf2-marker', ours])
    rc2, mr, _ = run(['otf2-marker', ref])
    if rc != 0:
        ck.fail('otf2-marker ours: rc %d %s' % (rc, short(merr)))
    diff_lines('otf2-marker', mo.splitlines(), mr.splitlines())
    if mode == 'all':
        nd = sum(1 for l in mo.splitlines() if l.startswith('MARKER_DEF'))
        nm = sum(1 for l in mo.splitlines() if l.startswith('MARKER '))
        if (nd, nm) != (3, 6):
            ck.fail('otf2-marker: %d DefMarker and %d Marker records, expected 3 and 6' % (nd, nm))

    # information only: which files are byte-identical to libotf2's
    same, differ = [], []
    for root, _, files in os.walk(os.path.dirname(ref)):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), os.path.dirname(ref))
            o = os.path.join(os.path.dirname(ours), rel)
            if os.path.exists(o) and open(o, 'rb').read() == open(os.path.join(root, f), 'rb').read():
                same.append(rel)
            else:
                differ.append(rel)
    print('byte-identical to libotf2: %s; different: %s' % (sorted(same), sorted(differ)))

    if mode == 'all':
        # python3-otf2 cannot read InterComm definitions: compare a second
        # pair of archives written without it
        pywork = os.path.join(work, 'py')
        rc, out, err = run([exe, 'all-py', pywork])
        if rc != 0:
            ck.fail('%s all-py failed (rc %d): %s' % (exe, rc, err.strip()))
            return 1
        ours = os.path.join(pywork, 'ours', 'traces.otf2')
        ref = os.path.join(pywork, 'ref', 'traces.otf2')
    evts = compare_python(ours, ref)
    if evts is not None:
        if mode == 'all':
            expect_all(evts, po)
        else:
            expect_edge(evts)

    return ck.done('OK: %s archive of our writer matches the reference writer' % mode)


if __name__ == '__main__':
    sys.exit(main())
