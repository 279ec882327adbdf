#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_mpiio.py - MPI-IO as OTF2 Io records (ctest mpi_io, mpich_io).

usage: check_mpiio.py --lib LIB --prog PROG --mpirun MPIRUN --mpi ompi|mpich --out DIR [--fortran]
                      [--tracer TRACER]

Runs tests/mpi/mpi_io.c at 2 ranks untraced, traced and traced with
TRACER_IO=off (each in its own work directory under DIR), then asserts:
the same stdout, stderr (less tracer: lines), exit status and files written
(byte for byte); with the reference reader (python3-otf2, otf2-print): one
IoParadigm "MPI-IO" (PARALLEL, VERSION); per rank and file, every operation
(mode, collective / non-blocking flags, bytes requested and returned) in
program order; bytes per rank and per operation kind; Begin/Issued/Complete
matched by (handle, matching id), non-blocking ones completed inside
MPI_Wait/Waitall/Test; one MPI-IO handle per rank and MPI_File with the
file's communicator, created and destroyed once, the MPI library's POSIX
handle under it (parent); the file names; IoSeek offsets; IoDeleteFile of the
deleted file; no MPI-IO record with TRACER_IO=off; with --tracer, `tracer
report --json`'s MPI-IO figures per file equal the reference reader's. --fortran: the same checks
on tests/mpi/mpi_io.f90 (open/close/delete, set_view with its string, a
collective, a non-blocking and an explicit-offset transfer, a seek).
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402

NP = 2
NONE, NB, COLL = 0, 1, 2          # IoOperationFlag
A_SZ, B_SZ, C_SZ, D_SZ, E_SZ, F_SZ = 1024, 400, 64, 32, 128, 256
# data.bin, per rank, in program order: (mode, flags, bytes)
EXPECT_DATA = [
    ('WRITE', COLL, A_SZ), ('WRITE', NONE, B_SZ), ('WRITE', NONE, C_SZ), ('WRITE', COLL, D_SZ),
    ('WRITE', COLL | NB, E_SZ), ('WRITE', NB, F_SZ), ('FLUSH', COLL, 0), ('FLUSH', COLL, 0),
    ('READ', NB, A_SZ), ('READ', COLL | NB, B_SZ), ('READ', NB, C_SZ), ('READ', COLL, E_SZ),
    ('READ', NB, F_SZ),
]
EXPECT_SELF = [('WRITE', NONE, F_SZ)]
# MPI 4 (MPICH 4.0): MPI_File_write_c and MPI_File_iwrite_at_c too
EXPECT_SELF_C = EXPECT_SELF + [('WRITE', NONE, F_SZ), ('WRITE', NB, F_SZ)]
MPI4 = {'mpich'}
# completing calls of the non-blocking operations, in the same order
NB_DONE = ['MPI_File_write_all_end', 'MPI_Wait', 'MPI_Waitall', 'MPI_Waitall', 'MPI_Waitall', 'MPI_Test']
C_OFF = NP * (A_SZ + B_SZ)
E_OFF = C_OFF + NP * (C_SZ + D_SZ)
# what each program does: stdout, files left, per-rank (file -> operations), seeks (offset
# requested, offset result or None), where the non-blocking ones complete
CASES = {
    'c': {'stdout': 'mpi_io: %d ranks, data.bin 3808 bytes, 0 errors' % NP,
          'files': ['data.bin', 'dup.bin'] + ['self%d.bin' % r for r in range(NP)],
          'ops': lambda r, mpi: {'data.bin': EXPECT_DATA,
                                 'self%d.bin' % r: EXPECT_SELF_C if mpi in MPI4 else EXPECT_SELF,
                            'dup.bin': [('WRITE', COLL, E_SZ)]},
          'seeks': lambda r: [(C_OFF, None), (E_OFF + r * E_SZ, E_OFF + r * E_SZ)] * 2,
          'nb_done': NB_DONE, 'region': 'MPI_File_write_at_all'},
    'fortran': {'stdout': 'mpi_io_f: %d ranks, 0 errors' % NP,
                'files': ['data.bin'],
                'ops': lambda r, mpi: {'data.bin': [('WRITE', COLL, 400), ('READ', NB, 400), ('READ', NONE, 40)]},
                'seeks': lambda r: [(r * 400, r * 400)],
                'nb_done': ['MPI_Wait'], 'region': 'MPI_File_set_view'},
}


def launch(a, env):
    if a.mpi == 'mpich':
        cmd = [a.mpirun, '-n', str(NP)]
        for k, v in env.items():
            cmd += ['-genv', k, v]
        return cmd
    return [a.mpirun, '--oversubscribe', '--bind-to', 'none', '-np', str(NP)] + sum(
        (['-x', '%s=%s' % kv] for kv in env.items()), [])


def run(a, label, env):
    wd = os.path.join(a.out, label + '.files')
    arch = os.path.join(a.out, label + '.trace')
    for d in (wd, arch):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(wd)
    if env is not None:
        env = dict(env, LD_PRELOAD=a.lib, TRACER_OUTPUT=arch)
    cmd = launch(a, env or {}) + [a.prog, wd]
    print('+', ' '.join(cmd))
    p = subprocess.run(cmd, env=rc.clean_env({'OMPI_ALLOW_RUN_AS_ROOT': '1',
                                               'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}),
                       capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout + p.stderr)
    return p, wd, os.path.join(arch, 'traces.otf2')


def same_files(ck, case, wd0, wd1, what):
    names = sorted(os.listdir(wd0))
    ck.expect(names == sorted(case['files']), 'untraced run wrote %r' % names)
    ck.expect(sorted(os.listdir(wd1)) == names, '%s wrote %r, untraced %r' % (what, sorted(os.listdir(wd1)), names))
    for n in names:
        p0, p1 = os.path.join(wd0, n), os.path.join(wd1, n)
        if os.path.exists(p1):
            ck.expect(open(p0, 'rb').read() == open(p1, 'rb').read(), '%s: %s differs from untraced' % (what, n))


def nm(v):
    """Name of a reference-reader enumeration value (IoOperationMode.WRITE -> WRITE)."""
    return str(v).split('.')[-1]


def read_archive(anchor):
    import otf2
    tr = {'ops': collections.defaultdict(list), 'seeks': collections.defaultdict(list),
          'deletes': [], 'created': collections.Counter(), 'destroyed': collections.Counter(),
          'handle_locs': collections.defaultdict(set), 'errors': [], 'nio': 0}
    with otf2.reader.open(anchor) as r:
        d = r.definitions
        tr['paradigms'] = [(p.identification, p.name, nm(p.io_paradigm_class), nm(p.io_paradigm_flags))
                           for p in d.io_paradigms]
        tr['handles'] = list(d.io_handles)
        rank = {l._ref: int(l.group.name.split()[-1]) for l in d.locations if l.group.name.startswith('MPI Rank')}
        open_ops, stacks = {}, collections.defaultdict(list)
        for loc, ev in r.events:
            k, lr = type(ev).__name__, loc._ref
            if k == 'Enter':
                stacks[lr].append(ev.region.name)
            elif k == 'Leave':
                stacks[lr].pop()
            if not k.startswith('Io'):
                continue
            h = getattr(ev, 'handle', None)
            if h is None or h.io_paradigm.identification != 'MPI-IO':
                if k == 'IoDeleteFile' and ev.io_paradigm.identification == 'MPI-IO':
                    tr['deletes'].append((rank[lr], ev.file.name))
                continue
            tr['nio'] += 1
            tr['handle_locs'][h._ref].add(lr)
            where = stacks[lr][-1] if stacks[lr] else None
            key = (lr, h._ref, getattr(ev, 'matching_id', None))
            if k == 'IoCreateHandle':
                tr['created'][h._ref] += 1
                tr['create_mode'] = (nm(ev.mode), nm(ev.creation_flags))
            elif k == 'IoDestroyHandle':
                tr['destroyed'][h._ref] += 1
            elif k == 'IoSeek':
                tr['seeks'][rank[lr], os.path.basename(h.file.name)].append((ev.offset_request, ev.offset_result))
            elif k == 'IoOperationBegin':
                if key in open_ops:
                    tr['errors'].append('matching id %r begun twice' % (key,))
                op = {'mode': nm(ev.mode), 'flags': ev.operation_flags.value, 'req': ev.bytes_request,
                      'issued': 0, 'tests': 0, 'res': None, 'in': where, 'done_in': None}
                open_ops[key] = op
                tr['ops'][rank[lr], os.path.basename(h.file.name)].append(op)
                if not (where or '').startswith('MPI_File_'):
                    tr['errors'].append('IoOperationBegin inside %r, not an MPI_File_ region' % where)
            elif k in ('IoOperationIssued', 'IoOperationTest', 'IoOperationComplete'):
                op = open_ops.get(key)
                if op is None:
                    tr['errors'].append('%s without an open Begin: %r' % (k, key))
                    continue
                if k == 'IoOperationIssued':
                    op['issued'] += 1
                elif k == 'IoOperationTest':
                    op['tests'] += 1
                else:
                    op['res'], op['done_in'] = ev.bytes_result, where
                    del open_ops[key]
            else:
                tr['errors'].append('unexpected %s on an MPI-IO handle' % k)
        tr['errors'] += ['operation %r never completed' % (k,) for k in open_ops]
    return tr


def check_trace(ck, case, anchor, wd, tracer=None):
    ck.expect(anchor and os.path.exists(anchor), 'no archive %s' % anchor)
    if not anchor or not os.path.exists(anchor):
        return
    p = subprocess.run(['otf2-print', '-Werror', '-G', anchor], capture_output=True, text=True)
    ck.expect(p.returncode == 0, 'otf2-print -Werror -G: exit %d %s' % (p.returncode, p.stderr[-500:]))
    par = [l for l in p.stdout.splitlines() if l.startswith('IO_PARADIGM') and '"MPI-IO"' in l]
    ck.expect(len(par) == 1 and 'VERSION' in par[0], 'IoParadigm MPI-IO with VERSION: %r' % par)
    p = subprocess.run(['otf2-print', '-Werror', anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ck.expect(p.returncode == 0, 'otf2-print -Werror: exit %d %s' % (p.returncode, p.stderr[-500:]))

    tr = read_archive(anchor)
    for e in tr['errors'][:20]:
        ck.fail(e)
    mp = [x for x in tr['paradigms'] if x[0] == 'MPI-IO']
    ck.expect(mp == [('MPI-IO', 'MPI I/O', 'PARALLEL', 'NONE')], 'MPI-IO paradigm %r' % mp)

    for r in range(NP):
        for fname, want in case['ops'](r, case['mpi']).items():
            ops = tr['ops'][r, fname]
            got = [(o['mode'], o['flags'], o['req']) for o in ops]
            ck.expect(got == want, 'rank %d %s operations (mode, flags, bytes requested):\n  %r\n  want %r'
                      % (r, fname, got, want))
            for o in ops:
                ck.expect(o['res'] == o['req'], 'rank %d %s: %s of %d bytes returned %r'
                          % (r, fname, o['mode'], o['req'], o['res']))
                nb = bool(o['flags'] & NB)
                ck.expect(o['issued'] == (1 if nb else 0), 'rank %d %s: %s %s issued %d times'
                          % (r, fname, o['mode'], o['in'], o['issued']))
                if not nb:
                    ck.expect(o['done_in'] == o['in'], 'rank %d: blocking %s completed in %r'
                              % (r, o['in'], o['done_in']))
            done = [o['done_in'] for o in ops if o['flags'] & NB]
            if fname == 'data.bin':
                ck.expect(done == case['nb_done'], 'rank %d: non-blocking operations completed in %r, want %r'
                          % (r, done, case['nb_done']))
            # bytes per rank and operation kind
            for mode in ('READ', 'WRITE'):
                have = sum(o['res'] or 0 for o in ops if o['mode'] == mode)
                need = sum(b for m, f, b in want if m == mode)
                ck.expect(have == need, 'rank %d %s: %d bytes %s, want %d' % (r, fname, have, mode.lower(), need))
        # a shared pointer's result depends on the other ranks' timing: not compared
        seeks = tr['seeks'][r, 'data.bin']
        want = case['seeks'](r)
        ck.expect(len(seeks) == len(want) and all(g[0] == w[0] and w[1] in (None, g[1]) for g, w in zip(seeks, want)),
                  'rank %d IoSeek (offset request, result) %r, want %r' % (r, seeks, want))

    # handles: one per rank and MPI_File, the file's communicator, POSIX handle under it
    mh = [h for h in tr['handles'] if h.io_paradigm.identification == 'MPI-IO']
    by_file = collections.defaultdict(list)
    for h in mh:
        by_file[h.file.name].append(h)
    base = os.path.normpath(os.path.abspath(wd))
    want_files = {os.path.join(base, 'data.bin'): ('MPI_COMM_WORLD', NP),
                  os.path.join(base, 'scratch.bin'): ('MPI_COMM_SELF', 1)}
    for f in case['files']:
        if f.startswith('self'):
            want_files[os.path.join(base, f)] = ('MPI_COMM_SELF', 1)
        elif f == 'dup.bin':   # the Comm the tracer defined for MPI_Comm_dup: one for both ranks
            want_files[os.path.join(base, f)] = ('MPI_Comm_dup', NP)
    ck.expect(sorted(by_file) == sorted(want_files), 'MPI-IO files %r, want %r' % (sorted(by_file), sorted(want_files)))
    for f, (comm, n) in want_files.items():
        hs = by_file.get(f, [])
        ck.expect(len(hs) == n and all(h.comm is not None and h.comm.name.split()[0] == comm for h in hs) and
                  len(set(h.comm._ref for h in hs)) == 1,
                  '%s: MPI-IO handles %r, want %d on %s' % (f, [(h.name, h.comm.name if h.comm else None) for h in hs],
                                                           n, comm))
    for h in mh:
        ck.expect(tr['created'][h._ref] == 1 and tr['destroyed'][h._ref] == 1,
                  'handle %s: created %d, destroyed %d' % (h.name, tr['created'][h._ref], tr['destroyed'][h._ref]))
        ck.expect(len(tr['handle_locs'][h._ref]) == 1, 'handle %s used on locations %r'
                  % (h.name, tr['handle_locs'][h._ref]))
        kids = [x for x in tr['handles'] if x.parent is not None and x.parent._ref == h._ref]
        ck.expect(len(kids) == 1 and kids[0].io_paradigm.identification == 'POSIX' and kids[0].file.name == h.file.name,
                  'handle %s: POSIX handles under it %r' % (h.name, [(x.name, x.io_paradigm.identification) for x in kids]))
    ck.expect(tr.get('create_mode') is not None, 'no IoCreateHandle')
    ck.expect(tr['deletes'] == [(0, os.path.join(base, 'scratch.bin'))], 'MPI-IO IoDeleteFile %r' % tr['deletes'])
    if tracer:
        check_report(ck, tracer, anchor, tr, base)


def check_report(ck, tracer, anchor, tr, base):
    """tracer report --json: operations and bytes per MPI-IO file and kind as read here."""
    import json
    p = subprocess.run([tracer, 'report', '--json', anchor], capture_output=True, text=True)
    ck.expect(p.returncode == 0, 'tracer report --json: exit %d %s' % (p.returncode, p.stderr[-300:]))
    try:
        files = json.loads(p.stdout)['io']['files']
    except (ValueError, KeyError) as e:
        ck.fail('tracer report --json: no io.files (%s)' % e)
        return
    got = {(f['file'], k): (f[k]['operations'], f[k]['bytes']) for f in files if f['layer'] == 'MPI-IO'
           for k in ('read', 'write', 'flush')}
    want = collections.defaultdict(lambda: (0, 0))
    for (r, fname), ops in tr['ops'].items():
        for o in ops:
            k = (os.path.join(base, fname), o['mode'].lower())
            want[k] = (want[k][0] + 1, want[k][1] + (o['res'] or 0))
    got = {k: v for k, v in got.items() if v != (0, 0)}
    ck.expect(got == dict(want), 'tracer report MPI-IO (operations, bytes) per file and kind %r, reference reader %r' % (got, dict(want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', required=True)
    ap.add_argument('--prog', required=True)
    ap.add_argument('--mpirun', required=True)
    ap.add_argument('--mpi', default='ompi', choices=('ompi', 'mpich'))
    ap.add_argument('--out', required=True)
    ap.add_argument('--fortran', action='store_true', help='tests/mpi/mpi_io.f90')
    ap.add_argument('--tracer', default='', help='the tracer command (tracer report --json checked)')
    a = ap.parse_args()
    case = dict(CASES['fortran' if a.fortran else 'c'], mpi=a.mpi)
    os.makedirs(a.out, exist_ok=True)
    ck = rc.Checker()
    base, wd0, _ = run(a, 'untraced', None)
    ck.expect(base.returncode == 0, 'untraced run exit %d' % base.returncode)
    rc.expect_lines(ck, base.stdout, [case['stdout']])
    p, wd, anchor = run(a, 'traced', {'TRACER_VERBOSE': '1'})
    rc.compare(ck, base, p)
    same_files(ck, case, wd0, wd, 'traced run')
    check_trace(ck, case, anchor, wd, a.tracer)
    # TRACER_IO=off: the MPI_File_ regions only
    q, wd2, anchor2 = run(a, 'io_off', {'TRACER_IO': 'off'})
    rc.compare(ck, base, q)
    same_files(ck, case, wd0, wd2, 'TRACER_IO=off run')
    if ck.expect(os.path.exists(anchor2), 'TRACER_IO=off: no archive'):
        tr = read_archive(anchor2)
        ck.expect(tr['nio'] == 0 and not tr['deletes'] and
                  not [x for x in tr['paradigms'] if x[0] == 'MPI-IO'],
                  'TRACER_IO=off: %d MPI-IO records, paradigms %r' % (tr['nio'], tr['paradigms']))
        out = subprocess.run(['otf2-print', anchor2], capture_output=True, text=True).stdout
        ck.expect(case['region'] in out, 'TRACER_IO=off: no %s region' % case['region'])
    sys.exit(ck.done())


if __name__ == '__main__':
    main()
