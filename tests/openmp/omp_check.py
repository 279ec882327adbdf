#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs an OpenMP test program untraced and traced (libtracer.so preloaded),
compares the two runs and checks the archive with the reference reader
(tests/lib/runcheck.py; otf2-print, python3-otf2 through tests/lib/tracecheck.py).

  basic  omp_basic.c: 20 parallel regions of 4 threads (forks, joins, team
         begins/ends), barriers (4 threads x 20 x 3), the dynamic and the
         ordered loops (ordered entries as lock acquisitions),
         critical / named critical / omp lock / nest lock acquisitions (known
         counts, per-lock acquisition orders 1..n in time order, every
         acquire released by the same location), a nested parallel region
         (two teams open on one location), team records nesting with the
         "omp parallel" region, fork before and join after the master's team.
  nopth  basic with TRACER_PTHREAD=off: the OpenMP callbacks create the
         worker threads' locations themselves (no ThreadBegin records).
  fortran omp_fortran.f90 (gfortran): 5 regions of 4 threads: 5 forks, 20
         teams, 200 critical and 20 omp_set_lock (Fortran binding)
         acquisitions, 20 barriers.
  tasks  omp_tasks.c: fib(12) = 464 explicit tasks, each created once,
         switched to, completed once after its creation, on the OPENMP team.
  off    TRACER_OPENMP=off: the same output, no OpenMP record at all;
         TRACER_OPENMP=maybe: one "tracer:" line, traced as with on.
  cross  omp_cross.c built with clang (PROGRAM) and gcc (the last argument):
         both archives have the same number of each OpenMP record kind where
         both runtimes can see it (forks, joins, teams per location, every
         omp region, OpenMP lock acquisitions, tasks (taskloop tasks too), each
         created once, run and completed), and the known counts.
  shrink omp_shrink.c: 3 regions of 4 threads, then one of 2 and a 300 ms
         sleep. Every location's teams end (ThreadTeamEnd) before its
         ThreadEnd, the last record; with gcc the 2 surplus libgomp workers
         end while idle (their ThreadEnd >= 150 ms before ProgramEnd).
  cancel omp_cancel.c with OMP_CANCELLATION=true: with gcc the 2 cancel
         constructs are 2 "omp cancel" regions, the cancellation points at
         least the 10 iterations before the loop's cancel (libomp: not
         recorded, the same output).
  mpi    omp_mpi.c at 2 ranks (real mpirun): the unified archive has per rank
         5 forks/joins, 10 team begins/ends, 10 critical and 10 barrier
         entries, 10 OpenMP lock acquisitions, and the 5 MPI_Allreduce.

usage: omp_check.py MODE PROGRAM LIBTRACER WORKDIR [clang|gcc [MPIRUN | GCC_PROGRAM]]

gcc (libgomp): exactly one "tracer:" line names what is not recorded.
"""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import otf2  # noqa: E402
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

MODE, PROG, LIB, WORK = sys.argv[1:5]
COMPILER = sys.argv[5] if len(sys.argv) > 5 else 'clang'
MPIRUN = sys.argv[6] if len(sys.argv) > 6 else 'mpirun'
NP = 2
ck = rc.Checker()

NPAR, NTHR, NITER, NBAR, NORD = 20, 4, 40, 3, 8
NESTED_TEAMS = 2 + 2 * 2            # outer team of 2, two inner teams of 2
NTASKS = 464                        # fib(12) with 2 tasks per call with n >= 2


def run(out=None, extra=None, prog=PROG):
    """prog untraced (out None) or traced into out, with extra variables
    (runcheck's clean environment); at NP ranks (real mpirun) in mode mpi."""
    extra = dict(extra or {})
    if MODE == 'mpi':
        if out:
            extra['TRACER_OUTPUT'] = out
        return rc.run_mpi(MPIRUN, NP, [prog], ['%s=%s' % kv for kv in extra.items()],
                          lib=LIB if out else None, timeout=120)
    if out:
        return rc.run_traced([prog], LIB, out, extra, timeout=120)[0]
    return rc.run_untraced([prog], extra, timeout=120)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
if MODE == 'cancel':
    os.environ['OMP_CANCELLATION'] = 'true'   # untraced and traced runs
base = run()
env = {}
if MODE == 'off':
    env['TRACER_OPENMP'] = 'off'
NOPTH = MODE == 'nopth'
if NOPTH:
    env['TRACER_PTHREAD'] = 'off'
    MODE = 'basic'
traced = run(os.path.join(WORK, 'trace'), env)
ck.expect(base.returncode == 0, "untraced run exit %d" % base.returncode)
rc.compare(ck, base, traced)
GOMP_LINE = 'tracer: OpenMP (libgomp, no OMPT): not recorded:'
gomp_lines = [l for l in traced.stderr.splitlines() if l.startswith(GOMP_LINE)]
want = (NP if MODE == 'mpi' else 1) if COMPILER == 'gcc' and MODE != 'off' else 0
ck.expect(len(gomp_lines) == want, "%d lines %r (want %d)" % (len(gomp_lines), GOMP_LINE, want))
bad = [l for l in traced.stderr.splitlines() if l.startswith('tracer:') and not l.startswith(GOMP_LINE) and
       ('error' in l or 'OpenMP' in l or 'warning' in l)]
ck.expect(not bad, "unexpected tracer lines: %s" % bad)

tr = tc.load(os.path.join(WORK, 'trace'))
tc.otf2_print(tr.anchor, '-Werror')
tc.check_all(tr)
P = otf2.Paradigm.OPENMP


def omp_events(kind):
    return [e for l in tr.locations for e in l.events if e.kind == kind]


def count(kind, region=None):
    return sum(1 for l in tr.locations for e in l.events
               if e.kind == kind and (region is None or e.region == region))


if MODE == 'off':
    # a bad value: one "tracer:" line naming it, the default (on) is used
    bad_run = run(os.path.join(WORK, 'bad'), {'TRACER_OPENMP': 'maybe'})
    lines = [l for l in bad_run.stderr.splitlines() if 'TRACER_OPENMP' in l]
    ck.expect(len(lines) == 1 and lines[0].startswith('tracer:'), "TRACER_OPENMP=maybe: %s" % lines)
    ck.expect(bad_run.stdout == base.stdout and bad_run.returncode == base.returncode, "TRACER_OPENMP=maybe: run differs")
    bt = tc.load(os.path.join(WORK, 'bad'))
    ck.expect(sum(1 for l in bt.locations for e in l.events if e.kind == 'ThreadFork') > 0,
           "TRACER_OPENMP=maybe: OpenMP not traced")
    for k in ('ThreadFork', 'ThreadJoin', 'ThreadTeamBegin', 'ThreadTeamEnd', 'ThreadTaskCreate'):
        ck.expect(count(k) == 0, "%s recorded with TRACER_OPENMP=off" % k)
    ck.expect(not any(e.ev.model == P for e in omp_events('ThreadAcquireLock')), "OpenMP lock with TRACER_OPENMP=off")
    ck.expect(not any(r.startswith('omp') for r in tr.regions if count('Enter', r)), "omp regions entered")

if MODE == 'basic':
    nteams = NPAR * NTHR + NESTED_TEAMS
    ck.expect(count('ThreadFork') == NPAR + 3, "forks %d != %d" % (count('ThreadFork'), NPAR + 3))
    ck.expect(count('ThreadJoin') == NPAR + 3, "joins %d != %d" % (count('ThreadJoin'), NPAR + 3))
    master_forks = [e for e in tr.master.events if e.kind == 'ThreadFork']
    ck.expect(len(master_forks) == NPAR + 2, "master forks %d" % len(master_forks))  # + outer and one inner
    ck.expect(all(e.ev.model == P and e.ev.number_of_requested_threads in (NTHR, 2) for e in master_forks),
           "fork model/threads wrong")
    ck.expect(count('ThreadTeamBegin') == nteams, "team begins %d != %d" % (count('ThreadTeamBegin'), nteams))
    ck.expect(count('ThreadTeamEnd') == nteams, "team ends %d != %d" % (count('ThreadTeamEnd'), nteams))
    ck.expect(count('Enter', 'omp parallel') == nteams, "omp parallel entries %d" % count('Enter', 'omp parallel'))
    team_comm = {e.ev.thread_team.name for e in omp_events('ThreadTeamBegin')}
    ck.expect(team_comm == {'OpenMP team'}, "team comms %s" % team_comm)
    # per location: teams nest with "omp parallel"; fork < team < join on the master
    max_depth = 0
    for l in tr.locations:
        depth, stack = 0, []
        for e in l.events:
            if e.kind == 'ThreadFork':
                stack.append('fork')
            elif e.kind == 'ThreadTeamBegin':
                depth += 1
                max_depth = max(max_depth, depth)
                stack.append('team')
            elif e.kind == 'ThreadTeamEnd':
                ck.expect(stack and stack[-1] == 'team', "%s: TeamEnd without TeamBegin" % l.name)
                stack and stack.pop()
                depth -= 1
            elif e.kind == 'ThreadJoin':
                ck.expect(stack and stack[-1] == 'fork', "%s: Join not after its team" % l.name)
                stack and stack.pop()
        ck.expect(not stack, "%s: open fork/team at the end: %s" % (l.name, stack))
        idx = [i for i, e in enumerate(l.events) if e.kind in ('ThreadTeamBegin', 'ThreadTeamEnd')]
        for i in idx:
            e = l.events[i]
            # (a team still open when its thread ends, a worker idle in the
            # runtime, ends right before the thread's ThreadEnd: the
            # module's thread_ending hook)
            nb = l.events[i + 1] if e.kind == 'ThreadTeamBegin' else l.events[i - 1]
            want = 'Enter' if e.kind == 'ThreadTeamBegin' else 'Leave'
            ck.expect(nb.kind == want and nb.region == 'omp parallel',
                   "%s: %s not next to %s omp parallel" % (l.name, e.kind, want))
    ck.expect(max_depth == 2, "nested parallel: max team depth %d != 2" % max_depth)
    # time order across threads: every team lies inside the fork..join of a
    # region (fork..join spans of one master are disjoint: a team ended late,
    # in the next region, lies in none)
    # (libomp never ends the teams of workers idle at exit: those end at
    # exit, after the last join; they are left out)
    spans = []
    for l in tr.locations:
        st = []
        for e in l.events:
            if e.kind == 'ThreadFork':
                st.append(e.time)
            elif e.kind == 'ThreadJoin' and st:
                spans.append((st.pop(), e.time))
    # (libgomp's workers wait in the runtime after their share: the ones idle
    # there when their thread ends (the pool shrinks for the nested region,
    # exit) end their team with the thread, right before its ThreadEnd; left
    # out too)
    last_join = max(s[1] for s in spans)
    at_exit = 0
    for l in tr.locations:
        st = []
        kinds = [e.kind for e in l.events]
        ck.expect('ThreadEnd' not in kinds or kinds[-1] == 'ThreadEnd', "%s: records after ThreadEnd" % l.name)
        for i, e in enumerate(l.events):
            if e.kind == 'ThreadTeamBegin':
                st.append(e.time)
            elif e.kind == 'ThreadTeamEnd' and st:
                b = st.pop()
                if e.time > last_join or kinds[i + 1:i + 2] == ['ThreadEnd']:
                    at_exit += 1
                    continue
                ck.expect(any(s[0] <= b and e.time <= s[1] for s in spans),
                       "%s: team %d..%d not inside a region's fork..join" % (l.name, b, e.time))
    # libomp: up to the 3 nested teams of workers idle at exit; libgomp: every
    # worker's last team (4 threads, then 2 x 2)
    ck.expect(at_exit <= (3 if COMPILER == 'clang' else NTHR - 1 + 3), "%d teams ended at exit" % at_exit)
    # the team threads are the pthreads' locations (no duplicates)
    if NOPTH:
        ck.expect(count('ThreadBegin') == 0, "ThreadBegin with TRACER_PTHREAD=off")
        ck.expect(len(tr.locations) >= NTHR, "%d locations" % len(tr.locations))
    else:
        ck.expect(len(tr.locations) == 1 + count('ThreadBegin'),
               "%d locations for %d threads + master" % (len(tr.locations), count('ThreadBegin')))
    # barriers: 3 per thread per region, on exactly 4 locations
    bars = collections.Counter(l.name for l in tr.locations for e in l.events
                               if e.kind == 'Enter' and e.region == 'omp barrier')
    ck.expect(sorted(bars.values()) == [NPAR * NBAR] * NTHR, "barriers per location %s" % dict(bars))
    ck.expect(count('Enter', 'omp for') == 2 * NPAR * NTHR, "omp for %d" % count('Enter', 'omp for'))
    ck.expect(count('Enter', 'omp ordered') == NPAR * NORD, "omp ordered %d" % count('Enter', 'omp ordered'))
    # the long double update: GOMP_atomic_start/end with gcc, a named critical with clang
    gcc = COMPILER == 'gcc'
    crit = count('Enter', 'omp critical')
    ck.expect(crit == NPAR * NITER + NPAR * NTHR * (1 if gcc else 2), "critical entries %d" % crit)
    ck.expect(count('Enter', 'omp atomic') == (NPAR * NTHR if gcc else 0), "atomic %d" % count('Enter', 'omp atomic'))
    # locks: critical + named critical + lock + nest lock (2 per thread)
    acq = [e for e in omp_events('ThreadAcquireLock') if e.ev.model == P]
    rel = [e for e in omp_events('ThreadReleaseLock') if e.ev.model == P]
    nacq = NPAR * NITER + 3 * NPAR * NTHR + 2 * NPAR * NTHR + NPAR * NORD
    ck.expect(len(acq) == nacq, "OpenMP lock acquisitions %d != %d" % (len(acq), nacq))
    ck.expect(len(rel) == nacq, "OpenMP lock releases %d != %d" % (len(rel), nacq))
    per_lock = collections.defaultdict(list)
    for e in acq:
        per_lock[e.ev.lock_id].append((e.time, e.ev.acquisition_order))
    sizes = sorted(len(v) for v in per_lock.values())
    want = [NPAR * NITER, NPAR * NTHR, 2 * NPAR * NTHR, NPAR * NORD]
    want += [NPAR * NTHR, NPAR * NTHR] if gcc else [2 * NPAR * NTHR]   # named critical (+ atomic)
    ck.expect(sizes == sorted(want),
           "acquisitions per lock %s" % sizes)
    for lid, v in per_lock.items():
        v.sort()
        orders = [o for _, o in v]
        ck.expect(orders == list(range(1, len(v) + 1)), "lock %d: orders not 1..n in time order" % lid)
    ck.expect(count('Enter', 'omp_set_lock') == NPAR * NTHR, "omp_set_lock %d" % count('Enter', 'omp_set_lock'))
    ck.expect(count('Enter', 'omp_set_nest_lock') == 2 * NPAR * NTHR,
           "omp_set_nest_lock %d" % count('Enter', 'omp_set_nest_lock'))
    for l in tr.locations:
        held = collections.Counter()
        for e in l.events:
            if e.kind == 'ThreadAcquireLock' and e.ev.model == P:
                held[e.ev.lock_id] += 1
            elif e.kind == 'ThreadReleaseLock' and e.ev.model == P:
                ck.expect(held[e.ev.lock_id] > 0, "%s: release of lock %d not held" % (l.name, e.ev.lock_id))
                held[e.ev.lock_id] -= 1
        ck.expect(not +held, "%s: locks still held %s" % (l.name, dict(+held)))
    workers = [l.name for l in tr.locations if l.name.startswith('OpenMP thread ')]
    ck.expect(len(workers) >= NTHR - 1, "workers not named 'OpenMP thread N': %s" % [l.name for l in tr.locations])

if MODE == 'fortran':
    ck.expect(count('ThreadFork') == 5 and count('ThreadJoin') == 5, "forks/joins %d/%d" % (count('ThreadFork'), count('ThreadJoin')))
    ck.expect(count('ThreadTeamBegin') == 20 and count('ThreadTeamEnd') == 20, "teams %d" % count('ThreadTeamBegin'))
    ck.expect(count('Enter', 'omp critical') == 200, "critical %d" % count('Enter', 'omp critical'))
    ck.expect(count('Enter', 'omp_set_lock') == 20, "omp_set_lock %d" % count('Enter', 'omp_set_lock'))
    ck.expect(count('Enter', 'omp barrier') == 20, "barriers %d" % count('Enter', 'omp barrier'))
    acq = collections.Counter(e.ev.lock_id for e in omp_events('ThreadAcquireLock') if e.ev.model == P)
    ck.expect(sorted(acq.values()) == [20, 200], "acquisitions per lock %s" % dict(acq))

def check_tasks(t, ntasks, name=''):
    """every task created once, switched to after its creation, completed once"""
    created = {}
    for l in t.locations:
        for e in l.events:
            if e.kind == 'ThreadTaskCreate':
                key = (e.ev.creating_thread, e.ev.generation_number)
                ck.expect(key not in created, "%stask %s created twice" % (name, key))
                ck.expect(e.ev.thread_team.name == 'OpenMP team', "%stask team %s" % (name, e.ev.thread_team.name))
                created[key] = e.time
    ck.expect(len(created) == ntasks, "%stasks created %d != %d" % (name, len(created), ntasks))
    done = collections.Counter()
    switched = set()
    for l in t.locations:
        for e in l.events:
            key = (getattr(e.ev, 'creating_thread', None), getattr(e.ev, 'generation_number', None))
            if e.kind == 'ThreadTaskSwitch' and key[1]:
                ck.expect(key in created and created[key] <= e.time, "%sswitch to unknown/uncreated task %s" % (name, key))
                switched.add(key)
            elif e.kind == 'ThreadTaskComplete':
                ck.expect(key in switched, "%stask %s completed before it ran" % (name, key))
                done[key] += 1
    ck.expect(len(switched) == ntasks, "%stasks switched to %d" % (name, len(switched)))
    ck.expect(sorted(done) == sorted(created) and set(done.values()) <= {1},
           "%stasks completed %d" % (name, len(done)))


if MODE == 'tasks':
    check_tasks(tr, NTASKS)
    ck.expect(count('Enter', 'omp taskwait') == NTASKS // 2, "taskwaits %d" % count('Enter', 'omp taskwait'))

if MODE == 'cross':
    CPAR, CTHR, CTASK, CITER, CGRAIN = 5, 4, 4, 32, 5  # omp_cross.c
    gprog = sys.argv[6]
    gbase = run(prog=gprog)
    gtraced = run(os.path.join(WORK, 'trace_gcc'), prog=gprog)
    ck.expect(gtraced.returncode == gbase.returncode == 0, "gcc build: exit %d/%d" % (gtraced.returncode, gbase.returncode))
    ck.expect(gtraced.stdout == gbase.stdout == base.stdout, "gcc build: stdout differs")
    gt = tc.load(os.path.join(WORK, 'trace_gcc'))
    tc.otf2_print(gt.anchor, '-Werror')
    tc.check_all(gt)

    def kinds(t):
        c = collections.Counter()
        for l in t.locations:
            for e in l.events:
                if e.kind in ('Enter', 'Leave') and e.region.startswith('omp'):
                    c[e.kind + ' ' + e.region] += 1
                elif e.kind in ('ThreadAcquireLock', 'ThreadReleaseLock'):
                    if e.ev.model == P:
                        c[e.kind] += 1
                elif e.kind.startswith('ThreadTeam') or e.kind in ('ThreadFork', 'ThreadJoin') or \
                        e.kind.startswith('ThreadTask'):
                    c[e.kind] += 1
        return c
    kc, kg = kinds(tr), kinds(gt)
    for k in sorted(set(kc) | set(kg)):
        if k == 'ThreadTaskSwitch':      # libomp switches more (back to the implicit task on its own)
            continue
        ck.expect(kc[k] == kg[k], "%s: clang %d, gcc %d" % (k, kc[k], kg[k]))
    # 4 tasks, a taskgroup of 4, a taskloop of 4, a taskloop of 32 / 5 = 6
    ntask = CPAR * (3 * CTASK + CITER // CGRAIN)
    check_tasks(tr, ntask, 'clang: ')
    check_tasks(gt, ntask, 'gcc: ')
    ck.expect(kg['ThreadTaskSwitch'] == 2 * ntask, "gcc task switches %d" % kg['ThreadTaskSwitch'])
    ck.expect(kc['ThreadTaskSwitch'] >= 2 * ntask, "clang task switches %d" % kc['ThreadTaskSwitch'])
    # the known counts (each Enter has its Leave: tracecheck)
    nteam = CPAR * CTHR
    known = {'ThreadFork': CPAR, 'ThreadJoin': CPAR, 'ThreadTeamBegin': nteam, 'ThreadTeamEnd': nteam,
             'Enter omp parallel': nteam, 'Enter omp for': nteam, 'Enter omp sections': nteam,
             'Enter omp single': 2 * nteam, 'Enter omp barrier': nteam,
             'Enter omp implicit barrier': 5 * nteam,    # loop, sections, 2 singles, parallel
             'Enter omp critical': nteam, 'Enter omp_set_lock': nteam, 'ThreadAcquireLock': 2 * nteam,
             'Enter omp taskwait': CPAR, 'Enter omp taskloop': 2 * CPAR,
             'Enter omp taskgroup': 3 * CPAR}            # taskgroup + the taskloops'
    for k, want in known.items():
        ck.expect(kg[k] == want, "gcc %s %d != %d" % (k, kg[k], want))
    # per location: the same team and barrier counts (every member of every team)
    def per_loc(t, kind, region=None):
        return sorted(sum(1 for e in l.events if e.kind == kind and (region is None or e.region == region))
                      for l in t.locations)
    for kind, region in (('ThreadTeamBegin', None), ('Enter', 'omp implicit barrier'), ('Enter', 'omp barrier')):
        ck.expect(per_loc(tr, kind, region) == per_loc(gt, kind, region),
               "%s %s per location: clang %s, gcc %s" % (kind, region or '', per_loc(tr, kind, region),
                                                        per_loc(gt, kind, region)))
    for t, name in ((tr, 'clang'), (gt, 'gcc')):
        workers = sorted(l.name for l in t.locations if l.name.startswith('OpenMP thread '))
        ck.expect(len(workers) == CTHR - 1, "%s: workers %s" % (name, [l.name for l in t.locations]))
        begins = [(l, e) for l in t.locations for e in l.events if e.kind == 'ThreadTeamBegin']
        teams = {e.ev.thread_team.name for _, e in begins}
        ck.expect(teams == {'OpenMP team'}, "%s: team comms %s" % (name, teams))
        # the team is a Comm over an OPENMP group holding every member's location
        comm = begins[0][1].ev.thread_team if begins else None
        members = {m.name for m in comm.group.members} if comm else set()
        ck.expect(comm is not None and comm.group.paradigm == P and {l.name for l, _ in begins} <= members,
               "%s: team members %s not all in the team's group %s" % (name, {l.name for l, _ in begins}, members))
        print("cross %s: %s" % (name, dict(sorted(kinds(t).items()))))

if MODE == 'shrink':
    res = tr.clock.timer_resolution
    end = tr.master.events[-1].time
    idle = 0
    for l in tr.locations:
        if l is tr.master:
            continue
        kinds = [e.kind for e in l.events]
        ck.expect(kinds and kinds[-1] == 'ThreadEnd', "%s: last record %s, not ThreadEnd" % (l.name, kinds[-1:]))
        nb, ne = kinds.count('ThreadTeamBegin'), kinds.count('ThreadTeamEnd')
        ck.expect(nb == ne, "%s: %d team begins, %d team ends" % (l.name, nb, ne))
        if 'ThreadEnd' in kinds and (end - l.events[-1].time) * 1000 >= 150 * res:
            idle += 1
    nteam = sum(1 for l in tr.locations for e in l.events if e.kind == 'ThreadTeamBegin')
    ck.expect(nteam == 3 * 4 + 2, "%d team begins, want 14" % nteam)
    if COMPILER == 'gcc':
        ck.expect(idle == 2, "%d workers ended while idle, want 2 (libgomp ends the surplus)" % idle)

if MODE == 'cancel':
    ck.expect('cancelled 1 (early)' in base.stdout, "untraced run: %r" % base.stdout)
    if COMPILER == 'gcc':
        ck.expect(count('Enter', 'omp cancel') == 2, "omp cancel %d, want 2" % count('Enter', 'omp cancel'))
        npt = count('Enter', 'omp cancellation point')
        ck.expect(npt >= 10, "omp cancellation point %d, want >= 10" % npt)

if MODE == 'mpi':
    ranks = collections.defaultdict(list)
    for l in tr.locations:
        ranks[l.group].append(l)
    ck.expect(len(ranks) == NP, "location groups %s" % list(ranks))
    for g, locs in ranks.items():
        def n(kind, region=None):
            return sum(1 for l in locs for e in l.events
                       if e.kind == kind and (region is None or e.region == region))
        for kind, want in (('ThreadFork', 5), ('ThreadJoin', 5), ('ThreadTeamBegin', 10), ('ThreadTeamEnd', 10)):
            ck.expect(n(kind) == want, "%s: %s %d != %d" % (g, kind, n(kind), want))
        ck.expect(n('Enter', 'omp critical') == 10, "%s: critical %d" % (g, n('Enter', 'omp critical')))
        ck.expect(n('Enter', 'omp barrier') == 10, "%s: barrier %d" % (g, n('Enter', 'omp barrier')))
        nlock = sum(1 for l in locs for e in l.events if e.kind == 'ThreadAcquireLock' and e.ev.model == P)
        ck.expect(nlock == 10, "%s: OpenMP lock acquisitions %d" % (g, nlock))
        ck.expect(n('Enter', 'MPI_Allreduce') == 5, "%s: MPI_Allreduce %d" % (g, n('Enter', 'MPI_Allreduce')))

print("%s %s: %d events" % (MODE, os.path.basename(PROG), sum(len(l.events) for l in tr.locations)))
sys.exit(ck.done())
