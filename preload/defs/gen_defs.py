#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate defs_gen.h (the definition registry's schemas and its write
dispatch) from format/records.tab.

A registry class stores one definition as a vector of 64-bit values: the
arguments of its OTF2 global-definition record in C API order, without
`self` (the dense id), arrays last as count + elements. From the record's
fields this script derives

  tr_ds_schema[]        the kind of every value (defset.h: s String,
                        r Region, g Group, ...; v plain), which unification
                        uses to translate references
  tr_ds_write_record()  the switch that writes a stored definition with its
                        otf2w_gdef_* writer (defs_write.c)

The classes are enum tr_def_class of tr_defs.h (read from there, never
listed here). The tables below are what records.tab cannot say: which
record a class is when its name does not tell, which fields refer to which
class, and the few classes stored differently (written by hand in
defs_write.c).

usage: gen_defs.py records.tab OUT_HEADER
"""
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'format'))
from gen_records import Record, snake  # noqa: E402

# The classes are enum tr_def_class of tr_defs.h (the one list, read by
# classes()); a class TR_DEF_FOO_BAR stores the record FooBar unless OPTIONS
# names another. OPTIONS (class -> options) holds what differs:
#   record:   its record, when not the class's name in CamelCase (None: no record)
#   variants: [(v0 value, record)]: the first value selects the record
#   schema:   stored layout differs from the record (hand-written writer)
#   hand:     written by defs_write.c (location members, two records, ...)
#   extra:    kinds stored after the record's values (not written)
OPTIONS = {
    'STRING': {'record': None},
    'GROUP': {'hand': 'location members renumbered in a unified archive'},
    'COMM': {'variants': [(1, 'InterComm'), (0, 'Comm')]},
    'METRIC': {'record': 'MetricClass', 'schema': 'vvv*m', 'hand': 'stored: occurrence, recorder kind, members'},
    'IO_PARADIGM': {'schema': 'vssvvvvV', 'hand': 'one property (VERSION)'},
    'IO_FILE': {'record': 'IoRegularFile', 'schema': 'vss',
                'hand': 'IoRegularFile or IoDirectory, scope from the host'},
    'IO_HANDLE': {'extra': 'v'},
}
TR_DEFS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tr_defs.h')


def classes():
    """[(class, record, options)] in the order of enum tr_def_class (tr_defs.h)."""
    import re
    text = open(TR_DEFS_H).read()
    body = re.search(r'enum tr_def_class \{(.*?)\};', text, re.S).group(1)
    names = [n for n in re.findall(r'TR_DEF_(\w+)', body) if n != 'NCLASSES']
    unknown = set(OPTIONS) - set(names)
    if unknown:
        raise SystemExit('gen_defs.py: OPTIONS for classes not in enum tr_def_class: %s' % sorted(unknown))
    out = []
    for n in names:
        opt = OPTIONS.get(n, {})
        rec = opt['record'] if 'record' in opt else ''.join(w.capitalize() for w in n.split('_'))
        out.append((n, rec, opt))
    return out


# field name -> kind of the class it refers to (defset.h)
KIND = {
    'name': 's', 'description': 's', 'canonicalName': 's', 'sourceFile': 's', 'file': 's',
    'unit': 's', 'identification': 's', 'scope': 's',
    'region': 'r', 'enteredRegion': 'r', 'leftRegion': 'r',
    'group': 'g', 'groupA': 'g', 'groupB': 'g',
    'comm': 'c', 'communicator': 'c', 'commonCommunicator': 'c',
    'sourceCodeLocation': 'l', 'callingContext': 'x', 'metricMembers': 'm', 'metric': 'M',
    'cartDimensions': 'd', 'cartTopology': 't', 'callpath': 'p', 'ioFile': 'f', 'ioHandle': 'h',
    'locationGroup': 'G', 'value': 'V',
}
# fields whose meaning depends on the record
KIND_IN = {('CallingContext', 'parent'): 'x', ('Callpath', 'parent'): 'p', ('Comm', 'parent'): 'c',
           ('InterComm', 'parent'): 'c', ('IoHandle', 'parent'): 'h', ('IoHandle', 'file'): 'f'}
# location ids (renumbered in a unified archive: OUT_LOC)
LOCATION = {'location', 'recorder'}

CAST = {'u8': 'uint8_t', 'cu32': 'uint32_t', 'ci64': 'int64_t'}


def values(r):
    """The stored values of record r: its C parameters after self."""
    ps = list(r.params)
    if ps and ps[0].name == 'self':
        ps = ps[1:]
    return ps


def kind(r, f):
    return KIND_IN.get((r.name, f.name), KIND.get(f.name, 'v'))


def schema(r):
    out = ''
    for f in values(r):
        if hasattr(f, 'count'):
            out += '*' + kind(r, f)
        else:
            out += kind(r, f)
    return out


def call(r, off):
    """C call writing record r from v[off..]."""
    args = ['g']
    if r.params and r.params[0].name == 'self':
        args.append('id')
    pre = []
    for i, f in enumerate(values(r)):
        x = 'v[%d]' % (off + i)
        if hasattr(f, 'count'):
            cnt = off + [p.name for p in values(r)].index(f.count.name)
            if f.enc == 'cu32':
                pre.append('for (uint32_t i = 0; i < v[%d] && i < 255; i++)\n\t\t\ta32[i] = (uint32_t)v[%d + i];'
                           % (cnt, off + i))
                args.append('a32')
            else:
                args.append('v + %d' % (off + i))
        elif f.name in LOCATION:
            args.append('OUT_LOC(%s)' % x)
        elif kind(r, f) == 'G':
            args.append('OWN_GROUP(%s)' % x)
        elif f.enc in CAST:
            args.append('(%s)%s' % (CAST[f.enc], x))
        else:
            args.append(x)
    return pre, 'otf2w_gdef_%s(%s)' % (snake(r.name), ', '.join(args))


def main():
    tab, out = sys.argv[1], sys.argv[2]
    recs = {}
    with open(tab) as fh:
        for line in fh:
            line = line.rstrip('\n')
            if line.startswith('gdef '):
                r = Record(line)
                recs[r.name] = r
    sch, cases, hand = [], [], []
    for cls, rec, opt in classes():
        if rec is None:
            sch.append('\t[TR_DEF_%s] = "",' % cls)
            continue
        if rec not in recs:
            raise SystemExit('gen_defs.py: class %s: no record %s in records.tab (OPTIONS record)' % (cls, rec))
        r = recs[rec]
        if 'schema' in opt:
            s = opt['schema']
        elif 'variants' in opt:
            s = 'v' + schema(recs[opt['variants'][-1][1]])
        else:
            s = schema(r) + opt.get('extra', '')
        sch.append('\t[TR_DEF_%s] = "%s",%s' % (cls, s, ' ' * max(1, 28 - len(cls) - len(s)) + '/* ' + rec + ' */'))
        if 'hand' in opt:
            hand.append('%s (%s)' % (cls, opt['hand']))
            continue
        lines = ['\tcase TR_DEF_%s:' % cls]
        if 'variants' in opt:
            for val, vr in opt['variants']:
                pre, c = call(recs[vr], 1)
                lines += ['\t\tif (v[0] == %d)' % val if val else '\t\telse'] + ['\t\t\t' + p for p in pre]
                lines.append('\t\t\t*st = %s;' % c)
            lines.append('\t\treturn 1;')
        else:
            pre, c = call(r, 0)
            lines += ['\t\t' + p for p in pre] + ['\t\t*st = %s;' % c, '\t\treturn 1;']
        cases.append('\n'.join(lines))
    inter = 'v' + schema(recs['InterComm'])
    with open(out, 'w') as fh:
        fh.write('/* Generated by preload/defs/gen_defs.py from format/records.tab: do not edit. */\n')
        fh.write('#ifndef TR_DEFS_GEN_H\n#define TR_DEFS_GEN_H\n\n')
        fh.write('#ifdef TR_DEFS_GEN_SCHEMA\n')
        fh.write('/* Kinds of the stored values of each class (defset.h). */\n')
        fh.write('static const char *const tr_schema[TR_DEF_NCLASSES] = {\n%s\n};\n' % '\n'.join(sch))
        fh.write('static const char tr_schema_intercomm[] = "%s";   /* InterComm */\n' % inter)
        fh.write('#endif\n\n#ifdef TR_DEFS_GEN_WRITE\n')
        fh.write('/* Write a definition (class cls, id, values v) with its record: 1 and its\n'
                 ' * status in *st; 0 for the classes written by hand:\n *   %s\n'
                 ' * OUT_LOC(x): a location id as written; OWN_GROUP(x): the location group\n'
                 ' * of the defining process. */\n' % '\n *   '.join(hand))
        fh.write('static int write_record(otf2w_gdef_writer *g, uint32_t cls, uint32_t id, const uint64_t *v,\n'
                 '\t\t\tconst struct defset *s, uint32_t own_group, otf2w_status *st)\n{\n'
                 '\tuint32_t a32[256];\n\t(void)s;\n\t(void)own_group;\n\t(void)a32;\n\tswitch (cls) {\n')
        fh.write('\n'.join(cases))
        fh.write('\n\tdefault:\n\t\treturn 0;\n\t}\n}\n#endif\n\n#endif\n')


if __name__ == '__main__':
    main()
