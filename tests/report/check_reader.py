#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check_reader.py RECORDS_TAB OTF2R_DUMP ARCHIVE [MIN_EVENTS]

Reads ARCHIVE with our reader (otf2r_dump, global time order) and with the
reference reader (libotf2 3.0.2 through python3-otf2's _otf2 module, raw
callbacks: ids and values exactly as the reference delivers them after
mapping tables and clock offsets) and compares every global definition and
every event field by field (names from records.tab), attributes included.
Snapshots and markers, which the python bindings cannot read, are compared
with otf2-print -A (record, location, time, counts) and otf2-marker (every
field).
Fields our dump has and the reference API hides (attic fields, array
counts) are compared where the reference gives them. Fails on the first
differences (the first ten records that differ); MIN_EVENTS guards against
comparing two empty streams. The tools run in runcheck's clean environment;
the failures are a runcheck.Checker's.
"""
import os
import re
import struct
import sys

import _otf2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[1]))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from gen_records import Record  # noqa: E402
import runcheck  # noqa: E402


def av_raw(v, t):
    """OTF2_AttributeValue union -> the raw 64-bit pattern otf2r reports."""
    m = (1 << 64) - 1
    t = num(t)
    if t == 1:
        return v.uint8
    if t == 2:
        return v.uint16
    if t == 3:
        return v.uint32
    if t == 5:
        return v.int8 & m
    if t == 6:
        return v.int16 & m
    if t == 7:
        return v.int32 & m
    if t == 8:
        return v.int64 & m
    if t == 9:
        return struct.unpack('<I', struct.pack('<f', v.float32))[0]
    if t == 10:
        return struct.unpack('<Q', struct.pack('<d', v.float64))[0]
    if t in (11, 12) or 14 <= t <= 25:
        return v.uint32
    return v.uint64


def num(v):
    if hasattr(v, 'value'):
        v = v.value
    if isinstance(v, (bytes, bytearray)):
        return v[0] if v else 0
    try:
        return int(v)
    except ValueError:
        return bytes(v)[0]


def fmt_val(f, v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bool):
        return str(int(v))
    return str(num(v)) if not isinstance(v, str) else v


def values(r, args):
    """API-order args of a reference callback -> {disk field name: text}"""
    params = list(r.params)
    counts = [f for f in r.fields if f.array]
    if len(args) != len(params):
        # arrays come as lists without their count argument
        params = [p for p in params if not any(p is c for c in counts)]
    if len(args) != len(params):
        raise SystemExit('%s: %d reference args for %d params' % (r.name, len(args), len(params)))
    out = {}
    types = {}
    for p, a in zip(params, args):
        types[p.name] = a
    for p, a in zip(params, args):
        if p.enc == 'av':
            tname = 'types' if p.name == 'values' else 'type'
            if isinstance(a, (list, tuple)):
                out[p.name] = ','.join(str(av_raw(x, num(t))) for x, t in zip(a, types[tname]))
            else:
                out[p.name] = str(av_raw(a, num(types[tname])))
        elif p.name == 'metricValues':
            # union of the metric value: compare the raw 64-bit pattern
            out[p.name] = ','.join(str(x.unsigned_int) for x in a)
        elif isinstance(a, (list, tuple)):
            out[p.name] = ','.join(fmt_val(p, x) for x in a)
            for f in r.fields:
                if f.array and any(x is p for x in f.array):
                    out[f.name] = str(len(a))
        elif p.enc == 'f64':
            out[p.name] = '%.17g' % a
        else:
            out[p.name] = fmt_val(p, a)
    return out


def reference(tab, path):
    recs = [Record(x.strip()) for x in open(tab) if x.strip() and not x.startswith('#')]
    lines = []
    h = _otf2.Reader_Open(path)
    _otf2.Reader_SetSerialCollectiveCallbacks(h)
    gdr = _otf2.Reader_GetGlobalDefReader(h)
    cbs = _otf2.GlobalDefReaderCallbacks_New()
    locs = []
    keep = []  # the bindings do not own the callbacks

    def def_cb(r):
        def cb(_ud, *args):
            v = values(r, args)
            lines.append(('DEF', r.name, v))
            if r.name == 'Location':
                locs.append(int(args[0]))
            return _otf2.CALLBACK_SUCCESS
        return cb

    def register(kind, setter, make, cbs):
        for r in recs:
            if r.kind == kind:
                keep.append(make(r))
                getattr(_otf2, setter % r.name)(cbs, keep[-1])

    register('gdef', 'GlobalDefReaderCallbacks_Set%sCallback', def_cb, cbs)
    _otf2.Reader_RegisterGlobalDefCallbacks(h, gdr, cbs, None)
    _otf2.Reader_ReadAllGlobalDefinitions(h, gdr)
    _otf2.GlobalDefReaderCallbacks_Delete(cbs)
    for loc in locs:
        _otf2.Reader_SelectLocation(h, loc)
    _otf2.Reader_OpenDefFiles(h)
    _otf2.Reader_OpenEvtFiles(h)
    base = path[:-len('.otf2')]
    for loc in locs:
        if not os.path.exists('%s/%d.def' % (base, loc)):
            continue
        dr = _otf2.Reader_GetDefReader(h, loc)
        _otf2.Reader_ReadAllLocalDefinitions(h, dr)
        _otf2.Reader_CloseDefReader(h, dr)
    _otf2.Reader_CloseDefFiles(h)
    for loc in locs:
        _otf2.Reader_GetEvtReader(h, loc)
    ger = _otf2.Reader_GetGlobalEvtReader(h)
    ecbs = _otf2.GlobalEvtReaderCallbacks_New()

    def evt_cb(r):
        def cb(loc, time, _ud, al, *args):
            v = values(r, args)
            n = _otf2.AttributeList_GetNumberOfElements(al) if al else 0
            attrs = []
            for i in range(n):
                ref, t, val = _otf2.AttributeList_GetAttributeByIndex(al, i)
                attrs.append('%d:%d:%d' % (num(ref), num(t), av_raw(val, t)))
            lines.append(('EVT %d %d' % (loc, time), r.name, v, attrs))
            return _otf2.CALLBACK_SUCCESS
        return cb

    register('evt', 'GlobalEvtReaderCallbacks_Set%sCallback', evt_cb, ecbs)
    _otf2.GlobalEvtReader_SetCallbacks(ger, ecbs, None)
    _otf2.GlobalEvtReaderCallbacks_Delete(ecbs)
    while _otf2.GlobalEvtReader_ReadEvents(ger, 100000) == 100000:
        pass
    _otf2.Reader_CloseGlobalEvtReader(h, ger)
    _otf2.Reader_CloseEvtFiles(h)
    _otf2.Reader_Close(h)
    return lines


SEVERITY = ['NONE', 'LOW', 'MEDIUM', 'HIGH']
SCOPE = ['GLOBAL', 'LOCATION', 'LOCATION_GROUP', 'SYSTEM_TREE_NODE', 'GROUP', 'COMM']


def tool(argv):
    """A reader tool's run (clean environment): its stdout and stderr as
    text (undecodable bytes kept as surrogates), exit status."""
    p = runcheck.run_untraced(argv, timeout=600, binary=True)
    return (p.stdout.decode('utf-8', 'surrogateescape'), p.stderr.decode('utf-8', 'surrogateescape'),
            p.returncode)


def check_markers(ck, path, ours):
    """our DefMarker/Marker records against otf2-marker's listing (the python
    bindings cannot read marker files: RegisterMarkerCallbacks raises)"""
    if not os.path.exists(path[:-len('.otf2')] + '.marker'):
        return 0
    out, err, status = tool(['otf2-marker', path])
    if not ck.expect(status == 0, 'otf2-marker failed: ' + err):
        return 0
    defs = [o for o in ours if o[0] == 'MARKER' and o[1] == 'DefMarker']
    marks = [o for o in ours if o[0] == 'MARKER' and o[1] == 'Marker']
    want = []
    for d in defs:
        v = d[2]
        want.append('MARKER_DEF  Group: "%s", Category: "%s", Severity: %s'
                    % (v['markerGroup'], v['markerCategory'], SEVERITY[int(v['severity'])]))
        mine = sorted((m[2] for m in marks if m[2]['marker'] == v['self']),
                      key=lambda m: int(m['timestamp']))
        for m in mine:
            sc = SCOPE[int(m['scope'])]
            if sc != 'GLOBAL':
                sc += ':' + m['scopeRef']
            want.append('MARKER      Time: %s, Duration %s, Scope: %s, Text: "%s"'
                        % (m['timestamp'], m['duration'], sc, m['text']))
    got = out.splitlines()
    if not ck.expect(want == got, 'markers differ from otf2-marker:\n  ours %s\n  otf2-marker %s' % (want, got)):
        return 0
    return len(defs) + len(marks)


def check_snapshots(ck, path, ours):
    """our snapshot records against otf2-print -A (the python bindings have no
    snapshot reader): per location the sequence of (record, time) - the
    snapshot time for SnapshotStart/End, else origEventTime - and the counts
    of SnapshotStart (# Events) and SnapshotEnd (Cont. Read Position)"""
    mine = [o for o in ours if o[0].startswith('SNAP ')]
    text = tool(['otf2-print', '-A', path])[0]
    if '=== Snapshots' not in text:
        ck.expect(not mine, 'otf2-print shows no snapshot, ours %d' % len(mine))
        return 0
    want = {}
    for line in text.split('=== Snapshots', 1)[1].splitlines()[3:]:
        w = line.split()
        if len(w) < 3 or not w[1].isdigit():
            continue
        extra = ''
        if w[0] == 'SNAPSHOT_START':
            extra = line.split('# Events:')[1].strip()
        elif w[0] == 'SNAPSHOT_END':
            extra = line.split('Position:')[1].strip()
        want.setdefault(int(w[1]), []).append((w[0], int(w[2]), extra))
    rename = {'ParameterInt': 'PARAMETER_INT64', 'ParameterUnsignedInt': 'PARAMETER_UINT64'}
    got = {}
    for key, name, v, _ in mine:
        _, loc, snap_time = key.split()
        t = int(v.get('origEventTime', snap_time))
        extra = v.get('numberOfRecords', '') if name == 'SnapshotStart' else \
            v.get('contReadPos', '') if name == 'SnapshotEnd' else ''
        upper = rename.get(name) or re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name).upper()
        got.setdefault(int(loc), []).append((upper, t, extra))
    for loc in sorted(set(got) | set(want)):
        if not ck.expect(got.get(loc) == want.get(loc),
                         'snapshots of location %d differ from otf2-print:\n  ours %s\n  otf2-print %s'
                         % (loc, got.get(loc, [])[:6], want.get(loc, [])[:6])):
            return 0
    return len(mine)


def parse_ours(text):
    out = []
    for line in text.splitlines():
        if line.startswith('LDEF'):
            continue
        head, _, rest = line.partition('=')
        words = line.split(' ')
        if line.startswith('DEF ') or line.startswith('MARKER '):
            key, name, fields = words[0], words[1], words[2:]
        else:
            key, name, fields = ' '.join(words[:3]), words[3], words[4:]
        v, attrs = {}, []
        # values never contain ' name=' except strings: rejoin on known names
        cur = None
        for w in fields:
            k, eq, val = w.partition('=')
            if eq and k.isidentifier():
                if k == 'attr':
                    attrs.append(val)
                    cur = None
                    continue
                v[k] = val
                cur = k
            elif cur:
                v[cur] += ' ' + w
        out.append((key, name, v, attrs))
    return out


def same(o, r):
    """Our record o is the reference's r: key, name, every field the
    reference gives, the attributes of an event."""
    if o[0] != r[0] or o[1] != r[1]:
        return False
    if any(k not in o[2] or o[2][k] != val for k, val in r[2].items()):
        return False
    return r[0] in ('DEF', 'MARKER') or sorted(o[3]) == sorted(r[3])


def main():
    tab, dump, path = sys.argv[1:4]
    min_events = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if os.path.isdir(path):
        names = sorted(f for f in os.listdir(path) if f.endswith('.otf2'))
        path = os.path.join(path, 'traces.otf2' if 'traces.otf2' in names else names[0])
    ck = runcheck.Checker()
    out, err, status = tool([dump, path])
    if not ck.expect(status == 0, 'otf2r_dump failed: ' + err):
        return ck.done()
    ours = parse_ours(out)
    ref = reference(tab, path)
    nmark = check_markers(ck, path, ours)
    nsnap = check_snapshots(ck, path, ours)
    ours = [o for o in ours if o[0] != 'MARKER' and not o[0].startswith('SNAP')]
    ck.expect(len(ours) == len(ref), 'record count: ours %d, reference %d' % (len(ours), len(ref)))
    ndiff = 0
    for i, (o, r) in enumerate(zip(ours, ref)):
        if not ck.expect(same(o, r), '#%d ours %s\n    reference %s' % (i, o, r)):
            ndiff += 1
            if ndiff > 10:
                break
    nevt = sum(1 for r in ref if r[0].startswith('EVT'))
    ndef = len(ref) - nevt
    ck.expect(nevt >= min_events, 'only %d events (want >= %d)' % (nevt, min_events))
    return ck.done('check_reader: %s: %d definitions, %d events, %d snapshot records, %d marker records identical'
                   % (path, ndef, nevt, nsnap, nmark))


if __name__ == '__main__':
    sys.exit(main())
