# SPDX-License-Identifier: BSD-3-Clause
"""tests/core: traced-program tests of the core (preload/).

usage: test_core.py CASE     (CTest runs one case per test)

Environment (set by tests/core/CMakeLists.txt):
  CORE_PROG   the target program (core_prog.c)
  CORE_LIB    libtracer_coretest.so (core only + test hooks for user regions)
  FULL_LIB    libtracer.so (the product)
  TRACER_RUN  scripts/tracer-run
  WORK        scratch directory

Every case runs the program untraced first (baseline) and then under
LD_PRELOAD, and requires identical stdout and exit status (signal deaths
included), then reads the archive back with the reference reader.
"""
import os
import re
import shutil
import signal
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


# ---------------------------------------------------------------- cases

def case_basic():
    p, d = traced(['basic'])
    check(p.returncode == 3, 'exit %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(len(tr.locations) == 1, 'locations %r' % tr.locations)
    m = tr.master
    # one process: its part of the process tree, named after the program (tests/tree)
    check(m.group.startswith('core_prog (pid '), 'group %r' % m.group)
    check(enters(tr, 'outer') == 10 and enters(tr, 'inner') == 10 and enters(tr, 'main_work') == 1,
          'enter counts')
    pb = tr.program_begin.ev
    check(pb.program_name == PROG, 'program name %r' % pb.program_name)
    check(list(pb.program_arguments) == ['basic'], 'arguments %r' % list(pb.program_arguments))
    check(tr.system_tree[0] == ('machine', 'machine') and tr.system_tree[1][1] == 'node', 'system tree %r'
          % tr.system_tree)
    check(tr.clock.timer_resolution > 1000000, 'resolution %d' % tr.clock.timer_resolution)
    # global offset = the earliest timestamp (ProgramBegin), length covers the last one
    check(tr.clock.global_offset == tr.program_begin.time, 'global offset %d vs first event %d'
          % (tr.clock.global_offset, tr.program_begin.time))
    check(tr.clock.global_offset + tr.clock.trace_length >= tr.program_end.time, 'trace length too short')
    import time
    check(abs(tr.clock.realtime_timestamp / 1e9 - time.time()) < 600, 'realtime %d' % tr.clock.realtime_timestamp)
    names = [str(x) for x in tr.paradigms]
    check(any('USER' in n for n in names) and any('MEASUREMENT' in n for n in names), 'paradigms %r' % names)
    s = summary(p.stderr)
    check(s.group(1) == d and int(s.group(2)) == 1 and int(s.group(3)) == len(tr.events()),
          'summary %r vs %d events' % (s.group(0), len(tr.events())))
    check(int(s.group(4)) > 0, 'bytes')
    check(len(tracer_lines(p.stderr)) == 1, 'extra tracer lines: %r' % tracer_lines(p.stderr))
    # the location's event count in the definitions
    check(m.number_of_events == len(m.events), 'numberOfEvents %d vs %d' % (m.number_of_events, len(m.events)))


def case_threads():
    p, d = traced(['threads'])
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    names = sorted(l.name for l in tr.locations)
    check(names == ['Master thread', 'Thread 1', 'Thread 2', 'Thread 3'], 'locations %r' % names)
    ids = sorted(l.id for l in tr.locations)
    check(ids == [0, 1, 2, 3], 'location ids %r' % ids)
    per = sorted(enters(tr, 'outer', l) for l in tr.locations if l.name != 'Master thread')
    check(per == [2, 3, 4], 'outer per thread %r' % per)
    check(enters(tr, 'outer', tr.master) == 1, 'master outer')
    check(int(summary(p.stderr).group(2)) == 4, 'summary locations')


def case_threads_deferred():
    # ended threads' event data stays in memory until the archive is written
    # (no file per thread exit): it must reach the archive on every path
    for how, status in (('abort', 128 + signal.SIGABRT), ('fork', 0)):
        p, d = traced(['threads', how], out='o_' + how, env={'TRACER_TREE': 'separate'})
        tr = tc.load(d)
        tc.check_all(tr, exit_status=status)
        names = sorted(l.name for l in tr.locations)
        check(names == ['Master thread', 'Thread 1', 'Thread 2', 'Thread 3'], '%s: locations %r' % (how, names))
        per = sorted(enters(tr, 'outer', l) for l in tr.locations if l.name != 'Master thread')
        check(per == [2, 3, 4], '%s: outer per thread %r' % (how, per))
        for l in tr.locations:
            if l.name != 'Master thread':
                kinds = [e.kind for e in l.events]
                check(kinds.count('Enter') == kinds.count('Leave') and kinds, '%s: %s %r' % (how, l.name, kinds))
        if how == 'fork':
            forks = [x for x in os.listdir(WORK) if x.startswith('o_fork-fork')]
            check(len(forks) == 1, 'child archives %r' % forks)
            child = tc.load(os.path.join(WORK, forks[0]))
            tc.check_all(child, exit_status=0)
            check(len(child.locations) == 1 and enters(child, 'outer') == 2,
                  'child: %r, %d outer' % (child.locations, enters(child, 'outer')))
            # nothing of the parent's ended threads in the child's directory
            check(sorted(os.listdir(os.path.join(WORK, forks[0], 'traces'))) == ['0.def', '0.evt'],
                  'child files %r' % os.listdir(os.path.join(WORK, forks[0], 'traces')))


def case_running():
    p, d = traced(['running'])
    tr = tc.load(d)
    tc.check_all(tr, exit_status=5)     # open regions closed at exit: balanced
    th = tr.loc('Thread 1')
    check(enters(tr, 'spin', th) > 0, 'no spin events')
    check(th.events[-1].time <= tr.program_end.time, 'thread events after ProgramEnd')
    check(tr.master.events[-2].kind == 'Leave' and tr.master.events[-2].region == 'main_exit',
          'main_exit not closed before ProgramEnd: %r' % tr.master.events[-3:])


def case_thread_exit():
    p, d = traced(['thread_exit'])
    check(p.returncode == 7, 'exit %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=7)
    check(enters(tr, 'exiter') == 1 and enters(tr, 'join') == 1, 'regions')


def case__exit():
    p, d = traced(['_exit'])
    check(p.returncode == 9, 'exit %d' % p.returncode)
    tc.check_all(tc.load(d), exit_status=9)


def case__Exit():
    p, d = traced(['_Exit'])
    check(p.returncode == 10, 'exit %d' % p.returncode)
    tc.check_all(tc.load(d), exit_status=10)


def signal_default(name, sig):
    p, d = traced(['signal', name, 'default'])
    check(p.returncode == -sig, 'status %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + sig)
    check(enters(tr, 'signalled') == 1, 'signalled region')
    check(len(tr.locations) == 2, 'locations')
    summary(p.stderr)


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


def case_sigterm_malloc():
    # SIGTERM (default action) while 2 threads malloc/free: the full close
    # allocates, so a signal landing inside malloc must take the lock-free
    # path; every run must end by the signal and leave a readable archive
    # with both threads' events
    paths = {'full': 0, 'emergency': 0}
    for i in range(20):
        d = os.path.join(WORK, 'o%d' % i)
        ready = os.path.join(WORK, 'ready%d' % i)
        e = rc.clean_env()
        e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
        p = subprocess.Popen([PROG, 'malloc_storm', ready], env=e, cwd=WORK, stdout=subprocess.PIPE,
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
        d = os.path.join(WORK, 'a%d' % i)
        e = rc.clean_env()
        e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
        p = subprocess.Popen([os.environ['ALLOC_PROG']], env=e, cwd=WORK, stdout=subprocess.PIPE,
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
            d = os.path.join(WORK, '%s%s' % (args[0], smp))
            if kill_after:   # (killed once both storm threads run)
                args = args + [os.path.join(WORK, 'ready' + smp)]
            e = rc.clean_env()
            e.update({'LD_PRELOAD': FULL, 'TRACER_OUTPUT': d})
            if smp:
                e['TRACER_SAMPLING'] = smp
            p = subprocess.Popen([PROG] + args, env=e, cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
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
        d = os.path.join(WORK, args[0])
        p = run([PROG] + args, env={'LD_PRELOAD': pre, 'TRACER_OUTPUT': d})
        check(p.returncode == base.returncode == status and p.stdout == base.stdout,
              '%s: rc %d %r vs %d %r\n%s' % (args[0], p.returncode, p.stdout, base.returncode, base.stdout,
                                             p.stderr[-1500:]))
        check('ERROR' not in p.stderr and '==' not in p.stderr, '%s: ASan complains: %s' % (args[0], p.stderr))
        tc.check_all(tc.load(d), exit_status=0 if args[0] == 'exec' else status)
    # SEGV: ASan reports and exits 1 through its own exit: the death
    # callback writes the archive first
    base = run([PROG, 'segv'], env={'LD_PRELOAD': libs[0]})
    d = os.path.join(WORK, 'segv')
    p = run([PROG, 'segv'], env={'LD_PRELOAD': pre, 'TRACER_OUTPUT': d})
    check(p.returncode == base.returncode == 1 and p.stdout == base.stdout, 'segv: rc %d vs %d'
          % (p.returncode, base.returncode))
    check('AddressSanitizer: SEGV' in p.stderr, 'no ASan report: %s' % p.stderr)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=1)
    check(any('sanitizer report' in l for l in tracer_lines(p.stderr)), 'summary %r' % tracer_lines(p.stderr))


def case_exec():
    p, d = traced(['exec'], env={'TRACER_TREE': 'separate'})   # one archive per image (tests/tree: one)
    check(p.returncode == 3, 'exit %d' % p.returncode)
    first = tc.load(d)
    tc.check_all(first, exit_status=0)
    check(enters(first, 'before_exec') == 1 and enters(first, 'outer') == 2, 'first image events')
    second = tc.load(d + '.1')
    tc.check_all(second, exit_status=3)
    check(list(second.program_begin.ev.program_arguments) == ['basic'], 'second image arguments')
    check(enters(second, 'outer') == 10, 'second image events')
    check(any('writing to ' + d + '.1' in l for l in tracer_lines(p.stderr)), 'no .1 notice: %r' % p.stderr)


def case_fork():
    p, d = traced(['fork'], env={'TRACER_TREE': 'separate'})   # (tests/tree: one archive)
    parent = tc.load(d)
    tc.check_all(parent, exit_status=0)
    check(len(parent.locations) == 1 and enters(parent, 'outer') == 0, 'child events in the parent archive')
    forks = [x for x in os.listdir(WORK) if x.startswith('out-fork')]
    check(len(forks) == 1, 'child archives %r' % forks)
    child = tc.load(os.path.join(WORK, forks[0]))
    tc.check_all(child, exit_status=4)
    check(len(child.locations) == 2, 'child locations %r' % child.locations)
    check(enters(child, 'outer', child.master) == 4 and enters(child, 'before_fork') == 1, 'child events')
    check(child.master.group == 'Process ' + forks[0].split('fork')[-1], 'child group %r' % child.master.group)
    check(parent.master.group != child.master.group, 'same location group')


def case_quick_exit():
    # glibc's quick_exit ends through an internal _exit: 0-byte anchor
    p, d = traced(['quick_exit'])
    check(p.returncode == 11 and 'at_quick_exit handler' in p.stdout, 'rc %d %r' % (p.returncode, p.stdout))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=11)
    check(enters(tr, 'outer') == 2 and enters(tr, 'qe_handler') == 1, 'events (handler included)')
    summary(p.stderr)


def wait_archive(d, timeout=30):
    anchor = os.path.join(d, 'traces.otf2')
    for _ in range(timeout * 20):
        if os.path.exists(anchor) and os.path.getsize(anchor) > 0:
            time.sleep(0.2)
            return
        time.sleep(0.05)
    raise rc.CheckFailed('no archive %s after %d s' % (d, timeout))


def case_daemon():
    # daemon(): the parent ends through glibc's internal _exit (0-byte
    # anchor); now it writes its archive, and the child (the daemon) records
    # into its fork archive as after fork
    done = os.path.join(WORK, 'done_untraced')
    base = run([PROG, 'daemon', done])
    for _ in range(400):
        if os.path.exists(done):
            break
        time.sleep(0.05)
    d = os.path.join(WORK, 'out')
    p = run([PROG, 'daemon', os.path.join(WORK, 'done')], lib=LIB, env={'TRACER_OUTPUT': d, 'TRACER_TREE': 'separate'})
    check(p.returncode == base.returncode == 0 and p.stdout == base.stdout == 'mode daemon\n',
          'parent: %d %r vs %d %r' % (p.returncode, p.stdout, base.returncode, base.stdout))
    parent = tc.load(d)
    tc.check_all(parent, exit_status=0)
    check(enters(parent, 'outer') == 2 and enters(parent, 'before_daemon') == 1, 'parent events')
    forks = [x for x in os.listdir(WORK) if x.startswith('out-fork')]
    check(len(forks) == 1, 'child archives %r' % forks)
    wait_archive(os.path.join(WORK, forks[0]))
    child = tc.load(os.path.join(WORK, forks[0]))
    tc.check_all(child, exit_status=4)
    check(enters(child, 'outer') == 3, 'child events %d' % enters(child, 'outer'))
    check(os.path.exists(os.path.join(WORK, 'done')), 'the daemon did not run to its end')


def case_exec_fail():
    # an exec that fails left the archive closed and the rest untraced
    with open(os.path.join(WORK, 'badinterp.sh'), 'w') as fh:
        fh.write('#!/nonexistent/sh\necho hi\n')
    me = open(PROG, 'rb').read()
    # the program itself with e_machine changed (ENOEXEC), and with its
    # PT_INTERP path pointing nowhere (ENOENT)
    with open(os.path.join(WORK, 'foreign.elf'), 'wb') as fh:
        fh.write(me[:18] + b'\x28\x00' + me[20:])
    i = me.index(b'/lib64/ld-linux-x86-64.so.2') if b'/lib64/ld-linux-x86-64.so.2' in me else -1
    with open(os.path.join(WORK, 'noldso.elf'), 'wb') as fh:
        fh.write(me if i < 0 else me[:i] + b'/nonexistent/ld-linux.so' + me[i + 24:])
    for f in ('badinterp.sh', 'foreign.elf', 'noldso.elf'):
        os.chmod(os.path.join(WORK, f), 0o755)
    p, d = traced(['exec_fail'])
    check(p.returncode == 8 and p.stdout.count(': ') == 8, 'rc %d %r' % (p.returncode, p.stdout))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=8)
    check(enters(tr, 'outer') == 3, 'events after the failed execs: %d outer' % enters(tr, 'outer'))
    check(len(tracer_lines(p.stderr)) == 1, 'tracer lines %r' % tracer_lines(p.stderr))
    check(not os.path.exists(d + '.1'), 'a second archive')


def case_invalid_setting():
    p, d = traced(['basic'], env={'TRACER_BUFFER': 'lots', 'TRACER_FOO': '1'})
    lines = tracer_lines(p.stderr)
    bad = [l for l in lines if 'TRACER_BUFFER' in l]
    check(len(bad) == 1 and "'lots'" in bad[0] and '16M' in bad[0], 'invalid value line: %r' % lines)
    unk = [l for l in lines if 'TRACER_FOO' in l]
    check(len(unk) == 1, 'unknown variable line: %r' % lines)
    check(len(lines) == 3, 'tracer lines: %r' % lines)   # + summary
    tc.check_all(tc.load(d), exit_status=3)


def case_messages():
    # an echoed value's control characters are escaped (one line, no
    # terminal escapes); values outside the documented set are rejected
    p, d = traced(['basic'], env={'TRACER_CLOCK': 'tsc\n\x1b[31mred', 'TRACER_VERBOSE': '3'})
    lines = tracer_lines(p.stderr)
    check(all(l.startswith('tracer:') for l in p.stderr.splitlines()), 'raw newline in a message: %r' % p.stderr)
    check('\x1b' not in p.stderr, 'raw escape character in %r' % p.stderr)
    clk = [l for l in lines if 'TRACER_CLOCK' in l]
    check(len(clk) == 1 and "'tsc\\n\\x1b[31mred'" in clk[0], 'TRACER_CLOCK line %r' % lines)
    vb = [l for l in lines if 'TRACER_VERBOSE' in l]
    check(len(vb) == 1 and "'3'" in vb[0] and 'invalid' in vb[0], 'TRACER_VERBOSE=3: %r' % lines)
    summary(p.stderr)   # the default, 1, is used
    tc.check_all(tc.load(d), exit_status=3)
    # out of range or not the documented syntax: one line each
    for i, (var, val) in enumerate([('TRACER_BUFFER', '100K'), ('TRACER_VERBOSE', ' 2'),
                                    ('TRACER_SAMPLING', '0x10ms'), ('TRACER_SAMPLING_DEPTH', '+5'),
                                    ('TRACER_CHUNK', '32M'), ('TRACER_VERBOSE', '-1'),
                                    ('TRACER_MPI_POLLING', 'sometimes'), ('TRACER_IO_CHARS', 'each')]):
        p, d = traced(['basic'], out='bad%d' % i, env={var: val})
        lines = tracer_lines(p.stderr)
        check(len([l for l in lines if var in l and 'invalid' in l]) == 1, '%s=%r: %r' % (var, val, lines))
        tc.check_all(tc.load(d), exit_status=3)
    # TRACER_BUFFER below the default chunk: the chunk shrinks to fit it;
    # with an explicit larger TRACER_CHUNK it is rejected
    p, d = traced(['many', '20000'], out='small', env={'TRACER_BUFFER': '512K', 'TRACER_DURABLE': 'off'})
    check(len(tracer_lines(p.stderr)) == 1, 'TRACER_BUFFER=512K: %r' % tracer_lines(p.stderr))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(enters(tr, 'outer') == 20000 and tr.count('BufferFlush') >= 2, 'small buffer: %d outer, %d flushes'
          % (enters(tr, 'outer'), tr.count('BufferFlush')))
    p, d = traced(['basic'], out='small2', env={'TRACER_BUFFER': '512K', 'TRACER_CHUNK': '1M'})
    bad = [l for l in tracer_lines(p.stderr) if 'TRACER_BUFFER' in l]
    check(len(bad) == 1 and 'TRACER_CHUNK' in bad[0], 'BUFFER < explicit CHUNK: %r' % p.stderr)
    # every value the README's settings table gives (default and examples) is accepted
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'README.md')
    vals = []
    for row in open(readme).read().splitlines():
        cols = re.split(r'(?<!\\)\|', row)
        m = re.match(r' `(TRACER_[A-Z_]+)` $', cols[1]) if len(cols) == 6 else None
        if not m or m.group(1) in ('TRACER_OUTPUT', 'TRACER_FILTER', 'TRACER_METRICS'):
            continue
        for tok in re.findall(r'`([^`]+)`', cols[3] + cols[4]):
            if ' ' not in tok and '_' not in tok and not tok.startswith('-'):
                vals.append((m.group(1), tok))
    check(len(vals) > 20, 'README table values %r' % vals)
    for i, (var, val) in enumerate(vals):
        p = run([PROG, 'basic'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(WORK, 'r%d' % i), var: val})
        check(p.returncode == 3 and not [l for l in tracer_lines(p.stderr) if 'invalid' in l],
              'README value %s=%s: %r' % (var, val, p.stderr))
    print('README values accepted: %s' % ' '.join('%s=%s' % v for v in vals))


FUZZ_VALUES = {
    'TRACER_BUFFER': ['16M', '512K', '256K', '100K', '1G', 'lots', '-1', '0', '1T', '2T', '64MiB', ' 1M',
                      '99999999999999999999', '1.5M'],
    'TRACER_CHUNK': ['1M', '256K', '16M', '32M', '0', 'x', '512kb'],
    'TRACER_ON_FULL': ['flush', 'stop', 'STOP', 'maybe', ''],
    'TRACER_PTHREAD': ['on', 'off', '0', 'yes', 'maybe'],
    'TRACER_MPI': ['on', 'off', '2'],
    'TRACER_FILTER': ['@filter', '/dev/zero', '/dev/stdin', '@dir', '/nonexistent', ''],
    'TRACER_VERBOSE': ['0', '1', '2', '3', '-1', 'quiet', 'x\x1b[31m', '1\n2'],
    'TRACER_CLOCK': ['tsc', 'monotonic', 'Monotonic', 'hpet'],
    'TRACER_SAMPLING': ['off', '1ms', '250us', '1000Hz', '0', '1ns', 'inf', '-1ms', '1e3us', '0x10ms'],
    'TRACER_SAMPLING_DEPTH': ['1', '64', '4096', '0', '5000', 'x'],
    'TRACER_SAMPLING_UNWIND': ['cfi', 'libunwind', 'check', 'CFI', ''],
    'TRACER_CALLERS': ['on', 'off', 'x'],
    'TRACER_METRICS': ['', 'rusage::minflt', 'bogus', 'rusage::utime,rusage::majflt', ',,,'],
    'TRACER_DETAILED_STATES': ['0', '5', 'on', '-3', 'x'],
    'TRACER_TYPO': ['1'],
}


def case_settings_fuzz():
    """Bounded settings fuzz (fixed seed): 240 combinations of TRACER_*
    values, good and bad, with the full library on two small programs.
    Traced and untraced stdout and exit status are identical, every tracer:
    line is one line without control characters, and the archive is
    readable whenever TRACER_OUTPUT names a usable directory."""
    import random
    rnd = random.Random(18)
    filt = os.path.join(WORK, 'filter.txt')
    with open(filt, 'w') as fh:
        fh.write('-filtered_me\n')
    os.makedirs(os.path.join(WORK, 'adir'))
    modes = {'basic': ([PROG, 'basic'], 3), 'threads': ([PROG, 'threads'], 0)}
    base = {m: run(a) for m, (a, _) in modes.items()}
    t0 = time.time()
    n = 200
    for i in range(n):
        mode = rnd.choice(sorted(modes))
        args, status = modes[mode]
        env = {}
        for var in rnd.sample(sorted(FUZZ_VALUES), rnd.randint(1, 6)):
            v = rnd.choice(FUZZ_VALUES[var])
            env[var] = {'@filter': filt, '@dir': os.path.join(WORK, 'adir')}.get(v, v)
        out = os.path.join(WORK, 'f%d' % i)
        good_out = rnd.random() < 0.8
        env['TRACER_OUTPUT'] = out if good_out else rnd.choice(['', '/dev/null/x', 'a\nb' * 3000, '/proc/x'])
        e = rc.clean_env()
        e.update(env)
        e['LD_PRELOAD'] = FULL
        try:
            p = subprocess.run(args, env=e, cwd=WORK, input='stdin data\n', stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise rc.CheckFailed('combination %d %r: hangs' % (i, env))
        what = 'combination %d (%s) %r' % (i, mode, env)
        check(p.returncode == base[mode].returncode == status and p.stdout == base[mode].stdout,
              '%s: rc %d %r\n%s' % (what, p.returncode, p.stdout, p.stderr[-2000:]))
        for l in p.stderr.splitlines():
            check(l.startswith('tracer:') or not l, '%s: stderr line %r' % (what, l))
            check(not any(ord(c) < 32 or ord(c) == 127 for c in l), '%s: control character in %r' % (what, l))
        if good_out and os.path.isdir(out):
            tr = tc.load(out)
            tc.check_all(tr, exit_status=status)
        elif good_out:
            raise rc.CheckFailed('%s: no archive\n%s' % (what, p.stderr))
        shutil.rmtree(out, ignore_errors=True)
    print('%d combinations in %.1f s' % (n, time.time() - t0))


def case_unwritable_output():
    e = {'TRACER_OUTPUT': '/dev/null/archive'}
    base = run([PROG, 'basic'])
    p = run([PROG, 'basic'], lib=LIB, env=e)
    check(p.returncode == base.returncode and p.stdout == base.stdout, 'program changed')
    lines = tracer_lines(p.stderr)
    check(len(lines) == 1 and '/dev/null/archive' in lines[0] and 'untraced' in lines[0], 'lines %r' % lines)


def case_full_disk():
    """A full disk: the program runs unharmed (same output and exit status)
    and one `tracer: error:` line names the file and 'No space left on
    device'. The archive lives on a 64 KiB tmpfs (needs root; skipped,
    exit 77, where mounting is not permitted)."""
    mnt = os.path.join(WORK, 'tiny')
    os.makedirs(mnt)
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        print('SKIP full_disk: cannot mount a tmpfs here')
        sys.exit(77)
    try:
        base = run([PROG, 'churn'])
        p = run([PROG, 'churn'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(mnt, 'a')})
        check(p.returncode == base.returncode and p.stdout == base.stdout,
              'program changed: rc %d vs %d' % (p.returncode, base.returncode))
        errs = [l for l in tracer_lines(p.stderr) if l.startswith('tracer: error:')]
        check(len(errs) == 1, 'want one tracer: error line, got %r' % tracer_lines(p.stderr))
        check('No space left on device' in errs[0] and mnt in errs[0], 'error line %r' % errs[0])
        # what was lost, plainly, and no normal-looking summary after it
        check(len(tracer_lines(p.stderr)) == 1, 'more than the error line: %r' % tracer_lines(p.stderr))
        check(' NOT written' in errs[0] and 'events of' in errs[0] and 'lost' in errs[0], 'line %r' % errs[0])
        check('(first: success)' not in p.stderr, 'first error: success')
        # the crash path says it too
        base = run([PROG, 'abort', '20000'])
        p = run([PROG, 'abort', '20000'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(mnt, 'b')})
        check(p.returncode == base.returncode == -signal.SIGABRT, 'abort: rc %d' % p.returncode)
        lines = tracer_lines(p.stderr)
        check(len(lines) == 1 and lines[0].startswith('tracer: error:') and 'INCOMPLETE' in lines[0],
              'crash path on a full disk: %r' % lines)
    finally:
        subprocess.run(['umount', mnt])


def case_nofile_limit():
    # ulimit -n 24 with 24 threads all flushing at once: the tracer
    # kept up to 64 event files open (EMFILE: write errors, events lost, the
    # program's own open() could fail); now no descriptor is kept between flushes
    import resource

    def lim():
        resource.setrlimit(resource.RLIMIT_NOFILE, (24, 24))
    env = {'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K', 'TRACER_DURABLE': 'off'}   # flushes
    p, d = traced(['wide', '24', '5000'], env=env, preexec=lim)
    check(p.stdout == 'mode wide\nopen ok\n', 'program: %r' % p.stdout)
    check(len(tracer_lines(p.stderr)) == 1 and summary(p.stderr), 'tracer lines: %r' % tracer_lines(p.stderr))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    per = [enters(tr, 'outer', l) for l in tr.locations if l.name != 'Master thread']
    check(len(per) == 24 and set(per) == {5000}, 'outer per thread %r' % per)
    check(tr.count('BufferFlush') >= 24, 'BufferFlush %d: no flush, the test does not test' % tr.count('BufferFlush'))


def case_filter():
    f = os.path.join(WORK, 'filter.txt')
    with open(f, 'w') as fh:
        fh.write('# comment\n-filtered_me\nexclude in*\n+inner\n\n')
    p, d = traced(['basic'], env={'TRACER_FILTER': f})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(enters(tr, 'filtered_me') == 0, 'filtered region recorded')
    check(enters(tr, 'inner') == 10 and enters(tr, 'outer') == 10, 'last match must win')
    p = run([PROG, 'basic'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(WORK, 'o2'),
                                           'TRACER_FILTER': os.path.join(WORK, 'missing')})
    check(p.returncode == 3 and any('missing' in l for l in tracer_lines(p.stderr)), 'missing filter file')


def case_filter_unsafe():
    # TRACER_FILTER must be a regular file of at most 1 MiB, read
    # without blocking: /dev/zero hung before main, /dev/stdin ate the
    # program's input, a directory gave no warning. Each: one tracer: line,
    # no filter, the program unharmed (its stdin included)
    fifo = os.path.join(WORK, 'fifo')
    os.mkfifo(fifo)
    big = os.path.join(WORK, 'big')
    with open(big, 'w') as fh:
        fh.write(('-x\n' * 400000))
    cases = [('/dev/zero', 'character device'), ('/dev/stdin', 'FIFO'), (fifo, 'FIFO'), (WORK, 'directory'),
             (big, 'larger than 1 MiB'), ('/dev/null', 'character device')]
    for i, (f, why) in enumerate(cases):
        d = os.path.join(WORK, 'o%d' % i)
        for prog in ([PROG, 'basic'], ['cat']):
            e = rc.clean_env()
            e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
            base = subprocess.run(prog, env=rc.clean_env(), input='program input\n', stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, universal_newlines=True, timeout=30, cwd=WORK)
            e['TRACER_FILTER'] = f
            try:
                p = subprocess.run(prog, env=e, input='program input\n', stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True, timeout=30, cwd=WORK)
            except subprocess.TimeoutExpired:
                raise rc.CheckFailed('TRACER_FILTER=%s: %s hangs' % (f, prog[0]))
            check(p.returncode == base.returncode and p.stdout == base.stdout,
                  'TRACER_FILTER=%s %s: rc %d %r vs %d %r' % (f, prog[0], p.returncode, p.stdout,
                                                            base.returncode, base.stdout))
            lines = [l for l in tracer_lines(p.stderr) if 'TRACER_FILTER' in l]
            check(len(lines) == 1 and why in lines[0] and 'no filter' in lines[0],
                  'TRACER_FILTER=%s: %r' % (f, tracer_lines(p.stderr)))
            if prog[0] == PROG:
                tr = tc.load(d)
                tc.check_all(tr, exit_status=3)
                check(enters(tr, 'filtered_me') == 10, 'TRACER_FILTER=%s: a filter was applied' % f)
            shutil.rmtree(d, ignore_errors=True)
    # a regular file still works, and one given as /dev/stdin (redirected
    # from a file: a fresh open, the program's offset untouched)
    f = os.path.join(WORK, 'filter.txt')
    with open(f, 'w') as fh:
        fh.write('-filtered_me\n')
    e = rc.clean_env()
    e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': os.path.join(WORK, 'reg'), 'TRACER_FILTER': '/dev/stdin'})
    with open(f) as fin:
        p = subprocess.run(['cat'], env=e, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30, cwd=WORK)
    check(p.stdout == '-filtered_me\n' and p.returncode == 0, 'cat < file: %r' % p.stdout)
    check(not [l for l in tracer_lines(p.stderr) if 'TRACER_FILTER' in l], 'regular stdin: %r' % p.stderr)


def case_verbose():
    p, d = traced(['basic'], env={'TRACER_VERBOSE': '0'})
    check(tracer_lines(p.stderr) == [], 'TRACER_VERBOSE=0 printed %r' % p.stderr)
    tc.check_all(tc.load(d), exit_status=3)
    p, d = traced(['basic'], out='o2', env={'TRACER_VERBOSE': '2'})
    check(len(tracer_lines(p.stderr)) > 2, 'no debug output')


def case_existing_output():
    p1, d = traced(['basic'])
    p2, _ = traced(['basic'])
    check(summary(p2.stderr).group(1) == d + '.1', 'second run: %r' % p2.stderr)
    check(any('already holds an archive' in l for l in tracer_lines(p2.stderr)), 'no notice')
    tc.check_all(tc.load(d), exit_status=3)
    tc.check_all(tc.load(d + '.1'), exit_status=3)


def case_default_dir():
    p = run([PROG, 'basic'], lib=LIB)
    m = summary(p.stderr)
    check(re.match(r'tracer-core_prog-\d{8}-\d{6}-\d+$', m.group(1)), 'default name %r' % m.group(1))
    tc.check_all(tc.load(os.path.join(WORK, m.group(1))), exit_status=3)


def case_on_full_stop():
    # 40000 x 6 records ~ 3.5 MB > 256K: the master location stops, the rest is counted
    p, d = traced(['many', '40000'], env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                         'TRACER_ON_FULL': 'stop'})
    m = re.search(r'(\d+) events dropped', summary(p.stderr).string)
    check(m and int(m.group(1)) > 100000, 'no dropped count: %r' % p.stderr)
    tr = tc.load(d)
    # ProgramEnd is never dropped: recording resumes (ON) for the last records;
    # the regions open at the stop get their Leave: balanced
    tc.check_all(tr, exit_status=0)
    mo = [str(e.ev.measurement_mode) for e in tr.master.events if e.kind == 'MeasurementOnOff']
    check(len(mo) == 2 and 'OFF' in mo[0] and 'ON' in mo[1], 'MeasurementOnOff: %r' % mo)
    check(tr.master.events[-1].kind == 'ProgramEnd', 'last master event %r' % tr.master.events[-1])
    check(enters(tr, 'outer') + int(m.group(1)) // 3 > 30000, 'recorded + dropped too small')
    # threads stopped inside nested regions, left and entered others while
    # stopped, and still inside some at the end
    p, d = traced(['threads_stop', '30000'], out='o2', env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                                          'TRACER_ON_FULL': 'stop'})
    check('dropped' in summary(p.stderr).string, 'nothing dropped: the test does not test')
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    for l in tr.locations:
        kinds = [e.kind for e in l.events]
        check(kinds.count('Enter') == kinds.count('Leave'), '%s: %d Enter, %d Leave' % (
            l.name, kinds.count('Enter'), kinds.count('Leave')))
    # the crash path too (no flush there: one chunk more in memory): the
    # stopped master gets its Leaves and ProgramEnd
    p, d = traced(['abort', '40000'], out='o3', env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                                  'TRACER_ON_FULL': 'stop'})
    check(p.returncode == -signal.SIGABRT, 'abort: %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + signal.SIGABRT)
    mo = [str(e.ev.measurement_mode) for e in tr.master.events if e.kind == 'MeasurementOnOff']
    check(len(mo) == 2 and 'ON' in mo[1], 'abort: the master did not stop: %r' % mo)


def case_on_full_flush():
    p, d = traced(['many', '40000'], env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                          'TRACER_DURABLE': 'off'})   # the flush writer
    check('dropped' not in summary(p.stderr).string, 'dropped with flush')
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(tr.count('BufferFlush') >= 5, 'BufferFlush: %d' % tr.count('BufferFlush'))
    check(enters(tr, 'outer') == 40000 and enters(tr, 'filtered_me') == 40000, 'events lost')


def case_clock_monotonic():
    p, d = traced(['basic'], env={'TRACER_CLOCK': 'monotonic'})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(tr.clock.timer_resolution == 1000000000, 'resolution %d' % tr.clock.timer_resolution)


def case_churn():
    # exit / _exit while 4 threads keep creating and joining short threads
    for i, extra in enumerate([[], ['_exit'], [], ['_exit']]):
        p, d = traced(['churn'] + extra, out='o%d' % i)
        check(p.returncode == 3, 'exit %d' % p.returncode)
        tr = tc.load(d)
        tc.check_all(tr, exit_status=3)
        # the program exits once 20 short threads were joined: each of
        # them is a whole location (5 x outer/inner/filtered_me: 30 events)
        whole = sum(1 for l in tr.locations if len(l.events) == 30)
        check(whole >= 20, 'run %d: %d whole short-thread locations of %d' % (i, whole, len(tr.locations)))
        names = set(l.name for l in tr.locations)
        check(len(names) == len(tr.locations), 'duplicate location names')


def case_exit_inside():
    p, d = traced(['exit_inside'])
    check(p.returncode == 6, 'exit %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=6)
    check(enters(tr, 'outer') == 3, 'events')
    check(any('emergency' in l for l in tracer_lines(p.stderr)), 'no emergency note: %r' % p.stderr)


def case_chdir():
    # relative TRACER_OUTPUT: the archive stays where it was when the program started
    p, d = traced(['chdir'], env={'TRACER_OUTPUT': 'rel'})
    check(summary(p.stderr).group(1) == 'rel', 'summary path %r' % p.stderr)
    tr = tc.load(os.path.join(WORK, 'rel'))
    tc.check_all(tr, exit_status=0)
    check(enters(tr, 'outer') == 3, 'events')


def case_lazy_init():
    # regions recorded from .preinit_array, before libtracer's constructor
    p, d = traced(['basic'], env={'CORE_PREINIT': '1'})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(tr.master.events[0].kind == 'ProgramBegin', 'ProgramBegin not first')
    check(enters(tr, 'preinit') == 1 and enters(tr, 'outer') == 10, 'preinit region')


def traced_mpi(prog_var, name):
    """The program named by the environment variable prog_var on 2 ranks
    (MPIRUN) under the full tracer into WORK/name; mpirun must succeed.
    Returns (its CompletedProcess, the archive directory)."""
    d = os.path.join(WORK, name)
    p = rc.run_mpi(os.environ.get('MPIRUN'), 2, [os.environ.get(prog_var)], ['TRACER_OUTPUT=' + d], lib=FULL,
                   timeout=120, cwd=WORK)
    check(p.returncode == 0, 'mpirun: %d %s' % (p.returncode, p.stderr[-2000:]))
    return p, d


def case_mpi_unify():
    # rank-specific definitions: the unified archive must map every rank's ids
    p, d = traced_mpi('MPI_PROG', 'mpi')
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    groups = sorted(set(l.group for l in tr.locations))
    check(groups == ['MPI Rank 0', 'MPI Rank 1'], 'location groups %r' % groups)
    # (unified archive: sequential location ids; the rank is the location group's)
    r1 = [l for l in tr.locations if l.group == 'MPI Rank 1']
    sends = sum(enters(tr, 'MPI_Send', l) for l in r1)
    recvs = sum(enters(tr, 'MPI_Recv', l) for l in tr.locations if l.group == 'MPI Rank 0')
    check(sends == 1 and recvs == 1, 'MPI_Send on rank 1 / MPI_Recv on rank 0: %d %d' % (sends, recvs))
    check(tr.count('MpiSend') == 1 and tr.count('MpiRecv') == 1, 'message records')
    check(any(ev.kind == 'ThreadBegin' for l in r1 for ev in l.events), 'rank 1 thread')
    # one COMM_LOCATIONS group per paradigm (union of the ranks' groups);
    # each process's pthread contingent: a COMM_GROUP of its own locations
    cl = {}
    for g in tr.groups:
        if 'COMM_LOCATIONS' in str(g.group_type):
            check(str(g.paradigm) not in cl, 'two COMM_LOCATIONS groups for %s' % g.paradigm)
            cl[str(g.paradigm)] = [m._ref for m in g.members]
    pt = [k for k in cl if 'PTHREAD' in k]
    check(len(pt) == 1 and sorted(cl[pt[0]]) == sorted(l.id for l in tr.locations), 'pthread locations %r' % cl)
    pcomms = [c for c in tr.comms if c.name == 'pthread threads']
    check(len(pcomms) == 2, 'pthread comms %r' % pcomms)
    for c in pcomms:
        ranks = set(m.group.name for m in c.group.members)
        check(len(ranks) == 1, 'pthread comm spans processes: %r' % (list(c.group.members),))
    # each rank also has a standalone archive
    for r in (0, 1):
        one = tc.load(os.path.join(d, 'ranks', 'rank%d.otf2' % r))
        tc.check_all(one, exit_status=0)
        own = [l for l in one.locations if l.group == 'MPI Rank %d' % r]
        check(own and all(l.id >> 32 == r for l in own), 'rank archive %d: %r' % (r, one.locations))
        # other ranks' locations referenced by MPI groups: defined, empty
        check(all(not l.events for l in one.locations if l not in own), 'foreign locations with events')


def case_mpi_vt_groups():
    # definitions made by module fini hooks (VT class REGIONS groups) must be
    # in the unified archive: MPI_Finalize packs them (tr_modules_fini)
    p, d = traced_mpi('MPI_VT_PROG', 'mpivt')
    check(sorted(p.stdout.split('\n')) == ['', 'rank 0 done', 'rank 1 done'], 'stdout %r' % p.stdout)
    anchor = os.path.join(d, 'traces.otf2')
    check(os.path.exists(anchor), 'no unified archive')
    out = tc.otf2_print(anchor, '-G')
    gl = [l for l in out.splitlines() if l.startswith('GROUP') and 'CoreSolver' in l]
    check(len(gl) == 1, 'CoreSolver group lines in otf2-print -G: %r' % gl)
    check('REGIONS' in gl[0], 'group type: %r' % gl[0])
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    g = [x for x in tr.groups if x.name == 'CoreSolver']
    check(len(g) == 1, 'groups %r' % [x.name for x in tr.groups])
    names = sorted(m.name for m in g[0].members)
    check(names == ['halo_exchange', 'solve_step'], 'members %r' % names)
    for r in (0, 1):
        locs = [l for l in tr.locations if l.group == 'MPI Rank %d' % r]
        n = sum(enters(tr, 'solve_step', l) for l in locs)
        check(n == 3, 'rank %d: %d solve_step' % (r, n))


def case_full_library():
    p, d = traced(['threads'], lib=FULL)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(len(tr.locations) == 4, 'locations %r' % tr.locations)
    p, d = traced(['signal', 'TERM', 'default'], out='o2', lib=FULL)
    tc.check_all(tc.load(d), exit_status=128 + signal.SIGTERM)


def case_dynsym():
    """preload/core/dynsym.c, our own look-up of the real functions in the
    start-up objects' hash tables, against dlsym for every name the
    library resolves (TRACER_TEST_DYNSYM=check): Debian programs, a
    threaded one, Python, and a program whose malloc comes from another
    preloaded library (jemalloc before us, tcmalloc after us)."""
    jem = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'
    tcm = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'
    progs = [(['/bin/true'], None), (['sh', '-c', 'echo shell; ls / >/dev/null'], None),
             (['perl', '-e', 'print "perl\\n"'], None), (['python3', '-S', '-c', 'print(6 * 7)'], None),
             ([PROG, 'threads'], None), ([PROG, 'basic'], jem + ' ' + FULL), ([PROG, 'basic'], FULL + ' ' + tcm)]
    summary_re = re.compile(r'^tracer: warning: dynsym check: (\d+) names compared with dlsym, (\d+) differ$')
    for i, (args, pre) in enumerate(progs):
        if pre and not all(os.path.exists(x) for x in pre.split()):
            print('skipped (not installed): %s' % pre)
            continue
        base = run(args)
        e = {'TRACER_OUTPUT': os.path.join(WORK, 'dyn%d' % i), 'TRACER_TEST_DYNSYM': 'check'}
        if pre:
            e['LD_PRELOAD'] = pre
        p = run(args, lib=FULL, env=e)
        check(p.returncode == base.returncode and p.stdout == base.stdout,
              '%s: exit %d stdout %r traced, %d %r untraced' % (args, p.returncode, p.stdout, base.returncode,
                                                                 base.stdout))
        check(rc.without_tracer_lines(p.stderr) == rc.without_tracer_lines(base.stderr),
              '%s: stderr less tracer: lines differs: %r vs %r' % (args, p.stderr[-300:], base.stderr[-300:]))
        tc.check_all(tc.load(e['TRACER_OUTPUT']), exit_status=base.returncode)
        lines = tracer_lines(p.stderr)
        bad = [l for l in lines if 'dynsym check:' in l and not summary_re.match(l)]
        check(not bad, '%s: answers differ from dlsym:\n%s' % (args, '\n'.join(bad)))
        sums = [summary_re.match(l) for l in lines if summary_re.match(l)]
        check(sums and int(sums[0].group(1)) >= 100 and int(sums[0].group(2)) == 0,
              '%s: no summary of at least 100 names, 0 differing: %r' % (args, lines))
        print('%s: %s names, as dlsym' % (' '.join(args)[:40], sums[0].group(1)))


def case_tracer_run():
    d = os.path.join(WORK, 'run')
    e = rc.clean_env()
    e['TRACER_LIB'] = LIB
    p = subprocess.run([TRACER_RUN, '-o', d, '--buffer', '4M', '--clock', 'monotonic', '-q', '--', PROG, 'basic'],
                       env=e, cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 3 and p.stdout == 'mode basic\n', 'tracer-run: %d %r %r' % (p.returncode, p.stdout, p.stderr))
    check(tracer_lines(p.stderr) == [], '-q printed %r' % p.stderr)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(tr.clock.timer_resolution == 1000000000, '--clock ignored')
    p = subprocess.run([TRACER_RUN, '--help'], stdout=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 0 and '--on-full' in p.stdout, 'help')
    p = subprocess.run([TRACER_RUN, '--on-full', 'maybe', PROG], stderr=subprocess.PIPE, universal_newlines=True,
                       env=e)
    check(p.returncode == 2 and 'on-full' in p.stderr, 'bad option accepted')


def main():
    case = sys.argv[1]
    fn = globals().get('case_' + case)
    if not fn:
        print('unknown case %s' % case)
        return 2
    global WORK
    WORK = os.path.join(WORK, case)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    try:
        fn()
    except (rc.CheckFailed, tc.CheckError) as e:
        print('FAIL %s: %s' % (case, e))
        return 1
    print('ok %s' % case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
