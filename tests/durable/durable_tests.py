# SPDX-License-Identifier: BSD-3-Clause
"""durable_tests.py - descriptor hygiene and crash-proof recording.

Cases (durable_tests.py CASE --lib LIB --bindir DIR --work DIR ...):
  fd_race   threads flush chunks (small TRACER_BUFFER) while the main thread
            opens/closes a file in a loop: every open must return the number
            it returns untraced (3); stdout, stderr less tracer: lines, exit
            status compared with the untraced run; archive read back.
  kill20    TRACER_DURABLE: SIGKILL at 20 random moments of a 4-thread lock
            program; `tracer recover` rebuilds each archive; every recovered
            archive passes the reference reader and the checks (regions
            closed, ProgramEnd 137, TRACER::RUN killed), and holds at least
            the lock pairs the program had counted 1 s before the kill; some
            location went through 3 mapped windows (256K chunks) or more.
  snapshot_kill  kills while the definitions snapshot is replaced (every
            10 ms): recovery never reads a cut one.
  timeout_kill  the same under `timeout -s KILL`.
  tracer_run_kill  tracer-run recovers by itself when its child is killed.
  fulldisk  a 1 MiB tmpfs as archive directory: no SIGBUS, one tracer: line,
            program output unchanged.
"""
import argparse
import collections
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
sys.path.insert(0, os.path.join(HERE, '..', 'real'))
import real_tests as rt  # noqa: E402  (clean_env, Fail: shared with tests/real and tests/tree)
import tracecheck as tc  # noqa: E402
from runcheck import tracer_lines, wait_ended, without_tracer_lines  # noqa: E402,F401  (also for the other drivers)

SKIP = 77
A = None
CASES = {}
Fail = rt.Fail
clean_env = rt.clean_env


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def fresh(name):
    d = os.path.join(A.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def bin_(name):
    return os.path.join(A.bindir, name)


def run(argv, cwd, env, timeout=300):
    return subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)


def count_enters(tr, region):
    return sum(1 for l in tr.locations for e in l.events if e.kind == 'Enter' and e.region == region)


def otf2_print_counts(archive, region):
    """(Enter of region, BufferFlush) counted in otf2-print's output; it must exit 0."""
    n = flushes = 0
    with tc.otf2_print_stream(archive) as out:
        for line in out:
            if line.startswith('ENTER') and ('"%s"' % region) in line:
                n += 1
            elif line.startswith('BUFFER_FLUSH'):
                flushes += 1
    return n, flushes


# ---- step 1: descriptors ----

@case
def fd_race():
    base = fresh('fd_race')
    u, t = os.path.join(base, 'u'), os.path.join(base, 't')
    os.makedirs(u)
    os.makedirs(t)
    argv = [bin_('durable_fd_race'), 'f.txt', '0.5', '2']
    ru = run(argv, u, clean_env())
    env = clean_env({'LD_PRELOAD': A.lib, 'TRACER_OUTPUT': os.path.join(base, 'archive'),
                     'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K', 'TRACER_DURABLE': 'on'})
    rt = run(argv, t, env)
    if ru.returncode != 0 or ru.stdout != 'fd_race: opens returned another number than 3: 0\n':
        raise Fail('untraced run: rc %d, %r %r' % (ru.returncode, ru.stdout, ru.stderr))
    if rt.returncode != ru.returncode or rt.stdout != ru.stdout or \
            without_tracer_lines(rt.stderr) != without_tracer_lines(ru.stderr):
        raise Fail('traced run differs: rc %d, stdout %r, stderr %r' % (rt.returncode, rt.stdout, rt.stderr))
    # millions of events: counted from otf2-print (the python reader would take minutes)
    n, flushes = otf2_print_counts(os.path.join(base, 'archive'), 'pthread_mutex_lock')
    if n < 100000:
        raise Fail('fd_race: only %d pthread_mutex_lock and %d BufferFlush recorded: the test flushed too little'
                   % (n, flushes))
    # (millions of events: many chunks went through the staging file, which a normal end removes)
    left = glob.glob(os.path.join(base, 'archive', '**', '*.stage'), recursive=True)
    if left:
        raise Fail('fd_race: staging files left by a normal end: %r' % left)
    print('ok fd_race: %d pthread_mutex_lock, %d buffer flushes, no descriptor seen by the program' %
          (n, flushes))


# ---- step 2: SIGKILL and recovery ----

# 256K, the smallest chunk: fewer events than 1M chunks need still fill several chunks per location
def stable(look):
    """The processes look() lists in 5 looks 20 ms apart: not the tracer's
    short-lived file children (preload/core/fdtable.c: a clone child lives ~0.1 ms
    while a traced thread maps its next window or ticks; it has the
    program's command line)."""
    seen = set(look())
    for _ in range(4):
        time.sleep(0.02)
        seen &= set(look())
    return sorted(seen)


DURABLE_ENV = {'TRACER_DURABLE': '250ms', 'TRACER_CHUNK': '256K'}
CHUNK = 256 << 10
# 10 us of work between two pairs of a thread (lockers.h: time-based, whatever the CPU): 4 threads on the
# 2-core VM make 60-100k lock pairs per second (4 events each; the 5000-iteration spin used before made
# ~420k pairs/s: 5M events in 3 s, 21 s for the python reader); each location fills a 256K window every
# 0.25-0.4 s
WORK = '10'


def pairs_before(lines, limit):
    """The program's own count: pairs complete at its last line printed at or before limit."""
    best = 0
    for l in lines:
        f = l.split()
        if len(f) == 4 and f[0] == 't' and f[2] == 'pairs' and float(f[1]) <= limit:
            best = max(best, int(f[3]))
    return best


def check_recovered(archive, out_lines, kill_time, what):
    r = run([A.tracer, 'recover', archive], None, clean_env(), timeout=120)
    rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
    if r.returncode != 0 or len(rec) != 1:
        raise Fail('%s: tracer recover %s: rc %d, stderr %r' % (what, archive, r.returncode, r.stderr))
    left = glob.glob(os.path.join(archive, '**', '*.stage'), recursive=True)
    if left:
        raise Fail('%s: staging files left after tracer recover: %r' % (what, left))
    # otf2-print's stream (check_all_print: a tenth of the Python reader's time for these millions of events):
    # the rules of check_all, every event within ClockProperties, and semantically complete: every thread
    # that began ends (ThreadEnd its last record), the process's ProgramEnd is its latest event
    began, last, ends, n, latest = set(), {}, [], collections.Counter(), [0]

    def each(kind, loc, t, attrs):
        n[kind] += 1
        last[loc] = kind
        if t > latest[0]:
            latest[0] = t
        if kind == 'THREAD_BEGIN':
            began.add(loc)
        elif kind == 'PROGRAM_END':
            ends.append(t)
    counts = tc.check_all_print(archive, exit_status=137, clock_range=True, each=each)
    info = tc.otf2_print(archive, '-A')
    if 'TRACER::RUN_END' not in info or 'killed' not in info:
        raise Fail('%s: the recovered anchor does not say the run was killed' % what)
    for loc in sorted(began):
        if last[loc] != 'THREAD_END':
            raise Fail('%s: location %d began (ThreadBegin) but its last record is %s, not ThreadEnd'
                       % (what, loc, last[loc]))
    if not ends or max(ends) < latest[0]:
        raise Fail('%s: ProgramEnd %s before the latest event %d' % (what, ends, latest[0]))
    # pthread_mutex_unlock is recorded as ThreadReleaseLock (no region)
    got = n['THREAD_RELEASE_LOCK']
    want = pairs_before(out_lines, kill_time - 1.0)
    if got < want:
        raise Fail('%s: %d lock pairs recovered, but the program had completed %d one second before the kill'
                   % (what, got, want))
    return got, want, sum(counts.values())


def killed_run(base, i, delay, durable=DURABLE_ENV, extra=(), work=WORK):
    archive = os.path.join(base, 'archive%d' % i)
    env = clean_env(dict(durable, LD_PRELOAD=A.lib, TRACER_OUTPUT=archive))
    p = subprocess.Popen([bin_('durable_lock_prog'), '30', '4', work] + list(extra), cwd=base, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    lines = [p.stdout.readline()]   # started
    t0 = time.monotonic()
    time.sleep(max(0.0, delay - (time.monotonic() - t0)))
    kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
    p.send_signal(signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    lines += out.splitlines()
    if p.returncode != -signal.SIGKILL:
        raise Fail('run %d: ended with %r, not SIGKILL' % (i, p.returncode))
    return archive, lines, kill_time


@case
def kill20():
    base = fresh('kill20')
    rng = random.Random(int(os.environ.get('DURABLE_SEED', '13')))
    total = windows = staged = 0
    for i in range(20):
        delay = rng.uniform(0.3, 3.0)   # the definitions are saved from the first tick on
        archive, lines, kill_time = killed_run(base, i, delay)
        # chunks after the first are recorded in a staging file (format/mapped.c): tracer recover puts the
        # staged chunk into the event file
        staged += bool(glob.glob(os.path.join(archive, '**', '*.evt.stage'), recursive=True))
        got, want, nev = check_recovered(archive, lines, kill_time, 'run %d (killed after %.2fs)' % (i, delay))
        # the chunks the busiest location went through (its event file is cut at the last tick)
        w = max(os.path.getsize(f) for f in glob.glob(os.path.join(archive, 'traces', '*.evt'))) // CHUNK + 1
        print('ok run %d: killed after %.2fs, %d pairs recovered >= %d complete 1s before, %d events, %d chunks' %
              (i, delay, got, want, nev, w))
        total += got
        windows = max(windows, w)
        shutil.rmtree(archive)
    if windows < 3 or staged < 10:
        raise Fail('kill20: up to %d chunks per location of %s, %d of 20 runs killed with a staging file: the '
                   'kills did not test the switch' % (windows, DURABLE_ENV['TRACER_CHUNK'], staged))
    print('ok kill20: 20 recovered archives valid, up to %d chunks per location, %d killed with a staging file' %
          (windows, staged))


@case
def snapshot_kill():
    """The definitions snapshot is replaced at every tick (a new thread every 10 ms, TRACER_DURABLE=10ms) and
    the program killed at 20 random moments: recovery never reads a cut snapshot (the new one is written
    aside, then renamed over the old one). Then the two states a kill can leave, made by hand on the last
    archive: a cut new snapshot without its anchor (ignored), a whole new one not yet renamed (taken)."""
    base = fresh('snapshot_kill')
    rng = random.Random(int(os.environ.get('DURABLE_SEED', '17')))
    pending = 0
    for i in range(20):
        delay = rng.uniform(0.3, 2.0)
        archive, lines, kill_time = killed_run(base, i, delay, {'TRACER_DURABLE': '10ms'}, ['churn'],
                                               work='100')   # (fewer pairs: the reader is quick)
        pending += any('.recovery.new' in f for _, _, fs in os.walk(archive) for f in fs)
        if i == 19:
            break
        got, want, nev = check_recovered(archive, lines, kill_time, 'run %d (killed after %.2fs)' % (i, delay))
        print('ok run %d: killed after %.2fs, %d pairs >= %d, %d events' % (i, delay, got, want, nev))
        shutil.rmtree(archive)
    # the last archive, not recovered yet: a new snapshot cut by the kill (no anchor) is ignored
    # (a part of the process tree: DIR/procs/proc<N>.recovery.*)
    snaps = glob.glob(os.path.join(archive, '**', '*.recovery.otf2'), recursive=True)
    if len(snaps) != 1:
        raise Fail('snapshot anchors of the last run: %r' % snaps)
    snap = snaps[0][:-len('.otf2')]
    with open(snap + '.def', 'rb') as f:
        whole = f.read()
    with open(snap + '.new.def', 'wb') as f:
        f.write(whole[:len(whole) // 2])
    saved = os.path.join(base, 'saved')
    shutil.copytree(archive, saved)
    check_recovered(archive, lines, kill_time, 'a cut new snapshot left')
    left = [f for _, ds, fs in os.walk(archive) for f in ds + fs if '.recovery' in f]
    if left:
        raise Fail('recovery files left: %r' % left)
    # a whole new snapshot (its anchor written) over a cut old one: the renames are finished
    shutil.rmtree(archive)
    shutil.move(saved, archive)
    os.rename(snap + '.otf2', snap + '.new.otf2')
    with open(snap + '.new.def', 'wb') as f:
        f.write(whole)
    with open(snap + '.def', 'wb') as f:
        f.write(whole[:len(whole) // 3])
    got, want, nev = check_recovered(archive, lines, kill_time, 'a whole new snapshot not renamed')
    print('ok snapshot_kill: 20 kills (%d while a new snapshot was being written) recovered; a cut new snapshot '
          'ignored, a whole one taken (%d pairs >= %d)' % (pending, got, want))


@case
def timeout_kill():
    base = fresh('timeout_kill')
    archive = os.path.join(base, 'archive')
    env = clean_env(dict(DURABLE_ENV, TRACER_OUTPUT=archive))
    start = time.clock_gettime(time.CLOCK_MONOTONIC)
    # timeout itself untraced: it execs env, which execs the program preloaded
    r = run(['timeout', '-s', 'KILL', '2.5', 'env', 'LD_PRELOAD=' + A.lib, bin_('durable_lock_prog'), '30', '4',
             WORK], base, env)
    end = time.clock_gettime(time.CLOCK_MONOTONIC)
    if r.returncode != 137 and r.returncode != -9:
        raise Fail('timeout -s KILL: rc %d' % r.returncode)
    # timeout sends SIGKILL to its process group, itself included: it may be gone while the program
    # still exits (unmapping its windows takes a while on a loaded machine); recovery starts once the
    # program has ended (gone, or a zombie nobody reaps)
    for live in glob.glob(os.path.join(archive, 'procs', 'live.[0-9]*')):   # live.<pid>.<start>.<part>.<self>
        wait_ended(int(os.path.basename(live).split('.')[1]))
    got, want, nev = check_recovered(archive, r.stdout.splitlines(), end, 'timeout -s KILL')
    if want == 0:
        raise Fail('timeout -s KILL: the program printed nothing before %.1fs' % (end - start - 1))
    print('ok timeout_kill: %d pairs recovered >= %d complete 1s before the kill' % (got, want))


# ---- step 3: tracer-run recovers; full disk ----

@case
def tracer_run_kill():
    base = fresh('tracer_run_kill')
    archive = os.path.join(base, 'archive')
    env = clean_env(DURABLE_ENV)
    p = subprocess.Popen([A.tracer_run, '--lib', A.lib, '-o', archive, '--', bin_('durable_lock_prog'), '30', '4',
                          WORK], cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    lines = [p.stdout.readline()]
    time.sleep(1.6)
    kids = subprocess.run(['pgrep', '-P', str(p.pid)], stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    if len(kids) != 1:
        p.kill()
        raise Fail('tracer-run has %d children, expected the program' % len(kids))
    kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
    os.kill(int(kids[0]), signal.SIGKILL)
    out, err = p.communicate(timeout=120)
    lines += out.splitlines()
    if p.returncode != -signal.SIGKILL:
        raise Fail('tracer-run ended with %r, not like its program (SIGKILL)' % p.returncode)
    tl = tracer_lines(err)
    if len(tl) != 1 or not tl[0].startswith('tracer: recovered '):
        raise Fail('tracer-run: expected one "tracer: recovered" line, got %r' % tl)
    tr = tc.load(archive)
    tc.check_all(tr, exit_status=137)
    got = sum(1 for l in tr.locations for e in l.events if e.kind == 'ThreadReleaseLock')
    want = pairs_before(lines, kill_time - 1.0)
    if got < want or want == 0:
        raise Fail('tracer-run: %d pairs recovered, %d complete one second before the kill' % (got, want))
    print('ok tracer_run_kill: %s; %d pairs >= %d' % (tl[0], got, want))


def mount_tmpfs(d, size):
    """A tmpfs of size at d (root); None, or why it cannot be."""
    if os.geteuid() != 0:
        return 'not root'
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%s' % size, 'tmpfs', d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return None if r.returncode == 0 else 'mount -t tmpfs: ' + r.stdout.strip()


@case
def fulldisk():
    base = fresh('fulldisk')
    mnt = os.path.join(base, 'mnt')
    os.makedirs(mnt)
    why = mount_tmpfs(mnt, '1m')
    if why:
        print('SKIP: no 1 MiB tmpfs (%s)' % why)
        sys.exit(SKIP)
    try:
        argv = [bin_('durable_lock_prog'), 'n100000', '4', '0']
        ru = run(argv, base, clean_env())
        env = clean_env(dict(DURABLE_ENV, LD_PRELOAD=A.lib, TRACER_OUTPUT=os.path.join(mnt, 'archive'),
                             TRACER_CHUNK='256K', TRACER_BUFFER='256K'))
        rt = run(argv, base, env)
        # what fitted is a readable archive
        tr = tc.load(os.path.join(mnt, 'archive'))
        tc.check_all(tr, exit_status=0)
    finally:
        subprocess.run(['umount', '-l', mnt])
    if rt.returncode != ru.returncode or rt.stdout != ru.stdout:
        raise Fail('fulldisk: traced run differs: rc %d (untraced %d), stdout %r (untraced %r), stderr %r' %
                   (rt.returncode, ru.returncode, rt.stdout, ru.stdout, rt.stderr[-500:]))
    if without_tracer_lines(rt.stderr) != without_tracer_lines(ru.stderr):
        raise Fail('fulldisk: stderr differs: %r' % rt.stderr[-500:])
    tl = tracer_lines(rt.stderr)
    full = [l for l in tl if 'No space left' in l or 'ENOSPC' in l or 'full' in l]
    if len(tl) != 1 or len(full) != 1:
        raise Fail('fulldisk: expected one tracer: line about the full disk, got %r' % tl)
    print('ok fulldisk: no SIGBUS, output unchanged, one line: %s' % tl[0])


# ---- step 5: a killed 3-rank MPI job ----

def in_env(pid, var):
    """Process pid has var (NAME=value) in its environment."""
    try:
        with open('/proc/%s/environ' % pid, 'rb') as f:
            return var.encode() in f.read().split(b'\0')
    except OSError:
        return False


@case
def mpi_kill():
    base = fresh('mpi_kill')
    archive = os.path.join(base, 'archive')
    env = clean_env({'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'})
    prog = bin_('durable_lock_prog')
    cmd = ['mpirun', '--oversubscribe', '--bind-to', 'none', '-np', '3', '-x', 'TRACER_OUTPUT=' + archive,
           '-x', 'LD_PRELOAD=' + A.lib] + [a for k, v in DURABLE_ENV.items() for a in ('-x', k + '=' + v)] + \
        [prog, '30', '2', WORK]
    p = subprocess.Popen(cmd, cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    p.stdout.readline()
    time.sleep(2.0)
    ranks = stable(lambda: [r for r in subprocess.run(['pgrep', '-f', '^' + prog], stdout=subprocess.PIPE,
                                                      universal_newlines=True).stdout.split()
                            if in_env(r, 'TRACER_OUTPUT=' + archive)])   # (other tests run the program too)
    if len(ranks) != 3:
        os.killpg(p.pid, signal.SIGKILL)
        raise Fail('mpi_kill: %d rank processes found, expected 3' % len(ranks))
    for r in ranks:   # the whole job at once: nothing survives to write anything
        os.kill(int(r), signal.SIGKILL)
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
    r = run([A.tracer, 'recover', archive], None, clean_env(), timeout=120)
    rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
    if r.returncode != 0 or len(rec) != 3:
        raise Fail('mpi_kill: tracer recover: rc %d, %r' % (r.returncode, r.stderr))
    for k in range(3):
        tr = tc.load(os.path.join(archive, 'ranks', 'rank%d.otf2' % k))
        tc.check_all(tr, exit_status=137)
    m = run([A.tracer, 'merge', archive], None, clean_env(), timeout=300)
    if m.returncode != 0:
        raise Fail('mpi_kill: tracer merge: rc %d, %r' % (m.returncode, m.stderr[-800:]))
    tr = tc.load(archive)
    tc.otf2_print(tr.anchor)
    tc.check_timestamps(tr)
    tc.check_nesting(tr)
    masters = [l for l in tr.locations if l.events and l.events[0].kind == 'ProgramBegin']
    ends = [l for l in masters if l.events[-1].kind == 'ProgramEnd' and l.events[-1].ev.exit_status == 137]
    if len(masters) != 3 or len(ends) != 3:
        raise Fail('mpi_kill: merged archive: %d ranks with ProgramBegin, %d ending with ProgramEnd 137'
                   % (len(masters), len(ends)))
    print('ok mpi_kill: 3 ranks recovered and merged, %d locations' % len(tr.locations))


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('case')
    ap.add_argument('--lib', required=True)
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--tracer')
    ap.add_argument('--tracer-run')
    ap.add_argument('--work', required=True)
    A = ap.parse_args()
    try:
        CASES[A.case]()
    except (Fail, tc.CheckError) as e:
        print('FAIL %s: %s' % (A.case, e))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
