#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Threads, locks and file I/O reached only from a plugin opened with
dlopen(RTLD_LOCAL) (pth_plugin.c), untraced and traced: the same stdout,
stderr and exit status, the same file (its 1 KiB blocks: the two threads'
order may differ from run to run), and every call recorded as when the
program makes it itself: 2 ThreadCreate/ThreadBegin/ThreadEnd, 2000
ThreadAcquireLock and ThreadReleaseLock, the 8 writes and the fwrite,
pread and fread as I/O operations of the file's handle with their bytes;
read back with otf2-print -Werror, python3-otf2 and the shared checks.

usage: pth_dlopen.py PROGRAM PLUGIN LIBTRACER WORKDIR
"""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

PROG, PLUGIN, LIB, WORK = sys.argv[1:5]
ck = rc.Checker()
shutil.rmtree(WORK, ignore_errors=True)
runs = {}
for mode in ('untraced', 'traced'):
    d = os.path.join(WORK, mode)
    os.makedirs(d)
    argv = [PROG, PLUGIN, os.path.join(d, 'data')]
    if mode == 'untraced':
        runs[mode] = rc.run_untraced(argv, timeout=120)
    else:
        runs[mode] = rc.run_traced(argv, LIB, os.path.join(WORK, 'trace'), timeout=120)[0]
    with open(argv[2], 'rb') as f:
        data = f.read()
    runs[mode + '_blocks'] = collections.Counter(data[i:i + 1024] for i in range(0, len(data), 1024))
base, traced = runs['untraced'], runs['traced']
ck.expect(base.returncode == 0 and 'locked 2000 bytes 9216 read 18432' in base.stdout,
          'untraced run: exit %d, %r %r' % (base.returncode, base.stdout, base.stderr))
rc.compare(ck, base, traced)
ck.expect(runs['traced_blocks'] == runs['untraced_blocks'], 'the file differs: %d blocks traced, %d untraced' % (
    sum(runs['traced_blocks'].values()), sum(runs['untraced_blocks'].values())))
notes = [l for l in rc.tracer_lines(traced.stderr) if not l.startswith('tracer: archive ')]   # (the summary)
ck.expect(not notes, 'tracer lines: %s' % notes)

tr = tc.load(os.path.join(WORK, 'trace'))
tc.otf2_print(tr.anchor, '-Werror')
tc.check_all(tr, exit_status=0)
for kind, want in (('ThreadCreate', 2), ('ThreadBegin', 2), ('ThreadEnd', 2), ('ThreadAcquireLock', 2000),
                   ('ThreadReleaseLock', 2000)):
    ck.expect(tr.count(kind) == want, '%d %s (want %d)' % (tr.count(kind), kind, want))
io = collections.Counter()   # region of the enclosing Enter -> bytes done on the data file
for loc in tr.locations:
    region = None
    for e in loc.events:
        if e.kind == 'Enter':
            region = e.region
        elif e.kind == 'IoOperationComplete' and e.ev.handle.name.endswith('/data'):
            io[region] += e.ev.bytes_result
want = {'write': 8192, 'fwrite': 1024, 'pread': 9216, 'fread': 9216}
ck.expect(all(io[r] == b for r, b in want.items()), 'bytes per call on the file %s (want %s)' % (dict(io), want))
ck.done('ok pth_dlopen: %s, %d locks, I/O %s' % (traced.stdout.strip(), tr.count('ThreadAcquireLock'), dict(io)))
