# SPDX-License-Identifier: BSD-3-Clause
"""core_lib.py - what the cases of test_core.py share: the programs and
libraries from the environment, running a program untraced and traced and
comparing the two, the summary line, the signal and crash drivers.
WORK is set by test_core.py to the case's own directory before a case runs.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

PROG = os.environ.get('CORE_PROG')
LIB = os.environ.get('CORE_LIB')
FULL = os.environ.get('FULL_LIB')
TRACER_RUN = os.environ.get('TRACER_RUN')
WORK = os.environ.get('WORK', '/tmp/tracer-core-tests')

SUMMARY = re.compile(r'^tracer: archive (\S+)/traces\.otf2: (\d+) locations, (\d+) events, (\d+) bytes')


ck = rc.Checker(stop=True)   # a case stops at its first failed check
check = ck.expect


def run(args, lib=None, env=None, cwd=None, timeout=60, preexec=None):
    e = rc.clean_env()
    if lib:
        e['LD_PRELOAD'] = lib
    e.update(env or {})
    p = subprocess.run(args, env=e, cwd=cwd or WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout, preexec_fn=preexec)
    return p


def traced(mode_args, out='out', env=None, lib=None, expect_same=True, preexec=None):
    """Baseline run + traced run; returns (proc, archive dir)."""
    args = [PROG] + mode_args
    base = run(args, preexec=preexec)
    e = {'TRACER_OUTPUT': os.path.join(WORK, out)}
    e.update(env or {})
    p = run(args, lib=lib or LIB, env=e, preexec=preexec)
    if expect_same:
        check(p.returncode == base.returncode,
              'exit status %d traced vs %d untraced\nstderr: %s' % (p.returncode, base.returncode, p.stderr))
        check(p.stdout == base.stdout, 'stdout differs:\n%r\n%r' % (p.stdout, base.stdout))
    return p, os.path.join(WORK, out)


def tracer_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith('tracer:')]


def summary(stderr):
    for l in tracer_lines(stderr):
        m = SUMMARY.match(l)
        if m:
            return m
    raise rc.CheckFailed('no summary line in stderr:\n' + stderr)


def enters(tr, region, loc=None):
    return tr.count('Enter', loc=loc, region=region)


def signal_default(name, sig):
    p, d = traced(['signal', name, 'default'])
    check(p.returncode == -sig, 'status %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + sig)
    check(enters(tr, 'signalled') == 1, 'signalled region')
    check(len(tr.locations) == 2, 'locations')
    summary(p.stderr)


def crash(mode, sig):
    p, d = traced([mode])
    check(p.returncode == -sig, 'status %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + sig)
    check(enters(tr, 'crashing') == 1 and enters(tr, 'spin') > 0, 'events before the crash')
    check(any('signal %d' % sig in l for l in tracer_lines(p.stderr)), 'crash summary: %r' % p.stderr)


def storm_ready(p, ready, what):
    """core_prog malloc_storm READY creates READY once both of its threads
    have entered 'storm': wait for it (bounded), then a little longer so the
    signal lands inside the storm. Never a fixed delay from the start: on a
    loaded machine the second thread was seen not scheduled at all in the
    first 300 ms (nr_switches 0), so the archive rightly lacked its events."""
    for _ in range(3000):
        if os.path.exists(ready) or p.poll() is not None:
            break
        time.sleep(0.01)
    if not os.path.exists(ready):
        p.kill()
        p.communicate()
        raise rc.CheckFailed('%s: the two storm threads did not start within 30 s' % what)
    time.sleep(0.1)


def wait_archive(d, timeout=30):
    anchor = os.path.join(d, 'traces.otf2')
    for _ in range(timeout * 20):
        if os.path.exists(anchor) and os.path.getsize(anchor) > 0:
            time.sleep(0.2)
            return
        time.sleep(0.05)
    raise rc.CheckFailed('no archive %s after %d s' % (d, timeout))


def traced_mpi(prog_var, name):
    """The program named by the environment variable prog_var on 2 ranks
    (MPIRUN) under the full tracer into WORK/name; mpirun must succeed.
    Returns (its CompletedProcess, the archive directory)."""
    d = os.path.join(WORK, name)
    p = rc.run_mpi(os.environ.get('MPIRUN'), 2, [os.environ.get(prog_var)], ['TRACER_OUTPUT=' + d], lib=FULL,
                   timeout=120, cwd=WORK)
    check(p.returncode == 0, 'mpirun: %d %s' % (p.returncode, p.stderr[-2000:]))
    return p, d
