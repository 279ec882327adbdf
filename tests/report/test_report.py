#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_report.py CASE - tests of our OTF2 reader and the `tracer` command.

Environment (set by CMakeLists.txt): RECORDS_TAB, OTF2R_DUMP, FMT_DUAL (may
be empty), TRACER_LIB, DEMO, TRACER (build/bin/tracer), WORK, SRC, MPIRUN,
MPI_DEMO, CHROMIUM.
Every archive is also read by the reference reader (python3-otf2), the
oracle for every number checked.
"""
import os
import shutil
import subprocess
import sys

SRC = os.environ.get('SRC', os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get('WORK', '/tmp/report-tests')
PY = sys.executable


def die(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def workdir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def check_reader(path, min_events):
    rc, out, err = run([PY, os.path.join(SRC, 'check_reader.py'), os.environ['RECORDS_TAB'],
                        os.environ['OTF2R_DUMP'], path, str(min_events)])
    sys.stdout.write(out)
    if rc != 0:
        die('reader differs from the reference on %s:\n%s' % (path, err[-3000:]))


def traced_demo(name):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    env = dict(os.environ, LD_PRELOAD=os.environ['TRACER_LIB'], TRACER_OUTPUT=out)
    rc, _, err = run([os.environ['DEMO']], env=env)
    if rc != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        die('demo under the tracer: rc %d\n%s' % (rc, err))
    return out


def py_archive(name, per=2000):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    rc, _, err = run([PY, os.path.join(SRC, 'gen_pyarchive.py'), out, str(per)])
    if rc != 0:
        die('gen_pyarchive.py: ' + err)
    return out


def mpi_archive(name):
    d = workdir(name)
    out = os.path.join(d, 'archive')
    mpirun, prog = os.environ.get('MPIRUN'), os.environ.get('MPI_DEMO')
    if not mpirun or not prog:
        print('no MPI: skipped')
        sys.exit(77)
    rc, _, err = run([mpirun, '--allow-run-as-root', '--oversubscribe', '-np', '2',
                      '-x', 'LD_PRELOAD=' + os.environ['TRACER_LIB'], '-x', 'TRACER_OUTPUT=' + out,
                      prog], timeout=120)
    if rc != 0 or not os.path.exists(os.path.join(out, 'traces.otf2')):
        die('mpirun demo_mpi under the tracer: rc %d\n%s' % (rc, err[-2000:]))
    return out


def case_reader_demo():
    check_reader(traced_demo('reader_demo'), 1000)


def case_reader_pywriter():
    check_reader(py_archive('reader_pywriter'), 1000)


def case_reader_dual():
    if not os.environ.get('FMT_DUAL'):
        print('fmt_dual not built (no libotf2-trace-dev): skipped')
        sys.exit(77)
    for mode, n in (('all-py', 200), ('edge', 100000)):
        d = workdir('reader_dual_' + mode)
        rc, _, err = run([os.environ['FMT_DUAL'], mode, d])
        if rc != 0:
            die('fmt_dual %s: %s' % (mode, err))
        for who in ('ref', 'ours'):   # libotf2-written and otf2w-written
            check_reader(os.path.join(d, who, 'traces.otf2'), n)


def case_reader_mpi():
    check_reader(mpi_archive('reader_mpi'), 100)


def case_reader_order():
    """per location = file order; merged = same events, times non-decreasing"""
    a = traced_demo('reader_order')
    rc, per, err = run([os.environ['OTF2R_DUMP'], '--per-location', a])
    rc2, merged, err2 = run([os.environ['OTF2R_DUMP'], a])
    if rc or rc2:
        die(err + err2)
    per = [x for x in per.splitlines() if x.startswith('EVT')]
    merged = [x for x in merged.splitlines() if x.startswith('EVT')]
    if sorted(per) != sorted(merged) or len(per) < 1000:
        die('per-location and merged streams differ (%d / %d events)' % (len(per), len(merged)))
    last = -1
    for x in merged:
        t = int(x.split()[2])
        if t < last:
            die('merged stream goes back in time: ' + x)
        last = t
    print('reader_order: %d events, merged in time order' % len(merged))


def main():
    case = sys.argv[1]
    fn = globals().get('case_' + case)
    if not fn:
        die('unknown case ' + case)
    fn()


if __name__ == '__main__':
    main()
