# SPDX-License-Identifier: BSD-3-Clause
"""tree_tests.py - one archive per process tree (TRACER_TREE=one).

Every case runs a process tree untraced and traced (plain LD_PRELOAD or
tracer-run) in fresh directories and compares what it did (stdout, stderr
apart from `tracer:` lines, files written, exit status or signal: the
helpers of tests/real/real_tests.py), then reads the ONE archive back with
the reference reader: exactly one archive directory, otf2-print reads it,
every location's events in time order, balanced, within ClockProperties,
one location group per process image named "<program> (pid N)", exactly one
root, every other group's creator in the archive and an exec'd image's
creator an image of the same pid, ProgramBegin first and ProgramEnd last on
every process's master location.

usage: tree_tests.py CASE --lib LIB --bindir DIR --tracer-run PATH --work DIR
(TREE_DURABLE=off in the environment: every run with TRACER_DURABLE=off, the flush writer)
"""
import glob
import os
import shutil
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'real'))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
import real_tests as rt  # noqa: E402  (clean_env, pair, compare, read_back, ...)
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

ck = rt.ck   # tests/real's Checker(stop=True)
CASES = {}

# TREE_DURABLE=<value> (ctest tree.flush_*: off): every run with TRACER_DURABLE=<value>
if os.environ.get('TREE_DURABLE'):
    _clean_env = rt.clean_env

    def _durable_env(extra=None):
        env = _clean_env(extra)
        env.setdefault('TRACER_DURABLE', os.environ['TREE_DURABLE'])
        return env
    rt.clean_env = _durable_env
GNAME = re.compile(r'^(.+) \(pid (\d+)\)$')


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Group:
    def __init__(self, ref, name, creator):
        m = GNAME.match(name)
        if not m:
            ck.fail('location group %r is not named "<program> (pid N)"' % name)
        self.ref, self.name, self.prog, self.pid, self.creator = ref, name, m.group(1), int(m.group(2)), creator
        self.locs = []
        self.master = None   # location id of its master thread


def groups_of(anchor):
    """{ref: Group} with their locations (reference reader)."""
    import otf2
    out = {}
    with otf2.reader.open(anchor) as r:
        for g in r.definitions.location_groups:
            c = g.creating_location_group
            out[g._ref] = Group(g._ref, g.name, c._ref if c is not None else None)
        for loc in r.definitions.locations:
            out[loc.group._ref].locs.append(loc.name)
            if loc.name == 'Master thread':
                out[loc.group._ref].master = loc._ref
    return out


def parts_records(procs):
    """{(part, kind): payload} of DIR/procs/parts.tdefs (preload/tree/tree_files.h:
    "TRPART1 <part> <kind> <len>\\n" <len bytes> "\\n", the last of a kind
    wins); a record that is not whole fails the test (no process was cut)."""
    out = {}
    try:
        b = open(os.path.join(procs, 'parts.tdefs'), 'rb').read()
    except FileNotFoundError:
        return out
    o = 0
    while o < len(b):
        m = re.match(rb'TRPART1 (\d+) ([de]) (\d+)\n', b[o:o + 64])
        if not m:
            ck.fail('%s/parts.tdefs: no record header at byte %d' % (procs, o))
        body = o + m.end()
        n = int(m.group(3))
        if b[body + n:body + n + 1] != b'\n':
            ck.fail('%s/parts.tdefs: record at byte %d is cut' % (procs, o))
        out[(int(m.group(1)), m.group(2).decode())] = b[body:body + n]
        o = body + n + 1
    return out


def check_tree(prefix, progs=None, exit_status=None, min_groups=1, all_ended=False):
    """The checks of the module docstring on the one archive at prefix;
    progs: {program: exact number of images}; all_ended: no process was
    killed, so every part left in DIR/procs ended with its packed
    definitions (no leftover of a fork child that exec'd). Returns (groups,
    trace)."""
    dirs = rt.archives(prefix) + [d for d in glob.glob(prefix + '*') if os.path.isdir(d) and d != prefix]
    if sorted(set(dirs)) != [prefix]:
        ck.fail('expected one archive directory %s, found %s' % (prefix, sorted(set(dirs))))
    anchor = os.path.join(prefix, 'traces.otf2')
    if not os.path.exists(anchor):
        ck.fail('%s: no traces.otf2 (%s)' % (prefix, sorted(os.listdir(prefix))))
    # no leftover of the unification (written in place, or aside and
    # moved) or of a claim (it becomes the root's anchor)
    left = [f for f in os.listdir(prefix) if f.startswith('.tracer-merge.') or f.endswith('.part')]
    if os.path.isdir(os.path.join(prefix, 'procs')):
        left += ['procs/' + f for f in os.listdir(os.path.join(prefix, 'procs'))
                 if f.endswith('.part') or (all_ended and f.endswith('.claim'))]
    if left:
        ck.fail('%s: leftovers %r' % (prefix, sorted(left)))
    # all_ended (no process was killed): every part is events and packed
    # definitions, an anchor and global definitions only the root's (part
    # 0: standalone when alone; a killed member's are recovered from its
    # snapshot), nothing else left (a fork child that exec'd)
    procs = os.path.join(prefix, 'procs')
    if all_ended and os.path.isdir(procs):
        names = set(os.listdir(procs))
        recs = parts_records(procs)
        for part in sorted(f for f in names if re.match(r'^proc\d+$', f)):
            if part + '.tdefs' not in names and (int(part[4:]), 'd') not in recs:
                ck.fail('%s: part %s without its packed definitions (%s)' % (procs, part, sorted(names)))
            if part != 'proc0' and (part + '.otf2' in names or part + '.def' in names):
                ck.fail('%s: member %s wrote an anchor or global definitions of its own' % (procs, part))
    tr = tc.load(anchor)
    tc.otf2_print(tr.anchor)
    tc.check_timestamps(tr)
    tc.check_nesting(tr)
    tc.check_clock_range(tr)
    gs = groups_of(anchor)
    if len(gs) < min_groups:
        ck.fail('%d location groups, expected at least %d' % (len(gs), min_groups))
    roots = [g for g in gs.values() if g.creator is None]
    if len(roots) != 1:
        ck.fail('%d root groups (no creator): %s' % (len(roots), [g.name for g in roots]))
    for g in gs.values():
        if g.creator is not None and g.creator not in gs:
            ck.fail('%s: creator %r not in the archive' % (g.name, g.creator))
        # the chain of creators reaches the root without a cycle
        seen, c = set(), g
        while c.creator is not None:
            if c.ref in seen:
                ck.fail('%s: creator cycle' % g.name)
            seen.add(c.ref)
            c = gs[c.creator]
        if 'Master thread' not in g.locs:
            ck.fail('%s: no master location (%s)' % (g.name, g.locs))
    for g in gs.values():
        kinds = [e.kind for e in tr.loc(g.master).events]
        if not kinds or kinds[0] != 'ProgramBegin' or kinds[-1] != 'ProgramEnd':
            ck.fail('%s: master events %s ... %s' % (g.name, kinds[:2], kinds[-2:]))
    root = roots[0]
    rl = tr.loc(root.master)
    if exit_status is not None and rl.events[-1].ev.exit_status != exit_status:
        ck.fail('root %s: ProgramEnd %d, expected %d' % (root.name, rl.events[-1].ev.exit_status, exit_status))
    if progs:
        have = {}
        for g in gs.values():
            have[g.prog] = have.get(g.prog, 0) + 1
        for p, n in progs.items():
            if have.get(p, 0) != n:
                ck.fail('%d images of %s, expected %d (groups: %s)' % (have.get(p, 0), p, n,
                                                                         sorted(g.name for g in gs.values())))
    return gs, tr


def exec_links(gs):
    """Images whose creator has the same pid (exec)."""
    return [g for g in gs.values() if g.creator is not None and gs[g.creator].pid == g.pid]


def pair(name, argv, via_run=False, env=None, setup=None, timeout=300):
    """Untraced and traced run of argv compared (rt.compare); returns (base, traced result, prefix)."""
    base, u, t = rt.fresh(name)
    for d in (u, t):
        if setup:
            setup(d)
    prefix = os.path.join(base, 'archive')
    envt = rt.clean_env(env)
    if via_run:
        argvt = rt.tracer_run_argv(prefix, argv)
    else:
        envt.update({'LD_PRELOAD': rt.A.lib, 'TRACER_OUTPUT': prefix})
        argvt = argv
    ru = rc.run_timed(argv, u, rt.clean_env(env), timeout)
    rtr = rc.run_timed(argvt, t, envt, timeout)
    rt.compare(name, ru, rtr, u, t)
    return ru, rtr, prefix


def one_summary(name, r, want='processes'):
    lines = rc.tracer_lines(r.err)
    if len(lines) != 1 or want not in lines[0] or '/traces.otf2' not in lines[0]:
        ck.fail('%s: stderr should be the one summary line of the tree, is %r' % (name, lines))
    return lines[0]


PIPELINE = ['sh', '-c', 'seq 1000 | sort -r | head -5']


@case
def pipeline():
    """A shell pipeline of Debian tools: plain LD_PRELOAD and tracer-run."""
    for via_run in (False, True):
        name = 'pipeline_run' if via_run else 'pipeline_preload'
        ru, r, prefix = pair(name, PIPELINE, via_run=via_run)
        line = one_summary(name, r)
        gs, tr = check_tree(prefix, {'seq': 1, 'sort': 1, 'head': 1}, exit_status=0, all_ended=True)
        # sh, then per command its fork child (which redirects) and the image it execs
        shs = [g for g in gs.values() if g.prog == 'sh']
        if len(gs) != 7 or len(shs) != 4 or len(exec_links(gs)) != 3:
            ck.fail('%s: groups %s' % (name, sorted(g.name for g in gs.values())))
        print('ok %s: %d groups, %d events; %s' % (name, len(gs), len(tr.events()), line))


@case
def pid_namespace():
    """unshare -p -f (as root): the shell is pid 1 of a pid namespace of its
    own, unshare waits for it and ends last; once that init has ended no
    process can be made in the namespace, so the unification the root
    starts at its end runs in its own namespace again (before: "unifying
    the process tree ... failed", no traces.otf2). Plain LD_PRELOAD and
    tracer-run."""
    if os.geteuid() != 0 or not shutil.which('unshare'):
        raise rc.Skip('needs root and unshare')
    argv = ['unshare', '-p', '-f', 'sh', '-c', 'echo in namespace; seq 3 | sort -r']
    for via_run in (False, True):
        name = 'pid_namespace_run' if via_run else 'pid_namespace_preload'
        ru, r, prefix = pair(name, argv, via_run=via_run)
        one_summary(name, r)
        gs, tr = check_tree(prefix, {'unshare': 1, 'seq': 1, 'sort': 1}, exit_status=0, all_ended=True)
        print('ok %s: %d groups %s' % (name, len(gs), sorted(g.prog for g in gs.values())))


@case
def spawn():
    """fork (no exec), fork+exec, posix_spawn, system(), popen, vfork+exec, fork+execve without
    TRACER_OUTPUT in its environment (found through the registry) of a C program."""
    ru, r, prefix = pair('spawn', [rt.bin_('tree_spawn'), 'all'])
    if ru.rc != 3:
        ck.fail('spawn: untraced %s' % ru.status())
    line = one_summary('spawn', r)
    gs, tr = check_tree(prefix, {'tree_spawn': 2, 'echo': 6, 'sh': 2}, exit_status=3, all_ended=True)
    root = [g for g in gs.values() if g.creator is None][0]
    direct = sorted(g.prog for g in gs.values() if g.creator == root.ref)
    # fork child, fork+exec (nothing recorded before exec: no part of its
    # own), posix_spawn, system's sh, popen's sh, vfork+exec, fork+execve
    if direct != ['echo', 'echo', 'echo', 'echo', 'sh', 'sh', 'tree_spawn']:
        ck.fail('spawn: children of the root %s' % direct)
    for g in gs.values():
        if g.prog == 'echo' and gs[g.creator].prog == 'sh' and gs[g.creator].pid == g.pid:
            ck.fail('spawn: %s is an exec of its sh' % g.name)   # sh -c forks, then execs echo
    print('ok spawn: %d groups %s; %s' % (len(gs), sorted(g.prog for g in gs.values()), line))


@case
def late():
    """Fork children whose first traced call comes late (their archive waits for it): one computes 200 ms, then
    writes a file; one is ended by SIGTERM before it made any. Each is a process of the tree with its ProgramBegin
    at the fork; the writer's I/O is recorded after its 200 ms, the other ends with ProgramEnd 143."""
    ru, r, prefix = pair('late', [rt.bin_('tree_spawn'), 'late', 'late.txt'])
    if ru.rc != 0 or b'late writer: 0' not in ru.out or b'late waiter: 143' not in ru.out:
        ck.fail('late: untraced %s %r' % (ru.status(), ru.out))
    one_summary('late', r)
    gs, tr = check_tree(prefix, {'tree_spawn': 3}, exit_status=0, all_ended=True)
    root = [g for g in gs.values() if g.creator is None][0]
    kids = sorted((g for g in gs.values() if g.creator == root.ref), key=lambda g: g.pid)
    if len(kids) != 2:
        ck.fail('late: children of the root %s' % sorted(g.name for g in gs.values()))
    res = tr.clock.timer_resolution
    writer, waiter = [tr.loc(g.master).events for g in kids]
    io = [e for e in writer if e.kind.startswith('Io')]
    if not io or (io[0].time - writer[0].time) / res < 0.15:
        ck.fail('late: the writer\'s I/O %s, %.3f s after its ProgramBegin (expected >= 0.15)' % (
            [e.kind for e in io][:4], (io[0].time - writer[0].time) / res if io else -1))
    if writer[-1].ev.exit_status != 0 or waiter[-1].ev.exit_status != 128 + signal.SIGTERM:
        ck.fail('late: ProgramEnd %d and %d, expected 0 and 143' % (writer[-1].ev.exit_status,
                                                                     waiter[-1].ev.exit_status))
    # each child's ProgramBegin is at its fork: before the root's wait for it ends
    print('ok late: %d groups; the writer\'s first I/O %.3f s after its ProgramBegin, %d I/O events; the waiter: %s' % (
        len(gs), (io[0].time - writer[0].time) / res, len(io), [e.kind for e in waiter]))


@case
def python_subprocess():
    """python3 subprocess.run (vfork/fork + exec in _posixsubprocess) of a program and a shell pipeline."""
    code = ('import subprocess, sys\n'
            'subprocess.run(["/bin/echo", "child"], check=True)\n'
            'out = subprocess.run("seq 3 | tac", shell=True, capture_output=True, text=True).stdout\n'
            'print(out.split())\n'
            'sys.exit(subprocess.run(["sh", "-c", "exit 4"]).returncode)\n')
    ru, r, prefix = pair('python_subprocess', ['/usr/bin/python3', '-c', code])
    if ru.rc != 4:
        ck.fail('python_subprocess: untraced %s' % ru.status())
    one_summary('python_subprocess', r)
    gs, tr = check_tree(prefix, {'python3': 1, 'echo': 1, 'seq': 1, 'tac': 1}, exit_status=4,
                          all_ended=True)
    py = [g for g in gs.values() if g.prog == 'python3'][0]
    if py.creator is not None:
        ck.fail('python_subprocess: python3 is not the root')
    print('ok python_subprocess: %d groups %s' % (len(gs), sorted(g.prog for g in gs.values())))


MAKEFILE = '''CC = cc
CFLAGS = -O1
OBJS = a.o b.o c.o d.o main.o
prog: $(OBJS)
\t$(CC) -o prog $(OBJS)
%.o: %.c
\t$(CC) $(CFLAGS) -c $< -o $@
'''


def make_project(d):
    with open(os.path.join(d, 'Makefile'), 'w') as f:
        f.write(MAKEFILE)
    for n in 'abcd':
        with open(os.path.join(d, n + '.c'), 'w') as f:
            f.write('int f_%s(int x) { return x * %d + 1; }\n' % (n, ord(n)))
    with open(os.path.join(d, 'main.c'), 'w') as f:
        f.write('#include <stdio.h>\n' + ''.join('int f_%s(int);\n' % n for n in 'abcd') +
                'int main(void) { printf("%d\\n", f_a(1) + f_b(2) + f_c(3) + f_d(4)); return 0; }\n')


@case
def make_j2():
    """make -j2 of a small generated C project under tracer-run: same objects and program."""
    rt.need('make')
    rt.need('cc')
    base, u, t = rt.fresh('make_j2')
    for d in (u, t):
        make_project(d)
    prefix = os.path.join(base, 'archive')
    ru = rc.run_timed(['make', '-j2'], u, rt.clean_env())
    r = rc.run_timed(rt.tracer_run_argv(prefix, ['make', '-j2']), t, rt.clean_env())
    if ru.rc != 0 or r.rc != 0:
        ck.fail('make_j2: untraced %s, traced %s: %s' % (ru.status(), r.status(), r.err[-600:]))
    if sorted(ru.out.splitlines()) != sorted(r.out.splitlines()):
        ck.fail('make_j2: output differs:\n%s\n%s' % (ru.out.decode(), r.out.decode()))
    if rc.without_tracer_lines(ru.err) != rc.without_tracer_lines(r.err):
        ck.fail('make_j2: stderr differs: %r' % rc.without_tracer_lines(r.err))
    rc.compare_dirs(ck, u, t)
    line = one_summary('make_j2', r)
    gs, tr = check_tree(prefix, {'make': 1}, exit_status=0, min_groups=12, all_ended=True)
    progs = {}
    for g in gs.values():
        progs[g.prog] = progs.get(g.prog, 0) + 1
    if progs.get('cc', 0) + progs.get('gcc', 0) < 6 or progs.get('as', 0) < 5:
        ck.fail('make_j2: compiler images %s' % progs)
    print('ok make_j2: %d groups %s; %s' % (len(gs), progs, line))


@case
def killed_child():
    """A child killed by SIGKILL at once (before its first durability tick, one interval after its start: left out,
    one line in the merge log; the flush writer too) and one killed by SIGTERM (its part has ProgramEnd 143).
    Parts recovered after a tick: durable.tree_kill, durable.tree_kill_child."""
    # (each child kills itself: the shell's "Killed"/"Terminated" lines do not depend on timing)
    cmd = ['sh', '-c', 'sh -c \'echo child; kill -KILL $$\'; echo killed $?; '
           'sh -c \'kill -TERM $$\'; echo term $?; exit 0']
    ru, r, prefix = pair('killed_child', cmd)
    one_summary('killed_child', r)
    gs, tr = check_tree(prefix, exit_status=0)
    ends = [l.events[-1].ev.exit_status for l in tr.locations if l.name == 'Master thread']
    log = open(os.path.join(prefix, 'procs', 'tracer-merge.log')).read()
    # nothing of the SIGKILLed one is saved (it never waited, and lived less than an interval); sh and the
    # SIGTERMed sh; the SIGKILLed one named in the log
    if 128 + signal.SIGTERM not in ends or 'left out' not in log or len(gs) != 2:
        ck.fail('killed_child: %d groups, exit statuses %s, merge log %r' % (len(gs), ends, log))
    print('ok killed_child: %d groups, exit statuses %s; merge log: %s' % (len(gs), sorted(ends),
                                                                          log.strip().replace('\n', ' | ')[:300]))


@case
def daemon():
    """A daemon grandchild outlives the root (plain LD_PRELOAD): the root says the archive comes when the last
    process ends; the grandchild unifies."""
    base, u, t = rt.fresh('daemon')
    prefix = os.path.join(base, 'archive')
    argv = [rt.bin_('tree_spawn'), 'daemon']
    ru = rc.run_timed(argv + [os.path.join(u, 'done.txt')], u, rt.clean_env())
    r = rc.run_timed(argv + [os.path.join(t, 'done.txt')], t,
               rt.clean_env({'LD_PRELOAD': rt.A.lib, 'TRACER_OUTPUT': prefix}))
    if ru.rc != r.rc or ru.out != r.out:
        ck.fail('daemon: untraced %s %r, traced %s %r' % (ru.status(), ru.out, r.status(), r.out))
    lines = rc.tracer_lines(r.err)
    if len(lines) != 1 or 'is written when the last' not in lines[0]:
        ck.fail('daemon: root summary %r' % lines)
    # (the daemon keeps the pipes of stdout/stderr: run() returned after it ended)
    anchor, done = os.path.join(prefix, 'traces.otf2'), os.path.join(t, 'done.txt')
    for _ in range(200):
        if os.path.exists(done) and os.path.exists(anchor):
            break
        time.sleep(0.1)
    if not os.path.exists(anchor) or os.stat(anchor).st_mtime < os.stat(done).st_mtime:
        ck.fail('daemon: traces.otf2 %s' % ('written before the daemon ended' if os.path.exists(anchor)
                                               else 'never written'))
    gs, tr = check_tree(prefix, {'tree_spawn': 3}, exit_status=0)
    for _ in range(100):   # the untraced daemon
        if os.path.exists(os.path.join(u, 'done.txt')):
            break
        time.sleep(0.1)
    rc.compare_dirs(ck, u, t)
    print('ok daemon: root: %s; %d groups after the daemon ended' % (lines[0], len(gs)))


@case
def tracer_run_status():
    """tracer-run forwards the tree's exit status and signal death unchanged, one archive each."""
    base, u, t = rt.fresh('tracer_run_status')
    cases = [(['sh', '-c', 'sh -c "exit 3"; exit 7'], 7), (['sh', '-c', '(sleep 0.2; true) & kill -TERM $$'],
                                                           -signal.SIGTERM),
             (['sh', '-c', 'sh -c "kill -SEGV \\$\\$"; kill -SEGV $$'], -signal.SIGSEGV)]
    for i, (argv, want) in enumerate(cases):
        ru = rc.run_timed(argv, u, rt.clean_env())
        prefix = os.path.join(base, 'archive%d' % i)
        r = rc.run_timed(rt.tracer_run_argv(prefix, argv), t, rt.clean_env())
        if ru.rc != want or r.rc != want:
            ck.fail('tracer_run_status: %s: untraced %s, traced %s' % (argv, ru.status(), r.status()))
        one_summary('tracer_run_status', r)
        gs, tr = check_tree(prefix, exit_status=want if want >= 0 else 128 - want, min_groups=2)
    print('ok tracer_run_status: exit 7, SIGTERM, SIGSEGV forwarded; one archive each')


def children_of(pid):
    """The pids of pid's children (/proc/<pid>/task/*/children)."""
    kids = []
    for f in glob.glob('/proc/%d/task/*/children' % pid):
        try:
            kids += [int(x) for x in open(f).read().split()]
        except OSError:
            pass
    return kids


@case
def tracer_run_killed():
    """kill -KILL of tracer-run's pid ends the program as it ends the untraced program (the shell a job control
    `tracer-run ./app &` gives that pid); the archive is then recovered and unified all the same, its one line on
    tracer-run's stderr (by tracer-run's watcher: TRACER_DURABLE; the flush writer: the parts that ended)."""
    import subprocess
    base, u, t = rt.fresh('tracer_run_killed')
    # sh waits for true, then for sleep (a durability tick at each wait); killed while sleep runs, which goes on
    # (untraced too) and ends normally: the tree ends with it
    argv = ['sh', '-c', '/bin/true; sleep 2; echo never']
    untraced = subprocess.Popen(argv, cwd=u, env=rt.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    untraced.kill()
    uout, _ = untraced.communicate(timeout=60)
    prefix = os.path.join(base, 'archive')
    p = subprocess.Popen(rt.tracer_run_argv(prefix, argv), cwd=t, env=rt.clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    deadline = time.time() + 30
    kids = []
    while not kids and time.time() < deadline:
        time.sleep(0.1)
        kids = [k for k in children_of(p.pid)]
    time.sleep(1.0)   # past the first durability interval: the shell has waited for a child (a tick)
    kids = children_of(p.pid)
    p.kill()
    left = [k for k in kids if not rc.wait_ended(k, 10)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    out, err = p.communicate(timeout=120)   # (the watcher holds stderr until it is done)
    if untraced.returncode != -signal.SIGKILL or p.returncode != -signal.SIGKILL or not kids or left or \
            out != uout.decode():
        ck.fail('tracer_run_killed: untraced %s, traced %s; program pids %s, still running %s' %
                (untraced.returncode, p.returncode, kids, left))
    lines = rc.tracer_lines(err)
    durable = os.environ.get('TREE_DURABLE') != 'off'
    if len(lines) != 1 or '/traces.otf2' not in lines[0] or (durable and 'recovered' not in lines[0]):
        ck.fail('tracer_run_killed: stderr should be one line of the recovered archive, is %r' % lines)
    if durable:
        gs, tr = check_tree(prefix, min_groups=3)   # sh (recovered), true, sleep
        ends = sorted(l.events[-1].ev.exit_status for l in tr.locations if l.name == 'Master thread')
        if ends != [0, 0, 128 + signal.SIGKILL]:
            ck.fail('tracer_run_killed: exit statuses %s, expected sh 137, true and sleep 0' % ends)
    else:
        # the flush writer: the killed shell's part is lost, its children's parts have no creator
        tc.otf2_print(tc.load(os.path.join(prefix, 'traces.otf2')).anchor)
    print('ok tracer_run_killed: program ended with tracer-run; %s' % lines[0].strip())


@case
def same_output():
    """Two tracer-run started together with one -o: one archive each, DIR and DIR.1, both complete, each run's
    summary naming its own."""
    import subprocess
    base, u, t = rt.fresh('same_output')
    prefix = os.path.join(base, 'archive')
    argv = ['sh', '-c', 'sleep 0.3; /bin/true']
    ps = [subprocess.Popen(rt.tracer_run_argv(prefix, argv), cwd=t, env=rt.clean_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in ps]
    lines = sorted(l for _, err in outs for l in rc.tracer_lines(err))
    want = sorted('%s/traces.otf2' % d for d in (prefix, prefix + '.1'))
    named = sorted(re.sub(r'^tracer: archive (\S+):.*', r'\1', l).strip() for l in lines)
    if any(p.returncode for p in ps) or named != want:
        ck.fail('same_output: exit %s, summaries %r (expected one each for %s)' % ([p.returncode for p in ps],
                                                                                  lines, want))
    for d in (prefix, prefix + '.1'):
        tr = tc.load(os.path.join(d, 'traces.otf2'))
        tc.otf2_print(tr.anchor)
        if len([l for l in tr.locations if l.name == 'Master thread']) != 3:
            ck.fail('same_output: %s: %d processes, expected 3 (sh, sleep, true)' % (
                d, len([l for l in tr.locations if l.name == 'Master thread'])))
    print('ok same_output: %s' % ' | '.join(l.strip() for l in lines))


@case
def separate():
    """TRACER_TREE=separate keeps one archive per process."""
    ru, r, prefix = pair('separate', PIPELINE, env={'TRACER_TREE': 'separate'})
    dirs = rt.archives(prefix)
    if len(dirs) < 4 or os.path.exists(os.path.join(prefix, 'procs')):
        ck.fail('separate: archives %s' % dirs)
    for d in dirs:
        tc.otf2_print(tc.find_anchor(d))
    print('ok separate: %d archives' % len(dirs))


if __name__ == '__main__':
    # the argument parsing and failure reporting of tests/real (same options)
    rt.CASES.clear()
    rt.CASES.update(CASES)
    sys.exit(rt.main())
