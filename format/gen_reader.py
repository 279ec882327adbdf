#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the reader's record decoders (otf2r_records.h, reader_records.c)
from records.tab, the same table the writer is generated from.

usage: gen_reader.py records.tab OUT_HEADER OUT_SOURCE
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_records import Record, snake  # noqa: E402  (one parser of records.tab)

CTYPE = {'u8': 'uint8_t', 'cu32': 'uint32_t', 'cu64': 'uint64_t',
         'ci64': 'int64_t', 't64': 'uint64_t', 'f64': 'double',
         'str': 'const char *', 'av': 'uint64_t', 'idmap': 'otf2r_idmap'}
GET = {'u8': 'otf2r__u8', 'cu32': 'otf2r__cu32', 'cu64': 'otf2r__cu64',
       'ci64': 'otf2r__ci64', 't64': 'otf2r__t64', 'f64': 'otf2r__f64',
       'str': 'otf2r__str'}
FMT = {'u8': ('%u', '(unsigned)'), 'cu32': ('%" PRIu32 "', ''),
       'cu64': ('%" PRIu64 "', ''), 'ci64': ('%" PRId64 "', ''),
       't64': ('%" PRIu64 "', ''), 'f64': ('%.17g', ''),
       'av': ('%" PRIu64 "', '')}

# Event fields the reader maps from local to global ids (otf2-format.md
# §5.1, fields marked "*"): field name -> MappingType.
EVT_MAP = {'region': 'REGION', 'communicator': 'COMM', 'win': 'RMA_WIN',
           'group': 'GROUP', 'metric': 'METRIC', 'parameter': 'PARAMETER',
           'string': 'STRING', 'threadTeam': 'COMM',
           'threadContingent': 'COMM', 'callingContext': 'CALLING_CONTEXT',
           'interruptGenerator': 'INTERRUPT_GENERATOR', 'handle': 'IO_HANDLE',
           'oldHandle': 'IO_HANDLE', 'newHandle': 'IO_HANDLE',
           'file': 'IO_FILE', 'programName': 'STRING',
           'programArguments': 'STRING'}

# Defaults of optional trailing definition fields (otf2-format.md §5.2);
# anything else absent reads as UNDEFINED (all ones) or 0 for u8.
DEFAULTS = {('Region', 'canonicalName'): 'u->name',
            ('Comm', 'flags'): '0', ('RmaWin', 'flags'): '1',
            ('MetricClass', 'recorderKind'): '0',
            ('SystemTreeNodeProperty', 'type'): '11',
            ('SystemTreeNodeProperty', 'value'): 'u->string_value',
            ('LocationGroupProperty', 'type'): '11',
            ('LocationGroupProperty', 'value'): 'u->string_value',
            ('LocationProperty', 'type'): '11',
            ('LocationProperty', 'value'): 'u->string_value'}


def sname(r):
    return 'otf2r_%s_%s' % (r.kind, snake(r.name))


def struct(r, h):
    h.append('typedef struct {')
    if not r.fields:
        h.append('\tchar unused_;')
    for f in r.fields:
        h.append('\t%s %s;' % (CTYPE[f.enc], f.c))
        for a in f.array or ():
            h.append('\tconst %s *%s;' % (CTYPE[a.enc], a.c))
    h.append('} %s;' % sname(r))


def get(f, dst, typ):
    if f.enc == 'av':
        return 'if (otf2r__av(c, %s, &%s)) return -1;' % (typ, dst)
    if f.enc == 'idmap':
        return 'if (otf2r__idmap(c, a, &%s)) return -1;' % dst
    return 'if (%s(c, &%s)) return -1;' % (GET[f.enc], dst)


def decoder(r, c):
    c.append('static int dec_%s_%s(otf2r__cur *c, %s *u, otf2r__arena *a)'
             % (r.kind, snake(r.name), sname(r)))
    c.append('{')
    c.append('\t(void)a;')
    optional = r.kind in ('gdef', 'ldef')
    prev = None
    for i, f in enumerate(r.fields):
        if optional and i > 0:
            c.append('\tif (c->p >= c->end) {')
            for g in r.fields[i:]:
                d = DEFAULTS.get((r.name, g.name))
                if d is None:
                    d = '0' if g.enc in ('u8', 'f64') else '(%s)-1' % CTYPE[g.enc]
                    if g.enc in ('str', 'idmap'):
                        d = None
                if d is not None:
                    c.append('\t\tu->%s = %s;' % (g.c, d))
            c.append('\t\treturn 0;')
            c.append('\t}')
        typ = 'u->%s' % prev.c if prev is not None else '0'
        c.append('\t' + get(f, 'u->' + f.c, typ))
        if f.array:
            c.append('\t{')
            for x in f.array:
                c.append('\t\t%s *%s_ = otf2r__alloc(a, (size_t)u->%s * sizeof *%s_);'
                         % (CTYPE[x.enc], x.c, f.c, x.c))
                c.append('\t\tif (!%s_ && u->%s) return -1;' % (x.c, f.c))
            c.append('\t\tfor (size_t i = 0; i < (size_t)u->%s; i++) {' % f.c)
            for j, x in enumerate(f.array):
                t = '%s_[i]' % f.array[j - 1].c if j > 0 else '0'
                c.append('\t\t\t' + get(x, '%s_[i]' % x.c, t))
            c.append('\t\t}')
            for x in f.array:
                c.append('\t\tu->%s = %s_;' % (x.c, x.c))
            c.append('\t}')
        prev = f
    c.append('\treturn 0;')
    c.append('}')


def formatter(r, c):
    c.append('static int fmt_%s_%s(const %s *u, char *b, size_t n)'
             % (r.kind, snake(r.name), sname(r)))
    c.append('{')
    c.append('\tsize_t o = 0;')
    c.append('\tif (n)')
    c.append('\t\tb[0] = 0;')
    c.append('\t(void)u;')
    for f in r.fields:
        if f.enc == 'idmap':
            c.append('\to += otf2r__fmt_idmap(b + o, o < n ? n - o : 0, "%s", &u->%s);'
                     % (f.name, f.c))
            continue
        if f.enc == 'str':
            c.append('\to += (size_t)snprintf(b + o, o < n ? n - o : 0, " %s=%%s", u->%s);'
                     % (f.name, f.c))
            continue
        fm, cast = FMT[f.enc]
        c.append('\to += (size_t)snprintf(b + o, o < n ? n - o : 0, " %s=%s", %su->%s);'
                 % (f.name, fm, cast, f.c))
        for x in f.array or ():
            fm, cast = FMT[x.enc]
            c.append('\to += (size_t)snprintf(b + o, o < n ? n - o : 0, " %s=");' % x.name)
            c.append('\tfor (size_t i = 0; i < (size_t)u->%s; i++)' % f.c)
            c.append('\t\to += (size_t)snprintf(b + o, o < n ? n - o : 0, "%%s%s", i ? "," : "", %su->%s[i]);'
                     % (fm, cast, x.c))
    c.append('\treturn (int)o;')
    c.append('}')


def mapper(r, c):
    fields = [f for f in r.fields if f.name in EVT_MAP]
    arrays = [(f, x) for f in r.fields for x in (f.array or ()) if x.name in EVT_MAP]
    if not fields and not arrays:
        return False
    c.append('static void map_evt_%s(%s *u, const otf2r__maps *m)' % (snake(r.name), sname(r)))
    c.append('{')
    for f in fields:
        c.append('\tu->%s = otf2r__map32(m, OTF2R_MAP_%s, u->%s);' % (f.c, EVT_MAP[f.name], f.c))
    for f, x in arrays:
        c.append('\tfor (size_t i = 0; i < (size_t)u->%s; i++)' % f.c)
        c.append('\t\t((uint32_t *)u->%s)[i] = otf2r__map32(m, OTF2R_MAP_%s, u->%s[i]);'
                 % (x.c, EVT_MAP[x.name], x.c))
    c.append('}')
    return True


def main():
    tab, hout, cout = sys.argv[1:4]
    recs = [Record(x.strip()) for x in open(tab)
            if x.strip() and not x.startswith('#')]
    kinds = ['evt', 'gdef', 'ldef', 'snap', 'marker']
    h = ['/* Generated by gen_reader.py from records.tab - do not edit. */',
         '#ifndef OTF2R_RECORDS_H', '#define OTF2R_RECORDS_H', '',
         '#include <stdint.h>', '#include <stddef.h>', '',
         '/* idmap: count pairs; DENSE (mode 0): global ids, local = index;',
         '   SPARSE (mode 1): local0, global0, local1, global1, ... */',
         'typedef struct { uint64_t count; uint8_t mode; const uint64_t *ids; } otf2r_idmap;', '']
    for k in kinds:
        for r in recs:
            if r.kind == k:
                h.append('#define OTF2R_%s_%s %d' % (k.upper(), snake(r.name).upper(), r.id))
        h.append('')
    for r in recs:
        struct(r, h)
    for k in kinds:
        h.append('')
        h.append('union otf2r_%s_u {' % k)
        for r in recs:
            if r.kind == k:
                h.append('\t%s %s;' % (sname(r), snake(r.name)))
        h.append('};')
    h += ['', '#endif /* OTF2R_RECORDS_H */', '']

    c = ['/* Generated by gen_reader.py from records.tab - do not edit. */',
         '#include <inttypes.h>', '#include <stdio.h>', '#include "reader_int.h"', '']
    mapped = set()
    for r in recs:
        decoder(r, c)
        formatter(r, c)
        if r.kind == 'evt' and mapper(r, c):
            mapped.add(r.id)
        c.append('')
    def switch(proto, cases, default):
        c.extend([proto, '{', '\tswitch (type) {'])
        c.extend('\tcase %d: %s' % x for x in cases)
        c.extend(['\tdefault: ' + default, '\t}', '}'])

    for k in kinds:
        rs = [r for r in recs if r.kind == k]
        switch('int otf2r__dec_%s(otf2r__cur *c, unsigned type, union otf2r_%s_u *u, otf2r__arena *a)'
               % (k, k), [(r.id, 'return dec_%s_%s(c, &u->%s, a);' % (k, snake(r.name), snake(r.name)))
                          for r in rs], 'return 1;')
        switch('int otf2r_%s_format(unsigned type, const union otf2r_%s_u *u, char *b, size_t n)'
               % (k, k), [(r.id, 'return fmt_%s_%s(&u->%s, b, n);' % (k, snake(r.name), snake(r.name)))
                          for r in rs], 'if (n) *b = 0; return 0;')
        switch('const char *otf2r_%s_name(unsigned type)' % k,
               [(r.id, 'return "%s";' % r.name) for r in rs], 'return NULL;')
    switch('int otf2r__gdef_self(unsigned type, const union otf2r_gdef_u *u, uint64_t *self)',
           [(r.id, '*self = u->%s.self; return 1;' % snake(r.name)) for r in recs
            if r.kind == 'gdef' and r.fields and r.fields[0].name == 'self'], 'return 0;')
    switch('void otf2r__map_evt(unsigned type, union otf2r_evt_u *u, const otf2r__maps *m)',
           [(r.id, 'map_evt_%s(&u->%s, m); break;' % (snake(r.name), snake(r.name))) for r in recs
            if r.kind == 'evt' and r.id in mapped], 'break;')
    c.append('const unsigned char otf2r__evt_single[256] = {')
    c.append('\t' + ', '.join('[%d] = 1' % r.id for r in recs if r.kind == 'evt' and r.single))
    c.append('};')
    c.append('')
    open(hout, 'w').write('\n'.join(h))
    open(cout, 'w').write('\n'.join(c))


if __name__ == '__main__':
    main()
