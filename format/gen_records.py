#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate otf2w_records.h and records.c from records.tab.

usage: gen_records.py records.tab OUT_HEADER OUT_SOURCE
"""
import re
import sys

ENC = {
    # enc: (C type, max bytes, writer)
    'u8': ('uint8_t', 1, 'otf2w__put_u8'),
    'cu32': ('uint32_t', 5, 'otf2w__put_cu32'),
    'cu64': ('uint64_t', 9, 'otf2w__put_cu64'),
    'ci64': ('int64_t', 9, 'otf2w__put_ci64'),
    't64': ('uint64_t', 8, 'otf2w__put_u64'),
    'f64': ('double', 8, 'otf2w__put_f64'),
    'str': ('const char *', None, 'otf2w__put_str'),
    'av': ('uint64_t', 9, None),
    'idmap': ('const otf2w_id_map *', None, None),
}

KIND_FN = {'evt': 'evt', 'gdef': 'gdef', 'ldef': 'ldef', 'snap': 'snap',
           'marker': 'marker'}
KIND_WRITER = {'evt': 'otf2w_evt_writer', 'gdef': 'otf2w_gdef_writer',
               'ldef': 'otf2w_def_writer', 'snap': 'otf2w_snap_writer',
               'marker': 'otf2w_marker_writer'}


def snake(name):
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name)
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', s)
    return s.lower()


class Field:
    def __init__(self, text):
        self.attic = None
        self.array = None
        if '=' in text:
            text, self.attic = text.split('=', 1)
        m = re.match(r'(\w+):(\w+)\[(.*)\]$', text)
        if m:
            self.name, self.enc = m.group(1), m.group(2)
            self.array = [Field(x) for x in m.group(3).split(',')]
        else:
            self.name, self.enc = text.split(':')
        self.c = snake(self.name)


class Record:
    def __init__(self, line):
        api = None
        if ' @api ' in line:
            line, api = line.split(' @api ')
            api = api.strip().split(',')
        parts = line.split()
        self.kind, self.id, self.name, self.flags = parts[0], int(parts[1]), parts[2], parts[3]
        self.fields = [Field(x) for x in parts[4:]]
        self.single = self.flags == 'S'
        flat = []
        for f in self.fields:
            if f.attic:
                continue
            flat.append(f)
            if f.array:
                flat.extend(f.array)
        if api:
            byname = {f.name: f for f in flat}
            flat = [byname[a] for a in api]
        self.params = flat
        for f in self.fields:
            if f.array:
                for a in f.array:
                    a.count = f
        self.fn = 'otf2w_%s_%s' % (KIND_FN[self.kind], snake(self.name))
        if self.kind == 'marker':
            self.fn = 'otf2w_marker_%s' % snake(self.name)


def ctype(f, record):
    if hasattr(f, 'count'):
        if f.name == 'metricValues':
            return 'const otf2w_metric_value *'
        return 'const %s *' % ENC[f.enc][0]
    return ENC[f.enc][0]


def proto(r, name=None):
    args = ['%s *w' % KIND_WRITER[r.kind]]
    if r.kind in ('evt', 'snap'):
        args.append('const otf2w_attr_list *al')
        args.append('uint64_t %s' % ('time' if r.kind == 'evt' else 'snap_time'))
    for f in r.params:
        t = ctype(f, r)
        sep = '' if t.endswith('*') else ' '
        args.append('%s%s%s' % (t, sep, f.c))
    return 'otf2w_status %s(%s)' % (name or r.fn, ', '.join(args))


def attic_expr(f, r):
    if f.attic == '@region_type':
        return 'otf2w__region_type(paradigm, region_role, region_flags)'
    if f.attic == '@group_pre12':
        return 'otf2w__group_pre12(group_type, paradigm, group_flags)'
    if f.attic == '@prop_string':
        return '(type == OTF2W_TYPE_STRING ? (uint32_t)value : OTF2W_UNDEFINED_UINT32)'
    raise SystemExit('unknown attic ' + f.attic)


def size_terms(r):
    """Static max payload size and list of runtime terms."""
    static = 0
    dyn = []
    for f in r.fields:
        if f.array:
            static += ENC[f.enc][1]
            per = sum(ENC[a.enc][1] for a in f.array)
            dyn.append('(size_t)%s * %d' % (f.c, per))
        elif f.enc == 'str':
            dyn.append('(%s ? strlen(%s) : 0) + 1' % (f.c, f.c))
        elif f.enc == 'idmap':
            dyn.append('otf2w__idmap_size(id_map)')
        else:
            static += ENC[f.enc][1]
    return static, dyn


def put(f, val, r):
    if f.enc == 'av':
        t = 'type' if val == 'value' else 'types[i]'
        return 'p = otf2w__put_av(p, %s, %s);' % (t, val)
    if f.enc == 'idmap':
        return 'p = otf2w__put_idmap(p, %s);' % val
    if f.name == 'metricValues':
        return 'p = otf2w__put_cu64(p, %s.unsigned_int);' % val
    return 'p = %s(p, %s);' % (ENC[f.enc][2], val)


def body(r, out):
    static, dyn = size_terms(r)
    w = out.append
    if r.single:
        w('\tsize_t max = %d;' % (1 + static))
    else:
        w('\tsize_t payload = %d%s;' % (static, ''.join(' + ' + d for d in dyn)))
        w('\tsize_t max = 1 + (payload < 255 ? 1 : 9) + payload;')
    w('\totf2w_status st;')
    if r.kind == 'evt':
        w('\tuint8_t *p = otf2w__evt_begin(w, al, time, max, &st);')
    elif r.kind == 'snap':
        w('\tuint8_t *p = otf2w__snap_begin(w, al, snap_time, max, &st);')
    else:
        w('\tuint8_t *p = otf2w__%s_begin(w, max, &st);' % r.kind)
    w('\tif (!p)')
    w('\t\treturn st;')
    if r.single:
        w('\t*p++ = %d;' % r.id)
    else:
        w('\tuint8_t *start = otf2w__rec_open(&p, %d, payload);' % r.id)
    for f in r.fields:
        if f.attic:
            w('\t' + put(f, attic_expr(f, r), r))
        elif f.array:
            w('\t' + put(f, f.c, r))
            w('\tfor (size_t i = 0; i < (size_t)%s; i++) {' % f.c)
            for a in f.array:
                w('\t\t' + put(a, '%s[i]' % a.c, r))
            w('\t}')
        else:
            w('\t' + put(f, f.c, r))
    if not r.single:
        w('\totf2w__rec_close(start, p, payload);')
    w('\totf2w__commit(w, p);')
    if r.kind == 'gdef' and r.name == 'Location':
        w('\treturn otf2w__gdef_note_location(w, self);')
    else:
        w('\treturn OTF2W_OK;')


def null_checks(r, out):
    arrs = [f for f in r.fields if f.array]
    for f in arrs:
        for a in f.array:
            out.append('\tif (%s && !%s)' % (f.c, a.c))
            out.append('\t\treturn OTF2W_E_INVALID_ARGUMENT;')
    for f in r.fields:
        if f.enc == 'idmap':
            out.append('\tif (!%s || %s->n == 0)  /* an empty map breaks the reader */' % (f.c, f.c))
            out.append('\t\treturn OTF2W_E_INVALID_ARGUMENT;')


def inlinable(r):
    """Events with only fixed-size fields get an inline fast path."""
    return all(not f.array and not f.attic and f.enc not in ('str', 'idmap', 'av')
               for f in r.fields)


def raw_encodable(r):
    """A definition record of fixed-size fields and strings only (no arrays, id maps or attribute
    values)."""
    return r.kind == 'gdef' and all(not f.array and f.enc not in ('idmap', 'av') for f in r.fields)


def raw_encoder(r, h):
    """The raw encoder of a definition record, otf2w_gdef_put_<name>(p, fields in API order, then its attic
    fields as read: Region's regionType): its bytes at p, the end returned (a tool that repairs or renames
    definitions: tracer recover; it links no writer). OTF2W_GDEF_<NAME>_MAX bounds them; MAX(n) for a record
    with strings, n bytes of strings (their terminators apart)."""
    static, dyn = size_terms(r)
    upper = snake(r.name).upper()
    nstr = sum(1 for f in r.fields if f.enc == 'str')
    attic = [f for f in r.fields if f.attic]
    args = ['uint8_t *p'] + ['%s %s' % (ctype(x, r), x.c) for x in r.params + attic]
    if nstr:
        h.append('#define OTF2W_GDEF_%s_MAX(n) (1 + 9 + %d + (size_t)(n))' % (upper, static + nstr))
        payload = 'payload'
    else:
        h.append('#define OTF2W_GDEF_%s_MAX %d' % (upper, 1 + (1 if static < 255 else 9) + static))
        payload = str(static)
    h.append('static inline uint8_t *otf2w_gdef_put_%s(%s)' % (snake(r.name), ', '.join(args)))
    h.append('{')
    if nstr:
        h.append('\tsize_t payload = %d%s;' % (static, ''.join(' + ' + d for d in dyn)))
    h.append('\tuint8_t *start = otf2w__rec_open(&p, %d, %s);' % (r.id, payload))
    for f in r.fields:
        h.append('\t' + put(f, f.c, r))
    h.append('\totf2w__rec_close(start, p, %s);' % payload)
    h.append('\treturn p;')
    h.append('}')


def main():
    tab, hout, cout = sys.argv[1:4]
    recs = []
    for line in open(tab):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        recs.append(Record(line))
    h = ['/* Generated by gen_records.py from records.tab - do not edit. */',
         '#ifndef OTF2W_RECORDS_H', '#define OTF2W_RECORDS_H', '',
         '#include "otf2w.h"', '#include "buffer_inline.h"', '',
         '/* internal helpers used by the generated writers (format/ only) */',
         'uint8_t *otf2w__evt_begin(otf2w_evt_writer *w, const otf2w_attr_list *al, uint64_t time, size_t max, otf2w_status *st);',
         'uint8_t *otf2w__snap_begin(otf2w_snap_writer *w, const otf2w_attr_list *al, uint64_t time, size_t max, otf2w_status *st);',
         'uint8_t *otf2w__gdef_begin(otf2w_gdef_writer *w, size_t max, otf2w_status *st);',
         'uint8_t *otf2w__ldef_begin(otf2w_def_writer *w, size_t max, otf2w_status *st);',
         'uint8_t *otf2w__marker_begin(otf2w_marker_writer *w, size_t max, otf2w_status *st);',
         'size_t otf2w__idmap_size(const otf2w_id_map *m);',
         'uint8_t *otf2w__put_idmap(uint8_t *p, const otf2w_id_map *m);',
         'uint8_t otf2w__region_type(uint8_t paradigm, uint8_t role, uint32_t flags);',
         'uint8_t otf2w__group_pre12(uint8_t type, uint8_t paradigm, uint32_t flags);',
         'otf2w_status otf2w__gdef_note_location(otf2w_gdef_writer *w, uint64_t location);',
         '']
    c = ['/* Generated by gen_records.py from records.tab - do not edit. */',
         '#include <string.h>', '#include "otf2w_int.h"', '']
    counts = {}
    for r in recs:
        counts[r.kind] = counts.get(r.kind, 0) + 1
        h.append('/* %s %d %s */' % (r.kind, r.id, r.name))
        if r.kind == 'evt' and inlinable(r):
            slow = 'otf2w__evt_%s_slow' % snake(r.name)
            static, _ = size_terms(r)
            if r.single:
                rmax = 1 + static
            else:
                rmax = 1 + (1 if static < 255 else 9) + static
            put_fn = 'otf2w_evt_put_%s' % snake(r.name)
            args = ['uint8_t *p'] + ['%s %s' % (ctype(x, r), x.c) for x in r.params]
            h.append('#define OTF2W_EVT_%s_ID %d' % (snake(r.name).upper(), r.id))
            h.append('#define OTF2W_EVT_%s_MAX %d' % (snake(r.name).upper(), rmax))
            h.append('static inline uint8_t *%s(%s)' % (put_fn, ', '.join(args)))
            h.append('{')
            if r.single:
                h.append('\t*p++ = %d;' % r.id)
            else:
                h.append('\tuint8_t *start = otf2w__rec_open(&p, %d, %d);' % (r.id, static))
            for f in r.fields:
                h.append('\t' + put(f, f.c, r))
            if not r.single:
                h.append('\totf2w__rec_close(start, p, %d);' % static)
            h.append('\treturn p;')
            h.append('}')
            h.append(proto(r, slow) + ';')
            h.append('static inline ' + proto(r))
            h.append('{')
            h.append('\tstruct otf2w_fast *f = OTF2W__FAST(w);')
            h.append('\tif (otf2w_unlikely(w == NULL))')
            h.append('\t\treturn OTF2W_E_INVALID_ARGUMENT;')
            h.append('\tuint8_t *p = f->pos;')
            h.append('\tif (otf2w_unlikely(al != NULL || (size_t)(f->end - p) < %d ||' % (9 + rmax))
            h.append('\t\t\t    time < f->last_time || time >= f->due))')
            h.append('\t\treturn %s(%s);' % (slow, ', '.join(['w', 'al', 'time'] + [x.c for x in r.params])))
            h.append('\tp = otf2w__put_time(f, p, time);')
            h.append('\tf->pos = %s(%s);' % (put_fn, ', '.join(['p'] + [x.c for x in r.params])))
            h.append('\tf->nevents++;')
            h.append('\treturn OTF2W_OK;')
            h.append('}')
            c.append(proto(r, slow))
        else:
            if raw_encodable(r):
                raw_encoder(r, h)
            h.append(proto(r) + ';')
            c.append(proto(r))
        c.append('{')
        null_checks(r, c)
        body(r, c)
        c.append('}')
        c.append('')
    want = {'evt': 79, 'gdef': 38, 'ldef': 36, 'snap': 20, 'marker': 2}
    if counts != want:
        raise SystemExit('records.tab: record counts %s, OTF2 3.0 has %s' % (counts, want))
    h += ['', '#define OTF2W_NUM_EVT_RECORDS %d' % counts.get('evt', 0),
          '#define OTF2W_NUM_GDEF_RECORDS %d' % counts.get('gdef', 0),
          '#define OTF2W_NUM_LDEF_RECORDS %d' % counts.get('ldef', 0),
          '#define OTF2W_NUM_SNAP_RECORDS %d' % counts.get('snap', 0),
          '', '#endif /* OTF2W_RECORDS_H */', '']
    open(hout, 'w').write('\n'.join(h))
    open(cout, 'w').write('\n'.join(c))


if __name__ == '__main__':
    main()
