# SPDX-License-Identifier: BSD-3-Clause
"""tests/core: programs that close the tracer's descriptors or run under
resource limits (issues 9 and 18). The tracer never writes into a file the
program owns, never kills it through RLIMIT_FSIZE, and leaves an archive the
reference reader opens.

usage: test_limits.py CASE   (environment as test_core.py: FULL_LIB, FD_PROG,
                              WORK, OTF2_PRINT)
"""
import glob
import os
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

FULL = os.environ.get('FULL_LIB')
PROG = os.environ.get('FD_PROG')
WORK = os.path.join(os.environ.get('WORK', '/tmp/tracer-core-tests'), 'limits')


ck = rc.Checker(stop=True)   # a case stops at its first failed check
check = ck.expect


def run(args, traced, out=None, env=None, preexec=None, cwd=None, timeout=120):
    e = rc.clean_env({'LD_PRELOAD': FULL, 'TRACER_OUTPUT': out} if traced else None)
    e.update(env or {})
    return subprocess.run(args, env=e, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, preexec_fn=preexec)


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def lock_count(tr):
    return sum(1 for loc in tr.locations for e in tr.events(loc) if type(e.ev).__name__ == 'ThreadAcquireLock')


def compare(name, mode, env=None, preexec=None, files=('data.txt',)):
    """Untraced and traced runs of fd_prog MODE in fresh directories:
    identical stdout, stderr (less tracer: lines), exit status and files."""
    base = fresh(name + '-untraced')
    trd = fresh(name + '-traced')
    out = os.path.join(WORK, name + '-archive')
    shutil.rmtree(out, ignore_errors=True)
    u = run([PROG, mode, os.path.join(base, 'data.txt')], False, env=env, preexec=preexec, cwd=base)
    t = run([PROG, mode, os.path.join(trd, 'data.txt')], True, out, env=env, preexec=preexec, cwd=trd)
    sys.stdout.write(t.stdout)
    sys.stderr.write(t.stderr)
    rc.compare(ck, u, t)
    check(sorted(os.listdir(trd)) == sorted(os.listdir(base)), 'files %r vs %r'
          % (sorted(os.listdir(trd)), sorted(os.listdir(base))))
    for f in os.listdir(base):
        a = open(os.path.join(base, f), 'rb').read()
        b = open(os.path.join(trd, f), 'rb').read()
        check(a == b, '%s: %d bytes traced, %d untraced (the tracer wrote into the program\'s file)'
              % (f, len(b), len(a)))
    return t, out


def case_closefds():
    """close_range(3, ~0U) then the program's own file: the tracer's chunks
    (1 MiB buffer, 256 KiB chunks: several flushes after the close) never
    land in it, and no lock event is lost."""
    t, out = compare('closefds', 'closefds', env={'TRACER_BUFFER': '1M', 'TRACER_CHUNK': '256K'})
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    n = lock_count(tr)
    check(n == 5 * 60000, '%d lock acquisitions in the archive, want %d' % (n, 5 * 60000))
    check(not [l for l in rc.tracer_lines(t.stderr) if 'error' in l], 'errors: %r' % rc.tracer_lines(t.stderr))


def case_closefds_fork():
    """fork, then the child closes every descriptor and writes its own file."""
    t, out = compare('closefds_fork', 'spawn', env={'TRACER_BUFFER': '1M', 'TRACER_CHUNK': '256K',
                                                     'TRACER_TREE': 'separate'})
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    kids = [d for d in os.listdir(WORK) if d.startswith('closefds_fork-archive-fork')]
    check(kids, 'no child archive')
    ktr = tc.load(os.path.join(WORK, kids[0]))
    tc.check_all(ktr, exit_status=0)
    check(lock_count(ktr) == 60000, 'child: %d lock acquisitions, want 60000' % lock_count(ktr))


def case_stderrfile():
    """The program closes its stderr and opens its own file, which gets
    number 2: the tracer's exit line goes to tracer.log in the archive
    directory, never into the program's file."""
    t, out = compare('stderrfile', 'stderrfile')
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    log = os.path.join(out, 'tracer.log')
    check(os.path.exists(log) and 'archive' in open(log).read(), 'no summary in %s' % log)


def case_fsize():
    """ulimit -f 100 (KiB): untraced the program exits 0; traced too (no
    SIGXFSZ from the tracer's writes), with one line naming the file and
    the error, and an archive the reference reader opens."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100 * 1024, 100 * 1024))
    out = os.path.join(WORK, 'fsize-archive')
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(WORK, exist_ok=True)
    u = run([PROG, 'locks', '100000'], False, preexec=limit)
    t = run([PROG, 'locks', '100000'], True, out, env={'TRACER_CHUNK': '256K'}, preexec=limit)
    sys.stderr.write(t.stderr)
    check(u.returncode == 0, 'untraced exit %d' % u.returncode)
    check(t.returncode == 0, 'traced exit %d (want 0: the tracer must not die by SIGXFSZ)' % t.returncode)
    check(t.stdout == u.stdout, 'stdout differs')
    lines = rc.tracer_lines(t.stderr)
    check(any('File too large' in l for l in lines), 'no line about the file size limit: %r' % lines)
    tr = tc.load(out)
    tc.otf2_print(tr.anchor)
    check(tr.program_begin is not None, 'no ProgramBegin')


def sigterm_soak(name, runs, env, preload_first=None):
    """SIGTERM at seeded random moments while four threads are in malloc:
    death by SIGTERM within 20 s every time (no deadlock), and an archive
    the reference reader opens with ProgramEnd 143."""
    import random
    import signal
    import time
    rnd = random.Random(1234)
    for i in range(runs):
        out = os.path.join(WORK, '%s-%d' % (name, i))
        shutil.rmtree(out, ignore_errors=True)
        e = {k: v for k, v in os.environ.items() if not k.startswith('TRACER_') and k != 'LD_PRELOAD'}
        e['LD_PRELOAD'] = ((preload_first + ' ') if preload_first else '') + FULL
        e['TRACER_OUTPUT'] = out
        e.update(env)
        p = subprocess.Popen([PROG, 'mallocloop'], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(b'ready' in p.stdout.readline(), '%s run %d: no start' % (name, i))
        time.sleep(rnd.uniform(0.05, 0.5))
        _, err = rc.term_wait(p, 20, '%s run %d: still running 20 s after SIGTERM (deadlock)' % (name, i))
        check(p.returncode == -signal.SIGTERM, '%s run %d: exit %d, want death by SIGTERM'
              % (name, i, p.returncode))
        # check_all on otf2-print's output: with jemalloc, whose own locks are traced, up to 6M events a run
        # (the Python reader took 25 s for one)
        n = tc.check_all_print(out, exit_status=143, allow_open=True)
        print('%s run %d: %d events' % (name, i, sum(n.values())))


def case_sigterm_sampling():
    """SIGTERM on top of the SIGPROF handler that interrupted malloc (issue
    18: the decision looked at the SIGPROF handler's pc, took the full close
    and deadlocked in malloc)."""
    sigterm_soak('sigterm_sampling', 8, {'TRACER_SAMPLING': '250us'})


def case_sigterm_jemalloc():
    """The same with jemalloc preloaded before the tracer, with sampling."""
    jm = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'
    if not os.path.exists(jm):
        print('SKIP: no libjemalloc2')
        sys.exit(77)
    sigterm_soak('sigterm_jemalloc', 6, {'TRACER_SAMPLING': '250us'}, preload_first=jm)


def same_run(name, argv, wrap=None, lock_events=None):
    """argv untraced and traced (wrap: a command put in front, e.g.
    valgrind, which gets the tracer preloaded too): same stdout, same
    status, no sanitizer or valgrind report, a readable archive."""
    out = os.path.join(WORK, name + '-archive')
    for d in glob.glob(out + '*'):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(WORK, exist_ok=True)
    cmd = (wrap or []) + argv
    u = run(cmd, False)
    t = run(cmd, True, out)
    sys.stderr.write(t.stderr)
    check(t.returncode == u.returncode == 0, 'exit %d traced, %d untraced' % (t.returncode, u.returncode))
    rc.compare(ck, u, t)
    # the program's archive: the one with the most locations (a wrapper
    # such as valgrind's launcher writes a small one of its own)
    best = None
    for d in glob.glob(out + '*'):
        tr = tc.load(d)
        if best is None or len(tr.locations) > len(best.locations):
            best = tr
    check(best is not None, 'no archive')
    tc.check_all(best, exit_status=0)
    if lock_events is not None:
        check(lock_count(best) == lock_events, '%d lock acquisitions, want %d' % (lock_count(best), lock_events))


def case_tsan():
    """A ThreadSanitizer program traced: no report, same output, full archive."""
    same_run('tsan', [os.environ['TSAN_PROG']], lock_events=60000)


def case_valgrind():
    """valgrind (memcheck) of a traced program: no error reported
    (--error-exitcode), same output, full archive."""
    vg = shutil.which('valgrind')
    if not vg:
        print('SKIP: no valgrind')
        sys.exit(77)
    same_run('valgrind', [PROG, 'locks', '3000'], wrap=[vg, '-q', '--error-exitcode=99'], lock_events=6000)


CASES = {k[5:]: v for k, v in globals().items() if k.startswith('case_')}


def main():
    case = sys.argv[1]
    try:
        CASES[case]()
    except rc.CheckFailed as e:
        print('FAIL %s: %s' % (case, e))
        return 1
    print('PASS', case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
