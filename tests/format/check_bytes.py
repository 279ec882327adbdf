#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check_bytes.py FMT_BYTES WORKDIR

Writes the small trace of otf2-format.md §8.1 with the reference Python
writer (WORKDIR/ref), then the same content with our writer (FMT_BYTES,
WORKDIR/ours) using the reference's trace id and realtime value (the only
run-dependent values), and requires every file to be byte-identical:
traces.otf2, traces.def, traces/0.evt, traces/0.def.
"""
import os
import shutil
import struct
import subprocess
import sys

import otf2
from otf2.enums import Type, RegionRole, Paradigm


def write_ref(path):
    with otf2.writer.open(path, timer_resolution=1000000000) as tr:
        node = tr.definitions.system_tree_node("node")
        proc = tr.definitions.location_group("proc", system_tree_parent=node)
        main = tr.definitions.region("main", region_role=RegionRole.FUNCTION,
                                     paradigm=Paradigm.USER)
        attr = tr.definitions.attribute("bytes", "payload size", Type.UINT64)
        w = tr.event_writer("thread 0", group=proc)
        w.enter(1000, main, {attr: 42})
        w.leave(2000, main)


def cu64(b, pos):
    n = b[pos]
    if n == 0xff:
        return 0xffffffffffffffff, pos + 1
    return int.from_bytes(b[pos + 1:pos + 1 + n], 'little'), pos + 1 + n


def ref_values(path):
    a = open(os.path.join(path, 'traces.otf2'), 'rb').read()
    # anchor: after the strings and properties comes the 8-byte trace id
    pos = 2 + 5 + 1 + 1 + 3 + 8 + 8 + 1 + 1 + 8 + 8
    for _ in range(3):                        # machine, creator, description
        pos = a.index(b'\0', pos) + 1
    nprop = struct.unpack_from('<I', a, pos)[0]
    pos += 4
    for _ in range(2 * nprop):
        pos = a.index(b'\0', pos) + 1
    trace_id = struct.unpack_from('<Q', a, pos)[0]
    d = open(os.path.join(path, 'traces.def'), 'rb').read()
    assert d[18] == 0x05, 'ClockProperties is not the first definition'
    pos = 20
    for _ in range(3):
        _, pos = cu64(d, pos)
    realtime, _ = cu64(d, pos)
    return trace_id, realtime


def hexdump_diff(name, a, b):
    print('FAIL: %s differs (ours %d bytes, reference %d bytes)' % (name, len(a), len(b)),
          file=sys.stderr)
    diffs = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
    if diffs:
        print('  first differing offsets: %s' % diffs[:16], file=sys.stderr)
    for label, x in (('ours', a), ('ref ', b)):
        print('  %s: %s' % (label, x.hex(' ')), file=sys.stderr)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    ref = os.path.join(work, 'ref')
    ours = os.path.join(work, 'ours')
    for p in (ref, ours):
        shutil.rmtree(p, ignore_errors=True)
    write_ref(ref)
    trace_id, realtime = ref_values(ref)
    p = subprocess.run([exe, ours, str(trace_id), str(realtime)])
    if p.returncode != 0:
        print('FAIL: %s exited with %d' % (exe, p.returncode), file=sys.stderr)
        return 1
    bad = 0
    for f in ('traces.otf2', 'traces.def', 'traces/0.evt', 'traces/0.def'):
        fo, fr = os.path.join(ours, f), os.path.join(ref, f)
        if not os.path.exists(fo):
            print('FAIL: ours has no %s' % f, file=sys.stderr)
            bad += 1
            continue
        a, b = open(fo, 'rb').read(), open(fr, 'rb').read()
        if a != b:
            hexdump_diff(f, a, b)
            bad += 1
        else:
            print('%-12s %4d bytes identical' % (f, len(a)))
    extra = sorted(set(os.listdir(ours)) ^ set(os.listdir(ref)))
    if extra:
        print('FAIL: files present in only one archive: %s' % extra, file=sys.stderr)
        bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
