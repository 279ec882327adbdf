# SPDX-License-Identifier: BSD-3-Clause
"""recover_tests.py - killed process trees under TRACER_DURABLE (TRACER_TREE=one).

Every part of a tree (DIR/procs/proc<N>) is durable; these cases kill some
or all of its processes with SIGKILL and read the ONE archive back with the
reference reader (the checks of tests/tree: otf2-print, events in time
order and balanced, within ClockProperties, one group per process image,
one root, creators present, ProgramBegin first and ProgramEnd last on
every master), and check that every lock pair a killed program had counted
one second before the kill is in the archive, that every killed process
ends with ProgramEnd 137 and that the anchor says TRACER::RUN_END killed.

Cases (recover_tests.py CASE --lib LIB --bindir DIR --tracer T --tracer-run R --work DIR):
  tree_kill        sh with two 2-thread lock programs, the whole process
                   group killed at once: nothing survives; `tracer recover
                   DIR` recovers the 3 parts and unifies them (one line);
                   run before the kill, it does nothing (exit 2, one line).
  tree_kill_child  one of the two programs killed, the other and sh end
                   normally: the last process unifies by itself, the
                   killed part recovered (its summary line says so);
                   stdout, stderr less tracer: lines and the exit status
                   as untraced (the same kill).
  tracer_run_tree  under tracer-run, every process of the tree killed:
                   tracer-run recovers and unifies by itself, one line
                   "tracer: recovered", ends like its program (SIGKILL).
  sampling_kill    TRACER_SAMPLING as well: the calling contexts the
                   samples refer to are defined (and resolved: at most 2 %
                   of the samples below a placeholder) in the recovered
                   archive, tree part and separate archive, the functions
                   of an object with line information (the C library with
                   libc6-dbg) with their source file and line; every pair
                   complete 1.1 s before the kill is in it.
  oom_kill         a program allocating without end in a 256 MiB memory
                   cgroup (v1, root; else skipped with the reason) is
                   killed by the OOM killer; the recovered archive is valid
                   and holds every pair complete 1 s before its last line.
  mpich_kill       durable.mpi_kill under MPICH (mpirun.mpich): 3 ranks
                   killed at once; `tracer recover DIR` recovers and
                   unifies them (every rank ProgramEnd 137, RUN_END).
  sampling_tree    sampling in a tree that ends normally: the unified
                   archive puts every lock thread's samples below its
                   thread function (the parts' contexts unified by content).
"""
import collections
import glob
import os
import re
import signal
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
sys.path.insert(0, os.path.join(HERE, '..', 'real'))
sys.path.insert(0, os.path.join(HERE, '..', 'tree'))
import real_tests as rt  # noqa: E402
import tracecheck as tc  # noqa: E402
import tree_tests as tt  # noqa: E402  (check_tree: the checks of one tree archive)
import durable_tests as dt  # noqa: E402  (options, fresh, tracer_lines, main)

CASES = {}
Fail = rt.Fail
WORK = dt.WORK
fresh = dt.fresh
tracer_lines = dt.tracer_lines
without_tracer_lines = dt.without_tracer_lines
PROG = 'durable_lock_prog'


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def env_for(extra=None):
    env = rt.clean_env(extra)
    env['P'] = os.path.join(dt.A.bindir, PROG)
    return env


def pairs_before(path, limit):
    """The program's own count: pairs complete at its last line printed at or before limit."""
    best = 0
    with open(path) as f:
        for l in f:
            x = l.split()
            if len(x) >= 4 and x[0] == 't' and x[2] == 'pairs' and float(x[1]) <= limit:
                best = max(best, int(x[3]))
    return best


def wait_lines(paths, timeout=30):
    """Until every file of paths holds a line of the program (it runs)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(os.path.exists(p) and os.path.getsize(p) > 0 for p in paths):
            return
        time.sleep(0.05)
    raise Fail('the programs did not start: %s' % [(p, os.path.exists(p)) for p in paths])


def pid_of(base, n):
    with open(os.path.join(base, 'p%d' % n)) as f:
        return int(f.read().split()[0])


def check_archive(prefix, root_status, killed):
    """The tree checks; killed: {pid: (output file, kill time)}. Returns (groups, trace)."""
    # (sh's fork children that redirect before their exec are images of their own)
    gs, tr = tt.check_tree(prefix, {PROG: 2}, exit_status=root_status)
    info = tc.otf2_print(tr.anchor, '-A')
    if 'TRACER::RUN_END' not in info or 'killed' not in info:
        raise Fail('%s: the anchor does not say processes were killed' % prefix)
    by_pid = {g.pid: g for g in gs.values() if g.prog == PROG}
    for pid, (out, kill_time) in killed.items():
        g = by_pid.get(pid)
        if g is None:
            raise Fail('killed process %d has no location group (%s)' % (pid, sorted(x.name for x in gs.values())))
        end = tr.loc(g.master).events[-1]
        if end.ev.exit_status != 137:
            raise Fail('%s: ProgramEnd %d, not 137 (killed)' % (g.name, end.ev.exit_status))
        got = sum(1 for l in tr.locations if l.group == g.name for e in l.events if e.kind == 'ThreadReleaseLock')
        want = pairs_before(out, kill_time - 1.0)
        if want == 0 or got < want:
            raise Fail('%s: %d lock pairs recovered, the program had completed %d one second before the kill'
                       % (g.name, got, want))
        print('  %s: %d pairs recovered >= %d complete 1 s before the kill' % (g.name, got, want))
    return gs, tr


TWO = '"$P" 30 2 %s > o1 & echo $! > p1; "$P" 30 2 %s > o2 & echo $! > p2; wait' % (WORK, WORK)


@case
def tree_kill():
    base = fresh('tree_kill')
    prefix = os.path.join(base, 'archive')
    env = env_for(dict(dt.DURABLE_ENV, LD_PRELOAD=dt.A.lib, TRACER_OUTPUT=prefix))
    p = subprocess.Popen(['sh', '-c', TWO], cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    try:
        wait_lines([os.path.join(base, f) for f in ('o1', 'o2', 'p1', 'p2')])
        time.sleep(2.0)
        # while the tree runs, tracer recover touches nothing
        early = subprocess.run([dt.A.tracer, 'recover', prefix], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, env=rt.clean_env(), timeout=60)
    finally:
        kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
        os.killpg(p.pid, signal.SIGKILL)   # every process of the tree at once
    if early.returncode != 2 or 'still runs' not in early.stderr:
        raise Fail('tree_kill: tracer recover while the tree runs: rc %d, %r' % (early.returncode, early.stderr))
    p.communicate(timeout=60)
    # the shell is reaped; its killed children (orphans) may still be exiting
    for live in glob.glob(os.path.join(prefix, 'procs', 'live.[0-9]*')):   # live.<pid>.<start>.<part>.<self>
        dt.wait_ended(int(os.path.basename(live).split('.')[1]))
    if os.path.exists(os.path.join(prefix, 'traces.otf2')):
        raise Fail('tree_kill: an archive was written although every process was killed')
    r = subprocess.run([dt.A.tracer, 'recover', prefix], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=rt.clean_env(), timeout=300)
    rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
    if r.returncode != 0 or len(rec) != 1 or '(3 killed' not in rec[0]:
        raise Fail('tree_kill: tracer recover: rc %d, stderr %r' % (r.returncode, r.stderr))
    killed = {pid_of(base, n): (os.path.join(base, 'o%d' % n), kill_time) for n in (1, 2)}
    gs, tr = check_archive(prefix, 137, killed)
    # the images running at the kill (not the pre-exec parts of the programs: ProgramEnd 0 at exec)
    live = [g for g in gs.values() if g.creator is None or g.prog == PROG]
    masters = [g for g in live if tr.loc(g.master).events[-1].ev.exit_status != 137]
    if len(live) != 3 or masters:
        raise Fail('tree_kill: %s not ended with ProgramEnd 137' % [g.name for g in masters])
    print('ok tree_kill: %d groups; %s' % (len(gs), rec[0]))


def kill_child_run(d, env):
    """sh: program 1 (30 s) in the background, program 2 (3 s) in the foreground, then waits for 1;
    program 1 is killed after 1.5 s. Returns (result, kill time)."""
    script = ('"$P" 30 2 %s > o1 & echo $! > p1; "$P" 3 2 %s > o2; wait $(cat p1); echo "first ended: $?"'
              % (WORK, WORK))
    p = subprocess.Popen(['sh', '-c', script], cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    try:
        wait_lines([os.path.join(d, f) for f in ('o1', 'o2', 'p1')])
        time.sleep(1.5)
        kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
        os.kill(pid_of(d, 1), signal.SIGKILL)
        out, err = p.communicate(timeout=120)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        raise
    return rt.Result(p.returncode, out, err, 0), kill_time


@case
def tree_kill_child():
    base = fresh('tree_kill_child')
    u, t = os.path.join(base, 'u'), os.path.join(base, 't')
    os.makedirs(u)
    os.makedirs(t)
    prefix = os.path.join(base, 'archive')
    ru, _ = kill_child_run(u, env_for())
    rr, kill_time = kill_child_run(t, env_for(dict(dt.DURABLE_ENV, LD_PRELOAD=dt.A.lib, TRACER_OUTPUT=prefix)))
    if ru.rc != 0 or ru.out != 'first ended: 137\n':
        raise Fail('tree_kill_child: untraced %s %r %r' % (ru.status(), ru.out, ru.err))
    if rr.rc != ru.rc or rr.out != ru.out or without_tracer_lines(rr.err) != without_tracer_lines(ru.err):
        raise Fail('tree_kill_child: traced %s %r %r differs' % (rr.status(), rr.out, rr.err))
    tl = tracer_lines(rr.err)
    if len(tl) != 1 or '/traces.otf2: ' not in tl[0] or ' processes (1 killed' not in tl[0]:
        raise Fail('tree_kill_child: expected the one summary line of the tree naming 1 killed, got %r' % tl)
    gs, tr = check_archive(prefix, 0, {pid_of(t, 1): (os.path.join(t, 'o1'), kill_time)})
    # the program that ended normally: every pair, ProgramEnd 0
    g2 = [g for g in gs.values() if g.prog == PROG and g.pid != pid_of(t, 1)][0]
    done = int(open(os.path.join(t, 'o2')).read().split()[-1])
    got = sum(1 for l in tr.locations if l.group == g2.name for e in l.events if e.kind == 'ThreadReleaseLock')
    if got != done or tr.loc(g2.master).events[-1].ev.exit_status != 0:
        raise Fail('tree_kill_child: %s: %d pairs of %d, ProgramEnd %d' %
                   (g2.name, got, done, tr.loc(g2.master).events[-1].ev.exit_status))
    print('ok tree_kill_child: %d groups, %s: all %d pairs; %s' % (len(gs), g2.name, done, tl[0]))


def descendants_once(pid):
    out, todo = [], [pid]
    while todo:
        kids = subprocess.run(['pgrep', '-P', str(todo.pop())], stdout=subprocess.PIPE,
                              universal_newlines=True).stdout.split()
        out += [int(k) for k in kids]
        todo += kids
    return out


def descendants(pid):
    """The processes below pid that stay (dt.stable)."""
    return [int(k) for k in dt.stable(lambda: descendants_once(pid))]


@case
def tracer_run_tree():
    base = fresh('tracer_run_tree')
    prefix = os.path.join(base, 'archive')
    p = subprocess.Popen([dt.A.tracer_run, '--lib', dt.A.lib, '-o', prefix, '--', 'sh', '-c', TWO], cwd=base,
                         env=env_for(dt.DURABLE_ENV), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    try:
        wait_lines([os.path.join(base, f) for f in ('o1', 'o2', 'p1', 'p2')])
        time.sleep(2.0)
        kids = descendants(p.pid)
        if len(kids) != 3:
            raise Fail('tracer_run_tree: tracer-run has %d descendants, expected sh and 2 programs' % len(kids))
        kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
        for k in kids:   # the tree, not tracer-run
            os.kill(k, signal.SIGKILL)
        out, err = p.communicate(timeout=300)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        raise
    if p.returncode != -signal.SIGKILL:
        raise Fail('tracer_run_tree: tracer-run ended with %r, not like its program (SIGKILL)' % p.returncode)
    tl = tracer_lines(err)
    if len(tl) != 1 or not tl[0].startswith('tracer: recovered ') or '(3 killed' not in tl[0]:
        raise Fail('tracer_run_tree: expected one "tracer: recovered" line naming 3 killed, got %r' % tl)
    killed = {pid_of(base, n): (os.path.join(base, 'o%d' % n), kill_time) for n in (1, 2)}
    gs, tr = check_archive(prefix, 137, killed)
    print('ok tracer_run_tree: %d groups; %s' % (len(gs), tl[0]))


class SampleRoots:
    """Counts the samples of an archive from otf2-print (its definitions, then as check_all_print's each for
    its events, one pass): roots {(master location?, 'locker' on the path): samples}, unresolved: samples
    with a context the durability snapshot left unresolved (a placeholder Region "0x<address> [<file>]",
    described "not resolved ...", that tracer recover could not name) on their path. Every context a sample names must be defined.
    sourced: the functions tracer recover named with a C source file and a line (name, file, line)."""

    def __init__(self, anchor):
        self.roots, self.unresolved, self.sourced = collections.Counter(), 0, []
        regions, cc, self.master = {}, {}, set()
        for line in tc.otf2_print(anchor, '-G').splitlines():
            f = line.split(None, 2)
            if len(f) < 3:
                continue
            if f[0] == 'REGION':
                m = re.search(r'Name: "(.*?)" <\d+> \(Aka\..*Descr\.: "(.*?)" <\d+>, Role:', f[2])
                # (tracer recover names them from their object files: a name left "0x<address> [<file>]"
                # is unresolved too)
                regions[int(f[1])] = (m.group(1), m.group(2).startswith('not resolved') or
                                      (m.group(2).startswith('named by tracer recover') and
                                       re.match(r'0x[0-9a-f]+( \[.*\])?$', m.group(1)) is not None))
                src = re.search(r', File: "(.*?)" <\d+>, Begin: (\d+),', f[2])
                if m.group(2).startswith('named by tracer recover') and src and src.group(1).endswith('.c') and \
                        int(src.group(2)) > 0:
                    self.sourced.append((m.group(1), src.group(1), int(src.group(2))))
            elif f[0] == 'CALLING_CONTEXT':
                left, parent = f[2].rsplit(', Parent: ', 1)
                region = left.rsplit(', Source code location: ', 1)[0]
                cc[int(f[1])] = (int(region.rsplit('<', 1)[1].rstrip('>')),
                                 None if parent == 'UNDEFINED' else int(parent.rsplit('<', 1)[1].rstrip('>')))
            elif f[0] == 'LOCATION' and f[2].startswith('Name: "Master thread" <'):
                self.master.add(int(f[1]))
        self.paths = {}   # context id: ('locker' on its path, a placeholder on it)
        for c in cc:
            names, placeholder, i = [], False, c
            while i is not None:
                name, ph = regions[cc[i][0]]
                names.append(name)
                placeholder |= ph
                i = cc[i][1]
            self.paths[c] = ('locker' in names, placeholder)

    def __call__(self, kind, loc, t, attrs):
        if kind != 'CALLING_CONTEXT_SAMPLE':
            return
        m = re.search(r'<(\d+)>, Unwind Distance', attrs)
        if not m or int(m.group(1)) not in self.paths:
            raise Fail('a sample of location %d names an undefined calling context: %s' % (loc, attrs))
        locker, placeholder = self.paths[int(m.group(1))]
        self.roots[(loc in self.master, locker)] += 1
        self.unresolved += placeholder


def sample_roots(anchor):
    """SampleRoots over otf2-print's events: (roots, unresolved)."""
    sr = SampleRoots(anchor)
    for kind, loc, t, attrs in tc.print_events(anchor):
        sr(kind, loc, t, attrs)
    return dict(sr.roots), sr.unresolved


def libc_debug_info():
    """The separate debug information of the C library (libc6-dbg, found by build id as libdw finds it), or
    None: the lock program is built without -g, the C library is the object of its samples with lines."""
    with open('/proc/self/maps') as f:
        libc = next((l.split()[-1] for l in f if l.rstrip().endswith('/libc.so.6')), None)
    if not libc or not shutil.which('readelf'):
        return None
    notes = subprocess.run(['readelf', '-n', libc], stdout=subprocess.PIPE, universal_newlines=True).stdout
    m = re.search(r'Build ID: ([0-9a-f]{2})([0-9a-f]+)', notes)
    path = m and '/usr/lib/debug/.build-id/%s/%s.debug' % m.groups()
    return path if path and os.path.exists(path) else None


@case
def sampling_kill():
    """TRACER_SAMPLING + TRACER_DURABLE, SIGKILL: the calling contexts the samples refer to (defined only at
    the end before) are in the recovered archive, resolved; as a tree part (unified by tracer-merge) and as a
    separate archive (the definitions snapshot)."""
    base = fresh('sampling_kill')
    dbg = libc_debug_info()
    for tree in ('one', 'separate'):
        archive = os.path.join(base, 'archive_' + tree)
        out = os.path.join(base, 'out_' + tree)
        env = env_for(dict(dt.DURABLE_ENV, LD_PRELOAD=dt.A.lib, TRACER_OUTPUT=archive, TRACER_SAMPLING='1ms',
                           TRACER_TREE=tree))
        with open(out, 'w') as f:
            p = subprocess.Popen([env['P'], '30', '4', WORK], cwd=base, env=env, stdout=f, stderr=subprocess.PIPE,
                                 universal_newlines=True)
        try:
            wait_lines([out])
            time.sleep(6.0)
        finally:
            kill_time = time.clock_gettime(time.CLOCK_MONOTONIC)
            p.kill()
        p.communicate(timeout=60)
        r = subprocess.run([dt.A.tracer, 'recover', archive], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=rt.clean_env(), timeout=300)
        rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
        if r.returncode != 0 or len(rec) != 1:
            raise Fail('sampling_kill (%s): tracer recover: rc %d, %r' % (tree, r.returncode, r.stderr))
        # otf2-print's stream, one pass (millions of events): the rules of check_all, ClockProperties, the
        # lock pairs (pthread_mutex_unlock: ThreadReleaseLock) and the samples
        sr, n = SampleRoots(archive), collections.Counter()

        def each(kind, loc, t, attrs):
            n[kind] += 1
            sr(kind, loc, t, attrs)
        tc.check_all_print(archive, exit_status=137, clock_range=True, each=each)
        got = n['THREAD_RELEASE_LOCK']
        # The 1-second bound + 0.1 s for load: the tick never reads symbols (tracer recover does), so it
        # comes every 250 ms plus the time to write a snapshot; at the load of a
        # parallel ctest (2 cores, load 10) ticks came at most 0.38 s apart; 0.1 s for a tick (an ordinary
        # thread) delayed by the scheduler beyond that. TRACER_VERBOSE=2 logs a tick that published more
        # than 2 intervals after the last.
        want = pairs_before(out, kill_time - 1.1)
        if want == 0 or got < want:
            raise Fail('sampling_kill (%s): %d pairs recovered, %d complete 1.1 s before the kill' % (tree, got, want))
        roots, unresolved = dict(sr.roots), sr.unresolved
        threads = sum(v for (m, _), v in roots.items() if not m)
        # the lock threads' samples all lie below their thread function (named: resolved)
        if threads < 50 or roots.get((False, False), 0) > threads // 20:
            raise Fail('sampling_kill (%s): samples of the lock threads: %s' % (tree, roots))
        # real function names as at a normal end (tracer recover reads them from the object files): at most
        # 2 % of the samples below an address no symbol covers
        total = sum(roots.values())
        if unresolved * 50 > total:
            raise Fail('sampling_kill (%s): %d of %d samples below an unresolved placeholder' % (tree, unresolved, total))
        # and their places as at a normal end: the source file of the function's entry, its declaration's line
        # (the C library's functions where its debug information is installed)
        if dbg and not sr.sourced:
            raise Fail('sampling_kill (%s): no function named by tracer recover has a C source file and a line '
                       '(the C library has line information: %s)' % (tree, dbg))
        print('ok sampling_kill (%s): %d pairs >= %d, samples %s, %d below a placeholder, %s' % (
            tree, got, want, roots, unresolved, '%d functions with their source lines (%s:%d %s)' % (
                len(sr.sourced), sr.sourced[0][1], sr.sourced[0][2], sr.sourced[0][0]) if sr.sourced
            else 'source lines not checked (no debug information of the C library)'))


@case
def sampling_tree():
    """TRACER_SAMPLING in a process tree that ends normally (not durable): the parts' calling contexts are
    unified by content (ids = node numbers), every lock thread's samples below its thread function."""
    base = fresh('sampling_tree')
    prefix = os.path.join(base, 'archive')
    env = env_for({'LD_PRELOAD': dt.A.lib, 'TRACER_OUTPUT': prefix, 'TRACER_SAMPLING': '1ms'})
    r = subprocess.run(['sh', '-c', '"$P" 1 2 %s; "$P" 1 2 %s' % (WORK, WORK)], cwd=base, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    if r.returncode != 0:
        raise Fail('sampling_tree: rc %d %r' % (r.returncode, r.stderr))
    gs, tr = tt.check_tree(prefix, {PROG: 2}, exit_status=0)
    roots, unresolved = sample_roots(tr.anchor)
    threads = sum(v for (m, _), v in roots.items() if not m)
    if threads < 50 or roots.get((False, False), 0) > threads // 20 or unresolved:
        raise Fail('sampling_tree: samples of the lock threads: %s, %d unresolved' % (roots, unresolved))
    print('ok sampling_tree: %d groups, samples %s' % (len(gs), roots))


MEMCG = '/sys/fs/cgroup/memory'
OOM_LIMIT = 256 << 20


def memcg_create(name):
    """A child of this process's memory cgroup (v1) limited to OOM_LIMIT: (path, None) or (None, why not)."""
    if os.geteuid() != 0:
        return None, 'not root (euid %d): cannot create a memory cgroup' % os.geteuid()
    if not os.path.exists(os.path.join(MEMCG, 'memory.limit_in_bytes')):
        return None, '%s is no cgroup v1 memory hierarchy (no memory.limit_in_bytes)' % MEMCG
    own = '/'
    with open('/proc/self/cgroup') as f:
        for l in f:
            x = l.rstrip('\n').split(':', 2)
            if len(x) == 3 and x[1] == 'memory':
                own = x[2]
    path = os.path.join(MEMCG + own, name)
    try:
        os.mkdir(path)
    except OSError as e:
        return None, 'mkdir %s: %s' % (path, e.strerror)
    try:
        with open(os.path.join(path, 'memory.limit_in_bytes'), 'w') as f:
            f.write(str(OOM_LIMIT))
        sw = os.path.join(path, 'memory.memsw.limit_in_bytes')
        if os.path.exists(sw):   # no swapping out instead of the OOM kill
            with open(sw, 'w') as f:
                f.write(str(OOM_LIMIT))
    except OSError as e:
        os.rmdir(path)
        return None, 'setting the limit of %s: %s' % (path, e.strerror)
    return path, None


def oom_kills(path):
    with open(os.path.join(path, 'memory.oom_control')) as f:
        for l in f:
            if l.startswith('oom_kill '):
                return int(l.split()[1])
    return None


@case
def oom_kill():
    """The OOM killer ends a traced program in a memory-limited cgroup (256 MiB, v1): `tracer recover`
    gives a valid archive with every lock pair complete one second before its last line."""
    base = fresh('oom_kill')
    cg, why = memcg_create('tracer-oom-%d' % os.getpid())
    if why:
        print('SKIP: no memory-limited cgroup: %s' % why)
        sys.exit(77)
    prefix = os.path.join(base, 'archive')
    out = os.path.join(base, 'out')
    env = env_for(dict(dt.DURABLE_ENV, LD_PRELOAD=dt.A.lib, TRACER_OUTPUT=prefix))

    def enter_cgroup():
        with open(os.path.join(cg, 'cgroup.procs'), 'w') as f:
            f.write(str(os.getpid()))
    try:
        with open(out, 'w') as f:
            p = subprocess.Popen([os.path.join(dt.A.bindir, 'durable_oom_prog'), '2', WORK], cwd=base, env=env,
                                 stdout=f, stderr=subprocess.PIPE, universal_newlines=True, preexec_fn=enter_cgroup)
        try:
            err = p.communicate(timeout=180)[1]
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Fail('oom_kill: the program was not killed within 180 s')
        kills = oom_kills(cg)
    finally:
        for _ in range(50):   # the killed process leaves the cgroup when reaped
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)
    if p.returncode != -signal.SIGKILL or not kills:
        raise Fail('oom_kill: the program ended with %r, OOM kills in the cgroup: %r; stderr %r' %
                   (p.returncode, kills, err[-300:]))
    lines = open(out).read().split('\n')
    last = [l.split() for l in lines if l.startswith('t ')][-1]
    last_t, mib = float(last[1]), int(last[5])
    r = subprocess.run([dt.A.tracer, 'recover', prefix], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=rt.clean_env(), timeout=300)
    rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
    if r.returncode != 0 or len(rec) != 1:
        raise Fail('oom_kill: tracer recover: rc %d, %r' % (r.returncode, r.stderr))
    tr = tc.load(prefix)
    tc.check_all(tr, exit_status=137)
    tc.check_clock_range(tr)
    info = tc.otf2_print(tr.anchor, '-A')
    if 'TRACER::RUN_END' not in info or 'killed' not in info:
        raise Fail('oom_kill: the anchor does not say the run was killed')
    # the kill came after the last line printed (every 20 ms): 1 s before that line is a bound
    got = sum(1 for l in tr.locations for e in l.events if e.kind == 'ThreadReleaseLock')
    want = pairs_before(out, last_t - 1.0)
    if want == 0 or got < want:
        raise Fail('oom_kill: %d pairs recovered, %d complete 1 s before the last line' % (got, want))
    print('ok oom_kill: killed by the OOM killer at %d MiB allocated (%d OOM kill), %d pairs >= %d; %s' %
          (mib, kills, got, want, rec[0]))


@case
def mpich_kill():
    """durable.mpi_kill under MPICH (Hydra's mpirun.mpich): 3 ranks killed at once, `tracer recover DIR`
    recovers each rank and unifies them into DIR/traces.otf2 (ProgramEnd 137 on every rank, TRACER::RUN_END)."""
    mpirun = shutil.which('mpirun.mpich') or shutil.which('mpiexec.mpich')
    if not mpirun:
        print('SKIP: no mpirun.mpich (package mpich)')
        sys.exit(77)
    base = fresh('mpich_kill')
    archive = os.path.join(base, 'archive')
    prog = os.path.join(dt.A.bindir, PROG)
    cmd = [mpirun, '-np', '3', '-genv', 'TRACER_OUTPUT', archive, '-genv', 'LD_PRELOAD', dt.A.lib] + \
        [a for k, v in dt.DURABLE_ENV.items() for a in ('-genv', k, v)] + [prog, '30', '2', WORK]
    p = subprocess.Popen(cmd, cwd=base, env=rt.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    try:
        p.stdout.readline()
        time.sleep(2.0)
        ranks = [k for k in descendants(p.pid) if os.path.realpath('/proc/%d/exe' % k) == os.path.realpath(prog)]
        if len(ranks) != 3:
            raise Fail('mpich_kill: %d rank processes below mpirun, expected 3' % len(ranks))
        for k in ranks:   # the whole job at once: nothing survives to write anything
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass   # Hydra killed it already, when the first one died
        p.communicate(timeout=60)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    r = subprocess.run([dt.A.tracer, 'recover', archive], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=rt.clean_env(), timeout=300)
    rec = [l for l in r.stderr.splitlines() if l.startswith('tracer: recovered ')]
    if r.returncode != 0 or len(rec) != 3 or not os.path.exists(os.path.join(archive, 'traces.otf2')):
        raise Fail('mpich_kill: tracer recover: rc %d, %r %r' % (r.returncode, r.stdout, r.stderr))
    tr = tc.load(archive)
    tc.otf2_print(tr.anchor)
    tc.check_timestamps(tr)
    tc.check_nesting(tr)
    tc.check_clock_range(tr)
    info = tc.otf2_print(tr.anchor, '-A')
    if 'TRACER::RUN_END' not in info or 'killed: 3 of the 3 ranks' not in info:
        raise Fail('mpich_kill: the unified anchor does not say the 3 ranks were killed')
    masters = [l for l in tr.locations if l.events and l.events[0].kind == 'ProgramBegin']
    ends = [l for l in masters if l.events[-1].kind == 'ProgramEnd' and l.events[-1].ev.exit_status == 137]
    pairs = {}
    for l in tr.locations:
        pairs[l.group] = pairs.get(l.group, 0) + sum(1 for e in l.events if e.kind == 'ThreadReleaseLock')
    if len(masters) != 3 or len(ends) != 3 or len(pairs) != 3 or min(pairs.values()) == 0:
        raise Fail('mpich_kill: %d ranks with ProgramBegin, %d ending with ProgramEnd 137, pairs %s'
                   % (len(masters), len(ends), pairs))
    print('ok mpich_kill: 3 ranks recovered and unified, %d locations, pairs %s' % (len(tr.locations), pairs))


if __name__ == '__main__':
    # the options and failure reporting of durable_tests.py
    dt.CASES.clear()
    dt.CASES.update(CASES)
    sys.exit(dt.main())
