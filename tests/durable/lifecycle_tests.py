# SPDX-License-Identifier: BSD-3-Clause
"""lifecycle_tests.py - TRACER_DURABLE against the program's life cycle
(default mode: durable, ticks on the program's threads; TRACER_DURABLE=off
where named).

Cases (lifecycle_tests.py CASE --lib LIB --bindir DIR --work DIR, the options of durable_tests.py):
  mainexit_race  `lastthreads mainexit` 30 times: main calls pthread_exit and
                 8 threads end at the same moment; every run ends by itself
                 (20 s limit), status 0, the atexit handler's line, an archive
                 that otf2-print reads with 9 ThreadEnd-or-ProgramEnd ends.
  closeall       threads record while main closes every descriptor above 2 and
                 opens a file: every open returns 3, as untraced; stdout and
                 status equal the untraced run's; the archive reads back.
  daemon         fork, parent returns, the child starts a session, closes
                 every descriptor (0-2 too), records with 3 threads, opens a
                 file: it gets 0 and every open gets 0, as untraced; every
                 archive the run leaves reads back.
"""
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
sys.path.insert(0, os.path.join(HERE, '..', 'real'))
import real_tests as rt  # noqa: E402  (clean_env, Fail)
import tracecheck as tc  # noqa: E402
import durable_tests as dt  # noqa: E402  (options, fresh, run, main)

CASES = {}
Fail = rt.Fail
fresh = dt.fresh
run = dt.run
no_tracer = dt.without_tracer_lines


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def prog():
    return os.path.join(dt.A.bindir, 'durable_lastthreads')


DEFAULT = {}   # TRACER_DURABLE unset: durable


def traced_env(base, extra=None):
    env = rt.clean_env({'LD_PRELOAD': dt.A.lib, 'TRACER_OUTPUT': os.path.join(base, 'archive')})
    env.update(DEFAULT)
    env.update(extra or {})
    return env


@case
def mainexit_race():
    base = fresh('mainexit_race')
    u = run([prog(), 'mainexit'], base, rt.clean_env())
    want = 'lastthreads mainexit: atexit handler ran\n'
    if u.returncode != 0 or u.stdout != want:
        raise Fail('untraced run: rc %d, %r' % (u.returncode, u.stdout))
    for mode in ('default', 'off'):
        for i in range(30 if mode == 'default' else 5):
            shutil.rmtree(os.path.join(base, 'archive'), ignore_errors=True)
            extra = {'TRACER_DURABLE': 'off'} if mode == 'off' else {}
            try:
                t = run([prog(), 'mainexit'], base, traced_env(base, extra), timeout=20)
            except subprocess.TimeoutExpired:
                raise Fail('%s mode, run %d: the process did not end within 20 s (the tracer kept it '
                           'alive after the last thread of the program ended)' % (mode, i))
            if t.returncode != 0 or t.stdout != want or no_tracer(t.stderr) != no_tracer(u.stderr):
                raise Fail('%s mode, run %d: rc %d, stdout %r, stderr %r' % (mode, i, t.returncode, t.stdout,
                                                                            t.stderr))
            out = tc.otf2_print(tc.find_anchor(os.path.join(base, 'archive')))
            ends = out.count('THREAD_END') + out.count('PROGRAM_END')
            if ends < 9:
                raise Fail('%s mode, run %d: %d ThreadEnd/ProgramEnd records, expected 9' % (mode, i, ends))
    print('ok mainexit_race: 35 runs ended by themselves with the atexit line and a readable archive')


@case
def closeall():
    base = fresh('closeall')
    u, t = os.path.join(base, 'u'), os.path.join(base, 't')
    os.makedirs(u)
    os.makedirs(t)
    argv = [prog(), 'closeall', 'f.txt']
    ru = run(argv, u, rt.clean_env())
    rtr = run(argv, t, traced_env(base, {'TRACER_CHUNK': '256K'}))
    if ru.returncode != 0:
        raise Fail('untraced run: rc %d, %r' % (ru.returncode, ru.stdout))
    if rtr.returncode != ru.returncode or rtr.stdout != ru.stdout or no_tracer(rtr.stderr) != no_tracer(ru.stderr):
        raise Fail('traced run differs: rc %d, stdout %r, stderr %r' % (rtr.returncode, rtr.stdout, rtr.stderr))
    # ~25M events in 0.5 s: counted in otf2-print's output as it comes (the whole text: 2 GB, 17 s)
    n = tc.otf2_print_count(os.path.join(base, 'archive'), '"pthread_mutex_lock"')
    if n < 1000:
        raise Fail('only %d pthread_mutex_lock events: the threads recorded too little' % n)
    print('ok closeall: %d lock events, every open returned 3' % n)


def wait_file(path, secs):
    end = time.time() + secs
    while time.time() < end:
        try:
            with open(path) as f:
                s = f.read()
            if s.endswith('\n'):
                return s
        except OSError:
            pass
        time.sleep(0.1)
    return None


@case
def daemon():
    base = fresh('daemon')
    u, t = os.path.join(base, 'u'), os.path.join(base, 't')
    os.makedirs(u)
    os.makedirs(t)
    ru = run([prog(), 'daemon', os.path.join(u, 'r.txt')], u, rt.clean_env())
    su = wait_file(os.path.join(u, 'r.txt'), 30)
    rtr = run([prog(), 'daemon', os.path.join(t, 'r.txt')], t, traced_env(base))
    st = wait_file(os.path.join(t, 'r.txt'), 60)
    want = 'lastthreads daemon: fd 0, opens returned another number than 0: 0\n'
    if ru.returncode != 0 or su != want:
        raise Fail('untraced run: rc %d, %r' % (ru.returncode, su))
    if rtr.returncode != 0 or st != su or no_tracer(rtr.stderr) != no_tracer(ru.stderr) or rtr.stdout != ru.stdout:
        raise Fail('traced run differs: rc %d, daemon wrote %r, stderr %r' % (rtr.returncode, st, rtr.stderr))
    # the daemon writes its archive when it ends (right after the line)
    end = time.time() + 60
    anchors = []
    while time.time() < end:
        # (the names first: a snapshot's files are renamed while the daemon runs)
        anchors = [a for a in glob.glob(os.path.join(base, 'archive*', '**', '*.otf2'), recursive=True)
                   if '.recovery' not in a and '/procs/' not in a and '/ranks/' not in a and
                   os.path.getsize(a) > 0]
        busy = glob.glob(os.path.join(base, 'archive*', '**', '*.claim'), recursive=True) + \
            glob.glob(os.path.join(base, 'archive*', '**', '*.durable'), recursive=True)
        if anchors and not busy:
            break
        time.sleep(0.2)
    if not anchors:
        raise Fail('no archive written')
    n = 0
    for a in anchors:
        n += tc.otf2_print(a).count('"pthread_mutex_lock"')
    if n < 100:
        raise Fail('only %d pthread_mutex_lock events in %s' % (n, anchors))
    print('ok daemon: descriptor 0 free for the daemon, %d lock events in %d archive(s)' % (n, len(anchors)))


if __name__ == '__main__':
    # the options and failure reporting of durable_tests.py
    dt.CASES.clear()
    dt.CASES.update(CASES)
    sys.exit(dt.main())
