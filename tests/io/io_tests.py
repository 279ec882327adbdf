# SPDX-License-Identifier: BSD-3-Clause
"""tests/io: POSIX and stdio I/O as OTF2 Io records (wrappers/io/).

Every case runs a program untraced and traced (LD_PRELOAD) in fresh
directories and requires identical stdout, stderr (less `tracer:` lines),
exit status and files, then reads the archive back with the reference
reader (python3-otf2, otf2-print) and checks the Io definitions and events:
bytes per file and operation kind, handle life cycles, stdio handles over
POSIX ones, every IoOperationBegin completed.

usage: io_tests.py CASE --lib LIBTRACER --prog IO_PROG --work DIR
cases: prog, threads, filter, off, gzip, dd, cp, sort, more, inherit, meta, mpi
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

A = None   # parsed arguments


ck = rc.Checker(stop=True)   # a case stops at its first failed check


def enum_name(v):
    return str(getattr(v, 'name', v)).split('.')[-1]


def run(args, traced, out, cwd, env=None, pass_fds=()):
    """args in cwd (runcheck's clean environment, C locale); traced: under
    the tracer writing into out."""
    e = dict({'LC_ALL': 'C'}, **(env or {}))
    kw = dict(timeout=240, cwd=cwd, pass_fds=pass_fds)
    if traced:
        return rc.run_traced(args, A.lib, out, e, echo=False, **kw)[0]
    return rc.run_untraced(args, e, **kw)


def fresh(name):
    d = os.path.join(A.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def compare(name, argv, setup=None, env=None, inherit=None):
    """argv (list, '{dir}' replaced by the run's directory) untraced and
    traced; setup(dir) prepares each directory; inherit: a file opened and
    passed as an inherited descriptor (IO_INHERITED_FD)."""
    res = {}
    out = os.path.join(A.work, name + '-archive')
    shutil.rmtree(out, ignore_errors=True)
    for traced in (False, True):
        d = fresh(name + ('-traced' if traced else '-untraced'))
        if setup:
            setup(d)
        e = dict(env or {})
        fds = ()
        fd = None
        if inherit:
            fd = os.open(inherit, os.O_RDONLY)
            os.set_inheritable(fd, True)
            e['IO_INHERITED_FD'] = str(fd)
            fds = (fd,)
        args = [a.replace('{dir}', d) for a in argv]
        res[traced] = (run(args, traced, out, d, e, fds), d)
        if fd is not None:
            os.close(fd)
    (u, ud), (t, td) = res[False], res[True]
    sys.stdout.write(t.stdout[-2000:])
    sys.stderr.write(t.stderr[-2000:])
    rc.compare(ck, u, t)
    rc.compare_dirs(ck, ud, td)
    tr = tc.load(out)
    tc.check_all(tr, exit_status=u.returncode)
    tc.otf2_print(tr.anchor)
    return t, td, tr


class Io:
    """The Io events of an archive, checked for consistency on the way:
    every IoOperationBegin is completed (same location, handle and matching
    id) before the Leave of its call (an in-kernel copy has a read and a
    write open at once), a non-blocking one (aio) completed or cancelled
    later, Issued/Test only between; matching ids are unique per location;
    handles are created (or duplicated) before they are destroyed."""

    def __init__(self, tr):
        self.tr = tr
        self.kinds = collections.Counter()
        self.ops = []          # (loc, mode, handle, requested, result)
        self.events = []       # (kind, ev)
        self.nonblocking = 0   # non-blocking operations begun
        self.folded = []       # (loc, mode, handle, calls, bytes): TRACER_IO_CHARS=fold Metric records
        for loc in tr.locations:
            pending = {}
            ids = set()
            live = collections.Counter()
            for e in tr.events(loc):
                k = type(e.ev).__name__
                if k == 'Leave':
                    blocking = [i for i, p in pending.items() if not p[3]]
                    ck.expect(not blocking, 'IoOperationBegin %r still open at Leave %s' % (sorted(blocking), e.region))
                if k == 'Metric' and e.ev.attributes:
                    self.fold(loc, e.ev)
                if not k.startswith('Io'):
                    continue
                self.kinds[k] += 1
                self.events.append((k, e.ev))
                ev = e.ev
                if k == 'IoOperationBegin':
                    ck.expect(ev.matching_id not in ids, 'matching id %d used twice' % ev.matching_id)
                    ids.add(ev.matching_id)
                    nb = 'NON_BLOCKING' in str(ev.operation_flags)
                    pending[ev.matching_id] = (ev.handle, enum_name(ev.mode), ev.bytes_request, nb)
                    if nb:
                        self.nonblocking += 1
                elif k in ('IoOperationIssued', 'IoOperationTest', 'IoOperationCancelled'):
                    b = pending.get(ev.matching_id)
                    ck.expect(b is not None and b[3] and b[0] is ev.handle,
                          '%s %d without a non-blocking Begin on its handle' % (k, ev.matching_id))
                    if k == 'IoOperationCancelled':
                        del pending[ev.matching_id]
                elif k == 'IoOperationComplete':
                    b = pending.pop(ev.matching_id, None)
                    ck.expect(b is not None, 'IoOperationComplete %d without Begin' % ev.matching_id)
                    ck.expect(b[0] is ev.handle, 'IoOperationComplete %d: handle differs from its Begin' % ev.matching_id)
                    self.ops.append((loc, b[1], ev.handle, b[2], ev.bytes_result))
                elif k == 'IoCreateHandle':
                    live[id(ev.handle)] += 1
                elif k == 'IoDuplicateHandle':
                    live[id(ev.new_handle)] += 1
                elif k == 'IoDestroyHandle':
                    if 'PRE_CREATED' not in str(ev.handle.io_handle_flags):
                        live[id(ev.handle)] -= 1
                        ck.expect(live[id(ev.handle)] >= 0, 'handle %r destroyed before created' % ev.handle.name)
            ck.expect(not pending, 'IoOperationBegin %r never completed' % sorted(pending))

    def fold(self, loc, ev):
        """A Metric record of folded per-character calls: its handle (the
        TRACER::ISOC_HANDLE attribute), direction (the class's first
        member), calls and bytes."""
        h = [v for a, v in ev.attributes.items() if a.name == 'TRACER::ISOC_HANDLE']
        first = ev.metric.members[0].name if ev.metric.members else ''
        mode = {'ISO C character read calls': 'READ', 'ISO C character write calls': 'WRITE'}.get(first)
        ck.expect(len(h) == 1 and mode and len(ev.values) == 2,
                  'Metric record with attributes %r, members %r' % (ev.attributes, first))
        self.folded.append((loc, mode, h[0], int(ev.values[0]), int(ev.values[1])))

    @staticmethod
    def _match(h, file_suffix, paradigm, handle_name):
        return ((not file_suffix or h.file.name.endswith(file_suffix)) and
                (not paradigm or h.io_paradigm.identification == paradigm) and
                (not handle_name or h.name == handle_name))

    def bytes(self, mode, file_suffix=None, paradigm=None, handle_name=None):
        """Bytes of the recorded operations and of the folded calls."""
        n = 0
        for loc, m, h, req, res in self.ops:
            if m == mode and res != 2 ** 64 - 1 and self._match(h, file_suffix, paradigm, handle_name):
                n += res
        for loc, m, h, calls, b in self.folded:
            if m == mode and self._match(h, file_suffix, paradigm, handle_name):
                n += b
        return n

    def folded_calls(self, mode, file_suffix=None, paradigm=None, handle_name=None):
        return sum(c for loc, m, h, c, b in self.folded if m == mode and self._match(h, file_suffix, paradigm,
                                                                                    handle_name))

    def count(self, kind, pred=lambda ev: True):
        return sum(1 for k, ev in self.events if k == kind and pred(ev))


def printed(stdout, prefix):
    for l in stdout.splitlines():
        if l.startswith(prefix):
            return int(l[len(prefix):].split()[0].rstrip(","))
    ck.fail('no line %r in the output' % prefix)


def case_prog():
    inherited = os.path.join(A.work, 'inherited.txt')
    os.makedirs(A.work, exist_ok=True)
    with open(inherited, 'w') as f:
        f.write('inherited descriptor\n' * 500)
    t, td, tr = compare('prog', [A.prog, '{dir}'], inherit=inherited)
    io = Io(tr)
    defs = tr.reader.definitions if hasattr(tr, 'reader') else None
    pw, pr = printed(t.stdout, 'posix wrote '), printed(t.stdout, 'posix read ')
    sw, sr = printed(t.stdout, 'stdio wrote '), printed(t.stdout, 'stdio read ')
    gl = printed(t.stdout, 'getline read ')
    ck.expect(pw == 41335 and pr == 41513 and gl == sw, 'the program did not do what it should: %d %d' % (pw, pr))
    # bytes per file and layer
    got = io.bytes('WRITE', '/a.dat', 'POSIX')
    ck.expect(got == pw, 'POSIX bytes written to a.dat: %d, want %d' % (got, pw))
    got = io.bytes('READ', '/a.dat', 'POSIX')
    ck.expect(got == pr, 'POSIX bytes read from a.dat: %d, want %d' % (got, pr))
    got = io.bytes('WRITE', '/b.txt', 'ISOC')
    ck.expect(got == sw, 'ISO C bytes written to b.txt: %d, want %d' % (got, sw))
    got = io.bytes('READ', '/b.txt', 'ISOC')
    ck.expect(got == sr + gl, 'ISO C bytes read from b.txt: %d, want %d' % (got, sr + gl))
    ck.expect(io.bytes('WRITE', '/b.txt', 'POSIX') == 0 and io.bytes('READ', '/b.txt', 'POSIX') == 0,
          'the write()/read() stdio made inside libc were recorded')
    got = io.bytes('WRITE', paradigm='ISOC', handle_name='stdout')
    ck.expect(got == len(t.stdout), 'ISO C bytes to stdout: %d, want %d' % (got, len(t.stdout)))
    got = io.bytes('READ', '/inherited.txt', 'POSIX')
    ck.expect(got == os.path.getsize(inherited), 'inherited descriptor: %d bytes read, want %d'
          % (got, os.path.getsize(inherited)))
    # the requested bytes of the first write() calls
    reqs = [req for loc, m, h, req, res in io.ops if m == 'WRITE' and h.file.name.endswith('/a.dat')]
    ck.expect(reqs[:10] == [4096] * 10 and reqs[10] == 300, 'requested bytes %r' % reqs[:11])
    # handles: the POSIX handle fopen creates has the stream's ISO C handle
    # as parent (OTF2: created and operated by the higher-level paradigm)
    created = [(None, ev.handle) for k, ev in io.events if k == 'IoCreateHandle']
    isoc = [h for loc, h in created if h.io_paradigm.identification == 'ISOC']
    ck.expect(len(isoc) == 3, '%d ISO C handles created, want 3 (three fopen)' % len(isoc))
    for h in isoc:
        ck.expect(h.parent is None, 'ISO C handle %r has a parent %r' % (h.name, h.parent))
    under = [h for loc, h in created if h.io_paradigm.identification == 'POSIX' and h.file.name.endswith('/b.txt')]
    ck.expect(len(under) == 3 and all(h.parent is not None and h.parent.io_paradigm.identification == 'ISOC'
                                  and h.parent.file is h.file for h in under),
          'POSIX handles of b.txt (opened by fopen): parents %r, want their ISO C handles'
          % [(h.name, h.parent) for h in under])
    ck.expect({h.parent._ref for h in under} == {h._ref for h in isoc},
          'the parents of the fopen POSIX handles %r are not the ISO C handles %r' % ([h.parent._ref for h in under], [h._ref for h in isoc]))
    # the stream's handle is created before (and destroyed after) the handle under it
    order = [(k, ev.handle) for k, ev in io.events if k in ('IoCreateHandle', 'IoDestroyHandle')
             and ev.handle.file.name.endswith('/b.txt')]
    for i, (k, h) in enumerate(order):
        if h.parent is not None:
            j = i - 1 if k == 'IoCreateHandle' else i + 1
            ck.expect(0 <= j < len(order) and order[j][0] == k and order[j][1]._ref == h.parent._ref,
                  '%s of %r not right after (create) or before (destroy) its parent\'s' % (k, h.name))
    others = [h for loc, h in created if h.io_paradigm.identification == 'POSIX' and h.parent is not None
              and not h.file.name.endswith('/b.txt')]
    ck.expect(not others, 'POSIX handles the program opened itself with a parent: %r' % others)
    ck.expect(io.count('IoCreateHandle', lambda ev: ev.handle.file.name.endswith('/a.dat')) == 2,
          'IoCreateHandle on a.dat: want 2 (two open)')
    ck.expect(io.count('IoCreateHandle', lambda ev: ev.handle.file.name.endswith('/b.txt')) == 6,
          'IoCreateHandle on b.txt: want 6 (POSIX and ISO C, three fopen)')
    ck.expect(io.count('IoDuplicateHandle', lambda ev: ev.old_handle.file is ev.new_handle.file) == 4,
          'IoDuplicateHandle: want 4 (dup, dup2 twice, F_DUPFD)')
    ck.expect(io.count('IoDestroyHandle', lambda ev: ev.handle.file.name.endswith('/x.dat')) == 1,
          'the handle of x.dat replaced by dup2 not destroyed')
    ck.expect(io.count('IoChangeStatusFlags', lambda ev: 'APPEND' in str(ev.status_flags)) == 1,
          'IoChangeStatusFlags with APPEND: want 1')
    ck.expect(io.count('IoSeek') == 2, 'IoSeek: %d, want 2 (lseek, fseek)' % io.count('IoSeek'))
    ck.expect(io.count('IoDeleteFile') == 2 and
          io.count('IoDeleteFile', lambda ev: ev.file.name == os.path.join(os.path.realpath(td), 'a.dat')) == 1,
          'IoDeleteFile: want two, of x.dat and a.dat')
    created = io.count('IoCreateHandle') + io.count('IoDuplicateHandle')
    destroyed = io.count('IoDestroyHandle')
    ck.expect(created == destroyed, '%d handles created, %d destroyed (close(999) must not destroy any)'
          % (created, destroyed))
    # operations complete with their result; flush operations of fsync/fflush
    ck.expect(io.count('IoOperationBegin') == io.count('IoOperationComplete') == len(io.ops), 'Begin/Complete')
    ck.expect(io.bytes('FLUSH') == 0 and sum(1 for o in io.ops if o[1] == 'FLUSH') == 2, 'FLUSH operations')
    # definitions
    import otf2
    with otf2.reader.open(tr.anchor) as r:
        d = r.definitions
        par = {p.identification: p for p in d.io_paradigms}
        ck.expect(set(par) == {'POSIX', 'ISOC'}, 'IoParadigms %r' % sorted(par))
        ck.expect(par['POSIX'].name == 'POSIX I/O' and par['ISOC'].name == 'ISO C I/O', 'paradigm names')
        # a standard stream is defined at its first use (POSIX and ISO C
        # handle), one never used not at all
        pre = [s.io_handle.name for s in d.io_pre_created_handle_states]
        used = {o[2].name for o in io.ops}
        ck.expect('stdout' in used, 'no operation on stdout: %r' % sorted(used))
        for n in ('stdin', 'stdout', 'stderr'):
            want = 2 if n in used else 0
            ck.expect(pre.count(n) == want, 'pre-created %s: %d states, want %d (%s)'
                      % (n, pre.count(n), want, 'POSIX and ISO C' if want else 'never used'))
        files = [f.name for f in d.io_files]
        ck.expect(not [f for f in files if f.startswith(os.path.realpath(os.path.join(A.work, 'prog-archive')))],
              'the tracer\'s own files are IoFiles: %r' % files)
        ck.expect(all(f.startswith('/') and '/./' not in f and '/../' not in f for f in files if not f.startswith(('pipe:', 'socket:', 'anon_inode:'))),
              'file names not canonical: %r' % files)
        roles = {rg.name: enum_name(rg.region_role) for rg in d.regions}
        ck.expect(roles.get('read') == 'FILE_IO' and roles.get('open') == 'FILE_IO_METADATA', 'region roles %r'
              % {k: roles.get(k) for k in ('read', 'open')})
    print('prog: %d Io events, %d operations' % (sum(io.kinds.values()), len(io.ops)))


def case_threads():
    """4 threads doing I/O at once: each thread's location has its own
    file's bytes (one shared descriptor table, no lock)."""
    t, td, tr = compare('threads', [A.prog, 'threads', '{dir}'])
    io = Io(tr)
    ck.expect(len(tr.locations) == 5, '%d locations, want 5' % len(tr.locations))
    for i in range(4):
        locs = {o[0].id for o in io.ops if o[2].file.name.endswith('/t%d.dat' % i)}
        ck.expect(len(locs) == 1, 'thread %d: t%d.dat written from %d locations' % (i, i, len(locs)))
        w = io.bytes('WRITE', '/t%d.dat' % i, 'POSIX')
        ck.expect(w == 51200, 'thread %d: %d bytes written to t%d.dat, want 51200' % (i, w, i))
        p = io.bytes('WRITE', '/t%d.txt' % i, 'ISOC')
        want = printed(t.stdout, 'thread %d printed ' % i)
        ck.expect(p == want, 'thread %d: %d bytes printed to t%d.txt, want %d' % (i, p, i, want))
    print('threads: %d Io operations' % len(io.ops))


def case_filter():
    """TRACER_FILTER excluding read and write: neither their regions nor
    their operations are recorded; pread/readv still are."""
    os.makedirs(A.work, exist_ok=True)
    filt = os.path.join(A.work, 'filter.txt')
    with open(filt, 'w') as f:
        f.write('read\nwrite\n')
    t, td, tr = compare('filter', [A.prog, '{dir}'], env={'TRACER_FILTER': filt})
    io = Io(tr)
    ck.expect(not [e for l in tr.locations for e in tr.events(l) if e.kind == 'Enter' and e.region in ('read', 'write')],
          'filtered regions recorded')
    got = io.bytes('READ', '/a.dat', 'POSIX')
    ck.expect(got == 228, 'POSIX bytes read from a.dat with read() filtered: %d, want 228 (pread + readv)' % got)
    ck.expect(io.bytes('WRITE', '/b.txt', 'ISOC') == printed(t.stdout, 'stdio wrote '), 'stdio operations lost')


def case_off():
    t, td, tr = compare('off', [A.prog, '{dir}'], env={'TRACER_IO': 'off'})
    io = Io(tr)
    ck.expect(not io.kinds, 'TRACER_IO=off: Io events %r' % dict(io.kinds))
    ck.expect('read' not in tr.regions, 'TRACER_IO=off: I/O regions defined')


def make_input(d):
    # deterministic, compressible, 2 MiB + a bit
    with open(os.path.join(d, 'in.txt'), 'w') as f:
        x = 12345
        for i in range(60000):
            x = (x * 1103515245 + 12345) & 0x7fffffff
            f.write('%08d line %d of the input %s\n' % (x % 100000000, i, 'abc' * (x % 7)))


def case_gzip():
    t, td, tr = compare('gzip', ['gzip', '-k', '-n', 'in.txt'], setup=make_input)
    io = Io(tr)
    size = os.path.getsize(os.path.join(td, 'in.txt'))
    gz = os.path.getsize(os.path.join(td, 'in.txt.gz'))
    got = io.bytes('READ', '/in.txt')
    ck.expect(got == size, 'gzip: %d bytes read from in.txt, want %d' % (got, size))
    got = io.bytes('WRITE', '/in.txt.gz')
    ck.expect(got == gz, 'gzip: %d bytes written to in.txt.gz, want %d' % (got, gz))
    print('gzip: %d -> %d bytes, %d operations' % (size, gz, len(io.ops)))


def case_dd():
    t, td, tr = compare('dd', ['dd', 'if=in.txt', 'of=out.txt', 'bs=4096', 'status=none'], setup=make_input)
    io = Io(tr)
    size = os.path.getsize(os.path.join(td, 'in.txt'))
    r, w = io.bytes('READ', '/in.txt'), io.bytes('WRITE', '/out.txt')
    ck.expect(r == size and w == size, 'dd: read %d, written %d, want %d both' % (r, w, size))
    nreads = sum(1 for o in io.ops if o[1] == 'READ' and o[2].file.name.endswith('/in.txt'))
    ck.expect(nreads == (size + 4095) // 4096 + 1, 'dd: %d reads of 4096, want %d' % (nreads, (size + 4095) // 4096 + 1))
    # a region is defined at its first call: none that dd never entered
    # (a short process wrote and unified ~130 unused ones)
    entered = {e.region for e in tr.events() if e.kind == 'Enter'}
    unused = sorted(set(tr.regions) - entered)
    ck.expect(not unused and 'read' in entered and 'write' in entered,
              'dd: regions defined but never entered: %s' % unused)
    print('dd: %d bytes, %d operations' % (size, len(io.ops)))


def case_cp():
    """cp (copy_file_range, or read/write where the kernel cannot): bytes
    read from the source = written to the copy = its size."""
    t, td, tr = compare('cp', ['cp', 'in.txt', 'out.txt'], setup=make_input)
    io = Io(tr)
    size = os.path.getsize(os.path.join(td, 'in.txt'))
    r, w = io.bytes('READ', '/in.txt'), io.bytes('WRITE', '/out.txt')
    ck.expect(r == size and w == size, 'cp: read %d, written %d, want %d both' % (r, w, size))
    print('cp: %d bytes, %d operations' % (size, len(io.ops)))


def case_sort():
    t, td, tr = compare('sort', ['sort', '-o', 'out.txt', 'in.txt'], setup=make_input)
    io = Io(tr)
    size = os.path.getsize(os.path.join(td, 'in.txt'))
    # whichever layer sort uses, the outermost one is recorded once
    r = io.bytes('READ', '/in.txt')
    w = io.bytes('WRITE', '/out.txt')
    ck.expect(r == size and w == size, 'sort: read %d, written %d, want %d both' % (r, w, size))
    print('sort: %d bytes, %d operations' % (size, len(io.ops)))


def case_more():
    """io_more: per-character stdio, fscanf, putchar/printf to stdout,
    mmap/msync/munmap as handles of their own, copy_file_range, sendfile,
    splice through a pipe, POSIX aio (Issued/Test/Complete by aiocb)."""
    # TRACER_IO_CHARS=all: every character call an operation
    t, td, tr = compare('more-all', [A.more_prog, '{dir}'], env={'TRACER_IO_CHARS': 'all'})
    io = Io(tr)
    n = sum(1 for o in io.ops if o[1] == 'WRITE' and o[2].file.name.endswith('/chars.txt'))
    ck.expect(n == 501, 'ISO C writes to chars.txt: %d, want 501 (300 fputc, 200 putc, 1 fprintf)' % n)
    ck.expect(not io.folded, 'TRACER_IO_CHARS=all: %d folded records' % len(io.folded))
    size = os.path.getsize(os.path.join(td, 'chars.txt'))
    got = io.bytes('WRITE', '/chars.txt', 'ISOC')
    ck.expect(got == size, 'all: ISO C bytes written to chars.txt: %d, want %d' % (got, size))
    check_report(tr, io)
    # the default (fold): the character calls are counts in Metric records
    t, td, tr = compare('more', [A.more_prog, '{dir}'])
    io = Io(tr)
    out = t.stdout
    ck.expect(printed(out, 'chars put ') == 500, 'the program did not do what it should')
    size = os.path.getsize(os.path.join(td, 'chars.txt'))
    got = io.bytes('WRITE', '/chars.txt', 'ISOC')
    ck.expect(got == size, 'ISO C bytes written to chars.txt: %d, want %d' % (got, size))
    n = sum(1 for o in io.ops if o[1] == 'WRITE' and o[2].file.name.endswith('/chars.txt'))
    ck.expect(n == 1, 'ISO C write operations on chars.txt: %d, want 1 (fprintf; the characters folded)' % n)
    n = io.folded_calls('WRITE', '/chars.txt', 'ISOC')
    ck.expect(n == 500, 'folded character writes to chars.txt: %d, want 500 (300 fputc, 200 putc)' % n)
    ck.expect(not any(o[1] == 'READ' and o[3] == 1 for o in io.ops if o[2].file.name.endswith('/chars.txt')),
              'a character read recorded as an operation')
    got = io.bytes('READ', '/chars.txt', 'ISOC')
    ck.expect(got == size + 1, 'ISO C bytes read from chars.txt: %d, want %d (size + the character read '
          'again after ungetc; fscanf by position)' % (got, size + 1))
    ck.expect(io.bytes('READ', '/chars.txt', 'POSIX') == 0, 'the read() of stdio recorded')
    got = io.bytes('WRITE', paradigm='ISOC', handle_name='stdout')
    ck.expect(got == len(out), 'ISO C bytes to stdout: %d, want %d (putchar, printf)' % (got, len(out)))
    # mappings: handles of their own over the descriptor's, created and destroyed
    maps = [ev.handle for k, ev in io.events if k == 'IoCreateHandle' and ev.handle.parent is not None
            and ev.handle.parent.io_paradigm.identification == 'POSIX'
            and ev.handle.io_paradigm.identification == 'POSIX']
    ck.expect(len(maps) == 2 and all(h.file.name.endswith('/map.dat') and h.parent.file is h.file for h in maps),
          'mapping handles: %r' % [(h.name, h.file.name) for h in maps])
    modes = [enum_name(ev.mode) for k, ev in io.events if k == 'IoCreateHandle' and ev.handle in maps]
    ck.expect(modes == ['READ_WRITE', 'READ_ONLY'], 'mapping access modes %r' % modes)
    destroyed = io.count('IoDestroyHandle', lambda ev: ev.handle in maps)
    ck.expect(destroyed == 2, 'mapping handles destroyed: %d, want 2 (munmap)' % destroyed)
    flushes = [o for o in io.ops if o[1] == 'FLUSH' and o[2] in maps]
    ck.expect(len(flushes) == 1, 'msync: %d FLUSH operations on a mapping, want 1' % len(flushes))
    # in-kernel copies: read of the source, write of the destination
    c, s_, sp = [int(x.strip(',')) for x in out.split('copied ')[1].split()[0:5:2]]
    ck.expect((c, s_, sp) == (16384, 16384, 8192), 'copies %r' % ((c, s_, sp),))
    got = io.bytes('READ', '/map.dat', 'POSIX')
    ck.expect(got == c + s_ + sp, 'bytes read from map.dat: %d, want %d' % (got, c + s_ + sp))
    for f, want in (('copy1.dat', c), ('copy2.dat', s_), ('copy3.dat', sp)):
        got = io.bytes('WRITE', '/' + f, 'POSIX')
        ck.expect(got == want, 'bytes written to %s: %d, want %d' % (f, got, want))
    def piped(mode):   # the program's pipe (stdout, a pipe as well, is not POSIX-written here)
        return sum(o[4] for o in io.ops if o[1] == mode and o[2].file.name.startswith('pipe:')
                   and o[2].io_paradigm.identification == 'POSIX' and o[2].name != 'stdout')
    pipe_w, pipe_r = piped('WRITE'), piped('READ')
    ck.expect(pipe_w == pipe_r == sp, 'splice through the pipe: %d in, %d out, want %d' % (pipe_w, pipe_r, sp))
    # aio: two non-blocking operations, issued, completed with their bytes
    ck.expect(io.nonblocking == 2, 'non-blocking operations: %d, want 2' % io.nonblocking)
    ck.expect(io.count('IoOperationIssued') == 2, 'IoOperationIssued: %d, want 2' % io.count('IoOperationIssued'))
    ck.expect(io.bytes('WRITE', '/aio.dat') == 8192 and io.bytes('READ', '/aio.dat') == 4096,
          'aio bytes: wrote %d, read %d, want 8192, 4096' % (io.bytes('WRITE', '/aio.dat'), io.bytes('READ', '/aio.dat')))
    check_report(tr, io)
    print('more: %d Io operations, %d IoOperationTest' % (len(io.ops), io.count('IoOperationTest')))


def check_report(tr, io):
    """`tracer report`: its I/O figures per file and layer (JSON) are those
    the reference reader gives; the text has the two I/O tables."""
    import json
    rep = subprocess.run([A.tracer, 'report', '--json', tr.anchor], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True, timeout=120)
    got = {(f['file'], f['layer'], k): (f[k]['operations'], f[k]['bytes'])
           for f in json.loads(rep.stdout)['io']['files'] for k in ('read', 'write', 'flush')}
    want = collections.Counter()
    for loc, m, h, req, res in io.ops:
        key = (h.file.name, h.io_paradigm.identification, m.lower())
        want[key + ('n',)] += 1
        want[key + ('b',)] += 0 if res == 2 ** 64 - 1 else res
    for loc, m, h, calls, b in io.folded:   # folded character calls: operations of their file too
        key = (h.file.name, h.io_paradigm.identification, m.lower())
        want[key + ('n',)] += calls
        want[key + ('b',)] += b
    keys = {k[:3] for k in want}
    ck.expect({k for k, v in got.items() if v[0]} == keys, 'report files/layers/kinds %r, want %r'
          % (sorted(k for k, v in got.items() if v[0]), sorted(keys)))
    for k in keys:
        ck.expect(got[k] == (want[k + ('n',)], want[k + ('b',)]), 'report %r: %r, reference reader %r'
              % (k, got[k], (want[k + ('n',)], want[k + ('b',)])))
    text = subprocess.run([A.tracer, 'report', tr.anchor], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True, timeout=120).stdout
    ck.expect('I/O per file' in text and 'I/O per operation kind' in text, 'no I/O section in the text report')
    page = os.path.join(A.work, 'report.html')
    subprocess.run([A.tracer, 'report', '--html', page, tr.anchor], stdout=subprocess.DEVNULL, check=True,
                   timeout=120)
    html = open(page).read()
    ck.expect('<h2>I/O per file' in html and '<h2>I/O per operation kind</h2>' in html, 'no I/O tables in the HTML report')


def case_meta():
    """io_meta: truncate, ftruncate, fallocate, posix_fallocate,
    posix_fadvise and the stat family are regions of role FILE_IO_METADATA
    with no Io record (OTF2 has none for them); lio_listio entries are
    non-blocking operations (Begin, Issued, Complete by aio_return) with
    their bytes, a LIO_NOP none."""
    t, td, tr = compare('meta', [A.meta_prog, '{dir}'])
    ck.expect(t.stdout.startswith('sizes 4096 1000 4096 8192 8192\n'), 'the program did not do what it should: %r'
          % t.stdout)
    io = Io(tr)
    roles = {r.name: enum_name(r.region_role) for r in tr.region_defs}
    for fn in ('ftruncate', 'truncate', 'fallocate', 'posix_fallocate', 'posix_fadvise', 'fstat', 'stat',
               'lstat', 'fstatat', 'statx'):
        n = tr.count('Enter', region=fn)
        ck.expect(n == 1, '%s: %d Enter, want 1' % (fn, n))
        ck.expect(roles.get(fn) == 'FILE_IO_METADATA', '%s: region role %r' % (fn, roles.get(fn)))
    # inside those regions: nothing of Io (no operation, seek, flags change)
    for loc in tr.locations:
        inside = None
        for e in tr.events(loc):
            if e.kind == 'Enter' and roles.get(e.region) == 'FILE_IO_METADATA' and e.region not in (
                    'open', 'close', 'lio_listio', 'aio_error', 'aio_return'):
                inside = e.region
            elif e.kind == 'Leave':
                inside = None
            elif inside and e.kind.startswith('Io'):
                ck.fail('%s inside %s' % (e.kind, inside))
    # meta.dat: only the write() moved data
    ck.expect(io.bytes('WRITE', '/meta.dat') == 10000 and io.bytes('READ', '/meta.dat') == 0,
          'meta.dat bytes: wrote %d, read %d, want 10000, 0' % (io.bytes('WRITE', '/meta.dat'),
                                                                io.bytes('READ', '/meta.dat')))
    # lio_listio: 4 operations (2 + 2, the LIO_NOP none), issued, completed by aio_return
    ck.expect(printed(t.stdout, 'lio wrote ') == 7168, 'the program did not do what it should')
    ck.expect(tr.count('Enter', region='lio_listio') == 2, 'lio_listio regions: %d' % tr.count('Enter', region='lio_listio'))
    lio = [o for o in io.ops if o[2].file.name.endswith('/lio.dat')]
    ck.expect(io.nonblocking == 4 and len(lio) == 4, 'lio_listio: %d non-blocking operations, %d completed on lio.dat, '
          'want 4 and 4' % (io.nonblocking, len(lio)))
    ck.expect(io.count('IoOperationIssued') == 4, 'IoOperationIssued: %d, want 4' % io.count('IoOperationIssued'))
    w, r = io.bytes('WRITE', '/lio.dat'), io.bytes('READ', '/lio.dat')
    ck.expect((w, r) == (7168, 4096), 'lio.dat bytes: wrote %d, read %d, want 7168, 4096' % (w, r))
    ck.expect(sorted(o[3] for o in lio) == [1024, 2048, 4096, 4096], 'bytes requested %r' % sorted(o[3] for o in lio))
    print('meta: %d Io operations, %d metadata regions' % (len(io.ops), sum(
        1 for e in tr.events() if e.kind == 'Enter' and roles.get(e.region) == 'FILE_IO_METADATA')))


def case_inherit():
    """Descriptors the parent opened (sh: exec 5<in.txt 6>>out.txt
    7<other.txt, only the program traced): 5 read to its end and 6 written
    through a stream are pre-created POSIX handles (IoPreCreatedHandleState:
    READ_ONLY, WRITE_ONLY + APPEND), the stream's ISO C handle nested over
    6's; 7, closed but never used, is unknown to the tracer: no handle, no
    IoFile, no IoDestroyHandle."""
    script = ('exec 5<in.txt 6>>out.txt 7<other.txt; '
              '[ -n "$IO_LIB" ] && export LD_PRELOAD="$IO_LIB" TRACER_OUTPUT="$IO_OUT"; exec "$0" inherit')
    out = os.path.join(A.work, 'inherit-archive')
    shutil.rmtree(out, ignore_errors=True)
    res = {}
    for traced in (False, True):
        d = fresh('inherit' + ('-traced' if traced else '-untraced'))
        make_input(d)
        with open(os.path.join(d, 'out.txt'), 'w') as f:
            f.write('already there\n')
        with open(os.path.join(d, 'other.txt'), 'w') as f:
            f.write('never read\n')
        env = {'IO_LIB': A.lib, 'IO_OUT': out} if traced else {}
        res[traced] = (run(['sh', '-c', script, A.prog], False, out, d, env), d)
    (u, ud), (t, td) = res[False], res[True]
    sys.stdout.write(t.stdout)
    sys.stderr.write(t.stderr[-2000:])
    ck.expect(t.returncode == u.returncode == 0, 'exit %d traced, %d untraced' % (t.returncode, u.returncode))
    ck.expect(t.stdout == u.stdout, 'stdout differs: %r vs %r' % (t.stdout, u.stdout))
    ck.expect(rc.without_tracer_lines(t.stderr) == rc.without_tracer_lines(u.stderr), 'stderr differs')
    for f in ('out.txt', 'in.txt', 'other.txt'):
        ck.expect(open(os.path.join(td, f), 'rb').read() == open(os.path.join(ud, f), 'rb').read(), f + ' differs')
    size = os.path.getsize(os.path.join(td, 'in.txt'))
    ck.expect(printed(t.stdout, 'inherited read ') == size, 'the program did not read in.txt')
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    tc.otf2_print(tr.anchor)
    io = Io(tr)
    got = io.bytes('READ', '/in.txt', 'POSIX')
    ck.expect(got == size, 'bytes read from inherited descriptor 5: %d, want %d' % (got, size))
    appended = int(t.stdout.split('appended ')[1].split(',')[0])
    got = io.bytes('WRITE', '/out.txt', 'ISOC')
    ck.expect(got == appended, 'ISO C bytes appended to out.txt: %d, want %d' % (got, appended))
    import otf2
    with otf2.reader.open(tr.anchor) as r:
        d = r.definitions
        files = [f.name for f in d.io_files]
        ck.expect(not [f for f in files if f.endswith('/other.txt')], 'descriptor 7 (never used) got an IoFile: %r' % files)
        states = {(s.io_handle.file.name.rsplit('/', 1)[-1], s.io_handle.io_paradigm.identification):
                  (enum_name(s.io_access_mode), str(s.io_status_flags)) for s in d.io_pre_created_handle_states}
        ck.expect(states.get(('in.txt', 'POSIX'), ('',))[0] == 'READ_ONLY', 'in.txt pre-created state %r' % states)
        st = states.get(('out.txt', 'POSIX'), ('', ''))
        ck.expect(st[0] == 'WRITE_ONLY' and 'APPEND' in st[1], 'out.txt pre-created state %r' % (st,))
        isoc = [h for h in d.io_handles if h.io_paradigm.identification == 'ISOC' and h.file.name.endswith('/out.txt')]
        posix = [h for h in d.io_handles if h.io_paradigm.identification == 'POSIX' and h.file.name.endswith('/out.txt')]
        ck.expect(len(isoc) == 1 and isoc[0].parent is None and len(posix) == 1 and posix[0].parent is None
              and 'PRE_CREATED' in str(posix[0].io_handle_flags) and posix[0].file is isoc[0].file,
              'fdopen of an inherited descriptor: ISO C %r, POSIX %r (want one each, same file, no parent:'
              ' the stream did not create the descriptor)' % (isoc, posix))
    destroyed = sorted((ev.handle.file.name.rsplit('/', 1)[-1], ev.handle.io_paradigm.identification)
                       for k, ev in io.events if k == 'IoDestroyHandle')
    ck.expect(destroyed == [('in.txt', 'POSIX'), ('out.txt', 'ISOC'), ('out.txt', 'POSIX')],
          'handles destroyed: %r (close(7) of an unknown descriptor must destroy none)' % destroyed)
    print('inherit: %d Io operations' % len(io.ops))


def case_mpi():
    """2 ranks: the Io definitions of both go through the MPI unification
    (IoFile/IoHandle mapping tables); each rank's location has its own
    file's bytes on its own handles."""
    out = os.path.join(A.work, 'mpi-archive')
    shutil.rmtree(out, ignore_errors=True)
    res = {}
    for traced in (False, True):
        d = fresh('mpi' + ('-traced' if traced else '-untraced'))
        res[traced] = (rc.run_mpi(A.mpirun, 2, [A.mpi_prog, d], ['TRACER_OUTPUT=' + out] if traced else [],
                                  lib=A.lib if traced else None, timeout=240, cwd=d), d)
    (u, ud), (t, td) = res[False], res[True]
    ck.expect(u.returncode == 0 and t.returncode == 0, 'exit %d traced, %d untraced' % (t.returncode, u.returncode))
    ck.expect(t.stdout == u.stdout, 'stdout differs: %r vs %r' % (t.stdout, u.stdout))
    for r in (0, 1):
        f = 'rank%d.dat' % r
        ck.expect(open(os.path.join(td, f), 'rb').read() == open(os.path.join(ud, f), 'rb').read(), f + ' differs')
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    tc.otf2_print(tr.anchor)
    io = Io(tr)
    for r in (0, 1):
        loc = [l for l in tr.locations if l.group == 'MPI Rank %d' % r]
        ck.expect(len(loc) == 1, 'rank %d: locations %r' % (r, [(l.id, l.group) for l in tr.locations]))
        loc = loc[0]
        mine = [o for o in io.ops if o[0] is loc]
        w = sum(o[4] for o in mine if o[1] == 'WRITE' and o[2].file.name.endswith('/rank%d.dat' % r))
        rd = sum(o[4] for o in mine if o[1] == 'READ' and o[2].file.name.endswith('/rank%d.dat' % r)
                 and o[2].io_paradigm.identification == 'ISOC')
        ck.expect(w == (r + 1) * 1000 and rd == w, 'rank %d: wrote %d, read %d, want %d' % (r, w, rd, (r + 1) * 1000))
        other = [o for o in mine if o[2].file.name.endswith('/rank%d.dat' % (1 - r))]
        ck.expect(not other, 'rank %d: operations on the other rank\'s file' % r)
    handles = {}
    for loc, m, h, req, res_ in io.ops:
        handles.setdefault(id(h), set()).add(loc.id)
    ck.expect(all(len(v) == 1 for v in handles.values()), 'a handle used by two ranks')
    print('mpi: %d Io operations on 2 ranks' % len(io.ops))


def main():
    global A
    p = argparse.ArgumentParser()
    p.add_argument('case')
    p.add_argument('--lib', required=True)
    p.add_argument('--prog', required=True)
    p.add_argument('--work', required=True)
    p.add_argument('--more-prog')
    p.add_argument('--meta-prog')
    p.add_argument('--tracer')
    p.add_argument('--mpi-prog')
    p.add_argument('--mpirun')
    A = p.parse_args()
    return rc.run_case(globals()['case_' + A.case], A.case)


if __name__ == '__main__':
    sys.exit(main())
