# SPDX-License-Identifier: BSD-3-Clause
"""core_cases_signals.py - cases of test_core.py on signals and crashes:
termination signals with and without the program's handlers, signals
that arrive inside the allocator, abort, SIGSEGV, stack overflow, crashes
with threads, sanitizers; the archive complete and the death the untraced one.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import core_lib as cl
from core_lib import *  # noqa: F401,F403  (rc, tc, PROG, LIB, FULL, check, run, traced, ...)


def case_sigterm():
    signal_default('TERM', signal.SIGTERM)


def case_sigint():
    signal_default('INT', signal.SIGINT)


def case_sighup():
    signal_default('HUP', signal.SIGHUP)


def case_signal_handler_return():
    p, d = traced(['signal', 'INT', 'return'])
    check(p.returncode == 0 and 'survived 2' in p.stdout, 'handler not called: %r' % p.stdout)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(tr.count('Leave', region='signalled') == 1, 'tracing stopped at the signal')


def case_signal_handler_exit():
    for sig in ('TERM', 'HUP'):
        out = 'out_' + sig
        p, d = traced(['signal', sig, 'exit'], out=out)
        check(p.returncode == 42 and p.stdout.endswith('handler\n'), 'program handler: %d %r'
              % (p.returncode, p.stdout))
        tc.check_all(tc.load(d), exit_status=42, allow_open=False)


def case_signal_ignored():
    # started with SIGHUP ignored (nohup): it stays ignored under the tracer
    p, d = traced(['signal', 'HUP', 'default'], preexec=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    check(p.returncode == 0 and 'survived 0' in p.stdout, 'SIGHUP not ignored: %d %r' % (p.returncode, p.stdout))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(tr.count('Leave', region='signalled') == 1, 'recording stopped')


def case_sigterm_malloc():
    # SIGTERM (default action) while 2 threads malloc/free: the full close
    # allocates, so a signal landing inside malloc must take the lock-free
    # path; every run must end by the signal and leave a readable archive
    # with both threads' events
    paths = {'full': 0, 'emergency': 0}
    for i in range(20):
        d = os.path.join(cl.WORK, 'o%d' % i)
        ready = os.path.join(cl.WORK, 'ready%d' % i)
        e = rc.clean_env()
        e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
        p = subprocess.Popen([PROG, 'malloc_storm', ready], env=e, cwd=cl.WORK, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        storm_ready(p, ready, 'run %d' % i)
        out, err = rc.term_wait(p, 30, 'run %d: no exit 30 s after SIGTERM (deadlock)' % i)
        check(p.returncode == -signal.SIGTERM, 'run %d: status %d %s' % (i, p.returncode, err))
        check(out == 'mode malloc_storm\n', 'run %d: stdout %r' % (i, out))
        tr = tc.load(d)
        tc.check_all(tr, exit_status=128 + signal.SIGTERM)
        check(len(tr.locations) == 2 and all(enters(tr, 'storm', l) == 1 for l in tr.locations),
              'run %d: %r' % (i, tr.locations))
        paths['emergency' if 'written at signal' in err else 'full'] += 1
        shutil.rmtree(d, ignore_errors=True)
    print('close paths: %r' % paths)


def case_abort():
    crash('abort', signal.SIGABRT)


def case_segv():
    crash('segv', signal.SIGSEGV)


def case_sigterm_own_malloc():
    # SIGTERM (default action) while the program is inside its own
    # allocator (not libc's): the tracer must take the lock-free path, so
    # the process ends by the signal, with a readable archive
    for i in range(5):
        d = os.path.join(cl.WORK, 'a%d' % i)
        e = rc.clean_env()
        e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
        p = subprocess.Popen([os.environ['ALLOC_PROG']], env=e, cwd=cl.WORK, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        time.sleep(0.3)
        out, err = rc.term_wait(p, 20, 'run %d: hung after SIGTERM (tracer inside the program allocator\'s lock)' % i)
        check(p.returncode == -signal.SIGTERM, 'run %d: status %d, stderr %r' % (i, p.returncode, err))
        tr = tc.load(d)
        tc.check_all(tr, exit_status=128 + signal.SIGTERM)
        check(enters(tr, 'alloc_loop') == 1, 'run %d: events' % i)


def case_stack_overflow():
    # the crash handler runs on the tracer's alternate signal stack
    p, d = traced(['stack_overflow'])
    check(p.returncode == -signal.SIGSEGV, 'status %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + signal.SIGSEGV)
    check(enters(tr, 'outer') == 3 and enters(tr, 'inner') == 3 and enters(tr, 'crashing') == 1,
          'events before the overflow')
    check(any('signal %d' % signal.SIGSEGV in l for l in tracer_lines(p.stderr)), 'crash summary: %r' % p.stderr)


def case_small_altstack():
    # the program's own alternate signal stack is small (16 KiB, as Rust's
    # threads have): the crash path writes the archive on a stack of its own
    p, d = traced(['small_altstack'])
    check(p.returncode == -signal.SIGSEGV, 'status %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + signal.SIGSEGV)
    check(enters(tr, 'outer') == 3 and enters(tr, 'crashing') == 1, 'events before the overflow')


def case_crash_threads():
    # 5 threads SIGSEGV at once: the later ones wait for the first
    # one's archive instead of ending the process under it
    for i in range(3):
        p, d = traced(['crash_threads'], out='o%d' % i)
        check(p.returncode == -signal.SIGSEGV, 'run %d: status %d' % (i, p.returncode))
        tr = tc.load(d)
        tc.check_all(tr, exit_status=128 + signal.SIGSEGV)
        check(len(tr.locations) == 5, 'run %d: locations %r' % (i, [l.name for l in tr.locations]))
        per = sorted(enters(tr, 'outer', l) for l in tr.locations)
        check(per == [1, 2, 3, 4, 5], 'run %d: outer per thread %r' % (i, per))
        for l in tr.locations:
            check(enters(tr, 'crashing', l) == 1, 'run %d: %s crashing' % (i, l.name))


def case_crash_complete():
    # emergency archives (abort, SIGSEGV, stack overflow, SIGTERM while
    # threads are inside malloc) with the full library: ThreadEnd is every
    # thread's last record, and with sampling every CallingContext an event
    # refers to is defined (otf2-print showed INVALID, python3-otf2 read 0 events)
    shapes = [(['abort', '0', '100'], signal.SIGABRT, None), (['segv'], signal.SIGSEGV, None),
              (['stack_overflow'], signal.SIGSEGV, None), (['malloc_storm'], signal.SIGTERM, True)]
    for smp in ('', '1ms'):
        for args, sig, kill_after in shapes:
            d = os.path.join(cl.WORK, '%s%s' % (args[0], smp))
            if kill_after:   # (killed once both storm threads run)
                args = args + [os.path.join(cl.WORK, 'ready' + smp)]
            e = rc.clean_env()
            e.update({'LD_PRELOAD': FULL, 'TRACER_OUTPUT': d})
            if smp:
                e['TRACER_SAMPLING'] = smp
            p = subprocess.Popen([PROG] + args, env=e, cwd=cl.WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 universal_newlines=True)
            if kill_after:
                storm_ready(p, args[-1], '%s sampling=%r' % (args[0], smp))
                p.send_signal(sig)
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise rc.CheckFailed('%s sampling=%r: hangs' % (args[0], smp))
            what = '%s sampling=%r' % (args[0], smp)
            check(p.returncode == -sig, '%s: status %d %s' % (what, p.returncode, err))
            printed = tc.otf2_print(d)
            check('INVALID' not in printed, '%s: otf2-print shows INVALID' % what)
            tr = tc.load(d)
            tc.check_all(tr, exit_status=128 + sig)
            n = sum(len(l.events) for l in tr.locations)
            m = re.search(r'(\d+) events \((written at signal|written by the emergency)', err)
            check(m is None or int(m.group(1)) == n, '%s: summary %s events, read %d' % (what, m and m.group(1), n))
            for l in tr.locations:
                kinds = [ev.kind for ev in l.events]
                if 'ThreadBegin' in kinds:
                    check(kinds[-1] == 'ThreadEnd', '%s: %s ends with %s' % (what, l.name, kinds[-3:]))
            if smp and args[0] == 'abort':
                check(any(ev.kind == 'CallingContextSample' for l in tr.locations for ev in l.events),
                      '%s: no samples: the test does not test' % what)
            shutil.rmtree(d, ignore_errors=True)


def case_asan():
    # LD_PRELOAD="libasan.so.8 libtracer.so": the tracer's lazy start-up
    # runs inside ASan's own, and what it allocated there (ASan's dlsym
    # allocator) and freed at exit made ASan die (exit 1, stdout lost); an
    # ASan SEGV report (ASan's internal exit) left a 0-byte anchor
    import glob
    libs = sorted(glob.glob('/usr/lib/*/libasan.so.8') + glob.glob('/lib/*/libasan.so.8'))
    if not libs:
        print('SKIP asan: no libasan.so.8 (Debian libasan8)')
        sys.exit(77)
    pre = libs[0] + ' ' + FULL
    for args, status in ((['basic'], 3), (['threads'], 0), (['exec'], 3), (['fork'], 0), (['running'], 5)):
        base = run([PROG] + args, env={'LD_PRELOAD': libs[0]})
        d = os.path.join(cl.WORK, args[0])
        p = run([PROG] + args, env={'LD_PRELOAD': pre, 'TRACER_OUTPUT': d})
        check(p.returncode == base.returncode == status and p.stdout == base.stdout,
              '%s: rc %d %r vs %d %r\n%s' % (args[0], p.returncode, p.stdout, base.returncode, base.stdout,
                                             p.stderr[-1500:]))
        check('ERROR' not in p.stderr and '==' not in p.stderr, '%s: ASan complains: %s' % (args[0], p.stderr))
        tc.check_all(tc.load(d), exit_status=0 if args[0] == 'exec' else status)
    # SEGV: ASan reports and exits 1 through its own exit: the death
    # callback writes the archive first
    base = run([PROG, 'segv'], env={'LD_PRELOAD': libs[0]})
    d = os.path.join(cl.WORK, 'segv')
    p = run([PROG, 'segv'], env={'LD_PRELOAD': pre, 'TRACER_OUTPUT': d})
    check(p.returncode == base.returncode == 1 and p.stdout == base.stdout, 'segv: rc %d vs %d'
          % (p.returncode, base.returncode))
    check('AddressSanitizer: SEGV' in p.stderr, 'no ASan report: %s' % p.stderr)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=1)
    check(any('sanitizer report' in l for l in tracer_lines(p.stderr)), 'summary %r' % tracer_lines(p.stderr))
