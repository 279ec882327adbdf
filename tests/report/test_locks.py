#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_locks.py - the names of static locks in `tracer report`.

locks_prog.c runs untraced and traced (default settings): the same output
but for the addresses it prints (one line per lock: the name the report
should give, its address). The archive has one TRACER::LOCK_SITE::<id>
property per lock in a file mapping (read with otf2-print), whose offset
is, by binutils' nm, inside the symbol the program names; none for the
heap lock. `tracer report --json` names every lock with an address as the
program does (a struct member as "stats+0x8"; the library's file-local
lock too) and the heap lock not at all; the text and HTML reports show the
names. The heap lock, made by pthread_mutex_init, has one
TRACER::LOCK_INIT::<id> property, and the report says where it was made:
"make_heap_lock (locks_prog.c:<the line marked LOCK_INIT>)" in JSON
(`init`), text and HTML; the static locks have none. A stripped copy of the
program gets "<file>+0x<offset>" for its own locks (the nm offsets of the
unstripped one) and the library's names; its heap lock's init site is a
file offset inside the text of make_heap_lock by nm.
Environment: TRACER_LIB, TRACER, LOCKS_PROG, LOCKS_STRIPPED, WORK, SRC.
"""
import json
import os
import re
import shutil
import subprocess
import sys

SRC = os.environ.get('SRC', os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, '..', 'lib'))
import runcheck  # noqa: E402

ck = runcheck.Checker()
OTF2_PRINT = os.environ.get('OTF2_PRINT', 'otf2-print')


def printed(out):
    """[(name the program expects or None, address)] from its output"""
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == 'lock':
            rows.append((None if f[1] == '-' else f[1], int(f[2], 16)))
    return rows


def nm_symbols(path):
    """[(value, size, name)] of the defined data symbols of path (binutils nm)"""
    p = subprocess.run(['nm', '-S', '--defined-only', path], stdout=subprocess.PIPE, universal_newlines=True)
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2].lower() in 'bdgs':
            out.append((int(f[0], 16), int(f[1], 16), f[3]))
    return out


def nm_text(path):
    """[(value, size, name)] of the defined function symbols of path (binutils nm)"""
    p = subprocess.run(['nm', '-S', '--defined-only', path], stdout=subprocess.PIPE, universal_newlines=True)
    return [(int(f[0], 16), int(f[1], 16), f[3]) for f in (ln.split() for ln in p.stdout.splitlines())
            if len(f) == 4 and f[2].lower() == 't']


def init_line():
    """the line of locks_prog.c marked LOCK_INIT"""
    with open(os.path.join(SRC, 'locks_prog.c')) as f:
        return [i for i, ln in enumerate(f, 1) if '/* LOCK_INIT */' in ln][0]


def nm_name(syms, off):
    for v, size, name in syms:
        if v <= off < v + size:
            return name if off == v else '%s+0x%x' % (name, off - v)
    return None


def sites(archive, kind='SITE'):
    """{lock id: (offset, path)} of the master location's TRACER::LOCK_<kind> properties (otf2-print -G)"""
    p = subprocess.run([OTF2_PRINT, '-G', os.path.join(archive, 'traces.otf2')], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    ck.expect(p.returncode == 0, 'otf2-print -G: %s' % p.stderr[-300:])
    out = {}
    for m in re.finditer(r'Name: "TRACER::LOCK_%s::(\d+)" <\d+>, Type: STRING, Value: "0x([0-9a-f]+) (.*)" <\d+>'
                         % kind, p.stdout):
        out[int(m.group(1))] = (int(m.group(2), 16), m.group(3))
    return out


def traced(prog, work, name):
    out = os.path.join(work, name)
    lib, tracer = os.environ['TRACER_LIB'], os.environ['TRACER']
    base = runcheck.run_untraced([prog], timeout=120)
    tr = runcheck.run_untraced([prog], dict(LD_PRELOAD=lib, TRACER_OUTPUT=out), timeout=120)
    ck.expect(base.returncode == 0 and tr.returncode == 0, '%s: exit %d untraced, %d traced' %
              (name, base.returncode, tr.returncode))
    mask = lambda s: re.sub(r'0x[0-9a-f]+', 'ADDR', s)  # noqa: E731  (ASLR: the addresses differ per run)
    ck.expect(mask(tr.stdout) == mask(base.stdout), '%s: traced output %r, untraced %r' % (name, tr.stdout, base.stdout))
    p = runcheck.run_untraced([tracer, 'report', '--json', out], timeout=120)
    ck.expect(p.returncode == 0, '%s: tracer report --json: %s' % (name, p.stderr[-500:]))
    locks = {l['address']: l for l in json.loads(p.stdout)['locks']} if p.returncode == 0 else {}
    return out, printed(tr.stdout), locks


def main():
    prog, stripped = os.environ['LOCKS_PROG'], os.environ['LOCKS_STRIPPED']
    tracer = os.environ['TRACER']
    work = os.path.join(os.environ.get('WORK', '/tmp/report-tests'), 'locks')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    out, rows, locks = traced(prog, work, 'archive')
    ck.expect(len(rows) == 5, 'program output: %r' % rows)
    exe_syms = nm_symbols(prog)
    # the archive: one site per lock in a file, inside the symbol the program names (nm, not libdw)
    st, inits = sites(out), sites(out, 'INIT')
    by_addr = {l['address']: l['lock'] for l in locks.values()}
    for want, addr in rows:
        l = locks.get(addr)
        ck.expect(l is not None, 'no lock at 0x%x (%s) in the report' % (addr, want))
        if l is None:
            continue
        site = st.get(by_addr[addr])
        made = inits.get(by_addr[addr])
        if want is None:
            ck.expect(site is None and l['name'] is None and l['object'] is None,
                      'heap lock: site %r, report %r' % (site, l))
            ck.expect(made is not None and os.path.realpath(made[1]) == os.path.realpath(prog),
                      'heap lock: init site %r' % (made,))
            if made:
                fn = nm_name(nm_text(prog), made[0] - 1)
                ck.expect(fn and fn.startswith('make_heap_lock+'), 'heap lock: init site %r is %r by nm' % (made, fn))
            want_init = 'make_heap_lock (locks_prog.c:%d)' % init_line()
            ck.expect(l.get('init') == want_init, 'heap lock: the report says made in %r, want %r' %
                      (l.get('init'), want_init))
            continue
        ck.expect(made is None and l.get('init') is None, '%s: an init site %r %r' % (want, made, l.get('init')))
        ck.expect(site is not None, '%s: no TRACER::LOCK_SITE property' % want)
        if site:
            got = nm_name(nm_symbols(site[1]), site[0])
            ck.expect(got == want, '%s: the site %r is %r by nm' % (want, site, got))
        ck.expect(l['name'] == want, '%s: the report names it %r' % (want, l['name']))
        is_lib = want == 'lib_lock'
        ck.expect(l['object'] and os.path.basename(l['object']) ==
                  ('liblocks_lib.so' if is_lib else os.path.basename(prog)), '%s: object %r' % (want, l['object']))
    p = runcheck.run_untraced([tracer, 'report', out], timeout=120)
    ck.expect('queue_lock' in p.stdout and 'stats+0x8' in p.stdout, 'text report: no lock names')
    ck.expect('- (made in make_heap_lock (locks_prog.c:%d))' % init_line() in p.stdout,
              'text report: not where the heap lock was made')
    html = os.path.join(work, 'report.html')
    p = runcheck.run_untraced([tracer, 'report', '--html', html, out], timeout=120)
    page = open(html).read() if p.returncode == 0 else ''
    ck.expect('table_lock' in page, 'HTML report: no lock names')
    ck.expect('made in make_heap_lock (locks_prog.c:%d)' % init_line() in page, 'HTML report: no init site')

    # stripped: the program's own locks by file offset, the library's by name
    out, rows, locks = traced(stripped, work, 'stripped')
    base = os.path.basename(stripped)
    for want, addr in rows:
        l = locks.get(addr, {})
        if want is None:
            fn = [v for v, _, n in nm_text(prog) if n == 'make_heap_lock']
            m = re.match(re.escape(base) + r'\+0x([0-9a-f]+)$', l.get('init') or '')
            ck.expect(l.get('name') is None and m and fn and fn[0] < int(m.group(1), 16) - 1 < fn[0] + 200,
                      'stripped: heap lock named %r, made in %r (make_heap_lock at %r)' %
                      (l.get('name'), l.get('init'), fn))
            continue
        if want == 'lib_lock':
            ck.expect(l.get('name') == want, 'stripped: %s named %r' % (want, l.get('name')))
            continue
        sym = [v for v, _, n in exe_syms if n == want.split('+')[0]]
        off = sym[0] + (int(want.split('+')[1], 16) if '+' in want else 0) if sym else -1
        ck.expect(l.get('name') == '%s+0x%x' % (base, off), 'stripped: %s named %r, want %s+0x%x' %
                  (want, l.get('name'), base, off))
    print('ok locks: %s' % sorted((l['name'] or '-') for l in locks.values()))
    sys.exit(ck.done())


if __name__ == '__main__':
    main()
