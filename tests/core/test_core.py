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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import core_lib as cl  # noqa: E402
from core_lib import *  # noqa: E402,F401,F403
import core_cases_settings  # noqa: E402
import core_cases_signals  # noqa: E402


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
    # a lone process leaves its archive and nothing else: no procs/, no
    # claim (it became the anchor), no .part
    check(sorted(os.listdir(d)) == ['traces', 'traces.def', 'traces.otf2'], 'archive files %r' % sorted(os.listdir(d)))
    check(sorted(os.listdir(os.path.join(d, 'traces'))) == ['0.def', '0.evt'],
          'location files %r' % sorted(os.listdir(os.path.join(d, 'traces'))))


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
            forks = [x for x in os.listdir(cl.WORK) if x.startswith('o_fork-fork')]
            check(len(forks) == 1, 'child archives %r' % forks)
            child = tc.load(os.path.join(cl.WORK, forks[0]))
            tc.check_all(child, exit_status=0)
            check(len(child.locations) == 1 and enters(child, 'outer') == 2,
                  'child: %r, %d outer' % (child.locations, enters(child, 'outer')))
            # nothing of the parent's ended threads in the child's directory
            check(sorted(os.listdir(os.path.join(cl.WORK, forks[0], 'traces'))) == ['0.def', '0.evt'],
                  'child files %r' % os.listdir(os.path.join(cl.WORK, forks[0], 'traces')))


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
    forks = [x for x in os.listdir(cl.WORK) if x.startswith('out-fork')]
    check(len(forks) == 1, 'child archives %r' % forks)
    child = tc.load(os.path.join(cl.WORK, forks[0]))
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


def case_daemon():
    # daemon(): the parent ends through glibc's internal _exit (0-byte
    # anchor); now it writes its archive, and the child (the daemon) records
    # into its fork archive as after fork
    done = os.path.join(cl.WORK, 'done_untraced')
    base = run([PROG, 'daemon', done])
    for _ in range(400):
        if os.path.exists(done):
            break
        time.sleep(0.05)
    d = os.path.join(cl.WORK, 'out')
    p = run([PROG, 'daemon', os.path.join(cl.WORK, 'done')], lib=LIB, env={'TRACER_OUTPUT': d, 'TRACER_TREE': 'separate'})
    check(p.returncode == base.returncode == 0 and p.stdout == base.stdout == 'mode daemon\n',
          'parent: %d %r vs %d %r' % (p.returncode, p.stdout, base.returncode, base.stdout))
    parent = tc.load(d)
    tc.check_all(parent, exit_status=0)
    check(enters(parent, 'outer') == 2 and enters(parent, 'before_daemon') == 1, 'parent events')
    forks = [x for x in os.listdir(cl.WORK) if x.startswith('out-fork')]
    check(len(forks) == 1, 'child archives %r' % forks)
    wait_archive(os.path.join(cl.WORK, forks[0]))
    child = tc.load(os.path.join(cl.WORK, forks[0]))
    tc.check_all(child, exit_status=4)
    check(enters(child, 'outer') == 3, 'child events %d' % enters(child, 'outer'))
    check(os.path.exists(os.path.join(cl.WORK, 'done')), 'the daemon did not run to its end')


def case_exec_fail():
    # an exec that fails left the archive closed and the rest untraced
    with open(os.path.join(cl.WORK, 'badinterp.sh'), 'w') as fh:
        fh.write('#!/nonexistent/sh\necho hi\n')
    me = open(PROG, 'rb').read()
    # the program itself with e_machine changed (ENOEXEC), and with its
    # PT_INTERP path pointing nowhere (ENOENT)
    with open(os.path.join(cl.WORK, 'foreign.elf'), 'wb') as fh:
        fh.write(me[:18] + b'\x28\x00' + me[20:])
    i = me.index(b'/lib64/ld-linux-x86-64.so.2') if b'/lib64/ld-linux-x86-64.so.2' in me else -1
    with open(os.path.join(cl.WORK, 'noldso.elf'), 'wb') as fh:
        fh.write(me if i < 0 else me[:i] + b'/nonexistent/ld-linux.so' + me[i + 24:])
    for f in ('badinterp.sh', 'foreign.elf', 'noldso.elf'):
        os.chmod(os.path.join(cl.WORK, f), 0o755)
    p, d = traced(['exec_fail'])
    check(p.returncode == 8 and p.stdout.count(': ') == 8, 'rc %d %r' % (p.returncode, p.stdout))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=8)
    check(enters(tr, 'outer') == 3, 'events after the failed execs: %d outer' % enters(tr, 'outer'))
    check(len(tracer_lines(p.stderr)) == 1, 'tracer lines %r' % tracer_lines(p.stderr))
    check(not os.path.exists(d + '.1'), 'a second archive')


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
    tr = tc.load(os.path.join(cl.WORK, 'rel'))
    tc.check_all(tr, exit_status=0)
    check(enters(tr, 'outer') == 3, 'events')


def case_lazy_init():
    # regions recorded from .preinit_array, before libtracer's constructor
    p, d = traced(['basic'], env={'CORE_PREINIT': '1'})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(tr.master.events[0].kind == 'ProgramBegin', 'ProgramBegin not first')
    check(enters(tr, 'preinit') == 1 and enters(tr, 'outer') == 10, 'preinit region')


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
        e = {'TRACER_OUTPUT': os.path.join(cl.WORK, 'dyn%d' % i), 'TRACER_TEST_DYNSYM': 'check'}
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
    d = os.path.join(cl.WORK, 'run')
    e = rc.clean_env()
    e['TRACER_LIB'] = LIB
    p = subprocess.run([TRACER_RUN, '-o', d, '--buffer', '4M', '--clock', 'monotonic', '-q', '--', PROG, 'basic'],
                       env=e, cwd=cl.WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
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


# every case_<name> here and in the case modules (CTest runs one case per test)
CASES = {n[5:]: f for m in (sys.modules[__name__], core_cases_signals, core_cases_settings)
         for n, f in vars(m).items() if n.startswith('case_')}


def main():
    case = sys.argv[1]
    fn = CASES.get(case)
    if not fn:
        print('unknown case %s' % case)
        return 2
    cl.WORK = os.path.join(cl.WORK, case)
    shutil.rmtree(cl.WORK, ignore_errors=True)
    os.makedirs(cl.WORK)
    try:
        fn()
    except (rc.CheckFailed, tc.CheckError) as e:
        print('FAIL %s: %s' % (case, e))
        return 1
    print('ok %s' % case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
