#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
gen_dual.py - generates dual_gen.c for the format end-to-end tests.

Reads the reference writer prototypes from the installed OTF2 headers
(OTF2_EvtWriter.h, OTF2_SnapWriter.h) and emits, for every event and
snapshot record, one call to our writer (otf2w_evt_<snake>) and the same
call to the reference writer (OTF2_EvtWriter_<Record>) with identical field
values. Values are chosen per "round" so that every field is written as 0,
as a mid value, as its maximum (UINT*_MAX / INT64_MIN) and as UNDEFINED.

Usage: gen_dual.py OTF2_INCLUDE_DIR OUT.c
"""
import re
import sys

ROUNDS = 4

# enum value per round (valid values of OTF2 3.0)
ENUMS = {
    'OTF2_MeasurementMode': [1, 2, 1, 2],
    'OTF2_CollectiveOp': [0, 11, 22, 17],
    'OTF2_RmaSyncLevel': [0, 1, 3, 2],
    'OTF2_LockType': [0, 1, 1, 0],
    'OTF2_RmaSyncType': [0, 1, 2, 2],
    'OTF2_RmaAtomicType': [0, 3, 7, 5],
    'OTF2_Paradigm': [0, 7, 24, 4],
    'OTF2_IoAccessMode': [0, 2, 4, 3],
    'OTF2_IoCreationFlag': [0, 5, 0x7ff, 0x400],
    'OTF2_IoStatusFlag': [0, 3, 0x1ff, 0x100],
    'OTF2_IoSeekOption': [0, 1, 4, 3],
    'OTF2_IoOperationMode': [0, 1, 2, 2],
    'OTF2_IoOperationFlag': [0, 1, 3, 2],
}

U32 = ['0', '0x%xu', '0xffffffffu', '0xfffffffeu']
U64 = ['0', '0x%xull', '0xffffffffffffffffull', '0xfffffffffffffffeull']
I64 = ['0', '-%dll', '(-0x7fffffffffffffffll - 1)', '0x7fffffffffffffffll']
MIDS32 = [0x7f, 0x80, 0x1234, 0x12345, 0x1234567, 0x80000000]
MIDS64 = [0x7f, 0x1234, 0x123456, 0x12345678, 0x123456789a,
          0x123456789abcde, 0x8000000000000000]


def camel_to_snake(name):
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name)
    return s.lower()


def prototypes(path, prefix):
    txt = open(path).read()
    txt = re.sub(r'/\*.*?\*/', '', txt, flags=re.S)
    out = []
    for m in re.finditer(r'OTF2_ErrorCode\s+' + prefix + r'(\w+)\s*\(([^;]*?)\)\s*'
                         r'(?:__otf2_deprecated__)?\s*;', txt, re.S):
        name = m.group(1)
        params = []
        for p in m.group(2).split(','):
            p = ' '.join(p.split())
            mm = re.match(r'(.*?)(\w+)$', p)
            params.append((mm.group(1).strip(), mm.group(2)))
        out.append((name, params))
    return out


def value(ctype, pname, rnd, idx):
    """C expression for one scalar field (same for both writers)."""
    if ctype in ENUMS:
        return str(ENUMS[ctype][rnd])
    if ctype == 'OTF2_IoParadigmRef':
        return ['0', '1', '1', '0xff'][rnd]
    if ctype.endswith('Ref') and ctype != 'OTF2_LocationRef':
        return ['0', '1', '1', '0xffffffffu'][rnd]
    if ctype == 'OTF2_TimeStamp':      # stopTime: after the event time
        return ['d->t', 'd->t + 1', 'd->t + 0x10000000000ull', 'd->t + 17'][rnd]
    if ctype == 'uint32_t':
        f = U32[rnd]
        return f % MIDS32[idx % len(MIDS32)] if '%' in f else f
    if ctype == 'uint64_t':
        f = U64[rnd]
        return f % MIDS64[idx % len(MIDS64)] if '%' in f else f
    if ctype == 'int64_t':
        f = I64[rnd]
        return f % (1000 + idx) if '%' in f else f
    raise SystemExit('gen_dual.py: unhandled type %s %s' % (ctype, pname))


# Parameter ids (0 STRING, 1 INT64, 2 UINT64 in dual.c) per record
PARAM_ID = {'ParameterString': 0, 'ParameterInt': 1, 'ParameterUnsignedInt': 2}

# number of array elements per round for the array records
NARR = {'Metric': [1, 3, 255, 0], 'ProgramBegin': [0, 2, 300, 1]}


def array_call(rec, params, rnd, lines, first):
    """Metric / ProgramBegin: arrays declared locally, passed as void *."""
    n = NARR[rec][rnd]
    if rec == 'Metric':
        ref = value('OTF2_MetricRef', 'metric', rnd, 0)
        lines.append('\t\tfor (i = 0; i < %d; i++) {' % n)
        lines.append('\t\t\tty[i] = dual_metric_type(i + %d);' % rnd)
        lines.append('\t\t\tva[i] = dual_metric_value(i + %d, ty[i]);' % rnd)
        lines.append('\t\t}')
        return [ref, str(n), '(const void *)ty', '(const void *)va']
    name = ['0', '1', '2', '3'][rnd]
    lines.append('\t\tfor (i = 0; i < %d; i++)' % n)
    lines.append('\t\t\targs[i] = (uint32_t)((i * 7 + %d) %% DUAL_NSTRINGS);' % rnd)
    return [name, str(n), '(const void *)args']


def gen_record(kind, rec, params, rnd, lines):
    # kind: 'evt' or 'snap'; params without writer/attrlist/time
    lines.append('\t{ /* %s %s round %d */' % (kind, rec, rnd))
    if rec in NARR:
        args = array_call(rec, params, rnd, lines, None)
        if kind == 'snap':
            args = ['orig'] + args
    else:
        args = []
        for i, (ct, pn) in enumerate(params):
            if kind == 'snap' and pn == 'origEventTime':
                args.append('orig')
            elif pn == 'parameter' and rnd != 3:
                # the python reader checks the Parameter's type
                args.append(str(PARAM_ID[rec]))
            else:
                args.append(value(ct, pn, rnd, i + len(rec)))
    snake = camel_to_snake(rec)
    if kind == 'evt':
        lines.append('\t\tdual_attrs(d, %d);' % (hash_rec(rec) + rnd))
        lines.append('\t\tDEVT%s(%s, %s%s);' % ('' if args else '0', snake, rec,
                                               ''.join(', ' + a for a in args)))
        lines.append('\t\tdual_step(d);')
    else:
        lines.append('\t\tDSNAP%s(%s, %s%s);' % ('' if args else '0', snake, rec,
                                                ''.join(', ' + a for a in args)))
        lines.append('\t\tn++;')
    lines.append('\t}')


def hash_rec(rec):
    return sum(ord(c) for c in rec)


def main():
    inc, out = sys.argv[1], sys.argv[2]
    evts = [(n, p[3:]) for n, p in prototypes(inc + '/OTF2_EvtWriter.h', 'OTF2_EvtWriter_')
            if len(p) >= 3 and p[1][0].startswith('OTF2_AttributeList')]
    snaps = [(n, p[3:]) for n, p in prototypes(inc + '/OTF2_SnapWriter.h', 'OTF2_SnapWriter_')
             if len(p) >= 3 and p[1][0].startswith('OTF2_AttributeList')]
    if len(evts) != 79 or len(snaps) != 20:
        raise SystemExit('gen_dual.py: expected 79 events / 20 snapshots, got %d / %d'
                         % (len(evts), len(snaps)))
    L = ['/* Generated by tests/format/gen_dual.py from the OTF2 headers: do not edit. */',
         '#include "dual.h"', '',
         'const int dual_n_event_types = %d;' % len(evts),
         'const char *const dual_event_names[] = {']
    L += ['\t"%s",' % n for n, _ in evts] + ['};', '']
    L += ['/* every event record type, ROUND selects the value set (0..%d) */' % (ROUNDS - 1),
          'void dual_gen_events(struct dual *d, int round)', '{',
          '\tuint8_t ty[256];', '\tuint64_t va[256];', '\tuint32_t args[512];', '\tint i;', '',
          '\t(void)i; (void)ty; (void)va; (void)args;',
          '\tswitch (round) {']
    for rnd in range(ROUNDS):
        L.append('\tcase %d:' % rnd)
        for n, p in evts:
            gen_record('evt', n, p, rnd, L)
        L.append('\t\tbreak;')
    L += ['\t}', '}', '']
    # snapshot: Start, state records, End
    L += ['/* one snapshot at d->t with every snapshot record (ROUND: value set) */',
          'void dual_gen_snapshot(struct dual *d, int round, uint64_t cont_read_pos)', '{',
          '\tuint8_t ty[256];', '\tuint64_t va[256];', '\tuint32_t args[512];', '\tint i;',
          '\tuint64_t n = 0, orig = d->t > 1000 ? d->t - 1000 : 0;', '',
          '\t(void)i; (void)ty; (void)va; (void)args;',
          '\tDSNAP(snapshot_start, SnapshotStart, (uint64_t)%d);' % (len(snaps) - 2),
          '\tswitch (round) {']
    for rnd in range(ROUNDS):
        L.append('\tcase %d:' % rnd)
        for n, p in snaps:
            if n in ('SnapshotStart', 'SnapshotEnd'):
                continue
            gen_record('snap', n, p, rnd, L)
            L.append('\t\torig += %d;' % (rnd * 3))
        L.append('\t\tbreak;')
    L += ['\t}',
          '\tif (n != %d)' % (len(snaps) - 2),
          '\t\tdual_fail("snapshot record count", __LINE__);',
          '\tDSNAP(snapshot_end, SnapshotEnd, cont_read_pos);', '}', '']
    open(out, 'w').write('\n'.join(L) + '\n')


if __name__ == '__main__':
    main()
