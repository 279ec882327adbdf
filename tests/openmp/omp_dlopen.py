#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An OpenMP runtime opened with dlopen(RTLD_LOCAL), untraced and traced:
the same stdout and exit status, and the archive read back (otf2-print
-Werror, python3-otf2 and the shared checks). Before the fix every wrapper
found its own definition again (the runtime is in no global scope) and
called itself until the stack ended (SIGSEGV).

  plugin  omp_plugin (no OpenMP in the program) opens omp_plugin_CC.so
          (-fopenmp: libgomp with gcc, libomp with clang) with RTLD_LOCAL;
          its 5 parallel regions of 2 threads are recorded: 5 ThreadFork
          and 5 ThreadJoin on the master.
  numpy   /usr/bin/python3: numpy's matrix product on Debian's OpenBLAS
          built with OpenMP (libopenblas0-openmp: its libgomp is opened by
          numpy's extension module with RTLD_LOCAL), OMP_NUM_THREADS=2;
          OpenMP regions recorded (ThreadFork). Skipped (exit 77) when the
          BLAS numpy loads is no OpenMP build.

usage: omp_dlopen.py plugin PROGRAM PLUGIN LIBTRACER WORKDIR
       omp_dlopen.py numpy - - LIBTRACER WORKDIR
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

MODE, PROG, PLUGIN, LIB, WORK = sys.argv[1:6]
ck = rc.Checker()
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

NUMPY = r'''
import numpy as np
a = np.arange(500 * 500, dtype=float).reshape(500, 500) / 1e5
b = a @ a
print("numpy: %.6f" % b.sum())
print("gomp loaded: %s" % any('libgomp' in l for l in open('/proc/self/maps')))
'''

if MODE == 'plugin':
    argv, env = [PROG, PLUGIN], {}
else:
    argv, env = ['/usr/bin/python3', '-c', NUMPY], {'OMP_NUM_THREADS': '2'}
base = rc.run_untraced(argv, env, timeout=120)
ck.expect(base.returncode == 0, 'untraced run: exit %d, %r' % (base.returncode, base.stderr))
if MODE == 'numpy' and 'gomp loaded: True' not in base.stdout:
    print('SKIP numpy: the BLAS numpy loads here is no OpenMP build (libopenblas0-openmp)')
    sys.exit(77)
out = os.path.join(WORK, 'trace')
traced = rc.run_traced(argv, LIB, out, env, timeout=120)[0]
rc.compare(ck, base, traced)
bad = [l for l in rc.tracer_lines(traced.stderr) if 'error' in l or 'warning' in l or 'not found' in l]
ck.expect(not bad, 'tracer lines: %s' % bad)
tr = tc.load(out)
tc.otf2_print(tr.anchor, '-Werror')
tc.check_all(tr, exit_status=0)
forks = [e for l in tr.locations for e in l.events if e.kind == 'ThreadFork']
joins = [e for l in tr.locations for e in l.events if e.kind == 'ThreadJoin']
if MODE == 'plugin':
    ck.expect(len(forks) == 5 and len(joins) == 5, '%d forks, %d joins (want 5 each)' % (len(forks), len(joins)))
else:
    ck.expect(len(forks) > 0 and len(forks) == len(joins), '%d forks, %d joins' % (len(forks), len(joins)))
ck.done('ok %s: %s, %d forks recorded' % (MODE, traced.stdout.strip().splitlines()[0], len(forks)))
